//! Aggregation: answers about counts without rows.
//!
//! "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98"
//! answers "is this repository healthy" in one sentence; returning 1,412 rows to answer it is
//! a category error. This module owns:
//!
//! - [`Aggregate`], what to count (the model asks for one through `open_result`, a Rust caller
//!   builds one), validated against the fields into a [`ValidAggregate`];
//! - [`AggregateResult`], what was counted, for the JSON channel and as one
//!   [sentence](AggregateResult::sentence);
//! - [`FieldMeta`], a field of the record description ([`Projection`](crate::record::Projection)) with the type of value
//!   the rows hold, which aggregation and `query` (the `open_result` query language) validate against, and
//!   [`FieldError`], what they say when a field is unknown or unfit for an operation.
//!
//! Aggregation works over projected records as JSON rows (`serde_json::Map`): dates are
//! `YYYY-MM-DD` text, legends words, resolved fields names or null, list fields arrays.
//! Null and missing values are counted, never dropped.
//!
//! ```
//! use serde_json::json;
//! use toolshape::{fields::Day, aggregate::Aggregate, __seams::aggregate::FieldMeta};
//!
//! let fields = [FieldMeta::legend("state"), FieldMeta::list("labels"), FieldMeta::date("opened")];
//! let rows: Vec<_> = [
//!     json!({"state": "open", "labels": ["bug", "ui"], "opened": "2026-03-01"}),
//!     json!({"state": "open", "labels": ["bug"], "opened": "2026-01-05"}),
//!     json!({"state": "closed", "labels": ["docs"], "opened": "2026-02-20"}),
//!     json!({"state": "open", "labels": [], "opened": "2026-02-27"}),
//! ]
//! .into_iter()
//! .filter_map(|v| v.as_object().cloned())
//! .collect();
//!
//! let today: Day = "2026-03-02".parse()?;
//! let result = Aggregate::new().recent("opened", 30).top("labels", 2).compute(&fields, &rows, today)?;
//! assert_eq!(
//!     result.sentence("issues"),
//!     "4 issues, 75% opened in the last 30 days, top labels: bug 2, docs 1, no labels 1"
//! );
//! assert_eq!(result.recent.as_ref().map(|r| r.count), Some(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod catalogue;
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
