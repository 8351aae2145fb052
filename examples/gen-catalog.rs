//! Writes a synthetic, valid catalog of a requested size to stdout or a file:
//!
//!     cargo run --release --example gen-catalog -- 0.7MB [SEED] [OUT]
//!
//! Sizes: plain bytes, or with a K/KB, M/MB suffix (powers of 1000).

use std::process::ExitCode;

#[path = "../tests/it/synthetic.rs"]
mod synthetic;

fn parse_size(text: &str) -> Option<usize> {
    let upper = text.trim().to_ascii_uppercase();
    let (number, scale) =
        if let Some(n) = upper.strip_suffix("MB").or_else(|| upper.strip_suffix('M')) {
            (n, 1e6)
        } else if let Some(n) = upper.strip_suffix("KB").or_else(|| upper.strip_suffix('K')) {
            (n, 1e3)
        } else {
            (upper.as_str(), 1.0)
        };
    let value: f64 = number.trim().parse().ok()?;
    (value > 0.0 && value.is_finite()).then_some((value * scale) as usize)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(size) = args.first().and_then(|s| parse_size(s)) else {
        eprintln!("usage: gen-catalog SIZE [SEED] [OUT]   (SIZE like 700000, 700K, 0.7MB, 50MB)");
        return ExitCode::from(2);
    };
    let Ok(seed) = args.get(1).map_or(Ok(1), |s| s.parse::<u64>()) else {
        eprintln!("gen-catalog: SEED must be a whole number");
        return ExitCode::from(2);
    };
    let text = synthetic::catalog(size, seed);
    let written = match args.get(2) {
        Some(path) => std::fs::write(path, &text),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-catalog: cannot write: {e}");
            ExitCode::from(1)
        }
    }
}
