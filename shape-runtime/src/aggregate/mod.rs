//! Aggregation: answers about counts without rows.
//!
//! "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98"
//! answers "is this repository healthy" in one sentence; returning 1,412 rows to answer it is
//! a category error. A model asks for one through `open_result`
//! (`count_by`, `top`, `recent`, `stats`); a Rust caller builds an [`Aggregate`] and gives it
//! to a call ([`Call::aggregate`](crate::Call::aggregate)), and the page's summary states it:
//!
//! ```
//! use toolshape::{Budget, Shaper, ToolResult, aggregate::Aggregate};
//!
//! #[derive(ToolResult)]
//! #[shape(name = "issue", plural = "issues")]
//! struct Issue {
//!     #[shape(id)] number: u64,
//!     #[shape(show)] state: String,
//!     #[shape(date)] opened: String,
//! }
//!
//! let issues: Vec<Issue> = (1..=4)
//!     .map(|n| Issue {
//!         number: n,
//!         state: if n == 3 { "closed" } else { "open" }.into(),
//!         opened: format!("2026-03-0{n}"),
//!     })
//!     .collect();
//! let by_state = Aggregate::new().count_by(Issue::FIELDS.state);
//! let page = Shaper::for_tool("list_issues")
//!     .budget(Budget::tokens(200))
//!     .call()
//!     .aggregate(&by_state)
//!     .shape_blocking(&issues)?;
//! assert!(page.text().contains("open 3"), "{}", page.text());
//! assert!(page.text().contains("closed 1"), "{}", page.text());
//! # Ok::<(), toolshape::ShapeError>(())
//! ```
//!
//! Aggregation works over projected records as JSON rows (`serde_json::Map`): dates are
//! `YYYY-MM-DD` text, legends words, resolved fields names or null, list fields arrays.
//! Null and missing values are counted, never dropped. A field unknown or unfit for its
//! operation is an [`AggregateError`] naming the fields that would work ([`FieldError`]).

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod catalogue;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
mod compute;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod result;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod spec;
#[cfg(test)]
mod tests;

pub use catalogue::{FieldError, FieldName};
pub(crate) use catalogue::{FieldMeta, Row};
pub(crate) use result::AggregateResult;
pub(crate) use spec::ValidAggregate;
pub use spec::{Aggregate, AggregateError};
