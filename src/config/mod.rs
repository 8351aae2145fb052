//! Resolving `provider-auto-update`, `default-providers` and the pinned
//! keys through Crush's levels of configuration (spec sections 4 to 6),
//! recording where each value came from: the files (`files`, their
//! project root `root`), merged then decoded as Crush does (`merge`),
//! crushrc files read without running them (`crushrc`), then the
//! environment.

pub(crate) mod crushrc;
pub(crate) mod files;
pub(crate) mod hyper;
pub(crate) mod merge;
pub(crate) mod root;
mod warning;

#[cfg(test)]
pub(crate) use tests::defaults;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::store::file;
use crate::store::paths::{self, EnvLookup};
use crate::trust::signature::KEYS_ENV;
use hyper::{HYPER_KEY_ENV, HyperKey};
use merge::{Found, Node, Options};
pub use root::Root;
pub use warning::{OptionLine, Warning};

/// The environment variable that turns automatic updates off (or back on).
pub const DISABLE_AUTO_UPDATE_ENV: &str = "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE";
/// The environment variable that turns the catalog's providers off (or
/// back on): Crush then makes no Catwalk request at all.
pub const DISABLE_DEFAULT_PROVIDERS_ENV: &str = "CRUSH_DISABLE_DEFAULT_PROVIDERS";

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
        /// The key as written, e.g. `options.disable_provider_auto_update`.
        key: String,
    },
    /// A crushrc command this reader cannot evaluate (it needs the
    /// shell) that may turn the setting off: counted as turning it off.
    Unevaluated {
        /// The file.
        path: PathBuf,
        /// The line of the command.
        line: usize,
    },
    /// A `.env` file too large for this reader, which Crush reads whole:
    /// counted as turning the setting off.
    UnreadDotEnv {
        /// The file.
        path: PathBuf,
    },
    /// An environment variable.
    Env {
        /// Its name.
        name: &'static str,
        /// Its value.
        value: String,
        /// The `.env` file and line it came from, when it did.
        dotenv: Option<(PathBuf, usize)>,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Crushrc { path, line } => write!(f, "option at {}:{line}", shown_path(path)),
            Origin::Json { path, key } => write!(f, "{} in {}", shown(key), shown_path(path)),
            Origin::Unevaluated { path, line } => write!(
                f,
                "a command at {}:{line} only a shell can evaluate, counted as off",
                shown_path(path)
            ),
            Origin::UnreadDotEnv { path } => write!(
                f,
                "{}, too large for this reader while Crush reads it whole, counted as off",
                shown_path(path)
            ),
            Origin::Env {
                name,
                value,
                dotenv,
            } => match dotenv {
                None => write!(f, "{name}={}", shown(value)),
                Some((path, line)) => {
                    write!(f, "{name}={} at {}:{line}", shown(value), shown_path(path))
                }
            },
        }
    }
}

/// Text from a file or the environment as it may be printed: as is when
/// plain, quoted with what a terminal must not get as it is escaped
/// otherwise (controls, and the bidirectional and zero-width characters
/// that make text read otherwise than it is: [`crate::catalog::escape`]).
pub(crate) fn shown(text: &str) -> String {
    if text.chars().any(crate::catalog::escape::is_unsafe) {
        crate::catalog::quoted(text)
    } else {
        text.to_owned()
    }
}

/// A path as it may be printed ([`shown`]).
pub(crate) fn shown_path(path: &Path) -> String {
    shown(&path.display().to_string())
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
    fn new(value: bool, origin: Origin) -> Setting {
        Setting { value, origin }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = if self.value { "on" } else { "off" };
        write!(f, "{word} ({})", self.origin)
    }
}

/// An order the configuration files are ranked in (spec section 5); in
/// JSON `spec`, `crush_v0_90`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// The spec's, the one Crush is moving to: configuration above state.
    Spec,
    /// Crush v0.90's (`internal/config/load.go`: `lookupConfigs`,
    /// `Load`): the global state above the global files, the workspace
    /// file above every project file, and inside one folder `crush.json` <
    /// `.crush.json` < `crushrc` < `.crushrc`.
    #[serde(rename = "crush_v0_90")]
    CrushV090,
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Spec => "the spec's order",
            Order::CrushV090 => "Crush v0.90's order",
        })
    }
}

/// A setting the two orders of the files read differently. Going out
/// needs both to say on: the setting is the one that is off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// By the spec's order.
    pub spec: Setting,
    /// By Crush v0.90's order.
    pub crush_v090: Setting,
}

impl Disagreement {
    /// The order whose value is off, which keeps the network off.
    pub fn kept_off_by(&self) -> Order {
        if self.crush_v090.value {
            Order::Spec
        } else {
            Order::CrushV090
        }
    }
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}; {}: {}; {} keeps the network off",
            Order::Spec,
            self.spec,
            Order::CrushV090,
            self.crush_v090,
            self.kept_off_by()
        )
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
    /// `provider-auto-update`: refresh the catalog at start-up. On only
    /// when both orders of the files ([`Order`]) say on.
    pub auto_update: Setting,
    /// `default-providers`: use the catalog's providers at all. On only
    /// when both orders say on.
    pub default_providers: Setting,
    /// `provider-auto-update` by each order, when they differ.
    pub auto_update_orders: Option<Disagreement>,
    /// `default-providers` by each order, when they differ.
    pub default_providers_orders: Option<Disagreement>,
    /// `options.provider_public_keys` or `CRUSH_PROVIDER_PUBLIC_KEY`: the
    /// keys a signed catalog must be signed by; `None` when none is pinned.
    pub public_keys: Option<PinnedKeys>,
    /// Things worth telling: skipped crushrc commands, a bad environment value.
    pub warnings: Vec<Warning>,
    /// Every file that was read, lowest priority first.
    pub files: Vec<PathBuf>,
    /// The project root the walk for project files stopped at.
    pub root: root::Root,
    /// The workspace folder, whose `crush.json` is level 3.
    pub workspace: files::Workspace,
    /// Project files Crush passes over (another user's).
    pub skipped: Vec<files::SkippedFile>,
    /// The user's own files that may pin keys (found through the user's
    /// own environment), lowest priority first.
    pub(crate) pin_files: Vec<PathBuf>,
    /// The Hyper key Crush sends: `HYPER_API_KEY`, else
    /// `providers.hyper.api_key` as Crush v0.90 merges its files.
    pub(crate) hyper_key: Option<HyperKey>,
}

/// A configuration file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", shown_path(path), line.map(|l| format!(":{l}")).unwrap_or_default())]
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

