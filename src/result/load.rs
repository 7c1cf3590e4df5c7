//! The `load` result's own tables, and the per-level record both `load` and
//! `suite http` store: what one concurrency level measured against one
//! server (requests, bytes, latency, errors by kind).

use serde::{Deserialize, Serialize};

use super::faults::{FailureClass, FailureCount, Failures, closing_line};
use crate::measure::latency::{EncodedHistogram, LatencySummary};

/// The order in which a load run visits its URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// A pseudo-random URL per request (per-connection generator).
    Random,
    /// The URLs in their file order, round and round.
    Sequential,
}

/// Failed requests of one level, counted by the way they failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Errors {
    /// The TCP connection (or the HTTP handshake) could not be made.
    pub connect: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// Non-2xx responses.
    pub status: u64,
    /// Body shorter or longer than Content-Length (or than the dataset says).
    pub length: u64,
    /// --verify: bytes differ from the dataset's.
    pub content: u64,
    /// Connection reset or closed mid-response, protocol errors.
    pub io: u64,
    /// `status` by code: (code, responses), in code order (absent in
    /// results written before codes were kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub status_codes: Vec<(u16, u64)>,
}

impl Errors {
    /// Counts one response of status `code` among the `status` ones (the
    /// caller counts the failure itself).
    pub fn count_status(&mut self, code: u16) {
        self.add_status(code, 1);
    }

    fn add_status(&mut self, code: u16, n: u64) {
        match self.status_codes.binary_search_by_key(&code, |&(c, _)| c) {
            Ok(i) => self.status_codes[i].1 += n,
            Err(i) => self.status_codes.insert(i, (code, n)),
        }
    }

    /// The failed requests by kind in words, e.g. "connect 3, timeout 1,
    /// status 2 (503 x2)"; empty when none failed.
    pub fn describe(&self) -> String {
        let codes: Vec<String> = self
            .status_codes
            .iter()
            .map(|(code, n)| format!("{code} x{n}"))
            .collect();
        let status = if codes.is_empty() {
            format!("status {}", self.status)
        } else {
            format!("status {} ({})", self.status, codes.join(", "))
        };
        [
            (format!("connect {}", self.connect), self.connect),
            (format!("timeout {}", self.timeout), self.timeout),
            (status, self.status),
            (format!("length {}", self.length), self.length),
            (format!("content {}", self.content), self.content),
            (format!("io {}", self.io), self.io),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(words, _)| words)
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// The failures as classes (docs/METHODS.md, "How blobbench measures"): connect and io are
    /// connection failures, each status code its own (429 throttled),
    /// length and content wrong bytes.
    pub fn as_failures(&self) -> Failures {
        let mut f = Failures::default();
        let mut put = |class: FailureClass, n: u64, example: &str| {
            if n > 0 {
                f.classes.push(FailureCount {
                    class,
                    count: n,
                    example: example.into(),
                });
            }
        };
        put(
            FailureClass::Timeout,
            self.timeout,
            "no complete response within --timeout",
        );
        put(
            FailureClass::Connection,
            self.connect + self.io,
            "connection refused, reset or closed",
        );
        let coded: u64 = self.status_codes.iter().map(|(_, n)| n).sum();
        for &(code, n) in &self.status_codes {
            let class = match code {
                429 => FailureClass::Throttled,
                404 => FailureClass::NotFound,
                _ => FailureClass::ServerStatus { code },
            };
            put(class, n, &format!("HTTP status {code}"));
        }
        put(
            FailureClass::Other,
            self.status.saturating_sub(coded),
            "a non-2xx status (code not kept)",
        );
        put(
            FailureClass::WrongBytes,
            self.length + self.content,
            "a body of the wrong length or bytes",
        );
        f
    }
    /// Every failed request, whatever the kind.
    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.status + self.length + self.content + self.io
    }

    /// Adds another worker's counts to these.
    pub fn add(&mut self, other: &Errors) {
        for &(code, n) in &other.status_codes {
            self.add_status(code, n);
        }
        self.connect += other.connect;
        self.timeout += other.timeout;
        self.status += other.status;
        self.length += other.length;
        self.content += other.content;
        self.io += other.io;
    }
}

