//! Every command line Crush's `update-providers` takes is taken: its
//! global flags (`-d/--debug`, `-D/--data-dir`, `-H/--host`, `-v` for the
//! version), `--source catwalk` and `--source=catwalk`, `""` as SOURCE;
//! `--source hyper` and `--source=hyper` (Hyper's provider: `hyper.rs`).

use std::fs;

use crate::common::*;
use wiremock::{MockServer, ResponseTemplate};

async fn catalog_server() -> MockServer {
    // A first fetch must keep half of the embedded snapshot (issue 25).
    serve_at(
        "/v2/providers",
        ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_source_flag_in_both_forms_and_an_empty_source() {
    let server = catalog_server().await;
    let uri = server.uri();
    let env = [("CATWALK_URL", uri.as_str())];
    for args in [
        &["update-providers", "--source=catwalk"][..],
        &["update-providers", "--source", "catwalk", "--dry-run"],
        &["update-providers", ""],
        &["update-providers", "", "--source=catwalk", "--check"],
    ] {
        let home = Home::new();
        let run = home.run_env(args, &env);
        assert!(
            run.code == Some(0) || (args.contains(&"--check") && run.code == Some(3)),
            "{args:?}: {run:?}"
        );
        assert!(
            run.stdout
                .contains(&format!("providers from {uri}/v2/providers")),
            "{args:?}: {run:?}"
        );
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    // Hyper's provider, in both forms: from HYPER_URL (here a closed
    // port), or a file (here none).
    let home = Home::new();
    let closed = closed_port_url();
    let run = home.run_env(
        &["update-providers", "--source=hyper"],
        &[("HYPER_URL", closed.as_str())],
    );
    run.fails_with(&[&format!("{closed}/api/v1/provider")]);
    let run = home.run(&["update-providers", "--source", "hyper", "x.json"]);
    run.fails_with(&["x.json: cannot read"]);
    assert!(!home.data_dir().join("hyper.json").exists());
    let run = home.run(&["update-providers", "--source=other"]);
    run.usage_error();
    assert!(
        run.stderr.contains("possible values: catwalk, hyper"),
        "{run:?}"
    );
}

#[test]
fn v_is_the_version_and_update_providers_v_is_verbose() {
    let home = Home::new();
    let version = home.run(&["--version"]);
    version.ok();
    for flag in ["-v", "-V"] {
        assert_eq!(home.run(&[flag]).stdout, version.stdout, "{flag}");
    }
    let (_dir, file) = temp_file("a.json", CATALOG_A.as_bytes());
    let file = file.to_str().unwrap();
    home.run(&["update-providers", "embedded", "-q"]).ok();
    let verbose = home.run(&[
        "update-providers",
        file,
        "--dry-run",
        "-v",
        "--allow-shrink",
    ]);
    verbose.ok();
    assert!(verbose.stdout.contains("  - provider "), "{verbose:?}");
    assert!(!verbose.stdout.contains("more changes"), "{verbose:?}");
}

/// `-d` says on stderr what was resolved and what is requested; stdout is
/// what it would be without it. `-H` is accepted, and said to do nothing.
#[tokio::test(flavor = "multi_thread")]
async fn debug_says_the_settings_and_the_requests() {
    let server = catalog_server().await;
    let uri = server.uri();
    let home = Home::new();
    let env = [("CATWALK_URL", uri.as_str())];
    let plain = home.run_env(&["providers", "--json", "--wait"], &env);
    let home = Home::new();
    let debug = home.run_env(
        &[
            "-d",
            "-H",
            "unix:///tmp/crush.sock",
            "providers",
            "--json",
            "--wait",
        ],
        &env,
    );
    debug.ok();
    assert_eq!(debug.stdout, plain.stdout);
    for line in [
        "debug: --host unix:///tmp/crush.sock: accepted for Crush's sake; it has no effect here",
        "debug: provider-auto-update: on (default)",
        &format!("debug: refresh at start-up: allowed, from {uri}/v2/providers"),
        &format!("debug: catalog URL: {uri}/v2/providers (CATWALK_URL={uri})"),
        "debug: proxy: none: no proxy variable is set for it",
        &format!("debug: GET {uri}/v2/providers: waited for; a new catalog"),
    ] {
        assert!(
            debug.stderr.lines().any(|l| l == line),
            "{line:?} in {debug:?}"
        );
    }
    let run = home.run_env(&["update-providers", "--debug", "--dry-run"], &env);
    run.ok();
    assert!(
        run.stderr.contains(&format!(
            "debug: SOURCE: {uri} (CATWALK_URL={uri})\ndebug: GET {uri}/v2/providers, then {uri}/v2/providers.minisig when a key is pinned; proxy: none: no proxy variable is set for it"
        )),
        "{run:?}"
    );
    let run = home.run_env(
        &["providers", "--status", "-d"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    run.ok();
    assert!(
        run.stderr
            .contains("debug: provider-auto-update: off (CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1)"),
        "{run:?}"
    );
}

/// `-D` names the data directory whose `crush.json` is the workspace
/// file, before or after the command, as Crush's persistent flags go.
#[test]
fn the_data_dir_flag_moves_the_workspace_file() {
    let home = Home::new();
    let data = home.path().join("custom-data");
    fs::create_dir_all(&data).unwrap();
    fs::write(
        data.join("crush.json"),
        r#"{"options": {"disable_provider_auto_update": true}}"#,
    )
    .unwrap();
    let data = data.to_str().unwrap();
    for args in [
        &["-D", data, "providers", "--status", "--json"][..],
        &["providers", "--status", "--json", "--data-dir", data],
    ] {
        let status = home.run(args).json();
        assert_eq!(status["provider_auto_update"]["value"], false, "{args:?}");
        assert_eq!(status["workspace"]["origin"], "-D/--data-dir");
    }
    let status = home.run(&["providers", "--status", "--json"]).json();
    assert_eq!(status["provider_auto_update"]["value"], true);
}

/// Completions work under any name the program is installed as: bash,
/// with the generated script sourced, completes `update-providers --` with
/// its options, `update-providers em` with `embedded`, and `prov` with the
/// commands, both as `crush` and as `crush-providers`.
#[cfg(unix)]
#[test]
fn bash_completes_under_any_installed_name() {
    let bin = tempfile::tempdir().unwrap();
    let home = Home::new();
    // Found on this PATH; the script's own PATH has the program alone (no
    // Crush to stand in front of).
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v bash"])
        .output()
        .unwrap();
    let bash = String::from_utf8(found.stdout).unwrap().trim().to_owned();
    assert!(!bash.is_empty(), "bash is needed");
    for name in ["crush", "crush-providers"] {
        let exe = bin.path().join(name);
        copy_program(std::path::Path::new(env!("CARGO_BIN_EXE_crush")), &exe);
        let script = format!(
            r#"source <({name} completion bash) || exit 1
spec=$(complete -p {name}); f=${{spec##*-F }}; f=${{f%% *}}
words() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=()
  "$f" "$1" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
  echo "${{COMPREPLY[*]}}"; }}
words {name} update-providers --
words {name} update-providers em
words {name} prov
words {name} completion ""
"#
        );
        let output = std::process::Command::new(&bash)
            .args(["-c", &script])
            .env_clear()
            .env("PATH", bin.path())
            .env("HOME", home.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{name}: {output:?}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 4, "{name}: {stdout}");
        for option in [
            "--dry-run",
            "--keep-current",
            "--allow-key-move",
            "--output",
        ] {
            assert!(
                lines[0].split(' ').any(|w| w == option),
                "{name}: {option}: {stdout}"
            );
        }
        assert_eq!(lines[1], "embedded", "{name}: {stdout}");
        assert_eq!(
            lines[2], "providers provider-models provider-dirs",
            "{name}: {stdout}"
        );
        assert!(
            lines[3].contains("bash") && lines[3].contains("zsh"),
            "{name}: {stdout}"
        );
    }
}

/// Issue 36 findings: no shell's completion offers the helper a start
/// runs in the background (`refresh-in-background`), which is no command
/// of a person's; the helper still runs.
#[test]
fn completion_never_offers_the_background_helper() {
    let home = Home::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = home.run(&["completion", shell]);
        run.ok();
        assert!(run.stdout.contains("update-providers"), "{shell}: {run:?}");
        assert!(
            !run.stdout.contains("refresh-in-background"),
            "{shell}: {run:?}"
        );
    }
    let help = home.run(&["--help"]);
    assert!(!help.stdout.contains("refresh-in-background"), "{help:?}");
}

/// `completion` without a shell names the shells; every example of every
/// `--help` fits 80 columns, and one that takes two lines ends its first
/// with a backslash, so that its first line pasted alone runs nothing.
#[test]
fn completion_lists_the_shells_and_help_fits_80_columns() {
    let home = Home::new();
    let run = home.run(&["completion"]);
    run.usage_error();
    assert!(
        run.stderr.contains("bash, elvish, fish, powershell or zsh"),
        "{run:?}"
    );
    for command in HELPED {
        let help = home.run(&[command, "--help"]);
        help.ok();
        help_fits_and_pastes("crush", command, &help.stdout);
    }
}

/// The commands whose `--help` has examples.
const HELPED: [&str; 5] = [
    "update-providers",
    "providers",
    "provider-models",
    "provider-dirs",
    "completion",
];

/// `help`, of `command` installed as `name`: each line within 80 columns,
/// each example a command a person can paste (a line that goes on ends
/// with a backslash and is indented under its first; none is cut by the
/// wrapping).
fn help_fits_and_pastes(name: &str, command: &str, help: &str) {
    for line in help.lines() {
        assert!(line.chars().count() <= 80, "{name} {command}: {line}");
    }
    let examples = help.split("Examples:").nth(1).unwrap_or_default();
    let lines: Vec<&str> = examples.lines().collect();
    for pair in lines.windows(2) {
        let goes_on = pair[1].starts_with("    ");
        assert_eq!(pair[0].ends_with('\\'), goes_on, "{name}: {pair:?}");
        let example = pair[1].starts_with(&format!("  {name} "))
            || pair[1].starts_with("  #")
            || pair[1].starts_with("  CRUSH_")
            || goes_on;
        assert!(
            example || pair[1].is_empty() || !pair[0].starts_with("  "),
            "{name} {command}: a line cut from its example: {pair:?}"
        );
    }
}

/// Issue 29 findings, W5: `--check` answers whether the cache holds the
/// catalog, which `--output` would not write: the two together are a
/// usage error, not an exit 3 for a cache that is up to date.
#[test]
fn check_with_output_is_a_usage_error() {
    let home = Home::new();
    home.run(&["update-providers", "-q", "embedded"]).ok();
    let out = home.path().join("x.json");
    let run = home.run(&[
        "update-providers",
        "embedded",
        "--check",
        "--output",
        out.to_str().unwrap(),
    ]);
    run.usage_error();
    assert!(run.stderr.contains("--output"), "{run:?}");
    assert!(!out.exists());
    home.run(&["update-providers", "embedded", "--check"]).ok();
}

/// Issue 29 findings, W7: a URL with a space before or after it is named
/// so, one message with the fix, whether it is the SOURCE or CATWALK_URL;
/// and the start-up says the same of CATWALK_URL (Crush, whose URL parser
/// refuses the space, makes no request with it either).
#[test]
fn a_stray_space_around_a_url_is_named() {
    let home = Home::new();
    let run = home.run(&["update-providers", " http://127.0.0.1:9/", "--dry-run"]);
    run.usage_error();
    assert!(
        run.stderr.contains(
            "\" http://127.0.0.1:9/\" starts with a space, which is no part of a URL: Go refuses it, so Crush sends no request; remove it: \"http://127.0.0.1:9/\""
        ) && !run.stderr.contains("scheme"),
        "{run:?}"
    );
    let run = home.run_env(
        &["update-providers", "--dry-run"],
        &[("CATWALK_URL", "http://127.0.0.1:9 ")],
    );
    run.usage_error();
    assert!(
        run.stderr
            .contains("CATWALK_URL: \"http://127.0.0.1:9 \" ends with a space, which is no part of a URL: Go refuses it, so Crush sends no request; remove it: \"http://127.0.0.1:9\""),
        "{run:?}"
    );
    let run = home.run_env(&["providers"], &[("CATWALK_URL", "http://127.0.0.1:9 ")]);
    run.ok();
    assert!(
        run.stderr.contains(
            "CATWALK_URL=\"http://127.0.0.1:9 \" ends with a space, which is no part of a URL: no refresh at start-up"
        ) && run.stderr.contains("remove it: CATWALK_URL=\"http://127.0.0.1:9\""),
        "{run:?}"
    );
}

/// Issue 29 findings, C6: with `--json`, a usage error (exit 2) prints
/// the same `{"error": …}` object on standard output as a failure does.
#[test]
fn json_usage_errors_are_json() {
    let home = Home::new();
    for (args, says) in [
        (&["update-providers", "ftp://x", "--json"][..], "ftp://"),
        (&["update-providers", "--bogus", "--json"][..], "--bogus"),
    ] {
        let run = home.run(args);
        run.usage_error();
        let error = &run.json()["error"];
        assert!(error["cause"].as_str().unwrap().contains(says), "{run:?}");
        assert!(
            error["hint"].as_str().unwrap().contains("--help"),
            "{run:?}"
        );
        assert!(run.stderr.contains(says), "{run:?}");
    }
}

/// Issue 29 findings, C4: under any installed name, `completion --help`
/// names the files that name's shells load, each example within 80
/// columns (one that goes on ends its first line with a backslash), and
/// a name with a dot is registered whole, not as the name before its dot.
#[test]
fn completion_is_for_the_name_installed() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    for name in ["crush-providers", "crush.new"] {
        let exe = bin.path().join(name);
        // Copied by another process: see `copy_program` (Text file busy).
        #[cfg(unix)]
        copy_program(std::path::Path::new(env!("CARGO_BIN_EXE_crush")), &exe);
        #[cfg(not(unix))]
        std::fs::copy(env!("CARGO_BIN_EXE_crush"), &exe).unwrap();
        let run = |args: &[&str]| {
            let output = std::process::Command::new(&exe)
                .args(args)
                .env_clear()
                .env("HOME", home.path())
                .env("PATH", bin.path())
                .output()
                .unwrap();
            assert!(output.status.success(), "{name}: {output:?}");
            String::from_utf8(output.stdout).unwrap()
        };
        let help = run(&["completion", "--help"]);
        let examples = help.split("Examples:").nth(1).unwrap_or_default();
        assert!(
            examples.contains(&format!("completions/{name}\n"))
                && examples.contains(&format!("/_{name}\""))
                && examples.contains(&format!("completions/{name}.fish")),
            "{name}: {help}"
        );
        // Every command's help under a longer name too.
        for command in HELPED {
            help_fits_and_pastes(name, command, &run(&[command, "--help"]));
        }
        let script = run(&["completion", "bash"]);
        assert!(
            script
                .lines()
                .any(|l| l.trim_start().starts_with("complete -F ")
                    && l.ends_with(&format!(" {name}"))),
            "{name}: {script}"
        );
    }
}

/// A `--timeout` that is no bound says so, negative ones too (not clap's
/// tip to pass `-1` after `--`, which would make it the SOURCE).
#[test]
fn a_timeout_that_is_no_bound_is_named() {
    let home = Home::new();
    for value in ["-1", "0", "99999999999999999999"] {
        let run = home.run(&["update-providers", "--timeout", value, "embedded"]);
        run.usage_error();
        assert!(
            run.stderr.contains(&format!(
                "\"{value}\" is not a positive number of seconds below 1000000000"
            )),
            "{run:?}"
        );
        assert!(!run.stderr.contains("tip:"), "{run:?}");
    }
    assert!(home.cache().is_none());
}

/// Installed under a name whose fourth byte from the end falls inside a
/// character (`éabc`), the program names itself so: no panic while it
/// looks for an `.exe` to drop.
#[test]
fn any_installed_name_is_read_whole() {
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("éabc");
    #[cfg(unix)]
    copy_program(std::path::Path::new(env!("CARGO_BIN_EXE_crush")), &exe);
    #[cfg(not(unix))]
    std::fs::copy(env!("CARGO_BIN_EXE_crush"), &exe).unwrap();
    let output = std::process::Command::new(&exe)
        .arg("--version")
        .env_clear()
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stdout.starts_with("éabc ".as_bytes()), "{output:?}");
}

/// Issue 35, item 9: the pflag and cobra forms Crush's `update-providers`
/// takes are taken here too: a bool flag's `--debug=false`, `-d=true`
/// and `-dd` (while `--debug false` leaves `false` a SOURCE), the last of
/// a repeated flag, the first of several SOURCEs, and the hidden
/// persistent `--channels` (a string slice: repeatable, comma-separated).
#[test]
fn crushs_pflag_and_cobra_forms_are_taken() {
    let debugged = |run: &Run| run.stderr.lines().any(|l| l.starts_with("debug: "));
    let embedded = crush_providers::catalog::embedded::catalog_bytes();
    for (args, debug) in [
        (
            &["update-providers", "embedded", "--debug=false"][..],
            false,
        ),
        (&["update-providers", "embedded", "--debug=true"], true),
        (&["update-providers", "embedded", "--debug=1"], true),
        (&["update-providers", "embedded", "-d=true"], true),
        (&["update-providers", "embedded", "-d=F"], false),
        (&["update-providers", "-dd", "embedded"], true),
        (&["-dd", "update-providers", "embedded"], true),
        (&["--debug=false", "update-providers", "embedded"], false),
        // The last wins.
        (
            &["update-providers", "-d", "embedded", "--debug=false"],
            false,
        ),
        (
            &["update-providers", "--debug=false", "embedded", "-d"],
            true,
        ),
    ] {
        let home = Home::new();
        let run = home.run(args);
        run.ok();
        assert_eq!(debugged(&run), debug, "{args:?}: {run:?}");
        assert_eq!(home.cache().unwrap(), embedded, "{args:?}");
    }
    // `--debug false` is the flag, then a SOURCE: a file `false`.
    let home = Home::new();
    let run = home.run(&["update-providers", "--debug", "false"]);
    run.fails_with(&["false: cannot read"]);
    assert!(debugged(&run), "{run:?}");
    for args in [
        &["update-providers", "embedded", "--debug=maybe"][..],
        &["update-providers", "embedded", "--debug="],
        &["update-providers", "embedded", "-d=yes"],
    ] {
        home.run(args).usage_error();
    }
    assert_eq!(home.cache(), None);

    // A repeated --source: the last wins.
    let (_dir, hyper) = temp_file(
        "h.json",
        br#"{"id": "hyper", "name": "Hyper", "type": "hyper", "api_endpoint": "https://hyper.charm.land/api/v1/fantasy", "models": [{"id": "m", "name": "M"}]}"#,
    );
    let hyper = hyper.to_str().unwrap();
    let home = Home::new();
    home.run(&[
        "update-providers",
        "--source",
        "hyper",
        "--source=catwalk",
        "embedded",
    ])
    .ok();
    assert_eq!(home.cache().unwrap(), embedded);
    assert!(!home.data_dir().join("hyper.json").exists());
    home.run(&[
        "update-providers",
        "--source=catwalk",
        hyper,
        "--source",
        "hyper",
    ])
    .ok();
    assert!(home.data_dir().join("hyper.json").exists());

    // Several SOURCEs: the first is read, the others said to be unused.
    let home = Home::new();
    let run = home.run(&[
        "update-providers",
        "embedded",
        "extra.json",
        "https://x.example",
    ]);
    run.ok();
    assert_eq!(home.cache().unwrap(), embedded);
    assert!(
        run.stderr.contains("extra.json https://x.example")
            && run.stderr.contains("only the first SOURCE is read"),
        "{run:?}"
    );
    let run = home.run(&["update-providers", "missing.json", "embedded"]);
    run.fails_with(&["missing.json"]);

    // The hidden --channels, before or after the command, in each form.
    for args in [
        &["update-providers", "--channels", "srv:webhook", "embedded"][..],
        &[
            "update-providers",
            "embedded",
            "--channels=a:b,c:d",
            "--channels",
            "e:f",
        ],
        &["--channels", "srv:webhook", "update-providers", "embedded"],
        &["--channels=", "update-providers", "embedded"],
    ] {
        let home = Home::new();
        let run = home.run(args);
        run.ok();
        assert_eq!(home.cache().unwrap(), embedded, "{args:?}");
        assert!(!run.stderr.contains("channels"), "{args:?}: {run:?}");
    }
    let home = Home::new();
    let run = home.run(&["-d", "update-providers", "embedded", "--channels=a:b,c:d"]);
    run.ok();
    assert!(
        run.stderr.contains(
            "debug: --channels a:b,c:d: accepted for Crush's sake; it has no effect here"
        ),
        "{run:?}"
    );
    assert!(
        !home
            .run(&["update-providers", "--help"])
            .stdout
            .contains("channels")
    );
}
