//! Target strings (`sqlite:PATH?journal_mode=wal`, `dir:PATH`, a bare `x.db`)
//! parsed once into typed configurations.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::units::parse_number;

mod server;

pub use server::{ServerTimeouts, seconds, split_node};

/// SQLite connection settings a target string may carry. `None` leaves the
/// database's (or the run's) own setting alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SqliteSettings {
    /// Page size in bytes; only a new database can take it.
    pub page_size: Option<u32>,
    /// delete, truncate, persist, memory, wal or off.
    pub journal_mode: Option<String>,
    /// off, normal, full or extra.
    pub synchronous: Option<String>,
    /// Pages when positive, KiB when negative (SQLite's convention).
    pub cache_size: Option<i64>,
    /// Bytes of the database read through mmap.
    pub mmap_size: Option<u64>,
    /// normal or exclusive.
    pub locking_mode: Option<String>,
    /// WAL pages after which a commit checkpoints; 0: never (kvtest's
    /// --nocheckpoint), so a timed COMMIT holds no checkpoint. Left out of
    /// JSON when unset, so results written before it existed read back alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_autocheckpoint: Option<u32>,
    /// Which table holds the blobs; None: whichever the database has
    /// (kv first), and kv for a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<SqliteLayout>,
    /// none, full or incremental: whether SQLite gives freed pages back to
    /// the filesystem (at each commit, or on `PRAGMA incremental_vacuum`).
    /// Like the page size, only a new database takes it (it is fixed when
    /// the first table is made). Left out of JSON when unset, so results
    /// written before it existed read back alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_vacuum: Option<String>,
}

/// The table an SQLite dataset keeps its blobs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SqliteLayout {
    /// kvtest's `kv(k INTEGER PRIMARY KEY, v BLOB)`: a blob is found by
    /// its key, which is the table's rowid (one b-tree search).
    #[default]
    Kv,
    /// The blog's `files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL)`
    /// ("Serving Binary Files from SQLite"): a blob is found by its text id,
    /// the name `export` gives its file (`000042`), through the primary
    /// key's index and then the table (two b-tree searches).
    Blog,
}

