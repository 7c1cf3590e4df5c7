//! kill -9 at points chosen by fixed seeds during `init` (sqlite and dir),
//! `export`, `run --update` under every journal mode, and `serve` PUT.
//! Afterwards the database passes `PRAGMA integrity_check`, every
//! acknowledged write reads back whole, and the next blobbench command
//! either works or stops with one clear line (exit status 2) whose fix,
//! when followed, makes it work.
//!
//! A seed picks a step of the command's work (the product's pause steps,
//! `common::Held`) and which time it is reached; the command is held there
//! and killed while held. So each seed kills at the same point of the work
//! whatever the machine's load, and a failure replays from its seed.

use crate::common;
use crate::common::small;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Held, PATIENCE, bin, kill_at, ok, run};
use rusqlite::Connection;

const SEEDS: [u64; 4] = [11, 23, 37, 41];

/// Where a test works: a tmpfs when root may mount one (fast, and free of
/// other processes' disk traffic, which makes removing files slow), else
/// a temporary folder.
enum Scratch {
    Tmpfs(common::tmpfs::Tmpfs),
    Dir(tempfile::TempDir),
}

impl Scratch {
    fn new() -> Scratch {
        match common::tmpfs::Tmpfs::mount("256m") {
            Some(fs) => Scratch::Tmpfs(fs),
            None => Scratch::Dir(tempfile::tempdir().unwrap()),
        }
    }

    fn path(&self) -> &Path {
        match self {
            Scratch::Tmpfs(fs) => &fs.path,
            Scratch::Dir(d) => d.path(),
        }
    }
}

/// splitmix64: the points killed at, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// A pause step of a command's work and how many times the command
/// reaches it.
type Step = (&'static str, u64);

/// The point the `index`th seed kills a command at: each seed in turn
/// takes the next of `steps` (so every step is taken when there are as
/// many seeds), and `rng` picks which time it is reached.
fn point(index: usize, rng: &mut Rng, steps: &[Step]) -> String {
    let (step, times) = steps[index % steps.len()];
    format!("{step}@{}", 1 + rng.below(times))
}

/// The next command: success, or exit 2 with one line and no panic that
/// names its fix. A fix given as a command (`blobbench ...` in
/// backquotes) is followed, and the command must then work.
fn works_or_names_the_fix(dir: &Path, args: &[&str], context: &str) {
    follow_fixes(dir, args, context, 3);
}

fn follow_fixes(dir: &Path, args: &[&str], context: &str, depth: u32) {
    assert!(
        depth > 0,
        "{context}: {args:?} still fails after following its fixes"
    );
    let out = run(dir, args);
    if out.status.success() {
        return;
    }
    let err = clear_error(&out, context, args);
    match err
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|c| c.starts_with("blobbench "))
    {
        Some(fix) => {
            let words = common::shell_words(fix.trim_start_matches("blobbench "));
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let fixed = run(dir, &words);
            if !fixed.status.success() {
                // A fix may itself stop with another clear line (an update
                // that finds the dataset incomplete names init).
                let again = clear_error(&fixed, context, &words);
                assert!(again != err, "{context}: the fix {fix} repeats the error");
                return follow_fixes(dir, args, context, depth - 1);
            }
        }
        // A dataset that is not there (or not a database at all) names
        // its fix in words; the caller makes it again.
        None => {
            assert!(
                err.contains("blobbench init") || err.contains("sqlite3 "),
                "{context}: {args:?} names no fix: {err}"
            );
            return;
        }
    }
    ok(dir, args);
}

/// Asserts exit 2, one line, no panic; returns the line.
fn clear_error(out: &Output, context: &str, args: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = err
        .lines()
        .find(|l| l.starts_with("blobbench: error:"))
        .unwrap_or_else(|| panic!("{context}: {args:?} failed without an error line: {err}"));
    assert_eq!(out.status.code(), Some(2), "{context}: {args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{context}: {err}"
    );
    line.to_string()
}

