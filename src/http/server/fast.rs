//! The fast path: a connection's requests are parsed here (httparse) for as
//! long as they are plain GETs and HEADs of blobs or of the health check,
//! and answered without hyper: a blob that is a file of its own goes out
//! with sendfile, as nginx sends it. The first request that is anything
//! else (a body, a PUT, an upgrade, a malformed line) hands the connection,
//! with the bytes already read, to hyper for the rest of its life, so every
//! rarer case keeps hyper's handling.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::Watcher;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use super::State;
use super::read::get_blob;
use super::reply::status;
use super::routes::{MAX_HEADER_BYTES, handle, log_request};
use super::wire::{Rewind, Version, send};
use crate::http::keys::parse_key;

/// What a connection needs besides its socket.
pub(super) struct Conn {
    /// The server's configuration and sessions.
    pub(super) state: Arc<State>,
    /// The client, for the access log.
    pub(super) peer: SocketAddr,
    /// Turns true when the server stops: an idle connection then closes.
    pub(super) stop: watch::Receiver<bool>,
    /// hyper, configured, for a connection handed over.
    pub(super) http: hyper::server::conn::http1::Builder,
    /// Lets a stop wait for a handed-over connection gracefully.
    pub(super) watcher: Watcher,
    /// Held while the connection lives; the stop waits for all to drop.
    pub(super) _alive: mpsc::Sender<()>,
}

/// What the fast path answers.
enum Resource {
    /// GET or HEAD /healthz.
    Health,
    /// GET or HEAD /blobs/{key}.
    Blob(u64),
}

/// A request the fast path can answer, with the headers it needs.
struct FastRequest {
    /// HEAD, not GET.
    head: bool,
    /// What was asked for.
    resource: Resource,
    /// The path, for the access log.
    path: String,
    /// HTTP/1.0 or 1.1.
    version: Version,
    /// The client asked to keep the connection (1.1 unless it said close).
    keep_alive: bool,
    /// If-None-Match, Range and If-Range, when sent.
    conditions: HeaderMap,
}

/// What the bytes read so far hold.
enum Parsed {
    /// A whole request the fast path answers, and the bytes its head took.
    Fast(Box<FastRequest>, usize),
    /// Not a whole request head yet.
    Partial,
    /// A request for hyper (or bytes hyper will refuse properly).
    Other,
}

/// Serves `stream` until the client leaves, a timeout, or the stop.
pub(super) async fn serve(conn: Conn, mut stream: TcpStream) {
    let config = &conn.state.config;
    let mut buf = BytesMut::with_capacity(4096);
    let mut out = Vec::with_capacity(512);
    let mut stop = conn.stop.clone();
    loop {
        // The whole head must arrive within the header timeout, counted
        // from when the previous reply was sent (as hyper counts it).
        let deadline = tokio::time::Instant::now() + config.header_timeout;
        let req = loop {
            match parse(&buf) {
                Parsed::Fast(req, n) => {
                    buf.advance(n);
                    break req;
                }
                // hyper answers an oversized head with 431.
                Parsed::Other => return hand_over(conn, stream, buf).await,
                Parsed::Partial if buf.len() > MAX_HEADER_BYTES => {
                    return hand_over(conn, stream, buf).await;
                }
                Parsed::Partial => {}
            }
            buf.reserve(4096);
            let idle = buf.is_empty();
            let read = tokio::select! {
                r = tokio::time::timeout_at(deadline, stream.read_buf(&mut buf)) => r,
                _ = stop.wait_for(|s| *s), if idle => return,
            };
            match read {
                Ok(Ok(n)) if n > 0 => {}
                // End of stream, an error, or too slow: hang up.
                _ => return,
            }
        };
        let started = Instant::now();
        let reply = match req.resource {
            Resource::Health => status(StatusCode::OK, "ok"),
            Resource::Blob(key) => {
                get_blob(&conn.state, req.head, &req.conditions, key, true).await
            }
        };
        let code = reply.status();
        let length = reply.headers().get(header::CONTENT_LENGTH).cloned();
        let keep_alive = req.keep_alive && !*stop.borrow();
        let sent = send(
            &mut stream,
            &mut out,
            reply,
            req.head,
            req.version,
            keep_alive,
            config.send_timeout,
        )
        .await;
        if config.log {
            let method = if req.head { Method::HEAD } else { Method::GET };
            log_request(
                conn.peer,
                &method,
                &req.path,
                code,
                length.as_ref(),
                started,
            );
        }
        if sent.is_err() || !keep_alive {
            return;
        }
    }
}

