//! Fault tests: the cache survives kill -9 and racing processes, start-up
//! survives a broken environment, and hostile servers are refused within the
//! timeout and with bounded memory. Loopback only; bounded in time and count.

use std::fs;
#[cfg(unix)]
use std::io::Read;
use std::io::Write;
#[cfg(unix)]
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::synthetic;

/// A small xorshift generator: random enough for kill delays, no dependency.
#[cfg(unix)]
struct Rng(u64);

#[cfg(unix)]
impl Rng {
    fn new() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        eprintln!("rng seed {seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Writes each catalog to `<i>.json` in a fresh temporary folder.
fn write_catalogs(catalogs: &[String]) -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let files = catalogs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let path = dir.path().join(format!("{i}.json"));
            fs::write(&path, c).unwrap();
            path
        })
        .collect();
    (dir, files)
}

/// `crush providers` (without refreshing) as (id, model count) rows.
#[cfg(unix)]
fn listed(home: &Home) -> Vec<(String, usize)> {
    let run = home.run_env(
        &["providers"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    run.ok();
    // One provider a line, its fields separated by tabs.
    run.stdout
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            (cells[0].to_owned(), cells[cells.len() - 1].parse().unwrap())
        })
        .collect()
}

#[cfg(unix)]
fn expected_listing(catalog: &str) -> Vec<(String, usize)> {
    let value: serde_json::Value = serde_json::from_str(catalog).unwrap();
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let models = p["models"].as_array().map_or(0, Vec::len);
            (p["id"].as_str().unwrap().to_owned(), models)
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn kill_9_at_any_moment_leaves_one_whole_catalog() {
    let home = Home::new();
    let catalogs = [
        synthetic::catalog(600_000, 1),
        synthetic::catalog(500_000, 2),
    ];
    let (_dir, files) = write_catalogs(&catalogs);
    home.run(&[
        "update-providers",
        files[0].to_str().unwrap(),
        "--allow-shrink",
    ])
    .ok();
    let mut rng = Rng::new();
    let mut killed_before_exit = 0;
    for round in 0..60 {
        let file = &files[round % 2];
        let mut child = home
            .crush(&["update-providers", file.to_str().unwrap(), "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(40_000)));
        if child.try_wait().unwrap().is_none() {
            killed_before_exit += 1;
        }
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let cache = String::from_utf8(home.cache().expect("the cache never disappears")).unwrap();
        assert!(
            cache == catalogs[0] || cache == catalogs[1],
            "round {round}: the cache is not one of the two catalogs"
        );
        // The state may be from either run: listing must still
        // describe the catalog that is there.
        assert_eq!(
            listed(&home),
            expected_listing(&cache),
            "round {round}: the listing does not match the cache"
        );
    }
    eprintln!("{killed_before_exit} of 60 runs were killed before they finished");
    assert!(
        killed_before_exit >= 10,
        "the kills should land while the process runs"
    );
    home.run(&["update-providers", files[1].to_str().unwrap()])
        .ok();
    assert_eq!(home.data_entries(), CACHE_FILES);
    assert_eq!(home.cache().unwrap(), catalogs[1].as_bytes());
}

#[test]
fn racing_writers_and_readers_always_see_a_whole_catalog() {
    let home = Home::new();
    let catalogs = [
        synthetic::catalog(200_000, 3),
        synthetic::catalog(250_000, 4),
    ];
    let (_dir, files) = write_catalogs(&catalogs);
    let files: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    home.run(&["update-providers", files[0], "--allow-shrink"])
        .ok();
    std::thread::scope(|scope| {
        for writer in 0..3 {
            let (home, files) = (&home, &files);
            scope.spawn(move || {
                for round in 0..12 {
                    let run =
                        home.run(&["update-providers", files[(writer + round) % 2], "--quiet"]);
                    assert_eq!(run.code, Some(0), "writer {writer} round {round}: {run:?}");
                }
            });
        }
        for reader in 0..3 {
            let (home, catalogs) = (&home, &catalogs);
            scope.spawn(move || {
                for round in 0..20 {
                    let run = home.run_env(
                        &["providers", "--json"],
                        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
                    );
                    assert_eq!(run.code, Some(0), "reader {reader}: {run:?}");
                    assert!(
                        run.stderr.is_empty(),
                        "reader {reader} round {round}: {}",
                        run.stderr
                    );
                    assert!(
                        run.stdout == catalogs[0] || run.stdout == catalogs[1],
                        "reader {reader} round {round} saw a torn catalog"
                    );
                }
            });
        }
    });
    assert_eq!(home.data_entries(), CACHE_FILES);
}

/// A plain 200 with the embedded catalog and gamma, for `raw_server`.
fn answer_embedded_and_gamma(s: &mut std::net::TcpStream) {
    let body = embedded_and_gamma().as_bytes();
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(body);
}

/// A start that waits for the catalog gets it even where it cannot be
/// saved, told why; one that does not wait gets the embedded snapshot.
#[test]
fn start_up_with_an_unwritable_data_folder_still_gets_the_new_catalog() {
    let server = raw_server(answer_embedded_and_gamma);
    let home = Home::new();
    fs::create_dir_all(home.path().join(".local/share")).unwrap();
    fs::write(home.path().join(".local/share/crush"), b"in the way").unwrap();
    let run = home.run_env(&["providers", "--json"], &[("CATWALK_URL", &server)]);
    run.ok();
    assert_eq!(
        run.stdout.as_bytes(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    let run = home.run_env(
        &["providers", "--json", "--wait"],
        &[("CATWALK_URL", &server)],
    );
    run.ok();
    assert_eq!(run.stdout, embedded_and_gamma());
    assert!(
        run.stderr.contains("could not save the refreshed catalog")
            && run.stderr.contains("cannot create the data folder"),
        "{run:?}"
    );
}

/// Makes a folder unwritable even for root (`chattr +i`), or with
/// permissions for other users; undone on drop. `None` when neither works.
struct ReadOnly(std::path::PathBuf, bool);

impl ReadOnly {
    fn new(dir: &std::path::Path) -> Option<ReadOnly> {
        let chattr = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .status();
        if chattr.is_ok_and(|s| s.success()) {
            return Some(ReadOnly(dir.to_owned(), true));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).ok()?;
            if fs::write(dir.join(".probe"), b"").is_err() {
                return Some(ReadOnly(dir.to_owned(), false));
            }
            let _ = fs::remove_file(dir.join(".probe"));
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).ok()?;
        }
        None
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn read_only_cache_folder_is_a_clear_error_and_start_up_still_works() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let Some(_guard) = ReadOnly::new(&home.data_dir()) else {
        skip_note("cannot make a folder read-only here (no chattr, and root ignores permissions)");
        return;
    };
    // CATALOG_B moves beta's key: allowed, the write is what fails.
    let run = home.run_stdin(
        &["update-providers", "-", "--allow-key-move"],
        CATALOG_B.as_bytes(),
    );
    run.fails_with(&[
        "standard input",
        "cannot create a temporary file in",
        "permissions",
    ]);
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    let run = home.run_env(
        &["providers", "--json"],
        &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
    );
    run.ok();
    assert_eq!(run.stdout, CATALOG_A);
}

/// A real full disk: a 256 KiB tmpfs in a private mount namespace. The
/// check runs inside it, since the tmpfs vanishes with the namespace.
#[cfg(target_os = "linux")]
#[test]
fn full_disk_leaves_the_cache_and_no_temp_file() {
    let home = Home::new();
    let data = home.path().join("data");
    fs::create_dir_all(&data).unwrap();
    let (_dir, big) = temp_file("big.json", synthetic::catalog(400_000, 5).as_bytes());
    let (_dir2, small) = temp_file("small.json", CATALOG_A.as_bytes());
    let exe = env!("CARGO_BIN_EXE_crush");
    let script = format!(
        "mount -t tmpfs -o size=256k tmpfs '{data}' || exit 77
         export XDG_DATA_HOME='{data}'
         '{exe}' update-providers '{small}' -q --allow-shrink || exit 78
         '{exe}' update-providers '{big}' --allow-shrink; echo \"exit=$?\"
         cmp '{data}/crush/providers.json' '{small}' && echo untouched
         ls -A '{data}/crush'",
        data = data.display(),
        small = small.display(),
        big = big.display()
    );
    let output = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .env_clear()
        .env("HOME", home.path())
        .output();
    let output = match output {
        Ok(o) if o.status.code() != Some(77) && o.status.code() != Some(1) => o,
        _ => {
            skip_note("no private mount namespace with a tmpfs here");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("exit=1"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("error: ") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(stdout.contains("untouched"), "{stdout}");
    let entries: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "untouched")
        .skip(1)
        .collect();
    assert_eq!(entries, CACHE_FILES, "{stdout}");
}

/// The same promise without privileges: a file-size limit (SIGXFSZ ignored,
/// so writes fail with EFBIG as on a full quota).
#[cfg(unix)]
#[test]
fn file_size_limit_leaves_the_cache_and_no_temp_file() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let (_dir, big) = temp_file("big.json", synthetic::catalog(400_000, 5).as_bytes());
    let exe = env!("CARGO_BIN_EXE_crush");
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "trap '' XFSZ; ulimit -f 64; exec '{exe}' update-providers '{}' --allow-shrink",
                big.display()
            ),
        ])
        .env_clear()
        .env("HOME", home.path())
        .output()
        .unwrap();
    let run = Run::from(output);
    run.fails_with(&["cannot write", "File too large"]);
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    assert_eq!(home.data_entries(), CACHE_FILES);
}

/// With too few descriptors to spare for the network runtime (`ulimit -n`
/// 6 or 7 once made tokio's signal driver panic, exit 101), a download is
/// a failure in words, the cache untouched.
#[cfg(unix)]
#[test]
fn too_few_open_files_for_a_download_is_a_failure_not_a_panic() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let url = closed_port_url();
    let exe = env!("CARGO_BIN_EXE_crush");
    for limit in 5..=8 {
        let output = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("ulimit -n {limit}; exec '{exe}' update-providers '{url}'"),
            ])
            .env_clear()
            .env("HOME", home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let run = Run::from(output);
        assert!(
            !run.stderr.contains("panicked"),
            "ulimit -n {limit}: {run:#?}"
        );
        run.fails_with(&["cannot start the network runtime", "ulimit -n"]);
        assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
    }
}

