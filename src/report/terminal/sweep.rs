//! The terminal table of a `sweep` result.
