//! The one-line failure every command reports: which source failed, why, and
//! what to do next.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use crate::catalog::ValidationError;
pub use crate::fetch::diagnosis::{Certificate, Network, Proxy, ProxyOrigin, Timeout};
pub use crate::fetch::http::FetchError;
pub use crate::fetch::source::ReadError;
pub use crate::store::atomic::WriteError;
pub use crate::store::cache::UntrustedFolder;
use crate::store::paths::NoHome;
pub use crate::trust::guard::{Against, Downgrade, KeyMove, Review, Shrink};
pub use crate::trust::place::Place;
pub use crate::trust::signature::SignatureError;

static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name hints give this program: how it was invoked (installed as
/// `crush-providers`, hints say `crush-providers update-providers`), set
/// once by the command line; `crush` for a library host, which is Crush.
pub(crate) fn program() -> &'static str {
    PROGRAM.get().map_or("crush", String::as_str)
}

/// Sets the name [`program`] gives; the first call wins.
pub(crate) fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_owned());
}

/// A failed command. Its `Display` is the one line shown to the user.
#[derive(Debug)]
pub struct Failure {
    /// What was being read or written (a URL, a path, `embedded snapshot`).
    pub source: String,
    /// Why it failed.
    pub cause: Cause,
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Cause {
    /// Reading the source failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The bytes are not a valid catalog.
    #[error("not a valid catalog: {0}")]
    Invalid(#[from] ValidationError),
    /// The bytes are not a valid Hyper provider (one provider object).
    #[error("not a valid Hyper provider: {0}")]
    InvalidHyper(ValidationError),
    /// `embedded` for Hyper's provider, of which this build carries no
    /// snapshot.
    #[error("this build carries no snapshot of Hyper's provider (only of the Catwalk catalog)")]
    NoHyperSnapshot,
    /// `--sha256` did not match.
    #[error("SHA-256 is {actual}, not the expected {expected}")]
    Digest {
        /// What `--sha256` asked for.
        expected: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// A pinned key's signature is missing, wrong, or older than the cache.
    #[error("refused: {0}")]
    Signature(#[from] SignatureError),
    /// What a refresh would hold, and the person did not allow: every
    /// finding, in full.
    #[error("refused: {}", .0.findings().join("; "))]
    Refused(Review),
    /// The review could not be made (what is remembered of where keys
    /// went cannot be read, or a value cannot be placed): nothing is
    /// applied.
    #[error("refused: {0}")]
    Review(String),
    /// Writing the cache or the output file failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// No data folder could be derived.
    #[error(transparent)]
    NoHome(#[from] NoHome),
    /// The data folder may be written by another user.
    #[error(transparent)]
    Folder(#[from] UntrustedFolder),
    /// A configuration file could not be read.
    #[error("{0}")]
    Config(String),
    /// A pinned public key cannot be used.
    #[error("{0}")]
    Key(String),
    /// `--output` cannot take the catalog.
    #[error("cannot write the catalog there: {0}")]
    Output(String),
    /// The command's output could not be written.
    #[error("cannot write: {0}")]
    Stdout(std::io::Error),
    /// The cache cannot be read (`--keep-current`, which keeps it).
    #[error("{0}")]
    Cache(String),
    /// No model matches the terms given.
    #[error("no model matches {0}")]
    NoMatch(String),
}

impl Cause {
    /// Why a document of `target` is not valid.
    pub fn invalid(target: crate::catalog::Target, e: ValidationError) -> Cause {
        match target {
            crate::catalog::Target::Catalog => Cause::Invalid(e),
            crate::catalog::Target::Hyper => Cause::InvalidHyper(e),
        }
    }
}

impl Failure {
    /// A failure of `source`.
    pub fn new(source: impl fmt::Display, cause: impl Into<Cause>) -> Failure {
        Failure {
            source: source.to_string(),
            cause: cause.into(),
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Cow<'static, str> {
        let hint = match &self.cause {
            Cause::Read(ReadError::Fetch(fetch)) => return fetch.hint(&self.source).into(),
            Cause::Read(ReadError::Io(e)) => io_hint(e),
            Cause::Read(ReadError::TooLarge(_)) => "check that the source is a provider catalog",
            // A page where a catalog was expected: a login page or a
            // proxy's, unless it is a file the user gave.
            Cause::Invalid(e) | Cause::InvalidHyper(e)
                if e.0 == crate::catalog::HTML_PAGE
                    && (self.source.starts_with("http://")
                        || self.source.starts_with("https://")) =>
            {
                return format!(
                    "a login page or a proxy's page may have answered instead: check the URL, and {} if a proxy is in the way",
                    crate::fetch::proxy::variable_for_source(&self.source)
                )
                .into();
            }
            Cause::Invalid(_) => "check that the source is a Catwalk v2 provider catalog",
            Cause::InvalidHyper(_) => {
                "check that the source is Hyper's provider: one provider object, as Hyper's /api/v1/provider answers"
            }
            Cause::NoHyperSnapshot => {
                "give Hyper's URL or a file; to have Crush use its own embedded Hyper provider instead, remove hyper.json from the data folder (`crush provider-dirs` shows it)"
            }
            Cause::Digest { .. } => {
                "the source is not the catalog you expected; check the source and the --sha256 value"
            }
            Cause::Signature(SignatureError::Future { .. }) => {
                "check this machine's clock, and have the mirror sign the catalog again with the right time"
            }
            Cause::Signature(SignatureError::Legacy) => {
                "sign the catalog again with a current minisign, without -l (`minisign -S -m FILE`)"
            }
            Cause::Signature(SignatureError::Missing(_)) if self.source == "standard input" => {
                "give the catalog's .minisig with --signature FILE: with a key pinned, only a signed catalog is applied"
            }
            Cause::Signature(SignatureError::Missing(_))
                if self.source.starts_with("http://") || self.source.starts_with("https://") =>
            {
                "the mirror must serve the .minisig beside the catalog (or give it with --signature FILE)"
            }
            Cause::Signature(SignatureError::Missing(_)) => {
                "put the catalog's signature beside it (FILE.minisig), or give it with --signature FILE"
            }
            Cause::Signature(_) => {
                "the catalog is not what the pinned key signed; check the source and CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys)"
            }
            Cause::Refused(review) => {
                return format!(
                    "check the source; to apply it all the same, run again with {}",
                    review.flags().join(" ")
                )
                .into();
            }
            Cause::Review(_) => "nothing was written",
            // The path is in the message; it may be the cache or --output.
            Cause::Write(_) => "check that folder's permissions and free space",
            Cause::NoHome(_) => "set HOME (or XDG_DATA_HOME)",
            Cause::Folder(e) => return e.fix.clone().into(),
            Cause::Config(_) => "fix or remove that file",
            Cause::Key(_) => {
                "give a minisign public key (the second line of its .pub file, which starts with RW) or the path of the .pub file"
            }
            Cause::Output(_) => "give --output the path of a file in a folder that exists",
            Cause::Stdout(_) => "free space where the output goes, or send it elsewhere",
            Cause::Cache(_) => {
                return format!(
                    "there is no catalog to keep; `{} update-providers` replaces it",
                    program()
                )
                .into();
            }
            Cause::NoMatch(_) => {
                return format!("`{} provider-models` lists them all", program()).into();
            }
        };
        hint.into()
    }

    /// The libraries' own account of the failure, for `--verbose`.
    pub fn detail(&self) -> Option<&str> {
        match &self.cause {
            Cause::Read(ReadError::Fetch(fetch)) => fetch.detail(),
            _ => None,
        }
    }
}

/// What fixes a local file that cannot be read, for why it cannot.
fn io_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "check the path",
        std::io::ErrorKind::IsADirectory => "give the path of the catalog file inside it",
        std::io::ErrorKind::PermissionDenied => "check its permissions",
        _ => "check the path and its permissions",
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The system's own numbers say nothing to a person.
        let cause = crate::store::file::without_os_error(&self.cause.to_string());
        // The message must stay on one line whatever a server or file said.
        let cause: String = cause
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        write!(f, "{}: {}; {}", self.source, cause, self.hint())
    }
}

impl std::error::Error for Failure {}
