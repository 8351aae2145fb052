//! The embedded snapshot's outline, made once at build time: each provider
//! with only what the guard knows of the snapshot (its ids, its name, and
//! what decides where its keys go: type, key, endpoint, headers) and each
//! model with only its id, written as Rust constants (`outline.rs`) that
//! `catalog::embedded::outline` builds its catalog from: an update learns
//! the snapshot's floor without parsing anything. And the places the
//! snapshot sends each variable to (`places.rs`), found by the crate's own
//! code for it (`catalog::expand`, `trust::place`, compiled in here too),
//! which `trust::memory::snapshot_places` reads: an update learns them
//! without finding them again. Unit tests check that both teach what the
//! snapshot does.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde_json::{Map, Value};

// What decides where a key goes, the crate's own modules: the places
// written here are found as the guard finds them.
#[allow(dead_code)]
#[path = "src/catalog"]
mod catalog {
    pub mod escape;
    pub mod expand;
    pub mod go_url;
    pub(crate) use escape::{printable, quoted};
}
#[allow(dead_code)]
#[path = "src/trust/place.rs"]
mod place;

use place::Place;

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

/// Every variable the snapshot's `providers` name, and what the user's
/// configuration gives each provider, with the places it reaches: what
/// `trust::guard::places` finds (`reach`: the endpoint's place, the
/// variables of the key, the endpoint and the headers, the Hyper key for
/// the provider `hyper`, and `providers.ID`).
fn places(providers: &[Map<String, Value>]) -> BTreeMap<String, BTreeSet<Place>> {
    let mut places: BTreeMap<String, BTreeSet<Place>> = BTreeMap::new();
    for provider in providers {
        let id = text(provider, "id").unwrap_or("");
        let endpoint = text(provider, "api_endpoint").unwrap_or("");
        let endpoint =
            catalog::expand::endpoint(endpoint).expect("the snapshot's endpoints are exact");
        let reached = place::of_provider(&endpoint, text(provider, "type").unwrap_or(""));
        let mut holders: Vec<String> = endpoint
            .variables()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let headers = match field(provider, "default_headers") {
            Some(Value::Object(headers)) => headers.values().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for value in text(provider, "api_key").into_iter().chain(headers) {
            let value = catalog::expand::parse(value).expect("the snapshot's values are exact");
            holders.extend(value.variables().into_iter().map(str::to_owned));
        }
        if id == "hyper" {
            holders.push("HYPER_API_KEY".to_owned());
        }
        holders.push(format!("providers.{id}"));
        for holder in holders {
            places
                .entry(holder)
                .or_default()
                .extend(reached.iter().cloned());
        }
    }
    places
}

/// A place as Rust: the arguments of `trust::memory`'s `Written`.
fn written(place: &Place) -> String {
    match place {
        Place::Default { kind } => format!("Written::Default({kind:?})"),
        Place::Variable { name, kind } => format!("Written::Variable({name:?}, {kind:?})"),
        Place::Url { scheme, host, port } => {
            format!("Written::Url({scheme:?}, {host:?}, {port:?})")
        }
    }
}

fn main() {
    println!("cargo::rerun-if-changed={SNAPSHOT}");
    for module in [
        "catalog/escape.rs",
        "catalog/expand.rs",
        "catalog/go_url.rs",
        "trust/place.rs",
    ] {
        println!("cargo::rerun-if-changed=src/{module}");
    }
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
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("outline.rs"), rust).expect("the outline can be written");
    let mut rust = String::from("&[\n");
    for (holder, places) in places(&providers) {
        let places: Vec<String> = places.iter().map(written).collect();
        writeln!(rust, "({holder:?}, &[{}]),", places.join(", ")).expect("a String takes writes");
    }
    rust.push_str("]\n");
    std::fs::write(out.join("places.rs"), rust).expect("the places can be written");
}
