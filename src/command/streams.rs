//! Where a command's output goes, decided once for the whole process, as
//! hyperfine and ripgrep users expect of a CLI:
//!
//! - `--json -` writes the result to standard output; everything else a
//!   command prints (its human table, notes) then goes to standard error,
//!   so `blobbench run x.db --json - | jq .` reads nothing but JSON. This is
//!   done at the file descriptors, not by every `println!` knowing about it:
//!   the original standard output is kept for the result and descriptor 1
//!   is pointed at standard error before anything is printed.
//! - `--quiet` prints only errors and the one-line summary: descriptors 1
//!   and 2 are pointed at /dev/null, the originals kept for those two.
//! - Colour and progress bars only on a terminal, never with `NO_COLOR`
//!   set to anything but the empty string (no-color.org) or `--quiet`.

use std::fs::File;
use std::io::{IsTerminal as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::Path;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// The `--json` value that means standard output (as `-` does for curl,
/// jq and tar).
pub const STDOUT_NAME: &str = "-";

/// The original standard output and standard error, once a redirection
/// took their descriptors; `None` while they are where they were.
struct Originals {
    stdout: Option<File>,
    stderr: Option<File>,
    quiet: bool,
    result_on_stdout: bool,
    /// Where the last result was written.
    result: Option<std::path::PathBuf>,
}

static ORIGINALS: Mutex<Originals> = Mutex::new(Originals {
    stdout: None,
    stderr: None,
    quiet: false,
    result_on_stdout: false,
    result: None,
});

fn originals() -> std::sync::MutexGuard<'static, Originals> {
    ORIGINALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a `--json` path names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT_NAME
}

/// How a `--json` path is named in messages.
pub fn shown(path: &Path) -> String {
    if is_stdout(path) {
        "standard output".into()
    } else {
        path.display().to_string()
    }
}

