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

mod admit;
pub mod aggregate;
pub mod budget;
pub mod config;
pub mod cursor;
pub mod date;
mod env;
pub mod envelope;
pub mod handle;
#[cfg(feature = "redis")]
pub mod handle_redis;
pub mod ids;
pub mod legend;
#[cfg(feature = "rmcp")]
pub mod mcp;
pub mod open;
mod page;
pub mod project;
pub mod query;
pub mod rank;
pub mod record;
pub mod render;
pub mod report;
pub mod resolve;
pub mod schema;
pub mod shaper;
pub mod text;
pub mod tokens;
pub mod untrusted;
pub mod view;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use aggregate::{
    Aggregate, AggregateError, AggregateResult, FieldError, FieldMeta, FieldName, ValidAggregate,
    ValueType,
};
pub use budget::{Budget, BudgetError};
pub use config::{ConfigError, ShapeConfig, ToolConfig};
pub use cursor::{CursorCodec, CursorError, CursorKeys, Keyset, Position, QueryHash, after_cursor};
pub use date::{DateField, DateValue, Day, DayError, EpochField, EpochUnit, iso_date};
pub use env::{CallEnv, Channel, DateStyle, Diagnostics};
pub use envelope::{Frame, OmitReason, Omitted, Status};
pub use handle::{Handle, HandleError, HandlePolicy, HandleStore, MemoryStore, StoredResult};
#[cfg(feature = "redis")]
pub use handle_redis::RedisStore;
pub use ids::{IdField, IdKey, IdText, short_id};
pub use legend::{Legend, LegendCode, LegendError, LegendField, LegendSource, LoadedLegend};
pub use open::{Keep, OpenResult};
pub use project::ToolResult;
pub use query::{Bound, Filter, FilterOp, OpenQuery, QueryError, Sort, ValidQuery};
pub use rank::{KeyValue, Order, RankKey};
pub use record::{FieldInfo, FieldKind, FieldRef, FieldRole, Projection, ProseSegment, RankInfo};
pub use render::Format;
pub use report::{Cut, RawSize, Report};
pub use resolve::{
    KeyField, KeySet, NameMap, Needs, Resolve, ResolveError, Resolver, ResolverStats, Supplies,
};
pub use shaper::{Call, ChannelPolicy, Continuation, ShapeError, Shaped, Shaper};
pub use tokens::{Encoding, Tiktoken, Tokenizer, Truncated};
pub use untrusted::{Provenance, UntrustedPolicy, UntrustedStats};
pub use view::{Cx, UntrustedText};

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use toolshape_derive::ToolResult;
