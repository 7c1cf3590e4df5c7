//! The process's I/O counters (`/proc/self/io`), read around a repetition.

use serde::{Deserialize, Serialize};

/// Bytes and system calls as the kernel counts them for this process.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct IoCounters {
    pub rchar: u64,
    pub wchar: u64,
    pub syscr: u64,
    pub syscw: u64,
    pub read_bytes: u64,
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
