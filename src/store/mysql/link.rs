//! One connection to a MariaDB / MySQL server, or to the first node of a
//! Galera cluster that answers, with every wait bounded and every error
//! classified.
//!
//! - Connecting tries the target's nodes in order (one node unless it
//!   names several), the one that answered last in this process first:
//!   the TCP connection, the server's greeting and login each within
//!   `connect_timeout`, and a Galera node must be ready for clients
//!   (`wsrep_ready`), else the next node is tried. So a client that reopens
//!   its store after its node died lands on another node, and a node that
//!   froze costs its wait once, not at every connection.
//! - Each statement then has its own bound on the socket (SO_RCVTIMEO and
//!   SO_SNDTIMEO: no byte read or written within it is a timeout):
//!   `timeout` for an operation, a second more per 10 MB it carries, and
//!   at least ten minutes for the statements around the timed work.
//! - A lost connection or a timeout leaves the link broken: every later
//!   statement fails at once, without waiting again, until the store is
//!   opened anew.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};

use crate::error::{Error, FailureClass, Result};
use crate::target::{ServerTimeouts, ServerUrl, seconds, split_node};

/// MariaDB's ER_UNKNOWN_COM_ERROR, which a Galera node that is not part of
/// the primary component, or not synced, answers to every statement
/// ("WSREP has not yet prepared node for application use").
const ER_WSREP_NOT_READY: u16 = 1047;
/// "Server shutdown in progress", "Connection was killed": the server
/// ends this connection.
const ER_CONNECTION_ENDS: &[u16] = &[1053, 1927];

/// A connection to one node and the bounds its statements run under.
pub(crate) struct Link {
    conn: Conn,
    /// The node it is connected to (`host:port`).
    pub node: String,
    /// Nodes tried first that did not answer, each with why.
    pub skipped: Vec<String>,
    timeouts: ServerTimeouts,
    display: PathBuf,
    /// The socket's bound now (set only when a statement needs another).
    bound: Duration,
    /// Why the connection is no longer usable, once it is not.
    broken: Option<String>,
}

/// For each list of nodes, the node of it that answered last in this
/// process.
static ANSWERED: Mutex<BTreeMap<Vec<String>, String>> = Mutex::new(BTreeMap::new());

/// The nodes to try, in order: the target's list (the node of it that
/// answered last first), or the one its URL names.
fn candidates(server: &ServerUrl) -> Result<Vec<String>> {
    if !server.nodes.is_empty() {
        let answered = ANSWERED.lock().unwrap_or_else(|e| e.into_inner());
        return Ok(answered_first(&server.nodes, answered.get(&server.nodes)));
    }
    let opts = Opts::from_url(&server.connect).map_err(|e| Error::connect(&server.display, e))?;
    let host = opts.get_ip_or_hostname();
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Ok(vec![format!("{host}:{}", opts.get_tcp_port())])
}

/// `nodes` in their order, but `answered` (one of them) first.
fn answered_first(nodes: &[String], answered: Option<&String>) -> Vec<String> {
    let first = answered.filter(|a| nodes.contains(a));
    first
        .into_iter()
        .chain(nodes.iter().filter(|n| Some(*n) != first))
        .cloned()
        .collect()
}

/// Remembers that `node` of the target's list answered.
fn remember_answered(server: &ServerUrl, node: &str) {
    if server.nodes.len() > 1 {
        let mut answered = ANSWERED.lock().unwrap_or_else(|e| e.into_inner());
        answered.insert(server.nodes.clone(), node.to_string());
    }
}

/// The client's options for `node`, every wait of the connection bounded
/// by `bound`.
pub(crate) fn node_opts(server: &ServerUrl, node: &str, bound: Duration) -> Result<OptsBuilder> {
    let opts = Opts::from_url(&server.connect).map_err(|e| Error::connect(&server.display, e))?;
    let (host, port) = split_node(node);
    // TCP to the address given, even on 127.0.0.1: by default the client
    // would switch to the server's Unix socket, a different transport from
    // the one named.
    Ok(OptsBuilder::from_opts(opts)
        .ip_or_hostname(Some(host))
        .tcp_port(port)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(bound))
        .read_timeout(Some(bound))
        .write_timeout(Some(bound)))
}

