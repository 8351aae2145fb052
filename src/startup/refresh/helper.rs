//! The detached helper process that refreshes for a short-lived command,
//! and its arguments, defined once ([`HelperArgs`]): written into its
//! command line and environment by the same type that reads them back.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::Url;

use super::{IfBusy, Job, run};
use crate::catalog::Target;
use crate::fetch::http::Bearer;
use crate::fetch::watch::Watch;
use crate::store::cache::CacheFiles;
use crate::trust::signature::TrustedKeys;

/// The hidden subcommand that runs a refresh in a helper process.
pub(crate) const HELPER_COMMAND: &str = "refresh-in-background";
/// The variable the helper takes the Hyper key from: the one Crush reads,
/// set in the helper's environment (never on its command line, which
/// every user of the machine can read).
const HYPER_KEY_ENV: &str = "HYPER_API_KEY";
/// The variables the helper takes its URLs from: a URL may carry a
/// password (`https://user:password@mirror/`), and a process's
/// environment, unlike its command line, only its own user can read.
const URL_ENV: &str = "CRUSH_PROVIDER_HELPER_URL";
const HYPER_URL_ENV: &str = "CRUSH_PROVIDER_HELPER_HYPER_URL";

/// Arguments of the background refresh helper, as the start-up passes
/// them: [`spawn_helper`] writes them, clap reads them back.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub(crate) struct HelperArgs {
    /// The data folder holding the cache
    #[arg(long)]
    pub cache_dir: PathBuf,
    /// The catalog URL, when the catalog is to be refreshed (the start-up
    /// passes it in the environment)
    #[arg(long, env = URL_ENV, hide_env_values = true)]
    pub url: Option<Url>,
    /// Hyper's provider URL, when it is to be refreshed too (its key in
    /// HYPER_API_KEY; the start-up passes it in the environment)
    #[arg(long, env = HYPER_URL_ENV, hide_env_values = true)]
    pub hyper_url: Option<Url>,
    /// Bound on the whole refresh, in seconds
    #[arg(long, value_parser = crate::fetch::http::parse_seconds)]
    pub timeout: Duration,
    /// The refresh interval, in seconds
    #[arg(long, value_parser = |s: &str| crate::startup::parse_interval(s).ok_or("not a duration"))]
    pub interval: Duration,
    /// A pinned public key (repeated for each)
    #[arg(long = "public-key", value_name = "KEY")]
    pub public_keys: Vec<String>,
}

impl HelperArgs {
    /// Runs the refreshes these arguments name, one after the other under
    /// one lock, Hyper's with the key of [`HYPER_KEY_ENV`]; nobody waits
    /// for the outcomes: they are in the state files.
    pub(crate) fn run(self) {
        // The start-up checked these keys before passing them on.
        let Ok(keys) = TrustedKeys::parse(&self.public_keys) else {
            return;
        };
        let files = CacheFiles::in_dir(&self.cache_dir);
        let key = std::env::var(HYPER_KEY_ENV).ok().filter(|k| !k.is_empty());
        let documents = [
            (Target::Catalog, self.url, None),
            (Target::Hyper, self.hyper_url, key.map(Bearer)),
        ];
        let jobs: Vec<Job> = (documents.into_iter())
            .filter_map(|(target, url, bearer)| {
                Some(Job {
                    files: files.with_target(target),
                    url: url?,
                    bearer,
                    known: None,
                    timeout: self.timeout,
                    interval: self.interval,
                    keys: keys.clone(),
                    watch: Watch::default(),
                })
            })
            .collect();
        run(&jobs, IfBusy::Skip);
    }
}

