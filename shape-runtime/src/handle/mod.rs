//! Handles: a result too large to page is kept outside the transcript, reopened by handle.
//!
//! Handles: a result too large to be worth paging is stored outside the transcript, and the
//! model gets a short, unguessable handle to reopen it with a query.
//!
//! This module owns the handle itself ([`Handle`]: 96 random bits, `h_` and 30 digits),
//! what is stored under it ([`StoredResult`]), when to store
//! ([`HandlePolicy`]), the storage interface ([`HandleStore`], small enough for a shared
//! store such as Redis to implement) and the embedded default, [`MemoryStore`]: a byte cap,
//! a per-result cap, a time to live and least-recently-used eviction.
//!
//! A handle belongs to the owner (a principal the caller names) that stored it. Presented by
//! anyone else it is "not found", exactly as a handle that never existed; an expired or
//! evicted one says so, and names the tool to call again.
//!
//! ```
//! use toolshape::handle::{HandlePolicy, HandleStore, MemoryStore, StoredResult};
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let store = MemoryStore::new(64 << 20);
//! let result = StoredResult::new("search_tickets", "ticket", "tickets");
//! let handle = store.put("user:42", result, &HandlePolicy::default()).await?;
//! assert!(handle.to_string().starts_with("h_"));
//!
//! let again = store.get("user:42", &handle).await?;
//! assert_eq!(again.tool, "search_tickets");
//! // Another principal cannot tell the handle exists.
//! let err = store.get("user:7", &handle).await.unwrap_err();
//! assert!(err.to_string().starts_with("no stored result has this handle"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod id;
mod keep;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod memory;
mod open;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod open_query;
#[cfg(feature = "redis")]
mod redis;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod store;

pub use id::{Handle, HandleError};
pub use keep::Keep;
pub(crate) use keep::StoredForm;
pub use memory::{MemoryStore, StoreStats};
pub use open::OpenResult;
#[cfg(feature = "redis")]
pub use redis::{RedisStore, RedisStoreBuilder};
pub use store::{HandlePolicy, HandleStore, StoredResult};
