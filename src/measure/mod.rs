//! Clocks, latency histograms, statistics, CPU time, cache control, disk
//! space and the environment record.

pub mod cache;
pub mod cpu;
pub mod environment;
pub mod estimate;
pub mod fragments;
pub mod io;
pub mod latency;
pub mod precision;
pub mod reference;
pub mod significance;
pub mod space;
pub mod stats;
