//! `blobbench suite lob`: the 2008 large-object benchmark.

use crate::cli::LobArgs;
use crate::error::Result;

/// Runs `suite lob`.
pub fn run(args: &LobArgs) -> Result<()> {
    crate::suite::lob::run(args)
}
