//! What a GET or HEAD of a blob answers, from the blob's size and tag and
//! the request's conditional and range headers: the bytes sent (200 or
//! 206) or a reply without them (304, 416), and the head around those
//! bytes. The same decision whether made at look-up (read.rs) or again
//! inside a stream's own snapshot (stream.rs), so it lives beneath both.

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use super::body::{ResponseBody, empty};
use super::range::{RangeRequest, parse_range};
use super::reply::status;

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

/// The headers a stream decides its reply by again, copied from the
/// request: those [`answer`] reads.
pub(super) fn conditions(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [header::IF_NONE_MATCH, header::RANGE, header::IF_RANGE] {
        for v in headers.get_all(&name) {
            kept.append(name.clone(), v.clone());
        }
    }
    kept
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
