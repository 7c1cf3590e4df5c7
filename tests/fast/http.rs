//! End-to-end tests of `blobbench serve`, spoken to over raw TCP so that
//! malformed requests can be sent as they are.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common::{bin, ok, start_serve};

/// A running `blobbench serve`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: String,
}

impl Server {
    pub(crate) fn start(dir: &Path, target: &str, extra: &[&str]) -> Server {
        let (child, addr) = start_serve(dir, target, extra);
        Server { child, addr }
    }

    /// As `start`, also returning the banner line.
    pub(crate) fn start_with_banner(dir: &Path, target: &str, extra: &[&str]) -> (Server, String) {
        let (child, banner, addr) = common::start_serve_banner(dir, target, extra);
        (Server { child, addr }, banner)
    }

    /// Sends SIGTERM and waits for the server to end (bounded).
    pub(crate) fn stop(&mut self) -> std::process::ExitStatus {
        self.ask_to_stop();
        common::wait_bounded(&mut self.child)
    }

    /// Sends SIGTERM and returns at once.
    pub(crate) fn ask_to_stop(&self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
    }

    /// Whether the server has not ended yet.
    pub(crate) fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for the server to end (bounded): its exit status and what it
    /// printed on stderr after its banner.
    pub(crate) fn ended(&mut self) -> (std::process::ExitStatus, String) {
        let mut log = String::new();
        let stderr = self.child.stderr.take();
        let status = common::wait_bounded(&mut self.child);
        if let Some(mut e) = stderr {
            e.read_to_string(&mut log).unwrap();
        }
        (status, log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one response (Content-Length framed) from a keep-alive connection.
pub(crate) fn read_reply(r: &mut BufReader<TcpStream>, head: bool) -> Reply {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("bad status line {line:?}"))
        .parse()
        .unwrap();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').unwrap();
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0; if head { 0 } else { len }];
    r.read_exact(&mut body).unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

/// A connection to `addr` whose reads give up after [`common::PATIENCE`]:
/// a server that never answers fails the test instead of hanging it.
pub(crate) fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(common::PATIENCE)).unwrap();
    s
}

pub(crate) fn request(addr: &str, raw: &str) -> Reply {
    let mut s = connect(addr);
    s.write_all(raw.as_bytes()).unwrap();
    read_reply(&mut BufReader::new(s), raw.starts_with("HEAD "))
}

pub(crate) fn get(addr: &str, path: &str, extra: &str) -> Reply {
    request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"),
    )
}

/// This process needs a descriptor per connection too: its soft limit
/// raised to the hard one. Every test of the binary shares the process, so
/// this runs once and only ever raises the limit.
pub(crate) fn raise_fd_limit() {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        // SAFETY: getrlimit/setrlimit on this process with a zeroed rlimit.
        unsafe {
            let mut l: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
                l.rlim_cur = l.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &l);
            }
        }
    });
}

/// Caps the connection's receive buffer at a few hundred KiB and stops the
/// kernel growing it (autotuning allows 32 MB here): a client that stops
/// reading then stalls the server's stream of a large blob for certain,
/// the blob's bytes no longer fitting in the sockets' buffers.
pub(crate) fn small_receive_buffer(s: &TcpStream) {
    receive_buffer(s, 128 * 1024);
}

/// Caps the connection's receive buffer at `size` bytes and stops the
/// kernel growing it.
pub(crate) fn receive_buffer(s: &TcpStream, size: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt on this stream's open socket with an int option.
    let set = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(set, 0, "SO_RCVBUF: {}", std::io::Error::last_os_error());
}

/// Reads from `s` until the reply's head and at least `body` bytes of its
/// body have come; returns all that was read.
pub(crate) fn read_head_and_body(s: &mut TcpStream, body: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut piece = [0u8; 16 * 1024];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n")
            && got.len() >= end + 4 + body
        {
            return got;
        }
        match s.read(&mut piece).unwrap() {
            0 => panic!("the reply ended after {} bytes", got.len()),
            n => got.extend_from_slice(&piece[..n]),
        }
    }
}

