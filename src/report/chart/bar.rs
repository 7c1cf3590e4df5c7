//! Horizontal bar charts: one group of bars per label (one bar per series),
//! with optional whiskers, a per-group marker (e.g. a published claim) and a
//! vertical reference line (e.g. 1.0 for ratios).

use std::fmt::Write as _;

use super::axis::{Mapping, min_max, ticks, x_axis};
use super::svg::{LegendItem, PALETTE, WIDTH, escape, fmt, legend, noisy_mark, svg_open};
use super::{AxisSpec, Scale};

/// One bar's value in the value axis' unit.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Where the bar ends (it starts at the reference on a log axis, else at
    /// the axis start).
    pub value: f64,
    /// Spread of the value (e.g. min and max over rounds), drawn as a whisker.
    pub spread: Option<(f64, f64)>,
    /// The figure is noisy (its interval wider than +/-25%): drawn with a
    /// `~` after its whisker, as the terminal marks it.
    pub noisy: bool,
}

/// The bars sharing one label, e.g. one blob size with a bar per system.
#[derive(Debug, Clone)]
pub struct BarGroup {
    /// Drawn left of the bars; cut at 48 characters (the full text stays in
    /// a tooltip).
    pub label: String,
    /// One bar per series (None: not measured).
    pub bars: Vec<Option<Bar>>,
    /// A marker drawn across the group, e.g. the published claim.
    pub marker: Option<f64>,
}

/// Horizontal bars grouped by label, with the value axis at the bottom.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// Drawn at the top and as the SVG `<title>`.
    pub title: String,
    /// The horizontal axis the bars are measured on (linear or log).
    pub value_axis: AxisSpec,
    /// Legend names; bar `i` of every group belongs to series `i` and gets
    /// color `i` of the palette.
    pub series_names: Vec<String>,
    /// The groups from top to bottom.
    pub groups: Vec<BarGroup>,
    /// A vertical line, e.g. 1.0 for ratios.
    pub reference: Option<f64>,
    /// Legend text for the groups' markers (e.g. "published"); None: no
    /// legend entry for them.
    pub marker_label: Option<String>,
}

/// Where things go, in pixels.
struct Layout {
    /// Left margin: room for the longest group label.
    left: f64,
    right: f64,
    top: f64,
    /// Height of one bar including its gap.
    bar_h: f64,
    /// Height of one group of bars including its gap.
    group_h: f64,
    /// Height of all groups together.
    plot_h: f64,
}

/// What every bar of one chart is drawn with.
struct Plot {
    lay: Layout,
    /// Value axis to pixels.
    mx: Mapping,
    /// Where bars start (data units).
    base: f64,
    /// Log value axis: values at or below zero are not drawn.
    log: bool,
}

