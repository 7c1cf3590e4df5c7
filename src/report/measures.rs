//! The figures compare reads from results: each case's figure with every
//! sample behind it ([`Measure`]), from the runs every kind may hold and
//! from each kind's own tables (the kinds name theirs in `report::kinds`).

use serde_json::Value;

use super::figures::{AGING_FRAGMENTS_FIGURE, AGING_READ_FIGURE, http_systems, strip_round, text};
use crate::result::run::{RunPlan, RunResult};
use crate::result::{ResultDocument, Tables};

/// One figure of one case, with every sample behind it.
#[derive(Debug, Clone)]
pub struct Measure {
    /// Identity across machines and versions: command, case and settings.
    pub key: String,
    /// What a reader sees.
    pub label: String,
    /// What is measured: "time per op", "time", "requests/s" or "writes/s".
    pub figure: &'static str,
    /// Whether more is better (requests/s) or less (times).
    pub higher_is_better: bool,
    /// Whether the case waits for the disk to flush (a write that fsyncs
    /// or commits durably): both reference probes bound it; every other
    /// case answers to the CPU probe only.
    pub flushes: bool,
    /// Every sample of the figure (repetitions, rounds, blobs).
    pub samples: Vec<f64>,
    /// What must be equal on both sides for the figures to mean the same
    /// thing, though it is not part of the case's name: (field, value).
    pub conditions: Vec<(&'static str, String)>,
    /// The cases compared together (one Holm family): the cases of one
    /// dataset and page size for runs, of one level for HTTP, of one
    /// figure for replicate, every case otherwise.
    pub section: String,
    /// The cost injected into this case's operations (a testing aid), if any.
    pub injected: Option<String>,
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
                // An injected cost is the case under test made slower on
                // purpose, not another case: shown apart, not keyed.
                if !v.is_null() && k != "inject" {
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

/// What a run's figure depends on beyond its settings: the data it read
/// and how much of it each round touched.
fn run_conditions(r: &RunResult) -> Vec<(&'static str, String)> {
    let catalog = json(&r.catalog);
    vec![
        ("blob count", r.catalog.count.to_string()),
        ("dataset", catalog["manifest"]["spec"].to_string()),
        (
            "operations per round",
            r.plan
                .count
                .map_or_else(|| "every key".to_string(), |c| c.to_string()),
        ),
        ("checkpoint excluded", r.plan.exclude_checkpoint.to_string()),
    ]
}

/// The cases a run is compared together with: those of its dataset and
/// page size (internal-external's cells, fasterthanfs's and quick's whole
/// table), so Holm's family is what a reader compares at a glance.
fn run_section(r: &RunResult) -> String {
    let page = r
        .plan
        .target
        .sqlite_settings()
        .and_then(|s| s.page_size)
        .map(|p| format!(", page size {p}"))
        .unwrap_or_default();
    format!("{} blobs{page}", r.catalog.count)
}

/// The figures of every run: time per operation of each repetition.
pub fn run_measures(command: &str, runs: &[RunResult], push: &mut dyn FnMut(Measure)) {
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
            flushes: r.plan.operation == crate::result::run::Operation::Update
                && (r.plan.session.fsync || r.plan.target.commit_waits_for_disk()),
            samples,
            conditions: run_conditions(r),
            section: run_section(r),
            injected: r.plan.session.inject.map(|i| i.to_string()),
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
            // With `--order both` a system has a row per order: random ones
            // are keyed apart (sequential keeps the key it always had).
            let system = match x.order {
                crate::result::lob::Order::Sequential => x.system.clone(),
                crate::result::lob::Order::Random => format!("{} (random order)", x.system),
            };
            (
                system,
                x.size as f64,
                floats(&x.write_ns),
                floats(&x.read_ns),
            )
        })
        .collect()
}

/// The figures of a `suite lob` result: write and read time per system and size.
pub fn lob_measures(doc: &ResultDocument, push: &mut dyn FnMut(Measure)) {
    let (command, tables) = (doc.command.as_str(), &doc.tables);
    let (per_size, durable) = match tables {
        Tables::Lob(t) => (t.per_size.to_string(), t.logging != "off"),
        _ => (String::new(), true),
    };
    for (sys, size, write, read) in lob_rows(tables) {
        for (samples, what) in [(write, "write"), (read, "read")] {
            push(Measure {
                key: format!("{command} | {sys} | {size} | {what}"),
                label: format!("{sys} {} {what}", super::chart::size_label(size)),
                figure: "time per op",
                higher_is_better: false,
                flushes: what == "write" && durable,
                samples,
                conditions: vec![("blobs per size", per_size.clone())],
                section: String::new(),
                injected: None,
            });
        }
    }
}

/// The figures of a `suite http` or `load` result: requests/s per system
/// and level, one sample per round where the suite ran rounds.
pub fn http_measures(doc: &ResultDocument, push: &mut dyn FnMut(Measure)) {
    let (command, tables) = (doc.command.as_str(), &doc.tables);
    let suite_system = |system: &str| match tables {
        Tables::Http(t) => t.http.iter().find(|s| s.system == system),
        _ => None,
    };
    let rounds = |system: &str, i: usize| -> Option<Vec<f64>> {
        let s = suite_system(system)?;
        let r: Vec<f64> = s.rounds.get(i)?.iter().map(|f| f.requests_per_s).collect();
        (!r.is_empty()).then_some(r)
    };
    for (system, levels) in http_systems(tables) {
        for (i, l) in levels.iter().enumerate() {
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
                flushes: true,
                samples: rounds(system, i).unwrap_or_else(|| vec![l.requests_per_s]),
                conditions: Vec::new(),
                section: format!("c={}{rate_text}", l.concurrency),
                injected: suite_system(system)
                    .and_then(|s| s.injected)
                    .map(|i| i.inject.to_string()),
            });
        }
    }
}

