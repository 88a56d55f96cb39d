//! What ordering and cursors read of a call's rows, typed or configured ([`Keyed`]), and what
//! a record type says of its ids ([`Ids`]).

use crate::fields::ids::IdKey;
use crate::fields::rank::KeyValue;
use crate::record::tool_result::ToolResult;
use std::cmp::Ordering;

/// What ordering and cursors read of a row, typed or configured: its rank order against
/// another row (ties by id, in the rank's direction), its rank key and its id.
pub(crate) trait Keyed {
    /// The rank order (`Equal` without a rank key).
    fn rank_cmp(&self, other: &Self) -> Ordering;
    /// The rank key's value, for cursors.
    fn rank_key(&self) -> Option<KeyValue>;
    /// The id, when the record has one.
    fn id_key(&self) -> Option<IdKey<'_>>;
}

impl<T: ToolResult> Keyed for T {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        ToolResult::rank_cmp(self, other)
    }
    fn rank_key(&self) -> Option<KeyValue> {
        ToolResult::rank_key(self)
    }
    fn id_key(&self) -> Option<IdKey<'_>> {
        ToolResult::id_key(self)
    }
}

/// What a record type says of its ids: whether it has an id field, and whether a record may
/// lack one (an id through `?`, a configured record without the key).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ids {
    pub field: bool,
    pub may_be_absent: bool,
}

impl Ids {
    /// A derived type's.
    pub(crate) fn of<T: ToolResult>() -> Ids {
        Ids {
            field: T::PROJECTION.id.is_some(),
            may_be_absent: T::ID_MAY_BE_ABSENT,
        }
    }
}
