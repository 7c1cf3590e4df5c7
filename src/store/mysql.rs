//! MariaDB / MySQL targets: `mysql://USER:PASS@HOST:PORT/DB?engine=innodb|myisam|aria|archive`.
//!
//! Table `LargeObjects(id BIGINT PRIMARY KEY, largeData LONGBLOB)` in the
//! chosen engine. ARCHIVE only inserts and reads (no UPDATE, no DELETE) and
//! allows an index only on an AUTO_INCREMENT column, so its id is one.
//! Blobs travel in one packet: a blob larger than the server's
//! max_allowed_packet is refused with an error naming that setting.
//!
//! On a node of a Galera cluster (wsrep_on) the store also records the
//! wsrep settings, takes InnoDB tables only (the one engine Galera
//! replicates) and keeps each write within one write set: see [`galera`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use mysql::Statement;
use mysql::prelude::Queryable;
use serde_json::{Map, Value};

use super::contract::{
    Access, CacheControl, Catalog, Engine, Serving, Session, SessionCore, SessionOptions,
    Snapshots, Space, StoreCore, StoreInfo, first_key_from_one, missing_key,
};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::{MysqlEngine, ServerUrl, seconds};

mod galera;
mod link;
mod shape;

use galera::{Galera, WriteSetLimit};
use link::Link;

pub(crate) use shape::galera_shape;

/// Variables recorded in every result.
const VARIABLES: &[&str] = &[
    "version",
    "version_comment",
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_flush_method",
    "innodb_log_file_size",
    "key_buffer_size",
    "aria_pagecache_buffer_size",
    "max_allowed_packet",
    "sync_binlog",
    "log_bin",
];

/// A MariaDB / MySQL table of blobs in one engine.
pub struct MysqlStore {
    // RefCell: space_used() takes &self; sessions take the connection through &mut self.
    link: RefCell<Link>,
    display: PathBuf,
    engine: MysqlEngine,
    table: String,
    access: Access,
    variables: Vec<(String, String)>,
    max_packet: u64,
    /// The server's Galera settings, when it is a Galera node.
    galera: Option<Galera>,
}

/// The largest blob the server at `url` takes in one write, and why: its
/// max_allowed_packet, less room for the statement and the packet header
/// (as [`MysqlSession`] checks each write), and on a Galera node what one
/// UPDATE's write set holds, when that is less. Asked of the server before
/// a table is made, so a dataset it cannot hold is refused before any write.
pub fn value_limit(server: &ServerUrl) -> Result<(u64, String)> {
    let mut link = Link::open(server)?;
    let packet: Option<u64> = link.op(0, |c| c.query_first("SELECT @@max_allowed_packet"))?;
    let packet = packet.unwrap_or(16 << 20);
    let by_packet = (
        packet.saturating_sub(PACKET_ROOM),
        format!(
            "the server's max_allowed_packet is {packet}; raise it with SET GLOBAL max_allowed_packet=N"
        ),
    );
    Ok(match link.op(0, Galera::detect)? {
        Some(g) if g.limit.update_bytes() < by_packet.0 => (g.limit.update_bytes(), g.limit.why()),
        _ => by_packet,
    })
}

/// Connects to `server` (the first node of a list that answers and is
/// ready) and logs in, then lets go: whether it can be reached at all.
pub fn reach(server: &ServerUrl) -> Result<()> {
    Link::open(server).map(drop)
}

/// Bytes of a write's packet beside the blob: the statement, the id and the
/// packet header.
const PACKET_ROOM: u64 = 1024;

fn read_variables(link: &mut Link) -> Result<Vec<(String, String)>> {
    let list = VARIABLES
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(",");
    link.op(0, |c| {
        c.query(format!("SHOW VARIABLES WHERE Variable_name IN ({list})"))
    })
}

fn table_exists(link: &mut Link, table: &str) -> Result<bool> {
    let n: Option<u64> = link.op(0, |c| {
        c.exec_first(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
            (table,),
        )
    })?;
    Ok(n.unwrap_or(0) > 0)
}

