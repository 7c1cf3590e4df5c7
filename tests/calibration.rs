//! The calibration bench in small (issue 27): `bench/calibrate.sh` with 3
//! pairs of real `quick` runs at 15 rounds (`ARGS="--rounds 15"`, quick's
//! default before its rounds stopped at a precision target: a fixed count
//! keeps the halves of each run comparable), after its one
//! discarded warm-up run, a 3x cost injected into one case of the B runs.
//! The injected case must be called slower in every pair; inside a run
//! (its rounds in two halves) the cases nobody touched must stay quiet,
//! and between runs, where the machine's own drift shows too, no more than
//! a third of them may be. 3x, not the 1.5x a quiet machine always finds: beside
//! the rest of the suite and two CPU hogs, 1.5x was missed in 1 of 3 pairs
//! (a 3-microsecond read's time swings more than 1.5x under that load); the
//! docs/METHODS.md's calibration table gives the detection rates of +10% and +25%
//! on a quiet machine.
//!
//! A measurement of the instrument needs the machine to itself: beside the
//! rest of the suite the load changes between one run and its rerun, and
//! that change is a real difference compare is right to see. So the test is
//! ignored in a plain `cargo test` and `scripts/test.sh` runs it alone,
//! after every other test.

use std::process::Command;
use std::time::Duration;

use crate::common;

#[test]
#[ignore = "a measurement that needs the machine to itself: scripts/test.sh runs it alone"]
fn the_small_calibration_finds_an_injected_slowdown_every_time() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("calibrate.json");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/calibrate.sh");
    let mut command = Command::new("bash");
    command
        .arg(script)
        .env("BLOBBENCH", env!("CARGO_BIN_EXE_blobbench"))
        .env("PAIRS", "3")
        .env("SIZES", "3")
        .env("COUNT", "5k")
        .env("ARGS", "--rounds 15")
        .env("DIR", tmp.path())
        .env("OUT", &out)
        .env_remove("INJECT_CASE")
        .env_remove("SUITE");
    common::default_signals(&mut command);
    // Seven quick runs (six and the warm-up) of a few minutes' work in
    // all: six took 108 s on a quiet machine, 259 s on CI's fresh 2-core
    // one, and past 300 s there beside two CPU hogs, which halve the CPU it
    // gets. The bound catches a hang, so it is sized for the slowest of
    // those with room to spare.
    let run = common::output_within(&mut command, Duration::from_secs(1200));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tally: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let found = &tally["a_b"][0];
    assert_eq!(found["factor"], 3.0, "{tally}");
    assert_eq!(found["missing"], 0, "the injected case is marked: {tally}");
    assert_eq!(found["found"], 3, "x3 found in every pair: {stdout}");
    // Compare's own statistics: every run compared with itself, its
    // rounds in two interleaved halves (within-run A/A). Both halves span
    // the whole run, so nothing the machine did between runs is in them,
    // and each run's untouched cases are a family whose chance of any false
    // alarm Holm holds to 5%. At most a third of the families: a compare
    // that calls noise a change exceeds that (one without Holm flags ~43%
    // of 11-case families), an honest one meets it on any machine. Measured
    // on this project's VM: 0 of 30 runs' halves flagged anything (330 case
    // comparisons), beside runs whose between-run A/A flagged up to 4 of 6.
    let within = &tally["within"];
    let runs = within["runs"].as_u64().unwrap();
    let alarmed = within["runs_with_any_corrected"].as_u64().unwrap();
    assert_eq!(runs, 9, "a, a2 and b1 of every pair: {tally}");
    assert!(within["comparisons"].as_u64().unwrap() >= 90, "{tally}");
    assert!(
        alarmed * 3 <= runs,
        "{alarmed} of {runs} runs' two halves had a false alarm: {stdout}"
    );
    // Between runs, untouched cases (each A/A comparison, and the other
    // cases of each A/B one) are judged by the drift-corrected verdict
    // where they have one (`--allow-drift`, the one to read on a moving
    // machine). Their rate is the machine's as much as compare's: a run's
    // rounds cannot show what the disk does between runs, and on this
    // project's 2-core VMs durable writes drift by minutes further than
    // the flush probe follows (docs/METHODS.md, Calibration). Measured with no code
    // change: 0 to 4 of 6 families flagged, at most 9 of 63 case
    // comparisons (14%). So this bound only catches a compare that calls
    // most noise a change: at most a third of the case comparisons.
    let aa = &tally["a_a"];
    let comparisons = aa["comparisons"].as_u64().unwrap() + found["others"].as_u64().unwrap();
    assert!(comparisons >= 60, "{tally}");
    let flagged = aa["flagged_corrected"].as_u64().unwrap()
        + found["others_flagged_corrected"].as_u64().unwrap();
    assert!(
        flagged * 3 <= comparisons,
        "{flagged} of {comparisons} untouched case comparisons between runs had a false alarm: {stdout}"
    );
    assert!(
        stdout.contains("false alarms")
            && stdout.contains("within-run A/A")
            && stdout.contains("rerun coverage"),
        "{stdout}"
    );
    // The load each pair ran under (a pair above the cores is marked), and
    // what x3 delivered with the machine's drift taken out: a loaded
    // machine moves it, never to half.
    assert_eq!(tally["loads"].as_object().unwrap().len(), 3, "{tally}");
    assert!(
        stdout.contains("load (highest 1-minute average"),
        "{stdout}"
    );
    let d = &tally["delivered"][0];
    let ratios: Vec<f64> = ["quiet", "loaded"]
        .iter()
        .flat_map(|k| d[k].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()))
        .collect();
    assert_eq!(ratios.len(), 3, "{tally}");
    assert!(ratios.iter().all(|&r| r > 1.5), "x3 delivered {ratios:?}");
}
