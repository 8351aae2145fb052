//! Fetching a catalog over HTTP: bounded in time and size, conditional when
//! validators are known, and careful about redirects.

use std::cell::Cell;
use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::catalog::Target;
use crate::fetch::diagnosis::{self, Network, Proxy, ProxyOrigin, Timeout};
use crate::fetch::proxy::{self, ProxyEnv, Route};
use crate::fetch::source::{Loaded, redacted};
use crate::fetch::watch::{Reported, Signal, Watch};
use crate::fetch::{credential, tls};
use crate::store::validators::Validators;

/// How to fetch.
#[derive(Debug, Clone)]
pub(crate) struct FetchOptions {
    /// Bound on the whole exchange, from connecting to the last body byte.
    pub timeout: Duration,
    /// Bound on establishing the connection.
    pub connect_timeout: Duration,
    /// Validators to send for a conditional request.
    pub conditional: Validators,
    /// Largest body accepted.
    pub max_body: usize,
    /// Where the body's progress goes, and what ends the fetch early
    /// ([`FetchError::Interrupted`]); by default, neither.
    pub watch: Watch,
    /// Whose document is fetched: the hint for a refused request differs.
    pub document: Target,
    /// A key sent as `Authorization: Bearer KEY` (Hyper's), never shown,
    /// and never again once a redirect has left the URL's origin.
    pub bearer: Option<Bearer>,
}

/// A key sent as `Authorization: Bearer KEY`: shown nowhere, debug output
/// included.
#[derive(Clone, PartialEq, Eq)]
pub struct Bearer(pub String);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(***)")
    }
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            conditional: Validators::default(),
            // After decompression.
            max_body: crate::store::file::MAX_FILE_BYTES,
            watch: Watch::default(),
            document: Target::Catalog,
            bearer: None,
        }
    }
}

/// Why a fetch failed, in the project's own words (`crate::fetch::diagnosis`).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The time allowed ran out, in this phase.
    #[error("{0}")]
    Timeout(Timeout),
    /// No answer came from the network: a name, a connection, a
    /// certificate, a proxy.
    #[error("{}{cause}{}", redirected_to(redirected), last_word(cause, source))]
    Network {
        /// What went wrong.
        cause: Box<Network>,
        /// The HTTP client's error, for `--verbose`; none when the
        /// project's own reading of an answer found the cause.
        #[source]
        source: Option<reqwest::Error>,
        /// Where the last redirect led, when the failure was there, as
        /// shown (a password replaced).
        redirected: Option<String>,
    },
    /// The Hyper key holds a character no HTTP header carries (a line
    /// break, another control character): no request is made, as in Go.
    /// The start-up checks the key it sends, naming where it is set
    /// (`commands::hyper::at_start_up`), so the key found here is the only
    /// one `update-providers` sends, `HYPER_API_KEY`'s.
    #[error(
        "the Hyper key of HYPER_API_KEY holds a line break or another control character, which no HTTP header can carry: no request was sent"
    )]
    UnsendableKey,
    /// The runtime the download runs on could not start (the system
    /// refused a thread or a descriptor): no request was sent.
    #[error("cannot start the network runtime: {0}")]
    Runtime(io::Error),
    /// `SSL_CERT_FILE` names a file that cannot be read, for this.
    #[error("cannot read SSL_CERT_FILE {}: {}", .0.display(), crate::store::file::io_words(.1))]
    CertFileUnreadable(PathBuf, io::Error),
    /// `SSL_CERT_FILE` names a file without a PEM certificate.
    #[error("SSL_CERT_FILE {} holds no PEM certificate", .0.display())]
    CertFileEmpty(PathBuf),
    /// The HTTP client refused its configuration.
    #[error("cannot set up the HTTP client: {0}")]
    Client(reqwest::Error),
    /// An http request with a proxy set, in a CGI script: not sent, as Go
    /// does not send it (golang.org/s/cgihttpproxy).
    #[error(
        "an http request is not sent through HTTP_PROXY in a CGI script (REQUEST_METHOD is set)"
    )]
    RefusedInCgi,
    /// A redirect was refused.
    #[error("redirect refused: {0}")]
    Redirect(Redirect),
    /// The server answered with an error status.
    #[error("{}server answered {status}{}", redirected_to(redirected), body_line.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    Status {
        /// The status.
        status: StatusCode,
        /// The first line of the body, sanitised.
        body_line: Option<String>,
        /// For Hyper's provider, whether the Hyper key was sent; `None`
        /// for the catalog.
        hyper_key_sent: Option<bool>,
        /// Where the last redirect led, when the answer came from there,
        /// as shown.
        redirected: Option<String>,
    },
    /// The body is larger than the cap.
    #[error("the body is larger than the limit of {} MiB", .0 / (1024 * 1024))]
    TooLarge(usize),
    /// The server answered 304 to a request that carried no validator.
    #[error("the server answered 304 Not Modified to a request that had no validator")]
    UnexpectedNotModified,
    /// The caller's cancellation ([`crate::fetch::watch::Cancel`]) ended
    /// the fetch, for this signal.
    #[error("interrupted")]
    Interrupted(Signal),
}

