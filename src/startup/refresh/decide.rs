//! What a refresh does with the answer it got, decided without I/O from
//! the answer and the cache it holds, as [`crate::startup::decide`]
//! decides whether to ask at all.

use super::request::{Answer, explain};
use super::save::NewCatalog;
use crate::error::Cause;
use crate::fetch::http::FetchError;
use crate::fetch::source::ReadError;
use crate::fetch::watch::Signal;
use crate::store::digest;
use crate::store::state::{CacheState, Held, Need};
use crate::store::validators::Validators;
use crate::trust::policy;
use reqwest::Url;

/// What a refresh does next.
#[derive(Debug)]
pub(crate) enum Step<'b> {
    /// The cache is current: it is confirmed, with the validators the
    /// server sent with the same bytes again (a 304 brings none).
    Confirm(Option<Validators>),
    /// A 304 with no cache to confirm (not reachable: an unconditional
    /// request gets no 304 past `fetch`, which refuses it).
    NoCache,
    /// A new document, valid and signed as it must be: reviewed, then
    /// saved or held.
    Take(NewCatalog<'b>),
    /// Not signed as it must be: not a failure of the network, but a
    /// document that needs a person.
    Hold(Held),
    /// The refresh failed, for this reason (with its fix): recorded.
    Fail(String),
    /// A person ended the refresh they waited for (the exit code).
    Interrupted(Signal),
}

/// What to do with `answer` from `url`, the cache's SHA-256 being `cached`
/// (`None`: no valid cache).
pub(crate) fn decide<'b>(
    answer: Result<Answer<'b>, Cause>,
    cached: Option<&[u8; 32]>,
    url: &Url,
) -> Step<'b> {
    match answer {
        Ok(Answer::NotModified) if cached.is_none() => Step::NoCache,
        Ok(Answer::NotModified) => Step::Confirm(None),
        Ok(Answer::Catalog {
            bytes,
            catalog,
            validators,
            signed_at,
        }) => {
            let digest = digest::sha256(bytes);
            // A server that ignores validators sent the same bytes.
            if cached == Some(&digest) {
                return Step::Confirm(Some(validators));
            }
            Step::Take(NewCatalog {
                bytes,
                digest,
                catalog,
                validators,
                signed_at,
            })
        }
        Err(Cause::Read(ReadError::Fetch(FetchError::Interrupted(code)))) => {
            Step::Interrupted(code)
        }
        // Held until a person gives a signature by hand.
        Err(Cause::Signature(e)) => Step::Hold(Held {
            needs: vec![Need::Signature],
            ..policy::held_for(format!("the new catalog was refused: {e}"), None)
        }),
        Err(e) => Step::Fail(explain(&e, url)),
    }
}

/// What a held document comes to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OnHold {
    /// Held again, the document a person kept the cache over: settled,
    /// the cache confirmed, and said no more (until the server serves
    /// another).
    Quiet,
    /// Recorded in the state, for every start to tell.
    Record(Held),
}

/// What `held` comes to, the cache's state being `state`.
pub(crate) fn on_hold(held: Held, state: Option<&CacheState>) -> OnHold {
    let kept = state.is_some_and(|s| held.sha256.as_deref().is_some_and(|d| s.kept_over(d)));
    match kept {
        true => OnHold::Quiet,
        false => OnHold::Record(held),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::digest::hex;
    use crate::store::state::RefreshOutcome;
    use crate::store::state::RefreshRecord;
    use crate::trust::signature::SignatureError;

    /// Two documents: the one cached, and a new one.
    const OLD: &[u8] = br#"[{"id":"a","name":"old"}]"#;
    const NEW: &[u8] = br#"[{"id":"a","name":"new"}]"#;

    fn body(bytes: &[u8]) -> Result<Answer<'_>, Cause> {
        Ok(Answer::Catalog {
            bytes,
            catalog: crate::catalog::validate(bytes).unwrap(),
            validators: Validators {
                etag: Some("\"e\"".into()),
                last_modified: None,
            },
            signed_at: None,
        })
    }

    /// Every kind of answer, with and without a cache.
    #[test]
    fn what_a_refresh_does_with_its_answer() {
        let old = digest::sha256(OLD);
        let etag = Validators {
            etag: Some("\"e\"".into()),
            last_modified: None,
        };
        type Case = (
            Result<Answer<'static>, Cause>,
            Option<[u8; 32]>,
            &'static str,
        );
        let cases: Vec<Case> = vec![
            (Ok(Answer::NotModified), Some(old), "confirm"),
            (Ok(Answer::NotModified), None, "no cache"),
            (body(OLD), Some(old), "confirm with validators"),
            (body(NEW), Some(old), "take"),
            (body(NEW), None, "take"),
            (
                Err(Cause::Read(ReadError::Fetch(FetchError::Interrupted(
                    Signal::Interrupt,
                )))),
                Some(old),
                "interrupted",
            ),
            (
                Err(Cause::Signature(SignatureError::Missing("none".into()))),
                Some(old),
                "hold",
            ),
            (
                Err(Cause::Read(ReadError::Fetch(
                    FetchError::UnexpectedNotModified,
                ))),
                None,
                "fail",
            ),
        ];
        for (answer, cached, expected) in cases {
            let url = Url::parse("https://mirror.example/v2/providers").unwrap();
            let step = decide(answer, cached.as_ref(), &url);
            let got = match &step {
                Step::Confirm(None) => "confirm",
                Step::Confirm(Some(v)) if *v == etag => "confirm with validators",
                Step::Confirm(Some(_)) => "confirm with other validators",
                Step::NoCache => "no cache",
                Step::Take(new) if new.digest == digest::sha256(NEW) => "take",
                Step::Take(_) => "take the wrong bytes",
                Step::Hold(held) if held.changes[0].starts_with("the new catalog was refused") => {
                    "hold"
                }
                Step::Hold(_) => "hold for another reason",
                Step::Fail(_) => "fail",
                Step::Interrupted(Signal::Interrupt) => "interrupted",
                Step::Interrupted(_) => "interrupted otherwise",
            };
            assert_eq!(got, expected, "{step:?}");
        }
    }

    /// A held document is recorded, unless a person kept the cache over
    /// exactly that one.
    #[test]
    fn a_document_a_person_kept_the_cache_over_is_held_quietly() {
        let held = |sha256: &str| Held {
            changes: vec!["moves a key".into()],
            sha256: Some(sha256.into()),
            ..Held::default()
        };
        let kept_over = |sha256: &str| CacheState {
            refresh: Some(RefreshRecord {
                at: 1,
                url: "https://mirror.example".into(),
                outcome: RefreshOutcome::Held,
                cause: None,
                told: false,
                held: Some(Held {
                    kept: true,
                    ..held(sha256)
                }),
            }),
            ..CacheState::default()
        };
        let a = hex(&digest::sha256(b"a"));
        let b = hex(&digest::sha256(b"b"));
        assert_eq!(on_hold(held(&a), Some(&kept_over(&a))), OnHold::Quiet);
        assert_eq!(
            on_hold(held(&b), Some(&kept_over(&a))),
            OnHold::Record(held(&b))
        );
        assert_eq!(on_hold(held(&a), None), OnHold::Record(held(&a)));
        assert_eq!(
            on_hold(held(&a), Some(&CacheState::default())),
            OnHold::Record(held(&a))
        );
    }
}
