//! The servers tier: what needs PostgreSQL, MariaDB, Galera, SeaweedFS or
//! Litestream, started by `scripts/test.sh` (`--servers` for this tier
//! alone). Tests that disturb a server (kill, freeze, restart it or change
//! a server-wide setting) are named in .config/nextest.toml's groups.

pub(crate) mod acknowledged;
pub(crate) mod conformance;
pub(crate) mod databases;
pub(crate) mod faults;
pub(crate) mod galera;
pub(crate) mod hostile_inputs;
pub(crate) mod replicate;
pub(crate) mod s3;
pub(crate) mod s3_suites;
pub(crate) mod seed_studies;
pub(crate) mod suites;
