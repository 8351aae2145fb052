//! Requests a reading turns off (issue 35, items 1 to 5): a start goes out
//! only when every reading of the settings says on — the spec's order of
//! the files and Crush v0.90's, a crushrc line only a shell can evaluate
//! counted as off, the project root as git decides it, the working folder
//! as Go names it, a bad environment value ignored. Each configuration is
//! a start (`crush providers --wait`, which waits for the refresh a start
//! runs) in a temporary HOME, with a loopback catalog server that counts
//! the requests it gets: none where a reading says off, one where all say
//! on.

use std::fs;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use crate::common::*;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A catalog server on loopback that answers every request with a catalog
/// a first fetch applies, and counts them.
struct Catalog {
    server: MockServer,
}

impl Catalog {
    async fn start() -> Catalog {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(200).set_body_string(embedded_and_gamma()))
            .mount(&server)
            .await;
        Catalog { server }
    }

    async fn requests(&self) -> usize {
        self.server.received_requests().await.unwrap().len()
    }

    /// The requests `run` made of it.
    async fn made(&self, run: impl FnOnce(&str) -> Run) -> (usize, Run) {
        let before = self.requests().await;
        let done = run(&self.server.uri());
        (self.requests().await - before, done)
    }
}

/// A HOME holding a git work tree `repo`, whose folder `sub` is the
/// working folder. Paths are given from HOME.
struct Project {
    home: Home,
    root: PathBuf,
}

const OFF_RC: &str = "option provider-auto-update false\n";
const ON_RC: &str = "option provider-auto-update true\n";
const OFF_JSON: &str = r#"{"options":{"disable_provider_auto_update":true}}"#;
const ON_JSON: &str = r#"{"options":{"disable_provider_auto_update":false}}"#;
const GLOBAL_RC: &str = ".config/crush/crushrc";
const GLOBAL_JSON: &str = ".config/crush/crush.json";
const GLOBAL_STATE: &str = ".local/share/crush/crush.json";

