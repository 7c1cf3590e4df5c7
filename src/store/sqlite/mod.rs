//! SQLite: blobs inside a database file (`sqlite:`), and the parts of it the
//! external-blob store (`sqlite-ext:`) shares: the database file and its
//! settings, the manifest row, writers without a rollback journal, the
//! space inside the file.
//!
//! `store` and `session` implement the contract; `database` opens, creates
//! and removes the file; `settings` applies the target's PRAGMAs; `layout`
//! holds the two tables a dataset can use and their statements; `meta` the
//! manifest row; `unsafe_writes` records writers with journal_mode=off or
//! memory; `lock` sees another process's PENDING lock; `map` and `pages`
//! find a blob's bytes in a mapped file (`run_cache` keeps where, for the
//! rest of a read snapshot); `space` gives free pages back and
//! says where each blob's pages lie; `library` is the linked SQLite itself.

mod database;
mod layout;
mod library;
mod lock;
mod map;
mod meta;
mod pages;
mod run_cache;
mod session;
mod settings;
mod space;
mod store;
mod unsafe_writes;

pub(crate) use database::{
    check_is_database, create_database, database_files, open_connection, replace_own_database,
};
pub use library::{max_blob_bytes, read_sqlite_info, sqlite_version};
pub(crate) use lock::keep_writers_out;
pub(crate) use meta::{has_table, read_ledger, read_manifest, write_ledger, write_manifest_row};
pub(crate) use settings::apply_settings;
pub(crate) use space::{external_layout, reclaim_database};
pub use store::SqliteStore;
pub(crate) use store::{catalog_of, integrity_check};
pub(crate) use unsafe_writes::{UnsafeWriter, clear_this_process, refuse_if_damaged};
