//! Which of the project's causes ([`crate::fetch::diagnosis`]) a failure
//! of the HTTP client is: its chain of errors (reqwest, hyper, rustls, the
//! operating system) walked once, here, with what the fetch knew (the
//! proxy its request took, how far it got). Nothing else reads the
//! libraries' errors.

use std::error::Error as StdError;
use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::{StatusCode, Url};
use rustls::CertificateError;

use crate::fetch::diagnosis::{Certificate, Network, Proxy, ProxyOrigin, Timeout};
use crate::fetch::http::{Attempt, FetchError};
use crate::fetch::proxy::{self, Direct, ProxyEnv, Route};
use crate::fetch::source::redacted;

/// A 407 to a plain-http request of `on` is the proxy's own answer (an
/// https request's would have refused the tunnel): it wants credentials.
pub(crate) fn proxy_answered(on: &Attempt<'_>, status: StatusCode) -> Option<FetchError> {
    if status != StatusCode::PROXY_AUTHENTICATION_REQUIRED {
        return None;
    }
    let url = last_url(on).unwrap_or_else(|| on.url.clone());
    let Route::Proxy(proxy, variable) = proxy::route(&url, on.proxies) else {
        return None;
    };
    Some(FetchError::Network {
        cause: Box::new(Network::Proxy {
            proxy: ProxyOrigin::new(&proxy, variable),
            problem: Proxy::WantsCredentials,
            target: target_of(&url),
        }),
        chain: format!("{status}"),
        redirected: None,
    })
}

/// The error for an answer of `on` with status `status` (not a success)
/// and the first line of its body: where a redirect led, and, for Hyper's
/// provider, whether the key went there (once a redirect left the first
/// origin, none did).
pub(crate) fn refused(
    on: &Attempt<'_>,
    status: StatusCode,
    body_line: Option<String>,
) -> FetchError {
    let hops = on
        .redirects
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let sent = on.options.bearer.is_some() && hops.iter().all(|to| to.origin() == on.url.origin());
    FetchError::Status {
        status,
        body_line,
        hyper_key_sent: (on.options.document == crate::catalog::Target::Hyper).then_some(sent),
        redirected: hops.last().map(shown),
    }
}

/// The project's cause for an error `e` of the HTTP client, on `on`.
pub(crate) fn failure(on: &Attempt<'_>, e: reqwest::Error) -> FetchError {
    // A redirect's target that fails is that target's failure.
    let redirected = last_url(on);
    let url = redirected.as_ref().unwrap_or(on.url);
    let (proxy, proxied) = proxy_for(url, on.proxies);
    let context = Context {
        url,
        proxy: proxy.as_ref(),
        proxied,
        connected: on.progress.connected.load(Ordering::Relaxed),
        received: on.progress.received.load(Ordering::Relaxed),
    };
    let Diagnosis { cause, chain } = diagnose(&e, context);
    let cause = match cause {
        Cause::Network(cause) => cause,
        Cause::ConnectTimeout => {
            return FetchError::Timeout(Timeout::Connect(on.connect_timeout));
        }
        // The client keeps no status of its own: ask the proxy once more,
        // briefly, what it answers.
        Cause::TunnelRefused(proxy) => {
            let target = target_of(url);
            let status = ask_proxy(&proxy, &target, Duration::from_secs(2));
            Network::Proxy {
                proxy,
                problem: Proxy::RefusedTunnel(status),
                target,
            }
        }
    };
    FetchError::Network {
        cause: Box::new(cause),
        chain,
        redirected: redirected.as_ref().map(shown),
    }
}

/// A redirect's target as an error carries it, shown and saved: a
/// same-origin hop keeps the first URL's user and password
/// ([`redirect::follow`](crate::fetch::redirect::follow) strips them only
/// once the chain left that origin), so its password is replaced.
fn shown(url: &Url) -> String {
    redacted(url.as_str())
}

/// Where the last redirect of `on` led, if it was redirected.
fn last_url(on: &Attempt<'_>) -> Option<Url> {
    on.redirects
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .last()
        .cloned()
}

/// `host:port` of `url`.
fn target_of(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default()
    )
}

/// The proxy a request for `url` was meant to use, as the HTTP client
/// decides it ([`proxy::route`]), and whether it went through it: a
/// request that `NO_PROXY` sends around it did not.
fn proxy_for(url: &Url, env: &ProxyEnv) -> (Option<ProxyOrigin>, bool) {
    match proxy::route(url, env) {
        Route::Proxy(proxy, variable) => (Some(ProxyOrigin::new(&proxy, variable)), true),
        Route::Direct(Direct::Excepted {
            proxy, variable, ..
        }) => (Some(ProxyOrigin::new(&proxy, variable)), false),
        Route::Direct(_) | Route::RefusedInCgi => (None, false),
    }
}

