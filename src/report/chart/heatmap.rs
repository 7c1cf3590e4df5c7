//! Colored matrices: one cell per (row, column) holding a value and an
//! optional note, white at a neutral value, green above and red below.

use std::fmt::Write as _;

use super::svg::{WIDTH, diverging, escape, fmt, svg_open};

/// A matrix cell's value and an optional second line; None: not measured.
pub type MatrixCell = Option<(f64, Option<String>)>;

/// A table of values colored by their distance from a neutral value, e.g.
/// read-speed ratios by blob size (columns) and page size (rows).
#[derive(Debug, Clone)]
pub struct Heatmap {
    /// Drawn at the top and as the SVG `<title>`.
    pub title: String,
    /// Heading above the row labels, e.g. "page size".
    pub row_label: String,
    /// Heading above the column labels, e.g. "blob size".
    pub col_label: String,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Column labels, left to right.
    pub cols: Vec<String>,
    /// cells[row][col]: the value and an optional second line (e.g. a
    /// published figure to compare with).
    pub cells: Vec<Vec<MatrixCell>>,
    /// The value drawn white; above it green, below it red (log distance).
    pub neutral: f64,
    /// One line below the matrix saying what the colors mean.
    pub legend: String,
}

// Left margin for row labels, top margin for the title and column labels.
const LEFT: f64 = 90.0;
const TOP: f64 = 56.0;
const CELL_H: f64 = 38.0;

impl Heatmap {
    /// The matrix as a standalone `<svg>` element: cells up to 110 pixels
    /// wide, the whole at least 480 pixels wide.
    pub fn to_svg(&self) -> String {
        let cols = self.cols.len().max(1) as f64;
        let cell_w = ((WIDTH - LEFT - 20.0) / cols).min(110.0);
        let height = TOP + CELL_H * self.rows.len() as f64 + 50.0;
        let width = (LEFT + cell_w * cols + 20.0).max(480.0);
        let mut out = String::new();
        svg_open(&mut out, width, height, &self.title);
        self.draw_headings(&mut out, cell_w);
        for (i, r) in self.rows.iter().enumerate() {
            self.draw_row(&mut out, cell_w, i, r);
        }
        let _ = write!(
            out,
            r##"<text class="legend" x="{left}" y="{y}" fill="#333">{}</text>"##,
            escape(&self.legend),
            left = LEFT,
            y = height - 18.0,
        );
        out.push_str("</svg>");
        out
    }

    /// The column heading and labels above the cells, and the row heading.
    fn draw_headings(&self, out: &mut String, cell_w: f64) {
        let cols = self.cols.len().max(1) as f64;
        let _ = write!(
            out,
            r#"<text class="axis-label" x="{x}" y="42" text-anchor="middle">{}</text>"#,
            escape(&self.col_label),
            x = LEFT + cell_w * cols / 2.0
        );
        for (j, c) in self.cols.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text class="tick" x="{x}" y="{y}" text-anchor="middle" font-weight="bold">{}</text>"#,
                escape(c),
                x = fmt(LEFT + cell_w * (j as f64 + 0.5)),
                y = TOP - 2.0,
            );
        }
        let _ = write!(
            out,
            r#"<text class="axis-label" x="8" y="{y}" font-weight="bold">{}</text>"#,
            escape(&self.row_label),
            y = TOP - 2.0,
        );
    }

    /// Row `i`: its label, then its measured cells (unmeasured ones stay
    /// blank).
    fn draw_row(&self, out: &mut String, cell_w: f64, i: usize, label: &str) {
        let y = TOP + 4.0 + i as f64 * CELL_H;
        let _ = write!(
            out,
            r#"<text class="tick" x="{x}" y="{ty}" text-anchor="end" font-weight="bold">{}</text>"#,
            escape(label),
            x = LEFT - 8.0,
            ty = fmt(y + CELL_H / 2.0 + 4.0),
        );
        for (j, cell) in self.cells.get(i).into_iter().flatten().enumerate() {
            let x = LEFT + j as f64 * cell_w;
            let Some((v, note)) = cell else { continue };
            self.draw_cell(out, (x, y, cell_w), *v, note.as_deref());
        }
    }

    /// One cell at pixel (`x`, `y`), `w` wide: colored rectangle, the value
    /// with two decimals and the note below it.
    fn draw_cell(&self, out: &mut String, (x, y, w): (f64, f64, f64), v: f64, note: Option<&str>) {
        let _ = write!(
            out,
            r##"<g class="cell" data-value="{v}"><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="#fff"/><text x="{cx}" y="{ty}" text-anchor="middle" font-weight="bold">{v:.2}</text>"##,
            x = fmt(x),
            y = fmt(y),
            w = fmt(w),
            h = CELL_H,
            fill = diverging(v, self.neutral),
            cx = fmt(x + w / 2.0),
            ty = fmt(y + if note.is_some() { 16.0 } else { 23.0 }),
        );
        if let Some(n) = note {
            let _ = write!(
                out,
                r##"<text x="{cx}" y="{ty}" text-anchor="middle" font-size="10" fill="#333">{}</text>"##,
                escape(n),
                cx = fmt(x + w / 2.0),
                ty = fmt(y + 31.0),
            );
        }
        out.push_str("</g>");
    }
}
