//! Property-based tests of every parser of user input: numbers with kvtest
//! suffixes, ranged options, durations, targets and their `?settings`, the
//! command line as clap reads it, size lists and ranges, sweep workloads and
//! parameters, and URL keys. Whatever the string, a parser returns a value
//! or an error; it never panics, and a value it returns is one the code can
//! honour. (The HTTP Range header has its properties beside its parser.)

use std::time::Duration;

use clap::Parser;
use proptest::prelude::*;

use blobbench::cli::{Cli, Command};
use blobbench::target::Target;
use blobbench::units::{
    MAX_BLOB_SIZE, MAX_KEY, MAX_ROUNDS, duration_in, float_in, parse_number, parse_signed,
};

/// Text shaped like a number a user types: signs, hex, digits, suffixes,
/// spaces, and the odd stray character.
fn numberish() -> impl Strategy<Value = String> {
    "[ +-]{0,2}(0[xX])?[0-9a-fA-F]{0,24}(\\.[0-9]{0,3})?( )?(k|K|m|M|g|G|t|T|KiB|mib|GiB|TiB|kb|MB|GB|TB|B|b|q|e5)?[ ]?"
}

/// Arbitrary text: printable characters of every script, and controls.
fn anything() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,40}", ".{0,40}", numberish()]
}