/// `PRAGMA integrity_check` through a read-write connection, which rolls a
/// hot journal back first (as the sqlite3 shell does).
fn integrity(db: &Path) -> String {
    let c = Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn kill_during_init_and_export() {
    let tmp = Scratch::new();
    let d = tmp.path();
    ok(d, &["init", "source.db", "--count", "2000", "--size", "4k"]);
    // Each command, and the steps of its work it can be killed at: 3000
    // blobs of 4k are 12 MB, past SQLite's 2 MB page cache, so a load
    // killed late has spilled pages into the file beside a hot journal.
    let init_steps = [
        ("dataset-blob", 3000),
        ("dataset-before-commit", 1),
        ("dataset-before-finish", 1),
    ];
    let ops: [(&str, &[&str], &[Step]); 3] = [
        (
            "sqlite:t.db",
            &["init", "t.db", "--count", "3000", "--size", "4k"][..],
            &init_steps,
        ),
        (
            "dir:f",
            &["init", "dir:f", "--count", "3000", "--size", "4k"],
            &init_steps,
        ),
        (
            "dir:out",
            &["export", "source.db", "out"],
            &[("copy-blob", 2000), ("copy-before-finish", 1)],
        ),
    ];
    for (index, seed) in SEEDS.into_iter().enumerate() {
        let mut rng = Rng(seed);
        for &(target, args, steps) in &ops {
            let point = point(index, &mut rng, steps);
            let context = format!("seed {seed}, {args:?} killed at {point}");
            kill_at(d, args, &point);
            works_or_names_the_fix(
                d,
                &small(&["run", target, "--verify", "--count", "50"]),
                &context,
            );
            // (Only a database that is there: opening creates one.)
            if target.starts_with("sqlite") && d.join("t.db").exists() {
                assert_eq!(integrity(&d.join("t.db")), "ok", "{context}");
            }
            // Making it again always works, over what the kill left, and
            // leaves no temporary database behind.
            ok(d, args);
            let litter: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".init-"))
                .collect();
            assert!(litter.is_empty(), "{context}: left {litter:?}");
            ok(d, &small(&["run", target, "--verify", "--count", "50"]));
        }
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn kill_during_updates_in_every_journal_mode() {
    let tmp = Scratch::new();
    let d = tmp.path();
    for mode in ["delete", "truncate", "persist", "wal", "memory", "off"] {
        let db = format!("{mode}.db");
        ok(d, &["init", &db, "--count", "1500", "--size", "4k"]);
        let target = format!("sqlite:{db}?journal_mode={mode}");
        for (index, seed) in SEEDS.into_iter().enumerate() {
            let mut rng = Rng(seed);
            // A repetition rewrites all 6 MB, past the 2 MB page cache:
            // killed before its commit, the file holds some of the new
            // pages; after it, a WAL holds frames not checkpointed.
            let point = point(
                index,
                &mut rng,
                &[
                    ("repetition-before-commit", 3),
                    ("repetition-after-commit", 3),
                ],
            );
            let context = format!("seed {seed}, journal_mode={mode}, killed at {point}");
            kill_at(
                d,
                &small(&["run", &target, "--update", "--repeat", "3"]),
                &point,
            );
            // A read first: it may not write, so it works or says how.
            works_or_names_the_fix(d, &small(&["run", &db, "--verify"]), &context);
            assert_eq!(integrity(&d.join(&db)), "ok", "{context}");
        }
    }
}

const TOKEN: &str = "secret-token-0123456789";

/// A PUT of `body` to `/blobs/{key}`; true when the server acknowledged it.
fn put(addr: &str, key: u64, body: &[u8]) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    // Only a guard against a hang: the reply comes, or the kill closes
    // the connection.
    let _ = s.set_read_timeout(Some(PATIENCE));
    let head = format!(
        "PUT /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(body))
        .is_err()
    {
        return false;
    }
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 201") || reply.starts_with("HTTP/1.1 204")
}

/// The content PUT under `key` in the round of `seed`: its own, so a torn
/// or lost write shows, even over the same key's write of an earlier round.
fn content(seed: u64, key: u64) -> Vec<u8> {
    (0..20_000u64)
        .map(|i| (i.wrapping_mul(31) ^ key.wrapping_mul(0x9E37) ^ seed.wrapping_mul(0x51)) as u8)
        .collect()
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn kill_serve_during_puts() {
    let tmp = Scratch::new();
    let d = tmp.path();
    for (target, init) in [
        (
            "sqlite:del.db",
            &["init", "del.db", "--count", "100", "--size", "1k"][..],
        ),
        (
            "sqlite:wal.db",
            &[
                "init", "wal.db", "--jmode", "wal", "--count", "100", "--size", "1k",
            ],
        ),
        (
            "dir:files",
            &["init", "dir:files", "--count", "100", "--size", "1k"],
        ),
    ] {
        ok(d, init);
        for (index, seed) in SEEDS.into_iter().enumerate() {
            let mut rng = Rng(seed);
            let point = point(index, &mut rng, &[("serve-put-committed", 20)]);
            let context = format!("seed {seed}, serve {target} killed at {point}");
            let (acked, committed) = serve_and_kill(d, target, seed, &point);
            // Every PUT before the one held was acknowledged; that one
            // was committed, its reply not sent.
            assert_eq!(
                acked.len() as u64,
                committed - 101,
                "{context}: acknowledged {acked:?}"
            );
            for key in acked.into_iter().chain([committed]) {
                assert_eq!(
                    read_blob(d, target, key),
                    Some(content(seed, key)),
                    "{context}: key {key}"
                );
            }
            if let Some(db) = target.strip_prefix("sqlite:") {
                assert_eq!(integrity(&d.join(db)), "ok", "{context}");
            }
            works_or_names_the_fix(d, &small(&["run", target, "--count", "50"]), &context);
        }
    }
}

/// Starts a writable server on `target`, PUTs new keys (101, 102, ...)
/// with the content of `seed`'s round, and kills the server at `point`
/// (a `serve-put-committed` step); returns the keys acknowledged and the
/// key whose PUT was held.
fn serve_and_kill(dir: &Path, target: &str, seed: u64, point: &str) -> (Vec<u64>, u64) {
    // Its stderr goes to a file, where the writer reads the banner: the
    // server reaches `point` only once the writer has sent its PUTs, and
    // Held::start returns only then.
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr");
    let mut command = bin();
    command
        .current_dir(dir)
        .args(["serve", target, "--listen", "127.0.0.1:0", "--writable"])
        .args(["--token", TOKEN])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let writer = std::thread::spawn(move || {
        let addr = banner_address(&log);
        // New keys contiguous with the dataset's 1..=100 (created in the
        // first round, replaced in later ones).
        let mut acked = Vec::new();
        let mut key = 101;
        while put(&addr, key, &content(seed, key)) {
            acked.push(key);
            key += 1;
        }
        (acked, key)
    });
    Held::start(command, point).end_with(libc::SIGKILL);
    writer.join().unwrap()
}

/// The address a server's banner (the first line of its stderr, written
/// to `log`) names, once it is there.
fn banner_address(log: &Path) -> String {
    let start = Instant::now();
    loop {
        let mut line = String::new();
        if let Ok(f) = std::fs::File::open(log) {
            let _ = BufReader::new(f).read_line(&mut line);
        }
        if line.ends_with('\n') {
            return line
                .split(" on http://")
                .nth(1)
                .and_then(|s| s.split('/').next())
                .unwrap_or_else(|| panic!("no address in {line:?}"))
                .to_string();
        }
        assert!(start.elapsed() < PATIENCE, "no banner within {PATIENCE:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Blob `key` as stored, read without blobbench.
fn read_blob(dir: &Path, target: &str, key: u64) -> Option<Vec<u8>> {
    if let Some(db) = target.strip_prefix("sqlite:") {
        let c = Connection::open(dir.join(db)).unwrap();
        return c
            .query_row("SELECT v FROM kv WHERE k=?1", [key as i64], |r| r.get(0))
            .ok();
    }
    let folder = target.strip_prefix("dir:").unwrap();
    std::fs::read(dir.join(folder).join(format!("{key:06}"))).ok()
}
