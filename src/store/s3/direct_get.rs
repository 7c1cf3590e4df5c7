//! Whole-object GETs over plain HTTP, sent on a blocking socket of the
//! reading thread's own and signed here (AWS Signature Version 4) instead
//! of by object_store.
//!
//! A 16-thread reader of 1 MB objects spent a fifth of its CPU inside
//! object_store's request path before a byte of body arrived: a URL
//! parsed three times per request (once through IDNA), a signer that
//! formats the date with chrono and derives the signing key with four
//! HMACs each time, reqwest's redirect, proxy and timeout layers, a
//! connection pool, and three timers a request. With those gone, an
//! eighth of what was left was the async runtime's own: waking the task,
//! polling the connection, arming and disarming timers, an epoll wait
//! before each read. The body is what the benchmark measures; this path
//! leaves the rest out. The thread writes the signed head in one piece,
//! blocks in `read` on its own keep-alive socket, parses the answer's
//! head with httparse and hands the body to the check straight from the
//! buffer the socket filled. The signing key is derived once a day, the
//! date formatted once a second, and the request's deadline is the
//! socket's receive timeout.
//!
//! Everything else (HEAD, PUT, DELETE, ranged GETs, listings, https://
//! endpoints, credentials object_store finds elsewhere, and any read on a
//! thread inside a runtime, where blocking would stall others) stays with
//! object_store. Failures come back as object_store's errors of the same
//! shape object_store gives, so one classification (`client::s3_error`)
//! names them, and the failure tests run on both paths.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant, SystemTime};

use hyper::StatusCode;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{HttpError, HttpErrorKind};
use ring::{digest, hmac};

use super::client::{CannotConnect, Deadline};
use crate::target::{S3Location, S3Waits};

type S3Result<T> = std::result::Result<T, object_store::Error>;

/// The SHA-256 of an empty body: a GET's payload hash.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The most of an error answer's body kept for its message.
const ERROR_BODY_MAX: usize = 64 * 1024;

/// Where the socket's bytes land, and the longest answer head (or
/// chunk-size line) taken. Measured with 16 readers of 1 MB objects on
/// loopback: reads of 16 to 96 KiB cost the reader least; from 128 KiB
/// on, its system time rose by a third (about 1.3 s a 10 s run) while the
/// server's fell by 1 s, at lower throughput: with larger reads the
/// kernel's receive tuning opens a wider window, and more of the server's
/// sending work then runs in the reader's context.
const READ_BUFFER: usize = 64 * 1024;

/// How far past the deadline a read may be allowed to wait before the
/// socket's receive timeout is set again (a system call): a request that
/// is not near its deadline makes none.
const TIMEOUT_SLACK: Duration = Duration::from_millis(20);

/// Whole-object GETs of one session, on one keep-alive connection.
pub(crate) struct DirectGet {
    /// `host[:port]` as the Host header (and the signature) carries it.
    host: String,
    /// Where to connect.
    address: String,
    /// `/BUCKET/PREFIX/`, percent-encoded: what a key's name follows.
    path_prefix: String,
    signer: Option<Signer>,
    waits: S3Waits,
    /// The open connection: None until the first request, and after one
    /// failed part way or the server said it closes.
    connection: Option<Connection>,
    /// Where answers are read to, kept from request to request (empty
    /// until the first).
    buffer: Vec<u8>,
}

