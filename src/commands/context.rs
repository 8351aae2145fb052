//! What every command starts from: Crush's global flags (`-c`, `-D`, `-d`,
//! `-H`), the settings they resolve to, and the start-up catalog.

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::cli::Cli;
use super::output::{Said, print, say};
use super::{Exit, inputs};
use crate::catalog::{self, Catalog, Target};
use crate::config::{self, DISABLE_AUTO_UPDATE_ENV, DISABLE_DEFAULT_PROVIDERS_ENV, Settings};
use crate::environment::{self, Source};
use crate::error::{Cause, Failure};
use crate::startup::network::Network;
pub(super) use crate::startup::pinned_keys;
use crate::startup::{self, Background, Provenance, StartupCatalog, StartupOptions};
use crate::store::cache::CacheFiles;
use crate::store::paths::{self, process_env};
use crate::trust::signature::KEYS_ENV;

/// Loads the `.env` file of the folder this process started in, as Crush's
/// start does, into the environment every command reads. A key pinned in
/// it is not taken, nor the system file moved (this tool's own variable,
/// which Crush does not have): a project's folder cannot pin keys, only
/// the user. Nor is the data folder moved: the cache there decides where
/// keys go, and the memory of where they went lives beside it (the front
/// hands Crush the same folder).
pub(super) fn install_dotenv() {
    let data = "only your own environment moves the data folder, where the cache and the memory of where keys went live";
    let refused = [
        (KEYS_ENV, "only the user pins keys"),
        (
            paths::SYSTEM_CONFIG_ENV,
            "only your own environment moves the system file",
        ),
        ("XDG_DATA_HOME", data),
        ("LOCALAPPDATA", data),
    ];
    let loaded = std::env::current_dir()
        .ok()
        .and_then(|dir| environment::load(&dir, &refused));
    environment::install(loaded);
}

/// The global flags, and the working folder.
#[derive(Debug)]
pub(super) struct Context {
    /// The working folder: `-c/--cwd`, else the current one, by the name
    /// Crush gives it ([`config::files::working_folder`]).
    folder: config::files::WorkingFolder,
    /// `-D/--data-dir`.
    data_dir: Option<PathBuf>,
    /// `-d/--debug`.
    debug: bool,
}

impl Context {
    /// The context of the global flags; those of Crush's that mean
    /// nothing here (`-H`, `--channels`) said so under `--debug`.
    pub(super) fn new(cli: &Cli) -> Result<Context, Exit> {
        // A `-c` that names no folder is a usage error.
        let cwd = cli.cwd.as_deref();
        let folder = config::files::working_folder(cwd).map_err(|e| match cwd {
            Some(dir) => Exit::Usage(format!("--cwd {}: {e}", dir.display())),
            None => Exit::from(Failure::new("working directory", Cause::WorkingDir(e))),
        })?;
        let context = Context {
            folder,
            data_dir: cli.data_dir.clone(),
            debug: cli.debug.unwrap_or(false),
        };
        let ignored = [
            ("--host", cli.host.clone()),
            ("--channels", Some(cli.channels.join(","))),
        ];
        for (flag, value) in ignored {
            if let Some(value) = value.filter(|v| !v.is_empty()) {
                context.say_debug(format_args!(
                    "{flag} {}: accepted for Crush's sake; it has no effect here",
                    config::shown(&value)
                ));
            }
        }
        Ok(context)
    }

    /// A line on stderr under `--debug`.
    pub(super) fn say_debug(&self, line: impl Display) {
        if self.debug {
            say(Said::Plain, format_args!("debug: {line}"));
        }
    }

    /// The settings, their warnings printed; `passing_over` every file
    /// that cannot be used, as `update-providers` reads them (Crush's reads
    /// no configuration at all), the warnings of the files passed over
    /// handed back for the command to tell in its own words.
    pub(super) fn read_settings(
        &self,
        passing_over: bool,
    ) -> Result<(Settings, Vec<config::Warning>), Exit> {
        let mut settings = read_settings(&self.folder, self.data_dir.as_deref(), passing_over)
            .map_err(|e| Failure::new(config::shown_path(&e.path), Cause::Config(e)))?;
        let (passed_over, others) = std::mem::take(&mut settings.warnings)
            .into_iter()
            .partition(|warning| {
                use config::Warning::{FileNotRead, OptionsNotRead};
                passing_over && matches!(warning, FileNotRead(_) | OptionsNotRead(_))
            });
        settings.warnings = others;
        let mut warnings = inputs::dotenv_warnings();
        warnings.extend(settings.warnings.iter().map(ToString::to_string));
        for name in [DISABLE_AUTO_UPDATE_ENV, DISABLE_DEFAULT_PROVIDERS_ENV] {
            let at = match environment::set_but_empty(name) {
                None => continue,
                Some(Source::Process) => String::new(),
                Some(Source::DotEnv(path, line)) => {
                    format!(" at {}:{line}", config::shown_path(&path))
                }
            };
            warnings.push(format!(
                "{name} is set but empty{at}: ignored here, the files decide (Crush v0.90 reads it as false, which turns its own requests on)"
            ));
        }
        for warning in warnings {
            say(Said::Warning, format_args!("{warning}"));
        }
        let (auto_update, default_providers) = (&settings.auto_update, &settings.default_providers);
        self.say_debug(format_args!("provider-auto-update: {auto_update}"));
        self.say_debug(format_args!("default-providers: {default_providers}"));
        if let Some(keys) = &settings.public_keys {
            self.say_debug(format_args!("public keys: {}", keys.origin));
        }
        Ok((settings, passed_over))
    }

