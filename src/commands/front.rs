//! The front carried out ([`crate::front`]): before the command line is
//! parsed, a command that is Crush's goes to the real Crush. First what
//! another program wrote into the cache is reviewed and, if held, the last
//! reviewed document put back ([`crate::trust::foreign`]); then the
//! start-up refresh runs when it is due, in the detached helper (nothing
//! waits on the network); then Crush starts with the failing
//! `CATWALK_URL`, the marker, and its updates off where that costs nothing.
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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::context::{pinned_keys, read_settings};
use super::{program, terminal, told};
use crate::catalog::Target;
use crate::config::{self, DISABLE_AUTO_UPDATE_ENV, Settings};
use crate::environment;
use crate::front::find::{self, Chain, Crush, MARKER_ENV, Marker, Missing, REAL_CRUSH_ENV};
use crate::front::version::{self, Answer, Identity, Learnt, MEMO_FILE, Memo};
use crate::front::{self, FAILING_CATWALK_URL, Updates, Word};
use crate::startup::{self, refresh};
use crate::store::cache::{self, CacheFiles};
use crate::store::paths::{self, process_env};
use crate::store::state::{self, CacheState};
use crate::trust::foreign;

/// The exit code for "no Crush to run", as a shell says "command not
/// found".
const NOT_FOUND: u8 = 127;
/// The variable Crush asks for its catalog.
const CATWALK_URL: &str = "CATWALK_URL";

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
    let (fronts, depth) = match this_chain() {
        Ok(Chain::Search { fronts, depth }) => (fronts, depth),
        // Asked by a front for Crush's version: this is no Crush.
        Ok(Chain::Probe) => {
            let _ = writeln!(std::io::stdout().lock(), "{}", version::FRONT_REPLY);
            return Some(NOT_FOUND);
        }
        Ok(Chain::Wrapper(chosen)) => {
            let chosen = chosen.display();
            return Some(no_crush(&format!(
                "{chosen} starts this program again instead of Crush (a wrapper that finds `crush` on PATH)"
            )));
        }
        Ok(Chain::Deep(depth)) => {
            return Some(no_crush(&format!(
                "{depth} starts of Crush nested in one another: a loop, Crush as found starting this program again"
            )));
        }
        // Not knowing itself, it cannot tell Crush from itself: only its
        // own commands.
        Err(_) if parsed.word == Word::Shared => return None,
        Err(why) => return Some(no_crush(&format!("no Crush is started: {why}"))),
    };
    let crush = match find::find(&users_env, &fronts) {
        Ok(crush) => crush,
        // Without Crush, this program's own commands of before the front.
        Err(Missing::NotOnPath) if parsed.word == Word::Shared => return None,
        Err(missing) => return Some(no_crush(&format!("no Crush to run: {missing}"))),
    };
    let next = Marker {
        depth: depth + 1,
        pid: std::process::id(),
        probe: false,
        chosen: crush.canonical.clone(),
        fronts,
        catwalk_url: environment::process_var(CATWALK_URL),
    };
    Some(hand_over(&args, &parsed, &crush, next))
}

/// Whether this invocation stands in front of Crush: invoked as `crush`.
fn stands_in_front(name: &str) -> bool {
    if cfg!(windows) {
        name.eq_ignore_ascii_case("crush")
    } else {
        name == "crush"
    }
}

/// The process's own variables, without the `.env` of the folder it
/// starts in: what chooses the program a start runs (the real Crush, the
/// global config that may name it, the marker) is the user's, and a
/// project's file must not choose it. The settings, which Crush reads
/// with that file, are read with [`process_env`].
fn users_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The chain this start is in, from the marker in its environment.
fn this_chain() -> Result<Chain, String> {
    let me = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot tell where this program is ({e})"))?;
    let marker = users_env(MARKER_ENV).and_then(|v| Marker::parse(&v));
    Ok(find::chain(marker.as_ref(), &me, std::process::id()))
}

/// Says that no Crush runs, why, and how a person names it; exit 127.
fn no_crush(why: &str) -> u8 {
    let config = paths::config_dir(&users_env)
        .map(|d| d.join("crush.json").display().to_string())
        .unwrap_or_else(|_| "the global crush.json".into());
    line(&format!(
        "error: {why}; install Crush, or name it: {REAL_CRUSH_ENV}=/path/to/crush, or \"options\": {{\"{}\": \"/path/to/crush\"}} in {config}",
        config::front::REAL_CRUSH_KEY,
    ));
    NOT_FOUND
}

