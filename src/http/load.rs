//! `blobbench load`: an HTTP load generator in the spirit of siege, wrk and
//! oha. Closed loop: `-c` keep-alive connections, each sending its next
//! request when the last response has been read in full. Open loop
//! (`--rate`): requests are due at a fixed rate and each latency is counted
//! from the time the request was due, not from when a busy connection got
//! round to sending it (coordinated omission corrected, as wrk2 and oha do).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
// The records a level produces are result types; re-exported so callers of
// the load generator find them here.
pub use crate::result::load::{Errors, LevelResult, Order};

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
    let authority = if authority.port().is_some() {
        authority.to_string()
    } else {
        format!("{authority}:80")
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
}

#[derive(Default)]
struct WorkerOutcome {
    latencies: Latencies,
    ok: u64,
    bytes: u64,
    errors: Errors,
}

enum Failure {
    Connect,
    Status,
    Length,
    Content,
    Io,
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(authority: &str) -> std::result::Result<Sender, Failure> {
    let stream = TcpStream::connect(authority)
        .await
        .map_err(|_| Failure::Connect)?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| Failure::Connect)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Sends one request on `sender` and reads the whole response body.
async fn one_request(
    sender: &mut Sender,
    url: &Url,
    verify: Option<&DatasetSpec>,
    scratch: &mut Vec<u8>,
    body_buf: &mut Vec<u8>,
) -> std::result::Result<u64, Failure> {
    let req = Request::get(url.path.as_str())
        .header(
            header::HOST,
            HeaderValue::from_str(&url.authority).map_err(|_| Failure::Io)?,
        )
        .body(Empty::<Bytes>::new())
        .map_err(|_| Failure::Io)?;
    sender.ready().await.map_err(|_| Failure::Io)?;
    let resp = sender.send_request(req).await.map_err(|_| Failure::Io)?;
    let ok_status = resp.status().is_success();
    let announced: Option<u64> = resp
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let mut body = resp.into_body();
    let mut n = 0u64;
    body_buf.clear();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Failure::Io)?;
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
        if spec.verify(key, body_buf, None, scratch).is_err() {
            return Err(Failure::Content);
        }
    }
    Ok(n)
}

struct Shared {
    plan: LoadPlan,
    next: AtomicU64,
    started: Instant,
    done: AtomicU64,
}

impl Shared {
    /// The index of the next request, or None when the run is over.
    fn take(&self) -> Option<u64> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.plan.requests.is_some_and(|n| i >= n) {
            return None;
        }
        if self
            .plan
            .duration
            .is_some_and(|d| self.started.elapsed() >= d)
        {
            return None;
        }
        Some(i)
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

async fn worker(shared: Arc<Shared>, id: u64) -> WorkerOutcome {
    let mut out = WorkerOutcome::default();
    let mut sender: Option<Sender> = None;
    let mut rng = 0x9E3779B97F4A7C15u64 ^ (id + 1).wrapping_mul(0xBF58476D1CE4E5B9);
    let mut scratch = Vec::new();
    let mut body_buf = Vec::new();
    let interval = shared.plan.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    while let Some(i) = shared.take() {
        let due = due_time(&shared, i, interval).await;
        let url = shared.url(i, &mut rng).clone();
        if sender.is_none() {
            match connect(&url.authority).await {
                Ok(s) => sender = Some(s),
                Err(_) => {
                    out.errors.connect += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let s = sender.as_mut().expect("connected");
        let result = tokio::time::timeout(
            shared.plan.timeout,
            one_request(
                s,
                &url,
                shared.plan.verify.as_ref(),
                &mut scratch,
                &mut body_buf,
            ),
        )
        .await;
        let elapsed = due.elapsed().as_nanos() as u64;
        shared.done.fetch_add(1, Ordering::Relaxed);
        if !out.record(result, elapsed) {
            sender = None; // the connection's state is unknown: start afresh
        }
    }
    out
}

/// When request `i` counts from. Open loop: it is due at start + i / rate,
/// whoever sends it, and the worker waits until then; closed loop: now.
async fn due_time(shared: &Shared, i: u64, interval: Option<Duration>) -> Instant {
    match interval {
        Some(iv) => {
            let due = shared.started + iv.mul_f64(i as f64);
            tokio::time::sleep_until(due.into()).await;
            due
        }
        None => Instant::now(),
    }
}

type Outcome = std::result::Result<std::result::Result<u64, Failure>, tokio::time::error::Elapsed>;

impl WorkerOutcome {
    /// Counts one request's outcome; false when its connection must not be
    /// used again.
    fn record(&mut self, result: Outcome, elapsed_ns: u64) -> bool {
        match result {
            Ok(Ok(n)) => {
                self.ok += 1;
                self.bytes += n;
                self.latencies.record(elapsed_ns);
                true
            }
            Ok(Err(f)) => {
                match f {
                    Failure::Connect => self.errors.connect += 1,
                    Failure::Status => self.errors.status += 1,
                    Failure::Length => self.errors.length += 1,
                    Failure::Content => self.errors.content += 1,
                    Failure::Io => self.errors.io += 1,
                }
                !matches!(f, Failure::Io | Failure::Length)
            }
            Err(_) => {
                self.errors.timeout += 1;
                false
            }
        }
    }
}

/// Runs one load level and returns its figures. Progress goes to the
/// current stage of `progress` in thousandths of the level (by time, or by
/// requests under `-n`), with the requests so far as its message; the
/// caller starts and finishes the stage.
pub async fn run_level(plan: LoadPlan, progress: &dyn Progress) -> LevelResult {
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        next: AtomicU64::new(0),
        started: Instant::now(),
        done: AtomicU64::new(0),
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
    summarize(&plan, shared.started.elapsed(), outcomes)
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

fn summarize(plan: &LoadPlan, elapsed: Duration, outcomes: Vec<WorkerOutcome>) -> LevelResult {
    let mut all = Latencies::new();
    let mut errors = Errors::default();
    let (mut ok, mut bytes) = (0, 0);
    for o in outcomes {
        all.merge(&o.latencies);
        ok += o.ok;
        bytes += o.bytes;
        errors.add(&o.errors);
    }
    let secs = elapsed.as_secs_f64().max(1e-9);
    LevelResult {
        concurrency: plan.concurrency,
        rate: plan.rate,
        requests: ok + errors.total(),
        ok,
        bytes,
        elapsed_ns: elapsed.as_nanos() as u64,
        requests_per_s: ok as f64 / secs,
        mb_per_s: bytes as f64 / 1e6 / secs,
        latency: all.summary(),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(parse_url("not a url").is_err());
    }
}
