//! PostgreSQL targets: `postgres://USER@HOST:PORT/DB?mode=bytea|lo`.
//!
//! bytea: table `LargeObjects(id bigint primary key, largeData bytea)` with
//! the column's storage EXTERNAL, so incompressible content is TOASTed out
//! of line without a wasted compression attempt.
//! lo: the row holds an oid; content goes through the server functions
//! lo_from_bytea / lo_get, and every replaced or deleted object is unlinked
//! in the same statement, so no orphan large objects remain.
//!
//! CockroachDB and YugabyteDB speak PostgreSQL's wire protocol but have no
//! large objects: mode=lo on a server whose `SELECT version()` names one of
//! them is refused before anything is made ([`distributed_sql`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tokio_postgres::Statement;

use super::contract::{
    Access, CacheControl, Catalog, Engine, Serving, Session, SessionCore, SessionOptions,
    Snapshots, Space, StoreCore, StoreInfo, first_key_from_one, missing_key,
};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::{PgMode, ServerUrl, seconds};

mod client;

use client::PgClient;

/// The largest blob PostgreSQL takes in one value: a bytea (and the bytea
/// handed to lo_from_bytea) is at most 1 GB - 1 byte, and the bind message
/// that carries it must fit the same limit with the statement beside it.
pub const MAX_BLOB_BYTES: u64 = (1 << 30) - 1 - 4096;

/// A PostgreSQL table of blobs (bytea or large objects).
pub struct PostgresStore {
    // RefCell: info() and space_used() take &self; sessions take the client
    // through &mut self, so the two never overlap.
    client: RefCell<PgClient>,
    server_settings: Vec<(String, String)>,
    display: PathBuf,
    mode: PgMode,
    table: String,
    access: Access,
}

/// Settings recorded in every result: the ones that decide blob speed and durability.
const SETTINGS: &[&str] = &[
    "server_version",
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "wal_level",
    "wal_buffers",
    "wal_compression",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "checkpoint_timeout",
    "max_wal_size",
    "default_toast_compression",
    "block_size",
];

