//! End-to-end tests of the start-up's refresh: a valid cache, or without
//! one the embedded snapshot, is handed over at once and revalidated in a
//! detached helper process at most once per interval; only a person who
//! asks (`--wait`) waits. The real binary, wiremock on loopback, a
//! temporary HOME.

use std::fs;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use wiremock::matchers::{any, header, header_regex, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const ETAG: &str = "\"abc123\"";
const LAST_MODIFIED: &str = "Tue, 01 Sep 2026 10:00:00 GMT";
/// Every start revalidates: the interval that makes the background
/// refresh run at each start.
const EVERY_START: (&str, &str) = ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0");

/// A server whose catalog is `body`, sent with an ETag and Last-Modified.
async fn catalog_server(body: &str) -> MockServer {
    serve_at("/v2/providers", catalog_answer(body)).await
}

/// The answer of [`catalog_server`].
fn catalog_answer(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("etag", ETAG)
        .insert_header("last-modified", LAST_MODIFIED)
        .set_body_string(body)
}

/// Runs `crush ARGS` with `url` as the Catwalk base URL.
/// A start with `CATALOG_A` cached and `url` as the server: it hands the
/// cache over at once and says nothing. Returns the record of the refresh
/// it started, once that refresh has ended.
fn start_with_a_cache(home: &Home, url: &str) -> serde_json::Value {
    home.set_cache(CATALOG_A.as_bytes());
    let run = run_at(home, url, &["providers", "--json"], &[]);
    run.ok();
    assert_eq!(run.stdout, CATALOG_A);
    assert!(run.stderr.is_empty(), "{run:?}");
    home.wait_for_refresh(&None)
}

fn run_at(home: &Home, url: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec![("CATWALK_URL", url)];
    all.extend_from_slice(env);
    home.run_env(args, &all)
}

fn mtime(path: &std::path::Path) -> std::time::SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

/// Without a cache the first start hands over the embedded snapshot at
/// once and fetches in the background; the next start has the fresh
/// catalog, and the ones after it, within the refresh interval, use the
/// cache without any request.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_start_does_not_wait_and_the_next_has_the_fresh_catalog() {
    let home = Home::new();
    // A person applied a catalog that small once (`--allow-shrink`).
    home.with_floor_of(CATALOG_A.as_bytes());
    // The server answers only once the start has returned: a start that
    // waited for the fetch would not return before its 10 s bound.
    let gate = Gate::new();
    let server = MockServer::start().await;
    Mock::given(path("/v2/providers"))
        .respond_with(gate.hold(catalog_answer(CATALOG_A)))
        .mount(&server)
        .await;
    let start = Instant::now();
    let run = run_at(&home, &server.uri(), &["providers", "-d"], &[]);
    run.ok();
    assert!(start.elapsed() < Duration::from_secs(2));
    gate.open();
    assert!(
        run.provenance().starts_with(
            "embedded snapshot (Catwalk v0.52.6, released 2026-08-21); fetching the current catalog in the background"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("anthropic"), "{run:?}");
    assert!(run.told().is_empty(), "{run:?}");
    assert_eq!(home.wait_for_refresh(&None)["outcome"], "updated");
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    let state = home.state().unwrap();
    assert!(state["confirmed_at"].as_u64().unwrap() > 0, "{state}");
    for _ in 0..3 {
        let run = run_at(&home, &server.uri(), &["providers", "-d"], &[]);
        run.ok();
        assert!(
            run.stdout.contains("alpha\tAlpha\topenai-compat\t2\n"),
            "{run:?}"
        );
        assert!(
            run.provenance().contains("confirmed current just now")
                && !run.provenance().contains("refreshing"),
            "{run:?}"
        );
        assert!(run.told().is_empty(), "{run:?}");
    }
    assert_eq!(
        requests(&server).await.len(),
        1,
        "no request within the interval"
    );
    assert_eq!(home.data_entries(), CACHE_FILES_AFTER_REFRESH);
}

/// A person who asks to wait (`--wait`) gets the fresh catalog at once, as
/// `update-providers` would fetch it; so does `models --wait`.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_that_waits_gets_the_fresh_catalog_at_once() {
    let server = catalog_server(CATALOG_A).await;
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    let run = run_at(&home, &server.uri(), &["providers", "--wait", "-d"], &[]);
    run.ok();
    assert!(run.provenance().starts_with("fresh from "), "{run:?}");
    assert!(
        run.stdout.contains("alpha\tAlpha\topenai-compat\t2\n"),
        "{run:?}"
    );
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    let run = run_at(&home, &server.uri(), &["models", "--wait", "a-large"], &[]);
    run.ok();
    assert!(run.stdout.contains("alpha/a-large"), "{run:?}");
    // With a stale cache, the refresh is waited for too.
    let server = catalog_server(CATALOG_A2).await;
    let run = run_at(
        &home,
        &server.uri(),
        &["providers", "--wait"],
        &[EVERY_START],
    );
    run.ok();
    assert!(run.stdout.contains("gamma"), "{run:?}");
}

