//! `blobbench load`: an HTTP load generator in the spirit of siege, wrk and
//! oha. Closed loop: `-c` keep-alive connections, each sending its next
//! request when the last response has been read in full. Open loop
//! (`--rate`): requests are due at a fixed rate and each latency is counted
//! from the time the request was due, not from when a busy connection got
//! round to sending it (coordinated omission corrected, as wrk2 and oha do).
//! The generator's own lateness (send lag) is measured apart, and requests
//! that fall due but are never sent are counted, warned about and kept in
//! the response times, each at the time it waited (from when it was due to
//! the level's end), as wrk2 does: they are the latest due and the slowest,
//! and leaving them out would flatter the tail.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::dataset::DatasetSpec;
use crate::error::{Error, Result};
use crate::measure::latency::Latencies;
use crate::progress::Progress;
use crate::result::load::{
    ERROR_EVENTS_KEPT, ErrorEvent, ErrorKind, OpenLoopStats, TIMELINE_BUCKET_NS, Timeline, WallSpan,
};
use crate::result::run::InjectedExtra;
use crate::store::inject::Injection;
// The records a level produces are result types; re-exported so callers of
// the load generator find them here.
pub use crate::result::load::{Errors, LevelResult, Order};

mod clock;
pub mod merge;
mod pacing;
pub mod schedule;

/// One URL to request: where to connect, what to ask for, and the blob key
/// when the path is /blobs/{key} (for --verify).
#[derive(Debug, Clone)]
pub struct Url {
    /// HOST:PORT to connect to (port 80 when the URL names none).
    pub authority: String,
    /// The path and query sent in the request line.
    pub path: String,
    /// The blob key of a /blobs/{key} path.
    pub key: Option<u64>,
}

/// Reads an http:// URL (no TLS); a Usage error names the URL and the form
/// expected.
pub fn parse_url(text: &str) -> Result<Url> {
    let uri: hyper::Uri = text
        .parse()
        .map_err(|_| Error::usage(format!("{text}: not a URL; use http://HOST:PORT/PATH")))?;
    if uri.scheme_str() != Some("http") {
        return Err(Error::usage(format!(
            "{text}: only http:// URLs are supported (no TLS)"
        )));
    }
    let Some(authority) = uri.authority() else {
        return Err(Error::usage(format!("{text}: no host")));
    };
    let given = authority.as_str();
    if given.contains('@') {
        return Err(Error::usage(format!(
            "{text}: load sends no user or password; give http://HOST:PORT/PATH"
        )));
    }
    // What follows the host: nothing, or ":PORT" (the http crate keeps a
    // port it cannot read as none, which would become HOST:99999:80).
    let authority = match given[authority.host().len()..].strip_prefix(':') {
        None => format!("{given}:80"),
        Some(port) if port.parse::<u16>().is_ok_and(|p| p > 0) => given.to_string(),
        Some(port) => {
            return Err(Error::usage(format!(
                "{text}: port \"{port}\" is not a port from 1 to 65535; use http://HOST:PORT/PATH"
            )));
        }
    };
    let path = uri
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_else(|| "/".into());
    let key = path
        .strip_prefix("/blobs/")
        .and_then(|k| super::keys::parse_key(k).ok());
    Ok(Url {
        authority,
        path,
        key,
    })
}

/// The URL as text, as given (http://HOST:PORT/PATH).
impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority, self.path)
    }
}