/// Why a Galera node cannot take clients (not ready), or None when it can
/// or is no Galera node.
pub(crate) fn not_ready(conn: &mut Conn) -> mysql::Result<Option<String>> {
    let on: Option<(String, String)> = conn.query_first("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")?;
    if !on.is_some_and(|(_, v)| v.eq_ignore_ascii_case("ON")) {
        return Ok(None);
    }
    let status: Vec<(String, String)> = conn.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment')",
    )?;
    let get = |name: &str| {
        status
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or("?", |(_, v)| v.as_str())
            .to_string()
    };
    let ready = get("wsrep_ready");
    Ok((!ready.eq_ignore_ascii_case("ON")).then(|| {
        format!(
            "a Galera node not ready for clients (wsrep_ready {ready}, state {})",
            get("wsrep_local_state_comment")
        )
    }))
}

impl Link {
    /// Connects to the first of the target's nodes that answers and is
    /// ready; a Connect error naming every node and why when none is.
    pub(crate) fn open(server: &ServerUrl) -> Result<Link> {
        let timeouts = server.timeouts;
        let mut skipped = Vec::new();
        for node in candidates(server)? {
            match Self::try_node(server, &node) {
                Ok(conn) => {
                    remember_answered(server, &node);
                    let mut link = Link {
                        conn,
                        node,
                        skipped,
                        timeouts,
                        display: server.display.clone(),
                        bound: timeouts.connect_timeout(),
                        broken: None,
                    };
                    link.set_bound(timeouts.timeout())
                        .map_err(|e| Error::connect(&server.display, e))?;
                    return Ok(link);
                }
                Err(why) => skipped.push(format!("{node}: {why}")),
            }
        }
        let what = if skipped.len() == 1 {
            skipped.remove(0)
        } else {
            format!("no node answered ({})", skipped.join("; "))
        };
        Err(Error::connect(
            &server.display,
            format!(
                "{what} (connect_timeout={})",
                seconds(timeouts.connect_timeout())
            ),
        ))
    }

    /// A connection to `node` that is ready for clients, or why not.
    fn try_node(server: &ServerUrl, node: &str) -> std::result::Result<Conn, String> {
        let bound = server.timeouts.connect_timeout();
        let opts = node_opts(server, node, bound).map_err(|e| e.to_string())?;
        let mut conn = Conn::new(opts).map_err(|e| connect_words(&e, bound))?;
        match not_ready(&mut conn) {
            Ok(None) => Ok(conn),
            Ok(Some(why)) => Err(why),
            Err(e) => Err(connect_words(&e, bound)),
        }
    }

    /// The socket's bound for the next statements (both directions).
    fn set_bound(&mut self, bound: Duration) -> std::io::Result<()> {
        if bound == self.bound {
            return Ok(());
        }
        // SAFETY: the descriptor is the connection's socket, open for as
        // long as `self.conn` lives, which outlives this borrow; SockRef
        // never closes it.
        let fd = unsafe { BorrowedFd::borrow_raw(self.conn.as_raw_fd()) };
        let socket = socket2::SockRef::from(&fd);
        socket.set_read_timeout(Some(bound))?;
        socket.set_write_timeout(Some(bound))?;
        self.bound = bound;
        Ok(())
    }

