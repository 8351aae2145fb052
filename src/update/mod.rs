//! `update-providers`, and the one application of a new document that it
//! shares with the refresh (`apply`): an update reads the source and
//! what the new document replaces ([`read`], all of the input's I/O),
//! checks and parses them ([`Inputs::parse`]), and applies it
//! ([`Parsed::apply`]): staged, reviewed against what is remembered of
//! where keys went, and committed or the cache only confirmed; what the
//! review finds, a person must allow. The report borrows from the parsed
//! catalogs, which the caller holds.

pub(crate) mod apply;
mod read;
mod warning;

pub(crate) use self::read::load;
pub use self::read::read;
pub use self::warning::Warning;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::catalog::changes::Changes;
use crate::error::{Cause, Failure};
use crate::fetch::http::Bearer;
use crate::fetch::watch::Watch;
use crate::store::atomic::WriteError;
use crate::store::cache::{self, Bytes, CacheFiles, Found};
use crate::store::state;
use crate::trust::signature::TrustedKeys;

/// Options of `update-providers`.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// Do everything but the write.
    pub dry_run: bool,
    /// Where the new document goes.
    pub output: Output,
    /// Expected SHA-256 of the raw bytes, lowercase hex.
    pub sha256: Option<String>,
    /// Bound on the whole transfer.
    pub timeout: Duration,

    /// The pinned keys: every source but the embedded snapshot must then be
    /// signed by one of them.
    pub keys: Option<TrustedKeys>,
    /// The signature of standard input (`--signature FILE`), or of another
    /// source instead of the one beside it.
    pub signature: Option<PathBuf>,
    /// Apply a catalog with fewer than half of the previous providers or
    /// models (`--allow-shrink`).
    pub allow_shrink: bool,
    /// Apply a signed catalog older than the cached one
    /// (`--allow-downgrade`).
    pub allow_downgrade: bool,
    /// Apply a catalog that sends a known key to a new place
    /// (`--allow-key-move`).
    pub allow_key_move: bool,
    /// Where the download's progress goes, and what ends it early (then
    /// the failure's cause is
    /// [`crate::fetch::http::FetchError::Interrupted`]); by default,
    /// neither.
    pub watch: Watch,
    /// Sent as `Authorization: Bearer` with a URL's requests: the Hyper
    /// key, for Hyper's provider.
    pub bearer: Option<Bearer>,
}

/// Where an update writes the new document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// The cache (reviewed against its memory of where keys went).
    Cache,
    /// This file instead (`--output FILE`); the cache is not touched.
    File(PathBuf),
    /// Standard output: the validated bytes are handed back in
    /// [`UpdateReport::catalog`] for the caller to write.
    Stdout,
}

/// What an update did, borrowing from the catalogs it read.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport<'a> {
    /// A dry run of a catalog that is refused: the report shows what the
    /// refusal is about, and the failure follows it.
    #[serde(skip)]
    pub refused: bool,
    /// The source, as shown to the user.
    pub source: String,
    /// Number of providers in the new catalog.
    pub providers: usize,
    /// Number of models in the new catalog.
    pub models: usize,
    /// The file written, or that would have been written with `--dry-run`
    /// (`standard output` for [`Output::Stdout`]).
    pub target: PathBuf,
    /// Whether the file was written.
    pub written: bool,
    /// Whether the target already held exactly these bytes (then they were
    /// not written again).
    pub up_to_date: bool,
    /// Lowercase hex SHA-256 of the catalog bytes.
    pub sha256: String,
    /// When the catalog was signed (seconds since the Unix epoch), when a
    /// key is pinned; in JSON an RFC 3339 time, as `providers --status`
    /// shows it.
    #[serde(serialize_with = "rfc3339_or_null")]
    pub signed_at: Option<u64>,
    /// The id of the pinned key that verified it (as minisign shows it,
    /// 16 hex digits), when one did.
    pub signed_by: Option<String>,
    /// What the cache held before, when the update was to the cache and
    /// there was one: what a write replaces (or a dry run would).
    pub replaced: Option<Replaced>,
    /// The URL of a held refresh this update settled: the person kept the
    /// catalog in use, which the cache already held.
    pub settled: Option<String>,
    /// Changes against the previous file; `None` when there was none (or it
    /// was not a valid catalog).
    pub changes: Option<Changes<'a>>,
    /// Problems worth telling that did not stop the update; in JSON, their
    /// words.
    #[serde(serialize_with = "as_words")]
    pub warnings: Vec<Warning>,
    /// Those of the warnings that tell what a person allowed or what was
    /// not trusted: told even when they asked for quiet (`--quiet`).
    #[serde(skip)]
    pub notices: Vec<Warning>,
    /// The validated bytes, for the caller to write, with
    /// [`Output::Stdout`].
    #[serde(skip)]
    pub catalog: Option<&'a [u8]>,
}

