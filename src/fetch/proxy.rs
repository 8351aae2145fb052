//! Which proxy a request goes through: one decision, used by the HTTP
//! client for every request and by the diagnosis of a failed one, so that
//! the two never disagree. It is Go's, which Crush's requests follow
//! (`net/http.ProxyFromEnvironment`, i.e. `golang.org/x/net/http/httpproxy`:
//! `FromEnvironment`, `proxyForURL`, `parseProxy`, `useProxy`, `init`):
//!
//! - an https request takes `HTTPS_PROXY`, else `https_proxy`; an http one
//!   `HTTP_PROXY`, else `http_proxy` (the first that is not empty);
//!   `ALL_PROXY` is not read, and neither are the system's settings;
//! - with `REQUEST_METHOD` set (a CGI script), an http request with a proxy
//!   set is refused rather than sent through it;
//! - `localhost` and loopback addresses (`127.0.0.0/8`, `::1`) never go
//!   through a proxy;
//! - `NO_PROXY` (else `no_proxy`): comma-separated; `*` matches every
//!   host; `1.2.3.0/24` an address range; `1.2.3.4` or `[::1]:8080` an
//!   address (and port); `corp.example`, `.corp.example` or
//!   `*.corp.example` the domain and (without the leading dot) the host
//!   itself, each with an optional `:port`;
//! - a proxy written without a scheme (`proxy.corp:3128`) is `http://`;
//!   one that cannot be read is no proxy, nor one Go's `url.Parse`
//!   refuses (a line break in it, a space in its host).

use std::ffi::OsString;
use std::net::IpAddr;

use reqwest::Url;

/// The variables the proxy of http requests is read from, in Go's order.
const HTTP_VARIABLES: [&str; 2] = ["HTTP_PROXY", "http_proxy"];
/// The variables the proxy of https requests is read from, in Go's order.
const HTTPS_VARIABLES: [&str; 2] = ["HTTPS_PROXY", "https_proxy"];

/// The variable a proxy for `url`'s requests is set in, as a hint names
/// it: the one Go reads first for its scheme.
pub(crate) fn variable_for(url: &Url) -> &'static str {
    match url.scheme() {
        "https" => HTTPS_VARIABLES[0],
        _ => HTTP_VARIABLES[0],
    }
}

/// The proxy variables, as read from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProxyEnv {
    /// The proxy for http requests, and the variable it came from.
    pub http: Option<(String, &'static str)>,
    /// The proxy for https requests, and the variable it came from.
    pub https: Option<(String, &'static str)>,
    /// The exceptions, and the variable they came from.
    pub no_proxy: Option<(String, &'static str)>,
    /// `REQUEST_METHOD` is set: a CGI script.
    pub cgi: bool,
}

impl ProxyEnv {
    /// Reads the variables through `env`.
    pub(crate) fn read(env: impl Fn(&str) -> Option<OsString>) -> ProxyEnv {
        let env = |name: &str| env(name).map(|v| v.to_string_lossy().into_owned());
        let any = |names: [&'static str; 2]| {
            names
                .into_iter()
                .find_map(|n| env(n).filter(|v| !v.is_empty()).map(|v| (v, n)))
        };
        ProxyEnv {
            http: any(HTTP_VARIABLES),
            https: any(HTTPS_VARIABLES),
            no_proxy: any(["NO_PROXY", "no_proxy"]),
            cgi: env("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
        }
    }

    /// The variables of the environment as Crush sees it.
    pub(crate) fn current() -> ProxyEnv {
        ProxyEnv::read(crate::environment::var)
    }
}

/// Why a request goes directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Direct {
    /// No proxy is set for its scheme (or the one set cannot be read).
    NoneSet,
    /// It is for this machine, which never goes through a proxy.
    Loopback,
    /// This `NO_PROXY` entry names its host, which goes around the proxy
    /// of this variable.
    Excepted {
        /// The entry.
        entry: String,
        /// The variable of the proxy.
        variable: &'static str,
    },
}

/// The route of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Straight to the server.
    Direct(Direct),
    /// Through this proxy (credentials included), named by this variable.
    Proxy(Url, &'static str),
    /// Not sent: `REQUEST_METHOD` is set and an http proxy too.
    RefusedInCgi,
}

/// Decides the route of a request for `url`.
pub(crate) fn route(url: &Url, env: &ProxyEnv) -> Route {
    let set = match url.scheme() {
        "https" => env.https.as_ref(),
        "http" => env.http.as_ref(),
        _ => None,
    };
    let Some((proxy, variable)) = set.and_then(|(value, var)| Some((parse_proxy(value)?, *var)))
    else {
        return Route::Direct(Direct::NoneSet);
    };
    if url.scheme() == "http" && env.cgi {
        return Route::RefusedInCgi;
    }
    // The host as Go compares it: lower case, an address in its canonical
    // form (`::ffff:1.2.3.4` is `1.2.3.4`).
    let (host, ip) = match url.host() {
        Some(url::Host::Domain(d)) => (d.to_ascii_lowercase(), None),
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
        Some(url::Host::Ipv6(ip)) => {
            let ip = canonical(IpAddr::V6(ip));
            (ip.to_string(), Some(ip))
        }
        None => return Route::Proxy(proxy, variable),
    };
    if is_loopback(url) {
        return Route::Direct(Direct::Loopback);
    }
    let port = url.port_or_known_default().unwrap_or_default().to_string();
    let no_proxy = env.no_proxy.as_ref().map_or("", |(v, _)| v.as_str());
    let entry = no_proxy.split(',').map(str::trim).find(|entry| {
        let entry = entry.to_ascii_lowercase();
        !entry.is_empty() && excepts(&entry, &host, ip, &port)
    });
    match entry.map(str::to_owned) {
        Some(entry) => Route::Direct(Direct::Excepted { entry, variable }),
        None => Route::Proxy(proxy, variable),
    }
}

/// Whether `url` is for this machine, which never goes through a proxy:
/// `localhost`, `127.0.0.0/8`, `::1` (Go's `useProxy`).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => canonical(IpAddr::V6(ip)).is_loopback(),
        None => false,
    }
}