/// A cache confirmed longer ago than the interval is handed over at once;
/// the helper revalidates it with the server's own validators, and a 304
/// writes nothing but the confirmation.
#[tokio::test(flavor = "multi_thread")]
async fn a_stale_cache_is_handed_over_at_once_and_confirmed_in_the_background() {
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    let first = catalog_server(CATALOG_A).await;
    run_at(&home, &first.uri(), &["providers", "--wait"], &[]).ok();
    let confirmed = home.state().unwrap()["confirmed_at"].as_u64().unwrap();

    let server = MockServer::start().await;
    Mock::given(path("/v2/providers"))
        .and(header("if-none-match", ETAG))
        // wiremock's `header` splits values at commas, which dates contain.
        .and(header_regex(
            "if-modified-since",
            "^Tue, 01 Sep 2026 10:00:00 GMT$",
        ))
        .respond_with(ResponseTemplate::new(304))
        .expect(1)
        .mount(&server)
        .await;
    // As if that fetch had been a minute ago: the confirmation to come is
    // later, in whole seconds, without sleeping past one.
    home.backdate_state(60);
    let confirmed = confirmed - 60;
    let cache_time = mtime(&home.cache_file());
    let before = home.last_refresh();
    let run = run_at(
        &home,
        &server.uri(),
        &["providers", "--json"],
        &[EVERY_START],
    );
    run.ok();
    assert_eq!(run.stdout, CATALOG_A, "the cache, at once");
    assert!(run.stderr.is_empty(), "{run:?}");
    let refresh = home.wait_for_refresh(&before);
    assert_eq!(refresh["outcome"], "unchanged", "{refresh}");
    server.verify().await;
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    assert_eq!(mtime(&home.cache_file()), cache_time);
    let state = home.state().unwrap();
    assert!(
        state["confirmed_at"].as_u64().unwrap() > confirmed,
        "{state}"
    );
    assert_eq!(state["etag"], ETAG);
    assert_eq!(home.data_entries(), CACHE_FILES_AFTER_REFRESH);
}

