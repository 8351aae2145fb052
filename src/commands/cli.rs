//! The command line's arguments: every command, flag and help text, and
//! nothing of what the commands do (that is [`crate::commands`]).

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crate::catalog::Target;

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
  crush update-providers https://catwalk.charm.land \\
    --output providers.json
  crush update-providers providers.json --sha256 <HEX>

  # From a signed mirror (its key pinned; the .minisig is fetched beside it)
  CRUSH_PROVIDER_PUBLIC_KEY=\"$(tail -n 1 mirror.pub)\" \\
    crush update-providers https://mirror.corp/catwalk/

  # Update Hyper's provider (hyper.json) from $HYPER_URL, else Hyper's server,
  # with the Hyper key ($HYPER_API_KEY, else the config's)
  crush update-providers --source=hyper

  # Update Hyper's provider from a custom URL (<base>/api/v1/provider)
  crush update-providers --source=hyper https://hyper.example.com

  # Keep the catalog in use over what a refresh held back
  crush update-providers --keep-current";

/// Keeps Crush's provider catalog up to date.
#[derive(Debug, Parser)]
#[command(
    name = "crush",
    version = VERSION.as_str(),
    about,
    long_about = None,
    after_help = FRONT_HELP,
    disable_version_flag = true,
    args_override_self = true
)]
// Crush's flags are read as pflag reads them: a flag given again
// replaces its earlier value (`args_override_self`), and a bool flag
// takes `=VALUE` only (`--debug=false`, `-d=true`), so that `-dd` is two
// flags and `--debug false` leaves `false` an argument.
pub(crate) struct Cli {
    /// Working directory for the project configuration walk.
    #[arg(short = 'c', long = "cwd", global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Crush's data directory for this project, where the workspace config
    /// (crush.json) is read from
    #[arg(short = 'D', long = "data-dir", global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print on stderr the settings resolved, where each came from, and the
    /// requests made
    #[arg(
        short = 'd',
        long,
        global = true,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = parse_go_bool
    )]
    pub debug: Option<bool>,
    /// Crush's server host: accepted for Crush's command lines, without
    /// effect here
    #[arg(short = 'H', long, global = true, value_name = "HOST")]
    pub host: Option<String>,
    /// Crush's MCP servers to enable as channels (hidden in Crush too):
    /// accepted for Crush's command lines, without effect here
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "SERVER",
        action = clap::ArgAction::Append,
        value_delimiter = ','
    )]
    pub channels: Vec<String>,
    /// Print version (-v too, as Crush; `update-providers -v` is its
    /// --verbose)
    #[arg(short = 'V', long = "version", short_alias = 'v', action = clap::ArgAction::Version)]
    pub version: (),
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

const FRONT_HELP: &str = "\
Installed as `crush` ahead of a real Crush on PATH, it stands in front of it:
update-providers, providers, provider-models and provider-dirs run here, and
every other command line goes to Crush, unchanged, after the start-up refresh
(its own automatic updates then off, when it reads this cache). Without a
Crush, models, dirs and completion are this program's. Crush is the next
`crush` on PATH, or the one CRUSH_PROVIDER_REAL_CRUSH names.";

const PROVIDERS_EXAMPLES: &str = "\
Examples:
  # List providers, loading the catalog as Crush does at start-up
  crush providers

  # The effective catalog as JSON
  crush providers --json | jq '.[].id'

  # Where the cache is, when it was confirmed, how the last refresh went,
  # and whether auto-update is on (no network)
  crush providers --status";

const MODELS_EXAMPLES: &str = "\
Examples:
  # Every model as provider/model
  crush provider-models

  # Models whose provider or model id or name matches every term
  crush provider-models anthropic sonnet

  # Context windows and prices as JSON
  crush provider-models --json gpt | jq '.[] | {id, context_window}'

`models` is this command too when no Crush is found; in front of Crush it
is Crush's.";

/// `completion`'s examples for the program installed as `name`: each
/// shell's script in the file that shell loads for that name, an example
/// too long for 80 columns broken after a backslash.
fn completion_examples(name: &str) -> String {
    let files = [
        (
            "bash",
            format!("~/.local/share/bash-completion/completions/{name}"),
        ),
        ("zsh", format!("\"${{fpath[1]}}/_{name}\"")),
        ("fish", format!("~/.config/fish/completions/{name}.fish")),
    ];
    let lines = files.map(|(shell, file)| {
        let line = format!("  {name} completion {shell} > {file}");
        if line.chars().count() <= 80 {
            line
        } else {
            format!("  {name} completion {shell} \\\n    > {file}")
        }
    });
    let powershell = format!("  {name} completion powershell >> $PROFILE");
    format!("Examples:\n{}\n{powershell}", lines.join("\n"))
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Update the provider catalog from Catwalk, a URL, a file or the embedded snapshot
    #[command(after_help = UPDATE_EXAMPLES)]
    UpdateProviders(UpdateArgs),
    /// List providers, loading the catalog as Crush does at start-up
    #[command(after_help = PROVIDERS_EXAMPLES)]
    Providers(ProvidersArgs),
    /// List models as provider/model, optionally filtered
    #[command(name = "provider-models", visible_alias = "models", after_help = MODELS_EXAMPLES)]
    Models(ModelsArgs),
    /// Print the config folder, the data folder and the cache file
    #[command(
        name = "provider-dirs",
        visible_alias = "dirs",
        after_help = "Example:\n  crush provider-dirs\n\n`dirs` is this command too when no Crush is found; in front of Crush it\nis Crush's."
    )]
    Dirs,
    /// Print a shell completion script
    // Its examples are the name's: see `command`.
    Completion {
        /// The shell (without one, the shells are listed)
        shell: Option<clap_complete::Shell>,
    },
}

