//! Caps: one untrusted value sanitised, its links handled and cut at its token cap, at a
//! bounded cost ([`prepare`]).

use super::links::apply_links;
use super::policy::UrlPolicy;
use super::sanitise::{Removed, before_unended_tags, sanitize, sanitize_limited};
use crate::budget::tokens::{Tokenizer, last_split};
use crate::text::thousands;
use std::borrow::Cow;
use std::fmt;

/// How much of a value was cut at its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Tokens cut: the whole value less what is kept, each as shown (sanitised, links
    /// handled, and where values are delimited, delimiter look-alikes defused).
    pub tokens: u64,
    /// Whether `tokens` is exact; false when the value was so long that only its beginning was
    /// tokenized, and the rest was estimated from the tokens per byte of what was.
    pub exact: bool,
    /// Whether only the beginning of the value was sanitised and tokenized (a window sized from
    /// the cap; see [`prepare`]).
    pub byte_capped: bool,
    /// Whether the marker is a bare `…`: stating the figure would cost more tokens than were
    /// cut, so the marker never costs more than it saves.
    pub brief: bool,
}

impl Truncation {
    /// The marker with its figure, whatever it costs.
    fn full(&self) -> String {
        let about = if self.exact { "" } else { "about " };
        let unit = if self.tokens == 1 { "token" } else { "tokens" };
        format!("… [cut: {about}{} more {unit}]", thousands(self.tokens))
    }

    /// States the figure only where it costs no more tokens than were cut (counting the
    /// marker is cheap: it is a few short words); else the marker is a bare `…`.
    pub(crate) fn decide_brief(&mut self, tokenizer: &dyn Tokenizer) {
        self.brief = u64::try_from(tokenizer.count(&self.full())).unwrap_or(u64::MAX) > self.tokens;
    }
}

impl fmt::Display for Truncation {
    /// The marker shown after the kept text: `… [cut: 1,840 more tokens]`, or
    /// `… [cut: about 25,000,000 more tokens]` when estimated, or a bare `…` when the figure
    /// would cost more tokens than were cut.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.brief {
            true => f.write_str("…"),
            false => f.write_str(&self.full()),
        }
    }
}

/// An untrusted value made ready to show: see [`prepare`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared<'t> {
    /// The content that is shown: sanitised, links handled, capped. Every character of it is
    /// attacker-controlled; markers and delimiters are not part of it.
    pub content: Cow<'t, str>,
    /// Set when the value was cut at its cap; its `Display` is the marker.
    pub cut: Option<Truncation>,
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

/// Sanitises, applies the link policy to and caps one untrusted value, at a cost in
/// proportion to the cap, not to the value.
///
/// With `max_tokens = Some(n)`, the content is at most `n` tokens of `tokenizer`, counted on
/// the content alone (the cut is at a token boundary, then re-counted and shortened until it
/// fits, since a prefix can tokenize differently from the whole).
///
/// The cut is where tokenizing the whole sanitised value would put it, but a long value is
/// not tokenized whole: sanitising stops once a window of about `8 × (n + 1)` bytes of output
/// is filled (the window grows fourfold while it holds fewer than `n + 1` tokens), and only the
/// window up to its last boundary no token crosses ([`Tokenizer::splits_between`]) is
/// tokenized. What was cut is then stated as an estimate (`about …`) from the tokens per byte
/// of the window and of samples of the rest, each counted as the link policy shows it. A
/// value with no such boundary within `(n + 1) × max_token_bytes` bytes, or a tokenizer that
/// names none, falls back to tokenizing that many bytes whole, and at most four
/// times as many bytes of `text` are ever read: a 100 MB field is never tokenized whole. A value
/// no longer in bytes than its cap is never tokenized here: every token covers at least one
/// byte. Under [`UrlPolicy::Flag`] and [`UrlPolicy::Strip`] the window (or the part read of a
/// value too long to read whole) is trusted only up to the first place a link its end could
/// cut short could start.
///
/// ```
/// use toolshape::untrusted::{prepare, UrlPolicy};
/// use toolshape::{tokens::{Bpe, Tokenizer}};
///
/// let o200k = Bpe::o200k_base();
/// let p = prepare("Card declined at checkout", Some(2), &o200k, UrlPolicy::Keep);
/// assert_eq!(p.content, "Card declined");
/// assert_eq!(o200k.count("Card declined at checkout"), 4);
/// // Two tokens cut: a figure would cost more than that, so the marker is a bare ellipsis.
/// assert_eq!(p.cut.map(|c| c.to_string()).as_deref(), Some("…"));
/// assert_eq!(p.attacker_tokens(&o200k), 2);
///
/// let text = "card declined ".repeat(20);
/// let p = prepare(&text, Some(2), &o200k, UrlPolicy::Keep);
/// assert_eq!(p.cut.map(|c| c.to_string()).as_deref(), Some("… [cut: 39 more tokens]"));
///
/// // 100 MB is read only up to its first window.
/// let huge = "word ".repeat(20_000_000);
/// let p = prepare(&huge, Some(40), &o200k, UrlPolicy::Keep);
/// assert_eq!(p.content, "word ".repeat(40).trim_end());
/// assert!(p.cut.is_some_and(|c| c.byte_capped && !c.exact));
/// ```
pub fn prepare<'t>(
    text: &'t str,
    max_tokens: Option<u32>,
    tokenizer: &dyn Tokenizer,
    urls: UrlPolicy,
) -> Prepared<'t> {
    let mut prepared = prepare_capped(text, max_tokens, tokenizer, urls);
    if let Some(cut) = &mut prepared.cut {
        cut.decide_brief(tokenizer);
    }
    prepared
}

