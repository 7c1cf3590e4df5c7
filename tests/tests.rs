//! The end-to-end tests of the binary, linked into one test binary (as
//! ripgrep does): each area's tests stay in a file of their own, a module
//! here, and the crate and its dependencies are linked once instead of
//! once per file. Run one area with `cargo test --test tests -- AREA::`.

mod common;

mod advise_aging;
mod aging;
mod aging_report;
mod aging_volume;
mod architecture;
mod calibrate;
mod cli;
mod concurrency;
mod conformance;
mod fault_injection;
mod faults;
mod galera;
mod hints;
mod hostile_datasets;
mod hostile_files;
mod hostile_inputs;
mod hostile_load;
mod http;
mod inject;
mod install;
mod interrupted;
mod load_merge;
mod options;
mod output_conventions;
mod parser_properties;
mod replicate;
mod report;
mod reproduce;
mod results;
mod s3;
mod s3_suites;
mod seed_blog;
mod seed_kvtest;
mod seed_studies;
mod seed_sweep;
mod serve_snapshots;
mod servers;
mod suites;
