//! May a start go out? The same answer as Crush's (`internal/config/
//! provider.go`: `Providers`): with `default-providers` off it makes no
//! Catwalk request at all (and uses no catalog); with
//! `provider-auto-update` off it makes none either (and uses the cache);
//! with a `CATWALK_URL` that is not an http(s) URL its request fails
//! before it is sent. This tool adds one reason of its own: a pinned key
//! that cannot be read, with which no catalog could be checked.

use std::fmt;

use reqwest::Url;

use crate::catalog::quoted;
use crate::config::{Disagreement, Order, Origin, Settings};
use crate::fetch::source::redacted;

/// Whether a start may refresh the catalog, and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Network {
    /// It may: from this URL, when a refresh is due.
    Allowed(Url),
    /// It makes no request, for this reason.
    Off(Offline),
}

/// Why a start makes no request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Offline {
    /// `default-providers` is off, set there: no catalog is used at all.
    /// With the two orders of the files' values when they differ.
    DefaultProviders(Origin, Option<Disagreement>),
    /// `provider-auto-update` is off, set there; with the two orders'
    /// values when they differ.
    AutoUpdate(Origin, Option<Disagreement>),
    /// `CATWALK_URL` holds this, which is not an http(s) URL.
    NotHttp(String),
    /// A pinned key cannot be read: the failure.
    BadKey(String),
}

impl fmt::Display for Offline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Kept off by one order of the files, where the other says on.
        let by = |both: &Option<Disagreement>| match both {
            Some(both) => format!(
                " by {} ({}: {})",
                both.kept_off_by(),
                Order::Spec,
                both.spec
            ),
            None => String::new(),
        };
        match self {
            Offline::DefaultProviders(origin, both) => write!(
                f,
                "default-providers is off ({origin}){}: no catalog, no request",
                by(both)
            ),
            Offline::AutoUpdate(origin, both) => {
                write!(f, "provider-auto-update is off ({origin}){}", by(both))
            }
            Offline::NotHttp(value) => {
                let value = quoted(&redacted(value));
                write!(f, "CATWALK_URL={value} is not an http:// or https:// URL")
            }
            Offline::BadKey(failure) => write!(f, "a pinned key cannot be read: {failure}"),
        }
    }
}

/// Decides whether a start may go out, from the settings, the catalog URL
/// of the environment ([`super::EnvOptions::url`]) and the failure to read
/// the pinned keys, if any; the first reason to stay off wins, in this
/// order.
pub(crate) fn decide(
    settings: &Settings,
    url: &Result<Url, String>,
    bad_key: Option<String>,
) -> Network {
    let (providers, auto) = (&settings.default_providers, &settings.auto_update);
    let off = match (url, bad_key) {
        _ if !providers.value => {
            let orders = settings.default_providers_orders.clone();
            Offline::DefaultProviders(providers.origin.clone(), orders)
        }
        _ if !auto.value => {
            Offline::AutoUpdate(auto.origin.clone(), settings.auto_update_orders.clone())
        }
        (Err(value), _) => Offline::NotHttp(value.clone()),
        (Ok(_), Some(failure)) => Offline::BadKey(failure),
        (Ok(url), None) => return Network::Allowed(url.clone()),
    };
    Network::Off(off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Setting;
    use std::path::Path;

    #[test]
    fn every_reason_to_stay_off() {
        let url: Result<Url, String> = Ok("https://mirror.corp/v2/providers".parse().unwrap());
        let on = crate::config::defaults(Path::new("/w"));
        assert_eq!(
            decide(&on, &url, None),
            Network::Allowed(url.clone().unwrap())
        );
        let env = Origin::Env {
            name: "CRUSH_DISABLE_DEFAULT_PROVIDERS",
            value: "1".into(),
            dotenv: None,
        };
        let mut off = on.clone();
        off.default_providers = Setting {
            value: false,
            origin: env.clone(),
        };
        off.auto_update.value = false;
        assert_eq!(
            decide(&off, &url, None),
            Network::Off(Offline::DefaultProviders(env, None))
        );
        let mut off = on.clone();
        off.auto_update.value = false;
        assert!(matches!(
            decide(&off, &url, None),
            Network::Off(Offline::AutoUpdate(..))
        ));
        let not_http = Err("mirror.corp:8080".to_string());
        assert_eq!(
            decide(&on, &not_http, Some("bad".into())),
            Network::Off(Offline::NotHttp("mirror.corp:8080".into()))
        );
        assert_eq!(
            decide(&on, &url, Some("bad".into())),
            Network::Off(Offline::BadKey("bad".into()))
        );
    }
}
