//! What a start tells a person: its typed warnings ([`Warning`]), one
//! type for both documents (the catalog and Hyper's provider, told apart
//! by their [`Target`]), their words, the hints that end them (what to
//! run, as it is typed, the program named as the command line was
//! invoked, else `crush`), a held or failed refresh told at every start
//! (or once).

use std::fmt;
use std::time::Duration;

use reqwest::Url;

use super::{DEFAULT_TIMEOUT, INTERVAL_ENV, TIMEOUT_ENV};
use crate::catalog::{Target, embedded, quoted};
use crate::error::{Failure, program};
use crate::fetch::credential::Routed;
use crate::fetch::source;
use crate::store::cache::{self, Bytes, CacheFiles, Cached, UntrustedFolder};
use crate::store::state::{self, CacheState, Need, RefreshOutcome};
use crate::trust::policy::flag;

/// What went wrong at a start without stopping it: the start goes on
/// with what it has, and tells this. Its `Display` is the line a person
/// reads (a held refresh's commands on lines of their own after it),
/// naming the program as the command line was invoked (a host's: `crush`).
#[derive(Debug)]
#[non_exhaustive]
pub enum Warning {
    /// The data folder is one another user may write into (which, and
    /// why it is not used): neither read nor refreshed (what is in it
    /// could send a key anywhere).
    UntrustedFolder(UntrustedFolder),
    /// A cached document is not valid (what is wrong with it): the
    /// catalog's is ignored, Hyper's replaced by the next refresh.
    InvalidCache(Target, String),
    /// The state file beside a cache cannot be read (what is wrong, and
    /// what comes of it): ignored.
    UnreadableState(String),
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
        /// What needs a person (one finding a line), what a person must
        /// allow to apply it, and whether another program wrote it into
        /// the cache (`url` is then where it is kept aside: the last
        /// reviewed document is back in place).
        held: state::Held,
    },
    /// A refresh failed: the one a person waited for, or (with `at`) the
    /// last one in the background, told once.
    RefreshFailed {
        /// Which document.
        target: Target,
        /// The URL it asked (its password hidden).
        url: String,
        /// When (seconds since the Unix epoch), when it was not just now.
        at: Option<u64>,
        /// Why, with its fix, when recorded.
        cause: Option<String>,
        /// What is used meanwhile.
        using: InUse,
    },
    /// A document a person waited for came but could not be saved: the
    /// catalog is used for this run only.
    Unsaved {
        /// Which document.
        target: Target,
        /// Where it came from (its password hidden).
        url: String,
        /// Why.
        cause: String,
    },
    /// The background refresh of a document cannot be started.
    NoBackground {
        /// Which document.
        target: Target,
        /// Why (and the helper it would have run).
        cause: String,
        /// What is used meanwhile.
        using: InUse,
    },
    /// `CATWALK_URL` is not an http(s) URL (its value, as set): no
    /// refresh goes anywhere.
    NotHttp(String),
    /// [`TIMEOUT_ENV`] is not a positive number of seconds (its value, as
    /// set): the default is used.
    BadTimeout(String),
    /// [`INTERVAL_ENV`] is not a duration (its value, as set): the default
    /// is used.
    BadInterval(String),
    /// A pinned key cannot be read (where it was set, and why): no refresh
    /// until it is fixed.
    BadKey(Failure),
    /// Hyper's provider is not refreshed at start-up, for a reason told at
    /// every start (a Hyper key no header can carry, a `HYPER_URL` that
    /// cannot be used or that a project's `.env` chose), with what to do.
    HyperNotRefreshed(String),
    /// The start-up's refresh of a document carries a credential, so it
    /// goes without the proxy or CA a project's `.env` sets (told at every
    /// start): what it carries, and the `.env`'s variables.
    Routed(Target, Routed),
}

/// What is used of a document while it is not refreshed: the catalog
/// handed over, or what Crush keeps of Hyper's provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InUse {
    /// The cached one.
    Cached,
    /// The embedded one (the catalog's snapshot, or Crush's own).
    Embedded,
}

