//! What each command does and prints, one file per command. Data goes to
//! stdout, warnings and errors to stderr, so that `crush providers --json |
//! jq` always works. The exit code is decided in one place, [`main`]: 0 for
//! success, 1 for a failure, 2 for bad usage.

pub mod cli;
mod context;
mod front;
mod hyper;
mod inputs;
mod models;
mod providers;
mod report;
mod terminal;
mod update_providers;

use std::io::{self, Write};

use clap::FromArgMatches;

use crate::catalog::{self, Catalog};
use crate::commands::cli::{Cli, Command};
use crate::config::Settings;
use crate::error::{Cause, Failure};
use crate::startup::refresh;
use crate::startup::{Provenance, StartupCatalog};
use crate::store::cache::CacheFiles;
use crate::store::paths::{self, process_env};
use crate::trust::signature::TrustedKeys;
use context::Context;

/// Runs the command line and returns the process exit code: 0 success,
/// 1 failure, 2 usage error.
pub fn main() -> u8 {
    let name = cli::invoked_name();
    crate::error::set_program(&name);
    // Crush loads `.env` before anything else; so does this, the front
    // included.
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
                return 2;
            }
            // `--help` or `--version`, printed on standard output.
            (output_result(printed), false)
        }
    };
    let failure = |failure: &Failure, verbose: bool| {
        // A script reading JSON gets the failure as JSON too.
        if json {
            let _ = print(|out| write_json(out, &failure_json(failure)));
        }
        say(format_args!("error: {failure}"));
        if verbose && let Some(detail) = failure.detail() {
            say(format_args!("  detail (for a bug report): {detail}"));
        }
        1
    };
    match result {
        Ok(()) => 0,
        Err(Exit::Usage(message)) => {
            say(format_args!(
                "error: {message}\nRun `{name} --help` for usage."
            ));
            2
        }
        Err(Exit::Failed(f)) => failure(&f, false),
        Err(Exit::FailedVerbose(f)) => failure(&f, true),
        Err(Exit::Interrupted(code)) => {
            let what = if code == 143 {
                "terminated"
            } else {
                "interrupted"
            };
            say(format_args!("{what}; nothing was written"));
            code
        }
        Err(Exit::Code(code)) => code,
    }
}

/// A failure as `--json` prints it on standard output.
fn failure_json(failure: &Failure) -> serde_json::Value {
    serde_json::json!({
        "error": {
            "source": failure.source,
            "cause": crate::fetch::diagnosis::without_os_error(&failure.cause.to_string()),
            "hint": failure.hint(),
            "message": failure.to_string(),
        }
    })
}

/// How a command ended when it did not succeed.
#[derive(Debug)]
pub enum Exit {
    /// Bad usage: exit code 2.
    Usage(String),
    /// A failure: exit code 1.
    Failed(Box<Failure>),
    /// A failure, told with the libraries' own account of it (`--verbose`).
    FailedVerbose(Box<Failure>),
    /// Ended by Ctrl-C (130) or SIGTERM (143) before anything was written.
    Interrupted(u8),
    /// Done, with an exit code that answers a question (`--check`).
    Code(u8),
}

impl From<Failure> for Exit {
    fn from(f: Failure) -> Self {
        Exit::Failed(Box::new(f))
    }
}

fn run(cli: Cli) -> Result<(), Exit> {
    let context = || Context::new(cli.cwd, cli.data_dir, cli.debug, cli.host);
    match cli.command {
        Command::UpdateProviders(args) => update_providers::run(&context()?, args),
        Command::Providers(args) => providers::run(&context()?, &args),
        Command::Models(args) => models::run(&context()?, &args),
        Command::Dirs => dirs(),
        Command::Completion { shell } => {
            let name = crate::error::program();
            let Some(shell) = shell else {
                return Err(Exit::Usage(format!(
                    "completion prints the script of a shell: bash, elvish, fish, powershell or zsh, e.g. `{name} completion bash > ~/.local/share/bash-completion/completions/{name}`"
                )));
            };
            let script = completion(shell, name);
            print(|out| out.write_all(&script))
        }
        Command::RefreshInBackground(args) => {
            // The start-up checked these keys before passing them on.
            let Ok(keys) = TrustedKeys::parse(&args.public_keys) else {
                return Ok(());
            };
            let request = |url, bearer| refresh::Request {
                url,
                timeout: args.timeout,
                interval: args.interval,
                keys: keys.clone(),
                foreground: false,
                bearer,
            };
            let catalog = CacheFiles::in_dir(&args.cache_dir);
            let hyper = catalog.with_target(crate::catalog::Target::Hyper);
            let requests: Vec<(&CacheFiles, refresh::Request)> = [
                args.url.map(|url| (&catalog, request(url, None))),
                args.hyper_url
                    .map(|url| (&hyper, request(url, refresh::helper_hyper_key()))),
            ]
            .into_iter()
            .flatten()
            .collect();
            let jobs: Vec<refresh::Job<'_>> = requests
                .iter()
                .map(|(files, request)| refresh::Job {
                    files,
                    request,
                    known: None,
                })
                .collect();
            // Nobody waits for the outcomes: they are in the state files.
            refresh::run_all(&jobs, refresh::IfBusy::Skip);
            Ok(())
        }
    }
}

