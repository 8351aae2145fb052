//! The guard on whatever a mutated catalog says: reading it, following its
//! variables to their places and reviewing it against the real catalog
//! never panics, and what it finds (and the change report) is consistent
//! with itself.
#![no_main]

use crush_providers::catalog::{changes, embedded, expand, validate};
use crush_providers::trust::guard::{self, Baseline};
use crush_providers::trust::place;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Any text, as a value Crush would expand, and as an endpoint.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(template) = expand::parse(text) {
            let _ = place::place(text, &template);
        }
    }
    let Ok(next) = validate(data) else {
        return;
    };
    let real = embedded::catalog().expect("the embedded catalog is valid");
    // A catalog against itself moves nothing, loses nothing, changes
    // nothing.
    let same = guard::review(&Baseline::Cache(&next, Some(1)), &next, Some(1));
    assert!(same.is_clear(), "{same:?}");
    assert!(changes::compare(&next, &next).is_empty());
    // Against the real catalog, every move is of a variable the real
    // catalog sends, to a place it never sends it.
    let known = guard::places(&real);
    let review = guard::review(&Baseline::Cache(&real, None), &next, None);
    for moved in &review.moves {
        let places = known.get(&moved.variable).expect("a known variable");
        assert!(!places.contains(&moved.to), "{moved:?}");
    }
    let embedded = guard::review(&Baseline::Embedded(&real), &next, None);
    assert_eq!(embedded.moves, review.moves);
    assert!(embedded.shrink.is_none() && embedded.downgrade.is_none());
    // The change report, each changed model's fields worked out (as
    // `--json` does), either way round: a model is listed as changed only
    // when a field of it is.
    for changes in [changes::compare(&real, &next), changes::compare(&next, &real)] {
        serde_json::to_vec(&changes).expect("a report is JSON");
        for provider in &changes.providers_changed {
            assert!(provider.models_changed.iter().all(|m| !m.fields().is_empty()));
        }
    }
});
