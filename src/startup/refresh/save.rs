//! A refresh's new document reviewed and saved, or held; and what a
//! refresh that changed nothing records.

use reqwest::Url;

use super::LOCK_WAIT;
use crate::catalog::{Catalog, Target, embedded};
use crate::fetch::source::{Source, redacted};
use crate::store::atomic;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::digest::{self, hex};
use crate::store::state::{self, CacheState, Held, RefreshOutcome, RefreshRecord};
use crate::store::validators::Validators;
use crate::trust::guard::{Review, Unreviewable};
use crate::trust::hyper;
use crate::trust::memory;
use crate::trust::policy::{self, Applied, Destination, Replacing};

/// What stood at the cache's path when a refresh read it: a refresh swaps
/// its answer in only over that same file, checked under the folder lock,
/// so that a person's update made meanwhile is never overwritten by an
/// older answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen(Option<String>);

impl Seen {
    /// What stands at the cache's path of `files` now: its identity
    /// ([`cache::identity`]), or, where files have none, the SHA-256 of
    /// its bytes; nothing when there is no file.
    pub(crate) fn now(files: &CacheFiles) -> Seen {
        let Ok(meta) = std::fs::metadata(&files.catalog) else {
            return Seen(None);
        };
        Seen(cache::identity(&meta).or_else(|| {
            let bytes = std::fs::read(&files.catalog).ok()?;
            Some(hex(&digest::sha256(&bytes)))
        }))
    }
}

/// What came of a new document.
#[derive(Debug)]
pub(super) enum Taken {
    /// In the cache.
    Saved,
    /// Valid and clear, but not written (why, in one line).
    Unsaved(String),
    /// Needs a person.
    Held(Held),
    /// Another writer replaced the cache since it was read: the answer,
    /// reviewed against what is gone, is dropped.
    Overtaken,
}

/// Reviews the new document `fetched` (valid: [`super::request`] read
/// it) against the cache `cached` and what is remembered, and saves it
/// when nothing needs a person; what it holds back, else (an error of the
/// review is held too: where keys went is not known, and nothing is
/// applied).
pub(super) fn take(
    files: &CacheFiles,
    url: &Url,
    cached: Option<&Cached>,
    seen: &Seen,
    fetched: NewCatalog,
    now: u64,
) -> Taken {
    let sha256 = hex(&fetched.digest);
    // The cache to compare with: not the embedded snapshot standing in for
    // none.
    let previous = cached
        .filter(|c| !c.is_stand_in())
        .and_then(|c| files.target.validate(&c.bytes).ok());
    let review = review(
        files,
        cached,
        previous.as_ref(),
        &fetched.catalog,
        fetched.signed_at,
    );
    if let Err(held) = policy::hold(review, &sha256) {
        return Taken::Held(held);
    }
    match save(files, url, cached, seen, fetched, now, previous.as_ref()) {
        Ok(()) => Taken::Saved,
        Err(NotSaved::Held(held)) => Taken::Held(held),
        Err(NotSaved::Write(e)) => Taken::Unsaved(e.to_string()),
        Err(NotSaved::Overtaken) => Taken::Overtaken,
    }
}

/// Why [`save`] wrote nothing.
#[derive(Debug)]
pub(crate) enum NotSaved {
    /// Reviewed again under the folder lock, against what is remembered
    /// now (another writer may have taught it since), it needs a person.
    Held(Held),
    /// It could not be written.
    Write(atomic::WriteError),
    /// The cache is no longer the file it was reviewed against (another
    /// writer replaced it): nothing is written.
    Overtaken,
}

impl From<atomic::WriteError> for NotSaved {
    fn from(e: atomic::WriteError) -> Self {
        NotSaved::Write(e)
    }
}

/// The review of the new document `next` (valid, signed at `signed_at`
/// when keys are pinned) against what the data folder `files` remembers
/// of where keys went, the cache `cached` (valid as `previous`) and the
/// floor ([`policy::review`]); why there is none, when what is remembered
/// cannot be read (or the catalog not placed): then the refresh holds.
fn review(
    files: &CacheFiles,
    cached: Option<&Cached>,
    previous: Option<&Catalog>,
    next: &Catalog,
    signed_at: Option<u64>,
) -> Result<Review, Unreviewable> {
    let file = memory::read(files)?;
    let known = policy::known(files, Destination::Cache, file, previous)?;
    let replacing = Replacing {
        target: files.target,
        into: Destination::Cache,
        previous,
        known: &known,
        state_signed: cached.and_then(|c| c.state.as_ref()?.signed_at),
    };
    policy::review(&replacing, next, signed_at)
}

