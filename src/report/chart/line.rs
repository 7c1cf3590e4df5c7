//! Line charts: one polyline per series over two axes (linear, log, powers
//! of two or percentile "nines"), with whiskers for spread and a legend.

use std::fmt::Write as _;

use super::axis::{Mapping, axes, min_max, ticks};
use super::svg::{LegendItem, PALETTE, WIDTH, escape, fmt, legend, noisy_mark, svg_open};
use super::{AxisSpec, Point, Scale, Series};

/// Lines over two axes, e.g. time vs blob size or latency by percentile.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// Drawn at the top and as the SVG `<title>`.
    pub title: String,
    /// The horizontal axis.
    pub x: AxisSpec,
    /// The vertical axis.
    pub y: AxisSpec,
    /// The lines, drawn in order (later ones on top) and listed in the legend.
    pub series: Vec<Series>,
}

/// A point placed on the canvas: x, y, the whisker's ends and whether it
/// is marked noisy.
type Placed = (f64, f64, Option<(f64, f64)>, bool);

/// An axis range in data units and the tick values inside it.
type Ticks = (f64, f64, Vec<f64>);

// The plot area in pixels: margins (room for tick labels on the left, the
// title on top) and its height.
const LEFT: f64 = 78.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 34.0;
const PLOT_H: f64 = 300.0;

/// Whether `v` can be drawn on `scale`: finite, and positive on a log axis.
fn plottable(v: f64, scale: Scale) -> bool {
    v.is_finite() && (!matches!(scale, Scale::Log | Scale::Log2) || v > 0.0)
}

impl LineChart {
    /// The chart as a standalone `<svg>` element, 720 pixels wide and as
    /// tall as the legend needs.
    pub fn to_svg(&self) -> String {
        let ((x0, x1, xt), (y0, y1, yt)) = self.ranges();
        let legend_items: Vec<LegendItem> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.color, s.dashed))
            .collect();
        let mut body = String::new();
        let legend_h = legend(&mut body, &legend_items, LEFT, TOP + PLOT_H + 58.0);
        let height = TOP + PLOT_H + 52.0 + legend_h + 8.0;
        let mx = Mapping::new(self.x.scale, x0, x1, LEFT, WIDTH - RIGHT);
        let my = Mapping::new(self.y.scale, y0, y1, TOP + PLOT_H, TOP);

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
            (LEFT, TOP, WIDTH - RIGHT, TOP + PLOT_H),
        );
        for s in &self.series {
            self.draw_series(&mut out, s, &mx, &my);
        }
        out.push_str(&body);
        out.push_str("</svg>");
        out
    }

    /// The x and y axis ranges and ticks covering every drawable point and
    /// whisker; a linear y axis always includes zero.
    fn ranges(&self) -> (Ticks, Ticks) {
        let all: Vec<&Point> = self.series.iter().flat_map(|s| &s.points).collect();
        let xs: Vec<f64> = all
            .iter()
            .map(|p| p.x)
            .filter(|&v| plottable(v, self.x.scale))
            .collect();
        let ys: Vec<f64> = all
            .iter()
            .flat_map(|p| {
                let (lo, hi) = p.spread.unwrap_or((p.y, p.y));
                [p.y, lo, hi]
            })
            .filter(|&v| plottable(v, self.y.scale))
            .collect();
        let (xmin, xmax) = min_max(&xs);
        let (ymin, ymax) = min_max(&ys);
        let ymin = if self.y.scale == Scale::Linear {
            ymin.min(0.0)
        } else {
            ymin
        };
        (
            ticks(self.x.scale, xmin, xmax),
            ticks(self.y.scale, ymin, ymax),
        )
    }

    /// One series: its polyline, then a whisker and a dot per point.
    fn draw_series(&self, out: &mut String, s: &Series, mx: &Mapping, my: &Mapping) {
        let color = PALETTE[s.color % PALETTE.len()];
        let pts: Vec<Placed> = s
            .points
            .iter()
            .filter(|p| plottable(p.x, self.x.scale) && plottable(p.y, self.y.scale))
            .map(|p| {
                (
                    mx.at(p.x),
                    my.at(p.y),
                    p.spread.map(|(lo, hi)| (my.at(lo), my.at(hi))),
                    p.noisy,
                )
            })
            .collect();
        let _ = write!(out, r#"<g class="series" data-name="{}">"#, escape(&s.name));
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y, ..)| format!("{},{}", fmt(*x), fmt(*y)))
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
        for (x, y, spread, noisy) in &pts {
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
            if *noisy {
                noisy_mark(out, *x + 5.0, *y - 4.0);
            }
        }
        out.push_str("</g>");
    }
}
