//! Writing a reply on the fast path: the head in one buffer, a small body
//! beside it in one writev, a file body with sendfile (the bytes go from
//! the page cache to the socket without passing through this process) but
//! for its last bytes, sent once the file is found unchanged, a
//! streamed body piece by piece; every wait on the client bounded by the
//! send timeout. And `Rewind`, which hands hyper a connection together with
//! the bytes the fast path already read from it.

use std::cell::RefCell;
use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Buf, Bytes};
use hyper::header;
use hyper::{Response, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, Interest, ReadBuf};
use tokio::net::TcpStream;

use super::body::{FileSpan, MappedPiece, Piece, ResponseBody};
use super::by_reference;
use super::hand_back::HandBack;
use crate::store::MappedRuns;

/// The request's HTTP version: a 1.0 client keeps its connection only when
/// it asked to, and is told so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Version {
    /// HTTP/1.0.
    Http10,
    /// HTTP/1.1.
    Http11,
}

/// Writes `reply` (no body for HEAD, with the GET's headers) on `stream`,
/// its head built in `out`. An error means the connection must close: the
/// client went away or stalled, or a streamed blob failed part way (the
/// client then sees a cut connection, never a short blob).
pub(super) async fn send(
    stream: &mut TcpStream,
    out: &mut Vec<u8>,
    reply: Response<ResponseBody>,
    head: bool,
    version: Version,
    keep_alive: bool,
    send_timeout: Duration,
) -> io::Result<()> {
    let (parts, body) = reply.into_parts();
    write_head(out, &parts, body.len(), version, keep_alive);
    match if head { ResponseBody::Empty } else { body } {
        ResponseBody::Empty | ResponseBody::Full(None) => {
            write_all(stream, out, send_timeout).await
        }
        ResponseBody::Full(Some(b)) => {
            let mut parts = [IoSlice::new(out), IoSlice::new(&b)];
            write_all_vectored(stream, &mut parts, send_timeout).await
        }
        ResponseBody::File(span) if span.len <= CORK_ABOVE => send_file(stream, out, &span).await,
        ResponseBody::File(span) => {
            // Corked, the head and the file leave in full segments, and the
            // last partial one when the cork comes off (nginx's tcp_nopush).
            cork(stream, true);
            let sent = send_file(stream, out, &span).await;
            cork(stream, false);
            sent
        }
        ResponseBody::Mapped(runs) => {
            // The head leaves with the first pages (MSG_MORE, then
            // splice's MORE); the last byte's write pushes all out.
            send_more(stream, out, send_timeout).await?;
            let written =
                write_runs(stream, &runs, true, send_timeout, &HandBack::default()).await?;
            if written == runs.len() {
                Ok(())
            } else {
                Err(io::Error::other("the blob's pages were not all sent"))
            }
        }
        ResponseBody::Stream(mut s) => {
            write_all(stream, out, send_timeout).await?;
            let mut sent = 0;
            while let Some(piece) = s.rx.recv().await {
                sent += write_piece(stream, piece?, &mut s.rx, send_timeout).await?;
            }
            if sent == s.len {
                Ok(())
            } else {
                Err(io::Error::other("the stream ended short of the blob"))
            }
        }
    }
}

/// The status line and headers: those of the reply, plus Content-Length
/// when it has none (and may carry a body), Date, and Connection when the
/// default for the version does not hold.
fn write_head(
    out: &mut Vec<u8>,
    parts: &hyper::http::response::Parts,
    body_len: u64,
    version: Version,
    keep_alive: bool,
) {
    use std::io::Write;
    out.clear();
    let code = parts.status;
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\n",
        code.as_u16(),
        code.canonical_reason().unwrap_or("")
    );
    for (name, value) in &parts.headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let bodiless = code == StatusCode::NOT_MODIFIED
        || code == StatusCode::NO_CONTENT
        || code.is_informational();
    if !bodiless && !parts.headers.contains_key(header::CONTENT_LENGTH) {
        let _ = write!(out, "content-length: {body_len}\r\n");
    }
    DATE.with(|d| out.extend_from_slice(d.borrow_mut().now().as_bytes()));
    match (version, keep_alive) {
        (_, false) => out.extend_from_slice(b"connection: close\r\n"),
        (Version::Http10, true) => out.extend_from_slice(b"connection: keep-alive\r\n"),
        (Version::Http11, true) => {}
    }
    out.extend_from_slice(b"\r\n");
}

thread_local! {
    /// The Date header line, formatted once a second per thread.
    static DATE: RefCell<DateLine> = const { RefCell::new(DateLine { second: 0, line: String::new() }) };
}

/// A cached `date: ...` header line.
struct DateLine {
    /// The Unix second it was made for.
    second: u64,
    /// `date: <IMF-fixdate>\r\n`.
    line: String,
}

