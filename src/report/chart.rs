//! Charts as hand-made SVG: line charts (linear, log and percentile axes),
//! horizontal bar charts with a reference line, and colored matrices.
//!
//! The SVG is self-contained (no scripts, no external fonts) so the same text
//! goes inline into the HTML report and through resvg into a PNG. Elements
//! carry classes (`series`, `bar`, `tick`, `axis-label`, `cell`) so tests and
//! stylesheets can find them.

use std::fmt::Write as _;

/// Okabe-Ito: distinguishable with the common kinds of color blindness.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
];

const WIDTH: f64 = 720.0;
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

/// How values map to positions along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
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
    Plain,
}

impl Unit {
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Nanos => compact_ns(v),
            Unit::Seconds => compact_ns(v * 1e9),
            Unit::Bytes => size_label(v),
            Unit::Ratio => {
                if v >= 10.0 {
                    format!("{v:.0}x")
                } else if v >= 1.0 || v == 0.0 {
                    format!("{}x", trim_float(v, 1))
                } else {
                    format!("{}x", trim_float(v, 2))
                }
            }
            Unit::Percentile => format!("{}%", trim_float(v, 3)),
            Unit::Plain => {
                if v.abs() >= 10_000.0 {
                    format!("{}k", trim_float(v / 1000.0, 1))
                } else {
                    trim_float(v, 2)
                }
            }
        }
    }
}

/// 100 µs, 1.5 ms: tick labels with no padding zeros.
fn compact_ns(v: f64) -> String {
    let (value, unit) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    format!("{} {unit}", trim_float(value, 2))
}

