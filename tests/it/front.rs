//! In front of a real Crush: the binary, installed as `crush` in a folder
//! ahead of a stand-in Crush on a PATH of the test's own, answers its own
//! commands and hands every other one over. The stand-in is a shell script
//! that records its arguments, environment, working folder, process id and
//! whether its input is a terminal, then exits with the code it is told or
//! dies by the signal it is told. A temporary HOME; the background refresh
//! only ever reaches loopback.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::symlink;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::terminal::{shown, terminal};
use wiremock::ResponseTemplate;

/// The variable the front sets to turn Crush's own updates off.
pub(crate) const UPDATES_OFF: &str = "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE";
/// The marker every hand-over sets.
pub(crate) const MARKER: &str = "CRUSH_PROVIDER_FRONT";
/// The `CATWALK_URL` the front hands Crush: no http(s) URL, so Crush's
/// catalog request fails at once without one.
pub(crate) const SENTINEL: &str = "/dev/null/crush-providers|reviewed-cache";

/// The stand-in Crush. `@VERSION@` is what it does for `--version`.
const STAND_IN: &str = r#"#!/bin/sh
# A stand-in Crush: records how it was started, then ends as told.
[ -d "$STANDIN_LOG" ] || exit 99
n=0
while ! command -p mkdir "$STANDIN_LOG/$n" 2>/dev/null; do n=$((n + 1)); done
d="$STANDIN_LOG/$n"
for a in "$@"; do printf '%s\0' "$a"; done > "$d/args"
command -p env -0 > "$d/env"
pwd -P > "$d/cwd"
if [ -t 0 ]; then echo yes > "$d/tty"; else echo no > "$d/tty"; fi
echo $$ > "$d/pid"
if [ "$1" = --version ]; then
  @VERSION@
  exit 0
fi
if [ -n "$STANDIN_SIGNAL" ]; then kill -s "$STANDIN_SIGNAL" $$; fi
exit "${STANDIN_EXIT:-0}"
"#;

/// How one start of the stand-in was started.
#[derive(Debug)]
pub(crate) struct Started {
    args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    cwd: PathBuf,
    tty: bool,
    pid: u32,
}

impl Started {
    /// A version probe: `crush --version`, which the front asks once.
    fn probe(&self) -> bool {
        self.args == ["--version"]
    }
}

/// A HOME, a folder holding this binary as `crush` (the front), a folder
/// holding the stand-in, and the PATH of both, in that order.
pub(crate) struct Front {
    pub(crate) home: Home,
    pub(crate) root: tempfile::TempDir,
    pub(crate) path: Vec<PathBuf>,
    pub(crate) env: Vec<(String, OsString)>,
}

impl Front {
    /// The front ahead of a stand-in answering `--version` with `version`;
    /// the cache holds the embedded catalog, just confirmed, so no start
    /// needs a refresh unless a test asks for one.
    pub(crate) fn new(version: &str) -> Front {
        let front = Front::without_cache(version);
        front.own(&["update-providers", "embedded", "-q"]).ok();
        front
    }

    /// The same without a cache.
    fn without_cache(version: &str) -> Front {
        let front = Front::without_crush();
        front.install_crush(&format!("echo 'crush version {version}'"));
        front
    }

    /// The front alone on PATH.
    fn without_crush() -> Front {
        let root = tempfile::tempdir().unwrap();
        for dir in ["front", "crush", "log"] {
            fs::create_dir(root.path().join(dir)).unwrap();
        }
        symlink(env!("CARGO_BIN_EXE_crush"), root.path().join("front/crush")).unwrap();
        let path = vec![root.path().join("front"), root.path().join("crush")];
        Front {
            home: Home::new(),
            env: vec![
                ("STANDIN_LOG".into(), root.path().join("log").into()),
                // A refresh, should one be due, reaches nothing.
                ("CATWALK_URL".into(), closed_port_url().into()),
            ],
            root,
            path,
        }
    }

    /// Writes the stand-in into the Crush folder, `for_version` being what
    /// it runs for `--version`.
    fn install_crush(&self, for_version: &str) -> PathBuf {
        let file = self.root.path().join("crush/crush");
        write_program(&file, &STAND_IN.replace("@VERSION@", for_version));
        file
    }

    pub(crate) fn set(&mut self, name: &str, value: impl Into<OsString>) {
        self.env.push((name.into(), value.into()));
    }

