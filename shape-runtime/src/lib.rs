#![doc = include_str!("../docs/guide.md")]
#![deny(unreachable_pub)]
// No unsafe code; the unit tests' counting allocator (`alloc_count`, test builds only) is the
// one exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(missing_docs)]

// What a user names: namespaces where they help, the rest re-exported once at the root.
pub mod aggregate;
pub mod clients;
pub mod config;
pub mod configured;
pub mod cursor;
pub mod handle;
#[cfg(feature = "rmcp")]
pub mod mcp;
pub mod questions;
pub mod record;
pub use page::report;
pub mod resolve;
pub mod schema;
pub mod session;
pub mod tokens;
pub mod untrusted;

// Internals: one concept each, in floors (a module imports only modules below it).
mod budget;
mod catalogue;
mod channel;
mod date;
mod digits;
mod env;
mod ids;
mod legend;
mod nested;
mod page;
mod path;
mod project;
mod prose;
mod rank;
mod recorded;
mod reference;
mod shaper;
mod text;
mod view;

#[cfg(test)]
#[allow(unsafe_code)]
mod alloc_count;
#[cfg(test)]
#[global_allocator]
static COUNTING: alloc_count::Counting = alloc_count::Counting;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use aggregate::Aggregate;
pub use budget::{Budget, BudgetError};
pub use channel::ChannelPolicy;
pub use date::{DateField, DateValue, Day, DayError, iso_date};
pub use ids::{IdField, IdKey, IdText, short_id};
pub use legend::{Legend, LegendError, LoadedLegend};
pub use legend::{LegendCode, LegendField, LegendSource};
pub use page::envelope::{Frame, LeftOut, Needs, OmitReason, Omitted, Skipped, Status};
pub use page::render::{Format, StructuredForm};
pub use page::{ShapeError, Shaped};
pub use project::ToolResult;
pub use rank::{KeyValue, Order, RankKey};
pub use recorded::{NOT_RECORDED, Recorded};
pub use shaper::{Call, Shaper};
pub use view::UntrustedText;

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use toolshape_derive::ToolResult;
