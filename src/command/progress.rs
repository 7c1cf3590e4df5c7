//! Progress bars on stderr; drawn only on a terminal, without NO_COLOR or
//! --quiet ([`super::streams::progress_shown`]).
//! A bar shows its stage, how far it is, the time left, and what it is doing
//! (the round and case; the message is cut first on a narrow terminal). The
//! time left is counted down from the stage's expected time once
//! the library knows it ([`Progress::expect_remaining`]), else extrapolated
//! from the units done.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::progress::Progress;

/// Width of the bar itself, in characters.
const BAR_WIDTH: usize = 20;

/// What the work running now and the rest of the stage after it were
/// expected to take, in seconds, and when that was said: the time left
/// counts down through `current` between reports and holds at `after`.
#[derive(Debug, Clone, Copy)]
struct Expectation {
    current: f64,
    after: f64,
    at: Instant,
}

/// The current stage's expectation, shared with the bar's drawing keys.
type Shared = Arc<Mutex<Option<Expectation>>>;

fn read(shared: &Shared) -> Option<Expectation> {
    *shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// Seconds left now, and the share of the stage done (by time).
fn by_time(e: Expectation, state: &ProgressState) -> (f64, f64) {
    time_share(
        e.current,
        e.after,
        e.at.elapsed().as_secs_f64(),
        state.elapsed().as_secs_f64(),
    )
}

/// [`by_time`] on plain seconds: `since` the expectation was said, `done`
/// since the stage started. A run that overruns `current` holds the time
/// left at `after`, while the share done still grows with the time spent.
fn time_share(current: f64, after: f64, since: f64, done: f64) -> (f64, f64) {
    let left = (current - since).max(0.0) + after;
    let fraction = if done + left > 0.0 {
        done / (done + left)
    } else {
        1.0
    };
    (left, fraction)
}

/// "42s left", "3m 05s left", "1h 02m left".
pub fn time_left(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s}s left"),
        60..3600 => format!("{}m {:02}s left", s / 60, s % 60),
        _ => format!("{}h {:02}m left", s / 3600, s % 3600 / 60),
    }
}

/// A bar with blobbench's style: stage, bar, count or percent, time left
/// and message.
pub fn bar(len: u64, stage: &str) -> ProgressBar {
    styled(len, stage, Arc::new(Mutex::new(None)))
}

fn styled(len: u64, stage: &str, shared: Shared) -> ProgressBar {
    let (fill, done, left) = (shared.clone(), shared.clone(), shared);
    let style = ProgressStyle::with_template("{prefix} [{fill}] {done} {left:<11} {wide_msg}")
        .expect("valid template")
        .with_key(
            "fill",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let f = read(&fill).map_or(f64::from(s.fraction()), |e| by_time(e, s).1);
                let full = ((f * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
                let head = if full < BAR_WIDTH { ">" } else { "" };
                let rest = BAR_WIDTH.saturating_sub(full + head.len());
                let _ = write!(w, "{}{head}{}", "=".repeat(full), " ".repeat(rest));
            },
        )
        .with_key(
            "done",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = match read(&done) {
                    Some(e) => write!(w, "{:>3.0}%", by_time(e, s).1 * 100.0),
                    None => write!(w, "{}/{}", s.pos(), s.len().unwrap_or(0)),
                };
            },
        )
        .with_key(
            "left",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = match read(&left) {
                    Some(e) => write!(w, "{}", time_left(by_time(e, s).0)),
                    None if s.pos() > 0 && s.len().is_some() => {
                        write!(w, "{}", time_left(s.eta().as_secs_f64()))
                    }
                    None => Ok(()),
                };
            },
        );
    // Drawn only where streams allows: a terminal, no NO_COLOR, no --quiet.
    let target = if super::streams::progress_shown() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let pb = ProgressBar::with_draw_target(Some(len), target);
    pb.set_style(style);
    pb.set_prefix(stage.to_string());
    // Redrawn twice a second, so the time left counts down during a long
    // case; a hidden bar needs no ticking thread.
    if !pb.is_hidden() {
        pb.enable_steady_tick(Duration::from_millis(500));
    }
    pb
}

/// [`Progress`] drawn as one bar per stage on stderr; notes are printed above.
#[derive(Default)]
pub struct Bars {
    current: Mutex<Option<ProgressBar>>,
    /// The current stage's expected time, read by its bar when drawn.
    expected: Shared,
}

impl Bars {
    /// No stage started yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn with(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(pb) = self.current.lock().expect("progress lock").as_ref() {
            f(pb);
        }
    }
}

impl Progress for Bars {
    fn start(&self, label: &str, total: u64) {
        let mut current = self.current.lock().expect("progress lock");
        if let Some(old) = current.take() {
            old.finish_and_clear();
        }
        // A new stage knows nothing of its time yet.
        *self.expected.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *current = Some(styled(total, label, self.expected.clone()));
    }
    fn set_total(&self, total: u64) {
        self.with(|pb| pb.set_length(total));
    }
    fn message(&self, text: &str) {
        self.with(|pb| pb.set_message(text.to_string()));
    }
    fn advance(&self, n: u64) {
        self.with(|pb| pb.inc(n));
    }
    fn expect_remaining(&self, current: f64, after: f64) {
        // Set before drawing: the bar's keys take this lock to draw.
        *self.expected.lock().unwrap_or_else(|e| e.into_inner()) = Some(Expectation {
            current,
            after,
            at: Instant::now(),
        });
        self.with(|pb| pb.tick());
    }
    fn finish(&self) {
        if let Some(pb) = self.current.lock().expect("progress lock").take() {
            pb.finish_and_clear();
        }
    }
    fn note(&self, text: &str) {
        match self.current.lock().expect("progress lock").as_ref() {
            Some(pb) => pb.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_reads_in_seconds_minutes_and_hours() {
        assert_eq!(time_left(0.2), "0s left");
        assert_eq!(time_left(42.4), "42s left");
        assert_eq!(time_left(185.0), "3m 05s left");
        assert_eq!(time_left(3720.0), "1h 02m left");
    }

    #[test]
    fn an_overrunning_run_holds_the_time_left_at_the_rest() {
        // 2 s expected for this run, 8 s after it; 1 s in, 4 s into the stage.
        assert_eq!(time_share(2.0, 8.0, 1.0, 4.0), (9.0, 4.0 / 13.0));
        // 5 s in: the run overran, the rest is still 8 s away.
        assert_eq!(time_share(2.0, 8.0, 5.0, 8.0), (8.0, 0.5));
        assert_eq!(time_share(0.0, 0.0, 1.0, 0.0), (0.0, 1.0));
    }
}
