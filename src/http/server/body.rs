//! Response bodies: whole (a reply already in memory) or streamed (a large
//! blob fed piece by piece from a blocking reader).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// Every response's body, boxed so whole and streamed replies share a type.
pub(super) type ResponseBody = BoxBody<Bytes, std::io::Error>;

/// A body already in memory.
pub(super) fn full(data: impl Into<Bytes>) -> ResponseBody {
    Full::new(data.into())
        .map_err(|never| match never {})
        .boxed()
}

/// No body: HEAD, 304, 201 and empty blobs.
pub(super) fn empty() -> ResponseBody {
    Empty::new().map_err(|never| match never {}).boxed()
}

/// A body of exactly `len` bytes arriving on `rx`; an error on `rx` aborts
/// the response (the client sees a cut connection, not a short blob).
pub(super) fn streamed(rx: mpsc::Receiver<std::io::Result<Bytes>>, len: u64) -> ResponseBody {
    ChannelBody { rx, len }.boxed()
}

/// A response body fed by a blocking reader through a bounded channel.
struct ChannelBody {
    /// Pieces in order; an error ends the body.
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    /// Announced up front, so hyper sends Content-Length, not chunks.
    len: u64,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(b))) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}
