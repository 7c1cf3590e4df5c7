//! The S3 client of one target: credentials, settings, the server's name,
//! and S3's errors as blobbench's one-line errors.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{HttpError, HttpErrorKind};
use object_store::{ClientOptions, RetryConfig};

use super::Bucket;
use crate::error::{Error, FailureClass, Result};
use crate::target::{S3Location, S3Waits, wait_words};

/// The client library, as recorded in results.
pub(crate) const CLIENT: &str = "object_store 0.14 (reqwest, HTTP/1.1, rustls with ring); a run's whole-object reads over http:// on a blocking socket per thread, heads parsed by httparse, signed by blobbench's SigV4";

/// The region signed for: the target's, else AWS_REGION or
/// AWS_DEFAULT_REGION, else us-east-1 (as the AWS CLI).
pub(crate) fn region(location: &S3Location) -> String {
    location
        .region
        .clone()
        .or_else(|| std::env::var("AWS_REGION").ok())
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "us-east-1".into())
}

/// A signed client for the target's bucket.
pub(crate) fn connect(location: &S3Location) -> Result<Bucket> {
    let (builder, credentials) = configured(location)?;
    build(location, builder, credentials)
}

/// The client `builder` makes (see [`configured`]) for the target's bucket.
pub(crate) fn build(
    location: &S3Location,
    builder: AmazonS3Builder,
    credentials: String,
) -> Result<Bucket> {
    let client = builder.build().map_err(|e| {
        Error::usage(format!(
            "{}: cannot configure the S3 client: {}",
            location.display.display(),
            one_line(&e.to_string())
        ))
    })?;
    Ok(Bucket {
        location: location.clone(),
        client: Arc::new(client),
        credentials,
    })
}

/// object_store's builder for the target, checked, and where its
/// credentials come from in words.
pub(crate) fn configured(location: &S3Location) -> Result<(AmazonS3Builder, String)> {
    // rustls is built without a default crypto provider (the default one
    // builds a large C library); ring's is installed once per process.
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    // A plain-http endpoint needs no root certificates: loading the
    // system's (hundreds of PEM files) for every session costs a
    // measurable share of a short run's CPU.
    let plain_http = location
        .endpoint
        .as_deref()
        .is_some_and(|e| e.starts_with("http://"));
    let waits = location.waits;
    let options = ClientOptions::new()
        .with_no_system_certificates(plain_http)
        .with_allow_http(true)
        .with_connect_timeout(waits.connect_timeout())
        .with_timeout(waits.timeout());
    // object_store retries for minutes unless told otherwise; here a
    // request is retried only as often as the target says, and no retry
    // starts once its timeout has passed (`within` ends it there).
    let retry = RetryConfig {
        max_retries: waits.retries as usize,
        retry_timeout: waits.timeout(),
        ..RetryConfig::default()
    };
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(&location.bucket)
        .with_region(region(location))
        .with_client_options(options)
        .with_retry(retry);
    if let Some(endpoint) = &location.endpoint {
        // The target's endpoint, also over an AWS_ENDPOINT_URL_S3 of the
        // environment (which the client would put first): results record
        // the target's.
        builder = builder
            .with_endpoint(endpoint)
            .with_config(AmazonS3ConfigKey::S3Endpoint, endpoint);
    }
    let credentials = match credentials_in_use() {
        Some((words, profile)) => {
            if let Some(p) = profile {
                builder = builder
                    .with_access_key_id(p.key_id)
                    .with_secret_access_key(p.secret);
                if let Some(token) = p.token {
                    builder = builder.with_token(token);
                }
            }
            words
        }
        None => {
            builder = builder.with_skip_signature(true);
            "none found (AWS_ACCESS_KEY_ID, AWS_PROFILE, ~/.aws/credentials): requests are unsigned"
                .into()
        }
    };
    check_settings(&builder, location)?;
    Ok((builder, credentials))
}