impl SqliteLayout {
    /// The name `?layout=` takes and results record.
    pub fn name(self) -> &'static str {
        match self {
            SqliteLayout::Kv => "kv",
            SqliteLayout::Blog => "blog",
        }
    }

    /// The layout `?layout=NAME` names.
    pub fn parse(value: &str) -> Result<SqliteLayout> {
        match value.to_ascii_lowercase().as_str() {
            "kv" => Ok(SqliteLayout::Kv),
            "blog" => Ok(SqliteLayout::Blog),
            _ => Err(Error::usage(format!(
                "unknown layout \"{value}\"; use layout=kv (kvtest's kv(k INTEGER PRIMARY KEY, v BLOB)) or layout=blog (files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL), looked up by text id)"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
/// Where blobs live and how to reach them: parsed once from a target string.
pub enum Target {
    /// Blobs inside the database, table `kv(k INTEGER PRIMARY KEY, v BLOB)` as kvtest.
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// Connection settings to apply.
        settings: SqliteSettings,
    },
    /// The database holds each blob's file name; the content is a file beside it.
    SqliteExt {
        /// The database file; the blobs are in `PATH.files/`.
        path: PathBuf,
        /// Connection settings to apply.
        settings: SqliteSettings,
    },
    /// One file per blob in one folder, named `000001` as kvtest.
    Dir {
        /// The folder.
        path: PathBuf,
    },
    /// One file per blob in `00/00/01` folders as kvtest's `--tree`.
    Tree {
        /// The top folder.
        path: PathBuf,
    },
    /// PostgreSQL: table `LargeObjects(id bigint primary key, largeData bytea)`
    /// (TOAST, storage EXTERNAL) or `largeData oid` (large objects).
    Postgres {
        /// The server.
        server: ServerUrl,
        /// bytea or large objects.
        mode: PgMode,
        /// The table, lower case.
        table: String,
    },
    /// MariaDB / MySQL: table `LargeObjects(id BIGINT, largeData LONGBLOB)` in one engine.
    Mysql {
        /// The server.
        server: ServerUrl,
        /// The storage engine of the table.
        engine: MysqlEngine,
        /// The table, lower case.
        table: String,
    },
    /// An S3 bucket (AWS S3 or any server that speaks its API): one
    /// object per blob, named `PREFIX/000001`, beside the dataset's
    /// manifest `PREFIX/blobbench-manifest.json`.
    S3 {
        /// Where the objects are and how the client reaches them.
        bucket: S3Location,
    },
    /// Blobs held in this process's memory under `name`: for tests of the
    /// executor and of code above the stores, without files or servers.
    Memory {
        /// The dataset's name; every open of it in one process sees the same data.
        name: String,
    },
}

/// A server's address. The connection string (which may hold a password)
/// is never serialized or printed; `display` is the same URL without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerUrl {
    /// The URL as given, for the client library (never written out).
    #[serde(skip)]
    pub connect: String,
    /// The URL with any password replaced by `***`.
    pub display: PathBuf,
    /// Every node a client may connect to, as `host:port`, in the order
    /// they are tried (the URL's first, which `connect` names, then the
    /// others), when the target names more than one (a Galera cluster:
    /// `mysql://USER@H1:P,H2:P/DB` or `?nodes=H2:P`); empty when it names
    /// one. Left out of JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// The bounds of every wait on the server (`timeout=`,
    /// `connect_timeout=`). Left out of JSON when they are the defaults.
    #[serde(default, skip_serializing_if = "ServerTimeouts::is_default")]
    pub timeouts: ServerTimeouts,
}

/// An S3 target's bucket, prefix and client settings. Credentials are not
/// here: the client reads them from the AWS environment variables or the
/// profile, and they are never printed or stored in results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct S3Location {
    /// The bucket, which must exist (blobbench never creates or deletes one).
    pub bucket: String,
    /// The folder-like prefix inside the bucket, without slashes at its
    /// ends; empty for the bucket's top.
    pub prefix: String,
    /// The server's URL (`http://127.0.0.1:8333`); None: AWS itself, or
    /// AWS_ENDPOINT_URL.
    pub endpoint: Option<String>,
    /// The region to sign for; None: AWS_REGION, else us-east-1.
    pub region: Option<String>,
    /// Objects larger than this are uploaded in parts of this size
    /// (multipart upload); S3 takes parts of 5 MiB to 5 GiB.
    pub part_size: u64,
    /// A URL on the server that reports its cluster's topology as JSON (a
    /// SeaweedFS master's /dir/status), recorded in results as the shape.
    pub topology: Option<String>,
    /// How long the client waits for the server, and whether it tries a
    /// failed request again. Results written before these settings existed
    /// ran with the client's waits of then (see [`S3Waits::BEFORE_SETTINGS`]).
    #[serde(default = "S3Waits::before_settings")]
    pub waits: S3Waits,
    /// `s3://BUCKET/PREFIX` with the endpoint, for messages and results.
    pub display: PathBuf,
}

/// An S3 target's waits: `timeout=`, `connect_timeout=` and `retries=`.
///
/// Every request has a stated bound: a request (connecting, sending,
/// the answer and its whole body) that has not ended after `timeout` fails
/// as a timeout, as does a connection not made within `connect_timeout`.
/// A benchmark must see failures, so by default a failed request is not
/// tried again; with `retries=N` it is (after a 5xx, 429, or a lost
/// connection), but never past `timeout`: the request with its retries
/// ends within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct S3Waits {
    /// A request not done after this many milliseconds fails as a timeout.
    pub timeout_ms: u64,
    /// A connection not made after this many milliseconds fails as a timeout.
    pub connect_timeout_ms: u64,
    /// Times a failed request is tried again (object_store's max_retries).
    pub retries: u32,
}

impl Default for S3Waits {
    /// 10 s a request, 2 s to connect, no retries: seconds, so a server
    /// that stops answering shows in a benchmark's figures instead of
    /// stretching its run by minutes, yet long enough for an 8 MiB part
    /// over a slow link.
    fn default() -> Self {
        S3Waits {
            timeout_ms: 10_000,
            connect_timeout_ms: 2_000,
            retries: 0,
        }
    }
}

impl S3Waits {
    /// The client's waits before they were settings: 120 s a request,
    /// 5 s to connect, no retries.
    pub const BEFORE_SETTINGS: S3Waits = S3Waits {
        timeout_ms: 120_000,
        connect_timeout_ms: 5_000,
        retries: 0,
    };

    /// Retries allowed at most: more would hide a failing server.
    pub const MAX_RETRIES: u32 = 10;

    /// [`S3Waits::BEFORE_SETTINGS`], for results that lack the field.
    fn before_settings() -> S3Waits {
        S3Waits::BEFORE_SETTINGS
    }

    /// The whole request's bound.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The bound on making a connection.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }
}

/// The part size of an S3 multipart upload unless `part_size=` says (the
/// AWS CLI's multipart_chunksize and threshold).
pub const S3_DEFAULT_PART_SIZE: u64 = 8 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// How PostgreSQL stores the blobs.
pub enum PgMode {
    /// bytea column, TOASTed out of line, uncompressed (storage EXTERNAL).
    Bytea,
    /// Large objects: the row holds an oid; content via lo_from_bytea / lo_get / lo_put.
    Lo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// The MariaDB / MySQL storage engine of the blob table.
pub enum MysqlEngine {
    /// Transactional, the default.
    Innodb,
    /// Not transactional, table locks.
    Myisam,
    /// MariaDB's crash-safe MyISAM.
    Aria,
    /// Compressed, insert and read only.
    Archive,
}

impl MysqlEngine {
    /// The engine's name in SQL (`ENGINE=...`).
    pub fn sql_name(self) -> &'static str {
        match self {
            MysqlEngine::Innodb => "InnoDB",
            MysqlEngine::Myisam => "MyISAM",
            MysqlEngine::Aria => "Aria",
            MysqlEngine::Archive => "ARCHIVE",
        }
    }

    /// ARCHIVE only inserts and reads: no UPDATE, no DELETE.
    pub fn can_modify(self) -> bool {
        self != MysqlEngine::Archive
    }
}

/// SQLite's journal modes.
pub const JOURNAL_MODES: &[&str] = &["delete", "truncate", "persist", "memory", "wal", "off"];
/// SQLite's synchronous levels, by name.
pub const SYNCHRONOUS: &[&str] = &["off", "normal", "full", "extra"];
/// SQLite's locking modes.
pub const LOCKING_MODES: &[&str] = &["normal", "exclusive"];
/// SQLite's auto_vacuum modes, in the order of their numbers (0, 1, 2).
pub const AUTO_VACUUM: &[&str] = &["none", "full", "incremental"];

impl Target {
    /// Blobs inside the SQLite database at `path`, opened with `settings`.
    pub fn sqlite(path: impl Into<PathBuf>, settings: SqliteSettings) -> Target {
        Target::Sqlite {
            path: path.into(),
            settings,
        }
    }

    /// File names in the SQLite database at `path`, contents in `PATH.files/`.
    pub fn sqlite_ext(path: impl Into<PathBuf>, settings: SqliteSettings) -> Target {
        Target::SqliteExt {
            path: path.into(),
            settings,
        }
    }

    /// One file per blob in the folder `path`.
    pub fn dir(path: impl Into<PathBuf>) -> Target {
        Target::Dir { path: path.into() }
    }

    /// One file per blob in `00/00/01` folders under `path`.
    pub fn tree(path: impl Into<PathBuf>) -> Target {
        Target::Tree { path: path.into() }
    }

    /// Parses a target string. A bare path is classified the way kvtest does:
    /// a directory holding a `00` folder is a tree, any other directory a dir,
    /// anything else (or a name ending in .db/.sqlite/.sqlite3) a database.
    pub fn parse(text: &str) -> Result<Target> {
        Target::parse_with_bare(text, classify_bare_path)
    }

    /// Parses a target string whose bare paths (no `scheme:`) mean what
    /// `bare` says: `export DB OUT` reads a bare OUT as a folder to create.
    pub fn parse_with_bare(text: &str, bare: impl FnOnce(&Path) -> Target) -> Result<Target> {
        if text.is_empty() {
            return Err(Error::usage(
                "empty target: name a database (x.db, sqlite:PATH) or a folder (dir:PATH, tree:PATH)",
            ));
        }
        if let (_, Some(spec)) = split_injection(text)? {
            return Err(Error::usage(format!(
                "target \"{}\": inject={spec} is a testing aid for timed runs, taken by blobbench run only; remove ?inject= here",
                redact(text)
            )));
        }
        if let Some((scheme, rest)) = text.split_once(':') {
            let known = ["sqlite", "sqlite-ext", "dir", "tree"];
            if known.contains(&scheme) {
                let (path, query) = match rest.split_once('?') {
                    Some((p, q)) => (p, Some(q)),
                    None => (rest, None),
                };
                if path.is_empty() {
                    return Err(Error::usage(format!(
                        "target \"{text}\" has no path after \"{scheme}:\""
                    )));
                }
                let path = PathBuf::from(path);
                return match scheme {
                    "sqlite" | "sqlite-ext" => {
                        let settings = parse_settings(text, query)?;
                        if scheme == "sqlite-ext" && settings.layout.is_some() {
                            return Err(Error::usage(format!(
                                "target \"{text}\": sqlite-ext keeps file names in its own table and takes no layout; use sqlite:PATH?layout=..."
                            )));
                        }
                        Ok(if scheme == "sqlite" {
                            Target::Sqlite { path, settings }
                        } else {
                            Target::SqliteExt { path, settings }
                        })
                    }
                    _ => {
                        if query.is_some() {
                            return Err(Error::usage(format!(
                                "target \"{text}\": {scheme}: targets take no ?settings"
                            )));
                        }
                        Ok(if scheme == "dir" {
                            Target::Dir { path }
                        } else {
                            Target::Tree { path }
                        })
                    }
                };
            }
            if scheme == "memory" {
                if rest.is_empty() {
                    return Err(Error::usage(format!(
                        "target \"{text}\" has no name after \"memory:\""
                    )));
                }
                return Ok(Target::Memory {
                    name: rest.to_string(),
                });
            }
            if ["postgres", "postgresql"].contains(&scheme) {
                return parse_postgres(text);
            }
            if ["mysql", "mariadb"].contains(&scheme) {
                return parse_mysql(text);
            }
            if scheme == "s3" {
                return parse_s3(text);
            }
        }
        Ok(bare(Path::new(text)))
    }

    /// The file or folder; for a server, its URL without the password.
    pub fn path(&self) -> &Path {
        match self {
            Target::Sqlite { path, .. }
            | Target::SqliteExt { path, .. }
            | Target::Dir { path }
            | Target::Tree { path } => path,
            Target::Postgres { server, .. } | Target::Mysql { server, .. } => &server.display,
            Target::S3 { bucket } => &bucket.display,
            Target::Memory { name } => Path::new(name.as_str()),
        }
    }

    /// The file or folder on this machine that holds the data (for the
    /// environment's filesystem record); None for servers and memory.
    pub fn data_path(&self) -> Option<&Path> {
        match self {
            Target::Postgres { .. }
            | Target::Mysql { .. }
            | Target::S3 { .. }
            | Target::Memory { .. } => None,
            _ => Some(self.path()),
        }
    }

    /// The kind as written in results and reports: sqlite, dir, postgres-lo, ...
    pub fn kind_name(&self) -> &'static str {
        match self {
            Target::Sqlite { .. } => "sqlite",
            Target::SqliteExt { .. } => "sqlite-ext",
            Target::Dir { .. } => "dir",
            Target::Tree { .. } => "tree",
            Target::Postgres {
                mode: PgMode::Bytea,
                ..
            } => "postgres-bytea",
            Target::Postgres {
                mode: PgMode::Lo, ..
            } => "postgres-lo",
            Target::Mysql { engine, .. } => match engine {
                MysqlEngine::Innodb => "mysql-innodb",
                MysqlEngine::Myisam => "mysql-myisam",
                MysqlEngine::Aria => "mysql-aria",
                MysqlEngine::Archive => "mysql-archive",
            },
            Target::S3 { .. } => "s3",
            Target::Memory { .. } => "memory",
        }
    }

    /// The same target one folder further in, for an object store (an S3
    /// prefix gains `/name`), so a suite's datasets stay apart from the
    /// user's; every other kind is returned as it is.
    pub fn in_folder(&self, name: &str) -> Target {
        self.child(name).unwrap_or_else(|| self.clone())
    }

    /// A server, database or object store (no local files to warm or evict).
    pub fn is_server(&self) -> bool {
        matches!(
            self,
            Target::Postgres { .. } | Target::Mysql { .. } | Target::S3 { .. }
        )
    }

    /// One file per blob (dir or tree).
    pub fn is_files(&self) -> bool {
        matches!(self, Target::Dir { .. } | Target::Tree { .. })
    }

    /// The SQLite settings of a database target, to change; None otherwise.
    pub fn sqlite_settings_mut(&mut self) -> Option<&mut SqliteSettings> {
        match self {
            Target::Sqlite { settings, .. } | Target::SqliteExt { settings, .. } => Some(settings),
            _ => None,
        }
    }

    /// The same target without a journal mode to set: for the untimed,
    /// read-only opens around a run (sizes, read-back, space), which must not
    /// try to switch a database whose mode the run changed (journal_mode=off
    /// and memory do not persist past the connection).
    pub fn for_inspection(&self) -> Target {
        let mut t = self.clone();
        if let Some(s) = t.sqlite_settings_mut() {
            s.journal_mode = None;
        }
        t
    }

    /// Whether a commit on this target waits for the disk to flush: a
    /// server (durable by default), or SQLite with a synchronous level that
    /// syncs at commit (FULL and EXTRA; NORMAL outside WAL; SQLite's
    /// defaults are FULL and a rollback journal). Files flush only when the
    /// session fsyncs them, which the target does not know.
    pub fn commit_waits_for_disk(&self) -> bool {
        if self.is_server() {
            return true;
        }
        let Some(s) = self.sqlite_settings() else {
            return false;
        };
        let wal = s
            .journal_mode
            .as_deref()
            .is_some_and(|j| j.eq_ignore_ascii_case("wal"));
        match s.synchronous.as_deref().unwrap_or("full") {
            "off" => false,
            "normal" => !wal,
            _ => true,
        }
    }

    /// The dataset `name` inside this target, for a target that holds
    /// datasets side by side (an S3 prefix: `PREFIX/name`, same bucket and
    /// client settings); None for a target that is one dataset. `name` is
    /// one path part chosen by blobbench (no '/').
    pub fn child(&self, name: &str) -> Option<Target> {
        match self {
            Target::S3 { bucket } => {
                let mut b = bucket.clone();
                b.prefix = if b.prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{}/{name}", b.prefix)
                };
                b.display = s3_display(&b);
                Some(Target::S3 { bucket: b })
            }
            _ => None,
        }
    }

    /// The SQLite settings of a database target; None otherwise.
    pub fn sqlite_settings(&self) -> Option<&SqliteSettings> {
        match self {
            Target::Sqlite { settings, .. } | Target::SqliteExt { settings, .. } => Some(settings),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Postgres { server, table, .. } | Target::Mysql { server, table, .. } => {
                write!(
                    f,
                    "{} {} table {table}",
                    self.kind_name(),
                    server.display.display()
                )
            }
            Target::S3 { bucket } => write!(f, "{}", bucket.display.display()),
            _ => write!(f, "{}:{}", self.kind_name(), self.path().display()),
        }
    }
}

