//! The state file beside the cache, `providers.state.json`: what is known
//! about the cached bytes that the bytes themselves cannot say. It is bound
//! to them by their SHA-256 and ignored whenever it does not describe the
//! `providers.json` beside it (another program may have rewritten that
//! file); nothing in it is needed to read the catalog.
//!
//! # Format
//!
//! One JSON object, written whole (a temporary file renamed into place):
//!
//! | key | meaning |
//! |---|---|
//! | `sha256` | lowercase hex SHA-256 of the `providers.json` it describes |
//! | `file` | that file's identity when written (see [`crate::store::cache::identity`]); while the file keeps it, `sha256` is trusted without hashing |
//! | `etag`, `last_modified` | the validators the server sent with the bytes |
//! | `source` | where the bytes came from (a URL, a path, `embedded snapshot`) |
//! | `fetched_at` | when they were written, in seconds since the Unix epoch |
//! | `confirmed_at` | when they were last confirmed current: written by `update-providers`, or answered 200 (valid) or 304 by a refresh |
//! | `refresh` | the last automatic refresh: `at`, `url`, `outcome` (`unchanged`, `updated`, `failed`, `held`), `cause` when it failed, `held` (the findings it held back, one line each; `needs`, what a person must allow to apply it: `shrink`, `downgrade`, `key_move`, `signature`, none for a change that could not be reviewed (files written before it have `flags` instead, the flags that allowed it, read as the same); `sha256`, the held catalog's; `kept`, whether a person kept the cache over it), and `told`, whether a start-up has reported that failure |
//! | `signed_at` | when the cached catalog was signed, when a pinned key verified it |
//!
//! Keys it does not know are ignored, and every key but `sha256` may be
//! missing (files written by earlier versions have no `confirmed_at`).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::store::file;
use crate::store::validators::Validators;

/// What the state file records about the cached bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheState {
    /// Lowercase hex SHA-256 of the `providers.json` this state describes.
    pub sha256: String,
    /// The `crate::store::cache::identity` of that `providers.json` when it was
    /// written: while the file keeps it, its SHA-256 need not be computed
    /// again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Validators the server sent with those bytes.
    #[serde(flatten)]
    pub validators: Validators,
    /// Where the bytes came from.
    #[serde(default)]
    pub source: String,
    /// When they were written, in seconds since the Unix epoch.
    #[serde(default)]
    pub fetched_at: u64,
    /// When they were last confirmed current, in seconds since the Unix
    /// epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_at: Option<u64>,
    /// The last automatic refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<RefreshRecord>,
    /// When the cached catalog was signed (the `timestamp:` of its
    /// signature's trusted comment), when it was verified against a pinned
    /// key: an older signed catalog is not applied over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<u64>,
}

impl CacheState {
    /// Records how a refresh ended. A failure keeps `told` when it is the
    /// same failure as the last one, so that a start-up reports each
    /// distinct failure once rather than at every start. A document
    /// another program wrote, held and not yet settled, stays what is
    /// told until a refresh brings a document of its own (updated or held):
    /// a confirmation or a failure would otherwise hide it from the person
    /// who must review it.
    pub fn record_refresh(&mut self, record: RefreshRecord) {
        use RefreshOutcome::{Failed, Unchanged};
        let foreign = self.held().is_some_and(|(_, held)| held.foreign);
        if foreign && matches!(record.outcome, Unchanged | Failed) {
            return;
        }
        let told = match (&self.refresh, &record.cause) {
            (Some(last), Some(cause)) => last.told && last.cause.as_ref() == Some(cause),
            _ => false,
        };
        self.refresh = Some(RefreshRecord { told, ..record });
    }

    /// What the last refresh held back, when it did and no person has
    /// settled it yet ([`Held::kept`]).
    pub fn held(&self) -> Option<(&RefreshRecord, &Held)> {
        let refresh = self.refresh.as_ref()?;
        Some((refresh, refresh.held.as_ref().filter(|h| !h.kept)?))
    }

    /// Settles what the last refresh held back: a person keeps the cache
    /// over it. The URL it was held from, when there was one to settle.
    pub fn keep_over_held(&mut self) -> Option<String> {
        let refresh = self.refresh.as_mut()?;
        let held = refresh.held.as_mut().filter(|h| !h.kept)?;
        held.kept = true;
        Some(refresh.url.clone())
    }

