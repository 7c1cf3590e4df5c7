//! How long work reports how far it is. Library code (suites, the executor,
//! dataset loading) only counts through [`Progress`]; the command layer
//! decides how to show it (a bar on stderr, or nothing).

use std::time::Duration;

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
    /// Says how many seconds the work starting now is expected to take,
    /// and the rest of the stage after it, from work already timed (see
    /// [`Expected`]). Units differ in cost (a durable write costs a hundred
    /// reads), so a sink that shows time left should count down from this
    /// rather than extrapolate from units done; work that overruns its
    /// share holds the count at `after` instead of eating into it. Sinks
    /// that show no time ignore it.
    fn expect_remaining(&self, _current: f64, _after: f64) {}
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

/// One stage shared by work running side by side (two exports at once):
/// each part's own stages, totals and ends are ignored, its units count
/// toward the stage the caller started for all of them, and its notes pass.
pub struct Shared<'a>(pub &'a dyn Progress);

impl Progress for Shared<'_> {
    fn start(&self, _label: &str, _total: u64) {}
    fn set_total(&self, _total: u64) {}
    fn message(&self, _text: &str) {}
    fn advance(&self, n: u64) {
        self.0.advance(n);
    }
    fn finish(&self) {}
    fn note(&self, text: &str) {
        self.0.note(text);
    }
}

/// The expected time of a stage made of runs of cases that differ in cost,
/// each run several times (rounds): a case's runs so far predict its runs
/// left (after the first round every case's time is known); a case not
/// run yet is predicted from the time per unit of the runs so far.
#[derive(Debug, Clone)]
pub struct Expected {
    /// Units (operations) of one run of each case.
    units: Vec<u64>,
    /// Runs of each case still to do.
    runs_left: Vec<u64>,
    /// Runs of each case done, and the seconds they took together.
    done: Vec<(u64, f64)>,
}

impl Expected {
    /// Every case in `groups` (indexes into `units`) runs `rounds` times.
    pub fn rounds(
        units: impl IntoIterator<Item = u64>,
        groups: &[Vec<usize>],
        rounds: u64,
    ) -> Self {
        let units: Vec<u64> = units.into_iter().collect();
        let mut runs_left = vec![0; units.len()];
        for &i in groups.iter().flatten() {
            runs_left[i] += rounds;
        }
        Expected {
            done: vec![(0, 0.0); units.len()],
            units,
            runs_left,
        }
    }

    /// Records one run of case `i` that took `took`.
    pub fn record(&mut self, i: usize, took: Duration) {
        self.runs_left[i] = self.runs_left[i].saturating_sub(1);
        self.done[i].0 += 1;
        self.done[i].1 += took.as_secs_f64();
    }

    /// Sets the runs of case `i` still to do, once they are known better
    /// (rounds that stop at a precision target).
    pub fn set_runs_left(&mut self, i: usize, runs: u64) {
        self.runs_left[i] = runs;
    }

    /// Before a run of case `i`: the seconds it is expected to take and the
    /// seconds of the runs left after it, as [`Progress::expect_remaining`]
    /// takes them; None before any run (nothing is known yet).
    pub fn next(&self, i: usize) -> Option<(f64, f64)> {
        if self.done.iter().all(|&(runs, _)| runs == 0) {
            return None;
        }
        let current = self.per_run(i);
        Some((current, (self.remaining() - current).max(0.0)))
    }

    /// The seconds the runs left are expected to take (0 before any run).
    pub fn remaining(&self) -> f64 {
        (0..self.units.len())
            .map(|i| self.runs_left[i] as f64 * self.per_run(i))
            .sum()
    }

    /// The expected seconds of one run of case `i`: its own runs' mean, or
    /// its units at the time per unit of all runs so far.
    fn per_run(&self, i: usize) -> f64 {
        let (runs, secs) = self.done[i];
        if runs > 0 {
            return secs / runs as f64;
        }
        let (units, seconds) = self
            .done
            .iter()
            .zip(&self.units)
            .fold((0, 0.0), |(u, s), (&(runs, secs), &units)| {
                (u + runs * units, s + secs)
            });
        seconds / units.max(1) as f64 * self.units[i] as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_round_predicts_the_rest_case_by_case() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // A cheap case (1000 reads) and a costly one (10 durable writes).
        let mut e = Expected::rounds([1000, 10], &[vec![0], vec![1]], 3);
        assert_eq!(e.next(0), None, "nothing known yet");
        // After the reads, the writes are guessed from the reads' time per unit.
        e.record(0, Duration::from_secs(1));
        let (now, after) = e.next(1).unwrap();
        assert!(close(now, 0.01) && close(after, 2.02), "{now} {after}");
        // After round 1, each case's own time: 2 x 1 s + 2 x 4 s.
        e.record(1, Duration::from_secs(4));
        assert!(close(e.remaining(), 10.0), "{}", e.remaining());
        let (now, after) = e.next(1).unwrap();
        assert!(close(now, 4.0) && close(after, 6.0), "{now} {after}");
        e.record(1, Duration::from_secs(6));
        // Writes now average 5 s a run: 2 reads x 1 s + 1 write x 5 s.
        assert!(close(e.remaining(), 7.0));
        for i in [0, 0, 1] {
            e.record(i, Duration::from_secs(1));
        }
        assert_eq!(e.remaining(), 0.0);
        assert_eq!(e.next(0), Some((1.0, 0.0)));
    }
}
