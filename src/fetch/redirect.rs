//! Redirects, followed by hand (`Client::follow` in [`crate::fetch::http`]):
//! at most [`MAX_REDIRECTS`], only to http(s), never from https to
//! anything else, and no credential once a hop has left the first URL's
//! origin.

use reqwest::{StatusCode, Url};

use crate::fetch::source::redacted;

/// Most redirects followed for one request.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// Why a redirect was not followed. The URLs are as shown: a password
/// replaced by `***`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Redirect {
    /// More than five in a row.
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooMany,
    /// From https to another scheme.
    #[error("from https to {0}, which would drop encryption")]
    DropsEncryption(String),
    /// To something else than an http(s) URL.
    #[error("to {0}, which is not an http(s) URL")]
    NotHttp(String),
    /// A redirect whose `Location` is not a URL.
    #[error("{from} answered {status} with a Location that is not a URL")]
    BadLocation {
        /// The URL that answered.
        from: String,
        /// Its status.
        status: StatusCode,
    },
}

/// Whether to follow a redirect to `next` after requesting `previous`
/// (the original URL first): at most [`MAX_REDIRECTS`], only to http(s),
/// and never from https to anything else.
pub(crate) fn redirect_verdict(previous: &[Url], next: &Url) -> Result<(), Redirect> {
    if previous.len() > MAX_REDIRECTS {
        Err(Redirect::TooMany)
    } else if previous.last().is_some_and(|u| u.scheme() == "https") && next.scheme() != "https" {
        Err(Redirect::DropsEncryption(redacted(next.as_str())))
    } else if !matches!(next.scheme(), "http" | "https") {
        Err(Redirect::NotHttp(redacted(next.as_str())))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| u.parse().unwrap()).collect()
    }

    #[test]
    fn redirects_never_leave_https_and_stop_after_five() {
        let next = |u: &str| u.parse::<Url>().unwrap();
        assert!(redirect_verdict(&urls(&["http://a/"]), &next("https://b/")).is_ok());
        assert!(redirect_verdict(&urls(&["https://a/"]), &next("https://b/")).is_ok());
        let err = redirect_verdict(&urls(&["https://a/"]), &next("http://b/")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "from https to http://b/, which would drop encryption"
        );
        assert!(redirect_verdict(&urls(&["http://a/", "https://b/"]), &next("http://c/")).is_err());
        assert_eq!(
            redirect_verdict(&urls(&["http://a/"]), &next("file:///etc/passwd"))
                .unwrap_err()
                .to_string(),
            "to file:///etc/passwd, which is not an http(s) URL"
        );
        let five = urls(&[
            "http://a/0",
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/4",
        ]);
        assert!(redirect_verdict(&five, &next("http://a/5")).is_ok());
        let six = urls(&[
            "http://a/0",
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/4",
            "http://a/5",
        ]);
        assert_eq!(
            redirect_verdict(&six, &next("http://a/6"))
                .unwrap_err()
                .to_string(),
            "more than 5 redirects"
        );
    }
}
