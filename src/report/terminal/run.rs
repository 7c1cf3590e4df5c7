//! The terminal table of a `run` result.
