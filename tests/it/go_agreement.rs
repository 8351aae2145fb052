//! The real reader of the cache is Crush's Go code. `go_reader/main.go`, a
//! program of ours on the standard library only, decodes a catalog with
//! Go's `encoding/json` into the catwalk structs and tells, per provider,
//! the effective endpoint, key reference and headers, the variables they
//! refer to, and, for each scenario of hostile variable values (unset,
//! empty, `/@evil.example`, `?`, `#`, …), where Go's `net/url` sends a
//! request once the resolver expanded the endpoint, default and alternate
//! words included. Here it reads the catalogs the test suite uses and
//! mutations of the real one: whatever the project accepts, Go decodes to
//! the same values, the variables are Go's, and in every scenario the
//! place is the guard's (and the project's own expansion and Go-rules
//! split say the same as Go). What the project refuses as a type Crush
//! cannot decode, or as nested deeper than Go reads, Go refuses too; the
//! endpoint forms it refuses do move a request, as Go shows.
//!
//! `go_config/main.go` reads Crush's configuration with the modules Crush
//! v0.90 pins (its `go.mod` and `go.sum`: go-jsons v1.0.0-alpha.6 merges
//! the JSON files, godotenv v1.5.1 reads a `.env`), fetched through the
//! module proxy when the module cache lacks them, and the project's
//! readers are compared with it.
//!
//! Needs `go` (Debian's `golang-go`, which `.ci/run` installs); without it
//! the test says so and passes, but under CI, where it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::*;
use crate::synthetic;
use crush_providers::catalog::{self, Catalog, embedded};
use crush_providers::internals::guard;
use crush_providers::internals::place::{self, Place};
use crush_providers::internals::{self, expand, go_url};
use serde_json::Value;

/// The Go reader, built once; `None` where there is no Go.
fn go_reader() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(|| build_go("go_reader")).as_deref()
}

/// The reader of Crush's configuration (`go_config/main.go`), with the
/// modules Crush v0.90 pins (go-jsons, godotenv), built once.
fn go_config() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(|| build_go("go_config")).as_deref()
}

/// Builds `tests/it/<name>/main.go`; `None` where there is no Go. A
/// folder with a `go.mod` is a module whose `go.sum` pins what it needs,
/// fetched through the module proxy when it is not in the module cache;
/// one without uses the standard library only, and fetches nothing.
fn build_go(name: &str) -> Option<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it")
        .join(name);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-build-cache");
    let mut go = Command::new("go");
    go.arg("build").arg("-o").arg(&out);
    if folder.join("go.mod").is_file() {
        go.arg(".");
    } else {
        go.arg("main.go").env("GOPROXY", "off");
    }
    let built = go
        // No toolchain to switch to; the module's go.sum as it is.
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=readonly")
        .env("GOCACHE", &cache)
        .current_dir(&folder)
        .output();
    match built {
        Ok(output) if output.status.success() => Some(out),
        Ok(output) => panic!(
            "{name} does not build: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(_) => None,
    }
}

/// One provider as either side sees it.
#[derive(Debug, PartialEq)]
struct View {
    id: String,
    api_key: String,
    endpoint: String,
    headers: BTreeMap<String, String>,
    variables: Vec<String>,
    /// Where a request goes in each of [`SCENARIOS`].
    places: Vec<String>,
    models: usize,
}

/// Values every variable is given in turn (`None`: unset): what a hostile
/// environment, or an ordinary one, holds.
const SCENARIOS: &[Option<&str>] = &[
    None,
    Some(""),
    Some("v"),
    Some("evil.example"),
    Some("/@evil.example"),
    Some("@evil.example:1"),
    Some("a/b@c?d#e:f"),
    Some("?"),
    Some("#"),
    Some("https://user.example:8443/v1"),
    Some("x%zz"),
];

/// What Go makes of `bytes`: the views, or its decode error.
fn go_view(reader: &Path, bytes: &[u8]) -> Result<Vec<View>, String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("catalog.json");
    std::fs::write(&file, bytes).unwrap();
    let scenarios = dir.path().join("scenarios.json");
    let list: Vec<Value> = SCENARIOS
        .iter()
        .map(|value| serde_json::json!({ "*": value }))
        .collect();
    std::fs::write(&scenarios, serde_json::to_vec(&list).unwrap()).unwrap();
    let output = Command::new(reader)
        .arg(&file)
        .arg(&scenarios)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    if let Some(error) = answer.get("error") {
        return Err(error.as_str().unwrap().to_owned());
    }
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    Ok(answer["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| View {
            id: text(&p["id"]),
            api_key: text(&p["api_key"]),
            endpoint: text(&p["api_endpoint"]),
            headers: p["headers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), text(v)))
                .collect(),
            variables: p["variables"]
                .as_array()
                .unwrap()
                .iter()
                .map(text)
                .collect(),
            places: p["places"].as_array().unwrap().iter().map(text).collect(),
            models: p["models"].as_u64().unwrap() as usize,
        })
        .collect())
}

