//! `suite aging`: blobs in SQLite and in files on a volume of fixed size, filled and then aged by overwrites.

pub mod interrupt;
pub mod volume;
