//! Progress bars on stderr; hidden automatically when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressStyle};

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