impl Project {
    fn new() -> Project {
        let home = Home::new();
        let root = home.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("repo/sub")).unwrap();
        git_init(&root.join("repo"));
        Project { home, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// The binary in `cwd` (from HOME), with `args` and `env`, and the
    /// catalog at `uri`.
    fn command(&self, cwd: &str, args: &[&str], env: &[(&str, &str)], uri: &str) -> Command {
        let mut cmd = crush_in(self.home.path(), args);
        cmd.current_dir(self.path(cwd))
            .env("PWD", self.path(cwd))
            .env("CATWALK_URL", uri);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// A start in `repo/sub`.
    fn start(&self, env: &[(&str, &str)], uri: &str) -> Run {
        self.start_in("repo/sub", &[], env, uri)
    }

    fn start_in(&self, cwd: &str, flags: &[&str], env: &[(&str, &str)], uri: &str) -> Run {
        let args: Vec<&str> = flags
            .iter()
            .copied()
            .chain(["providers", "--wait"])
            .collect();
        let run = Run::from(self.command(cwd, &args, env, uri).output().unwrap());
        run.ok();
        run
    }

    /// `providers --status --json` in `repo/sub`.
    fn status(&self, env: &[(&str, &str)]) -> serde_json::Value {
        let run = Run::from(
            self.command(
                "repo/sub",
                &["providers", "--status", "--json"],
                env,
                "http://127.0.0.1:9",
            )
            .output()
            .unwrap(),
        );
        run.ok();
        run.json()
    }

    /// `providers --status` in `repo/sub`, as text.
    fn status_text(&self) -> String {
        let run = Run::from(
            self.command(
                "repo/sub",
                &["providers", "--status"],
                &[],
                "http://127.0.0.1:9",
            )
            .output()
            .unwrap(),
        );
        run.ok();
        words(&run.stdout)
    }
}

/// Each configuration, written into a fresh project, and the requests a
/// start then makes.
async fn requests_of(catalog: &Catalog, files: &[(&str, &str)], env: &[(&str, &str)]) -> usize {
    let p = Project::new();
    for (rel, text) in files {
        p.write(rel, text);
    }
    catalog.made(|uri| p.start(env, uri)).await.0
}

/// Item 1. Crush v0.90 ranks the global state above the global files,
/// the workspace file above every project file, and inside one folder
/// `crush.json` < `.crush.json` < `crushrc` < `.crushrc`: a file off by
/// either order keeps a start from going out; one on by both lets it.
#[tokio::test(flavor = "multi_thread")]
async fn going_out_needs_both_orders() {
    let catalog = Catalog::start().await;
    let state_off = r#"{"options":{"disable_default_providers":true}}"#;
    for (files, expected) in [
        // Off by Crush v0.90's order alone.
        (vec![(GLOBAL_STATE, OFF_JSON), (GLOBAL_RC, ON_RC)], 0),
        (
            vec![
                (GLOBAL_STATE, state_off),
                (
                    GLOBAL_JSON,
                    r#"{"options":{"disable_default_providers":false}}"#,
                ),
            ],
            0,
        ),
        (
            vec![
                ("repo/sub/.crush/crush.json", OFF_JSON),
                ("repo/sub/.crushrc", ON_RC),
            ],
            0,
        ),
        (
            vec![
                ("repo/sub/crushrc", OFF_RC),
                ("repo/sub/.crush.json", ON_JSON),
            ],
            0,
        ),
        // Off by the spec's alone.
        (
            vec![
                ("repo/sub/crushrc", ON_RC),
                ("repo/sub/.crush.json", OFF_JSON),
            ],
            0,
        ),
        (vec![(GLOBAL_STATE, ON_JSON), (GLOBAL_RC, OFF_RC)], 0),
        // On by both.
        (vec![(GLOBAL_STATE, ON_JSON), (GLOBAL_RC, ON_RC)], 1),
        (
            vec![
                ("repo/sub/.crush/crush.json", ON_JSON),
                ("repo/sub/crushrc", OFF_RC),
                ("repo/sub/.crushrc", ON_RC),
            ],
            1,
        ),
        (vec![], 1),
    ] {
        assert_eq!(
            requests_of(&catalog, &files, &[]).await,
            expected,
            "{files:?}"
        );
    }
}

/// Item 1: `--status` shows each order's value where they differ, and
/// which kept the network off, in text and JSON.
#[test]
fn the_status_shows_both_orders() {
    let p = Project::new();
    let state = p.write(GLOBAL_STATE, OFF_JSON);
    let rc = p.write(GLOBAL_RC, ON_RC);
    let status = p.status(&[]);
    let setting = &status["provider_auto_update"];
    assert_eq!(setting["value"], false, "{status}");
    let origin = format!(
        "options.disable_provider_auto_update in {}",
        state.display()
    );
    assert_eq!(setting["origin"], origin.as_str());
    assert_eq!(setting["orders"]["kept_off_by"], "crush_v0_90");
    assert_eq!(setting["orders"]["spec"]["value"], true);
    assert_eq!(
        setting["orders"]["spec"]["origin"],
        format!("option at {}:1", rc.display()).as_str()
    );
    assert_eq!(setting["orders"]["crush_v0_90"]["value"], false);
    assert_eq!(status["refresh"]["allowed"], false);
    assert!(
        status["default_providers"].get("orders").is_none(),
        "{status}"
    );
    let text = p.status_text();
    for said in [
        format!("provider-auto-update: off ({origin})"),
        format!(
            "the spec's order: on (option at {}:1); Crush v0.90's order: off ({origin}); Crush v0.90's order keeps the network off",
            rc.display()
        ),
        format!(
            "none: provider-auto-update is off ({origin}) by Crush v0.90's order (the spec's order: on (option at {}:1))",
            rc.display()
        ),
    ] {
        assert!(text.contains(&said), "{said}\nin\n{text}");
    }
}

/// Item 2. Crush runs a crushrc as a shell script: an `option
/// provider-auto-update` or `option default-providers` line only a shell
/// can evaluate (in an `if`, a loop, a function, a value or key from a
/// variable, behind a prefix) counts as off, and the warning says so; one
/// that can only turn it on, and other keys, change nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_line_only_a_shell_evaluates_counts_as_off() {
    let catalog = Catalog::start().await;
    // The text, the requests a start makes, and whether a line is
    // counted as off.
    for (text, expected, counted) in [
        (
            "if [ -n \"$OFFLINE\" ]; then\n  option provider-auto-update false\nfi\n",
            0,
            true,
        ),
        (
            "for i in 1; do option provider-auto-update false; done\n",
            0,
            true,
        ),
        (
            "while false; do option default-providers false; done\n",
            0,
            true,
        ),
        (
            "offline() {\n  option provider-auto-update false\n}\noffline\n",
            0,
            true,
        ),
        ("option provider-auto-update $V\n", 0, true),
        ("option default-providers \"${V:-false}\"\n", 0, true),
        ("V=false option provider-auto-update false\n", 0, true),
        (
            "if true; then option provider-auto-update true; fi\n",
            1,
            false,
        ),
        ("if true; then option data-directory $D; fi\n", 1, false),
        // A later line that runs decides.
        (
            "option provider-auto-update $V\noption provider-auto-update true\n",
            1,
            true,
        ),
    ] {
        let p = Project::new();
        let rc = p.write("repo/sub/crushrc", text);
        let (made, run) = catalog.made(|uri| p.start(&[], uri)).await;
        assert_eq!(made, expected, "{text}");
        let stderr = words(&run.stderr);
        let said = format!("{}:", rc.display());
        assert!(stderr.contains(&said), "{text}: {run:?}");
        assert_eq!(
            stderr.contains("this reader does not run the shell, and Crush, which does, may turn")
                && stderr.contains(
                    "off there: counted as off, so no start-up request is made while this line stands"
                ),
            counted,
            "{text}: {run:?}"
        );
    }
}

/// Item 2, what Crush's shell runs that this reader cannot see: `eval`,
/// `source`/`.`, a script run by path (Crush's shell runs one without
/// `#!` itself), `trap`, `alias`, a command whose name only a shell
/// knows, a command or process substitution (`$(…)`, backquotes,
/// `<(…)`), or an unquoted here-document (its body is expanded) anywhere
/// in a crushrc counts as off for both keys, whatever a later line says
/// (a function or a trap may run it last), and the warning says so; a
/// secret in what it runs is not shown. Quoted, commented or in a quoted
/// here-document, the same text is data, and a start goes out. (Crush
/// v0.90 alone sends no request for the first eight: attack F4.)
#[tokio::test(flavor = "multi_thread")]
async fn what_only_a_shell_runs_in_a_crushrc_counts_as_off() {
    let catalog = Catalog::start().await;
    let other = ("repo/sub/other", OFF_RC);
    for (text, files) in [
        ("eval \"option provider-auto-update false\"\n", vec![]),
        (": \"$(option provider-auto-update false)\"\n", vec![]),
        ("x=$(option provider-auto-update false)\n", vec![]),
        (
            "cat <<EOF >/dev/null\n$(option provider-auto-update false)\nEOF\n",
            vec![],
        ),
        (". ./other\n", vec![other]),
        ("source other\n", vec![other]),
        ("test -n \"$(option provider-auto-update false)\"\n", vec![]),
        (
            "export X=\"$(option provider-auto-update false)\"\n",
            vec![],
        ),
        (": `option default-providers false`\n", vec![]),
        ("cat <(option default-providers false)\n", vec![]),
        ("./other\n", vec![other]),
        (
            "command eval \"option provider-auto-update false\"\n",
            vec![],
        ),
        ("E=eval\n$E \"option provider-auto-update false\"\n", vec![]),
        (
            "shopt -s expand_aliases\nalias off='option provider-auto-update false'\n",
            vec![],
        ),
        (
            "if true; then eval \"option provider-auto-update false\"; fi\n",
            vec![],
        ),
        (
            "trap 'option provider-auto-update false' EXIT\noption provider-auto-update true\n",
            vec![],
        ),
        (
            "off() { eval \"option provider-auto-update false\"; }\noption provider-auto-update true\noff\n",
            vec![],
        ),
        (
            "eval \"provider add x --api-key RKSECRET1\"\n: \"$(option x RKSECRET2)\"\n",
            vec![],
        ),
    ] {
        let p = Project::new();
        for (rel, body) in &files {
            p.write(rel, body);
        }
        let rc = p.write("repo/sub/crushrc", text);
        let (made, run) = catalog.made(|uri| p.start(&[], uri)).await;
        assert_eq!(made, 0, "{text}: {run:?}");
        let stderr = words(&run.stderr);
        assert!(
            stderr.contains(&format!("{}:", rc.display()))
                && stderr.contains("this reader does not run the shell, and Crush, which does, may turn provider-auto-update and default-providers off there: counted as off, so no start-up request is made while this line stands"),
            "{text}: {run:?}"
        );
        assert!(!stderr.contains("RKSECRET"), "{text}: {run:?}");
    }
    // The same text as data: a start goes out, and nothing is said.
    for text in [
        "echo '$(option provider-auto-update false)'\n",
        "# eval \"option provider-auto-update false\" $(x) `y`\n",
        "cat <<'EOF' >/dev/null\n$(option provider-auto-update false)\nEOF\n",
        "cat <<\"EOF\" >/dev/null\neval x\nEOF\n",
        "echo $((1 + 2)) eval source\n",
    ] {
        let p = Project::new();
        p.write("repo/sub/crushrc", text);
        let (made, run) = catalog.made(|uri| p.start(&[], uri)).await;
        assert_eq!(made, 1, "{text}: {run:?}");
        assert!(!run.stderr.contains("counted as off"), "{text}: {run:?}");
    }
}

/// The global crushrc says off, the work tree's root says on: Crush reads
/// the root's file only when git gives it the root.
fn off_globally_on_at_the_root() -> Project {
    let p = Project::new();
    p.write(GLOBAL_RC, OFF_RC);
    p.write("repo/.crushrc", ON_RC);
    p
}

/// Item 3. Crush asks `git rev-parse --show-toplevel` for the project
/// root: with no git on `PATH` it searches the working folder alone, and
/// reads none of the root's files; so does this.
#[tokio::test(flavor = "multi_thread")]
async fn without_git_the_working_folder_alone_is_searched() {
    let catalog = Catalog::start().await;
    let p = off_globally_on_at_the_root();
    let (made, _) = catalog.made(|uri| p.start(&[], uri)).await;
    assert_eq!(made, 1, "git gives the root, whose file says on");
    let empty = tempfile::tempdir().unwrap();
    let no_git = empty.path().to_str().unwrap();
    let p = off_globally_on_at_the_root();
    let (made, _) = catalog.made(|uri| p.start(&[("PATH", no_git)], uri)).await;
    assert_eq!(made, 0);
    let status = p.status(&[("PATH", no_git)]);
    assert_eq!(
        status["project_root"],
        "none (no git on PATH: Crush asks git for it, and searches the working directory alone without it)",
        "{status}"
    );
    let p = off_globally_on_at_the_root();
    let (made, _) = catalog.made(|uri| p.start(&[("PATH", "")], uri)).await;
    assert_eq!(made, 0, "no PATH at all");
}

/// Item 3. Inside a repository another user owns, git refuses ("dubious
/// ownership") unless the user's git configuration names it in
/// `safe.directory`: Crush then searches the working folder alone, and so
/// does this; named there, the root's files are read again. As root the
/// repository is given to another user; otherwise git's own switch,
/// `GIT_TEST_ASSUME_DIFFERENT_OWNER`, stands in for the other owner.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_repository_git_refuses_has_no_root() {
    let catalog = Catalog::start().await;
    if git_only_path().is_none() {
        skip_without("git", "the project root as git decides it");
        return;
    }
    let as_root = is_root();
    let refused = |p: &Project| -> Vec<(&'static str, String)> {
        if as_root {
            chown(&p.path("repo"), 4242);
            Vec::new()
        } else {
            vec![("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1".into())]
        }
    };
    let p = off_globally_on_at_the_root();
    let env = refused(&p);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (made, _) = catalog.made(|uri| p.start(&env, uri)).await;
    assert_eq!(made, 0);
    let status = p.status(&env);
    let root = status["project_root"].as_str().unwrap();
    assert!(
        root.starts_with("none (git rev-parse --show-toplevel says: fatal: detected dubious ownership in repository at"),
        "{status}"
    );
    // Named in `safe.directory` of the user's git configuration.
    let p = off_globally_on_at_the_root();
    let mut env = refused(&p);
    let config = p.write(
        "gitconfig",
        &format!("[safe]\n\tdirectory = {}\n", p.path("repo").display()),
    );
    env.push(("GIT_CONFIG_GLOBAL", config.to_str().unwrap().to_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (made, _) = catalog.made(|uri| p.start(&env, uri)).await;
    assert_eq!(made, 1);
    assert_eq!(
        p.status(&env)["project_root"],
        p.path("repo").to_str().unwrap()
    );
}

/// Whether this runs as root, which git's ownership check treats apart.
#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(unix)]
fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), None).unwrap();
}

