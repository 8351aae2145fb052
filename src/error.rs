//! Why a command failed, as one renderer tells it, in uv's shape: what
//! failed, each cause of its `#[source]` chain under it, and the next step
//! ([`Failure::hint`]); and the one name hints give this program.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::catalog::{Target, ValidationError};
use crate::config::ConfigError;
use crate::fetch::credential::Routed;
use crate::fetch::diagnosis::Network;
use crate::fetch::http::FetchError;
use crate::fetch::source::{ReadError, Source, Unsigned};
use crate::store::atomic::WriteError;
use crate::store::cache::{CacheError, UntrustedFolder};
use crate::store::file::io_words;
use crate::store::paths::NoHome;
use crate::trust::guard::Review;
use crate::trust::signature::{KeyError, SignatureError};

static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name every hint gives this program: the one the command line was
/// invoked by (installed as `crush-providers`, hints say
/// `crush-providers update-providers`), set once by [`name_program`];
/// else `crush`, as a host's messages name Crush's commands.
pub(crate) fn program() -> &'static str {
    PROGRAM.get().map_or("crush", String::as_str)
}

/// Names the program for every hint from now on: the command line, once.
pub(crate) fn name_program(name: String) {
    let _ = PROGRAM.set(name);
}

/// A failed command. Its `Display` is the failure on one line: what
/// failed, its causes, and the hint after a `;`.
#[derive(Debug)]
pub struct Failure {
    /// What was being read or written, in words: a catalog's source (a
    /// URL with its password as `***`), `data folder`, a path.
    pub(crate) source: String,
    /// The catalog's source, when that is what failed: where it is from
    /// decides the hint (boxed: a failure stays small to return).
    pub(crate) from: Option<Box<Source>>,
    /// Why it failed.
    pub(crate) cause: Cause,
}