impl DirectGet {
    /// The direct path for `location`, or None when it cannot send what
    /// object_store would: an https:// endpoint (TLS stays with reqwest),
    /// virtual-hosted requests, or credentials object_store finds itself
    /// (instance metadata, web identity) rather than keys it was given.
    pub(crate) fn new(location: &S3Location, builder: &AmazonS3Builder) -> Option<DirectGet> {
        let endpoint = location.endpoint.as_deref()?.strip_prefix("http://")?;
        let config = |key| builder.get_config_value(&key);
        let yes = |v: Option<String>| v.is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if yes(config(AmazonS3ConfigKey::VirtualHostedStyleRequest)) {
            return None;
        }
        let signer = if yes(config(AmazonS3ConfigKey::SkipSignature)) {
            None
        } else {
            Some(Signer::new(
                config(AmazonS3ConfigKey::AccessKeyId)?,
                &config(AmazonS3ConfigKey::SecretAccessKey)?,
                config(AmazonS3ConfigKey::Token),
                super::client::region(location),
            ))
        };
        let (authority, base) = match endpoint.find('/') {
            Some(at) => (&endpoint[..at], endpoint[at..].trim_end_matches('/')),
            None => (endpoint, ""),
        };
        // As a URL parser writes it (and object_store signs it): the
        // default port left out.
        let host = authority
            .strip_suffix(":80")
            .unwrap_or(authority)
            .to_string();
        let address = if host.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']')) {
            host.clone()
        } else {
            format!("{host}:80")
        };
        // The prefix's segments as object_store names them in the bucket
        // (it escapes some bytes, `%` among them, in the key itself).
        let mut path_prefix = format!("{base}/{}/", encode(&location.bucket));
        for part in object_store::path::Path::from(location.prefix.as_str()).parts() {
            path_prefix.push_str(&encode(part.as_ref()));
            path_prefix.push('/');
        }
        Some(DirectGet {
            host,
            address,
            path_prefix,
            signer,
            waits: location.waits,
            connection: None,
            buffer: Vec::new(),
        })
    }

    /// GET of the object `name` in the prefix, its body to `sink` as it
    /// arrives. Retried (as object_store would) after a lost connection or
    /// a 5xx or 429 answer, up to `retries=` times, but never once a byte
    /// has gone to `sink`; the whole ends within `timeout=`.
    pub(crate) fn get(&mut self, name: &str, sink: &mut dyn FnMut(&[u8])) -> S3Result<()> {
        let limit = self.waits.timeout();
        let deadline = Instant::now() + limit;
        let path = format!("{}{}", self.path_prefix, encode(name));
        let head = self.request_head(&path);
        if self.buffer.is_empty() {
            self.buffer = vec![0; READ_BUFFER];
        }
        let mut delivered = false;
        let mut retried = 0;
        let mut fresh_tries = 1;
        loop {
            let reused = self.connection.is_some();
            let failure = match self.attempt(&head, &path, deadline, sink, &mut delivered) {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            self.connection = None;
            if delivered || !failure.retry {
                return Err(failure.error);
            }
            // A kept-alive connection the server had closed: tried again
            // once on a new one, as a client pool does, not as a retry.
            if reused && failure.before_answer && fresh_tries > 0 {
                fresh_tries -= 1;
                continue;
            }
            if retried >= self.waits.retries {
                return Err(failure.error);
            }
            retried += 1;
            let pause = backoff(retried);
            let left = deadline.saturating_duration_since(Instant::now());
            if pause >= left {
                std::thread::sleep(left);
                return Err(Failure::late(limit).error);
            }
            std::thread::sleep(pause);
        }
    }

    /// The GET's head as it goes on the wire, signed.
    fn request_head(&mut self, path: &str) -> Vec<u8> {
        let mut head = format!("GET {path} HTTP/1.1\r\nhost: {}\r\n", self.host);
        if let Some(signer) = &mut self.signer {
            signer.sign(&self.host, path, &mut head);
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// One request and its answer: a 200's body to `sink`, any other
    /// status as a failure with the server's words.
    fn attempt(
        &mut self,
        head: &[u8],
        path: &str,
        deadline: Instant,
        sink: &mut dyn FnMut(&[u8]),
        delivered: &mut bool,
    ) -> Result<(), Failure> {
        if self.connection.is_none() {
            self.connection = Some(self.connect(deadline)?);
        }
        let connection = self.connection.as_mut().expect("just opened");
        connection
            .stream
            .write_all(head)
            .map_err(|e| Failure::io(e, true))?;
        let mut answer = Incoming {
            connection,
            buffer: &mut self.buffer,
            start: 0,
            end: 0,
            deadline,
            limit: self.waits.timeout(),
            heard: false,
        };
        let (status, framing, keep) = answer.head()?;
        let outcome = if status == StatusCode::OK {
            answer.body(framing, &mut |piece| {
                *delivered |= !piece.is_empty();
                sink(piece);
            })?;
            Ok(())
        } else {
            let mut said = Vec::new();
            answer.body(framing, &mut |piece| {
                let room = ERROR_BODY_MAX.saturating_sub(said.len());
                said.extend_from_slice(&piece[..piece.len().min(room)]);
            })?;
            Err(Failure::status(path, status, &said))
        };
        // Bytes after the answer were never asked for: not a connection
        // to go on with.
        if !keep || answer.start != answer.end {
            self.connection = None;
        }
        outcome
    }

    /// A new connection, made within `connect_timeout=` (and the
    /// request's deadline).
    fn connect(&self, deadline: Instant) -> Result<Connection, Failure> {
        let limit = self.waits.connect_timeout();
        let started = Instant::now();
        let by = deadline.min(started + limit);
        let addresses = self
            .address
            .to_socket_addrs()
            .map_err(|e| Failure::connecting(generic(CannotConnect(e))))?;
        let mut failed = io::Error::new(ErrorKind::NotFound, "the host has no address");
        for address in addresses {
            let left = by.saturating_duration_since(Instant::now());
            if left.is_zero() {
                failed = ErrorKind::TimedOut.into();
                break;
            }
            match TcpStream::connect_timeout(&address, left) {
                Ok(stream) => {
                    // A request's head leaves at once (as reqwest sets it).
                    let _ = stream.set_nodelay(true);
                    let _ = stream.set_write_timeout(Some(self.waits.timeout()));
                    return Ok(Connection {
                        stream,
                        read_timeout: None,
                    });
                }
                Err(e) => failed = e,
            }
        }
        if failed.kind() != ErrorKind::TimedOut {
            return Err(Failure::connecting(generic(CannotConnect(failed))));
        }
        if by < started + limit {
            return Err(Failure::late(self.waits.timeout()));
        }
        let deadline = Deadline {
            limit,
            connecting: true,
        };
        Err(Failure::connecting(generic(deadline)))
    }
}

/// A kept-alive connection.
struct Connection {
    stream: TcpStream,
    /// The receive timeout last set on the socket.
    read_timeout: Option<Duration>,
}

/// How an answer's body ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    /// After this many bytes.
    Length(u64),
    /// In chunks, the last one empty.
    Chunked,
    /// When the server closes the connection.
    ToEnd,
}

/// One answer as it arrives: the bytes read and not yet used are
/// `buffer[start..end]`.
struct Incoming<'a> {
    connection: &'a mut Connection,
    buffer: &'a mut [u8],
    start: usize,
    end: usize,
    deadline: Instant,
    /// The request's timeout, as a late answer's error names it.
    limit: Duration,
    /// Whether any byte of the answer has come.
    heard: bool,
}

