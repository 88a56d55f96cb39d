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
#[cfg(feature = "eval")]
pub mod questions;
pub mod record;
pub use page::report;
pub mod resolve;
pub mod schema;
#[cfg(feature = "eval")]
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

// The face: what nearly every user names, once, at the root.
#[doc(inline)]
pub use budget::Budget;
#[doc(inline)]
pub use channel::ChannelPolicy;
#[doc(inline)]
pub use legend::Legend;
#[doc(inline)]
pub use page::render::Format;
#[doc(inline)]
pub use page::{ShapeError, Shaped};
#[doc(inline)]
pub use project::ToolResult;
#[doc(inline)]
pub use rank::Order;
#[doc(inline)]
pub use recorded::Recorded;
#[doc(inline)]
pub use shaper::{Call, Shaper};

/// The envelope a page is: its status, what it left out and why, what a model needs to
/// read it, and the form of its data.
pub mod envelope {
    pub use crate::page::envelope::{Frame, LeftOut, Needs, OmitReason, Omitted, Skipped, Status};
    pub use crate::page::render::StructuredForm;
}

/// What a call shapes: the one door into the page pipeline ([`Call::shape`],
/// [`Call::shape_blocking`], [`Call::shape_or_store`]) takes any [`Source`](source::Source).
pub mod source {
    pub use crate::shaper::{Ordered, Source, Stored};
}

/// What a field's type implements to take a `#[shape(...)]` transform (`date`, `id`,
/// `rank`, `legend`, `untrusted`), the values those traits give, and the day type dates
/// read as. The common types (`String`, integers, chrono, time, jiff, uuid) implement them
/// already; a type of your own implements one to take the transform.
pub mod fields {
    pub use crate::date::{DateField, DateValue, Day, DayError, iso_date};
    pub use crate::ids::{IdField, IdKey, IdText, short_id};
    pub use crate::legend::{LegendCode, LegendError, LegendField, LegendSource, LoadedLegend};
    pub use crate::rank::{KeyValue, RankKey};
    pub use crate::recorded::NOT_RECORDED;
    pub use crate::view::UntrustedText;
}

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use toolshape_derive::ToolResult;
