//! Hyper's provider (`update-providers --source hyper`, and the start-up
//! refresh of `hyper.json` when a Hyper key is configured): the request
//! Crush makes (`$HYPER_URL/api/v1/provider`, `Authorization: Bearer` with
//! the environment's key, else the config's, conditional on the cache's
//! validators), the one provider object validated as a catalog's provider
//! and swapped in byte for byte beside the catalog, reviewed as a catalog
//! (a key move refused or held), the same SOURCE forms, `embedded` as
//! Crush's own Hyper provider, and `providers --status`.

use std::fs;
use std::path::PathBuf;

use crate::common::*;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Hyper's provider as its server answers it, with a field nobody knows
/// and odd spacing (kept byte for byte), its endpoint on Hyper's own
/// server: where the Hyper key may always go.
const HYPER: &str = r#"{"name": "Charm Hyper", "id": "hyper",
  "api_endpoint": "https://hyper.charm.land/api/v1/fantasy", "type": "hyper",
  "default_large_model_id": "big", "future_field": {"kept": [1, 2.50, null]},
  "models": [
    {"id": "big", "name": "Big", "cost_per_1m_in": 3, "context_window": 200000, "has_reasoning_efforts": true},
    {"id": "small", "name": "Small"}
  ]}
"#;

/// [`HYPER`]'s next version: a model added.
fn hyper_next() -> String {
    HYPER.replace(
        r#"{"id": "small", "name": "Small"}"#,
        r#"{"id": "small", "name": "Small"}, {"id": "new", "name": "New"}"#,
    )
}

/// [`HYPER`] sending the Hyper key elsewhere.
fn hyper_moved() -> String {
    HYPER.replace(
        "https://hyper.charm.land/api/v1/fantasy",
        "https://attacker.example/v1",
    )
}

impl Home {
    fn hyper_file(&self) -> PathBuf {
        self.data_dir().join("hyper.json")
    }

    fn hyper(&self) -> Option<Vec<u8>> {
        fs::read(self.hyper_file()).ok()
    }

    fn hyper_state(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&fs::read(self.data_dir().join("hyper.state.json")).ok()?).ok()
    }

    /// Waits for a background refresh of Hyper's provider to record an
    /// outcome (the record is written last).
    #[track_caller]
    fn wait_for_hyper_refresh(&self) -> serde_json::Value {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(refresh) = self.hyper_state().and_then(|s| s.get("refresh").cloned()) {
                return refresh;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no refresh of Hyper's provider recorded"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Writes the global JSON config.
    fn config(&self, json: &str) {
        let dir = self.path().join(".config/crush");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("crush.json"), json).unwrap();
    }
}

/// A server for both documents: the catalog (one a first fetch applies)
/// and Hyper's provider (`hyper`), with an ETag.
async fn server(hyper: &str) -> MockServer {
    serving(
        ResponseTemplate::new(200)
            .insert_header("ETag", "\"h1\"")
            .set_body_string(hyper),
    )
    .await
}

/// A server answering the catalog, and `hyper` for Hyper's provider.
async fn serving(hyper: ResponseTemplate) -> MockServer {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/provider"))
        .respond_with(hyper)
        .mount(&server)
        .await;
    server
}

/// The requests for Hyper's provider the server saw.
async fn hyper_requests(server: &MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/api/v1/provider")
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn hyper_url_is_asked_with_the_key_and_the_answer_swapped_in_byte_for_byte() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    let env = [("HYPER_URL", uri.as_str()), ("HYPER_API_KEY", "sk-env")];
    let run = home.run_env(&["update-providers", "--source", "hyper"], &env);
    run.ok();
    assert!(
        words(&run.stdout).starts_with(&format!(
            "Updated providers from {uri}/api/v1/provider: 1 provider, 2 models"
        )) && words(&run.stdout).ends_with(&format!(
            "written to {} (nothing was there before)",
            home.hyper_file().display()
        )),
        "{run:?}"
    );
    let again = home.run_env(&["update-providers", "--source=hyper", ""], &env);
    assert!(
        again.ok().stdout.starts_with("Already up to date"),
        "{again:?}"
    );
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    // Beside the catalog, which it leaves alone; its own state and copy
    // of the last one reviewed, the memory of where keys went shared.
    assert_eq!(
        home.data_entries(),
        [
            "hyper.json",
            "hyper.reviewed.json",
            "hyper.state.json",
            "providers.trust.json"
        ]
    );
    let state = home.hyper_state().unwrap();
    assert_eq!(state["etag"], "\"h1\"");
    assert_eq!(state["sha256"], sha256_hex(HYPER.as_bytes()));
    let memory: serde_json::Value =
        serde_json::from_slice(&fs::read(home.data_dir().join("providers.trust.json")).unwrap())
            .unwrap();
    assert_eq!(
        memory["places"]["HYPER_API_KEY"],
        serde_json::json!([{"to": "url", "scheme": "https", "host": "hyper.charm.land", "port": "443"}])
    );
    let requests = hyper_requests(&server).await;
    assert_eq!(requests.len(), 2);
    assert_eq!(received(&requests, "authorization"), ["Bearer sk-env"; 2]);
    // Crush's own path below a base URL given as SOURCE, or the document's
    // URL as it is.
    for given in [format!("{uri}/"), format!("{uri}/api/v1/provider")] {
        home.run(&["update-providers", "--source", "hyper", &given])
            .ok();
    }
    assert_eq!(hyper_requests(&server).await.len(), 4);
}