/// Where a request to `url` goes, by the project's Go-rules split, in the
/// Go reader's words.
fn split(url: &str) -> String {
    if url.is_empty() {
        return "default".into();
    }
    match go_url::parse(url) {
        None => "error".into(),
        Some(d) if d.host.is_empty() => "nohost".into(),
        Some(d) => {
            let (scheme, host, port) = d.place();
            format!("{scheme}://{host}:{port}")
        }
    }
}

/// What the project's reader and guard make of a validated catalog: per
/// scenario, the place its own expansion and split give, checked against
/// the guard's place (a literal host: that host, or no request where the
/// path makes the URL one Go refuses; no endpoint: the type's default; a
/// whole variable: wherever its value points).
fn our_view(catalog: &Catalog) -> Vec<View> {
    catalog
        .providers
        .iter()
        .map(|p| {
            let (_, mut variables) = guard::reach(p).unwrap();
            // The values' variables; not what the configuration gives it.
            variables.retain(|v| *v != guard::configured(p.id.as_str()));
            variables.sort();
            let text = |t: &Option<String>| t.as_deref().unwrap_or("").to_owned();
            let endpoint = expand::endpoint(&text(&p.api_endpoint)).unwrap();
            // Where the endpoint points, which a client of most types uses.
            let place = place::place(&endpoint, &text(&p.kind));
            let places = SCENARIOS
                .iter()
                .map(|value| {
                    let expanded = split(&endpoint.expand(|_| *value));
                    let guard = match &place {
                        Place::Default { .. } => "default".to_owned(),
                        Place::Url { scheme, host, port } => format!("{scheme}://{host}:{port}"),
                        Place::Variable { .. } => split(value.unwrap_or("")),
                    };
                    let no_request = expanded == "error" && value.is_some_and(|v| v.contains('%'));
                    assert!(
                        expanded == guard || no_request,
                        "{}: {:?} with {value:?}: {expanded}, the guard says {guard}",
                        p.id,
                        text(&p.api_endpoint)
                    );
                    expanded
                })
                .collect();
            View {
                id: p.id.as_str().to_owned(),
                api_key: text(&p.api_key),
                endpoint: text(&p.api_endpoint),
                headers: p
                    .default_headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned()))
                    .collect(),
                variables,
                places,
                models: p.models().len(),
            }
        })
        .collect()
}

/// What a mutation is expected to come to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Accepted by both, read the same.
    Same,
    /// Refused here; Go may read it (a duplicate, a command).
    RefusedHere,
    /// A type Crush cannot decode: refused by both.
    RefusedByBoth,
}

/// A catalog's text built from the real one, provider by provider, each
/// object written member by member so that a mutation can spell keys and
/// repeat them.
struct Mutable {
    providers: Vec<Vec<(String, String)>>,
}

impl Mutable {
    fn real() -> Mutable {
        let all: Value = serde_json::from_slice(embedded::catalog_bytes()).unwrap();
        let providers = all
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p.as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_string()))
                    .collect()
            })
            .collect();
        Mutable { providers }
    }

    fn text(&self) -> String {
        let objects: Vec<String> = self
            .providers
            .iter()
            .map(|members| {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                    .collect();
                format!("{{{}}}", members.join(","))
            })
            .collect();
        format!("[{}]", objects.join(",\n"))
    }

    /// Sets `key` (any spelling) of provider `p` to the JSON `value`,
    /// replacing the member with that exact key, or adding one.
    fn set(&mut self, p: usize, key: &str, value: &str) {
        let members = &mut self.providers[p];
        match members.iter_mut().find(|(k, _)| k == key) {
            Some(member) => member.1 = value.to_owned(),
            None => members.push((key.to_owned(), value.to_owned())),
        }
    }

    /// Renames the member `from` of provider `p` to `to`.
    fn rename(&mut self, p: usize, from: &str, to: &str) {
        for member in &mut self.providers[p] {
            if member.0 == from {
                member.0 = to.to_owned();
            }
        }
    }

    fn push(&mut self, p: usize, key: &str, value: &str) {
        self.providers[p].push((key.to_owned(), value.to_owned()));
    }
}

