//! Part of the s3_suites tests in the fast tier (tiny datasets, usage errors);
//! the rest are in `servers::s3_suites`.

use crate::common::usage_error;

#[test]
fn an_s3_option_that_is_not_an_s3_url_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    usage_error(
        d,
        &["quick", "--s3", "notaurl", "--dir", "work"],
        "--s3 notaurl",
    );
    usage_error(
        d,
        &["advise", "--sizes", "4k", "--s3", "notaurl"],
        "--s3 notaurl",
    );
    // Refused before anything was made.
    assert!(!d.join("work").exists());
    assert!(!d.join("quick.json").exists() && !d.join("advise.json").exists());
}
