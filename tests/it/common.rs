//! Helpers shared by the end-to-end tests: a temporary HOME, the real
//! binary run with a clean environment, and small catalogs.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What a successful write leaves in the data folder, sorted: the cache,
/// the copy of it kept as the last document reviewed, its state and the
/// memory of where keys went, and nothing else.
pub const CACHE_FILES: [&str; 4] = [
    "providers.json",
    "providers.reviewed.json",
    "providers.state.json",
    "providers.trust.json",
];

/// The same, once a background refresh has run: its lock file too.
pub const CACHE_FILES_AFTER_REFRESH: [&str; 5] = [
    ".providers.refresh.lock",
    "providers.json",
    "providers.reviewed.json",
    "providers.state.json",
    "providers.trust.json",
];

/// How long a test waits for something that must happen (a refresh
/// recorded, a helper gone, a request arriving) before it says it never
/// came. Only a broken program reaches it, so it is generous: a loaded
/// machine (two suites at once beside three busy loops on two cores)
/// stretched a refresh of a 60 MB catalog past 20 s.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// A temporary HOME, removed on drop. The binary never sees the real one.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The data folder the binary uses under this HOME.
    pub fn data_dir(&self) -> PathBuf {
        self.path().join(".local/share/crush")
    }

    pub fn cache_file(&self) -> PathBuf {
        self.data_dir().join("providers.json")
    }

    pub fn state_file(&self) -> PathBuf {
        self.data_dir().join("providers.state.json")
    }

    /// The state file, parsed, when there is one.
    pub fn state(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&fs::read(self.state_file()).ok()?).ok()
    }

    /// The last background refresh's record in the state file, without
    /// whether a start-up has told of it.
    pub fn last_refresh(&self) -> Option<serde_json::Value> {
        let mut refresh = self.state()?.get("refresh")?.clone();
        refresh.as_object_mut()?.remove("told");
        Some(refresh)
    }

    /// Waits for a background refresh to record an outcome other than
    /// `before` (see [`Home::last_refresh`]), and returns it. The record is
    /// written last, after the catalog, so the refresh is done by then.
    #[track_caller]
    pub fn wait_for_refresh(&self, before: &Option<serde_json::Value>) -> serde_json::Value {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(now) = self.last_refresh()
                && Some(&now) != before.as_ref()
            {
                return now;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no background refresh recorded: {:?}",
                self.state()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Waits until every background helper a start of this HOME spawned
    /// has ended, so that the next start's helper does not find the
    /// refresh busy and leave it to it, and nothing of theirs can still
    /// ask or write anything. Each helper exists by the time the start
    /// that spawned it has exited; one that has not yet taken the refresh
    /// lock is waited for too. Reads `/proc` (a helper process with this
    /// HOME); where there is none, waits for the refresh lock to be free.
    pub fn wait_for_the_helper(&self) {
        let deadline = std::time::Instant::now() + PATIENCE;
        let proc = Path::new("/proc");
        if !proc.join("self/environ").exists() {
            let lock = self.data_dir().join(".providers.refresh.lock");
            let Ok(file) = fs::File::open(&lock) else {
                return;
            };
            while file.try_lock().is_err() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the helper never ended"
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            return;
        }
        let mine = format!("HOME={}", self.path().display()).into_bytes();
        let crush = Path::new(env!("CARGO_BIN_EXE_crush"));
        // The helper's command (the hidden `refresh-in-background`), with
        // this HOME: not a command of the test's own still running. Or a
        // start of this binary still in its `exec`: the process that spawned
        // it may have gone on (posix_spawn lets it go once the new program
        // is mapped), and may have exited, before the kernel has set the
        // helper's command line and environment, which read empty until
        // then. It is waited for too (whichever test's it is: a few ms).
        let helper = |entry: &fs::DirEntry| {
            let Ok(line) = fs::read(entry.path().join("cmdline")) else {
                return false;
            };
            if line.is_empty() {
                return fs::read_link(entry.path().join("exe")).is_ok_and(|exe| exe == crush);
            }
            line.split(|&b| b == 0).nth(1) == Some(b"refresh-in-background".as_slice())
                && fs::read(entry.path().join("environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == mine))
        };
        loop {
            let running = fs::read_dir(proc).unwrap().flatten().any(|e| helper(&e));
            if !running {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "a helper of {} never ended",
                self.path().display()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub fn cache(&self) -> Option<Vec<u8>> {
        fs::read(self.cache_file()).ok()
    }

    /// Installs `catalog` as a person would, `update-providers -
    /// --allow-shrink`: a catalog smaller than the embedded snapshot (as
    /// the suite's are) becomes the floor later catalogs must keep half of.
    #[track_caller]
    pub fn accept(&self, catalog: &[u8]) {
        self.run_stdin(&["update-providers", "-", "--allow-shrink"], catalog)
            .ok();
    }

    /// A data folder whose memory remembers `catalog` as the floor (a
    /// person applied it with `--allow-shrink`) but holds no cache any
    /// more: a first fetch of a catalog its size is then no shrink.
    #[track_caller]
    pub fn with_floor_of(&self, catalog: &[u8]) {
        self.accept(catalog);
        fs::remove_file(self.cache_file()).unwrap();
        fs::remove_file(self.state_file()).unwrap();
    }

    pub fn set_cache(&self, bytes: &[u8]) {
        fs::create_dir_all(self.data_dir()).unwrap();
        fs::write(self.cache_file(), bytes).unwrap();
    }

    /// Names in the data folder, sorted (see [`CACHE_FILES`]).
    pub fn data_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = match fs::read_dir(self.data_dir()) {
            Ok(entries) => entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }

    /// A command for the binary with only this HOME in its environment.
    pub fn crush(&self, args: &[&str]) -> Command {
        crush_in(self.path(), args)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.crush(args).output().unwrap())
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.crush(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    pub fn run_stdin(&self, args: &[&str], input: &[u8]) -> Run {
        let mut child = self
            .crush(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        Run::from(child.wait_with_output().unwrap())
    }
}

/// `name` as the test process's own `PATH` finds it (the commands the
/// tests run get a `PATH` of their own: [`crush_in`]).
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|program| program.is_file())
}

/// A folder holding only `git` (a link to the one on this process's
/// `PATH`): the binary's `PATH`, since Crush asks git for the project root
/// and has none without it, and nothing else of this machine's `PATH`
/// (a `crush`, say) is found. `None` where there is no git.
pub fn git_only_path() -> Option<&'static Path> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let git = on_path("git")?;
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("git-only");
        fs::create_dir_all(&dir).ok()?;
        let link = dir.join("git");
        if fs::read_link(&link).ok().as_ref() != Some(&git) {
            let _ = fs::remove_file(&link);
            #[cfg(unix)]
            std::os::unix::fs::symlink(&git, &link).ok()?;
            #[cfg(not(unix))]
            fs::copy(&git, &link).ok()?;
        }
        Some(dir)
    })
    .as_deref()
}

/// A command for the binary with only `home` as HOME in its environment
/// (and the system file moved into it, out of the machine's `/etc`), and
/// [`git_only_path`] as its `PATH`, with git's system configuration left
/// out.
pub fn crush_in(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crush"));
    cmd.args(args).env_clear();
    if let Some(dir) = git_only_path() {
        cmd.env("PATH", dir);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env("LOCALAPPDATA", home.join("AppData/Local"))
        .env(
            "CRUSH_PROVIDERS_SYSTEM_CONFIG",
            home.join("etc/crush/crush.json"),
        )
        .current_dir(home)
        .stdin(Stdio::null());
    cmd
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    #[track_caller]
    pub fn ok(&self) -> &Run {
        assert_eq!(self.code, Some(0), "expected success: {self:#?}");
        self
    }

    /// Asserts a failure with exit code 1 told once, in uv's shape (an
    /// `error: ` line, its `  caused by: ` lines, its `  hint: `), whose
    /// lines together contain every one of `parts`.
    #[track_caller]
    pub fn fails_with(&self, parts: &[&str]) -> &Run {
        assert_eq!(self.code, Some(1), "expected exit 1: {self:#?}");
        let error = self.error();
        for part in parts {
            assert!(error.contains(part), "the error lacks {part:?}: {self:#?}");
        }
        self
    }

    /// The one error told on stderr: its `error: ` line and the lines
    /// under it (its causes and its hint), joined by newlines.
    #[track_caller]
    pub fn error(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        let starts: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("error: "))
            .collect();
        assert_eq!(starts.len(), 1, "expected one error: {self:#?}");
        let rest = lines[starts[0] + 1..]
            .iter()
            .take_while(|l| l.starts_with("  "));
        std::iter::once(lines[starts[0]])
            .chain(rest.copied())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[track_caller]
    pub fn usage_error(&self) -> &Run {
        assert_eq!(self.code, Some(2), "expected exit 2: {self:#?}");
        self
    }

    /// Where `providers -d` said its catalog came from: the line a
    /// terminal shows above the table (`cached, fetched from …`), which a
    /// pipe gets with `--debug` only; empty when it said none.
    pub fn provenance(&self) -> &str {
        self.stderr
            .lines()
            .find_map(|l| l.strip_prefix("debug: Providers: "))
            .unwrap_or("")
    }

    /// The lines of stderr but the `--debug` ones.
    pub fn told(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("debug: ") && !l.starts_with("  "))
            .collect()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }
}

/// `text` with every run of white space one space: what a reader sees of
/// words wrapped over lines.
pub fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A small valid catalog with an unknown field and odd formatting, so that a
/// re-serialising implementation would be caught.
pub const CATALOG_A: &str = r#"[
  {"name": "Alpha", "id": "alpha", "type": "openai-compat", "api_key": "$ALPHA_API_KEY",
   "api_endpoint": "https://api.alpha.example/v1", "default_large_model_id": "a-large",
   "default_small_model_id": "a-small", "future_field": {"nested": [1, 2.50, null]},
   "models": [
     {"id": "a-large", "name": "A Large", "cost_per_1m_in": 3, "cost_per_1m_out": 15.0,
      "context_window": 200000, "default_max_tokens": 8192, "can_reason": true,
      "reasoning_levels": ["low", "high"], "has_reasoning_efforts": true, "temperature": 1},
     {"id": "a-small", "name": "A Small", "cost_per_1m_in": 0.25, "cost_per_1m_out": 1.25,
      "context_window": 100000}
   ]},
  {"name": "Beta", "id": "beta", "type": "anthropic", "api_key": "$BETA_API_KEY",
   "api_endpoint": "https://api.beta.example", "models": [{"id": "b1", "name": "B One"}]}
]
"#;

/// CATALOG_A changed: beta's endpoint moved, a model added and one removed,
/// gamma added.
pub const CATALOG_B: &str = r#"[{"name":"Alpha","id":"alpha","type":"openai-compat","api_key":"$ALPHA_API_KEY","api_endpoint":"https://api.alpha.example/v1","default_large_model_id":"a-large","default_small_model_id":"a-small","models":[{"id":"a-large","name":"A Large"},{"id":"a-new","name":"A New"}]},
{"name":"Beta","id":"beta","type":"anthropic","api_key":"$BETA_API_KEY","api_endpoint":"https://attacker.example","models":[{"id":"b1","name":"B One"}]},
{"name":"Gamma","id":"gamma","type":"openai","api_key":"$GAMMA_API_KEY","models":[{"id":"g1","name":"G One"}]}]"#;

/// CATALOG_A's next release: a model and a provider with its own key
/// added, no key sent anywhere new. What an automatic refresh applies.
pub const CATALOG_A2: &str = r#"[{"name":"Alpha","id":"alpha","type":"openai-compat","api_key":"$ALPHA_API_KEY","api_endpoint":"https://api.alpha.example/v2","default_large_model_id":"a-large","default_small_model_id":"a-small","models":[{"id":"a-large","name":"A Large"},{"id":"a-small","name":"A Small"},{"id":"a-new","name":"A New"}]},
{"name":"Beta","id":"beta","type":"anthropic","api_key":"$BETA_API_KEY","api_endpoint":"https://api.beta.example","models":[{"id":"b1","name":"B One"}]},
{"name":"Gamma","id":"gamma","type":"openai","api_key":"$GAMMA_API_KEY","api_endpoint":"https://api.gamma.example","models":[{"id":"g1","name":"G One"}]}]"#;

