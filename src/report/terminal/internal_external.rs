//! The terminal table of a `suite internal-external` result.
