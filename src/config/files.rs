//! Which configuration files there are: the system's, the global ones,
//! the workspace's and the project's, found as Crush v0.90 finds them
//! (`internal/config/load.go`: `lookupConfigs`, `setDefaults`;
//! `internal/fsext/lookup.go`: `LookupBounded`, `LookupClosestBounded`,
//! `probeEnt`; `owner_others.go`, `owner_windows.go`), and ranked in the
//! spec's order (section 5), which [`super::resolve_in`] merges them in.

use std::fs;
use std::io::{
    self,
    ErrorKind::{NotFound, PermissionDenied},
};
use std::path::{Path, PathBuf};

use super::{Format, Level};
use crate::store::paths::{self, EnvLookup, clean};

/// The names of project files in one folder, lowest priority first (spec
/// levels 6 to 9).
pub(crate) const PROJECT_NAMES: [(&str, Format); 4] = [
    ("crush.json", Format::Json),
    ("crushrc", Format::Crushrc),
    (".crush.json", Format::Json),
    (".crushrc", Format::Crushrc),
];

/// A project file Crush passes over, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub why: String,
}

/// The project files of a working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Project {
    /// The files, the farthest folder's first, each folder's in
    /// [`PROJECT_NAMES`] order (and so are those passed over).
    pub files: Vec<(PathBuf, Format)>,
    /// Files found but passed over: another user's.
    pub skipped: Vec<SkippedFile>,
    /// When a file could not be looked at (not missing, not forbidden),
    /// Crush reads no project file at all: the path, and why in the
    /// system's words.
    pub dropped: Option<(PathBuf, String)>,
}

/// Who owns a file or folder, as Crush compares owners: the user id on
/// Unix; on Windows nobody (Crush skips the check there).
pub(crate) fn owner(path: &Path) -> io::Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).map(|m| Some(m.uid()))
    }
    #[cfg(not(unix))]
    {
        fs::metadata(path).map(|_| None)
    }
}

/// Whether a file of `file_owner` is read in a folder walk started by a
/// working directory of `walk_owner`: only when they are the same user
/// (`probeEnt`), so that a shared folder cannot configure you.
pub(crate) fn owned_alike(walk_owner: Option<u32>, file_owner: Option<u32>) -> bool {
    walk_owner.is_none() || walk_owner == file_owner
}

/// The folders a walk from `cwd` visits, nearest first: `cwd` and each
/// parent up to `root` (inclusive), or `cwd` alone without a root. As in
/// Crush (`traverseUpBounded`), the parents are those of `cwd` as written,
/// symbolic links kept, and each is compared with the root once its links
/// are resolved: from a link into a subfolder of the work tree, the walk
/// never meets the root and goes up to `/`.
pub(crate) fn walk(cwd: &Path, root: Option<&Path>) -> Vec<PathBuf> {
    let Some(root) = root else {
        return vec![cwd.to_owned()];
    };
    let resolved = |dir: &Path| fs::canonicalize(dir).unwrap_or_else(|_| clean(dir));
    let stop = resolved(root);
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_owned());
        if dir == root || resolved(dir) == stop {
            break;
        }
    }
    dirs
}

/// The project files from `cwd` up to `root`, those of another owner than
/// `cwd`'s passed over.
pub(crate) fn project(cwd: &Path, root: Option<&Path>) -> Project {
    let mut project = Project::default();
    let walk_owner = match owner(cwd) {
        Ok(owner) => owner,
        Err(e) => {
            project.dropped = Some((cwd.to_owned(), e.to_string()));
            return project;
        }
    };
    for dir in walk(cwd, root).into_iter().rev() {
        for (name, format) in PROJECT_NAMES {
            let path = dir.join(name);
            match owner(&path) {
                Ok(file_owner) if owned_alike(walk_owner, file_owner) => {
                    project.files.push((path, format))
                }
                Ok(file_owner) => {
                    let why = format!(
                        "owned by user {}, not by the working directory's owner ({}): Crush reads only its own user's project files",
                        file_owner.unwrap_or_default(),
                        walk_owner.unwrap_or_default()
                    );
                    project.skipped.push(SkippedFile { path, why });
                }
                Err(e) if matches!(e.kind(), NotFound | PermissionDenied) => {}
                Err(e) => {
                    project.dropped = Some((path.to_owned(), e.to_string()));
                    project.files.clear();
                    return project;
                }
            }
        }
    }
    project
}

