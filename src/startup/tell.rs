//! What a start tells a person: its typed warnings ([`Warning`]) and
//! their words, the hints that end them (what to run, as it is typed, the
//! program named as the caller says: [`Warning::told_by`]), a held or
//! failed refresh told at every start (or once).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::{DEFAULT_TIMEOUT, INTERVAL_ENV, TIMEOUT_ENV};
use crate::catalog::{Target, embedded, quoted};
use crate::error::Failure;
use crate::fetch::source;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::state::{self, Need, RefreshOutcome};
use crate::trust::policy::flag;

/// What went wrong at a start without stopping it: the start goes on
/// with what it has, and tells this. Its `Display` is the line a person
/// reads (a held refresh's commands on lines of their own after it),
/// naming the program `crush`; [`Warning::told_by`] names another.
#[derive(Debug)]
#[non_exhaustive]
pub enum Warning {
    /// The data folder is one another user may write into: neither read
    /// nor refreshed (what is in it could send a key anywhere).
    UntrustedFolder {
        /// Which folder, and why it is not used.
        problem: String,
        /// What makes it usable.
        fix: String,
    },
    /// The cache is not a valid catalog: ignored.
    InvalidCache {
        /// What is wrong with it.
        problem: String,
    },
    /// Hyper's cached provider is not valid: replaced by the next refresh.
    InvalidHyperCache {
        /// What is wrong with it.
        problem: String,
    },
    /// The state file beside the cache cannot be read: ignored.
    UnreadableState {
        /// What is wrong, and what comes of it.
        problem: String,
    },
    /// A refresh held a new document back for a person: the one in use
    /// is kept.
    Held {
        /// Which document.
        target: Target,
        /// Where it came from (a URL's password hidden).
        url: String,
        /// When it was held (seconds since the Unix epoch), when it was
        /// not just now.
        at: Option<u64>,
        /// What needs a person, one finding a line.
        findings: Vec<String>,
        /// What a person must allow to apply it.
        needs: Vec<Need>,
        /// Another program wrote it into the cache (`url` is where it is
        /// kept aside): the last reviewed document is back in place.
        foreign: bool,
    },
    /// The last background refresh failed (told once).
    LastRefreshFailed {
        /// Which document.
        target: Target,
        /// The URL it asked.
        url: String,
        /// When (seconds since the Unix epoch).
        at: u64,
        /// Why, when recorded.
        cause: Option<String>,
        /// What is used meanwhile.
        using: InUse,
        /// The global crushrc, where automatic updates are turned off.
        crushrc: String,
    },
    /// The refresh of the catalog a person waited for failed.
    RefreshFailed {
        /// The URL it asked (its password hidden).
        url: String,
        /// Why, with its fix.
        cause: String,
        /// What is used instead.
        using: InUse,
    },
    /// The refresh of Hyper's provider a person waited for failed.
    HyperRefreshFailed {
        /// The URL it asked (its password hidden).
        url: String,
        /// Why, with its fix.
        cause: String,
        /// What Crush uses instead.
        using: InUse,
        /// The global crushrc, where automatic updates are turned off.
        crushrc: String,
    },
    /// The catalog a person waited for came but could not be saved: used
    /// for this run only.
    Unsaved {
        /// Why.
        cause: String,
    },
    /// Hyper's provider a person waited for came but could not be saved.
    HyperUnsaved {
        /// Where it came from (its password hidden).
        url: String,
        /// Why.
        cause: String,
    },
    /// The helper process of a background refresh cannot be started.
    NoBackground {
        /// The program it would have run.
        helper: PathBuf,
        /// Why.
        cause: String,
        /// What is used meanwhile.
        using: InUse,
    },
    /// The background refresh of Hyper's provider cannot be started.
    NoHyperBackground {
        /// Why.
        cause: String,
    },
    /// `CATWALK_URL` is not an http(s) URL: no refresh goes anywhere.
    NotHttp {
        /// Its value, as set.
        value: String,
    },
    /// [`TIMEOUT_ENV`] is not a positive number of seconds: the default
    /// is used.
    BadTimeout {
        /// Its value, as set.
        value: String,
    },
    /// [`INTERVAL_ENV`] is not a duration: the default is used.
    BadInterval {
        /// Its value, as set.
        value: String,
    },
    /// A pinned key cannot be read: no refresh until it is fixed.
    BadKey {
        /// Where it was set, and why it cannot be read.
        failure: Failure,
    },
    /// Hyper's provider is not refreshed at start-up, for a reason told at
    /// every start (a Hyper key no header can carry, a `HYPER_URL` that
    /// cannot be used or that a project's `.env` chose).
    HyperNotRefreshed {
        /// Why, and what to do.
        why: String,
    },
    /// The start-up's refresh of a document carries a credential, so it
    /// goes without the proxy or CA a project's `.env` sets (told at every
    /// start).
    Routed {
        /// Which document.
        target: Target,
        /// What it carries, and the `.env`'s variables.
        routed: crate::fetch::credential::Routed,
    },
}

