//! The `fasterthanfs` result's own tables.
//!
//! Placeholder during the move to typed results: the JSON as written.

use serde::{Deserialize, Serialize};

/// The kind-specific part of a `fasterthanfs` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FasterThanFsTables(pub serde_json::Value);