/// Item 4. Crush's `-c sub` moves into `sub`, then takes `sub` again from
/// there: its working folder is `./sub/sub`, whose files it reads (and
/// whose default workspace is `./sub/sub/sub/.crush`); where that folder
/// does not exist, it reads no project file at all. So does this.
#[tokio::test(flavor = "multi_thread")]
async fn a_relative_cwd_flag_is_taken_as_crush_takes_it() {
    let catalog = Catalog::start().await;
    // The file Crush reads.
    let p = Project::new();
    p.write("repo/sub/sub/.crushrc", OFF_RC);
    p.write("repo/sub/.crushrc", ON_RC);
    let (made, _) = catalog
        .made(|uri| p.start_in("repo", &["-c", "sub"], &[], uri))
        .await;
    assert_eq!(made, 0);
    // No such folder: no project file, the global one decides.
    let p = Project::new();
    p.write(GLOBAL_RC, OFF_RC);
    p.write("repo/sub/.crushrc", ON_RC);
    let (made, run) = catalog
        .made(|uri| p.start_in("repo", &["-c", "sub"], &[], uri))
        .await;
    assert_eq!(made, 0);
    assert!(
        words(&run.stderr).contains(&format!(
            "cannot look at {}",
            p.path("repo/sub/sub").display()
        )),
        "{run:?}"
    );
    // The default workspace.
    let p = Project::new();
    fs::create_dir_all(p.path("repo/sub/sub")).unwrap();
    p.write("repo/sub/sub/sub/.crush/crush.json", OFF_JSON);
    let (made, _) = catalog
        .made(|uri| p.start_in("repo", &["--cwd", "sub"], &[], uri))
        .await;
    assert_eq!(made, 0);
    // Absolute, it is the folder named.
    let p = Project::new();
    p.write("repo/sub/sub/.crushrc", OFF_RC);
    let sub = p.path("repo/sub");
    let (made, _) = catalog
        .made(|uri| p.start_in("repo", &["-c", sub.to_str().unwrap()], &[], uri))
        .await;
    assert_eq!(made, 1);
}

