//! What an HTTP server asks of a session beyond the core operations: a
//! blob's tag, a small blob in one lookup, a large one in pieces from one
//! version, a file to send with sendfile, or runs of a mapped file. Every
//! method has a default that works through the core, so a backend
//! overrides only what it can do faster.

use super::mapped::MappedBlob;
use super::session_core::SessionCore;
use crate::error::Result;
use crate::store::pieces::stream_pieces;

/// A blob that is a file of its own, open: see `Serving::blob_file`.
#[derive(Debug)]
pub struct BlobFile {
    /// Open for reading.
    pub file: std::fs::File,
    /// Its length in bytes, from the open descriptor.
    pub size: u64,
    /// Its tag, from the open descriptor.
    pub etag: String,
    /// What the descriptor said when opened, to find a change made in
    /// place (written into, not replaced) while the file is sent.
    pub identity: FileIdentity,
}

/// A file's size, change times and link count as its descriptor reports
/// them. A write into the file moves its modification and change times
/// before the written bytes can be read, and nothing a writer can do
/// (utimensat included) puts the change time back; but a rename over the
/// file or its removal moves its change time too, with its bytes as they
/// were. So [`FileIdentity::written_between`] takes a moved change time as
/// a write only while the link count stayed the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    /// Length in bytes.
    pub size: u64,
    /// Modification time, ns.
    pub modified_ns: i128,
    /// Status change time, ns.
    pub changed_ns: i128,
    /// Names the file has (0 once removed or renamed over).
    pub links: u64,
}

impl FileIdentity {
    /// The identity in `m`.
    pub fn of(m: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        FileIdentity {
            size: m.len(),
            modified_ns: ns(m.mtime(), m.mtime_nsec()),
            changed_ns: ns(m.ctime(), m.ctime_nsec()),
            links: m.nlink(),
        }
    }

    /// The open `file`'s identity now (one fstat).
    pub fn now(file: &std::fs::File) -> std::io::Result<Self> {
        file.metadata().map(|m| FileIdentity::of(&m))
    }

    /// Whether the file may have been written into between this identity
    /// and a later one, `now`: its size or modification time moved, or its
    /// change time did while no name was added or taken away.
    pub fn written_between(&self, now: &FileIdentity) -> bool {
        self.size != now.size
            || self.modified_ns != now.modified_ns
            || (self.changed_ns != now.changed_ns && self.links == now.links)
    }
}

/// How a server reads blobs from a session: the defaults read through
/// [`SessionCore`]; a backend that can tag, size or send a blob more
/// cheaply overrides them (`impl Serving for X {}` takes them all).
pub trait Serving: SessionCore {
    /// Hands bytes [offset, offset + len) of blob `key` to `sink` in pieces
    /// of at most `piece` bytes, all from one version of the blob; `sink`
    /// returns false to stop. Returns the bytes delivered. The default reads
    /// each piece separately; SQLite (one blob handle, one read transaction)
    /// and files (one open descriptor) read a single version.
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        stream_pieces(offset, len, piece, sink, |at, buf| {
            self.read_at(key, at, buf)
        })
    }
    /// A strong validator for blob `key`: changes whenever its bytes may
    /// have changed (it may also change when they did not). None when the
    /// store cannot tell cheaply; HTTP then sends no ETag.
    fn etag(&mut self, _key: u64, _size: u64) -> Result<Option<String>> {
        Ok(None)
    }
    /// Size of blob `key` and, when it is at most `max` bytes, its content:
    /// what a server needs for a small blob, in one lookup where the store
    /// allows. None when the key is absent.
    fn fetch_small(&mut self, key: u64, max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        let Some(size) = self.size(key)? else {
            return Ok(None);
        };
        if size > max {
            return Ok(Some((size, None)));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.read(key, &mut |d| data.extend_from_slice(d))?;
        Ok(Some((data.len() as u64, Some(data))))
    }
    /// The file that holds blob `key` and nothing else, open, with its size
    /// and its tag (as `etag` gives it) taken from the open descriptor, so
    /// all three describe one version even if the file is replaced
    /// meanwhile: a server sends such a blob with sendfile. None when the
    /// key is absent; `Ok(None)` as well from stores that keep blobs
    /// otherwise (the default), so callers ask `fetch_small` next.
    fn blob_file(&mut self, _key: u64) -> Result<Option<BlobFile>> {
        Ok(None)
    }
    /// Blob `key` as runs of a read-only map of the file that holds it,
    /// valid until `end_snapshot`: call it only inside a snapshot, whose
    /// lock keeps writers from changing those bytes. A server writes them
    /// to its socket straight from the map (one copy instead of two). None
    /// when the store cannot say (the default; SQLite in WAL mode or with a
    /// table not laid out as `kv(k INTEGER PRIMARY KEY, v BLOB)`): the
    /// caller then reads the blob the usual way, which also reports an
    /// absent key. None as well for a blob over `max` bytes, whose pages
    /// are then not even walked.
    fn mapped_blob(&mut self, _key: u64, _max: u64) -> Result<Option<MappedBlob>> {
        Ok(None)
    }
}