/// The completion script of `shell` for this program installed as `name`.
fn completion(shell: clap_complete::Shell, name: &str) -> Vec<u8> {
    let mut command = cli::command(name);
    // Generated whole first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    if shell != clap_complete::Shell::Bash {
        clap_complete::generate(shell, &mut command, name, &mut script);
        return script;
    }
    // SOURCE offers `embedded` (bash falls back to file names for the
    // rest); only here: elsewhere the word would replace file names.
    command = command.mut_subcommand("update-providers", |c| {
        c.mut_arg("source", |a| {
            a.value_parser(clap::builder::PossibleValuesParser::new(["embedded"]))
        })
    });
    // clap_complete's bash script names its states two ways when the
    // program's name holds a `-` (clap issue 6421): it is generated for a
    // name of word characters, then registered for the real one.
    let word: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    clap_complete::generate(shell, &mut command, &word, &mut script);
    if word == name {
        return script;
    }
    let text = String::from_utf8_lossy(&script);
    let registered = format!(" {word}\n");
    text.lines()
        .map(|line| {
            let line = format!("{line}\n");
            if line.trim_start().starts_with("complete -F ") && line.ends_with(&registered) {
                format!("{}{name}\n", &line[..line.len() - registered.len() + 1])
            } else {
                line
            }
        })
        .collect::<String>()
        .into_bytes()
}

/// Writes a message to standard error: one line when it goes to a pipe or
/// a file, wrapped to a terminal's width with the text after `error: ` or
/// `warning: ` kept in its column; the number of lines it took. Unlike
/// `eprintln!`, which panics, a failure there is ignored: there is nowhere
/// left to report it.
pub fn say(message: std::fmt::Arguments<'_>) -> usize {
    // The system's own numbers say nothing to a person.
    let text = crate::fetch::diagnosis::without_os_error(&message.to_string());
    // Whatever a catalog, a server or a file put into the message.
    let text = catalog::escape::safe_lines(&text);
    let indent = ["error: ", "warning: "]
        .iter()
        .find(|prefix| text.starts_with(*prefix))
        .map_or(2, |prefix| prefix.len());
    let text = terminal::wrap(&text, terminal::stderr_width(), &" ".repeat(indent));
    let _ = writeln!(io::stderr().lock(), "{text}");
    text.lines().count()
}

/// Runs `write` on standard output, buffered (a table or a JSON document
/// goes out in a few writes rather than one per line), then flushes it. A
/// failed write (a full disk) is the command's failure.
fn print(
    write: impl FnOnce(&mut io::BufWriter<io::StdoutLock<'static>>) -> io::Result<()>,
) -> Result<(), Exit> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    output_result(write(&mut out).and_then(|()| out.flush()))
}

/// The command's result, given how writing its output went. A reader that
/// went away is no failure: `crush models | head -1` is a success, as with
/// any filter.
fn output_result(written: io::Result<()>) -> Result<(), Exit> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Exit::from(Failure::new(
            "standard output",
            Cause::Stdout(e),
        ))),
        _ => Ok(()),
    }
}

/// Writes `value` as pretty JSON and a newline, the characters a terminal
/// must not see raw as `\u` escapes ([`catalog::escape`]).
fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    catalog::escape::write_json(&mut *out, value)?;
    writeln!(out)
}

/// Writes the bytes of a catalog to standard output: exactly as they are
/// when it goes to a pipe or a file (a program reads them, and a copy must
/// hash as the cache does); on a terminal, with the characters a terminal
/// must not see raw spelled as `\u` escapes inside their strings, which is
/// the same JSON. The cache itself is never rewritten.
fn write_catalog(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    use std::io::IsTerminal;
    if io::stdout().is_terminal() {
        out.write_all(&catalog::escape::json_bytes(bytes))
    } else {
        out.write_all(bytes)
    }
}

/// `1 model`, `2 models`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `3 hours ago`.
fn ago(seconds: u64) -> String {
    let (n, unit) = match seconds {
        0..60 => return "just now".into(),
        60..3600 => (seconds / 60, "minute"),
        3600..86400 => (seconds / 3600, "hour"),
        _ => (seconds / 86400, "day"),
    };
    format!("{} ago", count(n as usize, unit))
}

/// A table for a terminal: a head, rows, and how to narrow it.
struct Table<'a, const N: usize> {
    head: [&'a str; N],
    rows: &'a [[String; N]],
    /// Columns to drop, first to last, while the table is wider than the
    /// terminal. Then the first column (an id) is narrowed to what is
    /// left: an id wider than it stands on a line of its own, whole, and
    /// the rest of its row goes on the next line.
    droppable: &'a [usize],
}

