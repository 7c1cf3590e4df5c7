//! Which process left a record: its pid and the time it started (as the
//! kernel counts it, in clock ticks since boot), so a record a running
//! process keeps is told from one a process that has ended left behind,
//! even once the ended process's pid has been given to another process.

/// When `main` began, if it marked it ([`mark_start`]): the zero of the
/// start-up cost a run records (time before its first timed operation).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Marks now as this process's start; the first call wins. `main` calls
/// it before parsing its arguments.
pub fn mark_start() {
    let _ = STARTED.set(std::time::Instant::now());
}

/// The instant [`mark_start`] recorded, or None where nothing marked it
/// (a library caller, a unit test).
pub fn started() -> Option<std::time::Instant> {
    STARTED.get().copied()
}

/// A process as it can be recognised later: pid and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessStamp {
    /// The process id.
    pub pid: u32,
    /// When it started: field 22 of `/proc/PID/stat`.
    pub start: u64,
}

impl ProcessStamp {
    /// This process.
    pub fn current() -> ProcessStamp {
        let pid = std::process::id();
        // /proc is always there on Linux; without it, 0 still tells this
        // process's records from another pid's.
        let start = start_time(pid).unwrap_or(0);
        ProcessStamp { pid, start }
    }

    /// Whether the process that made the stamp is still running: a process
    /// with its pid exists and started when it did.
    pub fn is_running(&self) -> bool {
        self.pid == std::process::id() && self.start == ProcessStamp::current().start
            || start_time(self.pid).is_some_and(|start| start == self.start)
    }

    /// The stamp as text: `PID-START`.
    pub fn to_text(self) -> String {
        format!("{}-{}", self.pid, self.start)
    }

    /// A stamp written by [`ProcessStamp::to_text`], or None.
    pub fn parse(text: &str) -> Option<ProcessStamp> {
        let (pid, start) = text.split_once('-')?;
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(pid) || !digits(start) {
            return None;
        }
        Some(ProcessStamp {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }
}

/// When process `pid` started (field 22 of `/proc/PID/stat`), or None when
/// no such process runs.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or
    // parentheses itself: the fields after it follow the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name; 22 is the 20th.
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_stamp_of_another_start_does_not() {
        let me = ProcessStamp::current();
        assert!(me.start > 0, "/proc gives this process's start");
        assert!(me.is_running());
        assert_eq!(ProcessStamp::parse(&me.to_text()), Some(me));
        // The same pid, started at another time: a process that ended and
        // whose pid was given to this one.
        let earlier = ProcessStamp {
            start: me.start - 1,
            ..me
        };
        assert!(!earlier.is_running());
        // The parent runs (it started the tests); a pid above pid_max never.
        let parent = std::os::unix::process::parent_id();
        let parent = ProcessStamp {
            pid: parent,
            start: start_time(parent).unwrap(),
        };
        assert!(parent.is_running());
        let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            !ProcessStamp {
                pid: max + 1,
                start: 1
            }
            .is_running()
        );
        for bad in ["", "1", "1-", "-2", "a-2", "1-2-3", "1-x"] {
            assert_eq!(ProcessStamp::parse(bad), None, "{bad:?}");
        }
    }
}
