//! `serve` gives back what its streams take (sessions, descriptors,
//! memory), answers an error status when it cannot open a session, and
//! survives another process truncating the database it maps.

use std::io::{BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{
    BLOCKING_THREADS, Server, banner_threads, connect, get, raise_fd_limit, read_reply, rss_kb,
    small_receive_buffer,
};
use crate::common::{self, bin, ok};

/// The descriptors `pid` has open, by number.
fn descriptors(pid: u32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Threads of `pid`.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count()
}

/// Waits (bounded) until `done` holds, polling every 50 ms; false if it
/// never did within [`common::PATIENCE`].
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < common::PATIENCE {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// Asserts the server is still running (not killed by a signal).
fn alive(server: &mut Server, when: &str) {
    if let Some(status) = server.child.try_wait().unwrap() {
        panic!("serve died {when}: {status} (signal {:?})", status.signal());
    }
}

/// Descriptors of the database a server may keep after its streams end:
/// one per blocking thread (SQLite keeps a closed connection's descriptor
/// for reuse while another of the process's connections holds a lock on
/// the file, as a WAL reader always does), plus a few for the workers'
/// own sessions and the WAL.
fn descriptor_margin(workers: usize) -> usize {
    workers * BLOCKING_THREADS + 8
}

/// Resident memory a server may keep after its streams end: the spare
/// piece buffers it reuses (64 of 256 KiB) and what the allocator keeps of
/// the freed page caches and buffers.
const RSS_MARGIN_KB: u64 = 64 * 1024;

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn bursts_of_streams_give_back_their_descriptors_and_memory() {
    // Five bursts of 300 connections streaming 2 MB blobs (WAL: read
    // through SQLite, a connection per blocking thread). After each, once
    // the blocking threads have ended, the server's descriptors and RSS
    // are back within a fixed margin of their level before the first: a
    // session leaked per thread would add hundreds of descriptors and
    // megabytes a burst.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "w.db", "--count", "50", "--size", "2M", "--jmode", "wal",
        ],
    );
    raise_fd_limit();
    let (child, banner, addr) = common::start_serve_banner(d, "w.db", &[]);
    let mut server = Server { child, addr };
    let pid = server.child.id();
    let workers = banner_threads(&banner);
    let urls: String = (1..=50)
        .map(|k| format!("http://{}/blobs/{k}\n", server.addr))
        .collect();
    std::fs::write(d.join("u.txt"), urls).unwrap();
    // The level before: the server as it starts, one blob served (each
    // worker's own session open).
    assert_eq!(get(&server.addr, "/blobs/1", "").status, 200);
    let idle_threads = 1 + workers;
    assert!(eventually(|| threads(pid) <= idle_threads));
    let fds_before = descriptors(pid).len();
    let (rss_before, _) = rss_kb(pid);
    for burst in 1..=5 {
        let out = common::output(
            bin()
                .current_dir(d)
                .args(["load", "--urls", "u.txt", "-c", "300", "-t", "2s"]),
        );
        assert!(
            out.status.success(),
            "burst {burst}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        alive(&mut server, "in a burst");
        // The burst's blocking threads end 2 s after their last stream,
        // closing their sessions.
        let settled = eventually(|| {
            threads(pid) <= idle_threads
                && descriptors(pid).len() <= fds_before + descriptor_margin(workers)
                && rss_kb(pid).0 <= rss_before + RSS_MARGIN_KB
        });
        let (rss, peak) = rss_kb(pid);
        assert!(
            settled,
            "burst {burst}: {} threads, {} descriptors ({fds_before} before), RSS {rss} kB ({rss_before} kB before, peak {peak} kB)",
            threads(pid),
            descriptors(pid).len()
        );
    }
}

/// Sets the soft descriptor limit of process `pid` (None: back to its
/// hard limit); returns the limit it had.
fn set_descriptor_limit(pid: u32, soft: Option<u64>) -> u64 {
    // SAFETY: prlimit on our own child with zeroed, then filled, rlimits.
    unsafe {
        let mut old: libc::rlimit = std::mem::zeroed();
        let got = libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_NOFILE,
            std::ptr::null(),
            &mut old,
        );
        assert_eq!(got, 0, "prlimit: {}", std::io::Error::last_os_error());
        let new = libc::rlimit {
            rlim_cur: soft.unwrap_or(old.rlim_max),
            rlim_max: old.rlim_max,
        };
        let set = libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_NOFILE,
            &new,
            std::ptr::null_mut(),
        );
        assert_eq!(set, 0, "prlimit: {}", std::io::Error::last_os_error());
        old.rlim_cur
    }
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_stream_that_cannot_open_its_session_gets_503_and_the_server_recovers() {
    // Out of descriptors, a thread cannot open its session (the worker's,
    // or the stream's on the blocking pool, whichever the request meets
    // first without one): the reply is 503 before any head, never a 200
    // head followed by nothing, and once descriptors are free again the
    // same blob comes whole.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "w.db", "--count", "2", "--size", "2M", "--jmode", "wal",
        ],
    );
    let (child, banner, addr) = common::start_serve_banner(d, "w.db", &[]);
    let mut server = Server { child, addr };
    let pid = server.child.id();
    let whole = get(&server.addr, "/blobs/1", "");
    assert_eq!((whole.status, whole.body.len()), (200, 2_000_000));
    // The stream's thread ends (and its session with it) 2 s after.
    assert!(eventually(|| threads(pid) <= 1 + banner_threads(&banner)));
    // Room for one more descriptor only, the lowest free number: the
    // accepted connection takes it, and a session can open nothing.
    let open = descriptors(pid);
    let lowest_free = (0..).find(|n| !open.contains(n)).unwrap();
    set_descriptor_limit(pid, Some(lowest_free as u64 + 1));
    let refused = get(&server.addr, "/blobs/1", "");
    let text = String::from_utf8_lossy(&refused.body);
    assert_eq!(refused.status, 503, "{text}");
    assert!(text.contains("cannot serve blob 1 now ("), "{text}");
    alive(&mut server, "out of descriptors");
    set_descriptor_limit(pid, None);
    let again = get(&server.addr, "/blobs/1", "");
    assert_eq!((again.status, again.body), (200, whole.body));
}

