//! The volume a `suite aging` series runs on. As root: a filesystem of
//! fixed size the suite makes itself (a sparse image file, mkfs, a loop
//! device with direct I/O, a mount), so occupancy is exact and the
//! filesystem is part of the answer; everything it made is unmounted and
//! removed when the [`Volume`] drops, also while unwinding from an error,
//! a panic or a signal ([`super::interrupt`]), and [`remove_stale`] clears
//! what a killed earlier run left. Otherwise: a folder in `--dir` with a
//! stated capacity, occupancy approximate.

mod freefrag;

use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::measure::cache::{Eviction, evict};
use crate::result::aging::{FreeSpace, VolumeInfo};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// How every name the suite makes in a work folder begins; [`remove_stale`]
/// touches nothing else.
const PREFIX: &str = "blobbench-aging-";

/// Volumes made by this process so far: the `<n>` of their names.
static MADE: AtomicU64 = AtomicU64::new(0);

/// A filesystem the suite can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fs {
    /// ext4 (e2fsprogs).
    Ext4,
    /// XFS (xfsprogs).
    Xfs,
    /// Btrfs (btrfs-progs).
    Btrfs,
}

impl Fs {
    /// Every filesystem, in the order the suite runs them.
    pub const ALL: [Fs; 3] = [Fs::Ext4, Fs::Xfs, Fs::Btrfs];

    /// "ext4", "xfs" or "btrfs"; anything else is a usage error naming the
    /// value and the choices.
    pub fn parse(text: &str) -> Result<Fs> {
        match text.trim() {
            "ext4" => Ok(Fs::Ext4),
            "xfs" => Ok(Fs::Xfs),
            "btrfs" => Ok(Fs::Btrfs),
            other => Err(Error::usage(format!(
                "--fs {other:?}: not a filesystem the suite makes; use ext4, xfs or btrfs (comma-separated for several)"
            ))),
        }
    }

    /// Its name, as `--fs` takes it and mount's `-t`.
    pub fn name(self) -> &'static str {
        match self {
            Fs::Ext4 => "ext4",
            Fs::Xfs => "xfs",
            Fs::Btrfs => "btrfs",
        }
    }

    /// The smallest volume its mkfs makes here, bytes. ext4: 8 MiB (below,
    /// mke2fs 1.47 has no room for a journal); xfs: 300 MiB (xfsprogs 6.1
    /// refuses smaller: "Filesystem must be larger than 300MB"); btrfs:
    /// 16 MiB with `--mixed`, which the suite passes up to 1 GiB (without
    /// it btrfs-progs 6.2 wants 109 MiB, and separate data and metadata
    /// chunks run out of space early on a small volume filled high).
    pub fn min_size(self) -> u64 {
        match self {
            Fs::Ext4 => 8 * MIB,
            Fs::Xfs => 300 * MIB,
            Fs::Btrfs => 16 * MIB,
        }
    }

    fn mkfs(self) -> &'static str {
        match self {
            Fs::Ext4 => "mkfs.ext4",
            Fs::Xfs => "mkfs.xfs",
            Fs::Btrfs => "mkfs.btrfs",
        }
    }

    fn package(self) -> &'static str {
        match self {
            Fs::Ext4 => "e2fsprogs",
            Fs::Xfs => "xfsprogs",
            Fs::Btrfs => "btrfs-progs",
        }
    }

    /// Ok when its mkfs is on PATH; else why not and how to install it.
    pub fn check_available(self) -> Result<(), String> {
        if on_path(self.mkfs()) {
            Ok(())
        } else {
            Err(format!(
                "{} not found: apt-get install {}",
                self.mkfs(),
                self.package()
            ))
        }
    }

    /// mkfs's options for a volume of `size` bytes (quiet, forced: the
    /// image is a fresh file). ext4: `-T default` so a small test volume
    /// gets the 4 KiB blocks and inode ratio of a large one rather than
    /// mke2fs's "small" type (1 KiB blocks); inode tables and journal
    /// zeroed now, so no lazy-init thread writes during the measurements.
    fn mkfs_args(self, size: u64) -> Vec<&'static str> {
        match self {
            Fs::Ext4 => vec![
                "-q",
                "-F",
                "-T",
                "default",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
            ],
            Fs::Xfs => vec!["-q", "-f"],
            Fs::Btrfs if size <= GIB => vec!["-q", "-f", "--mixed"],
            Fs::Btrfs => vec!["-q", "-f"],
        }
    }

    /// The mkfs's version line ("mke2fs 1.47.0 (5-Feb-2023)").
    fn version(self) -> Option<String> {
        let flag = if self == Fs::Btrfs { "--version" } else { "-V" };
        let out = Command::new(which(self.mkfs())?).arg(flag).output().ok()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(String::from)
    }
}

