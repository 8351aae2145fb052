//! What each command does and prints, one file per command. Data goes to
//! stdout, warnings and errors to stderr, so that `crush providers --json |
//! jq` always works. The exit code is decided in one place, [`main`]: 0 for
//! success, 1 for a failure, 2 for bad usage.

mod change_text;
pub(crate) mod cli;
mod completion;
mod context;
mod dirs;
mod front;
mod inputs;
mod models;
mod output;
mod providers;
mod report;
mod table;
mod terminal;
mod update_providers;
mod watch;

use std::sync::OnceLock;

use clap::FromArgMatches;

use crate::commands::cli::{Cli, Command};
use crate::error::Failure;
use crate::fetch::watch::Signal;
use context::{Context, listed};
pub(crate) use output::{Said, say, warn};
use output::{ago, count, output_result, print, write_catalog, write_json};
use table::Table;

static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name this program gives itself in the commands it tells a person
/// to type: how it was invoked (installed as `crush-providers`, hints say
/// `crush-providers update-providers`), as a process's arguments are, set
/// once by [`main`]. The library's own words name Crush's commands
/// (`crush`); only the command line tells them by another name.
pub(crate) fn program() -> &'static str {
    PROGRAM.get().map_or("crush", String::as_str)
}

/// Runs the command line and returns the process exit code: 0 success,
/// 1 failure, 2 usage error.
pub fn main() -> u8 {
    let name = cli::invoked_name();
    let _ = PROGRAM.set(name.clone());
    // Under a front, the user's own `CATWALK_URL`; then, as Crush loads
    // `.env` before anything else, so does this, the front included.
    front::restore_catwalk_url();
    context::install_dotenv();
    // In front of a real Crush, its commands go to it before this program's
    // command line is parsed.
    if let Some(code) = front::main(&name) {
        return code;
    }
    let parsed = cli::command(&name)
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let (result, json) = match parsed {
        Ok(cli) => {
            let json = cli.command.wants_json();
            (run(cli), json)
        }
        Err(e) => {
            let printed = e.print();
            if e.use_stderr() {
                // The command line could not be read: whether it asked
                // for JSON, only its words say.
                if std::env::args_os().any(|a| a == "--json") {
                    let text = e.to_string();
                    let first = text.lines().next().unwrap_or_default();
                    let message = first.trim_start_matches("error: ").to_owned();
                    let _ = print(|out| write_json(out, &usage_json(&message, &name)));
                }
                return 2;
            }
            // `--help` or `--version`, printed on standard output.
            (output_result(printed), false)
        }
    };
    let failure = |failure: &Failure, verbose: bool| {
        // A script reading JSON gets the failure as JSON too.
        if json {
            let _ = print(|out| write_json(out, &failure_json(failure, &name)));
        }
        say(Said::Error, format_args!("{}", failure.line_as(&name)));
        if verbose && let Some(detail) = failure.detail() {
            say(
                Said::Plain,
                format_args!("  detail (for a bug report): {detail}"),
            );
        }
        1
    };
    match result {
        Ok(()) => 0,
        Err(Exit::Usage(message)) => {
            if json {
                let _ = print(|out| write_json(out, &usage_json(&message, &name)));
            }
            say(
                Said::Error,
                format_args!("{message}\nRun `{name} --help` for usage."),
            );
            2
        }
        Err(Exit::Failed(f)) => failure(&f, false),
        Err(Exit::FailedVerbose(f)) => failure(&f, true),
        Err(Exit::Interrupted(signal)) => {
            // The shell's codes: 128 and the signal's number.
            let (what, code) = match signal {
                Signal::Interrupt => ("interrupted", 130),
                Signal::Terminate => ("terminated", 143),
            };
            say(Said::Plain, format_args!("{what}; nothing was written"));
            code
        }
        Err(Exit::Code(code)) => code,
    }
}

/// Bad usage as `--json` prints it on standard output, in the form of a
/// failure's.
fn usage_json(message: &str, name: &str) -> serde_json::Value {
    serde_json::json!({
        "error": {
            "source": "the command line",
            "cause": message,
            "hint": format!("run `{name} --help` for usage"),
            "message": message,
            "usage": true,
        }
    })
}

/// A failure as `--json` prints it on standard output, its hint naming
/// commands as `name`.
fn failure_json(failure: &Failure, name: &str) -> serde_json::Value {
    serde_json::json!({
        "error": {
            "source": failure.source.to_string(),
            "cause": crate::store::file::without_os_error(&failure.cause.to_string()),
            "hint": failure.hint_as(name),
            "message": failure.line_as(name),
        }
    })
}

/// How a command ended when it did not succeed.
#[derive(Debug)]
pub(crate) enum Exit {
    /// Bad usage: exit code 2.
    Usage(String),
    /// A failure: exit code 1.
    Failed(Box<Failure>),
    /// A failure, told with the libraries' own account of it (`--verbose`).
    FailedVerbose(Box<Failure>),
    /// Ended by Ctrl-C (exit code 130) or SIGTERM (143) before anything
    /// was written.
    Interrupted(Signal),
    /// Done, with an exit code that answers a question (`--check`).
    Code(u8),
}

impl From<Failure> for Exit {
    fn from(f: Failure) -> Self {
        Exit::Failed(Box::new(f))
    }
}

fn run(cli: Cli) -> Result<(), Exit> {
    let flags = context::Flags {
        cwd: cli.cwd,
        data_dir: cli.data_dir,
        debug: cli.debug.unwrap_or(false),
        host: cli.host,
        channels: cli.channels,
    };
    let context = || Context::new(flags);
    match cli.command {
        Command::UpdateProviders(args) => update_providers::run(&context()?, args),
        Command::Providers(args) => providers::run(&context()?, &args),
        Command::Models(args) => models::run(&context()?, &args),
        Command::Dirs => dirs::run(),
        Command::Completion { shell } => completion::run(shell),
        Command::RefreshInBackground(args) => {
            args.run();
            Ok(())
        }
    }
}
