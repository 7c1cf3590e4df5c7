//! kill -9 at random moments (fixed seeds, so a failure can be replayed)
//! during `init` (sqlite and dir), `export`, `run --update` under every
//! journal mode, and `serve` PUT. Afterwards the database passes
//! `PRAGMA integrity_check`, every acknowledged write reads back whole, and
//! the next blobbench command either works or stops with one clear line
//! (exit status 2) whose fix, when followed, makes it work.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{bin, ok, run, start_serve};
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

/// splitmix64: the random moments, reproducible from the seed.
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

/// Starts `blobbench args` in `dir` and kills it (SIGKILL) after `delay`
/// unless it finished first.
fn kill_after(dir: &Path, args: &[&str], delay: Duration) {
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    child.wait().unwrap();
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
            let words = shell_words(fix.trim_start_matches("blobbench "));
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

/// Splits a command as a POSIX shell would for the quoting blobbench
/// writes (plain words and 'single-quoted' ones).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in text.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// `PRAGMA integrity_check` through a read-write connection, which rolls a
/// hot journal back first (as the sqlite3 shell does).
fn integrity(db: &Path) -> String {
    let c = Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn kill_during_init_and_export() {
    let tmp = Scratch::new();
    let d = tmp.path();
    ok(d, &["init", "source.db", "--count", "2000", "--size", "4k"]);
    // How long each command takes whole here (over a dataset of its own,
    // as in the rounds below): the kills fall within it.
    let ops: [(&str, &[&str]); 3] = [
        (
            "sqlite:t.db",
            &["init", "t.db", "--count", "3000", "--size", "4k"][..],
        ),
        (
            "dir:f",
            &["init", "dir:f", "--count", "3000", "--size", "4k"],
        ),
        ("dir:out", &["export", "source.db", "out"]),
    ];
    let whole: Vec<u64> = ops
        .iter()
        .map(|(_, args)| {
            let start = Instant::now();
            ok(d, args);
            start.elapsed().as_millis() as u64 + 1
        })
        .collect();
    for seed in SEEDS {
        let mut rng = Rng(seed);
        for (&(target, args), &ms) in ops.iter().zip(&whole) {
            let delay = Duration::from_millis(rng.below(ms));
            let context = format!("seed {seed}, {args:?} killed after {delay:?}");
            kill_after(d, args, delay);
            works_or_names_the_fix(d, &["run", target, "--verify", "--count", "50"], &context);
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
            ok(d, &["run", target, "--verify", "--count", "50"]);
        }
    }
}

#[test]
fn kill_during_updates_in_every_journal_mode() {
    let tmp = Scratch::new();
    let d = tmp.path();
    for mode in ["delete", "truncate", "persist", "wal", "memory", "off"] {
        let db = format!("{mode}.db");
        ok(d, &["init", &db, "--count", "1500", "--size", "4k"]);
        let target = format!("sqlite:{db}?journal_mode={mode}");
        for seed in SEEDS {
            let mut rng = Rng(seed);
            let delay = Duration::from_millis(50 + rng.below(300));
            let context = format!("seed {seed}, journal_mode={mode}, killed after {delay:?}");
            kill_after(d, &["run", &target, "--update", "--repeat", "1000"], delay);
            // A read first: it may not write, so it works or says how.
            works_or_names_the_fix(d, &["run", &db, "--verify"], &context);
            assert_eq!(integrity(&d.join(&db)), "ok", "{context}");
        }
    }
}

/// A PUT of `body` to `/blobs/{key}`; true when the server acknowledged it.
fn put(addr: &str, key: u64, body: &[u8]) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let head = format!(
        "PUT /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-token-0123456789\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
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

/// The content PUT under `key`: its own, so a torn or lost write shows.
fn content(key: u64) -> Vec<u8> {
    (0..20_000u64)
        .map(|i| (i.wrapping_mul(31) ^ key.wrapping_mul(0x9E37)) as u8)
        .collect()
}

#[test]
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
        for seed in SEEDS {
            let mut rng = Rng(seed);
            let delay = Duration::from_millis(20 + rng.below(300));
            let context = format!("seed {seed}, serve {target} killed after {delay:?}");
            let acked = serve_and_kill(d, target, delay);
            for &key in &acked {
                assert_eq!(
                    read_blob(d, target, key),
                    Some(content(key)),
                    "{context}: key {key}"
                );
            }
            if let Some(db) = target.strip_prefix("sqlite:") {
                assert_eq!(integrity(&d.join(db)), "ok", "{context}");
            }
            works_or_names_the_fix(d, &["run", target, "--count", "50"], &context);
        }
    }
}

/// Starts a writable server on `target`, PUTs new keys (101, 102, ...)
/// until it is killed after `delay`; returns the keys acknowledged.
fn serve_and_kill(dir: &Path, target: &str, delay: Duration) -> Vec<u64> {
    let (mut child, addr) = start_serve(
        dir,
        target,
        &["--writable", "--token", "secret-token-0123456789"],
    );
    let acked = Arc::new(Mutex::new(Vec::new()));
    let writer = {
        let acked = acked.clone();
        std::thread::spawn(move || {
            // New keys contiguous with the dataset's 1..=100 (created in
            // the first round, replaced in later ones).
            let mut key = 101;
            while put(&addr, key, &content(key)) {
                acked.lock().unwrap().push(key);
                key += 1;
            }
        })
    };
    std::thread::sleep(delay);
    child.kill().unwrap();
    child.wait().unwrap();
    writer.join().unwrap();
    Arc::try_unwrap(acked).unwrap().into_inner().unwrap()
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
