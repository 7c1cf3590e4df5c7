//! The LOB order study (fast::seed_studies) on PostgreSQL and MariaDB
//! beside the local stores, each server at a database of the test's own.

use crate::fast::seed_studies::lob_order_both_on;

/// `--order both` with `--pg` and `--mysql`: random / sequential per system,
/// size and phase, the servers' rows among them.
#[test]
#[ignore = "needs PostgreSQL and MariaDB: run scripts/test.sh"]
fn lob_order_both_compares_random_with_sequential_on_the_servers_too() {
    let url =
        |var: &str| std::env::var(var).unwrap_or_else(|_| panic!("{var}: run scripts/test.sh"));
    lob_order_both_on(&[
        ("--pg", url("BLOBBENCH_PG_URL")),
        ("--mysql", url("BLOBBENCH_MYSQL_URL")),
    ]);
}
