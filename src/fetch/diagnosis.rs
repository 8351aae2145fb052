//! Why a download failed, in plain words. Corporate networks are where
//! this tool earns its keep, and there a failure message is the whole user
//! interface: this module turns the HTTP stack's errors (reqwest, hyper,
//! rustls, the operating system) into the project's own causes, once, here,
//! naming what failed (the host, the proxy and the variable it came from,
//! the certificate) and, apart, the one thing that fixes it. No wording of
//! those libraries reaches the user; the raw chain is kept for `--verbose`.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::time::Duration;

use reqwest::Url;
use rustls::CertificateError;

use crate::fetch::proxy::{self, Direct, ProxyEnv, Route};

/// Words of the HTTP libraries that never reach the user: the tests check
/// every failure message against them.
pub const LIBRARY_WORDING: [&str; 7] = [
    "client error",
    "UnknownIssuer",
    "DnsName(",
    "os error",
    "tunnel error",
    "hyper",
    "reqwest",
];

/// A proxy in use, and where its address came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyOrigin {
    /// Its URL, without any credentials.
    pub url: String,
    /// The environment variable it came from.
    pub variable: &'static str,
}

impl fmt::Display for ProxyOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the proxy {} (from {})", self.url, self.variable)
    }
}

impl ProxyOrigin {
    /// The proxy at `url` named by `variable`, its credentials left out.
    pub fn new(url: &Url, variable: &'static str) -> ProxyOrigin {
        let mut shown = url.clone();
        // Never show a password, even the user's own.
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        ProxyOrigin {
            url: shown.as_str().trim_end_matches('/').to_owned(),
            variable,
        }
    }
}

/// The proxy a request for `url` was meant to use, as the HTTP client
/// decides it ([`proxy::route`]), and whether it went through it: a
/// request that `NO_PROXY` sends around it did not.
pub fn proxy_for(url: &Url, env: &ProxyEnv) -> (Option<ProxyOrigin>, bool) {
    match proxy::route(url, env) {
        Route::Proxy(proxy, variable) => (Some(ProxyOrigin::new(&proxy, variable)), true),
        Route::Direct(Direct::Excepted {
            proxy, variable, ..
        }) => (Some(ProxyOrigin::new(&proxy, variable)), false),
        Route::Direct(_) | Route::RefusedInCgi => (None, false),
    }
}

/// What was wrong with a server's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Certificate {
    /// Signed by an authority this machine does not trust.
    UnknownIssuer,
    /// Expired.
    Expired,
    /// Not valid yet.
    NotYetValid,
    /// Made out for other names.
    WrongName {
        /// The names it is valid for, when the TLS library says.
        valid_for: Vec<String>,
    },
    /// Revoked by its authority.
    Revoked,
    /// Anything else, in the TLS library's words (rare).
    Other(String),
}

/// What went wrong with a proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proxy {
    /// It could not be reached.
    Unreachable(String),
    /// It answered the request for a tunnel with this status (when known).
    RefusedTunnel(Option<String>),
    /// It wants credentials (407).
    WantsCredentials,
    /// It closed the connection instead of answering.
    Closed,
}

