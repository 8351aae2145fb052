//! Where a catalog comes from: the `SOURCE` argument of `update-providers`,
//! resolved into one of a few kinds.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};
use std::path::PathBuf;

use reqwest::Url;

use crate::catalog::target::{DEFAULT_CATWALK_URL, DEFAULT_HYPER_URL, url_env};
use crate::catalog::{Target, embedded};
use crate::fetch::http::{FetchError, FetchOptions, Session};
use crate::fetch::watch::{Signal, Watch};
use crate::store::file;
use crate::store::validators::Validators;
use crate::trust::signature::{MAX_SIGNATURE_BYTES, SIGNATURE_SUFFIX, SignatureError};

/// A resolved catalog source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The exact URL of a catalog.
    Url(Url),
    /// The snapshot compiled into the binary.
    Embedded,
    /// Standard input.
    Stdin,
    /// A local file.
    File(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Url(url) => f.write_str(&redacted(url.as_str())),
            Source::Embedded => f.write_str("embedded snapshot"),
            Source::Stdin => f.write_str("standard input"),
            Source::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A URL, or what was meant as one, as it may be shown: its password, if
/// any, replaced by `***`. The text is read as written, not parsed, so a
/// value that is no valid URL (a proxy without its scheme, one with a
/// character Go refuses) loses its password too.
pub(crate) fn redacted(text: &str) -> String {
    let start = text.find("://").map_or(0, |i| i + 3);
    let rest = &text[start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else {
        return text.to_owned();
    };
    match authority[..at].find(':') {
        Some(colon) => format!("{}:***{}", &text[..start + colon], &text[start + at..]),
        None => text.to_owned(),
    }
}

/// Whether Go's `net/url` reads `text` as a URL Crush's client would send
/// a request for: no control character anywhere (`url.Parse` refuses one,
/// where this parser trims or drops it and goes out), and no space or
/// backslash in the host part (Go refuses such a host, or reads the
/// backslash into its port or user name, where this parser starts the
/// path there).
pub(crate) fn go_accepts(text: &str) -> bool {
    if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    let rest = text.split_once("://").map_or(text, |(_, rest)| rest);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    !authority.contains([' ', '\\'])
}

/// A `SOURCE` argument, `CATWALK_URL` or `HYPER_URL` that is not usable (a
/// usage error). Each holds the text as shown: a password replaced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SourceError {
    /// White space around a URL ([`stray_space`]): where, and the URL
    /// without it.
    #[error(
        "{0:?} {1}, which is no part of a URL: Go refuses it, so Crush sends no request; remove it: {2:?}"
    )]
    StraySpace(String, String, String),
    /// An http(s) URL Go's parser refuses ([`go_accepts`]).
    #[error(
        "{0:?}: Go refuses it, so Crush sends no request with it (a control character, or a space or backslash before the path); write the URL without it"
    )]
    GoRefuses(String),
    /// Another scheme than http(s) or file: this one.
    #[error(
        "{0:?}: {1}:// is not a scheme this reads; give an http:// or https:// URL, a file, `-` for standard input, or `embedded`"
    )]
    Scheme(String, String),
    /// Not a URL at all, for this.
    #[error("{0:?} is not a valid URL: {1}")]
    NotUrl(String, url::ParseError),
    /// A URL without a host name.
    #[error("{0:?} has no host name")]
    NoHost(String),
    /// A `file://` URL of another machine's file.
    #[error("{0:?} does not name a local file; use file:///absolute/path")]
    NotLocal(String),
    /// One of the above, in this variable.
    #[error("{0}: {1}")]
    In(&'static str, Box<SourceError>),
}

/// Which input named the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Given {
    /// The `SOURCE` argument.
    Argument,
    /// This variable (`CATWALK_URL`, `HYPER_URL`: [`url_env`]), the
    /// argument being omitted or empty.
    Variable(&'static str),
    /// Neither: the public server.
    Default,
}

/// The text of `SOURCE` for `target`, and which input gave it: the
/// argument, else `env_url`, the value of its [`url_env`] (Crush's
/// `UpdateHyper`: `cmp.Or(pathOrURL, hyper.BaseURL())`), else its public
/// server.
pub(crate) fn given_for<'a>(
    target: Target,
    arg: Option<&'a str>,
    env_url: Option<&'a str>,
) -> (&'a str, Given) {
    match (
        arg.filter(|a| !a.is_empty()),
        env_url.filter(|u| !u.is_empty()),
    ) {
        (Some(arg), _) => (arg, Given::Argument),
        (None, Some(url)) => (url, Given::Variable(url_env(target))),
        (None, None) => match target {
            Target::Catalog => (DEFAULT_CATWALK_URL, Given::Default),
            Target::Hyper => (DEFAULT_HYPER_URL, Given::Default),
        },
    }
}

