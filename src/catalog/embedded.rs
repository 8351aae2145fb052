//! The catalog snapshot compiled into the binary: the last fallback, and what
//! `update-providers embedded` restores.

use std::sync::{Arc, LazyLock};

use super::{Catalog, Provider};

/// The snapshot's bytes, exactly as committed in `embedded/providers.json`.
pub fn catalog_bytes() -> &'static [u8] {
    include_bytes!("../../embedded/providers.json")
}

/// One provider of the snapshot's outline, as `build.rs` writes it.
struct Outlined {
    id: &'static str,
    name: &'static str,
    kind: Option<&'static str>,
    api_key: Option<&'static str>,
    api_endpoint: Option<&'static str>,
    headers: &'static [(&'static str, &'static str)],
    models: &'static [&'static str],
}

/// The snapshot's outline, written as constants by `build.rs`.
const OUTLINED: &[Outlined] = include!(concat!(env!("OUT_DIR"), "/outline.rs"));

/// The snapshot's outline, built once: its providers with their ids,
/// names and what decides where their keys go, without their models
/// ([`model_ids`]). It is what the user trusted by installing this build
/// as the guard knows it (`crate::trust::guard`: its places), without
/// parsing the snapshot at each update. `the_outline_is_the_snapshots`
/// refuses a build whose outline does not teach what the snapshot does.
pub fn outline() -> &'static Catalog {
    static OUTLINE: LazyLock<Catalog> = LazyLock::new(|| {
        let own = |text: Option<&str>| text.map(str::to_owned);
        let provider = |p: &Outlined| Provider {
            id: p.id.to_owned(),
            name: p.name.to_owned(),
            kind: own(p.kind),
            api_key: own(p.api_key),
            api_endpoint: own(p.api_endpoint),
            default_headers: (p.headers.iter())
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            ..Provider::default()
        };
        Catalog {
            providers: OUTLINED.iter().map(|p| Arc::new(provider(p))).collect(),
            warnings: Vec::new(),
            spans: Vec::new(),
        }
    });
    &OUTLINE
}

/// The snapshot's provider ids, each with its model ids (from the
/// outline): the floor of the guard, with no model built.
pub fn model_ids() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    OUTLINED.iter().map(|p| (p.id, p.models))
}

/// Where the snapshot came from, as recorded by `scripts/refresh-embedded`
/// in `embedded/origin`: e.g. `Catwalk v0.52.6, released 2026-08-21`.
pub fn origin() -> &'static str {
    // A constant: every run shows it in `--version`, whose text clap
    // builds at start.
    const ORIGIN: &str = include_str!("../../embedded/origin").trim_ascii();
    ORIGIN
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    /// The snapshot is the real public catalog: every provider and model a
    /// connected machine would get, each default model present, and keys
    /// only as environment references (or none: Bedrock and Vertex use the
    /// cloud's own credentials).
    #[test]
    fn snapshot_is_the_real_catalog() {
        let catalog = catalog::validate(catalog_bytes()).expect("embedded snapshot must validate");
        assert!(
            catalog.providers.len() >= 40,
            "{} providers",
            catalog.providers.len()
        );
        assert!(
            catalog.model_count() >= 1500,
            "{} models",
            catalog.model_count()
        );
        // A default model id that names no model is a validation warning.
        assert!(catalog.warnings.is_empty(), "{:?}", catalog.warnings);
        for provider in &catalog.providers {
            assert!(
                !provider.models().is_empty(),
                "{} has no models",
                provider.id
            );
            for default in [
                &provider.default_large_model_id,
                &provider.default_small_model_id,
            ] {
                assert!(
                    default.as_ref().is_some_and(|id| !id.as_str().is_empty()),
                    "{} lacks a default model",
                    provider.id
                );
            }
            let key = provider.api_key.as_deref().unwrap_or("");
            assert!(
                key.is_empty() || key.starts_with('$'),
                "{}: api_key must be an env reference",
                provider.id
            );
            // Every endpoint, key and header in the forms the guard
            // places exactly: a variable, or a literal https URL.
            let endpoint = provider.api_endpoint.as_ref().map_or("", |e| e.as_str());
            match crate::catalog::expand::endpoint(endpoint).unwrap() {
                crate::catalog::expand::Endpoint::Url { to, rest, .. } => {
                    assert_eq!(to.scheme, "https", "{}", provider.id);
                    assert!(rest.variables().is_empty(), "{}", provider.id);
                }
                other => assert!(
                    endpoint.is_empty()
                        || matches!(other, crate::catalog::expand::Endpoint::Variable(_)),
                    "{}",
                    provider.id
                ),
            }
        }
    }

    /// The outline is the snapshot with only what the guard reads: each
    /// provider's ids, name and what decides where its keys go, and apart,
    /// each model's id; so it teaches the same places and the same ids.
    #[test]
    fn the_outline_is_the_snapshots() {
        use crate::trust::{guard, memory};
        let snapshot = catalog::validate(catalog_bytes()).unwrap();
        let outline = outline();
        let outlined = (snapshot.providers.iter()).map(|p| Provider {
            id: p.id.clone(),
            name: p.name.clone(),
            kind: p.kind.clone(),
            api_key: p.api_key.clone(),
            api_endpoint: p.api_endpoint.clone(),
            default_headers: p.default_headers.clone(),
            ..Provider::default()
        });
        assert!(outlined.eq(outline.providers.iter().map(|p| (**p).clone())));
        let ids = model_ids().map(|(p, m)| (p.to_owned(), m.iter().map(|&m| m.into()).collect()));
        assert_eq!(ids.collect::<memory::Ids>(), memory::ids(&snapshot));
        assert_eq!(
            guard::places(outline).unwrap(),
            guard::places(&snapshot).unwrap()
        );
    }

    #[test]
    fn origin_names_a_release_and_a_day() {
        let origin = origin();
        assert!(!origin.is_empty() && !origin.contains('\n'), "{origin:?}");
        let day = origin.rsplit(' ').next().unwrap();
        assert_eq!(day.len(), 10, "{origin:?} should end with YYYY-MM-DD");
        assert!(day.chars().all(|c| c.is_ascii_digit() || c == '-'));
    }
}
