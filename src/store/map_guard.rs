//! Guarded maps of database files: a read of a mapped page that another
//! process truncated away must not kill blobbench.
//!
//! Reading a page of a file mapping that lies past the file's end raises
//! SIGBUS, whose default action ends the process without a word. SQLite's
//! locks keep well-behaved writers from shrinking a database under a read
//! transaction, but nothing stops a process that ignores them (`truncate`,
//! a restore over the file): SQLite itself documents the same hazard for
//! its own memory-mapped I/O. There is no sigsetjmp in Rust, so the guard
//! works as libwayland's does for client memory it maps: a SIGBUS handler,
//! on a fault inside a guarded map, puts a page of zeros where the lost page
//! was and marks the map damaged; the read goes on (seeing zeros), and every
//! user of the map asks [`GuardedMap::check`] after reading and before
//! trusting or sending the bytes, which fails for a damaged map or a file
//! now shorter than its map (a cut inside the last page reads zeros
//! without any fault). A fault anywhere else goes to the handler that was
//! there before (Rust's stack-overflow report, or the default action).
//!
//! Bytes a system call copies out of the map (`writev` to a socket) never
//! raise SIGBUS: the kernel returns EFAULT, so a send fails and the
//! connection is cut; the check before a reply's last byte covers the pages
//! a fault elsewhere filled with zeros meanwhile.

use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use memmap2::Mmap;

use crate::error::{Error, Result};

/// Maps guarded at once, at most: one per database file a server maps,
/// plus older maps that pieces in flight still hold after the file grew.
/// A map beyond this many is refused, and its caller reads without it.
const SLOTS: usize = 256;

