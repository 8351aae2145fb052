//! The catalog snapshot compiled into the binary: the last fallback, and what
//! `update-providers embedded` restores.

use include_dir::{Dir, include_dir};

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/embedded");

/// The snapshot's bytes, exactly as committed in `embedded/providers.json`.
pub fn catalog_bytes() -> &'static [u8] {
    EMBEDDED
        .get_file("providers.json")
        .map(|f| f.contents())
        .unwrap_or_default()
}

/// The day the snapshot was taken (`embedded/snapshot-date`), e.g. `2026-11-30`.
pub fn snapshot_date() -> &'static str {
    // A constant rather than a lookup in `EMBEDDED`: every run prints it in
    // `--version`, whose text clap builds at start.
    const DATE: &str = include_str!("../embedded/snapshot-date").trim_ascii();
    DATE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn snapshot_is_a_valid_catalog_of_at_least_ten_providers() {
        let catalog = catalog::validate(catalog_bytes()).expect("embedded snapshot must validate");
        assert!(
            catalog.providers.len() >= 10,
            "{} providers",
            catalog.providers.len()
        );
        assert!(catalog.warnings.is_empty(), "{:?}", catalog.warnings);
        for provider in &catalog.providers {
            assert!(
                !provider.models().is_empty(),
                "{} has no models",
                provider.id
            );
            let key = provider.api_key.as_ref().map(|k| k.as_str()).unwrap_or("$");
            assert!(
                key.is_empty() || key.starts_with('$'),
                "{}: api_key must be an env reference",
                provider.id
            );
        }
    }

    #[test]
    fn snapshot_date_is_iso_day() {
        let date = snapshot_date();
        assert_eq!(date.len(), 10, "{date}");
        assert!(date.chars().all(|c| c.is_ascii_digit() || c == '-'));
    }
}
