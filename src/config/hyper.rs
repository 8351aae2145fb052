//! Hyper's API key as Crush finds it: `HYPER_API_KEY`, else the merged
//! configuration's `providers.hyper.api_key` (JSON files, `provider add
//! hyper --api-key` in a crushrc; `crush login hyper` writes the global
//! state's).

use std::path::{Path, PathBuf};

#[cfg(test)]
use super::files::config_files;
use super::{Format, crushrc, read};
use crate::store::paths::{self, EnvLookup};

/// The environment variable Crush takes Hyper's key from first.
pub(crate) const HYPER_KEY_ENV: &str = "HYPER_API_KEY";

/// Where a Hyper API key is set, when one is, as Crush looks for it:
/// `HYPER_API_KEY`, else `providers.hyper.api_key` of the merged
/// configuration (JSON files, and `provider add hyper --api-key` in a
/// crushrc; `crush login hyper` writes the global state's). A command
/// this reader cannot evaluate that may set one counts as set: the answer
/// only decides whether Crush keeps fetching for itself, the safe side.
#[cfg(test)]
pub(crate) fn hyper_key(cwd: &Path, env: EnvLookup) -> Option<String> {
    find_hyper_key(cwd, env).map(|key| key.origin)
}

/// A Hyper key that is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HyperKey {
    /// `HYPER_API_KEY`, or the file (and crushrc line) that sets it.
    pub origin: String,
    /// The key as Crush sends it (a config's value as written, as Crush's
    /// `resolveHyperAPIKey` takes it); `None` when only a shell could
    /// tell it (a crushrc command this reader does not run).
    pub value: Option<String>,
}

/// The Hyper key, as [`hyper_key`] finds it, with its value. An empty
/// `HYPER_API_KEY` is none (Crush: `os.Getenv(...) != ""`).
#[cfg(test)]
pub(crate) fn find_hyper_key(cwd: &Path, env: EnvLookup) -> Option<HyperKey> {
    key_in(env, || in_crushs_order(config_files(cwd, env), None, env))
}

/// [`find_hyper_key`] in the files the settings were read from
/// ([`super::Settings::files`], lowest priority first, the workspace
/// file `workspace` among them): the walk that found them is not made
/// again at every start.
pub(crate) fn hyper_key_in(settings: &super::Settings, env: EnvLookup) -> Option<HyperKey> {
    let workspace = settings.workspace.dir.join("crush.json");
    key_in(env, || {
        let files = settings
            .files
            .iter()
            .map(|path| {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                let format = match name.ends_with("crushrc") {
                    true => Format::Crushrc,
                    false => Format::Json,
                };
                (path.clone(), format)
            })
            .collect();
        in_crushs_order(files, Some(&workspace), env)
    })
}

/// A file's place in Crush v0.90's order: its group, then its folder and
/// name within the project's, else its place in the spec's order.
type Rank = (usize, usize, usize);

/// `files` (in the spec's order, lowest priority first) in the order
/// Crush v0.90 merges them, which decides the key Crush sends: the system
/// file, the global JSON and crushrc, the global state (where `crush
/// login hyper` writes), the project's files (in each folder `crush.json`
/// < `.crush.json` < `crushrc` < `.crushrc`), and the workspace file last
/// (`workspace`, else a `crush.json` in a `.crush` folder). The options
/// keep the spec's order (the README's table); the key must be the one
/// Crush sends, or a start sends a stale one.
fn in_crushs_order(
    files: Vec<(PathBuf, Format)>,
    workspace: Option<&Path>,
    env: EnvLookup,
) -> Vec<(PathBuf, Format)> {
    let platform = paths::Platform::current();
    let system = paths::system_config_on(platform, env);
    let config_dir = paths::config_dir(env).ok();
    let state = paths::global_state_dir(env)
        .ok()
        .map(|d| d.join("crush.json"));
    let is_workspace = |path: &Path| match workspace {
        Some(workspace) => path == workspace,
        None => {
            path.file_name().is_some_and(|n| n == "crush.json")
                && path
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".crush")
        }
    };
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut ranked: Vec<(Rank, (PathBuf, Format))> = files
        .into_iter()
        .enumerate()
        .map(|(i, (path, format))| {
            let rank = if Some(&path) == system.as_ref() {
                (0, 0, i)
            } else if config_dir
                .as_deref()
                .is_some_and(|d| path.parent() == Some(d))
            {
                (1, 0, i)
            } else if Some(&path) == state.as_ref() {
                (2, 0, i)
            } else if is_workspace(&path) {
                (4, 0, i)
            } else {
                let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let at = folders
                    .iter()
                    .position(|f| *f == folder)
                    .unwrap_or_else(|| {
                        folders.push(folder);
                        folders.len() - 1
                    });
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                let within = ["crush.json", ".crush.json", "crushrc", ".crushrc"]
                    .iter()
                    .position(|n| *n == name)
                    .unwrap_or(i);
                (3, at, within)
            };
            (rank, (path, format))
        })
        .collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, file)| file).collect()
}

