//! The `crush` binary: everything but argument parsing lives in the library.

fn main() -> std::process::ExitCode {
    crush_providers::cli::main()
}
