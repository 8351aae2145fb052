//! Issue 25, case 4: nothing from a catalog, a server, a signature or the
//! state file reaches a terminal raw. Strings holding an escape sequence
//! (ESC, OSC … BEL, CSI), a carriage return, a backspace, DEL, C1
//! controls, bidirectional controls, zero-width characters and U+2028 go
//! through every command: the listings, the change report (names, header
//! values, reasoning levels, in text, one a line, and JSON), the key-move
//! and held warnings (the host), `providers --status` (text and JSON),
//! and errors that quote a server's body, a proxy's status line, or the
//! character at a JSON parse error. Each shows them escaped (`\u{1b}`, or
//! `\u001b` in JSON, which reads back as the same string); the catalog's
//! own bytes go to a pipe exactly, and to a terminal escaped.

use std::io::Write;

use crate::common::*;
use crush_providers::internals::escape::is_unsafe;

/// Every kind of character a terminal must not get raw.
const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\r\u{8}\u{7f}\u{85}\u{9b}31m\u{202e}\u{2066}\u{200b}\u{feff}\u{2028}";

/// `text` holds none of them raw (line breaks aside).
#[track_caller]
fn clean(what: &str, text: &str) {
    if let Some(c) = text.chars().find(|c| *c != '\n' && is_unsafe(*c)) {
        panic!("{what}: U+{:04X} raw in {text:?}", c as u32);
    }
}

