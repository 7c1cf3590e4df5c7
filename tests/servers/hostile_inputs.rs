//! Part of the hostile_inputs tests in the servers tier (needs the servers scripts/test.sh starts);
//! the rest, and the helpers both use, are in `fast::hostile_inputs`.

use crate::common;
use crate::common::ok;
use crate::fast::hostile_inputs::*;

/// Classes 1 and 2 on real servers (`scripts/test.sh` starts them): keys
/// below 1 or far apart in a server table, and a blob larger than MariaDB's
/// max_allowed_packet, refused before any table is made.
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn server_tables_with_unexpected_keys_or_sizes() {
    let _servers = common::servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let pg = std::env::var("BLOBBENCH_PG_URL").expect("BLOBBENCH_PG_URL: run scripts/test.sh");
    let my =
        std::env::var("BLOBBENCH_MYSQL_URL").expect("BLOBBENCH_MYSQL_URL: run scripts/test.sh");
    let mut client = postgres::Client::connect(&pg, postgres::NoTls).unwrap();
    let target = format!("{pg}?table=hostile_keys");
    ok(d, &["init", &target, "--count", "3", "--size", "10"]);
    client
        .execute("UPDATE hostile_keys SET id = -5 WHERE id = 1", &[])
        .unwrap();
    refused(d, &["run", &target], "-5");
    client
        .execute(
            "UPDATE hostile_keys SET id = 10000000000 WHERE id = -5",
            &[],
        )
        .unwrap();
    refused(d, &["run", &target], "10000000000");
    refused(d, &["export", &target, "out.dir"], "10000000000");

    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&my).unwrap()).unwrap();
    use mysql::prelude::Queryable;
    let packet: u64 = conn
        .query_first("SELECT @@max_allowed_packet")
        .unwrap()
        .unwrap();
    let too_big = (packet + 1).to_string();
    let target = format!("{my}?table=hostile_size");
    refused(
        d,
        &["init", &target, "--count", "1", "--size", &too_big],
        "max_allowed_packet",
    );
    let made: Option<u64> = conn
        .query_first(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'hostile_size'",
        )
        .unwrap();
    assert_eq!(made, Some(0), "the refused init made its table");
}
