//! The terminal table of a `load` result.
