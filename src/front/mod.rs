//! Standing in front of a real Crush, as rustup's `cargo` stands in front
//! of the toolchain's: installed as `crush` ahead of Crush on `PATH`, this
//! program answers the commands that are its own and hands every other
//! one to Crush, after the start-up refresh that never waits and never
//! moves a key.
//!
//! It controls what Crush reads rather than predicting how Crush reads its
//! configuration: every Crush is started with a `CATWALK_URL` that fails
//! before any request ([`FAILING_CATWALK_URL`]), so that whatever it
//! decides about its updates, it keeps the cache this program reviewed
//! (Crush v0.90's `catwalkSync.Get` keeps the cache on any error of its
//! request, writes nothing and tells nothing). Its own updates go off
//! only to spare its requests, where that costs nothing ([`updates`]).
//!
//! The decisions are pure functions returning enums: which program a
//! command line is for ([`classify`]), whether Crush's updates go off
//! ([`updates`]), whether a chain of starts is a loop
//! ([`find::Marker::next`]); finding the real Crush ([`find`])
//! and learning its version ([`version`]) are the look-ups around them.
//! The command layer ([`crate::commands`]) carries them out: it prints, it
//! starts Crush, it exits.

pub(crate) mod find;
pub(crate) mod version;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::startup::refresh::HELPER_COMMAND;

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
const SHARED_COMMANDS: [&str; 3] = ["models", "dirs", "completion"];

/// Crush's global flags that take a value (`-c DIR`, `--cwd=DIR`): the
/// word after one is no command. `--channels` has no short form (0).
const VALUE_FLAGS: [(u8, &[u8]); 5] = [
    (b'c', b"cwd"),
    (b'D', b"data-dir"),
    (b'H', b"host"),
    (b's', b"session"),
    (0, b"channels"),
];

/// Whose command a command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word {
    /// Only this program's: answered here, whatever else is installed.
    Own,
    /// Crush's, or this program's when no Crush is found: `models`,
    /// `dirs`, `completion`.
    Shared,
    /// As shared, and reading no catalog: `help`, `--help`, `--version`.
    Info,
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
    pub cwd: Option<PathBuf>,
    /// `-D`/`--data-dir`, the folder of its workspace config.
    pub data_dir: Option<PathBuf>,
}

/// Reads the arguments (without the program's name) as Crush's command
/// line parser (pflag) would find its command: the first word that is
/// neither a flag nor a flag's value, before any `--`. Bool flags may be
/// grouped (`-dc DIR`), and the first flag of a group that takes a value
/// takes the rest of it (`-cDIR`, `-c=DIR`) or the next argument. Flags
/// are ASCII: an argument is read as bytes, and a value keeps every byte
/// of its folder's name.
pub(crate) fn classify(args: &[OsString]) -> Parsed {
    let (mut cwd, mut data_dir) = (None, None);
    let mut words: Vec<&str> = Vec::new();
    let mut info = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let bytes = arg.as_encoded_bytes();
        // The flag that takes a value, and where its value starts when it
        // is inline.
        let (flag, at) = if bytes == b"--" {
            break;
        } else if let Some(long) = bytes.strip_prefix(b"--") {
            let equals = long.iter().position(|&b| b == b'=');
            let name = &long[..equals.unwrap_or(long.len())];
            // `--help=false` may say no: the safe side is Crush's start.
            info |= words.is_empty() && equals.is_none() && matches!(name, b"help" | b"version");
            let Some((short, _)) = VALUE_FLAGS.iter().find(|(_, l)| *l == name) else {
                continue;
            };
            (*short, equals.map(|at| at + 3))
        } else if let Some(shorts) = bytes.strip_prefix(b"-").filter(|s| !s.is_empty()) {
            let value_flag = |b: &u8| *b != 0 && VALUE_FLAGS.iter().any(|(s, _)| s == b);
            // The bool flags of the group: those before a flag that takes
            // the rest as its value (`-c/home/me`), and none given a value
            // (`-h=false` may say no: the safe side is Crush's start).
            let stop = shorts.iter().position(|b| *b == b'=' || value_flag(b));
            let bools = &shorts[..stop.unwrap_or(shorts.len())];
            let valued = stop.is_some_and(|at| shorts[at] == b'=');
            info |= words.is_empty() && !valued && bools.iter().any(|b| b"hvV".contains(b));
            let Some(flag) = shorts.iter().position(value_flag) else {
                continue;
            };
            // `-cDIR`, `-c=DIR` (`-c=`: an empty one), or none.
            let end = flag + 2;
            let at = end + usize::from(bytes.get(end) == Some(&b'='));
            (shorts[flag], (end < bytes.len()).then_some(at))
        } else {
            // A word that is not UTF-8 is no command of this program's.
            words.push(arg.to_str().unwrap_or("\u{fffd}"));
            continue;
        };
        let value = match at {
            Some(at) => Some(PathBuf::from(crate::environment::os_string(&bytes[at..]))),
            None => rest.next().map(PathBuf::from),
        };
        match flag {
            b'c' => cwd = value.or(cwd),
            b'D' => data_dir = value.or(data_dir),
            _ => {}
        }
    }
    let word = match words.as_slice() {
        [word, ..] if OWN_COMMANDS.contains(word) => Word::Own,
        // `crush help providers`: this program's help for its command.
        ["help", word, ..] if OWN_COMMANDS.contains(word) => Word::Own,
        [word, ..] if SHARED_COMMANDS.contains(word) => Word::Shared,
        ["help", ..] => Word::Info,
        [] if info => Word::Info,
        _ => Word::Crush,
    };
    Parsed {
        word,
        cwd,
        data_dir,
    }
}

