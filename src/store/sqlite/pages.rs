//! Where a blob's bytes lie in a SQLite database file: the table's b-tree
//! walked down to the row, its record header read, its overflow chain
//! followed, all on a read-only map of the file (the file format is
//! SQLite's documented, stable one: https://sqlite.org/fileformat2.html).
//!
//! A server then writes the blob to its socket straight from the mapped
//! pages: one copy, where reading through SQLite costs two (the pages into
//! a buffer, the buffer into the socket). The runs are right only while a
//! read transaction holds the database's shared lock in rollback-journal
//! mode (no writer can change the file then); the caller makes sure of
//! that. Anything that does not look exactly as expected gives
//! `Unsupported`, and the caller reads through SQLite instead: a wrong
//! guess here must never send wrong bytes.

use std::ops::Range;

/// What to do with the overflow pages a walk reads: reading a page's
/// header maps it into the process, a page fault for every few pages not
/// mapped yet, so `map_ahead` is first given the pages the chain would take
/// if they follow each other (as a chain written in one go does), to map
/// them in one call; and walking a large blob's chain would keep all of it
/// resident, so `release` gets the walked pages back a chunk at a time
/// when the value is over `over` bytes.
pub(crate) struct Walked<'a> {
    /// Values larger than this are not walked at all (`Unsupported`).
    pub(crate) max: usize,
    /// Values larger than this release their walked pages.
    pub(crate) over: usize,
    /// Called with file ranges of walked pages, about 1 MiB at a time.
    pub(crate) release: &'a mut dyn FnMut(Range<usize>),
    /// Called, before the walk reads them, with file ranges of up to about
    /// 1 MiB of pages the chain is expected to take next; only a guess
    /// (the walk reads each page's link all the same).
    pub(crate) map_ahead: &'a mut dyn FnMut(Range<usize>),
}

impl Walked<'_> {
    /// Releases nothing, maps nothing ahead.
    #[cfg(test)]
    pub(crate) fn keep<R>(f: impl FnOnce(&mut Walked<'_>) -> R) -> R {
        f(&mut Walked {
            max: usize::MAX,
            over: usize::MAX,
            release: &mut |_| (),
            map_ahead: &mut |_| (),
        })
    }
}

/// What a row's first column holds: the record must say the same, or the
/// walk found a table other than the one the caller meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyColumn {
    /// NULL: an INTEGER PRIMARY KEY, which is the rowid (kv's `k`).
    Rowid,
    /// A text id (the blog's `files.id`).
    Text,
}

/// The outcome of looking a row up in the mapped file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// No row with that rowid.
    Absent,
    /// The value of the row's second column, as runs of file offsets in
    /// the order of its bytes.
    Found(Vec<Range<usize>>),
    /// The file or the row is not laid out as this reader expects.
    Unsupported(&'static str),
}

/// The page size and usable size (page size less reserved bytes) from the
/// database header, for a rollback-journal database only (in WAL mode the
/// newest version of a page may be in the WAL, not in the file).
/// With `wal_ok`, a WAL database is taken too: the caller has checkpointed
/// its WAL into the file and holds a read transaction on that snapshot.
fn geometry(file: &[u8], wal_ok: bool) -> Result<(usize, usize), &'static str> {
    if file.len() < 100 || &file[..16] != b"SQLite format 3\0" {
        return Err("no SQLite header");
    }
    let size = match u16::from_be_bytes([file[16], file[17]]) {
        1 => 65536,
        n => n as usize,
    };
    if !(512..=65536).contains(&size) || !size.is_power_of_two() {
        return Err("odd page size");
    }
    let wal = file[18] == 2 && file[19] == 2;
    if !(file[18] == 1 && file[19] == 1 || wal && wal_ok) {
        return Err("WAL mode");
    }
    let usable = size - file[20] as usize;
    if usable < 480 {
        return Err("too many reserved bytes");
    }
    Ok((size, usable))
}

