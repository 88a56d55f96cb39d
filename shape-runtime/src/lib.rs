//! # shape
//!
//! Typed, budgeted, injection-aware tool results for LLM agents.
//!
//! Annotate the domain structs a service already has with `#[derive(ToolResult)]`; the
//! compiler checks the projection contract (every field shown or skipped, explicitly), and
//! the runtime shapes every tool call the same way: one envelope, an exact token budget,
//! rank-then-truncate on record boundaries, stable cursors, handles, aggregation, and
//! untrusted text that is sanitised, capped and marked.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aggregate;
pub mod date;
pub mod envelope;
pub mod ids;
pub mod legend;
pub mod project;
pub mod query;
pub mod rank;
pub mod resolve;
pub mod schema;
pub mod text;
pub mod tokens;
pub mod untrusted;
pub mod view;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use aggregate::{
    Aggregate, AggregateError, AggregateResult, Day, DayError, FieldError, FieldMeta, FieldName,
    FieldRole, ValidAggregate, ValueType,
};
pub use date::{DateField, DateValue, iso_date};
pub use ids::{IdText, short_id};
pub use legend::{Legend, LegendError, LegendField, LegendSource, LoadedLegend};
pub use project::{FieldInfo, FieldKind, Projection, ProseSegment, RankInfo, ToolResult};
pub use query::{Bound, Filter, FilterOp, OpenQuery, QueryError, Sort, ValidQuery};
pub use rank::{KeyValue, Order, RankKey};
pub use resolve::{KeyField, KeySet, Needs, Resolve, ResolveError, Resolver, ResolverStats, Supplies};
pub use tokens::{Encoding, Tiktoken, Tokenizer, Truncated};
pub use untrusted::{Provenance, UntrustedPolicy, UntrustedStats};
pub use view::{CallEnv, Channel, Cx, Diagnostics, UntrustedText};

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use shape_derive::ToolResult;
