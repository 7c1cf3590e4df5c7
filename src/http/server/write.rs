//! PUT and DELETE of a blob on a writable server: the bearer token, the
//! size limit, and durable, serialized writes.

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::State;
use super::body::{ResponseBody, empty};
use super::routes::{method_not_allowed, status};
use super::session::with_session;

/// Serializes writes from all worker threads (one writer at a time, as
/// SQLite allows anyway; for files it keeps create-or-replace atomic).
static WRITE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let Some(w) = state.config.writable.clone() else {
        return method_not_allowed(false);
    };
    let authorized = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| constant_time_eq(t.as_bytes(), w.token.as_bytes()));
    if !authorized {
        let mut r = status(
            StatusCode::UNAUTHORIZED,
            "a valid bearer token is needed to write",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    }
    let server = state.server.clone();
    if req.method() == Method::DELETE {
        let done = tokio::task::spawn_blocking(move || {
            let _guard = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
            with_session(&server, |s| {
                if s.size(key)?.is_none() {
                    return Ok(false);
                }
                s.delete(key)?;
                Ok(true)
            })
        })
        .await;
        return match done {
            Ok(Ok(true)) => status(StatusCode::NO_CONTENT, ""),
            Ok(Ok(false)) => status(StatusCode::NOT_FOUND, "no such blob"),
            Ok(Err(e)) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
            Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
    }
    // PUT: refuse an announced oversize body before reading any of it.
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > w.max_blob_size) {
        return too_large(w.max_blob_size);
    }
    let limited = http_body_util::Limited::new(req.into_body(), w.max_blob_size as usize);
    let data = match tokio::time::timeout(state.config.body_timeout, limited.collect()).await {
        Err(_) => {
            return status(
                StatusCode::REQUEST_TIMEOUT,
                "the body did not arrive in time",
            );
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large(w.max_blob_size);
        }
        Ok(Err(e)) => {
            return status(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
            );
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    let done = tokio::task::spawn_blocking(move || {
        let _guard = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        with_session(&server, |s| {
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
    })
    .await;
    match done {
        Ok(Ok((created, etag))) => {
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
                    .insert(header::ETAG, HeaderValue::from_str(&tag).expect("ascii"));
            }
            r
        }
        Ok(Err(e)) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => status(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn too_large(max: u64) -> Response<ResponseBody> {
    status(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("blobs are limited to {max} bytes (--max-blob-size)"),
    )
}
