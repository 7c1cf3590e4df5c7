//! `blobbench suite http`: the blog experiment "Serving Binary Files from
//! SQLite" in one command. One dataset (2000 blobs of 200 KB..4 MB by
//! default) in a database and in a folder, each served by its own
//! `blobbench serve` process, both loaded at each concurrency level (the
//! order alternating between levels), side by side with the ratio; any
//! external server (e.g. nginx over the exported files) joins the table
//! with `--extra NAME=URLFILE`.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::cli::HttpSuiteArgs;
use crate::command::load::level_table;
use crate::dataset::spec_from_options;
use crate::error::{Error, Result};
use crate::http::load::{LevelResult, LoadPlan, Order, Url, parse_url, run_level};
use crate::measure::cache;
use crate::result::ResultDocument;
use crate::store::{self, Access, FileLayout};
use crate::target::Target;
use crate::units::human_bytes;

use super::common::{WorkDir, sqlite};

/// A `blobbench serve` child process, stopped when dropped.
struct ServeProcess {
    child: Child,
    addr: String,
}

impl ServeProcess {
    fn start(target: &str) -> Result<ServeProcess> {
        let exe = std::env::current_exe()
            .map_err(|e| Error::io("cannot find", std::path::Path::new("blobbench"), e))?;
        let mut child = Command::new(exe)
            .args(["serve", target, "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| Error::io("cannot start", std::path::Path::new("blobbench serve"), e))?;
        let mut line = String::new();
        let stderr = child.stderr.take().expect("piped");
        let mut reader = std::io::BufReader::new(stderr);
        let _ = reader.read_line(&mut line);
        let Some(addr) = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
        else {
            let _ = child.kill();
            return Err(Error::usage(format!(
                "blobbench serve {target} did not start: {}",
                line.trim()
            )));
        };
        let addr = addr.to_string();
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in reader.lines() {});
        Ok(ServeProcess { child, addr })
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

struct System {
    name: String,
    urls: Vec<Url>,
    /// Local files to warm before each load run.
    files: Vec<std::path::PathBuf>,
    results: Vec<LevelResult>,
}

pub fn run(args: &HttpSuiteArgs) -> Result<()> {
    let spec = spec_from_options(args.count, args.size, args.variance, "uniform", 1.0, 1)?;
    let levels: Vec<usize> = args
        .concurrency
        .split(',')
        .map(|c| match c.trim().parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(Error::usage(format!(
                "-c {}: concurrency levels are numbers from 1 to 10000, e.g. -c 1,4,16",
                args.concurrency
            ))),
        })
        .collect::<Result<_>>()?;
    let mut extras = Vec::new();
    for e in &args.extra {
        let Some((name, file)) = e.split_once('=') else {
            return Err(Error::usage(format!(
                "--extra {e}: expected NAME=URLFILE, e.g. --extra nginx=nginx-urls.txt"
            )));
        };
        let text = std::fs::read_to_string(file)
            .map_err(|err| Error::io("cannot read", std::path::Path::new(file), err))?;
        let urls = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(parse_url)
            .collect::<Result<Vec<_>>>()?;
        if urls.is_empty() {
            return Err(Error::usage(format!("--extra {e}: {file} holds no URL")));
        }
        extras.push(System {
            name: name.to_string(),
            urls,
            files: Vec::new(),
            results: Vec::new(),
        });
    }
    crate::command::output::check_outputs(&args.json, args.report.as_deref())?;
    let work = WorkDir::new(args.dir.as_deref(), args.keep, "blobbench-http-")?;
    let db = work.join("http.db");
    let dir = work.join("http.dir");
    let outcome = run_in(args, &spec, &levels, extras, &work, &db, &dir);
    work.remove(&["http.db".to_string(), "http.dir".to_string()]);
    work.report_kept(&crate::command::progress::Bars::new());
    outcome
}

fn run_in(
    args: &HttpSuiteArgs,
    spec: &crate::dataset::DatasetSpec,
    levels: &[usize],
    extras: Vec<System>,
    work: &WorkDir,
    db: &std::path::Path,
    dir: &std::path::Path,
) -> Result<()> {
    eprintln!(
        "blobbench suite http: {} blobs of {} +/- {} bytes ({}) in {}",
        spec.count,
        args.size,
        args.variance,
        human_bytes(spec.total_bytes()),
        work.path.display()
    );
    let (store, _) = crate::store::create_dataset(
        &sqlite(db, |_| {}),
        spec,
        &crate::command::progress::Bars::new(),
    )?;
    drop(store);
    crate::store::export(
        db,
        dir,
        FileLayout::Flat,
        &crate::command::progress::Bars::new(),
    )?;
    let files_of = |t: &Target| -> Result<Vec<std::path::PathBuf>> {
        store::open(t, Access::ReadOnly)?.files()
    };
    let db_target = Target::Sqlite {
        path: db.to_path_buf(),
        settings: Default::default(),
    };
    let dir_target = Target::Dir {
        path: dir.to_path_buf(),
    };
    let servers = [
        ServeProcess::start(&format!("sqlite:{}", db.display()))?,
        ServeProcess::start(&format!("dir:{}", dir.display()))?,
    ];
    let urls_for = |addr: &str| -> Result<Vec<Url>> {
        (spec.first_key..=spec.last_key())
            .map(|k| parse_url(&format!("http://{addr}/blobs/{k}")))
            .collect()
    };
    let mut systems = vec![
        System {
            name: "sqlite".into(),
            urls: urls_for(&servers[0].addr)?,
            files: files_of(&db_target)?,
            results: Vec::new(),
        },
        System {
            name: "dir".into(),
            urls: urls_for(&servers[1].addr)?,
            files: files_of(&dir_target)?,
            results: Vec::new(),
        },
    ];
    systems.extend(extras);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", std::path::Path::new("load"), e))?;
    let duration: Duration = *args.duration;
    let pb = crate::command::progress::bar((levels.len() * systems.len()) as u64, "loading");
    for (li, &c) in levels.iter().enumerate() {
        // Alternate which system goes first from one level to the next.
        let mut order: Vec<usize> = (0..systems.len()).collect();
        if li % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let s = &mut systems[i];
            pb.set_message(format!("-c {c}: {}", s.name));
            cache::warm(&s.files)?;
            let plan = LoadPlan {
                urls: s.urls.clone(),
                order: Order::Random,
                concurrency: c,
                duration: Some(duration),
                requests: None,
                rate: None,
                timeout: Duration::from_secs(30),
                verify: None,
            };
            s.results.push(runtime.block_on(run_level(plan, None)));
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    drop(servers);

    println!(
        "blobbench suite http: {} blobs, {} +/- {} bytes, random order, {} per level, keep-alive",
        spec.count,
        args.size,
        args.variance,
        humantime::format_duration(duration)
    );
    let mut header = vec!["-c".to_string()];
    for s in &systems {
        header.push(format!("{} req/s", s.name));
    }
    for s in systems.iter().skip(1) {
        header.push(format!("{}/sqlite", s.name));
    }
    for s in &systems {
        header.push(format!("{} p50", s.name));
        header.push(format!("{} p99", s.name));
    }
    let mut t = crate::report::table::Table::new(header);
    for (li, &c) in levels.iter().enumerate() {
        let mut row = vec![c.to_string()];
        let base = systems[0].results[li].requests_per_s;
        for s in &systems {
            row.push(format!("{:.0}", s.results[li].requests_per_s));
        }
        for s in systems.iter().skip(1) {
            row.push(format!("{:.2}", s.results[li].requests_per_s / base));
        }
        for s in &systems {
            let l = &s.results[li].latency;
            row.push(crate::units::human_duration_ns(l.p50_ns as f64));
            row.push(crate::units::human_duration_ns(l.p99_ns as f64));
        }
        t.row(row);
    }
    print!("{}", t.render());
    println!(
        "ratio = requests/s of the system / requests/s from sqlite: above 1.00 the system serves more"
    );
    for s in &systems {
        let rows: Vec<(String, &LevelResult)> = s
            .results
            .iter()
            .map(|r| (format!("{} -c {}", s.name, r.concurrency), r))
            .collect();
        let errors: u64 = s.results.iter().map(|r| r.errors.total()).sum();
        if errors > 0 {
            println!("{} had {errors} failed requests:", s.name);
            print!("{}", level_table(&rows).render());
        }
    }
    let mut doc = ResultDocument::new(
        "suite http",
        crate::store::capture_environment(Some(&work.path)),
        crate::result::Tables::Other(serde_json::Value::Null),
    );
    doc.tables = crate::result::Tables::Http(crate::result::http::HttpTables(json!({
        "http": systems.iter().map(|s| json!({"system": s.name, "levels": s.results})).collect::<Vec<_>>(),
        "dataset": spec,
        "duration_ns": duration.as_nanos() as u64,
    })));
    crate::command::output::write_result_with_report(&mut doc, &args.json, args.report.as_deref())?;
    println!("result written to {}", args.json.display());
    Ok(())
}
