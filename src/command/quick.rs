//! `blobbench quick`: about a minute, SQLite vs files on this machine.

use crate::cli::QuickArgs;
use crate::error::Result;

/// Runs `quick`.
pub fn run(args: &QuickArgs) -> Result<()> {
    crate::suite::quick::run(args)
}
