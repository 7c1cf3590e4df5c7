//! The terminal table of a `advise` result.
