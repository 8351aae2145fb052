//! Every failure names its real cause and a next step that works, in the
//! project's own words: each case a user met where the tool once blamed the
//! wrong thing, run through the real binary.

use std::fs;

use crate::common::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A plain `http://` URL is sent to the proxy itself (no tunnel): what
/// fails before an answer is the proxy's, and it is named with its
/// variable. A loopback URL never goes through a proxy (Go's rule), so
/// its failure is its own.
#[test]
fn a_proxy_for_plain_http_is_named() {
    // Both ports were bound and released here: a fixed port number could
    // belong to another test's server running alongside. The mirror's
    // name is never looked up: the request goes to the proxy.
    let target = "http://catalog.mirror.corp.test/";
    let home = Home::new();
    let refused = closed_port_url();
    let run = home.run_env(&["update-providers", target], &[("HTTP_PROXY", &refused)]);
    run.fails_with(&[
        &format!(
            "the proxy {refused} (from HTTP_PROXY) cannot be reached: it refused the connection"
        ),
        "check HTTP_PROXY",
    ]);
    let run = home.run_env(
        &["update-providers", target, "--timeout", "5"],
        &[("HTTP_PROXY", "http://proxy.invalid:3128")],
    );
    run.fails_with(&["the proxy http://proxy.invalid:3128 (from HTTP_PROXY) cannot be reached"]);
    assert!(!run.stderr.contains("the name catalog"), "{run:?}");
    assert_plain(&run);
    // A loopback mirror is reached directly whatever HTTP_PROXY says.
    let loopback = format!("{}/", closed_port_url());
    let port = loopback.trim_end_matches('/').rsplit(':').next().unwrap();
    for proxy in [("HTTP_PROXY", refused.as_str()), ("http_proxy", &refused)] {
        let run = home.run_env(&["update-providers", &loopback], &[proxy]);
        run.fails_with(&[&format!("127.0.0.1:{port} refused the connection")]);
        assert!(!run.stderr.contains("the proxy"), "{run:?}");
    }
}

/// A redirect whose target fails: the target is blamed, and the redirect
/// said.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_redirect_target_is_named() {
    let closed = closed_port_url();
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(302).insert_header("location", format!("{closed}/moved.json")),
    )
    .await;
    let home = Home::new();
    let run = home.run(&["update-providers", &server.uri()]);
    let port = closed.rsplit(':').next().unwrap();
    run.fails_with(&[&format!(
        "redirected to {closed}/moved.json: 127.0.0.1:{port} refused the connection"
    )]);
}

/// `https://` to a server that speaks plain HTTP says so, and what to write.
#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_server_says_so() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(CATALOG_A),
    )
    .await;
    let url = server.uri().replace("http://", "https://");
    let home = Home::new();
    let run = home.run(&["update-providers", &url]);
    run.fails_with(&[
        "answered in plain HTTP, not TLS",
        "use http:// instead of https://",
    ]);
    assert_plain(&run);
}

/// What looks like a URL without its scheme, or with one this does not
/// read, is a usage error saying so, not a missing file.
#[test]
fn hosts_and_other_schemes_are_not_read_as_files() {
    let home = Home::new();
    for (arg, words) in [
        (
            "mirror.corp/catwalk/",
            "there is no file mirror.corp/catwalk/; for a URL, write its scheme: https://mirror.corp/catwalk/",
        ),
        (
            "127.0.0.1:45187",
            "for a URL, write its scheme: http://127.0.0.1:45187",
        ),
        (
            "catwalk.charm.land",
            "for a URL, write its scheme: https://catwalk.charm.land",
        ),
        ("htp://mirror.corp/x", "htp:// is not a scheme this reads"),
        (
            "ftp://files.example/providers.json",
            "ftp:// is not a scheme this reads",
        ),
    ] {
        let run = home.run(&["update-providers", arg]);
        run.usage_error();
        assert!(run.stderr.contains(words), "{arg}: {run:?}");
        // The help of the command that was given, not only the program's.
        assert!(
            run.stderr
                .contains("hint: run `crush update-providers --help` for usage"),
            "{run:?}"
        );
    }
    // A missing file that is a file's name stays a missing file.
    for file in ["providers.json", "providers.json.bak"] {
        home.run(&["update-providers", file])
            .fails_with(&[file, "cannot read"]);
    }
}