/// Prepares the start, tells what a person must hear, and starts Crush.
/// Returns only when Crush could not be started, or has ended (Windows).
fn hand_over(args: &[OsString], parsed: &front::Parsed, crush: &Crush, next: Marker) -> u8 {
    let updates = match prepare(crush, parsed, &next) {
        Ok((updates, notices)) => {
            for text in notices {
                notice(&format!("warning: {text}"));
            }
            Some(updates)
        }
        Err(failure) => {
            notice(&format!(
                "warning: {failure}; Crush starts on the cache as it is, with its own updates as you set them"
            ));
            None
        }
    };
    let mut command = Command::new(&crush.path);
    command
        .args(args.get(1..).unwrap_or_default())
        .env(MARKER_ENV, next.encode())
        .env(CATWALK_URL, FAILING_CATWALK_URL);
    if let Some(Updates::Off(_)) = updates {
        command.env(DISABLE_AUTO_UPDATE_ENV, "1");
    }
    start(command, args.first(), &crush.path)
}

/// What the start does before Crush runs: what another program wrote
/// reviewed, the version learnt, the refresh started when it is due;
/// whether Crush's updates go off, and what to tell.
fn prepare(
    crush: &Crush,
    parsed: &front::Parsed,
    next: &Marker,
) -> Result<(Updates, Vec<String>), String> {
    let settings = settings(parsed)?;
    let data = paths::data_dir(&process_env).map_err(|e| e.to_string())?;
    let mut notices = Vec::new();
    // A key that cannot be read pins one all the same: what comes without
    // a signature is held.
    let keys = pinned_keys(&settings).map_err(|failure| {
        notices.push(told(&startup::Warning::BadKey { failure }));
    });
    let catalog = CacheFiles::in_dir(&data);
    let states = [Target::Catalog, Target::Hyper].map(|target| {
        let files = catalog.with_target(target);
        reviewed(&files, !matches!(keys, Ok(None)));
        (target, current_state(&files))
    });
    let memo_path = data.join(MEMO_FILE);
    let mut memo = Memo::read(&memo_path);
    let on = settings.auto_update.value && settings.default_providers.value;
    let updates = match on {
        false => Updates::Off(front::Off::Settings),
        true => {
            let answer = learn(crush, &mut memo, next, &mut notices)?;
            let hyper = config::front::hyper_key_in(&settings, &process_env).map(|k| k.origin);
            front::updates(&answer, hyper.as_deref(), on)
        }
    };
    if let (true, Ok(keys)) = (on, keys) {
        refresh_if_due(states[0].1.as_ref(), &catalog, keys, &mut notices)?;
    }
    let states = states
        .each_ref()
        .map(|(target, state)| (*target, state.as_ref()));
    if let Some(n) = front::notices(&states, program()) {
        if memo.told.as_deref() != Some(n.key.as_str()) {
            notices.push(n.text);
            memo.told = Some(n.key);
        }
    } else {
        memo.told = None;
    }
    memo.write(&memo_path)
        .map_err(|e| format!("cannot write {}: {e}", memo_path.display()))?;
    Ok((updates, notices))
}

/// The settings as Crush reads them: its `-c` (from the working folder as
/// Go names it) and `-D`, and the `.env` this process loaded.
fn settings(parsed: &front::Parsed) -> Result<Settings, String> {
    let cwd = parsed.cwd.as_ref().map(PathBuf::from);
    let folder = config::files::working_folder(cwd.as_deref()).map_err(|e| e.to_string())?;
    let data_dir = parsed.data_dir.as_ref().map(PathBuf::from);
    read_settings(&folder, data_dir.as_deref(), |_| false).map_err(|e| e.to_string())
}

/// Reviews what another program wrote into `files` before Crush reads it;
/// one that cannot be reviewed is put aside (Crush then uses its own
/// embedded document), which a rename does even on a full disk.
fn reviewed(files: &CacheFiles, pinned: bool) {
    let settled = foreign::settle(files, pinned, std::time::Duration::ZERO);
    if !settled.is_ok_and(|settled| settled.readable()) {
        let _ = std::fs::rename(&files.catalog, &files.foreign);
    }
}

/// The state of `files`' document, without reading the document when the
/// state vouches for it; a missing Hyper document's own.
fn current_state(files: &CacheFiles) -> Option<CacheState> {
    cache::vouched_state(files).or_else(|| match cache::read_valid(files) {
        Ok(Some(cached)) => cached.state,
        _ => cache::absent_state(files),
    })
}

