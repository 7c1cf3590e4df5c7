//! How a `suite fasterthanfs` result is drawn: each chart's ratio beside the page's claim.

use super::quick::{ratio_estimate, time_us};
use super::{DataTable, Figure, Section, finite, ratio_text};
use crate::measure::estimate::{Estimate, notes};
use crate::report::chart::{AxisSpec, Bar, BarChart, BarGroup, Chart, Scale, Unit};
use crate::result::ResultDocument;
use crate::result::fasterthanfs::{Claim, FasterThanFsRow, FasterThanFsTables, Ratio};

pub(in crate::report) fn fasterthanfs(
    tables: &FasterThanFsTables,
    _doc: &ResultDocument,
    s: &mut Section,
) {
    let rows = &tables.fasterthanfs;
    // Whiskers: the interval over this run's rounds where the result has
    // one; too few rounds draw the bare median (the caption says so).
    let ratio_bar = |r: &Ratio| {
        let e = r.ratio(tables.rounds);
        finite(r.median).map(|value| match super::estimate_bar(&e) {
            Some(bar) => Bar { value, ..bar },
            None => Bar {
                value,
                spread: None,
                noisy: false,
            },
        })
    };
    let groups: Vec<BarGroup> = rows
        .iter()
        .filter_map(|r| match r {
            FasterThanFsRow::Timed(r) => Some(r),
            FasterThanFsRow::Space(_) => None,
        })
        .map(|r| BarGroup {
            label: r.case.trim().to_string(),
            bars: vec![ratio_bar(&r.dir_over_db), ratio_bar(&r.tree_over_db)],
            marker: match r.claim {
                Claim::AtLeast { ratio, .. } => Some(ratio),
                _ => None,
            },
        })
        .collect();
    let drawn: Vec<Estimate> = rows
        .iter()
        .filter_map(|r| match r {
            FasterThanFsRow::Timed(r) => Some(r),
            FasterThanFsRow::Space(_) => None,
        })
        .flat_map(|r| {
            [
                r.dir_over_db.ratio(tables.rounds),
                r.tree_over_db.ratio(tables.rounds),
            ]
        })
        .collect();
    s.figures.push(Figure {
        name: "ratios".into(),
        caption: format!(
            "File time / database time per case. {} The dashed mark is the ratio the fasterthanfs \
             page claims. Right of 1x the database is faster.",
            super::interval_caption(&drawn)
        ),
        chart: Chart::Bars(BarChart {
            title: "35% faster than the filesystem? file time / database time".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: vec!["flat folder".into(), "tree".into()],
            groups,
            reference: Some(1.0),
            marker_label: Some("the page's claim".into()),
        }),
    });
    let mut t = DataTable::new(
        "fasterthanfs",
        "Claims and measurements",
        &["case", "claim", "db µs/op", "dir/db", "tree/db", "verdict"],
    );
    let rounds = tables.rounds;
    for r in rows {
        let (db_per_op, dir, tree) = match r {
            FasterThanFsRow::Timed(r) => (
                time_us(&r.dir_over_db.denominator(rounds)),
                ratio_estimate(&r.dir_over_db.ratio(rounds)),
                ratio_estimate(&r.tree_over_db.ratio(rounds)),
            ),
            FasterThanFsRow::Space(r) => (
                String::new(),
                ratio_text(finite(r.dir_over_db)),
                ratio_text(finite(r.tree_over_db)),
            ),
        };
        t.rows.push(vec![
            r.case().trim().into(),
            r.claim().short(),
            db_per_op,
            dir,
            tree,
            r.verdict().as_str().into(),
        ]);
    }
    s.tables.push(t);
    if !tables.read_write.is_empty() {
        let (low, high) = crate::result::fasterthanfs::WRITE_OVER_READ_CLAIM;
        let mut rw = DataTable::new(
            "fasterthanfs-read-write",
            format!(
                "Reads vs writes: the page says writes are between {low} and {high} times slower than reads"
            ),
            &[
                "storage",
                "write / read time per blob",
                "write case",
                "read case",
                "verdict",
            ],
        );
        for r in &tables.read_write {
            rw.rows.push(vec![
                r.storage.clone(),
                ratio_estimate(&r.write_over_read.ratio(rounds)),
                r.write_case.clone(),
                r.read_case.clone(),
                r.verdict.as_str().into(),
            ]);
        }
        s.tables.push(rw);
    }
    if tables.cold {
        s.summary.push(format!(
            "--cold: the \"cold:\" rows repeat the reads with the page cache dropped before each timed pass ({})",
            tables.cold_method.as_deref().unwrap_or("method not recorded")
        ));
    }
    let all = tables.estimates();
    s.summary.extend(notes(all.iter()));
    s.summary.push(super::quick::dataset_line(&tables.dataset));
}

/// The page's read charts (1-3) and write charts (4-5): the bars of each
/// machine's group, by the row labels `suite fasterthanfs` writes.
const CHARTS: [(&str, &str); 5] = [
    ("chart 1: SQL", "chart 1: read, SQL statement"),
    ("chart 2: blob API", "chart 2: read, blob API"),
    ("chart 3: blob API + mmap", "chart 3: read, blob API + mmap"),
    (
        "chart 4: update WAL",
        "chart 4: update WAL+NORMAL vs fopen wb",
    ),
    (
        "chart 5: journal off",
        "chart 5: journal OFF, sync OFF vs fopen wb",
    ),
];

