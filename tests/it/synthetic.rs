//! Synthetic catalogs of a requested size, for the tests, the benchmarks
//! (`#[path]`) and `examples/gen-catalog.rs`: the
//! realistic shape of a Catwalk catalog (providers of 30 to 300 models, every
//! known field, a few unknown ones, some escaped strings), deterministic for a
//! given seed, and valid by construction.

use std::fmt::Write;

/// Builds a catalog of at least `min_bytes` bytes (and at least one
/// provider), pretty-printed as Catwalk serves it.
pub fn catalog(min_bytes: usize, seed: u64) -> String {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let types = [
        "openai",
        "openai-compat",
        "anthropic",
        "google",
        "openrouter",
        "bedrock",
    ];
    let mut out = String::with_capacity(min_bytes + 64 * 1024);
    out.push_str("[\n");
    let mut p = 0;
    while p == 0 || out.len() < min_bytes {
        if p > 0 {
            out.push_str(",\n");
        }
        let models = 30 + next(271) as usize;
        // A provider's type is its own, the same in every seed: a type
        // whose client ignores the endpoint (openrouter, bedrock) sends a
        // key elsewhere, so a changed one is a key move. The draw stays,
        // so that the rest of each seed's catalog is as it was.
        let _ = next(types.len() as u64);
        let kind = types[p % types.len()];
        let _ = write!(
            out,
            "  {{\n    \"name\": \"Provider {p}\",\n    \"id\": \"provider-{p}\",\n    \"type\": \"{kind}\",\n    \"api_key\": \"$PROVIDER_{p}_API_KEY\",\n    \"api_endpoint\": \"https://api.provider-{p}.example/v1\",\n    \"default_large_model_id\": \"model-{p}-0\",\n    \"default_small_model_id\": \"model-{p}-1\","
        );
        if p % 4 == 0 {
            let _ = write!(
                out,
                "\n    \"default_headers\": {{\"X-Title\": \"Crush\", \"X-Tenant\": \"{p}\"}},"
            );
        }
        if p % 3 == 0 {
            let _ = write!(
                out,
                "\n    \"x_region\": {{\"primary\": \"eu-{p}\", \"weights\": [0.5, 0.25, 1e-3]}},"
            );
        }
        out.push_str("\n    \"models\": [");
        for m in 0..models {
            if m > 0 {
                out.push(',');
            }
            model(&mut out, p, m, &mut next);
        }
        out.push_str("\n    ]\n  }");
        p += 1;
    }
    out.push_str("\n]\n");
    out
}

/// Writes model `m` of provider `p`, its values drawn from `next`.
fn model(out: &mut String, p: usize, m: usize, next: &mut impl FnMut(u64) -> u64) {
    let reason = next(2) == 0;
    let cost_in = next(2000) as f64 / 100.0;
    let _ = write!(
        out,
        "\n      {{\n        \"id\": \"model-{p}-{m}\",\n        \"name\": \"{}\",\n        \"cost_per_1m_in\": {cost_in},\n        \"cost_per_1m_out\": {},\n        \"cost_per_1m_in_cached\": {},\n        \"cost_per_1m_out_cached\": {},\n        \"context_window\": {},\n        \"default_max_tokens\": {},\n        \"can_reason\": {reason},",
        // Real catalogs have almost no escapes; a few keep the
        // unescaping path measured.
        if m.is_multiple_of(50) {
            format!("Model {m} \\u00e9dition \\\"{p}\\\"")
        } else {
            format!("Model {m} of provider {p}")
        },
        cost_in * 4.0,
        cost_in * 1.25,
        cost_in / 10.0,
        [128_000, 200_000, 400_000, 1_048_576][next(4) as usize],
        [8_192, 32_000, 64_000, 128_000][next(4) as usize],
    );
    if reason {
        out.push_str("\n        \"reasoning_levels\": [\"low\", \"medium\", \"high\"],\n        \"default_reasoning_effort\": \"medium\",");
    }
    if m.is_multiple_of(7) {
        out.push_str("\n        \"options\": {\"temperature\": 1, \"top_p\": 0.95},\n        \"has_reasoning_efforts\": true,");
    }
    let _ = write!(
        out,
        "\n        \"supports_attachments\": {}\n      }}",
        next(2) == 0
    );
}

#[test]
fn synthetic_catalogs_are_valid_and_sized() {
    for size in [1, 100_000, 700_000] {
        let text = catalog(size, 7);
        assert!(text.len() >= size);
        let parsed = crush_providers::catalog::validate(text.as_bytes()).unwrap();
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        for p in &parsed.providers {
            assert!((30..=300).contains(&p.models().len()));
        }
    }
    assert_eq!(catalog(10_000, 1), catalog(10_000, 1));
    assert_ne!(catalog(10_000, 1), catalog(10_000, 2));
}
