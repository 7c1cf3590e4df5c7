//! The machine's own speed, probed once per measured round: a fixed amount
//! of CPU, memory and system-call work, and a small durable write.
//!
//! Why: on a shared or virtual machine the speed of the machine itself
//! drifts between two runs of the same binary by more than the spread
//! inside one run (seen here: every read 1.1-1.3x slower a minute later,
//! with load and steal quiet). Rounds inside a run cannot reveal that, so
//! `compare` would call the drift a change. The probes do no work that
//! depends on blobbench's code or settings: when they moved between two
//! results, the machine moved, and `compare` will not attribute a change
//! smaller than that drift to what was measured.

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Bytes the CPU probe copies and hashes per pass.
const CPU_BUFFER: usize = 1 << 20;
/// Passes of the CPU probe over its buffer: about 20 ms of work, long
/// enough that, as for the cases it accompanies, time lost to other
/// processes on a busy machine shows in its total.
const CPU_PASSES: usize = 64;
/// Size of the page-cached file the CPU probe reads with pread.
const READ_FILE: usize = 64 << 10;
/// Reads of that file per CPU probe.
const READS: usize = 256;
/// Bytes each flush probe writes before fdatasync.
const FLUSH_BYTES: usize = 4096;
/// Durable writes per flush-probe sample; the sample is their mean. On a
/// virtual disk a flush alternates between spells of about 100 us and of
/// 4 ms (seen here under load); the mean, like a case's time per op,
/// counts both.
const FLUSH_TRIES: usize = 15;
/// Flush-probe samples per probe: the flush probe's spread within one
/// run is large (a coefficient of variation above 100% was seen here), so
/// each round gives it three samples for compare's drift interval to be
/// narrow enough to use.
const FLUSH_SAMPLES: usize = 3;

/// Every round's probe samples of one result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineReference {
    /// One sample per probe (before each group of cases in every measured
    /// round): the time of the CPU probe (1 MiB copied and hashed 64 times,
    /// a 64 KiB cached file read 256 times), in ns.
    pub cpu_ns: Vec<f64>,
    /// Three samples per probe (one in results written before), each the
    /// mean time of one durable 4 KiB write in
    /// the work folder as applications make them (a new file written and
    /// fsynced, renamed over the old one, the folder fsynced: the
    /// filesystem's journal commits included), in ns.
    #[serde(default)]
    pub flush_ns: Vec<f64>,
    /// With several independent runs in one result (`quick --runs K`):
    /// where each run's samples end, as (CPU samples, flush samples) so
    /// far, so each run's probes can be read apart. Empty for one run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_ends: Vec<(usize, usize)>,
}

impl MachineReference {
    /// Appends another run's samples, marking where each run ends.
    pub fn append_run(&mut self, other: &MachineReference) {
        if self.run_ends.is_empty() && !self.cpu_ns.is_empty() {
            self.run_ends.push((self.cpu_ns.len(), self.flush_ns.len()));
        }
        self.cpu_ns.extend(&other.cpu_ns);
        self.flush_ns.extend(&other.flush_ns);
        self.run_ends.push((self.cpu_ns.len(), self.flush_ns.len()));
    }

    /// Each run's samples apart (one, itself, when it holds one run).
    pub fn per_run(&self) -> Vec<MachineReference> {
        if self.run_ends.is_empty() {
            return vec![self.clone()];
        }
        let mut from = (0, 0);
        self.run_ends
            .iter()
            .map(|&(cpu, flush)| {
                let part = MachineReference {
                    cpu_ns: self.cpu_ns[from.0.min(cpu)..cpu.min(self.cpu_ns.len())].to_vec(),
                    flush_ns: self.flush_ns[from.1.min(flush)..flush.min(self.flush_ns.len())]
                        .to_vec(),
                    run_ends: Vec::new(),
                };
                from = (cpu, flush);
                part
            })
            .collect()
    }