/// Go's `parseProxy`: the value as a URL when its scheme is http, https or
/// socks5, else `http://` and the value when that is a URL, else the value
/// as it parsed; nothing when neither parses.
fn parse_proxy(value: &str) -> Option<Url> {
    // What Go's `url.Parse` refuses, with or without `http://` before it.
    if !crate::fetch::source::go_accepts(value) {
        return None;
    }
    let parsed = Url::parse(value).ok();
    if parsed
        .as_ref()
        .is_some_and(|url| matches!(url.scheme(), "http" | "https" | "socks5"))
    {
        return parsed;
    }
    Url::parse(&format!("http://{value}")).ok().or(parsed)
}

/// An IPv4 address written as IPv6 (`::ffff:1.2.3.4`) is that IPv4
/// address, as Go compares them.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether the `NO_PROXY` entry `entry` (lower case) sends `host`, at
/// `port`, around the proxy, as Go's `config.init` reads entries: `*`;
/// an address range (any port); an address, and its port if given; else a
/// domain (`.corp`, `*.corp`: below it; `corp`: it too), and its port if
/// given.
fn excepts(entry: &str, host: &str, ip: Option<IpAddr>, port: &str) -> bool {
    if entry == "*" {
        return true;
    }
    if let Some((net, bits)) = entry.split_once('/')
        && let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u8>())
        && bits <= if net.is_ipv4() { 32 } else { 128 }
    {
        return ip.is_some_and(|ip| in_range(ip, net, bits));
    }
    let (name, entry_port) = split_host_port(entry).unwrap_or((entry, None));
    if name.is_empty() || entry_port.is_some_and(|p| p != port) {
        return false;
    }
    if let Ok(entry_ip) = name.parse::<IpAddr>() {
        return ip == Some(canonical(entry_ip));
    }
    let name = name
        .strip_prefix('*')
        .filter(|n| n.starts_with('.'))
        .unwrap_or(name);
    let whole = !name.starts_with('.');
    let mut suffix = if whole {
        format!(".{name}")
    } else {
        name.to_owned()
    };
    if !suffix.is_ascii()
        && let Ok(url::Host::Domain(d)) = url::Host::parse(&suffix[1..])
    {
        suffix = format!(".{d}");
    }
    host.ends_with(&suffix) || (whole && host == &suffix[1..])
}

/// Go's `net.SplitHostPort` for an entry: `host:port` or `[v6]:port`;
/// `None` without a port.
fn split_host_port(entry: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return Some((host, Some(port)));
    }
    let (host, port) = entry.rsplit_once(':')?;
    // More than one colon without brackets is an IPv6 address, not a port.
    (!host.contains(':')).then_some((host, Some(port)))
}

