//! The library as a long-lived host uses it: `startup::load` hands over the
//! cache at once and, when it started a refresh, a handle to it on a thread
//! of the same process. Against wiremock on loopback, in temporary folders.

use std::time::{Duration, Instant};

use crate::common::*;
use crush_providers::internals::cache;
use crush_providers::internals::memory::{self, Floor, Memory};
use crush_providers::internals::state::CacheState;
use crush_providers::internals::validators::Validators;
use crush_providers::startup::Outcome;
use crush_providers::startup::{self, Background, Provenance, StartupOptions};
use crush_providers::store::CacheFiles;
use wiremock::matchers::{header, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ETAG: &str = "\"v1\"";

fn options(server: &MockServer, interval: Duration) -> StartupOptions {
    StartupOptions {
        auto_update: true,
        default_providers: true,
        url: format!("{}/v2/providers", server.uri()).parse().unwrap(),
        timeout: Duration::from_secs(5),
        interval,
        background: Background::Thread,
        wait: false,
        watch: Default::default(),
        keys: None,
        hyper: None,
    }
}

/// A server answering `CATALOG_A2` once the test opens the gate: a start
/// that waited for it would not return before its 5 s bound, and a refresh
/// is still running until then.
async fn serving_a_new_catalog_behind(gate: &Gate) -> MockServer {
    serve_at(
        "/v2/providers",
        gate.hold(ResponseTemplate::new(200).set_body_string(CATALOG_A2)),
    )
    .await
}

/// A cache holding `bytes`, with the server's ETag, confirmed `age` ago.
fn cache_with(bytes: &str, age: u64) -> (tempfile::TempDir, CacheFiles) {
    let dir = tempfile::tempdir().unwrap();
    let files = CacheFiles::in_dir(dir.path().join("crush"));
    let now = crush_providers::internals::state::now();
    let state = CacheState {
        sha256: sha256_hex(bytes.as_bytes()),
        validators: Validators {
            etag: Some(ETAG.into()),
            last_modified: None,
        },
        source: "test".into(),
        fetched_at: now - age,
        confirmed_at: Some(now - age),
        ..CacheState::default()
    };
    cache::write(&files, bytes.as_bytes(), &state, Duration::from_secs(5)).unwrap();
    // Applied by a person with `--allow-shrink`: the floor later catalogs
    // must keep half of.
    let catalog = crush_providers::catalog::validate(bytes.as_bytes()).unwrap();
    cache::locked(&files, Duration::from_secs(5), || {
        memory::write(
            &files,
            None,
            || Memory::rebuilt(Some(&catalog)),
            |memory| {
                memory.floor = Some(Floor {
                    source: "test".into(),
                    providers: memory::ids(&catalog),
                });
                Ok(())
            },
            false,
        )
    })
    .unwrap();
    (dir, files)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_gets_the_cache_at_once_and_the_new_catalog_while_it_runs() {
    let gate = Gate::new();
    let server = serving_a_new_catalog_behind(&gate).await;
    let (_dir, files) = cache_with(CATALOG_A, 3600);
    let start = Instant::now();
    let mut loaded = startup::load(&files, &options(&server, startup::DEFAULT_INTERVAL));
    // The refresh waits for the gate: a load that waited for it would take
    // its 5 s bound.
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(loaded.provenance, Provenance::Cached);
    assert_eq!(&loaded.bytes[..], CATALOG_A.as_bytes());
    let refresh = loaded.refresh.as_mut().expect("a refresh was started");
    assert_eq!(refresh.poll(), None, "still running: poll does not block");
    gate.open();
    assert_eq!(
        refresh.wait(Duration::from_secs(10)),
        Some(&Outcome::Updated(CATALOG_A2.as_bytes().to_vec()))
    );
    assert_eq!(
        refresh.poll(),
        Some(&Outcome::Updated(CATALOG_A2.as_bytes().to_vec()))
    );
    assert_eq!(
        std::fs::read(&files.catalog).unwrap(),
        CATALOG_A2.as_bytes()
    );

    // Confirmed just now: the next start makes no request, starts no refresh.
    let loaded = startup::load(&files, &options(&server, startup::DEFAULT_INTERVAL));
    assert_eq!(&loaded.bytes[..], CATALOG_A2.as_bytes());
    assert!(loaded.refresh.is_none());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn unchanged_and_failed_refreshes_are_reported_as_such() {
    let server = MockServer::start().await;
    Mock::given(path("/v2/providers"))
        .and(header("if-none-match", ETAG))
        .respond_with(ResponseTemplate::new(304))
        .mount(&server)
        .await;
    let (_dir, files) = cache_with(CATALOG_A, 3600);
    let mut loaded = startup::load(&files, &options(&server, Duration::ZERO));
    let refresh = loaded.refresh.as_mut().unwrap();
    assert_eq!(
        refresh.wait(Duration::from_secs(10)),
        Some(&Outcome::Unchanged)
    );

    let failing = serve_at(
        "/v2/providers",
        ResponseTemplate::new(503).set_body_string("busy"),
    )
    .await;
    let mut loaded = startup::load(&files, &options(&failing, Duration::ZERO));
    let outcome = loaded
        .refresh
        .as_mut()
        .unwrap()
        .wait(Duration::from_secs(10))
        .cloned();
    match outcome {
        Some(Outcome::Failed(why)) => {
            assert!(why.contains("503 Service Unavailable: busy"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&files.catalog).unwrap(), CATALOG_A.as_bytes());
    // The next start tells it, once.
    let loaded = startup::load(&files, &options(&failing, startup::DEFAULT_INTERVAL));
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let told = loaded.warnings[0].to_string();
    assert!(told.contains("503"), "{told}");
    // A host's warning names Crush's command, whatever this test binary
    // is called; the command line names itself (messages.rs,
    // the_invoked_name_is_the_one_shown).
    assert!(
        told.contains("`crush update-providers` fetches it by hand"),
        "{told}"
    );
}

/// Two hosts starting together make one request; the one that waited for
/// the other's refresh reports the catalog that refresh brought.
#[tokio::test(flavor = "multi_thread")]
async fn two_hosts_share_one_refresh() {
    let gate = Gate::new();
    let server = serving_a_new_catalog_behind(&gate).await;
    let (_dir, files) = cache_with(CATALOG_A, 3600);
    let mut first = startup::load(&files, &options(&server, startup::DEFAULT_INTERVAL));
    let mut second = startup::load(&files, &options(&server, startup::DEFAULT_INTERVAL));
    // Both started while the first refresh waits for its answer.
    gate.open();
    let updated = Outcome::Updated(CATALOG_A2.as_bytes().to_vec());
    for host in [&mut first, &mut second] {
        let refresh = host.refresh.as_mut().unwrap();
        assert_eq!(refresh.wait(Duration::from_secs(10)), Some(&updated));
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}