    /// Runs the start-up policy with the given settings on the cache
    /// `files`, exactly as Crush does when it starts, printing its
    /// warnings (and, under `--debug`, its inputs and the request made). A
    /// refresh runs in a detached helper process: this command prints and
    /// exits at once, and a new catalog shows from the next start on.
    pub(super) fn startup(
        &self,
        settings: &Settings,
        files: &CacheFiles,
        wait: bool,
    ) -> Result<StartupCatalog, Exit> {
        let mut prepared = StartupOptions::from_settings(settings, files);
        let network = &prepared.network;
        if self.debug {
            for (key, value) in inputs::gather(settings, &prepared.env, network).rows() {
                match key {
                    "" => self.say_debug(format_args!("  {value}")),
                    key => self.say_debug(format_args!("{key}: {value}")),
                }
            }
        }
        // Where this very program is; should it not be found, refreshes
        // run on a thread, and this command waits for none of them.
        let options = &mut prepared.options;
        options.background =
            std::env::current_exe().map_or(Background::Thread, Background::Process);
        options.wait = wait;
        if wait {
            options.watch = super::watch::watched(true);
        }
        let loaded = startup::load(files, options);
        super::watch::done(&options.watch);
        if let Some(code) = loaded.interrupted {
            return Err(Exit::Interrupted(code));
        }
        for warning in prepared.warnings.iter().chain(&loaded.warnings) {
            say(Said::Warning, format_args!("{warning}"));
        }
        let Network::Allowed(url) = &prepared.network else {
            self.say_debug("no request made");
            return Ok(loaded);
        };
        if loaded.refreshing.contains(&Target::Hyper) {
            self.say_debug(
                "Hyper's provider: refreshed in the background too, with the Hyper key, conditional on hyper.json's validators",
            );
        }
        let url = crate::fetch::source::redacted(url.as_str());
        let refreshing = loaded.refreshing.contains(&Target::Catalog);
        self.say_debug(match (refreshing, wait) {
            (true, _) => format!(
                "GET {url}: started in the background (a helper process), conditional on the cache's validators"
            ),
            (false, true) if loaded.provenance == Provenance::Fresh => {
                format!("GET {url}: waited for; a new catalog")
            }
            (false, true) => format!("GET {url}: waited for"),
            (false, false) => {
                "no request made: the cache was confirmed within the refresh interval".into()
            }
        });
        Ok(loaded)
    }
}

/// The cache files under the data folder.
pub(super) fn cache_files() -> Result<CacheFiles, Failure> {
    paths::data_dir(&process_env)
        .map(CacheFiles::in_dir)
        .map_err(|e| Failure::new("data folder", e))
}

/// The settings of `folder` as a start reads them, with `-D/--data-dir`
/// `data_dir`, the environment and the `.env` this process loaded, nothing
/// printed: [`Settings::auto_update`] and [`Settings::default_providers`]
/// say on only when every reading says on (both orders of the files, a
/// crushrc line only a shell can evaluate counted as off), which is what
/// decides whether a start may go out. When `tolerated`, a file that
/// cannot be used is skipped with a warning.
pub(crate) fn read_settings(
    folder: &config::files::WorkingFolder,
    data_dir: Option<&Path>,
    tolerated: bool,
) -> Result<Settings, config::ConfigError> {
    let source = |name: &str| match environment::source(name) {
        Some(Source::DotEnv(path, line)) => Some((path, line)),
        _ => None,
    };
    let inputs = config::Inputs {
        cwd: &folder.dir,
        env: &process_env,
        env_source: &source,
        data_dir,
        cwd_flag: folder.flag.as_deref(),
    };
    config::resolve_in(&inputs, tolerated)
}

/// The catalog a listing command shows: the start-up catalog, validated;
/// or, with `default-providers` off, `None`, the command having said that
/// there are no `what` (`[]` in JSON).
pub(super) fn listed(
    loaded: &StartupCatalog,
    settings: &Settings,
    what: &str,
    json: bool,
) -> Result<Option<Catalog>, Exit> {
    if loaded.provenance == Provenance::Disabled {
        let setting = &settings.default_providers;
        print(|out| match json {
            true => writeln!(out, "[]"),
            false => writeln!(out, "No {what}: default-providers is {setting}."),
        })?;
        return Ok(None);
    }
    // Valid by construction; a failure here would be a bug, reported as
    // such rather than a panic.
    let catalog = catalog::validate(&loaded.bytes);
    Ok(Some(
        catalog.map_err(|e| Failure::new("start-up catalog", e))?,
    ))
}
