//! Plain-text tables for the terminal.

use std::fmt::Write as _;

/// A table printed with aligned columns, a dashed rule under the headers,
/// and no trailing spaces.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Right-align every column but the first (numbers line up).
    numeric: bool,
}

impl Table {
    /// An empty table with these column headers; every column but the first
    /// is right-aligned.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            numeric: true,
        }
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
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.headers).chain(&self.rows) {
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
        for r in &self.rows {
            line(&mut out, r);
        }
        out
    }
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
}
