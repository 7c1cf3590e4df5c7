//! The `reproduce` result: the ledger of every quantitative claim the five
//! published documents make, each with this machine's figure, its interval
//! and a verdict, and the experiments' own results it was computed from.

use serde::{Deserialize, Serialize};

use crate::measure::estimate::Estimate;

use super::ResultDocument;

/// How a claim fares here, decided by the interval of this machine's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimVerdict {
    /// The whole interval, widened by what a rerun could move it, lies on
    /// the claim's side (inside a range claim: the plain interval).
    Holds,
    /// The whole widened interval lies on the other side.
    DoesNotHold,
    /// The interval reaches both sides: more rounds or a larger scale may decide it.
    Inconclusive,
    /// The experiment did not run here (a server not given, the budget, root).
    NotRun,
}

impl ClaimVerdict {
    /// The words printed and written for the verdict.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Holds => "holds",
            ClaimVerdict::DoesNotHold => "does not hold",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::NotRun => "not run",
        }
    }
}

/// The verdict rule, said once under every ledger (terminal, HTML, Markdown).
pub const VERDICT_RULE: &str = "verdicts follow the interval of this machine's figure, \
widened by what a rerun could move it (10% each way for an interval over one run's rounds: two \
runs of one build here differ by 5-10%, which no round reveals), so that a firm verdict survives \
a rerun: holds when it lies wholly on the claim's side of the document's figure, does not hold \
when it lies wholly on the other side (or outside the claim's range), inconclusive when it \
reaches both; a range claim holds when the plain interval lies inside the range, which is its own \
allowance for noise; \"about X\" is read as X within a factor 1.25 and \"no noticeable impact\" \
as within a factor 1.10; a figure without an interval (disk space, a best size from means, a \
fragment count) is judged by its value, as the document's own figure was.";

/// One claim of the ledger as this machine measured it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimRow {
    /// Stable short name ("001-read-blob-api"), the key compare and the
    /// machines table match claims by.
    pub id: String,
    /// The document's number in the project's seeds ("001").
    pub document: String,
    /// The document's title.
    pub title: String,
    /// Where in the document: section, chart or figure.
    pub place: String,
    /// The claim in the document's words.
    pub words: String,
    /// The document's figure, with its unit ("1.35x (file / db read time)").
    pub published: String,
    /// What this machine's figure is and how it was computed from which
    /// experiment's result.
    pub figure: String,
    /// The claim's side as a condition on the figure (">= 1.35", "5..15").
    pub rule: String,
    /// This machine's figure with its interval; None when not run or when
    /// the figure is a choice rather than a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Estimate>,
    /// This machine's figure as printed ("1.52x [1.30-1.68]", "8192
    /// (beyond noise)", "not run: give --pg URL").
    pub measured_text: String,
    /// The verdict.
    pub verdict: ClaimVerdict,
    /// The experiment it comes from ("suite fasterthanfs").
    pub experiment: String,
    /// The scale the experiment ran at here ("count 2000, rounds 3").
    pub scale: String,
    /// The command that reruns the experiment at the document's scale.
    pub rerun: String,
}

/// Whether an experiment ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentStatus {
    /// It ran; its result is kept.
    Ran,
    /// It was not started (the reason says why and what to pass).
    NotRun,
    /// It started and failed (the reason is the error).
    Failed,
}

/// One experiment of the five documents (and the aging study) as
/// `reproduce` ran it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentRecord {
    /// The command it is ("suite fasterthanfs").
    pub experiment: String,
    /// The documents it reproduces ("001").
    pub documents: String,
    /// Ran, not run or failed.
    pub status: ExperimentStatus,
    /// Why it did not run or how it failed (empty when it ran).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The scale it ran at (or would have).
    pub scale: String,
    /// The command that runs it at the documents' scale.
    pub full_scale: String,
    /// Its wall time, seconds.
    pub seconds: f64,
    /// Its own result, rendered below the ledger in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<ResultDocument>>,
}

impl ExperimentRecord {
    /// Its status as printed: "ran", "not run: WHY", "failed: ERROR".
    pub fn status_text(&self) -> String {
        match self.status {
            ExperimentStatus::Ran => "ran".into(),
            ExperimentStatus::NotRun => format!("not run: {}", self.reason),
            ExperimentStatus::Failed => format!("failed: {}", self.reason),
        }
    }
}

/// The kind-specific part of a `reproduce` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReproduceTables {
    /// Every claim, in the documents' order.
    pub ledger: Vec<ClaimRow>,
    /// The experiments, in the order run.
    pub experiments: Vec<ExperimentRecord>,
    /// `--budget`, seconds.
    pub budget_seconds: f64,
    /// The scale the budget chose, in words ("tiny", "documents'").
    pub scale: String,
    /// The whole command's wall time, seconds.
    pub seconds: f64,
    /// How verdicts are decided ([`VERDICT_RULE`] when written).
    pub verdict_rule: String,
    /// The server options not given, each with what it would add
    /// ("--pg URL: PostgreSQL in suite lob").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_given: Vec<String>,
}

impl ReproduceTables {
    /// How many claims got each verdict: holds, does not hold, inconclusive, not run.
    pub fn counts(&self) -> [usize; 4] {
        let n = |v: ClaimVerdict| self.ledger.iter().filter(|c| c.verdict == v).count();
        [
            n(ClaimVerdict::Holds),
            n(ClaimVerdict::DoesNotHold),
            n(ClaimVerdict::Inconclusive),
            n(ClaimVerdict::NotRun),
        ]
    }

    /// The documents the ledger covers, in its order: (number, title).
    pub fn documents(&self) -> Vec<(&str, &str)> {
        let mut documents: Vec<(&str, &str)> = self
            .ledger
            .iter()
            .map(|c| (c.document.as_str(), c.title.as_str()))
            .collect();
        documents.dedup();
        documents
    }

    /// The one line `reproduce` exits 1 with after writing its result when
    /// an experiment failed, or one it ran counted failed operations
    /// ("1 of 6 experiments failed: suite http (...)"); None when none did.
    pub fn failures_line(&self) -> Option<String> {
        let failed: Vec<String> = self
            .experiments
            .iter()
            .filter_map(|e| match (&e.status, &e.result) {
                (ExperimentStatus::Failed, _) => Some(format!("{} ({})", e.experiment, e.reason)),
                (_, Some(r)) => r
                    .tables
                    .failures_line()
                    .map(|l| format!("{} ({l})", e.experiment)),
                _ => None,
            })
            .collect();
        (!failed.is_empty()).then(|| {
            format!(
                "{} of {} experiments failed: {}",
                failed.len(),
                self.experiments.len(),
                failed.join("; ")
            )
        })
    }

    /// The claim with `id`.
    pub fn claim(&self, id: &str) -> Option<&ClaimRow> {
        self.ledger.iter().find(|c| c.id == id)
    }
}
