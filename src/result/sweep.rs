//! The `sweep` result's own tables: the plan (parameters, workloads,
//! filters, seed), every timed run so far, and whether the sweep completed.
//! Also what a reader derives from them: the cases of the plan, cases
//! ranked per workload, each parameter's effect against its default and the
//! recommended power-safe case. The sweep writes these after every run;
//! `--resume` reads them back.

use serde::{Deserialize, Serialize};

use crate::measure::estimate::{Estimate, Stopping, median_estimate};
use crate::measure::stats::summarize;

use super::advise::AgainstDefault;
use super::rounds::{RoundsRecord, RoundsRule};

/// The kind-specific part of a `sweep` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepTables {
    /// The sweep: its plan and its records.
    pub sweep: SweepState,
}

/// A sweep as saved after each run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepState {
    /// What was asked: a resumed sweep must ask the same.
    pub plan: SweepPlan,
    /// Rounds asked for (`--rounds`).
    pub rounds: u64,
    /// Whether every run of every round is recorded.
    pub complete: bool,
    /// Every timed run so far.
    pub records: Vec<Record>,
    /// The schema the row workloads create: the article does not print its
    /// own, so this is blobbench's assumption (empty in older results).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub schema: String,
    /// The article's experiment this sweep repeats (`--experiment N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<Experiment>,
    /// Experiment 7 (another disk): experiment 6's runs on the first disk,
    /// from `--against`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_disk: Option<FirstDisk>,
    /// Each varied parameter's effect on each workload, decided against
    /// its default, as of when the sweep stopped (empty while it runs and
    /// in older results: [`SweepState::effects`] computes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<ParamEffect>,
    /// Where the rounds ended and why, per parameter effect (absent while
    /// the sweep runs and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<RoundsRecord>,
}

/// The runs of the same plan on the first disk, for the article's "four
/// times slower ... the results parallel".
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FirstDisk {
    /// The result file they were read from.
    pub source: String,
    /// Its runs.
    pub records: Vec<Record>,
}

/// This disk against the first, case by case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskComparison {
    /// Per case, this disk's median / the first disk's: their median over
    /// the cases, with its interval.
    pub slowdown: Estimate,
    /// Spearman's rank correlation of the two rankings (1: the same order).
    pub spearman: f64,
    /// Cases measured on both disks.
    pub cases: usize,
}

/// This disk's ranking of workload `w` against the first disk's; None with
/// fewer than two cases measured on both.
pub fn compare_disks(
    records: &[Record],
    first: &[Record],
    cases: &[Case],
    w: &Workload,
) -> Option<DiskComparison> {
    let here = ranked(records, cases, w);
    let there = ranked(first, cases, w);
    // (rank here, rank there, time here / time there) for cases in both.
    let mut pairs: Vec<(usize, usize, f64)> = here
        .iter()
        .enumerate()
        .filter_map(|(i, (c, t, _))| {
            let j = there.iter().position(|(d, _, _)| d == c)?;
            Some((i, j, t / there[j].1))
        })
        .collect();
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let ratios: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    // Ranks among the paired cases only: positions in each order.
    pairs.sort_by_key(|p| p.1);
    let d2: f64 = pairs
        .iter()
        .enumerate()
        .map(|(rank_there, p)| {
            let rank_here = pairs.iter().filter(|q| q.0 < p.0).count();
            (rank_here as f64 - rank_there as f64).powi(2)
        })
        .sum();
    let n_f = n as f64;
    Some(DiskComparison {
        slowdown: median_estimate(&ratios),
        spearman: 1.0 - 6.0 * d2 / (n_f * (n_f * n_f - 1.0)),
        cases: n,
    })
}

/// One of the article's eight experiments as run by `sweep --experiment N`:
/// what the article did, found and concluded, kept in the result so a
/// report sets this machine's ranking beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// 1..=8, the article's sections in order.
    pub number: u8,
    /// The article's section heading.
    pub title: String,
    /// The workload the article timed (the run may override it).
    pub article_workload: Workload,
    /// Cases the article's section ranks.
    pub article_cases: usize,
    /// The section's conclusion, in the article's words.
    pub article_conclusion: String,
    /// The article's fastest published run.
    pub article_fastest: ArticleRun,
    /// The article's slowest published run.
    pub article_slowest: ArticleRun,
    /// What to read from this machine's ranking, to set beside the conclusion.
    pub checks: Vec<Check>,
    /// Choices blobbench made where the article does not say.
    pub assumptions: Vec<String>,
}

