//! Charts as hand-made SVG: line charts (linear, log and percentile axes),
//! horizontal bar charts with a reference line, and colored matrices.
//!
//! The SVG is self-contained (no scripts, no external fonts) so the same text
//! goes inline into the HTML report and through resvg into a PNG. Elements
//! carry classes (`series`, `bar`, `tick`, `axis-label`, `cell`) so tests and
//! stylesheets can find them.
//!
//! This file holds the shared vocabulary (scales, units, axes, points,
//! series) and the [`Chart`] enum; each chart type draws itself in its own
//! file, on top of `axis` (ticks, mapping, axes, number formatting) and `svg`
//! (escaping, the document header, legends, colors).

mod axis;
mod bar;
mod heatmap;
mod line;
mod svg;

pub use axis::size_label;
pub use bar::{Bar, BarChart, BarGroup};
pub use heatmap::{Heatmap, MatrixCell};
pub use line::LineChart;
pub use svg::{PALETTE, escape};

/// How values map to positions along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Equal distances for equal differences; the range is rounded out to
    /// "nice" steps (1, 2, 5 times a power of ten).
    Linear,
    /// Equal distances for equal ratios, ticks at 1 (2, 3, 5) times powers of
    /// ten; values at or below zero are left out.
    Log,
    /// Logarithmic with ticks at powers of two (concurrency levels).
    Log2,
    /// Percentiles as "nines" (0, 90, 99, 99.9, ...), HdrHistogram style.
    Nines,
}

/// How tick values are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// Nanoseconds shown as ns / us / ms / s.
    Nanos,
    /// Seconds shown as ms / s.
    Seconds,
    /// Bytes in the x1000 units the suites use (10k, 1m).
    Bytes,
    /// A ratio, written 1.5x.
    Ratio,
    /// A percentile, written 99.9%.
    Percentile,
    /// A count or rate without a unit (requests/s, 2.5k above 10 000).
    Plain,
}

/// One axis: what it is called, how it is scaled and how its ticks read.
#[derive(Debug, Clone)]
pub struct AxisSpec {
    /// Axis title drawn beside the axis, e.g. "blob size (bytes)".
    pub label: String,
    /// How values map to positions.
    pub scale: Scale,
    /// How tick values are written.
    pub unit: Unit,
}

impl AxisSpec {
    /// An axis titled `label`.
    pub fn new(label: impl Into<String>, scale: Scale, unit: Unit) -> Self {
        AxisSpec {
            label: label.into(),
            scale,
            unit,
        }
    }
}

/// One point of a line chart, in data units (the axes' units).
#[derive(Debug, Clone, Copy)]
pub struct Point {
    /// Position along the x axis.
    pub x: f64,
    /// Position along the y axis (e.g. the median over rounds).
    pub y: f64,
    /// Spread of y (e.g. its interval over rounds), drawn as a whisker.
    pub spread: Option<(f64, f64)>,
    /// The figure is noisy (its interval wider than +/-25%): drawn with a
    /// `~` beside its dot, as the terminal marks it.
    pub noisy: bool,
}

impl Point {
    /// A point without a whisker.
    pub fn new(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            spread: None,
            noisy: false,
        }
    }
    /// A point whose y varied between `lo` and `hi` (drawn as a whisker).
    pub fn with_spread(x: f64, y: f64, lo: f64, hi: f64) -> Self {
        Point {
            x,
            y,
            spread: Some((lo, hi)),
            noisy: false,
        }
    }
}

/// One line of a line chart, with its legend entry.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text and the `data-name` of the drawn group.
    pub name: String,
    /// The points in drawing order; non-finite ones (and non-positive ones
    /// on a log axis) are skipped.
    pub points: Vec<Point>,
    /// Drawn dashed, e.g. a p99 line beside the solid p50 of one system.
    pub dashed: bool,
    /// Index into PALETTE; series sharing a color (p50 and p99 of one
    /// system) say so explicitly.
    pub color: usize,
}

/// Any chart, rendered to SVG text.
#[derive(Debug, Clone)]
pub enum Chart {
    /// Lines over two axes (time vs size, percentiles, concurrency).
    Line(LineChart),
    /// Horizontal bars per labeled group (ratios, ranked cases).
    Bars(BarChart),
    /// A colored matrix of values around a neutral one.
    Matrix(Heatmap),
}

impl Chart {
    /// The title drawn at the top of the chart (and in its SVG `<title>`).
    pub fn title(&self) -> &str {
        match self {
            Chart::Line(c) => &c.title,
            Chart::Bars(c) => &c.title,
            Chart::Matrix(c) => &c.title,
        }
    }

    /// The chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        match self {
            Chart::Line(c) => c.to_svg(),
            Chart::Bars(c) => c.to_svg(),
            Chart::Matrix(c) => c.to_svg(),
        }
    }
}
