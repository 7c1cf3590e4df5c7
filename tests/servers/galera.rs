//! End-to-end tests against a 3-node MariaDB Galera cluster on loopback.
//! `scripts/test.sh` starts it with scripts/start-galera.sh and sets
//! BLOBBENCH_GALERA_URL (node 1, on 127.0.0.1; node N listens on 127.0.0.N
//! at the same port); run alone, these tests are ignored.

use crate::common::small;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::common::{
    PATIENCE, closed_port, json, ok, run, servers_exclusive, servers_shared, shape_when,
    usage_error,
};

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
        &small(&[
            "run", &one, "--random", "--verify", "--repeat", "1", "--json", "one.json",
        ]),
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
        &small(&[
            "run", &two, "--verify", "--repeat", "1", "--json", "two.json",
        ]),
    );
    let doc = json(&d.join("two.json"));
    assert_eq!(doc["runs"][0]["repetitions"][0]["verified"], 60);
    assert_eq!(settings(&doc)["wsrep_node_name"], "node2");

    // Updates through node 2 replicate back to node 1.
    ok(
        d,
        &small(&[
            "run", &two, "--update", "--verify", "--count", "20", "--repeat", "1",
        ]),
    );
    assert_eq!(rows_after_catching_up(1, table), 60);
    ok(d, &small(&["run", &one, "--verify", "--repeat", "1"]));
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
        &small(&[
            "run", &url, "--update", "--verify", "--count", "4", "--repeat", "1", "--json",
            "u.json",
        ]),
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
        &small(&[
            "run",
            &node_url_table(2, "write_sets"),
            "--verify",
            "--repeat",
            "1",
        ]),
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
    // The cluster's shape before its first size and after the suite: whole
    // both times, nothing changed.
    let cluster = &entry["cluster"];
    assert_eq!(cluster["start"]["size"], 3, "{cluster}");
    assert_eq!(cluster["end"]["size"], 3, "{cluster}");
    assert_eq!(cluster["changes"], serde_json::json!([]), "{cluster}");
}

// Faults: a killed node, a frozen node, a target naming several nodes.

/// Every node's `host:port`, node 1 first.
pub(crate) fn nodes() -> Vec<String> {
    (1..=3)
        .map(|n| {
            let url = node_url(n);
            let rest = url.split_once('@').unwrap().1;
            rest.split('/').next().unwrap().to_string()
        })
        .collect()
}

