//! Response bodies: none, whole (a reply already in memory), an open file
//! (a blob that is a file of its own: sent with sendfile on the fast path),
//! or streamed (a large blob fed piece by piece from a blocking reader).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

use super::CHUNK;
use super::hand_back::HandBack;
use super::watched::WatchedFile;
use crate::store::MappedRuns;

/// Every response's body. The fast path (wire.rs) writes each kind its
/// own way; hyper polls it as a `Body`.
pub(super) enum ResponseBody {
    /// HEAD, 304, 201, 204 and empty blobs.
    Empty,
    /// Already in memory; taken by the first poll.
    Full(Option<Bytes>),
    /// `len` bytes of an open file from `start`: the fast path sends them
    /// with sendfile (no copy through this process); hyper gets them read
    /// on the blocking pool, as a stream.
    File(FileSpan),
    /// Pieces arriving from a blocking reader.
    Stream(ChannelBody),
    /// Runs of a mapped database file that no other writer may change
    /// while the server runs (writers kept out, see by_reference.rs): the
    /// fast path sends them by reference from the worker itself, with no
    /// reader holding a snapshot for them; hyper gets them copied.
    Mapped(MappedRuns),
}

/// Bytes [start, start + len) of an open file.
pub(super) struct FileSpan {
    /// Opened before the reply's headers were made, so it is the version
    /// they describe even if the file is replaced by rename meanwhile;
    /// checked before the last piece leaves (see watched.rs).
    pub(super) file: Arc<WatchedFile>,
    /// First byte sent.
    pub(super) start: u64,
    /// Bytes sent.
    pub(super) len: u64,
    /// A client that takes none of the bytes for this long is cut off.
    pub(super) send_timeout: Duration,
}

/// A body already in memory.
pub(super) fn full(data: impl Into<Bytes>) -> ResponseBody {
    ResponseBody::Full(Some(data.into()))
}

/// No body.
pub(super) fn empty() -> ResponseBody {
    ResponseBody::Empty
}

/// A body of exactly `len` bytes arriving on `rx`; an error on `rx` aborts
/// the response (the client sees a cut connection, not a short blob).
pub(super) fn streamed(rx: mpsc::Receiver<std::io::Result<Piece>>, len: u64) -> ResponseBody {
    ResponseBody::Stream(ChannelBody { rx, len })
}

impl ResponseBody {
    /// Bytes the body will carry.
    pub(super) fn len(&self) -> u64 {
        match self {
            ResponseBody::Empty => 0,
            ResponseBody::Full(b) => b.as_ref().map_or(0, |b| b.len() as u64),
            ResponseBody::File(f) => f.len,
            ResponseBody::Stream(s) => s.len,
            ResponseBody::Mapped(runs) => runs.len(),
        }
    }
}

/// One piece of a streamed body.
pub(super) enum Piece {
    /// Bytes in memory.
    Bytes(Bytes),
    /// Runs of a mapped file, valid while the piece lives (see stream.rs).
    Mapped(MappedPiece),
}

/// Runs of a mapped file whose reader holds its read transaction (and so
/// the bytes unchanged) until every such piece has been dropped.
pub(super) struct MappedPiece {
    /// The bytes.
    pub(super) runs: MappedRuns,
    /// Unmap its pages once written (see stream.rs).
    pub(super) release: bool,
    /// No other writer may change the file while the server runs, so the
    /// pages may go to the socket by reference (see by_reference.rs).
    pub(super) by_reference: bool,
    /// Dropped with the piece: the reader waits for all of them.
    pub(super) _held: std::sync::mpsc::Sender<()>,
    /// Asked when the reader must let go of its snapshot: the piece is then
    /// dropped where its writing reached, and what is left sent again
    /// (see wire.rs and stream.rs).
    pub(super) hand_back: Arc<HandBack>,
}

impl Piece {
    /// The piece's bytes as one buffer: a copy for a mapped piece (made
    /// while the piece, and so its read transaction, is alive), checked to
    /// be the file's (see `MappedRuns::check`).
    fn into_bytes(self) -> std::io::Result<Bytes> {
        match self {
            Piece::Bytes(b) => Ok(b),
            Piece::Mapped(m) => m
                .runs
                .to_vec()
                .map(Bytes::from)
                .map_err(|e| std::io::Error::other(e.to_string())),
        }
    }
}

/// A response body fed by a blocking reader through a bounded channel.
pub(super) struct ChannelBody {
    /// Pieces in order; an error ends the body.
    pub(super) rx: mpsc::Receiver<std::io::Result<Piece>>,
    /// Announced up front, so hyper sends Content-Length, not chunks.
    pub(super) len: u64,
}

/// Reads `span` of its file on the blocking pool into a channel: how hyper
/// (which cannot sendfile) gets a file body. The reader stops when the
/// client stops taking pieces for the send timeout or goes away.
fn read_file_into_channel(span: &FileSpan) -> ChannelBody {
    use std::os::unix::fs::FileExt;
    let (tx, rx) = mpsc::channel(2);
    let (file, start, len, timeout) = (span.file.clone(), span.start, span.len, span.send_timeout);
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut at = start;
        while at < start + len {
            let n = ((start + len - at) as usize).min(CHUNK);
            let mut piece = vec![0u8; n];
            let last = at + n as u64 == start + len;
            let piece = match file.file.read_exact_at(&mut piece, at) {
                // The last piece only once the file is found unchanged.
                Ok(()) if last => file.check().map(|()| Piece::Bytes(Bytes::from(piece))),
                Ok(()) => Ok(Piece::Bytes(Bytes::from(piece))),
                Err(e) => Err(std::io::Error::other(format!("the blob's file: {e}"))),
            };
            let failed = piece.is_err();
            let send = tokio::time::timeout(timeout, tx.send(piece));
            if !matches!(runtime.block_on(send), Ok(Ok(()))) || failed {
                return;
            }
            at += n as u64;
        }
    });
    ChannelBody { rx, len }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
        let this = &mut *self;
        if let ResponseBody::File(span) = this {
            *this = ResponseBody::Stream(read_file_into_channel(span));
        }
        if let ResponseBody::Mapped(runs) = this {
            match runs.to_vec() {
                Ok(bytes) => *this = full(bytes),
                Err(e) => return Poll::Ready(Some(Err(std::io::Error::other(e.to_string())))),
            }
        }
        match this {
            ResponseBody::Empty => Poll::Ready(None),
            ResponseBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Stream(s) => match s.rx.poll_recv(cx) {
                Poll::Ready(Some(Ok(p))) => Poll::Ready(Some(p.into_bytes().map(Frame::data))),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
            ResponseBody::File(_) | ResponseBody::Mapped(_) => {
                unreachable!("turned into a stream or a whole body above")
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty => true,
            ResponseBody::Full(b) => b.is_none(),
            _ => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len())
    }
}
