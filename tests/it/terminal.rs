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

/// The listings, on the real catalog: rows narrowed, an id never cut (one
/// too wide for its column stands on a line of its own); piped, bare
/// `provider/model` lines, each of them whole on the terminal.
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
    for term in ["sonnet", "gpt", ""] {
        let (_, text) = in_terminal(&home, &["models", term], &offline(), false, |_| {});
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("MODEL"), "{text}");
        assert!(!text.contains('…'), "{text}");
        // Every model the pipe lists is on the screen, its id whole.
        let piped = home.run_env(&["models", term], &offline());
        assert!(piped.stdout.lines().count() > 3, "{piped:?}");
        for id in piped.stdout.lines() {
            assert!(
                lines.iter().any(|l| l.split("  ").next() == Some(id)),
                "{id}: {text}"
            );
        }
    }
    let (_, text) = in_terminal(&home, &["models", "sonnet"], &offline(), false, |_| {});
    assert!(
        text.contains("\nbedrock-europe/eu.anthropic.claude-sonnet-4-5-20250929-v1:0\n"),
        "{text}"
    );
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
    // Piped, the same error is its lines whole: what failed, then its
    // hint, none of them wrapped.
    let piped = home.run_env(
        &["update-providers", "https://127.0.0.1:9/"],
        &[("SSL_CERT_FILE", "/nonexistent.pem")],
    );
    assert_eq!(piped.error(), piped.stderr.trim_end(), "{piped:?}");
    assert_eq!(piped.stderr.lines().count(), 2, "{piped:?}");
}

/// A real release-to-release update: the cache holds the embedded catalog
/// (Catwalk v0.52.6) with three OpenRouter models as Catwalk v0.52.3 had
/// them, and `update-providers embedded` reports every one of their
/// changes whole, the context window first, each line within 80 columns,
/// the model ids whole, and what happened last.
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
    assert!(!text.contains('…'), "nothing cut: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..11],
        [
            "Checked providers from embedded snapshot: 40 providers, 1517 models",
            "  ~ openrouter: 3 models changed",
            "      anthropic/claude-opus-5: cost_per_1m_in 5 → 5.5,",
            "        cost_per_1m_out 25 → 27.5, cost_per_1m_in_cached 6.25 → 6.875,",
            "        cost_per_1m_out_cached 0.5 → 0.55",
            "      deepseek/deepseek-chat: context_window 163840 → 128000,",
            "        cost_per_1m_in 0.32 → 0.2574, cost_per_1m_out 0.89 → 1.0287,",
            "        default_max_tokens 8192 → 8000",
            "      thinkingmachines/inkling-small: context_window 524288 → 1048576,",
            "        cost_per_1m_in 0.45 → 0.5, default_max_tokens 131072 → 16384",
            "  changes: providers 1 changed; models 3 changed",
        ],
        "{text}"
    );
    // Last, where the eye lands: the digest and what happened.
    assert!(lines[11].starts_with("  sha256 "), "{text}");
    assert!(
        words(&lines[12..].join(" ")).starts_with("dry run: nothing written"),
        "{text}"
    );
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
    // The command to type is on one line, to be copied whole.
    let command = "`curl -s https://mirror.corp/catwalk/v2/providers | crush update-providers -`";
    assert!(text.lines().any(|l| l.contains(command)), "{text}");
}

