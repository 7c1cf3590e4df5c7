//! What went wrong during a run, as data (docs/METHODS.md, "Failures are
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
/// completions beside it show where they happened. Its default has
/// buckets [`ACTIVITY_BUCKET_NS`] wide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Width of every bucket, ns.
    pub bucket_ns: u64,
    /// Operations completed in each bucket.
    pub completed: Vec<u64>,
    /// Operations failed in each bucket.
    pub failed: Vec<u64>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity::new(ACTIVITY_BUCKET_NS)
    }
}

impl Activity {
    /// An empty record of buckets `bucket_ns` wide.
    pub fn new(bucket_ns: u64) -> Self {
        Activity {
            bucket_ns: bucket_ns.max(1),
            completed: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// Makes room for `len` buckets.
    fn grow(&mut self, len: usize) {
        if self.completed.len() < len {
            self.completed.resize(len, 0);
            self.failed.resize(len, 0);
        }
    }

    fn bucket(&mut self, at_ns: u64) -> usize {
        let i = (at_ns / self.bucket_ns.max(1)) as usize;
        self.grow(i + 1);
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
        self.grow(other.completed.len());
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

/// A worker's connection opened again after a failure broke it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconnect {
    /// When, from the run's start, ns.
    pub at_ns: u64,
    /// Where it connected (the node of a target of several, else the target).
    pub to: String,
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
/// failed: 289 timeout, 23 server error 500" (the command adds where to
/// look: "; see the table above" or the result file).
pub fn closing_line(failures: &Failures, attempted: u64, what: &str) -> String {
    format!(
        "{} of {} {what} failed: {}",
        thousands(failures.total()),
        thousands(attempted),
        failures.summary()
    )
}

/// The one line a suite that measures several systems side by side exits
/// with when some failed: "1 of 4 systems failed: mysql (connection:
/// server disconnected); see the result", from each failed system's name
/// and reason ("class: message") and the number of systems that ran.
pub fn systems_failed_line(failed: &[(String, String)], systems: usize) -> String {
    named_failed_line(failed, systems, ("system", "systems"))
}

/// [`systems_failed_line`] naming what failed as `(one, many)`: "1 of 5
/// layouts failed: ...".
fn named_failed_line(
    failed: &[(String, String)],
    systems: usize,
    (one, many): (&str, &str),
) -> String {
    let what = if systems == 1 { one } else { many };
    let list: Vec<String> = failed
        .iter()
        .map(|(name, reason)| format!("{name} ({reason})"))
        .collect();
    format!(
        "{} of {} {what} failed: {}; see the result",
        thousands(failed.len() as u64),
        thousands(systems as u64),
        list.join(", ")
    )
}

/// A system (a side, a layout) of a suite that measures several side by
/// side and failed while it was measured: every other system's figures are
/// kept, this one's cells say why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemFailure {
    /// The system's name as the tables print it ("s3", "files", "dir").
    pub system: String,
    /// Where it failed: the case, size, round or phase, in words.
    pub during: String,
    /// How it failed.
    #[serde(flatten)]
    pub class: FailureClass,
    /// The failure's message, as one line.
    pub message: String,
}

impl SystemFailure {
    /// The failure of `system` during `during`, classified from `error`.
    pub fn new(system: &str, during: &str, error: &crate::error::Error) -> SystemFailure {
        SystemFailure {
            system: system.to_string(),
            during: during.to_string(),
            class: error.class(),
            message: error.to_string(),
        }
    }

    /// "connection: server disconnected": the class and the message.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.class.label(), self.message)
    }

    /// What each of its table cells says: "failed: connection: ...".
    pub fn cell(&self) -> String {
        format!("failed: {}", self.reason())
    }
}

/// [`systems_failed_line`] of `failures` among `systems` systems, or None
/// when nothing failed.
pub fn failed_systems_line(failures: &[SystemFailure], systems: usize) -> Option<String> {
    (!failures.is_empty())
        .then(|| systems_failed_line(&reasons(failures), systems.max(failures.len())))
}

/// The same line for a suite's layouts: "1 of 5 layouts failed:
/// postgres-bytea (connection: ...); see the result", or None when
/// nothing failed.
pub fn failed_layouts_line(failures: &[SystemFailure], layouts: usize) -> Option<String> {
    (!failures.is_empty()).then(|| {
        named_failed_line(
            &reasons(failures),
            layouts.max(failures.len()),
            ("layout", "layouts"),
        )
    })
}

/// Each failure's system and reason.
fn reasons(failures: &[SystemFailure]) -> Vec<(String, String)> {
    failures
        .iter()
        .map(|f| (f.system.clone(), f.reason()))
        .collect()
}

/// "timeout after 30 s", "timeout after 1.5 s": how a wait that reached
/// its bound is reported.
pub fn timeout_after(bound: std::time::Duration) -> String {
    format!("timeout after {}", seconds(bound))
}

/// A bound in seconds as messages state it: "30 s", "1.5 s".
pub fn seconds(bound: std::time::Duration) -> String {
    if bound.subsec_millis() == 0 {
        format!("{} s", bound.as_secs())
    } else {
        format!("{:.1} s", bound.as_secs_f64())
    }
}

/// A run whose operations failed, as one error for a suite that needs a
/// whole figure: of the first class seen, its message the closing `line`
/// with that class's first message.
pub fn whole_figure_error(target: &str, failures: &Failures, line: &str) -> crate::error::Error {
    let first = &failures.classes[0];
    crate::error::Error::Failed {
        target: target.to_string(),
        class: first.class,
        message: format!("{line} (first: {})", first.example),
    }
}

/// 18400 -> "18,400".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
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
            "313 of 18,400 operations failed: 290 timeout, 23 server error 500"
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
    fn failed_systems_sum_up_in_one_line_and_timeouts_say_their_bound() {
        let e = crate::error::Error::failed(
            std::path::Path::new("s3://b"),
            FailureClass::Connection,
            "connection refused",
        );
        let f = SystemFailure::new("s3", "round 2/5, read s3", &e);
        assert_eq!(f.reason(), "connection: s3://b: connection refused");
        assert_eq!(f.cell(), "failed: connection: s3://b: connection refused");
        assert_eq!(failed_systems_line(&[], 4), None);
        assert_eq!(
            failed_systems_line(std::slice::from_ref(&f), 4).unwrap(),
            "1 of 4 systems failed: s3 (connection: s3://b: connection refused); see the result"
        );
        assert_eq!(
            failed_layouts_line(std::slice::from_ref(&f), 5).unwrap(),
            "1 of 5 layouts failed: s3 (connection: s3://b: connection refused); see the result"
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.contains(r#""class":"connection""#), "{json}");
        assert_eq!(serde_json::from_str::<SystemFailure>(&json).unwrap(), f);
        use std::time::Duration;
        assert_eq!(timeout_after(Duration::from_secs(30)), "timeout after 30 s");
        assert_eq!(
            timeout_after(Duration::from_millis(1500)),
            "timeout after 1.5 s"
        );
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
