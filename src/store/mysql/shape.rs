//! A Galera cluster's shape, read from its nodes: `wsrep_cluster_size` as
//! a node of the primary component reports it, every node the target names
//! or a node lists in `wsrep_incoming_addresses`, and each node's own
//! `wsrep_local_state_comment`, read by connecting to it.
//!
//! Every node is asked at once, each on a thread of its own, with every
//! wait (TCP connection, greeting, login, each query) bounded by
//! [`PROBE_BOUND`]; a node with no answer by [`DEADLINE`] is
//! "unreachable" (its thread ends on its own within its bounds). So a read
//! never takes longer than [`DEADLINE`] and never fails.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use mysql::Conn;
use mysql::prelude::Queryable;

use super::link::node_opts;
use crate::store::cluster::{ClusterShape, NodeState};
use crate::target::ServerUrl;

/// The bound of each wait on one node (the server's own connect_timeout
/// when shorter).
const PROBE_BOUND: Duration = Duration::from_secs(2);
/// When a read of the shape gives up on the nodes that have not answered.
pub const DEADLINE: Duration = Duration::from_secs(3);

/// What one node said.
#[derive(Debug, Clone, PartialEq)]
enum Probe {
    /// A Galera node (wsrep_on).
    Galera {
        /// wsrep_local_state_comment ("Synced", "Donor/Desynced", ...).
        state: String,
        /// wsrep_cluster_size as it sees it.
        size: Option<u64>,
        /// wsrep_cluster_status: "Primary" or "non-Primary".
        status: String,
        /// wsrep_incoming_addresses: every member's client address.
        members: Vec<String>,
    },
    /// A server without wsrep.
    Lone,
    /// No answer within the bounds.
    Unreachable,
}

/// The shape of the Galera cluster behind `server`; None when the node(s)
/// that answered are no Galera nodes. When no node answers at all the
/// shape lists them unreachable (the target may have been a cluster).
/// Every node of `earlier` (a shape read before) is asked too: a node the
/// target does not name is known only from another's member list, and
/// when that node dies, the others must still be asked, not called gone.
pub(crate) fn galera_shape(
    server: &ServerUrl,
    earlier: Option<&ClusterShape>,
) -> Option<ClusterShape> {
    let deadline = Instant::now() + DEADLINE;
    let named = nodes_to_ask(named_nodes(server)?, earlier);
    let mut probes = probe_all(server, &named, deadline);
    // Members a node lists that the target does not name are asked too,
    // within what is left of the deadline.
    let listed: Vec<String> = probes
        .iter()
        .flat_map(|(_, p)| match p {
            Probe::Galera { members, .. } => members.clone(),
            _ => Vec::new(),
        })
        .filter(|m| !probes.iter().any(|(n, _)| n == m))
        .fold(Vec::new(), |mut seen, m| {
            if !seen.contains(&m) {
                seen.push(m);
            }
            seen
        });
    probes.extend(probe_all(server, &listed, deadline));
    assemble(probes)
}

/// The nodes the target names, then those only an earlier shape knew.
fn nodes_to_ask(mut named: Vec<String>, earlier: Option<&ClusterShape>) -> Vec<String> {
    for node in earlier.into_iter().flat_map(|s| &s.nodes) {
        if !named.contains(&node.address) {
            named.push(node.address.clone());
        }
    }
    named
}

/// The nodes the target names, in the order it names them.
fn named_nodes(server: &ServerUrl) -> Option<Vec<String>> {
    if !server.nodes.is_empty() {
        return Some(server.nodes.clone());
    }
    let opts = mysql::Opts::from_url(&server.connect).ok()?;
    let host = opts.get_ip_or_hostname();
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Some(vec![format!("{host}:{}", opts.get_tcp_port())])
}

/// Asks every node of `nodes` at once; a node that has not answered by
/// `deadline` is unreachable.
fn probe_all(server: &ServerUrl, nodes: &[String], deadline: Instant) -> Vec<(String, Probe)> {
    let (tx, rx) = mpsc::channel();
    let bound = PROBE_BOUND.min(server.timeouts.connect_timeout());
    for (i, node) in nodes.iter().enumerate() {
        let (tx, server, node) = (tx.clone(), server.clone(), node.clone());
        // Detached: one that outlives the deadline ends within its bounds.
        std::thread::spawn(move || {
            let _ = tx.send((i, probe(&server, &node, bound)));
        });
    }
    drop(tx);
    let mut answers = vec![Probe::Unreachable; nodes.len()];
    let mut left = nodes.len();
    while left > 0 {
        let wait = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok((i, p)) => {
                answers[i] = p;
                left -= 1;
            }
            Err(_) => break,
        }
    }
    nodes.iter().cloned().zip(answers).collect()
}

/// One node's own account of itself.
fn probe(server: &ServerUrl, node: &str, bound: Duration) -> Probe {
    let Ok(opts) = node_opts(server, node, bound) else {
        return Probe::Unreachable;
    };
    let Ok(mut conn) = Conn::new(opts) else {
        return Probe::Unreachable;
    };
    read_node(&mut conn).unwrap_or(Probe::Unreachable)
}