/// Broken JSON is described in plain words, where it is and what stands
/// there; the line is named once.
#[test]
fn broken_json_is_described_plainly() {
    let home = Home::new();
    for (text, words) in [
        ("", "not a valid catalog\n  caused by: it is empty"),
        (
            "hello",
            "not JSON: a JSON value was expected, found `h` (line 1, column 1)",
        ),
        (
            "[{\"id\":\"a\",\"name\":\"A\"},\n]",
            "not JSON: a comma before a closing bracket, found `]` (line 2, column 1)",
        ),
    ] {
        let (_dir, file) = temp_file("bad.json", text.as_bytes());
        let run = home.run(&["update-providers", file.to_str().unwrap()]);
        run.fails_with(&[words]);
        // The place is named once, in brackets.
        assert!(run.stderr.matches("line ").count() <= 1, "{run:?}");
        assert!(
            !run.stderr.contains("EOF while parsing") && !run.stderr.contains("expected ident"),
            "{run:?}"
        );
    }
}

/// An unreadable SSL_CERT_FILE is named, and why, in plain words.
#[test]
fn a_missing_ssl_cert_file_is_named() {
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", "https://127.0.0.1:9/"],
        &[("SSL_CERT_FILE", "/nonexistent.pem")],
    );
    run.fails_with(&[
        "cannot read SSL_CERT_FILE /nonexistent.pem: there is no such file",
        "point SSL_CERT_FILE at a readable PEM file, or unset it",
    ]);
    assert!(!run.stderr.contains("entity not found"), "{run:?}");
}