/// Makes `dir` a git work tree: a `.git` folder git takes for a repository
/// (a `HEAD`, `objects` and `refs`), without running git.
pub fn git_init(dir: &Path) {
    let git = dir.join(".git");
    fs::create_dir_all(git.join("objects")).unwrap();
    fs::create_dir_all(git.join("refs")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
}

/// The embedded (real) catalog with `provider`, an object, added last: a
/// catalog that keeps all of the snapshot, for the tests of a first fetch
/// (which must keep half of the snapshot: a catalog of two providers
/// would be held as one that shrank).
pub fn embedded_plus(provider: &str) -> String {
    let real = std::str::from_utf8(crush_providers::catalog::embedded::catalog_bytes()).unwrap();
    let end = real.rfind(']').unwrap();
    format!("{},\n  {provider}\n]\n", real[..end].trim_end())
}

/// [`embedded_plus`] with a provider of a key of its own: what a first
/// fetch applies.
pub fn embedded_and_gamma() -> &'static str {
    static CATALOG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        embedded_plus(
            r#"{"name":"Gamma","id":"gamma","type":"openai","api_key":"$GAMMA_API_KEY","api_endpoint":"https://api.gamma.example","models":[{"id":"g1","name":"G One"}]}"#,
        )
    });
    &CATALOG
}

