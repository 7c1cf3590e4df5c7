use std::process::ExitCode;

use clap::Parser;

use blobbench::cli::{Cli, normalize_kvtest_args};

fn main() -> ExitCode {
    let args = normalize_kvtest_args(std::env::args_os().collect());
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
    let outcome = blobbench::command::dispatch(&cli.command);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("blobbench: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
