//! End-to-end tests against a 3-node MariaDB Galera cluster on loopback.
//! `scripts/test.sh` starts it with scripts/start-galera.sh and sets
//! BLOBBENCH_GALERA_URL (node 1, on 127.0.0.1; node N listens on 127.0.0.N
//! at the same port); run alone, these tests are ignored.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::common::{PATIENCE, json, ok, run, servers_exclusive, servers_shared, usage_error};

// The cluster is shared by the tests here and conformance's: each holds
// the servers' lock (common::SERVERS) shared, and the one that changes a
// server-wide setting (wsrep_max_ws_size) holds it exclusively.

fn galera_url() -> String {
    std::env::var("BLOBBENCH_GALERA_URL").expect("BLOBBENCH_GALERA_URL: run scripts/test.sh")
}

/// The same URL at node `n` (127.0.0.n, the port every node shares).
fn node_url(n: u8) -> String {
    let url = galera_url();
    assert!(url.contains("@127.0.0.1:"), "node 1 is on 127.0.0.1: {url}");
    url.replace("@127.0.0.1:", &format!("@127.0.0.{n}:"))
}

/// Node `n`'s URL for `table`.
fn node_url_table(n: u8, table: &str) -> String {
    format!("{}?table={table}", node_url(n))
}

fn connect(url: &str) -> mysql::Conn {
    let opts =
        mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).unwrap()).prefer_socket(false);
    mysql::Conn::new(opts).unwrap()
}

/// Rows of `table` as node `n` sees them once it has applied every write
/// set the cluster committed before this call: a causal read
/// (wsrep_sync_wait=1) waits for that, where a plain read on a node other
/// than the writer's may run ahead of its applier.
fn rows_after_catching_up(n: u8, table: &str) -> u64 {
    let mut conn = connect(&node_url(n));
    conn.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
    conn.query_first(format!("SELECT count(*) FROM {table}"))
        .unwrap()
        .unwrap()
}

