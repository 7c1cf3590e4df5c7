//! How scattered a file is on disk: its extents as the filesystem's
//! FIEMAP ioctl reports them, merged into physically contiguous runs.
//! A file read in one sequential sweep has one run; every further run is a
//! seek (on a disk) or a separate request (on an SSD). The aging study
//! (Sears, van Ingen and Gray, 2006) counts these fragments per blob.

use std::ops::Range;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Flush the file's dirty pages first, so delayed allocation has placed
/// every block before it is counted.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// The extent's data is not on disk yet (delayed allocation): no place.
const FIEMAP_EXTENT_DELALLOC: u32 = 0x4;

/// `struct fiemap`'s header, followed in memory by its extents.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// Where a file's bytes are on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFragments {
    /// Extents as the filesystem reports them (ext4 splits one contiguous
    /// run into extents of at most 128 MiB, so this can exceed `runs`).
    pub extents: u64,
    /// Physically contiguous runs, in file order: the fragments.
    pub runs: u64,
}

/// One extent of a file: `length` bytes from file offset `logical` lie on
/// the device from byte `physical` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file, bytes.
    pub logical: u64,
    /// Offset on the device, bytes (meaningless when not `placed`).
    pub physical: u64,
    /// Bytes.
    pub length: u64,
    /// False for data not on the disk yet (delayed allocation), which has
    /// no place to be contiguous with.
    pub placed: bool,
}

/// The fragments of the file at `path`; None where the filesystem cannot
/// tell (tmpfs, some network filesystems) or the file cannot be opened.
/// An empty file has no runs.
pub fn of_file(path: &Path) -> Option<FileFragments> {
    let extents = extents_of(path)?;
    Some(FileFragments {
        extents: extents.len() as u64,
        runs: contiguous_runs(&extents),
    })
}

/// Every extent of the file at `path`, in file order, after its dirty
/// pages are flushed (FIEMAP's SYNC flag: delayed allocation has placed
/// them); None where the filesystem cannot tell or the file cannot be
/// opened. A descriptor this process already holds on the file is used
/// where there is one (an SQLite database a store has open): opening and
/// closing another would drop every POSIX lock the process holds on it,
/// SQLite's among them.
pub fn extents_of(path: &Path) -> Option<Vec<Extent>> {
    let extents = match open_descriptor_of(path) {
        Some(fd) => fiemap(fd)?,
        None => fiemap(std::fs::File::open(path).ok()?.as_raw_fd())?,
    };
    Some(
        extents
            .iter()
            .map(|e| Extent {
                logical: e.fe_logical,
                physical: e.fe_physical,
                length: e.fe_length,
                placed: e.fe_flags & FIEMAP_EXTENT_DELALLOC == 0,
            })
            .collect(),
    )
}

/// A descriptor this process already holds on the regular file at `path`
/// (found in /proc/self/fd by device and inode), to use without opening
/// or closing one; None when there is none (or no /proc).
pub fn open_descriptor_of(path: &Path) -> Option<std::os::fd::RawFd> {
    use std::os::unix::fs::MetadataExt;
    let want = std::fs::metadata(path).ok()?;
    std::fs::read_dir("/proc/self/fd")
        .ok()?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .find(|&fd| {
            // SAFETY: fstat only fills the zeroed struct; a descriptor
            // closed meanwhile (the listing's own among them) fails.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            let found = unsafe { libc::fstat(fd, &mut st) } == 0;
            found
                && st.st_dev == want.dev()
                && st.st_ino == want.ino()
                && st.st_mode & libc::S_IFMT == libc::S_IFREG
        })
}

/// Every extent of the open file `fd`, asked twice: once for the count,
/// once for the list.
fn fiemap(fd: i32) -> Option<Vec<FiemapExtent>> {
    let count = request(fd, 0)?.0.fm_mapped_extents;
    let (header, extents) = request(fd, count)?;
    let n = (header.fm_mapped_extents as usize).min(extents.len());
    Some(extents[..n].to_vec())
}

