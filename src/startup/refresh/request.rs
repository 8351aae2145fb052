//! One request for a document, its answer checked: valid, and signed as a
//! pinned key requires.

use std::time::Duration;

use reqwest::Url;

use crate::catalog::Target;
use crate::error::Cause;
use crate::fetch::http::{self, Bearer, FetchError, FetchOptions, Fetched, Session};
use crate::fetch::source::{ReadError, Source};
use crate::fetch::watch::Watch;
use crate::store::validators::Validators;
use crate::trust::signature::{SignatureError, TrustedKeys};

/// Bound on establishing the connection.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What one request brought, checked.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `304 Not Modified`.
    NotModified,
    /// A valid catalog and the validators sent with it.
    Catalog {
        /// Its bytes.
        bytes: Vec<u8>,
        /// The server's validators.
        validators: Validators,
        /// When it was signed, when keys are pinned (then it was verified).
        signed_at: Option<u64>,
    },
}

/// The cause of a refresh's failure, and the one thing that fixes it
/// where there is one: what start-up warnings and the state file's failure
/// record say. A request fails with the same [`Cause`] as an update of the
/// same source. `url` is the one asked.
pub(crate) fn explain(cause: &Cause, url: &str) -> String {
    match cause {
        Cause::Read(ReadError::Fetch(fetch)) if !matches!(fetch, FetchError::Interrupted(_)) => {
            format!("{fetch}; {}", fetch.refresh_hint(url))
        }
        other => other.to_string(),
    }
}

/// One request for `target`'s document at `url`, conditional on
/// `conditional`, within `timeout` (and [`CONNECT_TIMEOUT`] to connect),
/// carrying `bearer` when there is one; a 200's body must be a valid
/// document and, with `keys` pinned, come with a valid signature
/// (`URL.minisig`, fetched with the same bounds). `watch` is told of the
/// catalog's body and may end either ([`FetchError::Interrupted`]).
pub(crate) fn request(
    target: Target,
    url: &Url,
    timeout: Duration,
    conditional: Validators,
    keys: Option<&TrustedKeys>,
    watch: &Watch,
    bearer: Option<&Bearer>,
) -> Result<Answer, Cause> {
    let options = FetchOptions {
        timeout,
        connect_timeout: CONNECT_TIMEOUT.min(timeout),
        conditional,

        max_body: http::MAX_BODY_BYTES,
        watch: watch.clone(),
        document: target,
        bearer: bearer.cloned(),
    };
    // One session: the signature comes on the catalog's connection.
    let session = Session::default();
    match session.fetch(url, &options).map_err(ReadError::from)? {
        Fetched::NotModified => Ok(Answer::NotModified),
        Fetched::Body { bytes, validators } => {
            target
                .validate(&bytes)
                .map_err(|e| Cause::invalid(target, e))?;
            let signed_at = match keys {
                None => None,
                Some(keys) => {
                    let options = FetchOptions {
                        conditional: Validators::default(),
                        watch: watch.unreported(),
                        ..options
                    };
                    let source = Source::Url(url.clone());
                    // A URL's signature is fetched beside it: none at all
                    // is a missing one, never a pass.
                    let signature = source
                        .load_signature(None, &options, &session)?
                        .ok_or_else(|| {
                            SignatureError::Missing(format!(
                                "no signature for {}",
                                crate::fetch::source::redacted(url.as_str())
                            ))
                        })?;
                    Some(keys.verify(&bytes, &signature, crate::store::state::now())?)
                }
            };
            Ok(Answer::Catalog {
                bytes,
                validators,
                signed_at,
            })
        }
    }
}
