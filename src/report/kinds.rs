//! The report side of each kind of result, one definition per kind: its
//! title, whether the figures every run has are drawn, and its HTML,
//! terminal and compare renderers.
//!
//! result/ names the kinds ([`ResultKind`], with each one's `command`
//! string) and may not know report/, so the renderers are keyed here by
//! the kind: a new kind adds its row below (a [`KindReport`] naming the
//! functions of its own `view/`, `terminal/` and `measures` files) and its
//! line in [`of`]. The table sits above the renderers it names and below
//! what reads it (`sections`, `compare`), so no file imports back up.

use super::measures::{self, Measure};
use super::terminal;
use super::view::{self, Section, http_systems};
use crate::result::{ResultDocument, ResultKind, Tables};

/// How report/ shows one kind of result.
#[derive(Clone, Copy)]
pub struct KindReport {
    /// The kind in words, the title of its section in a report
    /// ("suite lob: large objects in every store").
    pub title: &'static str,
    /// Whether its section also draws what every run has (latency by
    /// percentile per operation, the runs table): off where the kind's
    /// own figures already show its runs.
    pub run_figures: bool,
    /// Adds the kind's charts, tables and summary lines to its section.
    pub html: fn(&ResultDocument, &mut Section),
    /// The kind's tables as the terminal shows them.
    pub terminal: fn(&ResultDocument) -> String,
    /// Hands compare each figure of the kind's own tables (the runs'
    /// figures, which every kind may have, compare reads itself).
    pub measures: fn(&ResultDocument, &mut dyn FnMut(Measure)),
}

/// The report side of `kind`.
pub fn of(kind: ResultKind) -> KindReport {
    match kind {
        ResultKind::Quick => QUICK,
        ResultKind::Run => RUN,
        ResultKind::Init => INIT,
        ResultKind::FasterThanFs => FASTER_THAN_FS,
        ResultKind::InternalExternal => INTERNAL_EXTERNAL,
        ResultKind::Lob => LOB,
        ResultKind::Http => HTTP,
        ResultKind::Load => LOAD,
        ResultKind::Sweep => SWEEP,
        ResultKind::Advise => ADVISE,
        ResultKind::Compare => COMPARE,
        ResultKind::MixedRun => MIXED_RUN,
        ResultKind::Scaling => SCALING,
        ResultKind::Replicate => REPLICATE,
        ResultKind::Aging => AGING,
        ResultKind::Reproduce => REPRODUCE,
    }
}

