//! What one worker of a mixed run counted, and the merge of all.

use crate::measure::latency::Latencies;
use crate::result::faults::{Activity, Failures, Reconnect};
use crate::result::mixed_run::Outcomes;

/// One kind's figures in one worker.
#[derive(Default)]
pub struct KindTally {
    pub latencies: Latencies,
    pub ops: u64,
    pub bytes: u64,
    pub outcomes: Outcomes,
    /// Operations that failed, by class.
    pub failures: Failures,
    /// How long each failed operation took until it failed.
    pub failed: Latencies,
}

impl KindTally {
    pub fn absorb(&mut self, o: KindTally) {
        self.latencies.merge(&o.latencies);
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.outcomes.add(&o.outcomes);
        self.failures.add(&o.failures);
        self.failed.merge(&o.failed);
    }
}

/// Everything one worker measured.
#[derive(Default)]
pub struct Tally {
    /// Indexed by `OpKind as usize`.
    pub kinds: [KindTally; 6],
    pub commits: KindTally,
    pub verified: u64,
    pub unjudged: u64,
    /// Open loop: how late each operation started.
    pub lag: Latencies,
    /// Keys deleted, or inserts that did not land: written back afterwards.
    pub touched: Vec<u64>,
    /// Completions and failures per tenth of a second.
    pub activity: Activity,
    /// Connections this worker opened again after one broke.
    pub reconnects: Vec<Reconnect>,
}

impl Tally {
    pub fn absorb(&mut self, o: Tally) {
        for (mine, theirs) in self.kinds.iter_mut().zip(o.kinds) {
            mine.absorb(theirs);
        }
        self.commits.absorb(o.commits);
        self.verified += o.verified;
        self.unjudged += o.unjudged;
        self.lag.merge(&o.lag);
        self.touched.extend(o.touched);
        self.activity.add(&o.activity);
        self.reconnects.extend(o.reconnects);
    }
}
