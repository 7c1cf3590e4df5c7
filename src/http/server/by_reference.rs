//! Sending mapped pages by reference, as nginx's sendfile sends a file:
//! vmsplice puts the page-cache pages under a mapped blob's runs into a
//! pipe (references, no copy), and splice moves them into the socket, so
//! this process never copies the bytes; the client's kernel copies them
//! once, when the client reads.
//!
//! The kernel reads those pages when it sends them, and on the loopback
//! only when the client reads them: after the write has returned and the
//! read that found the blob has ended. So this is used only while every
//! other writer is kept out of the file (`store::keep_writers_out`), and
//! every connection of a server that uses it closes lingering ([`linger`]): it waits for
//! the client to close, by which time the client has read or dropped every
//! byte, before the server may stop and let writers in.

use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::{AsyncReadExt, Interest};
use tokio::net::TcpStream;

use super::hand_back::HandBack;

/// Bytes of pages a pipe is asked to hold: a mapped piece's worth (1 MiB,
/// the default /proc/sys/fs/pipe-max-size), so a piece goes in one
/// vmsplice. A system that grants less only costs more calls.
const PIPE_BYTES: libc::c_int = 1 << 20;

/// Slices one vmsplice takes at most (the kernel's UIO_MAXIOV).
const MAX_SLICES: usize = 1024;

thread_local! {
    /// An empty pipe kept for this thread's next piece: one (two
    /// descriptors) per thread that sends, so the number kept is bounded
    /// by the runtime's threads.
    static SPARE: std::cell::Cell<Option<PagePipe>> = const { std::cell::Cell::new(None) };
}

/// A pipe that carries page references from a map to a socket.
struct PagePipe {
    /// Spliced into the socket.
    read: OwnedFd,
    /// Filled by vmsplice.
    write: OwnedFd,
}

