//! The chunked reader of the previous catalog must never panic, must give
//! the same summary whatever the chunk size, and must never give a summary
//! that a whole-file parse would not give.
#![no_main]

use crush_providers::catalog::summary::Summary;
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
});