/// Space on a volume, bytes, as df counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Used: total minus the filesystem's free blocks (its metadata
    /// included); for a folder, the bytes its files allocate.
    pub used: u64,
    /// Free for an unprivileged writer (f_bavail); for a folder, capacity
    /// minus used.
    pub free: u64,
    /// The filesystem's size (f_blocks); for a folder, its capacity.
    pub total: u64,
}

/// Where a series runs: a filesystem the suite made and mounted, or a
/// folder with a stated capacity. Dropping it removes everything it made.
pub struct Volume {
    inner: Inner,
}

enum Inner {
    Image(Image),
    Dir(DirVolume),
}

/// A loop-mounted image and how far its making got: each field says what
/// exists, so cleanup undoes exactly that, in reverse.
struct Image {
    fs: Fs,
    size: u64,
    image: PathBuf,
    mnt: PathBuf,
    image_made: bool,
    mnt_made: bool,
    device: Option<String>,
    mounted: bool,
    /// Direct I/O on the loop device, or why not.
    direct_io: Result<(), String>,
    mkfs_version: Option<String>,
    /// The work folder's filesystem type, for the description.
    work_fs: String,
}

/// A folder in `--dir`.
struct DirVolume {
    dir: PathBuf,
    capacity: u64,
    made: bool,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure modes.
    unsafe { libc::geteuid() == 0 }
}

/// The executable named `name` in a folder of PATH, or of the sbin
/// folders, where mkfs and losetup live but a user's PATH may not reach.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

fn on_path(name: &str) -> bool {
    which(name).is_some()
}

/// Runs a command; its stdout, or one line naming it and what it said.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(which(program).unwrap_or_else(|| program.into()))
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    Err(format!(
        "{program} {} failed ({}): {said}",
        args.join(" "),
        out.status
    ))
}