/// Takes the `inject=SPEC` setting (a testing aid: a known extra cost per
/// timed operation, see `store::inject`) off a target string of any
/// scheme, and returns the rest and SPEC. The setting is the same on every
/// scheme, so it is taken here, before the string reaches a backend's
/// parser: `sqlite:x.db?inject=+20us&journal_mode=wal` gives
/// `sqlite:x.db?journal_mode=wal` and `+20us`. SPEC is checked by whoever
/// takes it; [`Target::parse`] refuses a string that still holds one.
pub fn split_injection(text: &str) -> Result<(String, Option<String>)> {
    let Some((base, query)) = text.split_once('?') else {
        return Ok((text.to_string(), None));
    };
    let mut kept = Vec::new();
    let mut spec = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("inject", value)) => {
                let shown = redact(text);
                if spec.is_some() {
                    return Err(Error::usage(format!(
                        "target \"{shown}\": inject= is given twice; give one, e.g. ?inject=+20us"
                    )));
                }
                if value.is_empty() {
                    return Err(Error::usage(format!(
                        "target \"{shown}\": inject= has no value; e.g. ?inject=+20us or ?inject=x1.10"
                    )));
                }
                spec = Some(value.to_string());
            }
            _ if pair == "inject" => {
                return Err(Error::usage(format!(
                    "target \"{}\": inject has no value; e.g. ?inject=+20us or ?inject=x1.10",
                    redact(text)
                )));
            }
            _ => kept.push(pair),
        }
    }
    if spec.is_none() {
        return Ok((text.to_string(), None));
    }
    let rest = kept
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>();
    let text = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((text, spec))
}

