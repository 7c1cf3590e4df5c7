//! What a database server target carries beside its URL: the bounds of
//! every wait on the server (`timeout=`, `connect_timeout=`) and, for a
//! Galera cluster, the nodes a client may connect to
//! (`mysql://USER@H1:P,H2:P,H3:P/DB` or `?nodes=H2:P,H3:P`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An operation's bound unless `timeout=` says: no answer from the server
/// within it (no byte read, no byte written) fails the operation as a
/// timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection's bound unless `connect_timeout=` says: the TCP connection
/// and the server's greeting (and login) each within it.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The shortest bound either setting takes.
const MIN_BOUND: Duration = Duration::from_millis(100);
/// The longest bound either setting takes.
const MAX_BOUND: Duration = Duration::from_secs(3600);
/// Statements around the timed work (creating, dropping, counting and
/// analysing tables) wait at least this long: a DROP of a large table or a
/// count over a million rows is not an operation under test.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(600);
/// A statement that carries bytes (a write's blob, a COMMIT of a batch)
/// gets one more second for every this many bytes: the server answers only
/// once it has stored them all.
pub const BYTES_PER_EXTRA_SECOND: u64 = 10_000_000;

/// The bounds of every wait on a database server, as the target set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerTimeouts {
    /// `timeout=`: an operation with no answer from the server within it
    /// fails as a timeout, in milliseconds.
    pub timeout_ms: u64,
    /// `connect_timeout=`: the TCP connection, and the server's greeting
    /// and login, each within it, in milliseconds.
    pub connect_timeout_ms: u64,
}

impl Default for ServerTimeouts {
    fn default() -> Self {
        ServerTimeouts {
            timeout_ms: DEFAULT_TIMEOUT.as_millis() as u64,
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT.as_millis() as u64,
        }
    }
}

impl ServerTimeouts {
    /// Whether both are the defaults (then left out of results' JSON, so
    /// results written before they existed read back alike).
    pub fn is_default(&self) -> bool {
        *self == ServerTimeouts::default()
    }

    /// An operation's bound.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// A connection's bound.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    /// The bound of a statement that carries `bytes` to the server (a
    /// write's blob, a COMMIT's batch): the timeout and a second more for
    /// every [`BYTES_PER_EXTRA_SECOND`].
    pub fn for_bytes(&self, bytes: u64) -> Duration {
        self.timeout() + Duration::from_secs(bytes / BYTES_PER_EXTRA_SECOND)
    }

    /// The bound of a statement around the timed work: the timeout, and at
    /// least [`ADMIN_TIMEOUT`].
    pub fn admin(&self) -> Duration {
        self.timeout().max(ADMIN_TIMEOUT)
    }

    /// Sets `timeout=` or `connect_timeout=` from its text; `shown` is the
    /// target for messages (without its password).
    pub fn set(&mut self, name: &str, value: &str, shown: &str) -> Result<()> {
        let d = parse_bound(name, value, shown)?;
        let ms = d.as_millis() as u64;
        match name {
            "timeout" => self.timeout_ms = ms,
            _ => self.connect_timeout_ms = ms,
        }
        Ok(())
    }
}

/// A bound as people write it: `10s`, `500ms`, `2m`; a bare number is
/// seconds (libpq's `connect_timeout=10`).
fn parse_bound(name: &str, value: &str, shown: &str) -> Result<Duration> {
    let v = value.trim();
    let parsed = match v.parse::<u64>() {
        Ok(secs) => Ok(Duration::from_secs(secs)),
        Err(_) => v.parse::<humantime::Duration>().map(Into::into),
    };
    match parsed {
        Ok(d) if (MIN_BOUND..=MAX_BOUND).contains(&d) => Ok(d),
        _ => Err(Error::usage(format!(
            "target \"{shown}\": {name}=\"{value}\" is not a duration from 100ms to 1h; e.g. {name}={}",
            if name == "timeout" { "10s" } else { "5s" }
        ))),
    }
}