/// Records what a refresh that changed nothing came to, in the state of
/// the cache `cached`. Without a cache file at all (the first start), the
/// embedded snapshot, which start-up uses meanwhile, becomes the cache, so
/// that the record has a home and the next start tells it; a file that is
/// there but not valid is left for a person. Hyper's provider has no
/// snapshot: its state file alone records it
/// ([`cache::update_absent_state`]).
pub(super) fn keep(
    files: &CacheFiles,
    cached: Option<&Cached>,
    change: impl FnOnce(&mut CacheState),
) {
    match cached {
        Some(cached) => {
            let _ = cache::update_state(files, cached, LOCK_WAIT, change);
        }
        None if files.target == Target::Hyper => {
            let _ = cache::update_absent_state(files, LOCK_WAIT, change);
        }
        None => {
            let bytes = embedded::catalog_bytes();
            let mut state = CacheState {
                sha256: hex(&digest::sha256(bytes)),
                source: Source::Embedded.to_string(),
                fetched_at: state::now(),
                ..CacheState::default()
            };
            change(&mut state);
            let _ = cache::install_if_absent(files, bytes, &state, LOCK_WAIT);
        }
    }
}

/// A new, valid catalog as fetched.
#[derive(Debug)]
pub(crate) struct NewCatalog<'a> {
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Their SHA-256.
    pub digest: [u8; 32],
    /// The document read from them.
    pub catalog: Catalog,
    /// The server's validators.
    pub validators: Validators,
    /// When it was signed, when keys are pinned.
    pub signed_at: Option<u64>,
}

