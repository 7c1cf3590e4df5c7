//! Helpers shared by the end-to-end tests: run the binary, expect success or
//! a clean usage error, read a JSON result.
#![allow(dead_code)] // each test file uses its own subset

pub mod small;
pub mod tmpfs;

pub use small::small;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Variables a user's shell may carry that change what the binary prints
/// or does; a test that wants one sets it on the command itself.
const INHERITED_VARIABLES: &[&str] = &[
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    // clap wraps help at COLUMNS when no terminal says otherwise.
    "COLUMNS",
    "LINES",
    "BLOBBENCH_TOKEN",
    "BLOBBENCH_TEST_PAUSE_AT",
    "BLOBBENCH_TEST_PAUSE_FILE",
    "BLOBBENCH_TEST_MADE_LOG",
];

/// The binary as a command that starts from a known state whatever started
/// the tests: no standard input, none of [`INHERITED_VARIABLES`], and the
/// termination signals at their default action with none blocked. A
/// background job (`nohup scripts/test.sh &`) hands its children SIGINT and
/// SIGQUIT ignored; a command a test interrupts must not inherit that.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_blobbench"));
    command.stdin(Stdio::null());
    for name in INHERITED_VARIABLES {
        command.env_remove(name);
    }
    default_signals(&mut command);
    command
}

/// Sets SIGINT, SIGQUIT, SIGTERM and SIGHUP to their default action and
/// unblocks every signal in the process `command` starts.
pub fn default_signals(command: &mut Command) -> &mut Command {
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only signal(2), sigemptyset(3) and sigprocmask(2), which are
    // async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        })
    }
}

/// The longest a test waits for a command to reach a step, for a server to
/// answer or for a child to end: what a loaded 2-core machine (two CPU
/// hogs beside the suite, release build) can take for the slowest step the
/// tests wait on, with room to spare. Reaching it means a hang, not a slow
/// machine.
pub const PATIENCE: Duration = Duration::from_secs(300);

