//! The terminal table of a `quick` result.
