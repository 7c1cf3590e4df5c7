//! Files blobbench writes: results, reports, tables. Every destination is
//! checked before any work starts, and only files blobbench wrote itself
//! are ever replaced; an earlier result or report is kept beside the new
//! one, named by its time, so a second run never loses the first.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::error::{Error, Result};
use crate::measure::environment::{Environment, busy_warning};
use crate::report::{html, text, view};
use crate::result::{self, ResultDocument};

/// A file may be written when it is new (in an existing folder) or when
/// blobbench wrote it, as `ours` judges from the file's text.
pub fn check_replaceable(
    option: &str,
    path: &Path,
    what: &str,
    ours: impl Fn(&str) -> bool,
) -> Result<()> {
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{option} {}: is a folder; name a file",
            path.display()
        )));
    }
    if path.exists() {
        let is_ours = std::fs::read(path)
            .ok()
            .map(|b| ours(&String::from_utf8_lossy(&b)))
            .unwrap_or(false);
        if !is_ours {
            return Err(Error::usage(format!(
                "refusing to overwrite \"{}\": it exists and is not a blobbench {what}; choose another {option} file",
                path.display()
            )));
        }
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(Error::usage(format!(
            "{option} {}: folder \"{}\" does not exist",
            path.display(),
            parent.display()
        )));
    }
    Ok(())
}

/// Writes a file through a temporary sibling and a rename, so a reader never
/// sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = write_temporary(path, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename to", path, e))
}

/// Writes `bytes` to `path` + ".tmp", to be renamed over `path`.
fn write_temporary(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| Error::io("cannot write", &tmp, e))?;
    Ok(tmp)
}

/// Refuses to replace a file that is not a report blobbench wrote.
pub fn check_html_target(option: &str, path: &Path) -> Result<()> {
    check_replaceable(option, path, "report", |t| t.contains(html::GENERATOR))
}

/// Refuses to replace a file that is not a Markdown report blobbench wrote.
pub fn check_markdown_target(option: &str, path: &Path) -> Result<()> {
    check_replaceable(option, path, "report", |t| {
        t.starts_with(text::MARKDOWN_MARK)
    })
}

/// Refuses to replace a file unless it is an earlier blobbench result.
pub fn check_result_target(path: &Path) -> Result<()> {
    check_replaceable("--json", path, "result", result::is_result)
}

/// Checks a result's and a report's destinations before any measuring starts.
pub fn check_outputs(json_path: &Path, report: Option<&Path>) -> Result<()> {
    check_result_target(json_path)?;
    if let Some(r) = report {
        check_html_target("--report", r)?;
    }
    Ok(())
}

/// Writes the document atomically, stamped finished now; an earlier result
/// at `path` is kept beside it (see [`write_keeping_earlier`]).
pub fn write_result(doc: &mut ResultDocument, path: &Path) -> Result<()> {
    check_result_target(path)?;
    let bytes = doc.to_json().map_err(|e| Error::Json {
        path: path.to_path_buf(),
        source: e,
    })?;
    write_keeping_earlier(path, &bytes, "result", result_time)
}

/// Renders result documents (with the file each came from) into one HTML
/// file; an earlier report at `path` is kept beside it.
pub fn write_html(path: &Path, docs: &[(ResultDocument, String)]) -> Result<()> {
    check_html_target("--report", path)?;
    let page = html::render(&view::sections(docs));
    write_keeping_earlier(path, page.as_bytes(), "report", modified)
}

/// Files this process has written. Writing one again (a sweep saves its
/// result after every run, then once more with its report) replaces this
/// command's own work, which is not an earlier result worth keeping.
static WRITTEN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Writes `bytes` to `path` atomically. When `path` holds a file an earlier
/// command wrote, that file is first kept beside it under a name carrying
/// its time (`time` reads it from the file, else its modification time),
/// and stderr says so: a result is never replaced without a trace.
pub fn write_keeping_earlier(
    path: &Path,
    bytes: &[u8],
    what: &str,
    time: fn(&Path) -> Option<SystemTime>,
) -> Result<()> {
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let ours = written.iter().any(|p| p == path);
    if ours || !path.is_file() {
        write_atomically(path, bytes)?;
    } else {
        let tmp = write_temporary(path, bytes)?;
        let stamp = time(path).or_else(|| modified(path));
        let kept = keep_beside(path, stamp.unwrap_or_else(SystemTime::now)).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename to", path, e))?;
        eprintln!("kept the earlier {what} as {}", kept.display());
    }
    if !ours {
        written.push(path.to_path_buf());
    }
    Ok(())
}

