//! `blobbench suite lob`: the 2008 comparative benchmark of large objects in
//! relational databases (Jacobs University TR 14), on this machine.
//!
//! For each blob size (1K .. 10M) and each system that can be reached:
//! `--per-size` different random blobs are inserted one by one (each its own
//! statement and transaction, timed at the database call only; the blobs
//! are generated before), then the connection is closed, reopened, and each
//! blob is read back whole by id, timed the same way. Every sample is kept:
//! the tables show median and max, the spikes (samples over 10x their
//! median) are listed, and the paper's Figure 22 is redone: the time to read
//! 1 GB extrapolated from each size's mean read time, and each system's best
//! blob size.

use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use crate::cli::LobArgs;
use crate::dataset::{DatasetSpec, Manifest};
use crate::error::{Error, Result};
use crate::measure::stats::summarize;
use crate::report::table::Table;
use crate::result::ResultDocument;
use crate::store::{self, Access, SessionOptions};
use crate::target::Target;
use crate::units::{human_duration_ns, parse_number};

use super::common::{WorkDir, remove_entry};

pub const PAPER_SIZES: &str = "1K,2K,3999,5K,10K,50K,100K,500K,1M,5M,10M";

/// One system under test: a name and its target, or why it was skipped.
struct System {
    name: String,
    target: Option<Target>,
    skipped: Option<String>,
    /// What the store reported about itself (versions, settings).
    info: Option<crate::store::StoreInfo>,
    /// Sizes this system could not take, and why.
    notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    pub system: String,
    pub size: u64,
    pub write_ns: Vec<u64>,
    pub read_ns: Vec<u64>,
}

pub fn run(args: &LobArgs) -> Result<()> {
    let sizes: Vec<u64> = args
        .sizes
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let n = parse_number(s)?;
            if n == 0 || n > 1 << 30 {
                return Err(Error::usage(format!(
                    "--sizes {s}: a blob size from 1 byte to 1G"
                )));
            }
            Ok(n)
        })
        .collect::<Result<_>>()?;
    if sizes.is_empty() {
        return Err(Error::usage(format!(
            "--sizes is empty: give a comma-separated list such as {PAPER_SIZES}"
        )));
    }
    if args.per_size == 0 {
        return Err(Error::usage("--per-size must be at least 1"));
    }
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    let mut systems = Vec::new();
    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-lob-")?;
    let db = work.join("lob.db");
    let dir = work.join("lob.dir");
    systems.push(System {
        name: "sqlite".into(),
        target: Some(Target::Sqlite {
            path: db.clone(),
            settings: Default::default(),
        }),
        skipped: None,
        info: None,
        notes: Vec::new(),
    });
    systems.push(System {
        name: "dir".into(),
        target: Some(Target::Dir { path: dir.clone() }),
        skipped: None,
        info: None,
        notes: Vec::new(),
    });
    for (mode, name) in [("bytea", "postgres bytea"), ("lo", "postgres lo")] {
        systems.push(server_system(
            name,
            args.pg.as_deref(),
            "--pg",
            &format!("mode={mode}&table=lob_{mode}"),
        )?);
    }
    for engine in ["innodb", "myisam", "aria", "archive"] {
        systems.push(server_system(
            &format!("mariadb {engine}"),
            args.mysql.as_deref(),
            "--mysql",
            &format!("engine={engine}&table=lob_{engine}"),
        )?);
    }
    let outcome = measure(args, &sizes, &mut systems, &work);
    remove_entry(&db);
    remove_entry(&dir);
    work.report_kept(&crate::command::progress::Bars::new());
    let samples = outcome?;
    report(args, &sizes, &systems, &samples, &work)
}

fn server_system(name: &str, url: Option<&str>, option: &str, ours: &str) -> Result<System> {
    let Some(url) = url else {
        return Ok(System {
            name: name.into(),
            target: None,
            skipped: Some(format!("no {option} URL given")),
            info: None,
            notes: Vec::new(),
        });
    };
    let sep = if url.contains('?') { '&' } else { '?' };
    // A malformed URL is the user's to fix: fail before anything runs.
    let target = Target::parse(&format!("{url}{sep}{ours}"))?;
    Ok(System {
        name: name.into(),
        target: Some(target),
        skipped: None,
        info: None,
        notes: Vec::new(),
    })
}

