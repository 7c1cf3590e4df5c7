//! `blobbench serve` and the locks of the database it serves: a response's
//! head and body come from one version of a blob; a reader holds writers
//! up (a rollback journal's shared lock) for no longer than
//! `--hold-timeout`, however slowly its client reads and however many
//! readers overlap; `locking_mode=exclusive` keeps writers out exactly
//! where `serve --help` says it does.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::ok;
use crate::fast::http::{Server, StopWhenDropped, blob_from_db, connect, receive_buffer};

pub(crate) const TOKEN: &str = "0123456789abcdef0123";

/// The longest a loaded 2-core machine adds to a writer's wait for
/// serve's readers beyond `--hold-timeout` (1 s by default): the readers
/// notice a waiting writer within 10 ms, copy out at most 2 MiB, and end
/// their read transactions; the rest is scheduling.
pub(crate) const LOADED_MACHINE_SLACK: Duration = Duration::from_secs(3);

/// The default `--hold-timeout`.
pub(crate) const HOLD: Duration = Duration::from_secs(1);

/// A reply read whole, or as far as the connection went.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: String,
    /// Content-Length, when sent.
    pub(crate) length: Option<usize>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// Whether the body is as long as the head announced.
    pub(crate) fn whole(&self) -> bool {
        self.length == Some(self.body.len())
    }
}

/// Reads one reply from `s`: its head, then its body up to Content-Length
/// or until the connection ends (a cut body comes back short).
pub(crate) fn read_reply(s: &mut TcpStream, head_only: bool) -> Reply {
    let mut got = Vec::new();
    let mut piece = [0u8; 64 * 1024];
    let body_at = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match s.read(&mut piece).unwrap() {
            0 => panic!("the reply ended within its head: {got:?}"),
            n => got.extend_from_slice(&piece[..n]),
        }
    };
    let headers = String::from_utf8_lossy(&got[..body_at]).to_string();
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {headers:?}"));
    let length = headers.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().unwrap())
    });
    let mut body = got[body_at..].to_vec();
    let want = if head_only { 0 } else { length.unwrap_or(0) };
    while body.len() < want {
        match s.read(&mut piece) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&piece[..n]),
        }
    }
    Reply {
        status,
        headers,
        length,
        body,
    }
}

/// GET `path` on a connection of its own.
pub(crate) fn get(addr: &str, path: &str) -> Reply {
    let mut s = connect(addr);
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    read_reply(&mut s, false)
}