/// Most redirects followed for one request: only to http(s), never from
/// https to anything else, and no credential once a hop has left the
/// first URL's origin (`Client::follow`).
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Why a redirect was not followed. The URLs are as shown: a password
/// replaced by `***`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Redirect {
    /// More than five in a row.
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooMany,
    /// From https to another scheme.
    #[error("from https to {0}, which would drop encryption")]
    DropsEncryption(String),
    /// To something else than an http(s) URL.
    #[error("to {0}, which is not an http(s) URL")]
    NotHttp(String),
    /// A redirect whose `Location` is not a URL.
    #[error("{from} answered {status} with a Location that is not a URL")]
    BadLocation {
        /// The URL that answered.
        from: String,
        /// Its status.
        status: StatusCode,
    },
}

/// Whether to follow a redirect to `next` after requesting `previous`
/// (the original URL first): at most [`MAX_REDIRECTS`], only to http(s),
/// and never from https to anything else.
pub(crate) fn redirect_verdict(previous: &[Url], next: &Url) -> Result<(), Redirect> {
    if previous.len() > MAX_REDIRECTS {
        Err(Redirect::TooMany)
    } else if previous.last().is_some_and(|u| u.scheme() == "https") && next.scheme() != "https" {
        Err(Redirect::DropsEncryption(redacted(next.as_str())))
    } else if !matches!(next.scheme(), "http" | "https") {
        Err(Redirect::NotHttp(redacted(next.as_str())))
    } else {
        Ok(())
    }
}

/// `redirected to URL: ` when a redirect's target failed.
fn redirected_to(redirected: &Option<String>) -> String {
    let to = |url: &String| format!("redirected to {url}: ");
    redirected.as_ref().map(to).unwrap_or_default()
}

/// For a connection that failed or an answer that broke off, which have
/// no cause of their own, the last word of the HTTP stack (the system's,
/// most often), in brackets.
fn last_word(cause: &Network, source: &Option<reqwest::Error>) -> String {
    match (cause, source) {
        (Network::Connect(_) | Network::Broken(_) | Network::NotHttp(_), Some(error)) => {
            let links = diagnosis::chain(error);
            links.last().map(|l| format!(" ({l})")).unwrap_or_default()
        }
        _ => String::new(),
    }
}

