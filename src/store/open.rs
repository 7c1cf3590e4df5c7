//! Opening on top of the backends: the factory that knows every backend.
//! A target's variant picks the store that opens, reaches, creates or
//! removes it, and the limits and room a dataset there needs are asked
//! before anything is written.

use super::cluster::ClusterShape;
use super::contract::{Access, Store};
use super::external::{self, ExternalStore};
use super::files::{self, FileLayout, FilesStore};
use super::journal;
use super::memory::MemoryStore;
use super::mysql::{self, MysqlStore};
use super::owned::{self, Made};
use super::postgres::{self, PostgresStore};
use super::s3::{self, S3Store};
use super::sqlite::{self, SqliteStore, max_blob_bytes, read_sqlite_info};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::{SqliteLayout, Target};

/// The environment record of this machine, with the storage engines'
/// versions (SQLite's version and compile options) filled in.
pub fn capture_environment(
    data_path: Option<&std::path::Path>,
) -> crate::measure::environment::Environment {
    let mut env = crate::measure::environment::Environment::capture_machine(data_path);
    (env.sqlite_version, env.sqlite_compile_options) = read_sqlite_info();
    env
}

/// Opens any target.
pub fn open(target: &Target, access: Access) -> Result<Box<dyn Store>> {
    Ok(match target {
        Target::Sqlite { path, settings } => Box::new(SqliteStore::open(path, settings, access)?),
        Target::SqliteExt { path, settings } => {
            Box::new(ExternalStore::open(path, settings, access)?)
        }
        Target::Dir { path } => Box::new(FilesStore::open(path, FileLayout::Flat, access)?),
        Target::Tree { path } => Box::new(FilesStore::open(path, FileLayout::Tree, access)?),
        Target::Postgres {
            server,
            mode,
            table,
        } => Box::new(PostgresStore::open(server, *mode, table, access)?),
        Target::Mysql {
            server,
            engine,
            table,
        } => Box::new(MysqlStore::open(server, *engine, table, access)?),
        Target::S3 { bucket } => Box::new(S3Store::open(bucket, access)?),
        Target::Memory { name } => Box::new(MemoryStore::open(name, access)?),
    })
}

/// Every other writer kept out of a target's files while this lives.
pub struct WritersKeptOut {
    /// The connection whose lock keeps them out; dropped, it lets them in.
    _lock: rusqlite::Connection,
}

/// Keeps every other writer out of `target`'s files for as long as the
/// returned hold lives, where the target asks for that itself (SQLite's
/// `locking_mode=exclusive` in a rollback journal): bytes of its files
/// then stay the file's after the read that found them has ended, so they
/// may be handed to the kernel by reference and copied out later (a
/// server's zero-copy send). None for a target that keeps no writer out.
/// Waits up to `wait` for a writer that holds the database.
pub fn keep_writers_out(
    target: &Target,
    wait: std::time::Duration,
) -> Result<Option<WritersKeptOut>> {
    match target {
        Target::Sqlite { path, settings } => Ok(sqlite::keep_writers_out(path, settings, wait)?
            .map(|conn| WritersKeptOut { _lock: conn })),
        _ => Ok(None),
    }
}

/// Makes sure the server `target` names can be reached, changing
/// nothing: PostgreSQL and MariaDB connect and log in, S3 lists the
/// target's prefix (the bucket, the credentials); a local target always
/// can. Suites ask it of every server before they measure anything, so an
/// unreachable one is refused at once (exit 2), not after the rest ran.
pub fn reach(target: &Target) -> Result<()> {
    match target {
        Target::Postgres { server, .. } => postgres::reach(server),
        Target::Mysql { server, .. } => mysql::reach(server),
        Target::S3 { bucket } => S3Store::open(bucket, Access::ReadOnly).map(drop),
        Target::Sqlite { .. }
        | Target::SqliteExt { .. }
        | Target::Dir { .. }
        | Target::Tree { .. }
        | Target::Memory { .. } => Ok(()),
    }
}

/// Opens a target read-only for the untimed looks around a run (sizes,
/// read-back, space, integrity), without a journal mode to set: such a
/// look must not try to switch a database whose mode the run changed
/// (journal_mode=off and memory do not persist past the connection).
pub fn inspect(target: &Target) -> Result<Box<dyn Store>> {
    open(&target.for_inspection(), Access::ReadOnly)
}