/// A bound in words for messages and results: "10 s", "2.5 s", "0.2 s".
pub fn seconds(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

/// The nodes a URL's host part names (`H1:P1,H2:P2`), each as `host:port`
/// (a node without a port takes `default_port`), followed by those of
/// `nodes=`; an error naming the bad entry when one is empty, has a bad
/// port or names a node twice.
pub fn node_list(
    hosts: &str,
    extra: &[&str],
    default_port: u16,
    shown: &str,
) -> Result<Vec<String>> {
    let mut nodes: Vec<String> = Vec::new();
    for entry in hosts.split(',').chain(extra.iter().copied()) {
        let node = one_node(entry, default_port).map_err(|why| {
            Error::usage(format!(
                "target \"{shown}\": node \"{entry}\" {why}; name nodes as HOST:PORT, e.g. mysql://root@10.0.0.1:3306,10.0.0.2:3306/db or ?nodes=10.0.0.2:3306,10.0.0.3:3306"
            ))
        })?;
        if nodes.contains(&node) {
            return Err(Error::usage(format!(
                "target \"{shown}\": node {node} is named twice; name each node once"
            )));
        }
        nodes.push(node);
    }
    Ok(nodes)
}

/// `host[:port]` or `[v6]:port` as `host:port`, or why not.
fn one_node(entry: &str, default_port: u16) -> std::result::Result<String, &'static str> {
    let entry = entry.trim();
    if entry.is_empty() {
        return Err("is empty");
    }
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (v6, after) = rest.split_once(']').ok_or("has no closing ]")?;
        if v6.is_empty() || !v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return Err("is not an IPv6 address");
        }
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err("has text after ]"),
        };
        (format!("[{v6}]"), port)
    } else {
        let (host, port) = match entry.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (entry, None),
        };
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_';
        if host.is_empty() || !host.chars().all(ok) {
            return Err("is not a host name or address");
        }
        (host.to_string(), port)
    };
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or("has no port from 1 to 65535")?,
    };
    Ok(format!("{host}:{port}"))
}

/// A `host:port` node's host and port (as [`node_list`] wrote it).
pub fn split_node(node: &str) -> (&str, u16) {
    let (host, port) = node.rsplit_once(':').unwrap_or((node, "0"));
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_take_units_or_seconds_and_refuse_the_rest() {
        let mut t = ServerTimeouts::default();
        t.set("timeout", "2s", "x").unwrap();
        t.set("connect_timeout", "500ms", "x").unwrap();
        assert_eq!(t.timeout(), Duration::from_secs(2));
        assert_eq!(t.connect_timeout(), Duration::from_millis(500));
        t.set("connect_timeout", "3", "x").unwrap();
        assert_eq!(t.connect_timeout(), Duration::from_secs(3));
        for bad in ["0", "0s", "10ms", "2h", "soon", ""] {
            let e = t.set("timeout", bad, "mysql://u@h/db").unwrap_err();
            assert_eq!(e.exit_code(), 2);
            let m = e.to_string();
            assert!(
                m.contains(&format!("timeout=\"{bad}\"")) && m.contains("e.g. timeout=10s"),
                "{m}"
            );
        }
        assert!(ServerTimeouts::default().is_default());
        assert_eq!(t.for_bytes(25_000_000), Duration::from_secs(4));
        assert_eq!(t.admin(), ADMIN_TIMEOUT);
    }

    #[test]
    fn seconds_read_plainly() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(seconds(Duration::from_millis(200)), "0.2 s");
    }

    #[test]
    fn node_lists_take_ports_or_the_default_and_refuse_bad_entries() {
        let n = node_list(
            "127.0.0.1:3307,127.0.0.2",
            &["db3:3308", "[::1]:3309"],
            3307,
            "x",
        )
        .unwrap();
        assert_eq!(
            n,
            ["127.0.0.1:3307", "127.0.0.2:3307", "db3:3308", "[::1]:3309"]
        );
        assert_eq!(split_node("[::1]:3309"), ("::1", 3309));
        assert_eq!(split_node("127.0.0.2:3307"), ("127.0.0.2", 3307));
        for (hosts, extra, why) in [
            ("a:1,,b:1", &[][..], "\"\" is empty"),
            ("a:1", &["b:x"][..], "no port from 1 to 65535"),
            ("a:0", &[][..], "no port"),
            ("a:1,a:1", &[][..], "named twice"),
            ("a:1", &["a"][..], "named twice"),
            ("a b:1", &[][..], "not a host name"),
            ("[zz]:1", &[][..], "not an IPv6"),
        ] {
            let m = node_list(hosts, extra, 1, "mysql://u@h/db")
                .unwrap_err()
                .to_string();
            assert!(m.contains(why), "{hosts} {extra:?}: {m}");
            assert!(!m.contains('\n'));
        }
    }
}