/// A digest of a URL list that ignores its order (FNV-1a over the sorted
/// URLs, as 16 hex digits): two loads asked for the same URLs exactly when
/// their digests agree, whatever order their files listed them in.
pub fn url_digest(urls: &[Url]) -> String {
    let mut texts: Vec<String> = urls.iter().map(Url::to_string).collect();
    texts.sort();
    let mut h: u64 = 0xcbf29ce484222325;
    for t in &texts {
        // A newline after each URL, so ["ab", "c"] and ["a", "bc"] differ.
        for b in t.bytes().chain(std::iter::once(b'\n')) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

/// The distinct servers (HOST:PORT) the URLs name, sorted.
pub fn servers(urls: &[Url]) -> Vec<String> {
    let mut s: Vec<String> = urls.iter().map(|u| u.authority.clone()).collect();
    s.sort();
    s.dedup();
    s
}

/// One load level: what to request, how hard, for how long.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// The URLs to visit.
    pub urls: Vec<Url>,
    /// In which order.
    pub order: Order,
    /// Connections kept open at once.
    pub concurrency: usize,
    /// Stop after this long (with `requests`, whichever comes first).
    pub duration: Option<Duration>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// Open loop: requests per second across all connections.
    pub rate: Option<f64>,
    /// A request not answered in full within this counts as a timeout.
    pub timeout: Duration,
    /// Check every body byte for byte against this dataset.
    pub verify: Option<DatasetSpec>,
    /// Stop the level early once this many requests failed (None: go on to
    /// its end whatever fails).
    pub max_errors: Option<crate::result::budget::ErrorBudget>,
    /// A known extra wait inside every successful request's timed interval
    /// (a testing aid for the calibration bench; see [`Injector`]).
    pub inject: Option<Injection>,
}

struct WorkerOutcome {
    latencies: Latencies,
    ok: u64,
    bytes: u64,
    errors: Errors,
    /// Failures with their time, at most ERROR_EVENTS_KEPT.
    events: Vec<ErrorEvent>,
    /// Open loop: send lag and service time of every request sent.
    lag: Latencies,
    service: Latencies,
    /// Open loop: the latest send, from the level's start, ns.
    last_send_ns: u64,
    /// Open loop: requests that fell due but were never sent, each also in
    /// `latencies` at its wait until the level's end.
    not_sent: u64,
    /// Successful requests and bytes by when they completed.
    timeline: Timeline,
    /// Requests still in flight [`END_GRACE`] after the level's time was
    /// up, cut there: counted apart, neither answered nor failed.
    cut: u64,
    /// The server's clock against this one's, from its Date headers.
    clock: clock::OffsetBounds,
    /// With an injection: the requests' own time and the waits added.
    injected: InjectedExtra,
}

impl Default for WorkerOutcome {
    fn default() -> Self {
        WorkerOutcome {
            latencies: Latencies::new(),
            ok: 0,
            bytes: 0,
            errors: Errors::default(),
            events: Vec::new(),
            lag: Latencies::new(),
            service: Latencies::new(),
            last_send_ns: 0,
            not_sent: 0,
            timeline: Timeline::new(TIMELINE_BUCKET_NS),
            cut: 0,
            clock: clock::OffsetBounds::default(),
            injected: InjectedExtra {
                own_ns: 0,
                extra_ns: 0,
            },
        }
    }
}

/// How long a request still in flight when a level's time is up may go on
/// before it is cut: a level ends within this of its -t.
pub const END_GRACE: Duration = Duration::from_secs(1);

/// Why a request failed before a response was read in full (a timeout is
/// told apart by the caller).
type Failure = ErrorKind;

/// A keep-alive connection: where requests are sent, and how it ended once
/// it has.
struct Sender {
    requests: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    /// True once the connection ended because the server sent bytes no
    /// request asked for: more than a response's Content-Length.
    ended: tokio::sync::oneshot::Receiver<bool>,
}

impl Sender {
    /// Waits (within `timeout`) until the connection can carry the next
    /// request. Err(Length) when it cannot because the server sent more
    /// than the last response's Content-Length (hyper ends a connection on
    /// bytes that arrive while no response is due); Err(Connect) when it
    /// cannot for any other reason (the server closed it, the wait ran
    /// out): a closed keep-alive connection is no fault of the server's.
    async fn ready(&mut self, timeout: Duration) -> std::result::Result<(), Failure> {
        match tokio::time::timeout(timeout, self.requests.ready()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => {
                // The connection's task says how it ended as soon as it has.
                let surplus = tokio::time::timeout(timeout, &mut self.ended).await;
                match surplus {
                    Ok(Ok(true)) => Err(Failure::Length),
                    _ => Err(Failure::Connect),
                }
            }
            Err(_) => Err(Failure::Connect),
        }
    }
}

/// Whether a connection ended on bytes that came while no response was
/// due: hyper's "received unexpected message from connection", which is
/// how it meets more body than a Content-Length announced. hyper offers no
/// predicate for that kind, so its words are read; the end-to-end test of
/// a server that sends too much keeps the reading honest.
fn ended_on_surplus(outcome: &std::result::Result<(), hyper::Error>) -> bool {
    outcome
        .as_ref()
        .is_err_and(|e| e.to_string().contains("unexpected message"))
}

/// Opens a connection, TCP and HTTP handshake both within `timeout`: a
/// server that never accepts (a full backlog drops the SYN) fails as a
/// connect error instead of holding the worker past the level's end.
async fn connect(authority: &str, timeout: Duration) -> std::result::Result<Sender, Failure> {
    let open = async {
        let stream = TcpStream::connect(authority)
            .await
            .map_err(|_| Failure::Connect)?;
        let _ = stream.set_nodelay(true);
        let (requests, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| Failure::Connect)?;
        let (tell, ended) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let outcome = conn.await;
            let _ = tell.send(ended_on_surplus(&outcome));
        });
        Ok(Sender { requests, ended })
    };
    tokio::time::timeout(timeout, open)
        .await
        .unwrap_or(Err(Failure::Connect))
}

/// A response read in full: its body's length, and whether the server
/// keeps the connection open for the next request (not after
/// `Connection: close`, nor after an HTTP/1.0 response without
/// `Connection: keep-alive`: such a server closes it, and the next request
/// goes on a new connection without counting an error).
#[derive(Debug, Clone)]
struct Response {
    bytes: u64,
    reusable: bool,
    /// When the body's last byte was read: where the response's time ends.
    done: Instant,
    /// Its `Date` header.
    date: Option<HeaderValue>,
}

/// Whether a response's headers let the connection carry another request.
fn keeps_alive(version: hyper::Version, headers: &hyper::HeaderMap) -> bool {
    let says = |word: &str| {
        headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(word))
    };
    if says("close") {
        return false;
    }
    version >= hyper::Version::HTTP_11 || says("keep-alive")
}

/// Sends one request on `sender` and reads the whole response body.
async fn one_request(
    sender: &mut Sender,
    url: &Url,
    verify: Option<&DatasetSpec>,
    body_buf: &mut Vec<u8>,
    status: &mut u16,
    timeout: Duration,
) -> std::result::Result<Response, Failure> {
    let req = Request::get(url.path.as_str())
        .header(
            header::HOST,
            HeaderValue::from_str(&url.authority).map_err(|_| Failure::Io)?,
        )
        .body(Empty::<Bytes>::new())
        .map_err(|_| Failure::Io)?;
    let resp = sender
        .requests
        .send_request(req)
        .await
        .map_err(|_| Failure::Io)?;
    let ok_status = resp.status().is_success();
    *status = resp.status().as_u16();
    let date = resp.headers().get(header::DATE).cloned();
    let reusable = keeps_alive(resp.version(), resp.headers());
    let announced: Option<u64> = resp
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let mut body = resp.into_body();
    let mut n = 0u64;
    body_buf.clear();
    while let Some(frame) = body.frame().await {
        // A body cut short of its Content-Length is a length error, not
        // a mere I/O one: the server announced more than it sent.
        let frame = frame.map_err(|_| match announced {
            Some(a) if n < a => Failure::Length,
            _ => Failure::Io,
        })?;
        if let Some(d) = frame.data_ref() {
            n += d.len() as u64;
            if verify.is_some() {
                body_buf.extend_from_slice(d);
            }
        }
    }
    if !ok_status {
        return Err(Failure::Status);
    }
    if announced.is_some_and(|a| a != n) {
        return Err(Failure::Length);
    }
    if let (Some(spec), Some(key)) = (verify, url.key) {
        if spec.size_of(key) as u64 != n {
            return Err(Failure::Length);
        }
        if spec.verify(key, body_buf, None).is_err() {
            return Err(Failure::Content);
        }
    }
    let done = Instant::now();
    // Bytes past the Content-Length end the connection as soon as hyper
    // reads them: a response followed by more than it announced is a
    // length error, not a success and a quiet reconnection. (The check is
    // the wait for the connection to be ready, which the next request
    // would make anyway; the response was timed when its body ended.)
    let reusable = reusable
        && match sender.ready(timeout).await {
            Ok(()) => true,
            Err(Failure::Length) => return Err(Failure::Length),
            Err(_) => false,
        };
    Ok(Response {
        bytes: n,
        reusable,
        done,
        date,
    })
}

