//! `crush update-providers`: runs [`crate::update`] and reports what it did
//! in text a person can read at a glance ([`super::report`]: the changes
//! that matter most, then the counts and what happened, fitted to the
//! terminal, or to 80 columns on a pipe), every change one to a line with
//! `--verbose`, or as one JSON object.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::cli::UpdateArgs;
use super::context::{Context, cache_files, pinned_keys};
use super::output::{Said, print_text, say};
use super::{Exit, print, program, report, terminal, watch, write_catalog, write_json};
use crate::catalog::Target;
use crate::catalog::escape::safe;
use crate::config::hyper::HYPER_KEY_ENV;
use crate::config::{ConfigError, Origin, Settings, Warning, shown};
use crate::error::{Cause, Failure};
use crate::fetch::credential::{self, Routed};
use crate::fetch::http::{Bearer, FetchError};
use crate::fetch::source::{self, Given, ReadError, Source, redacted};
use crate::store::cache::CacheFiles;
use crate::store::paths::process_env;
use crate::trust::signature::KEYS_ENV;
use crate::update::{self, Output, UpdateOptions, UpdateReport};

/// The exit code of `--check` when the update would change the cache.
const WOULD_CHANGE: u8 = 3;

/// `crush update-providers`.
pub(super) fn run(context: &Context, args: &UpdateArgs) -> Result<(), Exit> {
    let target = args.provider;
    if args.keep_current {
        return keep_current(target, args.json);
    }
    if !args.unread.is_empty() && !args.quiet {
        let unread: Vec<String> = args.unread.iter().map(|s| shown(&redacted(s))).collect();
        say(
            Said::Warning,
            format_args!(
                "{}: not read: only the first SOURCE is read, as Crush's update-providers reads it",
                unread.join(" ")
            ),
        );
    }
    let (source, given) = source_of(context, target, args.source.as_deref())?;
    let output = match args.output.clone() {
        None => Output::Cache,
        Some(path) if path == Path::new("-") => Output::Stdout,
        Some(path) => Output::File(path),
    };
    if output == Output::Stdout && args.json {
        return Err(Exit::Usage(
            "--output - and --json both write to standard output; give --output a file".into(),
        ));
    }
    let cache = cache_files()?.with_target(target);
    if target == Target::Hyper && source == Source::Embedded {
        return crushs_hyper(&cache, args);
    }
    let settings = settings(context, &source)?;
    let keys = pinned_keys(&settings)?;
    if keys.is_none() && args.signature.is_some() {
        // A signature nothing checks would be a promise not kept.
        return Err(Exit::Usage(
            "--signature is checked against a pinned key, and none is pinned; set CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys) to the mirror's public key".into(),
        ));
    }
    let bearer = bearer(context, &settings, target, &source);
    not_routed_by_dotenv(&source, given, bearer.is_some(), &cache)?;
    let shows_progress = !args.quiet && !args.json && matches!(source, Source::Url(_));
    let options = UpdateOptions {
        dry_run: args.dry_run || args.check,
        output,
        sha256: args.sha256.clone(),
        timeout: args.timeout,
        keys,
        signature: args.signature.clone(),
        allow_shrink: args.allow_shrink,
        allow_downgrade: args.allow_downgrade,
        allow_key_move: args.allow_key_move,
        watch: watch::watched(shows_progress),
        bearer,
    };
    let failed = |failure: Failure| match failure.cause {
        Cause::Read(ReadError::Fetch(FetchError::Interrupted(code))) => Exit::Interrupted(code),
        _ => Exit::Failed(Box::new(failure), args.verbose),
    };
    let inputs = update::read(&source, &cache, &options);
    watch::done(&options.watch);
    let mut inputs = inputs.map_err(failed)?;
    let parsed = inputs.parse(target, &options).map_err(failed)?;
    let (report, refusal) = parsed.apply(&cache, &options).map_err(failed)?;
    let up_to_date = show(&report, &options.output, args)?;
    // A dry run's refusal, after the report of what it is about.
    if let Some(refusal) = refusal {
        return Err(failed(refusal));
    }
    if args.check && !up_to_date {
        return Err(Exit::Code(WOULD_CHANGE));
    }
    Ok(())
}

