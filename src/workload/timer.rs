//! The one clock every figure is timed with.
//!
//! Back-to-back timestamps from the TSC where it is invariant (~10 ns a
//! read, else the OS clock): each operation's time runs from the previous
//! mark to the end of the operation. Raw ticks go into a preallocated
//! vector inside the timed region; scaling to nanoseconds and the HDR
//! histogram come afterwards, outside it. Anything that is not the operation
//! (content generation, progress) is followed by [`OpTimer::restart`], so it
//! never falls inside a timed interval; work that must run in the middle of
//! an operation (checking a blob while the store still holds it) goes
//! through [`OpTimer::exclude`].

use crate::measure::latency::Latencies;

/// Times a sequence of operations, one interval per operation.
pub struct OpTimer {
    clock: quanta::Clock,
    ticks: Vec<u64>,
    mark: u64,
}

impl OpTimer {
    /// A timer with room for `operations` intervals before it allocates.
    pub fn with_capacity(operations: usize) -> Self {
        let clock = quanta::Clock::new();
        let mark = clock.raw();
        OpTimer {
            clock,
            ticks: Vec::with_capacity(operations),
            mark,
        }
    }

    /// Forgets the intervals recorded so far (keeps the allocation).
    pub fn clear(&mut self) {
        self.ticks.clear();
        self.restart();
    }

    /// Starts the next interval now: what ran since the last mark is not timed.
    #[inline]
    pub fn restart(&mut self) {
        self.mark = self.clock.raw();
    }

    /// Ends the current interval without keeping it (its operation
    /// failed) and starts the next; returns how long it ran, ns.
    pub fn abandon(&mut self) -> u64 {
        let now = self.clock.raw();
        let spent = self.clock.delta_as_nanos(0, now.saturating_sub(self.mark));
        self.mark = now;
        spent
    }

    /// Ends an operation now: records the interval since the last mark and
    /// starts the next one.
    #[inline]
    pub fn lap(&mut self) {
        let now = self.clock.raw();
        // Ticks are unsigned: a clock that stepped back gives 0, not a wrap.
        self.ticks.push(now.saturating_sub(self.mark));
        self.mark = now;
    }

    /// Leaves `work` out of the current interval without ending it: the
    /// time `work` took moves the mark forward, so the next lap times the
    /// operation around it as if it had not run (for checks that must see
    /// a store's buffer while the operation is still under way).
    #[inline]
    pub fn exclude<T>(&mut self, work: impl FnOnce() -> T) -> T {
        let start = self.clock.raw();
        let out = work();
        let spent = self.clock.raw().saturating_sub(start);
        self.mark = self.mark.saturating_add(spent);
        out
    }

    /// Times one operation on its own: restart, run `op`, lap.
    #[inline]
    pub fn time<T>(&mut self, op: impl FnOnce() -> T) -> T {
        self.restart();
        let out = op();
        self.lap();
        out
    }

    /// Times `op` alone on a timer of its own: its output and how long it
    /// ran, ns (a step timed once, such as a sync).
    pub fn once<T>(op: impl FnOnce() -> T) -> (T, u64) {
        let mut timer = OpTimer::with_capacity(1);
        let out = timer.time(op);
        (out, timer.total_ns())
    }

    /// The sum of the intervals recorded, ns.
    pub fn total_ns(&self) -> u64 {
        self.nanos().iter().sum()
    }

    /// How many intervals were recorded.
    pub fn len(&self) -> usize {
        self.ticks.len()
    }

    /// Whether no interval was recorded.
    pub fn is_empty(&self) -> bool {
        self.ticks.is_empty()
    }

    /// Each interval in nanoseconds, in the order recorded.
    pub fn nanos(&self) -> Vec<u64> {
        self.ticks
            .iter()
            .map(|&d| self.clock.delta_as_nanos(0, d))
            .collect()
    }

    /// The intervals as a latency histogram and their sum in nanoseconds.
    pub fn latencies(&self) -> (Latencies, u64) {
        let mut latencies = Latencies::new();
        let mut total = 0u64;
        for ns in self.nanos() {
            latencies.record(ns);
            total += ns;
        }
        (latencies, total)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    /// A timer on a clock that moves only when the test moves it, so every
    /// interval is known exactly whatever else the machine is doing.
    fn mocked(operations: usize) -> (OpTimer, Arc<quanta::Mock>) {
        let (clock, mock) = quanta::Clock::mock();
        let mark = clock.raw();
        let timer = OpTimer {
            clock,
            ticks: Vec::with_capacity(operations),
            mark,
        };
        (timer, mock)
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn each_lap_is_one_interval_and_restart_leaves_work_out() {
        let (mut t, clock) = mocked(4);
        // Untimed work before the first operation.
        clock.increment(5 * MS);
        t.time(|| clock.increment(2 * MS));
        // Untimed work between operations, left out by restart.
        clock.increment(20 * MS);
        t.restart();
        t.lap();
        // Two back-to-back operations: each lap ends one and starts the next.
        clock.increment(3 * MS);
        t.lap();
        clock.increment(7 * MS);
        t.lap();
        let ns = t.nanos();
        assert_eq!(ns, [2 * MS, 0, 3 * MS, 7 * MS]);
        assert_eq!(t.len(), 4);
        let (lat, total) = t.latencies();
        assert_eq!(lat.count(), 4);
        assert_eq!(total, 12 * MS);
        assert_eq!(t.total_ns(), 12 * MS);
        // clear forgets the intervals and starts the next one now.
        clock.increment(MS);
        t.clear();
        assert!(t.is_empty());
        clock.increment(4 * MS);
        t.lap();
        assert_eq!(t.nanos(), [4 * MS]);
    }

    #[test]
    fn excluded_work_inside_an_operation_is_not_timed() {
        let (mut t, clock) = mocked(1);
        t.restart();
        clock.increment(2 * MS);
        let out = t.exclude(|| {
            clock.increment(30 * MS);
            "checked"
        });
        assert_eq!(out, "checked");
        clock.increment(MS);
        t.lap();
        // The operation's own 3 ms, none of the excluded 30 ms.
        assert_eq!(t.nanos(), [3 * MS]);
    }

    /// On the real clock, each interval against a second reading of the
    /// same clock (no bound in milliseconds, which a loaded machine could
    /// break): a lap holds the operation it ends (a sleep timed from inside
    /// it) and lies within the span read around it; excluded work moves
    /// the mark forward by at least its own span.
    #[test]
    fn the_real_clock_times_the_operation_and_nothing_around_it() {
        let outside = quanta::Clock::new();
        let span = |start: u64, end: u64| outside.delta_as_nanos(start, end);
        let sleep = || {
            let start = outside.raw();
            std::thread::sleep(Duration::from_millis(2));
            span(start, outside.raw())
        };
        let mut t = OpTimer::with_capacity(2);
        let before = outside.raw();
        let slept = t.time(sleep);
        let between = outside.raw();
        // Untimed, then an operation around excluded work.
        sleep();
        let resumed = outside.raw();
        t.restart();
        let excluded = t.exclude(sleep);
        t.lap();
        let after = outside.raw();
        let ns = t.nanos();
        assert_eq!(ns.len(), 2);
        assert!(
            ns[0] >= slept,
            "the operation itself was lost: {ns:?} {slept}"
        );
        assert!(ns[0] <= span(before, between), "{ns:?}");
        assert!(
            ns[1] + excluded <= span(resumed, after),
            "excluded work leaked in: {ns:?} {excluded}"
        );
        let (_, total) = t.latencies();
        assert_eq!(total, ns[0] + ns[1]);
    }
}