pub(crate) fn blob_from_db(db: &Path, key: i64) -> Vec<u8> {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT v FROM kv WHERE k = ?1", [key], |r| r.get(0))
        .unwrap()
}

#[test]
fn statuses_ranges_and_streaming() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Sizes around the 256 KiB streaming threshold: 150k .. 650k.
    ok(
        d,
        &[
            "init",
            "s.db",
            "--count",
            "30",
            "--size",
            "400k",
            "--variance",
            "250k",
        ],
    );
    ok(d, &["export", "s.db", "s.dir"]);
    let db_before = std::fs::read(d.join("s.db")).unwrap();
    for target in ["s.db", "dir:s.dir"] {
        let server = Server::start(d, target, &[]);
        let a = server.addr.as_str();
        assert_eq!(get(a, "/healthz", "").status, 200);
        for key in [1i64, 7, 30] {
            let want = blob_from_db(&d.join("s.db"), key);
            let r = get(a, &format!("/blobs/{key}"), "");
            assert_eq!(r.status, 200, "{target} {key}");
            assert_eq!(r.header("content-type"), Some("application/octet-stream"));
            assert_eq!(
                r.header("content-length"),
                Some(want.len().to_string().as_str())
            );
            assert!(r.body == want, "{target} key {key}: bytes differ");
            // HEAD: the same headers, no body.
            let h = request(
                a,
                &format!("HEAD /blobs/{key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            );
            assert_eq!(h.status, 200);
            assert_eq!(h.header("content-length"), r.header("content-length"));
            // Ranges: first bytes, a middle piece across the chunk size, the tail.
            let r = get(a, &format!("/blobs/{key}"), "Range: bytes=0-99\r\n");
            assert_eq!((r.status, &r.body[..]), (206, &want[..100]));
            let n = want.len();
            assert_eq!(
                r.header("content-range").unwrap(),
                format!("bytes 0-99/{n}")
            );
            let r = get(
                a,
                &format!("/blobs/{key}"),
                "Range: bytes=100000-300000\r\n",
            );
            assert_eq!(r.status, 206);
            assert!(r.body == want[100_000..=300_000.min(n - 1)]);
            let r = get(a, &format!("/blobs/{key}"), "Range: bytes=-10\r\n");
            assert_eq!((r.status, &r.body[..]), (206, &want[n - 10..]));
            let r = get(
                a,
                &format!("/blobs/{key}"),
                &format!("Range: bytes={n}-\r\n"),
            );
            assert_eq!(r.status, 416);
            assert_eq!(r.header("content-range").unwrap(), format!("bytes */{n}"));
            // Multiple ranges are not served piecewise: the whole blob.
            let r = get(a, &format!("/blobs/{key}"), "Range: bytes=0-1,5-6\r\n");
            assert_eq!((r.status, r.body.len()), (200, n));
        }
        assert_eq!(get(a, "/blobs/31", "").status, 404);
        assert_eq!(get(a, "/nothing/here", "").status, 404);
        // Not keys, never paths: every traversal attempt is a 400.
        for bad in [
            "/blobs/..%2f..%2fetc%2fpasswd",
            "/blobs/%2e%2e",
            "/blobs/0",
            "/blobs/1%00",
            "/blobs/%2Fetc%2Fpasswd",
            "/blobs/12345678901234567890123",
            "/blobs/",
            "/blobs/1/2",
        ] {
            assert_eq!(get(a, bad, "").status, 400, "{target} {bad}");
        }
        // Oversized headers: 431, the connection still answers after.
        let big = format!("X-Big: {}\r\n", "a".repeat(20_000));
        assert_eq!(get(a, "/blobs/1", &big).status, 431);
        // Raw `..` segments and an absolute path in the request target.
        assert_ne!(get(a, "/blobs/../../etc/passwd", "").status, 200);
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            let r = request(
                a,
                &format!(
                    "{method} /blobs/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                ),
            );
            assert_eq!(r.status, 405, "{method}");
            assert_eq!(r.header("allow"), Some("GET, HEAD"));
        }
    }
    // Read-only: serving left the database byte for byte as it was.
    assert!(std::fs::read(d.join("s.db")).unwrap() == db_before);
}

#[test]
fn a_thousand_concurrent_connections() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "200", "--size", "10k"]);
    raise_fd_limit();
    let server = Server::start(d, "s.db", &[]);
    // 1000 connections opened and holding a request each before any is read.
    let mut conns: Vec<TcpStream> = (0..1000)
        .map(|i| {
            let mut s = connect(&server.addr);
            s.write_all(
                format!("GET /blobs/{} HTTP/1.1\r\nHost: x\r\n\r\n", i % 200 + 1).as_bytes(),
            )
            .unwrap();
            s
        })
        .collect();
    let mut served = 0;
    for s in conns.drain(..) {
        let r = read_reply(&mut BufReader::new(s), false);
        assert_eq!(r.status, 200);
        assert_eq!(r.body.len(), 10_000);
        served += 1;
    }
    assert_eq!(served, 1000);
}