/// Writes `content` to a file in a fresh temporary folder.
pub fn temp_file(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs::write(&path, content).unwrap();
    (dir, path)
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crush_providers::internals::digest::hex(&crush_providers::internals::digest::sha256(bytes))
}

/// The Catwalk ETag of `bytes`.
pub fn catwalk_etag(bytes: &[u8]) -> String {
    crush_providers::internals::digest::catwalk_etag(&crush_providers::internals::digest::sha256(
        bytes,
    ))
}

/// A loopback server that answers every connection with `respond`, for
/// misbehaviour wiremock cannot produce (truncated or endless bodies,
/// dripping bytes). Returns its base URL; the thread ends with the process.
pub fn raw_server(respond: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static) -> String {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let respond = std::sync::Arc::new(respond);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let respond = std::sync::Arc::clone(&respond);
            std::thread::spawn(move || {
                // Read the request head before answering.
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                respond(&mut stream);
            });
        }
    });
    format!("http://{addr}")
}

/// A loopback server answering GET `route` with `template`.
/// (`template` may be any responder: a [`Gated`] one too.)
pub async fn serve_at(
    route: &str,
    template: impl wiremock::Respond + 'static,
) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path(route))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

/// The base URL of a loopback port that nothing listens on: the port was
/// bound and released, so a connection is refused at once.
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// A minisign key pair made for a test, that signs catalogs as a mirror
/// would (`minisign -S`: a trusted comment with the signing time).
pub struct Signer {
    pk: minisign::PublicKey,
    sk: minisign::SecretKey,
}

