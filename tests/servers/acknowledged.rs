//! fast::acknowledged's contract on the server stores: an older copy of a
//! blob put back after a concurrent update run is found by `run --verify`
//! and by a checked concurrent run, on PostgreSQL, MariaDB and S3.

use crate::fast::acknowledged::a_lost_write_is_found;

fn url(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var}: run scripts/test.sh"))
}

#[test]
#[ignore = "needs PostgreSQL: run scripts/test.sh"]
fn postgres_finds_an_older_copy_put_back() {
    let _servers = crate::common::servers_shared();
    let dir = tempfile::tempdir().unwrap();
    for mode in ["bytea", "lo"] {
        let target = format!(
            "{}?mode={mode}&table=acknowledged_{mode}",
            url("BLOBBENCH_PG_URL")
        );
        a_lost_write_is_found(dir.path(), &target, false);
    }
}

#[test]
#[ignore = "needs MariaDB: run scripts/test.sh"]
fn mariadb_finds_an_older_copy_put_back() {
    let _servers = crate::common::servers_shared();
    let dir = tempfile::tempdir().unwrap();
    let target = format!(
        "{}?engine=innodb&table=acknowledged_innodb",
        url("BLOBBENCH_MYSQL_URL")
    );
    a_lost_write_is_found(dir.path(), &target, false);
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn s3_finds_an_older_copy_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let base = url("BLOBBENCH_S3_URL");
    let (base, query) = base.split_once('?').unwrap_or((&base, ""));
    let target = format!(
        "{}/acknowledged-{}?{query}",
        base.trim_end_matches('/'),
        std::process::id()
    );
    a_lost_write_is_found(dir.path(), &target, true);
    let location = Target::parse(&target).unwrap();
    blobbench::store::remove_target(&location);
}

use blobbench::target::Target;