#[test]
fn bad_serve_options_fail_before_listening() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Each with a port of its own (0), so a regression that listens after
    // all never takes a fixed port another test or program may use; run
    // bounded, so one that serves fails instead of hanging.
    common::usage_error(
        d,
        &["serve", "missing.db", "--listen", "127.0.0.1:0"],
        "missing.db",
    );
    ok(d, &["init", "s.db", "--count", "5", "--size", "1k"]);
    common::usage_error(d, &["serve", "s.db", "--listen", "nonsense"], "nonsense");
    common::usage_error(
        d,
        &[
            "serve",
            "s.db",
            "--listen",
            "127.0.0.1:0",
            "--max-connections",
            "0",
        ],
        "--max-connections",
    );
    // A port already taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    common::usage_error(d, &["serve", "s.db", "--listen", &addr], "cannot listen");
}

pub(crate) const TOKEN: &str = "0123456789abcdef0123";

#[test]
fn etags_and_conditional_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "10", "--size", "5k"]);
    ok(d, &["export", "s.db", "s.dir"]);
    for target in ["s.db", "dir:s.dir"] {
        let server = Server::start(d, target, &["--writable", "--token", TOKEN]);
        let a = server.addr.as_str();
        let r = get(a, "/blobs/4", "");
        let tag = r.header("etag").expect("an ETag").to_string();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "strong: {tag}");
        assert_eq!(
            get(a, "/blobs/4", "").header("etag"),
            Some(tag.as_str()),
            "stable"
        );
        let r = get(a, "/blobs/4", &format!("If-None-Match: {tag}\r\n"));
        assert_eq!((r.status, r.body.len()), (304, 0));
        assert_eq!(r.header("etag"), Some(tag.as_str()));
        assert_eq!(
            get(a, "/blobs/4", "If-None-Match: \"other\"\r\n").status,
            200
        );
        // A write changes the tag: the old one no longer matches.
        let put = request(
            a,
            &format!(
                "PUT /blobs/4 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            ),
        );
        assert_eq!(put.status, 204, "{target}: replaced");
        let r = get(a, "/blobs/4", &format!("If-None-Match: {tag}\r\n"));
        assert_eq!((r.status, &r.body[..]), (200, &b"hello"[..]), "{target}");
        let new_tag = r.header("etag").expect("an ETag").to_string();
        assert_ne!(new_tag, tag);
        // If-Range: a client resuming the old version gets the whole new
        // blob, never its bytes spliced onto the old ones (RFC 9110 13.1.5).
        let stale = get(
            a,
            "/blobs/4",
            &format!("Range: bytes=2-\r\nIf-Range: {tag}\r\n"),
        );
        assert_eq!(
            (stale.status, &stale.body[..]),
            (200, &b"hello"[..]),
            "{target}"
        );
        let current = get(
            a,
            "/blobs/4",
            &format!("Range: bytes=2-\r\nIf-Range: {new_tag}\r\n"),
        );
        assert_eq!(
            (current.status, &current.body[..]),
            (206, &b"llo"[..]),
            "{target}"
        );
        let dated = get(
            a,
            "/blobs/4",
            "Range: bytes=2-\r\nIf-Range: Sun, 22 Nov 2026 10:00:00 GMT\r\n",
        );
        assert_eq!(dated.status, 200, "{target}: a date cannot validate");
    }
}

