//! The front carried out ([`crate::front`]): before the command line is
//! parsed, a command that is Crush's goes to the real Crush, after the
//! start-up refresh, with its automatic updates off when it reads the
//! cache then. Nothing waits on the network: a refresh that is due runs in
//! the detached helper, as for `crush providers`.
//!
//! On Unix Crush replaces this process (`exec`): the same process id,
//! terminal, signals and exit status. On Windows it is started and waited
//! for; Ctrl-C, which the console sends to both, is left to Crush, and this
//! process exits with Crush's code. Its standard streams, working folder
//! and environment are this process's, but for the marker
//! ([`find::MARKER_ENV`]) and `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1`.
//!
//! A failure of the front itself (a config it cannot read, a broken cache,
//! a data folder it cannot write) is one line on stderr, and Crush starts
//! as it would without the front.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::context::{canonical_folder, pinned_keys};
use super::program;
use super::{terminal, told};
use crate::catalog::Target;
use crate::config::{self, DISABLE_AUTO_UPDATE_ENV, Settings};
use crate::front::find::{self, Chain, Crush, MARKER_ENV, Marker, Missing, REAL_CRUSH_ENV};
use crate::front::version::{self, Identity, Learnt, MEMO_FILE, Memo};
use crate::front::{self, HandOver, Known, Word};
use crate::startup::{self, refresh};
use crate::store::cache::{self, CacheFiles};
use crate::store::paths::{self, process_env};
use crate::store::state::{self, CacheState, RefreshOutcome};

