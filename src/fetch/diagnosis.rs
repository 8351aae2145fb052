//! Why a download failed, in plain words. Corporate networks are where
//! this tool earns its keep, and there a failure message is the whole user
//! interface: the project's own causes, naming what failed (the host, the
//! proxy and the variable it came from, the certificate) and, apart, the
//! one thing that fixes it. The HTTP stack's errors (reqwest, hyper,
//! rustls, the operating system) are turned into them once, in
//! `fetch/classify.rs`; no wording of those libraries reaches the
//! user, and the raw chain is kept for `--verbose`.

use std::fmt;
use std::time::Duration;

use reqwest::Url;

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
        Proxy::WantsCredentials => match &proxy.user {
            Some(user) => format!(
                "{proxy} refused the credentials in its URL (user {}): it answered 407 Proxy Authentication Required",
                crate::catalog::escape::quoted(user)
            ),
            None => {
                format!("{proxy} wants credentials: it answered 407 Proxy Authentication Required")
            }
        },
        Proxy::Closed => {
            format!("{proxy} closed the connection when asked for a tunnel to {target}")
        }
    }
}

impl Network {
    /// The one thing that fixes it, for a request for `url`.
    pub fn hint(&self, url: &Url) -> String {
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
            Network::Closed { .. } | Network::Broken { .. } | Network::Other(_) => format!(
                "try again; if it persists, check the network and the proxy ({})",
                super::proxy::variable_for(url)
            ),
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
                    Proxy::WantsCredentials if proxy.user.is_some() => {
                        format!("check the user name and password in {variable}")
                    }
                    Proxy::WantsCredentials => format!(
                        "put them in the proxy's URL: {variable}=http://user:password@host:port"
                    ),
                }
            }
        }
    }
}

/// Why the HTTP client could not be set up: no request was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Setup {
    /// The runtime the download runs on could not start (the system
    /// refused a thread or a descriptor), in the system's words.
    #[error("cannot start the network runtime: {0}")]
    Runtime(String),
    /// `SSL_CERT_FILE` names a file that cannot be read.
    #[error("cannot read SSL_CERT_FILE {path}: {why}")]
    CertFileUnreadable {
        /// The path it names.
        path: String,
        /// Why, in words.
        why: String,
    },
    /// `SSL_CERT_FILE` names a file without a PEM certificate.
    #[error("SSL_CERT_FILE {0} holds no PEM certificate")]
    CertFileEmpty(String),
    /// The HTTP client refused its configuration, in its words.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl Setup {
    /// The one thing that fixes it.
    pub fn hint(&self) -> &'static str {
        match self {
            Setup::CertFileUnreadable { .. } | Setup::CertFileEmpty(_) => {
                "point SSL_CERT_FILE at a readable PEM file, or unset it"
            }
            Setup::Runtime(_) => {
                "the system refused what a download needs (open files, memory): close some programs or raise the limit (ulimit -n), and try again"
            }
            Setup::Client(_) => "try again; if it persists, report it as a bug",
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

/// Whether the descriptors a runtime takes can be had. Tokio's runtime
/// panics (1.54, signal/unix.rs) rather than fails when its signal driver
/// cannot make its socket pair: with `ulimit -n 6` or `7` a download
/// ended in a panic, with 8 in tokio's own error. Six descriptors held for
/// a moment (three pairs: what building it and its signal driver took,
/// counted with `ulimit -n`) turn those into this failure; they are closed
/// at once, for the runtime to take.
pub(crate) fn spare_descriptors() -> std::io::Result<()> {
    #[cfg(unix)]
    (0..3)
        .map(|_| std::os::unix::net::UnixStream::pair())
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
