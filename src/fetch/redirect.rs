//! Redirects, followed by hand: at most [`MAX_REDIRECTS`], only to
//! http(s), never from https to anything else, and no credential once a
//! hop has left the first URL's origin.

use reqwest::header::{self, HeaderMap};
use reqwest::{StatusCode, Url};

use crate::fetch::classify;
use crate::fetch::http::{Attempt, FetchError};
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

/// Sends the GET of `on` with `headers`, following redirects by hand
/// ([`redirect_verdict`]), and returns the last answer. Once a hop has
/// left the first URL's origin, no later hop carries a credential: no
/// `Authorization` (the Hyper key) and no user and password of a URL
/// (which the client sends as `Authorization: Basic`). The client's own
/// policy compared each hop with the one before only and started each
/// from the first request's headers, so a second hop within the new host
/// got the key back, as Go's client did before CVE-2024-45336's fix
/// (Crush is built with a Go that has it).
pub(crate) async fn follow(
    client: &reqwest::Client,
    on: &Attempt<'_>,
    mut headers: HeaderMap,
) -> Result<reqwest::Response, FetchError> {
    let mut chain = vec![on.url.clone()];
    let mut left = false;
    loop {
        let current = chain.last().expect("the first URL is there");
        let response = client
            .get(current.clone())
            .headers(headers.clone())
            .send()
            .await
            .map_err(|e| classify::failure(on, e))?;
        let status = response.status();
        let location = response.headers().get(header::LOCATION);
        let redirects = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
        let (true, Some(location)) = (redirects, location) else {
            return Ok(response);
        };
        let mut next = location
            .to_str()
            .ok()
            .and_then(|l| current.join(l).ok())
            .ok_or_else(|| {
                FetchError::Redirect(Redirect::BadLocation {
                    from: redacted(current.as_str()),
                    status,
                })
            })?;
        redirect_verdict(&chain, &next).map_err(FetchError::Redirect)?;
        left |= next.origin() != on.url.origin();
        if left {
            headers.remove(header::AUTHORIZATION);
            let _ = next.set_username("");
            let _ = next.set_password(None);
        }
        on.redirects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(next.clone());
        chain.push(next);
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
