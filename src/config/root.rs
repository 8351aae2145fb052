//! The project root: where the walk for project files stops. Crush asks
//! `git rev-parse --show-toplevel` in the working directory
//! (`internal/config/load.go`: `computeWorktreeRoot`, `projectBoundary`)
//! and, when that fails, searches the working directory alone. It fails
//! when there is no `git` on `PATH` (Go's `exec.LookPath`), and where git
//! refuses the repository it finds.
//!
//! This finds the same answer without starting git where git's answer is
//! known, by git's own discovery rules (`setup.c`:
//! `setup_git_directory_gently_1`, `is_git_directory`,
//! `read_gitfile_gently`, `validate_headref`, `ensure_valid_ownership`):
//!
//! - from the working directory up, the first folder holding a `.git` that
//!   is a repository is the root; a `.git` folder that is not one (empty,
//!   say) is passed over, and the walk goes on;
//! - a `.git` **file** must say `gitdir: <path>` of a repository; a broken
//!   one makes git fail (`not a git repository`), so there is no root;
//! - a folder that is itself a repository (a bare one, or the inside of a
//!   `.git`) has no work tree: no root;
//! - the walk does not cross into another file system (git's default
//!   without `GIT_DISCOVERY_ACROSS_FILESYSTEM`);
//! - git answers only when the work tree, the `.git` file and the
//!   repository are owned by the user it runs as; otherwise its answer
//!   depends on `safe.directory` in the user's configuration (and on
//!   `SUDO_UID` for root), which git alone reads as it reads it: there,
//!   and wherever a variable that moves git's search is set (`GIT_DIR`,
//!   `GIT_WORK_TREE`, `GIT_CEILING_DIRECTORIES`, …), git is run, once, and
//!   its answer taken.
//!
//! A repository is a folder with a valid `HEAD` (a symbolic link to
//! `refs/…`, a file `ref: refs/…`, or an object id), and `objects` and
//! `refs` in its common folder (the folder itself, or the one its
//! `commondir` file names).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::store::{file, paths};

/// The project root of `cwd` (absolute), as git finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// The top of the enclosing work tree.
    WorkTree(PathBuf),
    /// None: the working directory alone is searched, for this reason.
    None(NoRoot),
}

/// Why there is no project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRoot {
    /// No repository encloses the working directory.
    NoRepository,
    /// This `.git` file does not lead to a repository, and git fails.
    BrokenGitFile(PathBuf),
    /// This folder is a repository without a work tree (bare, or a `.git`).
    NoWorkTree(PathBuf),
    /// The working directory is not a folder git can run in (it does not
    /// exist: `-c sub` names `./sub/sub`).
    NoFolder,
    /// No `git` to ask (Go's `exec.LookPath` finds none): why.
    NoGit(NoGit),
    /// git, asked, gives no root: the first line it said (`fatal:
    /// detected dubious ownership in repository at …`).
    GitSaid(String),
}

/// Why Go's `exec.LookPath` finds no `git` to run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoGit {
    /// `PATH` is unset or empty.
    #[error("PATH is not set")]
    NoPath,
    /// No folder of `PATH` holds one.
    #[error("no git on PATH")]
    NotOnPath,
    /// The first found is by a relative entry, which Go refuses
    /// (`exec.ErrDot`).
    #[error("the git found on PATH, {}, is relative to the current folder, which Go refuses to run", .0.display())]
    Relative(PathBuf),
}

/// The variables that move git's search for the repository: where one is
/// set, only git knows its answer. The last is git's own switch to act
/// as if every repository were another user's.
const GIT_SEARCH_VARS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_TEST_ASSUME_DIFFERENT_OWNER",
];

/// How long git may take to answer; past it, it gives no root.
const GIT_PATIENCE: Duration = Duration::from_secs(2);

/// The project root of the working folder `cwd` (absolute), as Crush v0.90
/// gets it from git, with the environment `env` (the user's own: a
/// project's `.env` chooses no program this runs).
pub(crate) fn of(cwd: &Path, env: &dyn Fn(&str) -> Option<OsString>) -> Root {
    if !cwd.is_dir() {
        return Root::None(NoRoot::NoFolder);
    }
    // git starts from the folder with its links resolved (`git rev-parse`
    // in a linked folder answers the physical root); elsewhere the
    // working directory is already its physical path.
    let physical = match cfg!(unix) {
        true => fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned()),
        false => cwd.to_owned(),
    };
    let git_decides = GIT_SEARCH_VARS.iter().any(|name| env(name).is_some());
    let found = discover(&physical);
    if let (Root::None(_), false) = (&found.0, git_decides) {
        return found.0;
    }
    let git = match look_path_git(env) {
        Ok(git) => git,
        Err(why) => return Root::None(NoRoot::NoGit(why)),
    };
    match found {
        (root, owners) if !git_decides && owners.iter().all(|p| owned_by_me(p)) => root,
        _ => ask_git(&git, &physical),
    }
}

