//! What every command starts from: Crush's global flags (`-c`, `-D`, `-d`,
//! `-H`), the settings they resolve to, and the start-up catalog.

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::cli::Cli;
use super::output::{Said, print, say, warn};
use super::{Exit, inputs};
use crate::catalog::{self, Catalog};
use crate::config::{self, Settings};
use crate::environment::{self, Source};
use crate::error::{Cause, Failure};
use crate::startup::network::Network;
pub(super) use crate::startup::pinned_keys;
pub(super) use crate::startup::settings::env_options;
use crate::startup::{self, Background, EnvOptions, Provenance, StartupCatalog, StartupOptions};
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
        let context = Context {
            folder: working_folder(cli.cwd.as_deref())?,
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

    /// The settings, their warnings printed.
    pub(super) fn settings(&self) -> Result<Settings, Exit> {
        let settings = self.resolve(|_| false)?;
        self.tell(&settings);
        Ok(settings)
    }

    /// The settings with every file that cannot be used passed over, as
    /// `update-providers` reads them (Crush's reads no configuration at
    /// all): their warnings printed, but those of the files passed over,
    /// which are handed back for the command to tell in its own words.
    pub(super) fn settings_passing_over(&self) -> Result<(Settings, Vec<config::Warning>), Exit> {
        let mut settings = self.resolve(|_| true)?;
        let (passed_over, others) = std::mem::take(&mut settings.warnings)
            .into_iter()
            .partition(|warning| {
                matches!(
                    warning,
                    config::Warning::FileNotRead(_) | config::Warning::OptionsNotRead(_)
                )
            });
        settings.warnings = others;
        self.tell(&settings);
        Ok((settings, passed_over))
    }

    /// The settings, a file of a format `tolerated` allows skipped with a
    /// warning when it cannot be used ([`read_settings`]).
    fn resolve(&self, tolerated: impl Fn(config::Format) -> bool) -> Result<Settings, Exit> {
        read_settings(&self.folder, self.data_dir.as_deref(), tolerated)
            .map_err(|e| Exit::from(Failure::new(config::shown_path(&e.path), Cause::Config(e))))
    }

    /// Prints the warnings of `settings` and of the environment, and
    /// under `--debug` what they resolved to.
    fn tell(&self, settings: &Settings) {
        let empty = [config::DISABLE_AUTO_UPDATE_ENV, config::DISABLE_DEFAULT_PROVIDERS_ENV]
            .into_iter()
            .filter_map(|name| {
                let at = match environment::set_but_empty(name)? {
                    Source::Process => String::new(),
                    Source::DotEnv(path, line) => format!(" at {}:{line}", config::shown_path(&path)),
                };
                Some(format!(
                    "{name} is set but empty{at}: ignored here, the files decide (Crush v0.90 reads it as false, which turns its own requests on)"
                ))
            });
        let empty: Vec<String> = empty.collect();
        let settings_warnings = settings.warnings.iter().map(ToString::to_string);
        for warning in inputs::dotenv_warnings()
            .into_iter()
            .chain(settings_warnings)
            .chain(empty)
        {
            say(Said::Warning, format_args!("{warning}"));
        }
        self.say_debug(format_args!(
            "provider-auto-update: {}",
            settings.auto_update
        ));
        self.say_debug(format_args!(
            "default-providers: {}",
            settings.default_providers
        ));
        if let Some(keys) = &settings.public_keys {
            self.say_debug(format_args!("public keys: {}", keys.origin));
        }
    }

    /// Runs the start-up policy with the given settings on the cache
    /// `files`, exactly as Crush does when it starts, printing its
    /// warnings. A refresh runs in a detached helper process: this command
    /// prints and exits at once, and a new catalog shows from the next
    /// start on.
    pub(super) fn startup(
        &self,
        settings: &Settings,
        files: &CacheFiles,
        wait: bool,
    ) -> Result<StartupCatalog, Exit> {
        let mut prepared = StartupOptions::from_settings(settings, files);
        self.debug_inputs(settings, &prepared.env, &prepared.network);
        // Where this very program is; should it not be found, refreshes
        // run on a thread, and this command waits for none of them.
        prepared.options.background =
            std::env::current_exe().map_or(Background::Thread, Background::Process);
        prepared.options.wait = wait;
        if wait {
            prepared.options.watch = super::watch::watched(true);
        }
        let (options, warnings, network) = (prepared.options, prepared.warnings, prepared.network);
        let loaded = startup::load(files, &options);
        super::watch::done(&options.watch);
        if let Some(code) = loaded.interrupted {
            return Err(Exit::Interrupted(code));
        }
        for warning in warnings.iter().chain(&loaded.warnings) {
            warn(warning);
        }
        self.debug_outcome(&network, &loaded, wait);
        Ok(loaded)
    }

    fn debug_inputs(&self, settings: &Settings, env: &EnvOptions, network: &Network) {
        if !self.debug {
            return;
        }
        let used = inputs::gather(settings, env, network);
        for (key, value) in used.rows() {
            match key {
                "" => self.say_debug(format_args!("  {value}")),
                key => self.say_debug(format_args!("{key}: {value}")),
            }
        }
    }

    fn debug_outcome(&self, network: &Network, loaded: &StartupCatalog, wait: bool) {
        let Network::Allowed(url) = network else {
            self.say_debug("no request made");
            return;
        };
        if loaded.hyper_refreshing {
            self.say_debug(
                "Hyper's provider: refreshed in the background too, with the Hyper key, conditional on hyper.json's validators",
            );
        }
        let url = crate::fetch::source::redacted(url.as_str());
        if loaded.refreshing {
            self.say_debug(format_args!(
                "GET {url}: started in the background (a helper process), conditional on the cache's validators"
            ));
        } else if wait && loaded.provenance == startup::Provenance::Fresh {
            self.say_debug(format_args!("GET {url}: waited for; a new catalog"));
        } else if wait {
            self.say_debug(format_args!("GET {url}: waited for"));
        } else {
            self.say_debug("no request made: the cache was confirmed within the refresh interval");
        }
    }
}