/// Creates an empty target of the given kind, refusing to replace anything
/// that blobbench did not make.
pub fn create(target: &Target, manifest: &Manifest) -> Result<Box<dyn Store>> {
    Ok(match target {
        Target::Sqlite { path, settings } => {
            Box::new(SqliteStore::create(path, settings, manifest)?)
        }
        Target::SqliteExt { path, settings } => {
            Box::new(ExternalStore::create(path, settings, manifest)?)
        }
        Target::Dir { path } => Box::new(FilesStore::create(path, FileLayout::Flat, manifest)?),
        Target::Tree { path } => Box::new(FilesStore::create(path, FileLayout::Tree, manifest)?),
        Target::Postgres {
            server,
            mode,
            table,
        } => Box::new(PostgresStore::create(server, *mode, table, manifest)?),
        Target::Mysql {
            server,
            engine,
            table,
        } => Box::new(MysqlStore::create(server, *engine, table, manifest)?),
        Target::S3 { bucket } => Box::new(S3Store::create(bucket, manifest)?),
        Target::Memory { name } => Box::new(MemoryStore::create(name, manifest)?),
    })
}

/// The largest blob `target` takes in one value, and why, asked before
/// anything is created there: SQLite's SQLITE_LIMIT_LENGTH, PostgreSQL's
/// 1 GB bytea, MariaDB's max_allowed_packet (asked of the server). None
/// where files hold the blobs, or the process's memory.
pub fn value_limit(target: &Target) -> Result<Option<(u64, String)>> {
    Ok(match target {
        Target::Sqlite { settings, .. } => Some((
            // The blog's record also holds the text id: up to 20 digits.
            match settings.layout {
                Some(SqliteLayout::Blog) => max_blob_bytes() - 21,
                _ => max_blob_bytes(),
            },
            "SQLite's SQLITE_LIMIT_LENGTH, the record's header (and id) included".into(),
        )),
        Target::Postgres { .. } => Some((
            postgres::MAX_BLOB_BYTES,
            "a PostgreSQL bytea holds at most 1 GB".into(),
        )),
        Target::Mysql { server, .. } => Some(mysql::value_limit(server)?),
        Target::S3 { bucket } => Some((
            bucket
                .part_size
                .saturating_mul(S3_MAX_PARTS)
                .min(S3_MAX_OBJECT),
            format!(
                "an S3 multipart upload has at most {S3_MAX_PARTS} parts, here of part_size={}, and an object at most 5 TiB; raise part_size",
                s3::part_size_words(bucket.part_size)
            ),
        )),
        Target::SqliteExt { .. }
        | Target::Dir { .. }
        | Target::Tree { .. }
        | Target::Memory { .. } => None,
    })
}

/// The most parts one S3 multipart upload may have.
const S3_MAX_PARTS: u64 = 10_000;
/// The largest S3 object: 5 TiB.
const S3_MAX_OBJECT: u64 = 5 << 40;

/// Refuses, before anything is written, a dataset `target` cannot hold:
/// a blob larger than the store takes in one value, a total past 2^64
/// bytes, or more content than the disk has free (less what the dataset it
/// replaces takes now). `spec.count` blobs are never allocated at once, so
/// only the disk bounds a dataset's size.
pub fn check_room(target: &Target, spec: &crate::dataset::DatasetSpec) -> Result<()> {
    let largest = spec.max_size();
    if let Some((limit, why)) = value_limit(target)?
        && largest > limit
    {
        return Err(Error::usage(format!(
            "blobs of up to {largest} bytes do not fit {}: it stores at most {limit} bytes per value ({why}); use --size {limit} or less (less --variance), or a dir: target",
            target.kind_name()
        )));
    }
    let Some(needed) = spec.least_bytes() else {
        return Err(Error::usage(format!(
            "{} blobs of {} bytes are more than 2^64 bytes in all: ask for fewer or smaller blobs (--count, --size)",
            spec.count, spec.size
        )));
    };
    if let Some(path) = target.data_path() {
        // What the dataset replaced takes now is freed before the new one grows.
        let (replaced, replaced_files) = match inspect(target) {
            Ok(mut s) => (
                s.space_used().unwrap_or(0),
                s.catalog().map(|c| c.count).unwrap_or(0),
            ),
            Err(_) => (0, 0),
        };
        check_files_room(target, path, spec, replaced, replaced_files)?;
        let what = format!("{} blobs of {} bytes", spec.count, spec.size);
        check_free_space(
            path,
            needed.saturating_sub(replaced),
            &what,
            "ask for fewer or smaller blobs (--count, --size), or use a larger disk",
        )?;
    }
    Ok(())
}

