//! The Store trait every target implements, and the backends behind it.
//!
//! A [`Store`] is an open target. Work happens in a [`Session`], which holds
//! the prepared statements, blob handles and buffers that a benchmark loop
//! reuses from one operation to the next, so that only the operation itself
//! falls inside the timed region.
//!
//! The floor plan, from the bottom: `contract` (the data types and the
//! traits: each a core every backend implements plus capabilities with
//! defaults) and the helpers backends share (`pieces`, `etag`,
//! `atomic_file`, `map_guard`, `journal`, `cluster`'s shape); the backends
//! above it (`sqlite/`, `external`, `files/`, `postgres/`, `mysql/`, `s3/`,
//! `memory`, and `inject`, which wraps any session); on top `open`, the
//! factory that knows every backend, and `copy`, which fills and copies
//! datasets through it. This file only names the modules and hands their
//! public items on.

mod atomic_file;
pub mod cluster;
mod contract;
mod copy;
mod etag;
mod external;
mod files;
pub mod inject;
mod journal;
pub mod ledger;
mod map_guard;
mod memory;
/// Commits on a memory dataset, for the executor's tests of transaction grouping.
#[cfg(test)]
pub(crate) use memory::commits as memory_commits;
mod mysql;
mod open;
pub mod owned;
mod pieces;
mod postgres;
mod s3;
mod sqlite;

pub use contract::{
    Access, BlobFile, BlobPlacement, CacheControl, Catalog, DiskLayout, Engine, FileIdentity,
    GAPS_ALLOWED, MAPPED_RESIDENT_BUDGET, MAPPED_RESIDENT_UP_TO, MappedBlob, MappedRuns, ReadPath,
    Reclaim, Serving, Session, SessionCore, SessionOptions, Snapshots, Space, Store, StoreCore,
    StoreInfo, WriteStyle, sparse_keys,
};
pub use copy::{CopySummary, copy, copy_measured, create_dataset, export};
pub use external::ExternalStore;
pub use files::{FileLayout, FilesStore};
pub use memory::MemoryStore;
pub use mysql::MysqlStore;
pub use open::{
    WritersKeptOut, capture_environment, check_free_space, check_room, claim_new, create,
    end_added_keys, inspect, keep_writers_out, name_added_key, open, reach, read_shape,
    read_shape_after, release, remove_dataset, remove_target, value_limit,
};
pub use pieces::{piece_buffer, recycle_piece, stream_pieces};
pub use postgres::PostgresStore;
pub use s3::S3Store;
pub use sqlite::{SqliteStore, max_blob_bytes, read_sqlite_info, sqlite_version};
/// For `blobbench stat`, which reads SQLite's own statistics of a dataset.
pub(crate) use sqlite::{check_is_database, open_connection};
