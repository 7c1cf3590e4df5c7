//! Blobs held in this process's memory, as target `memory:NAME`.
//!
//! A process-wide registry maps each NAME to its data, so that every
//! `store::open` of the same name in one process sees the same blobs, as
//! every open of a file sees the same file. It exists to test the executor
//! and the code above the stores without files or servers; it keeps the
//! whole Store/Session contract (read-only access refuses writes, a missing
//! key is `Error::MissingKey`, catalog from the manifest or a scan, space =
//! the bytes held). Writes apply at once: there is no rollback.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use serde_json::{Map, json};

use super::contract::{
    Access, CacheControl, Catalog, Engine, Serving, Session, SessionCore, SessionOptions,
    Snapshots, Space, StoreCore, StoreInfo, first_key_from_one, missing_key,
};
use crate::dataset::Manifest;
use crate::error::{Error, Result};

/// One named dataset: the blobs by key and the manifest it was made with.
#[derive(Default)]
struct Data {
    blobs: BTreeMap<u64, Vec<u8>>,
    manifest: Option<Manifest>,
    /// The ledger of acknowledged versions, as text.
    ledger: Option<String>,
    /// Transactions ended by commit, by every session: what a run's
    /// transaction grouping did, seen from the store.
    commits: u64,
}

type Shared = Arc<Mutex<Data>>;

static REGISTRY: LazyLock<Mutex<HashMap<String, Shared>>> = LazyLock::new(Default::default);

/// Locks one dataset. A panic while it was held (a failed test) leaves the
/// map itself sound, so the poison is ignored.
fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|p| p.into_inner())
}

fn registry() -> MutexGuard<'static, HashMap<String, Shared>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Transactions committed on the memory dataset `name` so far (0 when
/// there is none).
#[cfg(test)]
pub fn commits(name: &str) -> u64 {
    registry().get(name).map_or(0, |d| lock(d).commits)
}

/// A memory dataset opened for reading or for reading and writing.
pub struct MemoryStore {
    name: PathBuf,
    data: Shared,
    access: Access,
}

impl MemoryStore {
    /// Opens the dataset `name` made earlier in this process.
    pub fn open(name: &str, access: Access) -> Result<Self> {
        let data = registry().get(name).cloned().ok_or_else(|| {
            Error::usage(format!(
                "target \"memory:{name}\" does not exist in this process (memory datasets live only as long as the process that made them; create it with store::create first)"
            ))
        })?;
        Ok(MemoryStore {
            name: PathBuf::from(name),
            data,
            access,
        })
    }

    /// Makes a fresh, empty dataset `name`, replacing any earlier one of
    /// that name (every memory dataset is blobbench's own).
    pub fn create(name: &str, manifest: &Manifest) -> Result<Self> {
        let data = Arc::new(Mutex::new(Data {
            blobs: BTreeMap::new(),
            manifest: Some(manifest.clone()),
            ..Data::default()
        }));
        registry().insert(name.to_string(), data.clone());
        Ok(MemoryStore {
            name: PathBuf::from(name),
            data,
            access: Access::ReadWrite,
        })
    }

    /// Forgets the dataset `name`; true when there was one.
    pub fn remove(name: &str) -> bool {
        registry().remove(name).is_some()
    }
}

impl StoreCore for MemoryStore {
    fn info(&self) -> StoreInfo {
        let mut settings = Map::new();
        settings.insert("access".into(), json!(self.access.label()));
        StoreInfo {
            kind: "memory".into(),
            path: self.name.clone(),
            settings,
            version: None,
        }
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        lock(&self.data).manifest = Some(manifest.clone());
        Ok(())
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        Ok(lock(&self.data).ledger.clone())
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        lock(&self.data).ledger = Some(text.to_string());
        Ok(())
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let data = lock(&self.data);
        if let Some(m) = &data.manifest {
            m.require_complete(&format!("memory:{}", self.name.display()))?;
        }
        let (Some((&first, _)), Some((&last, last_blob))) =
            (data.blobs.first_key_value(), data.blobs.last_key_value())
        else {
            return Err(Error::usage(format!(
                "\"memory:{}\" holds no blobs",
                self.name.display()
            )));
        };
        first_key_from_one(&self.name, i64::try_from(first).unwrap_or(i64::MAX))?;
        let count = data.blobs.len() as u64;
        // The manifest drives --verify only while it still describes the blobs.
        let manifest = data.manifest.clone().filter(|m| {
            m.first_key == first
                && m.last_key == last
                && m.count == count
                && m.spec
                    .as_ref()
                    .is_none_or(|s| s.size_of(last) == last_blob.len())
        });
        Ok(Catalog::found(first, last, count, manifest))
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        let _ = options;
        Ok(Box::new(MemorySession {
            data: &self.data,
            name: &self.name,
            access: self.access,
        }))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }

    fn describe_writes(&self, _options: &SessionOptions) -> String {
        "the blob's bytes replaced in this process's memory".into()
    }
}

impl Engine for MemoryStore {
    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Process)
    }
}

impl Space for MemoryStore {
    fn space_used(&self) -> Result<u64> {
        Ok(lock(&self.data)
            .blobs
            .values()
            .map(|b| b.len() as u64)
            .sum())
    }
}

/// Work on a memory dataset; every operation takes the dataset's lock.
struct MemorySession<'a> {
    data: &'a Shared,
    name: &'a Path,
    access: Access,
}

impl MemorySession<'_> {
    fn writable(&self) -> Result<MutexGuard<'_, Data>> {
        if self.access == Access::ReadOnly {
            return Err(Error::usage(format!(
                "memory:{}: opened read-only; this run may not write",
                self.name.display()
            )));
        }
        Ok(lock(self.data))
    }
}

impl SessionCore for MemorySession<'_> {
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let data = lock(self.data);
        let blob = data
            .blobs
            .get(&key)
            .ok_or_else(|| missing_key(key, self.name))?;
        sink(blob);
        Ok(())
    }

    fn update(&mut self, key: u64, new: &[u8]) -> Result<()> {
        let name = self.name;
        let mut data = self.writable()?;
        let blob = data
            .blobs
            .get_mut(&key)
            .ok_or_else(|| missing_key(key, name))?;
        blob.clear();
        blob.extend_from_slice(new);
        Ok(())
    }

    fn insert(&mut self, key: u64, new: &[u8]) -> Result<()> {
        let name = self.name;
        let mut data = self.writable()?;
        if data.blobs.contains_key(&key) {
            return Err(Error::usage(format!(
                "memory:{}: key {key} exists already; insert adds new keys only",
                name.display()
            )));
        }
        data.blobs.insert(key, new.to_vec());
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        let name = self.name;
        let mut data = self.writable()?;
        data.blobs
            .remove(&key)
            .map(drop)
            .ok_or_else(|| missing_key(key, name))
    }

    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        Ok(lock(self.data).blobs.get(&key).map(|b| b.len() as u64))
    }

    fn begin(&mut self) -> Result<()> {
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        lock(self.data).commits += 1;
        Ok(())
    }
}

impl Serving for MemorySession<'_> {}

impl Snapshots for MemorySession<'_> {}
