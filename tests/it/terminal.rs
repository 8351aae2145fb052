//! What a person sees in an 80 x 30 terminal (a real pseudo-terminal, its
//! size set as tmux would): no line wider than the screen, tables narrowed
//! rather than wrapped, messages wrapped at the width without cutting a
//! word, one id a line with `--verbose`; and the terminal-only behaviours:
//! `-` refused when standard input is the terminal, the progress bar
//! cleared when Ctrl-C ends a download.

#![cfg(unix)]

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use unicode_width::UnicodeWidthStr;

const COLUMNS: u16 = 80;

/// A pseudo-terminal of `COLUMNS` x 30: (the side the program gets, the
/// side this test reads).
pub(crate) fn terminal() -> (OwnedFd, std::fs::File) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: out-pointers to two ints and a valid winsize; no name, no
    // termios.
    let made = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty just gave us both descriptors, owned by nobody else.
    unsafe {
        (
            OwnedFd::from_raw_fd(slave),
            std::fs::File::from(OwnedFd::from_raw_fd(master)),
        )
    }
}

/// Runs the binary with its standard output and error (and, with
/// `stdin_too`, input) on a terminal; returns its exit code and what the
/// terminal showed, carriage returns removed. `during` runs once the
/// program has started (to send it a signal).
pub(crate) fn in_terminal(
    home: &Home,
    args: &[&str],
    env: &[(&str, &str)],
    stdin_too: bool,
    during: impl FnOnce(u32),
) -> (Option<i32>, String) {
    let (slave, mut master) = terminal();
    let mut cmd = home.crush(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    if stdin_too {
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()));
    }
    let mut child = cmd.spawn().unwrap();
    drop(slave);
    drop(cmd);
    let reader = std::thread::spawn(move || shown(&mut master));
    during(child.id());
    let status = child.wait().unwrap();
    (status.code(), reader.join().unwrap())
}

/// What the terminal showed once every program writing to it is done (the
/// last slave closed), carriage returns removed.
pub(crate) fn shown(master: &mut std::fs::File) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    // EIO once the last slave is closed.
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).replace('\r', "")
}

/// Every line of `text` fits the terminal.
#[track_caller]
fn fits(what: &str, text: &str) {
    assert!(!text.trim().is_empty(), "{what}: nothing shown");
    for line in text.lines() {
        assert!(
            line.width() <= COLUMNS as usize,
            "{what}: {} columns: {line:?}\n{text}",
            line.width()
        );
    }
}

fn offline() -> [(&'static str, &'static str); 1] {
    [("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")]
}

/// The listings, on the real catalog: rows narrowed, never wrapped.
#[test]
fn listings_fit_80_columns() {
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    for args in [
        &["models", "sonnet"][..],
        &["models", "haiku"],
        &["models"],
        &["providers"],
        &["providers", "--status"],
        &["dirs"],
        &["update-providers", "--help"],
    ] {
        let (code, text) = in_terminal(&home, args, &offline(), false, |_| {});
        assert_eq!(code, Some(0), "{args:?}: {text}");
        fits(&format!("{args:?}"), &text);
    }
    let (_, text) = in_terminal(&home, &["models", "sonnet"], &offline(), false, |_| {});
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("MODEL"), "{text}");
    assert!(text.contains("anthropic/claude-sonnet-4-6"), "{text}");
    // Every model is still one row.
    let piped = home.run_env(&["models", "sonnet"], &offline());
    assert_eq!(piped.stdout.lines().count(), lines.len(), "{text}");
}