/// A cache written by another program (no state) is handed over at once,
/// revalidated with the Catwalk SHA form of its bytes, and a new catalog
/// is swapped in, shown from the next start on, which needs no request.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_catalog_is_swapped_in_and_shown_from_the_next_start() {
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    home.set_cache(CATALOG_A.as_bytes());
    let server = catalog_server(CATALOG_A2).await;
    let run = run_at(&home, &server.uri(), &["providers", "-d"], &[]);
    run.ok();
    assert!(
        run.provenance().contains("refreshing in the background"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("gamma"), "{run:?}");
    let refresh = home.wait_for_refresh(&None);
    assert_eq!(refresh["outcome"], "updated", "{refresh}");
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());
    let state = home.state().unwrap();
    assert_eq!(state["etag"], ETAG);
    assert_eq!(state["sha256"], sha256_hex(CATALOG_A2.as_bytes()));
    let reqs = requests(&server).await;
    assert_eq!(
        received(&reqs, "if-none-match"),
        [catwalk_etag(CATALOG_A.as_bytes())]
    );
    let run = run_at(&home, &server.uri(), &["providers", "--json"], &[]);
    assert_eq!(run.stdout, CATALOG_A2);
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_static_mirror_gets_its_own_validators_back() {
    // nginx sends "<mtime hex>-<size hex>" and Last-Modified; it answers 304
    // only to those.
    let nginx_etag = "\"66d4bb40-2f1\"";
    let server = MockServer::start().await;
    Mock::given(path("/catalog/providers.json"))
        .and(header("if-none-match", nginx_etag))
        .respond_with(ResponseTemplate::new(304))
        .mount(&server)
        .await;
    Mock::given(path("/catalog/providers.json"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("etag", nginx_etag)
                .insert_header("last-modified", LAST_MODIFIED)
                .set_body_string(CATALOG_B),
        )
        .mount(&server)
        .await;
    let home = Home::new();
    home.with_floor_of(CATALOG_B.as_bytes());
    let url = format!("{}/catalog/providers.json", server.uri());
    run_at(&home, &url, &["providers", "--wait"], &[]).ok();
    // A minute ago: the next refresh's record differs by its time.
    home.backdate_state(60);
    let before = home.last_refresh();
    run_at(&home, &url, &["providers"], &[EVERY_START]).ok();
    assert_eq!(home.wait_for_refresh(&before)["outcome"], "unchanged");
    let reqs = requests(&server).await;
    assert_eq!(received(&reqs, "if-none-match"), ["", nginx_etag]);
    assert_eq!(received(&reqs, "if-modified-since"), ["", LAST_MODIFIED]);
}

/// A server that ignores validators sends the cached bytes again: only the
/// state is rewritten (the new ETag, the cache's identity kept, so the next
/// start still trusts it without hashing); the cache stays as it was.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn the_same_bytes_again_only_rewrite_the_state() {
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    let first = catalog_server(CATALOG_A).await;
    run_at(&home, &first.uri(), &["providers", "--wait"], &[]).ok();
    let cache_before = mtime(&home.cache_file());
    // A minute ago: the next refresh's record differs by its time.
    home.backdate_state(60);
    let before = home.last_refresh();
    let again = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200)
            .insert_header("etag", "\"again\"")
            .set_body_string(CATALOG_A),
    )
    .await;
    run_at(&home, &again.uri(), &["providers"], &[EVERY_START]).ok();
    assert_eq!(home.wait_for_refresh(&before)["outcome"], "unchanged");
    assert_eq!(mtime(&home.cache_file()), cache_before);
    let state = home.state().unwrap();
    assert_eq!(state["etag"], "\"again\"");
    assert_eq!(state["sha256"], sha256_hex(CATALOG_A.as_bytes()));
    use std::os::unix::fs::MetadataExt;
    let ino = format!(":{}:", fs::metadata(home.cache_file()).unwrap().ino());
    assert!(state["file"].as_str().unwrap().contains(&ino), "{state}");
}

