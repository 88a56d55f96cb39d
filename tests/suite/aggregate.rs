//! Tests: aggregate.
