//! One contract, every backend: what code above `store/` may rely on from
//! any Store and Session. Server backends need the servers that
//! `scripts/test.sh` starts (BLOBBENCH_PG_URL, BLOBBENCH_MYSQL_URL); run
//! alone, those cases are ignored.

use blobbench::dataset::{DatasetSpec, Manifest, SizeDistribution};
use blobbench::error::Error;
use blobbench::store::{self, Access, SessionOptions};
use blobbench::target::Target;

pub(crate) const COUNT: u64 = 8;

/// Blobs of distinct sizes, most larger than one read_stream piece.
pub(crate) fn spec() -> DatasetSpec {
    DatasetSpec {
        first_key: 1,
        count: COUNT,
        size: 6000,
        distribution: SizeDistribution::Uniform { variance: 2000 },
        seed: 11,
    }
}

pub(crate) fn blob(spec: &DatasetSpec, key: u64, version: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    spec.fill(key, version, &mut buf);
    buf
}

pub(crate) fn is_missing(e: &Error, want: u64) -> bool {
    matches!(e, Error::MissingKey { key, .. } if *key == want)
}

/// What a backend is, for the parts of the contract that differ.
pub(crate) struct Backend {
    /// Local data: disk space is measured by this process.
    pub(crate) local: bool,
    /// Rows can be updated and deleted (not MySQL's ARCHIVE).
    pub(crate) modifies: bool,
}

/// The contract, run on `text` (a target string).
pub(crate) fn contract(text: &str, backend: Backend) {
    let target = Target::parse(text).unwrap();
    let spec = spec();
    let mut s = store::create(&target, &Manifest::new(spec.clone())).unwrap();
    {
        let mut session = s.session(SessionOptions::default()).unwrap();
        session.begin().unwrap();
        for k in 1..=COUNT {
            session.insert(k, &blob(&spec, k, 0)).unwrap();
        }
        session.commit().unwrap();
        session.checkpoint().unwrap();
    }
    read_contract(s.as_mut(), &spec, text);
    serving_contract(s.as_mut(), &spec, text, backend.modifies);
    modify_contract(s.as_mut(), &spec, text, backend.modifies);
    if backend.local {
        assert!(s.space_used().unwrap() > 0, "{text}: space_used");
    }
    drop(s);

    // Catalog: the keys left, from any fresh open.
    let mut ro = store::open(&target, Access::ReadOnly).unwrap();
    let c = ro.catalog().unwrap();
    let last = if backend.modifies { COUNT - 1 } else { COUNT };
    assert_eq!(
        (c.first_key, c.last_key, c.count),
        (1, last, last),
        "{text}: catalog"
    );
    if !backend.modifies {
        assert!(
            c.manifest.is_some(),
            "{text}: untouched dataset keeps its manifest"
        );
    }
    // Read-only access refuses every write and changes nothing.
    {
        let mut session = ro.session(SessionOptions::default()).unwrap();
        assert!(session.insert(COUNT + 10, b"x").is_err(), "{text}: insert");
        assert!(session.update(1, b"x").is_err(), "{text}: update");
        assert!(session.delete(1).is_err(), "{text}: delete");
        let mut got = Vec::new();
        session.read(1, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, blob(&spec, 1, 0), "{text}: read-only left key 1 alone");
        assert_eq!(session.size(COUNT + 10).unwrap(), None, "{text}");
    }
    // Cleaned up by the store layer, which knows each backend's artifacts.
    store::remove_target(&target);
}

