//! SVG text helpers shared by every chart: escaping, the document header,
//! the legend, coordinates, and the colors (palette and diverging scale).

use std::fmt::Write as _;

/// Okabe-Ito: distinguishable with the common kinds of color blindness.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
];

/// Width of line and bar charts in pixels (matrices may be narrower).
pub(super) const WIDTH: f64 = 720.0;
/// Fonts resvg and browsers both have, so the PNG matches the HTML.
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

/// `s` safe inside SVG or HTML text and attribute values.
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

/// A pixel coordinate with one decimal: precise enough, and keeps the SVG
/// (and the tests' expectations) short and stable.
pub(super) fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

/// The `<svg>` start tag sized `width` x `height` pixels, a white
/// background and the centered title.
pub(super) fn svg_open(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="{FONT}" font-size="12" role="img"><title>{t}</title><rect class="background" x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/><text class="chart-title" x="{cx}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>"##,
        t = escape(title),
        cx = width / 2.0,
    );
}

/// A legend entry: name, index into PALETTE, dashed.
pub(super) type LegendItem = (String, usize, bool);

/// The legend from (`x`, `y`), left to right and wrapping at the chart's
/// width; returns the height used in pixels.
pub(super) fn legend(out: &mut String, items: &[LegendItem], x: f64, y: f64) -> f64 {
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

/// Green above `neutral`, red below, stronger with the log distance
/// (a factor of 4 is full strength).
pub(super) fn diverging(v: f64, neutral: f64) -> String {
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

/// The color `t` (0..1) of the way from `a` to `b`, capped at 85% so the
/// strongest cells stay light enough for black text.
fn mix(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> (u8, u8, u8) {
    let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t * 0.85).round() as u8;
    (f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
}

/// The terminal's noisy mark `~` at (x, y), with a tooltip saying what it
/// means: the figure's interval is wider than +/-25% of it.
pub fn noisy_mark(out: &mut String, x: f64, y: f64) {
    let _ = write!(
        out,
        r##"<text class="noisy" x="{x}" y="{y}" font-size="12" fill="#a40000"><title>noisy: the interval is wider than +/-25% of the figure</title>~</text>"##,
        x = fmt(x),
        y = fmt(y),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_colors_are_green_above_and_red_below() {
        assert_eq!(diverging(1.0, 1.0), "#ffffff");
        let up = diverging(4.0, 1.0);
        let down = diverging(0.25, 1.0);
        assert!(up[3..5] > up[1..3], "green dominates: {up}");
        assert!(down[1..3] > down[3..5], "red dominates: {down}");
    }
}
