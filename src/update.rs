//! `update-providers`: read a source, validate it, and swap it into the cache
//! (or an output file), reporting what changed.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;

use crate::cache::{self, CacheFiles};
use crate::catalog::{self, hex};
use crate::changes::{self, Changes};
use crate::error::{Cause, Failure};
use crate::guard::{self, KeyMove, Shrink};
use crate::http::FetchOptions;
use crate::signature::{SignatureError, TrustedKeys};
use crate::source::{self, Loaded, Source};
use crate::state::{self, CacheState};
use crate::summary::Summary;

/// Options of `update-providers`.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// Do everything but the write.
    pub dry_run: bool,
    /// Write here instead of the cache.
    pub output: Option<PathBuf>,
    /// Expected SHA-256 of the raw bytes, lowercase hex.
    pub sha256: Option<String>,
    /// Bound on the whole transfer.
    pub timeout: Duration,
    /// Show a download progress bar when stderr is a terminal.
    pub progress: bool,
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
}

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            dry_run: false,
            output: None,
            sha256: None,
            timeout: Duration::from_secs(60),
            progress: false,
            keys: None,
            signature: None,
            allow_shrink: false,
            allow_downgrade: false,
        }
    }
}

/// What an update did.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
    /// The source, as shown to the user.
    pub source: String,
    /// Number of providers in the new catalog.
    pub providers: usize,
    /// Number of models in the new catalog.
    pub models: usize,
    /// The file written, or that would have been written with `--dry-run`.
    pub target: PathBuf,
    /// Whether the file was written.
    pub written: bool,
    /// Lowercase hex SHA-256 of the catalog bytes.
    pub sha256: String,
    /// When the catalog was signed (seconds since the Unix epoch), when a
    /// key is pinned.
    pub signed_at: Option<u64>,
    /// Changes against the previous file; `None` when there was none (or it
    /// was not a valid catalog).
    pub changes: Option<Changes>,
    /// Problems worth telling that did not stop the update.
    pub warnings: Vec<String>,
}

/// How long an update waits for another writer of the cache to finish.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// What validating the new catalog tells.
struct Validated {
    providers: usize,
    models: usize,
    warnings: Vec<String>,
    changes: Option<Changes>,
    shrink: Option<Shrink>,
    /// New providers that send an existing key somewhere new (moves of
    /// existing providers are among `changes`' security changes).
    new_key_moves: Vec<KeyMove>,
}

/// A staged write: the output file, or the cache with its lock.
enum Staging {
    File(cache::Staged),
    Cache(cache::StagedCache),
}

/// A warning for a catalog fetched over plain http from another machine:
/// anyone on the path can change it, endpoints included.
pub fn plain_http_warning(source: &Source) -> Option<String> {
    match source {
        Source::Url(url) if url.scheme() == "http" && !source::is_loopback(url) => Some(format!(
            "{url} is plain http: the catalog travels unprotected and anyone on the path can change it; prefer https"
        )),
        _ => None,
    }
}

