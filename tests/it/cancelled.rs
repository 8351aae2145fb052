//! Ctrl-C and SIGTERM while a catalog's signature downloads: with a key
//! pinned, `update-providers` fetches `URL.minisig` after the catalog,
//! and a signal then ends the command as it ends the catalog's download
//! (130, 143, nothing written), not as a missing signature.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::common::*;

/// A mirror on loopback that serves `catalog` at /v2/providers and holds
/// every request for /v2/providers.minisig without an answer (for
/// [`PATIENCE`]), telling the test through the receiver once one has
/// arrived: the client is then inside the signature's download.
fn mirror_holding_the_signature(catalog: &'static str) -> (String, std::sync::mpsc::Receiver<()>) {
    let (arrived, arrivals) = std::sync::mpsc::channel();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v2/providers", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let arrived = arrived.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                // One request after another on the connection kept alive.
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                        line.clear();
                    }
                    let path = request_line.split(' ').nth(1).unwrap_or_default();
                    if path.ends_with(".minisig") {
                        let _ = arrived.send(());
                        std::thread::sleep(PATIENCE);
                        return;
                    }
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{catalog}",
                        catalog.len()
                    );
                }
            });
        }
    });
    (url, arrivals)
}

/// Runs `command`, and sends it `signal` once the catalog came and the
/// signature's request has arrived (the download listens for the signals
/// from before it is sent); what the run did.
fn signalled_at_the_signature(
    mut command: std::process::Command,
    arrivals: &std::sync::mpsc::Receiver<()>,
    signal: libc::c_int,
) -> Run {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    arrivals
        .recv_timeout(PATIENCE)
        .expect("the signature's request");
    assert!(child.try_wait().unwrap().is_none(), "still fetching");
    // SAFETY: a signal to our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    Run::from(child.wait_with_output().unwrap())
}

#[test]
fn a_signal_during_the_signatures_download_ends_it_as_a_cancelled_download() {
    for (signal, code, said) in [
        (libc::SIGINT, 130, "interrupted; nothing was written"),
        (libc::SIGTERM, 143, "terminated; nothing was written"),
    ] {
        let (url, arrivals) = mirror_holding_the_signature(CATALOG_B);
        let signer = Signer::new();
        let home = Home::new();
        home.set_cache(CATALOG_A.as_bytes());
        let before = home.data_entries();
        let mut command = home.crush(&["update-providers", &url, "--allow-shrink"]);
        command.env("CRUSH_PROVIDER_PUBLIC_KEY", signer.public_key());
        let run = signalled_at_the_signature(command, &arrivals, signal);
        assert_eq!(run.code, Some(code), "{run:?}");
        assert_eq!(run.stderr.trim_end(), said, "{run:?}");
        assert!(!run.stderr.contains("signature"), "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
        // The cache and its folder as they were.
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
        assert_eq!(home.data_entries(), before);
    }
}

/// The same for a refresh a person waits for (`providers --wait`): the
/// signal ends it at once, nothing written, no refusal recorded.
#[test]
fn a_signal_during_the_signature_of_a_refresh_waited_for_ends_it() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (url, arrivals) = mirror_holding_the_signature(CATALOG_B);
        let signer = Signer::new();
        let home = Home::new();
        let mut command = home.crush(&["providers", "--wait"]);
        command
            .env("CATWALK_URL", &url)
            .env("CRUSH_PROVIDER_PUBLIC_KEY", signer.public_key());
        let run = signalled_at_the_signature(command, &arrivals, signal);
        assert_eq!(run.code, Some(code), "{run:?}");
        assert!(!run.stderr.contains("signature"), "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
        // No catalog, no state: only the lock that kept other refreshes
        // of this folder apart.
        assert_eq!(home.data_entries(), [".providers.refresh.lock"]);
    }
}
