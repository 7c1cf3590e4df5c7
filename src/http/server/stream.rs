//! A large blob streamed from the blocking pool into a bounded channel,
//! piece by piece, its reply's head and every byte from one version.
//!
//! The head is decided here, inside the stream's own read snapshot (one
//! SQLite read transaction), not from the look-up that found the blob
//! large: a write committed in between changes what is answered, never
//! leaves a head without its body.
//!
//! For the fast path, a SQLite blob in a rollback-journal database goes
//! as runs of the mapped database file (no copy here; the socket write
//! copies straight from the page cache), the snapshot held until those
//! pieces are written, so no writer changes the pages while they are sent.
//! Otherwise pieces are read into reused buffers (`store::piece_buffer`).
//!
//! A snapshot held blocks writers in a rollback journal, so a stream keeps
//! one for at most the hold time (`--hold-timeout`) while a writer waits:
//! then the connection gives back the mapped pieces it has not written
//! ([`HandBack`]), the snapshot ends, and the rest is read from a new one
//! only if nothing was committed meanwhile; if something was, the
//! connection is cut (the client sees a cut, never two versions mixed).
//! Letting go so costs no memory. A client that takes no piece for the
//! send timeout is cut off as well.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::HeaderMap;
use hyper::{Response, StatusCode};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};

use super::answer::{answer, blob_reply};
use super::body::{MappedPiece, Piece, ResponseBody, empty, streamed};
use super::hand_back::HandBack;
use super::reply::{failure, status, unavailable};
use super::session::{ServerRef, ensure_open, with_session};
use super::{CHUNK, READ_LOCK_WAIT};
use crate::error::{Error, FailureClass, Result};
use crate::store::{MappedBlob, Session};

/// Bytes in one mapped piece: a piece costs no memory until written (it
/// points into the map), and its pages are unmapped once it is sent, so a
/// stalled stream keeps at most this much mapped; large enough that the
/// two threads rarely meet.
const MAPPED_PIECE: usize = 1 << 20;

/// Mapped streams that keep their pages mapped, at most; beyond this many
/// at once every stream releases its pages as it goes.
const MAPPED_RESIDENT_STREAMS: usize = 16;

/// How often a stream past its hold time asks whether a writer waits.
const POLL: Duration = Duration::from_millis(10);

/// Mapped streams in progress, all servers of the process together.
static MAPPED_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One mapped stream counted while it lasts.
struct InFlight;

impl InFlight {
    /// Counts this stream in.
    fn enter() -> InFlight {
        MAPPED_IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        InFlight
    }

