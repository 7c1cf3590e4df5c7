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
    use super::*;

    #[test]
    fn each_lap_is_one_interval_and_restart_leaves_work_out() {
        let mut t = OpTimer::with_capacity(4);
        t.time(|| std::thread::sleep(std::time::Duration::from_millis(2)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        t.restart();
        t.lap();
        let ns = t.nanos();
        assert_eq!(ns.len(), 2);
        assert!(ns[0] >= 2_000_000, "{ns:?}");
        assert!(ns[1] < 2_000_000, "the untimed sleep leaked in: {ns:?}");
        let (lat, total) = t.latencies();
        assert_eq!(lat.count(), 2);
        assert_eq!(total, ns[0] + ns[1]);
    }

    #[test]
    fn excluded_work_inside_an_operation_is_not_timed() {
        let mut t = OpTimer::with_capacity(1);
        t.restart();
        std::thread::sleep(std::time::Duration::from_millis(2));
        t.exclude(|| std::thread::sleep(std::time::Duration::from_millis(30)));
        t.lap();
        let ns = t.nanos();
        assert!(ns[0] >= 2_000_000, "the operation itself was lost: {ns:?}");
        assert!(ns[0] < 25_000_000, "the excluded sleep leaked in: {ns:?}");
    }
}