/// What `crush --version` answers: remembered, or learnt now (and
/// remembered) by asking with a probe's marker.
fn learn(
    crush: &Crush,
    memo: &mut Memo,
    next: &Marker,
    notices: &mut Vec<String>,
) -> Result<Answer, String> {
    let identity = Identity::of(&crush.canonical)
        .map_err(|e| format!("cannot read {}: {e}", crush.canonical.display()))?;
    if let Some(learnt) = memo.get(&identity) {
        return Ok(learnt.answer.clone());
    }
    let probe = Marker {
        probe: true,
        ..next.clone()
    };
    let mut command = Command::new(&crush.path);
    command.arg("--version").env(MARKER_ENV, probe.encode());
    let answer = version::probe(command, version::PROBE_TIMEOUT);
    if let Answer::Problem(problem) = &answer {
        notices.push(format!(
            "the version of {} is not known ({problem}), so it starts with its own updates as you set them",
            crush.path.display()
        ));
    }
    memo.remember(Learnt {
        identity,
        answer: answer.clone(),
    });
    Ok(answer)
}

/// Starts the background refresh of the catalog when one is due by its
/// `state`. A `CATWALK_URL` that is not an http(s) URL makes no request,
/// and is told at every start (in `notices`).
fn refresh_if_due(
    state: Option<&CacheState>,
    files: &CacheFiles,
    keys: Option<crate::trust::signature::TrustedKeys>,
    notices: &mut Vec<String>,
) -> Result<(), String> {
    // Bad values are warned of by `providers`; a start uses the defaults.
    let env = startup::options_from_env(
        |name| process_env(name).map(|v| v.to_string_lossy().into_owned()),
        &mut Vec::new(),
    );
    let url = match env.url {
        Ok(url) => url,
        Err(value) => {
            notices.push(told(&startup::Warning::NotHttp { value }));
            return Ok(());
        }
    };
    if refresh::is_confirmed(state, env.interval, state::now()) {
        return Ok(());
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot start the background refresh: {e}"))?;
    let request = refresh::Request {
        url,
        timeout: env.timeout,
        interval: env.interval,
        keys,
        watch: Default::default(),
        bearer: None,
    };
    let job = refresh::Job {
        files,
        request: &request,
        known: None,
    };
    refresh::spawn_helper(&exe, &[job]).map_err(|e| {
        format!(
            "cannot start the background refresh ({}): {e}",
            exe.display()
        )
    })
}

/// Starts Crush: on Unix in place of this process, with the argv[0] this
/// process was given.
#[cfg(unix)]
fn start(mut command: Command, arg0: Option<&OsString>, path: &Path) -> u8 {
    use std::os::unix::process::CommandExt;
    if let Some(arg0) = arg0 {
        command.arg0(arg0);
    }
    // Returns only on failure. The standard library restores the default
    // SIGPIPE action and an empty signal mask for the new program, as a
    // shell starts it.
    let e = command.exec();
    line(&format!(
        "error: cannot start Crush ({}): {e}",
        path.display()
    ));
    if e.kind() == std::io::ErrorKind::NotFound {
        NOT_FOUND
    } else {
        126
    }
}

/// Starts Crush and waits for it, leaving Ctrl-C to it: while this process
/// listens for Ctrl-C and Ctrl-Break, they no longer end it, and Crush,
/// on the same console, gets them as it would. Exits with Crush's code.
#[cfg(not(unix))]
fn start(mut command: Command, _arg0: Option<&OsString>, path: &Path) -> u8 {
    #[cfg(windows)]
    let _listening = (
        tokio::signal::windows::ctrl_c(),
        tokio::signal::windows::ctrl_break(),
    );
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => {
            line(&format!(
                "error: cannot start Crush ({}): {e}",
                path.display()
            ));
            NOT_FOUND
        }
    }
}

/// One line on stderr, whole (a terminal folds it).
fn line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", plain(text));
}

/// Lines on stderr just before Crush takes the screen: each cut to the
/// terminal's width, never wrapped, so that each takes one row.
fn notice(text: &str) {
    let text = plain_lines(text);
    let width = terminal::stderr_width();
    let mut err = std::io::stderr().lock();
    for line in text.lines() {
        let line = match width {
            Some(width) => terminal::shorten(line, width),
            None => line.to_owned(),
        };
        let _ = writeln!(err, "{line}");
    }
}

