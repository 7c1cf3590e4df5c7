//! A session: the core operations and the capabilities a server uses, as
//! the one trait callers hold (`Box<dyn Session>`).

use super::serving::Serving;
use super::session_core::SessionCore;
use super::snapshots::Snapshots;

/// Work on an open store: [`SessionCore`]'s operations, [`Serving`]'s
/// ways of handing a blob to a server and [`Snapshots`]' read snapshots.
/// Every type that implements the three is a session; a backend never
/// implements this trait itself.
pub trait Session: SessionCore + Serving + Snapshots {}

impl<T: SessionCore + Serving + Snapshots + ?Sized> Session for T {}
