//! Datasets: keys `first_key..=last_key`, a size per key drawn from a
//! distribution, and incompressible content that is a pure function of
//! (seed, key, version). Because content is recomputable, any read can be
//! verified byte for byte without storing checksums.
//!
//! The first 8 bytes of a blob carry its version, masked so they look random;
//! a verifier reads the version back, regenerates the blob and compares.

use rand::Rng;
use rand_core::{RngCore, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::process::ProcessStamp;
use crate::units::{MAX_BLOB_SIZE, MAX_KEY};

mod digests;
mod ledger;

pub use digests::CheckedDigests;
use digests::{REMEMBERED_FROM_BYTES, RunningDigest};
pub use ledger::{Allowed, Ledger, LedgerState};

/// How blob sizes are spread around `size`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SizeDistribution {
    /// Every blob is exactly `size` bytes.
    Fixed,
    /// Uniform in `size - variance ..= size + variance`, as kvtest's `--variance`.
    Uniform {
        /// Largest difference from `size` in bytes, either way.
        variance: u64,
    },
    /// Log-normal with median `size` and shape `sigma`, clamped to `min..=max`.
    LogNormal {
        /// Standard deviation of ln(size): with 0.5, 95% of sizes fall within
        /// 0.37x..2.7x of the median (before clamping).
        sigma: f64,
        /// Smallest size drawn, bytes.
        min: u64,
        /// Largest size drawn, bytes.
        max: u64,
    },
}

/// Everything that determines a dataset's keys, sizes and content: two
/// equal specs describe byte-identical datasets, so storing the spec (in the
/// manifest) is enough to verify any blob read later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetSpec {
    /// The lowest key; keys run consecutively from it.
    pub first_key: u64,
    /// Number of blobs (and keys).
    pub count: u64,
    /// Blob size in bytes: exact, center or median, per `distribution`.
    pub size: u64,
    /// How sizes vary from blob to blob.
    pub distribution: SizeDistribution,
    /// Seed of every random choice (sizes and content).
    pub seed: u64,
}

/// Marks the manifest format so a foreign JSON file is never mistaken for ours.
pub const MANIFEST_FORMAT: &str = "blobbench-dataset";
/// Version of the manifest's layout; raised when a field changes meaning.
pub const MANIFEST_VERSION: u32 = 1;

/// What a target holds, stored beside the blobs (a JSON file in a folder
/// store, a row in a database) so later commands can find the keys and
/// verify content without being told how the data was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// [`MANIFEST_VERSION`] of the blobbench that wrote it.
    pub format_version: u32,
    /// Which build wrote the data, e.g. "blobbench 0.1.0".
    pub created_by: String,
    /// The lowest key stored.
    pub first_key: u64,
    /// The highest key stored.
    pub last_key: u64,
    /// Number of blobs stored.
    pub count: u64,
    /// Absent when the blobs were copied from a dataset blobbench did not
    /// generate (an export of a kvtest database): keys known, content not.
    pub spec: Option<DatasetSpec>,
    /// False from the moment `init` or `export` creates the dataset until
    /// every blob is in place and durable: the manifest is rewritten with
    /// `true` last, so a dataset whose making was interrupted (Ctrl-C,
    /// kill -9, a full disk) is never mistaken for a whole one. Manifests
    /// written before this field existed count as complete; a complete
    /// manifest is written without it, as they were.
    #[serde(default = "complete_by_default", skip_serializing_if = "is_complete")]
    pub complete: bool,
    /// The command line that made the dataset, to name the fix when it is
    /// found incomplete ("run ... again").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The process writing the dataset while it is incomplete
    /// ([`ProcessStamp::to_text`]): another blobbench that finds the
    /// dataset incomplete while that process still runs is told to wait
    /// for it, not that it was interrupted. Absent once complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    /// Drawn when the dataset is made (hex), and kept while runs change
    /// it: its ledger of acknowledged versions names it ([`Ledger`]), so
    /// a ledger left by an earlier dataset of the same name is never
    /// taken for this one's. Absent in manifests written before ledgers
    /// were kept: such a dataset has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn complete_by_default() -> bool {
    true
}

fn is_complete(complete: &bool) -> bool {
    *complete
}