/// A JSON string holding `s`, as a catalog writes it (escapes for what
/// JSON must escape, the rest raw).
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// CATALOG_A with hostile names, reasoning levels, headers and type.
fn hostile_catalog() -> String {
    CATALOG_A
        .replace(
            r#""name": "Alpha""#,
            &format!(r#""name": {}"#, json(&format!("Alpha{HOSTILE}"))),
        )
        .replace(
            r#""name": "A Large""#,
            &format!(r#""name": {}"#, json(&format!("A Large{HOSTILE}"))),
        )
        .replace(
            r#""reasoning_levels": ["low", "high"]"#,
            &format!(
                r#""reasoning_levels": ["low", {}]"#,
                json(&format!("high{HOSTILE}"))
            ),
        )
        .replace(
            r#""type": "anthropic""#,
            &format!(
                r#""type": {}, "default_headers": {{"X-Title": {}}}"#,
                json(&format!("anthropic{HOSTILE}")),
                json(&format!("Crush{HOSTILE}"))
            ),
        )
        .replace(r#""id": "b1""#, r#""id": "b1\u202e\u200b""#)
        // The harmless variant: other scripts and accents, shown as they are.
        .replace(r#""name": "Beta""#, r#""name": "Bêta 日本語 — ok""#)
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_strings_are_escaped_by_every_command() {
    let hostile = hostile_catalog();
    assert!(crush_providers::catalog::validate(hostile.as_bytes()).is_ok());
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let (_dir, file) = temp_file("hostile.json", hostile.as_bytes());
    let file = file.to_str().unwrap();
    // The change report: text, one change a line, JSON.
    for args in [
        &["update-providers", file, "--dry-run"][..],
        &["update-providers", file, "--dry-run", "--verbose"],
    ] {
        let run = home.run(args);
        run.ok();
        clean("report", &run.stdout);
        clean("report warnings", &run.stderr);
        assert!(
            run.stdout.contains("\\u{1b}]0;owned\\u{7}"),
            "{args:?}: {}",
            run.stdout
        );
    }
    let run = home.run(&["update-providers", file, "--dry-run", "--json"]);
    run.ok();
    clean("report JSON", &run.stdout);
    assert!(run.stdout.contains("\\u202e"), "{}", run.stdout);
    assert!(
        run.json().to_string().contains("\\u001b]0;owned"),
        "reads back the same"
    );
    home.run(&["update-providers", file]).ok();
    let offline = [("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")];
    // Listings, on a pipe.
    for args in [
        &["models"][..],
        &["models", "--json"],
        &["providers"],
        &["providers", "--status"],
        &["providers", "--status", "--json"],
    ] {
        let run = home.run_env(args, &offline);
        run.ok();
        // `providers` separates its fields by tabs on a pipe; a tab in a
        // field would be escaped with the rest.
        let fields = match args {
            ["providers"] => run.stdout.replace('\t', " "),
            _ => run.stdout.clone(),
        };
        clean(&format!("{args:?}"), &fields);
        clean(&format!("{args:?} stderr"), &run.stderr);
    }
    let providers = home.run_env(&["providers"], &offline);
    assert!(
        providers.stdout.contains("Bêta 日本語 — ok"),
        "{}",
        providers.stdout
    );
    let models = home.run_env(&["models", "--json"], &offline).json();
    assert_eq!(
        models[0]["name"],
        format!("A Large{HOSTILE}"),
        "the same string"
    );
    // The catalog itself: exact to a pipe, escaped on a terminal.
    let run = home.run_env(&["providers", "--json"], &offline);
    assert_eq!(run.stdout, hostile, "byte for byte to a pipe");
    #[cfg(unix)]
    {
        use crate::terminal::in_terminal;
        for args in [
            &["providers", "--json"][..],
            &["models"],
            &["providers"],
            &["providers", "--status"],
        ] {
            let (code, text) = in_terminal(&home, args, &offline, false, |_| {});
            assert_eq!(code, Some(0), "{args:?}: {text}");
            clean(&format!("{args:?} on a terminal"), &text);
        }
        let (_, text) = in_terminal(&home, &["providers", "--json"], &offline, false, |_| {});
        let shown: serde_json::Value = serde_json::from_str(&text).unwrap();
        let stored: serde_json::Value = serde_json::from_str(&hostile).unwrap();
        assert_eq!(shown, stored, "the same JSON");
        let (_, text) = in_terminal(
            &home,
            &["update-providers", file, "--dry-run", "--verbose"],
            &[],
            false,
            |_| {},
        );
        clean("the report on a terminal", &text);
    }

    // A key move to a hostile host: refused, warned when allowed, held by
    // a refresh and told at every start, listed by --status.
    let moved = CATALOG_A.replace(
        "https://api.beta.example",
        "https://api.beta.example\u{202e}\u{200b}.evil",
    );
    let (_dir, moved_file) = temp_file("moved.json", moved.as_bytes());
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let run = home.run(&["update-providers", moved_file.to_str().unwrap()]);
    run.fails_with(&["https://api.beta.example\\u{202e}\\u{200b}.evil:443"]);
    clean("key move refused", &run.stderr);
    let run = home.run(&[
        "update-providers",
        moved_file.to_str().unwrap(),
        "--dry-run",
        "--allow-key-move",
    ]);
    run.ok();
    clean("key move warning", &run.stderr);
    let server = crate::held::serving(&moved).await;
    let record = crate::held::refresh(&home, &server.uri());
    assert_eq!(record["outcome"], "held", "{record}");
    for args in [
        &["providers", "--json"][..],
        &["providers", "--status"],
        &["providers", "--status", "--json"],
    ] {
        let run = home.run_env(args, &[("CATWALK_URL", &server.uri())]);
        run.ok();
        clean(
            &format!("held: {args:?}"),
            &run.stdout.replace(CATALOG_A, ""),
        );
        clean(&format!("held: {args:?} stderr"), &run.stderr);
        assert!(
            run.stderr.contains("\\u{202e}")
                || run.stdout.contains("\\u{202e}")
                || run.stdout.contains("\\u202e"),
            "{args:?}: {run:?}"
        );
    }
}

/// Errors quoting what a server, a proxy or a document said.
#[test]
fn errors_escape_what_they_quote() {
    let home = Home::new();
    // A server's error body.
    let server = raw_server(|s| {
        let body = "bo\u{1b}[31mom\u{202e}\u{85}\u{2028}done";
        let _ = write!(
            s,
            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    });
    for json in [false, true] {
        let mut args = vec!["update-providers", server.as_str()];
        if json {
            args.push("--json");
        }
        let run = home.run(&args);
        run.fails_with(&["server answered 500", "bo[31mom\\u{202e}"]);
        clean("server body", &run.stderr);
        clean("server body JSON", &run.stdout);
    }
    // The character at a JSON parse error.
    let (_dir, file) = temp_file("bad.json", "[\u{202e}]".as_bytes());
    let run = home.run(&["update-providers", file.to_str().unwrap()]);
    run.fails_with(&["found `\\u{202e}`"]);
    clean("parse error", &run.stderr);
    // A proxy's status line: not quoted at all (the HTTP client keeps
    // none of it).
    let proxy = raw_server(|s| {
        let _ = s.write_all(
            "HTTP/1.1 403 Forbidden\u{202e}\u{1b}[2J\u{9b}\r\nContent-Length: 0\r\n\r\n".as_bytes(),
        );
    });
    let run = home.run_env(
        &["update-providers", "https://catalog.mirror.corp.test"],
        &[("HTTPS_PROXY", &proxy)],
    );
    run.fails_with(&["refused the tunnel"]);
    assert!(!run.stderr.contains("Forbidden"), "{run:?}");
    clean("proxy status", &run.stderr);
}
