//! A download a person waits for at the command line: a progress bar on
//! standard error when it is a terminal, and Ctrl-C or SIGTERM ending it
//! (the library's [`Watch`]: it draws nothing and listens for no signal
//! itself). The exit code each signal means (130, 143) is decided with the
//! other exit codes ([`super::Exit`]).

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fetch::watch::{Cancel, Reporter, Signal, Watch};

/// What a download a person waits for gets: Ctrl-C and SIGTERM end it,
/// and with `bar` its progress is drawn on standard error when that is a
/// terminal (a line with the time waited, should no answer come within a
/// second). Once a download has listened for those signals, they no
/// longer end the process by themselves for as long as it runs: only the
/// command line, which exits soon after, asks for it. [`done`] clears
/// what is drawn.
pub(super) fn watched(bar: bool) -> Watch {
    let bar = bar && std::io::stderr().is_terminal();
    Watch {
        reporter: bar.then(|| Bar::new() as Arc<dyn Reporter>),
        cancel: Some(Cancel::new(signalled)),
    }
}

/// Clears what `watch` drew: what it watched is over, answered or not.
pub(super) fn done(watch: &Watch) {
    if let Some(reporter) = &watch.reporter {
        reporter.on_download_end();
    }
}

/// Waits for Ctrl-C or SIGTERM; listens from its first poll, which the
/// download makes before its request leaves.
async fn signalled() -> Signal {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            return tokio::select! {
                _ = int.recv() => Signal::Interrupt,
                _ = term.recv() => Signal::Terminate,
            };
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_ok() {
        return Signal::Interrupt;
    }
    // No way to listen: the signals keep their default effect.
    std::future::pending().await
}

/// Columns of a progress bar's line left free at the right edge: the
/// terminal echoes Ctrl-C there as `^C`, which must not wrap the line
/// (clearing the bar would then clear the wrapped line, and leave the
/// bar).
const ECHO_ROOM: u16 = 3;

/// How long a request goes unanswered before the wait is shown.
const QUIET: Duration = Duration::from_secs(1);

/// What is drawn of the download under way.
enum Drawn {
    /// Nothing yet: the request has not been answered.
    Waiting,
    /// The wait, then the body's bar.
    Bar(indicatif::ProgressBar),
    /// Nothing any more: it is over.
    Ended,
}

/// The line or the bar of the download under way.
struct Bar(Mutex<Drawn>);

impl Bar {
    /// Draws the wait once a request went [`QUIET`] unanswered.
    fn new() -> Arc<Bar> {
        let bar = Arc::new(Bar(Mutex::new(Drawn::Waiting)));
        let weak = Arc::downgrade(&bar);
        std::thread::spawn(move || {
            std::thread::sleep(QUIET);
            if let Some(bar) = weak.upgrade() {
                bar.draw(
                    |drawn| matches!(drawn, Drawn::Waiting),
                    || progress_bar(None, true),
                );
            }
        });
        bar
    }

    /// Replaces what is drawn with `next`, when `now` says it may.
    fn draw(&self, now: impl Fn(&Drawn) -> bool, next: impl FnOnce() -> Drawn) {
        let mut drawn = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if now(&drawn)
            && let Drawn::Bar(bar) = std::mem::replace(&mut *drawn, next())
        {
            bar.finish_and_clear();
        }
    }
}

impl Reporter for Bar {
    fn on_download_start(&self, total: Option<u64>) {
        self.draw(|_| true, || progress_bar(total, false));
    }

    fn on_download_progress(&self, received: u64) {
        if let Drawn::Bar(bar) = &*self.0.lock().unwrap_or_else(|e| e.into_inner()) {
            bar.set_position(received);
        }
    }

    fn on_download_end(&self) {
        // Cancelled mid-way too: the bar goes, not half drawn.
        self.draw(|_| true, || Drawn::Ended);
    }
}

/// A bar of `total` bytes (when known) drawn on standard error, or the
/// time a request has waited for its answer.
fn progress_bar(total: Option<u64>, waiting: bool) -> Drawn {
    let plain = crate::environment::var("NO_COLOR").is_some();
    let template = match (total.is_some(), plain) {
        _ if waiting => "{spinner} waiting for the server to answer ({elapsed})",
        (true, false) => {
            "{spinner:.green} {bytes}/{total_bytes} [{wide_bar:.cyan/blue}] {bytes_per_sec}"
        }
        (true, true) => "{spinner} {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec}",
        (false, _) => "{spinner} {bytes} {bytes_per_sec}",
    };
    let bar = match total {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    }
    .with_finish(indicatif::ProgressFinish::AndClear);
    let Ok(style) = indicatif::ProgressStyle::with_template(template) else {
        return Drawn::Waiting;
    };
    bar.set_style(style.progress_chars("=> "));
    bar.set_draw_target(indicatif::ProgressDrawTarget::term_like_with_hz(
        Box::new(Stderr),
        20,
    ));
    if waiting {
        bar.set_elapsed(QUIET);
        bar.enable_steady_tick(Duration::from_millis(100));
    }
    Drawn::Bar(bar)
}

/// Standard error as the bar's terminal, [`ECHO_ROOM`] columns narrower
/// than it is: the bar pads its line to the width it is told, and leaves
/// the cursor there.
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn write(&self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().lock().write_all(text.as_bytes())
    }

    fn size(&self) -> (u16, u16) {
        let size = terminal_size::terminal_size_of(std::io::stderr());
        size.map_or((80, 24), |(width, height)| (width.0, height.0))
    }

    /// Moves the cursor `n` cells in the direction of `code`.
    fn move_by(&self, n: usize, code: char) -> std::io::Result<()> {
        match n {
            0 => Ok(()),
            n => self.write(&format!("\x1b[{n}{code}")),
        }
    }
}

impl indicatif::TermLike for Stderr {
    fn width(&self) -> u16 {
        self.size().0.saturating_sub(ECHO_ROOM).max(1)
    }

    fn height(&self) -> u16 {
        self.size().1
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.move_by(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.move_by(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.move_by(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.move_by(n, 'D')
    }

    fn write_line(&self, line: &str) -> std::io::Result<()> {
        self.write(&format!("{line}\n"))
    }

    fn write_str(&self, text: &str) -> std::io::Result<()> {
        self.write(text)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.write("\r\x1b[2K")
    }

    fn flush(&self) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().flush()
    }
}
