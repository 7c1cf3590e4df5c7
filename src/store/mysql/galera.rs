//! A mysql:// server that is one node of a MariaDB Galera cluster (wsrep).
//!
//! Three things differ from a lone server, and the store must know them:
//! - Galera replicates InnoDB tables only: rows written to a MyISAM, Aria or
//!   ARCHIVE table stay on the node that took them (the table is created
//!   everywhere, its rows are not), so a benchmark of such a table measures
//!   no cluster at all. The store refuses those engines on a Galera node.
//! - A transaction is certified and replicated as one write set, at most
//!   wsrep_max_ws_size bytes (2 GB at most). With binlog_row_image=FULL (the
//!   default) an UPDATE's write set carries the row before and after, so a
//!   blob larger than half that limit can be inserted but never updated;
//!   and a batch of writes larger than the limit (an `init` of more than
//!   2 GB is one transaction elsewhere) is committed in parts.
//! - The wsrep settings that shape a result (cluster size, write-set limits,
//!   sync wait, applier threads, the provider's version) belong in it.

use mysql::Conn;
use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::target::MysqlEngine;
use std::path::Path;

/// Server variables recorded in a Galera node's results (those a server
/// lacks, e.g. wsrep_applier_threads before MariaDB 10.6's rename took
/// effect, are simply absent).
const VARIABLES: &[&str] = &[
    "wsrep_on",
    "wsrep_max_ws_size",
    "wsrep_max_ws_rows",
    "wsrep_sync_wait",
    "wsrep_slave_threads",
    "wsrep_applier_threads",
    "wsrep_sst_method",
    "wsrep_cluster_name",
    "wsrep_node_name",
    "binlog_format",
    "binlog_row_image",
];

/// Status values recorded beside them: what the cluster is right now.
const STATUS: &[&str] = &[
    "wsrep_provider_version",
    "wsrep_cluster_size",
    "wsrep_cluster_status",
    "wsrep_local_state_comment",
];

/// Bytes of a write set beside the blob: the row event's headers, the id,
/// the certification keys. (Measured: a 3,145,000-byte insert fits a
/// 3,145,728-byte limit; this leaves several times that room.)
const WS_ROOM: u64 = 4096;

/// What a Galera node reported about itself.
#[derive(Debug, Clone)]
pub(crate) struct Galera {
    /// Every variable and status value of [`VARIABLES`] and [`STATUS`] the
    /// server has, for the store's info.
    pub settings: Vec<(String, String)>,
    /// The write-set limit every write is checked against.
    pub limit: WriteSetLimit,
}

/// The largest write set a transaction may replicate, and whether an
/// UPDATE's carries the whole row twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WriteSetLimit {
    /// wsrep_max_ws_size, in bytes.
    pub max_ws_size: u64,
    /// binlog_row_image=FULL: an UPDATE's write set holds the row before and after.
    pub full_image: bool,
}

impl Galera {
    /// The server's Galera settings, or None when it does not replicate
    /// with wsrep (wsrep_on OFF, or no such variable: MySQL, or MariaDB
    /// built without it).
    pub fn detect(conn: &mut Conn) -> mysql::Result<Option<Galera>> {
        let variables: Vec<(String, String)> = conn.query(format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
            quoted(VARIABLES)
        ))?;
        if !is_on(&variables) {
            return Ok(None);
        }
        let status: Vec<(String, String)> = conn.query(format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            quoted(STATUS)
        ))?;
        Ok(Some(Galera::from_rows(variables, status)))
    }

    /// From the rows of SHOW VARIABLES and SHOW STATUS, in the order of
    /// [`VARIABLES`] then [`STATUS`] (so results list them alike).
    fn from_rows(variables: Vec<(String, String)>, status: Vec<(String, String)>) -> Galera {
        let get = |name: &str| {
            variables
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let limit = WriteSetLimit {
            // MariaDB's default and maximum: 2 GB - 1.
            max_ws_size: get("wsrep_max_ws_size")
                .and_then(|v| v.parse().ok())
                .unwrap_or(2_147_483_647),
            full_image: get("binlog_row_image").is_none_or(|v| v.eq_ignore_ascii_case("FULL")),
        };
        let mut settings = Vec::new();
        for name in VARIABLES.iter().chain(STATUS) {
            if let Some((_, v)) = variables
                .iter()
                .chain(&status)
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
            {
                settings.push((name.to_string(), v.clone()));
            }
        }
        Galera { settings, limit }
    }

    /// The cluster's size as the node reported it, for messages.
    pub fn cluster_size(&self) -> String {
        self.settings
            .iter()
            .find(|(k, _)| k == "wsrep_cluster_size")
            .map_or_else(|| "?".into(), |(_, v)| v.clone())
    }

    /// Refuses a table in an engine Galera does not replicate.
    pub fn refuse_engine(&self, engine: MysqlEngine, display: &Path) -> Result<()> {
        if engine == MysqlEngine::Innodb {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{}: this server is a Galera node (wsrep_on, a cluster of {}) and Galera replicates \
             InnoDB tables only: rows written to {} tables would stay on this node; use ?engine=innodb",
            display.display(),
            self.cluster_size(),
            engine.sql_name()
        )))
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(",")
}

fn is_on(variables: &[(String, String)]) -> bool {
    variables
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("wsrep_on") && v.eq_ignore_ascii_case("ON"))
}

impl WriteSetLimit {
    /// The largest blob an INSERT's write set holds.
    pub fn insert_bytes(self) -> u64 {
        self.max_ws_size.saturating_sub(WS_ROOM)
    }