/// Item 4. Go's `os.Getwd` answers `$PWD` when it names the working
/// folder: from a folder reached by a symbolic link, Crush walks up the
/// link's parents; with a `$PWD` naming another folder, the physical
/// path's. So does this.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn the_working_folder_is_named_as_go_names_it() {
    let catalog = Catalog::start().await;
    let p = Project::new();
    p.write("linked/.crushrc", OFF_RC);
    std::os::unix::fs::symlink(p.path("repo/sub"), p.path("linked/here")).unwrap();
    let (made, _) = catalog
        .made(|uri| p.start_in("linked/here", &[], &[], uri))
        .await;
    assert_eq!(made, 0, "the link's parent's file");
    let (made, _) = catalog
        .made(|uri| {
            p.start_in(
                "linked/here",
                &[],
                &[("PWD", p.path("repo").to_str().unwrap())],
                uri,
            )
        })
        .await;
    assert_eq!(made, 1, "$PWD names another folder: the physical path");
}

/// Item 5. A value of `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` Go's
/// `strconv.ParseBool` refuses (Crush v0.90 then reads updates on, over
/// its files) is told and ignored: it never turns the network on where a
/// file, by either order, turned it off.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_environment_value_never_turns_the_network_on() {
    let catalog = Catalog::start().await;
    for value in ["maybe", "", " 1", "yes"] {
        let env = [("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", value)];
        for (files, expected) in [
            (vec![(GLOBAL_STATE, OFF_JSON), (GLOBAL_RC, ON_RC)], 0),
            (vec![("repo/sub/crushrc", OFF_RC)], 0),
            (vec![], 1),
        ] {
            let p = Project::new();
            for (rel, text) in &files {
                p.write(rel, text);
            }
            let (made, run) = catalog.made(|uri| p.start(&env, uri)).await;
            assert_eq!(made, expected, "{value:?} {files:?}");
            let told = match value {
                "" => "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE is set but empty: ignored here, the files decide".to_string(),
                v => format!("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=\"{v}\" is not a boolean"),
            };
            assert!(
                words(&run.stderr).contains(&words(&told)),
                "{told}\n{run:?}"
            );
        }
    }
}

