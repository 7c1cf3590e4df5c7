//! Plain-text tables for the terminal.

use std::fmt::Write as _;

/// A table printed with aligned columns, a dashed rule under the headers,
/// and no trailing spaces.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Right-align every column but the first (numbers line up).
    numeric: bool,
    /// Per column, the widest a cell is printed: longer ones wrap at spaces
    /// onto lines of their own, the row's other cells blank there.
    max_width: Vec<Option<usize>>,
}

impl Table {
    /// An empty table with these column headers; every column but the first
    /// is right-aligned.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            numeric: true,
            max_width: Vec::new(),
        }
    }

    /// Cells of `column` wider than `width` wrap at spaces (a word longer
    /// than `width` keeps its own line), so one long cell does not widen the
    /// whole table past the terminal.
    pub fn wrap_column(mut self, column: usize, width: usize) -> Self {
        if self.max_width.len() <= column {
            self.max_width.resize(column + 1, None);
        }
        self.max_width[column] = Some(width);
        self
    }

    /// Every column left-aligned (a table of words, not of numbers).
    pub fn left_aligned(mut self) -> Self {
        self.numeric = false;
        self
    }

    /// Appends a row; cells beyond the headers' count are not shown, missing
    /// ones are blank.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as text, one line per row, each ending in a newline;
    /// widths ignore ANSI color codes.
    pub fn render(&self) -> String {
        let cols = self.headers.len();
        let rows: Vec<Vec<String>> = self.rows.iter().flat_map(|r| self.wrapped(r)).collect();
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.headers).chain(&rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(visible_len(c));
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, r: &Vec<String>| {
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map(String::as_str).unwrap_or("");
                let pad = w - visible_len(c);
                if i > 0 {
                    out.push_str("  ");
                }
                if i == 0 || !self.numeric {
                    out.push_str(c);
                    out.push_str(&" ".repeat(pad));
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(c);
                }
            }
            let trimmed = out.trim_end().len();
            out.truncate(trimmed);
            out.push('\n');
        };
        line(&mut out, &self.headers);
        let total: usize = width.iter().sum::<usize>() + 2 * (cols.saturating_sub(1));
        let _ = writeln!(out, "{}", "-".repeat(total));
        for r in &rows {
            line(&mut out, r);
        }
        out
    }

    /// A row as the lines it prints on: one, or more where a cell of a
    /// wrapped column is too wide.
    fn wrapped(&self, row: &[String]) -> Vec<Vec<String>> {
        let cells: Vec<Vec<String>> = row
            .iter()
            .enumerate()
            .map(|(i, c)| match self.max_width.get(i).copied().flatten() {
                Some(w) if visible_len(c) > w => wrap_words(c, w),
                _ => vec![c.clone()],
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        (0..height)
            .map(|k| {
                cells
                    .iter()
                    .map(|lines| lines.get(k).cloned().unwrap_or_default())
                    .collect()
            })
            .collect()
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        if !current.is_empty() && visible_len(&current) + 1 + visible_len(word) > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
}

/// Characters a terminal shows: ANSI colour sequences (ESC [ ... m) take no room.
fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for ch in s.chars() {
        if in_escape {
            in_escape = ch != 'm';
        } else if ch == '\x1b' {
            in_escape = true;
        } else {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(["mode", "µs/op"]);
        t.row(["sql", "4.25"]);
        t.row(["blob api", "12.5"]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "mode      µs/op");
        assert_eq!(lines[2], "sql        4.25");
        assert_eq!(lines[3], "blob api   12.5");
    }

    #[test]
    fn a_wrapped_column_breaks_long_cells_at_spaces() {
        let mut t = Table::new(["claim", "here", "verdict"])
            .left_aligned()
            .wrap_column(1, 12);
        t.row(["a", "one two three four five", "holds"]);
        t.row(["b", "short", "no"]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[2], "a      one two     holds");
        assert_eq!(lines[3], "       three four");
        assert_eq!(lines[4], "       five");
        assert_eq!(lines[5], "b      short       no");
        assert!(lines.iter().all(|l| l.len() <= 26), "{s}");
    }
}