/// What git's discovery finds from `cwd` (absolute and physical), without
/// git, as if git ran as the owner of every file; with a work tree, the
/// paths git requires to be the user's: the work tree, its `.git` file if
/// any, the repository.
fn discover(cwd: &Path) -> (Root, Vec<PathBuf>) {
    let start = device(cwd);
    for dir in cwd.ancestors() {
        if start.is_some() && device(dir) != start {
            break;
        }
        let dotgit = dir.join(".git");
        match fs::metadata(&dotgit) {
            Ok(meta) if meta.is_file() => {
                return match read_gitfile(&dotgit) {
                    Some(gitdir) if is_git_directory(&gitdir) => {
                        let owners = vec![dir.to_owned(), dotgit, gitdir];
                        (Root::WorkTree(dir.to_owned()), owners)
                    }
                    _ => (Root::None(NoRoot::BrokenGitFile(dotgit)), Vec::new()),
                };
            }
            Ok(_) if is_git_directory(&dotgit) => {
                return (Root::WorkTree(dir.to_owned()), vec![dir.to_owned(), dotgit]);
            }
            _ if is_git_directory(dir) => {
                return (Root::None(NoRoot::NoWorkTree(dir.to_owned())), Vec::new());
            }
            _ => {}
        }
    }
    (Root::None(NoRoot::NoRepository), Vec::new())
}

/// Whether git, run by this user, takes `path` for its own without asking
/// its configuration: the owner of `path` itself (not of where a link
/// leads) is the effective user. Where it is not, git may still accept it
/// (`safe.directory`, root's `SUDO_UID`): git is asked. On Windows git
/// compares owners' SIDs, which this does not read: it takes the
/// repository for the user's, as git does for the usual clone.
#[cfg(unix)]
fn owned_by_me(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    fs::symlink_metadata(path).is_ok_and(|meta| meta.uid() == me)
}

#[cfg(not(unix))]
fn owned_by_me(_: &Path) -> bool {
    true
}

/// `git`, as Go's `exec.LookPath` finds it on `PATH` (unset or empty:
/// none; an empty entry is `.`), or why there is none: Go refuses one
/// found by a relative entry (`exec.ErrDot`), and Crush's command fails.
/// On Windows, `git` with each extension of `PATHEXT`.
fn look_path_git(env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf, NoGit> {
    env("PATH").filter(|p| !p.is_empty()).ok_or(NoGit::NoPath)?;
    let git = (paths::on_path(env, "git").into_iter())
        .find(|candidate| is_executable(candidate))
        .ok_or(NoGit::NotOnPath)?;
    match git.is_relative() {
        true => Err(NoGit::Relative(git)),
        false => Ok(git),
    }
}

/// Go's `findExecutable`: not a folder, and executable by this user.
fn is_executable(path: &Path) -> bool {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => false,
        #[cfg(unix)]
        Ok(_) => {
            use rustix::fs::{Access, AtFlags, CWD, accessat};
            accessat(CWD, path, Access::EXEC_OK, AtFlags::EACCESS).is_ok()
        }
        #[cfg(not(unix))]
        Ok(_) => true,
        Err(_) => false,
    }
}

/// Runs `git rev-parse --show-toplevel` in `cwd`, as Crush does, and
/// takes its answer: the root it prints, or none with the first line it
/// said. git has [`GIT_PATIENCE`] to answer, or is left behind.
fn ask_git(git: &Path, cwd: &Path) -> Root {
    use std::process::{Command, Stdio};
    let (tx, rx) = std::sync::mpsc::channel();
    let mut command = Command::new(git);
    command.args(["rev-parse", "--show-toplevel"]);
    command.current_dir(cwd).stdin(Stdio::null());
    std::thread::spawn(move || tx.send(command.output()));
    let said = match rx.recv_timeout(GIT_PATIENCE) {
        Ok(Ok(output)) if output.status.success() && !output.stdout.trim_ascii().is_empty() => {
            // The folder git printed, byte for byte on Unix.
            let printed = crate::environment::os_string(output.stdout.trim_ascii());
            return Root::WorkTree(PathBuf::from(printed));
        }
        Ok(Ok(output)) => match String::from_utf8_lossy(&output.stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
        {
            Some(first) => first.trim().to_owned(),
            None => format!("git rev-parse --show-toplevel failed ({})", output.status),
        },
        Ok(Err(e)) => format!("{} cannot be run: {e}", git.display()),
        Err(_) => format!("git did not answer within {} s", GIT_PATIENCE.as_secs()),
    };
    Root::None(NoRoot::GitSaid(said))
}

/// The file system of `dir`, which git's walk does not leave (its default
/// without `GIT_DISCOVERY_ACROSS_FILESYSTEM`).
#[cfg(unix)]
fn device(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).ok().map(|m| m.dev())
}

