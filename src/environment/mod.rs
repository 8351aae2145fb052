//! The environment as Crush's start sees it: the process's variables, and
//! those a `.env` file in the process's working directory adds. Crush
//! loads that file before anything else runs (`main.go` imports
//! `github.com/joho/godotenv/autoload`, whose `init` calls
//! `godotenv.Load()`): from the directory the process started in, not the
//! one `--cwd` names (flags are parsed later), and without overriding a
//! variable the process already has, even set to the empty string
//! (`godotenv.loadFile` checks `os.Environ()`'s names). Every variable
//! Crush reads afterwards sees it: `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE`,
//! `CATWALK_URL`, the proxy variables, `SSL_CERT_FILE`, the XDG folders.
//! Two are read before it, and so never come from it: `HOME` and
//! `USERPROFILE`, which Crush's `home` package reads when it is
//! initialised (Go initialises `github.com/charmbracelet/...` before
//! `github.com/joho/...`).
//!
//! The command line installs the file once ([`install`]); a library host
//! that installs nothing gets the process's variables alone.

pub(crate) mod dotenv;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::store::file::{self, FileError};

/// The name of the file, in the process's working directory.
pub(crate) const FILE_NAME: &str = ".env";

/// Largest `.env` read; godotenv has no limit, but a start must not read
/// a runaway file whole.
const MAX_BYTES: usize = 1024 * 1024;

/// Variables Crush reads before the `.env` file is loaded.
const READ_BEFORE: [&str; 2] = ["HOME", "USERPROFILE"];

/// What a `.env` file gives the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DotEnv {
    /// The file.
    pub path: PathBuf,
    /// The variables it adds: those the process does not already have.
    pub entries: Vec<dotenv::Entry>,
    /// Names it sets that the process already has, so the process's value
    /// stands (as in Crush).
    pub shadowed: Vec<String>,
    /// Names it sets that are not taken from it, with why.
    pub refused: Vec<(String, usize, &'static str)>,
    /// Why nothing of it was loaded, when nothing was.
    pub error: Option<String>,
    /// Whether it was too large to read: Crush, which reads it whole, may
    /// take what this reader did not.
    pub unread: bool,
}

