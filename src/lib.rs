#![warn(missing_docs)]
//! blobbench: measure where blobs should live (SQLite, files, and later
//! database servers), on the user's own hardware.
//!
//! Data flows one way: CLI -> suite (plan) -> runs (store x dataset x
//! workload -> measurements) -> result (JSON) -> report.

pub mod cli;
pub mod command;
pub mod dataset;
pub mod error;
pub mod http;
pub mod interrupt;
pub mod limits;
pub mod measure;
pub mod pause;
pub mod process;
pub mod progress;
pub mod report;
pub mod result;
pub mod store;
pub mod suite;
pub mod target;
pub mod units;
pub mod workload;