/// One FIEMAP call with room for `room` extents.
fn request(fd: i32, room: u32) -> Option<(FiemapHeader, Vec<FiemapExtent>)> {
    let header_words = std::mem::size_of::<FiemapHeader>().div_ceil(8);
    let extent_words = std::mem::size_of::<FiemapExtent>() / 8;
    // u64 words: the kernel's structures are 8-byte aligned.
    let mut buf = vec![0u64; header_words + extent_words * room as usize];
    let header = FiemapHeader {
        fm_start: 0,
        fm_length: u64::MAX,
        fm_flags: FIEMAP_FLAG_SYNC,
        fm_extent_count: room,
        ..FiemapHeader::default()
    };
    // SAFETY: buf holds at least a header (24 + 8 bytes rounded up to
    // whole words) and `room` extents after it, laid out as the kernel's
    // struct fiemap; the ioctl writes only within fm_extent_count extents.
    unsafe {
        std::ptr::write(buf.as_mut_ptr() as *mut FiemapHeader, header);
        if libc::ioctl(fd, FS_IOC_FIEMAP, buf.as_mut_ptr()) != 0 {
            return None;
        }
        let header = std::ptr::read(buf.as_ptr() as *const FiemapHeader);
        let first = (buf.as_ptr() as *const FiemapHeader).add(1) as *const FiemapExtent;
        let extents = (0..room as usize)
            .map(|i| std::ptr::read(first.add(i)))
            .collect();
        Some((header, extents))
    }
}

/// Extents merged where one ends on disk exactly where the next, in file
/// order, begins; an extent not yet placed (delayed allocation) counts as
/// a run of its own.
fn contiguous_runs(extents: &[Extent]) -> u64 {
    let mut runs = 0;
    let mut end: Option<u64> = None;
    for e in extents {
        if !(e.placed && end == Some(e.physical)) {
            runs += 1;
        }
        end = e.placed.then(|| e.physical + e.length);
    }
    runs
}

/// Physically contiguous runs that the byte `ranges` of a file, read in
/// the order given (a SQLite blob's overflow pages in chain order), occupy
/// on the disk, with the file's `extents` (from [`extents_of`], in file
/// order) telling where each byte is. A range may span several extents;
/// consecutive pieces are one run when one ends on the disk where the next
/// starts. A piece in an extent not placed yet, or in a hole (no extent),
/// is a run of its own. Empty ranges count for nothing.
pub fn runs_on_disk(ranges: &[Range<u64>], extents: &[Extent]) -> u64 {
    let mut runs = 0;
    // Where the last piece ended on the disk, if it was placed.
    let mut end: Option<u64> = None;
    for r in ranges.iter().filter(|r| !r.is_empty()) {
        let mut at = r.start;
        // The first extent that ends past `at` (extents are in file order).
        let mut i = extents.partition_point(|e| e.logical + e.length <= at);
        while at < r.end {
            let piece_end;
            match extents.get(i).filter(|e| e.logical <= at) {
                Some(e) => {
                    piece_end = r.end.min(e.logical + e.length);
                    let physical = e.physical + (at - e.logical);
                    if !(e.placed && end == Some(physical)) {
                        runs += 1;
                    }
                    end = e.placed.then_some(physical + (piece_end - at));
                    i += 1;
                }
                None => {
                    // A hole up to the next extent (or the range's end).
                    piece_end = extents.get(i).map_or(r.end, |e| r.end.min(e.logical));
                    runs += 1;
                    end = None;
                }
            }
            at = piece_end;
        }
    }
    runs
}

/// Runs of `ranges` in which each range starts where the one before it
/// ended: a blob's runs of consecutive pages in its file, whatever the
/// disk below did. Empty ranges count for nothing.
pub fn contiguous_ranges(ranges: &[Range<u64>]) -> u64 {
    let mut runs = 0;
    let mut end: Option<u64> = None;
    for r in ranges.iter().filter(|r| !r.is_empty()) {
        if end != Some(r.start) {
            runs += 1;
        }
        end = Some(r.end);
    }
    runs
}