fn trim_float(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// 10k, 2.5m: the x1000 size units of kvtest and the suites.
pub fn size_label(v: f64) -> String {
    if v >= 1e9 {
        format!("{}g", trim_float(v / 1e9, 1))
    } else if v >= 1e6 {
        format!("{}m", trim_float(v / 1e6, 1))
    } else if v >= 1e3 {
        format!("{}k", trim_float(v / 1e3, 1))
    } else {
        trim_float(v, 0)
    }
}

#[derive(Debug, Clone)]
pub struct AxisSpec {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
}

impl AxisSpec {
    pub fn new(label: impl Into<String>, scale: Scale, unit: Unit) -> Self {
        AxisSpec {
            label: label.into(),
            scale,
            unit,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// Spread of y (e.g. min and max over rounds), drawn as a whisker.
    pub spread: Option<(f64, f64)>,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Self {
        Point { x, y, spread: None }
    }
    pub fn with_spread(x: f64, y: f64, lo: f64, hi: f64) -> Self {
        Point {
            x,
            y,
            spread: Some((lo, hi)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub dashed: bool,
    /// Index into PALETTE; series sharing a color (p50 and p99 of one
    /// system) say so explicitly.
    pub color: usize,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x: AxisSpec,
    pub y: AxisSpec,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone)]
pub struct Bar {
    pub value: f64,
    pub spread: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct BarGroup {
    pub label: String,
    /// One bar per series (None: not measured).
    pub bars: Vec<Option<Bar>>,
    /// A marker drawn across the group, e.g. the published claim.
    pub marker: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub value_axis: AxisSpec,
    pub series_names: Vec<String>,
    pub groups: Vec<BarGroup>,
    /// A vertical line, e.g. 1.0 for ratios.
    pub reference: Option<f64>,
    pub marker_label: Option<String>,
}

/// A matrix cell's value and an optional second line; None: not measured.
pub type MatrixCell = Option<(f64, Option<String>)>;

/// A point placed on the canvas: x, y and the whisker's ends.
type Placed = (f64, f64, Option<(f64, f64)>);

#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    pub row_label: String,
    pub col_label: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// cells[row][col]: the value and an optional second line (e.g. a
    /// published figure to compare with).
    pub cells: Vec<Vec<MatrixCell>>,
    /// The value drawn white; above it green, below it red (log distance).
    pub neutral: f64,
    pub legend: String,
}

/// Any chart, rendered to SVG text.
#[derive(Debug, Clone)]
pub enum Chart {
    Line(LineChart),
    Bars(BarChart),
    Matrix(Heatmap),
}

impl Chart {
    pub fn title(&self) -> &str {
        match self {
            Chart::Line(c) => &c.title,
            Chart::Bars(c) => &c.title,
            Chart::Matrix(c) => &c.title,
        }
    }

    pub fn to_svg(&self) -> String {
        match self {
            Chart::Line(c) => c.to_svg(),
            Chart::Bars(c) => c.to_svg(),
            Chart::Matrix(c) => c.to_svg(),
        }
    }
}

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A data range mapped onto a pixel range.
#[derive(Debug, Clone, Copy)]
struct Mapping {
    scale: Scale,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
}

fn nines(p: f64) -> f64 {
    // p in percent; 100 would be infinite: clamp to six nines.
    -(1.0 - (p / 100.0).min(0.999_999)).log10()
}

fn transform(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log | Scale::Log2 => v.max(f64::MIN_POSITIVE).log10(),
        Scale::Nines => nines(v),
    }
}

impl Mapping {
    fn new(scale: Scale, lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
        let (mut lo, mut hi) = (transform(scale, lo), transform(scale, hi));
        if (hi - lo).abs() < 1e-12 {
            lo -= 0.5;
            hi += 0.5;
        }
        Mapping {
            scale,
            lo,
            hi,
            p0,
            p1,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let t = (transform(self.scale, v) - self.lo) / (self.hi - self.lo);
        self.p0 + t * (self.p1 - self.p0)
    }
}

/// The axis range (data units) and the tick values inside it.
fn ticks(scale: Scale, lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    match scale {
        Scale::Linear => {
            let (lo, hi) = if lo == hi {
                (lo - 1.0, hi + 1.0)
            } else {
                (lo, hi)
            };
            let step = nice_step((hi - lo) / 5.0);
            let start = (lo / step).floor() * step;
            let end = (hi / step).ceil() * step;
            let mut t = Vec::new();
            let mut v = start;
            while v <= end + step * 1e-9 {
                t.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                v += step;
            }
            (start, end, t)
        }
        Scale::Log => {
            let lo = lo.max(f64::MIN_POSITIVE);
            let hi = hi.max(lo);
            let d0 = lo.log10().floor() as i32;
            let d1 = hi.log10().ceil().max(d0 as f64 + 1.0) as i32;
            let decades = d1 - d0;
            let mults: &[f64] = if decades <= 1 {
                &[1.0, 2.0, 5.0]
            } else if decades <= 3 {
                &[1.0, 3.0]
            } else {
                &[1.0]
            };
            let mut t = Vec::new();
            for d in d0..=d1 {
                for m in mults {
                    let v = m * 10f64.powi(d);
                    if v >= 10f64.powi(d0) && v <= 10f64.powi(d1) * 1.000_001 {
                        t.push(v);
                    }
                }
            }
            // Tighten the range to the data, keeping one tick beyond each end.
            let first = t.iter().rposition(|&v| v <= lo * 1.000_001).unwrap_or(0);
            let last = t
                .iter()
                .position(|&v| v >= hi / 1.000_001)
                .unwrap_or(t.len() - 1);
            let t = t[first..=last].to_vec();
            (t[0], t[t.len() - 1], t)
        }
        Scale::Log2 => {
            let lo = lo.max(1.0);
            let (p0, p1) = (lo.log2().floor() as i32, hi.max(lo).log2().ceil() as i32);
            let p1 = p1.max(p0 + 1);
            let t: Vec<f64> = (p0..=p1).map(|p| 2f64.powi(p)).collect();
            (t[0], t[t.len() - 1], t)
        }
        Scale::Nines => {
            let candidates = [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999];
            // Up to the first candidate at or above the data (at least 90%).
            let end = candidates
                .iter()
                .position(|&p| p >= hi.max(90.0) - 1e-9)
                .unwrap_or(candidates.len() - 1);
            let t: Vec<f64> = candidates[..=end].to_vec();
            let top = *t.last().unwrap_or(&99.0);
            (0.0, top, t)
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn svg_open(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="{FONT}" font-size="12" role="img"><title>{t}</title><rect class="background" x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/><text class="chart-title" x="{cx}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>"##,
        t = escape(title),
        cx = width / 2.0,
    );
}

fn legend(out: &mut String, items: &[(String, usize, bool)], x: f64, y: f64) -> f64 {
    // Left to right, wrapping; returns the height used.
    let mut cx = x;
    let mut cy = y;
    for (name, color, dashed) in items {
        let w = 30.0 + 7.0 * name.chars().count() as f64;
        if cx + w > WIDTH - 10.0 && cx > x {
            cx = x;
            cy += 18.0;
        }
        let _ = write!(
            out,
            r#"<g class="legend-item"><line x1="{cx}" y1="{ly}" x2="{x2}" y2="{ly}" stroke="{c}" stroke-width="3"{dash}/><text x="{tx}" y="{ty}">{n}</text></g>"#,
            ly = cy - 4.0,
            x2 = cx + 20.0,
            c = PALETTE[color % PALETTE.len()],
            dash = if *dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            },
            tx = cx + 24.0,
            ty = cy,
            n = escape(name),
        );
        cx += w;
    }
    cy - y + 18.0
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

impl LineChart {
    pub fn to_svg(&self) -> String {
        let all: Vec<&Point> = self.series.iter().flat_map(|s| &s.points).collect();
        let finite = |v: f64, scale: Scale| {
            v.is_finite() && (!matches!(scale, Scale::Log | Scale::Log2) || v > 0.0)
        };
        let xs: Vec<f64> = all
            .iter()
            .map(|p| p.x)
            .filter(|&v| finite(v, self.x.scale))
            .collect();
        let ys: Vec<f64> = all
            .iter()
            .flat_map(|p| {
                let (lo, hi) = p.spread.unwrap_or((p.y, p.y));
                [p.y, lo, hi]
            })
            .filter(|&v| finite(v, self.y.scale))
            .collect();
        let (xmin, xmax) = min_max(&xs);
        let (ymin, ymax) = min_max(&ys);
        let ymin = if self.y.scale == Scale::Linear {
            ymin.min(0.0)
        } else {
            ymin
        };
        let (x0, x1, xt) = ticks(self.x.scale, xmin, xmax);
        let (y0, y1, yt) = ticks(self.y.scale, ymin, ymax);

        let legend_items: Vec<(String, usize, bool)> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.color, s.dashed))
            .collect();
        let (left, right, top) = (78.0, 40.0, 34.0);
        let plot_h = 300.0;
        let mut body = String::new();
        let legend_h = legend(&mut body, &legend_items, left, top + plot_h + 58.0);
        let height = top + plot_h + 52.0 + legend_h + 8.0;
        let mx = Mapping::new(self.x.scale, x0, x1, left, WIDTH - right);
        let my = Mapping::new(self.y.scale, y0, y1, top + plot_h, top);

        let mut out = String::new();
        svg_open(&mut out, WIDTH, height, &self.title);
        axes(
            &mut out,
            &mx,
            &my,
            &xt,
            &yt,
            &self.x,
            &self.y,
            (left, top, WIDTH - right, top + plot_h),
        );
        for s in &self.series {
            let color = PALETTE[s.color % PALETTE.len()];
            let pts: Vec<Placed> = s
                .points
                .iter()
                .filter(|p| finite(p.x, self.x.scale) && finite(p.y, self.y.scale))
                .map(|p| {
                    (
                        mx.at(p.x),
                        my.at(p.y),
                        p.spread.map(|(lo, hi)| (my.at(lo), my.at(hi))),
                    )
                })
                .collect();
            let _ = write!(out, r#"<g class="series" data-name="{}">"#, escape(&s.name));
            let path: Vec<String> = pts
                .iter()
                .map(|(x, y, _)| format!("{},{}", fmt(*x), fmt(*y)))
                .collect();
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2"{} points="{}"/>"#,
                if s.dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                },
                path.join(" ")
            );
            for (x, y, spread) in &pts {
                if let Some((lo, hi)) = spread {
                    let _ = write!(
                        out,
                        r#"<line class="whisker" x1="{x}" y1="{lo}" x2="{x}" y2="{hi}" stroke="{color}" stroke-width="1"/>"#,
                        x = fmt(*x),
                        lo = fmt(*lo),
                        hi = fmt(*hi)
                    );
                }
                let _ = write!(
                    out,
                    r#"<circle cx="{}" cy="{}" r="3" fill="{color}"/>"#,
                    fmt(*x),
                    fmt(*y)
                );
            }
            out.push_str("</g>");
        }
        out.push_str(&body);
        out.push_str("</svg>");
        out
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (1.0, 10.0);
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

#[allow(clippy::too_many_arguments)]
fn axes(
    out: &mut String,
    mx: &Mapping,
    my: &Mapping,
    xt: &[f64],
    yt: &[f64],
    xs: &AxisSpec,
    ys: &AxisSpec,
    (l, t, r, b): (f64, f64, f64, f64),
) {
    out.push_str(r#"<g class="axis x">"#);
    for &v in xt {
        let x = mx.at(v);
        let _ = write!(
            out,
            r##"<line x1="{x}" y1="{t}" x2="{x}" y2="{b}" stroke="#e4e4e4"/><text class="tick" x="{x}" y="{ty}" text-anchor="middle">{}</text>"##,
            escape(&xs.unit.format(v)),
            x = fmt(x),
            ty = b + 16.0,
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/><text class="axis-label" x="{cx}" y="{ly}" text-anchor="middle">{}</text></g>"##,
        escape(&xs.label),
        cx = (l + r) / 2.0,
        ly = b + 36.0,
    );
    out.push_str(r#"<g class="axis y">"#);
    for &v in yt {
        let y = my.at(v);
        let _ = write!(
            out,
            r##"<line x1="{l}" y1="{y}" x2="{r}" y2="{y}" stroke="#e4e4e4"/><text class="tick" x="{tx}" y="{yy}" text-anchor="end">{}</text>"##,
            escape(&ys.unit.format(v)),
            y = fmt(y),
            tx = l - 6.0,
            yy = fmt(y + 4.0),
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#333"/><text class="axis-label" x="14" y="{cy}" text-anchor="middle" transform="rotate(-90 14 {cy})">{}</text></g>"##,
        escape(&ys.label),
        cy = (t + b) / 2.0,
    );
}

impl BarChart {
    pub fn to_svg(&self) -> String {
        let n_series = self.series_names.len().max(1);
        let label_w = self
            .groups
            .iter()
            .map(|g| g.label.chars().count())
            .max()
            .unwrap_or(0)
            .min(48) as f64
            * 7.2
            + 14.0;
        let left = label_w.max(60.0);
        let right = 40.0;
        let top = 34.0;
        let bar_h = 12.0;
        let group_h = bar_h * n_series as f64 + 10.0;
        let plot_h = group_h * self.groups.len().max(1) as f64;

        let mut values: Vec<f64> = Vec::new();
        for g in &self.groups {
            for b in g.bars.iter().flatten() {
                values.push(b.value);
                if let Some((lo, hi)) = b.spread {
                    values.extend([lo, hi]);
                }
            }
            values.extend(g.marker);
        }
        values.extend(self.reference);
        let log = self.value_axis.scale == Scale::Log;
        values.retain(|v| v.is_finite() && (!log || *v > 0.0));
        let (lo, hi) = min_max(&values);
        let lo = if log { lo } else { lo.min(0.0) };
        let (v0, v1, vt) = ticks(self.value_axis.scale, lo, hi);
        let mx = Mapping::new(self.value_axis.scale, v0, v1, left, WIDTH - right);
        // Bars grow from the reference (1.0 for ratios) or from the axis start.
        let base = self.reference.filter(|_| log).unwrap_or(v0);

        let mut legend_items: Vec<(String, usize, bool)> = self
            .series_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i, false))
            .collect();
        if let Some(m) = &self.marker_label {
            legend_items.push((m.clone(), 6, true));
        }
        let mut body = String::new();
        let legend_h = if legend_items.len() > 1 || self.marker_label.is_some() {
            legend(&mut body, &legend_items, left, top + plot_h + 58.0)
        } else {
            0.0
        };
        let height = top + plot_h + 52.0 + legend_h + 8.0;

        let mut out = String::new();
        svg_open(&mut out, WIDTH, height, &self.title);
        let b = top + plot_h;
        out.push_str(r#"<g class="axis x">"#);
        for &v in &vt {
            let x = mx.at(v);
            let _ = write!(
                out,
                r##"<line x1="{x}" y1="{top}" x2="{x}" y2="{b}" stroke="#e4e4e4"/><text class="tick" x="{x}" y="{ty}" text-anchor="middle">{}</text>"##,
                escape(&self.value_axis.unit.format(v)),
                x = fmt(x),
                ty = b + 16.0,
            );
        }
        let _ = write!(
            out,
            r##"<line x1="{left}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/><text class="axis-label" x="{cx}" y="{ly}" text-anchor="middle">{}</text></g>"##,
            escape(&self.value_axis.label),
            r = WIDTH - right,
            cx = (left + WIDTH - right) / 2.0,
            ly = b + 36.0,
        );
        for (gi, g) in self.groups.iter().enumerate() {
            let gy = top + gi as f64 * group_h + 5.0;
            let label: String = if g.label.chars().count() > 48 {
                g.label.chars().take(47).chain(['…']).collect()
            } else {
                g.label.clone()
            };
            let _ = write!(
                out,
                r#"<text class="group-label" x="{x}" y="{y}" text-anchor="end"><title>{full}</title>{l}</text>"#,
                x = left - 6.0,
                y = fmt(gy + group_h / 2.0),
                full = escape(&g.label),
                l = escape(&label),
            );
            for (si, bar) in g.bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                if !bar.value.is_finite() || (log && bar.value <= 0.0) {
                    continue;
                }
                let y = gy + si as f64 * bar_h;
                let (xa, xb) = (mx.at(base), mx.at(bar.value));
                let color = PALETTE[si % PALETTE.len()];
                let _ = write!(
                    out,
                    r#"<rect class="bar" data-series="{s}" data-value="{v}" x="{x}" y="{y}" width="{w}" height="{h}" fill="{color}"><title>{s}: {vt}</title></rect>"#,
                    s = escape(self.series_names.get(si).map(String::as_str).unwrap_or("")),
                    v = bar.value,
                    x = fmt(xa.min(xb)),
                    y = fmt(y),
                    w = fmt((xb - xa).abs().max(1.0)),
                    h = bar_h - 2.0,
                    vt = escape(&self.value_axis.unit.format(bar.value)),
                );
                if let Some((lo, hi)) = bar.spread {
                    let cy = y + (bar_h - 2.0) / 2.0;
                    let _ = write!(
                        out,
                        r##"<line class="whisker" x1="{a}" y1="{cy}" x2="{b}" y2="{cy}" stroke="#222" stroke-width="1"/>"##,
                        a = fmt(mx.at(lo)),
                        b = fmt(mx.at(hi)),
                        cy = fmt(cy),
                    );
                }
            }
            if let Some(m) = g.marker.filter(|m| m.is_finite() && (!log || *m > 0.0)) {
                let x = mx.at(m);
                let _ = write!(
                    out,
                    r##"<line class="marker" x1="{x}" y1="{y0}" x2="{x}" y2="{y1}" stroke="#000" stroke-width="2" stroke-dasharray="3 2"/>"##,
                    x = fmt(x),
                    y0 = fmt(gy - 2.0),
                    y1 = fmt(gy + group_h - 8.0),
                );
            }
        }
        if let Some(r) = self.reference {
            let x = mx.at(r);
            let _ = write!(
                out,
                r##"<line class="reference" x1="{x}" y1="{top}" x2="{x}" y2="{b}" stroke="#444" stroke-width="1.5"/>"##,
                x = fmt(x)
            );
        }
        out.push_str(&body);
        out.push_str("</svg>");
        out
    }
}

impl Heatmap {
    pub fn to_svg(&self) -> String {
        let left = 90.0;
        let top = 56.0;
        let cols = self.cols.len().max(1) as f64;
        let cell_w = ((WIDTH - left - 20.0) / cols).min(110.0);
        let cell_h = 38.0;
        let height = top + cell_h * self.rows.len() as f64 + 50.0;
        let width = (left + cell_w * cols + 20.0).max(480.0);
        let mut out = String::new();
        svg_open(&mut out, width, height, &self.title);
        let _ = write!(
            out,
            r#"<text class="axis-label" x="{x}" y="42" text-anchor="middle">{}</text>"#,
            escape(&self.col_label),
            x = left + cell_w * cols / 2.0
        );
        for (j, c) in self.cols.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text class="tick" x="{x}" y="{y}" text-anchor="middle" font-weight="bold">{}</text>"#,
                escape(c),
                x = fmt(left + cell_w * (j as f64 + 0.5)),
                y = top - 2.0,
            );
        }
        let _ = write!(
            out,
            r#"<text class="axis-label" x="8" y="{y}" font-weight="bold">{}</text>"#,
            escape(&self.row_label),
            y = top - 2.0,
        );
        for (i, r) in self.rows.iter().enumerate() {
            let y = top + 4.0 + i as f64 * cell_h;
            let _ = write!(
                out,
                r#"<text class="tick" x="{x}" y="{ty}" text-anchor="end" font-weight="bold">{}</text>"#,
                escape(r),
                x = left - 8.0,
                ty = fmt(y + cell_h / 2.0 + 4.0),
            );
            for (j, cell) in self.cells.get(i).into_iter().flatten().enumerate() {
                let x = left + j as f64 * cell_w;
                let Some((v, note)) = cell else { continue };
                let _ = write!(
                    out,
                    r##"<g class="cell" data-value="{v}"><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="#fff"/><text x="{cx}" y="{ty}" text-anchor="middle" font-weight="bold">{v:.2}</text>"##,
                    x = fmt(x),
                    y = fmt(y),
                    w = fmt(cell_w),
                    h = cell_h,
                    fill = diverging(*v, self.neutral),
                    cx = fmt(x + cell_w / 2.0),
                    ty = fmt(y + if note.is_some() { 16.0 } else { 23.0 }),
                );
                if let Some(n) = note {
                    let _ = write!(
                        out,
                        r##"<text x="{cx}" y="{ty}" text-anchor="middle" font-size="10" fill="#333">{}</text>"##,
                        escape(n),
                        cx = fmt(x + cell_w / 2.0),
                        ty = fmt(y + 31.0),
                    );
                }
                out.push_str("</g>");
            }
        }
        let _ = write!(
            out,
            r##"<text class="legend" x="{left}" y="{y}" fill="#333">{}</text>"##,
            escape(&self.legend),
            y = height - 18.0,
        );
        out.push_str("</svg>");
        out
    }
}

/// Green above `neutral`, red below, stronger with the log distance
/// (a factor of 4 is full strength).
fn diverging(v: f64, neutral: f64) -> String {
    if !(v.is_finite() && v > 0.0 && neutral > 0.0) {
        return "#dddddd".into();
    }
    let t = ((v / neutral).log2() / 2.0).clamp(-1.0, 1.0);
    let (r, g, b) = if t >= 0.0 {
        // white -> #1a9850
        mix((255, 255, 255), (26, 152, 80), t)
    } else {
        // white -> #d73027
        mix((255, 255, 255), (215, 48, 39), -t)
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn mix(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> (u8, u8, u8) {
    let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t * 0.85).round() as u8;
    (f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_cover_the_data_with_round_values() {
        let (lo, hi, t) = ticks(Scale::Log, 3_000.0, 2_000_000.0);
        assert!(lo <= 3_000.0 && hi >= 2_000_000.0, "{lo} {hi}");
        assert!(t.contains(&10_000.0) && t.contains(&1_000_000.0), "{t:?}");
        let (_, _, t) = ticks(Scale::Log2, 1.0, 48.0);
        assert_eq!(t, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        let (lo, hi, t) = ticks(Scale::Linear, 0.0, 7.3);
        assert_eq!((lo, hi), (0.0, 8.0));
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0]);
    }

    #[test]
    fn units_read_like_the_terminal_tables() {
        assert_eq!(Unit::Bytes.format(10_000.0), "10k");
        assert_eq!(Unit::Bytes.format(2_500_000.0), "2.5m");
        assert_eq!(Unit::Ratio.format(1.5), "1.5x");
        assert_eq!(Unit::Ratio.format(0.25), "0.25x");
        assert_eq!(Unit::Percentile.format(99.9), "99.9%");
        assert_eq!(Unit::Nanos.format(100_000.0), "100 µs");
        assert_eq!(Unit::Nanos.format(1_500_000.0), "1.5 ms");
    }

    #[test]
    fn diverging_colors_are_green_above_and_red_below() {
        assert_eq!(diverging(1.0, 1.0), "#ffffff");
        let up = diverging(4.0, 1.0);
        let down = diverging(0.25, 1.0);
        assert!(up[3..5] > up[1..3], "green dominates: {up}");
        assert!(down[1..3] > down[3..5], "red dominates: {down}");
    }
}
