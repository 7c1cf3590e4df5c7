//! Terminal tables, one module per kind of result, each rendered from the
//! typed result (never from live state), as `report` renders HTML.

pub mod advise;
pub mod aging;
pub mod compare;
pub mod fasterthanfs;
pub mod http;
pub mod internal_external;
pub mod load;
pub mod lob;
pub mod mixed_run;
pub mod quick;
pub mod replicate;
pub mod reproduce;
pub mod run;
pub mod scaling;
pub mod sweep;