/// Why a command failed: a variant that wraps another error names what
/// failed and carries that error as its `#[source]`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Cause {
    /// Reading the source failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The bytes are not a valid document of `target`.
    #[error("not a valid {}", match .target { Target::Catalog => "catalog", Target::Hyper => "Hyper provider" })]
    Invalid {
        /// The document expected.
        target: Target,
        /// What is wrong with it.
        source: ValidationError,
    },
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
    #[error("refused")]
    Signature(#[from] SignatureError),
    /// What a refresh would hold, and the person did not allow: every
    /// finding, in full.
    #[error("refused: {}", .0.findings().join("; "))]
    Refused(Box<Review>),
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
    #[error("cannot be read")]
    WorkingDir(#[source] std::io::Error),
    /// A pinned public key cannot be used.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// `--output` cannot take the catalog.
    #[error("cannot write the catalog there")]
    Output(#[from] OutputError),
    /// The command's output could not be written.
    #[error("cannot write")]
    Stdout(#[source] std::io::Error),
    /// The cache cannot be read (`--keep-current`, which keeps it).
    #[error(transparent)]
    Cache(CacheError),
    /// No model matches the terms given (each as printable text).
    #[error("no model matches {}", .0.join(" "))]
    NoMatch(Vec<String>),
}

/// Why `--output` cannot take the catalog, told before anything is
/// downloaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OutputError {
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

impl Cause {
    /// Why a document of `target` is not valid.
    pub(crate) fn invalid(target: Target, source: ValidationError) -> Cause {
        Cause::Invalid { target, source }
    }

    /// What failed (the cause's own words, to follow the subject), then
    /// each error of its `#[source]` chain, one a line, with no control
    /// character whatever a server or a file said. A cause whose words
    /// already end its parent's (`cannot write F: No space left on
    /// device`) is taken out of them and stands on its own line; the
    /// system's errors are told in plain words, without their number; the
    /// HTTP client's are left to `--verbose` ([`Failure::detail`]).
    pub(crate) fn chain(&self) -> Vec<String> {
        let mut lines = vec![self.to_string()];
        let mut next = self.source();
        // The HTTP client's own account is the `--verbose` detail, in its
        // words: never shown otherwise.
        while let Some(e) = next.filter(|e| !e.is::<reqwest::Error>()) {
            let words = words(e);
            let last = lines.last_mut().expect("the first line");
            if let Some(head) = [e.to_string(), words.clone()]
                .iter()
                .find_map(|told| last.strip_suffix(&format!(": {told}")))
            {
                *last = head.to_owned();
            }
            if !last.contains(&words) {
                lines.push(words);
            }
            next = e.source();
        }
        let plain = |c: char| if c.is_control() { ' ' } else { c };
        lines
            .iter()
            .map(|l| l.chars().map(plain).collect())
            .collect()
    }
}

impl From<ValidationError> for Cause {
    fn from(source: ValidationError) -> Self {
        Cause::invalid(Target::Catalog, source)
    }
}

impl From<Unsigned> for Cause {
    fn from(unsigned: Unsigned) -> Self {
        match unsigned {
            Unsigned::None(none) => Cause::Signature(none),
            // Ended as a cancelled download of the catalog ends.
            Unsigned::Interrupted(signal) => Cause::Read(FetchError::Interrupted(signal).into()),
        }
    }
}

impl Failure {
    /// A failure of `source`, a thing named in words (a path, `data
    /// folder`, where a key is set).
    pub(crate) fn new(source: impl fmt::Display, cause: impl Into<Cause>) -> Failure {
        Failure {
            source: source.to_string(),
            from: None,
            cause: cause.into(),
        }
    }

    /// A failure of a catalog's `source`.
    pub(crate) fn of(source: &Source, cause: impl Into<Cause>) -> Failure {
        Failure {
            from: Some(Box::new(source.clone())),
            ..Failure::new(source, cause)
        }
    }

    /// What the user can do about it, its commands named as the command
    /// line was invoked (`crush` for a host).
    pub(crate) fn hint(&self) -> Cow<'static, str> {
        let program = program();
        let url = match self.from.as_deref() {
            Some(Source::Url(url)) => Some(url),
            _ => None,
        };
        let hint = match &self.cause {
            // A page where a catalog was expected: a login page or a
            // proxy's, unless it is a file the user gave.
            Cause::Invalid {
                source: ValidationError::HtmlPage,
                ..
            } if url.is_some() => {
                return format!(
                    "a login page or a proxy's page may have answered instead: check the URL, and {} if a proxy is in the way",
                    crate::fetch::proxy::variable_for(url.expect("a URL"))
                )
                .into();
            }
            // Only a URL is downloaded; a download named otherwise is told
            // as one over https, as Catwalk's is.
            Cause::Read(ReadError::Fetch(fetch)) => {
                let catwalk = reqwest::Url::parse(crate::catalog::target::DEFAULT_CATWALK_URL);
                let catwalk = catwalk.as_ref().ok();
                let url = url.or(catwalk);
                // Catwalk's name unknown: most often a machine offline, where
                // the catalog built in is the one source at hand.
                let dns = matches!(fetch, FetchError::Network { cause, .. } if matches!(**cause, Network::Dns(..)));
                if dns && url.and_then(|u| u.host_str()) == catwalk.and_then(|c| c.host_str()) {
                    return format!(
                        "check the network and its name service (DNS); offline, `{program} update-providers embedded` installs the catalog built into this program"
                    )
                    .into();
                }
                return url.map(|url| fetch.hint(url)).unwrap_or_default().into();
            }
            Cause::Read(ReadError::Io(e)) => match e.kind() {
                std::io::ErrorKind::NotFound => "check the path",
                std::io::ErrorKind::IsADirectory => "give the path of the catalog file inside it",
                std::io::ErrorKind::PermissionDenied => "check its permissions",
                _ => "check the path and its permissions",
            },
            Cause::Read(ReadError::TooLarge(_)) => "check that the source is a provider catalog",
            Cause::Invalid {
                target: Target::Catalog,
                ..
            } => "check that the source is a Catwalk v2 provider catalog",
            Cause::Invalid { .. } => {
                "check that the source is Hyper's provider: one provider object, as Hyper's /api/v1/provider answers"
            }
            Cause::NoHyperSnapshot => {
                "give Hyper's URL or a file; to have Crush use its own embedded Hyper provider instead, remove hyper.json from the data folder (`crush provider-dirs` shows it)"
            }
            Cause::Digest { .. } => {
                "the source is not the catalog you expected; check the source and the --sha256 value"
            }
            // What brings a signature that is missing or refused, for where
            // the catalog came from.
            Cause::Signature(SignatureError::Future { .. }) => {
                "check this machine's clock, and have the mirror sign the catalog again with the right time"
            }
            Cause::Signature(SignatureError::Legacy) => {
                "sign the catalog again with a current minisign, without -l (`minisign -S -m FILE`)"
            }
            Cause::Signature(SignatureError::Missing(_)) => match self.from.as_deref() {
                Some(Source::Stdin) => {
                    "give the catalog's .minisig with --signature FILE: with a key pinned, only a signed catalog is applied"
                }
                Some(Source::Url(_)) => {
                    "the mirror must serve the .minisig beside the catalog (or give it with --signature FILE)"
                }
                _ => {
                    "put the catalog's signature beside it (FILE.minisig), or give it with --signature FILE"
                }
            },
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
            Cause::Routed(routed) => return routed.fix(false).into(),
            // The memory of where keys went, grown past what it is read at.
            Cause::Write(e) if e.source.kind() == std::io::ErrorKind::FileTooLarge => {
                "check the source: what it teaches would make the memory unreadable; nothing was written"
            }
            Cause::Write(e)
                if matches!(
                    e.source.kind(),
                    std::io::ErrorKind::NotADirectory | std::io::ErrorKind::AlreadyExists
                ) =>
            {
                "a file stands where a folder of that path should be: move it away (for the data folder, or set XDG_DATA_HOME to another folder)"
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

    /// The libraries' own account of the failure, for `--verbose`.
    pub(crate) fn detail(&self) -> Option<String> {
        match &self.cause {
            Cause::Read(ReadError::Fetch(fetch)) => fetch.detail(),
            _ => None,
        }
    }
}

/// An error's words; the system's in plain words ([`io_words`]).
fn words(e: &(dyn Error + 'static)) -> String {
    match e.downcast_ref::<std::io::Error>() {
        Some(io) => io_words(io),
        None => e.to_string(),
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chain = self.cause.chain().join(": ");
        write!(f, "{}: {chain}; {}", self.source, self.hint())
    }
}

impl Error for Failure {}

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

    /// Catwalk's name unknown is a machine offline more often than a typo
    /// (nobody typed it): the hint names the source that needs no network.
    /// Another host's is a typo as likely: check it.
    #[test]
    fn catwalk_unresolved_points_at_the_embedded_catalog() {
        let dns = |host: &str| {
            Cause::Read(ReadError::Fetch(FetchError::Network {
                cause: Box::new(Network::Dns(host.into(), false)),
                source: None,
                redirected: None,
            }))
        };
        let catwalk = Failure::of(
            &url("https://catwalk.charm.land/v2/providers"),
            dns("catwalk.charm.land"),
        );
        let hint = catwalk.hint();
        assert!(hint.contains("update-providers embedded"), "{hint}");
        assert!(!hint.contains("host name"), "{hint}");
        let mirror = Failure::of(&url("https://mirror.corp/"), dns("mirror.corp"));
        assert_eq!(
            mirror.hint(),
            "check the host name, and the network's name service (DNS)"
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
            assert_eq!(failure.source, shown);
            assert_eq!(failure.hint(), hint);
        }
    }

    /// Hints name the program as [`program`] does (a host's, and these
    /// tests', `crush`).
    #[test]
    fn hints_name_the_program() {
        let failure = Failure::new(
            "crush provider-models",
            Cause::NoMatch(vec!["gpt".into(), "mini".into()]),
        );
        assert_eq!(
            failure.to_string(),
            "crush provider-models: no model matches gpt mini; `crush provider-models` lists them all"
        );
    }

    /// Each cause of the chain stands on its own line, the system's in
    /// plain words without their number, however a parent tells it.
    #[test]
    fn each_cause_of_the_chain_is_told_once_on_its_own_line() {
        let full = std::io::Error::from_raw_os_error(28);
        let write = WriteError {
            step: "write",
            path: "/cache/providers.json".into(),
            source: full,
        };
        assert_eq!(
            Cause::Write(write).chain(),
            [
                "cannot write /cache/providers.json",
                "No space left on device"
            ]
        );
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(
            Cause::Read(ReadError::Io(missing)).chain(),
            ["cannot read", "there is no such file"]
        );
        // The kind wins over the words a library added; other words stand,
        // without the system's error number.
        let at_path = std::io::Error::new(std::io::ErrorKind::NotFound, "gone at path /x/.tmp1");
        assert_eq!(words(&at_path), "there is no such file");
        let folder = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
        assert_eq!(words(&folder), "a file, not a folder, has that name");
        let own = std::io::Error::other("busy (os error 16) here");
        assert_eq!(words(&own), "busy here");
        let stdout = std::io::Error::from_raw_os_error(5);
        assert_eq!(
            Cause::Stdout(stdout).chain(),
            ["cannot write", "Input/output error"]
        );
        let invalid = Cause::invalid(Target::Catalog, ValidationError::HtmlPage);
        assert_eq!(
            invalid.chain(),
            ["not a valid catalog", "an HTML page, not a JSON catalog"]
        );
    }

    /// The client that cannot be set up is told the fix for its cause:
    /// `SSL_CERT_FILE` only when that is the cause.
    #[test]
    fn a_client_that_cannot_be_set_up_gets_the_hint_of_its_cause() {
        let hint = |setup: FetchError| {
            let failure = Failure::of(&url("https://mirror.corp/"), ReadError::Fetch(setup));
            failure.hint().into_owned()
        };
        let certificates = "point SSL_CERT_FILE at a readable PEM file, or unset it";
        assert_eq!(
            hint(FetchError::CertFileEmpty("/etc/ca.pem".into())),
            certificates
        );
        assert_eq!(
            hint(FetchError::CertFileUnreadable(
                "/etc/ca.pem".into(),
                std::io::ErrorKind::PermissionDenied.into(),
            )),
            certificates
        );
        let runtime = std::io::Error::other("too many open files");
        assert!(!hint(FetchError::Runtime(runtime)).contains("SSL_CERT_FILE"));
        let client = reqwest::Client::builder().user_agent("\n").build();
        assert!(!hint(FetchError::Client(client.unwrap_err())).contains("SSL_CERT_FILE"));
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
