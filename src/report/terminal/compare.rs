//! The terminal table of a `compare` result.