const SUFFIXES: &[(&str, u64)] = &[
    ("", 1),
    ("k", 1_000),
    ("M", 1_000_000),
    ("g", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("mib", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("kB", 1_000),
    ("B", 1),
];

/// Where proptest keeps the failing cases it found, replayed first on every
/// run: found from the crate's folder, not the current one (proptest's
/// default looks for this file relative to the folder the tests run in).
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/parser_properties.proptest-regressions"
            )),
        )),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn numbers_parse_or_fail_cleanly(text in anything()) {
        let _ = parse_number(&text);
    }

    /// n with a suffix is n times the suffix's value, or "too large" when
    /// that passes 2^64: never a wrapped number.
    #[test]
    fn a_number_with_a_suffix_is_its_product(n in any::<u64>(), which in 0..SUFFIXES.len(), hex in any::<bool>()) {
        let (suffix, scale) = SUFFIXES[which];
        // A hex number's B or b suffix would read as a hex digit.
        let hex = hex && !suffix.eq_ignore_ascii_case("b") && !suffix.to_ascii_lowercase().ends_with("b");
        let text = if hex { format!("0x{n:x}{suffix}") } else { format!("{n}{suffix}") };
        match n.checked_mul(scale) {
            Some(want) => prop_assert_eq!(parse_number(&text).unwrap(), want, "{}", text),
            None => prop_assert!(parse_number(&text).is_err(), "{}", text),
        }
    }

    /// Formatting a count in the largest unit that divides it and parsing
    /// it gives it back.
    #[test]
    fn formatted_sizes_parse_back(n in any::<u64>()) {
        let (suffix, scale) = SUFFIXES
            .iter()
            .copied()
            .filter(|&(_, s)| n % s == 0 && n != 0)
            .max_by_key(|&(_, s)| s)
            .unwrap_or(("", 1));
        let text = format!("{}{suffix}", n / scale);
        prop_assert_eq!(parse_number(&text).unwrap(), n);
    }

    #[test]
    fn signed_numbers_stay_in_range(text in anything(), a in any::<i32>(), b in any::<i32>()) {
        let (min, max) = (i64::from(a.min(b)), i64::from(a.max(b)));
        if let Ok(v) = parse_signed(&text, min, max) {
            prop_assert!(v >= min && v <= max);
        }
    }

    #[test]
    fn signed_numbers_parse_back(v in any::<i64>()) {
        prop_assert_eq!(parse_signed(&v.to_string(), i64::MIN, i64::MAX).unwrap(), v);
    }

    #[test]
    fn durations_parse_or_fail_cleanly(text in prop_oneof![anything(), "[0-9]{1,25}(ns|us|ms|s|m|h|d|w|y|days|years)( [0-9]{1,20}(s|ms))?"]) {
        let (min, max) = (Duration::from_millis(1), Duration::from_secs(30 * 24 * 3600));
        if let Ok(d) = duration_in(min, max)(&text) {
            prop_assert!(*d >= min && *d <= max, "{}", text);
        }
    }

    /// A duration written out by humantime reads back as itself.
    #[test]
    fn durations_parse_back(ms in 1u64..30 * 24 * 3600 * 1000) {
        let d = Duration::from_millis(ms);
        let text = humantime::format_duration(d).to_string();
        let parsed = duration_in(Duration::from_millis(1), Duration::from_secs(30 * 24 * 3600))(&text).unwrap();
        prop_assert_eq!(*parsed, d);
    }

    #[test]
    fn decimals_are_finite_and_in_range(text in prop_oneof![anything(), "-?[0-9]{0,5}(\\.[0-9]{0,5})?(e-?[0-9]{1,4})?|NaN|inf|-inf"]) {
        if let Ok(v) = float_in(0.001, 1e9)(&text) {
            prop_assert!(v.is_finite() && (0.001..=1e9).contains(&v), "{}", text);
        }
    }

    /// Targets with any scheme, path and settings: a target or an error.
    /// A parsed target's own rendering parses to the same target.
    #[test]
    fn targets_parse_or_fail_cleanly(
        scheme in prop_oneof![Just(""), Just("sqlite:"), Just("sqlite-ext:"), Just("dir:"), Just("tree:"), Just("memory:"), Just("s3://"), Just("postgres://"), Just("mysql://"), Just("mariadb://"), Just("bogus:")],
        path in "[a-z./%-]{0,12}",
        settings in proptest::collection::vec(
            ("(page_size|journal_mode|synchronous|cache_size|mmap_size|locking_mode|wal_autocheckpoint|mode|engine|table|x)?", prop_oneof![numberish(), "[a-zA-Z_]{0,8}", "\\PC{0,8}"]),
            0..4,
        ),
    ) {
        let query: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let text = if query.is_empty() { format!("{scheme}{path}") } else { format!("{scheme}{path}?{}", query.join("&")) };
        if let Ok(t) = Target::parse(&text)
            && let Some(s) = t.sqlite_settings()
        {
            if let Some(c) = s.cache_size {
                prop_assert!(c.unsigned_abs() <= i32::MAX as u64, "{}", text);
            }
            if let Some(m) = s.mmap_size {
                prop_assert!(m <= MAX_KEY, "{}", text);
            }
            if let Some(p) = s.page_size {
                prop_assert!(p.is_power_of_two() && (512..=65536).contains(&p), "{}", text);
            }
        }
    }

    #[test]
    fn arbitrary_targets_parse_or_fail_cleanly(text in anything()) {
        let _ = Target::parse(&text);
    }

    /// Every numeric option of every command, given any text: clap accepts
    /// it within the option's range or refuses it; never a panic.
    #[test]
    fn numeric_options_are_range_checked(which in 0..OPTIONS.len(), value in prop_oneof![numberish(), anything(), any::<u64>().prop_map(|n| n.to_string())]) {
        let (args, option) = OPTIONS[which];
        let mut argv: Vec<String> = std::iter::once("blobbench").chain(args.iter().copied()).map(String::from).collect();
        argv.push(format!("{option}={value}"));
        if let Ok(cli) = Cli::try_parse_from(&argv) {
            check_ranges(&cli.command);
        }
    }

    /// `run`'s plan from any --cache-size: a plan or a usage error.
    #[test]
    fn run_cache_size_is_range_checked(value in prop_oneof![numberish(), anything()]) {
        let argv = ["blobbench", "run", "x.db", &format!("--cache-size={value}")];
        if let Ok(Cli { command: Command::Run(args), .. }) = Cli::try_parse_from(argv)
            && let Ok((plan, _)) = blobbench::command::run::plan_from_args(&args)
        {
            let c = plan.target.sqlite_settings().and_then(|s| s.cache_size).unwrap();
            prop_assert!(c.unsigned_abs() <= i32::MAX as u64);
        }
    }

    /// A URL key is a plain positive decimal number (leading zeros allowed,
    /// as in the dataset's file names), never a sign, a dot or an escape.
    #[test]
    fn url_keys_are_canonical(segment in prop_oneof![anything(), "[0-9]{0,22}", "[+-]?[0-9]{1,5}"]) {
        if let Ok(k) = blobbench::http::keys::parse_key(&segment) {
            prop_assert!(k >= 1);
            prop_assert_eq!(k.to_string(), segment.trim_start_matches('0'));
        }
    }

    #[test]
    fn advise_size_specs_parse_or_fail_cleanly(
        text in prop_oneof![
            anything(),
            (numberish(), numberish(), "( lognormal| uniform| zipf)?").prop_map(|(a, b, s)| format!("{a}..{b}{s}")),
            proptest::collection::vec(numberish(), 0..5).prop_map(|v| v.join(",")),
        ],
        seed in any::<u64>(),
    ) {
        if let Ok(sample) = blobbench::suite::advise::sizes::sample_spec(&text, seed) {
            for band in blobbench::suite::advise::sizes::points(&sample, 5) {
                prop_assert!(band.size >= 1 && band.size <= 1 << 30, "{}", text);
            }
        }
    }

    #[test]
    fn size_lists_parse_or_fail_cleanly(text in prop_oneof![anything(), proptest::collection::vec(numberish(), 0..5).prop_map(|v| v.join(","))]) {
        let _ = blobbench::suite::common::parse_list("--sizes", &text, parse_number);
    }

    #[test]
    fn sweep_workloads_parse_or_fail_cleanly(
        text in prop_oneof![
            anything(),
            ("(insert|insert-copy|blob-insert|blob-read|blob-update|other)", numberish(), numberish()).prop_map(|(k, a, b)| format!("{k}:{a}:{b}")),
        ],
    ) {
        let _ = blobbench::suite::sweep::workloads::Workload::parse(&text);
    }

    #[test]
    fn sweep_params_parse_or_fail_cleanly(
        text in prop_oneof![
            anything(),
            ("(page_size|cache_size|journal_mode|open_mode|mmap_size|transaction|x)", proptest::collection::vec(numberish(), 0..4)).prop_map(|(k, v)| format!("{k}={}", v.join(","))),
        ],
    ) {
        let _ = blobbench::suite::sweep::params::parse_param(&text, &[]);
    }
}