    /// Whether more streams than `MAPPED_RESIDENT_STREAMS` are in progress.
    fn crowded(&self) -> bool {
        MAPPED_IN_FLIGHT.load(Ordering::Relaxed) > MAPPED_RESIDENT_STREAMS
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        MAPPED_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What to stream and what the request asked of it.
pub(super) struct StreamRequest {
    /// The blob.
    pub(super) key: u64,
    /// If-None-Match, Range and If-Range as the client sent them: the reply
    /// is decided again from the stream's own snapshot.
    pub(super) conditions: HeaderMap,
    /// Size and tag the look-up found: the reply's, for stores without
    /// snapshots (which take no lock, so there is none to read both under).
    pub(super) found: (u64, Option<String>),
    /// A client that takes no piece for this long is cut off.
    pub(super) send_timeout: Duration,
    /// A snapshot is held at most this long while a writer waits for it.
    pub(super) hold: Duration,
    /// The consumer writes mapped pieces within the send timeout (the fast
    /// path): hyper, which has no write timeout, gets copied pieces only.
    pub(super) mapped_ok: bool,
    /// Mapped pieces may go by reference (see by_reference.rs): no other
    /// writer may change the store's file while the server runs.
    pub(super) by_reference: bool,
}

/// The reply to a GET of a large blob: its head decided inside the
/// stream's snapshot (so it describes the bytes that follow), its body
/// streamed from the blocking pool.
pub(super) async fn reply(server: &ServerRef, req: StreamRequest) -> Response<ResponseBody> {
    let (head_tx, head_rx) = oneshot::channel();
    let (tx, rx) = mpsc::channel(1);
    let server = server.clone();
    let feeder = Feeder {
        tx,
        // The worker's runtime drives the timers while this thread waits.
        runtime: Handle::current(),
        send_timeout: req.send_timeout,
        stalled: false,
    };
    tokio::task::spawn_blocking(move || {
        // This thread's session first: one that cannot be opened now (out
        // of descriptors, say) is answered as a passing condition, before
        // any head.
        if let Err(e) = ensure_open(&server) {
            let _ = head_tx.send(unavailable(req.key, &e.to_string()));
            return;
        }
        let mut head = Some(head_tx);
        let streamed = with_session(&server, |s| {
            let mut stream = Stream {
                s,
                server: &server,
                feeder,
                snapshot: Snapshot::default(),
                hand_back: Arc::new(HandBack::default()),
                blocks_writers: false,
                hold: req.hold,
                by_reference: req.by_reference,
            };
            stream.run(&req, rx, &mut head);
            Ok(())
        });
        if let (Err(e), Some(head)) = (streamed, head.take()) {
            let _ = head.send(failure(&e));
        }
    });
    head_rx.await.unwrap_or_else(|_| {
        status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the blob's reader stopped before answering",
        )
    })
}

/// The snapshot a stream reads in.
#[derive(Default)]
struct Snapshot {
    /// One is held now.
    held: bool,
    /// When the one held began.
    began: Option<Instant>,
    /// The data version the first one saw: a later one must see the same.
    version: Option<i64>,
    /// The store has snapshots (the first was held): one let go of is
    /// begun again before the next read.
    resumable: bool,
}

/// One stream on its blocking thread.
struct Stream<'a, 's> {
    /// The thread's session.
    s: &'a mut (dyn Session + 's),
    /// Its writes tell streams to let go.
    server: &'a ServerRef,
    /// The connection's end of the channel.
    feeder: Feeder,
    /// What the stream holds.
    snapshot: Snapshot,
    /// Shared with every mapped piece the stream sends.
    hand_back: Arc<HandBack>,
    /// The snapshot keeps writers out (a rollback journal): only then is
    /// it let go of for them.
    blocks_writers: bool,
    /// `StreamRequest::hold`.
    hold: Duration,
    /// `StreamRequest::by_reference`.
    by_reference: bool,
}

/// The blob as the stream's first snapshot sees it.
struct Seen {
    /// Its size.
    size: u64,
    /// Its tag.
    etag: Option<String>,
    /// Its runs in the mapped file (fast path, rollback journal).
    mapped: Option<MappedBlob>,
}

/// What became of a piece offered to the connection.
enum Handed {
    /// Taken.
    Taken,
    /// The client went away or stalled.
    Gone,
    /// Not taken: the stream must let go of its snapshot first (a mapped
    /// piece, which is only valid under it).
    LetGo,
}

impl Stream<'_, '_> {
    /// Looks the blob up in a fresh snapshot, answers the head, streams
    /// the body, ends the snapshot.
    fn run(
        &mut self,
        req: &StreamRequest,
        rx: mpsc::Receiver<std::io::Result<Piece>>,
        head: &mut Option<oneshot::Sender<Response<ResponseBody>>>,
    ) {
        let started = self
            .begin(Instant::now() + READ_LOCK_WAIT)
            .and_then(|()| self.look_up(req));
        // Whether a write of this server's would make the stream let go:
        // whether its snapshot keeps writers out at all.
        self.blocks_writers = self.s.writer_waiting(true).unwrap_or(false);
        let Seen { size, etag, mapped } = match started {
            Ok(Some(seen)) => seen,
            Ok(None) => {
                return self.answer_head(head, status(StatusCode::NOT_FOUND, "no such blob"));
            }
            Err(e) => return self.answer_head(head, failure(&e)),
        };
        let span = match answer(&req.conditions, size, etag.as_deref()) {
            Ok(span) => span,
            Err(reply) => return self.answer_head(head, *reply),
        };
        let body = if span.len == 0 {
            empty()
        } else {
            streamed(rx, span.len)
        };
        if let Some(h) = head.take() {
            let _ = h.send(blob_reply(body, &span, size, etag.as_deref()));
        }
        if span.len == 0 {
            return self.end();
        }
        let sent = self.send_body(req.key, span.start, span.len, mapped);
        self.end();
        self.feeder.finish(sent, span.len);
    }

