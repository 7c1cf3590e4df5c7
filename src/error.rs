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
    #[error("{action} {path}: {source}")]
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
    #[error("SQLite error on {path}: {source}")]
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
    },
    /// A blob read back does not hold the content the dataset says.
    #[error("verification failed: {0}")]
    Verify(String),
    /// `compare --fail-on-slower` found slower cases. Exit status 1.
    #[error("{0} case(s) slower beyond the noise (--fail-on-slower)")]
    Regression(usize),
    /// A signal (SIGINT, SIGTERM, SIGHUP) asked the run to stop; the suite
    /// unwound, unmounting and removing every volume it made on the way
    /// (a volume that could not be removed is named on stderr before this
    /// line). Exit status 130, as a shell reports a Ctrl-C.
    #[error(
        "interrupted ({0}): everything the suite mounted was unmounted and removed (anything left is named above)"
    )]
    Interrupted(String),
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

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
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
        if source.sqlite_error_code() == Some(DiskFull) {
            return Error::Usage(format!(
                "{}: the disk is full (SQLite: {source}); free some space, or put the data on a larger disk (--dir for suites)",
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
        Error::Connect {
            target: target.display().to_string(),
            message: one_line(&message.to_string()),
        }
    }

    /// 2 for anything the user can fix by changing the command line or the
    /// paths it names (as clap does for bad arguments), 1 for failures.
    pub fn exit_code(&self) -> i32 {
        use std::io::ErrorKind::*;
        match self {
            Error::Usage(_) | Error::Connect { .. } | Error::MissingKey { .. } => 2,
            Error::Interrupted(_) => 130,
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
            _ => 1,
        }
    }
}

fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
