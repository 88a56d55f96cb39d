//! The cursor codec and every paging mode that reads a cursor. The first byte picks the
//! kind of input: a body signed with the real key (so the parser behind the signature check
//! is reached), or the text as presented (base64, length, signature checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolshape_fuzz::cursor(data));