/// A SQLite varint (1 to 9 bytes, big-endian, 7 bits a byte but 8 in the
/// ninth) and the bytes it took.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let byte = *b.get(i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// A big-endian integer of `N` bytes at `at`.
fn be<const N: usize>(b: &[u8], at: usize) -> Option<u64> {
    let bytes = b.get(at..at + N)?;
    Some(bytes.iter().fold(0u64, |v, x| (v << 8) | u64::from(*x)))
}

/// Page `pgno` (from 1) of the file, whole.
fn page(file: &[u8], size: usize, pgno: u64) -> Option<&[u8]> {
    let start = (pgno.checked_sub(1)? as usize).checked_mul(size)?;
    file.get(start..start + size)
}

/// The value of column 1 (after column 0, `key`) of row `rowid` of the
/// table b-tree rooted at page `root`.
pub(crate) fn value_runs(
    file: &[u8],
    root: u64,
    (rowid, key): (i64, KeyColumn),
    walked: &mut Walked<'_>,
) -> Lookup {
    match find_value(file, root, (rowid, key), walked, false) {
        Ok(Some((_, runs))) => Lookup::Found(runs),
        Ok(None) => Lookup::Absent,
        Err(why) => Lookup::Unsupported(why),
    }
}

/// The overflow pages (numbered from 1) that hold the value of column 1
/// of row `rowid`, in chain order: the pages `value_runs` finds, without
/// the b-tree leaf page that keeps the value's first bytes. None: no such
/// row. `wal_ok`: see `geometry`.
pub(crate) fn overflow_pages(
    file: &[u8],
    root: u64,
    (rowid, key): (i64, KeyColumn),
    wal_ok: bool,
) -> Result<Option<Vec<u64>>, &'static str> {
    let (size, _) = geometry(file, wal_ok)?;
    let mut walked = Walked {
        max: usize::MAX,
        over: usize::MAX,
        release: &mut |_| (),
        map_ahead: &mut |_| (),
    };
    let Some((leaf, runs)) = find_value(file, root, (rowid, key), &mut walked, wal_ok)? else {
        return Ok(None);
    };
    // Each run lies within one page: the leaf's part, then one per
    // overflow page.
    Ok(Some(
        runs.iter()
            .map(|r| (r.start / size) as u64 + 1)
            .filter(|&p| p != leaf)
            .collect(),
    ))
}

/// A value found: its leaf page's number and its runs of file offsets.
type Found = (u64, Vec<Range<usize>>);

/// `value_runs`, with `?` for every check; also the leaf page's number.
fn find_value(
    file: &[u8],
    root: u64,
    (rowid, key): (i64, KeyColumn),
    walked: &mut Walked<'_>,
    wal_ok: bool,
) -> Result<Option<Found>, &'static str> {
    let (size, usable) = geometry(file, wal_ok)?;
    let mut pgno = root;
    // A b-tree deeper than this is not a b-tree: a loop in a damaged file.
    for _ in 0..40 {
        let p = page(file, size, pgno).ok_or("page past the end")?;
        let hdr = if pgno == 1 { 100 } else { 0 };
        let cells = be::<2>(p, hdr + 3).ok_or("short page")? as usize;
        match p[hdr] {
            0x05 => pgno = child_for(p, hdr, cells, rowid)?,
            0x0d => {
                let Some(cell) = leaf_cell(p, hdr, cells, rowid)? else {
                    return Ok(None);
                };
                let start = (pgno - 1) as usize * size;
                return payload_runs(file, (size, usable), (start, cell), key, walked)
                    .map(|runs| Some((pgno, runs)));
            }
            _ => return Err("not a table b-tree page"),
        }
    }
    Err("b-tree too deep")
}

/// The offset of cell `i` of a page whose header starts at `hdr` and is
/// `len` bytes long.
fn cell_at(p: &[u8], hdr: usize, len: usize, i: usize) -> Result<usize, &'static str> {
    be::<2>(p, hdr + len + 2 * i)
        .map(|o| o as usize)
        .ok_or("short cell pointer array")
}

