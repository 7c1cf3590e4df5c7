//! Work on an S3 bucket: each operation is one or two requests, run to
//! the end before the call returns, each within the target's timeout
//! (`client::within`), and each failure classified (`Bucket::failure`).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::WriteMultipart;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use super::client::within;
use super::direct_get::DirectGet;
use super::exec::Exec;
use super::{Bucket, PARTS_IN_FLIGHT};
use crate::error::{Error, FailureClass, Result};
use crate::store::contract::{
    Access, Serving, SessionCore, SessionOptions, Snapshots, missing_key,
};
use crate::store::etag::fingerprint;

type S3Result<T> = std::result::Result<T, object_store::Error>;

/// One thread's work on the bucket, with a client (and its connections)
/// of its own runtime.
pub(crate) struct S3Session {
    bucket: Arc<Bucket>,
    exec: Exec,
    access: Access,
    _options: SessionOptions,
    /// The last read's bytes: kept, so a read reuses its memory instead of
    /// allocating (and the kernel zeroing) a new one each time.
    buffer: Vec<u8>,
    /// The last object whose tag an answer gave (key, size, ETag): what
    /// `etag` hands out for that version without asking again.
    tagged: Option<(u64, u64, String)>,
    /// Whole-object GETs without object_store, on a blocking socket: where
    /// the endpoint and the keys allow it and this thread is no runtime's
    /// worker (whose blocking would stall the runtime's other tasks).
    direct: Option<DirectGet>,
}

impl S3Session {
    /// A session on `bucket` whose requests run on `exec`.
    pub(crate) fn new(
        bucket: Arc<Bucket>,
        exec: Exec,
        access: Access,
        options: SessionOptions,
    ) -> Result<Self> {
        // Each session signs with a client of its own: a client's pooled
        // connections belong to the runtime that opened them, and the
        // store's runtime is not driven while a session runs.
        let (bucket, direct) = super::session_clients(&bucket.location, exec.drives_here())?;
        let bucket = Arc::new(bucket);
        Ok(S3Session {
            bucket,
            exec,
            access,
            _options: options,
            buffer: Vec::new(),
            tagged: None,
            direct,
        })
    }

