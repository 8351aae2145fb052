//! The chunked reader of the previous catalog must never panic, must give
//! the same summary whatever the chunk size, and must never give a summary
//! that a whole-file parse would not give. The listing rows of `crush
//! providers` must agree with the summary wherever the summary is accepted.
#![no_main]

use crush_providers::summary::{Listed, Summary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, data)) = data.split_first() else {
        return;
    };
    let chunked = Summary::read_from(data, usize::from(chunk % 17) + 1);
    assert_eq!(chunked, Summary::read_from(data, 1 << 16));
    if let Some(summary) = chunked {
        let whole = Summary::parse(data).expect("chunked accepted what a whole parse refuses");
        assert_eq!(summary, whole);
    }
    if let Some(summary) = Summary::parse(data) {
        let listed = Listed::parse(data).expect("listing refused what the summary accepts");
        let rows: Vec<Listed> = summary.providers.iter().map(Listed::from).collect();
        assert_eq!(listed, rows);
    }
});