/// A stand-in Crush that writes what it was handed of
/// `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` (`unset` when nothing) to
/// `$STANDIN_OUT`, and answers `--version` as v0.90.0, which keeps its own
/// updates unless a reading turned them off.
#[cfg(unix)]
const RECORDING_CRUSH: &str = "#!/bin/sh\n\
if [ \"$1\" = --version ]; then echo 'crush version 0.90.0'; exit 0; fi\n\
printf '%s' \"${CRUSH_DISABLE_PROVIDER_AUTO_UPDATE-unset}\" > \"$STANDIN_OUT\"\n";

#[cfg(unix)]
impl Project {
    /// `crush [flags] run` in `cwd` through the front (this binary as
    /// `crush` ahead of [`RECORDING_CRUSH`] on `PATH`, git after them
    /// unless `git` is false), once its background refresh has ended; and
    /// what Crush was handed of its updates.
    fn through_front(
        &self,
        cwd: &str,
        flags: &[&str],
        env: &[(&str, &str)],
        uri: &str,
        git: bool,
    ) -> String {
        let (front, crush) = (self.path("bin-front"), self.path("bin-crush"));
        if !front.exists() {
            fs::create_dir_all(&front).unwrap();
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crush"), front.join("crush")).unwrap();
            fs::create_dir_all(&crush).unwrap();
            write_program(&crush.join("crush"), RECORDING_CRUSH);
        }
        let mut path = vec![front, crush];
        path.extend(git_only_path().filter(|_| git).map(Path::to_path_buf));
        let out = self.path("handed");
        let _ = fs::remove_file(&out);
        let args: Vec<&str> = flags.iter().copied().chain(["run"]).collect();
        let mut cmd = self.command(cwd, &args, env, uri);
        cmd.env("PATH", std::env::join_paths(path).unwrap())
            .env("STANDIN_OUT", &out);
        Run::from(cmd.output().unwrap()).ok();
        self.home.wait_for_the_helper();
        fs::read_to_string(out).expect("Crush started")
    }
}

