//! Token counting with a real tokenizer, never bytes/4.
//!
//! [`Tokenizer`] is the one interface the budget, the caps on untrusted text and the reports
//! use. Two built-in implementations count the same vocabularies (o200k_base by default,
//! cl100k_base) with identical results: [`Bpe`] wraps GitHub's `bpe-openai` (about twice as
//! fast; the default) and `Tiktoken` (feature `tiktoken`) wraps `tiktoken-rs`. Vocabularies are loaded once per
//! process and shared across threads.
//!
//! ```
//! use toolshape::{tokens::{Bpe, Tokenizer}};
//!
//! let o200k = Bpe::o200k_base();
//! assert_eq!(o200k.count("Card declined at checkout"), 4);
//! // Cut at a token boundary: the prefix is the text of the first 2 tokens.
//! let cut = o200k.truncate("Card declined at checkout", 2);
//! assert_eq!(cut.prefix, "Card declined");
//! assert_eq!(cut.total_tokens, 4);
//! ```

pub use crate::budget::BudgetError;
use std::fmt;
use std::sync::OnceLock;

/// Counts tokens exactly as a model's tokenizer does.
///
/// Implementations must be deterministic and must count text as ordinary text: a special
/// token such as `<|endoftext|>` inside a value counts as the characters it is made of.
pub trait Tokenizer: Send + Sync {
    /// The tokenizer's name, as used in configuration (`"o200k_base"`).
    fn name(&self) -> &str;

    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> usize;

    /// The longest prefix of `text` made of at most `max_tokens` whole tokens, ending on a
    /// character boundary, and the number of tokens in the whole text.
    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t>;

    /// The most bytes one token of this vocabulary can cover; used to cap a huge text in
    /// bytes before tokenizing it, so a 100 MB field is never tokenized whole.
    fn max_token_bytes(&self) -> usize;

    /// Whether no token ever crosses a boundary between the characters `last` and `next`,
    /// whatever comes before or after them: for any text with `last` at `i - 1` and `next` at
    /// `i`, the tokens of `text[..i]` are exactly the tokens of `text` that end at or before
    /// `i`. Capping a long untrusted value uses such a boundary to tokenize only the beginning
    /// of the value and still cut exactly where tokenizing the whole value would.
    ///
    /// The default, `false` everywhere, is always correct: capping then tokenizes a window of
    /// `(cap + 1) × max_token_bytes` bytes whole.
    fn splits_between(&self, last: char, next: char) -> bool {
        let _ = (last, next);
        false
    }

    /// Each of `text`'s tokens' length in bytes, in order (a token may end inside a
    /// multi-byte character), or `None` where the implementation cannot tell: the default.
    /// Cutting a long text into many parts uses it to tokenize each byte about once; without
    /// it, each part is tokenized on its own.
    fn token_lens(&self, text: &str) -> Option<Vec<u32>> {
        let _ = text;
        None
    }
}

/// The boundaries no token of an OpenAI vocabulary crosses, whatever surrounds them.
///
/// Both vocabularies split text with a pattern before byte-pair encoding each piece on its
/// own, so a piece boundary is a token boundary. In the o200k and cl100k patterns, an ASCII
/// letter or digit can only be part of a run of letters (with marks, and an apostrophe suffix
/// such as `'ll`) or of a run of digits; neither run continues into an ASCII character that is
/// not a letter, a digit or an apostrophe, so the piece holding `last` ends right before such
/// a `next`. Every alternative tried before that piece's match stops inside these runs or at
/// `next` (no run crosses from a letter or a digit into punctuation or whitespace), so the
/// match is the same whether the text goes on after `next` or ends before it, and so are all
/// the pieces before it. `tests/suite/tokenizers.rs` checks the consequence against whole-text
/// tokenization on adversarial and random text.
pub(super) fn openai_splits_between(last: char, next: char) -> bool {
    last.is_ascii_alphanumeric() && next.is_ascii() && !next.is_ascii_alphanumeric() && next != '\''
}

/// The byte length of `text`'s first `max_tokens` tokens, given each token's length in order,
/// backed off to a character boundary (a token can end inside a multi-byte character).
/// Returns the prefix end and whether it is exactly the end of a token.
pub(super) fn prefix_end(
    text: &str,
    lens: impl Iterator<Item = usize>,
    max_tokens: usize,
) -> (usize, bool) {
    let len: usize = lens.take(max_tokens).sum();
    let mut end = len.min(text.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    (end, end == len)
}

/// The result of [`Tokenizer::truncate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated<'t> {
    /// The text of the first tokens, on a character boundary.
    pub prefix: &'t str,
    /// Tokens in `prefix`.
    pub prefix_tokens: usize,
    /// Tokens in the whole text that was tokenized.
    pub total_tokens: usize,
}

