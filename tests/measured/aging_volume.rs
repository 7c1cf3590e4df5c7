//! The volumes of `suite aging` on the real thing: loop-mounted ext4, xfs
//! and btrfs images made, measured and removed (also when a panic or a
//! signal unwinds through them), stale volumes of a killed run cleared
//! without touching anything else, and FIEMAP fragment counts that can be
//! seen to rise on a nearly full volume. Needs root (CI runs as root):
//! without it every test fails saying so, rather than passing unchecked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::common::{PATIENCE, dead_pid, default_signals, output};

use blobbench::measure::fragments;
use blobbench::suite::aging::interrupt;
use blobbench::suite::aging::volume::{Fs, Volume, remove_stale};

const MIB: u64 = 1 << 20;

fn need_root() {
    // SAFETY: geteuid has no failure modes.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "the aging volume tests need root (mkfs, losetup, mount): run them as root, as CI does (scripts/test.sh)"
    );
}

fn work() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// The size the tests use: 64 MiB, or the filesystem's minimum if larger
/// (xfs: 300 MiB; the image is sparse, so it costs little disk).
fn size_for(fs: Fs) -> u64 {
    fs.min_size().max(64 * MIB)
}

fn proc_mounts() -> String {
    std::fs::read_to_string("/proc/self/mounts").unwrap()
}

