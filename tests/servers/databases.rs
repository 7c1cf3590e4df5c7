//! End-to-end tests against real servers. `scripts/test.sh` starts a
//! throwaway PostgreSQL and MariaDB and sets BLOBBENCH_PG_URL and
//! BLOBBENCH_MYSQL_URL; run alone, these tests are ignored.

use crate::common::small;
use crate::common::{
    PATIENCE, bin, closed_port, json, ok, output, run, s3_env, servers_exclusive, servers_shared,
    shape_when, succeeded, usage_error,
};

// Every test here holds the servers' lock (common::SERVERS) shared; the lob
// suite's tests hold it exclusively: they use the same tables (lob_*), and
// two of them restart the servers or change a global setting.

fn pg_url() -> String {
    std::env::var("BLOBBENCH_PG_URL").expect("BLOBBENCH_PG_URL: run scripts/test.sh")
}

fn mysql_url() -> String {
    std::env::var("BLOBBENCH_MYSQL_URL").expect("BLOBBENCH_MYSQL_URL: run scripts/test.sh")
}

/// init, verified reads, verified updates and the result's server facts.
fn full_cycle(dir: &std::path::Path, target: &str, can_update: bool) -> serde_json::Value {
    ok(
        dir,
        &[
            "init",
            target,
            "--count",
            "120",
            "--size",
            "30k",
            "--variance",
            "10k",
        ],
    );
    ok(
        dir,
        &small(&[
            "run", target, "--random", "--verify", "--repeat", "2", "--json", "r.json",
        ]),
    );
    let doc = json(&dir.join("r.json"));
    let r = &doc["runs"][0];
    assert_eq!(r["repetitions"][1]["verified"], 120, "{target}");
    assert!(
        r["space_bytes"].as_u64().unwrap() > 120 * 20_000,
        "{target}"
    );
    assert_eq!(r["repetitions"][0]["cache"]["state"], "warm");
    if can_update {
        let out = ok(
            dir,
            &small(&[
                "run", target, "--random", "--update", "--verify", "--count", "40", "--repeat", "1",
            ]),
        );
        assert!(out.contains("verified 40 updated blobs"), "{target}: {out}");
        // And a later read sees the new content everywhere.
        ok(dir, &small(&["run", target, "--verify", "--repeat", "1"]));
    }
    doc
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn postgres_bytea_and_large_objects() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A database of its own: the other tests create large objects too, and
    // the orphan count below must see only this test's.
    let mut admin = postgres::Client::connect(&pg_url(), postgres::NoTls).unwrap();
    // Separate statements: CREATE DATABASE cannot run inside a transaction block.
    admin
        .batch_execute("DROP DATABASE IF EXISTS blobbench_pg_test")
        .unwrap();
    admin
        .batch_execute("CREATE DATABASE blobbench_pg_test")
        .unwrap();
    let base = pg_url();
    let url = format!("{}/blobbench_pg_test", &base[..base.rfind('/').unwrap()]);
    let bytea = full_cycle(d, &format!("{url}?mode=bytea"), true);
    let settings = &bytea["runs"][0]["store"]["settings"];
    assert!(
        settings["server_version"]
            .as_str()
            .unwrap()
            .starts_with("15")
    );
    assert!(settings["shared_buffers"].is_string());
    assert!(settings["synchronous_commit"].is_string());
    full_cycle(d, &format!("{url}?mode=lo"), true);

    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    // bytea is stored out of line and uncompressed (storage EXTERNAL = 'e').
    let storage: i8 = client
        .query_one(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'largeobjects'::regclass AND attname = 'largedata'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(storage as u8, b'e');
    // Updates and a new init unlink what they replace: no orphan large objects.
    ok(
        d,
        &[
            "init",
            &format!("{url}?mode=lo"),
            "--count",
            "30",
            "--size",
            "5k",
        ],
    );
    let objects: i64 = client
        .query_one("SELECT count(*) FROM pg_largeobject_metadata", &[])
        .unwrap()
        .get(0);
    assert_eq!(objects, 30);

    // A table blobbench did not make is never dropped.
    client
        .batch_execute("CREATE TABLE IF NOT EXISTS precious (id bigint, largedata bytea)")
        .unwrap();
    usage_error(
        d,
        &["init", &format!("{url}?table=precious"), "--count", "5"],
        "not made by blobbench",
    );
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'precious'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    // Reads cannot write: the server refuses writes from a read-only run's session,
    // and the manifest is untouched by a read.
    let before: String = client
        .query_one(
            "SELECT value FROM blobbench_meta WHERE tbl = 'largeobjects' AND name = 'manifest'",
            &[],
        )
        .unwrap()
        .get(0);
    ok(
        d,
        &small(&["run", &format!("{url}?mode=bytea"), "--repeat", "1"]),
    );
    let after: String = client
        .query_one(
            "SELECT value FROM blobbench_meta WHERE tbl = 'largeobjects' AND name = 'manifest'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(before, after);
    // --cold has no meaning for a server.
    usage_error(
        d,
        &["run", &format!("{url}?mode=bytea"), "--cold"],
        "--cold",
    );
}

#[test]
#[ignore = "needs MariaDB: run scripts/test.sh"]
fn mariadb_every_engine() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = mysql_url();
    let innodb = full_cycle(d, &format!("{url}?engine=innodb"), true);
    let settings = &innodb["runs"][0]["store"]["settings"];
    assert!(settings["version"].as_str().unwrap().contains("MariaDB"));
    assert!(settings["innodb_buffer_pool_size"].is_string());
    assert!(settings["innodb_flush_log_at_trx_commit"].is_string());
    assert!(settings["max_allowed_packet"].is_string());
    assert_eq!(settings["engine"], "InnoDB");
    full_cycle(d, &format!("{url}?engine=myisam"), true);
    full_cycle(d, &format!("{url}?engine=aria"), true);
    let archive = format!("{url}?engine=archive");
    full_cycle(d, &archive, false);
    // ARCHIVE cannot update: refused before anything runs, data unchanged.
    usage_error(d, &["run", &archive, "--update", "--count", "5"], "ARCHIVE");
    ok(d, &small(&["run", &archive, "--verify", "--repeat", "1"]));

    // A blob larger than max_allowed_packet: one clear line naming the setting.
    // (The server was started with 64M; 70 MB does not fit.)
    let out = run(
        d,
        &[
            "init",
            &format!("{url}?engine=innodb&table=too_big"),
            "--count",
            "1",
            "--size",
            "70M",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("max_allowed_packet"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn unreachable_servers_and_bad_urls_are_one_line_errors() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A port nothing listens on while this test runs.
    let refusing = closed_port();
    let closed = refusing.addr();
    usage_error(
        d,
        &["run", &format!("postgres://postgres@{closed}/blobbench")],
        "cannot connect",
    );
    let mysql = format!("mysql://root:hunter2@{closed}/blobbench");
    usage_error(d, &["run", &mysql], "cannot connect");
    // The password never appears in messages.
    let out = run(d, &small(&["run", &mysql]));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
    usage_error(
        d,
        &["run", &format!("{}?mode=toast", pg_url())],
        "mode=bytea or mode=lo",
    );
    usage_error(
        d,
        &["run", &format!("{}?engine=memory", mysql_url())],
        "engine=innodb",
    );
    usage_error(
        d,
        &["run", &format!("{}?table=no_such_table", pg_url())],
        "does not exist",
    );
}

#[test]
#[ignore = "needs PostgreSQL, MariaDB and an S3 server: run scripts/test.sh"]
fn lob_suite_measures_every_system() {
    let _servers = servers_exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let s3 = std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
    // The objects in a prefix of this test and process (the suite adds
    // "lob/" inside it).
    let (base, query) = s3.split_once('?').unwrap_or((&s3, ""));
    let s3 = format!(
        "{}/servers-lob-{}?{query}",
        base.trim_end_matches('/'),
        std::process::id()
    );
    let out = lob_suite(
        d,
        &[
            "--pg",
            &pg_url(),
            "--mysql",
            &mysql_url(),
            "--s3",
            &s3,
            "--sizes",
            "1K,3999,100K,2M",
            "--per-size",
            "4",
            "--json",
            "lob.json",
        ],
        Restarts::Withheld,
    );
    for system in [
        "sqlite",
        "dir",
        "postgres bytea",
        "postgres lo",
        "mariadb innodb",
        "mariadb myisam",
        "mariadb aria",
        "mariadb archive",
        "s3",
    ] {
        assert!(out.contains(system), "{system} missing:\n{out}");
    }
    assert!(!out.contains("skipped"), "{out}");
    let doc = json(&d.join("lob.json"));
    let samples = doc["tables"]["lob"].as_array().unwrap();
    assert_eq!(samples.len(), 9 * 4, "9 systems x 4 sizes");
    for s in samples {
        assert_eq!(s["write_ns"].as_array().unwrap().len(), 4);
        assert_eq!(s["read_ns"].as_array().unwrap().len(), 4);
    }
    assert_eq!(doc["tables"]["best_size"].as_array().unwrap().len(), 9);
    let stores = doc["tables"]["stores"].as_array().unwrap();
    assert!(
        stores
            .iter()
            .any(|s| s["store"]["settings"]["server_version"].is_string())
    );
    assert!(
        stores
            .iter()
            .any(|s| s["store"]["settings"]["innodb_flush_log_at_trx_commit"].is_string())
    );
}

/// The durability each system's stores ran with, from the lob result.
fn durability(doc: &serde_json::Value, system: &str) -> String {
    doc["tables"]["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["system"] == system)
        .unwrap_or_else(|| panic!("{system} not measured"))["durability"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The variables through which `scripts/start-postgres.sh` and
/// `start-mariadb.sh` tell the lob suite how to restart the servers they
/// started, which is also what lets it change their global settings. The
/// suite uses a restart command only for the server at the URL beside it.
const RESTARTS: [(&str, &str); 2] = [
    ("BLOBBENCH_PG_RESTART", "BLOBBENCH_PG_URL"),
    ("BLOBBENCH_MYSQL_RESTART", "BLOBBENCH_MYSQL_URL"),
];

/// Whether a lob run is given [`RESTARTS`].
#[derive(Clone, Copy)]
enum Restarts {
    /// Given, with the servers' URLs, from this process's environment
    /// (asserted present): the suite may restart the servers and set their
    /// global settings.
    Given,
    /// Removed from the run's environment, whatever the tests inherited:
    /// the suite leaves the servers and their settings alone.
    Withheld,
}

/// `blobbench suite lob ARGS` in `d`, with the S3 credentials and with or
/// without the restart commands; its output once it succeeded.
fn lob_suite(d: &std::path::Path, args: &[&str], restarts: Restarts) -> String {
    let mut command = bin();
    command.current_dir(d).args(["suite", "lob"]).args(args);
    s3_env(&mut command);
    for (restart, url) in RESTARTS {
        match restarts {
            Restarts::Given => {
                for name in [restart, url] {
                    let value = std::env::var(name).unwrap_or_else(|_| {
                        panic!(
                            "{name}: run scripts/test.sh (the start script it sources exports it)"
                        )
                    });
                    assert!(!value.trim().is_empty(), "{name} is empty");
                    command.env(name, value);
                }
            }
            Restarts::Withheld => {
                command.env_remove(restart);
            }
        }
    }
    succeeded(args, output(&mut command))
}

/// The lob suite on both servers at two sizes, allowed to restart them and
/// set their global settings.
fn lob(d: &std::path::Path, extra: &[&str], json_file: &str) -> String {
    let (pg, my) = (pg_url(), mysql_url());
    let mut args = vec![
        "--pg",
        &pg,
        "--mysql",
        &my,
        "--sizes",
        "1K,50K",
        "--per-size",
        "3",
        "--json",
        json_file,
    ];
    args.extend_from_slice(extra);
    lob_suite(d, &args, Restarts::Given)
}

fn innodb_flush_log() -> String {
    use mysql::prelude::Queryable;
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&mysql_url()).unwrap()).unwrap();
    let v: Option<String> = conn
        .query_first("SELECT CAST(@@global.innodb_flush_log_at_trx_commit AS CHAR)")
        .unwrap();
    v.unwrap()
}

/// MariaDB's global innodb_flush_log_at_trx_commit as it was when this was
/// made, set back however the test ends: the lob suite sets it for its
/// --logging and leaves it so.
struct FlushLogRestored(String);

impl FlushLogRestored {
    fn now() -> FlushLogRestored {
        FlushLogRestored(innodb_flush_log())
    }
}

impl Drop for FlushLogRestored {
    fn drop(&mut self) {
        use mysql::prelude::Queryable;
        // A restart may still be under way if the suite failed midway: a
        // value that cannot be set back is reported, not a second panic.
        let set =
            mysql::Conn::new(mysql::Opts::from_url(&mysql_url()).unwrap()).and_then(|mut c| {
                c.query_drop(format!(
                    "SET GLOBAL innodb_flush_log_at_trx_commit = {}",
                    self.0
                ))
            });
        if let Err(e) = set {
            eprintln!(
                "could not set innodb_flush_log_at_trx_commit back to {}: {e}",
                self.0
            );
        }
    }
}

/// --logging off is the paper's "logging disabled" on every system, --logging
/// on is durable: each system's settings as read back, in the output and the
/// result; the engines without a redo log say so.
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn lob_logging_off_and_on_show_what_each_system_ran_with() {
    let _servers = servers_exclusive();
    let _restored = FlushLogRestored::now();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = lob(d, &["--logging", "off"], "off.json");
    let doc = json(&d.join("off.json"));
    assert_eq!(doc["tables"]["logging"], "off");
    for (system, words) in [
        ("sqlite", "journal_mode=off, synchronous=off"),
        ("dir", "no fsync"),
        ("postgres bytea", "synchronous_commit=off (this session)"),
        ("postgres lo", "synchronous_commit=off (this session)"),
        // The test servers are our scripts' own: the global is set there.
        ("mariadb innodb", "innodb_flush_log_at_trx_commit=0"),
        ("mariadb myisam", "MyISAM has no redo log"),
        ("mariadb aria", "Aria has no redo log"),
        ("mariadb archive", "ARCHIVE has no redo log"),
    ] {
        let got = durability(&doc, system);
        assert!(got.contains(words), "{system}: {got}");
        // The same settings at both sizes (a change would be appended).
        assert!(!got.contains("but at"), "{system}: {got}");
        assert!(
            out.contains(&format!("  {system}: {got}")),
            "{system}:\n{out}"
        );
    }
    // Read back from the servers themselves, not just what was asked.
    let stores = doc["tables"]["stores"].as_array().unwrap();
    let settings = |system: &str| {
        stores.iter().find(|s| s["system"] == system).unwrap()["store"]["settings"].clone()
    };
    assert_eq!(settings("postgres bytea")["synchronous_commit"], "off");
    assert_eq!(
        settings("mariadb innodb")["innodb_flush_log_at_trx_commit"],
        "0"
    );
    assert_eq!(innodb_flush_log(), "0");

    let out = lob(d, &["--logging", "on"], "on.json");
    let doc = json(&d.join("on.json"));
    assert_eq!(doc["tables"]["logging"], "on");
    for (system, words) in [
        ("sqlite", "journal_mode=delete, synchronous=full"),
        ("dir", "fsync of the folder"),
        (
            "postgres bytea",
            "synchronous_commit=on (this session): each commit waits",
        ),
        (
            "mariadb innodb",
            "innodb_flush_log_at_trx_commit=1: the log is flushed to disk at every commit",
        ),
        ("mariadb myisam", "MyISAM has no redo log"),
    ] {
        let got = durability(&doc, system);
        assert!(got.contains(words), "{system}: {got}");
        assert!(out.contains(&got), "{system}:\n{out}");
    }
    assert_eq!(innodb_flush_log(), "1");
}

/// When each server started, in seconds since the epoch.
fn server_start_times() -> (f64, f64) {
    use mysql::prelude::Queryable;
    let mut pg = postgres::Client::connect(&pg_url(), postgres::NoTls).unwrap();
    let pg_start: f64 = pg
        .query_one(
            "SELECT extract(epoch FROM pg_postmaster_start_time())::float8",
            &[],
        )
        .unwrap()
        .get(0);
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&mysql_url()).unwrap()).unwrap();
    let my_start: Option<f64> = my
        .query_first(
            "SELECT CAST(UNIX_TIMESTAMP() - VARIABLE_VALUE AS DOUBLE) FROM information_schema.GLOBAL_STATUS \
             WHERE VARIABLE_NAME = 'UPTIME'",
        )
        .unwrap();
    (pg_start, my_start.unwrap())
}

/// --cold restarts the test servers (our scripts started them) before each
/// size's reads, and the reads still verify (a failed verification fails
/// the run).
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn lob_cold_restarts_the_servers_and_reads_still_verify() {
    let _servers = servers_exclusive();
    let _restored = FlushLogRestored::now();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let before = server_start_times();
    // MariaDB's start time is known to the second (UNIX_TIMESTAMP() less
    // UPTIME, both whole seconds of the same clock): after this pause any
    // restart starts in a later second, however slow the machine.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = lob(d, &["--cold"], "cold.json");
    assert!(out.contains("cold reads (--cold)"), "{out}");
    assert!(out.contains("restarted PostgreSQL: pid"), "{out}");
    assert!(out.contains("restarted MariaDB: pid"), "{out}");
    let doc = json(&d.join("cold.json"));
    assert_eq!(doc["tables"]["cold"], true);
    let samples = doc["tables"]["lob"].as_array().unwrap();
    assert_eq!(samples.len(), 8 * 2, "every system at both sizes");
    for s in samples {
        assert_eq!(s["read_ns"].as_array().unwrap().len(), 3);
        let how = s["cold"].as_str().unwrap();
        let system = s["system"].as_str().unwrap();
        if system.starts_with("postgres") || system.starts_with("mariadb") {
            // "restarted X: pid OLD -> NEW in T s": a new process.
            let pids = how
                .split("pid ")
                .nth(1)
                .unwrap()
                .split(" in ")
                .next()
                .unwrap();
            let (old, new) = pids.split_once(" -> ").unwrap();
            assert_ne!(old, new, "{system}: {how}");
        }
    }
    let after = server_start_times();
    assert!(
        after.0 > before.0,
        "PostgreSQL start time {before:?} -> {after:?}"
    );
    assert!(
        after.1 > before.1,
        "MariaDB start time {before:?} -> {after:?}"
    );
}

/// The Store API itself on every server store: insert, read, update, delete,
/// batches in a transaction, space.
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn every_store_operation_on_every_server_store() {
    let _servers = servers_shared();
    use blobbench::dataset::{DatasetSpec, Manifest};
    use blobbench::store::{self, Access, SessionOptions};
    use blobbench::target::Target;

    let spec = DatasetSpec::fixed(6, 40_000, 3);
    let targets = [
        format!("{}?mode=bytea&table=api_bytea", pg_url()),
        format!("{}?mode=lo&table=api_lo", pg_url()),
        format!("{}?engine=innodb&table=api_innodb", mysql_url()),
        format!("{}?engine=myisam&table=api_myisam", mysql_url()),
        format!("{}?engine=aria&table=api_aria", mysql_url()),
    ];
    for text in &targets {
        let target = Target::parse(text).unwrap();
        let mut s = store::create(&target, &Manifest::new(spec.clone())).unwrap();
        {
            let mut session = s.session(SessionOptions::default()).unwrap();
            session.begin().unwrap();
            let mut buf = Vec::new();
            for k in 1..=6 {
                spec.fill(k, 0, &mut buf);
                session.insert(k, &buf).unwrap();
            }
            session.commit().unwrap();
            spec.fill(2, 9, &mut buf);
            session.update(2, &buf).unwrap();
            session.delete(5).unwrap();
            let mut got = Vec::new();
            session.read(2, &mut |d| got = d.to_vec()).unwrap();
            assert_eq!(got, buf, "{text}: update then read");
            assert!(session.read(5, &mut |_| ()).is_err(), "{text}: deleted");
        }
        assert!(s.space_used().unwrap() >= 5 * 40_000, "{text}");
        drop(s);
        // A read-only store refuses writes.
        let mut ro = store::open(&target, Access::ReadOnly).unwrap();
        let catalog = ro.catalog().unwrap();
        assert_eq!(
            (catalog.first_key, catalog.last_key, catalog.count),
            (1, 6, 5),
            "{text}"
        );
        let mut session = ro.session(SessionOptions::default()).unwrap();
        assert!(session.insert(7, b"x").is_err(), "{text}: read-only");
    }
}

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn servers_take_concurrent_mixes_with_a_connection_per_thread() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (pg, my) = (pg_url(), mysql_url());
    for target in [
        format!("{pg}?mode=bytea&table=conc_bytea"),
        format!("{pg}?mode=lo&table=conc_lo"),
        format!("{my}?engine=innodb&table=conc_innodb"),
        format!("{my}?engine=myisam&table=conc_myisam"),
    ] {
        ok(d, &["init", &target, "--count", "80", "--size", "4k"]);
        for batch in ["1", "4"] {
            ok(
                d,
                &small(&[
                    "run",
                    &target,
                    "--threads",
                    "4",
                    "--mix",
                    "read=50,update=20,insert=10,delete=10,rmw=10",
                    "--keys",
                    "zipf",
                    "--count",
                    "400",
                    "--batch",
                    batch,
                    "--json",
                    "c.json",
                ]),
            );
            let t = &json(&d.join("c.json"))["tables"];
            assert!(t["verified"].as_u64().unwrap() > 50, "{target}: {t}");
            for k in t["kinds"].as_array().unwrap() {
                let o = &k["outcomes"];
                assert_eq!(
                    (&o["torn"], &o["stale"]),
                    (&0.into(), &0.into()),
                    "{target}: {k}"
                );
            }
        }
        // Whole afterwards: every key read back and checked.
        ok(d, &small(&["run", &target, "--verify", "--repeat", "1"]));
    }
}

// Faults: a frozen server, a lost connection, a killed volume server. The
// helpers below are what the fault tests of other areas use too.

/// Whether process `pid` runs (a zombie, left for its parent, does not; a
/// frozen one does).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// The pid a pid file names (its first line).
pub(crate) fn pid_in(file: &std::path::Path) -> u32 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}: no pid in {text:?}", file.display()))
}