/// Arguments of `providers`.
#[derive(Debug, Args)]
pub(crate) struct ProvidersArgs {
    /// Print the effective catalog exactly, as a Catwalk JSON array (with --status: the status as JSON)
    #[arg(long)]
    pub json: bool,
    /// Show the cache and the auto-update setting without any network access
    #[arg(long, conflicts_with = "wait")]
    pub status: bool,
    /// Wait for a refresh that is due (with a progress bar), instead of
    /// running it in the background
    #[arg(long)]
    pub wait: bool,
}

/// Arguments of `models`.
#[derive(Debug, Args)]
pub(crate) struct ModelsArgs {
    /// Show only models whose provider id or name, or model id or name, contains every TERM (case-insensitive)
    #[arg(value_name = "TERM")]
    pub terms: Vec<String>,
    /// Print an array of JSON objects
    #[arg(long)]
    pub json: bool,
    /// Wait for a refresh that is due (with a progress bar), instead of
    /// running it in the background
    #[arg(long)]
    pub wait: bool,
}

/// Arguments of `update-providers`.
#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// Where to read the catalog: omitted or empty for Catwalk ($CATWALK_URL, read the same
    /// way, or https://catwalk.charm.land), a Catwalk base URL, the URL of a catalog (.json or
    /// /v2/providers), a file, `-` for standard input, or `embedded`; with --source hyper,
    /// $HYPER_URL or https://hyper.charm.land, below which /api/v1/provider is read, and
    /// `embedded` removes hyper.json, so that Crush uses its own embedded Hyper provider
    // Its place fixed: the completion script changes it, which would
    // otherwise move it after `unread`.
    #[arg(index = 1)]
    pub source: Option<String>,
    /// SOURCEs after the first, which Crush's update-providers takes and
    /// does not read; neither does this
    #[arg(index = 2, hide = true, value_name = "SOURCE")]
    pub unread: Vec<String>,
    /// What to update, as Crush's --source: the Catwalk catalog or Hyper's provider
    #[arg(long = "source", value_name = "PROVIDER", default_value = "catwalk", value_parser = target())]
    pub provider: Target,
    /// Read and validate, report what would change, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// As --dry-run, and exit 0 when the cache already holds this catalog,
    /// 3 when the update would change it, 1 on failure
    // It asks about the cache, which --output does not write.
    #[arg(long, conflicts_with = "output")]
    pub check: bool,
    /// Write the validated catalog to FILE instead of the cache (`-`:
    /// standard output), with its signature beside it when a key is pinned
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Refuse the catalog unless its raw bytes have this SHA-256 (64 hex digits)
    #[arg(long, value_name = "HEX", value_parser = parse_sha256)]
    pub sha256: Option<String>,
    /// Give up on a download after this many seconds
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = crate::fetch::http::parse_seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Print the report as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Print only errors
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// List every changed model id (by default long lists are shortened)
    #[arg(long, short)]
    pub verbose: bool,
    /// The catalog's minisign signature, when a key is pinned: for standard
    /// input, or instead of the SOURCE.minisig beside the source
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
    /// Apply a catalog with fewer than half of the previous one's providers
    /// or models
    #[arg(long)]
    pub allow_shrink: bool,
    /// Apply a signed catalog signed before the newest one applied here
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Apply a catalog that sends an API key variable to a place it was
    /// never sent before (each move is named in full)
    #[arg(long)]
    pub allow_key_move: bool,
    /// Keep the catalog in use over what a refresh held back: no start
    /// tells of it again; nothing is downloaded or rewritten
    #[arg(long, conflicts_with_all = [
        "source", "unread", "dry_run", "check", "output", "sha256", "signature",
        "allow_shrink", "allow_downgrade", "allow_key_move", "verbose",
    ])]
    pub keep_current: bool,
}