impl DateLine {
    /// The line for the current second.
    fn now(&mut self) -> &str {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second != self.second || self.line.is_empty() {
            self.second = second;
            self.line = format!("date: {}\r\n", httpdate::fmt_http_date(now));
        }
        &self.line
    }
}

/// Writes one streamed piece (a mapped one straight from the map, see
/// `write_mapped`); returns the bytes written.
async fn write_piece(
    stream: &mut TcpStream,
    piece: Piece,
    rx: &mut tokio::sync::mpsc::Receiver<io::Result<Piece>>,
    send_timeout: Duration,
) -> io::Result<u64> {
    match piece {
        Piece::Bytes(b) => {
            write_all(stream, &b, send_timeout).await?;
            Ok(b.len() as u64)
        }
        Piece::Mapped(m) => write_mapped(stream, m, rx, send_timeout).await,
    }
}

/// Writes a mapped piece straight from the map (by reference when the
/// piece allows it, see by_reference.rs), unless or until its
/// reader asks for it back (it must let go of its snapshot, see
/// stream.rs): then the piece is dropped where its writing reached, with
/// every mapped piece queued behind it, and the bytes not written are
/// counted as given back; the reader sends them again. Returns the bytes
/// written.
async fn write_mapped(
    stream: &mut TcpStream,
    m: MappedPiece,
    rx: &mut tokio::sync::mpsc::Receiver<io::Result<Piece>>,
    send_timeout: Duration,
) -> io::Result<u64> {
    let hand_back = m.hand_back.clone();
    let written = write_runs(stream, &m.runs, m.by_reference, send_timeout, &hand_back).await?;
    let unwritten = m.runs.len() - written;
    if m.release {
        m.runs.release_pages();
    }
    if unwritten > 0 {
        // The pieces queued behind this one go back too, so the reader can
        // end its snapshot now, not once they are written.
        let mut given_back = unwritten;
        while let Ok(Ok(Piece::Mapped(queued))) = rx.try_recv() {
            given_back += queued.runs.len();
        }
        // Counted before the last piece is dropped: the reader reads the
        // count once every piece is gone.
        hand_back.gave_back(given_back);
    }
    drop(m);
    Ok(written)
}

/// Writes `runs` (by reference with `by_reference`, see by_reference.rs,
/// else copied by the socket), unless or until `hand_back` is asked;
/// returns the bytes written. All but the last byte first: that one goes
/// only once the map is known to have held the file's bytes throughout
/// (see `MappedRuns::check`), so a client whose bytes another process cut
/// from the file meanwhile gets a cut connection, never a whole reply with
/// zeros in it.
async fn write_runs(
    stream: &mut TcpStream,
    runs: &MappedRuns,
    by_reference: bool,
    send_timeout: Duration,
    hand_back: &HandBack,
) -> io::Result<u64> {
    let mut slices: Vec<&[u8]> = runs.slices().filter(|s| !s.is_empty()).collect();
    let final_byte = match slices.pop() {
        Some(last) => {
            let (body, final_byte) = last.split_at(last.len() - 1);
            slices.push(body);
            final_byte
        }
        None => &[][..],
    };
    let mut slices: Vec<IoSlice<'_>> = slices.into_iter().map(IoSlice::new).collect();
    let mut written = if by_reference {
        by_reference::send_pages(stream, &mut slices, send_timeout, hand_back).await?
    } else {
        write_copied(stream, &mut slices, send_timeout, hand_back).await?
    };
    if !final_byte.is_empty() && written + 1 == runs.len() && !hand_back.asked() {
        runs.check().map_err(|e| io::Error::other(e.to_string()))?;
        write_all(stream, final_byte, send_timeout).await?;
        written += 1;
    }
    Ok(written)
}

/// Writes `parts` (slices of a map) into the socket, which copies them,
/// each wait on the client at most `send_timeout`; stops early once
/// `hand_back` is asked. Returns the bytes written.
async fn write_copied(
    stream: &mut TcpStream,
    mut parts: &mut [IoSlice<'_>],
    send_timeout: Duration,
    hand_back: &HandBack,
) -> io::Result<u64> {
    let mut written = 0u64;
    while !parts.is_empty() && !hand_back.asked() {
        let window = parts.len().min(512);
        let write = tokio::time::timeout(send_timeout, stream.write_vectored(&parts[..window]));
        let n = tokio::select! {
            n = write => n.map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "client stalled"))??,
            () = hand_back.wait() => break,
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut parts, n);
        written += n as u64;
    }
    Ok(written)
}

