//! `load --start-at`: levels started at fixed times of the system clock, so
//! loads started on several machines at different moments run each level
//! together (for `merge`). The first level starts at the time given, each
//! later one a slot after the one before: `-t`, the second a level may run
//! on to finish its last requests ([`END_GRACE`]), and a second more for
//! its connections to close and its figures to be summed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::END_GRACE;
use crate::error::{Error, Result};
use crate::progress::Progress;

/// How far ahead a start may be: further is more likely a mistyped date.
const FURTHEST_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// When each level starts.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// The first level's start.
    first: SystemTime,
    /// Between two levels' starts.
    slot: Duration,
}

impl Schedule {
    /// Levels of `duration` from `first`, checked against the clock now: a
    /// time passed, or more than a day ahead, is a usage error.
    pub fn new(first: SystemTime, duration: Duration) -> Result<Schedule> {
        let now = SystemTime::now();
        let shown = humantime::format_rfc3339_millis(first);
        let example = humantime::format_rfc3339_seconds(now + Duration::from_secs(60));
        if let Ok(ago) = now.duration_since(first) {
            return Err(Error::usage(format!(
                "--start-at {shown}: passed {:.1} s ago by this machine's clock ({}); give a time ahead, e.g. --start-at {example}",
                ago.as_secs_f64(),
                humantime::format_rfc3339_millis(now)
            )));
        }
        if first.duration_since(now).unwrap_or_default() > FURTHEST_AHEAD {
            return Err(Error::usage(format!(
                "--start-at {shown}: more than a day ahead by this machine's clock ({}); give a time within a day, e.g. --start-at {example}",
                humantime::format_rfc3339_seconds(now)
            )));
        }
        Ok(Schedule {
            first,
            slot: duration + END_GRACE + Duration::from_secs(1),
        })
    }

    /// Level `i`'s start (from 0).
    pub fn start_of(&self, i: usize) -> SystemTime {
        self.first + self.slot * i as u32
    }

    /// Between two levels' starts.
    pub fn slot(&self) -> Duration {
        self.slot
    }

    /// Waits until level `i`'s start (at once when it has passed: the level
    /// before overran its slot), counting down in `progress`'s message;
    /// returns the start, ns since the Unix epoch.
    pub fn wait_for(&self, i: usize, progress: &dyn Progress) -> u64 {
        let at = self.start_of(i);
        let shown = humantime::format_rfc3339_millis(at);
        while let Ok(left) = at.duration_since(SystemTime::now())
            && !left.is_zero()
        {
            progress.message(&format!(
                "starts at {shown} (in {:.1} s)",
                left.as_secs_f64()
            ));
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
        at.duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_start_a_slot_apart_and_a_start_waited_for_is_kept() {
        let first = SystemTime::now() + Duration::from_millis(150);
        let s = Schedule::new(first, Duration::from_secs(2)).unwrap();
        assert_eq!(s.slot(), Duration::from_secs(4));
        assert_eq!(s.start_of(2), first + Duration::from_secs(8));
        let at = s.wait_for(0, &crate::progress::Silent);
        assert!(SystemTime::now() >= first);
        assert_eq!(
            at,
            first.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
        );
    }

    #[test]
    fn a_time_passed_or_days_ahead_is_refused_naming_it() {
        let past = SystemTime::now() - Duration::from_secs(5);
        let e = Schedule::new(past, Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("passed 5."), "{e}");
        let far = SystemTime::now() + Duration::from_secs(3 * 24 * 3600);
        let e = Schedule::new(far, Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("more than a day ahead"), "{e}");
    }
}
