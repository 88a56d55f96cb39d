//! The words `#[shape(...)]` understands, one constant each, so a key is spelled once: where
//! it is parsed, where a duplicate is reported and where an error names it.

use std::fmt;
use syn::{Ident, Path};

/// One attribute word.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Symbol(&'static str);

impl Symbol {
    /// The word as written.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// The attribute itself.
pub const SHAPE: Symbol = Symbol("shape");
/// serde's attribute, read for the names skipped fields are reported by.
pub const SERDE: Symbol = Symbol("serde");
pub const SERDE_RENAME: Symbol = Symbol("rename");
pub const SERDE_RENAME_ALL: Symbol = Symbol("rename_all");
pub const SERDE_SERIALIZE: Symbol = Symbol("serialize");

// On the struct.
pub const NAME: Symbol = Symbol("name");
pub const PLURAL: Symbol = Symbol("plural");
pub const PROSE: Symbol = Symbol("prose");
/// On the struct (the default absence word) and on a field (its own).
pub const ABSENT: Symbol = Symbol("absent");

// On a field.
pub const SHOW: Symbol = Symbol("show");
pub const SKIP: Symbol = Symbol("skip");
pub const RENAME: Symbol = Symbol("rename");
pub const FROM: Symbol = Symbol("from");
pub const NESTED: Symbol = Symbol("nested");
pub const LEGEND: Symbol = Symbol("legend");
pub const RESOLVE: Symbol = Symbol("resolve");
pub const ID: Symbol = Symbol("id");
pub const DATE: Symbol = Symbol("date");
pub const UNTRUSTED: Symbol = Symbol("untrusted");
pub const RANK: Symbol = Symbol("rank");
pub const EMPTY_IS_ABSENT: Symbol = Symbol("empty_is_absent");

// Options of a field key.
/// `id(short)`.
pub const SHORT: Symbol = Symbol("short");
/// `date(epoch_seconds)`.
pub const EPOCH_SECONDS: Symbol = Symbol("epoch_seconds");
/// `date(epoch_millis)`.
pub const EPOCH_MILLIS: Symbol = Symbol("epoch_millis");
/// `untrusted(max_tokens = N)`.
pub const MAX_TOKENS: Symbol = Symbol("max_tokens");
/// `rank = asc`.
pub const ASC: Symbol = Symbol("asc");
/// `rank = desc`.
pub const DESC: Symbol = Symbol("desc");
/// `rank(desc, sum)`: the sum of a list's values.
pub const SUM: Symbol = Symbol("sum");
/// `rank(desc, max)`: the largest of a list's values.
pub const MAX: Symbol = Symbol("max");
/// `rank(asc, min)`: the smallest of a list's values.
pub const MIN: Symbol = Symbol("min");
/// `rank(desc, count)`: how many values a list has.
pub const COUNT: Symbol = Symbol("count");

/// The keys a struct's `#[shape]` accepts, in the order an error lists them.
pub const CONTAINER_KEYS: &[Symbol] = &[NAME, PLURAL, PROSE, ABSENT];
/// The keys a field's `#[shape]` accepts, in the order an error lists them.
pub const FIELD_KEYS: &[Symbol] = &[
    SHOW,
    SKIP,
    RENAME,
    FROM,
    NESTED,
    LEGEND,
    RESOLVE,
    ID,
    DATE,
    UNTRUSTED,
    RANK,
    ABSENT,
    EMPTY_IS_ABSENT,
];

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
