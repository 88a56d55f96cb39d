//! Cursors: where the next page starts, as an opaque, signed, stateless string.
//!
//! This module owns the cursor format and everything a tool author needs to page with it:
//!
//! - [`Keyset`]: the position itself — the rank key value and id of the last record shown,
//!   and the order. Keyset, not offsets: a record inserted or deleted between two calls
//!   neither repeats nor hides another one. [`Keyset::admits`] and `after_cursor` page an
//!   in-memory collection; [`Keyset::sql_predicate`] and [`Keyset::sql_order_by`] push the
//!   bound into a database query.
//! - [`CursorCodec`]: turns a keyset (plus the count shown so far) into a short base64url
//!   string signed with HMAC-SHA256, bound to one query ([`QueryHash`]), and back. A
//!   cursor that was altered, belongs to another query, has expired or cannot be read is a
//!   [`CursorError`] whose message tells the model how to recover; decoding never panics.
//! - [`CursorKeys`]: the signing key and, during a rotation, the previous one.
//! - [`UpstreamPosition`]: for a tool over an upstream that pages itself (a REST API with
//!   `Link: rel="next"`, a page token, an offset), the upstream's continuation and how many
//!   records of that page were shown; [`CursorCodec::encode_upstream`] signs it, and
//!   [`Call::upstream`](crate::Call::upstream) pages with it.
//!
//! By default a cursor carries its position, signed: it decodes after a restart and on another
//! replica that has the same key. Only where that cursor would crowd a record off a page (a
//! small budget, a long upstream continuation) does the page hold the position on the server
//! and hand out a short cursor ([`CursorForm::Held`]), in the process's memory unless the codec
//! has a store. With a [`CursorStore`] ([`CursorCodec::held_in`]) every
//! position stays on the server and the cursor is 38 characters: [`MemoryCursorStore`] for
//! one process, `RedisCursorStore` (feature `redis`) for replicas that share a Redis.
//!
//! ```
//! use std::sync::Arc;
//! use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, Keyset, QueryHash};
//! use toolshape::{fields::KeyValue, Order, Shaper};
//!
//! let codec = Arc::new(CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?));
//! let query = QueryHash::of("search_tickets", &serde_json::json!({"status": "open"}))?;
//!
//! // After showing 20 records, the last one ranked (2025-03-01, "tkt_42"):
//! let last = Keyset {
//!     rank: Some(KeyValue::Str("2025-03-01".into())),
//!     id: Some("tkt_42".into()),
//!     order: Order::Desc,
//! };
//! let cursor = codec.encode(&last, 20, &query);
//!
//! // The next call presents it with the same arguments, and resumes after `last`:
//! let search = Shaper::for_tool("search_tickets");
//! let call = search.call().paginate(Arc::clone(&codec), query, Some(&cursor))?;
//! let after = call.after_keyset().expect("a cursor with a key");
//! assert_eq!(after, &last);
//! // Records after the cursor, in the descending order: older dates, or the same date and a
//! // smaller id.
//! assert!(after.admits(Some(&KeyValue::Str("2025-02-28".into())), Some("tkt_99")));
//! assert!(!after.admits(Some(&KeyValue::Str("2025-03-01".into())), Some("tkt_42")));
//!
//! // Any other query is refused, with a remedy in the message.
//! let other = QueryHash::of("search_tickets", &serde_json::json!({"status": "closed"}))?;
//! let err = search.call().paginate(codec, other, Some(&cursor)).err().expect("refused");
//! assert_eq!(err, CursorError::ForeignQuery);
//! assert!(err.to_string().contains("without a cursor"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod codec;
mod error;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod held;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod keys;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod keyset;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod position;
#[cfg(feature = "redis")]
mod redis;
mod sql;
#[cfg(test)]
mod tests;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod wire;

pub use codec::CursorCodec;
pub(crate) use codec::Cursors;
pub use error::{CursorError, CursorSetupError};
pub use held::{CursorStore, MemoryCursorStore};
pub use keys::{CursorKeys, QueryHash};
pub use keyset::Keyset;
pub use position::UpstreamPosition;
pub(crate) use position::{Continuation, CursorForm};
#[cfg(feature = "redis")]
pub use redis::{RedisCursorStore, RedisCursorStoreBuilder};
pub use sql::{Placeholders, SqlOptions, SqlPredicate};
pub(crate) use wire::MAX_UPSTREAM_BYTES;