/// Every process whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|s| {
                    let rest = s.rsplit_once(") ")?.1.to_string();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// Whether process `pid` is stopped (state T in /proc), or gone: exited
/// (Z, X) counts as gone, since a child that exits while its frozen parent
/// cannot reap it (a PostgreSQL backend ending just then) stays a zombie
/// until the parent is thawed, and answers nothing meanwhile.
fn stopped_or_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_or(true, |s| state_in(&s).is_some_and(|c| "TZX".contains(c)))
}

/// The state letter of a /proc/PID/stat line (after the command's ")").
fn state_in(stat: &str) -> Option<char> {
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

/// A child that has exited but is not reaped yet (a zombie, as a
/// PostgreSQL backend ending while its frozen postmaster cannot reap it)
/// counts as stopped: waiting for it to stop would wait for ever.
#[test]
#[ignore = "servers tier (a check of its own helper): run scripts/test.sh --servers"]
fn an_exited_child_not_yet_reaped_counts_as_stopped() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    let start = std::time::Instant::now();
    let state = || state_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap());
    while state() != Some('Z') {
        assert!(
            start.elapsed() < crate::common::PATIENCE,
            "{pid} never exited"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        stopped_or_gone(pid),
        "a zombie is not a process that answers"
    );
    child.wait().unwrap();
}

