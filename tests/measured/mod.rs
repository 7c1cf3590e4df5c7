//! The measured tier: real suite runs, serve and load with durations, aging
//! on loop-mounted volumes, Chromium, reproduce. Each test is ignored by a
//! plain `cargo test`; `scripts/test.sh --measured` runs them.

pub(crate) mod advise_aging;
pub(crate) mod aging;
pub(crate) mod aging_volume;
pub(crate) mod concurrency;
pub(crate) mod fault_injection;
pub(crate) mod hostile_load;
pub(crate) mod http;
pub(crate) mod install;
pub(crate) mod interrupted;
pub(crate) mod load_merge;
pub(crate) mod ownership;
pub(crate) mod read_floor;
pub(crate) mod report;
pub(crate) mod reproduce;
pub(crate) mod s3;
pub(crate) mod seed_blog;
pub(crate) mod serve_snapshots;
