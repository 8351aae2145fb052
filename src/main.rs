//! The `crush` binary: everything but the exit code lives in the library.

fn main() -> std::process::ExitCode {
    crush_providers::internals::command_line().into()
}