fn measure(
    args: &LobArgs,
    sizes: &[u64],
    systems: &mut [System],
    work: &WorkDir,
) -> Result<Vec<Samples>> {
    eprintln!(
        "blobbench suite lob: {} sizes x {} blobs per size, in {}",
        sizes.len(),
        args.per_size,
        work.path.display()
    );
    let runnable = systems.iter().filter(|s| s.target.is_some()).count() as u64;
    let pb = crate::command::progress::bar(runnable * sizes.len() as u64, "measuring");
    let mut all = Vec::new();
    for system in systems.iter_mut() {
        let Some(target) = system.target.clone() else {
            continue;
        };
        for (i, &size) in sizes.iter().enumerate() {
            pb.set_message(format!("{} {size} bytes", system.name));
            match measure_one(&target, size, args.per_size, i as u64 + 1) {
                Ok((write_ns, read_ns, info)) => {
                    system.info.get_or_insert(info);
                    all.push(Samples {
                        system: system.name.clone(),
                        size,
                        write_ns,
                        read_ns,
                    })
                }
                // An unreachable server or a missing engine skips the system, with the reason.
                Err(e @ (Error::Connect { .. } | Error::Usage(_))) if i == 0 => {
                    system.skipped = Some(e.to_string());
                    pb.inc(sizes.len() as u64);
                    break;
                }
                // A size the system refuses (max_allowed_packet): noted, the rest goes on.
                Err(e @ Error::Usage(_)) => system.notes.push(format!("{size} bytes: {e}")),
                Err(e) => return Err(e),
            }
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    Ok(all)
}

/// Inserts `count` blobs of `size` bytes one by one, reconnects, reads them
/// back by id; returns the per-call times.
fn measure_one(
    target: &Target,
    size: u64,
    count: u64,
    seed: u64,
) -> Result<(Vec<u64>, Vec<u64>, crate::store::StoreInfo)> {
    let spec = DatasetSpec::fixed(count, size, seed);
    // Different random content for every blob, generated before any timing.
    let blobs: Vec<Vec<u8>> = (1..=count)
        .map(|k| {
            let mut b = Vec::new();
            spec.fill(k, 0, &mut b);
            b
        })
        .collect();
    let mut write_ns = Vec::with_capacity(count as usize);
    let info;
    {
        let mut store = store::create(target, &Manifest::new(spec.clone()))?;
        info = store.info();
        // No begin(): each INSERT is its own statement and transaction.
        let mut session = store.session(SessionOptions {
            per_op_transaction: true,
            ..Default::default()
        })?;
        for (k, blob) in (1..=count).zip(&blobs) {
            let t = Instant::now();
            session.insert(k, blob)?;
            write_ns.push(t.elapsed().as_nanos() as u64);
        }
    }
    // Reads in a separate phase, on a new connection.
    let mut read_ns = Vec::with_capacity(count as usize);
    let mut buf: Vec<u8> = Vec::with_capacity(size as usize);
    let mut scratch = Vec::new();
    let mut store = store::open(&target.for_inspection(), Access::ReadOnly)?;
    let mut session = store.session(SessionOptions {
        per_op_transaction: true,
        ..Default::default()
    })?;
    for k in 1..=count {
        let t = Instant::now();
        // Into the application's buffer, as SELECT ... INTO :buffer does.
        session.read(k, &mut |d| {
            buf.clear();
            buf.extend_from_slice(d);
        })?;
        read_ns.push(t.elapsed().as_nanos() as u64);
        spec.verify(k, &buf, Some(0), &mut scratch)?;
    }
    Ok((write_ns, read_ns, info))
}

fn median(v: &[u64]) -> f64 {
    summarize(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).median
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn report(
    args: &LobArgs,
    sizes: &[u64],
    systems: &[System],
    samples: &[Samples],
    work: &WorkDir,
) -> Result<()> {
    let measured: Vec<&System> = systems.iter().filter(|s| s.skipped.is_none()).collect();
    let find = |sys: &str, size: u64| samples.iter().find(|s| s.system == sys && s.size == size);
    println!(
        "blobbench suite lob: {} blobs per size, each INSERT and SELECT timed at the database call (ms)",
        args.per_size
    );
    for (title, pick) in [
        ("write (INSERT of a whole blob): median / max", 0usize),
        ("read (SELECT by id after reconnecting): median / max", 1),
    ] {
        let mut t = Table::new(
            std::iter::once("size".to_string()).chain(measured.iter().map(|s| s.name.clone())),
        );
        for &size in sizes {
            let mut row = vec![size.to_string()];
            for s in &measured {
                row.push(match find(&s.name, size) {
                    Some(x) => {
                        let v = if pick == 0 { &x.write_ns } else { &x.read_ns };
                        format!(
                            "{} / {}",
                            ms(median(v)),
                            ms(*v.iter().max().unwrap_or(&0) as f64)
                        )
                    }
                    None => "-".into(),
                });
            }
            t.row(row);
        }
        println!("\n{title}");
        print!("{}", t.render());
    }

    // Spikes: the paper kept them in its averages (675 ms among 0.26 ms writes).
    let mut spikes = Vec::new();
    for s in samples {
        for (phase, v) in [("write", &s.write_ns), ("read", &s.read_ns)] {
            let m = median(v);
            for (i, &x) in v.iter().enumerate() {
                if x as f64 > 10.0 * m {
                    spikes.push(json!({
                        "system": s.system, "size": s.size, "phase": phase,
                        "sample": i + 1, "ns": x, "median_ns": m,
                    }));
                }
            }
        }
    }
    println!("\nspikes (samples over 10x the median of their size; kept in every mean below):");
    if spikes.is_empty() {
        println!("  none");
    }
    for sp in &spikes {
        println!(
            "  {} {} {} bytes, sample {} of {}: {} vs median {}",
            sp["system"].as_str().unwrap_or_default(),
            sp["phase"].as_str().unwrap_or_default(),
            sp["size"],
            sp["sample"],
            args.per_size,
            human_duration_ns(sp["ns"].as_f64().unwrap_or(0.0)),
            human_duration_ns(sp["median_ns"].as_f64().unwrap_or(0.0)),
        );
    }

    // Figure 22: time to read 1 GB in blobs of each size, from the mean.
    let mut t = Table::new(
        std::iter::once("size".to_string()).chain(measured.iter().map(|s| s.name.clone())),
    );
    let mut gb = Vec::new();
    for &size in sizes {
        let mut row = vec![size.to_string()];
        for s in &measured {
            row.push(match find(&s.name, size) {
                Some(x) => {
                    let secs = mean(&x.read_ns) * (1e9 / size as f64) / 1e9;
                    gb.push((s.name.clone(), size, secs));
                    format!("{secs:.2}")
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    println!(
        "\ntime to read 1 GB in blobs of each size, seconds (the paper's Figure 22: mean read time x 1 GB / size)"
    );
    print!("{}", t.render());
    let mut best = Vec::new();
    for s in &measured {
        if let Some((_, size, secs)) = gb
            .iter()
            .filter(|(n, _, _)| *n == s.name)
            .min_by(|a, b| a.2.total_cmp(&b.2))
        {
            println!(
                "  best blob size for {}: {size} bytes ({secs:.2} s per GB)",
                s.name
            );
            best.push(json!({"system": s.name, "size": size, "seconds_per_gb": secs}));
        }
    }
    for s in systems {
        if let Some(why) = &s.skipped {
            println!("skipped {}: {why}", s.name);
        }
        for n in &s.notes {
            println!("{} could not store {n}", s.name);
        }
    }

    let mut doc = ResultDocument::new(
        "suite lob",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    let stores: Vec<_> = measured
        .iter()
        .map(|s| json!({"system": s.name, "store": s.info, "notes": s.notes}))
        .collect();
    doc.tables = crate::result::Tables::Lob(crate::result::lob::LobTables(json!({
        "lob": samples,
        "spikes": spikes,
        "read_1gb_seconds": gb.iter().map(|(n, s, secs)| json!({"system": n, "size": s, "seconds": secs})).collect::<Vec<_>>(),
        "best_size": best,
        "skipped": systems.iter().filter_map(|s| s.skipped.as_ref().map(|r| json!({"system": s.name, "reason": r}))).collect::<Vec<_>>(),
        "stores": stores,
        "per_size": args.per_size,
    })));
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}
