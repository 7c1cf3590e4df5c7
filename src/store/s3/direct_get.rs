//! Whole-object GETs over plain HTTP, sent on one hyper connection of the
//! session's own, signed here (AWS Signature Version 4) instead of by
//! object_store.
//!
//! A 16-thread reader of 1 MB objects spent a fifth of its CPU inside
//! object_store's request path before a byte of body arrived: a URL
//! parsed three times per request (once through IDNA), a signer that
//! formats the date with chrono and derives the signing key with four
//! HMACs each time, reqwest's redirect, proxy and timeout layers, a
//! connection pool, and three timers a request. The body is what the
//! benchmark measures; this path leaves the rest out: the signing key is
//! derived once a day, the date formatted once a second, the request head
//! built as it goes on the wire, and one timer bounds the request with its
//! retries.
//!
//! Everything else (HEAD, PUT, DELETE, ranged GETs, listings, https://
//! endpoints, credentials object_store finds elsewhere) stays with
//! object_store. Failures come back as object_store's errors of the same
//! shape object_store gives, so one classification (`client::s3_error`)
//! names them, and the failure tests run on both paths.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HOST, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{HttpError, HttpErrorKind};
use ring::{digest, hmac};
use tokio::time::Instant;

use super::client::{CannotConnect, Deadline};
use crate::target::{S3Location, S3Waits};

type S3Result<T> = std::result::Result<T, object_store::Error>;

/// The SHA-256 of an empty body: a GET's payload hash.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The most of an error answer's body kept for its message.
const ERROR_BODY_MAX: usize = 64 * 1024;

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
    /// The open connection, None until the first request or after one
    /// failed part way.
    connection: Option<Link>,
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
        })
    }

    /// GET of the object `name` in the prefix, its body to `sink` as it
    /// arrives. Retried (as object_store would) after a lost connection or
    /// a 5xx or 429 answer, up to `retries=` times, but never once a byte
    /// has gone to `sink`; the whole ends within `timeout=`.
    pub(crate) async fn get(&mut self, name: &str, sink: &mut dyn FnMut(&[u8])) -> S3Result<()> {
        let limit = self.waits.timeout();
        let deadline = Instant::now() + limit;
        let path = format!("{}{}", self.path_prefix, encode(name));
        let mut delivered = false;
        let mut retried = 0;
        let mut fresh_tries = 1;
        loop {
            let reused = self.connection.is_some();
            let attempt = self.attempt(&path, sink, &mut delivered);
            let failure = match tokio::time::timeout_at(deadline, attempt).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(failure)) => failure,
                Err(_) => {
                    self.connection = None;
                    return Err(generic(Deadline::request(limit)));
                }
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
            if Instant::now() + pause >= deadline {
                tokio::time::sleep_until(deadline).await;
                return Err(generic(Deadline::request(limit)));
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// One request and its answer.
    async fn attempt(
        &mut self,
        path: &str,
        sink: &mut dyn FnMut(&[u8]),
        delivered: &mut bool,
    ) -> Result<(), Failure> {
        let mut request = Request::get(path)
            .header(HOST, &self.host)
            .body(Empty::new())
            .map_err(|e| Failure::fatal(generic(e)))?;
        if let Some(signer) = &mut self.signer {
            signer.sign(&self.host, path, request.headers_mut());
        }
        let Link { sender, driver } = self.ready_link().await?;
        driven(driver, exchange(sender, request, path, sink, delivered)).await
    }

    /// The session's connection, ready for a request: opened (within
    /// `connect_timeout=`) when there is none or the server closed it.
    async fn ready_link(&mut self) -> Result<&mut Link, Failure> {
        if let Some(Link { sender, driver }) = &mut self.connection
            && driven(driver, sender.ready()).await.is_err()
        {
            self.connection = None;
        }
        if self.connection.is_none() {
            self.connection = Some(self.connect().await?);
        }
        Ok(self.connection.as_mut().expect("just opened"))
    }

    async fn connect(&self) -> Result<Link, Failure> {
        let limit = self.waits.connect_timeout();
        let stream = match tokio::time::timeout(
            limit,
            tokio::net::TcpStream::connect(&self.address),
        )
        .await
        {
            Err(_) => {
                let deadline = Deadline {
                    limit,
                    connecting: true,
                };
                return Err(Failure::connecting(generic(deadline)));
            }
            Ok(Err(e)) => return Err(Failure::connecting(generic(CannotConnect(e)))),
            Ok(Ok(stream)) => stream,
        };
        // As reqwest sets it: a request's head leaves at once.
        let _ = stream.set_nodelay(true);
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::lost(e, true))?;
        Ok(Link {
            sender,
            driver: Some(Box::pin(connection)),
        })
    }
}

/// The connection's reading and writing, which moves only when polled.
type Driver = Pin<Box<http1::Connection<TokioIo<tokio::net::TcpStream>, Empty<Bytes>>>>;

/// A kept-alive connection: requests go in by `sender`, and `driver`
/// (None once the connection has ended) does the I/O.
struct Link {
    sender: SendRequest<Empty<Bytes>>,
    driver: Option<Driver>,
}

/// Runs `work` with the connection's I/O polled beside it in the same
/// task, rather than in a task of its own: no hand-over through the
/// scheduler for each piece of a body.
async fn driven<T>(driver: &mut Option<Driver>, work: impl Future<Output = T>) -> T {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        // Ended (closed or failed): `work` hears of it from hyper.
        if let Some(d) = driver
            && d.as_mut().poll(cx).is_ready()
        {
            *driver = None;
        }
        work.as_mut().poll(cx)
    })
    .await
}

