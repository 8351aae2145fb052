//! No project file routes a credential. Crush loads a project's `.env`
//! before anything else, and so does this tool: its proxy variables,
//! `SSL_CERT_FILE` and `HYPER_URL` would decide where a request goes and
//! whom it trusts on the way. A request that carries a credential (the
//! Hyper key; a URL's user name and password) takes its proxy and CA from
//! the user's own environment alone ([`users_env`], which the HTTP client
//! is built with for such a request), and its URL too: a `.env` that sets
//! one of them is said in one line at a start (the request goes without
//! it) and refused for a person's command, naming the variable
//! ([`Routed`]).

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use reqwest::Url;

use super::proxy::{self, ProxyEnv, Route};
use crate::config::shown_path;
use crate::environment::{self, Source};

/// A credential a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// `Authorization: Bearer` with the Hyper key.
    HyperKey,
    /// A user name, and a password, in its URL.
    UrlUser,
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Credential::HyperKey => "the Hyper key",
            Credential::UrlUser => "the user name and password of its URL",
        })
    }
}

/// What a request for `url` carries, `bearer` saying whether it sends a
/// key: the key first.
pub(crate) fn carried(url: &Url, bearer: bool) -> Option<Credential> {
    if bearer {
        Some(Credential::HyperKey)
    } else if !url.username().is_empty() || url.password().is_some() {
        Some(Credential::UrlUser)
    } else {
        None
    }
}

/// A variable as a request carrying a credential reads it: the user's
/// own environment's, never a `.env` file's.
pub(crate) fn users_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}

/// A variable of a project's `.env` that would choose something of a
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromDotEnv {
    /// What it would choose: `proxy`, `CA`, `URL`.
    pub role: &'static str,
    /// Its name.
    pub name: &'static str,
    /// The `.env` file.
    pub path: PathBuf,
    /// Its line there.
    pub line: usize,
}

impl fmt::Display for FromDotEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "its {} ({} at {}:{})",
            self.role,
            self.name,
            shown_path(&self.path),
            self.line
        )
    }
}

/// `name` as a `.env` file sets it (choosing the request's `role`), when
/// one does.
pub(crate) fn from_dotenv(role: &'static str, name: &'static str) -> Option<FromDotEnv> {
    match environment::source(name)? {
        Source::DotEnv(path, line) => Some(FromDotEnv {
            role,
            name,
            path,
            line,
        }),
        Source::Process => None,
    }
}

/// A request carrying a credential whose proxy, CA or URL a project's
/// `.env` would choose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this request carries {credential}, and a project's .env would choose {}: it is not sent", self.listed())]
pub struct Routed {
    /// What it carries.
    pub credential: Credential,
    /// The variables of the `.env`, at least one.
    pub by: Vec<FromDotEnv>,
}

impl Routed {
    /// What a request for `url` carrying a credential (`bearer`: the Hyper
    /// key) would take from a project's `.env` as the environment stands:
    /// its URL (`url_from_dotenv`, when a `.env` chose it), its proxy and
    /// its CA; `None` when nothing, or when it carries no credential.
    pub(crate) fn of(
        url: &Url,
        bearer: bool,
        url_from_dotenv: Option<FromDotEnv>,
    ) -> Option<Routed> {
        let credential = carried(url, bearer)?;
        let proxy = match proxy::route(url, &ProxyEnv::current()) {
            Route::Proxy(_, name) => from_dotenv("proxy", name),
            _ => None,
        };
        let ca = from_dotenv("CA", "SSL_CERT_FILE").filter(|_| url.scheme() == "https");
        let by: Vec<FromDotEnv> = url_from_dotenv.into_iter().chain(proxy).chain(ca).collect();
        (!by.is_empty()).then_some(Routed { credential, by })
    }

    /// The variables, each as "its proxy (HTTPS_PROXY at /p/.env:1)".
    pub(crate) fn listed(&self) -> String {
        and(self.by.iter().map(ToString::to_string).collect())
    }

    /// What to do: set them in one's own environment (`to_use`: saying
    /// that this is how they are used), or remove them from the `.env`
    /// (the one a process reads: `environment::installed`).
    pub(crate) fn fix(&self, to_use: bool) -> String {
        let names = and(self.by.iter().map(|v| v.name.to_owned()).collect());
        let them = if self.by.len() == 1 { "it" } else { "them" };
        let file = self.by.first().map(|v| shown_path(&v.path));
        let mut fix = format!("set {names} in your own environment");
        if to_use {
            fix.push_str(&format!(" to use {them}"));
        }
        format!("{fix}, or remove {them} from {}", file.unwrap_or_default())
    }
}

/// `items` joined as words: `a`, `a and b`, `a, b and c`.
fn and(items: Vec<String>) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_or_a_url_user_is_a_credential() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(carried(&url("https://h.example/"), false), None);
        assert_eq!(
            carried(&url("https://h.example/"), true),
            Some(Credential::HyperKey)
        );
        for with_user in ["https://u:p@h.example/", "https://token@h.example/"] {
            assert_eq!(
                carried(&url(with_user), false),
                Some(Credential::UrlUser),
                "{with_user}"
            );
        }
    }

    #[test]
    fn what_a_dotenv_would_choose_is_named_with_its_fix() {
        let var = |role, name, line| FromDotEnv {
            role,
            name,
            path: PathBuf::from("/p/.env"),
            line,
        };
        let routed = Routed {
            credential: Credential::HyperKey,
            by: vec![
                var("proxy", "HTTPS_PROXY", 1),
                var("CA", "SSL_CERT_FILE", 2),
            ],
        };
        assert_eq!(
            routed.to_string(),
            "this request carries the Hyper key, and a project's .env would choose its proxy (HTTPS_PROXY at /p/.env:1) and its CA (SSL_CERT_FILE at /p/.env:2): it is not sent"
        );
        assert_eq!(
            routed.fix(false),
            "set HTTPS_PROXY and SSL_CERT_FILE in your own environment, or remove them from /p/.env"
        );
        assert!(routed.fix(true).contains("environment to use them, or"));
        let one = Routed {
            by: vec![var("URL", "HYPER_URL", 3)],
            ..routed
        };
        assert_eq!(
            one.fix(true),
            "set HYPER_URL in your own environment to use it, or remove it from /p/.env"
        );
    }
}
