//! The projection contract: the [`ToolResult`] trait `#[derive(ToolResult)]` implements.

use crate::fields::ids::IdKey;
use crate::fields::rank::{KeyValue, Order};
use crate::fields::view::Cx;
use crate::record::Projection;
use crate::resolve::Resolvers;
use schemars::{Schema, SchemaGenerator};
use serde::Serializer;
use std::cmp::Ordering;

/// A domain struct that can be shaped into a tool result. Derive it; do not implement it by hand.
///
/// ```
/// use toolshape::{Legend, ToolResult};
///
/// const STATUS: Legend<u8> = Legend::new(&[(1, "new"), (3, "open")]);
///
/// #[derive(ToolResult)]
/// #[shape(name = "ticket", plural = "tickets", prose = "{id}: {status}")]
/// struct Ticket {
///     #[shape(id(short))]
///     id: String,
///     #[shape(legend = STATUS, rename = "status")]
///     status_code: u8,
///     #[shape(skip)]
///     password_hash: String,
/// }
///
/// let p = Ticket::PROJECTION;
/// assert_eq!(p.output_names().collect::<Vec<_>>(), ["id", "status"]);
/// assert_eq!(p.skipped, ["password_hash"]);
/// ```
pub trait ToolResult: Sized {
    /// The resolvers this record needs, as a tuple of [`Resolver`](crate::resolve::Resolver) types.
    type Needs: Resolvers;

    /// The static description of the projection.
    const PROJECTION: &'static Projection;

    /// Whether a record can lack its id (an `id` through `?`, `from = metadata.uid?`): only
    /// then does a walk look at every row's id to choose keyset or count paging.
    const ID_MAY_BE_ABSENT: bool = false;

    /// Adds this record's keys to the per-resolver key sets. (Generated only for a record with
    /// resolved fields: with none, there is nothing to add.)
    fn collect_keys(&self, keys: &mut <Self::Needs as Resolvers>::Keys) {
        let _ = keys;
    }

    /// Writes the projected record (output fields, in order) to a serde serializer: a struct
    /// named after the record, each field written by
    /// [`serialize_field`](ToolResult::serialize_field) under its output name. (Not generated
    /// per struct: the derive writes each field's view once, in `serialize_field`.)
    fn serialize_record<S: Serializer>(
        &self,
        cx: &Cx<'_, Self::Needs>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let projection = Self::PROJECTION;
        let mut st = serializer.serialize_struct(projection.name, projection.fields.len())?;
        for (index, field) in projection.fields.iter().enumerate() {
            st.serialize_field(
                field.name,
                &FieldAt {
                    record: self,
                    index,
                    cx,
                },
            )?;
        }
        st.end()
    }

    /// Writes one output field (by its index in [`Projection::fields`]).
    fn serialize_field<S: Serializer>(
        &self,
        index: usize,
        cx: &Cx<'_, Self::Needs>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;

    /// Compares two records in rank order: the rank key, then the id, both reversed for a
    /// descending rank; `Equal` without a rank. (Not generated per struct: the derive writes
    /// only the comparison of the rank fields, [`cmp_rank_field`](ToolResult::cmp_rank_field).)
    fn rank_cmp(&self, other: &Self) -> Ordering {
        let Some(rank) = Self::PROJECTION.rank else {
            return Ordering::Equal;
        };
        let ascending = self
            .cmp_rank_field(other)
            .then_with(|| self.id_key().cmp(&other.id_key()));
        match rank.order {
            Order::Asc => ascending,
            Order::Desc => ascending.reverse(),
        }
    }

    /// Compares the rank fields of two records, ascending (`Equal` without a rank field).
    fn cmp_rank_field(&self, other: &Self) -> Ordering {
        let _ = other;
        Ordering::Equal
    }

    /// The rank key's value, for cursors; `None` without a rank field.
    fn rank_key(&self) -> Option<KeyValue> {
        None
    }

    /// The record's full id (not shortened), for tie-breaks and cursors: integers compare
    /// numerically, text bytewise. `None` without an id field.
    fn id_key(&self) -> Option<IdKey<'_>> {
        None
    }

    /// The record's full id when it is text (`None` for an integer id: see
    /// [`id_key`](ToolResult::id_key)).
    fn id_text(&self) -> Option<&str> {
        self.id_key().and_then(IdKey::as_text)
    }

    /// The JSON Schema of one projected record.
    fn record_schema(generator: &mut SchemaGenerator) -> Schema;
}

/// One output field of a record, as a serde value: what [`ToolResult::serialize_record`]
/// writes under each name.
struct FieldAt<'r, 'c, T: ToolResult> {
    record: &'r T,
    index: usize,
    cx: &'r Cx<'c, T::Needs>,
}

impl<T: ToolResult> serde::Serialize for FieldAt<'_, '_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.record.serialize_field(self.index, self.cx, serializer)
    }
}