/// Binary sizes as the options take them: "64 MiB", "1 GiB".
fn binary(bytes: u64) -> String {
    if bytes >= GIB && bytes.is_multiple_of(GIB) {
        format!("{} GiB", bytes / GIB)
    } else if bytes >= MIB {
        format!("{:.0} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}

fn c_path(path: &Path) -> std::ffi::CString {
    // A path from the OS holds no NUL byte.
    std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// statvfs of `path`, as [`Usage`].
fn statvfs_usage(path: &Path) -> Result<Usage> {
    let c = c_path(path);
    // SAFETY: zeroed plain data filled by statvfs for a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(Error::io(
            "cannot statvfs",
            path,
            std::io::Error::last_os_error(),
        ));
    }
    let frsize = st.f_frsize as u64;
    let total = st.f_blocks as u64 * frsize;
    Ok(Usage {
        used: total.saturating_sub(st.f_bfree as u64 * frsize),
        free: st.f_bavail as u64 * frsize,
        total,
    })
}

/// The name of the next volume this process makes: `<prefix><fs>-<pid>-<n>`.
fn next_name(fs: &str) -> String {
    let n = MADE.fetch_add(1, Ordering::SeqCst);
    format!("{PREFIX}{fs}-{}-{n}", std::process::id())
}

impl Volume {
    /// Makes a `size`-byte filesystem `fs` in the folder `work` and mounts
    /// it there; root only. A step that fails undoes the ones before it.
    pub fn make(fs: Fs, size: u64, work: &Path) -> Result<Volume> {
        if !is_root() {
            return Err(Error::usage(format!(
                "making an {} volume needs root (mkfs, losetup, mount): run as root, or give --dir FOLDER with --capacity SIZE to age a folder instead (occupancy then approximate)",
                fs.name()
            )));
        }
        fs.check_available().map_err(Error::usage)?;
        if size < fs.min_size() {
            return Err(Error::usage(format!(
                "--volume-size {}: below {}'s minimum of {} ({} refuses smaller); give a larger --volume-size or leave {} out of --fs",
                binary(size),
                fs.name(),
                binary(fs.min_size()),
                fs.mkfs(),
                fs.name()
            )));
        }
        let work = std::fs::canonicalize(work).map_err(|e| Error::io("cannot open", work, e))?;
        let room = crate::measure::space::free_bytes(&work).unwrap_or(0);
        if room < size {
            return Err(Error::usage(format!(
                "--volume-size {} does not fit in {}: its image can grow to that size and {} are free there; give a smaller --volume-size or a --dir on a larger disk",
                binary(size),
                work.display(),
                binary(room)
            )));
        }
        let name = next_name(fs.name());
        let mut image = Image {
            fs,
            size,
            image: work.join(format!("{name}.img")),
            mnt: work.join(format!("{name}.mnt")),
            image_made: false,
            mnt_made: false,
            device: None,
            mounted: false,
            direct_io: Ok(()),
            mkfs_version: fs.version(),
            work_fs: crate::measure::environment::filesystem_of(&work)
                .map(|f| f.fs_type)
                .unwrap_or_else(|| "unknown filesystem".into()),
        };
        // A Ctrl-C reaches mkfs too (same process group): then the failure
        // is the interruption, not mkfs's.
        image.build().map_err(|e| match super::interrupt::check() {
            Err(interrupted) => interrupted,
            Ok(()) => Error::io(
                "cannot make the aging volume",
                &image.image,
                std::io::Error::other(e),
            ),
        })?;
        Ok(Volume {
            inner: Inner::Image(image),
        })
    }

    /// A folder the suite makes (and removes) in `path`, for a run without
    /// root: occupancy is the bytes the suite's files allocate over
    /// `capacity`, approximate (other files share the filesystem). Refuses
    /// a capacity larger than the free space there.
    pub fn in_dir(path: &Path, capacity: u64) -> Result<Volume> {
        if capacity == 0 {
            return Err(Error::usage(
                "--capacity 0: give the room the suite may fill in --dir, e.g. --capacity 1GiB",
            ));
        }
        std::fs::create_dir_all(path).map_err(|e| Error::io("cannot create", path, e))?;
        let path = std::fs::canonicalize(path).map_err(|e| Error::io("cannot open", path, e))?;
        let free = crate::measure::space::free_bytes(&path).unwrap_or(0);
        if capacity > free {
            return Err(Error::usage(format!(
                "--capacity {} is more than the {} free in {}: give a smaller --capacity or a --dir on a larger disk",
                binary(capacity),
                binary(free),
                path.display()
            )));
        }
        let dir = path.join(format!("{}.dir", next_name("dir")));
        std::fs::create_dir(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
        Ok(Volume {
            inner: Inner::Dir(DirVolume {
                dir,
                capacity,
                made: true,
            }),
        })
    }

    /// Where the layout's files go: the mounted filesystem's root, or the
    /// folder.
    pub fn root(&self) -> &Path {
        match &self.inner {
            Inner::Image(i) => &i.mnt,
            Inner::Dir(d) => &d.dir,
        }
    }

    /// What the result records about the volume: how it was made, in words
    /// a reader can repeat, and what the filesystem says about itself.
    pub fn info(&self) -> VolumeInfo {
        let mount = crate::measure::environment::filesystem_of(self.root());
        let options = mount.as_ref().map(|m| m.mount_options.clone());
        match &self.inner {
            Inner::Image(i) => VolumeInfo {
                fs: i.fs.name().into(),
                exact: true,
                size_bytes: i.size,
                fs_bytes: self.usage().map(|u| u.total).unwrap_or(0),
                how: i.how(),
                mkfs_version: i.mkfs_version.clone(),
                mount_options: options.filter(|_| {
                    mount
                        .as_ref()
                        .is_some_and(|m| Path::new(&m.mount_point) == i.mnt)
                }),
            },
            Inner::Dir(d) => {
                let fs = mount.as_ref().map(|m| m.fs_type.clone());
                VolumeInfo {
                    fs: fs.clone().unwrap_or_else(|| "unknown".into()),
                    exact: false,
                    size_bytes: d.capacity,
                    fs_bytes: d.capacity,
                    how: format!(
                        "a folder {} on {} (not root, or --dir given): occupancy is the bytes the suite's files allocate (as du counts) over --capacity {}, approximate: other files share that filesystem and its own metadata is not counted",
                        d.dir.display(),
                        fs.as_deref().unwrap_or("an unknown filesystem"),
                        binary(d.capacity)
                    ),
                    mkfs_version: None,
                    mount_options: options,
                }
            }
        }
    }

    /// Used, free and total bytes: statvfs as df counts them, or for a
    /// folder its allocated bytes against the capacity.
    pub fn usage(&self) -> Result<Usage> {
        match &self.inner {
            Inner::Image(i) => statvfs_usage(&i.mnt),
            Inner::Dir(d) => {
                let (_, used) = walk(&d.dir)?;
                Ok(Usage {
                    used,
                    free: d.capacity.saturating_sub(used),
                    total: d.capacity,
                })
            }
        }
    }

    /// Used over total, 0 to 1 (a folder over its capacity can exceed 1).
    pub fn occupancy(&self) -> Result<f64> {
        let u = self.usage()?;
        Ok(if u.total == 0 {
            0.0
        } else {
            u.used as f64 / u.total as f64
        })
    }

    /// Flushes everything written on the volume's filesystem (syncfs).
    pub fn sync(&self) -> Result<()> {
        let root = self.root();
        let dir = std::fs::File::open(root).map_err(|e| Error::io("cannot open", root, e))?;
        // SAFETY: syncfs only reads the descriptor, which `dir` keeps open.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(Error::io(
                "cannot sync",
                root,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(())
    }

    /// Free space in pieces: ext4 from e2freefrag, xfs from xfs_spaceman's
    /// freesp (both read the mounted filesystem's own maps through the
    /// GETFSMAP ioctl, so they see what it just wrote; xfs_db on the device
    /// would read stale metadata not yet checkpointed). None for btrfs, a
    /// folder, or a tool that failed.
    pub fn free_space(&self) -> Option<FreeSpace> {
        let Inner::Image(i) = &self.inner else {
            return None;
        };
        self.sync().ok()?;
        match i.fs {
            Fs::Ext4 => {
                let out = run("e2freefrag", &[i.device.as_deref()?]).ok()?;
                freefrag::parse_e2freefrag(&out)
            }
            Fs::Xfs => {
                let out = run(
                    "xfs_spaceman",
                    &["-c", "freesp -s", &i.mnt.to_string_lossy()],
                )
                .ok()?;
                let block = statvfs_block(&i.mnt)?;
                freefrag::parse_xfs_freesp(&out, block)
            }
            Fs::Btrfs => None,
        }
    }

    /// Empties the caches before a cold read: syncs the volume, then as
    /// root drops the whole machine's page cache, dentries and inodes
    /// (measure::cache::evict); otherwise evicts the volume's files one by
    /// one. Returns what was done, in words.
    pub fn drop_caches(&self) -> Result<String> {
        self.sync()?;
        let (files, _) = walk(self.root())?;
        let action = evict(&files, Eviction::Machine)?;
        Ok(format!("syncfs on the volume, then {}", action.method))
    }

    /// Unmounts and removes what [`Volume::make`] or [`Volume::in_dir`]
    /// made, returning what could not be removed (and how to remove it)
    /// instead of printing it as `Drop` does.
    pub fn close(mut self) -> Result<()> {
        let (path, outcome) = match &mut self.inner {
            Inner::Image(i) => (i.image.clone(), i.cleanup()),
            Inner::Dir(d) => (d.dir.clone(), d.cleanup()),
        };
        outcome.map_err(|e| {
            Error::io(
                "cannot remove the aging volume",
                &path,
                std::io::Error::other(e),
            )
        })
    }
}

/// The block size of the filesystem at `path`.
fn statvfs_block(path: &Path) -> Option<u64> {
    let c = c_path(path);
    // SAFETY: as in statvfs_usage.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then_some(st.f_frsize as u64)
}

/// Every file below `root` and the bytes everything below it allocates
/// (files, folders, symlinks not followed), as du counts.
fn walk(root: &Path) -> Result<(Vec<PathBuf>, u64)> {
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io("cannot list", &dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("cannot list", &dir, e))?;
            let path = entry.path();
            let md = match std::fs::symlink_metadata(&path) {
                Ok(md) => md,
                // Removed while walking (a journal closing): nothing to count.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("cannot stat", &path, e)),
            };
            bytes += md.blocks() * 512;
            if md.is_dir() {
                todo.push(path);
            } else if md.is_file() {
                files.push(path);
            }
        }
    }
    Ok((files, bytes))
}

