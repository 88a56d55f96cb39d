//! Untrusted text: what outsiders wrote, sanitised, capped, marked and bounded for a model.
//!
//! Untrusted text: what someone outside the system wrote (ticket subjects, issue bodies, web
//! pages), made safe to put in front of a model.
//!
//! Every value of an `untrusted` field goes through [`prepare`], in this order:
//!
//! 1. **Window.** With a cap of `N` tokens, a long value is read only as far as its cap
//!    needs: sanitising stops once about `8 × (N + 1)` bytes are out (growing while that holds
//!    fewer than `N + 1` tokens), and never goes past `(N + 1) × max_token_bytes` bytes of
//!    sanitised text or four times that read (no token covers more bytes than that, so `N + 1`
//!    tokens always fit): a 100 MB field is never tokenized whole.
//! 2. **Sanitising** ([`sanitize`](sanitise::sanitize)): invisible carriers are removed (Unicode tag characters
//!    outside the recommended subdivision flags, bidi controls, zero-width characters, other
//!    invisible format characters, stray variation selectors, C0 and C1 controls other than
//!    newline and tab, ANSI escape sequences), and U+2028 / U+2029 become newlines.
//! 3. **Links** ([`UrlPolicy`]): kept, flagged or stripped, by configuration.
//! 4. **Token cap** at a token boundary of the real tokenizer, where tokenizing the whole value
//!    would put it (see [`prepare`]), with a marker saying how much was cut:
//!    `… [cut: 1,840 more tokens]`, or `… [cut: about 6,478 more tokens]` when only a window
//!    was tokenized.
//!
//! In the text channel the result is then wrapped in a provenance delimiter naming its source,
//! `<untrusted source="search_tickets.subject">…</untrusted>`, after [`neutralize`](neutralise::neutralize) has defused
//! anything in the content that reads as that delimiter; optionally the delimiter carries the
//! call's random nonce and the content is datamarked. In the structured (JSON) channel, and a
//! JSON text channel under the compact policy, the value is neutralised but not wrapped (every
//! delimiter this library writes, `<untrusted…>` and `«…»`, is defused): JSON string escaping
//! keeps content inside its string, and the envelope's `untrusted` key names the fields once.
//!
//! [`attacker_bound`] computes, from a projection and a budget, the most attacker-controlled
//! tokens one call can show; each call's [`UntrustedStats::attacker_tokens`] is the actual figure.
//!
//! ```
//! use toolshape::untrusted::{prepare, UrlPolicy};
//! use toolshape::tokens::Bpe;
//!
//! let o200k = Bpe::o200k_base();
//! let text = "Refund\u{200B} please\u{E0041}\u{E0042} ![x](https://evil.example/p?d=1)";
//! let p = prepare(text, Some(40), &o200k, UrlPolicy::Flag);
//! assert_eq!(p.content, "Refund please x [image removed: evil.example]");
//! assert_eq!(p.removed.zero_width, 1);
//! assert_eq!(p.removed.tag_chars, 2);
//! assert_eq!(p.links, 1);
//! assert!(p.cut.is_none());
//! ```

#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod bound;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod cap;
pub(crate) mod echo;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod links;
mod list;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod neutralise;
mod policy;
#[cfg(feature = "rmcp")]
pub(crate) mod redact;
mod render;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod sanitise;
#[cfg(test)]
mod tests;

pub(crate) use bound::attacker_bound;
pub use bound::{AttackerBound, Unbounded};
pub use cap::{Prepared, Truncation, prepare};
pub(crate) use list::{ItemsCut, fit_items, is_items_cut};
pub use policy::{Provenance, Redaction, UntrustedPolicy, UrlPolicy};
pub use render::UntrustedStats;
pub(crate) use render::{UntrustedCall, as_shown, nonce, note_line, serialize_untrusted};
pub use sanitise::Removed;
pub(crate) use sanitise::unseen;