/// The `CATWALK_URL` every Crush is started with: not an http(s) URL, so
/// that Go's client refuses its catalog request at once (`unsupported
/// protocol scheme`), with no network, and Crush keeps the cache. Read as
/// a file (Crush's own `update-providers` reads a SOURCE that is no URL as
/// one) it is none: under `/dev/null` on Unix, and with a `|`, which no
/// Windows file name holds. This program reads the user's own value from
/// the marker in its place.
pub(crate) const FAILING_CATWALK_URL: &str = "/dev/null/crush-providers|reviewed-cache";

/// What a start does with Crush's own automatic updates, and why (its
/// text: `providers --status` says it): off with
/// `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1`, else the user's own setting
/// passes through. Safety does not depend on it (the failing `CATWALK_URL`
/// does that), but speed does, and so does a start of the oldest releases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Updates {
    /// Off: a reading of the settings turned them off.
    #[error("its own updates off: you turned provider-auto-update or default-providers off")]
    TurnedOff,
    /// Off: a release before v0.26.0 (its version).
    #[error("its own updates off: Crush {0} would not start without its catalog request")]
    TooOld(String),
    /// Off: a release from v0.91.0 on, no Hyper key.
    #[error("its own updates off: it reads the cache then, and asks nothing at all")]
    ReadsCache,
    /// As set: no start has learnt its version yet.
    #[error("its own updates as you set them until a start learns its version")]
    NotLearnt,
    /// As set: the version is not known (why).
    #[error("its own updates as you set them: its version is not known ({0})")]
    Unknown(String),
    /// As set: a release from v0.91.0 on with a Hyper key (where it is set).
    #[error(
        "its own updates as you set them: a Hyper key is set ({0}), and Crush fetches Hyper's provider with it while they are on"
    )]
    HyperKey(String),
    /// As set: a release that uses its embedded catalog while they are off.
    #[error(
        "its own updates as you set them: Crush {0} uses its embedded catalog while they are off (only releases from v0.91.0 read the cache then)"
    )]
    Embedded(String),
}

impl Updates {
    /// Whether Crush is started with its updates off.
    pub(crate) fn off(&self) -> bool {
        matches!(self, Self::TurnedOff | Self::TooOld(_) | Self::ReadsCache)
    }
}