impl Image {
    /// mkfs on a new sparse image, a loop device, a mount; each step
    /// recorded as done so a failure's cleanup undoes just those.
    fn build(&mut self) -> Result<(), String> {
        let file = std::fs::File::create_new(&self.image)
            .map_err(|e| format!("cannot create {}: {e}", self.image.display()))?;
        self.image_made = true;
        file.set_len(self.size)
            .map_err(|e| format!("cannot size {}: {e}", self.image.display()))?;
        drop(file);
        let image = self.image.to_string_lossy().into_owned();
        let mut args = self.fs.mkfs_args(self.size);
        args.push(&image);
        run(self.fs.mkfs(), &args)?;
        let (device, direct_io) = attach(&self.image)?;
        self.device = Some(device.clone());
        self.direct_io = direct_io;
        std::fs::create_dir(&self.mnt)
            .map_err(|e| format!("cannot create {}: {e}", self.mnt.display()))?;
        self.mnt_made = true;
        let mnt = self.mnt.to_string_lossy().into_owned();
        run(
            "mount",
            &["-t", self.fs.name(), "-o", "noatime", &device, &mnt],
        )?;
        self.mounted = true;
        Ok(())
    }

    /// "mkfs.ext4 -q -F ... on a 64 MiB sparse image file in ext4,
    /// losetup --direct-io=on, mount -o noatime".
    fn how(&self) -> String {
        let mkfs = format!(
            "{} {}",
            self.fs.mkfs(),
            self.fs.mkfs_args(self.size).join(" ")
        );
        let dio = match &self.direct_io {
            Ok(()) => {
                "losetup --direct-io=on (the host's page cache keeps no second copy of the volume)"
                    .to_string()
            }
            Err(why) => format!(
                "losetup without direct I/O ({why}; the host's page cache also holds the image's pages, emptied with the rest by drop_caches)"
            ),
        };
        format!(
            "{mkfs} on a {} sparse image file in {} ({}), {dio}, mount -t {} -o noatime",
            binary(self.size),
            self.image.parent().unwrap_or(Path::new("/")).display(),
            self.work_fs,
            self.fs.name()
        )
    }

