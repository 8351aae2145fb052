//! Signed catalogs from mirrors: with a key pinned, every source but the
//! embedded snapshot must come with a valid minisign signature by one of
//! the pinned keys, signed no earlier than the cached catalog. Keys and
//! signatures are made at test time; the real binary, wiremock on
//! loopback, a temporary HOME.

use std::fs;

use crate::common::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY_ENV: &str = "CRUSH_PROVIDER_PUBLIC_KEY";

/// The first change of a refresh that must have been held.
fn held_change(record: &serde_json::Value) -> &str {
    assert_eq!(record["outcome"], "held", "{record}");
    record["held"]["changes"][0].as_str().unwrap()
}

/// A mirror serving `catalog` at /v2/providers and `signature` (if any)
/// at /v2/providers.minisig.
async fn mirror(catalog: &str, signature: Option<String>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/v2/providers"))
        .respond_with(ResponseTemplate::new(200).set_body_string(catalog))
        .mount(&server)
        .await;
    let answer = match signature {
        Some(signature) => ResponseTemplate::new(200).set_body_string(signature),
        None => ResponseTemplate::new(404).set_body_string("not found"),
    };
    Mock::given(path("/v2/providers.minisig"))
        .respond_with(answer)
        .mount(&server)
        .await;
    server
}

/// `signature` as minisign's legacy format says it: the algorithm `Ed`
/// (the raw bytes signed) instead of `ED` (their hash). Its base64 line
/// starts with the two algorithm bytes, of which the second is the second
/// character's low half: `RU…` becomes `RW…`.
fn legacy(signature: &str) -> String {
    let mut lines: Vec<String> = signature.lines().map(str::to_owned).collect();
    assert!(lines[1].starts_with("RU"), "{signature}");
    lines[1].replace_range(1..2, "W");
    lines.join("\n") + "\n"
}