/// Resolves the `SOURCE` text [`given_for`] `target` found, `given` so: a
/// URL names a server's base (or the document itself); the error of a
/// variable's value names the variable.
pub(crate) fn resolve_for(target: Target, text: &str, given: Given) -> Result<Source, SourceError> {
    resolve_text(target, text).map_err(|error| match given {
        Given::Variable(name) => SourceError::In(name, Box::new(error)),
        _ => error,
    })
}

/// Whether `env_url`, the value of `target`'s [`url_env`]
/// (`CATWALK_URL`, `HYPER_URL`), can be the start-up refresh's server: an
/// http(s) URL Go accepts, as Crush's requests need (anything else makes
/// its request fail before it is sent). `Err` holds a value that is not
/// one.
pub(crate) fn startup_url_for(target: Target, env_url: Option<&str>) -> Result<Url, String> {
    let (text, _) = given_for(target, None, env_url);
    if is_http(text)
        && go_accepts(text)
        && let Ok(url) = document_url(target, text)
    {
        return Ok(url);
    }
    Err(text.to_owned())
}

fn resolve_text(target: Target, arg: &str) -> Result<Source, SourceError> {
    let shown = redacted(arg);
    if let Some((what, url)) = stray_space(arg) {
        return Err(SourceError::StraySpace(shown, what, redacted(url)));
    }
    let file = starts_with_ignore_case(arg, "file:");
    match arg {
        "embedded" => Ok(Source::Embedded),
        "-" => Ok(Source::Stdin),
        _ if is_http(arg) && !go_accepts(arg) => Err(SourceError::GoRefuses(shown)),
        _ if is_http(arg) => document_url(target, arg).map(Source::Url),
        _ if arg.contains("://") && !file => {
            let scheme = arg.split("://").next().unwrap_or_default().to_owned();
            Err(SourceError::Scheme(shown, scheme))
        }
        _ if file => {
            let url = Url::parse(arg).map_err(|e| SourceError::NotUrl(shown.clone(), e))?;
            url.to_file_path()
                .map(Source::File)
                .map_err(|()| SourceError::NotLocal(shown))
        }
        _ => Ok(Source::File(PathBuf::from(arg))),
    }
}

/// The URL a `SOURCE` that names no file probably meant: `mirror.corp/x/`
/// or `127.0.0.1:8080` are a host written without its scheme (a missing
/// file named so is a typo of a URL far more often than of a path):
/// https, but plain http on this machine, where a mirror rarely has a
/// certificate and nothing on the way can read it. `None` for what looks
/// like a file's path.
pub(crate) fn meant_url(arg: &str) -> Option<String> {
    let host = arg.split_once('/').map_or(arg, |(host, _)| host);
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (name, Some(port))
        }
        _ => (host, None),
    };
    let labels: Vec<&str> = name.split('.').collect();
    let hostname = name == "localhost"
        || (labels.len() >= 2
            && labels.iter().all(|l| {
                !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }));
    // `providers.json` alone is a file; with a slash or a port after it, a
    // host, and so is a name of three labels or more that does not end as
    // a catalog's file is named (`catwalk.charm.land`, not
    // `providers.json.bak`).
    let domain = labels.len() >= 3
        && !labels.contains(&"json")
        && labels
            .last()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_alphabetic()));
    let looks_like_a_file = !arg.contains('/') && port.is_none() && !domain;
    if !hostname || looks_like_a_file {
        return None;
    }
    let local = Url::parse(&format!("http://{arg}"))
        .is_ok_and(|url| crate::fetch::proxy::is_loopback(&url));
    Some(format!("{}://{arg}", if local { "http" } else { "https" }))
}

/// The URL of `target`'s document for a URL given by the user: itself
/// when it already names one (`….json`, or `…/v2/providers` for the
/// catalog, `…/api/v1/provider` for Hyper's provider), else the base URL
/// and that path joined with exactly one slash (Crush joins `HYPER_URL`
/// and the path as text; a trailing slash makes no other place here).
pub(crate) fn document_url(target: Target, given: &str) -> Result<Url, SourceError> {
    let mut url = Url::parse(given).map_err(|e| SourceError::NotUrl(redacted(given), e))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(SourceError::NoHost(redacted(given)));
    }
    let path = url.path().trim_end_matches('/');
    let document = match target {
        Target::Catalog => "v2/providers",
        Target::Hyper => "api/v1/provider",
    };
    if path.ends_with(".json")
        || path
            .strip_suffix(document)
            .is_some_and(|base| base.ends_with('/'))
    {
        return Ok(url);
    }
    let joined = format!("{path}/{document}");
    url.set_path(&joined);
    Ok(url)
}