/// Physically contiguous runs of a value that lies in a file as `ranges`
/// of byte offsets, in the value's order (a SQLite blob: its part on the
/// b-tree page, then its overflow pages): a new run starts wherever the
/// next range is neither on the page the last one ended on nor on the page
/// after it. Each page's own header between two ranges is no gap.
pub fn page_runs(ranges: &[std::ops::Range<usize>], page_size: usize) -> u64 {
    let mut runs = 0;
    let mut last_page: Option<usize> = None;
    for r in ranges.iter().filter(|r| !r.is_empty()) {
        let first = r.start / page_size;
        let follows = last_page.is_some_and(|p| first == p || first == p + 1);
        if !follows {
            runs += 1;
        }
        last_page = Some((r.end - 1) / page_size);
    }
    runs
}

#[cfg(test)]
// One range of a file is a slice of one range here, not a mistake.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    fn is_ext4(path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: statfs fills the zeroed struct for a NUL-terminated path.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == 0xEF53 }
    }

    /// Extents laid end to end in the file, at these places on the disk.
    fn extent(physical: u64, length: u64) -> Extent {
        Extent {
            logical: 0,
            physical,
            length,
            placed: true,
        }
    }

    /// `(logical, physical, length)` extents, all placed.
    fn mapped(list: &[(u64, u64, u64)]) -> Vec<Extent> {
        list.iter()
            .map(|&(logical, physical, length)| Extent {
                logical,
                physical,
                length,
                placed: true,
            })
            .collect()
    }

    #[test]
    fn ranges_map_through_extents_into_runs_on_disk() {
        // File bytes 0..100 at disk 1000, 100..200 at disk 1100 (touching:
        // one run on disk though two extents), 200..300 at disk 5000.
        let e = mapped(&[(0, 1000, 100), (100, 1100, 100), (200, 5000, 100)]);
        assert_eq!(runs_on_disk(&[0..300], &e), 2, "spans all three");
        assert_eq!(runs_on_disk(&[0..50, 50..200], &e), 1, "touching pieces");
        assert_eq!(runs_on_disk(&[10..20, 30..40], &e), 2, "a gap in between");
        assert_eq!(runs_on_disk(&[200..250, 250..300], &e), 1);
        // Out of order: the file's later bytes read first, then the earlier
        // ones, which lie before them on the disk: two runs. Where the
        // file's two halves lie on the disk the other way round, reading
        // the second half first is the one run, the file's order two.
        assert_eq!(runs_on_disk(&[100..200, 0..100], &e), 2);
        let swapped = mapped(&[(0, 1100, 100), (100, 1000, 100)]);
        assert_eq!(runs_on_disk(&[100..200, 0..100], &swapped), 1);
        assert_eq!(runs_on_disk(&[0..200], &swapped), 2);
        // A hole (bytes 100..150 without an extent) is a run of its own.
        let holey = mapped(&[(0, 1000, 100), (150, 1150, 100)]);
        assert_eq!(runs_on_disk(&[0..250], &holey), 3);
        assert_eq!(runs_on_disk(&[120..130], &holey), 1);
        assert_eq!(runs_on_disk(&[200..300], &holey), 2, "past the last extent");
        // Not placed yet: a run of its own, and nothing follows on from it.
        let mut delayed = mapped(&[(0, 1000, 100), (100, 1100, 100), (200, 1200, 100)]);
        delayed[1].placed = false;
        assert_eq!(runs_on_disk(&[0..300], &delayed), 3);
        assert_eq!(runs_on_disk(&[], &e), 0);
        assert_eq!(runs_on_disk(&[5..5], &e), 0, "an empty range is nothing");
        assert_eq!(runs_on_disk(&[0..10], &[]), 1, "all hole");
    }

    #[test]
    fn ranges_that_follow_on_are_one_run_of_pages() {
        assert_eq!(contiguous_ranges(&[0..4096, 4096..8192, 8192..12288]), 1);
        assert_eq!(contiguous_ranges(&[0..4096, 8192..12288]), 2);
        assert_eq!(
            contiguous_ranges(&[8192..12288, 4096..8192]),
            2,
            "backwards"
        );
        assert_eq!(contiguous_ranges(&[0..4096, 4096..4096, 4096..8192]), 1);
        assert_eq!(contiguous_ranges(&[]), 0);
    }

    /// A file this process has open is asked through that descriptor
    /// (closing another would drop the process's locks on it); one not
    /// open has none.
    #[test]
    fn a_file_held_open_is_found_by_its_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let (held, other) = (dir.path().join("held"), dir.path().join("other"));
        std::fs::write(&held, b"x").unwrap();
        std::fs::write(&other, b"y").unwrap();
        let file = std::fs::File::open(&held).unwrap();
        assert_eq!(open_descriptor_of(&held), Some(file.as_raw_fd()));
        assert_eq!(open_descriptor_of(&other), None);
        assert_eq!(open_descriptor_of(&dir.path().join("absent")), None);
    }

    /// A real file: its bytes in file order make the runs its extents say;
    /// its second half read before its first is one run more, unless the
    /// filesystem laid the halves out in the other order.
    #[test]
    fn a_real_files_ranges_map_through_its_extents() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("real");
        std::fs::write(&path, vec![5u8; 1 << 20]).unwrap();
        let Some(extents) = extents_of(&path) else {
            assert!(!is_ext4(dir.path()), "ext4 answers FIEMAP");
            return;
        };
        assert!(!extents.is_empty() && extents.iter().all(|e| e.placed));
        let whole = of_file(&path).unwrap().runs;
        assert_eq!(runs_on_disk(&[0..1 << 20], &extents), whole);
        let halves = [1 << 19..1 << 20, 0..1 << 19];
        assert!(runs_on_disk(&halves, &extents) >= whole);
        if whole == 1 {
            assert_eq!(runs_on_disk(&halves, &extents), 2);
            assert_eq!(runs_on_disk(&[0..4096, 4096..8192], &extents), 1);
        }
    }

    #[test]
    fn pages_in_sequence_are_one_run_and_a_jump_starts_another() {
        // Page 2's tail, then overflow pages 3 and 4 (4-byte headers), then 9.
        let r = [1000..1024, 1028..1536, 1540..2048, 4100..4200];
        assert_eq!(page_runs(&r, 512), 2);
        assert_eq!(page_runs(&r[..3], 512), 1);
        assert_eq!(page_runs(&[], 512), 0);
        // A chain that goes back in the file is a new run too.
        assert_eq!(page_runs(&[4100..4200, 1028..1536], 512), 2);
    }

    #[test]
    fn touching_extents_are_one_run_and_gaps_start_new_ones() {
        let e = [extent(0, 10), extent(10, 5), extent(100, 5), extent(105, 1)];
        assert_eq!(contiguous_runs(&e), 2);
        assert_eq!(contiguous_runs(&[]), 0);
        // Out of order on disk: the second run starts before the first.
        assert_eq!(contiguous_runs(&[extent(50, 10), extent(0, 50)]), 2);
    }

    /// A file with a hole in the middle is two extents wherever the
    /// filesystem puts them; a file written in one go on this disk is one.
    #[test]
    fn a_file_with_a_hole_has_two_extents() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("holey");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&[1u8; 65536]).unwrap();
        f.seek(SeekFrom::Start(16 << 20)).unwrap();
        f.write_all(&[2u8; 65536]).unwrap();
        f.sync_all().unwrap();
        let Some(frags) = of_file(&path) else {
            // Only a filesystem without FIEMAP may say nothing; ext4 (the
            // disk this project's CI runs on) must answer.
            assert!(!is_ext4(dir.path()), "ext4 answers FIEMAP");
            return;
        };
        assert_eq!(frags.extents, 2, "{frags:?}");
        assert!(frags.runs >= 1 && frags.runs <= 2, "{frags:?}");
        let whole = dir.path().join("whole");
        std::fs::write(&whole, vec![3u8; 1 << 20]).unwrap();
        assert_eq!(of_file(&whole).unwrap().runs, 1);
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(
            of_file(&empty).unwrap(),
            FileFragments {
                extents: 0,
                runs: 0
            }
        );
    }
}
