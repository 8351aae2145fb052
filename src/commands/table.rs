//! The table the listing commands print, fitted to a terminal's width.

use std::io::{self, Write};

use super::terminal;
use crate::catalog;

/// Writes a table of `head` and `rows`, each column as wide as its widest
/// cell, fitted to `width` columns (a terminal's): the columns of
/// `droppable` are dropped, first to last, while the table is wider. Then
/// the first column (an id) is narrowed to what is left: an id wider than
/// it stands on a line of its own, whole, and the rest of its row goes on
/// the next line.
pub(super) fn write_table<const N: usize>(
    out: &mut impl Write,
    head: [&str; N],
    rows: &[[String; N]],
    droppable: &[usize],
    width: usize,
) -> io::Result<()> {
    use unicode_width::UnicodeWidthStr;
    // A catalog's names and ids, safe to print, measured as shown.
    let rows: Vec<[std::borrow::Cow<'_, str>; N]> = (rows.iter())
        .map(|row| std::array::from_fn(|i| catalog::escape::safe(&row[i])))
        .collect();
    let mut widths = head.map(UnicodeWidthStr::width);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let mut shown: Vec<usize> = (0..N).collect();
    let total = |shown: &[usize], widths: &[usize; N]| {
        shown
            .iter()
            .map(|&c| widths[c] + 2)
            .sum::<usize>()
            .saturating_sub(2)
    };
    for column in droppable {
        if total(&shown, &widths) <= width {
            break;
        }
        shown.retain(|c| c != column);
    }
    let over = total(&shown, &widths).saturating_sub(width);
    widths[0] = widths[0].saturating_sub(over).max(head[0].width());
    let line = |cells: &[&str]| {
        let mut text = String::new();
        for (i, &column) in shown.iter().enumerate() {
            let cell = cells[column];
            if i + 1 == shown.len() {
                text.push_str(cell);
            } else {
                let pad = widths[column].saturating_sub(cell.width());
                text.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
            }
        }
        text.trim_end().to_string()
    };
    writeln!(out, "{}", line(&head))?;
    for row in &rows {
        let mut cells: Vec<&str> = row.iter().map(|cell| cell.as_ref()).collect();
        if cells[0].width() > widths[0] {
            for piece in terminal::pieces(cells[0], width, width) {
                writeln!(out, "{piece}")?;
            }
            cells[0] = "";
        }
        writeln!(out, "{}", line(&cells))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let mut out = Vec::new();
        let rows = [["long".into(), "x".into()], ["s".into(), "".into()]];
        write_table(&mut out, ["A", "BB"], &rows, &[], 80).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "A     BB\nlong  x\ns\n");
    }

    /// Narrowed to a terminal: droppable columns go first, then an id too
    /// wide for what is left stands on a line of its own, whole; no line is
    /// wider than the terminal, and no cell is cut.
    #[test]
    fn tables_fit_the_terminal_without_cutting_an_id() {
        let rows = [
            [
                "anthropic/claude-sonnet-4-5-20250929".to_string(),
                "Claude Sonnet 4.5".into(),
                "200K".into(),
                "$3/$15".into(),
            ],
            [
                "x/y".to_string(),
                "Y".into(),
                "8K".into(),
                "$0.1/$0.2".into(),
            ],
        ];
        let text = |width| {
            let mut out = Vec::new();
            let head = ["MODEL", "NAME", "CONTEXT", "$/1M IN/OUT"];
            write_table(&mut out, head, &rows, &[1], width).unwrap();
            String::from_utf8(out).unwrap()
        };
        let wide = text(usize::MAX);
        assert!(wide.contains("Claude Sonnet 4.5"), "{wide}");
        let narrow = text(60);
        assert!(
            !narrow.contains("NAME")
                && narrow.contains("anthropic/claude-sonnet-4-5-20250929  200K"),
            "{narrow}"
        );
        let narrower = text(40);
        for line in narrower.lines() {
            assert!(unicode_width::UnicodeWidthStr::width(line) <= 40, "{line}");
        }
        let lines: Vec<&str> = narrower.lines().collect();
        assert_eq!(
            lines[1], "anthropic/claude-sonnet-4-5-20250929",
            "{narrower}"
        );
        assert!(
            lines[2].starts_with("      ") && lines[2].trim_start().starts_with("200K"),
            "{narrower}"
        );
        assert!(!narrower.contains('…'), "{narrower}");
        // An id wider than the terminal is wrapped where the line ends.
        let tiny = text(20);
        assert!(
            tiny.contains("anthropic/claude-son\nnet-4-5-20250929\n"),
            "{tiny}"
        );
    }
}