impl Incoming<'_> {
    /// The answer's head: its status, how its body ends, and whether the
    /// connection stays open after it. Interim answers (100 Continue) are
    /// passed over.
    fn head(&mut self) -> Result<(StatusCode, Framing, bool), Failure> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut response = httparse::Response::new(&mut headers);
            let used = match response.parse(&self.buffer[self.start..self.end]) {
                Ok(httparse::Status::Complete(used)) => used,
                Ok(httparse::Status::Partial) => {
                    self.more()?;
                    continue;
                }
                Err(e) => return Err(not_http(&format!("its head ({e})"))),
            };
            let code = response.code.unwrap_or_default();
            let framing = framing(code, response.headers);
            let keep = response.version == Some(1)
                && framing != Framing::ToEnd
                && !said(response.headers, "connection", "close");
            self.start += used;
            if (100..200).contains(&code) {
                continue;
            }
            let status =
                StatusCode::from_u16(code).map_err(|_| not_http(&format!("its status {code}")))?;
            return Ok((status, framing, keep));
        }
    }

    /// The body, to `deliver` piece by piece as it arrives.
    fn body(&mut self, framing: Framing, deliver: &mut dyn FnMut(&[u8])) -> Result<(), Failure> {
        match framing {
            Framing::Length(length) => self.counted(length, deliver),
            Framing::Chunked => self.chunked(deliver),
            Framing::ToEnd => loop {
                self.hand_over(u64::MAX, deliver);
                if !self.fill()? {
                    return Ok(());
                }
            },
        }
    }

    /// `length` bytes of body.
    fn counted(&mut self, mut length: u64, deliver: &mut dyn FnMut(&[u8])) -> Result<(), Failure> {
        loop {
            length -= self.hand_over(length, deliver);
            if length == 0 {
                return Ok(());
            }
            self.more()?;
        }
    }

    /// A chunked body: a size line, that many bytes and a line end, until
    /// a chunk of size 0 and the trailer after it.
    fn chunked(&mut self, deliver: &mut dyn FnMut(&[u8])) -> Result<(), Failure> {
        loop {
            let size = match httparse::parse_chunk_size(&self.buffer[self.start..self.end]) {
                Ok(httparse::Status::Complete((used, size))) => {
                    self.start += used;
                    size
                }
                Ok(httparse::Status::Partial) => {
                    self.more()?;
                    continue;
                }
                Err(_) => return Err(not_http("a chunk's size line")),
            };
            if size > 0 {
                self.counted(size, deliver)?;
            }
            // The chunk's line end, or the trailer's lines up to an empty one.
            loop {
                let pending = &self.buffer[self.start..self.end];
                let Some(at) = pending.windows(2).position(|w| w == b"\r\n") else {
                    self.more()?;
                    continue;
                };
                self.start += at + 2;
                if at == 0 {
                    break;
                }
                if size > 0 {
                    return Err(not_http("a chunk longer than its size"));
                }
            }
            if size == 0 {
                return Ok(());
            }
        }
    }

    /// Hands up to `most` of the pending bytes to `deliver`; how many.
    fn hand_over(&mut self, most: u64, deliver: &mut dyn FnMut(&[u8])) -> u64 {
        let n = (self.end - self.start).min(usize::try_from(most).unwrap_or(usize::MAX));
        if n > 0 {
            deliver(&self.buffer[self.start..self.start + n]);
            self.start += n;
        }
        if self.start == self.end {
            // All used: the next read fills the buffer from its start.
            (self.start, self.end) = (0, 0);
        }
        n as u64
    }

    /// [`Incoming::fill`], the end of the stream a lost connection.
    fn more(&mut self) -> Result<(), Failure> {
        if self.fill()? {
            return Ok(());
        }
        let e = io::Error::new(
            ErrorKind::UnexpectedEof,
            "connection closed before the answer was complete",
        );
        Err(Failure::io(e, !self.heard))
    }

    /// Reads what has come after the pending bytes (moved to the front
    /// first when the buffer is full); false at the end of the stream.
    fn fill(&mut self) -> Result<bool, Failure> {
        if self.end == self.buffer.len() {
            if self.start == 0 {
                return Err(not_http("a line longer than 64 KiB"));
            }
            self.buffer.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        loop {
            self.bound_wait()?;
            match self.connection.stream.read(&mut self.buffer[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    self.heard = true;
                    return Ok(true);
                }
                // Interrupted, or a receive timeout set before this
                // request that ended short of its deadline: read on.
                Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
                Err(e) if e.kind() == ErrorKind::TimedOut => {}
                Err(e) => return Err(Failure::io(e, !self.heard)),
            }
        }
    }

    /// Sets the socket's receive timeout so the next read waits no later
    /// than the deadline (within [`TIMEOUT_SLACK`]); a late answer once
    /// the deadline has passed.
    fn bound_wait(&mut self) -> Result<(), Failure> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::late(self.limit));
        }
        let set = &mut self.connection.read_timeout;
        if set.is_none_or(|t| t > left + TIMEOUT_SLACK) {
            self.connection
                .stream
                .set_read_timeout(Some(left))
                .map_err(|e| Failure::io(e, !self.heard))?;
            *set = Some(left);
        }
        Ok(())
    }
}

