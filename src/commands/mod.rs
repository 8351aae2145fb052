//! What each command does and prints, one file per command. Data goes to
//! stdout, warnings and errors to stderr, so that `crush providers --json |
//! jq` always works. The exit code is decided in one place, [`main`]: 0 for
//! success, 1 for a failure, 2 for bad usage.

mod change_text;
mod cli;
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

use clap::{Args, FromArgMatches};

use crate::commands::cli::{Cli, Command};
pub(crate) use crate::error::program;
use crate::error::{Failure, name_program};
use crate::fetch::watch::Signal;
use crate::startup::refresh::{HELPER_COMMAND, HelperArgs};
use context::{Context, listed};
use output::{Said, ago, count, output_result, print, say, write_catalog, write_json};
use table::write_table;

/// Runs the command line and returns the process exit code: 0 success,
/// 1 failure, 2 usage error.
pub fn main() -> u8 {
    let name = cli::invoked_name();
    name_program(name.clone());
    // Under a front, the user's own `CATWALK_URL`; then, as Crush loads
    // `.env` before anything else, so does this, the front included.
    front::restore_catwalk_url();
    context::install_dotenv();
    // In front of a real Crush, its commands go to it before this program's
    // command line is parsed.
    if let Some(code) = front::main(&name) {
        return code;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The helper a start runs is no command of a person's: not in the
    // help, nor offered by completion.
    if args.get(1).is_some_and(|word| word == HELPER_COMMAND) {
        let helper = HelperArgs::augment_args(clap::Command::new(HELPER_COMMAND));
        return match parse::<HelperArgs>(helper, &args[1..]) {
            Ok((helper, _)) => {
                helper.run();
                0
            }
            Err(e) => {
                let _ = e.print();
                2
            }
        };
    }
    // Whether the command was asked for JSON on standard output, then its
    // failure too.
    let json = args.iter().any(|a| a == "--json");
    let (cli, command) = match parse::<Cli>(cli::command(&name), &args) {
        Ok(parsed) => parsed,
        // `--help` or `--version`, printed on standard output.
        Err(e) if !e.use_stderr() => return exit_code(output_result(e.print()), false, None),
        Err(e) => {
            let _ = e.print();
            // The command line could not be read: whether it asked for
            // JSON, only its words say.
            if json {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or_default();
                let message = first.trim_start_matches("error: ");
                let _ = print(|out| write_json(out, &usage_json(message, None)));
            }
            return 2;
        }
    };
    exit_code(run(cli), json, command.as_deref())
}

/// Whether `args` are a slip of one of this program's commands, told as
/// clap tells it: a word of their families (`update-provider`,
/// `provider-model`) for which clap suggests one. Crush's own (`projects`,
/// `server`) may look alike, and are no slip.
fn slip(name: &str, args: &[std::ffi::OsString]) -> bool {
    use clap::error::ContextKind;
    let Err(e) = cli::command(name).try_get_matches_from(args) else {
        return false;
    };
    let typed = e.get(ContextKind::InvalidSubcommand).map(|t| t.to_string());
    let ours = typed.is_some_and(|t| t.starts_with("provider") || t.starts_with("update-"));
    let suggested = ours && e.get(ContextKind::SuggestedSubcommand).is_some();
    if suggested {
        let _ = e.print();
    }
    suggested
}

/// `args` read by `command` into a `T`, and the name of its subcommand.
fn parse<T: FromArgMatches>(
    command: clap::Command,
    args: &[std::ffi::OsString],
) -> Result<(T, Option<String>), clap::Error> {
    let matches = command.try_get_matches_from(args)?;
    let subcommand = matches.subcommand_name().map(str::to_owned);
    Ok((T::from_arg_matches(&matches)?, subcommand))
}

/// The exit code of a command's `result`, its failure told on standard
/// error (and, for a command asked for `json`, on standard output); a
/// usage error points at the help of its `command`.
fn exit_code(result: Result<(), Exit>, json: bool, command: Option<&str>) -> u8 {
    let json_out = |value: serde_json::Value| {
        if json {
            let _ = print(|out| write_json(out, &value));
        }
    };
    match result {
        Ok(()) => 0,
        Err(Exit::Usage(message)) => {
            json_out(usage_json(&message, command));
            say(Said::Error, format_args!("{message}"));
            say(Said::Hint, format_args!("{}", usage_hint(command)));
            2
        }
        Err(Exit::Failed(failure, verbose)) => {
            let chain = failure.cause.chain();
            json_out(serde_json::json!({
                "error": {
                    "source": failure.source.to_string(),
                    "cause": chain.join(": "),
                    "hint": failure.hint(),
                    "message": failure.to_string(),
                }
            }));
            say(
                Said::Error,
                format_args!("{}: {}", failure.source, chain[0]),
            );
            for cause in &chain[1..] {
                say(Said::CausedBy, format_args!("{cause}"));
            }
            if verbose && let Some(detail) = failure.detail() {
                say(
                    Said::Plain,
                    format_args!("  detail (for a bug report): {detail}"),
                );
            }
            say(Said::Hint, format_args!("{}", failure.hint()));
            1
        }
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

/// What a usage error's hint says: the help of its command, when known.
fn usage_hint(command: Option<&str>) -> String {
    let words = [program(), command.unwrap_or_default()];
    format!("run `{} --help` for usage", words.join(" ").trim_end())
}

/// Bad usage as `--json` prints it on standard output, in the form of a
/// failure's.
fn usage_json(message: &str, command: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "error": {
            "source": "the command line",
            "cause": message,
            "hint": usage_hint(command),
            "message": message,
            "usage": true,
        }
    })
}

/// How a command ended when it did not succeed.
#[derive(Debug)]
pub(crate) enum Exit {
    /// Bad usage: exit code 2.
    Usage(String),
    /// A failure: exit code 1; told with the libraries' own account of it
    /// too when verbose (`--verbose`).
    Failed(Box<Failure>, bool),
    /// Ended by Ctrl-C (exit code 130) or SIGTERM (143) before anything
    /// was written.
    Interrupted(Signal),
    /// Done, with an exit code that answers a question (`--check`).
    Code(u8),
}

impl From<Failure> for Exit {
    fn from(f: Failure) -> Self {
        Exit::Failed(Box::new(f), false)
    }
}

fn run(cli: Cli) -> Result<(), Exit> {
    let context = || Context::new(&cli);
    match &cli.command {
        Command::UpdateProviders(args) => update_providers::run(&context()?, args),
        Command::Providers(args) => providers::run(&context()?, args),
        Command::Models(args) => models::run(&context()?, args),
        Command::Dirs => dirs::run(),
        Command::Completion { shell } => completion::run(*shell),
    }
}
