//! How an `advise` result is drawn: time per operation vs blob size for
//! each layout, the page sizes side by side, and the recommendation.

use super::{DataTable, Figure, Section, estimate_bar, estimate_point, interval_caption};
use crate::measure::estimate::median_estimate;
use crate::measure::stats::summarize;
use crate::report::chart::{
    AxisSpec, Bar, BarChart, BarGroup, Chart, LineChart, Scale, Series, Unit, size_label,
};
use crate::report::terminal::advise::band_cells;
use crate::result::advise::{
    Advice, AdviseTables, Band, Decision, LayoutKind, PointResult, Spread,
};
use crate::result::faults::SystemFailure;
use crate::units::human_duration_ns;

fn spread(v: &Spread) -> String {
    crate::report::terminal::advise::spread_text(v)
}

/// The summary lines, the layouts and page-size charts and the table of
/// every measurement.
pub(in crate::report) fn advise(tables: &AdviseTables, s: &mut Section) {
    let a = &tables.advise;
    summary(a, s);
    s.summary
        .extend(crate::report::terminal::advise::failed_lines(a));
    s.figures.push(layouts_figure(a));
    s.figures.push(page_sizes_figure(&a.decision));
    if let Some(t) = bands(&a.points) {
        s.tables.push(t);
    }
    s.tables.push(measurements(&a.points, &a.failed));
    if let Some(c) = &a.concurrency {
        s.tables.push(concurrency(c));
    }
    if let Some(g) = &a.aging {
        s.tables.push(aging(g));
    }
}

/// Every aged layout and size: the aging series used and the factors the
/// decision scaled its times by.
fn aging(g: &crate::result::advise::AgingAdjustment) -> DataTable {
    let mut t = DataTable::new(
        "advise-aging",
        format!(
            "At storage age {} (bytes overwritten over bytes stored), from {} (this disk: {}): time per \
             operation at that age over a fresh store's; reads linear in age between measured ages, flat \
             beyond the last; writes the fill's rate over the aging pass's; aging reads cold, advise warm, so the \
             read factors are an upper bound for blobs that stay cached; {}{}",
            g.age,
            g.file,
            g.fs,
            crate::report::terminal::advise::AGING_READS,
            g.notes.iter().map(|n| format!("; {n}")).collect::<String>()
        ),
        &crate::report::terminal::advise::AGING_COLUMNS,
    );
    for row in crate::report::terminal::advise::aging_rows(g) {
        t.rows.push(row.to_vec());
    }
    t
}

/// Every layout at the application's concurrency and the factors the
/// decision scaled its times by.
fn concurrency(c: &crate::result::advise::ConcurrencyAdjustment) -> DataTable {
    let mut t = DataTable::new(
        "advise-concurrency",
        format!(
            "At your concurrency: {} threads, {} writing, blobs of {} bytes; time per operation as one thread sees it over one thread's (the decision scales each layout's times by these)",
            c.threads, c.writers, c.size
        ),
        &["layout", "reads/s", "writes/s", "busy", "read x", "write x"],
    );
    let med = |v: &[f64]| crate::measure::stats::summarize(v).median;
    for l in &c.layouts {
        t.rows.push(vec![
            l.layout.clone(),
            format!("{:.0}", med(&l.reads_per_s)),
            format!("{:.0}", med(&l.writes_per_s)),
            l.busy.to_string(),
            format!("{:.2}x", med(&l.read_factor)),
            format!("{:.2}x", med(&l.write_factor)),
        ]);
    }
    t
}

/// Each band's range, share, mean and the size measured; None for results
/// that did not record their bands (they measured band midpoints).
fn bands(points: &[PointResult]) -> Option<DataTable> {
    let bands: Vec<Band> = points.iter().filter_map(PointResult::band).collect();
    if bands.is_empty() {
        return None;
    }
    let mut t = DataTable::new(
        "advise-bands",
        "Size bands, each measured at the mean size of its blobs (\"cap\": a mean above the \
         calibration cap, measured at the cap and so under-costed)",
        &["band", "share", "mean", "measured at"],
    );
    for b in &bands {
        t.rows.push(band_cells(b).to_vec());
    }
    Some(t)
}