/// A copy of descriptor `fd` (1 or 2) as a file of its own.
fn keep(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<File> {
    fd.try_clone_to_owned().map(File::from)
}

/// Points descriptor `to` at what `from` refers to (dup2).
fn point(from: &impl std::os::fd::AsRawFd, to: i32) -> std::io::Result<()> {
    let _ = std::io::stdout().flush();
    // SAFETY: dup2 takes two descriptor numbers and no pointers; `from` is
    // open for the length of the call.
    if unsafe { libc::dup2(from.as_raw_fd(), to) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn redirect_failed(e: std::io::Error) -> Error {
    Error::usage(format!(
        "cannot redirect the output ({e}); run without --quiet or --json -"
    ))
}

/// `--quiet`: from now on only errors ([`error_line`]) and the summary
/// ([`summary_line`]) are shown; everything else printed goes to /dev/null.
pub fn go_quiet() -> Result<()> {
    let null: OwnedFd = File::options()
        .write(true)
        .open("/dev/null")
        .map_err(redirect_failed)?
        .into();
    let mut o = originals();
    if o.stdout.is_none() {
        o.stdout = Some(keep(std::io::stdout().as_fd()).map_err(redirect_failed)?);
    }
    o.stderr = Some(keep(std::io::stderr().as_fd()).map_err(redirect_failed)?);
    point(&null, 1).map_err(redirect_failed)?;
    point(&null, 2).map_err(redirect_failed)?;
    o.quiet = true;
    Ok(())
}

/// `--json -`: keeps standard output for the result and sends everything
/// else printed to standard error. Called when the destinations are
/// checked, before the command prints anything.
pub fn reserve_stdout_for_result() -> Result<()> {
    let mut o = originals();
    if o.result_on_stdout {
        return Ok(());
    }
    if o.stdout.is_none() {
        o.stdout = Some(keep(std::io::stdout().as_fd()).map_err(redirect_failed)?);
    }
    point(&std::io::stderr(), 1).map_err(redirect_failed)?;
    o.result_on_stdout = true;
    Ok(())
}

/// Writes a document (a result's JSON, a completion script, the manual)
/// to the original standard output, also under `--quiet`.
pub fn write_to_stdout(bytes: &[u8]) -> Result<()> {
    let mut o = originals();
    let written = match o.stdout.as_mut() {
        Some(out) => out.write_all(bytes).and_then(|()| out.flush()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
    };
    written.map_err(|e| Error::io("cannot write to", Path::new("standard output"), e))
}

/// Prints a command's closing line: on standard output, or on standard
/// error when standard output carries the result; shown under `--quiet`.
pub fn summary_line(line: &str) {
    let mut o = originals();
    let on_stderr = o.result_on_stdout;
    let kept = if on_stderr {
        o.stderr.as_mut()
    } else {
        o.stdout.as_mut()
    };
    let _ = match kept {
        Some(f) => writeln!(f, "{line}"),
        None if on_stderr => writeln!(std::io::stderr(), "{line}"),
        None => writeln!(std::io::stdout(), "{line}"),
    };
}

/// The one line `--quiet` keeps: `quick finished in 41.2 s; result in
/// quick.json` (or "on standard output").
pub fn summary(command: &str, took: std::time::Duration) -> String {
    let o = originals();
    let result = match &o.result {
        Some(path) if is_stdout(path) => "; result on standard output".to_string(),
        Some(path) => format!("; result in {}", path.display()),
        None => String::new(),
    };
    format!("{command} finished in {:.1} s{result}", took.as_secs_f64())
}

/// Remembers where the command wrote its result, for [`summary`].
pub fn note_result(path: &Path) {
    originals().result = Some(path.to_path_buf());
}

/// Prints an error line on the original standard error (shown under
/// `--quiet` too).
pub fn error_line(line: &str) {
    let mut o = originals();
    let _ = match o.stderr.as_mut() {
        Some(f) => writeln!(f, "{line}"),
        None => writeln!(std::io::stderr(), "{line}"),
    };
}

/// [`error_line`] for the panic hook: the panic may have struck while this
/// thread held the lock, so it never waits for it (standard error then, as
/// before any redirection).
pub fn panic_line(line: &str) {
    let mut held = match ORIGINALS.try_lock() {
        Ok(o) => Some(o),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let _ = match held.as_mut().and_then(|o| o.stderr.as_mut()) {
        Some(f) => writeln!(f, "{line}"),
        None => writeln!(std::io::stderr(), "{line}"),
    };
}

/// Whether `--quiet` is in force.
pub fn quiet() -> bool {
    originals().quiet
}

/// Whether `NO_COLOR` asks for no colour: set to anything but "".
fn no_color_env(value: Option<std::ffi::OsString>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// Whether text for standard output may be coloured: it is a terminal
/// (and carries no result), `NO_COLOR` is unset or empty, not `--quiet`.
pub fn colors_on_stdout() -> bool {
    let o = originals();
    !o.quiet
        && !o.result_on_stdout
        && std::io::stdout().is_terminal()
        && !no_color_env(std::env::var_os("NO_COLOR"))
}

/// Whether progress bars are drawn: standard error is a terminal,
/// `NO_COLOR` is unset or empty, and not `--quiet`.
pub fn progress_shown() -> bool {
    !quiet() && std::io::stderr().is_terminal() && !no_color_env(std::env::var_os("NO_COLOR"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_counts_only_when_not_empty() {
        assert!(!no_color_env(None));
        assert!(!no_color_env(Some("".into())));
        assert!(no_color_env(Some("1".into())));
        assert!(no_color_env(Some("false".into())));
    }

    #[test]
    fn a_dash_names_standard_output() {
        assert!(is_stdout(Path::new("-")));
        assert!(!is_stdout(Path::new("./-")));
        assert!(!is_stdout(Path::new("quick.json")));
        assert_eq!(shown(Path::new("-")), "standard output");
        assert_eq!(shown(Path::new("a.json")), "a.json");
    }
}
