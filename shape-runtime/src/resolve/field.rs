//! A field a resolver reads ([`KeyField`]: a key, an optional key or a list of keys) and how
//! its names are written. Reached by generated code through `__private`.

use crate::record::call_env::CallEnv;
use serde::Serializer;
use std::fmt::Display;
use std::hash::Hash;

use super::resolver::{KeySet, NameMap};

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

/// The fallback for keys a `from` path reaches: never in a compiled crate (see
/// [`LeafOf`](crate::record::path::LeafOf)).
pub trait AnyKeyLeaf {
    /// Never in a compiled crate: the value holds no key of the resolver.
    fn leaf_collect_keys<T: ?Sized, K>(&self, _value: &T, _keys: &mut KeySet<K>) {}
}

impl<T: ?Sized, K> AnyKeyLeaf for crate::record::path::LeafOf<T, K> {}

/// Keys a path reaches, for the resolver whose key is `K` (see
/// [`LeafOf`](crate::record::path::LeafOf)).
pub trait KeyLeaf<T: ?Sized, K> {
    /// Adds the value's keys to the page's key set.
    fn leaf_collect_keys(&self, value: &T, keys: &mut KeySet<K>);
}

impl<T: KeyField<K> + ?Sized, K> KeyLeaf<T, K> for &crate::record::path::LeafOf<T, K> {
    fn leaf_collect_keys(&self, value: &T, keys: &mut KeySet<K>) {
        value.collect_keys(keys)
    }
}
