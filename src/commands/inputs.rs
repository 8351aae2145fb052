//! Every input a start uses and where each came from, as `providers
//! --status` and `--debug` show them: the settings and their files, the
//! `.env` file, the environment's options, the proxy, the workspace, the
//! project root, and the answer to "may I go out?".

use std::time::Duration;

use serde::Serialize;

use crate::config::files::WorkspaceFrom;
use crate::config::root::{NoRoot, Root};
use crate::config::{Settings, shown, shown_path};
use crate::environment;
use crate::fetch::proxy::{self, Direct, ProxyEnv, Route};
use crate::fetch::source::redacted;
use crate::startup::network::Network;
pub(super) use crate::startup::settings::env_origin;
use crate::startup::{self, EnvOptions};
use crate::store::paths::{self, process_env};

/// What the `.env` file gave, and what it could not.
pub(super) fn dotenv_warnings() -> Vec<String> {
    let Some(dotenv) = environment::installed() else {
        return Vec::new();
    };
    let path = shown_path(&dotenv.path);
    let error = dotenv.error.iter().map(|error| {
        let error = shown(error);
        format!("{path}: {error}; nothing of it is loaded (Crush loads nothing of it either)")
    });
    let refused = dotenv.refused.iter().map(|(name, line, why)| {
        let name = shown(name);
        format!("{path}:{line}: {name} is not taken from a .env file: {why}")
    });
    error.chain(refused).collect()
}

/// The inputs, as `--status --json` shows them.
#[derive(Debug, Serialize)]
pub(super) struct Inputs {
    refresh: RefreshJson,
    catwalk_url: Valued,
    refresh_timeout_seconds: f64,
    refresh_timeout_origin: String,
    proxy: String,
    dotenv: Option<DotEnvJson>,
    config_folder: Valued,
    data_folder: Valued,
    config_files: Vec<String>,
    skipped_files: Vec<Skipped>,
    project_root: String,
    workspace: Valued,
}

#[derive(Debug, Serialize)]
struct RefreshJson {
    allowed: bool,
    /// The URL, or why there is no refresh.
    detail: String,
}

#[derive(Debug, Serialize)]
struct Valued {
    value: String,
    origin: String,
}

