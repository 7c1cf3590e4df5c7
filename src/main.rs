use std::process::ExitCode;

use clap::Parser;

use blobbench::cli::{Cli, Command, SuiteCommand, normalize_kvtest_args};

fn main() -> ExitCode {
    let args = normalize_kvtest_args(std::env::args().collect());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::*;
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // clap's message is several lines; keep the first paragraph on one line.
            let rendered = e.render().to_string();
            let first: Vec<&str> = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let msg = first.join(" ");
            let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
            eprintln!("blobbench: error: {msg} (see blobbench --help)");
            return ExitCode::from(2);
        }
    };
    let outcome = match &cli.command {
        Command::Init(a) => blobbench::command::init::run(a),
        Command::Export(a) => blobbench::command::export::run(a),
        Command::Run(a) => blobbench::command::run::run(a),
        Command::Quick(a) => blobbench::suite::quick::run(a),
        Command::Suite(SuiteCommand::FasterThanFs(a)) => blobbench::suite::fasterthanfs::run(a),
        Command::Suite(SuiteCommand::InternalExternal(a)) => {
            blobbench::suite::internal_external::run(a)
        }
        Command::Suite(SuiteCommand::Lob(a)) => blobbench::suite::lob::run(a),
        Command::Suite(SuiteCommand::Http(a)) => blobbench::suite::http::run(a),
        Command::Sweep(a) => blobbench::suite::sweep::run(a),
        Command::Serve(a) => blobbench::command::serve::run(a),
        Command::Load(a) => blobbench::command::load::run(a),
        Command::Report(a) => blobbench::command::report::run(a),
        Command::Advise(a) => blobbench::suite::advise::run(a),
        Command::Compare(a) => blobbench::command::compare::run(a),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("blobbench: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
