//! Routing: which handler a request goes to, the replies that need no
//! store (health check, bad paths, wrong methods), and the access log.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::State;
use super::body::{ResponseBody, empty};
use super::read::get_blob;
use super::reply::{method_not_allowed, status};
use super::write::write_blob;
use crate::http::keys::parse_key;

/// Request headers larger than this in total are refused (431).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// The reply to one request, by path and method.
async fn route(state: &State, req: Request<Incoming>) -> Response<ResponseBody> {
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum::<usize>()
        + req.uri().to_string().len();
    if header_bytes > MAX_HEADER_BYTES {
        return status(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request headers over 16 KiB",
        );
    }
    let writable = state.config.writable.is_some();
    let path = req.uri().path().to_string();
    if path == "/healthz" {
        return match *req.method() {
            Method::GET | Method::HEAD => status(StatusCode::OK, "ok"),
            _ => method_not_allowed(false),
        };
    }
    let Some(segment) = path.as_str().strip_prefix("/blobs/") else {
        return status(
            StatusCode::NOT_FOUND,
            "not found: blobs are at /blobs/{key}",
        );
    };
    let key = match parse_key(segment) {
        Ok(k) => k,
        Err(e) => return status(StatusCode::BAD_REQUEST, &format!("bad key: {e}")),
    };
    match *req.method() {
        Method::GET | Method::HEAD => {
            get_blob(
                state,
                req.method() == Method::HEAD,
                req.headers(),
                key,
                false,
            )
            .await
        }
        Method::PUT | Method::DELETE if writable => write_blob(state, req, key).await,
        _ => method_not_allowed(writable),
    }
}

/// One request, end to end: routed, its body dropped for HEAD, logged.
pub(super) async fn handle(
    state: Arc<State>,
    peer: SocketAddr,
    req: Request<Incoming>,
) -> std::result::Result<Response<ResponseBody>, Infallible> {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut resp = route(&state, req).await;
    if method == Method::HEAD {
        // Same headers as GET, no body.
        *resp.body_mut() = empty();
    }
    if state.config.log {
        let length = resp.headers().get(header::CONTENT_LENGTH);
        log_request(peer, &method, &path, resp.status(), length, started);
    }
    Ok(resp)
}

/// One access-log line on stderr: client, request, status, length, time.
pub(super) fn log_request(
    peer: SocketAddr,
    method: &Method,
    path: &str,
    code: StatusCode,
    length: Option<&HeaderValue>,
    started: Instant,
) {
    eprintln!(
        "{peer} \"{method} {path}\" {} {} {:.3}ms",
        code.as_u16(),
        length.and_then(|v| v.to_str().ok()).unwrap_or("-"),
        started.elapsed().as_secs_f64() * 1e3
    );
}
