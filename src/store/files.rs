//! One file per blob: a flat folder (`000042`) or kvtest's tree (`00/00/42`).

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, json};

use super::atomic_file::{sync_dir, write_atomically};
use super::contract::{
    Access, BlobFile, BlobPlacement, CacheControl, Catalog, DiskLayout, Engine, FileIdentity,
    Serving, Session, SessionCore, SessionOptions, Snapshots, Space, StoreCore, StoreInfo,
    WriteStyle, first_key_from_one, missing_key, whole_file,
};
use super::etag::{file_stamp, fingerprint, stamp_of};
use super::journal;
use super::pieces::stream_pieces;
use crate::dataset::Manifest;
use crate::error::{Error, Result};

mod slots;
pub(crate) use slots::check_free;

/// The manifest file a dataset folder carries; kvtest ignores it.
pub const MANIFEST_FILE: &str = "blobbench-dataset.json";
/// The ledger of acknowledged versions beside it (`dataset::Ledger`).
pub const LEDGER_FILE: &str = "blobbench-ledger.json";
/// blobbench's own records in a dataset folder, beside the blobs.
const RECORD_FILES: [&str; 2] = [MANIFEST_FILE, LEDGER_FILE];

/// How blob files are named in their folder, as kvtest names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileLayout {
    /// `000042` in the folder itself.
    Flat,
    /// `00/00/42`: two levels of folders.
    Tree,
}

impl FileLayout {
    /// Appends the relative name of `key` exactly as kvtest names it.
    pub fn push_name(self, key: u64, out: &mut String) {
        match self {
            FileLayout::Flat => write!(out, "{key:06}"),
            FileLayout::Tree => write!(
                out,
                "{:02}/{:02}/{:02}",
                key / 10000,
                (key / 100) % 100,
                key % 100
            ),
        }
        .expect("writing to a String cannot fail");
    }
}

/// The key a file's name (relative to the root, `/`-separated) stands for,
/// when it is exactly the name blobbench gives that key: `0000001` or `1`
/// beside `000001`, and digits past 2^64, are someone else's files, not a
/// second key 1 or a wrapped key 0.
pub(crate) fn canonical_key(layout: FileLayout, name: &str) -> Option<u64> {
    let number = |part: &&str| -> Option<u64> {
        let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        digits.then(|| part.parse().ok()).flatten()
    };
    let parts: Vec<&str> = name.split('/').collect();
    let key = match (layout, parts.as_slice()) {
        (FileLayout::Flat, [k]) => number(k)?,
        (FileLayout::Tree, [a, b, c]) => number(a)?
            .checked_mul(10000)?
            .checked_add(number(b)?.checked_mul(100)?)?
            .checked_add(number(c)?)?,
        _ => return None,
    };
    let mut back = String::new();
    layout.push_name(key, &mut back);
    (back == name).then_some(key)
}

/// A folder of blob files, one per key.
pub struct FilesStore {
    root: PathBuf,
    layout: FileLayout,
    access: Access,
    /// The last key the folder's manifest records: a key inserted past it
    /// is named in the process's journal first (see `journal`). None for
    /// a folder without one (not a dataset blobbench made).
    dataset_last: Option<u64>,
}

impl FilesStore {
    /// Opens the folder `root` holding files in `layout`.
    pub fn open(root: &Path, layout: FileLayout, access: Access) -> Result<Self> {
        if !root.exists() {
            return Err(Error::usage(format!(
                "target \"{}\" does not exist (make it with: blobbench export DB {} or blobbench init dir:{})",
                root.display(),
                root.display(),
                root.display()
            )));
        }
        if !root.is_dir() {
            return Err(Error::usage(format!(
                "target \"{}\" is a file, not a folder; a database target is named sqlite:{}",
                root.display(),
                root.display()
            )));
        }
        let dataset_last = folder_manifest(root).map(|m| m.last_key);
        Ok(FilesStore {
            root: root.to_path_buf(),
            layout,
            access,
            dataset_last,
        })
    }

    /// Makes `root` an empty dataset folder, clearing only what blobbench made.
    pub fn create(root: &Path, layout: FileLayout, manifest: &Manifest) -> Result<Self> {
        slots::check_free(root, layout, manifest)?;
        prepare_own_folder(root, manifest)?;
        FilesStore::open(root, layout, Access::ReadWrite)
    }

    fn key_path(&self, key: u64) -> PathBuf {
        let mut s = String::new();
        self.layout.push_name(key, &mut s);
        self.root.join(s)
    }

