//! Process CPU time (user, system) from getrusage.

/// CPU time the process used, in nanoseconds (getrusage has microsecond
/// resolution): either since it started ([`now`]) or over an interval
/// ([`CpuTimes::since`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    /// Time spent in user mode (our code, SQLite, the allocator), ns.
    pub user_ns: u64,
    /// Time spent in the kernel on our behalf (system calls, page faults), ns.
    pub system_ns: u64,
}

/// The CPU time used by this process so far (all threads); zero if
/// getrusage fails, so a missing figure never stops a benchmark.
pub fn now() -> CpuTimes {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is always valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return CpuTimes::default();
    }
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    CpuTimes {
        user_ns: ns(usage.ru_utime),
        system_ns: ns(usage.ru_stime),
    }
}

impl CpuTimes {
    /// The CPU time used between `start` and `self`.
    pub fn since(self, start: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(start.user_ns),
            system_ns: self.system_ns.saturating_sub(start.system_ns),
        }
    }
}
