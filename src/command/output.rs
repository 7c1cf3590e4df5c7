//! Files blobbench writes: results, reports, tables. Every destination is
//! checked before any work starts, and only files blobbench wrote itself
//! are ever replaced; an earlier result or report is kept beside the new
//! one, named by its time, so a second run never loses the first.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::streams;
use crate::cli::shared::{ResultFileArgs, TableFileArgs};
use crate::error::{Error, Result};
use crate::measure::environment::{Environment, busy_warning};
use crate::report::{html, sections, text};
use crate::result::{self, ResultDocument};

/// A file may be written when it is new (in an existing, writable folder)
/// or when blobbench wrote it, as `ours` judges from the file's text. The
/// folder is proven writable by creating (and removing) a file of our own
/// in it, so a destination that cannot be written fails here, before any
/// work, not after the benchmark ran.
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
    check_parent_writable(option, path)?;
    if path.symlink_metadata().is_ok() {
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
    Ok(())
}

/// Refuses a path that is not UTF-8: results and reports record the paths
/// they name as text, and a lossy copy would name another file.
pub fn require_utf8(option: &str, path: &Path) -> Result<()> {
    if path.to_str().is_none() {
        return Err(Error::usage(format!(
            "{option} \"{}\": the path is not valid UTF-8; rename it (or link to it) under a UTF-8 name",
            path.to_string_lossy()
        )));
    }
    Ok(())
}

/// The folder a file named by `path` goes into ("." for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The folder `path` goes into must exist, be a folder and take a new file.
fn check_parent_writable(option: &str, path: &Path) -> Result<()> {
    let parent = parent_of(path);
    if !parent.exists() {
        // A file on the way (`notes.txt/x.json`) is its own mistake.
        let blocked = parent.ancestors().skip(1).find(|a| a.is_file());
        return Err(Error::usage(match blocked {
            Some(file) => format!(
                "{option} {}: \"{}\" is a file, not a folder; choose another {option} path",
                path.display(),
                file.display()
            ),
            None => format!(
                "{option} {}: folder \"{}\" does not exist; create it first or choose another {option} path",
                path.display(),
                parent.display()
            ),
        }));
    }
    if !parent.is_dir() {
        return Err(Error::usage(format!(
            "{option} {}: \"{}\" is a file, not a folder; choose another {option} path",
            path.display(),
            parent.display()
        )));
    }
    check_folder_writable(option, path, parent)
}

/// Proves that a new file can be created in `dir` by creating one with a
/// unique name (exclusively: nothing is replaced) and removing it again.
/// `shown` is the value the user gave for `option`.
pub fn check_folder_writable(option: &str, shown: &Path, dir: &Path) -> Result<()> {
    probe(dir).map_err(|e| {
        let reason = match e.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
            None => e.to_string(),
        };
        Error::usage(format!(
            "{option} {}: cannot create a file in \"{}\" ({reason}); choose a folder you can write",
            shown.display(),
            dir.display(),
        ))
    })
}

/// Creates a new file in `dir` under a name no one else uses (created
/// exclusively, so nothing is replaced or followed), then removes it.
fn probe(dir: &Path) -> std::io::Result<()> {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for n in 0..100u32 {
        let name = format!(".blobbench-probe-{}-{nanos}-{n}", std::process::id());
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return std::fs::remove_file(&path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
}

/// Checks, before a run that writes, that this user can write the local
/// data at `path` (a database file and the folder its journal goes in, or
/// a folder of blob files): else every write would fail inside the run.
/// Nothing is changed: the file is opened for writing without truncating
/// and closed, the folder probed with a file made and removed.
pub fn check_data_writable(path: &Path) -> Result<()> {
    let cannot = |what: &Path, e: std::io::Error| {
        let reason = match e.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
            None => e.to_string(),
        };
        Error::usage(format!(
            "cannot write {}: {reason}; run as a user who can write it, or choose another path",
            what.display()
        ))
    };
    let folder = if path.is_dir() {
        path
    } else if path.is_file() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| cannot(path, e))?;
        parent_of(path)
    } else {
        // Missing: the run's open says so, naming the fix.
        return Ok(());
    };
    probe(folder).map_err(|e| cannot(folder, e))
}

/// Checks a work folder (`--dir`) before any work: it is a folder that
/// takes new files, or can be created under the nearest folder that exists.
pub fn check_work_dir(option: &str, dir: &Path) -> Result<()> {
    require_utf8(option, dir)?;
    let existing = dir
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.exists())
        .unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return Err(Error::usage(format!(
            "{option} {}: \"{}\" is a file, not a folder; name a folder",
            dir.display(),
            existing.display()
        )));
    }
    check_folder_writable(option, dir, existing)
}

/// Writes a file through a temporary sibling and a rename, so a reader never
/// sees half a file. The temporary file has a unique name and is created
/// exclusively (never a user's `X.tmp`, never through a symbolic link), and
/// the rename replaces the name `path`, never a file a link points to.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = write_temporary(path, bytes)?;
    tmp.persist(path)
        .map(drop)
        .map_err(|e| Error::io("cannot rename to", path, e.error))
}

