//! GET and HEAD of a blob: the look-up, and the choice between a reply
//! read in one call and one streamed chunk by chunk (what the request's
//! conditional and range headers ask is decided in answer.rs).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::HeaderMap;
use hyper::{Response, StatusCode};

use super::answer::{answer, blob_reply, conditions};
use super::body::{FileSpan, ResponseBody, empty, full};
use super::open_files::{Cached, OpenFile, with_cache};
use super::reply::{failure, status, unavailable};
use super::session::{ServerRef, ensure_open, with_snapshot};
use super::stream::{self, StreamRequest};
use super::watched::WatchedFile;
use super::{CHUNK, READ_LOCK_WAIT, State};
use crate::error::Result;
use crate::store::{MAPPED_RESIDENT_UP_TO, MappedRuns};

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
    File(Arc<WatchedFile>),
    /// Read and streamed piece by piece on the blocking pool when sent.
    Stream,
    /// Its runs in the mapped database file, which no other writer may
    /// change while the server runs: sent by reference from the worker.
    Mapped(MappedRuns),
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
    let valid = state.config.open_file_valid;
    let uncopied = mapped_ok && state.by_reference && !head;
    let found = match look_up_when_free(&state.server, key, head, valid, uncopied).await {
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
            Source::Mapped(runs) => ResponseBody::Mapped(runs.span(span.start, span.len)),
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
                    by_reference: state.by_reference,
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
async fn look_up_when_free(
    server: &ServerRef,
    key: u64,
    head: bool,
    valid: Duration,
    uncopied: bool,
) -> Result<Option<Found>> {
    let deadline = tokio::time::Instant::now() + READ_LOCK_WAIT;
    loop {
        match look_up(server, key, (head, uncopied), valid) {
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
/// when a lock is taken (see `look_up_when_free`). A blob file opened
/// within `valid` (or found unchanged since) is sent from its kept
/// descriptor (open_files.rs); zero keeps none. With `uncopied` (writers
/// kept out for the server's life, a GET on the fast path), a blob of up
/// to `MAPPED_RESIDENT_UP_TO` is found as mapped runs here too, and sent
/// from them without the blocking pool: its pages stay the file's after
/// this snapshot ends. A larger one is streamed, so a walk of its chain
/// never holds this thread up for long.
fn look_up(
    server: &ServerRef,
    key: u64,
    (head, uncopied): (bool, bool),
    valid: Duration,
) -> Result<Option<Found>> {
    // Read before the open, so an entry opened before a write through the
    // server is never kept as if opened after it.
    let writes = server.writes();
    let now = Instant::now();
    if !valid.is_zero()
        && let Some(open) = kept_file(server, key, writes, now, valid)?
    {
        return Ok(Some(Found::file(open)));
    }
    with_snapshot(server, |s| {
        s.wait_for_locks(Duration::ZERO)?;
        if let Some(f) = s.blob_file(key)? {
            let open = OpenFile {
                file: Arc::new(WatchedFile::new(f.file, f.identity)),
                size: f.size,
                etag: f.etag,
            };
            if !valid.is_zero() {
                with_cache(server.id(), writes, |c| c.insert(key, open.clone(), now));
            }
            return Ok(Some(Found::file(open)));
        }
        // A small blob copied straight from the mapped pages (under the
        // snapshot's lock): no read system call, no SQL statement.
        let most = if uncopied {
            MAPPED_RESIDENT_UP_TO
        } else {
            CHUNK as u64
        };
        if let Some(m) = s.mapped_blob(key, most)? {
            let source = if m.size > CHUNK as u64 {
                Source::Mapped(m.runs)
            } else if head {
                Source::Small(Bytes::new())
            } else {
                Source::Small(Bytes::from(m.runs.to_vec()?))
            };
            return Ok(Some(Found {
                size: m.size,
                etag: m.etag,
                source,
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

/// Blob `key`'s kept descriptor, when there is one and its file is the one
/// it was opened on: checked within `valid`, or its name's tag found the
/// same now (the stat a look-up costs once per `valid`). A file changed or
/// gone, or found written into while it was sent, loses its entry, and the
/// caller opens it afresh.
fn kept_file(
    server: &ServerRef,
    key: u64,
    writes: u64,
    now: Instant,
    valid: Duration,
) -> Result<Option<OpenFile>> {
    match with_cache(server.id(), writes, |c| c.get(key, now, valid)) {
        Cached::Missing => Ok(None),
        Cached::Fresh(open) | Cached::Stale(open) if open.file.changed() => {
            with_cache(server.id(), writes, |c| c.remove(key));
            Ok(None)
        }
        Cached::Fresh(open) => Ok(Some(open)),
        Cached::Stale(open) => {
            let tag = with_snapshot(server, |s| s.etag(key, open.size))?;
            let same = tag.as_deref() == Some(open.etag.as_str());
            with_cache(server.id(), writes, |c| {
                if same {
                    c.confirm(key, now);
                } else {
                    c.remove(key);
                }
            });
            Ok(same.then_some(open))
        }
    }
}

impl Found {
    /// A blob sent from its file's open descriptor.
    fn file(open: OpenFile) -> Self {
        Found {
            size: open.size,
            etag: Some(open.etag),
            source: Source::File(open.file),
        }
    }
}
