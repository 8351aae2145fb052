//! Where Crush keeps its files, per platform (spec sections 3 and 5), as
//! Crush v0.90 computes them (`internal/config/load.go`: `GlobalConfig`,
//! `GlobalConfigData`; `provider.go`: `cachePathFor`; `internal/home`).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Looks up an environment variable; empty values count as unset, as they do
/// for XDG variables.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// [`EnvLookup`] over the environment as Crush sees it: the process's
/// variables, and those of the `.env` file the command line installed
/// (`crate::environment`).
pub fn process_env(name: &str) -> Option<OsString> {
    crate::environment::var(name)
}

/// No folder could be derived from the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot tell where {what} lives: {needs} is not set, or empty")]
pub struct NoHome {
    what: &'static str,
    needs: &'static str,
}

/// The platform whose rules apply: the one this was built for, or, in
/// tests of the rules, another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Platform {
    /// Linux, macOS and the other Unix systems.
    Unix,
    /// Windows.
    Windows,
}

impl Platform {
    /// The platform this program runs on.
    pub(crate) fn current() -> Platform {
        if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Unix
        }
    }
}

/// The home folder: Go's `os.UserHomeDir`, `%USERPROFILE%` on Windows,
/// `$HOME` elsewhere.
fn home(platform: Platform, env: EnvLookup, what: &'static str) -> Result<PathBuf, NoHome> {
    let var = match platform {
        Platform::Windows => "USERPROFILE",
        Platform::Unix => "HOME",
    };
    env(var)
        .map(PathBuf::from)
        .ok_or(NoHome { what, needs: var })
}

/// The home folder, as Crush's `home.Dir` reads it.
pub(crate) fn home_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    home(Platform::current(), env, "the home folder")
}

/// The files a program named `name` may be on `PATH`, in the order a shell
/// and Go's `exec.LookPath` try them: each entry (an empty one is the
/// working folder, `.`), on Windows with each extension of `PATHEXT` in
/// lower case, as Go adds them.
pub(crate) fn on_path(env: EnvLookup, name: &str) -> Vec<PathBuf> {
    let names: Vec<String> = match cfg!(windows) {
        true => (env("PATHEXT").unwrap_or(".com;.exe;.bat;.cmd".into()))
            .to_string_lossy()
            .split(';')
            .filter(|e| !e.is_empty())
            .map(|e| format!("{name}{}", e.to_ascii_lowercase()))
            .collect(),
        false => vec![name.to_owned()],
    };
    std::env::split_paths(&env("PATH").unwrap_or_default())
        .map(|dir| match dir.as_os_str().is_empty() {
            true => ".".into(),
            false => dir,
        })
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .collect()
}

/// Crush's data folder, where the cache lives: `$XDG_DATA_HOME/crush`, else
/// `%LOCALAPPDATA%\crush` on Windows (see `data_dir_on`), else
/// `~/.local/share/crush`.
pub fn data_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    // Absolute: the front hands Crush this folder, and Crush may start in
    // another (`-c`).
    let dir = data_dir_on(Platform::current(), env)?;
    Ok(clean(&std::path::absolute(&dir).unwrap_or(dir)))
}

/// Go's `filepath.Clean`, by the text, as `filepath.Join` cleans every path
/// Crush builds: `.` dropped, `..` taking the folder before it away, even
/// where that folder is a link to elsewhere (which the system would
/// follow).
pub(crate) fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            // `..` of the root is the root.
            Component::ParentDir if out.has_root() && out.parent().is_none() => {}
            Component::ParentDir if out.file_name().is_some() => drop(out.pop()),
            Component::ParentDir => out.push(".."),
            other => out.push(other),
        }
    }
    out
}

