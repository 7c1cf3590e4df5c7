//! The `init` result's own tables: how a dataset was loaded.

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;
use crate::store::StoreInfo;

/// The kind-specific part of an `init` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InitTables {
    /// The one dataset `init` made.
    pub init: InitRecord,
}

/// One dataset load: what was made, where, and how long it took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InitRecord {
    /// The target as text (servers without password).
    pub target: String,
    /// The keys, sizes and content seed of the dataset.
    pub spec: DatasetSpec,
    /// What the new store said about itself.
    pub store: StoreInfo,
    /// Blob bytes written.
    pub content_bytes: u64,
    /// Disk space of the target afterwards (like `du`), in bytes.
    pub space_bytes: u64,
    /// Time to load every blob, commit and checkpoint, in ns.
    pub load_ns: u64,
}