/// A server's HTML error page is not quoted; an HTML page where a catalog
/// was expected points at a login or proxy page only when it came from a
/// URL.
#[tokio::test(flavor = "multi_thread")]
async fn html_pages_are_told_not_quoted() {
    let server = MockServer::start().await;
    Mock::given(path("/missing/v2/providers"))
        .respond_with(ResponseTemplate::new(404).set_body_string(
            "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body><center><h1>404 Not Found</h1></center><hr><center>nginx/1.22.1</center></body></html>",
        ))
        .mount(&server)
        .await;
    Mock::given(path("/login/v2/providers"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("<!DOCTYPE html><html>Sign in</html>"),
        )
        .mount(&server)
        .await;
    let home = Home::new();
    let run = home.run(&["update-providers", &format!("{}/missing", server.uri())]);
    run.fails_with(&["server answered 404 Not Found\n  hint: check the URL"]);
    assert!(
        !run.stderr.contains("<html") && !run.stderr.contains("nginx"),
        "{run:?}"
    );
    let run = home.run(&["update-providers", &format!("{}/login", server.uri())]);
    run.fails_with(&[
        "an HTML page, not a JSON catalog",
        "a login page or a proxy's page",
    ]);
    let (_dir, file) = temp_file("page.html", b"<html><body>notes</body></html>");
    let run = home.run(&["update-providers", file.to_str().unwrap()]);
    run.fails_with(&[
        "an HTML page, not a JSON catalog",
        "check that the source is a Catwalk v2 provider catalog",
    ]);
    assert!(!run.stderr.contains("proxy"), "{run:?}");
}

/// `--output` names its own failures by its path, before anything is
/// downloaded; `-` is standard output.
#[test]
fn output_is_checked_and_dash_is_standard_output() {
    let home = Home::new();
    let (dir, source) = temp_file("c.json", CATALOG_A.as_bytes());
    let source = source.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    let run = home.run(&["update-providers", source, "--output", folder]);
    run.fails_with(&[
        &format!("error: {folder}: cannot write the catalog there\n  caused by: it is a folder, not a file's path (such as {folder}/providers.json)"),
    ]);
    let missing = dir.path().join("no/such/folder/out.json");
    let run = home.run(&[
        "update-providers",
        source,
        "--output",
        missing.to_str().unwrap(),
    ]);
    run.fails_with(&[
        &format!("error: {}: cannot write the catalog there\n  caused by: the folder {} does not exist, and is not made", missing.display(), missing.parent().unwrap().display()),
        "give --output the path of a file in a folder that exists",
    ]);
    assert!(
        !run.stderr.contains(".out.json.") && !run.stderr.contains("free space"),
        "{run:?}"
    );
    assert!(!dir.path().join("no").exists());

    let run = home.run(&["update-providers", source, "--output", "-"]);
    run.ok();
    assert_eq!(run.stdout, CATALOG_A, "the catalog, byte for byte");
    assert!(
        words(&run.stderr).contains("; written to standard output"),
        "{run:?}"
    );
    assert!(home.cache().is_none(), "the cache is not touched");
    home.run(&["update-providers", source, "--output", "-", "--json"])
        .usage_error();
}

/// A data folder whose path runs through a file says so, and what to do:
/// not the permissions and free space of a write that failed otherwise.
#[test]
fn a_data_folder_under_a_file_is_named_as_such() {
    let home = Home::new();
    let file = home.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let run = home.run_env(
        &["update-providers", "embedded"],
        &[("XDG_DATA_HOME", file.to_str().unwrap())],
    );
    run.fails_with(&[
        &format!("cannot create the data folder {}/crush", file.display()),
        "caused by: a part of its path is not a folder",
        "hint: a file stands where a folder of that path should be",
        "set XDG_DATA_HOME to another folder",
    ]);
    assert!(!run.stderr.contains("free space"), "{run:?}");
}

/// `--json` keeps standard output JSON when the command fails.
#[test]
fn json_commands_fail_in_json() {
    let home = Home::new();
    let run = home.run(&["update-providers", "missing.json", "--json"]);
    assert_eq!(run.code, Some(1));
    let error = &run.json()["error"];
    assert_eq!(error["source"], "missing.json");
    assert!(
        error["cause"].as_str().unwrap().starts_with("cannot read"),
        "{error}"
    );
    // A missing file has nothing to do with permissions (issue 29
    // findings, C8).
    assert_eq!(error["hint"], "check the path");
    let run = home.run_env(
        &["models", "--json", "nothing-matches"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.json()["error"]["cause"]
            .as_str()
            .unwrap()
            .contains("no model matches")
    );
}

/// A bad config blocks no recovery: `update-providers` passes it over
/// with a warning, as Crush's reads no configuration (a crushrc, and a
/// project's file, pin no key: issue 35, item 10).
#[test]
fn a_bad_config_blocks_no_recovery() {
    let home = Home::new();
    let rc = home.path().join("crushrc");
    fs::write(&rc, "option provider-auto-update perhaps\n").unwrap();
    let run = home.run(&["update-providers", "embedded", "--dry-run"]);
    run.ok();
    assert!(
        run.stderr.contains("crushrc:1") && words(&run.stderr).contains("passes it over"),
        "{run:?}"
    );
    home.run(&["providers"]).fails_with(&["crushrc"]);
    fs::remove_file(&rc).unwrap();
    fs::write(home.path().join("crush.json"), "{not json").unwrap();
    home.run(&["update-providers", "embedded"]).ok();
    let (_dir, file) = temp_file("c.json", CATALOG_A.as_bytes());
    let run = home.run(&["update-providers", file.to_str().unwrap(), "--allow-shrink"]);
    run.ok();
    assert!(run.stderr.contains("crush.json"), "{run:?}");
}

/// Installed under another name, the program says that name: in usage,
/// help, `--version`, completions and hints.
#[cfg(unix)]
#[test]
fn the_invoked_name_is_the_one_shown() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("crush-providers");
    copy_program(std::path::Path::new(env!("CARGO_BIN_EXE_crush")), &exe);
    let home = Home::new();
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(args)
            .env_clear()
            .env("HOME", home.path())
            .env("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1");
        Run::from(cmd.output().unwrap())
    };
    assert!(
        run(&["--version"])
            .stdout
            .starts_with("crush-providers 0.1.0")
    );
    let help = run(&["update-providers", "--help"]);
    assert!(
        help.stdout
            .contains("Usage: crush-providers update-providers"),
        "{help:?}"
    );
    assert!(
        help.stdout
            .contains("  crush-providers update-providers embedded"),
        "{help:?}"
    );
    let completion = run(&["completion", "bash"]);
    assert!(
        completion.stdout.contains("crush-providers"),
        "{completion:?}"
    );
    assert!(!completion.stdout.contains("_crush()"), "{completion:?}");
    let usage = run(&["update-providers", "--bogus"]);
    assert_eq!(usage.code, Some(2));
    assert!(usage.stderr.contains("crush-providers"), "{usage:?}");
    let none = run(&["models", "nothing-matches"]);
    assert!(
        none.stderr
            .contains("`crush-providers provider-models` lists them all"),
        "{none:?}"
    );
    // A start's warning too.
    fs::create_dir_all(home.cache_file().parent().unwrap()).unwrap();
    fs::write(home.cache_file(), "not a catalog").unwrap();
    let invalid = run(&["providers"]);
    assert!(
        invalid
            .stderr
            .contains("crush-providers update-providers --keep-current"),
        "{invalid:?}"
    );
}

