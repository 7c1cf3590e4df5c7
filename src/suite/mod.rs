//! Suites: named experiments, each a grid of runs and the table that answers
//! its question.

pub mod advise;
pub mod aging;
pub mod between_runs;
pub mod common;
pub mod fasterthanfs;
pub mod http;
pub mod internal_external;
pub mod lob;
pub mod quick;
pub mod replicate;
pub mod reproduce;
pub mod rounds;
pub mod scaling;
pub mod sweep;
