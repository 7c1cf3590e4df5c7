//! Replies that need no store: plain-text statuses (so a person with curl
//! reads why), 405 with the methods the server takes, and the replies to a
//! request that failed or cannot be served now. Shared by the routes, the
//! fast path and the read, stream and write handlers.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::READ_LOCK_WAIT;
use super::body::{ResponseBody, full};
use crate::error::Error;

/// A plain-text reply, so that a person with curl reads why.
pub(super) fn status(code: StatusCode, text: &str) -> Response<ResponseBody> {
    let mut r = Response::new(full(format!("{text}\n")));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// 405, with the methods this server does take (RFC 9110 requires `Allow`).
pub(super) fn method_not_allowed(writable: bool) -> Response<ResponseBody> {
    let mut r = status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    r.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_static(if writable {
            "GET, HEAD, PUT, DELETE"
        } else {
            "GET, HEAD"
        }),
    );
    r
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

/// 503: the store session blob `key` needs cannot be opened now.
pub(super) fn unavailable(key: u64, why: &str) -> Response<ResponseBody> {
    let text = format!("cannot serve blob {key} now ({why}); try again");
    status(StatusCode::SERVICE_UNAVAILABLE, &text)
}