/// A run the article published: its time and its case in its notation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArticleRun {
    /// Seconds, as the article printed them.
    pub seconds: f64,
    /// `[NOMUTEX, 1000, 8192, ...]`.
    pub case: String,
}

/// A question an experiment's conclusion answers, asked of this machine's
/// ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Check {
    /// The fastest case.
    Fastest,
    /// The slowest case and how much slower than the fastest.
    Slowest,
    /// How many cases cannot be told apart from the fastest.
    Spread,
    /// Which value of a parameter is fastest, the others against it.
    Value {
        /// The parameter.
        param: String,
    },
}

/// What was asked: a resumed sweep must ask the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// The parameters varied, each with its values in order.
    pub params: Vec<Param>,
    /// The workloads timed for every case.
    pub workloads: Vec<Workload>,
    /// `--filter` conditions as given (NAME=v1,v2).
    pub filters: Vec<String>,
    /// `--exclude` conditions as given.
    pub excludes: Vec<String>,
    /// Seed of the generated data and of the case order.
    pub seed: u64,
}

/// One timed run of one workload under one case's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The settings of the run.
    pub case: Case,
    /// What was timed.
    pub workload: Workload,
    /// Which round (from 0).
    pub round: u64,
    /// What the run measured.
    pub timing: Timing,
}

/// A parameter the sweep varies, with the values to try in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// A setting blobbench knows or a PRAGMA name, lower case.
    pub name: String,
    /// Its values, lower case, in the order given.
    pub values: Vec<String>,
}

/// One combination of values, in the parameters' order.
pub type Case = Vec<(String, String)>;

/// What a sweep run times on a fresh database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Workload {
    /// Insert `rows` rows in one transaction, `rounds` times (the seed's
    /// "insert 50,000", "twice", "10x").
    Insert {
        /// Rows per transaction.
        rows: u64,
        /// Transactions.
        rounds: u64,
    },
    /// Insert `rows` rows, then copy the table into another database
    /// `copies` times via ATTACH + CREATE TABLE AS.
    InsertCopy {
        /// Rows inserted.
        rows: u64,
        /// Copies made.
        copies: u64,
    },
    /// Insert `count` blobs of `size` bytes in one transaction.
    BlobInsert {
        /// Blobs.
        count: u64,
        /// Bytes each.
        size: u64,
    },
    /// Read `count` blobs of `size` bytes in random order in one transaction.
    BlobRead {
        /// Blobs.
        count: u64,
        /// Bytes each.
        size: u64,
    },
    /// Overwrite `count` blobs of `size` bytes in random order in one transaction.
    BlobUpdate {
        /// Blobs.
        count: u64,
        /// Bytes each.
        size: u64,
    },
}

impl Workload {
    /// The seed's wording: "Insert 50,000 twice", "Insert, copy 50,000 10x".
    pub fn describe(&self) -> String {
        let times = |n: u64| match n {
            1 => String::new(),
            2 => " twice".into(),
            n => format!(" {n}x"),
        };
        match *self {
            Workload::Insert { rows, rounds } => {
                format!("Insert {}{}", thousands(rows), times(rounds))
            }
            Workload::InsertCopy { rows, copies } => {
                format!("Insert, copy {}{}", thousands(rows), times(copies))
            }
            Workload::BlobInsert { count, size } => {
                format!("Insert {} blobs of {size} bytes", thousands(count))
            }
            Workload::BlobRead { count, size } => {
                format!("Read {} blobs of {size} bytes", thousands(count))
            }
            Workload::BlobUpdate { count, size } => {
                format!("Update {} blobs of {size} bytes", thousands(count))
            }
        }
    }

    /// Operations timed per run (rows or blobs), for per-op figures.
    pub fn ops(&self) -> u64 {
        match *self {
            Workload::Insert { rows, rounds } => rows * rounds,
            Workload::InsertCopy { rows, copies } => rows * (1 + copies),
            Workload::BlobInsert { count, .. }
            | Workload::BlobRead { count, .. }
            | Workload::BlobUpdate { count, .. } => count,
        }
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One timed run's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timing {
    /// Whole workload: statements, commits (and attach/detach).
    pub ns: u64,
    /// Of which COMMITs.
    pub commit_ns: u64,
    /// Operations (rows or blobs) in the run.
    pub ops: u64,
    /// The settings as SQLite reports them after applying the case.
    pub settings_read_back: Vec<(String, String)>,
}

/// A `--filter` or `--exclude` condition: NAME=v1,v2 matches a case whose
/// NAME is any of the values.
#[derive(Debug, Clone)]
pub struct Condition {
    /// The parameter's name, lower case.
    pub name: String,
    /// The values that match, lower case.
    pub values: Vec<String>,
}

impl Condition {
    /// Reads `NAME=v1,v2` as written in a plan, without checking it against
    /// the parameters (the sweep checked it before it ran).
    pub fn read(text: &str) -> Option<Condition> {
        let (name, values) = text.split_once('=')?;
        Some(Condition {
            name: name.trim().to_ascii_lowercase(),
            values: values
                .split(',')
                .map(|v| v.trim().to_ascii_lowercase())
                .filter(|v| !v.is_empty())
                .collect(),
        })
    }

