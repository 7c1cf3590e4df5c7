//! Named points where a test can hold the process still, so that it can
//! interrupt a command at an exact step instead of racing it.
//!
//! A test that must send Ctrl-C "half-way through an export" cannot win by
//! timing: on a loaded machine the export may end before the signal, or the
//! signal may come before anything was written. Instead the test starts the
//! command with
//!
//! - `BLOBBENCH_TEST_PAUSE_AT=STEP` (or `STEP@N`: the Nth time the step is
//!   reached, counting from 1), and
//! - `BLOBBENCH_TEST_PAUSE_FILE=PATH`,
//!
//! and when the command reaches that step it writes its pid to `PATH` and
//! waits, doing nothing else, until the test removes `PATH`. The test waits
//! for the file, acts (a signal, SIGKILL, another process's write) while
//! the command is held at that point, and removes the file to let it go on.
//!
//! This is a testing aid, not a user feature: only the binary reads the
//! variables ([`enable_from_env`], called by `main` through
//! `command::enable_testing_aids`), so library code run
//! inside another process (the test harness itself) never pauses; without
//! them [`at`] costs one load of an initialised cell, and no point is ever
//! placed inside a timed operation.
//!
//! The steps (each named once, where the code calls [`at`]):
//!
//! | step | reached |
//! |---|---|
//! | `dataset-blob` | `init` and every dataset a suite makes: after each blob is stored (inside the load's transaction on a database) |
//! | `dataset-before-commit` | the same, after the last blob, before the load's transaction commits |
//! | `dataset-before-finish` | the same, after the commit, before the files are synced and the dataset marked complete |
//! | `copy-blob` | `export`: after each blob is copied |
//! | `copy-before-finish` | `export`: after the last blob and its commit, before the copy is marked complete |
//! | `repetition-before-commit` | `run`: a repetition's timed operations done, its transaction not yet committed |
//! | `repetition-after-commit` | `run`: a repetition committed, its WAL not yet checkpointed |
//! | `aging-replaced` | `suite aging`: after each replaced blob of an aging pass |
//! | `concurrent-batch` | `run --threads`: a worker's batch done and counted (the worker holds; the others go on) |
//! | `load-level` | `load`: a concurrency level about to start its clock |
//! | `serve-put-committed` | `serve`: a PUT's blob stored and committed, the reply not yet sent |
//! | `serve-file-check` | `serve`: a dir or tree blob's reply about to check that its file was not written into (all but its last 16 KiB handed to the kernel, or to hyper all but its last piece) |
//! | `serve-mapped-walk` | `serve`: a SQLite blob's pages about to be found in the mapped database file (rollback journal; each GET of a blob, and again for a stream over 256 KiB) |
//! | `round-case` | `quick`, `suite fasterthanfs`: before each case of each round (warm-up included) |
//! | `advise-round` | `advise`: before each round at each size (its warm-up round first) |
//! | `lob-size` | `suite lob`: before each system's each blob size (sizes of a system in order, systems in turn) |
//! | `lob-blob` | `suite lob`: after each timed INSERT of a size's write phase, its connection open |
//! | `sweep-run` | `sweep`: before each run of a combination and workload |
//! | `concurrency-round` | `suite concurrency`: before each layout's each round of each point (layouts in that round's order; a failed layout's skipped rounds are not counted) |

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The variable naming the step to pause at (`STEP` or `STEP@N`).
pub const PAUSE_AT_VAR: &str = "BLOBBENCH_TEST_PAUSE_AT";
/// The variable naming the file written while paused.
pub const PAUSE_FILE_VAR: &str = "BLOBBENCH_TEST_PAUSE_FILE";

/// How long a pause waits for its file to be removed before going on: a
/// test that died while the command was held must not leave it forever.
const LONGEST_PAUSE: Duration = Duration::from_secs(600);

/// A pause asked for by the environment.
struct Request {
    step: String,
    nth: u64,
    file: PathBuf,
}

static REQUEST: OnceLock<Option<Request>> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

/// Reads the pause the environment asks for, if any; `main` calls this
/// once, before any work.
pub fn enable_from_env() {
    REQUEST.get_or_init(|| {
        let at = std::env::var(PAUSE_AT_VAR).ok()?;
        let file = PathBuf::from(std::env::var_os(PAUSE_FILE_VAR)?);
        let (step, nth) = match at.split_once('@') {
            Some((step, n)) => (step.to_string(), n.parse().ok()?),
            None => (at, 1),
        };
        Some(Request { step, nth, file })
    });
}

fn request() -> Option<&'static Request> {
    REQUEST.get()?.as_ref()
}

/// Marks that the process has reached `step`; holds it there if a test
/// asked for this step (see the module's documentation).
pub fn at(step: &str) {
    let Some(request) = request() else { return };
    if request.step != step || HITS.fetch_add(1, Ordering::SeqCst) + 1 != request.nth {
        return;
    }
    hold(&request.file);
}

/// Writes `file` (whole, by rename) and waits until it is removed.
fn hold(file: &std::path::Path) {
    let partial = file.with_extension("partial");
    let written = std::fs::write(&partial, std::process::id().to_string())
        .and_then(|()| std::fs::rename(&partial, file));
    if written.is_err() {
        return;
    }
    let start = Instant::now();
    while file.exists() && start.elapsed() < LONGEST_PAUSE {
        std::thread::sleep(Duration::from_millis(1));
    }
}
