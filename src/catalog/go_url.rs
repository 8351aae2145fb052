//! Where a URL sends a request, read as Crush's HTTP stack reads it: Go's
//! `net/url` `Parse`, not the WHATWG rules of the `url` crate. The two
//! disagree on exactly the spellings an attacker would try
//! (`https://api.x.ai\@evil.example/` is a host of `evil.example` to WHATWG
//! and an invalid URL to Go).
//!
//! Hand-written for behaviour, not speed: it follows Go 1.19–1.26
//! `net/url.Parse` step by step (where they differ, the strictest) (`getScheme`, the fragment and query cuts,
//! `parseAuthority`, `parseHost`, `unescape`), reduced to what decides the
//! destination, and the Go program in the tests checks the two agree.

/// The destination of a URL, as Go reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The scheme, lowercase (`https`).
    pub scheme: String,
    /// The host, unescaped, brackets kept for IPv6, letters as written;
    /// empty for a URL without one (`https:api.x.ai`, `/v1`).
    pub host: String,
    /// The port, when one is written.
    pub port: Option<String>,
}

impl Destination {
    /// `scheme`, the host with its ASCII letters lowercase (DNS does not
    /// tell case), and the port, the scheme's default when none is
    /// written (`80`, `443`; empty for another scheme).
    pub fn place(&self) -> (String, String, String) {
        let port = match &self.port {
            Some(port) => port.clone(),
            None => match self.scheme.as_str() {
                "http" => "80".into(),
                "https" => "443".into(),
                _ => String::new(),
            },
        };
        (self.scheme.clone(), self.host.to_ascii_lowercase(), port)
    }
}

/// Go's `url.Parse(raw)`, reduced to the destination; `None` where Go
/// returns an error.
pub fn parse(raw: &str) -> Option<Destination> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return None;
    }
    let (url, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    unescape(fragment, Mode::Other)?;
    let (scheme_len, rest_start) = scheme(url)?;
    let scheme = url[..scheme_len].to_ascii_lowercase();
    let rest = &url[rest_start..];
    let rest = rest.split_once('?').map_or(rest, |(path, _)| path);
    let mut destination = Destination {
        scheme,
        host: String::new(),
        port: None,
    };
    if !rest.starts_with('/') {
        if scheme_len > 0 {
            // An opaque URL (`https:api.x.ai`): no host.
            return Some(destination);
        }
        let segment = rest.split('/').next().unwrap_or_default();
        if segment.contains(':') {
            return None;
        }
    }
    let mut path = rest;
    if (scheme_len > 0 || !rest.starts_with("///")) && rest.starts_with("//") {
        let authority_all = &rest[2..];
        let (authority, after) =
            authority_all.split_at(authority_all.find('/').unwrap_or(authority_all.len()));
        path = after;
        (destination.host, destination.port) = self::authority(authority)?;
    }
    unescape(path, Mode::Other)?;
    Some(destination)
}

/// Go's `parseAuthority`: the host (unescaped) and port of an authority,
/// after any userinfo (the last `@` ends it); `None` where Go returns an
/// error.
pub(crate) fn authority(authority: &str) -> Option<(String, Option<String>)> {
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
    Some((host, port))
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
        let port = &hostport[hostport.rfind(':').unwrap_or(hostport.len())..];
        if !valid_port(port) {
            return None;
        }
        let host = &hostport[..hostport.len() - port.len()];
        // Go 1.26, which Crush is built with, refuses a colon left in a
        // host outside brackets (`urlstrictcolons`); 1.25 took
        // `api.x.ai:443:443` for the host `api.x.ai:443`.
        if host.contains(':') {
            return None;
        }
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
    // Escapes may spell bytes that are not UTF-8, which Go keeps as they
    // are: each such byte written `\xNN`, which no host holds otherwise (a
    // backslash is refused there, raw or escaped), so that two hosts Go
    // tells apart never read as one place.
    let mut text = String::with_capacity(out.len());
    for chunk in out.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    Some(text)
}

/// Go's `shouldEscape(c, encodeHost)`.
fn host_escapes(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(raw: &str) -> Option<String> {
        let d = parse(raw)?;
        if d.host.is_empty() {
            return Some(format!("no host ({})", d.scheme));
        }
        let (scheme, host, port) = d.place();
        Some(format!("{scheme}://{host}:{port}"))
    }

    #[test]
    fn urls_are_split_as_go_splits_them() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(place("https://api.x.ai/v1"), some("https://api.x.ai:443"));
        assert_eq!(
            place("HTTPS://API.X.AI:443/v2"),
            some("https://api.x.ai:443")
        );
        assert_eq!(place("http://api.x.ai"), some("http://api.x.ai:80"));
        assert_eq!(place("https://[::1]:8080/x"), some("https://[::1]:8080"));
        assert_eq!(
            place("https://u:p@api.x.ai/?x=1#y"),
            some("https://api.x.ai:443")
        );
        // The last `@` ends the userinfo; `#` is cut first, then `?`.
        assert_eq!(
            place("https://api.x.ai@collector.evil.example/v1"),
            some("https://collector.evil.example:443")
        );
        assert_eq!(
            place("https://evil.example/@api.x.ai/v1"),
            some("https://evil.example:443")
        );
        assert_eq!(
            place("https://evil.example#@api.x.ai"),
            some("https://evil.example:443")
        );
        assert_eq!(
            place("https://evil.example?@api.x.ai"),
            some("https://evil.example:443")
        );
        assert_eq!(
            place("https://%C3%A9.example/"),
            some("https://é.example:443")
        );
        // Bytes that are not UTF-8: Go's hosts `x\xff` and `x\xfe`, two
        // places, neither of them the literal `x%ff` of `x%25FF`.
        assert_eq!(place("https://x%FF/"), some("https://x\\xff:443"));
        assert_eq!(place("https://x%FE/"), some("https://x\\xfe:443"));
        assert_eq!(place("https://x%25FF/"), some("https://x%ff:443"));
        assert_eq!(place("https:api.x.ai"), some("no host (https)"));
        for refused in [
            "https://api.x.ai\\@evil.example/",
            "https://exa mple.com/",
            "https://api.x.ai:44x/",
            "https://%61pi.x.ai/",
            "://x",
            "https://a\tb/",
            "https://x/%zz",
            "https://api.x.ai:443:443/",
            "https://::1/",
        ] {
            assert_eq!(parse(refused), None, "{refused}");
        }
    }
}
