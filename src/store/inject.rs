//! A known extra cost per timed store operation: the testing aid with which
//! the instrument checks itself (docs/METHODS.md, "How blobbench measures": "Calibration").
//!
//! An [`Injection`] is either a fixed extra (`+20us`) or the operation's own
//! time scaled (`x1.10`). [`wrap`] puts a [`Session`] around a store's
//! session that, after each per-blob operation a timed loop calls (read,
//! read_pieces, update, insert, delete), spins on the clock the executor's
//! timer reads (`quanta::Clock`) until the extra has passed. The spin runs
//! inside the operation's call, so it falls inside the operation's timed
//! interval, precise to the clock's resolution. A spin the scheduler cut
//! into (a loaded machine) delivers more than its extra; the surplus is
//! credited to the spins that follow, so over a run the injected total is
//! the named one (`x1.10` delivered 1.27x at a load of 2-5x the cores
//! before the credit). Everything else (begin,
//! commit, checkpoint, the untimed lookups of a server) is forwarded as it
//! is. Never the default: a run records the injection in its plan
//! (`plan.session.inject`).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::contract::{
    BlobFile, MappedBlob, Serving, Session as StoreSession, SessionCore, Snapshots,
};
use crate::error::{Error, Result};

/// The largest fixed extra: one second per operation.
const MAX_FIXED_NS: u64 = 1_000_000_000;
/// The largest factor: an operation a hundred times its own time.
const MAX_FACTOR: f64 = 100.0;

/// How the spin's length is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Injection {
    /// This many nanoseconds more per operation (`+20us`).
    Fixed {
        /// The extra, in ns (at most 1 s).
        ns: u64,
    },
    /// The operation's own time, timed on the same clock, times this
    /// factor: a spin of (factor - 1) x that time follows it (`x1.10`).
    Scaled {
        /// At least 1, at most 100.
        factor: f64,
    },
}

impl Injection {
    /// Parses `+20us` (a fixed extra: ns, us or ms, up to 1 s) or `x1.10`
    /// (a factor from 1 to 100); errors are one line naming the value.
    pub fn parse(text: &str) -> Result<Injection> {
        let bad = |why: &str| {
            Error::usage(format!(
                "inject \"{text}\": {why}; use +20us or x1.10 (a fixed extra per operation in ns, us or ms, or each operation's own time scaled)"
            ))
        };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix('+') {
            let split = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let (number, unit) = rest.split_at(split);
            let scale = match unit {
                "ns" => 1.0,
                "us" | "µs" => 1e3,
                "ms" => 1e6,
                "" => return Err(bad("the extra needs a unit")),
                other => return Err(bad(&format!("unknown unit \"{other}\""))),
            };
            let value: f64 = number
                .parse()
                .map_err(|_| bad(&format!("\"{number}\" is not a number")))?;
            let ns = value * scale;
            if !ns.is_finite() || ns > MAX_FIXED_NS as f64 {
                return Err(bad("a fixed extra is at most 1 s (1000ms)"));
            }
            if (ns - ns.round()).abs() > 1e-6 {
                return Err(bad("the extra is not a whole number of nanoseconds"));
            }
            return Ok(Injection::Fixed {
                ns: ns.round() as u64,
            });
        }
        if let Some(rest) = t.strip_prefix(['x', 'X']) {
            let factor: f64 = rest
                .parse()
                .map_err(|_| bad(&format!("\"{rest}\" is not a number")))?;
            if !factor.is_finite() || !(1.0..=MAX_FACTOR).contains(&factor) {
                return Err(bad("the factor must be a finite number from 1 to 100"));
            }
            return Ok(Injection::Scaled { factor });
        }
        Err(bad("start with + (a fixed extra) or x (a factor)"))
    }

    /// The extra (a spin, or a wait) after an operation whose own time was
    /// `own_ns`, ns.
    pub fn extra_ns(self, own_ns: u64) -> u64 {
        match self {
            Injection::Fixed { ns } => ns,
            Injection::Scaled { factor } => ((factor - 1.0) * own_ns as f64).ceil() as u64,
        }
    }
}