    /// Lists every key file by walking the folder.
    fn scan_keys(&self) -> Result<Vec<u64>> {
        let mut keys = Vec::new();
        let digits = |name: &str| !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit());
        let read = |dir: &Path| fs::read_dir(dir).map_err(|e| Error::io("cannot list", dir, e));
        match self.layout {
            FileLayout::Flat => {
                for entry in read(&self.root)? {
                    let entry = entry.map_err(|e| Error::io("cannot list", &self.root, e))?;
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if let Some(key) = canonical_key(self.layout, &name) {
                        keys.push(key);
                    }
                }
            }
            FileLayout::Tree => {
                for a in read(&self.root)? {
                    let a = a.map_err(|e| Error::io("cannot list", &self.root, e))?;
                    let an = a.file_name().to_string_lossy().into_owned();
                    if !digits(&an) || !a.path().is_dir() {
                        continue;
                    }
                    for b in read(&a.path())? {
                        let b = b.map_err(|e| Error::io("cannot list", &a.path(), e))?;
                        let bn = b.file_name().to_string_lossy().into_owned();
                        if !digits(&bn) || !b.path().is_dir() {
                            continue;
                        }
                        for c in read(&b.path())? {
                            let c = c.map_err(|e| Error::io("cannot list", &b.path(), e))?;
                            let cn = c.file_name().to_string_lossy().into_owned();
                            if let Some(key) =
                                canonical_key(self.layout, &format!("{an}/{bn}/{cn}"))
                            {
                                keys.push(key);
                            }
                        }
                    }
                }
            }
        }
        keys.sort_unstable();
        Ok(keys)
    }

    /// Every regular file under the root, listed.
    fn walk(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        self.visit(&mut |entry, is_dir| {
            if !is_dir {
                out.push(entry.path());
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The blocks of the root, every folder and every file under it,
    /// summed while walking; without the manifest when `skip_manifest`.
    /// Walked on every core (each thread takes a share of the root's
    /// entries): a suite walks a folder of 20,000 files after every case.
    fn space_walk(&self, skip_manifest: bool) -> Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let root = fs::symlink_metadata(&self.root)
            .map_err(|e| Error::io("cannot stat", &self.root, e))?;
        let share = |share: Share| -> Result<u64> {
            let mut total = 0;
            self.visit_share(share, &mut |entry, _| {
                if skip_manifest && RECORD_FILES.contains(&&*entry.file_name().to_string_lossy()) {
                    return Ok(());
                }
                // DirEntry::metadata does not follow a link, as symlink_metadata.
                match entry.metadata() {
                    Ok(md) => total += md.blocks() * 512,
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io("cannot stat", &entry.path(), e)),
                }
                Ok(())
            })?;
            Ok(total)
        };
        let of = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 4);
        let shares: Vec<Result<u64>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..of)
                .map(|index| scope.spawn(move || share(Share { index, of })))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut total = root.blocks() * 512;
        for s in shares {
            total += s?;
        }
        Ok(total)
    }

    /// Calls `each` for every regular file and folder under the root (not
    /// the root itself), `true` for a folder, without listing them first:
    /// a folder of a million files costs no memory per file.
    fn visit(&self, each: &mut dyn FnMut(&fs::DirEntry, bool) -> Result<()>) -> Result<()> {
        self.visit_share(Share { index: 0, of: 1 }, each)
    }

    /// [`FilesStore::visit`] of one share of the root's entries (those
    /// whose place in its listing is `share.index` modulo `share.of`, and
    /// everything under them): the shares together visit everything once,
    /// as a folder nothing changes meanwhile lists in the same order each
    /// time it is read (a walk beside writers is inexact either way).
    fn visit_share(
        &self,
        share: Share,
        each: &mut dyn FnMut(&fs::DirEntry, bool) -> Result<()>,
    ) -> Result<()> {
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let top = dir == self.root;
            let listing = fs::read_dir(&dir).map_err(|e| Error::io("cannot list", &dir, e))?;
            for (n, entry) in listing.enumerate() {
                if top && n % share.of != share.index {
                    continue;
                }
                let entry = entry.map_err(|e| Error::io("cannot list", &dir, e))?;
                let ft = entry
                    .file_type()
                    .map_err(|e| Error::io("cannot stat", &entry.path(), e))?;
                if ft.is_dir() {
                    stack.push(entry.path());
                    each(&entry, true)?;
                } else if ft.is_file() {
                    each(&entry, false)?;
                }
            }
        }
        Ok(())
    }
}

/// One of `of` shares of a folder's top-level entries.
#[derive(Debug, Clone, Copy)]
struct Share {
    index: usize,
    of: usize,
}

/// Writes `manifest` into the folder `root` atomically: a temporary file,
/// fsynced, renamed over the manifest, then the folder fsynced. A crash
/// leaves the old manifest or the new one, never a torn one (which would
/// make the folder look like a user's).
pub(crate) fn write_manifest(root: &Path, manifest: &Manifest) -> Result<()> {
    write_atomically(root, MANIFEST_FILE, &manifest.to_json())
}

/// The manifest of the dataset folder `root`, or None where there is none
/// (or it is not one blobbench wrote).
pub(crate) fn folder_manifest(root: &Path) -> Option<Manifest> {
    let text = fs::read_to_string(root.join(MANIFEST_FILE)).ok()?;
    Manifest::parse(&text)
}