/// The question, the recommendation and the comparisons, in words.
fn summary(a: &Advice, s: &mut Section) {
    let (input, decision, journal) = (&a.input, &a.decision, &a.journal);
    let reads = input.reads_percent as f64 / 100.0;
    let page = decision.page_size;
    let sample = &input.sample;
    s.summary.push(format!(
        "{} blobs from {}: median {}, p10 {}, p90 {}; {:.0}% reads; durability {}",
        sample.blobs,
        sample.source,
        size_label(sample.median as f64),
        size_label(sample.p10 as f64),
        size_label(sample.p90 as f64),
        reads * 100.0,
        input.durability
    ));
    s.summary
        .push(crate::report::terminal::advise::placement_text(decision));
    if let Some(store) = &a.object_store {
        s.summary.push(format!(
            "object store: {} ({}); each write one PUT; its disk figures are the objects' bytes",
            store.path.display(),
            store
                .version
                .as_deref()
                .unwrap_or("server did not name itself")
        ));
    }
    let (mode, sync) = crate::report::terminal::advise::journal_setting(journal);
    s.summary.push(format!(
        "page_size={page}, journal_mode={}, synchronous={} (rollback journal / WAL write time: {})",
        mode.to_uppercase(),
        sync.to_uppercase(),
        spread(&journal.rollback_over_wal)
    ));
    if let Some(v) = crate::report::terminal::advise::page_verdict(decision) {
        s.summary.push(format!("page size: {v}"));
    }
    s.summary.push(format!(
        "journal mode: {}",
        crate::report::terminal::advise::journal_verdict(journal)
    ));
    for (name, sp) in &decision.speedup_vs {
        s.summary.push(format!(
            "vs {name}: {} faster (median of rounds [95% interval])",
            spread(sp)
        ));
    }
    s.summary.extend(decision.within_noise.iter().cloned());
    if let Some(g) = &a.aging {
        s.summary
            .push(crate::report::terminal::advise::aging_verdict(g, decision));
    }
}

/// Mixed time per operation vs size, per layout.
fn layouts_figure(a: &Advice) -> Figure {
    let reads = a.input.reads_percent as f64 / 100.0;
    let page = a.decision.page_size;
    let points = &a.points;
    let mut drawn = Vec::new();
    let mut layout_series =
        |kind: LayoutKind, page: Option<u32>, name: &str, color: usize| Series {
            name: name.into(),
            dashed: false,
            color,
            points: points
                .iter()
                .filter_map(|p| {
                    let l = p.layout(kind, page)?;
                    let mix: Vec<f64> = l
                        .read_ns
                        .iter()
                        .zip(&l.write_ns)
                        .map(|(r, w)| reads * r + (1.0 - reads) * w)
                        .collect();
                    let e = median_estimate(&mix);
                    drawn.push(e);
                    Some(estimate_point(p.size as f64, &e))
                })
                .collect(),
        };
    let series: Vec<Series> = vec![
        layout_series(
            LayoutKind::Db,
            Some(page),
            &format!("inside the database (page {page})"),
            0,
        ),
        layout_series(LayoutKind::DbFiles, None, "files named in the database", 1),
        layout_series(LayoutKind::Files, None, "plain files", 2),
        layout_series(LayoutKind::ObjectStore, None, "object store", 3),
    ]
    .into_iter()
    // Only the layouts measured (the object store with --s3).
    .filter(|s| !s.points.is_empty())
    .collect();
    Figure {
        name: "layouts".into(),
        caption: format!(
            "Time per operation ({:.0}% reads, {:.0}% writes) at each measured size. {} Where the \
             database line is lowest, blobs of that size belong inside it.",
            reads * 100.0,
            (1.0 - reads) * 100.0,
            interval_caption(&drawn)
        ),
        chart: Chart::Line(LineChart {
            title: "time per operation vs blob size".into(),
            x: AxisSpec::new("blob size (bytes)", Scale::Log, Unit::Bytes),
            y: AxisSpec::new("time per operation", Scale::Log, Unit::Nanos),
            series,
        }),
    }
}

