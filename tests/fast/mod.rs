//! The fast tier: unit-sized end-to-end tests (tiny datasets, usage errors,
//! in-process checks); what a plain `cargo test` runs, and
//! `scripts/test.sh --fast`.

pub(crate) mod acknowledged;
pub(crate) mod advise_aging;
pub(crate) mod aging;
pub(crate) mod aging_report;
pub(crate) mod architecture;
pub(crate) mod cli;
pub(crate) mod concurrency;
pub(crate) mod conformance;
pub(crate) mod docs;
pub(crate) mod hints;
pub(crate) mod hostile_datasets;
pub(crate) mod hostile_files;
pub(crate) mod hostile_inputs;
pub(crate) mod hostile_load;
pub(crate) mod http;
pub(crate) mod inject;
pub(crate) mod install;
pub(crate) mod interrupted;
pub(crate) mod limits;
pub(crate) mod options;
pub(crate) mod output_conventions;
pub(crate) mod parser_properties;
pub(crate) mod replicate;
pub(crate) mod report;
pub(crate) mod reproduce;
pub(crate) mod results;
pub(crate) mod s3;
pub(crate) mod s3_suites;
pub(crate) mod seed_blog;
pub(crate) mod seed_kvtest;
pub(crate) mod seed_studies;
pub(crate) mod seed_sweep;
pub(crate) mod serve_snapshots;
pub(crate) mod suites;