/// Items 1 to 5 through the front: a start that a reading turns off sends
/// no request (its refresh stays home) and tells Crush, which may read its
/// settings otherwise, to ask nothing either; one all readings leave on
/// refreshes once and hands Crush its own setting.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn through_the_front_every_reading_keeps_the_network_off() {
    let catalog = Catalog::start().await;
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, &'a str)>,
        &'a str,
        Vec<&'a str>,
        Vec<(&'a str, &'a str)>,
        bool,
        usize,
    );
    let cases: Vec<Case> = vec![
        (
            "Crush's order: state above global crushrc",
            vec![(GLOBAL_STATE, OFF_JSON), (GLOBAL_RC, ON_RC)],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "Crush's order: crushrc above .crush.json",
            vec![
                ("repo/sub/crushrc", OFF_RC),
                ("repo/sub/.crush.json", ON_JSON),
            ],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "the spec's order: .crush.json above crushrc",
            vec![
                ("repo/sub/crushrc", ON_RC),
                ("repo/sub/.crush.json", OFF_JSON),
            ],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "a line inside an if",
            vec![(
                "repo/sub/crushrc",
                "if [ -n \"$X\" ]; then\n  option provider-auto-update false\nfi\n",
            )],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "a value from a variable",
            vec![("repo/sub/crushrc", "option default-providers $V\n")],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "a command substitution",
            vec![(
                "repo/sub/crushrc",
                "x=$(option provider-auto-update false)\n",
            )],
            "repo/sub",
            vec![],
            vec![],
            true,
            0,
        ),
        (
            "no git: the working folder alone",
            vec![(GLOBAL_RC, OFF_RC), ("repo/.crushrc", ON_RC)],
            "repo/sub",
            vec![],
            vec![],
            false,
            0,
        ),
        (
            "a relative -c taken twice",
            vec![
                ("repo/sub/sub/.crushrc", OFF_RC),
                ("repo/sub/.crushrc", ON_RC),
            ],
            "repo",
            vec!["-c", "sub"],
            vec![],
            true,
            0,
        ),
        (
            "a bad value beside a file off",
            vec![("repo/sub/crushrc", OFF_RC)],
            "repo/sub",
            vec![],
            vec![("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "maybe")],
            true,
            0,
        ),
        (
            "every reading on",
            vec![],
            "repo/sub",
            vec![],
            vec![],
            true,
            1,
        ),
    ];
    for (case, files, cwd, flags, env, git, expected) in cases {
        let p = Project::new();
        for (rel, text) in &files {
            p.write(rel, text);
        }
        let mut handed = String::new();
        let (made, _) = catalog
            .made(|uri| {
                handed = p.through_front(cwd, &flags, &env, uri, git);
                Run::from(Command::new("true").output().unwrap())
            })
            .await;
        assert_eq!(made, expected, "{case}");
        let told = if expected == 0 { "1" } else { "unset" };
        assert_eq!(handed, told, "{case}");
    }
    // The working folder through a symbolic link, as Go names it.
    let p = Project::new();
    p.write("linked/.crushrc", OFF_RC);
    std::os::unix::fs::symlink(p.path("repo/sub"), p.path("linked/here")).unwrap();
    let mut handed = String::new();
    let (made, _) = catalog
        .made(|uri| {
            handed = p.through_front("linked/here", &[], &[], uri, true);
            Run::from(Command::new("true").output().unwrap())
        })
        .await;
    assert_eq!(
        (made, handed.as_str()),
        (0, "1"),
        "the link's parent's file"
    );
}
