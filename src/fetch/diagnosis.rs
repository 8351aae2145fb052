//! Why a download failed, in plain words. Corporate networks are where
//! this tool earns its keep, and there a failure message is the whole user
//! interface: the project's own causes, naming what failed (the host, the
//! proxy and the variable it came from, the certificate) and, apart, the
//! one thing that fixes it. The HTTP client's errors (reqwest, hyper,
//! rustls, the operating system) are read here ([`cause`]) and nowhere
//! else; no wording of those libraries reaches the user, and the client's
//! error stays the failure's source, for `--verbose`.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::time::Duration;

use reqwest::Url;
use rustls::CertificateError;

use crate::fetch::proxy::{self, Direct, Route};

/// Words of the HTTP libraries that never reach the user: the unit tests
/// here and the end-to-end tests check every failure message against them.
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
    /// The user name its URL gives, when it carries credentials.
    pub user: Option<String>,
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
        // As written in the URL (percent-escapes and all).
        let user = (!url.username().is_empty() || url.password().is_some())
            .then(|| url.username().to_owned());
        ProxyOrigin {
            url: shown.as_str().trim_end_matches('/').to_owned(),
            variable,
            user,
        }
    }
}

/// What was wrong with a server's certificate (but its names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Certificate {
    /// Signed by an authority this machine does not trust.
    #[error(
        "is signed by an authority this machine does not trust (a private CA, or a proxy that inspects TLS)"
    )]
    UnknownIssuer,
    /// Expired.
    #[error("has expired")]
    Expired,
    /// Not valid yet.
    #[error("is not valid yet")]
    NotYetValid,
    /// Revoked by its authority.
    #[error("has been revoked")]
    Revoked,
    /// Refused for another reason (the TLS library's, in `--verbose`).
    #[error("was refused: it did not pass verification")]
    Other,
}

/// What went wrong with a proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Proxy {
    /// It refused the connection.
    #[error("cannot be reached: it refused the connection")]
    Refused,
    /// There is no route to it.
    #[error("cannot be reached: there is no route to it")]
    NoRoute,
    /// Its name does not resolve.
    #[error("cannot be reached: its name does not resolve")]
    NoName,
    /// The connection to it failed otherwise.
    #[error("cannot be reached: the connection to it failed")]
    Unreachable,
    /// It answered the request for a tunnel (to the host that follows)
    /// with a status other than 200 and 407 (the HTTP client keeps no more
    /// of it).
    #[error("refused the tunnel to")]
    RefusedTunnel,
    /// It wants credentials (407).
    #[error("wants credentials: it answered 407 Proxy Authentication Required")]
    WantsCredentials,
    /// It closed the connection instead of answering (the request for a
    /// tunnel to the host that follows).
    #[error("closed the connection when asked for a tunnel to")]
    Closed,
}

/// Why no answer came from the network. `host:port` is said of a
/// connection, the host alone of a name or a certificate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Network {
    /// The host name does not resolve; whether a proxy is set that
    /// `NO_PROXY` sends this host around.
    #[error("the name {} does not resolve{}", .0, if *.1 { " (it is looked up here, not by the proxy: NO_PROXY sends it around the proxy)" } else { "" })]
    Dns(String, bool),
    /// `host:port` refused the connection.
    #[error("{0} refused the connection (nothing listens there, or a firewall turns it away)")]
    Refused(String),
    /// The connection to `host:port` could not be made otherwise (no
    /// route to it, ...: the system's words follow).
    #[error("cannot connect to {0}")]
    Connect(String),
    /// `host:port` closed or reset the connection before answering.
    #[error("{0} closed the connection before answering")]
    Closed(String),
    /// The host's certificate was refused, for this.
    #[error("the certificate of {0} {1}")]
    Certificate(String, Certificate),
    /// The host's certificate is made out for other names: these, when
    /// the TLS library says.
    #[error("the certificate presented by {} {}", .0, if .1.is_empty() { "is made out for another name".into() } else { format!("is valid only for {}", .1.join(", ")) })]
    WrongName(String, Vec<String>),
    /// `host:port` answered an https request in plain HTTP, not TLS.
    #[error("{0} answered in plain HTTP, not TLS")]
    PlainHttp(String),
    /// The TLS handshake with the host failed otherwise, for the TLS
    /// library's reason.
    #[error("the secure connection to {0} failed: {1}")]
    Tls(String, rustls::Error),
    /// The proxy failed so, asked for `host:port`.
    #[error("{}", proxy_words(.0, *.1, .2))]
    Proxy(ProxyOrigin, Proxy, String),
    /// The answer broke off after this many bytes of its body.
    #[error("the answer broke off after {0} bytes")]
    Broken(u64),
    /// `host:port` answered, but not in HTTP.
    #[error("{0} answered something that is not HTTP")]
    NotHttp(String),
}

