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

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Statement};
use serde_json::{Map, Value};

use super::{Access, CacheControl, Catalog, Session, SessionOptions, Store, StoreInfo};
use crate::dataset::Manifest;
use crate::error::{Error, Result};
use crate::target::MysqlEngine;

mod galera;

use galera::{Galera, WriteSetLimit};

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
    conn: RefCell<Conn>,
    display: PathBuf,
    engine: MysqlEngine,
    table: String,
    access: Access,
    variables: Vec<(String, String)>,
    max_packet: u64,
    /// The server's Galera settings, when it is a Galera node.
    galera: Option<Galera>,
}

fn connect(url: &str, display: &Path) -> Result<Conn> {
    let opts = Opts::from_url(url).map_err(|e| Error::connect(display, e))?;
    // TCP to the address given, even on 127.0.0.1: by default the client
    // would switch to the server's Unix socket, a different transport from
    // the one named.
    let opts = OptsBuilder::from_opts(opts).prefer_socket(false);
    Conn::new(opts).map_err(|e| Error::connect(display, e))
}

/// The largest blob the server at `url` takes in one write, and why: its
/// max_allowed_packet, less room for the statement and the packet header
/// (as [`MysqlSession`] checks each write), and on a Galera node what one
/// UPDATE's write set holds, when that is less. Asked of the server before
/// a table is made, so a dataset it cannot hold is refused before any write.
pub fn value_limit(url: &str, display: &Path) -> Result<(u64, String)> {
    let mut conn = connect(url, display)?;
    let err = |e| Error::server(display, e);
    let packet: Option<u64> = conn
        .query_first("SELECT @@max_allowed_packet")
        .map_err(err)?;
    let packet = packet.unwrap_or(16 << 20);
    let by_packet = (
        packet.saturating_sub(PACKET_ROOM),
        format!(
            "the server's max_allowed_packet is {packet}; raise it with SET GLOBAL max_allowed_packet=N"
        ),
    );
    Ok(match Galera::detect(&mut conn).map_err(err)? {
        Some(g) if g.limit.update_bytes() < by_packet.0 => (g.limit.update_bytes(), g.limit.why()),
        _ => by_packet,
    })
}

/// Bytes of a write's packet beside the blob: the statement, the id and the
/// packet header.
const PACKET_ROOM: u64 = 1024;

fn read_variables(conn: &mut Conn) -> mysql::Result<Vec<(String, String)>> {
    let list = VARIABLES
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(",");
    conn.query(format!("SHOW VARIABLES WHERE Variable_name IN ({list})"))
}

fn table_exists(conn: &mut Conn, table: &str) -> mysql::Result<bool> {
    let n: Option<u64> = conn.exec_first(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
        (table,),
    )?;
    Ok(n.unwrap_or(0) > 0)
}

