//! Standing in front of a real Crush, as rustup's `cargo` stands in front
//! of the toolchain's: installed as `crush` ahead of Crush on `PATH`, this
//! program answers the commands that are its own and hands every other
//! one to Crush, after the start-up refresh that never waits and never
//! moves a key, with Crush's own automatic updates turned off so that it
//! reads the cache this program keeps.
//!
//! The decisions are pure functions returning enums: which program a
//! command line is for ([`classify`]), how Crush is handed over
//! ([`decide`]), what a start tells ([`notice`]), whether a chain of starts
//! is a loop ([`find::chain`]); finding the real Crush ([`find`]) and
//! learning its version ([`version`]) are the look-ups around them. The
//! command layer ([`crate::commands`]) carries them out: it prints, it
//! starts Crush, it exits.

pub(crate) mod find;
pub(crate) mod version;

use std::ffi::{OsStr, OsString};

use crate::startup::refresh::HELPER_COMMAND;
use crate::store::state::{CacheState, RefreshOutcome};

/// Names this program takes: the only commands that never go to Crush
/// (Crush has none of these names).
pub(crate) const OWN_COMMANDS: [&str; 5] = [
    "update-providers",
    "providers",
    "provider-models",
    "provider-dirs",
    HELPER_COMMAND,
];

/// Commands both have: Crush's when one is found, this program's (its
/// names of before the front) when none is.
const SHARED_COMMANDS: [&str; 4] = ["models", "dirs", "completion", "help"];

/// Crush's global flags that take a value (`-c DIR`, `--cwd=DIR`): the
/// word after one is no command.
const VALUE_FLAGS: [(char, &str); 4] = [
    ('c', "cwd"),
    ('D', "data-dir"),
    ('H', "host"),
    ('s', "session"),
];
/// Long-only flags that take a value.
const LONG_VALUE_FLAGS: [&str; 1] = ["channels"];

/// Whose command a command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word {
    /// Only this program's: answered here, whatever else is installed.
    Own,
    /// Crush's, or this program's when no Crush is found: `models`,
    /// `dirs`, `completion`, `help`, `--help`, `--version`.
    Shared,
    /// Crush's alone: no command (the interface), `run`, `login`, any
    /// other word, any other flag.
    Crush,
}

/// A command line, read as Crush's would be for what the front needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Whose it is.
    pub word: Word,
    /// `-c`/`--cwd`, the folder Crush reads its project settings from.
    pub cwd: Option<OsString>,
    /// `-D`/`--data-dir`, the folder of its workspace config.
    pub data_dir: Option<OsString>,
}

/// Reads the arguments (without the program's name) as Crush's command
/// line parser would find its command: the first word that is neither a
/// flag nor a flag's value, before any `--`.
pub(crate) fn classify(args: &[OsString]) -> Parsed {
    let mut cwd = None;
    let mut data_dir = None;
    let mut command: Option<&str> = None;
    let mut after: Option<&str> = None;
    let mut flags_only_help = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_string_lossy();
        i += 1;
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let takes_value =
                VALUE_FLAGS.iter().any(|(_, l)| *l == name) || LONG_VALUE_FLAGS.contains(&name);
            let value = match inline {
                Some(value) => Some(exact(&args[i - 1], &arg, value)),
                None if takes_value => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            match name {
                "cwd" => cwd = value.or(cwd),
                "data-dir" => data_dir = value.or(data_dir),
                _ => {}
            }
            flags_only_help |= command.is_none() && matches!(name, "help" | "version");
            continue;
        }
        if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            let (value, flag) = short_value(shorts);
            let value = match value {
                ShortValue::None => None,
                ShortValue::Inline(v) => Some(exact(&args[i - 1], &arg, v)),
                ShortValue::Next => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
            };
            match flag {
                Some('c') => cwd = value.or(cwd),
                Some('D') => data_dir = value.or(data_dir),
                _ => {}
            }
            flags_only_help |=
                command.is_none() && shorts.chars().any(|c| matches!(c, 'h' | 'v' | 'V'));
            continue;
        }
        match command {
            None => command = Some(args_str(&args[i - 1])),
            Some(_) if after.is_none() => after = Some(args_str(&args[i - 1])),
            Some(_) => {}
        }
    }
    let word = match command {
        Some(word) if OWN_COMMANDS.contains(&word) => Word::Own,
        // `crush help providers`: this program's help for its command.
        Some("help") if after.is_some_and(|w| OWN_COMMANDS.contains(&w)) => Word::Own,
        Some(word) if SHARED_COMMANDS.contains(&word) => Word::Shared,
        Some(_) => Word::Crush,
        None if flags_only_help => Word::Shared,
        None => Word::Crush,
    };
    Parsed {
        word,
        cwd,
        data_dir,
    }
}