/// What a start does with Crush's updates: off where any reading of the
/// settings turned them off (`on`: every reading says on), for a release
/// from v0.91.0 on (which reads the cache while they are off) with no
/// Hyper key (`hyper_key`: where one is set), and for one before v0.26.0
/// (which would refuse to start once its catalog request fails); else as
/// set. `answer` is what its `--version` told, `None` while no start has
/// learnt it.
pub(crate) fn updates(
    on: bool,
    answer: Option<&version::Answer>,
    hyper_key: Option<&str>,
) -> Updates {
    let version = match answer {
        _ if !on => return Updates::TurnedOff,
        None => return Updates::NotLearnt,
        Some(version::Answer::Problem(why)) => return Updates::Unknown(why.clone()),
        Some(version::Answer::Version(version)) => version.clone(),
    };
    match (version::release(&version), hyper_key) {
        (None, _) => Updates::Unknown(format!("`{version}` is no release's version")),
        (Some((numbers, _)), _) if numbers < (0, 26, 0) => Updates::TooOld(version),
        // A pre-release of v0.91.0 is built from code before PR #3693.
        (Some((numbers, false)), None) if numbers >= (0, 91, 0) => Updates::ReadsCache,
        (Some((numbers, false)), Some(origin)) if numbers >= (0, 91, 0) => {
            Updates::HyperKey(origin.to_owned())
        }
        (Some(_), _) => Updates::Embedded(version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for shared in [&["models"][..], &["dirs"], &["completion", "bash"]] {
            assert_eq!(parse(shared).word, Word::Shared, "{shared:?}");
        }
        for info in [
            &["--help"][..],
            &["-h"],
            &["--version"],
            &["-v"],
            &["-d", "--version"],
            &["-dv"],
            &["-yh"],
            &["-hc", "/x"],
            &["help"],
            &["help", "run"],
        ] {
            assert_eq!(parse(info).word, Word::Info, "{info:?}");
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
            // Letters in a flag's value, and a help or version flag given
            // a value, are no help (Crush starts its interface).
            &["-c/home/me/proj"],
            &["-dc/srv/app"],
            &["-ch"],
            &["-Dvendor/data"],
            &["-Hhttp://x"],
            &["-sabc-v"],
            &["--help=false"],
            &["--version=false"],
            &["-h=false"],
            &["-v=0"],
            &["-dh=false"],
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
            assert_eq!(parse(args).cwd, Some(PathBuf::from(cwd)), "{args:?}");
        }
        assert_eq!(parse(&["-D", "/x", "run"]).cwd, None);
        assert_eq!(
            parse(&["-D", "/x", "run"]).data_dir,
            Some(PathBuf::from("/x"))
        );
        assert_eq!(
            parse(&["run", "--data-dir=/y"]).data_dir,
            Some(PathBuf::from("/y"))
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
                parsed.cwd.as_deref().map(|p| p.as_os_str().as_bytes()),
                Some(&dir[..]),
                "{arg:?}"
            );
        }
        let parsed = classify(&[OsString::from("-c"), OsString::from_vec(dir.to_vec())]);
        assert_eq!(
            parsed.cwd.as_deref().map(|p| p.as_os_str().as_bytes()),
            Some(&dir[..])
        );
        for prefix in [&b"--data-dir="[..], b"-D", b"-dD"] {
            let arg = OsString::from_vec([prefix, &dir[..]].concat());
            let parsed = classify(&[arg.clone(), OsString::from("run")]);
            assert_eq!(
                parsed.data_dir.as_deref().map(|p| p.as_os_str().as_bytes()),
                Some(&dir[..]),
                "{arg:?}"
            );
        }
    }

    /// Whether a start turns the updates of Crush of `version` off, and
    /// the end of why.
    fn updates_on(version: &str, hyper_key: Option<&str>) -> (bool, String) {
        let answer = version::Answer::Version(version.into());
        let updates = updates(true, Some(&answer), hyper_key);
        let why = updates.to_string().split_once(": ").unwrap().1.to_owned();
        (updates.off(), why)
    }

    #[test]
    fn updates_go_off_only_where_that_costs_nothing() {
        use version::Answer;
        // Turned off by any reading, Crush asks nothing either.
        let by_settings = Updates::TurnedOff;
        let v91 = Answer::Version("v0.91.0".into());
        assert_eq!(
            updates(false, Some(&v91), Some("HYPER_API_KEY")),
            by_settings
        );
        assert_eq!(updates(false, None, None), by_settings);
        assert_eq!(updates(true, None, None), Updates::NotLearnt);
        let reads_cache = "it reads the cache then, and asks nothing at all";
        for version in ["v0.91.0", "0.91.0", "v1.0.0", "v0.91.0+dirty", "0.92.3"] {
            assert_eq!(
                updates_on(version, None),
                (true, reads_cache.into()),
                "{version}"
            );
        }
        // v0.26.0 to v0.90.x, and pre-releases (a Go pseudo-version is the
        // build of a commit: a pre-release of its core version).
        for version in [
            "v0.26.0",
            "v0.90.0",
            "0.90.0",
            "0.90.1",
            "0.91.0-nightly",
            "v0.91.0-rc.1",
            "v0.91.1-0.20260101120000-0123456789ab",
        ] {
            let (off, why) = updates_on(version, None);
            assert!(!off, "{version}");
            assert!(
                why.starts_with(&format!("Crush {version} uses its embedded catalog")),
                "{why}"
            );
        }
        for version in ["devel", "unknown", "v0.91", "v0.91.0.1"] {
            assert_eq!(
                updates_on(version, None),
                (
                    false,
                    format!("its version is not known (`{version}` is no release's version)")
                )
            );
        }
        let (off, why) = updates_on("v0.91.0", Some("HYPER_API_KEY"));
        assert!(!off);
        assert!(
            why.starts_with("a Hyper key is set (HYPER_API_KEY)"),
            "{why}"
        );
        // The oldest would not start once their request fails.
        for old in ["v0.8.0", "v0.20.0", "v0.22.2", "v0.25.1", "v0.13.0-beta.1"] {
            assert_eq!(
                updates_on(old, Some("HYPER_API_KEY")),
                (
                    true,
                    format!("Crush {old} would not start without its catalog request")
                )
            );
        }
        let timed_out = Answer::Problem("timed out".into());
        let unknown = updates(true, Some(&timed_out), None);
        assert!(!unknown.off());
        assert_eq!(
            unknown.to_string(),
            "its own updates as you set them: its version is not known (timed out)"
        );
    }
}
