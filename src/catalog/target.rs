//! The two documents Crush caches from the network, read by the one
//! reader of this module's parent ([`Target::validate`]): Catwalk's
//! catalog (`providers.json`, an array of providers) and Hyper's provider
//! (`hyper.json`, the one provider object Hyper's `/api/v1/provider`
//! answers).
//!
//! Hyper's document is read as a catalog's provider is, by the same rules
//! (Go's field names and types, the exact-place forms of the values Crush
//! expands, unique model ids, the depth Go reads), and comes back as a
//! catalog of that one provider, so that everything that decides about a
//! catalog (the guard, the change report) decides about it the same way.
//! Two things differ: a provider that names no model is refused (Crush's
//! refresh keeps its cached Hyper provider over one without models, and a
//! Hyper without models is of no use to it), and the depth is counted as
//! in a catalog, one level deeper than the document's own: a document
//! nested exactly to Go's limit is refused here and read by Go (no real
//! document comes near it).

/// Which document: what is read, where it is cached, where it is fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// Catwalk's catalog, `providers.json`.
    #[default]
    Catalog,
    /// Hyper's provider, `hyper.json`.
    Hyper,
}

impl Target {
    /// What the document is, in a word or two: `catalog`, `Hyper's
    /// provider`.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Target::Catalog => "catalog",
            Target::Hyper => "Hyper's provider",
        }
    }

    /// What the document is, for messages: `the provider catalog`,
    /// `Hyper's provider`.
    pub fn noun(self) -> &'static str {
        match self {
            Target::Catalog => "the provider catalog",
            Target::Hyper => "Hyper's provider",
        }
    }
}

/// The public Catwalk server.
pub(crate) const DEFAULT_CATWALK_URL: &str = "https://catwalk.charm.land";
/// Hyper's server (Crush's `hyper.BaseURL` without `HYPER_URL`).
pub(crate) const DEFAULT_HYPER_URL: &str = "https://hyper.charm.land";

/// The variable that names `target`'s server (and, for `update-providers`,
/// its default SOURCE): `CATWALK_URL`, `HYPER_URL`.
pub(crate) fn url_env(target: Target) -> &'static str {
    match target {
        Target::Catalog => "CATWALK_URL",
        Target::Hyper => "HYPER_URL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        Target::Hyper
            .validate(json.as_bytes())
            .unwrap_err()
            .to_string()
    }

    const HYPER: &str = r#"{"name":"Charm Hyper","id":"hyper","api_endpoint":"https://hyper.charm.land/api/v1/fantasy","type":"hyper","future":{"x":[1]},"models":[{"id":"m","name":"M"}]}"#;

    #[test]
    fn one_provider_is_a_catalog_of_it() {
        let catalog = Target::Hyper.validate(HYPER.as_bytes()).unwrap();
        assert_eq!(catalog.providers.len(), 1);
        assert_eq!(catalog.providers[0].id.as_str(), "hyper");
        assert_eq!(catalog.model_count(), 1);
        assert_eq!(
            Target::Hyper
                .validate(HYPER.as_bytes())
                .unwrap()
                .model_count(),
            1
        );
        // Each document is refused as the other.
        assert_eq!(
            Target::Catalog
                .validate(HYPER.as_bytes())
                .unwrap_err()
                .to_string(),
            "expected a JSON array of providers, found an object"
        );
        assert_eq!(
            err(&format!("[{HYPER}]")),
            "expected a JSON object (one provider), found an array"
        );
    }

    /// Every rule of a catalog's provider, named at its field.
    #[test]
    fn it_is_read_by_the_rules_of_a_catalogs_provider() {
        for (json, expected) in [
            ("", "it is empty"),
            ("<html>login</html>", "an HTML page, not a JSON catalog"),
            (
                r#"{"id":"hyper"}"#,
                "the provider (\"hyper\"): missing field `name`",
            ),
            (
                r#"{"id":"hyper","name":"H","ID":"x","models":[{"id":"m"}]}"#,
                "the provider (\"hyper\"): two keys name the field id: \"id\" and \"ID\" (Crush would read only the last)",
            ),
            (
                r#"{"id":"hyper","name":"H","models":[{"id":"m","context_window":"big"}]}"#,
                "the provider (\"hyper\"): models[0] (\"m\"): field context_window: invalid type: string \"big\", expected an integer",
            ),
            (
                r#"{"id":"hyper","name":"H","models":[{"id":"m"},{"id":"m"}]}"#,
                "the provider (\"hyper\"): models[1] (\"m\"): id is not unique within the provider",
            ),
            (
                r#"{"id":"hyper","name":" ","models":[{"id":"m"}]}"#,
                "the provider (\"hyper\"): name is empty",
            ),
            (
                r#"{"id":"hyper","name":"H","models":[]}"#,
                "the provider (\"hyper\") names no model: Crush keeps the Hyper provider it has over one without models",
            ),
            (
                r#"{"id":"openai","name":"H","models":[{"id":"m"}]}"#,
                "the provider (\"openai\") is not Hyper's: its id must be \"hyper\", or Crush lists it as another provider and loses Hyper",
            ),
        ] {
            assert_eq!(err(json), expected, "{json}");
        }
        // The exact-place forms: a default word in an endpoint is refused.
        let moved = HYPER.replace(
            "https://hyper.charm.land/api/v1/fantasy",
            "${HYPER_HOST:-https://evil.example}/v1",
        );
        assert!(
            err(&moved).starts_with("the provider (\"hyper\"): field api_endpoint: "),
            "{}",
            err(&moved)
        );
    }

    #[test]
    fn depth_past_gos_limit_is_refused() {
        let deep = format!(
            r#"{{"id":"hyper","name":"H","models":[{{"id":"m"}}],"x":{}{}}}"#,
            "[".repeat(10_001),
            "]".repeat(10_001)
        );
        assert!(err(&deep).contains("exceeded max depth"), "{}", err(&deep));
    }
}