#[test]
fn corrupt_or_foreign_state_files_are_ignored() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    for state in [
        &b"{not json"[..],
        b"",
        br#"{"sha256":"deadbeef","etag":"\"x\"","source":"s","fetched_at":0}"#,
        &[0xff; 64],
    ] {
        fs::write(home.state_file(), state).unwrap();
        let run = home.run_env(&["providers", "--status", "--json"], &[]);
        run.ok();
        let status = run.json();
        assert_eq!(
            status["etag"],
            catwalk_etag(CATALOG_A.as_bytes()),
            "the SHA form replaces a state that does not match"
        );
        assert_eq!(status["source"], serde_json::Value::Null);
        let run = home.run_env(
            &["providers", "--json"],
            &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
        );
        assert_eq!(run.stdout, CATALOG_A);
    }
}

#[test]
fn garbage_cache_gives_a_warning_and_the_embedded_catalog() {
    let home = Home::new();
    for garbage in [
        &b"\x00\x01\x02"[..],
        b"[",
        b"[]",
        b"null",
        b"{\"a\":1}",
        &[0xff; 1000],
    ] {
        home.set_cache(garbage);
        let run = home.run_env(
            &["providers", "-d"],
            &[("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")],
        );
        run.ok();
        // The embedded snapshot, now in the cache in its place.
        assert!(
            run.provenance().starts_with("the embedded snapshot")
                && run
                    .provenance()
                    .ends_with("installed in the cache just now"),
            "{run:?}"
        );
        assert!(run.stderr.contains("is not valid"), "{run:?}");
        // What Crush would read is only ever what was reviewed: the
        // embedded snapshot goes in its place, and nothing is lost.
        let aside = home.data_dir().join("providers.foreign.json");
        assert!(
            words(&run.stderr).contains(&format!("put aside as {}", aside.display())),
            "{run:?}"
        );
        assert_eq!(
            home.cache().unwrap(),
            crush_providers::catalog::embedded::catalog_bytes()
        );
        assert_eq!(fs::read(&aside).unwrap(), garbage);
    }
}