#[test]
fn keys_beyond_the_largest_rowid_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "10", "--size", "1k"]);
    let server = Server::start(d, "s.db", &["--writable", "--token", TOKEN]);
    let a = server.addr.as_str();
    // 2^64-5 and 2^64-1 would wrap to the rowids -5 and -1.
    for key in [
        "18446744073709551611",
        "18446744073709551615",
        "9223372036854775808",
    ] {
        let r = get(a, &format!("/blobs/{key}"), "");
        assert_eq!(r.status, 400, "GET {key}");
        let r = put(a, key, TOKEN, b"x");
        assert_eq!(r.status, 400, "PUT {key}");
    }
    assert_eq!(get(a, "/blobs/9223372036854775807", "").status, 404);
}

#[test]
fn a_second_server_on_a_busy_address_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "10", "--size", "1k"]);
    let first = Server::start(d, "s.db", &[]);
    let out = common::output(
        bin()
            .current_dir(d)
            .args(["serve", "s.db", "--listen", &first.addr]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("address in use"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // The first server still answers every request itself.
    for _ in 0..20 {
        assert_eq!(get(&first.addr, "/blobs/3", "").status, 200);
    }
}

pub(crate) fn put(addr: &str, key: &str, token: &str, body: &[u8]) -> Reply {
    let mut s = connect(addr);
    s.write_all(
        format!(
            "PUT /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let _ = s.write_all(body);
    read_reply(&mut BufReader::new(s), false)
}

#[test]
fn writable_servers_need_the_token_and_respect_the_size_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "10", "--size", "5k"]);
    ok(d, &["export", "s.db", "s.dir", "--tree"]);
    for target in ["s.db", "tree:s.dir"] {
        let server = Server::start(
            d,
            target,
            &["--writable", "--token", TOKEN, "--max-blob-size", "100k"],
        );
        let a = server.addr.as_str();
        let blob: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
        // New key: 201 with its Location, then readable byte for byte.
        let r = put(a, "500", TOKEN, &blob);
        assert_eq!(r.status, 201, "{target}");
        assert_eq!(r.header("location"), Some("/blobs/500"));
        assert!(get(a, "/blobs/500", "").body == blob);
        // Wrong or missing token: 401, nothing written.
        assert_eq!(put(a, "501", "0123456789abcdef0124", b"x").status, 401);
        let r = request(
            a,
            "PUT /blobs/501 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
        );
        assert_eq!(r.status, 401);
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        assert_eq!(get(a, "/blobs/501", "").status, 404);
        // Over --max-blob-size: announced (refused before the body) and chunked.
        assert_eq!(put(a, "502", TOKEN, &vec![1u8; 100_001]).status, 413);
        let mut s = connect(a);
        s.write_all(format!("PUT /blobs/503 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
        for _ in 0..30 {
            let _ = s.write_all(b"1000\r\n");
            let _ = s.write_all(&[9u8; 4096]);
            let _ = s.write_all(b"\r\n");
        }
        let _ = s.write_all(b"0\r\n\r\n");
        assert_eq!(read_reply(&mut BufReader::new(s), false).status, 413);
        assert_eq!(get(a, "/blobs/502", "").status, 404);
        assert_eq!(get(a, "/blobs/503", "").status, 404);
        // DELETE: 204, then 404; a second DELETE is 404.
        let del = |key: &str, token: &str| {
            request(
                a,
                &format!("DELETE /blobs/{key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"),
            )
            .status
        };
        assert_eq!(del("3", "0123456789abcdef9999"), 401);
        assert_eq!(del("3", TOKEN), 204);
        assert_eq!(get(a, "/blobs/3", "").status, 404);
        assert_eq!(del("3", TOKEN), 404);
        let r = request(
            a,
            "POST /blobs/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(r.header("allow"), Some("GET, HEAD, PUT, DELETE"));
    }
    // What the server wrote is in the database itself.
    assert_eq!(blob_from_db(&d.join("s.db"), 500).len(), 70_000);
    // Read-only servers refuse writes outright.
    let server = Server::start(d, "s.db", &[]);
    assert_eq!(put(&server.addr, "600", TOKEN, b"x").status, 405);
    // Each on a port of its own (0), as in bad_serve_options_fail_before_listening.
    let any = ["--listen", "127.0.0.1:0"];
    common::usage_error(
        d,
        &[&["serve", "s.db", "--writable"][..], &any].concat(),
        "--token",
    );
    common::usage_error(
        d,
        &[
            &[
                "serve",
                "sqlite:s.db?locking_mode=exclusive",
                "--writable",
                "--token",
                TOKEN,
            ][..],
            &any,
        ]
        .concat(),
        "locking_mode=exclusive",
    );
    common::usage_error(
        d,
        &[
            &["serve", "s.db", "--writable", "--token", "short"][..],
            &any,
        ]
        .concat(),
        "16",
    );
}

/// A stream reads one version of a blob even when it is replaced midway
/// (files by rename, SQLite by a commit in WAL mode).
#[test]
fn streams_read_one_version_of_a_blob() {
    use blobbench::store::{self, Access, SessionOptions};
    use blobbench::target::Target;

    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        d,
        &[
            "init", "w.db", "--count", "3", "--size", "1M", "--jmode", "wal",
        ],
    );
    ok(d, &["export", "w.db", "w.dir"]);
    let old = blob_from_db(&d.join("w.db"), 2);
    for (target, replace) in [
        (
            "sqlite:w.db",
            Box::new(|d: &Path| {
                let c = rusqlite::Connection::open(d.join("w.db")).unwrap();
                c.execute("UPDATE kv SET v = zeroblob(1000000) WHERE k = 2", [])
                    .unwrap();
            }) as Box<dyn Fn(&Path)>,
        ),
        (
            "dir:w.dir",
            Box::new(|d: &Path| {
                std::fs::write(d.join("w.dir/new"), vec![0u8; 1_000_000]).unwrap();
                std::fs::rename(d.join("w.dir/new"), d.join("w.dir/000002")).unwrap();
            }),
        ),
    ] {
        let t = if target.starts_with("dir") {
            Target::Dir {
                path: d.join("w.dir"),
            }
        } else {
            Target::Sqlite {
                path: d.join("w.db"),
                settings: Default::default(),
            }
        };
        let mut s = store::open(&t, Access::ReadOnly).unwrap();
        let mut session = s.session(SessionOptions::default()).unwrap();
        let mut got = Vec::new();
        let mut first = true;
        let n = session
            .read_stream(2, 0, 1_000_000, 256 * 1024, &mut |piece| {
                got.extend_from_slice(&piece);
                if first {
                    first = false;
                    replace(d);
                }
                true
            })
            .unwrap();
        assert_eq!(n, 1_000_000, "{target}");
        assert!(got == old, "{target}: the stream mixed versions");
    }
}

/// The fast read-only setting: every connection keeps its shared lock.
#[test]
fn exclusive_locking_serves_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "50", "--size", "10k"]);
    let server = Server::start(d, "sqlite:s.db?locking_mode=exclusive&mmap_size=100M", &[]);
    // Many requests, so that several threads' connections hold their locks at once.
    for round in 0..4 {
        for key in 1..=50i64 {
            let r = get(&server.addr, &format!("/blobs/{key}"), "");
            assert_eq!(r.status, 200, "round {round} key {key}");
            assert!(r.body == blob_from_db(&d.join("s.db"), key));
        }
    }
    // The server holds its lock for its lifetime: an outside writer is
    // refused, and every GET still answers the bytes the file holds.
    let original = blob_from_db(&d.join("s.db"), 1);
    let outside = rusqlite::Connection::open(d.join("s.db")).unwrap();
    outside.busy_timeout(Duration::ZERO).unwrap();
    let err = outside
        .execute("UPDATE kv SET v = x'00' WHERE k = 1", [])
        .expect_err("the server's lock must refuse an outside writer");
    assert!(err.to_string().contains("locked"), "{err}");
    for _ in 0..20 {
        let r = get(&server.addr, "/blobs/1", "");
        assert_eq!((r.status, r.body == original), (200, true));
    }
}

