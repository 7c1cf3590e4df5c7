//! GET and HEAD of a blob: conditional requests, ranges, and the choice
//! between a reply read in one call and one streamed chunk by chunk.

use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use super::body::{FileSpan, ResponseBody, empty, full};
use super::range::{RangeRequest, parse_range};
use super::reply::status;
use super::session::{ServerRef, ensure_open, with_snapshot};
use super::stream::{self, READ_LOCK_WAIT, StreamRequest};
use super::{CHUNK, State};
use crate::error::{Error, Result};

/// A blob as first looked up: enough to answer every header.
struct Found {
    /// Bytes in the blob.
    size: u64,
    /// Its version, when the store can tell one (for If-None-Match).
    etag: Option<String>,
    /// Where its bytes come from.
    source: Source,
}

/// Where a found blob's bytes come from.
enum Source {
    /// In memory already: a blob of at most one chunk (never for HEAD).
    Small(Bytes),
    /// Its own file, open (files stores): sent with sendfile.
    File(Arc<File>),
    /// Read and streamed piece by piece on the blocking pool when sent.
    Stream,
}

/// The bytes a reply carries: the whole blob (200) or one range (206).
pub(super) struct Span {
    /// 200 or 206.
    code: StatusCode,
    /// First byte sent.
    pub(super) start: u64,
    /// Bytes sent.
    pub(super) len: u64,
}

/// The bytes a GET or HEAD of a blob of `size` bytes tagged `etag` sends
/// (200 or 206), or the reply that answers it without them (304: the
/// client's copy is current; 416: no byte of the range is in the blob):
/// the same whether decided at look-up or again inside a stream's own
/// snapshot. The reply is boxed: it is the rare case, and a response is
/// large beside a span.
pub(super) fn answer(
    headers: &HeaderMap,
    size: u64,
    etag: Option<&str>,
) -> std::result::Result<Span, Box<Response<ResponseBody>>> {
    if let Some(tag) = etag
        && none_match_hits(headers, tag)
    {
        return Err(Box::new(not_modified(tag)));
    }
    let range_header = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .filter(|_| if_range_holds(headers, etag));
    Ok(match parse_range(range_header, size) {
        RangeRequest::Whole => Span {
            code: StatusCode::OK,
            start: 0,
            len: size,
        },
        RangeRequest::Part { start, end } => Span {
            code: StatusCode::PARTIAL_CONTENT,
            start,
            len: end - start + 1,
        },
        RangeRequest::Unsatisfiable => return Err(Box::new(range_not_satisfiable(size))),
    })
}

/// The headers a stream decides its reply by again, copied from the request.
fn conditions(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [header::IF_NONE_MATCH, header::RANGE, header::IF_RANGE] {
        for v in headers.get_all(&name) {
            kept.append(name.clone(), v.clone());
        }
    }
    kept
}

/// The reply to a request that failed: 503 when a writer kept the store's
/// readers waiting past the bound (try again), else 500.
pub(super) fn failure(e: &Error) -> Response<ResponseBody> {
    if e.is_busy() {
        let mut r = status(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("{e} (readers waited {READ_LOCK_WAIT:?} for a writer; try again)"),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
}

/// GET or HEAD of blob `key` (`head` for HEAD), with the request's
/// conditional and range headers.
/// `mapped_ok`: the caller writes every piece within the send timeout (the
/// fast path), so a stream may send a blob's pages from the mapped file.
pub(super) async fn get_blob(
    state: &State,
    head: bool,
    headers: &HeaderMap,
    key: u64,
    mapped_ok: bool,
) -> Response<ResponseBody> {
    // This thread's session first: a store that cannot be opened now (out
    // of descriptors, say) is a passing condition, answered as one.
    if let Err(e) = ensure_open(&state.server) {
        return unavailable(key, &e.to_string());
    }
    let found = match look_up_when_free(&state.server, key, head).await {
        Ok(Some(found)) => found,
        Ok(None) => return status(StatusCode::NOT_FOUND, "no such blob"),
        Err(e) => return failure(&e),
    };
    let span = match answer(headers, found.size, found.etag.as_deref()) {
        Ok(span) => span,
        Err(reply) => return *reply,
    };
    let body = if head || span.len == 0 {
        empty()
    } else {
        match &found.source {
            Source::Small(all) => {
                if all.len() as u64 != found.size {
                    return status(StatusCode::CONFLICT, "the blob changed while being read");
                }
                full(all.slice(span.start as usize..(span.start + span.len) as usize))
            }
            Source::File(file) => ResponseBody::File(FileSpan {
                file: file.clone(),
                start: span.start,
                len: span.len,
                send_timeout: state.config.send_timeout,
            }),
            // Its head and body both come from the stream's own snapshot.
            Source::Stream => {
                let request = StreamRequest {
                    key,
                    conditions: conditions(headers),
                    found: (found.size, found.etag),
                    send_timeout: state.config.send_timeout,
                    hold: state.config.hold_timeout,
                    mapped_ok,
                };
                return stream::reply(&state.server, request).await;
            }
        }
    };
    blob_reply(body, &span, found.size, found.etag.as_deref())
}

/// `look_up`, waiting while a writer waits for the store's readers: the
/// worker thread never sleeps on a lock (it serves every other connection
/// too), it tries again every millisecond for up to `READ_LOCK_WAIT`.
async fn look_up_when_free(server: &ServerRef, key: u64, head: bool) -> Result<Option<Found>> {
    let deadline = tokio::time::Instant::now() + READ_LOCK_WAIT;
    loop {
        match look_up(server, key, head) {
            Err(e) if e.is_busy() && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            found => return found,
        }
    }
}

/// 503: the store session blob `key` needs cannot be opened now.
pub(super) fn unavailable(key: u64, why: &str) -> Response<ResponseBody> {
    let text = format!("cannot serve blob {key} now ({why}); try again");
    status(StatusCode::SERVICE_UNAVAILABLE, &text)
}

/// Size, validator and where the bytes come from, in one step on this
/// worker thread: a page-cache hit costs microseconds, less than a hop to
/// the blocking pool. A blob that is a file of its own is opened (and sent
/// from that descriptor); otherwise a small blob is read here and a large
/// one streamed from the blocking pool. Inside the thread's shared read
/// snapshot (see `with_snapshot`), failing at once rather than waiting
/// when a lock is taken (see `look_up_when_free`).
fn look_up(server: &ServerRef, key: u64, head: bool) -> Result<Option<Found>> {
    with_snapshot(server, |s| {
        s.wait_for_locks(Duration::ZERO)?;
        if let Some(f) = s.blob_file(key)? {
            return Ok(Some(Found {
                size: f.size,
                etag: Some(f.etag),
                source: Source::File(Arc::new(f.file)),
            }));
        }
        // A small blob copied straight from the mapped pages (under the
        // snapshot's lock): no read system call, no SQL statement.
        if let Some(m) = s.mapped_blob(key, CHUNK as u64)? {
            let bytes = if head { Vec::new() } else { m.runs.to_vec()? };
            return Ok(Some(Found {
                size: m.size,
                etag: m.etag,
                source: Source::Small(Bytes::from(bytes)),
            }));
        }
        let max = if head { 0 } else { CHUNK as u64 };
        let Some((size, small)) = s.fetch_small(key, max)? else {
            return Ok(None);
        };
        let etag = s.etag(key, size)?;
        Ok(Some(Found {
            size,
            etag,
            source: small.map_or(Source::Stream, |b| Source::Small(Bytes::from(b))),
        }))
    })
}

/// Whether `If-None-Match` names the blob's current version (or `*`); weak
/// tags count too, as RFC 9110 compares them weakly for GET.
fn none_match_hits(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|inm| {
            inm.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t == tag || t.strip_prefix("W/") == Some(tag))
        })
}