impl Manifest {
    /// The manifest of a dataset generated from `spec`.
    pub fn new(spec: DatasetSpec) -> Self {
        let mut m = Manifest::for_keys(spec.first_key, spec.last_key(), spec.count);
        m.spec = Some(spec);
        m
    }

    /// The manifest of blobs whose content blobbench did not generate
    /// (keys `first_key..=last_key`, `count` of them; no spec to verify by).
    pub fn for_keys(first_key: u64, last_key: u64, count: u64) -> Self {
        Manifest {
            format: MANIFEST_FORMAT.to_string(),
            format_version: MANIFEST_VERSION,
            created_by: format!("blobbench {}", env!("CARGO_PKG_VERSION")),
            first_key,
            last_key,
            count,
            spec: None,
            complete: true,
            command: None,
            writer: None,
            id: Some(format!("{:016x}", rand::rng().random::<u64>())),
        }
    }

    /// This manifest as written when a command starts making its dataset:
    /// marked incomplete, with the command line that can make it again.
    pub fn started(&self) -> Manifest {
        self.in_progress(Some(current_command()))
    }

    /// This manifest as written while this process makes or changes the
    /// dataset: incomplete, stamped with this process, and naming
    /// `command` as the fix should the process not finish.
    pub fn in_progress(&self, command: Option<String>) -> Manifest {
        Manifest {
            complete: false,
            command,
            writer: Some(ProcessStamp::current().to_text()),
            ..self.clone()
        }
    }

    /// This manifest as written last, once every blob is in place.
    pub fn completed(&self) -> Manifest {
        Manifest {
            complete: true,
            writer: None,
            ..self.clone()
        }
    }

    /// Another process that is still running and writing this dataset
    /// now, if the manifest names one.
    fn running_writer(&self) -> Option<ProcessStamp> {
        let stamp = ProcessStamp::parse(self.writer.as_deref()?)?;
        (stamp != ProcessStamp::current() && stamp.is_running()).then_some(stamp)
    }

    /// Refuses a dataset whose making was interrupted, naming the command
    /// that makes it again (exit status 2).
    pub fn require_complete(&self, target: &str) -> Result<()> {
        if self.complete {
            return Ok(());
        }
        if let Some(writer) = self.running_writer() {
            return Err(Error::usage(format!(
                "dataset {target} is being made or changed by another blobbench now (process {}): wait for it to end, or stop it and make the dataset again",
                writer.pid
            )));
        }
        let fix = match &self.command {
            Some(c) => format!("run `{c}` again"),
            None => "run the blobbench init or export that made it again".to_string(),
        };
        Err(Error::usage(format!(
            "dataset {target} is incomplete (the command that made it was interrupted or failed before it finished): {fix}"
        )))
    }

    /// The manifest as pretty-printed JSON, as written beside the blobs.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("manifest serialises")
    }

    /// The manifest in `text`, or None if it is not valid JSON or not a
    /// blobbench dataset manifest (so a foreign file is simply ignored).
    pub fn parse(text: &str) -> Option<Manifest> {
        let m: Manifest = serde_json::from_str(text).ok()?;
        (m.format == MANIFEST_FORMAT).then_some(m)
    }
}

