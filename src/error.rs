//! Typed errors of the library. Every error renders as one line; the binary
//! prints it after `blobbench: error:` and maps [`Error::exit_code`].

use std::path::{Path, PathBuf};

/// Everything that can go wrong, each as one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something we cannot do as asked: bad value, missing
    /// target, a file that is not ours. Exit status 2.
    #[error("{0}")]
    Usage(String),
    /// A key the dataset does not hold was asked for (read, update, delete).
    /// Its own variant so that callers (`Session::size`, copies of sparse
    /// datasets) can tell it from other failures without reading the text.
    /// Exit status 2.
    #[error(
        "key {key} is missing from {}: the run asked for a key the dataset does not hold (check --start/--max-id)",
        target.display()
    )]
    MissingKey {
        /// The key asked for.
        key: u64,
        /// The target as its path or server URL (without password).
        target: PathBuf,
    },
    /// A file operation failed.
    #[error("{action} {path}: {source}{}", io_fix(.source))]
    Io {
        /// What was being done ("cannot open").
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused or failed.
    #[error("SQLite error on {path}: {source}{}", sqlite_fix(.source))]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A database server refused a statement.
    #[error("{target}: {message}")]
    Server {
        /// The server URL without password.
        target: String,
        /// The server's message, as one line.
        message: String,
    },
    /// A database server could not be reached or refused the login: a wrong
    /// URL, a server not running. Exit status 2.
    #[error("cannot connect to {target}: {message}")]
    Connect {
        /// The server URL without password.
        target: String,
        /// Why, as one line.
        message: String,
        /// What a run counts it as when it happens mid-run (a connection
        /// refused, or a timeout: a server that accepts and never answers).
        class: FailureClass,
    },
    /// A blob read back does not hold the content the dataset says.
    #[error("verification failed: {0}")]
    Verify(String),
    /// `compare --fail-on-slower` found slower cases. Exit status 1.
    #[error("{0} case(s) slower beyond the noise (--fail-on-slower)")]
    Regression(usize),
    /// A signal (SIGINT, SIGTERM, SIGHUP) asked the command to stop; it
    /// stopped cleanly and says what it did about what it had made (see
    /// `interrupt`). Exit status 128 + the signal's number: 130 for
    /// Ctrl-C, 143 for SIGTERM, as a shell reports a process a signal ended.
    #[error("{0}")]
    Interrupted(Interruption),
    /// An operation on a store failed in a way the store could classify
    /// (an S3 status, a timeout, a dropped connection). Inside a run it is
    /// an outcome to count ([`Error::class`]), not the end of the run.
    #[error("{target}: {message}")]
    Failed {
        /// The target as its path or server URL (without password).
        target: String,
        /// How it failed.
        class: FailureClass,
        /// The message, as one line ("timeout after 10 s", "server error 500: ...").
        message: String,
    },
    /// A run went to its end (or to `--max-errors`) with failed operations;
    /// its result was written first. The line sums them up ("312 of 18,400
    /// operations failed: 289 timeout, 23 server error 500; see the
    /// result"). Exit status 1.
    #[error("{0}")]
    OperationsFailed(String),
    /// A result could not be serialized.
    #[error("cannot write result {path}: {source}")]
    Json {
        /// The result file.
        path: PathBuf,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
}

/// The signal that stopped a command, and what the command did before it
/// stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The signal's number (SIGINT, SIGTERM, SIGHUP).
    pub signal: i32,
    /// What was done about the work in progress, as a clause ("stopped,
    /// and removed what it had made ...").
    pub aftermath: String,
}

/// Signal `signal`'s name, as a user would know it ("SIGINT, Ctrl-C").
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT, Ctrl-C".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

impl std::fmt::Display for Interruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted ({}): {}",
            signal_name(self.signal),
            self.aftermath
        )
    }
}

