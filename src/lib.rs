//! Keeps the Crush coding assistant's provider catalog up to date.
//!
//! The modules follow the data's path: a [`source`] is read into bytes (over
//! [`http`] when it is a URL), the bytes are validated into a [`catalog`],
//! and the catalog is swapped into the [`cache`]. [`update`] runs that path
//! for `update-providers`; [`changes`] says what it changed, from a
//! [`summary`] of the previous catalog.

pub mod buffer;
pub mod cache;
pub mod catalog;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod crushrc;
pub mod embedded;
pub mod error;
pub mod http;
pub mod paths;
pub mod settings;
pub mod source;
pub mod startup;
pub mod summary;
pub mod synthetic;
pub mod update;

#[cfg(test)]
mod tests {
    /// The binary turns a panic into exit 101 by catching it (src/main.rs),
    /// which takes an unwinder that works in this build: `libgcc_s.so`, or
    /// the `libgcc_eh.a` that build.rs links in. Tests link the same one.
    #[test]
    fn panics_unwind_and_are_caught_with_the_linked_unwinder() {
        // resume_unwind skips the panic hook: nothing is printed.
        let caught = std::panic::catch_unwind(|| std::panic::resume_unwind(Box::new(7u8)));
        assert_eq!(caught.unwrap_err().downcast_ref::<u8>(), Some(&7));
        let trace = std::backtrace::Backtrace::force_capture();
        assert_eq!(trace.status(), std::backtrace::BacktraceStatus::Captured);
    }
}
