//! The end-to-end tests of the binary, linked into one test binary (as
//! ripgrep does), in four tiers by cost, so that a module path selects a
//! tier (`scripts/test.sh --fast`, `--measured`, `--servers`,
//! `--calibration`; plain `cargo test` runs `fast` and the unit tests):
//!
//! - `fast`: tiny datasets, usage errors, in-process checks;
//! - `measured`: real suite runs, serve/load with durations, aging mounts,
//!   Chromium, reproduce (ignored unless asked for);
//! - `servers`: what needs the servers `scripts/test.sh` starts (ignored
//!   unless asked for);
//! - `calibration`: the instrument measuring itself, alone and last.
//!
//! Each area's tests stay in a file of their own inside their tier; an
//! area with tests in two tiers has a file in each. Run one area with
//! `cargo test --test tests -- fast::http::`.

mod common;

mod calibration;
mod fast;
mod measured;
mod servers;
