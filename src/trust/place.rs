//! Where a provider's requests go: the place a key reference reaches. Crush
//! expands `api_endpoint` ([`crate::catalog::expand`]) and hands it to Go's
//! HTTP stack, which splits it with `net/url`'s `Parse` and connects to its
//! host and port. So the place is read here by Go's rules, not the WHATWG
//! ones of the `url` crate: the two disagree on exactly the spellings an
//! attacker would try (`https://api.x.ai\@evil.example/` is a host of
//! `evil.example` to WHATWG and an invalid URL to Go).
//!
//! Hand-written for behaviour, not speed: it follows Go 1.19–1.25
//! `net/url.Parse` step by step (`getScheme`, the query and fragment cuts,
//! `parseAuthority`, `parseHost`, `unescape`), and the Go program in the
//! tests checks the two agree.

use std::fmt;
use std::ops::Range;

use crate::catalog::expand::{Part, Template};

/// Where a provider's requests go.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// No endpoint: the default one of the provider's type.
    Default,
    /// A fixed destination: the scheme (lowercase), the host (ASCII
    /// letters lowercase: DNS does not tell case), and the port (the
    /// scheme's default when none is written).
    Url {
        /// `https`.
        scheme: String,
        /// `api.example.com`, `[::1]`.
        host: String,
        /// `443`.
        port: String,
    },
    /// A destination the endpoint does not fix by itself: one that a
    /// variable decides (`$ANTHROPIC_API_ENDPOINT`, `https://$HOST/v1`),
    /// or an endpoint Go cannot split (then no request goes anywhere). The
    /// endpoint as written: any change of it is a new place.
    Written(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Default => f.write_str("the default endpoint of its type"),
            Place::Url { scheme, host, port } => write!(f, "{scheme}://{host}:{port}"),
            Place::Written(endpoint) => f.write_str(&crate::catalog::quoted(endpoint)),
        }
    }
}

/// The place of an endpoint, `endpoint` as written and `template` as the
/// resolver reads it.
pub fn place(endpoint: &str, template: &Template) -> Place {
    if endpoint.is_empty() {
        return Place::Default;
    }
    // Each expansion stands in as letters, which no part of Go's split
    // treats specially; the split then shows where each one landed.
    let mut marked = String::new();
    let mut markers: Vec<Range<usize>> = Vec::new();
    for part in &template.parts {
        match part {
            Part::Text(text) => marked.push_str(text),
            Part::Vars(_) => {
                let start = marked.len();
                marked.push_str("zvarz");
                markers.push(start..marked.len());
            }
        }
    }
    let written = || Place::Written(endpoint.to_owned());
    let Some(split) = split(&marked) else {
        return written();
    };
    let touches = |range: &Range<usize>| {
        markers
            .iter()
            .any(|m| m.start < range.end && range.start < m.end)
    };
    if split.host.is_empty() || touches(&split.scheme) || touches(&split.authority_host) {
        return written();
    }
    let port = match split.port {
        Some(port) => port,
        None => match split.scheme_text.as_str() {
            "http" => "80".into(),
            "https" => "443".into(),
            _ => String::new(),
        },
    };
    Place::Url {
        scheme: split.scheme_text,
        host: split.host.to_ascii_lowercase(),
        port,
    }
}

/// What Go's `url.Parse` makes of a URL, as far as the destination goes.
#[derive(Debug, PartialEq, Eq)]
struct Split {
    /// Where the scheme is written.
    scheme: Range<usize>,
    /// The scheme, lowercase.
    scheme_text: String,
    /// Where host and port are written (after any userinfo).
    authority_host: Range<usize>,
    /// The host, unescaped, brackets kept for IPv6.
    host: String,
    /// The port, when one is written.
    port: Option<String>,
}

/// Go's `url.Parse(raw)`, reduced to the destination; `None` where Go
/// returns an error.
fn split(raw: &str) -> Option<Split> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return None;
    }
    let (url, fragment) = match raw.split_once('#') {
        Some((url, fragment)) => (url, Some(fragment)),
        None => (raw, None),
    };
    if let Some(fragment) = fragment {
        unescape(fragment, Mode::Other)?;
    }
    let (scheme_len, rest_start) = scheme(url)?;
    let scheme_text = url[..scheme_len].to_ascii_lowercase();
    let mut rest = &url[rest_start..];
    // The query: `?` alone at the end forces an empty one.
    if let Some(q) = rest.find('?') {
        rest = &rest[..q];
    }
    let at = |part: &str| part.as_ptr() as usize - raw.as_ptr() as usize;
    let mut split = Split {
        scheme: 0..scheme_len,
        scheme_text,
        authority_host: 0..0,
        host: String::new(),
        port: None,
    };
    if !rest.starts_with('/') {
        if scheme_len > 0 {
            // An opaque URL (`https:api.x.ai`): no host.
            return Some(split);
        }
        let segment = rest.split('/').next().unwrap_or_default();
        if segment.contains(':') {
            return None;
        }
    }
    let mut path = rest;
    if (scheme_len > 0 || !rest.starts_with("///")) && rest.starts_with("//") {
        let authority_all = &rest[2..];
        let (authority, after) = match authority_all.find('/') {
            Some(i) => (&authority_all[..i], &authority_all[i..]),
            None => (authority_all, ""),
        };
        path = after;
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        let (host, port) = host(hostport)?;
        if let Some(userinfo) = userinfo {
            if !userinfo
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
            {
                return None;
            }
            for part in userinfo.splitn(2, ':') {
                unescape(part, Mode::Other)?;
            }
        }
        let start = at(hostport);
        split.authority_host = start..start + hostport.len();
        split.host = host;
        split.port = port;
    }
    unescape(path, Mode::Other)?;
    Some(split)
}

