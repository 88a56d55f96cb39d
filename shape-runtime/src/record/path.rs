//! Field paths (`#[shape(from = user.login)]`, `labels[].name`, `milestone?.title`): the
//! views and helpers the derive's generated code uses to reach into nested values.
//!
//! The derive writes the path as Rust field accesses, so a wrong path is a compile error at
//! the path. `?` goes through an `Option` (an absent value reads as absent), `[]` through any
//! collection iterated by reference (the value becomes a list); the field's transform
//! (legend, date, untrusted, …) applies to each value the path reaches.

use crate::fields::rank::{KeyValue, RankKey};
use std::cmp::Ordering;
use std::marker::PhantomData;

use serde::{Serialize, Serializer};

/// The value behind a `?`: the view of the value when present, `null` (or the field's word
/// for absence, in text) when not.
pub struct Opt<V>(Option<V>);

impl<V> Opt<V> {
    /// Wraps the view of a present value, or none.
    pub fn new(view: Option<V>) -> Self {
        Opt(view)
    }
}

impl<V: Serialize> Serialize for Opt<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(view) => view.serialize(s),
            None => s.serialize_none(),
        }
    }
}

/// The values behind a `[]`: each item's view, as a list, with no intermediate collection.
pub struct Each<'a, C: ?Sized, F> {
    items: &'a C,
    view: F,
}

impl<'a, C: ?Sized, F, V> Each<'a, C, F>
where
    &'a C: IntoIterator,
    F: Fn(<&'a C as IntoIterator>::Item) -> V,
{
    /// The list of `view(item)` for each item of `items`.
    pub fn new(items: &'a C, view: F) -> Self {
        Each { items, view }
    }
}

impl<'a, C: ?Sized, F, V> Serialize for Each<'a, C, F>
where
    &'a C: IntoIterator,
    F: Fn(<&'a C as IntoIterator>::Item) -> V,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.items.into_iter().map(&self.view))
    }
}

/// Whether a collection a path goes through holds nothing (`empty_is_absent`).
pub fn iter_is_empty<'a, C: ?Sized>(items: &'a C) -> bool
where
    &'a C: IntoIterator,
{
    items.into_iter().next().is_none()
}

/// The type a path ends at, for its schema: the closure is never called.
pub fn leaf_type<'r, R: ?Sized + 'r, T: ?Sized + 'r>(
    _path: impl FnOnce(&'r R) -> &'r T,
) -> PhantomData<T> {
    PhantomData
}

/// Through a `?` inside [`leaf_type`]'s closure, which is never called.
pub fn through_option<T>(value: &Option<T>) -> &T {
    match value {
        Some(value) => value,
        None => unreachable!("shape: a schema path is never followed"),
    }
}

/// Through a `[]` inside [`leaf_type`]'s closure, which is never called.
pub fn through_items<'a, C: ?Sized>(items: &'a C) -> <&'a C as IntoIterator>::Item
where
    &'a C: IntoIterator,
{
    match items.into_iter().next() {
        Some(item) => item,
        None => unreachable!("shape: a schema path is never followed"),
    }
}

/// Compares two rank keys reached through `?`: as `Option`'s rank order does (absent first
/// in ascending order).
pub fn rank_cmp_opt<T: RankKey + ?Sized>(a: Option<&T>, b: Option<&T>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.rank_cmp(b),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

/// A rank key reached through `?`, for cursors.
pub fn key_value_opt<T: RankKey + ?Sized>(value: Option<&T>) -> KeyValue {
    match value {
        Some(value) => value.key_value(),
        None => KeyValue::Null,
    }
}

/// A number a rank can sum (`#[shape(rank(desc, sum))]` over a path through `[]`).
#[diagnostic::on_unimplemented(
    message = "`rank(…, sum)` adds numbers; `{Self}` is not one",
    label = "not a number",
    note = "sum integers or floats; over other values rank by `max`, `min` or `count`"
)]
pub trait RankNumber: RankKey {}

macro_rules! rank_number {
    ($($t:ty),*) => {$( impl RankNumber for $t {} )*};
}
rank_number!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize, f32, f64);

/// The sum of a list's values as one rank key: integers exactly (an `Int` while it fits
/// `i64`, a `UInt` while it fits `u64`, a float past both), a float once any value is one.
/// An empty list sums to 0.
pub fn rank_sum<'a, T: RankNumber + 'a>(values: impl Iterator<Item = &'a T>) -> KeyValue {
    let mut int: i128 = 0;
    let mut float: Option<f64> = None;
    for value in values {
        match value.key_value() {
            KeyValue::Int(v) => int = int.saturating_add(i128::from(v)),
            KeyValue::UInt(v) => int = int.saturating_add(i128::from(v)),
            KeyValue::Float(v) => *float.get_or_insert(0.0) += v,
            // `RankNumber` types are numbers; anything else adds nothing.
            _ => {}
        }
    }
    match float {
        Some(f) => KeyValue::Float(f + int as f64),
        None => match (i64::try_from(int), u64::try_from(int)) {
            (Ok(v), _) => KeyValue::Int(v),
            (_, Ok(v)) => KeyValue::UInt(v),
            _ => KeyValue::Float(int as f64),
        },
    }
}

