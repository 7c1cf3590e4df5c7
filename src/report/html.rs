//! One self-contained HTML file: inline CSS and SVG, no scripts, no network.
//! Readable on a phone (charts scale to the width, wide tables scroll) and on
//! a wide screen.

use std::fmt::Write as _;

use super::chart::escape;
use super::view::{DataTable, Section};

/// Marks the files blobbench wrote, so a later report may replace them and
/// nothing else.
pub const GENERATOR: &str = r#"<meta name="generator" content="blobbench report">"#;

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d1d1f; background: #f6f7f9; }
header { background: #14213d; color: #fff; padding: 18px 20px; }
header h1 { margin: 0; font-size: 1.4em; }
header p { margin: 4px 0 0; opacity: .85; }
nav { padding: 8px 20px; background: #e9edf3; }
nav a { margin-right: 14px; color: #14213d; }
main { max-width: 1120px; margin: 0 auto; padding: 12px; }
section.result { background: #fff; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.08); margin: 16px 0; padding: 16px; }
section.result h2 { margin-top: 0; font-size: 1.25em; }
pre.command { background: #f0f2f5; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; border-radius: 4px; }
ul.summary { padding-left: 20px; }
ul.summary li { margin: 2px 0; }
figure { margin: 16px 0; }
figure svg { width: 100%; height: auto; max-width: 860px; display: block; }
figcaption { color: #555; font-size: .9em; max-width: 860px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: .88em; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e3e3e3; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td.t { text-align: left; }
td.w { white-space: normal; min-width: 14em; max-width: 32em; }
th { background: #f0f2f5; }
h3 { font-size: 1.05em; margin: 18px 0 4px; }
details > summary { cursor: pointer; font-weight: 600; margin: 14px 0 4px; }
details.environment dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
details.environment dt { font-weight: 600; }
details.environment dd { margin: 0; word-break: break-word; }
.options { font-family: monospace; font-size: .85em; color: #444; }
@media (max-width: 600px) {
  body { font-size: 14px; }
  main { padding: 4px; }
  section.result { padding: 10px; border-radius: 0; }
  details.environment dl { grid-template-columns: 1fr; }
  /* Charts shrink to the screen whole (pinch to zoom): a cut chart hides its axis. */
  figure { margin: 10px 0; }
}
"#;

/// The whole HTML page for `sections`: a title, links to each result when
/// there are several, then one `<section>` per result with its summary,
/// charts (inline SVG), tables and environment.
pub fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(GENERATOR);
    out.push('\n');
    let title = match sections {
        [one] => format!("blobbench: {}", one.title),
        _ => format!("blobbench: {} results", sections.len()),
    };
    let _ = writeln!(out, "<title>{}</title>", escape(&title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        out,
        "<header><h1>{}</h1><p>Where should the blobs live? Measured on real hardware; every figure below \
         comes from the result files named in each section and can be rerun with the command shown.</p></header>",
        escape(&title)
    );
    if sections.len() > 1 {
        out.push_str("<nav>");
        for s in sections {
            // Two results of one command are told apart by their files.
            let twin = sections.iter().any(|o| o.id != s.id && o.title == s.title);
            let label = if twin {
                format!("{} ({})", s.title, s.source)
            } else {
                s.title.clone()
            };
            let _ = write!(out, "<a href=\"#{}\">{}</a>", escape(&s.id), escape(&label));
        }
        out.push_str("</nav>\n");
    }
    out.push_str("<main>\n");
    for s in sections {
        section(&mut out, s);
    }
    let _ = writeln!(
        out,
        "</main>\n<footer style=\"text-align:center;color:#777;padding:12px\">made by blobbench {}</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn section(out: &mut String, s: &Section) {
    let _ = writeln!(
        out,
        "<section class=\"result\" id=\"{}\">\n<h2>{}</h2>",
        escape(&s.id),
        escape(&s.title)
    );
    let _ = writeln!(
        out,
        "<p>From <code>{}</code>, started {}. Rerun with:</p>\n<pre class=\"command\">{}</pre>",
        escape(&s.source),
        escape(&s.started_at),
        escape(&s.command_line)
    );
    if !s.summary.is_empty() {
        out.push_str("<ul class=\"summary\">");
        for l in &s.summary {
            let _ = write!(out, "<li>{}</li>", escape(l));
        }
        out.push_str("</ul>\n");
    }
    for f in &s.figures {
        let _ = writeln!(
            out,
            "<figure id=\"{}-{}\">{}<figcaption>{}</figcaption></figure>",
            escape(&s.id),
            escape(&f.name),
            f.chart.to_svg(),
            escape(&f.caption)
        );
    }
    for t in &s.tables {
        table(out, t);
    }
    out.push_str("<details class=\"environment\"><summary>Environment: machine, filesystem, versions, settings</summary><dl>");
    for (k, v) in &s.environment {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    }
    out.push_str("</dl>");
    if !s.compile_options.is_empty() {
        let _ = write!(
            out,
            "<p>SQLite compile options:</p><p class=\"options\">{}</p>",
            escape(&s.compile_options.join(" "))
        );
    }
    out.push_str("</details>\n</section>\n");
}

fn table(out: &mut String, t: &DataTable) {
    // Long tables (every run of every round) start folded.
    let folded = t.rows.len() > 15;
    if folded {
        let _ = write!(
            out,
            "<details><summary>{} ({} rows)</summary>",
            escape(&t.title),
            t.rows.len()
        );
    } else {
        let _ = write!(out, "<h3>{}</h3>", escape(&t.title));
    }
    out.push_str("<div class=\"scroll\"><table><thead><tr>");
    for h in &t.headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            // Numbers right-aligned so their digits line up; words left.
            let numeric = c
                .chars()
                .next()
                .is_some_and(|ch| ch.is_ascii_digit() || "+-.".contains(ch));
            // Sentences (a claim's words) wrap instead of widening the table.
            let class = match (numeric, c.len() > 60) {
                (_, true) => " class=\"t w\"",
                (false, false) => " class=\"t\"",
                (true, false) => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out.push_str(if folded { "</details>\n" } else { "\n" });
}
