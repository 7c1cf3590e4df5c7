//! S3 targets: `s3://BUCKET/PREFIX?endpoint=URL&region=R&part_size=N`.
//!
//! One object per blob, `PREFIX/000042` (the name a folder of files gives
//! key 42), beside the dataset's manifest `PREFIX/blobbench-manifest.json`.
//! The client is the `object_store` crate's S3 client (reqwest over
//! rustls), but for a run's whole-object reads over http:// (`direct_get`):
//! every request is signed with the credentials of the usual AWS
//! environment variables or profile, never recorded. Nothing above this
//! module knows that S3 exists.
//!
//! Every wait is bounded (`timeout=`, `connect_timeout=`: 10 s and 2 s
//! unless the target says), and a benchmark must see every failure, so
//! the client retries a request only when `retries=N` asks, and never past
//! its timeout: a failed request is a failed operation, classified (a
//! timeout, a lost connection, an HTTP status with S3's error code). An
//! object larger than the part size is uploaded in parts (multipart
//! upload), several at once.

mod client;
mod direct_get;
mod exec;
pub(crate) mod seaweedfs;
mod session;
mod topology;

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use object_store::aws::AmazonS3;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use serde_json::{Map, Value};

use super::contract::{
    Access, CacheControl, Catalog, Engine, Session, SessionOptions, Space, StoreCore, StoreInfo,
    first_key_from_one,
};
use crate::dataset::Manifest;
use crate::error::{Error, FailureClass, Result};
use crate::target::S3Location;
use exec::Exec;

pub(crate) use client::part_size_words;

/// A session's clients of the target, from one reading of its settings
/// and credentials: object_store's, and when `direct` is asked the direct
/// path for whole-object GETs where it applies (configured as
/// object_store's client is: endpoint, keys, region).
fn session_clients(
    location: &S3Location,
    direct: bool,
) -> Result<(Bucket, Option<direct_get::DirectGet>)> {
    let (builder, credentials) = client::configured(location)?;
    let direct = direct
        .then(|| direct_get::DirectGet::new(location, &builder))
        .flatten();
    Ok((client::build(location, builder, credentials)?, direct))
}

/// The manifest's object name inside the prefix.
const MANIFEST: &str = "blobbench-manifest.json";
/// The ledger of acknowledged versions' object name inside the prefix.
const LEDGER: &str = "blobbench-ledger.json";

/// Part uploads of one multipart upload in flight at once (the AWS CLI's
/// max_concurrent_requests is 10; rclone's --s3-upload-concurrency is 4).
pub const PARTS_IN_FLIGHT: usize = 8;

/// An S3 bucket prefix holding one object per blob.
pub struct S3Store {
    bucket: Arc<Bucket>,
    exec: Exec,
    access: Access,
    /// The server's `Server` header, as it names itself (name and version).
    server: Option<String>,
    /// What the topology URL reported, summarised; None without one.
    topology: Option<Map<String, Value>>,
}

/// The location and the client of one store, shared with its sessions.
pub(crate) struct Bucket {
    /// Where the objects are.
    pub(crate) location: S3Location,
    /// Signed requests to the bucket.
    pub(crate) client: Arc<AmazonS3>,
    /// Where the credentials came from, in words (never the secret).
    pub(crate) credentials: String,
}

impl Bucket {
    /// The object that holds blob `key`.
    pub(crate) fn object(&self, key: u64) -> ObjectPath {
        self.named(&blob_name(key))
    }

    /// The object `name` inside the prefix.
    fn named(&self, name: &str) -> ObjectPath {
        if self.location.prefix.is_empty() {
            ObjectPath::from(name)
        } else {
            ObjectPath::from(format!("{}/{name}", self.location.prefix))
        }
    }

    /// The prefix as a path to list under (None: the whole bucket).
    fn prefix(&self) -> Option<ObjectPath> {
        (!self.location.prefix.is_empty()).then(|| ObjectPath::from(self.location.prefix.as_str()))
    }

    /// The target as written in messages.
    pub(crate) fn display(&self) -> &std::path::Path {
        &self.location.display
    }

    /// The bound on one request, its retries included.
    pub(crate) fn limit(&self) -> std::time::Duration {
        self.location.waits.timeout()
    }

    /// A failed request as blobbench's error: a failed operation of its
    /// class, or the user's to fix (access, a missing bucket).
    pub(crate) fn failure(&self, e: object_store::Error) -> Error {
        client::s3_error(self.display(), &self.location.waits, e)
    }
}

