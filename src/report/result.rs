//! The result document: everything needed to understand and rerun a
//! measurement. Tables and comparisons are rendered from it, never from
//! live state.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::measure::environment::Environment;
use crate::workload::RunResult;

pub const SCHEMA: &str = "blobbench-result";
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct ResultDocument {
    pub schema: &'static str,
    pub schema_version: u32,
    pub command: String,
    /// The exact command line, so a reader can rerun it.
    pub argv: Vec<String>,
    pub started_at: String,
    pub finished_at: String,
    pub environment: Environment,
    pub runs: Vec<RunResult>,
    /// Command-specific tables (quick's comparison, disk space, ...).
    pub tables: serde_json::Value,
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

impl ResultDocument {
    pub fn new(command: &str, environment: Environment) -> Self {
        ResultDocument {
            schema: SCHEMA,
            schema_version: SCHEMA_VERSION,
            command: command.to_string(),
            argv: std::env::args().collect(),
            started_at: now_rfc3339(),
            finished_at: String::new(),
            environment,
            runs: Vec::new(),
            tables: serde_json::Value::Null,
        }
    }
}

/// Refuses to replace a file unless it is an earlier blobbench result.
pub fn check_can_write(path: &Path) -> Result<()> {
    super::check_replaceable("--json", path, "result", |text| {
        serde_json::from_str::<serde_json::Value>(text)
            .is_ok_and(|v| v.get("schema").and_then(|s| s.as_str()) == Some(SCHEMA))
    })
}

/// Writes the document atomically (temporary file + rename).
pub fn write(doc: &mut ResultDocument, path: &Path) -> Result<()> {
    check_can_write(path)?;
    doc.finished_at = now_rfc3339();
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
    serde_json::to_writer_pretty(&mut f, doc).map_err(|e| Error::Json {
        path: path.to_path_buf(),
        source: e,
    })?;
    f.write_all(b"\n")
        .map_err(|e| Error::io("cannot write", &tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot rename to", path, e))
}

/// Writes the JSON result and, when asked, the HTML report drawn from it
/// (from the document as written, not from live state).
pub fn write_with_report(
    doc: &mut ResultDocument,
    json_path: &Path,
    report: Option<&Path>,
) -> Result<()> {
    write(doc, json_path)?;
    if let Some(report) = report {
        let value = serde_json::to_value(&*doc).map_err(|e| Error::Json {
            path: json_path.to_path_buf(),
            source: e,
        })?;
        super::write_html(report, &[(value, json_path.display().to_string())])?;
        eprintln!("report written to {}", report.display());
    }
    Ok(())
}

/// Checks both destinations before any measuring starts.
pub fn check_outputs(json_path: &Path, report: Option<&Path>) -> Result<()> {
    check_can_write(json_path)?;
    if let Some(r) = report {
        super::check_html_target("--report", r)?;
    }
    Ok(())
}