/// Where a URL but for the spaces around it has them (`ends with a
/// space`), and the URL without them; `None` for anything else. Go's URL
/// parser, Crush's, refuses them, and a person does not see them.
pub(crate) fn stray_space(text: &str) -> Option<(String, &str)> {
    let url = text.trim();
    if url == text || !is_http(url) {
        return None;
    }
    let blank = |c: Option<char>| match c {
        Some(' ') => "a space",
        Some('\t') => "a tab",
        Some('\n' | '\r') => "a line break",
        _ => "white space",
    };
    let (first, last) = (text.chars().next(), text.chars().next_back());
    let what = match (
        first.is_some_and(char::is_whitespace),
        last.is_some_and(char::is_whitespace),
    ) {
        (true, true) => format!("starts with {} and ends with {}", blank(first), blank(last)),
        (true, false) => format!("starts with {}", blank(first)),
        _ => format!("ends with {}", blank(last)),
    };
    Some((what, url))
}

/// Whether `s` starts as an http(s) URL, in any letter case.
pub(crate) fn is_http(s: &str) -> bool {
    starts_with_ignore_case(s, "http://") || starts_with_ignore_case(s, "https://")
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Why a source could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The network fetch failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A local file or standard input could not be read.
    #[error("cannot read: {}", crate::store::file::io_words(.0))]
    Io(#[from] io::Error),
    /// The input is larger than the cap.
    #[error("the input is larger than the limit of {} MiB", .0 / (1024 * 1024))]
    TooLarge(usize),
}

/// Bytes read from a source, with the HTTP validators that came with them.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The raw catalog bytes.
    pub bytes: Cow<'static, [u8]>,
    /// Validators the server sent (empty for local sources).
    pub validators: Validators,
}

impl Source {
    /// Reads the source's bytes, never more than `options.max_body`; a URL
    /// on `session`, whose connection its signature can then share.
    /// `None`: `304 Not Modified` to a request conditional on
    /// `options.conditional`.
    pub(crate) fn load(
        &self,
        options: &FetchOptions,
        session: &Session,
    ) -> Result<Option<Loaded>, ReadError> {
        let bytes = match self {
            Source::Embedded => Cow::Borrowed(embedded::catalog_bytes()),
            Source::Stdin => Cow::Owned(read_capped(io::stdin().lock(), 0, options.max_body)?),
            Source::File(path) => {
                let file = std::fs::File::open(path)?;
                let size = file.metadata().map_or(0, |m| m.len());
                Cow::Owned(read_capped(file, size, options.max_body)?)
            }
            Source::Url(url) => return Ok(session.fetch(url, options)?),
        };
        let validators = Validators::default();
        Ok(Some(Loaded { bytes, validators }))
    }