/// The cache files under the data folder.
pub(super) fn cache_files() -> Result<CacheFiles, Failure> {
    paths::data_dir(&process_env)
        .map(CacheFiles::in_dir)
        .map_err(|e| Failure::new("data folder", e))
}

/// The working folder Crush reads its project settings from, for
/// `-c/--cwd` `cwd` ([`config::files::working_folder`]: `$PWD` kept, and
/// a relative `-c` taken as Crush takes it); one that names no folder is
/// a usage error. What the front reads the settings of, with
/// [`read_settings`].
pub(crate) fn working_folder(cwd: Option<&Path>) -> Result<config::files::WorkingFolder, Exit> {
    config::files::working_folder(cwd).map_err(|e| match cwd {
        Some(dir) => Exit::Usage(format!("--cwd {}: {e}", dir.display())),
        None => Exit::from(Failure::new("working directory", Cause::WorkingDir(e))),
    })
}

/// The settings of `folder` as a start reads them, with `-D/--data-dir`
/// `data_dir`, the environment and the `.env` this process loaded, nothing
/// printed: [`Settings::auto_update`] and [`Settings::default_providers`]
/// say on only when every reading says on (both orders of the files, a
/// crushrc line only a shell can evaluate counted as off), which is what
/// decides whether a start may go out. A file of a format `tolerated`
/// allows is skipped with a warning when it cannot be used.
pub(crate) fn read_settings(
    folder: &config::files::WorkingFolder,
    data_dir: Option<&Path>,
    tolerated: impl Fn(config::Format) -> bool,
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
    };
    config::resolve_with_flag(&inputs, folder.flag.as_deref(), tolerated)
}

/// The catalog a listing command shows: the start-up catalog, validated;
/// or, with `default-providers` off, `None`, the command having said that
/// there are no `what` (`[]` in JSON).
pub(super) fn listed<'a>(
    loaded: &'a StartupCatalog,
    settings: &Settings,
    what: &str,
    json: bool,
) -> Result<Option<Catalog<'a>>, Exit> {
    if loaded.provenance == Provenance::Disabled {
        print(|out| {
            if json {
                writeln!(out, "[]")
            } else {
                writeln!(
                    out,
                    "No {what}: default-providers is {}.",
                    settings.default_providers
                )
            }
        })?;
        return Ok(None);
    }
    // Valid by construction; a failure here would be a bug, reported as
    // such rather than a panic.
    catalog::validate(&loaded.bytes)
        .map(Some)
        .map_err(|e| Exit::from(Failure::new("start-up catalog", e)))
}