    /// Runs `statement` within `bound`, its error classified; a lost
    /// connection or a timeout breaks the link for every later statement.
    pub(crate) fn within<T>(
        &mut self,
        bound: Duration,
        statement: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T> {
        if let Some(why) = &self.broken {
            return Err(Error::failed(
                &self.display,
                FailureClass::Connection,
                format!(
                    "the connection to {} was lost earlier ({why}); open the store again",
                    self.node
                ),
            ));
        }
        if let Err(e) = self.set_bound(bound) {
            return Err(self.fail(FailureClass::Connection, format!("node {}: {e}", self.node)));
        }
        statement(&mut self.conn).map_err(|e| self.classify(e, bound))
    }

    /// An operation's statement: within `timeout`, a second more per 10 MB
    /// it carries.
    pub(crate) fn op<T>(
        &mut self,
        bytes: u64,
        statement: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T> {
        self.within(self.timeouts.for_bytes(bytes), statement)
    }

    /// A statement around the timed work (DDL, counts, ANALYZE).
    pub(crate) fn admin<T>(
        &mut self,
        statement: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T> {
        self.within(self.timeouts.admin(), statement)
    }

    /// The timeouts it runs under.
    pub(crate) fn timeouts(&self) -> ServerTimeouts {
        self.timeouts
    }

    fn fail(&mut self, class: FailureClass, message: String) -> Error {
        if matches!(class, FailureClass::Timeout | FailureClass::Connection) {
            self.broken = Some(message.clone());
        }
        Error::failed(&self.display, class, message)
    }

    /// The error a failed statement is: the server's own refusals stay
    /// server errors (a deadlock, a lock wait or a Galera certification
    /// conflict stays busy: `Error::is_busy`); a lost connection, a
    /// timeout and a Galera node that left its cluster are classified.
    fn classify(&mut self, e: mysql::Error, bound: Duration) -> Error {
        use std::io::ErrorKind::{TimedOut, WouldBlock};
        let node = self.node.clone();
        match &e {
            // Connection, not Conflict: the node itself cannot take
            // statements until it rejoins its primary component, so the
            // worker must connect again (to another node), not retry here.
            mysql::Error::MySqlError(m)
                if m.code == ER_WSREP_NOT_READY || m.message.contains("WSREP") =>
            {
                self.fail(
                    FailureClass::Connection,
                    format!(
                        "node {node} cannot take statements: {} (error {}): it left the cluster's primary component or is not synced; a new connection tries the other nodes",
                        m.message, m.code
                    ),
                )
            }
            mysql::Error::MySqlError(m) if ER_CONNECTION_ENDS.contains(&m.code) => self.fail(
                FailureClass::Connection,
                format!("node {node}: {} (error {})", m.message, m.code),
            ),
            mysql::Error::MySqlError(_) => Error::server(&self.display, e),
            _ if matches!(io_kind(&e), Some(WouldBlock | TimedOut)) => {
                let message = timeout_words(&node, bound, self.timeouts);
                self.fail(FailureClass::Timeout, message)
            }
            mysql::Error::IoError(io) => self.fail(
                FailureClass::Connection,
                format!("node {node}: {io} (the connection was lost)"),
            ),
            mysql::Error::CodecError(c) => self.fail(
                FailureClass::Connection,
                format!("node {node}: {c} (the connection was lost)"),
            ),
            mysql::Error::DriverError(
                mysql::DriverError::ConnectTimeout | mysql::DriverError::CouldNotConnect(_),
            ) => self.fail(FailureClass::Connection, format!("node {node}: {}", words(&e))),
            _ => self.fail(FailureClass::Other, format!("node {node}: {}", words(&e))),
        }
    }
}

/// "timeout after 10 s: no answer from 127.0.0.1:3306 (timeout=10 s)".
fn timeout_words(node: &str, bound: Duration, timeouts: ServerTimeouts) -> String {
    let extra = if bound > timeouts.timeout() && bound < timeouts.admin() {
        ", and a second more per 10 MB the statement carries"
    } else {
        ""
    };
    format!(
        "timeout after {}: no answer from {node} (timeout={}{extra})",
        seconds(bound),
        seconds(timeouts.timeout())
    )
}

/// Why a connection attempt failed, in words (a timeout said as one).
fn connect_words(e: &mysql::Error, bound: Duration) -> String {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    match e {
        _ if matches!(io_kind(e), Some(WouldBlock | TimedOut)) => {
            format!("no answer within {}", seconds(bound))
        }
        mysql::Error::DriverError(mysql::DriverError::ConnectTimeout) => {
            format!("no connection within {}", seconds(bound))
        }
        _ => words(e),
    }
}

/// The driver's error in words: its own message, without the variant's
/// name the driver wraps it in (`DriverError { Could not connect ... }`).
fn words(e: &mysql::Error) -> String {
    match e {
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::UrlError(u) => u.to_string(),
        _ => e.to_string(),
    }
}

/// The kind of the I/O error under `e`, bare or inside the packet codec's
/// (a socket's timeout is one or the other).
fn io_kind(e: &mysql::Error) -> Option<std::io::ErrorKind> {
    match e {
        mysql::Error::IoError(io) => Some(io.kind()),
        mysql::Error::CodecError(c) => std::error::Error::source(c)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_node_that_answered_last_is_tried_first_and_the_rest_in_order() {
        let nodes = list(&["a:1", "b:1", "c:1"]);
        assert_eq!(answered_first(&nodes, None), nodes);
        assert_eq!(
            answered_first(&nodes, Some(&"b:1".to_string())),
            list(&["b:1", "a:1", "c:1"])
        );
        assert_eq!(
            answered_first(&nodes, Some(&"c:1".to_string())),
            list(&["c:1", "a:1", "b:1"])
        );
        // A node of another list is no reason to reorder this one.
        assert_eq!(answered_first(&nodes, Some(&"z:1".to_string())), nodes);
    }
}
