//! The smallest run a test can start: the arguments a test gives, with
//! the measuring defaults a user gets (`run`'s five repetitions after a
//! warm-up) cut to one repetition and no warm-up.
//!
//! Why: a user's defaults are sized for figures that hold between runs;
//! a test that checks what a run does to a dataset, prints or refuses pays
//! for them without checking them. Every test that starts a run goes
//! through [`small`], except a refusal (`usage_error`, `refused`: nothing
//! runs, and the command line is what is checked) and a test of a
//! default itself, which names the command's arguments as they are.
//!
//! Suites and `quick` are not rewritten: their tests already name small
//! counts and rounds, since the counts and rounds are what they check.

/// The measuring options `run` gets when the test names none of them.
/// A concurrent run (any of `MIXED_RUN_OPTIONS`) refuses them and is
/// bounded by its own `--count` or `-t`, so it gets none.
const RUN: &[(&str, &str)] = &[("--repeat", "1"), ("--warmup", "0")];

/// Options that make `run` a concurrent run, which refuses `--repeat`.
const CONCURRENT: &[&str] = &[
    "--threads",
    "--mix",
    "--keys",
    "--workload",
    "--writers",
    "--batch",
    "-t",
    "--duration",
    "--rate",
];

/// `args` (a command line without the program) with `run`'s repetitions
/// cut to one and its warm-up to none, unless the test names them itself
/// or the run is concurrent. Other commands come back as they are.
pub fn small<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    if args.first() != Some(&"run") || args.iter().any(|a| CONCURRENT.contains(a)) {
        return all;
    }
    for &(flag, value) in RUN {
        if !args
            .iter()
            .any(|a| *a == flag || a.starts_with(&format!("{flag}=")))
        {
            all.extend([flag, value]);
        }
    }
    all
}
