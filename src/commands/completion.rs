//! `crush completion SHELL`: the completion script of a shell, for this
//! program under the name it was installed as.

use std::io::Write;

use super::{Exit, cli, print};

/// `crush completion [SHELL]`: without a shell, says how to use it.
pub(super) fn run(shell: Option<clap_complete::Shell>) -> Result<(), Exit> {
    let name = super::program();
    let Some(shell) = shell else {
        return Err(Exit::Usage(format!(
            "completion prints the script of a shell: bash, elvish, fish, powershell or zsh, e.g. `{name} completion bash > ~/.local/share/bash-completion/completions/{name}`"
        )));
    };
    let script = script(shell, name);
    print(|out| out.write_all(&script))
}

/// The completion script of `shell` for this program installed as `name`.
fn script(shell: clap_complete::Shell, name: &str) -> Vec<u8> {
    let mut command = cli::command(name);
    // Generated whole first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    if shell != clap_complete::Shell::Bash {
        clap_complete::generate(shell, &mut command, name, &mut script);
        return script;
    }
    // SOURCE offers `embedded` (bash falls back to file names for the
    // rest); only here: elsewhere the word would replace file names.
    command = command.mut_subcommand("update-providers", |c| {
        c.mut_arg("source", |a| {
            a.value_parser(clap::builder::PossibleValuesParser::new(["embedded"]))
        })
    });
    // clap_complete's bash script names its states two ways when the
    // program's name holds a `-` (clap issue 6421): it is generated for a
    // name of word characters, then registered for the real one.
    let word: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    clap_complete::generate(shell, &mut command, &word, &mut script);
    if word == name {
        return script;
    }
    let registered = format!(" {word}");
    let text = String::from_utf8_lossy(&script);
    let lines = text
        .lines()
        .map(|line| match line.strip_suffix(&registered) {
            Some(head) if line.trim_start().starts_with("complete -F ") => {
                format!("{head} {name}\n")
            }
            _ => format!("{line}\n"),
        });
    lines.collect::<String>().into_bytes()
}