impl FetchError {
    /// The one thing that fixes it, for a request for `url`.
    pub fn hint(&self, url: &Url) -> String {
        match self {
            FetchError::Timeout(_) => format!(
                "raise the bound (--timeout, or CRUSH_PROVIDER_TIMEOUT at start-up), or check the network and the proxy ({})",
                proxy::variable_for(url)
            ),
            FetchError::Network { cause, .. } => cause.hint(url),
            FetchError::CertFileUnreadable(..) | FetchError::CertFileEmpty(_) => {
                "point SSL_CERT_FILE at a readable PEM file, or unset it".into()
            }
            FetchError::Runtime(_) => "the system refused what a download needs (open files, memory): close some programs or raise the limit (ulimit -n), and try again".into(),
            FetchError::Client(_) => "try again; if it persists, report it as a bug".into(),
            FetchError::UnsendableKey => "remove it from HYPER_API_KEY".into(),
            FetchError::RefusedInCgi => {
                "use an https:// URL, or unset REQUEST_METHOD outside a CGI script".into()
            }
            FetchError::Status {
                status,
                hyper_key_sent: Some(sent),
                ..
            } if matches!(status.as_u16(), 401 | 403) => match sent {
                true => "Hyper's server refused the Hyper key, which may have expired: run `crush login hyper` again, or check HYPER_API_KEY (`crush providers --status` shows where the key is set)".into(),
                false => "no Hyper key was sent (update-providers sends HYPER_API_KEY and no other, as Crush's does): set HYPER_API_KEY".into(),
            },
            FetchError::Status {
                status,
                hyper_key_sent: Some(_),
                ..
            } if status.is_client_error() => {
                "check the URL: Hyper's server base URL (HYPER_URL), or the exact URL of its provider (…/api/v1/provider, or a .json)".into()
            }
            FetchError::Status { status, .. } if status.is_client_error() => {
                "check the URL: a Catwalk base URL or the exact URL of a catalog .json".into()
            }
            FetchError::Status { .. } => "try again later, or use another source".into(),
            FetchError::Redirect(_) | FetchError::TooLarge(_) => {
                "check that the URL serves a provider catalog".into()
            }
            FetchError::UnexpectedNotModified => {
                "the server is misbehaving; use another source".into()
            }
            FetchError::Interrupted(_) => "nothing was written".into(),
        }
    }

    /// The HTTP stack's own account of the failure, for a bug report.
    pub fn detail(&self) -> Option<String> {
        let FetchError::Network { source, .. } = self else {
            return None;
        };
        let links = diagnosis::chain(source.as_ref()?);
        let links: Vec<String> = links.iter().map(|l| l.to_string()).collect();
        Some(links.join(": "))
    }
}

/// A value that is not a positive number of seconds, below a billion
/// (32 years: a bound no timer takes).
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a positive number of seconds below 1000000000")]
pub(crate) struct NotSeconds(String);

/// Parses a positive number of seconds, fractions allowed, as `--timeout`
/// and `CRUSH_PROVIDER_TIMEOUT` take it.
pub(crate) fn parse_seconds(s: &str) -> Result<Duration, NotSeconds> {
    match s.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() && secs < 1e9 => {
            Ok(Duration::from_secs_f64(secs))
        }
        _ => Err(NotSeconds(s.to_owned())),
    }
}

/// Fetches that share one HTTP client, and so its connections: a catalog's
/// signature goes on the connection that brought the catalog (kept alive),
/// not behind a new name lookup and TLS handshake. The client is set up on
/// the first fetch; a session that fetches nothing costs nothing.
#[derive(Debug, Default)]
pub(crate) struct Session {
    client: OnceLock<Client>,
}

/// How much of a body had come, and of how much when the server said:
/// set once the answer began, for the phase of a timeout.
type BodySoFar = Cell<Option<(u64, Option<u64>)>>;