/// What a start uses while its document is not refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InUse {
    /// The cached catalog.
    Cached,
    /// The embedded catalog.
    Embedded,
    /// Crush's cached Hyper provider (`hyper.json`).
    HyperCached,
    /// Crush's own embedded Hyper provider.
    HyperEmbedded,
}

impl InUse {
    /// What a start uses of the catalog: the cache when there is one.
    pub(super) fn catalog(cached: Option<&Cached>) -> InUse {
        match cached {
            Some(_) => InUse::Cached,
            None => InUse::Embedded,
        }
    }

    /// What Crush uses of Hyper's provider: the cached one when there is
    /// one.
    pub(super) fn hyper(cached: Option<&Cached>) -> InUse {
        match cached {
            Some(_) => InUse::HyperCached,
            None => InUse::HyperEmbedded,
        }
    }

    /// What the start goes on with, as a clause: the catalog it is
    /// `using`, or what Crush keeps of Hyper's provider.
    fn clause(self) -> String {
        match self {
            InUse::Cached | InUse::Embedded => format!("using {self}"),
            InUse::HyperCached | InUse::HyperEmbedded => self.to_string(),
        }
    }
}

impl fmt::Display for InUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InUse::Cached => f.write_str("the cached catalog"),
            InUse::Embedded => write!(f, "the embedded catalog ({})", embedded::origin()),
            InUse::HyperCached => f.write_str("Crush keeps the cached one (hyper.json)"),
            InUse::HyperEmbedded => f.write_str("Crush keeps its own embedded one"),
        }
    }
}

/// A [`Warning`] told by a program of another name ([`Warning::told_by`]).
#[derive(Debug, Clone, Copy)]
pub struct ToldBy<'a> {
    warning: &'a Warning,
    program: &'a str,
}

impl Warning {
    /// This warning as the program `program` tells it: the commands its
    /// hints name are run by that name (`crush-providers`, as a person
    /// invoked it), where its `Display` says `crush`.
    pub fn told_by<'a>(&'a self, program: &'a str) -> ToldBy<'a> {
        ToldBy {
            warning: self,
            program,
        }
    }
}