/// The figures of a `suite replicate` result: each arm's writes/s and p99
/// write time, one sample per round.
pub fn replicate_measures(doc: &ResultDocument, push: &mut dyn FnMut(Measure)) {
    use crate::result::replicate::Arm;
    let command = doc.command.as_str();
    let Tables::Replicate(t) = &doc.tables else {
        return;
    };
    let conditions = vec![
        ("mix", t.mix.clone()),
        ("threads", t.threads.to_string()),
        ("keys", t.keys.describe()),
        ("round", t.round_ns.to_string()),
        ("sync interval", t.litestream.sync_interval_ns.to_string()),
    ];
    for arm in [Arm::Alone, Arm::WithLitestream] {
        let name = arm.name();
        push(Measure {
            key: format!("{command} | {name} | writes/s"),
            label: format!("{name} writes/s"),
            figure: "writes/s",
            higher_is_better: true,
            flushes: true,
            samples: t.samples(arm, |r| r.writes_per_s),
            conditions: conditions.clone(),
            section: "writes/s".into(),
            injected: None,
        });
        push(Measure {
            key: format!("{command} | {name} | p99"),
            label: format!("{name} p99 write"),
            figure: "time",
            higher_is_better: false,
            flushes: true,
            samples: t.samples(arm, |r| r.p99_ns as f64),
            conditions: conditions.clone(),
            section: "p99".into(),
            injected: None,
        });
    }
}

/// The figures of a `suite aging` result, per series and age (and the
/// point after a VACUUM apart): read MB/s with each cold round a sample,
/// and fragments per blob, one value.
pub fn aging_measures(doc: &ResultDocument, push: &mut dyn FnMut(Measure)) {
    let command = doc.command.as_str();
    let Tables::Aging(t) = &doc.tables else {
        return;
    };
    for s in &t.series {
        for p in &s.points {
            let vacuum = if p.vacuumed { " after VACUUM" } else { "" };
            let at = format!("age {}{vacuum}", p.target_age);
            let key = format!(
                "{command} | {} | {} | {}-{} | fill {} | {at}",
                s.fs, s.layout, s.sizes.min, s.sizes.max, s.fill_target
            );
            let label = format!("{} {at}", s.name());
            push(Measure {
                key: format!("{key} | read"),
                label: format!("{label} read"),
                figure: AGING_READ_FIGURE,
                higher_is_better: true,
                flushes: false,
                samples: p.read_mb_s.clone(),
                conditions: Vec::new(),
                section: String::new(),
                injected: None,
            });
            let f = &p.fragments;
            if f.blobs > 0 && f.unavailable.is_none() {
                push(Measure {
                    key: format!("{key} | fragments"),
                    label: format!("{label} fragments"),
                    figure: AGING_FRAGMENTS_FIGURE,
                    higher_is_better: false,
                    flushes: false,
                    samples: vec![f.mean],
                    conditions: Vec::new(),
                    section: String::new(),
                    injected: None,
                });
            }
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

/// The figures of a `sweep` result: each case's time, one value.
pub fn sweep_measures(doc: &ResultDocument, push: &mut dyn FnMut(Measure)) {
    for (key, label, ns) in sweep_records(&doc.command, &doc.tables) {
        push(Measure {
            key,
            label,
            figure: "time",
            higher_is_better: false,
            flushes: true,
            samples: vec![ns],
            conditions: Vec::new(),
            section: String::new(),
            injected: None,
        });
    }
}
