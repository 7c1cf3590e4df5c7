//! How a `suite internal-external` result is drawn: the colored ratio matrix beside the 2011 study.

use super::{DataTable, Figure, Section, finite};
use crate::measure::estimate::notes;
use crate::report::chart::{Chart, Heatmap};
use crate::report::terminal::internal_external::describe_row;
use crate::result::internal_external::{InternalExternalTables, crossings};

pub(in crate::report) fn internal_external(tables: &InternalExternalTables, s: &mut Section) {
    s.figures.push(matrix_figure(tables));
    s.tables.push(cells_table(tables));
    summary(tables, s);
}

/// The colored matrix, each cell with the study's figure below it.
fn matrix_figure(tables: &InternalExternalTables) -> Figure {
    // Ascending, whatever order the sizes were given in.
    let mut sizes = tables.sizes();
    sizes.sort_unstable();
    let mut pages = tables.page_sizes();
    pages.sort_unstable();
    let matrix: Vec<Vec<crate::report::chart::MatrixCell>> = pages
        .iter()
        .map(|&p| {
            sizes
                .iter()
                .map(|&z| {
                    let c = tables.cell(z, p)?;
                    let v = finite(c.external_over_internal)?;
                    Some((
                        v,
                        c.seed
                            .and_then(finite)
                            .map(|seed| format!("study {seed:.2}")),
                    ))
                })
                .collect()
        })
        .collect();
    Figure {
        name: "matrix".into(),
        caption: "External read time / internal read time per blob size and page size. Green: the database \
                  (internal) is faster; red: external files are. Below each value, the 2011 study's figure."
            .into(),
        chart: Chart::Matrix(Heatmap {
            title: "internal vs external: external time / internal time".into(),
            row_label: "page size".into(),
            col_label: "blob size".into(),
            rows: pages.iter().map(u32::to_string).collect(),
            cols: sizes
                .iter()
                .map(|&z| crate::report::chart::size_label(z as f64))
                .collect(),
            cells: matrix,
            neutral: 1.0,
            legend: "green > 1: keep blobs inside the database; red < 1: keep them as files".into(),
        }),
    }
}

/// Every cell's times, ratio and the study's figure.
fn cells_table(tables: &InternalExternalTables) -> DataTable {
    let mut t = DataTable::new(
        "internal_external",
        "External time / internal time",
        &[
            "blob size",
            "page size",
            "blobs",
            "internal µs/read",
            "external µs/read",
            "external/internal",
            "study",
        ],
    );
    for c in &tables.internal_external {
        let e = c.ratio_estimate();
        let mark = if c.undecided() { " (1.00 inside)" } else { "" };
        t.rows.push(vec![
            c.blob_size.to_string(),
            c.page_size.to_string(),
            c.count.to_string(),
            super::quick::time_us(&c.internal_estimate(tables.stopping_kind())),
            super::quick::time_us(&c.external_estimate(tables.stopping_kind())),
            format!("{}{mark}", super::quick::ratio_estimate(&e)),
            c.seed
                .and_then(finite)
                .map(|v| format!("{v:.3}"))
                .unwrap_or_default(),
        ]);
    }
    t
}

/// The best page size and where files start to win, per page size.
fn summary(tables: &InternalExternalTables, s: &mut Section) {
    let estimates: Vec<_> = tables
        .internal_external
        .iter()
        .map(|c| c.ratio_estimate())
        .collect();
    s.summary.extend(notes(estimates.iter()));
    if tables.internal_external.iter().any(|c| c.undecided()) {
        s.summary.push(
            "(1.00 inside): the 95% interval contains 1.00, neither is faster beyond the noise"
                .into(),
        );
    }
    s.summary.push(format!(
        "best page size for blob reads: {}",
        crate::report::terminal::internal_external::best_page_text(tables)
    ));
    s.summary
        .push(crate::report::terminal::internal_external::cache_line(
            tables,
            &tables.page_sizes(),
        ));
    let (mut noise, mut undecided) = (false, false);
    for page in tables.page_sizes() {
        let here = tables.crossings(page);
        noise |= here.iter().any(|c| !c.firm);
        undecided |= tables.row(page).iter().any(|x| !x.decided);
        let study = tables.study_row(page);
        let beside = if study.is_empty() {
            String::new()
        } else {
            format!(" (the study: {})", describe_row(&study, &crossings(&study)))
        };
        s.summary.push(format!(
            "page size {page}: {}{beside}",
            describe_row(&tables.row(page), &here)
        ));
    }
    if noise {
        s.summary.push(
            "(within noise): a cell beside that crossing has 1.00 inside its 95% interval, so it may not be real"
                .into(),
        );
    }
    if undecided {
        s.summary
            .push(crate::report::terminal::internal_external::WITHIN_NOISE_NOTE.into());
    }
}