/// A background failure is not swallowed: it is recorded, the next start
/// tells it in one warning with the cause and the hint, and the starts
/// after that, failing the same way, say nothing more. The cache is kept
/// and used throughout. Without a cache, the first start says nothing and
/// uses the embedded snapshot; its fetch's failure is told at the next
/// start, once; a start that waits tells it at once.
#[tokio::test(flavor = "multi_thread")]
async fn background_failures_are_told_once_at_the_next_start() {
    let cases: Vec<(ResponseTemplate, &str)> = vec![
        (
            ResponseTemplate::new(500).set_body_string("boom"),
            "server answered 500",
        ),
        (
            ResponseTemplate::new(403).set_body_string("<html>login</html>"),
            "server answered 403",
        ),
        (
            ResponseTemplate::new(200).set_body_string("<html>proxy login</html>"),
            "HTML page",
        ),
        (
            ResponseTemplate::new(200).set_body_string("[]"),
            "empty list",
        ),
        (
            ResponseTemplate::new(200).set_body_string("{\"not\":\"a list\"}"),
            "expected a JSON array",
        ),
    ];
    for (response, cause) in cases {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(response)
            .mount(&server)
            .await;
        let url = server.uri();

        let home = Home::new();
        let refresh = start_with_a_cache(&home, &url);
        assert_eq!(refresh["outcome"], "failed", "{cause}: {refresh}");
        assert!(
            refresh["cause"].as_str().unwrap().contains(cause),
            "{refresh}"
        );

        let run = run_at(&home, &url, &["providers", "--json"], &[]);
        run.ok();
        assert_eq!(run.stdout, CATALOG_A);
        let warnings: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{cause}: {run:?}");
        let warning = warnings[0];
        assert!(
            warning.starts_with(
                "warning: the last refresh of the provider catalog from http://127.0.0.1"
            ),
            "{run:?}"
        );
        assert!(warning.contains(cause), "{cause}: {run:?}");
        assert!(warning.contains("using the cached catalog"), "{run:?}");
        assert!(
            warning.contains("option provider-auto-update false"),
            "{run:?}"
        );
        assert!(warning.contains("crush update-providers"), "{run:?}");
        // The second start marked it told before starting its own refresh,
        // which fails the same way: the same failure, not told again.
        let run = run_at(&home, &url, &["providers", "--json"], &[]);
        run.ok();
        assert!(run.stderr.is_empty(), "told twice: {run:?}");
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());

        let home = Home::new();
        let run = run_at(&home, &url, &["providers", "-d"], &[]);
        run.ok();
        assert!(run.told().is_empty(), "{cause}: {run:?}");
        assert!(
            run.provenance()
                .starts_with("embedded snapshot (Catwalk v0.52.6, "),
            "{run:?}"
        );
        let refresh = home.wait_for_refresh(&None);
        assert_eq!(refresh["outcome"], "failed", "{cause}: {refresh}");
        // The embedded snapshot, in use meanwhile, keeps the record.
        assert_eq!(
            home.cache().unwrap(),
            crush_providers::catalog::embedded::catalog_bytes()
        );
        let run = run_at(&home, &url, &["providers", "--json"], &[]);
        let warnings: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{cause}: {run:?}");
        assert!(warnings[0].contains(cause), "{run:?}");
        assert!(
            warnings[0].contains("using the embedded catalog (Catwalk v0.52.6"),
            "{run:?}"
        );
        assert!(
            warnings[0]
                .contains("on a machine without network, set `option provider-auto-update false`"),
            "{run:?}"
        );
        let run = run_at(&home, &url, &["providers", "--json"], &[]);
        assert!(run.stderr.is_empty(), "told twice: {run:?}");

        let home = Home::new();
        let run = run_at(&home, &url, &["providers", "--wait"], &[]);
        run.ok();
        let warnings: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{cause}: {run:?}");
        assert!(
            warnings[0].starts_with(
                "warning: could not refresh the provider catalog from http://127.0.0.1"
            ),
            "{run:?}"
        );
        assert!(warnings[0].contains(cause), "{run:?}");
        assert!(
            warnings[0].contains("using the embedded catalog"),
            "{run:?}"
        );
    }
}

#[test]
fn a_refused_connection_is_recorded_and_told() {
    let url = closed_port_url();
    let home = Home::new();
    let refresh = start_with_a_cache(&home, &url);
    assert!(
        refresh["cause"]
            .as_str()
            .unwrap()
            .contains("refused the connection"),
        "{refresh}"
    );
    let run = run_at(&home, &url, &["providers", "--json"], &[]);
    assert!(run.stderr.contains("refused the connection"), "{run:?}");
}