#[test]
fn a_fifo_in_a_served_folder_does_not_hang_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "s.db", "--count", "10", "--size", "1k"]);
    ok(d, &["export", "s.db", "s.dir"]);
    // Replace blob 5's file by a FIFO nobody writes to.
    let five = std::fs::read_dir(d.join("s.dir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .trim_start_matches('0')
                == "5"
        })
        .expect("blob 5's file");
    std::fs::remove_file(&five).unwrap();
    let c = std::ffi::CString::new(five.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let server = Server::start(d, "dir:s.dir", &[]);
    // A server stuck opening the FIFO never answers: `get` gives up after
    // PATIENCE and fails the test.
    let r = get(&server.addr, "/blobs/5", "");
    assert_ne!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("not a regular file"));
    for _ in 0..10 {
        assert_eq!(get(&server.addr, "/blobs/3", "").status, 200);
    }
}

#[test]
fn a_writable_start_removes_only_stale_temporary_files_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", "dir:s.dir", "--count", "10", "--size", "1k"]);
    // A process that is not running: its temporary files are stale.
    let dead = common::dead_pid();
    let live = std::process::id();
    let names = [
        format!("000003.tmp-{dead}-0"),
        "000004.tmp".to_string(),
        format!("000005.tmp-{live}-1"),
        "notes.tmp".to_string(),
        "000006.tmp-draft".to_string(),
    ];
    for n in &names {
        std::fs::write(d.join("s.dir").join(n), b"x").unwrap();
    }
    let server = Server::start(d, "dir:s.dir", &["--writable", "--token", TOKEN]);
    let left = |n: &str| d.join("s.dir").join(n).exists();
    assert!(!left(&names[0]) && !left(&names[1]), "stale ones removed");
    assert!(left(&names[2]), "a running writer's file stays");
    assert!(
        left(&names[3]) && left(&names[4]),
        "names not blobbench's stay"
    );
    // Writers of one key at once never share a temporary file: the blob
    // ends whole, as one of the bodies.
    let bodies: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 300_000]).collect();
    std::thread::scope(|s| {
        for b in &bodies {
            let addr = server.addr.clone();
            s.spawn(move || assert_eq!(put(&addr, "7", TOKEN, b).status, 204));
        }
    });
    let got = get(&server.addr, "/blobs/7", "").body;
    assert!(
        bodies.contains(&got),
        "a mixed or torn blob of {} bytes",
        got.len()
    );
}

