//! The rules `#[derive(ToolResult)]` (crate `toolshape-derive`, at compile time) and the
//! runtime's configured projections (crate `toolshape`, at start-up) both apply, written once
//! so that a record described either way reads the same and a mistake is named the same way:
//! the prose-template language ([`template`]) and the English the names follow ([`english`]).
//! The model is serde's `serde_derive_internals`: one set of internals, two consumers. Not for
//! direct use; its API follows the two crates' needs.

#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

pub mod english;
pub mod rules;
pub mod template;
