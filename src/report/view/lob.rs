//! How a `suite lob` result is drawn: write and read time vs blob size
//! (median), time to read 1 GB (from the mean, as the paper's Figure 22),
//! what each system ran with, and where time starts to grow with size.

use super::{DataTable, Figure, Section, estimate_point, interval_caption_over, ns};
use crate::measure::estimate::{Estimate, median_estimate};
use crate::measure::stats::{Summary, summarize};
use crate::report::chart::{AxisSpec, Chart, LineChart, Point, Scale, Series, Unit};
use crate::result::lob::{LobTables, OrderCall, PAPER_STATED, PaperHere, PaperWhat, Samples};

/// The summary of one phase's samples, None when there are none.
fn summary(v: &[u64]) -> Option<Summary> {
    let v: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    (!v.is_empty()).then(|| summarize(&v))
}

/// The write or read samples of one entry.
fn phase(x: &Samples, write: bool) -> &[u64] {
    if write { &x.write_ns } else { &x.read_ns }
}

pub(in crate::report) fn lob(tables: &LobTables, s: &mut Section) {
    // With --order both, the figures are of the first order; the other is
    // compared in its own table.
    let samples: Vec<Samples> = tables.primary().cloned().collect();
    let samples = &samples;
    let mut systems: Vec<String> = Vec::new();
    for x in samples {
        if !systems.contains(&x.system) {
            systems.push(x.system.clone());
        }
    }
    // Each point: the median over the blobs of its size, with the
    // sign-test interval of that median (as rounds' medians have theirs).
    let series_of = |write: bool, drawn: &mut Vec<Estimate>| -> Vec<Series> {
        systems
            .iter()
            .enumerate()
            .map(|(i, sys)| Series {
                name: sys.clone(),
                dashed: false,
                color: i,
                points: samples
                    .iter()
                    .filter(|x| x.system == *sys && !phase(x, write).is_empty())
                    .map(|x| {
                        let times: Vec<f64> = phase(x, write).iter().map(|&t| t as f64).collect();
                        let e = median_estimate(&times);
                        drawn.push(e);
                        estimate_point(x.size as f64, &e)
                    })
                    .collect(),
            })
            .collect()
    };
    for (write, what) in [(true, "write"), (false, "read")] {
        let mut drawn = Vec::new();
        let series = series_of(write, &mut drawn);
        s.figures.push(Figure {
            name: what.into(),
            caption: format!(
                "Time to {what} one blob vs blob size, log-log. {}",
                interval_caption_over(&drawn, "blobs of each size")
            ),
            chart: Chart::Line(LineChart {
                title: format!("{what} time per blob vs blob size"),
                x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
                y: AxisSpec::new(format!("time per {what}"), Scale::Log, Unit::Nanos),
                series,
            }),
        });
    }
    let per_gb: Vec<Series> = systems
        .iter()
        .enumerate()
        .map(|(i, sys)| Series {
            name: sys.clone(),
            dashed: false,
            color: i,
            points: tables
                .read_1gb_seconds
                .iter()
                .filter(|x| x.system == *sys)
                .map(|x| Point::new(x.size as f64, x.seconds))
                .collect(),
        })
        .collect();
    s.figures.push(Figure {
        name: "read-1gb".into(),
        caption: "Time to read 1 GB of content stored as blobs of each size (MEAN read time x blobs per GB: \
                  the paper averaged its blobs, spikes included), as in the 2008 comparative LOB benchmark. \
                  A mean of one run's blobs: no whiskers; the read chart above has the medians' intervals."
            .into(),
        chart: Chart::Line(LineChart {
            title: "time to read 1 GB vs blob size".into(),
            x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
            y: AxisSpec::new("seconds per GB", Scale::Log, Unit::Seconds),
            series: per_gb,
        }),
    });
    s.tables.push(samples_table(samples, tables));
    if !tables.failed.is_empty() {
        s.tables.push(failed_table(tables));
    }
    s.tables.push(paper_table(tables));
    if !tables.order_effect.is_empty() {
        s.tables.push(order_table(tables));
    }
    notes(tables, s);
}

