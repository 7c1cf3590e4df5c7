//! How a store is opened and how a session reads and writes: the choices
//! a caller makes before any work, recorded in results.

use serde::{Deserialize, Serialize};

/// Whether the benchmark may change the target. Read-only stores are opened
/// so that the operating system or SQLite refuses any write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only; any write is refused.
    ReadOnly,
    /// Reads and writes.
    ReadWrite,
}

impl Access {
    /// How results record it: "read-only" or "read-write".
    pub fn label(self) -> &'static str {
        match self {
            Access::ReadOnly => "read-only",
            Access::ReadWrite => "read-write",
        }
    }
}

/// How SQLite content is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPath {
    /// `SELECT v FROM kv WHERE k=?1`, prepared once.
    Sql,
    /// `sqlite3_blob_open` once, `sqlite3_blob_reopen` per key.
    BlobApi,
}

/// How a file is rewritten, as an application would do it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteStyle {
    /// open(O_TRUNC) + write + close: kvtest's fopen("wb").
    Truncate,
    /// open without truncation + pwrite over the old bytes + close.
    InPlace,
    /// write a temporary file beside it, then rename over the old one.
    TempRename,
}

impl WriteStyle {
    /// The style in words, with or without fsync, for results.
    pub fn describe(self, fsync: bool) -> &'static str {
        match (self, fsync) {
            (WriteStyle::Truncate, false) => "truncate+rewrite",
            (WriteStyle::Truncate, true) => "truncate+rewrite+fsync",
            (WriteStyle::InPlace, false) => "overwrite in place",
            (WriteStyle::InPlace, true) => "overwrite in place+fsync",
            (WriteStyle::TempRename, false) => "temp+rename",
            (WriteStyle::TempRename, true) => "temp+fsync+rename+fsync(dir)",
        }
    }
}

/// How a session reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// SQL statements or SQLite's incremental blob API.
    pub read_path: ReadPath,
    /// Each operation in its own transaction (kvtest's --multitrans). On the
    /// blob API this means opening and closing the handle per operation,
    /// because an open blob handle keeps its transaction open.
    pub per_op_transaction: bool,
    /// How files are rewritten (files and external blobs).
    pub write_style: WriteStyle,
    /// fsync each written file (files and external blobs).
    pub fsync: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            read_path: ReadPath::Sql,
            per_op_transaction: false,
            write_style: WriteStyle::Truncate,
            fsync: false,
        }
    }
}