/// Writes `bytes` to a new uniquely named file beside `path`, to be renamed
/// over it; the file is removed if it is dropped before that.
fn write_temporary(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    let dir = parent_of(path);
    let mut prefix = OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        // As a plain write would make it (the umask applies), not 0600.
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot create a temporary file in", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.flush())
        .map_err(|e| Error::io("cannot write", tmp.path(), e))?;
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
/// `--json -` takes standard output for the result from here on, before
/// the command prints anything (see [`streams`]).
pub fn check_result_target(path: &Path) -> Result<()> {
    if streams::is_stdout(path) {
        return streams::reserve_stdout_for_result();
    }
    check_replaceable("--json", path, "result", result::is_result)
}

/// Checks every destination of a suite before any measuring starts: the
/// result, the report (not the same file) and the work folder `--dir`.
pub fn check_outputs(json_path: &Path, report: Option<&Path>, dir: Option<&Path>) -> Result<()> {
    check_result_target(json_path)?;
    if let Some(r) = report {
        if r == json_path {
            return Err(Error::usage(format!(
                "--report {}: the same file as --json; name another file for the report",
                r.display()
            )));
        }
        check_html_target("--report", r)?;
    }
    if let Some(d) = dir {
        check_work_dir("--dir", d)?;
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
    streams::note_result(path);
    if streams::is_stdout(path) {
        return streams::write_to_stdout(&bytes);
    }
    write_keeping_earlier(path, &bytes, "result", result_time)
}

/// Renders result documents (with the file each came from) into one HTML
/// file; an earlier report at `path` is kept beside it.
pub fn write_html(path: &Path, docs: &[(ResultDocument, String)]) -> Result<()> {
    check_html_target("--report", path)?;
    let page = html::render(&sections::sections(docs));
    write_keeping_earlier(path, page.as_bytes(), "report", modified)
}

/// Files this process has written, each with the identity (device and
/// inode) of what it wrote. Writing one again (a sweep saves its result
/// after every run, then once more with its report) replaces this
/// command's own work, which is not an earlier result worth keeping; a file
/// someone put there meanwhile has another identity and is kept.
static WRITTEN: Mutex<Vec<(PathBuf, (u64, u64))>> = Mutex::new(Vec::new());

/// The device and inode of the name `path` itself (a link is not followed).
fn identity(path: &Path) -> Option<(u64, u64)> {
    path.symlink_metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// Writes `bytes` to `path` atomically. When `path` holds a file an earlier
/// command wrote, that file is first kept beside it under a name carrying
/// its time (`time` reads it from the file, else its modification time),
/// and stderr says so: a result is never replaced without a trace, and no
/// existing file is ever overwritten by the kept copy.
pub fn write_keeping_earlier(
    path: &Path,
    bytes: &[u8],
    what: &str,
    time: fn(&Path) -> Option<SystemTime>,
) -> Result<()> {
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let now = identity(path);
    let ours = now.is_some_and(|id| written.iter().any(|(p, w)| p == path && *w == id));
    let tmp = write_temporary(path, bytes)?;
    if !ours && now.is_some() {
        let stamp = time(path).or_else(|| modified(path));
        let kept = keep_beside(path, stamp.unwrap_or_else(SystemTime::now))?;
        eprintln!("kept the earlier {what} as {}", kept.display());
    }
    tmp.persist(path)
        .map_err(|e| Error::io("cannot rename to", path, e.error))?;
    written.retain(|(p, _)| p != path);
    if let Some(id) = identity(path) {
        written.push((path.to_path_buf(), id));
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
/// `n` > 0 adds a counter, `quick.2026-11-22T10-41-05-2.json`. The name's
/// own bytes are kept (a name that is not UTF-8 stays as it is).
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
    let mut name = path.file_stem().unwrap_or_default().to_owned();
    name.push(format!(".{stamp}"));
    if let Some(ext) = path.extension() {
        name.push(".");
        name.push(ext);
    }
    path.with_file_name(name)
}

/// Gives the file at `path` a second name beside it, by its time, never
/// taking a name that exists (a counter is added); returns that name. A
/// hard link leaves `path` in place until the new file is renamed over it;
/// where links are not supported, the bytes are copied into a file created
/// exclusively. Either way no existing file is replaced.
fn keep_beside(path: &Path, time: SystemTime) -> Result<PathBuf> {
    use std::io::ErrorKind::AlreadyExists;
    for n in 0..10_000 {
        let kept = kept_name(path, time, n);
        match std::fs::hard_link(path, &kept) {
            Ok(()) => return Ok(kept),
            Err(e) if e.kind() == AlreadyExists => continue,
            Err(_) => match copy_new(path, &kept) {
                Ok(()) => return Ok(kept),
                Err(e) if e.kind() == AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot keep the earlier file as", &kept, e)),
            },
        }
    }
    Err(Error::usage(format!(
        "{}: too many earlier copies beside it; move some away",
        path.display()
    )))
}

/// Copies `from` into the new file `to`, which must not exist; a partial
/// copy is removed.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    let copied = std::fs::File::open(from).and_then(|mut f| std::io::copy(&mut f, &mut out));
    if let Err(e) = copied {
        drop(out);
        let _ = std::fs::remove_file(to);
        return Err(e);
    }
    Ok(())
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
        let written = if streams::is_stdout(json_path) {
            // What was written, read back as a file would be.
            let bytes = doc.to_json().map_err(|e| Error::Json {
                path: json_path.to_path_buf(),
                source: e,
            })?;
            result::from_json(&bytes, "standard output")?
        } else {
            result::load(json_path)?
        };
        write_html(report, &[(written, streams::shown(json_path))])?;
        eprintln!("report written to {}", report.display());
    }
    Ok(())
}

/// Writes a suite's result and report where `--json` and `--report` say,
/// and says where the result went.
pub fn write_result_files(doc: &mut ResultDocument, files: &ResultFileArgs) -> Result<()> {
    write_result_with_report(doc, &files.json, files.report.as_deref())?;
    println!("result written to {}", streams::shown(&files.json));
    write_exports(doc, &files.json, &files.export)
}

/// Checks a suite's `--json`, `--report`, `--markdown` and `--csv`
/// destinations (and its work folder, when it has one) before any work.
pub fn check_result_files(files: &ResultFileArgs, dir: Option<&Path>) -> Result<()> {
    check_outputs(&files.json, files.report.as_deref(), dir)?;
    check_exports(&files.export)
}

/// Checks `--markdown FILE` and `--csv DIR` before any work.
pub fn check_exports(export: &TableFileArgs) -> Result<()> {
    super::report::check_exports(export.markdown.as_deref(), export.csv.as_deref())
}

/// Writes the result's tables as `--markdown` and `--csv` ask, as
/// `blobbench report` would from the result file at `source`.
pub fn write_exports(doc: &ResultDocument, source: &Path, export: &TableFileArgs) -> Result<()> {
    if export.markdown.is_none() && export.csv.is_none() {
        return Ok(());
    }
    let sections =
        crate::report::sections::sections(&[(doc.clone(), source.display().to_string())]);
    if let Some(md) = &export.markdown {
        super::report::write_markdown(&sections, md)?;
    }
    if let Some(dir) = &export.csv {
        super::report::write_csv(&sections, dir)?;
    }
    Ok(())
}

/// Says at the start, before anything is measured, when `compare` could
/// never call a change in this result significant: `rounds` samples a
/// case, `cases` cases in the largest section compared together.
pub fn warn_if_never_judged(rounds: u64, cases: usize) {
    warn_if_never_judged_by(rounds, cases, "--rounds");
}

/// [`warn_if_never_judged`] for the rounds `rule` runs at least (its
/// fixed count, or a precision target's floor, named --min-rounds).
pub fn warn_if_rule_never_judged(rule: &crate::result::rounds::RoundsRule, cases: usize) {
    let option = match rule {
        crate::result::rounds::RoundsRule::Fixed { .. } => "--rounds",
        crate::result::rounds::RoundsRule::Precision(_) => "--min-rounds",
    };
    warn_if_never_judged_by(rule.floor(), cases, option);
}

fn warn_if_never_judged_by(rounds: u64, cases: usize, option: &str) {
    if let Some(why) = crate::measure::significance::never_judged(rounds as usize, cases, option) {
        eprintln!("note: {why}");
    }
}

/// The fewest rounds at which compare can judge `cases` cases compared
/// together (a precision target's default floor).
pub fn judged_floor(cases: usize) -> u64 {
    crate::measure::significance::rounds_to_judge(cases).unwrap_or(0) as u64
}

/// A run's closing failures `line` with where to look: the result file
/// when one was written, else the table printed above.
pub fn look_where(line: Option<String>, json: Option<&Path>) -> Option<String> {
    line.map(|line| match json {
        Some(path) => format!("{line}; see {}", streams::shown(path)),
        None => format!("{line}; see the table above"),
    })
}

/// Prints, before a suite's table, the transactions its database runs used
/// (see `terminal::run::transaction_lines`).
pub fn print_transactions(doc: &crate::result::ResultDocument) {
    for line in crate::report::terminal::run::transaction_lines(&doc.runs) {
        println!("{line}");
    }
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
        WRITTEN.lock().unwrap().retain(|(p, _)| p != &path);
        write_keeping_earlier(&path, b"third", "result", time).unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), b"someone's");
        let counted = tmp.path().join("r.2026-11-22T10-41-05-2.json");
        assert_eq!(std::fs::read(&counted).unwrap(), b"second");
        assert_eq!(std::fs::read(&path).unwrap(), b"third");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 3);
    }
}