/// The command line as `name` (how this program was invoked) shows it:
/// usage, help, examples and completions name it so.
pub(crate) fn command(name: &str) -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command()
        .name(name.to_owned())
        .bin_name(name.to_owned());
    // Help piped to `less` or a file fits the terminal it is read in.
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        command = command.term_width(80);
    }
    command = command.mut_subcommand("completion", |c| c.after_help(completion_examples(name)));
    if name != "crush" {
        let ours = format!("{name} ");
        command = command.mut_subcommands(|c| match c.get_after_help() {
            Some(help) => {
                let help = help.to_string().replace("crush ", &ours);
                c.after_help(help)
            }
            None => c,
        });
    }
    command
}

/// How this program was invoked, for [`command`]: the file name of its
/// path, as a shell finds it (`crush-providers`, `crush.new`; `crush`, not
/// `crush.exe`).
pub(crate) fn invoked_name() -> String {
    let arg = std::env::args_os().next().unwrap_or_default();
    let path = std::path::Path::new(&arg);
    let exe = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exe"));
    let name = if exe {
        path.file_stem()
    } else {
        path.file_name()
    };
    let name = name.map(|s| s.to_string_lossy().into_owned());
    name.filter(|name| !name.is_empty())
        .unwrap_or_else(|| "crush".into())
}

static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (embedded snapshot: {})",
        env!("CARGO_PKG_VERSION"),
        crate::catalog::embedded::origin()
    )
});

/// A bool flag's `=VALUE` as pflag reads it (Go's `strconv.ParseBool`).
fn parse_go_bool(s: &str) -> Result<bool, String> {
    crate::config::go_bool(s)
        .ok_or_else(|| "expected true or false (or 1, 0, t, f, TRUE, FALSE, True, False)".into())
}

/// `--source`'s value: which document `update-providers` updates.
fn target() -> impl TypedValueParser<Value = Target> {
    let names = clap::builder::PossibleValuesParser::new([
        PossibleValue::new("catwalk").help("The Catwalk catalog, `providers.json`"),
        PossibleValue::new("hyper").help("Hyper's provider, `hyper.json`"),
    ]);
    names.map(|name| match name.as_str() {
        "hyper" => Target::Hyper,
        _ => Target::Catalog,
    })
}

fn parse_sha256(s: &str) -> Result<String, String> {
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err("expected 64 hexadecimal digits (the output of `sha256sum`)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pflag reads a bool flag's value with Go's `strconv.ParseBool`:
    /// these spellings and no others (not `yes`, not empty).
    #[test]
    fn a_bool_flags_value_is_gos() {
        for (text, value) in [
            ("1", true),
            ("t", true),
            ("T", true),
            ("TRUE", true),
            ("true", true),
            ("True", true),
            ("0", false),
            ("f", false),
            ("F", false),
            ("FALSE", false),
            ("false", false),
            ("False", false),
        ] {
            assert_eq!(parse_go_bool(text), Ok(value), "{text}");
        }
        for text in ["", "yes", "no", "on", "tRUE", " true", "2"] {
            assert!(parse_go_bool(text).is_err(), "{text}");
        }
    }

    /// Crush's command lines as pflag and cobra read them: `-dd`,
    /// `--debug=false` after `-d` (the last wins), `--debug false` (then
    /// `false` is an argument), a repeated `--source` (any flag: the last wins), several SOURCEs,
    /// and `--channels` in each form, before or after the command.
    #[test]
    fn crushs_command_lines_parse_as_pflag_reads_them() {
        use clap::Parser;
        let parse = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["crush"][..], args].concat())
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let Command::UpdateProviders(update) = cli.command else {
                panic!("{args:?}");
            };
            (cli.debug, cli.channels, update)
        };
        let (debug, _, args) = parse(&["update-providers", "-dd"]);
        assert_eq!((debug, args.source), (Some(true), None));
        let (debug, _, _) = parse(&["-d", "update-providers", "--debug=false"]);
        assert_eq!(debug, Some(false));
        let (debug, _, args) = parse(&["update-providers", "--debug", "false", "x"]);
        assert_eq!(debug, Some(true));
        assert_eq!(
            (args.source.as_deref(), args.unread),
            (Some("false"), vec!["x".to_string()])
        );
        let (_, _, args) = parse(&["update-providers", "--source=hyper", "--source", "catwalk"]);
        assert_eq!(args.provider, Target::Catalog);
        let twice = ["--dry-run", "--dry-run", "--timeout", "5", "--timeout=6"];
        let (_, _, args) = parse(&[&["update-providers"][..], &twice].concat());
        assert_eq!((args.dry_run, args.timeout), (true, Duration::from_secs(6)));
        let (_, channels, _) = parse(&["--channels", "a", "update-providers", "--channels=b,c"]);
        // clap keeps the command's own occurrences of a global flag over
        // the root's (pflag would keep all three): without effect here.
        assert_eq!(channels, ["b", "c"]);
        assert!(Cli::try_parse_from(["crush", "update-providers", "-d=yes"]).is_err());
    }
}