/// Runs `update-providers`: `source` into `cache` (or `options.output`).
/// On failure nothing was written.
pub fn update_providers(
    source: &Source,
    cache: &CacheFiles,
    options: &UpdateOptions,
) -> Result<UpdateReport, Failure> {
    let label = source.to_string();
    let fail = |cause: Cause| Failure {
        source: label.clone(),
        cause,
    };
    let mut warnings: Vec<String> = plain_http_warning(source).into_iter().collect();
    let target = options
        .output
        .clone()
        .unwrap_or_else(|| cache.catalog.clone());
    let fetch = FetchOptions {
        timeout: options.timeout,
        progress: options.progress,
        ..FetchOptions::default()
    };
    // The CPU work is split over two threads, so that on two cores neither
    // waits long for the other. The helper starts first, as waking a second
    // core can take a while: it summarises the previous file (nothing else
    // needs it), then hashes the new bytes unless this thread got there
    // first. This thread reads the source, writes it beside the target
    // (its write-back then goes on in the device), and validates it. The new
    // file only becomes visible (one rename) once it has passed; a refused
    // catalog drops its staged file unseen.
    let digest = OnceLock::new();
    let mut signed_at = None;
    let (loaded, validated, staged) = std::thread::scope(|scope| {
        let (send_bytes, bytes_sent) = std::sync::mpsc::sync_channel::<Arc<Loaded>>(1);
        let digest = &digest;
        let helper = scope.spawn(move || {
            // One that does not hold a catalog has nothing to compare with,
            // and is replaced all the same.
            let previous = Summary::read(options.output.as_ref().unwrap_or(&cache.catalog));
            if let Ok(loaded) = bytes_sent.recv() {
                digest.get_or_init(|| catalog::sha256(&loaded.bytes));
            }
            previous
        });
        let loaded = Arc::new(source.load(&fetch).map_err(|e| fail(e.into()))?);
        let _ = send_bytes.send(Arc::clone(&loaded));
        let bytes: &[u8] = &loaded.bytes;
        // Before anything is written: a pinned key's signature.
        if let Some(keys) = &options.keys {
            signed_at = verify(source, bytes, keys, options, cache, &fetch).map_err(fail)?;
        }
        let staged = (!options.dry_run).then(|| match &options.output {
            Some(path) => cache::stage(path, bytes, true).map(Staging::File),
            None => cache::stage_cache(cache, bytes, LOCK_WAIT).map(Staging::Cache),
        });
        let validated = catalog::validate(bytes).map(|next| {
            digest.get_or_init(|| catalog::sha256(bytes));
            let previous = helper.join().expect("summarising does not panic");
            Validated {
                providers: next.providers.len(),
                models: next.model_count(),
                changes: previous
                    .as_ref()
                    .map(|previous| changes::compare(previous, &next)),
                shrink: previous.as_ref().and_then(|p| guard::shrink(p, &next)),
                new_key_moves: previous
                    .as_ref()
                    .map(|p| {
                        let mut moves = guard::key_moves(p, &next);
                        moves.retain(|m| !p.providers.iter().any(|old| old.id == m.provider));
                        moves
                    })
                    .unwrap_or_default(),
                warnings: next.warnings,
            }
        });
        Ok((loaded, validated, staged))
    })?;
    let sha256 = hex(digest.get_or_init(|| catalog::sha256(&loaded.bytes)));
    if let Some(expected) = &options.sha256
        && !expected.eq_ignore_ascii_case(&sha256)
    {
        return Err(fail(Cause::Digest {
            expected: expected.to_ascii_lowercase(),
            actual: sha256,
        }));
    }
    let Validated {
        providers,
        models,
        warnings: catalog_warnings,
        changes,
        shrink,
        new_key_moves,
    } = validated.map_err(|e| fail(e.into()))?;
    // A person may apply a shrunken catalog, but must say so; the embedded
    // snapshot is always a whole catalog.
    if let Some(shrink) = shrink
        && !options.allow_shrink
        && *source != Source::Embedded
    {
        return Err(fail(Cause::Shrink(shrink)));
    }
    warnings.extend(catalog_warnings);
    for change in changes.iter().flat_map(|c| &c.security) {
        warnings.push(change.describe());
    }
    for moved in new_key_moves {
        warnings.push(format!(
            "new {moved}: requests carrying your API key will go to a new place"
        ));
    }
    match staged.transpose().map_err(|e| fail(e.into()))? {
        None => {}
        Some(Staging::File(staged)) => staged.commit().map_err(|e| fail(e.into()))?,
        Some(Staging::Cache(staged)) => staged
            .commit(&CacheState {
                sha256: sha256.clone(),
                validators: loaded.validators.clone(),
                source: label.clone(),
                fetched_at: state::now(),
                // A person asked for these bytes: they are current.
                confirmed_at: Some(state::now()),
                signed_at,
                ..CacheState::default()
            })
            .map_err(|e| fail(e.into()))?,
    }
    Ok(UpdateReport {
        providers,
        models,
        source: label.clone(),
        target,
        written: !options.dry_run,
        sha256,
        signed_at,
        changes,
        warnings,
    })
}

/// Checks the signature of `bytes` from `source` against the pinned
/// `keys`, and that it was not signed before the cached catalog (unless
/// allowed); returns the signing time. The embedded snapshot needs none.
fn verify(
    source: &Source,
    bytes: &[u8],
    keys: &TrustedKeys,
    options: &UpdateOptions,
    cache: &CacheFiles,
    fetch: &FetchOptions,
) -> Result<Option<u64>, Cause> {
    let Some(signature) = source.load_signature(options.signature.as_deref(), fetch)? else {
        return Ok(None);
    };
    let signed = keys.verify(bytes, &signature)?;
    // Replaying an older signed catalog over the cache is refused; an
    // output file has no recorded signing time to compare with.
    let cached = options
        .output
        .is_none()
        .then(|| cache::vouched_state(cache))
        .flatten()
        .and_then(|state| state.signed_at);
    if let Some(cached) = cached
        && signed < cached
        && !options.allow_downgrade
    {
        return Err(SignatureError::Older {
            signed: state::rfc3339(signed),
            cached: state::rfc3339(cached),
        }
        .into());
    }
    Ok(Some(signed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_warning_only_for_other_hosts() {
        let url = |u: &str| Source::Url(u.parse().unwrap());
        assert!(
            plain_http_warning(&url("http://mirror.corp.example/v2/providers"))
                .unwrap()
                .contains("unprotected")
        );
        assert!(plain_http_warning(&url("http://127.0.0.1:8080/v2/providers")).is_none());
        assert!(plain_http_warning(&url("https://mirror.corp.example/v2/providers")).is_none());
        assert!(plain_http_warning(&Source::Embedded).is_none());
    }
}