/// Flushes every file of the filesystem holding `root` to disk (syncfs):
/// one call instead of an fsync per blob file, before a dataset is marked
/// complete.
pub(crate) fn sync_filesystem(root: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let dir = File::open(root).map_err(|e| Error::io("cannot open", root, e))?;
    // SAFETY: syncfs only reads the descriptor, which `dir` keeps open.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
        return Err(Error::io(
            "cannot flush to disk",
            root,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Makes `root` ready to receive a dataset and writes its (incomplete)
/// `manifest`: creates the folder, or clears the blob files of an earlier
/// blobbench dataset. Refuses a non-empty folder that blobbench did not
/// make, so a user's files are never overwritten. The manifest is written
/// before anything is cleared and never removed, so a clearing cut short
/// leaves a folder that is still recognisably ours and incomplete.
pub(crate) fn prepare_own_folder(root: &Path, manifest: &Manifest) -> Result<()> {
    clear_own_folder(root)?;
    // New or ours from an earlier run: this invocation's from here on.
    super::owned::record(root, super::owned::Made::Dataset);
    write_manifest(root, manifest)
}

/// Creates `root`, or clears what an earlier blobbench dataset wrote there
/// (its manifest stays, marked incomplete, until the caller replaces it).
fn clear_own_folder(root: &Path) -> Result<()> {
    if root.exists() {
        if !root.is_dir() {
            return Err(Error::usage(format!(
                "refusing to write into \"{}\": it is a file, not a folder",
                root.display()
            )));
        }
        let mut entries = fs::read_dir(root).map_err(|e| Error::io("cannot list", root, e))?;
        let Some(manifest) = folder_manifest(root) else {
            if entries.next().is_some() {
                return Err(Error::usage(format!(
                    "refusing to write into \"{}\": the folder is not empty and was not made by blobbench; choose an empty or new folder",
                    root.display()
                )));
            }
            return Ok(());
        };
        // Ours: mark it incomplete first, so that an interrupted clear is
        // still recognised as ours and never taken for a whole dataset; then
        // remove only what blobbench wrote.
        let clearing = manifest.in_progress(manifest.command.clone());
        write_manifest(root, &clearing)?;
        return remove_own_entries(root, &manifest);
    }
    fs::create_dir_all(root).map_err(|e| {
        if e.kind() == ErrorKind::PermissionDenied {
            Error::usage(format!(
                "cannot create folder \"{}\": permission denied (choose a writable place)",
                root.display()
            ))
        } else {
            Error::io("cannot create folder", root, e)
        }
    })
}

/// Removes a dataset folder this invocation made: what blobbench wrote in
/// it (see [`remove_own_entries`]), its manifest, and the folder once
/// empty. A user's file in it stays, and with it the folder. Best effort.
pub(crate) fn remove_own_folder(root: &Path) {
    if let Some(manifest) = folder_manifest(root) {
        if remove_own_entries(root, &manifest).is_err() {
            return;
        }
        let _ = fs::remove_file(root.join(LEDGER_FILE));
        let _ = fs::remove_file(root.join(MANIFEST_FILE));
    }
    let _ = fs::remove_dir(root);
}

/// Removes from an earlier dataset folder only what blobbench wrote there:
/// the blob files of the keys its manifest lists and of the keys the
/// journals of runs over it name (the keys a run killed before it put the
/// dataset right may have added past the manifest's count; see
/// `journal`), flat `000042` or tree `00/00/42`, blobbench's temporary
/// files beside them (`000042.tmp`, `000042.tmp-PID-N`), the tree's
/// folders once empty, a manifest's leftover temporary file, and the
/// journals themselves, last. The manifest stays (the caller has marked
/// it incomplete and replaces it). A user's file, a symbolic link, a key
/// no journal names, anything else stays where it is.
fn remove_own_entries(root: &Path, manifest: &Manifest) -> Result<()> {
    let mut owned = vec![manifest.first_key..=manifest.last_key];
    owned.extend(journal::journaled_keys(root)?);
    walk_own_entries(root, 0, 0, &owned)?;
    // The earlier dataset's ledger, and a manifest's or ledger's own
    // temporary file, left by a writer that was killed.
    remove_if_there(&root.join(LEDGER_FILE))?;
    let leftovers = RECORD_FILES.map(|f| format!("{f}.tmp-"));
    for entry in fs::read_dir(root).map_err(|e| Error::io("cannot list", root, e))? {
        let p = entry.map_err(|e| Error::io("cannot list", root, e))?.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| leftovers.iter().any(|l| n.starts_with(l))) && p.is_file() {
            fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
        }
    }
    // Last: until every file they name is gone, a clearing cut short
    // finds them again.
    journal::remove_journals(root)
}

/// Removes the file `path` unless it is gone already.
fn remove_if_there(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io("cannot remove", path, e)),
        _ => Ok(()),
    }
}