    /// Runs a request on the object of `key`, mapping "not found" to the
    /// missing-key error.
    fn request<T: Send + 'static, F>(
        &self,
        key: u64,
        make: impl FnOnce(Arc<Bucket>, ObjectPath) -> F,
    ) -> Result<T>
    where
        F: std::future::Future<Output = S3Result<T>> + Send + 'static,
    {
        let future = make(self.bucket.clone(), self.bucket.object(key));
        let limit = self.bucket.limit();
        match self.exec.run(within(limit, future)) {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failure(key, e)),
        }
    }

    /// A failed request's error: "not found" as the missing key, anything
    /// else classified.
    fn failure(&self, key: u64, e: object_store::Error) -> Error {
        match e {
            object_store::Error::NotFound { .. } => missing_key(key, self.bucket.display()),
            e => self.bucket.failure(e),
        }
    }

    /// Keeps the tag an answer gave for `key`'s version of `size` bytes.
    fn remember(&mut self, key: u64, size: u64, e_tag: Option<String>) {
        self.tagged = e_tag.map(|t| (key, size, validator(&t)));
    }

    /// A GET of `key` on the direct path (which the caller checked is
    /// there), its body to `sink` as it arrives.
    fn read_direct(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let direct = self.direct.as_mut().expect("checked by the caller");
        match direct.get(&super::blob_name(key), sink) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failure(key, e)),
        }
    }

    fn writable(&self) -> Result<()> {
        if self.access == Access::ReadOnly {
            return Err(Error::usage(format!(
                "{}: opened read-only; this run may not write",
                self.bucket.display().display()
            )));
        }
        Ok(())
    }

    /// The object's size (its tag kept), or None when it is absent.
    fn head(&mut self, key: u64) -> Result<Option<u64>> {
        match self.request(key, |b, path| async move { b.client.head(&path).await }) {
            Ok(meta) => {
                self.remember(key, meta.size, meta.e_tag);
                Ok(Some(meta.size))
            }
            Err(Error::MissingKey { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One PUT (or a multipart upload, bounded as one request per part,
    /// one after another); the new version's tag is kept.
    fn put(&mut self, key: u64, data: &[u8]) -> Result<()> {
        let size = data.len() as u64;
        let data = Bytes::copy_from_slice(data);
        let part = self.bucket.location.part_size as usize;
        let requests = data.len().div_ceil(part.max(1)) as u32 + 2;
        let limit = self.bucket.limit() * requests;
        let future = put_object(self.bucket.clone(), self.bucket.object(key), data, part);
        match self.exec.run(within(limit, future)) {
            Ok(done) => {
                self.remember(key, size, done.e_tag);
                Ok(())
            }
            Err(e) => Err(self.failure(key, e)),
        }
    }
}

/// An S3 ETag as an HTTP strong validator: as the server gave it when it
/// is one (`"9b2cf535f27731c974343645a3985328"`, multipart ones with
/// `-3`), quoted when the server left the quotes off, else a fingerprint
/// of its bytes; never weak, so If-Range can use it.
fn validator(e_tag: &str) -> String {
    let etagc = |c: char| c == '!' || ('#'..='~').contains(&c);
    let inner = e_tag.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
    match inner {
        Some(t) if t.chars().all(etagc) => e_tag.to_string(),
        None if !e_tag.is_empty() && e_tag.chars().all(etagc) => format!("\"{e_tag}\""),
        _ => {
            let words: Vec<u64> = e_tag.bytes().map(u64::from).collect();
            fingerprint(&words)
        }
    }
}

/// PUT of the whole object, or a multipart upload of parts of `part`
/// bytes (at most [`PARTS_IN_FLIGHT`] at once) when it is larger.
async fn put_object(
    bucket: Arc<Bucket>,
    path: ObjectPath,
    data: Bytes,
    part: usize,
) -> S3Result<object_store::PutResult> {
    if data.len() <= part {
        return bucket.client.put(&path, data.into()).await;
    }
    let upload = bucket.client.put_multipart(&path).await?;
    let mut parts = WriteMultipart::new_with_chunk_size(upload, part);
    let mut rest = data;
    while !rest.is_empty() {
        if let Err(e) = parts.wait_for_capacity(PARTS_IN_FLIGHT).await {
            let _ = parts.abort().await;
            return Err(e);
        }
        let piece = rest.split_to(part.min(rest.len()));
        parts.put(piece);
    }
    parts.finish().await
}

/// GET of the whole object into `buffer` (emptied first); the buffer comes
/// back whatever happened, to be used again.
async fn gather(
    bucket: Arc<Bucket>,
    path: ObjectPath,
    mut buffer: Vec<u8>,
) -> (Vec<u8>, S3Result<()>) {
    buffer.clear();
    let request = async {
        let got = bucket.client.get(&path).await?;
        buffer.reserve(got.meta.size as usize);
        let mut body = got.into_stream();
        while let Some(chunk) = body.next().await {
            buffer.extend_from_slice(&chunk?);
        }
        Ok(())
    };
    let result = within(bucket.limit(), request).await;
    (buffer, result)
}

/// GET of bytes [from, to) of the object.
async fn get_range(
    bucket: Arc<Bucket>,
    path: ObjectPath,
    from: u64,
    to: u64,
) -> S3Result<object_store::GetResult> {
    let options = GetOptions {
        range: Some(GetRange::Bounded(from..to)),
        ..GetOptions::default()
    };
    bucket.client.get_opts(&path, options).await
}

impl SessionCore for S3Session {
    /// One GET, its body gathered into the session's buffer as it arrives.
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        if self.direct.is_some() {
            let mut buffer = std::mem::take(&mut self.buffer);
            buffer.clear();
            let got = self.read_direct(key, &mut |piece| buffer.extend_from_slice(piece));
            self.buffer = buffer;
            got?;
            sink(&self.buffer);
            return Ok(());
        }
        let buffer = std::mem::take(&mut self.buffer);
        let (buffer, got) =
            self.exec
                .run(gather(self.bucket.clone(), self.bucket.object(key), buffer));
        self.buffer = buffer;
        match got {
            Ok(()) => {
                sink(&self.buffer);
                Ok(())
            }
            Err(e) => Err(self.failure(key, e)),
        }
    }

    /// One GET whose body goes to `sink` chunk by chunk as it arrives
    /// (no gathering copy); on a thread inside another runtime, `read`.
    fn read_pieces(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        if self.direct.is_some() {
            return self.read_direct(key, sink);
        }
        let (bucket, path) = (self.bucket.clone(), self.bucket.object(key));
        let request = async {
            let mut body = bucket.client.get(&path).await?.into_stream();
            while let Some(chunk) = body.next().await {
                sink(&chunk?);
            }
            Ok::<(), object_store::Error>(())
        };
        match self.exec.run_here(within(bucket.limit(), request)) {
            None => self.read(key, sink),
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(self.failure(key, e)),
        }
    }

    /// A HEAD finds the key (an update must not create one), then a PUT.
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.writable()?;
        if self.head(key)?.is_none() {
            return Err(missing_key(key, self.bucket.display()));
        }
        self.put(key, data)
    }

    fn insert(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.writable()?;
        self.put(key, data)
    }

    /// A HEAD finds the key (S3 deletes an absent key without a word),
    /// then a DELETE.
    fn delete(&mut self, key: u64) -> Result<()> {
        self.writable()?;
        if self.head(key)?.is_none() {
            return Err(missing_key(key, self.bucket.display()));
        }
        self.request(key, |b, path| async move { b.client.delete(&path).await })
    }

    /// S3 has no transactions: each request stands alone.
    fn begin(&mut self) -> Result<()> {
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    fn size(&mut self, key: u64) -> Result<Option<u64>> {
        self.head(key)
    }

    /// One ranged GET into `buf`.
    fn read_at(&mut self, key: u64, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let end = offset + buf.len() as u64;
        let got = self.request(key, move |b, path| async move {
            get_range(b, path, offset, end).await?.bytes().await
        });
        match got {
            Ok(bytes) => {
                let n = bytes.len().min(buf.len());
                buf[..n].copy_from_slice(&bytes[..n]);
                Ok(n)
            }
            // S3 refuses a range that starts at or past the end (416).
            Err(
                e @ Error::Failed {
                    class: FailureClass::ServerStatus { code: 416 },
                    ..
                },
            ) => match self.head(key)? {
                Some(size) if offset >= size => Ok(0),
                _ => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

impl Serving for S3Session {
    /// A HEAD, then for a blob of at most `max` bytes one GET, whose own
    /// answer gives the size and tag of the bytes it brought.
    fn fetch_small(&mut self, key: u64, max: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
        let Some(size) = self.head(key)? else {
            return Ok(None);
        };
        if size > max {
            return Ok(Some((size, None)));
        }
        let got = self.request(key, |b, path| async move {
            let answer = b.client.get(&path).await?;
            let tag = answer.meta.e_tag.clone();
            Ok((answer.bytes().await?, tag))
        });
        let (bytes, tag) = match got {
            Ok(got) => got,
            // Deleted since the HEAD.
            Err(Error::MissingKey { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.remember(key, bytes.len() as u64, tag);
        Ok(Some((bytes.len() as u64, Some(bytes.to_vec()))))
    }

    /// The object's S3 ETag as a strong validator: the one the last answer
    /// about this version gave (a HEAD, GET or PUT of this session), else
    /// a HEAD's; None when the object's size is no longer `size`.
    fn etag(&mut self, key: u64, size: u64) -> Result<Option<String>> {
        let known = |t: &Option<(u64, u64, String)>| {
            t.as_ref()
                .filter(|(k, s, _)| *k == key && *s == size)
                .map(|(_, _, tag)| tag.clone())
        };
        if let Some(tag) = known(&self.tagged) {
            return Ok(Some(tag));
        }
        self.head(key)?;
        Ok(known(&self.tagged))
    }

    /// One ranged GET, streamed: pieces go to `sink` as they arrive, all
    /// of one version of the object.
    fn read_stream(
        &mut self,
        key: u64,
        offset: u64,
        len: u64,
        piece: usize,
        sink: &mut dyn FnMut(Vec<u8>) -> bool,
    ) -> Result<u64> {
        if len == 0 {
            return Ok(0);
        }
        let result = self.request(key, move |b, path| async move {
            get_range(b, path, offset, offset + len).await
        })?;
        let mut stream = result.into_stream();
        let mut buffer = Vec::with_capacity(piece);
        let mut delivered = 0u64;
        let limit = self.bucket.limit();
        loop {
            // The stream goes to the runtime and back for each chunk: the
            // runtime may be another thread's. No chunk waits past the
            // timeout (the client's own bounds the whole body as well).
            let (next, back) = self.exec.run(async move {
                let next = within(limit, async { stream.next().await.transpose() }).await;
                (next, stream)
            });
            stream = back;
            let Some(mut chunk) = next.map_err(|e| self.bucket.failure(e))? else {
                break;
            };
            while !chunk.is_empty() {
                let take = (piece - buffer.len()).min(chunk.len());
                buffer.extend_from_slice(&chunk.split_to(take));
                if buffer.len() == piece {
                    delivered += piece as u64;
                    if !sink(std::mem::replace(&mut buffer, Vec::with_capacity(piece))) {
                        return Ok(delivered);
                    }
                }
            }
        }
        if !buffer.is_empty() {
            delivered += buffer.len() as u64;
            sink(buffer);
        }
        Ok(delivered)
    }
}

impl Snapshots for S3Session {}