/// On an interior table page: the child that holds `rowid` (the first
/// cell whose key is at least `rowid` points left to it, else the
/// right-most pointer does).
fn child_for(p: &[u8], hdr: usize, cells: usize, rowid: i64) -> Result<u64, &'static str> {
    let (mut lo, mut hi) = (0, cells);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let cell = cell_at(p, hdr, 12, mid)?;
        let (key, _) = varint(p.get(cell + 4..).ok_or("cell past the page")?).ok_or("bad key")?;
        if (key as i64) < rowid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if lo < cells {
        be::<4>(p, cell_at(p, hdr, 12, lo)?).ok_or("short cell")
    } else {
        be::<4>(p, hdr + 8).ok_or("short header")
    }
}

/// On a leaf table page: the offset of the cell of `rowid`, if any.
fn leaf_cell(
    p: &[u8],
    hdr: usize,
    cells: usize,
    rowid: i64,
) -> Result<Option<usize>, &'static str> {
    let (mut lo, mut hi) = (0, cells);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let cell = cell_at(p, hdr, 8, mid)?;
        let rest = p.get(cell..).ok_or("cell past the page")?;
        let (_, n) = varint(rest).ok_or("bad payload size")?;
        let (key, _) = varint(&rest[n..]).ok_or("bad rowid")?;
        match (key as i64).cmp(&rowid) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(Some(cell)),
        }
    }
    Ok(None)
}

/// The runs of column 1's bytes for the leaf cell at `cell` of the page
/// starting at file offset `start`.
fn payload_runs(
    file: &[u8],
    (size, usable): (usize, usize),
    (start, cell): (usize, usize),
    key: KeyColumn,
    walked: &mut Walked<'_>,
) -> Result<Vec<Range<usize>>, &'static str> {
    let p = &file[start..start + size];
    let (total, n1) =
        varint(p.get(cell..).ok_or("cell past the page")?).ok_or("bad payload size")?;
    let (_, n2) = varint(p.get(cell + n1..).ok_or("cell past the page")?).ok_or("bad rowid")?;
    let total = total as usize;
    let body = cell + n1 + n2;
    let local = local_size(total, usable);
    if body + local > usable {
        return Err("cell past the page");
    }
    let value = value_in_record(&p[body..body + local], total, key)?;
    if value.len() > walked.max {
        return Err("larger than asked for");
    }
    let mut runs = Vec::new();
    if value.start < local {
        runs.push(start + body + value.start..start + body + local);
    }
    if total > local {
        let first = be::<4>(p, body + local).ok_or("short cell")?;
        let release = value.len() > walked.over;
        let chain = Chain {
            first,
            remaining: total - local,
            skip: value.start.saturating_sub(local),
        };
        follow_overflow(file, (size, usable), chain, &mut runs, (walked, release))?;
    }
    let got: usize = runs.iter().map(|r| r.len()).sum();
    if got != value.len() {
        return Err("runs do not add up to the value");
    }
    Ok(runs)
}

/// Bytes of a payload of `total` bytes kept on the leaf page itself (the
/// file format's rule for table leaves).
fn local_size(total: usize, usable: usize) -> usize {
    let max_local = usable - 35;
    if total <= max_local {
        return total;
    }
    let min_local = ((usable - 12) * 32 / 255) - 23;
    let k = min_local + ((total - min_local) % (usable - 4));
    if k <= max_local { k } else { min_local }
}