/// How [`Error::sqlite`] says SQLite found the disk full.
const SQLITE_DISK_FULL: &str = "the disk is full";

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether this is a write to standard output whose reader went away
    /// (`blobbench man | head -1`): not a failure of the command, and ended
    /// as a C program's is, quietly by SIGPIPE.
    pub fn is_closed_stdout(&self) -> bool {
        matches!(self, Error::Io { path, source, .. }
            if source.kind() == std::io::ErrorKind::BrokenPipe
                && path.as_path() == std::path::Path::new("standard output"))
    }

    /// A usage error: something the user can fix (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Whether another connection's lock refused the operation (SQLite's
    /// SQLITE_BUSY or SQLITE_LOCKED past the busy timeout; a server's lock
    /// wait timeout, deadlock or serialization failure): the transaction
    /// can be rolled back and tried again, nothing is broken.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Failed { class, .. } => *class == FailureClass::Busy,
            Error::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            Error::Server { message, .. } => {
                let m = message.to_ascii_lowercase();
                [
                    "deadlock",
                    "lock wait timeout",
                    "could not serialize",
                    "lock timeout",
                    "concurrent write (a conflict)",
                ]
                .iter()
                .any(|s| m.contains(s))
            }
            _ => false,
        }
    }

    /// Whether the disk (or the user's quota) is full: a file's ENOSPC or
    /// EDQUOT, SQLite's SQLITE_FULL.
    pub fn is_disk_full(&self) -> bool {
        use std::io::ErrorKind::{QuotaExceeded, StorageFull};
        match self {
            Error::Io { source, .. } => matches!(source.kind(), StorageFull | QuotaExceeded),
            Error::Sqlite { source, .. } => {
                source.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
            }
            // What [`Error::sqlite`] makes of SQLITE_FULL.
            Error::Usage(message) => message.contains(&format!(": {SQLITE_DISK_FULL} (SQLite:")),
            _ => false,
        }
    }

    /// A failed operation's class, as [`Failed`](Error::Failed) names it or
    /// as the error's kind says: what a run counts it as.
    pub fn class(&self) -> FailureClass {
        use std::io::ErrorKind::*;
        match self {
            Error::Failed { class, .. } => *class,
            _ if self.is_busy() => FailureClass::Busy,
            Error::MissingKey { .. } => FailureClass::NotFound,
            Error::Verify(_) => FailureClass::WrongBytes,
            Error::Connect { class, .. } => *class,
            Error::Io { source, .. } => match source.kind() {
                TimedOut | WouldBlock => FailureClass::Timeout,
                ConnectionRefused | ConnectionReset | ConnectionAborted | NotConnected
                | BrokenPipe | UnexpectedEof | HostUnreachable | NetworkUnreachable => {
                    FailureClass::Connection
                }
                _ => FailureClass::Other,
            },
            Error::Server { message, .. } => FailureClass::from_message(message),
            _ => FailureClass::Other,
        }
    }

    /// A classified failure of an operation on `target`.
    pub fn failed(target: &Path, class: FailureClass, message: impl std::fmt::Display) -> Self {
        Error::Failed {
            target: target.display().to_string(),
            class,
            message: one_line(&message.to_string()),
        }
    }

    /// A file operation's failure on `path`.
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// SQLite's failure on the database `path`. A damaged or truncated
    /// file (or one that is not a database) is the user's to fix, so it is
    /// a usage error that says how.
    pub fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{DatabaseCorrupt, DiskFull, NotADatabase};
        if let Some(why) = cannot_write(path, &source) {
            return Error::Usage(format!(
                "cannot write {}: {why} (SQLite: {source}); run as a user who can write it and its folder, or choose another path (--dir for suites)",
                path.display()
            ));
        }
        if let Some(limit) = limit_met(&source) {
            return Error::Usage(format!("{}: {limit} (SQLite: {source})", path.display()));
        }
        if source.sqlite_error_code() == Some(DiskFull) {
            return Error::Usage(format!(
                "{}: {SQLITE_DISK_FULL} (SQLite: {source}); free some space, or put the data on a larger disk (--dir for suites)",
                path.display()
            ));
        }
        if let Some(code @ (DatabaseCorrupt | NotADatabase)) = source.sqlite_error_code() {
            let what = if code == NotADatabase {
                "is not an SQLite database (or its header is damaged)"
            } else {
                "is damaged or truncated"
            };
            return Error::Usage(format!(
                "{}: the file {what} (SQLite: {source}); restore it from a copy, or remove it and recreate it with blobbench init",
                path.display()
            ));
        }
        Error::Sqlite {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A server error on `target`, as one line.
    pub fn server(target: &Path, message: impl std::fmt::Display) -> Self {
        Error::Server {
            target: target.display().to_string(),
            message: one_line(&message.to_string()),
        }
    }

    /// A server that cannot be reached at `target`, as one line.
    pub fn connect(target: &Path, message: impl std::fmt::Display) -> Self {
        Error::unreachable(target, FailureClass::Connection, message)
    }

    /// A server that could not be reached at `target` in the way `class`
    /// says (a timeout, a connection refused): the user's to fix (exit 2)
    /// when it ends a command, a failure of that class inside a run.
    pub fn unreachable(
        target: &Path,
        class: FailureClass,
        message: impl std::fmt::Display,
    ) -> Self {
        Error::Connect {
            target: target.display().to_string(),
            message: one_line(&message.to_string()),
            class,
        }
    }

    /// 2 for anything the user can fix by changing the command line or the
    /// paths it names (as clap does for bad arguments), 1 for failures.
    pub fn exit_code(&self) -> i32 {
        use std::io::ErrorKind::*;
        match self {
            Error::Usage(_) | Error::Connect { .. } | Error::MissingKey { .. } => 2,
            // As a shell reports a process the signal ended.
            Error::Interrupted(i) => 128 + i.signal,
            Error::Io { source, .. }
                if matches!(
                    source.kind(),
                    NotFound
                        | PermissionDenied
                        | ReadOnlyFilesystem
                        | AlreadyExists
                        | NotADirectory
                        | StorageFull
                        | IsADirectory
                        | QuotaExceeded
                        | FileTooLarge
                ) =>
            {
                2
            }
            Error::Io { source, .. }
                if matches!(source.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) =>
            {
                2
            }
            _ => 1,
        }
    }
}