/// Starts the refreshes of `jobs` (documents of one folder, with the same
/// bounds and keys: one start's) in a detached helper process, this very
/// program run with [`HELPER_COMMAND`] and [`HelperArgs`], for a
/// short-lived command: its standard streams are on the null device (a
/// reader of the command's output sees the end of it when the command
/// exits); it is in a process group of its own, so that Ctrl-C in the
/// terminal, which signals the foreground group, does not reach it (on
/// Windows: a new process group, and no console window); and it always
/// exits by itself within the requests' bounds.
pub(crate) fn spawn_helper(exe: &Path, jobs: &[Job]) -> io::Result<()> {
    let Some(mut command) = command(exe, jobs) else {
        return Ok(());
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        // A safe call that the standard library still starts the fast way
        // (posix_spawn with its process-group attribute).
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
    // Not waited for: it outlives this process, and is nobody's child
    // once this process has exited.
    command.spawn().map(drop)
}

/// `exe` run with the arguments [`HelperArgs`] reads back for `jobs`: on
/// its command line what anyone may read; in its environment the URLs and
/// Hyper's key, never on its command line, which every user of the
/// machine can read. `None` without a job.
fn command(exe: &Path, jobs: &[Job]) -> Option<Command> {
    let first = jobs.first()?;
    let job = |target| jobs.iter().find(|job| job.files.target == target);
    let url = |target| job(target).map(|job| job.url.as_str());
    // Only Hyper's request carries a key.
    let hyper_key = job(Target::Hyper).and_then(|job| job.bearer.as_ref());
    let keys = first.keys.iter().flat_map(|keys| keys.entries());
    let mut command = Command::new(exe);
    command
        .arg(HELPER_COMMAND)
        .arg("--cache-dir")
        .arg(&first.files.dir)
        .arg("--timeout")
        .arg(first.timeout.as_secs_f64().to_string())
        .arg("--interval")
        .arg(first.interval.as_secs_f64().to_string())
        .args(keys.flat_map(|key| ["--public-key", key.as_str()]));
    let envs = [
        (URL_ENV, url(Target::Catalog)),
        (HYPER_URL_ENV, url(Target::Hyper)),
        (HYPER_KEY_ENV, hyper_key.map(|Bearer(key)| key.as_str())),
    ];
    for (name, value) in envs {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: HelperArgs,
    }

    /// A start's job for `target`'s document from `url`, with `bearer`
    /// and the pinned `key`.
    fn job(target: Target, url: &str, bearer: Option<&str>, key: &str) -> Job {
        Job {
            files: CacheFiles::in_dir("/data/crush").with_target(target),
            url: Url::parse(url).unwrap(),
            bearer: bearer.map(|key| Bearer(key.into())),
            known: None,
            timeout: Duration::from_secs(10),
            interval: Duration::from_millis(1500),
            keys: TrustedKeys::parse(&[key.to_owned()]).unwrap(),
            watch: Watch::default(),
        }
    }

    /// The environment `command` sets (`Some`) or removes (`None`).
    fn envs(command: &Command) -> Vec<(String, Option<String>)> {
        let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
        let envs = command.get_envs();
        envs.map(|(k, v)| (text(k), v.map(text))).collect()
    }

    /// What anyone may read of the helper (its command line) carries no
    /// URL, so no URL's password; its environment, which only its user can
    /// read, carries them and Hyper's key; and the same type reads back
    /// what it wrote (the URLs given as flags, as a person may).
    #[test]
    fn the_helpers_secrets_are_in_its_environment_only() {
        let key = minisign::KeyPair::generate_unencrypted_keypair()
            .unwrap()
            .pk
            .to_base64();
        let catalog = "https://user:CATPASS@mirror.example/v2/providers";
        let hyper = "https://u:HYPERPASS@hyper.example/api/v1/provider";
        let jobs = [
            job(Target::Catalog, catalog, None, &key),
            job(Target::Hyper, hyper, Some("SEKRIT"), &key),
        ];
        let command = command(Path::new("crush"), &jobs).unwrap();
        let line: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for secret in [
            "CATPASS",
            "HYPERPASS",
            "SEKRIT",
            "mirror.example",
            "hyper.example",
        ] {
            assert!(!line.iter().any(|a| a.contains(secret)), "{line:?}");
        }
        let env = envs(&command);
        let value = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.clone())
        };
        assert_eq!(value(URL_ENV).as_deref(), Some(catalog));
        assert_eq!(value(HYPER_URL_ENV).as_deref(), Some(hyper));
        assert_eq!(value(HYPER_KEY_ENV).as_deref(), Some("SEKRIT"));
        let mut argv = vec!["crush".to_owned()];
        argv.extend(line.into_iter().skip(1));
        for (flag, url) in [("--url", catalog), ("--hyper-url", hyper)] {
            argv.extend([flag.to_owned(), url.to_owned()]);
        }
        let args = HelperArgs {
            cache_dir: PathBuf::from("/data/crush"),
            url: Some(Url::parse(catalog).unwrap()),
            hyper_url: Some(Url::parse(hyper).unwrap()),
            timeout: Duration::from_secs(10),
            interval: Duration::from_millis(1500),
            public_keys: vec![key],
        };
        assert_eq!(Cli::try_parse_from(&argv).unwrap().args, args);
    }

    /// Without a URL or a key, the variable is removed, never inherited
    /// from the starting process: Hyper's without its job, the catalog's
    /// without its own.
    #[test]
    fn what_a_helper_is_not_given_it_does_not_inherit() {
        let key = minisign::KeyPair::generate_unencrypted_keypair()
            .unwrap()
            .pk
            .to_base64();
        let catalog = job(Target::Catalog, "https://m.example/p", None, &key);
        let hyper = job(Target::Hyper, "https://h.example/p", Some("K"), &key);
        for (jobs, names) in [
            (&[catalog][..], &[HYPER_URL_ENV, HYPER_KEY_ENV][..]),
            (&[hyper][..], &[URL_ENV][..]),
        ] {
            let command = command(Path::new("crush"), jobs).unwrap();
            let removed: Vec<String> = (envs(&command).into_iter())
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
            assert_eq!(removed, names, "{removed:?}");
        }
        assert!(command(Path::new("crush"), &[]).is_none());
    }
}