    /// Whether the case has this parameter at one of the values.
    pub fn matches(&self, case: &Case) -> bool {
        case.iter()
            .any(|(n, v)| *n == self.name && self.values.contains(v))
    }
}

/// The cartesian product, first parameter varying slowest.
pub fn product(params: &[Param]) -> Vec<Case> {
    let mut cases: Vec<Case> = vec![Vec::new()];
    for p in params {
        let mut next = Vec::with_capacity(cases.len() * p.values.len());
        for c in &cases {
            for v in &p.values {
                let mut c = c.clone();
                c.push((p.name.clone(), v.clone()));
                next.push(c);
            }
        }
        cases = next;
    }
    cases
}

impl SweepPlan {
    /// The cases the plan runs: the product of its parameters, kept by every
    /// filter and dropped by any exclude.
    pub fn cases(&self) -> Vec<Case> {
        let filters: Vec<Condition> = self
            .filters
            .iter()
            .filter_map(|f| Condition::read(f))
            .collect();
        let excludes: Vec<Condition> = self
            .excludes
            .iter()
            .filter_map(|f| Condition::read(f))
            .collect();
        product(&self.params)
            .into_iter()
            .filter(|c| {
                filters.iter().all(|f| f.matches(c)) && !excludes.iter().any(|x| x.matches(c))
            })
            .collect()
    }
}

/// Power-safe: a power cut cannot corrupt the database. Never
/// synchronous=OFF, never journal_mode OFF or MEMORY (SQLite's defaults,
/// FULL and DELETE, are safe).
pub fn power_safe(case: &Case) -> bool {
    case.iter().all(|(n, v)| match n.as_str() {
        "synchronous" => v != "off",
        "journal_mode" => v != "off" && v != "memory",
        _ => true,
    })
}

/// The seed's notation: `[NOMUTEX, 1000, 8192, EXCLUSIVE, IMMEDIATE, OFF, TRUNCATE]`,
/// leaving out parameters that have a single value in the sweep.
pub fn bracketed(case: &Case, params: &[Param]) -> String {
    let shown: Vec<String> = case
        .iter()
        .filter(|(n, _)| {
            params
                .iter()
                .find(|p| p.name == *n)
                .is_some_and(|p| p.values.len() > 1)
        })
        .map(|(_, v)| v.to_ascii_uppercase())
        .collect();
    format!("[{}]", shown.join(", "))
}

/// A case, its median time over the rounds, and how many runs that is.
pub type RankedCase = (Case, f64, usize);

/// Median time of each case for one workload, fastest first.
pub fn ranked(records: &[Record], cases: &[Case], w: &Workload) -> Vec<RankedCase> {
    let mut out: Vec<RankedCase> = cases
        .iter()
        .filter_map(|c| {
            let times: Vec<f64> = records
                .iter()
                .filter(|r| r.workload == *w && r.case == *c)
                .map(|r| r.timing.ns as f64)
                .collect();
            (!times.is_empty()).then(|| (c.clone(), summarize(&times).median, times.len()))
        })
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// A ranked case's time and its standing against the fastest case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// The case's time (ns): median of its rounds with its interval.
    pub time: Estimate,
    /// The case's time / the fastest's, paired round by round.
    pub vs_fastest: Estimate,
    /// Whether the case cannot be told from the fastest: the interval of
    /// the paired ratio contains 1.00 (or, without paired rounds, the two
    /// time intervals overlap).
    pub tied: bool,
}

/// One case's time per round (round, ns) for workload `w`.
fn by_round(records: &[Record], case: &Case, w: &Workload) -> Vec<(u64, f64)> {
    records
        .iter()
        .filter(|r| r.workload == *w && r.case == *case)
        .map(|r| (r.round, r.timing.ns as f64))
        .collect()
}

/// Each ranked case's standing against the first (the fastest), in order.
pub fn standings(
    records: &[Record],
    ranked: &[RankedCase],
    w: &Workload,
    kind: Stopping,
) -> Vec<Standing> {
    let Some((fastest, _, _)) = ranked.first() else {
        return Vec::new();
    };
    let best = by_round(records, fastest, w);
    let best_time = kind.median(&best.iter().map(|x| x.1).collect::<Vec<_>>());
    ranked
        .iter()
        .enumerate()
        .map(|(i, (c, _, _))| {
            let mine = by_round(records, c, w);
            let times: Vec<f64> = mine.iter().map(|x| x.1).collect();
            let time = kind.median(&times);
            // Pairs of the same round on both sides.
            let (num, den): (Vec<f64>, Vec<f64>) = mine
                .iter()
                .filter_map(|(r, t)| best.iter().find(|b| b.0 == *r).map(|b| (*t, b.1)))
                .unzip();
            let vs_fastest = kind.ratio(&num, &den);
            let tied = if vs_fastest.has_interval() {
                vs_fastest.contains(1.0)
            } else {
                time.has_interval() && time.overlaps(&best_time)
            };
            Standing {
                time,
                vs_fastest,
                tied: i == 0 || tied,
            }
        })
        .collect()
}

/// One value of a parameter against the parameter's fastest value.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueEffect {
    /// The value.
    pub value: String,
    /// Its time: per round the median over the cases having it, then the
    /// median of the rounds with its interval.
    pub time: Estimate,
    /// Its per-round time / the fastest value's, paired by round.
    pub vs_best: Estimate,
    /// Cases having the value.
    pub cases: usize,
}

