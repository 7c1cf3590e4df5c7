//! The `blobbench` binary: parses the command line, runs the command, and
//! maps its outcome to an exit status (0 ok, 1 failure, 2 usage, 70 bug).

use std::process::ExitCode;

use clap::FromArgMatches as _;

use blobbench::cli::{Cli, Command, normalize_kvtest_args};
use blobbench::command::streams;

/// Exit status for an internal error (a panic): EX_SOFTWARE from sysexits.h.
const EXIT_INTERNAL: i32 = 70;

/// A safety net, not error handling: a panic is a bug, so it is reported as
/// one line (no backtrace unless RUST_BACKTRACE asks for one) and the process
/// exits 70 at once, also when the panic happened on a worker thread that
/// would otherwise die silently.
fn install_panic_hook() {
    let want_backtrace = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("unknown panic");
        if is_closed_stdout(message) {
            die_of_sigpipe();
        }
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "an unknown place".into());
        // Through the original standard error: --quiet points descriptor 2
        // at /dev/null, and a bug must still be seen.
        streams::panic_line(&format!(
            "blobbench: internal error: {message} at {location} (this is a bug; please report it)"
        ));
        if want_backtrace {
            streams::panic_line(&std::backtrace::Backtrace::force_capture().to_string());
        }
        std::process::exit(EXIT_INTERNAL);
    }));
}

/// Whether a panic is `println!` finding standard output closed (`blobbench
/// run ... | head`): the reader went away, which is not a bug.
fn is_closed_stdout(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("os error 32")
}

/// Ends the process as a C program whose reader went away does: killed by
/// SIGPIPE, silently (shells say nothing of it). Rust ignores SIGPIPE so
/// that a closed socket is an error, not a death (serve and load rely on
/// that), so the default action is restored only here, at the very end.
fn die_of_sigpipe() -> ! {
    // SAFETY: signal and raise are async-signal-safe and take no pointers.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE);
}

fn main() -> ExitCode {
    blobbench::process::mark_start();
    blobbench::limits::write_past_file_size_fails();
    install_panic_hook();
    blobbench::command::enable_testing_aids();
    let args = normalize_kvtest_args(std::env::args_os().collect());
    let parsed = blobbench::command::about::command()
        .try_get_matches_from(args)
        .and_then(|matches| Cli::from_arg_matches(&matches).map(|cli| (cli, matches)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
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
            let mut msg = first.join(" ");
            // clap's tips ("a similar argument exists: '--count'") are
            // further down: they are the fix, so they stay on the line.
            for tip in rendered
                .lines()
                .filter_map(|l| l.trim().strip_prefix("tip: "))
            {
                msg = format!("{msg}; {tip}");
            }
            if e.kind() == MissingRequiredArgument
                && let Some(usage) = rendered.lines().find_map(|l| l.strip_prefix("Usage: "))
            {
                // clap names what is missing, not the option that needs
                // it: the usage line, built from what was given, names both.
                msg = format!("{msg} (usage: {})", usage.trim());
            }
            let msg = blobbench::cli::values::redact_passwords(&msg);
            let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
            eprintln!("blobbench: error: {msg} (see blobbench --help)");
            return ExitCode::from(2);
        }
    };
    if cli.quiet
        && let Err(e) = streams::go_quiet()
    {
        eprintln!("blobbench: error: {e}");
        return ExitCode::from(e.exit_code() as u8);
    }
    let started = std::time::Instant::now();
    let outcome = blobbench::command::dispatch(&cli.command);
    match outcome {
        Ok(()) => {
            if cli.quiet && !matches!(cli.command, Command::Completions(_) | Command::Man) {
                streams::summary_line(&streams::summary(
                    &subcommand_path(&matches),
                    started.elapsed(),
                ));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            // After the command has returned: its folders are cleaned up.
            if e.is_closed_stdout() {
                die_of_sigpipe();
            }
            streams::error_line(&format!("blobbench: error: {e}"));
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// The subcommand as typed, for the summary line: `quick`, `suite lob`.
fn subcommand_path(matches: &clap::ArgMatches) -> String {
    let mut names = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        names.push(name);
        at = sub;
    }
    names.join(" ")
}