/// Gives the connection to hyper, the bytes already read first.
async fn hand_over(conn: Conn, stream: TcpStream, buf: BytesMut) {
    let state = conn.state.clone();
    let peer = conn.peer;
    let svc = hyper::service::service_fn(move |req| handle(state.clone(), peer, req));
    let io = TokioIo::new(Rewind::new(buf.freeze(), stream));
    let _ = conn
        .watcher
        .watch(conn.http.serve_connection(io, svc))
        .await;
}

/// Parses the request at the start of `buf`.
fn parse(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        // Too many headers or malformed: hyper answers.
        Err(_) => return Parsed::Other,
    };
    if n > MAX_HEADER_BYTES {
        return Parsed::Other;
    }
    let head = match req.method {
        Some("GET") => false,
        Some("HEAD") => true,
        _ => return Parsed::Other,
    };
    let path = req.path.unwrap_or_default();
    let resource = if path == "/healthz" {
        Resource::Health
    } else {
        match path.strip_prefix("/blobs/").map(parse_key) {
            Some(Ok(key)) => Resource::Blob(key),
            // Bad keys, queries and other paths: hyper's routes answer.
            _ => return Parsed::Other,
        }
    };
    let version = if req.version == Some(0) {
        Version::Http10
    } else {
        Version::Http11
    };
    let mut fast = FastRequest {
        head,
        resource,
        path: path.to_string(),
        version,
        keep_alive: version == Version::Http11,
        conditions: HeaderMap::new(),
    };
    for h in req.headers.iter() {
        if !take_header(&mut fast, h) {
            return Parsed::Other;
        }
    }
    Parsed::Fast(Box::new(fast), n)
}

/// Notes one header of a GET or HEAD; false when it makes the request one
/// for hyper (a body, Expect, Upgrade).
fn take_header(fast: &mut FastRequest, h: &httparse::Header<'_>) -> bool {
    let name = h.name;
    if name.eq_ignore_ascii_case("content-length") {
        return h.value.trim_ascii() == b"0";
    }
    if ["transfer-encoding", "expect", "upgrade"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
    {
        return false;
    }
    if name.eq_ignore_ascii_case("connection") {
        for token in h.value.split(|b| *b == b',').map(<[u8]>::trim_ascii) {
            if token.eq_ignore_ascii_case(b"close") {
                fast.keep_alive = false;
            } else if token.eq_ignore_ascii_case(b"keep-alive") && fast.version == Version::Http10 {
                fast.keep_alive = true;
            }
        }
        return true;
    }
    for wanted in [header::IF_NONE_MATCH, header::RANGE, header::IF_RANGE] {
        if name.eq_ignore_ascii_case(wanted.as_str()) {
            match HeaderValue::from_bytes(h.value) {
                Ok(v) => fast.conditions.append(wanted, v),
                Err(_) => return false,
            };
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(raw: &str) -> Option<Box<FastRequest>> {
        match parse(raw.as_bytes()) {
            Parsed::Fast(req, n) => {
                assert_eq!(n, raw.find("\r\n\r\n").unwrap() + 4);
                Some(req)
            }
            _ => None,
        }
    }

    #[test]
    fn plain_gets_and_heads_take_the_fast_path() {
        let r = fast("GET /blobs/7 HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n").unwrap();
        assert!(matches!(r.resource, Resource::Blob(7)));
        assert!(!r.head && r.keep_alive);
        assert_eq!(r.conditions.get(header::RANGE).unwrap(), "bytes=0-9");
        let r = fast("HEAD /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(r.head && r.keep_alive && matches!(r.resource, Resource::Health));
        assert!(!fast("GET /blobs/1 HTTP/1.0\r\n\r\n").unwrap().keep_alive);
        assert!(
            !fast("GET /blobs/1 HTTP/1.1\r\nConnection: Close\r\n\r\n")
                .unwrap()
                .keep_alive
        );
        assert!(fast("GET /blobs/1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n").is_some());
    }

    #[test]
    fn everything_else_goes_to_hyper() {
        for raw in [
            "PUT /blobs/1 HTTP/1.1\r\nContent-Length: 1\r\n\r\n",
            "DELETE /blobs/1 HTTP/1.1\r\n\r\n",
            "GET /blobs/1 HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
            "GET /blobs/1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /blobs/1 HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /blobs/x HTTP/1.1\r\n\r\n",
            "GET /blobs/1?a=b HTTP/1.1\r\n\r\n",
            "GET /other HTTP/1.1\r\n\r\n",
            "GARBAGE\r\n\r\n",
        ] {
            assert!(fast(raw).is_none(), "{raw:?}");
        }
        assert!(matches!(
            parse(b"GET /blobs/1 HTTP/1.1\r\nHo"),
            Parsed::Partial
        ));
    }
}