/// read, read_at, read_stream, size, fetch_small and missing keys.
pub(crate) fn read_contract(s: &mut dyn store::Store, spec: &DatasetSpec, text: &str) {
    let mut session = s.session(SessionOptions::default()).unwrap();
    for k in 1..=COUNT {
        let mut got = Vec::new();
        session.read(k, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, blob(spec, k, 0), "{text}: read {k}");
        assert_eq!(
            session.size(k).unwrap(),
            Some(got.len() as u64),
            "{text}: size {k}"
        );
    }
    let want = blob(spec, 3, 0);
    let mut buf = [0u8; 50];
    assert_eq!(session.read_at(3, 100, &mut buf).unwrap(), 50, "{text}");
    assert_eq!(&buf[..], &want[100..150], "{text}: read_at");
    let end = want.len() as u64;
    assert_eq!(
        session.read_at(3, end - 10, &mut buf).unwrap(),
        10,
        "{text}"
    );
    assert_eq!(&buf[..10], &want[want.len() - 10..], "{text}: read_at tail");
    assert_eq!(
        session.read_at(3, end, &mut buf).unwrap(),
        0,
        "{text}: at end"
    );
    let mut streamed = Vec::new();
    let n = session
        .read_stream(3, 10, 1000, 300, &mut |piece| {
            assert!(piece.len() <= 300);
            streamed.extend_from_slice(&piece);
            true
        })
        .unwrap();
    assert_eq!(n, 1000, "{text}: read_stream");
    assert_eq!(streamed, &want[10..1010], "{text}: read_stream bytes");
    let (size, small) = session.fetch_small(3, 1 << 30).unwrap().unwrap();
    assert_eq!((size, small.as_deref()), (end, Some(&want[..])), "{text}");
    assert_eq!(session.fetch_small(3, 10).unwrap(), Some((end, None)));
    // A missing key: its own error, and no size.
    let missing = COUNT + 100;
    let err = session.read(missing, &mut |_| ()).unwrap_err();
    assert!(
        is_missing(&err, missing),
        "{text}: read of a missing key: {err}"
    );
    assert_eq!(err.exit_code(), 2);
    assert_eq!(session.size(missing).unwrap(), None, "{text}: size");
    assert_eq!(session.fetch_small(missing, 10).unwrap(), None, "{text}");
    drop(session);
    // SQLite's incremental blob API (others read as usual): the same bytes,
    // one handle moved from row to row, and the same missing-key error.
    let mut session = s
        .session(SessionOptions {
            read_path: store::ReadPath::BlobApi,
            ..Default::default()
        })
        .unwrap();
    for k in (1..=COUNT).rev() {
        let mut got = Vec::new();
        session.read(k, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, blob(spec, k, 0), "{text}: blob API read {k}");
    }
    let err = session.read(missing, &mut |_| ()).unwrap_err();
    assert!(
        is_missing(&err, missing),
        "{text}: blob API, missing: {err}"
    );
}