/// Refuses, as a usage error naming the value and where it came from, a
/// setting the client would take and then panic on inside a request: an
/// endpoint from the environment (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3)
/// that is not a URL, a region or key id that cannot go in a header.
/// The target's own endpoint and region were checked when it was parsed.
fn check_settings(builder: &AmazonS3Builder, location: &S3Location) -> Result<()> {
    let here = location.display.display();
    for key in [AmazonS3ConfigKey::Endpoint, AmazonS3ConfigKey::S3Endpoint] {
        let Some(endpoint) = builder.get_config_value(&key) else {
            continue;
        };
        if location.endpoint.as_deref() == Some(endpoint.as_str()) {
            continue;
        }
        crate::target::check_http_url(&endpoint, &location.bucket).map_err(|why| {
            Error::usage(format!(
                "{here}: the environment's S3 endpoint (AWS_ENDPOINT_URL, AWS_ENDPOINT or AWS_ENDPOINT_URL_S3) \"{endpoint}\" {why}; fix or unset it, or name the server in the target (endpoint=http://127.0.0.1:8333)"
            ))
        })?;
    }
    let region = region(location);
    crate::target::check_region(&region).map_err(|why| {
        Error::usage(format!(
            "{here}: region \"{region}\" (from AWS_REGION or AWS_DEFAULT_REGION) {why}; fix or unset it, or give region= in the target"
        ))
    })?;
    for (key, what) in [
        (AmazonS3ConfigKey::AccessKeyId, "access key id"),
        (AmazonS3ConfigKey::Token, "session token"),
    ] {
        let Some(value) = builder.get_config_value(&key) else {
            continue;
        };
        if !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::usage(format!(
                "{here}: the S3 {what} (AWS_ACCESS_KEY_ID, AWS_SESSION_TOKEN or the profile's) holds a space, a control or a non-ASCII character, which no request header can carry; set it again as the server gave it"
            )));
        }
    }
    Ok(())
}

/// A profile's keys, read from the shared credentials file.
struct ProfileKeys {
    key_id: String,
    secret: String,
    token: Option<String>,
}

/// Where the credentials come from, in words, and the profile's keys when
/// they come from one (the environment's the client reads itself).
fn credentials_in_use() -> Option<(String, Option<ProfileKeys>)> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if env("AWS_ACCESS_KEY_ID").is_some() && env("AWS_SECRET_ACCESS_KEY").is_some() {
        return Some(("environment (AWS_ACCESS_KEY_ID)".into(), None));
    }
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let file = env("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".aws/credentials")))?;
    let text = std::fs::read_to_string(&file).ok()?;
    let keys = profile_keys(&text, &profile)?;
    Some((
        format!("profile {profile} ({})", file.display()),
        Some(keys),
    ))
}

/// The keys of `[profile]` in an AWS shared credentials file (INI).
fn profile_keys(text: &str, profile: &str) -> Option<ProfileKeys> {
    let mut inside = false;
    let (mut key_id, mut secret, mut token) = (None, None, None);
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == profile;
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if !inside {
            continue;
        }
        let v = Some(v.trim().to_string());
        match k.trim() {
            "aws_access_key_id" => key_id = v,
            "aws_secret_access_key" => secret = v,
            "aws_session_token" => token = v,
            _ => {}
        }
    }
    Some(ProfileKeys {
        key_id: key_id?,
        secret: secret?,
        token,
    })
}

/// The server's name as [`server_name`] asks it, once per endpoint and
/// process: every thread of a run opens the store, and each ask builds an
/// HTTP client (with the system's root certificates) for one request.
pub(crate) fn server_name_once(exec: &super::Exec, location: &S3Location) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static KNOWN: Mutex<Option<HashMap<String, Option<String>>>> = Mutex::new(None);
    let endpoint = location.endpoint.clone().unwrap_or_default();
    if let Some(name) = KNOWN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_default()
        .get(&endpoint)
    {
        return name.clone();
    }
    let name = exec.run(server_name(location.clone()));
    KNOWN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_default()
        .insert(endpoint, name.clone());
    name
}

/// The URL requests go to: the target's endpoint, else AWS's for the region.
pub(crate) fn endpoint_url(location: &S3Location) -> String {
    location
        .endpoint
        .clone()
        .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", region(location)))
}

/// The server's name and version as its `Server` header gives them
/// (SeaweedFS, MinIO, AmazonS3), from one unsigned GET of the bucket:
/// refused, but answered with the header (a HEAD of the endpoint alone
/// gets none from SeaweedFS).
async fn server_name(location: S3Location) -> Option<String> {
    let endpoint = endpoint_url(&location);
    let url = format!("{endpoint}/{}", location.bucket);
    let client = reqwest::Client::builder()
        .connect_timeout(location.waits.connect_timeout())
        .timeout(location.waits.timeout())
        .build()
        .ok()?;
    let response = client.get(url).send().await.ok()?;
    let server = response.headers().get(reqwest::header::SERVER)?;
    Some(server.to_str().ok()?.trim().to_string()).filter(|s| !s.is_empty())
}

