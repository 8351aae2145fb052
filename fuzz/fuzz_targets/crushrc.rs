//! The crushrc reader must never panic, and what it hands back must be
//! well-formed: non-empty commands, lines inside the file.
#![no_main]

use crush_providers::internals::crushrc;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.matches('\n').count() + 1;
    match crushrc::parse(text) {
        Ok(script) => {
            for command in &script.commands {
                assert!(!command.words.is_empty());
                assert!(command.line >= 1 && command.line <= lines);
            }
            for skipped in &script.skipped {
                assert!(skipped.line >= 1 && skipped.line <= lines);
            }
        }
        Err(e) => assert!(e.line >= 1 && e.line <= lines, "{e} in {lines} lines"),
    }
    let _ = crush_providers::internals::config::parse_crushrc_settings(std::path::Path::new("crushrc"), text);
});
