//! The untrusted-text pipeline (sanitise, links, token cap, neutralise) and the cleaning of
//! echoed error text: no panic, nothing invisible survives, the cap holds, and sanitising
//! what was already sanitised changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolshape::tokens::{Tiktoken, Tokenizer};
use toolshape::untrusted::{neutralize, prepare, sanitize, UrlPolicy};
use toolshape_fuzz::invisible;

fn o200k() -> &'static Tiktoken {
    static T: OnceLock<Tiktoken> = OnceLock::new();
    T.get_or_init(Tiktoken::o200k_base)
}

fuzz_target!(|data: (u8, &str)| {
    let (b, text) = data;
    let urls = [UrlPolicy::Keep, UrlPolicy::Flag, UrlPolicy::Strip][usize::from(b) % 3];
    let cap = (b >> 2) % 40 + 1;
    let p = prepare(text, Some(u32::from(cap)), o200k(), urls);
    assert!(!p.content.chars().any(|c| invisible(c) && c != '\t'), "{:?}", p.content);
    assert!(o200k().count(&p.content) <= usize::from(cap), "{:?} over {cap}", p.content);
    let (clean, _) = sanitize(text);
    assert_eq!(sanitize(&clean).0, clean, "sanitising is not idempotent");
    let _ = neutralize(&p.content);
    let echoed = toolshape::__private::echo_clean(text);
    assert!(!echoed.chars().any(invisible), "{echoed:?}");
    assert!(echoed.chars().count() <= 601);
});