/// This process's command line, each argument quoted for a POSIX shell
/// where it needs to be: how messages name the command to run again.
pub fn current_command() -> String {
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    let program = args.next().map(|p| {
        // The program by its name, as the user would type it.
        std::path::Path::new(&p)
            .file_name()
            .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
    });
    program
        .into_iter()
        .chain(args)
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@+%".contains(&b));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn mix(mut z: u64) -> u64 {
    // splitmix64 finaliser: spreads (seed, key, version) over all 64 bits.
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn stream_seed(seed: u64, key: u64, version: u64) -> u64 {
    mix(mix(mix(seed) ^ key) ^ version.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

fn header_mask(seed: u64, key: u64) -> u64 {
    mix(seed ^ mix(key ^ 0x5851_F42D_4C95_7F2D))
}

impl DatasetSpec {
    /// Keys 1..=count, every blob `size` bytes.
    pub fn fixed(count: u64, size: u64, seed: u64) -> DatasetSpec {
        DatasetSpec {
            first_key: 1,
            count,
            size,
            distribution: SizeDistribution::Fixed,
            seed,
        }
    }

    /// The highest key: `first_key + count - 1`.
    pub fn last_key(&self) -> u64 {
        self.first_key + self.count - 1
    }

    /// The largest blob the spec can make, in bytes.
    pub fn max_size(&self) -> u64 {
        match self.distribution {
            SizeDistribution::Fixed => self.size,
            SizeDistribution::Uniform { variance } => self.size.saturating_add(variance),
            // The clamp is far above what a log-normal draws in practice
            // (1000x the median): the real largest blob, where computing it
            // is quick, so a store's per-value limit is not held against
            // blobs that will never be made.
            SizeDistribution::LogNormal { max, .. } if self.count > 1_000_000 => max,
            SizeDistribution::LogNormal { .. } => (self.first_key..=self.last_key())
                .map(|k| self.size_of(k) as u64)
                .max()
                .unwrap_or(0),
        }
    }

    /// The least content the dataset holds, in bytes (count x the center or
    /// median size: sizes vary around it), or None past 2^64 bytes. Cheap,
    /// for checks before anything is written; [`Self::total_bytes`] is exact.
    pub fn least_bytes(&self) -> Option<u64> {
        let typical = match self.distribution {
            SizeDistribution::Uniform { variance } => self.size - variance.min(self.size),
            _ => self.size.min(self.max_size()),
        };
        self.count.checked_mul(typical)
    }

    /// Whether `key` is one of the dataset's keys.
    pub fn contains(&self, key: u64) -> bool {
        key >= self.first_key && key <= self.last_key()
    }

    /// The size of blob `key`; the same for every version of the blob, so
    /// an update rewrites a blob of the same size as kvtest does.
    pub fn size_of(&self, key: u64) -> usize {
        match self.distribution {
            SizeDistribution::Fixed => self.size as usize,
            SizeDistribution::Uniform { variance } => {
                let span = 2 * variance + 1;
                let offset = mix(self.seed ^ mix(key).rotate_left(17)) % span;
                (self.size - variance + offset) as usize
            }
            SizeDistribution::LogNormal { sigma, min, max } => {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed ^ key ^ 0xA5A5));
                let dist = LogNormal::new((self.size as f64).ln(), sigma).expect("sigma validated");
                let v: f64 = dist.sample(&mut rng);
                (v.round() as u64).clamp(min, max) as usize
            }
        }
    }

    /// Sum of every blob's size in bytes (computes each size; O(count)).
    pub fn total_bytes(&self) -> u64 {
        (self.first_key..=self.last_key())
            .map(|k| self.size_of(k) as u64)
            .sum()
    }

    /// Writes blob `key` at `version` into `buf` (resized to the blob's size).
    pub fn fill(&self, key: u64, version: u64, buf: &mut Vec<u8>) {
        let n = self.size_of(key);
        buf.resize(n, 0);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(stream_seed(self.seed, key, version));
        rng.fill_bytes(buf);
        let header = (version ^ header_mask(self.seed, key)).to_le_bytes();
        let h = n.min(8);
        buf[..h].copy_from_slice(&header[..h]);
    }

    /// Checks that `data` is exactly blob `key` at some version, and that the
    /// version is `expected` when given. Returns the version found.
    pub fn verify(&self, key: u64, data: &[u8], expected: Option<u64>) -> Result<u64> {
        let want = self.size_of(key);
        if data.len() != want {
            return Err(Error::Verify(format!(
                "key {key}: read {} bytes, the dataset says {want}",
                data.len()
            )));
        }
        let mut header = [0u8; 8];
        let h = want.min(8);
        header[..h].copy_from_slice(&data[..h]);
        let mask = header_mask(self.seed, key);
        let version = if want >= 8 {
            u64::from_le_bytes(header) ^ mask
        } else {
            expected.unwrap_or(0)
        };
        if let Some(v) = expected
            && v != version
        {
            return Err(Error::Verify(format!(
                "key {key}: holds version {version}, expected {v} (a write was lost)"
            )));
        }
        if let Some(at) = self.first_difference(key, version, data) {
            return Err(Error::Verify(format!(
                "key {key}: content differs from the dataset at byte {at}"
            )));
        }
        Ok(version)
    }

    /// Where `data` (of the blob's length) first differs from what `fill`
    /// writes for `key` at `version`, or None. Generates and compares eight
    /// bytes at a time, as `fill` draws them, instead of filling a buffer
    /// and comparing it: a check of every read must cost the load
    /// generator as little as the reads themselves.
    fn first_difference(&self, key: u64, version: u64, data: &[u8]) -> Option<usize> {
        let header = (version ^ header_mask(self.seed, key)).to_le_bytes();
        if data.len() < 8 {
            return data.iter().zip(header).position(|(a, b)| *a != b);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(stream_seed(self.seed, key, version));
        let mut words = data.chunks_exact(8);
        let mut at = 0;
        for word in &mut words {
            let drawn = rng.next_u64();
            let want = if at == 0 {
                u64::from_le_bytes(header)
            } else {
                drawn
            };
            let got = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            if let Some(differs) = first_difference(got, want, at) {
                return Some(differs);
            }
            at += 8;
        }
        // The tail as fill_bytes draws it: a whole word for 5-7 bytes,
        // half of one (its high bits, as next_u32) for 1-4.
        let rest = words.remainder();
        let tail: [u8; 8] = match rest.len() {
            0 => return None,
            1..=4 => {
                let mut t = [0u8; 8];
                t[..4].copy_from_slice(&rng.next_u32().to_le_bytes());
                t
            }
            _ => rng.next_u64().to_le_bytes(),
        };
        rest.iter()
            .zip(tail)
            .position(|(a, b)| *a != b)
            .map(|i| at + i)
    }
}

/// A check of one blob fed in pieces as a store hands them over (an S3
/// body as it arrives), so the blob is never gathered into one buffer; its
/// verdict is [`DatasetSpec::verify`]'s on the whole blob, with no version
/// expected.
pub struct PieceCheck<'a> {
    spec: &'a DatasetSpec,
    key: u64,
    want: usize,
    /// Bytes fed so far.
    seen: usize,
    /// The first eight bytes: the version, masked.
    head: [u8; 8],
    /// The content's generator, once the head has given the version.
    rng: Option<Xoshiro256PlusPlus>,
    version: u64,
    /// A word split between two pieces, and how much of it has come.
    word: [u8; 8],
    word_len: usize,
    /// Where the content first differed.
    differs: Option<usize>,
    /// Digests of blobs already checked, when the caller keeps them and
    /// this blob is worth remembering, with this blob's digest so far.
    memo: Option<(&'a CheckedDigests, RunningDigest)>,
    /// The memo's digest of this version: its bytes are hashed, not
    /// regenerated.
    vouched: Option<u128>,
}

impl DatasetSpec {
    /// A check of blob `key` to feed piece by piece.
    pub fn check_pieces(&self, key: u64) -> PieceCheck<'_> {
        PieceCheck {
            spec: self,
            key,
            want: self.size_of(key),
            seen: 0,
            head: [0; 8],
            rng: None,
            version: 0,
            word: [0; 8],
            word_len: 0,
            differs: None,
            memo: None,
            vouched: None,
        }
    }

    /// A check of blob `key` that compares its bytes only when `memo`
    /// holds no digest of the version read, and remembers the digest of
    /// bytes that matched: a run that reads a large blob again checks it
    /// at a fifth of the CPU (see [`CheckedDigests`]).
    pub fn check_pieces_remembering<'a>(
        &'a self,
        key: u64,
        memo: &'a CheckedDigests,
    ) -> PieceCheck<'a> {
        let mut check = self.check_pieces(key);
        if check.want >= REMEMBERED_FROM_BYTES {
            check.memo = Some((memo, RunningDigest::new()));
        }
        check
    }
}

