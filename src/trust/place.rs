//! Where a provider's requests go: the place a key reference reaches.
//! Crush expands `api_endpoint` and hands it to Go's HTTP stack; the
//! catalog reader accepts only endpoints whose destination that leaves no
//! room for ([`crate::catalog::expand::Endpoint`]), so the place is exact:
//!
//! - no endpoint: the default endpoint of the provider's `type`;
//! - one variable: wherever the user points it, or, when it is empty, the
//!   type's default (so a new `type` is a new place too);
//! - a literal URL: its scheme, host and port, split by Go's `net/url`
//!   rules ([`crate::catalog::go_url`]), a host's letter case and a
//!   written-out default port being the same place.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::catalog::expand::Endpoint;
use crate::catalog::{escape, quoted};

/// Where a provider's requests go.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum Place {
    /// No endpoint: the default one of the provider's type.
    Default {
        /// The provider's `type` (empty when it has none).
        #[serde(rename = "type")]
        kind: String,
    },
    /// The endpoint is one variable: wherever its value points, or the
    /// type's default when it is empty.
    Variable {
        /// The variable, without `$`.
        name: String,
        /// The provider's `type`.
        #[serde(rename = "type")]
        kind: String,
    },
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
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Default { kind } => {
                write!(f, "the default endpoint of type {}", quoted(kind))
            }
            Place::Variable { name, kind } => write!(
                f,
                "wherever ${name} points (the default endpoint of type {} when it is empty)",
                quoted(kind)
            ),
            Place::Url { scheme, host, port } => {
                write!(f, "{scheme}://{}:{port}", escape::safe(host))
            }
        }
    }
}

/// Every place Crush sends the key of a provider of type `kind`, whose
/// endpoint reads `endpoint`, first where its client sends requests. The
/// coordinator builds the clients of some types without the endpoint:
/// vercel's SDK and bedrock's (AWS) use their own service, a
/// google-vertex client Google's, and openrouter's SDK OpenRouter's; but
/// the key dialog's connection test (`TestConnection`) sends an
/// openrouter key to the endpoint, so that is openrouter's place too.
/// Every other type's client goes to the endpoint ([`place`]).
pub fn of_provider(endpoint: &Endpoint, kind: &str) -> Vec<Place> {
    let own = Place::Default { kind: kind.into() };
    match kind {
        "vercel" | "bedrock" | "google-vertex" => vec![own],
        "openrouter" => vec![own, place(endpoint, kind)],
        _ => vec![place(endpoint, kind)],
    }
}

/// The place of an endpoint, read by [`crate::catalog::expand::endpoint`],
/// of a provider of type `kind`.
pub fn place(endpoint: &Endpoint, kind: &str) -> Place {
    match endpoint {
        Endpoint::Default => Place::Default { kind: kind.into() },
        Endpoint::Variable(name) => Place::Variable {
            name: name.clone(),
            kind: kind.into(),
        },
        Endpoint::Url { to, .. } => {
            let (scheme, host, port) = to.place();
            Place::Url { scheme, host, port }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::expand;

    fn place_of(endpoint: &str) -> String {
        place(&expand::endpoint(endpoint).unwrap(), "openai").to_string()
    }

    #[test]
    fn literal_urls_are_scheme_host_and_port() {
        assert_eq!(place_of("https://api.x.ai/v1"), "https://api.x.ai:443");
        assert_eq!(place_of("HTTPS://API.X.AI:443/v2"), "https://api.x.ai:443");
        assert_eq!(place_of("http://api.x.ai"), "http://api.x.ai:80");
        assert_eq!(place_of("https://api.x.ai:8443"), "https://api.x.ai:8443");
        assert_eq!(place_of("https://[::1]:8080/x"), "https://[::1]:8080");
        // Userinfo, query, fragment and the variables after the host do
        // not move the request.
        assert_eq!(
            place_of("https://u:p@api.x.ai/?x=1#y"),
            "https://api.x.ai:443"
        );
        assert_eq!(
            place_of("https://api.x.ai/$V?k=$K#$F"),
            "https://api.x.ai:443"
        );
        // The last `@` ends the userinfo, as Go reads it.
        assert_eq!(
            place_of("https://api.x.ai@collector.evil.example/v1"),
            "https://collector.evil.example:443"
        );
        // A homograph is another host, and a hostile character is shown
        // escaped.
        assert_eq!(place_of("https://аpi.x.ai/v1"), "https://аpi.x.ai:443");
        assert_eq!(
            place_of("https://evil\u{202e}.example/"),
            "https://evil\\u{202e}.example:443"
        );
        assert_eq!(place_of("https://%C3%A9.example/"), "https://é.example:443");
    }

    #[test]
    fn no_endpoint_or_a_variable_is_a_place_of_the_type() {
        assert_eq!(place_of(""), "the default endpoint of type \"openai\"");
        assert_eq!(
            place_of("${OPENAI_API_ENDPOINT}"),
            "wherever $OPENAI_API_ENDPOINT points (the default endpoint of type \"openai\" when it is empty)"
        );
        let endpoint = expand::endpoint("$E").unwrap();
        assert_ne!(place(&endpoint, "openai"), place(&endpoint, "anthropic"));
        assert_ne!(
            place(&expand::Endpoint::Default, "openai"),
            place(&expand::Endpoint::Default, "openai-compat")
        );
    }

    #[test]
    fn places_are_written_and_read_back() {
        for endpoint in ["", "$E", "https://API.x.ai:8443/v1"] {
            let place = place(&expand::endpoint(endpoint).unwrap(), "t");
            let json = serde_json::to_string(&place).unwrap();
            assert_eq!(
                serde_json::from_str::<Place>(&json).unwrap(),
                place,
                "{json}"
            );
        }
        assert_eq!(
            serde_json::to_string(&place(&expand::endpoint("https://a").unwrap(), "t")).unwrap(),
            r#"{"to":"url","scheme":"https","host":"a","port":"443"}"#
        );
    }
}
