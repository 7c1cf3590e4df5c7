//! The terminal table of a `suite lob` result: what each system ran with
//! (--logging, --cold), write and read times per system and size (median /
//! mean / max: the paper plots the mean), the spikes, the time to read 1 GB
//! (the paper's Figure 22, from the mean), each system's best size, where
//! time starts to grow with size, and what was skipped.

use std::fmt::Write;

use crate::measure::stats::summarize;
use crate::report::table::Table;
use crate::result::lob::{
    GROWTH_FACTOR, LobTables, ORDER_THRESHOLD, Order, OrderCall, PAPER_STATED, PaperHere,
    PaperWhat, SYSTEMS,
};
use crate::units::human_duration_ns;

fn median(v: &[u64]) -> f64 {
    summarize(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).median
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// A table with one row per size and one column per measured system.
fn by_size(t: &LobTables, measured: &[String], cell: impl Fn(&str, u64) -> String) -> String {
    let mut table = Table::new(std::iter::once("size".to_string()).chain(measured.iter().cloned()));
    for size in t.sizes() {
        let mut row = vec![size.to_string()];
        row.extend(measured.iter().map(|s| cell(s, size)));
        table.row(row);
    }
    table.render()
}

/// The whole text `suite lob` prints, from its result's tables.
pub fn render(t: &LobTables) -> String {
    let mut out = String::new();
    let measured = t.measured();
    let _ = writeln!(
        out,
        "blobbench suite lob: {} blobs per size, each INSERT and SELECT timed at the database call (ms)",
        t.per_size
    );
    let _ = writeln!(out, "{}", order_line(t));
    setup(t, &mut out);
    let reconnect = if t.cold {
        "after reconnecting to a cold start"
    } else {
        "after reconnecting"
    };
    for (title, write) in [
        (
            "write (INSERT of a whole blob): median / mean / max".to_string(),
            true,
        ),
        (
            format!("read (SELECT by id {reconnect}): median / mean / max"),
            false,
        ),
    ] {
        let table = by_size(t, &measured, |system, size| match t.samples(system, size) {
            Some(x) => {
                let v = if write { &x.write_ns } else { &x.read_ns };
                let max = *v.iter().max().unwrap_or(&0) as f64;
                let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
                format!("{} / {} / {}", ms(median(v)), ms(mean), ms(max))
            }
            None => failed_or_dash(t, system, size),
        });
        let _ = write!(out, "\n{title}\n{table}");
    }
    spikes(t, &mut out);
    let table = by_size(t, &measured, |system, size| {
        match t
            .read_1gb_seconds
            .iter()
            .find(|g| g.system == system && g.size == size)
        {
            Some(g) => format!("{:.2}", g.seconds),
            None => failed_or_dash(t, system, size),
        }
    });
    let _ = write!(
        out,
        "\ntime to read 1 GB in blobs of each size, seconds (the paper's Figure 22, from the MEAN read \
         time, as the paper averaged its blobs: mean x 1 GB / size)\n{table}"
    );
    for b in &t.best_size {
        let _ = writeln!(
            out,
            "  best blob size for {}: {} bytes ({:.2} s per GB)",
            b.system, b.size, b.seconds_per_gb
        );
    }
    growth(t, &mut out);
    paper(t, &mut out);
    order_effect(t, &mut out);
    skipped_and_notes(t, &mut out);
    out
}

/// The widest a failure's cell gets; the whole reason is printed below
/// the tables.
const FAILED_CELL: usize = 60;

/// The cell of a system at a size it has no figure for: why (it failed
/// there or before), or "-".
fn failed_or_dash(t: &LobTables, system: &str, size: u64) -> String {
    match t.failed_cell(system, size) {
        Some(cell) if cell.chars().count() > FAILED_CELL => {
            let cut: String = cell.chars().take(FAILED_CELL - 3).collect();
            format!("{cut}...")
        }
        Some(cell) => cell,
        None => "-".into(),
    }
}

/// The order blobs were written and read in, in words.
fn order_line(t: &LobTables) -> String {
    let primary = t.primary_order();
    let how = match primary {
        Order::Sequential => "sequential (ids 1, 2, 3 .. written, then read back in that order)",
        Order::Random => {
            "random (written in a random permutation of the ids, read back in another)"
        }
    };
    if t.orders.len() > 1 {
        format!(
            "order: {how}; random order as well, compared below (the tables above are {})",
            primary.name()
        )
    } else {
        format!("order: {how}")
    }
}

/// The paper's check that order makes no difference, on this machine:
/// random / sequential per system, size and phase, and the verdicts.
fn order_effect(t: &LobTables, out: &mut String) {
    if t.order_effect.is_empty() {
        return;
    }
    let measured = t.measured();
    let _ = writeln!(
        out,
        "
order: random / sequential time per blob (median of each, 95% bootstrap interval); a difference \
         counts only when a rank test over all {} cases rejects after Holm's correction and the whole \
         interval lies beyond {:.0}%",
        t.order_effect.len(),
        ORDER_THRESHOLD * 100.0
    );
    for phase in ["write", "read"] {
        let table = by_size(t, &measured, |system, size| {
            match t
                .order_effect
                .iter()
                .find(|e| e.system == system && e.size == size && e.phase == phase)
            {
                Some(e) => format!("{}{}", e.format_ratio(), call_mark(e.call)),
                None => "-".into(),
            }
        });
        let _ = write!(out, "{phase}\n{table}");
    }
    out.push_str(
        "* = random order slower beyond the noise, ! = faster; ? = too few blobs to test\n",
    );
    for line in order_verdicts(t) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(
        "the paper: \"We repeated BLOB read and write in different orders; however no significant difference was observed.\"\n",
    );
}

fn call_mark(call: OrderCall) -> &'static str {
    match call {
        OrderCall::RandomSlower => " *",
        OrderCall::RandomFaster => " !",
        OrderCall::Insufficient => " ?",
        OrderCall::WithinNoise => "",
    }
}