impl Signer {
    pub fn new() -> Signer {
        let minisign::KeyPair { pk, sk } =
            minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        Signer { pk, sk }
    }

    /// The public key's base64 line, as `CRUSH_PROVIDER_PUBLIC_KEY` takes it.
    pub fn public_key(&self) -> String {
        self.pk.to_base64()
    }

    /// The key's id as minisign shows it (`minisign public key 1A2B…`).
    pub fn key_id(&self) -> String {
        let id = u64::from_le_bytes(self.pk.keynum().try_into().unwrap());
        format!("{id:016X}")
    }

    /// The public key as a `.pub` file's text.
    pub fn public_key_file(&self) -> String {
        self.pk.to_box().unwrap().to_string()
    }

    /// The `.minisig` text of `bytes`, signed at `timestamp` (none: a
    /// trusted comment without one).
    pub fn sign(&self, bytes: &[u8], timestamp: Option<u64>) -> String {
        let comment = match timestamp {
            Some(t) => format!("timestamp:{t}\tfile:providers.json\thashed"),
            None => "file:providers.json".to_string(),
        };
        minisign::sign(
            Some(&self.pk),
            &self.sk,
            std::io::Cursor::new(bytes),
            Some(&comment),
            None,
        )
        .unwrap()
        .into_string()
    }
}

/// The value of header `name` in each request (empty when absent).
pub fn received(requests: &[wiremock::Request], name: &str) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            r.headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// Asserts that none of the HTTP libraries' own wording reached the user.
#[track_caller]
pub fn assert_plain(run: &Run) {
    for word in crush_providers::internals::diagnosis::LIBRARY_WORDING {
        assert!(!run.stderr.contains(word), "{word:?} in {run:?}");
    }
}

/// A loopback HTTP/1.1 server that keeps its connections alive, as a
/// mirror does, answering each GET with `answer(path)` (404 for `None`).
/// Returns its base URL and the count of connections it accepted.
pub fn keep_alive_server(
    answer: impl Fn(&str) -> Option<Vec<u8>> + Send + Sync + 'static,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut request = String::new();
                    if reader.read_line(&mut request).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let path = request.split_whitespace().nth(1).unwrap_or("/");
                    let body = answer(path.split('?').next().unwrap_or_default());
                    let head = match &body {
                        Some(body) => {
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                        }
                        None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string(),
                    };
                    if stream.write_all(head.as_bytes()).is_err()
                        || stream
                            .write_all(body.as_deref().unwrap_or_default())
                            .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (url, connections)
}