impl MysqlStore {
    fn finish(
        mut link: Link,
        display: &Path,
        engine: MysqlEngine,
        table: &str,
        access: Access,
        galera: Option<Galera>,
    ) -> Result<Self> {
        let variables = read_variables(&mut link)?;
        let max_packet = variables
            .iter()
            .find(|(k, _)| k == "max_allowed_packet")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(16 << 20);
        if access == Access::ReadOnly {
            link.op(0, |c| c.query_drop("SET SESSION TRANSACTION READ ONLY"))?;
        }
        Ok(MysqlStore {
            link: RefCell::new(link),
            display: display.to_path_buf(),
            engine,
            table: table.to_string(),
            access,
            variables,
            max_packet,
            galera,
        })
    }

    /// The server's Galera settings (None on a lone server), after
    /// refusing an engine Galera would not replicate: before anything is
    /// created or read.
    fn galera(link: &mut Link, display: &Path, engine: MysqlEngine) -> Result<Option<Galera>> {
        let galera = link.op(0, Galera::detect)?;
        if let Some(g) = &galera {
            g.refuse_engine(engine, display)?;
        }
        Ok(galera)
    }

    /// Connects to the first of `server`'s nodes that answers and opens
    /// the existing `table`.
    pub fn open(
        server: &ServerUrl,
        engine: MysqlEngine,
        table: &str,
        access: Access,
    ) -> Result<Self> {
        let display = &server.display;
        let mut link = Link::open(server)?;
        let galera = Self::galera(&mut link, display, engine)?;
        if !table_exists(&mut link, table)? {
            return Err(Error::usage(format!(
                "{}: table {table} does not exist; create it with `blobbench init` on this target",
                display.display()
            )));
        }
        Self::finish(link, display, engine, table, access, galera)
    }

    /// Creates the table afresh, refusing to drop one blobbench did not make.
    pub fn create(
        server: &ServerUrl,
        engine: MysqlEngine,
        table: &str,
        manifest: &Manifest,
    ) -> Result<Self> {
        let display = &server.display;
        let mut link = Link::open(server)?;
        let galera = Self::galera(&mut link, display, engine)?;
        link.admin(|c| {
            c.query_drop(
                "CREATE TABLE IF NOT EXISTS blobbench_meta (tbl VARCHAR(64), name VARCHAR(64), value LONGTEXT, \
                 PRIMARY KEY (tbl, name)) ENGINE=InnoDB",
            )
        })?;
        if table_exists(&mut link, table)? {
            let ours: Option<u64> = link.op(0, |c| {
                c.exec_first(
                    "SELECT 1 FROM blobbench_meta WHERE tbl = ? AND name = 'manifest'",
                    (table,),
                )
            })?;
            if ours.is_none() {
                return Err(Error::usage(format!(
                    "{}: table {table} exists and was not made by blobbench; name another with ?table=NAME",
                    display.display()
                )));
            }
            link.admin(|c| c.query_drop(format!("DROP TABLE {table}")))?;
        }
        let id = if engine == MysqlEngine::Archive {
            "id BIGINT NOT NULL AUTO_INCREMENT"
        } else {
            "id BIGINT NOT NULL"
        };
        let ddl = format!(
            "CREATE TABLE {table} ({id}, largedata LONGBLOB, PRIMARY KEY (id)) ENGINE={}",
            engine.sql_name()
        );
        // ER_UNKNOWN_STORAGE_ENGINE, the same number in MySQL and MariaDB.
        let unknown_engine = link.admin(|c| match c.query_drop(&ddl) {
            Err(mysql::Error::MySqlError(m)) if m.code == 1286 => Ok(true),
            done => done.map(|()| false),
        })?;
        if unknown_engine {
            return Err(Error::usage(format!(
                "{}: the server has no {} engine (MariaDB loads ARCHIVE with --plugin-load-add=ha_archive.so)",
                display.display(),
                engine.sql_name()
            )));
        }
        let actual: Option<String> = link.op(0, |c| {
            c.exec_first(
                "SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
                (table,),
            )
        })?;
        if !actual
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(engine.sql_name()))
        {
            return Err(Error::usage(format!(
                "{}: asked for engine {} but the server made the table {} (engine substitution)",
                display.display(),
                engine.sql_name(),
                actual.unwrap_or_default()
            )));
        }
        let json = manifest.to_json();
        link.op(json.len() as u64, |c| {
            c.exec_drop(
                "REPLACE INTO blobbench_meta (tbl, name, value) VALUES (?, 'manifest', ?)",
                (table, &json),
            )
        })?;
        Self::finish(link, display, engine, table, Access::ReadWrite, galera)
    }
}

