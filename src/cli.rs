//! The command line: argument definitions and what each command prints.
//! Data goes to stdout, warnings and errors to stderr, so that
//! `crush providers --json | jq` always works.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::cache::CacheFiles;
use crate::commands;
use crate::error::{Cause, Failure};
use crate::paths::{self, process_env};
use crate::source;
use crate::update::{self, UpdateOptions, UpdateReport};

const UPDATE_EXAMPLES: &str = "\
Examples:
  # Update providers remotely from Catwalk
  crush update-providers

  # Update providers from a custom Catwalk base URL
  crush update-providers https://example.com/

  # Update providers from a local file
  crush update-providers /path/to/local-providers.json

  # Reset providers to the embedded version
  crush update-providers embedded

  # Prepare a catalog for an air-gapped machine, pinned by its digest
  crush update-providers https://catwalk.charm.land --output providers.json
  crush update-providers providers.json --sha256 <HEX>";

/// Keeps Crush's provider catalog up to date.
#[derive(Debug, Parser)]
#[command(name = "crush", version = VERSION.as_str(), about, long_about = None)]
pub struct Cli {
    /// Working directory for the project configuration walk.
    #[arg(short = 'c', long = "cwd", global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

const PROVIDERS_EXAMPLES: &str = "\
Examples:
  # List providers, refreshing the catalog as Crush does at start-up
  crush providers

  # The effective catalog as JSON
  crush providers --json | jq '.[].id'

  # Where the cache is, how old it is, and whether auto-update is on (no network)
  crush providers --status";

const MODELS_EXAMPLES: &str = "\
Examples:
  # Every model as provider/model
  crush models

  # Models whose provider or model id or name matches every term
  crush models anthropic sonnet

  # Context windows and prices as JSON
  crush models --json gpt | jq '.[] | {id, context_window}'";

const COMPLETION_EXAMPLES: &str = "\
Examples:
  crush completion bash > ~/.local/share/bash-completion/completions/crush
  crush completion zsh > \"${fpath[1]}/_crush\"
  crush completion fish > ~/.config/fish/completions/crush.fish
  crush completion powershell >> $PROFILE";

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Update the provider catalog from Catwalk, a URL, a file or the embedded snapshot
    #[command(after_help = UPDATE_EXAMPLES)]
    UpdateProviders(UpdateArgs),
    /// List providers, loading the catalog as Crush does at start-up
    #[command(after_help = PROVIDERS_EXAMPLES)]
    Providers(ProvidersArgs),
    /// List models as provider/model, optionally filtered
    #[command(after_help = MODELS_EXAMPLES)]
    Models(ModelsArgs),
    /// Print the config folder, the data folder and the cache file
    #[command(after_help = "Example:\n  crush dirs")]
    Dirs,
    /// Print a shell completion script
    #[command(after_help = COMPLETION_EXAMPLES)]
    Completion {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// Arguments of `providers`.
#[derive(Debug, Args)]
pub struct ProvidersArgs {
    /// Print the effective catalog exactly, as a Catwalk JSON array (with --status: the status as JSON)
    #[arg(long)]
    pub json: bool,
    /// Show the cache and the auto-update setting without any network access
    #[arg(long)]
    pub status: bool,
}

/// Arguments of `models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Show only models whose provider id or name, or model id or name, contains every TERM (case-insensitive)
    #[arg(value_name = "TERM")]
    pub terms: Vec<String>,
    /// Print an array of JSON objects
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `update-providers`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Where to read the catalog: omitted for Catwalk ($CATWALK_URL or https://catwalk.charm.land),
    /// a Catwalk base URL, the URL of a catalog (.json or /v2/providers), a file, `-` for
    /// standard input, or `embedded`
    pub source: Option<String>,
    /// Read and validate, report what would change, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write the validated catalog to FILE instead of the cache
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Refuse the catalog unless its raw bytes have this SHA-256 (64 hex digits)
    #[arg(long, value_name = "HEX", value_parser = parse_sha256)]
    pub sha256: Option<String>,
    /// Give up on a download after this many seconds
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = crate::http::parse_seconds)]
    pub timeout: Duration,
    /// Print the report as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Print only errors
    #[arg(long, short)]
    pub quiet: bool,
}

static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (embedded catalog snapshot of {})",
        env!("CARGO_PKG_VERSION"),
        crate::embedded::snapshot_date()
    )
});

fn parse_sha256(s: &str) -> Result<String, String> {
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err("expected 64 hexadecimal digits (the output of `sha256sum`)".into())
    }
}

/// Runs the command line and returns the process exit code: 0 success,
/// 1 failure, 2 usage error.
pub fn main() -> u8 {
    let result = match Cli::try_parse() {
        Ok(cli) => run(cli),
        Err(e) => {
            let printed = e.print();
            if e.use_stderr() {
                return 2;
            }
            // `--help` or `--version`, printed on standard output.
            output_result(printed)
        }
    };
    match result {
        Ok(()) => 0,
        Err(Exit::Usage(message)) => {
            say(format_args!(
                "error: {message}\nRun `crush --help` for usage."
            ));
            2
        }
        Err(Exit::Failed(failure)) => {
            say(format_args!("error: {failure}"));
            1
        }
    }
}

