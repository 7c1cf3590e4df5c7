//! Two results side by side: every case found in both (matched by its
//! settings, not by file paths or machine names), the ratio of their
//! figures, and whether the change is larger than the noise of either side.

use serde_json::Value;

use super::view::{http_systems, strip_round, text};
use crate::measure::stats::summarize;
pub use crate::result::compare::{Change, Comparison, Side, Verdict};
use crate::result::run::{RunPlan, RunResult};
use crate::result::{ResultDocument, Tables};

/// One figure of one case, with every sample behind it.
#[derive(Debug, Clone)]
pub struct Measure {
    /// Identity across machines and versions: command, case and settings.
    pub key: String,
    /// What a reader sees.
    pub label: String,
    /// What is measured: "time per op", "time" or "requests/s".
    pub figure: &'static str,
    /// Whether more is better (requests/s) or less (times).
    pub higher_is_better: bool,
    /// Every sample of the figure (repetitions, rounds, blobs).
    pub samples: Vec<f64>,
}

/// The median, spread and count of one side's samples.
fn side_of(samples: &[f64]) -> Side {
    let s = summarize(samples);
    Side {
        median: s.median,
        min: s.min,
        max: s.max,
        n: samples.len(),
    }
}

/// Settings of a run that define the case, leaving out paths. The target
/// and session are read in their recorded JSON form, so every setting they
/// record joins the key without code here knowing each kind of target.
fn run_settings(plan: &RunPlan) -> String {
    let t = json(&plan.target);
    let mut parts = vec![
        text(&t, "kind").to_string(),
        name_of(&json(&plan.operation)),
        name_of(&json(&plan.order)),
        name_of(&json(&plan.cache)),
    ];
    for obj in [&t["settings"], &json(&plan.session)] {
        if let Some(o) = obj.as_object() {
            for (k, v) in o {
                if !v.is_null() {
                    parts.push(format!("{k}={v}"));
                }
            }
        }
    }
    for k in ["mode", "engine"] {
        if let Some(v) = t.get(k).filter(|v| !v.is_null()) {
            parts.push(format!("{k}={v}"));
        }
    }
    parts.join(" ")
}