/// When an earlier result says it finished (its `finished_at`).
fn result_time(path: &Path) -> Option<SystemTime> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    humantime::parse_rfc3339_weak(value.get("finished_at")?.as_str()?).ok()
}

/// The file's modification time.
fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// `quick.json` finished at 10:41:05 UTC becomes
/// `quick.2026-11-22T10-41-05.json` (colons do not belong in file names);
/// `n` > 0 adds a counter, `quick.2026-11-22T10-41-05-2.json`.
pub fn kept_name(path: &Path, time: SystemTime, n: u32) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(time)
        .to_string()
        .trim_end_matches('Z')
        .replace(':', "-");
    let stamp = if n == 0 {
        stamp
    } else {
        format!("{stamp}-{}", n + 1)
    };
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{stamp}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{stamp}"),
    };
    path.with_file_name(name)
}

/// Gives the file at `path` a second name beside it, by its time, never
/// taking a name that exists (a counter is added); returns that name. A
/// hard link leaves `path` in place until the new file is renamed over it;
/// where links are not supported, the file is renamed instead.
fn keep_beside(path: &Path, time: SystemTime) -> Result<PathBuf> {
    for n in 0..10_000 {
        let kept = kept_name(path, time, n);
        match std::fs::hard_link(path, &kept) {
            Ok(()) => return Ok(kept),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) if kept.symlink_metadata().is_err() => {
                std::fs::rename(path, &kept)
                    .map_err(|e| Error::io("cannot keep the earlier file as", &kept, e))?;
                return Ok(kept);
            }
            Err(e) => return Err(Error::io("cannot keep the earlier file as", &kept, e)),
        }
    }
    Err(Error::usage(format!(
        "{}: too many earlier copies beside it; move some away",
        path.display()
    )))
}

/// Completes the environment captured when the command started (load
/// average at the end, CPU steal over the command) and warns on stderr when
/// the machine was busy; returns the warning, for commands that record it.
pub fn finish_environment(environment: &mut Environment) -> Option<String> {
    environment.finish();
    warn_if_busy(environment)
}

/// Prints [`busy_warning`] on stderr when it fires, and returns it.
pub fn warn_if_busy(environment: &Environment) -> Option<String> {
    let warning = busy_warning(environment);
    if let Some(w) = &warning {
        eprintln!("warning: {w}");
    }
    warning
}

/// Writes the JSON result and, when asked, the HTML report drawn from it
/// (from the document as written and read back, not from live state).
pub fn write_result_with_report(
    doc: &mut ResultDocument,
    json_path: &Path,
    report: Option<&Path>,
) -> Result<()> {
    write_result(doc, json_path)?;
    if let Some(report) = report {
        let written = result::load(json_path)?;
        write_html(report, &[(written, json_path.display().to_string())])?;
        eprintln!("report written to {}", report.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> SystemTime {
        humantime::parse_rfc3339(rfc3339).unwrap()
    }

    #[test]
    fn kept_names_carry_the_time_and_a_counter() {
        let t = at("2026-11-22T10:41:05Z");
        let name = |p: &str, n| kept_name(Path::new(p), t, n);
        assert_eq!(
            name("quick.json", 0),
            Path::new("quick.2026-11-22T10-41-05.json")
        );
        assert_eq!(
            name("out/report.html", 1),
            Path::new("out/report.2026-11-22T10-41-05-2.html")
        );
        assert_eq!(name("result", 0), Path::new("result.2026-11-22T10-41-05"));
        assert_eq!(
            name("a.v2.json", 0),
            Path::new("a.v2.2026-11-22T10-41-05.json")
        );
    }

    #[test]
    fn an_earlier_file_is_kept_once_and_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.json");
        let time = |_: &Path| Some(at("2026-11-22T10:41:05Z"));
        // Nothing there: nothing kept.
        write_keeping_earlier(&path, b"first", "result", time).unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // Written by this process: rewritten in place (a sweep's saves).
        write_keeping_earlier(&path, b"second", "result", time).unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // Written by an earlier command: kept by its time, then with a
        // counter when that name is taken.
        let kept = tmp.path().join("r.2026-11-22T10-41-05.json");
        std::fs::write(&kept, b"someone's").unwrap();
        WRITTEN.lock().unwrap().retain(|p| p != &path);
        write_keeping_earlier(&path, b"third", "result", time).unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), b"someone's");
        let counted = tmp.path().join("r.2026-11-22T10-41-05-2.json");
        assert_eq!(std::fs::read(&counted).unwrap(), b"second");
        assert_eq!(std::fs::read(&path).unwrap(), b"third");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 3);
    }
}