fn in_range(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (canonical(ip), canonical(net)) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ProxyEnv {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxyEnv::read(move |n| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.into()))
    }

    fn via(url: &str, e: &ProxyEnv) -> Option<(String, &'static str)> {
        match route(&url.parse().unwrap(), e) {
            Route::Proxy(p, var) => Some((p.to_string(), var)),
            _ => None,
        }
    }

    #[test]
    fn each_scheme_has_its_variable_upper_case_first_and_no_all_proxy() {
        let e = env(&[
            ("HTTPS_PROXY", "http://s:1"),
            ("https_proxy", "http://lower:1"),
            ("http_proxy", "proxy.corp:3128"),
            ("ALL_PROXY", "http://all:1"),
        ]);
        assert_eq!(
            via("https://x.example/", &e),
            Some(("http://s:1/".into(), "HTTPS_PROXY"))
        );
        assert_eq!(
            via("http://x.example/", &e),
            Some(("http://proxy.corp:3128/".into(), "http_proxy"))
        );
        let only_all = env(&[("ALL_PROXY", "http://all:1")]);
        assert_eq!(via("https://x.example/", &only_all), None);
        let only_http = env(&[("HTTP_PROXY", "http://h:1")]);
        assert_eq!(via("https://x.example/", &only_http), None, "no fallback");
        let empty_upper = env(&[("HTTPS_PROXY", ""), ("https_proxy", "http://l:1")]);
        assert_eq!(via("https://x/", &empty_upper).unwrap().1, "https_proxy");
    }

    #[test]
    fn loopback_never_goes_through_a_proxy() {
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("HTTPS_PROXY", "http://p:1")]);
        for url in [
            "http://localhost:8080/",
            "http://127.0.0.1/",
            "http://127.9.8.7:1/",
            "https://[::1]:443/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert_eq!(
                route(&url.parse().unwrap(), &e),
                Route::Direct(Direct::Loopback),
                "{url}"
            );
        }
        for url in [
            "http://a.localhost/",
            "http://10.0.0.1/",
            "http://128.0.0.1/",
        ] {
            assert!(via(url, &e).is_some(), "{url}");
        }
    }

    #[test]
    fn no_proxy_entries() {
        let with = |no: &str| {
            env(&[
                ("HTTPS_PROXY", "http://p:1"),
                ("HTTP_PROXY", "http://p:1"),
                ("NO_PROXY", no),
            ])
        };
        let around = |url: &str, no: &str| via(url, &with(no)).is_none();
        assert!(around("https://a.corp.example/", "corp.example"));
        assert!(around("https://corp.example/", "corp.example"));
        assert!(!around("https://corp.example/", ".corp.example"));
        assert!(around("https://a.corp.example/", "*.corp.example"));
        assert!(!around("https://notcorp.example/", "corp.example"));
        assert!(around("https://a.corp.example/", "x, CORP.example:443"));
        assert!(!around("https://a.corp.example/", "corp.example:8443"));
        assert!(around("http://10.1.2.3/", "10.0.0.0/8"));
        assert!(!around("http://11.1.2.3/", "10.0.0.0/8"));
        assert!(around("http://10.1.2.3:8080/", "10.1.2.3:8080"));
        assert!(!around("http://10.1.2.3/", "10.1.2.3:8080"));
        assert!(around("http://[fd00::1]:80/", "[fd00::1]:80"));
        assert!(around("http://[fd00::1]/", "fd00::/8"));
        assert!(around("https://anything.example/", "*"));
        assert!(!around("https://x.example/", ":80, ,"));
        match route(
            &"https://a.corp.example/".parse().unwrap(),
            &with("corp.example"),
        ) {
            Route::Direct(Direct::Excepted {
                entry, variable, ..
            }) => assert_eq!((entry.as_str(), variable), ("corp.example", "HTTPS_PROXY")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cgi_refuses_an_http_proxy_but_not_an_https_one() {
        let e = env(&[
            ("HTTP_PROXY", "http://p:1"),
            ("HTTPS_PROXY", "http://p:1"),
            ("REQUEST_METHOD", "GET"),
        ]);
        assert_eq!(
            route(&"http://x/".parse().unwrap(), &e),
            Route::RefusedInCgi
        );
        assert!(via("https://x/", &e).is_some());
        let e = env(&[("REQUEST_METHOD", "GET")]);
        assert_eq!(
            route(&"http://x/".parse().unwrap(), &e),
            Route::Direct(Direct::NoneSet)
        );
    }
}