/// Removes the blob files (and their temporary files) of the keys in
/// `owned` under `dir`, `depth` folders below the root (`prefix`: the key
/// digits the folders above spell).
fn walk_own_entries(
    dir: &Path,
    depth: u32,
    prefix: u64,
    owned: &[std::ops::RangeInclusive<u64>],
) -> Result<()> {
    for entry in fs::read_dir(dir).map_err(|e| Error::io("cannot list", dir, e))? {
        let entry = entry.map_err(|e| Error::io("cannot list", dir, e))?;
        let p = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let blob = name.split(".tmp").next().unwrap_or_default();
        let digits = !blob.is_empty() && blob.bytes().all(|b| b.is_ascii_digit());
        let temp = name.len() > blob.len() && temp_owner(&name[blob.len()..]).is_some();
        if !digits || (name.len() > blob.len() && !temp) {
            continue;
        }
        let Ok(n) = blob.parse::<u64>() else { continue };
        // Tree folders are two digits (the top one more for keys of a
        // million and up), tree files two; flat names six or more.
        let folder = blob.len() == 2 || (depth == 0 && blob.len() > 2);
        if kind.is_dir() && !temp && depth < 2 && folder {
            walk_own_entries(&p, depth + 1, prefix * 100 + n, owned)?;
            // Removed only when nothing of anyone else's is left in it.
            let _ = fs::remove_dir(&p);
            continue;
        }
        let key = if depth == 0 { n } else { prefix * 100 + n };
        let named = match depth {
            0 => blob.len() >= 6,
            _ => depth == 2 && blob.len() == 2,
        };
        if kind.is_file() && named && owned.iter().any(|keys| keys.contains(&key)) {
            fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
        }
    }
    Ok(())
}

impl StoreCore for FilesStore {
    fn info(&self) -> StoreInfo {
        let mut settings = Map::new();
        settings.insert(
            "layout".into(),
            json!(match self.layout {
                FileLayout::Flat => "flat (000001)",
                FileLayout::Tree => "tree (00/00/01)",
            }),
        );
        settings.insert("access".into(), json!(self.access.label()));
        StoreInfo {
            kind: match self.layout {
                FileLayout::Flat => "dir".into(),
                FileLayout::Tree => "tree".into(),
            },
            path: self.root.clone(),
            settings,
            version: None,
        }
    }

