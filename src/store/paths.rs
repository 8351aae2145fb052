//! Where Crush keeps its files, per platform (spec section 3 and 5).

use std::ffi::OsString;
use std::path::PathBuf;

/// Looks up an environment variable; empty values count as unset, as they do
/// for XDG variables.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// [`EnvLookup`] over the process environment.
pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// No folder could be derived from the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot tell where {what} lives: {needs} is not set")]
pub struct NoHome {
    what: &'static str,
    needs: &'static str,
}

fn home(env: EnvLookup, what: &'static str) -> Result<PathBuf, NoHome> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    env(var)
        .map(PathBuf::from)
        .ok_or(NoHome { what, needs: var })
}

/// `%LOCALAPPDATA%\crush`, where Windows keeps both of Crush's folders.
fn local_app_data(env: EnvLookup, what: &'static str) -> Result<PathBuf, NoHome> {
    env("LOCALAPPDATA")
        .map(|d| PathBuf::from(d).join("crush"))
        .ok_or(NoHome {
            what,
            needs: "LOCALAPPDATA",
        })
}

/// Crush's data folder: `$XDG_DATA_HOME/crush`, else `%LOCALAPPDATA%\crush`
/// on Windows, else `~/.local/share/crush`.
pub fn data_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    if let Some(xdg) = env("XDG_DATA_HOME") {
        return Ok(PathBuf::from(xdg).join("crush"));
    }
    if cfg!(windows) {
        return local_app_data(env, "the data folder");
    }
    Ok(home(env, "the data folder")?.join(".local/share/crush"))
}

/// Crush's global config folder: `$CRUSH_GLOBAL_CONFIG`, else
/// `$XDG_CONFIG_HOME/crush`, else `%LOCALAPPDATA%\crush` on Windows, else
/// `~/.config/crush`.
pub fn config_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    if let Some(dir) = env("CRUSH_GLOBAL_CONFIG") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(xdg) = env("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(xdg).join("crush"));
    }
    if cfg!(windows) {
        return local_app_data(env, "the config folder");
    }
    Ok(home(env, "the config folder")?.join(".config/crush"))
}

/// Folder of the global state file `crush.json`: `$CRUSH_GLOBAL_DATA`, else
/// the data folder.
pub fn global_state_dir(env: EnvLookup) -> Result<PathBuf, NoHome> {
    match env("CRUSH_GLOBAL_DATA") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => data_dir(env),
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

    #[cfg(unix)]
    #[test]
    fn no_home_is_an_error_that_says_what_is_missing() {
        let env = env_of(&[]);
        assert_eq!(
            data_dir(&env).unwrap_err().to_string(),
            "cannot tell where the data folder lives: HOME is not set"
        );
    }
}