impl Session {
    /// Fetches `url`, blocking the calling thread (the session runs its own
    /// small runtime): its body decompressed, with the validators the
    /// server sent, or `None` for `304 Not Modified` to a conditional
    /// request. The session's first fetch sets its client up with
    /// `options.connect_timeout`.
    pub(crate) fn fetch(
        &self,
        url: &Url,
        options: &FetchOptions,
    ) -> Result<Option<Loaded>, FetchError> {
        if self.client.get().is_none() {
            let own = credential::carried(url, options.bearer.is_some()).is_some();
            let _ = self.client.set(Client::new(options.connect_timeout, own)?);
        }
        let client = self.client.get().expect("set just above");
        let body = BodySoFar::default();
        client.runtime.block_on(async {
            let bounded = async {
                let fetch = client.fetch(url, options, &body);
                let after = options.timeout;
                let Ok(fetched) = tokio::time::timeout(after, fetch).await else {
                    return Err(FetchError::Timeout(match body.get() {
                        Some((received, total)) => Timeout::Body {
                            after,
                            received,
                            total,
                        },
                        None => Timeout::Answer(after),
                    }));
                };
                fetched
            };
            let Some(cancel) = &options.watch.cancel else {
                return bounded.await;
            };
            // Made and first polled with the fetch, in the same step: a
            // cancellation that listens for signals does so before the
            // request leaves.
            tokio::select! {
                result = bounded => result,
                signal = cancel.cancelled() => Err(FetchError::Interrupted(signal)),
            }
        })
    }
}

/// A session's client: rustls with ring's cryptography ([`tls`]), the
/// proxy each request is routed to by [`proxy::route`] (Go's rules, never
/// the system's settings), gzip, and no redirect followed by the client
/// itself ([`Client::follow`]).
#[derive(Debug)]
struct Client {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    /// The bound on connecting it was built with.
    connect_timeout: Duration,
    /// The proxy variables, read once, as Go reads them once.
    proxies: ProxyEnv,
}

