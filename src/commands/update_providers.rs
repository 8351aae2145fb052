//! `crush update-providers`: runs [`crate::update`] and reports what it did
//! in text a person can read at a glance ([`super::report`]: the changes
//! that matter most, then the counts and what happened, fitted to the
//! terminal, or to 80 columns on a pipe), every change one to a line with
//! `--verbose`, or as one JSON object.

use std::io::{IsTerminal, Write};
use std::path::Path;

use super::context::{Context, cache_files, pinned_keys};
use super::program;
use super::report::{self, Written};
use super::terminal;
use super::{Exit, Said, print, say, write_catalog, write_json};
use crate::catalog::Target;
use crate::catalog::escape::safe;
use crate::commands::cli::{Provider, UpdateArgs};
use crate::config::Format;
use crate::error::{Cause, Failure};
use crate::fetch::credential::{self, Routed};
use crate::fetch::http::{Bearer, FetchError};
use crate::fetch::source::ReadError;
use crate::fetch::source::{self, Source};
use crate::store::paths::process_env;
use crate::update::{self, Output, UpdateOptions, UpdateReport};

/// The `--output` that means standard output.
const STDOUT: &str = "-";

/// The exit code of `--check` when the update would change the cache.
pub(super) const WOULD_CHANGE: u8 = 3;

/// `crush update-providers`.
pub(super) fn run(context: &Context, args: UpdateArgs) -> Result<(), Exit> {
    let target = match args.provider {
        Provider::Catwalk => Target::Catalog,
        Provider::Hyper => Target::Hyper,
    };
    if args.keep_current {
        return keep_current(target, args.json);
    }
    let (source, given) = source_of(context, target, args.source.as_deref())?;
    let output = match args.output.clone() {
        None => Output::Cache,
        Some(path) if path == Path::new(STDOUT) => Output::Stdout,
        Some(path) => Output::File(path),
    };
    if output == Output::Stdout && args.json {
        return Err(Exit::Usage(
            "--output - and --json both write to standard output; give --output a file".into(),
        ));
    }
    let cache = cache_files()?.with_target(target);
    if target == Target::Hyper && source == Source::Embedded {
        return Err(Exit::Usage(format!(
            "--source hyper embedded: this build carries no snapshot of Hyper's provider (only of the Catwalk catalog); give Hyper's URL or a file, or remove {} to have Crush use its own embedded Hyper provider",
            cache.catalog.display()
        )));
    }
    // A recovery command: a crushrc that cannot be read is skipped (it pins
    // no key), and so is a JSON config when the embedded snapshot, which
    // needs no signature, is asked for.
    let embedded = source == Source::Embedded;
    let settings = context.settings_tolerating(|format| format == Format::Crushrc || embedded)?;
    let keys = pinned_keys(&settings)?;
    if keys.is_none() && args.signature.is_some() {
        // A signature nothing checks would be a promise not kept.
        return Err(Exit::Usage(
            "--signature is checked against a pinned key, and none is pinned; set CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys) to the mirror's public key".into(),
        ));
    }
    let bearer = bearer(context, &settings, target, &source);
    not_routed_by_dotenv(&source, given, bearer.is_some(), &cache)?;
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
        watch: super::watch::watched(!args.quiet && !args.json),
        bearer,
    };
    let failed = |failure: Failure| {
        if let Cause::Read(ReadError::Fetch(FetchError::Interrupted(code))) = failure.cause {
            return Exit::Interrupted(code);
        }
        if args.verbose {
            Exit::FailedVerbose(Box::new(failure))
        } else {
            Exit::from(failure)
        }
    };
    let inputs = update::read(&source, &cache, &options).map_err(failed)?;
    let parsed = inputs.parse(target, &options).map_err(failed)?;
    let (report, refusal) = parsed.apply(&cache, &options).map_err(failed)?;
    let up_to_date = show(&report, &options.output, &args)?;
    // A dry run's refusal, after the report of what it is about.
    if let Some(refusal) = refusal {
        return Err(failed(refusal));
    }
    if args.check && !up_to_date {
        return Err(Exit::Code(WOULD_CHANGE));
    }
    Ok(())
}

/// The Hyper key a request for Hyper's provider from `source` carries:
/// `HYPER_API_KEY` only, as Crush's `update-providers` sends (its
/// `resolveHyperAPIKey(nil)`): the config's key (a login's token) is
/// never sent to a SOURCE a person names, told under `--debug`.
fn bearer(
    context: &Context,
    settings: &crate::config::Settings,
    target: Target,
    source: &Source,
) -> Option<Bearer> {
    use crate::config::front::{HYPER_KEY_ENV, HyperKey};
    let Source::Url(url) = source else {
        return None;
    };
    if target != Target::Hyper {
        return None;
    }
    let key = crate::config::front::hyper_key_in(settings, &process_env);
    let shown = source::redacted(url.as_str());
    match &key {
        Some(HyperKey { origin, .. }) if origin == HYPER_KEY_ENV => context.say_debug(
            format_args!("GET {shown}: with Authorization: Bearer, the Hyper key of {HYPER_KEY_ENV}"),
        ),
        Some(HyperKey { origin, .. }) => context.say_debug(format_args!(
            "GET {shown}: without a key: {HYPER_KEY_ENV} is not set, and update-providers sends no other, as Crush's does (the Hyper key of {} is not sent)",
            crate::config::shown(origin)
        )),
        None => context.say_debug(format_args!(
            "GET {shown}: without a key: none is set (HYPER_API_KEY, providers.hyper.api_key)"
        )),
    }
    key.filter(|k| k.origin == HYPER_KEY_ENV)
        .and_then(|k| k.value)
        .map(Bearer)
}