impl PieceCheck<'_> {
    /// The next piece of the blob.
    pub fn feed(&mut self, mut piece: &[u8]) {
        if let Some((_, digest)) = self.memo.as_mut() {
            digest.write(piece);
        }
        while !piece.is_empty() {
            if self.differs.is_some() || self.seen >= self.want || self.vouched.is_some() {
                self.seen += piece.len();
                return;
            }
            if self.rng.is_none() {
                let take = (8 - self.seen).min(piece.len()).min(self.want - self.seen);
                self.head[self.seen..self.seen + take].copy_from_slice(&piece[..take]);
                self.seen += take;
                piece = &piece[take..];
                if self.seen == 8 {
                    self.start_content();
                }
                continue;
            }
            if self.word_len > 0 || piece.len() < 8 {
                let take = (8 - self.word_len).min(piece.len());
                self.word[self.word_len..self.word_len + take].copy_from_slice(&piece[..take]);
                self.word_len += take;
                self.seen += take;
                piece = &piece[take..];
                if self.word_len == 8 {
                    self.word_len = 0;
                    let word = self.word;
                    self.compare_word(&word, self.seen - 8);
                }
                continue;
            }
            // The bulk of a blob: the generator held once, one branch a
            // word (the first difference ends the comparing).
            let whole = piece.len() / 8 * 8;
            let rng = self.rng.as_mut().expect("started");
            for (i, word) in piece[..whole].chunks_exact(8).enumerate() {
                let got = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                let differs = first_difference(got, rng.next_u64(), self.seen + i * 8);
                if differs.is_some() {
                    self.differs = differs;
                    break;
                }
            }
            self.seen += whole;
            piece = &piece[whole..];
        }
    }

    /// The head is complete: the version it names seeds the content.
    fn start_content(&mut self) {
        self.version = u64::from_le_bytes(self.head) ^ header_mask(self.spec.seed, self.key);
        let mut rng =
            Xoshiro256PlusPlus::seed_from_u64(stream_seed(self.spec.seed, self.key, self.version));
        // The word under the head, drawn and overwritten by `fill`.
        rng.next_u64();
        self.rng = Some(rng);
        self.vouched = self
            .memo
            .as_ref()
            .and_then(|(memo, _)| memo.digest(self.key, self.version));
    }

    /// Compares the word that starts at byte `start` of the blob.
    fn compare_word(&mut self, word: &[u8], start: usize) {
        let want = self.rng.as_mut().expect("started").next_u64();
        let got = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        if self.differs.is_none() {
            self.differs = first_difference(got, want, start);
        }
    }

    /// The verdict on the whole blob: its version, or why it is not one.
    pub fn finish(mut self) -> Result<u64> {
        let (key, want) = (self.key, self.want);
        if self.seen != want {
            return Err(Error::Verify(format!(
                "key {key}: read {} bytes, the dataset says {want}",
                self.seen
            )));
        }
        let digest = self
            .memo
            .as_ref()
            .map(|(memo, digest)| (*memo, digest.finish()));
        if let (Some(vouched), Some((_, digest))) = (self.vouched, digest) {
            if digest == vouched {
                return Ok(self.version);
            }
            return Err(Error::Verify(format!(
                "key {key}: content differs from the dataset (its digest is not that of version {}'s bytes, checked byte by byte before)",
                self.version
            )));
        }
        if want < 8 {
            let header = header_mask(self.spec.seed, key).to_le_bytes();
            self.differs = self.head[..want]
                .iter()
                .zip(header)
                .position(|(a, b)| *a != b);
        } else if self.word_len > 0 && self.differs.is_none() {
            let rng = self.rng.as_mut().expect("started");
            let tail: [u8; 8] = if self.word_len <= 4 {
                let mut t = [0u8; 8];
                t[..4].copy_from_slice(&rng.next_u32().to_le_bytes());
                t
            } else {
                rng.next_u64().to_le_bytes()
            };
            let start = want - self.word_len;
            self.differs = self.word[..self.word_len]
                .iter()
                .zip(tail)
                .position(|(a, b)| *a != b)
                .map(|i| start + i);
        }
        match self.differs {
            Some(at) => Err(Error::Verify(format!(
                "key {key}: content differs from the dataset at byte {at}"
            ))),
            None => {
                if let Some((memo, digest)) = digest {
                    memo.remember(key, self.version, digest);
                }
                Ok(self.version)
            }
        }
    }
}

