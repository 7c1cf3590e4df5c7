//! Ctrl-C (SIGINT), SIGTERM and SIGHUP while a command has made something
//! it must not leave behind: the default action would kill the process
//! and leave `suite aging`'s loop devices, mounts and images, a suite's
//! temporary work folder (hundreds of MB after `quick`), or a mixed
//! run's dataset half-resized. Instead, while a [`Guard`] lives, a handler
//! only records the signal (a store to an atomic, the one thing a handler
//! may safely do); the work looks at it between steps: a suite calls
//! [`check`] and, once a signal came, returns [`Error::Interrupted`],
//! unwinding through the `Drop` of every volume and work folder, which
//! removes it; a mixed run asks [`received`], stops its workers, puts
//! its dataset right and writes what it measured. The command then exits
//! 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM), as a shell
//! reports a process the signal ended.
//!
//! One mechanism for every command: a leaf every layer may use, installed
//! where the things to clean up are made (`suite::common::WorkDir`, the
//! aging suite, the mixed-run executor) and checked where work is done
//! in steps (a dataset's blobs, a run's operations, a suite's cases).

use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{Error, Interruption, Result};

/// The signals handled: the terminal's Ctrl-C, a polite kill, a closed
/// terminal.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The last signal that came while a [`Guard`] was installed; 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Guards alive, so a nested [`install`] neither clears a signal the outer
/// one has seen nor restores handlers the outer one still needs.
static DEPTH: Mutex<usize> = Mutex::new(0);

/// Records the signal and nothing else: async-signal-safe. The handler
/// stays installed (no SA_RESETHAND), so a second Ctrl-C while the suite
/// unwinds is recorded again rather than killing the process with its
/// volumes still mounted.
extern "C" fn record(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// While alive, SIGINT, SIGTERM and SIGHUP set a flag instead of killing
/// the process; dropping it restores the handlers that were there before.
#[must_use = "the handlers are restored when the Guard drops"]
pub struct Guard {
    /// The handlers found at install, in [`SIGNALS`]' order; empty for a
    /// nested guard, which leaves them to the outer one.
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

/// Installs the handlers (see [`Guard`]). The first guard clears any
/// signal recorded before it; a nested one keeps it.
pub fn install() -> Guard {
    let mut depth = DEPTH.lock().unwrap_or_else(|e| e.into_inner());
    *depth += 1;
    if *depth > 1 {
        return Guard {
            previous: Vec::new(),
        };
    }
    RECEIVED.store(0, Ordering::SeqCst);
    let mut previous = Vec::new();
    for signal in SIGNALS {
        // A signal ignored when blobbench started stays ignored, as in any
        // well-behaved program: `nohup blobbench suite aging &` must survive
        // the terminal's hang-up, and a background job its shell's Ctrl-C.
        if ignored(signal) {
            continue;
        }
        // SAFETY: both structs are zeroed plain data then filled as
        // sigaction(2) expects; `record` is an extern "C" fn(c_int) that
        // only stores to an atomic. SA_RESTART keeps a signal from failing
        // the I/O in progress with EINTR: the suite stops at its next check.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = record as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut old) == 0 {
                previous.push((signal, old));
            }
        }
    }
    Guard { previous }
}

/// Whether `signal` is ignored right now (SIG_IGN).
fn ignored(signal: libc::c_int) -> bool {
    // SAFETY: a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut depth = DEPTH.lock().unwrap_or_else(|e| e.into_inner());
        *depth = depth.saturating_sub(1);
        for (signal, old) in &self.previous {
            // SAFETY: `old` is what sigaction returned for this signal.
            unsafe { libc::sigaction(*signal, old, std::ptr::null_mut()) };
        }
        if *depth == 0 {
            // The work the signal stopped has unwound past its last guard:
            // code run later without a guard of its own (a dataset made,
            // a run) is not stopped by a signal that is no longer its.
            RECEIVED.store(0, Ordering::SeqCst);
        }
    }
}

/// The signal that came while a guard was installed, if one did: for
/// work that stops in its own way (a mixed run's workers) rather
/// than by returning [`check`]'s error at once.
pub fn received() -> Option<libc::c_int> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// What a command that unwinds on a signal has done about what it made.
const UNWOUND: &str = "stopped, and removed what it had made for its own use (temporary folders, mounted volumes; kept with --keep), as after any failure; anything it could not remove is named above";