/// What one load level measured: one row of the `load` and `suite http`
/// tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelResult {
    /// Connections kept open at once.
    pub concurrency: usize,
    /// Open loop: the requests per second asked for (null: closed loop).
    pub rate: Option<f64>,
    /// Requests answered or failed.
    pub requests: u64,
    /// Requests answered in full with a 2xx status.
    pub ok: u64,
    /// Body bytes of the successful requests.
    pub bytes: u64,
    /// Wall time of the level (of a merge: from the first process's start
    /// to the last one's end, the span `requests` were made in).
    pub elapsed_ns: u64,
    /// Successful requests per second of wall time (of a merge: completed
    /// within the common interval, per second of it; see
    /// [`LevelMerge::ok_per_s_within_common`]).
    pub requests_per_s: f64,
    /// Body megabytes (10^6) per second of wall time.
    pub mb_per_s: f64,
    /// Response times of the successful requests (closed loop: from the
    /// send). Open loop: from each request's intended start, so the
    /// generator's lateness is included when it falls behind; and, as wrk2
    /// counts them, every request that fell due but was never sent is in it
    /// too, at the time it waited, from its intended start to the level's
    /// end (see [`OpenLoopStats::latency_includes_not_sent`]): `count` is
    /// `ok` + `not_sent` there.
    pub latency: LatencySummary,
    /// Failed requests by kind.
    pub errors: Errors,
    /// Open loop only: how well the generator kept its schedule, and the
    /// service time beside the response time of `latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopStats>,
    /// When each failed request failed, in time order, so that bursts show
    /// (the first [`ERROR_EVENTS_KEPT`] of the level; `errors` counts all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_events: Vec<ErrorEvent>,
    /// Failed requests beyond [`ERROR_EVENTS_KEPT`] whose time was not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub error_events_dropped: u64,
    /// The whole histogram `latency` summarizes, losslessly, so the levels
    /// of several load processes merge into exact percentiles of the union
    /// (absent from results written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<EncodedHistogram>,
    /// When the level ran by the system clock, so that load processes on
    /// machines with synchronized clocks can be lined up (absent before it
    /// was kept, and in `suite http`, whose rounds are not one span).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<WallSpan>,
    /// Successful requests and body bytes per fixed bucket of time from the
    /// level's start: throughput over any part of the level, to a bucket
    /// (absent where `wall` is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// Why the level stopped before its end (`--max-errors`), or None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Requests still in flight a second after the level's -t, cut there
    /// so the level ends on time: neither answered nor failed, and in no
    /// figure (absent when none was, and before they were counted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_at_end: u64,
    /// The server's clock against this machine's, from the responses'
    /// `Date` headers, when the URLs name one server that sends them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<ClockOffset>,
    /// When `--start-at` gave the level its start (system clock, ns since
    /// the Unix epoch); its `wall` says when it did start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_unix_ns: Option<u64>,
}

/// Bounds on how far a server's clock is ahead of this machine's (server
/// minus local, ns). A response's `Date` (whole seconds) was stamped
/// between its request's send and its response's arrival, so each one
/// bounds the offset from both sides; responses either side of the
/// server's second boundaries narrow the bounds to about a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// The offset is at least this.
    pub low_ns: i64,
    /// And less than this.
    pub high_ns: i64,
}

impl ClockOffset {
    /// The middle of the bounds: the best estimate.
    pub fn mid_ns(&self) -> i64 {
        self.low_ns + (self.high_ns - self.low_ns) / 2
    }

    /// Half the bounds' width: the estimate's uncertainty.
    pub fn half_width_ns(&self) -> i64 {
        (self.high_ns - self.low_ns) / 2
    }
}

/// A merge places the processes' spans on the server's clock when each
/// knows its offset to it within this much (±).
pub const ALIGN_WITHIN_NS: i64 = 50_000_000;

