//! What went wrong during a run, as data (MEASUREMENT.md, "Failures are
//! outcomes"): failed operations counted by class, each class with the
//! first message seen; when they happened, beside the completions, per
//! tenth of a second; and the cluster's shape at the start and the end
//! with every change seen while the run went on.

use serde::{Deserialize, Serialize};

pub use crate::error::FailureClass;
use crate::store::cluster::ClusterShape;

/// Failed operations of one class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCount {
    /// How they failed.
    #[serde(flatten)]
    pub class: FailureClass,
    /// How many.
    pub count: u64,
    /// The first one's message, as one line.
    pub example: String,
}

/// Failed operations by class (in the order each class was first seen).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Failures {
    /// One entry per class seen.
    pub classes: Vec<FailureCount>,
}

impl Failures {
    /// Counts one failure of `class` (its message kept if it is the first).
    pub fn record(&mut self, class: FailureClass, message: &str) {
        match self.classes.iter_mut().find(|c| c.class == class) {
            Some(c) => c.count += 1,
            None => self.classes.push(FailureCount {
                class,
                count: 1,
                example: message.to_string(),
            }),
        }
    }

    /// Adds another tally's counts.
    pub fn add(&mut self, other: &Failures) {
        for o in &other.classes {
            match self.classes.iter_mut().find(|c| c.class == o.class) {
                Some(c) => c.count += o.count,
                None => self.classes.push(o.clone()),
            }
        }
    }

    /// Every failed operation.
    pub fn total(&self) -> u64 {
        self.classes.iter().map(|c| c.count).sum()
    }

    /// Whether nothing failed.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// "289 timeout, 23 server error 500", largest first.
    pub fn summary(&self) -> String {
        let mut classes: Vec<&FailureCount> = self.classes.iter().collect();
        classes.sort_by(|a, b| b.count.cmp(&a.count).then(a.class.cmp(&b.class)));
        classes
            .iter()
            .map(|c| format!("{} {}", c.count, c.class.label()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The width of an [`Activity`]'s buckets: a tenth of a second, as
/// `load`'s timeline.
pub const ACTIVITY_BUCKET_NS: u64 = 100_000_000;

/// Operations completed and failed per bucket of time from the run's start
/// (bucket i covers i..i+1 widths), so a burst of failures and the dip in
/// completions beside it show where they happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Width of every bucket, ns.
    pub bucket_ns: u64,
    /// Operations completed in each bucket.
    pub completed: Vec<u64>,
    /// Operations failed in each bucket.
    pub failed: Vec<u64>,
}

impl Activity {
    /// An empty record of buckets `bucket_ns` wide.
    pub fn new(bucket_ns: u64) -> Self {
        Activity {
            bucket_ns: bucket_ns.max(1),
            ..Activity::default()
        }
    }

    fn bucket(&mut self, at_ns: u64) -> usize {
        let i = (at_ns / self.bucket_ns.max(1)) as usize;
        if self.completed.len() <= i {
            self.completed.resize(i + 1, 0);
            self.failed.resize(i + 1, 0);
        }
        i
    }

    /// One operation completed `at_ns` after the start.
    pub fn completed_at(&mut self, at_ns: u64) {
        let i = self.bucket(at_ns);
        self.completed[i] += 1;
    }

    /// One operation failed `at_ns` after the start.
    pub fn failed_at(&mut self, at_ns: u64) {
        let i = self.bucket(at_ns);
        self.failed[i] += 1;
    }

    /// Adds another worker's counts (same width, same start).
    pub fn add(&mut self, other: &Activity) {
        if let Some(last) = other.completed.len().checked_sub(1) {
            self.bucket(last as u64 * self.bucket_ns.max(1));
        }
        for (i, (&c, &f)) in other.completed.iter().zip(&other.failed).enumerate() {
            self.completed[i] += c;
            self.failed[i] += f;
        }
    }

    /// The first and last bucket with a failure, as times from the start
    /// (ns), or None when nothing failed.
    pub fn failing_span(&self) -> Option<(u64, u64)> {
        let first = self.failed.iter().position(|&f| f > 0)?;
        let last = self.failed.iter().rposition(|&f| f > 0)?;
        Some((
            first as u64 * self.bucket_ns,
            (last as u64 + 1) * self.bucket_ns,
        ))
    }
}

/// A change of the cluster's shape seen during the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeChange {
    /// When it was seen, from the run's start, ns (it happened at most one
    /// poll earlier).
    pub at_ns: u64,
    /// What changed ("node 127.0.0.3:8080 left").
    pub change: String,
}

/// The cluster's shape at the start and the end, and what changed between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRecord {
    /// As read before the first operation.
    pub start: ClusterShape,
    /// As read after the last (None if it could not be read at all).
    pub end: Option<ClusterShape>,
    /// Every change seen, in time order.
    #[serde(default)]
    pub changes: Vec<ShapeChange>,
}

impl ClusterRecord {
    /// The warnings a terminal prints, one per change ("node 127.0.0.3:8080
    /// left at 12.4 s").
    pub fn warnings(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| format!("{} at {:.1} s", c.change, c.at_ns as f64 / 1e9))
            .collect()
    }
}

/// The one line a run with failures exits with: "312 of 18,400 operations
/// failed: 289 timeout, 23 server error 500; see the result".
pub fn closing_line(failures: &Failures, attempted: u64, what: &str) -> String {
    format!(
        "{} of {} {what} failed: {}; see the result",
        thousands(failures.total()),
        thousands(attempted),
        failures.summary()
    )
}

/// 18400 -> "18,400".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_count_by_class_keep_the_first_message_and_sum_up() {
        let mut f = Failures::default();
        for _ in 0..289 {
            f.record(FailureClass::Timeout, "timeout after 10 s");
        }
        let mut other = Failures::default();
        for _ in 0..23 {
            other.record(FailureClass::ServerStatus { code: 500 }, "InternalError");
        }
        other.record(FailureClass::Timeout, "a later message");
        f.add(&other);
        assert_eq!(f.total(), 313);
        assert_eq!(f.classes[0].example, "timeout after 10 s");
        assert_eq!(f.summary(), "290 timeout, 23 server error 500");
        assert_eq!(
            closing_line(&f, 18_400, "operations"),
            "313 of 18,400 operations failed: 290 timeout, 23 server error 500; see the result"
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            json.contains(r#"{"class":"server-status","code":500,"count":23"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Failures>(&json).unwrap(), f);
    }

    #[test]
    fn activity_puts_each_operation_in_its_tenth_of_a_second() {
        let mut a = Activity::new(ACTIVITY_BUCKET_NS);
        a.completed_at(50_000_000);
        a.failed_at(250_000_000);
        let mut b = Activity::new(ACTIVITY_BUCKET_NS);
        b.completed_at(420_000_000);
        a.add(&b);
        assert_eq!(a.completed, [1, 0, 0, 0, 1]);
        assert_eq!(a.failed, [0, 0, 1, 0, 0]);
        assert_eq!(a.failing_span(), Some((200_000_000, 300_000_000)));
        assert_eq!(Activity::default().failing_span(), None);
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