    /// Whether a person kept the cache over the catalog whose SHA-256 is
    /// `sha256` (lowercase hex), held by the last refresh.
    pub fn kept_over(&self, sha256: &str) -> bool {
        self.refresh
            .as_ref()
            .and_then(|r| r.held.as_ref())
            .is_some_and(|h| h.kept && h.sha256.as_deref() == Some(sha256))
    }

    /// The last refresh's failure, when no start-up has reported it yet.
    pub fn untold_failure(&self) -> Option<&RefreshRecord> {
        self.refresh
            .as_ref()
            .filter(|r| r.outcome == RefreshOutcome::Failed && !r.told)
    }
}

/// How the last automatic refresh ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshRecord {
    /// When, in seconds since the Unix epoch.
    pub at: u64,
    /// The URL it asked.
    pub url: String,
    /// What came of it.
    pub outcome: RefreshOutcome,
    /// Why it failed, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Whether a start-up has told the user of this failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub told: bool,
    /// What a held refresh held back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
}

/// The changes a refresh held back for a person to review.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredHeld")]
pub struct Held {
    /// Each finding, one line.
    pub changes: Vec<String>,
    /// What a person must allow to apply it; none for a change that could
    /// not be reviewed (nothing allows it: the reason must go).
    #[serde(default)]
    pub needs: Vec<Need>,
    /// The held catalog's SHA-256 (lowercase hex), when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Whether a person kept the cache over it (`update-providers` with the
    /// catalog in use, or `--keep-current`): no start tells of it again,
    /// and a refresh that brings the same catalog leaves it held, quietly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
    /// Whether another program wrote it into the cache (then it was put
    /// aside, and the last reviewed document put back), rather than a
    /// refresh fetching it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub foreign: bool,
}

/// What a held change needs a person to allow before it is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Need {
    /// It keeps fewer than half of the providers or models it is compared
    /// with.
    Shrink,
    /// It was signed before the newest signed catalog seen.
    Downgrade,
    /// It sends a known key to a place it never reached.
    KeyMove,
    /// It is not signed as a pinned key requires: a signature given by
    /// hand.
    Signature,
}

/// [`Held`] as the state file has it: with `needs`, or, written by a build
/// before them, `flags`, the flags of `update-providers` that allowed the
/// same. `needs` that are not a list, or a need a later build added, are
/// passed over, as the build before passed over the key it did not know
/// (the rest of the state is not lost over them).
#[derive(Deserialize)]
struct StoredHeld {
    changes: Vec<String>,
    #[serde(default)]
    needs: Option<serde_json::Value>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    kept: bool,
    #[serde(default)]
    foreign: bool,
}

impl From<StoredHeld> for Held {
    fn from(stored: StoredHeld) -> Held {
        let needs = match stored.needs {
            Some(serde_json::Value::Array(needs)) => needs
                .into_iter()
                .filter_map(|need| serde_json::from_value(need).ok())
                .collect(),
            // The flags it wrote, by their words then.
            _ => (stored.flags.iter())
                .filter_map(|flag| match flag.as_str() {
                    "--allow-shrink" => Some(Need::Shrink),
                    "--allow-downgrade" => Some(Need::Downgrade),
                    "--allow-key-move" => Some(Need::KeyMove),
                    "--signature" => Some(Need::Signature),
                    _ => None,
                })
                .collect(),
        };
        Held {
            changes: stored.changes,
            needs,
            sha256: stored.sha256,
            kept: stored.kept,
            foreign: stored.foreign,
        }
    }
}

/// What came of an automatic refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshOutcome {
    /// The server confirmed the cache (304, or the same bytes again).
    Unchanged,
    /// A new catalog was swapped in.
    Updated,
    /// The refresh failed; the cache was kept.
    Failed,
    /// The new catalog needs a person: it was not applied (see
    /// [`RefreshRecord::held`]).
    Held,
}