/// A span of the system clock (nanoseconds since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallSpan {
    /// When the level started.
    pub start_unix_ns: u64,
    /// When it ended (its last response read).
    pub end_unix_ns: u64,
}

impl WallSpan {
    /// Its length, ns.
    pub fn len_ns(&self) -> u64 {
        self.end_unix_ns.saturating_sub(self.start_unix_ns)
    }

    /// The same span on a clock `offset_ns` ahead.
    pub fn shifted(&self, offset_ns: i64) -> WallSpan {
        WallSpan {
            start_unix_ns: self.start_unix_ns.saturating_add_signed(offset_ns),
            end_unix_ns: self.end_unix_ns.saturating_add_signed(offset_ns),
        }
    }
}

/// The width of a [`Timeline`]'s buckets `load` writes: fine enough that
/// the edges of a common interval cost little, coarse enough that an hour
/// is 36,000 numbers.
pub const TIMELINE_BUCKET_NS: u64 = 100_000_000;

/// What completed when: bucket i counts the successful requests whose
/// response was read in full between i and i+1 bucket widths after the
/// level's start (the last bucket ends with the level).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// Width of every bucket, ns.
    pub bucket_ns: u64,
    /// Successful requests completed in each bucket.
    pub ok: Vec<u64>,
    /// Their body bytes.
    pub bytes: Vec<u64>,
}

impl Timeline {
    /// An empty timeline of buckets `bucket_ns` wide.
    pub fn new(bucket_ns: u64) -> Self {
        Timeline {
            bucket_ns: bucket_ns.max(1),
            ok: Vec::new(),
            bytes: Vec::new(),
        }
    }

    /// Counts one successful request of `bytes` completed `at_ns` after the
    /// level's start.
    pub fn record(&mut self, at_ns: u64, bytes: u64) {
        let i = (at_ns / self.bucket_ns) as usize;
        if self.ok.len() <= i {
            self.ok.resize(i + 1, 0);
            self.bytes.resize(i + 1, 0);
        }
        self.ok[i] += 1;
        self.bytes[i] += bytes;
    }

    /// Adds another worker's counts (the same bucket width and start).
    pub fn add(&mut self, other: &Timeline) {
        if self.ok.len() < other.ok.len() {
            self.ok.resize(other.ok.len(), 0);
            self.bytes.resize(other.ok.len(), 0);
        }
        for (i, (&n, &b)) in other.ok.iter().zip(&other.bytes).enumerate() {
            self.ok[i] += n;
            self.bytes[i] += b;
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// At most this many error events are kept per level: enough to see every
/// burst of a run that mostly works, bounded when every request fails.
pub const ERROR_EVENTS_KEPT: usize = 10_000;

/// How a request failed (the kinds [`Errors`] counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The TCP connection (or the HTTP handshake) could not be made.
    Connect,
    /// No complete response within the timeout.
    Timeout,
    /// A non-2xx response.
    Status,
    /// A body of the wrong length.
    Length,
    /// --verify: bytes differ from the dataset's.
    Content,
    /// Connection reset or closed mid-response, protocol errors.
    Io,
}

/// One failed request: when it failed, from the start of its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// Time of the failure from the start of the level, ns.
    pub at_ns: u64,
    /// How it failed.
    pub kind: ErrorKind,
}

impl Errors {
    /// Counts one failure of `kind`.
    pub fn count(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Connect => self.connect += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Status => self.status += 1,
            ErrorKind::Length => self.length += 1,
            ErrorKind::Content => self.content += 1,
            ErrorKind::Io => self.io += 1,
        }
    }
}

