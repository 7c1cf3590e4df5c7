//! Serving blobs over HTTP: the server (`blobbench serve`), its URL keys,
//! and the load generator (`blobbench load`).

pub mod keys;
pub mod load;
pub mod server;