    /// Sends `reply` as the head (no body follows) and ends the snapshot.
    fn answer_head(
        &mut self,
        head: &mut Option<oneshot::Sender<Response<ResponseBody>>>,
        reply: Response<ResponseBody>,
    ) {
        if let Some(h) = head.take() {
            let _ = h.send(reply);
        }
        self.end();
    }

    /// Size, tag and (fast path, rollback journal) mapped runs of the blob
    /// in the snapshot just begun; None when it is absent.
    fn look_up(&mut self, req: &StreamRequest) -> Result<Option<Seen>> {
        if !self.snapshot.held {
            // No lock, nothing to read both under: the look-up's answer.
            return Ok(Some(Seen {
                size: req.found.0,
                etag: req.found.1.clone(),
                mapped: None,
            }));
        }
        if req.mapped_ok
            && let Some(blob) = self.s.mapped_blob(req.key, u64::MAX)?
        {
            return Ok(Some(Seen {
                size: blob.size,
                etag: blob.etag.clone(),
                mapped: Some(blob),
            }));
        }
        let Some((size, _)) = self.s.fetch_small(req.key, 0)? else {
            return Ok(None);
        };
        let etag = self.s.etag(req.key, size)?;
        Ok(Some(Seen {
            size,
            etag,
            mapped: None,
        }))
    }

    /// Begins a snapshot once no writer waits for the readers, trying
    /// again every millisecond until `deadline`; notes the data version it
    /// sees (a store without snapshots holds none).
    fn begin(&mut self, deadline: Instant) -> Result<()> {
        // Lock waits happen here, on this thread, with the deadline above.
        self.s.wait_for_locks(Duration::ZERO)?;
        loop {
            let begun = self.s.begin_snapshot().and_then(|held| {
                // Reading the version takes the snapshot's lock at once.
                let version = if held { self.s.data_version()? } else { None };
                Ok((held, version))
            });
            match begun {
                Ok((held, version)) => {
                    let first = self.snapshot.began.is_none();
                    self.snapshot.held = held;
                    self.snapshot.began = Some(Instant::now());
                    if first {
                        self.snapshot.version = version;
                        self.snapshot.resumable = held;
                    } else if version != self.snapshot.version {
                        return Err(changed());
                    }
                    return Ok(());
                }
                Err(e) if e.is_busy() && Instant::now() < deadline => {
                    let _ = self.s.end_snapshot();
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    let _ = self.s.end_snapshot();
                    return Err(e);
                }
            }
        }
    }

    /// Ends the snapshot, if one is held.
    fn end(&mut self) {
        if self.snapshot.held {
            self.snapshot.held = false;
            let _ = self.s.end_snapshot();
        }
    }

    /// Whether the snapshot held must end now: held for the hold time, and
    /// a writer (this server's, or another process) waits for it.
    fn must_let_go(&mut self) -> bool {
        self.snapshot.held
            && self
                .snapshot
                .began
                .is_some_and(|b| b.elapsed() >= self.hold)
            && self
                .s
                .writer_waiting(self.server.write_waiting())
                .unwrap_or(false)
    }

    /// When the hold time of the snapshot held runs out.
    fn hold_ends(&self) -> Option<Instant> {
        self.snapshot
            .began
            .filter(|_| self.snapshot.held && self.blocks_writers)
            .map(|b| b + self.hold)
    }

