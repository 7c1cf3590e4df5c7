//! How a suite's rounds were chosen and where each case's ended: a fixed
//! count (`--rounds N`), or a precision target that stops each group of
//! alternating cases when its figures are precise enough.

use serde::{Deserialize, Serialize};

use crate::measure::estimate::Stopping;
pub use crate::measure::precision::{MIN_FLOOR, PrecisionTarget, StopReason};

/// What decides how many rounds a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "rule")]
pub enum RoundsRule {
    /// Exactly this many measured rounds of every case.
    Fixed {
        /// Measured rounds (at least one).
        rounds: u64,
    },
    /// Rounds until the group's figures meet the target.
    Precision(PrecisionTarget),
}

impl RoundsRule {
    /// The fewest measured rounds every case that does not fail runs.
    pub fn floor(&self) -> u64 {
        match self {
            RoundsRule::Fixed { rounds } => *rounds,
            RoundsRule::Precision(t) => t.min_rounds,
        }
    }

    /// How the rounds end, which sets the intervals' ranks.
    pub fn stopping(&self) -> Stopping {
        match self {
            RoundsRule::Fixed { .. } => Stopping::Fixed,
            RoundsRule::Precision(_) => Stopping::OnWidth,
        }
    }
}

/// The rounds one case took and why they ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRounds {
    /// The case's name, as its runs are named (without "(round k)").
    pub case: String,
    /// The group of alternating cases it ran in ("reads", "updates"),
    /// which stopped together.
    pub group: String,
    /// Measured rounds it ran.
    pub rounds: u64,
    /// Why no more were run.
    pub stopped: StopReason,
    /// The widest relative half-width of its group's figures when it
    /// stopped (None with fixed rounds or after a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<f64>,
}

/// A suite's rule and every case's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsRecord {
    /// The rule the rounds followed.
    pub rule: RoundsRule,
    /// Each case, in the order the suite planned them.
    pub cases: Vec<CaseRounds>,
}

impl RoundsRecord {
    /// The fewest and most rounds any case ran (that did not fail).
    pub fn range(&self) -> (u64, u64) {
        let ran = self
            .cases
            .iter()
            .filter(|c| c.stopped != StopReason::Failed)
            .map(|c| c.rounds);
        let (lo, hi) = ran.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        if hi == 0 { (0, 0) } else { (lo, hi) }
    }

    /// The rounds as a table's header says them: "15 rounds", or "6-11
    /// rounds, each group until +/-3%".
    pub fn header(&self) -> String {
        let (lo, hi) = self.range();
        let taken = if lo == hi {
            format!("{hi} rounds")
        } else {
            format!("{lo}-{hi} rounds")
        };
        match &self.rule {
            RoundsRule::Fixed { .. } => taken,
            RoundsRule::Precision(t) => format!(
                "{taken}, each group until +/-{}",
                crate::measure::precision::percent(t.half_width)
            ),
        }
    }

    /// Where each group stopped, in one line for the table's foot ("rounds:
    /// reads 6 (precision met, widest +/-1.8%), ..."), and what to change
    /// when a group missed its target; None with fixed rounds.
    pub fn lines(&self, rounds_options: &str) -> Vec<String> {
        let RoundsRule::Precision(target) = &self.rule else {
            return Vec::new();
        };
        let mut groups: Vec<String> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        let mut missed = false;
        for c in &self.cases {
            if seen.contains(&c.group.as_str()) || c.stopped == StopReason::Failed {
                continue;
            }
            seen.push(&c.group);
            missed |= matches!(c.stopped, StopReason::Ceiling | StopReason::TimeBudget);
            let width = c
                .half_width
                .map(|w| format!(", widest +/-{}", crate::measure::precision::percent(w)))
                .unwrap_or_default();
            groups.push(format!(
                "{} {} ({}{width})",
                c.group,
                c.rounds,
                c.stopped.words()
            ));
        }
        let mut out = vec![format!(
            "rounds, target {}: {}",
            target.describe(),
            groups.join("; ")
        )];
        if missed {
            out.push(format!(
                "  a group that missed the target prints a wider interval; for +/-{} there: {rounds_options}, or a quieter machine",
                crate::measure::precision::percent(target.half_width)
            ));
        }
        out
    }
}