/// A fresh version number for a round of updates: random so that versions
/// written by different runs never collide with the initial version 0.
pub fn fresh_version() -> u64 {
    rand::rng().random_range(1..u64::MAX / 2)
}

/// The shape of a dataset's blob sizes as asked for; with the size and
/// the variance it becomes the spec's [`SizeDistribution`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeShape {
    /// size +/- variance, uniformly (one size when the variance is 0).
    Uniform,
    /// Every blob exactly the size.
    Fixed,
    /// Log-normal around the median size, of this shape (0 < sigma <= 4).
    LogNormal {
        /// The shape parameter.
        sigma: f64,
    },
}

/// Builds a spec from kvtest-style options, validating them.
pub fn spec_from_options(
    count: u64,
    size: u64,
    variance: u64,
    shape: SizeShape,
    seed: u64,
) -> Result<DatasetSpec> {
    if count == 0 {
        return Err(Error::usage("--count must be positive, e.g. --count 100k"));
    }
    if size == 0 {
        return Err(Error::usage("--size must be positive, e.g. --size 10k"));
    }
    if size > MAX_BLOB_SIZE {
        return Err(Error::usage(format!(
            "--size {size} is more than blobbench's limit of {MAX_BLOB_SIZE} bytes per blob; use --size 2G or less"
        )));
    }
    if count > MAX_KEY {
        return Err(Error::usage(format!(
            "--count {count} is more than the {MAX_KEY} keys a database column holds; ask for fewer blobs"
        )));
    }

    let distribution = match shape {
        SizeShape::Uniform if variance == 0 => SizeDistribution::Fixed,
        SizeShape::Uniform => {
            if variance >= size {
                return Err(Error::usage(format!(
                    "--variance {variance} must be smaller than --size {size} (blobs would be empty): give a smaller --variance, e.g. --variance 0 for one size"
                )));
            }
            if size + variance > MAX_BLOB_SIZE {
                return Err(Error::usage(format!(
                    "--size {size} with --variance {variance} makes blobs over blobbench's limit of {MAX_BLOB_SIZE} bytes; use a smaller --size or --variance"
                )));
            }
            SizeDistribution::Uniform { variance }
        }
        SizeShape::Fixed => SizeDistribution::Fixed,
        SizeShape::LogNormal { sigma } => {
            if !(sigma > 0.0 && sigma <= 4.0) {
                return Err(Error::usage(format!(
                    "--sigma {sigma} must be in (0, 4], e.g. --sigma 1"
                )));
            }
            SizeDistribution::LogNormal {
                sigma,
                min: 1,
                max: size.saturating_mul(1000).min(MAX_BLOB_SIZE),
            }
        }
    };
    Ok(DatasetSpec {
        first_key: 1,
        count,
        size,
        distribution,
        seed,
    })
}

