//! `blobbench suite http`: serving blobs over HTTP, SQLite vs files.

use crate::cli::HttpSuiteArgs;
use crate::error::Result;

/// Runs `suite http`.
pub fn run(args: &HttpSuiteArgs) -> Result<()> {
    crate::suite::http::run(args)
}