/// PUT `body` at `/blobs/{key}` with the token; the reply's status.
pub(crate) fn put(addr: &str, key: u64, body: &[u8]) -> u16 {
    let mut s = connect(addr);
    s.write_all(
        format!(
            "PUT /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    s.write_all(body).unwrap();
    read_reply(&mut s, false).status
}

/// An outside writer (another process's connection, as `sqlite3` is) that
/// waits up to `busy` for locks: replaces blob `key`, returns how long it
/// took, or the error.
pub(crate) fn outside_write(
    db: &Path,
    key: i64,
    byte: u8,
    busy: Duration,
) -> Result<Duration, String> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(busy).unwrap();
    let started = Instant::now();
    let len: i64 = c
        .query_row("SELECT length(v) FROM kv WHERE k = ?1", [key], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    c.execute(
        "UPDATE kv SET v = ?1 WHERE k = ?2",
        rusqlite::params![vec![byte; len as usize], key],
    )
    .map_err(|e| e.to_string())?;
    Ok(started.elapsed())
}

/// A client that reads a large blob at about 200 kB/s (20 kB every
/// 100 ms) on a thread of its own, until told to stop; then it reads what
/// is left at full speed and returns all it got (head and body).
pub(crate) struct SlowReader {
    pub(crate) stop: std::sync::Arc<AtomicBool>,
    /// Body bytes read so far (once the head is in).
    pub(crate) body: std::sync::Arc<AtomicUsize>,
    pub(crate) thread: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl SlowReader {
    pub(crate) fn start(addr: &str, path: &str) -> SlowReader {
        let mut s = connect(addr);
        receive_buffer(&s, 64 * 1024);
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let body = std::sync::Arc::new(AtomicUsize::new(0));
        let (stopping, counted) = (stop.clone(), body.clone());
        let thread = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut piece = vec![0u8; 20_000];
            loop {
                let fast = stopping.load(Ordering::SeqCst);
                let n = match s.read(&mut piece) {
                    Ok(0) | Err(_) => return got,
                    Ok(n) => n,
                };
                got.extend_from_slice(&piece[..n]);
                if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                    counted.store(got.len() - at - 4, Ordering::SeqCst);
                }
                if !fast {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        SlowReader {
            stop,
            body,
            thread: Some(thread),
        }
    }

    /// Waits until `n` body bytes have come: they were read inside the
    /// stream's snapshot, so it is held by then.
    pub(crate) fn wait_for_body(&self, n: usize) {
        let started = Instant::now();
        while self.body.load(Ordering::SeqCst) < n {
            assert!(started.elapsed() < common::PATIENCE, "no body came");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads the rest at full speed; everything the connection carried.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// The body of a raw reply (after the head).
pub(crate) fn body_of(raw: &[u8]) -> &[u8] {
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    &raw[at..]
}

/// Loops GETs of large blobs on one keep-alive connection until `stop`;
/// returns (whole replies, 503 replies). Panics at a cut body or any
/// other status.
pub(crate) fn read_load(addr: &str, keys: u64, stop: &AtomicBool) -> (usize, usize) {
    let mut s = connect(addr);
    let (mut whole, mut busy) = (0, 0);
    let mut key = 0;
    while !stop.load(Ordering::SeqCst) {
        key = key % keys + 1;
        s.write_all(format!("GET /blobs/{key} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        let r = read_reply(&mut s, false);
        match r.status {
            200 if r.whole() => whole += 1,
            503 => busy += 1,
            code => panic!(
                "key {key}: {code} with {} of {:?} bytes: {}",
                r.body.len(),
                r.length,
                r.headers
            ),
        }
    }
    (whole, busy)
}

#[test]
fn outside_writers_get_in_under_a_read_load_of_large_blobs() {
    // Readers whose snapshots overlap keep one shared lock for the whole
    // process: without care, a rollback-journal writer never gets a moment
    // without it. Each of 10 writes, waiting 5 s at most, must get in.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "8", "--size", "2M"]);
    let db = d.join("s.db");
    let server = Server::start(d, "s.db", &[]);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| read_load(&server.addr, 8, &stop)))
            .collect();
        let stopping = StopWhenDropped(&stop);
        // The load is on before the writes start.
        std::thread::sleep(Duration::from_millis(500));
        let mut waits = Vec::new();
        for i in 0..10u8 {
            match outside_write(&db, 1 + i64::from(i % 8), i, Duration::from_secs(5)) {
                Ok(w) => waits.push(w),
                Err(e) => panic!("write {} of 10 failed: {e} (waits so far {waits:?})", i + 1),
            }
        }
        drop(stopping);
        let mut whole = 0;
        for r in readers {
            whole += r.join().unwrap().0;
        }
        assert!(whole > 0, "the readers got no blob");
        eprintln!("writers waited {waits:?} beside {whole} whole replies");
    });
}

/// Version `v` of the blob the next test writes: sizes on both sides of
/// the 256 KiB a blob is streamed above, each byte `v`.
pub(crate) fn version(v: u8) -> Vec<u8> {
    let size = if v.is_multiple_of(3) {
        100_000
    } else {
        600_000 + usize::from(v) * 1000
    };
    vec![v; size]
}

/// GETs `path` until `stop`: every reply must be a whole version written
/// (or the first one) or an error status sent before any byte of a body.
pub(crate) fn check_versions(
    addr: &str,
    path: &str,
    first: &[u8],
    stop: &AtomicBool,
) -> (usize, usize) {
    let (mut whole, mut refused) = (0, 0);
    while !stop.load(Ordering::SeqCst) {
        let r = get(addr, path);
        if r.status >= 500 {
            assert!(r.body.len() < 200, "{path}: a {} after a body", r.status);
            refused += 1;
            continue;
        }
        assert_eq!(r.status, 200, "{path}: {}", r.headers);
        assert!(
            r.whole(),
            "{path}: a cut body: {} of {:?} bytes",
            r.body.len(),
            r.length
        );
        let one_version = r.body == first || r.body == version(r.body[0]);
        assert!(
            one_version,
            "{path}: {} bytes that are no version written",
            r.body.len()
        );
        whole += 1;
    }
    (whole, refused)
}

#[test]
fn gets_of_a_key_being_replaced_are_whole_versions() {
    for staleness in ["2ms", "0s"] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        ok(d, &["init", "s.db", "--count", "2", "--size", "700k"]);
        let first = blob_from_db(&d.join("s.db"), 1);
        let server = Server::start(
            d,
            "s.db",
            &["--writable", "--token", TOKEN, "--staleness", staleness],
        );
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let readers: Vec<_> = ["/blobs/1", "/blobs/1?via=hyper"]
                .into_iter()
                .map(|path| {
                    let (addr, first, stop) = (&server.addr, &first, &stop);
                    scope.spawn(move || check_versions(addr, path, first, stop))
                })
                .collect();
            let stopping = StopWhenDropped(&stop);
            for v in 1..=60u8 {
                let code = put(&server.addr, 1, &version(v));
                assert_eq!(code, 204, "staleness {staleness}: PUT {v}");
            }
            drop(stopping);
            for r in readers {
                let (whole, refused) = r.join().unwrap();
                assert!(whole > 0, "staleness {staleness}: no GET was answered");
                eprintln!("staleness {staleness}: {whole} whole, {refused} refused");
            }
        });
    }
}

#[test]
fn exclusive_locking_keeps_outside_writers_out_only_in_a_rollback_journal() {
    // As `serve --help` says: with ?locking_mode=exclusive, a rollback
    // journal's lock keeps other processes from writing until the server
    // stops; in WAL mode it keeps no one out, and the server reads the
    // commits of others.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (db, jmode) in [("d.db", "delete"), ("w.db", "wal")] {
        ok(
            d,
            &[
                "init", db, "--count", "3", "--size", "10k", "--jmode", jmode,
            ],
        );
        let target = format!("sqlite:{db}?locking_mode=exclusive");
        let server = Server::start(d, &target, &[]);
        // Every thread's connection has read (and so locked) by now.
        for _ in 0..20 {
            assert_eq!(get(&server.addr, "/blobs/1").status, 200);
        }
        let written = outside_write(&d.join(db), 1, 9, Duration::ZERO);
        if jmode == "wal" {
            written.unwrap_or_else(|e| panic!("WAL: an outside writer was refused: {e}"));
            // Past the staleness, every GET reads the commit.
            std::thread::sleep(Duration::from_millis(50));
            assert!(get(&server.addr, "/blobs/1").body == vec![9u8; 10_000]);
        } else {
            let e = written.expect_err("a rollback journal's writer must be kept out");
            assert!(e.contains("locked"), "{e}");
        }
    }
    let help = common::output(common::bin().args(["serve", "--help"]));
    let help = String::from_utf8_lossy(&help.stdout).replace('\n', " ");
    assert!(
        help.contains("in WAL mode it keeps no one out"),
        "serve --help must say what WAL does: {help}"
    );
}

#[test]
fn an_exclusive_read_only_server_sends_uncopied_and_keeps_writers_out_until_its_clients_close() {
    // With ?locking_mode=exclusive a read-only server holds the database's
    // shared lock from its start to its stop, so it hands large blobs'
    // pages to the kernel by reference, sent after the read that found
    // them. The bytes must be the blob's; a writer must be kept out from
    // the start (before any GET) and let in only once the server has
    // stopped, after its last client has closed (the kernel reads the
    // pages until the client has read them).
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init",
            "x.db",
            "--count",
            "3",
            "--size",
            "3M",
            "--variance",
            "0",
            "--jmode",
            "delete",
        ],
    );
    let db = d.join("x.db");
    let (mut server, banner) =
        Server::start_with_banner(d, "sqlite:x.db?locking_mode=exclusive", &[]);
    assert!(banner.contains("large blobs sent uncopied"), "{banner}");
    let refused = outside_write(&db, 1, 9, Duration::ZERO).expect_err("kept out before any GET");
    assert!(refused.contains("locked"), "{refused}");
    for key in 1..=3 {
        let want = blob_from_db(&db, key);
        let reply = get(&server.addr, &format!("/blobs/{key}"));
        assert_eq!(reply.status, 200);
        assert!(reply.whole() && reply.body == want, "blob {key} differs");
    }
    // A range across the end of the first mapped piece (1 MiB).
    let want = blob_from_db(&db, 2);
    let mut s = connect(&server.addr);
    s.write_all(b"GET /blobs/2 HTTP/1.1\r\nHost: x\r\nRange: bytes=1048000-1050000\r\nConnection: close\r\n\r\n")
        .unwrap();
    let reply = read_reply(&mut s, false);
    assert_eq!(reply.status, 206);
    assert!(
        reply.body == want[1_048_000..=1_050_000],
        "the range differs"
    );
    // Closed, or the stopping server would linger on it (see below).
    drop(s);

    // A client that has asked for a blob and read only its first bytes
    // keeps the stopping server, and so its lock, until it closes.
    let mut lagging = connect(&server.addr);
    lagging
        .write_all(b"GET /blobs/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    // The reply has begun (peeked, so `read_reply` still reads it whole).
    lagging.peek(&mut [0u8; 16]).unwrap();
    server.ask_to_stop();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        server.running(),
        "the server stopped before its client had read"
    );
    let refused = outside_write(&db, 1, 9, Duration::ZERO).expect_err("kept out while stopping");
    assert!(refused.contains("locked"), "{refused}");
    let reply = read_reply(&mut lagging, false);
    assert!(
        reply.whole() && reply.body == blob_from_db(&db, 3),
        "the lagging client's blob differs"
    );
    drop(lagging);
    let (status, log) = server.ended();
    assert!(status.success(), "{status}: {log}");
    outside_write(&db, 1, 9, Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("a writer must get in once the server stopped: {e}"));
}