/// Where the workspace folder came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceFrom {
    /// `-D/--data-dir`.
    Flag,
    /// `options.data_directory` (`option data-directory`), set there.
    Option(super::Origin),
    /// The nearest `.crush` folder up to the project root.
    Nearest,
    /// `./.crush`, the default.
    Default,
}

/// The workspace folder, which holds the workspace file `crush.json`
/// (level 3), and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The folder.
    pub dir: PathBuf,
    /// Where it came from.
    pub from: WorkspaceFrom,
}

/// The workspace folder: `-D`, else `options.data_directory`, else the
/// nearest `.crush` up to the project root (not in the home folder, and
/// only the working directory's owner's), else `./.crush`; a relative
/// folder is taken from the working directory. With a relative `-c X`,
/// Crush's default is `X/.crush` taken from the working directory (its
/// `setDefaults` joins `X` to `.crush`, then joins `X` to that once more,
/// in the folder `-c` moved it to): `./X/.crush`.
pub(crate) fn workspace(
    flag: Option<&Path>,
    option: Option<(String, super::Origin)>,
    cwd: &Path,
    cwd_flag: Option<&Path>,
    root: Option<&Path>,
    home: Option<&Path>,
) -> Workspace {
    let (dir, from) = if let Some(flag) = flag.filter(|f| !f.as_os_str().is_empty()) {
        (cwd.join(flag), WorkspaceFrom::Flag)
    } else if let Some((dir, origin)) = option.filter(|(d, _)| !d.is_empty()) {
        (cwd.join(dir), WorkspaceFrom::Option(origin))
    } else if let Some(found) = nearest_dot_crush(cwd, root, home) {
        (found, WorkspaceFrom::Nearest)
    } else {
        let base = cwd_flag
            .filter(|f| f.is_relative())
            .unwrap_or(Path::new("."));
        (cwd.join(base).join(".crush"), WorkspaceFrom::Default)
    };
    Workspace {
        dir: clean(&dir),
        from,
    }
}

/// `LookupClosestBounded(cwd, root, ".crush")`: the first `.crush` from
/// `cwd` up; one that cannot be looked at, or another user's, ends the
/// search with nothing, and so does one in the home folder.
fn nearest_dot_crush(cwd: &Path, root: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let walk_owner = owner(cwd).ok()?;
    for dir in walk(cwd, root) {
        let path = dir.join(".crush");
        match owner(&path) {
            Err(e) if e.kind() == NotFound => continue,
            Err(_) => return None,
            Ok(file_owner) if !owned_alike(walk_owner, file_owner) => return None,
            Ok(_) if home == Some(dir.as_path()) => return None,
            Ok(_) => return Some(path),
        }
    }
    None
}