impl Warning {
    /// This warning in one short line, for a start that has one row before
    /// Crush takes the screen: the finding or the cause first, without the
    /// URL, the time or the commands (which `providers --status` gives).
    pub(crate) fn brief(&self, program: &str) -> String {
        match self {
            Warning::Held {
                target,
                findings,
                needs,
                foreign,
                ..
            } => {
                // Short enough for 80 columns with the pointer to
                // `providers --status`, which has the rest.
                let what = match foreign {
                    true => "put aside",
                    false => "held",
                };
                let why: Vec<&str> = needs
                    .iter()
                    .map(|need| match need {
                        Need::KeyMove => "a key would go to a new place",
                        Need::Shrink => "most providers or models would go",
                        Need::Downgrade => "older than the newest signed one",
                        _ => "not signed by the pinned key",
                    })
                    .collect();
                let why = match why.is_empty() {
                    true => findings.first().map_or("", String::as_str).to_owned(),
                    false => why.join(", "),
                };
                format!("{} {what}: {why}", target.short())
            }
            Warning::LastRefreshFailed { target, cause, .. } => format!(
                "{} not refreshed: {}",
                target.short(),
                cause.as_deref().unwrap_or("no cause recorded")
            ),
            other => {
                let told = other.told_by(program).to_string();
                told.lines().next().unwrap_or_default().to_owned()
            }
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.told_by(crate::error::program()).fmt(f)
    }
}

impl fmt::Display for ToldBy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let me = self.program;
        match self.warning {
            Warning::UntrustedFolder { problem, fix } => {
                let using = InUse::Embedded;
                write!(f, "the data folder {problem}; {fix}; using {using}")
            }
            Warning::InvalidCache { problem } => write!(
                f,
                "{problem}; ignoring it; `{me} update-providers` replaces it (`{me} update-providers embedded` without a network)"
            ),
            Warning::InvalidHyperCache { problem } => {
                write!(f, "{problem}; it is replaced by the next refresh")
            }
            Warning::UnreadableState { problem } => f.write_str(problem),
            Warning::Held {
                target,
                url,
                at,
                findings,
                needs,
                foreign,
            } => held(f, me, *target, url, *at, findings, needs, *foreign),
            Warning::LastRefreshFailed {
                target,
                url,
                at,
                cause,
                using,
                crushrc,
            } => write!(
                f,
                "the last refresh of {} from {url} failed at {}: {}; {}; {}",
                target.noun(),
                state::rfc3339(*at),
                cause.as_deref().unwrap_or("no cause recorded"),
                using.clause(),
                refresh_hint(me, *target, crushrc)
            ),
            Warning::RefreshFailed { url, cause, using } => write!(
                f,
                "could not refresh the provider catalog from {url}: {cause}; using {using}"
            ),
            Warning::HyperRefreshFailed {
                url,
                cause,
                using,
                crushrc,
            } => write!(
                f,
                "could not refresh Hyper's provider from {url}: {cause}; {using}; {}",
                refresh_hint(me, Target::Hyper, crushrc)
            ),
            Warning::Unsaved { cause } => write!(
                f,
                "could not save the refreshed catalog: {cause}; it is used for this run only"
            ),
            Warning::HyperUnsaved { url, cause } => write!(
                f,
                "could not save the refreshed Hyper provider from {url}: {cause}; Crush reads it only from hyper.json"
            ),
            Warning::NoBackground {
                helper,
                cause,
                using,
            } => write!(
                f,
                "cannot start the background refresh ({}): {cause}; using {using} meanwhile",
                helper.display()
            ),
            Warning::NoHyperBackground { cause } => write!(
                f,
                "cannot start the background refresh of Hyper's provider: {cause}"
            ),
            Warning::NotHttp { value } => not_http(f, me, value),
            Warning::BadTimeout { value } => bad_timeout(f, value),
            Warning::BadInterval { value } => bad_interval(f, value),
            Warning::BadKey { failure } => bad_key(f, me, failure),
            Warning::HyperNotRefreshed { why } => f.write_str(why),
            Warning::Routed { target, routed } => routed_by_dotenv(f, *target, routed),
        }
    }
}

/// [`Warning::BadKey`]'s words, its hint's commands named as `me`.
fn bad_key(f: &mut fmt::Formatter<'_>, _me: &str, failure: &Failure) -> fmt::Result {
    write!(f, "{failure}; no refresh until it is fixed")
}

/// [`Warning::Routed`]'s words.
fn routed_by_dotenv(
    f: &mut fmt::Formatter<'_>,
    target: Target,
    routed: &crate::fetch::credential::Routed,
) -> fmt::Result {
    write!(
        f,
        "the start-up refresh of {} carries {}, so it goes without {}, which a project's .env chose; {}",
        target.noun(),
        routed.credential,
        routed.listed(),
        routed.fix(true)
    )
}