fn key_in(env: EnvLookup, files: impl FnOnce() -> Vec<(PathBuf, Format)>) -> Option<HyperKey> {
    if let Some(value) = env(HYPER_KEY_ENV).filter(|v| !v.is_empty()) {
        return Some(HyperKey {
            origin: HYPER_KEY_ENV.to_string(),
            value: Some(value.to_string_lossy().into_owned()),
        });
    }
    let mut found = None;
    for (path, format) in files() {
        let Some(text) = read::read_regular(&path)
            .ok()
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            continue;
        };
        let said = match format {
            Format::Json => json_hyper_key(&text),
            Format::Crushrc => crushrc_hyper_key(&text),
        };
        match said {
            Some(Said::Set(line, value)) => {
                let at = line.map(|l| format!(":{l}")).unwrap_or_default();
                found = Some(HyperKey {
                    origin: format!("{}{at}", path.display()),
                    value,
                });
            }
            Some(Said::Unset) => found = None,
            None => {}
        }
    }
    found
}

/// What a file says of Hyper's key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    /// Set (at this line of a crushrc), to this value when it is known.
    Set(Option<usize>, Option<String>),
    /// Set empty, or the provider removed.
    Unset,
}

/// What one JSON file says of Hyper's key. Struct fields match in any
/// letter case, as Go decodes them; the map key `hyper` exactly.
fn json_hyper_key(text: &str) -> Option<Said> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let field = |v: &serde_json::Value, name: &str| {
        v.as_object()?
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let hyper = field(&value, "providers")?.get("hyper")?.clone();
    match field(&hyper, "api_key")? {
        serde_json::Value::String(key) if key.is_empty() => Some(Said::Unset),
        serde_json::Value::String(key) => Some(Said::Set(None, Some(key))),
        _ => None,
    }
}

/// What one crushrc says of Hyper's key: its last `provider add hyper
/// --api-key KEY` or `provider remove hyper`, in the order they run.
fn crushrc_hyper_key(text: &str) -> Option<Said> {
    let script = crushrc::parse(text).ok()?;
    let mut events: Vec<(usize, Said)> = Vec::new();
    for command in &script.commands {
        match command.texts().as_slice() {
            ["provider", "remove" | "rm", "hyper", ..] => events.push((command.line, Said::Unset)),
            ["provider", "add", "hyper", rest @ ..] => {
                if let Some(key) = api_key_flag(rest) {
                    let said = match key {
                        "" => Said::Unset,
                        key => Said::Set(Some(command.line), Some(key.to_string())),
                    };
                    events.push((command.line, said));
                }
            }
            _ => {}
        }
    }
    // A command the shell would have to evaluate may set one.
    for skipped in &script.skipped {
        let words: Vec<&str> = skipped.command.split_whitespace().collect();
        let adds = words
            .windows(3)
            .position(|w| w == ["provider", "add", "hyper"]);
        if adds.is_some_and(|at| words[at..].contains(&"--api-key")) {
            events.push((skipped.line, Said::Set(Some(skipped.line), None)));
        }
    }
    events.sort_by_key(|(line, _)| *line);
    events.pop().map(|(_, said)| said)
}

