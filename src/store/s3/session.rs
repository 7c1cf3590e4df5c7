//! Work on an S3 bucket: each operation is one or two requests, run to
//! the end before the call returns.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::WriteMultipart;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use super::exec::Exec;
use super::{Bucket, PARTS_IN_FLIGHT, s3_error};
use crate::error::{Error, Result};
use crate::store::{Access, Session, SessionOptions};

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
        let bucket = Arc::new(super::client::connect(&bucket.location)?);
        Ok(S3Session {
            bucket,
            exec,
            access,
            _options: options,
            buffer: Vec::new(),
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
        match self.exec.run(future) {
            Ok(v) => Ok(v),
            Err(object_store::Error::NotFound { .. }) => {
                Err(crate::store::missing_key(key, self.bucket.display()))
            }
            Err(e) => Err(s3_error(self.bucket.display(), e)),
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

    /// The object's size, or None when it is absent.
    fn head(&self, key: u64) -> Result<Option<u64>> {
        match self.request(key, |b, path| async move { b.client.head(&path).await }) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(Error::MissingKey { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn put(&self, key: u64, data: &[u8]) -> Result<()> {
        let data = Bytes::copy_from_slice(data);
        let part = self.bucket.location.part_size as usize;
        self.request(key, move |b, path| put_object(b, path, data, part))
    }
}

/// PUT of the whole object, or a multipart upload of parts of `part`
/// bytes (at most [`PARTS_IN_FLIGHT`] at once) when it is larger.
async fn put_object(
    bucket: Arc<Bucket>,
    path: ObjectPath,
    data: Bytes,
    part: usize,
) -> S3Result<()> {
    if data.len() <= part {
        return bucket.client.put(&path, data.into()).await.map(|_| ());
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
    parts.finish().await.map(|_| ())
}

/// GET of the whole object into `buffer` (emptied first); the buffer comes
/// back whatever happened, to be used again.
async fn gather(
    bucket: Arc<Bucket>,
    path: ObjectPath,
    mut buffer: Vec<u8>,
) -> (Vec<u8>, S3Result<()>) {
    buffer.clear();
    let result = async {
        let got = bucket.client.get(&path).await?;
        buffer.reserve(got.meta.size as usize);
        let mut body = got.into_stream();
        while let Some(chunk) = body.next().await {
            buffer.extend_from_slice(&chunk?);
        }
        Ok(())
    }
    .await;
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

impl Session for S3Session {
    /// One GET, its body gathered into the session's buffer as it arrives.
    fn read(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
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
            Err(object_store::Error::NotFound { .. }) => {
                Err(crate::store::missing_key(key, self.bucket.display()))
            }
            Err(e) => Err(s3_error(self.bucket.display(), e)),
        }
    }

    /// One GET whose body goes to `sink` chunk by chunk as it arrives
    /// (no gathering copy); on a thread inside another runtime, `read`.
    fn read_pieces(&mut self, key: u64, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let (bucket, path) = (self.bucket.clone(), self.bucket.object(key));
        let streamed = self.exec.run_here(async {
            let mut body = bucket.client.get(&path).await?.into_stream();
            while let Some(chunk) = body.next().await {
                sink(&chunk?);
            }
            Ok::<(), object_store::Error>(())
        });
        match streamed {
            None => self.read(key, sink),
            Some(Ok(())) => Ok(()),
            Some(Err(object_store::Error::NotFound { .. })) => {
                Err(crate::store::missing_key(key, self.bucket.display()))
            }
            Some(Err(e)) => Err(s3_error(self.bucket.display(), e)),
        }
    }

    /// A HEAD finds the key (an update must not create one), then a PUT.
    fn update(&mut self, key: u64, data: &[u8]) -> Result<()> {
        self.writable()?;
        if self.head(key)?.is_none() {
            return Err(crate::store::missing_key(key, self.bucket.display()));
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
            return Err(crate::store::missing_key(key, self.bucket.display()));
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
            // S3 refuses a range that starts at or past the end.
            Err(e @ Error::Server { .. }) => match self.head(key)? {
                Some(size) if offset >= size => Ok(0),
                _ => Err(e),
            },
            Err(e) => Err(e),
        }
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
        loop {
            // The stream goes to the runtime and back for each chunk: the
            // runtime may be another thread's.
            let (next, back) = self.exec.run(async move {
                let next = stream.next().await;
                (next, stream)
            });
            stream = back;
            let Some(chunk) = next else { break };
            let mut chunk = chunk.map_err(|e| s3_error(self.bucket.display(), e))?;
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
