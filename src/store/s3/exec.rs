//! How a blocking caller waits for the S3 client's futures.
//!
//! The `Store` and `Session` traits are blocking; the S3 client is async.
//! A thread with no runtime of its own (the executor's workers, `init`)
//! drives a single-threaded runtime itself: no hand-over between threads.
//! A thread that already runs one (serve's workers) may not block inside
//! it, so its futures run on a runtime thread of the session's own and the
//! caller waits for the answer.

use std::future::Future;
use std::path::Path;

use crate::error::{Error, Result};

/// A runtime the futures of one store or session run on.
pub(crate) struct Exec {
    /// Always Some until dropped (taken to shut it down without blocking).
    runtime: Option<tokio::runtime::Runtime>,
    /// Whether this thread drives the runtime itself (`block_on`).
    here: bool,
}

impl Exec {
    /// The way that works on the calling thread.
    pub(crate) fn for_this_thread(target: &Path) -> Result<Exec> {
        let here = tokio::runtime::Handle::try_current().is_err();
        let mut builder = if here {
            tokio::runtime::Builder::new_current_thread()
        } else {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(1).thread_name("blobbench-s3");
            b
        };
        let runtime = builder
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the S3 client's runtime for", target, e))?;
        Ok(Exec {
            runtime: Some(runtime),
            here,
        })
    }

    /// Runs `future` to its end and returns its output.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> T {
        let runtime = self.runtime.as_ref().expect("runtime present until drop");
        if self.here {
            return runtime.block_on(future);
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        // The task only ends without sending if it panicked; pass that on.
        rx.recv().expect("the S3 client's task panicked")
    }
}

impl Exec {
    /// Whether this thread drives the runtime itself (`run_here` runs).
    pub(crate) fn drives_here(&self) -> bool {
        self.here
    }

    /// Runs `future`, which may borrow from the caller, on this thread's
    /// own runtime; None (the future dropped unpolled) when the runtime is
    /// another thread's, which only takes futures that own everything.
    pub(crate) fn run_here<T>(&self, future: impl Future<Output = T>) -> Option<T> {
        let runtime = self.runtime.as_ref().expect("runtime present until drop");
        self.here.then(|| runtime.block_on(future))
    }
}

impl Drop for Exec {
    /// Shuts down without waiting: dropping a runtime inside another
    /// runtime's thread (serve's workers) would panic.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
