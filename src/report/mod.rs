//! Results (the versioned JSON document) and their renderings: terminal
//! tables, HTML with charts, Markdown, CSV, PNG, and comparisons.

pub mod advise_view;
pub mod chart;
pub mod compare;
pub mod html;
pub mod png;
pub mod result;
pub mod table;
pub mod text;
pub mod view;

use std::path::Path;

use crate::error::{Error, Result};

/// Refuses to replace a file that is not a report blobbench wrote.
pub fn check_html_target(option: &str, path: &Path) -> Result<()> {
    check_replaceable(option, path, "report", |t| t.contains(html::GENERATOR))
}

pub fn check_markdown_target(option: &str, path: &Path) -> Result<()> {
    check_replaceable(option, path, "report", |t| {
        t.starts_with(text::MARKDOWN_MARK)
    })
}

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
/// sees half a report.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| Error::io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename to", path, e))
}

/// Renders result documents (with the file each came from) into one HTML file.
pub fn write_html(path: &Path, docs: &[(serde_json::Value, String)]) -> Result<()> {
    check_html_target("--report", path)?;
    write_atomically(path, html::render(&view::sections(docs)).as_bytes())
}