/// A value, its time per round (round, median over its cases), its cases.
type ValueSeries = (String, Vec<(u64, f64)>, usize);

/// Each value of `param` measured for workload `w`, in the order first
/// seen: its time per round (the median over the cases having it) and its
/// cases.
fn value_series(records: &[Record], w: &Workload, param: &str) -> Vec<ValueSeries> {
    let value_of = |c: &Case| c.iter().find(|(n, _)| n == param).map(|(_, v)| v.clone());
    let mut values: Vec<String> = Vec::new();
    let mut rounds: Vec<u64> = Vec::new();
    for r in records.iter().filter(|r| r.workload == *w) {
        if let Some(v) = value_of(&r.case).filter(|v| !values.contains(v)) {
            values.push(v);
        }
        if !rounds.contains(&r.round) {
            rounds.push(r.round);
        }
    }
    rounds.sort_unstable();
    // Per value: (round, median time of its cases that round), and its cases.
    let series: Vec<ValueSeries> = values
        .into_iter()
        .map(|v| {
            let mine: Vec<&Record> = records
                .iter()
                .filter(|r| r.workload == *w && value_of(&r.case).as_ref() == Some(&v))
                .collect();
            let mut cases: Vec<&Case> = mine.iter().map(|r| &r.case).collect();
            cases.sort();
            cases.dedup();
            let per_round = rounds
                .iter()
                .filter_map(|&round| {
                    let t: Vec<f64> = mine
                        .iter()
                        .filter(|r| r.round == round)
                        .map(|r| r.timing.ns as f64)
                        .collect();
                    (!t.is_empty()).then(|| (round, summarize(&t).median))
                })
                .collect();
            (v, per_round, cases.len())
        })
        .collect();
    series
}

/// `num`'s time over `den`'s, paired round by round (rounds on one side
/// only are left out).
fn paired_by_round(num: &[(u64, f64)], den: &[(u64, f64)], kind: Stopping) -> Estimate {
    let (a, b): (Vec<f64>, Vec<f64>) = num
        .iter()
        .filter_map(|(r, t)| den.iter().find(|d| d.0 == *r).map(|d| (*t, d.1)))
        .unzip();
    kind.ratio(&a, &b)
}

/// Each value of `param` for workload `w`, fastest first. Each round gives
/// a value one time (the median over the cases having it), so values are
/// compared round by round as cases are.
pub fn value_effects(
    records: &[Record],
    w: &Workload,
    param: &str,
    kind: Stopping,
) -> Vec<ValueEffect> {
    let series = value_series(records, w, param);
    let time = |s: &[(u64, f64)]| kind.median(&s.iter().map(|x| x.1).collect::<Vec<_>>());
    let Some(best) = series
        .iter()
        .min_by(|a, b| time(&a.1).value.total_cmp(&time(&b.1).value))
        .map(|s| s.1.clone())
    else {
        return Vec::new();
    };
    let mut out: Vec<ValueEffect> = series
        .iter()
        .map(|(v, s, cases)| ValueEffect {
            value: v.clone(),
            time: time(s),
            vs_best: paired_by_round(s, &best, kind),
            cases: *cases,
        })
        .collect();
    out.sort_by(|a, b| a.time.value.total_cmp(&b.time.value));
    out
}