/// The catalog the cache held before an update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replaced {
    /// Where it came from, as the state file says (a URL, a path,
    /// `embedded snapshot`); `None` when it was written by another program.
    pub source: Option<String>,
    /// When it was written; in JSON an RFC 3339 time.
    #[serde(serialize_with = "rfc3339_or_null")]
    pub written_at: Option<u64>,
    /// Whether it was the embedded snapshot standing in for a first fetch
    /// that failed or was held.
    pub stand_in: bool,
}

fn rfc3339_or_null<S: serde::Serializer>(at: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => s.serialize_str(&state::rfc3339(*at)),
        None => s.serialize_none(),
    }
}

/// Warnings in JSON: the words a person reads, as `providers --status`
/// gives its own.
fn as_words<S: serde::Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(warnings.iter().map(ToString::to_string))
}

/// How long an update waits for another writer of the cache to finish.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(30);

/// `update-providers --keep-current`: a person keeps the catalog in the
/// cache over what the last refresh held back, which no start then tells
/// of again, nor a refresh that brings it again. Nothing is downloaded,
/// and the catalog is not rewritten. The URL it was held from, when there
/// was a held refresh to settle.
pub(crate) fn keep_current(cache: &CacheFiles) -> Result<Option<String>, Failure> {
    let fail = |cause: Cause| Failure::new(cache.catalog.display(), cause);
    // Hyper's provider, when Crush uses its own, has a state for none.
    let found = match cache::read(cache, Bytes::Peek) {
        Found::Unusable(e) => return Err(fail(Cause::Cache(e))),
        found if found.state().is_some_and(|s| s.held().is_some()) => found,
        _ => return Ok(None),
    };
    let mut settled = None;
    let settle = |state: &mut state::CacheState| settled = state.keep_over_held();
    cache::update_state(cache, found.vouched().as_ref(), LOCK_WAIT, settle)
        .map_err(|e| fail(e.into()))?;
    Ok(settled)
}

/// `update-providers --source hyper embedded`: Crush's own embedded Hyper
/// provider, of which this build carries no copy. The outcome is Crush's
/// all the same: `hyper.json` and its state are removed, under the folder
/// lock as every writer's change, so that Crush uses its own; a missing
/// one is fine. The files that were there, removed (or, with `dry_run`,
/// that would be). On failure, what was not removed is as it was.
pub(crate) fn use_crushs_hyper(cache: &CacheFiles, dry_run: bool) -> Result<Vec<PathBuf>, Failure> {
    let cache = cache.with_target(crate::catalog::Target::Hyper);
    // The document first: once it is gone Crush uses its own, and a state
    // left behind describes nothing there.
    let present = || -> Vec<PathBuf> {
        [&cache.catalog, &cache.state]
            .into_iter()
            .filter(|path| std::fs::symlink_metadata(path).is_ok())
            .cloned()
            .collect()
    };
    // No data folder: nothing to remove, and no folder made for it.
    if dry_run || std::fs::symlink_metadata(&cache.dir).is_err() {
        return Ok(present());
    }
    let fail = |e: WriteError| Failure::new(cache.dir.display(), e);
    let _locked = cache::lock(&cache, None, LOCK_WAIT).map_err(fail)?;
    let present = present();
    for path in &present {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fail(WriteError::at("remove", path)(e)));
            }
            _ => {}
        }
    }
    // The copy of the document reviewed here goes with it, unsaid.
    let _ = std::fs::remove_file(&cache.reviewed);
    Ok(present)
}

#[cfg(test)]
mod tests {
    use super::read::plain_http_warning;
    use crate::fetch::source::Source;

    #[test]
    fn plain_http_warning_only_for_other_hosts() {
        let url = |u: &str| Source::Url(u.parse().unwrap());
        let words =
            |source: &Source, with_key| plain_http_warning(source, with_key).map(|w| w.to_string());
        let other = url("http://mirror.corp.example/v2/providers");
        assert!(words(&other, false).unwrap().contains("unprotected"));
        assert!(
            words(&other, true)
                .unwrap()
                .ends_with("; the Hyper key it carries can be read on the way too")
        );
        assert!(words(&url("http://127.0.0.1:8080/v2/providers"), false).is_none());
        assert!(words(&url("http://localhost:8080/v2/providers"), false).is_none());
        // A name below `localhost` is resolved, and proxied, as any other.
        assert!(words(&url("http://mirror.localhost:8080/v2/providers"), true).is_some());
        assert!(words(&url("https://mirror.corp.example/v2/providers"), false).is_none());
        assert!(words(&Source::Embedded, false).is_none());
    }
}
