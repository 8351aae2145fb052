//! Fetching a catalog over HTTP: bounded in time and size, conditional when
//! validators are known, and careful about redirects.

use std::io::IsTerminal;
use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url, redirect};

use crate::fetch::diagnosis::{self, Diagnosis, Network, Timeout};
use crate::fetch::proxy::{self, ProxyEnv, Route};

use crate::fetch::tls;
use crate::store::validators::Validators;

/// Largest body accepted, after decompression.
pub const MAX_BODY_BYTES: usize = crate::store::file::MAX_FILE_BYTES;

/// Most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 5;

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Bound on the whole exchange, from connecting to the last body byte.
    pub timeout: Duration,
    /// Bound on establishing the connection.
    pub connect_timeout: Duration,
    /// Validators to send for a conditional request.
    pub conditional: Validators,
    /// Show a progress bar on stderr (only drawn when it is a terminal).
    pub progress: bool,
    /// Largest body accepted.
    pub max_body: usize,
    /// Whether Ctrl-C or SIGTERM ends the fetch ([`FetchError::Interrupted`]).
    /// Once asked for, those signals no longer end the process by
    /// themselves for as long as it runs: only the command line, which
    /// exits soon after, asks.
    pub interruptible: bool,
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
            progress: false,
            max_body: MAX_BODY_BYTES,
            interruptible: false,
            document: crate::catalog::Target::Catalog,
            bearer: None,
        }
    }
}

/// What the server answered.
#[derive(Debug)]
pub enum Fetched {
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

/// Why a fetch failed, in the project's own words ([`crate::fetch::diagnosis`]).
#[derive(Debug, thiserror::Error)]
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
    Setup(String),
    /// An http request with a proxy set, in a CGI script: not sent, as Go
    /// does not send it (golang.org/s/cgihttpproxy).
    #[error(
        "an http request is not sent through HTTP_PROXY in a CGI script (REQUEST_METHOD is set)"
    )]
    RefusedInCgi,
    /// A redirect was refused.
    #[error("redirect refused: {0}")]
    Redirect(String),
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
    /// Ctrl-C or SIGTERM ended the fetch; the exit code that says so (130
    /// or 143).
    #[error("interrupted")]
    Interrupted(u8),
}