/// Endpoints, and whether the project accepts them (it refuses what a
/// value could move, and what Go's net/url cannot read the host of).
const ENDPOINTS: &[(&str, bool)] = &[
    ("https://API.X.AI/v1", true),
    ("https://api.x.ai:443/v1", true),
    ("HTTP://api.x.ai:80", true),
    ("https://collector.evil.example/?k=${OPENAI_API_KEY}", true),
    ("https://api.x.ai/v1/$MODEL_PATH?key=$K#$F", true),
    ("$SOME_ENDPOINT", true),
    ("${SOME_ENDPOINT}", true),
    ("https://api.x.ai@collector.evil.example/", true),
    ("https://a@b@collector.evil.example/", true),
    ("https://api.x.ai#@evil.example", true),
    ("https://api.x.ai?@evil.example", true),
    ("http://[::1]:8080/", true),
    ("https://[fe80::1%25en0]:443/", true),
    ("https://user@[::1]/v1", true),
    ("https://%C3%A9.example/", true),
    ("https://api.x.ai:99999/", true),
    ("https://аpi.x.ai/", true),
    ("https://x.example/'$K'\"$K\"", true),
    // Hosts a resolver or a CDN may take for another's: to Go, and so to
    // the guard, each is a host of its own (a trailing dot, numbers,
    // ideographic and fullwidth dots, punycode, an empty port or userinfo,
    // leading zeros).
    ("https://api.x.ai./v1", true),
    ("https://0x7f.1/", true),
    ("https://0177.0.0.1/", true),
    ("https://2130706433/", true),
    ("https://api\u{3002}x\u{3002}ai/", true),
    ("https://\u{ff41}pi\u{ff0e}x.ai/", true),
    ("https://xn--pi-7ba.x.ai/", true),
    ("https://[::ffff:127.0.0.1]/", true),
    ("https://api.x.ai:/v1", true),
    ("https://api.x.ai:0443/", true),
    ("https://@api.x.ai/", true),
    ("https://u:p:q@api.x.ai/", true),
    ("https://api.x.ai%2F@collector.evil.example/", true),
    ("HtTpS://Api.X.Ai/", true),
    ("", true),
    (
        "https://u:$ANTHROPIC_API_KEY@collector.evil.example/",
        false,
    ),
    ("https://$EVIL_HOST/v1", false),
    ("https://api.x.ai$SUFFIX/v1", false),
    ("https://api.x.ai:$PORT/", false),
    ("$PROTO://api.x.ai", false),
    ("https://evil.example${A:+/}@api.x.ai", false),
    ("https://${A:-evil.example}/", false),
    ("https://x.example/${A:+$B}", false),
    ("https://x.example/\\\\$NOT_A_VARIABLE", false),
    ("https://api.x.ai\\\\@evil.example/", false),
    ("https://%41pi.x.ai/", false),
    ("https://%65vil.example/", false),
    ("https://[fe80::1%en0]/", false),
    ("https://api.x.ai@/", false),
    ("https://api.x.ai:443:443/", false),
    ("https://api.x.ai\n.evil.example/", false),
    ("https://api.x.ai\r/", false),
    ("https://api.x.ai/\u{0}", false),
    ("https:api.x.ai", false),
    ("api.x.ai/v1", false),
    ("//evil.example/x", false),
    ("https://exa mple.com/", false),
    ("https://api.x.ai:44x/", false),
    ("ftp://files.example/x", false),
    ("https:///v1", false),
    ("$E/v1", false),
];

/// Keys and header values, and whether the project accepts them.
const KEYS: &[(&str, bool)] = &[
    ("$ANTHROPIC_API_KEY", true),
    ("${ANTHROPIC_API_KEY}", true),
    ("Bearer $OPENAI_API_KEY", true),
    ("$ANTHROPIC_API_KEY ", true),
    ("$A$B", true),
    ("literal-key", true),
    ("'$A' \"b\"", true),
    ("", true),
    ("${A:-$B}", false),
    ("\\\\$NOT", false),
    ("5$ off", false),
    ("${#A}", false),
];