/// [`Warning::BadTimeout`]'s words.
fn bad_timeout(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    write!(
        f,
        "{TIMEOUT_ENV}={value:?} is not a positive number of seconds; using {}",
        DEFAULT_TIMEOUT.as_secs()
    )
}

/// [`Warning::BadInterval`]'s words.
fn bad_interval(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    write!(
        f,
        "{INTERVAL_ENV}={value:?} is not a duration (seconds, or e.g. 90s, 5m, 1h; 0 to refresh at every start); using 5m"
    )
}

/// The global crushrc, which every project reads, as a hint names it.
pub(super) fn crushrc() -> String {
    crate::store::paths::config_dir(&crate::store::paths::process_env)
        .map(|dir| dir.join("crushrc").display().to_string())
        .unwrap_or_else(|_| "a crushrc".into())
}

/// What ends the warning of a failed refresh of `target`'s document, the
/// program being `me`: how to do without the network, and how to fetch
/// it by hand.
fn refresh_hint(me: &str, target: Target, crushrc: &str) -> String {
    let update = update_command(target);
    format!(
        "on a machine without network, set `option provider-auto-update false` in {crushrc} or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; once online, `{me} {update}` fetches it by hand"
    )
}

/// `update-providers`, and `--source hyper` for Hyper's provider.
fn update_command(target: Target) -> &'static str {
    match target {
        Target::Catalog => "update-providers",
        Target::Hyper => "update-providers --source hyper",
    }
}