/// `value`, the end of the argument `arg` (read as `text`), as `arg` holds
/// it: a folder's name is bytes on Unix, and one that is not UTF-8 must
/// not become the name of another. The flag before it is ASCII, or no flag
/// Crush knows.
fn exact(arg: &OsStr, text: &str, value: &str) -> OsString {
    let at = text.len() - value.len();
    #[cfg(unix)]
    if text.is_char_boundary(at) && text[..at].is_ascii() {
        use std::os::unix::ffi::OsStrExt;
        return OsStr::from_bytes(&arg.as_bytes()[at..]).to_owned();
    }
    #[cfg(not(unix))]
    let _ = (arg, at);
    OsString::from(value)
}

fn args_str(arg: &OsStr) -> &str {
    // A word that is not UTF-8 is no command of this program's.
    arg.to_str().unwrap_or("\u{fffd}")
}

/// Where a cluster of short flags (`-dc`) finds the value of the one that
/// takes it.
enum ShortValue<'a> {
    None,
    Inline(&'a str),
    Next,
}

/// The value of a short-flag cluster (without its `-`), as pflag reads
/// it: bool flags may be grouped, and the first flag that takes a value
/// takes the rest of the cluster (`-cDIR`, `-c=DIR`) or the next argument.
fn short_value(shorts: &str) -> (ShortValue<'_>, Option<char>) {
    for (at, c) in shorts.char_indices() {
        if VALUE_FLAGS.iter().any(|(s, _)| *s == c) {
            let rest = &shorts[at + c.len_utf8()..];
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            let value = if rest.is_empty() {
                ShortValue::Next
            } else {
                ShortValue::Inline(rest)
            };
            return (value, Some(c));
        }
    }
    (ShortValue::None, None)
}

/// How Crush is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HandOver {
    /// With `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1`: Crush reads the cache
    /// this program keeps, makes no request of its own and never applies
    /// an unreviewed catalog.
    UpdatesOff,
    /// The same, where a Hyper key would have Crush fetch for itself: a
    /// refresh of this document was held and is not settled, which Crush
    /// would fetch and apply itself. Crush then uses its own embedded
    /// Hyper provider until the hold is settled.
    HeldOff(crate::catalog::Target),
    /// As it would start without the front, for this reason.
    Unchanged(Why),
}

impl HandOver {
    /// Whether Crush starts with its own updates off.
    pub(crate) fn updates_off(&self) -> bool {
        matches!(self, HandOver::UpdatesOff | HandOver::HeldOff(_))
    }
}

/// Why Crush is started as it would be without the front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// `default-providers` is off: Crush makes no catalog request at all.
    NoDefaultProviders,
    /// Automatic updates are off: Crush reads the cache (a release after
    /// v0.90) or its embedded catalog, as the user chose; nothing to
    /// refresh.
    AutoUpdateOff,
    /// This Crush (v0.90 or older) uses its embedded catalog while its
    /// updates are off: turning them off would hide the cache from it.
    OldCrush(String),
    /// The version of this Crush is not known (why): it could not be told
    /// to read the cache.
    UnknownVersion(String),
    /// A Hyper key is set (where): Crush reads Hyper's provider only from
    /// its embedded copy while its updates are off.
    HyperKey(String),
    /// The program found is a front like this one (a copy further on
    /// `PATH`): it goes on to the Crush after it.
    Front,
}

