//! The edge: one module per subcommand. Each turns parsed arguments into
//! typed options once, calls the library, prints the human table and writes
//! the files asked for. Nothing below this layer prints or parses arguments.

pub mod about;
pub mod advise;
pub mod aging;
pub mod compare;
pub mod export;
pub mod fasterthanfs;
pub mod http;
pub mod init;
pub mod internal_external;
pub mod load;
pub mod lob;
pub mod merge;
pub mod mixed_run;
pub mod object_store;
pub mod output;
pub mod progress;
pub mod quick;
pub mod replicate;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod run_settings;
pub mod scaling;
pub mod serve;
pub mod stat;
pub mod streams;
pub mod sweep;

use crate::cli::{Command, SuiteCommand};
use crate::error::Result;

/// Reads the testing aids the environment asks for: a pause at a named
/// step (`pause`) and the list of what the command makes
/// (`store::owned`). `main` calls this once, before any work; library code
/// run inside another process (a test harness) never reads them.
pub fn enable_testing_aids() {
    crate::pause::enable_from_env();
    crate::store::owned::log_from_env();
}

/// Runs one parsed command line.
pub fn dispatch(command: &Command) -> Result<()> {
    match command {
        Command::Init(a) => init::run(a),
        Command::Export(a) => export::run(a),
        Command::Stat(a) => stat::run(a),
        Command::Run(a) => run::run(a),
        Command::Quick(a) => quick::run(a),
        Command::Suite(SuiteCommand::FasterThanFs(a)) => fasterthanfs::run(a),
        Command::Suite(SuiteCommand::InternalExternal(a)) => internal_external::run(a),
        Command::Suite(SuiteCommand::Lob(a)) => lob::run(a),
        Command::Suite(SuiteCommand::Http(a)) => http::run(a),
        Command::Suite(SuiteCommand::Scaling(a)) => scaling::run(a),
        Command::Suite(SuiteCommand::Replicate(a)) => replicate::run(a),
        Command::Suite(SuiteCommand::Aging(a)) => aging::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Load(a) => load::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Report(a) => report::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Advise(a) => advise::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Completions(a) => about::completions(a),
        Command::Man => about::man(),
    }
}