/// The settings, as `update-providers` needs them: Crush's reads no
/// configuration, so a file Crush would refuse to start on is passed over
/// with one warning naming it. What matters here is the keys pinned: a
/// file of the user's own that may pin keys and cannot be read leaves
/// them unknown, and then only `embedded`, which needs no signature, is
/// updated; another `source` is refused, naming the file and the way out.
fn settings(context: &Context, source: &Source) -> Result<Settings, Exit> {
    let (settings, passed_over) = context.read_settings(true)?;
    let pinned = settings.public_keys.as_ref().map(|k| &k.origin);
    let unknown = unknown_pins(&passed_over, &settings.pin_files, pinned, may_pin);
    if let Some(e) = unknown.filter(|_| *source != Source::Embedded) {
        let message = format!(
            "{}; the keys it may pin cannot be read, and what {source} gives must be signed by them: only `embedded` needs no signature, and {KEYS_ENV} pins keys over every file",
            e.message
        );
        let path = crate::config::shown_path(&e.path);
        let e = ConfigError {
            message,
            ..e.clone()
        };
        return Err(Exit::from(Failure::new(path, Cause::Config(e))));
    }
    for warning in &passed_over {
        let (e, what) = match warning {
            Warning::FileNotRead(e) => (e, "it"),
            Warning::OptionsNotRead(e) => (e, "its options"),
            _ => continue,
        };
        let pins = match unknown {
            Some(u) if u.path == e.path => {
                "; but it may pin keys: until it is fixed, only `embedded`, which needs no signature, can be updated"
            }
            _ => "",
        };
        say(
            Said::Warning,
            format_args!(
                "{e}; update-providers passes {what} over, as Crush's reads no configuration{pins}"
            ),
        );
    }
    Ok(settings)
}

/// The file passed over (`passed_over`) whose unread pins would decide
/// the keys: one of the user's `own` files (lowest priority first) that
/// could not be read and `may_pin`, unless the keys in force were pinned
/// above it (`pinned`: the environment is above every file).
fn unknown_pins<'a>(
    passed_over: &'a [Warning],
    own: &[PathBuf],
    pinned: Option<&Origin>,
    may_pin: impl Fn(&Path) -> bool,
) -> Option<&'a ConfigError> {
    let pinned_at = match pinned {
        Some(Origin::Env { .. }) => return None,
        Some(Origin::Json { path, .. }) => own.iter().position(|p| p == path),
        _ => None,
    };
    passed_over.iter().find_map(|warning| {
        // A file whose options could not be merged had its keys read.
        let Warning::FileNotRead(e) = warning else {
            return None;
        };
        let at = own.iter().position(|p| *p == e.path)?;
        (pinned_at.is_none_or(|p| p < at) && may_pin(&e.path)).then_some(e)
    })
}

/// Whether the JSON file at `path`, which could not be read as
/// configuration, may pin keys: it cannot be read at all, or names the
/// option in any case, or holds a `\u` escape, which could spell it.
fn may_pin(path: &Path) -> bool {
    match crate::store::file::read_regular(path, crate::store::file::MAX_FILE_BYTES) {
        Ok(Some((bytes, _))) => names_pins(&bytes),
        Ok(None) => false,
        Err(_) => true,
    }
}

/// Whether `bytes` may set `options.provider_public_keys` ([`may_pin`]).
fn names_pins(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
    text.contains("provider_public_keys") || text.contains("\\u")
}