/// What the settings are resolved from, besides the files.
pub struct Inputs<'a> {
    /// The working directory (absolute), as Crush names it
    /// (`files::working_folder`).
    pub cwd: &'a Path,
    /// The environment.
    pub env: EnvLookup<'a>,
    /// Where a variable of `env` came from: the `.env` file and line, or
    /// `None` for the process's own.
    pub env_source: &'a dyn Fn(&str) -> Option<(PathBuf, usize)>,
    /// `-D/--data-dir`: the workspace folder.
    pub data_dir: Option<&'a Path>,
    /// `-c/--cwd` as written when it is relative
    /// (`files::WorkingFolder::flag`): Crush joins it to the working
    /// directory once more for the default workspace folder.
    pub cwd_flag: Option<&'a Path>,
}

/// A file read, by index ([`merge::Src::file`]): its path and its part,
/// when it holds something.
type File = (PathBuf, Option<Loaded>);

/// One file's part, once read.
#[derive(Clone)]
struct Loaded {
    node: Node,
    /// `options.provider_public_keys`, which only some files may pin
    /// (not Crush's key: read by this tool alone).
    keys: Option<PinnedKeys>,
}

/// Reads each file once, passing over one that cannot be used when
/// `tolerated`, with a warning naming it.
struct Reader {
    tolerated: bool,
    files: Vec<File>,
    warnings: Vec<Warning>,
}

impl Reader {
    /// The index of `path`'s part, read once; `None` when it holds
    /// nothing or is passed over. A `workspace` file Crush passes over
    /// when it cannot read it, but not when it is not JSON.
    fn read(
        &mut self,
        path: &Path,
        format: Format,
        workspace: bool,
    ) -> Result<Option<usize>, ConfigError> {
        if let Some(index) = self.files.iter().position(|(p, _)| p == path) {
            return Ok(self.files[index].1.is_some().then_some(index));
        }
        let loaded = match self.load(path, format) {
            Ok(loaded) => loaded,
            Err(ConfigError { line: None, .. }) if workspace => None,
            Err(e) if self.tolerated => {
                self.tell(Warning::FileNotRead(e));
                None
            }
            Err(e) => return Err(e),
        };
        let held = loaded.is_some();
        self.files.push((path.to_owned(), loaded));
        Ok(held.then(|| self.files.len() - 1))
    }

    /// Reads one configuration file, the next index: `None` when it is
    /// missing (or a folder on its way is a file) or empty; its part
    /// otherwise, a JSON file as it is, a crushrc as the object its
    /// commands build. It is read as every file this program finds by
    /// itself is ([`file::read_regular`]): a FIFO, which would block a
    /// start for good (as it blocks Crush), a device or a folder is an
    /// error naming what it is.
    fn load(&mut self, path: &Path, format: Format) -> Result<Option<Loaded>, ConfigError> {
        let error = |line, message| ConfigError {
            path: path.to_owned(),
            line,
            message,
        };
        let bytes = match file::read_regular(path, file::MAX_FILE_BYTES) {
            Ok(Some((bytes, _))) if !bytes.is_empty() => bytes,
            Ok(_) => return Ok(None),
            Err(file::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Ok(None);
            }
            Err(e) => return Err(error(None, format!("cannot read: {e}"))),
        };
        // Go reads bytes: ones that are not UTF-8 are U+FFFD in a JSON
        // string (and make anything else invalid JSON, here too), and data
        // to the shell.
        let text = String::from_utf8_lossy(&bytes);
        let blank = text.bytes().all(|b| b" \t\n\r".contains(&b));
        let index = self.files.len();
        let node = match format {
            // `json.Valid` is false for blanks alone: Crush refuses it.
            Format::Json if blank => {
                let message = "holds only blanks, which is not JSON; Crush refuses to start on it (write {} or remove the file)";
                return Err(error(Some(1), message.into()));
            }
            Format::Crushrc if blank => return Ok(None),
            Format::Json => merge::parse(&text, index).map_err(|(line, m)| error(line, m))?,
            Format::Crushrc => {
                let (node, warnings) = crushrc::read(path, &text, index)?;
                self.warnings.extend(warnings);
                return Ok(Some(Loaded { node, keys: None }));
            }
        };
        let options = node.get("options");
        let keys = match options.and_then(|o| o.get("provider_public_keys")) {
            None | Some(Node::Null) => None,
            Some(Node::Array(items, _)) if items.iter().all(|i| matches!(i, Node::Str(..))) => {
                let entries = items.iter().filter_map(Node::text).collect();
                let (path, key) = (path.to_owned(), "options.provider_public_keys".into());
                let origin = Origin::Json { path, key };
                Some(PinnedKeys { entries, origin })
            }
            Some(other) => {
                let message = format!(
                    "options.provider_public_keys must be a list of strings, not {}",
                    other.kind()
                );
                return Err(error(None, message));
            }
        };
        Ok(Some(Loaded { node, keys }))
    }

    /// Tells `warning`, once.
    fn tell(&mut self, warning: Warning) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// The keys file `file` pins, if it may.
    fn keys(&self, file: usize) -> Option<&PinnedKeys> {
        self.files[file].1.as_ref()?.keys.as_ref()
    }
}

