//! Part of the advise_aging tests in the fast tier (tiny datasets, usage errors);
//! the rest, and the helpers both use, are in `measured::advise_aging`.

use crate::common::usage_error;
use crate::measured::advise_aging::*;

#[test]
fn half_a_flag_pair_or_a_file_that_is_not_an_aging_result_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let with = |extra: &[&str]| {
        let mut v = ADVISE.to_vec();
        v.extend(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let check = |extra: &[&str], needle: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        usage_error(d, &args, needle);
    };
    check(&["--age", "6"], "--age 6: needs --aging FILE");
    aging_result(&d.join("aging.json"), vec![series("dir", 2.0)]);
    check(
        &["--aging", "aging.json"],
        "say the storage age to decide at too, e.g. --age 6",
    );
    let quick = fixture("quick.json");
    check(
        &["--aging", &quick, "--age", "2"],
        "a result of `quick`, not of `suite aging`; make one with `blobbench suite aging",
    );
    aging_result(&d.join("empty.json"), vec![]);
    check(
        &["--aging", "empty.json", "--age", "2"],
        "--aging empty.json: it has no series; make one with `blobbench suite aging",
    );
    std::fs::write(d.join("junk.json"), "not json").unwrap();
    check(
        &["--aging", "junk.json", "--age", "2"],
        "junk.json: not JSON",
    );
    check(&["--aging", "missing.json", "--age", "2"], "missing.json");
    check(&["--aging", "aging.json", "--age=-1"], "-1 is out of range");
    // Nothing was calibrated: the errors came before any work.
    assert!(!d.join("advise.json").exists());
}