/// An unchanged catalog is already up to date: its bytes are not written
/// again, only the confirmation; `--check` answers with its exit code.
#[test]
fn an_unchanged_catalog_is_already_up_to_date_and_check_says_so() {
    let home = Home::new();
    let (_dir, a) = temp_file("a.json", CATALOG_A.as_bytes());
    let a = a.to_str().unwrap();
    home.run(&["update-providers", a, "--allow-shrink"]).ok();
    let written = fs::metadata(home.cache_file()).unwrap().modified().unwrap();
    // As if that update had been a minute ago: the confirmation to come is
    // later, in whole seconds, without sleeping past one.
    home.backdate_state(60);
    let confirmed = home.state().unwrap()["confirmed_at"].as_u64().unwrap();
    let run = home.run(&["update-providers", a]);
    run.ok();
    assert!(run.stdout.starts_with("Already up to date: "), "{run:?}");
    assert_eq!(
        fs::metadata(home.cache_file()).unwrap().modified().unwrap(),
        written
    );
    assert!(home.state().unwrap()["confirmed_at"].as_u64().unwrap() > confirmed);
    assert_eq!(home.run(&["update-providers", a, "--check"]).code, Some(0));
    let (_dir2, b) = temp_file("b.json", CATALOG_A2.as_bytes());
    let run = home.run(&["update-providers", b.to_str().unwrap(), "--check"]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(run.stdout.contains("dry run: nothing written"), "{run:?}");
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    home.run(&["update-providers", "missing.json", "--check"])
        .fails_with(&["missing.json"]);
}

/// A price raised and a context window cut are changes, named old and new,
/// in text and in JSON.
#[test]
fn prices_and_context_windows_are_reported() {
    let home = Home::new();
    let before = r#"[{"id":"p","name":"P","models":[{"id":"m","cost_per_1m_in":10,"context_window":200000}]}]"#;
    let after =
        r#"[{"id":"p","name":"P","models":[{"id":"m","cost_per_1m_in":99,"context_window":5}]}]"#;
    home.run_stdin(
        &["update-providers", "-", "--allow-shrink"],
        before.as_bytes(),
    )
    .ok();
    let run = home.run_stdin(&["update-providers", "-"], after.as_bytes());
    run.ok();
    assert!(
        run.stdout
            .contains("  changes: providers 1 changed; models 1 changed"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(
            "  ~ p: 1 model changed\n      m: context_window 200000 → 5, cost_per_1m_in 10 → 99\n"
        ),
        "{run:?}"
    );
    home.run_stdin(&["update-providers", "-"], before.as_bytes())
        .ok();
    let json = home
        .run_stdin(&["update-providers", "-", "--json"], after.as_bytes())
        .json();
    assert_eq!(
        json["changes"]["providers_changed"][0]["models_changed"][0]["fields"],
        serde_json::json!([
            {"field": "cost_per_1m_in", "before": 10.0, "after": 99.0},
            {"field": "context_window", "before": 200000, "after": 5}
        ])
    );
}

/// Issue 29, said right: a download slower than `--timeout` says how far
/// it got of how much, not that it stopped; a start that waits
/// (`providers --wait`) names the only bound it takes, and offers no
/// offline set-up to a person who is online.
#[test]
fn a_slow_download_says_how_far_it_got_and_the_bound_it_takes() {
    let url = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 606845\r\n\r\n[");
        for _ in 0..300 {
            if s.write_all(&[b' '; 300]).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    let home = Home::new();
    let run = home.run(&["update-providers", &url, "--timeout", "1"]);
    run.fails_with(&[
        "the download did not finish in time: ",
        " of 606845 bytes in 1 s",
    ]);
    assert!(!run.stderr.contains("stopped"), "{run:?}");
    let run = home.run_env(
        &["providers", "--wait", "--json"],
        &[("CATWALK_URL", &url), ("CRUSH_PROVIDER_TIMEOUT", "1")],
    );
    run.ok();
    let warning = words(&run.stderr);
    assert!(
        warning.contains(" of 606845 bytes in 1 s; raise the bound above 1 s with CRUSH_PROVIDER_TIMEOUT (seconds)"),
        "{run:?}"
    );
    assert!(
        !warning.contains("--timeout") && !warning.contains("provider-auto-update"),
        "providers takes no --timeout: {run:?}"
    );
}

/// A server that answers, but not in HTTP (a mail or database server on
/// that port), is named as such: nothing broke off.
#[test]
fn an_answer_that_is_not_http_is_named() {
    for answer in [
        &b"220 mail.example ESMTP\r\n"[..],
        b"HTTP/1.1 abc OK\r\n\r\n",
    ] {
        let url = raw_server(move |s| {
            use std::io::Write;
            let _ = s.write_all(answer);
        });
        let home = Home::new();
        let run = home.run(&["update-providers", &url]);
        let target = url.trim_start_matches("http://");
        run.fails_with(&[
            &format!("{target} answered something that is not HTTP (invalid HTTP"),
            "hint: check the URL: another kind of server listens on that port",
        ]);
        assert!(!run.stderr.contains("broke off"), "{run:?}");
    }
}

/// A retry that works (`providers --wait`) is not preceded by the warning
/// of the failure it retried.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_that_worked_says_nothing_of_the_failure_before_it() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let closed = closed_port_url();
    let every_start = ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");
    home.run_env(
        &["providers", "--json"],
        &[("CATWALK_URL", &closed), every_start],
    )
    .ok();
    assert_eq!(home.wait_for_refresh(&None)["outcome"], "failed");
    home.wait_for_the_helper();
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(CATALOG_A2),
    )
    .await;
    let run = home.run_env(
        &["providers", "--wait", "--json"],
        &[("CATWALK_URL", &server.uri()), every_start],
    );
    run.ok();
    assert!(run.stderr.is_empty(), "{run:?}");
    assert_eq!(run.stdout, CATALOG_A2);
}

/// A plain-http request's proxy answering 407 wants credentials, which go
/// in its URL: said so, not "check the URL".
#[test]
fn a_plain_http_proxy_that_wants_credentials_says_where_they_go() {
    let proxy = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 0\r\n\r\n",
        );
    });
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", "http://catalog.mirror.corp.test/"],
        &[("HTTP_PROXY", &proxy)],
    );
    run.fails_with(&[
        &format!("the proxy {proxy} (from HTTP_PROXY) wants credentials: it answered 407 Proxy Authentication Required"),
        "put them in the proxy's URL: HTTP_PROXY=http://user:password@host:port",
    ]);
    assert!(!run.stderr.contains("check the URL"), "{run:?}");
}