/// The sizes the paper's text states beside this run's: where time grows
/// with size, each system's best size, where files overtake a database.
fn paper_table(tables: &LobTables) -> DataTable {
    let mut t = DataTable::new(
        "lob-paper",
        "The paper's stated sizes (document 002, TR 14, 2008: its figures are plots, these are \
         the sizes its text gives) beside this run's",
        &[
            "what",
            "the paper's",
            "the paper",
            "its words (where)",
            "here",
        ],
    );
    let size = |b: u64| crate::report::chart::size_label(b as f64);
    for p in PAPER_STATED {
        let what = match p.what {
            PaperWhat::Growth => "time grows with size from",
            PaperWhat::BestSize => "best size (time to read 1 GB)",
            PaperWhat::DbVsFiles => "files overtake a database",
        };
        let here = match p.here {
            PaperHere::None(why) => format!("not measured ({why})"),
            _ => {
                let found = tables.beside_paper(p, &size);
                if found.is_empty() {
                    "not measured in this run".into()
                } else {
                    found.join("; ")
                }
            }
        };
        t.rows.push(vec![
            what.into(),
            match p.phase {
                Some(ph) => format!("{} {ph}", p.paper),
                None => p.paper.into(),
            },
            p.figure.into(),
            format!("\"{}\" ({})", p.words, p.place),
            here,
        ]);
    }
    t
}

/// Random against sequential per system, size and phase, with the call.
fn order_table(tables: &LobTables) -> DataTable {
    let mut t = DataTable::new(
        "lob-order",
        "Random / sequential order: time per blob (median each, 95% bootstrap interval; \
         a difference counts when a rank test over every case, Holm-corrected, rejects and the \
         whole interval lies beyond 10%)",
        &[
            "system",
            "size",
            "phase",
            "sequential median",
            "random median",
            "random/sequential",
            "p (Holm)",
            "verdict",
        ],
    );
    for e in &tables.order_effect {
        t.rows.push(vec![
            e.system.clone(),
            e.size.to_string(),
            e.phase.clone(),
            ns(e.sequential_median_ns),
            ns(e.random_median_ns),
            e.format_ratio(),
            e.p_adjusted.map(|p| format!("{p:.3}")).unwrap_or_default(),
            match e.call {
                OrderCall::WithinNoise => "within noise",
                OrderCall::RandomSlower => "random slower",
                OrderCall::RandomFaster => "random faster",
                OrderCall::Insufficient => "too few blobs to test",
            }
            .into(),
        ]);
    }
    t
}

/// The summary lines: best sizes, where time grows with size, what each
/// system ran with (--logging, --cold), and what was skipped.
fn notes(tables: &LobTables, s: &mut Section) {
    for b in &tables.best_size {
        s.summary.push(format!(
            "best blob size for {}: {} ({:.2} s per GB read)",
            b.system,
            crate::report::chart::size_label(b.size as f64),
            b.seconds_per_gb
        ));
    }
    for g in tables.growth.iter().filter(|g| g.phase == "read") {
        s.summary.push(match g.size {
            Some(size) => format!(
                "{}: read time per blob grows with size from {} (every larger size's median over {}x the median at {})",
                g.system,
                crate::report::chart::size_label(size as f64),
                g.factor,
                crate::report::chart::size_label(g.baseline_size as f64)
            ),
            None => format!(
                "{}: read time per blob stays within {}x of the median at {} up to the largest size",
                g.system,
                g.factor,
                crate::report::chart::size_label(g.baseline_size as f64)
            ),
        });
    }
    if !tables.logging.is_empty() {
        s.summary.push(format!(
            "--logging {}{}",
            tables.logging,
            if tables.logging == "off" {
                " (the paper's setup: logging disabled)"
            } else {
                " (durable)"
            }
        ));
    }
    for st in tables.stores.iter().filter(|s| !s.durability.is_empty()) {
        s.summary
            .push(format!("{} wrote with {}", st.system, st.durability));
    }
    if tables.cold {
        s.summary.push(
            "--cold: each size's reads started after a server restart and a page-cache drop (how, per size, in the result)"
                .into(),
        );
    }
    if tables.orders.len() == 1 {
        s.summary
            .push(format!("--order {}", tables.primary_order().name()));
    }
    if !tables.order_effect.is_empty() {
        s.summary.push(
            "--order both: every size written and read in sequential and in random order; the figures are sequential"
                .into(),
        );
        s.summary.extend(
            crate::report::terminal::lob::order_verdicts(tables)
                .into_iter()
                .map(|l| l.trim().to_string()),
        );
    }
    for k in &tables.skipped {
        s.summary
            .push(format!("skipped {}: {}", k.system, k.reason));
    }
    for f in &tables.failed {
        s.summary.push(crate::report::terminal::lob::failed_line(f));
    }
}

