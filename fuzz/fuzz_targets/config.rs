//! Configuration text, as TOML and as JSON: an answer or a clear error, and every shaper a
//! configuration makes answers an error envelope with nothing invisible in it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolshape_fuzz::config(data));