/// What each value of innodb_flush_log_at_trx_commit does at a commit.
fn flush_log_meaning(value: &str) -> &'static str {
    match value {
        "0" => "the log is written and flushed about once a second, not at commit",
        "1" => "the log is flushed to disk at every commit",
        "2" => "the log is written to the OS at commit, flushed about once a second",
        _ => "an unknown value",
    }
}

impl MysqlStore {
    /// Sets innodb_flush_log_at_trx_commit to 1 (durable) or 0 when allowed
    /// and needed; returns the value read back and what happened, in words.
    fn set_flush_log(&mut self, durable: bool, server_wide: bool) -> Result<String> {
        const NAME: &str = "innodb_flush_log_at_trx_commit";
        let want = if durable { "1" } else { "0" };
        let link = self.link.get_mut();
        let value = |vars: &[(String, String)]| {
            vars.iter()
                .find(|(k, _)| k == NAME)
                .map_or_else(|| "?".to_string(), |(_, v)| v.clone())
        };
        // The words describe the state, not this call's action, so every
        // size of a run reads the same once the setting is in force.
        let mut note = " (global: blobbench's setting on this throwaway server)".to_string();
        if !server_wide {
            note = format!(
                " (asked for {want}; a global setting, left as the server has it: blobbench changes \
                 it only on a server scripts/start-mariadb.sh started)"
            );
        } else if value(&self.variables) != want {
            let refused = link.op(0, |c| {
                match c.query_drop(format!("SET GLOBAL {NAME} = {want}")) {
                    Ok(()) => Ok(None),
                    // No SUPER / SYSTEM_VARIABLES_ADMIN privilege: say so, measure as it is.
                    Err(mysql::Error::MySqlError(m))
                        if [1227, 1044, 1045, 1142].contains(&m.code) =>
                    {
                        Ok(Some(m.message))
                    }
                    Err(e) => Err(e),
                }
            })?;
            if let Some(why) = refused {
                note = format!(" (asked for {want}, could not set it: {why})");
            }
        }
        self.variables = read_variables(link)?;
        let now = value(&self.variables);
        Ok(format!("{NAME}={now}: {}{note}", flush_log_meaning(&now)))
    }
}

impl StoreCore for MysqlStore {
    fn info(&self) -> StoreInfo {
        let mut settings = Map::new();
        settings.insert("engine".into(), Value::from(self.engine.sql_name()));
        settings.insert("table".into(), Value::from(self.table.clone()));
        settings.insert("transport".into(), Value::from("tcp, no TLS"));
        {
            let link = self.link.borrow();
            settings.insert("node".into(), Value::from(link.node.clone()));
            if !link.skipped.is_empty() {
                settings.insert("nodes_skipped".into(), Value::from(link.skipped.join("; ")));
            }
            let t = link.timeouts();
            settings.insert("timeout".into(), Value::from(seconds(t.timeout())));
            settings.insert(
                "connect_timeout".into(),
                Value::from(seconds(t.connect_timeout())),
            );
        }
        for (k, v) in &self.variables {
            settings.insert(k.clone(), Value::from(v.clone()));
        }
        if let Some(g) = &self.galera {
            for (k, v) in &g.settings {
                settings.insert(k.clone(), Value::from(v.clone()));
            }
            settings.insert("galera_batches".into(), Value::from(g.limit.batches()));
        }
        let version = self
            .variables
            .iter()
            .find(|(k, _)| k == "version")
            .map(|(_, v)| v.clone());
        StoreInfo {
            kind: "mysql".into(),
            path: self.display.clone(),
            settings,
            version,
        }
    }

