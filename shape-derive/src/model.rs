//! The resolved model `check` hands to `expand`: every decision taken, every name looked up.
//!
//! `expand` reads this and nothing else, so the prose template is parsed once, the rank and
//! id fields are found once, and a literal such as `max_tokens` is never parsed again.

use crate::attr::{Fold, Order};
use proc_macro2::Span;
use syn::{Expr, Generics, Ident, Path, Type, Visibility};

pub struct Record<'a> {
    pub ident: &'a Ident,
    pub vis: &'a Visibility,
    pub generics: &'a Generics,
    /// What one record is called (`ticket`).
    pub name: String,
    /// What several are called (`tickets`).
    pub plural: String,
    /// The output fields, in output order; every index below points into this.
    pub fields: Vec<Field<'a>>,
    /// The skipped fields, by the names the API gives them (serde's `rename`, `rename_all`).
    pub skipped: Vec<String>,
    /// Resolver types, deduplicated, in order of first use.
    pub resolvers: Vec<&'a Path>,
    pub prose: Option<Vec<Segment>>,
    pub rank: Option<Rank>,
    /// The output field that holds the record's id.
    pub id: Option<usize>,
}

/// One output field.
pub struct Field<'a> {
    pub member: &'a Ident,
    /// The Rust field's type (not the type a path ends at).
    pub ty: &'a Type,
    /// The path's steps after `member` (`from = user.login` → `.login`); empty without `from`.
    pub path: &'a [crate::attr::PathStep],
    /// Where the value comes from, as the projection states it: `user.login`.
    pub source: String,
    /// The name in tool results.
    pub name: String,
    /// Its member of the `FIELDS` const: `FIELDS.last_seen` for `last-seen`.
    pub handle: Ident,
    pub transform: Transform<'a>,
    /// Where errors about the field's value belong: its shaping attribute, or its type.
    pub span: Span,
    /// The word text shows for an absent value, and where `absent` was written on the field
    /// (`None` when it comes from the struct's default).
    pub absent: Option<(String, Option<Span>)>,
    /// Where `empty_is_absent` was written: an empty text or list then reads as absent.
    pub empty_is_absent: Option<Span>,
}

pub enum Transform<'a> {
    Show,
    Legend(&'a Expr),
    /// An index into [`Record::resolvers`].
    Resolve(usize),
    Id {
        short: bool,
    },
    /// `Some` for a number since the epoch.
    Date(Option<crate::attr::Epoch>),
    Untrusted {
        max_tokens: Option<u32>,
    },
    /// Shown through the field type's own projection.
    Nested,
}

impl Field<'_> {
    /// Whether the value is reached through a path (and so its type is not written).
    pub fn has_path(&self) -> bool {
        !self.path.is_empty()
    }
}

// A piece of the prose template: text, or an index into `Record::fields`. (A doc comment
// with a link on this re-export made rustdoc 1.95 panic: "no resolutions for a doc link".)
pub use toolshape_internals::rules::Segment;

pub struct Rank {
    /// An index into [`Record::fields`].
    pub field: usize,
    pub order: Order,
    /// How a path through `[]` makes one key of its values (`rank(desc, max)`).
    pub fold: Option<Fold>,
    /// The `rank` key, where errors about the field's order belong.
    pub span: Span,
}

/// A Rust identifier for an output name: other characters become `_`, keywords go raw.
pub fn handle(name: &str) -> Ident {
    let mut text: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_digit()) {
        text.insert(0, '_');
    }
    if syn::parse_str::<Ident>(&text).is_ok() {
        return Ident::new(&text, Span::call_site());
    }
    if matches!(text.as_str(), "self" | "Self" | "super" | "crate" | "_") {
        text.push('_');
        return Ident::new(&text, Span::call_site());
    }
    Ident::new_raw(&text, Span::call_site())
}