impl Client {
    /// A client whose requests connect within `connect_timeout`; with
    /// `own`, for requests that carry a credential, its proxy and CA are
    /// the user's own environment's, never a `.env` file's
    /// ([`credential`]).
    fn new(connect_timeout: Duration, own: bool) -> Result<Client, FetchError> {
        let runtime = diagnosis::spare_descriptors()
            .and_then(|()| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            })
            .map_err(FetchError::Runtime)?;
        let env = |name: &str| match own {
            true => credential::users_env(name),
            false => crate::environment::var(name),
        };
        let proxies = ProxyEnv::read(env);
        // Trusted besides the system's (on Linux the system's loader reads
        // that file in their place, as OpenSSL does; elsewhere only this
        // adds them, so a corporate CA works everywhere).
        let mut roots = Vec::new();
        if let Some(path) = env("SSL_CERT_FILE").map(PathBuf::from) {
            let pem = std::fs::read(&path)
                .map_err(|e| FetchError::CertFileUnreadable(path.clone(), e))?;
            roots.extend(CertificateDer::pem_slice_iter(&pem).filter_map(Result::ok));
            if roots.is_empty() {
                return Err(FetchError::CertFileEmpty(path));
            }
        }
        let routes = proxies.clone();
        let routed = reqwest::Proxy::custom(move |url| match proxy::route(url, &routes) {
            Route::Proxy(proxy, _) => Some(proxy),
            _ => None,
        });
        let http = reqwest::Client::builder()
            .proxy(routed)
            .tls_backend_preconfigured(tls::config(roots))
            .user_agent(concat!("crush-providers/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(FetchError::Client)?;
        Ok(Client {
            runtime,
            http,
            connect_timeout,
            proxies,
        })
    }

    /// One fetch, telling `body` how far it got.
    async fn fetch(
        &self,
        url: &Url,
        options: &FetchOptions,
        body: &BodySoFar,
    ) -> Result<Option<Loaded>, FetchError> {
        if proxy::route(url, &self.proxies) == Route::RefusedInCgi {
            // Go's net/http refuses the same request (golang.org/s/cgihttpproxy).
            return Err(FetchError::RefusedInCgi);
        }
        let (mut response, chain) = self.follow(url, request_headers(options)?).await?;
        body.set(Some((0, None)));
        let last = chain.last().unwrap_or(url);
        // A same-origin hop keeps the first URL's password: replaced.
        let redirected = (chain.len() > 1).then(|| redacted(last.as_str()));
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return match options.conditional.is_empty() {
                true => Err(FetchError::UnexpectedNotModified),
                false => Ok(None),
            };
        }
        // A 407 to a plain-http request is the proxy's own answer (an
        // https request's would have refused the tunnel).
        if status == StatusCode::PROXY_AUTHENTICATION_REQUIRED
            && let Route::Proxy(proxy, variable) = proxy::route(last, &self.proxies)
        {
            let proxy = ProxyOrigin::new(&proxy, variable);
            let target = diagnosis::target_of(last);
            let cause = Network::Proxy(proxy, Proxy::WantsCredentials, target);
            return Err(FetchError::Network {
                cause: Box::new(cause),
                source: None,
                redirected: None,
            });
        }
        if !status.is_success() {
            // Once a redirect left the first origin, the key went no more.
            let sent = options.bearer.is_some() && chain.iter().all(|u| u.origin() == url.origin());
            return Err(FetchError::Status {
                status,
                body_line: first_line(&mut response).await,
                hyper_key_sent: (options.document == Target::Hyper).then_some(sent),
                redirected,
            });
        }
        let validators = Validators {
            etag: header_string(response.headers(), header::ETAG),
            last_modified: header_string(response.headers(), header::LAST_MODIFIED),
        };
        // Content-Length describes the encoded body; only trust it as a
        // hint when the body is not compressed.
        let encoded = response.headers().contains_key(header::CONTENT_ENCODING);
        let declared = response.content_length().filter(|_| !encoded);
        let max_body = options.max_body;
        if declared.is_some_and(|len| len > max_body as u64) {
            return Err(FetchError::TooLarge(max_body));
        }
        let reporter = options.watch.reporter.as_deref();
        // Told of the end when dropped, on every way out.
        let reported = reporter.map(|r| {
            r.on_download_start(declared);
            Reported(r)
        });
        let mut bytes = Vec::with_capacity(declared.map_or(64 * 1024, |n| n as usize));
        loop {
            body.set(Some((bytes.len() as u64, declared)));
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => {
                    let bytes = bytes.into();
                    return Ok(Some(Loaded { bytes, validators }));
                }
                Err(e) => return Err(self.failure(e, last, redirected.is_some(), Some(&bytes))),
            };
            if bytes.len() + chunk.len() > max_body {
                return Err(FetchError::TooLarge(max_body));
            }
            bytes.extend_from_slice(&chunk);
            if let Some(reported) = &reported {
                reported.0.on_download_progress(bytes.len() as u64);
            }
        }
    }

    /// Sends the GET of `url` with `headers`, following redirects by hand
    /// ([`redirect_verdict`]): the last answer, and the URLs asked, the
    /// first one first. Once a hop has left the first URL's origin, no
    /// later hop carries a credential: no `Authorization` (the Hyper key)
    /// and no user and password of a URL (which the client sends as
    /// `Authorization: Basic`). The client's own policy compared each hop
    /// with the one before only and started each from the first request's
    /// headers, so a second hop within the new host got the key back, as
    /// Go's client did before CVE-2024-45336's fix (Crush is built with a
    /// Go that has it).
    async fn follow(
        &self,
        url: &Url,
        mut headers: HeaderMap,
    ) -> Result<(reqwest::Response, Vec<Url>), FetchError> {
        let mut chain = vec![url.clone()];
        let mut left = false;
        loop {
            let current = chain.last().expect("the first URL is there");
            let response = self
                .http
                .get(current.clone())
                .headers(headers.clone())
                .send()
                .await
                .map_err(|e| self.failure(e, current, chain.len() > 1, None))?;
            let status = response.status();
            let location = response.headers().get(header::LOCATION);
            let redirects = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
            let (true, Some(location)) = (redirects, location) else {
                return Ok((response, chain));
            };
            let mut next = location
                .to_str()
                .ok()
                .and_then(|l| current.join(l).ok())
                .ok_or_else(|| {
                    let from = redacted(current.as_str());
                    FetchError::Redirect(Redirect::BadLocation { from, status })
                })?;
            redirect_verdict(&chain, &next).map_err(FetchError::Redirect)?;
            left |= next.origin() != url.origin();
            if left {
                headers.remove(header::AUTHORIZATION);
                let _ = next.set_username("");
                let _ = next.set_password(None);
            }
            chain.push(next);
        }
    }

    /// The failure for the client's `error` on a request for `url` (a
    /// redirect's target when `redirected`), `received` the body so far
    /// when it broke off.
    fn failure(
        &self,
        error: reqwest::Error,
        url: &Url,
        redirected: bool,
        received: Option<&[u8]>,
    ) -> FetchError {
        if error.is_connect() && error.is_timeout() {
            return FetchError::Timeout(Timeout::Connect(self.connect_timeout));
        }
        let received = received.map(|bytes| bytes.len() as u64);
        let how = (error.is_connect(), error.is_dns(), received);
        let route = proxy::route(url, &self.proxies);
        let cause = diagnosis::cause(&diagnosis::chain(&error), url, &route, how);
        FetchError::Network {
            cause: Box::new(cause),
            source: Some(error),
            redirected: redirected.then(|| redacted(url.as_str())),
        }
    }
}

