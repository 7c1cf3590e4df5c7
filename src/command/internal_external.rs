//! `blobbench suite internal-external`: internal vs external blobs.

use crate::cli::InternalExternalArgs;
use crate::error::Result;

/// Runs `suite internal-external`.
pub fn run(args: &InternalExternalArgs) -> Result<()> {
    crate::suite::internal_external::run(args)
}
