//! The `internal_external` result's own tables.
//!
//! Placeholder during the move to typed results: the JSON as written.

use serde::{Deserialize, Serialize};

/// The kind-specific part of a `internal_external` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InternalExternalTables(pub serde_json::Value);
