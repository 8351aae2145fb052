//! The terminal the output goes to: how wide a line may be, and text
//! wrapped or fitted to it. Output that goes to a pipe or a file keeps its
//! lines whole, one message a line, for the program that reads it.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The columns and rows of standard error's terminal (`stderr`), else
/// standard output's; `None` when it is not one.
pub(super) fn size(stderr: bool) -> Option<(usize, usize)> {
    let size = match stderr {
        true => terminal_size::terminal_size_of(std::io::stderr()),
        false => terminal_size::terminal_size_of(std::io::stdout()),
    };
    // Some terminals report no size at all: as good as none; one of no
    // rows is given as many as a pipe.
    let (width, height) = size.map(|(w, h)| (usize::from(w.0), usize::from(h.0)))?;
    (width > 0).then_some((width, if height == 0 { 60 } else { height }))
}

/// The width of standard output's terminal; `None` when it is not one.
pub(super) fn stdout_width() -> Option<usize> {
    size(false).map(|(width, _)| width)
}

/// The width of standard error's terminal; `None` when it is not one.
pub(super) fn stderr_width() -> Option<usize> {
    size(true).map(|(width, _)| width)
}

/// `text` wrapped to `width` columns, each line after the first indented
/// by `indent`. Words are kept whole, so that a host, a path or a variable
/// name is never cut: one longer than the line stands on a line of its own.
/// So is a command between backticks, so that it can be copied whole.
/// Unchanged without a width.
pub(super) fn wrap(text: &str, width: Option<usize>, indent: &str) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let options = textwrap::Options::new(width)
        .subsequent_indent(indent)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    // The spaces of a command held by no-break spaces, which textwrap does
    // not break at, while it wraps; unless the text has its own.
    if text.contains(NO_BREAK) {
        return textwrap::fill(text, options);
    }
    let held: String = text
        .split('`')
        .enumerate()
        .map(|(i, part)| match i % 2 {
            1 => part.replace(' ', NO_BREAK),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("`");
    textwrap::fill(&held, options).replace(NO_BREAK, " ")
}

/// A no-break space: one column, as the space it stands for.
const NO_BREAK: &str = "\u{a0}";

/// `text` in pieces of at most `first` columns, then `rest` columns (at
/// least one character a piece): an id wider than the line, wrapped where
/// the line ends, never shortened.
pub(super) fn pieces(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut pieces = vec![String::new()];
    for c in text.chars() {
        let room = if pieces.len() == 1 { first } else { rest };
        let piece = pieces.last().expect("a piece");
        if !piece.is_empty() && piece.width() + c.width().unwrap_or(0) > room.max(1) {
            pieces.push(String::new());
        }
        pieces.last_mut().expect("a piece").push(c);
    }
    pieces
}

/// A piece of a line that is never cut: an id, a list's word, or a
/// field's change, which, too long to share a line, stands on lines of its
/// own (its name, its old value, `→ ` its new one).
#[derive(Debug, Clone)]
pub(super) struct Atom {
    /// The text, on one line.
    pub text: String,
    /// A change's name, old and new value, for lines of their own.
    change: Option<(String, String, String)>,
    /// Joined to the atom before it by a space, not `, `: the ids of
    /// `+2 models (a, b)` after their count, which may start a line of
    /// their own rather than be split.
    joined: bool,
}

impl Atom {
    /// Text, wrapped where the line ends only when wider than a line.
    pub(super) fn text(text: &str) -> Atom {
        Atom {
            text: text.to_owned(),
            change: None,
            joined: false,
        }
    }

    /// Text joined to the atom before it by a space rather than `, `.
    pub(super) fn joined(text: &str) -> Atom {
        Atom {
            joined: true,
            ..Atom::text(text)
        }
    }

    /// `name before → after`.
    pub(super) fn change(name: String, before: String, after: String) -> Atom {
        Atom {
            text: format!("{name} {before} → {after}"),
            change: Some((name, before, after)),
            joined: false,
        }
    }
}

/// `head`, then `atoms` separated by `, `, wrapped at `width` with the
/// lines after the first indented by `indent`; one line without a width.
/// An atom is never cut at a space or a comma: one too long for a line of
/// its own is a change shown on lines of its own, or (an id longer than
/// the whole line) wrapped where the line ends.
pub(super) fn flow(
    head: String,
    atoms: &[Atom],
    width: Option<usize>,
    indent: usize,
) -> Vec<String> {
    let width = width.unwrap_or(usize::MAX / 4);
    let (pad, room) = (" ".repeat(indent), width.saturating_sub(indent));
    let mut lines = Vec::new();
    // The line being built, and whether an atom is on it yet.
    let mut line = String::new();
    let mut bare = true;
    // Lines of `pieces`, the first continuing the line being built.
    let put = |line: &mut String, lines: &mut Vec<String>, pieces: Vec<String>| {
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 {
                lines.push(std::mem::replace(line, pad.clone()));
            }
            line.push_str(&piece);
        }
    };
    match head.trim_end() {
        "" => line.push_str(&head),
        text => {
            put(&mut line, &mut lines, pieces(text, width, room));
            if head.ends_with(' ') {
                line.push(' ');
            }
        }
    }
    for (i, atom) in atoms.iter().enumerate() {
        let comma = match atoms.get(i + 1) {
            Some(next) if !next.joined => ",",
            _ => "",
        };
        let text = format!("{}{comma}", atom.text);
        let space = if bare || line.ends_with(' ') { "" } else { " " };
        if line.width() + space.len() + text.width() <= width {
            line.push_str(space);
            line.push_str(&text);
        } else if indent + text.width() <= width {
            lines.push(std::mem::replace(&mut line, format!("{pad}{text}")));
        } else if let Some((name, before, after)) = &atom.change {
            // Its name, then its values on lines of their own, whole.
            if line.width() + space.len() + name.width() <= width {
                line.push_str(space);
            } else {
                lines.push(std::mem::replace(&mut line, pad.clone()));
            }
            line.push_str(name);
            lines.push(std::mem::replace(&mut line, pad.clone()));
            let (value, narrower) = (" ".repeat(indent + 2), room.saturating_sub(2));
            let before = pieces(before, narrower, narrower);
            lines.extend(before.iter().map(|l| format!("{value}{l}")));
            let after = pieces(&format!("→ {after}{comma}"), room, narrower);
            for (j, l) in after.iter().enumerate() {
                lines.push(format!("{}{l}", if j == 0 { &pad } else { &value }));
            }
            bare = true;
            continue;
        } else {
            // An id wider than a line: wrapped, never shortened.
            if !line.trim().is_empty() {
                lines.push(std::mem::replace(&mut line, pad.clone()));
            }
            line = pad.clone();
            put(&mut line, &mut lines, pieces(&text, room, room));
        }
        bare = false;
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| l.trim_end().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `text`, cut to `width` columns with `…` when longer.
pub(super) fn shorten(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + c.width().unwrap_or(0) + 1 > width {
            break;
        }
        out.push(c);
    }
    out + "…"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_whole_and_hangs_the_indent() {
        let text = "warning: provider \"evil\" would send $ANTHROPIC_API_KEY to https://collector.evil.example:443, where it was never sent before";
        let wrapped = wrap(text, Some(40), "         ");
        for line in wrapped.lines() {
            assert!(line.width() <= 40 || !line.trim().contains(' '), "{line:?}");
        }
        assert!(wrapped.contains("$ANTHROPIC_API_KEY"));
        assert!(wrapped.contains("https://collector.evil.example:443,"));
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("         ")));
        assert_eq!(wrap(text, None, "  "), text, "piped: one line");
        // Hyphens are no break points: model ids keep together.
        assert!(
            wrap("a claude-sonnet-4-5-20250929", Some(12), "")
                .contains("claude-sonnet-4-5-20250929")
        );
    }

    #[test]
    fn a_command_between_backticks_is_never_split() {
        let text = "error: the folder can be written by others (`chmod go-w /tmp/a b/crush`); then run it again";
        let wrapped = wrap(text, Some(40), "  ");
        assert!(wrapped.contains("`chmod go-w /tmp/a b/crush`"), "{wrapped}");
        assert!(wrapped.lines().count() > 2, "{wrapped}");
        assert!(!wrapped.contains('\u{a0}'), "{wrapped}");
        // A text with no-break spaces of its own keeps them.
        assert_eq!(wrap("a\u{a0}b `c d`", Some(40), ""), "a\u{a0}b `c d`");
    }

    #[test]
    fn shortening_counts_columns() {
        assert_eq!(shorten("anthropic", 20), "anthropic");
        assert_eq!(shorten("anthropic", 5), "anth…");
        assert_eq!(shorten("日本語モデル", 7), "日本語…");
    }
}
