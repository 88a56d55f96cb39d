//! The projection contract: what `#[derive(ToolResult)]` generates, and the static
//! description of a projection ([`Projection`]) that envelopes, schemas and reports read.

use crate::rank::{KeyValue, Order};
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

/// The static description of a projection.
#[derive(Debug, Clone, Copy)]
pub struct Projection {
    /// What one record is called (`"ticket"`).
    pub name: &'static str,
    /// What several are called (`"tickets"`).
    pub plural: &'static str,
    /// Output fields, in output order.
    pub fields: &'static [FieldInfo],
    /// Source fields this view leaves out, so "the projection dropped it" differs from
    /// "the record has none".
    pub skipped: &'static [&'static str],
    /// The prose template, split into text and field references.
    pub prose: Option<&'static [ProseSegment]>,
    /// The rank key.
    pub rank: Option<RankInfo>,
    /// The index of the id field.
    pub id: Option<usize>,
}

/// One output field.
#[derive(Debug, Clone, Copy)]
pub struct FieldInfo {
    /// The name in tool results.
    pub name: &'static str,
    /// The Rust field it comes from.
    pub source: &'static str,
    /// How the value is shaped.
    pub kind: FieldKind,
}

/// How a field's value is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Shown as is.
    Show,
    /// An integer code expanded to a word.
    Legend,
    /// A key resolved to a name by the named resolver.
    Resolve {
        /// The resolver's name.
        resolver: &'static str,
    },
    /// The record's id, shortened or not.
    Id {
        /// Shortened to prefix plus first UUID group.
        short: bool,
    },
    /// A timestamp truncated to its date.
    Date,
    /// Text written by someone outside the system: sanitised, capped and marked.
    Untrusted {
        /// The cap in tokens, if any.
        max_tokens: Option<u32>,
    },
}

/// A piece of a prose template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProseSegment {
    /// Literal text.
    Text(&'static str),
    /// The output field with this index.
    Field(usize),
}

/// The rank key: which output field, which order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankInfo {
    /// Index into [`Projection::fields`].
    pub field: usize,
    /// Ascending or descending.
    pub order: Order,
}

impl Projection {
    /// Output field names, in order.
    pub fn output_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.fields.iter().map(|f| f.name)
    }

    /// The index of the output field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The rank field and order, by name.
    pub fn rank_field(&self) -> Option<(&'static FieldInfo, Order)> {
        let rank = self.rank?;
        Some((self.fields.get(rank.field)?, rank.order))
    }

    /// The untrusted fields and their caps.
    pub fn untrusted_fields(&self) -> impl Iterator<Item = (&'static FieldInfo, Option<u32>)> + '_ {
        self.fields.iter().filter_map(|f| match f.kind {
            FieldKind::Untrusted { max_tokens } => Some((f, max_tokens)),
            _ => None,
        })
    }

    /// How the rank order reads in a sentence: "most recent last_update first".
    pub fn order_phrase(&self) -> Option<String> {
        let (field, order) = self.rank_field()?;
        Some(order_phrase(
            field.name,
            field.kind == FieldKind::Date,
            order,
        ))
    }
}

/// How a rank order reads in a summary: "most recent last update first".
pub(crate) fn order_phrase(field: &str, dated: bool, order: Order) -> String {
    let name = field.replace('_', " ");
    match (dated, order) {
        (true, Order::Desc) => format!("most recent {name} first"),
        (true, Order::Asc) => format!("oldest {name} first"),
        (false, Order::Desc) => format!("highest {name} first"),
        (false, Order::Asc) => format!("lowest {name} first"),
    }
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
