//! Axes: choosing the range and the tick values for a scale, mapping data
//! values onto pixels, drawing the axis lines, grid and labels, and writing
//! numbers the way the terminal tables do (10k, 1.5 ms, 2x).

use std::fmt::Write as _;

use super::svg::{escape, fmt};
use super::{AxisSpec, Scale, Unit};

impl Unit {
    /// `v` written as a tick label in this unit, without padding zeros.
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

/// 10k, 2.5m: the x1000 size units of kvtest and the suites (`v` in bytes).
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

/// A data range mapped onto a pixel range.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mapping {
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
    /// Data values `lo..hi` onto pixels `p0..p1` (p0 > p1 for a y axis,
    /// whose pixels grow downwards).
    pub(super) fn new(scale: Scale, lo: f64, hi: f64, p0: f64, p1: f64) -> Self {
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

    /// The pixel position of data value `v`.
    pub(super) fn at(&self, v: f64) -> f64 {
        let t = (transform(self.scale, v) - self.lo) / (self.hi - self.lo);
        self.p0 + t * (self.p1 - self.p0)
    }
}

/// The axis range (data units) and the tick values inside it.
pub(super) fn ticks(scale: Scale, lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    match scale {
        Scale::Linear => linear_ticks(lo, hi),
        Scale::Log => log_ticks(lo, hi),
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

/// About five ticks at a "nice" step, the range rounded out to whole steps.
fn linear_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
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

/// Ticks at powers of ten, with 2 and 5 (or 3) in between when the data
/// spans few decades, so a short range still gets several labels.
fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
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

/// The step among 1, 2, 5 and 10 times a power of ten at or above `raw`.
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

/// The smallest and largest value; (1, 10) when there is none, so an empty
/// chart still gets an axis.
pub(super) fn min_max(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (1.0, 10.0);
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// The plot area's edges in pixels: left, top, right, bottom.
pub(super) type Frame = (f64, f64, f64, f64);

/// Both axes of a line chart, with grid lines at every tick.
#[allow(clippy::too_many_arguments)]
pub(super) fn axes(
    out: &mut String,
    mx: &Mapping,
    my: &Mapping,
    xt: &[f64],
    yt: &[f64],
    xs: &AxisSpec,
    ys: &AxisSpec,
    frame: Frame,
) {
    let (l, _, r, _) = frame;
    x_axis(out, mx, xt, xs, frame, (l + r) / 2.0);
    y_axis(out, my, yt, ys, frame);
}

/// The horizontal axis along the frame's bottom: vertical grid lines with
/// tick labels, the axis line, and the axis title centered at `label_x`
/// (passed in because callers compute it in their own order of operations).
pub(super) fn x_axis(
    out: &mut String,
    mx: &Mapping,
    xt: &[f64],
    xs: &AxisSpec,
    (l, t, r, b): Frame,
    label_x: f64,
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
        cx = label_x,
        ly = b + 36.0,
    );
}

/// The vertical axis along the frame's left edge: horizontal grid lines with
/// tick labels, the axis line, and the rotated axis title.
fn y_axis(out: &mut String, my: &Mapping, yt: &[f64], ys: &AxisSpec, (l, t, r, b): Frame) {
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
}
