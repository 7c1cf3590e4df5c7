//! `--budget` to scale: each experiment's counts, rounds and sizes at four
//! steps, the largest whose whole fits the budget chosen. The documents'
//! own scale is the last step (`--budget 2h`); the smallest (`--budget 30s`
//! and up) keeps every experiment but at counts that answer within a
//! minute on a loaded 2-core machine, where most verdicts will be
//! inconclusive: that is what a small sample honestly gives.
//!
//! Every step gives every experiment at least six rounds (or twelve blobs
//! per size), the fewest whose sign-test interval covers 95%; the smoke
//! test runs eight, with 2000 blobs and 6 MB cells: with three rounds of
//! 400 blobs and 2 MB its 75% intervals gave firm verdicts that a rerun
//! flipped (35 of 163 in 5 back-to-back pairs; 18 of 268 now). Each step
//! aims at under half its budget on a quiet 2-core machine, so a slower or
//! busier one still fits: the default 20m took 7m 56s, 40% of it, and the
//! smoke test about 21 s (the ledger prints its time).

use std::time::Duration;

/// What the smallest step (every experiment at its smoke-test counts)
/// takes on a 2-core machine, quiet or loaded: about a minute.
pub const SMALLEST_TAKES: Duration = Duration::from_secs(60);

/// One step of scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scale {
    /// Under 5 minutes: a smoke test of every claim (about a minute).
    Tiny,
    /// 5 to 30 minutes (the default 20m): a fifth of the documents' counts.
    Small,
    /// 30 minutes to 2 hours: about half the documents' counts.
    Medium,
    /// 2 hours or more: the documents' own counts and sizes.
    Documents,
}

impl Scale {
    /// The largest step whose whole run fits `budget`: on a quiet 2-core
    /// machine the first two took about 1 and 8 minutes (see the module's
    /// note); the larger ones, estimated from each experiment's time at the
    /// small step, about 20 and 50.
    pub fn for_budget(budget: Duration) -> Scale {
        let minutes = budget.as_secs_f64() / 60.0;
        if minutes >= 120.0 {
            Scale::Documents
        } else if minutes >= 30.0 {
            Scale::Medium
        } else if minutes >= 5.0 {
            Scale::Small
        } else {
            Scale::Tiny
        }
    }

    /// Why the budget cannot hold, said before anything runs: the smallest
    /// step takes about a minute on a 2-core machine, so a budget below
    /// two thirds of that would be overrun by more than half.
    pub fn below_the_smallest(budget: Duration) -> Option<String> {
        (budget < SMALLEST_TAKES * 2 / 3).then(|| {
            format!(
                "--budget {} is below what the smallest scale takes (about {} on a 2-core machine): this run takes about that long; give --budget {} or more for the time to hold",
                humantime::format_duration(budget),
                humantime::format_duration(SMALLEST_TAKES),
                humantime::format_duration(SMALLEST_TAKES)
            )
        })
    }