/// What a listing of the prefix found.
#[derive(Debug, Default)]
struct Listing {
    /// Blob keys with their object sizes.
    keys: Vec<(u64, u64)>,
    /// Whether the manifest object is there.
    manifest: bool,
    /// Whether the ledger object is there.
    ledger: bool,
    /// Some object that is neither a blob, the manifest nor the ledger.
    foreign: Option<String>,
}

impl S3Store {
    /// Opens the dataset under the target's prefix (the bucket must exist).
    /// Every request it makes is bounded by the target's timeouts.
    pub fn open(location: &S3Location, access: Access) -> Result<Self> {
        let exec = Exec::for_this_thread(&location.display)?;
        let bucket = Arc::new(client::connect(location)?);
        let topology = match &location.topology {
            Some(url) => Some(exec.run(topology::fetch(url.clone())).map_err(|why| {
                Error::usage(format!(
                    "{}: topology={url}: {why}; name the master's /dir/status URL or drop topology=",
                    location.display.display()
                ))
            })?),
            None => None,
        };
        let mut store = S3Store {
            bucket,
            exec,
            access,
            server: None,
            topology,
        };
        // Reaches the server now, so a wrong endpoint, bucket or key fails
        // here with its fix, not in the middle of a run (and before the
        // server's name is asked, which would wait as long again).
        store.reach().map_err(|e| opening_error(e, location))?;
        store.server = client::server_name_once(&store.exec, location);
        Ok(store)
    }

    /// Creates an empty dataset under the prefix, refusing to replace
    /// anything blobbench did not make: a prefix holding other objects, or
    /// blobs without a manifest.
    pub fn create(location: &S3Location, manifest: &Manifest) -> Result<Self> {
        let store = S3Store::open(location, Access::ReadWrite)?;
        let listing = store.list()?;
        let here = store.bucket.display().display().to_string();
        if let Some(other) = &listing.foreign {
            return Err(Error::usage(format!(
                "{here}: the prefix holds {other}, which blobbench did not make; name another prefix (s3://{}/NEW-PREFIX)",
                location.bucket
            )));
        }
        if !listing.keys.is_empty() && !listing.manifest {
            return Err(Error::usage(format!(
                "{here}: the prefix holds blob-named objects but no blobbench manifest; name another prefix (s3://{}/NEW-PREFIX)",
                location.bucket
            )));
        }
        let objects: Vec<ObjectPath> = listing
            .keys
            .iter()
            .map(|&(k, _)| store.bucket.object(k))
            .chain(listing.ledger.then(|| store.bucket.named(LEDGER)))
            .collect();
        store.remove(objects)?;
        store.put_manifest(manifest)?;
        Ok(store)
    }

    /// Asks for one name of the prefix's listing: one request with a
    /// one-entry answer, which fails as a whole listing would (no server,
    /// no bucket, a wrong key) whatever the number of objects. Each thread
    /// of a run opens the store: a million objects are a thousand pages,
    /// and even one page of 1000 names costs each thread a share of a
    /// short run's CPU to parse.
    fn reach(&self) -> Result<()> {
        let bucket = self.bucket.clone();
        self.exec
            .run(async move {
                use object_store::list::{PaginatedListOptions, PaginatedListStore};
                let prefix = bucket.prefix().map(|p| format!("{p}/"));
                let options = PaginatedListOptions {
                    max_keys: Some(1),
                    ..PaginatedListOptions::default()
                };
                let list = bucket.client.list_paginated(prefix.as_deref(), options);
                client::within(bucket.limit(), list).await?;
                Ok(())
            })
            .map_err(|e| self.bucket.failure(e))
    }

    /// Every object under the prefix, sorted into blobs, the manifest and
    /// the rest.
    fn list(&self) -> Result<Listing> {
        let bucket = self.bucket.clone();
        self.exec
            .run(async move {
                use futures_util::TryStreamExt;
                let prefix = bucket.prefix();
                let mut stream = bucket.client.list(prefix.as_ref());
                let mut listing = Listing::default();
                // Each step waits for at most one page (one request).
                while let Some(meta) = client::within(bucket.limit(), stream.try_next()).await? {
                    let inside = match &prefix {
                        Some(p) => meta.location.prefix_match(p).map(|parts| parts.collect()),
                        None => Some(meta.location.parts().collect::<Vec<_>>()),
                    };
                    let name = match inside.as_deref() {
                        Some([one]) => one.as_ref().to_string(),
                        _ => String::new(),
                    };
                    match blob_key(&name) {
                        Some(key) => listing.keys.push((key, meta.size)),
                        None if name == MANIFEST => listing.manifest = true,
                        None if name == LEDGER => listing.ledger = true,
                        None => {
                            listing
                                .foreign
                                .get_or_insert_with(|| meta.location.to_string());
                        }
                    }
                }
                Ok(listing)
            })
            .map_err(|e| self.bucket.failure(e))
    }

