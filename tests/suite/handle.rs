//! Tests: handle.
