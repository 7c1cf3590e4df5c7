//! Replies that need no store: plain-text statuses (so a person with curl
//! reads why) and 405 with the methods the server takes. Shared by the
//! routes, the fast path and the read and write handlers.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::body::{ResponseBody, full};

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
