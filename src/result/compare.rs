//! The `compare` result's own tables: every case found in two results, the
//! ratio of its figures and whether the change is beyond the noise.
//! `report::compare` computes it; `compare` prints and stores it.
//!
//! Results written before the rank test (no interval, p or method) still
//! load: every field added since is optional and left out when absent, so
//! such a document writes back as it was read.

use serde::{Deserialize, Deserializer, Serialize};

/// Whether a case got better, worse, or did not change beyond the noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Faster (or more requests/s): the rank test rejects "no change" after
    /// Holm's correction and the whole interval is beyond the threshold.
    Better,
    /// Slower (or fewer requests/s), by the same rule.
    Worse,
    /// No change can be told from the noise (or it is below the threshold).
    WithinNoise,
    /// Fewer than 4 samples on a side: no test, no verdict.
    InsufficientData,
    /// The two results measured different things (dataset, blob count,
    /// settings): the ratio means nothing.
    NotComparable,
}

impl Verdict {
    /// The name the result stores ("better", "worse", "within-noise").
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within-noise",
            Verdict::InsufficientData => "insufficient-data",
            Verdict::NotComparable => "not-comparable",
        }
    }
}

/// A side's samples are the rounds (or repetitions) of one run: its
/// interval is within that run.
pub const SAMPLES_ARE_ROUNDS: &str = crate::measure::estimate::OVER_ROUNDS_OF_ONE_RUN;
/// A side's samples are one median per result or run: between runs.
pub const SAMPLES_ARE_RESULTS: &str = "results";

/// One side of a case: its samples summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The median sample.
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// How many samples.
    pub n: usize,
    /// The median's own interval over these samples (sign-test order
    /// statistics): with one result a side, this run's rounds; it says
    /// nothing of a rerun (the calibration bench counts how often a
    /// rerun's median falls inside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// That interval's exact coverage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// What each sample is, and so which kind the interval is: "rounds of
    /// one run" (within-run: a rerun can land outside it) or "results"
    /// (one median per result or run: between runs). Absent in older
    /// comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_are: Option<String>,
}

/// One case found in both results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The case as a reader sees it.
    pub label: String,
    /// What was measured: "time per op", "time" or "requests/s".
    pub figure: String,
    /// The before side's samples.
    pub before: Side,
    /// The after side's samples.
    pub after: Side,
    /// after / before, as measured (for times, below 1 is faster). A ratio
    /// that is not a number (a zero median) is written as null.
    #[serde(deserialize_with = "null_as_nan")]
    pub ratio: f64,
    /// The judgement.
    pub verdict: Verdict,
    /// Why the verdict is what it is, in words.
    pub reason: String,
    /// Lower bound of the ratio's interval (see [`CompareMethod`]); absent
    /// when the case was not tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// Upper bound of the ratio's interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// The rank test's two-sided p value, before correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// The p value after Holm's correction over every case tested: the one
    /// compared with alpha.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_adjusted: Option<f64>,
    /// How `p` was computed: "mann-whitney-exact" or "mann-whitney-normal"
    /// (tie- and continuity-corrected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The same case corrected for the machine's drift, when a probe of
    /// the case's kind moved beyond its own noise in the same direction
    /// as the case, on the same machine. `verdict` above stays the
    /// unadjusted one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<Adjusted>,
    /// A known cost injected into this case on one side (a testing aid of
    /// the calibration bench): "after x1.25".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<String>,
    /// For a case within noise or short of data: about how many samples a
    /// side (rounds of one result, or results or runs a side) would tell a
    /// change of the threshold's size from no change, at this spread, 80%
    /// of the time. Absent where a verdict was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_to_decide: Option<usize>,
}

/// A case's ratio divided by the drift probe's ratio, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adjusted {
    /// The probe divided out: "cpu" or "flush".
    pub probe: String,
    /// (after / before) / (probe after / probe before).
    pub ratio: f64,
    /// Lower bound of the joint bootstrap interval of both ratios.
    pub low: Option<f64>,
    /// Upper bound of that interval.
    pub high: Option<f64>,
    /// Holm-adjusted p of the rank test on the corrected after samples.
    pub p_adjusted: Option<f64>,
    /// The judgement of the corrected ratio.
    pub verdict: Verdict,
    /// Why, in words.
    pub reason: String,
}

impl Change {
    /// Whether the figure counts up (requests/s, writes/s) rather than time.
    pub fn higher_is_better(&self) -> bool {
        matches!(
            self.figure.as_str(),
            "requests/s" | "writes/s" | "read MB/s"
        )
    }
}