/// Where the word `got` that starts at byte `start` of a blob first
/// differs from `want` (little-endian: its lowest differing byte), None
/// when they are equal.
fn first_difference(got: u64, want: u64, start: usize) -> Option<usize> {
    let diff = got ^ want;
    (diff != 0).then(|| start + diff.trailing_zeros() as usize / 8)
}

#[cfg(test)]
mod tests {

    use super::*;

    /// Fed in pieces of any size, the check gives what `verify` gives on
    /// the whole blob: the version, or the first changed byte.
    #[test]
    fn pieces_of_any_size_check_as_the_whole_does() {
        for size in (0..=40).chain([4099, 70_001]) {
            let s = DatasetSpec::fixed(3, size, 9);
            let mut blob = Vec::new();
            s.fill(3, 7, &mut blob);
            let mut cases = vec![blob.clone()];
            for at in [
                0,
                5,
                8,
                9,
                15,
                16,
                size as usize / 2,
                (size as usize).saturating_sub(1),
            ] {
                if at < blob.len() {
                    let mut bad = blob.clone();
                    bad[at] ^= 0x01;
                    cases.push(bad);
                }
            }
            cases.push(blob[..blob.len().saturating_sub(1)].to_vec());
            for case in &cases {
                let whole = s.verify(3, case, None).map_err(|e| e.to_string());
                for piece in [1, 3, 7, 8, 13, 4096] {
                    let mut check = s.check_pieces(3);
                    for p in case.chunks(piece) {
                        check.feed(p);
                    }
                    let fed = check.finish().map_err(|e| e.to_string());
                    assert_eq!(fed, whole, "size {size}, pieces of {piece}");
                }
            }
        }
    }