/// Where column 1 lies in a record of `total` bytes whose first bytes are
/// `local`: the record must be two columns, `key` (a NULL for an INTEGER
/// PRIMARY KEY, or TEXT) then a BLOB or TEXT, and nothing else, its header
/// on the leaf page.
fn value_in_record(
    local: &[u8],
    total: usize,
    key: KeyColumn,
) -> Result<Range<usize>, &'static str> {
    let (header, n) = varint(local).ok_or("bad record header")?;
    let header = header as usize;
    if header > local.len() {
        return Err("record header off the page");
    }
    let (t0, m) = varint(&local[n..header]).ok_or("bad serial type")?;
    let (t1, k) = varint(&local[n + m..header]).ok_or("bad serial type")?;
    let key_len = match (key, t0) {
        (KeyColumn::Rowid, 0) => 0,
        (KeyColumn::Text, 13..) if t0 % 2 == 1 => ((t0 - 13) / 2) as usize,
        _ => return Err("not a (key, blob) record"),
    };
    if n + m + k != header || t1 < 12 {
        return Err("not a (key, blob) record");
    }
    let len = ((t1 - 12) / 2) as usize;
    let start = header + key_len;
    if start + len != total {
        return Err("record size mismatch");
    }
    Ok(start..total)
}

/// An overflow chain: its first page and the payload bytes it holds.
struct Chain {
    /// First overflow page.
    first: u64,
    /// Payload bytes in the chain.
    remaining: usize,
    /// Record bytes before the value, when the header spilled (normally 0).
    skip: usize,
}

/// Overflow pages walked between two releases (1 MiB of 4 KiB pages), and
/// the most mapped ahead at once.
const RELEASE_EVERY: usize = 256;

/// Chains of fewer pages than this are not mapped ahead: the page faults
/// of so few cost less than the call.
const MAP_AHEAD_FROM: usize = 16;

/// How many pages ahead of the one being read the walk asks the CPU to
/// fetch the link of (when the chain has followed on so far): each link is
/// on a page of its own, a cache miss the hardware does not foresee.
const PREFETCH_PAGES: u64 = 8;

/// Appends the runs of `chain` that hold the value; maps pages ahead (see
/// `Walked`), and with `release`, hands back the pages read every
/// `RELEASE_EVERY` pages.
fn follow_overflow(
    file: &[u8],
    (size, usable): (usize, usize),
    chain: Chain,
    runs: &mut Vec<Range<usize>>,
    (walked, release): (&mut Walked<'_>, bool),
) -> Result<(), &'static str> {
    let per_page = usable - 4;
    let (mut pgno, mut remaining, mut skip) = (chain.first, chain.remaining, chain.skip);
    let pages = remaining.div_ceil(per_page);
    let mut span: Option<Range<usize>> = None;
    // Pages [mapped.start, mapped.end) were given to `map_ahead`; guesses
    // that broke within MAP_AHEAD_FROM pages (a fragmented chain) stop it.
    let (mut mapped, mut broken) = (0..0, 0);
    for i in 0..pages {
        let p = page(file, size, pgno)
            .filter(|_| pgno >= 2)
            .ok_or("overflow page past the end")?;
        let at = (pgno - 1) as usize * size;
        if !mapped.contains(&pgno) && pages - i >= MAP_AHEAD_FROM && broken < 2 {
            let n = (pages - i).min(RELEASE_EVERY);
            mapped = pgno..pgno + n as u64;
            (walked.map_ahead)(at..(at + n * size).min(file.len()));
        }
        if mapped.contains(&pgno) {
            prefetch(file, size, pgno + PREFETCH_PAGES);
        }
        let here = remaining.min(per_page);
        if skip < here {
            runs.push(at + 4 + skip..at + 4 + here);
        }
        skip = skip.saturating_sub(here);
        remaining -= here;
        let next = be::<4>(p, 0).ok_or("short page")?;
        if next != pgno + 1 && !mapped.is_empty() {
            // The chain jumps: the guess no longer holds.
            broken += usize::from(pgno - mapped.start < MAP_AHEAD_FROM as u64);
            mapped = 0..0;
        }
        pgno = next;
        if release {
            let s = span.get_or_insert(at..at + size);
            (s.start, s.end) = (s.start.min(at), s.end.max(at + size));
            if (i + 1) % RELEASE_EVERY == 0 || i + 1 == pages {
                (walked.release)(span.take().expect("just set"));
            }
        }
    }
    if remaining != 0 {
        return Err("overflow chain too short");
    }
    Ok(())
}