    /// Reads this source's detached signature, at most
    /// [`MAX_SIGNATURE_BYTES`]: for a URL, the same URL with `.minisig`
    /// appended, fetched on `session` (the connection that brought the
    /// catalog) with the same bounds; for a file, `FILE.minisig`; for
    /// standard input, `given` (`--signature FILE`). `Ok(None)` for the
    /// embedded snapshot, which needs none. A download of it that the
    /// caller's cancellation ends is that, not a missing signature.
    pub(crate) fn load_signature(
        &self,
        given: Option<&std::path::Path>,
        options: &FetchOptions,
        session: &Session,
    ) -> Result<Option<Vec<u8>>, Unsigned> {
        let missing = |why: String| Err(Unsigned::None(SignatureError::Missing(why)));
        let too_large = || Err(Unsigned::None(SignatureError::too_large()));
        match (self, given) {
            (Source::Embedded, _) => Ok(None),
            // Named by the person: it may be a pipe.
            (_, Some(path)) => {
                let shown = path.display();
                let read = std::fs::File::open(path).map_err(ReadError::Io);
                match read.and_then(|file| read_capped(file, 0, MAX_SIGNATURE_BYTES)) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(ReadError::TooLarge(_)) => too_large(),
                    Err(e) => missing(format!("{shown}: {e}")),
                }
            }
            (Source::Stdin, None) => missing("standard input brings none".into()),
            // Found beside the file: only a regular one, never waited on.
            (Source::File(path), None) => {
                let mut name = path.clone().into_os_string();
                name.push(SIGNATURE_SUFFIX);
                let shown = std::path::Path::new(&name).display();
                match file::read_regular(std::path::Path::new(&name), MAX_SIGNATURE_BYTES) {
                    Ok(Some((bytes, _))) => Ok(Some(bytes)),
                    Ok(None) => missing(format!("cannot read {shown}: it does not exist")),
                    Err(file::FileError::TooLarge(_)) => too_large(),
                    Err(e) => missing(format!("cannot read {shown}: {e}")),
                }
            }
            (Source::Url(url), None) => {
                let mut url = url.clone();
                url.set_path(&format!("{}{SIGNATURE_SUFFIX}", url.path()));
                // The same cancellation, and no bar of its own.
                let watch = Watch {
                    reporter: None,
                    cancel: options.watch.cancel.clone(),
                };
                let options = FetchOptions {
                    max_body: MAX_SIGNATURE_BYTES,
                    watch,
                    ..options.clone()
                };
                let shown = redacted(url.as_str());
                match session.fetch(&url, &options) {
                    Ok(Some(loaded)) => Ok(Some(loaded.bytes.into_owned())),
                    Ok(None) => missing(format!("{shown}: answered 304")),
                    Err(FetchError::TooLarge(_)) => too_large(),
                    Err(FetchError::Interrupted(signal)) => Err(Unsigned::Interrupted(signal)),
                    Err(e) => missing(format!("{shown}: {e}")),
                }
            }
        }
    }
}

/// Why a source's signature was not read.
#[derive(Debug)]
pub(crate) enum Unsigned {
    /// None could be read where one must be: missing, or too large.
    None(SignatureError),
    /// The caller's cancellation ended its download, for this signal.
    Interrupted(Signal),
}