/// The exit code for "no Crush to run", as a shell says "command not
/// found".
const NOT_FOUND: u8 = 127;

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
            line(&format!(
                "error: {} starts this program again instead of Crush (a wrapper that finds `crush` on PATH); {}",
                chosen.display(),
                how_to_name()
            ));
            return Some(NOT_FOUND);
        }
        Ok(Chain::Deep(depth)) => {
            line(&format!(
                "error: {depth} starts of Crush nested in one another: a loop, Crush as found starting this program again; {}",
                how_to_name()
            ));
            return Some(NOT_FOUND);
        }
        // Not knowing itself, it cannot tell Crush from itself: only its
        // own commands.
        Err(_) if parsed.word == Word::Shared => return None,
        Err(why) => {
            line(&format!(
                "error: no Crush is started: {why}; {}",
                how_to_name()
            ));
            return Some(NOT_FOUND);
        }
    };
    let crush = match find::find(&users_env, &fronts) {
        Ok(crush) => crush,
        // Without Crush, this program's own commands of before the front.
        Err(Missing::NotOnPath) if parsed.word == Word::Shared => return None,
        Err(missing) => {
            line(&format!(
                "error: no Crush to run: {missing}; {}",
                how_to_name()
            ));
            return Some(NOT_FOUND);
        }
    };
    let next = Marker {
        depth: depth + 1,
        pid: std::process::id(),
        probe: false,
        chosen: crush.canonical.clone(),
        fronts,
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

/// How a person names the real Crush.
fn how_to_name() -> String {
    format!(
        "install Crush, or name it: {REAL_CRUSH_ENV}=/path/to/crush, or \"options\": {{\"{}\": \"/path/to/crush\"}} in {}",
        config::front::REAL_CRUSH_KEY,
        paths::config_dir(&users_env)
            .map(|d| d.join("crush.json").display().to_string())
            .unwrap_or_else(|_| "the global crush.json".into())
    )
}

/// Prepares the start, tells what a person must hear, and starts Crush.
/// Returns only when Crush could not be started, or has ended (Windows).
fn hand_over(args: &[OsString], parsed: &front::Parsed, crush: &Crush, next: Marker) -> u8 {
    let probe = Marker {
        probe: true,
        ..next.clone()
    };
    let updates_off = match prepare(crush, parsed, &probe) {
        Ok((plan, notices)) => {
            for text in notices {
                notice(&format!("warning: {text}"));
            }
            plan.updates_off()
        }
        Err(failure) => {
            notice(&format!(
                "warning: {failure}; Crush starts as it would without this front"
            ));
            false
        }
    };
    let mut command = Command::new(&crush.path);
    command
        .args(args.get(1..).unwrap_or_default())
        .env(MARKER_ENV, next.encode());
    if updates_off {
        command.env(DISABLE_AUTO_UPDATE_ENV, "1");
    }
    start(command, args.first(), &crush.path)
}

/// What the start does before Crush runs: the settings, the version, the
/// refresh when it is due; how to hand over, and what to tell.
fn prepare(
    crush: &Crush,
    parsed: &front::Parsed,
    probe: &Marker,
) -> Result<(HandOver, Vec<String>), String> {
    let cwd = project_dir(parsed.cwd.clone())?;
    // As Crush reads them: its `-D`, and the `.env` this process loaded.
    let data_dir = parsed.data_dir.as_ref().map(PathBuf::from);
    let source = |name: &str| match crate::environment::source(name) {
        Some(crate::environment::Source::DotEnv(path, line)) => Some((path, line)),
        _ => None,
    };
    let inputs = config::Inputs {
        cwd: &cwd,
        env: &process_env,
        env_source: &source,
        data_dir: data_dir.as_deref(),
    };
    let settings = config::resolve_in(&inputs, |_| false).map_err(|e| e.to_string())?;
    if let Some(why) =
        front::by_settings(settings.auto_update.value, settings.default_providers.value)
    {
        return Ok((HandOver::Unchanged(why), Vec::new()));
    }
    let data = paths::data_dir(&process_env).map_err(|e| e.to_string())?;
    let memo_path = data.join(MEMO_FILE);
    let mut memo = Memo::read(&memo_path);
    let mut notices = Vec::new();
    let learnt = learn(crush, &mut memo, &memo_path, probe, &mut notices)?;
    // From the files the settings were read from, `-D`'s workspace file
    // among them, as `providers --status` reads it.
    let hyper = config::front::hyper_key_in(&settings, &process_env).map(|k| k.origin);
    let held = hyper.as_ref().and_then(|_| held(&data));
    let plan = front::decide(known(&learnt), hyper.as_deref(), held);
    if !plan.updates_off() {
        return Ok((plan, notices));
    }
    if let HandOver::HeldOff(Target::Hyper) = plan {
        notices.push(front::held_off_notice(Target::Hyper, program()));
    }
    let state = refresh_if_due(&settings, &data, &mut notices)?;
    notices.extend(tell(state.as_ref(), &mut memo, &memo_path));
    Ok((plan, notices))
}

/// The document of `data` whose last refresh was held and is not
/// settled (the catalog first), if any.
fn held(data: &Path) -> Option<Target> {
    let catalog = CacheFiles::in_dir(data);
    [Target::Catalog, Target::Hyper]
        .into_iter()
        .find(|&target| {
            let files = catalog.with_target(target);
            let state = match cache::vouched_state(&files) {
                Some(state) => Some(state),
                None => match cache::read_valid(&files) {
                    Ok(Some(cached)) => cached.state,
                    _ => cache::absent_state(&files),
                },
            };
            state.and_then(|s| s.refresh).is_some_and(|r| {
                r.outcome == RefreshOutcome::Held && r.held.is_some_and(|h| !h.kept)
            })
        })
}

/// The folder Crush reads its project settings from: `-c` (relative to
/// the working folder), else the working folder.
fn project_dir(cwd: Option<OsString>) -> Result<PathBuf, String> {
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the working folder: {e}"))?;
    let dir = cwd.map_or_else(|| here.clone(), |c| here.join(c));
    // A folder that does not exist is Crush's to report.
    Ok(canonical_folder(&dir).unwrap_or(dir))
}

/// The version of `crush`: remembered, or learnt now (and remembered).
fn learn(
    crush: &Crush,
    memo: &mut Memo,
    memo_path: &Path,
    probe: &Marker,
    notices: &mut Vec<String>,
) -> Result<Learnt, String> {
    let identity = Identity::of(&crush.canonical)
        .map_err(|e| format!("cannot read {}: {e}", crush.canonical.display()))?;
    if let Some(learnt) = memo.get(&identity) {
        return Ok(learnt.clone());
    }
    let mut command = Command::new(&crush.path);
    command.arg("--version").env(MARKER_ENV, probe.encode());
    let answer = version::probe(command, version::PROBE_TIMEOUT);
    // A front further on PATH needs no word: it goes on to Crush.
    if let Err(problem) = &answer
        && problem != version::IS_A_FRONT
    {
        notices.push(format!(
            "the version of {} is not known ({problem}), so it fetches the catalog itself",
            crush.path.display()
        ));
    }
    let learnt = Learnt {
        identity,
        version: answer.as_ref().ok().cloned(),
        problem: answer.err(),
    };
    memo.remember(learnt.clone());
    memo.write(memo_path)
        .map_err(|e| format!("cannot write {}: {e}", memo_path.display()))?;
    Ok(learnt)
}

fn known(learnt: &Learnt) -> Known<'_> {
    match (&learnt.version, learnt.problem.as_deref()) {
        (Some(v), _) => Known::Version(v),
        (None, Some(version::IS_A_FRONT)) => Known::Front,
        (None, problem) => Known::Unknown(problem.unwrap_or("no version recorded")),
    }
}