    /// A command for `program` with only the test's environment, and
    /// Ctrl-C and Ctrl-\\ at their default action, as a shell starts a
    /// program in the foreground: a suite started in the background by a
    /// script (`cargo test &`, nohup) inherits them ignored, and a stand-in
    /// could not die by SIGINT.
    pub(crate) fn command_for(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", std::env::join_paths(&self.path).unwrap())
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        // SAFETY: only signal(), async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `crush ARGS`, as a person types it: the first `crush` on PATH.
    pub(crate) fn crush(&self, args: &[&str]) -> Command {
        let first = self
            .path
            .iter()
            .map(|d| d.join("crush"))
            .find(|p| p.exists())
            .unwrap();
        self.command_for(&first, args)
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(self.crush(args).output().unwrap())
    }

    /// `crush ARGS`, or `None` when it has not ended within `limit` (it is
    /// then killed): for a start that must not hang.
    fn run_within(&self, args: &[&str], limit: Duration) -> Option<Run> {
        let mut child = self
            .crush(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + limit;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Run::from(child.wait_with_output().unwrap()))
    }

    /// Runs one of the front's own commands, asserting the stand-in did
    /// not start.
    pub(crate) fn own(&self, args: &[&str]) -> Run {
        let before = self.started().len();
        let run = self.run(args);
        assert_eq!(self.started().len(), before, "{args:?} went to Crush");
        run
    }

    /// Every start of the stand-in so far, in order.
    fn started(&self) -> Vec<Started> {
        let log = self.root.path().join("log");
        (0..)
            .map(|n| log.join(n.to_string()))
            .take_while(|d| d.join("pid").exists())
            .map(|d| {
                // An argument need not be UTF-8.
                let read = |name: &str| {
                    String::from_utf8_lossy(&fs::read(d.join(name)).unwrap()).into_owned()
                };
                // NUL-terminated words; an empty one is a word too.
                let split = |text: String| -> Vec<String> {
                    let mut words: Vec<String> = text.split('\0').map(str::to_owned).collect();
                    words.pop();
                    words
                };
                Started {
                    args: split(read("args")),
                    env: split(read("env"))
                        .into_iter()
                        .filter_map(|kv| {
                            kv.split_once('=')
                                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        })
                        .collect(),
                    cwd: read("cwd").trim_end().into(),
                    tty: read("tty").trim_end() == "yes",
                    pid: read("pid").trim_end().parse().unwrap(),
                }
            })
            .collect()
    }

    /// The starts of the stand-in that were not version probes.
    pub(crate) fn runs(&self) -> Vec<Started> {
        self.started().into_iter().filter(|s| !s.probe()).collect()
    }

    fn probes(&self) -> usize {
        self.started().iter().filter(|s| s.probe()).count()
    }

    /// Runs `crush ARGS`, which must reach the stand-in; returns the run
    /// and how the stand-in was started.
    #[track_caller]
    pub(crate) fn handed_over(&self, args: &[&str]) -> (Run, Started) {
        self.handed_over_in(self.home.path(), args)
    }

    /// The same, started in `folder` (whose `.env` Crush loads).
    #[track_caller]
    pub(crate) fn handed_over_in(&self, folder: &Path, args: &[&str]) -> (Run, Started) {
        let before = self.started().len();
        let run = Run::from(self.crush(args).current_dir(folder).output().unwrap());
        // The run is the last start: any other is a version probe before it.
        let mut new = self.started().split_off(before);
        let started = new
            .pop()
            .unwrap_or_else(|| panic!("{args:?} did not reach Crush: {run:?}"));
        assert!(new.iter().all(Started::probe), "{args:?}: {new:?}");
        assert_eq!(started.args, args, "{run:?}");
        (run, started)
    }
}

/// Every command of Crush's goes to it with its arguments unchanged; the
/// front's own commands stay here, `update-providers` included.
#[test]
fn every_command_of_crush_goes_to_it_and_the_fronts_own_stay_here() {
    let front = Front::new("v0.91.0");
    let project = front.home.path().join("proj");
    fs::create_dir(&project).unwrap();
    let project = project.to_str().unwrap();
    for args in [
        &[][..],
        &["run", "Guess my 5 favorite Pokémon"],
        &["run", "a  b", "", "-v"],
        &["login", "hyper"],
        &["logs"],
        &["models"],
        &["dirs"],
        &["completion", "bash"],
        &["--yolo"],
        &["-d", "-c", project],
        &["--cwd", project, "run", "x"],
        &["session", "list"],
        &["update-provider"],
    ] {
        let (run, started) = front.handed_over(args);
        run.ok();
        assert_eq!(started.env.get(UPDATES_OFF).map(String::as_str), Some("1"));
    }
    // A flag's value holding h or v, and a help flag given a value, are
    // starts of Crush's interface: reviewed and prepared as any other.
    let hv = front.home.path().join("hv");
    fs::create_dir(&hv).unwrap();
    let glued = format!("-c{}", hv.display());
    for args in [&[glued.as_str()][..], &["--help=false"], &["-h=false"]] {
        let (run, started) = front.handed_over(args);
        run.ok();
        assert_eq!(
            started.env.get(UPDATES_OFF).map(String::as_str),
            Some("1"),
            "{args:?}"
        );
    }
    // Crush reads no catalog to answer these: handed over as they are,
    // with the failing URL, nothing learnt or refreshed first.
    for args in [&["--help"][..], &["-h"], &["--version"], &["-v"], &["help"]] {
        let (run, started) = front.handed_over(args);
        run.ok();
        assert_eq!(started.env["CATWALK_URL"], SENTINEL, "{args:?}");
        assert!(started.env.contains_key(MARKER), "{args:?}");
    }
    let run = front.own(&["update-providers", "embedded"]);
    run.ok();
    assert!(run.stdout.contains("Already up to date"), "{run:?}");
    let status = front.own(&["providers", "--status"]);
    status.ok();
    assert!(
        words(&status.stdout).contains(
            "started with CATWALK_URL=/dev/null/crush-providers|reviewed-cache (it reads only the cache reviewed here) and its own updates off"
        ),
        "{status:?}"
    );
    let models = front.own(&["provider-models", "--json"]);
    assert!(models.ok().json().as_array().unwrap().len() > 100);
    let dirs = front.own(&["provider-dirs"]);
    assert!(dirs.ok().stdout.starts_with("config: "), "{dirs:?}");
    let help = front.own(&["help", "providers"]);
    assert!(help.ok().stdout.contains("--status"), "{help:?}");
    front.own(&["update-providers", "--help"]).ok();
}

/// Crush runs in this very process (exec), on the same terminal, in the
/// same folder, with the same environment but the marker, the failing
/// `CATWALK_URL` and the variable that turns its updates off; its exit
/// code and its death by a signal are the start's.
#[test]
fn crush_is_handed_over_faithfully() {
    let mut front = Front::new("v0.91.0");
    front.set("SOME_SETTING", "kept as is");
    let folder = front.home.path().join("work dir");
    fs::create_dir(&folder).unwrap();
    let child = front
        .crush(&["run", "x"])
        .current_dir(&folder)
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(child.wait_with_output().unwrap().status.success());
    let via_front = front.runs().pop().unwrap();
    assert_eq!(via_front.pid, pid, "the same process");
    assert_eq!(via_front.cwd, folder.canonicalize().unwrap());
    assert!(!via_front.tty);
    // The same stand-in started directly, with the same environment.
    let stand_in = front.root.path().join("crush/crush");
    let direct = front
        .command_for(&stand_in, &["run", "x"])
        .current_dir(&folder)
        .status()
        .unwrap();
    assert!(direct.success());
    let direct = front.runs().pop().unwrap();
    let mut added: Vec<&String> = via_front
        .env
        .keys()
        .filter(|k| direct.env.get(*k) != via_front.env.get(*k))
        .collect();
    added.sort();
    assert_eq!(added, ["CATWALK_URL", UPDATES_OFF, MARKER]);
    assert_eq!(via_front.env["CATWALK_URL"], SENTINEL);
    assert!(direct.env.keys().all(|k| via_front.env.contains_key(k)));
    assert_eq!(via_front.env["SOME_SETTING"], "kept as is");

    let (tty, _master) = terminal();
    let run = front
        .crush(&["run", "y"])
        .stdin(Stdio::from(tty))
        .output()
        .unwrap();
    assert!(run.status.success());
    assert!(front.runs().pop().unwrap().tty, "stdin is the terminal");

    for code in ["3", "127", "255"] {
        let status = front
            .crush(&["run"])
            .env("STANDIN_EXIT", code)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(code.parse().unwrap()));
    }
    for (signal, number) in [("TERM", 15), ("KILL", 9), ("INT", 2)] {
        let status = front
            .crush(&[])
            .env("STANDIN_SIGNAL", signal)
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(number), "{signal}: {status:?}");
    }
}