/// Reads `dir/.env` as Crush would: `None` when there is none. A file that
/// cannot be read or parsed loads nothing, as in Crush (which says
/// nothing); here [`DotEnv::error`] says why. Only a regular file is read:
/// a FIFO there would block a start for good. A variable is taken unless
/// the process has it, Crush reads it before the file is loaded, or it is
/// one of `refused` (the caller's own rule, e.g. that a project's file
/// cannot pin keys), with why.
pub(crate) fn load(dir: &Path, refused: &[(&str, &'static str)]) -> Option<DotEnv> {
    let path = dir.join(FILE_NAME);
    let read = file::read_regular(&path, MAX_BYTES);
    let mut loaded = DotEnv {
        unread: matches!(read, Err(FileError::TooLarge(_))),
        path,
        ..DotEnv::default()
    };
    let parsed = match read {
        Ok(None) => return None,
        Ok(Some((bytes, _))) => dotenv::parse(&bytes).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    loaded.error = parsed.as_ref().err().cloned();
    for entry in parsed.unwrap_or_default() {
        let refused = refused.iter().find(|(n, _)| *n == entry.name);
        if let Some((_, why)) = refused {
            loaded.refused.push((entry.name, entry.line, why));
        } else if READ_BEFORE.contains(&entry.name.as_str()) {
            let why = "Crush reads it before it loads .env";
            loaded.refused.push((entry.name, entry.line, why));
        } else if process_var(&entry.name).is_some() {
            loaded.shadowed.push(entry.name);
        } else if !entry.value.contains(&0) {
            loaded.entries.push(entry);
        }
    }
    Some(loaded)
}

static INSTALLED: OnceLock<Option<DotEnv>> = OnceLock::new();

/// A variable whose value in this process is not the user's own, and the
/// user's own in its place ([`restore`]).
static RESTORED: OnceLock<(&'static str, Option<OsString>)> = OnceLock::new();

/// Reads `name` as the user's own value (`None`: unset) from now on: a
/// front of Crush started this process (from a program Crush ran) with its
/// own `CATWALK_URL` in place of the user's. Set once, before the `.env`
/// file is loaded, so that the file's value counts where the user had
/// none, as it would without the front.
pub(crate) fn restore(name: &'static str, value: Option<OsString>) {
    let _ = RESTORED.set((name, value));
}

/// `name` in the process's own environment (no `.env`), the user's own
/// value where a front replaced it.
pub(crate) fn process_var(name: &str) -> Option<OsString> {
    match RESTORED.get() {
        Some((restored, value)) if *restored == name => value.clone(),
        _ => std::env::var_os(name),
    }
}

/// Makes `dotenv` part of the environment [`var`] reads, for the rest of
/// the process; the first call wins.
pub(crate) fn install(dotenv: Option<DotEnv>) {
    let _ = INSTALLED.set(dotenv);
}

/// The `.env` file installed, when there is one.
pub(crate) fn installed() -> Option<&'static DotEnv> {
    INSTALLED.get().and_then(Option::as_ref)
}

/// A variable as Crush reads it: the process's, else the installed
/// `.env` file's. An empty value counts as unset, as it does for every
/// variable this tool reads.
pub(crate) fn var(name: &str) -> Option<OsString> {
    let from_dotenv = || installed()?.entries.iter().find(|e| e.name == name);
    (process_var(name).or_else(|| from_dotenv().map(|e| os_string(&e.value))))
        .filter(|v| !v.is_empty())
}

/// Where a variable's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// The process's environment.
    Process,
    /// A `.env` file, at this line.
    DotEnv(PathBuf, usize),
}

/// Where [`var`] finds `name`; `None` when it is unset.
pub(crate) fn source(name: &str) -> Option<Source> {
    var(name)?;
    match process_var(name) {
        Some(_) => Some(Source::Process),
        None => dotenv_source(name, false),
    }
}

/// Whether `name` is set, but to the empty string, which [`var`] reads as
/// unset; where it was set, when it is.
pub(crate) fn set_but_empty(name: &str) -> Option<Source> {
    match process_var(name) {
        Some(value) => value.is_empty().then_some(Source::Process),
        None => dotenv_source(name, true),
    }
}

/// Where the installed `.env` file sets `name`, to an empty value or not.
fn dotenv_source(name: &str, empty: bool) -> Option<Source> {
    let dotenv = installed()?;
    let entry = (dotenv.entries.iter()).find(|e| e.name == name && e.value.is_empty() == empty)?;
    Some(Source::DotEnv(dotenv.path.clone(), entry.line))
}

/// Bytes as an `OsString`: as they are on Unix, where Go's strings and
/// the system's names are bytes alike.
#[cfg(unix)]
pub(crate) fn os_string(bytes: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes.to_vec())
}

#[cfg(not(unix))]
pub(crate) fn os_string(bytes: &[u8]) -> OsString {
    String::from_utf8_lossy(bytes).into_owned().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn load_reads_a_regular_file_and_tells_what_it_could_not() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), &[]), None);
        fs::write(
            dir.path().join(".env"),
            "CRUSH_TEST_DOTENV_UNSET_VAR=1\nHOME=/elsewhere\n",
        )
        .unwrap();
        let loaded = load(dir.path(), &[]).unwrap();
        assert_eq!(loaded.entries.len(), 1);
        assert_eq!(loaded.entries[0].name, "CRUSH_TEST_DOTENV_UNSET_VAR");
        assert_eq!(loaded.refused[0].0, "HOME");
        // The process's own value stands; the caller's rule refuses.
        fs::write(dir.path().join(".env"), "PATH=/x\nCRUSH_TEST_DOTENV_K=1\n").unwrap();
        let loaded = load(dir.path(), &[("CRUSH_TEST_DOTENV_K", "only the user")]).unwrap();
        assert_eq!(loaded.shadowed, ["PATH"]);
        assert_eq!(
            loaded.refused,
            [("CRUSH_TEST_DOTENV_K".into(), 2, "only the user")]
        );
        assert!(loaded.entries.is_empty());
        fs::write(dir.path().join(".env"), "A=1\nbad-name=2\n").unwrap();
        let loaded = load(dir.path(), &[]).unwrap();
        assert!(loaded.entries.is_empty());
        assert!(loaded.error.unwrap().starts_with("line 2: "));
        fs::remove_file(dir.path().join(".env")).unwrap();
        fs::create_dir(dir.path().join(".env")).unwrap();
        assert_eq!(
            load(dir.path(), &[]).unwrap().error.as_deref(),
            Some("it is a folder, not a regular file")
        );
    }
}