/// Resolves the settings from `inputs`, skipping each file that cannot be
/// used when `tolerated`, with a warning naming it, rather than failing:
/// what a recovery command needs, for which such a file holds nothing
/// that matters (a crushrc pins no key).
/// Each setting is read by both orders of the files (the spec's and Crush
/// v0.90's, [`Order`]), with the same environment over both: going out
/// needs both to say on.
pub fn resolve_in(inputs: &Inputs<'_>, tolerated: bool) -> Result<Settings, ConfigError> {
    let (cwd, env) = (inputs.cwd, inputs.env);
    // git runs with the user's own environment, never a project's `.env`.
    let root = root::of(cwd, &|name| std::env::var_os(name));
    let root_dir = match &root {
        Root::WorkTree(dir) => Some(dir.as_path()),
        Root::None(_) => None,
    };
    let project = files::project(cwd, root_dir);
    let mut reader = Reader {
        tolerated,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some((folder, cause)) = project.dropped {
        reader.tell(Warning::NoProjectFiles { folder, cause });
    }
    let mut parts = Vec::new();
    let walk = project
        .files
        .iter()
        .map(|(p, f)| (p.clone(), *f, Level::Project));
    for (path, format, level) in files::globals(env).into_iter().chain(walk) {
        parts.extend(reader.read(&path, format, false)?.map(|f| (level, f)));
    }
    // A project's files, which may not pin keys: the walk's, and each
    // order's workspace file.
    let mut project_files: Vec<PathBuf> = project.files.into_iter().map(|(p, _)| p).collect();
    let home = paths::home_dir(env).ok();
    let (mut read_files, mut orders) = (Vec::new(), Vec::new());
    for order in [Order::Spec, Order::CrushV090] {
        // The workspace folder comes from every other file's options.
        let (below, _) = merged(&ordered(order, &parts, &reader.files), &reader.files);
        let option = merge::decode(&below).ok().and_then(|o| o.data_directory);
        let option = option.map(|found| (found.value.clone(), origin_of(&found, &reader.files)));
        let (flag, home) = (inputs.data_dir, home.as_deref());
        let workspace = files::workspace(flag, option, cwd, inputs.cwd_flag, root_dir, home);
        let path = workspace.dir.join("crush.json");
        let mut all = parts.clone();
        let part = reader.read(&path, Format::Json, true)?;
        all.extend(part.map(|f| (Level::Workspace, f)));
        project_files.push(path);
        let ranked = ordered(order, &all, &reader.files);
        for &file in &ranked {
            if !read_files.contains(&file) {
                read_files.push(file);
            }
        }
        let (root, changes) = merged(&ranked, &reader.files);
        // What Crush's own merge (go-jsons alpha.5) refuses, told as the
        // spec's order meets it.
        for change in changes.into_iter().filter(|_| order == Order::Spec) {
            reader.tell(change);
        }
        // Crush refuses to start on a value of the wrong type either
        // order leaves. Such a value is always a JSON file's.
        let options = match merge::decode(&root) {
            Ok(options) => options,
            Err(e) if !reader.tolerated => return Err(refused(e, &reader.files)),
            Err(e) => {
                reader.tell(Warning::OptionsNotRead(refused(e, &reader.files)));
                Options::default()
            }
        };
        orders.push((workspace, options));
    }
    // Only the user pins keys: in the JSON files the user's own
    // environment finds (the process's variables, never a project's
    // `.env`, which moves the files Crush's own settings come from but
    // must not unpin the mirror's key, or pin its own) that are not a
    // project's, a later one's list replacing an earlier one's; or by
    // `CRUSH_PROVIDER_PUBLIC_KEY`, over them.
    let users = |name: &str| env(name).filter(|_| (inputs.env_source)(name).is_none());
    let pin_files: Vec<PathBuf> = files::globals(&users)
        .into_iter()
        .filter(|(path, format, _)| *format == Format::Json && !project_files.contains(path))
        .map(|(path, ..)| path)
        .collect();
    let mut public_keys = None;
    for path in &pin_files {
        if let Some(file) = reader.read(path, Format::Json, false)? {
            public_keys = reader.keys(file).cloned().or(public_keys);
        }
    }
    if let Some(value) = users(KEYS_ENV) {
        let value = value.to_string_lossy().into_owned();
        let entries = value.split(',').map(|k| k.trim().to_owned()).collect();
        let (name, dotenv) = (KEYS_ENV, None);
        let origin = Origin::Env {
            name,
            value,
            dotenv,
        };
        public_keys = Some(PinnedKeys { entries, origin });
    }
    // `provider_public_keys` in a file read for the settings that is not
    // one of the user's own is ignored, told once: a project's file
    // (which whoever can write to the project controls), or a global
    // file a project's `.env` moved.
    for &file in &read_files {
        let path = reader.files[file].0.clone();
        let warning = match reader.keys(file) {
            None => continue,
            Some(_) if project_files.contains(&path) => Warning::ProjectKeys { path },
            Some(_) if pin_files.contains(&path) => continue,
            Some(_) => Warning::DotEnvKeys { path },
        };
        reader.tell(warning);
    }
    let env_values = from_env(inputs, &mut reader.warnings);
    let [(spec_workspace, spec), (_, crush)] = [0, 1].map(|i| &orders[i]);
    let [spec_auto, spec_default] = values(spec, &reader.files, &env_values);
    let [crush_auto, crush_default] = values(crush, &reader.files, &env_values);
    let (mut auto_update, auto_update_orders) = both_orders(spec_auto, crush_auto);
    let (default_providers, default_providers_orders) = both_orders(spec_default, crush_default);
    // A `.env` too large for this reader may turn updates off for Crush,
    // which reads it whole: counted as off.
    if let Some(dotenv) = crate::environment::installed().filter(|d| d.unread) {
        let path = dotenv.path.clone();
        auto_update = Setting::new(false, Origin::UnreadDotEnv { path });
    }
    // The Hyper key Crush sends: a non-empty `HYPER_API_KEY` (Crush:
    // `os.Getenv(...) != ""`), else the one a file sets, unless it is
    // empty; one a shell alone could tell counts as set, to a value unknown.
    let hyper_key = match env(HYPER_KEY_ENV).filter(|v| !v.is_empty()) {
        Some(value) => Some(HyperKey {
            origin: HYPER_KEY_ENV.to_string(),
            value: Some(value.to_string_lossy().into_owned()),
        }),
        None => crush.hyper_api_key.as_ref().and_then(|found| {
            let value = match found.src.unevaluated {
                true => None,
                false if found.value.is_empty() => return None,
                false => Some(found.value.clone()),
            };
            let at = found.src.line.map(|l| format!(":{l}")).unwrap_or_default();
            let origin = format!("{}{at}", reader.files[found.src.file].0.display());
            Some(HyperKey { origin, value })
        }),
    };
    Ok(Settings {
        auto_update,
        default_providers,
        auto_update_orders,
        default_providers_orders,
        public_keys,
        hyper_key,
        warnings: reader.warnings,
        files: read_files
            .iter()
            .map(|&f| reader.files[f].0.clone())
            .collect(),
        root: root.clone(),
        workspace: spec_workspace.clone(),
        skipped: project.skipped,
        pin_files,
    })
}

/// Where a file stands among the configuration files (spec section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// `/etc/crush/crush.json`.
    System,
    /// `$CRUSH_GLOBAL_DATA/crush.json` and its fallbacks.
    GlobalState,
    /// The workspace folder's `crush.json`.
    Workspace,
    /// The global `crush.json`.
    GlobalJson,
    /// The global `crushrc`.
    GlobalRc,
    /// A project file of the walk.
    Project,
}