/// For a target of one file per blob: every file takes whole blocks and
/// one inode, so 10^8 blobs of 1 byte need 10^8 files and 400 GB on a 4 KiB
/// filesystem, not 100 MB. Checked before the folder is made.
fn check_files_room(
    target: &Target,
    path: &std::path::Path,
    spec: &crate::dataset::DatasetSpec,
    replaced: u64,
    replaced_files: u64,
) -> Result<()> {
    if !matches!(
        target,
        Target::Dir { .. } | Target::Tree { .. } | Target::SqliteExt { .. }
    ) {
        return Ok(());
    }
    let Some(room) = crate::measure::space::room(path) else {
        return Ok(());
    };
    if let Some(files) = room.free_files
        && files.saturating_add(replaced_files) < spec.count
    {
        return Err(Error::usage(format!(
            "{} blobs need {} files, and the filesystem holding {} can make only {files} more: ask for fewer blobs (--count), or use a database target (sqlite:)",
            spec.count,
            spec.count,
            path.display()
        )));
    }
    let blocks = spec.size.div_ceil(room.block_bytes).max(1);
    let needed = blocks
        .saturating_mul(room.block_bytes)
        .saturating_mul(spec.count);
    check_free_space(
        path,
        needed.saturating_sub(replaced),
        &format!(
            "{} files of {} bytes ({}-byte blocks)",
            spec.count, spec.size, room.block_bytes
        ),
        "ask for fewer blobs (--count), use a database target (sqlite:), or a larger disk",
    )
}

/// Refuses work that needs `needed` bytes on the disk holding `path` when
/// the disk has less free; `what` names the work and `fix` says what to
/// do instead. A disk that cannot tell its free space is not refused.
pub fn check_free_space(path: &std::path::Path, needed: u64, what: &str, fix: &str) -> Result<()> {
    if let Some(free) = crate::measure::space::free_bytes(path)
        && free < needed
    {
        return Err(Error::usage(format!(
            "{what} need at least {} on the disk holding {}, which has {} free: {fix}",
            crate::units::human_bytes(needed),
            path.display(),
            crate::units::human_bytes(free)
        )));
    }
    Ok(())
}

/// The folder whose files a process journals the keys it adds to (see
/// `journal`): a `dir:` or `tree:` dataset's, an `sqlite-ext:` database's
/// files. None where `init` replaces everything a writer may have added
/// anyway (a database, a server's table, an object-store prefix, memory).
fn journaled_folder(target: &Target) -> Option<std::path::PathBuf> {
    match target {
        Target::Dir { path } | Target::Tree { path } => Some(path.clone()),
        Target::SqliteExt { path, .. } => Some(external::files_folder(path)),
        _ => None,
    }
}

/// Names `key`, about to be added past `dataset_last` (the dataset's last
/// key), in this process's journal of `target`'s folder, so that an `init`
/// after this process is killed removes it; the stores' inserts do so
/// themselves, and a timed run calls this first, untimed. Returns the last
/// key already named (`u64::MAX` where nothing needs naming).
pub fn name_added_key(target: &Target, dataset_last: u64, key: u64) -> Result<u64> {
    match journaled_folder(target) {
        Some(folder) => journal::name_added_key(&folder, dataset_last, key),
        None => Ok(u64::MAX),
    }
}

/// Ends this process's journal of `target`'s folder once the manifest
/// records every key the process added (see [`name_added_key`]).
pub fn end_added_keys(target: &Target) -> Result<()> {
    match journaled_folder(target) {
        Some(folder) => journal::end_added_keys(&folder),
        None => Ok(()),
    }
}

