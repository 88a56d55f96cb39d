//! The projection contract: what `#[derive(ToolResult)]` generates (the [`ToolResult`]
//! trait) and the typed field references ([`FieldRef`]) it emits.

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
    /// The resolvers this record needs, as a tuple of [`Resolver`](crate::Resolver) types.
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

    /// The record's full id (not shortened), for tie-breaks and cursors.
    fn id_text(&self) -> Option<&str>;

    /// The JSON Schema of one projected record.
    fn record_schema(generator: &mut SchemaGenerator) -> Schema;
}

/// A reference to one output field of a record type, from `Record::FIELDS`: naming a field
/// that does not exist is a compile error.
///
/// ```
/// use toolshape::{Aggregate, ToolResult};
///
/// #[derive(ToolResult)]
/// struct Issue {
///     #[shape(show)]
///     labels: Vec<String>,
///     #[shape(date, rename = "opened")]
///     created_at: String,
/// }
///
/// let health = Aggregate::new().recent(Issue::FIELDS.opened, 30).top(Issue::FIELDS.labels, 3);
/// assert_eq!(Issue::FIELDS.opened.name(), "opened");
/// # let _ = health;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldRef(&'static str);

impl FieldRef {
    /// A reference to the output field `name` (generated code calls this).
    pub const fn new(name: &'static str) -> FieldRef {
        FieldRef(name)
    }

    /// The output name.
    pub const fn name(self) -> &'static str {
        self.0
    }
}
