//! Part of the seed_blog tests in the fast tier (tiny datasets, usage errors);
//! the rest are in `measured::seed_blog`.

use crate::common;
use crate::common::small;

/// The blog's own database (its script names rows `00000.bin`, from 0) is
/// refused with the id it holds and how to make one blobbench can key.
#[test]
fn a_files_table_with_other_ids_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let conn = rusqlite::Connection::open(d.join("files.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE files( id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL );
         INSERT INTO files VALUES('00000.bin', x'01'), ('00001.bin', x'02');",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(d.join("files.db")).unwrap();
    for args in [
        &small(&["run", "files.db", "--count", "1"])[..],
        &["serve", "files.db", "--listen", "127.0.0.1:0"],
        &["export", "files.db", "out"],
    ] {
        common::usage_error(d, args, "holds id '00000.bin' in its files table");
    }
    assert_eq!(
        std::fs::read(d.join("files.db")).unwrap(),
        before,
        "read only"
    );
    assert!(!d.join("out").exists());
}