    /// The engine's statement, the transactions, and what a commit waits
    /// for, from the settings read back from the server.
    fn describe_writes(&self, options: &SessionOptions) -> String {
        describe_writes(
            self.engine,
            &self.variables,
            self.galera.as_ref(),
            options.per_op_transaction,
        )
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        let json = manifest.to_json();
        let table = &self.table;
        self.link.get_mut().op(json.len() as u64, |c| {
            c.exec_drop(
                "UPDATE blobbench_meta SET value = ? WHERE tbl = ? AND name = 'manifest'",
                (&json, table),
            )
        })
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        let table = &self.table;
        self.link.get_mut().op(0, |c| {
            c.exec_first(
                "SELECT value FROM blobbench_meta WHERE tbl = ? AND name = 'ledger'",
                (table,),
            )
        })
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        let table = &self.table;
        self.link.get_mut().op(text.len() as u64, |c| {
            c.exec_drop(
                "REPLACE INTO blobbench_meta (tbl, name, value) VALUES (?, 'ledger', ?)",
                (table, text),
            )
        })
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let link = self.link.get_mut();
        let table = &self.table;
        let manifest = link
            .op(0, |c| {
                c.exec_first::<String, _, _>(
                    "SELECT value FROM blobbench_meta WHERE tbl = ? AND name = 'manifest'",
                    (table,),
                )
            })
            .ok()
            .flatten()
            .and_then(|v| Manifest::parse(&v));
        if let Some(m) = &manifest {
            m.require_complete(&self.display.display().to_string())?;
        }
        let row: Option<(Option<i64>, Option<i64>, u64)> = link
            .admin(|c| c.query_first(format!("SELECT min(id), max(id), count(*) FROM {table}")))?;
        let Some((Some(min), Some(max), count)) = row else {
            return Err(Error::usage(format!(
                "{}: table {} is empty",
                self.display.display(),
                self.table
            )));
        };
        let min = first_key_from_one(&self.display, min)? as i64;
        let manifest = manifest
            .filter(|m| m.first_key == min as u64 && m.last_key == max as u64 && m.count == count);
        Ok(Catalog::found(min as u64, max as u64, count, manifest))
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let t = &self.table;
        let link = self.link.get_mut();
        let read = link.op(0, |c| {
            c.prep(format!("SELECT largedata FROM {t} WHERE id = ?"))
        })?;
        let writes = if self.access == Access::ReadWrite {
            let insert = link.op(0, |c| {
                c.prep(format!("INSERT INTO {t} (id, largedata) VALUES (?, ?)"))
            })?;
            let modify = if self.engine.can_modify() {
                Some((
                    link.op(0, |c| {
                        c.prep(format!("UPDATE {t} SET largedata = ? WHERE id = ?"))
                    })?,
                    link.op(0, |c| c.prep(format!("DELETE FROM {t} WHERE id = ?")))?,
                ))
            } else {
                None
            };
            Some((insert, modify))
        } else {
            None
        };
        Ok(Box::new(MysqlSession {
            link,
            display: self.display.clone(),
            engine: self.engine,
            options,
            read,
            writes,
            max_packet: self.max_packet,
            write_set: self.galera.as_ref().map(|g| g.limit),
            in_transaction: false,
            pending: 0,
            batch_bytes: 0,
            split: false,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }
}

impl Engine for MysqlStore {
    fn ascending_inserts_only(&self) -> Option<String> {
        (self.engine == MysqlEngine::Archive).then(|| {
            "ARCHIVE takes no id below one it already holds, so its rows are written in ascending id order"
                .to_string()
        })
    }

    fn can_modify(&self) -> Result<()> {
        if self.engine.can_modify() {
            return Ok(());
        }
        Err(Error::usage(format!(
            "mysql-{} {} table {}: this store cannot update rows (MySQL's ARCHIVE engine only inserts and reads); \
use engine=innodb, myisam or aria for --update",
            self.engine.sql_name().to_ascii_lowercase(),
            self.display.display(),
            self.table
        )))
    }

    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Server)
    }

    /// InnoDB's innodb_flush_log_at_trx_commit is global (MariaDB has no
    /// per-session form): set only when `server_wide` allows it, and a
    /// refusal (no privilege) is said, not raised. The other engines have
    /// no redo log to turn on or off.
    fn set_durability(&mut self, durable: bool, server_wide: bool) -> Result<Option<String>> {
        let words = match self.engine {
            MysqlEngine::Innodb => self.set_flush_log(durable, server_wide)?,
            MysqlEngine::Myisam => "MyISAM has no redo log: each INSERT is handed to the OS and \
                                    not fsynced by the server; --logging changes nothing here"
                .to_string(),
            MysqlEngine::Aria => "Aria has no redo log that --logging turns on or off (its \
                                  crash-recovery log follows the server's own Aria settings, unchanged)"
                .to_string(),
            MysqlEngine::Archive => "ARCHIVE has no redo log: rows are compressed into the \
                                     table file, not fsynced at commit; --logging changes nothing here"
                .to_string(),
        };
        Ok(Some(words))
    }
}

impl Space for MysqlStore {
    fn space_used(&self) -> Result<u64> {
        let mut link = self.link.borrow_mut();
        let table = &self.table;
        // Fresh statistics first: InnoDB's are sampled and may lag.
        link.admin(|c| c.query_drop(format!("ANALYZE TABLE {table}")))?;
        let n: Option<u64> = link.admin(|c| {
            c.exec_first(
                "SELECT data_length + index_length FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = ?",
                (table,),
            )
        })?;
        Ok(n.unwrap_or(0))
    }
}

type Writes = (Statement, Option<(Statement, Statement)>);

pub struct MysqlSession<'a> {
    link: &'a mut Link,
    display: PathBuf,
    engine: MysqlEngine,
    options: SessionOptions,
    read: Statement,
    writes: Option<Writes>,
    max_packet: u64,
    /// On a Galera node: what one transaction's write set may hold.
    write_set: Option<WriteSetLimit>,
    in_transaction: bool,
    /// Write-set bytes of the open transaction so far (Galera only).
    pending: u64,
    /// Blob bytes written in the open transaction, which its COMMIT carries
    /// (its bound grows with them).
    batch_bytes: u64,
    /// Whether the open batch was already committed in parts (Galera only).
    split: bool,
}

