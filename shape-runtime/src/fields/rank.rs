//! Ranking: which records come first, so that truncation drops the least useful tail.
//!
//! A record type ranks by the field marked `#[shape(rank = asc | desc)]`, ties broken by its
//! `id` field so the order is deterministic; or by a comparator the caller passes to the
//! [`Shaper`](crate::Shaper). The rank key's value is also what a cursor remembers
//! ([`KeyValue`]), so ranking and keyset pagination always agree.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// How a rank path through `[]` makes one key of a list's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fold {
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The sum (numbers).
    Sum,
    /// How many.
    Count,
}

/// Ascending or descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Smallest first.
    Asc,
    /// Largest first (newest first, for dates).
    Desc,
}

impl Order {
    /// Applies this order to an ascending comparison.
    pub fn apply(self, ascending: Ordering) -> Ordering {
        match self {
            Order::Asc => ascending,
            Order::Desc => ascending.reverse(),
        }
    }
}

/// A rank key's value, as remembered by a cursor and compared against records.
///
/// The variants order as their Rust types do: `Null` (an `Option::None`) before anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", content = "v", rename_all = "snake_case")]
pub enum KeyValue {
    /// `None`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer too large for `Int`.
    UInt(u64),
    /// A float, ordered by `total_cmp`.
    Float(f64),
    /// Text, ordered bytewise (ISO timestamps order correctly this way).
    Str(String),
}

impl KeyValue {
    fn rank(&self) -> u8 {
        match self {
            KeyValue::Null => 0,
            KeyValue::Bool(_) => 1,
            KeyValue::Int(_) | KeyValue::UInt(_) | KeyValue::Float(_) => 2,
            KeyValue::Str(_) => 3,
        }
    }

    /// Total order over key values; values of one Rust type compare as that type does.
    pub fn total_cmp(&self, other: &KeyValue) -> Ordering {
        use KeyValue::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (UInt(a), UInt(b)) => a.cmp(b),
            (Int(a), UInt(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (UInt(a), Int(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Float(a), Int(b)) => a.total_cmp(&(*b as f64)),
            (Int(a), Float(b)) => (*a as f64).total_cmp(b),
            (Float(a), UInt(b)) => a.total_cmp(&(*b as f64)),
            (UInt(a), Float(b)) => (*a as f64).total_cmp(b),
            (Str(a), Str(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// A value a record can be ranked by, and that a cursor can remember.
///
/// Implemented for integers, floats (by `total_cmp`), `bool`, `String`, `&str`, `Option<T>`
/// and, behind features, `chrono` and `time` timestamps. Implement it for a newtype by
/// delegating to the inner value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a rank key",
    label = "`rank` needs a value with an order that a cursor can remember",
    note = "rank works on integers, floats, bool, String, timestamps and Option of those; \
            for your own type implement `toolshape::fields::RankKey`, or rank by another field"
)]
pub trait RankKey {
    /// Ascending comparison of two keys.
    fn rank_cmp(&self, other: &Self) -> Ordering;
    /// The key as a cursor remembers it; must order as [`rank_cmp`](RankKey::rank_cmp) does.
    fn key_value(&self) -> KeyValue;
}

macro_rules! rank_int {
    ($($t:ty),*) => {$(
        impl RankKey for $t {
            fn rank_cmp(&self, other: &Self) -> Ordering { self.cmp(other) }
            fn key_value(&self) -> KeyValue {
                match i64::try_from(*self) {
                    Ok(v) => KeyValue::Int(v),
                    Err(_) => KeyValue::UInt(u64::try_from(*self).unwrap_or(u64::MAX)),
                }
            }
        }
    )*};
}
rank_int!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

macro_rules! rank_float {
    ($($t:ty),*) => {$(
        impl RankKey for $t {
            fn rank_cmp(&self, other: &Self) -> Ordering { self.total_cmp(other) }
            fn key_value(&self) -> KeyValue { KeyValue::Float(f64::from(*self)) }
        }
    )*};
}
rank_float!(f32, f64);

impl RankKey for bool {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        KeyValue::Bool(*self)
    }
}

impl RankKey for String {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        KeyValue::Str(self.clone())
    }
}

impl RankKey for &str {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        KeyValue::Str((*self).to_owned())
    }
}

impl<T: RankKey> RankKey for Option<T> {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Some(a), Some(b)) => a.rank_cmp(b),
            (a, b) => a.is_some().cmp(&b.is_some()),
        }
    }
    fn key_value(&self) -> KeyValue {
        match self {
            Some(v) => v.key_value(),
            None => KeyValue::Null,
        }
    }
}

#[cfg(feature = "chrono")]
impl<Tz: chrono::TimeZone> RankKey for chrono::DateTime<Tz> {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        // Nanoseconds since the epoch order exactly as the instants do (until 2262).
        match self.timestamp_nanos_opt() {
            Some(n) => KeyValue::Int(n),
            None => KeyValue::Int(self.timestamp().saturating_mul(1_000_000_000)),
        }
    }
}