    /// The step in words, as the ledger prints it.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Tiny => "tiny (budget under 5m: a smoke test, most figures wide)",
            Scale::Small => "small (budget 5m-30m: about a fifth of the documents' counts)",
            Scale::Medium => "medium (budget 30m-2h: about half the documents' counts)",
            Scale::Documents => "the documents' (budget 2h or more)",
        }
    }

    /// fasterthanfs: blobs (10k +/- 2k each) and rounds.
    pub fn fasterthanfs(self) -> (u64, u64) {
        match self {
            Scale::Tiny => (2_000, 8),
            Scale::Small => (20_000, 7),
            Scale::Medium => (50_000, 7),
            Scale::Documents => (100_000, 7),
        }
    }

    /// internal-external: blob sizes, page sizes, content per case, rounds.
    pub fn internal_external(self) -> (Vec<u64>, Vec<u32>, u64, u64) {
        let all_sizes = vec![10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];
        let all_pages = vec![1024, 2048, 4096, 8192, 16384, 32768, 65536];
        match self {
            Scale::Tiny => (
                vec![10_000, 50_000, 200_000, 1_000_000],
                vec![4096, 8192, 16384],
                6_000_000,
                8,
            ),
            Scale::Small => (all_sizes, all_pages, 20_000_000, 6),
            Scale::Medium => (all_sizes, all_pages, 50_000_000, 7),
            Scale::Documents => (all_sizes, all_pages, 100_000_000, 7),
        }
    }

    /// lob: blob sizes and blobs per size.
    pub fn lob(self) -> (Vec<u64>, u64) {
        let paper = vec![
            1_000, 2_000, 3_999, 5_000, 10_000, 50_000, 100_000, 500_000, 1_000_000, 5_000_000,
            10_000_000,
        ];
        match self {
            Scale::Tiny => (vec![1_000, 10_000, 50_000, 100_000, 1_000_000], 12),
            Scale::Small => (paper, 12),
            Scale::Medium | Scale::Documents => (paper, 20),
        }
    }

    /// http: blobs (the blog's 200..4000 KiB), concurrency levels, load
    /// per level, rounds.
    pub fn http(self) -> (u64, Vec<usize>, Duration, u32) {
        match self {
            Scale::Tiny => (12, vec![1, 4], Duration::from_millis(1600), 8),
            Scale::Small => (400, vec![1, 2, 4, 8, 16], Duration::from_secs(5), 6),
            Scale::Medium => (1000, vec![1, 2, 4, 8, 16, 32], Duration::from_secs(10), 7),
            Scale::Documents => (2000, vec![1, 2, 4, 8, 16, 32], Duration::from_secs(10), 7),
        }
    }

    /// sweep: the parameters varied (`name=a,b`), rows per insert, copies,
    /// rounds. Tiny leaves out cache size and transaction mode (their
    /// claims say "not run at this budget").
    pub fn sweep(self) -> (Vec<&'static str>, u64, u64, u64) {
        let mut params = vec![
            "open_mode=nomutex,fullmutex",
            "page_size=1024,8192",
            "locking_mode=normal,exclusive",
            "synchronous=full,normal",
            "journal_mode=wal,truncate",
        ];
        if self != Scale::Tiny {
            params.extend(["cache_size=1000,8000", "transaction=immediate,exclusive"]);
        }
        match self {
            Scale::Tiny => (params, 300, 2, 8),
            Scale::Small => (params, 10_000, 2, 6),
            Scale::Medium => (params, 20_000, 5, 6),
            Scale::Documents => (params, 50_000, 10, 6),
        }
    }

    /// aging (root only): None at Tiny (its volumes take minutes); else
    /// storage ages and read rounds, on one 1 GiB ext4 volume at 50% with
    /// the Sears et al. sizes 256 KiB and 1 MiB.
    pub fn aging(self) -> Option<(Vec<f64>, u64)> {
        match self {
            Scale::Tiny => None,
            Scale::Small => Some((vec![1.0, 2.0], 6)),
            Scale::Medium => Some((vec![1.0, 2.0, 4.0], 7)),
            Scale::Documents => Some((vec![1.0, 2.0, 4.0, 8.0], 10)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_the_smallest_scale_cannot_meet_is_said() {
        let said = Scale::below_the_smallest(Duration::from_secs(10)).unwrap();
        assert!(said.starts_with("--budget 10s is below"), "{said}");
        assert!(said.contains("give --budget 1m or more"), "{said}");
        assert_eq!(Scale::below_the_smallest(Duration::from_secs(40)), None);
    }

    #[test]
    fn budgets_pick_steps_and_two_hours_is_the_documents_scale() {
        let m = |n: u64| Scale::for_budget(Duration::from_secs(n * 60));
        assert_eq!(Scale::for_budget(Duration::from_secs(30)), Scale::Tiny);
        assert_eq!(m(20), Scale::Small);
        assert_eq!(m(45), Scale::Medium);
        assert_eq!(m(120), Scale::Documents);
        assert_eq!(Scale::Documents.fasterthanfs(), (100_000, 7));
        assert_eq!(Scale::Documents.internal_external().2, 100_000_000);
        assert_eq!(Scale::Documents.lob().0.len(), 11);
        assert_eq!(Scale::Documents.http().0, 2000);
        assert!(Scale::Tiny.aging().is_none());
    }
}