/// Go's `getScheme`: the scheme's length and where the rest starts.
fn scheme(url: &str) -> Option<(usize, usize)> {
    for (i, c) in url.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((i, i + 1)),
            _ => return Some((0, 0)),
        }
    }
    Some((0, 0))
}

/// Go's `parseHost`: the host, unescaped, and the port written after it.
fn host(hostport: &str) -> Option<(String, Option<String>)> {
    let (host, port) = if hostport.starts_with('[') {
        let close = hostport.rfind(']')?;
        let port = &hostport[close + 1..];
        if !valid_port(port) {
            return None;
        }
        let inside = &hostport[..=close];
        // An IPv6 zone (`%25en0`) may escape what it likes; the address
        // itself may not.
        let host = match inside.find("%25") {
            Some(zone) => format!(
                "{}{}]",
                unescape(&inside[..zone], Mode::Host)?,
                unescape(&inside[zone..close], Mode::Zone)?
            ),
            None => unescape(inside, Mode::Host)?,
        };
        (host, port)
    } else {
        let port = match hostport.rfind(':') {
            Some(i) => &hostport[i..],
            None => "",
        };
        if !valid_port(port) {
            return None;
        }
        let host = &hostport[..hostport.len() - port.len()];
        (unescape(host, Mode::Host)?, port)
    };
    let port = port.strip_prefix(':').filter(|p| !p.is_empty());
    Some((host, port.map(str::to_owned)))
}

fn valid_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Host,
    Zone,
    Other,
}

/// Go's `unescape`, for the checks it makes: `None` where Go returns an
/// error, else the unescaped text.
fn unescape(s: &str, mode: Mode) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
                let (hi, lo) = (hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?);
                let is_25 = &bytes[i..i + 3] == b"%25";
                if mode == Mode::Host && hi < 8 && !is_25 {
                    return None;
                }
                let value = hi << 4 | lo;
                if mode == Mode::Zone && !is_25 && value != b' ' && host_escapes(value) {
                    return None;
                }
                out.push(value);
                i += 3;
            }
            b if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && host_escapes(b) => {
                return None;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Escapes may spell bytes that are not UTF-8; Go keeps them as bytes.
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Go's `shouldEscape(c, encodeHost)`.
fn host_escapes(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::expand;

    fn place_of(endpoint: &str) -> String {
        place(endpoint, &expand::parse(endpoint).unwrap()).to_string()
    }

    #[test]
    fn literal_urls_are_scheme_host_and_port() {
        assert_eq!(place_of("https://api.x.ai/v1"), "https://api.x.ai:443");
        assert_eq!(place_of("HTTPS://API.X.AI:443/v2"), "https://api.x.ai:443");
        assert_eq!(place_of("http://api.x.ai"), "http://api.x.ai:80");
        assert_eq!(place_of("https://api.x.ai:8443"), "https://api.x.ai:8443");
        assert_eq!(place_of("https://[::1]:8080/x"), "https://[::1]:8080");
        // Userinfo, query and fragment do not move the request.
        assert_eq!(
            place_of("https://u:p@api.x.ai/?x=1#y"),
            "https://api.x.ai:443"
        );
        // The last `@` ends the userinfo, as Go reads it.
        assert_eq!(
            place_of("https://api.x.ai@collector.evil.example/v1"),
            "https://collector.evil.example:443"
        );
        // A homograph is another host.
        assert_eq!(place_of("https://аpi.x.ai/v1"), "https://аpi.x.ai:443");
        assert_eq!(place_of(""), "the default endpoint of its type");
    }

    #[test]
    fn what_a_variable_decides_is_the_endpoint_as_written() {
        for endpoint in [
            "$ANTHROPIC_API_ENDPOINT",
            "https://$HOST/v1",
            "https://api.x.ai$SUFFIX/v1",
            "$PROTO://api.x.ai",
            "https://api.x.ai:$PORT",
        ] {
            assert_eq!(place_of(endpoint), format!("\"{endpoint}\""), "{endpoint}");
        }
        // Variables after the host do not decide where it goes.
        assert_eq!(
            place_of("https://u:$KEY@api.x.ai/?k=$OTHER"),
            "https://api.x.ai:443"
        );
    }

    #[test]
    fn what_go_cannot_split_is_written_too() {
        for endpoint in [
            "https://api.x.ai\\@evil.example/",
            "https://exa mple.com/",
            "https://api.x.ai:44x/",
            "https://%61pi.x.ai/",
            "api.x.ai/v1",
            "https:api.x.ai",
            "https:///v1",
            "://x",
            "https://a\tb/",
        ] {
            assert!(place_of(endpoint).starts_with('"'), "{endpoint}");
        }
        // Non-ASCII bytes may be escaped in a host; Go unescapes them.
        assert_eq!(place_of("https://%C3%A9.example/"), "https://é.example:443");
    }
}
