//! GET and HEAD of a blob: conditional requests, ranges, and the choice
//! between a reply read in one call and one streamed chunk by chunk.

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::mpsc;

use super::body::{ResponseBody, empty, full, streamed};
use super::range::{RangeRequest, parse_range};
use super::routes::status;
use super::session::with_session;
use super::{CHUNK, State};

pub(super) async fn get_blob(
    state: &State,
    req: &Request<Incoming>,
    key: u64,
) -> Response<ResponseBody> {
    let head = req.method() == Method::HEAD;
    let range_header = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // Size, validator and (for a small blob) the bytes, in one step on this
    // worker thread: a page-cache hit costs microseconds, less than a hop
    // to the blocking pool. Large blobs are streamed from the blocking pool.
    let server = state.server.clone();
    let found = with_session(&server, |s| {
        let max = if head { 0 } else { CHUNK as u64 };
        let Some((size, small)) = s.fetch_small(key, max)? else {
            return Ok(None);
        };
        let etag = s.etag(key, size)?;
        Ok(Some((size, etag, small.map(Bytes::from))))
    });
    let (size, etag, small) = match found {
        Ok(Some(x)) => x,
        Ok(None) => return status(StatusCode::NOT_FOUND, "no such blob"),
        Err(e) => return status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    if let Some(tag) = &etag
        && let Some(inm) = req
            .headers()
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
        && inm
            .split(',')
            .map(str::trim)
            .any(|t| t == "*" || t == tag || t.strip_prefix("W/") == Some(tag))
    {
        let mut r = Response::new(empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r.headers_mut()
            .insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
        return r;
    }
    let (code, start, len) = match parse_range(range_header.as_deref(), size) {
        RangeRequest::Whole => (StatusCode::OK, 0, size),
        RangeRequest::Part { start, end } => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
        RangeRequest::Unsatisfiable => {
            let mut r = status(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable");
            r.headers_mut().insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&format!("bytes */{size}")).expect("ascii"),
            );
            return r;
        }
    };
    let body = if head || len == 0 {
        empty()
    } else if let Some(all) = small {
        if all.len() as u64 != size {
            return status(StatusCode::CONFLICT, "the blob changed while being read");
        }
        full(all.slice(start as usize..(start + len) as usize))
    } else {
        let (tx, rx) = mpsc::channel(4);
        let server = state.server.clone();
        tokio::task::spawn_blocking(move || {
            let streamed = with_session(&server, |s| {
                s.read_stream(key, start, len, CHUNK, &mut |piece| {
                    tx.blocking_send(Ok(Bytes::from(piece))).is_ok()
                })
            });
            let failure = match streamed {
                Ok(n) if n == len => return,
                Ok(_) if tx.is_closed() => return, // the client went away
                Ok(_) => std::io::Error::other("the blob shrank while being read"),
                Err(e) => std::io::Error::other(e.to_string()),
            };
            let _ = tx.blocking_send(Err(failure));
        });
        streamed(rx, len)
    };
    let mut r = Response::new(body);
    *r.status_mut() = code;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Some(tag) = &etag {
        h.insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    }
    if code == StatusCode::PARTIAL_CONTENT {
        h.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&format!("bytes {}-{}/{size}", start, start + len - 1))
                .expect("ascii"),
        );
    }
    r
}
