//! Limits a user sets on the process (`ulimit -f`, `ulimit -n`) and a
//! full disk: a write or an open that meets one fails with a line naming
//! the limit and its fix, and the command cleans up as after any failure.

/// Makes a write past the file-size limit fail (EFBIG) instead of killing
/// the process with SIGXFSZ, which would leave its temporary folders and
/// say nothing.
pub fn write_past_file_size_fails() {
    // SAFETY: setting a signal's disposition to SIG_IGN takes no pointers.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The soft limit of `resource` (RLIMIT_*), when one is set.
fn soft_limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is handed, which outlives it.
    let ok = unsafe { libc::getrlimit(resource, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// The file-size limit (`ulimit -f`) in bytes, when one is set.
pub fn file_size() -> Option<u64> {
    soft_limit(libc::RLIMIT_FSIZE)
}

/// The file-size limit as a clause with its fix.
pub fn file_size_clause() -> String {
    let limit = file_size().map_or("set".to_string(), |b| format!("{}", b / 1024));
    format!(
        "a file reached the file size limit (ulimit -f {limit}, in KiB): raise it with ulimit -f unlimited, or ask for smaller data"
    )
}

/// The open-files limit as a clause with its fix.
pub fn open_files_clause() -> String {
    let limit = soft_limit(libc::RLIMIT_NOFILE).map_or("set".to_string(), |n| format!("{n}"));
    format!(
        "the process reached its limit on open files (ulimit -n {limit}): raise it with ulimit -n 65536, or use fewer threads"
    )
}

/// The full disk as a clause with its fix.
pub const DISK_FULL: &str =
    "the disk is full (or the user's quota reached): free some space, or choose another disk";

/// The limit an I/O error met, as a clause with its fix; None for any
/// other error.
pub fn clause(e: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    match (e.kind(), e.raw_os_error()) {
        (FileTooLarge, _) => Some(file_size_clause()),
        (StorageFull | QuotaExceeded, _) => Some(DISK_FULL.into()),
        (_, Some(libc::EMFILE | libc::ENFILE)) => Some(open_files_clause()),
        _ => None,
    }
}

/// Whether this process's open descriptors are at its limit now: how an
/// open that failed without saying why (SQLite's "unable to open
/// database file") is known to have met it.
pub fn open_files_exhausted() -> bool {
    let Some(limit) = soft_limit(libc::RLIMIT_NOFILE) else {
        return false;
    };
    match std::fs::read_dir("/proc/self/fd") {
        // It holds one descriptor of its own while it counts.
        Ok(open) => open.count() as u64 + 2 >= limit,
        Err(e) => matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)),
    }
}