/// Why no answer came from the network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Network {
    /// The host name does not resolve.
    #[error("the name {host} does not resolve{}", if *.around_proxy { " (it is looked up here, not by the proxy: NO_PROXY sends it around the proxy)" } else { "" })]
    Dns {
        /// The name.
        host: String,
        /// Whether a proxy is set that this host goes around.
        around_proxy: bool,
    },
    /// The connection was refused.
    #[error("{target} refused the connection (nothing listens there, or a firewall turns it away)")]
    Refused {
        /// `host:port`.
        target: String,
        /// The variable a proxy for it would come from; `None` for this
        /// machine, which no proxy serves.
        proxy_variable: Option<&'static str>,
    },
    /// No route to the host.
    #[error("{target} cannot be reached from this machine (no route to it)")]
    Unreachable {
        /// `host:port`.
        target: String,
        /// As for [`Network::Refused`].
        proxy_variable: Option<&'static str>,
    },
    /// The server closed or reset the connection before answering.
    #[error("{target} closed the connection before answering")]
    Closed {
        /// `host:port`.
        target: String,
    },
    /// The server's certificate was refused.
    #[error("{}", describe_certificate(host, problem))]
    Certificate {
        /// The host whose certificate it is.
        host: String,
        /// What is wrong with it.
        problem: Certificate,
    },
    /// An https request answered in plain HTTP, not TLS.
    #[error("{target} answered in plain HTTP, not TLS")]
    PlainHttp {
        /// `host:port`.
        target: String,
    },
    /// The TLS handshake failed otherwise.
    #[error("the secure connection to {host} failed: {detail}")]
    Tls {
        /// The host.
        host: String,
        /// The TLS library's reason.
        detail: String,
    },
    /// The proxy failed.
    #[error("{}", describe_proxy(proxy, problem, target))]
    Proxy {
        /// Which proxy.
        proxy: ProxyOrigin,
        /// What it did.
        problem: Proxy,
        /// `host:port` that was asked for.
        target: String,
    },
    /// The answer broke off.
    #[error("the answer broke off after {received} bytes ({detail})")]
    Broken {
        /// How much had arrived.
        received: u64,
        /// Why, in a few words.
        detail: String,
    },
    /// Something else, in a few words.
    #[error("{0}")]
    Other(String),
}

fn describe_certificate(host: &str, problem: &Certificate) -> String {
    match problem {
        Certificate::UnknownIssuer => format!(
            "the certificate of {host} is signed by an authority this machine does not trust (a private CA, or a proxy that inspects TLS)"
        ),
        Certificate::Expired => format!("the certificate of {host} has expired"),
        Certificate::NotYetValid => format!("the certificate of {host} is not valid yet"),
        Certificate::WrongName { valid_for } if valid_for.is_empty() => {
            format!("the certificate presented by {host} is made out for another name")
        }
        Certificate::WrongName { valid_for } => format!(
            "the certificate presented by {host} is valid only for {}",
            valid_for.join(", ")
        ),
        Certificate::Revoked => format!("the certificate of {host} has been revoked"),
        Certificate::Other(detail) => format!("the certificate of {host} was refused: {detail}"),
    }
}

fn describe_proxy(proxy: &ProxyOrigin, problem: &Proxy, target: &str) -> String {
    match problem {
        Proxy::Unreachable(why) => format!("{proxy} cannot be reached: {why}"),
        Proxy::RefusedTunnel(Some(status)) => {
            format!("{proxy} refused the tunnel to {target}: it answered {status}")
        }
        Proxy::RefusedTunnel(None) => format!("{proxy} refused the tunnel to {target}"),
        Proxy::WantsCredentials => {
            format!("{proxy} wants credentials: it answered 407 Proxy Authentication Required")
        }
        Proxy::Closed => {
            format!("{proxy} closed the connection when asked for a tunnel to {target}")
        }
    }
}

impl Network {
    /// The one thing that fixes it.
    pub fn hint(&self) -> String {
        match self {
            Network::Dns { .. } => {
                "check the host name, and the network's name service (DNS)".into()
            }
            Network::Refused { proxy_variable, .. }
            | Network::Unreachable { proxy_variable, .. } => match proxy_variable {
                Some(variable) => format!(
                    "check the URL and that the server runs; a network that allows the web only through a proxy needs {variable}"
                ),
                None => "check the URL and that the server runs on this machine".into(),
            },
            Network::Closed { .. } | Network::Broken { .. } | Network::Other(_) => {
                "try again; if it persists, check the network and the proxy (HTTPS_PROXY)".into()
            }
            Network::Certificate {
                problem: Certificate::UnknownIssuer,
                ..
            } => "trust that authority: SSL_CERT_FILE=/path/to/ca.pem (a PEM file with its certificate)".into(),
            Network::Certificate {
                problem: Certificate::Expired | Certificate::NotYetValid,
                ..
            } => "check this machine's date and time; if they are right, the server's certificate must be renewed".into(),
            Network::Certificate {
                problem: Certificate::WrongName { .. },
                ..
            } => "use a host name the certificate names, or have the server's certificate fixed".into(),
            Network::PlainHttp { .. } => {
                "the server speaks plain http on that port: use http:// instead of https:// (or the port where it speaks TLS)".into()
            }
            Network::Certificate { .. } | Network::Tls { .. } => {
                "have the server's TLS set-up checked; behind a TLS-inspecting proxy, SSL_CERT_FILE=/path/to/ca.pem".into()
            }
            Network::Proxy {
                proxy, problem, ..
            } => {
                let variable = proxy.variable;
                match problem {
                    Proxy::Unreachable(_) | Proxy::Closed => {
                        format!("check {variable}: is the proxy running, and is its address right?")
                    }
                    Proxy::RefusedTunnel(_) => "the proxy does not let this host through: ask its administrator, or, if the host can be reached directly, add it to NO_PROXY".into(),
                    Proxy::WantsCredentials => format!(
                        "put them in the proxy's URL: {variable}=http://user:password@host:port"
                    ),
                }
            }
        }
    }
}

