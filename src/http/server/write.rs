//! PUT and DELETE of a blob on a writable server: the bearer token, the
//! size limit, and durable, serialized writes.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::State;
use super::body::{ResponseBody, empty};
use super::reply::{method_not_allowed, status};
use super::session::ServerRef;

/// Equal without an early exit on the first differing byte, so the time
/// taken says nothing about how much of a guessed token was right.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// PUT (create or replace) and DELETE, for a writable server.
pub(super) async fn write_blob(
    state: &State,
    req: Request<Incoming>,
    key: u64,
) -> Response<ResponseBody> {
    let Some(w) = &state.config.writable else {
        return method_not_allowed(false);
    };
    if !authorized(&req, &w.token) {
        return unauthorized();
    }
    if req.method() == Method::DELETE {
        return delete_blob(state.server.clone(), key).await;
    }
    put_blob(state, req, key, w.max_blob_size).await
}

/// Whether the request carries the server's bearer token.
fn authorized(req: &Request<Incoming>, token: &str) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
}

/// 401, naming the scheme the client should retry with (RFC 9110 requires
/// `WWW-Authenticate`).
fn unauthorized() -> Response<ResponseBody> {
    let mut r = status(
        StatusCode::UNAUTHORIZED,
        "a valid bearer token is needed to write",
    );
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

/// DELETE: 204, or 404 when there was nothing to delete.
async fn delete_blob(server: ServerRef, key: u64) -> Response<ResponseBody> {
    let deleted = server
        .write(move |s| {
            if s.size(key)?.is_none() {
                return Ok(false);
            }
            s.delete(key)?;
            Ok(true)
        })
        .await;
    match deleted {
        Ok(true) => status(StatusCode::NO_CONTENT, ""),
        Ok(false) => status(StatusCode::NOT_FOUND, "no such blob"),
        Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// Reads the whole body first, so a slow or oversized upload never holds
/// the write lock.
async fn put_blob(
    state: &State,
    req: Request<Incoming>,
    key: u64,
    max_blob_size: u64,
) -> Response<ResponseBody> {
    let data = match read_body(req, max_blob_size, state.config.body_timeout).await {
        Ok(data) => data,
        Err(refused) => return refused,
    };
    let written = state
        .server
        .write(move |s| {
            let created = if s.size(key)?.is_some() {
                s.update(key, &data)?;
                false
            } else {
                s.insert(key, &data)?;
                true
            };
            let size = s.size(key)?.unwrap_or(0);
            Ok((created, s.etag(key, size)?))
        })
        .await;
    match written {
        Ok((created, etag)) => put_reply(key, created, etag.as_deref()),
        Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// A PUT's body, or the reply refusing it: too large (413), too slow (408)
/// or broken off (400).
async fn read_body(
    req: Request<Incoming>,
    max_blob_size: u64,
    timeout: Duration,
) -> std::result::Result<Bytes, Response<ResponseBody>> {
    // Refuse an announced oversize body before reading any of it.
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > max_blob_size) {
        return Err(too_large(max_blob_size));
    }
    let limited = http_body_util::Limited::new(req.into_body(), max_blob_size as usize);
    match tokio::time::timeout(timeout, limited.collect()).await {
        Err(_) => Err(status(
            StatusCode::REQUEST_TIMEOUT,
            "the body did not arrive in time",
        )),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large(max_blob_size)),
        Ok(Err(e)) => Err(status(
            StatusCode::BAD_REQUEST,
            &format!("cannot read the body: {e}"),
        )),
        Ok(Ok(c)) => Ok(c.to_bytes()),
    }
}

/// 201 with the new blob's address, or 204 for a replaced one; either with
/// the new version's tag, so the writer can make conditional reads at once.
fn put_reply(key: u64, created: bool, etag: Option<&str>) -> Response<ResponseBody> {
    let mut r = if created {
        let mut r = Response::new(empty());
        *r.status_mut() = StatusCode::CREATED;
        r.headers_mut().insert(
            header::LOCATION,
            HeaderValue::from_str(&format!("/blobs/{key}")).expect("ascii"),
        );
        r
    } else {
        status(StatusCode::NO_CONTENT, "")
    };
    if let Some(tag) = etag {
        r.headers_mut()
            .insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    }
    r
}

/// 413, naming the limit and the option that sets it.
fn too_large(max: u64) -> Response<ResponseBody> {
    status(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("blobs are limited to {max} bytes (--max-blob-size)"),
    )
}
