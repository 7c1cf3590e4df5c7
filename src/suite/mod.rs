//! Suites: named experiments, each a grid of runs and the table that answers
//! its question.

pub mod quick;
