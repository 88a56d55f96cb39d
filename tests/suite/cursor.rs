//! Tests: cursor.