/// The target's waits in words, for results and run headers: "each
/// request times out after 10 s (2 s to connect); a failed request is not
/// retried".
pub(crate) fn waits_words(waits: &S3Waits) -> String {
    let retried = match waits.retries {
        0 => "a failed request is not retried".to_string(),
        n => format!("a failed request is retried up to {n} times within its timeout"),
    };
    format!(
        "each request times out after {} ({} to connect); {retried}",
        wait_words(waits.timeout()),
        wait_words(waits.connect_timeout())
    )
}

/// A part size as written: `8 MiB` when it is whole mebibytes.
pub(crate) fn part_size_words(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// S3's error codes that mean the credentials are wrong or lack the right.
const ACCESS_CODES: &[&str] = &[
    "AccessDenied",
    "SignatureDoesNotMatch",
    "InvalidAccessKeyId",
    "ExpiredToken",
    "InvalidToken",
];

/// A wait that ran out: a request (with its retries) not done within the
/// target's timeout (the deadline [`within`] sets around each one), or a
/// connection not made within its `connect_timeout=`.
#[derive(Debug)]
pub(crate) struct Deadline {
    pub(crate) limit: Duration,
    pub(crate) connecting: bool,
}

impl Deadline {
    /// The whole request's deadline.
    pub(crate) fn request(limit: Duration) -> Deadline {
        Deadline {
            limit,
            connecting: false,
        }
    }
}

impl std::fmt::Display for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.connecting {
            "no connection made"
        } else {
            "no complete answer"
        };
        write!(f, "{what} within {}", wait_words(self.limit))
    }
}

impl std::error::Error for Deadline {}

/// The server refused the connection or could not be reached.
#[derive(Debug)]
pub(crate) struct CannotConnect(pub(crate) std::io::Error);

impl std::fmt::Display for CannotConnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot connect")
    }
}

impl std::error::Error for CannotConnect {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Runs one request and fails it as a timeout once `limit` has passed.
/// The client's own timeout bounds each attempt; this bounds the request
/// with its retries (`retries=N`), and any wait the client leaves open.
pub(crate) async fn within<T>(
    limit: Duration,
    request: impl Future<Output = Result<T, object_store::Error>>,
) -> Result<T, object_store::Error> {
    match tokio::time::timeout(limit, request).await {
        Ok(done) => done,
        Err(_) => Err(object_store::Error::Generic {
            store: "S3",
            source: Box::new(Deadline::request(limit)),
        }),
    }
}

/// An S3 error as one line that says what to do: access and a missing
/// bucket are the user's to fix (exit 2); anything else is a failed
/// operation of its class (see [`classify`]).
pub(crate) fn s3_error(target: &Path, waits: &S3Waits, e: object_store::Error) -> Error {
    let text = one_line(&e.to_string());
    let code = xml_field(&text, "Code");
    let said = server_said(&text);
    let denied = matches!(
        e,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    ) || code.as_deref().is_some_and(|c| ACCESS_CODES.contains(&c));
    if denied {
        return Error::connect(
            target,
            format!(
                "access denied ({said}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) to a key this bucket accepts"
            ),
        );
    }
    if code.as_deref() == Some("NoSuchBucket") {
        return Error::usage(format!(
            "{}: the bucket does not exist; create it first (aws s3 mb, rclone mkdir, weed shell s3.bucket.create): blobbench never creates or deletes a bucket",
            target.display()
        ));
    }
    let (class, message) = classify(waits, &e, &text);
    Error::failed(target, class, message)
}

/// A failed request's class and its one-line message: a timeout (the
/// configured figure, never the client's "error sending request"), a
/// connection refused, reset or closed, an HTTP status with the S3 error
/// code the body names, or anything else as the client said it.
fn classify(waits: &S3Waits, e: &object_store::Error, text: &str) -> (FailureClass, String) {
    use object_store::Error as E;
    let said = server_said(text);
    match e {
        E::NotFound { .. } => return (FailureClass::NotFound, format!("not found: {said}")),
        E::Precondition { .. } => {
            return (
                FailureClass::Conflict,
                format!("precondition failed (412): {said}"),
            );
        }
        E::AlreadyExists { .. } => {
            return (FailureClass::Conflict, format!("conflict (409): {said}"));
        }
        _ => {}
    }
    if let Some(failure) = transport(waits, e) {
        return failure;
    }
    match http_status(text) {
        Some(status) => status_failure(status, xml_field(text, "Code").as_deref(), &said),
        None => (FailureClass::Other, said),
    }
}

/// A failure to reach the server or to hear its whole answer, from the
/// error's chain of causes: the deadline of [`within`], reqwest's timeouts
/// and connection errors, object_store's transport kinds, the system's.
fn transport(waits: &S3Waits, e: &object_store::Error) -> Option<(FailureClass, String)> {
    let mut kind = None;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(deadline) = s.downcast_ref::<Deadline>() {
            return Some(timed_out(waits, deadline.connecting));
        }
        if s.is::<CannotConnect>() {
            return Some(lost(e, "cannot connect"));
        }
        if let Some(r) = s.downcast_ref::<reqwest::Error>() {
            if r.is_timeout() {
                return Some(timed_out(waits, r.is_connect()));
            }
            if r.is_connect() {
                return Some(lost(e, "cannot connect"));
            }
        }
        if let Some(http) = s.downcast_ref::<HttpError>() {
            kind = Some(http.kind());
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                TimedOut => return Some(timed_out(waits, false)),
                ConnectionRefused | ConnectionReset | ConnectionAborted | NotConnected
                | BrokenPipe | UnexpectedEof => return Some(lost(e, "connection lost")),
                _ => {}
            }
        }
        source = s.source();
    }
    match kind? {
        HttpErrorKind::Timeout => Some(timed_out(waits, false)),
        HttpErrorKind::Connect => Some(lost(e, "cannot connect")),
        HttpErrorKind::Request | HttpErrorKind::Interrupted => Some(lost(e, "connection lost")),
        _ => None,
    }
}