/// How an operation failed: the classes a run counts failures by
/// (docs/METHODS.md, "How blobbench measures": "Failures are outcomes").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(tag = "class", rename_all = "kebab-case")]
pub enum FailureClass {
    /// No answer within the stated timeout.
    Timeout,
    /// The connection could not be made, or was refused, reset or closed.
    Connection,
    /// The server answered with an error status (HTTP 5xx and other
    /// non-success codes the store does not name below).
    ServerStatus {
        /// The status code (500, 503, ...).
        code: u16,
    },
    /// The server asked the client to slow down (HTTP 429, S3 SlowDown).
    Throttled,
    /// Another connection's lock refused the operation past the busy timeout.
    Busy,
    /// A write conflicted with another (a certification failure, a
    /// precondition that no longer held).
    Conflict,
    /// The key was not there.
    NotFound,
    /// Bytes read back are not the blob's.
    WrongBytes,
    /// Anything else (the message says what).
    Other,
}

impl FailureClass {
    /// A short name for tables and the closing line ("timeout", "server
    /// error 500").
    pub fn label(&self) -> String {
        match self {
            FailureClass::Timeout => "timeout".into(),
            FailureClass::Connection => "connection".into(),
            FailureClass::ServerStatus { code } => format!("server error {code}"),
            FailureClass::Throttled => "throttled".into(),
            FailureClass::Busy => "busy".into(),
            FailureClass::Conflict => "conflict".into(),
            FailureClass::NotFound => "not found".into(),
            FailureClass::WrongBytes => "wrong bytes".into(),
            FailureClass::Other => "other".into(),
        }
    }

    /// Whether the failure may have left the connection unusable, so a
    /// worker opens a new one before its next operation.
    pub fn breaks_connection(&self) -> bool {
        matches!(
            self,
            FailureClass::Timeout | FailureClass::Connection | FailureClass::Other
        )
    }

