//! A store: the core and the capabilities a run and the aging suite use,
//! as the one trait callers hold (`Box<dyn Store>`).

use super::engine::Engine;
use super::space::Space;
use super::store_core::StoreCore;

/// An open target: what it holds, how to work on it, what it can do.
/// [`StoreCore`] is what every backend implements, [`Engine`] what a run
/// adapts to, [`Space`] its space on disk. Every type that implements the
/// three is a store; a backend never implements this trait itself.
pub trait Store: StoreCore + Engine + Space {}

impl<T: StoreCore + Engine + Space + ?Sized> Store for T {}
