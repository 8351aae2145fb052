//! Less than any update that reports its changes does, for
//! `scripts/bench` to measure `update-providers` against:
//!
//!     cargo run --release --example update-floor -- NEW.json DEST.json
//!
//! It reads the new catalog and the one at DEST, parses both with serde's
//! derive (catwalk's shape, unknown fields skipped: no Go rules, no
//! checks, no comparison), hashes the new bytes (SHA-256, which this
//! program's state records), and writes them over DEST as the copy floor
//! does: a temporary file beside it, flushed, renamed over it, the folder
//! flushed. No review, no report, no state.

use std::collections::BTreeMap;
use std::error::Error;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use compact_str::CompactString;
use serde::Deserialize;

#[derive(Deserialize)]
#[allow(dead_code)] // Read to be parsed, as an update reads them.
struct Provider {
    id: String,
    name: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    api_key: Option<String>,
    api_endpoint: Option<String>,
    default_large_model_id: Option<String>,
    default_small_model_id: Option<String>,
    #[serde(default)]
    models: Vec<Model>,
    #[serde(default)]
    default_headers: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Model {
    id: CompactString,
    name: Option<CompactString>,
    cost_per_1m_in: Option<f64>,
    cost_per_1m_out: Option<f64>,
    cost_per_1m_in_cached: Option<f64>,
    cost_per_1m_out_cached: Option<f64>,
    context_window: Option<i64>,
    default_max_tokens: Option<i64>,
    can_reason: Option<bool>,
    #[serde(default)]
    reasoning_levels: Vec<CompactString>,
    default_reasoning_effort: Option<CompactString>,
    supports_attachments: Option<bool>,
    options: Option<Box<Options>>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Options {
    temperature: Option<f64>,
    top_p: Option<f64>,
    top_k: Option<i64>,
    frequency_penalty: Option<f64>,
    presence_penalty: Option<f64>,
    provider_options: Option<serde_json::Map<String, serde_json::Value>>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, dest] = &args[..] else {
        return Err("usage: update-floor NEW.json DEST.json".into());
    };
    let dest = Path::new(dest);
    let new = std::fs::read(source)?;
    let old = std::fs::read(dest)?;
    let parsed: (Vec<Provider>, Vec<Provider>) =
        (serde_json::from_slice(&new)?, serde_json::from_slice(&old)?);
    let digest = ring::digest::digest(&ring::digest::SHA256, &new);
    std::hint::black_box((parsed, digest));
    let folder = dest.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let temporary = folder.join(".update-floor.tmp");
    let mut file = File::create(&temporary)?;
    file.write_all(&new)?;
    file.sync_all()?;
    std::fs::rename(&temporary, dest)?;
    File::open(folder)?.sync_all()?;
    Ok(())
}
