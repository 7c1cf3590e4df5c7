//! How long work reports how far it is. Library code (suites, the executor,
//! dataset loading) only counts through [`Progress`]; the command layer
//! decides how to show it (a bar on stderr, or nothing).

/// A sink for progress: one stage at a time, each with a label and a total.
pub trait Progress: Sync {
    /// Starts a new stage of `total` units (ends the previous one).
    fn start(&self, label: &str, total: u64);
    /// Changes the current stage's total, once it is known.
    fn set_total(&self, total: u64);
    /// Says what the current stage is doing now (the case being measured).
    fn message(&self, text: &str);
    /// Counts `n` more units done in the current stage.
    fn advance(&self, n: u64);
    /// Ends the current stage and clears it from the screen.
    fn finish(&self);
    /// A line the user should read (a skipped system, a warning), shown
    /// without disturbing the current stage.
    fn note(&self, text: &str);
}

/// Progress that goes nowhere: for tests and nested work.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _label: &str, _total: u64) {}
    fn set_total(&self, _total: u64) {}
    fn message(&self, _text: &str) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
    fn note(&self, _text: &str) {}
}
