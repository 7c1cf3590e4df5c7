//! `blobbench init`: create a dataset, as kvtest init does.

use crate::cli::InitArgs;
use crate::cli::values::{DistChoice, choice_name};
use crate::dataset::{SizeShape, spec_from_options};
use crate::error::{Error, Result};
use crate::result::init::{InitRecord, InitTables};
use crate::result::{ResultDocument, ResultKind};
use crate::target::Target;
use crate::units::{human_bytes, human_duration_ns};

/// --pagesize when not given (SQLite's own default).
const DEFAULT_PAGE_SIZE: u32 = 4096;
/// --sigma when not given.
const DEFAULT_SIGMA: f64 = 1.0;

/// --variance shapes the uniform distribution and --sigma the log-normal
/// one: either given with another --dist would be ignored, so it is refused.
fn refuse_other_distributions(args: &InitArgs) -> Result<()> {
    let dist = choice_name(args.dist);
    if args.variance > 0 && args.dist != DistChoice::Uniform {
        return Err(Error::usage(format!(
            "--variance {} with --dist {dist}: --variance varies uniform sizes (--dist uniform); leave one out",
            args.variance
        )));
    }
    if let Some(sigma) = args.sigma.filter(|_| args.dist != DistChoice::Lognormal) {
        return Err(Error::usage(format!(
            "--sigma {sigma} with --dist {dist}: --sigma shapes --dist lognormal; add --dist lognormal, or leave --sigma out"
        )));
    }
    Ok(())
}

/// The dataset's size shape from --dist (and --sigma for lognormal).
fn size_shape(args: &InitArgs) -> SizeShape {
    match args.dist {
        DistChoice::Uniform => SizeShape::Uniform,
        DistChoice::Fixed => SizeShape::Fixed,
        DistChoice::Lognormal => SizeShape::LogNormal {
            sigma: args.sigma.unwrap_or(DEFAULT_SIGMA),
        },
    }
}

/// Creates the dataset the arguments describe, says so, and writes the
/// result when --json is given.
pub fn run(args: &InitArgs) -> Result<()> {
    let mut target = Target::parse(&args.target)?;
    refuse_other_distributions(args)?;
    let spec = spec_from_options(
        args.count,
        args.size,
        args.variance,
        size_shape(args),
        args.seed,
    )?;
    let page_size = args.pagesize.unwrap_or(DEFAULT_PAGE_SIZE);
    match target.sqlite_settings_mut() {
        Some(s) => {
            s.page_size = Some(page_size);
            if let Some(j) = &args.jmode {
                s.journal_mode = Some(j.clone());
            }
        }
        None if args.jmode.is_some() || args.pagesize.is_some() => {
            let option = if args.jmode.is_some() {
                "--jmode"
            } else {
                "--pagesize"
            };
            return Err(Error::usage(format!(
                "{option} applies to sqlite targets, not {}",
                target.kind_name()
            )));
        }
        None => {}
    }
    if let Some(j) = &args.json {
        crate::command::output::check_result_target(j)?;
    }
    // Captured before the load, so its load average and CPU steal cover it.
    let mut environment = crate::store::capture_environment(target.data_path());
    let (store, load_ns) =
        crate::store::create_dataset(&target, &spec, &super::progress::Bars::new())?;
    crate::command::output::finish_environment(&mut environment);
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
        let tables = InitTables {
            init: InitRecord {
                target: target.to_string(),
                spec,
                store: store.info(),
                content_bytes: bytes,
                space_bytes: space,
                load_ns,
            },
        };
        let mut doc = ResultDocument::new(
            ResultKind::Init,
            environment,
            crate::result::Tables::Init(tables),
        );
        crate::command::output::write_result(&mut doc, path)?;
    }
    Ok(())
}
