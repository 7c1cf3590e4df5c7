//! `blobbench serve`: command-line options to the HTTP server's configuration.

use crate::cli::ServeArgs;
use crate::error::{Error, Result};
use crate::http::server::{ServeConfig, serve};
use crate::target::Target;

pub fn run(args: &ServeArgs) -> Result<()> {
    if args.max_connections == 0 {
        return Err(Error::usage("--max-connections must be at least 1"));
    }
    serve(ServeConfig {
        target: Target::parse(&args.target)?,
        listen: args.listen,
        max_connections: args.max_connections as usize,
        header_timeout: *args.header_timeout,
        log: args.log,
    })
}