/// The version is learnt once, by `crush --version`, and remembered with
/// the binary's identity: a second start runs no other process; a new
/// binary is asked again.
#[test]
fn the_version_is_learnt_once_and_remembered() {
    let front = Front::new("v0.91.0");
    front.handed_over(&["run", "a"]);
    assert_eq!(front.probes(), 1);
    for _ in 0..3 {
        let (run, started) = front.handed_over(&["run", "b"]);
        assert!(run.stderr.is_empty(), "{run:?}");
        assert_eq!(started.env[UPDATES_OFF], "1");
    }
    assert_eq!(front.probes(), 1, "remembered");
    let memo: serde_json::Value = serde_json::from_slice(
        &fs::read(front.home.data_dir().join("providers.front.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(memo["crush"][0]["answer"]["version"], "v0.91.0", "{memo}");
    // Crush upgraded (to a release that still uses its embedded catalog
    // while its updates are off): asked again, and handed over unchanged.
    front.install_crush("echo 'crush version 0.90.0 (abc1234)'");
    let (_, started) = front.handed_over(&["run", "c"]);
    assert_eq!(front.probes(), 2);
    assert!(!started.env.contains_key(UPDATES_OFF), "{started:?}");
    assert!(started.env.contains_key(MARKER));
    front.handed_over(&["run", "d"]);
    assert_eq!(front.probes(), 2);
}

/// Crush's updates go off only where that costs nothing (a release that
/// reads the cache then, and no Hyper key), where any reading of the
/// settings turned them off, and for a release that would not start
/// without its request; the failing `CATWALK_URL` always.
/// `providers --status` says which, and why.
#[test]
fn updates_go_off_only_where_that_costs_nothing() {
    for (version, off, why) in [
        (
            "v0.91.0",
            true,
            "its own updates off: it reads the cache then",
        ),
        (
            "0.92.3",
            true,
            "its own updates off: it reads the cache then",
        ),
        (
            "v0.91.0-nightly",
            false,
            "Crush v0.91.0-nightly uses its embedded catalog while they are off",
        ),
        (
            "v0.90.1",
            false,
            "Crush v0.90.1 uses its embedded catalog while they are off",
        ),
        (
            "v0.90.0",
            false,
            "its own updates as you set them: Crush v0.90.0 uses its embedded catalog",
        ),
        (
            "v0.24.0",
            true,
            "Crush v0.24.0 would not start without its catalog request",
        ),
        ("devel", false, "its version is not known"),
    ] {
        let front = Front::new(version);
        let (run, started) = front.handed_over(&["run"]);
        run.ok();
        assert_eq!(started.env.contains_key(UPDATES_OFF), off, "{version}");
        assert_eq!(started.env["CATWALK_URL"], SENTINEL, "{version}");
        let status = front.own(&["providers", "--status"]);
        assert!(words(&status.stdout).contains(why), "{version}: {status:?}");
        let json = front.own(&["providers", "--status", "--json"]).json();
        assert_eq!(json["crush"]["version"], version);
        assert_eq!(
            json["crush"]["path"],
            front.root.path().join("crush/crush").display().to_string()
        );
        assert_eq!(json["crush"]["catwalk_url"], SENTINEL);
        assert_eq!(
            json["crush"]["updates"],
            if off { "updates_off" } else { "as_set" }
        );
    }
    let mut front = Front::new("v0.91.0");
    front.set("HYPER_API_KEY", "hk-1");
    let (_, started) = front.handed_over(&["run"]);
    assert!(!started.env.contains_key(UPDATES_OFF));
    assert_eq!(started.env["CATWALK_URL"], SENTINEL);
    let status = front.own(&["providers", "--status"]);
    assert!(
        words(&status.stdout).contains("a Hyper key is set (HYPER_API_KEY)"),
        "{status:?}"
    );
    // `crush login hyper` writes the key into the global state file.
    let front = Front::new("v0.91.0");
    fs::write(
        front.home.data_dir().join("crush.json"),
        r#"{"providers":{"hyper":{"api_key":"tok"}}}"#,
    )
    .unwrap();
    let (_, started) = front.handed_over(&["run"]);
    assert!(!started.env.contains_key(UPDATES_OFF));
    // Updates the user turned off: Crush, which may read the settings
    // otherwise, is told so too; no version is needed for that.
    let front = Front::new("v0.90.0");
    let config = front.home.path().join(".config/crush");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("crushrc"),
        "option provider-auto-update false\n",
    )
    .unwrap();
    let (run, started) = front.handed_over(&["run"]);
    assert!(run.stderr.is_empty(), "{run:?}");
    assert_eq!(started.env[UPDATES_OFF], "1");
    assert_eq!(front.probes(), 0, "nothing to learn");
    let status = front.own(&["providers", "--status"]);
    assert!(
        words(&status.stdout).contains("you turned provider-auto-update or default-providers off"),
        "{status:?}"
    );
}

/// With a cache due for a refresh, the start hands over at once and the
/// refresh runs in the background, reviewed: Crush then reads its result.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_through_the_front_refreshes_the_cache_in_the_background() {
    // A first fetch must keep half of the embedded snapshot (issue 25).
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await;
    let mut front = Front::without_cache("v0.91.0");
    front.set("CATWALK_URL", server.uri());
    let (run, started) = front.handed_over(&["run", "x"]);
    run.ok();
    assert!(run.stderr.is_empty(), "{run:?}");
    assert_eq!(started.env[UPDATES_OFF], "1");
    assert_eq!(front.home.wait_for_refresh(&None)["outcome"], "updated");
    assert_eq!(front.home.cache().unwrap(), embedded_and_gamma().as_bytes());
    // Confirmed just now: the next start makes no request.
    front.handed_over(&["run", "y"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// A held refresh is told in one line before Crush starts, once; so is a
/// failed one. On a terminal the line is cut to its width.
#[tokio::test(flavor = "multi_thread")]
async fn a_held_or_failed_refresh_is_told_in_one_line_once() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(CATALOG_B),
    )
    .await;
    let mut front = Front::without_cache("v0.91.0");
    front.home.accept(CATALOG_A.as_bytes());
    front.set("CATWALK_URL", server.uri());
    let mut due = front.crush(&["run"]);
    due.env("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");
    let first = Run::from(due.output().unwrap());
    first.ok();
    assert!(first.stderr.is_empty(), "{first:?}");
    assert_eq!(front.home.wait_for_refresh(&None)["outcome"], "held");
    let (told, started) = front.handed_over(&["run"]);
    assert_eq!(started.env[UPDATES_OFF], "1", "the cache is kept and read");
    let lines: Vec<&str> = told.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{told:?}");
    assert!(
        lines[0].starts_with(
            "warning: catalog held: a key would go to a new place (crush providers --status)"
        ),
        "{told:?}"
    );
    let (again, _) = front.handed_over(&["run"]);
    assert!(again.stderr.is_empty(), "told once: {again:?}");

    // The same, told on an 80-column terminal: one row.
    let front = Front::without_cache("v0.91.0");
    front.home.accept(CATALOG_A.as_bytes());
    let mut due = front.crush(&["run"]);
    due.env("CRUSH_PROVIDER_REFRESH_INTERVAL", "0")
        .env("CATWALK_URL", server.uri());
    due.output().unwrap();
    front.home.wait_for_refresh(&None);
    let (tty, mut master) = terminal();
    let status = front
        .crush(&["run"])
        .env("CATWALK_URL", server.uri())
        .stderr(Stdio::from(tty))
        .status()
        .unwrap();
    assert!(status.success());
    let shown = shown(&mut master);
    let rows: Vec<&str> = shown.lines().collect();
    assert_eq!(rows.len(), 1, "{shown:?}");
    assert!(
        // The command first: the cut never falls before it (issue 29
        // findings, C1).
        rows[0]
            == "warning: catalog held: a key would go to a new place (crush providers --status)"
            && unicode_width::UnicodeWidthStr::width(rows[0]) <= 80,
        "{shown:?}"
    );

    // A failed refresh: told once, the cache kept.
    let front = Front::new("v0.91.0");
    let mut due = front.crush(&["run"]);
    due.env("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");
    assert!(due.output().unwrap().status.success());
    assert_eq!(front.home.wait_for_refresh(&None)["outcome"], "failed");
    let (told, _) = front.handed_over(&["run"]);
    let lines: Vec<&str> = told.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{told:?}");
    assert!(
        lines[0].starts_with("warning: catalog not refreshed: ")
            && lines[0].contains("refused the connection")
            && lines[0].ends_with(" (crush providers --status)"),
        "{told:?}"
    );
    let (again, _) = front.handed_over(&["run"]);
    assert!(again.stderr.is_empty(), "told once: {again:?}");
}

/// A failed refresh told on an 80-column terminal before Crush starts:
/// one row, its reason kept and the server it names cut (`providers
/// --status` has it), the pointer to `--status` last (issue 36).
#[test]
fn a_failure_told_on_80_columns_keeps_its_reason() {
    let front = Front::new("v0.91.0");
    let mut due = front.crush(&["run"]);
    due.env("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");
    assert!(due.output().unwrap().status.success());
    assert_eq!(front.home.wait_for_refresh(&None)["outcome"], "failed");
    let (tty, mut master) = terminal();
    let status = front.crush(&["run"]).stderr(Stdio::from(tty)).status();
    assert!(status.unwrap().success());
    let shown = shown(&mut master);
    let rows: Vec<&str> = shown.lines().collect();
    assert_eq!(rows.len(), 1, "{shown:?}");
    assert!(
        rows[0].starts_with("warning: catalog not refreshed: refused the conn")
            && rows[0].ends_with("\u{2026} (crush providers --status)")
            && unicode_width::UnicodeWidthStr::width(rows[0]) <= 80,
        "{shown:?}"
    );
}

/// A failure of the front itself (a config it cannot read, a data folder
/// it cannot write) is one line, and Crush starts all the same, with the
/// failing `CATWALK_URL` and its own updates as the user set them; a
/// broken cache another program wrote is put aside, and said so.
#[test]
fn a_broken_config_or_cache_never_stops_the_hand_over() {
    let front = Front::new("v0.91.0");
    let config = front.home.path().join(".config/crush");
    fs::create_dir_all(&config).unwrap();
    fs::write(config.join("crush.json"), "{not json").unwrap();
    let (run, started) = front.handed_over(&["run"]);
    run.ok();
    assert_one_failure(&run, "crush.json");
    assert!(!started.env.contains_key(UPDATES_OFF), "{started:?}");
    assert_eq!(started.env["CATWALK_URL"], SENTINEL);
    assert!(started.env.contains_key(MARKER));

    let front = Front::new("v0.91.0");
    front.handed_over(&["run"]); // the version learnt
    fs::write(front.home.cache_file(), "not a catalog").unwrap();
    let (run, started) = front.handed_over(&["run"]);
    run.ok();
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(
        lines[0].starts_with("warning: catalog put aside: it is not valid"),
        "{run:?}"
    );
    assert_eq!(
        front.home.cache().unwrap(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    assert_eq!(started.env[UPDATES_OFF], "1");

    let mut front = Front::new("v0.91.0");
    let file = front.home.path().join("a-file");
    fs::write(&file, "").unwrap();
    front.set("XDG_DATA_HOME", &file);
    let (run, started) = front.handed_over(&["run"]);
    run.ok();
    assert_one_failure(&run, "cannot use the data folder");
    assert!(!started.env.contains_key(UPDATES_OFF));
    assert_eq!(started.env["CATWALK_URL"], SENTINEL);
}

#[track_caller]
fn assert_one_failure(run: &Run, naming: &str) {
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(
        lines[0].starts_with("warning: ")
            && lines[0].contains(naming)
            && lines[0].ends_with("; no refresh this time"),
        "{run:?}"
    );
}

/// A Crush that hangs on `--version` costs the start its bound once, then
/// nothing: it is handed over unchanged, and remembered as unknown.
#[test]
fn a_hung_crush_delays_one_start_by_the_bound_only() {
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sleep");
    let front = Front::new("v0.91.0");
    front.install_crush(&format!("exec {sleep} 60"));
    let started_at = Instant::now();
    let (run, started) = front.handed_over(&["run"]);
    assert!(started_at.elapsed() < Duration::from_secs(20));
    assert!(!started.env.contains_key(UPDATES_OFF));
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(
        lines[0].contains("`--version` gave no answer within 3 s"),
        "{run:?}"
    );
    let started_at = Instant::now();
    let (run, _) = front.handed_over(&["run"]);
    assert!(run.stderr.is_empty(), "{run:?}");
    assert_eq!(front.probes(), 1);
    assert!(started_at.elapsed() < Duration::from_secs(3));
}

/// Issue 36 findings: the front's errors wrap at the terminal's width
/// as every other error does, the text kept in its column after `error: `
/// (`no Crush to run` took one line of 230 columns).
#[test]
fn the_fronts_errors_wrap_at_the_terminals_width() {
    let front = Front::without_crush();
    let (tty, mut master) = terminal();
    let status = front
        .crush(&["run", "x"])
        .stderr(Stdio::from(tty))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(127));
    let shown = shown(&mut master);
    let rows: Vec<&str> = shown.lines().collect();
    assert!(rows.len() > 1, "{shown:?}");
    assert!(rows[0].starts_with("error: no Crush to run: "), "{shown:?}");
    for row in &rows {
        assert!(
            unicode_width::UnicodeWidthStr::width(*row) <= 80,
            "{shown:?}"
        );
    }
    assert!(
        rows[1..].iter().all(|r| r.starts_with("       ")),
        "{shown:?}"
    );
    assert!(
        words(&shown)
            .contains("install Crush, or name it: CRUSH_PROVIDER_REAL_CRUSH=/path/to/crush"),
        "{shown:?}"
    );
}

/// Without a Crush, the front's own commands work under their names of
/// before; any other command says in one line that no Crush was found and
/// how to name one, exit 127. A Crush named explicitly is used.
#[test]
fn without_a_crush_the_commands_of_before_work_and_the_others_say_so() {
    let mut front = Front::without_crush();
    for args in [
        &["models", "--json"][..],
        &["dirs"],
        &["completion", "bash"],
    ] {
        front.own(args).ok();
    }
    assert!(
        front
            .own(&["--help"])
            .ok()
            .stdout
            .contains("provider-models")
    );
    assert!(
        front
            .own(&["--version"])
            .ok()
            .stdout
            .starts_with("crush 0.1.0")
    );
    for args in [&[][..], &["run", "x"], &["login"]] {
        let run = front.own(args);
        assert_eq!(run.code, Some(127), "{run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{run:?}");
        assert!(
            lines[0].starts_with("error: no Crush to run: no Crush on PATH besides this program; install Crush, or name it: CRUSH_PROVIDER_REAL_CRUSH=/path/to/crush"),
            "{run:?}"
        );
    }
    // Named in the environment, then in the global JSON config.
    let elsewhere = front.root.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let named = elsewhere.join("my-crush");
    write_program(
        &named,
        &STAND_IN.replace("@VERSION@", "echo 'crush version v0.91.0'"),
    );
    front.set("CRUSH_PROVIDER_REAL_CRUSH", &named);
    front.handed_over(&["models"]);
    front.env.pop();
    let config = front.home.path().join(".config/crush");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("crush.json"),
        serde_json::json!({"options": {"provider_real_crush": named}}).to_string(),
    )
    .unwrap();
    front.handed_over(&["run"]);
    let status = front.own(&["providers", "--status"]);
    assert!(
        status.stdout.lines().any(|l| l.starts_with("crush:")
            && l.contains(&named.display().to_string())
            && l.contains("from options.provider_real_crush in ")),
        "{status:?}"
    );
    fs::remove_file(&named).unwrap();
    let run = front.own(&["run"]);
    assert_eq!(run.code, Some(127));
    assert!(
        run.stderr.contains("names ") && run.stderr.contains("which does not exist"),
        "{run:?}"
    );
}

/// A Crush that is found but that the system refuses to start (here, a
/// script whose interpreter may not be executed: `exec` fails with
/// EACCES) is said in one line and exits 126, as a shell says it.
#[test]
fn a_crush_that_cannot_be_started_exits_126() {
    let mut front = Front::without_crush();
    let interpreter = front.root.path().join("not-executable");
    fs::write(&interpreter, "").unwrap();
    let named = front.root.path().join("crush-script");
    write_program(&named, &format!("#!{}\n", interpreter.display()));
    front.set("CRUSH_PROVIDER_REAL_CRUSH", &named);
    let run = front.own(&["run"]);
    assert_eq!(run.code, Some(126), "{run:?}");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: cannot start Crush (")
            && last.contains("crush-script): permission denied; ")
            && last.ends_with(
                "name a Crush this system can run: CRUSH_PROVIDER_REAL_CRUSH=/path/to/crush"
            ),
        "{run:?}"
    );
}

/// This program is never taken for Crush: twice on PATH, through a
/// symlink, as a copy further on (which goes on to Crush); a "Crush" that
/// is a wrapper finding this program again ends in one line, never in a
/// loop of starts.
#[test]
fn this_program_is_never_crush_and_a_loop_ends_in_one_line() {
    // The front's folder twice, and a symlink to it in another, before
    // Crush: Crush is found.
    let mut front = Front::new("v0.91.0");
    let link = front.root.path().join("link");
    fs::create_dir(&link).unwrap();
    symlink(env!("CARGO_BIN_EXE_crush"), link.join("crush")).unwrap();
    front.path = vec![
        front.path[0].clone(),
        front.path[0].clone(),
        link.clone(),
        front.path[1].clone(),
    ];
    let (run, _) = front.handed_over(&["run"]);
    run.ok();
    assert!(run.stderr.is_empty(), "{run:?}");
    // Only fronts on PATH: no Crush. A slip of this program's own command
    // is told as one, not as a command for the missing Crush.
    front.path.pop();
    let run = front.own(&["run"]);
    assert_eq!(run.code, Some(127));
    let run = front.own(&["update-provider"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains("a similar subcommand exists: 'update-providers'"),
        "{run:?}"
    );
    // Crush's own commands, however alike, are Crush's.
    for crushs in ["projects", "server"] {
        let run = front.own(&[crushs]);
        assert_eq!(run.code, Some(127), "{run:?}");
    }
    assert!(front.own(&["dirs"]).ok().stdout.starts_with("config:"));

    // A copy of this program first on PATH: it goes on to Crush, with
    // nothing to say.
    let front = Front::new("v0.91.0");
    let copy = front.root.path().join("copy");
    fs::create_dir(&copy).unwrap();
    copy_program(Path::new(env!("CARGO_BIN_EXE_crush")), &copy.join("crush"));
    let mut front = front;
    front.path.insert(0, copy);
    let (run, started) = front.handed_over(&["run", "x"]);
    run.ok();
    assert!(run.stderr.is_empty(), "{run:?}");
    assert_eq!(started.env[UPDATES_OFF], "1");

    // A wrapper that starts `crush` from PATH, which is this program: in
    // the same process (exec), found at once, then in a new one each time,
    // found a few starts deep; asked for its version once, which starts no
    // start of its own.
    for (wrapper, most_runs) in [("exec crush \"$@\"", 3), ("crush \"$@\"", 16)] {
        let front = Front::new("v0.91.0");
        let runs = front.root.path().join("wrapper.log");
        fs::remove_file(front.root.path().join("crush/crush")).unwrap();
        write_program(
            &front.root.path().join("crush/crush"),
            &format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\n{wrapper}\n",
                runs.display()
            ),
        );
        let started_at = Instant::now();
        let run = front.own(&["run"]);
        assert!(started_at.elapsed() < Duration::from_secs(20));
        assert_eq!(run.code, Some(127), "{wrapper}: {run:?}");
        let errors: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{wrapper}: {run:?}");
        assert!(
            errors[0].contains("a loop: Crush as found starts this program again"),
            "{wrapper}: {run:?}"
        );
        assert!(
            errors[0].contains("CRUSH_PROVIDER_REAL_CRUSH=/path/to/crush"),
            "{run:?}"
        );
        assert!(run.stderr.lines().count() <= 2, "{run:?}");
        let runs = fs::read_to_string(&runs).unwrap();
        assert!(runs.lines().count() <= most_runs, "{wrapper}: {runs}");
        assert!(runs.lines().count() >= 2, "{wrapper}: {runs}");
    }
}

/// The front decides as Crush does: a `.env` in the folder it starts in
/// and Crush's `-D` count (Crush is then told its updates are off), and a
/// `CATWALK_URL` that is not an http(s) URL is told (once) and refreshes
/// nothing.
#[test]
fn the_front_reads_the_settings_as_crush_does() {
    let mut front = Front::new("v0.91.0");
    let off = |started: &Started| started.env.get(UPDATES_OFF).cloned();
    let (_, started) = front.handed_over(&["run", "x"]);
    assert_eq!(off(&started).as_deref(), Some("1"));
    let dotenv = front.home.path().join(".env");
    fs::write(&dotenv, "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1\n").unwrap();
    let (run, started) = front.handed_over(&["run", "x"]);
    run.ok();
    assert_eq!(off(&started).as_deref(), Some("1"), "updates off by .env");
    fs::remove_file(&dotenv).unwrap();
    let data = front.home.path().join("data");
    fs::create_dir(&data).unwrap();
    fs::write(
        data.join("crush.json"),
        r#"{"options": {"disable_provider_auto_update": true}}"#,
    )
    .unwrap();
    let data = data.to_str().unwrap();
    let (_, started) = front.handed_over(&["-D", data, "run", "x"]);
    assert_eq!(
        off(&started).as_deref(),
        Some("1"),
        "updates off in -D's workspace file"
    );
    front.set("CATWALK_URL", "mirror.corp:8080");
    // Told once, as every line a start says before Crush: again when what
    // is to be said changes.
    for told in [true, false] {
        let (run, started) = front.handed_over(&["run", "x"]);
        run.ok();
        assert_eq!(
            run.stderr.contains("CATWALK_URL=\"mirror.corp:8080\" is not an http:// or https:// URL: no refresh at start-up"),
            told,
            "{run:?}"
        );
        assert_eq!(off(&started).as_deref(), Some("1"));
    }
}

/// The memo is the front's own file, and nothing in it is needed: one that
/// is no plain file (a FIFO nobody writes, a link to a device that never
/// ends) is read as none and replaced; it never holds a start.
#[test]
fn a_memo_that_is_no_plain_file_never_holds_a_start() {
    for kind in ["a FIFO", "a device"] {
        let front = Front::new("v0.91.0");
        let memo = front.home.data_dir().join("providers.front.json");
        if kind == "a FIFO" {
            let made = Command::new("mkfifo").arg(&memo).status().unwrap();
            assert!(made.success());
        } else {
            symlink("/dev/zero", &memo).unwrap();
        }
        let run = front
            .run_within(&["run"], Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{kind}: the start never ended"));
        run.ok();
        let started = front.runs().pop().expect("Crush started");
        assert_eq!(started.env[UPDATES_OFF], "1", "{kind}: {run:?}");
        let replaced = fs::symlink_metadata(&memo).unwrap();
        assert!(replaced.is_file(), "{kind}: {replaced:?}");
    }
}

/// A memo that cannot be written (a folder holds its name) costs its
/// remembering, not the start's decision: Crush is still started with its
/// updates off where that costs nothing, and the failure said.
#[test]
fn a_memo_that_cannot_be_written_keeps_the_decision() {
    let front = Front::new("v0.91.0");
    let memo = front.home.data_dir().join("providers.front.json");
    fs::create_dir_all(memo.join("in the way")).unwrap();
    let run = front.run(&["run"]);
    run.ok();
    let started = front.runs().pop().expect("Crush started");
    assert_eq!(started.env[UPDATES_OFF], "1", "{run:?}");
    assert!(run.stderr.contains("cannot write"), "{run:?}");
    assert!(!run.stderr.contains("no refresh this time"), "{run:?}");
}

/// Nothing the front prints is raw: a Crush in a folder whose name holds
/// an escape sequence and a bidirectional control, and whose `--version`
/// answers with an escape sequence, is named escaped, on stderr before a
/// start and in `providers --status`; such an answer is no version.
#[test]
fn nothing_the_front_prints_is_raw() {
    let mut front = Front::new("v0.91.0");
    let odd = front.root.path().join("bin\u{1b}[31m\u{202e}");
    fs::create_dir(&odd).unwrap();
    write_program(
        &odd.join("crush"),
        &STAND_IN.replace(
            "@VERSION@",
            r"printf 'crush version v0.91.0\033]0;pwned\007\n'",
        ),
    );
    front.path[1] = odd;
    let (run, started) = front.handed_over(&["run"]);
    assert!(!started.env.contains_key(UPDATES_OFF), "{started:?}");
    let status = front.own(&["providers", "--status"]);
    let json = front.own(&["providers", "--status", "--json"]).json();
    for shown in [&run.stderr, &status.stdout, &status.stderr] {
        assert!(
            !shown.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{shown:?}"
        );
    }
    assert!(
        run.stderr
            .contains(r"bin\u{1b}[31m\u{202e}/crush is not known (`--version` printed no version)"),
        "{run:?}"
    );
    assert!(
        status.stdout.contains(r"bin\u{1b}[31m\u{202e}/crush"),
        "{status:?}"
    );
    assert_eq!(json["crush"]["version"], serde_json::Value::Null, "{json}");
}

/// A Crush named by a relative path is refused: it would be checked in the
/// working folder, but started from wherever the system looks it up (a
/// bare name: on PATH, where the front is).
#[test]
fn a_crush_named_by_a_relative_path_is_refused() {
    let mut front = Front::new("v0.91.0");
    write_program(
        &front.home.path().join("crush"),
        &STAND_IN.replace("@VERSION@", "echo 'crush version v0.91.0'"),
    );
    for named in ["crush", "./crush"] {
        front.set("CRUSH_PROVIDER_REAL_CRUSH", named);
        let run = front.own(&["run"]);
        assert_eq!(run.code, Some(127), "{run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{run:?}");
        assert!(
            lines[0].starts_with(&format!(
                "error: no Crush to run: CRUSH_PROVIDER_REAL_CRUSH names {named}, which is not a full path; "
            )),
            "{run:?}"
        );
        front.env.pop();
    }
}

/// The settings are read from the folder `-c`/`--cwd` names, to the byte:
/// a project whose folder's name is not UTF-8 and turns updates off sees
/// no request, and Crush is told so, in every form of the flag.
#[test]
fn the_settings_of_a_folder_not_named_in_utf8_are_its_own() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let front = Front::new("v0.91.0");
    let project = front
        .home
        .path()
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs::create_dir(&project).unwrap();
    fs::write(
        project.join(".crushrc"),
        "option provider-auto-update false\n",
    )
    .unwrap();
    let dir = project.as_os_str().as_bytes();
    for flag in [&b"--cwd="[..], b"-c", b"-c="] {
        let arg = OsString::from_vec([flag, dir].concat());
        let before = front.runs().len();
        let run = Run::from(front.crush(&[]).arg(&arg).arg("run").output().unwrap());
        run.ok();
        let runs = front.runs();
        assert_eq!(runs.len(), before + 1, "{run:?}");
        let started = runs.last().unwrap();
        assert_eq!(started.env[UPDATES_OFF], "1", "{arg:?}: {started:?}");
    }
    assert_eq!(front.probes(), 0, "nothing to learn");
}

/// Which program runs is the user's choice, never a project's: a `.env`
/// in the folder a start is in (which Crush reads for its settings) names
/// no Crush, points at no config that names one, and sets no marker.
#[test]
fn a_projects_dotenv_never_chooses_the_program() {
    let front = Front::new("v0.91.0");
    let project = front.home.path().join("proj");
    let config = project.join("config");
    fs::create_dir_all(&config).unwrap();
    let other = project.join("other");
    write_program(&other, "#!/bin/sh\necho ran > \"$0.ran\"\n");
    fs::write(
        config.join("crush.json"),
        serde_json::json!({"options": {"provider_real_crush": other}}).to_string(),
    )
    .unwrap();
    for dotenv in [
        format!("CRUSH_PROVIDER_REAL_CRUSH={}\n", other.display()),
        format!("CRUSH_GLOBAL_CONFIG={}\n", config.display()),
        // Read, this marker would end the start as a loop.
        "CRUSH_PROVIDER_FRONT=8:-:\n".to_string(),
    ] {
        fs::write(project.join(".env"), &dotenv).unwrap();
        let (run, _) = front.handed_over_in(&project, &["run"]);
        run.ok();
        assert!(!project.join("other.ran").exists(), "{dotenv}: {run:?}");
    }
}

/// `-D`'s workspace file is read for the Hyper key by a start as by
/// `--status`: both see the key it sets, and Crush keeps its own
/// updates (it reads Hyper's provider only from its embedded copy
/// while they are off).
#[test]
fn a_data_dirs_hyper_key_is_seen_by_a_start_as_by_the_status() {
    let front = Front::new("v0.91.0");
    let dd = front.home.path().join("dd");
    fs::create_dir_all(&dd).unwrap();
    fs::write(
        dd.join("crush.json"),
        r#"{"providers":{"hyper":{"api_key":"DDKEY"}}}"#,
    )
    .unwrap();
    let dd = dd.to_str().unwrap();
    let (_, started) = front.handed_over(&["-D", dd, "run"]);
    assert!(!started.env.contains_key(UPDATES_OFF));
    let status = front
        .own(&["-D", dd, "providers", "--status", "--json"])
        .json();
    assert_eq!(status["crush"]["updates"], "as_set", "{status}");
    assert_eq!(status["hyper"]["key"], format!("{dd}/crush.json"));
    // Without -D, neither sees it.
    let (_, started) = front.handed_over(&["run"]);
    assert!(started.env.contains_key(UPDATES_OFF));
}

/// What a start told is remembered by its digest, so that a project's value
/// however long (a `.env`'s `HYPER_URL`, which a warning quotes) is told
/// once, and Crush's version is not asked again.
#[test]
fn a_long_notice_is_told_once_and_the_version_learnt_once() {
    let mut front = Front::new("v0.90.0");
    front.set("HYPER_API_KEY", "hk");
    let project = front.home.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let url = format!("https://elsewhere.example/{}", "x".repeat(70_000));
    fs::write(project.join(".env"), format!("HYPER_URL={url}\n")).unwrap();
    let start = || front.handed_over_in(&project, &["run"]).0;
    let first = start();
    first.ok();
    assert!(first.stderr.contains(&url), "{first:?}");
    let second = start();
    second.ok();
    assert!(!second.stderr.contains("HYPER_URL"), "{second:?}");
    assert_eq!(front.probes(), 1);
    let memo = fs::read(front.home.data_dir().join("providers.front.json")).unwrap();
    assert!(memo.len() < 1_000, "{} bytes", memo.len());
}