/// Reads at most `cap` bytes; more is an error, and so is a `size` (a
/// file's, 0 when unknown) above it, before anything is read. Device files
/// and pipes have no trustworthy size, so the cap is enforced while
/// reading.
fn read_capped(reader: impl Read, size: u64, cap: usize) -> Result<Vec<u8>, ReadError> {
    if size > cap as u64 {
        return Err(ReadError::TooLarge(cap));
    }
    // Room for one byte more than expected: reading to the end then finds
    // out that there is no more without growing the buffer.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    reader.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves the `SOURCE` argument. `catwalk_url` is the value of
    /// `CATWALK_URL`, used when the argument is omitted or empty, and read
    /// the same way: `embedded`, a file or a URL, as Crush reads it.
    fn resolve(arg: Option<&str>, catwalk_url: Option<&str>) -> Result<Source, SourceError> {
        resolved(Target::Catalog, arg, catwalk_url)
    }

    /// The source `arg` and `env_url` name for `target`.
    fn resolved(
        target: Target,
        arg: Option<&str>,
        env_url: Option<&str>,
    ) -> Result<Source, SourceError> {
        let (text, given) = given_for(target, arg, env_url);
        resolve_for(target, text, given)
    }

    /// Whether `CATWALK_URL` can be the start-up refresh's server.
    fn startup_url(catwalk_url: Option<&str>) -> Result<Url, String> {
        startup_url_for(Target::Catalog, catwalk_url)
    }

    /// A password is never shown, whether the text parses as a URL or not
    /// (`user:pass@proxy:3128` is a proxy without its scheme; a value Go
    /// refuses is shown too, in a warning).
    #[test]
    fn passwords_are_never_shown() {
        for (given, shown) in [
            (
                "https://u:s3cret@mirror.corp/x",
                "https://u:***@mirror.corp/x",
            ),
            ("u:s3cret@proxy.corp:3128", "u:***@proxy.corp:3128"),
            ("http://u:s3:cr@et@h:1/p@q", "http://u:***@h:1/p@q"),
            ("http://u:s3cret@h\u{1b}[0m:1", "http://u:***@h\u{1b}[0m:1"),
            ("http://u:s3cret@h:1 ", "http://u:***@h:1 "),
            ("https://user@mirror.corp/", "https://user@mirror.corp/"),
            ("https://mirror.corp/a:b@c", "https://mirror.corp/a:b@c"),
            ("mirror.corp:8080", "mirror.corp:8080"),
            ("", ""),
        ] {
            assert_eq!(redacted(given), shown, "{given:?}");
        }
        let url = Url::parse("http://u:s3cret@127.0.0.1:1/v2/providers").unwrap();
        assert_eq!(
            Source::Url(url).to_string(),
            "http://u:***@127.0.0.1:1/v2/providers"
        );
    }

    fn url(arg: &str) -> String {
        match resolve(Some(arg), None).unwrap() {
            Source::Url(u) => u.to_string(),
            other => panic!("{other:?}"),
        }
    }

    /// What Go's `url.Parse` and client send a request for; the rest
    /// goes nowhere at start-up, as in Crush.
    #[test]
    fn a_catwalk_url_go_refuses_makes_no_request() {
        for refused in [
            "http://mirror.corp ",
            "http://mirror.corp\n",
            "http://mirror.corp:80 /x",
            "http://mir ror.corp/",
            "http://mirror.corp\\@evil/",
            "http://mirror.corp/a\tb",
            " http://mirror.corp",
        ] {
            assert_eq!(
                startup_url(Some(refused)),
                Err(refused.to_owned()),
                "{refused:?}"
            );
        }
        for sent in [
            "http://mirror.corp",
            "HTTPS://mirror.corp/x y",
            "http://u:p@mirror.corp:8080/",
            // A quoted `.env` value with a space after the path.
            "https://mirror.corp/catwalk ",
        ] {
            assert!(startup_url(Some(sent)).is_ok(), "{sent:?}");
        }
    }

    #[test]
    fn omitted_uses_catwalk_url_or_default() {
        assert_eq!(
            resolve(None, None).unwrap(),
            Source::Url(Url::parse("https://catwalk.charm.land/v2/providers").unwrap())
        );
        assert_eq!(
            resolve(None, Some("http://127.0.0.1:9/base/"))
                .unwrap()
                .to_string(),
            "http://127.0.0.1:9/base/v2/providers"
        );
        // As Crush reads it: a file, `embedded`, or a URL.
        assert_eq!(
            resolve(None, Some("catwalk.local:8080")).unwrap(),
            Source::File("catwalk.local:8080".into())
        );
        assert_eq!(resolve(None, Some("embedded")).unwrap(), Source::Embedded);
        assert_eq!(
            resolve(Some(""), Some("embedded")).unwrap(),
            Source::Embedded
        );
        assert_eq!(
            resolve(Some(""), None).unwrap(),
            resolve(None, None).unwrap()
        );
        assert!(
            resolve(None, Some("ftp://x/y"))
                .unwrap_err()
                .to_string()
                .starts_with("CATWALK_URL: ")
        );
        assert_eq!(
            startup_url(Some("mirror.corp:8080")),
            Err("mirror.corp:8080".to_string())
        );
        assert_eq!(startup_url(Some("embedded")), Err("embedded".to_string()));
        assert_eq!(
            startup_url(None).unwrap().as_str(),
            "https://catwalk.charm.land/v2/providers"
        );
    }

    /// Hyper's provider: `HYPER_URL` else Hyper's server, below which
    /// Crush's path is joined; the same forms otherwise.
    #[test]
    fn hyper_is_found_below_hyper_url_or_its_server() {
        let hyper = |arg, env| {
            resolved(Target::Hyper, arg, env)
                .map(|s| s.to_string())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            hyper(None, None).unwrap(),
            "https://hyper.charm.land/api/v1/provider"
        );
        for (arg, env, url) in [
            (
                None,
                Some("http://127.0.0.1:9"),
                "http://127.0.0.1:9/api/v1/provider",
            ),
            (
                Some(""),
                Some("http://127.0.0.1:9/x/"),
                "http://127.0.0.1:9/x/api/v1/provider",
            ),
            (
                Some("https://m.corp/h/api/v1/provider"),
                None,
                "https://m.corp/h/api/v1/provider",
            ),
            (
                Some("https://m.corp/hyper.json"),
                None,
                "https://m.corp/hyper.json",
            ),
            // Only Crush's path as a whole names the document.
            (
                Some("https://m.corp/xapi/v1/provider"),
                None,
                "https://m.corp/xapi/v1/provider/api/v1/provider",
            ),
        ] {
            assert_eq!(hyper(arg, env).unwrap(), url, "{arg:?} {env:?}");
        }
        assert_eq!(
            resolved(Target::Hyper, None, Some("embedded")),
            Ok(Source::Embedded)
        );
        assert_eq!(
            resolved(Target::Hyper, None, Some("/tmp/h.json")),
            Ok(Source::File("/tmp/h.json".into()))
        );
        assert!(
            hyper(None, Some("ftp://x"))
                .unwrap_err()
                .starts_with("HYPER_URL: ")
        );
        assert_eq!(
            given_for(Target::Hyper, None, Some("x")),
            ("x", Given::Variable("HYPER_URL"))
        );
        assert_eq!(
            startup_url_for(Target::Hyper, Some("hyper.corp")),
            Err("hyper.corp".to_string())
        );
        // The catalog's paths are no document of Hyper's.
        assert_eq!(
            hyper(Some("https://m.corp/v2/providers"), None).unwrap(),
            "https://m.corp/v2/providers/api/v1/provider"
        );
    }

    #[test]
    fn base_urls_are_joined_with_one_slash() {
        assert_eq!(
            url("https://example.com/"),
            "https://example.com/v2/providers"
        );
        assert_eq!(
            url("https://example.com"),
            "https://example.com/v2/providers"
        );
        assert_eq!(
            url("https://example.com/mirror//"),
            "https://example.com/mirror/v2/providers"
        );
        assert_eq!(
            url("https://example.com/m?x=1"),
            "https://example.com/m/v2/providers?x=1"
        );
        assert_eq!(
            url("HTTPS://Example.com/a"),
            "https://example.com/a/v2/providers"
        );
    }

    #[test]
    fn catalog_urls_are_kept() {
        assert_eq!(
            url("https://example.com/v2/providers"),
            "https://example.com/v2/providers"
        );
        assert_eq!(
            url("https://example.com/v2/providers/"),
            "https://example.com/v2/providers/"
        );
        assert_eq!(
            url("http://example.com/c/providers.json"),
            "http://example.com/c/providers.json"
        );
    }

    #[test]
    fn other_forms() {
        assert_eq!(resolve(Some("embedded"), None).unwrap(), Source::Embedded);
        assert_eq!(resolve(Some("-"), None).unwrap(), Source::Stdin);
        assert_eq!(
            resolve(Some("a/b.json"), None).unwrap(),
            Source::File("a/b.json".into())
        );
        #[cfg(unix)]
        assert_eq!(
            resolve(Some("file:///tmp/x.json"), None).unwrap(),
            Source::File("/tmp/x.json".into())
        );
        assert!(resolve(Some("file://host/x"), None).is_err());
        assert!(resolve(Some("http://"), None).is_err());
        assert!(resolve(Some("https://exa mple.com"), None).is_err());
    }

    /// The size is only a hint: a source larger than it is read whole, and
    /// one larger than the cap is refused.
    #[test]
    fn reads_keep_every_byte_and_the_cap() {
        let data: Vec<u8> = (0..9_000_000u32).map(|i| (i % 251) as u8).collect();
        let size = data.len() as u64;
        assert_eq!(read_capped(&data[..], size, data.len()).unwrap(), data);
        assert_eq!(read_capped(&data[..], 0, data.len()).unwrap(), data);
        // Told by its size, or found while reading.
        for size in [size, 0] {
            assert!(matches!(
                read_capped(&data[..], size, data.len() - 1),
                Err(ReadError::TooLarge(_))
            ));
        }
    }

    #[test]
    fn other_schemes_are_usage_errors_and_bare_hosts_are_told() {
        for arg in ["htp://mirror.corp/x", "ftp://files.example/providers.json"] {
            let err = resolve(Some(arg), None).unwrap_err().to_string();
            assert!(err.contains("is not a scheme this reads"), "{err}");
        }
        // Plain http only for this machine: a name below `localhost` is
        // resolved and proxied as any other.
        for (arg, scheme) in [
            ("mirror.corp/catwalk/", "https"),
            ("127.0.0.1:45187", "http"),
            ("localhost:8080/x", "http"),
            ("mirror.localhost:8080", "https"),
            ("127.0.0.1.example:8080", "https"),
            ("catwalk.charm.land", "https"),
            ("catwalk.charm.land/", "https"),
            ("www.example.com", "https"),
        ] {
            assert_eq!(meant_url(arg), Some(format!("{scheme}://{arg}")), "{arg}");
        }
        for file in [
            "providers.json",
            "./providers.json",
            "/tmp/x.json",
            "cache/providers.json",
            "a b.c/x",
            "old.providers.json",
            "providers.json.bak",
            "example.com",
        ] {
            assert_eq!(meant_url(file), None, "{file}");
        }
    }
}