fn read_settings(client: &mut PgClient) -> Result<Vec<(String, String)>> {
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    Ok(client
        .query(
            client.op_bound(0),
            "SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings WHERE name = ANY($1) ORDER BY name",
            &[&names],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

/// The distributed SQL database a `SELECT version()` string names, if any:
/// CockroachDB ("CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, ...)") or
/// YugabyteDB ("PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu, ...",
/// its PostgreSQL fork's version with -YB- and its own).
pub fn distributed_sql(version: &str) -> Option<&'static str> {
    if version.contains("CockroachDB") {
        Some("CockroachDB")
    } else if version.contains("-YB-") {
        Some("YugabyteDB")
    } else {
        None
    }
}

/// The start of a version() string, up to its platform and compiler.
fn short_version(version: &str) -> &str {
    let end = [" (", " on ", ","]
        .iter()
        .filter_map(|sep| version.find(sep))
        .min()
        .unwrap_or(version.len());
    &version[..end]
}

/// Refuses mode=lo on a server without large objects, before anything is
/// made: what would fail is lo_from_bytea, midway through an init.
fn refuse_lo(client: &mut PgClient, display: &Path, mode: PgMode) -> Result<()> {
    if mode != PgMode::Lo {
        return Ok(());
    }
    let version: String = client
        .query_one(client.op_bound(0), "SELECT version()", &[])?
        .get(0);
    match distributed_sql(&version) {
        None => Ok(()),
        Some(name) => Err(Error::usage(format!(
            "{}: the server is {name} ({}), which does not support PostgreSQL's large objects: \
             mode=lo cannot run there; use mode=bytea and keep values small (see docs/TARGETS.md, \
             \"Distributed SQL that cannot run here\")",
            display.display(),
            short_version(&version)
        ))),
    }
}

/// Connects to `server` and logs in (within its `connect_timeout`), then
/// lets go: whether the server can be reached at all.
pub fn reach(server: &ServerUrl) -> Result<()> {
    PgClient::connect(server).map(drop)
}

impl PostgresStore {
    /// Connects to `server` and opens the existing `table`.
    pub fn open(server: &ServerUrl, mode: PgMode, table: &str, access: Access) -> Result<Self> {
        let display = &server.display;
        let mut client = PgClient::connect(server)?;
        refuse_lo(&mut client, display, mode)?;
        if access == Access::ReadOnly {
            // The server itself refuses any write from this session.
            client.batch_execute(client.op_bound(0), "SET default_transaction_read_only = on")?;
        }
        if !table_exists(&mut client, table)? {
            return Err(Error::usage(format!(
                "{}: table {table} does not exist; create it with `blobbench init` on this target",
                display.display()
            )));
        }
        let server_settings = read_settings(&mut client)?;
        Ok(PostgresStore {
            client: RefCell::new(client),
            server_settings,
            display: display.to_path_buf(),
            mode,
            table: table.to_string(),
            access,
        })
    }

    /// Creates the table afresh, refusing to drop one blobbench did not make.
    pub fn create(
        server: &ServerUrl,
        mode: PgMode,
        table: &str,
        manifest: &Manifest,
    ) -> Result<Self> {
        let display = &server.display;
        let mut client = PgClient::connect(server)?;
        refuse_lo(&mut client, display, mode)?;
        create_meta_table(&mut client)?;
        let admin = client.admin_bound();
        if table_exists(&mut client, table)? {
            let ours = client
                .query_opt(
                    client.op_bound(0),
                    "SELECT 1 FROM blobbench_meta WHERE tbl = $1 AND name = 'manifest'",
                    &[&table],
                )?
                .is_some();
            if !ours {
                return Err(Error::usage(format!(
                    "{}: table {table} exists and was not made by blobbench; name another with ?table=NAME",
                    display.display()
                )));
            }
            if mode == PgMode::Lo || column_is_oid(&mut client, table)? {
                client.batch_execute(
                    admin,
                    &format!(
                        "SELECT lo_unlink(largedata) FROM {table} WHERE largedata IS NOT NULL"
                    ),
                )?;
            }
            client.batch_execute(admin, &format!("DROP TABLE {table}"))?;
        }
        let ddl = match mode {
            PgMode::Bytea => format!(
                "CREATE TABLE {table} (id bigint PRIMARY KEY, largedata bytea);
                 ALTER TABLE {table} ALTER COLUMN largedata SET STORAGE EXTERNAL;"
            ),
            PgMode::Lo => format!("CREATE TABLE {table} (id bigint PRIMARY KEY, largedata oid);"),
        };
        client.batch_execute(admin, &ddl)?;
        let json = manifest.to_json();
        client.execute(
            client.op_bound(json.len() as u64),
            "INSERT INTO blobbench_meta (tbl, name, value) VALUES ($1, 'manifest', $2)
             ON CONFLICT (tbl, name) DO UPDATE SET value = excluded.value",
            &[&table, &json],
        )?;
        let server_settings = read_settings(&mut client)?;
        Ok(PostgresStore {
            client: RefCell::new(client),
            server_settings,
            display: display.to_path_buf(),
            mode,
            table: table.to_string(),
            access: Access::ReadWrite,
        })
    }
}

/// Creates `blobbench_meta` unless it exists. PostgreSQL's `CREATE TABLE
/// IF NOT EXISTS` does not hold against a concurrent creation: two sessions
/// that both find the table missing race in the catalog, and the second
/// fails, once the first has committed, with unique_violation (on
/// pg_type's name index) or duplicate_table. Either error therefore means
/// the table exists now, which is all this asks.
fn create_meta_table(client: &mut PgClient) -> Result<()> {
    use tokio_postgres::error::SqlState;
    let done = client.batch_execute_raw(
        client.admin_bound(),
        "CREATE TABLE IF NOT EXISTS blobbench_meta (tbl text, name text, value text, PRIMARY KEY (tbl, name))",
    )?;
    match done {
        Err(e)
            if e.code() == Some(&SqlState::UNIQUE_VIOLATION)
                || e.code() == Some(&SqlState::DUPLICATE_TABLE) =>
        {
            Ok(())
        }
        Err(e) => Err(client.classify(e)),
        Ok(()) => Ok(()),
    }
}

fn column_is_oid(client: &mut PgClient, table: &str) -> Result<bool> {
    let t: Option<String> = client
        .query_opt(
            client.op_bound(0),
            "SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = 'largedata'",
            &[&table],
        )?
        .map(|r| r.get(0));
    Ok(t.as_deref() == Some("oid"))
}

impl StoreCore for PostgresStore {
    fn info(&self) -> StoreInfo {
        let mut settings = Map::new();
        settings.insert(
            "mode".into(),
            Value::from(match self.mode {
                PgMode::Bytea => "bytea (storage EXTERNAL)",
                PgMode::Lo => "large objects (lo_from_bytea / lo_get)",
            }),
        );
        settings.insert("table".into(), Value::from(self.table.clone()));
        settings.insert("transport".into(), Value::from("tcp, no TLS"));
        let t = self.client.borrow().timeouts();
        settings.insert("timeout".into(), Value::from(seconds(t.timeout())));
        settings.insert(
            "connect_timeout".into(),
            Value::from(seconds(t.connect_timeout())),
        );
        for (k, v) in &self.server_settings {
            settings.insert(k.clone(), Value::from(v.clone()));
        }
        let version = self
            .server_settings
            .iter()
            .find(|(k, _)| k == "server_version")
            .map(|(_, v)| v.clone());
        StoreInfo {
            kind: "postgres".into(),
            path: self.display.clone(),
            settings,
            version,
        }
    }

    /// The statement, the transactions and what a commit waits for, from
    /// the settings read back from the server.
    fn describe_writes(&self, options: &SessionOptions) -> String {
        describe_writes(self.mode, &self.server_settings, options.per_op_transaction)
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        let json = manifest.to_json();
        let client = self.client.get_mut();
        client
            .execute(
                client.op_bound(json.len() as u64),
                "UPDATE blobbench_meta SET value = $2 WHERE tbl = $1 AND name = 'manifest'",
                &[&self.table, &json],
            )
            .map(|_| ())
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        let client = self.client.get_mut();
        let row = client.query_opt(
            client.op_bound(0),
            "SELECT value FROM blobbench_meta WHERE tbl = $1 AND name = 'ledger'",
            &[&self.table],
        )?;
        Ok(row.map(|r| r.get::<_, String>(0)))
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        let client = self.client.get_mut();
        client
            .execute(
                client.op_bound(text.len() as u64),
                "INSERT INTO blobbench_meta (tbl, name, value) VALUES ($1, 'ledger', $2)
                 ON CONFLICT (tbl, name) DO UPDATE SET value = excluded.value",
                &[&self.table, &text],
            )
            .map(|_| ())
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let client = self.client.get_mut();
        let manifest = client
            .query_opt(
                client.op_bound(0),
                "SELECT value FROM blobbench_meta WHERE tbl = $1 AND name = 'manifest'",
                &[&self.table],
            )
            .ok()
            .flatten()
            .and_then(|r| Manifest::parse(&r.get::<_, String>(0)));
        if let Some(m) = &manifest {
            m.require_complete(&self.display.display().to_string())?;
        }
        let row = client.query_one(
            client.admin_bound(),
            &format!("SELECT min(id), max(id), count(*) FROM {}", self.table),
            &[],
        )?;
        let (min, max, count): (Option<i64>, Option<i64>, i64) =
            (row.get(0), row.get(1), row.get(2));
        let (Some(min), Some(max)) = (min, max) else {
            return Err(Error::usage(format!(
                "{}: table {} is empty",
                self.display.display(),
                self.table
            )));
        };
        let min = first_key_from_one(&self.display, min)? as i64;
        let manifest = manifest.filter(|m| {
            m.first_key == min as u64 && m.last_key == max as u64 && m.count == count as u64
        });
        Ok(Catalog::found(
            min as u64,
            max as u64,
            count as u64,
            manifest,
        ))
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let t = &self.table;
        let sql = match self.mode {
            PgMode::Bytea => [
                format!("SELECT largedata FROM {t} WHERE id = $1"),
                format!("INSERT INTO {t} (id, largedata) VALUES ($1, $2)"),
                format!("UPDATE {t} SET largedata = $2 WHERE id = $1"),
                format!("DELETE FROM {t} WHERE id = $1"),
            ],
            PgMode::Lo => [
                format!("SELECT lo_get(largedata) FROM {t} WHERE id = $1"),
                format!("INSERT INTO {t} (id, largedata) VALUES ($1, lo_from_bytea(0, $2))"),
                // Replace the whole object and unlink the old one in one
                // statement. FOR UPDATE locks the row and, after waiting for
                // a concurrent writer, reads the object it left: without
                // it, two updates would both unlink the same old object.
                format!(
                    "WITH o AS (SELECT id, largedata AS old FROM {t} WHERE id = $1 FOR UPDATE) \
                     UPDATE {t} SET largedata = lo_from_bytea(0, $2) FROM o \
                     WHERE {t}.id = o.id RETURNING lo_unlink(o.old)"
                ),
                format!("DELETE FROM {t} WHERE id = $1 RETURNING lo_unlink(largedata)"),
            ],
        };
        let client = self.client.get_mut();
        let read = client.prepare(&sql[0])?;
        let (insert, update, delete) = if self.access == Access::ReadWrite {
            (
                Some(client.prepare(&sql[1])?),
                Some(client.prepare(&sql[2])?),
                Some(client.prepare(&sql[3])?),
            )
        } else {
            (None, None, None)
        };
        Ok(Box::new(PostgresSession {
            client,
            display: self.display.clone(),
            options,
            read,
            insert,
            update,
            delete,
            in_transaction: false,
            batch_bytes: 0,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }
}

impl Engine for PostgresStore {
    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Server)
    }

    /// synchronous_commit for this connection only (the server's other
    /// sessions keep theirs), read back with fsync, which decides whether
    /// "on" reaches the disk at all.
    fn set_durability(&mut self, durable: bool, _server_wide: bool) -> Result<Option<String>> {
        let level = if durable { "on" } else { "off" };
        let client = self.client.get_mut();
        client.batch_execute(
            client.op_bound(0),
            &format!("SET synchronous_commit = {level}"),
        )?;
        self.server_settings = read_settings(client)?;
        let get = |name: &str| {
            self.server_settings
                .iter()
                .find(|(k, _)| k == name)
                .map_or("?", |(_, v)| v.as_str())
        };
        let commit = get("synchronous_commit");
        let mut words = match commit {
            "off" => "synchronous_commit=off (this session): a commit returns before its WAL is \
                      flushed; the WAL writer flushes it within wal_writer_delay"
                .to_string(),
            other => format!(
                "synchronous_commit={other} (this session): each commit waits until its WAL is flushed to disk"
            ),
        };
        if get("fsync") == "off" {
            words.push_str("; but the server runs with fsync=off: nothing is flushed to disk");
        }
        Ok(Some(words))
    }
}

impl Space for PostgresStore {
    fn space_used(&self) -> Result<u64> {
        let mut client = self.client.borrow_mut();
        let sql = match self.mode {
            PgMode::Bytea => "SELECT pg_total_relation_size($1::text::regclass)".to_string(),
            PgMode::Lo => "SELECT pg_total_relation_size($1::text::regclass) + pg_total_relation_size('pg_largeobject')".to_string(),
        };
        let bound = client.admin_bound();
        let n: i64 = client.query_one(bound, &sql, &[&self.table])?.get(0);
        Ok(n as u64)
    }
}

pub struct PostgresSession<'a> {
    client: &'a mut PgClient,
    display: PathBuf,
    options: SessionOptions,
    read: Statement,
    insert: Option<Statement>,
    update: Option<Statement>,
    delete: Option<Statement>,
    in_transaction: bool,
    /// Blob bytes written in the open transaction, which its COMMIT makes
    /// durable (its bound grows with them).
    batch_bytes: u64,
}

impl PostgresSession<'_> {
    fn writable<'s>(&self, stmt: &'s Option<Statement>) -> Result<&'s Statement> {
        stmt.as_ref().ok_or_else(|| {
            Error::usage(format!(
                "{}: opened read-only; this run may not write",
                self.display.display()
            ))
        })
    }
}

