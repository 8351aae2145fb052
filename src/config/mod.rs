//! Resolving `provider-auto-update` and `default-providers` through Crush's
//! ten levels of configuration (spec sections 4 to 6), recording where each
//! value came from.

pub mod crushrc;
pub mod front;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::store::paths::{self, EnvLookup};

/// The environment variable that turns automatic updates off (or back on).
pub const DISABLE_AUTO_UPDATE_ENV: &str = "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE";

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// A crushrc `option` command.
    Crushrc {
        /// The file.
        path: PathBuf,
        /// The line of the command.
        line: usize,
    },
    /// A JSON config's `options` key.
    Json {
        /// The file.
        path: PathBuf,
        /// The key, e.g. `options.disable_provider_auto_update`.
        key: &'static str,
    },
    /// An environment variable.
    Env {
        /// Its name.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Crushrc { path, line } => write!(f, "option at {}:{line}", path.display()),
            Origin::Json { path, key } => write!(f, "{key} in {}", path.display()),
            Origin::Env { name, value } => write!(f, "{name}={value}"),
        }
    }
}

/// A boolean setting and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The value (`true` = on).
    pub value: bool,
    /// Where it came from.
    pub origin: Origin,
}

impl Setting {
    fn default_on() -> Setting {
        Setting {
            value: true,
            origin: Origin::Default,
        }
    }

    /// `on` or `off`.
    pub fn word(&self) -> &'static str {
        if self.value { "on" } else { "off" }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.word(), self.origin)
    }
}

/// The public keys pinned for signed catalogs, and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedKeys {
    /// Each a minisign public key (base64) or the path of a `.pub` file.
    pub entries: Vec<String>,
    /// Where the list came from.
    pub origin: Origin,
}

/// The resolved settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `provider-auto-update`: refresh the catalog at start-up.
    pub auto_update: Setting,
    /// `default-providers`: use the catalog's providers at all.
    pub default_providers: Setting,
    /// `options.provider_public_keys` or `CRUSH_PROVIDER_PUBLIC_KEY`: the
    /// keys a signed catalog must be signed by; `None` when none is pinned.
    pub public_keys: Option<PinnedKeys>,
    /// Things worth telling: skipped crushrc commands, a bad environment value.
    pub warnings: Vec<String>,
    /// Every file that was read, lowest priority first.
    pub files: Vec<PathBuf>,
}

/// A configuration file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// The line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The kind of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `crush.json`, `.crush.json`.
    Json,
    /// `crushrc`, `.crushrc`.
    Crushrc,
}

/// The configuration files that may hold settings, lowest priority first:
/// levels 2 to 9 of spec section 5. `cwd` should be absolute.
pub fn config_files(cwd: &Path, env: EnvLookup) -> Vec<(PathBuf, Format)> {
    let mut files = Vec::new();
    if let Ok(dir) = paths::global_state_dir(env) {
        files.push((dir.join("crush.json"), Format::Json));
    }
    files.push((cwd.join(".crush").join("crush.json"), Format::Json));
    if let Ok(dir) = paths::config_dir(env) {
        files.push((dir.join("crush.json"), Format::Json));
        files.push((dir.join("crushrc"), Format::Crushrc));
    }
    for dir in project_dirs(cwd).iter().rev() {
        files.push((dir.join("crush.json"), Format::Json));
        files.push((dir.join("crushrc"), Format::Crushrc));
        files.push((dir.join(".crush.json"), Format::Json));
        files.push((dir.join(".crushrc"), Format::Crushrc));
    }
    files
}

/// The folders searched for project files, nearest first: `cwd` and each
/// parent up to the root of the enclosing git work tree, or `cwd` alone when
/// there is none.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        // `.git` is a folder in a clone and a file in a linked work tree.
        if dir.join(".git").exists() {
            return dirs;
        }
    }
    vec![cwd.to_path_buf()]
}

impl Settings {
    /// The built-in defaults: everything on.
    pub fn defaults() -> Settings {
        Settings {
            auto_update: Setting::default_on(),
            default_providers: Setting::default_on(),
            public_keys: None,
            warnings: Vec::new(),
            files: Vec::new(),
        }
    }
}