/// One verdict per system and one for all: "order made no difference
/// (within noise)", or where it did.
pub fn order_verdicts(t: &LobTables) -> Vec<String> {
    let mut lines = Vec::new();
    let mut any = false;
    let untested = t
        .order_effect
        .iter()
        .all(|e| e.call == OrderCall::Insufficient);
    for system in t.measured() {
        if !t.order_effect.iter().any(|e| e.system == system) {
            continue;
        }
        let differs = t.order_differences(&system);
        any |= !differs.is_empty();
        let tested = t
            .order_effect
            .iter()
            .any(|e| e.system == system && e.call != OrderCall::Insufficient);
        let text = if !tested {
            "not tested (too few blobs a side)".to_string()
        } else if differs.is_empty() {
            "order made no difference (within noise)".to_string()
        } else {
            let cases: Vec<String> = differs
                .iter()
                .map(|e| {
                    format!(
                        "{} {} bytes random {} {}",
                        e.phase,
                        e.size,
                        e.format_ratio(),
                        if e.call == OrderCall::RandomSlower {
                            "slower"
                        } else {
                            "faster"
                        }
                    )
                })
                .collect();
            format!("order made a difference: {}", cases.join("; "))
        };
        lines.push(format!("  {system}: {text}"));
    }
    lines.push(if untested {
        "verdict: not tested: too few blobs per size for a rank test over every case; use --per-size 10 or more".into()
    } else if any {
        "verdict: order made a difference here (see above), unlike the paper".into()
    } else {
        "verdict: order made no difference (within noise), as the paper found".into()
    });
    lines
}

/// What every system ran with: --logging (as each system read it back) and --cold.
fn setup(t: &LobTables, out: &mut String) {
    let logging = match t.logging.as_str() {
        "off" => {
            "logging off: the paper's setup (\"logging uniformly was disabled\"); --logging on for durable writes"
        }
        "on" => {
            "logging on: every commit durable where the system can be; --logging off for the paper's setup"
        }
        // Older results did not record it: SQLite ran durable, the servers at their defaults.
        _ => return,
    };
    let _ = writeln!(out, "{logging}. Each system's writes ran with:");
    for s in t.stores.iter().filter(|s| !s.durability.is_empty()) {
        let _ = writeln!(out, "  {}: {}", s.system, s.durability);
    }
    if !t.cold {
        return;
    }
    let _ = writeln!(
        out,
        "cold reads (--cold): before each size's reads (every size in the result; the first here):"
    );
    for system in t.measured() {
        let colds: Vec<&crate::result::lob::Samples> = t
            .lob
            .iter()
            .filter(|x| x.system == system && x.cold.is_some())
            .collect();
        if let Some(first) = colds.first() {
            let _ = writeln!(
                out,
                "  {system} ({} sizes): {}",
                colds.len(),
                first.cold.as_deref().unwrap_or_default()
            );
        }
    }
}