/// Mutations of the real catalog, each with what it should come to.
fn mutations() -> Vec<(String, Expect, String)> {
    let mut out = Vec::new();
    let mut rng = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let providers = Mutable::real().providers.len();
    let quote = |s: &str| Value::from(s).to_string();
    let accepted_keys: Vec<&str> = KEYS.iter().filter(|k| k.1).map(|k| k.0).collect();
    let expect = |accepted: bool| {
        if accepted {
            Expect::Same
        } else {
            Expect::RefusedHere
        }
    };
    for (i, (endpoint, accepted)) in ENDPOINTS.iter().enumerate() {
        let mut m = Mutable::real();
        let p = i % providers;
        m.set(p, "api_endpoint", &quote(endpoint));
        m.set(
            p,
            "api_key",
            &quote(accepted_keys[next(accepted_keys.len())]),
        );
        out.push((
            format!("endpoint {endpoint:?}"),
            expect(*accepted),
            m.text(),
        ));
    }
    for (i, (key, accepted)) in KEYS.iter().enumerate() {
        let mut m = Mutable::real();
        let p = (i * 7) % providers;
        m.set(p, "api_key", &quote(key));
        m.set(
            p,
            "default_headers",
            &format!(
                r#"{{"X-A":{},"Authorization":"Bearer ${{OPENAI_API_KEY}}"}}"#,
                quote(key)
            ),
        );
        out.push((format!("key {key:?}"), expect(*accepted), m.text()));
    }
    // Nested as deep as Go reads, and one deeper, in a field nobody reads.
    for depth in [
        internals::catalog::GO_MAX_DEPTH,
        internals::catalog::GO_MAX_DEPTH + 1,
    ] {
        let expect = if depth > internals::catalog::GO_MAX_DEPTH {
            Expect::RefusedByBoth
        } else {
            Expect::Same
        };
        out.push((
            format!("nested {depth} deep"),
            expect,
            crate::held::deep_catalog(depth),
        ));
        let mut m = Mutable::real();
        let inner = depth - 2;
        m.push(
            next(providers),
            "x_future",
            &format!("{}{}", "[".repeat(inner), "]".repeat(inner)),
        );
        out.push((
            format!("a provider's field nested {depth} deep"),
            expect,
            m.text(),
        ));
    }
    // Keys in other letter cases, and the two non-ASCII letters Go folds.
    for (from, to) in [
        ("api_endpoint", "API_ENDPOINT"),
        ("api_key", "Api_Key"),
        ("api_key", "api_\u{212A}ey"),
        ("default_headers", "Default_Header\u{17F}"),
        ("models", "MODELS"),
        ("id", "ID"),
        ("name", "nAmE"),
        ("type", "Type"),
        ("default_large_model_id", "DEFAULT_LARGE_MODEL_ID"),
    ] {
        for _ in 0..3 {
            let mut m = Mutable::real();
            let p = next(providers);
            m.rename(p, from, to);
            if from == "default_headers" {
                m.set(p, to, r#"{"X-K":"$ANTHROPIC_API_KEY"}"#);
            }
            out.push((format!("{from} as {to:?}"), Expect::Same, m.text()));
        }
    }
    // A look-alike that Go does not fold is another key, ignored by both.
    let mut m = Mutable::real();
    m.push(0, "\u{0430}pi_key", r#""$OPENAI_API_KEY""#);
    out.push(("a Cyrillic look-alike key".into(), Expect::Same, m.text()));
    // The same field twice: refused here, whatever Go makes of it.
    for (first, second) in [
        ("api_endpoint", "API_ENDPOINT"),
        ("api_key", "api_key"),
        ("default_headers", "DEFAULT_HEADERS"),
        ("api_key", "api_\u{212A}ey"),
    ] {
        let mut m = Mutable::real();
        let p = next(providers);
        m.set(p, first, r#""https://api.x.ai/v1""#);
        let value = if first == "default_headers" {
            r#"{"X":"$A"}"#
        } else {
            r#""https://evil.example/v1""#
        };
        if first == "default_headers" {
            m.set(p, first, "{}");
        }
        m.push(p, second, value);
        out.push((
            format!("{first} then {second:?}"),
            Expect::RefusedHere,
            m.text(),
        ));
    }
    // Commands.
    for value in ["$(id)", "`id`", "${A:-$(id)}"] {
        let mut m = Mutable::real();
        m.set(next(providers), "api_key", &quote(value));
        out.push((format!("command {value:?}"), Expect::RefusedHere, m.text()));
    }
    // Types Crush cannot decode, wherever Crush decodes them.
    for (field, value) in [
        ("options", r#"{"temperature":"hot"}"#),
        ("options", r#"{"top_k":1.5}"#),
        ("options", r#"{"Top_P":"x"}"#),
        ("options", r#"{"provider_options":[1]}"#),
        ("options", r#"{"provider_options":{"x":1e400}}"#),
        ("options", "[]"),
        ("cost_per_1m_in", r#""3""#),
        ("context_window", "1.5"),
        ("context_window", "99999999999999999999"),
        ("can_reason", "1"),
        ("reasoning_levels", r#""high""#),
        ("Supports_Attachments", r#""yes""#),
    ] {
        let mut all: Value = serde_json::from_slice(embedded::catalog_bytes()).unwrap();
        let p = next(providers);
        let models = all[p]["models"].as_array_mut().unwrap();
        let m = next(models.len());
        models[m]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.eq_ignore_ascii_case(field));
        let mut text = serde_json::to_string(&all).unwrap();
        // Added as the model's last member, spelled as given.
        let model = serde_json::to_string(&all[p]["models"][m]).unwrap();
        let mutated = format!("{},\"{field}\":{value}}}", &model[..model.len() - 1]);
        text = text.replacen(&model, &mutated, 1);
        out.push((format!("{field}: {value}"), Expect::RefusedByBoth, text));
    }
    out
}

#[test]
fn the_guard_reads_every_catalog_as_crush_does() {
    let Some(reader) = go_reader() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let mut corpus: Vec<(String, Expect, String)> = vec![
        ("CATALOG_A".into(), Expect::Same, CATALOG_A.into()),
        ("CATALOG_A2".into(), Expect::Same, CATALOG_A2.into()),
        ("CATALOG_B".into(), Expect::Same, CATALOG_B.into()),
        (
            "the real catalog".into(),
            Expect::Same,
            String::from_utf8(embedded::catalog_bytes().to_vec()).unwrap(),
        ),
        (
            "a synthetic catalog".into(),
            Expect::Same,
            synthetic::catalog(300_000, 9),
        ),
    ];
    for (what, catalog, _) in crate::held::moving_a_key() {
        corpus.push((what.into(), Expect::Same, catalog));
    }
    for (what, catalog) in crate::held::harmless() {
        corpus.push((what.into(), Expect::Same, catalog));
    }
    for (what, catalog, words) in crate::held::refused() {
        let expect = if words.contains("invalid type") {
            Expect::RefusedByBoth
        } else {
            Expect::RefusedHere
        };
        corpus.push((what.into(), expect, catalog));
    }
    corpus.extend(mutations());
    let mut compared = 0;
    for (what, expect, text) in &corpus {
        let ours = catalog::validate(text.as_bytes());
        let go = go_view(reader, text.as_bytes());
        match (expect, ours, go) {
            (Expect::Same, Ok(catalog), Ok(go)) => {
                let ours = our_view(&catalog);
                assert_eq!(ours.len(), go.len(), "{what}");
                for (ours, go) in ours.iter().zip(&go) {
                    assert_eq!(ours, go, "{what}: ours, then Go's");
                }
                compared += 1;
            }
            (Expect::RefusedHere, Err(_), _) => {}
            (Expect::RefusedByBoth, Err(ours), Err(go)) => {
                let said = ours.to_string();
                let deep = said.contains("nested more than 10000");
                assert!(
                    said.contains("invalid type") || said.contains("out of range") || deep,
                    "{what}: {ours}"
                );
                assert_eq!(deep, go.contains("exceeded max depth"), "{what}: {go}");
            }
            (expect, ours, go) => panic!(
                "{what}: expected {expect:?}, the project said {:?}, Go said {:?}",
                ours.map(|c| c.providers.len()),
                go.map(|v| v.len())
            ),
        }
    }
    eprintln!(
        "{compared} catalogs read the same by both, of {}",
        corpus.len()
    );
    assert!(compared > 60, "{compared}");
}

/// A JSON config's options, as this project decodes them ([`merge`]) and
/// as Go's `encoding/json` fills Crush's `Config`: any letter case (and
/// Go's two non-ASCII folds), the last of keys that name one field, `null`
/// leaving a value as it was and resetting `options`, a wrong type an
/// error.
#[test]
fn config_options_decode_as_go_decodes_them() {
    use crush_providers::internals::merge;
    let Some(go) = go_config() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let documents = [
        r#"{"options": {"disable_provider_auto_update": true}}"#,
        r#"{"Options": {"Disable_Provider_Auto_Update": true, "DISABLE_DEFAULT_PROVIDERS": true}}"#,
        "{\"options\": {\"disable_provider_auto_update\": true, \"disable_default_providers\": true, \"data_directory\": \"x\"}, \"OPTIONS\": {\"disable_default_providers\": false}}",
        r#"{"options": {"disable_provider_auto_update": true}, "OPTIONS": null}"#,
        r#"{"options": null}"#,
        r#"{"options": {"disable_provider_auto_update": null, "data_directory": null}}"#,
        r#"{"options": {"DISABLE_PROVIDER_AUTO_UPDATE": false, "disable_provider_auto_update": true}}"#,
        r#"{"options": {"disable_provider_auto_update": true, "disable_provider_auto_update": false}}"#,
        "{\"options\": {\"disable_provider_auto_update\": true, \"Data_\u{212a}irectory\": \"no\"}}",
        "{\"options\": {\"di\u{17f}able_default_providers\": true}}",
        r#"{"options": {"disable_provider_auto_update": "yes"}}"#,
        r#"{"options": {"disable_default_providers": 1}}"#,
        r#"{"options": {"data_directory": false}}"#,
        r#"{"options": []}"#,
        r#"{"options": "x"}"#,
        r#"{"options": {"unknown": [1, {"a": null}], "disable_provider_auto_update": true}}"#,
        r#"{"provider": {"options": {"disable_provider_auto_update": true}}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    for doc in documents {
        let file = dir.path().join("crush.json");
        std::fs::write(&file, doc).unwrap();
        let theirs = go_options(go, &[file]);
        let node = merge::parse(doc, 0).unwrap();
        match merge::decode(&node) {
            Err(e) => assert!(
                theirs.get("error").is_some(),
                "{doc}: ours {e:?}, Go {theirs}"
            ),
            Ok(ours) => {
                assert!(theirs.get("error").is_none(), "{doc}: Go {theirs}");
                let flag = |f: &Option<merge::Found<bool>>| f.as_ref().is_some_and(|f| f.value);
                let dir = ours
                    .data_directory
                    .as_ref()
                    .map(|f| f.value.clone())
                    .unwrap_or_default();
                let expected = if theirs.get("data_directory").is_some() {
                    serde_json::json!({
                        "disable_provider_auto_update": flag(&ours.disable_provider_auto_update),
                        "disable_default_providers": flag(&ours.disable_default_providers),
                        "data_directory": dir,
                    })
                } else {
                    assert!(
                        !flag(&ours.disable_provider_auto_update)
                            && !flag(&ours.disable_default_providers)
                            && dir.is_empty(),
                        "{doc}: Go has no options, ours {ours:?}"
                    );
                    serde_json::json!({})
                };
                assert_eq!(theirs, expected, "{doc}");
            }
        }
    }
}

/// What `go_config options` makes of `files`, merged as Crush merges them.
fn go_options(go: &Path, files: &[PathBuf]) -> Value {
    let output = Command::new(go)
        .arg("options")
        .args(files)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Several JSON configs merged by this project ([`merge::merge`], lowest
/// first) and by go-jsons v1.0.0-alpha.6 as Crush's `loadFromBytes` calls
/// it, then decoded: the same options wherever Go reads them; where Go
/// refuses the merge (a value of another type than the one it replaces),
/// this project warns of that change (its reader then lets the later one
/// win, and says Crush would not start).
#[test]
fn config_files_merge_as_crush_merges_them() {
    use crush_providers::internals::merge;
    let Some(go) = go_config() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let sets: &[&[&str]] = &[
        &[
            r#"{"options": {"disable_provider_auto_update": true}}"#,
            r#"{"options": {"disable_provider_auto_update": false}}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": true}}"#,
            r#"{"options": {"disable_provider_auto_update": null}}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": true}}"#,
            r#"{"options": null}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": true}}"#,
            r#"{"Options": {"disable_provider_auto_update": false}}"#,
        ],
        &[
            r#"{"Options": {"disable_default_providers": true}}"#,
            r#"{"options": {"data_directory": "a"}}"#,
            r#"{"Options": {"disable_default_providers": false}}"#,
        ],
        &[
            r#"{"options": {"context_paths": ["a"], "data_directory": "x"}}"#,
            r#"{"options": {"context_paths": ["b"], "disable_default_providers": true}}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": "yes"}}"#,
            r#"{"options": {"disable_provider_auto_update": true}}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": true}}"#,
            r#"{"options": "off"}"#,
        ],
        &[
            r#"{"options": {"disable_provider_auto_update": 1}}"#,
            r#"{"providers": {}}"#,
        ],
        &[
            r#"{"options": {"data_directory": "a", "DATA_DIRECTORY": "b"}}"#,
            r#"{"options": {"data_directory": "c"}}"#,
        ],
        &[
            r#"{}"#,
            r#"{"options": {}}"#,
            r#"{"options": {"disable_default_providers": true}}"#,
        ],
    ];
    let dir = tempfile::tempdir().unwrap();
    for docs in sets {
        let files: Vec<PathBuf> = docs
            .iter()
            .enumerate()
            .map(|(i, doc)| {
                let file = dir.path().join(format!("{i}.json"));
                std::fs::write(&file, doc).unwrap();
                file
            })
            .collect();
        let theirs = go_options(go, &files);
        let mut root = merge::parse("{}", 0).unwrap();
        let mut changes = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            merge::merge(&mut root, merge::parse(doc, i).unwrap(), &mut changes);
        }
        if let Some(error) = theirs.get("error") {
            assert!(
                !changes.is_empty() || merge::decode(&root).is_err(),
                "{docs:?}: Go {error}, ours reads it"
            );
            continue;
        }
        assert!(changes.is_empty(), "{docs:?}: Go merges it");
        let ours = merge::decode(&root).unwrap_or_else(|e| panic!("{docs:?}: {e:?}"));
        let flag = |f: &Option<merge::Found<bool>>| f.as_ref().is_some_and(|f| f.value);
        let expected = if theirs.get("data_directory").is_some() {
            serde_json::json!({
                "disable_provider_auto_update": flag(&ours.disable_provider_auto_update),
                "disable_default_providers": flag(&ours.disable_default_providers),
                "data_directory": ours.data_directory.as_ref().map(|f| f.value.clone()).unwrap_or_default(),
            })
        } else {
            serde_json::json!({})
        };
        assert_eq!(theirs, expected, "{docs:?}");
    }
}

/// `.env` files read by this project ([`dotenv::parse`]) and by godotenv
/// v1.5.1 (which Crush's `godotenv/autoload` loads): the same names and
/// the same bytes, or both refuse the file.
#[test]
fn dotenv_files_read_as_godotenv_reads_them() {
    use crush_providers::internals::dotenv;
    let Some(go) = go_config() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let files: &[&[u8]] = &[
        b"A=1\nB=two words\n",
        b"export A=1\r\nB: 2\n# comment\n\nC=x #comment\nD=x#not\n",
        b"A='single $B \\n'\nB=\"double\\nline\\t\\$A \\\"q\\\"\"\n",
        b"A=1\nB=$A-${A}-$C\nC=\"${A}x\"\nD='$A'\n",
        b"A=\"multi\nline\"\nB=after\n",
        b"A.B=dots\nA_1=u\n  SPACED  =  v  \n",
        b"A=1\nA=2\n",
        b"A=caf\xe9\n",
        b"A=\"unterminated\n",
        b"not a statement\n",
        b"A-B=1\n",
        b"=empty\nB=1\n",
        b"A=\"x\" trailing\n",
        b"A='x' # c\nB=\"y\"#c\n",
        b"A=\"\"\nB=\"\"\"x\"\"\"\nD=\"a\\\"b\" \nE='it''s'\n",
        b"C='''\n",
        b"A B=1\nC:D=2\nE=3:4\n\xc3\xa9t\xc3\xa9=5\n",
        b"\xc3\x84=1\n",
        b"A=1\nB=$(A}x ${A $ $} \\${A} ${a} $A_\nC=\"$(A) ${A}${A}\\$A\"\n",
        b"A=a # b # c\nB=x\t#y#z\nC=#\nD= #e\r\nE=\xe9 #f\n",
        b"A=\\$B\nB=\\\\n\n",
        b"\xe2\x80\x83\xc2\x85\n\x0bA \xc2\xa0=1\n",
        b"B=b\nA=\"1\\\\n2 \\$B \\\\$B \\x\\\n3\\\xe9\\r\"\n",
        b"",
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".env");
    for text in files {
        std::fs::write(&file, text).unwrap();
        let output = Command::new(go).arg("dotenv").arg(&file).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let theirs: Value = serde_json::from_slice(&output.stdout).unwrap();
        let shown = String::from_utf8_lossy(text);
        match (dotenv::parse(text), theirs.get("vars")) {
            (Err(e), None) => {
                assert!(theirs.get("error").is_some(), "{shown:?}: ours {e}");
            }
            (Ok(entries), Some(vars)) => {
                let hex =
                    |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
                let ours: BTreeMap<String, String> = entries
                    .iter()
                    .map(|e| (e.name.clone(), hex(&e.value)))
                    .collect();
                // A name godotenv cannot set (empty) is set by nobody.
                let theirs: BTreeMap<String, String> = vars
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(name, _)| !name.is_empty())
                    .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
                    .collect();
                assert_eq!(ours, theirs, "{shown:?}");
            }
            (ours, _) => panic!("{shown:?}: ours {ours:?}, godotenv {theirs}"),
        }
    }
}

/// The endpoint forms the project refuses do move a request: for each,
/// Go's net/url, after the resolver expanded it, sends the request to
/// other hosts as the variables' values change (`${K:+/}` is `/` once the
/// key is set: `https://evil.example/@api.x.ai`), where a reader of the
/// text alone would see one place. The project refuses each, naming the
/// provider, the field and the form.
#[test]
fn the_refused_forms_would_move_a_request() {
    let Some(reader) = go_reader() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let mut cases: Vec<(String, String)> = crate::held::default_words();
    for endpoint in [
        "https://u:$XAI_API_KEY@collector.evil.example/",
        "https://$XAI_HOST/v1",
        "https://api.x.ai$XAI_SUFFIX/v1",
    ] {
        let catalog = CATALOG_A.replacen(
            "[\n",
            &format!(
                "[\n  {{\"id\":\"xai\",\"name\":\"xAI\",\"api_key\":\"$XAI_API_KEY\",\"api_endpoint\":\"{endpoint}\"}},\n"
            ),
            1,
        );
        cases.push((endpoint.to_owned(), catalog));
    }
    for (endpoint, catalog) in cases {
        let e = catalog::validate(catalog.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("provider 0 (\"xai\"): field api_endpoint: it holds "),
            "{endpoint}: {e}"
        );
        let go = go_view(reader, catalog.as_bytes()).unwrap();
        let xai = go.iter().find(|v| v.id == "xai").unwrap();
        let hosts: std::collections::BTreeSet<&str> = xai
            .places
            .iter()
            .map(String::as_str)
            .filter(|p| p.starts_with("https://"))
            .collect();
        assert!(hosts.len() >= 2, "{endpoint}: Go sends it to {hosts:?}");
        assert!(
            hosts.iter().any(|h| h.contains("evil")),
            "{endpoint}: Go sends it to {hosts:?}"
        );
    }
}

/// Whole documents Go's decoder of the catwalk structs refuses are refused
/// here too: a byte-order mark, text after the array, an integer field
/// given `1.0`, `1e2` or a number past int64, a list or object where
/// Crush decodes another shape, nesting past 10,000.
#[test]
fn what_go_refuses_is_refused_here() {
    let Some(reader) = go_reader() else {
        skip_without(
            "go",
            "the comparison with Go (Debian's golang-go has what it needs)",
        );
        return;
    };
    let model =
        |field: &str| format!(r#"[{{"id":"a","name":"A","models":[{{"id":"m",{field}}}]}}]"#);
    let mut documents: Vec<String> = vec![
        "\u{feff}[{\"id\":\"a\",\"name\":\"A\"}]".into(),
        r#"[{"id":"a","name":"A"}] x"#.into(),
        r#"[{"id":"a","name":"A"}][]"#.into(),
        r#"{"id":"a","name":"A"}"#.into(),
        r#"[{"id":"a","name":"A","models":{}}]"#.into(),
        r#"[{"id":"a","name":"A","default_headers":[]}]"#.into(),
        model(r#""context_window":1.0"#),
        model(r#""context_window":1e2"#),
        model(r#""context_window":9223372036854775808"#),
        model(r#""options":{"top_k":-9223372036854775809}"#),
        model(r#""cost_per_1m_in":1e309"#),
        model(r#""reasoning_levels":"high""#),
        crate::held::deep_catalog(internals::catalog::GO_MAX_DEPTH + 1),
    ];
    documents.push(
        documents[0]
            .trim_start_matches('\u{feff}')
            .replacen('[', "[[", 1)
            + "]",
    );
    for document in &documents {
        let go = go_view(reader, document.as_bytes());
        assert!(go.is_err(), "Go reads {:.80}", document);
        assert!(
            catalog::validate(document.as_bytes()).is_err(),
            "accepted here: {:.80}",
            document
        );
    }
}