    /// Bytes [start, start + len) of blob `key`: as mapped pieces while
    /// the first snapshot lasts (when the store gave runs), then read.
    fn send_body(
        &mut self,
        key: u64,
        start: u64,
        len: u64,
        mapped: Option<MappedBlob>,
    ) -> Result<u64> {
        let end = start + len;
        let mut at = start;
        if let Some(blob) = mapped {
            let (taken, gone) = self.send_mapped(&blob, start, len);
            at += taken;
            if gone || at == end {
                return Ok(at - start);
            }
            // The stream let go of its snapshot: the rest is read.
        }
        while at < end {
            if self.snapshot.resumable && !self.snapshot.held {
                self.begin(Instant::now() + READ_LOCK_WAIT)?;
            }
            match self.send_read(key, &mut at, end)? {
                Some(()) => {}
                None => break,
            }
        }
        Ok(at - start)
    }

    /// Sends the blob's runs as mapped pieces from `start`: (bytes the
    /// connection took, whether the client went away). Returns once every
    /// piece handed over has been written or given back; if the stream had
    /// to let go of its snapshot, with it ended (the caller reads the rest).
    fn send_mapped(&mut self, blob: &MappedBlob, start: u64, len: u64) -> (u64, bool) {
        // Finding the runs mapped every page of a modest blob (a large one's
        // walk let them go as it went), and the send needs them mapped: the
        // socket write copies from them, vmsplice takes their references.
        // With few streams those pages stay mapped after the send too
        // (unmapping costs the other threads a TLB flush, and the next reader
        // a page fault per 64 KiB); with many, or a large blob, each piece is
        // let go once written, so only pieces not yet written count in the
        // server's memory (and the walks' pages within the store's budget).
        let flight = InFlight::enter();
        let release = flight.crowded() || blob.size > crate::store::MAPPED_RESIDENT_UP_TO;
        // Every piece holds a sender; when the last is dropped (written,
        // given back, or thrown away with a connection that failed), the
        // receiver sees the channel close.
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let (mut handed, mut gone, mut let_go) = (0, false, false);
        for runs in blob.runs.pieces(start, len, MAPPED_PIECE) {
            let n = runs.len();
            let piece = Piece::Mapped(MappedPiece {
                runs,
                release,
                by_reference: self.by_reference,
                _held: held_tx.clone(),
                hand_back: self.hand_back.clone(),
            });
            match self.hand_over(piece, true) {
                Handed::Taken => handed += n,
                Handed::Gone => {
                    gone = true;
                    break;
                }
                Handed::LetGo => {
                    let_go = true;
                    break;
                }
            }
        }
        drop(held_tx);
        self.wait_for_mapped(&held_rx, let_go);
        if self.hand_back.asked() {
            self.end();
        }
        let given_back = self.hand_back.given_back();
        (handed - given_back, gone)
    }

    /// Waits until every mapped piece handed over is written or given
    /// back: asked back at once when the stream lets go, and when a writer
    /// comes to wait past the hold time. A connection writes or gives back
    /// each piece within the send timeout, so the bound only guards
    /// against a bug.
    fn wait_for_mapped(&mut self, held: &std::sync::mpsc::Receiver<()>, let_go: bool) {
        use std::sync::mpsc::RecvTimeoutError;
        if let_go {
            self.hand_back.ask();
        }
        let guard = Instant::now() + self.feeder.send_timeout * 8 + Duration::from_secs(1);
        loop {
            let now = Instant::now();
            let until = match self.hold_ends() {
                Some(t) if t > now => t,
                _ => now + POLL,
            };
            match held.recv_timeout(until.min(guard).saturating_duration_since(now)) {
                Err(RecvTimeoutError::Timeout) if Instant::now() < guard => {
                    if !self.hand_back.asked() && self.must_let_go() {
                        self.hand_back.ask();
                    }
                }
                _ => return,
            }
        }
    }

