//! Groups of options several commands share, each defined once and
//! flattened into its commands. A command whose wording differs (what its
//! folder holds, its result file's default name) says so with `mut_arg`
//! on its own struct, so every --help stays as specific as before.

use std::path::PathBuf;

use clap::Args;

/// `--dir` and `--keep`: where a command that makes its own data puts it,
/// and whether it stays afterwards.
#[derive(Args, Debug)]
pub struct WorkFolderArgs {
    /// Folder for the datasets [default: a new temporary folder, removed afterwards]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the datasets after the run
    #[arg(long)]
    pub keep: bool,
}

/// `--json` and `--report`: the result file every suite writes (its
/// default name set by each command) and the HTML report it may add.
#[derive(Args, Debug)]
pub struct ResultFileArgs {
    /// Where to write the JSON result
    #[arg(long, value_name = "FILE")]
    pub json: PathBuf,
    /// Also write an HTML report with charts to FILE
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// `--pg`, `--mysql` and `--s3`: the servers `suite lob` measures beside
/// sqlite and dir (`reproduce` passes them on to it).
#[derive(Args, Debug)]
pub struct LobServerArgs {
    /// PostgreSQL URL, e.g. postgres://USER@HOST:PORT/DB (tables lob_bytea, lob_lo)
    #[arg(long, value_name = "URL", value_parser = super::values::postgres_url)]
    pub pg: Option<String>,
    /// MariaDB/MySQL URL, e.g. mysql://USER:PASS@HOST:PORT/DB (tables lob_innodb, ...)
    #[arg(long, value_name = "URL", value_parser = super::values::mysql_url)]
    pub mysql: Option<String>,
    /// S3 bucket, e.g. s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:8333 (objects under PREFIX/lob;
    /// credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)
    #[arg(long, value_name = "URL", value_parser = super::values::s3_url)]
    pub s3: Option<String>,
}
