//! Through the front, a Crush that starts as Crush v0.90 does reads only
//! the catalog this tool reviewed (issue 34). The stand-in is
//! `go_crush/main.go`, built with `go` from Catwalk's own module at
//! Crush's version: it reads `providers.json`, asks
//! `$CATWALK_URL/v2/providers` with the cache's ETag, keeps the cache on
//! any error and stores only a 200; it asks Hyper with its key; and it
//! writes what it did as a report (see there). Installed as the Crush the
//! front hands over to ([`crate::front::Front`]), with `HYPER_URL` a closed
//! loopback port: nothing here reaches the network.
//!
//! The contract: the front always hands Crush `CATWALK_URL=`[`SENTINEL`],
//! which no Go client can ask (so Crush keeps its cache, silently); it
//! turns Crush's updates off only for a release from v0.91.0 with no Hyper
//! key, and passes the user's own setting through otherwise; a `crush` run
//! from inside Crush gets the user's own `CATWALK_URL` back.
//!
//! Needs `go` 1.26.6 or later (what Catwalk v0.52.1 asks for: the
//! machine's Go, not Debian's older `golang-go`) and, for the first build,
//! the Go module proxy; without `go` the tests say so and pass, but not
//! under CI.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::*;
use crate::front::{Front, MARKER, SENTINEL, UPDATES_OFF};
use serde_json::Value;
use wiremock::ResponseTemplate;

/// The Go stand-in, built once; `None` where there is no `go`.
fn go_crush() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/go_crush");
            let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let out = tmp.join("go_crush");
            // Catwalk's module comes from the module proxy the machine
            // names (or its module cache), checked against go.sum; no
            // other toolchain is fetched.
            let built = Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg(".")
                .env("GOTOOLCHAIN", "local")
                .env("GOFLAGS", "-buildvcs=false")
                .env("GOCACHE", tmp.join("go-build-cache"))
                .current_dir(&source)
                .output();
            match built {
                Ok(output) if output.status.success() => Some(out),
                Ok(output) => panic!(
                    "go_crush does not build: {}",
                    String::from_utf8_lossy(&output.stderr)
                ),
                Err(_) => None,
            }
        })
        .as_deref()
}

/// The front ahead of the Go stand-in, which answers `--version` with
/// `crush version VERSION`; the cache holds the embedded catalog, just
/// confirmed (no start refreshes unless a test makes it due). `None`,
/// said, without `go`.
fn front_of_go(version: &str) -> Option<Front> {
    let Some(go) = go_crush() else {
        skip_without("go", "the starts of a Go Crush through the front");
        return None;
    };
    let mut front = Front::new(version);
    let crush = front.root.path().join("crush/crush");
    fs::remove_file(&crush).unwrap();
    symlink(go, &crush).unwrap();
    front.set("STANDIN_VERSION", version);
    front.set("HYPER_URL", closed_port_url());
    Some(front)
}

/// What one start of the stand-in did (`go_crush/main.go` writes it).
#[derive(Debug)]
struct Report(Value);

impl Report {
    fn env(&self, name: &str) -> Option<&str> {
        self.0["env"][name].as_str()
    }