/// The settings one crushrc alone gives (over the defaults).
pub fn parse_crushrc_settings(path: &Path, text: &str) -> Result<Settings, ConfigError> {
    let mut settings = Settings::defaults();
    apply_crushrc(&mut settings, path, text)?;
    Ok(settings)
}

/// Resolves the settings for a working directory.
pub fn resolve(cwd: &Path, env: EnvLookup) -> Result<Settings, ConfigError> {
    resolve_tolerating(cwd, env, |_| false)
}

/// Resolves the settings, skipping each file of a format `tolerated` says
/// may be skipped that cannot be used, with a warning naming it, rather
/// than failing: what a recovery command needs, for which such a file
/// holds nothing that matters (a crushrc pins no key).
pub fn resolve_tolerating(
    cwd: &Path,
    env: EnvLookup,
    tolerated: impl Fn(Format) -> bool,
) -> Result<Settings, ConfigError> {
    let mut settings = Settings::defaults();
    for (path, format) in config_files(cwd, env) {
        let before = settings.clone();
        match read_into(&mut settings, path, format) {
            Ok(()) => {}
            Err(e) if tolerated(format) => {
                settings = before;
                settings
                    .warnings
                    .push(format!("{e}; this file is not read"));
            }
            Err(e) => return Err(e),
        }
    }
    apply_env(&mut settings, env);
    Ok(settings)
}

/// Reads one configuration file into `settings`; a missing or empty one
/// is skipped.
fn read_into(settings: &mut Settings, path: PathBuf, format: Format) -> Result<(), ConfigError> {
    let text = match fs::read(&path) {
        Ok(bytes) => bytes,
        // A file inside a folder that is a file (ENOTDIR) is as missing
        // as one that does not exist.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(());
        }
        // A folder where a file is expected, or an unreadable file, is
        // not a configuration: say so rather than guess.
        Err(e) => {
            return Err(ConfigError {
                path,
                line: None,
                message: format!("cannot read: {e}"),
            });
        }
    };
    let text = String::from_utf8(text).map_err(|_| ConfigError {
        path: path.clone(),
        line: None,
        message: "not UTF-8 text".into(),
    })?;
    if text.trim().is_empty() {
        return Ok(());
    }
    match format {
        Format::Json => apply_json(settings, &path, &text)?,
        Format::Crushrc => apply_crushrc(settings, &path, &text)?,
    }
    settings.files.push(path);
    Ok(())
}

/// Level 10: the environment.
fn apply_env(settings: &mut Settings, env: EnvLookup) {
    if let Some(value) = env(crate::trust::signature::KEYS_ENV) {
        let value = value.to_string_lossy().into_owned();
        settings.public_keys = Some(PinnedKeys {
            entries: value.split(',').map(str::trim).map(str::to_owned).collect(),
            origin: Origin::Env {
                name: crate::trust::signature::KEYS_ENV,
                value,
            },
        });
    }
    if let Some(value) = env(DISABLE_AUTO_UPDATE_ENV) {
        let value = value.to_string_lossy().into_owned();
        match parse_go_bool(&value) {
            Some(disable) => {
                settings.auto_update = Setting {
                    value: !disable,
                    origin: Origin::Env {
                        name: DISABLE_AUTO_UPDATE_ENV,
                        value,
                    },
                }
            }
            None => settings.warnings.push(format!(
                "{DISABLE_AUTO_UPDATE_ENV}={value:?} is not a boolean (1, t, T, TRUE, true, True or 0, f, F, FALSE, false, False); ignored"
            )),
        }
    }
}

/// Go's `strconv.ParseBool`, which Crush uses for environment variables.
fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// crushrc booleans: `true false 1 0 yes no` in any case.
fn parse_rc_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