/// The schedule of an open-loop level as kept (wrk2, pgbench -R): every
/// request has an intended start; what the generator managed and how late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopStats {
    /// Requests per second asked for.
    pub target_per_s: f64,
    /// Requests whose intended start fell within the level.
    pub due: u64,
    /// Requests the generator sent (answered, failed or timed out,
    /// including those whose connection could not be made).
    pub sent: u64,
    /// Requests that fell due but were never sent before the level ended:
    /// the generator was behind (every connection busy). due = sent + not_sent.
    pub not_sent: u64,
    /// `not_sent` / `due`: the share of the schedule never sent, the latest
    /// due and the slowest (0 in results written before it was kept: see
    /// [`OpenLoopStats::not_sent_share`]).
    #[serde(default)]
    pub not_sent_share: f64,
    /// Whether the level's `latency` (and its histogram) counts the
    /// requests not sent, each at its wait from its intended start to the
    /// level's end, as wrk2 does (false in results written before they
    /// were: there the percentiles cover the sent requests alone).
    #[serde(default)]
    pub latency_includes_not_sent: bool,
    /// Requests sent per second over the span they were due in (or over
    /// the span it took to send them, when that was longer).
    pub achieved_per_s: f64,
    /// Actual send time minus intended start of every sent request: the
    /// generator's own lateness, kept out of `service_time`.
    pub send_lag: LatencySummary,
    /// Actual send to the last byte of the response, of the successful
    /// requests (the headline `latency` counts from the intended start).
    pub service_time: LatencySummary,
    /// The histogram of `send_lag`, mergeable (absent from older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_histogram: Option<EncodedHistogram>,
    /// The histogram of `service_time`, mergeable (absent from older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time_histogram: Option<EncodedHistogram>,
    /// Set when any due request was not sent, or when the achieved rate is
    /// below 95% of the target: what fell short (with the share not sent)
    /// and the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl OpenLoopStats {
    /// The share of the due requests never sent (computed from the counts,
    /// so results written before `not_sent_share` was kept have it too).
    pub fn not_sent_share(&self) -> f64 {
        if self.due == 0 {
            0.0
        } else {
            self.not_sent as f64 / self.due as f64
        }
    }

    /// The requests not sent in words, e.g. "40 of 100 due requests (40%)
    /// not sent".
    pub fn not_sent_text(&self) -> String {
        format!(
            "{} of {} due requests ({}) not sent",
            self.not_sent,
            self.due,
            percent(self.not_sent_share())
        )
    }
}

/// A share as a percentage with two significant digits however small
/// (one unsent request in a million is 0.00010%, not 0.0%).
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if !p.is_finite() || p <= 0.0 {
        return "0%".into();
    }
    if p >= 10.0 {
        return format!("{p:.0}%");
    }
    let decimals = (1 - p.log10().floor() as i32).clamp(1, 12) as usize;
    format!("{p:.decimals$}%")
}

/// The kind-specific part of a `load` result: one server, every level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadTables {
    /// One record per concurrency level, in the order they ran.
    pub levels: Vec<LevelResult>,
    /// How many URLs the load visited.
    pub urls: usize,
    /// The order they were visited in.
    pub order: Order,
    /// Open loop: the requests per second asked for (null: closed loop).
    pub rate: Option<f64>,
    /// A digest of the URL list (sorted, so the order given does not
    /// matter): load processes merge only when they asked for the same URLs
    /// (absent from older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_digest: Option<String>,
    /// The servers (HOST:PORT) the URLs name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<String>,
    /// Set on the result of `blobbench merge`: which load processes it
    /// combines and over which common interval each level's throughput is
    /// counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeRecord>,
}

/// How a merged load result was made from several load processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// The load results merged, in the order given.
    pub sources: Vec<MergeSource>,
    /// Per level (in the order of `levels`): the common interval and how
    /// each process's run lay around it.
    pub levels: Vec<LevelMerge>,
}

/// One load process whose result was merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeSource {
    /// The result file as named to `merge`.
    pub file: String,
    /// The machine it ran on, as its result records it.
    pub hostname: String,
    /// When that load started (RFC 3339).
    pub started_at: String,
}

impl LoadTables {
    /// The closing line when requests failed ("12 of 40,000 requests
    /// failed: 10 timeout, 2 server error 503"), or None.
    pub fn failures_line(&self) -> Option<String> {
        levels_failures_line(&self.levels)
    }
}

