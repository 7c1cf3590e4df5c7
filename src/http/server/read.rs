//! GET and HEAD of a blob: the look-up, and the choice between a reply
//! read in one call and one streamed chunk by chunk (what the request's
//! conditional and range headers ask is decided in answer.rs).

use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::HeaderMap;
use hyper::{Response, StatusCode};

use super::answer::{answer, blob_reply, conditions};
use super::body::{FileSpan, ResponseBody, empty, full};
use super::reply::{failure, status, unavailable};
use super::session::{ServerRef, ensure_open, with_snapshot};
use super::stream::{self, StreamRequest};
use super::{CHUNK, READ_LOCK_WAIT, State};
use crate::error::Result;

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