/// `serve TARGET` held at pause step `step`: the server, its address and
/// the pause file (present while it is held).
fn serve_held_at(dir: &Path, target: &str, step: &str) -> (Server, PathBuf, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("paused");
    let mut child: Child = bin()
        .current_dir(dir)
        .args(["serve", target, "--listen", "127.0.0.1:0"])
        .env("BLOBBENCH_TEST_PAUSE_AT", step)
        .env("BLOBBENCH_TEST_PAUSE_FILE", &file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut banner).unwrap();
    // Drained, so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let addr = banner
        .split(" on http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_string();
    (Server { child, addr }, file, folder)
}

/// Cuts the file at `path` to `len` bytes, as a process that ignores
/// SQLite's locks would.
fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_database_truncated_while_its_pages_are_read_is_an_error_not_a_crash() {
    // A rollback-journal database's blob is found by walking its pages in
    // a map of the file; another process cuts the file short just before
    // the walk. The read that meets a lost page would raise SIGBUS: the
    // request gets an error status instead, and the server goes on.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "20", "--size", "100k"]);
    let db = d.join("s.db");
    let (mut server, paused, _folder) = serve_held_at(d, "s.db", "serve-mapped-walk@1");
    let addr = server.addr.clone();
    let client = std::thread::spawn(move || get(&addr, "/blobs/20", ""));
    assert!(eventually(|| paused.exists() || client.is_finished()));
    assert!(paused.exists(), "the GET never reached the mapped walk");
    // Two pages left: the table's root, not the leaf of key 20.
    truncate(&db, 8192);
    std::fs::remove_file(&paused).unwrap();
    let reply = client.join().unwrap();
    let text = String::from_utf8_lossy(&reply.body);
    assert_eq!(reply.status, 500, "{text}");
    assert!(text.contains("truncated"), "{text}");
    alive(&mut server, "after a truncation under a read");
    // Later requests: errors (the database is damaged), never a crash.
    for key in [1, 20] {
        let r = get(&server.addr, &format!("/blobs/{key}"), "");
        assert!(r.status >= 500, "key {key}: {}", r.status);
    }
    assert_eq!(get(&server.addr, "/healthz", "").status, 200);
    alive(&mut server, "after requests of a truncated database");
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_database_truncated_mid_stream_cuts_that_reply_and_the_server_goes_on() {
    // A large blob is written to the socket straight from the mapped
    // pages; the file is cut short while most of it is still to be sent.
    // The client gets a cut connection, never the whole length; blobs of
    // a database truncated between requests get errors; serve lives on.
    // Streamed from the blocking pool (24 MB), and sent by reference from
    // the worker (8 MB, the most it sends, writers kept out: the
    // truncating process ignores SQLite's locks). Bytes handed to the
    // kernel before the cut are sent whatever happens to the file: the
    // socket's send buffer (at most tcp_wmem's 4 MiB) and a 1 MiB pipe can
    // hold 5 MiB before the client reads, all of a 4 MB blob when the
    // client is slow to get the CPU (seen under two CPU hogs), so the blob
    // is larger than both.
    truncated_mid_stream("s.db", "24M", 24_000_000);
    truncated_mid_stream("sqlite:s.db?locking_mode=exclusive", "8M", 8_000_000);
}

/// `a_database_truncated_mid_stream_...` with blobs of `size` (`bytes`)
/// served from `target`.
fn truncated_mid_stream(target: &str, size: &str, bytes: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init",
            "s.db",
            "--count",
            "3",
            "--size",
            size,
            "--variance",
            "0",
        ],
    );
    let db = d.join("s.db");
    let mut server = Server::start(d, target, &["--send-timeout", "300s"]);
    let mut s = connect(&server.addr);
    small_receive_buffer(&s);
    s.write_all(b"GET /blobs/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = vec![0u8; 64 * 1024];
    s.read_exact(&mut got).unwrap();
    truncate(&db, 4096 * 4);
    let mut rest = Vec::new();
    // A cut connection may end with a reset instead of an end of stream.
    let _ = s.read_to_end(&mut rest);
    got.extend_from_slice(&rest);
    let body_at = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&got[..body_at]).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        got.len() - body_at < bytes,
        "{target}: the whole length came, from a truncated file"
    );
    alive(&mut server, "after a truncation mid-stream");
    for key in [1, 3] {
        let mut c = connect(&server.addr);
        c.write_all(
            format!("GET /blobs/{key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
        let text = String::from_utf8_lossy(&all[..all.len().min(200)]).to_string();
        let complete_200 = text.starts_with("HTTP/1.1 200") && all.len() > bytes;
        assert!(
            !complete_200,
            "{target} key {key}: a whole blob from a truncated file"
        );
    }
    let mut r = BufReader::new(connect(&server.addr));
    r.get_mut()
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert_eq!(read_reply(&mut r, false).status, 200);
    alive(&mut server, "after requests of a truncated database");
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_file_written_into_while_it_is_sent_cuts_the_reply_on_both_paths() {
    // Another process writes every blob file of a folder in place (same
    // size, other bytes) while serve holds a reply just before its file's
    // check: on the fast path (sendfile) and on hyper's (a query sends the
    // request there), the client gets a cut connection, never a whole 200
    // of mixed bytes; the next GET gets the new bytes whole.
    for (nth, query) in [(1, ""), (2, "?via=hyper")] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let size = 300_000;
        ok(
            d,
            &[
                "init",
                "dir:f",
                "--count",
                "2",
                "--size",
                "300k",
                "--variance",
                "0",
            ],
        );
        let step = format!("serve-file-check@{nth}");
        let (mut server, paused, _folder) = serve_held_at(d, "dir:f", &step);
        // The first GET passes the check untouched (held only for hyper's).
        if nth == 2 {
            let whole = whole_get(&server.addr, "/blobs/1");
            assert_eq!(whole.len(), size, "a blob left alone comes whole");
        }
        let addr = server.addr.clone();
        let path = format!("/blobs/2{query}");
        let client = std::thread::spawn(move || raw_get(&addr, &path));
        assert!(eventually(|| paused.exists() || client.is_finished()));
        assert!(paused.exists(), "{query}: the GET never reached the check");
        overwrite_in_place(&d.join("f"), size);
        std::fs::remove_file(&paused).unwrap();
        let (head, body) = client.join().unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            body.len() < size,
            "{query}: a whole 200 of a file written into while it was sent"
        );
        let again = whole_get(&server.addr, &format!("/blobs/2{query}"));
        assert!(
            again.iter().all(|&b| b == b'X'),
            "{query}: not the new bytes"
        );
        alive(&mut server, "after a file written into while it was sent");
    }
}

/// Writes `X` over every blob file of `folder` (those of `size` bytes), in
/// place: the same inode and length, other bytes.
fn overwrite_in_place(folder: &Path, size: usize) {
    let mut written = 0;
    for e in std::fs::read_dir(folder).unwrap() {
        let path = e.unwrap().path();
        if std::fs::metadata(&path).unwrap().len() == size as u64 {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all(&vec![b'X'; size]).unwrap();
            written += 1;
        }
    }
    assert_eq!(written, 2, "no blob files of {size} bytes in {folder:?}");
}

/// A GET on its own connection: the head and whatever body came before the
/// connection ended (a cut one may end in a reset).
fn raw_get(addr: &str, path: &str) -> (String, Vec<u8>) {
    let mut s = connect(addr);
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    let body_at = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&got[..body_at]).to_string();
    (head, got[body_at..].to_vec())
}

/// The body of a GET that must answer 200 whole.
fn whole_get(addr: &str, path: &str) -> Vec<u8> {
    let (head, body) = raw_get(addr, path);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-length: ")
                .or_else(|| l.strip_prefix("Content-Length: "))
        })
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(body.len(), length, "{path}: short of its length");
    body
}