/// Splits blobbench's own `?name=value` settings off a server URL; the rest
/// goes to the client library. Returns (url for the client, our settings).
fn split_server_url(text: &str, ours: &[&str]) -> Result<(String, Vec<(String, String)>)> {
    let (base, query) = match text.split_once('?') {
        Some((b, q)) => (b, q),
        None => (text, ""),
    };
    let mut theirs = Vec::new();
    let mut mine = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if ours.contains(&name) {
            mine.push((name.to_string(), value.to_ascii_lowercase()));
        } else {
            theirs.push(pair.to_string());
        }
    }
    let url = if theirs.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", theirs.join("&"))
    };
    Ok((url, mine))
}

/// The URL with the password (user:PASSWORD@) replaced by ***.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn server_url(connect: String) -> ServerUrl {
    let display = PathBuf::from(redact(&connect).split('?').next().unwrap_or_default());
    ServerUrl {
        connect,
        display,
        nodes: Vec::new(),
        timeouts: ServerTimeouts::default(),
    }
}

/// The server of a target whose own settings (`mine`) may hold
/// `timeout=` and `connect_timeout=`; the others are left in `mine`.
fn server_with_timeouts(
    text: &str,
    connect: String,
    mine: &mut Vec<(String, String)>,
) -> Result<ServerUrl> {
    let mut server = server_url(connect);
    for (name, value) in mine.iter() {
        if name == "timeout" || name == "connect_timeout" {
            server.timeouts.set(name, value, &redact(text))?;
        }
    }
    mine.retain(|(name, _)| name != "timeout" && name != "connect_timeout");
    Ok(server)
}

/// A MySQL URL's host part as a list of nodes (`H1:P1,H2:P2`, and those of
/// `?nodes=`): the URL for the client names the first, and the server
/// keeps the whole list when there is more than one, its display naming
/// them all. A URL that names one node is left as it is.
fn mysql_nodes(text: &str, server: &mut ServerUrl, extra: &[String]) -> Result<()> {
    let shown = redact(text);
    let connect = server.connect.clone();
    let Some((scheme, rest)) = connect.split_once("://") else {
        return Ok(());
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if !hosts.contains(',') && extra.is_empty() {
        return Ok(());
    }
    // A node without a port takes the first node's (3306 if it has none).
    let first = hosts.split(',').next().unwrap_or_default();
    let default_port =
        server::node_list(first, &[], 3306, &shown).map_or(3306, |n| split_node(&n[0]).1);
    let extra: Vec<&str> = extra.iter().flat_map(|e| e.split(',')).collect();
    let nodes = server::node_list(hosts, &extra, default_port, &shown)?;
    let user = user.map(|u| format!("{u}@")).unwrap_or_default();
    server.connect = format!("{scheme}://{user}{}{tail}", nodes[0]);
    let display = redact(&format!("{scheme}://{user}{}{tail}", nodes.join(",")));
    server.display = PathBuf::from(display.split('?').next().unwrap_or_default());
    server.nodes = nodes;
    Ok(())
}

fn valid_table(text: &str, table: &str) -> Result<String> {
    if table.is_empty()
        || table.len() > 60
        || !table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || table.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(Error::usage(format!(
            "target \"{}\": table \"{table}\" must be letters, digits and _ (not starting with a digit)",
            redact(text)
        )));
    }
    Ok(table.to_ascii_lowercase())
}

fn parse_postgres(text: &str) -> Result<Target> {
    let (connect, mut mine) =
        split_server_url(text, &["mode", "table", "timeout", "connect_timeout"])?;
    let server = server_with_timeouts(text, connect, &mut mine)?;
    let mut mode = PgMode::Bytea;
    let mut table = None;
    for (name, value) in mine {
        match name.as_str() {
            "mode" => {
                mode = match value.as_str() {
                    "bytea" => PgMode::Bytea,
                    "lo" => PgMode::Lo,
                    _ => {
                        return Err(Error::usage(format!(
                            "target \"{}\": unknown mode \"{value}\"; use mode=bytea or mode=lo",
                            redact(text)
                        )));
                    }
                }
            }
            _ => table = Some(valid_table(text, &value)?),
        }
    }
    let table = table.unwrap_or_else(|| match mode {
        PgMode::Bytea => "largeobjects".into(),
        PgMode::Lo => "largeobjects_lo".into(),
    });
    Ok(Target::Postgres {
        server,
        mode,
        table,
    })
}

fn parse_mysql(text: &str) -> Result<Target> {
    let (connect, mut mine) = split_server_url(
        text,
        &["engine", "table", "nodes", "timeout", "connect_timeout"],
    )?;
    let connect = connect.replacen("mariadb://", "mysql://", 1);
    let mut server = server_with_timeouts(text, connect, &mut mine)?;
    let extra: Vec<String> = mine
        .iter()
        .filter(|(name, _)| name == "nodes")
        .map(|(_, value)| value.clone())
        .collect();
    mysql_nodes(text, &mut server, &extra)?;
    let mut engine = MysqlEngine::Innodb;
    let mut table = None;
    for (name, value) in mine {
        match name.as_str() {
            "nodes" => {}
            "engine" => {
                engine = match value.as_str() {
                    "innodb" => MysqlEngine::Innodb,
                    "myisam" => MysqlEngine::Myisam,
                    "aria" => MysqlEngine::Aria,
                    "archive" => MysqlEngine::Archive,
                    _ => {
                        return Err(Error::usage(format!(
                            "target \"{}\": unknown engine \"{value}\"; use engine=innodb, myisam, aria or archive",
                            redact(text)
                        )));
                    }
                }
            }
            _ => table = Some(valid_table(text, &value)?),
        }
    }
    let table =
        table.unwrap_or_else(|| format!("largeobjects_{}", engine.sql_name().to_ascii_lowercase()));
    Ok(Target::Mysql {
        server,
        engine,
        table,
    })
}