impl MysqlSession<'_> {
    /// Refuses a blob the server would refuse: larger than one packet, or
    /// (on a Galera node) than one write set of this kind of write.
    fn check_packet(&self, len: usize, update: bool) -> Result<()> {
        if let Some(limit) = self.write_set {
            limit.check(len, update, &self.display)?;
        }
        // The statement, the id and the packet header ride along with the blob.
        if len as u64 + PACKET_ROOM > self.max_packet {
            return Err(Error::usage(format!(
                "{}: a blob of {len} bytes does not fit the server's max_allowed_packet ({}); \
raise it, e.g. SET GLOBAL max_allowed_packet={} (or mariadbd --max-allowed-packet)",
                self.display.display(),
                self.max_packet,
                (len as u64 + (1 << 20)).next_power_of_two()
            )));
        }
        Ok(())
    }

    /// On a Galera node, inside a batch: commits the batch so far and
    /// begins anew when this write would take its write set past
    /// wsrep_max_ws_size, which no transaction can replicate (the server
    /// refuses the whole batch); a batch of writes is then several
    /// transactions, as MariaDB itself splits a LOAD DATA on Galera. The
    /// store's info says so.
    fn make_room(&mut self, len: usize, update: bool) -> Result<()> {
        if self.in_transaction {
            self.batch_bytes += len as u64;
        }
        let Some(limit) = self.write_set else {
            return Ok(());
        };
        if !self.in_transaction {
            return Ok(());
        }
        let cost = limit.cost(len, update);
        if self.pending > 0 && self.pending + cost > limit.max_ws_size {
            let carried = self.batch_bytes - len as u64;
            self.link.op(carried, |c| c.query_drop("COMMIT"))?;
            self.link.op(0, |c| c.query_drop("START TRANSACTION"))?;
            self.pending = 0;
            self.batch_bytes = len as u64;
            self.split = true;
        }
        self.pending += cost;
        Ok(())
    }

    fn read_only(&self) -> Error {
        Error::usage(format!(
            "{}: opened read-only; this run may not write",
            self.display.display()
        ))
    }

    fn no_modify(&self) -> Error {
        Error::usage(format!(
            "{}: the {} engine cannot update or delete rows; use engine=innodb, myisam or aria",
            self.display.display(),
            self.engine.sql_name()
        ))
    }
}

