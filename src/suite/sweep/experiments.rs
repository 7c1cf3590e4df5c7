//! The article's eight experiments as presets (`sweep --experiment N`).
//!
//! "Evaluating SQLite Performance by Testing All Parameters" narrows its
//! 1152 cases in eight steps, one section each. Every preset here is the
//! seed's full parameter product narrowed with filters (so cases are written
//! in the article's own seven-value notation), the workload of that section,
//! the section's conclusion in the article's words, its fastest and slowest
//! published run, and the checks that turn this machine's ranking into a
//! conclusion of its own. What the article leaves unsaid is chosen here and
//! listed as an assumption, printed with the result.

use crate::result::sweep::{ArticleRun, Check, Experiment, SweepPlan, Workload};

use super::params::seed_params;

/// How many experiments the article has.
pub const COUNT: u8 = 8;

/// The experiment that needs a second disk (the article's HDD run).
pub const OTHER_DISK: u8 = 7;

/// The 16 cases of experiments 4 to 8: the article fixes NOMUTEX, a 1000
/// page cache and 8192-byte pages, drops synchronous OFF ("power failure is
/// a possibility") and, as its tables show, keeps WAL and TRUNCATE only.
const SIXTEEN: &[&str] = &[
    "open_mode=nomutex",
    "cache_size=1000",
    "page_size=8192",
    "synchronous=full,normal",
    "journal_mode=wal,truncate",
];

/// A choice shared by every preset: the article gives one time per case.
const ONE_RUN: &str = "the article ran each case once (one time per case in its tables); \
blobbench runs each case --rounds times, in a new shuffled order each round, and ranks the medians";

/// A choice shared by the 16-case presets.
const PAGE_KB: &str = "the article's \"page size of 8192 KB\" is read as 8192 bytes, \
the largest page size of its product";