/// A timeout, by the phase it struck in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Timeout {
    /// No connection within the time.
    #[error("could not connect within {}", seconds(*.0))]
    Connect(Duration),
    /// Connected, but no answer within the time.
    #[error("connected, but no answer came within {}", seconds(*.0))]
    Answer(Duration),
    /// The answer began, and was not complete within the time: slow, or
    /// stalled, it is the same to the bound.
    #[error("the download did not finish in time: {}", body_progress(*.received, *.total, *.after))]
    Body {
        /// The time allowed.
        after: Duration,
        /// How much had arrived.
        received: u64,
        /// How much the server said it would send, when it said.
        total: Option<u64>,
    },
}

/// `90000 of 606845 bytes in 2 s`.
fn body_progress(received: u64, total: Option<u64>, after: Duration) -> String {
    match total {
        Some(total) => format!("{received} of {total} bytes in {}", seconds(after)),
        None => format!(
            "{received} bytes in {} (the server did not say how many to expect)",
            seconds(after)
        ),
    }
}

impl Timeout {
    /// The time allowed.
    pub fn after(&self) -> Duration {
        match *self {
            Timeout::Connect(after) | Timeout::Answer(after) | Timeout::Body { after, .. } => after,
        }
    }
}

/// `3 s`, `0.5 s`.
pub(crate) fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Where the HTTP client's error chain says it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// The cause, in the project's words.
    pub cause: Cause,
    /// The raw chain of the libraries' messages, for `--verbose`.
    pub chain: String,
}

/// What the chain comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A network failure.
    Network(Network),
    /// The connection could not be made in time (the client's own bound on
    /// connecting).
    ConnectTimeout,
    /// A proxy refused a tunnel; its status is to be asked for.
    TunnelRefused(ProxyOrigin),
}

/// What the HTTP client was doing when it failed.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The URL asked for.
    pub url: &'a Url,
    /// The proxy the environment names for it.
    pub proxy: Option<&'a ProxyOrigin>,
    /// Whether the request went through that proxy: false when `NO_PROXY`
    /// sends this host around it.
    pub proxied: bool,
    /// Whether a connection was established.
    pub connected: bool,
    /// Body bytes received so far.
    pub received: u64,
}