/// A connection ready to send on: the one kept from the last request
/// when the server left it open, else a new one. A kept connection the
/// server has closed meanwhile (its keep-alive timeout) is replaced
/// without counting an error.
async fn ready_sender(
    sender: &mut Option<Sender>,
    authority: &str,
    timeout: Duration,
) -> std::result::Result<(), Failure> {
    if let Some(s) = sender.as_mut() {
        match s.ready(timeout).await {
            Ok(()) => return Ok(()),
            // Surplus bytes that came after the last response was done:
            // counted here, and the next request goes on a new connection.
            Err(Failure::Length) => {
                *sender = None;
                return Err(Failure::Length);
            }
            Err(_) => {}
        }
    }
    *sender = None;
    let mut fresh = connect(authority, timeout).await?;
    fresh.ready(timeout).await.map_err(|_| Failure::Connect)?;
    *sender = Some(fresh);
    Ok(())
}

struct Shared {
    plan: LoadPlan,
    next: AtomicU64,
    started: Instant,
    /// `started` on the system clock, ns since the Unix epoch.
    started_unix_ns: u64,
    /// Whether the URLs name one server, whose `Date` headers then bound
    /// its clock's offset to this machine's (see clock.rs).
    one_server: bool,
    done: AtomicU64,
    /// Open loop: how many requests fall due within the level (None:
    /// closed loop, or open loop under -n alone, where all n are due).
    due_total: Option<u64>,
    /// Open loop: requests of the schedule a worker took once the level's
    /// time was up, so never sent (at most one per worker; those nobody
    /// took are the indices from `next` on).
    refused: Mutex<Vec<u64>>,
    /// Requests failed so far, as workers report them.
    failed: AtomicU64,
    /// Why the level stopped before its end (`--max-errors`).
    stopped_early: Mutex<Option<String>>,
}

impl Shared {
    /// Counts `n` more failed requests; stops the level when that spends
    /// the `--max-errors` budget.
    fn count_failures(&self, n: u64) {
        let failed = self.failed.fetch_add(n, Ordering::Relaxed) + n;
        let Some(budget) = self.plan.max_errors else {
            return;
        };
        let tried = self.done.load(Ordering::Relaxed).max(failed);
        let mut why = self.stopped_early.lock().unwrap_or_else(|e| e.into_inner());
        if why.is_none()
            && let Some(reason) = budget.reason(failed, tried, "requests")
        {
            let at = self.started.elapsed().as_secs_f64();
            *why = Some(format!("{reason} at {at:.1} s"));
        }
    }

    /// How long the next request may take: its timeout, or less when the
    /// level's time ends sooner (a request still in flight [`END_GRACE`]
    /// after it is cut, so a level ends within that of its -t).
    fn request_wait(&self) -> Duration {
        let Some(d) = self.plan.duration else {
            return self.plan.timeout;
        };
        let left = (d + END_GRACE).saturating_sub(self.started.elapsed());
        self.plan.timeout.min(left.max(Duration::from_millis(1)))
    }