/// `text` as it may be printed ([`crate::catalog::escape::safe`]): what a
/// catalog, a server or a folder's name said cannot move the cursor, forge
/// a line, or read otherwise than it is stored.
fn plain(text: &str) -> String {
    crate::catalog::escape::safe(text).into_owned()
}

/// The same, line by line: the line breaks between notices stay.
fn plain_lines(text: &str) -> String {
    text.split('\n').map(plain).collect::<Vec<_>>().join("\n")
}

/// How a start hands Crush over, for `providers --status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Handed {
    /// With its own updates off.
    UpdatesOff,
    /// With its own updates as the user set them.
    AsSet,
    /// Not known until a start learns its version.
    NotLearnt,
    /// No Crush is found.
    None,
}

/// What `providers --status` shows of the front.
#[derive(Debug, Serialize)]
pub(super) struct Status {
    /// The real Crush, when one is found.
    pub path: Option<String>,
    /// Where it was named (`PATH`, the variable, the config file).
    pub found_by: Option<String>,
    /// Its version, when learnt.
    pub version: Option<String>,
    /// The `CATWALK_URL` it is started with.
    pub catwalk_url: &'static str,
    /// Its own updates.
    pub updates: Handed,
    /// Why, in words.
    pub reason: String,
}

impl Status {
    /// The status row's text: escaped, since a path or a reason may hold
    /// anything a folder's name may.
    pub(super) fn describe(&self) -> String {
        let Some(crush) = &self.path else {
            return plain(&format!(
                "none found ({}): this program's own commands only",
                self.reason
            ));
        };
        let version = self.version.as_deref().unwrap_or("version not learnt");
        let found_by = self.found_by.as_deref().unwrap_or("PATH");
        plain(&format!(
            "{crush} ({version}, from {found_by}): started with CATWALK_URL={} (it reads only the cache reviewed here) and {}",
            self.catwalk_url, self.reason
        ))
    }
}

/// What a start with `settings` would do with the real Crush, as far as
/// is known without running it (the version only when a start has learnt
/// it); `None` when this program does not stand in front of Crush.
pub(super) fn status(settings: &Settings) -> Option<Status> {
    if !stands_in_front(program()) {
        return None;
    }
    let fronts = match this_chain() {
        Ok(Chain::Search { fronts, .. }) => fronts,
        _ => Vec::new(),
    };
    let mut status = Status {
        path: None,
        found_by: None,
        version: None,
        catwalk_url: FAILING_CATWALK_URL,
        updates: Handed::None,
        reason: String::new(),
    };
    let crush = match find::find(&users_env, &fronts) {
        Ok(crush) => crush,
        Err(missing) => {
            status.reason = missing.to_string();
            return Some(status);
        }
    };
    status.path = Some(crush.path.display().to_string());
    status.found_by = Some(crush.origin.to_string());
    let learnt = paths::data_dir(&process_env).ok().and_then(|data| {
        let identity = Identity::of(&crush.canonical).ok()?;
        Memo::read(&data.join(MEMO_FILE)).get(&identity).cloned()
    });
    if let Some(Answer::Version(v)) = learnt.as_ref().map(|l| &l.answer) {
        status.version = Some(v.clone());
    }
    let on = settings.auto_update.value && settings.default_providers.value;
    let updates = match (on, learnt) {
        (false, _) => Updates::Off(front::Off::Settings),
        (true, None) => {
            status.updates = Handed::NotLearnt;
            status.reason =
                "its own updates as you set them until a start learns its version".into();
            return Some(status);
        }
        (true, Some(learnt)) => {
            let hyper = config::front::hyper_key_in(settings, &process_env).map(|k| k.origin);
            front::updates(&learnt.answer, hyper.as_deref(), on)
        }
    };
    status.updates = match updates {
        Updates::Off(_) => Handed::UpdatesOff,
        Updates::AsSet(_) => Handed::AsSet,
    };
    status.reason = updates.to_string();
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(plain("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
        assert_eq!(plain("plain — text"), "plain — text");
        assert_eq!(plain_lines("a\u{1b}\nb"), "a\\u{1b}\nb");
    }

    /// What reads otherwise than it is stored is escaped too: a folder
    /// named `\u{202e}` shows `evil` as `live`.
    #[test]
    fn bidirectional_and_invisible_characters_are_escaped() {
        assert_eq!(
            plain("a\u{202e}b\u{200b}c\u{2028}d\u{feff}\u{9b}e"),
            "a\\u{202e}b\\u{200b}c\\u{2028}d\\u{feff}\\u{9b}e"
        );
    }
}