/// Processes held with SIGSTOP until this is dropped (SIGCONT), however
/// the test ends, so a failed assertion never leaves a server frozen for
/// the tests after it.
pub(crate) struct Frozen(Vec<u32>);

impl Frozen {
    /// Freezes `pids` (SIGSTOP) and returns once the kernel reports each
    /// of them stopped (a signal is delivered after kill(2) returns: on a
    /// loaded machine a process may still answer in between).
    pub(crate) fn new(pids: Vec<u32>) -> Frozen {
        for &pid in &pids {
            // SAFETY: kill(2) with a pid this test read from its server's
            // pid file (or that server's children) and a signal number.
            assert_eq!(
                unsafe { libc::kill(pid as i32, libc::SIGSTOP) },
                0,
                "SIGSTOP {pid}"
            );
        }
        let frozen = Frozen(pids);
        let start = std::time::Instant::now();
        while !frozen.0.iter().all(|&pid| stopped_or_gone(pid)) {
            assert!(
                start.elapsed() < crate::common::PATIENCE,
                "never stopped: {:?}",
                frozen.0
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        frozen
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: as in `new`.
            unsafe { libc::kill(pid as i32, libc::SIGCONT) };
        }
    }
}

fn env_path(name: &str) -> std::path::PathBuf {
    std::env::var_os(name)
        .unwrap_or_else(|| panic!("{name}: run scripts/test.sh"))
        .into()
}

/// Reads key 1 through `session`, timing it.
fn timed_read(
    session: &mut dyn blobbench::store::Session,
) -> (Result<(), blobbench::error::Error>, std::time::Duration) {
    let start = std::time::Instant::now();
    let done = session.read(1, &mut |_| ());
    (done, start.elapsed())
}

/// The most a timeout of 1 s may overrun on a loaded 2-core machine.
const TIMEOUT_SLACK: std::time::Duration = std::time::Duration::from_secs(5);

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn a_frozen_server_fails_an_operation_as_a_timeout_within_its_bound() {
    use blobbench::error::FailureClass;
    use blobbench::store::{self, Access, SessionOptions};
    use blobbench::target::Target;
    use std::time::Duration;

    // Frozen servers: no other test may use them meanwhile.
    let _servers = servers_exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let servers = [
        (
            format!("{}?table=frozen_timeout&timeout=1s", mysql_url()),
            env_path("BLOBBENCH_MYSQL_DIR").join("mysqld.pid"),
        ),
        (
            format!("{}?table=frozen_timeout&timeout=1s", pg_url()),
            env_path("BLOBBENCH_PG_DIR").join("data/postmaster.pid"),
        ),
    ];
    for (url, pid_file) in servers {
        ok(d, &["init", &url, "--count", "5", "--size", "1k"]);
        let target = Target::parse(&url).unwrap();
        let mut s = store::open(&target, Access::ReadOnly).unwrap();
        assert_eq!(s.info().settings["timeout"], "1 s", "{url}");
        let mut session = s.session(SessionOptions::default()).unwrap();
        assert!(timed_read(session.as_mut()).0.is_ok(), "{url}");
        // The server and (PostgreSQL) the backend serving this connection.
        let server = pid_in(&pid_file);
        let mut pids = vec![server];
        pids.extend(children(server));
        let frozen = Frozen::new(pids);
        let (done, took) = timed_read(session.as_mut());
        let err = done.expect_err(&format!("{url}: a frozen server answers nothing"));
        assert_eq!(err.class(), FailureClass::Timeout, "{url}: {err}");
        assert!(
            err.to_string().contains("timeout after 1 s"),
            "{url}: {err}"
        );
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(1) + TIMEOUT_SLACK,
            "{url}: the timeout took {took:?}"
        );
        // The connection is spent: the next operation fails at once.
        let (done, took) = timed_read(session.as_mut());
        let err = done.expect_err("the connection timed out");
        assert_eq!(err.class(), FailureClass::Connection, "{url}: {err}");
        assert!(took < Duration::from_millis(500), "{url}: {took:?}");
        drop(frozen);
        drop(session);
        drop(s);
        // Thawed, a new connection works.
        let mut s = store::open(&target, Access::ReadOnly).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        assert!(timed_read(session.as_mut()).0.is_ok(), "{url}");
    }
}

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn a_connection_the_server_ends_is_a_connection_failure() {
    use blobbench::error::FailureClass;
    use blobbench::store::{self, Access, SessionOptions};
    use blobbench::target::Target;
    use mysql::prelude::Queryable;

    // The MariaDB side ends every other idle connection to the database.
    let _servers = servers_exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // PostgreSQL: the connection is found by its application_name, which
    // the target passes to the client.
    let pg = format!(
        "{}?table=ended_connection&application_name=blobbench_ended",
        pg_url()
    );
    let my = format!("{}?table=ended_connection", mysql_url());
    for url in [&pg, &my] {
        ok(d, &["init", url, "--count", "5", "--size", "1k"]);
        let target = Target::parse(url).unwrap();
        let mut s = store::open(&target, Access::ReadOnly).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        assert!(timed_read(session.as_mut()).0.is_ok(), "{url}");
        if url == &pg {
            let mut admin = postgres::Client::connect(&pg_url(), postgres::NoTls).unwrap();
            let ended = admin
                .query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = 'blobbench_ended'",
                    &[],
                )
                .unwrap();
            assert_eq!(ended.len(), 1);
        } else {
            let mut admin = mysql::Conn::new(
                mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&mysql_url()).unwrap())
                    .prefer_socket(false),
            )
            .unwrap();
            // MariaDB marks a connection Sleep only after it has sent the
            // reply, so the session's read can return before its row says
            // so: wait for it (at most what a loaded machine takes).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let ids = loop {
                let ids: Vec<u64> = admin
                    .query(
                        "SELECT id FROM information_schema.processlist \
                         WHERE db = 'blobbench' AND command = 'Sleep' AND id <> CONNECTION_ID()",
                    )
                    .unwrap();
                if !ids.is_empty() || std::time::Instant::now() > deadline {
                    break ids;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            };
            assert!(
                !ids.is_empty(),
                "the session's connection never showed idle"
            );
            for id in ids {
                admin.query_drop(format!("KILL {id}")).unwrap();
            }
        }
        let err = timed_read(session.as_mut())
            .0
            .expect_err("the connection was ended");
        assert_eq!(err.class(), FailureClass::Connection, "{url}: {err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn writes_are_described_as_the_server_does_them() {
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (url, words) in [
        (
            format!("{}?table=described", pg_url()),
            "PostgreSQL UPDATE of a bytea row",
        ),
        (
            format!("{}?mode=lo&table=described_lo", pg_url()),
            "PostgreSQL large object replaced",
        ),
        (
            format!("{}?table=described", mysql_url()),
            "MariaDB InnoDB UPDATE of a LONGBLOB row",
        ),
        (
            format!("{}?engine=myisam&table=described_myisam", mysql_url()),
            "MariaDB MyISAM UPDATE of a LONGBLOB row, no transactions",
        ),
    ] {
        ok(d, &["init", &url, "--count", "5", "--size", "1k"]);
        ok(
            d,
            &small(&["run", &url, "--update", "--repeat", "1", "--json", "w.json"]),
        );
        let doc = json(&d.join("w.json"));
        let method = doc["runs"][0]["write_method"].as_str().unwrap().to_string();
        assert!(method.starts_with(words), "{url}: {method}");
        assert!(
            !method.contains("SQLite") && !method.contains("journal_mode"),
            "{method}"
        );
        if url.contains("postgres") {
            assert!(method.contains("synchronous_commit=on"), "{method}");
        } else if !url.contains("myisam") {
            assert!(
                method.contains("innodb_flush_log_at_trx_commit="),
                "{method}"
            );
        }
    }
}

