//! The hand-back between a stream's reader and its connection: how a
//! reader that must let go of its snapshot gets back the mapped pieces the
//! connection has not written yet (they are valid only under that
//! snapshot). Beneath the body (which carries it in every mapped piece),
//! the fast path's writer (which answers it) and the stream (which asks).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::Notify;

/// Asked by a stream's reader that must end its snapshot while mapped
/// pieces are still unwritten: the connection drops them (the one being
/// written where its writing reached) and counts the bytes it gave back,
/// which the reader then sends again from a new snapshot. Once asked, for
/// good.
#[derive(Default)]
pub(super) struct HandBack {
    /// Asked.
    asked: AtomicBool,
    /// Wakes a connection waiting to write a mapped piece.
    notify: Notify,
    /// Bytes of mapped pieces the connection dropped unwritten.
    given_back: AtomicU64,
}

impl HandBack {
    /// Asks for it.
    pub(super) fn ask(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether it was asked.
    pub(super) fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }

    /// Resolves once it is asked.
    pub(super) async fn wait(&self) {
        let notified = self.notify.notified();
        if !self.asked() {
            notified.await;
        }
    }

    /// The connection dropped `bytes` of mapped pieces unwritten.
    pub(super) fn gave_back(&self, bytes: u64) {
        self.given_back.fetch_add(bytes, Ordering::SeqCst);
    }

    /// Bytes of mapped pieces the connection dropped unwritten so far.
    pub(super) fn given_back(&self) -> u64 {
        self.given_back.load(Ordering::SeqCst)
    }
}