/// The only per-platform figures the page states in its text (its charts are
/// images): file time / database time, in CHARTS' order, with its words.
const PUBLISHED: [(&str, [Option<f64>; 5], &str); 4] = [
    (
        "Win10",
        [Some(5.0), None, None, None, None],
        "chart 1: 'on Windows10, content can be read from the SQLite database about 5 times faster'",
    ),
    (
        "Windows",
        [None, None, Some(10.0), None, None],
        "chart 3: 'over 10 times faster than Windows'",
    ),
    (
        "Mac",
        [None, None, Some(2.0), None, None],
        "chart 3: 'twice as fast as Android or MacOS-X'",
    ),
    (
        "Android",
        [Some(1.35), None, Some(2.0), None, None],
        "chart 1: 'On Android, SQLite is only about 35% faster'; chart 3: 'twice as fast as Android'",
    ),
];

/// With two or more `suite fasterthanfs` results: one section drawing them
/// side by side as the page does, a group of bars per machine (flat folder
/// time / database time per chart), and the page's published figures as
/// reference groups labelled as the page's.
pub fn machines(docs: &[(ResultDocument, String)]) -> Option<Section> {
    let runs: Vec<(&ResultDocument, &FasterThanFsTables, &str)> =
        super::side_by_side(docs, |t| match t {
            crate::result::Tables::FasterThanFs(t) => Some(t),
            _ => None,
        })?;
    let labels: Vec<String> = runs
        .iter()
        .map(|(doc, _, source)| machine_label(doc, source))
        .collect();
    let docs: Vec<(&ResultDocument, &str)> = runs.iter().map(|r| (r.0, r.2)).collect();
    let mut s = super::machines_section(
        "fasterthanfs-machines",
        "suite fasterthanfs: machines side by side, with the page's published figures",
        &docs,
        &labels,
    );
    let mut table = DataTable::new(
        "machines",
        "Flat folder time / database time per chart, per machine (median of this run's rounds [interval])",
        &[
            "machine",
            CHARTS[0].0,
            CHARTS[1].0,
            CHARTS[2].0,
            CHARTS[3].0,
            CHARTS[4].0,
        ],
    );
    let mut groups = Vec::new();
    let mut drawn = Vec::new();
    for (doc, t, source) in &runs {
        let label = machine_label(doc, source);
        let ratios: Vec<Option<&Ratio>> = CHARTS.iter().map(|c| chart_ratio(t, c.1)).collect();
        drawn.extend(ratios.iter().flatten().map(|r| r.ratio(t.rounds)));
        groups.push(BarGroup {
            label: label.clone(),
            bars: ratios
                .iter()
                .map(|r| r.and_then(|r| machine_bar(r, t.rounds)))
                .collect(),
            marker: None,
        });
        let mut row = vec![label];
        row.extend(ratios.iter().map(|r| {
            r.map_or("not measured".into(), |r| {
                ratio_estimate(&r.ratio(t.rounds))
            })
        }));
        table.rows.push(row);
    }
    for (platform, figures, words) in PUBLISHED {
        let label = format!("the page (published): {platform}");
        groups.push(BarGroup {
            label: label.clone(),
            bars: figures
                .iter()
                .map(|f| {
                    f.map(|value| Bar {
                        value,
                        spread: None,
                        noisy: false,
                    })
                })
                .collect(),
            marker: None,
        });
        let mut row = vec![label];
        row.extend(
            figures
                .iter()
                .map(|f| f.map_or("-".into(), |v| format!("about {v}x"))),
        );
        table.rows.push(row);
        s.summary.push(format!("the page, {platform}: {words}"));
    }
    s.summary.insert(
        0,
        format!(
            "{} machines' results beside the page's published figures: the page states these few in its text \
(its charts are images); '-' = the page gives no number.",
            runs.len()
        ),
    );
    s.figures.push(Figure {
        name: "machines".into(),
        caption: format!(
            "One group per machine, as the page's charts have one bar per platform: flat folder \
             time / database time for each of the page's charts. {} The last groups are the page's \
             own published figures (from its text, 2017), not measured here: no whiskers. Right of \
             1x the database is faster.",
            super::interval_caption(&drawn)
        ),
        chart: Chart::Bars(BarChart {
            title: "35% faster than the filesystem? per machine".into(),
            value_axis: AxisSpec::new(
                "file time / database time (log scale)",
                Scale::Log,
                Unit::Ratio,
            ),
            series_names: CHARTS.iter().map(|c| c.0.to_string()).collect(),
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    });
    s.tables.push(table);
    Some(s)
}

/// "host (cpu), file": two results of one host stay apart by their file.
fn machine_label(doc: &ResultDocument, source: &str) -> String {
    let e = &doc.environment;
    let file = std::path::Path::new(source)
        .file_name()
        .map_or(source.to_string(), |f| f.to_string_lossy().into_owned());
    format!("{} ({}), {file}", e.hostname, e.os)
}

/// The flat folder / database ratio of the row with this label.
fn chart_ratio<'a>(t: &'a FasterThanFsTables, case: &str) -> Option<&'a Ratio> {
    t.fasterthanfs.iter().find_map(|r| match r {
        FasterThanFsRow::Timed(r) if r.case == case => Some(&r.dir_over_db),
        _ => None,
    })
}

fn machine_bar(r: &Ratio, rounds: u64) -> Option<Bar> {
    super::estimate_bar(&r.ratio(rounds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_figures_are_the_pages_words() {
        // Each figure drawn as the page's must be quoted in its words.
        for (platform, figures, words) in PUBLISHED {
            for (i, f) in figures.iter().enumerate() {
                if f.is_some() {
                    let chart = format!("chart {}", i + 1);
                    assert!(words.contains(&chart), "{platform}: {chart} not quoted");
                }
            }
        }
    }

    #[test]
    fn one_result_draws_no_machine_section() {
        assert!(machines(&[]).is_none());
    }
}
