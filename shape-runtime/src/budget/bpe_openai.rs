//! GitHub's `bpe-openai` as a [`Tokenizer`] (feature `bpe-openai`): kept only to compare the
//! default tokenizer with, side by side (`cargo bench`); not part of the crate's face.

use super::tokens::{Encoding, Tokenizer, Truncated, openai_splits_between, prefix_end};
use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

/// An OpenAI vocabulary counted by GitHub's `bpe-openai` (feature `bpe-openai`): the same
/// tokens as [`Bpe`](super::tokens::Bpe) and `Tiktoken`, the default before [`Bpe`](super::tokens::Bpe) moved to the faster `tiktoken`
/// crate; kept to compare the two side by side (`cargo bench`).
///
/// ```
/// use toolshape::{tokens::{Bpe, Tokenizer}, __seams::tokens::BpeOpenai};
///
/// let text = "Card declined at checkout, twice: «réessayez» 支払いが拒否されました";
/// assert_eq!(BpeOpenai::o200k_base().count(text), Bpe::o200k_base().count(text));
/// ```
#[derive(Clone, Copy)]
pub struct BpeOpenai {
    encoding: Encoding,
    bpe: &'static bpe_openai::Tokenizer,
    whole: &'static Vocabulary,
}

/// Every token of a vocabulary by its bytes. Most pieces of pre-tokenized text are one token
/// (a word with its leading space, up to three digits, a run of punctuation), and a piece that
/// is a token of the vocabulary is that one token (tiktoken looks pieces up the same way before
/// encoding them), so one hash lookup counts it instead of a byte-pair encoding, which
/// allocates and searches the vocabulary's automaton. About 4 MB for o200k, built once per
/// process.
struct Vocabulary(HashSet<&'static [u8], foldhash::fast::FixedState>);

impl Vocabulary {
    fn of(bpe: &'static bpe_openai::Tokenizer) -> Vocabulary {
        let tokens = bpe.bpe.num_tokens();
        let mut set = HashSet::with_capacity_and_hasher(tokens, Default::default());
        set.extend((0..tokens).map(|id| bpe.bpe.token_bytes(id as u32)));
        Vocabulary(set)
    }

    /// Whether `piece` is one token.
    fn is_token(&self, piece: &str) -> bool {
        piece.len() == 1 || self.0.contains(piece.as_bytes())
    }
}

impl fmt::Debug for BpeOpenai {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeOpenai")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl BpeOpenai {
    /// o200k_base, the default.
    pub fn o200k_base() -> BpeOpenai {
        BpeOpenai::new(Encoding::O200kBase)
    }

    /// cl100k_base.
    pub fn cl100k_base() -> BpeOpenai {
        BpeOpenai::new(Encoding::Cl100kBase)
    }

    /// The tokenizer for `encoding`; the first call per encoding loads the vocabulary.
    pub fn new(encoding: Encoding) -> BpeOpenai {
        static O200K: OnceLock<Vocabulary> = OnceLock::new();
        static CL100K: OnceLock<Vocabulary> = OnceLock::new();
        let (bpe, whole) = match encoding {
            Encoding::O200kBase => (bpe_openai::o200k_base(), &O200K),
            Encoding::Cl100kBase => (bpe_openai::cl100k_base(), &CL100K),
        };
        let whole = whole.get_or_init(|| Vocabulary::of(bpe));
        BpeOpenai {
            encoding,
            bpe,
            whole,
        }
    }

    /// Tokens in one piece of pre-tokenized text.
    fn piece_count(&self, piece: &str) -> usize {
        if self.whole.is_token(piece) {
            1
        } else {
            self.bpe.bpe.count(piece.as_bytes())
        }
    }

    /// Which vocabulary this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl Default for BpeOpenai {
    fn default() -> Self {
        BpeOpenai::o200k_base()
    }
}

impl Tokenizer for BpeOpenai {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> usize {
        // Neither vocabulary normalises its input, so counting the pieces is the whole job.
        self.bpe
            .split(text)
            .map(|piece| self.piece_count(piece))
            .sum()
    }

    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t> {
        // Each token's length in bytes, in order.
        let mut lens: Vec<usize> = Vec::new();
        for piece in self.bpe.split(text) {
            if self.whole.is_token(piece) {
                lens.push(piece.len());
            } else {
                let tokens = self.bpe.bpe.encode_via_backtracking(piece.as_bytes());
                lens.extend(tokens.iter().map(|&token| self.bpe.bpe.token_len(token)));
            }
        }
        let tokens = lens.len();
        if tokens <= max_tokens {
            return Truncated {
                prefix: text,
                prefix_tokens: tokens,
                total_tokens: tokens,
            };
        }
        let (end, whole) = prefix_end(text, lens.into_iter(), max_tokens);
        let prefix = &text[..end];
        Truncated {
            prefix,
            prefix_tokens: if whole {
                max_tokens
            } else {
                self.count(prefix)
            },
            total_tokens: tokens,
        }
    }

    fn max_token_bytes(&self) -> usize {
        // The same vocabularies as `Tiktoken`.
        256
    }

    fn splits_between(&self, last: char, next: char) -> bool {
        openai_splits_between(last, next)
    }
}