/// The request's headers: JSON wanted, the validators of a conditional
/// request, the bearer key.
fn request_headers(options: &FetchOptions) -> Result<HeaderMap, FetchError> {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    let conditional = &options.conditional;
    for (name, value) in [
        (header::IF_NONE_MATCH, &conditional.etag),
        (header::IF_MODIFIED_SINCE, &conditional.last_modified),
    ] {
        if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(name, value);
        }
    }
    if let Some(Bearer(key)) = &options.bearer {
        // Go refuses to send such a header too: the request fails.
        let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| FetchError::UnsendableKey)?;
        value.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, value);
    }
    Ok(headers)
}

fn header_string(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .filter(|v| !v.is_empty())
}

/// Reads at most a few KiB of an error body and keeps its first line, so the
/// user sees the server's own words without a flood.
async fn first_line(response: &mut reqwest::Response) -> Option<String> {
    const LIMIT: usize = 4096;
    let mut head = Vec::new();
    while head.len() < LIMIT
        && let Ok(Some(chunk)) = response.chunk().await
    {
        head.extend_from_slice(&chunk[..chunk.len().min(LIMIT - head.len())]);
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    // A server's error page says nothing a person can use here.
    if line.starts_with('<') {
        return None;
    }
    Some(line.chars().filter(|c| !c.is_control()).take(200).collect())
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| u.parse().unwrap()).collect()
    }

    #[test]
    fn seconds_are_positive_finite_and_below_a_billion() {
        assert_eq!(parse_seconds(" 1.5 ").unwrap(), Duration::from_millis(1500));
        for bad in ["0", "-1", "NaN", "inf", "1e9", "99999999999999999999", "x"] {
            let e = parse_seconds(bad).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("{bad:?} is not a positive number of seconds below 1000000000")
            );
        }
    }

    #[test]
    fn redirects_never_leave_https_and_stop_after_five() {
        let next = |u: &str| u.parse::<Url>().unwrap();
        assert!(redirect_verdict(&urls(&["http://a/"]), &next("https://b/")).is_ok());
        assert!(redirect_verdict(&urls(&["https://a/"]), &next("https://b/")).is_ok());
        let err = redirect_verdict(&urls(&["https://a/"]), &next("http://b/")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "from https to http://b/, which would drop encryption"
        );
        assert!(redirect_verdict(&urls(&["http://a/", "https://b/"]), &next("http://c/")).is_err());
        assert_eq!(
            redirect_verdict(&urls(&["http://a/"]), &next("file:///etc/passwd"))
                .unwrap_err()
                .to_string(),
            "to file:///etc/passwd, which is not an http(s) URL"
        );
        let five = urls(&[
            "http://a/0",
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/4",
        ]);
        assert!(redirect_verdict(&five, &next("http://a/5")).is_ok());
        let six = urls(&[
            "http://a/0",
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/4",
            "http://a/5",
        ]);
        assert_eq!(
            redirect_verdict(&six, &next("http://a/6"))
                .unwrap_err()
                .to_string(),
            "more than 5 redirects"
        );
    }

    /// A server on loopback that answers one request with `head` and
    /// `body`, then keeps the connection open until the client goes.
    fn serve_once(head: &'static str, body: Vec<u8>) -> Url {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v2/providers", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut byte = [0; 1];
            while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                request.push(byte[0]);
            }
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            // Until the client hangs up.
            let _ = stream.read(&mut [0; 1]);
        });
        url.parse().unwrap()
    }

    /// What a reporter was told, in order.
    #[derive(Default)]
    struct Told {
        events: std::sync::Mutex<Vec<String>>,
        /// Woken at the first bytes: a cancellation waiting for them.
        waker: std::sync::Mutex<Option<std::task::Waker>>,
    }

    impl Told {
        fn events(&self) -> Vec<String> {
            self.events.lock().unwrap().clone()
        }
    }

    impl crate::fetch::watch::Reporter for Told {
        fn on_download_start(&self, total: Option<u64>) {
            self.events.lock().unwrap().push(format!("start {total:?}"));
        }
        fn on_download_progress(&self, received: u64) {
            self.events.lock().unwrap().push(format!("{received}"));
            if let Some(waker) = self.waker.lock().unwrap().take() {
                waker.wake();
            }
        }
        fn on_download_end(&self) {
            self.events.lock().unwrap().push("end".into());
        }
    }

    #[test]
    fn the_reporter_is_told_the_body_from_start_to_end() {
        let body = vec![b' '; 100_000];
        let url = serve_once("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", body);
        let told = Arc::new(Told::default());
        let options = FetchOptions {
            watch: Watch {
                reporter: Some(told.clone()),
                cancel: None,
            },
            ..FetchOptions::default()
        };
        let loaded = Session::default().fetch(&url, &options).unwrap();
        assert_eq!(loaded.expect("a body").bytes.len(), 100_000);
        let events = told.events();
        assert_eq!(
            events.first().map(String::as_str),
            Some("start Some(100000)")
        );
        assert_eq!(events[events.len() - 2..], ["100000", "end"], "{events:?}");
    }

    #[test]
    fn a_cancellation_ends_the_fetch_with_its_signal_and_the_report() {
        // Half a body, then nothing: only the cancellation ends it.
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n",
            vec![b' '; 1000],
        );
        let told = Arc::new(Told::default());
        let seen = told.clone();
        // Cancelled once the first bytes were told.
        let cancel = crate::fetch::watch::Cancel::new(move || {
            let seen = seen.clone();
            std::future::poll_fn(move |cx| {
                if seen.events().len() > 1 {
                    return std::task::Poll::Ready(Signal::Terminate);
                }
                *seen.waker.lock().unwrap() = Some(cx.waker().clone());
                std::task::Poll::Pending
            })
        });
        let options = FetchOptions {
            watch: Watch {
                reporter: Some(told.clone()),
                cancel: Some(cancel),
            },
            ..FetchOptions::default()
        };
        let result = Session::default().fetch(&url, &options);
        assert!(
            matches!(result, Err(FetchError::Interrupted(Signal::Terminate))),
            "{result:?}"
        );
        let events = told.events();
        assert_eq!(
            events.first().map(String::as_str),
            Some("start Some(1000000)")
        );
        assert_eq!(events.last().map(String::as_str), Some("end"), "{events:?}");
    }
}
