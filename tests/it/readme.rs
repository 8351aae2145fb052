//! Every example in the README and in docs/REFERENCE.md runs as written:
//! each ```sh block (other blocks, such as ```text, are only shown), as one
//! bash script (`set -e`, `pipefail`), with the built binary as `crush` on
//! the PATH, a HOME of its own (once more with `XDG_CONFIG_HOME` and
//! `XDG_DATA_HOME` elsewhere, as some readers have them), and the hosts it
//! names (Catwalk,
//! example.com, mirror.corp) served on loopback by a static server that
//! serves the block's own `srv/` folder, and the real catalog at any
//! `…/v2/providers` it lacks.
//!
//! Two kinds of lines are not run as written: `cargo run --release -- ARGS`
//! runs as `crush ARGS` with the binary this test built (the release build
//! itself is the first README command, which CI does not repeat), and other
//! `cargo` lines (building, installing, `cargo test` itself) are skipped.
//! A block that needs a program this machine lacks (minisign, jq, curl)
//! says so among the tests' results and is skipped; under CI, which
//! installs them (`.ci/run`), it fails instead.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The ```sh blocks of the README, then of the reference it points to.
fn sh_blocks() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = ["README.md", "docs/REFERENCE.md"]
        .map(|file| std::fs::read_to_string(root.join(file)).unwrap())
        .join("\n");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Hyper's provider as the static server serves it.
const HYPER: &str = r#"{"id":"hyper","name":"Charm Hyper","type":"hyper","api_endpoint":"https://hyper.charm.land/api/v1/fantasy","models":[{"id":"m","name":"M"}]}"#;

/// A static server rooted at `root/srv`: a file there, else the real
/// catalog for any path ending in `/v2/providers` (and a Hyper provider
/// for `/api/v1/provider`), else 404.
fn static_server(root: PathBuf) -> String {
    keep_alive_server(move |path| {
        let file = root.join("srv").join(path.trim_start_matches('/'));
        if file.is_file() {
            std::fs::read(&file).ok()
        } else if path.ends_with("/api/v1/provider") {
            Some(HYPER.as_bytes().to_vec())
        } else {
            path.ends_with("/v2/providers")
                .then(|| crush_providers::catalog::embedded::catalog_bytes().to_vec())
        }
    })
    .0
}

/// The block as this test runs it, for the server at `url`.
fn script(block: &str, url: &str) -> String {
    let mut script = String::from("set -eo pipefail\n");
    for line in block.lines() {
        let line = match line.strip_prefix("cargo run --release -- ") {
            Some(args) => format!("crush {args}"),
            None if line.starts_with("cargo ") => continue,
            None => line.to_owned(),
        };
        let line = [
            "https://catwalk.charm.land",
            "https://example.com",
            "https://mirror.corp",
        ]
        .iter()
        .fold(line, |line, host| line.replace(host, url));
        script.push_str(&line);
        script.push('\n');
    }
    script
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_readme_example_runs_as_written() {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crush"), bin.path().join("crush")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let blocks = sh_blocks();
    assert!(blocks.len() >= 6, "{} blocks", blocks.len());
    let mut ran = 0;
    for block in &blocks {
        let missing: Vec<&str> = ["minisign", "jq", "curl"]
            .into_iter()
            .filter(|p| block.contains(&format!("{p} ")) && !have(p))
            .collect();
        if !missing.is_empty() {
            for program in missing {
                let first = block.lines().next().unwrap_or_default();
                skip_without(program, &format!("the README block `{first}` …"));
            }
            continue;
        }
        // As written, for a reader whose XDG folders are elsewhere, and
        // for one whose Crush configuration folder is CRUSH_GLOBAL_CONFIG
        // (issue 29 findings, C11).
        for (xdg, global) in [(false, false), (true, false), (false, true)] {
            let home = Home::new();
            let work = tempfile::tempdir().unwrap();
            let url = static_server(work.path().to_owned());
            let script = script(block, &url);
            let mut command = Command::new("bash");
            command
                .args(["-c", &script])
                .env_clear()
                .env("PATH", &path)
                .env("HOME", home.path())
                .env("CATWALK_URL", &url)
                .current_dir(work.path())
                .stdin(std::process::Stdio::null());
            if xdg {
                command
                    .env("XDG_CONFIG_HOME", home.path().join("xdg/config"))
                    .env("XDG_DATA_HOME", home.path().join("xdg/data"));
            }
            if global {
                command.env("CRUSH_GLOBAL_CONFIG", home.path().join("global"));
            }
            let output = command.output().unwrap();
            assert!(
                output.status.success(),
                "a README example failed (XDG folders set: {xdg}, CRUSH_GLOBAL_CONFIG set: {global}):\n{script}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        ran += 1;
    }
    eprintln!("{ran} of {} README blocks ran", blocks.len());
}