/// `s3://BUCKET/PREFIX?endpoint=URL&region=R&part_size=N&topology=URL&timeout=10s&connect_timeout=2s&retries=0`.
fn parse_s3(text: &str) -> Result<Target> {
    let bad = |why: &str| Error::usage(format!("target \"{text}\": {why}"));
    let rest = text
        .strip_prefix("s3://")
        .ok_or_else(|| bad("write an S3 target as s3://BUCKET/PREFIX?endpoint=URL"))?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
    if !valid_bucket(bucket) {
        return Err(bad(&format!(
            "bucket \"{bucket}\" is not a bucket name: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
        )));
    }
    let prefix = prefix.trim_matches('/');
    if prefix
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
        && !prefix.is_empty()
    {
        return Err(bad(&format!(
            "prefix \"{prefix}\" has an empty, '.' or '..' part; name a folder such as s3://{bucket}/blobs"
        )));
    }
    let mut location = S3Location {
        bucket: bucket.to_string(),
        prefix: prefix.to_string(),
        endpoint: None,
        region: None,
        part_size: S3_DEFAULT_PART_SIZE,
        topology: None,
        waits: S3Waits::default(),
        display: PathBuf::new(),
    };
    let mut connect_given = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "endpoint" => location.endpoint = Some(http_url(text, name, value, bucket)?),
            "timeout" => location.waits.timeout_ms = wait_ms(text, name, value)?,
            "connect_timeout" => connect_given = Some((wait_ms(text, name, value)?, value)),
            "retries" => location.waits.retries = retries(text, value)?,
            "topology" => location.topology = Some(http_url(text, name, value, bucket)?),
            "region" if value.is_empty() => {
                return Err(bad(
                    "region= is empty: name the bucket's region, e.g. region=us-east-1, or leave region= out",
                ));
            }
            "region" => {
                check_region(value).map_err(|why| bad(&format!("region={value} {why}")))?;
                location.region = Some(value.to_string());
            }
            "part_size" => {
                let size = crate::units::parse_number(value)?;
                if !(5 << 20..=5 << 30).contains(&size) {
                    return Err(bad(&format!(
                        "part_size={value}: S3 takes parts of 5MiB to 5GiB; e.g. part_size=8MiB"
                    )));
                }
                location.part_size = size;
            }
            _ => {
                return Err(bad(&format!(
                    "unknown setting \"{name}\"; s3 targets take endpoint=URL, region=NAME, part_size=SIZE, topology=URL, timeout=10s, connect_timeout=2s and retries=N"
                )));
            }
        }
    }
    let w = &mut location.waits;
    match connect_given {
        Some((ms, given)) if ms > w.timeout_ms => {
            return Err(bad(&format!(
                "connect_timeout={given} is longer than the timeout ({}), which bounds the whole request, connecting included; make connect_timeout at most timeout",
                wait_words(w.timeout())
            )));
        }
        Some((ms, _)) => w.connect_timeout_ms = ms,
        // The default never outlasts a shorter timeout= given alone.
        None => w.connect_timeout_ms = w.connect_timeout_ms.min(w.timeout_ms),
    }
    location.display = s3_display(&location);
    Ok(Target::S3 { bucket: location })
}

/// The shortest wait an S3 target takes (a shorter one fails requests a
/// loopback server answers).
const S3_MIN_WAIT: Duration = Duration::from_millis(10);
/// The longest wait an S3 target takes.
const S3_MAX_WAIT: Duration = Duration::from_secs(3600);

/// An S3 target's `timeout=` or `connect_timeout=`, in milliseconds.
fn wait_ms(text: &str, name: &str, value: &str) -> Result<u64> {
    let d = crate::units::duration_in(S3_MIN_WAIT, S3_MAX_WAIT)(value).map_err(|why| {
        let example = if why.contains("e.g.") {
            String::new()
        } else {
            format!(
                "; e.g. {name}={}",
                if name == "timeout" { "10s" } else { "2s" }
            )
        };
        Error::usage(format!("target \"{text}\": {name}={value}: {why}{example}"))
    })?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(Error::usage(format!(
            "target \"{text}\": {name}={value}: give whole milliseconds, e.g. {name}=1500ms"
        )));
    }
    Ok(d.as_millis() as u64)
}

/// An S3 target's `retries=`.
fn retries(text: &str, value: &str) -> Result<u32> {
    let max = S3Waits::MAX_RETRIES;
    match value.parse::<u32>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(Error::usage(format!(
            "target \"{text}\": retries={value}: give a count from 0 to {max} (0, the default, shows every failed request)"
        ))),
    }
}

