//! `blobbench sweep`: every combination of SQLite settings, ranked.

use crate::cli::SweepArgs;
use crate::error::Result;

/// Runs `sweep`.
pub fn run(args: &SweepArgs) -> Result<()> {
    crate::suite::sweep::run(args)
}