/// The value a sweep that does not vary `param` runs with: SQLite's
/// default for its settings (a default build: page_size 4096, journal_mode
/// delete, synchronous full, ...), blobbench's for its own (open_mode
/// nomutex, transaction deferred); None for any other PRAGMA.
pub fn default_value(param: &str) -> Option<&'static str> {
    Some(match param {
        "page_size" => "4096",
        "journal_mode" => "delete",
        "synchronous" => "full",
        "locking_mode" => "normal",
        "cache_size" => "-2000",
        "mmap_size" => "0",
        "journal_size_limit" => "-1",
        "open_mode" => "nomutex",
        "transaction" => "deferred",
        _ => return None,
    })
}

/// Which value a parameter's effects are measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Baseline {
    /// The value a sweep without the parameter runs with ([`default_value`]).
    Default,
    /// The first value given (and measured): the default was not swept, or
    /// the parameter has none.
    FirstGiven,
}

/// One value of a parameter for one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueTime {
    /// The value.
    pub value: String,
    /// Per round the median time over the cases having it; the median of
    /// the rounds with its interval.
    pub time: Estimate,
    /// Cases having the value.
    pub cases: usize,
}

/// A parameter's effect on one workload, decided against its default: a
/// value's effect is stated only where the interval of its time over the
/// default's (paired round by round) excludes 1.00; elsewhere it is within
/// noise, and the default is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamEffect {
    /// The workload timed.
    pub workload: Workload,
    /// The parameter.
    pub param: String,
    /// What the value compared against is.
    pub baseline: Baseline,
    /// Every value measured, in the order given.
    pub values: Vec<ValueTime>,
    /// The decision against the baseline value: every other value's time
    /// over its time, in the order given, and whether it was within noise.
    pub decision: AgainstDefault<String>,
}

impl ParamEffect {
    /// The time and cases of `value`.
    pub fn value(&self, value: &str) -> Option<&ValueTime> {
        self.values.iter().find(|v| v.value == value)
    }
}

/// Each parameter the plan varies, its effect on workload `w` decided
/// against its default; parameters with fewer than two values measured are
/// left out.
pub fn param_effects(
    plan: &SweepPlan,
    records: &[Record],
    w: &Workload,
    kind: Stopping,
) -> Vec<ParamEffect> {
    plan.params
        .iter()
        .filter(|p| p.values.len() > 1)
        .filter_map(|p| {
            let mut series = value_series(records, w, &p.name);
            // In the order given.
            series.sort_by_key(|s| p.values.iter().position(|v| *v == s.0));
            let (baseline, base) =
                match default_value(&p.name).and_then(|d| series.iter().position(|s| s.0 == d)) {
                    Some(i) => (Baseline::Default, i),
                    None => (Baseline::FirstGiven, 0),
                };
            (series.len() > 1).then(|| {
                let default = &series[base];
                let others = series
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != base)
                    .map(|(_, s)| (s.0.clone(), paired_by_round(&s.1, &default.1, kind)))
                    .collect();
                ParamEffect {
                    workload: *w,
                    param: p.name.clone(),
                    baseline,
                    values: series
                        .iter()
                        .map(|s| ValueTime {
                            value: s.0.clone(),
                            time: kind.median(&s.1.iter().map(|x| x.1).collect::<Vec<_>>()),
                            cases: s.2,
                        })
                        .collect(),
                    decision: AgainstDefault::decide(default.0.clone(), others),
                }
            })
        })
        .collect()
}

/// Every workload's parameter effects ([`param_effects`]).
pub fn all_param_effects(plan: &SweepPlan, records: &[Record], kind: Stopping) -> Vec<ParamEffect> {
    plan.workloads
        .iter()
        .flat_map(|w| param_effects(plan, records, w, kind))
        .collect()
}

impl SweepState {
    /// How the rounds ended, which sets the intervals' ranks: on the
    /// effects' width under a precision target, else a fixed count.
    pub fn stopping_kind(&self) -> Stopping {
        match self.stopping.as_ref().map(|r| r.rule) {
            Some(RoundsRule::Precision(_)) => Stopping::OnWidth,
            _ => Stopping::Fixed,
        }
    }