    /// The largest blob an UPDATE's write set holds: half as much when it
    /// carries the row before and after.
    pub fn update_bytes(self) -> u64 {
        if self.full_image {
            self.insert_bytes() / 2
        } else {
            self.insert_bytes()
        }
    }

    /// The write-set bytes one write of `len` bytes adds to its transaction.
    /// (A DELETE's, with a full row image, holds the row it removes, whose
    /// size the store does not know: deletes are not counted.)
    pub fn cost(self, len: usize, update: bool) -> u64 {
        let len = len as u64;
        WS_ROOM
            + if update && self.full_image {
                2 * len
            } else {
                len
            }
    }

    /// How a batch of writes becomes transactions on this node, in words.
    pub fn batches(self) -> String {
        format!(
            "a batch of writes is one transaction, committed in parts when it would pass one \
             write set (wsrep_max_ws_size {} bytes{})",
            self.max_ws_size,
            if self.full_image {
                ", an UPDATE counting its blob twice"
            } else {
                ""
            }
        )
    }

    /// Why a dataset's values are limited to [`update_bytes`](Self::update_bytes),
    /// in words (a dataset is made to be updated by later runs).
    pub fn why(self) -> String {
        format!(
            "the Galera cluster's wsrep_max_ws_size is {}{}; raise it with SET GLOBAL \
             wsrep_max_ws_size=N on every node (at most 2147483647)",
            self.max_ws_size,
            if self.full_image {
                " and an UPDATE's write set carries the row before and after (binlog_row_image=FULL)"
            } else {
                ""
            }
        )
    }

    /// Refuses, before sending it, a write whose write set would exceed
    /// the limit (the server would refuse it with "Maximum writeset size
    /// exceeded" after the blob crossed the wire).
    pub fn check(self, len: usize, update: bool, display: &Path) -> Result<()> {
        let limit = if update {
            self.update_bytes()
        } else {
            self.insert_bytes()
        };
        if len as u64 <= limit {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{}: a blob of {len} bytes does not fit one Galera write set{}: {}",
            display.display(),
            if update && self.full_image {
                " as an UPDATE"
            } else {
                ""
            },
            self.why()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// What MariaDB 10.11 with galera-4 26.4.23 reports (scripts/start-galera.sh).
    fn node() -> Galera {
        Galera::from_rows(
            rows(&[
                ("binlog_format", "ROW"),
                ("binlog_row_image", "FULL"),
                ("wsrep_max_ws_rows", "0"),
                ("wsrep_max_ws_size", "3145728"),
                ("wsrep_on", "ON"),
                ("wsrep_slave_threads", "1"),
                ("wsrep_sst_method", "rsync"),
                ("wsrep_sync_wait", "0"),
            ]),
            rows(&[
                ("wsrep_cluster_size", "3"),
                ("wsrep_provider_version", "4.23(rXXXX)"),
            ]),
        )
    }

    #[test]
    fn wsrep_on_is_what_makes_a_galera_node() {
        assert!(is_on(&rows(&[("wsrep_on", "ON")])));
        // Debian's MariaDB has wsrep built in, off; MySQL has no such variable.
        assert!(!is_on(&rows(&[("wsrep_on", "OFF")])));
        assert!(!is_on(&[]));
    }

    #[test]
    fn settings_keep_the_documented_order_and_only_what_the_server_has() {
        let g = node();
        let names: Vec<&str> = g.settings.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "wsrep_on",
                "wsrep_max_ws_size",
                "wsrep_max_ws_rows",
                "wsrep_sync_wait",
                "wsrep_slave_threads",
                "wsrep_sst_method",
                "binlog_format",
                "binlog_row_image",
                "wsrep_provider_version",
                "wsrep_cluster_size",
            ]
        );
        assert_eq!(g.cluster_size(), "3");
    }

    #[test]
    fn an_update_of_a_full_row_image_takes_half_the_write_set() {
        // Measured on the cluster: with wsrep_max_ws_size=3145728 a 3.1 MB
        // INSERT replicates and a 2 MB UPDATE is "Maximum writeset size exceeded".
        let limit = node().limit;
        assert_eq!(limit.insert_bytes(), 3145728 - WS_ROOM);
        assert_eq!(limit.update_bytes(), (3145728 - WS_ROOM) / 2);
        let d = Path::new("mysql://root@127.0.0.1/blobbench");
        assert!(limit.check(3_100_000, false, d).is_ok());
        let err = limit.check(2_000_000, true, d).unwrap_err().to_string();
        assert!(err.contains("wsrep_max_ws_size is 3145728"), "{err}");
        assert!(err.contains("binlog_row_image=FULL"), "{err}");
        assert_eq!(err.lines().count(), 1);
        assert_eq!(limit.cost(1000, true), WS_ROOM + 2000);
        assert_eq!(limit.cost(1000, false), WS_ROOM + 1000);
        let minimal = WriteSetLimit {
            full_image: false,
            ..limit
        };
        assert_eq!(minimal.update_bytes(), minimal.insert_bytes());
        assert_eq!(minimal.cost(1000, true), WS_ROOM + 1000);
    }

    #[test]
    fn only_innodb_is_taken_on_a_galera_node() {
        let g = node();
        let d = Path::new("mysql://root@127.0.0.1/blobbench");
        assert!(g.refuse_engine(MysqlEngine::Innodb, d).is_ok());
        for engine in [MysqlEngine::Myisam, MysqlEngine::Aria, MysqlEngine::Archive] {
            let err = g.refuse_engine(engine, d).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::Usage(_)));
            assert!(text.contains(engine.sql_name()), "{text}");
            assert!(text.contains("?engine=innodb"), "{text}");
            assert!(text.contains("a cluster of 3"), "{text}");
        }
    }
}
