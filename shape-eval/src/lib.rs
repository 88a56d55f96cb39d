//! Evaluation tooling for [`toolshape`]: what examples and tests use to judge a projection,
//! kept out of an application's build. Question sets checked against a projection
//! ([`questions`]) and the follow-up lookups and hedges of an agent's session ([`session`]).
//!
//! It reads a record type's description through `toolshape::__private`, as the derive's
//! generated code does, so its version is pinned to the runtime's.

#![deny(unreachable_pub, missing_docs)]
#![forbid(unsafe_code)]

pub mod questions;
pub mod session;
