//! The project root: where the walk for project files stops. Crush asks
//! `git rev-parse --show-toplevel` in the working directory
//! (`internal/config/load.go`: `computeWorktreeRoot`, `projectBoundary`)
//! and, when that fails, searches the working directory alone. This finds
//! the same answer without starting git, by git's own discovery rules
//! (`setup.c`: `setup_git_directory_gently_1`, `is_git_directory`,
//! `read_gitfile_gently`, `validate_headref`):
//!
//! - from the working directory up, the first folder holding a `.git` that
//!   is a repository is the root; a `.git` folder that is not one (empty,
//!   say) is passed over, and the walk goes on;
//! - a `.git` **file** must say `gitdir: <path>` of a repository; a broken
//!   one makes git fail (`not a git repository`), so there is no root;
//! - a folder that is itself a repository (a bare one, or the inside of a
//!   `.git`) has no work tree: no root;
//! - the walk does not cross into another file system (git's default
//!   without `GIT_DISCOVERY_ACROSS_FILESYSTEM`).
//!
//! A repository is a folder with a valid `HEAD` (a symbolic link to
//! `refs/…`, a file `ref: refs/…`, or an object id), and `objects` and
//! `refs` in its common folder (the folder itself, or the one its
//! `commondir` file names).

use std::fs;
use std::path::{Path, PathBuf};

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
}

/// Finds the project root of `cwd`.
pub(crate) fn find(cwd: &Path) -> Root {
    let start = device(cwd);
    for dir in cwd.ancestors() {
        if start.is_some() && device(dir) != start {
            break;
        }
        let dotgit = dir.join(".git");
        match fs::metadata(&dotgit) {
            Ok(meta) if meta.is_file() => {
                return match read_gitfile(&dotgit) {
                    Some(gitdir) if is_git_directory(&gitdir) => Root::WorkTree(dir.to_owned()),
                    _ => Root::None(NoRoot::BrokenGitFile(dotgit)),
                };
            }
            Ok(_) if is_git_directory(&dotgit) => return Root::WorkTree(dir.to_owned()),
            _ => {}
        }
        if is_git_directory(dir) {
            return Root::None(NoRoot::NoWorkTree(dir.to_owned()));
        }
    }
    Root::None(NoRoot::NoRepository)
}

#[cfg(unix)]
fn device(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).ok().map(|m| m.dev())
}

#[cfg(not(unix))]
fn device(_: &Path) -> Option<u64> {
    None
}

/// The folder a `.git` file names: `gitdir: <path>`, relative to the
/// file's folder unless absolute.
fn read_gitfile(path: &Path) -> Option<PathBuf> {
    let text = read_small(path)?;
    let rest = text.strip_prefix(b"gitdir: ")?;
    let rest = String::from_utf8(rest.to_vec()).ok()?;
    let gitdir = rest.trim_end_matches(['\n', '\r']);
    let gitdir = Path::new(gitdir);
    Some(if gitdir.is_absolute() {
        gitdir.to_owned()
    } else {
        path.parent()?.join(gitdir)
    })
}

/// git's `is_git_directory`.
pub(crate) fn is_git_directory(dir: &Path) -> bool {
    if !valid_head(&dir.join("HEAD")) {
        return false;
    }
    let common = match read_small(&dir.join("commondir")).ok_or(()) {
        Ok(text) => {
            let text = String::from_utf8_lossy(&text);
            let named = Path::new(text.trim_end_matches(['\n', '\r']));
            if named.is_absolute() {
                named.to_owned()
            } else {
                dir.join(named)
            }
        }
        Err(_) => dir.to_owned(),
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

/// The start of a small file of git's, when it is a regular file: a FIFO
/// is never opened (it would block the start).
fn read_small(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    if !fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut text)
        .ok()?;
    Some(text)
}

/// git's `validate_headref`.
fn valid_head(path: &Path) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if meta.file_type().is_symlink() {
        return fs::read_link(path)
            .is_ok_and(|target| target.to_string_lossy().starts_with("refs/"));
    }
    let Some(mut text) = read_small(path) else {
        return false;
    };
    text.truncate(255);
    if let Some(rest) = text.strip_prefix(b"ref:") {
        let rest = rest.trim_ascii_start();
        if rest.starts_with(b"refs/") {
            return true;
        }
    }
    // A detached HEAD: a SHA-1 or SHA-256 object id.
    let hex = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    hex >= 40
}

/// A minimal repository at `dir/.git`, for tests.
#[cfg(test)]
pub(crate) fn init(dir: &Path) {
    let git = dir.join(".git");
    fs::create_dir_all(git.join("objects")).unwrap();
    fs::create_dir_all(git.join("refs")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

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