impl PagePipe {
    /// A non-blocking pipe, as large as the system grants up to
    /// `PIPE_BYTES`.
    fn new() -> io::Result<PagePipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two new descriptors into `fds`.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both were just made and nothing else owns them.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: fcntl on an open pipe; a refusal leaves the default size.
        unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        Ok(PagePipe { read, write })
    }

    /// This thread's spare pipe if it has one, else a new one: making and
    /// closing a pipe for every piece cost about a twentieth of a 2 MB
    /// reply's CPU.
    fn spare() -> io::Result<PagePipe> {
        SPARE
            .with(|spare| spare.take())
            .map_or_else(PagePipe::new, Ok)
    }

    /// Keeps this pipe as this thread's spare (a task may have moved
    /// between threads: the pipe stays where it ends) if `in_pipe`, the
    /// bytes still in it, is zero. A pipe still holding pages is dropped,
    /// never reused: its bytes would go to the next connection.
    fn keep_if_empty(self, in_pipe: usize) {
        if in_pipe == 0 {
            SPARE.with(|spare| spare.set(Some(self)));
        }
    }

    /// Puts references to the pages under the first of `parts` into the
    /// pipe, as many as it takes: the bytes taken.
    fn take(&self, parts: &[IoSlice<'_>]) -> io::Result<usize> {
        let count = parts.len().min(MAX_SLICES);
        // SAFETY: IoSlice is ABI-compatible with iovec; every slice points
        // into a live map for the call's duration. Without SPLICE_F_GIFT
        // the pages are only referenced, never given away or written.
        let n = unsafe {
            libc::vmsplice(
                self.write.as_raw_fd(),
                parts.as_ptr().cast::<libc::iovec>(),
                count,
                libc::SPLICE_F_NONBLOCK,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Moves up to `len` bytes of the pipe into `socket`: the bytes moved.
    fn give(&self, socket: libc::c_int, len: usize) -> io::Result<usize> {
        // SAFETY: splice between two open descriptors, no offsets. MORE:
        // the piece's last byte always follows (see wire.rs), and its
        // plain write pushes the last segment out.
        let n = unsafe {
            libc::splice(
                self.read.as_raw_fd(),
                std::ptr::null_mut(),
                socket,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_NONBLOCK | libc::SPLICE_F_MORE,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// Sends the bytes of `parts` (slices of a map of a file no one else may
/// write meanwhile) into `stream` by reference, each wait on the client at
/// most `send_timeout`; stops early, between two calls, once `hand_back`
/// is asked. Returns the bytes that reached the socket.
pub(super) async fn send_pages(
    stream: &TcpStream,
    parts: &mut [IoSlice<'_>],
    send_timeout: Duration,
    hand_back: &HandBack,
) -> io::Result<u64> {
    let pipe = PagePipe::spare()?;
    let mut in_pipe = 0usize;
    let sent = send_through(&pipe, &mut in_pipe, stream, parts, send_timeout, hand_back).await;
    pipe.keep_if_empty(in_pipe);
    sent
}

/// `send_pages` through `pipe`, whose bytes not yet in the socket are
/// counted in `in_pipe`.
async fn send_through(
    pipe: &PagePipe,
    in_pipe: &mut usize,
    stream: &TcpStream,
    mut parts: &mut [IoSlice<'_>],
    send_timeout: Duration,
    hand_back: &HandBack,
) -> io::Result<u64> {
    let socket = stream.as_raw_fd();
    let mut sent = 0u64;
    loop {
        if *in_pipe == 0 {
            if parts.is_empty() || hand_back.asked() {
                return Ok(sent);
            }
            // The pipe is empty, so it takes at least the first page.
            let n = pipe.take(parts)?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut parts, n);
            *in_pipe = n;
        }
        match stream.try_io(Interest::WRITABLE, || pipe.give(socket, *in_pipe)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                *in_pipe -= n;
                sent += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let writable = tokio::time::timeout(send_timeout, stream.writable());
                tokio::select! {
                    w = writable => w.map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "client stalled"))??,
                    // What is still in the pipe is dropped with it, unsent.
                    () = hand_back.wait() => return Ok(sent),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Closes a connection that sent pages by reference only once the client
/// has closed its side, or after `wait`: says it is done sending (FIN
/// after the last byte), then reads and drops whatever the client still
/// sends until the client closes. A client that closes has read every byte
/// or thrown it away, so its kernel no longer reads the pages.
pub(super) async fn linger(stream: std::net::TcpStream, wait: Duration) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let Ok(mut stream) = TcpStream::from_std(stream) else {
        return;
    };
    let drain = async {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(wait, drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Runs of a file's map that start and end mid-page, cross page
    /// boundaries and skip bytes between them, more of them than one
    /// vmsplice takes and more bytes than one pipe holds.
    fn runs(len: usize) -> Vec<std::ops::Range<usize>> {
        let mut runs = Vec::new();
        let mut at = 3;
        let mut width = 1;
        while at + width < len {
            runs.push(at..at + width);
            at += width + 4;
            width = (width * 7 + 4091) % 9000 + 1;
        }
        runs
    }

    #[tokio::test]
    async fn pages_sent_by_reference_arrive_as_the_runs_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..6_000_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: read-only map of a file nothing changes during the test.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let runs = runs(bytes.len());
        assert!(runs.len() > MAX_SLICES, "more runs than one call takes");
        let expected: Vec<u8> = runs
            .iter()
            .flat_map(|r| bytes[r.clone()].iter().copied())
            .collect();

        let mut slices: Vec<IoSlice<'_>> =
            runs.iter().map(|r| IoSlice::new(&map[r.clone()])).collect();
        let (sent, got) = send_to_reader(&mut slices).await;
        assert_eq!(sent, expected.len() as u64);
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "the bytes differ from the runs'");
    }

    /// The read end of this thread's spare pipe, if it has one.
    fn spare_fd() -> Option<i32> {
        SPARE.with(|spare| {
            let pipe = spare.take();
            let fd = pipe.as_ref().map(|p| p.read.as_raw_fd());
            spare.set(pipe);
            fd
        })
    }

    /// Sends `slices` to a new client that reads them all, and closes
    /// lingering: the bytes sent, and what the client got.
    async fn send_to_reader(slices: &mut [IoSlice<'_>]) -> (u64, Vec<u8>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = tokio::spawn(async move {
            let mut client = TcpStream::connect(addr).await.unwrap();
            let mut got = Vec::new();
            client.read_to_end(&mut got).await.unwrap();
            got
        });
        let (server, _) = listener.accept().await.unwrap();
        let sent = send_pages(
            &server,
            slices,
            Duration::from_secs(30),
            &HandBack::default(),
        )
        .await
        .unwrap();
        linger(server.into_std().unwrap(), Duration::from_secs(30)).await;
        (sent, reader.await.unwrap())
    }

    #[tokio::test]
    async fn an_emptied_pipe_is_reused_and_one_left_holding_pages_never_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: read-only map of a file nothing changes during the test.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();

        // A whole send leaves its pipe as the thread's spare, and the next
        // send goes through that same pipe.
        let (_, got) = send_to_reader(&mut [IoSlice::new(&map[..1000])]).await;
        assert!(got == bytes[..1000]);
        let spare = spare_fd().expect("the emptied pipe is kept");
        let (_, got) = send_to_reader(&mut [IoSlice::new(&map[5..3_000_005])]).await;
        assert!(
            got == bytes[5..3_000_005],
            "the reused pipe carried other bytes"
        );
        assert_eq!(spare_fd(), Some(spare), "the spare was used and kept again");

        // A client that reads nothing: 32 MB exceed what the sockets hold,
        // so the send stalls with pages still in the pipe.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let _silent = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let mut slices: Vec<IoSlice<'_>> = (0..8).map(|_| IoSlice::new(&map[..])).collect();
        let stalled = send_pages(
            &server,
            &mut slices,
            Duration::from_millis(200),
            &HandBack::default(),
        )
        .await;
        assert_eq!(stalled.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert_eq!(spare_fd(), None, "a pipe holding pages was kept");

        // The next send makes a new pipe and carries only its own bytes.
        let (_, got) = send_to_reader(&mut [IoSlice::new(&map[7..2_007])]).await;
        assert!(got == bytes[7..2_007], "stale pages reached another client");
    }

    #[tokio::test]
    async fn a_hand_back_asked_stops_the_sending_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: as above.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let hand_back = HandBack::default();
        hand_back.ask();
        let mut slices = [IoSlice::new(&map[..])];
        let sent = send_pages(&server, &mut slices, Duration::from_secs(30), &hand_back)
            .await
            .unwrap();
        assert_eq!(sent, 0, "nothing is sent once asked");
    }
}