/// Err([`Error::Interrupted`]) once one of the signals came while a guard
/// was installed: the caller stops and lets its volumes and folders drop.
pub fn check() -> Result<()> {
    match received() {
        None => Ok(()),
        Some(signal) => Err(Error::Interrupted(Interruption {
            signal,
            aftermath: UNWOUND.into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler installed for `signal` right now.
    fn current(signal: libc::c_int) -> libc::sighandler_t {
        // SAFETY: a null new action only reads the current one.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old);
            old.sa_sigaction
        }
    }

    /// The tests change the process's handlers: one at a time.
    static HANDLERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Runs `body` in a process of its own (this test binary again, running
    /// only the test `name`): it installs handlers for the whole process
    /// and raises signals, which other tests running at once in this
    /// process would see and stop for (their runs and suites check).
    fn alone(name: &str, body: impl FnOnce()) {
        const CHILD: &str = "BLOBBENCH_TEST_INTERRUPT_ALONE";
        if std::env::var_os(CHILD).is_some() {
            body();
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &format!("interrupt::tests::{name}"),
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && printed.contains("1 passed"),
            "{name} in its own process: {}\n{printed}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Sets each signal's handler for the life of the value and puts the
    /// inherited ones back after, so a test starts from the dispositions
    /// it names and not from whatever started the tests (`nohup` hands
    /// them SIGHUP ignored, a background job SIGINT).
    struct Dispositions(Vec<(libc::c_int, libc::sighandler_t)>);

    fn dispositions(set: &[(libc::c_int, libc::sighandler_t)]) -> Dispositions {
        // SAFETY: signal(2) on this process; every old handler is kept.
        Dispositions(
            set.iter()
                .map(|&(signal, handler)| (signal, unsafe { libc::signal(signal, handler) }))
                .collect(),
        )
    }

    impl Drop for Dispositions {
        fn drop(&mut self) {
            for &(signal, handler) in &self.0 {
                // SAFETY: puts back what signal(2) returned above.
                unsafe { libc::signal(signal, handler) };
            }
        }
    }

    #[test]
    fn a_signal_ignored_at_the_start_stays_ignored() {
        alone(
            "a_signal_ignored_at_the_start_stays_ignored",
            a_signal_ignored_at_the_start_stays_ignored_here,
        );
    }

    fn a_signal_ignored_at_the_start_stays_ignored_here() {
        let _one = HANDLERS.lock().unwrap_or_else(|e| e.into_inner());
        let _set = dispositions(&[
            (libc::SIGHUP, libc::SIG_IGN),
            (libc::SIGTERM, libc::SIG_DFL),
            (libc::SIGINT, libc::SIG_DFL),
        ]);
        let guard = install();
        assert_eq!(current(libc::SIGHUP), libc::SIG_IGN);
        // SAFETY: raise sends SIGHUP to this thread, which ignores it.
        unsafe { libc::raise(libc::SIGHUP) };
        check().unwrap();
        // The others are still caught.
        assert_eq!(
            current(libc::SIGTERM),
            record as extern "C" fn(libc::c_int) as usize
        );
        drop(guard);
        assert_eq!(current(libc::SIGHUP), libc::SIG_IGN);
        assert_eq!(current(libc::SIGTERM), libc::SIG_DFL);
    }

    #[test]
    fn a_signal_is_recorded_twice_and_the_old_handlers_come_back() {
        alone(
            "a_signal_is_recorded_twice_and_the_old_handlers_come_back",
            a_signal_is_recorded_twice_and_the_old_handlers_come_back_here,
        );
    }

    fn a_signal_is_recorded_twice_and_the_old_handlers_come_back_here() {
        let _one = HANDLERS.lock().unwrap_or_else(|e| e.into_inner());
        let _set = dispositions(&[
            (libc::SIGHUP, libc::SIG_DFL),
            (libc::SIGTERM, libc::SIG_DFL),
            (libc::SIGINT, libc::SIG_DFL),
        ]);
        let guard = install();
        check().unwrap();
        let inner = install();
        // SAFETY: raise sends SIGTERM to this thread; the handler records it.
        unsafe { libc::raise(libc::SIGTERM) };
        let e = check().unwrap_err();
        assert_eq!(e.exit_code(), 143, "128 + SIGTERM");
        assert!(e.to_string().starts_with("interrupted (SIGTERM)"), "{e}");
        drop(inner);
        // The outer guard still handles: a second signal is recorded too.
        assert_eq!(
            current(libc::SIGHUP),
            record as extern "C" fn(libc::c_int) as usize
        );
        unsafe { libc::raise(libc::SIGHUP) };
        let e = check().unwrap_err();
        assert!(e.to_string().contains("SIGHUP"), "{e}");
        assert_eq!(e.exit_code(), 129, "128 + SIGHUP");
        drop(guard);
        assert_eq!(current(libc::SIGHUP), libc::SIG_DFL);
        // Past the last guard, the signal is no longer anyone's.
        check().unwrap();
    }
}