#[cfg(not(unix))]
fn device(_: &Path) -> Option<u64> {
    None
}

/// The start of a small file of git's, when it is a regular file (a FIFO
/// is never opened: it would block the start).
fn read_small(path: &Path) -> Option<Vec<u8>> {
    file::read_regular(path, 64 * 1024)
        .ok()?
        .map(|(bytes, _)| bytes)
}

/// The folder a `.git` file names: `gitdir: <path>`, relative to the
/// file's folder unless absolute.
fn read_gitfile(path: &Path) -> Option<PathBuf> {
    let text = read_small(path)?;
    let gitdir = String::from_utf8(text.strip_prefix(b"gitdir: ")?.to_vec()).ok()?;
    Some(path.parent()?.join(gitdir.trim_end_matches(['\n', '\r'])))
}

/// git's `is_git_directory`: a valid `HEAD`, and `objects` and `refs`
/// searchable in its common folder (the folder itself, or the one its
/// `commondir` file names).
fn is_git_directory(dir: &Path) -> bool {
    if !valid_head(&dir.join("HEAD")) {
        return false;
    }
    let common = match read_small(&dir.join("commondir")) {
        Some(text) => dir.join(String::from_utf8_lossy(&text).trim_end_matches(['\n', '\r'])),
        None => dir.to_owned(),
    };
    searchable(&common.join("objects")) && searchable(&common.join("refs"))
}

/// `access(path, X_OK)`: a folder, or a file with an execute bit.
fn searchable(path: &Path) -> bool {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => true,
        #[cfg(unix)]
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            meta.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        Ok(_) => true,
        Err(_) => false,
    }
}