/// What a server relies on: reads inside a snapshot give the same bytes;
/// where a store offers a blob as its own open file or as runs of a mapped
/// file, those hold exactly the blob, with the size and tag `etag` gives,
/// asked once or again in the same snapshot, and the blob as rewritten
/// (`modifies`) in the next snapshot; an absent key is None from either.
pub(crate) fn serving_contract(
    s: &mut dyn store::Store,
    spec: &DatasetSpec,
    text: &str,
    modifies: bool,
) {
    use std::io::Read;
    let mut session = s
        .session(SessionOptions {
            per_op_transaction: true,
            ..Default::default()
        })
        .unwrap();
    let held = session.begin_snapshot().unwrap();
    let (mut mapped_blobs, mut files) = (0, 0);
    for k in 1..=COUNT {
        let want = blob(spec, k, 0);
        let (size, small) = session.fetch_small(k, 1 << 30).unwrap().unwrap();
        assert_eq!(
            small.as_deref(),
            Some(&want[..]),
            "{text}: read {k} in a snapshot"
        );
        let tag = session.etag(k, size).unwrap();
        if let Some(mapped) = session.mapped_blob(k, u64::MAX).unwrap() {
            assert!(held, "{text}: mapped runs are only valid inside a snapshot");
            let bytes: Vec<u8> = mapped.runs.slices().flatten().copied().collect();
            assert_eq!(bytes, want, "{text}: mapped blob {k}");
            assert_eq!(
                (mapped.size, mapped.etag.clone()),
                (size, tag.clone()),
                "{text}"
            );
            let pieces = mapped.runs.pieces(5, size - 10, 1000);
            let cut: Vec<u8> = pieces
                .iter()
                .flat_map(|p| p.slices().flatten().copied().collect::<Vec<_>>())
                .collect();
            assert_eq!(
                cut,
                &want[5..want.len() - 5],
                "{text}: pieces of mapped blob {k}"
            );
            assert!(pieces.iter().all(|p| p.len() <= 1000), "{text}");
            mapped_blobs += 1;
            assert!(
                session.mapped_blob(k, size - 1).unwrap().is_none(),
                "{text}: a blob over the size asked for is not mapped"
            );
            let again = session.mapped_blob(k, u64::MAX).unwrap().unwrap();
            assert_eq!(
                again.runs.to_vec().unwrap(),
                want,
                "{text}: mapped blob {k} asked again"
            );
        }
        if let Some(mut file) = session.blob_file(k).unwrap() {
            let mut bytes = Vec::new();
            file.file.read_to_end(&mut bytes).unwrap();
            assert_eq!(bytes, want, "{text}: blob file {k}");
            assert_eq!((file.size, Some(file.etag)), (size, tag), "{text}");
            files += 1;
        }
    }
    // SQLite in its default (rollback) journal mode maps; folders of files
    // give files; the others do neither.
    let (want_mapped, want_files) = match text.split(':').next() {
        Some("sqlite") => (COUNT, 0),
        Some("dir" | "tree") => (0, COUNT),
        _ => (0, 0),
    };
    assert_eq!((mapped_blobs, files), (want_mapped, want_files), "{text}");
    let missing = COUNT + 100;
    assert!(
        session.mapped_blob(missing, u64::MAX).unwrap().is_none(),
        "{text}"
    );
    assert!(session.blob_file(missing).unwrap().is_none(), "{text}");
    session.end_snapshot().unwrap();
    if modifies {
        rewritten_in_the_next_snapshot(session.as_mut(), spec, text);
    }
}

/// A blob rewritten longer after a snapshot ends is, in the next one,
/// mapped or opened as its new bytes: nothing found in the snapshot before
/// (where its pages were) is used again.
pub(crate) fn rewritten_in_the_next_snapshot(
    session: &mut dyn store::Session,
    spec: &DatasetSpec,
    text: &str,
) {
    use std::io::Read;
    let mut new = blob(spec, 3, 5);
    new.extend(blob(spec, 4, 5));
    session.update(3, &new).unwrap();
    session.begin_snapshot().unwrap();
    if let Some(mapped) = session.mapped_blob(3, u64::MAX).unwrap() {
        assert!(
            mapped.runs.to_vec().unwrap() == new,
            "{text}: mapped blob 3 as rewritten"
        );
        assert_eq!(mapped.size, new.len() as u64, "{text}");
    }
    if let Some(mut file) = session.blob_file(3).unwrap() {
        let mut bytes = Vec::new();
        file.file.read_to_end(&mut bytes).unwrap();
        assert!(bytes == new, "{text}: blob file 3 as rewritten");
    }
    session.end_snapshot().unwrap();
}

/// update and delete, or a clear refusal where the store cannot.
pub(crate) fn modify_contract(
    s: &mut dyn store::Store,
    spec: &DatasetSpec,
    text: &str,
    modifies: bool,
) {
    let capable = s.can_modify();
    let mut session = s.session(SessionOptions::default()).unwrap();
    let new = blob(spec, 2, 9);
    if !modifies {
        let why = capable.unwrap_err().to_string();
        assert!(why.contains("ARCHIVE"), "{text}: {why}");
        let err = session.update(2, &new).unwrap_err().to_string();
        assert!(err.contains("ARCHIVE"), "{text}: {err}");
        assert!(session.delete(2).is_err(), "{text}: delete");
        return;
    }
    capable.unwrap();
    session.update(2, &new).unwrap();
    let mut got = Vec::new();
    session.read(2, &mut |d| got = d.to_vec()).unwrap();
    assert_eq!(got, new, "{text}: update then read");
    session.delete(COUNT).unwrap();
    let err = session.read(COUNT, &mut |_| ()).unwrap_err();
    assert!(is_missing(&err, COUNT), "{text}: read after delete: {err}");
    assert_eq!(
        session.size(COUNT).unwrap(),
        None,
        "{text}: size after delete"
    );
    let missing = COUNT + 100;
    let err = session.update(missing, &new).unwrap_err();
    assert!(is_missing(&err, missing), "{text}: update missing: {err}");
    let err = session.delete(missing).unwrap_err();
    assert!(is_missing(&err, missing), "{text}: delete missing: {err}");
}

