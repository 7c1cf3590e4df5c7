//! The result document: the versioned JSON contract between what measures
//! and what renders. Commands write it; `report`, `compare` and the terminal
//! tables read it, never live state. One type per kind of result, each in
//! its own module; [`Tables`] holds the kind-specific part.
//!
//! Compatibility: documents written by earlier versions with the same
//! [`SCHEMA_VERSION`] must keep loading (tests/fixtures holds some).

pub mod advise;
pub mod aging;
pub mod budget;
pub mod compare;
pub mod fasterthanfs;
pub mod faults;
pub mod http;
pub mod init;
pub mod internal_external;
pub mod load;
pub mod lob;
pub mod mixed_run;
pub mod quick;
pub mod replicate;
pub mod reproduce;
pub mod rounds;
pub mod run;
pub mod scaling;
pub mod sweep;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::measure::environment::Environment;
pub use run::RunResult;

/// The value of every document's `schema` field.
pub const SCHEMA: &str = "blobbench-result";
/// The newest schema version this blobbench writes and understands.
pub const SCHEMA_VERSION: u32 = 1;

/// One result: the environment, the exact command line, every run and the
/// kind-specific tables.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "RawDocument")]
pub struct ResultDocument {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The version of the contract the document follows.
    pub schema_version: u32,
    /// The command that produced it: "quick", "run", "suite lob", ...
    /// ([`ResultKind::command`]).
    pub command: String,
    /// The exact command line, so a reader can rerun it.
    pub argv: Vec<String>,
    /// When the command started (RFC 3339, seconds).
    pub started_at: String,
    /// When the document was written.
    pub finished_at: String,
    /// The machine, filesystem and engines the numbers were measured on.
    pub environment: Environment,
    /// Every run the executor timed, with its repetitions.
    pub runs: Vec<RunResult>,
    /// The kind-specific part: the table that answers the command's question.
    pub tables: Tables,
}