    /// Unmounts, detaches, removes the mount folder and the image: each
    /// step once, so calling it again after success does nothing. On a
    /// failure, one line naming what is left and the commands that remove
    /// it.
    fn cleanup(&mut self) -> Result<(), String> {
        if self.mounted {
            unmount(&self.mnt).map_err(|e| self.leftover(&e))?;
            self.mounted = false;
        }
        if let Some(device) = &self.device {
            detach(device).map_err(|e| self.leftover(&e))?;
            self.device = None;
        }
        if self.mnt_made {
            remove(std::fs::remove_dir(&self.mnt), &self.mnt).map_err(|e| self.leftover(&e))?;
            self.mnt_made = false;
        }
        if self.image_made {
            remove(std::fs::remove_file(&self.image), &self.image)
                .map_err(|e| self.leftover(&e))?;
            self.image_made = false;
        }
        Ok(())
    }

    /// "umount failed (...); left: ...; remove with: umount X && ...".
    fn leftover(&self, failure: &str) -> String {
        let mut left = Vec::new();
        let mut commands = Vec::new();
        if self.mounted {
            left.push(format!("{} mounted", self.mnt.display()));
            commands.push(format!("umount {}", self.mnt.display()));
        }
        if let Some(device) = &self.device {
            left.push(format!("loop device {device}"));
            commands.push(format!("losetup -d {device}"));
        }
        if self.mnt_made {
            left.push(format!("folder {}", self.mnt.display()));
            commands.push(format!("rmdir {}", self.mnt.display()));
        }
        if self.image_made {
            left.push(format!("image {}", self.image.display()));
            commands.push(format!("rm {}", self.image.display()));
        }
        format!(
            "{failure}; left: {}; remove with: {}",
            left.join(", "),
            commands.join(" && ")
        )
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        if let Err(e) = self.cleanup() {
            eprintln!("blobbench: cannot remove the aging volume: {e}");
        }
    }
}