/// Files are named as what they are: a byte-order mark by its name, not
/// as an invisible character; a missing file without the system's `(os
/// error 2)`; a config file's line once.
#[test]
fn files_are_described_in_plain_words() {
    let home = Home::new();
    let (_dir, bom) = temp_file("bom.json", "\u{feff}[]".as_bytes());
    let run = home.run(&["update-providers", bom.to_str().unwrap()]);
    run.fails_with(&["not JSON: it starts with a byte-order mark (U+FEFF), which JSON does not allow: save it as UTF-8 without one"]);
    assert!(
        !run.stderr.contains('\u{feff}') && !run.stderr.contains("\\u{feff}"),
        "{run:?}"
    );
    for args in [
        &["update-providers", "/nonexistent/providers.json"][..],
        &[
            "update-providers",
            "-",
            "--signature",
            "/nonexistent.minisig",
        ],
    ] {
        let run = home.run_env(
            args,
            &[("CRUSH_PROVIDER_PUBLIC_KEY", &Signer::new().public_key())],
        );
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(run.stderr.contains("there is no such file"), "{run:?}");
        assert!(!run.stderr.contains("os error"), "{run:?}");
    }
    let config = home.path().join(".config/crush/crush.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    for (text, said) in [
        (
            "{\"options\": \n",
            "line 2: not valid JSON: it ends before the JSON is complete",
        ),
        (
            "{\"a\": tru}",
            "line 1: not valid JSON at column 10: an unknown word",
        ),
        (
            "\u{feff}{}",
            "line 1: not valid JSON: it starts with a byte-order mark (U+FEFF)",
        ),
    ] {
        fs::write(&config, text).unwrap();
        let run = home.run(&["providers"]);
        run.fails_with(&[said]);
        assert_eq!(run.stderr.matches("line").count(), 1, "{run:?}");
        assert!(
            !run.stderr.contains("EOF") && !run.stderr.contains(" at line "),
            "{run:?}"
        );
    }
}