/// Ctrl-C typed during a download a person watches, as a person types it:
/// at the terminal, which echoes `^C` right of a bar that spans the screen.
/// The download ends at once (130), nothing is written, and the screen is
/// left with one line saying so: no bar, no `^C` wrapped to a line of its
/// own.
#[test]
fn ctrl_c_at_the_terminal_leaves_one_line_and_no_bar() {
    let url = raw_server(|s| {
        use std::io::Write;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n[");
        for _ in 0..1500 {
            if s.write_all(&[b' '; 100]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let home = Home::new();
    let (code, shown) = crate::screen::ctrl_c_when(
        &home,
        &["update-providers", &url],
        &[("TERM", "xterm-256color")],
        // The bar, drawn with its rate.
        |text| text.contains("B/s"),
    );
    let raw = String::from_utf8_lossy(&shown);
    assert_eq!(code, Some(130), "{raw:?}");
    assert!(raw.contains("^C"), "the terminal echoed it: {raw:?}");
    let screen = crate::screen::Screen::of(COLUMNS as usize, &shown);
    assert!(
        screen.widest >= COLUMNS as usize - 3,
        "the bar spans the screen: {} columns, {raw:?}",
        screen.widest
    );
    assert_eq!(
        screen.lines(),
        ["interrupted; nothing was written"],
        "{raw:?}"
    );
    assert!(home.cache().is_none());
}

/// Issue 36 findings: a server that accepts and never answers leaves no
/// blank screen: after a second the terminal shows how long the request
/// has waited; Ctrl-C then ends it, and the line goes with it.
#[test]
fn a_silent_server_shows_the_wait_at_the_terminal() {
    // Holds the connection, unanswered, until the client closes it.
    let url = raw_server(|s| {
        let _ = std::io::Read::read(s, &mut [0u8; 1]);
    });
    let home = Home::new();
    let (code, shown) = crate::screen::ctrl_c_when(
        &home,
        &["update-providers", &url, "--timeout", "25"],
        &[("TERM", "xterm-256color")],
        |text| text.contains("waiting for the server to answer (1s)"),
    );
    let raw = String::from_utf8_lossy(&shown);
    assert_eq!(code, Some(130), "{raw:?}");
    let screen = crate::screen::Screen::of(COLUMNS as usize, &shown);
    assert_eq!(
        screen.lines(),
        ["interrupted; nothing was written"],
        "{raw:?}"
    );
    assert!(home.cache().is_none());
}

/// Two catalogs far apart (the same providers, other models): a report
/// longer than any screen.
fn far_apart(home: &Home) -> (tempfile::TempDir, String, String) {
    use crate::synthetic;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, synthetic::catalog(400_000, 1)).unwrap();
    std::fs::write(&b, synthetic::catalog(400_000, 2)).unwrap();
    let (a, b) = (a.display().to_string(), b.display().to_string());
    home.run(&["update-providers", &a, "--allow-shrink"]).ok();
    (dir, a, b)
}

/// On an 80 x 30 terminal the report of a large update fits the screen:
/// the most relevant changes, then how many more there are, and last,
/// where the eye lands, the counts and what happened; the head wraps at a
/// word, never inside one.
#[test]
fn a_long_report_fits_the_screen_and_ends_with_what_happened() {
    let home = Home::new();
    let (_dir, _a, b) = far_apart(&home);
    let (code, text) = in_terminal(
        &home,
        &["update-providers", &b, "--dry-run"],
        &[],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    fits("a long report", &text);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 29, "{} lines: {text}", lines.len());
    let more = lines
        .iter()
        .position(|l| l.starts_with("  … ") && l.ends_with(" more changes (--verbose)"))
        .unwrap_or_else(|| panic!("no count of what was left out: {text}"));
    let after = words(&lines[more + 1..].join(" "));
    assert!(after.starts_with("changes: providers "), "{text}");
    assert!(after.ends_with("dry run: nothing written"), "{text}");
    // The head: whole words on each line.
    let head = words(&lines[..2].join(" "));
    assert!(
        head.starts_with(&format!("Checked providers from {b}: ")),
        "{text}"
    );
    // Piped, the same report fits 80 columns.
    let piped = home.run(&["update-providers", &b, "--dry-run"]);
    for line in piped.stdout.lines() {
        assert!(
            line.width() <= 80 || !line.trim().contains(' '),
            "{line}: {piped:?}"
        );
    }
}

/// Issue 36 findings: on an 80 x 30 terminal the counts of a report stay
/// in its last four rows however long the cache's path: a dry run's
/// footer is `dry run: nothing written`.
#[test]
fn the_counts_stay_in_the_last_four_rows_whatever_the_path() {
    let home = Home::new();
    let deep = home
        .path()
        .join("a-data-folder-of-a-rather-long-name/".repeat(4));
    let data = [("XDG_DATA_HOME", deep.to_str().unwrap())];
    let (_dir, a) = temp_file("a.json", CATALOG_A.as_bytes());
    let (_dir2, b) = temp_file("b.json", CATALOG_A2.as_bytes());
    home.run_env(
        &["update-providers", a.to_str().unwrap(), "--allow-shrink"],
        &data,
    )
    .ok();
    let (code, text) = in_terminal(
        &home,
        &["update-providers", b.to_str().unwrap(), "--dry-run"],
        &data,
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    fits("a dry run", &text);
    let lines: Vec<&str> = text.lines().collect();
    let counts = lines
        .iter()
        .position(|l| l.starts_with("  changes: "))
        .unwrap_or_else(|| panic!("no counts: {text}"));
    assert!(counts + 4 >= lines.len(), "{text}");
    assert_eq!(lines.last(), Some(&"  dry run: nothing written"), "{text}");
}

/// `--output -` on a terminal: the catalog whole, then the report, never
/// inside it; through `head -c 100`, which takes the catalog and goes, the
/// report is still told.
#[test]
fn the_catalog_on_standard_output_comes_before_its_report() {
    let home = Home::new();
    let (code, text) = in_terminal(
        &home,
        &["update-providers", "embedded", "--output", "-"],
        &[],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    let end = text.rfind("\n]").expect("the catalog's last bracket");
    let report = text
        .find("Checked providers from embedded snapshot")
        .unwrap();
    assert!(
        report > end,
        "the report is after the catalog: {}",
        &text[end - 200..]
    );
    assert!(home.cache().is_none());
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "'{}' update-providers embedded --output - | head -c 100 > /dev/null",
                env!("CARGO_BIN_EXE_crush")
            ),
        ])
        .env_clear()
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        words(&stderr).contains("Checked providers from embedded snapshot: 40 providers, 1517 models; written to standard output"),
        "{stderr}"
    );
}

/// What a listing's head says of a cache the embedded snapshot was
/// installed in; context windows in one unit a magnitude (`1.05M`, never
/// `1048K` beside `1M`).
#[test]
fn listings_say_where_the_catalog_came_from_in_plain_words() {
    let home = Home::new();
    home.run(&["update-providers", "embedded"]).ok();
    let (_, text) = in_terminal(&home, &["providers"], &offline(), false, |_| {});
    assert!(
        text.starts_with(
            "Providers: the embedded snapshot (Catwalk v0.52.6, released 2026-08-21),\n  installed in the cache just now\n"
        ),
        "{text}"
    );
    let (_, text) = in_terminal(&home, &["models", "inkling"], &offline(), false, |_| {});
    assert!(text.contains(" 1.05M "), "{text}");
    let (_, all) = in_terminal(&home, &["models"], &offline(), false, |_| {});
    assert!(!all.contains("1048K") && all.contains(" 1M "), "{all}");
}

/// `providers --status` with a key pinned: every line within 80 columns,
/// the key whole on its line, and where it was pinned without the key
/// again.
#[test]
fn a_pinned_key_stands_whole_in_the_status() {
    let home = Home::new();
    let key = Signer::new().public_key();
    let (code, text) = in_terminal(
        &home,
        &["providers", "--status"],
        &[
            ("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1"),
            ("CRUSH_PROVIDER_PUBLIC_KEY", &key),
        ],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    fits("--status", &text);
    assert!(
        text.lines().any(|l| l.split_whitespace().any(|w| w == key)),
        "{text}"
    );
    assert!(
        words(&text).contains("(from CRUSH_PROVIDER_PUBLIC_KEY)"),
        "{text}"
    );
}

/// Issue 29 findings, C1: the held warning says what was held, then each
/// command it asks for on a line of its own, whole even on an 80-column
/// terminal (its URL is long), keeping the catalog in use first.
#[tokio::test(flavor = "multi_thread")]
async fn the_held_warning_gives_each_command_a_line_of_its_own() {
    let (_, moved, finding) = crate::held::moving_a_key().remove(0);
    let server = crate::held::serving(&moved).await;
    // A long URL, as a mirror's is.
    let url = format!("{}/a/long/path/to/the/mirror/of/the/catalog", server.uri());
    wiremock::Mock::given(wiremock::matchers::path(
        "/a/long/path/to/the/mirror/of/the/catalog/v2/providers",
    ))
    .respond_with(wiremock::ResponseTemplate::new(200).set_body_string(moved.clone()))
    .mount(&server)
    .await;
    let home = crate::held::home_with_a();
    assert_eq!(crate::held::refresh(&home, &url)["outcome"], "held");
    let commands = [
        "  keep the catalog in use:  crush update-providers --keep-current".to_string(),
        format!("  review it:                crush update-providers {url}/v2/providers --dry-run"),
        format!(
            "  apply it:                 crush update-providers {url}/v2/providers --allow-key-move"
        ),
    ];
    let (code, text) = in_terminal(
        &home,
        &["providers"],
        &[("CATWALK_URL", &url)],
        false,
        |_| {},
    );
    assert_eq!(code, Some(0), "{text}");
    for command in &commands {
        assert!(text.lines().any(|l| l == command), "{command}: {text}");
    }
    assert!(
        text.starts_with("warning: a refresh of the provider catalog"),
        "{text}"
    );
    let piped = home.run_env(&["providers", "--json"], &[("CATWALK_URL", &url)]);
    let lines: Vec<&str> = piped.stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{piped:?}");
    assert!(lines[0].contains(finding), "{piped:?}");
    assert_eq!(lines[1..], commands, "{piped:?}");
}
