//! End-to-end tests of `crush update-providers`: the real binary, a
//! temporary HOME, and loopback servers only.

use std::fs;
use std::io::Write;
use std::time::{Duration, Instant};

use crate::common::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn serve(route: &str, body: &[u8]) -> MockServer {
    let template = ResponseTemplate::new(200)
        .insert_header("content-type", "application/json")
        .insert_header("etag", "\"v1-etag\"")
        .insert_header("last-modified", "Tue, 01 Sep 2026 10:00:00 GMT")
        .set_body_bytes(body.to_vec());
    serve_at(route, template).await
}

/// Asserts the cache holds `before` (or nothing) and no temporary file.
#[track_caller]
fn assert_untouched(home: &Home, before: Option<&[u8]>) {
    assert_eq!(home.cache().as_deref(), before, "cache changed");
    for name in home.data_entries() {
        assert!(
            !name.ends_with(".tmp"),
            "temporary file left behind: {name}"
        );
    }
}

#[test]
fn embedded_resets_the_cache_to_the_snapshot() {
    let home = Home::new();
    let run = home.run(&["update-providers", "embedded"]);
    run.ok();
    assert!(
        run.stdout
            .starts_with("Updated providers from embedded snapshot: "),
        "{run:?}"
    );
    assert_eq!(
        home.cache().unwrap(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    assert_eq!(home.data_entries(), CACHE_FILES);
    assert!(
        words(&run.stdout).ends_with(&format!(
            "written to {} (nothing was there before)",
            home.cache_file().display()
        )),
        "{run:?}"
    );
}

/// A reset says what it replaces: the reader's real cache, fetched from
/// somewhere some time ago, or written by another program.
#[tokio::test(flavor = "multi_thread")]
async fn a_reset_says_what_it_replaces() {
    let server = serve("/v2/providers", embedded_and_gamma().as_bytes()).await;
    let home = Home::new();
    let url = format!("{}/v2/providers", server.uri());
    home.run(&["update-providers", &url]).ok();
    for (args, said) in [
        (
            &["update-providers", "embedded", "--dry-run"][..],
            "dry run: nothing written".to_string(),
        ),
        (
            &["update-providers", "embedded"],
            format!(
                "written to {}, replacing a catalog fetched from {url} just now",
                home.cache_file().display()
            ),
        ),
    ] {
        let run = home.run(args);
        run.ok();
        assert!(words(&run.stdout).ends_with(&said), "{run:?}");
    }
    // Written by Crush itself: no state says where from.
    home.set_cache(embedded_and_gamma().as_bytes());
    std::fs::remove_file(home.state_file()).unwrap();
    let run = home.run(&["update-providers", "embedded"]);
    run.ok();
    assert!(
        words(&run.stdout).contains(
            "replacing a catalog written just now by another program (such as Crush itself)"
        ),
        "{run:?}"
    );
    let json = home.run(&["update-providers", "embedded", "--json"]).json();
    assert_eq!(json["replaced"]["source"], "embedded snapshot", "{json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn default_source_is_catwalk_url_and_stores_validators() {
    let server = serve("/v2/providers", CATALOG_A.as_bytes()).await;
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", "--allow-shrink"],
        &[("CATWALK_URL", &server.uri())],
    );
    run.ok();
    assert!(
        words(&run.stdout).contains("2 providers, 3 models"),
        "{run:?}"
    );
    // Byte for byte: unknown fields, number spelling and white space survive.
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    let state: serde_json::Value =
        serde_json::from_slice(&fs::read(home.state_file()).unwrap()).unwrap();
    assert_eq!(state["etag"], "\"v1-etag\"");
    assert_eq!(state["last_modified"], "Tue, 01 Sep 2026 10:00:00 GMT");
    assert_eq!(state["sha256"], sha256_hex(CATALOG_A.as_bytes()));
    assert_eq!(state["source"], format!("{}/v2/providers", server.uri()));
}

#[tokio::test(flavor = "multi_thread")]
async fn base_urls_are_joined_with_exactly_one_slash() {
    let server = serve("/mirror/v2/providers", CATALOG_A.as_bytes()).await;
    for arg in [
        format!("{}/mirror/", server.uri()),
        format!("{}/mirror", server.uri()),
    ] {
        let home = Home::new();
        home.run(&["update-providers", &arg, "--allow-shrink"]).ok();
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes(), "{arg}");
    }
    let home = Home::new();
    let base = format!("{}/mirror///", server.uri());
    home.run_env(
        &["update-providers", "--allow-shrink"],
        &[("CATWALK_URL", &base)],
    )
    .ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_urls_are_fetched_as_given() {
    let server = serve("/files/catalog.json", CATALOG_A.as_bytes()).await;
    Mock::given(path("/x/v2/providers"))
        .respond_with(ResponseTemplate::new(200).set_body_string(CATALOG_B))
        .mount(&server)
        .await;
    let home = Home::new();
    home.run(&[
        "update-providers",
        &format!("{}/files/catalog.json", server.uri()),
        "--allow-shrink",
    ])
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    home.run(&[
        "update-providers",
        &format!("{}/x/v2/providers", server.uri()),
        // CATALOG_B moves beta's key.
        "--allow-key-move",
    ])
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_B.as_bytes());
}

/// A file given by a relative path is recorded by its full path:
/// `--status` and the next report, read in another folder, name the file
/// that was read.
#[test]
fn a_relative_file_is_recorded_by_its_full_path() {
    let home = Home::new();
    fs::create_dir(home.path().join("files")).unwrap();
    let file = home.path().join("files/catalog.json");
    fs::write(&file, CATALOG_A).unwrap();
    home.run(&["update-providers", "files/catalog.json", "--allow-shrink"])
        .ok();
    assert_eq!(home.state().unwrap()["source"], file.to_str().unwrap());
    // Read, not fetched; and confirmed current by no server.
    let run = home.run_env(
        &["providers", "--status"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    let row = |key: &str| run.stdout.lines().any(|line| line.starts_with(key));
    assert!(
        row(&format!("source:               {}", file.display())),
        "{run:?}"
    );
    assert!(row("read:                 "), "{run:?}");
    assert!(!row("fetched:") && !row("confirmed current:"), "{run:?}");
}

#[test]
fn local_file_file_url_and_stdin() {
    let (_dir, file) = temp_file("catalog.json", CATALOG_A.as_bytes());
    let home = Home::new();
    home.run(&["update-providers", file.to_str().unwrap(), "--allow-shrink"])
        .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());

    let (_dir2, file_b) = temp_file("b.json", CATALOG_B.as_bytes());
    let url = url::Url::from_file_path(&file_b).unwrap();
    // CATALOG_B moves beta's key.
    home.run(&["update-providers", url.as_str(), "--allow-key-move"])
        .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_B.as_bytes());

    let run = home.run_stdin(&["update-providers", "-"], CATALOG_A.as_bytes());
    run.ok();
    assert!(run.stdout.contains("from standard input"), "{run:?}");
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

#[test]
fn every_validation_error_is_refused_and_leaves_the_cache() {
    let cases: &[(&str, &[&str])] = &[
        ("", &["it is empty"]),
        ("{\"id\":\"a\"}", &["expected a JSON array of providers"]),
        ("[]", &["empty list"]),
        ("[1]", &["provider 0", "expected an object"]),
        (
            r#"[["a","A"]]"#,
            &["provider 0", "expected an object, found an array"],
        ),
        (
            r#"[{"id":"a"}]"#,
            &["provider 0 (\"a\")", "missing field `name`"],
        ),
        (r#"[{"name":"A"}]"#, &["missing field `id`"]),
        (r#"[{"id":"","name":"A"}]"#, &["provider 0", "id is empty"]),
        (
            r#"[{"id":"a","name":"A"},{"id":"a","name":"B"}]"#,
            &["provider 1 (\"a\")", "not unique"],
        ),
        (
            r#"[{"id":"a","name":"A","models":[{"name":"x"}]}]"#,
            &["models[0]", "missing field `id`"],
        ),
        (
            r#"[{"id":"a","name":"A","models":[{"id":"m"},{"id":"m"}]}]"#,
            &["models[1] (\"m\")", "not unique"],
        ),
        (
            r#"[{"id":"a","name":"A","models":[{"id":"m","context_window":"big"}]}]"#,
            &[
                "provider 0 (\"a\")",
                "models[0] (\"m\")",
                "field context_window",
                "expected an integer",
            ],
        ),
        (
            r#"[{"id":"a","name":"A","models":[{"id":"m","cost_per_1m_in":"3"}]}]"#,
            &["field cost_per_1m_in", "expected a number"],
        ),
        (
            r#"[{"id":"a","name":"A","api_endpoint":7}]"#,
            &["field api_endpoint"],
        ),
        (
            r#"[{"id":"a","name":"A","default_headers":[]}]"#,
            &["field default_headers"],
        ),
        (
            r#"[{"id":"a","name":"A","models":[{"id":"m","can_reason":"yes"}]}]"#,
            &["field can_reason"],
        ),
        (
            "<!DOCTYPE html><html><body>Sign in</body></html>",
            &["HTML page"],
        ),
        (
            "[{\"id\":\"a\",\"name\":\"A\"}",
            &["not JSON: it ends before the catalog is complete (line 1, column 22)"],
        ),
    ];
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    let before = home.cache().unwrap();
    for (json, parts) in cases {
        let (_dir, file) = temp_file("bad.json", json.as_bytes());
        let run = home.run(&["update-providers", file.to_str().unwrap()]);
        let mut expected = vec![file.to_str().unwrap(), "not a valid catalog"];
        expected.extend_from_slice(parts);
        run.fails_with(&expected);
        assert_untouched(&home, Some(&before));
    }
    let (_dir, file) = temp_file("latin1.json", b"[{\"id\":\"a\",\"name\":\"caf\xe9\"}]");
    home.run(&["update-providers", file.to_str().unwrap()])
        .fails_with(&["not UTF-8"]);
    assert_untouched(&home, Some(&before));
}

#[test]
fn unknown_default_model_is_a_warning_not_an_error() {
    let home = Home::new();
    let json =
        r#"[{"id":"a","name":"A","default_large_model_id":"missing","models":[{"id":"m"}]}]"#;
    let run = home.run_stdin(
        &["update-providers", "-", "--allow-shrink"],
        json.as_bytes(),
    );
    run.ok();
    assert!(
        run.stderr.contains(
            "warning: provider 0 (\"a\"): default_large_model_id \"missing\" names no model"
        ),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn http_error_statuses_quote_status_and_first_body_line() {
    let server = MockServer::start().await;
    Mock::given(path("/gone/v2/providers"))
        .respond_with(
            ResponseTemplate::new(404).set_body_string("\n  no such catalog here\nsecond line"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/broken/v2/providers"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream down"))
        .mount(&server)
        .await;
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    let before = home.cache();
    home.run(&["update-providers", &format!("{}/gone", server.uri())])
        .fails_with(&[
            "/gone/v2/providers",
            "404 Not Found",
            "no such catalog here",
            "check the URL",
        ]);
    assert_untouched(&home, before.as_deref());
    let run = home.run(&["update-providers", &format!("{}/broken", server.uri())]);
    run.fails_with(&[
        "503 Service Unavailable",
        "upstream down",
        "try again later",
    ]);
    assert!(!run.stderr.contains("second line"));
    assert_untouched(&home, before.as_deref());
}

#[tokio::test(flavor = "multi_thread")]
async fn html_instead_of_json_is_refused() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/html")
            .set_body_string("<html><head><title>Proxy login</title></head></html>"),
    )
    .await;
    let home = Home::new();
    home.run(&["update-providers", &server.uri()])
        .fails_with(&["HTML page"]);
    assert_untouched(&home, None);
}

#[test]
fn truncated_body_is_refused() {
    let url = raw_server(|s| {
        let _ =
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n[{\"id\":\"a\",\"name\":");
    });
    let home = Home::new();
    home.run(&["update-providers", &url])
        .fails_with(&["/v2/providers", "the answer broke off after "]);
    assert_untouched(&home, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn body_over_the_cap_is_refused() {
    let server = MockServer::start().await;
    let big = vec![b' '; 64 * 1024 * 1024 + 1];
    Mock::given(path("/v2/providers"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(big))
        .mount(&server)
        .await;
    let home = Home::new();
    home.run(&["update-providers", &server.uri()])
        .fails_with(&["larger than the limit of 64 MiB"]);
    assert_untouched(&home, None);
}

#[test]
fn endless_body_without_length_is_cut_at_the_cap() {
    let url = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[");
        let chunk = vec![b' '; 1 << 20];
        while s.write_all(&chunk).is_ok() {}
    });
    let home = Home::new();
    home.run(&["update-providers", &url])
        .fails_with(&["larger than the limit of 64 MiB"]);
    assert_untouched(&home, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn gzip_bomb_is_cut_at_the_cap() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..80 {
        encoder.write_all(&zeros).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    assert!(
        bomb.len() < 1 << 20,
        "the bomb should be small: {}",
        bomb.len()
    );
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200)
            .insert_header("content-encoding", "gzip")
            .set_body_bytes(bomb),
    )
    .await;
    let home = Home::new();
    home.run(&["update-providers", &server.uri()])
        .fails_with(&["larger than the limit of 64 MiB"]);
    assert_untouched(&home, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn gzip_encoded_catalog_is_accepted() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(CATALOG_A.as_bytes()).unwrap();
    let server = MockServer::start().await;
    Mock::given(path("/v2/providers"))
        .and(wiremock::matchers::header_regex("accept-encoding", "gzip"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-encoding", "gzip")
                .set_body_bytes(encoder.finish().unwrap()),
        )
        .mount(&server)
        .await;
    let home = Home::new();
    home.run(&["update-providers", &server.uri(), "--allow-shrink"])
        .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

#[tokio::test(flavor = "multi_thread")]
async fn redirects_are_followed_up_to_five_and_loops_refused() {
    let server = MockServer::start().await;
    for i in 0..5 {
        Mock::given(path(format!("/hop{i}/v2/providers")))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("/hop{}/v2/providers", i + 1)),
            )
            .mount(&server)
            .await;
    }
    Mock::given(path("/hop5/v2/providers"))
        .respond_with(ResponseTemplate::new(200).set_body_string(CATALOG_A))
        .mount(&server)
        .await;
    Mock::given(path("/loop/v2/providers"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/loop/v2/providers"))
        .mount(&server)
        .await;
    let home = Home::new();
    home.run(&[
        "update-providers",
        &format!("{}/hop0", server.uri()),
        "--allow-shrink",
    ])
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    let before = home.cache();
    home.run(&["update-providers", &format!("{}/loop", server.uri())])
        .fails_with(&["redirect refused", "more than 5 redirects"]);
    assert_untouched(&home, before.as_deref());
}

#[tokio::test(flavor = "multi_thread")]
async fn hang_is_bounded_by_timeout() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200)
            .set_body_string(CATALOG_A)
            .set_delay(Duration::from_secs(30)),
    )
    .await;
    let home = Home::new();
    let start = Instant::now();
    home.run(&["update-providers", &server.uri(), "--timeout", "0.5"])
        .fails_with(&["no answer came within 0.5 s", "raise the bound (--timeout"]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    assert_untouched(&home, None);
}

#[test]
fn dripping_server_is_bounded_by_timeout() {
    let url = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
        for _ in 0..100 {
            if s.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let home = Home::new();
    let start = Instant::now();
    home.run(&["update-providers", &url, "--timeout", "1"])
        .fails_with(&[
            "the download did not finish in time: ",
            " of 100000 bytes in 1 s",
        ]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn connection_refused_names_the_source_and_a_way_out() {
    let url = closed_port_url();
    let home = Home::new();
    let target = url.trim_start_matches("http://");
    home.run(&["update-providers", &url]).fails_with(&[
        &format!("{url}/v2/providers: {target} refused the connection"),
        "check the URL and that the server runs",
    ]);
}

#[test]
fn dry_run_changes_nothing() {
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    let before = home.cache();
    // The embedded catalog's 40 providers down to 2: allowed explicitly.
    let run = home.run_stdin(
        &["update-providers", "-", "--dry-run", "--allow-shrink"],
        CATALOG_A.as_bytes(),
    );
    run.ok();
    assert!(run.stdout.contains("dry run"), "{run:?}");
    assert!(run.stdout.contains("+ 2 providers: alpha, beta"), "{run:?}");
    assert_untouched(&home, before.as_deref());
}

#[test]
fn output_writes_elsewhere_and_leaves_the_cache() {
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    let before = home.cache();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("mirror.json");
    let out_str = out.to_str().unwrap();
    let run = home.run_stdin(
        &["update-providers", "-", "--output", out_str],
        CATALOG_A.as_bytes(),
    );
    run.ok();
    assert!(run.stdout.contains(out_str), "{run:?}");
    assert_eq!(fs::read(&out).unwrap(), CATALOG_A.as_bytes());
    assert_untouched(&home, before.as_deref());
    let names: Vec<_> = fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["mirror.json"]);
}

#[test]
fn sha256_pins_the_bytes() {
    let (_dir, file) = temp_file("c.json", CATALOG_A.as_bytes());
    let file = file.to_str().unwrap();
    let home = Home::new();
    let good = sha256_hex(CATALOG_A.as_bytes()).to_uppercase();
    home.run(&[
        "update-providers",
        file,
        "--sha256",
        &good,
        "--allow-shrink",
    ])
    .ok();
    let before = home.cache();
    let (_dir, other) = temp_file("d.json", CATALOG_B.as_bytes());
    home.run(&[
        "update-providers",
        other.to_str().unwrap(),
        "--sha256",
        &good,
    ])
    .fails_with(&["SHA-256 is", &good.to_lowercase()]);
    assert_untouched(&home, before.as_deref());
    home.run(&["update-providers", file, "--sha256", "abc"])
        .usage_error();
}

#[test]
fn change_report_lists_changes_and_warns_about_moved_endpoints() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    // CATALOG_B moves beta's key: applied only when the person says so.
    let run = home.run_stdin(
        &["update-providers", "-", "--allow-key-move"],
        CATALOG_B.as_bytes(),
    );
    run.ok();
    for line in [
        "  changes: providers 1 added, 2 changed; models 2 added, 1 removed, 1 changed",
        "  + 1 provider: gamma",
        "  ~ beta: api_endpoint \"https://api.beta.example\" → \"https://attacker.example\"",
        "  ~ alpha: +1 model (a-new), -1 model (a-small), 1 model changed",
    ] {
        assert!(run.stdout.lines().any(|l| l == line), "{line}: {run:?}");
    }
    assert!(
        run.stdout.contains("      a-large: context_window 200000 → 0, cost_per_1m_in 3 → 0,\n        cost_per_1m_out 15 → 0,"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(
            "warning: provider \"beta\" would send $BETA_API_KEY to https://attacker.example:443, where it was never sent before (only to https://api.beta.example:443)"
        ),
        "{run:?}"
    );

    // A home that has not seen the move yet (once applied, the new place
    // is remembered: B again moves nothing).
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let run = home.run_stdin(
        &["update-providers", "-", "--json", "--allow-key-move"],
        CATALOG_B.as_bytes(),
    );
    run.ok();
    assert!(
        run.stderr.is_empty(),
        "--json keeps stderr for errors: {run:?}"
    );
    let report = run.json();
    assert_eq!(report["providers"], 3);
    assert_eq!(report["models"], 4);
    assert_eq!(report["written"], true);
    let changes = &report["changes"];
    assert_eq!(changes["providers_added"], serde_json::json!(["gamma"]));
    let alpha = &changes["providers_changed"][0];
    assert_eq!(alpha["provider"], "alpha");
    assert_eq!(alpha["models_removed"], serde_json::json!(["a-small"]));
    assert_eq!(alpha["models_changed"][0]["model"], "a-large");
    assert_eq!(
        alpha["models_changed"][0]["fields"][0],
        serde_json::json!({"field": "cost_per_1m_in", "before": 3.0, "after": 0.0})
    );
    let beta = &changes["providers_changed"][1];
    assert_eq!(
        beta["fields"][0],
        serde_json::json!({"field": "api_endpoint", "before": "https://api.beta.example", "after": "https://attacker.example"})
    );
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("would send $BETA_API_KEY to https://attacker.example:443")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("\"a-small\" names no model")),
        "{warnings:?}"
    );
}

#[test]
fn quiet_prints_nothing_on_success_and_the_error_on_failure() {
    let home = Home::new();
    let run = home.run(&["update-providers", "embedded", "--quiet"]);
    run.ok();
    assert!(run.stdout.is_empty() && run.stderr.is_empty(), "{run:?}");
    home.run(&["update-providers", "/no/such/file.json", "-q"])
        .fails_with(&["/no/such/file.json"]);
}

#[test]
fn usage_errors_exit_2() {
    let home = Home::new();
    home.run(&["update-providers", "--bogus"]).usage_error();
    // Crush reads the first SOURCE of several (issue 35, item 9).
    home.run(&["update-providers", "a", "b"])
        .fails_with(&["a: cannot read"]);
    home.run(&["update-providers", "https://"]).usage_error();
    home.run(&["update-providers", "x", "--timeout", "0"])
        .usage_error();
    home.run(&["update-providers", "x", "--timeout", "soon"])
        .usage_error();
    // CATWALK_URL is a SOURCE as Crush reads it: here a missing file.
    home.run_env(&["update-providers"], &[("CATWALK_URL", "not a url")])
        .fails_with(&["not a url"]);
    home.run_env(&["update-providers"], &[("CATWALK_URL", "ftp://mirror/x")])
        .usage_error();
    // No command is Crush's interface: without a Crush, exit 127 (the
    // front's tests cover it).
    assert_eq!(home.run(&[]).code, Some(127));
    assert_eq!(home.data_entries(), Vec::<String>::new());
}

#[test]
fn leftovers_of_a_killed_run_are_cleaned_up() {
    let home = Home::new();
    fs::create_dir_all(home.data_dir()).unwrap();
    fs::write(
        home.data_dir().join(".providers.json.Xy12ab.tmp"),
        b"[{\"half",
    )
    .unwrap();
    home.run(&["update-providers", "embedded"]).ok();
    assert_eq!(home.data_entries(), CACHE_FILES);
}

#[test]
fn data_folder_that_cannot_be_created_is_a_clear_failure() {
    let home = Home::new();
    fs::create_dir_all(home.path().join(".local/share")).unwrap();
    fs::write(
        home.path().join(".local/share/crush"),
        b"a file, not a folder",
    )
    .unwrap();
    // Said in plain words, and what to do: not the system's "File exists"
    // nor the permissions and free space of a write that failed otherwise.
    let run = home.run(&["update-providers", "embedded"]);
    run.fails_with(&[
        "cannot create the data folder",
        ".local/share/crush",
        "caused by: a file, not a folder, has that name",
        "hint: a file stands where a folder of that path should be",
    ]);
    assert!(!run.stderr.contains("File exists"), "{run:?}");
    assert!(!run.stderr.contains("free space"), "{run:?}");
    assert_eq!(
        fs::read(home.path().join(".local/share/crush")).unwrap(),
        b"a file, not a folder"
    );
}

#[test]
fn a_failing_rename_leaves_the_cache_and_no_temp_file() {
    // A folder where the cache file should be makes the final rename fail
    // after the temporary file was written.
    let home = Home::new();
    fs::create_dir_all(home.cache_file().join("occupied")).unwrap();
    home.run(&["update-providers", "embedded"])
        .fails_with(&["cannot replace", "providers.json"]);
    assert!(home.cache_file().join("occupied").is_dir());
    // The memory of where keys went is recorded before the rename, so
    // that it never knows fewer places than the cache sends keys to.
    assert_eq!(
        home.data_entries(),
        ["providers.json", "providers.trust.json"]
    );
}

#[test]
fn xdg_data_home_moves_the_cache() {
    let home = Home::new();
    let xdg = home.path().join("xdg");
    home.run_env(
        &["update-providers", "embedded"],
        &[("XDG_DATA_HOME", xdg.to_str().unwrap())],
    )
    .ok();
    assert!(xdg.join("crush/providers.json").is_file());
    assert!(home.cache().is_none());
}

/// The text report fits a screen whatever the catalogs: on a pipe at most
/// 60 lines of at most 80 columns, counting what it leaves out, and what
/// happened last; `--verbose` and `--json` list every id.
#[test]
fn the_change_report_fits_a_screen_and_verbose_lists_everything() {
    use crate::synthetic;
    let home = Home::new();
    // About 70 providers each; the same provider ids with other models.
    let (_dir, a) = temp_file("a.json", synthetic::catalog(5_000_000, 1).as_bytes());
    let (_dir2, b) = temp_file("b.json", synthetic::catalog(5_000_000, 2).as_bytes());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    home.run(&["update-providers", a, "--allow-shrink"]).ok();
    let run = home.run(&["update-providers", b, "--dry-run"]);
    run.ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines.len() <= 60, "{} lines", lines.len());
    for line in &lines {
        // A path longer than the line stands alone on its own.
        assert!(
            line.chars().count() <= 80 || !line.trim().contains(' '),
            "{line}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  … ") && l.ends_with(" more changes (--verbose)")),
        "{run:?}"
    );
    assert!(
        words(&run.stdout).ends_with("dry run: nothing written"),
        "{run:?}"
    );
    assert!(run.stdout.contains("… and "), "{run:?}");

    let verbose = home.run(&["update-providers", b, "--dry-run", "--verbose"]);
    verbose.ok();
    let report = home
        .run(&["update-providers", b, "--dry-run", "--json"])
        .json();
    let changed = report["changes"]["providers_changed"].as_array().unwrap();
    assert!(changed.len() > 60, "{} providers changed", changed.len());
    let provider_lines = verbose
        .stdout
        .lines()
        .filter(|l| l.starts_with("  ~ provider "));
    assert_eq!(provider_lines.count(), changed.len());
    // One change a line: every id on a line of its own.
    let lines: std::collections::HashSet<&str> = verbose.stdout.lines().collect();
    for provider in changed {
        for id in provider["models_added"].as_array().unwrap() {
            let line = format!("      + model {}", id.as_str().unwrap());
            assert!(lines.contains(line.as_str()), "--verbose lacks {line}");
        }
    }
    home.run(&["update-providers", b, "-q", "-v"]).usage_error();
}

/// Hyper's provider as a file gives it, for the tests of both documents.
const HYPER_DOC: &str = r#"{"id": "hyper", "name": "Hyper", "type": "hyper", "api_endpoint": "https://hyper.charm.land/api/v1/fantasy", "models": [{"id": "m", "name": "M"}]}"#;

/// Writes `text` at `place` under `home`.
fn write_at(home: &Home, place: &str, text: &str) -> std::path::PathBuf {
    let path = home.path().join(place);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
    path
}

/// The warning lines of `run` (words joined across wrapped lines) that
/// name `path`.
fn warnings_naming(run: &Run, path: &std::path::Path) -> usize {
    words(&run.stderr)
        .split("warning: ")
        .skip(1)
        .filter(|w| w.contains(&path.display().to_string()))
        .count()
}

/// Issue 35, item 10: Crush's `update-providers` reads no configuration,
/// so a file Crush would refuse to start on (not JSON, blanks, a value of
/// the wrong type, a crushrc option Crush does not know), the user's or
/// the project's, stops no update: from `embedded` or from a file, of
/// the catalog or of Hyper's provider, with one warning naming the file.
/// A project's file pins no key, whatever it holds.
#[test]
fn a_configuration_crush_refuses_stops_no_update() {
    let (_dir, file) = temp_file("c.json", CATALOG_A.as_bytes());
    let file = file.to_str().unwrap();
    let (_hdir, hyper) = temp_file("h.json", HYPER_DOC.as_bytes());
    let hyper = hyper.to_str().unwrap();
    let wrong_type = r#"{"options": {"disable_provider_auto_update": "yes"}}"#;
    for (place, text) in [
        (".config/crush/crush.json", "{not json"),
        (".config/crush/crush.json", wrong_type),
        (".local/share/crush/crush.json", " \n"),
        ("etc/crush/crush.json", wrong_type),
        ("crush.json", "{not json"),
        ("crush.json", wrong_type),
        (".crush/crush.json", "{not json"),
        (".crush.json", r#"{"options": {"provider_public_keys": 5}}"#),
        (
            ".config/crush/crushrc",
            "option provider-auto-update=false\n",
        ),
    ] {
        let home = Home::new();
        let path = write_at(&home, place, text);
        let run = home.run(&["update-providers", "embedded"]);
        run.ok();
        assert_eq!(warnings_naming(&run, &path), 1, "{place} {text}: {run:?}");
        let run = home.run(&["update-providers", file, "--allow-shrink"]);
        run.ok();
        assert_eq!(warnings_naming(&run, &path), 1, "{place} {text}: {run:?}");
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes(), "{place}");
        home.run(&["update-providers", "--source", "hyper", hyper])
            .ok();
        assert_eq!(
            fs::read(home.data_dir().join("hyper.json")).unwrap(),
            HYPER_DOC.as_bytes(),
            "{place}"
        );
        // Crush's start refuses it, and so does this one's.
        if place.ends_with(".json") && !place.starts_with(".crush/") {
            assert_ne!(home.run(&["providers"]).code, Some(0), "{place}");
        }
    }
}

/// Issue 35, item 10: where a file of the user's own may pin keys this
/// cannot read (a wrong type; not JSON, and naming the option), a source
/// that must then be signed is refused, naming the file and what to do;
/// `embedded`, which needs no signature, goes, and so does any source
/// when the environment pins the keys, which replace the files'.
#[test]
fn pinned_keys_that_cannot_be_read_refuse_only_what_needs_them() {
    let signer = Signer::new();
    let (dir, file) = temp_file("providers.json", CATALOG_A.as_bytes());
    fs::write(
        dir.path().join("providers.json.minisig"),
        signer.sign(CATALOG_A.as_bytes(), Some(1_700_000_000)),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let key = signer.public_key();
    for text in [
        format!(r#"{{"options": {{"provider_public_keys": "{key}"}}}}"#),
        format!(r#"{{"options": {{"provider_public_keys": ["{key}"]}},}}"#),
    ] {
        let home = Home::new();
        let path = write_at(&home, ".config/crush/crush.json", &text);
        let shown = path.display().to_string();
        let run = home.run(&["update-providers", "embedded"]);
        run.ok();
        assert_eq!(warnings_naming(&run, &path), 1, "{text}: {run:?}");
        for args in [
            &["update-providers", file, "--allow-shrink"][..],
            &["update-providers", file, "--dry-run"],
            &["update-providers", "--source", "hyper", file],
        ] {
            let run = home.run(args);
            run.fails_with(&[&shown, "pin", "embedded", "CRUSH_PROVIDER_PUBLIC_KEY"]);
            assert_eq!(
                home.cache().unwrap(),
                crush_providers::catalog::embedded::catalog_bytes(),
                "{args:?}"
            );
        }
        let run = home.run_env(
            &["update-providers", file, "--allow-shrink"],
            &[("CRUSH_PROVIDER_PUBLIC_KEY", &key)],
        );
        run.ok();
        assert_eq!(warnings_naming(&run, &path), 1, "{text}: {run:?}");
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    }
}
