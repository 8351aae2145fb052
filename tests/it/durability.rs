//! Durability, traced in the real binary: every rename that publishes a
//! catalog (the cache, `--output`, the start-up refresh) is preceded by a
//! flush of the new file and followed by a flush of its folder, so that a
//! power cut after success cannot bring the previous catalog back. Uses
//! strace; where it is missing the tests say so among the results and are
//! skipped (under CI, which installs it, they fail), and where tracing is
//! not permitted they say so and are skipped.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::common::*;

/// The file-system calls of `cmd` that matter here, one per line, each fd
/// shown with its path (`fsync(3</path/to/dir>)`); `None` when strace
/// cannot run here.
fn trace(cmd: &Command) -> Option<(Run, String)> {
    let log = tempfile::NamedTempFile::new().unwrap();
    // Found on the tests' own PATH: the command's holds git alone.
    let Some(strace) = on_path("strace") else {
        skip_without("strace", "the trace of the flushes");
        return None;
    };
    let mut traced = Command::new(strace);
    traced
        .args(["-f", "-y", "-qq", "-o"])
        .arg(log.path())
        .args(["-e", "trace=rename,renameat,renameat2,fsync,fdatasync"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(cmd.get_current_dir().unwrap());
    let output = match traced.output() {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            skip_without("strace", "the trace of the flushes");
            return None;
        }
        Err(e) => panic!("strace: {e}"),
    };
    let text = std::fs::read_to_string(log.path()).unwrap_or_default();
    if !text.contains("rename") {
        // Tracing is a permission (ptrace) rather than a program: said, but
        // no failure under CI.
        skip_note(&format!(
            "strace cannot trace here, skipped the trace of the flushes: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
        return None;
    }
    Some((Run::from(output), text))
}

/// Asserts that `target` was flushed, renamed into place, and that its
/// folder was flushed after the rename.
#[track_caller]
fn assert_published_durably(trace: &str, target: &Path) {
    let folder = target.parent().unwrap().canonicalize().unwrap();
    let name = target.file_name().unwrap().to_str().unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let renamed = lines
        .iter()
        .position(|l| l.contains("rename") && l.contains(&format!("/{name}\"")))
        .unwrap_or_else(|| panic!("no rename to {name}:\n{trace}"));
    let temp_flushed = lines[..renamed]
        .iter()
        .any(|l| l.contains("fsync(") && l.contains(&format!("/.{name}.")));
    assert!(temp_flushed, "{name} renamed unflushed:\n{trace}");
    let folder_flushed = lines[renamed..]
        .iter()
        .any(|l| l.contains("fsync(") && l.contains(&format!("<{}>)", folder.display())));
    assert!(
        folder_flushed,
        "no flush of {} after the rename:\n{trace}",
        folder.display()
    );
}

#[test]
fn update_flushes_the_cache_folder_after_the_rename() {
    let home = Home::new();
    let (_dir, file) = temp_file("a.json", CATALOG_A.as_bytes());
    let update = home.crush(&["update-providers", file.to_str().unwrap(), "--allow-shrink"]);
    let Some((run, trace)) = trace(&update) else {
        return;
    };
    run.ok();
    assert_published_durably(&trace, &home.cache_file());
}

#[test]
fn output_flushes_its_folder_after_the_rename() {
    let home = Home::new();
    let (_dir, file) = temp_file("a.json", CATALOG_A.as_bytes());
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("mirror.json");
    let cmd = home.crush(&[
        "update-providers",
        file.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    let Some((run, trace)) = trace(&cmd) else {
        return;
    };
    run.ok();
    assert_published_durably(&trace, &out);
}

#[test]
fn a_start_up_refresh_flushes_the_cache_folder_after_the_rename() {
    let server = raw_server(|s| {
        let body = embedded_and_gamma().as_bytes();
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(body);
    });
    let home = Home::new();
    let mut cmd = home.crush(&["providers"]);
    cmd.env("CATWALK_URL", &server);
    let Some((run, trace)) = trace(&cmd) else {
        return;
    };
    run.ok();
    assert_eq!(home.cache().unwrap(), embedded_and_gamma().as_bytes());
    assert_published_durably(&trace, &home.cache_file());
}