fn prepare_capped<'t>(
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
    let read_end = floor_char_boundary(text, limit.saturating_mul(4));
    if let Some(n) = cap
        && let Some(p) = prepare_windowed(text, n, tokenizer, urls, limit, read_end)
    {
        return p;
    }
    let (mut clean, mut removed, consumed) = sanitize_limited(&text[..read_end], limit);
    let byte_capped = consumed < text.len();
    // Read only in part and ending inside a link (longer than the part read: a signed URL of
    // a few KB at a small cap), the text is trusted under a policy that rewrites links only up
    // to where that link could start, as a window is: the content is then shorter, never the
    // link's beginning left as it was.
    let mut untrusted_rest = 0;
    let in_link = byte_capped && urls != UrlPolicy::Keep && super::links::ends_in_link(&clean);
    if in_link {
        let safe;
        (safe, untrusted_rest) = untrusted_end(&clean, urls, tokenizer);
        truncate_cow(&mut clean, safe);
    }
    let mut links = 0;
    let linked = match apply_links(&clean, urls, &mut links) {
        // Taking a link out can leave what followed it after a space: a variation selector
        // whose base was the link's last character is then a carrier. Sanitising the text
        // again takes it out.
        Cow::Owned(s) => {
            let (again, more) = sanitize(&s);
            let again = match again {
                Cow::Owned(again) => Some(again),
                Cow::Borrowed(_) => None,
            };
            removed.add(more);
            Some(again.unwrap_or(s))
        }
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
            let (end, kept) = fit(&content, t.prefix.len(), t.prefix_tokens, cap, tokenizer);
            cut_tokens = t.total_tokens.saturating_sub(kept);
            truncate_cow(&mut content, end);
            tokens = Some(kept);
        } else {
            tokens = Some(t.total_tokens);
        }
    }
    let cut = if byte_capped {
        let (toks, bytes) = per_byte.unwrap_or((1, 4));
        Some(estimated_cut(
            cut_tokens + untrusted_rest,
            0,
            past_link(&text[consumed..], in_link),
            (toks, bytes),
            tokenizer,
            urls,
        ))
    } else {
        (cut_tokens > 0).then_some(Truncation {
            tokens: cut_tokens as u64,
            exact: true,
            byte_capped,
            brief: false,
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

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut end = text.len().min(at);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Shortens `text[..end]`, the text of the first `tokens` tokens of a longer text, until it is
/// at most `cap` tokens counted on its own (a cut inside a piece can tokenize differently);
/// returns the new end and its tokens. A cut on a boundary no token crosses tokenizes alone as
/// it did within the text, so it is not counted again.
fn fit(
    text: &str,
    mut end: usize,
    tokens: usize,
    cap: usize,
    tokenizer: &dyn Tokenizer,
) -> (usize, usize) {
    let clean_cut = match (text[..end].chars().next_back(), text[end..].chars().next()) {
        (Some(last), Some(next)) => tokenizer.splits_between(last, next),
        _ => false,
    };
    let mut kept = if clean_cut {
        tokens
    } else {
        tokenizer.count(&text[..end])
    };
    let mut ask = cap;
    while kept > cap && ask > 0 {
        ask -= (kept - cap).min(ask);
        end = tokenizer.truncate(&text[..end], ask).prefix.len();
        kept = tokenizer.count(&text[..end]);
    }
    // A cut inside a subdivision flag goes before its tag characters, which would otherwise be
    // left invisible without their cancel tag.
    let whole = before_unended_tags(&text[..end]);
    if whole < end {
        end = whole;
        kept = tokenizer.count(&text[..end]);
    }
    (end, kept)
}

/// Holds a value to its cap again after neutralising changed it: a delimiter look-alike
/// becomes `[delimiter removed]`, which can take more tokens than the look-alike did, so a
/// value cut to exactly its cap could otherwise show a few more. Cuts the changed content at
/// the cap (a token boundary, as [`prepare`] does) and adds what it cut to the cut's figure,
/// or makes the cut. Returns the tokens kept when it cut, for the attacker figure.
///
/// Called only for a capped value that neutralising changed, whose content is then at most
/// a few tokens over the cap: counting it costs about what counting the cap did.
pub(crate) fn refit(
    content: &mut Cow<'_, str>,
    cut: &mut Option<Truncation>,
    cap: u32,
    tokenizer: &dyn Tokenizer,
) -> Option<usize> {
    let cap = cap as usize;
    let total = tokenizer.count(content);
    if total <= cap {
        return None;
    }
    let t = tokenizer.truncate(content, cap);
    let (end, kept) = fit(content, t.prefix.len(), t.prefix_tokens, cap, tokenizer);
    truncate_cow(content, end);
    let more = u64::try_from(total.saturating_sub(kept)).unwrap_or(u64::MAX);
    let mut now = match *cut {
        Some(c) => Truncation {
            tokens: c.tokens.saturating_add(more),
            ..c
        },
        None => Truncation {
            tokens: more,
            exact: true,
            byte_capped: false,
            brief: false,
        },
    };
    now.decide_brief(tokenizer);
    *cut = Some(now);
    Some(kept)
}

/// A cut of `cut_tokens` counted, then `window_rest` bytes of the window not tokenized and
/// the `unread` text, estimated. The window's rest is estimated at the window's tokens per
/// byte (`window`: tokens, bytes); the unread text at that of samples spread across it,
/// since a long body changes as it goes (prose first, code and links later: the window's
/// density alone was 36% low on a Markdown body).
fn estimated_cut(
    cut_tokens: usize,
    window_rest: usize,
    unread: &str,
    window: (usize, usize),
    tokenizer: &dyn Tokenizer,
    urls: UrlPolicy,
) -> Truncation {
    let (tokens, bytes) = window;
    let in_window = (window_rest as u128 * tokens as u128).div_ceil(bytes.max(1) as u128);
    // Nothing sampled only of nothing unread, whose rest is 0 at any density.
    let (sampled_tokens, sampled_bytes) = sample(unread, tokenizer, urls);
    let rest =
        (unread.len() as u128 * sampled_tokens as u128).div_ceil(sampled_bytes.max(1) as u128);
    let estimate = (cut_tokens as u128 + in_window + rest).max(1);
    Truncation {
        tokens: u64::try_from(estimate).unwrap_or(u64::MAX),
        exact: false,
        byte_capped: true,
        brief: false,
    }
}

/// Samples tokenized to estimate a long text: this many ...
const SAMPLES: usize = 24;
/// ... of about this many bytes each, spread evenly across it (3 KiB in all, however long
/// the text: the cap's cost stays flat in the value's size). Measured on ten real bodies
/// (this repository's Markdown, Rust and Python, CJK prose, links, GitHub issue bodies) at
/// caps of 20, 40, 200 and 1,000 tokens, the estimate is within 4.3% of the whole count (6.6%
/// with pieces cut after a space rather than before it); 8 samples of 256 bytes were up to
/// 20% off, 16 of 256 up to 5.6% (a third more to tokenize).
const SAMPLE_BYTES: usize = 128;

/// Tokens and bytes of samples of `text`: the whole of it when it is no longer than the
/// samples would be, else [`SAMPLES`] pieces spread evenly across it, each cut at char
/// boundaries and moved to word starts so words are not split (a split word takes more tokens
/// than it does whole): each piece starts at a space and ends just before one, as a space
/// begins the token of the word after it.
fn sample(text: &str, tokenizer: &dyn Tokenizer, urls: UrlPolicy) -> (usize, usize) {
    if text.len() <= SAMPLES * SAMPLE_BYTES {
        return (tokens_under(text, urls, tokenizer), text.len());
    }
    let stride = text.len() / SAMPLES;
    // Where links are rewritten, a piece that starts or ends inside a link would count the
    // link's remnant as text: its ends may move as far as a long URL goes.
    let reach = match urls {
        UrlPolicy::Keep => 32,
        UrlPolicy::Flag | UrlPolicy::Strip => 256,
    };
    let (mut tokens, mut bytes) = (0, 0);
    for i in 0..SAMPLES {
        let start = ceil_char_boundary(text, i * stride);
        let at = floor_char_boundary(text, start + SAMPLE_BYTES);
        // Stretched to just before the next space, at most `reach` bytes on.
        let end = text[at..]
            .char_indices()
            .take_while(|(o, _)| *o < reach)
            .find(|(_, c)| c.is_whitespace())
            .map_or(at, |(o, _)| at + o);
        // And started at a space, at most `reach` bytes on, where the piece has one.
        let begin = text[start..end]
            .char_indices()
            .take_while(|(o, _)| *o < reach)
            .find(|(_, c)| c.is_whitespace())
            .map_or(start, |(o, _)| start + o);
        let piece = &text[begin..end];
        tokens += tokens_under(piece, urls, tokenizer);
        bytes += piece.len();
    }
    (tokens, bytes)
}

/// What is unread past the rest of a link the part read ended in (its first run without
/// whitespace, if one ends within 64 KiB): counted under the policy with the part read, the
/// link's rest is not text of its own.
fn past_link(unread: &str, in_link: bool) -> &str {
    if !in_link {
        return unread;
    }
    let within = floor_char_boundary(unread, 64 << 10);
    match unread[..within].find(char::is_whitespace) {
        Some(at) => &unread[at..],
        None => unread,
    }
}

/// Where the link policy stops being safe to apply to `clean`, the beginning of a longer text
/// ([`window_safe_end`](super::links::window_safe_end)), and the tokens of what lies past it
/// as the policy shows it, for the estimate.
fn untrusted_end(clean: &str, urls: UrlPolicy, tokenizer: &dyn Tokenizer) -> (usize, usize) {
    let safe = super::links::window_safe_end(clean, link_free_prefix);
    (safe, tokens_under(&clean[safe..], urls, tokenizer))
}

/// Tokens of `text` once the link policy has rewritten its links (a link cut short at either
/// end reads as the bare URL it still holds, if any).
fn tokens_under(text: &str, urls: UrlPolicy, tokenizer: &dyn Tokenizer) -> usize {
    tokenizer.count(&apply_links(text, urls, &mut 0))
}

/// The smallest char boundary of `text` at or above `at`.
fn ceil_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Output bytes of the first window for a cap of `n` tokens: room for `n + 1` tokens of 8
/// bytes (English prose averages about 4.5 bytes a token, CJK about 3) and some slack.
fn first_window(n: usize) -> usize {
    (n + 1).saturating_mul(8).saturating_add(64)
}

/// Where a link could start at the earliest in `clean`, under a policy that rewrites links:
/// before it, the link policy leaves the text as it is whatever follows. Every match of the
/// link pattern starts at `[` (or up to 3 spaces or a `!` before it), `<`, a URL scheme (at
/// most 5 letters before `://`) or `www.`; the last 8 bytes are not trusted, since a scheme
/// or `www.` can start there and end after the window.
fn link_free_prefix(clean: &str) -> usize {
    let bytes = clean.as_bytes();
    let mut end = bytes.len().saturating_sub(8);
    for (i, w) in bytes.windows(4).enumerate().take(end) {
        let start = match w {
            // Back over the spaces or `!` right before it, which a match can start with.
            [b'[', ..] => Some(
                i - bytes[..i]
                    .iter()
                    .rev()
                    .take(4)
                    .take_while(|b| matches!(b, b' ' | b'!'))
                    .count(),
            ),
            [b'<', ..] => Some(i),
            [b':', b'/', b'/', _] => Some(i.saturating_sub(5)),
            _ if w.eq_ignore_ascii_case(b"www.") => Some(i),
            _ => None,
        };
        if let Some(start) = start {
            end = start;
            break;
        }
    }
    floor_char_boundary(clean, end)
}

/// The cap of a long value from growing windows of its beginning (see [`prepare`]); `None`
/// when the value is short enough to tokenize whole, or no window up to `limit` bytes shows
/// where the whole value's cut is.
fn prepare_windowed<'t>(
    text: &'t str,
    n: usize,
    tokenizer: &dyn Tokenizer,
    urls: UrlPolicy,
    limit: usize,
    read_end: usize,
) -> Option<Prepared<'t>> {
    let first = first_window(n);
    // Up to four windows' worth, the whole value is tokenized and the cut counted exactly.
    if text.len() <= first.saturating_mul(4) {
        return None;
    }
    let mut window = first.min(limit);
    loop {
        let (clean, removed, consumed) = sanitize_limited(&text[..read_end], window);
        // Sanitising stopped because the window was full, not at the end of what it may read,
        // so `clean` is exactly the beginning of the whole value sanitised.
        if consumed >= read_end {
            return None;
        }
        // Links are handled in the window, up to the first one its end could cut short.
        // What the window holds past that is counted, under the policy, for the estimate.
        let mut untrusted_rest = 0;
        let mut in_link = false;
        let (clean, links, removed) = match urls {
            UrlPolicy::Keep => (clean, 0, removed),
            UrlPolicy::Flag | UrlPolicy::Strip => {
                let safe;
                (safe, untrusted_rest) = untrusted_end(&clean, urls, tokenizer);
                in_link = super::links::ends_in_link(&clean);
                let mut links = 0;
                let mut removed = removed;
                let linked = match apply_links(&clean[..safe], urls, &mut links) {
                    // As the whole path: a carrier left by a removed link goes too.
                    Cow::Owned(s) => {
                        let (again, more) = sanitize(&s);
                        removed.add(more);
                        let again = match again {
                            Cow::Owned(again) => again,
                            Cow::Borrowed(_) => s,
                        };
                        Cow::Owned(again)
                    }
                    Cow::Borrowed(_) => {
                        let mut clean = clean;
                        truncate_cow(&mut clean, safe);
                        clean
                    }
                };
                (linked, links, removed)
            }
        };
        if let Some(split) = last_split(&clean, tokenizer) {
            let t = tokenizer.truncate(&clean[..split], n);
            if t.total_tokens > n {
                let (end, kept) = fit(&clean, t.prefix.len(), t.prefix_tokens, n, tokenizer);
                let cut = estimated_cut(
                    t.total_tokens - kept + untrusted_rest,
                    clean.len() - split,
                    past_link(&text[consumed..], in_link),
                    (t.total_tokens, split),
                    tokenizer,
                    urls,
                );
                let mut content = clean;
                truncate_cow(&mut content, end);
                return Some(Prepared {
                    content,
                    cut: Some(cut),
                    removed,
                    links,
                    tokens: Some(kept),
                });
            }
        }
        if window >= limit {
            return None;
        }
        window = window.saturating_mul(4).min(limit);
    }
}

#[cfg(test)]
mod tests {
    use super::{ceil_char_boundary, floor_char_boundary};

    /// `floor_char_boundary` at or below `at`, never past it (a limit inside a character reads
    /// up to its start); `ceil_char_boundary` at or above it, never before it; neither past
    /// the end.
    #[test]
    fn char_boundaries_never_cross_their_limit() {
        let text = "aé€b"; // a: 0, é: 1..3, €: 3..6, b: 6..7
        let floor = [0, 1, 1, 3, 3, 3, 6, 7, 7];
        let ceil = [0, 1, 3, 3, 6, 6, 6, 7, 7];
        for (at, (down, up)) in floor.into_iter().zip(ceil).enumerate() {
            assert_eq!(floor_char_boundary(text, at), down, "floor at {at}");
            assert_eq!(ceil_char_boundary(text, at), up, "ceil at {at}");
        }
        assert_eq!(
            (floor_char_boundary("", 5), ceil_char_boundary("", 5)),
            (0, 0)
        );
    }
}
