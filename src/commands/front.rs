//! The front carried out ([`crate::front`]), as rustup's proxies hand a
//! command to a toolchain: before the command line is parsed, a command
//! that is Crush's goes to the real Crush. Find it, review what another
//! program wrote into the cache ([`foreign::settle`]), run the start-up
//! policy ([`startup::keep_fresh`]: nothing within the refresh interval,
//! else the refresh in the detached helper; nothing waits on the
//! network), set the variables (the failing `CATWALK_URL`, the marker,
//! Crush's updates off where that costs nothing), and start it. A start
//! within the interval reads no catalog: the settings, the states that
//! vouch for the documents, and the memo of Crush's version.
//!
//! On Unix Crush replaces this process (`exec`): the same process id,
//! terminal, signals and exit status. On Windows it is started and waited
//! for; Ctrl-C, which the console sends to both, is left to Crush, and this
//! process exits with Crush's code.
//!
//! A failure of the front itself (a config it cannot read, a data folder it
//! cannot write) is one line on stderr, and Crush starts all the same, on
//! the cache as it is, with the failing `CATWALK_URL`.

use std::ffi::OsString;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{self, Command};
use std::time::Duration;

use serde_json::Value;

use super::context::{pinned_keys, read_settings};
use super::{program, terminal};
use crate::catalog::Target;
use crate::catalog::escape::safe;
use crate::catalog::target::DEFAULT_HYPER_URL;
use crate::config::{self, DISABLE_AUTO_UPDATE_ENV, Settings};
use crate::environment;
// The user's own variables (no `.env`) choose the program a start runs:
// the real Crush, the global config that may name it, the marker.
use crate::fetch::credential::users_env;
use crate::front::find::{self, Crush, MARKER_ENV, Marker, Missing};
use crate::front::version::{self, Answer, MEMO_FILE, Memo};
use crate::front::{self, FAILING_CATWALK_URL, Updates, Word};
use crate::startup::{self, Background, StartupOptions};
use crate::store::cache::{self, Bytes, CacheFiles, Found};
use crate::store::digest::{hex, sha256};
use crate::store::file::io_words;
use crate::store::paths;
use crate::trust::foreign;

/// The exit code for "no Crush to run", as a shell says "command not
/// found".
const NOT_FOUND: u8 = 127;
/// The variable Crush asks for its catalog.
const CATWALK_URL: &str = "CATWALK_URL";
/// The variable that names Hyper's server, where Crush sends the Hyper key.
const HYPER_URL: &str = "HYPER_URL";

/// Reads the user's own `CATWALK_URL` in place of the one a front handed
/// a Crush that started this process ([`FAILING_CATWALK_URL`]): kept in
/// the front's marker (unset, without one). Before anything reads the
/// environment: `crush update-providers` run by one of Crush's tools
/// fetches from the user's URL, and never reads the front's as a SOURCE.
pub(super) fn restore_catwalk_url() {
    if std::env::var_os(CATWALK_URL).is_some_and(|v| v == FAILING_CATWALK_URL) {
        let marker = users_env(MARKER_ENV).and_then(|v| Marker::parse(&v));
        environment::restore(CATWALK_URL, marker.and_then(|m| m.catwalk_url));
    }
}

