//! `blobbench suite lob`: the 2008 large-object benchmark. Checks the sizes,
//! the server URLs and the destinations before anything runs, then prints
//! the suite's tables and writes its result (and report).

use crate::cli::LobArgs;
use crate::cli::values::{LobOrderChoice, Logging};
use crate::command::output::finish_environment;
use crate::command::progress::Bars;
use crate::error::{Error, Result};
use crate::report::terminal;
use crate::result::Tables;
use crate::result::lob::Order;
use crate::suite::lob::{self, LobOptions, Local, Restart};
use crate::target::Target;

/// Runs `suite lob`. A system that failed while it was measured is in
/// the tables and the result; the command then exits 1 with one line.
pub fn run(args: &LobArgs) -> Result<()> {
    let options = options(args)?;
    let mut doc = lob::run(&options, &Bars::new())?;
    finish_environment(&mut doc.environment);
    crate::command::output::print_transactions(&doc);
    if let Tables::Lob(t) = &doc.tables {
        print!("{}", terminal::lob::render(t));
    }
    crate::command::output::write_result_files(&mut doc, &args.outputs)?;
    match doc.tables.failures_line() {
        Some(line) => Err(Error::OperationsFailed(line)),
        None => Ok(()),
    }
}

/// The most blob content a size's blobs may hold in memory at once.
const MEMORY_LIMIT: u64 = 4 << 30;

/// The arguments as typed options, the destinations checked; every mistake
/// is a usage error here, before anything runs.
fn options(args: &LobArgs) -> Result<LobOptions> {
    let sizes = args.sizes.clone();
    if args.per_size == 0 {
        return Err(Error::usage("--per-size must be at least 1"));
    }
    // Each size's blobs are generated in memory before timing (so that
    // generating them is not timed): bounded so a typo is refused here.
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if largest.saturating_mul(args.per_size) > MEMORY_LIMIT {
        return Err(Error::usage(format!(
            "--per-size {} x --sizes up to {largest} bytes is {} held in memory at once; at most {}: lower --per-size or the largest size",
            args.per_size,
            crate::units::human_bytes(largest.saturating_mul(args.per_size)),
            crate::units::human_bytes(MEMORY_LIMIT)
        )));
    }
    // Destinations before the servers, as before: each is checked before any work.
    crate::command::output::check_result_files(&args.outputs, args.folder.dir.as_deref())?;
    let bound = *args.restart_timeout;
    let pg_restart = restart(args.servers.pg.as_deref(), "PostgreSQL", "PG", bound);
    let mysql_restart = restart(args.servers.mysql.as_deref(), "MariaDB", "MYSQL", bound);
    if args.cold && args.servers.s3.is_some() {
        return Err(Error::usage(
            "--cold with --s3: blobbench cannot restart an S3 server or empty its cache; leave out --cold (or --s3)",
        ));
    }
    if args.cold {
        for (url, restart, script) in [
            (&args.servers.pg, &pg_restart, "postgres"),
            (&args.servers.mysql, &mysql_restart, "mariadb"),
        ] {
            if url.is_some() && restart.is_none() {
                let name = if script == "postgres" {
                    "PostgreSQL"
                } else {
                    "MariaDB"
                };
                return Err(Error::usage(format!(
                    "--cold: cannot restart {name}: not started by scripts/start-{script}.sh \
                     (blobbench restarts only a server its own script started); \
                     leave out --cold, or run against `. scripts/start-{script}.sh`"
                )));
            }
        }
    }
    Ok(LobOptions {
        sizes,
        per_size: args.per_size,
        local: local(),
        servers: lob::servers(
            args.servers.pg.as_deref(),
            args.servers.mysql.as_deref(),
            args.servers.s3.as_deref(),
            pg_restart,
            mysql_restart,
        )?,
        dir: args.folder.dir.clone(),
        keep: args.folder.keep,
        durable: args.logging == Logging::On,
        cold: args.cold,
        orders: orders(args.order),
    })
}

/// The orders `--order` names, the first being the one the tables are drawn from.
fn orders(order: LobOrderChoice) -> Vec<Order> {
    match order {
        LobOrderChoice::Sequential => vec![Order::Sequential],
        LobOrderChoice::Random => vec![Order::Random],
        LobOrderChoice::Both => vec![Order::Sequential, Order::Random],
    }
}

/// How to restart the server at `url`, if blobbench's own start script
/// started it: the sourced script exports BLOBBENCH_{var}_URL (the server it
/// started) and BLOBBENCH_{var}_RESTART (the command that restarts it). Any
/// other server gets None: it is never restarted, and its server-wide
/// settings are never changed.
fn restart(
    url: Option<&str>,
    server: &str,
    var: &str,
    timeout: std::time::Duration,
) -> Option<Restart> {
    let base = |u: &str| {
        u.split('?')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/')
            .to_string()
    };
    let started = std::env::var(format!("BLOBBENCH_{var}_URL")).ok()?;
    let command = std::env::var(format!("BLOBBENCH_{var}_RESTART")).ok()?;
    (base(url?) == base(&started) && !command.trim().is_empty()).then(|| Restart {
        server: server.into(),
        command,
        timeout,
    })
}

/// The systems in the work folder: SQLite with its default settings, and
/// one file per blob in one folder.
pub(super) fn local() -> Vec<Local> {
    vec![
        Local {
            name: "sqlite".into(),
            entry: "lob.db".into(),
            target: |path| Target::Sqlite {
                path,
                settings: Default::default(),
            },
        },
        Local {
            name: "dir".into(),
            entry: "lob.dir".into(),
            target: |path| Target::Dir { path },
        },
    ]
}
