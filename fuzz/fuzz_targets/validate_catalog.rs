//! Catalog validation must never panic, and whatever it accepts must hold
//! the promises the rest of the program relies on.
#![no_main]

use std::collections::HashSet;

use crush_providers::catalog;
use crush_providers::internals::catalog::MAX_ID_BYTES;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match catalog::validate(data) {
        Ok(catalog) => {
            assert!(!catalog.providers.is_empty());
            let mut ids = HashSet::new();
            for provider in &catalog.providers {
                let id = provider.id.as_str();
                assert!(!id.is_empty() && id.len() <= MAX_ID_BYTES);
                assert!(!id.chars().any(char::is_control));
                assert!(ids.insert(id));
                let mut models = HashSet::new();
                for model in provider.models() {
                    assert!(!model.id.as_str().is_empty());
                    assert!(models.insert(model.id.as_str()));
                }
            }
            // What is accepted is UTF-8 JSON that a generic parser reads
            // too, but for lone surrogate escapes in fields this project
            // skips (Go's encoding/json, which Crush uses, accepts them).
            assert!(std::str::from_utf8(data).is_ok());
            // The same holds for a number beyond f64 in a skipped field.
            match serde_json::from_slice::<serde_json::Value>(data) {
                Err(e) => assert!(has_surrogate_escape(data) || e.to_string().starts_with("number out of range"), "{e}"),
                // Providers and models are objects, as Go's encoding/json
                // (which Crush reads the cache with) requires.
                Ok(value) => {
                    for provider in value.as_array().expect("an array") {
                        assert!(provider.is_object(), "{provider}");
                        for model in provider["models"].as_array().into_iter().flatten() {
                            assert!(model.is_object(), "{model}");
                        }
                    }
                }
            }
        }
        Err(e) => {
            // Errors are shown on one line of a terminal.
            assert!(!e.to_string().is_empty());
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
        }
    }
});

/// Whether `data` holds a `\uD800`–`\uDFFF` escape.
fn has_surrogate_escape(data: &[u8]) -> bool {
    data.windows(4).any(|w| {
        w[0] == b'\\' && w[1] == b'u' && w[2].eq_ignore_ascii_case(&b'd') && matches!(w[3].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
    })
}
