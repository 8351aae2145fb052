//! Nothing a crushrc says is lost without a word: every line that could
//! set an option and is not honoured is a warning naming the file and the
//! line, and what Crush does with the file (stops at `exit`, skips
//! here-document bodies, reads an empty value as a bare flag, ignores
//! extra words) is what this reads, end to end.

use std::fs;
use std::path::PathBuf;

use crate::common::*;

/// Writes `text` as the crushrc of a fresh HOME and returns `providers
/// --status --json`'s run and the crushrc's path.
fn with_crushrc(text: &str) -> (Run, PathBuf) {
    let home = Home::new();
    fs::write(home.path().join("crushrc"), text).unwrap();
    let rc = home.path().canonicalize().unwrap().join("crushrc");
    let run = home.run(&["providers", "--status", "--json"]);
    run.ok();
    (run, rc)
}

fn auto_update(run: &Run) -> bool {
    run.json()["provider_auto_update"]["value"]
        .as_bool()
        .unwrap()
}

fn warnings(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .collect()
}

#[test]
fn a_prefix_before_option_is_told_not_dropped() {
    let (run, rc) = with_crushrc(
        "VAR=x option provider-auto-update false\ncommand option provider-auto-update false\n",
    );
    assert!(
        !auto_update(&run),
        "counted as off: Crush's shell runs them"
    );
    let rc = rc.display();
    let counted = ", and Crush, which does, may turn provider-auto-update off there: counted as off, so no start-up request is made while this line stands";
    assert_eq!(
        warnings(&run),
        [
            format!(
                "{rc}:1: `VAR=*** option provider-auto-update false` skipped: a variable assignment before it is applied only by a shell; this reader does not run the shell{counted}"
            ),
            format!(
                "{rc}:2: `command option provider-auto-update false` skipped: `command` runs it, which only a shell does; this reader does not run the shell{counted}"
            ),
        ]
    );
}

#[test]
fn a_key_written_with_equals_is_told_with_what_was_meant() {
    let (run, rc) = with_crushrc("# off\noption provider-auto-update=false\n");
    assert!(auto_update(&run));
    assert_eq!(
        warnings(&run),
        [format!(
            "{}:2: `option provider-auto-update=false`: there is no option \"provider-auto-update=false\", so it changes nothing, and Crush refuses to start on it; did you mean `option provider-auto-update false`?",
            rc.display()
        )]
    );
}

#[test]
fn unknown_option_keys_are_warnings_that_say_crush_would_not_start() {
    let (run, rc) = with_crushrc(
        "option provider_auto_update false\noption colour blue\noption default-providers false\n",
    );
    assert!(auto_update(&run));
    assert_eq!(
        run.json()["default_providers"]["value"],
        false,
        "the rest is read"
    );
    let rc = rc.display();
    assert_eq!(
        warnings(&run),
        [
            format!(
                "{rc}:1: `option provider_auto_update false`: there is no option \"provider_auto_update\", so it changes nothing, and Crush refuses to start on it; did you mean `option provider-auto-update …`?"
            ),
            format!(
                "{rc}:2: `option colour blue`: there is no option \"colour\", so it changes nothing, and Crush refuses to start on it"
            ),
        ]
    );
}

#[test]
fn exit_ends_the_file() {
    let (run, _) =
        with_crushrc("option default-providers true\nexit\noption provider-auto-update false\n");
    assert!(auto_update(&run), "Crush never runs the line after exit");
    assert!(warnings(&run).is_empty(), "{run:?}");
    let (run, rc) = with_crushrc("exit 1\n");
    assert_eq!(
        warnings(&run),
        [format!(
            "{}:1: `exit 1`: Crush refuses to start when its crushrc ends with a failure",
            rc.display()
        )]
    );
}

#[test]
fn a_here_document_body_is_data() {
    let (run, _) = with_crushrc(
        "cat > notes.txt <<'EOF'\noption provider-auto-update false\nEOF\noption default-providers true\n",
    );
    assert!(auto_update(&run), "{run:?}");
    assert!(warnings(&run).is_empty(), "{run:?}");
    // Unclosed, it is a syntax error, as in Crush.
    let home = Home::new();
    fs::write(home.path().join("crushrc"), "cat <<EOF\noption a 1\n").unwrap();
    home.run(&["providers"])
        .fails_with(&["line 1: unclosed here-document `EOF`"]);
}