/// How the body of an answer with status `code` and `headers` ends.
fn framing(code: u16, headers: &[httparse::Header]) -> Framing {
    if (100..200).contains(&code) || code == 204 || code == 304 {
        return Framing::Length(0);
    }
    if said(headers, "transfer-encoding", "chunked") {
        return Framing::Chunked;
    }
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
        .map_or(Framing::ToEnd, Framing::Length)
}

/// Whether a header `name` lists `word` among its comma-separated values.
fn said(headers: &[httparse::Header], name: &str, word: &str) -> bool {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(name))
        .flat_map(|h| h.value.split(|&b| b == b','))
        .any(|v| v.trim_ascii().eq_ignore_ascii_case(word.as_bytes()))
}

/// An answer that is not HTTP as this path reads it.
fn not_http(what: &str) -> Failure {
    let e = io::Error::new(
        ErrorKind::InvalidData,
        format!("the server's answer is not HTTP/1.1 as expected: {what}"),
    );
    Failure::fatal(generic(HttpError::new(HttpErrorKind::Decode, e)))
}

/// A failed attempt: the error to give and whether to try again.
struct Failure {
    error: object_store::Error,
    retry: bool,
    /// Whether it failed before any answer came (a kept-alive connection
    /// the server closed fails this way).
    before_answer: bool,
}

impl Failure {
    fn fatal(error: object_store::Error) -> Failure {
        Failure {
            error,
            retry: false,
            before_answer: false,
        }
    }

    fn connecting(error: object_store::Error) -> Failure {
        Failure {
            error,
            retry: true,
            before_answer: false,
        }
    }

    /// The request's deadline passed: no time for another try.
    fn late(limit: Duration) -> Failure {
        Failure::fatal(generic(Deadline::request(limit)))
    }

    /// The connection failed: before any answer came (`before_answer`)
    /// or part way through it. A GET is idempotent, so either is retried.
    fn io(e: io::Error, before_answer: bool) -> Failure {
        Failure {
            error: generic(HttpError::new(HttpErrorKind::Interrupted, e)),
            retry: true,
            before_answer,
        }
    }