/// Starts the background refresh when one is due, and returns the cache's
/// state. The state file tells whether one is due without reading the
/// catalog, when it vouches for it; otherwise (no cache, or one another
/// program wrote) the cache is read as start-up reads it.
/// A `CATWALK_URL` that is not an http(s) URL makes no request, and is
/// told at every start (in `notices`).
fn refresh_if_due(
    settings: &Settings,
    data: &Path,
    notices: &mut Vec<String>,
) -> Result<Option<CacheState>, String> {
    let files = CacheFiles::in_dir(data);
    // Bad values are warned of by `providers`; a start uses the defaults.
    let env = startup::options_from_env(
        |name| process_env(name).map(|v| v.to_string_lossy().into_owned()),
        &mut Vec::new(),
    );
    let keys =
        pinned_keys(settings).map_err(|failure| told(&startup::Warning::BadKey { failure }))?;
    let state = match cache::vouched_state(&files) {
        Some(state) => Some(state),
        None => cache::read_valid(&files)?.and_then(|c| c.state),
    };
    let url = match env.url {
        Ok(url) => url,
        Err(value) => {
            notices.push(told(&startup::Warning::NotHttp { value }));
            return Ok(state);
        }
    };
    if !refresh::is_confirmed(state.as_ref(), env.interval, state::now()) {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot start the background refresh: {e}"))?;
        let request = refresh::Request {
            url,
            timeout: env.timeout,
            interval: env.interval,
            keys,
            watch: Default::default(),
            bearer: None,
        };
        let job = refresh::Job {
            files: &files,
            request: &request,
            known: None,
        };
        refresh::spawn_helper(&exe, &[job]).map_err(|e| {
            format!(
                "cannot start the background refresh ({}): {e}",
                exe.display()
            )
        })?;
    }
    Ok(state)
}

/// The notice of a held or failed refresh, once per change: the memo
/// records the last one told.
fn tell(state: Option<&CacheState>, memo: &mut Memo, memo_path: &Path) -> Option<String> {
    match front::notice(state, program()) {
        Some(n) if memo.told.as_deref() == Some(n.key.as_str()) => None,
        Some(n) => {
            memo.told = Some(n.key);
            // Best effort: unsaved, it is told once more.
            let _ = memo.write(memo_path);
            Some(n.text)
        }
        None => {
            if memo.told.take().is_some() {
                let _ = memo.write(memo_path);
            }
            None
        }
    }
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

/// One line on stderr just before Crush takes the screen: cut to the
/// terminal's width, never wrapped, so that it takes one row.
fn notice(text: &str) {
    let text = plain(text);
    let text = match terminal::stderr_width() {
        Some(width) => terminal::shorten(&text, width),
        None => text,
    };
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `text` as it may be printed ([`catalog::escape::safe`]): what a
/// catalog, a server or a folder's name said cannot move the cursor, forge
/// a line, or read otherwise than it is stored.
fn plain(text: &str) -> String {
    crate::catalog::escape::safe(text).into_owned()
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
    /// `updates_off`, `unchanged`, `not_learnt` (its version is learnt at
    /// the next start), or `none` (no Crush).
    pub hand_over: &'static str,
    /// Why, in words.
    pub reason: String,
}

impl Status {
    /// The status row's text: escaped, since a path or a reason may hold
    /// anything a folder's name may.
    pub(super) fn describe(&self) -> String {
        plain(&self.text())
    }

    fn text(&self) -> String {
        let Some(crush) = &self.path else {
            return format!(
                "none found ({}): this program's own commands only",
                self.reason
            );
        };
        let version = self.version.as_deref().unwrap_or("version not learnt");
        let found_by = self.found_by.as_deref().unwrap_or("PATH");
        match self.hand_over {
            "updates_off" if !self.reason.is_empty() => format!(
                "{crush} ({version}, from {found_by}): started with its automatic updates off, reading this cache: {}",
                self.reason
            ),
            "updates_off" => format!(
                "{crush} ({version}, from {found_by}): started with its automatic updates off, reading this cache"
            ),
            "not_learnt" => format!("{crush} (from {found_by}): {}", self.reason),
            _ => format!(
                "{crush} ({version}, from {found_by}): started unchanged: {}",
                self.reason
            ),
        }
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
    let crush = match find::find(&users_env, &fronts) {
        Ok(crush) => crush,
        Err(missing) => {
            return Some(Status {
                path: None,
                found_by: None,
                version: None,
                hand_over: "none",
                reason: missing.to_string(),
            });
        }
    };
    let learnt = paths::data_dir(&process_env).ok().and_then(|data| {
        let identity = Identity::of(&crush.canonical).ok()?;
        Memo::read(&data.join(MEMO_FILE)).get(&identity).cloned()
    });
    let plan = match (
        front::by_settings(settings.auto_update.value, settings.default_providers.value),
        &learnt,
    ) {
        (Some(why), _) => Some(HandOver::Unchanged(why)),
        (None, None) => None,
        (None, Some(learnt)) => {
            let hyper = config::front::hyper_key_in(settings, &process_env).map(|k| k.origin);
            let data = hyper.as_ref().and(paths::data_dir(&process_env).ok());
            Some(front::decide(
                known(learnt),
                hyper.as_deref(),
                data.and_then(|data| held(&data)),
            ))
        }
    };
    let (hand_over, reason) = match &plan {
        Some(HandOver::UpdatesOff) => ("updates_off", String::new()),
        Some(HandOver::HeldOff(target)) => ("updates_off", front::held_off_reason(*target)),
        Some(HandOver::Unchanged(why)) => ("unchanged", why.explain()),
        None => (
            "not_learnt",
            "its version is learnt at the next start (once)".to_string(),
        ),
    };
    Some(Status {
        path: Some(crush.path.display().to_string()),
        found_by: Some(crush.origin.to_string()),
        version: learnt.and_then(|l| l.version),
        hand_over,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(plain("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
        assert_eq!(plain("plain — text"), "plain — text");
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