/// Whether a Range applies under `If-Range` (RFC 9110 13.1.5): without the
/// header, always; with an entity tag, only when it is strong and equals the
/// blob's current tag; with a date, never (no Last-Modified is sent, so a
/// date cannot validate). When it does not hold, the whole blob is sent, so
/// a client resuming a blob that changed never splices two versions.
pub(super) fn if_range_holds(headers: &HeaderMap, current: Option<&str>) -> bool {
    match headers.get(header::IF_RANGE) {
        None => true,
        Some(v) => if_range_matches(v.to_str().unwrap_or(""), current),
    }
}

/// The If-Range comparison on the header's text: a strong match only.
fn if_range_matches(if_range: &str, current: Option<&str>) -> bool {
    let given = if_range.trim();
    given.starts_with('"') && current.is_some_and(|tag| !tag.starts_with("W/") && tag == given)
}

/// 304: the client's copy is current; the tag confirms which one.
fn not_modified(tag: &str) -> Response<ResponseBody> {
    let mut r = Response::new(empty());
    *r.status_mut() = StatusCode::NOT_MODIFIED;
    r.headers_mut()
        .insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    r
}

/// 416, with the size the client should have asked within.
fn range_not_satisfiable(size: u64) -> Response<ResponseBody> {
    let mut r = status(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable");
    r.headers_mut().insert(
        header::CONTENT_RANGE,
        HeaderValue::from_str(&format!("bytes */{size}")).expect("ascii"),
    );
    r
}

/// The headers of a 200 or 206 around `body`: bytes of a blob of `size`
/// bytes tagged `etag`.
pub(super) fn blob_reply(
    body: ResponseBody,
    span: &Span,
    size: u64,
    etag: Option<&str>,
) -> Response<ResponseBody> {
    let mut r = Response::new(body);
    *r.status_mut() = span.code;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(span.len));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Some(tag) = etag {
        h.insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    }
    if span.code == StatusCode::PARTIAL_CONTENT {
        h.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&format!(
                "bytes {}-{}/{}",
                span.start,
                span.start + span.len - 1,
                size
            ))
            .expect("ascii"),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::if_range_matches;

    #[test]
    fn if_range_holds_only_for_the_same_strong_tag() {
        let tag = Some("\"v1\"");
        assert!(if_range_matches("\"v1\"", tag));
        assert!(if_range_matches("  \"v1\" ", tag));
        assert!(!if_range_matches("\"v0\"", tag), "a changed blob");
        assert!(!if_range_matches("W/\"v1\"", tag), "weak tags never match");
        assert!(
            !if_range_matches("Sun, 22 Nov 2026 10:00:00 GMT", tag),
            "dates"
        );
        assert!(!if_range_matches("\"v1\"", None), "no tag to compare");
        assert!(!if_range_matches("\"v1\"", Some("W/\"v1\"")));
    }
}
