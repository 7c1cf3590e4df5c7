//! How a `suite internal-external` result is drawn: the colored ratio matrix beside the 2011 study.

use serde_json::Value;

use super::{DataTable, Figure, Section, arr, ns, num};
use crate::measure::stats::summarize;
use crate::report::chart::{Chart, Heatmap};

pub(super) fn internal_external(tables: &Value, s: &mut Section) {
    let cells = arr(tables, "internal_external");
    let mut sizes: Vec<u64> = cells
        .iter()
        .filter_map(|c| c["blob_size"].as_u64())
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut pages: Vec<u64> = cells
        .iter()
        .filter_map(|c| c["page_size"].as_u64())
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let find = |size: u64, page: u64| {
        cells.iter().find(|c| {
            c["blob_size"].as_u64() == Some(size) && c["page_size"].as_u64() == Some(page)
        })
    };
    let matrix: Vec<Vec<crate::report::chart::MatrixCell>> = pages
        .iter()
        .map(|&p| {
            sizes
                .iter()
                .map(|&z| {
                    let c = find(z, p)?;
                    let v = num(c, "external_over_internal")?;
                    Some((v, num(c, "seed").map(|seed| format!("study {seed:.2}"))))
                })
                .collect()
        })
        .collect();
    s.figures.push(Figure {
        name: "matrix".into(),
        caption: "External read time / internal read time per blob size and page size. Green: the database \
                  (internal) is faster; red: external files are. Below each value, the 2011 study's figure."
            .into(),
        chart: Chart::Matrix(Heatmap {
            title: "internal vs external: external time / internal time".into(),
            row_label: "page size".into(),
            col_label: "blob size".into(),
            rows: pages.iter().map(u64::to_string).collect(),
            cols: sizes
                .iter()
                .map(|&z| crate::report::chart::size_label(z as f64))
                .collect(),
            cells: matrix,
            neutral: 1.0,
            legend: "green > 1: keep blobs inside the database; red < 1: keep them as files".into(),
        }),
    });
    let mut t = DataTable::new(
        "internal_external",
        "External time / internal time",
        &[
            "blob size",
            "page size",
            "blobs",
            "internal per read",
            "external per read",
            "external/internal",
            "study",
        ],
    );
    for c in cells {
        let med = |k: &str| {
            let v: Vec<f64> = arr(c, k).iter().filter_map(Value::as_f64).collect();
            (!v.is_empty()).then(|| ns(summarize(&v).median))
        };
        t.rows.push(vec![
            num(c, "blob_size").unwrap_or(0.0).to_string(),
            num(c, "page_size").unwrap_or(0.0).to_string(),
            num(c, "count").unwrap_or(0.0).to_string(),
            med("internal_ns_per_read").unwrap_or_default(),
            med("external_ns_per_read").unwrap_or_default(),
            format!(
                "{:.3}",
                num(c, "external_over_internal").unwrap_or(f64::NAN)
            ),
            num(c, "seed")
                .map(|v| format!("{v:.3}"))
                .unwrap_or_default(),
        ]);
    }
    s.tables.push(t);
    if let Some(p) = num(tables, "best_page_size") {
        s.summary
            .push(format!("best page size for blob reads: {p}"));
    }
    for c in arr(tables, "crossover") {
        let page = num(c, "page_size").unwrap_or(0.0);
        let line = match &c["crossover"] {
            Value::Object(o) => match o.get("at").and_then(Value::as_f64) {
                Some(at) => format!(
                    "page size {page}: external files start to win above about {}",
                    crate::report::chart::size_label(at)
                ),
                None => continue,
            },
            Value::String(k) => format!("page size {page}: {}", k.replace('-', " ")),
            _ => continue,
        };
        s.summary.push(line);
    }
}
