//! Results (the versioned JSON document) and their human renderings.

pub mod result;
pub mod table;
