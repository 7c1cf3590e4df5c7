//! The `load` result's own tables, and the per-level record both `load` and
//! `suite http` store: what one concurrency level measured against one
//! server (requests, bytes, latency, errors by kind).

use serde::{Deserialize, Serialize};

use crate::measure::latency::LatencySummary;

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
}

impl Errors {
    /// Every failed request, whatever the kind.
    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.status + self.length + self.content + self.io
    }

    /// Adds another worker's counts to these.
    pub fn add(&mut self, other: &Errors) {
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
    /// Wall time of the level.
    pub elapsed_ns: u64,
    /// Successful requests per second of wall time.
    pub requests_per_s: f64,
    /// Body megabytes (10^6) per second of wall time.
    pub mb_per_s: f64,
    /// Response times of the successful requests.
    pub latency: LatencySummary,
    /// Failed requests by kind.
    pub errors: Errors,
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
}
