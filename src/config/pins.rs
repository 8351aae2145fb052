//! Only the user pins keys. The files that may pin them (the system file,
//! the global state, the global JSON config: `options.provider_public_keys`,
//! a later one's list replacing an earlier one's) are found through the
//! user's own environment: the process's variables, never a project's
//! `.env`. Crush loads that file before it reads its configuration, so a
//! `.env` that sets `CRUSH_GLOBAL_CONFIG` or `XDG_CONFIG_HOME` moves the
//! files Crush's own settings come from (and this reader follows it for
//! them), but were it to move the pins too, a cloned repository could
//! unpin the mirror's key, or pin its own. `CRUSH_PROVIDER_PUBLIC_KEY`,
//! which beats the files, is never taken from a `.env` either
//! (`commands::context::install_dotenv`), nor is the variable that moves
//! the system file.

use std::ffi::OsString;
use std::path::PathBuf;

use super::read::read_file;
use super::{ConfigError, Format, Inputs, Origin, PinnedKeys, Warning, files};
use crate::trust::signature::KEYS_ENV;

/// The pinned keys, and the files that may pin them.
pub(super) struct Pins {
    /// The keys, and where they were pinned; `None` when none is.
    pub(super) keys: Option<PinnedKeys>,
    /// The user's files that may pin keys, lowest priority first, whether
    /// there or not.
    pub(super) files: Vec<PathBuf>,
}

/// A variable of the user's own environment: `inputs`' environment
/// without what came from a `.env` file.
fn users_var(inputs: &Inputs<'_>, name: &str) -> Option<OsString> {
    match (inputs.env_source)(name) {
        Some(_) => None,
        None => (inputs.env)(name),
    }
}

/// The keys the user pins: in the JSON files their own environment finds
/// that are not among the `project`'s files, or by
/// `CRUSH_PROVIDER_PUBLIC_KEY`. A file that cannot be read fails as the
/// settings do, or, where `tolerated` allows, is passed over with the
/// warning the settings give (once).
pub(super) fn resolve(
    inputs: &Inputs<'_>,
    project: &[PathBuf],
    tolerated: &dyn Fn(Format) -> bool,
    warnings: &mut Vec<Warning>,
) -> Result<Pins, ConfigError> {
    let env = |name: &str| users_var(inputs, name);
    let files: Vec<PathBuf> = files::sources(&env, Vec::new())
        .into_iter()
        .filter(|(path, format, _)| *format == Format::Json && !project.contains(path))
        .map(|(path, _, _)| path)
        .collect();
    let mut keys = None;
    for path in &files {
        match read_file(path, Format::Json, 0) {
            Ok(None) => {}
            Ok(Some((loaded, _))) => keys = loaded.keys.or(keys),
            Err(e) if tolerated(Format::Json) => {
                let warning = Warning::FileNotRead(e);
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(value) = env(KEYS_ENV) {
        let value = value.to_string_lossy().into_owned();
        keys = Some(PinnedKeys {
            entries: value.split(',').map(str::trim).map(str::to_owned).collect(),
            origin: Origin::Env {
                name: KEYS_ENV,
                value,
                dotenv: None,
            },
        });
    }
    Ok(Pins { keys, files })
}