/// What is known of the real Crush's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known<'a> {
    /// As it printed it (`v0.91.0`).
    Version(&'a str),
    /// Not learnt, and why.
    Unknown(&'a str),
    /// None: the program is a front like this one.
    Front,
}

/// Whether the settings leave the front anything to do: with
/// `default-providers` off, or automatic updates off, Crush already makes
/// no request, and is started as it is.
pub(crate) fn by_settings(auto_update: bool, default_providers: bool) -> Option<Why> {
    if !default_providers {
        Some(Why::NoDefaultProviders)
    } else if !auto_update {
        Some(Why::AutoUpdateOff)
    } else {
        None
    }
}

/// How to hand over a Crush whose automatic updates the user left on: its
/// updates turned off only when it reads the cache then (a release after
/// v0.90) and no Hyper key depends on them, or a refresh of `held`'s
/// document was held and is not settled (Crush must not fetch that
/// itself).
pub(crate) fn decide(
    version: Known<'_>,
    hyper_key: Option<&str>,
    held: Option<crate::catalog::Target>,
) -> HandOver {
    let unchanged = HandOver::Unchanged;
    match version {
        Known::Front => unchanged(Why::Front),
        Known::Unknown(why) => unchanged(Why::UnknownVersion(why.to_string())),
        Known::Version(v) if version::parse(v).is_none() => unchanged(Why::UnknownVersion(
            format!("`{v}` is no release's version"),
        )),
        Known::Version(v) if !version::reads_cache(v) => unchanged(Why::OldCrush(v.to_string())),
        Known::Version(_) => match (hyper_key, held) {
            (Some(_), Some(target)) => HandOver::HeldOff(target),
            (Some(origin), None) => unchanged(Why::HyperKey(origin.to_string())),
            (None, _) => HandOver::UpdatesOff,
        },
    }
}

impl Why {
    /// Why, in words, for `providers --status`.
    pub(crate) fn explain(&self) -> String {
        match self {
            Why::NoDefaultProviders => "default-providers is off: Crush asks for no catalog".into(),
            Why::AutoUpdateOff => {
                "provider-auto-update is off: Crush reads the cache or its embedded catalog".into()
            }
            Why::OldCrush(v) => format!(
                "Crush {v} fetches the catalog itself: releases up to v0.90 use their embedded catalog while their updates are off, only later ones read this cache"
            ),
            Why::UnknownVersion(why) => {
                format!("its version is not known ({why}): it fetches the catalog itself")
            }
            Why::Front => {
                "it is a front like this program, which hands over to the Crush after it".into()
            }
            Why::HyperKey(origin) => format!(
                "a Hyper key is set ({origin}): Crush fetches for itself, and what it fetches is not reviewed here, since it reads Hyper's provider only from its embedded copy while its updates are off (they go off while a refresh here is held)"
            ),
        }
    }
}

/// Why a start with a Hyper key turns Crush's updates off all the same,
/// for `providers --status`.
pub(crate) fn held_off_reason(target: crate::catalog::Target) -> String {
    format!(
        "a refresh of {} is held, which Crush would fetch and apply itself: until it is settled, Crush uses its own embedded Hyper provider",
        target.noun()
    )
}

/// The line a start tells while a refresh of `target`'s document holds
/// Crush's updates off.
pub(crate) fn held_off_notice(target: crate::catalog::Target, program: &str) -> String {
    format!(
        "a refresh of {} was held for review: Crush starts with its own updates off until it is settled, and uses its own embedded Hyper provider (`{program} providers --status`)",
        target.noun()
    )
}

/// What a start says before Crush takes the screen, and the key that tells
/// one such thing from another, so that each is said once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notice {
    /// The same key: already told. A digest of what was found, so that
    /// the memo that keeps it stays small whatever a held refresh found.
    pub key: String,
    /// The line, without its `warning: `.
    pub text: String,
}

