//! The signature reader must never panic on any `.minisig` a mirror (or
//! an attacker on the path) serves, and never accept one that is not a
//! valid signature of the catalog by the pinned key.
#![no_main]

use crush_providers::internals::signature::{self, TrustedKeys};
use libfuzzer_sys::fuzz_target;

/// The key of the seed (fuzz/seeds/signature), which signed `[]`: no input
/// may pass for its signature of anything else.
const KEY: &str = "RWSwodq7Ln3iBc/AmJ4FpMbTEJ9jwI89EqyhM4iEkloEUjly5SC8K7NQ";

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = signature::parse(data) {
        let _ = signature::timestamp(parsed.trusted_comment());
    }
    let keys = TrustedKeys::parse(&[KEY.to_string()]).unwrap().unwrap();
    assert!(keys.verify(b"[1]", data, u64::MAX).is_err());
});
