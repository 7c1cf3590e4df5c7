//! Two results side by side: every case found in both (matched by its
//! settings, not by file paths or machine names), the ratio of their
//! figures with its interval, and whether the change is real: a rank test
//! corrected for the number of cases (measure::significance) and an effect
//! at least `--threshold`.

use serde_json::Value;

use super::figures::{median_text, p_text, percent_text, ratio_text, single_valued};
use super::measures::{Measure, run_measures};
use crate::measure::estimate::{between_runs, median_estimate};
use crate::measure::reference::MachineReference;
use crate::measure::significance::{
    ALPHA, Assessment, Call, Case, Family, LEVEL, MIN_SAMPLES, RESAMPLES, assess, median,
    median_ratio_interval, samples_to_decide,
};
use crate::measure::stats::summarize;
pub use crate::result::compare::{
    Adjusted, Change, CompareMethod, Comparison, Drift, Side, Verdict,
};
use crate::result::compare::{SAMPLES_ARE_RESULTS, SAMPLES_ARE_ROUNDS};
use crate::result::{ResultDocument, Tables};

/// The median, spread and count of one side's samples, each of which is
/// a round of one run or one result's median (`results` > 1). Several
/// results' medians get the between-run interval, which holds a rerun's
/// figure; one run's rounds, the interval of their median.
fn side_of(samples: &[f64], results: usize) -> Side {
    let s = summarize(samples);
    let e = if results > 1 {
        between_runs(samples)
    } else {
        median_estimate(samples)
    };
    Side {
        median: s.median,
        min: s.min,
        max: s.max,
        n: samples.len(),
        interval: e.has_interval().then_some((e.low, e.high)),
        coverage: e.coverage.filter(|_| e.has_interval()),
        samples_are: Some(
            if results > 1 {
                SAMPLES_ARE_RESULTS
            } else {
                SAMPLES_ARE_ROUNDS
            }
            .to_string(),
        ),
    }
}