/// A server that accepts and never answers costs a start nothing, with a
/// cache or without one; the helper gives up within its bound by itself.
/// A start that waits is bounded the same way.
#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_server_never_delays_a_start() {
    let template = ResponseTemplate::new(200)
        .set_body_string(CATALOG_B)
        .set_delay(Duration::from_secs(30));
    let server = serve_at("/v2/providers", template).await;
    let timeout = [("CRUSH_PROVIDER_TIMEOUT", "0.5")];
    let embedded = crush_providers::catalog::embedded::catalog_bytes();
    for cached in [Some(CATALOG_A.as_bytes()), None] {
        let home = Home::new();
        if let Some(cached) = cached {
            home.set_cache(cached);
        }
        let start = Instant::now();
        let run = run_at(&home, &server.uri(), &["providers", "--json"], &timeout);
        run.ok();
        let took = start.elapsed();
        assert!(took < Duration::from_secs(2), "took {took:?}");
        assert_eq!(run.stdout.as_bytes(), cached.unwrap_or(embedded));
        assert!(run.stderr.is_empty(), "{run:?}");
        let refresh = home.wait_for_refresh(&None);
        assert!(
            refresh["cause"]
                .as_str()
                .unwrap()
                .contains("no answer came within 0.5 s"),
            "{refresh}"
        );
        // Its bound is 0.5 s; the server would hold it 30 s.
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the helper took {:?}",
            start.elapsed()
        );
    }

    let home = Home::new();
    let start = Instant::now();
    let run = run_at(
        &home,
        &server.uri(),
        &["providers", "--json", "--wait"],
        &timeout,
    );
    run.ok();
    // Its bound is 0.5 s; the server would hold it 30 s.
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        run.stderr.contains("no answer came within 0.5 s"),
        "{run:?}"
    );
    assert_eq!(run.stdout.as_bytes(), embedded);
}

/// Twenty starts at once, each finding the cache stale, make at most two
/// requests: one helper refreshes, the others find it running, or find the
/// cache just confirmed, and exit.
#[tokio::test(flavor = "multi_thread")]
async fn twenty_simultaneous_starts_cause_at_most_two_requests() {
    let template = ResponseTemplate::new(200)
        .insert_header("etag", ETAG)
        .set_body_string(CATALOG_A2)
        .set_delay(Duration::from_millis(300));
    let server = serve_at("/v2/providers", template).await;
    let home = Home::new();
    home.with_floor_of(CATALOG_A.as_bytes());
    home.set_cache(CATALOG_A.as_bytes());
    let children: Vec<_> = (0..20)
        .map(|_| {
            let mut cmd = home.crush(&["providers", "--json"]);
            cmd.env("CATWALK_URL", server.uri())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for child in children {
        let run = Run::from(child.wait_with_output().unwrap());
        run.ok();
        assert!(
            run.stdout == CATALOG_A || run.stdout == CATALOG_A2,
            "{run:?}"
        );
        assert!(run.stderr.is_empty(), "{run:?}");
    }
    assert_eq!(home.wait_for_refresh(&None)["outcome"], "updated");
    // Stragglers: helpers that started late, after the refresh; every one
    // of them exists by now, and none asks anything once it has ended.
    home.wait_for_the_helper();
    let count = requests(&server).await.len();
    assert!((1..=2).contains(&count), "{count} requests");
    assert_eq!(home.cache().unwrap(), CATALOG_A2.as_bytes());
    assert_eq!(home.data_entries(), CACHE_FILES_AFTER_REFRESH);
}

/// A caller reading the output through a pipe sees its end when the
/// command exits, not when the helper does: the helper holds none of the
/// command's standard streams.
#[tokio::test(flavor = "multi_thread")]
async fn output_through_a_pipe_ends_when_the_command_does() {
    // No answer until the output has ended: a helper holding the pipe
    // would hold it until its 8 s bound.
    let gate = Gate::new();
    let server = serve_at(
        "/v2/providers",
        gate.hold(ResponseTemplate::new(200).set_body_string(CATALOG_B)),
    )
    .await;
    let home = Home::new();
    home.set_cache(CATALOG_A.as_bytes());
    let start = Instant::now();
    let mut child = home
        .crush(&["providers", "--json"])
        .env("CATWALK_URL", server.uri())
        .env("CRUSH_PROVIDER_TIMEOUT", "8")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let took = start.elapsed();
    gate.open();
    assert!(child.wait().unwrap().success());
    assert_eq!(out, CATALOG_A);
    assert!(err.is_empty(), "{err}");
    assert!(
        took < Duration::from_secs(3),
        "the pipe stayed open {took:?}"
    );
}

/// The helper killed at any moment (`kill -9`) leaves the old catalog or
/// the new one, whole; the next write leaves no temporary file.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_helper_killed_at_any_moment_leaves_one_whole_catalog() {
    use crush_providers::internals::synthetic;
    let old = synthetic::catalog(600_000, 1);
    let new = synthetic::catalog(500_000, 2);
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(new.clone()),
    )
    .await;
    let (_dir, old_file) = temp_file("old.json", old.as_bytes());
    let home = Home::new();
    let url = format!("{}/v2/providers", server.uri());
    let data_dir = home.data_dir();
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("seed {seed}");
    let mut killed = 0;
    for round in 0..40 {
        home.run(&[
            "update-providers",
            old_file.to_str().unwrap(),
            "-q",
            "--allow-shrink",
        ])
        .ok();
        let mut helper = home
            .crush(&[
                "refresh-in-background",
                "--cache-dir",
                data_dir.to_str().unwrap(),
                "--url",
                &url,
                "--timeout",
                "10",
                "--interval",
                "0",
            ])
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % 15_000));
        if helper.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = helper.kill();
        helper.wait().unwrap();
        let cache = String::from_utf8(home.cache().unwrap()).unwrap();
        assert!(cache == old || cache == new, "round {round}: a torn cache");
        let run = home.run_env(
            &["providers", "--json"],
            &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
        );
        assert_eq!(run.stdout, cache, "round {round}");
    }
    eprintln!("{killed} of 40 helpers were killed before they finished");
    assert!(killed >= 10, "the kills should land while the helper runs");
    home.run(&["update-providers", old_file.to_str().unwrap(), "-q"])
        .ok();
    assert_eq!(home.data_entries(), CACHE_FILES_AFTER_REFRESH);
}

