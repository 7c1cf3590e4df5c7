//! The terminal table of a `suite http` result.
