//! End-to-end tests against real servers. `scripts/test.sh` starts a
//! throwaway PostgreSQL and MariaDB and sets BLOBBENCH_PG_URL and
//! BLOBBENCH_MYSQL_URL; run alone, these tests are ignored.

mod common;

use common::{json, ok, run, usage_error};

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
        &[
            "run", target, "--random", "--verify", "--repeat", "2", "--json", "r.json",
        ],
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
            &[
                "run", target, "--random", "--update", "--verify", "--count", "40", "--repeat", "1",
            ],
        );
        assert!(out.contains("verified 40 updated blobs"), "{target}: {out}");
        // And a later read sees the new content everywhere.
        ok(dir, &["run", target, "--verify", "--repeat", "1"]);
    }
    doc
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn postgres_bytea_and_large_objects() {
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
    ok(d, &["run", &format!("{url}?mode=bytea"), "--repeat", "1"]);
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
    ok(d, &["run", &archive, "--verify", "--repeat", "1"]);

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
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Port 9 (discard) on localhost: nothing listens there.
    usage_error(
        d,
        &["run", "postgres://postgres@127.0.0.1:9/blobbench"],
        "cannot connect",
    );
    usage_error(
        d,
        &["run", "mysql://root:hunter2@127.0.0.1:9/blobbench"],
        "cannot connect",
    );
    // The password never appears in messages.
    let out = run(d, &["run", "mysql://root:hunter2@127.0.0.1:9/blobbench"]);
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
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn lob_suite_measures_every_system() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "suite",
            "lob",
            "--pg",
            &pg_url(),
            "--mysql",
            &mysql_url(),
            "--sizes",
            "1K,3999,100K,2M",
            "--per-size",
            "4",
            "--json",
            "lob.json",
        ],
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
    ] {
        assert!(out.contains(system), "{system} missing:\n{out}");
    }
    assert!(!out.contains("skipped"), "{out}");
    let doc = json(&d.join("lob.json"));
    let samples = doc["tables"]["lob"].as_array().unwrap();
    assert_eq!(samples.len(), 8 * 4, "8 systems x 4 sizes");
    for s in samples {
        assert_eq!(s["write_ns"].as_array().unwrap().len(), 4);
        assert_eq!(s["read_ns"].as_array().unwrap().len(), 4);
    }
    assert_eq!(doc["tables"]["best_size"].as_array().unwrap().len(), 8);
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

/// The Store API itself on every server store: insert, read, update, delete,
/// batches in a transaction, space.
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn every_store_operation_on_every_server_store() {
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