    fn requests(&self, kind: &str) -> Vec<&Value> {
        self.0["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == kind)
            .collect()
    }

    fn autoupdate(&self) -> bool {
        self.0["autoupdate"].as_bool().unwrap()
    }
}

/// `crush run` through the front, in `folder` with `env` added, which
/// must start the stand-in once: the run and the stand-in's report, once
/// nothing of that start (its background helper) runs on.
#[track_caller]
fn start(front: &Front, folder: &Path, env: &[(&str, &str)]) -> (Run, Report) {
    let log = front.root.path().join("log");
    let reports = || {
        (0..)
            .map(|n| log.join(n.to_string()).join("report.json"))
            .take_while(|p| p.exists())
            .collect::<Vec<_>>()
    };
    let before = reports().len();
    let mut command = front.crush(&["run", "hello"]);
    command.current_dir(folder).envs(env.iter().copied());
    let run = Run::from(command.output().unwrap());
    front.home.wait_for_the_helper();
    let after = reports();
    assert_eq!(
        after.len(),
        before + 1,
        "the stand-in did not start: {run:?}"
    );
    let report = serde_json::from_slice(&fs::read(&after[before]).unwrap()).unwrap();
    (run, Report(report))
}

/// Whether `version` is a release from v0.91.0 on: one that reads the
/// cache with its updates off.
fn reads_the_cache_when_off(version: &str) -> bool {
    let parts: Vec<&str> = version.trim_start_matches('v').split('.').collect();
    let numbers: Vec<u64> = parts.iter().filter_map(|p| p.parse().ok()).collect();
    parts.len() == 3 && numbers.len() == 3 && (numbers[0], numbers[1]) >= (0, 91)
}

/// What the front sets `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` to: `1` where
/// a reading of the settings turned updates off (`off`), and for a release
/// from v0.91.0 without a Hyper key, else the user's own.
fn updates_off_handed(
    version: &str,
    hyper_key: bool,
    users: Option<&str>,
    off: bool,
) -> Option<String> {
    if off || (reads_the_cache_when_off(version) && !hyper_key) {
        Some("1".into())
    } else {
        users.map(str::to_owned)
    }
}

/// Go's `strconv.ParseBool`, an error read as false (as Crush does).
fn go_true(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// The stand-in asked for no catalog but at [`SENTINEL`], which made no
/// request ("unsupported protocol scheme"), none at all with its updates
/// off, and ended with `cache`'s bytes (this tool's reviewed cache), or
/// with its embedded catalog where the test expects it (`None`: the user
/// turned updates off, and that version never reads the cache then).
/// Then: it was handed the sentinel, and the front's marker.
#[track_caller]
fn assert_reviewed(report: &Report, cache: Option<&[u8]>, case: &str) {
    let catalog_requests = report.requests("catwalk");
    if !report.autoupdate() {
        assert!(catalog_requests.is_empty(), "{case}: {report:#?}");
    }
    for request in &catalog_requests {
        assert!(
            // As Go prints the URL: its `|` escaped.
            request["url"] == format!("{SENTINEL}/v2/providers").replace('|', "%7C")
                && request.get("status").is_none()
                && request["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("unsupported protocol scheme")),
            "{case}: the stand-in asked for a catalog: {request}"
        );
    }
    match cache {
        None => assert_eq!(
            report.0["catalog"]["source"], "embedded",
            "{case}: {report:#?}"
        ),
        Some(cache) => {
            assert_eq!(
                report.0["catalog"]["source"], "cache",
                "{case}: {report:#?}"
            );
            assert_eq!(
                report.0["catalog"]["sha256"],
                sha256_hex(cache),
                "{case}: not the reviewed cache: {report:#?}"
            );
        }
    }
    assert_eq!(
        report.env("CATWALK_URL"),
        Some(SENTINEL),
        "{case}: {report:#?}"
    );
    assert!(report.env(MARKER).is_some(), "{case}: {report:#?}");
}

/// Every version, with and without a Hyper key, with the user's updates
/// unset, on (`0`), off (`1`) and off in a config file: the stand-in
/// makes no catalog request and reads the reviewed cache (its embedded
/// catalog where it turned its own updates off and never reads the cache
/// then); its updates go off, and it then asks nothing at all, exactly
/// for a release from v0.91.0 without a Hyper key; Hyper is still asked,
/// with the key, whenever its updates are on.
#[test]
fn every_version_reads_the_reviewed_cache_and_its_updates_go_off_only_where_free() {
    for version in [
        "0.90.0",
        "0.90.1",
        "0.91.0-nightly",
        "0.91.0",
        "v0.92.3",
        "devel",
    ] {
        for hyper_key in [false, true] {
            let Some(mut front) = front_of_go(version) else {
                return;
            };
            if hyper_key {
                front.set("HYPER_API_KEY", "hk-1");
            }
            let cache = front.home.cache().unwrap();
            let home = front.home.path().to_owned();
            for users in [None, Some("0"), Some("1"), Some("config")] {
                let case = format!("{version}, Hyper key {hyper_key}, the user's {users:?}");
                let mut env = vec![];
                let config_off = users == Some("config");
                if config_off {
                    // As `crush` itself reads it; the stand-in is told.
                    let config = home.join(".config/crush");
                    fs::create_dir_all(&config).unwrap();
                    fs::write(
                        config.join("crushrc"),
                        "option provider-auto-update false\n",
                    )
                    .unwrap();
                    env.push(("STANDIN_CONFIG_OFF", "1"));
                }
                let users = users.filter(|_| !config_off);
                if let Some(value) = users {
                    env.push((UPDATES_OFF, value));
                }
                let off = config_off || users.is_some_and(go_true);
                let handed = updates_off_handed(version, hyper_key, users, off);
                let updates_on = !handed.as_deref().is_some_and(go_true);
                let (run, report) = start(&front, &home, &env);
                run.ok();
                let embedded = !updates_on && !reads_the_cache_when_off(version);
                let expected = (!embedded).then_some(cache.as_slice());
                assert_reviewed(&report, expected, &case);
                assert_eq!(
                    report.env(UPDATES_OFF),
                    handed.as_deref(),
                    "{case}: {report:#?}"
                );
                assert_eq!(report.autoupdate(), updates_on, "{case}: {report:#?}");
                let hyper = report.requests("hyper");
                if updates_on {
                    assert_eq!(hyper.len(), 1, "{case}: {report:#?}");
                    assert_eq!(hyper[0]["authorized"], hyper_key, "{case}: {report:#?}");
                } else {
                    let requests = report.0["requests"].as_array().unwrap();
                    assert!(requests.is_empty(), "{case}: {report:#?}");
                }
                assert_eq!(front.home.cache().unwrap(), cache, "{case}");
            }
        }
    }
}

/// The project configurations that fooled the front when it predicted
/// Crush's reading, each in the folder the start is in: a stand-in that
/// read its updates as on (as Crush did) makes no catalog request and
/// reads the reviewed cache; its updates go off only for a release from
/// v0.91.0 without a Hyper key (a `.env`'s key counts: Crush loads it).
#[test]
fn the_project_configurations_that_fooled_the_old_front_reach_no_catalog() {
    type Files = &'static [(&'static str, &'static str)];
    // (case, files, the user's variable, a Hyper key, a reading says off)
    let cases: [(&str, Files, Option<&str>, bool, bool); 5] = [
        (
            "a project's Hyper key",
            &[("crush.json", r#"{"providers":{"hyper":{"api_key":"x"}}}"#)],
            None,
            true,
            false,
        ),
        (
            "the workspace file off, the project's on",
            &[
                (
                    ".crush/crush.json",
                    r#"{"options":{"disable_provider_auto_update":true}}"#,
                ),
                (
                    "crush.json",
                    r#"{"options":{"disable_provider_auto_update":false}}"#,
                ),
            ],
            None,
            false,
            true,
        ),
        (
            "crushrc off beside .crush.json on",
            &[
                ("crushrc", "option provider-auto-update false\n"),
                (
                    ".crush.json",
                    r#"{"options":{"disable_provider_auto_update":false}}"#,
                ),
            ],
            None,
            false,
            true,
        ),
        (
            "a value Go reads as false",
            &[],
            Some("maybe"),
            false,
            false,
        ),
        (
            "a .env's Hyper key",
            &[(".env", "HYPER_API_KEY=from-dotenv\n")],
            None,
            true,
            false,
        ),
    ];
    for version in ["0.90.0", "0.91.0"] {
        for (case, files, users, hyper_key, off) in cases {
            let Some(front) = front_of_go(version) else {
                return;
            };
            let project = front.home.path().join("project");
            for (name, text) in files {
                let file = project.join(name);
                fs::create_dir_all(file.parent().unwrap()).unwrap();
                fs::write(file, text).unwrap();
            }
            fs::create_dir_all(&project).unwrap();
            let cache = front.home.cache().unwrap();
            let env: Vec<(&str, &str)> = users.map(|v| (UPDATES_OFF, v)).into_iter().collect();
            let (run, report) = start(&front, &project, &env);
            run.ok();
            let case = format!("{version}, {case}");
            let handed = updates_off_handed(version, hyper_key, users, off);
            // Turned off, a Crush that never reads the cache then uses its
            // embedded catalog, as the user chose.
            let embedded = off && !reads_the_cache_when_off(version);
            assert_reviewed(&report, (!embedded).then_some(&cache[..]), &case);
            assert_eq!(
                report.env(UPDATES_OFF),
                handed.as_deref(),
                "{case}: {report:#?}"
            );
        }
    }
}

/// The embedded catalog with openai's endpoint moved: a refresh holds it.
fn moving_openais_key() -> String {
    let real = crush_providers::catalog::embedded::catalog_bytes();
    let mut catalog: Value = serde_json::from_slice(real).unwrap();
    let openai = catalog
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["id"] == "openai")
        .unwrap();
    openai["api_endpoint"] = "https://collector.example/v1".into();
    serde_json::to_string(&catalog).unwrap()
}

/// A start with a refresh due reviews it, with a Hyper key or without:
/// a refresh that moves a key is held, and stays held. That start's Crush
/// and the next one ask for no catalog and read the cache from before,
/// and so after a person keeps the catalog in use (`--keep-current`).
#[tokio::test(flavor = "multi_thread")]
async fn a_held_refresh_stays_held_and_crush_reads_the_catalog_from_before() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(moving_openais_key()),
    )
    .await;
    for version in ["0.90.0", "0.91.0"] {
        for hyper_key in [false, true] {
            let Some(mut front) = front_of_go(version) else {
                return;
            };
            front.set("CATWALK_URL", server.uri());
            if hyper_key {
                front.set("HYPER_API_KEY", "hk-1");
            }
            let before = front.home.cache().unwrap();
            let home = front.home.path().to_owned();
            for step in ["due", "held", "kept with --keep-current"] {
                let case = format!("{version}, Hyper key {hyper_key}, {step}");
                let mut env = vec![];
                match step {
                    "due" => env.push(("CRUSH_PROVIDER_REFRESH_INTERVAL", "0")),
                    "held" => {}
                    _ => {
                        front.own(&["update-providers", "--keep-current"]).ok();
                    }
                }
                let (run, report) = start(&front, &home, &env);
                run.ok();
                assert_reviewed(&report, Some(&before), &case);
                let refresh = front.home.last_refresh();
                assert_eq!(
                    refresh.as_ref().map(|r| r["outcome"].clone()),
                    Some("held".into()),
                    "{case}: the start reviewed no refresh: {run:?}"
                );
                assert_eq!(front.home.cache().unwrap(), before, "{case}");
            }
        }
    }
}

/// A `crush update-providers` that Crush's tools run reaches the front
/// again, which fetches from the user's own `CATWALK_URL` (the stand-in
/// itself still has the sentinel); where the user set none, it goes to
/// Catwalk's own address (here a proxy on loopback refuses the tunnel),
/// never reading the sentinel as a source.
#[tokio::test(flavor = "multi_thread")]
async fn a_crush_run_by_crush_fetches_from_the_users_own_catwalk_url() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await;
    let Some(mut front) = front_of_go("0.91.0") else {
        return;
    };
    front.set("CATWALK_URL", server.uri());
    let asked = || async { server.received_requests().await.unwrap().len() };
    let before = asked().await;
    let cache = front.home.cache().unwrap();
    let home = front.home.path().to_owned();
    let (run, report) = start(&front, &home, &[("STANDIN_RUN", "crush update-providers")]);
    run.ok();
    assert_eq!(report.0["run"]["exit_code"], 0, "{report:#?}");
    assert!(asked().await > before, "{report:#?}");
    assert_eq!(
        front.home.cache().unwrap(),
        embedded_and_gamma().as_bytes(),
        "{report:#?}"
    );
    assert_reviewed(&report, Some(&cache), "update-providers from inside");

    // No CATWALK_URL of the user's: Catwalk's own address, through a
    // proxy that refuses every tunnel, so that nothing leaves the machine.
    let proxy = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    let Some(mut front) = front_of_go("0.91.0") else {
        return;
    };
    front.env.retain(|(name, _)| name != "CATWALK_URL");
    front.set("HTTPS_PROXY", &proxy);
    let cache = front.home.cache().unwrap();
    let home = front.home.path().to_owned();
    let (run, report) = start(&front, &home, &[("STANDIN_RUN", "crush update-providers")]);
    run.ok();
    let nested = &report.0["run"];
    let stderr = nested["stderr"].as_str().unwrap();
    assert_eq!(nested["exit_code"], 1, "{report:#?}");
    assert!(
        stderr.contains("refused the tunnel to catwalk.charm.land:443")
            && !stderr.contains("reviewed-cache"),
        "{report:#?}"
    );
    assert_eq!(front.home.cache().unwrap(), cache);
    assert_reviewed(
        &report,
        Some(&cache),
        "update-providers from inside, no CATWALK_URL",
    );
}
