//! `blobbench suite fasterthanfs`: "35% faster than the filesystem".

use crate::cli::FasterThanFsArgs;
use crate::error::Result;

/// Runs `suite fasterthanfs`.
pub fn run(args: &FasterThanFsArgs) -> Result<()> {
    crate::suite::fasterthanfs::run(args)
}