impl DirVolume {
    fn cleanup(&mut self) -> Result<(), String> {
        if self.made {
            remove(std::fs::remove_dir_all(&self.dir), &self.dir).map_err(|e| {
                format!(
                    "{e}; left: folder {0}; remove with: rm -r {0}",
                    self.dir.display()
                )
            })?;
            self.made = false;
        }
        Ok(())
    }
}

impl Drop for DirVolume {
    fn drop(&mut self) {
        if let Err(e) = self.cleanup() {
            eprintln!("blobbench: cannot remove the aging folder: {e}");
        }
    }
}

/// A removal's outcome, where already gone counts as done.
fn remove(outcome: std::io::Result<()>, path: &Path) -> Result<(), String> {
    match outcome {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Attaches `image` to a free loop device, with direct I/O if the kernel
/// and the image's filesystem allow it (then the host's page cache holds
/// no second copy of the volume's data); the device, and whether direct
/// I/O is on as the device itself reports it (or why not).
fn attach(image: &Path) -> Result<(String, Result<(), String>), String> {
    let path = image.to_string_lossy().into_owned();
    let device = match run("losetup", &["--find", "--show", "--direct-io=on", &path]) {
        Ok(out) => out.trim().to_string(),
        // A refusal may come after the device was attached: use it then.
        Err(refused) => match loop_devices().into_iter().find(|l| l.backing == image) {
            Some(l) => l.device,
            None => run("losetup", &["--find", "--show", &path])
                .map_err(|e| format!("{e} (and with --direct-io=on: {refused})"))?
                .trim()
                .to_string(),
        },
    };
    let dio = std::fs::read_to_string(sys_loop(&device).join("dio")).unwrap_or_default();
    let direct_io = if dio.trim() == "1" {
        Ok(())
    } else {
        Err("the loop device refused --direct-io=on".to_string())
    };
    Ok((device, direct_io))
}

/// /sys/block/loopN/loop for the device /dev/loopN.
fn sys_loop(device: &str) -> PathBuf {
    let name = device.rsplit('/').next().unwrap_or(device);
    Path::new("/sys/block").join(name).join("loop")
}

/// An attached loop device and its backing file.
struct LoopDevice {
    device: String,
    /// The backing file's path (as when attached).
    backing: PathBuf,
}

/// Every attached loop device, from /sys/block/loop*/loop/backing_file
/// (" (deleted)" stripped: an image removed while attached).
fn loop_devices() -> Vec<LoopDevice> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let backing = backing.trim_end_matches('\n');
            let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
            Some(LoopDevice {
                device: format!("/dev/{name}"),
                backing: PathBuf::from(backing),
            })
        })
        .collect()
}