/// [`data_dir`] by the rules of `platform`.
pub(crate) fn data_dir_on(platform: Platform, env: EnvLookup) -> Result<PathBuf, NoHome> {
    if let Some(xdg) = env("XDG_DATA_HOME") {
        return Ok(PathBuf::from(xdg).join("crush"));
    }
    let what = "the data folder";
    match platform {
        // `%LOCALAPPDATA%`, else `%USERPROFILE%\AppData\Local` (Go's
        // `cmp.Or` of the two).
        Platform::Windows => match env("LOCALAPPDATA") {
            Some(dir) => Ok(PathBuf::from(dir).join("crush")),
            None => env("USERPROFILE")
                .map(|p| PathBuf::from(p).join("AppData").join("Local").join("crush"))
                .ok_or(NoHome {
                    what,
                    needs: "LOCALAPPDATA or USERPROFILE",
                }),
        },
        Platform::Unix => Ok(home(platform, env, what)?.join(".local/share/crush")),
    }
}

/// Crush's global config folder: `$CRUSH_GLOBAL_CONFIG`, else
/// `$XDG_CONFIG_HOME/crush`, else `~/.config/crush`, on Windows too
/// (`%USERPROFILE%\.config\crush`: Crush's `home.Config`).
pub(crate) fn config_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    config_dir_on(Platform::current(), env)
}

/// [`config_dir`] by the rules of `platform`.
pub(crate) fn config_dir_on(platform: Platform, env: EnvLookup) -> Result<PathBuf, NoHome> {
    if let Some(dir) = env("CRUSH_GLOBAL_CONFIG") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(xdg) = env("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(xdg).join("crush"));
    }
    Ok(home(platform, env, "the config folder")?
        .join(".config")
        .join("crush"))
}

/// Folder of the global state file `crush.json`: `$CRUSH_GLOBAL_DATA`, else
/// the data folder.
pub(crate) fn global_state_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    match env("CRUSH_GLOBAL_DATA") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => data_dir_on(Platform::current(), env),
    }
}

/// Variable that moves the system file, for tests and for systems whose
/// `/etc` is elsewhere; Crush itself has none.
pub(crate) const SYSTEM_CONFIG_ENV: &str = "CRUSH_PROVIDERS_SYSTEM_CONFIG";

