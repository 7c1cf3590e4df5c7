//! The S3 target end to end: the binary against a real S3 server
//! (SeaweedFS, single node and cluster, started by `scripts/test.sh`,
//! which exports BLOBBENCH_S3_URL and BLOBBENCH_S3_CLUSTER_URL with the
//! AWS_* credentials). Bad S3 targets need no server.

use crate::common::small;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{bin, json, ok, ok_s3, output, s3_env};

/// The URL `scripts/test.sh` exports in `var`, in a prefix of its own:
/// `prefix` (one per test) and this process's id, so no two tests, nor two
/// test runs on one server, share objects.
pub(crate) fn s3_target(var: &str, prefix: &str) -> String {
    let url = std::env::var(var).unwrap_or_else(|_| panic!("{var}: run scripts/test.sh"));
    let (base, query) = url.split_once('?').unwrap_or((&url, ""));
    format!(
        "{}/{prefix}-{}?{query}",
        base.trim_end_matches('/'),
        std::process::id()
    )
}

pub(crate) fn single(prefix: &str) -> String {
    s3_target("BLOBBENCH_S3_URL", prefix)
}

/// The binary with `args` in `dir`, with the S3 credentials (see
/// [`s3_env`]); what it printed once it ended.
pub(crate) fn run_s3(dir: &Path, args: &[&str]) -> Output {
    output(s3_env(bin().current_dir(dir).args(args)))
}