/// Each page size's expected time relative to the recommended one's.
fn page_sizes_figure(decision: &Decision) -> Figure {
    let groups: Vec<BarGroup> = decision
        .page_sizes
        .iter()
        .map(|(p, sp)| BarGroup {
            label: format!("page size {p}"),
            // The interval where the result has one; results from before
            // intervals draw the bare median.
            bars: vec![Some(sp.interval.as_ref().and_then(estimate_bar).unwrap_or(
                Bar {
                    value: sp.median,
                    spread: None,
                    noisy: false,
                },
            ))],
            marker: None,
        })
        .collect();
    Figure {
        name: "page-sizes".into(),
        caption: format!(
            "Expected time per operation with every blob inside the database, relative to the \
             recommended page size (1x). {}",
            interval_caption(
                decision
                    .page_sizes
                    .iter()
                    .filter_map(|(_, sp)| sp.interval.as_ref())
            )
        ),
        chart: Chart::Bars(BarChart {
            title: "page size: expected time relative to the recommended".into(),
            value_axis: AxisSpec::new("time / recommended page size's", Scale::Linear, Unit::Ratio),
            series_names: vec!["relative time".into()],
            groups,
            reference: Some(1.0),
            marker_label: None,
        }),
    }
}

/// Every measurement: medians per size and layout, and disk per blob.
fn measurements(points: &[PointResult], failed: &[SystemFailure]) -> DataTable {
    let mut t = DataTable {
        name: "advise".into(),
        title: "Measurements per size and layout (median of rounds)".into(),
        headers: ["size", "share", "layout", "read", "write", "disk per blob"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows: Vec::new(),
    };
    for p in points {
        for l in &p.layouts {
            let med = |v: &[f64]| human_duration_ns(summarize(v).median);
            t.rows.push(vec![
                size_label(p.size as f64),
                format!("{:.0}%", p.share * 100.0),
                l.layout.clone(),
                med(&l.read_ns),
                med(&l.write_ns),
                format!("{:.0}", l.space_bytes as f64 / p.blobs as f64),
            ]);
        }
        // A failed layout's row at every size says why.
        for f in failed {
            let mut row = vec![
                size_label(p.size as f64),
                format!("{:.0}%", p.share * 100.0),
                f.system.clone(),
            ];
            row.extend(std::iter::repeat_n(f.cell(), 3));
            t.rows.push(row);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use crate::result::advise::{AgainstDefault, Spread};
    use crate::result::{ResultDocument, Tables};

    /// The fixture's summary with its page size decided from 16384's and
    /// 65536's per-round ratios to 4096.
    fn summary(per_round: &[f64]) -> Vec<String> {
        let text = include_str!("../../../tests/fixtures/results/advise.json");
        let mut doc: ResultDocument = serde_json::from_str(text).expect("fixture");
        let Tables::Advise(t) = &mut doc.tables else {
            panic!("an advise result")
        };
        let vs = Spread::of_ratios(per_round).estimate(5);
        let slower = Spread::of_ratios(&[2.0, 2.1, 1.9, 2.0, 2.0]).estimate(5);
        let c = AgainstDefault::decide(4096, vec![(16384, vs), (65536, slower)]);
        t.advise.decision.page_size = c.chosen;
        t.advise.decision.page_choice = Some(c);
        crate::report::sections::section(&doc, "advise.json", 0).summary
    }

    #[test]
    fn the_summary_keeps_4096_within_noise_and_names_a_page_size_beyond_it() {
        let lines = summary(&[0.90, 1.10, 0.95, 1.05, 0.92]);
        let page = lines
            .iter()
            .find(|l| l.starts_with("page size: "))
            .expect("a page-size verdict");
        assert!(
            page.starts_with(
                "page size: within noise: keeping SQLite's default 4096 (expected time with every blob inside, 16384 / 4096: 0.95x"
            ),
            "{page}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("page_size=4096,")),
            "{lines:?}"
        );
        let lines = summary(&[0.60, 0.62, 0.59, 0.61, 0.60]);
        assert!(
            lines.iter().any(|l| l.starts_with(
                "page size: 16384 recommended: faster than SQLite's default 4096 beyond the noise"
            )),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("page_size=16384,")),
            "{lines:?}"
        );
        // The fixture's journal modes have no interval (an older result):
        // WAL is kept, and the summary says there was nothing to decide by.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("journal mode: no interval to decide by")
                    && l.contains("keeping WAL")),
            "{lines:?}"
        );
    }
}
