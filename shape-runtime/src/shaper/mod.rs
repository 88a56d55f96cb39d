//! Shaping one tool's results: its settings ([`Shaper`]) and one call of it ([`Call`]).
//!
//! How one tool's results are shaped ([`Shaper`]: budget, tokenizer, format, channels, page
//! size, untrusted-text policy; built once, cheap to clone and share) and one call of it
//! ([`Call`]: where the rows stand in the whole result, the cursor, the raw payload). A call
//! ranks its rows, resolves keys (one batched call per resolver), and hands the page's
//! reach to the page pipeline (`page`).
//!
//! As tower keeps a `Layer` apart from `call(req)`, the configuration here never changes
//! per call: [`Shaper::call`] starts a request, and the shorthand [`Shaper::shape`] is
//! a call with nothing set.
//!
//! ```
//! use toolshape::{Budget, Format, Shaper, ToolResult};
//!
//! #[derive(ToolResult)]
//! #[shape(name = "city", plural = "cities", prose = "{name}: {population}")]
//! struct City {
//!     #[shape(show)]
//!     name: String,
//!     #[shape(rank = desc)]
//!     population: u64,
//! }
//!
//! let rows = vec![
//!     City { name: "Lyon".into(), population: 522_000 },
//!     City { name: "Paris".into(), population: 2_103_000 },
//! ];
//! let shaped = Shaper::for_tool("list_cities")
//!     .budget(Budget::tokens(200))
//!     .format(Format::Prose)
//!     .shape_blocking(&rows)
//!     .unwrap();
//! assert_eq!(
//!     shaped.text(),
//!     "ok: 2 cities, highest population first.\nParis: 2103000\nLyon: 522000\n"
//! );
//! assert!(shaped.report().tokens.text <= 200);
//! ```

mod blocking;
mod call;
mod keys;
mod order;
mod settings;
mod source;
mod summary;
mod upstream;

pub use call::Call;
pub(crate) use call::{RowOrder, resolve_rows};
pub(crate) use keys::{Ids, Keyed};
pub use settings::Shaper;
pub(crate) use settings::hide_check;
pub use source::{Ordered, Source, Stored};
pub(crate) use summary::{Details, SummaryError, summarise};
