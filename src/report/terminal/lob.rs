//! The terminal table of a `suite lob` result.