/// `scripts/start-s3-cluster.sh --WHAT NAME DIR` on the cluster scripts/test.sh
/// started; its output once it succeeded.
pub(crate) fn s3_cluster_control(what: &str, name: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/start-s3-cluster.sh");
    let dir = env_path("BLOBBENCH_S3_CLUSTER_DIR");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg(format!("--{what}"))
        .arg(name)
        .arg(&dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} --{what} {name}: {text}");
    text
}

/// Restarts a SeaweedFS process however the test ends, unless it runs.
struct ReviveS3(&'static str);

impl Drop for ReviveS3 {
    fn drop(&mut self) {
        let pid_file = env_path("BLOBBENCH_S3_CLUSTER_DIR").join(format!("{}.pid", self.0));
        let pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        if !pid.is_some_and(alive) {
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/start-s3-cluster.sh");
            let out = std::process::Command::new("bash")
                .args([script, "--restart", self.0])
                .arg(env_path("BLOBBENCH_S3_CLUSTER_DIR"))
                .stdin(std::process::Stdio::null())
                .output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) {
                eprintln!("restarting {} failed: {out:?}", self.0);
            }
        }
    }
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn the_s3_clusters_shape_follows_a_killed_volume_server() {
    use blobbench::store::cluster::ClusterShape;
    use blobbench::target::Target;
    use std::time::Duration;

    // A volume server goes away: no other server test meanwhile.
    let _servers = servers_exclusive();
    let url = std::env::var("BLOBBENCH_S3_CLUSTER_URL").expect("run scripts/test.sh");
    let topology = std::env::var("BLOBBENCH_S3_CLUSTER_TOPOLOGY").expect("run scripts/test.sh");
    let target = Target::parse(&format!("{url}&topology={topology}")).unwrap();
    let volumes = |shape: &blobbench::store::cluster::ClusterShape| -> Vec<(String, String)> {
        shape
            .nodes
            .iter()
            .filter(|n| n.role == "volume")
            .map(|n| (n.address.clone(), n.state.clone()))
            .collect()
    };
    let up = |shape: &ClusterShape, role: &str| {
        shape
            .nodes
            .iter()
            .any(|n| n.role == role && n.state == "up")
    };
    let whole = |shape: &ClusterShape| {
        shape.system == "seaweedfs"
            && shape.size == Some(3)
            && volumes(shape).iter().all(|(_, s)| s == "up")
            && up(shape, "master")
            && up(shape, "s3 gateway")
    };
    let before = shape_when(&target, "whole", PATIENCE, whole);
    let third = volumes(&before)[2].0.clone();
    assert!(third.starts_with("127.0.0.4:"), "{third}");

    let _revive = ReviveS3("volume3");
    s3_cluster_control("kill", "volume3");
    // The server itself answers no more at once; the master drops it once
    // its heartbeat stream breaks (measured: within a second).
    let after = shape_when(
        &target,
        "without volume3",
        Duration::from_secs(60),
        |shape| {
            let gone = !volumes(shape).iter().any(|(a, s)| a == &third && s == "up");
            gone && shape.size == Some(2)
        },
    );
    let changes = after.changes_since(&before);
    assert!(changes.contains(&"size 3 -> 2".to_string()), "{changes:?}");
    assert!(changes.iter().any(|c| c.contains(&third)), "{changes:?}");
    let out = s3_cluster_control("restart", "volume3");
    assert!(out.contains("restarted volume3: pid"), "{out}");
    shape_when(&target, "as before", Duration::from_secs(60), |shape| {
        shape.changes_since(&before).is_empty()
    });
}

#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn serve_reads_blobs_from_both_servers() {
    use std::io::{Read, Write};
    let _servers = servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // serve's workers drive a runtime of their own, inside which the
    // PostgreSQL client may not block on its own: it runs its statements
    // on a thread of their own there.
    for url in [
        format!("{}?table=served", pg_url()),
        format!("{}?table=served", mysql_url()),
    ] {
        ok(d, &["init", &url, "--count", "3", "--size", "2k"]);
        let (mut server, addr) = crate::common::start_serve(d, &url, &[]);
        let mut replies = Vec::new();
        for key in [1, 3, 4] {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.set_read_timeout(Some(crate::common::PATIENCE)).unwrap();
            write!(
                s,
                "GET /blobs/{key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut reply = Vec::new();
            s.read_to_end(&mut reply).unwrap();
            let text = String::from_utf8_lossy(&reply).into_owned();
            replies.push(text.lines().next().unwrap_or_default().to_string());
            if key <= 3 {
                assert!(
                    text.to_ascii_lowercase().contains("content-length: 2000"),
                    "{url}: {text}"
                );
            }
        }
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(
            replies,
            [
                "HTTP/1.1 200 OK",
                "HTTP/1.1 200 OK",
                "HTTP/1.1 404 Not Found"
            ],
            "{url}"
        );
    }
}

/// A server connection that dies while `suite lob` writes (here the
/// server ends the backend, as an administrator or a failover does) fails
/// that one system: sqlite's, dir's and postgres lo's figures are kept,
/// postgres bytea's first size too, its cells say why, the result is
/// written, and the command exits 1 with one line.
#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn lob_keeps_the_other_systems_when_a_server_connection_dies() {
    let _servers = servers_exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut command = bin();
    command
        .current_dir(d)
        .args([
            "suite",
            "lob",
            "--pg",
            &pg_url(),
            "--sizes",
            "1K,2K",
            "--per-size",
            "3",
            "--json",
            "lob.json",
        ])
        .env_remove("BLOBBENCH_PG_RESTART")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Three inserts per size: sqlite (1-6), dir (7-12), then postgres
    // bytea's 1K (13-15) and 2K: held after its second insert there.
    let held = crate::common::Held::start(command, "lob-blob@17");
    let mut admin = postgres::Client::connect(&pg_url(), postgres::NoTls).unwrap();
    let ended: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND backend_type = 'client backend') ended",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ended >= 1, "no connection of the suite was open");
    let out = held.release_output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("blobbench: error: 1 of 4 systems failed: postgres bytea (connection: ")
            && last.ends_with("; see the result"),
        "{stderr}"
    );
    assert!(
        stdout.contains("FAILED postgres bytea at 2000 bytes (write): connection: "),
        "{stdout}"
    );
    let doc = json(&d.join("lob.json"));
    let t = &doc["tables"];
    let measured: Vec<(String, u64)> = t["lob"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["system"].as_str().unwrap().to_string(),
                s["size"].as_u64().unwrap(),
            )
        })
        .collect();
    for (system, size) in [
        ("sqlite", 1000),
        ("sqlite", 2000),
        ("dir", 1000),
        ("dir", 2000),
        ("postgres bytea", 1000),
        ("postgres lo", 1000),
        ("postgres lo", 2000),
    ] {
        assert!(
            measured.contains(&(system.to_string(), size)),
            "{system} {size} missing: {measured:?}"
        );
    }
    assert!(!measured.contains(&("postgres bytea".to_string(), 2000)));
    let f = &t["failed"][0];
    assert_eq!(
        (&f["system"], &f["size"], &f["phase"], &f["class"]),
        (
            &serde_json::json!("postgres bytea"),
            &serde_json::json!(2000),
            &serde_json::json!("write"),
            &serde_json::json!("connection")
        ),
        "{f}"
    );
}

