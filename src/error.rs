//! The one-line failure every command reports: which source failed, why, and
//! what to do next.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use crate::catalog::ValidationError;
use crate::config::ConfigError;
pub use crate::fetch::credential::{Credential, FromDotEnv, Routed};
pub use crate::fetch::diagnosis::{Certificate, Network, Proxy, ProxyOrigin, Setup, Timeout};
pub use crate::fetch::http::FetchError;
pub use crate::fetch::redirect::Redirect;
pub use crate::fetch::source::ReadError;
use crate::fetch::source::{Source, Unsigned};
pub use crate::store::atomic::WriteError;
use crate::store::cache::CacheError;
pub use crate::store::cache::UntrustedFolder;
use crate::store::paths::NoHome;
pub use crate::trust::guard::{Against, Downgrade, KeyMove, Review, Shrink};
pub use crate::trust::place::Place;
pub use crate::trust::signature::{KeyError, SignatureError};

/// A failed command. Its `Display` is the one line shown to the user, its
/// hint naming commands as Crush's (`crush update-providers`); a command
/// line invoked by another name tells it with [`Failure::line_as`].
#[derive(Debug)]
pub struct Failure {
    /// What was being read or written.
    pub source: Subject,
    /// Why it failed.
    pub cause: Cause,
}

/// What a failure names: a catalog's source, or another thing in words.
/// Its `Display` is the words shown.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Subject {
    /// A catalog's URL, shown with a password replaced by `***` (boxed:
    /// a failure stays small to return).
    Url(Box<reqwest::Url>),
    /// A catalog's file.
    File(PathBuf),
    /// A catalog read from standard input.
    Stdin,
    /// The snapshot compiled in.
    Embedded,
    /// Anything else, in words: `data folder`, a path, where a key is set.
    Named(String),
}