/// A mount point as /proc/self/mounts writes it: space, tab, newline and
/// backslash octal-escaped.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// (source, mount point) of every mount.
fn mounts() -> Vec<(String, PathBuf)> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let source = unescape(f.next()?);
            Some((source, PathBuf::from(unescape(f.next()?))))
        })
        .collect()
}

/// Unmounts `mnt`, retrying while it is busy (a file still closing);
/// still busy after two seconds (a file of this process held open), it is
/// detached lazily (MNT_DETACH): gone from every path now, released by the
/// kernel when the last file in it closes (at the latest when the process
/// exits), and the loop device, detached after it, goes with it.
fn unmount(mnt: &Path) -> Result<(), String> {
    let c = c_path(mnt);
    for attempt in 0.. {
        // SAFETY: c is a NUL-terminated path.
        if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // Not a mount point (any more): nothing to undo.
            Some(libc::EINVAL) | Some(libc::ENOENT) => return Ok(()),
            Some(libc::EBUSY) if attempt < 20 => std::thread::sleep(Duration::from_millis(100)),
            Some(libc::EBUSY) => break,
            _ => return Err(format!("cannot unmount {}: {e}", mnt.display())),
        }
    }
    // SAFETY: as above.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(format!("cannot unmount {}: {e}", mnt.display()))
}

/// Detaches a loop device (a device still open is detached when it is
/// last closed: the kernel's autoclear).
fn detach(device: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..5 {
        match run("losetup", &["-d", device]) {
            Ok(_) => return Ok(()),
            // Detached already (by autoclear): nothing to undo.
            Err(_) if !sys_loop(device).join("backing_file").exists() => return Ok(()),
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(last)
}

/// A name this module gives, split: (pid, suffix) of
/// `blobbench-aging-<fs>-<pid>-<n>.<img|mnt|dir>`, fs one of ext4, xfs,
/// btrfs, dir.
fn parse_name(name: &str) -> Option<(u32, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (stem, suffix) = rest.rsplit_once('.')?;
    if !matches!(suffix, "img" | "mnt" | "dir") {
        return None;
    }
    let mut parts = stem.split('-');
    let fs = parts.next()?;
    let pid = parts.next()?;
    let n = parts.next()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ours = matches!(fs, "ext4" | "xfs" | "btrfs" | "dir")
        && digits(pid)
        && digits(n)
        && parts.next().is_none()
        && (suffix == "dir") == (fs == "dir");
    ours.then_some((pid.parse().ok()?, suffix))
}

/// Whether `pid` names a running process (one of another user counts).
fn running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() != libc::ESRCH }
}

/// The suffix of `path` if it is a name of this module in `work` left by a
/// process no longer running.
fn stale<'a>(path: &'a Path, work: &Path) -> Option<&'a str> {
    if path.parent() != Some(work) {
        return None;
    }
    let (pid, suffix) = parse_name(path.file_name()?.to_str()?)?;
    (!running(pid)).then_some(suffix)
}