    /// Probes the machine once (one sample of each probe), using `dir` for the
    /// read and flush probes' file, which is removed afterwards. A folder
    /// that cannot hold the probe file records only the CPU part's copy
    /// and hash; the probe never fails the measurement it accompanies.
    pub fn probe(&mut self, dir: &Path) {
        let path = dir.join(".blobbench-reference-probe");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .ok();
        let file = file.and_then(|mut f| f.write_all(&[7u8; READ_FILE]).ok().map(|_| f));
        self.cpu_ns.push(time_of(|| cpu_work(file.as_ref())));
        if file.is_some() {
            let _ = std::fs::remove_file(&path);
            for _ in 0..FLUSH_SAMPLES {
                let flushed = (0..FLUSH_TRIES).map(|_| time_of_durable_write(dir));
                match flushed.sum::<Option<f64>>() {
                    Some(total) => self.flush_ns.push(total / FLUSH_TRIES as f64),
                    None => break,
                }
            }
            let _ = std::fs::remove_file(dir.join(DURABLE_NAME));
        }
    }

    /// Whether any round was probed.
    pub fn is_empty(&self) -> bool {
        self.cpu_ns.is_empty()
    }
}

/// How long `work` takes, in ns.
fn time_of(work: impl FnOnce()) -> f64 {
    let t = Instant::now();
    work();
    t.elapsed().as_nanos() as f64
}

/// Copies and hashes a buffer, then reads a cached file with pread: the
/// kind of work a page-cache read of a blob does.
fn cpu_work(file: Option<&File>) {
    let source = vec![0x5au8; CPU_BUFFER];
    let mut copy = vec![0u8; CPU_BUFFER];
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for pass in 0..CPU_PASSES {
        copy.copy_from_slice(black_box(&source));
        for chunk in copy.chunks_exact(8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            hash = (hash ^ word ^ pass as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    if let Some(f) = file {
        let mut buf = vec![0u8; READ_FILE];
        for _ in 0..READS {
            let _ = f.read_at(&mut buf, 0);
            hash ^= u64::from(buf[READ_FILE / 2]);
        }
    }
    black_box(hash);
}

/// The name the flush probe replaces durably in the work folder.
const DURABLE_NAME: &str = ".blobbench-reference-durable";

/// The time of one durable replacement of a 4 KiB file in `dir`: write a
/// new file, fsync it, rename it over the old one, fsync the folder. None
/// when any step fails (the probe is then left out, never guessed).
fn time_of_durable_write(dir: &Path) -> Option<f64> {
    let temp = dir.join(".blobbench-reference-durable.tmp");
    let t = Instant::now();
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)
        .ok()?;
    f.write_all(&[9u8; FLUSH_BYTES]).ok()?;
    f.sync_all().ok()?;
    drop(f);
    std::fs::rename(&temp, dir.join(DURABLE_NAME)).ok()?;
    File::open(dir).and_then(|d| d.sync_all()).ok()?;
    Some(t.elapsed().as_nanos() as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_appended_read_back_apart() {
        let run = |cpu: &[f64], flush: &[f64]| MachineReference {
            cpu_ns: cpu.to_vec(),
            flush_ns: flush.to_vec(),
            run_ends: Vec::new(),
        };
        let (a, b) = (run(&[1.0, 2.0], &[10.0]), run(&[3.0], &[20.0, 30.0]));
        let mut all = MachineReference::default();
        all.append_run(&a);
        all.append_run(&b);
        assert_eq!(all.run_ends, [(2, 1), (3, 3)]);
        assert_eq!(all.per_run(), [a.clone(), b]);
        assert_eq!(a.per_run(), std::slice::from_ref(&a), "one run is itself");
    }

    use super::*;

    #[test]
    fn a_probe_adds_one_cpu_and_three_flush_samples_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = MachineReference::default();
        r.probe(dir.path());
        r.probe(dir.path());
        assert_eq!(r.cpu_ns.len(), 2);
        assert_eq!(r.flush_ns.len(), 2 * FLUSH_SAMPLES);
        assert!(r.cpu_ns.iter().all(|&t| t > 0.0), "{r:?}");
        assert!(r.flush_ns.iter().all(|&t| t > 0.0), "{r:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_folder_that_cannot_hold_the_file_still_gets_the_cpu_sample() {
        let dir = tempfile::tempdir().unwrap();
        let not_a_folder = dir.path().join("plain-file");
        std::fs::write(&not_a_folder, b"x").unwrap();
        let mut r = MachineReference::default();
        r.probe(&not_a_folder);
        assert_eq!(r.cpu_ns.len(), 1);
        assert!(r.flush_ns.is_empty());
    }
}
