//! Build script. On Linux with glibc it links GCC's unwinder, `libgcc_eh.a`,
//! into the program, where Rust would load `libgcc_s.so` at every start for
//! it: one shared library less for the dynamic linker to find, map and
//! relocate, about 6 % of a start-up with a fresh cache
//! (docs/BENCHMARKS.md). Rust's fully static builds link the same archive,
//! and so does `gcc -static-libgcc`; the program is one module, so one
//! unwinder serves all of it.
//!
//! Only where the C compiler that links the program has the archive; else
//! the program loads `libgcc_s.so` as usual.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(static_unwinder)");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || static_crt {
        return;
    }
    // rustc links with the configured linker, else with `cc`, which for a
    // cross build is the host's: then it is left alone.
    let linker = match env::var("RUSTC_LINKER") {
        Ok(linker) => linker,
        Err(_) if var("HOST") == var("TARGET") => "cc".to_owned(),
        Err(_) => return,
    };
    // The driver prints the archive's full path, or its bare name if it has
    // none.
    let found = Command::new(linker)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .is_some_and(|path| Path::new(path.trim()).is_absolute());
    if found {
        // Not bundled into the library's rlib: linked where the program is.
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
        println!("cargo::rustc-cfg=static_unwinder");
    }
}