    /// Deletes `objects` (blobs this dataset made).
    fn remove(&self, objects: Vec<ObjectPath>) -> Result<()> {
        let bucket = self.bucket.clone();
        self.exec
            .run(async move {
                for object in objects {
                    match client::within(bucket.limit(), bucket.client.delete(&object)).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            })
            .map_err(|e| self.bucket.failure(e))
    }

    fn put_manifest(&self, manifest: &Manifest) -> Result<()> {
        self.put_named(MANIFEST, manifest.to_json())
    }

    fn read_manifest(&self) -> Result<Option<Manifest>> {
        let text = self.get_named(MANIFEST)?;
        Ok(text.as_deref().and_then(Manifest::parse))
    }

    /// Writes the object `name` of the prefix (the manifest, the ledger).
    fn put_named(&self, name: &'static str, text: String) -> Result<()> {
        let bucket = self.bucket.clone();
        let body = Bytes::from(text);
        self.exec
            .run(async move {
                let path = bucket.named(name);
                let put = bucket.client.put(&path, body.into());
                client::within(bucket.limit(), put).await.map(|_| ())
            })
            .map_err(|e| self.bucket.failure(e))
    }

    /// The text of the object `name` of the prefix, or None where it is not.
    fn get_named(&self, name: &'static str) -> Result<Option<String>> {
        let bucket = self.bucket.clone();
        let got = self.exec.run(async move {
            let path = bucket.named(name);
            let get = async { bucket.client.get(&path).await?.bytes().await };
            match client::within(bucket.limit(), get).await {
                Ok(b) => Ok(Some(b)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let bytes = got.map_err(|e| self.bucket.failure(e))?;
        Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }
}

/// An error of the first request to the server, which says whether the
/// server can be reached at all: a connection refused or reset, or no
/// answer within the target's waits (a port that accepts and never
/// answers), is a server that cannot be reached (exit 2 when it ends a
/// command, its own class inside a run), with the question that leads to
/// the fix.
fn opening_error(e: Error, location: &S3Location) -> Error {
    match e {
        Error::Failed {
            target,
            class: class @ (FailureClass::Connection | FailureClass::Timeout),
            message,
        } => Error::unreachable(
            std::path::Path::new(&target),
            class,
            format!(
                "{message}; is the S3 server running at {}? (endpoint= in the target names it)",
                client::endpoint_url(location)
            ),
        ),
        e => e,
    }
}

/// The object name of blob `key` inside the prefix (`000042`: six or more
/// digits, as a folder of files names them).
fn blob_name(key: u64) -> String {
    format!("{key:06}")
}

/// The key of a blob's object name (see [`blob_name`]), None for any
/// other name.
fn blob_key(name: &str) -> Option<u64> {
    if name.len() < 6 || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let key: u64 = name.parse().ok()?;
    (blob_name(key) == name).then_some(key)
}

impl StoreCore for S3Store {
    fn info(&self) -> StoreInfo {
        let location = &self.bucket.location;
        let mut settings = Map::new();
        let mut put = |k: &str, v: Value| {
            settings.insert(k.into(), v);
        };
        put("bucket", Value::from(location.bucket.clone()));
        put("prefix", Value::from(location.prefix.clone()));
        put(
            "endpoint",
            Value::from(location.endpoint.clone().unwrap_or_else(|| "AWS".into())),
        );
        put("region", Value::from(client::region(location)));
        put("part_size", Value::from(location.part_size));
        put(
            "multipart",
            Value::from(format!(
                "objects over {} go up in parts of that size, {PARTS_IN_FLIGHT} parts at once",
                client::part_size_words(location.part_size)
            )),
        );
        put("client", Value::from(client::CLIENT));
        let waits = location.waits;
        put("timeout_ms", Value::from(waits.timeout_ms));
        put("connect_timeout_ms", Value::from(waits.connect_timeout_ms));
        put("retries", Value::from(waits.retries));
        put("waits", Value::from(client::waits_words(&waits)));
        put("credentials", Value::from(self.bucket.credentials.clone()));
        if let Some(server) = &self.server {
            put("server", Value::from(server.clone()));
        }
        if let Some(t) = &self.topology {
            put("topology", Value::Object(t.clone()));
        }
        StoreInfo {
            kind: "s3".into(),
            path: location.display.clone(),
            settings,
            version: self.server.clone(),
        }
    }

    fn catalog(&mut self) -> Result<Catalog> {
        let here = self.bucket.display().display().to_string();
        let manifest = self.read_manifest()?;
        if let Some(m) = &manifest {
            m.require_complete(&here)?;
        }
        let listing = self.list()?;
        let (Some(min), Some(max)) = (
            listing.keys.iter().map(|k| k.0).min(),
            listing.keys.iter().map(|k| k.0).max(),
        ) else {
            return Err(Error::usage(format!(
                "{here}: no blobs under this prefix; make a dataset with `blobbench init {here}`"
            )));
        };
        let count = listing.keys.len() as u64;
        let min = first_key_from_one(self.bucket.display(), min as i64)?;
        let manifest =
            manifest.filter(|m| m.first_key == min && m.last_key == max && m.count == count);
        Ok(Catalog::found(min, max, count, manifest))
    }

    fn session(&mut self, options: SessionOptions) -> Result<Box<dyn Session + '_>> {
        Ok(Box::new(session::S3Session::new(
            self.bucket.clone(),
            Exec::for_this_thread(self.bucket.display())?,
            self.access,
            options,
        )?))
    }

    fn files(&self) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }

    fn describe_writes(&self, _options: &SessionOptions) -> String {
        format!(
            "each write is one PUT of the whole object (multipart above {}), after a HEAD that \
             finds the key for an update; the server decides durability: a PUT returns when it \
             says the object is stored; no transactions, no locks; {}",
            client::part_size_words(self.bucket.location.part_size),
            client::waits_words(&self.bucket.location.waits)
        )
    }

    fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        self.put_manifest(manifest)
    }

    fn read_ledger(&mut self) -> Result<Option<String>> {
        self.get_named(LEDGER)
    }

    fn write_ledger(&mut self, text: &str) -> Result<()> {
        self.put_named(LEDGER, text.to_string())
    }
}

impl Engine for S3Store {
    fn cache_control(&self) -> Result<CacheControl> {
        Ok(CacheControl::Server)
    }

    /// S3 has no transactions and no locks: what a write is, and how long
    /// a request may wait (the only wait an S3 run has).
    fn has_transactions(&self) -> bool {
        false
    }

    /// S3 has no durability setting a client can change: a PUT returns
    /// when the server says the object is stored, however it stores it.
    fn set_durability(&mut self, durable: bool, _server_wide: bool) -> Result<Option<String>> {
        let asked = if durable { "on" } else { "off" };
        Ok(Some(format!(
            "each blob one PUT (multipart above {}); a PUT returns when the server says the object is stored: durability is the server's own (asked: logging {asked}, which S3 cannot change)",
            client::part_size_words(self.bucket.location.part_size)
        )))
    }
}

impl Space for S3Store {
    fn space_used(&self) -> Result<u64> {
        Ok(self.list()?.keys.iter().map(|k| k.1).sum())
    }
}

/// Removes a dataset blobbench made under `location` (its blobs and
/// manifest), for tests and temporary datasets; anything else is left.
pub fn remove_dataset(location: &S3Location) -> Result<()> {
    let store = S3Store::open(location, Access::ReadWrite)?;
    let listing = store.list()?;
    if !listing.manifest {
        return Ok(());
    }
    let mut objects: Vec<ObjectPath> = listing
        .keys
        .iter()
        .map(|&(k, _)| store.bucket.object(k))
        .collect();
    if listing.ledger {
        objects.push(store.bucket.named(LEDGER));
    }
    objects.push(store.bucket.named(MANIFEST));
    store.remove(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_a_folder_of_files_would_give_are_blobs() {
        assert_eq!(blob_key("000042"), Some(42));
        assert_eq!(blob_key("1234567"), Some(1_234_567));
        assert_eq!(blob_key("42"), None);
        assert_eq!(blob_key("0000042"), None);
        assert_eq!(blob_key("00004x"), None);
        assert_eq!(blob_key(MANIFEST), None);
    }
}