/// Whether the suite runs under CI (`CI` set, as `.ci/run` and CI services
/// set it): there, a program a test needs is installed, and its absence is
/// a failure rather than a skip.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Says, past the test harness's capture (so that it shows among the
/// `test … ok` lines of the summary), that the calling test skipped `what`
/// because this machine lacks `program`; under CI, which installs every
/// program the suite needs (`.ci/run`), it fails instead.
#[track_caller]
pub fn skip_without(program: &str, what: &str) {
    assert!(
        !under_ci(),
        "`{program}` is missing under CI (.ci/run installs it): {what} cannot be skipped"
    );
    skip_note(&format!("no `{program}` here: skipped {what}"));
}

/// Says, past the test harness's capture, that the calling test skipped
/// `what` because this machine cannot do it (a capability, not a program
/// CI could install: tracing, mount namespaces, permissions as root).
pub fn skip_note(text: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    // Straight to the file descriptor: the harness captures only the
    // `print!` family.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED in {test}: {text}");
}

impl Home {
    /// Makes the state file say that what it records happened `seconds`
    /// earlier (`fetched_at`, `confirmed_at`, the last refresh's `at`),
    /// as if the last run had been that long ago: a test of a later time
    /// written there needs no sleep to cross a second.
    #[track_caller]
    pub fn backdate_state(&self, seconds: u64) {
        let mut state = self.state().expect("a state file to backdate");
        let earlier = |value: &mut serde_json::Value| {
            if let Some(at) = value.as_u64() {
                *value = (at - seconds).into();
            }
        };
        for key in ["fetched_at", "confirmed_at"] {
            if let Some(value) = state.get_mut(key) {
                earlier(value);
            }
        }
        if let Some(at) = state.pointer_mut("/refresh/at") {
            earlier(at);
        }
        fs::write(self.state_file(), serde_json::to_vec(&state).unwrap()).unwrap();
    }
}

/// A gate a test holds responses behind ([`Gate::hold`]): the server
/// answers once the test has checked what must happen before any answer
/// (a start that returned without waiting), and at the latest when the
/// gate is dropped, so that a failing test never wedges a pooled server.
pub struct Gate(std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

impl Gate {
    pub fn new() -> Gate {
        Gate(Default::default())
    }

    /// `template`, answered only once the gate is open.
    pub fn hold(&self, template: wiremock::ResponseTemplate) -> Gated {
        Gated {
            gate: std::sync::Arc::clone(&self.0),
            template,
        }
    }

    pub fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// A response behind a [`Gate`].
pub struct Gated {
    gate: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    template: wiremock::ResponseTemplate,
}

impl wiremock::Respond for Gated {
    fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
        let (open, changed) = &*self.gate;
        // Bounded all the same: a gate leaked by a test frees the server.
        let (_open, _) = changed
            .wait_timeout_while(open.lock().unwrap(), PATIENCE, |open| !*open)
            .unwrap();
        self.template.clone()
    }
}

/// A loopback server that takes each request and never answers (it holds
/// the connection for [`PATIENCE`]), telling the test through the receiver
/// once a request has arrived: the client is then inside its fetch.
pub fn unanswering_server() -> (String, std::sync::mpsc::Receiver<()>) {
    let (arrived, arrivals) = std::sync::mpsc::channel();
    let arrived = std::sync::Mutex::new(arrived);
    let url = raw_server(move |_| {
        let _ = arrived.lock().unwrap().send(());
        std::thread::sleep(PATIENCE);
    });
    (url, arrivals)
}

/// Copies the program `from` to `to`, executable. Through `cp`, a process
/// of its own: a file this process held open for writing would be open in
/// every child another test forks meanwhile, until that child execs, and
/// running it then fails with "Text file busy" (ETXTBSY), which a loaded
/// machine makes likely.
#[cfg(unix)]
#[track_caller]
pub fn copy_program(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let copied = Command::new("cp").arg(from).arg(to).status().unwrap();
    assert!(copied.success(), "cp {} {}", from.display(), to.display());
    fs::set_permissions(to, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Writes a program (a script's `text`) to `file`, executable, by way of
/// [`copy_program`] (see there why).
#[cfg(unix)]
#[track_caller]
pub fn write_program(file: &Path, text: &str) {
    let source = tempfile::NamedTempFile::new().unwrap();
    fs::write(source.path(), text).unwrap();
    copy_program(source.path(), file);
}
