//! Process CPU time (user, system) from getrusage.

#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub system_ns: u64,
}

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
    pub fn since(self, start: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(start.user_ns),
            system_ns: self.system_ns.saturating_sub(start.system_ns),
        }
    }
}