/// A wait as messages write it: `10 s`, `1.5 s`, `250 ms`.
pub fn wait_words(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

/// `s3://BUCKET/PREFIX at ENDPOINT`, as messages and results name a location.
fn s3_display(location: &S3Location) -> PathBuf {
    let folder = if location.prefix.is_empty() {
        String::new()
    } else {
        format!("/{}", location.prefix)
    };
    let at = location
        .endpoint
        .as_deref()
        .map(|e| format!(" at {e}"))
        .unwrap_or_default();
    PathBuf::from(format!("s3://{}{folder}{at}", location.bucket))
}

/// A region name the client can sign with and put in a host name, or why
/// not: AWS's are letters, digits and '-' (`us-east-1`); other servers
/// take '_' and '.' too. Anything else would make a header value or a URL
/// the client refuses by panicking.
pub fn check_region(value: &str) -> std::result::Result<(), String> {
    let fits = (1..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if fits {
        Ok(())
    } else {
        Err(
            "is not a region name: 1 to 64 letters, digits, '-', '_' and '.', e.g. us-east-1"
                .into(),
        )
    }
}

/// S3's bucket naming rules (the ones a typo breaks).
fn valid_bucket(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// An http(s) URL given as an S3 target's setting (`endpoint=`,
/// `topology=`), checked whole before any client is built: the S3 client
/// turns it into requests with parsers that panic on what they refuse.
fn http_url(text: &str, setting: &str, value: &str, bucket: &str) -> Result<String> {
    check_http_url(value, bucket).map_err(|why| {
        Error::usage(format!(
            "target \"{text}\": {setting}=\"{value}\" {why}; e.g. {setting}=http://127.0.0.1:8333"
        ))
    })
}

/// `value` as an S3 endpoint the client can use, without a trailing '/',
/// or why not (words that follow the value in a message): an http:// or
/// https:// URL with a host, a port from 1 to 65535 if any, no user or
/// password, no query or fragment. The client writes each request's URL
/// as `ENDPOINT/BUCKET/KEY`, reads it with the `http` crate and again with
/// the `url` crate, and unwraps both: so the URL of a request to `bucket`
/// must pass both here, where a refusal is a usage error.
pub fn check_http_url(value: &str, bucket: &str) -> std::result::Result<String, String> {
    let rest = value
        .strip_prefix("http://")
        .or_else(|| value.strip_prefix("https://"))
        .ok_or("is not an http:// or https:// URL")?;
    let value = value.trim_end_matches('/');
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err("names no host".into());
    }
    if authority.contains('@') {
        return Err(
            "holds a user or password: give the URL without credentials (they go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
                .into(),
        );
    }
    let url = reqwest::Url::parse(value).map_err(|e| format!("is not a URL ({e})"))?;
    if url.query().is_some() || url.fragment().is_some() || rest.contains(['?', '#']) {
        return Err(
            "has a query or fragment: an endpoint is scheme, host, port and path only".into(),
        );
    }
    if url.port() == Some(0) {
        return Err("has port 0: give a port from 1 to 65535".into());
    }
    // The request URL as the client writes it, through both parsers.
    let request = format!("{value}/{bucket}/blobbench-manifest.json");
    let uri: hyper::Uri = request
        .parse()
        .map_err(|e| format!("is not a URL a request can use ({e})"))?;
    reqwest::Url::parse(&uri.to_string())
        .map_err(|e| format!("is not a URL a request can use ({e})"))?;
    Ok(value.to_string())
}

fn classify_bare_path(path: &Path) -> Target {
    if path.is_dir() {
        let path = path.to_path_buf();
        return if path.join("00").is_dir() {
            Target::Tree { path }
        } else {
            Target::Dir { path }
        };
    }
    Target::Sqlite {
        path: path.to_path_buf(),
        settings: SqliteSettings::default(),
    }
}

/// The settings an SQLite target's query takes.
const SQLITE_SETTINGS: [&str; 9] = [
    "page_size",
    "journal_mode",
    "synchronous",
    "cache_size",
    "mmap_size",
    "locking_mode",
    "wal_autocheckpoint",
    "layout",
    "auto_vacuum",
];

fn parse_settings(target: &str, query: Option<&str>) -> Result<SqliteSettings> {
    let mut settings = SqliteSettings::default();
    let Some(query) = query else {
        return Ok(settings);
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            Error::usage(format!(
                "target \"{target}\": setting \"{pair}\" needs a value, e.g. journal_mode=wal"
            ))
        })?;
        if value.is_empty() && SQLITE_SETTINGS.contains(&name) {
            return Err(Error::usage(format!(
                "target \"{target}\": {name}= is empty; give it a value (see blobbench --help for each setting's values), or leave {name}= out"
            )));
        }
        let value_lc = value.to_ascii_lowercase();
        match name {
            "page_size" => settings.page_size = Some(parse_page_size(value)?),
            "journal_mode" => {
                settings.journal_mode = Some(one_of("journal_mode", &value_lc, JOURNAL_MODES)?)
            }
            "synchronous" => settings.synchronous = Some(parse_synchronous(&value_lc)?),
            "locking_mode" => {
                settings.locking_mode = Some(one_of("locking_mode", &value_lc, LOCKING_MODES)?)
            }
            "cache_size" => settings.cache_size = Some(parse_cache_size("cache_size", value)?),
            "mmap_size" => settings.mmap_size = Some(parse_mmap_size(value)?),
            "wal_autocheckpoint" => {
                settings.wal_autocheckpoint = Some(parse_wal_autocheckpoint(value)?)
            }
            "layout" => settings.layout = Some(SqliteLayout::parse(value)?),
            "auto_vacuum" => {
                settings.auto_vacuum = Some(one_of("auto_vacuum", &value_lc, AUTO_VACUUM)?)
            }
            other => {
                return Err(Error::usage(format!(
                    "target \"{target}\": unknown setting \"{other}\"; known: {}",
                    SQLITE_SETTINGS.join(", ")
                )));
            }
        }
    }
    Ok(settings)
}

/// A page size: a power of two from 512 to 65536 (units allowed: 8KiB).
pub fn parse_page_size(value: &str) -> Result<u32> {
    let n = parse_number(value)?;
    if !(512..=65536).contains(&n) || !n.is_power_of_two() {
        return Err(Error::usage(format!(
            "page size \"{value}\" is not a power of two between 512 and 65536"
        )));
    }
    Ok(n as u32)
}

/// WAL pages between automatic checkpoints: 0 (never) up to 2^31-1.
pub fn parse_wal_autocheckpoint(value: &str) -> Result<u32> {
    let n = parse_number(value)?;
    u32::try_from(n)
        .ok()
        .filter(|&n| n <= i32::MAX as u32)
        .ok_or_else(|| {
            Error::usage(format!(
                "wal_autocheckpoint=\"{value}\" is too large: give pages, e.g. 1000 (SQLite's default) or 0 (never)"
            ))
        })
}

/// SQLite's cache_size: positive = pages, negative = KiB. Both accepted,
/// within the C int SQLite keeps it in (a larger value would silently
/// become 0 there).
/// `setting` names it in the error (`cache_size` in a target, `--cache-size`).
pub fn parse_cache_size(setting: &str, value: &str) -> Result<i64> {
    let limit = i64::from(i32::MAX);
    crate::units::parse_signed(value, -limit, limit).map_err(|_| {
        Error::usage(format!(
            "{setting} \"{value}\" is not a number from -{limit} to {limit}: pages, or negative for KiB, e.g. --cache-size=-2000"
        ))
    })
}

/// SQLite's mmap_size in bytes: at most 2^63 - 1 (SQLite keeps it signed).
pub fn parse_mmap_size(value: &str) -> Result<u64> {
    let n = parse_number(value)?;
    if n > crate::units::MAX_KEY {
        return Err(Error::usage(format!(
            "mmap_size \"{value}\" is too large: give bytes up to {}, e.g. mmap_size=1G",
            crate::units::MAX_KEY
        )));
    }
    Ok(n)
}

/// A synchronous level by name or number (0-3), as its name.
pub fn parse_synchronous(value: &str) -> Result<String> {
    let v = value.to_ascii_lowercase();
    let named = match v.as_str() {
        "0" => "off",
        "1" => "normal",
        "2" => "full",
        "3" => "extra",
        other => other,
    };
    one_of("synchronous", named, SYNCHRONOUS)
}

