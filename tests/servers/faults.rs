//! Failures are data (issue 28): runs whose store fails under them keep
//! counting. Each test starts a real run, holds it at a point of its work
//! (`concurrent-batch`, see the product's pause module), breaks something
//! real while it is held (connections cut by the server, a cluster node
//! killed or frozen), lets it go, and checks: the run lasted its -t (within
//! a bound for a loaded 2-core machine), wrote its result with the failures
//! counted by class and the successes kept, exited 1 with one line, and every
//! blob it acknowledged reads back whole afterwards.

use crate::common::small;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, Held, bin, json, ok, servers_exclusive, servers_shared};
use crate::servers::databases::s3_cluster_control as s3_cluster;

/// How much longer than its -t a run may take on a loaded 2-core machine
/// with a fault in it (reconnections, the result written, the dataset put
/// right), well short of any timeout that would mean a hang.
const SLACK: Duration = Duration::from_secs(45);

/// Starts `blobbench args` in `dir` held at the `n`th batch of a concurrent
/// run, its output piped.
fn held_run(dir: &Path, args: &[&str], n: u32) -> Held {
    let mut command = bin();
    command
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Held::start(command, &format!("concurrent-batch@{n}"))
}

/// What a faulted run must show: exit 1, its last stderr line the summary
/// naming `class`, a result with failures and successes both counted, and a
/// duration within `-t` + [`SLACK`]. Returns the result's tables.
fn counted(
    out: &Output,
    took: Duration,
    run_for: Duration,
    result: &Path,
    classes: &[&str],
) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        took < run_for + SLACK,
        "took {took:?} for -t {run_for:?}: {stderr}"
    );
    assert!(took >= run_for, "ended before its -t: {took:?}: {stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(
        last.contains(" operations failed: ") && classes.iter().any(|c| last.contains(c)),
        "{last}\n{stdout}"
    );
    assert!(stdout.contains("failed as"), "the failures table: {stdout}");
    let doc = json(result);
    let t = doc["tables"].clone();
    let failed: u64 = t["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["failures"].as_array().cloned().unwrap_or_default())
        .map(|c| c["count"].as_u64().unwrap())
        .sum();
    let done: u64 = t["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["ops"].as_u64().unwrap())
        .sum();
    assert!(failed > 0 && done > 0, "{t}");
    // The run went on after the failures: completions in the tenths of a
    // second after the last failure.
    let activity = &t["activity"];
    let failed_at: Vec<u64> = serde_json::from_value(activity["failed"].clone()).unwrap();
    let completed: Vec<u64> = serde_json::from_value(activity["completed"].clone()).unwrap();
    let first_failure = failed_at.iter().position(|&n| n > 0).unwrap();
    assert!(
        completed[first_failure + 1..].iter().sum::<u64>() > 0,
        "nothing completed after the first failure: {activity}"
    );
    t
}

/// Restarts an S3 cluster process when dropped (a frozen one too), so the
/// cluster is whole for the next test whatever this one did.
struct RestartS3(&'static str);

impl Drop for RestartS3 {
    fn drop(&mut self) {
        s3_cluster("restart", self.0);
    }
}

/// A prefix of its own on the S3 cluster, with its topology URL and the
/// request timeout `timeout` (so a request to a dead or frozen server
/// costs that, not the default 10 s).
fn cluster_target(prefix: &str, timeout: &str) -> String {
    let url = std::env::var("BLOBBENCH_S3_CLUSTER_URL").expect("run scripts/test.sh");
    let topology = std::env::var("BLOBBENCH_S3_CLUSTER_TOPOLOGY").expect("run scripts/test.sh");
    let (base, query) = url.split_once('?').unwrap_or((&url, ""));
    format!(
        "{}/{prefix}-{}?{query}&topology={topology}&timeout={timeout}",
        base.trim_end_matches('/'),
        std::process::id()
    )
}

/// A concurrent mixed run on the S3 cluster held at its 100th batch, with
/// `fault` done while it is held, then let go; what it showed, checked by
/// [`counted`], and every blob read back whole afterwards (after `revive`).
fn s3_cluster_fault(
    prefix: &str,
    run_for: &str,
    fault: impl FnOnce(),
    classes: &[&str],
) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let target = cluster_target(prefix, "2s");
    common::ok_s3(d, &["init", &target, "--count", "200", "--size", "4k"]);
    let args = [
        "run",
        &target,
        "--threads",
        "4",
        "--mix",
        "read=70,update=30",
        "-t",
        run_for,
        "--json",
        "r.json",
    ];
    let mut command = bin();
    common::s3_env(&mut command)
        .current_dir(d)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let held = Held::start(command, "concurrent-batch@100");
    fault();
    let out = held.release_output();
    let run_for = humantime::parse_duration(run_for).unwrap();
    counted(&out, started.elapsed(), run_for, &d.join("r.json"), classes)
}

/// Every blob of `prefix`'s dataset reads back whole.
fn s3_reads_back(prefix: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let target = cluster_target(prefix, "10s");
    common::ok_s3(
        tmp.path(),
        &small(&["run", &target, "--verify", "--repeat", "1"]),
    );
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn a_volume_server_killed_mid_run_is_counted_and_recorded_as_the_cluster_changing() {
    let _servers = servers_exclusive();
    let revive = RestartS3("volume2");
    let t = s3_cluster_fault(
        "faults-kill",
        "5s",
        || {
            s3_cluster("kill", "volume2");
        },
        &["timeout", "server error"],
    );
    // The cluster's shape was read at the start and during the run: the
    // killed server is recorded, with when it was seen gone.
    let cluster = &t["cluster"];
    let changes = cluster["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c["change"].as_str().unwrap().contains("127.0.0.3")),
        "{cluster}"
    );
    drop(revive);
    s3_reads_back("faults-kill");
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn a_volume_server_frozen_for_seconds_costs_timeouts_and_the_run_recovers() {
    let _servers = servers_exclusive();
    let _revive = RestartS3("volume2");
    let t = s3_cluster_fault(
        "faults-freeze",
        "8s",
        || {
            s3_cluster("freeze", "volume2");
            // Thawed 3 s later by a thread of its own, while the run goes on.
            std::thread::spawn(|| {
                std::thread::sleep(Duration::from_secs(3));
                s3_cluster("thaw", "volume2");
            });
        },
        &["timeout", "server error"],
    );
    // Updates worked again once it was thawed: some completed in the last
    // second of the run.
    let completed: Vec<u64> = serde_json::from_value(t["activity"]["completed"].clone()).unwrap();
    assert!(
        completed.iter().rev().take(10).sum::<u64>() > 0,
        "{}",
        t["activity"]
    );
    s3_reads_back("faults-freeze");
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn the_s3_gateway_restarted_mid_run_costs_connections_and_the_run_goes_on() {
    let _servers = servers_exclusive();
    let _revive = RestartS3("s3");
    s3_cluster_fault(
        "faults-gateway",
        "5s",
        || {
            s3_cluster("restart", "s3");
        },
        &["connection", "timeout", "server error"],
    );
    s3_reads_back("faults-gateway");
}

/// Has PostgreSQL at `url` end every connection that last ran a statement
/// on `table`, as an administrator or a failover would (at least one);
/// returns the administrator's connection.
fn cut_connections(url: &str, table: &str) -> postgres::Client {
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let cut = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'",
            &[&table],
        )
        .unwrap();
    assert!(cut >= 1, "no connection of the run found");
    admin
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn connections_the_server_cuts_mid_run_are_counted_and_the_run_goes_on() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = std::env::var("BLOBBENCH_PG_URL").expect("BLOBBENCH_PG_URL: run scripts/test.sh");
    let table = format!("faults_cut_{}", std::process::id());
    let target = format!("{url}?table={table}");
    ok(d, &["init", &target, "--count", "400", "--size", "2k"]);
    let run_for = Duration::from_secs(4);
    let args = [
        "run",
        &target,
        "--threads",
        "2",
        "--mix",
        "read=70,update=30",
        "-t",
        "4s",
        "--json",
        "r.json",
    ];
    let started = Instant::now();
    let held = held_run(d, &args, 200);
    // Every connection of the run ended by the server, as an administrator
    // or a failover would.
    let mut admin = cut_connections(&url, &table);
    let out = held.release_output();
    let t = counted(
        &out,
        started.elapsed(),
        run_for,
        &d.join("r.json"),
        &["connection"],
    );
    assert!(!t["reconnects"].as_array().unwrap().is_empty(), "{t}");
    // Every blob the run acknowledged reads back whole.
    ok(d, &small(&["run", &target, "--verify", "--repeat", "1"]));
    admin
        .batch_execute(&format!("DROP TABLE IF EXISTS {table}"))
        .unwrap();
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn a_single_thread_run_whose_connection_is_cut_goes_on_with_its_next_repetition() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = std::env::var("BLOBBENCH_PG_URL").expect("BLOBBENCH_PG_URL: run scripts/test.sh");
    let table = format!("faults_rep_{}", std::process::id());
    let target = format!("{url}?table={table}");
    ok(d, &["init", &target, "--count", "200", "--size", "1k"]);
    let args = [
        "run", &target, "--update", "--repeat", "2", "--warmup", "0", "--json", "r.json",
    ];
    let mut command = bin();
    command
        .current_dir(d)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The first repetition's updates done, its transaction not committed:
    // the server ends the connection, so the commit fails.
    let held = Held::start(command, "repetition-before-commit@1");
    let mut admin = cut_connections(&url, &table);
    let out = held.release_output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or("");
    // 400 updates and the failed commit.
    assert!(
        last.contains("1 of 401 operations failed: 1 connection"),
        "{last}"
    );
    let r = &json(&d.join("r.json"))["runs"][0];
    assert_eq!(r["repetitions"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(
        r["repetitions"][1]["ops"], 200,
        "the second repetition whole: {r}"
    );
    assert_eq!(r["failures"][0]["count"], 1, "{r}");
    // The failed repetition's content is unknown: not read back, and said.
    let notes = r["notes"].to_string();
    assert!(notes.contains("not read back"), "{notes}");
    // The dataset still reads back whole (each blob one version or another).
    ok(d, &small(&["run", &target, "--verify", "--repeat", "1"]));
    admin
        .batch_execute(&format!("DROP TABLE IF EXISTS {table}"))
        .unwrap();
}

/// A concurrent mixed run on Galera through `target`, held at its 100th
/// batch, with `fault` done while it is held, then let go: its output, how
/// long it took, and its result's tables.
fn galera_fault(
    target: &str,
    run_for: Duration,
    fault: impl FnOnce(),
) -> (Output, Duration, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", target, "--count", "200", "--size", "2k"]);
    let t = format!("{}s", run_for.as_secs());
    let args = [
        "run",
        target,
        "--threads",
        "2",
        "--mix",
        "read=70,update=30",
        "-t",
        &t,
        "--json",
        "r.json",
    ];
    let started = Instant::now();
    let held = held_run(d, &args, 100);
    fault();
    let out = held.release_output();
    let took = started.elapsed();
    let tables = json(&d.join("r.json"))["tables"].clone();
    (out, took, tables)
}

/// The changes the run saw of the cluster's shape, one line each.
fn shape_changes(t: &serde_json::Value) -> Vec<String> {
    t["cluster"]["changes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["change"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn a_galera_node_the_run_does_not_use_killed_mid_run_is_recorded() {
    let _servers = servers_exclusive();
    let url = std::env::var("BLOBBENCH_GALERA_URL").expect("run scripts/test.sh");
    let target = format!("{url}?table=faults_other_{}", std::process::id());
    let revive = crate::servers::galera::Revive(2);
    let run_for = Duration::from_secs(6);
    let (out, took, t) = galera_fault(&target, run_for, || {
        crate::servers::galera::galera_control("kill", 2, &[]);
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        took >= run_for && took < run_for + SLACK,
        "{took:?}: {stderr}"
    );
    // The run's own node went on; whether a write failed while the others
    // noticed the dead node is counted, and the exit status follows it.
    let failed: u64 = t["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["failures"].as_array().cloned().unwrap_or_default())
        .map(|c| c["count"].as_u64().unwrap())
        .sum();
    assert_eq!(out.status.code(), Some(i32::from(failed > 0)), "{stderr}");
    let ops: u64 = t["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["ops"].as_u64().unwrap())
        .sum();
    assert!(ops > 0, "{t}");
    // The cluster no longer has node 2, and the result says so with when.
    let node2 = crate::servers::galera::nodes()[1].clone();
    let changes = shape_changes(&t);
    assert!(
        changes.iter().any(|c| c.contains(&node2)),
        "{changes:?}: {stdout}"
    );
    assert!(
        stdout.contains(&format!("warning: cluster: node {node2}")),
        "{stdout}"
    );
    drop(revive);
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &small(&["run", &target, "--verify", "--repeat", "1"]),
    );
}

#[test]
#[ignore = "needs Galera: run scripts/test.sh"]
fn the_galera_node_a_run_uses_killed_mid_run_sends_it_to_another_node() {
    let _servers = servers_exclusive();
    let nodes = crate::servers::galera::nodes();
    let target = format!(
        "mysql://root@{}/blobbench?table=faults_own_{}",
        nodes.join(","),
        std::process::id()
    );
    let revive = crate::servers::galera::Revive(1);
    let run_for = Duration::from_secs(6);
    let (out, took, t) = galera_fault(&target, run_for, || {
        crate::servers::galera::galera_control("kill", 1, &[]);
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        took >= run_for && took < run_for + SLACK,
        "{took:?}: {stderr}"
    );
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(
        last.contains("operations failed: ") && last.contains("connection"),
        "{last}"
    );
    // Every worker went on on another node, and the result says which.
    let reconnects = t["reconnects"].as_array().unwrap();
    assert!(
        reconnects
            .iter()
            .any(|r| r["to"] == nodes[1].as_str() || r["to"] == nodes[2].as_str()),
        "{t}"
    );
    assert!(
        shape_changes(&t).iter().any(|c| c.contains(&nodes[0])),
        "{t}"
    );
    drop(revive);
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &small(&["run", &target, "--verify", "--repeat", "1"]),
    );
}
