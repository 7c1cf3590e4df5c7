//! The `http` result's own tables.
//!
//! Placeholder during the move to typed results: the JSON as written.

use serde::{Deserialize, Serialize};

/// The kind-specific part of a `http` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HttpTables(pub serde_json::Value);
