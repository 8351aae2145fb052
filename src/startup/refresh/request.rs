//! One request for a document, its answer checked: valid, and signed as a
//! pinned key requires.

use std::time::Duration;

use reqwest::Url;

use crate::catalog::{self, Target};
use crate::fetch::http::{self, Bearer, FetchError, FetchOptions, Fetched, Session};
use crate::fetch::source::Source;
use crate::fetch::watch::Watch;
use crate::store::validators::Validators;
use crate::trust::signature::{SignatureError, TrustedKeys};

/// Bound on establishing the connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What one request brought, checked.
#[derive(Debug)]
pub enum Answer {
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

/// Why a request brought no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The fetch failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The body is not a valid catalog.
    #[error("not a valid catalog: {0}")]
    Invalid(#[from] catalog::ValidationError),
    /// The body is not a valid Hyper provider.
    #[error("not a valid Hyper provider: {0}")]
    InvalidHyper(catalog::ValidationError),
    /// A pinned key's signature is missing or wrong.
    #[error("refused: {0}")]
    Signature(#[from] SignatureError),
}

impl RequestError {
    /// The cause, and the one thing that fixes it where there is one: what
    /// start-up warnings and the state file's failure record say.
    pub fn explain(&self) -> String {
        match self {
            RequestError::Fetch(fetch) if !matches!(fetch, FetchError::Interrupted(_)) => {
                format!("{fetch}; {}", fetch.refresh_hint())
            }
            other => other.to_string(),
        }
    }
}

/// One request for `target`'s document at `url`, conditional on
/// `conditional`, within `timeout` (and [`CONNECT_TIMEOUT`] to connect),
/// carrying `bearer` when there is one; a 200's body must be a valid
/// document and, with `keys` pinned, come with a valid signature
/// (`URL.minisig`, fetched with the same bounds). `watch` is told of the
/// catalog's body and may end either ([`FetchError::Interrupted`]).
pub fn request(
    target: Target,
    url: &Url,
    timeout: Duration,
    conditional: Validators,
    keys: Option<&TrustedKeys>,
    watch: &Watch,
    bearer: Option<&Bearer>,
) -> Result<Answer, RequestError> {
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
    match session.fetch(url, &options)? {
        Fetched::NotModified => Ok(Answer::NotModified),
        Fetched::Body { bytes, validators } => {
            target.validate(&bytes).map_err(|e| match target {
                Target::Catalog => RequestError::Invalid(e),
                Target::Hyper => RequestError::InvalidHyper(e),
            })?;
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
                        .load_signature(None, &options, &session)
                        .map_err(SignatureError::from)?
                        .ok_or_else(|| {
                            SignatureError::Missing(format!("no signature for {url}"))
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
