//! Inputs the fuzzers found, kept as regression tests: each file under
//! tests/fuzz_regressions/ goes through the real binary, which must refuse
//! it (or accept it) with one clear line and never panic.

use std::fs;

use crate::common::Home;

#[test]
fn every_fuzz_finding_is_handled_cleanly() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let home = Home::new();
        if name.starts_with("catalog-") {
            // Small catalogs: no floor of the embedded snapshot's size,
            // nor its places (a finding's anthropic has no endpoint).
            let run = home.run(&[
                "update-providers",
                path.to_str().unwrap(),
                "--allow-shrink",
                "--allow-key-move",
            ]);
            assert!(!run.stderr.contains("panicked"), "{name}: {run:?}");
            if run.code == Some(1) {
                run.fails_with(&["not a valid catalog"]);
                assert!(home.cache().is_none(), "{name}");
            } else {
                run.ok();
            }
        } else if name.starts_with("crushrc-") {
            fs::copy(&path, home.path().join("crushrc")).unwrap();
            let run = home.run(&["providers", "--status"]);
            assert!(!run.stderr.contains("panicked"), "{name}: {run:?}");
            assert!(matches!(run.code, Some(0 | 1)), "{name}: {run:?}");
        } else {
            panic!("unexpected file {name}: name findings catalog-* or crushrc-*");
        }
        seen += 1;
    }
    assert!(seen > 0);
}