    /// A check that remembers digests passes and fails as the byte check
    /// does, whether or not the memo already vouches for the version: a
    /// changed byte anywhere, a missing byte, or another version's content
    /// under this version's header all fail; only matching bytes are
    /// remembered.
    #[test]
    fn remembered_digests_pass_and_fail_as_the_byte_check_does() {
        for size in [100, 4095, 4096, 70_001] {
            let s = DatasetSpec::fixed(3, size, 9);
            let memo = CheckedDigests::new();
            let (mut blob, mut other) = (Vec::new(), Vec::new());
            s.fill(3, 7, &mut blob);
            s.fill(3, 8, &mut other);
            other[..8].copy_from_slice(&blob[..8]);
            let mut cases = vec![other, blob[..blob.len() - 1].to_vec()];
            for at in [8, size as usize / 2, size as usize - 1] {
                let mut bad = blob.clone();
                bad[at] ^= 0x01;
                cases.push(bad);
            }
            let check = |data: &[u8]| {
                let mut check = s.check_pieces_remembering(3, &memo);
                for p in data.chunks(1000) {
                    check.feed(p);
                }
                check.finish().is_ok()
            };
            for case in &cases {
                assert!(!check(case), "size {size}: a bad read before any good one");
            }
            assert_eq!(memo.digest(3, 7), None, "bad reads are never remembered");
            assert!(check(&blob), "size {size}");
            let remembered = memo.digest(3, 7).is_some();
            assert_eq!(remembered, size >= 4096, "size {size}");
            assert!(check(&blob), "size {size}: a good read after a good one");
            for case in &cases {
                assert!(!check(case), "size {size}: a bad read after a good one");
            }
        }
    }

    /// The fused check agrees with `fill` byte for byte: every length
    /// (each tail shape, and blobs shorter than the header), and a change
    /// at any position is found there.
    #[test]
    fn verify_finds_any_changed_byte_where_fill_put_it() {
        for size in (0..=40).chain([4096, 1 << 20]) {
            let s = DatasetSpec::fixed(3, size, 77);
            let mut blob = Vec::new();
            s.fill(2, 5, &mut blob);
            assert_eq!(s.verify(2, &blob, Some(5)).unwrap(), 5, "size {size}");
            let positions: Vec<usize> = if size <= 40 {
                (0..size as usize).collect()
            } else {
                vec![0, 7, 8, 9, 4095, size as usize - 1]
            };
            for at in positions {
                let mut bad = blob.clone();
                bad[at] ^= 0x10;
                // A changed header byte reads as another version's blob
                // (all of it when the blob is only its header): not checked.
                if at < 8 && size >= 8 {
                    continue;
                }
                // A blob shorter than its header holds no version: say it.
                let asked = (size < 8).then_some(5);
                let err = s.verify(2, &bad, asked).unwrap_err().to_string();
                assert!(err.contains(&format!("at byte {at}")), "size {size}: {err}");
            }
        }
    }

    #[test]
    fn a_manifest_is_complete_only_when_marked_so() {
        // Written before completeness was recorded: complete, as it was used.
        let old = r#"{"format":"blobbench-dataset","format_version":1,"created_by":"blobbench 0.1.0","first_key":1,"last_key":2,"count":2,"spec":null}"#;
        let m = Manifest::parse(old).unwrap();
        assert!(m.complete);
        assert!(m.require_complete("x").is_ok());
        // A complete manifest is written as before, without the field.
        assert!(!m.to_json().contains("complete"));
        let started = m.started();
        let back = Manifest::parse(&started.to_json()).unwrap();
        assert!(!back.complete);
        let err = back.require_complete("x.db").unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        assert!(
            text.contains("dataset x.db is incomplete") && text.contains("again"),
            "{text}"
        );
        assert!(
            Manifest::parse(&back.completed().to_json())
                .unwrap()
                .complete
        );
        // Completed, the writer's stamp goes with the flag.
        assert!(!back.completed().to_json().contains("writer"));
    }

