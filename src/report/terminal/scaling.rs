//! The terminal tables of `suite concurrency` (the scaling suite): per mix,
//! operations/s with its interval and p99 per layout against threads, then each
//! layout's speedup over one thread and what the busy column says about
//! writers.

use std::fmt::Write as _;

use super::sweep::time_text;
use crate::measure::estimate::NOISY_ADVICE;
use crate::report::table::Table;
use crate::result::scaling::ScalingTables;

/// The whole report, lines ending in "\n".
pub fn render(t: &ScalingTables) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "blobbench suite concurrency: {}", t.describe());
    for l in &t.layouts {
        let _ = writeln!(out, "{}: {}", l.name, l.writes);
    }
    let mut noisy = false;
    for mix in &t.mixes {
        let _ = writeln!(
            out,
            "\nmix {mix}: operations/s [interval over this run's rounds] and p99"
        );
        let mut headers = vec!["threads".to_string()];
        for l in &t.layouts {
            headers.push(format!("{} ops/s", l.name));
            headers.push(format!("{} p99", l.name));
        }
        let mut table = Table::new(headers);
        for &n in &t.threads {
            let mut row = vec![if n > t.cores {
                format!("{n} (> cores)")
            } else {
                n.to_string()
            }];
            for l in &t.layouts {
                match t.point(&l.name, mix, n) {
                    Some(p) => {
                        let rate = p.rate();
                        noisy |= rate.noisy();
                        let busy = p.busy();
                        row.push(if busy > 0 {
                            format!("{} ({busy} busy)", rate.format(0))
                        } else {
                            rate.format(0)
                        });
                        row.push(time_text(&p.p99()));
                    }
                    None => row.extend([failed_cell(t, &l.name), "-".to_string()]),
                }
            }
            table.row(row);
        }
        out.push_str(&table.render());
        speedups(t, mix, &mut out);
    }
    for f in &t.failed {
        let _ = writeln!(
            out,
            "FAILED {} ({}): {}; every other layout's figures are kept",
            f.system,
            f.during,
            f.reason()
        );
    }
    if noisy {
        let _ = writeln!(out, "{NOISY_ADVICE}");
    }
    for line in t
        .stopping
        .iter()
        .flat_map(|r| r.lines("--max-rounds, --max-time (per point)"))
    {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "\nbusy = writes that found another connection's lock past the busy timeout (rolled back, not failed); SQLite lets one writer in at a time, files and servers lock per row or file"
    );
    out
}

/// Each layout's throughput at the most threads the cores can run at once
/// over the fewest threads, paired round by round.
fn speedups(t: &ScalingTables, mix: &str, out: &mut String) {
    let Some(&first) = t.threads.first() else {
        return;
    };
    let Some(&n) = t.threads.iter().rfind(|&&n| n != first && n <= t.cores) else {
        return;
    };
    let parts: Vec<String> = t
        .layouts
        .iter()
        .filter_map(|l| {
            let base = t.point(&l.name, mix, first)?;
            let p = t.point(&l.name, mix, n)?;
            Some(format!(
                "{} {}",
                l.name,
                p.speedup_over(base).format_ratio()
            ))
        })
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(
            out,
            "{n} threads over {first}: {} (paired by round; the machine has {} core(s))",
            parts.join(", "),
            t.cores
        );
    }
}

/// A missing point's cell: "-", or for a layout that failed why, cut to a
/// table's width (the whole reason is printed below the tables).
fn failed_cell(t: &ScalingTables, layout: &str) -> String {
    let Some(f) = t.failure(layout) else {
        return "-".to_string();
    };
    let cell = f.cell();
    if cell.chars().count() > 40 {
        format!("{}...", cell.chars().take(37).collect::<String>())
    } else {
        cell
    }
}