impl BarChart {
    /// The chart as a standalone `<svg>` element, 720 pixels wide and as
    /// tall as its groups and legend need.
    pub fn to_svg(&self) -> String {
        let lay = self.layout();
        let log = self.value_axis.scale == Scale::Log;
        let (v0, v1, vt) = self.value_ticks(log);
        let mx = Mapping::new(self.value_axis.scale, v0, v1, lay.left, WIDTH - lay.right);
        // Bars grow from the reference (1.0 for ratios) or from the axis start.
        let base = self.reference.filter(|_| log).unwrap_or(v0);

        let mut body = String::new();
        let legend_h = self.legend(&mut body, &lay);
        let height = lay.top + lay.plot_h + 52.0 + legend_h + 8.0;

        let mut out = String::new();
        svg_open(&mut out, WIDTH, height, &self.title);
        let (left, top, right) = (lay.left, lay.top, lay.right);
        let b = top + lay.plot_h;
        x_axis(
            &mut out,
            &mx,
            &vt,
            &self.value_axis,
            (left, top, WIDTH - right, b),
            (left + WIDTH - right) / 2.0,
        );
        let plot = Plot { lay, mx, base, log };
        for (gi, g) in self.groups.iter().enumerate() {
            self.draw_group(&mut out, &plot, gi, g);
        }
        if let Some(r) = self.reference {
            let x = plot.mx.at(r);
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

    /// The left margin fits the longest label (up to 48 characters); the
    /// height grows with the number of groups and series.
    fn layout(&self) -> Layout {
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
        let bar_h = 12.0;
        let group_h = bar_h * n_series as f64 + 10.0;
        Layout {
            left: label_w.max(60.0),
            right: 40.0,
            top: 34.0,
            bar_h,
            group_h,
            plot_h: group_h * self.groups.len().max(1) as f64,
        }
    }

    /// The value axis' range and ticks, covering every bar, whisker, marker
    /// and the reference; a linear axis always includes zero.
    fn value_ticks(&self, log: bool) -> (f64, f64, Vec<f64>) {
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
        values.retain(|v| v.is_finite() && (!log || *v > 0.0));
        let (lo, hi) = min_max(&values);
        let lo = if log { lo } else { lo.min(0.0) };
        ticks(self.value_axis.scale, lo, hi)
    }

    /// The legend below the axis, only when there is more than one series or
    /// a marker to explain; returns its height in pixels (0 without one).
    fn legend(&self, body: &mut String, lay: &Layout) -> f64 {
        let mut legend_items: Vec<LegendItem> = self
            .series_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i, false))
            .collect();
        if let Some(m) = &self.marker_label {
            legend_items.push((m.clone(), 6, true));
        }
        if legend_items.len() > 1 || self.marker_label.is_some() {
            legend(body, &legend_items, lay.left, lay.top + lay.plot_h + 58.0)
        } else {
            0.0
        }
    }

    /// Group `gi`: its label, its bars and its marker.
    fn draw_group(&self, out: &mut String, plot: &Plot, gi: usize, g: &BarGroup) {
        let lay = &plot.lay;
        let gy = lay.top + gi as f64 * lay.group_h + 5.0;
        let label: String = if g.label.chars().count() > 48 {
            g.label.chars().take(47).chain(['…']).collect()
        } else {
            g.label.clone()
        };
        let _ = write!(
            out,
            r#"<text class="group-label" x="{x}" y="{y}" text-anchor="end"><title>{full}</title>{l}</text>"#,
            x = lay.left - 6.0,
            y = fmt(gy + lay.group_h / 2.0),
            full = escape(&g.label),
            l = escape(&label),
        );
        for (si, bar) in g.bars.iter().enumerate() {
            let Some(bar) = bar else { continue };
            if !bar.value.is_finite() || (plot.log && bar.value <= 0.0) {
                continue;
            }
            self.draw_bar(out, plot, si, bar, gy + si as f64 * lay.bar_h);
        }
        if let Some(m) = g
            .marker
            .filter(|m| m.is_finite() && (!plot.log || *m > 0.0))
        {
            let x = plot.mx.at(m);
            let _ = write!(
                out,
                r##"<line class="marker" x1="{x}" y1="{y0}" x2="{x}" y2="{y1}" stroke="#000" stroke-width="2" stroke-dasharray="3 2"/>"##,
                x = fmt(x),
                y0 = fmt(gy - 2.0),
                y1 = fmt(gy + lay.group_h - 8.0),
            );
        }
    }

    /// Bar `si` of a group at pixel row `y`, with its whisker; the bar is at
    /// least one pixel wide so a value at the base still shows.
    fn draw_bar(&self, out: &mut String, plot: &Plot, si: usize, bar: &Bar, y: f64) {
        let (mx, bar_h) = (&plot.mx, plot.lay.bar_h);
        let (xa, xb) = (mx.at(plot.base), mx.at(bar.value));
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
        if bar.noisy {
            // After the whisker's far end, so the mark never hides it.
            let end = bar.spread.map_or(bar.value, |(_, hi)| hi.max(bar.value));
            noisy_mark(out, mx.at(end) + 3.0, y + bar_h - 3.0);
        }
    }
}
