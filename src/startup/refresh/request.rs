//! One request for a document, its answer checked: valid, and signed as a
//! pinned key requires.

use std::time::Duration;

use reqwest::Url;

use super::Request;
use crate::catalog::{Catalog, Target};
use crate::error::Cause;
use crate::fetch::http::{self, FetchError, FetchOptions, Fetched, Session};
use crate::fetch::source::{ReadError, Source};
use crate::store::validators::Validators;
use crate::trust::signature::SignatureError;

/// Bound on establishing the connection.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What one request brought, checked; a new document borrows the body
/// it was read from.
#[derive(Debug)]
pub(crate) enum Answer<'b> {
    /// `304 Not Modified`.
    NotModified,
    /// A valid catalog and the validators sent with it.
    Catalog {
        /// Its bytes.
        bytes: &'b [u8],
        /// The document read from them, valid: read once, here, and
        /// handed on to the review and the save.
        catalog: Catalog<'b>,
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
pub(crate) fn explain(cause: &Cause, url: &Url) -> String {
    match cause {
        Cause::Read(ReadError::Fetch(fetch)) if !matches!(fetch, FetchError::Interrupted(_)) => {
            format!("{fetch}; {}", fetch.refresh_hint(url))
        }
        other => other.chain().join(": "),
    }
}

/// One request for `target`'s document as `asked` (its URL, within its
/// timeout and [`CONNECT_TIMEOUT`] to connect, carrying its bearer when
/// there is one), conditional on `conditional`; a 200's body must be a
/// valid document and, with keys pinned, come with a valid signature
/// (`URL.minisig`, fetched with the same bounds). Its watch is told of the
/// catalog's body and may end either ([`FetchError::Interrupted`]). A
/// 200's body is kept in `body`, which the answer borrows.
pub(crate) fn request<'b>(
    target: Target,
    asked: &Request,
    conditional: Validators,
    body: &'b mut Vec<u8>,
) -> Result<Answer<'b>, Cause> {
    let (url, timeout, watch) = (&asked.url, asked.timeout, &asked.watch);
    let options = FetchOptions {
        timeout,
        connect_timeout: CONNECT_TIMEOUT.min(timeout),
        conditional,

        max_body: http::MAX_BODY_BYTES,
        watch: watch.clone(),
        document: target,
        bearer: asked.bearer.clone(),
    };
    // One session: the signature comes on the catalog's connection.
    let session = Session::default();
    match session.fetch(url, &options).map_err(ReadError::from)? {
        Fetched::NotModified => Ok(Answer::NotModified),
        Fetched::Body { bytes, validators } => {
            *body = bytes;
            let bytes: &'b [u8] = body;
            let catalog = target
                .validate(bytes)
                .map_err(|e| Cause::invalid(target, e))?;
            let signed_at = match &asked.keys {
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
                    Some(keys.verify(bytes, &signature, crate::store::state::now())?)
                }
            };
            Ok(Answer::Catalog {
                bytes,
                catalog,
                validators,
                signed_at,
            })
        }
    }
}