impl From<&Source> for Subject {
    fn from(source: &Source) -> Self {
        match source {
            Source::Url(url) => Subject::Url(Box::new(url.clone())),
            Source::File(path) => Subject::File(path.clone()),
            Source::Stdin => Subject::Stdin,
            Source::Embedded => Subject::Embedded,
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Url(url) => f.write_str(&crate::fetch::source::redacted(url.as_str())),
            Subject::File(path) => path.display().fmt(f),
            Subject::Stdin => Source::Stdin.fmt(f),
            Subject::Embedded => Source::Embedded.fmt(f),
            Subject::Named(name) => f.write_str(name),
        }
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// The request carries a credential, and a project's `.env` would
    /// choose its proxy, CA or URL: not sent.
    #[error("refused: {0}")]
    Routed(Routed),
    /// Writing the cache or the output file failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// No data folder could be derived.
    #[error(transparent)]
    NoHome(#[from] NoHome),
    /// The data folder may be written by another user.
    #[error(transparent)]
    Folder(#[from] UntrustedFolder),
    /// A configuration file cannot be read.
    #[error("{}{}", .0.line.map(|l| format!("line {l}: ")).unwrap_or_default(), .0.message)]
    Config(ConfigError),
    /// The working folder cannot be told.
    #[error("{0}")]
    WorkingDir(std::io::Error),
    /// A pinned public key cannot be used.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// `--output` cannot take the catalog.
    #[error("cannot write the catalog there: {0}")]
    Output(#[from] OutputError),
    /// The command's output could not be written.
    #[error("cannot write: {0}")]
    Stdout(std::io::Error),
    /// The cache cannot be read (`--keep-current`, which keeps it).
    #[error(transparent)]
    Cache(#[from] CacheUnreadable),
    /// No model matches the terms given (each as printable text).
    #[error("no model matches {}", .0.join(" "))]
    NoMatch(Vec<String>),
}

/// Why `--output` cannot take the catalog, told before anything is
/// downloaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// It is a folder; `example` is a file's path in it.
    #[error("it is a folder, not a file's path (such as {})", .example.display())]
    Folder {
        /// `FOLDER/providers.json`.
        example: PathBuf,
    },
    /// The folder it would be in does not exist (and is not made).
    #[error("the folder {} does not exist, and is not made", .0.display())]
    NoFolder(PathBuf),
}

/// The cache cannot be read: which file, and why.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct CacheUnreadable(#[from] CacheError);

impl Cause {
    /// Why a document of `target` is not valid.
    pub fn invalid(target: crate::catalog::Target, e: ValidationError) -> Cause {
        match target {
            crate::catalog::Target::Catalog => Cause::Invalid(e),
            crate::catalog::Target::Hyper => Cause::InvalidHyper(e),
        }
    }
}

impl From<Unsigned> for Cause {
    fn from(unsigned: Unsigned) -> Self {
        match unsigned {
            Unsigned::None(none) => Cause::Signature(none.into()),
            // Ended as a cancelled download of the catalog ends.
            Unsigned::Interrupted(signal) => Cause::Read(FetchError::Interrupted(signal).into()),
        }
    }
}

impl Failure {
    /// A failure of `source`, a thing named in words (a path, `data
    /// folder`, where a key is set).
    pub fn new(source: impl fmt::Display, cause: impl Into<Cause>) -> Failure {
        Failure {
            source: Subject::Named(source.to_string()),
            cause: cause.into(),
        }
    }

    /// A failure of a catalog's `source`.
    pub fn of(source: &Source, cause: impl Into<Cause>) -> Failure {
        Failure {
            source: source.into(),
            cause: cause.into(),
        }
    }

    /// What the user can do about it, commands named as Crush's (`crush
    /// update-providers`).
    pub fn hint(&self) -> Cow<'static, str> {
        self.hint_as(CRUSH)
    }

    /// What the user can do about it, commands named as `program` (the
    /// name the command line was invoked by).
    pub fn hint_as(&self, program: &str) -> Cow<'static, str> {
        // A page where a catalog was expected: a login page or a proxy's,
        // unless it is a file the user gave.
        if let (
            Cause::Invalid(ValidationError::HtmlPage)
            | Cause::InvalidHyper(ValidationError::HtmlPage),
            Subject::Url(url),
        ) = (&self.cause, &self.source)
        {
            return format!(
                "a login page or a proxy's page may have answered instead: check the URL, and {} if a proxy is in the way",
                crate::fetch::proxy::variable_for(url)
            )
            .into();
        }
        let hint = match &self.cause {
            Cause::Read(ReadError::Fetch(fetch)) => match &self.source {
                Subject::Url(url) => return fetch.hint(url).into(),
                // Only a URL is downloaded; a download named otherwise is
                // told as one over https, as Catwalk's is.
                _ => {
                    return reqwest::Url::parse(crate::catalog::target::DEFAULT_CATWALK_URL)
                        .map(|url| fetch.hint(&url))
                        .unwrap_or_default()
                        .into();
                }
            },
            Cause::Read(ReadError::Io(e)) => io_hint(e),
            Cause::Read(ReadError::TooLarge(_)) => "check that the source is a provider catalog",
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
            Cause::Signature(e) => signature_hint(e, &self.source),
            Cause::Refused(review) => {
                return format!(
                    "check the source; to apply it all the same, run again with {}",
                    review.flags().join(" ")
                )
                .into();
            }
            Cause::Review(_) => "nothing was written",
            Cause::Routed(routed) => return routed.fix(false).into(),
            // The memory of where keys went, grown past what it is read at.
            Cause::Write(e) if e.source.kind() == std::io::ErrorKind::FileTooLarge => {
                "check the source: what it teaches would make the memory unreadable; nothing was written"
            }
            // The path is in the message; it may be the cache or --output.
            Cause::Write(_) => "check that folder's permissions and free space",
            Cause::NoHome(_) => "set HOME (or XDG_DATA_HOME)",
            Cause::Folder(e) => return e.fix().into(),
            Cause::Config(_) => "fix or remove that file",
            Cause::WorkingDir(_) => {
                "check that the current folder still exists and can be read, or give --cwd"
            }
            Cause::Key(_) => {
                "give a minisign public key (the second line of its .pub file, which starts with RW) or the path of the .pub file"
            }
            Cause::Output(_) => "give --output the path of a file in a folder that exists",
            Cause::Stdout(_) => "free space where the output goes, or send it elsewhere",
            Cause::Cache(_) => {
                return format!(
                    "there is no catalog to keep; `{program} update-providers` replaces it"
                )
                .into();
            }
            Cause::NoMatch(_) => {
                return format!("`{program} provider-models` lists them all").into();
            }
        };
        hint.into()
    }

    /// The one line shown to the user, its hint naming commands as
    /// `program` (`Display` names them as Crush's).
    pub fn line_as(&self, program: &str) -> String {
        format!(
            "{}: {}; {}",
            self.source,
            self.cause_words(),
            self.hint_as(program)
        )
    }

    /// The cause in words, on one line: without the system's error
    /// numbers, and with no control character whatever a server or a file
    /// said.
    fn cause_words(&self) -> String {
        crate::store::file::without_os_error(&self.cause.to_string())
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    }

    /// The libraries' own account of the failure, for `--verbose`.
    pub fn detail(&self) -> Option<String> {
        match &self.cause {
            Cause::Read(ReadError::Fetch(fetch)) => fetch.detail(),
            _ => None,
        }
    }
}

/// The name hints give Crush's commands when no other is given.
const CRUSH: &str = "crush";

/// What brings a signature that is missing or refused, for where the
/// catalog came from.
fn signature_hint(e: &SignatureError, source: &Subject) -> &'static str {
    match (e, source) {
        (SignatureError::Future { .. }, _) => {
            "check this machine's clock, and have the mirror sign the catalog again with the right time"
        }
        (SignatureError::Legacy, _) => {
            "sign the catalog again with a current minisign, without -l (`minisign -S -m FILE`)"
        }
        (SignatureError::Missing(_), Subject::Stdin) => {
            "give the catalog's .minisig with --signature FILE: with a key pinned, only a signed catalog is applied"
        }
        (SignatureError::Missing(_), Subject::Url(_)) => {
            "the mirror must serve the .minisig beside the catalog (or give it with --signature FILE)"
        }
        (SignatureError::Missing(_), _) => {
            "put the catalog's signature beside it (FILE.minisig), or give it with --signature FILE"
        }
        _ => {
            "the catalog is not what the pinned key signed; check the source and CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys)"
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
        f.write_str(&self.line_as(CRUSH))
    }
}

impl std::error::Error for Failure {}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Source {
        Source::Url(text.parse().unwrap())
    }

    /// A page where a catalog was expected is a login or a proxy's page
    /// when it came from a URL, not when it came from a file; the source
    /// is told in the same words either way.
    #[test]
    fn an_html_page_from_a_url_points_at_the_proxy() {
        let from_url = Failure::of(
            &url("http://u:pw@mirror.corp/v2/providers"),
            ValidationError::HtmlPage,
        );
        assert_eq!(
            from_url.to_string(),
            "http://u:***@mirror.corp/v2/providers: not a valid catalog: an HTML page, not a JSON catalog; a login page or a proxy's page may have answered instead: check the URL, and HTTP_PROXY if a proxy is in the way"
        );
        let from_https = Failure::of(&url("https://mirror.corp/"), ValidationError::HtmlPage);
        assert!(
            from_https
                .hint()
                .ends_with("and HTTPS_PROXY if a proxy is in the way")
        );
        let from_file = Failure::of(
            &Source::File("page.html".into()),
            Cause::invalid(crate::catalog::Target::Hyper, ValidationError::HtmlPage),
        );
        assert_eq!(
            from_file.to_string(),
            "page.html: not a valid Hyper provider: an HTML page, not a JSON catalog; check that the source is Hyper's provider: one provider object, as Hyper's /api/v1/provider answers"
        );
        // Named in words, a URL is no source: its hint is a file's.
        let named = Failure::new("https://mirror.corp/", ValidationError::HtmlPage);
        assert_eq!(
            named.hint(),
            "check that the source is a Catwalk v2 provider catalog"
        );
    }

    /// Where a missing signature is to come from depends on the source.
    #[test]
    fn a_missing_signature_is_asked_for_where_the_source_is() {
        let missing = || SignatureError::Missing("none".into());
        for (source, shown, hint) in [
            (
                Source::Stdin,
                "standard input",
                "give the catalog's .minisig with --signature FILE: with a key pinned, only a signed catalog is applied",
            ),
            (
                url("https://mirror.corp/v2/providers"),
                "https://mirror.corp/v2/providers",
                "the mirror must serve the .minisig beside the catalog (or give it with --signature FILE)",
            ),
            (
                Source::File("c.json".into()),
                "c.json",
                "put the catalog's signature beside it (FILE.minisig), or give it with --signature FILE",
            ),
        ] {
            let failure = Failure::of(&source, missing());
            assert_eq!(failure.source.to_string(), shown);
            assert_eq!(failure.hint(), hint);
        }
    }

    /// The command layer names the program; `Display`, for a library host,
    /// names Crush's.
    #[test]
    fn hints_name_the_program_they_are_given() {
        let failure = Failure::new(
            "crush-providers provider-models",
            Cause::NoMatch(vec!["gpt".into(), "mini".into()]),
        );
        assert_eq!(
            failure.line_as("crush-providers"),
            "crush-providers provider-models: no model matches gpt mini; `crush-providers provider-models` lists them all"
        );
        assert_eq!(failure.hint(), "`crush provider-models` lists them all");
        assert!(
            failure
                .to_string()
                .ends_with("; `crush provider-models` lists them all")
        );
    }

    /// The client that cannot be set up is told the fix for its cause:
    /// `SSL_CERT_FILE` only when that is the cause.
    #[test]
    fn a_client_that_cannot_be_set_up_gets_the_hint_of_its_cause() {
        let hint = |setup: Setup| {
            let failure = Failure::of(
                &url("https://mirror.corp/"),
                ReadError::Fetch(FetchError::Setup(setup)),
            );
            failure.hint().into_owned()
        };
        let certificates = "point SSL_CERT_FILE at a readable PEM file, or unset it";
        assert_eq!(
            hint(Setup::CertFileEmpty("/etc/ca.pem".into())),
            certificates
        );
        assert_eq!(
            hint(Setup::CertFileUnreadable(
                "/etc/ca.pem".into(),
                std::io::ErrorKind::PermissionDenied.into(),
            )),
            certificates
        );
        let runtime = std::io::Error::other("too many open files");
        assert!(!hint(Setup::Runtime(runtime)).contains("SSL_CERT_FILE"));
        let client = reqwest::Client::builder().user_agent("\n").build();
        assert!(!hint(Setup::Client(client.unwrap_err())).contains("SSL_CERT_FILE"));
    }

    /// `--output` that cannot take the catalog says why, with the data.
    #[test]
    fn an_output_that_cannot_take_the_catalog_says_why() {
        let failure = Failure::new(
            "out",
            OutputError::NoFolder(std::path::Path::new("missing").into()),
        );
        assert_eq!(
            failure.to_string(),
            "out: cannot write the catalog there: the folder missing does not exist, and is not made; give --output the path of a file in a folder that exists"
        );
    }
}
