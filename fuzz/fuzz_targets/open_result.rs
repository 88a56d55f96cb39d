//! `open_result` arguments: any bytes that parse as JSON, against a stored result. A
//! `"handle": "H"` is replaced by the real handle, so queries reach validation and paging;
//! a `"cursor"` whose text starts with `S:` is replaced by the rest signed for the query.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolshape_fuzz::open_result(data));