fn losetup_all() -> String {
    let out = output(Command::new("losetup").arg("-a").stdin(Stdio::null()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The mount folder and image of a volume rooted at `root`.
fn paths(root: &Path) -> (PathBuf, PathBuf) {
    (root.to_path_buf(), root.with_extension("img"))
}

/// Nothing of the volume is left: not mounted, no loop device on its
/// image, neither its folder nor its image on disk.
fn assert_gone(mnt: &Path, image: &Path) {
    let (mnt_s, image_s) = (mnt.to_string_lossy(), image.to_string_lossy());
    assert!(!proc_mounts().contains(&*mnt_s), "{mnt_s} still mounted");
    // `losetup -d` on a device another program has open for a moment
    // (udev's probe, a concurrent `losetup -a`) succeeds and leaves the
    // detach to the kernel at its last close (autoclear): let udev finish
    // its work on the device, then wait for that last close. A device
    // still attached after PATIENCE is one nothing will ever let go.
    if let Ok(mut settle) = Command::new("udevadm")
        .args(["settle", "--timeout=60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        crate::common::wait_bounded(&mut settle);
    }
    let attached = || losetup_all().contains(&*image_s);
    let start = Instant::now();
    while attached() {
        assert!(
            start.elapsed() < PATIENCE,
            "{image_s} still attached after {PATIENCE:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!mnt.exists(), "{mnt_s} left");
    assert!(!image.exists(), "{image_s} left");
}

/// Writes `bytes` of a non-repeating pattern to `path` and syncs it.
fn write_file(path: &Path, bytes: usize) {
    let data: Vec<u8> = (0..bytes).map(|i| (i * 31 % 251) as u8).collect();
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&data).unwrap();
    f.sync_all().unwrap();
}

fn made_measured_and_removed(fs: Fs) {
    need_root();
    fs.check_available().unwrap();
    let dir = work();
    let size = size_for(fs);
    let v = Volume::make(fs, size, dir.path()).unwrap();
    let (mnt, image) = paths(v.root());
    assert!(image.is_file() && proc_mounts().contains(&*mnt.to_string_lossy()));
    let before = v.usage().unwrap();
    write_file(&v.root().join("blob"), 4 << 20);
    v.sync().unwrap();
    let u = v.usage().unwrap();
    assert!(u.total > size / 2 && u.total <= size, "{fs:?} {u:?}");
    assert!(
        u.used >= before.used + (4 << 20),
        "{fs:?} {before:?} -> {u:?}"
    );
    assert!(u.free < u.total - u.used + MIB, "{fs:?} {u:?}");
    let occupancy = v.occupancy().unwrap();
    assert!((occupancy - u.used as f64 / u.total as f64).abs() < 0.01);
    let info = v.info();
    assert_eq!((info.fs.as_str(), info.exact), (fs.name(), true));
    assert_eq!((info.size_bytes, info.fs_bytes), (size, u.total));
    assert!(
        info.how.contains(&format!("mkfs.{}", fs.name())),
        "{}",
        info.how
    );
    assert!(info.how.contains("noatime"), "{}", info.how);
    assert!(info.mkfs_version.is_some(), "{info:?}");
    assert!(info.mount_options.as_deref().unwrap().contains("noatime"));
    match (fs, v.free_space()) {
        (Fs::Btrfs, free) => assert_eq!(free, None),
        (_, Some(free)) => {
            assert!(free.extents >= 1, "{fs:?} {free:?}");
            let total = free.extents * free.mean_extent_bytes;
            // The free extents hold what statvfs calls free, near enough
            // (ext4 keeps its reserved blocks in them).
            assert!(
                total >= u.free / 2 && total <= u.total,
                "{fs:?} {free:?} {u:?}"
            );
            assert!(free.share_in_1mib_or_more.unwrap() > 0.5, "{free:?}");
        }
        (_, None) => panic!("{fs:?} tells its free space"),
    }
    let cold = v.drop_caches().unwrap();
    assert!(cold.contains("drop_caches"), "{cold}");
    v.close().unwrap();
    assert_gone(&mnt, &image);
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn ext4_is_made_measured_and_removed() {
    made_measured_and_removed(Fs::Ext4);
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn xfs_is_made_measured_and_removed() {
    made_measured_and_removed(Fs::Xfs);
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn btrfs_is_made_measured_and_removed() {
    made_measured_and_removed(Fs::Btrfs);
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn too_small_a_volume_is_refused_before_anything_is_made() {
    need_root();
    let dir = work();
    let e = Volume::make(Fs::Xfs, 64 * MIB, dir.path()).err().unwrap();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("300 MiB"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn a_volume_dropped_by_a_panic_is_unmounted_and_removed() {
    need_root();
    let dir = work();
    let mut seen = None;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let v = Volume::make(Fs::Ext4, 64 * MIB, dir.path()).unwrap();
        seen = Some(paths(v.root()));
        write_file(&v.root().join("blob"), 1 << 20);
        panic!("a failing test while the volume is mounted");
    }));
    assert!(outcome.is_err());
    let (mnt, image) = seen.unwrap();
    assert_gone(&mnt, &image);
}

/// What the suite does between steps, holding its volume.
fn age_until_interrupted(
    work: &Path,
    seen: &mut Option<(PathBuf, PathBuf)>,
) -> blobbench::error::Result<()> {
    // A file of the volume still open when the volume drops (declared
    // first, so dropped last): unmounting must cope.
    let mut _held = None;
    let v = Volume::make(Fs::Ext4, 64 * MIB, work)?;
    *seen = Some(paths(v.root()));
    // The parent test reads where the volume was from this line.
    println!(
        "volume: {}\t{}",
        v.root().display(),
        v.root().with_extension("img").display()
    );
    _held = Some(std::fs::File::create(v.root().join("open")).unwrap());
    for step in 0.. {
        interrupt::check()?;
        write_file(&v.root().join(format!("b{step}")), 64 << 10);
        if step == 3 {
            // SAFETY: raise sends SIGINT to this thread; the guard's handler
            // records it (the signal is at its default when the child
            // starts, so the guard catches it rather than finding it
            // ignored).
            unsafe { libc::raise(libc::SIGINT) };
        }
    }
    unreachable!()
}

/// Set in the child process [`ctrl_c_unwinds_through_the_volume_and_exits_130`]
/// starts: the folder to age a volume in.
const CHILD_WORK: &str = "BLOBBENCH_TEST_INTERRUPT_CHILD_WORK";

/// The suite's Ctrl-C handling installs signal handlers for the whole
/// process and the test raises SIGINT: done in a process of its own (this
/// test binary again, running only this test), so the handlers and the
/// signal never touch the test process, where other tests run at once and
/// the signals may have been ignored from the start (a background job).
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn ctrl_c_unwinds_through_the_volume_and_exits_130() {
    need_root();
    if let Some(work) = std::env::var_os(CHILD_WORK) {
        let guard = interrupt::install();
        let mut seen = None;
        let e = age_until_interrupted(Path::new(&work), &mut seen).unwrap_err();
        drop(guard);
        assert_eq!(e.exit_code(), 130, "{e}");
        assert!(e.to_string().starts_with("interrupted (SIGINT"), "{e}");
        return;
    }
    let dir = work();
    // The test's name as the harness lists it: this module's path without
    // the crate's.
    let name = format!(
        "{}::ctrl_c_unwinds_through_the_volume_and_exits_130",
        module_path!()
            .split_once("::")
            .map_or(module_path!(), |p| p.1)
    );
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", &name, "--include-ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD_WORK, dir.path())
        .stdin(Stdio::null());
    let out = output(default_signals(&mut child));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the test ran: {stdout}");
    let (mnt, image) = stdout
        .lines()
        .find_map(|l| l.split_once("volume: ").map(|(_, rest)| rest))
        .and_then(|l| l.split_once('\t'))
        .unwrap_or_else(|| panic!("no volume line: {stdout}"));
    assert_gone(Path::new(mnt), Path::new(image));
}

fn sh(program: &str, args: &[&str]) -> String {
    let out = output(Command::new(program).args(args).stdin(Stdio::null()));
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn stale_volumes_of_a_dead_run_are_removed_and_nothing_else() {
    need_root();
    let dir = work();
    let work = std::fs::canonicalize(dir.path()).unwrap();
    // A volume as a killed run leaves it: mounted, attached, named by a
    // pid no longer running.
    let stem = format!("blobbench-aging-ext4-{}-0", dead_pid());
    let (image, mnt) = (
        work.join(format!("{stem}.img")),
        work.join(format!("{stem}.mnt")),
    );
    std::fs::File::create(&image)
        .unwrap()
        .set_len(16 * MIB)
        .unwrap();
    let image_s = image.to_string_lossy().into_owned();
    sh("mkfs.ext4", &["-q", "-F", &image_s]);
    let device = sh("losetup", &["--find", "--show", &image_s]);
    std::fs::create_dir(&mnt).unwrap();
    sh("mount", &[&device, &mnt.to_string_lossy()]);
    // And what must stay: our own run's name, other names.
    let alive = work.join(format!(
        "blobbench-aging-ext4-{}-77.img",
        std::process::id()
    ));
    let others = [
        "other.img",
        "blobbench-aging-ext4-x-0.img",
        "blobbench-aging-ext4-1-0.img.keep",
    ];
    for name in others {
        std::fs::write(work.join(name), b"keep").unwrap();
    }
    std::fs::write(&alive, b"keep").unwrap();
    let said = remove_stale(&work);
    assert_gone(&mnt, &image);
    assert!(said.len() >= 3, "{said:?}");
    assert!(said.iter().any(|l| l.contains("unmounted")), "{said:?}");
    assert!(said.iter().all(|l| !l.contains("cannot")), "{said:?}");
    assert!(alive.exists());
    for name in others {
        assert!(work.join(name).exists(), "{name} removed");
    }
}

/// The check that fragments are counted: on a 64 MiB ext4 filled
/// to about 95%, a file written in many small appends, each synced and
/// interleaved with another file's, lands in more than one piece.
#[test]
#[ignore = "measured tier: run scripts/test.sh --measured"]
fn small_interleaved_appends_on_a_nearly_full_volume_fragment() {
    need_root();
    let dir = work();
    let v = Volume::make(Fs::Ext4, 64 * MIB, dir.path()).unwrap();
    let mut n = 0;
    while v.occupancy().unwrap() < 0.93 {
        write_file(&v.root().join(format!("fill{n}")), 256 << 10);
        n += 1;
    }
    let open = |name: &str| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(v.root().join(name))
            .unwrap()
    };
    let (mut a, mut b) = (open("a"), open("b"));
    let chunk = vec![7u8; 4096];
    for _ in 0..256 {
        for f in [&mut a, &mut b] {
            f.write_all(&chunk).unwrap();
            f.sync_data().unwrap();
        }
    }
    let occupancy = v.occupancy().unwrap();
    assert!((0.93..0.99).contains(&occupancy), "{occupancy}");
    let frags = fragments::of_file(&v.root().join("a")).unwrap();
    assert!(frags.runs > 1, "{frags:?}");
    // The peer: e2fsprogs' filefrag counts the same extents.
    let said = output(
        Command::new("filefrag")
            .arg(v.root().join("a"))
            .stdin(Stdio::null()),
    );
    let said = String::from_utf8_lossy(&said.stdout);
    let found: u64 = said
        .rsplit(": ")
        .next()
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("filefrag said {said}"));
    assert_eq!(frags.extents, found, "filefrag: {said}");
    let whole = fragments::of_file(&v.root().join("fill0")).unwrap();
    assert_eq!(
        whole.runs, 1,
        "a file written in one go on the empty volume"
    );
    drop((a, b));
    v.close().unwrap();
}
