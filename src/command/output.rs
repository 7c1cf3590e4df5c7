//! Files blobbench writes: results, reports, tables. Every destination is
//! checked before any work starts, and only files blobbench wrote itself
//! are ever replaced.

use std::path::Path;

use crate::error::{Error, Result};
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
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| Error::io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename to", path, e))
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

/// Writes the document atomically, stamped finished now.
pub fn write_result(doc: &mut ResultDocument, path: &Path) -> Result<()> {
    check_result_target(path)?;
    let bytes = doc.to_json().map_err(|e| Error::Json {
        path: path.to_path_buf(),
        source: e,
    })?;
    write_atomically(path, &bytes)
}

/// Renders result documents (with the file each came from) into one HTML file.
pub fn write_html(path: &Path, docs: &[(ResultDocument, String)]) -> Result<()> {
    check_html_target("--report", path)?;
    write_atomically(path, html::render(&view::sections(docs)).as_bytes())
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
