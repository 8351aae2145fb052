//! The embedded snapshot's outline, made once at build time: each provider
//! with only what the guard knows of the snapshot (its ids, its name, and
//! what decides where its keys go: type, key, endpoint, headers) and each
//! model with only its id, written as Rust constants (`outline.rs`) that
//! `catalog::embedded::outline` builds its catalog from: an update learns
//! the snapshot's places and floor without parsing anything. A unit test
//! checks that it teaches what the snapshot does.

use std::fmt::Write;

use serde_json::{Map, Value};

const SNAPSHOT: &str = "embedded/providers.json";

/// The value of the field tagged `tag` (a key in any case, as Go reads
/// them).
fn field<'v>(object: &'v Map<String, Value>, tag: &str) -> Option<&'v Value> {
    (object.iter())
        .find(|(key, _)| key.eq_ignore_ascii_case(tag))
        .map(|(_, value)| value)
}

fn text<'v>(object: &'v Map<String, Value>, tag: &str) -> Option<&'v str> {
    field(object, tag).and_then(Value::as_str)
}

fn main() {
    println!("cargo::rerun-if-changed={SNAPSHOT}");
    let json = std::fs::read_to_string(SNAPSHOT).expect("the embedded snapshot can be read");
    let providers: Vec<Map<String, Value>> =
        serde_json::from_str(&json).expect("the embedded snapshot is an array of objects");
    // Debug formatting writes Rust literals: `Some("...")`, `["...", ...]`.
    let mut rust = String::from("&[\n");
    for provider in &providers {
        let headers: Vec<(&str, &str)> = match field(provider, "default_headers") {
            Some(Value::Object(headers)) => (headers.iter())
                .filter_map(|(name, value)| Some((name.as_str(), value.as_str()?)))
                .collect(),
            _ => Vec::new(),
        };
        let models: Vec<&str> = match field(provider, "models") {
            Some(Value::Array(models)) => (models.iter())
                .filter_map(|model| text(model.as_object()?, "id"))
                .collect(),
            _ => Vec::new(),
        };
        writeln!(
            rust,
            "Outlined {{ id: {:?}, name: {:?}, kind: {:?}, api_key: {:?}, api_endpoint: {:?}, headers: &{headers:?}, models: &{models:?} }},",
            text(provider, "id").unwrap_or(""),
            text(provider, "name").unwrap_or(""),
            text(provider, "type"),
            text(provider, "api_key"),
            text(provider, "api_endpoint"),
        )
        .expect("a String takes writes");
    }
    rust.push_str("]\n");
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("outline.rs");
    std::fs::write(out, rust).expect("the outline can be written");
}