/// Help and errors show a minisign key as it starts (`RW`), not every key
/// as `RWQ…`.
#[test]
fn keys_are_shown_as_minisign_writes_them() {
    let home = Home::new();
    let help = home.run(&["update-providers", "--help"]);
    let run = home.run_env(
        &["update-providers", "embedded", "--dry-run"],
        &[("CRUSH_PROVIDER_PUBLIC_KEY", "not-a-key")],
    );
    for text in [&help.stdout, &run.stderr] {
        assert!(!text.contains("RWQ"), "{text}");
    }
    assert!(
        run.stderr
            .contains("the second line of its .pub file, which starts with RW"),
        "{run:?}"
    );
}

/// `--output FILE` says it wrote that file and left the cache alone.
#[test]
fn an_output_file_is_not_an_update_of_the_cache() {
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let run = home.run(&[
        "update-providers",
        "embedded",
        "--output",
        out.to_str().unwrap(),
    ]);
    run.ok();
    assert!(!run.stdout.contains("Updated"), "{run:?}");
    assert!(
        run.stdout
            .starts_with("Checked providers from embedded snapshot"),
        "{run:?}"
    );
    assert!(
        words(&run.stdout).ends_with(&format!(
            "written to {}; the cache is not touched",
            out.display()
        )),
        "{run:?}"
    );
    assert!(home.cache().is_none());
}

/// Issue 29 findings, W4: a proxy answering 407 to credentials already in
/// its URL refused them: said so, with the user (never the password), not
/// "put them in the proxy's URL".
#[test]
fn a_proxy_refusing_the_credentials_it_was_given_says_so() {
    let proxy = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 0\r\n\r\n",
        );
    });
    let with_user = proxy.replace("http://", "http://u:s3cret@");
    let home = Home::new();
    for (target, variable) in [
        ("https://catalog.mirror.corp.test/", "HTTPS_PROXY"),
        ("http://catalog.mirror.corp.test/", "HTTP_PROXY"),
    ] {
        let run = home.run_env(&["update-providers", target], &[(variable, &with_user)]);
        run.fails_with(&[
            &format!("the proxy {proxy} (from {variable}) refused the credentials in its URL (user \"u\"): it answered 407 Proxy Authentication Required"),
            &format!("check the user name and password in {variable}"),
        ]);
        assert!(!run.stderr.contains("put them in"), "{run:?}");
        assert!(!run.stderr.contains("s3cret"), "{run:?}");
    }
}

/// Issue 29 findings, W8: for an http:// URL the hints name HTTP_PROXY,
/// the variable Go (and this tool) takes a proxy for it from.
#[test]
fn an_http_url_hints_http_proxy() {
    let html = raw_server(|s| {
        use std::io::Write;
        let body = "<!DOCTYPE html><html><body>Sign in</body></html>";
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    });
    let broken = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n[{\"id\":");
    });
    let home = Home::new();
    for (url, says) in [
        (
            &html,
            "check the URL, and HTTP_PROXY if a proxy is in the way",
        ),
        (&broken, "check the network and the proxy (HTTP_PROXY)"),
    ] {
        let run = home.run(&["update-providers", url]);
        run.fails_with(&[says]);
        assert!(!run.stderr.contains("HTTPS_PROXY"), "{run:?}");
    }
    // At start-up too.
    let run = home.run_env(
        &["providers", "--wait"],
        &[
            ("CATWALK_URL", &broken),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    );
    run.ok();
    assert!(
        run.stderr.contains("the proxy (HTTP_PROXY)") && !run.stderr.contains("HTTPS_PROXY"),
        "{run:?}"
    );
}