    /// The class a server's one-line message names, for drivers that give
    /// only text (a lost connection, a timeout, a Galera conflict).
    pub fn from_message(message: &str) -> FailureClass {
        let m = message.to_ascii_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
        if has(&[
            "deadlock",
            "lock wait timeout",
            "could not serialize",
            "lock timeout",
        ]) {
            FailureClass::Busy
        } else if has(&["timed out", "timeout"]) {
            FailureClass::Timeout
        } else if has(&[
            "connection",
            "communicating with the server",
            "disconnected",
            "broken pipe",
            "server has gone away",
            "lost connection",
            "eof",
        ]) {
            FailureClass::Connection
        } else if has(&["wsrep has not yet prepared", "wsrep_not_ready"]) {
            // The node takes no statement until it rejoins: another
            // connection (another node) is the way on.
            FailureClass::Connection
        } else if has(&["conflict"]) {
            FailureClass::Conflict
        } else {
            FailureClass::Other
        }
    }
}

/// The fix a file operation's failure calls for, when the user can make
/// it: permissions or a read-only filesystem.
/// The fix for an SQLite error the user can act on: a lock another
/// connection held past the wait (5 s unless --busy-timeout says).
fn sqlite_fix(source: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    match source.sqlite_error_code() {
        Some(DatabaseBusy | DatabaseLocked) => {
            " (another connection held its lock past the wait, 5 s unless --busy-timeout says): let the other writer finish, or give a longer --busy-timeout"
        }
        _ => "",
    }
}

fn io_fix(source: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match source.kind() {
        PermissionDenied => "; run as a user who may use it, or choose another path".into(),
        ReadOnlyFilesystem => {
            "; its filesystem is mounted read-only: choose a path on another".into()
        }
        _ => crate::limits::clause(source)
            .map(|c| format!("; {c}"))
            .unwrap_or_default(),
    }
}

/// The limit of this process SQLite's failure met, as a clause with its
/// fix: SQLite names neither (a write past `ulimit -f` is a "disk I/O
/// error", an open past `ulimit -n` "unable to open database file"). A
/// failed write with a file-size limit set is taken to have met it: the
/// limit is rare, and SQLite has rolled back (shrunk the file) by now.
fn limit_met(source: &rusqlite::Error) -> Option<String> {
    use rusqlite::ErrorCode::{CannotOpen, DiskFull, SystemIoFailure};
    match source.sqlite_error_code()? {
        SystemIoFailure | DiskFull if crate::limits::file_size().is_some() => {
            Some(crate::limits::file_size_clause())
        }
        CannotOpen if crate::limits::open_files_exhausted() => {
            Some(crate::limits::open_files_clause())
        }
        _ => None,
    }
}

/// Why SQLite could not write `path`, when the reason is the user's to fix:
/// the file or its folder (where the journal goes) is not writable by this
/// user, or lies on a read-only filesystem. None for other failures, and
/// for a database blobbench itself opened read-only.
fn cannot_write(path: &Path, source: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
    if !matches!(
        source.sqlite_error_code(),
        Some(ReadOnly | CannotOpen | PermissionDenied)
    ) {
        return None;
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    [path, folder].into_iter().find_map(|p| match writable(p) {
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
            Some("its filesystem is mounted read-only")
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some("permission denied"),
        _ => None,
    })
}

/// Whether this user may write `path` (access(2) with W_OK: nothing is
/// opened or changed); a path that does not exist is no answer (Ok).
fn writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: access(2) reads the NUL-terminated path and nothing else.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        return Ok(());
    }
    match std::io::Error::last_os_error() {
        e if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        e => Err(e),
    }
}

fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_database_says_whose_lock_and_the_fix() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("database is locked".into()),
        );
        let text = Error::sqlite(Path::new("x.db"), busy).to_string();
        assert!(text.contains("database is locked"), "{text}");
        assert!(text.contains("give a longer --busy-timeout"), "{text}");
        let other = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT),
            None,
        );
        assert!(
            !Error::sqlite(Path::new("x.db"), other)
                .to_string()
                .contains("busy-timeout")
        );
    }
}