/// A recorded value's JSON form (null if it cannot be written).
fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// A unit enum variant's recorded name ("read", "random", "warm").
fn name_of(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// The figures of every run: time per operation of each repetition.
fn run_measures(command: &str, runs: &[RunResult], push: &mut impl FnMut(Measure)) {
    for r in runs {
        let name = strip_round(&r.name);
        let samples: Vec<f64> = r
            .repetitions
            .iter()
            .map(|rep| rep.elapsed_ns as f64 / (rep.ops as f64).max(1.0))
            .collect();
        push(Measure {
            key: format!("{command} | {name} | {}", run_settings(&r.plan)),
            label: name.to_string(),
            figure: "time per op",
            higher_is_better: false,
            samples,
        });
    }
}

/// The lob rows as (system, size, write samples, read samples).
fn lob_rows(tables: &Tables) -> Vec<(String, f64, Vec<f64>, Vec<f64>)> {
    let Tables::Lob(t) = tables else {
        return Vec::new();
    };
    let floats = |v: &[u64]| v.iter().map(|&x| x as f64).collect();
    t.lob
        .iter()
        .map(|x| {
            (
                x.system.clone(),
                x.size as f64,
                floats(&x.write_ns),
                floats(&x.read_ns),
            )
        })
        .collect()
}

/// The figures of a `suite lob` result: write and read time per system and size.
fn lob_measures(command: &str, tables: &Tables, push: &mut impl FnMut(Measure)) {
    for (sys, size, write, read) in lob_rows(tables) {
        for (samples, what) in [(write, "write"), (read, "read")] {
            push(Measure {
                key: format!("{command} | {sys} | {size} | {what}"),
                label: format!("{sys} {} {what}", super::chart::size_label(size)),
                figure: "time per op",
                higher_is_better: false,
                samples,
            });
        }
    }
}

/// The figures of a `suite http` or `load` result: requests/s per system
/// and level.
fn http_measures(command: &str, tables: &Tables, push: &mut impl FnMut(Measure)) {
    for (system, levels) in http_systems(tables) {
        for l in levels {
            // The rate as its JSON number reads ("200.0"), as keys always had it.
            let rate_text = l
                .rate
                .map(|r| format!(" rate {}", Value::from(r)))
                .unwrap_or_default();
            let name = format!("{system} c={}{rate_text}", l.concurrency);
            push(Measure {
                key: format!("{command} | {name}"),
                label: name,
                figure: "requests/s",
                higher_is_better: true,
                samples: vec![l.requests_per_s],
            });
        }
    }
}

/// Each sweep record as (key, label, time in ns).
fn sweep_records(command: &str, tables: &Tables) -> Vec<(String, String, f64)> {
    let Tables::Sweep(t) = tables else {
        return Vec::new();
    };
    t.sweep
        .records
        .iter()
        .map(|r| {
            let case: Vec<String> = r.case.iter().map(|(k, v)| format!("{k}={v}")).collect();
            // The workload as written in the result: its key must match
            // results written before the tables were typed.
            let w = serde_json::to_value(r.workload).unwrap_or_default();
            let workload = serde_json::to_string(&w).unwrap_or_default();
            (
                format!("{command} | {workload} | {}", case.join(" ")),
                format!("{} {}", text(&w, "kind"), case.join(" ")),
                r.timing.ns as f64,
            )
        })
        .collect()
}

/// Every comparable figure a result holds.
pub fn measures(doc: &ResultDocument) -> Vec<Measure> {
    let command = doc.command.as_str();
    let mut out: Vec<Measure> = Vec::new();
    let mut push = |m: Measure| {
        if m.samples.is_empty() {
            return;
        }
        match out
            .iter_mut()
            .find(|o| o.key == m.key && o.figure == m.figure)
        {
            Some(o) => o.samples.extend(m.samples),
            None => out.push(m),
        }
    };
    run_measures(command, &doc.runs, &mut push);
    lob_measures(command, &doc.tables, &mut push);
    http_measures(command, &doc.tables, &mut push);
    for (key, label, ns) in sweep_records(command, &doc.tables) {
        push(Measure {
            key,
            label,
            figure: "time",
            higher_is_better: false,
            samples: vec![ns],
        });
    }
    out
}

/// The dataset a result's tables record, as compact JSON ("" when none).
/// BRIDGE until every kind's tables are typed: read from their JSON form.
fn dataset_text(tables: &Tables) -> String {
    let dataset = match tables {
        Tables::Http(t) => serde_json::to_value(&t.dataset).unwrap_or_default(),
        other => serde_json::to_value(other).unwrap_or_default()["dataset"].clone(),
    };
    match dataset {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Environment and dataset fields that differ: (field, before, after).
fn differences(before: &ResultDocument, after: &ResultDocument) -> Vec<(String, String, String)> {
    let fields = |d: &ResultDocument| -> [(&'static str, String); 9] {
        let e = &d.environment;
        [
            ("cpu", e.cpu_model.clone()),
            ("logical cpus", e.logical_cpus.to_string()),
            ("kernel", e.kernel.clone()),
            ("os", e.os.clone()),
            (
                "filesystem",
                e.filesystem
                    .as_ref()
                    .map(|f| f.fs_type.clone())
                    .unwrap_or_default(),
            ),
            ("sqlite", e.sqlite_version.clone()),
            ("blobbench", e.blobbench_version.clone()),
            ("host", e.hostname.clone()),
            ("dataset", dataset_text(&d.tables)),
        ]
    };
    fields(before)
        .into_iter()
        .zip(fields(after))
        .filter_map(|((name, b), (_, a))| (b != a).then(|| (name.to_string(), b, a)))
        .collect()
}

/// Compares every case present in both results. A change counts only when
/// the two sides' min..max ranges do not overlap and the medians differ by
/// more than `threshold` (0.05 = 5%).
pub fn compare(before: &ResultDocument, after: &ResultDocument, threshold: f64) -> Comparison {
    let (b, a) = (measures(before), measures(after));
    let mut changes = Vec::new();
    for mb in &b {
        let Some(ma) = a.iter().find(|m| m.key == mb.key && m.figure == mb.figure) else {
            continue;
        };
        let (sb, sa) = (side_of(&mb.samples), side_of(&ma.samples));
        let ratio = sa.median / sb.median;
        let improved = if mb.higher_is_better {
            ratio > 1.0
        } else {
            ratio < 1.0
        };
        let overlap = sa.min <= sb.max && sb.min <= sa.max;
        let beyond_threshold = (ratio - 1.0).abs() > threshold;
        let single = sb.n < 2 || sa.n < 2;
        let (verdict, reason) = if !beyond_threshold {
            (
                Verdict::WithinNoise,
                format!("change below --threshold {:.0}%", threshold * 100.0),
            )
        } else if overlap && !single {
            (
                Verdict::WithinNoise,
                "the two sides' min..max ranges overlap".to_string(),
            )
        } else {
            let v = if improved {
                Verdict::Better
            } else {
                Verdict::Worse
            };
            let why = if single {
                "beyond --threshold; one sample on a side, so its noise is unknown".to_string()
            } else {
                "beyond --threshold and outside both sides' min..max".to_string()
            };
            (v, why)
        };
        changes.push(Change {
            label: mb.label.clone(),
            figure: mb.figure.to_string(),
            before: sb,
            after: sa,
            ratio,
            verdict,
            reason,
        });
    }
    let only = |x: &[Measure], y: &[Measure]| -> Vec<String> {
        x.iter()
            .filter(|m| !y.iter().any(|o| o.key == m.key && o.figure == m.figure))
            .map(|m| m.label.clone())
            .collect()
    };
    Comparison {
        only_before: only(&b, &a),
        only_after: only(&a, &b),
        changes,
        differences: differences(before, after),
        threshold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A document from its JSON form, with the fields every result has.
    fn doc(mut v: Value) -> ResultDocument {
        v["schema"] = "blobbench-result".into();
        v["environment"] = json!({});
        serde_json::from_value(v).expect("a result document")
    }

    fn lob(samples: &[f64]) -> ResultDocument {
        doc(json!({"command": "suite lob", "tables": {"lob": [
            {"system": "sqlite", "size": 1000, "write_ns": samples, "read_ns": [5.0, 5.0, 5.0]}
        ]}}))
    }

    /// A real run record (from the result fixtures) with the given name,
    /// target path and one repetition's time.
    fn run_record(name: &str, path: &str, elapsed_ns: f64) -> Value {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/run.json"
        );
        let text = std::fs::read_to_string(fixture).expect("run fixture");
        let mut run = serde_json::from_str::<Value>(&text).expect("json")["runs"][0].clone();
        run["name"] = name.into();
        run["plan"]["target"]["path"] = path.into();
        let mut rep = run["repetitions"][0].clone();
        rep["elapsed_ns"] = json!(elapsed_ns as u64);
        rep["ops"] = json!(10);
        run["repetitions"] = json!([rep]);
        run
    }

    fn change<'a>(c: &'a Comparison, op: &str) -> &'a Change {
        c.changes.iter().find(|x| x.label.ends_with(op)).unwrap()
    }

    #[test]
    fn a_change_counts_only_beyond_both_spreads_and_the_threshold() {
        let before = lob(&[100.0, 105.0, 110.0]);
        let verdict = |after: &[f64], threshold: f64| {
            change(&compare(&before, &lob(after), threshold), "write").verdict
        };
        // Faster and clear of the before range.
        let c = compare(&before, &lob(&[70.0, 72.0, 75.0]), 0.05);
        assert_eq!(change(&c, "write").verdict, Verdict::Better);
        assert!((change(&c, "write").ratio - 72.0 / 105.0).abs() < 1e-9);
        // Faster median, but the ranges overlap.
        assert_eq!(verdict(&[80.0, 90.0, 104.0], 0.05), Verdict::WithinNoise);
        // Clear of the range but below the threshold.
        assert_eq!(verdict(&[111.0, 112.0, 113.0], 0.10), Verdict::WithinNoise);
        let c = compare(&before, &lob(&[150.0, 160.0, 170.0]), 0.05);
        assert_eq!(change(&c, "write").verdict, Verdict::Worse);
        // The identical read figures are within noise.
        assert_eq!(change(&c, "read").verdict, Verdict::WithinNoise);
    }

    #[test]
    fn runs_match_by_settings_not_by_paths_or_rounds() {
        let run = |path: &str, round: u32, ns: f64| {
            run_record(&format!("read sql (round {round})"), path, ns)
        };
        // Only the runs matter here, whatever a quick result's tables hold.
        let quick = |runs: [Value; 2]| {
            let mut d =
                ResultDocument::new("quick", Default::default(), Tables::Other(Value::Null));
            d.runs = runs
                .into_iter()
                .map(|r| serde_json::from_value(r).unwrap())
                .collect();
            d
        };
        let before = quick([run("/tmp/a/q.db", 1, 100.0), run("/tmp/a/q.db", 2, 110.0)]);
        let after = quick([run("/home/b/q.db", 1, 50.0), run("/home/b/q.db", 2, 52.0)]);
        let c = compare(&before, &after, 0.05);
        assert_eq!(c.changes.len(), 1, "{c:?}");
        assert_eq!(c.changes[0].before.n, 2);
        assert_eq!(c.changes[0].verdict, Verdict::Better);
        assert!(c.only_before.is_empty() && c.only_after.is_empty());
    }
}