#[test]
fn ids_with_control_characters_or_over_256_bytes_are_refused() {
    let home = Home::new();
    let long = "x".repeat(257);
    for json in [
        r#"[{"id":"evil\u001b[2J","name":"A"}]"#.to_string(),
        r#"[{"id":"a","name":"A","models":[{"id":"m\nx"}]}]"#.to_string(),
        format!(r#"[{{"id":"{long}","name":"A"}}]"#),
        format!(r#"[{{"id":"a","name":"A","models":[{{"id":"{long}"}}]}}]"#),
    ] {
        let run = home.run_stdin(&["update-providers", "-"], json.as_bytes());
        run.fails_with(&["not a valid catalog"]);
        assert!(
            run.stderr.contains("control character")
                || run.stderr.contains("over the limit of 256"),
            "{run:?}"
        );
        assert!(
            !run.stderr.contains('\u{1b}'),
            "the error must not carry the escape through"
        );
    }
    assert!(home.cache().is_none());
}

#[test]
fn oversized_headers_are_refused() {
    let url = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
        let line = format!("X-Filler: {}\r\n", "a".repeat(8000));
        for _ in 0..200 {
            if s.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    let home = Home::new();
    let start = Instant::now();
    // A bound far beyond the refusal (tens of milliseconds), so that a
    // loaded machine cannot take one for the other.
    let run = home.run(&["update-providers", &url, "--timeout", "60"]);
    run.fails_with(&["/v2/providers"]);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "refused before the timeout"
    );
    assert!(home.cache().is_none());
}

/// Peak memory of one run of the binary, from `wait4` on that very process.
///
/// Measured from a fresh, small process: this test binary run again for
/// [`memory_probe`] alone. A child started by `posix_spawn` shares its
/// parent's memory until it execs, and Linux counts the parent's peak
/// into the child's at that moment; this process holds whatever other
/// tests allocated.
#[cfg(target_os = "linux")]
fn run_measuring_memory(home: &Home, args: &[&str]) -> (Run, u64) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "faults::memory_probe",
            "--exact",
            "--ignored",
            "--nocapture",
            "-q",
        ])
        .env("CRUSH_TEST_PROBE_HOME", home.path())
        .env(
            "CRUSH_TEST_PROBE_ARGS",
            serde_json::to_string(args).unwrap(),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PROBE "))
        .unwrap_or_else(|| panic!("the probe said nothing: {stdout}"));
    let probe: serde_json::Value = serde_json::from_str(line).unwrap();
    let text = |key: &str| probe[key].as_str().unwrap().to_owned();
    (
        Run {
            code: probe["code"].as_i64().map(|c| c as i32),
            stdout: text("stdout"),
            stderr: text("stderr"),
        },
        probe["peak"].as_u64().unwrap(),
    )
}