impl fmt::Display for Injection {
    /// `+20us`, `+1500ns`, `+2ms`, `x1.1`: the form [`Injection::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Injection::Fixed { ns } if ns > 0 && ns % 1_000_000 == 0 => {
                write!(f, "+{}ms", ns / 1_000_000)
            }
            Injection::Fixed { ns } if ns > 0 && ns % 1_000 == 0 => write!(f, "+{}us", ns / 1_000),
            Injection::Fixed { ns } => write!(f, "+{ns}ns"),
            Injection::Scaled { factor } => write!(f, "x{factor}"),
        }
    }
}

impl From<Injection> for String {
    fn from(i: Injection) -> String {
        i.to_string()
    }
}

impl TryFrom<String> for Injection {
    type Error = Error;
    fn try_from(text: String) -> Result<Injection> {
        Injection::parse(&text)
    }
}

/// Parses a suite's `--inject CASE=SPEC` into the case's name and the
/// injection; the suite checks the name against its cases.
pub fn parse_case(text: &str) -> Result<(String, Injection)> {
    match text.split_once('=') {
        Some((case, spec)) if !case.trim().is_empty() => {
            Ok((case.trim().to_string(), Injection::parse(spec)?))
        }
        _ => Err(Error::usage(format!(
            "--inject \"{text}\": write CASE=SPEC, e.g. --inject read:db=x1.25 or --inject update:dir=+20us"
        ))),
    }
}

/// `--inject CASE=SPEC` when given (the suites' option), parsed.
pub fn parse_optional_case(text: Option<&str>) -> Result<Option<(String, Injection)>> {
    text.map(parse_case).transpose()
}

/// What an injection delivered: the timed operations' own time and the
/// extra spun after them, summed over the sessions that share it, ns. A run
/// records it, so a result says whether its named cost was delivered.
#[derive(Debug, Default)]
pub struct Delivered {
    own_ns: AtomicU64,
    extra_ns: AtomicU64,
}

impl Delivered {
    /// (own time, extra spun) so far, ns.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.own_ns.load(Ordering::Relaxed),
            self.extra_ns.load(Ordering::Relaxed),
        )
    }
}

/// `session` with `injection` after each timed operation, adding what it
/// spun to `delivered`; `session` itself when there is none.
pub fn wrap<'a>(
    session: Box<dyn StoreSession + 'a>,
    injection: Option<Injection>,
    delivered: &Arc<Delivered>,
) -> Box<dyn StoreSession + 'a> {
    match injection {
        None => session,
        Some(injection) => Box::new(Session {
            inner: session,
            injection,
            clock: quanta::Clock::new(),
            owed_ns: 0,
            delivered: delivered.clone(),
        }),
    }
}

/// A store's session with a known extra cost after every timed per-blob
/// operation. Every method is forwarded to the inner session explicitly,
/// so the inner store's own versions run (never the trait's defaults).
pub struct Session<'a> {
    inner: Box<dyn StoreSession + 'a>,
    injection: Injection,
    /// The executor's timer reads a `quanta::Clock` too: same source, same
    /// calibration.
    clock: quanta::Clock,
    /// The extra still owed (negative: paid ahead). A spin ends on the
    /// clock, but on a loaded machine the scheduler can take the core
    /// during it and give it back milliseconds later: that spin delivered
    /// more than asked, and the surplus is credited against the spins
    /// after it, so the run's total extra stays what was named.
    owed_ns: i64,
    /// Where the operations' own time and the spins' are summed.
    delivered: Arc<Delivered>,
}

