//! The untrusted-text pipeline (sanitise, links, token cap, neutralise) and the cleaning of
//! echoed error text: no panic, nothing invisible survives, the cap holds, and sanitising
//! what was already sanitised changes nothing.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolshape_fuzz::sanitiser(data));