/// Keeps GETs of blob 1 flowing on one keep-alive connection (so the
/// server's threads hold read snapshots) until `stop`; returns, for each
/// reply, when its request was sent and the bytes it carried.
pub(crate) fn get_loop(
    addr: &str,
    stop: &std::sync::atomic::AtomicBool,
) -> Vec<(Instant, Vec<u8>)> {
    let s = connect(addr);
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut seen = Vec::new();
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let sent = Instant::now();
        w.write_all(b"GET /blobs/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let reply = read_reply(&mut r, false);
        assert_eq!(reply.status, 200);
        seen.push((sent, reply.body));
    }
    seen
}

/// Sets its flag when dropped, by a panic too: readers looping until it is
/// set (`get_loop`) then stop, so a failed assertion fails the test instead
/// of leaving `std::thread::scope` waiting for them for ever.
pub(crate) struct StopWhenDropped<'a>(pub(crate) &'a std::sync::atomic::AtomicBool);

impl Drop for StopWhenDropped<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// While two clients keep reading blob 1, makes `rounds` changes
/// (`change(round)` leaves blob 1 holding 100 bytes of `round`, returning
/// once done), each followed, after `bound`, by a request of its own; then
/// checks that every reply to a request sent `bound` or more after a change
/// returned carries that version or a later one.
pub(crate) fn changes_are_seen_within(
    addr: &str,
    bound: Duration,
    rounds: u8,
    what: &str,
    mut change: impl FnMut(u8),
) {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (seen, changes) = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| get_loop(addr, &stop)))
            .collect();
        let stopping = StopWhenDropped(&stop);
        let mut changes = Vec::new();
        // Besides the readers' requests, however many a loaded machine
        // lets them send: one request after each change, sent once the
        // bound has passed (a sleep never ends early).
        let mut seen = Vec::new();
        for round in 1..=rounds {
            std::thread::sleep(Duration::from_millis(15));
            change(round);
            changes.push((Instant::now(), round));
            std::thread::sleep(bound);
            let sent = Instant::now();
            let reply = get(addr, "/blobs/1", "");
            assert_eq!(reply.status, 200, "{what}");
            seen.push((sent, reply.body));
        }
        std::thread::sleep(Duration::from_millis(15));
        drop(stopping);
        seen.extend(readers.into_iter().flat_map(|r| r.join().unwrap()));
        (seen, changes)
    });
    let mut checked = 0;
    for (sent, body) in &seen {
        // The newest change that returned at least `bound` before this
        // request was sent: the reply must carry it or a later one.
        let Some((_, round)) = changes.iter().rev().find(|(at, _)| *at + bound <= *sent) else {
            continue;
        };
        checked += 1;
        let got = if body.len() == 100 { body[0] } else { 0 };
        assert!(
            got >= *round,
            "{what}: a request sent {:?} after change {round} got version {got}",
            sent.duration_since(changes[*round as usize - 1].0)
        );
    }
    // At least the one request sent after each change.
    assert!(
        checked >= rounds as usize,
        "{what}: only {checked} requests checked"
    );
}