    fn describe_writes(&self, options: &SessionOptions) -> String {
        options.write_style.describe(options.fsync).to_string()
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        sync_filesystem(&self.root)?;
        write_manifest(&self.root, manifest)
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        let path = self.root.join(LEDGER_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("cannot read", &path, e)),
        }
    }

    /// After every blob file written is durable (syncfs): the ledger never
    /// names a write a crash could still undo.
    fn write_ledger(&mut self, text: &str) -> Result<()> {
        refuse_read_only(self.access, &self.root)?;
        sync_filesystem(&self.root)?;
        write_atomically(&self.root, LEDGER_FILE, text)
    }

    /// The temporary files (`000042.tmp-PID-N`) of writers no longer
    /// running: a write killed before its rename leaves one, and nothing
    /// else will ever remove it. A running writer's files and anything not
    /// named as blobbench names them stay.
    fn remove_interrupted_writes(&mut self) -> Result<u64> {
        remove_stale_temps(&self.root, 0)
    }

    fn catalog(&mut self) -> Result<Catalog> {
        if let Some(m) = folder_manifest(&self.root) {
            m.require_complete(&self.root.display().to_string())?;
            let first_ok = fs::metadata(self.key_path(m.first_key)).is_ok();
            let last = fs::metadata(self.key_path(m.last_key));
            let last_ok = match (&last, &m.spec) {
                (Ok(md), Some(spec)) => md.len() == spec.size_of(m.last_key) as u64,
                (Ok(_), None) => true,
                _ => false,
            };
            if first_ok && last_ok && m.first_key >= 1 && m.last_key >= m.first_key {
                return Ok(Catalog {
                    first_key: m.first_key,
                    last_key: m.last_key,
                    count: m.count,
                    manifest: Some(m),
                    source: "manifest".into(),
                });
            }
        }
        let keys = self.scan_keys()?;
        let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else {
            return Err(Error::usage(format!(
                "\"{}\" holds no blob files (expected names like 000001{})",
                self.root.display(),
                if self.layout == FileLayout::Tree {
                    " in 00/00/ folders"
                } else {
                    ""
                }
            )));
        };
        if first == 0 {
            first_key_from_one(&self.root, 0)?;
        }
        Ok(Catalog {
            first_key: first,
            last_key: last,
            count: keys.len() as u64,
            manifest: None,
            source: "scan".into(),
        })
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let mut prefix = self.root.to_string_lossy().into_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(Box::new(FilesSession {
            io: FileIo::new(options),
            layout: self.layout,
            prefix_len: prefix.len(),
            path: prefix,
            root: &self.root,
            access: self.access,
            dataset_last: self.dataset_last,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        self.walk()
    }
}

impl Engine for FilesStore {
    fn has_transactions(&self) -> bool {
        false
    }

    /// The files of `keys` only (and the manifest and ledger): a run of 100,000 reads
    /// on a folder of a million files warms 100,000 files, not a million.
    /// Warming every file made a run's preparation grow with the dataset
    /// and, once it took longer than the page cache keeps idle pages
    /// here (about a minute), undo itself: the first files warmed were
    /// evicted again before the first timed read.
    fn cache_control_for(&self, keys: &[u64]) -> Result<CacheControl> {
        let mut files = Vec::with_capacity(keys.len() + 2);
        for own in RECORD_FILES {
            let path = self.root.join(own);
            if path.is_file() {
                files.push(path);
            }
        }
        files.extend(keys.iter().map(|&key| self.key_path(key)));
        Ok(CacheControl::Files(files))
    }
}

impl Space for FilesStore {
    /// The blocks of the root, every folder and every file under it,
    /// summed while walking (no list of a million paths held).
    fn space_used(&self) -> Result<u64> {
        self.space_walk(false)
    }

    /// The walk (a stat per file: about 2 s for a million here) runs while
    /// the filesystem is flushed (syncfs: as long again), not after it.
    /// Exact as the walk after finish: the allocation the walk counts does
    /// not change with the flush (delayed allocation is counted before it
    /// on ext4, xfs and btrfs), and the manifest, replaced by finish, is
    /// left out of the walk and counted once finish has written it.
    fn finish_and_measure(&mut self, manifest: &Manifest) -> Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let store = &*self;
        let (walked, flushed) = std::thread::scope(|scope| {
            let walk = scope.spawn(|| store.space_walk(true));
            let flushed = sync_filesystem(&store.root);
            let walked = walk.join().unwrap_or_else(|_| {
                Err(Error::io(
                    "cannot measure the space of",
                    &store.root,
                    std::io::Error::other("the walk stopped"),
                ))
            });
            (walked, flushed)
        });
        flushed?;
        let walked = walked?;
        self.finish(manifest)?;
        let manifest_file = self.root.join(MANIFEST_FILE);
        let manifest_blocks = fs::symlink_metadata(&manifest_file)
            .map_err(|e| Error::io("cannot stat", &manifest_file, e))?
            .blocks();
        Ok(walked + manifest_blocks * 512)
    }

    /// Every blob file found in the folder, whole (`0..len`).
    fn disk_layout(&mut self) -> Result<Option<DiskLayout>> {
        let mut blobs = Vec::new();
        for key in self.scan_keys()? {
            let file = self.key_path(key);
            let len = fs::metadata(&file)
                .map_err(|e| Error::io("cannot stat", &file, e))?
                .len();
            blobs.push(BlobPlacement {
                key,
                file,
                ranges: whole_file(len),
            });
        }
        Ok(Some(DiskLayout {
            blobs,
            freelist_bytes: 0,
        }))
    }
}

/// The file operations shared by dir, tree and sqlite-ext stores.
pub(crate) struct FileIo {
    pub options: SessionOptions,
    buf: Vec<u8>,
    tmp: String,
}

impl FileIo {
    pub fn new(options: SessionOptions) -> Self {
        FileIo {
            options,
            buf: Vec::new(),
            tmp: String::new(),
        }
    }

    /// open + fstat + read + close, the fewest calls that read a whole
    /// file of unknown size (the one fstat both checks the file is regular
    /// and sizes the read); the bytes stay in our reused buffer.
    /// The sink gets what the file holds when it is read: a writer that
    /// truncates and rewrites it (`--write-style truncate`) may have cut it
    /// since the fstat, and those fewer bytes are what a reader sees
    /// (judged torn by a verifying run), not a failed read.
    pub fn read(
        &mut self,
        path: &str,
        key: u64,
        root: &Path,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        let (mut file, meta) = open_blob_file_with_metadata(path, key, root)?;
        let expected = meta.len() as usize;
        let n = read_up_to(&mut file, &mut self.buf, expected)
            .map_err(|e| Error::io("cannot read", Path::new(path), e))?;
        sink(&self.buf[..n]);
        Ok(())
    }

    /// Rewrites an existing file in the session's write style.
    pub fn update(&mut self, path: &str, key: u64, root: &Path, data: &[u8]) -> Result<()> {
        let p = Path::new(path);
        let fsync = self.options.fsync;
        let not_found = |e: std::io::Error| {
            if e.kind() == ErrorKind::NotFound {
                missing_key(key, root)
            } else {
                Error::io("cannot open", p, e)
            }
        };
        match self.options.write_style {
            WriteStyle::Truncate => {
                let mut f = OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(p)
                    .map_err(not_found)?;
                f.write_all(data)
                    .map_err(|e| Error::io("cannot write", p, e))?;
                if fsync {
                    f.sync_all().map_err(|e| Error::io("cannot fsync", p, e))?;
                }
            }
            WriteStyle::InPlace => {
                let f = OpenOptions::new().write(true).open(p).map_err(not_found)?;
                f.write_all_at(data, 0)
                    .map_err(|e| Error::io("cannot write", p, e))?;
                let old = f
                    .metadata()
                    .map_err(|e| Error::io("cannot stat", p, e))?
                    .len();
                if old > data.len() as u64 {
                    f.set_len(data.len() as u64)
                        .map_err(|e| Error::io("cannot truncate", p, e))?;
                }
                if fsync {
                    f.sync_all().map_err(|e| Error::io("cannot fsync", p, e))?;
                }
            }
            WriteStyle::TempRename => {
                if fs::symlink_metadata(p).is_err() {
                    return Err(missing_key(key, root));
                }
                // Unique per process and write, so that two writers of one
                // key (a server's threads) never share a temporary file.
                self.tmp.clear();
                self.tmp.push_str(path);
                self.tmp.push_str(&temp_suffix());
                let tmp = Path::new(&self.tmp);
                let mut f = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(tmp)
                    .map_err(|e| Error::io("cannot create", tmp, e))?;
                f.write_all(data)
                    .map_err(|e| Error::io("cannot write", tmp, e))?;
                if fsync {
                    f.sync_all()
                        .map_err(|e| Error::io("cannot fsync", tmp, e))?;
                }
                drop(f);
                fs::rename(tmp, p).map_err(|e| Error::io("cannot rename over", p, e))?;
                if fsync {
                    let dir = p.parent().unwrap_or(Path::new("."));
                    File::open(dir)
                        .and_then(|d| d.sync_all())
                        .map_err(|e| Error::io("cannot fsync folder", dir, e))?;
                }
            }
        }
        Ok(())
    }

    /// Creates a new file; refuses to replace an existing one.
    pub fn create(&mut self, path: &str, data: &[u8]) -> Result<()> {
        let p = Path::new(path);
        // Written whole under a temporary name, then linked: a reader never
        // sees the new blob half written (as rename writes promise).
        if self.options.fsync || self.options.write_style == WriteStyle::TempRename {
            return self.create_whole(p, data);
        }
        let open = || OpenOptions::new().write(true).create_new(true).open(p);
        let mut f = match open() {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if let Some(parent) = p.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| Error::io("cannot create folder", parent, e))?;
                }
                open()
            }
            other => other,
        }
        .map_err(|e| Error::io("cannot create", p, e))?;
        f.write_all(data).map_err(|e| {
            // The file is this write's own (create_new): a blob cut short
            // by a full disk must not stay behind as if it were one.
            let _ = fs::remove_file(p);
            Error::io("cannot write", p, e)
        })
    }

    /// A new file that appears whole: a temporary file, linked under its
    /// name only if the name is free. With --fsync the file is flushed
    /// before the link and the folder after it, so the blob is whole or
    /// absent after a crash too.
    fn create_whole(&mut self, p: &Path, data: &[u8]) -> Result<()> {
        let fsync = self.options.fsync;
        let parent = p.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(|e| Error::io("cannot create folder", parent, e))?;
        let mut tmp = p.as_os_str().to_owned();
        tmp.push(temp_suffix());
        let tmp = PathBuf::from(tmp);
        let result = (|| {
            let mut f = File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
            f.write_all(data)
                .map_err(|e| Error::io("cannot write", &tmp, e))?;
            if fsync {
                f.sync_all()
                    .map_err(|e| Error::io("cannot fsync", &tmp, e))?;
            }
            // hard_link fails if the name exists: never replaces a blob.
            fs::hard_link(&tmp, p).map_err(|e| Error::io("cannot create", p, e))
        })();
        let _ = fs::remove_file(&tmp);
        result?;
        if fsync {
            sync_dir(parent)?;
        }
        Ok(())
    }

    pub fn remove(&mut self, path: &str, key: u64, root: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| {
            if e.kind() == ErrorKind::NotFound {
                missing_key(key, root)
            } else {
                Error::io("cannot remove", Path::new(path), e)
            }
        })?;
        if self.options.fsync {
            sync_dir(Path::new(path).parent().unwrap_or(Path::new(".")))?;
        }
        Ok(())
    }
}