/// Waits until every node is Synced in a cluster of 3 (what the tests
/// assert of the cluster; scripts/start-galera.sh waited for it too, and
/// its membership timeouts are meant to keep a starved node from being
/// evicted), panicking with the last state seen after [`PATIENCE`].
fn wait_until_synced() {
    let start = Instant::now();
    let state = |n: u8| -> Result<(String, String), mysql::Error> {
        let mut conn = mysql::Conn::new(
            mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&node_url(n))?)
                .prefer_socket(false),
        )?;
        let status = |conn: &mut mysql::Conn, name: &str| -> Result<String, mysql::Error> {
            let row: Option<(String, String)> =
                conn.query_first(format!("SHOW STATUS LIKE '{name}'"))?;
            Ok(row.map(|(_, v)| v).unwrap_or_default())
        };
        Ok((
            status(&mut conn, "wsrep_local_state_comment")?,
            status(&mut conn, "wsrep_cluster_size")?,
        ))
    };
    for n in 1..=3 {
        loop {
            let seen = state(n);
            if matches!(&seen, Ok((s, size)) if s == "Synced" && size == "3") {
                break;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "node {n} is not Synced in a cluster of 3 after {PATIENCE:?}: {seen:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// A run's store settings from its result file.
fn settings(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["runs"][0]["store"]["settings"]
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn a_dataset_written_on_node_1_reads_back_verified_through_node_2() {
    let _servers = servers_shared();
    wait_until_synced();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let table = "replicated";
    let one = format!("{}?table={table}", node_url(1));
    ok(
        d,
        &[
            "init",
            &one,
            "--count",
            "60",
            "--size",
            "30k",
            "--variance",
            "10k",
        ],
    );
    ok(
        d,
        &[
            "run", &one, "--random", "--verify", "--repeat", "1", "--json", "one.json",
        ],
    );
    let doc = json(&d.join("one.json"));
    assert_eq!(doc["runs"][0]["repetitions"][0]["verified"], 60);
    let s = settings(&doc);
    // The wsrep settings that shape the result, as the node reported them.
    assert_eq!(s["wsrep_on"], "ON");
    assert_eq!(s["wsrep_cluster_size"], "3");
    assert_eq!(s["wsrep_local_state_comment"], "Synced");
    assert_eq!(s["wsrep_node_name"], "node1");
    assert_eq!(s["binlog_format"], "ROW");
    assert_eq!(s["wsrep_sst_method"], "rsync");
    assert!(
        s["wsrep_provider_version"]
            .as_str()
            .unwrap()
            .starts_with('4'),
        "{s}"
    );
    for name in [
        "wsrep_max_ws_size",
        "wsrep_max_ws_rows",
        "wsrep_sync_wait",
        "wsrep_slave_threads",
    ] {
        assert!(
            s[name].as_str().is_some_and(|v| v.parse::<u64>().is_ok()),
            "{name}: {s}"
        );
    }
    assert_eq!(s["engine"], "InnoDB");

    // Node 2 has every row once it has caught up, and blobbench reads the
    // same 60 blobs there, byte for byte as node 1 wrote them.
    assert_eq!(rows_after_catching_up(2, table), 60);
    let two = format!("{}?table={table}", node_url(2));
    ok(
        d,
        &[
            "run", &two, "--verify", "--repeat", "1", "--json", "two.json",
        ],
    );
    let doc = json(&d.join("two.json"));
    assert_eq!(doc["runs"][0]["repetitions"][0]["verified"], 60);
    assert_eq!(settings(&doc)["wsrep_node_name"], "node2");

    // Updates through node 2 replicate back to node 1.
    ok(
        d,
        &[
            "run", &two, "--update", "--verify", "--count", "20", "--repeat", "1",
        ],
    );
    assert_eq!(rows_after_catching_up(1, table), 60);
    ok(d, &["run", &one, "--verify", "--repeat", "1"]);
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn engines_galera_does_not_replicate_are_refused() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = galera_url();
    for (engine, name) in [
        ("myisam", "MyISAM"),
        ("aria", "Aria"),
        ("archive", "ARCHIVE"),
    ] {
        let target = format!("{url}?engine={engine}&table=refused_{engine}");
        usage_error(
            d,
            &["init", &target, "--count", "3", "--size", "1k"],
            "?engine=innodb",
        );
        usage_error(d, &["init", &target, "--count", "3"], name);
        usage_error(d, &["run", &target], "Galera replicates InnoDB tables only");
    }
    // Refused before anything was made.
    let mut conn = connect(&url);
    let made: u64 = conn
        .query_first(
            "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'refused_%'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(made, 0);
}

/// Restores node 1's wsrep_max_ws_size however the test ends.
struct WriteSetSize(mysql::Conn, u64);

impl Drop for WriteSetSize {
    fn drop(&mut self) {
        let _ = self
            .0
            .query_drop(format!("SET GLOBAL wsrep_max_ws_size = {}", self.1));
    }
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn values_stay_within_one_write_set() {
    let _servers = servers_exclusive();
    wait_until_synced();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = format!("{}?table=write_sets", galera_url());
    let mut conn = connect(&galera_url());
    let old: u64 = conn
        .query_first("SELECT @@global.wsrep_max_ws_size")
        .unwrap()
        .unwrap();
    // 4 MiB: an UPDATE's write set carries the row before and after, so a
    // 3 MB blob could be inserted but never updated. (Node 1's limit is
    // server-wide: the other tests of the cluster wait on the lock.)
    conn.query_drop("SET GLOBAL wsrep_max_ws_size = 4194304")
        .unwrap();
    let _restore = WriteSetSize(conn, old);
    let out = run(d, &["init", &url, "--count", "2", "--size", "3M"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("wsrep_max_ws_size is 4194304"), "{err}");
    assert!(err.contains("binlog_row_image=FULL"), "{err}");
    // Half the write set less a little room fits, and updates of it
    // replicate. Four such blobs are more than one write set: init's one
    // batch and the run's batch of updates are committed in parts.
    ok(d, &["init", &url, "--count", "4", "--size", "1900k"]);
    ok(
        d,
        &[
            "run", &url, "--update", "--verify", "--count", "4", "--repeat", "1", "--json",
            "u.json",
        ],
    );
    let doc = json(&d.join("u.json"));
    let batches = settings(&doc)["galera_batches"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(batches.contains("wsrep_max_ws_size 4194304"), "{batches}");
    assert!(rows_after_catching_up(2, "write_sets") == 4);
    ok(
        d,
        &[
            "run",
            &node_url_table(2, "write_sets"),
            "--verify",
            "--repeat",
            "1",
        ],
    );
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn lob_suite_on_galera_measures_innodb_and_says_why_not_the_rest() {
    let _servers = servers_shared();
    wait_until_synced();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = galera_url();
    let out = ok(
        d,
        &[
            "suite",
            "lob",
            "--mysql",
            &url,
            "--sizes",
            "1K,20K",
            "--per-size",
            "2",
            "--json",
            "lob.json",
        ],
    );
    assert!(out.contains("mariadb innodb"), "{out}");
    let doc = json(&d.join("lob.json"));
    let tables = &doc["tables"];
    let samples = tables["lob"].as_array().unwrap();
    let innodb: Vec<_> = samples
        .iter()
        .filter(|s| s["system"] == "mariadb innodb")
        .collect();
    assert_eq!(
        innodb.len(),
        2,
        "both sizes measured on InnoDB: {samples:?}"
    );
    assert!(
        samples
            .iter()
            .all(|s| !s["system"].as_str().unwrap().starts_with("mariadb ")
                || s["system"] == "mariadb innodb")
    );
    let skipped = tables["skipped"].as_array().unwrap();
    for engine in ["myisam", "aria", "archive"] {
        let system = format!("mariadb {engine}");
        let s = skipped
            .iter()
            .find(|s| s["system"] == system.as_str())
            .unwrap_or_else(|| panic!("{system} not skipped: {skipped:?}"));
        let reason = s["reason"].as_str().unwrap();
        assert!(
            reason.contains("Galera replicates InnoDB tables only"),
            "{reason}"
        );
        assert!(out.contains(&format!("skipped {system}: ")), "{out}");
    }
    let stores = tables["stores"].as_array().unwrap();
    let entry = stores
        .iter()
        .find(|s| s["system"] == "mariadb innodb")
        .unwrap();
    assert_eq!(entry["store"]["settings"]["wsrep_on"], "ON");
    assert_eq!(entry["store"]["settings"]["wsrep_cluster_size"], "3");
}