impl FetchError {
    /// The one thing that fixes it.
    pub fn hint(&self) -> String {
        match self {
            FetchError::Timeout(_) => "raise the bound (--timeout, or CRUSH_PROVIDER_TIMEOUT at start-up), or check the network and the proxy (HTTPS_PROXY)".into(),
            FetchError::Network { cause, .. } => cause.hint(),
            FetchError::Setup(_) => "point SSL_CERT_FILE at a readable PEM file, or unset it".into(),
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
    pub fn refresh_hint(&self) -> String {
        match self {
            FetchError::Timeout(timeout) => format!(
                "raise the bound above {} with CRUSH_PROVIDER_TIMEOUT (seconds), or check the network and the proxy (HTTPS_PROXY)",
                diagnosis::seconds(timeout.after())
            ),
            other => other.hint(),
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
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
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
struct Progress {
    /// A connection (TCP, the proxy's tunnel, TLS) was established.
    connected: AtomicBool,
    /// The answer's head arrived.
    answered: AtomicBool,
    /// Body bytes received.
    received: AtomicU64,
    /// Body bytes the server said it would send; [`u64::MAX`] when it did
    /// not say.
    total: AtomicU64,
}

/// Fetches `url` on a session of its own ([`Session`]).
pub fn fetch(url: &Url, options: &FetchOptions) -> Result<Fetched, FetchError> {
    Session::default().fetch(url, options)
}

/// Fetches that share one HTTP client, and so its connections: a catalog's
/// signature goes on the connection that brought the catalog (kept alive),
/// not behind a new name lookup and TLS handshake. The client is set up on
/// the first fetch; a session that fetches nothing costs nothing.
#[derive(Default)]
pub struct Session {
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
    pub fn fetch(&self, url: &Url, options: &FetchOptions) -> Result<Fetched, FetchError> {
        if self.client.get().is_none() {
            let _ = self.client.set(Client::new(options.connect_timeout)?);
        }
        let client = self.client.get().expect("set just above");
        client.fetch(url, options)
    }
}

impl Client {
    fn new(connect_timeout: Duration) -> Result<Client, FetchError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FetchError::Setup(format!("cannot start the network runtime: {e}")))?;
        let progress = Arc::new(Progress::default());
        let redirects = Arc::new(std::sync::Mutex::new(Vec::new()));
        let proxies = ProxyEnv::current();
        let http = http_client(connect_timeout, &progress, &proxies)?;
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
            if !options.interruptible {
                return bounded.await;
            }
            tokio::select! {
                result = bounded => result,
                code = interrupted() => Err(FetchError::Interrupted(code)),
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
struct Attempt<'a> {
    url: &'a Url,
    options: &'a FetchOptions,
    connect_timeout: Duration,
    progress: &'a Arc<Progress>,
    redirects: &'a std::sync::Mutex<Vec<Url>>,
    /// The proxy variables the client routes by.
    proxies: &'a ProxyEnv,
}

impl Attempt<'_> {
    /// A 407 to a plain-http request is the proxy's own answer (an https
    /// request's would have refused the tunnel): it wants credentials.
    fn proxy_answered(&self, status: StatusCode) -> Option<FetchError> {
        if status != StatusCode::PROXY_AUTHENTICATION_REQUIRED {
            return None;
        }
        let url = self
            .redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .cloned()
            .unwrap_or_else(|| self.url.clone());
        let Route::Proxy(proxy, variable) = proxy::route(&url, self.proxies) else {
            return None;
        };
        Some(FetchError::Network {
            cause: Box::new(Network::Proxy {
                proxy: diagnosis::ProxyOrigin::new(&proxy, variable),
                problem: diagnosis::Proxy::WantsCredentials,
                target: format!(
                    "{}:{}",
                    url.host_str().unwrap_or_default(),
                    url.port_or_known_default().unwrap_or_default()
                ),
            }),
            chain: format!("{status}"),
            redirected: None,
        })
    }

    /// The error for an answer with status `status` (not a success) and
    /// the first line of its body: where a redirect led, and, for Hyper's
    /// provider, whether the key went there (once a redirect left the
    /// first origin, none did).
    fn refused(&self, status: StatusCode, body_line: Option<String>) -> FetchError {
        let hops = self
            .redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let sent =
            self.options.bearer.is_some() && hops.iter().all(|to| to.origin() == self.url.origin());
        FetchError::Status {
            status,
            body_line,
            hyper_key_sent: (self.options.document == crate::catalog::Target::Hyper)
                .then_some(sent),
            redirected: hops.last().map(Url::to_string),
        }
    }

    /// The project's cause for an error of the HTTP client.
    fn classify(&self, e: reqwest::Error) -> FetchError {
        // A redirect's target that fails is that target's failure.
        let redirected = self
            .redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .cloned();
        let url = redirected.as_ref().unwrap_or(self.url);
        let (proxy, proxied) = diagnosis::proxy_for(url, self.proxies);
        let context = diagnosis::Context {
            url,
            proxy: proxy.as_ref(),
            proxied,
            connected: self.progress.connected.load(Ordering::Relaxed),
            received: self.progress.received.load(Ordering::Relaxed),
        };
        let Diagnosis { cause, chain } = diagnosis::diagnose(&e, context);
        let target = format!(
            "{}:{}",
            url.host_str().unwrap_or_default(),
            url.port_or_known_default().unwrap_or_default()
        );
        let cause = match cause {
            diagnosis::Cause::Network(cause) => cause,
            diagnosis::Cause::ConnectTimeout => {
                return FetchError::Timeout(Timeout::Connect(self.connect_timeout));
            }
            // The client keeps no status of its own: ask the proxy once more,
            // briefly, what it answers.
            diagnosis::Cause::TunnelRefused(proxy) => {
                let status = diagnosis::ask_proxy(&proxy, &target, Duration::from_secs(2));
                Network::Proxy {
                    proxy,
                    problem: diagnosis::Proxy::RefusedTunnel(status),
                    target,
                }
            }
        };
        FetchError::Network {
            cause: Box::new(cause),
            chain,
            redirected: redirected.map(|u| u.to_string()),
        }
    }
}

/// Waits for Ctrl-C (exit code 130) or SIGTERM (143).
async fn interrupted() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            return tokio::select! {
                _ = int.recv() => 130,
                _ = term.recv() => 143,
            };
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_ok() {
        return 130;
    }
    // No way to listen: the signals keep their default effect.
    std::future::pending().await
}

/// The HTTP client: rustls with ring's cryptography (which takes its
/// randomness from the operating system: aws-lc seeds its own generator
/// with CPU jitter, tens of milliseconds of CPU in every process that
/// makes a connection; docs/BENCHMARKS.md), the system's trust store
/// loaded only for a first certificate to verify, the proxy each request
/// is routed to by [`proxy::route`] (Go's rules, never the system's
/// settings), gzip, and no redirect followed by the client itself.
fn http_client(
    connect_timeout: Duration,
    progress: &Arc<Progress>,
    proxies: &ProxyEnv,
) -> Result<reqwest::Client, FetchError> {
    let proxies = proxies.clone();
    let routed = reqwest::Proxy::custom(move |url| match proxy::route(url, &proxies) {
        Route::Proxy(proxy, _) => Some(proxy),
        _ => None,
    });
    reqwest::Client::builder()
        .proxy(routed)
        .tls_backend_preconfigured(tls::config(extra_roots()?))
        .user_agent(concat!("crush-providers/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
        .connector_layer(MarkConnected(Arc::clone(progress)))
        // Redirects are followed by hand ([`follow`]).
        .redirect(redirect::Policy::none())
        .build()
        .map_err(|e| FetchError::Setup(format!("cannot set up the HTTP client: {e}")))
}

/// The certificates of `SSL_CERT_FILE`, trusted besides the system's (on
/// Linux the system's loader reads that file in their place, as OpenSSL
/// does; elsewhere only this adds them, so a corporate CA works
/// everywhere).
fn extra_roots() -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, FetchError> {
    use rustls::pki_types::pem::PemObject;
    let Some(path) = crate::environment::var("SSL_CERT_FILE") else {
        return Ok(Vec::new());
    };
    let shown = path.to_string_lossy();
    let pem = std::fs::read(&path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "there is no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            std::io::ErrorKind::IsADirectory => "it is a folder".to_string(),
            kind => kind.to_string(),
        };
        FetchError::Setup(format!("cannot read SSL_CERT_FILE {shown}: {why}"))
    })?;
    let certs: Vec<_> = rustls::pki_types::CertificateDer::pem_slice_iter(&pem)
        .filter_map(Result::ok)
        .collect();
    if certs.is_empty() {
        return Err(FetchError::Setup(format!(
            "SSL_CERT_FILE {shown} holds no PEM certificate"
        )));
    }
    Ok(certs)
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

/// Whether to follow a redirect to `next` after requesting `previous`
/// (the original URL first): at most [`MAX_REDIRECTS`], only to http(s),
/// and never from https to anything else.
pub fn redirect_verdict(previous: &[Url], next: &Url) -> Result<(), String> {
    if previous.len() > MAX_REDIRECTS {
        Err(format!("more than {MAX_REDIRECTS} redirects"))
    } else if previous.last().is_some_and(|u| u.scheme() == "https") && next.scheme() != "https" {
        Err(format!("from https to {next}, which would drop encryption"))
    } else if !matches!(next.scheme(), "http" | "https") {
        Err(format!("to {next}, which is not an http(s) URL"))
    } else {
        Ok(())
    }
}

/// Sends the GET of `on` with `headers`, following redirects by hand
/// ([`redirect_verdict`]), and returns the last answer. Once a hop has
/// left the first URL's origin, no later hop carries a credential: no
/// `Authorization` (the Hyper key) and no user and password of a URL
/// (which the client sends as `Authorization: Basic`). The client's own
/// policy compared each hop with the one before only and started each
/// from the first request's headers, so a second hop within the new host
/// got the key back, as Go's client did before CVE-2024-45336's fix
/// (Crush is built with a Go that has it).
async fn follow(
    client: &reqwest::Client,
    on: &Attempt<'_>,
    mut headers: HeaderMap,
) -> Result<reqwest::Response, FetchError> {
    let mut chain = vec![on.url.clone()];
    let mut left = false;
    loop {
        let current = chain.last().expect("the first URL is there");
        let response = client
            .get(current.clone())
            .headers(headers.clone())
            .send()
            .await
            .map_err(|e| on.classify(e))?;
        let status = response.status();
        let location = response.headers().get(header::LOCATION);
        let redirects = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
        let (true, Some(location)) = (redirects, location) else {
            return Ok(response);
        };
        let mut next = location
            .to_str()
            .ok()
            .and_then(|l| current.join(l).ok())
            .ok_or_else(|| {
                FetchError::Redirect(format!(
                    "{current} answered {status} with a Location that is not a URL"
                ))
            })?;
        redirect_verdict(&chain, &next).map_err(FetchError::Redirect)?;
        left |= next.origin() != on.url.origin();
        if left {
            headers.remove(header::AUTHORIZATION);
            let _ = next.set_username("");
            let _ = next.set_password(None);
        }
        on.redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(next.clone());
        chain.push(next);
    }
}

/// One fetch on `client`.
async fn fetch_async(client: &reqwest::Client, on: &Attempt<'_>) -> Result<Fetched, FetchError> {
    let (url, options) = (on.url, on.options);
    if proxy::route(url, on.proxies) == Route::RefusedInCgi {
        // Go's net/http refuses the same request (golang.org/s/cgihttpproxy).
        return Err(FetchError::RefusedInCgi);
    }
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    let conditional = !options.conditional.is_empty();
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
    let mut response = follow(client, on, headers).await?;
    on.progress.answered.store(true, Ordering::Relaxed);
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED {
        return if conditional {
            Ok(Fetched::NotModified)
        } else {
            Err(FetchError::UnexpectedNotModified)
        };
    }
    if let Some(proxy) = on.proxy_answered(status) {
        return Err(proxy);
    }
    if !status.is_success() {
        let body_line = first_line(&mut response).await;
        return Err(on.refused(status, body_line));
    }
    let validators = Validators {
        etag: header_string(response.headers(), header::ETAG),
        last_modified: header_string(response.headers(), header::LAST_MODIFIED),
    };
    // Content-Length describes the encoded body; only trust it as a hint
    // when the body is not compressed.
    let encoded = response.headers().contains_key(header::CONTENT_ENCODING);
    let declared = response.content_length().filter(|_| !encoded);
    if let Some(len) = declared
        && len > options.max_body as u64
    {
        return Err(FetchError::TooLarge(options.max_body));
    }
    if let Some(total) = declared {
        on.progress.total.store(total, Ordering::Relaxed);
    }
    let progress = progress_bar(options.progress, declared);
    let mut bytes = Vec::with_capacity(declared.map_or(64 * 1024, |n| n as usize));
    while let Some(chunk) = response.chunk().await.map_err(|e| on.classify(e))? {
        if bytes.len() + chunk.len() > options.max_body {
            return Err(FetchError::TooLarge(options.max_body));
        }
        bytes.extend_from_slice(&chunk);
        on.progress
            .received
            .store(bytes.len() as u64, Ordering::Relaxed);
        if let Some(bar) = &progress {
            bar.set_position(bytes.len() as u64);
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(Fetched::Body { bytes, validators })
}

/// Columns of a progress bar's line left free at the right edge: the
/// terminal echoes Ctrl-C there as `^C`, which must not wrap the line
/// (clearing the bar would then clear the wrapped line, and leave the
/// bar).
const ECHO_ROOM: u16 = 3;

fn progress_bar(wanted: bool, total: Option<u64>) -> Option<indicatif::ProgressBar> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let plain = crate::environment::var("NO_COLOR").is_some();
    let template = match (total.is_some(), plain) {
        (true, false) => {
            "{spinner:.green} {bytes}/{total_bytes} [{wide_bar:.cyan/blue}] {bytes_per_sec}"
        }
        (true, true) => "{spinner} {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec}",
        (false, _) => "{spinner} {bytes} {bytes_per_sec}",
    };
    let bar = match total {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    }
    // Ctrl-C drops the fetch mid-way: the bar goes, not half drawn.
    .with_finish(indicatif::ProgressFinish::AndClear);
    let style = indicatif::ProgressStyle::with_template(template).ok()?;
    bar.set_style(style.progress_chars("=> "));
    bar.set_draw_target(indicatif::ProgressDrawTarget::term_like_with_hz(
        Box::new(Stderr),
        20,
    ));
    Some(bar)
}

/// Standard error as the bar's terminal, [`ECHO_ROOM`] columns narrower
/// than it is: the bar pads its line to the width it is told, and leaves
/// the cursor there.
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn write(&self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().lock().write_all(text.as_bytes())
    }

    fn size(&self) -> (u16, u16) {
        terminal_size::terminal_size_of(std::io::stderr())
            .map_or((80, 24), |(width, height)| (width.0, height.0))
    }
}

impl indicatif::TermLike for Stderr {
    fn width(&self) -> u16 {
        self.size().0.saturating_sub(ECHO_ROOM).max(1)
    }

    fn height(&self) -> u16 {
        self.size().1
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}A"))
        }
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}B"))
        }
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}C"))
        }
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            self.write(&format!("\x1b[{n}D"))
        }
    }

    fn write_line(&self, line: &str) -> std::io::Result<()> {
        self.write(&format!("{line}\n"))
    }

    fn write_str(&self, text: &str) -> std::io::Result<()> {
        self.write(text)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.write("\r\x1b[2K")
    }

    fn flush(&self) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().flush()
    }
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

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| u.parse().unwrap()).collect()
    }

    #[test]
    fn redirects_never_leave_https_and_stop_after_five() {
        let next = |u: &str| u.parse::<Url>().unwrap();
        assert!(redirect_verdict(&urls(&["http://a/"]), &next("https://b/")).is_ok());
        assert!(redirect_verdict(&urls(&["https://a/"]), &next("https://b/")).is_ok());
        let err = redirect_verdict(&urls(&["https://a/"]), &next("http://b/")).unwrap_err();
        assert_eq!(err, "from https to http://b/, which would drop encryption");
        assert!(redirect_verdict(&urls(&["http://a/", "https://b/"]), &next("http://c/")).is_err());
        assert_eq!(
            redirect_verdict(&urls(&["http://a/"]), &next("file:///etc/passwd")).unwrap_err(),
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
            redirect_verdict(&six, &next("http://a/6")).unwrap_err(),
            "more than 5 redirects"
        );
    }
}