/// One guarded map's address range and whether a fault has hit it. The
/// signal handler reads these, so they are plain atomics in a static.
struct Slot {
    /// Taken by a map (set first, cleared last).
    taken: AtomicBool,
    /// The map's first address; 0 while no map is being guarded here.
    start: AtomicUsize,
    /// Its length in bytes.
    len: AtomicUsize,
    /// A read faulted past the file's end: some pages are zeros now.
    damaged: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // only the array's initializer
const FREE: Slot = Slot {
    taken: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    damaged: AtomicBool::new(false),
};

/// Every guarded map's slot.
static GUARDED: [Slot; SLOTS] = [FREE; SLOTS];

/// The system's page size, read once before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The SIGBUS action before ours, for faults that are not ours; set once,
/// before ours is installed (reading it never blocks or allocates).
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Installs the handler once per process.
static INSTALL: Once = Once::new();

/// A read-only map of a database file whose reads past the file's end are
/// caught (see the module's comment). Derefs to the mapped bytes.
pub(crate) struct GuardedMap {
    /// Dropped (unmapped) after the slot is given back.
    map: Mmap,
    /// Its slot in `GUARDED`.
    slot: usize,
    /// A descriptor of the mapped file, open for the map's lifetime (the
    /// caller's: see `sqlite/map`), to ask its size.
    fd: RawFd,
    /// The file, for errors.
    path: PathBuf,
}

impl GuardedMap {
    /// Guards `map` of the file open as `fd` (open for as long as the map
    /// lives). Fails when every slot is taken: the caller then reads the
    /// file another way.
    pub(crate) fn new(map: Mmap, fd: RawFd, path: &Path) -> Result<GuardedMap> {
        install();
        let slot = GUARDED
            .iter()
            .position(|s| {
                s.taken
                    .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })
            .ok_or_else(|| {
                Error::io(
                    "cannot guard a map of",
                    path,
                    std::io::Error::other(format!("{SLOTS} maps are guarded already")),
                )
            })?;
        let s = &GUARDED[slot];
        s.damaged.store(false, Ordering::SeqCst);
        s.len.store(map.len(), Ordering::SeqCst);
        s.start.store(map.as_ptr() as usize, Ordering::SeqCst);
        Ok(GuardedMap {
            map,
            slot,
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Whether every byte read from the map so far was the file's: no read
    /// faulted past its end, and the file is still as long as the map.
    pub(crate) fn intact(&self) -> bool {
        if GUARDED[self.slot].damaged.load(Ordering::SeqCst) {
            return false;
        }
        // SAFETY: fstat fills the zeroed struct; `fd` is open (see `new`).
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let stat = unsafe { libc::fstat(self.fd, &mut st) };
        stat == 0 && st.st_size as u64 >= self.map.len() as u64
    }

    /// [`GuardedMap::intact`] as an error naming the file and what to do.
    pub(crate) fn check(&self) -> Result<()> {
        if self.intact() {
            return Ok(());
        }
        Err(truncated(&self.path, self.map.len()))
    }

    /// The map itself (for advice on its pages).
    pub(crate) fn mmap(&self) -> &Mmap {
        &self.map
    }
}

/// The error for a mapped file that another process cut short.
fn truncated(path: &Path, mapped: usize) -> Error {
    let now = std::fs::metadata(path).map_or(0, |m| m.len());
    Error::io(
        "cannot read",
        path,
        std::io::Error::other(format!(
            "another process truncated it while it was being read ({mapped} bytes mapped, {now} now), in spite of SQLite's lock; restore the database from a copy"
        )),
    )
}

impl std::ops::Deref for GuardedMap {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        // Nothing reads the map any more: give the slot back, then the
        // fields drop and the range (with any page of zeros) is unmapped.
        let s = &GUARDED[self.slot];
        s.start.store(0, Ordering::SeqCst);
        s.len.store(0, Ordering::SeqCst);
        s.damaged.store(false, Ordering::SeqCst);
        s.taken.store(false, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for GuardedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GuardedMap({} bytes)", self.map.len())
    }
}

/// Installs `on_sigbus` for SIGBUS, keeping the action it replaces: done
/// by the first guarded map, and by a store that lets SQLite map its
/// database (mmap_size), so a truncation under that map at least says what
/// happened before the process ends.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with zeroed, then filled, structs.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::SeqCst);
            }
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// The SIGBUS handler: a fault inside a guarded map gets a page of zeros
/// in place of the lost one, and the map is marked damaged; any other goes
/// to the previous action. Only atomics and system calls (mmap, sigaction)
/// are used here.
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &GUARDED {
        let start = s.start.load(Ordering::SeqCst);
        let len = s.len.load(Ordering::SeqCst);
        if start == 0 || addr < start || addr >= start + len {
            continue;
        }
        // Damaged before the zeros appear: a user that sees them sees this.
        s.damaged.store(true, Ordering::SeqCst);
        // SAFETY: replaces one page inside a mapping this process made and
        // still holds (its slot is taken until it is unmapped) with zeros.
        let zeros = unsafe {
            libc::mmap(
                (addr & !(page - 1)) as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            return;
        }
        break;
    }
    // SAFETY: as above.
    if unsafe { (*info).si_code } == libc::BUS_ADRERR {
        // Not a map of ours: SQLite's own (mmap_size) or another. Say what
        // happened before the process ends; write(2) is async-signal-safe.
        let says = b"blobbench: a memory-mapped file was cut short by another process while it was read (SIGBUS); SQLite's own memory-mapped I/O (mmap_size) cannot survive that, and a truncation under SQLite's lock is corruption: restore the database from a copy\n";
        // SAFETY: writes a static buffer to standard error.
        unsafe { libc::write(2, says.as_ptr().cast(), says.len()) };
    }
    pass_on(signal, info, context, PREVIOUS.get().copied());
}

/// Hands a fault that is not ours to the action that was there before:
/// calls its handler, or restores it and returns, so the faulting read
/// runs again and meets it (the default: the process ends with SIGBUS).
fn pass_on(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
    previous: Option<libc::sigaction>,
) {
    let Some(previous) = previous else {
        // SAFETY: restores the default action; the fault repeats.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
        return;
    };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restores the earlier action; the fault repeats under it.
        unsafe { libc::sigaction(signal, &previous, std::ptr::null_mut()) };
        return;
    }
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: an SA_SIGINFO handler takes these three arguments.
        let f = unsafe {
            std::mem::transmute::<
                libc::sighandler_t,
                extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void),
            >(handler)
        };
        f(signal, info, context);
    } else {
        // SAFETY: a plain handler takes the signal number.
        let f = unsafe {
            std::mem::transmute::<libc::sighandler_t, extern "C" fn(libc::c_int)>(handler)
        };
        f(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A file cut short under its map: the read of a lost page gives zeros
    /// instead of killing the process, and the map says it is damaged; a
    /// cut inside the last page (no fault) is caught by the size check.
    /// The handler takes only faults inside guarded maps, so installing it
    /// in the test process changes nothing for the other tests.
    #[test]
    fn a_read_past_a_truncated_end_is_caught_not_fatal() {
        let page = PAGE.load(Ordering::SeqCst).max(4096);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        std::fs::write(&path, vec![7u8; 3 * page]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let map = GuardedMap::new(
            unsafe { Mmap::map(&file) }.unwrap(),
            file.as_raw_fd(),
            &path,
        )
        .unwrap();
        assert_eq!(map[2 * page], 7);
        assert!(map.intact());
        // A cut inside the last page: no fault, but not intact.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(3 * page as u64 - 10)
            .unwrap();
        assert!(!map.intact());
        let err = map.check().unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        // A cut of whole pages: the read faults, and is caught.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(page as u64)
            .unwrap();
        let lost = std::hint::black_box(&map[..])[2 * page + 5];
        assert_eq!(lost, 0, "the lost page reads as zeros");
        assert!(GUARDED[map.slot].damaged.load(Ordering::SeqCst));
        // Growing the file back does not make the map trustworthy again.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(3 * page as u64)
            .unwrap();
        assert!(!map.intact());
        // Its slot is free again once the map is gone.
        let slot = map.slot;
        drop(map);
        assert!(!GUARDED[slot].taken.load(Ordering::SeqCst));
    }
}