/// Run by [`run_measuring_memory`] in a process of its own: runs the binary
/// with the arguments it is given and prints what it did and its peak.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "a helper of run_measuring_memory, run in a process of its own"]
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot do
fn memory_probe() {
    let (Some(home), Some(args)) = (
        std::env::var_os("CRUSH_TEST_PROBE_HOME"),
        std::env::var("CRUSH_TEST_PROBE_ARGS").ok(),
    ) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(&args).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = crush_in(std::path::Path::new(&home), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let _ = out.read_to_string(&mut stdout);
    let stderr = reader.join().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; status and usage are valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let probe = serde_json::json!({
        "code": code,
        "stdout": stdout,
        "stderr": stderr,
        "peak": usage.ru_maxrss as u64 * 1024,
    });
    println!("PROBE {probe}");
}

#[cfg(target_os = "linux")]
#[test]
fn hostile_bodies_are_cut_with_bounded_memory() {
    const CAP: u64 = 64 * 1024 * 1024;
    const SLACK: u64 = 40 * 1024 * 1024;
    let endless = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[");
        let chunk = vec![b' '; 1 << 20];
        while s.write_all(&chunk).is_ok() {}
    });
    let bomb = raw_server(|s| {
        // 1 GiB of spaces, gzip-compressed on the fly, sent chunked.
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let zeros = vec![b' '; 1 << 20];
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        for _ in 0..1024 {
            encoder.write_all(&zeros).unwrap();
            let part = std::mem::take(encoder.get_mut());
            if !part.is_empty()
                && s.write_all(format!("{:x}\r\n", part.len()).as_bytes())
                    .is_err()
            {
                return;
            }
            if !part.is_empty() && (s.write_all(&part).is_err() || s.write_all(b"\r\n").is_err()) {
                return;
            }
        }
    });
    for url in [endless, bomb] {
        let home = Home::new();
        let (run, peak) =
            run_measuring_memory(&home, &["update-providers", &url, "--timeout", "30"]);
        run.fails_with(&["larger than the limit of 64 MiB"]);
        eprintln!("{url}: peak {} MiB", peak >> 20);
        assert!(
            peak <= CAP + SLACK,
            "peak memory {} MiB is over the cap plus {} MiB",
            peak >> 20,
            SLACK >> 20
        );
        assert!(home.cache().is_none());
    }
}

