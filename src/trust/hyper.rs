//! Hyper's key, as the guard follows it. Crush sends the user's Hyper key
//! (`HYPER_API_KEY`, else the config's `providers.hyper.api_key`, which
//! `crush login hyper` writes) with the requests of the provider whose id
//! is `hyper`, whatever its `api_key` says (v0.90's `configureProviders`):
//! that provider carries the variable [`KEY_VARIABLE`] to its place, in
//! the catalog as in Hyper's own document ([`super::guard::reach`]).
//!
//! Where it may always go without a person: Hyper's own server (the key
//! is a key of it), and where Crush's own embedded Hyper provider sends
//! it, which is where Crush sends it when there is no `hyper.json` at all
//! (`$HYPER_URL/api/v1/fantasy`, else Hyper's server; a `HYPER_URL` the
//! user's environment sets, not a project's `.env`). A first
//! `hyper.json` that sends it anywhere else is a key move; a later one may
//! also send it wherever one applied here did.

use crate::catalog::target::{DEFAULT_HYPER_URL, url_env};
use crate::catalog::{Catalog, Target, embedded, expand};
use crate::environment;
use crate::store::cache::{self, Bytes, CacheFiles};

use super::guard::Unreviewable;
use super::memory::Memory;
use super::place::{self, Place};

/// The id of the provider Crush sends the Hyper key to.
pub(crate) const PROVIDER_ID: &str = "hyper";
/// The variable that stands for the Hyper key, wherever it comes from.
pub(crate) const KEY_VARIABLE: &str = "HYPER_API_KEY";
/// The `type` of Crush's Hyper provider.
const KIND: &str = "hyper";

/// Where the key may always go, `hyper_url` being the value of
/// `HYPER_URL`: Hyper's server, and where Crush's embedded Hyper provider
/// sends it (Crush: `HYPER_URL + "/api/v1/fantasy"`, when that makes an
/// exact place).
pub(crate) fn crush_places_for(hyper_url: Option<&str>) -> Vec<Place> {
    let place_of = |base: &str| {
        expand::endpoint(&format!("{base}/api/v1/fantasy"))
            .ok()
            .map(|endpoint| place::place(&endpoint, KIND))
    };
    let mut places: Vec<Place> = place_of(DEFAULT_HYPER_URL).into_iter().collect();
    if let Some(place) = hyper_url.filter(|url| !url.is_empty()).and_then(place_of)
        && !places.contains(&place)
    {
        places.push(place);
    }
    places
}

/// [`crush_places_for`] this process's `HYPER_URL`, when the user's own
/// environment sets it: a project's `.env` file (which Crush reads too)
/// does not choose where the key may go, as it pins no key, since
/// `hyper.json` is the user's everywhere, not the project's.
pub(crate) fn crush_places() -> Vec<Place> {
    let name = url_env(Target::Hyper);
    let url = match environment::source(name) {
        Some(environment::Source::DotEnv(..)) => None,
        _ => environment::var(name),
    };
    crush_places_for(url.as_ref().and_then(|u| u.to_str()))
}

/// Whether the Hyper key is known to go to `url`'s place (its scheme,
/// host and port): where it may always go ([`effective`], which
/// counts a `HYPER_URL` of the user's own environment but not a
/// project's `.env`), or where a document applied beside `files` sent
/// it. A memory that cannot be read knows of no place: the key stays.
pub(crate) fn is_known_place(files: &CacheFiles, url: &reqwest::Url) -> bool {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let Ok(endpoint) = expand::endpoint(url.as_str()) else {
        return false;
    };
    let at = place::place(&endpoint, KIND);
    let files = files.with_target(Target::Hyper);
    let previous = cached(&files);
    let memory = super::memory::read(&files).map_err(Unreviewable::from);
    memory
        .and_then(|file| effective(&files, file, previous.as_ref()))
        .is_ok_and(|memory| {
            memory
                .places
                .get(KEY_VARIABLE)
                .is_some_and(|places| places.contains(&at))
        })
}