/// The update report, its warnings and `--verbose`: warnings wrap at the
/// width with the text kept in its column, and never cut a host or a
/// variable's name.
#[test]
fn reports_and_warnings_fit_80_columns() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let (_dir, b) = temp_file("b.json", CATALOG_B.as_bytes());
    let b = b.to_str().unwrap();
    let (code, text) = in_terminal(
        &home,
        &["update-providers", b, "--dry-run", "--allow-key-move"],
        &[],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    fits("update report", &text);
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains("warning: provider \"beta\" would send $BETA_API_KEY to https://attacker.example:443, where it was never sent before"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("warning: ")), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("         ") && !l.trim().is_empty()),
        "continuation lines keep the text's column: {text}"
    );
    let (_, text) = in_terminal(
        &home,
        &[
            "update-providers",
            b,
            "--dry-run",
            "--verbose",
            "--allow-key-move",
        ],
        &[],
        false,
        |_| {},
    );
    fits("--verbose", &text);
    for line in [
        "  + provider gamma",
        "      + model a-new",
        "      - model a-small",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    // An error wraps the same way.
    let (code, text) = in_terminal(
        &home,
        &["update-providers", "https://127.0.0.1:9/"],
        &[("SSL_CERT_FILE", "/nonexistent.pem")],
        false,
        |_| {},
    );
    assert_eq!(code, Some(1));
    fits("an error", &text);
    assert!(text.lines().count() > 1, "{text}");
    // Piped, the same error is one line.
    let piped = home.run_env(
        &["update-providers", "https://127.0.0.1:9/"],
        &[("SSL_CERT_FILE", "/nonexistent.pem")],
    );
    assert_eq!(piped.stderr.lines().count(), 1, "{piped:?}");
}

/// A real release-to-release update: the cache holds the embedded catalog
/// (Catwalk v0.52.6) with three OpenRouter models as Catwalk v0.52.3 had
/// them, and `update-providers embedded` reports their new prices and
/// context windows, each line within 80 columns, the context window first.
#[test]
fn a_real_release_update_names_prices_and_context_windows() {
    let mut catalog: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/embedded/providers.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v0_52_3 = serde_json::json!({
        "deepseek/deepseek-chat": {"cost_per_1m_in": 0.32, "cost_per_1m_out": 0.89,
            "context_window": 163840, "default_max_tokens": 8192},
        "anthropic/claude-opus-5": {"cost_per_1m_in": 5, "cost_per_1m_out": 25,
            "cost_per_1m_in_cached": 6.25, "cost_per_1m_out_cached": 0.5},
        "thinkingmachines/inkling-small": {"cost_per_1m_in": 0.45,
            "context_window": 524288, "default_max_tokens": 131072},
    });
    let openrouter = catalog
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["id"] == "openrouter")
        .unwrap();
    for model in openrouter["models"].as_array_mut().unwrap() {
        if let Some(old) = v0_52_3.get(model["id"].as_str().unwrap()) {
            for (field, value) in old.as_object().unwrap() {
                model[field] = value.clone();
            }
        }
    }
    let home = Home::new();
    home.run_stdin(
        &["update-providers", "-"],
        &serde_json::to_vec(&catalog).unwrap(),
    )
    .ok();
    let (code, text) = in_terminal(
        &home,
        &["update-providers", "embedded", "--dry-run"],
        &[],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    fits("a release's report", &text);
    for line in [
        "  changes: providers 1 changed; models 3 changed",
        "  ~ openrouter: 3 models changed",
        "      openrouter/anthropic/claude-opus-5: cost_per_1m_in 5 → 5.5, … and 3 more",
        "      openrouter/deepseek/deepseek-chat: context_window 163840 → 128000, …",
        "      openrouter/thinkingmachines/inkling-s…: context_window 524288 → 1048576, …",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
}

/// `-` with standard input on the terminal would wait for a catalog nobody
/// types: refused at once, saying how to pipe one in.
#[test]
fn standard_input_on_a_terminal_is_refused() {
    let home = Home::new();
    let start = Instant::now();
    let (code, text) = in_terminal(&home, &["update-providers", "-"], &[], true, |_| {});
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(code, Some(2), "{text}");
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("is this terminal; pipe one in"), "{text}");
}

/// Ctrl-C during a download a person watches ends it at once (130), and
/// the progress bar goes with it rather than staying half drawn.
#[test]
fn ctrl_c_clears_the_progress_bar() {
    let url = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n[");
        for _ in 0..300 {
            if s.write_all(&[b' '; 100]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let home = Home::new();
    let (code, text) = in_terminal(
        &home,
        &["update-providers", &url],
        &[("TERM", "xterm-256color")],
        false,
        |pid| {
            std::thread::sleep(Duration::from_millis(1500));
            // SAFETY: a signal to our own child, not yet reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
        },
    );
    assert_eq!(code, Some(130), "{text:?}");
    let drawn = text
        .rfind("B/s")
        .unwrap_or_else(|| panic!("no bar drawn: {text:?}"));
    assert!(
        text[drawn..].contains("\x1b[2K"),
        "the bar was left drawn: {text:?}"
    );
    assert!(home.cache().is_none());
}