/// The first shape of `target`'s cluster that `wanted` accepts, read every
/// quarter second for at most `bound`; each read must keep read_shape's
/// own bound. A cluster's view changes in its own time (a member evicted
/// or back, a donor resyncing), and on a loaded machine one node's probe
/// may miss the read's deadline and show it unreachable in one read and
/// up in the next: what a test asserts of a shape, it waits for. Panics
/// with the last shape seen, naming `what` was awaited.
pub fn shape_when(
    target: &blobbench::target::Target,
    what: &str,
    bound: Duration,
    wanted: impl Fn(&blobbench::store::cluster::ClusterShape) -> bool,
) -> blobbench::store::cluster::ClusterShape {
    use blobbench::store::cluster::READ_BOUND;
    let start = Instant::now();
    loop {
        let read = Instant::now();
        let shape = blobbench::store::read_shape(target).expect("the target is a cluster");
        assert!(
            read.elapsed() < READ_BOUND + Duration::from_secs(1),
            "read_shape took {:?}",
            read.elapsed()
        );
        if wanted(&shape) {
            return shape;
        }
        assert!(
            start.elapsed() < bound,
            "the cluster is not {what} after {bound:?}: {shape:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A command held still at a named step (the product's `pause` module):
/// started with `BLOBBENCH_TEST_PAUSE_AT` and `BLOBBENCH_TEST_PAUSE_FILE`,
/// it writes the file when it reaches the step and waits until the file is
/// removed. While held, nothing the test does can race it.
pub struct Held {
    /// The command's process.
    pub child: Child,
    /// The step it is held at (`STEP` or `STEP@N`).
    step: String,
    file: PathBuf,
    /// The folder the pause file lives in (removed with this).
    _folder: tempfile::TempDir,
}

impl Held {
    /// Starts `command` and waits until it is held at `step` (`STEP` or
    /// `STEP@N`). Panics, with what the command printed, if it ends first
    /// or does not get there within [`PATIENCE`].
    pub fn start(mut command: Command, step: &str) -> Held {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("paused");
        let mut child = command
            .env("BLOBBENCH_TEST_PAUSE_AT", step)
            .env("BLOBBENCH_TEST_PAUSE_FILE", &file)
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !file.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                let output = child.wait_with_output().unwrap();
                panic!(
                    "the command ended ({status}) before it reached step {step}: {}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            if start.elapsed() > PATIENCE {
                let _ = child.kill();
                panic!("the command did not reach step {step} within {PATIENCE:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Held {
            child,
            step: step.to_string(),
            file,
            _folder: folder,
        }
    }

    /// Sends `signal` to the held command (it is delivered at once; a
    /// handler's flag is seen when the command goes on).
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Sends `signal` while the command is held, lets it go and asserts
    /// the signal ended it (a SIGKILL: a crash at that step).
    pub fn end_with(self, signal: i32) {
        use std::os::unix::process::ExitStatusExt;
        self.signal(signal);
        let step = self.step.clone();
        let status = self.release();
        assert_eq!(status.signal(), Some(signal), "held at {step}: {status}");
    }

    /// Lets the command go on without waiting for it (to let several held
    /// commands go at once); wait for it with [`Held::release`] or
    /// [`Held::release_output`] after.
    pub fn let_go(&self) {
        let _ = std::fs::remove_file(&self.file);
    }

    /// Lets the command go on and waits for it to end (bounded by
    /// [`PATIENCE`]).
    pub fn release(mut self) -> ExitStatus {
        self.let_go();
        wait_bounded(&mut self.child)
    }

    /// Lets the command go on and returns its output once it ends (its
    /// stdout and stderr must have been piped).
    pub fn release_output(mut self) -> Output {
        self.let_go();
        collect(&mut self.child)
    }
}

/// Starts `blobbench args` in `dir` (its output discarded), holds it at
/// `step` and ends it there with `signal` ([`Held::end_with`]).
pub fn signal_at(dir: &Path, args: &[&str], step: &str, signal: i32) {
    let mut command = bin();
    command
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Held::start(command, step).end_with(signal);
}

/// [`signal_at`] with SIGKILL: a crash or `kill -9` at `step`.
pub fn kill_at(dir: &Path, args: &[&str], step: &str) {
    signal_at(dir, args, step, libc::SIGKILL);
}

/// What `child` prints to its piped stdout and stderr until it ends, and
/// how it ended; the wait is bounded by [`PATIENCE`]. Each pipe is read on
/// a thread of its own, so a chatty child never blocks on a full pipe
/// while the test waits for it.
pub fn collect(child: &mut Child) -> Output {
    collect_within(child, PATIENCE)
}

/// Runs `args` in `dir` with its standard output's reader gone before the
/// command writes anything (`blobbench ... | head -1` at its harshest).
pub fn with_reader_gone(dir: &Path, args: &[&str]) -> Output {
    // The reader is closed before the command starts, not after: a loaded
    // machine may run the command to its end (its output fits the pipe)
    // before this thread would get to close it.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    collect(&mut child)
}

/// [`collect`], the wait bounded by `patience`.
fn collect_within(child: &mut Child, patience: Duration) -> Output {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_within(child, patience);
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Reads a child's pipe to its end on a thread of its own.
fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

impl Drop for Held {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits for `child` to end, killing it and panicking after [`PATIENCE`].
pub fn wait_bounded(child: &mut Child) -> ExitStatus {
    wait_within(child, PATIENCE)
}

/// Waits for `child` to end, killing it and panicking after `patience`.
fn wait_within(child: &mut Child, patience: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > patience {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command did not end within {patience:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A pid no process can have: above the kernel's pid_max (the pid of a
/// process that has ended may be given to a new one at any time).
pub fn dead_pid() -> u32 {
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    max + 1
}

/// A loopback port where nothing listens, and nothing will while this
/// lives: a socket bound to it that never listens, so a connection to it
/// is refused by construction (port 9 or 1 may have a listener).
pub struct ClosedPort {
    /// The port.
    pub port: u16,
    _socket: socket2::Socket,
}

impl ClosedPort {
    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// Binds a loopback TCP socket to a free port without listening on it.
pub fn closed_port() -> ClosedPort {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    socket.bind(&loopback.into()).expect("bind a loopback port");
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    ClosedPort {
        port,
        _socket: socket,
    }
}

/// Tests that use the shared PostgreSQL and MariaDB servers take this
/// lock for reading; a test that restarts them or changes a server-wide
/// setting takes it for writing, so no other test sees the server gone or
/// changed under it when the tests run as threads of one process (`cargo
/// test -- --include-ignored`). Under cargo-nextest (scripts/test.sh) each
/// test is a process of its own and this lock keeps nothing apart: there
/// the groups of .config/nextest.toml hold each shared server's tests one
/// at a time.
pub static SERVERS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Shares the servers with other tests (see [`SERVERS`]).
pub fn servers_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    SERVERS.read().unwrap_or_else(|e| e.into_inner())
}

/// Has the servers to itself (see [`SERVERS`]).
pub fn servers_exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    SERVERS.write().unwrap_or_else(|e| e.into_inner())
}

/// Starts `blobbench serve TARGET --listen 127.0.0.1:0 EXTRA...` in `dir`
/// and returns it with the address it bound, read from the first stderr
/// line (the banner names it).
pub fn start_serve(dir: &Path, target: &str, extra: &[&str]) -> (Child, String) {
    let (child, _, addr) = start_serve_banner(dir, target, extra);
    (child, addr)
}

/// As [`start_serve`], also returning the banner line itself.
pub fn start_serve_banner(dir: &Path, target: &str, extra: &[&str]) -> (Child, String, String) {
    let mut child = bin()
        .current_dir(dir)
        .args(["serve", target, "--listen", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The banner is read on a thread of its own so that a server that
    // never prints it fails the test after PATIENCE instead of hanging it.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send((line, reader.into_inner()));
    });
    let Ok((line, stderr)) = rx.recv_timeout(PATIENCE) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("serve {target} printed no banner within {PATIENCE:?}");
    };
    child.stderr = Some(stderr);
    // The address it listens on follows " on http://" (a target's own
    // URL, an S3 endpoint, may come first).
    let addr = line
        .split(" on http://")
        .nth(1)
        .or_else(|| line.split("http://").nth(1))
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (child, line, addr)
}

pub fn run(dir: &Path, args: &[&str]) -> Output {
    output(bin().current_dir(dir).args(args))
}

/// Runs `command` to its end and returns what it printed, as
/// `Command::output` does, but kills it and panics after [`PATIENCE`]: a
/// regression that makes a command hang fails its test instead of holding
/// the whole suite.
pub fn output(command: &mut Command) -> Output {
    output_within(command, PATIENCE)
}

/// [`output`], killed and failed after `patience` instead.
pub fn output_within(command: &mut Command, patience: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    collect_within(&mut child, patience)
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    ok_with_env(dir, &[], args)
}

/// Like `ok`, with extra environment variables for the binary.
pub fn ok_with_env(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> String {
    succeeded(
        args,
        output(bin().current_dir(dir).envs(env.iter().copied()).args(args)),
    )
}

/// Asserts that the command run with `args` succeeded and returns its
/// standard output; a failure shows what it printed.
pub fn succeeded(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "{args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts a clean usage error: exit 2, one line on stderr naming `needle`.
pub fn usage_error(dir: &Path, args: &[&str], needle: &str) {
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: status {:?}, stderr {err}",
        out.status
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `<figure>` with this id in a report (its SVG and caption).
pub fn figure(html: &str, id: &str) -> String {
    let start = html
        .find(&format!("<figure id=\"{id}\""))
        .unwrap_or_else(|| panic!("report has no figure {id}"));
    let end = start + html[start..].find("</figure>").expect("figure closes");
    html[start..end].to_string()
}

/// The median of `values` (the mean of the middle two for an even count),
/// computed here so a test checks the product's figures independently.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Distinct run names (rounds folded) of one operation in a result.
pub fn run_names(doc: &serde_json::Value, operation: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in doc["runs"].as_array().unwrap() {
        if r["plan"]["operation"] != operation {
            continue;
        }
        let name = r["name"].as_str().unwrap();
        let name = name.split(" (round ").next().unwrap().to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The AWS_* variables `scripts/test.sh` exports for the S3 servers it
/// starts.
pub const AWS_EXPORTED: [&str; 3] = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"];

/// Gives `command` the AWS_* variables of [`AWS_EXPORTED`], with this
/// process's values, and no other AWS_* variable: one a user's shell
/// carries (AWS_PROFILE, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL,
/// AWS_CA_BUNDLE...) would change which credentials, endpoint or TLS setup
/// the command's S3 client uses.
pub fn s3_env(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("AWS_") {
            command.env_remove(name);
        }
    }
    for name in AWS_EXPORTED {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
}

/// Like [`ok`], for a command that reaches an S3 server: with [`s3_env`].
pub fn ok_s3(dir: &Path, args: &[&str]) -> String {
    succeeded(args, output(s3_env(bin().current_dir(dir).args(args))))
}

/// The unprivileged user and group `nobody`.
pub const NOBODY: u32 = 65534;

/// Runs `command` as `nobody` when the tests run as root, after handing
/// `dir` (the folder it works in) to that user. For commands whose root
/// behaviour reaches past the test: `--cold` as root drops the whole
/// machine's page cache (every other test's too); unprivileged it evicts
/// only its own files. Not root: the command runs as the user already.
pub fn unprivileged<'a>(command: &'a mut Command, dir: &Path) -> &'a mut Command {
    // SAFETY: geteuid has no failure modes.
    if unsafe { libc::geteuid() } != 0 {
        return command;
    }
    std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
    command.uid(NOBODY).gid(NOBODY)
}

/// Every file and folder under `dir`, recursively, as sorted relative paths;
/// a link is listed, never followed (a link to a folder could loop). Tests
/// compare it before and after a command to show the command wrote nothing.
pub fn everything_under(dir: &Path) -> Vec<String> {
    walk(dir, true)
}

/// Every file (and link) under `dir`, recursively, as sorted relative paths.
pub fn files_under(dir: &Path) -> Vec<String> {
    walk(dir, false)
}

fn walk(dir: &Path, with_folders: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            let folder = p.is_dir() && !p.is_symlink();
            if with_folders || !folder {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
            if folder {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The names in folder `dir` (not below it), sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The Chromium the browser tests drive: BLOBBENCH_CHROMIUM, which
/// scripts/test.sh sets.
pub fn chromium() -> String {
    std::env::var("BLOBBENCH_CHROMIUM").expect("BLOBBENCH_CHROMIUM: path to chromium")
}

/// Headless Chromium opening `dir/page` at `width` pixels, doing `mode`
/// (`--screenshot=FILE`, `--dump-dom`), with default signals and `dir` as
/// its home, whatever started the tests.
pub fn headless_chromium(
    chromium: &str,
    dir: &Path,
    page: &str,
    width: u32,
    mode: &str,
) -> std::process::Command {
    let mut command = std::process::Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--window-size={width},2400"),
            mode,
        ])
        .arg(format!("file://{}", dir.join(page).display()))
        .env("HOME", dir);
    default_signals(&mut command);
    command
}

/// Opens `page` (a file in `dir`) in headless Chromium `width` pixels
/// wide, saves a screenshot to `shot`, and returns the console lines the
/// page logged (errors, uncaught exceptions).
pub fn browse(chromium: &str, dir: &Path, page: &str, shot: &Path, width: u32) -> Vec<String> {
    // Its log to a file rather than a pipe: a helper process chromium
    // leaves behind for a moment cannot hold the test waiting for the
    // pipe to close. Default signals and no input, whatever started
    // the tests; bounded by PATIENCE.
    let log = dir.join(format!("chromium-{width}.log"));
    let screenshot = format!("--screenshot={}", shot.display());
    let mut command = headless_chromium(chromium, dir, page, width, &screenshot);
    command
        .args(["--enable-logging=stderr", "--v=0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = command.spawn().expect("chromium runs");
    let status = wait_bounded(&mut child);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(String::from)
        .collect()
}

/// Splits a command as a POSIX shell would for the quoting blobbench
/// writes (plain words and 'single-quoted' ones).
pub fn shell_words(text: &str) -> Vec<String> {
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