impl Session<'_> {
    /// Runs `op` on the inner session, then spins for the injection. With a
    /// factor, the operation's own time runs from before the call to after
    /// it, less `in_sink` (raw ticks spent in the caller's sink, which a
    /// timer may leave out, as a --verify check is).
    fn timed<T>(&mut self, op: impl FnOnce(&mut dyn StoreSession) -> T) -> T {
        let start = self.clock.raw();
        let out = op(self.inner.as_mut());
        let end = self.clock.raw();
        self.spin_after(start, end, 0);
        out
    }

    /// A read whose sink's time is left out of the operation's own time.
    fn timed_read(
        &mut self,
        sink: &mut dyn FnMut(&[u8]),
        op: impl FnOnce(&mut dyn StoreSession, &mut dyn FnMut(&[u8])) -> Result<()>,
    ) -> Result<()> {
        let clock = self.clock.clone();
        let scaled = matches!(self.injection, Injection::Scaled { .. });
        let mut in_sink = 0u64;
        let mut timed_sink = |d: &[u8]| {
            if scaled {
                let t = clock.raw();
                sink(d);
                in_sink = in_sink.saturating_add(clock.raw().saturating_sub(t));
            } else {
                sink(d);
            }
        };
        let start = clock.raw();
        let out = op(self.inner.as_mut(), &mut timed_sink);
        let end = clock.raw();
        self.spin_after(start, end, in_sink);
        out
    }

    /// Spins from `end` until the extra owed (this operation's, less what
    /// earlier spins delivered beyond theirs) has passed on the clock.
    fn spin_after(&mut self, start: u64, end: u64, in_sink: u64) {
        let own = self
            .clock
            .delta_as_nanos(start, end.saturating_sub(in_sink).max(start));
        self.delivered.own_ns.fetch_add(own, Ordering::Relaxed);
        let extra = self.injection.extra_ns(own);
        if extra == 0 {
            return;
        }
        self.owed_ns = self
            .owed_ns
            .saturating_add(i64::try_from(extra).unwrap_or(i64::MAX));
        if self.owed_ns <= 0 {
            return;
        }
        let owed = self.owed_ns as u64;
        let mut spun = 0;
        while spun < owed {
            std::hint::spin_loop();
            spun = self.clock.delta_as_nanos(end, self.clock.raw());
        }
        self.owed_ns -= i64::try_from(spun).unwrap_or(i64::MAX);
        self.delivered.extra_ns.fetch_add(spun, Ordering::Relaxed);
    }
}

impl SessionCore for Session<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.timed_read(sink, |s, sink| s.read(key, sink))
    }
    fn read_pieces(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.timed_read(sink, |s, sink| s.read_pieces(key, sink))
    }
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.timed(|s| s.update(key, data))
    }
    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.timed(|s| s.insert(key, data))
    }
    fn delete(&mut self, key: u64) -> Result<()> {
        self.timed(|s| s.delete(key))
    }
    fn begin(&mut self) -> Result<()> {
        self.inner.begin()
    }
    fn commit(&mut self) -> Result<()> {
        self.inner.commit()
    }
    fn begin_write(&mut self) -> Result<()> {
        self.inner.begin_write()
    }
    fn rollback(&mut self) -> Result<bool> {
        self.inner.rollback()
    }
    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        self.inner.size(key)
    }
    fn read_at(&mut self, key: u64, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.inner.read_at(key, offset, buf)
    }
    fn checkpoint(&mut self) -> Result<()> {
        self.inner.checkpoint()
    }
    fn wait_for_locks(&mut self, wait: std::time::Duration) -> Result<()> {
        self.inner.wait_for_locks(wait)
    }
}

impl Serving for Session<'_> {
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        self.inner.read_stream(key, offset, len, piece, sink)
    }
    fn etag(&mut self, key: u64, size: u64) -> Result<Option<String>> {
        self.inner.etag(key, size)
    }
    fn fetch_small(&mut self, key: u64, max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        self.inner.fetch_small(key, max)
    }
    fn blob_file(&mut self, key: u64) -> Result<Option<BlobFile>> {
        self.inner.blob_file(key)
    }
    fn mapped_blob(&mut self, key: u64, max: u64) -> Result<Option<MappedBlob>> {
        self.inner.mapped_blob(key, max)
    }
}