impl InUse {
    /// What is used of a document whose valid cache is `cached`: the
    /// embedded one without a cache, or with the snapshot installed there.
    pub(super) fn of(cached: Option<&Cached>) -> InUse {
        let embedded = source::Source::Embedded.to_string();
        match cached.map(|c| c.state.as_ref().is_some_and(|s| s.source == embedded)) {
            Some(false) => InUse::Cached,
            _ => InUse::Embedded,
        }
    }

    /// What a start goes on with of `target`'s document, as a clause.
    fn clause(self, target: Target) -> String {
        match (target, self) {
            (Target::Catalog, InUse::Cached) => "using the cached catalog".into(),
            (Target::Catalog, InUse::Embedded) => {
                format!("using the embedded catalog ({})", embedded::origin())
            }
            (Target::Hyper, InUse::Cached) => "Crush keeps the cached one (hyper.json)".into(),
            (Target::Hyper, InUse::Embedded) => "Crush keeps its own embedded one".into(),
        }
    }
}

impl Warning {
    /// This warning in one short line, for a start that has one row before
    /// Crush takes the screen: the finding or the cause first, without the
    /// URL, the time or the commands (which `providers --status` gives).
    pub(crate) fn brief(&self) -> String {
        match self {
            Warning::Held { target, held, .. } => {
                // Short enough for 80 columns with the pointer to
                // `providers --status`, which has the rest.
                let what = if held.foreign { "put aside" } else { "held" };
                let why: Vec<&str> = (held.needs)
                    .iter()
                    .map(|need| match need {
                        Need::KeyMove => "a key would go to a new place",
                        Need::Shrink => "most providers or models would go",
                        Need::Downgrade => "older than the newest signed one",
                        _ => "not signed by the pinned key",
                    })
                    .collect();
                let why = match why.is_empty() {
                    true => held.changes.first().map_or("", String::as_str).to_owned(),
                    false => why.join(", "),
                };
                format!("{} {what}: {why}", target.short())
            }
            Warning::RefreshFailed {
                target, url, cause, ..
            } => {
                // The server a cause names first (`host:port refused the
                // connection`) is in `providers --status`: the reason is
                // what the row has room for.
                let cause = cause.as_deref().unwrap_or("no cause recorded");
                let host = Url::parse(url)
                    .ok()
                    .and_then(|u| Some(u.host_str()?.to_owned()));
                let cause = match cause.split_once(' ') {
                    Some((first, rest)) if host.is_some_and(|h| first.starts_with(&h)) => rest,
                    _ => cause,
                };
                format!("{} not refreshed: {cause}", target.short())
            }
            other => (other.to_string().lines().next())
                .unwrap_or_default()
                .to_owned(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let me = program();
        match self {
            Warning::UntrustedFolder(e) => {
                let using = InUse::Embedded.clause(Target::Catalog);
                write!(f, "the data folder {e}; {}; {using}", e.fix())
            }
            Warning::InvalidCache(Target::Catalog, problem) => write!(
                f,
                "{problem}; ignoring it; `{me} update-providers` replaces it (`{me} update-providers embedded` without a network)"
            ),
            Warning::InvalidCache(_, problem) => {
                write!(f, "{problem}; it is replaced by the next refresh")
            }
            Warning::UnreadableState(problem) => f.write_str(problem),
            // A held refresh's commands on lines of their own after it.
            Warning::Held {
                target,
                url,
                at,
                held,
            } => {
                let findings = &held.changes;
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
                let hint = held_hint_for(*target, url, &held.needs);
                let noun = target.noun();
                if held.foreign {
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
            Warning::RefreshFailed {
                target,
                url,
                at,
                cause,
                using,
            } => {
                let (noun, using) = (target.noun(), using.clause(*target));
                let cause = cause.as_deref().unwrap_or("no cause recorded");
                let Some(at) = at else {
                    // The cause carries its fix; a person who waits for
                    // the network is online.
                    return write!(f, "could not refresh {noun} from {url}: {cause}; {using}");
                };
                // How to do without the network (in the global crushrc,
                // which every project reads), and how to fetch it by hand.
                let crushrc = crate::store::paths::config_dir(&crate::store::paths::process_env)
                    .map(|dir| dir.join("crushrc").display().to_string())
                    .unwrap_or_else(|_| "a crushrc".into());
                let update = update_command(*target);
                write!(
                    f,
                    "the last refresh of {noun} from {url} failed at {}: {cause}; {using}; on a machine without network, set `option provider-auto-update false` in {crushrc} or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; once online, `{me} {update}` fetches it by hand",
                    state::rfc3339(*at),
                )
            }
            Warning::Unsaved {
                target: Target::Catalog,
                cause,
                ..
            } => write!(
                f,
                "could not save the refreshed catalog: {cause}; it is used for this run only"
            ),
            Warning::Unsaved { url, cause, .. } => write!(
                f,
                "could not save the refreshed Hyper provider from {url}: {cause}; Crush reads it only from hyper.json"
            ),
            Warning::NoBackground {
                target,
                cause,
                using,
            } => write!(
                f,
                "cannot start the background refresh of {}: {cause}; {} meanwhile",
                target.noun(),
                using.clause(*target)
            ),
            Warning::NotHttp(value) => not_http(f, value),
            Warning::BadTimeout(value) => write!(
                f,
                "{TIMEOUT_ENV}={value:?} is not a positive number of seconds; using {}",
                DEFAULT_TIMEOUT.as_secs()
            ),
            Warning::BadInterval(value) => write!(
                f,
                "{INTERVAL_ENV}={value:?} is not a duration (seconds, or e.g. 90s, 5m, 1h; 0 to refresh at every start); using 5m"
            ),
            Warning::BadKey(failure) => write!(f, "{failure}; no refresh until it is fixed"),
            Warning::HyperNotRefreshed(why) => f.write_str(why),
            Warning::Routed(target, routed) => write!(
                f,
                "the start-up refresh of {} carries {}, so it goes without {}, which a project's .env chose; {}",
                target.noun(),
                routed.credential,
                routed.listed(),
                routed.fix(true)
            ),
        }
    }
}

/// `update-providers`, and `--source hyper` for Hyper's provider.
fn update_command(target: Target) -> &'static str {
    match target {
        Target::Catalog => "update-providers",
        Target::Hyper => "update-providers --source hyper",
    }
}

/// The commands, one a line, that settle a refresh of `target`'s document
/// from `url` held until a person allows what it `needs`: keep the one in
/// use, review it, apply it.
pub(crate) fn held_hint_for(target: Target, url: &str, needs: &[Need]) -> String {
    let (me, update) = (program(), update_command(target));
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
        let flags = needs.iter().map(|need| format!(" {}", flag(*need)));
        let apply = format!("{from}{}", flags.collect::<String>());
        let review = ("review it:", format!("{from} --dry-run"));
        (vec![keep, review, ("apply it:", apply)], String::new())
    };
    // Its label the longest: the others line up after it.
    let width = kept.len();
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

/// What every start says of a `CATWALK_URL` that is not an http(s) URL
/// ([`Warning::NotHttp`]): no refresh goes
/// anywhere (Crush's request with it fails before it is sent; never the
/// public server instead), and what it is good for.
fn not_http(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
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
        "CATWALK_URL={} is not an http:// or https:// URL: no refresh at start-up (Crush makes no request with it either); `{} update-providers` reads it as its SOURCE (a file, or `embedded`){meant}",
        quoted(&value),
        program()
    )
}

/// Tells what the last refresh of `files`' document (its valid cache
/// `cached`) held back, at every start while it is held, and, with
/// `failure`, its failure, once: marked told in the state file.
pub(super) fn tell_last(
    files: &CacheFiles,
    cached: Option<&Cached>,
    failure: bool,
    warnings: &mut Vec<Warning>,
) {
    // Without a valid cache, the state recorded for none: a first fetch
    // of Hyper's provider that failed or was held.
    let absent = || cache::read(files, Bytes::Peek).state().cloned();
    let Some(state) = cached.map_or_else(absent, |c| c.state.clone()) else {
        return;
    };
    let target = files.target;
    if let Some((refresh, held)) = state.held() {
        warnings.push(Warning::Held {
            target,
            url: refresh.url.clone(),
            at: Some(refresh.at),
            held: held.clone(),
        });
    }
    let Some(last) = state.untold_failure().filter(|_| failure) else {
        return;
    };
    warnings.push(Warning::RefreshFailed {
        target,
        url: last.url.clone(),
        at: Some(last.at),
        cause: last.cause.clone(),
        using: InUse::of(cached),
    });
    mark_told(files, cached, last.cause.clone());
}

/// Marks the last refresh's failure of `files`' document, `cached` (see
/// [`tell_last`]), as told, when its cause is still `cause`.
pub(super) fn mark_told(files: &CacheFiles, cached: Option<&Cached>, cause: Option<String>) {
    // Best effort: should it not be saved, the warning shows once more. By
    // cause, not time: a refresh that failed the same way meanwhile is the
    // same failure.
    let told = |state: &mut CacheState| {
        if let Some(refresh) = &mut state.refresh
            && refresh.outcome == RefreshOutcome::Failed
            && refresh.cause == cause
        {
            refresh.told = true;
        }
    };
    let wait = Duration::from_millis(200);
    let _ = cache::update_state(files, cached, wait, told);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands a warning names are run by the program that tells it:
    /// in a host (and here), Crush's.
    #[test]
    fn a_warning_names_the_program_that_tells_it() {
        let held = Warning::Held {
            target: Target::Catalog,
            url: "https://mirror.example/v2/providers".into(),
            at: None,
            held: state::Held {
                changes: vec!["moves a key".into(), "and another".into()],
                needs: vec![Need::Shrink, Need::KeyMove],
                ..Default::default()
            },
        };
        let invalid = Warning::InvalidCache(Target::Catalog, "the cache is not valid".into());
        let failed = Warning::RefreshFailed {
            target: Target::Hyper,
            url: "https://hyper.example".into(),
            at: Some(0),
            cause: None,
            using: InUse::Embedded,
        };
        let not_http = Warning::NotHttp("ftp://x".into());
        for warning in [&held, &invalid, &failed, &not_http] {
            let host = warning.to_string();
            assert!(host.contains("`crush "), "{host}");
        }
        assert_eq!(
            held.to_string(),
            "a refresh of the provider catalog from https://mirror.example/v2/providers was held, and the catalog in use is kept: moves a key (and 1 more: `crush providers --status` lists them)\n  \
             keep the catalog in use:  crush update-providers --keep-current\n  \
             review it:                crush update-providers https://mirror.example/v2/providers --dry-run\n  \
             apply it:                 crush update-providers https://mirror.example/v2/providers --allow-shrink --allow-key-move"
        );
        let failed = failed.to_string();
        assert!(
            failed.starts_with("the last refresh of Hyper's provider from https://hyper.example failed at 1970-01-01T00:00:00Z: no cause recorded; Crush keeps its own embedded one; on a machine without network, set `option provider-auto-update false` in ")
                && failed.ends_with("crushrc or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; once online, `crush update-providers --source hyper` fetches it by hand"),
            "{failed}"
        );
    }

    /// A start's one line before Crush names the reason of a failure, not
    /// the server that `providers --status` names.
    #[test]
    fn a_failure_in_brief_is_its_reason() {
        let failed = |url: &str, cause: &str| Warning::RefreshFailed {
            target: Target::Catalog,
            url: url.into(),
            at: Some(0),
            cause: Some(cause.into()),
            using: InUse::Cached,
        };
        for (url, cause) in [
            (
                "http://127.0.0.1:4567/v2/providers",
                "127.0.0.1:4567 refused the connection (nothing listens there); check the URL",
            ),
            (
                "https://mirror.example/v2/providers",
                "mirror.example:443 refused the connection (nothing listens there); check the URL",
            ),
        ] {
            assert_eq!(
                failed(url, cause).brief(),
                "catalog not refreshed: refused the connection (nothing listens there); check the URL"
            );
        }
        let answered = failed("https://m.example/p", "server answered 500");
        assert_eq!(
            answered.brief(),
            "catalog not refreshed: server answered 500"
        );
    }

    /// A refresh held for its signature is applied with one given by hand.
    #[test]
    fn a_hold_for_a_signature_is_settled_with_one() {
        let hint = held_hint_for(Target::Catalog, "https://m.example/p", &[Need::Signature]);
        assert_eq!(
            hint,
            "  keep the catalog in use:  crush update-providers --keep-current\n  \
             apply it signed:          crush update-providers https://m.example/p --signature FILE\n  \
             (FILE its signature; or the mirror must serve https://m.example/p.minisig)"
        );
    }
}