/// Reads of a large object a concurrent write unlinked, retried before
/// the read gives up.
const UNLINKED_RETRIES: u32 = 16;

impl PostgresSession<'_> {
    /// The row of `key`. A large object is looked up by the catalog's
    /// latest state, not the statement's snapshot, so a concurrent update
    /// or delete can unlink the object between the two: outside a
    /// transaction the statement is run again (the row names the new object,
    /// or is gone); inside one, whose statements cannot go on after an
    /// error, the transaction is reported as a conflict to roll back.
    fn read_row(&mut self, key: u64) -> Result<Option<tokio_postgres::Row>> {
        let mut attempt = 0;
        loop {
            let bound = self.client.op_bound(0);
            match self
                .client
                .query_opt_raw(bound, &self.read, &[&(key as i64)])?
            {
                Ok(row) => return Ok(row),
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_OBJECT) => {
                    attempt += 1;
                    if self.in_transaction {
                        return Err(Error::server(
                            &self.display,
                            "the large object of key was unlinked by a concurrent write (a conflict): roll the transaction back and retry",
                        ));
                    }
                    if attempt > UNLINKED_RETRIES {
                        return Err(self.client.classify(e));
                    }
                }
                Err(e) => return Err(self.client.classify(e)),
            }
        }
    }

    /// Runs a write of `len` blob bytes; the rows it changed.
    fn write(
        &mut self,
        stmt: &Statement,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        len: usize,
    ) -> Result<u64> {
        if self.in_transaction {
            self.batch_bytes += len as u64;
        }
        let bound = self.client.op_bound(len as u64);
        self.client.execute(bound, stmt, params)
    }
}