/// What makes two aging results measure different things: the volumes
/// (filesystems, sizes, exact or not), the fills and the blob sizes.
fn aging_conditions(tables: &Tables) -> Vec<(&'static str, String)> {
    let Tables::Aging(t) = tables else {
        return Vec::new();
    };
    let distinct = |items: Vec<String>| {
        let mut out: Vec<String> = Vec::new();
        for i in items {
            if !out.contains(&i) {
                out.push(i);
            }
        }
        out.join(", ")
    };
    let volumes = |f: &dyn Fn(&crate::result::aging::VolumeInfo) -> String| {
        distinct(t.volumes.iter().map(f).collect())
    };
    let mut fills: Vec<f64> = t.series.iter().map(|s| s.fill_target).collect();
    fills.sort_by(f64::total_cmp);
    vec![
        ("filesystems", volumes(&|v| v.fs.clone())),
        (
            "volume size",
            volumes(&|v| {
                let how = if v.exact { "image" } else { "folder" };
                format!("{} {how} of {} bytes", v.fs, v.size_bytes)
            }),
        ),
        (
            "fills",
            distinct(
                fills
                    .iter()
                    .map(|f| format!("{}%", percent_text(*f)))
                    .collect(),
            ),
        ),
        (
            "sizes",
            distinct(t.series.iter().map(|s| s.sizes.label()).collect()),
        ),
    ]
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
    if let Some(kind) = doc.kind() {
        (super::kinds::of(kind).measures)(doc, &mut push);
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

/// Environment fields that differ: (field, before, after). These are
/// reported, never a reason to refuse: comparing machines is the point.
fn differences(before: &ResultDocument, after: &ResultDocument) -> Vec<(String, String, String)> {
    let fields = |d: &ResultDocument| -> [(&'static str, String); 8] {
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
        ]
    };
    differing(&fields(before), &fields(after))
}

/// The pairs of (field, value) lists whose values differ: (field, before, after).
fn differing(
    before: &[(&'static str, String)],
    after: &[(&'static str, String)],
) -> Vec<(String, String, String)> {
    before
        .iter()
        .zip(after)
        .filter(|((_, b), (_, a))| b != a)
        .map(|((name, b), (_, a))| (name.to_string(), b.clone(), a.clone()))
        .collect()
}

/// Document fields that make two results measure different things.
fn document_conditions(d: &ResultDocument) -> Vec<(&'static str, String)> {
    let dataset = dataset_text(&d.tables);
    let mut out = vec![
        ("command", d.command.clone()),
        (
            "dataset",
            if dataset.is_empty() {
                "(none)".into()
            } else {
                dataset
            },
        ),
    ];
    out.extend(aging_conditions(&d.tables));
    out
}

/// A stable seed for a case's bootstrap (FNV-1a of its key), so the same
/// two results always give the same intervals, whatever order cases come in.
fn seed_of(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The rule as recorded with the comparison.
fn method_of(family: &Family) -> CompareMethod {
    CompareMethod {
        test: "mann-whitney-u, two-sided (exact without ties up to 30 a side, else normal with tie correction)".into(),
        correction: "holm".into(),
        family: format!(
            "each section of cases compared together ({} section(s))",
            family.sections
        ),
        alpha: ALPHA,
        tested: family.tested,
        min_samples: MIN_SAMPLES,
        best_possible_p: family.best_possible_p,
        interval: "simultaneous over the cases of a section, as the Holm-corrected test is: each at 1 - 0.05/N for N cases tested together (Bonferroni), so an interval wholly beyond the threshold always stands beside p < 0.05 after Holm; the rank test's own distribution-free interval of after/before (Moses: order statistics of the pairwise log ratios, k from the exact U distribution; none where the samples cannot reach that level); drift-corrected: the union of that interval on the corrected samples and a percentile bootstrap of the case's and the probe's ratios of medians, all four resampled jointly".into(),
        level: LEVEL,
        resamples: RESAMPLES,
        seed: "FNV-1a of the case key".into(),
        threshold_rule: "the whole interval beyond the threshold (a factor of 1 + threshold either way); the drift-corrected verdict divides the case's ratio by its probe's (CPU probe, or the durable-write probe for a case that waits for the disk) only when the probe moved beyond its own noise in the case's direction on the same machine and setup".into(),
    }
}

/// The limit a change must pass, in words.
fn limit_text(threshold: f64) -> String {
    format!("the {}% threshold", percent_text(threshold))
}

/// A verdict and its reason from an assessment: the rule's words.
fn verdict_of(
    a: &Assessment,
    higher_is_better: bool,
    (figure, before, after): (&str, &Side, &Side),
    threshold: f64,
) -> (Verdict, String) {
    let valid = |v: f64| v.is_finite().then_some(v);
    let interval = ratio_text(
        a.interval.ratio,
        a.test.and(valid(a.interval.low)),
        a.test.and(valid(a.interval.high)),
    );
    let p = format!(
        "p {} (Holm over {} case(s) of its section)",
        p_text(a.p_adjusted.unwrap_or(1.0)),
        a.family
    );
    let limit = limit_text(threshold);
    match a.call {
        Call::Insufficient if single_valued(figure) => (
            Verdict::InsufficientData,
            format!(
                "one value a side ({} before, {} after): a count over every blob, not a sampled rate, so it is shown and not tested",
                median_text(figure, before.median),
                median_text(figure, after.median)
            ),
        ),
        Call::Insufficient => (
            Verdict::InsufficientData,
            format!(
                "insufficient data: {} sample(s) before, {} after; a verdict needs {MIN_SAMPLES} a side",
                before.n, after.n
            ),
        ),
        Call::NotSignificant if a.best_possible_p >= ALPHA => (
            Verdict::WithinNoise,
            format!(
                "{p}: no case can reach significance with {} cases at these sample counts; need more rounds",
                a.family
            ),
        ),
        Call::NotSignificant => (Verdict::WithinNoise, format!("{p} is not below {ALPHA}")),
        Call::BelowThreshold => (
            Verdict::WithinNoise,
            format!("{p}, but {interval} reaches inside {limit}"),
        ),
        Call::Up | Call::Down => {
            let better = (a.call == Call::Up) == higher_is_better;
            (
                if better {
                    Verdict::Better
                } else {
                    Verdict::Worse
                },
                format!("{p} and all of {interval} beyond {limit}"),
            )
        }
    }
}

/// A case's change from its assessment, with the reason in words.
fn judged(mut ch: Change, a: &Assessment, higher_is_better: bool, threshold: f64) -> Change {
    let valid = |v: f64| v.is_finite().then_some(v);
    ch.low = a.test.and(valid(a.interval.low));
    ch.high = a.test.and(valid(a.interval.high));
    ch.p = a.test.map(|t| t.p);
    ch.p_adjusted = a.p_adjusted;
    ch.method = a.test.map(|t| t.method.name().to_string());
    (ch.verdict, ch.reason) = verdict_of(
        a,
        higher_is_better,
        (&ch.figure, &ch.before, &ch.after),
        threshold,
    );
    ch
}

/// The drift-corrected judgement of a case whose probe was divided out.
/// A correction never turns a change into one of the other direction:
/// when the corrected ratio crosses 1, the drift accounts for all of it.
fn adjusted_of(
    ch: &Change,
    a: &Assessment,
    probe: &str,
    higher_is_better: bool,
    threshold: f64,
) -> Adjusted {
    let valid = |v: f64| v.is_finite().then_some(v);
    let (mut verdict, mut reason) = verdict_of(
        a,
        higher_is_better,
        (&ch.figure, &ch.before, &ch.after),
        threshold,
    );
    let raw_up = ch.ratio > 1.0;
    let crossed = matches!(a.call, Call::Up | Call::Down) && (a.call == Call::Up) != raw_up;
    if crossed {
        verdict = Verdict::WithinNoise;
        reason = format!(
            "the machine's drift ({probe} probe) accounts for all of the change: corrected {}",
            ratio_text(
                a.interval.ratio,
                valid(a.interval.low),
                valid(a.interval.high)
            )
        );
    }
    Adjusted {
        probe: probe.to_string(),
        ratio: a.interval.ratio,
        low: a.test.and(valid(a.interval.low)),
        high: a.test.and(valid(a.interval.high)),
        p_adjusted: a.p_adjusted,
        verdict,
        reason,
    }
}

/// One side of a comparison: its results' figures. With one result, a
/// case's samples are its rounds; with several, each sample is one
/// result's median of the case (run-level: what varies between reruns).
struct Sides {
    measures: Vec<Measure>,
    /// How many results (or runs of a `--runs K` result) the side holds.
    results: usize,
    /// The reference probes' samples, likewise per round or per result.
    probes: Option<MachineReference>,
}

/// Every figure of one side, and its probes.
fn side_measures(docs: &[ResultDocument]) -> Sides {
    // A result of several independent runs (`quick --runs K`) is K results.
    let split: Vec<ResultDocument> = docs.iter().flat_map(super::figures::runs_apart).collect();
    let docs = split.as_slice();
    if let [doc] = docs {
        return Sides {
            results: 1,
            measures: measures(doc),
            probes: doc.environment.reference.clone(),
        };
    }
    let per_doc: Vec<Vec<Measure>> = docs.iter().map(measures).collect();
    let mut out: Vec<Measure> = Vec::new();
    for m in per_doc.iter().flatten() {
        if m.samples.is_empty() {
            continue;
        }
        let value = median(&m.samples);
        match out
            .iter_mut()
            .find(|o| o.key == m.key && o.figure == m.figure)
        {
            Some(o) => o.samples.push(value),
            None => out.push(Measure {
                samples: vec![value],
                ..m.clone()
            }),
        }
    }
    let references: Vec<&MachineReference> = docs
        .iter()
        .filter_map(|d| d.environment.reference.as_ref())
        .collect();
    let probes = (references.len() == docs.len()).then(|| MachineReference {
        cpu_ns: references.iter().map(|r| median(&r.cpu_ns)).collect(),
        flush_ns: references
            .iter()
            .filter(|r| !r.flush_ns.is_empty())
            .map(|r| median(&r.flush_ns))
            .collect(),
        run_ends: Vec::new(),
    });
    Sides {
        measures: out,
        results: docs.len(),
        probes,
    }
}

/// Why several results of one side cannot stand for one another (they
/// measured different things), or None: `compare a1 a2 -- b1 b2` needs
/// reruns of one command with the same options on each side.
pub fn inconsistent_side(docs: &[ResultDocument], names: &[String]) -> Option<String> {
    let first = docs.first()?;
    let base = document_conditions(first);
    for (doc, name) in docs.iter().zip(names).skip(1) {
        if let Some((f, a, b)) = differing(&base, &document_conditions(doc)).first() {
            return Some(format!(
                "{} and {name} measured different things ({f}: {a} vs {b}); several results on one side must be reruns of the same command and options",
                names[0]
            ));
        }
    }
    None
}

/// Compares every case present in both results: [`compare_many`] with one
/// result a side.
pub fn compare(before: &ResultDocument, after: &ResultDocument, threshold: f64) -> Comparison {
    compare_many(
        std::slice::from_ref(before),
        std::slice::from_ref(after),
        threshold,
    )
}

/// Compares every case present on both sides. A case is judged only when
/// both sides measured the same thing (else "not comparable", naming the
/// field) and both have at least 4 samples (else "insufficient data"); a
/// change is faster or slower only when the Mann-Whitney test, Holm-
/// corrected within the case's section, gives p < 0.05 and the whole
/// bootstrap interval of the ratio lies beyond `threshold` (0.05 = 5%).
/// Every case gets this unadjusted verdict; a case whose drift probe moved
/// (same machine, same direction, beyond the probe's noise) also gets a
/// drift-corrected one beside it.
pub fn compare_many(
    before: &[ResultDocument],
    after: &[ResultDocument],
    threshold: f64,
) -> Comparison {
    compare_cases(before, after, threshold, &[])
}

/// [`compare_many`] of only the cases whose label contains one of `only`
/// (every case when empty): the cases a change could have moved, tested
/// as their own family, so the Holm correction and the simultaneous
/// intervals span those cases alone and a small change in one of them
/// needs fewer samples to be found.
pub fn compare_cases(
    before: &[ResultDocument],
    after: &[ResultDocument],
    threshold: f64,
    only: &[String],
) -> Comparison {
    let (Some(first_before), Some(first_after)) = (before.first(), after.first()) else {
        return Comparison::default();
    };
    let (sb, sa) = (side_measures(before), side_measures(after));
    let (b, a) = (&sb.measures, &sa.measures);
    let not_same_machine = machine_differences(before, after);
    let drift = machine_drift(&sb, &sa, &not_same_machine);
    let not_comparable = differing(
        &document_conditions(first_before),
        &document_conditions(first_after),
    );
    let pairs: Vec<(&Measure, &Measure)> = b
        .iter()
        .filter_map(|mb| {
            let ma = a
                .iter()
                .find(|m| m.key == mb.key && m.figure == mb.figure)?;
            Some((mb, ma))
        })
        .collect();
    let pairs = only_named(pairs, only);
    // Why each pair is not comparable (empty: it is).
    let reasons: Vec<Vec<(String, String, String)>> = pairs
        .iter()
        .map(|(mb, ma)| {
            let mut r = not_comparable.clone();
            r.extend(differing(&mb.conditions, &ma.conditions));
            r
        })
        .collect();
    let mut sections: Vec<&str> = pairs.iter().map(|(mb, _)| mb.section.as_str()).collect();
    sections.sort_unstable();
    sections.dedup();
    let comparable: Vec<&(&Measure, &Measure)> = pairs
        .iter()
        .zip(&reasons)
        .filter(|(_, r)| r.is_empty())
        .map(|(p, _)| p)
        .collect();
    // Each comparable case twice: as measured, and divided by its drift
    // probe where that applies (the same case otherwise).
    let raw: Vec<Case> = comparable
        .iter()
        .map(|(mb, ma)| case_of(mb, ma, &sections))
        .collect();
    let corrected: Vec<Case> = comparable
        .iter()
        .zip(&raw)
        .map(|((mb, ma), c)| Case {
            probe: correction_for(mb, ma, &drift, &sb, &sa),
            ..*c
        })
        .collect();
    let family = assess(&raw, threshold);
    let corrected_family = assess(&corrected, threshold);
    let mut assessed = family.cases.iter().zip(&corrected_family.cases);
    // How many cases each section compares together (Holm's family).
    let section_sizes: Vec<(&str, usize)> = sections
        .iter()
        .map(|&s| {
            let n = comparable.iter().filter(|(mb, _)| mb.section == s).count();
            (s, n)
        })
        .collect();
    let changes = pairs
        .iter()
        .zip(&reasons)
        .map(|((mb, ma), why)| {
            let (before_side, after_side) = (
                side_of(&mb.samples, sb.results),
                side_of(&ma.samples, sa.results),
            );
            let ch = Change {
                label: mb.label.clone(),
                figure: mb.figure.to_string(),
                ratio: after_side.median / before_side.median,
                before: before_side,
                after: after_side,
                verdict: Verdict::NotComparable,
                reason: not_comparable_reason(why),
                low: None,
                high: None,
                p: None,
                p_adjusted: None,
                method: None,
                adjusted: None,
                injected: injected_text(mb, ma),
                samples_to_decide: None,
            };
            // Assessments follow the comparable pairs in order.
            let Some((x, y)) = why.is_empty().then(|| assessed.next()).flatten() else {
                return ch;
            };
            let mut ch = judged(ch, x, mb.higher_is_better, threshold);
            if let Some(probe) = applied_probe(mb, ma, &drift) {
                ch.adjusted = Some(adjusted_of(&ch, y, probe, mb.higher_is_better, threshold));
            }
            if matches!(ch.verdict, Verdict::WithinNoise | Verdict::InsufficientData)
                && !single_valued(&ch.figure)
            {
                let family = section_sizes
                    .iter()
                    .find(|(s, _)| *s == mb.section)
                    .map_or(1, |(_, n)| *n);
                ch.samples_to_decide =
                    samples_to_decide(&mb.samples, &ma.samples, threshold, family);
            }
            ch
        })
        .collect::<Vec<_>>();
    let only = |x: &[Measure], y: &[Measure]| -> Vec<String> {
        x.iter()
            .filter(|m| !y.iter().any(|o| o.key == m.key && o.figure == m.figure))
            .map(|m| m.label.clone())
            .collect()
    };
    Comparison {
        notes: notes(
            &changes,
            &family,
            &drift,
            (before.len().max(after.len()), threshold),
        ),
        only_before: only(b, a),
        only_after: only(a, b),
        changes,
        differences: differences(first_before, first_after),
        threshold,
        not_comparable,
        method: Some(Box::new(method_of(&family))),
        drift,
        not_same_machine,
        results: (before.len(), after.len()),
    }
}

/// The pairs `only` names (all when it is empty): each name selects the
/// case of exactly that label, or, when no label is exactly it, every
/// case whose label contains it ("read sql" is one case; "read" all reads).
fn only_named<'a>(
    pairs: Vec<(&'a Measure, &'a Measure)>,
    only: &[String],
) -> Vec<(&'a Measure, &'a Measure)> {
    if only.is_empty() {
        return pairs;
    }
    // Each name once: exactly a label, or else a part of labels.
    let exact: Vec<(&str, bool)> = only
        .iter()
        .map(|name| (name.as_str(), pairs.iter().any(|(m, _)| m.label == *name)))
        .collect();
    pairs
        .into_iter()
        .filter(|(m, _)| {
            exact.iter().any(|&(name, exact)| {
                if exact {
                    m.label == name
                } else {
                    m.label.contains(name)
                }
            })
        })
        .collect()
}

/// Which side ran the case with an injected cost, and how much.
fn injected_text(mb: &Measure, ma: &Measure) -> Option<String> {
    match (&mb.injected, &ma.injected) {
        (None, None) => None,
        (Some(b), None) => Some(format!("before {b}")),
        (None, Some(a)) => Some(format!("after {a}")),
        (Some(b), Some(a)) => Some(format!("before {b}, after {a}")),
    }
}

/// A comparable pair as the rule takes it, in its section, uncorrected.
fn case_of<'a>(mb: &'a Measure, ma: &'a Measure, sections: &[&str]) -> Case<'a> {
    Case {
        before: &mb.samples,
        after: &ma.samples,
        seed: seed_of(&format!("{} | {}", mb.key, mb.figure)),
        section: sections.binary_search(&mb.section.as_str()).unwrap_or(0),
        probe: None,
    }
}

/// Fields that make two results come from different machines or setups:
/// a drift measured across them is not the same machine's drift.
fn machine_differences(
    before: &[ResultDocument],
    after: &[ResultDocument],
) -> Vec<(String, String, String)> {
    let fields = |d: &ResultDocument| -> Vec<(&'static str, String)> {
        let e = &d.environment;
        let fs = e.filesystem.clone().unwrap_or_default();
        vec![
            ("host", e.hostname.clone()),
            ("cpu", e.cpu_model.clone()),
            ("kernel", e.kernel.clone()),
            ("blobbench", e.blobbench_version.clone()),
            ("filesystem", format!("{} on {}", fs.fs_type, fs.device)),
            ("mount options", fs.mount_options.clone()),
            ("i/o scheduler", fs.io_scheduler.clone().unwrap_or_default()),
            ("cpu governor", e.cpu_governor.clone().unwrap_or_default()),
        ]
    };
    let Some(first) = before.first() else {
        return Vec::new();
    };
    let base = fields(first);
    let mut out: Vec<(String, String, String)> = Vec::new();
    for d in before.iter().skip(1).chain(after) {
        for (f, b, a) in differing(&base, &fields(d)) {
            if !out.iter().any(|(o, ..)| *o == f) {
                out.push((f, b, a));
            }
        }
    }
    out
}

/// The coefficient of variation of samples (sd / mean).
fn spread(samples: &[f64]) -> f64 {
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    var.sqrt() / mean
}

/// The machine's drift between the two sides, one entry per reference
/// probe both recorded with at least [`MIN_SAMPLES`] samples.
fn machine_drift(
    before: &Sides,
    after: &Sides,
    not_same_machine: &[(String, String, String)],
) -> Vec<Drift> {
    let (Some(rb), Some(ra)) = (&before.probes, &after.probes) else {
        return Vec::new();
    };
    [
        ("cpu", &rb.cpu_ns, &ra.cpu_ns),
        ("flush", &rb.flush_ns, &ra.flush_ns),
    ]
    .into_iter()
    .filter(|(_, b, a)| b.len() >= MIN_SAMPLES && a.len() >= MIN_SAMPLES)
    .map(|(probe, b, a)| {
        let i = median_ratio_interval(b, a, seed_of(probe));
        let moved = i.low > 1.0 || i.high < 1.0;
        let why_not = if !moved {
            "the probe did not move beyond its own noise".to_string()
        } else if let Some((f, x, y)) = not_same_machine.first() {
            format!("not the same machine: {f} {x} -> {y}")
        } else {
            String::new()
        };
        Drift {
            probe: probe.to_string(),
            ratio: i.ratio,
            low: i.low,
            high: i.high,
            moved,
            applied: moved && why_not.is_empty(),
            why_not,
            spread: Some((spread(b), spread(a))),
            samples: (b.len(), a.len()),
        }
    })
    .filter(|d| d.ratio.is_finite())
    .collect()
}

/// The probe whose drift applies to a case: the durable-write probe for a
/// case that waits for the disk, the CPU probe otherwise; only when that
/// probe's drift was applied and it moved the same way as the case.
fn applied_probe<'d>(mb: &Measure, ma: &Measure, drift: &'d [Drift]) -> Option<&'d str> {
    let kind = if mb.flushes { "flush" } else { "cpu" };
    let d = drift.iter().find(|d| d.probe == kind && d.applied)?;
    // A slower machine makes times larger and rates smaller.
    let case_ratio = median(&ma.samples) / median(&mb.samples);
    let case_slower = (case_ratio > 1.0) != mb.higher_is_better;
    let machine_slower = d.ratio > 1.0;
    (case_slower == machine_slower && case_ratio != 1.0).then_some(d.probe.as_str())
}

/// A probe's samples, before and after.
type ProbeSamples<'s> = (&'s [f64], &'s [f64]);

/// The probe samples (before, after) to divide a case's ratio by, when
/// its drift applies; for a rate the probe's time ratio is inverted.
fn correction_for<'s>(
    mb: &Measure,
    ma: &Measure,
    drift: &[Drift],
    before: &'s Sides,
    after: &'s Sides,
) -> Option<ProbeSamples<'s>> {
    let probe = applied_probe(mb, ma, drift)?;
    let (rb, ra) = (before.probes.as_ref()?, after.probes.as_ref()?);
    let pick = |r: &'s MachineReference| -> &'s [f64] {
        if probe == "flush" {
            &r.flush_ns
        } else {
            &r.cpu_ns
        }
    };
    // A rate moves against the probe's time: swap the sides of the probe.
    Some(if mb.higher_is_better {
        (pick(ra), pick(rb))
    } else {
        (pick(rb), pick(ra))
    })
}

/// "not comparable: field before -> after; ..." for a case's differing fields.
fn not_comparable_reason(why: &[(String, String, String)]) -> String {
    let fields: Vec<String> = why
        .iter()
        .map(|(f, b, a)| format!("{f} {b} -> {a}"))
        .collect();
    format!("not comparable: {}", fields.join("; "))
}

/// The probe's name as a reader knows it.
fn probe_name(probe: &str) -> &'static str {
    if probe == "cpu" {
        "CPU/memory probe"
    } else {
        "durable-write probe"
    }
}

/// What the machine's drift did: each probe that moved, whether it was
/// applied, and a probe whose own noise makes its figure loose.
fn drift_notes(drift: &[Drift]) -> Vec<String> {
    let mut out = Vec::new();
    for d in drift {
        let figure = ratio_text(d.ratio, Some(d.low), Some(d.high));
        let what = probe_name(&d.probe);
        if d.applied {
            out.push(format!(
                "the machine itself moved between the results ({what} {figure}): cases of its kind that moved the same way also get a drift-corrected verdict (their ratio divided by the probe's); the verdict column is uncorrected"
            ));
        } else if d.moved {
            out.push(format!(
                "the {what} moved ({figure}) but is not applied: {}; the drift is shown, every verdict is uncorrected",
                d.why_not
            ));
        }
        if let Some((b, a)) = d.spread.filter(|(b, a)| b.max(*a) > 0.5) {
            out.push(format!(
                "the {what} is itself noisy within a result (spread {:.0}% before, {:.0}% after over {} and {} samples): its drift figure is loose",
                b * 100.0,
                a * 100.0,
                d.samples.0,
                d.samples.1
            ));
        }
    }
    out
}

/// What the reader must know to read the verdicts: the drift, no case
/// could reach significance, or some had too few samples.
fn notes(
    changes: &[Change],
    family: &Family,
    drift: &[Drift],
    (results, threshold): (usize, f64),
) -> Vec<String> {
    let mut out = drift_notes(drift);
    let tested = changes.iter().filter(|c| c.p.is_some());
    let ns: Vec<usize> = tested.flat_map(|c| [c.before.n, c.after.n]).collect();
    if family.tested > 0 && family.best_possible_p >= ALPHA {
        let (lo, hi) = (
            ns.iter().min().copied().unwrap_or(0),
            ns.iter().max().copied().unwrap_or(0),
        );
        let n = if lo == hi {
            format!("n={lo}")
        } else {
            format!("n={lo}..{hi}")
        };
        out.push(format!(
            "cannot reach significance with {} cases at {n}: the smallest adjusted p possible is {}; need more rounds",
            family.tested,
            p_text(family.best_possible_p)
        ));
    }
    let needed: Vec<usize> = changes.iter().filter_map(|c| c.samples_to_decide).collect();
    if let (Some(lo), Some(hi)) = (needed.iter().min(), needed.iter().max()) {
        let span = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        };
        let what = if results > 1 {
            "results a side (or quick --runs K)"
        } else {
            "rounds a side with one result (between runs: results a side, or quick --runs K)"
        };
        out.push(format!(
            "{} case(s) undecided: at their spread, a change of {}% would be significant 80% of the time with about {span} {what}",
            needed.len(),
            percent_text(threshold)
        ));
    }
    let few = changes
        .iter()
        .filter(|c| c.verdict == Verdict::InsufficientData && !single_valued(&c.figure))
        .count();
    if few > 0 {
        let more = if results > 1 {
            "compare at least 4 results a side"
        } else {
            "measure more rounds or repetitions"
        };
        out.push(format!(
            "{few} case(s) have fewer than {MIN_SAMPLES} samples on a side: insufficient data, no verdict; {more}"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figures::AGING_READ_FIGURE;
    use crate::result::ResultKind;
    use serde_json::json;

    /// A document from its JSON form, with the fields every result has.
    fn doc(mut v: Value) -> ResultDocument {
        v["schema"] = "blobbench-result".into();
        v["environment"] = json!({});
        serde_json::from_value(v).expect("a result document")
    }

    /// A lob result with these write samples and five equal reads.
    fn lob(samples: &[f64]) -> ResultDocument {
        doc(json!({"command": "suite lob", "tables": {"lob": [
            {"system": "sqlite", "size": 1000, "write_ns": samples, "read_ns": [5.0, 5.0, 5.0, 5.0, 5.0]}
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

    /// A `quick` document holding just these runs.
    fn quick(runs: Vec<Value>) -> ResultDocument {
        let mut d = ResultDocument::new(
            ResultKind::Quick,
            Default::default(),
            Tables::Other(Value::Null),
        );
        d.runs = runs
            .into_iter()
            .map(|r| serde_json::from_value(r).unwrap())
            .collect();
        d
    }

    fn change<'a>(c: &'a Comparison, op: &str) -> &'a Change {
        c.changes.iter().find(|x| x.label.ends_with(op)).unwrap()
    }

    /// `d` with reference probes of every round scaled by `cpu` and `flush`.
    fn probed(d: ResultDocument, cpu: f64, flush: f64) -> ResultDocument {
        probed_with(d, &[1.0, 1.02, 0.99, 1.01, 0.98, 1.0, 1.03], cpu, flush)
    }

    /// `d` with reference probes drawn from `jitter`, scaled by `cpu` and `flush`.
    fn probed_with(mut d: ResultDocument, jitter: &[f64], cpu: f64, flush: f64) -> ResultDocument {
        d.environment.reference = Some(MachineReference {
            cpu_ns: jitter.iter().map(|j| 1e6 * cpu * j).collect(),
            flush_ns: jitter.iter().map(|j| 2e6 * flush * j).collect(),
            run_ends: Vec::new(),
        });
        d
    }

    const BEFORE: [f64; 7] = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0];

    fn scaled(k: f64) -> Vec<f64> {
        BEFORE.iter().map(|v| v * k).collect()
    }

    #[test]
    fn identical_probes_never_excuse_a_slower_durable_write() {
        // The demonstration of issue 27: drift exactly 1.00x, the durable
        // write 1.5x and 2x slower: both called slower, nothing corrected.
        for k in [1.5, 2.0] {
            let c = compare(
                &probed(lob(&BEFORE), 1.0, 1.0),
                &probed(lob(&scaled(k)), 1.0, 1.0),
                0.10,
            );
            let w = change(&c, "write");
            assert_eq!(w.verdict, Verdict::Worse, "x{k}: {w:?}");
            assert!(w.adjusted.is_none(), "{w:?}");
            assert!(
                c.drift.iter().all(|d| !d.moved && !d.applied),
                "{:?}",
                c.drift
            );
        }
        // Probe noise alone (the same spread, shuffled, on each side): no
        // allowance either.
        let other = [1.03, 0.98, 1.0, 1.02, 0.99, 1.01, 1.0];
        let c = compare(
            &probed(lob(&BEFORE), 1.0, 1.0),
            &probed_with(lob(&scaled(1.2)), &other, 1.0, 1.0),
            0.10,
        );
        assert_eq!(change(&c, "write").verdict, Verdict::Worse, "{c:?}");
        assert!(change(&c, "write").adjusted.is_none());
    }

    #[test]
    fn a_drift_in_the_cases_direction_is_divided_out_beside_the_raw_verdict() {
        // The durable-write probe 1.25x slower on the same machine.
        let c = compare(
            &probed(lob(&BEFORE), 1.0, 1.0),
            &probed(lob(&scaled(1.2)), 1.0, 1.25),
            0.05,
        );
        let flush = c.drift.iter().find(|d| d.probe == "flush").unwrap();
        assert!(flush.moved && flush.applied, "{flush:?}");
        let w = change(&c, "write");
        // Uncorrected: slower. Corrected: 1.2 / 1.25 < 1, the drift explains it.
        assert_eq!(w.verdict, Verdict::Worse, "{w:?}");
        let a = w.adjusted.as_ref().expect("corrected");
        assert_eq!(a.probe, "flush");
        assert!((a.ratio - 1.2 / 1.25).abs() < 0.01, "{a:?}");
        assert_eq!(a.verdict, Verdict::WithinNoise, "{a:?}");
        // Corrected past 1 (1.1 / 1.25 = 0.88): never "faster", the drift
        // accounts for all of it.
        let c = compare(
            &probed(lob(&BEFORE), 1.0, 1.0),
            &probed(lob(&scaled(1.1)), 1.0, 1.25),
            0.05,
        );
        let a = change(&c, "write").adjusted.clone().unwrap();
        assert_eq!(a.verdict, Verdict::WithinNoise, "{a:?}");
        assert!(a.reason.contains("accounts for all"), "{}", a.reason);
        // A larger slowdown stays slower once corrected: 1.6 / 1.25 = 1.28.
        let c = compare(
            &probed(lob(&BEFORE), 1.0, 1.0),
            &probed(lob(&scaled(1.6)), 1.0, 1.25),
            0.05,
        );
        let a = change(&c, "write").adjusted.clone().unwrap();
        assert_eq!(a.verdict, Verdict::Worse, "{a:?}");
        assert!(
            (a.ratio - 1.28).abs() < 0.01 && a.low.unwrap() > 1.05,
            "{a:?}"
        );
        // Reads answer to the CPU probe only: a flush drift leaves them alone.
        let with_reads = |reads: &[f64]| {
            let mut d = lob(&BEFORE);
            if let Tables::Lob(t) = &mut d.tables {
                t.lob[0].read_ns = reads.iter().map(|&v| v as u64).collect();
            }
            d
        };
        let c = compare(
            &probed(with_reads(&BEFORE), 1.0, 1.0),
            &probed(with_reads(&scaled(1.2)), 1.0, 1.25),
            0.05,
        );
        assert_eq!(change(&c, "read").verdict, Verdict::Worse);
        assert!(change(&c, "read").adjusted.is_none());
    }

    #[test]
    fn a_drift_the_other_way_or_on_another_setup_is_not_applied() {
        // The machine 2x faster, the case 1.5x slower: nothing to excuse.
        let c = compare(
            &probed(lob(&BEFORE), 1.0, 1.0),
            &probed(lob(&scaled(1.5)), 0.5, 0.5),
            0.05,
        );
        let w = change(&c, "write");
        assert_eq!(w.verdict, Verdict::Worse);
        assert!(w.adjusted.is_none(), "{w:?}");
        // Another kernel (or mount options, governor, scheduler, version,
        // host): the drift is shown, not applied, and the field is named.
        for field in ["kernel", "mount options", "blobbench"] {
            let mut after = probed(lob(&scaled(1.2)), 1.0, 1.25);
            let e = &mut after.environment;
            match field {
                "kernel" => e.kernel = "Linux 6.99".into(),
                "blobbench" => e.blobbench_version = "9.9.9".into(),
                _ => {
                    e.filesystem = Some(crate::measure::environment::Filesystem {
                        mount_options: "rw,sync".into(),
                        ..Default::default()
                    })
                }
            }
            let c = compare(&probed(lob(&BEFORE), 1.0, 1.0), &after, 0.05);
            let w = change(&c, "write");
            assert_eq!(w.verdict, Verdict::Worse, "{field}");
            assert!(w.adjusted.is_none(), "{field}: {w:?}");
            let flush = c.drift.iter().find(|d| d.probe == "flush").unwrap();
            assert!(flush.moved && !flush.applied, "{flush:?}");
            assert!(flush.why_not.contains("not the same machine"), "{flush:?}");
            assert!(c.not_same_machine.iter().any(|(f, ..)| f == field), "{c:?}");
        }
        // Without probes on both sides there is no drift at all.
        let unprobed = compare(&lob(&BEFORE), &probed(lob(&scaled(1.2)), 1.0, 1.25), 0.05);
        assert!(unprobed.drift.is_empty());
        assert_eq!(change(&unprobed, "write").verdict, Verdict::Worse);
    }

    #[test]
    fn a_noisy_probe_is_reported() {
        let wild = [0.2, 3.0, 1.0, 0.3, 2.5, 1.0, 0.4];
        let c = compare(
            &probed_with(lob(&BEFORE), &wild, 1.0, 1.0),
            &probed_with(lob(&BEFORE), &wild, 1.0, 1.0),
            0.05,
        );
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("durable-write probe is itself noisy")),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn several_results_a_side_compare_their_medians() {
        let runs = |k: f64| -> Vec<ResultDocument> {
            (0..5)
                .map(|i| lob(&scaled(k * (1.0 + 0.01 * f64::from(i)))))
                .collect()
        };
        let c = compare_many(&runs(1.0), &runs(1.5), 0.05);
        let w = change(&c, "write");
        assert_eq!((w.before.n, w.after.n), (5, 5), "{w:?}");
        assert_eq!(w.verdict, Verdict::Worse, "{w:?}");
        assert_eq!(c.results, (5, 5));
        // Each side says what its samples are: here, results (between
        // runs); with one result a side, that result's rounds.
        assert_eq!(w.before.samples_are.as_deref(), Some(SAMPLES_ARE_RESULTS));
        let one = compare(&runs(1.0)[0], &runs(1.5)[0], 0.05);
        let w = change(&one, "write");
        assert_eq!(w.after.samples_are.as_deref(), Some(SAMPLES_ARE_ROUNDS));
        // Three a side: one sample per result, too few for a verdict.
        let c = compare_many(&runs(1.0)[..3], &runs(1.5)[..3], 0.05);
        assert_eq!(change(&c, "write").verdict, Verdict::InsufficientData);
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("at least 4 results a side")),
            "{:?}",
            c.notes
        );
        // Results of one side must be reruns of one thing.
        let mut odd = runs(1.0);
        odd[1] = aging(1.0, 2.0);
        let names: Vec<String> = (0..5).map(|i| format!("a{i}.json")).collect();
        let why = inconsistent_side(&odd, &names).expect("inconsistent");
        assert!(
            why.contains("a0.json and a1.json") && why.contains("command"),
            "{why}"
        );
        assert!(inconsistent_side(&runs(1.0), &names).is_none());
    }

    #[test]
    fn a_change_counts_only_when_significant_and_beyond_the_threshold() {
        let before = lob(&[100.0, 105.0, 110.0, 102.0, 108.0]);
        let verdict = |after: &[f64], threshold: f64| {
            change(&compare(&before, &lob(after), threshold), "write").verdict
        };
        // Faster and fully separated: exact p 2/252, Holm over write and read.
        let c = compare(&before, &lob(&[70.0, 72.0, 75.0, 71.0, 74.0]), 0.05);
        let w = change(&c, "write");
        assert_eq!(w.verdict, Verdict::Better, "{w:?}");
        assert!((w.ratio - 72.0 / 105.0).abs() < 1e-9);
        assert!((w.p.unwrap() - 2.0 / 252.0).abs() < 1e-9);
        assert!((w.p_adjusted.unwrap() - 4.0 / 252.0).abs() < 1e-9);
        assert_eq!(w.method.as_deref(), Some("mann-whitney-exact"));
        let (lo, hi) = (w.low.unwrap(), w.high.unwrap());
        assert!(lo <= w.ratio && w.ratio <= hi && hi < 1.0 / 1.05, "{w:?}");
        assert_eq!(c.method.as_ref().unwrap().tested, 2);
        // Faster median, but the samples interleave (U = 3: p 0.056).
        assert_eq!(
            verdict(&[80.0, 90.0, 104.0, 95.0, 101.0], 0.05),
            Verdict::WithinNoise
        );
        // Separated, but the interval reaches inside the 10% threshold.
        let slight = [111.0, 112.0, 113.0, 114.0, 115.0];
        assert_eq!(verdict(&slight, 0.10), Verdict::WithinNoise);
        // An undecided case says how many samples a side would decide a
        // change of the threshold's size; a decided one does not.
        let c = compare(&before, &lob(&[80.0, 90.0, 104.0, 95.0, 101.0]), 0.05);
        let w = change(&c, "write");
        assert!(w.samples_to_decide.is_some_and(|n| n > 5), "{w:?}");
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("a change of 5% would be significant 80% of the time")),
            "{:?}",
            c.notes
        );
        let c = compare(&before, &lob(&[70.0, 72.0, 75.0, 71.0, 74.0]), 0.05);
        assert_eq!(change(&c, "write").samples_to_decide, None);
        let c = compare(&before, &lob(&[150.0, 160.0, 170.0, 155.0, 165.0]), 0.05);
        assert_eq!(change(&c, "write").verdict, Verdict::Worse);
        // The identical read figures are within noise (all tied: p = 1).
        assert_eq!(change(&c, "read").verdict, Verdict::WithinNoise);
        assert_eq!(change(&c, "read").p, Some(1.0));
        // The same comparison twice gives the same interval.
        assert_eq!(
            c,
            compare(&before, &lob(&[150.0, 160.0, 170.0, 155.0, 165.0]), 0.05)
        );
    }

    #[test]
    fn three_samples_a_side_are_insufficient_data() {
        let c = compare(
            &lob(&[100.0, 101.0, 102.0]),
            &lob(&[150.0, 151.0, 152.0]),
            0.05,
        );
        let w = change(&c, "write");
        assert_eq!(w.verdict, Verdict::InsufficientData);
        assert!(
            w.reason.contains("3 sample(s) before, 3 after"),
            "{}",
            w.reason
        );
        assert!(w.p.is_none() && w.low.is_none());
        assert!(
            c.notes.iter().any(|n| n.contains("insufficient data")),
            "{c:?}"
        );
    }

    #[test]
    fn many_cases_at_five_samples_say_they_cannot_reach_significance() {
        // Twelve fully separated cases of 5 vs 5: Holm needs p < 0.05/12,
        // below the smallest exact p of 2/252.
        let rows = |scale: f64| -> Vec<Value> {
            (0..6)
                .map(|i| json!({"system": "sqlite", "size": 1000 + i,
                    "write_ns": [100.0 * scale, 101.0 * scale, 102.0 * scale, 103.0 * scale, 104.0 * scale],
                    "read_ns": [10.0 * scale, 11.0 * scale, 12.0 * scale, 13.0 * scale, 14.0 * scale]}))
                .collect()
        };
        let lob = |scale| doc(json!({"command": "suite lob", "tables": {"lob": rows(scale)}}));
        let c = compare(&lob(1.0), &lob(2.0), 0.05);
        assert_eq!(c.changes.len(), 12);
        assert!(c.changes.iter().all(|x| x.verdict == Verdict::WithinNoise));
        let note = c.notes.first().expect("a note");
        assert!(
            note.contains("cannot reach significance with 12 cases at n=5"),
            "{note}"
        );
        assert!(c.changes[0].reason.contains("need more rounds"));
    }

    #[test]
    fn runs_match_by_settings_not_by_paths_or_rounds() {
        let run = |path: &str, round: u32, ns: f64| {
            run_record(&format!("read sql (round {round})"), path, ns)
        };
        let before = quick(
            [100.0, 110.0, 105.0, 108.0]
                .iter()
                .enumerate()
                .map(|(i, &ns)| run("/tmp/a/q.db", i as u32 + 1, ns))
                .collect(),
        );
        let after = quick(
            [50.0, 52.0, 51.0, 53.0]
                .iter()
                .enumerate()
                .map(|(i, &ns)| run("/home/b/q.db", i as u32 + 1, ns))
                .collect(),
        );
        let c = compare(&before, &after, 0.05);
        assert_eq!(c.changes.len(), 1, "{c:?}");
        assert_eq!(c.changes[0].before.n, 4);
        assert_eq!(c.changes[0].verdict, Verdict::Better, "{c:?}");
        assert!(c.only_before.is_empty() && c.only_after.is_empty());
    }

    #[test]
    fn different_data_is_not_comparable_and_says_which_field() {
        let runs = |count: u64| {
            quick(
                (1..=4)
                    .map(|i| {
                        let mut r = run_record(&format!("read sql (round {i})"), "q.db", 100.0);
                        r["catalog"]["count"] = json!(count);
                        r
                    })
                    .collect(),
            )
        };
        let c = compare(&runs(2000), &runs(5000), 0.05);
        assert_eq!(c.changes[0].verdict, Verdict::NotComparable);
        assert!(
            c.changes[0].reason.contains("blob count 2000 -> 5000"),
            "{}",
            c.changes[0].reason
        );
        assert_eq!(c.method.as_ref().unwrap().tested, 0);
        // A dataset that differs makes every case not comparable.
        let with_dataset = |count: u64| {
            doc(
                json!({"command": "suite http", "tables": {"http": [], "duration_ns": 1,
                "dataset": {"count": count, "size": 1000, "distribution": {"kind": "fixed"}, "first_key": 1, "seed": 1}}}),
            )
        };
        let c = compare(&with_dataset(50), &with_dataset(60), 0.05);
        assert_eq!(c.not_comparable.len(), 1, "{c:?}");
        assert_eq!(c.not_comparable[0].0, "dataset");
        // Hosts that differ are only a difference.
        let mut other = lob(&[1.0; 5]);
        other.environment.hostname = "server".into();
        let c = compare(&lob(&[1.0; 5]), &other, 0.05);
        assert!(c.not_comparable.is_empty());
        assert_eq!(c.differences[0].0, "host");
        assert!(c.changes.iter().all(|x| x.verdict == Verdict::WithinNoise));
    }

    /// An aging result of sqlite and dir at 100K, reads scaled by `scale`
    /// and fragments per blob `fragments`.
    fn aging(scale: f64, fragments: f64) -> ResultDocument {
        use crate::result::aging::sample::{point, series, tables};
        let reads: Vec<f64> = [140.0, 142.0, 139.0, 141.0, 143.0]
            .iter()
            .map(|r| r * scale)
            .collect();
        let mut p = point(0.0, &reads);
        p.fragments.mean = fragments;
        let t = tables(vec![
            series("sqlite", 100_000, vec![p.clone()]),
            series("dir", 100_000, vec![p]),
        ]);
        ResultDocument::new(ResultKind::Aging, Default::default(), Tables::Aging(t))
    }

    #[test]
    fn aging_reads_are_tested_and_fragments_shown_untested() {
        let c = compare(&aging(1.0, 2.0), &aging(0.5, 3.0), 0.05);
        assert_eq!(c.changes.len(), 4, "{c:?}");
        let read = change(&c, "sqlite on ext4, 100.0 kB, 50% full age 0 read");
        assert_eq!(read.figure, AGING_READ_FIGURE);
        // Two fully separated cases of 5: p 2/252 x 2 < 0.05.
        assert_eq!(read.verdict, Verdict::Worse, "{read:?}");
        let frags = change(&c, "sqlite on ext4, 100.0 kB, 50% full age 0 fragments");
        assert_eq!(frags.verdict, Verdict::InsufficientData);
        assert!((frags.ratio - 1.5).abs() < 1e-9);
        assert!(
            frags
                .reason
                .contains("one value a side (2.00 before, 3.00 after)"),
            "{}",
            frags.reason
        );
        assert!(c.notes.is_empty(), "no advice to add rounds: {:?}", c.notes);
        // Another volume is not comparable, naming the field.
        let mut big = aging(1.0, 2.0);
        if let Tables::Aging(t) = &mut big.tables {
            t.volumes[0].size_bytes = 1 << 30;
        }
        let c = compare(&aging(1.0, 2.0), &big, 0.05);
        assert_eq!(c.not_comparable[0].0, "volume size", "{c:?}");
        assert!(
            c.changes
                .iter()
                .all(|x| x.verdict == Verdict::NotComparable)
        );
    }

    #[test]
    fn ratios_are_written_with_their_interval() {
        assert_eq!(
            ratio_text(1.52, Some(1.3), Some(1.684)),
            "1.52x [1.30-1.68]"
        );
        assert_eq!(ratio_text(0.05, None, None), "0.050x");
        assert_eq!(percent_text(0.07), "7");
        assert_eq!(percent_text(0.125), "12.5");
        assert_eq!(p_text(2.0 / 252.0), "0.0079");
    }
}
