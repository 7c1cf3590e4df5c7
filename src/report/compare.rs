//! Two results side by side: every case found in both (matched by its
//! settings, not by file paths or machine names), the ratio of their
//! figures, and whether the change is larger than the noise of either side.

use serde::Serialize;
use serde_json::Value;

use super::view::{arr, http_systems, num, strip_round, text};
use crate::measure::stats::summarize;

/// One figure of one case, with every sample behind it.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    /// Identity across machines and versions: command, case and settings.
    pub key: String,
    /// What a reader sees.
    pub label: String,
    pub figure: &'static str,
    pub higher_is_better: bool,
    pub samples: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Better,
    Worse,
    /// The change is inside either side's spread or below the threshold.
    WithinNoise,
}

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Side {
    fn of(samples: &[f64]) -> Side {
        let s = summarize(samples);
        Side {
            median: s.median,
            min: s.min,
            max: s.max,
            n: samples.len(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub label: String,
    pub figure: &'static str,
    pub before: Side,
    pub after: Side,
    /// after / before, as measured (for times, below 1 is faster).
    pub ratio: f64,
    pub verdict: Verdict,
    /// Why the verdict is what it is, in words.
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub changes: Vec<Change>,
    pub only_before: Vec<String>,
    pub only_after: Vec<String>,
    /// Environment or dataset fields that differ: (field, before, after).
    pub differences: Vec<(String, String, String)>,
    pub threshold: f64,
}

/// Settings of a run that define the case, leaving out paths.
fn run_settings(plan: &Value) -> String {
    let t = &plan["target"];
    let mut parts = vec![
        text(t, "kind").to_string(),
        text(plan, "operation").to_string(),
        text(plan, "order").to_string(),
        text(plan, "cache").to_string(),
    ];
    for obj in [&t["settings"], &plan["session"]] {
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

/// Every comparable figure a result holds.
pub fn measures(doc: &Value) -> Vec<Measure> {
    let command = text(doc, "command");
    let mut out: Vec<Measure> = Vec::new();
    let mut push = |key: String, label: String, figure, higher, samples: Vec<f64>| {
        if samples.is_empty() {
            return;
        }
        match out.iter_mut().find(|m| m.key == key && m.figure == figure) {
            Some(m) => m.samples.extend(samples),
            None => out.push(Measure {
                key,
                label,
                figure,
                higher_is_better: higher,
                samples,
            }),
        }
    };
    for r in arr(doc, "runs") {
        let name = strip_round(text(r, "name"));
        let samples: Vec<f64> = arr(r, "repetitions")
            .iter()
            .filter_map(|rep| Some(num(rep, "elapsed_ns")? / num(rep, "ops")?.max(1.0)))
            .collect();
        push(
            format!("{command} | {name} | {}", run_settings(&r["plan"])),
            name.to_string(),
            "time per op",
            false,
            samples,
        );
    }
    let tables = &doc["tables"];
    for x in arr(tables, "lob") {
        let (sys, size) = (text(x, "system"), num(x, "size").unwrap_or(0.0));
        for (k, what) in [("write_ns", "write"), ("read_ns", "read")] {
            let samples = arr(x, k).iter().filter_map(Value::as_f64).collect();
            push(
                format!("{command} | {sys} | {size} | {what}"),
                format!("{sys} {} {what}", super::chart::size_label(size)),
                "time per op",
                false,
                samples,
            );
        }
    }
    for sys in &http_systems(doc) {
        for l in arr(sys, "levels") {
            let c = num(l, "concurrency").unwrap_or(0.0);
            let rate = l.get("rate").filter(|r| !r.is_null());
            let rate_text = rate.map(|r| format!(" rate {r}")).unwrap_or_default();
            let name = format!("{} c={c}{rate_text}", text(sys, "system"));
            if let Some(v) = num(l, "requests_per_s") {
                push(
                    format!("{command} | {name}"),
                    name.clone(),
                    "requests/s",
                    true,
                    vec![v],
                );
            }
        }
    }
    for r in arr(&tables["sweep"], "records") {
        let case: Vec<String> = arr(r, "case")
            .iter()
            .filter_map(|kv| Some(format!("{}={}", kv.get(0)?.as_str()?, kv.get(1)?.as_str()?)))
            .collect();
        let w = &r["workload"];
        let workload = serde_json::to_string(w).unwrap_or_default();
        if let Some(ns) = num(&r["timing"], "ns") {
            push(
                format!("{command} | {workload} | {}", case.join(" ")),
                format!("{} {}", text(w, "kind"), case.join(" ")),
                "time",
                false,
                vec![ns],
            );
        }
    }
    out
}

fn differences(before: &Value, after: &Value) -> Vec<(String, String, String)> {
    let e = |d: &Value, path: &[&str]| -> String {
        let mut v = d;
        for p in path {
            v = &v[*p];
        }
        match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    };
    let fields: [(&str, &[&str]); 9] = [
        ("cpu", &["environment", "cpu_model"]),
        ("logical cpus", &["environment", "logical_cpus"]),
        ("kernel", &["environment", "kernel"]),
        ("os", &["environment", "os"]),
        ("filesystem", &["environment", "filesystem", "fs_type"]),
        ("sqlite", &["environment", "sqlite_version"]),
        ("blobbench", &["environment", "blobbench_version"]),
        ("host", &["environment", "hostname"]),
        ("dataset", &["tables", "dataset"]),
    ];
    fields
        .iter()
        .filter_map(|(name, path)| {
            let (b, a) = (e(before, path), e(after, path));
            (b != a).then(|| (name.to_string(), b, a))
        })
        .collect()
}

/// Compares every case present in both results. A change counts only when
/// the two sides' min..max ranges do not overlap and the medians differ by
/// more than `threshold` (0.05 = 5%).
pub fn compare(before: &Value, after: &Value, threshold: f64) -> Comparison {
    let (b, a) = (measures(before), measures(after));
    let mut changes = Vec::new();
    for mb in &b {
        let Some(ma) = a.iter().find(|m| m.key == mb.key && m.figure == mb.figure) else {
            continue;
        };
        let (sb, sa) = (Side::of(&mb.samples), Side::of(&ma.samples));
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
            figure: mb.figure,
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

    fn lob(samples: &[f64]) -> Value {
        json!({"command": "suite lob", "tables": {"lob": [
            {"system": "sqlite", "size": 1000, "write_ns": samples, "read_ns": [5.0, 5.0, 5.0]}
        ]}})
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
            json!({"name": format!("read sql (round {round})"),
                   "plan": {"target": {"kind": "sqlite", "path": path, "settings": {"cache_size": 1000}},
                            "operation": "read", "order": "random", "cache": "warm",
                            "session": {"read_path": "sql"}},
                   "repetitions": [{"elapsed_ns": ns, "ops": 10}]})
        };
        let before = json!({"command": "quick", "runs": [run("/tmp/a/q.db", 1, 100.0), run("/tmp/a/q.db", 2, 110.0)]});
        let after = json!({"command": "quick", "runs": [run("/home/b/q.db", 1, 50.0), run("/home/b/q.db", 2, 52.0)]});
        let c = compare(&before, &after, 0.05);
        assert_eq!(c.changes.len(), 1, "{c:?}");
        assert_eq!(c.changes[0].before.n, 2);
        assert_eq!(c.changes[0].verdict, Verdict::Better);
        assert!(c.only_before.is_empty() && c.only_after.is_empty());
    }
}
