//! The resolver's face: a kind of lookup ([`Resolver`]), the context that answers its batches
//! ([`Resolve`]), the keys a page asks for ([`KeySet`]) and the names it gets ([`NameMap`]), and
//! what a call did ([`ResolverStats`]) or why it failed ([`ResolveError`]).

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;

/// A kind of lookup: what its keys are and what one resolved thing is called.
pub trait Resolver: 'static {
    /// The key type (`UserId`).
    type Key: Eq + Hash + Clone + Display + Send + Sync + 'static;
    /// The resolver's name in reports (`"users"`).
    const NAME: &'static str;
    /// What one key names, for the unresolved marker (`"user"`).
    const NOUN: &'static str;
}

/// Why a resolver failed. The call fails with it: a page half resolved is not shown.
#[derive(Debug, thiserror::Error)]
#[error("resolver `{resolver}` failed: {message}")]
pub struct ResolveError {
    /// The resolver's name.
    pub resolver: &'static str,
    /// What went wrong.
    pub message: String,
}

impl ResolveError {
    /// An error for resolver `R`.
    pub fn new<R: Resolver>(message: impl Display) -> Self {
        ResolveError {
            resolver: R::NAME,
            message: message.to_string(),
        }
    }
}

/// Answers a batch of keys for resolver `R`. Called once per page with every distinct key.
///
/// Keys absent from the answer render as unresolved. A synchronous implementation returns
/// `std::future::ready(…)`; an async one awaits its database.
#[diagnostic::on_unimplemented(
    message = "resolver `{R}` was not supplied: `{Self}` does not implement `Resolve<{R}>`",
    label = "this context must resolve `{R}` keys",
    note = "implement `toolshape::resolve::Resolve<{R}>` for the context you shape the rows with (`(&rows, &ctx)`), \
            answering a whole batch of keys in one call"
)]
pub trait Resolve<R: Resolver>: Sync {
    /// The names for `keys` (distinct, in first-seen order).
    fn resolve(
        &self,
        keys: &[R::Key],
    ) -> impl Future<Output = Result<HashMap<R::Key, String>, ResolveError>> + Send;
}

/// The names a resolver answered for one page, keyed by id. A fast seeded hasher: this map
/// is read once per resolved field per record.
pub type NameMap<K> = HashMap<K, String, foldhash::fast::RandomState>;

/// Answers a batch at once from a lookup: what a synchronous [`Resolve`] implementation
/// returns. Keys `name` has no answer for render as unresolved.
pub fn answer<K: Eq + Hash + Clone>(
    keys: &[K],
    mut name: impl FnMut(&K) -> Option<String>,
) -> std::future::Ready<Result<HashMap<K, String>, ResolveError>> {
    std::future::ready(Ok(keys
        .iter()
        .filter_map(|k| Some((k.clone(), name(k)?)))
        .collect()))
}

/// One resolver's keys for a page: distinct, in first-seen order.
#[derive(Debug, Clone)]
pub struct KeySet<K> {
    pub(super) seen: HashSet<K, foldhash::fast::RandomState>,
    pub(super) order: Vec<K>,
}

impl<K> Default for KeySet<K> {
    fn default() -> Self {
        KeySet {
            seen: HashSet::default(),
            order: Vec::new(),
        }
    }
}

impl<K: Eq + Hash + Clone> KeySet<K> {
    /// Adds a key (once).
    pub fn insert(&mut self, key: &K) {
        if !self.seen.contains(key) {
            self.seen.insert(key.clone());
            self.order.push(key.clone());
        }
    }

    /// The distinct keys.
    pub fn keys(&self) -> &[K] {
        &self.order
    }
}

/// What one resolver call did, for the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResolverStats {
    /// The resolver's name.
    pub resolver: &'static str,
    /// Calls made (one per page).
    pub calls: u32,
    /// Distinct keys asked for.
    pub keys: usize,
    /// Keys the resolver did not answer.
    pub unresolved: usize,
}
