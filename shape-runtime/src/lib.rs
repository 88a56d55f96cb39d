#![doc = include_str!("../docs/guide.md")]
#![deny(unreachable_pub)]
// No unsafe code; the unit tests' counting allocator (`alloc_count`, test builds only) is the
// one exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![deny(missing_docs)]

// What a user names: namespaces where they help, the rest re-exported once at the root.
pub mod aggregate;
pub use budget::tokens;
pub mod config;
pub mod configured;
pub mod cursor;
pub mod fields;
pub mod handle;
#[cfg(feature = "rmcp")]
pub mod mcp;
mod record;
pub use page::report;
pub mod resolve;
pub mod schema;
pub mod untrusted;

// Internals: one concept each, in floors (a module imports only modules below it).
mod budget;
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

#[cfg(feature = "test-seams")]
#[doc(hidden)]
#[path = "seams.rs"]
pub mod __seams;

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

/// Which channel each known MCP client's model reads, so a tool answers in that form: the
/// channel profile ([`ChannelPolicy`]) a client gets from the name it sends as `clientInfo`
/// at `initialize`.
///
/// Most coding agents pass their model only `structuredContent` when a result has it and drop
/// the text block; chat front ends and agent SDKs pass only the text. Answering a text reader
/// with [`ChannelPolicy::Text`] puts no `structuredContent` (and no `outputSchema` in
/// `tools/list`) in its way, so the prose or table channel reaches its model with the whole
/// budget; a structured reader gets [`ChannelPolicy::Structured`], the JSON envelope with the
/// whole budget. A client not in the table gets [`ChannelPolicy::Both`], both channels each within
/// the budget, which is right whichever it reads.
///
/// One function decides how a client reads, [`reader`](crate::clients::reader): every other way in (a shaper set for
/// a client, an MCP request's client, a configuration's `[clients]` table) asks it.
///
/// ```
/// use toolshape::ChannelPolicy;
/// use toolshape::clients::reader;
///
/// let profile = |name| reader(Some(name), &Default::default()).profile;
/// assert_eq!(profile("claude-code"), ChannelPolicy::Structured);
/// assert_eq!(profile("Visual Studio Code - Insiders"), ChannelPolicy::Structured);
/// assert_eq!(profile("langchain-mcp-adapters"), ChannelPolicy::Text);
/// assert_eq!(profile("my-own-agent"), ChannelPolicy::Both);
/// ```
pub mod clients {
    pub use crate::budget::clients::{ClientLimits, Reader, reader};
}

/// What a call shapes: the one door into the page pipeline ([`Call::shape`],
/// [`Call::shape_blocking`], [`Call::shape_or_store`]) takes any [`Source`](source::Source).
pub mod source {
    pub use crate::shaper::{Ordered, Source, Stored};
}

/// Derives [`ToolResult`]: see the crate documentation for the attributes.
pub use toolshape_derive::ToolResult;
