//! The terminal the output goes to: how wide a line may be, and text
//! wrapped or fitted to it. Output that goes to a pipe or a file keeps its
//! lines whole, one message a line, for the program that reads it.

use unicode_width::UnicodeWidthStr;

/// The width of standard output's terminal; `None` when it is not one.
pub fn stdout_width() -> Option<usize> {
    width_of(terminal_size::terminal_size_of(std::io::stdout()))
}

/// The width of standard error's terminal; `None` when it is not one.
pub fn stderr_width() -> Option<usize> {
    width_of(terminal_size::terminal_size_of(std::io::stderr()))
}

fn width_of(size: Option<(terminal_size::Width, terminal_size::Height)>) -> Option<usize> {
    // Some terminals report no size at all: as good as none.
    size.map(|(width, _)| usize::from(width.0))
        .filter(|w| *w > 0)
}

/// `text` wrapped to `width` columns, each line after the first indented
/// by `indent`. Words are kept whole, so that a host, a path or a variable
/// name is never cut: one longer than the line stands on a line of its own.
/// Unchanged without a width.
pub fn wrap(text: &str, width: Option<usize>, indent: &str) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    let options = textwrap::Options::new(width)
        .subsequent_indent(indent)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, options)
}

/// As many of `ids` as fit in `width` columns, `, `-separated, then
/// `… and N more` for the rest; empty when not even one fits.
pub fn fit<S: AsRef<str>>(ids: &[S], width: usize) -> String {
    let mut shown = String::new();
    for (i, id) in ids.iter().map(AsRef::as_ref).enumerate() {
        let rest = ids.len() - i - 1;
        let more = if rest == 0 {
            String::new()
        } else {
            format!(", … and {rest} more")
        };
        let sep = if shown.is_empty() { "" } else { ", " };
        if shown.width() + sep.len() + id.width() + more.width() > width {
            let left = ids.len() - i;
            if shown.is_empty() {
                return String::new();
            }
            return format!("{shown}, … and {left} more");
        }
        shown.push_str(sep);
        shown.push_str(id);
    }
    shown
}

/// `text`, cut to `width` columns with `…` when longer.
pub fn shorten(text: &str, width: usize) -> String {
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
    fn lists_show_the_first_ids_that_fit_then_how_many_more() {
        let ids: Vec<String> = (0..30).map(|i| format!("model-{i}")).collect();
        assert_eq!(fit(&ids[..2], 120), "model-0, model-1");
        let list = fit(&ids, 60);
        assert!(list.starts_with("model-0, model-1, "), "{list}");
        assert!(list.width() <= 60, "{list}");
        let shown = list.matches(", ").count();
        assert!(
            list.ends_with(&format!("… and {} more", 30 - shown)),
            "{list}"
        );
        assert_eq!(fit(&ids, 5), "", "not even one fits");
        assert_eq!(fit(&["日本語モデル".to_string()], 12), "日本語モデル");
        assert_eq!(fit(&["日本語モデル".to_string()], 11), "");
    }

    #[test]
    fn shortening_counts_columns() {
        assert_eq!(shorten("anthropic", 20), "anthropic");
        assert_eq!(shorten("anthropic", 5), "anth…");
        assert_eq!(shorten("日本語モデル", 7), "日本語…");
    }
}
