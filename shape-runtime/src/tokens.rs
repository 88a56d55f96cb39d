//! Token counting with a real tokenizer, never bytes/4.
//!
//! [`Tokenizer`] is the one interface the budget, the caps on untrusted text and the reports
//! use. The built-in [`Tiktoken`] wraps `tiktoken-rs` (o200k_base by default, cl100k_base);
//! its vocabularies are loaded once per process and shared across threads.
//!
//! ```
//! use toolshape::{tokens::{Tiktoken, Tokenizer}};
//!
//! let o200k = Tiktoken::o200k_base();
//! assert_eq!(o200k.count("Card declined at checkout"), 4);
//! // Cut at a token boundary: the prefix is the text of the first 2 tokens.
//! let cut = o200k.truncate("Card declined at checkout", 2);
//! assert_eq!(cut.prefix, "Card declined");
//! assert_eq!(cut.total_tokens, 4);
//! ```

use std::fmt;

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

/// Which vocabulary a [`Tiktoken`] uses.
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

/// A `tiktoken-rs` vocabulary. Cheap to copy: the vocabulary itself is a process-wide singleton.
#[derive(Clone, Copy)]
pub struct Tiktoken {
    encoding: Encoding,
    bpe: &'static tiktoken_rs::CoreBPE,
}

impl fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish()
    }
}

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

impl Default for Tiktoken {
    fn default() -> Self {
        Tiktoken::o200k_base()
    }
}

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
        // Sum the byte lengths of the kept tokens; a token can end inside a multi-byte
        // character, so back off to the character boundary (dropping a partial token).
        let mut len = 0usize;
        for &token in &tokens[..max_tokens] {
            len += self
                .bpe
                .decode_bytes(&[token])
                .map(|bytes| bytes.len())
                .unwrap_or(0);
        }
        let mut end = len.min(text.len());
        while end > 0 && !text.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = &text[..end];
        let prefix_tokens = if end == len {
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
}

/// Tokens in `text` by the default tokenizer (o200k_base).
pub fn count(text: &str) -> usize {
    Tiktoken::o200k_base().count(text)
}

/// A check of the additivity rule the budget relies on: a segment that ends with `\n` and
/// whose successor does not start with whitespace or `/` is tokenized independently of it.
pub(crate) fn segment_starts_cleanly(segment: &str) -> bool {
    match segment.chars().next() {
        None => false,
        Some(c) => !(c.is_whitespace() || c == '/'),
    }
}