/// Writes one line to standard error. Unlike `eprintln!`, which panics,
/// a failure there is ignored: there is nowhere left to report it.
pub fn say(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// How a command ended when it did not succeed.
#[derive(Debug)]
pub enum Exit {
    /// Bad usage: exit code 2.
    Usage(String),
    /// A failure: exit code 1.
    Failed(Failure),
}

impl From<Failure> for Exit {
    fn from(f: Failure) -> Self {
        Exit::Failed(f)
    }
}

fn run(cli: Cli) -> Result<(), Exit> {
    match cli.command {
        Command::UpdateProviders(args) => update_providers(args),
        Command::Providers(args) => commands::providers(&working_dir(cli.cwd)?, &args),
        Command::Models(args) => commands::models(&working_dir(cli.cwd)?, &args),
        Command::Dirs => commands::dirs(),
        Command::Completion { shell } => {
            // Generated whole first: clap_complete panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "crush", &mut script);
            print(|out| out.write_all(&script))
        }
    }
}

/// The folder the project walk starts from: `--cwd` or the current one.
fn working_dir(cwd: Option<PathBuf>) -> Result<PathBuf, Exit> {
    let dir = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| {
            Exit::Failed(Failure::new(
                "working directory",
                Cause::Config(e.to_string()),
            ))
        })?,
    };
    dunce_canonical(&dir).map_err(|e| Exit::Usage(format!("--cwd {}: {e}", dir.display())))
}

/// Canonical form of a folder, without Windows' `\\?\` prefix, which
/// would leak into every path the user is shown.
fn dunce_canonical(dir: &std::path::Path) -> io::Result<PathBuf> {
    let canonical = dir.canonicalize()?;
    if !canonical.is_dir() {
        return Err(io::Error::other("not a folder"));
    }
    #[cfg(windows)]
    if let Some(rest) = canonical.to_str().and_then(|s| s.strip_prefix(r"\\?\")) {
        if !rest.starts_with("UNC") {
            return Ok(PathBuf::from(rest));
        }
    }
    Ok(canonical)
}

/// The cache files under the data folder.
pub fn cache_files() -> Result<CacheFiles, Failure> {
    paths::data_dir(&process_env)
        .map(CacheFiles::in_dir)
        .map_err(|e| Failure::new("data folder", e))
}

fn update_providers(args: UpdateArgs) -> Result<(), Exit> {
    let catwalk_url = process_env("CATWALK_URL").map(|v| v.to_string_lossy().into_owned());
    let source = source::resolve(args.source.as_deref(), catwalk_url.as_deref())
        .map_err(|e| Exit::Usage(e.to_string()))?;
    let cache = cache_files()?;
    let options = UpdateOptions {
        dry_run: args.dry_run,
        output: args.output,
        sha256: args.sha256,
        timeout: args.timeout,
        progress: !args.quiet && !args.json,
    };
    let report = update::update_providers(&source, &cache, &options)?;
    print(|out| {
        if args.json {
            write_json(out, &report)
        } else if args.quiet {
            Ok(())
        } else {
            for warning in &report.warnings {
                say(format_args!("warning: {warning}"));
            }
            write_update_text(out, &report)
        }
    })
}

/// Runs `write` on standard output, buffered (a table or a JSON document
/// goes out in a few writes rather than one per line), then flushes it. A
/// failed write (a full disk) is the command's failure.
pub fn print(
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
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Exit::Failed(Failure::new(
            "standard output",
            Cause::Output(e),
        ))),
        _ => Ok(()),
    }
}

/// Writes `value` as pretty JSON and a newline.
pub fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

fn write_update_text(out: &mut impl Write, report: &UpdateReport) -> io::Result<()> {
    let counts = format!("{} providers, {} models", report.providers, report.models);
    if report.written {
        writeln!(
            out,
            "Updated providers from {}: {counts}, written to {}",
            report.source,
            report.target.display()
        )?;
    } else {
        writeln!(
            out,
            "Checked providers from {}: {counts} (dry run: {} not written)",
            report.source,
            report.target.display()
        )?;
    }
    let Some(changes) = &report.changes else {
        return Ok(());
    };
    if changes.is_empty() {
        writeln!(out, "  no changes to providers or models")?;
    }
    if !changes.providers_added.is_empty() {
        let n = count(changes.providers_added.len(), "provider");
        writeln!(out, "  + {n}: {}", changes.providers_added.join(", "))?;
    }
    if !changes.providers_removed.is_empty() {
        let n = count(changes.providers_removed.len(), "provider");
        writeln!(out, "  - {n}: {}", changes.providers_removed.join(", "))?;
    }
    for m in &changes.models {
        let mut parts = Vec::new();
        if !m.added.is_empty() {
            parts.push(format!(
                "+{} ({})",
                count(m.added.len(), "model"),
                m.added.join(", ")
            ));
        }
        if !m.removed.is_empty() {
            parts.push(format!(
                "-{} ({})",
                count(m.removed.len(), "model"),
                m.removed.join(", ")
            ));
        }
        writeln!(out, "  ~ {}: {}", m.provider, parts.join(", "))?;
    }
    Ok(())
}

/// `1 model`, `2 models`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