/// `update-providers` sends `HYPER_API_KEY` and no other key, as Crush's
/// does (`resolveHyperAPIKey(nil)`): the config's key (a login's token)
/// never goes to a SOURCE or `HYPER_URL` a person names; an empty
/// variable is none, as in Crush.
#[tokio::test(flavor = "multi_thread")]
async fn update_providers_sends_hyper_api_key_and_no_other() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let update = ["update-providers", "--source", "hyper", "-q"];
    let with_config = Home::new();
    with_config.config(r#"{"providers": {"hyper": {"api_key": "sk-config"}}}"#);
    let debug = with_config.run_env(
        &["-d", "update-providers", "--source", "hyper"],
        &[("HYPER_URL", &uri)],
    );
    debug.ok();
    assert!(
        words(&debug.stderr).contains(&format!(
            "without a key: HYPER_API_KEY is not set, and update-providers sends no other, as Crush's does (the Hyper key of {} is not sent)",
            with_config.path().join(".config/crush/crush.json").display()
        )),
        "{debug:?}"
    );
    // The environment's is sent, and never shown.
    let debug = with_config.run_env(
        &["-d", "update-providers", "--source", "hyper"],
        &[("HYPER_URL", &uri), ("HYPER_API_KEY", "sk-env")],
    );
    debug.ok();
    assert!(
        debug
            .stderr
            .contains("with Authorization: Bearer, the Hyper key of HYPER_API_KEY")
            && !debug.stderr.contains("sk-env"),
        "{debug:?}"
    );
    with_config
        .run_env(&update, &[("HYPER_URL", &uri), ("HYPER_API_KEY", "")])
        .ok();
    with_config.run(&["update-providers", "--source", "hyper", "-q", &uri]);
    let without = Home::new();
    let debug = without.run_env(
        &["-d", "update-providers", "--source", "hyper"],
        &[("HYPER_URL", &uri)],
    );
    debug.ok();
    assert!(
        debug.stderr.contains("without a key: none is set"),
        "{debug:?}"
    );
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["", "Bearer sk-env", "", "", ""]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_provider_is_refused_and_the_cache_is_untouched() {
    let home = Home::new();
    let (_dir, file) = temp_file("hyper.json", HYPER.as_bytes());
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        file.to_str().unwrap(),
    ])
    .ok();
    let before = fs::metadata(home.hyper_file()).unwrap().modified().unwrap();
    for (bad, parts) in [
        (
            embedded_and_gamma().to_string(),
            &[
                "not a valid Hyper provider\n  caused by: expected a JSON object (one provider), found an array",
            ][..],
        ),
        (
            HYPER.replace(r#""context_window": 200000"#, r#""context_window": "big""#),
            &[
                "the provider (\"hyper\"): models[0] (\"big\"): field context_window: invalid type: string \"big\", expected an integer",
            ],
        ),
        (
            HYPER.replace(r#""id": "small""#, r#""id": "big""#),
            &["models[1] (\"big\"): id is not unique within the provider"],
        ),
        (
            HYPER.replace(r#""type": "hyper""#, r#""type": "hyper", "TYPE": "openai""#),
            &["two keys name the field type"],
        ),
        (
            HYPER.replace(
                "https://hyper.charm.land/api/v1/fantasy",
                "https://$(curl evil.example)/v1",
            ),
            &["field api_endpoint"],
        ),
        (
            r#"{"id": "hyper", "name": "H", "models": []}"#.to_string(),
            &["names no model"],
        ),
        // Crush would list it as another provider, and lose Hyper.
        (
            HYPER.replace(r#""id": "hyper""#, r#""id": "openai""#),
            &[r#"the provider ("openai") is not Hyper's: its id must be "hyper""#],
        ),
        (
            HYPER.replace(r#""id": "hyper""#, r#""id": "Hyper""#),
            &[r#"the provider ("Hyper") is not Hyper's"#],
        ),
    ] {
        let url = serve_at(
            "/api/v1/provider",
            ResponseTemplate::new(200).set_body_string(bad.clone()),
        )
        .await;
        let run = home.run(&["update-providers", "--source", "hyper", &url.uri()]);
        run.fails_with(parts);
        assert!(
            run.stderr
                .contains("check that the source is Hyper's provider"),
            "{run:?}"
        );
        assert_eq!(home.hyper().unwrap(), HYPER.as_bytes(), "{bad}");
    }
    assert_eq!(
        fs::metadata(home.hyper_file()).unwrap().modified().unwrap(),
        before
    );
}

#[test]
fn a_file_and_standard_input_are_sources() {
    let home = Home::new();
    let (_dir, file) = temp_file("h.json", HYPER.as_bytes());
    let file = file.to_str().unwrap();
    home.run(&["update-providers", "--source", "hyper", file])
        .ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    let next = hyper_next();
    let run = home.run_stdin(
        &["update-providers", "--source", "hyper", "-"],
        next.as_bytes(),
    );
    run.ok();
    assert!(run.stdout.contains("models 1 added"), "{run:?}");
    assert_eq!(home.hyper().unwrap(), next.as_bytes());
    // HYPER_URL is read as a SOURCE too, as Crush reads it.
    home.run_env(
        &["update-providers", "--source", "hyper"],
        &[("HYPER_URL", file)],
    )
    .ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    // Any other --source is bad usage.
    let run = home.run(&["update-providers", "--source", "bogus"]);
    run.usage_error();
    assert!(
        run.stderr.contains("possible values: catwalk, hyper"),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_move_is_refused_without_the_flag_and_held_by_a_refresh() {
    let home = Home::new();
    let moved = hyper_moved();
    let (_dir, file) = temp_file("moved.json", moved.as_bytes());
    let file = file.to_str().unwrap();
    // The first one: against where Crush's own Hyper sends the key.
    let run = home.run(&["update-providers", "--source", "hyper", file]);
    run.fails_with(&[
        "refused: provider \"hyper\" would send $HYPER_API_KEY to https://attacker.example:443",
        "--allow-key-move",
    ]);
    assert_eq!(home.hyper(), None);
    // A known key of the catalog sent elsewhere by Hyper's document.
    let borrowed = HYPER
        .replace(
            r#""type": "hyper""#,
            r#""type": "hyper", "api_key": "$ANTHROPIC_API_KEY""#,
        )
        .replace(
            "https://hyper.charm.land/api/v1/fantasy",
            "https://hyper.corp/v1",
        );
    let (_dir2, borrowed_file) = temp_file("borrowed.json", borrowed.as_bytes());
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        borrowed_file.to_str().unwrap(),
    ])
    .fails_with(&["would send $ANTHROPIC_API_KEY to https://hyper.corp:443"]);
    // A refresh holds what a person must allow, and says so at every start.
    let server = server(&moved).await;
    let uri = server.uri();
    home.run_stdin(
        &["update-providers", "--source", "hyper", "-"],
        HYPER.as_bytes(),
    )
    .ok();
    let env = [
        ("CATWALK_URL", uri.as_str()),
        ("HYPER_URL", uri.as_str()),
        ("HYPER_API_KEY", "sk-env"),
        ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
    ];
    let waited = home.run_env(&["providers", "--wait"], &env);
    waited.ok();
    assert!(
        waited.stderr.contains(&format!(
            "a refresh of Hyper's provider from {uri}/api/v1/provider was held, and hyper.json is not replaced (while it is held, Crush is started with its own updates off and uses its embedded Hyper provider): provider \"hyper\" would send $HYPER_API_KEY to https://attacker.example:443"
        )),
        "{waited:?}"
    );
    assert!(
        waited.stderr.contains(&format!(
            "  keep the one in use:  crush update-providers --source hyper --keep-current\n  review it:            crush update-providers --source hyper {uri}/api/v1/provider --dry-run\n  apply it:             crush update-providers --source hyper {uri}/api/v1/provider --allow-key-move"
        )),
        "{waited:?}"
    );
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    let next = home.run_env(&["providers"], &env);
    assert!(
        next.stderr.contains("a refresh of Hyper's provider from")
            && next.stderr.contains("was held at "),
        "{next:?}"
    );
    home.wait_for_the_helper();
    let status = home.run_env(&["providers", "--status"], &env);
    assert!(
        status.stdout.contains("hyper held back:") && status.stdout.contains("attacker.example"),
        "{status:?}"
    );
    // A person may keep the one in use (issue 29): told no more.
    let kept = home.run(&["update-providers", "--source", "hyper", "--keep-current"]);
    kept.ok();
    assert!(
        words(&kept.stdout).starts_with(&format!(
            "Kept Hyper's provider in use ({}); the refresh held from {uri}/api/v1/provider is not applied",
            home.hyper_file().display()
        )),
        "{kept:?}"
    );
    let quiet = home.run_env(&["providers", "--json"], &env);
    assert!(!quiet.stderr.contains("was held"), "{quiet:?}");
    home.wait_for_the_helper();
    // A person allows it, and is told where the key goes now.
    let allowed = home.run_env(
        &["update-providers", "--source", "hyper", "--allow-key-move"],
        &env,
    );
    allowed.ok();
    assert!(
        allowed
            .stderr
            .contains("$HYPER_API_KEY to https://attacker.example:443")
            && allowed
                .stderr
                .contains("requests carrying its value will go to this new place"),
        "{allowed:?}"
    );
    assert_eq!(home.hyper().unwrap(), moved.as_bytes());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_is_conditional_and_a_304_leaves_hyper_json_untouched() {
    let server = serving(
        ResponseTemplate::new(200)
            .insert_header("ETag", "\"h1\"")
            .insert_header("Last-Modified", "Wed, 01 Jan 2025 00:00:00 GMT")
            .set_body_string(HYPER),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/provider"))
        .and(header("If-None-Match", "\"h1\""))
        .respond_with(ResponseTemplate::new(304))
        .with_priority(1)
        .mount(&server)
        .await;
    let uri = server.uri();
    let home = Home::new();
    let env = [
        ("CATWALK_URL", uri.as_str()),
        ("HYPER_URL", uri.as_str()),
        ("HYPER_API_KEY", "sk-env"),
        ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
    ];
    home.run_env(&["update-providers", "--source", "hyper", "-q"], &env)
        .ok();
    let before = fs::metadata(home.hyper_file()).unwrap();
    home.run_env(&["providers", "--wait"], &env).ok();
    let requests = hyper_requests(&server).await;
    assert_eq!(requests.len(), 2);
    // `update-providers` asks anew, as for the catalog; the refresh asks
    // whether what it has is current.
    assert_eq!(received(&requests, "if-none-match"), ["", "\"h1\""]);
    assert_eq!(
        received(&requests, "if-modified-since"),
        ["", "Wed, 01 Jan 2025 00:00:00 GMT"]
    );
    assert_eq!(received(&requests, "authorization"), ["Bearer sk-env"; 2]);
    let after = fs::metadata(home.hyper_file()).unwrap();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    let refresh = home.hyper_state().unwrap()["refresh"].clone();
    assert_eq!(refresh["outcome"], "unchanged", "{refresh}");
    // Without state (a Crush wrote it), the SHA form of its bytes is sent.
    fs::remove_file(home.data_dir().join("hyper.state.json")).unwrap();
    home.run_env(&["providers", "--wait"], &env).ok();
    let requests = hyper_requests(&server).await;
    assert_eq!(
        received(&requests[2..], "if-none-match"),
        [catwalk_etag(HYPER.as_bytes())]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_start_up_refreshes_hyper_json_only_with_a_hyper_key() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let env = [("CATWALK_URL", uri.as_str()), ("HYPER_URL", uri.as_str())];
    // No key: the catalog alone.
    let home = Home::new();
    home.run_env(&["providers", "--wait"], &env).ok();
    let before = home.last_refresh();
    home.run_env(
        &["providers"],
        &[("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"), env[0], env[1]],
    )
    .ok();
    home.wait_for_refresh(&before);
    home.wait_for_the_helper();
    assert!(hyper_requests(&server).await.is_empty());
    assert_eq!(home.hyper(), None);
    // The environment's key: one helper refreshes both, in the background.
    let home = Home::new();
    let run = home.run_env(
        &["-d", "providers"],
        &[env[0], env[1], ("HYPER_API_KEY", "sk-env")],
    );
    run.ok();
    assert!(
        run.stderr
            .contains("Hyper's provider: refreshed in the background too"),
        "{run:?}"
    );
    let refresh = home.wait_for_hyper_refresh();
    assert_eq!(refresh["outcome"], "updated", "{refresh}");
    home.wait_for_refresh(&None);
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    assert!(home.cache().is_some());
    // The config's key, waited for.
    let home = Home::new();
    home.config(r#"{"providers": {"hyper": {"api_key": "sk-config"}}}"#);
    home.run_env(&["providers", "--wait"], &env).ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["Bearer sk-env", "Bearer sk-config"]
    );
    // On the catalog's interval: confirmed just now, no request.
    home.run_env(&["providers", "--wait"], &env).ok();
    assert_eq!(hyper_requests(&server).await.len(), 2);
    // Automatic updates off: none.
    home.run_env(
        &["providers", "--wait"],
        &[
            env[0],
            env[1],
            ("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1"),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    )
    .ok();
    assert_eq!(hyper_requests(&server).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_refresh_is_told_once_and_status_shows_hyper() {
    let server = serving(ResponseTemplate::new(500).set_body_string("down")).await;
    let uri = server.uri();
    let home = Home::new();
    let env = [
        ("CATWALK_URL", uri.as_str()),
        ("HYPER_URL", uri.as_str()),
        ("HYPER_API_KEY", "sk-env"),
    ];
    let status = home.run_env(&["providers", "--status"], &env);
    assert!(
        status
            .stdout
            .contains("(none: Crush uses its own embedded Hyper provider)")
            && status
                .stdout
                .contains("hyper key:            HYPER_API_KEY"),
        "{status:?}"
    );
    let waited = home.run_env(&["providers", "--wait"], &env);
    waited.ok();
    assert!(
        waited.stderr.contains(&format!(
            "could not refresh Hyper's provider from {uri}/api/v1/provider: server answered 500"
        )) && waited.stderr.contains("Crush keeps its own embedded one"),
        "{waited:?}"
    );
    // No hyper.json to hold the record: its state does, for the next
    // start to tell, once.
    assert_eq!(home.hyper(), None);
    let next = home.run_env(&["providers"], &env);
    assert!(
        next.stderr
            .contains("the last refresh of Hyper's provider from")
            && next.stderr.contains("failed at"),
        "{next:?}"
    );
    home.wait_for_the_helper();
    let status = home
        .run_env(&["providers", "--status", "--json"], &env)
        .json();
    let hyper = &status["hyper"];
    assert_eq!(hyper["cache"], home.hyper_file().display().to_string());
    assert_eq!(hyper["cache_state"], "missing");
    assert_eq!(hyper["last_refresh"]["outcome"], "failed", "{hyper}");
    assert_eq!(hyper["key"], "HYPER_API_KEY");
    assert_eq!(
        hyper["refresh_at_start_up"],
        "yes, with the Hyper key, on the catalog's interval"
    );
    let told_again = home.run_env(&["providers"], &env);
    assert!(
        !told_again
            .stderr
            .contains("the last refresh of Hyper's provider"),
        "{told_again:?}"
    );
    // With a cache: where it is, where from, how many models.
    home.wait_for_the_helper();
    let (_dir, file) = temp_file("h.json", HYPER.as_bytes());
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        file.to_str().unwrap(),
        "-q",
    ])
    .ok();
    let status = home.run(&["providers", "--status"]);
    for row in [
        format!("hyper:                {}", home.hyper_file().display()),
        format!("hyper source:         {}", file.display()),
        "hyper models:         2 models".to_string(),
        "hyper key:            none".to_string(),
        "hyper at start-up:    no: no Hyper key is set".to_string(),
    ] {
        assert!(status.stdout.contains(&row), "{row}: {status:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_key_means_hyper_must_be_signed_too() {
    let signer = Signer::new();
    let home = Home::new();
    let unsigned = server(HYPER).await;
    let key = signer.public_key();
    let run = home.run_env(
        &["update-providers", "--source", "hyper", &unsigned.uri()],
        &[("CRUSH_PROVIDER_PUBLIC_KEY", key.as_str())],
    );
    run.fails_with(&["refused\n  caused by: ", "/api/v1/provider.minisig"]);
    assert_eq!(home.hyper(), None);
    let signed = server(HYPER).await;
    Mock::given(method("GET"))
        .and(path("/api/v1/provider.minisig"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(signer.sign(HYPER.as_bytes(), Some(1_700_000_000))),
        )
        .mount(&signed)
        .await;
    home.run_env(
        &["update-providers", "--source", "hyper", &signed.uri()],
        &[
            ("CRUSH_PROVIDER_PUBLIC_KEY", key.as_str()),
            ("HYPER_API_KEY", "sk-env"),
        ],
    )
    .ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    assert_eq!(home.hyper_state().unwrap()["signed_at"], 1_700_000_000);
    // The signature is asked on the same server, with the same key.
    let signature: Vec<_> = signed
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/api/v1/provider.minisig")
        .collect();
    assert_eq!(received(&signature, "authorization"), ["Bearer sk-env"]);
}

/// Where the Hyper key may go without any `hyper.json` is `HYPER_URL` as
/// the user's environment sets it; a project's `.env` (which Crush reads)
/// points the request there, but does not make its answer's endpoint a
/// place the key may go: `hyper.json` is the user's in every project.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_dotenv_does_not_choose_where_the_hyper_key_goes() {
    let server = MockServer::start().await;
    let uri = server.uri();
    // Hyper's provider as a mirror at HYPER_URL would serve it: its
    // endpoint on the mirror.
    let mirrored = HYPER.replace("https://hyper.charm.land", &uri);
    Mock::given(method("GET"))
        .and(path("/api/v1/provider"))
        .respond_with(ResponseTemplate::new(200).set_body_string(mirrored.clone()))
        .mount(&server)
        .await;
    let update = ["update-providers", "--source", "hyper", "-q"];
    let home = Home::new();
    fs::write(home.path().join(".env"), format!("HYPER_URL={uri}\n")).unwrap();
    let run = home.run(&update);
    run.fails_with(&[&format!(
        "would send $HYPER_API_KEY to {}, where it was never sent before (only to https://hyper.charm.land:443)",
        uri
    )]);
    assert_eq!(home.hyper(), None);
    // The same variable set by the user: where Crush's own Hyper sends it.
    let home = Home::new();
    home.run_env(&update, &[("HYPER_URL", &uri)]).ok();
    assert_eq!(home.hyper().unwrap(), mirrored.as_bytes());
}

/// Reviewed as a catalog of one provider: most of the cached provider's
/// models gone is a shrink (there is no floor: a first one is none), and
/// with a key pinned, one signed before the cached one is a replay.
#[tokio::test(flavor = "multi_thread")]
async fn a_shrink_and_a_replay_are_refused_as_for_the_catalog() {
    let home = Home::new();
    let update = |args: &[&str], doc: &str| {
        let mut all = vec!["update-providers", "--source", "hyper", "-"];
        all.extend(args);
        home.run_stdin(&all, doc.as_bytes())
    };
    let three = hyper_next();
    update(&[], &three).ok();
    let one = HYPER.replace(
        r#",
    {"id": "small", "name": "Small"}"#,
        "",
    );
    assert!(one.contains(r#""id": "big""#) && !one.contains("small"));
    update(&[], &one).fails_with(&["and 1 of the 3 cached models", "--allow-shrink"]);
    update(&["--allow-shrink"], &one).ok();
    assert_eq!(home.hyper().unwrap(), one.as_bytes());
    // Signed: the newest signing time is Hyper's own, in its state.
    let signer = Signer::new();
    let key = signer.public_key();
    let (dir, file) = temp_file("h.json", HYPER.as_bytes());
    let signed = |doc: &str, at: u64| {
        fs::write(&file, doc).unwrap();
        fs::write(
            dir.path().join("h.json.minisig"),
            signer.sign(doc.as_bytes(), Some(at)),
        )
        .unwrap();
        home.run_env(
            &[
                "update-providers",
                "--source",
                "hyper",
                file.to_str().unwrap(),
                "-q",
            ],
            &[("CRUSH_PROVIDER_PUBLIC_KEY", key.as_str())],
        )
    };
    signed(HYPER, 1_700_000_100).ok();
    signed(&three, 1_700_000_000).fails_with(&[
        "signed at 2023-11-14T22:13:20Z, before",
        "--allow-downgrade",
    ]);
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
}

/// A redirect that leaves the first URL's origin takes no credential
/// along, on that hop or any later one: neither the Hyper key nor a
/// URL's own user and password, even when the new host redirects within
/// itself (the HTTP client restores the first request's headers on each
/// hop and compares only with the hop before: Go's CVE-2024-45336).
#[tokio::test(flavor = "multi_thread")]
async fn no_credential_follows_a_redirect_off_the_first_origin() {
    let first = MockServer::start().await;
    let other = MockServer::start().await;
    for (at, to) in [
        ("/api/v1/provider", format!("{}/x", other.uri())),
        ("/v2/providers", format!("{}/x", other.uri())),
    ] {
        Mock::given(path(at))
            .respond_with(ResponseTemplate::new(302).insert_header("location", to.as_str()))
            .mount(&first)
            .await;
    }
    Mock::given(path("/x"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", "/y"))
        .mount(&other)
        .await;
    Mock::given(path("/y"))
        .respond_with(ResponseTemplate::new(200).set_body_string(HYPER))
        .mount(&other)
        .await;
    let home = Home::new();
    let env = [
        ("HYPER_URL", first.uri()),
        ("HYPER_API_KEY", "sk-env".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    home.run_env(
        &["update-providers", "--source", "hyper", "--dry-run"],
        &env,
    )
    .ok();
    let with_password = first.uri().replace("http://", "http://mirror:PASS@");
    home.run(&["update-providers", &with_password, "--dry-run"]);
    let seen = |requests: Vec<wiremock::Request>| {
        requests
            .iter()
            .map(|r| {
                let auth = r.headers.get("authorization").map(|v| v.to_str().unwrap());
                format!("{} {}", r.url.path(), auth.unwrap_or("-"))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        seen(first.received_requests().await.unwrap()),
        [
            "/api/v1/provider Bearer sk-env",
            "/v2/providers Basic bWlycm9yOlBBU1M="
        ]
    );
    assert_eq!(
        seen(other.received_requests().await.unwrap()),
        ["/x -", "/y -", "/x -", "/y -"]
    );
}

/// A URL Go's `net/url` refuses (a backslash or a space in its host)
/// makes Crush send no request at all, where the WHATWG parser reads the
/// backslash as a slash (the host before it gets the key) and trims the
/// space: as a SOURCE or `HYPER_URL`, a usage error, nothing sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_url_go_refuses_is_bad_usage_and_nothing_is_sent() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    for url in [format!("{uri}\\@127.0.0.1:9"), format!("{uri} ")] {
        for (arg, env_url) in [(Some(url.as_str()), None), (None, Some(url.as_str()))] {
            let mut args = vec!["update-providers", "--source", "hyper", "--dry-run"];
            args.extend(arg);
            let mut env = vec![("HYPER_API_KEY", "sk-env")];
            env.extend(env_url.map(|u| ("HYPER_URL", u)));
            let run = home.run_env(&args, &env);
            run.usage_error();
            assert!(
                run.stderr
                    .contains("Go refuses it, so Crush sends no request"),
                "{run:?}"
            );
        }
    }
    assert_eq!(hyper_requests(&server).await.len(), 0);
}

/// A crushrc line this reader skips is told with its file and line, and
/// the secrets it sets shown as `***`: the value of `--api-key` (a Hyper
/// key is one) and of a header or environment entry, a client secret,
/// a URL's password.
#[test]
fn a_skipped_crushrc_line_is_told_without_its_secrets() {
    let home = Home::new();
    fs::write(
        home.path().join(".crushrc"),
        r#"K=1 provider add hyper --api-key REALKEY1
command provider add hyper --api-key REALKEY2
if true; then provider add hyper --api-key REALKEY3; fi
[ -n "$CI" ] || provider add openai --api-key REALKEY4 --extra-header X-Token REALKEY5
provider add hyper --api-key "REALKEY6${X}" --base-url http://u:REALKEY7@h/
mcp add m --header Authorization "Bearer REALKEY8$X" --oauth-client-secret REALKEY9
"#,
    )
    .unwrap();
    for (run, warnings) in told_at_a_start_and_in_status(&home) {
        assert_eq!(warnings.len(), 6, "{run:?}");
        assert!(!run.stderr.contains("REALKEY"), "{run:?}");
        for shown in [
            "`K=*** provider add hyper --api-key ***` skipped",
            "`provider add openai --api-key *** --extra-header X-Token ***` skipped",
            "`provider add hyper --api-key *** --base-url http://***@h/` skipped",
            "`mcp add m --header Authorization *** --oauth-client-secret ***` skipped",
        ] {
            assert!(run.stderr.contains(shown), "{shown}: {run:?}");
        }
    }
}

/// A start and `providers --status` in `home` (a refresh, should one
/// start, reaches nothing), each with the warnings it printed.
fn told_at_a_start_and_in_status(home: &Home) -> Vec<(Run, Vec<String>)> {
    let closed = closed_port_url();
    [&["providers"][..], &["providers", "--status"]]
        .into_iter()
        .map(|args| {
            let run = home.run_env(args, &[("CATWALK_URL", &closed)]);
            run.ok();
            home.wait_for_the_helper();
            let warnings = run
                .stderr
                .lines()
                .filter(|l| l.starts_with("warning: "))
                .map(str::to_owned)
                .collect();
            (run, warnings)
        })
        .collect()
}

/// The same at a start and in `--status` for the forms a secret takes
/// beyond those flags (F3): a prefix assignment's value, a URL's query,
/// the free-form JSON of `--extra-body` and `--provider-options`, what
/// follows `--args`. Each warning still names the file, the line, the
/// command and why it was skipped.
#[test]
fn a_skipped_crushrc_lines_assignments_queries_and_free_form_values_are_hidden() {
    let home = Home::new();
    let rc = home.path().join(".crushrc");
    fs::write(
        &rc,
        r#"OPENAI_API_KEY=sk-RK1 provider add openai
if true; then provider add x --base-url "https://h/v1?key=RK3"; fi
K=1 mcp add m --url "https://h/sse?token=RK9"
K=1 provider add x --extra-body '{"token":"RK4"}' --provider-options '{"api_key":"RK5"}'
K=1 mcp add m --type stdio --command tool --args --token RK6
"#,
    )
    .unwrap();
    let rc = rc.canonicalize().unwrap();
    for (run, warnings) in told_at_a_start_and_in_status(&home) {
        assert_eq!(warnings.len(), 5, "{run:?}");
        for secret in ["RK1", "RK3", "RK4", "RK5", "RK6", "RK9"] {
            assert!(!run.stderr.contains(secret), "{secret}: {run:?}");
        }
        let assignment = "skipped: a variable assignment before it is applied only by a shell";
        for (line, shown, why) in [
            (1, "OPENAI_API_KEY=*** provider add openai", assignment),
            (
                2,
                "provider add x --base-url https://h/v1?***",
                "skipped: inside an if block opened at line 2",
            ),
            (3, "K=*** mcp add m --url https://h/sse?***", assignment),
            (
                4,
                "K=*** provider add x --extra-body *** --provider-options ***",
                assignment,
            ),
            (
                5,
                "K=*** mcp add m --type stdio --command *** --args *** ***",
                assignment,
            ),
        ] {
            let told = format!("{}:{line}: `{shown}` {why}", rc.display());
            assert!(run.stderr.contains(&told), "{told}: {run:?}");
        }
    }
}

/// A project's `.env` may point `HYPER_URL` anywhere, but the start (an
/// automatic request nobody asked for) sends the configured Hyper key (a
/// login's token) only where it may go: Hyper's server, `HYPER_URL` as
/// the user's own environment sets it, or where a document applied here
/// sent it. Elsewhere it sends nothing, and says so at every start and
/// in `--status`.
#[tokio::test(flavor = "multi_thread")]
async fn the_start_sends_the_key_to_a_dotenvs_hyper_url_only_where_it_went() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    let login = home.data_dir().join("crush.json");
    fs::create_dir_all(home.data_dir()).unwrap();
    fs::write(
        &login,
        r#"{"providers":{"hyper":{"api_key":"LOGIN-TOKEN"}}}"#,
    )
    .unwrap();
    fs::write(home.path().join(".env"), format!("HYPER_URL={uri}\n")).unwrap();
    let env = [("CATWALK_URL", uri.as_str())];
    let dotenv = home.path().canonicalize().unwrap().join(".env");
    let told = format!(
        "HYPER_URL={uri} at {}:1 is not a place the Hyper key is known to go, so the start-up does not send it there: Hyper's provider is not refreshed",
        dotenv.display()
    );
    for args in [&["providers", "--wait"][..], &["providers"]] {
        let run = home.run_env(args, &env);
        run.ok();
        assert!(words(&run.stderr).contains(&told), "{run:?}");
    }
    let status = home
        .run_env(&["providers", "--status", "--json"], &env)
        .json();
    assert!(
        status["hyper"]["refresh_at_start_up"]
            .as_str()
            .unwrap()
            .starts_with("no: HYPER_URL"),
        "{status}"
    );
    home.wait_for_the_helper();
    assert!(hyper_requests(&server).await.is_empty());
    // Once a document applied here sends it to that server, it may go.
    let mirrored = HYPER.replace("https://hyper.charm.land", &uri);
    let (_dir, file) = temp_file("h.json", mirrored.as_bytes());
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        file.to_str().unwrap(),
        "--allow-key-move",
        "-q",
    ])
    .ok();
    let run = home.run_env(
        &["providers", "--wait"],
        &[env[0], ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0")],
    );
    assert!(!run.stderr.contains("not a place"), "{run:?}");
    // So may HYPER_URL as the user's own environment sets it.
    let home = Home::new();
    fs::create_dir_all(home.data_dir()).unwrap();
    fs::write(
        home.data_dir().join("crush.json"),
        fs::read(&login).unwrap(),
    )
    .unwrap();
    home.run_env(&["providers", "--wait"], &[env[0], ("HYPER_URL", &uri)])
        .ok();
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["Bearer LOGIN-TOKEN", "Bearer LOGIN-TOKEN"]
    );
}

/// A crushrc's `provider add hyper` sets the key as Crush's `applyFlags`
/// reads its flags: in order, the last `--api-key` winning, a flag's
/// value never taken for a flag.
#[tokio::test(flavor = "multi_thread")]
async fn the_last_api_key_of_a_crushrc_line_is_the_key() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    fs::write(
        home.path().join(".crushrc"),
        "provider add hyper --api-key first --name --api-key --api-key last\n",
    )
    .unwrap();
    home.run_env(
        &["providers", "--wait"],
        &[("CATWALK_URL", &uri), ("HYPER_URL", &uri)],
    )
    .ok();
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["Bearer last"]
    );
}

/// A key no HTTP header can carry (a line break, another control
/// character) makes no request, as in Go, and the message names where
/// the key is set and what to do, not the TLS set-up.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_with_a_line_break_is_told_with_its_origin() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", "--source", "hyper"],
        &[("HYPER_URL", &uri), ("HYPER_API_KEY", "a\nb")],
    );
    run.fails_with(&[
        "the Hyper key of HYPER_API_KEY holds a line break or another control character",
        "remove it from HYPER_API_KEY",
    ]);
    assert!(!run.stderr.contains("SSL_CERT_FILE"), "{run:?}");
    home.config(r#"{"providers": {"hyper": {"api_key": "line1\nline2"}}}"#);
    let run = home.run_env(
        &["providers", "--wait"],
        &[("HYPER_URL", &uri), ("CATWALK_URL", &uri)],
    );
    run.ok();
    let config = home.path().join(".config/crush/crush.json");
    assert!(
        words(&run.stderr).contains(&format!(
            "the Hyper key of {} holds a line break or another control character, which no HTTP header can carry: Hyper's provider is not refreshed; remove it from the key there",
            config.display()
        )),
        "{run:?}"
    );
    assert!(hyper_requests(&server).await.is_empty());
}

/// A refused request for Hyper's provider is told in Hyper's words: a
/// 401 or 403 names the key (sent and refused: log in again; none sent:
/// `HYPER_API_KEY`), a 404 Hyper's URL, never a Catwalk base URL.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_request_for_hyper_is_told_in_hypers_words() {
    let home = Home::new();
    let update = ["update-providers", "--source", "hyper"];
    for (status, key, hint) in [
        (
            401,
            Some("sk-old"),
            "Hyper's server refused the Hyper key, which may have expired: run `crush login hyper` again, or check HYPER_API_KEY",
        ),
        (403, Some("sk-old"), "Hyper's server refused the Hyper key"),
        (
            401,
            None,
            "no Hyper key was sent (update-providers sends HYPER_API_KEY and no other, as Crush's does): set HYPER_API_KEY",
        ),
        (
            404,
            Some("sk-old"),
            "check the URL: Hyper's server base URL (HYPER_URL), or the exact URL of its provider",
        ),
    ] {
        let server =
            serving(ResponseTemplate::new(status).set_body_string("{\"error\":\"no\"}")).await;
        let uri = server.uri();
        let mut env = vec![("HYPER_URL", uri.as_str())];
        env.extend(key.map(|k| ("HYPER_API_KEY", k)));
        let run = home.run_env(&update, &env);
        run.fails_with(&[&format!("server answered {status}"), hint]);
        assert!(!run.stderr.contains("Catwalk"), "{run:?}");
    }
}

/// A refresh held because its signature is missing says what works: the
/// mirror serving the `.minisig`, the signature given with `--signature
/// FILE` (that command applies it), or keeping the one in use.
#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_held_for_its_signature_names_a_step_that_works() {
    let signer = Signer::new();
    let key = signer.public_key();
    let unsigned = server(HYPER).await;
    let uri = unsigned.uri();
    let home = Home::new();
    let env = [
        ("CATWALK_URL", uri.as_str()),
        ("HYPER_URL", uri.as_str()),
        ("HYPER_API_KEY", "sk-env"),
        ("CRUSH_PROVIDER_PUBLIC_KEY", key.as_str()),
    ];
    let run = home.run_env(&["providers", "--wait"], &env);
    let url = format!("{uri}/api/v1/provider");
    let apply = format!("crush update-providers --source hyper {url} --signature FILE");
    // A command a line (issue 29 findings, C1).
    assert!(
        run.stderr.contains(&format!(
            "\n  keep the one in use:  crush update-providers --source hyper --keep-current\n  apply it signed:      {apply}\n  (FILE its signature; or the mirror must serve {url}.minisig)"
        )),
        "{run:?}"
    );
    let (_dir, file) = temp_file(
        "provider.minisig",
        signer
            .sign(HYPER.as_bytes(), Some(1_700_000_000))
            .as_bytes(),
    );
    let apply = apply.replace("FILE", file.to_str().unwrap());
    let words: Vec<&str> = apply.split(' ').skip(1).collect();
    home.run_env(&words, &env).ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
}

/// The key is the one Crush v0.90 sends, from the files in the order it
/// merges them (its options' order is the spec's, the README's table):
/// the login's global state over the global JSON, a project's crushrc
/// over its `.crush.json`, the workspace file over every project file.
#[tokio::test(flavor = "multi_thread")]
async fn the_key_comes_from_the_file_crush_v090_takes_it_from() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let key = |k: &str| format!(r#"{{"providers":{{"hyper":{{"api_key":"{k}"}}}}}}"#);
    let home = Home::new();
    git_init(home.path());
    fs::create_dir_all(home.data_dir()).unwrap();
    fs::write(home.data_dir().join("crush.json"), key("login-token")).unwrap();
    home.config(&key("old-config"));
    let env = [("CATWALK_URL", uri.as_str()), ("HYPER_URL", uri.as_str())];
    let every = ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");
    home.run_env(&["providers", "--wait"], &[env[0], env[1], every])
        .ok();
    fs::write(home.path().join(".crush.json"), key("dot-json")).unwrap();
    fs::write(
        home.path().join("crushrc"),
        "provider add hyper --api-key rc\n",
    )
    .unwrap();
    home.run_env(&["providers", "--wait"], &[env[0], env[1], every])
        .ok();
    fs::create_dir_all(home.path().join(".crush")).unwrap();
    fs::write(home.path().join(".crush/crush.json"), key("workspace")).unwrap();
    home.run_env(&["providers", "--wait"], &[env[0], env[1], every])
        .ok();
    let status = home
        .run_env(&["providers", "--status", "--json"], &env)
        .json();
    assert_eq!(
        status["hyper"]["key"],
        home.path().join(".crush/crush.json").display().to_string()
    );
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["Bearer login-token", "Bearer rc", "Bearer workspace"]
    );
}

/// `--status` says the start-up refreshes Hyper's provider only when it
/// can: not for a `HYPER_URL` that is no http(s) URL, which a start
/// tells instead.
#[test]
fn the_status_says_no_refresh_for_a_hyper_url_the_start_cannot_use() {
    let home = Home::new();
    let env = [("HYPER_URL", "ftp://x"), ("HYPER_API_KEY", "k")];
    let status = home
        .run_env(&["providers", "--status", "--json"], &env)
        .json();
    assert_eq!(
        status["hyper"]["refresh_at_start_up"],
        "no: HYPER_URL=\"ftp://x\" is not an http:// or https:// URL: Hyper's provider is not refreshed at start-up (Crush's request with it fails too)"
    );
    // One Go refuses for another reason is said so, at every start too.
    let closed = closed_port_url();
    let env = [
        ("HYPER_URL", "http://127.0.0.1:9 "),
        ("HYPER_API_KEY", "k"),
        ("CATWALK_URL", closed.as_str()),
    ];
    let run = home.run_env(&["providers"], &env);
    home.wait_for_the_helper();
    assert!(
        run.stderr.contains(
            "HYPER_URL=\"http://127.0.0.1:9 \" is a URL Go refuses (a control character, or a space or backslash before the path): Hyper's provider is not refreshed at start-up"
        ),
        "{run:?}"
    );
}

/// An error status after a redirect is the redirect target's, and says
/// so, as a failure to connect there does.
#[tokio::test(flavor = "multi_thread")]
async fn an_error_status_after_a_redirect_names_where_it_came_from() {
    let other = MockServer::start().await;
    Mock::given(path("/y"))
        .respond_with(ResponseTemplate::new(500).set_body_string("thanks"))
        .mount(&other)
        .await;
    let first =
        serving(ResponseTemplate::new(302).insert_header("location", format!("{}/y", other.uri())))
            .await;
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", "--source", "hyper"],
        &[("HYPER_URL", &first.uri())],
    );
    run.fails_with(&[&format!(
        "redirected to {}/y: server answered 500 Internal Server Error: thanks",
        other.uri()
    )]);
}

/// `--status` says when the Hyper key comes from a `.env` file, and
/// where in it, as it does for `HYPER_URL` (never the key itself).
#[test]
fn the_status_names_the_dotenv_that_sets_the_key() {
    let home = Home::new();
    fs::write(home.path().join(".env"), "HYPER_API_KEY=sk-dotenv\n").unwrap();
    let run = home.run(&["providers", "--status", "--json"]);
    let dotenv = home.path().canonicalize().unwrap().join(".env");
    assert_eq!(
        run.json()["hyper"]["key"],
        format!("HYPER_API_KEY at {}:1", dotenv.display())
    );
    assert!(!run.stdout.contains("sk-dotenv"), "{run:?}");
}

/// Issue 35, item 11: `--source hyper embedded`, or `HYPER_URL=embedded`,
/// is Crush's own embedded Hyper provider, of which this build carries no
/// copy: the outcome is Crush's all the same, `hyper.json` and its state
/// removed (Crush then uses its embedded provider), said in one
/// message, exit 0; a dry run says what it would remove and removes nothing;
/// nothing to remove is no failure; one that cannot be removed is, with
/// what to do. The catalog is not touched.
#[test]
fn embedded_removes_hyper_json_so_crush_uses_its_own() {
    let home = Home::new();
    let (_dir, file) = temp_file("h.json", HYPER.as_bytes());
    let file = file.to_str().unwrap();
    home.run(&["update-providers", "embedded", "-q"]).ok();
    let catalog = home.cache().unwrap();
    let state = home.data_dir().join("hyper.state.json");
    for (args, env) in [
        (
            &["update-providers", "--source", "hyper", "embedded"][..],
            None,
        ),
        (
            &["update-providers", "--source=hyper"],
            Some(("HYPER_URL", "embedded")),
        ),
    ] {
        home.run(&["update-providers", "--source", "hyper", file])
            .ok();
        assert!(home.hyper().is_some() && state.exists());
        let dry: Vec<&str> = [args, &["--dry-run"]].concat();
        let run = home.run_env(&dry, env.as_slice());
        run.ok();
        assert!(
            words(&run.stdout).contains("Would remove")
                && words(&run.stdout).contains("hyper.json and hyper.state.json")
                && words(&run.stdout).contains("embedded Hyper provider"),
            "{run:?}"
        );
        assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
        assert!(state.exists());
        let run = home.run_env(args, env.as_slice());
        run.ok();
        assert!(
            words(&run.stdout).contains("Removed")
                && run
                    .stdout
                    .contains("Crush uses its own embedded Hyper provider"),
            "{run:?}"
        );
        assert!(home.hyper().is_none() && !state.exists(), "{args:?}");
        assert_eq!(home.cache().unwrap(), catalog);
        // Nothing left to remove: the same outcome.
        let run = home.run_env(args, env.as_slice());
        run.ok();
        assert!(
            words(&run.stdout).contains("embedded Hyper provider"),
            "{run:?}"
        );
    }
    assert_eq!(home.data_entries(), CACHE_FILES);
    // --check answers whether there is something to remove; there is no
    // document for --output to write.
    let check = [
        "update-providers",
        "--source",
        "hyper",
        "embedded",
        "--check",
    ];
    home.run(&check).ok();
    home.run(&["update-providers", "--source", "hyper", file, "-q"])
        .ok();
    assert_eq!(home.run(&check).code, Some(3));
    assert!(home.hyper().is_some());
    let out = home.path().join("out.json");
    let out = out.to_str().unwrap();
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        "embedded",
        "--output",
        out,
    ])
    .usage_error();
    assert!(home.hyper().is_some());
    // A state alone (a first refresh that failed) goes too.
    home.run(&["update-providers", "--source", "hyper", "embedded", "-q"])
        .ok();
    fs::write(&state, b"{}").unwrap();
    home.run(&["update-providers", "--source", "hyper", "embedded", "-q"])
        .ok();
    assert!(!state.exists());
    // One that cannot be removed: a folder in its place.
    fs::create_dir_all(home.hyper_file().join("occupied")).unwrap();
    home.run(&["update-providers", "--source", "hyper", "embedded"])
        .fails_with(&["cannot remove", "hyper.json"]);
    assert!(home.hyper_file().join("occupied").is_dir());
    // No data folder at all: nothing to remove, nothing made.
    let home = Home::new();
    home.run(&["update-providers", "--source", "hyper", "embedded"])
        .ok();
    assert!(!home.data_dir().exists());
}

/// Issue 35, item 7: a project's `.env` that sets `HYPER_URL` does not
/// receive the user's Hyper key on a person's `update-providers --source
/// hyper`: the update is refused, naming the variable and the file, and
/// nothing is sent. Set in the user's own environment, the same URL gets
/// the key.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_dotenv_hyper_url_never_gets_the_key_of_an_update() {
    let server = server(HYPER).await;
    let uri = server.uri();
    let home = Home::new();
    fs::write(home.path().join(".env"), format!("HYPER_URL={uri}\n")).unwrap();
    let dotenv = home.path().canonicalize().unwrap().join(".env");
    let key = ("HYPER_API_KEY", "sk-users-own");
    let run = home.run_env(&["update-providers", "--source", "hyper"], &[key]);
    run.fails_with(&[
        &format!("HYPER_URL at {}:1", dotenv.display()),
        "the Hyper key",
        "set HYPER_URL in your own environment, or remove it from",
    ]);
    assert!(hyper_requests(&server).await.is_empty());
    assert_eq!(home.hyper(), None);
    home.run_env(
        &["update-providers", "--source", "hyper"],
        &[key, ("HYPER_URL", &uri)],
    )
    .ok();
    assert_eq!(
        received(&hyper_requests(&server).await, "authorization"),
        ["Bearer sk-users-own"]
    );
}

/// A Hyper mirror serving `hyper` signed at `at` by `signer`.
async fn signed_hyper(signer: &Signer, hyper: &str, at: u64) -> MockServer {
    let server = serve_at(
        "/api/v1/provider",
        ResponseTemplate::new(200).set_body_string(hyper.to_owned()),
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/provider.minisig"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string(signer.sign(hyper.as_bytes(), Some(at))),
        )
        .mount(&server)
        .await;
    server
}

/// Issue 34, item 4: Hyper's provider has a memory too. A `hyper.json`
/// Crush rewrote (and its state gone with it) is no way to roll back a
/// signed document: the newest signing time seen is remembered beside
/// the places keys went, not only in `hyper.state.json`. Before, the
/// older document was applied without `--allow-downgrade`.
#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_hyper_json_cannot_roll_back_a_signed_document() {
    let signer = Signer::new();
    let key = ("CRUSH_PROVIDER_PUBLIC_KEY", signer.public_key());
    let newer = signed_hyper(&signer, &hyper_next(), 1_700_086_400).await;
    let older = signed_hyper(&signer, HYPER, 1_700_000_000).await;
    let home = Home::new();
    let env = [(key.0, key.1.as_str())];
    home.run_env(
        &["update-providers", "--source", "hyper", &newer.uri()],
        &env,
    )
    .ok();
    assert_eq!(home.hyper().unwrap(), hyper_next().as_bytes());
    // Crush rewrites hyper.json from its own fetch; its state and the copy
    // reviewed here are gone with a clean-up.
    let dir = home.data_dir();
    fs::write(dir.join("hyper.json.1.tmp"), hyper_next()).unwrap();
    fs::rename(dir.join("hyper.json.1.tmp"), home.hyper_file()).unwrap();
    for gone in ["hyper.state.json", "hyper.reviewed.json"] {
        fs::remove_file(dir.join(gone)).unwrap();
    }
    home.run_env(
        &["update-providers", "--source", "hyper", &older.uri()],
        &env,
    )
    .fails_with(&["before the newest", "--allow-downgrade"]);
    home.run_env(
        &[
            "update-providers",
            "--source",
            "hyper",
            &older.uri(),
            "--allow-downgrade",
        ],
        &env,
    )
    .ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
}

/// Issue 34, item 4: a `hyper.json` Crush wrote that sends the Hyper key
/// where it never went is held at the next start: the one reviewed here
/// goes back in its place, and the other is kept aside and told.
#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_hyper_json_moving_the_key_is_held() {
    let home = Home::new();
    let server = server(HYPER).await;
    home.run(&["update-providers", "--source", "hyper", &server.uri()])
        .ok();
    let dir = home.data_dir();
    fs::write(dir.join("hyper.json.1.tmp"), hyper_moved()).unwrap();
    fs::rename(dir.join("hyper.json.1.tmp"), home.hyper_file()).unwrap();
    let run = home.run_env(
        &["providers", "--json"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    run.ok();
    assert_eq!(home.hyper().unwrap(), HYPER.as_bytes());
    let aside = dir.join("hyper.foreign.json");
    assert_eq!(fs::read(&aside).unwrap(), hyper_moved().as_bytes());
    let told = words(&run.stderr);
    assert!(
        told.contains("Hyper's provider that another program wrote into the cache was held")
            && told.contains("https://attacker.example:443")
            && told.contains(&format!(
                "crush update-providers --source hyper {} --allow-key-move",
                aside.display()
            )),
        "{run:?}"
    );
}
