#![doc = include_str!("../docs/guide.md")]
#![deny(unreachable_pub)]
// No unsafe code; the unit tests' counting allocator (`alloc_count`, test builds only) is the
// one exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(missing_docs)]

// What a user names: namespaces where they help, the rest re-exported once at the root.
pub mod aggregate;
pub use budget::{clients, tokens};
pub mod config;
pub mod configured;
pub mod cursor;
pub mod fields;
pub mod handle;
#[cfg(feature = "rmcp")]
pub mod mcp;
#[cfg(feature = "eval")]
pub use eval::{questions, session};
pub mod record;
pub use page::report;
pub mod resolve;
pub mod schema;
pub mod untrusted;

// Internals: one concept each, in floors (a module imports only modules below it).
mod budget;
#[cfg(feature = "eval")]
mod eval;
mod page;
mod shaper;
mod text;

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
pub use budget::channel::ChannelPolicy;
#[doc(inline)]
pub use fields::legend::Legend;
#[doc(inline)]
pub use fields::rank::Order;
#[doc(inline)]
pub use fields::recorded::Recorded;
#[doc(inline)]
pub use page::render::Format;
#[doc(inline)]
pub use page::{ShapeError, Shaped};
#[doc(inline)]
pub use record::tool_result::ToolResult;
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

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use toolshape_derive::ToolResult;
