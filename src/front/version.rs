//! The real Crush's version: learnt once by running `crush --version`
//! (bounded in time), then remembered with the binary's identity in
//! [`Memo`], so that a start runs no process to know it. It decides only
//! whether Crush's own updates may go off to spare its requests
//! ([`crate::front::updates`]): only releases from v0.91.0 on (Crush PR
//! #3693) read the cache while they are off.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::store::file::io_words;

/// Bound on `crush --version`: a Go program answers it in milliseconds; a
/// hung or broken one must not hang the start.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// The file, in the data folder, that remembers what the front learnt.
pub(crate) const MEMO_FILE: &str = "providers.front.json";
/// The start of the temporary file a memo is written to before it is
/// renamed in place: not named as the cache's are (`.providers.*.tmp`),
/// which the cache's writer removes as a killed writer's leftovers while a
/// start may be writing its memo.
const MEMO_TEMP_PREFIX: &str = ".front-memo.";
/// The largest memo read.
const MEMO_LIMIT: usize = 64 * 1024;

/// The numbers of a release's version, as [`from_output`] reads it from
/// what `crush --version` prints (`v0.91.0`, `0.91.0`), and whether it is
/// a pre-release (`-nightly`, `-rc.1`, a Go pseudo-version
/// `v0.90.1-0.20260101120000-0123456789ab`, the build of a commit);
/// `None` for no release's (`devel`, `unknown`).
pub(crate) fn release(version: &str) -> Option<((u64, u64, u64), bool)> {
    let word = version.strip_prefix('v').unwrap_or(version);
    let word = word.split('+').next().unwrap_or_default();
    let core = word.split('-').next().unwrap_or_default();
    let mut numbers = core.split('.').map(|n| n.parse::<u64>().ok());
    let v = (numbers.next()??, numbers.next()??, numbers.next()??);
    // A pre-release's core is followed by `-`.
    numbers.next().is_none().then_some((v, core != word))
}

/// The version in what `crush --version` printed: the word after
/// `version` on the line that says `crush version …` (a logo may come
/// first, when standard output is a terminal). A version is plain ASCII:
/// a word holding anything else (an escape sequence) is none, and never
/// reaches a terminal from the memo.
pub(crate) fn from_output(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let (_, rest) = line.split_once("version ")?;
        let word = rest.split_whitespace().next()?;
        word.bytes()
            .all(|b| b.is_ascii_graphic())
            .then(|| word.to_string())
    })
}

/// What a binary is, for the memo: where it was found, how large, when
/// last modified. Replacing or upgrading it changes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, in nanoseconds since the Unix epoch (0
    /// before it, or where the system keeps none): a number, which serde
    /// writes for any time, where it refuses a `SystemTime` before 1970.
    pub modified: u64,
}

/// `time` in nanoseconds since the Unix epoch, for an [`Identity`].
pub(crate) fn since_epoch(time: io::Result<SystemTime>) -> u64 {
    let since = time.ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    since.map_or(0, |d| d.as_nanos().try_into().unwrap_or(u64::MAX))
}

/// What `--version` told of a binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Answer {
    /// Its version, as it printed it.
    Version(String),
    /// No version, and why.
    Problem(String),
}

/// What was learnt of one binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Learnt {
    /// The binary.
    #[serde(flatten)]
    pub identity: Identity,
    /// What it answered.
    pub answer: Answer,
}

/// `providers.front.json`: the versions learnt, and the last thing a start
/// told (so that each is told once). Nothing in it is needed: a missing or
/// unreadable one is learnt again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Memo {
    /// The binary learnt last (a list of one): a start asks again only
    /// when it hands over to another.
    #[serde(default)]
    pub crush: Vec<Learnt>,
    /// The SHA-256 (hex) of the notices the last start told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told: Option<String>,
}

impl Memo {
    /// The memo in `path`; an empty one when there is none to read. Only
    /// a small plain file is read: a FIFO there would block the start, a
    /// link to a device would never end it, and one larger than any memo
    /// is not one (the next write replaces each).
    pub(crate) fn read(path: &Path) -> Memo {
        match crate::store::file::read_regular(path, MEMO_LIMIT) {
            Ok(Some((bytes, _))) => serde_json::from_slice(&bytes).unwrap_or_default(),
            _ => Memo::default(),
        }
    }

    /// What the binary with this identity answered.
    pub(crate) fn get(&self, identity: &Identity) -> Option<Answer> {
        let learnt = self.crush.iter().find(|l| l.identity == *identity);
        learnt.map(|l| l.answer.clone())
    }

    /// Remembers what the binary with this identity answered, in place of
    /// what was learnt of another: a start hands over to one Crush.
    pub(crate) fn remember(&mut self, identity: Identity, answer: Answer) {
        self.crush = vec![Learnt { identity, answer }];
    }

    /// Writes the memo to `path` whole (a temporary file renamed over it).
    pub(crate) fn write(&self, path: &Path) -> io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut file = tempfile::Builder::new()
            .prefix(MEMO_TEMP_PREFIX)
            .tempfile_in(dir)?;
        file.write_all(&serde_json::to_vec_pretty(self)?)?;
        file.persist(path).map(drop).map_err(|e| e.error)
    }
}

