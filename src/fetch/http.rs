//! Fetching a catalog over HTTP: bounded in time and size, conditional when
//! validators are known, and careful about redirects.

use std::io::IsTerminal;
use std::time::Duration;

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url, redirect};

use crate::fetch::diagnosis::{self, Diagnosis, Network, ProxyOrigin, Timeout};

use crate::fetch::validators::Validators;

/// Largest body accepted, after decompression.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

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
    #[error("{cause}")]
    Network {
        /// What went wrong.
        cause: Box<Network>,
        /// The HTTP stack's own messages, for `--verbose`.
        chain: String,
    },
    /// The client could not be set up (an unreadable `SSL_CERT_FILE`).
    #[error("{0}")]
    Setup(String),
    /// A redirect was refused.
    #[error("redirect refused: {0}")]
    Redirect(String),
    /// The server answered with an error status.
    #[error("server answered {status}{}", body_line.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    Status {
        /// The status.
        status: StatusCode,
        /// The first line of the body, sanitised.
        body_line: Option<String>,
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
}

/// Fetches `url`. Blocks the calling thread; runs its own small runtime.
pub fn fetch(url: &Url, options: &FetchOptions) -> Result<Fetched, FetchError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FetchError::Setup(format!("cannot start the network runtime: {e}")))?;
    let progress = Arc::new(Progress::default());
    let env = |name: &str| std::env::var(name).ok();
    let proxy = diagnosis::proxy_for(url, env);
    let no_proxy_set = env("NO_PROXY").or_else(|| env("no_proxy")).is_some();
    let on = Attempt {
        url,
        options,
        progress: &progress,
        proxy: proxy.as_ref(),
        no_proxy_set,
    };
    runtime.block_on(async {
        let attempt = async {
            // Loading the system's trust store costs more than a whole
            // loopback exchange, so a plain-http fetch starts without TLS and
            // starts over with it only if a redirect leads to https.
            match fetch_async(&on, url.scheme() == "https").await {
                Ok(None) => fetch_async(&on, true)
                    .await?
                    .ok_or_else(|| FetchError::Redirect("a redirect needs TLS twice".into())),
                Ok(Some(fetched)) => Ok(fetched),
                Err(e) => Err(e),
            }
        };
        let bounded = async {
            match tokio::time::timeout(options.timeout, attempt).await {
                Ok(result) => result,
                Err(_) => Err(FetchError::Timeout(timeout_phase(
                    &progress,
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

/// The phase a timeout of `after` struck in.
fn timeout_phase(progress: &Progress, after: Duration) -> Timeout {
    if progress.answered.load(Ordering::Relaxed) {
        Timeout::Body {
            after,
            received: progress.received.load(Ordering::Relaxed),
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
    progress: &'a Arc<Progress>,
    proxy: Option<&'a ProxyOrigin>,
    no_proxy_set: bool,
}

impl Attempt<'_> {
    /// The project's cause for an error of the HTTP client.
    fn classify(&self, e: reqwest::Error) -> FetchError {
        if e.is_redirect() {
            let why = e
                .source()
                .map_or_else(|| e.to_string(), |source| source.to_string());
            return FetchError::Redirect(why);
        }
        let context = diagnosis::Context {
            url: self.url,
            proxy: self.proxy,
            no_proxy_set: self.no_proxy_set,
            connected: self.progress.connected.load(Ordering::Relaxed),
            received: self.progress.received.load(Ordering::Relaxed),
        };
        let Diagnosis { cause, chain } = diagnosis::diagnose(&e, context);
        let target = format!(
            "{}:{}",
            self.url.host_str().unwrap_or_default(),
            self.url.port_or_known_default().unwrap_or_default()
        );
        let cause = match cause {
            diagnosis::Cause::Network(cause) => cause,
            diagnosis::Cause::ConnectTimeout => {
                return FetchError::Timeout(Timeout::Connect(self.options.connect_timeout));
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

/// Marks a redirect to https met by a client built without TLS roots.
#[derive(Debug)]
struct NeedsTls;

impl std::fmt::Display for NeedsTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a redirect leads to https")
    }
}

impl std::error::Error for NeedsTls {}

fn client(
    options: &FetchOptions,
    tls: bool,
    progress: &Arc<Progress>,
) -> Result<reqwest::Client, FetchError> {
    let policy = redirect::Policy::custom(move |attempt| {
        if !tls && attempt.url().scheme() == "https" {
            return attempt.error(NeedsTls);
        }
        match redirect_verdict(attempt.previous(), attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(why) => attempt.error(why),
        }
    });
    let mut builder = reqwest::Client::builder();
    if !tls {
        builder = builder.tls_certs_only([]);
    } else if let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        // The platform verifier reads SSL_CERT_FILE on Linux only; elsewhere
        // the bundle is added to the OS store, so a corporate CA works
        // everywhere.
        let pem = std::fs::read(&path).map_err(|e| {
            FetchError::Setup(format!(
                "cannot read SSL_CERT_FILE {}: {}",
                path.to_string_lossy(),
                e.kind()
            ))
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|_| {
            FetchError::Setup(format!(
                "SSL_CERT_FILE {} holds no PEM certificate",
                path.to_string_lossy()
            ))
        })?;
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .user_agent(concat!("crush-providers/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(options.connect_timeout)
        .connector_layer(MarkConnected(Arc::clone(progress)))
        .redirect(policy)
        .build()
        .map_err(|e| FetchError::Setup(format!("cannot set up the HTTP client: {e}")))
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
/// (the original URL first): at most [`MAX_REDIRECTS`], and never from https
/// to anything else.
pub fn redirect_verdict(previous: &[Url], next: &Url) -> Result<(), String> {
    if previous.len() > MAX_REDIRECTS {
        Err(format!("more than {MAX_REDIRECTS} redirects"))
    } else if previous.last().is_some_and(|u| u.scheme() == "https") && next.scheme() != "https" {
        Err(format!("from https to {next}, which would drop encryption"))
    } else {
        Ok(())
    }
}

/// One attempt; `Ok(None)` when a client built without TLS (`tls` false)
/// met a redirect to https and the fetch must start over with TLS.
async fn fetch_async(on: &Attempt<'_>, tls: bool) -> Result<Option<Fetched>, FetchError> {
    let (url, options) = (on.url, on.options);
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
    let response = client(options, tls, on.progress)?
        .get(url.clone())
        .headers(headers)
        .send()
        .await;
    let mut response = match response {
        Ok(response) => response,
        Err(e) if needs_tls(&e) => return Ok(None),
        Err(e) => return Err(on.classify(e)),
    };
    on.progress.answered.store(true, Ordering::Relaxed);
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED {
        return if conditional {
            Ok(Some(Fetched::NotModified))
        } else {
            Err(FetchError::UnexpectedNotModified)
        };
    }
    if !status.is_success() {
        let body_line = first_line(&mut response).await;
        return Err(FetchError::Status { status, body_line });
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
    Ok(Some(Fetched::Body { bytes, validators }))
}

fn progress_bar(wanted: bool, total: Option<u64>) -> Option<indicatif::ProgressBar> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let plain = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let template = match (total.is_some(), plain) {
        (true, false) => {
            "{spinner:.green} {bytes}/{total_bytes} [{bar:30.cyan/blue}] {bytes_per_sec}"
        }
        (true, true) => "{spinner} {bytes}/{total_bytes} [{bar:30}] {bytes_per_sec}",
        (false, _) => "{spinner} {bytes} {bytes_per_sec}",
    };
    let bar = match total {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    };
    let style = indicatif::ProgressStyle::with_template(template).ok()?;
    bar.set_style(style.progress_chars("=> "));
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    Some(bar)
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
    let clean: String = line.chars().filter(|c| !c.is_control()).take(200).collect();
    Some(clean)
}

fn needs_tls(e: &reqwest::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        if err.is::<NeedsTls>() {
            return true;
        }
        source = err.source();
    }
    false
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