/// Says that this process has stopped writing `target` through stores it
/// never closes (a server's per-thread stores live until it exits): the
/// records a writer without a rollback journal keeps while it writes are
/// removed, so a clean stop is not later taken for an interrupted one.
pub fn release(target: &Target) {
    match target {
        Target::Sqlite { path, .. } | Target::SqliteExt { path, .. } => {
            sqlite::clear_this_process(path);
        }
        _ => {}
    }
}

/// Removes a local dataset this invocation made (see [`owned`]) and
/// everything its store keeps beside it: what blobbench wrote in a folder
/// (a user's file in it stays, and with it the folder), or a database with
/// its `-wal`, `-shm` and `-journal` files and its external-blob
/// `NAME.files` folder. Anything this invocation did not make is left as
/// it is, whatever its name: a cleanup may be handed the name of a user's
/// entry a command refused to replace. Best effort, for cleaning up work
/// folders: what cannot be removed stays.
pub fn remove_dataset(path: &std::path::Path) {
    let Some(how) = owned::made_here(path) else {
        return;
    };
    match (how, path.is_dir()) {
        (Made::Whole, true) => {
            let _ = std::fs::remove_dir_all(path);
        }
        (Made::Dataset, true) => files::remove_own_folder(path),
        (_, false) => {
            // Companions first, the database last (see sqlite::remove_database).
            for file in sqlite::database_files(path).iter().rev() {
                let _ = std::fs::remove_file(file);
            }
            let folder = external::files_folder(path);
            if owned::made_here(&folder).is_some() {
                files::remove_own_folder(&folder);
                owned::forget(&folder);
            }
        }
    }
    owned::forget(path);
}

/// Claims `path` for an entry this invocation makes outside the stores (a
/// sweep's raw database, a restored copy, a configuration or log file):
/// what this invocation made there before is removed, and anything else
/// there is refused, never replaced. From here on the path is this
/// invocation's, for its cleanup to remove.
pub fn claim_new(path: &std::path::Path) -> Result<()> {
    remove_dataset(path);
    if path.symlink_metadata().is_ok() {
        return Err(Error::usage(format!(
            "refusing to replace \"{}\": it exists and was not made by this command; remove it yourself or choose another folder (--dir)",
            path.display()
        )));
    }
    owned::record(path, Made::Whole);
    Ok(())
}

/// Removes the dataset a target names: local files as [`remove_dataset`],
/// a memory dataset from the process. A server's table is left alone.
pub fn remove_target(target: &Target) {
    match target {
        Target::Memory { name } => {
            MemoryStore::remove(name);
        }
        Target::Postgres { .. } | Target::Mysql { .. } => {}
        // Only a dataset blobbench made (its manifest is there) is removed.
        Target::S3 { bucket } => {
            let _ = s3::remove_dataset(bucket);
        }
        _ => remove_dataset(target.path()),
    }
}

/// The shape of the cluster behind `target`, or None when the target is
/// not a cluster (or names no way to read its shape). Never fails and
/// returns within [`READ_BOUND`](super::cluster::READ_BOUND) (3 s): a node that does not answer within
/// its bounds is listed as "unreachable". Cheap enough to call every
/// second while a run goes on (a few milliseconds on loopback: a
/// connection and two queries per Galera node, one request per SeaweedFS
/// server).
///
/// - Galera (`mysql://`): every node the target names and every member a
///   node lists in `wsrep_incoming_addresses`, each with its own
///   `wsrep_local_state_comment`; the size is `wsrep_cluster_size` as a
///   node of the primary component reports it. None for a server without
///   wsrep.
/// - SeaweedFS (`s3://...?topology=URL`): the master, the S3 gateway and
///   every volume server the master lists, each "up" when it answers
///   HTTP itself; the size is the number of volume servers the master lists.
pub fn read_shape(target: &Target) -> Option<ClusterShape> {
    read_shape_after(target, None)
}

/// [`read_shape`], also asking every node `earlier` (a shape read before)
/// knew: a Galera target that names one node learns the others from its
/// member list, and must still find them when that node dies.
pub fn read_shape_after(target: &Target, earlier: Option<&ClusterShape>) -> Option<ClusterShape> {
    match target {
        Target::Mysql { server, .. } => mysql::galera_shape(server, earlier),
        Target::S3 { bucket } => s3::seaweedfs::shape(bucket),
        _ => None,
    }
}
