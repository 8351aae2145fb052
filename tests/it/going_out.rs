//! "May I go out?", answered as Crush answers it: every way a user turns
//! the network off, or points it elsewhere, that Crush honours, honoured
//! here, end to end against the real binary with a temporary HOME and
//! project folder. Where no request may be made, a loopback server that
//! must see none stands in for the catalog, and a counting proxy for the
//! rest of the network: a request to any other host would reach it.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::*;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A HOME and, inside it, a git work tree `repo` whose folder `sub` is
/// the working directory.
struct Project {
    home: Home,
    repo: PathBuf,
    cwd: PathBuf,
}

impl Project {
    fn new() -> Project {
        let home = Home::new();
        let repo = home.path().canonicalize().unwrap().join("repo");
        let cwd = repo.join("sub");
        fs::create_dir_all(&cwd).unwrap();
        git_init(&repo);
        Project { home, repo, cwd }
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        path.to_owned()
    }

    /// The binary, started in the working directory.
    fn crush(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = crush_in(self.home.path(), args);
        cmd.current_dir(&self.cwd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        Run::from(self.crush(args, env).output().unwrap())
    }

    fn status(&self, env: &[(&str, &str)]) -> serde_json::Value {
        let run = self.run(&["providers", "--status", "--json"], env);
        run.ok();
        run.json()
    }
}

/// A catalog server that must see no request at all.
async fn silent_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    server
}

/// A catalog server that answers every request with the embedded catalog
/// and gamma.
async fn catalog_server() -> MockServer {
    let server = MockServer::start().await;
    // A first fetch must keep half of the embedded snapshot (issue 25).
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string(embedded_and_gamma()))
        .mount(&server)
        .await;
    server
}

/// A proxy on loopback that counts the connections made to it and refuses
/// every request: set as the proxy for both schemes, it sees any request
/// to a host that is not this machine.
fn counting_proxy() -> (String, Arc<AtomicUsize>) {
    use std::io::Write;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (url, count)
}

const OFF_RC: &str = "option provider-auto-update false\n";