    /// The parameter effects on workload `w`: as stored when the sweep
    /// stopped, or computed from the records (a sweep interrupted, or a
    /// result from before effects were stored).
    pub fn effects_on(&self, w: &Workload) -> Vec<ParamEffect> {
        if self.effects.is_empty() {
            return param_effects(&self.plan, &self.records, w, self.stopping_kind());
        }
        self.effects
            .iter()
            .filter(|e| e.workload == *w)
            .cloned()
            .collect()
    }
}

/// The recommended case, by the same rule as every decision: each
/// parameter at its default (or first value given) unless another value is
/// faster beyond the noise on some workload and slower beyond it on none,
/// and never a setting that is not power-safe; with its geometric mean of
/// (time / fastest time) over the workloads. None when that case was not
/// measured on every workload. A median alone never moves it, so a rerun
/// or `--resume` that adds rounds changes it only when a decision changes.
pub fn recommendation(
    plan: &SweepPlan,
    records: &[Record],
    cases: &[Case],
    kind: Stopping,
) -> Option<(Case, f64)> {
    let effects: Vec<ParamEffect> = all_param_effects(plan, records, kind);
    let wanted: Case = plan
        .params
        .iter()
        .map(|p| Some((p.name.clone(), recommended_value(p, &effects)?)))
        .collect::<Option<_>>()?;
    let case = cases.iter().find(|c| same_case(c, &wanted))?.clone();
    let mut ratios = Vec::new();
    for w in &plan.workloads {
        let ranked = ranked(records, cases, w);
        let best = ranked.first()?.1;
        let (_, t, _) = ranked.iter().find(|(c, _, _)| *c == case)?;
        ratios.push(t / best);
    }
    let geo = (ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len().max(1) as f64).exp();
    Some((case, geo))
}

/// A parameter's recommended value over every workload's effect (see
/// [`recommendation`]): a parameter with one value keeps it; a baseline
/// that is not power-safe gives way to the first value given that is;
/// None when no value is power-safe.
fn recommended_value(p: &Param, effects: &[ParamEffect]) -> Option<String> {
    let safe = |v: &str| power_safe(&vec![(p.name.clone(), v.to_string())]);
    let mine: Vec<&ParamEffect> = effects.iter().filter(|e| e.param == p.name).collect();
    let first_safe = || p.values.iter().find(|v| safe(v)).cloned();
    let Some(first) = mine.first() else {
        return p
            .values
            .first()
            .filter(|v| safe(v))
            .cloned()
            .or_else(first_safe);
    };
    let baseline = first.decision.default.clone();
    let slower_somewhere = |v: &str| {
        mine.iter().any(|e| {
            e.decision
                .others
                .iter()
                .any(|(o, est)| o == v && super::advise::slower_beyond_noise(est))
        })
    };
    // The values chosen on some workload, most often chosen first.
    let mut chosen: Vec<(String, usize)> = Vec::new();
    for e in &mine {
        let c = &e.decision.chosen;
        if *c == baseline || !safe(c) || slower_somewhere(c) {
            continue;
        }
        match chosen.iter_mut().find(|(v, _)| v == c) {
            Some((_, n)) => *n += 1,
            None => chosen.push((c.clone(), 1)),
        }
    }
    // Ties go to the value chosen first (max_by_key keeps the last).
    let most = chosen.iter().map(|(_, n)| *n).max();
    chosen
        .into_iter()
        .find(|(_, n)| Some(*n) == most)
        .map(|(v, _)| v)
        .or_else(|| safe(&baseline).then_some(baseline))
        .or_else(first_safe)
}

