//! Fetching a catalog over HTTP: bounded in time and size, conditional when
//! validators are known, and careful about redirects.

use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::fetch::classify;
use crate::fetch::credential;
use crate::fetch::diagnosis::{self, Network, Setup, Timeout};
use crate::fetch::proxy::{self, ProxyEnv, Route};
use crate::fetch::redirect::{self, Redirect};

use crate::fetch::tls;
use crate::fetch::watch::{Reported, Signal, Watch};
use crate::store::validators::Validators;

/// Largest body accepted, after decompression.
pub(crate) const MAX_BODY_BYTES: usize = crate::store::file::MAX_FILE_BYTES;

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
    pub document: crate::catalog::Target,
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
            max_body: MAX_BODY_BYTES,
            watch: Watch::default(),
            document: crate::catalog::Target::Catalog,
            bearer: None,
        }
    }
}

/// What the server answered.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// `304 Not Modified`: what the client has is current.
    NotModified,
    /// A 2xx answer with its body.
    Body {
        /// The body, decompressed.
        bytes: Vec<u8>,
        /// Validators the server sent with it.
        validators: Validators,
    },
}

/// Why a fetch failed, in the project's own words (`crate::fetch::diagnosis`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The time allowed ran out, in this phase.
    #[error("{0}")]
    Timeout(Timeout),
    /// No answer came from the network: a name, a connection, a
    /// certificate, a proxy.
    #[error("{}{cause}", redirected.as_deref().map(|to| format!("redirected to {to}: ")).unwrap_or_default())]
    Network {
        /// What went wrong.
        cause: Box<Network>,
        /// The HTTP stack's own messages, for `--verbose`.
        chain: String,
        /// Where the last redirect led, when the failure was there.
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
    /// The client could not be set up (an unreadable `SSL_CERT_FILE`).
    #[error("{0}")]
    Setup(Setup),
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
    #[error("{}server answered {status}{}", redirected.as_deref().map(|to| format!("redirected to {to}: ")).unwrap_or_default(), body_line.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    Status {
        /// The status.
        status: StatusCode,
        /// The first line of the body, sanitised.
        body_line: Option<String>,
        /// For Hyper's provider, whether the Hyper key was sent; `None`
        /// for the catalog.
        hyper_key_sent: Option<bool>,
        /// Where the last redirect led, when the answer came from there.
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

impl FetchError {
    /// The one thing that fixes it, for a request for `url`.
    pub fn hint(&self, url: &Url) -> String {
        match self {
            FetchError::Timeout(_) => format!(
                "raise the bound (--timeout, or CRUSH_PROVIDER_TIMEOUT at start-up), or check the network and the proxy ({})",
                super::proxy::variable_for(url)
            ),
            FetchError::Network { cause, .. } => cause.hint(url),
            FetchError::Setup(setup) => setup.hint().into(),
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

    /// The one thing that fixes it when an automatic refresh failed: as
    /// [`FetchError::hint`], but the bound of a refresh is
    /// `CRUSH_PROVIDER_TIMEOUT`, the only one a start-up takes.
    pub fn refresh_hint(&self, url: &Url) -> String {
        match self {
            FetchError::Timeout(timeout) => format!(
                "raise the bound above {} with CRUSH_PROVIDER_TIMEOUT (seconds), or check the network and the proxy ({})",
                diagnosis::seconds(timeout.after()),
                super::proxy::variable_for(url)
            ),
            other => other.hint(url),
        }
    }

    /// The HTTP stack's own account of the failure, for a bug report.
    pub fn detail(&self) -> Option<&str> {
        match self {
            FetchError::Network { chain, .. } => Some(chain),
            _ => None,
        }
    }
}

/// Parses a positive number of seconds, fractions allowed, as `--timeout`
/// and `CRUSH_PROVIDER_TIMEOUT` take it.
pub(crate) fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() && secs < 1e9 => {
            Ok(Duration::from_secs_f64(secs))
        }
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// How far a fetch got, for telling a timeout's phase and what a broken
/// answer had brought.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// A connection (TCP, the proxy's tunnel, TLS) was established.
    pub(crate) connected: AtomicBool,
    /// The answer's head arrived.
    answered: AtomicBool,
    /// Body bytes received.
    pub(crate) received: AtomicU64,
    /// Body bytes the server said it would send; [`u64::MAX`] when it did
    /// not say.
    total: AtomicU64,
}

/// Fetches that share one HTTP client, and so its connections: a catalog's
/// signature goes on the connection that brought the catalog (kept alive),
/// not behind a new name lookup and TLS handshake. The client is set up on
/// the first fetch; a session that fetches nothing costs nothing.
#[derive(Default)]
pub(crate) struct Session {
    client: std::sync::OnceLock<Client>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Session")
    }
}

/// A session's client, and what its fetches learn.
struct Client {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    /// The bound on connecting it was built with.
    connect_timeout: Duration,
    progress: Arc<Progress>,
    /// The URLs the current fetch was redirected to, in order.
    redirects: Arc<std::sync::Mutex<Vec<Url>>>,
    /// The proxy variables, read once, as Go reads them once.
    proxies: ProxyEnv,
}

impl Session {
    /// Fetches `url`, blocking the calling thread (the session runs its own
    /// small runtime). The session's first fetch sets its client up with
    /// `options.connect_timeout`.
    pub(crate) fn fetch(&self, url: &Url, options: &FetchOptions) -> Result<Fetched, FetchError> {
        if self.client.get().is_none() {
            let own = credential::carried(url, options.bearer.is_some()).is_some();
            let _ = self.client.set(Client::new(options.connect_timeout, own)?);
        }
        let client = self.client.get().expect("set just above");
        client.fetch(url, options)
    }
}

impl Client {
    /// A client whose requests connect within `connect_timeout`; with
    /// `own`, for requests that carry a credential, its proxy and CA are
    /// the user's own environment's, never a `.env` file's
    /// ([`credential`]).
    fn new(connect_timeout: Duration, own: bool) -> Result<Client, FetchError> {
        diagnosis::spare_descriptors()
            .map_err(|e| FetchError::Setup(Setup::Runtime(e.to_string())))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FetchError::Setup(Setup::Runtime(e.to_string())))?;
        let progress = Arc::new(Progress::default());
        let redirects = Arc::new(std::sync::Mutex::new(Vec::new()));
        let env = |name: &str| match own {
            true => credential::users_env(name),
            false => crate::environment::var(name),
        };
        let proxies = ProxyEnv::read(|name| env(name).map(|v| v.to_string_lossy().into_owned()));
        let roots = tls::extra_roots(env).map_err(FetchError::Setup)?;
        let http = http_client(connect_timeout, &progress, &proxies, roots)?;
        Ok(Client {
            runtime,
            http,
            connect_timeout,
            progress,
            redirects,
            proxies,
        })
    }

    fn fetch(&self, url: &Url, options: &FetchOptions) -> Result<Fetched, FetchError> {
        // What one fetch learnt is not the next one's; a connection made
        // for an earlier fetch of this session is still there.
        self.progress.answered.store(false, Ordering::Relaxed);
        self.progress.received.store(0, Ordering::Relaxed);
        self.progress.total.store(u64::MAX, Ordering::Relaxed);
        self.redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let on = Attempt {
            url,
            options,
            connect_timeout: self.connect_timeout,
            progress: &self.progress,
            redirects: &self.redirects,
            proxies: &self.proxies,
        };
        self.runtime.block_on(async {
            let bounded = async {
                match tokio::time::timeout(options.timeout, fetch_async(&self.http, &on)).await {
                    Ok(result) => result,
                    Err(_) => Err(FetchError::Timeout(timeout_phase(
                        &self.progress,
                        options.timeout,
                    ))),
                }
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

/// The phase a timeout of `after` struck in.
fn timeout_phase(progress: &Progress, after: Duration) -> Timeout {
    if progress.answered.load(Ordering::Relaxed) {
        Timeout::Body {
            after,
            received: progress.received.load(Ordering::Relaxed),
            total: Some(progress.total.load(Ordering::Relaxed)).filter(|&t| t != u64::MAX),
        }
    } else if progress.connected.load(Ordering::Relaxed) {
        Timeout::Answer(after)
    } else {
        Timeout::Connect(after)
    }
}

/// What one fetch works with.
pub(crate) struct Attempt<'a> {
    pub(crate) url: &'a Url,
    pub(crate) options: &'a FetchOptions,
    pub(crate) connect_timeout: Duration,
    pub(crate) progress: &'a Arc<Progress>,
    pub(crate) redirects: &'a std::sync::Mutex<Vec<Url>>,
    /// The proxy variables the client routes by.
    pub(crate) proxies: &'a ProxyEnv,
}

/// The HTTP client: rustls with ring's cryptography (which takes its
/// randomness from the operating system: aws-lc seeds its own generator
/// with CPU jitter, tens of milliseconds of CPU in every process that
/// makes a connection; docs/BENCHMARKS.md), the system's trust store
/// (with `roots`) loaded only for a first certificate to verify, the
/// proxy each request
/// is routed to by [`proxy::route`] (Go's rules, never the system's
/// settings), gzip, and no redirect followed by the client itself
/// ([`crate::fetch::redirect`]).
fn http_client(
    connect_timeout: Duration,
    progress: &Arc<Progress>,
    proxies: &ProxyEnv,
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<reqwest::Client, FetchError> {
    let proxies = proxies.clone();
    let routed = reqwest::Proxy::custom(move |url| match proxy::route(url, &proxies) {
        Route::Proxy(proxy, _) => Some(proxy),
        _ => None,
    });
    reqwest::Client::builder()
        .proxy(routed)
        .tls_backend_preconfigured(tls::config(roots))
        .user_agent(concat!("crush-providers/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
        .connector_layer(MarkConnected(Arc::clone(progress)))
        // Redirects are followed by hand (`redirect::follow`).
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| FetchError::Setup(Setup::Client(e.to_string())))
}

/// A layer over the client's connector that marks when a connection (TCP,
/// a proxy's tunnel, TLS) is established: the line between "could not
/// connect" and "no answer".
#[derive(Clone)]
struct MarkConnected(Arc<Progress>);

impl<S> tower::Layer<S> for MarkConnected {
    type Service = Marked<S>;

    fn layer(&self, inner: S) -> Marked<S> {
        Marked {
            inner,
            progress: Arc::clone(&self.0),
        }
    }
}

#[derive(Clone)]
struct Marked<S> {
    inner: S,
    progress: Arc<Progress>,
}

impl<S, R> tower::Service<R> for Marked<S>
where
    S: tower::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let connecting = self.inner.call(request);
        let progress = Arc::clone(&self.progress);
        Box::pin(async move {
            let connection = connecting.await?;
            progress.connected.store(true, Ordering::Relaxed);
            Ok(connection)
        })
    }
}

/// One fetch on `client`.
async fn fetch_async(client: &reqwest::Client, on: &Attempt<'_>) -> Result<Fetched, FetchError> {
    if proxy::route(on.url, on.proxies) == Route::RefusedInCgi {
        // Go's net/http refuses the same request (golang.org/s/cgihttpproxy).
        return Err(FetchError::RefusedInCgi);
    }
    let headers = request_headers(on.options)?;
    let mut response = redirect::follow(client, on, headers).await?;
    on.progress.answered.store(true, Ordering::Relaxed);
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED {
        return if on.options.conditional.is_empty() {
            Err(FetchError::UnexpectedNotModified)
        } else {
            Ok(Fetched::NotModified)
        };
    }
    if let Some(proxy) = classify::proxy_answered(on, status) {
        return Err(proxy);
    }
    if !status.is_success() {
        let body_line = first_line(&mut response).await;
        return Err(classify::refused(on, status, body_line));
    }
    let validators = Validators {
        etag: header_string(response.headers(), header::ETAG),
        last_modified: header_string(response.headers(), header::LAST_MODIFIED),
    };
    let bytes = read_body(response, on).await?;
    Ok(Fetched::Body { bytes, validators })
}

/// The request's headers: JSON wanted, the validators of a conditional
/// request, the bearer key.
fn request_headers(options: &FetchOptions) -> Result<HeaderMap, FetchError> {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    if let Some(etag) = options
        .conditional
        .etag
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        headers.insert(header::IF_NONE_MATCH, etag);
    }
    if let Some(date) = options
        .conditional
        .last_modified
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        headers.insert(header::IF_MODIFIED_SINCE, date);
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

/// A 2xx answer's body, at most `max_body` bytes, its progress told to the
/// watch's reporter.
async fn read_body(
    mut response: reqwest::Response,
    on: &Attempt<'_>,
) -> Result<Vec<u8>, FetchError> {
    let max_body = on.options.max_body;
    // Content-Length describes the encoded body; only trust it as a hint
    // when the body is not compressed.
    let encoded = response.headers().contains_key(header::CONTENT_ENCODING);
    let declared = response.content_length().filter(|_| !encoded);
    if let Some(len) = declared
        && len > max_body as u64
    {
        return Err(FetchError::TooLarge(max_body));
    }
    if let Some(total) = declared {
        on.progress.total.store(total, Ordering::Relaxed);
    }
    let reported = on
        .options
        .watch
        .reporter
        .as_deref()
        .map(|r| Reported::start(r, declared));
    let mut bytes = Vec::with_capacity(declared.map_or(64 * 1024, |n| n as usize));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| classify::failure(on, e))?
    {
        if bytes.len() + chunk.len() > max_body {
            return Err(FetchError::TooLarge(max_body));
        }
        bytes.extend_from_slice(&chunk);
        on.progress
            .received
            .store(bytes.len() as u64, Ordering::Relaxed);
        if let Some(reported) = &reported {
            reported.progress(bytes.len() as u64);
        }
    }
    Ok(bytes)
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
    while head.len() < LIMIT {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                head.extend_from_slice(&chunk[..chunk.len().min(LIMIT - head.len())])
            }
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    // A server's error page says nothing a person can use here.
    if line.starts_with('<') {
        return None;
    }
    let clean: String = line.chars().filter(|c| !c.is_control()).take(200).collect();
    Some(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let Fetched::Body { bytes, .. } = Session::default().fetch(&url, &options).unwrap() else {
            panic!("a body")
        };
        assert_eq!(bytes.len(), 100_000);
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