/// `quick`: SQLite against files, with the runs' figures.
const QUICK: KindReport = KindReport {
    title: "quick: SQLite vs files on this machine",
    run_figures: true,
    html: |doc, s| {
        if let Tables::Quick(t) = &doc.tables {
            view::quick::quick(t, doc, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Quick(t) => terminal::quick::render(doc, t),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `run`: each run as the command prints it, with its figures in HTML.
const RUN: KindReport = KindReport {
    title: "run: measured operations on a target",
    run_figures: true,
    html: no_html,
    terminal: |doc| {
        doc.runs
            .iter()
            .map(|r| terminal::run::render_run(r, false))
            .collect()
    },
    measures: no_measures,
};

/// `init`: the load of a dataset, which the command prints as it makes
/// it; its result holds no figure to draw.
const INIT: KindReport = KindReport {
    title: "init",
    run_figures: true,
    html: no_html,
    terminal: |_| String::new(),
    measures: no_measures,
};

/// `suite fasterthanfs`: each chart's ratio beside the page's claim.
const FASTER_THAN_FS: KindReport = KindReport {
    title: "suite fasterthanfs: \"35% faster than the filesystem\"",
    run_figures: true,
    html: |doc, s| {
        if let Tables::FasterThanFs(t) = &doc.tables {
            view::fasterthanfs::fasterthanfs(t, doc, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::FasterThanFs(t) => terminal::fasterthanfs::render(doc, t),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `suite internal-external`: the blob size x page size matrix.
const INTERNAL_EXTERNAL: KindReport = KindReport {
    title: "suite internal-external: internal vs external blobs",
    run_figures: false,
    html: |doc, s| {
        if let Tables::InternalExternal(t) = &doc.tables {
            view::internal_external::internal_external(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::InternalExternal(t) => terminal::internal_external::render(doc, t, false),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `suite lob`: write and read times per system and size.
const LOB: KindReport = KindReport {
    title: "suite lob: large objects in every store",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Lob(t) = &doc.tables {
            view::lob::lob(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Lob(t) => terminal::lob::render(t),
        _ => String::new(),
    },
    measures: measures::lob_measures,
};

/// `suite http`: what ran, requests/s and latency per system and level.
const HTTP: KindReport = KindReport {
    title: "suite http: serving blobs over HTTP",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Http(t) = &doc.tables {
            view::http::what_ran(t, s);
            view::http::http(&http_systems(&doc.tables), Some(t), s);
            view::http::intervals(t, s);
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Http(t) => terminal::http::render(t),
        _ => String::new(),
    },
    measures: measures::http_measures,
};

/// `load`: one server's levels, drawn as `suite http` draws a system.
const LOAD: KindReport = KindReport {
    title: "load: an HTTP server under load",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Load(t) = &doc.tables {
            s.summary.extend(terminal::load::merge_lines(t));
            view::http::http(&http_systems(&doc.tables), None, s);
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Load(t) => terminal::load::levels(t).render(),
        _ => String::new(),
    },
    measures: measures::http_measures,
};

/// `sweep`: the cases ranked and each setting's effect.
const SWEEP: KindReport = KindReport {
    title: "sweep: SQLite settings ranked",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Sweep(t) = &doc.tables {
            view::sweep::sweep(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Sweep(t) => terminal::sweep::render(doc, &t.sweep, terminal::sweep::DEFAULT_TOP),
        _ => String::new(),
    },
    measures: measures::sweep_measures,
};

/// `advise`: the calibration and the recommendation.
const ADVISE: KindReport = KindReport {
    title: "advise: where to keep your blobs",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Advise(t) = &doc.tables {
            view::advise::advise(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Advise(t) => terminal::advise::outcome(&t.advise),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `compare`: every case's ratio and verdict.
const COMPARE: KindReport = KindReport {
    title: "compare: what changed beyond the noise",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Compare(t) = &doc.tables {
            view::compare::compare(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Compare(t) => terminal::compare::render(&t.compare, t.compare.threshold * 100.0),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `run --threads/--mix`, a mixed run: each kind of operation, with the runs' figures.
const MIXED_RUN: KindReport = KindReport {
    title: "run: threads mixing operations on one dataset",
    run_figures: true,
    html: |doc, s| {
        if let Tables::MixedRun(t) = &doc.tables {
            view::mixed_run::mixed_run(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::MixedRun(t) => terminal::mixed_run::render(t),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `suite concurrency`, the scaling suite: throughput and tails against threads.
const SCALING: KindReport = KindReport {
    title: "suite concurrency: many threads at once",
    run_figures: true,
    html: |doc, s| {
        if let Tables::Scaling(t) = &doc.tables {
            view::scaling::scaling(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Scaling(t) => terminal::scaling::render(t),
        _ => String::new(),
    },
    measures: no_measures,
};

/// `suite replicate`: writes alone and with Litestream, and the restore.
const REPLICATE: KindReport = KindReport {
    title: "suite replicate: SQLite replicated to S3 by Litestream",
    run_figures: true,
    html: |doc, s| {
        if let Tables::Replicate(t) = &doc.tables {
            view::replicate::replicate(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Replicate(t) => terminal::replicate::render(t),
        _ => String::new(),
    },
    measures: measures::replicate_measures,
};

/// `suite aging`: reads, fragments and space against storage age.
const AGING: KindReport = KindReport {
    title: "suite aging: blobs in SQLite and in files as they age",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Aging(t) = &doc.tables {
            view::aging::aging(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Aging(t) => terminal::aging::render(t),
        _ => String::new(),
    },
    measures: measures::aging_measures,
};

/// For a kind with no charts or tables of its own.
/// `reproduce`: the ledger; each experiment's result is a section of its
/// own (`sections`), so its runs are drawn there.
const REPRODUCE: KindReport = KindReport {
    title: "reproduce: the five documents' claims on this machine",
    run_figures: false,
    html: |doc, s| {
        if let Tables::Reproduce(t) = &doc.tables {
            view::reproduce::reproduce(t, s)
        }
    },
    terminal: |doc| match &doc.tables {
        Tables::Reproduce(t) => terminal::reproduce::render(t),
        _ => String::new(),
    },
    measures: no_measures,
};

fn no_html(_: &ResultDocument, _: &mut Section) {}

/// For a kind whose only figures are its runs'.
fn no_measures(_: &ResultDocument, _: &mut dyn FnMut(Measure)) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_title_of_its_own_that_starts_with_its_command() {
        let mut titles: Vec<&str> = Vec::new();
        for &kind in ResultKind::ALL {
            let title = of(kind).title;
            let command = kind.command().split(' ').next().unwrap_or_default();
            assert!(title.starts_with(command), "{kind:?}: {title}");
            assert!(!titles.contains(&title), "{kind:?}: {title} twice");
            titles.push(title);
        }
    }
}