/// Whether two cases set the same values (in any order).
fn same_case(a: &Case, b: &Case) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(case: &Case, round: u64, ns: u64) -> Record {
        Record {
            case: case.clone(),
            workload: Workload::BlobRead { count: 1, size: 1 },
            round,
            timing: Timing {
                ns,
                commit_ns: 0,
                ops: 1,
                settings_read_back: Vec::new(),
            },
        }
    }

    #[test]
    fn cases_within_noise_of_the_fastest_are_tied() {
        let case = |v: &str| -> Case { vec![("page_size".to_string(), v.to_string())] };
        let (a, b, c) = (case("a"), case("b"), case("c"));
        let mut records = Vec::new();
        // b swaps places with a from round to round; c is twice as slow
        // every round, though the rounds drift together.
        let drift = [100, 130, 90, 120, 110];
        let b_vs_a = [1.05, 0.96, 1.04, 0.97, 1.02];
        for (r, (&d, &x)) in drift.iter().zip(&b_vs_a).enumerate() {
            records.push(record(&a, r as u64, d));
            records.push(record(&b, r as u64, (d as f64 * x) as u64));
            records.push(record(&c, r as u64, d * 2));
        }
        let w = Workload::BlobRead { count: 1, size: 1 };
        let ranked = ranked(&records, &[a, b, c], &w);
        let st = standings(&records, &ranked, &w, Stopping::Fixed);
        assert_eq!(st.len(), 3);
        assert!(st[0].tied);
        assert!(st[1].tied, "{:?}", st[1]);
        assert!(!st[2].tied, "{:?}", st[2]);
        assert!((st[2].vs_fastest.value - 2.0).abs() < 0.02, "{:?}", st[2]);
        assert!(st[2].vs_fastest.has_interval());
    }

    #[test]
    fn a_parameters_values_are_compared_round_by_round() {
        let case = |j: &str, s: &str| -> Case {
            vec![
                ("journal_mode".to_string(), j.to_string()),
                ("synchronous".to_string(), s.to_string()),
            ]
        };
        let mut records = Vec::new();
        // wal takes 1.5x truncate every round, though rounds drift; the
        // synchronous modes swap places from round to round.
        let drift = [100, 140, 90, 120, 110, 105];
        for (r, &d) in drift.iter().enumerate() {
            let (up, down) = if r % 2 == 0 { (1, 0) } else { (0, 1) };
            let r = r as u64;
            records.push(record(&case("truncate", "full"), r, d + up));
            records.push(record(&case("truncate", "normal"), r, d + down));
            records.push(record(&case("wal", "full"), r, d * 3 / 2 + up));
            records.push(record(&case("wal", "normal"), r, d * 3 / 2 + down));
        }
        let w = Workload::BlobRead { count: 1, size: 1 };
        let journal = value_effects(&records, &w, "journal_mode", Stopping::Fixed);
        assert_eq!(journal.len(), 2);
        assert_eq!(journal[0].value, "truncate");
        assert_eq!(journal[0].cases, 2);
        assert!((journal[1].vs_best.value - 1.5).abs() < 0.02, "{journal:?}");
        assert!(!journal[1].vs_best.contains(1.0), "{journal:?}");
        let sync = value_effects(&records, &w, "synchronous", Stopping::Fixed);
        assert_eq!(sync.len(), 2);
        assert!(sync[1].vs_best.contains(1.0), "{sync:?}");
        assert!(value_effects(&records, &w, "page_size", Stopping::Fixed).is_empty());
    }

    /// journal_mode wal at 0.6x delete's time every round; synchronous
    /// normal at `normal` of full's time per round; rounds drift together.
    fn effects_of(normal: [f64; 5]) -> Vec<ParamEffect> {
        let (plan, records) = sweep_of(normal);
        param_effects(&plan, &records, &plan.workloads[0], Stopping::Fixed)
    }

    /// The plan and records behind [`effects_of`].
    fn sweep_of(normal: [f64; 5]) -> (SweepPlan, Vec<Record>) {
        let param = |name: &str, values: &[&str]| Param {
            name: name.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let plan = SweepPlan {
            params: vec![
                param("journal_mode", &["wal", "delete"]),
                param("synchronous", &["normal", "full"]),
                param("temp_store", &["memory", "file"]),
                param("cache_size", &["2000"]),
            ],
            workloads: vec![Workload::BlobRead { count: 1, size: 1 }],
            filters: Vec::new(),
            excludes: Vec::new(),
            seed: 1,
        };
        let drift = [
            1_000_000.0,
            1_300_000.0,
            900_000.0,
            1_200_000.0,
            1_100_000.0,
        ];
        let mut records = Vec::new();
        for case in plan.cases() {
            let has = |n: &str, v: &str| case.iter().any(|(a, b)| a == n && b == v);
            for (r, d) in drift.iter().enumerate() {
                let mut t = *d;
                if has("journal_mode", "wal") {
                    t *= 0.6;
                }
                if has("synchronous", "normal") {
                    t *= normal[r];
                }
                records.push(record(&case, r as u64, t as u64));
            }
        }
        (plan, records)
    }

    #[test]
    fn the_recommendation_follows_each_parameters_decision_not_the_median() {
        let setting = |case: &Case, name: &str| {
            case.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        // synchronous=normal 3% faster at the median, within the margin a
        // rerun can move it: the fastest case has it, the recommendation
        // keeps the default full; wal is 0.6x every round: taken.
        let (plan, records) = sweep_of([0.97, 0.96, 0.98, 0.97, 0.96]);
        let cases = plan.cases();
        let fastest = &ranked(&records, &cases, &plan.workloads[0])[0].0;
        assert_eq!(setting(fastest, "synchronous"), "normal");
        let (rec, geo) =
            recommendation(&plan, &records, &cases, Stopping::Fixed).expect("a recommendation");
        assert_eq!(setting(&rec, "journal_mode"), "wal");
        assert_eq!(setting(&rec, "synchronous"), "full");
        assert_eq!(
            setting(&rec, "temp_store"),
            "memory",
            "first given, no effect"
        );
        assert!(geo > 1.0 && geo < 1.1, "{geo}");
        // Half the time every round: normal is taken.
        let (plan, records) = sweep_of([0.5; 5]);
        let (rec, _) = recommendation(&plan, &records, &plan.cases(), Stopping::Fixed).unwrap();
        assert_eq!(setting(&rec, "synchronous"), "normal");
    }

    #[test]
    fn a_parameters_effect_is_stated_only_beyond_the_noise() {
        let e = effects_of([0.90, 1.10, 0.95, 1.05, 0.92]);
        // cache_size has one value: no effect to decide.
        let names: Vec<&str> = e.iter().map(|e| e.param.as_str()).collect();
        assert_eq!(names, ["journal_mode", "synchronous", "temp_store"]);
        // wal: 0.6x delete's time every round, beyond the noise.
        let j = &e[0];
        assert_eq!(j.baseline, Baseline::Default);
        assert_eq!(
            (j.decision.default.as_str(), j.decision.chosen.as_str()),
            ("delete", "wal")
        );
        assert!(!j.decision.within_noise);
        let r = j.decision.vs_default(&"wal".to_string()).unwrap();
        assert!((r.value - 0.6).abs() < 1e-3 && r.high < 1.0, "{r:?}");
        assert_eq!(
            j.values
                .iter()
                .map(|v| v.value.as_str())
                .collect::<Vec<_>>(),
            ["wal", "delete"]
        );
        assert_eq!(j.value("wal").unwrap().cases, 4);
        // normal: faster at the median, within noise: the default full kept.
        let s = &e[1];
        assert_eq!(
            (s.decision.default.as_str(), s.decision.chosen.as_str()),
            ("full", "full")
        );
        assert!(s.decision.within_noise);
        let r = s.decision.vs_default(&"normal".to_string()).unwrap();
        assert!(r.value < 1.0 && r.contains(1.0), "{r:?}");
        // temp_store has no default here: the first value given is the baseline.
        let t = &e[2];
        assert_eq!(t.baseline, Baseline::FirstGiven);
        assert_eq!(t.decision.default, "memory");
        // normal at 0.5x full's every round: stated.
        let e = effects_of([0.50, 0.52, 0.49, 0.51, 0.50]);
        assert_eq!(e[1].decision.chosen, "normal");
        assert!(!e[1].decision.within_noise);
    }

    #[test]
    fn a_slower_disk_ranking_the_same_cases_alike_is_seen_as_such() {
        let case = |v: &str| -> Case { vec![("page_size".to_string(), v.to_string())] };
        let cases: Vec<Case> = ["a", "b", "c", "d"].iter().map(|v| case(v)).collect();
        let w = Workload::BlobRead { count: 1, size: 1 };
        let (mut first, mut here, mut shuffled) = (Vec::new(), Vec::new(), Vec::new());
        for (i, c) in cases.iter().enumerate() {
            for r in 0..3 {
                let t = 100 * (i as u64 + 1) + r;
                first.push(record(c, r, t));
                here.push(record(c, r, t * 4));
                shuffled.push(record(c, r, 100 * (4 - i as u64) + r));
            }
        }
        let same = compare_disks(&here, &first, &cases, &w).unwrap();
        assert_eq!(same.cases, 4);
        assert!((same.slowdown.value - 4.0).abs() < 0.05, "{same:?}");
        assert!((same.spearman - 1.0).abs() < 1e-9, "{same:?}");
        let reversed = compare_disks(&shuffled, &first, &cases, &w).unwrap();
        assert!((reversed.spearman + 1.0).abs() < 1e-9, "{reversed:?}");
        assert!(compare_disks(&here, &first, &cases[..1], &w).is_none());
    }
}
