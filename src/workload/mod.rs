//! What is done to a dataset: the operation, the key order, the transaction
//! grouping, and the executor that times it.

pub mod history;
pub mod keys;
pub mod mix;
pub mod mixed_run;
mod order;
pub mod run;
pub mod timer;

pub use order::key_sequence;
pub use run::{CacheMode, Operation, Repetition, RunPlan, RunResult, execute};