/// The suffix of a blob's temporary file: `.tmp-PID-N`, unique per process
/// and write, and telling a later start which process made it.
fn temp_suffix() -> String {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(".tmp-{}-{n}", std::process::id())
}

/// The process that made a blob's temporary file, from its suffix after
/// `.tmp`: "-PID-N" or "-PID"; None for the bare ".tmp" of older versions
/// (no process to ask) and for any other name (not ours).
fn temp_owner(rest: &str) -> Option<Option<u32>> {
    if rest == ".tmp" {
        return Some(None);
    }
    let tail = rest.strip_prefix(".tmp-")?;
    let mut parts = tail.splitn(2, '-');
    let pid = parts.next()?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !parts.next().is_none_or(digits) {
        return None;
    }
    Some(pid.parse().ok())
}

/// Removes the stale temporary files under `dir` (`depth` folders below
/// the root: the tree layout nests two levels of numbered folders).
fn remove_stale_temps(dir: &Path, depth: u32) -> Result<u64> {
    let mut removed = 0;
    for entry in fs::read_dir(dir).map_err(|e| Error::io("cannot list", dir, e))? {
        let entry = entry.map_err(|e| Error::io("cannot list", dir, e))?;
        let (Ok(kind), Some(name)) = (
            entry.file_type(),
            entry.file_name().to_str().map(str::to_owned),
        ) else {
            continue;
        };
        let digits = name.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            continue;
        }
        if kind.is_dir() && digits == name.len() && depth < 2 {
            removed += remove_stale_temps(&entry.path(), depth + 1)?;
        } else if kind.is_file()
            && let Some(owner) = temp_owner(&name[digits..])
            && !owner.is_some_and(process_alive)
        {
            let p = entry.path();
            fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether process `pid` is running (a temporary file it owns may still be
/// being written).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let answered = unsafe { libc::kill(pid, 0) } == 0;
    // EPERM: it exists, owned by someone else.
    answered || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Opens blob `key`'s file for reading; a missing file is a missing key.
/// Only a regular file is a blob: the open does not wait (O_NONBLOCK), so a
/// FIFO or device named like a key is refused at once instead of hanging
/// the reader (and a server's thread) until someone writes to it.
fn open_blob_file(path: &str, key: u64, root: &Path) -> Result<File> {
    open_blob_file_with_metadata(path, key, root).map(|(file, _)| file)
}

/// `open_blob_file`, with the metadata its regular-file check read.
fn open_blob_file_with_metadata(
    path: &str,
    key: u64,
    root: &Path,
) -> Result<(File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(missing_key(key, root)),
        Err(e) => return Err(Error::io("cannot open", Path::new(path), e)),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok((file, m)),
        Ok(_) => Err(Error::usage(format!(
            "{path} is not a regular file: a blob of a files dataset must be one; remove or rename it"
        ))),
        Err(e) => Err(Error::io("cannot stat", Path::new(path), e)),
    }
}

/// Reads into all of `buf` from `offset`, stopping early only at the end
/// of the file; returns the bytes read.
fn fill_at(f: &File, buf: &mut [u8], offset: u64, path: &str) -> Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let n = f
            .read_at(&mut buf[done..], offset + done as u64)
            .map_err(|e| Error::io("cannot read", Path::new(path), e))?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

/// Reads up to `expected` bytes of `file` into `buf` (grown as needed,
/// never shrunk: it is reused); returns how many it read. A file cut by a
/// writer since its size was taken ends early: its bytes are returned as
/// they are, with no error. (Reading no further than the size taken keeps
/// a whole read one read(2), as kvtest's.)
fn read_up_to(file: &mut impl Read, buf: &mut Vec<u8>, expected: usize) -> std::io::Result<usize> {
    if buf.len() < expected {
        buf.resize(expected, 0);
    }
    let mut done = 0;
    while done < expected {
        match file.read(&mut buf[done..expected]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

pub struct FilesSession<'a> {
    io: FileIo,
    layout: FileLayout,
    /// The root with a trailing slash, followed by the current key's name.
    path: String,
    prefix_len: usize,
    root: &'a Path,
    access: Access,
    dataset_last: Option<u64>,
}

/// Refuses a write through a store opened read-only: files carry no
/// read-only mode of their own, so the session says no.
pub(crate) fn refuse_read_only(access: Access, target: &Path) -> Result<()> {
    if access == Access::ReadOnly {
        return Err(Error::usage(format!(
            "{}: opened read-only; this run may not write",
            target.display()
        )));
    }
    Ok(())
}

impl FilesSession<'_> {
    fn locate(&mut self, key: u64) {
        self.path.truncate(self.prefix_len);
        self.layout.push_name(key, &mut self.path);
    }
}

impl SessionCore for FilesSession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.locate(key);
        self.io.read(&self.path, key, self.root, sink)
    }

    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.root)?;
        self.locate(key);
        self.io.update(&self.path, key, self.root, data)
    }

    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        self.locate(key);
        match std::fs::metadata(&self.path) {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("cannot stat", Path::new(&self.path), e)),
        }
    }

    fn read_at(&mut self, key: u64, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.locate(key);
        let f = open_blob_file(&self.path, key, self.root)?;
        fill_at(&f, buf, offset, &self.path)
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        refuse_read_only(self.access, self.root)?;
        if let Some(last) = self.dataset_last {
            journal::name_added_key(self.root, last, key)?;
        }
        self.locate(key);
        self.io.create(&self.path, data)
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        refuse_read_only(self.access, self.root)?;
        self.locate(key);
        self.io.remove(&self.path, key, self.root)
    }

    fn begin(&mut self) -> Result<()> {
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Serving for FilesSession<'_> {
    /// One open: size and tag from its descriptor (fstat), as nginx does.
    fn blob_file(&mut self, key: u64) -> Result<Option<BlobFile>> {
        self.locate(key);
        let (file, meta) = match open_blob_file_with_metadata(&self.path, key, self.root) {
            Ok(opened) => opened,
            Err(Error::MissingKey { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let [size, mtime, ino] = stamp_of(&meta);
        Ok(Some(BlobFile {
            file,
            size,
            etag: fingerprint(&[key, size, mtime, ino]),
            identity: FileIdentity::of(&meta),
        }))
    }

    /// The file's size, modification time and inode, as nginx's ETag.
    fn etag(&mut self, key: u64, _size: u64) -> Result<Option<String>> {
        self.locate(key);
        let [size, mtime, ino] = file_stamp(Path::new(&self.path));
        Ok(Some(fingerprint(&[key, size, mtime, ino])))
    }

    /// One open descriptor for the whole stream: a replacement by rename
    /// (how blobbench and most applications rewrite files) does not reach it.
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        self.locate(key);
        let f = open_blob_file(&self.path, key, self.root)?;
        let path = &self.path;
        stream_pieces(offset, len, piece, sink, |at, buf| {
            fill_at(&f, buf, at, path)
        })
    }
}

impl Snapshots for FilesSession<'_> {}

#[cfg(test)]
mod tests {
    use super::{read_up_to, temp_owner};

    #[test]
    fn temporary_files_are_recognised_by_their_owner() {
        assert_eq!(temp_owner(".tmp"), Some(None));
        assert_eq!(temp_owner(".tmp-42"), Some(Some(42)));
        assert_eq!(temp_owner(".tmp-42-7"), Some(Some(42)));
        for not_ours in [
            ".tmp-",
            ".tmp-x",
            ".tmp-42-",
            ".tmp-42-7-1",
            ".txt",
            "",
            ".tmp~",
        ] {
            assert_eq!(temp_owner(not_ours), None, "{not_ours:?}");
        }
    }

    /// A file cut after its size was taken (a writer truncating it to
    /// rewrite it) is read as it now is: its fewer bytes, no error; one
    /// grown since is read up to the size taken.
    #[test]
    fn a_file_cut_or_grown_after_its_size_was_taken_is_read_as_it_is() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001");
        std::fs::write(&path, [7u8; 1000]).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        let size = file.metadata().unwrap().len() as usize;
        // The writer: O_TRUNC, then the first part of the new content.
        let mut writer = std::fs::File::create(&path).unwrap();
        writer.write_all(&[9u8; 300]).unwrap();
        let mut buf = Vec::new();
        let n = read_up_to(&mut file, &mut buf, size).unwrap();
        assert_eq!(&buf[..n], &[9u8; 300][..]);
        // Grown past the size taken: the first `size` bytes.
        writer.write_all(&[9u8; 900]).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_up_to(&mut file, &mut buf, size).unwrap(), size);
        // An empty file (truncated, nothing written yet): nothing.
        std::fs::File::create(&path).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_up_to(&mut file, &mut buf, size).unwrap(), 0);
    }

    /// The walk that overlaps the flush counts what a walk after finish
    /// counts, manifest included, in both layouts: blobs of several sizes
    /// (one block, several, none) and a manifest longer once completed.
    #[test]
    fn space_measured_while_flushing_is_the_space_after_finishing() {
        use super::{FileLayout, FilesStore};
        use crate::dataset::Manifest;
        use crate::store::contract::{SessionOptions, Space, StoreCore};
        for layout in [FileLayout::Flat, FileLayout::Tree] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("copy");
            let manifest = Manifest::for_keys(1, 300, 300).started();
            let mut store = FilesStore::create(&root, layout, &manifest).unwrap();
            {
                let mut session = store.session(SessionOptions::default()).unwrap();
                for key in 1..=300u64 {
                    let len = [0usize, 1000, 70_000][key as usize % 3];
                    session.insert(key, &vec![key as u8; len]).unwrap();
                }
            }
            let measured = store.finish_and_measure(&manifest.completed()).unwrap();
            let after = store.space_used().unwrap();
            assert_eq!(measured, after, "{layout:?}");
            assert!(
                after > 100 * 70_000,
                "{layout:?}: {after} bytes for 100 files of 70 KB"
            );
        }
    }

    /// The walk split over threads counts every block once: what a plain
    /// recursive walk of the folder counts (du's sum), in both layouts.
    #[test]
    fn space_walked_in_shares_is_a_plain_walks_sum() {
        use super::{FileLayout, FilesStore};
        use crate::dataset::Manifest;
        use crate::store::contract::{SessionOptions, Space, StoreCore};
        use std::os::unix::fs::MetadataExt;
        fn du(p: &std::path::Path) -> u64 {
            let md = std::fs::symlink_metadata(p).unwrap();
            let below: u64 = if md.is_dir() {
                std::fs::read_dir(p)
                    .unwrap()
                    .map(|e| du(&e.unwrap().path()))
                    .sum()
            } else {
                0
            };
            md.blocks() * 512 + below
        }
        for layout in [FileLayout::Flat, FileLayout::Tree] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("copy");
            let manifest = Manifest::for_keys(1, 1234, 300).started();
            let mut store = FilesStore::create(&root, layout, &manifest).unwrap();
            {
                let mut session = store.session(SessionOptions::default()).unwrap();
                for key in 1..=1234u64 {
                    session
                        .insert(key, &vec![1u8; 1 + key as usize * 7])
                        .unwrap();
                }
            }
            store.finish_and_measure(&manifest.completed()).unwrap();
            assert_eq!(store.space_used().unwrap(), du(&root), "{layout:?}");
        }
    }
}