fn apply_json(settings: &mut Settings, path: &Path, text: &str) -> Result<(), ConfigError> {
    let error = |line: Option<usize>, message: String| ConfigError {
        path: path.to_owned(),
        line,
        message,
    };
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| error(Some(e.line()), format!("not valid JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(error(None, "expected a JSON object".into()));
    };
    let Some(options) = object.get("options") else {
        return Ok(());
    };
    let Some(options) = options.as_object() else {
        return Err(error(None, "\"options\" must be an object".into()));
    };
    match options.get("provider_public_keys") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Array(keys)) if keys.iter().all(|k| k.is_string()) => {
            settings.public_keys = Some(PinnedKeys {
                entries: keys
                    .iter()
                    .filter_map(|k| k.as_str())
                    .map(str::to_owned)
                    .collect(),
                origin: Origin::Json {
                    path: path.to_owned(),
                    key: "options.provider_public_keys",
                },
            });
        }
        Some(other) => {
            return Err(error(
                None,
                format!("options.provider_public_keys must be a list of strings, not {other}"),
            ));
        }
    }
    for (key, origin_key, target) in [
        (
            "disable_provider_auto_update",
            "options.disable_provider_auto_update",
            &mut settings.auto_update,
        ),
        (
            "disable_default_providers",
            "options.disable_default_providers",
            &mut settings.default_providers,
        ),
    ] {
        match options.get(key) {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Bool(disable)) => {
                *target = Setting {
                    value: !disable,
                    origin: Origin::Json {
                        path: path.to_owned(),
                        key: origin_key,
                    },
                }
            }
            Some(other) => {
                return Err(error(
                    None,
                    format!("options.{key} must be true or false, not {other}"),
                ));
            }
        }
    }
    Ok(())
}