    /// An answer other than 200, as object_store words it: "not found"
    /// and refused access as their own errors, anything else with the
    /// status and the server's body. 5xx and 429 are retried.
    fn status(path: &str, status: StatusCode, body: &[u8]) -> Failure {
        let source = Box::new(Refused {
            status,
            body: String::from_utf8_lossy(body).into_owned(),
        });
        let path = path.to_string();
        let error = match status {
            StatusCode::NOT_FOUND => object_store::Error::NotFound { path, source },
            StatusCode::PRECONDITION_FAILED => object_store::Error::Precondition { path, source },
            StatusCode::FORBIDDEN => object_store::Error::PermissionDenied { path, source },
            StatusCode::UNAUTHORIZED => object_store::Error::Unauthenticated { path, source },
            _ => generic(*source),
        };
        Failure {
            error,
            retry: status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS,
            before_answer: false,
        }
    }
}

/// An answer other than 200, worded as object_store words one, which
/// `client::classify` reads the status and S3 error code from.
#[derive(Debug)]
struct Refused {
    status: StatusCode,
    body: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{} {}: {}",
            super::client::STATUS,
            self.status.as_u16(),
            self.status.canonical_reason().unwrap_or(""),
            self.body
        )
    }
}

impl std::error::Error for Refused {}

fn generic(e: impl std::error::Error + Send + Sync + 'static) -> object_store::Error {
    object_store::Error::Generic {
        store: "S3",
        source: Box::new(e),
    }
}

/// The pause before retry `n` (1, 2, ...): object_store's default backoff
/// (100 ms, doubling, at most 15 s), with jitter over its upper half so
/// threads refused together do not come back together.
fn backoff(n: u32) -> Duration {
    let base = Duration::from_millis(100).saturating_mul(1 << (n - 1).min(8));
    let base = base.min(Duration::from_secs(15));
    base / 2 + base.mul_f64(rand::random::<f64>() / 2.0)
}

/// A key name or path segment as S3 signs it: every byte but the
/// unreserved ones percent-encoded.
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// SigV4 signing of GETs with an empty body, the key derived once a day
/// and the date formatted once a second.
struct Signer {
    key_id: String,
    secret: String,
    /// The session token, when it can go in a header (visible ASCII).
    token: Option<String>,
    region: String,
    /// The second the date was last written for, and it (`20261128T051500Z`).
    stamp: (u64, String),
    /// The day the key was derived for (`20261128`) and the key.
    key: (String, Option<hmac::Key>),
}

impl Signer {
    fn new(key_id: String, secret: &str, token: Option<String>, region: String) -> Signer {
        Signer {
            key_id,
            secret: secret.to_string(),
            token: token.filter(|t| t.bytes().all(|b| b.is_ascii_graphic())),
            region,
            stamp: (u64::MAX, String::new()),
            key: (String::new(), None),
        }
    }

    /// Adds x-amz-date, x-amz-content-sha256 (and the session token) and
    /// the Authorization that signs them with the host and `path` to the
    /// request's `head`, a line each.
    fn sign(&mut self, host: &str, path: &str, head: &mut String) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if self.stamp.0 != now {
            self.stamp = (now, amz_date(now));
        }
        let date = self.stamp.1.clone();
        let authorization = self.authorization(&date, host, path);
        head.push_str(&format!(
            "x-amz-date: {date}\r\nx-amz-content-sha256: {EMPTY_SHA256}\r\n"
        ));
        if let Some(token) = &self.token {
            head.push_str(&format!("x-amz-security-token: {token}\r\n"));
        }
        head.push_str(&format!("authorization: {authorization}\r\n"));
    }

    /// The Authorization header of a GET of `path` at `date`.
    fn authorization(&mut self, date: &str, host: &str, path: &str) -> String {
        let day = &date[..8];
        let scope = format!("{day}/{}/s3/aws4_request", self.region);
        let mut canonical_headers =
            format!("host:{host}\nx-amz-content-sha256:{EMPTY_SHA256}\nx-amz-date:{date}\n");
        let mut signed = "host;x-amz-content-sha256;x-amz-date".to_string();
        if let Some(token) = &self.token {
            canonical_headers.push_str(&format!("x-amz-security-token:{token}\n"));
            signed.push_str(";x-amz-security-token");
        }
        let canonical_request =
            format!("GET\n{path}\n\n{canonical_headers}\n{signed}\n{EMPTY_SHA256}");
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{date}\n{scope}\n{}",
            hex(digest::digest(&digest::SHA256, canonical_request.as_bytes()).as_ref())
        );
        let signature = hmac::sign(self.key_for(day), to_sign.as_bytes());
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={}",
            self.key_id,
            hex(signature.as_ref())
        )
    }

    /// The signing key of `day`: HMACs of the day, region, service and
    /// "aws4_request" under the secret.
    fn key_for(&mut self, day: &str) -> &hmac::Key {
        if self.key.0 != day || self.key.1.is_none() {
            let step = |key: &[u8], data: &str| {
                hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
            };
            let k = step(format!("AWS4{}", self.secret).as_bytes(), day);
            let k = step(k.as_ref(), &self.region);
            let k = step(k.as_ref(), "s3");
            let k = step(k.as_ref(), "aws4_request");
            self.key = (
                day.to_string(),
                Some(hmac::Key::new(hmac::HMAC_SHA256, k.as_ref())),
            );
        }
        self.key.1.as_ref().expect("just derived")
    }
}