/// The one line a start tells of the last automatic refresh, when it was
/// held or failed; `None` when there is nothing to say.
pub(crate) fn notice(state: Option<&CacheState>, program: &str) -> Option<Notice> {
    let refresh = state?.refresh.as_ref()?;
    let status = format!("`{program} providers --status`");
    match (&refresh.outcome, &refresh.held) {
        (RefreshOutcome::Held, Some(held)) if !held.kept => {
            let more = match held.changes.len() {
                0 | 1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            Some(Notice {
                key: digest(&format!(
                    "held\n{}\n{}",
                    refresh.url,
                    held.changes.join("\n")
                )),
                text: format!(
                    "review it with {status}: a refresh of the provider catalog was held, the catalog in use is kept: {}{more}",
                    held.changes.first().map_or("", String::as_str)
                ),
            })
        }
        (RefreshOutcome::Failed, _) => {
            let cause = refresh.cause.as_deref().unwrap_or("no cause recorded");
            Some(Notice {
                key: digest(&format!("failed\n{}\n{cause}", refresh.url)),
                text: format!(
                    "the provider catalog could not be refreshed from {}, the catalog in use is kept ({status}): {cause}",
                    refresh.url
                ),
            })
        }
        _ => None,
    }
}

fn digest(key: &str) -> String {
    crate::store::digest::hex(&crate::store::digest::sha256(key.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::state::{Held, RefreshRecord};

    fn parse(args: &[&str]) -> Parsed {
        classify(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn commands_are_routed_by_their_word() {
        for own in [
            &["update-providers"][..],
            &["update-providers", "--source", "hyper"],
            &["-d", "update-providers"],
            &["-c", "/x", "providers", "--status"],
            &["--cwd", "run", "provider-models"],
            &["provider-dirs"],
            &["refresh-in-background", "--url", "x"],
            &["help", "providers"],
        ] {
            assert_eq!(parse(own).word, Word::Own, "{own:?}");
        }
        for shared in [
            &["models"][..],
            &["dirs"],
            &["completion", "bash"],
            &["--help"],
            &["-h"],
            &["--version"],
            &["-v"],
            &["help"],
            &["help", "run"],
        ] {
            assert_eq!(parse(shared).word, Word::Shared, "{shared:?}");
        }
        for crush in [
            &[][..],
            &["run", "update-providers"],
            &["login"],
            &["logs"],
            &["--yolo"],
            &["-c", "/x"],
            &["-s", "models"],
            &["--session=abc", "run"],
            &["--", "providers"],
            &["-dc", "providers"],
            &["run", "--help"],
            &["schema"],
        ] {
            assert_eq!(parse(crush).word, Word::Crush, "{crush:?}");
        }
    }

    #[test]
    fn the_working_directory_is_read_from_every_form_of_cwd() {
        for (args, cwd) in [
            (&["-c", "/a", "run"][..], "/a"),
            (&["run", "--cwd", "/b"], "/b"),
            (&["--cwd=/c"], "/c"),
            (&["-c/d"], "/d"),
            (&["-c=/e"], "/e"),
            (&["-dc", "/f"], "/f"),
        ] {
            assert_eq!(parse(args).cwd, Some(OsString::from(cwd)), "{args:?}");
        }
        assert_eq!(parse(&["-D", "/x", "run"]).cwd, None);
        assert_eq!(
            parse(&["-D", "/x", "run"]).data_dir,
            Some(OsString::from("/x"))
        );
        assert_eq!(
            parse(&["run", "--data-dir=/y"]).data_dir,
            Some(OsString::from("/y"))
        );
    }

    /// A folder's name is bytes on Unix: the settings are read from the
    /// folder Crush will be in, not from one of a similar name.
    #[cfg(unix)]
    #[test]
    fn the_working_directory_keeps_every_byte_of_its_name() {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let dir = b"/p/caf\xe9";
        for prefix in [&b"--cwd="[..], b"-c", b"-c=", b"-dc"] {
            let arg = OsString::from_vec([prefix, &dir[..]].concat());
            let parsed = classify(&[arg.clone(), OsString::from("run")]);
            assert_eq!(
                parsed.cwd.as_deref().map(OsStr::as_bytes),
                Some(&dir[..]),
                "{arg:?}"
            );
        }
        let parsed = classify(&[OsString::from("-c"), OsString::from_vec(dir.to_vec())]);
        assert_eq!(parsed.cwd.as_deref().map(OsStr::as_bytes), Some(&dir[..]));
        for prefix in [&b"--data-dir="[..], b"-D", b"-dD"] {
            let arg = OsString::from_vec([prefix, &dir[..]].concat());
            let parsed = classify(&[arg.clone(), OsString::from("run")]);
            assert_eq!(
                parsed.data_dir.as_deref().map(OsStr::as_bytes),
                Some(&dir[..]),
                "{arg:?}"
            );
        }
    }

    #[test]
    fn updates_go_off_only_for_a_crush_that_reads_the_cache_and_no_hyper_key() {
        assert_eq!(by_settings(true, true), None);
        assert_eq!(by_settings(true, false), Some(Why::NoDefaultProviders));
        assert_eq!(by_settings(false, true), Some(Why::AutoUpdateOff));
        let new = Known::Version("v0.91.0");
        assert_eq!(decide(new, None, None), HandOver::UpdatesOff);
        let unchanged = |why| HandOver::Unchanged(why);
        assert_eq!(
            decide(Known::Version("v0.90.0"), None, None),
            unchanged(Why::OldCrush("v0.90.0".into()))
        );
        assert_eq!(
            decide(Known::Version("devel"), None, None),
            unchanged(Why::UnknownVersion(
                "`devel` is no release's version".into()
            ))
        );
        assert_eq!(
            decide(Known::Unknown("timed out"), None, None),
            unchanged(Why::UnknownVersion("timed out".into()))
        );
        assert_eq!(
            decide(new, Some("HYPER_API_KEY"), None),
            unchanged(Why::HyperKey("HYPER_API_KEY".into()))
        );
        // A held refresh is never Crush's to fetch.
        let hyper = crate::catalog::Target::Hyper;
        assert_eq!(
            decide(new, Some("HYPER_API_KEY"), Some(hyper)),
            HandOver::HeldOff(hyper)
        );
        assert_eq!(decide(new, None, Some(hyper)), HandOver::UpdatesOff);
        assert_eq!(
            decide(Known::Version("v0.90.0"), Some("k"), Some(hyper)),
            unchanged(Why::OldCrush("v0.90.0".into()))
        );
    }

    fn with_refresh(outcome: RefreshOutcome, cause: Option<&str>, held: &[&str]) -> CacheState {
        CacheState {
            refresh: Some(RefreshRecord {
                at: 1,
                url: "https://c.example/v2/providers".into(),
                outcome,
                cause: cause.map(str::to_owned),
                told: false,
                held: (!held.is_empty()).then(|| Held {
                    changes: held.iter().map(|s| s.to_string()).collect(),
                    ..Held::default()
                }),
            }),
            ..CacheState::default()
        }
    }

    #[test]
    fn a_start_tells_of_a_held_or_failed_refresh_in_one_line() {
        assert_eq!(notice(None, "crush"), None);
        let quiet = with_refresh(RefreshOutcome::Unchanged, None, &[]);
        assert_eq!(notice(Some(&quiet), "crush"), None);
        let held = with_refresh(RefreshOutcome::Held, None, &["key moves", "shrank"]);
        let told = notice(Some(&held), "crush").unwrap();
        assert_eq!(
            told.text,
            "review it with `crush providers --status`: a refresh of the provider catalog was held, the catalog in use is kept: key moves (and 1 more)"
        );
        let failed = with_refresh(RefreshOutcome::Failed, Some("refused"), &[]);
        let told_failed = notice(Some(&failed), "crush").unwrap();
        assert!(told_failed.text.ends_with(": refused"), "{told_failed:?}");
        assert_ne!(told.key, told_failed.key);
        let other = with_refresh(RefreshOutcome::Failed, Some("timed out"), &[]);
        assert_ne!(notice(Some(&other), "crush").unwrap().key, told_failed.key);
    }

    /// What was told is remembered in the front's memo: its key stays
    /// small however much a held refresh found.
    #[test]
    fn the_key_of_a_notice_is_small_whatever_it_tells() {
        let many: Vec<String> = (0..10_000)
            .map(|n| format!("provider \"p{n}\" would send $K to https://x{n}.example:443"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let held = with_refresh(RefreshOutcome::Held, None, &many);
        let told = notice(Some(&held), "crush").unwrap();
        assert!(told.key.len() <= 64, "{} bytes", told.key.len());
        let fewer = with_refresh(RefreshOutcome::Held, None, &many[1..]);
        assert_ne!(notice(Some(&fewer), "crush").unwrap().key, told.key);
    }
}
