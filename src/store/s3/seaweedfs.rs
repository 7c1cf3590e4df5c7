//! A SeaweedFS cluster's shape: the volume servers its master lists in
//! `/dir/status` (the S3 target's `topology=` URL), each asked directly
//! for its own `/status`, beside the master itself and the S3 gateway.
//!
//! The master keeps listing a volume server that died until its
//! heartbeats have been missing for a while (measured: see docs/TARGETS.md's
//! fault section), so each volume server is asked itself: one that does
//! not answer within [`PROBE_BOUND`] is "unreachable" at once. Every
//! request runs at the same time; the whole read ends by [`DEADLINE`].

use std::time::Duration;

use serde_json::Value;

use crate::store::cluster::{ClusterShape, NodeState};
use crate::target::S3Location;

/// The bound of each request (connection and answer).
const PROBE_BOUND: Duration = Duration::from_secs(2);
/// When a read of the shape gives up on what has not answered.
pub const DEADLINE: Duration = Duration::from_secs(3);

/// The shape of the cluster behind `bucket`; None without `topology=`.
pub(crate) fn shape(bucket: &S3Location) -> Option<ClusterShape> {
    let master = bucket.topology.clone()?;
    let gateway = bucket.endpoint.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    // A thread of its own: the caller may be inside a runtime, where
    // another cannot block; detached, it ends within its bounds.
    std::thread::spawn(move || {
        let _ = tx.send(read(&master, gateway.as_deref()));
    });
    let unreachable = || ClusterShape {
        system: "seaweedfs".into(),
        size: None,
        nodes: Vec::new(),
    };
    Some(rx.recv_timeout(DEADLINE).unwrap_or_else(|_| unreachable()))
}

/// Reads the master's topology and asks every node at once.
fn read(master: &str, gateway: Option<&str>) -> ClusterShape {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let client = client();
    let (Ok(runtime), Some(client)) = (runtime, client) else {
        return ClusterShape {
            system: "seaweedfs".into(),
            size: None,
            nodes: Vec::new(),
        };
    };
    runtime.block_on(async {
        let topology = get_json(&client, master).await;
        let volumes = topology.as_ref().map(volume_servers).unwrap_or_default();
        let asks = volumes
            .iter()
            .map(|v| answers(&client, format!("http://{v}/status")));
        let (states, master_up, gateway_up) = futures_util::future::join3(
            futures_util::future::join_all(asks),
            async { topology.is_some() },
            async {
                match gateway {
                    Some(g) => Some(answers(&client, format!("{g}/")).await),
                    None => None,
                }
            },
        )
        .await;
        let mut nodes = vec![node(authority(master), "master", master_up)];
        if let Some(up) = gateway_up {
            nodes.push(node(
                authority(gateway.unwrap_or_default()),
                "s3 gateway",
                up,
            ));
        }
        for (v, up) in volumes.iter().zip(states) {
            nodes.push(node(v.clone(), "volume", up));
        }
        nodes.sort_by(|a, b| a.address.cmp(&b.address));
        ClusterShape {
            system: "seaweedfs".into(),
            size: topology.map(|_| volumes.len() as u64),
            nodes,
        }
    })
}

fn client() -> Option<reqwest::Client> {
    // An https topology URL needs the TLS provider the S3 client installs.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(PROBE_BOUND)
        .timeout(PROBE_BOUND)
        .build()
        .ok()
}

fn node(address: String, role: &str, up: bool) -> NodeState {
    NodeState {
        address,
        role: role.into(),
        state: if up { "up" } else { "unreachable" }.into(),
    }
}

/// `host:port` of a URL.
fn authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_string()
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    serde_json::from_slice(&response.bytes().await.ok()?).ok()
}

/// Whether anything answers HTTP at `url` (any status: an S3 gateway
/// refuses an unsigned request, and that is an answer).
async fn answers(client: &reqwest::Client, url: String) -> bool {
    client.get(url).send().await.is_ok()
}

/// Every volume server the master lists (`DataNodes` > `Url`), each once,
/// in address order.
fn volume_servers(json: &Value) -> Vec<String> {
    let mut out: Vec<String> = super::topology::data_node_urls(json)
        .into_iter()
        .flatten()
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_servers_are_found_wherever_they_nest() {
        let json = serde_json::json!({
            "Topology": {"DataCenters": [{"Racks": [
                {"DataNodes": [{"Url": "127.0.0.3:8080"}, {"Url": "127.0.0.2:8080"}]},
                {"DataNodes": [{"PublicUrl": "127.0.0.4:8080"}]}
            ]}]}
        });
        assert_eq!(
            volume_servers(&json),
            ["127.0.0.2:8080", "127.0.0.3:8080", "127.0.0.4:8080"]
        );
        assert_eq!(
            authority("http://127.0.0.1:9333/dir/status"),
            "127.0.0.1:9333"
        );
        assert_eq!(authority("http://127.0.0.1:8333"), "127.0.0.1:8333");
    }
}
