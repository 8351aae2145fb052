//! What an update does, decided without any I/O: from what it was asked,
//! what the target holds and the review of the new document, a write, a
//! confirmation, nothing, or why not.

use super::{Output, Warning};
use crate::error::Cause;
use crate::trust::guard::Review;

/// What an update does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Write the new document (staged before the review, so that the
    /// cache's lock is held while it is made).
    Write,
    /// The cache already holds these bytes: only the confirmation (and
    /// what the memory learns) is new.
    Confirm,
    /// Nothing: a dry run, standard output, or an output file that holds
    /// these bytes already.
    Nothing,
}

/// What an update to `output` does, asked for a dry run or not, the
/// target holding the same bytes already or not.
pub(crate) fn action(output: &Output, dry_run: bool, up_to_date: bool) -> Action {
    match output {
        _ if dry_run => Action::Nothing,
        Output::Stdout => Action::Nothing,
        _ if !up_to_date => Action::Write,
        Output::Cache => Action::Confirm,
        Output::File(_) => Action::Nothing,
    }
}

/// Why the bytes are not the ones `--sha256` named (`expected`, any case),
/// their SHA-256 being `actual` (lowercase hex).
pub(crate) fn check_digest(expected: Option<&str>, actual: &str) -> Result<(), Cause> {
    match expected {
        Some(expected) if !expected.eq_ignore_ascii_case(actual) => Err(Cause::Digest {
            expected: expected.to_ascii_lowercase(),
            actual: actual.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// What a person allowed of what a refresh would hold.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Allowed {
    /// `--allow-shrink`.
    pub shrink: bool,
    /// `--allow-downgrade`.
    pub downgrade: bool,
    /// `--allow-key-move`.
    pub key_move: bool,
}

/// Whether the update may go on, given its `review` (or why none could
/// be made): a person may apply what a refresh would hold, but must say
/// so (the embedded snapshot, which they installed, is always applied);
/// what they did not allow is a refusal, and so is a review that could
/// not be made. The review, and the notices: each key move they allowed,
/// told (as what would happen, in a `dry_run`).
pub(crate) fn allow(
    review: Result<Review, String>,
    allowed: Allowed,
    embedded: bool,
    dry_run: bool,
) -> Result<(Review, Vec<Warning>), Cause> {
    let review = review.map_err(Cause::Review)?;
    let unallowed = review.unallowed(
        allowed.shrink || embedded,
        allowed.downgrade,
        allowed.key_move || embedded,
    );
    if !unallowed.is_clear() {
        return Err(Cause::Refused(unallowed));
    }
    let moved = review
        .moves
        .iter()
        .map(|moved| Warning::KeyMoveAllowed {
            moved: moved.clone(),
            dry_run,
        })
        .collect();
    Ok((review, moved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::guard::Downgrade;
    use std::path::PathBuf;

    /// Every combination of target, dry run and bytes already there.
    #[test]
    fn what_an_update_does() {
        let file = Output::File(PathBuf::from("out.json"));
        let cases = [
            (Output::Cache, false, false, Action::Write),
            (Output::Cache, false, true, Action::Confirm),
            (Output::Cache, true, false, Action::Nothing),
            (Output::Cache, true, true, Action::Nothing),
            (file.clone(), false, false, Action::Write),
            (file.clone(), false, true, Action::Nothing),
            (file, true, false, Action::Nothing),
            (Output::Stdout, false, false, Action::Nothing),
            (Output::Stdout, true, false, Action::Nothing),
        ];
        for (output, dry_run, up_to_date, expected) in cases {
            assert_eq!(
                action(&output, dry_run, up_to_date),
                expected,
                "{output:?}, dry run {dry_run}, up to date {up_to_date}"
            );
        }
    }

    #[test]
    fn a_digest_is_compared_in_any_case() {
        assert!(check_digest(None, "ab").is_ok());
        assert!(check_digest(Some("AB"), "ab").is_ok());
        let Err(Cause::Digest { expected, actual }) = check_digest(Some("CD"), "ab") else {
            panic!("matched")
        };
        assert_eq!((expected.as_str(), actual.as_str()), ("cd", "ab"));
    }

    /// A review that could not be made refuses; what was not allowed
    /// refuses; the embedded snapshot needs no flag for a shrink; what
    /// was allowed goes on.
    #[test]
    fn what_a_person_did_not_allow_is_refused() {
        assert!(matches!(
            allow(Err("unreadable".into()), Allowed::default(), true, false),
            Err(Cause::Review(why)) if why == "unreadable"
        ));
        let downgrade = Review {
            downgrade: Some(Downgrade {
                signed: 1,
                newest: 2,
            }),
            ..Review::default()
        };
        assert!(matches!(
            allow(Ok(downgrade.clone()), Allowed::default(), true, false),
            Err(Cause::Refused(_))
        ));
        let allowed = Allowed {
            downgrade: true,
            ..Allowed::default()
        };
        assert_eq!(
            allow(Ok(downgrade.clone()), allowed, false, false).unwrap(),
            (downgrade, Vec::new())
        );
        assert!(allow(Ok(Review::default()), Allowed::default(), false, false).is_ok());
    }
}
