//! The contract between the stores and everything above them: the data
//! types a store takes and gives, and the traits a backend implements.
//!
//! A [`Store`] is an open target; work happens in a [`Session`], which
//! holds the prepared statements, blob handles and buffers that a benchmark
//! loop reuses from one operation to the next, so that only the operation
//! itself falls inside the timed region. Each is a core every backend
//! implements ([`StoreCore`], [`SessionCore`]) plus capabilities whose
//! defaults fit a backend without them: [`Engine`] (what a run adapts to)
//! and [`Space`] (space on disk, for the aging suite) on the store,
//! [`Serving`] and [`Snapshots`] (what only the HTTP server asks) on the
//! session. A backend taking every default writes `impl Serving for X {}`;
//! callers hold `Box<dyn Store>` and `Box<dyn Session>`, through which
//! every method of every part can be called.

mod catalog;
mod engine;
mod mapped;
mod options;
mod serving;
mod session;
mod session_core;
mod snapshots;
mod space;
mod store;
mod store_core;

pub use catalog::{Catalog, GAPS_ALLOWED, sparse_keys};
pub(crate) use catalog::{first_key_from_one, missing_key};
pub use engine::{CacheControl, Engine};
pub use mapped::{MAPPED_RESIDENT_BUDGET, MAPPED_RESIDENT_UP_TO, MappedBlob, MappedRuns};
pub(crate) use mapped::{kept_mapped, map_ahead, release_mapped};
pub use options::{Access, ReadPath, SessionOptions, WriteStyle};
pub use serving::{BlobFile, FileIdentity, Serving};
pub use session::Session;
pub use session_core::SessionCore;
pub use snapshots::Snapshots;
pub(crate) use space::whole_file;
pub use space::{BlobPlacement, DiskLayout, Reclaim, Space};
pub use store::Store;
pub use store_core::{StoreCore, StoreInfo};