/// `CRUSH_DISABLE_DEFAULT_PROVIDERS=1`: no catalog, and no request at
/// all, even waited for; `--status` names the variable; set but false, it
/// turns a file's `option default-providers false` back on.
#[tokio::test(flavor = "multi_thread")]
async fn default_providers_off_by_the_environment_makes_no_request() {
    let server = silent_server().await;
    let p = Project::new();
    let env = [
        ("CATWALK_URL", server.uri()),
        ("CRUSH_DISABLE_DEFAULT_PROVIDERS", "1".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for args in [
        &["providers"][..],
        &["providers", "--wait"],
        &["models", "--json"],
    ] {
        let run = p.run(args, &env);
        run.ok();
        assert!(
            run.stdout.starts_with(
                "No providers: default-providers is off (CRUSH_DISABLE_DEFAULT_PROVIDERS=1)"
            ) || run.stdout == "[]\n",
            "{run:?}"
        );
    }
    let status = p.status(&env);
    assert_eq!(
        status["default_providers"]["origin"],
        "CRUSH_DISABLE_DEFAULT_PROVIDERS=1"
    );
    assert_eq!(status["refresh"]["allowed"], false);
    server.verify().await;
    p.write(&p.cwd.join("crushrc"), "option default-providers false\n");
    let status = p.status(&[("CRUSH_DISABLE_DEFAULT_PROVIDERS", "false")]);
    assert_eq!(status["default_providers"]["value"], true);
}

/// A `.env` file in the folder the process starts in is loaded as Crush
/// loads it: without overriding a variable already set, quotes and
/// comments read as godotenv reads them, and not from the `--cwd` folder.
#[tokio::test(flavor = "multi_thread")]
async fn a_dotenv_file_turns_updates_off() {
    let server = silent_server().await;
    let p = Project::new();
    let dotenv = p.write(
        &p.cwd.join(".env"),
        "# Crush on the air-gapped laptop\nexport CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=\"1\" # off\n",
    );
    let uri = server.uri();
    let run = p.run(&["providers", "--wait", "-d"], &[("CATWALK_URL", &uri)]);
    run.ok();
    assert!(run.provenance().starts_with("embedded snapshot"), "{run:?}");
    let status = p.status(&[("CATWALK_URL", &uri)]);
    assert_eq!(
        status["provider_auto_update"]["origin"],
        format!(
            "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1 at {}:2",
            dotenv.display()
        )
    );
    assert_eq!(
        status["dotenv"]["sets"],
        serde_json::json!(["CRUSH_DISABLE_PROVIDER_AUTO_UPDATE"])
    );
    server.verify().await;
    // A variable already set wins, even empty: the file sets nothing.
    let status = p.status(&[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "")]);
    assert_eq!(status["provider_auto_update"]["value"], true);
    assert_eq!(
        status["dotenv"]["shadowed"],
        serde_json::json!(["CRUSH_DISABLE_PROVIDER_AUTO_UPDATE"])
    );
    // `--cwd` moves the project walk, not the .env Crush loads.
    let elsewhere = p.home.path().join("elsewhere");
    p.write(
        &elsewhere.join(".env"),
        "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=0\n",
    );
    let elsewhere = elsewhere.to_str().unwrap();
    let run = p.run(&["providers", "--status", "--json", "-c", elsewhere], &[]);
    assert_eq!(
        run.json()["provider_auto_update"]["value"],
        false,
        "{run:?}"
    );
    // One bad line and nothing of the file is loaded, as in Crush: said.
    p.write(
        &dotenv,
        "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1\nnot-a-name=2\n",
    );
    let run = p.run(&["providers", "--status", "--json"], &[]);
    run.ok();
    assert_eq!(run.json()["provider_auto_update"]["value"], true);
    assert!(
        run.stderr
            .contains("line 2: unexpected character \"-\" in variable name"),
        "{run:?}"
    );
    // A .env cannot pin a key: only the user does.
    p.write(&dotenv, "CRUSH_PROVIDER_PUBLIC_KEY=RWQxxxx\n");
    let run = p.run(&["providers", "--status", "--json"], &[]);
    assert_eq!(run.json()["public_keys"], serde_json::Value::Null);
    assert!(
        run.stderr
            .contains(".env:1: CRUSH_PROVIDER_PUBLIC_KEY is not taken from a .env file"),
        "{run:?}"
    );
}

/// JSON configs as Go reads them: keys in any letter case, `null` as an
/// absent value, and files merged before they are decoded.
#[tokio::test(flavor = "multi_thread")]
async fn json_configs_are_read_as_go_reads_them() {
    let server = silent_server().await;
    let p = Project::new();
    let uri = server.uri();
    let env = [("CATWALK_URL", uri.as_str())];
    let file = p.write(
        &p.cwd.join("crush.json"),
        r#"{"Options": {"Disable_Provider_Auto_Update": true}}"#,
    );
    p.run(&["providers", "--wait"], &env).ok();
    assert_eq!(
        p.status(&env)["provider_auto_update"]["origin"],
        format!("Options.Disable_Provider_Auto_Update in {}", file.display())
    );
    server.verify().await;
    p.write(&file, r#"{"options": null}"#);
    assert_eq!(p.status(&[])["provider_auto_update"]["value"], true);
    // A wrongly typed value in a lower file that a higher one overrides.
    p.write(
        &p.home.path().join(".config/crush/crush.json"),
        r#"{"options": {"disable_provider_auto_update": "yes"}}"#,
    );
    p.write(
        &file,
        r#"{"options": {"disable_provider_auto_update": true}}"#,
    );
    let run = p.run(&["providers", "--status", "--json"], &[]);
    run.ok();
    assert_eq!(run.json()["provider_auto_update"]["value"], false);
    assert!(
        run.stderr.contains("(a boolean) replaces a string from"),
        "{run:?}"
    );
    // Left wrong after the merge: Crush refuses to start, and this says so.
    p.write(&file, "{}");
    p.run(&["providers"], &[]).fails_with(&[
        "options.disable_provider_auto_update must be true or false, not a string",
        "Crush refuses to start on it",
    ]);
}

/// A `CATWALK_URL` that is not an http(s) URL is told at every start and
/// makes no request anywhere (never the public server instead), and is a
/// SOURCE for `update-providers`, as in Crush.
#[test]
fn a_catwalk_url_without_a_scheme_goes_nowhere() {
    let p = Project::new();
    let (proxy, connections) = counting_proxy();
    let env = [
        ("CATWALK_URL", "mirror.corp:8080"),
        ("HTTPS_PROXY", proxy.as_str()),
        ("HTTP_PROXY", proxy.as_str()),
    ];
    for args in [
        &["providers"][..],
        &["providers", "--wait"],
        &["models", "--json"],
    ] {
        let run = p.run(args, &env);
        run.ok();
        assert!(
            run.stderr.contains("warning: CATWALK_URL=\"mirror.corp:8080\" is not an http:// or https:// URL: no refresh at start-up")
                && run.stderr.contains("CATWALK_URL=https://mirror.corp:8080"),
            "{run:?}"
        );
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    assert!(p.home.state().is_none(), "no refresh recorded");
    let status = p.status(&env);
    assert_eq!(status["refresh"]["allowed"], false);
    assert_eq!(
        status["catwalk_url"]["origin"],
        "CATWALK_URL=mirror.corp:8080"
    );
    // As a SOURCE: a file Crush would read, `embedded`, or a usage hint.
    let run = p.run(&["update-providers"], &env);
    run.usage_error();
    assert!(
        run.stderr.contains("CATWALK_URL=\"mirror.corp:8080\" names no file; for a URL, write its scheme: CATWALK_URL=https://mirror.corp:8080"),
        "{run:?}"
    );
    let file = p.write(&p.cwd.join("local.json"), CATALOG_A);
    p.run(
        &["update-providers", "--allow-shrink"],
        &[("CATWALK_URL", file.to_str().unwrap())],
    )
    .ok();
    assert_eq!(p.home.cache().unwrap(), CATALOG_A.as_bytes());
    p.run(&["update-providers"], &[("CATWALK_URL", "embedded")])
        .ok();
    assert_eq!(
        p.home.cache().unwrap(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}

/// The system file, below every other: honoured, and overridden.
#[tokio::test(flavor = "multi_thread")]
async fn the_system_file_is_read_below_everything() {
    let server = silent_server().await;
    let p = Project::new();
    let system = p.write(
        &p.home.path().join("etc/crush/crush.json"),
        r#"{"options": {"disable_provider_auto_update": true}}"#,
    );
    let uri = server.uri();
    p.run(&["providers", "--wait"], &[("CATWALK_URL", &uri)])
        .ok();
    let status = p.status(&[]);
    assert_eq!(
        status["provider_auto_update"]["origin"],
        format!(
            "options.disable_provider_auto_update in {}",
            system.display()
        )
    );
    server.verify().await;
    p.write(
        &p.home.path().join(".local/share/crush/crush.json"),
        r#"{"options": {"disable_provider_auto_update": false}}"#,
    );
    assert_eq!(p.status(&[])["provider_auto_update"]["value"], true);
}

/// The workspace file: in `-D`, else `option data-directory`, else the
/// nearest `.crush` up to the project root, else `./.crush`.
#[test]
fn the_workspace_file_is_where_crush_keeps_its_data() {
    let p = Project::new();
    let off = r#"{"options": {"disable_provider_auto_update": true}}"#;
    let auto = |args: &[&str]| {
        let mut all = vec!["providers", "--status", "--json"];
        all.extend_from_slice(args);
        let json = p.run(&all, &[]).json();
        (
            json["provider_auto_update"]["value"].as_bool().unwrap(),
            json["workspace"]["origin"].as_str().unwrap().to_owned(),
        )
    };
    p.write(&p.cwd.join(".crush/crush.json"), off);
    assert_eq!(auto(&[]), (false, "the nearest .crush folder".into()));
    fs::remove_dir_all(p.cwd.join(".crush")).unwrap();
    p.write(&p.repo.join(".crush/crush.json"), off);
    assert!(!auto(&[]).0, "up to the project root");
    let flagged = p.home.path().join("flagged");
    p.write(&flagged.join("crush.json"), "{}");
    assert_eq!(
        auto(&["-D", flagged.to_str().unwrap()]),
        (true, "-D/--data-dir".into())
    );
    let rc = p.write(
        &p.cwd.join("crushrc"),
        "option data-directory ../../flagged\n",
    );
    assert_eq!(auto(&[]), (true, format!("option at {}:1", rc.display())));
}

/// A project file owned by another user than the working directory's is
/// passed over, and `--status` says which and why.
#[cfg(unix)]
#[test]
fn another_users_project_file_is_passed_over() {
    let p = Project::new();
    let rc = p.write(&p.repo.join("crushrc"), OFF_RC);
    assert_eq!(p.status(&[])["provider_auto_update"]["value"], false);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip_note("giving a file to another user needs root, and this runs as another");
        return;
    }
    std::os::unix::fs::chown(&rc, Some(4242), Some(4242)).unwrap();
    let status = p.status(&[]);
    assert_eq!(status["provider_auto_update"]["value"], true);
    assert_eq!(status["skipped_files"][0]["path"], rc.display().to_string());
    assert!(
        status["skipped_files"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("owned by user 4242, not by the working directory's owner (0)"),
        "{status}"
    );
}

/// The project root as `git rev-parse --show-toplevel` finds it: an empty
/// `.git` folder is no repository (the walk goes on up), and a broken
/// `.git` file makes git fail (the working directory alone).
#[test]
fn only_a_repository_ends_the_walk() {
    let p = Project::new();
    p.write(&p.repo.join(".crushrc"), OFF_RC);
    fs::create_dir_all(p.cwd.join(".git")).unwrap();
    let status = p.status(&[]);
    assert_eq!(status["provider_auto_update"]["value"], false);
    assert_eq!(status["project_root"], p.repo.display().to_string());
    fs::remove_dir_all(p.cwd.join(".git")).unwrap();
    p.write(&p.cwd.join(".git"), "gitdir: ../.git/worktrees/gone\n");
    let status = p.status(&[]);
    assert_eq!(status["provider_auto_update"]["value"], true);
    assert!(
        status["project_root"]
            .as_str()
            .unwrap()
            .contains("does not lead to a repository, and git fails"),
        "{status}"
    );
}

/// A loopback mirror is reached directly whatever the proxy variables say,
/// as Go's net/http reaches it; `--status` says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_loopback_mirror_never_goes_through_a_proxy() {
    let server = catalog_server().await;
    let p = Project::new();
    let (proxy, connections) = counting_proxy();
    let uri = server.uri();
    let env = [
        ("CATWALK_URL", uri.as_str()),
        ("HTTP_PROXY", proxy.as_str()),
        ("http_proxy", proxy.as_str()),
    ];
    let run = p.run(&["providers", "--wait", "-d"], &env);
    run.ok();
    assert!(run.provenance().starts_with("fresh from"), "{run:?}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    assert_eq!(
        p.status(&env)["proxy"],
        "none: a loopback host never goes through a proxy"
    );
}

/// `--status` shows every input a start uses and where it came from: the
/// catalog URL, the timeout, the proxy (never its password), the `.env`
/// file, the folders, the files read, the project root, the workspace.
#[test]
fn status_shows_every_input_and_its_origin() {
    let p = Project::new();
    let dotenv = p.write(
        &p.cwd.join(".env"),
        "CRUSH_PROVIDER_TIMEOUT=3\nHTTPS_PROXY=http://alice:s3cret@proxy.corp:3128\n",
    );
    let xdg = p.home.path().join("xdg");
    let rc = p.write(
        &xdg.join("crush/crushrc"),
        "option default-providers true\n",
    );
    let run = p.run(
        &["providers", "--status"],
        &[
            ("CATWALK_URL", "https://mirror.corp/catwalk"),
            ("XDG_CONFIG_HOME", xdg.to_str().unwrap()),
        ],
    );
    run.ok();
    let d = dotenv.display();
    for row in [
        "refresh at start-up:  allowed, from https://mirror.corp/catwalk/v2/providers".to_string(),
        "catalog URL:          https://mirror.corp/catwalk/v2/providers (CATWALK_URL=https://mirror.corp/catwalk)".into(),
        format!("refresh timeout:      3s (CRUSH_PROVIDER_TIMEOUT=3 at {d}:1)"),
        format!("proxy:                http://proxy.corp:3128 (HTTPS_PROXY=http://alice:***@proxy.corp:3128 at {d}:2)"),
        format!(".env:                 {d} (sets CRUSH_PROVIDER_TIMEOUT, HTTPS_PROXY)"),
        format!("config folder:        {}/crush (XDG_CONFIG_HOME={})", xdg.display(), xdg.display()),
        format!("config files:         {}", rc.display()),
        format!("project root:         {}", p.repo.display()),
        format!("workspace file:       {}/.crush/crush.json (default: ./.crush)", p.cwd.display()),
    ] {
        assert!(run.stdout.lines().any(|l| l == row), "{row:?} in {run:?}");
    }
    assert!(
        !run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"),
        "{run:?}"
    );
}

/// A password in `CATWALK_URL` or in a proxy variable is never shown, nor
/// kept in the cache's state: not in `providers`, `--status`, `--debug`,
/// nor in the warning about a `CATWALK_URL` that is no URL, and not for a
/// proxy written without its scheme (`user:pass@proxy:3128`).
#[tokio::test(flavor = "multi_thread")]
async fn passwords_are_never_shown() {
    let server = catalog_server().await;
    let p = Project::new();
    let with_password = server.uri().replace("http://", "http://alice:s3cret@");
    let env = [
        ("CATWALK_URL", with_password.as_str()),
        ("HTTPS_PROXY", "bob:s3cret@proxy.corp:3128"),
    ];
    let mut runs = vec![
        p.run(&["--debug", "providers", "--wait"], &env),
        p.run(&["--debug", "providers"], &env),
        p.run(&["providers", "--status"], &env),
        p.run(&["providers", "--status", "--json"], &env),
        p.run(&["--debug", "update-providers"], &env),
        p.run(
            &["providers"],
            &[("CATWALK_URL", "alice:s3cret@mirror.corp:8080")],
        ),
    ];
    runs.push(p.run(
        &["--debug", "update-providers", &with_password],
        &[("HTTPS_PROXY", "bob:s3cret@proxy.corp:3128")],
    ));
    for run in &runs {
        run.ok();
        assert!(
            !run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"),
            "{run:?}"
        );
    }
    assert!(runs[0].provenance().contains("alice:***@"), "{:?}", runs[0]);
    let state = fs::read_to_string(p.home.state_file()).unwrap();
    assert!(!state.contains("s3cret"), "{state}");
    assert!(server.received_requests().await.unwrap().len() >= 2);
}

/// A `CATWALK_URL` Go's `net/url` refuses makes no request in Crush: a
/// space or a line break around it (a URL parser that trims them would go
/// out), a control character or a backslash in it, a space in its host.
/// None goes out here either, and each is told; nor does a proxy value Go
/// refuses (a line break in it) send a request through that proxy.
#[tokio::test(flavor = "multi_thread")]
async fn a_catwalk_url_go_refuses_goes_nowhere() {
    let server = silent_server().await;
    let p = Project::new();
    let uri = server.uri();
    for url in [
        format!("{uri} "),
        format!("{uri}\n"),
        format!("{uri}\t"),
        format!("{uri}/a\u{7f}b"),
        format!("{uri}\\x"),
        uri.replace("127.0.0.1", "127.0.0.1 "),
    ] {
        let run = p.run(&["providers", "--wait"], &[("CATWALK_URL", &url)]);
        run.ok();
        // White space at the end is named (issue 29 findings, W7).
        let said = if url.trim_end() != url {
            "which is no part of a URL: no refresh at start-up"
        } else {
            "is not an http:// or https:// URL"
        };
        assert!(run.stderr.contains(said), "{url:?}: {run:?}");
    }
    server.verify().await;
    let (proxy, connections) = counting_proxy();
    let catalog = catalog_server().await;
    let target = catalog.uri().replace("127.0.0.1", "localhost.");
    let run = p.run(
        &["providers", "--wait"],
        &[
            ("CATWALK_URL", target.as_str()),
            ("HTTP_PROXY", &format!("{proxy}\n")),
        ],
    );
    run.ok();
    assert_eq!(connections.load(Ordering::SeqCst), 0, "{run:?}");
}

/// A FIFO where a configuration file is expected is never opened: Crush
/// would wait on it for good; this says what it is, in a message naming
/// it, and returns. Bytes that are not UTF-8 in a JSON string are read as
/// Go reads them; a JSON file of blanks alone is refused, as Crush
/// refuses it.
#[cfg(unix)]
#[test]
fn odd_config_files_are_read_as_go_reads_them_and_never_hang() {
    let p = Project::new();
    let fifo = p.cwd.join("crush.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p.run(&["providers"], &[]).fails_with(&[
        fifo.to_str().unwrap(),
        "cannot read: it is a FIFO, not a regular file",
    ]);
    fs::remove_file(&fifo).unwrap();
    fs::write(
        &fifo,
        b"{\"note\": \"d\xe9j\xe0 vu\", \"options\": {\"disable_provider_auto_update\": true}}",
    )
    .unwrap();
    assert_eq!(p.status(&[])["provider_auto_update"]["value"], false);
    fs::write(&fifo, "\n").unwrap();
    p.run(&["providers"], &[])
        .fails_with(&["holds only blanks, which is not JSON"]);
}

/// An empty or bad `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` is ignored here
/// (the spec), where Crush v0.90 reads it as false and goes out: both are
/// told, with where the empty one was set, never passed over in silence.
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_or_bad_environment_value_is_told() {
    let server = silent_server().await;
    let p = Project::new();
    p.write(&p.cwd.join("crushrc"), OFF_RC);
    let uri = server.uri();
    let run = p.run(
        &["providers", "--wait"],
        &[
            ("CATWALK_URL", &uri),
            ("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", ""),
        ],
    );
    run.ok();
    assert!(
        run.stderr.contains("warning: CRUSH_DISABLE_PROVIDER_AUTO_UPDATE is set but empty: ignored here, the files decide (Crush v0.90 reads it as false, which turns its own requests on)"),
        "{run:?}"
    );
    let dotenv = p.write(&p.cwd.join(".env"), "CRUSH_DISABLE_DEFAULT_PROVIDERS=\n");
    let run = p.run(
        &["providers", "--wait"],
        &[
            ("CATWALK_URL", &uri),
            ("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", " 1"),
        ],
    );
    run.ok();
    assert!(
        run.stderr.contains(&format!(
            "warning: CRUSH_DISABLE_DEFAULT_PROVIDERS is set but empty at {}:1",
            dotenv.display()
        )) && run
            .stderr
            .contains("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=\" 1\" is not a boolean"),
        "{run:?}"
    );
    server.verify().await;
}

/// Started in a folder reached through a symbolic link (`$PWD` keeps the
/// link), Crush walks up the link's parents, not the physical ones, and
/// compares each with the work tree's root once resolved: from a link to a
/// subfolder of the work tree it never meets the root, reads the link's
/// parent's project files and not the root's. So does this, from `$PWD`
/// and from `-c`, and `--status` says which files it read.
#[cfg(unix)]
#[test]
fn a_folder_reached_by_a_link_is_walked_up_as_crush_walks_it() {
    let p = Project::new();
    let deep = p.cwd.join("deep");
    fs::create_dir_all(&deep).unwrap();
    p.write(
        &p.repo.join(".crushrc"),
        "option provider-auto-update true\n",
    );
    let outer = p.write(&p.home.path().join(".crushrc"), OFF_RC);
    let link = p.home.path().join("link");
    std::os::unix::fs::symlink(&deep, &link).unwrap();
    let mut cmd = crush_in(p.home.path(), &["providers", "--status", "--json"]);
    cmd.current_dir(&link).env("PWD", &link);
    let run = Run::from(cmd.output().unwrap());
    run.ok();
    let status = run.json();
    assert_eq!(status["provider_auto_update"]["value"], false, "{run:?}");
    let files = status["config_files"].as_array().unwrap();
    assert!(
        files.iter().any(|f| f == outer.to_str().unwrap()),
        "{run:?}"
    );
    assert!(
        !files
            .iter()
            .any(|f| f.as_str().unwrap().starts_with(p.repo.to_str().unwrap())),
        "{run:?}"
    );
    let run = p.run(
        &[
            "providers",
            "--status",
            "--json",
            "-c",
            link.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(
        run.json()["provider_auto_update"]["value"],
        false,
        "{run:?}"
    );
    // Reached by its own path, the same folder walks up to the root.
    let run = p.run(
        &[
            "providers",
            "--status",
            "--json",
            "-c",
            deep.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.json()["provider_auto_update"]["value"], true, "{run:?}");
}