/// The closing line over `levels` when requests failed, or None.
pub fn levels_failures_line(levels: &[LevelResult]) -> Option<String> {
    let mut errors = Errors::default();
    for l in levels {
        errors.add(&l.errors);
    }
    let failures = errors.as_failures();
    if failures.is_empty() {
        return None;
    }
    let requests = levels.iter().map(|l| l.requests).sum();
    Some(closing_line(&failures, requests, "requests"))
}

/// One level of a merge: the interval every process was loading the
/// server, and what completed in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelMerge {
    /// Connections of each process (the merged level's `concurrency` is
    /// their sum).
    pub concurrency_each: usize,
    /// The common interval: from the latest start to the earliest end.
    pub common: WallSpan,
    /// Successful requests completed within it, all processes: whole
    /// buckets inside it plus the share of each edge bucket that overlaps
    /// it (requests assumed spread evenly within a bucket).
    pub ok_within: f64,
    /// Bounds on that count: the buckets wholly inside, and those touching
    /// the interval at all. The merged requests/s is `ok_within` over the
    /// interval's length; the truth lies within these bounds over it.
    pub ok_within_bounds: [u64; 2],
    /// Body bytes completed within it (counted as `ok_within`).
    pub bytes_within: f64,
    /// `ok_within` over the common interval's length: the merged level's
    /// `requests_per_s`. (The merged level's `requests` and `elapsed_ns`
    /// cover every process's whole run, first start to last end; their
    /// quotient is a rate over that longer span.) Absent in merges written
    /// before it was named.
    #[serde(default)]
    pub ok_per_s_within_common: f64,
    /// Each process in the order of `sources`.
    pub processes: Vec<ProcessSpan>,
    /// Whether the spans (and `common`) are on the server's clock: every
    /// process measured its offset to the one server they all loaded (see
    /// [`ClockOffset`]) within [`ALIGN_WITHIN_NS`]; else each stays on its
    /// machine's own clock.
    #[serde(default)]
    pub on_server_clock: bool,
}

/// One process's level against the common interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSpan {
    /// When it ran.
    pub wall: WallSpan,
    /// Of its run, the time outside the common interval, ns.
    pub outside_ns: u64,
    /// Its successful requests in all.
    pub ok: u64,
    /// Of them, completed within the common interval (as `ok_within`).
    pub ok_within: f64,
    /// Its clock against the server's, as its load measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<ClockOffset>,
    /// How far its span was moved to place it on the server's clock (0
    /// when the spans stayed on each machine's own clock).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub shifted_ns: i64,
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_loop_stats_of_older_results_still_load() {
        let none =
            serde_json::to_value(crate::measure::latency::Latencies::new().summary()).unwrap();
        let old = serde_json::json!({
            "target_per_s": 100.0, "due": 100, "sent": 97, "not_sent": 3,
            "achieved_per_s": 97.0, "send_lag": none, "service_time": none,
        });
        let o: OpenLoopStats = serde_json::from_value(old).unwrap();
        assert_eq!(
            (o.not_sent_share, o.latency_includes_not_sent),
            (0.0, false)
        );
        assert_eq!(o.not_sent_share(), 0.03);
        assert_eq!(o.not_sent_text(), "3 of 100 due requests (3.0%) not sent");
    }

    #[test]
    fn shares_keep_two_significant_digits() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.4), "40%");
        assert_eq!(percent(0.05), "5.0%");
        assert_eq!(percent(0.01), "1.0%");
        assert_eq!(percent(0.0012), "0.12%");
        assert_eq!(percent(1e-6), "0.00010%");
    }

    #[test]
    fn a_timeline_counts_each_completion_in_its_bucket_and_adds_up() {
        let mut a = Timeline::new(TIMELINE_BUCKET_NS);
        a.record(0, 10);
        a.record(99_999_999, 20);
        a.record(250_000_000, 5);
        assert_eq!(
            (a.ok.clone(), a.bytes.clone()),
            (vec![2, 0, 1], vec![30, 0, 5])
        );
        let mut b = Timeline::new(TIMELINE_BUCKET_NS);
        b.record(100_000_000, 1);
        b.add(&a);
        assert_eq!((b.ok, b.bytes), (vec![2, 1, 1], vec![30, 1, 5]));
    }
}
