//! Resolution: opaque ids turned into names in one batched call per resolver per page.
//!
//! A [`Resolver`] is a marker type naming a kind of lookup and its key type; a field says
//! `#[shape(resolve = Users)]`. The caller's context implements [`Resolve<Users>`] by answering
//! a whole batch of keys at once (one `SELECT … WHERE id IN (…)`). If the context does not
//! implement it, or the key types differ, the call does not compile.
//!
//! A key the resolver does not answer renders as `unresolved user usr_…`, distinct from
//! `null` (which is what `None` stays).
//!
//! ```
//! use toolshape::{resolve, resolve::{Resolve, ResolveError, Resolver}};
//! use std::collections::HashMap;
//!
//! pub struct Users;
//! impl Resolver for Users {
//!     type Key = String;
//!     const NAME: &'static str = "users";
//!     const NOUN: &'static str = "user";
//! }
//!
//! struct Directory(HashMap<String, String>);
//!
//! // A synchronous lookup answers the batch at once.
//! impl Resolve<Users> for Directory {
//!     fn resolve(&self, keys: &[String]) -> impl Future<Output = Result<HashMap<String, String>, ResolveError>> + Send {
//!         resolve::answer(keys, |k| self.0.get(k).cloned())
//!     }
//! }
//! ```

use crate::env::CallEnv;
use serde::Serializer;
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

/// Declares a [`Resolver`] marker type.
///
/// ```
/// toolshape::resolver!(pub Orgs: String, name = "orgs", noun = "organization");
/// ```
#[macro_export]
macro_rules! resolver {
    ($vis:vis $name:ident : $key:ty, name = $n:literal, noun = $noun:literal) => {
        #[doc = concat!("Resolver `", $n, "`: ", stringify!($key), " to the name of a ", $noun, ".")]
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $name;
        impl $crate::resolve::Resolver for $name {
            type Key = $key;
            const NAME: &'static str = $n;
            const NOUN: &'static str = $noun;
        }
    };
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
    note = "implement `toolshape::resolve::Resolve<{R}>` for the context you pass to `shape_with`, \
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
    seen: HashSet<K, foldhash::fast::RandomState>,
    order: Vec<K>,
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

/// The set of resolvers a record type needs: a tuple of [`Resolver`] types.
pub trait Needs: 'static {
    /// One [`KeySet`] per resolver.
    type Keys: Default + Send;
    /// One [`NameMap`] per resolver.
    type Names: Default + Send + Sync;
}

/// A context that supplies every resolver in `N`.
pub trait Supplies<N: Needs> {
    /// Resolves every key set, one call per resolver.
    fn resolve_all(
        &self,
        keys: N::Keys,
    ) -> impl Future<Output = Result<(N::Names, Vec<ResolverStats>), ResolveError>> + Send;
}

impl Needs for () {
    type Keys = ();
    type Names = ();
}

impl<C: ?Sized + Sync> Supplies<()> for C {
    #[allow(clippy::manual_async_fn)]
    fn resolve_all(
        &self,
        _keys: (),
    ) -> impl Future<Output = Result<((), Vec<ResolverStats>), ResolveError>> + Send {
        async { Ok(((), Vec::new())) }
    }
}

async fn resolve_one<R: Resolver, C: Resolve<R> + ?Sized>(
    cx: &C,
    keys: KeySet<R::Key>,
    stats: &mut Vec<ResolverStats>,
) -> Result<NameMap<R::Key>, ResolveError> {
    if keys.order.is_empty() {
        stats.push(ResolverStats {
            resolver: R::NAME,
            calls: 0,
            keys: 0,
            unresolved: 0,
        });
        return Ok(NameMap::default());
    }
    let names = cx.resolve(&keys.order).await?;
    let names: NameMap<R::Key> = names.into_iter().collect();
    let unresolved = keys
        .order
        .iter()
        .filter(|k| !names.contains_key(*k))
        .count();
    stats.push(ResolverStats {
        resolver: R::NAME,
        calls: 1,
        keys: keys.order.len(),
        unresolved,
    });
    Ok(names)
}