impl<const N: usize> Table<'_, N> {
    /// Writes the table, each column as wide as its widest cell, fitted to
    /// `width` (a terminal's; `None`: whole rows).
    fn write(&self, out: &mut impl Write, width: Option<usize>) -> io::Result<()> {
        use unicode_width::UnicodeWidthStr;
        // A catalog's names and ids, safe to print, measured as shown.
        let rows: Vec<[std::borrow::Cow<'_, str>; N]> = self
            .rows
            .iter()
            .map(|row| std::array::from_fn(|i| catalog::escape::safe(&row[i])))
            .collect();
        let mut widths = self.head.map(UnicodeWidthStr::width);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.width());
            }
        }
        let mut shown: Vec<usize> = (0..N).collect();
        let total = |shown: &[usize], widths: &[usize; N]| {
            shown
                .iter()
                .map(|&c| widths[c] + 2)
                .sum::<usize>()
                .saturating_sub(2)
        };
        if let Some(width) = width {
            for column in self.droppable {
                if total(&shown, &widths) <= width {
                    break;
                }
                shown.retain(|c| c != column);
            }
            let over = total(&shown, &widths).saturating_sub(width);
            widths[0] = widths[0].saturating_sub(over).max(self.head[0].width());
        }
        let line = |cells: &[&str]| {
            let mut text = String::new();
            for (i, &column) in shown.iter().enumerate() {
                let cell = cells[column];
                if i + 1 == shown.len() {
                    text.push_str(cell);
                } else {
                    let pad = widths[column].saturating_sub(cell.width());
                    text.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
                }
            }
            text.trim_end().to_string()
        };
        writeln!(out, "{}", line(&self.head))?;
        for row in &rows {
            let mut cells: Vec<&str> = row.iter().map(|cell| cell.as_ref()).collect();
            if cells[0].width() > widths[0] {
                for piece in terminal::pieces(cells[0], width.unwrap_or(usize::MAX)) {
                    writeln!(out, "{piece}")?;
                }
                cells[0] = "";
            }
            writeln!(out, "{}", line(&cells))?;
        }
        Ok(())
    }
}

/// The catalog a listing command shows: the start-up catalog, validated;
/// or, with `default-providers` off, `None`, the command having said that
/// there are no `what` (`[]` in JSON).
fn listed<'a>(
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

/// `crush dirs`.
fn dirs() -> Result<(), Exit> {
    let config = paths::config_dir(&process_env).map_err(|e| Failure::new("config folder", e))?;
    let data = paths::data_dir(&process_env).map_err(|e| Failure::new("data folder", e))?;
    let files = CacheFiles::in_dir(&data);
    print(|out| {
        writeln!(
            out,
            "config: {}\ndata:   {}\ncache:  {}",
            config.display(),
            data.display(),
            files.catalog.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(7200), "2 hours ago");
        assert_eq!(ago(86400 * 3 + 5), "3 days ago");
    }

    #[test]
    fn tables_align_columns() {
        let mut out = Vec::new();
        let rows = [["long".into(), "x".into()], ["s".into(), "".into()]];
        let table = Table {
            head: ["A", "BB"],
            rows: &rows,
            droppable: &[],
        };
        table.write(&mut out, None).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "A     BB\nlong  x\ns\n");
    }

    /// Narrowed to a terminal: droppable columns go first, then an id too
    /// wide for what is left stands on a line of its own, whole; no line is
    /// wider than the terminal, and no cell is cut.
    #[test]
    fn tables_fit_the_terminal_without_cutting_an_id() {
        let rows = [
            [
                "anthropic/claude-sonnet-4-5-20250929".to_string(),
                "Claude Sonnet 4.5".into(),
                "200K".into(),
                "$3/$15".into(),
            ],
            [
                "x/y".to_string(),
                "Y".into(),
                "8K".into(),
                "$0.1/$0.2".into(),
            ],
        ];
        let table = Table {
            head: ["MODEL", "NAME", "CONTEXT", "$/1M IN/OUT"],
            rows: &rows,
            droppable: &[1],
        };
        let text = |width| {
            let mut out = Vec::new();
            table.write(&mut out, width).unwrap();
            String::from_utf8(out).unwrap()
        };
        let wide = text(None);
        assert!(wide.contains("Claude Sonnet 4.5"), "{wide}");
        let narrow = text(Some(60));
        assert!(
            !narrow.contains("NAME")
                && narrow.contains("anthropic/claude-sonnet-4-5-20250929  200K"),
            "{narrow}"
        );
        let narrower = text(Some(40));
        for line in narrower.lines() {
            assert!(unicode_width::UnicodeWidthStr::width(line) <= 40, "{line}");
        }
        let lines: Vec<&str> = narrower.lines().collect();
        assert_eq!(
            lines[1], "anthropic/claude-sonnet-4-5-20250929",
            "{narrower}"
        );
        assert!(
            lines[2].starts_with("      ") && lines[2].trim_start().starts_with("200K"),
            "{narrower}"
        );
        assert!(!narrower.contains('…'), "{narrower}");
        // An id wider than the terminal is wrapped where the line ends.
        let tiny = text(Some(20));
        assert!(
            tiny.contains("anthropic/claude-son\nnet-4-5-20250929\n"),
            "{tiny}"
        );
    }
}