    /// Reads pieces from `at` in the snapshot held and hands them over,
    /// until `end`, or until one cannot be handed over at once past the
    /// hold time (then it is handed over outside the read, letting go of
    /// the snapshot if a writer waits). None: the client went away.
    fn send_read(&mut self, key: u64, at: &mut u64, end: u64) -> Result<Option<()>> {
        let hold_ends = self.hold_ends();
        let (mut kept, mut gone) = (None, false);
        let feeder = &mut self.feeder;
        let mut taken = 0u64;
        self.s
            .read_stream(key, *at, end - *at, CHUNK, &mut |piece| {
                let n = piece.len() as u64;
                let piece = Piece::Bytes(Bytes::from_owner(Recycled(piece)));
                // Until the hold time runs out nothing can make the stream
                // let go: wait in here (without a snapshot, for as long as
                // the client takes); past it, only take a free place.
                let now = Instant::now();
                let until = match hold_ends {
                    None => now + feeder.send_timeout,
                    Some(t) => t.max(now),
                };
                match feeder.offer(piece, now, until) {
                    Offer::Taken => {
                        taken += n;
                        true
                    }
                    Offer::Gone => {
                        gone = true;
                        false
                    }
                    Offer::Kept(p) => {
                        kept = Some((p, n));
                        false
                    }
                }
            })?;
        *at += taken;
        if gone {
            return Ok(None);
        }
        if let Some((piece, n)) = kept {
            match self.hand_over(piece, false) {
                Handed::Taken => *at += n,
                Handed::Gone => return Ok(None),
                Handed::LetGo => unreachable!("a read piece never needs the snapshot"),
            }
        } else if *at < end {
            return Err(Error::usage("the blob shrank while being read"));
        }
        Ok(Some(()))
    }

    /// Hands `piece` over, waiting as long as the client takes (up to the
    /// send timeout). Past the hold time, while a writer waits, the
    /// snapshot is let go of: at once for a read piece (a copy, valid
    /// without it); a mapped piece is given back (`LetGo`) instead.
    fn hand_over(&mut self, mut piece: Piece, mapped: bool) -> Handed {
        let since = Instant::now();
        loop {
            let now = Instant::now();
            let until = match self.hold_ends() {
                None => now + self.feeder.send_timeout,
                Some(t) if t > now => t,
                // Past the hold time: a quick look whether a writer waits
                // before each wait, and every POLL while waiting.
                Some(_) => {
                    if self.must_let_go() {
                        if mapped {
                            return Handed::LetGo;
                        }
                        self.end();
                        continue;
                    }
                    now + POLL
                }
            };
            match self.feeder.offer(piece, since, until) {
                Offer::Taken => return Handed::Taken,
                Offer::Gone => return Handed::Gone,
                Offer::Kept(p) => piece = p,
            }
        }
    }
}

/// Why a stream that let go of its snapshot cannot go on.
fn changed() -> Error {
    Error::Failed {
        target: "the stream".into(),
        class: FailureClass::Conflict,
        message: "the blob's database changed while it was sent (a write committed meanwhile)"
            .into(),
    }
}

/// What became of a piece offered for a while.
enum Offer {
    /// The connection took it.
    Taken,
    /// The client went away, or took nothing for the send timeout.
    Gone,
    /// No place for it yet: given back.
    Kept(Piece),
}

/// The sending end of a stream, on the blocking thread.
struct Feeder {
    /// Pieces, or the error that ends the body.
    tx: mpsc::Sender<std::io::Result<Piece>>,
    /// Drives the timers while this thread waits.
    runtime: Handle,
    /// A client must take a piece within this time.
    send_timeout: Duration,
    /// The client took none for the send timeout.
    stalled: bool,
}

impl Feeder {
    /// Offers `piece` until `until` at most; a piece not taken within the
    /// send timeout from `since` means the client stalled.
    fn offer(&mut self, piece: Piece, since: Instant, until: Instant) -> Offer {
        let stall = since + self.send_timeout;
        let wait = tokio::time::Instant::from_std(until.min(stall));
        let place = self.runtime.block_on(async {
            // A place first (cancel-safe), so a piece not taken is kept.
            tokio::time::timeout_at(wait, self.tx.reserve()).await
        });
        match place {
            Ok(Ok(permit)) => {
                permit.send(Ok(piece));
                Offer::Taken
            }
            Ok(Err(_)) => Offer::Gone,
            Err(_) if Instant::now() >= stall => {
                self.stalled = true;
                Offer::Gone
            }
            Err(_) => Offer::Kept(piece),
        }
    }

    /// Ends the body: whole, or with an error so the client cannot take a
    /// short read for the whole blob.
    fn finish(&self, sent: Result<u64>, len: u64) {
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