/// The Hyper key a request for Hyper's provider from `source` carries:
/// `HYPER_API_KEY` only, as Crush's `update-providers` sends (its
/// `resolveHyperAPIKey(nil)`): the config's key (a login's token) is
/// never sent to a SOURCE a person names, told under `--debug`.
fn bearer(
    context: &Context,
    settings: &Settings,
    target: Target,
    source: &Source,
) -> Option<Bearer> {
    let (Source::Url(url), Target::Hyper) = (source, target) else {
        return None;
    };
    let key = settings.hyper_key.clone();
    let sent = key.as_ref().is_some_and(|k| k.origin == HYPER_KEY_ENV);
    let how = match &key {
        _ if sent => format!("with Authorization: Bearer, the Hyper key of {HYPER_KEY_ENV}"),
        Some(key) => format!(
            "without a key: {HYPER_KEY_ENV} is not set, and update-providers sends no other, as Crush's does (the Hyper key of {} is not sent)",
            shown(&key.origin)
        ),
        None => "without a key: none is set (HYPER_API_KEY, providers.hyper.api_key)".into(),
    };
    context.say_debug(format_args!("GET {}: {how}", redacted(url.as_str())));
    key.filter(|_| sent).and_then(|k| k.value).map(Bearer)
}

/// A person's update from `source` (`given` so) that carries a credential
/// (`bearer`: the Hyper key; a URL's password) is refused, naming the
/// variable, where a project's `.env` would choose its proxy or CA, or,
/// for the Hyper key, its URL (`HYPER_URL`) unless the key is known to go
/// there ([`crate::trust::hyper::is_known_place`], as at start-up): a
/// project's files never route the user's credentials.
fn not_routed_by_dotenv(
    source: &Source,
    given: Given,
    bearer: bool,
    cache: &CacheFiles,
) -> Result<(), Exit> {
    let Source::Url(url) = source else {
        return Ok(());
    };
    let url_from_dotenv = match given {
        Given::Variable(name) if bearer => credential::from_dotenv("URL", name)
            .filter(|_| !crate::trust::hyper::is_known_place(cache, url)),
        _ => None,
    };
    match Routed::of(url, bearer, url_from_dotenv) {
        Some(routed) => Err(Failure::of(source, Cause::Routed(routed)).into()),
        None => Ok(()),
    }
}

/// The source `SOURCE` (else `CATWALK_URL`, else the public server; for
/// Hyper's provider `HYPER_URL`, else Hyper's server) names, and how it
/// was given; or the usage error that a source written like a URL, or
/// read from a terminal, is.
fn source_of(
    context: &Context,
    target: Target,
    arg: Option<&str>,
) -> Result<(Source, Given), Exit> {
    let env_url = process_env(crate::catalog::target::url_env(target))
        .map(|v| v.to_string_lossy().into_owned());
    let (text, given) = source::given_for(target, arg, env_url.as_deref());
    let source =
        source::resolve_for(target, text, given).map_err(|e| Exit::Usage(e.to_string()))?;
    let origin = match given {
        Given::Argument => "the argument".to_string(),
        Given::Variable(name) => super::inputs::env_origin(name).unwrap_or_default(),
        Given::Default => "default".to_string(),
    };
    context.say_debug(format_args!(
        "SOURCE: {} ({origin})",
        shown(&redacted(text))
    ));
    let usage = match &source {
        Source::File(path) if !path.exists() => match (source::meant_url(text), given) {
            (None, _) => None,
            (Some(url), Given::Variable(name)) => Some(format!(
                "{name}={} names no file; for a URL, write its scheme: {name}={url}",
                crate::catalog::quoted(text)
            )),
            (Some(url), _) => Some(format!(
                "there is no file {}; for a URL, write its scheme: {url}",
                path.display()
            )),
        },
        Source::Url(url) => {
            context.say_debug(format_args!(
                "GET {shown}, then {shown}.minisig when a key is pinned; proxy: {}",
                super::inputs::route_of(url),
                shown = redacted(url.as_str())
            ));
            None
        }
        Source::Stdin if std::io::stdin().is_terminal() => Some(format!(
            "`-` reads the catalog from standard input, which is this terminal; pipe one in: `curl -s https://mirror.corp/catwalk/v2/providers | {} update-providers -`",
            program()
        )),
        _ => None,
    };
    match usage {
        Some(message) => Err(Exit::Usage(message)),
        None => Ok((source, given)),
    }
}