/// Two results compared case by case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Comparison {
    /// The cases found in both.
    pub changes: Vec<Change>,
    /// Labels of cases only the before result holds.
    pub only_before: Vec<String>,
    /// Labels of cases only the after result holds.
    pub only_after: Vec<String>,
    /// Environment or dataset fields that differ: (field, before, after).
    pub differences: Vec<(String, String, String)>,
    /// The smallest relative change that counts (0.05 = 5%).
    pub threshold: f64,
    /// Fields that make the two results measure different things (command,
    /// dataset): (field, before, after). Every case is then not comparable.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_comparable: Vec<(String, String, String)>,
    /// What a reader must know to read the verdicts (e.g. that no case can
    /// reach significance with so few samples).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rule the verdicts follow; absent in results written before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Box<CompareMethod>>,
    /// How far the machine itself moved between the two results, per
    /// reference probe; empty when either result has no probes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<Drift>,
    /// What makes the two sides different machines or setups (kernel,
    /// mount options, CPU governor, I/O scheduler, blobbench version,
    /// host, CPU, filesystem): (field, before, after). Any entry stops the
    /// drift correction: the drift is shown, not applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_same_machine: Vec<(String, String, String)>,
    /// Results a side (before, after): with several, every sample of a
    /// case is one result's median (the between-run answer).
    #[serde(skip_serializing_if = "is_one_each")]
    pub results: (usize, usize),
}

/// The machine's own change between two results, measured by a reference
/// probe that does the same work in both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The probe: "cpu" (CPU, memory and system calls) or "flush" (a
    /// small write and fdatasync in the work folder).
    pub probe: String,
    /// Median after / median before (above 1: the machine was slower after).
    pub ratio: f64,
    /// Lower bound of the ratio's bootstrap interval.
    pub low: f64,
    /// Upper bound of the ratio's bootstrap interval.
    pub high: f64,
    /// Whether the probe moved beyond its own noise (its interval leaves
    /// out 1): only then is there a drift to correct for.
    #[serde(default)]
    pub moved: bool,
    /// Whether cases of this probe's kind were corrected: the probe moved
    /// and both results come from the same machine and setup.
    #[serde(default)]
    pub applied: bool,
    /// Why the drift was not applied ("" when it was).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why_not: String,
    /// The probe's own spread within each result: coefficient of
    /// variation of its samples (before, after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<(f64, f64)>,
    /// Samples a side (before, after).
    #[serde(default)]
    pub samples: (usize, usize),
}

/// The rule behind a comparison's verdicts, recorded with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareMethod {
    /// The rank test: "mann-whitney-u, two-sided".
    pub test: String,
    /// The multiple-comparison correction: "holm".
    pub correction: String,
    /// Which cases form one Holm family (absent in results written before
    /// sections: every case tested).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub family: String,
    /// The family-wise error rate the adjusted p values are held to.
    pub alpha: f64,
    /// How many cases were tested (the size of the Holm family).
    pub tested: usize,
    /// The fewest samples a side for a test.
    pub min_samples: usize,
    /// The smallest adjusted p any case could reach with these sample
    /// counts: at or above alpha, nothing can be called changed.
    pub best_possible_p: f64,
    /// The interval: a percentile bootstrap of median(after)/median(before).
    pub interval: String,
    /// The interval's confidence level (0.95).
    pub level: f64,
    /// Bootstrap resamples per case.
    pub resamples: usize,
    /// How each case's bootstrap is seeded, so the output is reproducible.
    pub seed: String,
    /// How the threshold is applied: the whole interval must lie beyond it.
    pub threshold_rule: String,
}

/// The kind-specific part of a `compare` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareTables {
    /// The comparison itself.
    pub compare: Comparison,
    /// The before result's file, as given.
    pub before: String,
    /// The after result's file, as given.
    pub after: String,
}

/// One result a side (or a comparison written before several were taken).
fn is_one_each(r: &(usize, usize)) -> bool {
    *r == (1, 1) || *r == (0, 0)
}

/// serde_json writes a non-finite float as null; read it back as NaN.
fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_that_is_not_a_number_is_written_and_read_as_null() {
        let side = Side {
            median: 0.0,
            min: 0.0,
            max: 0.0,
            n: 1,
            interval: None,
            coverage: None,
            samples_are: None,
        };
        let change = Change {
            samples_to_decide: None,
            label: "server c=1".into(),
            figure: "requests/s".into(),
            before: side.clone(),
            after: side,
            ratio: f64::NAN,
            verdict: Verdict::WithinNoise,
            reason: String::new(),
            low: None,
            high: None,
            p: None,
            p_adjusted: None,
            method: None,
            adjusted: None,
            injected: None,
        };
        let json = serde_json::to_value(&change).unwrap();
        assert!(json["ratio"].is_null());
        assert_eq!(json["verdict"], "within-noise");
        let back: Change = serde_json::from_value(json.clone()).unwrap();
        assert!(back.ratio.is_nan());
        assert_eq!(serde_json::to_value(&back).unwrap(), json);
    }
}