/// git's `validate_headref`: a symbolic link to `refs/…`, a file `ref:
/// refs/…`, or a detached HEAD (a SHA-1 or SHA-256 object id).
fn valid_head(path: &Path) -> bool {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::read_link(path);
        return target.is_ok_and(|target| target.to_string_lossy().starts_with("refs/"));
    }
    let Some(mut text) = read_small(path) else {
        return false;
    };
    text.truncate(255);
    match text.strip_prefix(b"ref:") {
        Some(rest) => rest.trim_ascii_start().starts_with(b"refs/"),
        None => text.iter().take_while(|b| b.is_ascii_hexdigit()).count() >= 40,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::tests::init;

    fn find(cwd: &Path) -> Root {
        discover(cwd).0
    }

    #[test]
    fn the_nearest_repository_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let cwd = root.join("repo/a/b");
        fs::create_dir_all(&cwd).unwrap();
        assert_eq!(find(&cwd), Root::None(NoRoot::NoRepository));
        init(&root.join("repo"));
        assert_eq!(find(&cwd), Root::WorkTree(root.join("repo")));
        // An empty `.git` folder is not a repository: passed over.
        fs::create_dir_all(root.join("repo/a/.git")).unwrap();
        assert_eq!(find(&cwd), Root::WorkTree(root.join("repo")));
        // One with a HEAD but no objects neither.
        fs::write(root.join("repo/a/.git/HEAD"), "ref: refs/heads/x\n").unwrap();
        assert_eq!(find(&cwd), Root::WorkTree(root.join("repo")));
        init(&root.join("repo/a"));
        assert_eq!(find(&cwd), Root::WorkTree(root.join("repo/a")));
    }

    #[test]
    fn heads_git_accepts() {
        let tmp = tempfile::tempdir().unwrap();
        let head = tmp.path().join("HEAD");
        for (text, valid) in [
            ("ref: refs/heads/main\n", true),
            ("ref:refs/heads/main", true),
            ("ref: \t refs/x", true),
            (&"a".repeat(40), true),
            (&format!("{}\n", "0123456789abcdef".repeat(4)), true),
            ("ref: heads/main", false),
            (&"a".repeat(39), false),
            ("", false),
        ] {
            fs::write(&head, text).unwrap();
            assert_eq!(valid_head(&head), valid, "{text:?}");
        }
        assert!(!valid_head(&tmp.path().join("missing")));
    }

    #[test]
    fn git_files_must_lead_to_a_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        init(&root.join("repo"));
        let linked = root.join("repo/linked");
        fs::create_dir_all(&linked).unwrap();
        // A linked work tree: its gitdir has HEAD and a commondir.
        let gitdir = root.join("repo/.git/worktrees/linked");
        fs::create_dir_all(&gitdir).unwrap();
        fs::write(gitdir.join("HEAD"), "ref: refs/heads/x\n").unwrap();
        fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        fs::write(linked.join(".git"), "gitdir: ../.git/worktrees/linked\n").unwrap();
        assert_eq!(find(&linked), Root::WorkTree(linked.clone()));
        // Broken: git fails, so no root at all (not the outer repository).
        for broken in ["gitdir: /no/such/place\n", "not a gitdir line\n", ""] {
            fs::write(linked.join(".git"), broken).unwrap();
            assert_eq!(
                find(&linked),
                Root::None(NoRoot::BrokenGitFile(linked.join(".git"))),
                "{broken:?}"
            );
        }
    }

    /// Go's `exec.LookPath("git")`: the first executable `git` on `PATH`;
    /// none without `PATH`; one found by a relative entry (or an empty
    /// one, which is `.`) refused, as Go refuses it.
    #[cfg(unix)]
    #[test]
    fn git_is_looked_up_as_go_looks_it_up() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (plain, bin) = (root.join("plain"), root.join("bin"));
        fs::create_dir_all(plain.join("git")).unwrap();
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("git"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(bin.join("git"), fs::Permissions::from_mode(0o755)).unwrap();
        let look = |path: Option<&str>| {
            let path = path.map(OsString::from);
            look_path_git(&|name| (name == "PATH").then(|| path.clone()).flatten())
        };
        assert!(look(None).is_err());
        assert!(look(Some("")).is_err());
        let both = format!("{}:{}", plain.display(), bin.display());
        assert_eq!(look(Some(&both)), Ok(bin.join("git")), "a folder is no git");
        assert!(look(Some(&plain.display().to_string())).is_err());
        let relative = format!("rel:{}", bin.display());
        assert_eq!(
            look(Some(&relative)),
            Ok(bin.join("git")),
            "rel/git is missing"
        );
        let empty_first = format!(":{}", bin.display());
        let here = std::env::current_dir().unwrap();
        let found_here = here.join("git").exists();
        assert_eq!(look(Some(&empty_first)).is_err(), found_here);
    }

    /// Without git to ask, or in no folder, no root; a repository whose
    /// files are this user's needs no git run.
    #[test]
    fn no_git_no_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let cwd = root.join("repo/a");
        fs::create_dir_all(&cwd).unwrap();
        init(&root.join("repo"));
        let no_path = |_: &str| None;
        assert!(matches!(of(&cwd, &no_path), Root::None(NoRoot::NoGit(_))));
        assert_eq!(
            of(&root.join("repo/missing"), &no_path),
            Root::None(NoRoot::NoFolder)
        );
        // No repository: the same answer with or without git.
        let outside = root.join("elsewhere");
        fs::create_dir_all(&outside).unwrap();
        assert_eq!(of(&outside, &no_path), Root::None(NoRoot::NoRepository));
        // A `git` that is not git: never run where the owners are this
        // user's.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let bin = root.join("bin");
            fs::create_dir_all(&bin).unwrap();
            fs::write(bin.join("git"), "#!/bin/sh\nexit 1\n").unwrap();
            fs::set_permissions(bin.join("git"), fs::Permissions::from_mode(0o755)).unwrap();
            let path = bin.clone().into_os_string();
            let env = |name: &str| (name == "PATH").then(|| path.clone());
            assert_eq!(of(&cwd, &env), Root::WorkTree(root.join("repo")));
            // A variable that moves git's search: git is asked, and this
            // one fails.
            let env = |name: &str| match name {
                "PATH" => Some(path.clone()),
                "GIT_CEILING_DIRECTORIES" => Some(OsString::from("/")),
                _ => None,
            };
            assert!(matches!(of(&cwd, &env), Root::None(NoRoot::GitSaid(_))));
        }
    }

    #[test]
    fn a_repository_without_a_work_tree_has_no_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        init(&root.join("repo"));
        let inside = root.join("repo/.git/refs");
        assert_eq!(
            find(&inside),
            Root::None(NoRoot::NoWorkTree(root.join("repo/.git")))
        );
    }
}