/// (the subcommand and its required arguments, a numeric option).
const OPTIONS: &[(&[&str], &str)] = &[
    (&["run", "x.db"], "--repeat"),
    (&["run", "x.db"], "--warmup"),
    (&["run", "x.db"], "--count"),
    (&["run", "x.db"], "--max-id"),
    (&["run", "x.db"], "--start"),
    (&["run", "x.db"], "--mmap"),
    (&["run", "x.db"], "--order-seed"),
    (&["init", "x.db"], "--count"),
    (&["init", "x.db"], "--size"),
    (&["init", "x.db"], "--variance"),
    (&["init", "x.db"], "--pagesize"),
    (&["init", "x.db"], "--sigma"),
    (&["init", "x.db"], "--seed"),
    (&["quick"], "--count"),
    (&["quick"], "--size"),
    (&["quick"], "--rounds"),
    (&["serve", "x.db"], "--max-connections"),
    (&["serve", "x.db"], "--max-blob-size"),
    (&["serve", "x.db"], "--header-timeout"),
    (&["serve", "x.db"], "--body-timeout"),
    (&["load", "http://h/"], "--duration"),
    (&["load", "http://h/"], "--requests"),
    (&["load", "http://h/"], "--rate"),
    (&["load", "http://h/"], "--timeout"),
    (&["sweep"], "--rounds"),
    (&["sweep"], "--top"),
    (&["suite", "fasterthanfs"], "--updates"),
    (&["suite", "fasterthanfs"], "--durable-updates"),
    (&["suite", "internal-external"], "--total"),
    (&["suite", "internal-external"], "--cache-bytes"),
    (&["suite", "lob"], "--per-size"),
    (&["suite", "http"], "--count"),
    (&["suite", "http"], "--duration"),
    (&["advise"], "--total"),
    (&["advise"], "--rounds"),
];

/// The values clap let through are within what the code can honour.
fn check_ranges(command: &Command) {
    let blobs = |count: u64, size: u64, variance: u64| {
        assert!((1..=MAX_KEY).contains(&count), "count {count}");
        assert!((1..=MAX_BLOB_SIZE).contains(&size), "size {size}");
        assert!(variance <= MAX_BLOB_SIZE, "variance {variance}");
    };
    match command {
        Command::Run(a) => {
            assert!((1..=MAX_ROUNDS as u32).contains(&a.repeat));
            assert!(a.warmup <= MAX_ROUNDS as u32);
            for key in [a.count, a.max_id, a.start].into_iter().flatten() {
                assert!((1..=MAX_KEY).contains(&key));
            }
            assert!(a.mmap <= MAX_KEY);
        }
        Command::Init(a) => {
            blobs(a.count, a.size, a.variance);
            assert!(a.pagesize.is_none_or(|p| (512..=65536).contains(&p)));
            assert!(
                a.sigma
                    .is_none_or(|s| s.is_finite() && (0.0..=4.0).contains(&s))
            );
        }
        Command::Quick(a) => {
            blobs(a.count, a.size, a.variance());
            let r = &a.rounds;
            assert!(r.rounds.is_none_or(|n| (1..=MAX_ROUNDS).contains(&n)));
            assert!(r.precision.is_none_or(|p| (0.005..=0.5).contains(&p)));
            for n in [r.min_rounds, r.max_rounds].into_iter().flatten() {
                assert!((6..=MAX_ROUNDS).contains(&n));
            }
        }
        Command::Serve(a) => {
            assert!((1..=1_000_000).contains(&a.max_connections));
            assert!(a.max_blob_size >= 1);
            assert!(!a.header_timeout.is_zero() && !a.body_timeout.is_zero());
        }
        Command::Load(a) => {
            assert!(a.duration.is_none_or(|d| !d.is_zero()));
            assert!(!a.timeout.is_zero());
            assert!(a.requests.is_none_or(|n| n >= 1));
            assert!(a.rate.is_none_or(|r| r.is_finite() && r > 0.0));
        }
        Command::Sweep(a) => assert!((1..=MAX_ROUNDS).contains(&a.rounds) && a.top >= 1),
        Command::Advise(a) => assert!((1..=MAX_ROUNDS).contains(&a.rounds) && a.total >= 1),
        _ => {}
    }
}