/// Ctrl-C (or SIGTERM) during a fetch a person waits for (`--wait`) ends
/// the command at once with 130 (143), and nothing is written.
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_fetch_waited_for_ends_it_at_once_with_nothing_written() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (url, arrivals) = unanswering_server();
        let home = Home::new();
        let mut child = home
            .crush(&["providers", "--wait"])
            .env("CATWALK_URL", &url)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The request has arrived: the fetch listens for the signals from
        // before it sends anything.
        arrivals.recv_timeout(PATIENCE).expect("the request");
        assert!(child.try_wait().unwrap().is_none(), "still fetching");
        let sent = Instant::now();
        // SAFETY: a signal to our own child, which has not been reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let run = Run::from(child.wait_with_output().unwrap());
        assert!(
            sent.elapsed() < Duration::from_secs(2),
            "took {:?}",
            sent.elapsed()
        );
        assert_eq!(run.code, Some(code), "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
        // No catalog, no state, no temporary file: only the lock that
        // kept other refreshes of this folder apart.
        assert_eq!(home.data_entries(), [".providers.refresh.lock"]);
    }
}

/// `--status` tells when the cache was confirmed and how the last refresh
/// went, and why it failed, without a request of its own.
#[tokio::test(flavor = "multi_thread")]
async fn status_shows_the_confirmation_and_the_last_refresh() {
    let server = serve_at(
        "/v2/providers",
        ResponseTemplate::new(500).set_body_string("boom"),
    )
    .await;
    let home = Home::new();
    home.set_cache(CATALOG_A.as_bytes());
    run_at(&home, &server.uri(), &["providers"], &[]).ok();
    home.wait_for_refresh(&None);
    let requests_before = requests(&server).await.len();
    let run = run_at(
        &home,
        &server.uri(),
        &["providers", "--status"],
        &[("CRUSH_PROVIDER_REFRESH_INTERVAL", "90s")],
    );
    run.ok();
    let last = run
        .stdout
        .lines()
        .find(|l| l.starts_with("last refresh:"))
        .unwrap_or_else(|| panic!("{run:?}"));
    assert!(
        last.contains("failed just now from http://127.0.0.1")
            && last.contains("server answered 500 Internal Server Error: boom"),
        "{last}"
    );
    assert!(
        run.stdout
            .contains("refresh interval:     1m 30s (CRUSH_PROVIDER_REFRESH_INTERVAL=90s)"),
        "{run:?}"
    );
    assert!(
        !run.stdout.contains("confirmed current:"),
        "never confirmed: {run:?}"
    );
    let status = run_at(
        &home,
        &server.uri(),
        &["providers", "--status", "--json"],
        &[],
    )
    .json();
    assert_eq!(status["last_refresh"]["outcome"], "failed");
    assert!(
        status["last_refresh"]["cause"]
            .as_str()
            .unwrap()
            .contains("500")
    );
    assert_eq!(status["confirmed_at"], serde_json::Value::Null);
    assert_eq!(status["refresh_interval_seconds"], 300.0);
    assert_eq!(
        requests(&server).await.len(),
        requests_before,
        "--status asks nothing"
    );

    // CATALOG_B moves beta's key, and is no floor a person applied.
    home.run_stdin(
        &[
            "update-providers",
            "-",
            "--allow-shrink",
            "--allow-key-move",
        ],
        CATALOG_B.as_bytes(),
    )
    .ok();
    let status = run_at(
        &home,
        &server.uri(),
        &["providers", "--status", "--json"],
        &[],
    )
    .json();
    // A timestamp, and nothing else, in JSON.
    let confirmed = status["confirmed_at"].as_str().unwrap();
    assert!(
        confirmed.len() == 20 && confirmed.ends_with('Z'),
        "{status}"
    );
}