/// Writes all of `data` (a head or one piece of at most a chunk) within
/// `send_timeout`.
async fn write_all(stream: &mut TcpStream, data: &[u8], send_timeout: Duration) -> io::Result<()> {
    tokio::time::timeout(send_timeout, stream.write_all(data))
        .await
        .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::TimedOut, "client stalled")))
}

/// Writes every slice, in as few writev calls as the socket takes.
async fn write_all_vectored(
    stream: &mut TcpStream,
    mut parts: &mut [IoSlice<'_>],
    send_timeout: Duration,
) -> io::Result<()> {
    while !parts.is_empty() {
        let n = tokio::time::timeout(send_timeout, stream.write_vectored(parts))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "client stalled"))??;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut parts, n);
    }
    Ok(())
}

/// File bodies larger than this are sent corked (two more system calls,
/// worth it only when sendfile takes several rounds); smaller ones go with
/// the head sent with MSG_MORE.
const CORK_ABOVE: u64 = 256 * 1024;

/// Sets or clears TCP_CORK; a failure only costs segment sizes.
fn cork(stream: &TcpStream, on: bool) {
    let value: libc::c_int = on.into();
    // SAFETY: setsockopt on this stream's open socket with an int option.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CORK,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Writes `data` with MSG_MORE: the head waits in the socket to leave in
/// one segment with the first bytes sendfile adds (nginx's tcp_nopush).
async fn send_more(stream: &TcpStream, mut data: &[u8], send_timeout: Duration) -> io::Result<()> {
    while !data.is_empty() {
        let fd = stream.as_raw_fd();
        let sent = stream.try_io(Interest::WRITABLE, || {
            // SAFETY: send() on this stream's open socket from a live slice.
            let n = unsafe { libc::send(fd, data.as_ptr().cast(), data.len(), libc::MSG_MORE) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        });
        match sent {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_writable(stream, send_timeout).await?
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The bytes at the end of a file body that are read, and sent from
/// memory, only once the file is found as it was when opened: a change in
/// place during the send then cuts the connection before the client has
/// the whole body (see watched.rs). Small bodies are all held back, and
/// leave with the head in one write.
const HELD_BACK: u64 = 16 * 1024;

/// Sends the head in `out`, then the span of the file: all but the last
/// `HELD_BACK` bytes with sendfile, those read into `out` and sent after
/// the file's check. A file that turns out shorter than its span (truncated
/// in place after it was opened) or changed ends in an error: the
/// connection is cut rather than a short or mixed blob passed off as whole.
async fn send_file(stream: &mut TcpStream, out: &mut Vec<u8>, span: &FileSpan) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let held = span.len.min(HELD_BACK);
    let bulk = span.len - held;
    if bulk > 0 {
        send_more(stream, out, span.send_timeout).await?;
        out.clear();
        sendfile_all(stream, span, span.start, bulk).await?;
    }
    let head = out.len();
    out.resize(head + held as usize, 0);
    span.file
        .file
        .read_exact_at(&mut out[head..], span.start + bulk)
        .map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => shrank(),
            _ => e,
        })?;
    span.file.check()?;
    write_all(stream, out, span.send_timeout).await
}

/// The error of a file found shorter than its span.
fn shrank() -> io::Error {
    io::Error::other("the blob's file shrank while being sent")
}

/// Sends `len` bytes of the span's file from `start` with sendfile.
async fn sendfile_all(stream: &TcpStream, span: &FileSpan, start: u64, len: u64) -> io::Result<()> {
    let (sock, file) = (stream.as_raw_fd(), span.file.file.as_raw_fd());
    let (mut at, end) = (start, start + len);
    while at < end {
        let sent = stream.try_io(Interest::WRITABLE, || {
            let mut offset = at as libc::off_t;
            let count = (end - at).min(1 << 30) as usize;
            // SAFETY: both descriptors are open for the call's duration
            // (the span holds the file, `stream` the socket).
            let n = unsafe { libc::sendfile(sock, file, &mut offset, count) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as u64)
            }
        });
        match sent {
            Ok(0) => return Err(shrank()),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_writable(stream, span.send_timeout).await?
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Waits until the socket takes bytes again, at most `send_timeout`.
async fn wait_writable(stream: &TcpStream, send_timeout: Duration) -> io::Result<()> {
    tokio::time::timeout(send_timeout, stream.writable())
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "client stalled"))?
}

/// A connection whose first bytes were already read: reads give those
/// first, then the socket's; writes go straight to the socket.
pub(super) struct Rewind {
    /// Read but not yet consumed.
    prefix: Bytes,
    /// The connection.
    inner: TcpStream,
}

impl Rewind {
    /// `stream` with `prefix` to be read again first.
    pub(super) fn new(prefix: Bytes, inner: TcpStream) -> Self {
        Rewind { prefix, inner }
    }
}

impl AsyncRead for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.prefix.has_remaining() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