fn proxy_words(proxy: &ProxyOrigin, problem: Proxy, target: &str) -> String {
    match (problem, &proxy.user) {
        (Proxy::RefusedTunnel | Proxy::Closed, _) => format!("{proxy} {problem} {target}"),
        (Proxy::WantsCredentials, Some(user)) => format!(
            "{proxy} refused the credentials in its URL (user {}): it answered 407 Proxy Authentication Required",
            crate::catalog::escape::quoted(user)
        ),
        _ => format!("{proxy} {problem}"),
    }
}

impl Network {
    /// The one thing that fixes it, for a request for `url`.
    pub fn hint(&self, url: &Url) -> String {
        let tls = "have the server's TLS set-up checked; behind a TLS-inspecting proxy, SSL_CERT_FILE=/path/to/ca.pem";
        let variable = proxy::variable_for(url);
        match self {
            Network::Dns(..) => "check the host name, and the network's name service (DNS)".into(),
            // No proxy serves this machine (Go's rule): no hint of one.
            Network::Refused(_) if proxy::is_loopback(url) => {
                "check the URL and that the server runs on this machine".into()
            }
            Network::Refused(_) => format!(
                "check the URL and that the server runs; a network that allows the web only through a proxy needs {variable}"
            ),
            Network::NotHttp(_) => {
                "check the URL: another kind of server listens on that port".into()
            }
            Network::Connect(_) | Network::Closed(_) | Network::Broken(_) => format!(
                "try again; if it persists, check the network and the proxy ({variable})"
            ),
            Network::Certificate(_, problem) => match problem {
                Certificate::UnknownIssuer => "trust that authority: SSL_CERT_FILE=/path/to/ca.pem (a PEM file with its certificate)".into(),
                Certificate::Expired | Certificate::NotYetValid => "check this machine's date and time; if they are right, the server's certificate must be renewed".into(),
                Certificate::Revoked | Certificate::Other => tls.into(),
            },
            Network::WrongName(..) => "use a host name the certificate names, or have the server's certificate fixed".into(),
            Network::PlainHttp(_) => {
                "the server speaks plain http on that port: use http:// instead of https:// (or the port where it speaks TLS)".into()
            }
            Network::Tls(..) => tls.into(),
            Network::Proxy(proxy, problem, _) => {
                let variable = proxy.variable;
                match problem {
                    Proxy::RefusedTunnel => "the proxy does not let this host through: ask its administrator, or, if the host can be reached directly, add it to NO_PROXY".into(),
                    Proxy::WantsCredentials if proxy.user.is_some() => {
                        format!("check the user name and password in {variable}")
                    }
                    Proxy::WantsCredentials => format!(
                        "put them in the proxy's URL: {variable}=http://user:password@host:port"
                    ),
                    _ => format!("check {variable}: is the proxy running, and is its address right?"),
                }
            }
        }
    }
}

