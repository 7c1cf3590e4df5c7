//! Serving blobs over HTTP: the server (`blobbench serve`) and its URL keys.

pub mod keys;
pub mod server;