/// A timeout, named by the bound the target set: connecting
/// (`connect_timeout=`) or the whole request (`timeout=`).
fn timed_out(waits: &S3Waits, connecting: bool) -> (FailureClass, String) {
    let message = if connecting {
        format!(
            "timeout after {} connecting: no connection made (connect_timeout= on the target sets the bound)",
            wait_words(waits.connect_timeout())
        )
    } else {
        format!(
            "timeout after {}: no complete answer from the server (timeout= on the target sets the bound)",
            wait_words(waits.timeout())
        )
    };
    (FailureClass::Timeout, message)
}

/// A connection refused, reset or closed, with the system's deepest word
/// on it ("Connection refused (os error 111)").
fn lost(e: &object_store::Error, what: &str) -> (FailureClass, String) {
    let mut deepest: &(dyn std::error::Error + 'static) = e;
    while let Some(s) = deepest.source() {
        deepest = s;
    }
    (
        FailureClass::Connection,
        format!("{what}: {}", one_line(&deepest.to_string())),
    )
}

/// How object_store's error type starts the words on an HTTP status.
pub(crate) const STATUS: &str = "Server returned non-2xx status code: ";

/// The HTTP status of a refused request. object_store keeps the status in
/// an error type it does not export, so it is read from the words that
/// type writes ("Server returned non-2xx status code: 500 Internal Server
/// Error: ..."); a test against a real server answering 500 and 503 keeps
/// the reading honest. An error in the body of a 200 (S3's InternalError
/// or SlowDown after a multipart upload) counts as a 500.
fn http_status(text: &str) -> Option<u16> {
    if let Some(at) = text.find(STATUS) {
        let digits = text[at + STATUS.len()..].get(..3)?;
        return digits.parse().ok().filter(|c| (100..600).contains(c));
    }
    text.contains("Server returned error response: ")
        .then_some(500)
}

/// The class of an HTTP error status: 429 and S3's SlowDown are
/// throttling, 409 and 412 conflicts, 404 a missing object, anything else
/// the status itself.
fn status_failure(status: u16, code: Option<&str>, said: &str) -> (FailureClass, String) {
    match status {
        429 => (FailureClass::Throttled, format!("throttled (429): {said}")),
        _ if code == Some("SlowDown") => (
            FailureClass::Throttled,
            format!("throttled ({status} SlowDown): {said}"),
        ),
        409 | 412 => (
            FailureClass::Conflict,
            format!("conflict ({status}): {said}"),
        ),
        404 => (FailureClass::NotFound, format!("not found: {said}")),
        500..=599 => (
            FailureClass::ServerStatus { code: status },
            format!("server error {status}: {said}"),
        ),
        _ => (
            FailureClass::ServerStatus { code: status },
            format!("HTTP {status}: {said}"),
        ),
    }
}

/// What the server said: its S3 error code and message (`InternalError:
/// We encountered an internal error`), else the status's reason and body
/// (a HEAD's answer has no body), else the client's whole line.
fn server_said(text: &str) -> String {
    match (xml_field(text, "Code"), xml_field(text, "Message")) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        _ => match text.find(STATUS) {
            Some(at) => text[at + STATUS.len()..]
                .get(3..)
                .unwrap_or_default()
                .trim()
                .trim_end_matches(':')
                .to_string(),
            None => text.to_string(),
        },
    }
}

