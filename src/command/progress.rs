//! Progress bars on stderr; hidden automatically when stderr is not a terminal.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use crate::progress::Progress;

/// A bar with blobbench's style: label, bar, count and time left.
pub fn bar(len: u64, message: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:28} [{bar:30}] {pos}/{len} ({eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(message.to_string());
    pb
}

/// [`Progress`] drawn as one bar per stage on stderr; notes are printed above.
#[derive(Default)]
pub struct Bars {
    current: Mutex<Option<ProgressBar>>,
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
        *current = Some(bar(total, label));
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