impl RefreshOutcome {
    /// `unchanged`, `updated` or `failed`.
    pub fn word(self) -> &'static str {
        match self {
            RefreshOutcome::Unchanged => "unchanged",
            RefreshOutcome::Updated => "updated",
            RefreshOutcome::Failed => "failed",
            RefreshOutcome::Held => "held",
        }
    }
}

/// A state file that cannot be read: it is ignored, and the next update
/// replaces it.
#[derive(Debug, thiserror::Error)]
#[error(
    "the state file {} cannot be read ({why}); it is ignored, and replaced by the next update",
    path.display()
)]
pub(crate) struct Unreadable {
    path: PathBuf,
    why: file::FileError,
}

/// The state file at `path`, when it holds one (`Ok(None)` when it is
/// missing or not a state file: nothing in it is needed, and the next write
/// replaces it); why, when something else than a regular file stands
/// there, or it cannot be read.
pub(crate) fn read(path: &Path) -> Result<Option<CacheState>, Unreadable> {
    let read = file::read_regular(path, file::MAX_FILE_BYTES).map_err(|why| Unreadable {
        path: path.to_owned(),
        why,
    })?;
    Ok(read.and_then(|(bytes, _)| serde_json::from_slice(&bytes).ok()))
}

/// Seconds since the Unix epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The last second RFC 3339 can write: 9999-12-31T23:59:59Z.
const LAST_RFC3339: u64 = 253_402_300_799;