#[derive(Debug, Serialize)]
struct DotEnvJson {
    path: String,
    sets: Vec<String>,
    shadowed: Vec<String>,
    refused: Vec<String>,
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct Skipped {
    path: String,
    why: String,
}

/// A value and where it came from.
fn valued(value: String, origin: String) -> Valued {
    Valued { value, origin }
}

/// Where the first of `variables` that is set came from, else `default`.
fn origin(variables: &[&str]) -> String {
    let origin = variables.iter().find_map(|v| env_origin(v));
    origin.unwrap_or_else(|| "default".into())
}

/// Gathers the inputs.
pub(super) fn gather(settings: &Settings, env: &EnvOptions, network: &Network) -> Inputs {
    let (allowed, detail) = match network {
        Network::Allowed(url) => (true, redacted(url.as_str())),
        Network::Off(why) => (false, why.to_string()),
    };
    let url = match &env.url {
        Ok(url) => redacted(url.as_str()),
        Err(value) => shown(&redacted(value)),
    };
    // A folder and the first of its variables that placed it.
    let folder = |dir: Result<std::path::PathBuf, paths::NoHome>, variables: &[&str]| match dir {
        Ok(dir) => valued(shown_path(&dir), origin(variables)),
        Err(e) => valued("none".into(), e.to_string()),
    };
    let workspace = match &settings.workspace.from {
        WorkspaceFrom::Flag => "-D/--data-dir".into(),
        WorkspaceFrom::Option(origin) => origin.to_string(),
        WorkspaceFrom::Nearest => "the nearest .crush folder".into(),
        WorkspaceFrom::Default => "default: ./.crush".into(),
    };
    Inputs {
        refresh: RefreshJson { allowed, detail },
        catwalk_url: valued(url, origin(&["CATWALK_URL"])),
        refresh_timeout_seconds: env.timeout.as_secs_f64(),
        refresh_timeout_origin: origin(&[startup::TIMEOUT_ENV]),
        proxy: match &env.url {
            Ok(url) => route_of(url),
            Err(_) => "none (no request)".into(),
        },
        dotenv: environment::installed().map(|d| DotEnvJson {
            path: shown_path(&d.path),
            sets: d.entries.iter().map(|e| shown(&e.name)).collect(),
            shadowed: d.shadowed.iter().map(|n| shown(n)).collect(),
            refused: d.refused.iter().map(|(n, _, _)| shown(n)).collect(),
            error: d.error.as_deref().map(shown),
        }),
        config_folder: folder(
            paths::config_dir(&process_env),
            &["CRUSH_GLOBAL_CONFIG", "XDG_CONFIG_HOME"],
        ),
        data_folder: folder(paths::data_dir(&process_env), &["XDG_DATA_HOME"]),
        config_files: settings.files.iter().map(|p| shown_path(p)).collect(),
        skipped_files: (settings.skipped.iter())
            .map(|s| Skipped {
                path: shown_path(&s.path),
                why: s.why.clone(),
            })
            .collect(),
        project_root: root_text(&settings.root),
        workspace: valued(
            shown_path(&settings.workspace.dir.join("crush.json")),
            workspace,
        ),
    }
}

/// How a request for `url` goes: through which proxy and why, or directly
/// and why (the HTTP client's own decision, [`proxy::route`]).
pub(super) fn route_of(url: &reqwest::Url) -> String {
    match proxy::route(url, &ProxyEnv::current()) {
        Route::Proxy(proxy, variable) => {
            let shown = crate::fetch::diagnosis::ProxyOrigin::new(&proxy, variable);
            let origin = env_origin(variable).unwrap_or_else(|| variable.into());
            format!("{} ({origin})", shown.url)
        }
        Route::Direct(Direct::NoneSet) => "none: no proxy variable is set for it".into(),
        Route::Direct(Direct::Loopback) => {
            "none: a loopback host never goes through a proxy".into()
        }
        Route::Direct(Direct::Excepted {
            entry, variable, ..
        }) => format!(
            "none: NO_PROXY entry {} sends it around the proxy of {variable}",
            shown(&entry)
        ),
        Route::RefusedInCgi => "refused: HTTP_PROXY in a CGI script (REQUEST_METHOD)".into(),
    }
}

fn root_text(root: &Root) -> String {
    let alone = "the working directory alone";
    match root {
        Root::WorkTree(dir) => shown_path(dir),
        Root::None(NoRoot::NoRepository) => format!("none (not in a git work tree): {alone}"),
        Root::None(NoRoot::BrokenGitFile(path)) => format!(
            "none ({} does not lead to a repository, and git fails): {alone}",
            shown_path(path)
        ),
        Root::None(NoRoot::NoWorkTree(dir)) => format!(
            "none ({} is a repository without a work tree): {alone}",
            shown_path(dir)
        ),
        Root::None(NoRoot::NoFolder) => {
            "none (the working directory is not a folder git can run in)".into()
        }
        Root::None(NoRoot::NoGit(why)) => format!(
            "none ({}: Crush asks git for it, and searches the working directory alone without it)",
            shown(&why.to_string())
        ),
        Root::None(NoRoot::GitSaid(said)) => format!(
            "none (git rev-parse --show-toplevel says: {}): {alone}, as Crush",
            shown(said)
        ),
    }
}

impl Inputs {
    /// The rows `--status` and `--debug` print, each a key and a value.
    pub(super) fn rows(&self) -> Vec<(&'static str, String)> {
        let valued = |v: &Valued| format!("{} ({})", v.value, v.origin);
        let (refresh, timeout) = (&self.refresh, self.refresh_timeout_seconds);
        let timeout = humantime::format_duration(Duration::from_secs_f64(timeout));
        let mut rows = vec![
            (
                "refresh at start-up",
                match refresh.allowed {
                    true => format!("allowed, from {}", refresh.detail),
                    false => format!("none: {}", refresh.detail),
                },
            ),
            ("catalog URL", valued(&self.catwalk_url)),
            (
                "refresh timeout",
                format!("{timeout} ({})", self.refresh_timeout_origin),
            ),
            ("proxy", self.proxy.clone()),
        ];
        rows.push((
            ".env",
            match &self.dotenv {
                None => "none in the folder this started in".into(),
                Some(d) => match &d.error {
                    Some(error) => format!("{}: not loaded: {error}", d.path),
                    None if d.sets.is_empty() => format!("{} (sets nothing)", d.path),
                    None => format!("{} (sets {})", d.path, d.sets.join(", ")),
                },
            },
        ));
        if let Some(d) = self.dotenv.as_ref().filter(|d| !d.shadowed.is_empty()) {
            let kept = d.shadowed.join(", ");
            rows.push(("", format!("already set here, kept: {kept}")));
        }
        rows.push(("config folder", valued(&self.config_folder)));
        rows.push(("data folder", valued(&self.data_folder)));
        for (i, file) in self.config_files.iter().enumerate() {
            rows.push((if i == 0 { "config files" } else { "" }, file.clone()));
        }
        if self.config_files.is_empty() {
            rows.push(("config files", "none".into()));
        }
        for skipped in &self.skipped_files {
            rows.push(("skipped file", format!("{}: {}", skipped.path, skipped.why)));
        }
        rows.push(("project root", self.project_root.clone()));
        rows.push(("workspace file", valued(&self.workspace)));
        rows
    }
}
