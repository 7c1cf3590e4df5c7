//! A large blob streamed from the blocking pool into a bounded channel,
//! piece by piece, all from one version of it (one read transaction).
//!
//! For the fast path, a SQLite blob in a rollback-journal database goes
//! as runs of the mapped database file (no copy here; the socket write
//! copies straight from the page cache), and the read transaction is held
//! until the last piece has been written, so no writer can change those
//! pages while they are sent. Otherwise pieces are read into reused
//! buffers (`store::piece_buffer`). Either way a client that takes no
//! piece for the send timeout is cut off, and the transaction, its lock
//! and the thread end then: a stalled client delays writers by that long.

use std::time::Duration;

use bytes::Bytes;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use super::CHUNK;
use super::body::{MappedPiece, Piece, ResponseBody, streamed};
use super::session::{ServerRef, ensure_open, with_session};
use crate::error::Result;
use crate::store::Session;

/// Bytes in one mapped piece: a piece costs no memory until written (it
/// points into the map), and its pages are unmapped once it is sent, so a
/// stalled stream keeps at most this much mapped; large enough that the
/// two threads rarely meet.
const MAPPED_PIECE: usize = 1 << 20;

/// Mapped streams that keep their pages mapped, at most; beyond this many
/// at once every stream releases its pages as it goes.
const MAPPED_RESIDENT_STREAMS: usize = 16;

/// Mapped streams in progress, all servers of the process together.
static MAPPED_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One mapped stream counted while it lasts.
struct InFlight;

impl InFlight {
    /// Counts this stream in.
    fn enter() -> InFlight {
        MAPPED_IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        InFlight
    }