/// A check, as written in the table below.
#[derive(Clone, Copy)]
enum C {
    Fastest,
    Spread,
    Slowest,
    Value(&'static str),
}

/// One section of the article, as written in the table below.
struct Preset {
    title: &'static str,
    workload: Workload,
    filters: &'static [&'static str],
    conclusion: &'static str,
    fastest: (f64, &'static str),
    slowest: (f64, &'static str),
    checks: &'static [C],
    assumptions: &'static [&'static str],
}

const fn insert(rows: u64, rounds: u64) -> Workload {
    Workload::Insert { rows, rounds }
}

const fn copy(rows: u64, copies: u64) -> Workload {
    Workload::InsertCopy { rows, copies }
}

/// The copy, as the article writes it.
const COPY: &str = "the copy: the article's ATTACH DATABASE /tmp/empty.db AS copy; DROP TABLE IF \
EXISTS copy.test; CREATE TABLE copy.test AS SELECT * FROM test; DETACH DATABASE copy, each of the \
copies in one transaction of the case's kind; the copy database lies beside the test database \
(the article's /tmp is not named as a disk) and is removed before each run, untimed";

/// The article's sections in order, their words and figures verbatim.
const PRESETS: [Preset; COUNT as usize] = [
    Preset {
        title: "Insert 50,000 rows (SSD)",
        workload: insert(50_000, 1),
        filters: &[],
        conclusion: "Preliminarily, it looks like NOMUTEX open mode with synchronization OFF, and \
either MEMORY or TRUNCATE with a large page size allow for the fastest inserts. A large page size \
(8192 KB) seems to be in common with faster inserts.",
        fastest: (
            0.1137,
            "[NOMUTEX, 1000, 8192, EXCLUSIVE, IMMEDIATE, OFF, TRUNCATE]",
        ),
        slowest: (
            0.5416,
            "[NOMUTEX, 1000, 4096, EXCLUSIVE, IMMEDIATE, FULL, MEMORY]",
        ),
        checks: &[
            C::Fastest,
            C::Value("open_mode"),
            C::Value("synchronous"),
            C::Value("journal_mode"),
            C::Value("page_size"),
        ],
        assumptions: &["all 1152 cases of the article's product"],
    },
    Preset {
        title: "Insert 50,000 rows twice (SSD)",
        workload: insert(50_000, 2),
        filters: &["journal_mode=wal,truncate"],
        conclusion: "I need a non-memory journal, so I try this again with WAL and TRUNCATE \
journalling modes. I insert all the records twice to stress the index and journal. Again the \
TRUNCATE journal mode outperformed WAL on an SSD when purely inserting. Also, having a large page \
size improves the speed with synchronization OFF.",
        fastest: (
            0.1992,
            "[NOMUTEX, 8000, 8192, EXCLUSIVE, IMMEDIATE, OFF, TRUNCATE]",
        ),
        slowest: (
            0.8446,
            "[NOMUTEX, 1000, 1024, NORMAL, IMMEDIATE, FULL, WAL]",
        ),
        checks: &[
            C::Fastest,
            C::Value("journal_mode"),
            C::Value("page_size"),
            C::Value("synchronous"),
        ],
        assumptions: &[
            "every other parameter keeps all its values (the article's table shows FULLMUTEX and \
every synchronous mode): 768 cases",
            "\"twice\": the rows are inserted twice into one database, each time in one transaction",
        ],
    },
    Preset {
        title: "Insert 500,000 rows twice (SSD)",
        workload: insert(500_000, 2),
        filters: &["open_mode=nomutex", "journal_mode=wal,truncate"],
        conclusion: "NOMUTEX is consistently faster than FULLMUTEX, so I use that only from now \
on. Next, I insert 500,000 rows twice. The takeaway is that TRUNCATE journal mode beats WAL on an \
SSD when purely inserting. Again, a large page size improves speed. Synchronization mode has no \
noticeable impact on speed here.",
        fastest: (
            2.402,
            "[NOMUTEX, 1000, 8192, NORMAL, EXCLUSIVE, OFF, TRUNCATE]",
        ),
        slowest: (
            4.895,
            "[NOMUTEX, 1000, 1024, NORMAL, IMMEDIATE, FULL, TRUNCATE]",
        ),
        checks: &[
            C::Fastest,
            C::Value("journal_mode"),
            C::Value("page_size"),
            C::Value("synchronous"),
        ],
        assumptions: &[
            "journal modes WAL and TRUNCATE as in experiment 2 (the article's table \
shows no other), synchronous OFF kept (its table shows it): 384 cases",
        ],
    },
    Preset {
        title: "Insert 50,000 rows twice, fewer degrees of freedom (SSD)",
        workload: insert(50_000, 2),
        filters: SIXTEEN,
        conclusion: "I again set NOMUTEX, exclude OFF synchronization (because power failure is a \
possibility), and use a page size of 8192 KB with 1000 pages of cache since they performed best \
above. I test the rest of the parameters below. Of the 16 remaining permutations, the differences \
between them were negligible.",
        fastest: (
            0.2108,
            "[NOMUTEX, 1000, 8192, EXCLUSIVE, IMMEDIATE, FULL, TRUNCATE]",
        ),
        slowest: (
            0.7674,
            "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL]",
        ),
        checks: &[C::Spread, C::Slowest],
        assumptions: &[PAGE_KB],
    },
    Preset {
        title: "Insert 50,000 rows 10x, fewer degrees of freedom (SSD)",
        workload: insert(50_000, 10),
        filters: SIXTEEN,
        conclusion: "Repeating the above test but with 10 rounds of inserts each (to magnify \
parameter differences), the variations between the permutations of parameters remain negligible \
except for the very last permutation. WAL actually performs slightly better than the traditional \
journal mode.",
        fastest: (
            0.971,
            "[NOMUTEX, 1000, 8192, EXCLUSIVE, EXCLUSIVE, FULL, WAL]",
        ),
        slowest: (1.921, "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL]"),
        checks: &[C::Spread, C::Slowest, C::Value("journal_mode")],
        assumptions: &[
            PAGE_KB,
            "\"10 rounds of inserts\": the same rows inserted 10 times into one database, each \
time in one transaction (not 10 fresh databases)",
        ],
    },
    Preset {
        title: "Insert, copy 50,000 rows 10x, fewer degrees of freedom (SSD)",
        workload: copy(50_000, 10),
        filters: SIXTEEN,
        conclusion: "Journal mode WAL edged out TRUNCATE for this scenario. All parameters \
performed reasonably well. Consistently the slowest performance results from the settings NORMAL, \
IMMEDIATE, FULL, and WALL together.",
        fastest: (
            1.554,
            "[NOMUTEX, 1000, 8192, EXCLUSIVE, EXCLUSIVE, NORMAL, WAL]",
        ),
        slowest: (3.130, "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL]"),
        checks: &[C::Value("journal_mode"), C::Spread, C::Slowest],
        assumptions: &[PAGE_KB, COPY],
    },
    Preset {
        title: "Insert, copy 50,000 rows 10x, fewer degrees of freedom (HDD)",
        workload: copy(50_000, 10),
        filters: SIXTEEN,
        conclusion: "I repeat the above scenario on an HDD. Aside from running four times slower, \
the results parallel the results on an SSD.",
        fastest: (
            6.024,
            "[NOMUTEX, 1000, 8192, NORMAL, EXCLUSIVE, NORMAL, WAL]",
        ),
        slowest: (11.40, "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL]"),
        checks: &[C::Value("journal_mode"), C::Spread, C::Slowest],
        assumptions: &[
            PAGE_KB,
            COPY,
            "the article's HDD is the disk of --dir (required); its \"four times slower\" is \
against experiment 6 on the first disk: run that with --json first.json there and give it here \
with --against first.json",
        ],
    },
    Preset {
        title: "Insert, copy 500,000 rows 10x: Full vs. Normal Sync (SSD)",
        workload: copy(500_000, 10),
        filters: &[
            "open_mode=nomutex",
            "cache_size=1000",
            "page_size=8192",
            "locking_mode=normal",
            "transaction=immediate",
            "synchronous=full,normal",
            "journal_mode=wal",
        ],
        conclusion: "To really compare the two synchronous modes (except OFF), I perform two \
stressful tests with the parameters below. NORMAL synchronous mode is much faster.",
        fastest: (
            27.53,
            "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, NORMAL, WAL]",
        ),
        slowest: (35.65, "[NOMUTEX, 1000, 8192, NORMAL, IMMEDIATE, FULL, WAL]"),
        checks: &[C::Value("synchronous")],
        assumptions: &[PAGE_KB, COPY],
    },
];

/// Experiment `n` (1..=8) as recorded in a result, and the filters that
/// narrow the seed's product to its cases; None for any other number.
pub fn experiment(n: u8) -> Option<(Experiment, Vec<&'static str>)> {
    let p = PRESETS.get(usize::from(n).checked_sub(1)?)?;
    let run = |(seconds, case): (f64, &str)| ArticleRun {
        seconds,
        case: case.into(),
    };
    let checks = p
        .checks
        .iter()
        .map(|c| match *c {
            C::Fastest => Check::Fastest,
            C::Spread => Check::Spread,
            C::Slowest => Check::Slowest,
            C::Value(param) => Check::Value {
                param: param.into(),
            },
        })
        .collect();
    let assumptions = p.assumptions.iter().chain([&ONE_RUN]);
    let experiment = Experiment {
        number: n,
        title: p.title.into(),
        article_workload: p.workload,
        article_cases: preset_plan(p.workload, p.filters, 1).cases().len(),
        article_conclusion: p.conclusion.into(),
        article_fastest: run(p.fastest),
        article_slowest: run(p.slowest),
        checks,
        assumptions: assumptions.map(|a| a.to_string()).collect(),
    };
    Some((experiment, p.filters.to_vec()))
}

/// The plan of a preset: the seed's product narrowed by `filters`, timing
/// `workload`, with data and case order from `seed`.
pub fn preset_plan(workload: Workload, filters: &[&str], seed: u64) -> SweepPlan {
    SweepPlan {
        params: seed_params(),
        workloads: vec![workload],
        filters: filters.iter().map(|f| f.to_string()).collect(),
        excludes: Vec::new(),
        seed,
    }
}

/// One line per experiment, `N. title (C cases)`, as `sweep --help` lists them.
pub fn list() -> Vec<String> {
    (1..=COUNT)
        .filter_map(experiment)
        .map(|(e, _)| format!("{}. {} ({} cases)", e.number, e.title, e.article_cases))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_has_the_articles_case_count() {
        let counts: Vec<usize> = (1..=COUNT)
            .map(|n| experiment(n).unwrap().0.article_cases)
            .collect();
        // 1152 cases; WAL/TRUNCATE only; and NOMUTEX; the 16 fewer degrees of
        // freedom (4 to 7); FULL vs NORMAL.
        assert_eq!(counts, [1152, 768, 384, 16, 16, 16, 16, 2]);
        assert!(experiment(0).is_none() && experiment(9).is_none());
    }

    #[test]
    fn the_articles_fastest_and_slowest_cases_are_in_each_preset() {
        for n in 1..=COUNT {
            let (e, filters) = experiment(n).unwrap();
            let plan = preset_plan(e.article_workload, &filters, 1);
            let written: Vec<String> = plan
                .cases()
                .iter()
                .map(|c| crate::result::sweep::bracketed(c, &plan.params))
                .collect();
            for run in [&e.article_fastest, &e.article_slowest] {
                assert!(written.contains(&run.case), "{n}: {}", run.case);
            }
            assert!(e.article_fastest.seconds < e.article_slowest.seconds);
        }
    }

    #[test]
    fn the_list_has_one_line_per_experiment() {
        let list = list();
        assert_eq!(list.len(), 8);
        assert_eq!(
            list[4],
            "5. Insert 50,000 rows 10x, fewer degrees of freedom (SSD) (16 cases)"
        );
    }
}