#[test]
fn a_bad_refresh_interval_is_a_warning_and_the_default() {
    let home = Home::new();
    home.set_cache(CATALOG_A.as_bytes());
    let run = home.run_env(
        &["providers", "--json"],
        &[
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "soon"),
            ("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1"),
        ],
    );
    run.ok();
    assert_eq!(run.stdout, CATALOG_A);
    assert_eq!(
        run.stderr,
        "warning: CRUSH_PROVIDER_REFRESH_INTERVAL=\"soon\" is not a duration (seconds, or e.g. 90s, 5m, 1h; 0 to refresh at every start); using 5m\n"
    );
}

/// Auto-update off: no request, not even in the background.
#[tokio::test(flavor = "multi_thread")]
async fn auto_update_off_starts_no_helper() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let home = Home::new();
    home.set_cache(CATALOG_A.as_bytes());
    let off = [("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1"), EVERY_START];
    for _ in 0..3 {
        let run = run_at(&home, &server.uri(), &["providers", "--json"], &off);
        assert_eq!(run.stdout, CATALOG_A);
    }
    // Every helper a start spawned would exist by now; none does, and none
    // ran: no refresh lock, no refresh recorded (the cache Crush wrote was
    // reviewed, and recorded as such, by the first start).
    home.wait_for_the_helper();
    server.verify().await;
    assert!(
        !home.data_entries().iter().any(|e| e.contains("refresh")),
        "{:?}",
        home.data_entries()
    );
    assert!(home.state().is_some_and(|s| s.get("refresh").is_none()));
}

/// `--wait` while a start's background refresh is running joins it, and
/// makes no request of its own: its bound is kept in all, and the failure
/// is told once, in the words the refresh recorded. Here the helper's
/// request hangs on a server that accepts and never answers.
#[test]
fn a_start_that_waits_joins_the_refresh_running() {
    let (url, arrivals) = unanswering_server();
    let home = Home::new();
    let timeout = [("CRUSH_PROVIDER_TIMEOUT", "3")];
    run_at(&home, &url, &["providers", "--json"], &timeout).ok();
    // The helper holds the refresh lock, its request made.
    arrivals
        .recv_timeout(PATIENCE)
        .expect("the helper's request");
    let start = Instant::now();
    let run = run_at(&home, &url, &["providers", "--json", "--wait"], &timeout);
    run.ok();
    assert!(start.elapsed() < PATIENCE, "took {:?}", start.elapsed());
    assert_eq!(
        arrivals.try_recv(),
        Err(std::sync::mpsc::TryRecvError::Empty),
        "a second request: {run:?}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert_eq!(
        run.stderr.matches("no answer came within 3 s").count(),
        1,
        "{run:?}"
    );
    // Told: the next start does not tell it again.
    home.wait_for_the_helper();
    let run = run_at(&home, &url, &["providers", "--json"], &timeout);
    assert!(!run.stderr.contains("no answer came"), "{run:?}");
}