/// Prints the report of an update to `output` as `args` ask; whether the
/// target was up to date.
fn show(report: &UpdateReport<'_>, output: &Output, args: &UpdateArgs) -> Result<bool, Exit> {
    // The catalog first, whole and flushed, so that a report on the same
    // terminal comes after it; a reader that went away (`| head -c 100`)
    // takes the catalog, not the report.
    let written = report
        .catalog
        .map(|catalog| print(|out| write_catalog(out, catalog)));
    if args.json {
        // The failure that follows is the one JSON object.
        if !report.refused {
            print(|out| write_json(out, report))?;
        }
        return Ok(report.up_to_date && !report.refused);
    }
    // What a person allowed, or what was not trusted, is told however
    // quiet they asked it to be.
    let warnings = if args.quiet {
        &report.notices
    } else {
        &report.warnings
    };
    let said: usize = warnings
        .iter()
        .map(|w| say(Said::Warning, format_args!("{w}")))
        .sum();
    if !args.quiet {
        // With the catalog on standard output, the report goes beside it;
        // on a terminal, the prompt's line and the warnings above stay.
        let on_stderr = *output == Output::Stdout;
        let screen = terminal::size(on_stderr).map(|(w, h)| (w, h.saturating_sub(1 + said)));
        let lines = report::lines(report, output, args.verbose, screen);
        if on_stderr {
            for line in &lines {
                say(Said::Plain, format_args!("{line}"));
            }
        } else {
            // Ids, names and values come from the catalogs.
            print(|out| {
                lines
                    .iter()
                    .try_for_each(|line| writeln!(out, "{}", safe(line)))
            })?;
        }
    }
    written.transpose()?;
    Ok(report.up_to_date)
}

/// `update-providers --source hyper embedded` (or `HYPER_URL=embedded`):
/// Crush stores its own embedded Hyper provider, of which this build
/// carries no copy; so `hyper.json` and its state are removed, Crush then
/// using its own, and said in one line. A dry run (`--check` too: 3 when
/// something would be removed) removes nothing.
fn crushs_hyper(cache: &CacheFiles, args: &UpdateArgs) -> Result<(), Exit> {
    let flags = [
        ("--output", args.output.is_some()),
        ("--sha256", args.sha256.is_some()),
        ("--signature", args.signature.is_some()),
    ];
    if let Some((flag, _)) = flags.iter().find(|(_, given)| *given) {
        return Err(Exit::Usage(format!(
            "{flag}: `--source hyper embedded` writes no document: it removes hyper.json, so that Crush uses its own embedded Hyper provider (this build carries no copy of it)"
        )));
    }
    let dry_run = args.dry_run || args.check;
    let removed = update::use_crushs_hyper(cache, dry_run)?;
    if args.json {
        let json = serde_json::json!({ "removed": removed, "dry_run": dry_run });
        print(|out| write_json(out, &json))?;
    } else if !args.quiet {
        let names: Vec<String> = removed
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        let (names, dir) = (names.join(" and "), cache.dir.display());
        print_text(&match (removed.is_empty(), dry_run) {
            (true, _) => format!(
                "No hyper.json in {dir}: Crush uses its own embedded Hyper provider already"
            ),
            (false, true) => format!(
                "Would remove {names} from {dir}, so that Crush uses its own embedded Hyper provider; nothing was removed"
            ),
            (false, false) => format!(
                "Removed {names} from {dir}: Crush uses its own embedded Hyper provider (this build carries no copy of it)"
            ),
        })?;
    }
    if args.check && !removed.is_empty() {
        return Err(Exit::Code(WOULD_CHANGE));
    }
    Ok(())
}