macro_rules! tuple_needs {
    ($($r:ident . $i:tt),+) => {
        impl<$($r: Resolver),+> Needs for ($($r,)+) {
            type Keys = ($(KeySet<$r::Key>,)+);
            type Names = ($(NameMap<$r::Key>,)+);
        }

        impl<Cx: ?Sized + Sync $(+ Resolve<$r>)+, $($r: Resolver),+> Supplies<($($r,)+)> for Cx {
            #[allow(clippy::manual_async_fn)]
            fn resolve_all(
                &self,
                keys: ($(KeySet<$r::Key>,)+),
            ) -> impl Future<Output = Result<(($(NameMap<$r::Key>,)+), Vec<ResolverStats>), ResolveError>> + Send {
                async move {
                    let mut stats = Vec::new();
                    let names = ($(resolve_one::<$r, Cx>(self, keys.$i, &mut stats).await?,)+);
                    Ok((names, stats))
                }
            }
        }
    };
}

tuple_needs!(A.0);
tuple_needs!(A.0, B.1);
tuple_needs!(A.0, B.1, C.2);
tuple_needs!(A.0, B.1, C.2, D.3);
tuple_needs!(A.0, B.1, C.2, D.3, E.4);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);

/// A field a resolver over `K` can read: `K`, `Option<K>` or `Vec<K>`.
#[diagnostic::on_unimplemented(
    message = "a field of type `{Self}` cannot be resolved by a resolver whose key is `{K}`",
    label = "this resolver's key type differs from the field's type",
    note = "`resolve` works on a field of type `K`, `Option<K>` or `Vec<K>`, where `K` is the \
            resolver's `Key`; name the resolver for this field's key type"
)]
pub trait KeyField<K> {
    /// Adds this field's keys to the page's key set.
    fn collect_keys(&self, keys: &mut KeySet<K>);
    /// Writes the resolved name(s), the unresolved marker, or null.
    fn serialize_named<S: Serializer>(
        &self,
        names: &NameMap<K>,
        noun: &str,
        env: &CallEnv<'_>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
    /// `"one"`, `"option"` or `"list"`, for the schema.
    fn arity() -> Arity;
}

/// How many keys a resolved field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// Exactly one.
    One,
    /// Zero or one (null when none).
    Option,
    /// A list.
    List,
}

struct NameOf<'a, K> {
    key: &'a K,
    names: &'a NameMap<K>,
    noun: &'a str,
    env: &'a CallEnv<'a>,
}

impl<K: Eq + Hash + Display> serde::Serialize for NameOf<'_, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.names.get(self.key) {
            Some(name) => serializer.serialize_str(name),
            None => {
                self.env.note_unresolved();
                serializer.collect_str(&format_args!("unresolved {} {}", self.noun, self.key))
            }
        }
    }
}

impl<K: Eq + Hash + Clone + Display> KeyField<K> for K {
    fn collect_keys(&self, keys: &mut KeySet<K>) {
        keys.insert(self);
    }
    fn serialize_named<S: Serializer>(
        &self,
        names: &NameMap<K>,
        noun: &str,
        env: &CallEnv<'_>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(
            &NameOf {
                key: self,
                names,
                noun,
                env,
            },
            serializer,
        )
    }
    fn arity() -> Arity {
        Arity::One
    }
}

impl<K: Eq + Hash + Clone + Display> KeyField<K> for Option<K> {
    fn collect_keys(&self, keys: &mut KeySet<K>) {
        if let Some(key) = self {
            keys.insert(key);
        }
    }
    fn serialize_named<S: Serializer>(
        &self,
        names: &NameMap<K>,
        noun: &str,
        env: &CallEnv<'_>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match self {
            Some(key) => key.serialize_named(names, noun, env, serializer),
            None => serializer.serialize_none(),
        }
    }
    fn arity() -> Arity {
        Arity::Option
    }
}

impl<K: Eq + Hash + Clone + Display> KeyField<K> for Vec<K> {
    fn collect_keys(&self, keys: &mut KeySet<K>) {
        for key in self {
            keys.insert(key);
        }
    }
    fn serialize_named<S: Serializer>(
        &self,
        names: &NameMap<K>,
        noun: &str,
        env: &CallEnv<'_>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(|key| NameOf {
            key,
            names,
            noun,
            env,
        }))
    }
    fn arity() -> Arity {
        Arity::List
    }
}