impl MysqlStore {
    fn finish(
        mut conn: Conn,
        display: &Path,
        engine: MysqlEngine,
        table: &str,
        access: Access,
        galera: Option<Galera>,
    ) -> Result<Self> {
        let err = |e| Error::server(display, e);
        let variables = read_variables(&mut conn).map_err(err)?;
        let max_packet = variables
            .iter()
            .find(|(k, _)| k == "max_allowed_packet")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(16 << 20);
        if access == Access::ReadOnly {
            conn.query_drop("SET SESSION TRANSACTION READ ONLY")
                .map_err(err)?;
        }
        Ok(MysqlStore {
            conn: RefCell::new(conn),
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
    fn galera(conn: &mut Conn, display: &Path, engine: MysqlEngine) -> Result<Option<Galera>> {
        let galera = Galera::detect(conn).map_err(|e| Error::server(display, e))?;
        if let Some(g) = &galera {
            g.refuse_engine(engine, display)?;
        }
        Ok(galera)
    }

    /// Connects to `url` and opens the existing `table`.
    pub fn open(
        url: &str,
        display: &Path,
        engine: MysqlEngine,
        table: &str,
        access: Access,
    ) -> Result<Self> {
        let mut conn = connect(url, display)?;
        let galera = Self::galera(&mut conn, display, engine)?;
        if !table_exists(&mut conn, table).map_err(|e| Error::server(display, e))? {
            return Err(Error::usage(format!(
                "{}: table {table} does not exist; create it with `blobbench init` on this target",
                display.display()
            )));
        }
        Self::finish(conn, display, engine, table, access, galera)
    }

    /// Creates the table afresh, refusing to drop one blobbench did not make.
    pub fn create(
        url: &str,
        display: &Path,
        engine: MysqlEngine,
        table: &str,
        manifest: &Manifest,
    ) -> Result<Self> {
        let mut conn = connect(url, display)?;
        let galera = Self::galera(&mut conn, display, engine)?;
        let err = |e| Error::server(display, e);
        conn.query_drop(
            "CREATE TABLE IF NOT EXISTS blobbench_meta (tbl VARCHAR(64), name VARCHAR(64), value LONGTEXT, \
             PRIMARY KEY (tbl, name)) ENGINE=InnoDB",
        )
        .map_err(err)?;
        if table_exists(&mut conn, table).map_err(err)? {
            let ours: Option<u64> = conn
                .exec_first(
                    "SELECT 1 FROM blobbench_meta WHERE tbl = ? AND name = 'manifest'",
                    (table,),
                )
                .map_err(err)?;
            if ours.is_none() {
                return Err(Error::usage(format!(
                    "{}: table {table} exists and was not made by blobbench; name another with ?table=NAME",
                    display.display()
                )));
            }
            conn.query_drop(format!("DROP TABLE {table}"))
                .map_err(err)?;
        }
        let id = if engine == MysqlEngine::Archive {
            "id BIGINT NOT NULL AUTO_INCREMENT"
        } else {
            "id BIGINT NOT NULL"
        };
        conn.query_drop(format!(
            "CREATE TABLE {table} ({id}, largedata LONGBLOB, PRIMARY KEY (id)) ENGINE={}",
            engine.sql_name()
        ))
        .map_err(|e| {
            // ER_UNKNOWN_STORAGE_ENGINE, the same number in MySQL and MariaDB.
            if matches!(&e, mysql::Error::MySqlError(m) if m.code == 1286) {
                Error::usage(format!(
                    "{}: the server has no {} engine (MariaDB loads ARCHIVE with --plugin-load-add=ha_archive.so)",
                    display.display(),
                    engine.sql_name()
                ))
            } else {
                Error::server(display, e)
            }
        })?;
        let actual: Option<String> = conn
            .exec_first(
                "SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
                (table,),
            )
            .map_err(err)?;
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
        conn.exec_drop(
            "REPLACE INTO blobbench_meta (tbl, name, value) VALUES (?, 'manifest', ?)",
            (table, manifest.to_json()),
        )
        .map_err(err)?;
        Self::finish(conn, display, engine, table, Access::ReadWrite, galera)
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
        let conn = self.conn.get_mut();
        let err = |e| Error::server(&self.display, e);
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
            match conn.query_drop(format!("SET GLOBAL {NAME} = {want}")) {
                Ok(()) => {}
                // No SUPER / SYSTEM_VARIABLES_ADMIN privilege: say so, measure as it is.
                Err(mysql::Error::MySqlError(m)) if [1227, 1044, 1045, 1142].contains(&m.code) => {
                    note = format!(" (asked for {want}, could not set it: {})", m.message)
                }
                Err(e) => return Err(err(e)),
            }
        }
        self.variables = read_variables(conn).map_err(err)?;
        let now = value(&self.variables);
        Ok(format!("{NAME}={now}: {}{note}", flush_log_meaning(&now)))
    }
}

impl Store for MysqlStore {
    fn info(&self) -> StoreInfo {
        let mut settings = Map::new();
        settings.insert("engine".into(), Value::from(self.engine.sql_name()));
        settings.insert("table".into(), Value::from(self.table.clone()));
        settings.insert("transport".into(), Value::from("tcp, no TLS"));
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

    /// The same words as every result so far has carried for servers.
    fn describe_writes(&self, options: &SessionOptions) -> String {
        super::sqlite::describe_sql_writes(&self.info().settings, options)
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

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        let display = self.display.clone();
        self.conn
            .get_mut()
            .exec_drop(
                "UPDATE blobbench_meta SET value = ? WHERE tbl = ? AND name = 'manifest'",
                (manifest.to_json(), &self.table),
            )
            .map_err(|e| Error::server(&display, e))
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let conn = self.conn.get_mut();
        let err = |e| Error::server(&self.display, e);
        let manifest = conn
            .exec_first::<String, _, _>(
                "SELECT value FROM blobbench_meta WHERE tbl = ? AND name = 'manifest'",
                (&self.table,),
            )
            .ok()
            .flatten()
            .and_then(|v| Manifest::parse(&v));
        if let Some(m) = &manifest {
            m.require_complete(&self.display.display().to_string())?;
        }
        let row: Option<(Option<i64>, Option<i64>, u64)> = conn
            .query_first(format!(
                "SELECT min(id), max(id), count(*) FROM {}",
                self.table
            ))
            .map_err(err)?;
        let Some((Some(min), Some(max), count)) = row else {
            return Err(Error::usage(format!(
                "{}: table {} is empty",
                self.display.display(),
                self.table
            )));
        };
        let min = super::first_key_from_one(&self.display, min)? as i64;
        let manifest = manifest
            .filter(|m| m.first_key == min as u64 && m.last_key == max as u64 && m.count == count);
        Ok(Catalog::found(min as u64, max as u64, count, manifest))
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let t = &self.table;
        let display = self.display.clone();
        let err = |e| Error::server(&display, e);
        let conn = self.conn.get_mut();
        let read = conn
            .prep(format!("SELECT largedata FROM {t} WHERE id = ?"))
            .map_err(err)?;
        let writes = if self.access == Access::ReadWrite {
            let insert = conn
                .prep(format!("INSERT INTO {t} (id, largedata) VALUES (?, ?)"))
                .map_err(err)?;
            let modify = if self.engine.can_modify() {
                Some((
                    conn.prep(format!("UPDATE {t} SET largedata = ? WHERE id = ?"))
                        .map_err(err)?,
                    conn.prep(format!("DELETE FROM {t} WHERE id = ?"))
                        .map_err(err)?,
                ))
            } else {
                None
            };
            Some((insert, modify))
        } else {
            None
        };
        Ok(Box::new(MysqlSession {
            conn,
            display: self.display.clone(),
            engine: self.engine,
            options,
            read,
            writes,
            max_packet: self.max_packet,
            write_set: self.galera.as_ref().map(|g| g.limit),
            in_transaction: false,
            pending: 0,
            split: false,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }

    fn space_used(&self) -> Result<u64> {
        let mut conn = self.conn.borrow_mut();
        let err = |e| Error::server(&self.display, e);
        // Fresh statistics first: InnoDB's are sampled and may lag.
        conn.query_drop(format!("ANALYZE TABLE {}", self.table))
            .map_err(err)?;
        let n: Option<u64> = conn
            .exec_first(
                "SELECT data_length + index_length FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = ?",
                (&self.table,),
            )
            .map_err(err)?;
        Ok(n.unwrap_or(0))
    }
}

type Writes = (Statement, Option<(Statement, Statement)>);

pub struct MysqlSession<'a> {
    conn: &'a mut Conn,
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
        let Some(limit) = self.write_set else {
            return Ok(());
        };
        if !self.in_transaction {
            return Ok(());
        }
        let cost = limit.cost(len, update);
        if self.pending > 0 && self.pending + cost > limit.max_ws_size {
            self.conn
                .query_drop("COMMIT")
                .and_then(|()| self.conn.query_drop("START TRANSACTION"))
                .map_err(|e| Error::server(&self.display, e))?;
            self.pending = 0;
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

impl Session for MysqlSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let row: Option<Option<Vec<u8>>> = self
            .conn
            .exec_first(&self.read, (key as i64,))
            .map_err(|e| Error::server(&self.display, e))?;
        match row {
            Some(data) => {
                sink(data.as_deref().unwrap_or_default());
                Ok(())
            }
            None => Err(super::missing_key(key, &self.display)),
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
        self.conn
            .exec_drop(&update, (data, key as i64))
            .map_err(|e| Error::server(&self.display, e))?;
        if self.conn.affected_rows() == 0 {
            return Err(super::missing_key(key, &self.display));
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
        self.conn
            .exec_drop(&insert, (key as i64, data))
            .map_err(|e| Error::server(&self.display, e))
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        let Some((_, modify)) = &self.writes else {
            return Err(self.read_only());
        };
        let Some((_, delete)) = modify else {
            return Err(self.no_modify());
        };
        let delete = delete.clone();
        self.conn
            .exec_drop(&delete, (key as i64,))
            .map_err(|e| Error::server(&self.display, e))?;
        if self.conn.affected_rows() == 0 {
            return Err(super::missing_key(key, &self.display));
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<()> {
        if !self.options.per_op_transaction && !self.in_transaction {
            self.conn
                .query_drop("START TRANSACTION")
                .map_err(|e| Error::server(&self.display, e))?;
            self.in_transaction = true;
            self.pending = 0;
            self.split = false;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        if self.in_transaction {
            self.conn
                .query_drop("COMMIT")
                .map_err(|e| Error::server(&self.display, e))?;
            self.in_transaction = false;
        }
        Ok(())
    }

    /// A failed statement outside a transaction committed nothing; a batch
    /// a Galera node committed in parts (`make_room`) keeps those parts.
    fn rollback(&mut self) -> Result<bool> {
        if self.in_transaction {
            self.in_transaction = false;
            self.conn
                .query_drop("ROLLBACK")
                .map_err(|e| Error::server(&self.display, e))?;
            return Ok(!self.split);
        }
        Ok(true)
    }
}
