//! The terminal table of a `suite fasterthanfs` result.