/// Which vocabulary a tokenizer ([`Bpe`], `Tiktoken`) uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o-series. The default.
    O200kBase,
    /// GPT-4, GPT-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    /// The encoding's usual name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Looks an encoding up by its usual name.
    pub fn from_name(name: &str) -> Option<Encoding> {
        match name {
            "o200k_base" => Some(Encoding::O200kBase),
            "cl100k_base" => Some(Encoding::Cl100kBase),
            _ => None,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `tiktoken-rs` vocabulary (feature `tiktoken`). Cheap to copy: the vocabulary itself is a process-wide singleton.
#[cfg(any(feature = "tiktoken", test))]
#[derive(Clone, Copy)]
pub struct Tiktoken {
    encoding: Encoding,
    bpe: &'static tiktoken_rs::CoreBPE,
}

#[cfg(any(feature = "tiktoken", test))]
impl fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish()
    }
}

#[cfg(any(feature = "tiktoken", test))]
impl Tiktoken {
    /// o200k_base, the default.
    pub fn o200k_base() -> Tiktoken {
        Tiktoken::new(Encoding::O200kBase)
    }

    /// cl100k_base.
    pub fn cl100k_base() -> Tiktoken {
        Tiktoken::new(Encoding::Cl100kBase)
    }

    /// The tokenizer for `encoding`; the first call per encoding loads the vocabulary.
    pub fn new(encoding: Encoding) -> Tiktoken {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        Tiktoken { encoding, bpe }
    }

    /// Which vocabulary this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

#[cfg(any(feature = "tiktoken", test))]
impl Default for Tiktoken {
    fn default() -> Self {
        Tiktoken::o200k_base()
    }
}

#[cfg(any(feature = "tiktoken", test))]
impl Tokenizer for Tiktoken {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }

    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t> {
        let tokens = self.bpe.encode_ordinary(text);
        if tokens.len() <= max_tokens {
            return Truncated {
                prefix: text,
                prefix_tokens: tokens.len(),
                total_tokens: tokens.len(),
            };
        }
        let lens = tokens.iter().map(|&token| {
            self.bpe
                .decode_bytes(&[token])
                .map_or(0, |bytes| bytes.len())
        });
        let (end, whole) = prefix_end(text, lens, max_tokens);
        let prefix = &text[..end];
        let prefix_tokens = if whole {
            max_tokens
        } else {
            self.bpe.encode_ordinary(prefix).len()
        };
        Truncated {
            prefix,
            prefix_tokens,
            total_tokens: tokens.len(),
        }
    }

    fn max_token_bytes(&self) -> usize {
        // The longest tokens in both vocabularies are runs of spaces or dashes well under
        // 256 bytes; 256 is a safe upper bound for byte-capping before tokenizing.
        256
    }

    fn splits_between(&self, last: char, next: char) -> bool {
        openai_splits_between(last, next)
    }

    fn token_lens(&self, text: &str) -> Option<Vec<u32>> {
        let mut tokens = self.bpe.encode_ordinary(text);
        for token in &mut tokens {
            let len = self
                .bpe
                .decode_bytes(&[*token])
                .map_or(0, |bytes| bytes.len());
            *token = u32::try_from(len).unwrap_or(u32::MAX);
        }
        Some(tokens)
    }
}

/// An OpenAI vocabulary counted by the pure-Rust `tiktoken` crate (4.x): the same tokens as
/// tiktoken-rs (checked on real payloads, the adversarial corpus and random edge-case text by
/// `tests/suite/tokenizers.rs`), several times faster than bpe-openai. The default tokenizer.
/// Cheap to copy.
///
/// ```
/// use toolshape::tokens::{Bpe, Tokenizer};
///
/// let text = "Card declined at checkout, twice: «réessayez» 支払いが拒否されました";
/// assert_eq!(Bpe::o200k_base().truncate(text, 3).prefix, "Card declined at");
/// // With feature `tiktoken`, tiktoken-rs counts the same.
/// #[cfg(feature = "tiktoken")]
/// assert_eq!(
///     Bpe::o200k_base().count(text),
///     toolshape::tokens::Tiktoken::o200k_base().count(text)
/// );
/// ```
#[derive(Clone, Copy)]
pub struct Bpe {
    encoding: Encoding,
    core: &'static tiktoken::CoreBpe,
}