#[test]
fn a_commit_by_another_process_is_seen_within_the_staleness_bound() {
    // The server's threads share a read snapshot for at most --staleness
    // (2 ms by default): every request sent 2 ms or more after an outside
    // commit returned must carry the new bytes, in both journal modes.
    for jmode in ["delete", "wal"] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        ok(
            d,
            &[
                "init", "s.db", "--count", "4", "--size", "10k", "--jmode", jmode,
            ],
        );
        let server = Server::start(d, "s.db", &[]);
        let writer = rusqlite::Connection::open(d.join("s.db")).unwrap();
        // Under load, a rollback-journal writer can wait long for a
        // moment when no server thread holds the shared lock (the
        // server's connections share one OS-level lock; see the note in
        // store/sqlite/session.rs). Visibility, not the writer's wait, is
        // tested: only a writer that never gets in fails.
        writer.busy_timeout(common::PATIENCE).unwrap();
        changes_are_seen_within(&server.addr, Duration::from_millis(2), 20, jmode, |round| {
            writer
                .execute("UPDATE kv SET v = ?1 WHERE k = 1", [vec![round; 100]])
                .unwrap_or_else(|e| panic!("{jmode}: commit {round} of 20 failed: {e}"));
        });
    }
}

#[test]
fn a_write_through_the_server_is_read_at_once() {
    // Read-your-writes: a PUT's reply means every later GET, on any thread
    // and connection, sees the new bytes (no snapshot older than it is used).
    // A dir target too: its servers keep open descriptors, which a write
    // through the server drops.
    for target in ["s.db", "dir:s.dir"] {
        read_own_writes(target);
    }
}

pub(crate) fn read_own_writes(target: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["init", target, "--count", "4", "--size", "10k"]);
    let server = Server::start(d, target, &["--writable", "--token", TOKEN]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Other clients keep the server's snapshots busy meanwhile.
        let readers: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| get_loop(&server.addr, &stop)))
            .collect();
        let stopping = StopWhenDropped(&stop);
        for round in 1..=30u8 {
            let body = vec![round; 64];
            let r = put(&server.addr, "1", TOKEN, &body);
            assert!(r.status == 204 || r.status == 201, "{}", r.status);
            assert_eq!(
                get(&server.addr, "/blobs/1", "").body,
                body,
                "{target}: round {round}"
            );
        }
        drop(stopping);
        for r in readers {
            r.join().unwrap();
        }
    });
}

