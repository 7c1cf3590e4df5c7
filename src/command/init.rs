//! `blobbench init`: create a dataset, as kvtest init does.

use std::time::Instant;

use serde_json::json;

use crate::cli::InitArgs;
use crate::dataset::{DatasetSpec, Manifest, spec_from_options};
use crate::error::{Error, Result};
use crate::measure::environment::Environment;
use crate::report::result::{self, ResultDocument};
use crate::store::{self, SessionOptions, Store};
use crate::target::{JOURNAL_MODES, Target, one_of, parse_page_size};
use crate::units::{human_bytes, human_duration_ns};

/// Loads every blob of `spec` into a new target; returns the store.
pub fn create_dataset(
    target: &Target,
    spec: &DatasetSpec,
    show_progress: bool,
) -> Result<(Box<dyn Store>, u64)> {
    let manifest = Manifest::new(spec.clone());
    let mut store = store::create(target, &manifest)?;
    let pb = show_progress
        .then(|| super::progress::bar(spec.count, &format!("creating {}", target.kind_name())));
    let started = Instant::now();
    {
        let mut session = store.session(SessionOptions::default())?;
        session.begin()?;
        let mut buf = Vec::new();
        for key in spec.first_key..=spec.last_key() {
            spec.fill(key, 0, &mut buf);
            session.insert(key, &buf)?;
            if let Some(p) = &pb
                && key % 256 == 0
            {
                p.inc(256);
            }
        }
        session.commit()?;
        session.checkpoint()?;
    }
    if let Some(p) = pb {
        p.finish_and_clear();
    }
    Ok((store, started.elapsed().as_nanos() as u64))
}

pub fn run(args: &InitArgs) -> Result<()> {
    let mut target = Target::parse(&args.target)?;
    let spec = spec_from_options(
        args.count,
        args.size,
        args.variance,
        &args.dist,
        args.sigma,
        args.seed,
    )?;
    let page_size = parse_page_size(&args.pagesize.to_string())?;
    match target.sqlite_settings_mut() {
        Some(s) => {
            s.page_size = Some(page_size);
            if let Some(j) = &args.jmode {
                s.journal_mode = Some(one_of("--jmode", j, JOURNAL_MODES)?);
            }
        }
        None if args.jmode.is_some() => {
            return Err(Error::usage(format!(
                "--jmode applies to sqlite targets, not {}",
                target.kind_name()
            )));
        }
        None => {}
    }
    if let Some(j) = &args.json {
        result::check_can_write(j)?;
    }
    let (store, load_ns) = create_dataset(&target, &spec, true)?;
    let bytes = spec.total_bytes();
    let space = store.space_used()?;
    println!(
        "created {target}: {} blobs, {} of content in {} ({:.1} MB/s); disk space {}",
        spec.count,
        human_bytes(bytes),
        human_duration_ns(load_ns as f64),
        bytes as f64 / 1e6 / (load_ns as f64 / 1e9),
        human_bytes(space)
    );
    if let Some(path) = &args.json {
        let mut doc = ResultDocument::new(
            "init",
            Environment::capture((!target.is_server()).then(|| target.path())),
        );
        doc.tables = json!({
            "init": {
                "target": target.to_string(),
                "spec": spec,
                "store": store.info(),
                "content_bytes": bytes,
                "space_bytes": space,
                "load_ns": load_ns,
            }
        });
        result::write(&mut doc, path)?;
    }
    Ok(())
}
