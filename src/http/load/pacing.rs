//! Sending an open-loop request on time. tokio's timer ticks in whole
//! milliseconds and wakes up to a tick late, which at 100 req/s against a
//! 60 µs server is twenty times the latency being measured. So a worker
//! sleeps on a Linux timerfd (a high-resolution kernel timer that tokio
//! polls like a socket) until shortly before the intended start, and
//! finishes by yielding in a loop on the monotonic clock: the request leaves
//! within a few µs of its time when the generator keeps up, without burning
//! a core per connection on a machine the server shares. Where no timerfd
//! can be made, tokio's sleep stops 2 ms early and the loop does the rest.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The high-resolution sleep ends this long before the intended start:
/// enough to cover the wake-up of a parked runtime thread on a busy VM.
const TIMERFD_EARLY: Duration = Duration::from_micros(50);

/// tokio's sleep ends this long before: its tick (1 ms) plus the tick it
/// may wake late.
const TOKIO_EARLY: Duration = Duration::from_millis(2);

/// One worker's way to wait until an instant.
pub(super) struct Pacer {
    timer: Option<AsyncFd<OwnedFd>>,
}

impl Pacer {
    /// A pacer on a timerfd, or on tokio's timer where none can be made.
    /// Must be called inside the runtime.
    pub(super) fn new() -> Pacer {
        Pacer {
            timer: timerfd().ok(),
        }
    }

    /// Returns at `due` (within the µs or so a yield takes), or at once
    /// when `due` has passed.
    pub(super) async fn wait_until(&mut self, due: Instant) {
        let coarse = match &self.timer {
            Some(fd) => sleep_timerfd(fd, due.checked_sub(TIMERFD_EARLY))
                .await
                .is_ok(),
            None => false,
        };
        if !coarse && let Some(t) = due.checked_sub(TOKIO_EARLY) {
            tokio::time::sleep_until(t.into()).await;
        }
        // The precise part: other tasks on this thread still run between
        // looks at the clock.
        while Instant::now() < due {
            tokio::task::yield_now().await;
        }
    }
}

fn timerfd() -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: timerfd_create takes no pointers; a non-negative result is a
    // new descriptor that nothing else owns.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created above and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open and
    // the same descriptor until it is dropped.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(io::Error::from)
}

/// Sleeps on the timerfd until `until` (at once when it is None or past).
async fn sleep_timerfd(fd: &AsyncFd<OwnedFd>, until: Option<Instant>) -> io::Result<()> {
    let Some(left) = until.map(|t| t.saturating_duration_since(Instant::now())) else {
        return Ok(());
    };
    if left.is_zero() {
        return Ok(());
    }
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        },
    };
    let raw = fd.get_ref().as_raw_fd();
    // SAFETY: raw is a live timerfd; spec is a valid itimerspec; the old
    // value is not asked for.
    if unsafe { libc::timerfd_settime(raw, 0, &spec, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    loop {
        let mut guard = fd.readable().await?;
        let read = guard.try_io(|inner| {
            let mut expirations = [0u8; 8];
            // SAFETY: reads at most 8 bytes into an 8-byte buffer.
            let n = unsafe {
                libc::read(
                    inner.get_ref().as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    expirations.len(),
                )
            };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
        match read {
            Ok(result) => return result,
            Err(_would_block) => continue,
        }
    }
}
