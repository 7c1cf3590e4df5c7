//! Litestream as a child process: the configuration file blobbench writes
//! for it, starting `litestream replicate` and waiting for its control
//! socket, `litestream sync -wait` (the replica has caught up), its CPU
//! time from /proc, the bytes it uploaded from its Prometheus metrics, a
//! stop that waits for it (also when the suite fails: `Drop`; on Ctrl-C the
//! terminal's SIGINT reaches it as well, and if blobbench dies it gets
//! SIGTERM from the kernel), and `litestream restore`.
//!
//! Every wait has a stated bound ([`Bounds`]: `--start-timeout`,
//! `--sync-timeout`, `--restore-timeout`); a wait that reaches it kills
//! what it waited on and fails with "timeout after N s". A Litestream that
//! exits (killed) is seen at the next look and fails with how it exited.

use std::io::{Read, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, FailureClass, Result};
use crate::target::S3Location;

/// The longest each wait on Litestream may take.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Starting (its control socket answers) and stopping (after SIGTERM,
    /// then SIGKILL): `--start-timeout`.
    pub start: Duration,
    /// One `litestream sync -wait` (its first snapshot, each catch-up):
    /// `--sync-timeout`.
    pub sync: Duration,
    /// `litestream restore` of the whole replica: `--restore-timeout`.
    pub restore: Duration,
}

/// How long a read of Litestream's metrics may take: they are only for
/// the bytes uploaded, so a Litestream that does not answer (frozen) costs
/// the round this much and no more, and the round has no byte count.
const METRICS_TIMEOUT: Duration = Duration::from_secs(1);

/// The error of a wait that reached its bound: "litestream sync: timeout
/// after 30 s (--sync-timeout)".
fn timed_out(what: &str, bound: Duration, option: &str) -> Error {
    Error::failed(
        Path::new(what),
        FailureClass::Timeout,
        format!("{} ({option})", crate::result::faults::timeout_after(bound)),
    )
}

/// Runs `command` to its end, at most `bound`: past it the process is
/// killed and the wait fails as a timeout. Returns its output.
fn run_bounded(
    mut command: Command,
    binary: &Path,
    bound: Duration,
    what: &str,
    option: &str,
) -> Result<std::process::Output> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| not_runnable(binary, &e.to_string()))?;
    // Read on threads of their own, so a chatty child never blocks on a
    // full pipe while this waits for it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < bound => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(timed_out(what, bound, option));
            }
        }
    };
    Ok(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// How Litestream is run: the binary, its configuration and log files.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The `litestream` binary.
    pub binary: PathBuf,
    /// The configuration file blobbench wrote.
    pub config: PathBuf,
    /// Its text (recorded in the result).
    pub config_text: String,
    /// Where its output goes.
    pub log: PathBuf,
    /// Whether the log outlives the run (--keep): a message names its
    /// path only then, since otherwise the folder is gone by the time
    /// anyone reads the message.
    log_kept: bool,
    /// The control socket (`sync` talks to it).
    pub socket: PathBuf,
    /// Its metrics address (`127.0.0.1:PORT`), None when no port was free.
    pub metrics: Option<String>,
    /// The metrics port, held for as long as this setup lives (see
    /// [`HeldPort`]).
    _metrics_port: Option<Arc<HeldPort>>,
    /// The database it replicates.
    pub db: PathBuf,
    /// Whether the endpoint is plain http (no TLS).
    plain_http: bool,
}

/// The folder Litestream keeps beside the database it replicates
/// (`.NAME-litestream`).
fn litestream_folder(db: &Path) -> PathBuf {
    let name = db.file_name().unwrap_or_default().to_string_lossy();
    db.with_file_name(format!(".{name}-litestream"))
}

