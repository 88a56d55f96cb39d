//! Evaluation: what examples and tests use to judge a projection (feature `eval`): question
//! sets checked against a projection ([`questions`]) and the follow-up lookups of a session
//! ([`session`]).

pub mod questions;
pub mod session;