/// A writer stopped while holding the cache lock (say, a suspended
/// `update-providers`) must not hang start-up. With a valid cache there is
/// nothing to wait for: the cache is handed over at once, and the
/// background refresh gives up on the lock by itself. Without one, the
/// embedded snapshot is handed over at once; a start that waits for the
/// first fetch waits briefly for the lock, then uses the fresh catalog
/// without saving it.
#[cfg(unix)]
#[test]
fn a_held_cache_lock_does_not_hang_start_up() {
    let server = raw_server(answer_embedded_and_gamma);
    let home = Home::new();
    fs::create_dir_all(home.data_dir()).unwrap();
    let holder = fs::File::open(home.data_dir()).unwrap();
    holder.lock().unwrap();
    let start = Instant::now();
    let run = home.run_env(&["providers", "--json"], &[("CATWALK_URL", &server)]);
    run.ok();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(
        run.stdout.as_bytes(),
        crush_providers::catalog::embedded::catalog_bytes()
    );
    let start = Instant::now();
    let run = home.run_env(
        &["providers", "--json", "--wait"],
        &[("CATWALK_URL", &server)],
    );
    run.ok();
    // The fetch and the 2 s wait for the lock; never the 30 s an update
    // waits, nor forever.
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(run.stdout, embedded_and_gamma());
    assert!(
        run.stderr.contains("could not save the refreshed catalog")
            && run.stderr.contains("cannot lock the data folder"),
        "{run:?}"
    );
    assert!(home.cache().is_none());

    home.set_cache(CATALOG_A.as_bytes());
    let start = Instant::now();
    let run = home.run_env(&["providers", "--json"], &[("CATWALK_URL", &server)]);
    run.ok();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(run.stdout, CATALOG_A);
    drop(holder);
}

/// What the Rust runtime would do before `main`, the binary does itself
/// (src/main.rs): a reader that goes away is not the death of the process,
/// and an update run with its standard streams closed still writes exactly
/// its bytes.
#[cfg(unix)]
#[test]
fn closed_pipes_and_closed_standard_streams_are_survived() {
    use std::os::unix::process::CommandExt;
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    // `crush providers --json | true`: the reader is gone before the write.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = home
        .crush(&["providers", "--json"])
        .env("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1")
        .stdout(writer)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "killed by SIGPIPE? {status:?}");

    let (_dir, source) = temp_file("b.json", CATALOG_B.as_bytes());
    // CATALOG_B moves beta's key: allowed.
    let mut update = home.crush(&[
        "update-providers",
        source.to_str().unwrap(),
        "--allow-key-move",
    ]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        update.pre_exec(|| {
            for fd in 0..3 {
                libc::close(fd);
            }
            Ok(())
        })
    };
    let status = update.status().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(home.cache().unwrap(), CATALOG_B.as_bytes());
}

/// Every command that prints: with standard output on a full disk it fails
/// (exit 1, one line naming standard output); with the reader gone it
/// succeeds, as a filter would; with standard error on a full disk it keeps
/// its exit code. None of it is a panic (exit 101): `println!`,
/// `eprintln!` and the completion generator each panic on a failed write.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_output_is_reported_and_never_a_panic() {
    let home = Home::new();
    home.accept(CATALOG_A.as_bytes());
    let printing: [&[&str]; 12] = [
        &["providers"],
        &["providers", "--json"],
        &["providers", "--status"],
        &["providers", "--status", "--json"],
        &["models"],
        &["models", "--json"],
        &["dirs"],
        &["completion", "bash"],
        &["update-providers", "embedded"],
        &["update-providers", "embedded", "--json"],
        &["--help"],
        &["--version"],
    ];
    let full = || fs::File::options().write(true).open("/dev/full").unwrap();
    let run = |args: &[&str], out: Stdio, err: Stdio| {
        let mut cmd = home.crush(args);
        cmd.env("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", "1");
        Run::from(cmd.stdout(out).stderr(err).output().unwrap())
    };
    for args in printing {
        let gone = || {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            Stdio::from(writer)
        };
        let run_gone = run(args, gone(), Stdio::piped());
        assert_eq!(run_gone.code, Some(0), "{args:?} {run_gone:?}");
        run(args, full().into(), Stdio::piped())
            .fails_with(&["standard output: cannot write", "No space left"]);
    }
    let run_err = run(&["models", "--json"], Stdio::piped(), full().into());
    assert_eq!(run_err.code, Some(0), "{:?}", run_err.stderr);
    assert!(!run_err.json().as_array().unwrap().is_empty());
    let failed = run(
        &["update-providers", "/nonexistent"],
        Stdio::null(),
        full().into(),
    );
    assert_eq!(failed.code, Some(1));
    run(
        &["--cwd", "/nonexistent", "models"],
        Stdio::null(),
        full().into(),
    )
    .usage_error();
}