/// Asks the CPU to bring the start of page `pgno` (its link) into the
/// cache; nothing if it is past the end. Only a hint: it never faults.
fn prefetch(file: &[u8], size: usize, pgno: u64) {
    let at = (pgno as usize - 1).saturating_mul(size);
    if let Some(byte) = file.get(at) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing and cannot fault; the address
        // is inside the slice anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(byte).cast(),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = byte;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// The root page of table `name`.
    fn root_of(conn: &Connection, name: &str) -> u64 {
        conn.query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name=?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64
    }

    /// A blob's overflow chain written into fresh pages is one run of
    /// pages; one written after another blob's pages were freed takes those
    /// first and then new pages at the end: more than one run (the
    /// fragments the aging study counts). The blob's first bytes, on its
    /// b-tree page, are left out: that page is read to find the row anyway.
    #[test]
    fn a_blob_written_into_freed_pages_is_in_more_than_one_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA page_size=4096; PRAGMA journal_mode=delete;
             CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);",
        )
        .unwrap();
        let put = |k: i64, n: usize| {
            conn.execute(
                "INSERT INTO kv VALUES(?1, ?2)",
                rusqlite::params![k, vec![k as u8; n]],
            )
            .unwrap();
        };
        put(1, 40_000);
        put(2, 40_000);
        conn.execute("DELETE FROM kv WHERE k = 1", []).unwrap();
        put(3, 80_000);
        let root = root_of(&conn, "kv");
        drop(conn);
        let file = std::fs::read(&path).unwrap();
        let runs_of = |k| match Walked::keep(|w| value_runs(&file, root, (k, KeyColumn::Rowid), w))
        {
            Lookup::Found(r) => crate::measure::fragments::page_runs(&r[1..], 4096),
            other => panic!("{other:?}"),
        };
        assert_eq!(runs_of(2), 1, "written into fresh pages");
        assert!(
            runs_of(3) > 1,
            "written into key 1's freed pages, then new ones"
        );
    }

    /// Every value read through the mapped runs equals SQLite's, for page
    /// sizes from the smallest to the largest, reserved bytes, and sizes on
    /// and around the local/overflow boundaries.
    #[test]
    fn runs_give_the_same_bytes_as_sqlite() {
        for (page_size, reserved) in [(512, 0), (1024, 0), (4096, 0), (4096, 32), (65536, 0)] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA page_size={page_size}; PRAGMA journal_mode=delete;
                 CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);
                 CREATE TABLE files( id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL );"
            ))
            .unwrap();
            if reserved > 0 {
                // SQLITE_FCNTL_RESERVE_BYTES sets the reserved space of a new file.
                let mut n: i32 = reserved;
                unsafe {
                    rusqlite::ffi::sqlite3_file_control(
                        conn.handle(),
                        c"main".as_ptr(),
                        rusqlite::ffi::SQLITE_FCNTL_RESERVE_BYTES,
                        (&mut n as *mut i32).cast(),
                    );
                }
                conn.execute_batch("VACUUM").unwrap();
            }
            let usable = page_size as usize - reserved as usize;
            let mut sizes = vec![0, 1, 100, 1000, 5000, 70_000, 300_000];
            for edge in [usable - 35, usable - 4, 2 * usable] {
                sizes.extend([edge - 3, edge - 1, edge, edge + 1, edge + 3]);
            }
            for (i, n) in sizes.iter().enumerate() {
                let v: Vec<u8> = (0..*n).map(|j| (j * 7 + i) as u8).collect();
                conn.execute(
                    "INSERT INTO kv VALUES(?1, ?2)",
                    rusqlite::params![i as i64 + 1, v],
                )
                .unwrap();
                conn.execute(
                    "INSERT INTO files VALUES(?1, ?2)",
                    rusqlite::params![text_id(i), v],
                )
                .unwrap();
            }
            let root = root_of(&conn, "kv");
            let files_root = root_of(&conn, "files");
            let file = std::fs::read(&path).unwrap();
            assert_eq!(
                i32::from(file[20]),
                reserved,
                "the reserved bytes took effect"
            );
            for (i, n) in sizes.iter().enumerate() {
                let want: Vec<u8> = conn
                    .query_row("SELECT v FROM kv WHERE k=?1", [i as i64 + 1], |r| r.get(0))
                    .unwrap();
                let found =
                    Walked::keep(|w| value_runs(&file, root, (i as i64 + 1, KeyColumn::Rowid), w));
                let Lookup::Found(runs) = found else {
                    panic!("page {page_size} reserved {reserved} size {n}: not found");
                };
                let got: Vec<u8> = runs
                    .iter()
                    .flat_map(|r| file[r.clone()].iter().copied())
                    .collect();
                assert!(got == want, "page {page_size} reserved {reserved} size {n}");
                // The blog's table: the id comes before the value.
                let rowid: i64 = conn
                    .query_row("SELECT rowid FROM files WHERE id=?1", [text_id(i)], |r| {
                        r.get(0)
                    })
                    .unwrap();
                let found =
                    Walked::keep(|w| value_runs(&file, files_root, (rowid, KeyColumn::Text), w));
                let Lookup::Found(runs) = found else {
                    panic!("files: page {page_size} reserved {reserved} size {n}: not found");
                };
                let got: Vec<u8> = runs
                    .iter()
                    .flat_map(|r| file[r.clone()].iter().copied())
                    .collect();
                assert!(
                    got == want,
                    "files: page {page_size} size {n} id {}",
                    text_id(i).len()
                );
            }
            assert_eq!(
                Walked::keep(|w| value_runs(&file, root, (10_000, KeyColumn::Rowid), w)),
                Lookup::Absent
            );
        }
    }

    /// Ids of several lengths, a few long enough to push the value's
    /// start past the bytes the leaf page keeps.
    fn text_id(i: usize) -> String {
        format!("{:0w$}", i + 1, w = 6 + (i * 997) % 1500)
    }

    #[test]
    fn a_large_value_hands_back_every_page_it_walked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA page_size=4096; CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);
             INSERT INTO kv VALUES(1, zeroblob(3000000));",
        )
        .unwrap();
        let root = root_of(&conn, "kv");
        let file = std::fs::read(&path).unwrap();
        for (over, want_calls) in [(usize::MAX, 0), (1_000_000, 3)] {
            let walk = recorded_walk(&file, root, 1, over);
            assert_eq!(walk.released.len(), want_calls, "over {over}");
            if want_calls > 0 {
                assert!(overflow_within(&walk.runs, &walk.released));
            }
        }
    }

    /// What a walk of row `k` found, and the file ranges it handed to
    /// `release` (values over `over` bytes) and to `map_ahead`.
    struct RecordedWalk {
        runs: Vec<Range<usize>>,
        released: Vec<Range<usize>>,
        ahead: Vec<Range<usize>>,
    }

    /// Walks row `k`, recording what the walk hands to its callbacks.
    fn recorded_walk(file: &[u8], root: u64, k: i64, over: usize) -> RecordedWalk {
        let (mut released, mut ahead) = (Vec::new(), Vec::new());
        let found = value_runs(
            file,
            root,
            (k, KeyColumn::Rowid),
            &mut Walked {
                max: usize::MAX,
                over,
                release: &mut |r| released.push(r),
                map_ahead: &mut |r| ahead.push(r),
            },
        );
        let Lookup::Found(runs) = found else {
            panic!("{found:?}")
        };
        RecordedWalk {
            runs,
            released,
            ahead,
        }
    }

    /// Whether every overflow run (all runs but the leaf's first) lies
    /// within one of `ranges`.
    fn overflow_within(runs: &[Range<usize>], ranges: &[Range<usize>]) -> bool {
        runs[1..].iter().all(|run| {
            ranges
                .iter()
                .any(|r| r.start <= run.start && run.end <= r.end)
        })
    }

    /// A chain written in one go is mapped ahead a chunk at a time, and
    /// those chunks hold every page it takes; a chain scattered over freed
    /// pages stops being guessed at after two guesses that broke at once.
    #[test]
    fn a_chain_is_mapped_ahead_where_it_follows_on_and_not_where_scattered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA page_size=4096; PRAGMA journal_mode=delete;
             CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);
             INSERT INTO kv VALUES(1, zeroblob(3000000));",
        )
        .unwrap();
        // Blobs of three pages each; every other one deleted leaves the
        // free pages in runs of three, which the next large blob takes.
        for k in 2..400 {
            conn.execute("INSERT INTO kv VALUES(?1, zeroblob(12000))", [k])
                .unwrap();
        }
        conn.execute("DELETE FROM kv WHERE k % 2 = 0 AND k < 400", [])
            .unwrap();
        conn.execute("INSERT INTO kv VALUES(1000, zeroblob(2000000))", [])
            .unwrap();
        let root = root_of(&conn, "kv");
        let file = std::fs::read(&path).unwrap();
        let RecordedWalk { runs, ahead, .. } = recorded_walk(&file, root, 1, usize::MAX);
        let pages = runs.len() - 1;
        assert_eq!(ahead.len(), pages.div_ceil(RELEASE_EVERY), "{ahead:?}");
        assert!(overflow_within(&runs, &ahead));
        let RecordedWalk { runs, ahead, .. } = recorded_walk(&file, root, 1000, usize::MAX);
        let scattered = crate::measure::fragments::page_runs(&runs[1..], 4096);
        assert!(
            scattered > 100,
            "the large blob took the freed pages: {scattered} runs"
        );
        assert!(ahead.len() <= 2, "{} guesses: {ahead:?}", ahead.len());
    }

    #[test]
    fn anything_unexpected_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB, extra);
             INSERT INTO kv VALUES(1, x'0102', 3);
             CREATE TABLE w(k INTEGER PRIMARY KEY, v BLOB);
             INSERT INTO w VALUES(1, x'0102');
             CREATE TABLE t(k TEXT PRIMARY KEY, v BLOB);
             INSERT INTO t VALUES('000001', x'0102');",
        )
        .unwrap();
        let root = |name: &str| root_of(&conn, name);
        let file = std::fs::read(&path).unwrap();
        assert!(matches!(
            Walked::keep(|w| value_runs(&file, root("kv"), (1, KeyColumn::Rowid), w)),
            Lookup::Unsupported(_)
        ));
        // The key column must be what the caller expects: a text key where
        // the rowid was meant (or the other way) is another table.
        assert!(matches!(
            Walked::keep(|w| value_runs(&file, root("t"), (1, KeyColumn::Rowid), w)),
            Lookup::Unsupported(_)
        ));
        assert!(matches!(
            Walked::keep(|w| value_runs(&file, root("w"), (1, KeyColumn::Text), w)),
            Lookup::Unsupported(_)
        ));
        assert!(matches!(
            Walked::keep(|w| value_runs(&file, root("t"), (1, KeyColumn::Text), w)),
            Lookup::Found(_)
        ));
        assert!(matches!(
            Walked::keep(|w| value_runs(&file[..50], root("w"), (1, KeyColumn::Rowid), w)),
            Lookup::Unsupported(_)
        ));
        // A WAL database's file may not hold the newest pages.
        conn.execute_batch("PRAGMA journal_mode=wal").unwrap();
        let file = std::fs::read(&path).unwrap();
        assert_eq!(
            Walked::keep(|w| value_runs(&file, root("w"), (1, KeyColumn::Rowid), w)),
            Lookup::Unsupported("WAL mode")
        );
    }
}