impl fmt::Debug for Bpe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bpe")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Bpe {
    /// o200k_base, the default.
    pub fn o200k_base() -> Bpe {
        Bpe::new(Encoding::O200kBase)
    }

    /// cl100k_base.
    pub fn cl100k_base() -> Bpe {
        Bpe::new(Encoding::Cl100kBase)
    }

    /// The tokenizer for `encoding`; the first call per encoding loads the vocabulary.
    pub fn new(encoding: Encoding) -> Bpe {
        let core = match tiktoken::get_encoding(encoding.name()) {
            Some(core) => core,
            // Both vocabularies are compiled in (features `vocab-o200k_base` and
            // `vocab-cl100k_base` of the `tiktoken` dependency).
            None => unreachable!("the {} vocabulary is compiled in", encoding.name()),
        };
        Bpe { encoding, core }
    }

    /// Which vocabulary this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl Default for Bpe {
    fn default() -> Self {
        Bpe::o200k_base()
    }
}

impl Tokenizer for Bpe {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> usize {
        // Special-token text counts as the characters it is made of (`count`, not
        // `count_with_special_tokens`).
        self.core.count(text)
    }

    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t> {
        let tokens = self.core.encode(text);
        if tokens.len() <= max_tokens {
            return Truncated {
                prefix: text,
                prefix_tokens: tokens.len(),
                total_tokens: tokens.len(),
            };
        }
        // The first tokens' bytes are the text's first bytes.
        let len = self.core.decode(&tokens[..max_tokens]).len();
        let (end, whole) = prefix_end(text, std::iter::once(len), 1);
        let prefix = &text[..end];
        Truncated {
            prefix,
            prefix_tokens: if whole {
                max_tokens
            } else {
                self.count(prefix)
            },
            total_tokens: tokens.len(),
        }
    }

    fn max_token_bytes(&self) -> usize {
        // The same vocabularies as `Tiktoken`.
        256
    }

    fn splits_between(&self, last: char, next: char) -> bool {
        openai_splits_between(last, next)
    }

    fn token_lens(&self, text: &str) -> Option<Vec<u32>> {
        let lens = self.lens();
        // The ids become their lengths in place: no second vector of a long text's size.
        let mut tokens = self.core.encode(text);
        for token in &mut tokens {
            *token = match lens.get(*token as usize) {
                Some(&len) => u32::from(len),
                None => u32::try_from(self.core.decode(&[*token]).len()).unwrap_or(u32::MAX),
            };
        }
        Some(tokens)
    }
}

impl Bpe {
    /// Each token's length in bytes, by id: made once per vocabulary, on first use (about
    /// 200,000 lookups), so that [`Tokenizer::token_lens`] reads lengths, not bytes.
    fn lens(&self) -> &'static [u16] {
        static O200K: OnceLock<Vec<u16>> = OnceLock::new();
        static CL100K: OnceLock<Vec<u16>> = OnceLock::new();
        let cell = match self.encoding {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        };
        cell.get_or_init(|| {
            (0..self.core.vocab_size())
                .map(|id| {
                    let len = u32::try_from(id).map_or(0, |id| self.core.decode(&[id]).len());
                    u16::try_from(len).unwrap_or(u16::MAX)
                })
                .collect()
        })
    }
}

/// The last position `b < text.len()` where `tokenizer` never splits a token across
/// `text[b - 1]` and `text[b]`, so that `text[..b]` tokenizes as the start of any text that
/// begins with `text`.
pub(crate) fn last_split(text: &str, tokenizer: &dyn Tokenizer) -> Option<usize> {
    let mut chars = text.char_indices().rev();
    let (_, mut next) = chars.next()?;
    for (i, last) in chars {
        if tokenizer.splits_between(last, next) {
            return Some(i + last.len_utf8());
        }
        next = last;
    }
    None
}

/// The first position `b > 0` where `tokenizer` never splits a token across `text[b - 1]` and
/// `text[b]`, so that `text[b..]` tokenizes as the end of any text that ends with `text`.
fn first_split(text: &str, tokenizer: &dyn Tokenizer) -> Option<usize> {
    let mut chars = text.char_indices();
    let (_, mut last) = chars.next()?;
    for (i, next) in chars {
        if tokenizer.splits_between(last, next) {
            return Some(i);
        }
        last = next;
    }
    None
}