#[test]
fn an_empty_value_is_a_bare_flag_and_extra_words_are_ignored() {
    let (run, _) =
        with_crushrc("option provider-auto-update false\noption provider-auto-update \"\"\n");
    assert!(auto_update(&run), "an empty value: true");
    let (run, rc) = with_crushrc("option provider-auto-update no thanks\n");
    assert!(!auto_update(&run), "the third word is the value");
    assert_eq!(
        warnings(&run),
        [format!(
            "{}:1: `option provider-auto-update no thanks`: the words after `no` are ignored, as Crush ignores them",
            rc.display()
        )]
    );
}

/// A loopback listener that counts the connections made to it (each is
/// answered 500), as a catalog server that must see none.
fn counting_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&count);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(b"HTTP/1.1 500 No\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (url, count)
}

/// A crushrc saved with Windows line endings reads as Crush's shell reads
/// it (`\r\n` is `\n`, a here-document closes on `EOF\r\n`, a backslash
/// before `\r\n` joins the lines): updates off, and no request, even
/// waited for. (The here-document's delimiter is quoted: an unquoted one's
/// body is expanded, which is told and counts as off by itself.)
#[test]
fn a_crushrc_with_windows_line_endings_turns_updates_off() {
    let (url, count) = counting_server();
    let home = Home::new();
    fs::write(
        home.path().join("crushrc"),
        "cat > notes.txt <<'EOF'\r\nnotes\r\nEOF\r\noption \\\r\n  provider-auto-update false\r\n",
    )
    .unwrap();
    let run = home.run_env(&["providers", "--wait"], &[("CATWALK_URL", &url)]);
    run.ok();
    assert!(run.stderr.is_empty(), "{run:?}");
    let run = home.run_env(
        &["providers", "--status", "--json"],
        &[("CATWALK_URL", &url)],
    );
    assert!(!auto_update(&run), "{run:?}");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// A value from a command substitution is only known to a shell: told
/// with its line, never dropped in silence, and since the substitution
/// runs commands, it counts as turning both keys off; `function f { … }` is a
/// function, as in bash, not an error; `! option …` runs the option.
#[test]
fn substitutions_functions_and_negations_are_read_as_crush_runs_them() {
    let (run, rc) = with_crushrc(
        "function setup {\n  option provider-auto-update false\n}\noption provider-auto-update $(echo false)\n! option default-providers false\n",
    );
    assert!(
        !auto_update(&run),
        "counted as off: Crush's shell may run them"
    );
    assert_eq!(run.json()["default_providers"]["value"], false, "{run:?}");
    let rc = rc.display();
    let counted = ", and Crush, which does, may turn provider-auto-update off there: counted as off, so no start-up request is made while this line stands";
    assert_eq!(
        warnings(&run),
        [
            format!(
                "{rc}:2: `option provider-auto-update false` skipped: inside a {{ }} group or function opened at line 1; this reader does not run the shell{counted}"
            ),
            format!(
                "{rc}:4: `option provider-auto-update $(echo false)` skipped: its value depends on a shell expansion ($ or `); this reader does not run the shell, and Crush, which does, may turn provider-auto-update and default-providers off there: counted as off, so no start-up request is made while this line stands"
            ),
        ]
    );
}

/// Issue 29 findings, C12: a command of Crush's crushrc mistyped is told,
/// naming the file, the line and the command meant; a command that is
/// far from any of them (a program the script runs) is not.
#[test]
fn a_mistyped_command_is_told() {
    let (run, rc) = with_crushrc("optoin provider-auto-update false\necho hello\nprovder add x\n");
    assert!(auto_update(&run));
    let rc = rc.display();
    assert_eq!(
        warnings(&run),
        [
            format!(
                "{rc}:1: `optoin provider-auto-update false` skipped: `optoin` is none of the commands Crush's crushrc knows; did you mean `option`?; this reader does not run the shell"
            ),
            format!(
                "{rc}:3: `provder add x` skipped: `provder` is none of the commands Crush's crushrc knows; did you mean `provider`?; this reader does not run the shell"
            ),
        ]
    );
}