/// A person's update from `source` (`given` so) that carries a credential
/// (`bearer`: the Hyper key; a URL's password) is refused, naming the
/// variable, where a project's `.env` would choose its proxy or CA, or,
/// for the Hyper key, its URL (`HYPER_URL`) unless the key is known to go
/// there ([`crate::trust::hyper::is_known_place`], as at start-up): a
/// project's files never route the user's credentials.
fn not_routed_by_dotenv(
    source: &Source,
    given: source::Given,
    bearer: bool,
    cache: &crate::store::cache::CacheFiles,
) -> Result<(), Exit> {
    let Source::Url(url) = source else {
        return Ok(());
    };
    let url_from_dotenv = match given {
        source::Given::Variable(name) if bearer => credential::from_dotenv("URL", name)
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
) -> Result<(Source, source::Given), Exit> {
    let env_url = process_env(crate::catalog::target::url_env(target))
        .map(|v| v.to_string_lossy().into_owned());
    let (text, given) = source::given_for(target, arg, env_url.as_deref());
    let source = source::resolve_for(target, arg, env_url.as_deref())
        .map_err(|e| Exit::Usage(e.to_string()))?;
    context.say_debug(format_args!(
        "SOURCE: {} ({})",
        crate::config::shown(&source::redacted(text)),
        match given {
            source::Given::Argument => "the argument".to_string(),
            source::Given::Variable(name) => super::inputs::env_origin(name).unwrap_or_default(),
            source::Given::Default => "default".to_string(),
        }
    ));
    match &source {
        Source::File(path) if !path.exists() => {
            if let Some(url) = source::meant_url(text) {
                return Err(Exit::Usage(match given {
                    source::Given::Variable(name) => format!(
                        "{name}={} names no file; for a URL, write its scheme: {name}={url}",
                        crate::catalog::quoted(text)
                    ),
                    _ => format!(
                        "there is no file {}; for a URL, write its scheme: {url}",
                        path.display()
                    ),
                }));
            }
        }
        Source::Url(url) => context.say_debug(format_args!(
            "GET {shown}, then {shown}.minisig when a key is pinned; proxy: {}",
            super::inputs::route_of(url),
            shown = source::redacted(url.as_str())
        )),
        Source::Stdin if std::io::stdin().is_terminal() => {
            return Err(Exit::Usage(format!(
                "`-` reads the catalog from standard input, which is this terminal; pipe one in: curl -s https://mirror.corp/catwalk/v2/providers | {} update-providers -",
                program()
            )));
        }
        _ => {}
    }
    Ok((source, given))
}

/// Prints the report of an update to `output` as `args` ask; whether the
/// target was up to date.
fn show(report: &UpdateReport<'_>, output: &Output, args: &UpdateArgs) -> Result<bool, Exit> {
    let to = match output {
        Output::Cache => Written::Cache,
        Output::Stdout => Written::Stdout,
        Output::File(_) => Written::File,
    };
    // The catalog first, whole and flushed, so that a report on the same
    // terminal comes after it; a reader that went away (`| head -c 100`)
    // takes the catalog, not the report.
    let written = report.catalog.map(|catalog| {
        print(|out| {
            write_catalog(out, catalog)?;
            if std::io::stdout().is_terminal() && !catalog.ends_with(b"\n") {
                writeln!(out)?;
            }
            Ok(())
        })
    });
    if args.json {
        // The failure that follows is the one JSON object.
        if report.refused {
            return Ok(false);
        }
        print(|out| write_json(out, report))?;
        return Ok(report.up_to_date);
    }
    // What a person allowed, or what was not trusted, is told however
    // quiet they asked it to be.
    let warnings = if args.quiet {
        &report.notices
    } else {
        &report.warnings
    };
    let mut said = 0;
    for warning in warnings {
        said += say(Said::Warning, format_args!("{warning}"));
    }
    if !args.quiet {
        // With the catalog on standard output, the report goes beside it.
        let on_stderr = to == Written::Stdout;
        let screen = if on_stderr {
            terminal::stderr_size()
        } else {
            terminal::stdout_size()
        };
        let lines = match (args.verbose, screen) {
            (true, screen) => report::every_line(report, to, screen.map(|(w, _)| w)),
            // The prompt's line stays, and the warnings above on the
            // same screen.
            (false, Some((width, height))) => {
                report::summary(report, to, width, height.saturating_sub(1 + said))
            }
            (false, None) => {
                report::summary(report, to, report::PIPED_COLUMNS, report::PIPED_LINES)
            }
        };
        if on_stderr {
            lines.iter().for_each(|line| {
                say(Said::Plain, format_args!("{line}"));
            });
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

/// `update-providers --keep-current`: the document in use is kept over
/// what a refresh held back.
fn keep_current(target: Target, json: bool) -> Result<(), Exit> {
    let cache = cache_files()?.with_target(target);
    let settled = update::keep_current(&cache)?;
    if json {
        return print(|out| write_json(out, &serde_json::json!({ "settled": settled })));
    }
    let what = match target {
        Target::Catalog => "the catalog in use".to_string(),
        Target::Hyper => format!("{} in use", target.noun()),
    };
    let text = match &settled {
        Some(url) => format!(
            "Kept {what} ({}); the refresh held from {url} is not applied, and is told no more",
            cache.catalog.display()
        ),
        None => format!(
            "Nothing to settle: no refresh of {} is held; {what} ({}) stays as it is",
            target.noun(),
            cache.catalog.display()
        ),
    };
    let width = terminal::stdout_width().or(Some(report::PIPED_COLUMNS));
    print(|out| writeln!(out, "{}", terminal::wrap(&safe(&text), width, "  ")))
}
