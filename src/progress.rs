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
    /// Says how many seconds the rest of the current stage is expected to
    /// take, from work already timed (see [`Expected`]). Units differ in
    /// cost (a durable write costs a hundred reads), so a sink that shows
    /// time left should count down from this rather than extrapolate from
    /// units done. Sinks that show no time ignore it.
    fn expect_remaining(&self, _seconds: f64) {}
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

    /// Records one run of case `i` that took `took`; returns the seconds
    /// the runs left are expected to take.
    pub fn record(&mut self, i: usize, took: Duration) -> f64 {
        self.runs_left[i] = self.runs_left[i].saturating_sub(1);
        self.done[i].0 += 1;
        self.done[i].1 += took.as_secs_f64();
        self.remaining()
    }

    /// The seconds the runs left are expected to take (0 before any run:
    /// nothing is known yet).
    pub fn remaining(&self) -> f64 {
        let (units_done, seconds_done) = self
            .done
            .iter()
            .zip(&self.units)
            .fold((0u64, 0.0), |(u, s), (&(runs, secs), &units)| {
                (u + runs * units, s + secs)
            });
        let per_unit = seconds_done / units_done.max(1) as f64;
        self.runs_left
            .iter()
            .zip(&self.done)
            .zip(&self.units)
            .map(|((&left, &(runs, secs)), &units)| {
                let per_run = if runs > 0 {
                    secs / runs as f64
                } else {
                    per_unit * units as f64
                };
                left as f64 * per_run
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_round_predicts_the_rest_case_by_case() {
        // A cheap case (1000 reads) and a costly one (10 durable writes).
        let mut e = Expected::rounds([1000, 10], &[vec![0], vec![1]], 3);
        assert_eq!(e.remaining(), 0.0, "nothing known yet");
        // After the reads, the writes are guessed from the reads' time per unit.
        let after_reads = e.record(0, Duration::from_secs(1));
        assert!(
            (after_reads - (2.0 + 3.0 * 0.01)).abs() < 1e-9,
            "{after_reads}"
        );
        // After round 1, each case's own time: 2 x 1 s + 2 x 4 s.
        let after_round = e.record(1, Duration::from_secs(4));
        assert!((after_round - 10.0).abs() < 1e-9, "{after_round}");
        e.record(1, Duration::from_secs(6));
        // Writes now average 5 s a run: 2 reads x 1 s + 1 write x 5 s.
        assert!((e.remaining() - 7.0).abs() < 1e-9);
        for i in [0, 0, 1] {
            e.record(i, Duration::from_secs(1));
        }
        assert_eq!(e.remaining(), 0.0);
    }
}