/// The paper's "size where time starts to grow with size", per system.
fn growth(t: &LobTables, out: &mut String) {
    let Some(first) = t.growth.first() else {
        return;
    };
    let _ = writeln!(
        out,
        "\ntime per blob grows with size from (the first size from which on every larger size's median \
         is over {GROWTH_FACTOR}x the median at the smallest size, {} bytes):",
        first.baseline_size
    );
    for system in t.measured() {
        let phase = |p: &str| {
            t.growth
                .iter()
                .find(|g| g.system == system && g.phase == p)
                .map(|g| match g.size {
                    Some(size) => format!("{p} from {size} bytes"),
                    None => format!("{p} flat (within {}x)", g.factor),
                })
        };
        if let (Some(w), Some(r)) = (phase("write"), phase("read")) {
            let _ = writeln!(out, "  {system}: {w}, {r}");
        }
    }
}

/// The sizes the paper's text states (where time grows with size, each
/// system's best size, where files overtake a database) beside this run's.
fn paper(t: &LobTables, out: &mut String) {
    let _ = writeln!(
        out,
        "\nthe paper (document 002, TR 14, 2008) beside this run: the sizes its text states (its figures are plots)"
    );
    let bytes = |s: u64| format!("{s} bytes");
    for (what, title) in [
        (PaperWhat::Growth, "time per blob grows with size from"),
        (
            PaperWhat::BestSize,
            "best blob size (shortest time to read 1 GB, Figure 22)",
        ),
        (PaperWhat::DbVsFiles, "database vs file system"),
    ] {
        let _ = writeln!(out, "  {title}:");
        for p in PAPER_STATED.iter().filter(|p| p.what == what) {
            let here = match p.here {
                PaperHere::None(why) => format!("not measured ({why})"),
                _ => {
                    let found = t.beside_paper(p, &bytes);
                    if found.is_empty() {
                        "not measured in this run".into()
                    } else {
                        found.join("; ")
                    }
                }
            };
            let phase = p.phase.map(|ph| format!(" {ph}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "    {}{phase}: \"{}\" ({}); here: {here}",
                p.paper, p.figure, p.place
            );
        }
    }
}

/// The spikes: the paper kept them in its averages, so they are listed.
fn spikes(t: &LobTables, out: &mut String) {
    let _ = writeln!(
        out,
        "\nspikes (samples over 10x the median of their size; kept in every mean below):"
    );
    if t.spikes.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for sp in &t.spikes {
        let _ = writeln!(
            out,
            "  {} {} {} bytes{}, sample {} of {}: {} vs median {}",
            sp.system,
            sp.phase,
            sp.size,
            if sp.order == Order::Random && t.orders.len() > 1 {
                " (random order)"
            } else {
                ""
            },
            sp.sample,
            t.per_size,
            human_duration_ns(sp.ns as f64),
            human_duration_ns(sp.median_ns),
        );
    }
}

/// "FAILED dir at 2000 bytes (write): other: cannot create ...; not
/// measured at 3000, 4000": one system's failure, whole.
pub fn failed_line(f: &crate::result::lob::Failed) -> String {
    let order = if f.order == Order::Random {
        ", random order"
    } else {
        ""
    };
    let mut line = format!(
        "FAILED {} at {} bytes ({}{order}): {}",
        f.system,
        f.size,
        f.phase,
        f.reason()
    );
    if !f.not_measured.is_empty() {
        let sizes: Vec<String> = f.not_measured.iter().map(u64::to_string).collect();
        line.push_str(&format!("; not measured at {} bytes", sizes.join(", ")));
    }
    line
}

/// Skipped systems, refused sizes and failed systems, in the order the
/// systems ran.
fn skipped_and_notes(t: &LobTables, out: &mut String) {
    let rank = |name: &str| {
        SYSTEMS
            .iter()
            .position(|s| *s == name)
            .unwrap_or(SYSTEMS.len())
    };
    let mut lines: Vec<(usize, String)> = Vec::new();
    for k in &t.skipped {
        lines.push((
            rank(&k.system),
            format!("skipped {}: {}", k.system, k.reason),
        ));
    }
    for s in &t.stores {
        for n in &s.notes {
            lines.push((rank(&s.system), format!("{} could not store {n}", s.system)));
        }
    }
    for f in &t.failed {
        lines.push((rank(&f.system), failed_line(f)));
    }
    for s in &t.stores {
        for c in s.cluster.iter().flat_map(|c| &c.changes) {
            lines.push((
                rank(&s.system),
                format!(
                    "warning: cluster: {}: {} (seen by the end of the suite)",
                    s.system, c.change
                ),
            ));
        }
    }
    // Stable: within one system, its lines keep their order.
    lines.sort_by_key(|(r, _)| *r);
    for (_, line) in lines {
        let _ = writeln!(out, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::lob::OrderEffect;

    fn effect(system: &str, call: OrderCall) -> OrderEffect {
        OrderEffect {
            system: system.into(),
            size: 1000,
            phase: "read".into(),
            sequential_median_ns: 100.0,
            random_median_ns: 150.0,
            ratio: 1.5,
            low: 1.3,
            high: 1.7,
            n: 10,
            p_adjusted: Some(0.01),
            call,
        }
    }

    #[test]
    fn verdicts_say_where_order_mattered_and_what_was_not_tested() {
        let mut t = LobTables {
            order_effect: vec![
                effect("sqlite", OrderCall::WithinNoise),
                effect("dir", OrderCall::RandomSlower),
            ],
            ..Default::default()
        };
        t.lob = ["sqlite", "dir"]
            .iter()
            .map(|s| crate::result::lob::Samples {
                system: s.to_string(),
                size: 1000,
                write_ns: vec![1],
                read_ns: vec![1],
                cold: None,
                order: Order::Sequential,
            })
            .collect();
        let v = order_verdicts(&t);
        assert_eq!(v[0], "  sqlite: order made no difference (within noise)");
        assert_eq!(
            v[1],
            "  dir: order made a difference: read 1000 bytes random 1.50x [1.30-1.70] slower"
        );
        assert!(v[2].contains("made a difference here"), "{v:?}");
        for e in &mut t.order_effect {
            e.call = OrderCall::Insufficient;
        }
        let v = order_verdicts(&t);
        assert_eq!(v[0], "  sqlite: not tested (too few blobs a side)");
        assert!(v[2].starts_with("verdict: not tested"), "{v:?}");
    }

    #[test]
    fn the_papers_sizes_are_printed_beside_the_measured_ones() {
        let text = include_str!("../../../tests/fixtures/results/lob.json");
        let doc: crate::result::ResultDocument = serde_json::from_str(text).expect("fixture");
        let crate::result::Tables::Lob(t) = doc.tables else {
            panic!("not a suite lob result");
        };
        let out = render(&t);
        let at = out.find("the paper (document 002").expect(&out);
        let paper = &out[at..];
        // The paper's words beside the sizes measured here (the fixture ran
        // 1K, 10K and 100K: every system's best size is its largest).
        for line in [
            "    PostgreSQL write: \"about 50K\" (section 4.3); here: postgres lo from 100000 bytes; postgres bytea from 10000 bytes",
            "    PostgreSQL read: \"about 50-100K\" (section 4.3); here: postgres lo from 100000 bytes; postgres bytea from 10000 bytes",
            "    SystemA: \"above 100K\" (section 4.1); here: not measured (a commercial system the paper anonymised)",
            "    Sears, van Ingen, Gray (quoted): \"less than 256KB: a database; over about one MB: a file system\" (section 1); here: write: dir faster than sqlite at every size measured; read: dir faster than sqlite at every size measured",
        ] {
            assert!(paper.contains(&format!("{line}\n")), "{line}\n{paper}");
        }
        let mysql = paper
            .lines()
            .find(|l| {
                l.starts_with("    MySQL: \"about 100K to 1M\" (section 6, Figure 22); here: ")
            })
            .expect(paper);
        assert!(
            mysql
                .contains("mariadb innodb 100000 bytes (3.52 s per GB, the largest size measured)"),
            "{mysql}"
        );
        assert!(!mysql.contains("mariadb aria"), "{mysql}");
    }
}