/// `value` in lower case when it is one of `allowed`; else an error naming them.
pub fn one_of(setting: &str, value: &str, allowed: &[&str]) -> Result<String> {
    let v = value.to_ascii_lowercase();
    if allowed.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(Error::usage(format!(
            "unknown {setting} \"{value}\"; use one of: {}",
            allowed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_usable_urls_or_refused_with_the_reason() {
        for good in [
            "http://127.0.0.1:8333",
            "http://127.0.0.1:8333/",
            "https://s3.example.com",
            "http://[::1]:9000",
            "http://h:65535/prefix",
        ] {
            let back = check_http_url(good, "bucket").unwrap_or_else(|e| panic!("{good}: {e}"));
            assert!(!back.ends_with('/'), "{back}");
        }
        for (bad, why) in [
            ("http://h:99999", "invalid port"),
            ("http://h:65536", "invalid port"),
            ("http://[::1", "IPv6"),
            ("http://h:0", "port 0"),
            ("http://", "no host"),
            ("http:///x", "no host"),
            ("http://u:p@h", "user or password"),
            ("http://h?x=1", "query"),
            ("http://h#f", "fragment"),
            ("http://%zz", "not a URL"),
            ("ftp://h", "http://"),
            ("HTTP://h", "http://"),
        ] {
            let e = check_http_url(bad, "bucket").unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn regions_are_names_a_header_and_a_host_can_carry() {
        for good in ["us-east-1", "garage", "eu_west.2"] {
            assert!(check_region(good).is_ok(), "{good}");
        }
        for bad in ["", "us east", "r\u{e9}gion", "a/b", "x\n"] {
            assert!(check_region(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn commits_wait_for_the_disk_as_sqlite_syncs_them() {
        let waits = |t: &str| Target::parse(t).unwrap().commit_waits_for_disk();
        assert!(waits("sqlite:a.db"), "SQLite's default is FULL");
        assert!(waits("sqlite:a.db?journal_mode=wal&synchronous=full"));
        assert!(!waits("sqlite:a.db?journal_mode=wal&synchronous=normal"));
        assert!(waits("sqlite:a.db?journal_mode=delete&synchronous=normal"));
        assert!(!waits("sqlite:a.db?synchronous=off"));
        assert!(!waits("dir:/tmp/x"));
        assert!(waits("postgres://u@127.0.0.1/db"));
    }

    #[test]
    fn parses_schemes_and_settings() {
        let t = Target::parse(
            "sqlite:/tmp/a.db?journal_mode=WAL&synchronous=1&page_size=8KiB&mmap_size=1G",
        )
        .unwrap();
        let Target::Sqlite { path, settings } = t else {
            panic!()
        };
        assert_eq!(path, PathBuf::from("/tmp/a.db"));
        assert_eq!(settings.journal_mode.as_deref(), Some("wal"));
        assert_eq!(settings.synchronous.as_deref(), Some("normal"));
        assert_eq!(settings.page_size, Some(8192));
        assert_eq!(settings.mmap_size, Some(1_000_000_000));
        assert!(matches!(
            Target::parse("dir:/x").unwrap(),
            Target::Dir { .. }
        ));
        assert!(matches!(
            Target::parse("tree:/x").unwrap(),
            Target::Tree { .. }
        ));
        assert!(matches!(
            Target::parse("sqlite-ext:/x.db").unwrap(),
            Target::SqliteExt { .. }
        ));
        assert!(matches!(
            Target::parse("nothing-here.db").unwrap(),
            Target::Sqlite { .. }
        ));
    }

    fn s3_waits(text: &str) -> S3Waits {
        match Target::parse(text).unwrap() {
            Target::S3 { bucket } => bucket.waits,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn s3_waits_are_settings_with_short_defaults() {
        let plain = s3_waits("s3://bucket/p");
        assert_eq!(plain, S3Waits::default());
        assert_eq!(
            (plain.timeout(), plain.connect_timeout(), plain.retries),
            (Duration::from_secs(10), Duration::from_secs(2), 0)
        );
        let set = s3_waits("s3://bucket/p?timeout=30s&connect_timeout=500ms&retries=2");
        assert_eq!(
            (set.timeout_ms, set.connect_timeout_ms, set.retries),
            (30_000, 500, 2)
        );
        // A short timeout alone shortens the connect timeout with it.
        assert_eq!(
            s3_waits("s3://bucket/p?timeout=1s").connect_timeout_ms,
            1000
        );
        for (bad, needle) in [
            ("s3://bucket/p?timeout=abc", "timeout=abc"),
            ("s3://bucket/p?timeout=10", "timeout=10"),
            ("s3://bucket/p?timeout=0s", "out of range"),
            ("s3://bucket/p?timeout=2h", "out of range"),
            ("s3://bucket/p?connect_timeout=1ns", "connect_timeout=1ns"),
            (
                "s3://bucket/p?timeout=1s&connect_timeout=2s",
                "at most timeout",
            ),
            ("s3://bucket/p?retries=11", "0 to 10"),
            ("s3://bucket/p?retries=x", "retries=x"),
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains(needle), "{bad}: {e}");
        }
        assert_eq!(wait_words(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(wait_words(Duration::from_millis(250)), "250 ms");
    }

    #[test]
    fn s3_targets_of_earlier_results_read_back_with_the_waits_they_ran_with() {
        let Target::S3 { bucket } = Target::parse("s3://bucket/p?timeout=3s").unwrap() else {
            unreachable!()
        };
        let mut value = serde_json::to_value(&bucket).unwrap();
        let back: S3Location = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, bucket);
        value.as_object_mut().unwrap().remove("waits");
        let old: S3Location = serde_json::from_value(value).unwrap();
        assert_eq!(old.waits, S3Waits::BEFORE_SETTINGS);
    }

    #[test]
    fn rejects_bad_settings() {
        for bad in [
            "sqlite:a.db?journal_mode=fast",
            "sqlite:a.db?page_size=1000",
            "sqlite:a.db?colour=blue",
            "sqlite:a.db?synchronous",
            "dir:x?a=b",
            "sqlite:",
            "postgres://u@h/db?mode=toast",
            "mysql://u@h/db?engine=memory",
            "mysql://u@h/db?table=1x",
            "s3://Bucket/x",
            "s3://bucket/x?endpoint=ftp://h",
            "sqlite:a.db?wal_autocheckpoint=-1",
            "sqlite:a.db?wal_autocheckpoint=3G",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
        assert!(Target::parse("sqlite:a.db?page_size=8192").is_ok());
        assert!(Target::parse("sqlite:a.db?cache_size=-2000").is_ok());
        let t = Target::parse("sqlite:a.db?wal_autocheckpoint=0").unwrap();
        assert_eq!(t.sqlite_settings().unwrap().wal_autocheckpoint, Some(0));
        assert_eq!(
            Target::parse("sqlite:a.db?wal_autocheckpoint=2k")
                .unwrap()
                .sqlite_settings()
                .unwrap()
                .wal_autocheckpoint,
            Some(2000)
        );
    }

    #[test]
    fn auto_vacuum_takes_its_three_modes_and_old_results_read_back_alike() {
        for (text, want) in [
            ("sqlite:a.db?auto_vacuum=incremental", Some("incremental")),
            ("sqlite:a.db?auto_vacuum=FULL", Some("full")),
            (
                "sqlite-ext:a.db?auto_vacuum=none&page_size=8192",
                Some("none"),
            ),
            ("sqlite:a.db", None),
        ] {
            let t = Target::parse(text).unwrap();
            assert_eq!(
                t.sqlite_settings().unwrap().auto_vacuum.as_deref(),
                want,
                "{text}"
            );
        }
        for bad in [
            "sqlite:a.db?auto_vacuum=2",
            "sqlite:a.db?auto_vacuum=sometimes",
        ] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(bad.rsplit('=').next().unwrap()) && e.contains("incremental"),
                "{e}"
            );
            assert!(!e.contains('\n'), "one line: {e}");
        }
        // Unset, it is left out of JSON: a result written before it existed
        // reads back and writes out the same.
        let old = r#"{"kind":"sqlite","path":"a.db","settings":{"page_size":null,"journal_mode":null,"synchronous":null,"cache_size":null,"mmap_size":null,"locking_mode":null}}"#;
        let t: Target = serde_json::from_str(old).unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), old);
        let t = Target::parse("sqlite:a.db?auto_vacuum=incremental").unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#""auto_vacuum":"incremental""#), "{json}");
        assert_eq!(serde_json::from_str::<Target>(&json).unwrap(), t);
    }

    #[test]
    fn inject_is_taken_off_every_scheme_and_refused_by_parse() {
        let split = |t: &str| split_injection(t).unwrap();
        for (text, rest, spec) in [
            ("sqlite:x.db?inject=+20us", "sqlite:x.db", Some("+20us")),
            (
                "sqlite:x.db?journal_mode=wal&inject=x1.10&synchronous=normal",
                "sqlite:x.db?journal_mode=wal&synchronous=normal",
                Some("x1.10"),
            ),
            ("dir:/tmp/d?inject=x1.10", "dir:/tmp/d", Some("x1.10")),
            ("tree:/tmp/t?inject=+1ms", "tree:/tmp/t", Some("+1ms")),
            (
                "sqlite-ext:e.db?inject=+5ns",
                "sqlite-ext:e.db",
                Some("+5ns"),
            ),
            ("memory:m?inject=+1us", "memory:m", Some("+1us")),
            ("x.db?inject=+1us", "x.db", Some("+1us")),
            (
                "postgres://u:pw@h/db?mode=lo&inject=+1us",
                "postgres://u:pw@h/db?mode=lo",
                Some("+1us"),
            ),
            (
                "s3://bucket/p?endpoint=http://127.0.0.1:1&inject=x2",
                "s3://bucket/p?endpoint=http://127.0.0.1:1",
                Some("x2"),
            ),
            (
                "sqlite:x.db?journal_mode=wal",
                "sqlite:x.db?journal_mode=wal",
                None,
            ),
            ("sqlite:x.db", "sqlite:x.db", None),
        ] {
            let (r, s) = split(text);
            assert_eq!((r.as_str(), s.as_deref()), (rest, spec), "{text}");
            // What is left parses; the string with inject= does not.
            if !text.starts_with("postgres") {
                Target::parse(&r).unwrap();
            }
            if spec.is_some() {
                let e = Target::parse(text).unwrap_err();
                assert_eq!(e.exit_code(), 2);
                let m = e.to_string();
                assert!(
                    m.contains("testing aid") && m.contains("blobbench run"),
                    "{m}"
                );
                assert!(!m.contains("pw@"), "password shown: {m}");
            }
        }
        for bad in [
            "sqlite:x.db?inject=+1us&inject=+2us",
            "sqlite:x.db?inject=",
            "dir:d?inject",
        ] {
            let m = split_injection(bad).unwrap_err().to_string();
            assert!(m.contains("inject") && !m.contains('\n'), "{bad}: {m}");
        }
    }

    #[test]
    fn server_urls_keep_their_own_options_and_hide_passwords() {
        let t = Target::parse(
            "mysql://bob:secret@127.0.0.1:3306/db?engine=archive&prefer_socket=false",
        )
        .unwrap();
        let Target::Mysql {
            server,
            engine,
            table,
        } = &t
        else {
            panic!()
        };
        assert_eq!(*engine, MysqlEngine::Archive);
        assert_eq!(table, "largeobjects_archive");
        assert_eq!(
            server.connect,
            "mysql://bob:secret@127.0.0.1:3306/db?prefer_socket=false"
        );
        assert_eq!(
            server.display,
            PathBuf::from("mysql://bob:***@127.0.0.1:3306/db")
        );
        assert!(!t.to_string().contains("secret"));
        assert!(!serde_json::to_string(&t).unwrap().contains("secret"));
        let Target::Postgres { mode, table, .. } =
            Target::parse("postgres://u@h:5432/db?mode=lo").unwrap()
        else {
            panic!()
        };
        assert_eq!((mode, table.as_str()), (PgMode::Lo, "largeobjects_lo"));
    }

    #[test]
    fn memory_targets_are_named_and_hold_no_local_path() {
        let t = Target::parse("memory:bench").unwrap();
        assert_eq!(
            t,
            Target::Memory {
                name: "bench".into()
            }
        );
        assert_eq!(t.to_string(), "memory:bench");
        assert_eq!(t.data_path(), None);
        assert!(Target::parse("memory:").is_err());
        // A bare path means what the caller says; a scheme always wins.
        let dir = |p: &Path| Target::Dir {
            path: p.to_path_buf(),
        };
        assert!(matches!(
            Target::parse_with_bare("out", dir).unwrap(),
            Target::Dir { .. }
        ));
        assert!(matches!(
            Target::parse_with_bare("tree:out", dir).unwrap(),
            Target::Tree { .. }
        ));
    }

    #[test]
    fn bare_directory_is_tree_when_it_has_00() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            Target::parse(tmp.path().to_str().unwrap()).unwrap(),
            Target::Dir { .. }
        ));
        std::fs::create_dir(tmp.path().join("00")).unwrap();
        assert!(matches!(
            Target::parse(tmp.path().to_str().unwrap()).unwrap(),
            Target::Tree { .. }
        ));
    }
}
