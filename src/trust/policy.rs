//! The one policy of what a new document may replace without a person,
//! for `update-providers`, the refresh and the review of what another
//! program wrote alike: what it is compared with (the baseline: the
//! document it replaces, what is remembered of where keys went, the floor,
//! the newest signing time), what of it needs a person ([`guard::review`]),
//! what a held one records, and what the memory learns of an applied one.
//! It fails closed: a review that cannot be made holds (or refuses), never
//! "no change".

use crate::catalog::{Catalog, Target};
use crate::store::atomic::WriteError;
use crate::store::cache::CacheFiles;
use crate::store::state::{Held, Need};

use super::guard::{self, Baseline, Review, Unreviewable};
use super::hyper;
use super::memory::{self, Floor, Memory};

/// Where a new document goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    /// The cache: reviewed against its folder's memory and floor.
    Cache,
    /// Another file (`--output`): against that file (and the embedded
    /// snapshot's places) alone.
    File,
}

/// What a new document replaces, as the review sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replacing<'r> {
    /// The cache, whose target says which document.
    pub files: &'r CacheFiles,
    /// Where it goes.
    pub into: Destination,
    /// The valid document it replaces, not the embedded snapshot standing
    /// in for none (nobody chose that one).
    pub previous: Option<&'r Catalog>,
    /// The signing time the cache's state records.
    pub state_signed: Option<u64>,
}

/// Reviews `next` (signed at `signed_at`, when a key is pinned) against
/// what it replaces and what is known of where keys went: into the cache,
/// `memory` (the memory file's; `None`: none there, and then what the
/// folder rebuilds); into another file, what that file and the embedded
/// snapshot send. Into the cache, the catalog keeps half of the floor (the
/// embedded snapshot, or what a person applied with `--allow-shrink`) and
/// is signed no earlier than the newest one seen (each document's own,
/// remembered beside its state's); Hyper's provider has no floor (its
/// cached provider is the half to keep). An error (what is known cannot
/// be, a value the catalog reader would refuse, a place that cannot be
/// made) is the caller's to hold or refuse.
pub(crate) fn review(
    replacing: &Replacing<'_>,
    memory: Option<Memory>,
    next: &Catalog,
    signed_at: Option<u64>,
) -> Result<Review, Unreviewable> {
    let Replacing { files, into, .. } = *replacing;
    let known = match into {
        Destination::Cache => hyper::effective(files, memory, replacing.previous)?,
        Destination::File => Memory::rebuilt(replacing.previous)?,
    };
    let floor = match (into, files.target, &known.floor) {
        (Destination::File, _, _) | (_, Target::Hyper, _) => guard::Floor::None,
        (_, Target::Catalog, Some(floor)) => guard::Floor::Applied(&floor.providers, &floor.source),
        (_, Target::Catalog, None) => guard::Floor::Embedded,
    };
    let signed = match into {
        Destination::File => None,
        Destination::Cache => known.signed(files.target).max(replacing.state_signed),
    };
    let baseline = Baseline {
        previous: replacing.previous,
        places: &known.places,
        floor,
        signed,
    };
    guard::review(&baseline, next, signed_at)
}

/// What a refresh that brought the document whose SHA-256 is `sha256`
/// (lowercase hex) does with `review`: apply it when nothing in it needs
/// a person; else what it holds back, for every start to tell. A review
/// that could not be made is held too: where keys would go is not known.
pub(crate) fn hold(review: Result<Review, Unreviewable>, sha256: &str) -> Result<Review, Held> {
    match review {
        Ok(review) if review.is_clear() => Ok(review),
        Ok(review) => Err(Held {
            changes: review.findings(),
            needs: review.needs(),
            sha256: Some(sha256.to_owned()),
            ..Held::default()
        }),
        Err(why) => Err(held_for(why.to_string(), Some(sha256))),
    }
}

/// What a refresh holds back of a document it could not review (`why`,
/// one line); `sha256` is the document's, when it was read.
pub(crate) fn held_for(why: String, sha256: Option<&str>) -> Held {
    Held {
        changes: vec![why],
        sha256: sha256.map(str::to_owned),
        ..Held::default()
    }
}

/// The flag of `update-providers` that allows what a held change `need`s:
/// where the commands a person is told to type get it.
pub(crate) fn flag(need: Need) -> &'static str {
    match need {
        Need::Shrink => guard::ALLOW_SHRINK,
        Need::Downgrade => guard::ALLOW_DOWNGRADE,
        Need::KeyMove => guard::ALLOW_KEY_MOVE,
        Need::Signature => "--signature",
    }
}

/// What an applied document teaches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Applied<'r> {
    /// It.
    pub next: &'r Catalog,
    /// Its review (a person may have allowed what it found), with what
    /// it teaches.
    pub review: &'r Review,
    /// Where it came from, as shown.
    pub label: &'r str,
    /// Whether it is the embedded snapshot: the way back, which sets the
    /// floor back to itself.
    pub embedded: bool,
    /// When it was signed, when a pinned key verified it.
    pub signed_at: Option<u64>,
}

/// Records in the memory of `files` (the caller holds the folder lock)
/// what a document applied over `previous` teaches: the places its
/// variables reach; for the catalog, the floor (what a person applied with
/// `--allow-shrink`; none again for the embedded snapshot); for both, the
/// signing time (the newest, or an older one a person allowed). `now`:
/// the memory file as the caller read it under the same lock, when it did.
/// A memory file that cannot be read is replaced when `rebuild`
/// (`update-providers embedded`, the way back), else a failure.
pub(crate) fn learn(
    files: &CacheFiles,
    previous: Option<&Catalog>,
    applied: &Applied<'_>,
    now: Option<Option<Memory>>,
    rebuild: bool,
) -> Result<(), WriteError> {
    let start = || hyper::rebuilt(files, previous);
    let change = |memory: &mut Memory| teach(memory, files.target, applied);
    memory::write(files, now, start, change, rebuild)
}

