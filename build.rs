//! The embedded snapshot's outline, made once at build time: each provider
//! with only what the guard knows of the snapshot (its ids, its name, and
//! what decides where its keys go: type, key, endpoint, headers) and each
//! model with only its id; a tenth of the snapshot. An update learns the
//! snapshot's places and floor from it (`catalog::embedded::outline`)
//! instead of parsing the whole snapshot again; a unit test checks that it
//! teaches what the snapshot does.

use serde_json::{Map, Value};

const SNAPSHOT: &str = "embedded/providers.json";
const PROVIDER_FIELDS: [&str; 6] = [
    "id",
    "name",
    "type",
    "api_key",
    "api_endpoint",
    "default_headers",
];

/// `object` with only the keys naming `fields` (in any case, as Go reads
/// them).
fn only(object: &Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    let kept = |key: &String| fields.iter().any(|f| key.eq_ignore_ascii_case(f));
    (object.iter())
        .filter(|(key, _)| kept(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

fn main() {
    println!("cargo::rerun-if-changed={SNAPSHOT}");
    let text = std::fs::read_to_string(SNAPSHOT).expect("the embedded snapshot can be read");
    let providers: Vec<Map<String, Value>> =
        serde_json::from_str(&text).expect("the embedded snapshot is an array of objects");
    let outline: Vec<Map<String, Value>> = (providers.iter())
        .map(|provider| {
            let mut outlined = only(provider, &PROVIDER_FIELDS);
            let models = provider
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("models"));
            if let Some((key, Value::Array(models))) = models {
                let ids = models.iter().filter_map(Value::as_object);
                let ids = ids.map(|model| Value::Object(only(model, &["id"])));
                outlined.insert(key.clone(), Value::Array(ids.collect()));
            }
            outlined
        })
        .collect();
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("outline.json");
    let json = serde_json::to_vec(&outline).expect("JSON values serialise");
    std::fs::write(out, json).expect("the outline can be written");
}