fn apply_crushrc(settings: &mut Settings, path: &Path, text: &str) -> Result<(), ConfigError> {
    let script = crushrc::parse(text).map_err(|e| ConfigError {
        path: path.to_owned(),
        line: Some(e.line),
        message: e.message,
    })?;
    for skipped in &script.skipped {
        settings.warnings.push(format!(
            "{}:{}: `{}` skipped: {}; this reader does not run the shell",
            path.display(),
            skipped.line,
            skipped.command,
            skipped.reason
        ));
    }
    for command in &script.commands {
        let words = command.texts();
        if words[0] != "option" || words.len() < 2 {
            continue;
        }
        let target = match words[1] {
            "provider-auto-update" => &mut settings.auto_update,
            "default-providers" => &mut settings.default_providers,
            _ => continue,
        };
        let error = |message: String| ConfigError {
            path: path.to_owned(),
            line: Some(command.line),
            message,
        };
        let value = match words.get(2..).unwrap_or_default() {
            [] => true,
            [value] => parse_rc_bool(value).ok_or_else(|| {
                error(format!(
                    "option {}: {value:?} is not a boolean (true, false, 1, 0, yes, no)",
                    words[1]
                ))
            })?,
            _ => return Err(error(format!("option {} takes one value", words[1]))),
        };
        *target = Setting {
            value,
            origin: Origin::Crushrc {
                path: path.to_owned(),
                line: command.line,
            },
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    struct Fixture {
        root: tempfile::TempDir,
        vars: HashMap<String, OsString>,
    }

    impl Fixture {
        /// HOME at `root/home`, a git work tree at `root/repo` with a
        /// project folder `root/repo/sub/proj`.
        fn new() -> Fixture {
            let root = tempfile::tempdir().unwrap();
            fs::create_dir_all(root.path().join("home")).unwrap();
            fs::create_dir_all(root.path().join("repo/.git")).unwrap();
            fs::create_dir_all(root.path().join("repo/sub/proj")).unwrap();
            let mut vars = HashMap::new();
            vars.insert("HOME".into(), root.path().join("home").into_os_string());
            vars.insert(
                "USERPROFILE".into(),
                root.path().join("home").into_os_string(),
            );
            vars.insert(
                "LOCALAPPDATA".into(),
                root.path().join("home/appdata").into_os_string(),
            );
            Fixture { root, vars }
        }

        fn write(&self, rel: &str, text: &str) -> PathBuf {
            let path = self.root.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }

        fn set(&mut self, name: &str, value: &str) {
            self.vars.insert(name.into(), value.into());
        }

        fn cwd(&self) -> PathBuf {
            self.root.path().join("repo/sub/proj")
        }

        fn resolve(&self) -> Result<Settings, ConfigError> {
            let vars = self.vars.clone();
            resolve(&self.cwd(), &move |k: &str| vars.get(k).cloned())
        }

        fn auto_update(&self) -> Setting {
            self.resolve().unwrap().auto_update
        }
    }

    const OFF_RC: &str = "option provider-auto-update false\n";
    const ON_RC: &str = "option provider-auto-update true\n";
    const OFF_JSON: &str = r#"{"options":{"disable_provider_auto_update":true}}"#;
    const ON_JSON: &str = r#"{"options":{"disable_provider_auto_update":false}}"#;

    #[cfg(unix)]
    const GLOBAL_CONFIG: &str = "home/.config/crush";
    #[cfg(unix)]
    const GLOBAL_DATA: &str = "home/.local/share/crush";
    #[cfg(windows)]
    const GLOBAL_CONFIG: &str = "home/appdata/crush";
    #[cfg(windows)]
    const GLOBAL_DATA: &str = "home/appdata/crush";

    #[test]
    fn default_is_on() {
        let f = Fixture::new();
        let s = f.resolve().unwrap();
        assert_eq!(s.auto_update, Setting::default_on());
        assert_eq!(s.default_providers, Setting::default_on());
        assert_eq!(s.auto_update.to_string(), "on (default)");
    }

    /// Each level alone turns updates off, and names itself as the origin.
    #[test]
    fn every_level_alone() {
        let levels: Vec<(String, &str)> = vec![
            (format!("{GLOBAL_DATA}/crush.json"), OFF_JSON),
            ("repo/sub/proj/.crush/crush.json".into(), OFF_JSON),
            (format!("{GLOBAL_CONFIG}/crush.json"), OFF_JSON),
            (format!("{GLOBAL_CONFIG}/crushrc"), OFF_RC),
            ("repo/sub/proj/crush.json".into(), OFF_JSON),
            ("repo/sub/proj/crushrc".into(), OFF_RC),
            ("repo/sub/proj/.crush.json".into(), OFF_JSON),
            ("repo/sub/proj/.crushrc".into(), OFF_RC),
        ];
        for (rel, text) in levels {
            let f = Fixture::new();
            let path = f.write(&rel, text);
            let setting = f.auto_update();
            assert!(!setting.value, "{rel}");
            let expected = if text == OFF_RC {
                Origin::Crushrc { path, line: 1 }
            } else {
                Origin::Json {
                    path,
                    key: "options.disable_provider_auto_update",
                }
            };
            assert_eq!(setting.origin, expected, "{rel}");
        }
    }

    /// For each pair of adjacent levels, the higher one wins whichever way
    /// round the values are.
    #[test]
    fn adjacent_levels_keep_their_order() {
        let order: Vec<(String, bool)> = vec![
            (format!("{GLOBAL_DATA}/crush.json"), true),
            ("repo/sub/proj/.crush/crush.json".into(), true),
            (format!("{GLOBAL_CONFIG}/crush.json"), true),
            (format!("{GLOBAL_CONFIG}/crushrc"), false),
            ("repo/sub/proj/crush.json".into(), true),
            ("repo/sub/proj/crushrc".into(), false),
            ("repo/sub/proj/.crush.json".into(), true),
            ("repo/sub/proj/.crushrc".into(), false),
        ];
        for pair in order.windows(2) {
            let [(low, low_json), (high, high_json)] = pair else {
                unreachable!()
            };
            for high_value in [false, true] {
                let f = Fixture::new();
                let text = |json: bool, on: bool| match (json, on) {
                    (true, true) => ON_JSON,
                    (true, false) => OFF_JSON,
                    (false, true) => ON_RC,
                    (false, false) => OFF_RC,
                };
                f.write(low, text(*low_json, !high_value));
                let high_path = f.write(high, text(*high_json, high_value));
                let setting = f.auto_update();
                assert_eq!(setting.value, high_value, "{high} over {low}");
                assert!(
                    setting
                        .origin
                        .to_string()
                        .contains(&high_path.display().to_string()),
                    "{setting}"
                );
            }
        }
    }

    #[test]
    fn crush_global_variables_move_global_files() {
        let mut f = Fixture::new();
        f.write("elsewhere/config/crushrc", OFF_RC);
        f.write(&format!("{GLOBAL_CONFIG}/crushrc"), ON_RC);
        f.set(
            "CRUSH_GLOBAL_CONFIG",
            &f.root.path().join("elsewhere/config").to_string_lossy(),
        );
        assert!(!f.auto_update().value);
        f.write("elsewhere/data/crush.json", OFF_JSON);
        f.set(
            "CRUSH_GLOBAL_DATA",
            &f.root.path().join("elsewhere/data").to_string_lossy(),
        );
        f.write("elsewhere/config/crushrc", "");
        let s = f.auto_update();
        assert!(!s.value);
        assert!(s.origin.to_string().contains("elsewhere/data"), "{s}");
        f.write("xdg/crush/crushrc", ON_RC);
        f.set(
            "XDG_CONFIG_HOME",
            &f.root.path().join("xdg").to_string_lossy(),
        );
        assert!(
            !f.auto_update().value,
            "CRUSH_GLOBAL_CONFIG beats XDG_CONFIG_HOME"
        );
    }

    #[test]
    fn xdg_config_home_moves_the_global_crushrc() {
        let mut f = Fixture::new();
        f.write("xdg/crush/crushrc", OFF_RC);
        f.set(
            "XDG_CONFIG_HOME",
            &f.root.path().join("xdg").to_string_lossy(),
        );
        assert!(!f.auto_update().value);
    }

    #[test]
    fn nearer_folder_beats_farther_and_walk_stops_at_work_tree_root() {
        let f = Fixture::new();
        f.write("repo/.crushrc", OFF_RC);
        assert!(!f.auto_update().value, "work-tree root is searched");
        f.write("repo/sub/crushrc", ON_RC);
        assert!(
            f.auto_update().value,
            "a nearer crushrc beats a farther .crushrc"
        );
        let f = Fixture::new();
        f.write("crushrc", OFF_RC); // above the work tree: never read
        assert!(f.auto_update().value);
    }

    #[test]
    fn without_a_work_tree_only_cwd_is_searched() {
        let f = Fixture::new();
        fs::remove_dir(f.root.path().join("repo/.git")).unwrap();
        f.write("repo/sub/crushrc", OFF_RC);
        assert!(f.auto_update().value);
        f.write("repo/sub/proj/crushrc", OFF_RC);
        assert!(!f.auto_update().value);
    }

    #[test]
    fn git_file_marks_a_linked_work_tree() {
        let f = Fixture::new();
        fs::remove_dir(f.root.path().join("repo/.git")).unwrap();
        f.write("repo/sub/.git", "gitdir: /elsewhere\n");
        f.write("repo/sub/crushrc", OFF_RC);
        f.write("repo/crushrc", ON_RC);
        assert!(!f.auto_update().value);
    }

    #[test]
    fn environment_overrides_and_set_but_false_turns_back_on() {
        let mut f = Fixture::new();
        f.write("repo/sub/proj/.crushrc", OFF_RC);
        for value in ["0", "f", "F", "FALSE", "false", "False"] {
            f.set(DISABLE_AUTO_UPDATE_ENV, value);
            let s = f.auto_update();
            assert!(s.value, "{value}");
            assert_eq!(
                s.origin.to_string(),
                format!("{DISABLE_AUTO_UPDATE_ENV}={value}")
            );
        }
        f.write("repo/sub/proj/.crushrc", ON_RC);
        for value in ["1", "t", "T", "TRUE", "true", "True"] {
            f.set(DISABLE_AUTO_UPDATE_ENV, value);
            assert!(!f.auto_update().value, "{value}");
        }
        for value in ["yes", "on", "2", " 1"] {
            f.set(DISABLE_AUTO_UPDATE_ENV, value);
            let s = f.resolve().unwrap();
            assert!(
                s.auto_update.value,
                "{value:?} is ignored, the crushrc says on"
            );
            assert_eq!(s.warnings.len(), 1, "{value:?}");
            assert!(
                s.warnings[0].contains("is not a boolean"),
                "{:?}",
                s.warnings
            );
        }
    }

    #[test]
    fn crushrc_booleans_bare_values_and_other_keys() {
        let f = Fixture::new();
        for (text, expected) in [
            ("option provider-auto-update FALSE", false),
            ("option provider-auto-update No", false),
            ("option provider-auto-update 0", false),
            ("option provider-auto-update", true),
            ("option provider-auto-update yes", true),
            ("option 'provider-auto-update' \"false\"", false),
        ] {
            f.write("repo/sub/proj/crushrc", text);
            assert_eq!(f.auto_update().value, expected, "{text}");
        }
        f.write("repo/sub/proj/crushrc", "option default-providers false\nprovider add x\nmodel large a/b\nmcp x\nlsp y\nhook z\npermissions allow grep\noption progress false\nexport X=1\n");
        let s = f.resolve().unwrap();
        assert!(!s.default_providers.value);
        assert!(s.auto_update.value);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn skipped_compound_commands_warn_with_file_and_line() {
        let f = Fixture::new();
        let path = f.write(
            "repo/sub/proj/crushrc",
            "if true; then\n  option provider-auto-update false\nfi\n",
        );
        let s = f.resolve().unwrap();
        assert!(s.auto_update.value, "never guessed");
        assert_eq!(
            s.warnings,
            [format!(
                "{}:2: `option provider-auto-update false` skipped: inside an if block opened at line 1; this reader does not run the shell",
                path.display()
            )]
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let f = Fixture::new();
        let path = f.write(
            "repo/sub/proj/crushrc",
            "# ok\noption provider-auto-update maybe\n",
        );
        let e = f.resolve().unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.to_string(),
            format!(
                "{}:2: option provider-auto-update: \"maybe\" is not a boolean (true, false, 1, 0, yes, no)",
                path.display()
            )
        );
        f.write(
            "repo/sub/proj/crushrc",
            "option provider-auto-update false true\n",
        );
        assert!(
            f.resolve()
                .unwrap_err()
                .to_string()
                .ends_with(":1: option provider-auto-update takes one value")
        );
        f.write("repo/sub/proj/crushrc", "option 'a\n");
        assert!(
            f.resolve()
                .unwrap_err()
                .to_string()
                .ends_with(":1: unterminated single quote")
        );
        f.write("repo/sub/proj/crushrc", "");
        let path = f.write(
            "repo/sub/proj/crush.json",
            "{\n \"options\": {\n  \"disable_provider_auto_update\": tru }\n}",
        );
        let e = f.resolve().unwrap_err();
        assert_eq!((e.path.clone(), e.line), (path, Some(3)));
        f.write(
            "repo/sub/proj/crush.json",
            r#"{"options":{"disable_provider_auto_update":"yes"}}"#,
        );
        assert!(
            f.resolve()
                .unwrap_err()
                .message
                .contains("must be true or false")
        );
        f.write("repo/sub/proj/crush.json", "[]");
        assert!(f.resolve().is_err());
    }

    /// Pinned keys come from the JSON files with the precedence of every
    /// option, and the environment beats them; an empty list pins nothing.
    #[test]
    fn public_keys_come_from_json_and_the_environment() {
        let mut f = Fixture::new();
        assert_eq!(f.resolve().unwrap().public_keys, None);
        f.write(
            "home/.config/crush/crush.json",
            r#"{"options":{"provider_public_keys":["RWQglobal"]}}"#,
        );
        let project = f.write(
            "repo/sub/proj/.crush.json",
            r#"{"options":{"provider_public_keys":["RWQa","/keys/b.pub"]}}"#,
        );
        let keys = f.resolve().unwrap().public_keys.unwrap();
        assert_eq!(keys.entries, ["RWQa", "/keys/b.pub"]);
        assert_eq!(
            keys.origin,
            Origin::Json {
                path: project,
                key: "options.provider_public_keys"
            }
        );
        f.set("CRUSH_PROVIDER_PUBLIC_KEY", "RWQx, RWQy");
        let keys = f.resolve().unwrap().public_keys.unwrap();
        assert_eq!(keys.entries, ["RWQx", "RWQy"]);
        f.write(
            "repo/sub/proj/.crush.json",
            r#"{"options":{"provider_public_keys":"RWQa"}}"#,
        );
        assert!(
            f.resolve()
                .unwrap_err()
                .message
                .contains("must be a list of strings")
        );
    }

    #[test]
    fn empty_and_unrelated_json_files_are_skipped() {
        let f = Fixture::new();
        f.write("repo/sub/proj/crush.json", "  \n");
        f.write(
            "repo/sub/proj/.crush.json",
            r#"{"$schema":"x","providers":{},"options":{"debug":true}}"#,
        );
        let s = f.resolve().unwrap();
        assert_eq!(s.auto_update, Setting::default_on());
        assert_eq!(s.files.len(), 1);
    }
}