impl Setup {
    /// Writes the configuration for replicating `db` to `replica` (the
    /// bucket, and `prefix` inside it), syncing every `sync_interval`;
    /// `log_kept`: the work folder outlives the run (--keep).
    pub fn write(
        binary: &Path,
        work: &Path,
        db: &Path,
        replica: &S3Location,
        prefix: &str,
        sync_interval: Duration,
        log_kept: bool,
    ) -> Result<Setup> {
        let socket = std::env::temp_dir().join(format!(
            "blobbench-litestream-{}-{}.sock",
            std::process::id(),
            crate::dataset::fresh_version() % 1_000_000
        ));
        let metrics_port = HeldPort::new().map(Arc::new);
        let metrics = metrics_port
            .as_ref()
            .map(|p| format!("127.0.0.1:{}", p.port));
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut text = String::from(
            "# Written by blobbench suite replicate. Credentials come from the\n# environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), never from here.\n",
        );
        if let Some(m) = &metrics {
            text.push_str(&format!("addr: {}\n", q(m)));
        }
        text.push_str(&format!(
            "socket:\n  enabled: true\n  path: {}\ndbs:\n  - path: {}\n    replica:\n      type: s3\n      bucket: {}\n      path: {}\n",
            q(&socket.to_string_lossy()),
            q(&db.to_string_lossy()),
            q(&replica.bucket),
            q(prefix),
        ));
        if let Some(e) = &replica.endpoint {
            text.push_str(&format!("      endpoint: {}\n", q(e)));
        }
        let region = replica
            .region
            .clone()
            .or_else(|| std::env::var("AWS_REGION").ok())
            .unwrap_or_else(|| "us-east-1".into());
        text.push_str(&format!(
            "      region: {}\n      force-path-style: true\n      sync-interval: {}ms\n",
            q(&region),
            sync_interval.as_millis().max(1)
        ));
        let config = work.join("litestream.yml");
        // Litestream's files in the work folder, and its folder beside
        // the database: a user's of those names is refused, not replaced.
        let log = work.join("litestream.log");
        crate::store::claim_new(&config)?;
        crate::store::claim_new(&log)?;
        crate::store::claim_new(&litestream_folder(db))?;
        std::fs::write(&config, &text).map_err(|e| Error::io("cannot write", &config, e))?;
        Ok(Setup {
            binary: binary.to_path_buf(),
            config,
            config_text: text,
            log,
            log_kept,
            socket,
            metrics,
            _metrics_port: metrics_port,
            db: db.to_path_buf(),
            plain_http: replica
                .endpoint
                .as_deref()
                .is_some_and(|e| e.starts_with("http://")),
        })
    }

    /// A `litestream` command with the environment it needs.
    fn command(&self) -> Command {
        let mut c = Command::new(&self.binary);
        if self.plain_http {
            // Without TLS a CA bundle means nothing, but Litestream's S3
            // client refuses to start when AWS_CA_BUNDLE is set ("unable to
            // add custom RootCAs HTTPClient").
            c.env_remove("AWS_CA_BUNDLE");
        }
        c.stdin(Stdio::null());
        c
    }