/// Runs the front for this invocation (`name`: how it was invoked).
/// `Some(code)` when it answered, `None` when the command line is this
/// program's to parse. Only a program invoked as `crush` stands in front:
/// installed under another name, it is only itself.
pub(super) fn main(name: &str) -> Option<u8> {
    if !stands_in_front(name) {
        return None;
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let parsed = front::classify(args.get(1..).unwrap_or_default());
    if parsed.word == Word::Own {
        return None;
    }
    let (me, next, crush) = match found() {
        Ok(found) => found,
        // Without Crush, or not knowing itself (so not telling Crush from
        // itself), this program's own commands of before the front.
        Err(Missing::NotOnPath | Missing::NoSelf(_)) if parsed.word != Word::Crush => {
            return None;
        }
        // Without Crush, a slip of one of this program's commands is
        // told as one (`update-provider`: did you mean ...?).
        Err(Missing::NotOnPath) if super::slip(name, &args) => return Some(2),
        // Why, and how a person names it.
        Err(missing) => {
            let config = paths::config_dir(&users_env)
                .map(|d| d.join("crush.json").display().to_string())
                .unwrap_or_else(|_| "the global crush.json".into());
            line(&format!(
                "no Crush to run: {missing}; install Crush, or name it: {}=/path/to/crush, or \"options\": {{\"{}\": \"/path/to/crush\"}} in {config}",
                find::REAL_CRUSH_ENV,
                find::REAL_CRUSH_KEY,
            ));
            return Some(NOT_FOUND);
        }
    };
    let path = &crush.identity.path;
    let mut command = Command::new(path);
    command
        .args(args.get(1..).unwrap_or_default())
        .env(MARKER_ENV, next.encode())
        .env(CATWALK_URL, FAILING_CATWALK_URL);
    // Crush reads no catalog to answer `--version` or `--help`: nothing to
    // review, refresh or learn (a wrapper asked for its version by a start
    // does not start another probe).
    if parsed.word == Word::Info {
        return Some(start(command, args.first(), path));
    }
    let settings = settings(&parsed);
    let (files, found) = match review(&settings) {
        Ok(reviewed) => reviewed,
        Err(why) => {
            line(&why);
            return Some(1);
        }
    };
    let prepared = settings.and_then(|s| prepare(&crush, &s, &files, found, &me, &next));
    let off = prepared.unwrap_or_else(|failure| {
        notice(&failure, "; no refresh this time");
        false
    });
    // What a project's `.env` must not choose for Crush (godotenv never
    // overrides a variable that is set), where one may be loaded: the
    // folder reviewed here, and where the Hyper key goes. The folder too
    // where the user's own spelling of it reads another after `-c` or by
    // Go's cleaning (relative, or a `..`); elsewhere Crush, and what it
    // runs, get the environment as it was.
    let dotenv = std::fs::symlink_metadata(environment::FILE_NAME);
    let no_dotenv = dotenv.is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let spelt = paths::data_dir_on(paths::Platform::current(), &users_env);
    if !no_dotenv || spelt.ok().as_ref() != Some(&files.dir) {
        command.env("XDG_DATA_HOME", files.dir.parent().unwrap_or(&files.dir));
    }
    if users_env(HYPER_URL).is_none() && !no_dotenv {
        command.env(HYPER_URL, DEFAULT_HYPER_URL);
    }
    if off {
        command.env(DISABLE_AUTO_UPDATE_ENV, "1");
    }
    Some(start(command, args.first(), path))
}

/// The settings as Crush reads them: its `-c` (from the working folder as
/// Go names it) and `-D`, and the `.env` this process loaded.
fn settings(parsed: &front::Parsed) -> Result<Settings, String> {
    let cwd = parsed.cwd.as_deref();
    let folder = config::files::working_folder(cwd).map_err(|e| match cwd {
        Some(cwd) => format!("--cwd {}: {e}", cwd.display()),
        None => format!("cannot read the working folder: {e}"),
    })?;
    read_settings(&folder, parsed.data_dir.as_deref(), false).map_err(|e| e.to_string())
}

/// The cache files Crush will read, by the user's own environment, and
/// what they hold of the catalog and of Hyper's provider, reviewed where
/// no state vouches for it ([`foreign::settle`]; keys pinned by settings
/// that cannot be read count as pinned); one that cannot be reviewed now is
/// put aside, else removed (Crush then uses its own embedded document), and
/// said. `Err`, why Crush must not start: there is no data folder to
/// review, one other users may write (whatever is reviewed now, another
/// user can replace before Crush reads it), or a document none of that
/// could be done to.
fn review(settings: &Result<Settings, String>) -> Result<(CacheFiles, [Found; 2]), String> {
    let data = paths::data_dir(&users_env).map_err(|e| {
        format!("{e}, and Crush would read a cache nobody reviewed: set HOME or XDG_DATA_HOME")
    })?;
    let files = CacheFiles::in_dir(&data);
    cache::check_folder(&files)
        .map_err(|e| format!("{e}, and Crush would read its catalog there: {}", e.fix()))?;
    // Pinned unless the settings were read and pin none.
    let pinned = || !matches!(settings.as_ref().map(pinned_keys), Ok(Ok(None)));
    let review = |target| {
        let files = files.with_target(target);
        let found = cache::read(&files, Bytes::Peek);
        if foreign::settled(&files, &found) {
            return Ok(found);
        }
        let why = match foreign::settle(&files, pinned(), Duration::ZERO) {
            Ok(settled) if settled.readable() => return Ok(cache::read(&files, Bytes::Peek)),
            Ok(_) => foreign::unreviewed(&files),
            Err(e) => e.to_string(),
        };
        let path = files.catalog.display();
        let done = if std::fs::rename(&files.catalog, &files.foreign).is_ok() {
            format!("put aside as {}", files.foreign.display())
        } else if let Err(e) = std::fs::remove_file(&files.catalog) {
            return Err(format!(
                "{path} cannot be reviewed ({why}), nor put aside, nor removed ({e}), and Crush would read it unreviewed: remove it yourself"
            ));
        } else {
            "removed, so that Crush uses its own embedded one".into()
        };
        notice(&format!("{path} cannot be reviewed ({why}): {done}"), "");
        Ok(cache::read(&files, Bytes::Peek))
    };
    let found = [review(Target::Catalog)?, review(Target::Hyper)?];
    Ok((files, found))
}

/// Whether this invocation stands in front of Crush: invoked as `crush`.
fn stands_in_front(name: &str) -> bool {
    name == "crush" || (cfg!(windows) && name.eq_ignore_ascii_case("crush"))
}

/// This program, the marker it hands on after the one in its environment
/// ([`Marker::next`]), and the real Crush.
fn found() -> Result<(PathBuf, Marker, Crush), Missing> {
    let me = std::env::current_exe().map_err(|e| Missing::NoSelf(e.to_string()))?;
    let handed = users_env(MARKER_ENV).and_then(|v| Marker::parse(&v));
    let url = environment::process_var(CATWALK_URL);
    let next = handed.unwrap_or_default().next(&me, process::id(), url);
    let next = next.ok_or(Missing::Loop)?;
    let crush = find::find(&users_env, &next.fronts)?;
    Ok((me, next, crush))
}

/// What a start does before Crush runs, on what it `found` of each
/// document: the start-up policy, with its refresh in a detached helper
/// (this program, `me`); the version learnt when it matters (remembered,
/// or asked now with the next marker, so that a copy of this program found
/// as Crush goes on to the Crush after it, which answers); whether Crush's
/// updates go off. What a person must hear is told, one line each, once
/// per change.
fn prepare(
    crush: &Crush,
    settings: &Settings,
    files: &CacheFiles,
    found: [Found; 2],
    me: &Path,
    next: &Marker,
) -> Result<bool, String> {
    let data = &files.dir;
    std::fs::create_dir_all(data).map_err(|e| {
        format!(
            "cannot use the data folder {}: {}",
            data.display(),
            io_words(&e)
        )
    })?;
    let mut prepared = StartupOptions::from_settings(settings, files);
    // Crush fetches Hyper's provider itself, with the key, while its
    // updates are on; what it writes is reviewed at the next start.
    prepared.options.hyper = None;
    prepared.options.background = Background::Process(me.to_path_buf());
    let told = startup::keep_fresh(files, &prepared.options, found);
    let memo_path = data.join(MEMO_FILE);
    let mut memo = Memo::read(&memo_path);
    let read = memo.clone();
    let mut notices = Vec::new();
    let off = updates(settings, || {
        if let Some(answer) = memo.get(&crush.identity) {
            return Some(answer);
        }
        let mut command = Command::new(&crush.identity.path);
        command.arg("--version").env(MARKER_ENV, next.encode());
        let answer = version::probe(command, version::PROBE_TIMEOUT);
        if let Answer::Problem(problem) = &answer {
            notices.push(format!(
                "the version of {} is not known ({problem}), so it starts with its own updates as you set them",
                crush.identity.path.display()
            ));
        }
        memo.remember(crush.identity.clone(), answer.clone());
        Some(answer)
    })
    .off();
    let warnings = prepared.warnings.iter().chain(&told);
    notices.extend(warnings.map(|warning| warning.brief()));
    // Said once per change: the memo keeps the digest of what was said
    // (a project's value, quoted in a warning, may be long).
    let told = (!notices.is_empty()).then(|| hex(&sha256(notices.join("\n").as_bytes())));
    if memo.told != told {
        let status = format!(" ({} providers --status)", program());
        for text in &notices {
            notice(text, &status);
        }
    }
    memo.told = told;
    // The refresh is under way and the decision made: a memo that cannot
    // be written only means asking and telling again at the next start.
    if memo != read
        && let Err(e) = memo.write(&memo_path)
    {
        notice(&format!("cannot write {}: {e}", memo_path.display()), "");
    }
    Ok(off)
}

/// What a start with `settings` does with Crush's updates
/// ([`front::updates`]): `answer`, its version, is asked for only while
/// every reading of the settings leaves them on.
fn updates(settings: &Settings, answer: impl FnOnce() -> Option<Answer>) -> Updates {
    let on = settings.auto_update.value && settings.default_providers.value;
    let hyper_key = settings.hyper_key.as_ref().map(|k| k.origin.as_str());
    front::updates(on, on.then(answer).flatten().as_ref(), hyper_key)
}

/// Starts Crush: on Unix in place of this process, with the argv[0] this
/// process was given; elsewhere waited for, leaving Ctrl-C to it (while
/// this process listens for Ctrl-C and Ctrl-Break, they no longer end it,
/// and Crush, on the same console, gets them as it would), exiting with
/// its code. Returns only on failure.
fn start(mut command: Command, arg0: Option<&OsString>, path: &Path) -> u8 {
    #[cfg(unix)]
    let e = {
        use std::os::unix::process::CommandExt;
        if let Some(arg0) = arg0 {
            command.arg0(arg0);
        }
        // The standard library restores the default SIGPIPE action and an
        // empty signal mask for the new program, as a shell starts it.
        command.exec()
    };
    #[cfg(not(unix))]
    let e = {
        let _ = arg0;
        #[cfg(windows)]
        let _listening = (
            tokio::signal::windows::ctrl_c(),
            tokio::signal::windows::ctrl_break(),
        );
        match command.status() {
            Ok(status) => process::exit(status.code().unwrap_or(1)),
            Err(e) => e,
        }
    };
    let name = format!(
        "name a Crush this system can run: {}=/path/to/crush",
        find::REAL_CRUSH_ENV
    );
    let (why, next) = match e.kind() {
        // The file was there a moment ago: what is missing is what runs it.
        ErrorKind::NotFound => (
            "it, or the interpreter its first line names, does not exist".into(),
            name,
        ),
        ErrorKind::ExecutableFileBusy => (io_words(&e), "try again once it is written".into()),
        _ => (io_words(&e), name),
    };
    line(&format!(
        "cannot start Crush ({}): {why}; {next}",
        path.display()
    ));
    match e.kind() {
        ErrorKind::NotFound => NOT_FOUND,
        _ => 126,
    }
}

/// An error on stderr, wrapped at a terminal's width as every error is,
/// its line breaks escaped too: what a catalog, a server or a folder's
/// name said cannot forge a line.
fn line(text: &str) {
    super::output::say(super::output::Said::Error, format_args!("{}", safe(text)));
}

/// `warning: ` and `text`, escaped, in one line on stderr just before
/// Crush takes the screen, `end` (where a person reads more) last: cut to
/// the terminal's width, never wrapped, so that it takes one row, the end
/// always shown.
fn notice(text: &str, end: &str) {
    let width = terminal::stderr_width().map_or(usize::MAX, |width| {
        width.saturating_sub(end.chars().count())
    });
    let text = terminal::shorten(&safe(&format!("warning: {text}")), width);
    let _ = writeln!(std::io::stderr().lock(), "{text}{end}");
}

/// What `providers --status` shows of a start with `settings`, as far as
/// is known without running Crush (its version only when a start has
/// learnt it, in the memo beside the cache `files`): as JSON, and as the
/// status table's row (which escapes it: a path or a reason may hold
/// anything a folder's name may). `None` when this program does not stand
/// in front of Crush.
pub(super) fn status(settings: &Settings, files: &CacheFiles) -> Option<(Value, String)> {
    if !stands_in_front(program()) {
        return None;
    }
    let crush = found().map(|(_, _, crush)| crush);
    let memo = Memo::read(&files.dir.join(MEMO_FILE));
    let learnt = crush.as_ref().ok().and_then(|c| memo.get(&c.identity));
    let version = match &learnt {
        Some(Answer::Version(version)) => Some(version.clone()),
        _ => None,
    };
    let (updates, reason, row) = match &crush {
        Err(missing) => (
            "none",
            missing.to_string(),
            format!("none found ({missing}): this program's own commands only"),
        ),
        Ok(crush) => {
            let updates = updates(settings, || learnt);
            let row = format!(
                "{} ({}, from {}): started with CATWALK_URL={FAILING_CATWALK_URL} (it reads only the cache reviewed here) and {updates}",
                crush.identity.path.display(),
                version.as_deref().unwrap_or("version not learnt"),
                crush.origin,
            );
            let state = match updates {
                Updates::NotLearnt => "not_learnt",
                _ if updates.off() => "updates_off",
                _ => "as_set",
            };
            (state, updates.to_string(), row)
        }
    };
    let crush = crush.ok();
    let json = serde_json::json!({
        "path": crush.as_ref().map(|c| c.identity.path.display().to_string()),
        "found_by": crush.map(|c| c.origin),
        "version": version,
        "catwalk_url": FAILING_CATWALK_URL,
        "updates": updates,
        "reason": reason,
    });
    Some((json, row))
}