/// The value of the last `--api-key` among the flags of `provider add ID`
/// (`flags`), read as Crush's `applyFlags` reads them: in order, each
/// flag taking its values (so a value that reads `--api-key` is a value),
/// the last one winning. `None` when none is given, or when a flag Crush
/// does not know or a missing value makes the command fail.
fn api_key_flag<'a>(flags: &[&'a str]) -> Option<&'a str> {
    let mut key = None;
    let mut i = 0;
    while i < flags.len() {
        let values = match flags[i] {
            "--extra-header" => 2,
            "--name"
            | "--type"
            | "--api-key"
            | "--base-url"
            | "--disable"
            | "--flat-rate"
            | "--discover-models"
            | "--system-prompt-prefix"
            | "--extra-body"
            | "--provider-options" => 1,
            _ => return None,
        };
        if i + values >= flags.len() {
            return None;
        }
        if flags[i] == "--api-key" {
            key = Some(flags[i + 1]);
        }
        i += 1 + values;
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::fs;

    fn env_of(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn a_hyper_key_comes_from_the_environment_json_or_a_crushrc() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("proj");
        fs::create_dir_all(cwd.join(".git")).unwrap();
        let config = root.path().join("config");
        let data = root.path().join("data");
        fs::create_dir_all(&config).unwrap();
        fs::create_dir_all(&data).unwrap();
        let env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("CRUSH_GLOBAL_DATA", &data),
        ]);
        assert_eq!(hyper_key(&cwd, &env), None);
        // What `crush login hyper` writes, in the global state.
        let state = data.join("crush.json");
        fs::write(&state, r#"{"Providers":{"hyper":{"API_KEY":"tok"}}}"#).unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(state.display().to_string()));
        // A higher file emptying it: none.
        fs::write(
            cwd.join("crush.json"),
            r#"{"providers":{"hyper":{"api_key":""}}}"#,
        )
        .unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        let rc = cwd.join(".crushrc");
        fs::write(&rc, "provider add hyper --api-key sk-1\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(format!("{}:1", rc.display())));
        fs::write(
            &rc,
            "provider add hyper --api-key sk-1\nprovider rm hyper\n",
        )
        .unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        // An expansion only the shell knows: assumed set.
        fs::write(&rc, "provider add hyper --api-key \"$K\"\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(format!("{}:1", rc.display())));
        fs::write(&rc, "provider add other --api-key k\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        let env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("k")),
        ]);
        assert_eq!(hyper_key(&cwd, &env), Some("HYPER_API_KEY".into()));
    }

    /// The key's value, as Crush sends it: the environment's, else the
    /// last file's as written; unknown where only a shell could tell.
    #[test]
    fn the_hyper_keys_value_is_found_where_it_is_set() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("proj");
        fs::create_dir_all(cwd.join(".git")).unwrap();
        let config = root.path().join("config");
        fs::create_dir_all(&config).unwrap();
        let env = env_of(&[("CRUSH_GLOBAL_CONFIG", &config)]);
        let value = |env: &dyn Fn(&str) -> Option<OsString>| {
            let found = find_hyper_key(&cwd, env);
            // The same from the files the settings read.
            let inputs = super::super::Inputs {
                cwd: &cwd,
                env,
                env_source: &|_| None,
                data_dir: None,
            };
            let settings = super::super::resolve_in(&inputs, |_| true).unwrap();
            assert_eq!(hyper_key_in(&settings, env), found);
            found.map(|k| k.value)
        };
        fs::write(
            config.join("crush.json"),
            r#"{"providers":{"hyper":{"api_key":"from-json"}}}"#,
        )
        .unwrap();
        assert_eq!(value(&env), Some(Some("from-json".into())));
        let rc = cwd.join(".crushrc");
        fs::write(&rc, "provider add hyper --api-key from-rc\n").unwrap();
        assert_eq!(value(&env), Some(Some("from-rc".into())));
        fs::write(&rc, "provider add hyper --api-key \"$K\"\n").unwrap();
        assert_eq!(value(&env), Some(None));
        let with_env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("from-env")),
        ]);
        assert_eq!(value(&with_env), Some(Some("from-env".into())));
        // Empty, as Crush reads it: none, and the files decide.
        let empty = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("")),
        ]);
        assert_eq!(value(&empty), Some(None));
    }

    /// A key set by a command that runs otherwise than plainly (after an
    /// assignment or `command`, or inside a statement this reader skips)
    /// is set for Crush, which runs the file.
    #[test]
    fn the_last_api_key_wins_as_crush_applies_the_flags() {
        let key = |rc: &str| match crushrc_hyper_key(rc) {
            Some(Said::Set(_, value)) => value,
            other => panic!("{rc}: {other:?}"),
        };
        assert_eq!(
            key("provider add hyper --api-key first --api-key last\n").as_deref(),
            Some("last")
        );
        assert_eq!(
            key("provider add hyper --name --api-key --api-key k\n").as_deref(),
            Some("k")
        );
        assert_eq!(
            key("provider add hyper --extra-header --api-key x --api-key k\n").as_deref(),
            Some("k")
        );
        for fails in [
            "provider add hyper --name --api-key\n",
            "provider add hyper --bogus 1 --api-key k\n",
            "provider add hyper --api-key\n",
        ] {
            assert_eq!(crushrc_hyper_key(fails), None, "{fails}");
        }
    }

    #[test]
    fn a_hyper_key_set_by_a_command_run_otherwise_is_set() {
        for rc in [
            "command provider add hyper --api-key k\n",
            "K=1 provider add hyper --api-key k\n",
            "true && provider add hyper --api-key k\n",
        ] {
            assert_eq!(
                crushrc_hyper_key(rc),
                Some(Said::Set(Some(1), None)),
                "{rc}"
            );
        }
        for rc in [
            "command provider add other --api-key k\n",
            "'K=1' provider add hyper --api-key k\n",
            "echo provider add hyper\n",
        ] {
            assert_eq!(crushrc_hyper_key(rc), None, "{rc}");
        }
    }
}
