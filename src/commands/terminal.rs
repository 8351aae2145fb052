//! The terminal the output goes to: how wide a line may be, and text
//! wrapped or fitted to it. Output that goes to a pipe or a file keeps its
//! lines whole, one message a line, for the program that reads it.

use unicode_width::UnicodeWidthStr;

/// The width of standard output's terminal; `None` when it is not one.
pub(super) fn stdout_width() -> Option<usize> {
    stdout_size().map(|(width, _)| width)
}

/// The width of standard error's terminal; `None` when it is not one.
pub(super) fn stderr_width() -> Option<usize> {
    stderr_size().map(|(width, _)| width)
}

/// The columns and rows of standard output's terminal; `None` when it is
/// not one.
pub(super) fn stdout_size() -> Option<(usize, usize)> {
    size_of(terminal_size::terminal_size_of(std::io::stdout()))
}

/// The columns and rows of standard error's terminal; `None` when it is
/// not one.
pub(super) fn stderr_size() -> Option<(usize, usize)> {
    size_of(terminal_size::terminal_size_of(std::io::stderr()))
}

fn size_of(size: Option<(terminal_size::Width, terminal_size::Height)>) -> Option<(usize, usize)> {
    // Some terminals report no size at all: as good as none.
    let (width, height) = size?;
    let (width, height) = (usize::from(width.0), usize::from(height.0));
    // A terminal of no rows is given as many as a pipe.
    (width > 0).then_some((width, if height == 0 { 60 } else { height }))
}

/// `text` wrapped to `width` columns, each line after the first indented
/// by `indent`. Words are kept whole, so that a host, a path or a variable
/// name is never cut: one longer than the line stands on a line of its own.
/// Unchanged without a width.
pub(super) fn wrap(text: &str, width: Option<usize>, indent: &str) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let options = textwrap::Options::new(width)
        .subsequent_indent(indent)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, options)
}

/// `text` in pieces of at most `width` columns (at least one character
/// a piece): an id wider than the line, wrapped where the line ends, never
/// shortened.
pub(super) fn pieces(text: &str, width: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if piece.width() + w > width.max(1) && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
        }
        piece.push(c);
    }
    if !piece.is_empty() || pieces.is_empty() {
        pieces.push(piece);
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
    let pad = " ".repeat(indent);
    let Some(width) = width else {
        let mut line = head;
        for (i, atom) in atoms.iter().enumerate() {
            line.push_str(&atom.text);
            line.push_str(separator(atoms, i));
        }
        return vec![line.trim_end().to_owned()];
    };
    let mut lines = Vec::new();
    // What is on the line being built, and whether an atom is on it yet.
    let mut line = String::new();
    let mut bare = true;
    if head.trim().is_empty() {
        line.push_str(&head);
    } else {
        for piece in pieces_of(head.trim_end(), width, width.saturating_sub(indent)) {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                line.push_str(&pad);
            }
            line.push_str(&piece);
        }
        if head.ends_with(' ') {
            line.push(' ');
        }
    }
    for (i, atom) in atoms.iter().enumerate() {
        let comma = separator(atoms, i).trim_end();
        let text = format!("{}{comma}", atom.text);
        let space = if bare || line.ends_with(' ') { "" } else { " " };
        if line.width() + space.len() + text.width() <= width {
            line.push_str(space);
            line.push_str(&text);
        } else if indent + text.width() <= width {
            lines.push(std::mem::take(&mut line));
            line = format!("{pad}{text}");
        } else if let Some((name, before, after)) = &atom.change {
            if line.width() + space.len() + name.width() <= width {
                line.push_str(space);
                line.push_str(name);
            } else {
                lines.push(std::mem::take(&mut line));
                line = format!("{pad}{name}");
            }
            lines.push(std::mem::take(&mut line));
            lines.extend(values(before, &format!("→ {after}{comma}"), width, indent));
            line = pad.clone();
            bare = true;
            continue;
        } else {
            // An id wider than a line: wrapped, never shortened.
            if !line.trim().is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let room = width.saturating_sub(indent);
            line = pad.clone();
            for (j, l) in pieces_of(&text, room, room).enumerate() {
                if j > 0 {
                    lines.push(std::mem::replace(&mut line, pad.clone()));
                }
                line.push_str(&l);
            }
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

/// A change's old value, then `after` (`→ new`), on lines of their own
/// under its name at `indent`, wrapped where the line ends.
fn values(before: &str, after: &str, width: usize, indent: usize) -> Vec<String> {
    let (pad, value) = (" ".repeat(indent), " ".repeat(indent + 2));
    let room = width.saturating_sub(indent + 2);
    let mut lines: Vec<String> = pieces_of(before, room, room)
        .map(|l| format!("{value}{l}"))
        .collect();
    for (j, l) in pieces_of(after, room + 2, room).enumerate() {
        lines.push(if j == 0 {
            format!("{pad}{l}")
        } else {
            format!("{value}{l}")
        });
    }
    lines
}

/// What follows the atom `i` of `atoms`: `, `, a space before a joined
/// atom, or nothing after the last.
fn separator(atoms: &[Atom], i: usize) -> &'static str {
    match atoms.get(i + 1) {
        None => "",
        Some(next) if next.joined => " ",
        Some(_) => ", ",
    }
}

/// `text` in pieces of at most `first` columns, then `rest` columns.
fn pieces_of(text: &str, first: usize, rest: usize) -> impl Iterator<Item = String> {
    let mut pieces = pieces(text, first);
    let tail: String = pieces.drain(1..).collect();
    if !tail.is_empty() {
        pieces.extend(self::pieces(&tail, rest));
    }
    pieces.into_iter()
}

/// `text`, cut to `width` columns with `…` when longer.
pub(super) fn shorten(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
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
    fn shortening_counts_columns() {
        assert_eq!(shorten("anthropic", 20), "anthropic");
        assert_eq!(shorten("anthropic", 5), "anth…");
        assert_eq!(shorten("日本語モデル", 7), "日本語…");
    }
}