/// A local target string in a fresh temporary folder; the folder lives as
/// long as the returned guard.
pub(crate) fn local(scheme: &str, name: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("{scheme}:{}", tmp.path().join(name).display());
    (tmp, text)
}

macro_rules! local_backend {
    ($test:ident, $scheme:literal, $name:literal) => {
        #[test]
        fn $test() {
            let (_tmp, text) = local($scheme, $name);
            contract(
                &text,
                Backend {
                    local: true,
                    modifies: true,
                },
            );
        }
    };
}

local_backend!(sqlite, "sqlite", "c.db");
local_backend!(sqlite_blog, "sqlite", "c.db?layout=blog");
local_backend!(sqlite_ext, "sqlite-ext", "c.db");
local_backend!(dir, "dir", "c.dir");
local_backend!(tree, "tree", "c.tree");

#[test]
pub(crate) fn memory() {
    contract(
        "memory:conformance",
        Backend {
            local: true,
            modifies: true,
        },
    );
}

/// Copies between unlike stores keep every blob: a database into memory,
/// memory into a tree, and back.
#[test]
pub(crate) fn copy_between_any_two_stores() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec();
    let db = Target::parse(&format!("sqlite:{}", tmp.path().join("a.db").display())).unwrap();
    store::create_dataset(&db, &spec, &blobbench::progress::Silent).unwrap();
    let mem = Target::parse("memory:conformance-copy").unwrap();
    let tree = Target::parse(&format!("tree:{}", tmp.path().join("t").display())).unwrap();
    let blog = tmp.path().join("b.db").display().to_string();
    let blog = Target::parse(&format!("sqlite:{blog}?layout=blog")).unwrap();
    for (from, to) in [(&db, &mem), (&mem, &blog), (&blog, &tree)] {
        let (n, bytes) = store::copy(from, to, &blobbench::progress::Silent).unwrap();
        assert_eq!((n, bytes), (COUNT, spec.total_bytes()), "{from} -> {to}");
    }
    let mut s = store::open(&tree, Access::ReadOnly).unwrap();
    let c = s.catalog().unwrap();
    assert_eq!(c.manifest.and_then(|m| m.spec), Some(spec.clone()));
    let mut session = s.session(SessionOptions::default()).unwrap();
    for k in 1..=COUNT {
        let mut got = Vec::new();
        session.read(k, &mut |d| got = d.to_vec()).unwrap();
        assert_eq!(got, blob(&spec, k, 0));
    }
    // A copy onto its own source is refused before anything is cleared.
    assert!(matches!(
        store::copy(&tree, &tree, &blobbench::progress::Silent),
        Err(Error::Usage(_))
    ));
    store::remove_target(&mem);
    assert!(store::open(&mem, Access::ReadOnly).is_err());
    // remove_dataset takes a database with its sidecars and external files.
    let ext = tmp.path().join("e.db");
    let ext_target = Target::parse(&format!("sqlite-ext:{}", ext.display())).unwrap();
    store::create_dataset(&ext_target, &spec, &blobbench::progress::Silent).unwrap();
    assert!(tmp.path().join("e.db.files").is_dir());
    store::remove_dataset(&ext);
    assert!(!ext.exists() && !tmp.path().join("e.db.files").exists());
}
