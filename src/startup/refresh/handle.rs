//! A refresh on a thread of this process, for a long-lived host.

use std::sync::mpsc;
use std::time::Duration;

use super::{IfBusy, Job, Outcome, run};

/// A refresh running on a thread of this process, for a long-lived host:
/// poll it, or wait for it, and swap the new catalog in when it brings one.
///
/// # Example
///
/// A host that starts at once with the cached catalog and takes the new one
/// while it runs (here a loopback server serves it):
///
/// ```
/// use std::time::Duration;
/// use crush_providers::store::CacheFiles;
/// use crush_providers::startup::Outcome;
/// use crush_providers::startup::{self, Background, StartupOptions};
///
/// # fn serve_once(body: String) -> String {
/// #     use std::io::{BufRead, BufReader, Write};
/// #     let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// #     let url = format!("http://{}/v2/providers", listener.local_addr().unwrap());
/// #     std::thread::spawn(move || {
/// #         let (mut stream, _) = listener.accept().unwrap();
/// #         let mut reader = BufReader::new(stream.try_clone().unwrap());
/// #         let mut line = String::new();
/// #         while reader.read_line(&mut line).unwrap() > 2 { line.clear(); }
/// #         let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
/// #         stream.write_all(head.as_bytes()).unwrap();
/// #         stream.write_all(body.as_bytes()).unwrap();
/// #     });
/// #     url
/// # }
/// # // The cache: the embedded snapshot, written by another program; the
/// # // new catalog: the same, with a provider added.
/// # let old = std::str::from_utf8(crush_providers::catalog::embedded::catalog_bytes()).unwrap();
/// # let new_catalog = format!(
/// #     "{},{{\"id\":\"new\",\"name\":\"New\",\"models\":[{{\"id\":\"m\"}}]}}]",
/// #     &old[..old.rfind(']').unwrap()].trim_end()
/// # );
/// # let url = serve_once(new_catalog.clone());
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("providers.json"), old).unwrap();
/// let files = CacheFiles::in_dir(dir.path());
/// let options = StartupOptions {
///     auto_update: true,
///     default_providers: true,
///     url: url.parse().unwrap(),
///     timeout: startup::DEFAULT_TIMEOUT,
///     interval: startup::DEFAULT_INTERVAL,
///     background: Background::Thread,
///     wait: false,
///     watch: Default::default(),
///     keys: None,
///     hyper: None,
/// };
/// let mut loaded = startup::load(&files, &options);
/// // At once: the cache, never confirmed, so a refresh was started.
/// let mut catalog = loaded.bytes.to_vec();
/// assert!(!String::from_utf8_lossy(&catalog).contains("\"new\""));
///
/// // Later, in the host's loop: `poll` never blocks; here we wait.
/// if let Some(refresh) = &mut loaded.refresh {
///     match refresh.wait(Duration::from_secs(10)) {
///         Some(Outcome::Updated(new) | Outcome::Unsaved(new, _)) => catalog = new.clone(),
///         Some(Outcome::Unchanged | Outcome::Interrupted(_)) | None => {}
///         Some(Outcome::Failed(why)) => eprintln!("catalog refresh failed: {why}"),
///         // Moves a key, shrank, or is not signed as it must be: tell the
///         // user; `crush update-providers` (with the flag it names)
///         // applies it.
///         Some(Outcome::Held(held)) => eprintln!("catalog refresh held: {:?}", held.changes),
///     }
/// }
/// assert_eq!(catalog, new_catalog.as_bytes());
/// ```
#[derive(Debug)]
pub struct Refresh {
    receiver: mpsc::Receiver<Outcome>,
    outcome: Option<Outcome>,
}

impl Refresh {
    /// Starts the refreshes of `jobs` on a new thread, one after the
    /// other; the handle tells the first one's outcome as soon as it is
    /// known, not after the others' requests.
    pub(crate) fn start(jobs: Vec<Job>) -> std::io::Result<Refresh> {
        let (sender, receiver) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("refresh".into())
            .spawn(move || {
                let (first, rest) = jobs.split_at(jobs.len().min(1));
                let outcome = run(first, IfBusy::Wait).pop();
                let _ = sender.send(outcome.unwrap_or(Outcome::Unchanged));
                run(rest, IfBusy::Wait);
            })?;
        Ok(Refresh {
            receiver,
            outcome: None,
        })
    }

    /// The outcome, if the refresh has ended; never blocks.
    pub fn poll(&mut self) -> Option<&Outcome> {
        self.wait(Duration::ZERO)
    }

    /// The outcome, waiting at most `timeout` for the refresh to end.
    pub fn wait(&mut self, timeout: Duration) -> Option<&Outcome> {
        if self.outcome.is_none() {
            self.outcome = match self.receiver.recv_timeout(timeout) {
                Ok(outcome) => Some(outcome),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => Some(Outcome::Failed(
                    "the refresh thread stopped without an outcome".into(),
                )),
            };
        }
        self.outcome.as_ref()
    }
}