/// Sends `request` and takes its answer: a 200's body to `sink`, any
/// other status as a failure with the server's words.
async fn exchange(
    sender: &mut SendRequest<Empty<Bytes>>,
    request: Request<Empty<Bytes>>,
    path: &str,
    sink: &mut dyn FnMut(&[u8]),
    delivered: &mut bool,
) -> Result<(), Failure> {
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| Failure::lost(e, true))?;
    let status = answer.status();
    let mut body = answer.into_body();
    if status == StatusCode::OK {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Failure::lost(e, false))?;
            if let Ok(data) = frame.into_data() {
                *delivered |= !data.is_empty();
                sink(&data);
            }
        }
        return Ok(());
    }
    let mut said = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::lost(e, false))?;
        if let Ok(data) = frame.into_data() {
            let room = ERROR_BODY_MAX.saturating_sub(said.len());
            said.extend_from_slice(&data[..data.len().min(room)]);
        }
    }
    Err(Failure::status(path, status, &said))
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

    /// The connection failed: while sending (`before_answer`) or while
    /// the answer came. A GET is idempotent, so either is retried.
    fn lost(e: hyper::Error, before_answer: bool) -> Failure {
        let kind = if e.is_timeout() {
            HttpErrorKind::Timeout
        } else {
            HttpErrorKind::Interrupted
        };
        Failure {
            error: generic(HttpError::new(kind, e)),
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
    token: Option<HeaderValue>,
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
            token: token.and_then(|t| HeaderValue::from_str(&t).ok()),
            region,
            stamp: (u64::MAX, String::new()),
            key: (String::new(), None),
        }
    }

    /// Adds x-amz-date, x-amz-content-sha256 (and the session token) and
    /// the Authorization that signs them with the host and `path`.
    fn sign(&mut self, host: &str, path: &str, headers: &mut hyper::HeaderMap) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if self.stamp.0 != now {
            self.stamp = (now, amz_date(now));
        }
        let date = self.stamp.1.clone();
        let authorization = self.authorization(&date, host, path);
        let value = |s: &str| HeaderValue::from_str(s).expect("ASCII");
        headers.insert("x-amz-date", value(&date));
        headers.insert(
            "x-amz-content-sha256",
            HeaderValue::from_static(EMPTY_SHA256),
        );
        if let Some(token) = &self.token {
            headers.insert("x-amz-security-token", token.clone());
        }
        headers.insert(hyper::header::AUTHORIZATION, value(&authorization));
    }

    /// The Authorization header of a GET of `path` at `date`.
    fn authorization(&mut self, date: &str, host: &str, path: &str) -> String {
        let day = &date[..8];
        let scope = format!("{day}/{}/s3/aws4_request", self.region);
        let mut canonical_headers =
            format!("host:{host}\nx-amz-content-sha256:{EMPTY_SHA256}\nx-amz-date:{date}\n");
        let mut signed = "host;x-amz-content-sha256;x-amz-date".to_string();
        if let Some(token) = &self.token {
            let token = token.to_str().unwrap_or_default();
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
                let mut request: HttpRequest = Request::get(format!("http://127.0.0.1:8333{path}"))
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
                let mut headers = hyper::HeaderMap::new();
                ours.sign("127.0.0.1:8333", path, &mut headers);
                assert_eq!(
                    headers["x-amz-content-sha256"],
                    header("x-amz-content-sha256")
                );
                assert_eq!(
                    headers
                        .get("x-amz-security-token")
                        .map(|t| t.to_str().unwrap()),
                    token
                );
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

    /// A GET of a key that is not there, on the S3 server of
    /// scripts/test.sh, signed with the right keys and with a wrong
    /// secret: the server takes the first signature (and says the key is
    /// missing) and refuses the second.
    #[test]
    #[ignore = "needs an S3 server: run scripts/test.sh"]
    fn the_server_takes_the_signature_and_refuses_a_wrong_one() {
        let url = std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
        let target = url.replacen("s3://blobbench/", "s3://blobbench/direct-signature/", 1);
        let location = location(&target);
        let env = |name: &str| std::env::var(name).expect("scripts/test.sh exports the keys");
        let builder = |secret: String| {
            AmazonS3Builder::new()
                .with_access_key_id(env("AWS_ACCESS_KEY_ID"))
                .with_secret_access_key(secret)
        };
        let exec = super::super::Exec::for_this_thread(location.display.as_path()).unwrap();
        let get = |secret: String| {
            let mut direct = DirectGet::new(&location, &builder(secret)).unwrap();
            let mut sink = |_: &[u8]| panic!("no body for a missing key");
            let got = exec.run_here(direct.get("999999", &mut sink)).unwrap();
            super::super::client::s3_error(&location.display, &location.waits, got.unwrap_err())
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
        let url = std::env::var("BLOBBENCH_S3_URL").expect("BLOBBENCH_S3_URL: run scripts/test.sh");
        let mut location = location(&url);
        location.prefix = format!("direct names/a b+c=d%e ü/{}", std::process::id());
        let exec = super::super::Exec::for_this_thread(location.display.as_path()).unwrap();
        let bucket = std::sync::Arc::new(super::super::client::connect(&location).unwrap());
        let data: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (b, payload) = (bucket.clone(), data.clone());
        exec.run(async move { b.client.put(&b.object(42), payload.into()).await })
            .expect("object_store writes the object");
        let (_, direct) = super::super::session_clients(&location, true).unwrap();
        let mut direct = direct.expect("the direct path for http://");
        let mut read = Vec::new();
        let mut sink = |piece: &[u8]| read.extend_from_slice(piece);
        exec.run_here(direct.get(&super::super::blob_name(42), &mut sink))
            .unwrap()
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
