//! Tests: derive.