/// The parts (read in the spec's order: the walk's project files farthest
/// folder first, each folder's in [`files::PROJECT_NAMES`] order) ranked
/// lowest priority first in `order`. The spec's: system < global state <
/// workspace < global JSON < global crushrc < project files. Crush
/// v0.90's: system < global JSON < global crushrc < global state <
/// project files < workspace, and inside one folder `crush.json` <
/// `.crush.json` < `crushrc` < `.crushrc`.
fn ordered(order: Order, parts: &[(Level, usize)], files: &[File]) -> Vec<usize> {
    const CRUSH_V090_NAMES: [&str; 4] = ["crush.json", ".crush.json", "crushrc", ".crushrc"];
    let mut ranked = parts.to_vec();
    // Stable: what ranks alike keeps the order it was read in.
    ranked.sort_by_key(|&(level, file)| {
        let ranks = match order {
            Order::Spec => [0, 1, 2, 3, 4, 5],
            Order::CrushV090 => [0, 3, 5, 1, 2, 4],
        };
        let path = &files[file].0;
        // The walk's folders are the working folder's parents: the
        // farther, the fewer components.
        let within = match (order, level) {
            (Order::CrushV090, Level::Project) => (
                path.components().count(),
                CRUSH_V090_NAMES.iter().position(|n| path.ends_with(n)),
            ),
            _ => (0, None),
        };
        (ranks[level as usize], within)
    });
    ranked.into_iter().map(|(_, file)| file).collect()
}

/// The `ranked` files merged, lowest first, and each change of type.
fn merged(ranked: &[usize], files: &[File]) -> (Node, Vec<Warning>) {
    let mut root = Node::Object(Vec::new());
    let mut warnings = Vec::new();
    for &file in ranked {
        let Some(part) = &files[file].1 else { continue };
        let mut changes = Vec::new();
        merge::merge(&mut root, part.node.clone(), &mut changes);
        for change in changes {
            let before = change.before.1.map(|src| files[src.file].0.clone());
            warnings.push(Warning::TypeChange {
                key: change.key,
                after: (change.after, files[file].0.clone()),
                before: (change.before.0, before),
            });
        }
    }
    (root, warnings)
}

/// What a value of the wrong type is told, naming its file.
fn refused(e: merge::DecodeError, files: &[File]) -> ConfigError {
    ConfigError {
        path: e.src.map(|s| files[s.file].0.clone()).unwrap_or_default(),
        line: e.src.and_then(|s| s.line),
        message: e.to_string(),
    }
}

fn origin_of<T>(found: &Found<T>, files: &[File]) -> Origin {
    let path = files[found.src.file].0.clone();
    match found.src.line {
        Some(line) if found.src.unevaluated => Origin::Unevaluated { path, line },
        Some(line) => Origin::Crushrc { path, line },
        None => Origin::Json {
            path,
            key: found.key.clone(),
        },
    }
}

/// `provider-auto-update` and `default-providers` as `options` give them,
/// the environment's `env` over them.
fn values(options: &Options, files: &[File], env: &[Option<Setting>; 2]) -> [Setting; 2] {
    let found = [
        &options.disable_provider_auto_update,
        &options.disable_default_providers,
    ];
    std::array::from_fn(|i| match (&env[i], found[i]) {
        (Some(env), _) => env.clone(),
        (None, Some(found)) => Setting::new(!found.value, origin_of(found, files)),
        (None, None) => Setting::new(true, Origin::Default),
    })
}

/// The setting going out reads, `spec` being the spec's order's and
/// `crush` Crush v0.90's: `spec` when they agree; otherwise the one that
/// is off, and both.
fn both_orders(spec: Setting, crush_v090: Setting) -> (Setting, Option<Disagreement>) {
    if spec.value == crush_v090.value {
        return (spec, None);
    }
    let off = if crush_v090.value { &spec } else { &crush_v090 };
    (off.clone(), Some(Disagreement { spec, crush_v090 }))
}