/// Seconds since 1970 as SigV4's basic ISO 8601 (`20261128T051500Z`):
/// RFC 3339 without its separators.
fn amz_date(secs: u64) -> String {
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .replace(['-', ':'], "")
}

/// Lower-case hex, as SigV4 writes hashes and signatures.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;
    use object_store::aws::{AwsAuthorizer, AwsCredential};
    use object_store::client::{HttpRequest, HttpRequestBody};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn location(text: &str) -> S3Location {
        let Target::S3 { bucket } = Target::parse(text).unwrap() else {
            unreachable!("an s3 target")
        };
        bucket
    }

    fn keys(secret: &str) -> AmazonS3Builder {
        AmazonS3Builder::new()
            .with_access_key_id("AKIDEXAMPLE")
            .with_secret_access_key(secret)
    }

    #[test]
    fn signatures_are_object_stores_for_the_same_request() {
        for token in [None, Some("FQoGZXIvYXdzEXAMPLETOKEN==")] {
            for path in ["/bucket/p/000001", "/bucket/a%20b/%2B000042"] {
                let credential = AwsCredential {
                    key_id: "AKIDEXAMPLE".into(),
                    secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                    token: token.map(String::from),
                };
                let mut request: HttpRequest =
                    hyper::Request::get(format!("http://127.0.0.1:8333{path}"))
                        .body(HttpRequestBody::empty())
                        .unwrap();
                AwsAuthorizer::new(&credential, "s3", "eu-west-3")
                    .try_authorize(&mut request, None)
                    .unwrap();
                let header = |name: &str| request.headers()[name].to_str().unwrap().to_string();
                let date = header("x-amz-date");
                let mut ours = Signer::new(
                    credential.key_id.clone(),
                    &credential.secret_key,
                    credential.token.clone(),
                    "eu-west-3".into(),
                );
                assert_eq!(
                    ours.authorization(&date, "127.0.0.1:8333", path),
                    header("authorization"),
                    "token {token:?}, path {path}"
                );
                // Signed again from the kept key: the same.
                assert_eq!(
                    ours.authorization(&date, "127.0.0.1:8333", path),
                    header("authorization")
                );
                let mut head = String::new();
                ours.sign("127.0.0.1:8333", path, &mut head);
                let line = |name: &str| {
                    head.lines()
                        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                        .map(String::from)
                };
                assert_eq!(
                    line("x-amz-content-sha256"),
                    Some(header("x-amz-content-sha256"))
                );
                assert_eq!(line("x-amz-security-token").as_deref(), token);
                let signed = line("authorization").unwrap();
                assert!(signed.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
                assert!(head.ends_with("\r\n") && !head.contains("\r\n\r\n"));
            }
        }
        // Another secret, another signature.
        let mut one = Signer::new("K".into(), "a", None, "us-east-1".into());
        let mut two = Signer::new("K".into(), "b", None, "us-east-1".into());
        let date = "20261128T021500Z";
        assert_ne!(
            one.authorization(date, "h", "/b/k"),
            two.authorization(date, "h", "/b/k")
        );
    }

    #[test]
    fn dates_are_written_as_sigv4_wants_them() {
        for (secs, want) in [
            (0, "19700101T000000Z"),
            (951_782_400, "20000229T000000Z"),
            (1_709_164_800, "20240229T000000Z"),
            (1_795_832_100, "20261128T021500Z"),
            (4_107_542_399, "21000228T235959Z"),
        ] {
            assert_eq!(amz_date(secs), want);
        }
    }

    #[test]
    fn names_are_percent_encoded_but_for_unreserved_bytes() {
        assert_eq!(encode("A-z_0.9~"), "A-z_0.9~");
        assert_eq!(encode("a b/ü+"), "a%20b%2F%C3%BC%2B");
    }

    #[test]
    fn the_direct_path_is_taken_only_where_it_sends_what_object_store_would() {
        let plain = location("s3://bkt/deep/er?endpoint=http://127.0.0.1:8333");
        let direct = DirectGet::new(&plain, &keys("s")).expect("http:// with keys");
        assert_eq!(direct.host, "127.0.0.1:8333");
        assert_eq!(direct.path_prefix, "/bkt/deep/er/");
        assert!(direct.signer.is_some());
        let unsigned = AmazonS3Builder::new().with_skip_signature(true);
        assert!(DirectGet::new(&plain, &unsigned).unwrap().signer.is_none());
        let port_80 = location("s3://bkt?endpoint=http://localhost:80");
        let direct = DirectGet::new(&port_80, &keys("s")).unwrap();
        assert_eq!(
            (direct.host.as_str(), direct.address.as_str()),
            ("localhost", "localhost:80")
        );
        assert_eq!(direct.path_prefix, "/bkt/");
        // TLS, virtual-hosted requests, credentials object_store would
        // look for elsewhere: object_store's path.
        let tls = location("s3://bkt/p?endpoint=https://127.0.0.1:8333");
        assert!(DirectGet::new(&tls, &keys("s")).is_none());
        let hosted = keys("s").with_virtual_hosted_style_request(true);
        assert!(DirectGet::new(&plain, &hosted).is_none());
        assert!(DirectGet::new(&plain, &AmazonS3Builder::new()).is_none());
    }

    /// A server on a loopback port that answers each connection's
    /// requests with the replies given for that connection, in turn, each
    /// written in the pieces given with a pause between them (so a body
    /// comes in several reads); counts the connections it accepted.
    fn scripted(connections: Vec<Vec<Vec<&'static [u8]>>>) -> (DirectGet, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for replies in connections {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                for pieces in replies {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    for piece in pieces {
                        let _ = stream.write_all(piece);
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                // The connection closes when its replies are done.
            }
        });
        let at = location(&format!(
            "s3://bkt/p?endpoint=http://127.0.0.1:{port}&timeout=5s"
        ));
        (DirectGet::new(&at, &keys("s")).unwrap(), accepted)
    }

    /// The body of one GET, or the error.
    fn body_of(direct: &mut DirectGet) -> S3Result<Vec<u8>> {
        let mut body = Vec::new();
        direct.get("000001", &mut |piece| body.extend_from_slice(piece))?;
        Ok(body)
    }

    #[test]
    fn bodies_end_where_their_heads_say() {
        for (framing, reply) in [
            (
                "a length, the body in pieces",
                vec![
                    &b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhel"[..],
                    b"lo ",
                    b"world",
                ],
            ),
            (
                "chunks split anywhere, a trailer after the last",
                vec![
                    &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r"[..],
                    b"\nhello\r\n6;ext=1\r\n wor",
                    b"ld\r",
                    b"\n0\r\nx-sum: 1\r\n\r\n",
                ],
            ),
            (
                "no length: the body ends when the server closes",
                vec![
                    &b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello"[..],
                    b" world",
                ],
            ),
            (
                "an interim answer first",
                vec![
                    &b"HTTP/1.1 100 Continue\r\n\r\n"[..],
                    b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world",
                ],
            ),
        ] {
            let (mut direct, _) = scripted(vec![vec![reply]]);
            assert_eq!(body_of(&mut direct).unwrap(), b"hello world", "{framing}");
        }
    }

    #[test]
    fn a_connection_serves_many_requests_and_one_the_server_closed_is_opened_again() {
        let ok: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let (mut direct, accepted) = scripted(vec![vec![vec![ok], vec![ok]], vec![vec![ok]]]);
        for _ in 0..2 {
            assert_eq!(body_of(&mut direct).unwrap(), b"ok");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, kept");
        // The server has closed the first connection: the third request
        // goes on a new one, though the target allows no retry.
        assert_eq!(direct.waits.retries, 0);
        assert_eq!(body_of(&mut direct).unwrap(), b"ok");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_body_cut_short_or_not_http_is_a_failure_never_a_short_read() {
        for (what, reply, words) in [
            (
                "closed after 3 of 11 bytes",
                &b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhel"[..],
                "connection closed before the answer was complete",
            ),
            (
                "closed before the last chunk",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                "connection closed before the answer was complete",
            ),
            (
                "a chunk longer than its size",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
                "not HTTP/1.1",
            ),
            ("not HTTP", b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not HTTP/1.1"),
        ] {
            let (mut direct, _) = scripted(vec![vec![vec![reply]]]);
            let e = body_of(&mut direct).expect_err(what);
            let mut deepest: &dyn std::error::Error = &e;
            while let Some(s) = deepest.source() {
                deepest = s;
            }
            assert!(deepest.to_string().contains(words), "{what}: {e}");
        }
    }

    #[test]
    fn a_body_that_trickles_past_the_timeout_is_cut_off_at_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
            // A byte every 100 ms: each read is quick, the whole is not.
            while stream.write_all(b"x").is_ok() {
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let at = location(&format!(
            "s3://bkt/p?endpoint=http://127.0.0.1:{port}&timeout=700ms"
        ));
        let mut direct = DirectGet::new(&at, &keys("s")).unwrap();
        let started = std::time::Instant::now();
        let e = body_of(&mut direct).expect_err("too slow");
        let took = started.elapsed();
        assert!(
            e.to_string().contains("no complete answer within 700 ms"),
            "{e}"
        );
        // The slack a loaded 2-core machine needs on top of the wait.
        assert!(
            took >= Duration::from_millis(700) && took < Duration::from_secs(10),
            "{took:?}"
        );
    }

    /// The tests that need the S3 server scripts/test.sh starts: the
    /// servers tier (a module path the test tiers select).
    mod servers {
        use super::*;

        /// A GET of a key that is not there, on the S3 server of
        /// scripts/test.sh, signed with the right keys and with a wrong
        /// secret: the server takes the first signature (and says the key is
        /// missing) and refuses the second.
        #[test]
        #[ignore = "needs an S3 server: run scripts/test.sh"]
        fn the_server_takes_the_signature_and_refuses_a_wrong_one() {
            let url =
                std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
            let target = url.replacen("s3://blobbench/", "s3://blobbench/direct-signature/", 1);
            let location = location(&target);
            let env = |name: &str| std::env::var(name).expect("scripts/test.sh exports the keys");
            let builder = |secret: String| {
                AmazonS3Builder::new()
                    .with_access_key_id(env("AWS_ACCESS_KEY_ID"))
                    .with_secret_access_key(secret)
            };
            let get = |secret: String| {
                let mut direct = DirectGet::new(&location, &builder(secret)).unwrap();
                let mut sink = |_: &[u8]| panic!("no body for a missing key");
                let got = direct.get("999999", &mut sink);
                super::super::super::client::s3_error(
                    &location.display,
                    &location.waits,
                    got.unwrap_err(),
                )
            };
            let missing = get(env("AWS_SECRET_ACCESS_KEY"));
            assert_eq!(
                missing.class(),
                crate::error::FailureClass::NotFound,
                "{missing}"
            );
            let refused = get("wrong".into());
            assert!(
                matches!(refused, crate::error::Error::Connect { .. }),
                "{refused}"
            );
            assert!(
                refused.to_string().contains("AWS_SECRET_ACCESS_KEY"),
                "{refused}"
            );
        }

        /// An object object_store wrote under a prefix of bytes a URL must
        /// escape is the object the direct path reads.
        #[test]
        #[ignore = "needs an S3 server: run scripts/test.sh"]
        fn the_direct_path_reads_what_object_store_wrote_under_any_prefix() {
            use object_store::ObjectStoreExt;
            let url =
                std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
            let mut location = location(&url);
            location.prefix = format!("direct names/a b+c=d%e ü/{}", std::process::id());
            let exec =
                super::super::super::Exec::for_this_thread(location.display.as_path()).unwrap();
            let bucket =
                std::sync::Arc::new(super::super::super::client::connect(&location).unwrap());
            let data: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
            let (b, payload) = (bucket.clone(), data.clone());
            exec.run(async move { b.client.put(&b.object(42), payload.into()).await })
                .expect("object_store writes the object");
            let (_, direct) = super::super::super::session_clients(&location, true).unwrap();
            let mut direct = direct.expect("the direct path for http://");
            let mut read = Vec::new();
            let mut sink = |piece: &[u8]| read.extend_from_slice(piece);
            direct
                .get(&super::super::super::blob_name(42), &mut sink)
                .expect("the direct path reads it");
            assert!(
                read == data,
                "read {} bytes, wrote {}",
                read.len(),
                data.len()
            );
            let b = bucket.clone();
            exec.run(async move { b.client.delete(&b.object(42)).await })
                .unwrap();
        }
    }
}
