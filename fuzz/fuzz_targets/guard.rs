//! The guard on whatever a mutated catalog says: reading it, following its
//! variables to their places and reviewing it never panics, and what it
//! finds is exact. For every endpoint it accepts, and every hostile value
//! of its variables, the endpoint as Crush's resolver expands it, split by
//! the project's Go-rules splitter (`catalog::go_url`, checked against
//! Go's net/url in tests/it/go_agreement.rs), goes where the guard says it
//! goes; what it cannot place that way it refuses.
#![no_main]

use crush_providers::catalog::{embedded, validate};
use crush_providers::internals::{changes, expand, go_url};
use crush_providers::internals::guard::{self, Baseline, Floor};
use crush_providers::internals::memory::{self, Memory};
use crush_providers::internals::place::{self, Place};
use libfuzzer_sys::fuzz_target;

/// What a hostile environment may hold (`None`: unset).
const HOSTILE: &[Option<&str>] = &[
    None,
    Some(""),
    Some("evil.example"),
    Some("/@evil.example"),
    Some("@evil.example:1"),
    Some("a/b@c?d#e:f"),
    Some("?"),
    Some("#"),
    Some(":8443"),
    Some("https://user.example/"),
    Some("x%zz"),
];

/// Where a request to `url` goes by Go's rules: scheme, host, port; `None`
/// for none (empty: the type's default; or a URL Go refuses).
fn split(url: &str) -> Option<(String, String, String)> {
    go_url::parse(url)
        .filter(|d| !d.host.is_empty())
        .map(|d| d.place())
}

/// Checks that an endpoint read as `endpoint`, of a provider of type
/// `kind`, goes where its place says under every hostile value.
fn check_place(endpoint: &expand::Endpoint, kind: &str) {
    let place = place::place(endpoint, kind);
    for value in HOSTILE {
        let expanded = endpoint.expand(|_| *value);
        let went = split(&expanded);
        match &place {
            Place::Url { scheme, host, port } => match went {
                Some(went) => assert_eq!(
                    went,
                    (scheme.clone(), host.clone(), port.clone()),
                    "{expanded:?}"
                ),
                // No request at all: only a URL Go refuses, for a `%` a
                // value brought, or a `#` that moved a literal `%` of the
                // query into the fragment, whose escapes Go checks.
                None => assert!(
                    value.is_some_and(|v| v.contains(['%', '#'])),
                    "{expanded:?}"
                ),
            },
            Place::Default { .. } => assert!(expanded.is_empty()),
            Place::Variable { .. } => assert_eq!(expanded, value.unwrap_or("")),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Any text, as a value Crush would expand, and as an endpoint.
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = expand::parse(text);
        if let Ok(endpoint) = expand::endpoint(text) {
            check_place(&endpoint, "openai");
        }
        let _ = go_url::parse(text);
    }
    let Ok(next) = validate(data) else {
        return;
    };
    // Every endpoint of an accepted catalog is placed exactly.
    for provider in &next.providers {
        let endpoint = provider.api_endpoint.as_ref().map_or("", |e| e.as_str());
        let endpoint = expand::endpoint(endpoint).expect("validated");
        let kind = provider.kind.as_ref().map_or("", |k| k.as_str());
        check_place(&endpoint, kind);
        // Where Crush sends its key: the endpoint's place, or the type's
        // own (and the endpoint's, for openrouter's key test); and what
        // the configuration gives it goes along.
        let (places, holders) = guard::reach(provider).expect("validated");
        assert_eq!(places, place::of_provider(&endpoint, kind));
        let id = provider.id.as_str();
        assert_eq!(holders.last(), Some(&guard::configured(id)));
    }
    let real = &validate(embedded::catalog_bytes()).expect("the snapshot is valid");
    // A catalog against itself moves nothing, loses nothing, changes
    // nothing.
    let own = guard::places(&next).expect("validated");
    let ids = memory::ids(&next);
    let itself = Baseline {
        previous: Some(&next),
        places: &own,
        floor: Floor::Applied(&ids, "itself"),
        signed: Some(1),
    };
    let same = guard::review(&itself, &next, Some(1)).expect("validated");
    assert!(same.is_clear(), "{same:?}");
    assert!(changes::compare(&next, &next).is_empty());
    // Against what a data folder remembers of the real catalog, every move
    // is of a known variable to a place it was never allowed to reach, and
    // one recorded as allowed is no move.
    let known = Memory::rebuilt(Some(real)).expect("the snapshot is placed");
    for floor in [Floor::None, Floor::Embedded] {
        let baseline = Baseline {
            previous: Some(real),
            places: &known.places,
            floor,
            signed: None,
        };
        let review = guard::review(&baseline, &next, None).expect("validated");
        for moved in &review.moves {
            // In any letter case (Windows tells none in a variable's name).
            let mut spellings = known
                .places
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case(&moved.variable))
                .peekable();
            assert!(spellings.peek().is_some(), "a known variable: {moved:?}");
            assert!(spellings.all(|(_, places)| !places.contains(&moved.to)), "{moved:?}");
        }
        let _ = review.findings();
        let _ = review.flags();
    }
    let mut learned = known.clone();
    learned.learn(&next).expect("validated");
    let baseline = Baseline {
        previous: None,
        places: &learned.places,
        floor: Floor::None,
        signed: None,
    };
    assert!(guard::review(&baseline, &next, None).unwrap().moves.is_empty());
    // The change report, each changed model's fields worked out (as
    // `--json` does), either way round: a model is listed as changed only
    // when a field of it is.
    for changes in [changes::compare(real, &next), changes::compare(&next, real)] {
        serde_json::to_vec(&changes).expect("a report is JSON");
        for provider in &changes.providers_changed {
            assert!(provider.models_changed.iter().all(|m| !m.fields().is_empty()));
        }
    }
});