/// Runs `command` (a Crush, with `--version` and its environment set) and
/// reads what it prints within `timeout`. Its input and errors go to the
/// null device; a program still running at the deadline is killed.
pub(crate) fn probe(mut command: Command, timeout: Duration) -> Answer {
    let problem = |what: String| Answer::Problem(format!("`--version` {what}"));
    command.stdin(Stdio::null()).stderr(Stdio::null());
    let mut child = match command.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => return problem(format!("could not run: {}", io_words(&e))),
    };
    let stdout = child.stdout.take();
    let (sender, receiver) = mpsc::channel();
    // A thread reads, so that the wait for the output has a deadline; one
    // still blocked on a pipe a grandchild holds is left to end with the
    // process.
    std::thread::spawn(move || {
        let mut output = Vec::new();
        let _ = stdout.map(|out| out.take(64 * 1024).read_to_end(&mut output));
        let _ = sender.send(output);
    });
    let Ok(output) = receiver.recv_timeout(timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        return problem(format!("gave no answer within {} s", timeout.as_secs_f64()));
    };
    let status = child.wait();
    match (from_output(&String::from_utf8_lossy(&output)), status) {
        (Some(version), _) => Answer::Version(version),
        (None, Ok(status)) if !status.success() => problem(format!("failed ({status})")),
        (None, _) => problem("printed no version".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_after_the_logo() {
        assert_eq!(
            from_output("  ▄▄▄\n ███\n\ncrush version v0.91.0\n").as_deref(),
            Some("v0.91.0")
        );
        assert_eq!(
            from_output("crush version 0.91.0 (abc1234)\n").as_deref(),
            Some("0.91.0")
        );
        assert_eq!(from_output("usage: crush\n"), None);
    }

    #[test]
    fn the_memo_remembers_each_binary_by_its_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MEMO_FILE);
        assert_eq!(Memo::read(&path), Memo::default());
        let id = |p: &str, size| Identity {
            path: p.into(),
            size,
            modified: 5,
        };
        let version = |v: &str| Answer::Version(v.into());
        let mut memo = Memo::default();
        memo.remember(id("/a", 1), version("v0.90.0"));
        memo.remember(id("/a", 2), version("v0.91.0"));
        assert_eq!(memo.get(&id("/a", 1)), None, "replaced by its upgrade");
        assert_eq!(memo.get(&id("/a", 2)), Some(version("v0.91.0")));
        memo.remember(id("/b", 1), version("v0.92.0"));
        assert_eq!(memo.get(&id("/a", 2)), None, "replaced by another");
        memo.told = Some("held".into());
        memo.write(&path).unwrap();
        assert_eq!(Memo::read(&path), memo);
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(Memo::read(&path), Memo::default());
    }

    /// A Crush whose file says it was changed before 1970 is remembered
    /// all the same: a memo that cannot be written would ask its version
    /// at every start.
    #[test]
    fn a_binary_older_than_1970_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let crush = dir.path().join("crush");
        let file = std::fs::File::create(&crush).unwrap();
        let long_ago = UNIX_EPOCH - Duration::from_secs(10 * 365 * 86_400);
        file.set_modified(long_ago).unwrap();
        let identity = Identity {
            path: crush.clone(),
            size: 0,
            modified: since_epoch(std::fs::metadata(&crush).unwrap().modified()),
        };
        assert_eq!(identity.modified, 0);
        let mut memo = Memo::default();
        memo.remember(identity, Answer::Version("v0.91.0".into()));
        let path = dir.path().join(MEMO_FILE);
        memo.write(&path).unwrap();
        assert_eq!(Memo::read(&path), memo);
    }

    #[test]
    fn a_version_that_is_not_plain_text_is_no_version() {
        for output in [
            "crush version v0.91.0\u{1b}]0;pwned\u{7}\n",
            "crush version v0.91.0\u{1b}[2J\n",
            "crush version v0.9\u{202e}1.0\n",
        ] {
            assert_eq!(from_output(output), None, "{output:?}");
        }
    }

    #[test]
    fn a_memo_that_is_no_small_plain_file_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MEMO_FILE);
        let memo = Memo {
            told: Some("x".repeat(MEMO_LIMIT)),
            ..Memo::default()
        };
        memo.write(&path).unwrap();
        assert_eq!(Memo::read(&path), Memo::default(), "too large");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(Memo::read(&path), Memo::default(), "a folder");
        #[cfg(unix)]
        {
            std::fs::remove_dir(&path).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            assert_eq!(Memo::read(&path), Memo::default(), "a device");
        }
    }

    /// The cache's writer removes what killed writers left in the data
    /// folder (`.providers.*.tmp`); a memo being written beside it is no
    /// leftover of its.
    #[test]
    fn a_memo_being_written_is_no_leftover_of_the_caches() {
        use crate::store::cache::{self, CacheFiles};
        use crate::store::state::CacheState;
        let dir = tempfile::tempdir().unwrap();
        let writing = dir.path().join(format!("{MEMO_TEMP_PREFIX}abc123"));
        std::fs::write(&writing, b"{}").unwrap();
        let files = CacheFiles::in_dir(dir.path());
        cache::write(
            &files,
            b"[]",
            &CacheState::default(),
            Duration::from_secs(5),
        )
        .unwrap();
        assert!(writing.exists(), "removed by the cache's writer");
    }

    #[cfg(unix)]
    #[test]
    fn a_probe_is_bounded_and_says_what_went_wrong() {
        let sh = |script: &str| {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        };
        let short = Duration::from_millis(300);
        let problem = |text: &str| Answer::Problem(text.into());
        assert_eq!(
            probe(sh("echo 'crush version v0.91.0'"), short),
            Answer::Version("v0.91.0".into())
        );
        let started = std::time::Instant::now();
        assert_eq!(
            probe(sh("exec sleep 30"), short),
            problem("`--version` gave no answer within 0.3 s")
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(matches!(
            probe(sh("exit 3"), short),
            Answer::Problem(p) if p.starts_with("`--version` failed")
        ));
        assert_eq!(
            probe(sh("echo hello"), short),
            problem("`--version` printed no version")
        );
        assert!(matches!(
            probe(Command::new("/nonexistent/crush"), short),
            Answer::Problem(p) if p.starts_with("`--version` could not run")
        ));
    }
}