impl Snapshots for Session<'_> {
    fn begin_snapshot(&mut self) -> Result<bool> {
        self.inner.begin_snapshot()
    }
    fn end_snapshot(&mut self) -> Result<()> {
        self.inner.end_snapshot()
    }
    fn writer_waiting(&mut self, own_write: bool) -> Result<bool> {
        self.inner.writer_waiting(own_write)
    }
    fn data_version(&mut self) -> Result<Option<i64>> {
        self.inner.data_version()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn parses_fixed_extras_and_factors() {
        let fixed = |t: &str| Injection::parse(t).unwrap();
        assert_eq!(fixed("+20us"), Injection::Fixed { ns: 20_000 });
        assert_eq!(fixed("+20µs"), Injection::Fixed { ns: 20_000 });
        assert_eq!(fixed("+1500ns"), Injection::Fixed { ns: 1500 });
        assert_eq!(fixed("+2ms"), Injection::Fixed { ns: 2_000_000 });
        assert_eq!(fixed("+1.5us"), Injection::Fixed { ns: 1500 });
        assert_eq!(fixed("+1000ms"), Injection::Fixed { ns: 1_000_000_000 });
        assert_eq!(fixed("+0us"), Injection::Fixed { ns: 0 });
        assert_eq!(fixed("x1.10"), Injection::Scaled { factor: 1.10 });
        assert_eq!(fixed("X2"), Injection::Scaled { factor: 2.0 });
        assert_eq!(fixed("x1"), Injection::Scaled { factor: 1.0 });
        // Written as read back.
        for (text, shown) in [
            ("+20us", "+20us"),
            ("+1500ns", "+1500ns"),
            ("+2000us", "+2ms"),
            ("+0ms", "+0ns"),
            ("x1.10", "x1.1"),
            ("x1.25", "x1.25"),
        ] {
            let i = fixed(text);
            assert_eq!(i.to_string(), shown);
            assert_eq!(fixed(shown), i);
            let json = serde_json::to_string(&i).unwrap();
            assert_eq!(json, format!("\"{shown}\""));
            assert_eq!(serde_json::from_str::<Injection>(&json).unwrap(), i);
        }
    }

    #[test]
    fn refuses_bad_values_in_one_line_naming_them_and_the_fix() {
        for (bad, why) in [
            ("+20xs", "unknown unit \"xs\""),
            ("+20", "needs a unit"),
            ("+us", "is not a number"),
            ("+1.2.3us", "is not a number"),
            ("+2s", "unknown unit \"s\""),
            ("+1001ms", "at most 1 s"),
            ("+0.5ns", "whole number of nanoseconds"),
            ("x0.9", "from 1 to 100"),
            ("x101", "from 1 to 100"),
            ("xinf", "finite"),
            ("xNaN", "finite"),
            ("x", "is not a number"),
            ("20us", "start with +"),
            ("-20us", "start with +"),
            ("", "start with +"),
        ] {
            let e = Injection::parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            let m = e.to_string();
            assert!(
                m.contains(&format!("inject \"{bad}\"")) && m.contains(why),
                "{bad}: {m}"
            );
            assert!(m.contains("use +20us or x1.10"), "{m}");
            assert!(!m.contains('\n'), "{m}");
        }
        assert!(serde_json::from_str::<Injection>("\"x0.5\"").is_err());
    }

    #[test]
    fn a_suite_case_is_named_before_its_spec() {
        assert_eq!(
            parse_case("read:db=x1.25").unwrap(),
            ("read:db".to_string(), Injection::Scaled { factor: 1.25 })
        );
        assert_eq!(
            parse_case("update:dir=+20us").unwrap().1,
            Injection::Fixed { ns: 20_000 }
        );
        for bad in ["read:db", "=x1.1", "read:db=x0"] {
            let m = parse_case(bad).unwrap_err().to_string();
            assert!(!m.contains('\n'), "{m}");
        }
        assert!(
            parse_case("read:db")
                .unwrap_err()
                .to_string()
                .contains("CASE=SPEC")
        );
    }

    /// A session that records which of its methods ran and whose
    /// operations take a set time (slept, then measured on the clock from
    /// inside).
    struct Recording {
        calls: Rc<RefCell<Vec<&'static str>>>,
        work: Duration,
        /// The last operation's time as measured from inside it, in ns.
        own: Rc<RefCell<u64>>,
    }

    impl Recording {
        fn op(&mut self, name: &'static str) {
            self.calls.borrow_mut().push(name);
            let clock = quanta::Clock::new();
            let start = clock.raw();
            if !self.work.is_zero() {
                std::thread::sleep(self.work);
            }
            *self.own.borrow_mut() = clock.delta_as_nanos(start, clock.raw());
        }
    }

    impl SessionCore for Recording {
        fn read(&mut self, _key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
            self.op("read");
            sink(b"blob");
            Ok(())
        }
        fn read_pieces(&mut self, _key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
            self.op("read_pieces");
            sink(b"bl");
            sink(b"ob");
            Ok(())
        }
        fn update(&mut self, _key: u64, _data: &[u8]) -> Result<()> {
            self.op("update");
            Ok(())
        }
        fn insert(&mut self, _key: u64, _data: &[u8]) -> Result<()> {
            self.op("insert");
            Ok(())
        }
        fn delete(&mut self, _key: u64) -> Result<()> {
            self.op("delete");
            Ok(())
        }
        fn begin(&mut self) -> Result<()> {
            self.op("begin");
            Ok(())
        }
        fn commit(&mut self) -> Result<()> {
            self.op("commit");
            Ok(())
        }
        fn begin_write(&mut self) -> Result<()> {
            self.op("begin_write");
            Ok(())
        }
        fn rollback(&mut self) -> Result<bool> {
            self.op("rollback");
            Ok(true)
        }
        fn size(&mut self, _key: u64) -> Result<Option<u64>> {
            self.op("size");
            Ok(Some(4))
        }
        fn read_at(&mut self, _key: u64, _offset: u64, _buf: &mut [u8]) -> Result<usize> {
            self.op("read_at");
            Ok(0)
        }
        fn checkpoint(&mut self) -> Result<()> {
            self.op("checkpoint");
            Ok(())
        }
        fn wait_for_locks(&mut self, _wait: Duration) -> Result<()> {
            self.op("wait_for_locks");
            Ok(())
        }
    }

    impl Serving for Recording {
        fn read_stream(
            &mut self,
            _key: u64,
            _offset: u64,
            _len: u64,
            _piece: usize,
            _sink: &mut dyn FnMut(Vec<u8>) -> bool,
        ) -> Result<u64> {
            self.op("read_stream");
            Ok(0)
        }
        fn etag(&mut self, _key: u64, _size: u64) -> Result<Option<String>> {
            self.op("etag");
            Ok(Some("e".into()))
        }
        fn fetch_small(&mut self, _key: u64, _max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
            self.op("fetch_small");
            Ok(None)
        }
        fn blob_file(&mut self, _key: u64) -> Result<Option<BlobFile>> {
            self.op("blob_file");
            Ok(None)
        }
        fn mapped_blob(&mut self, _key: u64, _max: u64) -> Result<Option<MappedBlob>> {
            self.op("mapped_blob");
            Ok(None)
        }
    }

    impl Snapshots for Recording {
        fn begin_snapshot(&mut self) -> Result<bool> {
            self.op("begin_snapshot");
            Ok(true)
        }
        fn end_snapshot(&mut self) -> Result<()> {
            self.op("end_snapshot");
            Ok(())
        }
    }

    type Log = Rc<RefCell<Vec<&'static str>>>;

    fn recording(
        work: Duration,
        injection: Injection,
    ) -> (Box<dyn StoreSession>, Log, Rc<RefCell<u64>>) {
        let calls: Log = Rc::default();
        let own = Rc::new(RefCell::new(0));
        let inner = Recording {
            calls: calls.clone(),
            work,
            own: own.clone(),
        };
        (
            wrap(Box::new(inner), Some(injection), &Arc::default()),
            calls,
            own,
        )
    }

    /// Every method reaches the inner session's own version, with what
    /// it returned: none falls back to the trait's default (which would
    /// call `read` instead of the store's `size`, say).
    #[test]
    fn every_method_is_forwarded_to_the_inner_session() {
        let (mut s, calls, _) = recording(Duration::ZERO, Injection::Fixed { ns: 0 });
        let mut got = Vec::new();
        s.read(1, &mut |d| got.extend_from_slice(d)).unwrap();
        s.read_pieces(1, &mut |d| got.extend_from_slice(d)).unwrap();
        assert_eq!(got, b"blobblob");
        s.update(1, b"x").unwrap();
        s.insert(2, b"x").unwrap();
        s.delete(2).unwrap();
        s.begin().unwrap();
        s.commit().unwrap();
        s.begin_write().unwrap();
        assert!(s.rollback().unwrap());
        assert_eq!(s.size(1).unwrap(), Some(4));
        s.read_at(1, 0, &mut [0; 4]).unwrap();
        s.read_stream(1, 0, 4, 2, &mut |_| true).unwrap();
        assert_eq!(s.etag(1, 4).unwrap().as_deref(), Some("e"));
        assert!(s.fetch_small(1, 10).unwrap().is_none());
        s.checkpoint().unwrap();
        assert!(s.blob_file(1).unwrap().is_none());
        assert!(s.mapped_blob(1, 10).unwrap().is_none());
        s.wait_for_locks(Duration::from_secs(1)).unwrap();
        assert!(s.begin_snapshot().unwrap());
        s.end_snapshot().unwrap();
        assert_eq!(
            *calls.borrow(),
            [
                "read",
                "read_pieces",
                "update",
                "insert",
                "delete",
                "begin",
                "commit",
                "begin_write",
                "rollback",
                "size",
                "read_at",
                "read_stream",
                "etag",
                "fetch_small",
                "checkpoint",
                "blob_file",
                "mapped_blob",
                "wait_for_locks",
                "begin_snapshot",
                "end_snapshot",
            ]
        );
    }

    /// The span of `f` on the quanta clock, in ns.
    fn timed(f: impl FnOnce()) -> u64 {
        let clock = quanta::Clock::new();
        let start = clock.raw();
        f();
        clock.delta_as_nanos(start, clock.raw())
    }

    /// One operation on a session, for a table of them.
    type Op = dyn FnMut(&mut dyn StoreSession);

    /// A fixed extra of 200 us: every timed operation takes at least that
    /// much more than its own time (strictly), and not wildly more (a loose
    /// bound that holds on a loaded machine). Untimed calls get nothing.
    #[test]
    fn a_fixed_extra_is_added_to_every_timed_operation() {
        const EXTRA: u64 = 200_000;
        let (mut s, _, own) = recording(Duration::ZERO, Injection::Fixed { ns: EXTRA });
        let ops: [(&str, &mut Op); 5] = [
            ("read", &mut |s| s.read(1, &mut |_| {}).unwrap()),
            ("read_pieces", &mut |s| {
                s.read_pieces(1, &mut |_| {}).unwrap()
            }),
            ("update", &mut |s| s.update(1, b"x").unwrap()),
            ("insert", &mut |s| s.insert(1, b"x").unwrap()),
            ("delete", &mut |s| s.delete(1).unwrap()),
        ];
        // The calls together take every extra (a lower bound no stall can
        // break: a spin a stall stretched pays the next ones ahead, of any
        // kind); "not wildly more" is judged on each kind's fastest call,
        // since a loaded machine may stall any one of them.
        let (mut totals, mut inners, mut calls) = (0, 0, 0);
        for (name, op) in ops {
            let mut fastest = u64::MAX;
            for _ in 0..20 {
                let total = timed(|| op(s.as_mut()));
                totals += total;
                inners += *own.borrow();
                calls += 1;
                fastest = fastest.min(total);
            }
            assert!(fastest < 50_000_000, "{name}: fastest {fastest} ns");
        }
        assert!(
            totals >= inners + calls * EXTRA,
            "{totals} ns < {inners} + {calls} x {EXTRA}"
        );
        for _ in 0..20 {
            // Well under the extra, though a loaded machine may stall a call.
            let untimed = [
                timed(|| s.begin().unwrap()),
                timed(|| s.commit().unwrap()),
                timed(|| s.checkpoint().unwrap()),
                timed(|| {
                    let _ = s.size(1).unwrap();
                }),
            ];
            if untimed.iter().all(|&t| t < EXTRA) {
                return;
            }
        }
        panic!("begin, commit, checkpoint or size spun");
    }

    /// x1.5: an operation takes at least 1.5 times its own time as measured
    /// from inside it; what the caller's sink does is not scaled.
    #[test]
    fn a_factor_scales_the_operation_by_its_own_time() {
        let (mut s, _, own) =
            recording(Duration::from_millis(2), Injection::Scaled { factor: 1.5 });
        // Lower bounds hold on every call; upper bounds on at least one of
        // several (a stall of the machine only ever adds time).
        let (mut within, mut totals, mut inners) = (false, 0, 0);
        for _ in 0..5 {
            let total = timed(|| s.update(1, b"x").unwrap());
            let inner = *own.borrow();
            assert!(inner >= 2_000_000, "{inner}");
            (totals, inners) = (totals + total, inners + inner);
            within |= total < 2 * inner + 50_000_000;
        }
        assert!(
            totals as f64 >= 1.5 * inners as f64,
            "{totals} ns < 1.5 x {inners} ns"
        );
        assert!(within, "every update took over 2 x its own time + 50 ms");
        // A read whose sink sleeps 20 ms: only the read's own 2 ms is
        // scaled, so the call takes well under 1.5 x (2 + 20) ms. A fresh
        // session: what the updates' spins paid ahead is not in its sums.
        let (mut s, _, own) =
            recording(Duration::from_millis(2), Injection::Scaled { factor: 1.5 });
        let mut unscaled = Vec::new();
        for _ in 0..5 {
            let mut sink_ns = 0;
            let total = timed(|| {
                s.read(1, &mut |_| {
                    sink_ns = timed(|| std::thread::sleep(Duration::from_millis(20)));
                })
                .unwrap()
            });
            let inner = *own.borrow();
            unscaled.push((total, inner, sink_ns));
        }
        let sum = |f: fn(&(u64, u64, u64)) -> u64| unscaled.iter().map(f).sum::<u64>();
        let (totals, inners, sinks) = (sum(|u| u.0), sum(|u| u.1), sum(|u| u.2));
        assert!(
            totals >= sinks + (1.5 * inners as f64) as u64,
            "{unscaled:?}"
        );
        assert!(
            unscaled
                .iter()
                .any(|&(total, inner, sink)| (total as f64) < 1.5 * (inner + sink) as f64),
            "the sink's time was scaled (total, read, sink ns): {unscaled:?}"
        );
    }

    /// What a stretched spin delivered beyond its extra is credited: the
    /// next operations spin only once their extras have used it up, and a
    /// spin never leaves anything owed.
    #[test]
    fn a_surplus_is_paid_back_by_the_spins_after_it() {
        let calls: Log = Rc::default();
        let inner = Recording {
            calls,
            work: Duration::ZERO,
            own: Rc::new(RefCell::new(0)),
        };
        let mut s = Session {
            inner: Box::new(inner),
            injection: Injection::Fixed { ns: 200_000 },
            clock: quanta::Clock::new(),
            // An earlier spin stretched 1 ms past its extra.
            owed_ns: -1_000_000,
            delivered: Arc::default(),
        };
        for _ in 0..3 {
            s.update(1, b"x").unwrap();
        }
        // Three extras taken from the credit, no spin: exactly.
        assert_eq!(s.owed_ns, -400_000);
        assert_eq!(s.delivered.totals().1, 0);
        for _ in 0..3 {
            s.update(1, b"x").unwrap();
        }
        // The credit used up by the second, the third spun its extra.
        assert!(s.owed_ns <= 0, "{}", s.owed_ns);
    }

    #[test]
    fn without_an_injection_the_session_is_not_wrapped() {
        let calls: Log = Rc::default();
        let inner = Recording {
            calls: calls.clone(),
            work: Duration::ZERO,
            own: Rc::default(),
        };
        let mut s = wrap(Box::new(inner), None, &Arc::default());
        s.update(1, b"x").unwrap();
        assert_eq!(*calls.borrow(), ["update"]);
    }
}