/// A boolean as Go's `strconv.ParseBool` reads it; `None` for any other
/// word.
pub(crate) fn go_bool(word: &str) -> Option<bool> {
    match word {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Level 10, over both orders: `provider-auto-update` and
/// `default-providers` as the environment sets them (but the pinned keys:
/// above). A value Go's `strconv.ParseBool` refuses is told and ignored.
fn from_env(inputs: &Inputs, warnings: &mut Vec<Warning>) -> [Option<Setting>; 2] {
    [DISABLE_AUTO_UPDATE_ENV, DISABLE_DEFAULT_PROVIDERS_ENV].map(|name| {
        let value = (inputs.env)(name)?.to_string_lossy().into_owned();
        let Some(disable) = go_bool(&value) else {
            warnings.push(Warning::NotBoolean { name, value });
            return None;
        };
        let dotenv = (inputs.env_source)(name);
        let origin = Origin::Env {
            name,
            value,
            dotenv,
        };
        Some(Setting::new(!disable, origin))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use files::{Workspace, WorkspaceFrom};
    use root::NoRoot;

    /// The built-in defaults for working directory `cwd`: everything on.
    pub(crate) fn defaults(cwd: &Path) -> Settings {
        Settings {
            auto_update: Setting::new(true, Origin::Default),
            default_providers: Setting::new(true, Origin::Default),
            auto_update_orders: None,
            default_providers_orders: None,
            public_keys: None,
            warnings: Vec::new(),
            files: Vec::new(),
            root: Root::None(NoRoot::NoRepository),
            workspace: Workspace {
                dir: cwd.join(".crush"),
                from: WorkspaceFrom::Default,
            },
            skipped: Vec::new(),
            pin_files: Vec::new(),
            hyper_key: None,
        }
    }

    /// Resolves the settings for a working directory.
    pub(super) fn resolve(cwd: &Path, env: EnvLookup) -> Result<Settings, ConfigError> {
        let inputs = Inputs {
            cwd,
            env,
            env_source: &|_| None,
            data_dir: None,
            cwd_flag: None,
        };
        resolve_in(&inputs, false)
    }

    /// A minimal repository at `dir/.git`, for tests.
    pub(super) fn init(dir: &Path) {
        let git = dir.join(".git");
        fs::create_dir_all(git.join("objects")).unwrap();
        fs::create_dir_all(git.join("refs")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    /// The warnings' words, as a person reads them.
    fn words(settings: &Settings) -> Vec<String> {
        settings.warnings.iter().map(ToString::to_string).collect()
    }
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::fs;

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
            init(&root.path().join("repo"));
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
            self.root
                .path()
                .canonicalize()
                .unwrap()
                .join("repo/sub/proj")
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
        assert_eq!(s.auto_update, Setting::new(true, Origin::Default));
        assert_eq!(s.default_providers, Setting::new(true, Origin::Default));
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
                    key: "options.disable_provider_auto_update".into(),
                }
            };
            assert_eq!(setting.origin, expected, "{rel}");
        }
    }

    /// The setting `order` alone gives.
    fn by_order(settings: &Settings, order: Order) -> Setting {
        match (&settings.auto_update_orders, order) {
            (None, _) => settings.auto_update.clone(),
            (Some(both), Order::Spec) => both.spec.clone(),
            (Some(both), Order::CrushV090) => both.crush_v090.clone(),
        }
    }

    /// The levels of the spec's order (section 5), lowest first.
    fn spec_levels() -> Vec<(String, bool)> {
        vec![
            (format!("{GLOBAL_DATA}/crush.json"), true),
            ("repo/sub/proj/.crush/crush.json".into(), true),
            (format!("{GLOBAL_CONFIG}/crush.json"), true),
            (format!("{GLOBAL_CONFIG}/crushrc"), false),
            ("repo/crush.json".into(), true),
            ("repo/sub/proj/crush.json".into(), true),
            ("repo/sub/proj/crushrc".into(), false),
            ("repo/sub/proj/.crush.json".into(), true),
            ("repo/sub/proj/.crushrc".into(), false),
        ]
    }

    /// The levels of Crush v0.90's order (`lookupConfigs`, `Load`), lowest
    /// first.
    fn crush_levels() -> Vec<(String, bool)> {
        vec![
            (format!("{GLOBAL_CONFIG}/crush.json"), true),
            (format!("{GLOBAL_CONFIG}/crushrc"), false),
            (format!("{GLOBAL_DATA}/crush.json"), true),
            ("repo/crush.json".into(), true),
            ("repo/sub/proj/crush.json".into(), true),
            ("repo/sub/proj/.crush.json".into(), true),
            ("repo/sub/proj/crushrc".into(), false),
            ("repo/sub/proj/.crushrc".into(), false),
            ("repo/sub/proj/.crush/crush.json".into(), true),
        ]
    }

    /// For each pair of adjacent levels of each order, that order reads
    /// the higher one whichever way round the values are; the setting is
    /// off where either order reads off, and both are kept.
    #[test]
    fn adjacent_levels_keep_their_order() {
        for (order, levels) in [
            (Order::Spec, spec_levels()),
            (Order::CrushV090, crush_levels()),
        ] {
            adjacent_levels_in(order, &levels);
        }
    }

    fn adjacent_levels_in(order: Order, levels: &[(String, bool)]) {
        for pair in levels.windows(2) {
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
                let settings = f.resolve().unwrap();
                let setting = by_order(&settings, order);
                assert_eq!(setting.value, high_value, "{order}: {high} over {low}");
                assert!(
                    setting
                        .origin
                        .to_string()
                        .contains(&high_path.display().to_string()),
                    "{order}: {setting}"
                );
                let either_off = !by_order(&settings, Order::Spec).value
                    || !by_order(&settings, Order::CrushV090).value;
                assert_eq!(settings.auto_update.value, !either_off, "{high} over {low}");
            }
        }
    }

    /// Where the orders differ, the setting is the one that is off, the
    /// two are kept, and the one keeping the network off is named.
    #[test]
    fn going_out_needs_both_orders() {
        let f = Fixture::new();
        // The spec: the global crushrc over the global state; Crush v0.90:
        // the other way round.
        let state = f.write(&format!("{GLOBAL_DATA}/crush.json"), OFF_JSON);
        f.write(&format!("{GLOBAL_CONFIG}/crushrc"), ON_RC);
        let s = f.resolve().unwrap();
        assert!(!s.auto_update.value);
        let both = s.auto_update_orders.clone().unwrap();
        assert!(both.spec.value && !both.crush_v090.value);
        assert_eq!(both.kept_off_by(), Order::CrushV090);
        assert_eq!(
            s.auto_update.origin,
            Origin::Json {
                path: state,
                key: "options.disable_provider_auto_update".into()
            }
        );
        assert!(
            both.to_string()
                .ends_with("Crush v0.90's order keeps the network off"),
            "{both}"
        );
        // The other way round: the spec's order keeps it off.
        let f = Fixture::new();
        // The spec: `.crush.json` over `crushrc`; Crush v0.90: the other
        // way round.
        f.write("repo/sub/proj/crushrc", "option default-providers true\n");
        f.write(
            "repo/sub/proj/.crush.json",
            r#"{"options":{"disable_default_providers":true}}"#,
        );
        let s = f.resolve().unwrap();
        assert!(!s.default_providers.value);
        let both = s.default_providers_orders.clone().unwrap();
        assert_eq!(both.kept_off_by(), Order::Spec);
        assert_eq!(s.auto_update_orders, None);
        // The environment is over both: set false, it turns both on.
        let mut f = f;
        f.set(DISABLE_DEFAULT_PROVIDERS_ENV, "0");
        let s = f.resolve().unwrap();
        assert!(s.default_providers.value);
        assert_eq!(s.default_providers_orders, None);
        // A bad value is ignored by both: the files decide.
        f.set(DISABLE_DEFAULT_PROVIDERS_ENV, "maybe");
        assert!(!f.resolve().unwrap().default_providers.value);
    }

    /// Crush v0.90 takes the workspace folder from `option data-directory`
    /// merged in its own order: where that differs, its workspace file is
    /// read too, and it is the last of its files.
    #[test]
    fn each_order_has_its_workspace() {
        let f = Fixture::new();
        f.write(
            &format!("{GLOBAL_DATA}/crush.json"),
            r#"{"options":{"data_directory":"from-state"}}"#,
        );
        f.write(
            &format!("{GLOBAL_CONFIG}/crushrc"),
            "option data-directory from-rc\n",
        );
        let crush_file = f.write("repo/sub/proj/from-state/crush.json", OFF_JSON);
        let s = f.resolve().unwrap();
        assert_eq!(s.workspace.dir, f.cwd().join("from-rc"));
        assert!(!s.auto_update.value);
        assert_eq!(
            s.auto_update_orders.unwrap().kept_off_by(),
            Order::CrushV090
        );
        assert!(
            s.files.contains(&f.cwd().join("from-state/crush.json")),
            "{:?} {crush_file:?}",
            s.files
        );
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
        fs::remove_dir_all(f.root.path().join("repo/.git")).unwrap();
        f.write("repo/sub/crushrc", OFF_RC);
        assert!(f.auto_update().value);
        f.write("repo/sub/proj/crushrc", OFF_RC);
        assert!(!f.auto_update().value);
    }

    #[test]
    fn git_file_marks_a_linked_work_tree() {
        let f = Fixture::new();
        fs::remove_dir_all(f.root.path().join("repo/.git")).unwrap();
        init(&f.root.path().join("elsewhere"));
        let gitdir = f.root.path().join("elsewhere/.git");
        f.write("repo/sub/.git", &format!("gitdir: {}\n", gitdir.display()));
        f.write("repo/sub/crushrc", OFF_RC);
        f.write("repo/crushrc", ON_RC);
        assert!(!f.auto_update().value);
    }

    /// `git rev-parse --show-toplevel`: an empty `.git` folder is passed
    /// over (the walk goes on to the repository above), a broken `.git`
    /// file makes git fail (only the working directory is searched).
    #[test]
    fn only_a_repository_is_a_project_root() {
        let f = Fixture::new();
        f.write("repo/crushrc", OFF_RC);
        fs::create_dir_all(f.root.path().join("repo/sub/.git")).unwrap();
        assert!(!f.auto_update().value, "empty .git folder passed over");
        fs::remove_dir_all(f.root.path().join("repo/sub/.git")).unwrap();
        f.write("repo/sub/.git", "gitdir: /no/such/repository\n");
        assert!(f.auto_update().value, "broken .git file: cwd only");
        f.write("repo/sub/proj/crushrc", OFF_RC);
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
            assert_eq!(words(&s).len(), 1, "{value:?}");
            assert!(words(&s)[0].contains("is not a boolean"), "{:?}", words(&s));
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
        assert!(words(&s).is_empty(), "{:?}", words(&s));
    }

    #[test]
    fn skipped_compound_commands_warn_with_file_and_line() {
        let f = Fixture::new();
        let path = f.write(
            "repo/sub/proj/crushrc",
            "if true; then\n  option provider-auto-update false\nfi\n",
        );
        let s = f.resolve().unwrap();
        assert!(!s.auto_update.value, "counted as off: a shell may run it");
        assert_eq!(
            s.auto_update.origin,
            Origin::Unevaluated {
                path: path.clone(),
                line: 2
            }
        );
        assert_eq!(
            words(&s),
            [format!(
                "{}:2: `option provider-auto-update false` skipped: inside an if block opened at line 1; this reader does not run the shell, and Crush, which does, may turn provider-auto-update off there: counted as off, so no start-up request is made while this line stands",
                path.display()
            )]
        );
    }

    /// Code only a shell runs (`eval`, another file, a substitution, an
    /// unquoted here-document) may set anything, at any time up to the
    /// file's end (a function or a trap runs it last): both keys count as
    /// off after every line of the file, with the line as the origin. A
    /// line in a function's body counts after every line too; a higher
    /// file still decides.
    #[test]
    fn code_only_a_shell_runs_counts_both_keys_off_after_every_line() {
        let f = Fixture::new();
        for text in [
            "eval \"option provider-auto-update false\"\n",
            "x=$(option provider-auto-update false)\n",
            "cat <<EOF\n$(option provider-auto-update false)\nEOF\n",
            "source other\n",
            "eval x\noption provider-auto-update true\noption default-providers true\n",
            "off() { eval \"$1\"; }\noption provider-auto-update true\n",
        ] {
            let path = f.write("repo/sub/proj/crushrc", text);
            let s = f.resolve().unwrap();
            assert_eq!(
                (s.auto_update.value, s.default_providers.value),
                (false, false),
                "{text}"
            );
            assert_eq!(
                s.auto_update.origin,
                Origin::Unevaluated { path, line: 1 },
                "{text}"
            );
        }
        f.write(
            "repo/sub/proj/crushrc",
            "off() { option provider-auto-update false; }\noption provider-auto-update true\noff\n",
        );
        assert!(!f.auto_update().value, "a function's body runs when called");
        f.write("repo/sub/proj/crushrc", "eval x\n");
        f.write("repo/sub/proj/.crushrc", ON_RC);
        assert!(f.auto_update().value, "the higher file decides");
    }

    /// A line only a shell can evaluate counts as off where it may turn a
    /// key off (a literal false, a value or key of a variable, behind a
    /// prefix), where it stands: a later line that runs, or a higher
    /// file, still decides. One that can only turn it on changes nothing,
    /// and other keys are skipped as before.
    #[test]
    fn lines_only_a_shell_evaluates_count_as_off() {
        let mut f = Fixture::new();
        for (text, auto_update, default_providers) in [
            (
                "if x; then option provider-auto-update false; fi\n",
                false,
                true,
            ),
            (
                "for i in 1; do option default-providers no; done\n",
                true,
                false,
            ),
            ("f() { option provider-auto-update 0; }\nf\n", false, true),
            ("option provider-auto-update $V\n", false, true),
            ("option default-providers \"$V\"\n", true, false),
            ("option $KEY false\n", false, false),
            ("V=1 option provider-auto-update false\n", false, true),
            ("command option provider-auto-update false\n", false, true),
            ("true && option provider-auto-update false\n", false, true),
            (
                "if x; then option provider-auto-update true; fi\n",
                true,
                true,
            ),
            ("if x; then option provider-auto-update; fi\n", true, true),
            (
                "option provider-auto-update $V\noption provider-auto-update true\n",
                true,
                true,
            ),
            ("echo option provider-auto-update false\n", true, true),
            ("if x; then option data-directory $D; fi\n", true, true),
        ] {
            f.write("repo/sub/proj/crushrc", text);
            let s = f.resolve().unwrap();
            assert_eq!(
                (s.auto_update.value, s.default_providers.value),
                (auto_update, default_providers),
                "{text}"
            );
        }
        // A higher file's plain line is over it.
        f.write("repo/sub/proj/crushrc", "option provider-auto-update $V\n");
        f.write("repo/sub/proj/.crushrc", ON_RC);
        assert!(f.auto_update().value);
        // The environment is over every file.
        f.write("repo/sub/proj/.crushrc", "");
        f.set(DISABLE_AUTO_UPDATE_ENV, "0");
        assert!(f.auto_update().value);
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
        let s = f.resolve().unwrap();
        assert!(!s.auto_update.value, "words after the value are ignored");
        assert!(
            words(&s)[0].ends_with(":1: `option provider-auto-update false true`: the words after `false` are ignored, as Crush ignores them"),
            "{:?}",
            words(&s)
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
        let global = f.write(
            "home/.config/crush/crush.json",
            r#"{"options":{"provider_public_keys":["RWQglobal"]}}"#,
        );
        let keys = f.resolve().unwrap().public_keys.unwrap();
        assert_eq!(keys.entries, ["RWQglobal"]);
        assert_eq!(
            keys.origin,
            Origin::Json {
                path: global,
                key: "options.provider_public_keys".into()
            }
        );
        // The global state file pins too, below the global config.
        f.write(
            &format!("{GLOBAL_DATA}/crush.json"),
            r#"{"options":{"provider_public_keys":["RWQstate"]}}"#,
        );
        assert_eq!(
            f.resolve().unwrap().public_keys.unwrap().entries,
            ["RWQglobal"]
        );
        f.set("CRUSH_PROVIDER_PUBLIC_KEY", "RWQx, RWQy");
        let keys = f.resolve().unwrap().public_keys.unwrap();
        assert_eq!(keys.entries, ["RWQx", "RWQy"]);
        f.write(
            "home/.config/crush/crush.json",
            r#"{"options":{"provider_public_keys":"RWQa"}}"#,
        );
        assert!(
            f.resolve()
                .unwrap_err()
                .message
                .contains("must be a list of strings")
        );
    }

    /// Only the user pins keys: a project's file (the workspace's, or any
    /// of the walk) that names keys, none, or an empty one is ignored,
    /// with a warning naming it; the user's keys stay pinned.
    #[test]
    fn project_files_never_pin_or_unpin_keys() {
        let f = Fixture::new();
        f.write(
            "home/.config/crush/crush.json",
            r#"{"options":{"provider_public_keys":["RWQglobal"]}}"#,
        );
        let workspace = f.resolve().unwrap().workspace.dir.join("crush.json");
        let workspace = workspace
            .strip_prefix(f.root.path().canonicalize().unwrap())
            .unwrap();
        let workspace = workspace.to_str().unwrap().to_owned();
        for rel in [
            workspace.as_str(),
            "repo/sub/proj/crush.json",
            "repo/sub/proj/.crush.json",
            "repo/crush.json",
        ] {
            for keys in [r#"[]"#, r#"[""]"#, r#"["RWQother"]"#] {
                let path = f.write(
                    rel,
                    &format!(r#"{{"options":{{"provider_public_keys":{keys}}}}}"#),
                );
                let settings = f.resolve().unwrap();
                assert_eq!(
                    settings.public_keys.as_ref().unwrap().entries,
                    ["RWQglobal"],
                    "{rel} {keys}"
                );
                let warned = "options.provider_public_keys is ignored: keys are pinned only in your own configuration (the global crush.json) or by CRUSH_PROVIDER_PUBLIC_KEY, never by a project's files";
                assert!(
                    words(&settings).iter().any(|w| w.ends_with(warned)
                        && w.contains(path.file_name().unwrap().to_str().unwrap())),
                    "{rel} {keys}: {:?}",
                    words(&settings)
                );
                fs::remove_file(&path).unwrap();
            }
        }
    }

    /// Only the user pins keys: a global folder a project's `.env` moves
    /// is read for Crush's own settings, as Crush reads it, but its keys
    /// are ignored (told), and the file the user's own environment finds
    /// still pins.
    #[test]
    fn a_dotenv_moves_the_settings_but_not_the_pins() {
        let mut f = Fixture::new();
        f.write(
            "home/.config/crush/crush.json",
            r#"{"options":{"provider_public_keys":["RWQuser"]}}"#,
        );
        let moved = f.write(
            "elsewhere/crush.json",
            r#"{"options":{"disable_provider_auto_update":true,"provider_public_keys":["RWQproject"]}}"#,
        );
        f.set(
            "CRUSH_GLOBAL_CONFIG",
            &moved.parent().unwrap().to_string_lossy(),
        );
        let vars = f.vars.clone();
        let from_dotenv = |name: &str| {
            (name == "CRUSH_GLOBAL_CONFIG").then(|| (PathBuf::from("/project/.env"), 1))
        };
        let cwd = f.cwd();
        let inputs = Inputs {
            cwd: &cwd,
            env: &move |k: &str| vars.get(k).cloned(),
            env_source: &from_dotenv,
            data_dir: None,
            cwd_flag: None,
        };
        let settings = resolve_in(&inputs, false).unwrap();
        assert!(!settings.auto_update.value);
        assert_eq!(settings.public_keys.unwrap().entries, ["RWQuser"]);
        let warned = format!(
            "{}: options.provider_public_keys is ignored: this file is found where a project's .env moved the global folders",
            moved.display()
        );
        assert!(
            settings
                .warnings
                .iter()
                .any(|w| w.to_string().starts_with(&warned)),
            "{:?}",
            settings.warnings
        );
        // Set by the user, the same variable moves the pins too.
        let settings = f.resolve().unwrap();
        assert_eq!(settings.public_keys.unwrap().entries, ["RWQproject"]);
    }

    /// Go's rules for JSON files: any letter case, `null` as absent, a
    /// higher file's value replacing a lower one of another type (told).
    #[test]
    fn json_is_read_as_go_reads_it() {
        let f = Fixture::new();
        let path = f.write(
            "repo/sub/proj/crush.json",
            r#"{"Options": {"Disable_Provider_Auto_Update": true}}"#,
        );
        let s = f.auto_update();
        assert!(!s.value);
        assert_eq!(
            s.origin.to_string(),
            format!("Options.Disable_Provider_Auto_Update in {}", path.display())
        );
        f.write("repo/sub/proj/crush.json", r#"{"options": null}"#);
        assert!(f.auto_update().value);
        f.write(
            &format!("{GLOBAL_CONFIG}/crush.json"),
            r#"{"options": {"disable_provider_auto_update": "yes"}}"#,
        );
        assert!(
            f.resolve()
                .unwrap_err()
                .message
                .contains("must be true or false"),
            "a wrong type left after merging"
        );
        f.write("repo/sub/proj/crush.json", OFF_JSON);
        let s = f.resolve().unwrap();
        assert!(!s.auto_update.value, "the higher file's value");
        assert!(
            words(&s)[0].contains("(a boolean) replaces a string from"),
            "{:?}",
            words(&s)
        );
        // An object replacing a value: the warning names its file too.
        let global = f.write(
            &format!("{GLOBAL_CONFIG}/crush.json"),
            r#"{"options": "x"}"#,
        );
        let project = f
            .root
            .path()
            .canonicalize()
            .unwrap()
            .join("repo/sub/proj/crush.json");
        let s = f.resolve().unwrap();
        assert!(
            words(&s)[0].starts_with(&format!(
                "{}: options (an object) replaces a string from {}",
                project.display(),
                global.display()
            )),
            "{:?}",
            words(&s)
        );
    }

    /// Files read as Go reads them: bytes that are not UTF-8 inside a JSON
    /// string are fine (Go decodes them as U+FFFD), a JSON file of blanks
    /// alone is not JSON (Crush refuses to start on it), while a crushrc of
    /// blanks sets nothing.
    #[test]
    fn file_contents_as_go_reads_them() {
        let f = Fixture::new();
        let path = f.root.path().join("repo/sub/proj/crush.json");
        fs::write(
            &path,
            b"{\"description\": \"caf\xe9\", \"options\": {\"disable_provider_auto_update\": true}}",
        )
        .unwrap();
        assert!(!f.auto_update().value);
        fs::write(&path, " \n\t\r\n").unwrap();
        let e = f.resolve().unwrap_err();
        assert!(e.message.contains("only blanks"), "{e}");
        fs::remove_file(&path).unwrap();
        f.write("repo/sub/proj/crushrc", " \n\n");
        f.write(
            "repo/sub/proj/.crushrc",
            "# caf\u{e9}\noption provider-auto-update false\n",
        );
        fs::write(
            f.root.path().join("repo/sub/proj/.crushrc"),
            b"# caf\xe9\noption provider-auto-update false\n",
        )
        .unwrap();
        assert!(!f.auto_update().value);
    }

    /// A FIFO, a socket or a device where a configuration file is expected
    /// is never opened (Crush would wait on a FIFO for good; this says
    /// what it is and reads nothing); a folder is an error too.
    #[cfg(unix)]
    #[test]
    fn files_that_are_not_regular_never_hang() {
        let f = Fixture::new();
        let fifo = |rel: &str| {
            let path = f.root.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            path
        };
        let global = fifo(&format!("{GLOBAL_CONFIG}/crushrc"));
        let e = f.resolve().unwrap_err();
        assert_eq!(e.path, global);
        assert!(e.message.contains("not a regular file"), "{e}");
        fs::remove_file(&global).unwrap();
        // The workspace file Crush passes over when it cannot read it.
        fifo("repo/sub/proj/.crush/crush.json");
        assert!(f.auto_update().value);
        // git's own files, while looking for the project root.
        fs::remove_file(f.root.path().join("repo/.git/HEAD")).unwrap();
        fifo("repo/.git/HEAD");
        assert_eq!(
            f.resolve().unwrap().root,
            root::Root::None(root::NoRoot::NoRepository)
        );
        fs::create_dir_all(f.root.path().join("repo/sub/proj/crush.json")).unwrap();
        assert!(f.resolve().is_err(), "a folder");
    }

    #[test]
    fn the_environment_turns_default_providers_off() {
        let mut f = Fixture::new();
        f.set(DISABLE_DEFAULT_PROVIDERS_ENV, "1");
        let s = f.resolve().unwrap();
        assert!(!s.default_providers.value);
        assert_eq!(
            s.default_providers.origin.to_string(),
            "CRUSH_DISABLE_DEFAULT_PROVIDERS=1"
        );
        f.write("repo/sub/proj/.crushrc", "option default-providers false\n");
        f.set(DISABLE_DEFAULT_PROVIDERS_ENV, "false");
        assert!(f.resolve().unwrap().default_providers.value);
    }

    #[test]
    fn the_system_file_is_lowest() {
        let mut f = Fixture::new();
        let system = f.write("etc/crush.json", OFF_JSON);
        f.set(paths::SYSTEM_CONFIG_ENV, &system.to_string_lossy());
        let s = f.auto_update();
        assert!(!s.value);
        assert!(s.origin.to_string().ends_with("etc/crush.json"), "{s}");
        f.write(&format!("{GLOBAL_DATA}/crush.json"), ON_JSON);
        assert!(f.auto_update().value);
    }

    /// Level 3 is the workspace folder's `crush.json`: `-D`, else `option
    /// data-directory`, else the nearest `.crush`, else `./.crush`.
    #[test]
    fn the_workspace_file_follows_the_workspace_folder() {
        let f = Fixture::new();
        let resolve_d = |d: Option<&Path>| {
            let vars = f.vars.clone();
            let env = move |k: &str| vars.get(k).cloned();
            resolve_in(
                &Inputs {
                    cwd: &f.cwd(),
                    env: &env,
                    env_source: &|_| None,
                    data_dir: d,
                    cwd_flag: None,
                },
                false,
            )
            .unwrap()
        };
        f.write("repo/.crush/crush.json", OFF_JSON);
        let s = resolve_d(None);
        assert!(!s.auto_update.value, "the nearest .crush, up to the root");
        assert_eq!(s.workspace.from, files::WorkspaceFrom::Nearest);
        f.write("repo/sub/proj/.crushrc", "option data-directory ../state\n");
        f.write("repo/sub/state/crush.json", ON_JSON);
        let s = resolve_d(None);
        assert_eq!(s.workspace.dir, f.cwd().parent().unwrap().join("state"));
        assert!(s.auto_update.value);
        let flag = f.root.path().join("flagged");
        f.write("flagged/crush.json", OFF_JSON);
        let s = resolve_d(Some(&flag));
        assert_eq!(s.workspace.from, files::WorkspaceFrom::Flag);
        assert!(!s.auto_update.value);
    }

    #[test]
    fn crushrc_lines_crush_refuses_are_warnings() {
        let f = Fixture::new();
        f.write(
            "repo/sub/proj/crushrc",
            "option provider-auto-update=false\noption no-such-key 1\n",
        );
        let s = f.resolve().unwrap();
        assert!(s.auto_update.value);
        assert_eq!(words(&s).len(), 2, "{:?}", words(&s));
        assert!(words(&s)[0].ends_with(":1: `option provider-auto-update=false`: there is no option \"provider-auto-update=false\", so it changes nothing, and Crush refuses to start on it; did you mean `option provider-auto-update false`?"), "{}", words(&s)[0]);
        f.write(
            "repo/sub/proj/crushrc",
            "option provider-auto-update \"\"\n",
        );
        assert!(f.auto_update().value, "an empty value is a bare flag");
    }

    #[test]
    fn an_env_origin_names_the_dotenv_file() {
        let mut f = Fixture::new();
        f.set(DISABLE_AUTO_UPDATE_ENV, "1");
        let vars = f.vars.clone();
        let env = move |k: &str| vars.get(k).cloned();
        let source =
            |name: &str| (name == DISABLE_AUTO_UPDATE_ENV).then(|| (PathBuf::from("/w/.env"), 2));
        let s = resolve_in(
            &Inputs {
                cwd: &f.cwd(),
                env: &env,
                env_source: &source,
                data_dir: None,
                cwd_flag: None,
            },
            false,
        )
        .unwrap();
        assert_eq!(
            s.auto_update.origin.to_string(),
            "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1 at /w/.env:2"
        );
    }

    /// What reaches a terminal from a file or the environment: quoted and
    /// escaped when it holds a control, or a character that reverses or
    /// hides text (a path named `evil\u{202e}txt.json`).
    #[test]
    fn shown_text_escapes_what_reads_otherwise() {
        assert_eq!(shown("plain/path"), "plain/path");
        assert_eq!(shown("a\nb"), r#""a\nb""#);
        assert_eq!(shown("evil\u{202e}txt"), r#""evil\u{202e}txt""#);
        assert_eq!(shown("a\u{200b}b"), r#""a\u{200b}b""#);
    }

    #[test]
    fn empty_and_unrelated_json_files_are_skipped() {
        let f = Fixture::new();
        f.write("repo/sub/proj/crush.json", "");
        f.write(
            "repo/sub/proj/.crush.json",
            r#"{"$schema":"x","providers":{},"options":{"debug":true}}"#,
        );
        let s = f.resolve().unwrap();
        assert_eq!(s.auto_update, Setting::new(true, Origin::Default));
        assert_eq!(s.files.len(), 1);
    }
}
