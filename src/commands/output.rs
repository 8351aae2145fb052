//! What goes out: messages to standard error, data to standard output
//! (buffered, a closed pipe being no failure), JSON and catalogs as a
//! terminal may be shown them, and the words for counts and ages.

use std::io::{self, Write};

use super::{Exit, terminal};
use crate::catalog;
use crate::error::{Cause, Failure};

/// What a message on standard error is: the words it starts with, whose
/// column its wrapped lines keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Said {
    /// `error: ` and what failed.
    Error,
    /// `  caused by: ` and a cause of the failure above.
    CausedBy,
    /// `  hint: ` and the next step.
    Hint,
    /// `warning: ` and what went wrong without failing.
    Warning,
    /// The message as it is (a report's line, a debug line), wrapped
    /// two columns in.
    Plain,
}

impl Said {
    /// The words the message starts with.
    fn prefix(self) -> &'static str {
        match self {
            Said::Error => "error: ",
            Said::CausedBy => "  caused by: ",
            Said::Hint => "  hint: ",
            Said::Warning => "warning: ",
            Said::Plain => "",
        }
    }
}

/// Writes a message of kind `kind` to standard error: one line when it
/// goes to a pipe or a file, wrapped to a terminal's width with the text
/// after its words kept in its column; the number of lines it took. Unlike
/// `eprintln!`, which panics, a failure there is ignored: there is nowhere
/// left to report it.
pub(super) fn say(kind: Said, message: std::fmt::Arguments<'_>) -> usize {
    // Whatever a catalog, a server or a file put into the message.
    let text = catalog::escape::safe_lines(&format!("{}{message}", kind.prefix())).into_owned();
    // Its first line wrapped; the lines after it, commands to type, whole.
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let indent = " ".repeat(kind.prefix().len().max(2));
    let mut text = terminal::wrap(first, terminal::stderr_width(), &indent);
    if !rest.is_empty() {
        text.push('\n');
        text.push_str(rest);
    }
    let _ = writeln!(io::stderr().lock(), "{text}");
    text.lines().count()
}

/// Prints `text` on standard output, wrapped to a terminal's width, or to
/// 80 columns on a pipe, as it may be shown.
pub(super) fn print_text(text: &str) -> Result<(), Exit> {
    let width = terminal::stdout_width().or(Some(super::report::PIPED_COLUMNS));
    let text = catalog::escape::safe(text);
    print(|out| writeln!(out, "{}", terminal::wrap(&text, width, "  ")))
}

/// Runs `write` on standard output, buffered (a table or a JSON document
/// goes out in a few writes rather than one per line), then flushes it. A
/// failed write (a full disk) is the command's failure.
pub(super) fn print(
    write: impl FnOnce(&mut io::BufWriter<io::StdoutLock<'static>>) -> io::Result<()>,
) -> Result<(), Exit> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    output_result(write(&mut out).and_then(|()| out.flush()))
}

/// The command's result, given how writing its output went. A reader that
/// went away is no failure: `crush models | head -1` is a success, as with
/// any filter.
pub(super) fn output_result(written: io::Result<()>) -> Result<(), Exit> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Exit::from(Failure::new(
            "standard output",
            Cause::Stdout(e),
        ))),
        _ => Ok(()),
    }
}

/// Writes `value` as pretty JSON and a newline, the characters a terminal
/// must not see raw as `\u` escapes ([`catalog::escape`]).
pub(super) fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    catalog::escape::write_json(&mut *out, value)?;
    writeln!(out)
}

/// Writes the bytes of a catalog to standard output: exactly as they are
/// when it goes to a pipe or a file (a program reads them, and a copy must
/// hash as the cache does); on a terminal, with the characters a terminal
/// must not see raw spelled as `\u` escapes inside their strings, which is
/// the same JSON, and a newline after it, so that the prompt or a report
/// that follows starts a line of its own. The cache itself is never
/// rewritten.
pub(super) fn write_catalog(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return out.write_all(bytes);
    }
    out.write_all(&catalog::escape::json_bytes(bytes))?;
    match bytes.ends_with(b"\n") {
        true => Ok(()),
        false => writeln!(out),
    }
}

/// `1 model`, `2 models`.
pub(super) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `3 hours ago`.
pub(super) fn ago(seconds: u64) -> String {
    let (n, unit) = match seconds {
        0..60 => return "just now".into(),
        60..3600 => (seconds / 60, "minute"),
        3600..86400 => (seconds / 3600, "hour"),
        _ => (seconds / 86400, "day"),
    };
    format!("{} ago", count(n as usize, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(7200), "2 hours ago");
        assert_eq!(ago(86400 * 3 + 5), "3 days ago");
    }
}