/// Asserts a clean usage error (exit 2, one line on stderr naming
/// `needle`) from a command that reaches for an S3 server, with the S3
/// credentials (see [`s3_env`]).
pub(crate) fn refused_s3(dir: &Path, args: &[&str], needle: &str) {
    let out = run_s3(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A loopback socket that listens (a queue of one) and never accepts.
pub(crate) fn never_accepting() -> socket2::Socket {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    socket.bind(&loopback.into()).unwrap();
    socket.listen(1).unwrap();
    socket
}

/// On top of a run's stated waits (its -t and the S3 timeout), what a
/// loaded 2-core machine may add: starting the binary, opening the
/// dataset, writing the result. Far below the minutes an unbounded wait
/// took (126 s).
pub(crate) const SLACK: Duration = Duration::from_secs(15);

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn a_server_that_stops_answering_mid_run_is_timed_out_at_the_stated_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = single("e2e-freeze");
    ok_s3(dir, &["init", &target, "--count", "20", "--size", "1k"]);
    // Opening the dataset and starting the threads take a few dozen
    // requests; the run is well under way when the proxy stops answering
    // at its 150th, and every request after that waits.
    let proxy = Freezer::start(&target, 150);
    let frozen = proxy.target(&target, "&timeout=1s");
    let result = dir.join("r.json");
    let started = Instant::now();
    let out = run_s3(
        dir,
        &small(&[
            "run",
            &frozen,
            "--threads",
            "2",
            "--mix",
            "read=100",
            "-t",
            "4s",
            "--json",
            result.to_str().unwrap(),
        ]),
    );
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        proxy.frozen.load(Ordering::SeqCst),
        "the proxy never froze: {err}"
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("timeout"), "{err}");
    assert!(!err.contains("error sending request"), "{err}");
    // The run went on to its -t, counting each timed-out request (the
    // message names the stated wait), kept its successes, wrote its result
    // and said so in one line.
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.contains("operations failed: ") && last.contains(" timeout"),
        "{err}"
    );
    let doc = json(&result);
    let read = &doc["tables"]["kinds"][0];
    assert!(read["ops"].as_u64().unwrap() > 0, "{read}");
    let failures = read["failures"].as_array().unwrap();
    assert_eq!(failures[0]["class"], "timeout", "{read}");
    assert!(
        failures[0]["example"]
            .as_str()
            .unwrap()
            .contains("timeout after 1 s"),
        "{read}"
    );
    // The run's 4 s, then each wait at most its 1 s timeout (the last
    // requests, and a listing when the run ends).
    assert!(
        took >= Duration::from_secs(4),
        "ended early: {took:?}: {err}"
    );
    let bound = Duration::from_secs(4 + 2) + SLACK;
    assert!(took < bound, "took {took:?}, more than {bound:?}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn init_run_verify_and_concurrent_mixes_on_a_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = single("e2e-run");
    ok_s3(dir, &["init", &target, "--count", "40", "--size", "20k"]);
    let result = dir.join("r.json");
    let out = ok_s3(
        dir,
        &small(&[
            "run",
            &target,
            "--verify",
            "--json",
            result.to_str().unwrap(),
        ]),
    );
    assert!(out.contains("per read"), "{out}");
    let doc = json(&result);
    let store = &doc["runs"][0]["store"];
    assert_eq!(store["kind"], "s3");
    let server = store["version"].as_str().unwrap_or_default();
    assert!(
        server.starts_with("SeaweedFS"),
        "server as it names itself: {store}"
    );
    assert_eq!(
        store["settings"]["credentials"],
        "environment (AWS_ACCESS_KEY_ID)"
    );
    let text = doc.to_string();
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap();
    assert!(!text.contains(&secret), "the secret key is never recorded");
    // Readers and writers at once: every read a whole, legal version.
    let out = ok_s3(
        dir,
        &small(&[
            "run",
            &target,
            "--threads",
            "4",
            "--mix",
            "read=70,update=20,insert=5,delete=5",
            "-t",
            "1s",
        ]),
    );
    assert!(out.contains("reads checked"), "{out}");
    // What the mix deleted and inserted was put back: the dataset is whole.
    ok_s3(dir, &small(&["run", &target, "--verify"]));
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn blobs_over_the_part_size_go_up_in_parts_and_read_back_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = format!("{}&part_size=5MiB", single("e2e-multipart"));
    let out = ok_s3(dir, &["init", &target, "--count", "3", "--size", "12MiB"]);
    assert!(out.contains("3 blobs"), "{out}");
    ok_s3(dir, &small(&["run", &target, "--verify"]));
    let result = dir.join("r.json");
    ok_s3(
        dir,
        &small(&[
            "run",
            &target,
            "--count",
            "3",
            "--json",
            result.to_str().unwrap(),
        ]),
    );
    let settings = &json(&result)["runs"][0]["store"]["settings"];
    assert_eq!(settings["part_size"], 5 << 20);
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn a_prefix_holding_objects_blobbench_did_not_make_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A dataset one folder down is, to its parent, objects it did not make.
    let outer = single("e2e-foreign");
    let (base, query) = outer.split_once('?').unwrap();
    let inner = format!("{base}/inner?{query}");
    ok_s3(dir, &["init", &inner, "--count", "3", "--size", "1k"]);
    refused_s3(
        dir,
        &["init", &outer, "--count", "3"],
        "blobbench did not make",
    );
    ok_s3(dir, &small(&["run", &inner, "--verify"]));
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn a_missing_bucket_and_a_wrong_key_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target =
        single("e2e-no-bucket").replacen("s3://blobbench/", "s3://no-such-bucket-here/", 1);
    refused_s3(dir, &small(&["run", &target]), "does not exist");
    let out = output(
        s3_env(
            bin()
                .current_dir(dir)
                .args(["run", &single("e2e-wrong-key")]),
        )
        .env("AWS_SECRET_ACCESS_KEY", "wrong"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("AWS_SECRET_ACCESS_KEY"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn suite_lob_measures_the_object_store_beside_sqlite_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let result = dir.join("lob.json");
    let out = ok_s3(
        dir,
        &[
            "suite",
            "lob",
            "--s3",
            &single("e2e-lob"),
            "--sizes",
            "10K,1M",
            "--per-size",
            "2",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert!(out.contains("s3"), "{out}");
    let doc = json(&result);
    let samples: Vec<_> = doc["tables"]["lob"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["system"] == "s3")
        .collect();
    assert_eq!(samples.len(), 2, "one sample per size");
    assert!(
        samples
            .iter()
            .all(|s| s["read_ns"].as_array().unwrap().len() == 2)
    );
    let stores = doc["tables"]["stores"].to_string();
    assert!(stores.contains("SeaweedFS"), "{stores}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn serve_answers_from_a_bucket() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = single("e2e-serve");
    let small = single("e2e-serve-small");
    ok_s3(dir, &["init", &target, "--count", "5", "--size", "300k"]);
    let (server, addr) = serve_s3(dir, &target);
    let out = run_s3(
        dir,
        &[
            "load",
            &format!("http://{addr}/blobs/1"),
            &format!("http://{addr}/blobs/5"),
            "-n",
            "20",
            "--verify",
            &target,
        ],
    );
    // Each blob carries the object's tag, as other stores' blobs do, and
    // a client holding it gets 304 (300k: a streamed blob, 1k: a small one).
    ok_s3(dir, &["init", &small, "--count", "2", "--size", "1k"]);
    let (small_server, small_addr) = serve_s3(dir, &small);
    for addr in [&addr, &small_addr] {
        let first = raw_get(addr, "/blobs/2", "");
        assert!(first.starts_with("HTTP/1.1 200"), "{first}");
        let tag = header(&first, "etag").unwrap_or_else(|| panic!("no ETag: {first}"));
        assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
        let again = raw_get(addr, "/blobs/2", &format!("If-None-Match: {tag}\r\n"));
        assert!(again.starts_with("HTTP/1.1 304"), "{again}");
        assert_eq!(header(&again, "etag").as_deref(), Some(tag.as_str()));
        let other = raw_get(addr, "/blobs/2", "If-None-Match: \"other\"\r\n");
        assert!(other.starts_with("HTTP/1.1 200"), "{other}");
    }
    drop((server, small_server));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("checked byte for byte"), "{text}");
}

/// A GET of `path` with `extra` header lines; the reply's head (status
/// line and headers).
pub(crate) fn raw_get(addr: &str, path: &str, extra: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(crate::common::PATIENCE)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).unwrap();
    let text = String::from_utf8_lossy(&reply);
    text.split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The value of header `name` in a reply's head.
pub(crate) fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

#[test]
#[ignore = "needs the S3 cluster: run scripts/test.sh"]
fn a_run_on_the_cluster_records_its_shape() {
    // Fault tests kill the cluster's servers while holding the lock alone.
    let _servers = crate::common::servers_shared();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let topology = std::env::var("BLOBBENCH_S3_CLUSTER_TOPOLOGY").expect("run scripts/test.sh");
    let target = format!(
        "{}&topology={topology}",
        s3_target("BLOBBENCH_S3_CLUSTER_URL", "e2e-cluster")
    );
    ok_s3(dir, &["init", &target, "--count", "20", "--size", "50k"]);
    let result = dir.join("r.json");
    ok_s3(
        dir,
        &small(&[
            "run",
            &target,
            "--verify",
            "--json",
            result.to_str().unwrap(),
        ]),
    );
    let shape = &json(&result)["runs"][0]["store"]["settings"]["topology"];
    assert_eq!(shape["storage_nodes"], 3, "{shape}");
    assert_eq!(shape["replication"][0], "002", "{shape}");
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn suite_concurrency_runs_the_bucket_beside_the_local_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let result = dir.join("c.json");
    let out = ok_s3(
        dir,
        &[
            "suite",
            "concurrency",
            "--s3",
            &single("e2e-concurrency"),
            "--threads",
            "1,2",
            "--mixes",
            "read=90,update=10",
            "-t",
            "400ms",
            "--rounds",
            "2",
            "--count",
            "30",
            "--size",
            "10k",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert!(out.contains("s3 ops/s"), "{out}");
    assert!(json(&result).to_string().contains("SeaweedFS"));
}

#[test]
#[ignore = "needs an S3 server: run scripts/test.sh"]
fn export_copies_a_database_into_a_bucket_and_back_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["init", "a.db", "--count", "12", "--size", "30k"]);
    let bucket = single("e2e-export");
    ok_s3(dir, &["export", "a.db", &bucket]);
    ok_s3(dir, &small(&["run", &bucket, "--verify"]));
    ok_s3(dir, &["export", &bucket, "dir:back"]);
    let out = ok(dir, &small(&["run", "dir:back", "--verify"]));
    assert!(out.contains("per read"), "{out}");
    assert_eq!(
        std::fs::read_dir(dir.join("back")).unwrap().count(),
        13,
        "12 blobs and a manifest"
    );
}

/// A `blobbench serve` child, killed and reaped when dropped (also when
/// the test fails midway).
pub(crate) struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `blobbench serve TARGET --listen 127.0.0.1:0` with the S3
/// credentials (as common::start_serve, which passes the environment on
/// as it is) and returns it with the address its banner names.
pub(crate) fn serve_s3(dir: &Path, target: &str) -> (Serving, String) {
    let mut child =
        s3_env(
            bin()
                .current_dir(dir)
                .args(["serve", target, "--listen", "127.0.0.1:0"]),
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let serving = Serving(child);
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // The rest is read as it comes, so the server never blocks on a full
    // pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    // The address follows " on http://" (the bucket's endpoint comes first).
    let addr = line
        .split(" on http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (serving, addr)
}

/// A loopback listener that accepts every connection and never answers
/// (an endpoint whose server is frozen); it lets them go when dropped.
pub(crate) struct Silent {
    pub(crate) addr: SocketAddr,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Silent {
    pub(crate) fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let until = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !until.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((s, _)) => held.push(s),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Silent { addr, stop }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// A TCP proxy in front of a target's S3 endpoint that forwards every
/// byte until it has seen `after` requests, then stops answering: it
/// forwards nothing more either way, keeps every connection open and
/// accepts new ones without a word, as a server frozen by SIGSTOP does.
/// Freezing at a request count, not at a time, needs no luck.
pub(crate) struct Freezer {
    pub(crate) addr: SocketAddr,
    pub(crate) frozen: Arc<AtomicBool>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Freezer {
    pub(crate) fn start(target: &str, after: usize) -> Freezer {
        let endpoint = endpoint_of(target);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let frozen = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(AtomicUsize::new(0));
        let (f, s) = (frozen.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !s.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                if f.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let server = TcpStream::connect(&endpoint).unwrap();
                let ends = Pump {
                    frozen: f.clone(),
                    stop: s.clone(),
                    seen: seen.clone(),
                    after,
                };
                ends.run(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    true,
                );
                ends.run(server, client, false);
            }
        });
        Freezer { addr, frozen, stop }
    }

    /// `target` reached through the proxy, with `settings` added.
    pub(crate) fn target(&self, target: &str, settings: &str) -> String {
        let endpoint = endpoint_of(target);
        format!(
            "{}{settings}",
            target.replace(&endpoint, &self.addr.to_string())
        )
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One direction of a proxied connection.
#[derive(Clone)]
pub(crate) struct Pump {
    pub(crate) frozen: Arc<AtomicBool>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) seen: Arc<AtomicUsize>,
    pub(crate) after: usize,
}

impl Pump {
    /// Copies `from` to `to` on a thread of its own; `requests`: this is
    /// the client's side, whose request lines are counted.
    pub(crate) fn run(&self, mut from: TcpStream, mut to: TcpStream, requests: bool) {
        let p = self.clone();
        from.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while !p.stop.load(Ordering::SeqCst) {
                let n = match from.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::TimedOut => continue,
                    Err(_) => return,
                };
                if requests {
                    let lines = buf[..n]
                        .windows(11)
                        .filter(|w| w == b" HTTP/1.1\r\n")
                        .count();
                    if p.seen.fetch_add(lines, Ordering::SeqCst) + lines >= p.after {
                        p.frozen.store(true, Ordering::SeqCst);
                    }
                }
                // Frozen: hold everything, keep the connection open.
                while p.frozen.load(Ordering::SeqCst) && !p.stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if p.stop.load(Ordering::SeqCst) || to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        });
    }
}

/// The `host:port` of a target's `endpoint=http://...`.
pub(crate) fn endpoint_of(target: &str) -> String {
    let (_, rest) = target
        .split_once("endpoint=http://")
        .unwrap_or_else(|| panic!("no http endpoint in {target}"));
    rest.split(['&', '/']).next().unwrap().to_string()
}