// Signing times in the past (a signature dated more than a day after the
// clock is refused).
const T1: u64 = 1_700_000_000;
const T2: u64 = 1_700_086_400;

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_mirror_is_accepted_and_its_signing_time_recorded() {
    let signer = Signer::new();
    let server = mirror(CATALOG_A, Some(signer.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    let home = Home::new();
    let key = signer.public_key();
    let run = home.run_env(
        &[
            "update-providers",
            &server.uri(),
            "--json",
            "--allow-shrink",
        ],
        &[(KEY_ENV, &key)],
    );
    run.ok();
    // The same RFC 3339 time as `providers --status` shows.
    assert_eq!(run.json()["signed_at"], "2023-11-14T22:13:20Z");
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    assert_eq!(home.state().unwrap()["signed_at"], T1);
    let status = home
        .run_env(&["providers", "--status", "--json"], &[(KEY_ENV, &key)])
        .json();
    assert_eq!(status["public_keys"]["keys"][0], key.as_str());
    assert_eq!(status["public_keys"]["origin"], format!("{KEY_ENV}={key}"));
    // The report says it was verified, by which key, signed when: last,
    // with what happened.
    let home = Home::new();
    let run = home.run_env(
        &["update-providers", &server.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    );
    run.ok();
    let id = signer.key_id();
    assert!(
        run.stdout.contains(&format!(
            "\n  verified: signed by key {id} at 2023-11-14T22:13:20Z\n  written to "
        )),
        "{run:?}"
    );
    assert!(
        signer.public_key_file().contains(&id),
        "the id minisign shows"
    );
    let json = home
        .run_env(
            &["update-providers", &server.uri(), "--json"],
            &[(KEY_ENV, &key)],
        )
        .json();
    assert_eq!(json["signed_by"], id.as_str());
}

/// Every way a signature can be wrong: nothing written, one line saying
/// why, exit 1.
#[tokio::test(flavor = "multi_thread")]
async fn unsigned_wrongly_signed_or_foreign_catalogs_are_refused() {
    let signer = Signer::new();
    let rotated_out = Signer::new();
    let key = signer.public_key();
    let cases: Vec<(&str, Option<String>, &[&str])> = vec![
        (
            "unsigned",
            None,
            &["no signature", "/v2/providers.minisig", "404 Not Found"],
        ),
        (
            "signed for other bytes",
            Some(signer.sign(CATALOG_B.as_bytes(), Some(T1))),
            &["the signature does not match the catalog"],
        ),
        (
            "signed by a key no longer pinned",
            Some(rotated_out.sign(CATALOG_A.as_bytes(), Some(T1))),
            &["the signature was not made by a pinned key"],
        ),
        (
            "no timestamp",
            Some(signer.sign(CATALOG_A.as_bytes(), None)),
            &["trusted comment has no timestamp"],
        ),
        (
            "the legacy format",
            Some(legacy(&signer.sign(CATALOG_A.as_bytes(), Some(T1)))),
            &[
                "the signature is in minisign's legacy format, which is not accepted",
                "without -l",
            ],
        ),
        (
            "garbage",
            Some("not a signature\n".into()),
            &["the signature cannot be read"],
        ),
        (
            "oversized",
            Some("x".repeat(100 * 1024)),
            &["the signature cannot be read: it is larger than 64 KiB"],
        ),
    ];
    for (what, signature, parts) in cases {
        let server = mirror(CATALOG_A, signature).await;
        let home = Home::new();
        let run = home.run_env(&["update-providers", &server.uri()], &[(KEY_ENV, &key)]);
        let mut expected = vec!["/v2/providers: refused\n  caused by: "];
        expected.extend_from_slice(parts);
        run.fails_with(&expected);
        assert!(home.cache().is_none(), "{what}");
        assert!(
            home.data_entries().iter().all(|n| !n.ends_with(".tmp")),
            "{what}"
        );
    }
}

/// Keys rotate: with the old and the new key pinned, either signs; a `.pub`
/// file works as well as the base64 line, and so does the JSON option.
#[tokio::test(flavor = "multi_thread")]
async fn pinned_keys_rotate_and_come_from_files_and_config() {
    let old = Signer::new();
    let new = Signer::new();
    let server = mirror(CATALOG_A, Some(new.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    let home = Home::new();
    let pub_file = home.path().join("mirror.pub");
    fs::write(&pub_file, new.public_key_file()).unwrap();
    let both = format!("{}, {}", old.public_key(), pub_file.display());
    home.run_env(
        &["update-providers", &server.uri(), "--allow-shrink"],
        &[(KEY_ENV, &both)],
    )
    .ok();

    let home = Home::new();
    fs::create_dir_all(home.path().join(".config/crush")).unwrap();
    fs::write(
        home.path().join(".config/crush/crush.json"),
        format!(
            r#"{{"options":{{"provider_public_keys":["{}"]}}}}"#,
            old.public_key()
        ),
    )
    .unwrap();
    home.run(&["update-providers", &server.uri()])
        .fails_with(&["not made by a pinned key"]);
    home.run(&["update-providers", "embedded"]).ok();

    home.run_env(
        &["update-providers", &server.uri()],
        &[(KEY_ENV, "RWQnot-a-key")],
    )
    .fails_with(&[
        "CRUSH_PROVIDER_PUBLIC_KEY=RWQnot-a-key",
        "neither a minisign public key",
    ]);
}

/// Files carry FILE.minisig beside them; standard input takes
/// `--signature FILE`; the embedded snapshot needs none.
#[test]
fn files_standard_input_and_the_embedded_snapshot() {
    let signer = Signer::new();
    let key = signer.public_key();
    let env = [(KEY_ENV, key.as_str())];
    let (dir, file) = temp_file("providers.json", CATALOG_A.as_bytes());
    let home = Home::new();
    let run = home.run_env(&["update-providers", file.to_str().unwrap()], &env);
    run.fails_with(&["no signature", "providers.json.minisig"]);
    // The key is fine; the signature is missing (issue 29 findings, C8).
    assert!(
        !run.stderr.contains("check CRUSH_PROVIDER_PUBLIC_KEY"),
        "{run:?}"
    );
    let signature = dir.path().join("providers.json.minisig");
    fs::write(&signature, signer.sign(CATALOG_A.as_bytes(), Some(T1))).unwrap();
    home.run_env(
        &["update-providers", file.to_str().unwrap(), "--allow-shrink"],
        &env,
    )
    .ok();

    let stdin = |args: &[&str]| {
        let mut cmd = home.crush(args);
        cmd.env(KEY_ENV, &key)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(CATALOG_A.as_bytes())
            .unwrap();
        Run::from(child.wait_with_output().unwrap())
    };
    // One sentence, said once, of standard input (no mirror there).
    let run = stdin(&["update-providers", "-"]);
    run.fails_with(&[
        "error: standard input: refused\n  caused by: no signature: standard input brings none\n  hint: give the catalog's .minisig with --signature FILE",
    ]);
    assert_eq!(run.stderr.matches("signature").count(), 2, "{run:?}");
    assert!(!run.stderr.contains("mirror"), "{run:?}");
    stdin(&[
        "update-providers",
        "-",
        "--allow-shrink",
        "--signature",
        signature.to_str().unwrap(),
    ])
    .ok();

    home.run_env(&["update-providers", "embedded"], &env).ok();
    // Without a pinned key a signature would go unchecked: a usage error.
    let run = home.run(&[
        "update-providers",
        "embedded",
        "--signature",
        signature.to_str().unwrap(),
    ]);
    run.usage_error();
    assert!(
        run.stderr.contains("--signature is checked against a pinned key, and none is pinned; set CRUSH_PROVIDER_PUBLIC_KEY"),
        "{run:?}"
    );
}

/// A signed catalog older than the cached one is a replay: refused unless
/// `--allow-downgrade`, held by a refresh.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_signed_catalog_is_refused_unless_allowed() {
    let signer = Signer::new();
    let key = signer.public_key();
    let newer = mirror(
        CATALOG_A2,
        Some(signer.sign(CATALOG_A2.as_bytes(), Some(T2))),
    )
    .await;
    let older = mirror(CATALOG_A, Some(signer.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    let home = Home::new();
    home.run_env(
        &["update-providers", &newer.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    home.run_env(&["update-providers", &older.uri()], &[(KEY_ENV, &key)])
        .fails_with(&["refused: the new catalog was signed at 2023-11-14T22:13:20Z, before the newest catalog applied here (signed at 2023-11-15T22:13:20Z)", "--allow-downgrade"]);
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());

    // The background refresh holds it.
    let before = home.last_refresh();
    let run = home.run_env(
        &["providers", "--json"],
        &[
            (KEY_ENV, &key),
            ("CATWALK_URL", &older.uri()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    );
    assert_eq!(run.stdout, CATALOG_A2);
    let record = home.wait_for_refresh(&before);
    assert!(
        held_change(&record).contains("before the newest catalog applied here"),
        "{record}"
    );
    assert_eq!(record["held"]["needs"], serde_json::json!(["downgrade"]));
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());

    home.run_env(
        &["update-providers", &older.uri(), "--allow-downgrade"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

/// At start-up an unsigned or wrongly signed catalog is never applied:
/// held by the refresh, and told at every start. Without a cache the start
/// uses the embedded snapshot meanwhile, and a signed catalog is applied by
/// the next refresh.
#[tokio::test(flavor = "multi_thread")]
async fn start_up_holds_or_refuses_what_is_not_signed() {
    let signer = Signer::new();
    let key = signer.public_key();
    let good = mirror(CATALOG_A, Some(signer.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    let unsigned = mirror(CATALOG_A2, None).await;
    let env = |url: &str| {
        vec![
            (KEY_ENV, key.clone()),
            ("CATWALK_URL", url.to_string()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0".to_string()),
        ]
    };
    let run_with = |home: &Home, url: &str, args: &[&str]| {
        let env = env(url);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        home.run_env(args, &env)
    };
    let embedded = crush_providers::catalog::embedded::catalog_bytes();
    let home = Home::new();
    // A person applied a catalog that small once: the floor.
    home.with_floor_of(CATALOG_A.as_bytes());
    let run = run_with(&home, &unsigned.uri(), &["providers", "--json"]);
    run.ok();
    assert_eq!(run.stdout.as_bytes(), embedded);
    let record = home.wait_for_refresh(&None);
    assert!(
        held_change(&record).contains("refused: no signature"),
        "{record}"
    );
    let run = run_with(&home, &unsigned.uri(), &["providers", "--json", "--wait"]);
    assert_eq!(run.stdout.as_bytes(), embedded);
    assert!(run.stderr.contains("refused: no signature"), "{run:?}");

    let before = home.last_refresh();
    run_with(&home, &good.uri(), &["providers", "--json"]).ok();
    assert_eq!(home.wait_for_refresh(&before)["outcome"], "updated");
    assert_eq!(
        home.cache().unwrap(),
        CATALOG_A.as_bytes(),
        "signed: applied"
    );
    assert_eq!(home.state().unwrap()["signed_at"], T1);

    let before = home.last_refresh();
    run_with(&home, &unsigned.uri(), &["providers", "--json"]).ok();
    let record = home.wait_for_refresh(&before);
    assert!(held_change(&record).contains("no signature"), "{record}");
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

/// The refresh holds every signature that `update-providers` refuses:
/// for other bytes, by a rotated-out key, without a timestamp, garbage,
/// oversized.
#[tokio::test(flavor = "multi_thread")]
async fn the_refresh_holds_every_wrong_signature() {
    let signer = Signer::new();
    let rotated_out = Signer::new();
    let key = signer.public_key();
    let cases: Vec<(Option<String>, &str)> = vec![
        (
            Some(signer.sign(CATALOG_B.as_bytes(), Some(T2))),
            "does not match the catalog",
        ),
        (
            Some(rotated_out.sign(CATALOG_A2.as_bytes(), Some(T2))),
            "not made by a pinned key",
        ),
        (
            Some(signer.sign(CATALOG_A2.as_bytes(), None)),
            "no timestamp",
        ),
        (Some("garbage".into()), "cannot be read"),
        (
            Some(legacy(&signer.sign(CATALOG_A2.as_bytes(), Some(T2)))),
            "legacy format",
        ),
        (Some("x".repeat(100 * 1024)), "larger than 64 KiB"),
    ];
    let good = mirror(CATALOG_A, Some(signer.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    for (signature, why) in cases {
        let bad = mirror(CATALOG_A2, signature).await;
        let home = Home::new();
        home.run_env(
            &["update-providers", &good.uri(), "--allow-shrink"],
            &[(KEY_ENV, &key)],
        )
        .ok();
        let before = home.last_refresh();
        let run = home.run_env(
            &["providers", "--json"],
            &[
                (KEY_ENV, key.as_str()),
                ("CATWALK_URL", bad.uri().as_str()),
                ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
            ],
        );
        assert_eq!(run.stdout, CATALOG_A);
        let record = home.wait_for_refresh(&before);
        let change = held_change(&record);
        assert!(
            change.starts_with("the new catalog was refused: ") && change.contains(why),
            "{why}: {change}"
        );
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes(), "{why}");
    }
}

/// A mirror that counts its connections: the catalog at /v2/providers and
/// `signature` at /v2/providers.minisig.
fn counting_mirror(
    catalog: &'static str,
    signature: String,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    keep_alive_server(move |path| match path {
        "/v2/providers" => Some(catalog.as_bytes().to_vec()),
        "/v2/providers.minisig" => Some(signature.clone().into_bytes()),
        _ => None,
    })
}

/// The signature comes on the connection that brought the catalog, for
/// `update-providers` and for the start-up refresh alike: one connection,
/// one name lookup, one handshake per download.
#[test]
fn a_catalog_and_its_signature_share_one_connection() {
    use std::sync::atomic::Ordering;
    let signer = Signer::new();
    let key = signer.public_key();
    let (url, connections) =
        counting_mirror(CATALOG_A, signer.sign(CATALOG_A.as_bytes(), Some(T1)));
    let home = Home::new();
    home.run_env(
        &["update-providers", &url, "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    assert_eq!(connections.load(Ordering::SeqCst), 1);

    let (url, connections) =
        counting_mirror(CATALOG_A2, signer.sign(CATALOG_A2.as_bytes(), Some(T2)));
    let before = home.last_refresh();
    home.run_env(
        &["providers", "--json"],
        &[
            (KEY_ENV, key.as_str()),
            ("CATWALK_URL", url.as_str()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    )
    .ok();
    assert_eq!(home.wait_for_refresh(&before)["outcome"], "updated");
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

/// A signed catalog written with `--output` carries its signature beside
/// it: the file goes on to a machine pinning the key as it came.
#[tokio::test(flavor = "multi_thread")]
async fn output_carries_the_signature_along() {
    let signer = Signer::new();
    let key = signer.public_key();
    let signature = signer.sign(CATALOG_A.as_bytes(), Some(T1));
    let server = mirror(CATALOG_A, Some(signature.clone())).await;
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("providers.json");
    home.run_env(
        &[
            "update-providers",
            &server.uri(),
            "--output",
            out.to_str().unwrap(),
        ],
        &[(KEY_ENV, &key)],
    )
    .ok();
    assert_eq!(fs::read(&out).unwrap(), CATALOG_A.as_bytes());
    assert_eq!(
        fs::read_to_string(dir.path().join("providers.json.minisig")).unwrap(),
        signature
    );
    let other = Home::new();
    other
        .run_env(
            &["update-providers", out.to_str().unwrap(), "--allow-shrink"],
            &[(KEY_ENV, &key)],
        )
        .ok();
    assert_eq!(other.cache().unwrap(), CATALOG_A.as_bytes());
}

/// Seconds since the Unix epoch, now.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Issue 25, case 6: a signature dated in the future (2100, or a year RFC
/// 3339 cannot write) is refused, naming both times, by `update-providers`
/// and held by a refresh, so that it cannot make every honest catalog
/// after it look older; one a few minutes ahead of the clock (a clock a
/// little off) is accepted.
#[tokio::test(flavor = "multi_thread")]
async fn a_signature_from_the_future_is_refused_and_a_few_minutes_ahead_is_not() {
    let signer = Signer::new();
    let key = signer.public_key();
    for (when, shown) in [
        (4_102_444_800, "2100-01-01T00:00:00Z"),
        (
            253_402_300_800,
            "253402300800 seconds after 1970 (after the year 9999)",
        ),
    ] {
        let server = mirror(
            CATALOG_A,
            Some(signer.sign(CATALOG_A.as_bytes(), Some(when))),
        )
        .await;
        let home = Home::new();
        for json in [false, true] {
            let mut args = vec!["update-providers", "-", "--allow-shrink"];
            let url = format!("{}/v2/providers", server.uri());
            args[1] = &url;
            if json {
                args.push("--json");
            }
            let run = home.run_env(&args, &[(KEY_ENV, &key)]);
            run.fails_with(&[
                &format!("refused\n  caused by: it was signed at {shown}, more than a day after this machine's clock ("),
                "check this machine's clock",
            ]);
            if json {
                assert!(
                    run.json()["error"]["cause"]
                        .as_str()
                        .unwrap()
                        .contains(shown)
                );
            }
        }
        assert!(home.cache().is_none(), "{shown}");
        // A refresh holds it, and says why at every start.
        let before = home.last_refresh();
        home.run_env(
            &["providers", "--json"],
            &[
                (KEY_ENV, key.as_str()),
                ("CATWALK_URL", server.uri().as_str()),
            ],
        )
        .ok();
        let record = home.wait_for_refresh(&before);
        assert!(held_change(&record).contains(shown), "{record}");
        let status = home.run_env(&["providers", "--status"], &[(KEY_ENV, &key)]);
        status.ok();
        assert!(status.stdout.contains(shown), "{status:?}");
    }
    let server = mirror(
        CATALOG_A,
        Some(signer.sign(CATALOG_A.as_bytes(), Some(now() + 600))),
    )
    .await;
    let home = Home::new();
    home.run_env(
        &["update-providers", &server.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

/// Issue 25, case 6: no time a state file holds, however far off (written
/// by an earlier version, or by hand), makes a command panic: `--status`,
/// its JSON, a start, a start that waits, `update-providers --json`, and
/// the background helper all run and exit as usual.
#[test]
fn no_time_in_the_state_file_makes_a_command_panic() {
    for at in [253_402_300_800_u64, u64::MAX] {
        let home = Home::new();
        home.run(&["update-providers", "embedded"]).ok();
        let mut state = home.state().unwrap();
        for key in ["fetched_at", "confirmed_at", "signed_at"] {
            state[key] = at.into();
        }
        state["refresh"] = serde_json::json!({
            "at": at, "url": "http://127.0.0.1:1/v2/providers", "outcome": "held",
            "held": {"changes": ["a finding"], "flags": []}
        });
        fs::write(home.state_file(), serde_json::to_vec(&state).unwrap()).unwrap();
        let closed = closed_port_url();
        let env = [("CATWALK_URL", closed.as_str())];
        for args in [
            &["providers", "--status"][..],
            &["providers", "--status", "--json"],
            &["providers"],
            &["providers", "--wait"],
            &["models", "--json"],
        ] {
            let run = home.run_env(args, &env);
            assert_eq!(run.code, Some(0), "{at} {args:?}: {run:?}");
            assert!(!run.stderr.contains("panicked"), "{at} {args:?}: {run:?}");
        }
        let (_dir, file) = temp_file(
            "providers.json",
            crush_providers::catalog::embedded::catalog_bytes(),
        );
        let run = home.run(&["update-providers", file.to_str().unwrap(), "--json"]);
        assert_eq!(run.code, Some(0), "{at}: {run:?}");
        let helper = home.run(&[
            "refresh-in-background",
            "--cache-dir",
            home.data_dir().to_str().unwrap(),
            "--url",
            &format!("{closed}/v2/providers"),
            "--timeout",
            "2",
            "--interval",
            "0",
        ]);
        assert_eq!(helper.code, Some(0), "{at}: {helper:?}");
    }
}

/// Issue 25, case 6: the newest signing time seen is remembered apart from
/// the cache's bytes, so `update-providers embedded` (or any rewrite of
/// the cache) does not forget it: an older signed catalog is still
/// refused, and held by a refresh; a newer one is applied.
#[tokio::test(flavor = "multi_thread")]
async fn the_newest_signing_time_survives_the_embedded_snapshot() {
    let signer = Signer::new();
    let key = signer.public_key();
    let newer = mirror(
        CATALOG_A2,
        Some(signer.sign(CATALOG_A2.as_bytes(), Some(T2))),
    )
    .await;
    let older = mirror(CATALOG_A, Some(signer.sign(CATALOG_A.as_bytes(), Some(T1)))).await;
    let home = Home::new();
    home.run_env(
        &["update-providers", &newer.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    home.run_env(&["update-providers", "embedded"], &[(KEY_ENV, &key)])
        .ok();
    assert_eq!(home.state().unwrap()["signed_at"], serde_json::Value::Null);
    home.run_env(
        &["update-providers", &older.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .fails_with(&[
        "refused: the new catalog was signed at 2023-11-14T22:13:20Z, before the newest catalog applied here (signed at 2023-11-15T22:13:20Z)",
        "--allow-downgrade",
    ]);
    let before = home.last_refresh();
    home.run_env(
        &["providers", "--json"],
        &[
            (KEY_ENV, key.as_str()),
            ("CATWALK_URL", older.uri().as_str()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    )
    .ok();
    let record = home.wait_for_refresh(&before);
    assert!(
        record["held"]["changes"]
            .to_string()
            .contains("before the newest catalog applied here"),
        "{record}"
    );
    assert_eq!(
        home.cache().unwrap(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    home.run_env(
        &["update-providers", &newer.uri(), "--allow-shrink"],
        &[(KEY_ENV, &key)],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());
}

/// Only the user pins keys (issue 35, item 6): a project's `.env`, which
/// Crush loads, may move the global config folder for Crush's own
/// settings, but the files that pin keys are found through the user's own
/// environment. A `.env` moving `CRUSH_GLOBAL_CONFIG` or `XDG_CONFIG_HOME`
/// away from the user's pinned key does not let an unsigned catalog in.
#[test]
fn a_projects_dotenv_does_not_unpin_the_users_key() {
    let signer = Signer::new();
    let (_dir, catalog) = temp_file("providers.json", CATALOG_A.as_bytes());
    for variable in ["CRUSH_GLOBAL_CONFIG", "XDG_CONFIG_HOME"] {
        let home = Home::new();
        let config = home.path().join(".config/crush");
        fs::create_dir_all(&config).unwrap();
        fs::write(
            config.join("crush.json"),
            format!(
                r#"{{"options": {{"provider_public_keys": ["{}"]}}}}"#,
                signer.public_key()
            ),
        )
        .unwrap();
        let project = home.path().join("project");
        fs::create_dir_all(project.join("elsewhere")).unwrap();
        fs::write(
            project.join(".env"),
            format!("{variable}={}\n", project.join("elsewhere").display()),
        )
        .unwrap();
        let mut update = home.crush(&[
            "update-providers",
            catalog.to_str().unwrap(),
            "--allow-shrink",
        ]);
        let run = Run::from(update.current_dir(&project).output().unwrap());
        run.fails_with(&["no signature"]);
        assert_eq!(home.cache(), None, "{variable}");
        let mut status = home.crush(&["providers", "--status", "--json"]);
        let status = Run::from(status.current_dir(&project).output().unwrap()).json();
        assert_eq!(
            status["public_keys"]["keys"][0],
            signer.public_key().as_str(),
            "{variable}"
        );
    }
}

/// Nor does a `.env` pin a key of the project's own: the system file
/// (`CRUSH_PROVIDERS_SYSTEM_CONFIG`, this tool's own variable, which Crush
/// does not have) is moved only by the user's environment.
#[test]
fn a_projects_dotenv_does_not_pin_a_key() {
    if std::path::Path::new("/etc/crush/crush.json").exists() {
        skip_note("this machine has /etc/crush/crush.json, which the test would read");
        return;
    }
    let projects = Signer::new();
    let home = Home::new();
    let project = home.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let system = project.join("system.json");
    fs::write(
        &system,
        format!(
            r#"{{"options": {{"provider_public_keys": ["{}"]}}}}"#,
            projects.public_key()
        ),
    )
    .unwrap();
    fs::write(
        project.join(".env"),
        format!("CRUSH_PROVIDERS_SYSTEM_CONFIG={}\n", system.display()),
    )
    .unwrap();
    let mut status = home.crush(&["providers", "--status", "--json"]);
    status
        .env_remove("CRUSH_PROVIDERS_SYSTEM_CONFIG")
        .current_dir(&project);
    let run = Run::from(status.output().unwrap());
    assert_eq!(
        run.json()["public_keys"],
        serde_json::Value::Null,
        "{run:?}"
    );
    assert_eq!(
        run.json()["dotenv"]["refused"],
        serde_json::json!(["CRUSH_PROVIDERS_SYSTEM_CONFIG"]),
        "{run:?}"
    );
    // A catalog signed by the project's key is no more than unsigned.
    let (_dir, catalog) = temp_file("providers.json", CATALOG_A.as_bytes());
    let signature = catalog.with_extension("json.minisig");
    fs::write(&signature, projects.sign(CATALOG_A.as_bytes(), Some(T1))).unwrap();
    let mut update = home.crush(&[
        "update-providers",
        catalog.to_str().unwrap(),
        "--allow-shrink",
        "--signature",
        signature.to_str().unwrap(),
    ]);
    update
        .env_remove("CRUSH_PROVIDERS_SYSTEM_CONFIG")
        .current_dir(&project);
    let run = Run::from(update.output().unwrap());
    assert!(run.stderr.contains("none is pinned"), "{run:?}");
    assert_eq!(home.cache(), None);
}