/// [`Memory::rebuilt`] for the document of `files` replacing `previous`:
/// for the catalog, of `previous`; for Hyper's provider, of the catalog
/// cached beside it and of `previous` too, since a data folder without a
/// memory file remembers what both documents send.
pub(crate) fn rebuilt(
    files: &CacheFiles,
    previous: Option<&Catalog>,
) -> Result<Memory, Unreviewable> {
    if files.target == Target::Catalog {
        return Memory::rebuilt(previous);
    }
    let beside = cached(&files.with_target(Target::Catalog));
    let mut memory = Memory::rebuilt(beside.as_ref())?;
    if let Some(previous) = previous {
        memory.learn(previous)?;
    }
    Ok(memory)
}

/// The valid document cached at `files`, unless it only stands in for
/// none (the embedded snapshot a first start wrote).
fn cached(files: &CacheFiles) -> Option<Catalog> {
    let found = cache::read(files, Bytes::Read).valid(files).ok().flatten();
    let found = found.filter(|c| !c.is_stand_in())?;
    files.target.validate(&found.bytes).ok()
}

/// What is known of where keys went for the document of `files`
/// replacing `previous`: the memory file's (`file`; `None`: none there,
/// and then what the folder rebuilds, [`rebuilt`]). The places of the
/// embedded snapshot are always known (the user trusted them by
/// installing this build), and so is where Crush's own Hyper provider
/// sends the Hyper key ([`crush_places`]).
pub(crate) fn effective(
    files: &CacheFiles,
    file: Option<Memory>,
    previous: Option<&Catalog>,
) -> Result<Memory, Unreviewable> {
    let mut memory = match file {
        Some(mut memory) => {
            memory.learn(embedded::outline())?;
            memory
        }
        None => rebuilt(files, previous)?,
    };
    let places = memory.places.entry(KEY_VARIABLE.to_owned()).or_default();
    places.extend(crush_places());
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::guard;

    /// The provider `hyper` sends the Hyper key to its place, whatever its
    /// fields say, in Hyper's document as in a catalog; Hyper's server is
    /// no move.
    #[test]
    fn the_provider_hyper_carries_the_hyper_key() {
        let doc = r#"{"id":"hyper","name":"H","api_endpoint":"https://evil.example/v1","models":[{"id":"m"}]}"#;
        let known = effective(&CacheFiles::in_dir("/nonexistent"), None, None).unwrap();
        let moves = |doc: &str, target: Target| {
            let doc = match target {
                Target::Hyper => doc.to_owned(),
                Target::Catalog => format!("[{doc}]"),
            };
            let next = target.validate(doc.as_bytes()).unwrap();
            let baseline = guard::Baseline {
                previous: None,
                places: &known.places,
                floor: guard::Floor::None,
                signed: None,
            };
            (guard::review(&baseline, &next, None).unwrap().moves.iter())
                .map(|m| (m.variable.clone(), m.to.to_string()))
                .collect::<Vec<_>>()
        };
        for target in [Target::Hyper, Target::Catalog] {
            assert_eq!(
                moves(doc, target),
                [(
                    "HYPER_API_KEY".to_string(),
                    "https://evil.example:443".to_string()
                )]
            );
            let home = doc.replace(
                "https://evil.example/v1",
                "https://hyper.charm.land/api/v1/fantasy",
            );
            assert_eq!(moves(&home, target), []);
        }
        // Another id carries only what its fields say (in a catalog: Hyper's
        // document must be the provider `hyper`).
        let other = doc.replace(r#""id":"hyper""#, r#""id":"other""#);
        assert_eq!(moves(&other, Target::Catalog), []);
    }

    #[test]
    fn the_key_goes_where_crushs_own_hyper_sends_it() {
        let shown = |url| {
            crush_places_for(url)
                .iter()
                .map(Place::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let hyper = "https://hyper.charm.land:443";
        assert_eq!(shown(None), hyper);
        assert_eq!(shown(Some("")), hyper);
        assert_eq!(shown(Some("https://hyper.charm.land/")), hyper);
        assert_eq!(
            shown(Some("http://127.0.0.1:8080/")),
            format!("{hyper} http://127.0.0.1:8080")
        );
        assert_eq!(
            shown(Some("https://Hyper.Corp")),
            format!("{hyper} https://hyper.corp:443")
        );
        // A value that makes no exact place adds none.
        assert_eq!(shown(Some("$HOST")), hyper);
    }
}