/// `update-providers --keep-current`: the document in use is kept over
/// what a refresh held back.
fn keep_current(target: Target, json: bool) -> Result<(), Exit> {
    let cache = cache_files()?.with_target(target);
    let settled = update::keep_current(&cache)?;
    if json {
        return print(|out| write_json(out, &serde_json::json!({ "settled": settled })));
    }
    let what = match target {
        Target::Catalog => "the catalog in use",
        Target::Hyper => "Hyper's provider in use",
    };
    let (noun, path) = (target.noun(), cache.catalog.display());
    print_text(&match &settled {
        Some(url) => format!(
            "Kept {what} ({path}); the refresh held from {url} is not applied, and is told no more"
        ),
        None => format!(
            "Nothing to settle: no refresh of {noun} is held; {what} ({path}) stays as it is"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_read(path: &str) -> Warning {
        Warning::FileNotRead(ConfigError {
            path: path.into(),
            line: None,
            message: "not JSON".into(),
        })
    }

    fn options_not_read(path: &str) -> Warning {
        match not_read(path) {
            Warning::FileNotRead(e) => Warning::OptionsNotRead(e),
            _ => unreachable!(),
        }
    }

    fn json(path: &str) -> Origin {
        Origin::Json {
            path: path.into(),
            key: "options.provider_public_keys".into(),
        }
    }

    /// The pins are unknown where a file of the user's own that may pin
    /// them was not read and nothing above it pinned the keys in force.
    #[test]
    fn the_pins_are_unknown_only_where_an_unread_own_file_decides_them() {
        let own: Vec<PathBuf> = ["/etc/crush.json", "/state/crush.json", "/config/crush.json"]
            .map(PathBuf::from)
            .to_vec();
        let found = |passed: &[Warning], pinned: Option<&Origin>, may: bool| {
            unknown_pins(passed, &own, pinned, |_| may).map(|e| e.path.clone())
        };
        let config = not_read("/config/crush.json");
        assert_eq!(
            found(std::slice::from_ref(&config), None, true),
            Some("/config/crush.json".into())
        );
        // It names no key.
        assert_eq!(found(std::slice::from_ref(&config), None, false), None);
        // A project's file, or a file whose keys were read.
        assert_eq!(found(&[not_read("/project/crush.json")], None, true), None);
        assert_eq!(
            found(&[options_not_read("/config/crush.json")], None, true),
            None
        );
        // The environment pins over every file.
        let env = Origin::Env {
            name: KEYS_ENV,
            value: "RW".into(),
            dotenv: None,
        };
        assert_eq!(found(std::slice::from_ref(&config), Some(&env), true), None);
        // A file above pinned the keys in force; one below did not decide.
        let system = not_read("/etc/crush.json");
        assert_eq!(
            found(
                std::slice::from_ref(&system),
                Some(&json("/config/crush.json")),
                true
            ),
            None
        );
        assert_eq!(
            found(
                std::slice::from_ref(&config),
                Some(&json("/etc/crush.json")),
                true
            ),
            Some("/config/crush.json".into())
        );
    }

    /// A file not read as configuration may pin keys when it names the
    /// option (in any case) or holds an escape that could spell it.
    #[test]
    fn a_file_may_pin_when_it_names_the_option() {
        assert!(names_pins(
            br#"{"options": {"provider_public_keys": "RW"}}"#
        ));
        assert!(names_pins(
            br#"{"OPTIONS": {"Provider_Public_Keys": ["RW"]},}"#
        ));
        assert!(names_pins(
            br#"{"options": {"provider_public\u005fkeys": 1}}"#
        ));
        assert!(!names_pins(
            br#"{"options": {"disable_provider_auto_update": "yes"}}"#
        ));
        assert!(!names_pins(b"{not json"));
        let dir = tempfile::tempdir().unwrap();
        assert!(!may_pin(&dir.path().join("missing.json")));
        assert!(may_pin(dir.path()), "a folder cannot be read");
    }
}