impl SessionCore for PostgresSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        match self.read_row(key)? {
            Some(r) => {
                let data: Option<&[u8]> = r.get(0);
                sink(data.unwrap_or_default());
                Ok(())
            }
            None => Err(missing_key(key, &self.display)),
        }
    }

    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        let stmt = self.writable(&self.update)?.clone();
        let n = self.write(&stmt, &[&(key as i64), &data], data.len())?;
        if n == 0 {
            return Err(missing_key(key, &self.display));
        }
        Ok(())
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        let stmt = self.writable(&self.insert)?.clone();
        self.write(&stmt, &[&(key as i64), &data], data.len())?;
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        let stmt = self.writable(&self.delete)?.clone();
        let n = self.write(&stmt, &[&(key as i64)], 0)?;
        if n == 0 {
            return Err(missing_key(key, &self.display));
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<()> {
        if !self.options.per_op_transaction && !self.in_transaction {
            self.client
                .batch_execute(self.client.op_bound(0), "BEGIN")?;
            self.in_transaction = true;
            self.batch_bytes = 0;
        }
        Ok(())
    }

    /// Within the timeout and a second more per 10 MB the batch wrote.
    fn commit(&mut self) -> Result<()> {
        if self.in_transaction {
            let bound = self.client.op_bound(self.batch_bytes);
            self.client.batch_execute(bound, "COMMIT")?;
            self.in_transaction = false;
        }
        Ok(())
    }

    /// A failed statement outside a transaction committed nothing. On a
    /// connection already lost it fails at once (the server rolls back a
    /// transaction whose connection ends).
    fn rollback(&mut self) -> Result<bool> {
        if self.in_transaction {
            self.in_transaction = false;
            self.client
                .batch_execute(self.client.op_bound(0), "ROLLBACK")?;
        }
        Ok(true)
    }
}

