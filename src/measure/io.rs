//! The process's I/O counters (`/proc/self/io`), read around a repetition.

use serde::{Deserialize, Serialize};

/// Bytes and system calls as the kernel counts them for this process.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct IoCounters {
    /// Bytes passed to read-like system calls, whether or not they came
    /// from disk (page-cache hits count).
    pub rchar: u64,
    /// Bytes passed to write-like system calls, whether or not they reached
    /// disk yet.
    pub wchar: u64,
    /// Number of read-like system calls (read, pread, readv, ...).
    pub syscr: u64,
    /// Number of write-like system calls (write, pwrite, writev, ...).
    pub syscw: u64,
    /// Bytes the process caused to be fetched from storage (page-cache
    /// misses); near 0 on a warm cache.
    pub read_bytes: u64,
    /// Bytes the process caused to be sent to storage, counted when pages
    /// are dirtied, so it includes writes still in the page cache.
    pub write_bytes: u64,
}

impl IoCounters {
    /// The counters now.
    pub fn now() -> IoCounters {
        let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
        let mut c = IoCounters::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k {
                "rchar" => c.rchar = v,
                "wchar" => c.wchar = v,
                "syscr" => c.syscr = v,
                "syscw" => c.syscw = v,
                "read_bytes" => c.read_bytes = v,
                "write_bytes" => c.write_bytes = v,
                _ => {}
            }
        }
        c
    }

    /// What was counted since `s`.
    pub fn since(&self, s: &IoCounters) -> IoCounters {
        IoCounters {
            rchar: self.rchar.saturating_sub(s.rchar),
            wchar: self.wchar.saturating_sub(s.wchar),
            syscr: self.syscr.saturating_sub(s.syscr),
            syscw: self.syscw.saturating_sub(s.syscw),
            read_bytes: self.read_bytes.saturating_sub(s.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(s.write_bytes),
        }
    }
}