/// The server's resident memory now and at its peak, in kB, from
/// /proc/PID/status (VmRSS and VmHWM: every page the process has mapped,
/// its own and the file pages it maps).
pub(crate) fn rss_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// 1000 clients each stream a 2 MB blob at once, reading slowly in turns,
/// so all are mid-stream together: the server's peak RSS stays under
/// 200 MB, and every client gets its whole blob.
pub(crate) fn thousand_slow_streams(target: &str, d: &Path) -> u64 {
    raise_fd_limit();
    // The client takes a piece of every stream every few ms: a minute
    // without any is a hung test, not a loaded machine.
    let server = Server::start(d, target, &["--send-timeout", "60s"]);
    let mut conns: Vec<(TcpStream, usize, bool)> = (0..1000)
        .map(|i| {
            let mut s = TcpStream::connect(&server.addr).unwrap();
            let req = format!(
                "GET /blobs/{} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                i % 100 + 1
            );
            s.write_all(req.as_bytes()).unwrap();
            s.set_nonblocking(true).unwrap();
            (s, 0, false)
        })
        .collect();
    let mut buf = vec![0u8; 16 * 1024];
    let started = Instant::now();
    let mut open = conns.len();
    while open > 0 {
        assert!(
            started.elapsed() < common::PATIENCE,
            "{target}: {open} streams unfinished"
        );
        open = 0;
        for (s, got, done) in conns.iter_mut().filter(|c| !c.2) {
            match s.read(&mut buf) {
                Ok(0) => *done = true,
                Ok(n) => *got += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{target}: {e}"),
            }
            open += usize::from(!*done);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for (_, got, _) in &conns {
        // The head (about 200 bytes) and the whole blob.
        assert!(
            (2_000_000..2_001_000).contains(got),
            "{target}: {got} bytes"
        );
    }
    let (_, peak) = rss_kb(server.child.id());
    peak
}

/// Streams each of serve's worker threads runs at once (its blocking
/// threads: `BLOCKING_THREADS` in src/http/server/listen.rs).
pub(crate) const BLOCKING_THREADS: usize = 16;

/// The worker threads a `serve` banner names ("(N threads)").
pub(crate) fn banner_threads(banner: &str) -> usize {
    banner
        .split(" threads)")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no thread count in {banner:?}"))
}

/// A client that asked for a large blob and then stops reading.
pub(crate) struct StalledClient {
    pub(crate) stream: TcpStream,
    /// Before its request was sent.
    pub(crate) asked: Instant,
    /// Bytes read.
    pub(crate) got: Vec<u8>,
}

impl StalledClient {
    pub(crate) fn ask(addr: &str, key: u64) -> StalledClient {
        let mut stream = connect(addr);
        small_receive_buffer(&stream);
        let asked = Instant::now();
        stream
            .write_all(format!("GET /blobs/{key} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        StalledClient {
            stream,
            asked,
            got: Vec::new(),
        }
    }

    /// Where the body starts, once the head is in.
    pub(crate) fn body_at(&self) -> Option<usize> {
        self.got
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| at + 4)
    }

    /// Whether body bytes have come: they are read inside the stream's
    /// read transaction, so it was open by then.
    pub(crate) fn has_body(&self) -> bool {
        self.body_at().is_some_and(|at| self.got.len() > at)
    }

    /// Reads what has come, without waiting (the stream is non-blocking).
    pub(crate) fn read_some(&mut self) {
        let mut piece = [0u8; 4096];
        match self.stream.read(&mut piece) {
            Ok(0) => panic!("a stream ended after {} bytes", self.got.len()),
            Ok(n) => self.got.extend_from_slice(&piece[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
}