/// Writes a catalog fetched from `url` (`fetched`, replacing the cache
/// `cached`, valid as `previous`, read where `seen` stood) into the cache,
/// as confirmed at `now`, with the state a later start reads (its
/// validators, its signing time, and the refresh that brought it) and what
/// the memory of where keys went learns of it; unless, once the folder is
/// locked, the cache is another file than `seen` (the answer is dropped),
/// or, reviewed again, it needs a person.
pub(crate) fn save(
    files: &CacheFiles,
    url: &Url,
    cached: Option<&Cached>,
    seen: &Seen,
    fetched: NewCatalog,
    now: u64,
    previous: Option<&Catalog>,
) -> Result<(), NotSaved> {
    let NewCatalog {
        bytes,
        digest,
        catalog: next,
        validators,
        signed_at,
    } = fetched;
    let next = &next;
    let mut state = CacheState {
        sha256: hex(&digest),
        validators,
        source: redacted(url.as_str()),
        fetched_at: now,
        confirmed_at: Some(now),
        signed_at,
        ..CacheState::default()
    };
    state.record_refresh(RefreshRecord {
        at: now,
        url: redacted(url.as_str()),
        outcome: RefreshOutcome::Updated,
        cause: None,
        told: false,
        held: None,
    });
    let staged = cache::stage_cache(files, bytes, LOCK_WAIT)?;
    // Under the folder lock: another writer (a person's update) may have
    // replaced the cache since it was read, with a newer catalog.
    if Seen::now(files) != *seen {
        return Err(NotSaved::Overtaken);
    }
    // Under the folder lock no other writer changes what is remembered:
    // reviewed against it as it is now (a person's update may have taught
    // it a place since the first review), which no refresh may add to.
    let review = review(files, cached, previous, next, signed_at);
    let review = policy::hold(review, &state.sha256).map_err(NotSaved::Held)?;
    // The places of the variables it sends for the first time, and its
    // signing time, before it is in place (under the folder lock).
    let applied = Applied {
        target: files.target,
        next,
        review: &review,
        label: &state.source,
        embedded: false,
        signed_at,
    };
    memory::record(
        files,
        || hyper::rebuilt(files, previous),
        |memory| policy::learn(memory, &applied),
    )?;
    Ok(staged.commit(&state)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::store::state::Need;
    use crate::trust::memory::Memory;

    /// The review is made again once the folder is locked for the write:
    /// a person's update that taught the memory a variable's first place
    /// after this refresh first reviewed its catalog makes that catalog,
    /// which sends the variable elsewhere, held, and nothing is written.
    #[test]
    fn a_save_reviews_against_what_is_remembered_once_locked() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let catalog = |endpoint: &str| {
            let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
            let end = real.rfind(']').unwrap();
            format!(
                r#"{},{{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"{endpoint}"}}]"#,
                &real[..end]
            )
        };
        let taught = catalog("https://fresh.example");
        let taught = catalog::validate(taught.as_bytes()).unwrap();
        cache::locked(&files, LOCK_WAIT, || {
            memory::record(&files, || Memory::rebuilt(None), |m| m.learn(&taught))
        })
        .unwrap();
        let bytes = catalog("https://collector.evil.example");
        let fetched = NewCatalog {
            bytes: bytes.as_bytes(),
            digest: digest::sha256(bytes.as_bytes()),
            catalog: catalog::validate(bytes.as_bytes()).unwrap(),
            validators: Validators::default(),
            signed_at: None,
        };
        let url = Url::parse("https://mirror.example/v2/providers").unwrap();
        let seen = Seen::now(&files);
        let Err(NotSaved::Held(held)) = save(&files, &url, None, &seen, fetched, 1, None) else {
            panic!("saved")
        };
        assert_eq!(
            held.changes,
            [
                "provider \"fresh\" would send $FRESH_API_KEY to https://collector.evil.example:443, where it was never sent before (only to https://fresh.example:443)"
            ]
        );
        assert_eq!(held.needs, [Need::KeyMove]);
        assert!(!files.catalog.exists());
    }

    /// The lost update: a person's update that replaced the cache while a
    /// refresh fetched is never overwritten by the refresh's older answer
    /// (reviewed against the cache that is gone); nothing is written, and
    /// the refresh is told what the cache holds now. Over the cache it
    /// read, the same answer is saved.
    #[test]
    fn a_refresh_swaps_only_over_the_cache_it_read() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        let with = |name: &str| real.replacen("\"name\": \"", &format!("\"name\": \"{name} "), 1);
        let (c1, c2, c3) = (with("c1"), with("c2"), with("c3"));
        let written = |bytes: &str| CacheState {
            sha256: hex(&digest::sha256(bytes.as_bytes())),
            source: "test".into(),
            ..CacheState::default()
        };
        cache::write(&files, c1.as_bytes(), &written(&c1), LOCK_WAIT).unwrap();
        // The refresh reads c1 and starts fetching c2 ...
        let seen = Seen::now(&files);
        let cached = cache::read_valid(&files).unwrap().unwrap();
        // ... meanwhile a person applies c3.
        cache::write(&files, c3.as_bytes(), &written(&c3), LOCK_WAIT).unwrap();
        let previous = catalog::validate(&cached.bytes).unwrap();
        let fetched = || NewCatalog {
            bytes: c2.as_bytes(),
            digest: digest::sha256(c2.as_bytes()),
            catalog: catalog::validate(c2.as_bytes()).unwrap(),
            validators: Validators::default(),
            signed_at: None,
        };
        let url = Url::parse("https://mirror.example/v2/providers").unwrap();
        let saved = save(
            &files,
            &url,
            Some(&cached),
            &seen,
            fetched(),
            1,
            Some(&previous),
        );
        assert!(matches!(saved, Err(NotSaved::Overtaken)), "{saved:?}");
        assert_eq!(std::fs::read_to_string(&files.catalog).unwrap(), c3);
        let taken = take(&files, &url, Some(&cached), &seen, fetched(), 1);
        assert!(matches!(taken, Taken::Overtaken), "{taken:?}");
        assert_eq!(std::fs::read_to_string(&files.catalog).unwrap(), c3);
        // Over the cache it read, it is saved.
        let cached = cache::read_valid(&files).unwrap().unwrap();
        let previous = catalog::validate(&cached.bytes).unwrap();
        let seen = Seen::now(&files);
        save(
            &files,
            &url,
            Some(&cached),
            &seen,
            fetched(),
            1,
            Some(&previous),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&files.catalog).unwrap(), c2);
    }
}