/// The tokens of `a` and of `b`, two renderings of one record that differ in a few places
/// (the text channel's JSON wraps untrusted values in provenance tags; the structured
/// channel's does not), tokenizing what they share only once.
///
/// Both are cut where no token crosses ([`Tokenizer::splits_between`]) at the end of their
/// common beginning and the start of their common end: a token boundary there is a boundary
/// of the pre-tokenizer's pieces, and the pieces of a text after such a boundary are those of
/// the rest of the text alone (the OpenAI patterns look ahead, never behind), so the tokens of
/// each are the sum of its three parts' and the shared parts are counted once. The counts
/// are exact; with a tokenizer that names no such boundary, both are counted whole.
pub(crate) fn count_pair(tokenizer: &dyn Tokenizer, a: &str, b: &str) -> (usize, usize) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let mut prefix = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    while !a.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = x.len().min(y.len()) - prefix;
    let mut suffix = x
        .iter()
        .rev()
        .zip(y.iter().rev())
        .take(room)
        .take_while(|(p, q)| p == q)
        .count();
    while !a.is_char_boundary(x.len() - suffix) {
        suffix -= 1;
    }
    let start = last_split(&a[..prefix], tokenizer).unwrap_or(0);
    let end = first_split(&a[x.len() - suffix..], tokenizer).map_or(0, |k| suffix - k);
    // `end` bytes at the end of both are shared, from a boundary in each.
    let (a_mid, b_mid) = (&a[start..x.len() - end], &b[start..y.len() - end]);
    let count = |text: &str| {
        if text.is_empty() {
            0
        } else {
            tokenizer.count(text)
        }
    };
    let shared = count(&a[..start]) + count(&a[x.len() - end..]);
    (shared + count(a_mid), shared + count(b_mid))
}

/// A check of the additivity rule the budget relies on: a segment that ends with `\n` and
/// whose successor does not start with whitespace or `/` is tokenized independently of it.
pub(crate) fn segment_starts_cleanly(segment: &str) -> bool {
    match segment.chars().next() {
        None => false,
        Some(c) => !(c.is_whitespace() || c == '/'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each built-in tokenizer's token lengths are its tokens' bytes in order: the same for
    /// both implementations of a vocabulary, their sum the text's length, their count the
    /// text's tokens, a token ending inside a character counted as the bytes it holds.
    #[test]
    fn token_lengths_are_the_tokens_bytes_in_order() {
        let texts = [
            "Card declined at checkout",
            "",
            "don't 'll 12345 «quoted» 支払い 🙂👍🏽 a/b\\c \"q\"",
            "   spaces  \n\n and\tlines\r\n",
            "(1042, 'Northwind Foods', 'card declined at checkout', 'open'),",
        ];
        for (fast, reference) in [
            (Bpe::o200k_base(), Tiktoken::o200k_base()),
            (Bpe::cl100k_base(), Tiktoken::cl100k_base()),
        ] {
            for text in texts {
                let lens = fast.token_lens(text).unwrap();
                assert_eq!(Some(&lens), reference.token_lens(text).as_ref(), "{text}");
                assert_eq!(lens.iter().map(|&l| l as usize).sum::<usize>(), text.len());
                assert_eq!(lens.len(), fast.count(text), "{text}");
                // The first n tokens' bytes are where `truncate` cuts (on a whole character).
                for n in 1..lens.len() {
                    let end: usize = lens[..n].iter().map(|&l| l as usize).sum();
                    if text.is_char_boundary(end) {
                        assert_eq!(fast.truncate(text, n).prefix.len(), end, "{text} {n}");
                    }
                }
            }
        }
        // A tokenizer of one's own tells nothing, and is cut a window at a time.
        struct Own;
        impl Tokenizer for Own {
            fn name(&self) -> &str {
                "own"
            }
            fn count(&self, text: &str) -> usize {
                text.len()
            }
            fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t> {
                Bpe::o200k_base().truncate(text, max_tokens)
            }
            fn max_token_bytes(&self) -> usize {
                1
            }
        }
        assert_eq!(Own.token_lens("text"), None);
    }

    /// `count_pair` against each text counted whole by the other implementation.
    #[test]
    fn count_pair_counts_each_text_as_whole() {
        let bodies = [
            "Card declined at checkout",
            "",
            "don't 'll 12345 «quoted» 支払い 🙂 a/b\\c \"q\"",
            "   spaces  \n\n and\tlines\r\n",
            "x",
        ];
        let fast = Bpe::o200k_base();
        let reference = Tiktoken::o200k_base();
        for body in bodies {
            for (left, right) in [
                ("{\"id\":\"n_1\",\"body\":\"", "\",\"title\":\"T\"}\n"),
                (",{\"id\":7,\"b\":\"", "\"}\n"),
                ("", ""),
                ("word", "word"),
            ] {
                let a = format!("{left}{body}{right}");
                for tagged in [
                    format!("{left}<untrusted source=\"t.body\">{body}</untrusted>{right}"),
                    format!("{left}{body}{body}{right}"),
                    format!("{left}{right}"),
                    a.clone(),
                ] {
                    assert_eq!(
                        count_pair(&fast, &a, &tagged),
                        (reference.count(&a), reference.count(&tagged)),
                        "{a:?} / {tagged:?}"
                    );
                }
            }
        }
    }
}
