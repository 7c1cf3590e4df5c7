//! The shape of a distributed object store, as its own status page tells
//! it: a SeaweedFS master's `/dir/status` (data centers, racks, volume
//! servers) and its default replication. Recorded in results, so a run on
//! a cluster says what the cluster was.

use serde_json::{Map, Value};

/// Fetches `url` and summarises the topology it reports.
pub(crate) async fn fetch(url: String) -> Result<Map<String, Value>, String> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("the server answered {}", response.status()));
    }
    let body = response.bytes().await.map_err(|e| e.to_string())?;
    let json: Value =
        serde_json::from_slice(&body).map_err(|e| format!("the answer is not JSON ({e})"))?;
    let mut shape = summarise(&json);
    shape.insert("source".into(), Value::from(url));
    Ok(shape)
}

/// Counts data centers, racks and storage nodes wherever the JSON nests
/// them (`DataCenters` > `Racks` > `DataNodes`), and keeps the settings
/// that decide how many copies an object gets.
fn summarise(json: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let nodes: Vec<String> = data_node_urls(json)
        .into_iter()
        .map(|url| url.unwrap_or_else(|| "?".into()))
        .collect();
    let mut replication: Vec<String> = Vec::new();
    let (mut centers, mut racks) = (0u64, 0u64);
    walk(json, &mut |key, value| match key {
        "DataCenters" => centers += value.as_array().map_or(0, |a| a.len() as u64),
        "Racks" => racks += value.as_array().map_or(0, |a| a.len() as u64),
        // SeaweedFS's placement code per volume layout: "002" = two more
        // copies on other servers of the same rack.
        "replication" | "DefaultReplication" => {
            if let Some(r) = value.as_str()
                && !replication.iter().any(|x| x == r)
            {
                replication.push(r.to_string());
            }
        }
        _ => {}
    });
    if let Some(v) = find(json, "Version") {
        out.insert("version".into(), v.clone());
    }
    out.insert("replication".into(), Value::from(replication));
    out.insert("data_centers".into(), Value::from(centers));
    out.insert("racks".into(), Value::from(racks));
    out.insert("storage_nodes".into(), Value::from(nodes.len() as u64));
    out.insert("nodes".into(), Value::from(nodes));
    out
}

/// Each storage node's address (`DataNodes` > `Url`, else `PublicUrl`)
/// wherever the JSON nests it, in the document's order; None for a node
/// that names neither. The cluster's shape asks each of them.
pub(crate) fn data_node_urls(json: &Value) -> Vec<Option<String>> {
    let mut urls = Vec::new();
    walk(json, &mut |key, value| {
        if key == "DataNodes" {
            for node in value.as_array().into_iter().flatten() {
                let url = node.get("Url").or_else(|| node.get("PublicUrl"));
                urls.push(url.and_then(Value::as_str).map(str::to_string));
            }
        }
    });
    urls
}

/// Calls `visit` on every (key, value) pair in the JSON, depth first.
fn walk(json: &Value, visit: &mut dyn FnMut(&str, &Value)) {
    match json {
        Value::Object(map) => {
            for (k, v) in map {
                visit(k, v);
                walk(v, visit);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, visit)),
        _ => {}
    }
}

/// The first value named `key` anywhere in the JSON.
fn find<'a>(json: &'a Value, key: &str) -> Option<&'a Value> {
    match json {
        Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|v| find(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_racks_and_replication_are_counted_wherever_they_nest() {
        let json: Value = serde_json::json!({
            "Topology": {"Max": 30, "DataCenters": [{"Id": "dc1", "Racks": [
                {"Id": "r1", "DataNodes": [{"Url": "127.0.0.2:8080"}, {"Url": "127.0.0.3:8080"}]},
                {"Id": "r2", "DataNodes": [{"Url": "127.0.0.4:8080"}]}
            ]}]},
            "Layouts": [{"replication": "002", "collection": "blobbench"}],
            "Version": "30GB 3.80"
        });
        let s = summarise(&json);
        assert_eq!(s["storage_nodes"], 3);
        assert_eq!(s["racks"], 2);
        assert_eq!(s["data_centers"], 1);
        assert_eq!(s["replication"][0], "002");
        assert_eq!(s["version"], "30GB 3.80");
        assert_eq!(s["nodes"][2], "127.0.0.4:8080");
    }
}