/// The system-wide configuration file Crush reads below every other:
/// `/etc/crush/crush.json`, and none on Windows (`config_unix.go`,
/// `config_windows.go`: `systemConfigPath`).
pub(crate) fn system_config_on(platform: Platform, env: EnvLookup) -> Option<PathBuf> {
    if let Some(path) = env(SYSTEM_CONFIG_ENV) {
        return Some(PathBuf::from(path));
    }
    match platform {
        Platform::Windows => None,
        Platform::Unix => Some(PathBuf::from("/etc/crush/crush.json")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[cfg(unix)]
    #[test]
    fn unix_defaults_follow_home() {
        let env = env_of(&[("HOME", "/h")]);
        assert_eq!(
            data_dir(&env).unwrap(),
            PathBuf::from("/h/.local/share/crush")
        );
        assert_eq!(config_dir(&env).unwrap(), PathBuf::from("/h/.config/crush"));
        assert_eq!(
            global_state_dir(&env).unwrap(),
            PathBuf::from("/h/.local/share/crush")
        );
    }

    #[test]
    fn xdg_and_crush_variables_win() {
        let env = env_of(&[
            ("HOME", "/h"),
            ("USERPROFILE", "/h"),
            ("XDG_DATA_HOME", "/d"),
            ("XDG_CONFIG_HOME", "/c"),
        ]);
        assert_eq!(data_dir(&env).unwrap(), PathBuf::from("/d/crush"));
        assert_eq!(config_dir(&env).unwrap(), PathBuf::from("/c/crush"));
        let env = env_of(&[
            ("XDG_DATA_HOME", "/d"),
            ("CRUSH_GLOBAL_CONFIG", "/gc"),
            ("CRUSH_GLOBAL_DATA", "/gd"),
        ]);
        assert_eq!(config_dir(&env).unwrap(), PathBuf::from("/gc"));
        assert_eq!(global_state_dir(&env).unwrap(), PathBuf::from("/gd"));
        assert_eq!(data_dir(&env).unwrap(), PathBuf::from("/d/crush"));
    }

    /// Windows, by its rules, whatever this runs on: the config under the
    /// user's profile (not `%LOCALAPPDATA%`), the data under
    /// `%LOCALAPPDATA%`, else the profile's `AppData\Local`.
    #[test]
    fn windows_folders() {
        let w = Platform::Windows;
        let profile = PathBuf::from(r"C:\Users\ann");
        let env = env_of(&[
            ("USERPROFILE", r"C:\Users\ann"),
            ("LOCALAPPDATA", r"D:\Local"),
        ]);
        assert_eq!(
            config_dir_on(w, &env).unwrap(),
            profile.join(".config").join("crush")
        );
        assert_eq!(
            data_dir_on(w, &env).unwrap(),
            PathBuf::from(r"D:\Local").join("crush")
        );
        let env = env_of(&[("USERPROFILE", r"C:\Users\ann")]);
        assert_eq!(
            data_dir_on(w, &env).unwrap(),
            profile.join("AppData").join("Local").join("crush"),
            "without LOCALAPPDATA"
        );
        let env = env_of(&[("HOME", "/h"), ("LOCALAPPDATA", r"D:\Local")]);
        assert_eq!(
            config_dir_on(w, &env).unwrap_err().to_string(),
            "cannot tell where the config folder lives: USERPROFILE is not set, or empty",
            "HOME is not Windows' home"
        );
        let env = env_of(&[("XDG_CONFIG_HOME", r"E:\xdg"), ("XDG_DATA_HOME", r"E:\d")]);
        assert_eq!(
            config_dir_on(w, &env).unwrap(),
            PathBuf::from(r"E:\xdg").join("crush")
        );
        assert_eq!(
            data_dir_on(w, &env).unwrap(),
            PathBuf::from(r"E:\d").join("crush")
        );
        assert_eq!(
            data_dir_on(w, &env_of(&[])).unwrap_err().to_string(),
            "cannot tell where the data folder lives: LOCALAPPDATA or USERPROFILE is not set, or empty"
        );
        assert_eq!(system_config_on(w, &env_of(&[])), None);
        assert_eq!(
            system_config_on(Platform::Unix, &env_of(&[])),
            Some(PathBuf::from("/etc/crush/crush.json"))
        );
    }

    #[test]
    fn unix_rules_ignore_windows_variables() {
        let u = Platform::Unix;
        let env = env_of(&[
            ("HOME", "/h"),
            ("USERPROFILE", "/p"),
            ("LOCALAPPDATA", "/l"),
        ]);
        assert_eq!(
            config_dir_on(u, &env).unwrap(),
            PathBuf::from("/h/.config/crush")
        );
        assert_eq!(
            data_dir_on(u, &env).unwrap(),
            PathBuf::from("/h/.local/share/crush")
        );
    }

    #[cfg(unix)]
    #[test]
    fn no_home_is_an_error_that_says_what_is_missing() {
        let env = env_of(&[]);
        assert_eq!(
            data_dir(&env).unwrap_err().to_string(),
            "cannot tell where the data folder lives: HOME is not set, or empty"
        );
    }

    /// Go's `filepath.Clean` by the text: `..` takes back the name before
    /// it, never the root; `.` goes.
    #[cfg(unix)]
    #[test]
    fn paths_are_cleaned_as_go_cleans_them() {
        for (path, cleaned) in [
            ("/home/u/link/../crush", "/home/u/crush"),
            ("/home/u/./a/./b/", "/home/u/a/b"),
            ("/../../x", "/x"),
            ("a/../../b", "../b"),
            ("/", "/"),
            ("/w/./a/../b", "/w/b"),
            ("/w/x/../../../y", "/y"),
            ("../../x/./y/..", "../../x"),
        ] {
            assert_eq!(clean(Path::new(path)), Path::new(cleaned), "{path}");
        }
    }
}
