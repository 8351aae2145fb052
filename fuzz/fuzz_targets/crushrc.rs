//! The crushrc reader must never panic, and an error it gives must name a
//! line inside the file.
#![no_main]

use crush_providers::internals::crushrc;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.matches('\n').count() + 1;
    if let Err(e) = crushrc::read(std::path::Path::new("crushrc"), text, 0) {
        let line = e.line.unwrap_or(1);
        assert!(line >= 1 && line <= lines, "{e} in {lines} lines");
    }
});