/// A TCP relay to a real server that the test can cut, as a server that
/// died or a network that broke: every relayed connection is shut down at
/// once, and every later one is accepted and closed at once (counted).
struct Relay {
    addr: String,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    refused: std::sync::Arc<std::sync::atomic::AtomicU64>,
    live: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    /// A relay on a free local port to `upstream` (host:port).
    fn to(upstream: &str) -> Relay {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let relay = Relay {
            addr: listener.local_addr().unwrap().to_string(),
            cut: Default::default(),
            refused: Default::default(),
            live: Default::default(),
        };
        let (cut, refused, live) = (relay.cut.clone(), relay.refused.clone(), relay.live.clone());
        let upstream = upstream.to_string();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if cut.load(Ordering::SeqCst) {
                    refused.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                let server = std::net::TcpStream::connect(&upstream).unwrap();
                let mut all = live.lock().unwrap();
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server.try_clone().unwrap(), client.try_clone().unwrap()),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
                all.extend([client, server]);
            }
        });
        relay
    }

    /// Ends every relayed connection; later ones are closed on arrival.
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        for s in self.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Connections closed on arrival since the cut.
    fn refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// `suite concurrency --pg` whose server goes away (held before the
/// postgres layout's second round of the first point, the connection to
/// the server cut): the postgres layout is recorded failed there with its
/// class, not asked again at the later point, the local layouts' points
/// are all kept, the result is written, and the command exits 1 with one
/// line.
#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn suite_concurrency_keeps_the_other_layouts_when_the_server_goes_away() {
    let _servers = servers_exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let url = pg_url();
    // postgres://user@HOST:PORT/db: the suite reaches the server through the relay.
    let rest = url.split_once('@').unwrap().1;
    let upstream = rest.split('/').next().unwrap();
    let relay = Relay::to(upstream);
    let relayed = url.replacen(upstream, &relay.addr, 1);
    let mut command = bin();
    command
        .current_dir(d)
        .args([
            "suite",
            "concurrency",
            "--pg",
            &relayed,
            "--count",
            "50",
            "--size",
            "1k",
            "--threads",
            "1,2",
            "--mixes",
            "read=100",
            "-t",
            "300ms",
            "--rounds",
            "2",
            "--json",
            "conc.json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Rounds in order: threads=1 round 1 runs the layouts as listed (the
    // four local ones, then postgres: 1-5), round 2 reversed (postgres
    // first: 6), then threads=2 (7-10 without postgres once it failed).
    let held = crate::common::Held::start(command, "concurrency-round@6");
    let started = std::time::Instant::now();
    relay.cut();
    let out = held.release_output();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("blobbench: error: 1 of 5 layouts failed: postgres-bytea (connection: ")
            && last.ends_with("; see the result"),
        "{stderr}"
    );
    // One attempt in the round it failed; not one more per later round.
    assert_eq!(relay.refused(), 1, "{stderr}");
    assert!(
        stdout.contains("FAILED postgres-bytea (threads=1 mix read=100 round 2/2): connection: "),
        "{stdout}"
    );
    assert!(stdout.contains("failed: connection: "), "{stdout}");
    let doc = json(&d.join("conc.json"));
    let t = &doc["tables"];
    let points: Vec<(String, u64, usize)> = t["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["layout"].as_str().unwrap().to_string(),
                p["threads"].as_u64().unwrap(),
                p["rounds"].as_array().unwrap().len(),
            )
        })
        .collect();
    let mut want = Vec::new();
    for threads in [1, 2] {
        for layout in ["sqlite-wal", "sqlite-rollback", "dir", "sqlite-ext"] {
            want.push((layout.to_string(), threads, 2));
        }
    }
    assert_eq!(
        points, want,
        "the local layouts' points, whole; none of postgres's"
    );
    let f = &t["failed"][0];
    assert_eq!(t["failed"].as_array().unwrap().len(), 1, "{f}");
    assert_eq!(
        (&f["system"], &f["during"], &f["class"]),
        (
            &serde_json::json!("postgres-bytea"),
            &serde_json::json!("threads=1 mix read=100 round 2/2"),
            &serde_json::json!("connection")
        ),
        "{f}"
    );
    // The rest of the suite: 8 local rounds of 150 ms, well under a minute.
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
}