    /// `litestream version`, or a usage error naming the fix.
    pub fn version(binary: &Path) -> Result<String> {
        let out = Command::new(binary)
            .arg("version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| not_runnable(binary, &e.to_string()))?;
        if !out.status.success() {
            return Err(not_runnable(binary, &first_line(&out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Restores the replica's latest state to `out`, at most `bound`;
    /// returns the time taken.
    pub fn restore(&self, out: &Path, bound: Duration) -> Result<Duration> {
        let start = Instant::now();
        let mut c = self.command();
        c.arg("restore")
            .arg("-config")
            .arg(&self.config)
            .arg("-no-expand-env")
            .arg("-o")
            .arg(out)
            .arg(&self.db);
        let o = run_bounded(
            c,
            &self.binary,
            bound,
            "litestream restore",
            "--restore-timeout",
        )?;
        if !o.status.success() {
            return Err(Error::Server {
                target: "litestream restore".into(),
                message: first_line(&o.stderr),
            });
        }
        Ok(start.elapsed())
    }
}

/// The one-line error for a binary that does not run.
pub fn not_runnable(binary: &Path, why: &str) -> Error {
    Error::usage(format!(
        "--litestream {}: cannot run it ({why}); install Litestream with scripts/install-litestream.sh and give the path it prints (or set BLOBBENCH_LITESTREAM)",
        binary.display()
    ))
}

/// A running `litestream replicate`.
pub struct Litestream<'a> {
    setup: &'a Setup,
    child: Option<Child>,
    bounds: Bounds,
}

impl<'a> Litestream<'a> {
    /// Starts it and waits until its control socket answers (at most
    /// `bounds.start`).
    pub fn start(setup: &'a Setup, bounds: Bounds) -> Result<Litestream<'a>> {
        let _ = std::fs::remove_file(&setup.socket);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&setup.log)
            .map_err(|e| Error::io("cannot open", &setup.log, e))?;
        let err = log
            .try_clone()
            .map_err(|e| Error::io("cannot open", &setup.log, e))?;
        let mut c = setup.command();
        c.arg("replicate")
            .arg("-config")
            .arg(&setup.config)
            .arg("-no-expand-env")
            .stdout(log)
            .stderr(err);
        // SAFETY: prctl is async-signal-safe; it only asks the kernel to
        // send SIGTERM to the child when this thread dies, so Litestream
        // never outlives a blobbench that was killed.
        unsafe {
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = c
            .spawn()
            .map_err(|e| not_runnable(&setup.binary, &e.to_string()))?;
        let mut ls = Litestream {
            setup,
            child: Some(child),
            bounds,
        };
        ls.wait_for_socket()?;
        Ok(ls)
    }

    fn wait_for_socket(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.bounds.start;
        loop {
            if std::os::unix::net::UnixStream::connect(&self.setup.socket).is_ok() {
                return Ok(());
            }
            self.check_running()?;
            if Instant::now() > deadline {
                return Err(timed_out(
                    "litestream replicate: its control socket",
                    self.bounds.start,
                    "--start-timeout",
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// An error if the process has exited (killed, or failed on its own):
    /// how it exited and the last line it logged.
    pub fn check_running(&mut self) -> Result<()> {
        if let Some(c) = self.child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            self.child = None;
            // A killed Litestream leaves its socket file behind.
            let _ = std::fs::remove_file(&self.setup.socket);
            return Err(self.failed(&format!("exited ({status})")));
        }
        Ok(())
    }

    /// An error quoting the last line Litestream logged.
    fn failed(&self, what: &str) -> Error {
        let log = std::fs::read_to_string(&self.setup.log).unwrap_or_default();
        let last = log
            .lines()
            .rev()
            .find(|l| l.contains("level=ERROR") || l.starts_with("Error"))
            .or_else(|| log.lines().last())
            .unwrap_or("no output");
        let log = if self.setup.log_kept {
            format!("its log ({}) says: {last}", self.setup.log.display())
        } else {
            format!("it last logged: {last} (--keep keeps its whole log)")
        };
        Error::failed(
            Path::new("litestream"),
            FailureClass::Other,
            format!("{what}; {log}"),
        )
    }

    /// Forces a sync and waits until the replica holds every commit so
    /// far, at most `--sync-timeout`; returns how long that took. A
    /// Litestream that exited meanwhile fails as such, not as a timeout.
    pub fn sync(&mut self) -> Result<Duration> {
        self.check_running()?;
        let start = Instant::now();
        let bound = self.bounds.sync;
        // Litestream's own -timeout (whole seconds, "best-effort") a
        // second past ours, so ours is the one that answers.
        let own = (bound.as_secs() + 2).to_string();
        let mut c = self.setup.command();
        c.args(["sync", "-wait", "-timeout", &own])
            .arg("-socket")
            .arg(&self.setup.socket)
            .arg(&self.setup.db);
        let o = run_bounded(
            c,
            &self.setup.binary,
            bound,
            "litestream sync",
            "--sync-timeout",
        );
        self.check_running()?;
        let o = o?;
        if !o.status.success() {
            let message = first_line(&o.stderr);
            return Err(Error::failed(
                Path::new("litestream sync"),
                FailureClass::from_message(&message),
                message,
            ));
        }
        Ok(start.elapsed())
    }

    /// Its CPU time so far (user + system), ns; 0 when /proc cannot tell.
    pub fn cpu_ns(&self) -> u64 {
        self.child.as_ref().map_or(0, |c| process_cpu_ns(c.id()))
    }

    /// Bytes it has uploaded so far, when its metrics answer.
    pub fn uploaded(&self) -> Option<u64> {
        uploaded_bytes(&http_get(self.setup.metrics.as_deref()?, "/metrics")?)
    }

    /// Stops it (SIGTERM, then SIGKILL after `--start-timeout`) and waits
    /// for it; an error if it had exited before.
    pub fn stop(mut self) -> Result<()> {
        self.check_running()?;
        self.terminate();
        Ok(())
    }

    fn terminate(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SAFETY: kill with a pid this process spawned and has not reaped.
        // SIGCONT after SIGTERM: a stopped (frozen) process handles its
        // SIGTERM only once it runs again.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            libc::kill(child.id() as libc::pid_t, libc::SIGCONT);
        }
        let deadline = Instant::now() + self.bounds.start;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                let _ = std::fs::remove_file(&self.setup.socket);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_file(&self.setup.socket);
    }
}

impl Drop for Litestream<'_> {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// The first line of a command's error output.
fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string()
}

/// A loopback port kept for Litestream's metrics listener, which is
/// started (and restarted, once per round) long after the port is chosen.
/// A port merely found free could meanwhile become the local end of any
/// connection or `bind(:0)` on the machine, and Litestream would then run
/// without metrics. So a socket stays bound to it, with SO_REUSEADDR and
/// never listening: the kernel hands out no port with a bound socket as an
/// ephemeral one (to `bind(:0)` or to a connection), while Litestream's
/// listener, which sets SO_REUSEADDR too (Go's default), may bind and
/// listen beside it.
#[derive(Debug)]
struct HeldPort {
    port: u16,
    _socket: socket2::Socket,
}

impl HeldPort {
    /// A free loopback port of the kernel's choosing, held; None if no
    /// socket could be bound.
    fn new() -> Option<HeldPort> {
        use socket2::{Domain, Socket, Type};
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
        socket.set_reuse_address(true).ok()?;
        let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        socket.bind(&loopback.into()).ok()?;
        let port = socket.local_addr().ok()?.as_socket()?.port();
        Some(HeldPort {
            port,
            _socket: socket,
        })
    }
}

/// User + system CPU time of process `pid` from /proc, ns.
fn process_cpu_ns(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    cpu_ns_of_stat(&stat, clock_ticks())
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf only reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// utime + stime (fields 14 and 15) of a /proc/PID/stat line, ns. The
/// command name (field 2) may hold spaces, so fields count from its ')'.
fn cpu_ns_of_stat(stat: &str, ticks_per_s: u64) -> u64 {
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0;
    };
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<u64>() * 1_000_000_000 / ticks_per_s.max(1)
}

/// The body of `GET path` from `addr` (HTTP/1.0, no keep-alive), each
/// step bounded by [`METRICS_TIMEOUT`]; None when it does not answer.
fn http_get(addr: &str, path: &str) -> Option<String> {
    let addr_parsed: std::net::SocketAddr = addr.parse().ok()?;
    let mut s = std::net::TcpStream::connect_timeout(&addr_parsed, METRICS_TIMEOUT).ok()?;
    s.set_read_timeout(Some(METRICS_TIMEOUT)).ok()?;
    s.set_write_timeout(Some(METRICS_TIMEOUT)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.")
        .then_some(())
        .filter(|_| head.split_whitespace().nth(1) == Some("200"))?;
    Some(body.to_string())
}

/// Litestream's count of bytes PUT to its replica, from its metrics.
fn uploaded_bytes(metrics: &str) -> Option<u64> {
    let mut found = None;
    for line in metrics.lines() {
        if line.starts_with("litestream_replica_operation_bytes{") && line.contains("\"PUT\"") {
            let v: f64 = line.rsplit(' ').next()?.parse().ok()?;
            *found.get_or_insert(0) += v as u64;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_counts_from_the_command_names_end() {
        // A command name with a space and a ')' must not shift the fields.
        let stat = "4242 (lite stream)) S 1 2 3 4 5 6 7 8 9 10 150 50 0 0 20 0";
        assert_eq!(cpu_ns_of_stat(stat, 100), 2_000_000_000);
        assert_eq!(cpu_ns_of_stat("garbage", 100), 0);
    }

    #[test]
    fn uploaded_bytes_sum_the_put_counters_only() {
        let m = "# HELP x\nlitestream_replica_operation_bytes{operation=\"PUT\",replica_type=\"s3\"} 6.0612522e+07\n\
litestream_replica_operation_bytes{operation=\"GET\",replica_type=\"s3\"} 99\n\
litestream_sync_count{db=\"/x\"} 3\n";
        assert_eq!(uploaded_bytes(m), Some(60_612_522));
        assert_eq!(uploaded_bytes("litestream_sync_count 3\n"), None);
    }

    #[test]
    fn a_listener_binds_beside_the_held_metrics_port_once_per_round() {
        let held = HeldPort::new().unwrap();
        // Litestream starts once per round: each start's listener (with
        // SO_REUSEADDR, as Go's and std's are) binds the held port, serves,
        // and leaves it held again when it stops.
        for _ in 0..2 {
            let listener = std::net::TcpListener::bind(("127.0.0.1", held.port)).unwrap();
            let client = std::net::TcpStream::connect(("127.0.0.1", held.port)).unwrap();
            let (served, _) = listener.accept().unwrap();
            drop((served, client, listener));
        }
    }

    #[test]
    fn the_config_names_the_bucket_and_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let loc = S3Location {
            bucket: "bucket".into(),
            prefix: "some/prefix".into(),
            endpoint: Some("http://127.0.0.1:8333".into()),
            region: Some("eu-west-1".into()),
            part_size: crate::target::S3_DEFAULT_PART_SIZE,
            topology: None,
            waits: Default::default(),
            display: PathBuf::from("s3://bucket/some/prefix"),
        };
        let s = Setup::write(
            Path::new("litestream"),
            dir.path(),
            &dir.path().join("a.db"),
            &loc,
            "some/prefix/run-1",
            Duration::from_millis(250),
            false,
        )
        .unwrap();
        let t = std::fs::read_to_string(&s.config).unwrap();
        for want in [
            "bucket: \"bucket\"",
            "path: \"some/prefix/run-1\"",
            "endpoint: \"http://127.0.0.1:8333\"",
            "region: \"eu-west-1\"",
            "force-path-style: true",
            "sync-interval: 250ms",
        ] {
            assert!(t.contains(want), "{want} missing from {t}");
        }
        assert!(!t.to_lowercase().contains("secret-access-key"), "{t}");
        assert!(s.plain_http);
    }
}