/// The commands, one a line, that settle a refresh of `target`'s document
/// from `url` held until a person allows what it `needs`, the program
/// being `me`: keep the one in use, review it, apply it.
pub(crate) fn held_hint_for(me: &str, target: Target, url: &str, needs: &[Need]) -> String {
    let update = update_command(target);
    let from = format!("{me} {update} {}", shell_word(url));
    let kept = match target {
        Target::Catalog => "keep the catalog in use:",
        Target::Hyper => "keep the one in use:",
    };
    let keep = (kept, format!("{me} {update} --keep-current"));
    // Held for its signature: neither a review nor an apply without one
    // gets past the pinned key.
    let (commands, after) = if needs.contains(&Need::Signature) {
        let apply = format!("{from} {} FILE", flag(Need::Signature));
        let after = format!("\n  (FILE its signature; or the mirror must serve {url}.minisig)");
        (vec![keep, ("apply it signed:", apply)], after)
    } else {
        let apply = std::iter::once(from.clone())
            .chain(needs.iter().map(|need| flag(*need).to_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        let commands = vec![
            keep,
            ("review it:", format!("{from} --dry-run")),
            ("apply it:", apply),
        ];
        (commands, String::new())
    };
    let width = commands
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    let lines: Vec<String> = commands
        .iter()
        .map(|(label, command)| format!("  {label:width$}  {command}"))
        .collect();
    lines.join("\n") + &after
}

/// `text` as one word a shell reads back as it is: bare when it holds only
/// characters no shell gives a meaning (a URL's usual ones), else in single
/// quotes.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/:._~%+=@,-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The warning for a held refresh ([`Warning::Held`]), the program being
/// `me`.
#[allow(clippy::too_many_arguments)]
fn held(
    f: &mut fmt::Formatter<'_>,
    me: &str,
    target: Target,
    url: &str,
    at: Option<u64>,
    findings: &[String],
    needs: &[Need],
    foreign: bool,
) -> fmt::Result {
    let more = match findings.len() {
        0 | 1 => String::new(),
        n => format!(
            " (and {} more: `{me} providers --status` lists them)",
            n - 1
        ),
    };
    let when = at.map_or_else(String::new, |at| format!(" at {}", state::rfc3339(at)));
    let kept = match target {
        Target::Catalog => "the catalog in use is kept",
        // With a Hyper key, Crush fetches for itself; while this is held
        // the front starts it with its updates off instead.
        Target::Hyper => {
            "hyper.json is not replaced (while it is held, Crush is started with its own updates off and uses its embedded Hyper provider)"
        }
    };
    let first = findings.first().map_or("", String::as_str);
    let hint = held_hint_for(me, target, url, needs);
    let noun = target.noun();
    if foreign {
        return write!(
            f,
            "{noun} that another program wrote into the cache was held{when} and put aside as {url}; the last one reviewed here is back in place: {first}{more}\n{hint}"
        );
    }
    write!(
        f,
        "a refresh of {noun} from {url} was held{when}, and {kept}: {first}{more}\n{hint}"
    )
}

/// What every start says of a `CATWALK_URL` that is not an http(s) URL
/// ([`Warning::NotHttp`]), the program being `me`: no refresh goes
/// anywhere (Crush's request with it fails before it is sent; never the
/// public server instead), and what it is good for.
fn not_http(f: &mut fmt::Formatter<'_>, me: &str, value: &str) -> fmt::Result {
    if let Some((what, url)) = source::stray_space(value) {
        return write!(
            f,
            "CATWALK_URL={} {what}, which is no part of a URL: no refresh at start-up (Crush makes no request with it either); remove it: CATWALK_URL={}",
            quoted(&source::redacted(value)),
            quoted(&source::redacted(url))
        );
    }
    let value = source::redacted(value);
    let meant = source::meant_url(&value).map_or_else(String::new, |url| {
        format!("; for a mirror, write its scheme: CATWALK_URL={url}")
    });
    write!(
        f,
        "CATWALK_URL={} is not an http:// or https:// URL: no refresh at start-up (Crush makes no request with it either); `{me} update-providers` reads it as its SOURCE (a file, or `embedded`){meant}",
        quoted(&value)
    )
}

/// Tells of what the last background refresh of `files`' document held
/// back (at every start, while it is held), or, once, of its failure
/// (marking it told in the state file). `cached` is the cache; `None` for
/// a document not there, whose state is then its own
/// ([`cache::absent_state`]: Hyper's provider).
/// Tells what is held of `files`' document, when something is: as
/// [`report_refresh`] does, without the last failure.
pub(super) fn report_held(
    files: &CacheFiles,
    cached: Option<&Cached>,
    warnings: &mut Vec<Warning>,
) {
    let state = match cached {
        Some(cached) => cached.state.clone(),
        None => cache::absent_state(files),
    };
    if let Some(state) = &state {
        held_in(files.target, state, warnings);
    }
}

fn held_in(target: Target, state: &state::CacheState, warnings: &mut Vec<Warning>) {
    if let Some((refresh, held)) = state.held() {
        warnings.push(Warning::Held {
            target,
            url: refresh.url.clone(),
            at: Some(refresh.at),
            findings: held.changes.clone(),
            needs: held.needs.clone(),
            foreign: held.foreign,
        });
    }
}

pub(super) fn report_refresh(
    files: &CacheFiles,
    cached: Option<&Cached>,
    warnings: &mut Vec<Warning>,
) {
    let state = match cached {
        Some(cached) => cached.state.clone(),
        None => cache::absent_state(files),
    };
    let Some(state) = &state else {
        return;
    };
    let target = files.target;
    held_in(target, state, warnings);
    let Some(failure) = state.untold_failure() else {
        return;
    };
    let using = match target {
        Target::Hyper => InUse::hyper(cached),
        _ if state.source == source::Source::Embedded.to_string() => InUse::Embedded,
        _ => InUse::Cached,
    };
    warnings.push(Warning::LastRefreshFailed {
        target,
        url: failure.url.clone(),
        at: failure.at,
        cause: failure.cause.clone(),
        using,
        crushrc: crushrc(),
    });
    mark_told(files, cached, failure.cause.clone());
}

/// Marks the last refresh's failure of `files`' document, `cached` (see
/// [`report_refresh`]), as told, when its cause is still `cause`.
pub(super) fn mark_told(files: &CacheFiles, cached: Option<&Cached>, cause: Option<String>) {
    // Best effort: should it not be saved, the warning shows once more. By
    // cause, not time: a refresh that failed the same way meanwhile is the
    // same failure.
    let told = |state: &mut state::CacheState| {
        if let Some(refresh) = &mut state.refresh
            && refresh.outcome == RefreshOutcome::Failed
            && refresh.cause == cause
        {
            refresh.told = true;
        }
    };
    let wait = Duration::from_millis(200);
    let _ = match cached {
        Some(cached) => cache::update_state(files, cached, wait, told),
        None => cache::update_absent_state(files, wait, told),
    };
}

/// What a person must allow to apply what the last refresh of `files`'
/// document held back, as its state records it (nothing when it records
/// no hold).
pub(super) fn held_needs(files: &CacheFiles) -> Vec<Need> {
    let state = match cache::read_valid(files) {
        Ok(Some(cached)) => cached.state,
        _ => cache::absent_state(files),
    };
    match state.and_then(|s| s.refresh).and_then(|r| r.held) {
        Some(held) => held.needs,
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands a warning names are run by the program that tells it;
    /// its `Display`, a host's, names Crush's.
    #[test]
    fn a_warning_names_the_program_that_tells_it() {
        let held = Warning::Held {
            target: Target::Catalog,
            url: "https://mirror.example/v2/providers".into(),
            at: None,
            findings: vec!["moves a key".into(), "and another".into()],
            needs: vec![Need::Shrink, Need::KeyMove],
            foreign: false,
        };
        let invalid = Warning::InvalidCache {
            problem: "the cache is not valid".into(),
        };
        let failed = Warning::LastRefreshFailed {
            target: Target::Hyper,
            url: "https://hyper.example".into(),
            at: 0,
            cause: None,
            using: InUse::HyperEmbedded,
            crushrc: "/home/u/.config/crush/crushrc".into(),
        };
        let not_http = Warning::NotHttp {
            value: "ftp://x".into(),
        };
        for warning in [&held, &invalid, &failed, &not_http] {
            let host = warning.to_string();
            let told = warning.told_by("crush-providers").to_string();
            assert!(host.contains("`crush "), "{host}");
            assert!(!host.contains("crush-providers"), "{host}");
            assert!(told.contains("`crush-providers "), "{told}");
            assert_eq!(told.replace("crush-providers", "crush"), host);
        }
        assert_eq!(
            held.told_by("crush-providers").to_string(),
            "a refresh of the provider catalog from https://mirror.example/v2/providers was held, and the catalog in use is kept: moves a key (and 1 more: `crush-providers providers --status` lists them)\n  \
             keep the catalog in use:  crush-providers update-providers --keep-current\n  \
             review it:                crush-providers update-providers https://mirror.example/v2/providers --dry-run\n  \
             apply it:                 crush-providers update-providers https://mirror.example/v2/providers --allow-shrink --allow-key-move"
        );
        assert_eq!(
            failed.to_string(),
            "the last refresh of Hyper's provider from https://hyper.example failed at 1970-01-01T00:00:00Z: no cause recorded; Crush keeps its own embedded one; on a machine without network, set `option provider-auto-update false` in /home/u/.config/crush/crushrc or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; once online, `crush update-providers --source hyper` fetches it by hand"
        );
    }

    /// A refresh held for its signature is applied with one given by hand.
    #[test]
    fn a_hold_for_a_signature_is_settled_with_one() {
        let hint = held_hint_for(
            "crush",
            Target::Catalog,
            "https://m.example/p",
            &[Need::Signature],
        );
        assert_eq!(
            hint,
            "  keep the catalog in use:  crush update-providers --keep-current\n  \
             apply it signed:          crush update-providers https://m.example/p --signature FILE\n  \
             (FILE its signature; or the mirror must serve https://m.example/p.minisig)"
        );
    }
}
