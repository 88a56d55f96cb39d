//! The projection contract: the [`ToolResult`] trait `#[derive(ToolResult)]` implements.

use crate::ids::IdKey;
use crate::rank::KeyValue;
use crate::record::Projection;
use crate::resolve::Needs;
use crate::view::Cx;
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
    type Needs: Needs;

    /// The static description of the projection.
    const PROJECTION: &'static Projection;

    /// Adds this record's keys to the per-resolver key sets.
    fn collect_keys(&self, keys: &mut <Self::Needs as Needs>::Keys);

    /// Writes the projected record (output fields, in order) to a serde serializer.
    fn serialize_record<S: Serializer>(
        &self,
        cx: &Cx<'_, Self::Needs>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;

    /// Writes one output field (by its index in [`Projection::fields`]).
    fn serialize_field<S: Serializer>(
        &self,
        index: usize,
        cx: &Cx<'_, Self::Needs>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;

    /// Compares two records in rank order (the rank key, then the id); `Equal` without a rank.
    fn rank_cmp(&self, other: &Self) -> Ordering;

    /// The rank key's value, for cursors; `None` without a rank field.
    fn rank_key(&self) -> Option<KeyValue>;

    /// The record's full id (not shortened), for tie-breaks and cursors: integers compare
    /// numerically, text bytewise.
    fn id_key(&self) -> Option<IdKey<'_>>;

    /// The record's full id when it is text (`None` for an integer id: see
    /// [`id_key`](ToolResult::id_key)).
    fn id_text(&self) -> Option<&str> {
        self.id_key().and_then(IdKey::as_text)
    }

    /// The JSON Schema of one projected record.
    fn record_schema(generator: &mut SchemaGenerator) -> Schema;
}
