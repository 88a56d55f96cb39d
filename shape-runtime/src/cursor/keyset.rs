//! Keyset positions ([`Keyset`]): where a page stops in a ranked collection, which records
//! come after it, and paging an in-memory slice ([`after_cursor`]).

use crate::fields::ids::IdKey;
use crate::fields::rank::{KeyValue, Order};
use crate::record::tool_result::ToolResult;
use std::cmp::Ordering;

/// A position in a ranked collection: the rank key value and id of the last record shown.
///
/// Records are ranked by `(rank, id)` ascending, or both descending for [`Order::Desc`]; a
/// rank of `None` means the type has no rank key and records are ordered by id alone. The
/// id breaks ties, so without an id the records sharing the last rank value are not
/// revisited (give ranked types an id).
#[derive(Debug, Clone, PartialEq)]
pub struct Keyset {
    /// The rank key of the last record shown; `None` when the type has no rank key.
    pub rank: Option<KeyValue>,
    /// The full id of the last record shown.
    pub id: Option<String>,
    /// The order records are ranked in.
    pub order: Order,
}

impl Keyset {
    /// The position before the first record: admits everything.
    pub fn start(order: Order) -> Self {
        Keyset {
            rank: None,
            id: None,
            order,
        }
    }

    /// The position just after `record`, in the order of `T`'s rank key (ascending when it
    /// has none).
    pub fn after<T: ToolResult>(record: &T) -> Self {
        Keyset {
            rank: record.rank_key(),
            id: record.id_key().map(|id| id.to_string()),
            order: T::PROJECTION.rank.map_or(Order::Asc, |r| r.order),
        }
    }

    /// Whether this is the [`start`](Keyset::start) position.
    pub fn is_start(&self) -> bool {
        self.rank.is_none() && self.id.is_none()
    }

    /// Whether a record with this rank key and id comes after the position, in the ranked
    /// order.
    ///
    /// ```
    /// use toolshape::cursor::Keyset;
    /// use toolshape::{fields::KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(5)), id: Some("b".into()), order: Order::Asc };
    /// assert!(k.admits(Some(&KeyValue::Int(6)), Some("a")));
    /// assert!(k.admits(Some(&KeyValue::Int(5)), Some("c"))); // same rank, later id
    /// assert!(!k.admits(Some(&KeyValue::Int(5)), Some("b"))); // the record itself
    /// assert!(!k.admits(Some(&KeyValue::Null), Some("z"))); // null ranks first
    /// ```
    ///
    /// The id is compared as its kind: an integer id numerically with the stored one (`10`
    /// after `9`), a text id bytewise.
    pub fn admits<'a>(&self, rank: Option<&KeyValue>, id: Option<impl Into<IdKey<'a>>>) -> bool {
        if self.is_start() {
            return true;
        }
        let id = id.map(Into::into);
        let ascending = cmp_rank(rank, self.rank.as_ref()).then_with(|| match (id, &self.id) {
            (Some(id), Some(stored)) => id.cmp_stored(stored),
            (a, b) => a.is_some().cmp(&b.is_some()),
        });
        self.order.apply(ascending) == Ordering::Greater
    }
}

/// Ascending comparison of two rank keys; no rank (`None`) before any.
fn cmp_rank(a: Option<&KeyValue>, b: Option<&KeyValue>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(b),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

#[cfg(any(test, feature = "test-seams"))]
/// The records of an already ranked slice that come after `keyset`.
///
/// `ranked` must be in the keyset's order (as the [`ToolResult`] derive's `rank_cmp` sorts
/// it, or by id when the type has no rank key); the boundary is found by binary search.
///
/// ```
/// use toolshape::{cursor::Keyset, __seams::cursor::after_cursor};
/// use toolshape::ToolResult;
///
/// #[derive(ToolResult)]
/// #[shape(name = "event", plural = "events")]
/// struct Event {
///     #[shape(id)]
///     id: String,
///     #[shape(rank = desc)]
///     at: i64,
/// }
///
/// let ranked = [
///     Event { id: "e3".into(), at: 30 },
///     Event { id: "e2".into(), at: 20 },
///     Event { id: "e1".into(), at: 10 },
/// ];
/// let keyset = Keyset::after(&ranked[0]);
/// let rest = after_cursor(&ranked, &keyset);
/// assert_eq!(rest.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["e2", "e1"]);
/// ```
pub fn after_cursor<'a, T: ToolResult>(ranked: &'a [T], keyset: &Keyset) -> &'a [T] {
    let start = ranked.partition_point(|r| !keyset.admits(r.rank_key().as_ref(), r.id_key()));
    ranked.get(start..).unwrap_or_default()
}