/// Where the HTTP client's error chain says it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Diagnosis {
    /// The cause, in the project's words.
    cause: Cause,
    /// The raw chain of the libraries' messages, for `--verbose`.
    chain: String,
}

/// What the chain comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cause {
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
struct Context<'a> {
    /// The URL asked for.
    url: &'a Url,
    /// The proxy the environment names for it.
    proxy: Option<&'a ProxyOrigin>,
    /// Whether the request went through that proxy: false when `NO_PROXY`
    /// sends this host around it.
    proxied: bool,
    /// Whether a connection was established.
    connected: bool,
    /// Body bytes received so far.
    received: u64,
}

/// Walks `error`'s chain into the project's own cause.
fn diagnose(error: &(dyn StdError + 'static), context: Context<'_>) -> Diagnosis {
    let links = chain(error);
    let chain = links
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    // An https request goes through a proxy's tunnel, whose failures say
    // so; a plain-http one is sent to the proxy itself, so whatever fails
    // before an answer is the proxy's.
    let via_proxy = says(&links, "tunnel error")
        || (context.proxied
            && context.url.scheme() == "http"
            && context.received == 0
            && !context.connected);
    let cause = if via_proxy {
        through_proxy(&links, context)
    } else {
        direct(&links, context)
    };
    Diagnosis { cause, chain }
}

/// The errors of a chain, outermost first.
type Links<'a> = [&'a (dyn StdError + 'static)];

/// Whether a link of `links` says `needle` first.
fn says(links: &Links<'_>, needle: &str) -> bool {
    links.iter().any(|e| e.to_string().starts_with(needle))
}

/// The kind of the first I/O error in `links`.
fn io_kind(links: &Links<'_>) -> Option<io::ErrorKind> {
    links
        .iter()
        .find_map(|e| e.downcast_ref::<io::Error>())
        .map(io::Error::kind)
}

/// What a request that went to a proxy (or through its tunnel) failed of.
fn through_proxy(links: &Links<'_>, context: Context<'_>) -> Cause {
    let proxy = context.proxy.cloned().unwrap_or(ProxyOrigin {
        url: String::new(),
        variable: proxy::variable_for(context.url),
        user: None,
    });
    let problem = if says(links, "tunnel error: proxy authorization required") {
        Proxy::WantsCredentials
    } else if says(links, "tunnel error: unsuccessful") {
        return Cause::TunnelRefused(proxy);
    } else if says(links, "tunnel error: unexpected end of file") {
        Proxy::Closed
    } else {
        match io_kind(links) {
            Some(io::ErrorKind::ConnectionRefused) => {
                Proxy::Unreachable("it refused the connection".into())
            }
            Some(io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable) => {
                Proxy::Unreachable("there is no route to it".into())
            }
            Some(io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted) => {
                Proxy::Closed
            }
            _ if says(links, "dns error") => Proxy::Unreachable("its name does not resolve".into()),
            _ => Proxy::Unreachable("the connection to it failed".into()),
        }
    };
    Cause::Network(Network::Proxy {
        proxy,
        problem,
        target: target_of(context.url),
    })
}

/// What a request that went straight to the server failed of.
fn direct(links: &Links<'_>, context: Context<'_>) -> Cause {
    let host = context.url.host_str().unwrap_or_default().to_owned();
    let target = target_of(context.url);
    if let Some(tls) = links.iter().find_map(|e| e.downcast_ref::<rustls::Error>()) {
        return Cause::Network(tls_problem(tls, &host, &target));
    }
    if says(links, "dns error") {
        return Cause::Network(Network::Dns {
            host,
            around_proxy: context.proxy.is_some() && !context.proxied,
        });
    }
    let timed_out = links.iter().any(|e| {
        e.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
    });
    if timed_out && !context.connected {
        return Cause::ConnectTimeout;
    }
    // No proxy serves this machine (Go's rule): no hint of one for it.
    let proxy_variable =
        (!proxy::is_loopback(context.url)).then(|| proxy::variable_for(context.url));
    Cause::Network(match io_kind(links) {
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
    })
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
            other => Certificate::Other(refusal(other).into()),
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

/// Why the TLS library refused a certificate, in words, for the refusals
/// that have no cause of their own ([`Certificate`]): the rest of rustls's,
/// and webpki's that rustls passes on as they are. What neither names is
/// told plainly, never in a library's debugging form.
fn refusal(error: &CertificateError) -> &'static str {
    use webpki::Error as Pki;
    match error {
        CertificateError::BadEncoding => "it is not correctly encoded",
        CertificateError::UnhandledCriticalExtension => {
            "it has a critical extension this client does not know"
        }
        CertificateError::BadSignature => "it is not correctly signed by its issuer's key",
        CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "it is signed with an algorithm this client does not accept"
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "it is not made out for a server (its extended key usage)"
        }
        CertificateError::UnknownRevocationStatus => "whether it was revoked cannot be told",
        CertificateError::ExpiredRevocationList
        | CertificateError::ExpiredRevocationListContext { .. } => {
            "its authority's list of revoked certificates has expired"
        }
        CertificateError::InvalidOcspResponse => {
            "the server's word on its revocation (OCSP) is invalid"
        }
        CertificateError::Other(other) => match other.0.downcast_ref::<Pki>() {
            Some(Pki::CaUsedAsEndEntity) => {
                "it is an authority's (a CA's) certificate, served as the server's own"
            }
            Some(Pki::EndEntityUsedAsCa) => {
                "a server's certificate stands as an authority in its chain"
            }
            Some(Pki::PathLenConstraintViolated | Pki::MaximumPathDepthExceeded) => {
                "its chain of authorities is longer than they allow"
            }
            Some(Pki::NameConstraintViolation) => {
                "it names hosts its authority may not certify (name constraints)"
            }
            Some(Pki::UnsupportedCertVersion) => "it is not an X.509 version 3 certificate",
            Some(Pki::UnsupportedCriticalExtension) => {
                "it has a critical extension this client does not know"
            }
            Some(Pki::SignatureAlgorithmMismatch) => {
                "it is signed with an algorithm other than the one it names"
            }
            _ => "it did not pass verification",
        },
        _ => "it did not pass verification",
    }
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
fn ask_proxy(proxy: &ProxyOrigin, target: &str, wait: Duration) -> Option<String> {
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
    use crate::fetch::diagnosis::LIBRARY_WORDING;
    use std::fmt;

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
            user: None,
        }
    }

    fn said(diagnosis: &Diagnosis) -> String {
        match &diagnosis.cause {
            Cause::Network(n) => format!(
                "{n}; {}",
                n.hint(&"https://mirror.corp.test/".parse().unwrap())
            ),
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

    /// A refusal with no cause of its own is said in words, webpki's
    /// passed on by rustls included, and what neither names plainly.
    #[test]
    fn other_certificate_refusals_are_told_in_words() {
        let webpki =
            |e: webpki::Error| CertificateError::Other(rustls::OtherError(std::sync::Arc::new(e)));
        for (refusal, words) in [
            (
                webpki(webpki::Error::CaUsedAsEndEntity),
                "it is an authority's (a CA's) certificate, served as the server's own",
            ),
            (
                webpki(webpki::Error::EndEntityUsedAsCa),
                "a server's certificate stands as an authority in its chain",
            ),
            (
                webpki(webpki::Error::NameConstraintViolation),
                "it names hosts its authority may not certify (name constraints)",
            ),
            (
                CertificateError::BadSignature,
                "it is not correctly signed by its issuer's key",
            ),
            (CertificateError::BadEncoding, "it is not correctly encoded"),
            (
                CertificateError::InvalidPurpose,
                "it is not made out for a server (its extended key usage)",
            ),
            (
                webpki(webpki::Error::MalformedExtensions),
                "it did not pass verification",
            ),
            (
                CertificateError::ApplicationVerificationFailure,
                "it did not pass verification",
            ),
        ] {
            let tls = rustls::Error::InvalidCertificate(refusal);
            let error = link(
                "client error (Connect)",
                link("invalid peer certificate", tls),
            );
            let url = url();
            let text = said(&diagnose(&error, context(&url, None)));
            assert_eq!(
                text,
                format!(
                    "the certificate of catalog.mirror.corp.test was refused: {words}; have the server's TLS set-up checked; behind a TLS-inspecting proxy, SSL_CERT_FILE=/path/to/ca.pem"
                )
            );
            assert_plain(&text);
        }
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
        assert!(
            with_status
                .hint(&"https://mirror.corp.test/".parse().unwrap())
                .contains("NO_PROXY")
        );
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