    /// Whether more streams than `MAPPED_RESIDENT_STREAMS` are in progress.
    fn crowded(&self) -> bool {
        MAPPED_IN_FLIGHT.load(std::sync::atomic::Ordering::Relaxed) > MAPPED_RESIDENT_STREAMS
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        MAPPED_IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What to stream, and what the reply's headers already said of it.
pub(super) struct StreamRequest {
    /// The blob.
    pub(super) key: u64,
    /// First byte sent.
    pub(super) start: u64,
    /// Bytes sent.
    pub(super) len: u64,
    /// The blob's size as announced (Content-Length or Content-Range).
    pub(super) size: u64,
    /// The blob's tag as announced.
    pub(super) etag: Option<String>,
    /// A client that takes no piece for this long is cut off.
    pub(super) send_timeout: Duration,
    /// The consumer writes mapped pieces within the send timeout (the fast
    /// path): hyper, which has no write timeout, gets copied pieces only.
    pub(super) mapped_ok: bool,
}

/// Starts the reader on the blocking pool (a few threads per worker, so a
/// stream may wait there for one to be free); the body yields its pieces.
/// Returns once the reader has its store session: Err(why) when it cannot
/// open one, so the reply is an error status instead of a head followed by
/// nothing.
pub(super) async fn stream(
    server: &ServerRef,
    req: StreamRequest,
) -> std::result::Result<ResponseBody, String> {
    let (tx, rx) = mpsc::channel(1);
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let server = server.clone();
    let len = req.len;
    let mut feeder = Feeder {
        tx,
        // The worker's runtime drives the timer while this thread waits on it.
        runtime: Handle::current(),
        send_timeout: req.send_timeout,
        stalled: false,
    };
    tokio::task::spawn_blocking(move || {
        if let Err(e) = ensure_open(&server) {
            let _ = ready_tx.send(Err(e.to_string()));
            return;
        }
        if ready_tx.send(Ok(())).is_err() {
            return;
        }
        let sent = with_session(&server, |s| {
            if req.mapped_ok
                && let Some(sent) = send_mapped(s, &req, &mut feeder)?
            {
                return Ok(sent);
            }
            s.read_stream(req.key, req.start, req.len, CHUNK, &mut |piece| {
                feeder.send(Ok(Piece::Bytes(Bytes::from_owner(Recycled(piece)))))
            })
        });
        feeder.finish(sent, len);
    });
    match ready_rx.await {
        Ok(Ok(())) => Ok(streamed(rx, len)),
        Ok(Err(why)) => Err(why),
        Err(_) => Err("the stream's reader stopped before it began".to_string()),
    }
}

/// Sends the blob as runs of the mapped file when the store can give them:
/// Some(bytes sent), or None to read it the usual way. A blob that is no
/// longer the version the headers announced is an error (the client sees
/// a cut connection, never a mix of two versions).
fn send_mapped(
    s: &mut dyn Session,
    req: &StreamRequest,
    feeder: &mut Feeder,
) -> Result<Option<u64>> {
    s.begin_snapshot()?;
    let sent = (|| {
        let Some(blob) = s.mapped_blob(req.key, u64::MAX)? else {
            return Ok(None);
        };
        if blob.size != req.size || blob.etag != req.etag {
            feeder.send(Err(std::io::Error::other(
                "the blob changed while being read",
            )));
            return Ok(Some(0));
        }
        // Finding the runs touched every page of the blob. With few streams
        // of modest blobs those pages stay mapped (unmapping costs the other
        // threads a TLB flush, and the next reader a page fault per 64 KiB);
        // with many, or a large blob, they are let go, and each piece once
        // written, so only pieces being written count in the server's memory.
        let _flight = InFlight::enter();
        let release = _flight.crowded() || blob.size > crate::store::MAPPED_RESIDENT_UP_TO;
        if release {
            blob.runs.release_pages();
        }
        // Every piece holds a sender; when the last is dropped (written,
        // or thrown away with a connection that failed), recv() returns.
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let mut sent = 0;
        for runs in blob.runs.pieces(req.start, req.len, MAPPED_PIECE) {
            let n = runs.len();
            let piece = MappedPiece {
                runs,
                release,
                _held: held_tx.clone(),
            };
            if !feeder.send(Ok(Piece::Mapped(piece))) {
                break;
            }
            sent += n;
        }
        drop(held_tx);
        // Each write of the fast path ends within the send timeout, so
        // this wait does too; the bound only guards against a bug.
        let _ = held_rx.recv_timeout(req.send_timeout * 8 + Duration::from_secs(1));
        Ok(Some(sent))
    })();
    let ended = s.end_snapshot();
    let sent = sent?;
    ended?;
    Ok(sent)
}

/// The sending end of a stream, on the blocking thread.
struct Feeder {
    /// Pieces, or the error that ends the body.
    tx: mpsc::Sender<std::io::Result<Piece>>,
    /// Drives the send timeout while this thread waits.
    runtime: Handle,
    /// A client must take a piece within this time.
    send_timeout: Duration,
    /// The client took none for the send timeout.
    stalled: bool,
}

impl Feeder {
    /// Hands over a piece; false when the client went away or stalled.
    fn send(&mut self, piece: std::io::Result<Piece>) -> bool {
        let send = tokio::time::timeout(self.send_timeout, self.tx.send(piece));
        match self.runtime.block_on(send) {
            Ok(delivered) => delivered.is_ok(),
            Err(_) => {
                self.stalled = true;
                false
            }
        }
    }

    /// Ends the body: whole, or with an error so the client cannot take a
    /// short read for the whole blob.
    fn finish(self, sent: Result<u64>, len: u64) {
        let failure = match sent {
            Ok(n) if n == len => return,
            // The client went away or stopped reading: dropping the sender
            // ends the body short, and the connection is closed.
            Ok(_) if self.stalled || self.tx.is_closed() => return,
            Ok(_) => std::io::Error::other("the blob shrank while being read"),
            Err(e) => std::io::Error::other(e.to_string()),
        };
        let _ = self.tx.blocking_send(Err(failure));
    }
}

/// A streamed piece's buffer, handed back for reuse once hyper or the fast
/// path has sent it (see `store::piece_buffer`).
struct Recycled(Vec<u8>);

impl AsRef<[u8]> for Recycled {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        crate::store::recycle_piece(std::mem::take(&mut self.0));
    }
}