/// Removes the volumes a killed earlier run left in `work` (named as this
/// module names them, by a process no longer running): unmounts them,
/// detaches their loop devices, removes their folders and images. Nothing
/// named otherwise is touched. One line per thing removed, or not removed
/// and why.
pub fn remove_stale(work: &Path) -> Vec<String> {
    let Ok(work) = std::fs::canonicalize(work) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for (source, mnt) in mounts() {
        if stale(&mnt, &work) == Some("mnt") {
            said.push(match unmount(&mnt) {
                Ok(()) => format!(
                    "unmounted {} ({source}), left by a run no longer running",
                    mnt.display()
                ),
                Err(e) => e,
            });
        }
    }
    let mounted: Vec<String> = mounts().into_iter().map(|(s, _)| s).collect();
    for l in loop_devices() {
        if stale(&l.backing, &work) == Some("img") && !mounted.contains(&l.device) {
            said.push(match detach(&l.device) {
                Ok(()) => format!("detached {} ({})", l.device, l.backing.display()),
                Err(e) => e,
            });
        }
    }
    let Ok(entries) = std::fs::read_dir(&work) else {
        return said;
    };
    let attached: Vec<PathBuf> = loop_devices().into_iter().map(|l| l.backing).collect();
    for path in entries.flatten().map(|e| e.path()) {
        let outcome = match stale(&path, &work) {
            // remove_dir: a folder still mounted, or holding files, stays.
            Some("mnt") => std::fs::remove_dir(&path),
            Some("img") if !attached.contains(&path) => std::fs::remove_file(&path),
            Some("dir") => std::fs::remove_dir_all(&path),
            _ => continue,
        };
        said.push(match outcome {
            Ok(()) => format!("removed {}", path.display()),
            Err(e) => format!("cannot remove {}: {e}", path.display()),
        });
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fs_parses_its_three_names_and_names_the_choices_otherwise() {
        for fs in Fs::ALL {
            assert_eq!(Fs::parse(fs.name()).unwrap(), fs);
            assert!(fs.min_size() >= 8 * MIB);
        }
        let e = Fs::parse("zfs").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.contains("\"zfs\"") && text.contains("ext4, xfs or btrfs"),
            "{text}"
        );
        assert_eq!(Fs::Xfs.min_size(), 300 * MIB);
        assert!(Fs::Btrfs.mkfs_args(64 * MIB).contains(&"--mixed"));
        assert!(!Fs::Btrfs.mkfs_args(4 * GIB).contains(&"--mixed"));
    }

    #[test]
    fn only_this_modules_names_are_parsed() {
        assert_eq!(
            parse_name("blobbench-aging-ext4-123-0.img"),
            Some((123, "img"))
        );
        assert_eq!(parse_name("blobbench-aging-xfs-9-12.mnt"), Some((9, "mnt")));
        assert_eq!(parse_name("blobbench-aging-dir-9-1.dir"), Some((9, "dir")));
        for other in [
            "blobbench-aging-ext4-123-0.img.bak",
            "blobbench-aging-ext4-123.img",
            "blobbench-aging-zfs-123-0.img",
            "blobbench-aging-ext4-12a-0.img",
            "blobbench-aging-ext4-1-0-2.img",
            "blobbench-aging-dir-1-0.img",
            "blobbench-aging-ext4-1-0.dir",
            "blobbench-aging-ext4--0.mnt",
            "my-blobbench-aging-ext4-1-0.img",
        ] {
            assert_eq!(parse_name(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_runs_and_a_reaped_child_does_not() {
        assert!(running(std::process::id()));
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!running(pid));
    }

    #[test]
    fn a_folder_volume_counts_allocated_bytes_against_its_capacity() {
        let work = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let free = crate::measure::space::free_bytes(work.path()).unwrap();
        let e = Volume::in_dir(work.path(), free + GIB).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--capacity"), "{e}");
        let v = Volume::in_dir(work.path(), 10 * MIB).unwrap();
        let root = v.root().to_path_buf();
        assert!(root.starts_with(std::fs::canonicalize(work.path()).unwrap()));
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a"), vec![1u8; 1 << 20]).unwrap();
        v.sync().unwrap();
        let u = v.usage().unwrap();
        assert!(u.used >= 1 << 20 && u.used < 2 << 20, "{u:?}");
        assert_eq!((u.total, u.free), (10 * MIB, 10 * MIB - u.used));
        let occ = v.occupancy().unwrap();
        assert!((0.1..0.2).contains(&occ), "{occ}");
        let info = v.info();
        assert!(!info.exact && info.how.contains("approximate"), "{info:?}");
        assert_eq!(info.size_bytes, 10 * MIB);
        assert!(v.free_space().is_none());
        v.close().unwrap();
        assert!(!root.exists());
    }
}
