//! In-process throughput of the CPU work of an update, on synthetic
//! catalogs of 0.7 MB and 50 MB (the shape of a real Catwalk catalog),
//! reported in bytes/s: parsing and validating the new catalog, hashing it,
//! and what an update does with the previous one (validated by the same
//! reader, compared, and reviewed by the guard):
//!
//!     cargo bench --bench validate

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use crush_providers::catalog;
use crush_providers::internals::changes;
use crush_providers::internals::digest;
use crush_providers::internals::guard::{self, Baseline, Floor};

#[path = "../tests/it/synthetic.rs"]
mod synthetic;

fn validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("validate");
    for (label, size, samples) in [("0.7MB", 700_000, 100), ("50MB", 50_000_000, 10)] {
        let text = synthetic::catalog(size, 1);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.sample_size(samples);
        group.bench_function(label, |b| {
            b.iter(|| {
                catalog::validate(std::hint::black_box(text.as_bytes()))
                    .unwrap()
                    .providers
                    .len()
            })
        });
        group.bench_function(format!("{label} sha256"), |b| {
            b.iter(|| digest::sha256(std::hint::black_box(text.as_bytes())))
        });
        let next_text = synthetic::catalog(size, 2);
        let next = catalog::validate(next_text.as_bytes()).unwrap();
        group.bench_function(format!("{label} previous, compared and reviewed"), |b| {
            b.iter(|| {
                let previous = catalog::validate(std::hint::black_box(text.as_bytes())).unwrap();
                let changes = changes::compare(&previous, &next);
                let known = guard::places(&previous).unwrap();
                let baseline = Baseline {
                    previous: Some(&previous),
                    places: &known,
                    floor: Floor::Embedded,
                    signed: None,
                };
                let review = guard::review(&baseline, &next, None).unwrap();
                (changes.providers_changed.len(), review.moves.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
