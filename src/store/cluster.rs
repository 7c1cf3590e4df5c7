//! A cluster's shape at one moment: which nodes a distributed store has
//! and what state each is in (a SeaweedFS master's topology, a Galera
//! node's `wsrep_cluster_size` and each node's `wsrep_local_state_comment`).
//! Runs read it at the start and the end, and while they run when it is
//! cheap, so a node that left or came back is recorded with its time.

use serde::{Deserialize, Serialize};

/// The longest a `store::read_shape` takes: nodes that have not answered by
/// then are listed "unreachable".
pub const READ_BOUND: std::time::Duration = std::time::Duration::from_secs(3);

/// The nodes of a cluster and the state of each, as read at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterShape {
    /// What kind of cluster ("seaweedfs", "galera").
    pub system: String,
    /// The size the cluster itself reports (SeaweedFS's volume servers,
    /// Galera's `wsrep_cluster_size`), None when it could not be read.
    pub size: Option<u64>,
    /// Every node known, in address order.
    pub nodes: Vec<NodeState>,
}

/// One node of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    /// Its address (host:port).
    pub address: String,
    /// What it does ("volume", "galera").
    pub role: String,
    /// Its state as the cluster reports it ("up", "Synced", "Donor/Desynced"),
    /// or "unreachable".
    pub state: String,
}

impl ClusterShape {
    /// What changed from `earlier` to this shape, one line each ("node
    /// 127.0.0.3:8080 left", "node 127.0.0.2:3306: Synced -> unreachable",
    /// "size 3 -> 2"), in address order.
    pub fn changes_since(&self, earlier: &ClusterShape) -> Vec<String> {
        let mut changes = Vec::new();
        if self.size != earlier.size {
            let size = |s: Option<u64>| s.map_or("unknown".to_string(), |n| n.to_string());
            changes.push(format!(
                "size {} -> {}",
                size(earlier.size),
                size(self.size)
            ));
        }
        for old in &earlier.nodes {
            match self.nodes.iter().find(|n| n.address == old.address) {
                None => changes.push(format!("node {} left", old.address)),
                Some(new) if new.state != old.state => changes.push(format!(
                    "node {}: {} -> {}",
                    old.address, old.state, new.state
                )),
                Some(_) => {}
            }
        }
        for new in &self.nodes {
            if !earlier.nodes.iter().any(|n| n.address == new.address) {
                changes.push(format!("node {} joined ({})", new.address, new.state));
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(size: u64, nodes: &[(&str, &str)]) -> ClusterShape {
        ClusterShape {
            system: "galera".into(),
            size: Some(size),
            nodes: nodes
                .iter()
                .map(|(a, s)| NodeState {
                    address: a.to_string(),
                    role: "galera".into(),
                    state: s.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn changes_name_the_size_each_node_that_left_changed_or_joined() {
        let before = shape(
            3,
            &[("a:1", "Synced"), ("b:1", "Synced"), ("c:1", "Synced")],
        );
        let after = shape(
            2,
            &[("a:1", "Synced"), ("b:1", "unreachable"), ("d:1", "Joiner")],
        );
        assert_eq!(
            after.changes_since(&before),
            [
                "size 3 -> 2",
                "node b:1: Synced -> unreachable",
                "node c:1 left",
                "node d:1 joined (Joiner)"
            ]
        );
        assert!(before.changes_since(&before).is_empty());
    }
}