/// Every system that failed: where, in which phase, how, and the sizes
/// left unmeasured (its figures before are in the other tables).
fn failed_table(tables: &LobTables) -> DataTable {
    let mut t = DataTable::new(
        "lob-failed",
        "Systems that failed while measured (every other system's figures are kept)",
        &[
            "system",
            "size",
            "phase",
            "class",
            "message",
            "not measured at",
        ],
    );
    for f in &tables.failed {
        t.rows.push(vec![
            f.system.clone(),
            f.size.to_string(),
            f.phase.clone(),
            f.class.label(),
            f.message.clone(),
            f.not_measured
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    t
}

/// Median, mean and max of every system and size, as a table.
fn samples_table(samples: &[Samples], tables: &LobTables) -> DataTable {
    let mut t = DataTable::new(
        "lob",
        "Write and read time per blob",
        &[
            "system",
            "size",
            "write median",
            "write mean",
            "write max",
            "read median",
            "read mean",
            "read max",
        ],
    );
    for x in samples {
        let (w, r) = (summary(&x.write_ns), summary(&x.read_ns));
        t.rows.push(vec![
            x.system.clone(),
            (x.size as f64).to_string(),
            w.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            w.as_ref().map(|s| ns(s.mean)).unwrap_or_default(),
            w.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.median)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.mean)).unwrap_or_default(),
            r.as_ref().map(|s| ns(s.max)).unwrap_or_default(),
        ]);
    }
    // A failed system's row at the size it failed at says why, in its cells.
    for f in &tables.failed {
        let mut row = vec![f.system.clone(), (f.size as f64).to_string()];
        row.extend(std::iter::repeat_n(format!("failed: {}", f.reason()), 6));
        t.rows.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use crate::result::ResultDocument;

    #[test]
    fn the_report_sets_the_papers_sizes_beside_the_measured_ones() {
        let text = include_str!("../../../tests/fixtures/results/lob.json");
        let doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let section = crate::report::sections::section(&doc, "lob.json", 0);
        let t = section
            .tables
            .iter()
            .find(|t| t.name == "lob-paper")
            .expect("the paper's table");
        let row = |paper: &str, figure: &str| {
            t.rows
                .iter()
                .find(|r| r[1] == paper && r[2] == figure)
                .unwrap_or_else(|| panic!("{paper} {figure}: {:?}", t.rows))
        };
        assert_eq!(
            row("PostgreSQL write", "about 50K")[4],
            "postgres lo from 100k; postgres bytea from 10k"
        );
        assert!(
            row("MySQL", "about 100K to 1M")[4].starts_with("mariadb innodb 100k (3.52 s per GB")
        );
        assert!(
            row("PostgreSQL and SystemB", "between 1M and 10M")[3].contains("section 6, Figure 22")
        );
        let html = crate::report::html::render(&[section]);
        assert!(html.contains("about 50-100K"));
        assert!(html.contains("postgres lo from 100k; postgres bytea from 10k"));
    }
}