impl Serving for PostgresSession<'_> {}

impl Snapshots for PostgresSession<'_> {}

fn table_exists(client: &mut PgClient, table: &str) -> Result<bool> {
    let found: Option<String> = client
        .query_one(
            client.op_bound(0),
            "SELECT to_regclass($1::text)::text",
            &[&table],
        )?
        .get(0);
    Ok(found.is_some())
}

/// How writes reach the disk on this server, in words: the statement, the
/// transactions and what a commit waits for (synchronous_commit and fsync
/// as read back).
fn describe_writes(
    mode: PgMode,
    settings: &[(String, String)],
    per_op_transaction: bool,
) -> String {
    let get = |name: &str| {
        settings
            .iter()
            .find(|(k, _)| k == name)
            .map_or("?", |(_, v)| v.as_str())
    };
    let statement = match mode {
        PgMode::Bytea => "UPDATE of a bytea row (TOASTed out of line, storage EXTERNAL)",
        PgMode::Lo => "large object replaced (lo_from_bytea, the old one unlinked)",
    };
    let transactions = if per_op_transaction {
        "one transaction per write"
    } else {
        "one transaction for all writes"
    };
    let commit = match get("synchronous_commit") {
        "off" => "a commit returns before its WAL is flushed",
        _ => "a commit waits until its WAL is flushed",
    };
    format!(
        "PostgreSQL {statement}, {transactions}, synchronous_commit={}: {commit}; fsync={}, full_page_writes={}",
        get("synchronous_commit"),
        get("fsync"),
        get("full_page_writes")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SELECT version()` as each server answers it (CockroachDB's and
    /// YugabyteDB's quoted from their documentation, issue reports and
    /// drivers' test suites; the last two cut where the quote was cut;
    /// PostgreSQL's from the server scripts/start-postgres.sh starts).
    const COCKROACH: &[&str] = &[
        "CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built 2023/09/27 01:53:43, go1.19.10)",
        "CockroachDB CCL v20.1.15 (x86_64-unknown-linux-gnu, built 2021/04/26 16:11:58, go1.13.9)",
        "CockroachDB CCL v23.2.5 (x86_64-pc-linux-gnu)",
    ];
    const YUGABYTE: &[&str] = &[
        "PostgreSQL 11.2-YB-2.20.0.0-b0 on x86_64-pc-linux-gnu, compiled by clang version 16.0.6 \
         (https://github.com/yugabyte/llvm-project.git 1e6329f40e5c531c09ade7015278078682293ebd), 64-bit",
        "PostgreSQL 11.2-YB-2.7.1.1-b0 on x86_64-pc-linux-gnu, compiled by gcc (Homebrew gcc 5.5.0_4) 5.5.0, 64-bit",
        "PostgreSQL 15.12-YB-2025.1.0.0-b0",
    ];
    const POSTGRES: &[&str] = &[
        "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit",
    ];

    #[test]
    fn version_strings_name_the_distributed_databases() {
        for v in COCKROACH {
            assert_eq!(distributed_sql(v), Some("CockroachDB"), "{v}");
        }
        for v in YUGABYTE {
            assert_eq!(distributed_sql(v), Some("YugabyteDB"), "{v}");
        }
        for v in POSTGRES {
            assert_eq!(distributed_sql(v), None, "{v}");
        }
    }

    #[test]
    fn messages_carry_the_version_without_the_build_details() {
        assert_eq!(short_version(COCKROACH[0]), "CockroachDB CCL v23.1.11");
        assert_eq!(short_version(YUGABYTE[0]), "PostgreSQL 11.2-YB-2.20.0.0-b0");
        assert_eq!(short_version("PostgreSQL 16.4"), "PostgreSQL 16.4");
    }
}