fn teach(memory: &mut Memory, target: Target, applied: &Applied<'_>) -> Result<(), Unreviewable> {
    // Found by the review: not the catalog's places found again.
    memory.add(&applied.review.taught);
    if let Some(signed_at) = applied.signed_at {
        let allowed = applied.review.downgrade.is_some();
        memory.saw_signature(target, signed_at, allowed);
    }
    if target == Target::Hyper {
        return Ok(());
    }
    if applied.embedded {
        memory.floor = None;
    } else if !applied.review.shrinks.is_empty() {
        memory.floor = Some(Floor {
            source: applied.label.to_owned(),
            providers: memory::ids(applied.next),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{embedded, validate};

    fn catalog_with(extra: &str) -> String {
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        format!("{}{extra}]", &real[..real.rfind(']').unwrap()])
    }

    /// The floor and the newest signing time count only into the cache,
    /// and for the catalog: a small catalog into another file, or as
    /// Hyper's document, shrinks nothing; an older signature is a
    /// downgrade only against the cache's time.
    #[test]
    fn the_baseline_depends_on_where_and_which_document() {
        let tmp = tempfile::tempdir().unwrap();
        let small = validate(br#"[{"id":"x","name":"X","models":[{"id":"m"}]}]"#).unwrap();
        let case = |target, into, state_signed| {
            let replacing = Replacing {
                files: &CacheFiles::of(tmp.path(), target),
                into,
                previous: None,
                state_signed,
            };
            let review = review(&replacing, None, &small, Some(10)).unwrap();
            (review.shrinks.len(), review.downgrade.is_some())
        };
        assert_eq!(case(Target::Catalog, Destination::Cache, None), (1, false));
        assert_eq!(
            case(Target::Catalog, Destination::Cache, Some(20)),
            (1, true)
        );
        assert_eq!(
            case(Target::Catalog, Destination::File, Some(20)),
            (0, false)
        );
        assert_eq!(case(Target::Hyper, Destination::Cache, None), (0, false));
        assert_eq!(case(Target::Hyper, Destination::Cache, Some(20)), (0, true));
        // Hyper's newest signing time is remembered too: a state dropped
        // when Crush rewrote `hyper.json` does not let an older one back.
        let remembered = Memory {
            hyper_signed_at: Some(20),
            ..Memory::rebuilt(None).unwrap()
        };
        let replacing = Replacing {
            files: &CacheFiles::of(tmp.path(), Target::Hyper),
            into: Destination::Cache,
            previous: None,
            state_signed: None,
        };
        let review = review(&replacing, Some(remembered), &small, Some(10)).unwrap();
        assert!(review.downgrade.is_some());
    }

    /// A review that could not be made is held, with its reason, never
    /// applied; a clear one is applied; findings are held with what a
    /// person must allow.
    #[test]
    fn what_is_held_fails_closed() {
        let held = hold(Err(Unreviewable::TooManyPlaces), "ab").unwrap_err();
        assert!(held.changes[0].starts_with("the catalog sends keys to more than"));
        assert_eq!(held.sha256.as_deref(), Some("ab"));
        assert!(hold(Ok(Review::default()), "ab").is_ok());
        let tmp = tempfile::tempdir().unwrap();
        let bytes = catalog_with(
            r#",{"id":"openai2","name":"O","api_key":"$OPENAI_API_KEY","api_endpoint":"https://collector.example"}"#,
        );
        let next = validate(bytes.as_bytes()).unwrap();
        let replacing = Replacing {
            files: &CacheFiles::in_dir(tmp.path()),
            into: Destination::Cache,
            previous: None,
            state_signed: None,
        };
        let held = hold(review(&replacing, None, &next, None), "cd").unwrap_err();
        assert_eq!(held.needs, [Need::KeyMove]);
        assert!(held.changes[0].contains("$OPENAI_API_KEY"), "{held:?}");
    }

    /// The memory learns the places of what is applied; the floor moves
    /// only with a shrink a person allowed, and back with the snapshot.
    #[test]
    fn an_applied_document_teaches_its_places_and_floor() {
        let next = validate(br#"[{"id":"x","name":"X","api_key":"$X_KEY","api_endpoint":"https://x.example","models":[{"id":"m"}]}]"#).unwrap();
        let mut memory = Memory::rebuilt(None).unwrap();
        let shrunk = Review {
            shrinks: vec![guard::Shrink {
                providers: (1, 40),
                models: (1, 1500),
                against: guard::Against::Embedded,
            }],
            taught: guard::places(&next).unwrap(),
            ..Review::default()
        };
        let applied = |review, embedded| Applied {
            next: &next,
            review,
            label: "small.json",
            embedded,
            signed_at: Some(5),
        };
        teach(&mut memory, Target::Catalog, &applied(&shrunk, false)).unwrap();
        assert!(memory.places.contains_key("X_KEY"));
        assert_eq!(memory.floor.as_ref().unwrap().source, "small.json");
        assert_eq!(memory.signed_at, Some(5));
        teach(
            &mut memory,
            Target::Catalog,
            &applied(&Review::default(), true),
        )
        .unwrap();
        assert_eq!(memory.floor, None);
    }
}