/// Walks `error`'s chain into the project's own cause.
pub fn diagnose(error: &(dyn StdError + 'static), context: Context<'_>) -> Diagnosis {
    let links = chain(error);
    let chain_text = links
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    let host = context.url.host_str().unwrap_or_default().to_owned();
    let target = format!(
        "{host}:{}",
        context.url.port_or_known_default().unwrap_or_default()
    );
    let says = |needle: &str| links.iter().any(|e| e.to_string().starts_with(needle));
    // No proxy serves this machine (Go's rule): no hint of one for it.
    let proxy_variable = match context.url.scheme() {
        _ if proxy::is_loopback(context.url) => None,
        "https" => Some("HTTPS_PROXY"),
        _ => Some("HTTP_PROXY"),
    };
    let io_kind = links
        .iter()
        .find_map(|e| e.downcast_ref::<io::Error>())
        .map(io::Error::kind);
    let tls = links.iter().find_map(|e| e.downcast_ref::<rustls::Error>());
    // An https request goes through a proxy's tunnel, whose failures say
    // so; a plain-http one is sent to the proxy itself, so whatever fails
    // before an answer is the proxy's.
    let via_proxy = says("tunnel error")
        || (context.proxied
            && context.url.scheme() == "http"
            && context.received == 0
            && !context.connected);
    let proxy = context.proxy.cloned().unwrap_or(ProxyOrigin {
        url: String::new(),
        variable: if context.url.scheme() == "https" {
            "HTTPS_PROXY"
        } else {
            "HTTP_PROXY"
        },
    });
    let network = |n| Diagnosis {
        cause: Cause::Network(n),
        chain: chain_text.clone(),
    };
    let proxy_problem = |problem| {
        network(Network::Proxy {
            proxy: proxy.clone(),
            problem,
            target: target.clone(),
        })
    };

    if via_proxy {
        if says("tunnel error: proxy authorization required") {
            return proxy_problem(Proxy::WantsCredentials);
        }
        if says("tunnel error: unsuccessful") {
            return Diagnosis {
                cause: Cause::TunnelRefused(proxy),
                chain: chain_text,
            };
        }
        if says("tunnel error: unexpected end of file") {
            return proxy_problem(Proxy::Closed);
        }
        let why = match io_kind {
            Some(io::ErrorKind::ConnectionRefused) => "it refused the connection".to_string(),
            Some(io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable) => {
                "there is no route to it".to_string()
            }
            Some(io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted) => {
                return proxy_problem(Proxy::Closed);
            }
            _ if says("dns error") => "its name does not resolve".to_string(),
            _ => "the connection to it failed".to_string(),
        };
        return proxy_problem(Proxy::Unreachable(why));
    }
    if let Some(tls) = tls {
        return network(tls_problem(tls, &host, &target));
    }
    if says("dns error") {
        return network(Network::Dns {
            host,
            around_proxy: context.proxy.is_some() && !context.proxied,
        });
    }
    let timed_out = links.iter().any(|e| {
        e.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
    });
    if timed_out && !context.connected {
        return Diagnosis {
            cause: Cause::ConnectTimeout,
            chain: chain_text,
        };
    }
    let cause = match io_kind {
        Some(io::ErrorKind::ConnectionRefused) => Network::Refused {
            target,
            proxy_variable,
        },
        Some(io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable) => {
            Network::Unreachable {
                target,
                proxy_variable,
            }
        }
        Some(
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof,
        ) if context.received == 0 => Network::Closed { target },
        _ if context.received > 0 || context.connected => Network::Broken {
            received: context.received,
            detail: plain(links.last().copied()),
        },
        _ => Network::Other(format!(
            "cannot connect to {target}: {}",
            plain(links.last().copied())
        )),
    };
    network(cause)
}

/// The TLS library's error as the project's cause.
fn tls_problem(error: &rustls::Error, host: &str, target: &str) -> Network {
    let host = host.to_owned();
    let problem = match error {
        // Not a TLS record at all: the other side speaks plain HTTP.
        rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => {
            return Network::PlainHttp {
                target: target.to_owned(),
            };
        }
        rustls::Error::InvalidCertificate(certificate) => match certificate {
            CertificateError::UnknownIssuer => Certificate::UnknownIssuer,
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                Certificate::Expired
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                Certificate::NotYetValid
            }
            CertificateError::NotValidForName => Certificate::WrongName {
                valid_for: Vec::new(),
            },
            CertificateError::NotValidForNameContext { presented, .. } => Certificate::WrongName {
                valid_for: presented.iter().map(|name| unwrap_name(name)).collect(),
            },
            CertificateError::Revoked => Certificate::Revoked,
            other => Certificate::Other(format!("{other:?}")),
        },
        other => {
            return Network::Tls {
                host,
                detail: plain(Some(other)),
            };
        }
    };
    Network::Certificate { host, problem }
}

/// `DnsName("catalog.corp")` as `catalog.corp`: the TLS library shows the
/// names a certificate presents in its own debugging form.
fn unwrap_name(name: &str) -> String {
    let inner = name
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(name);
    inner.trim_matches('"').to_owned()
}