/// The cause `links` (the HTTP client's error and its sources) come to,
/// for a request for `url` that took `route`, `how` it failed: while
/// connecting (the proxy's tunnel and TLS included), on a name that did
/// not resolve, with how much of the body had come (`None` before the
/// answer).
pub(crate) fn cause(
    links: &[&(dyn StdError + 'static)],
    url: &Url,
    route: &Route,
    (connecting, dns, received): (bool, bool, Option<u64>),
) -> Network {
    use io::ErrorKind as Kind;
    // hyper-util's tunnel errors have no public type: their words are
    // read (hyper-util 0.1, `TunnelError`'s `Display`).
    let says = |words: &str| links.iter().any(|e| e.to_string().starts_with(words));
    let kind = links
        .iter()
        .find_map(|e| e.downcast_ref::<io::Error>())
        .map(io::Error::kind);
    let host = url.host_str().unwrap_or_default().to_owned();
    let target = target_of(url);
    // An https request goes through the proxy's tunnel, whose failures say
    // so; a plain-http one is sent to the proxy itself, so a failure to
    // connect is the proxy's.
    if let Route::Proxy(proxy, variable) = route
        && (says("tunnel error") || (connecting && url.scheme() == "http"))
    {
        let problem = match kind {
            _ if says("tunnel error: proxy authorization required") => Proxy::WantsCredentials,
            _ if says("tunnel error: unsuccessful") => Proxy::RefusedTunnel,
            _ if says("tunnel error: unexpected end of file") => Proxy::Closed,
            _ if dns => Proxy::NoName,
            Some(Kind::ConnectionRefused) => Proxy::Refused,
            Some(Kind::HostUnreachable | Kind::NetworkUnreachable) => Proxy::NoRoute,
            Some(Kind::ConnectionReset | Kind::ConnectionAborted) => Proxy::Closed,
            _ => Proxy::Unreachable,
        };
        return Network::Proxy(ProxyOrigin::new(proxy, variable), problem, target);
    }
    if let Some(tls) = links.iter().find_map(|e| e.downcast_ref::<rustls::Error>()) {
        return match tls {
            rustls::Error::InvalidCertificate(refused) => certificate(refused, host),
            // Not a TLS record at all: the other side speaks plain HTTP.
            rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => {
                Network::PlainHttp(target)
            }
            other => Network::Tls(host, other.clone()),
        };
    }
    if dns {
        let around_proxy = matches!(route, Route::Direct(Direct::Excepted { .. }));
        return Network::Dns(host, around_proxy);
    }
    // hyper's parse errors have no public type either (hyper 1, `Parse`'s
    // words).
    if [
        "invalid HTTP",
        "invalid content-length",
        "message head is too large",
    ]
    .iter()
    .any(|words| says(words))
    {
        return Network::NotHttp(target);
    }
    match kind {
        Some(Kind::ConnectionRefused) => Network::Refused(target),
        Some(
            Kind::ConnectionReset
            | Kind::ConnectionAborted
            | Kind::BrokenPipe
            | Kind::UnexpectedEof,
        ) if received.unwrap_or(0) == 0 => Network::Closed(target),
        _ if connecting => Network::Connect(target),
        _ => Network::Broken(received.unwrap_or(0)),
    }
}

/// The refusal of `host`'s certificate, as the TLS library tells it.
fn certificate(refused: &CertificateError, host: String) -> Network {
    let problem = match refused {
        CertificateError::UnknownIssuer => Certificate::UnknownIssuer,
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => Certificate::Expired,
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            Certificate::NotYetValid
        }
        CertificateError::Revoked => Certificate::Revoked,
        CertificateError::NotValidForName => return Network::WrongName(host, Vec::new()),
        // The names in the TLS library's debugging form:
        // `DnsName("catalog.corp")`, `IpAddress(10.0.0.7)`.
        CertificateError::NotValidForNameContext { presented, .. } => {
            let unwrapped = presented.iter().map(|name| {
                let inner = name.split_once('(').and_then(|(_, r)| r.strip_suffix(')'));
                inner.unwrap_or(name).trim_matches('"').to_owned()
            });
            return Network::WrongName(host, unwrapped.collect());
        }
        _ => Certificate::Other,
    };
    Network::Certificate(host, problem)
}

/// `host:port` of `url`.
pub(crate) fn target_of(url: &Url) -> String {
    let port = url.port_or_known_default().unwrap_or_default();
    format!("{}:{port}", url.host_str().unwrap_or_default())
}

/// The error and its sources, outermost first. An I/O error that wraps
/// another (as the TLS library's errors reach the HTTP client) shows the
/// wrapped one too, which its `source` skips.
pub(crate) fn chain<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    std::iter::successors(Some(error), |&link| {
        link.downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .map(|inner| inner as &(dyn StdError + 'static))
            .or_else(|| link.source())
    })
    .collect()
}

/// A timeout, by the phase it struck in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Timeout {
    /// No connection within the client's bound on connecting.
    #[error("could not connect within {}", seconds(*.0))]
    Connect(Duration),
    /// No answer within the time (the connection made, or not).
    #[error("no answer came within {}", seconds(*.0))]
    Answer(Duration),
    /// The answer began, and was not complete within the time: slow, or
    /// stalled, it is the same to the bound.
    #[error("the download did not finish in time: {received}{} bytes in {}{}", total.map(|t| format!(" of {t}")).unwrap_or_default(), seconds(*.after), if total.is_none() { " (the server did not say how many to expect)" } else { "" })]
    Body {
        /// The time allowed.
        after: Duration,
        /// How much had arrived.
        received: u64,
        /// How much the server said it would send, when it said.
        total: Option<u64>,
    },
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

/// Whether the descriptors a runtime takes can be had. Tokio's runtime
/// panics (1.54, signal/unix.rs) rather than fails when its signal driver
/// cannot make its socket pair: with `ulimit -n 6` or `7` a download
/// ended in a panic, with 8 in tokio's own error. Six descriptors held for
/// a moment (three pairs: what building it and its signal driver took,
/// counted with `ulimit -n`) turn those into this failure; they are closed
/// at once, for the runtime to take.
pub(crate) fn spare_descriptors() -> io::Result<()> {
    #[cfg(unix)]
    (0..3)
        .map(|_| std::os::unix::net::UnixStream::pair())
        .collect::<io::Result<Vec<_>>>()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::proxy::ProxyEnv;

    /// An error with a message and a source, as the libraries chain them.
    #[derive(Debug)]
    struct Link(&'static str, Option<Box<dyn StdError + Send + Sync>>);

    impl fmt::Display for Link {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Link {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    fn link(message: &'static str, source: impl StdError + Send + Sync + 'static) -> Link {
        Link(message, Some(Box::new(source)))
    }

    const URL: &str = "https://catalog.mirror.corp.test/v2/providers";

    fn env(pairs: &'static [(&'static str, &'static str)]) -> ProxyEnv {
        ProxyEnv::read(|name| {
            let value = pairs.iter().find(|(k, _)| *k == name);
            value.map(|(_, v)| v.into())
        })
    }

    /// The cause and its hint of `error`, with the flags the HTTP client
    /// tells (connecting, a name that did not resolve).
    fn said(
        error: &(dyn StdError + 'static),
        env: &ProxyEnv,
        connecting: bool,
        dns: bool,
    ) -> String {
        let url: Url = URL.parse().unwrap();
        let route = proxy::route(&url, env);
        let cause = cause(&chain(error), &url, &route, (connecting, dns, None));
        let text = format!("{cause}; {}", cause.hint(&url));
        for word in LIBRARY_WORDING {
            assert!(!text.contains(word), "{word:?} in {text:?}");
        }
        text
    }

    fn tls(refused: CertificateError) -> String {
        let error = link(
            "client error (Connect)",
            rustls::Error::InvalidCertificate(refused),
        );
        said(&error, &ProxyEnv::default(), true, false)
    }

    #[test]
    fn certificates_are_told_by_what_is_wrong_with_them() {
        assert_eq!(
            tls(CertificateError::UnknownIssuer),
            "the certificate of catalog.mirror.corp.test is signed by an authority this machine does not trust (a private CA, or a proxy that inspects TLS); trust that authority: SSL_CERT_FILE=/path/to/ca.pem (a PEM file with its certificate)"
        );
        for (refused, words) in [
            (CertificateError::Expired, "has expired"),
            (CertificateError::NotValidYet, "is not valid yet"),
        ] {
            let text = tls(refused);
            assert!(
                text.contains(words) && text.contains("date and time"),
                "{text}"
            );
        }
        let wrong_name = tls(CertificateError::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            presented: vec![
                "DnsName(\"catalog.mirror.corp.test\")".into(),
                "IpAddress(10.0.0.7)".into(),
            ],
        });
        assert!(
            wrong_name
                .contains("is valid only for catalog.mirror.corp.test, 10.0.0.7; use a host name"),
            "{wrong_name}"
        );
        // The rest in one plain sentence: the TLS library's reason is in
        // `--verbose`.
        assert_eq!(
            tls(CertificateError::BadSignature),
            "the certificate of catalog.mirror.corp.test was refused: it did not pass verification; have the server's TLS set-up checked; behind a TLS-inspecting proxy, SSL_CERT_FILE=/path/to/ca.pem"
        );
    }

    #[test]
    fn the_proxy_is_named_with_its_variable_whatever_it_did() {
        let env = env(&[("https_proxy", "http://u:secret@proxy.corp:3128")]);
        let refused = link(
            "tunnel error: failed to create underlying connection",
            io::Error::from(io::ErrorKind::ConnectionRefused),
        );
        assert_eq!(
            said(&refused, &env, true, false),
            "the proxy http://proxy.corp:3128 (from https_proxy) cannot be reached: it refused the connection; check https_proxy: is the proxy running, and is its address right?"
        );
        let refused_tunnel = Link("tunnel error: unsuccessful", None);
        let text = said(&refused_tunnel, &env, true, false);
        assert!(
            text.starts_with("the proxy http://proxy.corp:3128 (from https_proxy) refused the tunnel to catalog.mirror.corp.test:443; ")
                && text.contains("NO_PROXY"),
            "{text}"
        );
        let auth = Link("tunnel error: proxy authorization required", None);
        let text = said(&auth, &env, true, false);
        assert!(
            text.contains("refused the credentials in its URL (user \"u\")")
                && text.contains("check the user name and password in https_proxy"),
            "{text}"
        );
        let closed = Link("tunnel error: unexpected end of file", None);
        assert!(
            said(&closed, &env, true, false)
                .contains("closed the connection when asked for a tunnel")
        );
        let dns = Link("tunnel error: failed to create underlying connection", None);
        assert!(
            said(&dns, &env, true, true).contains("cannot be reached: its name does not resolve")
        );
    }

    #[test]
    fn names_that_do_not_resolve_and_refused_connections() {
        let dns = Link("dns error", None);
        let text = said(&dns, &ProxyEnv::default(), true, true);
        assert!(
            text.starts_with(
                "the name catalog.mirror.corp.test does not resolve; check the host name"
            ),
            "{text}"
        );
        let around = env(&[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", ".corp.test")]);
        assert!(said(&dns, &around, true, true).contains("NO_PROXY sends it around the proxy"));
        let refused = link(
            "tcp connect error",
            io::Error::from(io::ErrorKind::ConnectionRefused),
        );
        let text = said(&refused, &ProxyEnv::default(), true, false);
        assert!(
            text.starts_with("catalog.mirror.corp.test:443 refused the connection")
                && text.contains("needs HTTPS_PROXY"),
            "{text}"
        );
        let unreachable = io::Error::from(io::ErrorKind::NetworkUnreachable);
        assert_eq!(
            cause(
                &[&unreachable],
                &URL.parse().unwrap(),
                &Route::Direct(Direct::NoneSet),
                (true, false, None)
            ),
            Network::Connect("catalog.mirror.corp.test:443".into())
        );
    }

    #[test]
    fn timeouts_name_their_phase() {
        assert_eq!(
            Timeout::Connect(Duration::from_secs(3)).to_string(),
            "could not connect within 3 s"
        );
        assert_eq!(
            Timeout::Answer(Duration::from_millis(500)).to_string(),
            "no answer came within 0.5 s"
        );
        let body = |total| Timeout::Body {
            after: Duration::from_secs(2),
            received: 90000,
            total,
        };
        assert_eq!(
            body(Some(606845)).to_string(),
            "the download did not finish in time: 90000 of 606845 bytes in 2 s"
        );
        assert_eq!(
            body(None).to_string(),
            "the download did not finish in time: 90000 bytes in 2 s (the server did not say how many to expect)"
        );
    }
}
