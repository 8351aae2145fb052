//! The `crush` binary: everything but argument parsing lives in the library.
//!
//! On Linux with glibc the binary starts at the C `main` (`no_main`): the
//! Rust runtime's own start-up, chiefly reading `/proc/self/maps` to locate
//! the main thread's stack guard, costs about 0.09 ms, close to a tenth of a
//! start-up with a fresh cache, for a stack-overflow message this program
//! does not need. What of that start-up it does need is done here.
//!
//! It also defines `pow`, the one function it used from `libm.so` (for the
//! progress bar's rate estimate): the dynamic linker then has one library
//! less to load at every start, about 0.05 ms.

#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    use std::io::Write;
    // SAFETY: plain system calls before any other thread exists.
    unsafe {
        // Standard streams closed by the caller would otherwise be reused
        // by the first files opened, and output would land in them.
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) == -1 {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
        // A closed pipe or socket is an error on write, not the death of the
        // process: the HTTP client and the printing both count on it.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // The panic hook has printed the message; exit as the runtime would.
    let code = std::panic::catch_unwind(crush_providers::cli::main).unwrap_or(101);
    let _ = std::io::stdout().flush();
    code.into()
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> std::process::ExitCode {
    crush_providers::cli::main().into()
}

/// See the module's documentation; the libm crate is the Rust port of
/// musl's libm.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