/// An error's own message, without the "os error N" the system appends.
fn plain(error: Option<&(dyn StdError + 'static)>) -> String {
    let Some(error) = error else {
        return "no reason given".into();
    };
    if let Some(io) = error.downcast_ref::<io::Error>() {
        if let Some(inner) = io.get_ref() {
            let text = inner.to_string();
            return text.split(" (os error").next().unwrap_or(&text).to_owned();
        }
        return match io.kind() {
            io::ErrorKind::TimedOut => "timed out".into(),
            io::ErrorKind::ConnectionReset => "the connection was reset".into(),
            io::ErrorKind::UnexpectedEof => "it ended early".into(),
            kind => {
                let text = kind.to_string();
                text.split(" (os error").next().unwrap_or(&text).to_owned()
            }
        };
    }
    let text = error.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_owned()
}

/// The error and its sources, outermost first. An I/O error that wraps
/// another (as the TLS library's errors reach the HTTP client) shows the
/// wrapped one too, which its `source` skips.
fn chain<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut links = Vec::new();
    let mut current = Some(error);
    while let Some(link) = current {
        links.push(link);
        current = link
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .map(|inner| inner as &(dyn StdError + 'static))
            .or_else(|| link.source());
    }
    links
}

/// Asks the proxy at `proxy` what it answers to a request for a tunnel to
/// `target`, as the HTTP client asked: its status line (`403 Forbidden`),
/// or `None` when it cannot be told within `wait`. Only for a plain-http
/// proxy; the client keeps no such detail of its own.
pub fn ask_proxy(proxy: &ProxyOrigin, target: &str, wait: Duration) -> Option<String> {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::ToSocketAddrs;
    let url = Url::parse(&proxy.url).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    let address = (url.host_str()?, url.port_or_known_default()?)
        .to_socket_addrs()
        .ok()?
        .next()?;
    let mut stream = std::net::TcpStream::connect_timeout(&address, wait).ok()?;
    stream.set_read_timeout(Some(wait)).ok()?;
    stream.set_write_timeout(Some(wait)).ok()?;
    write!(
        stream,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    )
    .ok()?;
    let mut line = String::new();
    BufReader::new(stream)
        .take(1024)
        .read_line(&mut line)
        .ok()?;
    let status = line.trim().split_once(' ')?.1;
    let clean: String = status
        .chars()
        .filter(|c| !c.is_control())
        .take(80)
        .collect();
    (!clean.is_empty()).then_some(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a message and a source, as the libraries chain them.
    #[derive(Debug)]
    struct Link(String, Option<Box<dyn StdError + Send + Sync>>);

    impl fmt::Display for Link {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.0)
        }
    }

    impl StdError for Link {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    fn link(message: &str, source: impl StdError + Send + Sync + 'static) -> Link {
        Link(message.into(), Some(Box::new(source)))
    }

    fn leaf(message: &str) -> Link {
        Link(message.into(), None)
    }

    fn url() -> Url {
        "https://catalog.mirror.corp.test/v2/providers"
            .parse()
            .unwrap()
    }

    fn context<'a>(url: &'a Url, proxy: Option<&'a ProxyOrigin>) -> Context<'a> {
        Context {
            url,
            proxy,
            proxied: proxy.is_some(),
            connected: false,
            received: 0,
        }
    }

    fn squid() -> ProxyOrigin {
        ProxyOrigin {
            url: "http://proxy.corp:3128".into(),
            variable: "HTTPS_PROXY",
        }
    }

    fn said(diagnosis: &Diagnosis) -> String {
        match &diagnosis.cause {
            Cause::Network(n) => format!("{n}; {}", n.hint()),
            other => format!("{other:?}"),
        }
    }

    /// Library wording never reaches the user.
    fn assert_plain(text: &str) {
        for word in LIBRARY_WORDING {
            assert!(!text.contains(word), "{word:?} in {text:?}");
        }
    }

    #[test]
    fn an_unknown_issuer_names_the_host_and_ssl_cert_file() {
        let tls = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let error = link(
            "client error (Connect)",
            link("invalid peer certificate: UnknownIssuer", tls),
        );
        let url = url();
        let d = diagnose(&error, context(&url, None));
        let text = said(&d);
        assert_eq!(
            text,
            "the certificate of catalog.mirror.corp.test is signed by an authority this machine does not trust (a private CA, or a proxy that inspects TLS); trust that authority: SSL_CERT_FILE=/path/to/ca.pem (a PEM file with its certificate)"
        );
        assert_plain(&text);
        assert!(
            d.chain.contains("UnknownIssuer"),
            "the raw chain is kept: {}",
            d.chain
        );
    }

    #[test]
    fn a_certificate_for_another_name_says_which_names() {
        let url: Url = "https://127.0.0.1:8443/v2/providers".parse().unwrap();
        let tls = rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            presented: vec![
                "DnsName(\"catalog.mirror.corp.test\")".into(),
                "IpAddress(10.0.0.7)".into(),
            ],
        });
        let text = said(&diagnose(
            &link("client error (Connect)", tls),
            context(&url, None),
        ));
        assert!(
            text.starts_with("the certificate presented by 127.0.0.1 is valid only for catalog.mirror.corp.test, 10.0.0.7; use a host name"),
            "{text}"
        );
        assert_plain(&text);
    }

    #[test]
    fn expired_and_early_certificates_point_at_the_clock() {
        let url = url();
        for (error, words) in [
            (CertificateError::Expired, "has expired"),
            (CertificateError::NotValidYet, "is not valid yet"),
        ] {
            let tls = rustls::Error::InvalidCertificate(error);
            let text = said(&diagnose(
                &link("client error (Connect)", tls),
                context(&url, None),
            ));
            assert!(
                text.contains(words) && text.contains("date and time"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_proxy_is_named_with_its_variable_whatever_it_did() {
        let url = url();
        let proxy = squid();
        let refused = link(
            "client error (Connect)",
            link(
                "tunnel error: failed to create underlying connection",
                link(
                    "tcp connect error",
                    io::Error::from(io::ErrorKind::ConnectionRefused),
                ),
            ),
        );
        let text = said(&diagnose(&refused, context(&url, Some(&proxy))));
        assert_eq!(
            text,
            "the proxy http://proxy.corp:3128 (from HTTPS_PROXY) cannot be reached: it refused the connection; check HTTPS_PROXY: is the proxy running, and is its address right?"
        );
        assert_plain(&text);

        let auth = link(
            "client error (Connect)",
            leaf("tunnel error: proxy authorization required"),
        );
        let text = said(&diagnose(&auth, context(&url, Some(&proxy))));
        assert!(
            text.contains("wants credentials: it answered 407"),
            "{text}"
        );
        assert!(
            text.contains("HTTPS_PROXY=http://user:password@host:port"),
            "{text}"
        );

        let closed = link(
            "client error (Connect)",
            leaf("tunnel error: unexpected end of file"),
        );
        let text = said(&diagnose(&closed, context(&url, Some(&proxy))));
        assert!(
            text.starts_with("the proxy http://proxy.corp:3128 (from HTTPS_PROXY) closed the connection when asked for a tunnel to catalog.mirror.corp.test:443"),
            "{text}"
        );

        let refused_tunnel = link("client error (Connect)", leaf("tunnel error: unsuccessful"));
        assert_eq!(
            diagnose(&refused_tunnel, context(&url, Some(&proxy))).cause,
            Cause::TunnelRefused(proxy.clone())
        );
        let with_status = Network::Proxy {
            proxy,
            problem: Proxy::RefusedTunnel(Some("403 Forbidden".into())),
            target: "catalog.mirror.corp.test:443".into(),
        };
        assert!(with_status.to_string().ends_with(
            "refused the tunnel to catalog.mirror.corp.test:443: it answered 403 Forbidden"
        ));
        assert!(with_status.hint().contains("NO_PROXY"));
    }

    #[test]
    fn names_that_do_not_resolve_and_refused_connections() {
        let url = url();
        let dns = link(
            "client error (Connect)",
            link(
                "dns error",
                io::Error::other("failed to lookup address information: Name or service not known"),
            ),
        );
        let text = said(&diagnose(&dns, context(&url, None)));
        assert!(
            text.starts_with(
                "the name catalog.mirror.corp.test does not resolve; check the host name"
            ),
            "{text}"
        );
        assert_plain(&text);
        let proxy = squid();
        let around = Context {
            proxied: false,
            ..context(&url, Some(&proxy))
        };
        assert!(said(&diagnose(&dns, around)).contains("NO_PROXY sends it around the proxy"));

        let refused = link(
            "client error (Connect)",
            link(
                "tcp connect error",
                io::Error::from(io::ErrorKind::ConnectionRefused),
            ),
        );
        let text = said(&diagnose(&refused, context(&url, None)));
        assert!(
            text.starts_with("catalog.mirror.corp.test:443 refused the connection"),
            "{text}"
        );
        let unreachable = link(
            "tcp connect error",
            io::Error::from(io::ErrorKind::NetworkUnreachable),
        );
        assert!(said(&diagnose(&unreachable, context(&url, None))).contains("no route"));
    }

    #[test]
    fn a_body_cut_short_says_how_much_came() {
        let url = url();
        let cut = link(
            "error decoding response body",
            io::Error::from(io::ErrorKind::UnexpectedEof),
        );
        let mid_body = Context {
            connected: true,
            received: 5000,
            ..context(&url, None)
        };
        let text = said(&diagnose(&cut, mid_body));
        assert!(
            text.starts_with("the answer broke off after 5000 bytes (it ended early)"),
            "{text}"
        );
        assert_plain(&text);
    }

    #[test]
    fn timeouts_name_their_phase() {
        assert_eq!(
            Timeout::Connect(Duration::from_secs(3)).to_string(),
            "could not connect within 3 s"
        );
        assert_eq!(
            Timeout::Answer(Duration::from_millis(500)).to_string(),
            "connected, but no answer came within 0.5 s"
        );
        assert_eq!(
            Timeout::Body {
                after: Duration::from_secs(2),
                received: 90000,
                total: Some(606845),
            }
            .to_string(),
            "the download did not finish in time: 90000 of 606845 bytes in 2 s"
        );
        assert_eq!(
            Timeout::Body {
                after: Duration::from_secs(10),
                received: 1234,
                total: None,
            }
            .to_string(),
            "the download did not finish in time: 1234 bytes in 10 s (the server did not say how many to expect)"
        );
    }

    /// The diagnosis names the proxy the client used, by the same
    /// decision (variables, `NO_PROXY`, loopback), without credentials.
    #[test]
    fn the_proxy_named_is_the_one_the_client_used() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            ProxyEnv::read(move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })
        };
        let https = url();
        let http: Url = "http://catalog.corp/".parse().unwrap();
        let both = env(&[
            ("https_proxy", "http://u:secret@proxy:3128"),
            ("ALL_PROXY", "socks5://s:1080"),
        ]);
        let (proxy, proxied) = proxy_for(&https, &both);
        let proxy = proxy.unwrap();
        assert_eq!(proxy.url, "http://proxy:3128");
        assert_eq!(proxy.variable, "https_proxy");
        assert!(proxied);
        assert_eq!(
            proxy_for(&http, &both),
            (None, false),
            "ALL_PROXY is not read"
        );
        assert_eq!(
            proxy_for(&https, &env(&[("HTTPS_PROXY", "proxy.corp:3128")]))
                .0
                .unwrap()
                .url,
            "http://proxy.corp:3128"
        );
        let around = env(&[
            ("HTTPS_PROXY", "http://p:1"),
            ("NO_PROXY", ".mirror.corp.test"),
        ]);
        let (proxy, proxied) = proxy_for(&https, &around);
        assert_eq!(proxy.unwrap().variable, "HTTPS_PROXY");
        assert!(!proxied);
        let loopback: Url = "http://127.0.0.1:9/".parse().unwrap();
        assert_eq!(
            proxy_for(&loopback, &env(&[("HTTP_PROXY", "http://p:1")])),
            (None, false)
        );
    }
}