/// The text of `<name>...</name>` in a server's XML error body.
fn xml_field(text: &str, name: &str) -> Option<String> {
    let start = text.find(&format!("<{name}>"))? + name.len() + 2;
    let end = start + text[start..].find(&format!("</{name}>"))?;
    Some(text[start..end].trim().to_string())
}

/// At most 400 characters on one line: a server's XML body can span many.
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(400) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_keys_are_read_from_their_own_section_only() {
        let text = "[default]\naws_access_key_id = A\naws_secret_access_key = B\n\n[other]\naws_access_key_id=C\naws_secret_access_key=D\naws_session_token=T\n";
        let d = profile_keys(text, "default").unwrap();
        assert_eq!(
            (d.key_id.as_str(), d.secret.as_str(), d.token),
            ("A", "B", None)
        );
        let o = profile_keys(text, "other").unwrap();
        assert_eq!((o.key_id.as_str(), o.token.as_deref()), ("C", Some("T")));
        assert!(profile_keys(text, "missing").is_none());
    }

    #[test]
    fn long_server_messages_become_one_short_line() {
        let xml = format!("<Error>\n<Code>X</Code>\n{}</Error>", "y".repeat(1000));
        let line = one_line(&xml);
        assert!(!line.contains('\n') && line.len() < 420, "{line}");
    }

    /// Real failures from real sockets: each test starts a small server
    /// of its own on a loopback port and asks it through the client
    /// blobbench uses.
    mod failures {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::{Duration, Instant};

        use object_store::ObjectStoreExt;
        use object_store::path::Path as ObjectPath;

        use super::super::super::Exec;
        use super::*;
        use crate::target::Target;

        /// Slack on top of a stated wait for a loaded 2-core machine.
        const SLACK: Duration = Duration::from_secs(10);

        /// The target's bucket at `127.0.0.1:port`, with `settings`.
        fn bucket(port: u16, settings: &str) -> Bucket {
            let text = format!("s3://bucket/p?endpoint=http://127.0.0.1:{port}{settings}");
            let Target::S3 { bucket } = Target::parse(&text).unwrap() else {
                unreachable!("an s3 target")
            };
            connect(&bucket).unwrap()
        }

        /// How a request goes: object_store's HEAD or GET, or the direct
        /// GET of the run's readers (`direct_get.rs`).
        #[derive(Clone, Copy, Debug)]
        enum Via {
            Head,
            Get,
            Direct,
        }

        /// Both ways a GET goes: every failure is named the same on each.
        const GETS: [Via; 2] = [Via::Get, Via::Direct];

        /// A request for one object, its error as blobbench's, and how
        /// long it took.
        fn failed_request(bucket: Bucket, via: Via) -> (Error, Duration) {
            let exec = Exec::for_this_thread(bucket.display()).unwrap();
            let bucket = Arc::new(bucket);
            let started = Instant::now();
            let got = match via {
                Via::Direct => {
                    let (_, direct) =
                        super::super::super::session_clients(&bucket.location, true).unwrap();
                    let mut direct = direct.expect("the direct path for http://");
                    let mut sink = |_: &[u8]| {};
                    direct.get("000001", &mut sink)
                }
                Via::Head | Via::Get => {
                    let b = bucket.clone();
                    exec.run(async move {
                        let path = ObjectPath::from("p/000001");
                        let request = async {
                            match via {
                                Via::Head => b.client.head(&path).await.map(|_| ()),
                                _ => b.client.get(&path).await?.bytes().await.map(|_| ()),
                            }
                        };
                        within(b.limit(), request).await
                    })
                }
            };
            let e = got.expect_err("the request fails");
            (bucket.failure(e), started.elapsed())
        }

        /// A server that answers every request with `reply` and closes the
        /// connection; counts the requests.
        fn answering(reply: &'static str) -> (u16, Arc<AtomicUsize>) {
            answering_after(Duration::ZERO, reply)
        }

        /// [`answering`], each reply `delay` after its request.
        fn answering_after(delay: Duration, reply: &'static str) -> (u16, Arc<AtomicUsize>) {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let asked = Arc::new(AtomicUsize::new(0));
            let count = asked.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { return };
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    count.fetch_add(1, Ordering::SeqCst);
                    // A thread per request, so a slow reply holds up no other.
                    std::thread::spawn(move || {
                        std::thread::sleep(delay);
                        let _ = stream.write_all(reply.as_bytes());
                    });
                }
            });
            (port, asked)
        }

        /// An HTTP reply with `status` and an S3 error body naming `code`.
        fn s3_reply(status: &str, code: &str, message: &str) -> &'static str {
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>"
            );
            Box::leak(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .into_boxed_str(),
            )
        }

        fn class_and_message(e: &Error) -> (FailureClass, String) {
            match e {
                Error::Failed { class, message, .. } => (*class, message.clone()),
                other => panic!("not a classified failure: {other:?}"),
            }
        }

        #[test]
        fn a_server_that_accepts_and_never_answers_is_a_timeout_after_the_stated_time() {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            std::thread::spawn(move || {
                let held: Vec<TcpStream> = listener.incoming().map_while(|s| s.ok()).collect();
                drop(held);
            });
            for via in [Via::Get, Via::Direct, Via::Head] {
                let (e, took) = failed_request(bucket(port, "&timeout=400ms"), via);
                let (class, message) = class_and_message(&e);
                assert_eq!(class, FailureClass::Timeout, "{message}");
                assert!(message.starts_with("timeout after 400 ms"), "{message}");
                assert!(!message.contains("error sending request"), "{message}");
                assert!(
                    took >= Duration::from_millis(400) && took < Duration::from_millis(400) + SLACK,
                    "{took:?}"
                );
                assert_eq!(e.exit_code(), 1);
            }
        }

        #[test]
        fn retries_end_within_the_timeout_too() {
            for via in GETS {
                // Each answer (a 500) comes after 1.8 s: the first within
                // the 2 s timeout, so it is retried, and the retry would
                // end at 3.7 s. It is cut off at 2 s instead, as a timeout.
                let reply = s3_reply("500 Internal Server Error", "InternalError", "slow");
                let (port, asked) = answering_after(Duration::from_millis(1800), reply);
                let (e, took) = failed_request(bucket(port, "&timeout=2s&retries=3"), via);
                assert_eq!(e.class(), FailureClass::Timeout, "{via:?}: {e}");
                assert!(e.to_string().contains("timeout after 2 s"), "{via:?}: {e}");
                assert!(took < Duration::from_millis(3500), "{via:?}: {took:?}");
                assert!(asked.load(Ordering::SeqCst) >= 1);
                // A quick server error is retried as asked: 1 + 2 requests.
                let (port, asked) = answering(reply);
                let (e, _) = failed_request(bucket(port, "&timeout=5s&retries=2"), via);
                assert_eq!(
                    e.class(),
                    FailureClass::ServerStatus { code: 500 },
                    "{via:?}: {e}"
                );
                assert_eq!(asked.load(Ordering::SeqCst), 3, "{via:?}");
                let (port, asked) = answering(reply);
                failed_request(bucket(port, ""), via);
                assert_eq!(
                    asked.load(Ordering::SeqCst),
                    1,
                    "{via:?}: no retry unless asked"
                );
            }
        }

        #[test]
        fn a_connection_never_accepted_is_a_timeout_connecting() {
            // A listener whose queue of one is taken: the kernel drops the
            // next handshake, so the client's connect waits.
            use socket2::{Domain, Socket, Type};
            let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
            socket
                .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
                .unwrap();
            socket.listen(0).unwrap();
            let port = socket.local_addr().unwrap().as_socket().unwrap().port();
            let _queued = TcpStream::connect(("127.0.0.1", port)).unwrap();
            for via in GETS {
                let (e, took) =
                    failed_request(bucket(port, "&timeout=5s&connect_timeout=300ms"), via);
                let (class, message) = class_and_message(&e);
                assert_eq!(class, FailureClass::Timeout, "{via:?}: {message}");
                assert!(
                    message.starts_with("timeout after 300 ms connecting"),
                    "{via:?}: {message}"
                );
                assert!(
                    took < Duration::from_secs(5),
                    "{via:?}: the connect timeout, not the request's: {took:?}"
                );
            }
        }

        #[test]
        fn a_closed_port_and_a_closed_connection_are_connection_failures() {
            use socket2::{Domain, Socket, Type};
            // Bound, never listening: nothing else can take the port.
            let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
            socket
                .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
                .unwrap();
            let port = socket.local_addr().unwrap().as_socket().unwrap().port();
            for via in GETS {
                let (e, _) = failed_request(bucket(port, ""), via);
                let (class, message) = class_and_message(&e);
                assert_eq!(class, FailureClass::Connection, "{via:?}: {message}");
                assert!(
                    message.starts_with("cannot connect") && message.contains("refused"),
                    "{via:?}: {message}"
                );
                // Accepted, then closed without a word.
                let (port, _) = answering("");
                let (e, _) = failed_request(bucket(port, ""), via);
                assert_eq!(e.class(), FailureClass::Connection, "{via:?}: {e}");
            }
        }

        #[test]
        fn http_statuses_are_classed_with_the_s3_error_code_in_the_message() {
            for (status, code, want, words) in [
                (
                    "500 Internal Server Error",
                    "InternalError",
                    FailureClass::ServerStatus { code: 500 },
                    "server error 500: InternalError: We encountered an internal error",
                ),
                (
                    "503 Service Unavailable",
                    "SlowDown",
                    FailureClass::Throttled,
                    "throttled (503 SlowDown): SlowDown: Reduce your request rate",
                ),
                (
                    "503 Service Unavailable",
                    "ServiceUnavailable",
                    FailureClass::ServerStatus { code: 503 },
                    "server error 503: ServiceUnavailable",
                ),
                (
                    "429 Too Many Requests",
                    "TooManyRequests",
                    FailureClass::Throttled,
                    "throttled (429)",
                ),
                (
                    "409 Conflict",
                    "OperationAborted",
                    FailureClass::Conflict,
                    "conflict (409)",
                ),
                (
                    "412 Precondition Failed",
                    "PreconditionFailed",
                    FailureClass::Conflict,
                    "precondition failed (412)",
                ),
                (
                    "400 Bad Request",
                    "InvalidArgument",
                    FailureClass::ServerStatus { code: 400 },
                    "HTTP 400: InvalidArgument",
                ),
            ] {
                let message = match code {
                    "InternalError" => "We encountered an internal error",
                    "SlowDown" => "Reduce your request rate",
                    _ => "no",
                };
                for via in GETS {
                    let (port, _) = answering(s3_reply(status, code, message));
                    let (e, _) = failed_request(bucket(port, ""), via);
                    let (class, said) = class_and_message(&e);
                    assert_eq!(class, want, "{via:?} {status}: {said}");
                    assert!(said.starts_with(words), "{via:?} {status}: {said}");
                }
            }
            // A HEAD's answer has no body: the status's reason stands in.
            let (port, _) = answering(
                "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            let (e, _) = failed_request(bucket(port, ""), Via::Head);
            let (class, said) = class_and_message(&e);
            assert_eq!(class, FailureClass::ServerStatus { code: 502 }, "{said}");
            assert!(said.starts_with("server error 502: Bad Gateway"), "{said}");
        }

        #[test]
        fn a_missing_object_and_refused_access_stay_what_they_were() {
            for via in GETS {
                let (port, _) = answering(s3_reply("404 Not Found", "NoSuchKey", "gone"));
                let (e, _) = failed_request(bucket(port, ""), via);
                assert_eq!(e.class(), FailureClass::NotFound, "{via:?}: {e}");
                let (port, _) = answering(s3_reply("403 Forbidden", "AccessDenied", "no"));
                let (e, _) = failed_request(bucket(port, ""), via);
                assert!(matches!(e, Error::Connect { .. }), "{via:?}: {e}");
                assert!(
                    e.to_string().contains("AWS_SECRET_ACCESS_KEY"),
                    "{via:?}: {e}"
                );
            }
        }
    }
}