#[cfg(feature = "chrono")]
impl RankKey for chrono::NaiveDate {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        KeyValue::Int(i64::from(chrono::Datelike::num_days_from_ce(self)))
    }
}

#[cfg(feature = "jiff")]
impl RankKey for jiff::Timestamp {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        let nanos = self.as_nanosecond();
        KeyValue::Int(i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX }))
    }
}

#[cfg(feature = "jiff")]
impl RankKey for jiff::Zoned {
    /// By instant, as the key value orders.
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.timestamp().cmp(&other.timestamp())
    }
    fn key_value(&self) -> KeyValue {
        self.timestamp().key_value()
    }
}

#[cfg(feature = "jiff")]
impl RankKey for jiff::civil::Date {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        // YYYYMMDD orders as the dates do.
        let (y, m, d) = (
            i64::from(self.year()),
            i64::from(self.month()),
            i64::from(self.day()),
        );
        KeyValue::Int(y * 10_000 + m * 100 + d)
    }
}

#[cfg(feature = "time")]
impl RankKey for time::OffsetDateTime {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn key_value(&self) -> KeyValue {
        let nanos = self.unix_timestamp_nanos();
        KeyValue::Int(i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX }))
    }
}

/// Rank, then truncate: the first `k` of `indices` in the order `cmp` gives, sorted; the
/// rest are dropped unsorted. Only the records a page can reach are sorted, so ranking
/// 20,000 rows for a page of 20 costs a selection, not a sort.
///
/// `cmp` must be a total order (break ties, for example by position) for the result to be
/// deterministic.
pub(crate) fn top_k<T>(items: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> Ordering) {
    if k == 0 {
        items.clear();
        return;
    }
    if k < items.len() / SCAN_RATIO {
        scan_top_k(items, k, &cmp);
        return;
    }
    if k < items.len() {
        items.select_nth_unstable_by(k - 1, &cmp);
        items.truncate(k);
    }
    items.sort_by(&cmp);
}

/// Past this many items a kept one, the first `k` are found by one pass over the items in
/// their order (a bounded heap of the best `k` so far), not by selecting in place: the items
/// are read in order (the records they point at too, when they are indices in order), where
/// a selection permutes them and reads the records at random. On a million ranked tickets
/// and a 4,000-token page, about 3× faster.
const SCAN_RATIO: usize = 16;

/// [`top_k`] by one pass: a max-heap (by `cmp`) of the best `k` seen; an item better than its
/// worst replaces it. The callers' orders are total (every tie broken by place), so the
/// result is the one sorting would give.
fn scan_top_k<T>(items: &mut Vec<T>, k: usize, cmp: &impl Fn(&T, &T) -> Ordering) {
    let mut heap: Vec<T> = Vec::with_capacity(k);
    let sift_down = |heap: &mut Vec<T>, mut at: usize| {
        let n = heap.len();
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            let mut worst = at;
            if left < n && cmp(&heap[left], &heap[worst]) == Ordering::Greater {
                worst = left;
            }
            if right < n && cmp(&heap[right], &heap[worst]) == Ordering::Greater {
                worst = right;
            }
            if worst == at {
                return;
            }
            heap.swap(at, worst);
            at = worst;
        }
    };
    for item in items.drain(..) {
        if heap.len() < k {
            heap.push(item);
            // Sift up.
            let mut at = heap.len() - 1;
            while at > 0 {
                let parent = (at - 1) / 2;
                if cmp(&heap[at], &heap[parent]) == Ordering::Greater {
                    heap.swap(at, parent);
                    at = parent;
                } else {
                    break;
                }
            }
        } else if cmp(&item, &heap[0]) == Ordering::Less {
            heap[0] = item;
            sift_down(&mut heap, 0);
        }
    }
    heap.sort_by(cmp);
    *items = heap;
}

#[cfg(test)]
mod top_k_tests {
    use super::top_k;

    #[test]
    fn the_scan_keeps_the_first_k_as_sorting_does() {
        // Enough items for the scan; many equal keys (by the key alone, the place breaking
        // ties as the callers' comparators do).
        let items: Vec<(u32, usize)> = (0..5_000).map(|i| ((i * 7_919 % 97) as u32, i)).collect();
        for k in [1, 2, 50, 311, 312, 313] {
            let mut got = items.clone();
            top_k(&mut got, k, |a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut naive = items.clone();
            naive.sort();
            naive.truncate(k);
            assert_eq!(got, naive, "k = {k}");
            let mut desc = items.clone();
            top_k(&mut desc, k, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut naive = items.clone();
            naive.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            naive.truncate(k);
            assert_eq!(desc, naive, "desc, k = {k}");
        }
    }

    #[test]
    fn keeps_the_first_k_in_order_whatever_k() {
        let rows = [5, 1, 4, 2, 3, 4];
        for k in 0..=8 {
            let mut got = rows.to_vec();
            top_k(&mut got, k, |a: &i32, b: &i32| b.cmp(a));
            let mut naive = rows.to_vec();
            naive.sort_by(|a, b| b.cmp(a));
            naive.truncate(k);
            assert_eq!(got, naive, "k = {k}");
        }
    }
}
