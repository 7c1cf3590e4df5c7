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
}

/// The machine's own change between two results, measured by a reference
/// probe that does the same work in both: a change of a case no larger
/// than this cannot be told from the machine's drift.
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
    /// The factor either way a case of this probe's kind must exceed: the
    /// interval's far end (max of high and 1/low).
    pub bound: f64,
    /// Whether the bound was applied: only when both results come from the
    /// same machine (host, CPU, filesystem); between two machines the
    /// machine is what is compared.
    #[serde(default)]
    pub applied: bool,
}

/// The rule behind a comparison's verdicts, recorded with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareMethod {
    /// The rank test: "mann-whitney-u, two-sided".
    pub test: String,
    /// The multiple-comparison correction: "holm".
    pub correction: String,
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
        };
        let change = Change {
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
        };
        let json = serde_json::to_value(&change).unwrap();
        assert!(json["ratio"].is_null());
        assert_eq!(json["verdict"], "within-noise");
        let back: Change = serde_json::from_value(json.clone()).unwrap();
        assert!(back.ratio.is_nan());
        assert_eq!(serde_json::to_value(&back).unwrap(), json);
    }
}