/// The global files, each with its level, in the spec's order, lowest
/// priority first: the system's, the global state, the global JSON and
/// crushrc, as `env` locates them.
pub(super) fn globals(env: EnvLookup) -> Vec<(PathBuf, Format, Level)> {
    let platform = paths::Platform::current();
    let config_dir = paths::config_dir(env).ok();
    let state = paths::global_state_dir(env).ok();
    [
        paths::system_config_on(platform, env).map(|p| (p, Format::Json, Level::System)),
        state.map(|d| (d.join("crush.json"), Format::Json, Level::GlobalState)),
        config_dir
            .as_ref()
            .map(|d| (d.join("crush.json"), Format::Json, Level::GlobalJson)),
        config_dir.map(|d| (d.join("crushrc"), Format::Crushrc, Level::GlobalRc)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The working folder Crush reads its project settings from, and `-c` as
/// written when it is relative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkingFolder {
    /// The folder (absolute) by the name Crush gives it: its parents are
    /// the ones the walk for project files visits.
    pub dir: PathBuf,
    /// `-c/--cwd` as written, when relative ([`super::Inputs::cwd_flag`]).
    pub flag: Option<PathBuf>,
}

/// The working folder of Crush v0.90 started in this process's folder
/// with `-c/--cwd` `flag` (`internal/cmd/root.go`: `ResolveCwd`, then
/// `filepath.Abs` of what it returns). Without `-c`, Go's `os.Getwd`:
/// `$PWD` when it is absolute and names this very folder (a symbolic link
/// kept), else the physical path. With `-c DIR`, Crush moves to `DIR` and
/// goes on with `DIR` as written: an absolute one cleaned, a relative one
/// taken from the folder it moved to (`os.Getwd` there, where `$PWD` no
/// longer names it) — `-c sub` reads the project of `./sub/sub`, which
/// may not exist. `Err` when `DIR` is not a folder to move to: Crush
/// fails too.
pub(crate) fn working_folder(flag: Option<&Path>) -> io::Result<WorkingFolder> {
    let here = std::env::current_dir()?;
    let Some(flag) = flag else {
        let dir = go_getwd(&here)?;
        return Ok(WorkingFolder { dir, flag: None });
    };
    let moved_to = here.join(flag);
    if !fs::metadata(&moved_to)?.is_dir() {
        return Err(io::Error::other("not a folder"));
    }
    let (dir, flag) = match flag.is_absolute() {
        true => (clean(flag), None),
        false => (
            clean(&go_getwd(&moved_to)?.join(flag)),
            Some(flag.to_owned()),
        ),
    };
    Ok(WorkingFolder { dir, flag })
}

/// Go's `os.Getwd` in the folder `dir`: on Unix `$PWD` when it is
/// absolute and the same file as `dir`, else `dir`'s physical path
/// (Windows' path without its `\\?\` prefix, the `dunce` crate).
fn go_getwd(dir: &Path) -> io::Result<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from)
            && pwd.is_absolute()
            && let (Ok(a), Ok(b)) = (fs::metadata(&pwd), fs::metadata(dir))
            && (a.dev(), a.ino()) == (b.dev(), b.ino())
        {
            return Ok(pwd);
        }
    }
    dunce::canonicalize(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_stops_at_the_root_or_stays_in_cwd() {
        let cwd = Path::new("/r/a/b");
        assert_eq!(walk(cwd, None), [PathBuf::from("/r/a/b")]);
        assert_eq!(
            walk(cwd, Some(Path::new("/r"))),
            ["/r/a/b", "/r/a", "/r"].map(PathBuf::from)
        );
    }

    #[test]
    fn owners_must_match_unless_windows() {
        assert!(owned_alike(Some(1000), Some(1000)));
        assert!(!owned_alike(Some(1000), Some(0)));
        assert!(owned_alike(None, None));
    }

    #[test]
    fn the_workspace_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let cwd = root.join("repo/sub");
        fs::create_dir_all(&cwd).unwrap();
        let repo = root.join("repo");
        let inputs = |flag, option: Option<&str>, home| {
            let option = option.map(|o| (o.to_owned(), super::super::Origin::Default));
            workspace(flag, option, &cwd, None, Some(repo.as_path()), home)
        };
        let ws = inputs(None, None, None);
        assert_eq!(
            (ws.dir, ws.from),
            (cwd.join(".crush"), WorkspaceFrom::Default)
        );
        fs::create_dir_all(root.join("repo/.crush")).unwrap();
        let ws = inputs(None, None, None);
        assert_eq!(
            (ws.dir, ws.from),
            (root.join("repo/.crush"), WorkspaceFrom::Nearest)
        );
        let home = root.join("repo");
        let ws = inputs(None, None, Some(&home));
        assert_eq!(ws.from, WorkspaceFrom::Default, "not in the home folder");
        let ws = inputs(None, Some("../state"), None);
        assert_eq!(ws.dir, root.join("repo/state"));
        assert!(matches!(ws.from, WorkspaceFrom::Option(_)));
        let ws = inputs(Some(Path::new("/abs/d")), Some("x"), None);
        assert_eq!(
            (ws.dir, ws.from),
            (PathBuf::from("/abs/d"), WorkspaceFrom::Flag)
        );
    }
}