/// `scripts/start-galera.sh --WHAT N DIR [EXTRA]` on the cluster
/// scripts/test.sh started: whether it succeeded, and its output.
fn try_galera_control(what: &str, node: u8, extra: &[&str]) -> (bool, String) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/start-galera.sh");
    let dir =
        std::env::var("BLOBBENCH_GALERA_DIR").expect("BLOBBENCH_GALERA_DIR: run scripts/test.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg(format!("--{what}"))
        .arg(node.to_string())
        .arg(&dir)
        .args(extra)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// As [`try_galera_control`], asserting it succeeded; its output.
pub(crate) fn galera_control(what: &str, node: u8, extra: &[&str]) -> String {
    let (done, text) = try_galera_control(what, node, extra);
    assert!(done, "scripts/start-galera.sh --{what} {node}: {text}");
    text
}

/// Whether node `n`'s process runs (frozen or not).
fn node_runs(n: u8) -> bool {
    let dir = std::env::var("BLOBBENCH_GALERA_DIR").expect("run scripts/test.sh");
    let file = std::path::Path::new(&dir).join(format!("node{n}/mysqld.pid"));
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .is_some_and(crate::servers::databases::alive)
}

/// Leaves the cluster whole however the test ends: node `0` thawed,
/// restarted if its process is gone, and every node Synced in a cluster
/// of 3 again (the other tests share the cluster).
pub(crate) struct Revive(pub(crate) u8);

impl Drop for Revive {
    fn drop(&mut self) {
        let n = self.0;
        if node_runs(n) {
            let _ = try_galera_control("thaw", n, &[]);
        } else {
            let (done, text) = try_galera_control("restart", n, &[]);
            if !done {
                eprintln!("reviving Galera node {n} failed: {text}");
            }
        }
        if std::thread::panicking() {
            // A second panic here would abort: wait without asserting.
            let _ = std::panic::catch_unwind(wait_until_synced);
        } else {
            wait_until_synced();
        }
    }
}

/// A target naming all three nodes, whose shape is the cluster's.
fn cluster() -> blobbench::target::Target {
    blobbench::target::Target::parse(&format!("mysql://root@{}/blobbench", nodes().join(",")))
        .unwrap()
}

/// The cluster's shape as one read finds it.
fn shape() -> blobbench::store::cluster::ClusterShape {
    shape_when(&cluster(), "readable", PATIENCE, |_| true)
}

fn state_of<'a>(shape: &'a blobbench::store::cluster::ClusterShape, node: &str) -> &'a str {
    shape
        .nodes
        .iter()
        .find(|s| s.address == node)
        .map_or("absent", |s| s.state.as_str())
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn the_shape_follows_a_killed_node_out_and_back_in_through_a_state_transfer() {
    use blobbench::error::FailureClass;
    use blobbench::store::{self, Access, SessionOptions};
    use blobbench::target::Target;

    // A node goes away: no other test may use the cluster meanwhile.
    let _servers = servers_exclusive();
    wait_until_synced();
    let n = nodes();
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &[
            "init",
            &format!("{}?table=shape_kill", galera_url()),
            "--count",
            "5",
            "--size",
            "1k",
        ],
    );
    let whole = |s: &blobbench::store::cluster::ClusterShape| {
        s.system == "galera" && s.size == Some(3) && n.iter().all(|a| state_of(s, a) == "Synced")
    };
    let before = shape_when(&cluster(), "3 Synced Galera nodes", PATIENCE, whole);
    // A client on node 3 (the first its target names).
    let on_three = Target::parse(&format!(
        "mysql://root@{},{},{}/blobbench?table=shape_kill",
        n[2], n[0], n[1]
    ))
    .unwrap();
    let mut store = store::open(&on_three, Access::ReadOnly).unwrap();
    assert_eq!(store.info().settings["node"], n[2].as_str());

    let mut session = store.session(SessionOptions::default()).unwrap();
    session.read(1, &mut |_| ()).unwrap();

    let _revive = Revive(3);
    let out = galera_control("kill", 3, &[]);
    assert!(out.contains("killed Galera node 3"), "{out}");
    let err = session.read(1, &mut |_| ()).expect_err("its node is gone");
    assert_eq!(err.class(), FailureClass::Connection, "{err}");
    drop(session);
    drop(store);
    // Opened again, the client lands on the next node that answers.
    let mut store = store::open(&on_three, Access::ReadOnly).unwrap();
    let info = store.info();
    assert_eq!(info.settings["node"], n[0].as_str(), "{:?}", info.settings);
    let skipped = info.settings["nodes_skipped"].as_str().unwrap();
    assert!(skipped.starts_with(&n[2]), "{skipped}");
    let mut session = store.session(SessionOptions::default()).unwrap();
    session.read(1, &mut |_| ()).unwrap();
    drop(session);
    drop(store);

    // The shape says so at once; the size once the others have evicted it
    // (evs.suspect_timeout, 30 s in scripts/start-galera.sh, or at the
    // latest evs.inactive_timeout, 60 s, and a view installed).
    assert_eq!(state_of(&shape(), &n[2]), "unreachable");
    let after = shape_when(&cluster(), "of size 2", PATIENCE, |s| s.size == Some(2));
    assert_eq!(state_of(&after, &n[2]), "unreachable", "{after:?}");
    let changes = after.changes_since(&before);
    assert!(changes.contains(&"size 3 -> 2".to_string()), "{changes:?}");
    assert!(
        changes.contains(&format!("node {}: Synced -> unreachable", n[2])),
        "{changes:?}"
    );

    // Back, through a full state transfer by rsync: the transfer writes as
    // nobody into a folder the server wrote in as root.
    let out = galera_control("restart", 3, &["--sst"]);
    assert!(out.contains("state transfer SST"), "{out}");
    // Every node Synced in a cluster of 3 again, as before the kill; the
    // donor resyncs on its own time, which may end after the joiner's.
    shape_when(&cluster(), "as before", PATIENCE, |s| {
        s.changes_since(&before).is_empty()
    });
    assert_eq!(rows_after_catching_up(3, "shape_kill"), 5);
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn a_target_naming_several_nodes_opens_on_the_first_that_answers() {
    use blobbench::store::{self, Access};
    use blobbench::target::Target;

    // Node 1 is frozen for a moment: no other test meanwhile.
    let _servers = servers_exclusive();
    wait_until_synced();
    let n = nodes();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init",
            &format!("{}?table=node_list", galera_url()),
            "--count",
            "5",
            "--size",
            "1k",
        ],
    );
    // A first node where nothing listens: refused, the second is used, and
    // the result says which node the run was on.
    let refusing = closed_port();
    let port = n[1].rsplit_once(':').unwrap().1;
    let url = format!(
        "mysql://root@{},{}/blobbench?table=node_list&nodes=127.0.0.3:{port}",
        refusing.addr(),
        n[1]
    );
    ok(
        d,
        &small(&["run", &url, "--verify", "--repeat", "1", "--json", "r.json"]),
    );
    let doc = json(&d.join("r.json"));
    let s = settings(&doc);
    assert_eq!(s["node"], n[1].as_str(), "{s}");
    assert!(
        s["nodes_skipped"]
            .as_str()
            .unwrap()
            .contains(&refusing.addr()),
        "{s}"
    );
    assert_eq!(doc["runs"][0]["repetitions"][0]["verified"], 5);

    // A frozen first node accepts the connection and says nothing: it is
    // given up after connect_timeout.
    let _revive = Revive(1);
    galera_control("freeze", 1, &[]);
    let list = Target::parse(&format!(
        "mysql://root@{},{}/blobbench?table=node_list&connect_timeout=1s",
        n[0], n[1]
    ))
    .unwrap();
    let start = Instant::now();
    let store = store::open(&list, Access::ReadOnly).unwrap();
    let took = start.elapsed();
    // The process remembers the node that answered: opening again, node 1
    // still frozen, goes to node 2 first and waits on nothing.
    let again_start = Instant::now();
    let again = store::open(&list, Access::ReadOnly).unwrap();
    let again_took = again_start.elapsed();
    galera_control("thaw", 1, &[]);
    let info = store.info();
    assert_eq!(info.settings["node"], n[1].as_str(), "{:?}", info.settings);
    let skipped = info.settings["nodes_skipped"].as_str().unwrap();
    assert!(skipped.contains("no answer within 1 s"), "{skipped}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert_eq!(info.settings["connect_timeout"], "1 s");
    let again = again.info();
    assert_eq!(
        again.settings["node"],
        n[1].as_str(),
        "{:?}",
        again.settings
    );
    assert!(
        again.settings.get("nodes_skipped").is_none(),
        "{:?}",
        again.settings
    );
    assert!(again_took < Duration::from_millis(900), "{again_took:?}");

    // Bad lists are one-line usage errors.
    for (bad, says) in [
        (
            format!("mysql://root@{},,{}/blobbench", n[0], n[1]),
            "is empty",
        ),
        (
            format!("{}?nodes=127.0.0.2:99999", galera_url()),
            "no port from 1 to 65535",
        ),
        (
            format!("mysql://root@{},{}/blobbench", n[0], n[0]),
            "named twice",
        ),
    ] {
        usage_error(d, &["run", &bad], says);
    }
}