/// The largest of a list's values as one rank key (`rank(desc, max)`); an empty list ranks
/// as an absent value (`Null`, first in ascending order).
pub fn rank_max<'a, T: RankKey + 'a>(values: impl Iterator<Item = &'a T>) -> KeyValue {
    values
        .map(RankKey::key_value)
        .max_by(KeyValue::total_cmp)
        .unwrap_or(KeyValue::Null)
}

/// The smallest of a list's values as one rank key (`rank(asc, min)`); an empty list ranks
/// as an absent value (`Null`).
pub fn rank_min<'a, T: RankKey + 'a>(values: impl Iterator<Item = &'a T>) -> KeyValue {
    values
        .map(RankKey::key_value)
        .min_by(KeyValue::total_cmp)
        .unwrap_or(KeyValue::Null)
}

/// How many values a list has, as one rank key (`rank(desc, count)`).
pub fn rank_count<'a, T: 'a>(values: impl Iterator<Item = &'a T>) -> KeyValue {
    let n = values.count();
    i64::try_from(n).map_or(KeyValue::UInt(n as u64), KeyValue::Int)
}

/// The bound `absent = "…"` needs, for a path with no `?` or `[]` (those can be absent).
pub fn may_be_absent<T: crate::text::MayBeAbsent + ?Sized>(_leaf: PhantomData<T>) {}

/// A value a `from` path reaches, probed by autoref as the schema's leaves are
/// (`schema::fields::AnyLeaf`): `(&&LeafOf::<_, ()>::of(&value)).leaf_id_key(&value)` with the
/// use's trait ([`RankLeaf`], [`IdLeaf`], `resolve::field::KeyLeaf`) and its fallback
/// ([`AnyValueLeaf`], `resolve::field::AnyKeyLeaf`) in scope. A leaf
/// type that misses the bound takes [`AnyValueLeaf`]'s answer, and the bound is reported
/// once, where the value is written (`serialize_field`); a crate with that mistake does not
/// compile, so the fallback never runs.
pub struct LeafOf<T: ?Sized, K>(std::marker::PhantomData<K>, std::marker::PhantomData<T>);

impl<T: ?Sized, K> LeafOf<T, K> {
    /// The probe of `value`'s type.
    pub fn of(_value: &T) -> Self {
        LeafOf(std::marker::PhantomData, std::marker::PhantomData)
    }

    /// The probe of the type of the value an `Option<&T>` may hold.
    pub fn of_opt(_value: &Option<&T>) -> Self {
        LeafOf(std::marker::PhantomData, std::marker::PhantomData)
    }
}

/// The fallback of [`LeafOf`]: never in a compiled crate (see there).
pub trait AnyValueLeaf {
    /// Never in a compiled crate: the value is no rank key.
    fn leaf_key_value<T: ?Sized>(&self, _value: Option<&T>) -> KeyValue {
        KeyValue::Null
    }
    /// Never in a compiled crate: the value is no id.
    fn leaf_id_key<'a, T: ?Sized>(&self, _value: &'a T) -> crate::fields::ids::IdKey<'a> {
        crate::fields::ids::IdKey::Text("")
    }
}

impl<T: ?Sized, K> AnyValueLeaf for LeafOf<T, K> {}

/// A rank key a path reaches, for cursors (see [`LeafOf`]).
pub trait RankLeaf<T: ?Sized> {
    /// The key, `Null` when absent.
    fn leaf_key_value(&self, value: Option<&T>) -> KeyValue;
}

impl<T: RankKey + ?Sized> RankLeaf<T> for &LeafOf<T, ()> {
    fn leaf_key_value(&self, value: Option<&T>) -> KeyValue {
        key_value_opt(value)
    }
}

/// An id a path reaches (see [`LeafOf`]).
pub trait IdLeaf<T: ?Sized> {
    /// The id.
    fn leaf_id_key<'a>(&self, value: &'a T) -> crate::fields::ids::IdKey<'a>;
}

impl<T: crate::fields::ids::IdField> IdLeaf<T> for &LeafOf<T, ()> {
    fn leaf_id_key<'a>(&self, value: &'a T) -> crate::fields::ids::IdKey<'a> {
        value.id_key()
    }
}
