//! `blobbench serve`: command-line options to the HTTP server's configuration.

use crate::cli::ServeArgs;
use crate::error::{Error, Result};
use crate::http::server::{ServeConfig, Writable, serve};
use crate::target::{Target, split_injection};

/// Checks the options (a writable server needs a token of 16 characters or
/// more, limits must be positive, exclusive locking cannot serve writes),
/// then serves until interrupted.
pub fn run(args: &ServeArgs) -> Result<()> {
    if let (_, Some(spec)) = split_injection(&args.target)? {
        return Err(Error::usage(format!(
            "inject={spec}: inject is a testing aid for timed runs (blobbench run, quick, suite fasterthanfs, internal-external; suite http --inject waits in the load instead); serve refuses it: drop ?inject= from the target"
        )));
    }
    if args.max_connections == 0 {
        return Err(Error::usage("--max-connections must be at least 1"));
    }
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("BLOBBENCH_TOKEN").ok());
    let writable = match (args.writable, token) {
        (false, Some(_)) if args.token.is_some() => {
            return Err(Error::usage(
                "--token given without --writable: add --writable to allow PUT and DELETE",
            ));
        }
        (false, _) => None,
        (true, None) => {
            return Err(Error::usage(
                "--writable needs --token TOKEN (or BLOBBENCH_TOKEN): writers must authenticate",
            ));
        }
        (true, Some(t)) if t.len() < 16 => {
            return Err(Error::usage(
                "--token is shorter than 16 characters: use a long random token, e.g. $(openssl rand -hex 16)",
            ));
        }
        (true, Some(token)) => Some(Writable {
            token,
            max_blob_size: args.max_blob_size,
        }),
    };
    for (name, d) in [
        ("--header-timeout", *args.header_timeout),
        ("--body-timeout", *args.body_timeout),
    ] {
        if d.is_zero() {
            return Err(Error::usage(format!(
                "{name} 0s: every client would be dropped at once; give e.g. {name} 10s"
            )));
        }
    }
    if args.max_blob_size == 0 {
        return Err(Error::usage("--max-blob-size must be positive, e.g. 64MiB"));
    }
    let target = Target::parse(&args.target)?;
    if writable.is_some()
        && target
            .sqlite_settings()
            .and_then(|s| s.locking_mode.as_deref())
            .is_some_and(|m| m == "exclusive")
    {
        return Err(Error::usage(
            "locking_mode=exclusive with --writable: each thread's connection keeps its lock, so writes would wait \
for ever; drop ?locking_mode=exclusive to serve writes",
        ));
    }
    let mut writable = writable;
    // A PUT the store cannot hold is answered 413 at the door, not after
    // its body arrived and the store refused it.
    if let Some(w) = writable.as_mut()
        && let Some((limit, why)) = crate::store::value_limit(&target)?
        && w.max_blob_size > limit
    {
        eprintln!("note: PUT bodies over {limit} bytes get 413 ({why})");
        w.max_blob_size = limit;
    }
    serve(ServeConfig {
        target,
        listen: args.listen,
        max_connections: args.max_connections as usize,
        header_timeout: *args.header_timeout,
        body_timeout: *args.body_timeout,
        send_timeout: *args.send_timeout,
        hold_timeout: *args.hold_timeout,
        staleness: *args.staleness,
        open_file_valid: *args.open_file_valid,
        log: args.log,
        writable,
    })
}
