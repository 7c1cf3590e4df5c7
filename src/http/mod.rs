//! Serving blobs over HTTP: the server (`blobbench serve`), its URL keys,
//! and the load generator (`blobbench load`).

pub mod keys;
pub mod load;
pub mod server;

/// Raises the open-file limit to its hard maximum: every connection is a
/// descriptor (and so is each open-loop connection's timer), and the usual
/// soft limit (1024) is below a server's --max-connections or load's -c 1000.
pub fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit with a valid, initialised struct.
    unsafe {
        let mut l: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}
