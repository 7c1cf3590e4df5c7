//! The store contract (fast::conformance) on every server backend: PostgreSQL,
//! MariaDB, Galera and S3, each in a table or prefix of its own.

use crate::fast::conformance::*;

fn pg_url() -> String {
    std::env::var("BLOBBENCH_PG_URL").expect("BLOBBENCH_PG_URL: run scripts/test.sh")
}

fn mysql_url() -> String {
    std::env::var("BLOBBENCH_MYSQL_URL").expect("BLOBBENCH_MYSQL_URL: run scripts/test.sh")
}

fn galera_url() -> String {
    std::env::var("BLOBBENCH_GALERA_URL").expect("BLOBBENCH_GALERA_URL: run scripts/test.sh")
}

// Each server case has a table of its own and shares the server with the
// other tests (common::SERVERS; the Galera cluster goes under the same lock,
// taken exclusively by the test that changes its write-set limit).
macro_rules! server_backend {
    ($test:ident, $needs:literal, $url:ident, $query:literal, $modifies:expr) => {
        #[test]
        #[ignore = $needs]
        fn $test() {
            let _servers = crate::common::servers_shared();
            contract(
                &format!("{}?{}", $url(), $query),
                Backend {
                    local: false,
                    modifies: $modifies,
                },
            );
        }
    };
}

server_backend!(
    postgres_bytea,
    "needs PostgreSQL: run scripts/test.sh",
    pg_url,
    "mode=bytea&table=conformance_bytea",
    true
);
server_backend!(
    postgres_lo,
    "needs PostgreSQL: run scripts/test.sh",
    pg_url,
    "mode=lo&table=conformance_lo",
    true
);
server_backend!(
    mariadb_innodb,
    "needs MariaDB: run scripts/test.sh",
    mysql_url,
    "engine=innodb&table=conformance_innodb",
    true
);
// InnoDB on node 1 of a 3-node Galera cluster (the one engine Galera replicates).
server_backend!(
    galera_innodb,
    "needs Galera: run scripts/test.sh",
    galera_url,
    "engine=innodb&table=conformance_galera",
    true
);
server_backend!(
    mariadb_myisam,
    "needs MariaDB: run scripts/test.sh",
    mysql_url,
    "engine=myisam&table=conformance_myisam",
    true
);
server_backend!(
    mariadb_aria,
    "needs MariaDB: run scripts/test.sh",
    mysql_url,
    "engine=aria&table=conformance_aria",
    true
);
server_backend!(
    mariadb_archive,
    "needs MariaDB: run scripts/test.sh",
    mysql_url,
    "engine=archive&table=conformance_archive",
    false
);

/// An S3 target from the URL `scripts/test.sh` exports in `var`, in a
/// prefix of its own: `prefix` (one per test) and this process's id.
fn s3_target(var: &str, prefix: &str) -> String {
    let url = std::env::var(var).unwrap_or_else(|_| panic!("{var}: run scripts/test.sh"));
    let (base, query) = url.split_once('?').unwrap_or((&url, ""));
    format!(
        "{}/{prefix}-{}?{query}",
        base.trim_end_matches('/'),
        std::process::id()
    )
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn s3_single_node() {
    contract(
        &s3_target("BLOBBENCH_S3_URL", "conformance-single"),
        Backend {
            local: false,
            modifies: true,
        },
    );
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn s3_cluster() {
    // Fault tests kill the cluster's servers while holding the lock alone.
    let _servers = crate::common::servers_shared();
    contract(
        &s3_target("BLOBBENCH_S3_CLUSTER_URL", "conformance-cluster"),
        Backend {
            local: false,
            modifies: true,
        },
    );
}
