//! End-to-end tests of the read-side commands (`crush providers`, `crush
//! models`, `crush dirs`) and of the settings that turn the refresh off
//! (the refresh itself: tests/background.rs): the real binary, wiremock on
//! loopback, and a temporary HOME.

use std::fs;

use crate::common::*;
use wiremock::matchers::{any, header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ETAG: &str = "\"abc123\"";
const LAST_MODIFIED: &str = "Tue, 01 Sep 2026 10:00:00 GMT";

/// A server whose catalog is `body`, sent with an ETag and Last-Modified.
async fn catalog_server(body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/providers"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("etag", ETAG)
                .insert_header("last-modified", LAST_MODIFIED)
                .set_body_string(body),
        )
        .mount(&server)
        .await;
    server
}

/// Runs `crush ARGS` against `server` as the Catwalk base URL.
fn run_against(home: &Home, server: &MockServer, args: &[&str], env: &[(&str, &str)]) -> Run {
    let uri = server.uri();
    let mut all = vec![("CATWALK_URL", uri.as_str())];
    all.extend_from_slice(env);
    home.run_env(args, &all)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_cache_is_ignored_with_a_warning() {
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    home.set_cache(b"[{\"id\": \"half");
    let server = catalog_server(CATALOG_A).await;
    let run = run_against(&home, &server, &["providers", "--json"], &[]);
    run.ok();
    assert!(
        run.stderr
            .contains("the provider catalog that another program wrote")
            && run.stderr.contains("is not valid"),
        "{run:?}"
    );
    assert_eq!(
        run.stdout.as_bytes(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    // The start recorded the hold of what it put aside; the refresh it
    // started then recorded its own outcome.
    home.wait_for_the_helper();
    assert_eq!(home.last_refresh().unwrap()["outcome"], "updated");
    let requests = server.received_requests().await.unwrap();
    // The corrupt file was put aside, and the embedded snapshot put in its
    // place: its validator is what is asked with.
    let embedded = crush_providers::catalog::embedded::catalog_bytes();
    let etag = crush_providers::internals::digest::catwalk_etag(
        &crush_providers::internals::digest::sha256(embedded),
    );
    assert_eq!(received(&requests, "if-none-match"), [etag.as_str()]);
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

/// Turning updates off by any means: no request at all; the cache if valid
/// (so a manual update still counts), else the embedded snapshot.
#[tokio::test(flavor = "multi_thread")]
async fn auto_update_off_never_touches_the_network() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    type Way<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);
    let ways: Vec<Way> = vec![
        ("crushrc", "option provider-auto-update false\n", vec![]),
        (".crushrc", "option provider-auto-update no\n", vec![]),
        (
            "crush.json",
            r#"{"options":{"disable_provider_auto_update":true}}"#,
            vec![],
        ),
        (
            ".config/crush/crushrc",
            "option provider-auto-update 0\n",
            vec![],
        ),
        (
            "unused",
            "",
            vec![("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
        ),
        (
            "unused",
            "",
            vec![("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "TRUE")],
        ),
    ];
    for (file, text, env) in ways {
        let home = Home::new();
        if !text.is_empty() {
            let path = home.path().join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let run = run_against(&home, &server, &["providers", "-d"], &env);
        run.ok();
        assert!(
            run.provenance().starts_with("embedded snapshot"),
            "{file}: {run:?}"
        );
        assert!(run.told().is_empty(), "{run:?}");
        home.accept(CATALOG_B.as_bytes());
        let run = run_against(&home, &server, &["providers", "--json"], &env);
        assert_eq!(
            run.stdout, CATALOG_B,
            "{file}: a manual update takes effect"
        );
        // Another program's garbage: put aside, and the last catalog
        // reviewed here put back and used.
        home.set_cache(b"garbage");
        let run = run_against(&home, &server, &["models", "--json"], &env);
        run.ok();
        assert!(run.stderr.contains("is not valid"), "{run:?}");
        let models = run.json();
        let providers: std::collections::BTreeSet<&str> = models
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["provider"].as_str().unwrap())
            .collect();
        let reviewed: serde_json::Value = serde_json::from_str(CATALOG_B).unwrap();
        let reviewed: std::collections::BTreeSet<&str> = reviewed
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(providers, reviewed, "{file}: {run:?}");
        assert_eq!(home.cache().unwrap(), CATALOG_B.as_bytes(), "{file}");
    }
    server.verify().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn environment_set_but_false_turns_updates_back_on() {
    let server = catalog_server(CATALOG_A).await;
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    fs::write(
        home.path().join("crushrc"),
        "option provider-auto-update false\n",
    )
    .unwrap();
    let run = run_against(
        &home,
        &server,
        &["providers", "-d"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "false")],
    );
    run.ok();
    assert!(
        run.provenance()
            .contains("; fetching the current catalog in the background"),
        "{run:?}"
    );
    assert_eq!(home.wait_for_refresh(&None)["outcome"], "updated");
    let run = run_against(
        &home,
        &server,
        &["providers", "--status"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "maybe")],
    );
    run.ok();
    assert!(
        run.stderr
            .contains("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=\"maybe\" is not a boolean"),
        "{run:?}"
    );
    let rc = home.path().join("crushrc").canonicalize().unwrap();
    assert!(
        run.stdout.contains(&format!(
            "provider-auto-update: off (option at {}:1)",
            rc.display()
        )),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_reports_cache_and_setting_origin_without_network() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let home = Home::new();
    let proj = home.path().join("proj");
    git_init(&proj);
    fs::write(
        proj.join("crushrc"),
        "# air-gapped laptop\n\noption provider-auto-update false\n",
    )
    .unwrap();
    let first = catalog_server(CATALOG_A).await;
    run_against(&home, &first, &["update-providers", "--allow-shrink"], &[]).ok();

    let proj_str = proj.to_str().unwrap();
    let run = run_against(
        &home,
        &server,
        &["-c", proj_str, "providers", "--status"],
        &[],
    );
    run.ok();
    let rc = proj.canonicalize().unwrap().join("crushrc");
    for expected in [
        format!("cache:                {}", home.cache_file().display()),
        format!("source:               {}/v2/providers", first.uri()),
        format!("etag:                 {ETAG}"),
        format!("last-modified:        {LAST_MODIFIED}"),
        "catalog:              2 providers, 3 models".to_string(),
        format!("provider-auto-update: off (option at {}:3)", rc.display()),
        "default-providers:    on (default)".to_string(),
    ] {
        assert!(
            run.stdout.contains(&expected),
            "missing {expected:?}: {run:?}"
        );
    }
    let status = run_against(
        &home,
        &server,
        &["providers", "--status", "--json", "--cwd", proj_str],
        &[],
    )
    .json();
    assert_eq!(status["cache_state"], "valid");
    assert_eq!(status["providers"], 2);
    assert_eq!(status["models"], 3);
    assert_eq!(status["etag"], ETAG);
    assert_eq!(status["provider_auto_update"]["value"], false);
    assert_eq!(
        status["provider_auto_update"]["origin"],
        format!("option at {}:3", rc.display())
    );
    assert!(status["age_seconds"].as_u64().unwrap() < 60);
    server.verify().await;
}

#[test]
fn cwd_flag_sets_the_project_walk() {
    let home = Home::new();
    let repo = home.path().join("repo");
    git_init(&repo);
    fs::create_dir_all(repo.join("a/b")).unwrap();
    fs::write(repo.join(".crushrc"), "option provider-auto-update false\n").unwrap();
    let status = home
        .run(&[
            "providers",
            "--status",
            "--json",
            "-c",
            repo.join("a/b").to_str().unwrap(),
        ])
        .json();
    assert_eq!(status["provider_auto_update"]["value"], false);
    let status = home.run(&["providers", "--status", "--json"]).json();
    assert_eq!(
        status["provider_auto_update"]["value"], true,
        "HOME is outside the repo"
    );
    home.run(&["providers", "-c", "/no/such/folder"])
        .usage_error();
}

#[test]
fn default_providers_off_means_an_empty_catalog() {
    let home = Home::new();
    fs::write(
        home.path().join("crushrc"),
        "option default-providers false\n",
    )
    .unwrap();
    let run = home.run(&["providers"]);
    run.ok();
    let rc = home.path().canonicalize().unwrap().join("crushrc");
    assert_eq!(
        run.stdout,
        format!(
            "No providers: default-providers is off (option at {}:1).\n",
            rc.display()
        )
    );
    assert_eq!(home.run(&["providers", "--json"]).stdout, "[]");
    assert_eq!(
        home.run(&["models", "--json"]).json(),
        serde_json::json!([])
    );
    assert!(
        home.run(&["models"])
            .stdout
            .starts_with("No models: default-providers is off")
    );
}

#[test]
fn models_lists_filters_and_prints_json() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let off = [("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")];
    // On a pipe, bare `provider/model` lines, sorted, as Crush prints
    // them (the table is a terminal's: tests/it/terminal.rs).
    let run = home.run_env(&["models"], &off);
    run.ok();
    assert_eq!(
        run.stdout, "alpha/a-large\nalpha/a-small\nbeta/b1\n",
        "{run:?}"
    );
    let run = home.run_env(&["models", "ALPHA", "small"], &off);
    assert_eq!(run.stdout, "alpha/a-small\n", "{run:?}");
    let run = home.run_env(&["models", "beta"], &off);
    assert_eq!(run.stdout, "beta/b1\n", "{run:?}");
    let json = home.run_env(&["models", "--json", "a-large"], &off).json();
    assert_eq!(
        json,
        serde_json::json!([{
            "provider": "alpha", "id": "a-large", "name": "A Large", "context_window": 200000,
            "default_max_tokens": 8192, "cost_per_1m_in": 3.0, "cost_per_1m_out": 15.0,
            "can_reason": true, "supports_attachments": null
        }])
    );
    // Nothing found is a failure a script can test, as with grep.
    let run = home.run_env(&["models", "nothing-matches"], &off);
    run.fails_with(&[
        "crush provider-models: no model matches \"nothing-matches\"",
        "`crush provider-models` lists them all",
    ]);
    assert!(run.stdout.is_empty(), "{run:?}");
}

#[test]
fn config_errors_name_file_and_line_and_exit_1() {
    let home = Home::new();
    fs::write(
        home.path().join("crushrc"),
        "option default-providers true\noption provider-auto-update sometimes\n",
    )
    .unwrap();
    let run = home.run(&["providers"]);
    run.fails_with(&[
        "crushrc",
        "line 2",
        "\"sometimes\" is not a boolean",
        "fix or remove that file",
    ]);
    fs::write(
        home.path().join("crushrc"),
        "if true; then\n  option provider-auto-update false\nfi\n",
    )
    .unwrap();
    let run = home.run(&["providers", "--status"]);
    run.ok();
    assert!(run.stderr.contains("crushrc:2: `option provider-auto-update false` skipped: inside an if block opened at line 1"), "{run:?}");
    // Counted as off: Crush's shell may run it (issue 35 item 2).
    assert!(
        run.stdout.contains(&format!(
            "provider-auto-update: off (a command at {}:2 only a shell can evaluate, counted as off)",
            home.path().join("crushrc").display()
        )),
        "{run:?}"
    );
}

#[test]
fn dirs_prints_the_three_locations() {
    let home = Home::new();
    let run = home.run(&["dirs"]);
    run.ok();
    let h = home.path().display();
    assert_eq!(
        run.stdout,
        format!(
            "config: {h}/.config/crush\ndata:   {h}/.local/share/crush\ncache:  {h}/.local/share/crush/providers.json\n"
        )
    );
    let run = home.run_env(
        &["dirs"],
        &[
            ("XDG_CONFIG_HOME", "/x/config"),
            ("XDG_DATA_HOME", "/x/data"),
        ],
    );
    assert!(
        run.stdout
            .contains("config: /x/config/crush\ndata:   /x/data/crush\n"),
        "{run:?}"
    );
}

#[test]
fn version_help_and_completions() {
    let home = Home::new();
    let run = home.run(&["--version"]);
    run.ok();
    assert_eq!(
        run.stdout,
        format!(
            "crush {} (embedded snapshot: Catwalk v0.52.6, released 2026-08-21)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    for command in ["update-providers", "providers", "models", "completion"] {
        let run = home.run(&[command, "--help"]);
        run.ok();
        assert!(run.stdout.contains("Examples:"), "{command}: {run:?}");
    }
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = home.run(&["completion", shell]);
        run.ok();
        assert!(run.stdout.contains("update-providers"), "{shell}: {run:?}");
    }
    home.run(&["completion", "tcsh"]).usage_error();
}

#[tokio::test(flavor = "multi_thread")]
async fn warnings_go_to_stderr_so_json_stays_parseable() {
    let server = MockServer::start().await;
    Mock::given(header_exists("user-agent"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let home = Home::new();
    let run = run_against(&home, &server, &["providers", "--json", "--wait"], &[]);
    run.ok();
    assert!(run.stderr.contains("warning:"), "{run:?}");
    let parsed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(parsed.as_array().unwrap().len() >= 10);
}

/// Issue 29 findings, C3: a cache that is not valid is told with the
/// command that replaces it.
#[test]
fn a_broken_cache_is_told_with_the_command_that_replaces_it() {
    let home = Home::new();
    home.set_cache(b"[{\"id\":");
    let run = home.run_env(
        &["providers"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    run.ok();
    // Put aside, the embedded snapshot in its place, and the way to keep
    // it so named.
    assert!(
        run.stderr.contains("is not valid")
            && run.stderr.contains("put aside as")
            && run.stderr.contains("crush update-providers --keep-current"),
        "{run:?}"
    );
    assert_eq!(
        home.cache().unwrap(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
}

/// Issue 29 findings, C8: a failed refresh's hint names the crushrc that
/// turns updates off, the one in Crush's configuration folder.
#[test]
fn a_failed_refresh_names_the_crushrc_to_write() {
    let home = Home::new();
    let url = closed_port_url();
    let env = [
        ("CATWALK_URL", url.as_str()),
        ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
    ];
    home.run_env(&["providers"], &env).ok();
    assert_eq!(home.wait_for_refresh(&None)["outcome"], "failed");
    home.wait_for_the_helper();
    let run = home.run_env(&["providers"], &env);
    run.ok();
    let crushrc = home.path().join(".config/crush/crushrc");
    assert!(
        words(&run.stderr).contains(&format!(
            "set `option provider-auto-update false` in {}",
            crushrc.display()
        )),
        "{run:?}"
    );
}

/// Issue 29 findings, C9: a failure `providers --wait` showed is told:
/// the next start does not tell it again.
#[test]
fn a_failure_shown_by_wait_is_not_told_again() {
    let home = Home::new();
    home.run(&["update-providers", "-q", "embedded"]).ok();
    let url = closed_port_url();
    let env = [
        ("CATWALK_URL", url.as_str()),
        ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
    ];
    let run = home.run_env(&["providers", "--wait"], &env);
    run.ok();
    assert!(run.stderr.contains("could not refresh"), "{run:?}");
    assert_eq!(home.state().unwrap()["refresh"]["told"], true);
    let run = home.run_env(
        &["providers"],
        &[
            ("CATWALK_URL", url.as_str()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "1h"),
        ],
    );
    run.ok();
    assert!(!run.stderr.contains("failed"), "{run:?}");
}

/// `providers --status` says the embedded snapshot in the cache was
/// installed there, never fetched: nothing came from a server (issue 36).
#[test]
fn the_embedded_snapshot_is_installed_not_fetched() {
    let home = Home::new();
    home.run(&["update-providers", "embedded", "-q"]).ok();
    let run = home.run_env(
        &["providers", "--status"],
        &[("CATWALK_URL", &closed_port_url())],
    );
    run.ok();
    let row = |key: &str| run.stdout.lines().any(|line| line.starts_with(key));
    assert!(row("source:               embedded snapshot"), "{run:?}");
    assert!(row("installed:            "), "{run:?}");
    assert!(!row("fetched:"), "{run:?}");
    // Nor confirmed current: no server was asked.
    assert!(!row("confirmed current:"), "{run:?}");
}