/// Declares every kind of result from one row each: its [`Tables`]
/// variant, the type of its tables and the `command` string its documents
/// carry. From the rows come [`Tables`] (a variant per kind, and `Other`),
/// [`ResultKind`] (the kinds without their data: what suites name and
/// report/ keys its renderers by) and the maps between them, so a new kind
/// is one row here (and its renderers' one line in `report::kinds`).
macro_rules! result_kinds {
    ($($(#[doc = $doc:literal])+ $kind:ident($tables:ty) = $command:literal,)+) => {
        /// The kind-specific part of a result, chosen by its `command`.
        #[derive(Debug, Clone, Serialize)]
        #[serde(untagged)]
        pub enum Tables {
            $($(#[doc = $doc])+ $kind($tables),)+
            /// No kind-specific part (or a command this version does not know).
            Other(serde_json::Value),
        }

        /// Every kind of result blobbench writes, named without its data.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ResultKind {
            $($(#[doc = $doc])+ $kind,)+
        }

        impl ResultKind {
            /// Every kind, in the order declared.
            pub const ALL: &'static [ResultKind] = &[$(ResultKind::$kind,)+];

            /// The `command` a document of this kind carries ("suite lob").
            pub const fn command(self) -> &'static str {
                match self {
                    $(ResultKind::$kind => $command,)+
                }
            }
        }

        impl Tables {
            /// The kind these tables are of (None for `Other`).
            pub fn kind(&self) -> Option<ResultKind> {
                match self {
                    $(Tables::$kind(_) => Some(ResultKind::$kind),)+
                    Tables::Other(_) => None,
                }
            }

            /// Reads the kind-specific part of a document of `kind`.
            fn of_kind(
                kind: ResultKind,
                value: serde_json::Value,
            ) -> Result<Tables, serde_json::Error> {
                Ok(match kind {
                    $(ResultKind::$kind => Tables::$kind(serde_json::from_value(value)?),)+
                })
            }
        }
    };
}

result_kinds! {
    /// `quick`: file/db ratios and disk space.
    Quick(quick::QuickTables) = "quick",
    /// `run`: the integrity check, when asked.
    Run(run::RunTables) = "run",
    /// `init` with `--json`: the load of a dataset.
    Init(init::InitTables) = "init",
    /// `suite fasterthanfs`: each chart's ratio beside the page's claim.
    FasterThanFs(fasterthanfs::FasterThanFsTables) = "suite fasterthanfs",
    /// `suite internal-external`: the blob size x page size matrix.
    InternalExternal(internal_external::InternalExternalTables) = "suite internal-external",
    /// `suite lob`: every write and read sample per system and size.
    Lob(lob::LobTables) = "suite lob",
    /// `suite http`: requests/s and latency per system and concurrency.
    Http(http::HttpTables) = "suite http",
    /// `load`: one server under load, per concurrency level.
    Load(load::LoadTables) = "load",
    /// `sweep`: every case of the parameter grid.
    Sweep(sweep::SweepTables) = "sweep",
    /// `advise`: the calibration and the recommendation.
    Advise(advise::AdviseTables) = "advise",
    /// `compare`: what changed between two results.
    Compare(compare::CompareTables) = "compare",
    /// `run --threads/--mix`: a mixed run, per kind of operation.
    MixedRun(mixed_run::MixedRunTables) = "run concurrent",
    /// `suite concurrency`, the scaling suite: throughput and tails against threads.
    Scaling(scaling::ScalingTables) = "suite concurrency",
    /// `suite replicate`: writes alone and with Litestream, and the restore.
    Replicate(replicate::ReplicateTables) = "suite replicate",
    /// `suite aging`: reads, fragments and space against storage age.
    Aging(aging::AgingTables) = "suite aging",
    /// `reproduce`: the ledger of the five documents' claims, with the experiments' results.
    Reproduce(reproduce::ReproduceTables) = "reproduce",
}

impl ResultKind {
    /// The kind whose documents carry `command`; None for a command this
    /// version does not know.
    pub fn from_command(command: &str) -> Option<ResultKind> {
        ResultKind::ALL
            .iter()
            .copied()
            .find(|k| k.command() == command)
    }
}

impl Tables {
    /// The one line a command exits 1 with after writing its result when
    /// operations failed ("312 of 18,400 operations failed: 289 timeout,
    /// 23 server error 500"; the command adds where to look), or None when
    /// none did.
    pub fn failures_line(&self) -> Option<String> {
        match self {
            Tables::MixedRun(t) => t.failures_line(),
            Tables::Load(t) => t.failures_line(),
            Tables::Lob(t) => t.failures_line(),
            Tables::Quick(t) => t.failures_line(),
            Tables::Advise(t) => t.failures_line(),
            Tables::Replicate(t) => t.failures_line(),
            Tables::Scaling(t) => t.failures_line(),
            Tables::Reproduce(t) => t.failures_line(),
            _ => None,
        }
    }

    /// Reads the kind-specific part of a document of `command` (a command
    /// this version does not know keeps its tables as JSON).
    fn from_value(command: &str, value: serde_json::Value) -> Result<Tables, serde_json::Error> {
        match ResultKind::from_command(command) {
            Some(kind) => Tables::of_kind(kind, value),
            None => Ok(Tables::Other(value)),
        }
    }
}

/// The document as stored, before its tables are typed by its command.
#[derive(Deserialize)]
struct RawDocument {
    schema: String,
    #[serde(default)]
    schema_version: u32,
    command: String,
    #[serde(default)]
    argv: Vec<String>,
    #[serde(default)]
    started_at: String,
    #[serde(default)]
    finished_at: String,
    environment: Environment,
    #[serde(default)]
    runs: Vec<RunResult>,
    #[serde(default)]
    tables: serde_json::Value,
}

impl TryFrom<RawDocument> for ResultDocument {
    type Error = String;

    fn try_from(raw: RawDocument) -> std::result::Result<Self, String> {
        let tables = Tables::from_value(&raw.command, raw.tables)
            .map_err(|e| format!("the \"{}\" tables do not parse: {e}", raw.command))?;
        Ok(ResultDocument {
            schema: raw.schema,
            schema_version: raw.schema_version,
            command: raw.command,
            argv: raw.argv,
            started_at: raw.started_at,
            finished_at: raw.finished_at,
            environment: raw.environment,
            runs: raw.runs,
            tables,
        })
    }
}

/// The current time as RFC 3339 (seconds), as results record it.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

impl ResultDocument {
    /// A new document of `kind`, started now, with the process's argv.
    pub fn new(kind: ResultKind, environment: Environment, tables: Tables) -> Self {
        ResultDocument {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            command: kind.command().to_string(),
            // Lossy: a result is text, and an argument that is not UTF-8
            // (a file name) must not stop the command.
            argv: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            started_at: now_rfc3339(),
            finished_at: String::new(),
            environment,
            runs: Vec::new(),
            tables,
        }
    }

    /// The kind its `command` names; None for a command this version does
    /// not know.
    pub fn kind(&self) -> Option<ResultKind> {
        ResultKind::from_command(&self.command)
    }

    /// The document as pretty JSON with a final newline, stamped finished now.
    pub fn to_json(&mut self) -> Result<Vec<u8>, serde_json::Error> {
        self.finished_at = now_rfc3339();
        self.json_bytes()
    }

    /// The document as pretty JSON with a final newline, as it stands: a
    /// document loaded from a file writes back that file byte for byte
    /// (floats round-trip exactly: serde_json's `float_roundtrip`).
    pub fn json_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// Whether `text` is a result document (any version): only such a file may
/// be replaced by a new result.
pub fn is_result(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.get("schema").and_then(|s| s.as_str()) == Some(SCHEMA))
}

/// Reads a result file, refusing anything that is not a blobbench result of
/// a version this blobbench understands.
pub fn load(path: &Path) -> Result<ResultDocument> {
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{}: is a folder; give result files written by --json",
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    from_json(&bytes, &path.display().to_string())
}

/// Reads a result document from its JSON (`source` names where it came
/// from in errors), refusing anything that is not a blobbench result of a
/// version this blobbench understands.
pub fn from_json(bytes: &[u8], source: &str) -> Result<ResultDocument> {
    // A binary file is as much "not JSON" as text that does not parse.
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|_| {
        Error::usage(format!(
            "{source}: not JSON; give result files written by --json"
        ))
    })?;
    if value.get("schema").and_then(serde_json::Value::as_str) != Some(SCHEMA) {
        return Err(Error::usage(format!(
            "{source}: not a blobbench result (no \"schema\": \"blobbench-result\"); give files written by --json"
        )));
    }
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if version > u64::from(SCHEMA_VERSION) {
        return Err(Error::usage(format!(
            "{source}: result schema version {version} is newer than this blobbench understands ({SCHEMA_VERSION}); update blobbench"
        )));
    }
    serde_json::from_value(value).map_err(|e| {
        Error::usage(format!(
            "{source}: a blobbench result this version cannot read ({e}); give a result written by blobbench {}",
            env!("CARGO_PKG_VERSION")
        ))
    })
}