/// A time in seconds since the Unix epoch as `2026-11-30T10:00:00Z`, for
/// any time a signature or a file may hold: one past the year 9999, which
/// RFC 3339 cannot write (and humantime would panic on), is told in
/// seconds.
pub(crate) fn rfc3339(at: u64) -> String {
    if at > LAST_RFC3339 {
        return format!("{at} seconds after 1970 (after the year 9999)");
    }
    let time = UNIX_EPOCH + std::time::Duration::from_secs(at);
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(cause: &str) -> RefreshRecord {
        RefreshRecord {
            at: 1,
            url: "http://x/".into(),
            outcome: RefreshOutcome::Failed,
            cause: Some(cause.into()),
            told: false,
            held: None,
        }
    }

    /// A failure is told once; the same failure again stays told, another
    /// one is told anew, and a success clears it.
    /// A held document another program wrote is told until a refresh
    /// brings one of its own.
    #[test]
    fn a_foreign_hold_outlasts_a_confirmation_or_a_failure() {
        let mut state = CacheState::default();
        state.record_refresh(RefreshRecord {
            outcome: RefreshOutcome::Held,
            cause: None,
            held: Some(Held {
                changes: vec!["moves a key".into()],
                foreign: true,
                ..Held::default()
            }),
            ..failed("")
        });
        for outcome in [RefreshOutcome::Unchanged, RefreshOutcome::Failed] {
            state.record_refresh(RefreshRecord {
                outcome,
                ..failed("refused")
            });
            assert!(state.held().is_some_and(|(_, h)| h.foreign), "{outcome:?}");
        }
        state.record_refresh(RefreshRecord {
            outcome: RefreshOutcome::Updated,
            cause: None,
            ..failed("")
        });
        assert!(state.held().is_none());
    }

    #[test]
    fn each_distinct_failure_is_told_once() {
        let mut state = CacheState::default();
        state.record_refresh(failed("refused"));
        assert!(state.untold_failure().is_some());
        state.refresh.as_mut().unwrap().told = true;
        state.record_refresh(failed("refused"));
        assert!(state.untold_failure().is_none());
        state.record_refresh(failed("timed out"));
        assert_eq!(
            state.untold_failure().unwrap().cause.as_deref(),
            Some("timed out")
        );
        state.record_refresh(RefreshRecord {
            outcome: RefreshOutcome::Unchanged,
            cause: None,
            ..failed("")
        });
        assert!(state.untold_failure().is_none());
        state.record_refresh(failed("timed out"));
        assert!(
            state.untold_failure().is_some(),
            "after a success, told anew"
        );
    }

    /// Any time a file may hold is written, none panics.
    #[test]
    fn every_time_is_written_without_a_panic() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(LAST_RFC3339), "9999-12-31T23:59:59Z");
        assert_eq!(
            rfc3339(LAST_RFC3339 + 1),
            "253402300800 seconds after 1970 (after the year 9999)"
        );
        assert!(rfc3339(u64::MAX).starts_with("18446744073709551615 seconds"));
    }

    /// A state written by an earlier version (no confirmation, no refresh)
    /// is read, and unknown keys are ignored.
    #[test]
    fn older_and_newer_state_files_are_read() {
        let old = br#"{"sha256":"ab","etag":"\"e\"","source":"s","fetched_at":5}"#;
        let state: CacheState = serde_json::from_slice(old).unwrap();
        assert_eq!(state.confirmed_at, None);
        assert_eq!(state.validators.etag.as_deref(), Some("\"e\""));
        let newer = br#"{"sha256":"ab","future":{"x":1},"confirmed_at":7}"#;
        let state: CacheState = serde_json::from_slice(newer).unwrap();
        assert_eq!(state.confirmed_at, Some(7));
        let text = serde_json::to_string(&CacheState {
            refresh: Some(failed("x")),
            ..state
        })
        .unwrap();
        assert!(text.contains(r#""outcome":"failed""#), "{text}");
        assert!(!text.contains("told"), "false is not written: {text}");
    }

    /// What was held is read with its needs; one written by the build
    /// before them, with the flags that allowed it, is read as the same
    /// needs; a need of a later build is passed over, the rest kept.
    #[test]
    fn what_was_held_is_read_as_written_then_and_now() {
        let held = |json: &str| serde_json::from_str::<Held>(json).unwrap();
        let now = held(r#"{"changes":["x"],"needs":["shrink","key_move"],"sha256":"ab"}"#);
        assert_eq!(now.needs, [Need::Shrink, Need::KeyMove]);
        assert_eq!(now.sha256.as_deref(), Some("ab"));
        let before = held(
            r#"{"changes":["x"],"flags":["--allow-shrink","--allow-downgrade","--allow-key-move"],"kept":true}"#,
        );
        assert_eq!(before.needs, [Need::Shrink, Need::Downgrade, Need::KeyMove]);
        assert!(before.kept);
        assert_eq!(
            held(r#"{"changes":["x"],"flags":["--signature"]}"#).needs,
            [Need::Signature]
        );
        assert_eq!(held(r#"{"changes":["x"],"flags":[]}"#).needs, []);
        assert_eq!(
            held(r#"{"changes":["x"],"needs":["later",{"a":1},"downgrade"]}"#).needs,
            [Need::Downgrade]
        );
        let written = serde_json::to_value(&now).unwrap();
        assert_eq!(written["needs"], serde_json::json!(["shrink", "key_move"]));
        assert!(written.get("flags").is_none(), "{written}");
        assert_eq!(held(&written.to_string()), now);
        // A whole state file of the build before, its hold read.
        let state: CacheState = serde_json::from_str(
            r#"{"sha256":"ab","refresh":{"at":1,"url":"u","outcome":"held","held":{"changes":["y"],"flags":["--allow-key-move"],"sha256":"cd"}}}"#,
        )
        .unwrap();
        assert_eq!(state.held().unwrap().1.needs, [Need::KeyMove]);
    }

    /// A `needs` that is not a list (written by hand, or by a later build)
    /// costs neither the state nor the hold: it is passed over, as the
    /// build before passed over a key it did not know, and the flags
    /// beside it still tell what the hold needs.
    #[test]
    fn needs_that_are_not_a_list_lose_nothing_else() {
        for needs in ["5", r#""shrink""#, "null", r#"{"a":1}"#, "true"] {
            let text = format!(
                r#"{{"sha256":"ab","signed_at":7,"refresh":{{"at":1,"url":"u","outcome":"held","held":{{"changes":["y"],"needs":{needs},"flags":["--allow-shrink"],"sha256":"cd"}}}}}}"#
            );
            let state: CacheState = serde_json::from_str(&text).expect(&text);
            assert_eq!(state.signed_at, Some(7), "{text}");
            let (_, held) = state.held().expect(&text);
            assert_eq!(held.needs, [Need::Shrink], "{text}");
            assert_eq!(held.sha256.as_deref(), Some("cd"), "{text}");
        }
    }
}