    /// The index of the next request, or None when the run is over.
    fn take(&self) -> Option<u64> {
        if self
            .stopped_early
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
        {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.plan.requests.is_some_and(|n| i >= n) {
            return None;
        }
        if self.due_total.is_some_and(|n| i >= n) {
            return None;
        }
        if self
            .plan
            .duration
            .is_some_and(|d| self.started.elapsed() >= d)
        {
            // Due within the level (it is below due_total) but too late to
            // send: counted as not sent.
            if self.due_total.is_some() {
                self.refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(i);
            }
            return None;
        }
        Some(i)
    }

    /// Open loop: request `i` is due at start + i / rate, whoever sends it
    /// (a time too far off to represent is as good as never: the end of
    /// the level, or a day for a level of `-n` alone).
    fn due(&self, i: u64, rate: f64) -> Instant {
        let far = self.far();
        self.started
            .checked_add(self.due_offset(i, rate))
            .unwrap_or_else(|| self.started + far)
    }

    /// When request `i` is due, from the level's start.
    fn due_offset(&self, i: u64, rate: f64) -> Duration {
        Duration::try_from_secs_f64(i as f64 / rate).unwrap_or(self.far())
    }

    /// A time as good as never: the level's end, or a day under `-n` alone.
    fn far(&self) -> Duration {
        self.plan.duration.unwrap_or(Duration::from_secs(86_400))
    }

    /// Open loop: the requests due within the level that were never sent
    /// (those refused once the time was up, and those nobody took), once
    /// every worker has stopped.
    fn unsent(&self) -> impl Iterator<Item = u64> {
        let due = self.due_total.unwrap_or(0);
        let untaken = self.next.load(Ordering::Relaxed).min(due)..due;
        let refused = std::mem::take(&mut *self.refused.lock().unwrap_or_else(|e| e.into_inner()));
        refused.into_iter().filter(move |&i| i < due).chain(untaken)
    }

    /// Open loop: counts every request that fell due but was never sent in
    /// `out`'s response times at the time it waited, from its intended
    /// start to `end` (the level's end, from its start), as wrk2 does; the
    /// send lag and service time, of sent requests only, are left alone.
    fn record_unsent(&self, out: &mut WorkerOutcome, end: Duration) {
        let Some(rate) = self.plan.rate else { return };
        for i in self.unsent() {
            let waited = end.saturating_sub(self.due_offset(i, rate));
            out.latencies.record(waited.as_nanos() as u64);
            out.not_sent += 1;
        }
    }

    fn url(&self, i: u64, rng: &mut u64) -> &Url {
        let n = self.plan.urls.len() as u64;
        let idx = match self.plan.order {
            Order::Sequential => i % n,
            Order::Random => {
                // xorshift64*: cheap, per worker, good enough to spread keys.
                *rng ^= *rng >> 12;
                *rng ^= *rng << 25;
                *rng ^= *rng >> 27;
                rng.wrapping_mul(0x2545F4914F6CDD1D) % n
            }
        };
        &self.plan.urls[idx as usize]
    }
}

/// The requests in the schedule of an open-loop level: those whose
/// intended start i / rate falls before the level's end (all of them under
/// -n alone).
fn due_total(plan: &LoadPlan) -> Option<u64> {
    let rate = plan.rate?;
    let by_time = plan
        .duration
        .map(|d| (d.as_secs_f64() * rate).ceil() as u64);
    match (by_time, plan.requests) {
        (Some(t), Some(n)) => Some(t.min(n)),
        (t, n) => t.or(n),
    }
}

async fn worker(shared: Arc<Shared>, id: u64) -> WorkerOutcome {
    let mut out = WorkerOutcome::default();
    let mut sender: Option<Sender> = None;
    let mut rng = 0x9E3779B97F4A7C15u64 ^ (id + 1).wrapping_mul(0xBF58476D1CE4E5B9);
    let mut body_buf = Vec::new();
    let mut pacer = shared.plan.rate.map(|_| pacing::Pacer::new());
    let mut injector = shared.plan.inject.map(Injector::new);
    let mut dates = clock::DateCache::default();
    let mut reported = 0;
    loop {
        let failed = out.errors.total();
        if failed > reported {
            shared.count_failures(failed - reported);
            reported = failed;
        }
        let Some(i) = shared.take() else {
            break;
        };
        // Closed loop: latency counts from here, connection included, as
        // it always has.
        let asked = Instant::now();
        let url = shared.url(i, &mut rng).clone();
        let connecting = shared.request_wait();
        if let Err(kind) = ready_sender(&mut sender, &url.authority, connecting).await {
            shared.done.fetch_add(1, Ordering::Relaxed);
            if connecting < shared.plan.timeout && kind == ErrorKind::Timeout {
                out.cut += 1;
                continue;
            }
            out.fail(kind, shared.started);
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        // Open loop: the connection is ready before the request falls due,
        // so the send leaves on time.
        let due = match (&mut pacer, shared.plan.rate) {
            (Some(p), Some(rate)) => {
                let due = shared.due(i, rate);
                p.wait_until(due).await;
                due
            }
            _ => asked,
        };
        let sent = Instant::now();
        let s = sender.as_mut().expect("connected");
        let mut status = 0u16;
        let wait = shared.request_wait();
        let result = tokio::time::timeout(
            wait,
            one_request(
                s,
                &url,
                shared.plan.verify.as_ref(),
                &mut body_buf,
                &mut status,
                wait,
            ),
        )
        .await;
        if result.is_err() && wait < shared.plan.timeout {
            // Not a timeout of the request: the level ended under it.
            shared.done.fetch_add(1, Ordering::Relaxed);
            out.cut += 1;
            sender = None;
            continue;
        }
        if matches!(result, Ok(Err(ErrorKind::Status))) {
            out.errors.count_status(status);
        }
        if shared.one_server
            && let Ok(Ok(r)) = &result
            && let Some(date) = r.date.as_ref().and_then(|d| dates.seconds(d))
        {
            let unix = |t: Instant| {
                shared.started_unix_ns + t.duration_since(shared.started).as_nanos() as u64
            };
            out.clock.record(date, unix(sent), unix(r.done));
        }
        let mut result = result;
        if let (Some(injector), Ok(Ok(r))) = (&mut injector, &mut result) {
            r.done = injector.wait_after(sent, r.done, &mut out.injected).await;
        }
        let times = Times {
            started: shared.started,
            due,
            sent,
            open_loop: pacer.is_some(),
        };
        shared.done.fetch_add(1, Ordering::Relaxed);
        if !out.record(result, times) {
            // Closed by the server, or in an unknown state: start afresh.
            sender = None;
        }
    }
    out
}

/// The moments of one request, read when its response is in.
struct Times {
    started: Instant,
    due: Instant,
    sent: Instant,
    open_loop: bool,
}

type Outcome =
    std::result::Result<std::result::Result<Response, Failure>, tokio::time::error::Elapsed>;

impl WorkerOutcome {
    /// Counts one request's outcome; false when its connection must not be
    /// used again.
    fn record(&mut self, result: Outcome, t: Times) -> bool {
        let now = match &result {
            Ok(Ok(response)) => response.done,
            _ => Instant::now(),
        };
        if t.open_loop {
            self.lag
                .record(t.sent.duration_since(t.due).as_nanos() as u64);
            self.last_send_ns = self
                .last_send_ns
                .max(t.sent.duration_since(t.started).as_nanos() as u64);
        }
        match result {
            Ok(Ok(Response {
                bytes, reusable, ..
            })) => {
                self.ok += 1;
                self.bytes += bytes;
                self.timeline
                    .record(now.duration_since(t.started).as_nanos() as u64, bytes);
                self.latencies
                    .record(now.duration_since(t.due).as_nanos() as u64);
                if t.open_loop {
                    self.service
                        .record(now.duration_since(t.sent).as_nanos() as u64);
                }
                reusable
            }
            Ok(Err(f)) => {
                self.fail(f, t.started);
                !matches!(f, Failure::Io | Failure::Length)
            }
            Err(_) => {
                self.fail(ErrorKind::Timeout, t.started);
                false
            }
        }
    }

    /// Counts one failure, and keeps its time while there is room.
    fn fail(&mut self, kind: ErrorKind, started: Instant) {
        self.errors.count(kind);
        if self.events.len() < ERROR_EVENTS_KEPT {
            self.events.push(ErrorEvent {
                at_ns: started.elapsed().as_nanos() as u64,
                kind,
            });
        }
    }
}

/// Runs one load level and returns its figures. Progress goes to the
/// current stage of `progress` in thousandths of the level (by time, or by
/// requests under `-n`), with the requests so far as its message; the
/// caller starts and finishes the stage.
pub async fn run_level(plan: LoadPlan, progress: &dyn Progress) -> LevelResult {
    measure_level(plan, progress).await.summary()
}

/// What one run of a level measured, before it is summarized: the rounds
/// of a level (closed loop) merge into one outcome whose requests, bytes,
/// errors, latencies and wall time add up.
pub struct LevelOutcome {
    plan: LoadPlan,
    due_total: Option<u64>,
    elapsed: Duration,
    all: WorkerOutcome,
    /// The system clock at the level's start, ns since the Unix epoch
    /// (None once rounds run at different times are merged: they are not
    /// one span).
    start_unix_ns: Option<u64>,
    /// Why the level stopped before its end (`--max-errors`).
    stopped_early: Option<String>,
}

impl LevelOutcome {
    /// Successful requests per second of this outcome's wall time.
    pub fn requests_per_s(&self) -> f64 {
        self.all.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Requests sent, answered or failed: in sequential order, where the
    /// next run continues the walk of the URL list.
    pub fn requests(&self) -> u64 {
        self.all.ok + self.all.errors.total()
    }

    /// Mean response time of the successful requests, ns (0 without any).
    pub fn mean_ns(&self) -> f64 {
        self.all.latencies.summary().mean_ns
    }

    /// With an injection: the requests' own time and the waits it added.
    pub fn injected(&self) -> Option<InjectedExtra> {
        self.plan.inject.map(|_| self.all.injected)
    }

    /// The injection its plan named, if any.
    pub fn plan_injection(&self) -> Option<Injection> {
        self.plan.inject
    }

    /// Adds `later`, run after this one: its failures are timed from this
    /// outcome's start, as if the two were one run.
    pub fn merge(&mut self, later: LevelOutcome) {
        let offset = self.elapsed.as_nanos() as u64;
        let mut later_all = later.all;
        for e in &mut later_all.events {
            e.at_ns += offset;
        }
        self.all.absorb(later_all);
        self.elapsed += later.elapsed;
        self.start_unix_ns = None;
        self.due_total = match (self.due_total, later.due_total) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// The figures of the table and the result.
    pub fn summary(self) -> LevelResult {
        let wall = self.start_unix_ns.map(|start| WallSpan {
            start_unix_ns: start,
            end_unix_ns: start + self.elapsed.as_nanos() as u64,
        });
        let mut r = summarize(&self.plan, self.due_total, self.elapsed, self.all);
        if wall.is_none() {
            r.timeline = None;
        }
        r.wall = wall;
        r.stopped_early = self.stopped_early;
        r
    }
}

/// Runs one load level (see [`run_level`]) and returns what it measured,
/// unsummarized.
pub async fn measure_level(plan: LoadPlan, progress: &dyn Progress) -> LevelOutcome {
    crate::pause::at("load-level");
    // The two clocks read together: the monotonic one times the level, the
    // system one places it for lining up with other machines' loads.
    let (started, start_unix_ns) = clocks_together();
    let one_server = plan.urls.iter().all(|u| {
        plan.urls
            .first()
            .is_some_and(|f| f.authority == u.authority)
    });
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        next: AtomicU64::new(0),
        started,
        started_unix_ns: start_unix_ns,
        one_server,
        done: AtomicU64::new(0),
        due_total: due_total(&plan),
        refused: Mutex::new(Vec::new()),
        failed: AtomicU64::new(0),
        stopped_early: Mutex::new(None),
    });
    let handles: Vec<_> = (0..plan.concurrency as u64)
        .map(|id| tokio::spawn(worker(shared.clone(), id)))
        .collect();
    let all = Box::pin(async move {
        let mut outcomes = Vec::new();
        for h in handles {
            outcomes.push(h.await.unwrap_or_default());
        }
        outcomes
    });
    let outcomes = watch(&shared, all, progress).await;
    let elapsed = shared.started.elapsed();
    let mut all = WorkerOutcome::default();
    for o in outcomes {
        all.absorb(o);
    }
    shared.record_unsent(&mut all, elapsed);
    let stopped_early = shared
        .stopped_early
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    LevelOutcome {
        plan,
        due_total: shared.due_total,
        elapsed,
        all,
        start_unix_ns: Some(start_unix_ns),
        stopped_early,
    }
}

/// The monotonic clock and the system clock's Unix ns at one moment: of a
/// few tries, the one whose system read lay between the closest pair of
/// monotonic reads (a preemption between two reads would put every time
/// this level converts off by as much, and its offset to the server's
/// clock with them).
fn clocks_together() -> (Instant, u64) {
    (0..5)
        .map(|_| {
            let before = Instant::now();
            let unix = unix_now_ns();
            let after = Instant::now();
            let gap = after.duration_since(before);
            (gap, before + gap / 2, unix)
        })
        .min_by_key(|&(gap, ..)| gap)
        .map(|(_, at, unix)| (at, unix))
        .expect("five tries")
}

/// The system clock, ns since the Unix epoch (0 before it).
fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Waits for the workers, showing live progress every 200 ms meanwhile.
async fn watch(
    shared: &Shared,
    mut all: std::pin::Pin<Box<impl Future<Output = Vec<WorkerOutcome>>>>,
    progress: &dyn Progress,
) -> Vec<WorkerOutcome> {
    let mut shown = 0u64;
    loop {
        match tokio::time::timeout(Duration::from_millis(200), &mut all).await {
            Ok(outcomes) => return outcomes,
            Err(_) => shown = show_progress(shared, progress, shown),
        }
    }
}

/// Moves the stage to the level's position (of 1000) and says how many
/// requests were done at what rate; returns the position shown.
fn show_progress(s: &Shared, progress: &dyn Progress, shown: u64) -> u64 {
    let done = s.done.load(Ordering::Relaxed);
    let secs = s.started.elapsed().as_secs_f64();
    let position = match (s.plan.duration, s.plan.requests) {
        (Some(d), _) => (secs / d.as_secs_f64() * 1000.0).min(1000.0) as u64,
        (None, Some(n)) => (done as f64 / n as f64 * 1000.0) as u64,
        _ => 0,
    };
    if position > shown {
        progress.advance(position - shown);
    }
    progress.message(&format!(
        "{done} requests, {:.0}/s",
        done as f64 / secs.max(1e-9)
    ));
    position.max(shown)
}

impl WorkerOutcome {
    /// Adds `o`'s counts, latencies and failures to these.
    fn absorb(&mut self, o: WorkerOutcome) {
        self.latencies.merge(&o.latencies);
        self.lag.merge(&o.lag);
        self.service.merge(&o.service);
        self.ok += o.ok;
        self.bytes += o.bytes;
        self.errors.add(&o.errors);
        self.events.extend(o.events);
        self.last_send_ns = self.last_send_ns.max(o.last_send_ns);
        self.not_sent += o.not_sent;
        self.cut += o.cut;
        self.timeline.add(&o.timeline);
        self.clock.absorb(&o.clock);
        self.injected.own_ns += o.injected.own_ns;
        self.injected.extra_ns += o.injected.extra_ns;
    }
}

/// A known extra wait after each successful response of one worker, inside
/// its timed interval (before its end is read): the calibration bench's
/// injected cost for HTTP. Unlike the store's injection, it waits without
/// spinning (a timerfd, then yields; the worker's other requests go on),
/// so the load generator takes no core from the server under test: the
/// request is as if its server answered later. A wait that ends late (a
/// busy machine) is credited against the waits after it, so a run's total
/// extra stays what was named.
struct Injector {
    injection: Injection,
    pacer: pacing::Pacer,
    /// The extra still owed (negative: paid ahead), ns.
    owed_ns: i64,
}

impl Injector {
    fn new(injection: Injection) -> Injector {
        Injector {
            injection,
            pacer: pacing::Pacer::new(),
            owed_ns: 0,
        }
    }

    /// Waits the extra a request sent at `sent` and done at `done` owes;
    /// returns its new end and adds both times to `totals`.
    async fn wait_after(
        &mut self,
        sent: Instant,
        done: Instant,
        totals: &mut InjectedExtra,
    ) -> Instant {
        let own = done.saturating_duration_since(sent).as_nanos() as u64;
        totals.own_ns += own;
        let extra = self.injection.extra_ns(own);
        self.owed_ns = self
            .owed_ns
            .saturating_add(i64::try_from(extra).unwrap_or(i64::MAX));
        if self.owed_ns <= 0 {
            return done;
        }
        self.pacer
            .wait_until(done + Duration::from_nanos(self.owed_ns as u64))
            .await;
        let end = Instant::now();
        let waited = end.saturating_duration_since(done).as_nanos() as u64;
        self.owed_ns -= i64::try_from(waited).unwrap_or(i64::MAX);
        totals.extra_ns += waited;
        end
    }
}

fn summarize(
    plan: &LoadPlan,
    due_total: Option<u64>,
    elapsed: Duration,
    mut all: WorkerOutcome,
) -> LevelResult {
    all.events.sort_by_key(|e| e.at_ns);
    let dropped = all.errors.total() - all.events.len().min(ERROR_EVENTS_KEPT) as u64;
    all.events.truncate(ERROR_EVENTS_KEPT);
    let secs = elapsed.as_secs_f64().max(1e-9);
    let requests = all.ok + all.errors.total();
    LevelResult {
        concurrency: plan.concurrency,
        rate: plan.rate,
        requests,
        ok: all.ok,
        bytes: all.bytes,
        elapsed_ns: elapsed.as_nanos() as u64,
        requests_per_s: all.ok as f64 / secs,
        mb_per_s: all.bytes as f64 / 1e6 / secs,
        latency: all.latencies.summary(),
        histogram: Some(all.latencies.encode()),
        wall: None,
        timeline: Some(std::mem::take(&mut all.timeline)),
        open_loop: plan.rate.map(|rate| {
            let due = due_total.or(plan.requests).unwrap_or(requests);
            schedule(rate, due, requests, &all)
        }),
        errors: all.errors,
        error_events: all.events,
        error_events_dropped: dropped,
        stopped_early: None,
        cut_at_end: all.cut,
        server_clock: all.clock.result(),
        scheduled_unix_ns: None,
    }
}

/// How an open-loop level kept its schedule of `due` requests at `rate`,
/// `sent` of which left (and `all.not_sent` never did, already counted in
/// its response times). The achieved rate counts the sends over the span
/// they were due in, or over the span the sending took when that was longer
/// (a generator that fell behind). It warns at any request not sent, and
/// when the achieved rate is below 95% of the target.
fn schedule(rate: f64, due: u64, sent: u64, all: &WorkerOutcome) -> OpenLoopStats {
    let window = due as f64 / rate;
    let sending = all.last_send_ns as f64 / 1e9 + 1.0 / rate;
    let achieved = sent as f64 / window.max(sending).max(1e-9);
    let lag = all.lag.summary();
    let mut stats = OpenLoopStats {
        target_per_s: rate,
        due,
        sent,
        not_sent: all.not_sent,
        not_sent_share: 0.0,
        latency_includes_not_sent: true,
        achieved_per_s: achieved,
        send_lag: lag,
        service_time: all.service.summary(),
        send_lag_histogram: Some(all.lag.encode()),
        service_time_histogram: Some(all.service.encode()),
        warning: None,
    };
    stats.not_sent_share = stats.not_sent_share();
    let late = crate::units::human_duration_ns(stats.send_lag.max_ns as f64);
    let pace = format!(
        "achieved {achieved:.0} req/s of the {rate} asked ({:.0}%), sends up to {late} late",
        achieved / rate * 100.0
    );
    stats.warning = if stats.not_sent > 0 {
        Some(format!(
            "{} (generator behind: every connection busy); the response-time percentiles \
             count each at its wait from its intended start to the level's end, as wrk2 does; \
             {pace}; raise -c (more connections) or lower --rate",
            stats.not_sent_text()
        ))
    } else if achieved < 0.95 * rate {
        Some(format!(
            "{pace} (generator behind), though every due request was sent; raise -c (more \
             connections) or lower --rate"
        ))
    } else {
        None
    };
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(rate: Option<f64>, duration_ms: Option<u64>, requests: Option<u64>) -> LoadPlan {
        LoadPlan {
            urls: vec![],
            order: Order::Sequential,
            concurrency: 1,
            duration: duration_ms.map(Duration::from_millis),
            requests,
            rate,
            timeout: Duration::from_secs(1),
            verify: None,
            max_errors: None,
            inject: None,
        }
    }

    #[test]
    fn the_schedule_holds_the_requests_due_before_the_end() {
        assert_eq!(due_total(&plan(Some(200.0), Some(1000), None)), Some(200));
        // Due at 0, 1/3, 2/3, 1 and 4/3 s: five start before 1.5 s.
        assert_eq!(due_total(&plan(Some(3.0), Some(1500), None)), Some(5));
        assert_eq!(
            due_total(&plan(Some(200.0), Some(1000), Some(50))),
            Some(50)
        );
        assert_eq!(due_total(&plan(Some(200.0), None, Some(70))), Some(70));
        assert_eq!(due_total(&plan(None, Some(1000), None)), None);
    }

    #[test]
    fn a_generator_behind_is_counted_and_warned_about() {
        // On time: 100 sends in the 1 s they were due in.
        let mut all = WorkerOutcome {
            last_send_ns: 990_000_000,
            ..Default::default()
        };
        let on_time = schedule(100.0, 100, 100, &all);
        assert_eq!((on_time.not_sent, on_time.warning), (0, None));
        assert_eq!(on_time.not_sent_share, 0.0);
        assert!(on_time.latency_includes_not_sent);
        assert!((on_time.achieved_per_s - 100.0).abs() < 1e-6);
        // Behind: 60 of 100 sent in the second.
        all.not_sent = 40;
        let behind = schedule(100.0, 100, 60, &all);
        assert_eq!(behind.not_sent, 40);
        assert_eq!(behind.not_sent_share, 0.4);
        assert!((behind.achieved_per_s - 60.0).abs() < 1e-6);
        let w = behind.warning.unwrap();
        assert!(
            w.contains("40 of 100 due requests (40%) not sent") && w.contains("generator behind"),
            "{w}"
        );
        // All sent, but over twice the span they were due in.
        all.not_sent = 0;
        all.last_send_ns = 1_990_000_000;
        let late = schedule(100.0, 100, 100, &all);
        assert_eq!(late.not_sent, 0);
        assert!((late.achieved_per_s - 50.0).abs() < 1e-6);
        let w = late.warning.unwrap();
        assert!(
            w.contains("achieved 50 req/s") && w.contains("every due request was sent"),
            "{w}"
        );
    }

    #[test]
    fn a_single_request_not_sent_is_warned_about_with_its_share() {
        // 99 of 100 sent on time: the achieved rate is within 5% of the
        // target, yet the one request never sent is the latest due.
        let all = WorkerOutcome {
            last_send_ns: 980_000_000,
            not_sent: 1,
            ..Default::default()
        };
        let one = schedule(100.0, 100, 99, &all);
        assert!(one.achieved_per_s >= 95.0, "{one:?}");
        assert_eq!((one.not_sent, one.not_sent_share), (1, 0.01));
        let w = one.warning.expect("a warning at one request not sent");
        assert!(
            w.contains("1 of 100 due requests (1.0%) not sent")
                && w.contains("percentiles count each at its wait"),
            "{w}"
        );
        // One in a million still shows as a share, not as 0%.
        let all = WorkerOutcome {
            last_send_ns: 999_998_000,
            not_sent: 1,
            ..Default::default()
        };
        let w = schedule(1e6, 1_000_000, 999_999, &all).warning.unwrap();
        assert!(w.contains("(0.00010%) not sent"), "{w}");
    }

    /// A level's state as its workers leave it: `rate` req/s for
    /// `duration_ms`, started 2 s ago (so its time is up), requests up to
    /// `next` taken.
    fn shared_at(rate: f64, duration_ms: u64, next: u64) -> Shared {
        let p = plan(Some(rate), Some(duration_ms), None);
        Shared {
            due_total: due_total(&p),
            plan: p,
            next: AtomicU64::new(next),
            started: Instant::now()
                .checked_sub(Duration::from_secs(2))
                .expect("the clock has run 2 s"),
            started_unix_ns: 0,
            one_server: true,
            done: AtomicU64::new(0),
            refused: Mutex::new(Vec::new()),
            failed: AtomicU64::new(0),
            stopped_early: Mutex::new(None),
        }
    }

    #[test]
    fn requests_never_sent_wait_in_the_histogram_until_the_levels_end() {
        // 100 requests due at 100 req/s over 1 s, request i at i * 10 ms.
        // Requests 0..57 were sent; a worker took 57 when the time was up;
        // two workers took 58 and 59 before the time was up (and sent
        // them); one more took 60 too late; nobody took 61..100.
        let shared = shared_at(100.0, 1000, 57);
        assert_eq!(shared.take(), None);
        shared.next.store(60, Ordering::Relaxed);
        assert_eq!(shared.take(), None);
        let mut all = WorkerOutcome {
            last_send_ns: 590_000_000,
            ..Default::default()
        };
        for _ in 0..59 {
            all.latencies.record(1_000_000);
        }
        // The level ended 1.25 s after its start.
        shared.record_unsent(&mut all, Duration::from_millis(1250));
        assert_eq!(all.not_sent, 41);
        // Each unsent request waited from its due time to the end: 57
        // 680 ms, 60 650 ms, ... 99 260 ms; the sent ones 1 ms each.
        let mut expected = Latencies::new();
        for _ in 0..59 {
            expected.record(1_000_000);
        }
        for i in std::iter::once(57).chain(60..100) {
            expected.record((1250 - 10 * i) * 1_000_000);
        }
        let got = all.latencies.summary();
        assert_eq!(got, expected.summary());
        assert_eq!(got.count, 59 + 41);
        let near = |v: u64, ms: u64| v.abs_diff(ms * 1_000_000) <= ms * 1_000;
        assert!(near(got.max_ns, 680), "{got:?}");
        // The median is the 50th of 100: the slowest 41 are the unsent,
        // so it is one of the sent requests; the 90th percentile is the
        // 90th value, the 31st fastest unsent: request 69's 560 ms.
        assert!(near(got.p50_ns, 1), "{got:?}");
        assert!(near(got.p90_ns, 560), "{got:?}");
        // The send lag and service time, of sent requests only, are
        // untouched; the schedule counts and warns.
        assert_eq!((all.lag.count(), all.service.count()), (0, 0));
        let stats = schedule(100.0, 100, 59, &all);
        assert_eq!((stats.due, stats.sent, stats.not_sent), (100, 59, 41));
        assert_eq!(stats.not_sent_share, 0.41);
        assert!(stats.latency_includes_not_sent);
        let w = stats.warning.unwrap();
        assert!(w.contains("41 of 100 due requests (41%) not sent"), "{w}");
    }

    #[test]
    fn a_schedule_fully_sent_adds_nothing_to_the_histogram() {
        // All 100 taken and sent (taking on past the schedule's end is
        // refused by the count, not by the time).
        let shared = shared_at(100.0, 1000, 100);
        let mut all = WorkerOutcome::default();
        shared.record_unsent(&mut all, Duration::from_millis(1003));
        assert_eq!((all.not_sent, all.latencies.count()), (0, 0));
        // Closed loop: nothing is due, nothing is counted.
        let mut closed = shared_at(100.0, 1000, 3);
        closed.plan.rate = None;
        closed.due_total = None;
        assert_eq!(closed.take(), None);
        closed.record_unsent(&mut all, Duration::from_millis(1003));
        assert_eq!((all.not_sent, all.latencies.count()), (0, 0));
    }

    #[test]
    fn a_connection_is_reused_only_when_the_server_keeps_it() {
        use hyper::Version;
        let headers = |v: &str| {
            let mut h = hyper::HeaderMap::new();
            if !v.is_empty() {
                h.insert(header::CONNECTION, HeaderValue::from_str(v).unwrap());
            }
            h
        };
        assert!(keeps_alive(Version::HTTP_11, &headers("")));
        assert!(!keeps_alive(Version::HTTP_11, &headers("close")));
        assert!(!keeps_alive(Version::HTTP_11, &headers("Upgrade, Close")));
        assert!(!keeps_alive(Version::HTTP_10, &headers("")));
        assert!(keeps_alive(Version::HTTP_10, &headers("Keep-Alive")));
    }

    #[test]
    fn a_due_time_too_far_off_does_not_panic() {
        let shared = Shared {
            plan: plan(Some(1e-300), Some(1000), None),
            next: AtomicU64::new(0),
            started: Instant::now(),
            started_unix_ns: 0,
            one_server: true,
            done: AtomicU64::new(0),
            due_total: None,
            refused: Mutex::new(Vec::new()),
            failed: AtomicU64::new(0),
            stopped_early: Mutex::new(None),
        };
        let due = shared.due(u64::MAX, 1e-300);
        assert!(due <= shared.started + Duration::from_secs(1));
    }

    #[test]
    fn urls() {
        let u = parse_url("http://127.0.0.1:8080/blobs/42").unwrap();
        assert_eq!(
            (u.authority.as_str(), u.path.as_str(), u.key),
            ("127.0.0.1:8080", "/blobs/42", Some(42))
        );
        let u = parse_url("http://example/x.bin?a=1").unwrap();
        assert_eq!(
            (u.authority.as_str(), u.path.as_str(), u.key),
            ("example:80", "/x.bin?a=1", None)
        );
        assert!(parse_url("https://h/x").is_err());
        for bad in [
            "http://h:99999/x",
            "http://h:0/x",
            "http://h:/x",
            "http://u@h/x",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_url("http://[::1]:81/x").unwrap().authority,
            "[::1]:81"
        );
        assert_eq!(parse_url("http://[::1]/x").unwrap().authority, "[::1]:80");
        assert!(parse_url("not a url").is_err());
    }
}
