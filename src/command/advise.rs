//! `blobbench advise`: where to keep your blobs, calibrated here.

use crate::cli::AdviseArgs;
use crate::error::Result;

/// Runs `advise`.
pub fn run(args: &AdviseArgs) -> Result<()> {
    crate::suite::advise::run(args)
}