impl SessionCore for MysqlSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let read = &self.read;
        let row: Option<Option<Vec<u8>>> =
            self.link.op(0, |c| c.exec_first(read, (key as i64,)))?;
        match row {
            Some(data) => {
                sink(data.as_deref().unwrap_or_default());
                Ok(())
            }
            None => Err(missing_key(key, &self.display)),
        }
    }

    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.check_packet(data.len(), true)?;
        let Some((_, modify)) = &self.writes else {
            return Err(self.read_only());
        };
        let Some((update, _)) = modify else {
            return Err(self.no_modify());
        };
        let update = update.clone();
        self.make_room(data.len(), true)?;
        let changed = self.link.op(data.len() as u64, |c| {
            c.exec_drop(&update, (data, key as i64))?;
            Ok(c.affected_rows())
        })?;
        if changed == 0 {
            return Err(missing_key(key, &self.display));
        }
        Ok(())
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.check_packet(data.len(), false)?;
        let Some((insert, _)) = &self.writes else {
            return Err(self.read_only());
        };
        let insert = insert.clone();
        self.make_room(data.len(), false)?;
        self.link.op(data.len() as u64, |c| {
            c.exec_drop(&insert, (key as i64, data))
        })
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        let Some((_, modify)) = &self.writes else {
            return Err(self.read_only());
        };
        let Some((_, delete)) = modify else {
            return Err(self.no_modify());
        };
        let delete = delete.clone();
        let changed = self.link.op(0, |c| {
            c.exec_drop(&delete, (key as i64,))?;
            Ok(c.affected_rows())
        })?;
        if changed == 0 {
            return Err(missing_key(key, &self.display));
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<()> {
        if !self.options.per_op_transaction && !self.in_transaction {
            self.link.op(0, |c| c.query_drop("START TRANSACTION"))?;
            self.in_transaction = true;
            self.pending = 0;
            self.batch_bytes = 0;
            self.split = false;
        }
        Ok(())
    }

    /// Within the timeout and a second more per 10 MB the batch wrote.
    fn commit(&mut self) -> Result<()> {
        if self.in_transaction {
            self.link.op(self.batch_bytes, |c| c.query_drop("COMMIT"))?;
            self.in_transaction = false;
        }
        Ok(())
    }

    /// A failed statement outside a transaction committed nothing; a batch
    /// a Galera node committed in parts (`make_room`) keeps those parts. On
    /// a connection already lost it fails at once (the server rolls back a
    /// transaction whose connection ends).
    fn rollback(&mut self) -> Result<bool> {
        if self.in_transaction {
            self.in_transaction = false;
            self.link.op(0, |c| c.query_drop("ROLLBACK"))?;
            return Ok(!self.split);
        }
        Ok(true)
    }
}

impl Serving for MysqlSession<'_> {}

impl Snapshots for MysqlSession<'_> {}

/// How writes reach the disk on this server, in words: the engine's
/// statement, the transactions, what a commit waits for (from the
/// settings read back) and, on a Galera node, the replication.
fn describe_writes(
    engine: MysqlEngine,
    variables: &[(String, String)],
    galera: Option<&Galera>,
    per_op_transaction: bool,
) -> String {
    let get = |name: &str| {
        variables
            .iter()
            .find(|(k, _)| k == name)
            .map_or("?", |(_, v)| v.as_str())
    };
    let product = if get("version").contains("MariaDB") {
        "MariaDB"
    } else {
        "MySQL"
    };
    let statement = if engine.can_modify() {
        "UPDATE of a LONGBLOB row"
    } else {
        "INSERT of a LONGBLOB row (no UPDATE)"
    };
    let transactions = if per_op_transaction {
        "one transaction per write"
    } else {
        "one transaction for all writes"
    };
    let durability = match engine {
        MysqlEngine::Innodb => {
            let flush = get("innodb_flush_log_at_trx_commit");
            let binlog = if get("log_bin").eq_ignore_ascii_case("ON") {
                format!("binary log on, sync_binlog={}", get("sync_binlog"))
            } else {
                "binary log off".to_string()
            };
            format!(
                "{transactions}, innodb_flush_log_at_trx_commit={flush}: {}; {binlog}",
                flush_log_meaning(flush)
            )
        }
        MysqlEngine::Myisam => {
            "no transactions (table locks): each write is handed to the OS, not fsynced by the server".into()
        }
        MysqlEngine::Aria => {
            "no transactions: each write is its own, logged for crash recovery as the server's Aria settings say".into()
        }
        MysqlEngine::Archive => {
            "no transactions: rows are compressed into the table file, not fsynced at commit".into()
        }
    };
    let mut words = format!("{product} {} {statement}, {durability}", engine.sql_name());
    if let Some(g) = galera {
        words.push_str(&format!(
            "; Galera: each commit is replicated to the cluster ({} nodes) and certified before it returns ({})",
            g.cluster_size(),
            g.limit.batches()
        ));
    }
    words
}
