//! Tests: untrusted.
