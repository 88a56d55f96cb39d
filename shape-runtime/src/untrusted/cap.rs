//! Caps: one untrusted value sanitised, its links handled and cut at its token cap, at a
//! bounded cost ([`prepare`]).

use super::links::apply_links;
use super::policy::UrlPolicy;
use super::sanitise::{Removed, sanitize_limited};
use crate::envelope::thousands;
use crate::tokens::Tokenizer;
use std::borrow::Cow;
use std::fmt;

/// How much of a value was cut at its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Tokens cut.
    pub tokens: u64,
    /// Whether `tokens` is exact; false when the value was so long it was cut in bytes before
    /// tokenizing, and the rest was estimated from the tokens per byte of what was read.
    pub exact: bool,
    /// Whether the value was cut in bytes before tokenizing.
    pub byte_capped: bool,
}

impl fmt::Display for Cut {
    /// The marker shown after the kept text: `… [cut: 1,840 more tokens]`, or
    /// `… [cut: about 25,000,000 more tokens]` when estimated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let about = if self.exact { "" } else { "about " };
        let unit = if self.tokens == 1 { "token" } else { "tokens" };
        write!(f, "… [cut: {about}{} more {unit}]", thousands(self.tokens))
    }
}

/// An untrusted value made ready to show: see [`prepare`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared<'t> {
    /// The content that is shown: sanitised, links handled, capped. Every character of it is
    /// attacker-controlled; markers and delimiters are not part of it.
    pub content: Cow<'t, str>,
    /// Set when the value was cut at its cap; its `Display` is the marker.
    pub cut: Option<Cut>,
    /// What sanitising removed (in the part that was read).
    pub removed: Removed,
    /// Links and images flagged or stripped.
    pub links: u32,
    /// Tokens of `content`, when capping already counted them.
    tokens: Option<usize>,
}

impl Prepared<'_> {
    /// Tokens of [`content`](Self::content): the attacker-controlled tokens this value shows.
    pub fn attacker_tokens(&self, tokenizer: &dyn Tokenizer) -> usize {
        match self.tokens {
            Some(n) => n,
            None if self.content.is_empty() => 0,
            None => tokenizer.count(&self.content),
        }
    }
}

fn truncate_cow(text: &mut Cow<'_, str>, end: usize) {
    match text {
        Cow::Borrowed(s) => *s = &s[..end],
        Cow::Owned(s) => s.truncate(end),
    }
}

/// Sanitises, applies the link policy to and caps one untrusted value, at a bounded cost.
///
/// With `max_tokens = Some(n)`, the content is at most `n` tokens of `tokenizer`, counted on
/// the content alone (the cut is at a token boundary, then re-counted and shortened until it
/// fits, since a prefix can tokenize differently from the whole), and at most
/// `4 × (n + 1) × max_token_bytes` bytes of `text` are read. A value no longer in bytes than
/// its cap is never tokenized here: every token covers at least one byte.
///
/// ```
/// use toolshape::untrusted::{prepare, UrlPolicy};
/// use toolshape::{tokens::{Tiktoken, Tokenizer}};
///
/// let o200k = Tiktoken::o200k_base();
/// let p = prepare("Card declined at checkout", Some(2), &o200k, UrlPolicy::Keep);
/// assert_eq!(p.content, "Card declined");
/// assert_eq!(o200k.count("Card declined at checkout"), 4);
/// assert_eq!(p.cut.map(|c| c.to_string()).as_deref(), Some("… [cut: 2 more tokens]"));
/// assert_eq!(p.attacker_tokens(&o200k), 2);
///
/// // 100 MB is read only up to the byte cap.
/// let huge = "word ".repeat(20_000_000);
/// let p = prepare(&huge, Some(40), &o200k, UrlPolicy::Keep);
/// assert_eq!(o200k.count(&p.content), 40);
/// assert!(p.cut.is_some_and(|c| c.byte_capped && !c.exact));
/// ```
pub fn prepare<'t>(
    text: &'t str,
    max_tokens: Option<u32>,
    tokenizer: &dyn Tokenizer,
    urls: UrlPolicy,
) -> Prepared<'t> {
    let cap = max_tokens.map(|n| n as usize);
    // No token covers more than max_token_bytes bytes, so cap + 1 tokens fit in `limit` bytes:
    // a text cut there still shows that it was over its cap.
    let limit = cap.map_or(usize::MAX, |n| {
        (n + 1).saturating_mul(tokenizer.max_token_bytes().max(1))
    });
    let window = limit.saturating_mul(4);
    let mut read_end = text.len().min(window);
    while !text.is_char_boundary(read_end) {
        read_end -= 1;
    }
    let (clean, removed, consumed) = sanitize_limited(&text[..read_end], limit);
    let byte_capped = consumed < text.len();
    let unread = text.len() - consumed;
    let mut links = 0;
    let linked = match apply_links(&clean, urls, &mut links) {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    };
    let mut content = match linked {
        Some(s) => Cow::Owned(s),
        None => clean,
    };
    let mut tokens = None;
    let mut cut_tokens = 0usize;
    let mut per_byte = None;
    if let Some(cap) = cap
        && content.len() > cap
    {
        let t = tokenizer.truncate(&content, cap);
        per_byte = Some((t.total_tokens, content.len()));
        if t.prefix.len() < content.len() {
            let mut end = t.prefix.len();
            let mut kept = tokenizer.count(&content[..end]);
            let mut ask = cap;
            while kept > cap && ask > 0 {
                ask -= (kept - cap).min(ask);
                end = tokenizer.truncate(&content[..end], ask).prefix.len();
                kept = tokenizer.count(&content[..end]);
            }
            cut_tokens = t.total_tokens.saturating_sub(kept);
            truncate_cow(&mut content, end);
            tokens = Some(kept);
        } else {
            tokens = Some(t.total_tokens);
        }
    }
    let cut = if byte_capped {
        let (toks, bytes) = per_byte.unwrap_or((1, 4));
        let rest = (unread as u128 * toks as u128).div_ceil(bytes.max(1) as u128);
        let estimate = (cut_tokens as u128 + rest).max(1);
        Some(Cut {
            tokens: u64::try_from(estimate).unwrap_or(u64::MAX),
            exact: false,
            byte_capped,
        })
    } else {
        (cut_tokens > 0).then_some(Cut {
            tokens: cut_tokens as u64,
            exact: true,
            byte_capped,
        })
    };
    Prepared {
        content,
        cut,
        removed,
        links,
        tokens,
    }
}