    #[test]
    fn an_incomplete_dataset_another_running_process_writes_is_waited_for_not_called_interrupted() {
        let m = Manifest::for_keys(1, 2, 2).started();
        let with_writer = |stamp: ProcessStamp| {
            let text = m
                .to_json()
                .replace(&ProcessStamp::current().to_text(), &stamp.to_text());
            Manifest::parse(&text).unwrap()
        };
        let message = |m: &Manifest| m.require_complete("x.db").unwrap_err().to_string();
        // The parent process (it started the tests) runs: wait for it.
        let parent = std::os::unix::process::parent_id();
        let start = std::fs::read_to_string(format!("/proc/{parent}/stat")).unwrap();
        let start: u64 = start[start.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap()
            .parse()
            .unwrap();
        let running = with_writer(ProcessStamp { pid: parent, start });
        let text = message(&running);
        assert!(
            text.contains("being made or changed by another blobbench now")
                && text.contains(&format!("process {parent}")),
            "{text}"
        );
        assert_eq!(running.require_complete("x").unwrap_err().exit_code(), 2);
        // The same pid started at another time has ended: interrupted.
        let ended = with_writer(ProcessStamp {
            pid: parent,
            start: start + 1,
        });
        assert!(
            message(&ended).contains("is incomplete"),
            "{}",
            message(&ended)
        );
        // This process's own stamp is no other writer to wait for.
        assert!(message(&m).contains("is incomplete"), "{}", message(&m));
    }

    fn spec(distribution: SizeDistribution) -> DatasetSpec {
        DatasetSpec {
            first_key: 1,
            count: 1000,
            size: 10_000,
            distribution,
            seed: 7,
        }
    }

    #[test]
    fn sizes_stay_in_range_and_spread() {
        let s = spec(SizeDistribution::Uniform { variance: 2000 });
        let sizes: Vec<usize> = (1..=1000).map(|k| s.size_of(k)).collect();
        assert!(sizes.iter().all(|&n| (8000..=12000).contains(&n)));
        let mean = sizes.iter().sum::<usize>() as f64 / 1000.0;
        assert!((mean - 10_000.0).abs() < 200.0, "mean {mean}");
        assert!(sizes.iter().min().unwrap() < &8300 && sizes.iter().max().unwrap() > &11700);
        let l = spec(SizeDistribution::LogNormal {
            sigma: 1.0,
            min: 1,
            max: 10_000_000,
        });
        let mut ls: Vec<usize> = (1..=1000).map(|k| l.size_of(k)).collect();
        ls.sort();
        let median = ls[500] as f64;
        assert!((6000.0..16000.0).contains(&median), "median {median}");
    }

    #[test]
    fn content_is_deterministic_and_verifiable() {
        let s = spec(SizeDistribution::Uniform { variance: 2000 });
        let (mut a, mut b) = (Vec::new(), Vec::new());
        s.fill(5, 0, &mut a);
        s.fill(5, 0, &mut b);
        assert_eq!(a, b);
        s.fill(5, 1, &mut b);
        assert_ne!(a, b);
        assert_eq!(s.verify(5, &a, Some(0)).unwrap(), 0);
        assert_eq!(s.verify(5, &b, None).unwrap(), 1);
        assert!(
            s.verify(5, &b, Some(0))
                .unwrap_err()
                .to_string()
                .contains("lost")
        );
        a[100] ^= 1;
        assert!(s.verify(5, &a, None).is_err());
        assert!(s.verify(6, &b, None).is_err());
    }

    #[test]
    fn content_is_incompressible() {
        let s = spec(SizeDistribution::Fixed);
        let mut a = Vec::new();
        s.fill(1, 0, &mut a);
        let mut counts = [0usize; 256];
        a.iter().for_each(|&b| counts[b as usize] += 1);
        // 10000 random bytes: every value appears, none dominates.
        assert!(counts.iter().all(|&c| c > 10 && c < 90));
    }

    #[test]
    fn option_errors_name_the_value() {
        assert!(spec_from_options(0, 10, 0, SizeShape::Uniform, 1).is_err());
        assert!(
            spec_from_options(10, 10, 10, SizeShape::Uniform, 1)
                .unwrap_err()
                .to_string()
                .contains("--variance 10")
        );
        // An unknown --dist ("zipf") is refused by clap: cli::tests.
    }
}
