//! What the caller of a download gives it when someone watches: where its
//! progress goes ([`Reporter`], as uv's reporters take it) and what ends it
//! early ([`Cancel`]). The library draws nothing and listens for no signal:
//! the command line draws the bar and turns Ctrl-C and SIGTERM into a
//! cancellation (`commands/progress.rs`, `commands/signals.rs`); a host
//! passes its own, or nothing.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a cancelled download was ended for, as the caller's [`Cancel`]
/// says: the command line exits with 130 for the one, 143 for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (`SIGINT`).
    Interrupt,
    /// `SIGTERM`.
    Terminate,
}

/// Told how a download's body comes in. Every body started is ended,
/// whether it was complete, failed, timed out or was cancelled: a bar can
/// go then, not half drawn.
pub trait Reporter: Send + Sync {
    /// A body begins: `total` bytes when the server said how many (and the
    /// body is not compressed).
    fn on_download_start(&self, total: Option<u64>);
    /// `received` bytes of the body have come so far.
    fn on_download_progress(&self, received: u64);
    /// The body is complete, or the download ended otherwise.
    fn on_download_end(&self);
}

/// The future a [`Cancel`] makes for each download.
type Cancelled = Pin<Box<dyn Future<Output = Signal> + Send>>;

/// What ends a download early: a maker of futures, one for each download,
/// polled beside it on the download's own runtime (tokio's, with its I/O,
/// timer and signal drivers) from its first step to its end. When one
/// completes, the download ends at once, interrupted, with the signal it
/// gave.
#[derive(Clone)]
pub struct Cancel(Arc<dyn Fn() -> Cancelled + Send + Sync>);

impl Cancel {
    /// Cancels a download when a future made by `when` completes.
    pub fn new<F, W>(when: W) -> Cancel
    where
        W: Fn() -> F + Send + Sync + 'static,
        F: Future<Output = Signal> + Send + 'static,
    {
        Cancel(Arc::new(move || Box::pin(when())))
    }

    /// The future for one download.
    pub(crate) fn cancelled(&self) -> Cancelled {
        (self.0)()
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cancel")
    }
}

/// Where a download a person waits for shows its progress, and what ends
/// it. The default, neither: a background refresh, a host's thread.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    /// Told of the body as it comes.
    pub reporter: Option<Arc<dyn Reporter>>,
    /// Ends the download early.
    pub cancel: Option<Cancel>,
}

impl fmt::Debug for dyn Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reporter")
    }
}

/// Tells a [`Reporter`] that a body ended when it is dropped: on every way
/// out of the download, cancellation and timeouts included.
pub(crate) struct Reported<'a>(pub(crate) &'a dyn Reporter);

impl Drop for Reported<'_> {
    fn drop(&mut self) {
        self.0.on_download_end();
    }
}
