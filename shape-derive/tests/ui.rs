//! The derive's compile errors: each mistake in `tests/ui/*.rs` fails to compile with the
//! message in its `.stderr` beside it (set `TRYBUILD=overwrite` to rewrite them after a
//! deliberate change, then review the diff).

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