fn read_node(conn: &mut Conn) -> mysql::Result<Probe> {
    let on: Option<(String, String)> = conn.query_first("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")?;
    if !on.is_some_and(|(_, v)| v.eq_ignore_ascii_case("ON")) {
        return Ok(Probe::Lone);
    }
    let rows: Vec<(String, String)> = conn.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', \
         'wsrep_cluster_size', 'wsrep_cluster_status', 'wsrep_incoming_addresses')",
    )?;
    let get = |name: &str| {
        rows.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Ok(Probe::Galera {
        state: get("wsrep_local_state_comment"),
        size: get("wsrep_cluster_size").parse().ok(),
        status: get("wsrep_cluster_status"),
        members: members(&get("wsrep_incoming_addresses")),
    })
}

/// The addresses of `wsrep_incoming_addresses` a client can reach: "AUTO"
/// (a node that did not say) and unspecified addresses are left out.
fn members(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|a| a.contains(':') && !a.starts_with("0.0.0.0:") && !a.starts_with("[::]:"))
        .map(str::to_string)
        .collect()
}

/// The shape from every node's answer; None when no answer came from a
/// Galera node but some from a server without wsrep.
fn assemble(probes: Vec<(String, Probe)>) -> Option<ClusterShape> {
    let galera = probes
        .iter()
        .any(|(_, p)| matches!(p, Probe::Galera { .. }));
    let lone = probes.iter().any(|(_, p)| *p == Probe::Lone);
    if lone && !galera {
        return None;
    }
    // The size a node of the primary component reports; else any node's.
    let size = |primary: bool| {
        probes.iter().find_map(|(_, p)| match p {
            Probe::Galera { size, status, .. } if !primary || status == "Primary" => *size,
            _ => None,
        })
    };
    let mut nodes: Vec<NodeState> = probes
        .iter()
        .map(|(address, p)| NodeState {
            address: address.clone(),
            role: "galera".into(),
            state: match p {
                Probe::Galera { state, status, .. } if status == "Primary" => state.clone(),
                Probe::Galera { state, status, .. } => format!("{state} ({status})"),
                Probe::Lone => "no wsrep".into(),
                Probe::Unreachable => "unreachable".into(),
            },
        })
        .collect();
    nodes.sort_by(|a, b| a.address.cmp(&b.address));
    Some(ClusterShape {
        system: if galera { "galera" } else { "mysql" }.into(),
        size: size(true).or_else(|| size(false)),
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synced(size: u64, members: &[&str]) -> Probe {
        Probe::Galera {
            state: "Synced".into(),
            size: Some(size),
            status: "Primary".into(),
            members: members.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn the_nodes_an_earlier_shape_knew_are_asked_after_the_named_ones() {
        let earlier = ClusterShape {
            system: "galera".into(),
            size: Some(3),
            nodes: ["127.0.0.1:3306", "127.0.0.2:3306", "127.0.0.3:3306"]
                .iter()
                .map(|a| NodeState {
                    address: a.to_string(),
                    role: "galera".into(),
                    state: "Synced".into(),
                })
                .collect(),
        };
        let named = vec!["127.0.0.1:3306".to_string()];
        assert_eq!(
            nodes_to_ask(named.clone(), Some(&earlier)),
            ["127.0.0.1:3306", "127.0.0.2:3306", "127.0.0.3:3306"]
        );
        assert_eq!(nodes_to_ask(named, None), ["127.0.0.1:3306"]);
    }

    #[test]
    fn incoming_addresses_leave_out_what_no_client_can_reach() {
        assert_eq!(
            members("AUTO,127.0.0.3:3306,127.0.0.2:3306,0.0.0.0:3306"),
            ["127.0.0.3:3306", "127.0.0.2:3306"]
        );
        assert!(members("").is_empty());
    }

    #[test]
    fn the_primary_components_size_and_every_nodes_state() {
        let shape = assemble(vec![
            (
                "127.0.0.1:1".into(),
                synced(2, &["127.0.0.1:1", "127.0.0.2:1"]),
            ),
            (
                "127.0.0.3:1".into(),
                Probe::Galera {
                    state: "Initialized".into(),
                    size: Some(1),
                    status: "non-Primary".into(),
                    members: vec![],
                },
            ),
            ("127.0.0.2:1".into(), Probe::Unreachable),
        ])
        .unwrap();
        assert_eq!(shape.system, "galera");
        assert_eq!(shape.size, Some(2));
        let states: Vec<(&str, &str)> = shape
            .nodes
            .iter()
            .map(|n| (n.address.as_str(), n.state.as_str()))
            .collect();
        assert_eq!(
            states,
            [
                ("127.0.0.1:1", "Synced"),
                ("127.0.0.2:1", "unreachable"),
                ("127.0.0.3:1", "Initialized (non-Primary)")
            ]
        );
    }

    #[test]
    fn a_lone_server_is_no_cluster_and_silence_lists_the_nodes_unreachable() {
        assert_eq!(assemble(vec![("h:1".into(), Probe::Lone)]), None);
        let shape = assemble(vec![("h:1".into(), Probe::Unreachable)]).unwrap();
        assert_eq!((shape.system.as_str(), shape.size), ("mysql", None));
        assert_eq!(shape.nodes[0].state, "unreachable");
    }
}