/// Issue 29 findings, C8: a missing file's hint is the path alone, a
/// folder's the file inside it; neither speaks of permissions.
#[test]
fn a_missing_file_or_a_folder_gets_its_own_hint() {
    let home = Home::new();
    let run = home.run(&["update-providers", "nosuch.json"]);
    run.fails_with(&[
        "nosuch.json: cannot read\n  caused by: there is no such file\n  hint: check the path",
    ]);
    assert!(!run.stderr.contains("permissions"), "{run:?}");
    let dir = tempfile::tempdir().unwrap();
    let run = home.run(&["update-providers", dir.path().to_str().unwrap()]);
    run.fails_with(&[
        "caused by: it is a folder, not a file\n  hint: give the path of the catalog file inside it",
    ]);
    assert!(!run.stderr.contains("permissions"), "{run:?}");
}

/// Runs the binary with `url`, a URL with a password, as
/// `update-providers`' SOURCE (it fails) and as the start-up refresh of
/// `crush providers --wait` (it warns), then starts again without
/// waiting (its helper refreshes in the background); asserts that the
/// password is in none of their outputs nor in the state file, and that
/// `shown`, the URL as it may be shown (`u:***`), is in the error, the
/// warning and the state file.
#[track_caller]
fn no_password_anywhere(url: &str, env: &[(&str, &str)], shown: &str) {
    let home = Home::new();
    let run = home.run_env(&["update-providers", url], env);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(!run.stderr.contains("SECRET"), "{run:?}");
    assert!(run.stderr.contains(shown), "{run:?}");
    let state = fs::read_to_string(home.state_file()).unwrap_or_default();
    assert!(!state.contains("SECRET"), "{state}");

    let home = Home::new();
    let mut startup = vec![
        ("CATWALK_URL", url),
        ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
    ];
    startup.extend_from_slice(env);
    let run = home.run_env(&["providers", "--wait"], &startup);
    assert!(!run.stderr.contains("SECRET"), "{run:?}");
    assert!(run.stderr.contains(shown), "{run:?}");
    let state = fs::read_to_string(home.state_file()).unwrap();
    assert!(!state.contains("SECRET"), "{state}");
    assert!(state.contains(shown), "{state}");
    let run = home.run_env(&["providers"], &startup);
    home.wait_for_the_helper();
    assert!(!run.stderr.contains("SECRET"), "{run:?}");
    let state = fs::read_to_string(home.state_file()).unwrap();
    assert!(!state.contains("SECRET"), "{state}");
    assert!(state.contains(shown), "{state}");
}

/// A same-origin redirect with a relative Location keeps the first URL's
/// user and password in the URL it leads to: where it led is shown and
/// recorded with its password replaced by `***`, in the error, in the
/// start-up warning and in the state file's cause.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_never_shows_the_urls_password() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(302).insert_header("location", "/moved/v2/providers"),
    )
    .await;
    let port = server.address().port();
    let url = format!("http://u:SECRET@127.0.0.1:{port}");
    let shown = format!("redirected to http://u:***@127.0.0.1:{port}/moved/v2/providers");
    no_password_anywhere(&url, &[], &shown);
}

/// With a pinned key, a mirror behind a password whose `.minisig` is
/// missing: the signature's URL is shown with its password replaced.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_signature_never_shows_the_urls_password() {
    let server = serve_at(
        "/cat/v2/providers",
        ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await;
    let port = server.address().port();
    let key = Signer::new().public_key();
    let url = format!("http://u:SECRET@127.0.0.1:{port}/cat");
    let shown = format!("http://u:***@127.0.0.1:{port}/cat/v2/providers.minisig");
    no_password_anywhere(&url, &[("CRUSH_PROVIDER_PUBLIC_KEY", &key)], &shown);
}
