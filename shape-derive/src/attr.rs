//! Parse stage, the attributes: each `#[shape(...)]` key as written, in a slot that remembers
//! the span of the key that set it (a key set twice is reported there), and field paths.
//!
//! Nothing here judges whether a combination makes sense (that is `check`); it only records
//! what each key said and where, so later errors can point at the exact key.

use crate::ctxt::Ctxt;
use crate::symbol::*;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Ident, LitInt, LitStr, Path};

/// A value together with the span of the key that set it.
pub struct Slot<T> {
    name: &'static str,
    value: Option<(Span, T)>,
}

impl<T> Slot<T> {
    pub fn new(name: Symbol) -> Self {
        Slot {
            name: name.name(),
            value: None,
        }
    }

    /// Takes `other`'s value, reporting a duplicate as `set` does.
    pub fn merge(&mut self, cx: &Ctxt, other: Slot<T>) {
        if let Some((span, value)) = other.value {
            self.set(cx, span, value);
        }
    }

    fn set(&mut self, cx: &Ctxt, span: Span, value: T) {
        if self.value.is_some() {
            cx.error(
                span,
                format!("duplicate `{}` attribute: write it once", self.name),
            );
        } else {
            self.value = Some((span, value));
        }
    }

    pub fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(_, v)| v)
    }

    /// The value with the span of its key.
    pub fn get_spanned(&self) -> Option<(Span, &T)> {
        self.value.as_ref().map(|(s, v)| (*s, v))
    }

    pub fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(s, _)| *s)
    }

    pub fn is_set(&self) -> bool {
        self.value.is_some()
    }

    pub fn name(&self) -> &'static str {
        self.name
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

/// How `rank(order, fold)` makes one key of the values a `[]` path reaches.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Sum,
    Max,
    Min,
    Count,
}

/// A field's `rank`: its order and, for a path through `[]`, how its values make one key.
#[derive(Clone, Copy)]
pub struct RankSpec {
    pub order: Order,
    pub fold: Option<(Fold, Span)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Epoch {
    Seconds,
    Millis,
}

/// A path into the field's value: `user.login`, `labels[].name`, `milestone?.title`.
pub struct FieldPath {
    /// The first segment: the field the attribute is on.
    pub root: Ident,
    /// What follows it.
    pub steps: Vec<PathStep>,
    /// The whole path, for errors.
    pub span: Span,
    /// As written, for `source` and messages.
    pub text: String,
}

#[derive(Clone)]
pub enum PathStep {
    /// `.name` (or `.0`).
    Member(syn::Member),
    /// `?`: through an `Option`.
    Opt,
    /// `[]`: through each item of a collection.
    Each(Span),
}

impl syn::parse::Parse for FieldPath {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        use syn::ext::IdentExt;
        let start = input.span();
        let root = Ident::parse_any(input)?;
        let mut text = unraw(&root);
        let mut steps = Vec::new();
        let mut end = root.span();
        loop {
            if input.peek(syn::Token![.]) {
                let dot: syn::Token![.] = input.parse()?;
                let member = if input.peek(LitInt) {
                    let index: LitInt = input.parse()?;
                    end = index.span();
                    let value = index.base10_parse::<u32>()?;
                    text.push_str(&format!(".{value}"));
                    syn::Member::Unnamed(syn::Index {
                        index: value,
                        span: index.span(),
                    })
                } else {
                    let ident = Ident::parse_any(input).map_err(|_| {
                        syn::Error::new(
                            dot.span,
                            "a path continues with a field name after `.`: `user.login`",
                        )
                    })?;
                    end = ident.span();
                    text.push('.');
                    text.push_str(&unraw(&ident));
                    syn::Member::Named(member_ident(&ident))
                };
                steps.push(PathStep::Member(member));
            } else if input.peek(syn::Token![?]) {
                let q: syn::Token![?] = input.parse()?;
                end = q.span;
                text.push('?');
                steps.push(PathStep::Opt);
            } else if input.peek(syn::token::Bracket) {
                let content;
                let bracket = syn::bracketed!(content in input);
                if !content.is_empty() {
                    return Err(content.error(
                        "write `[]` to go through every item of a collection: `labels[].name`",
                    ));
                }
                end = bracket.span.join();
                text.push_str("[]");
                steps.push(PathStep::Each(bracket.span.join()));
            } else {
                break;
            }
        }
        let span = start.join(end).unwrap_or(start);
        Ok(FieldPath {
            root,
            steps,
            span,
            text,
        })
    }
}

/// An identifier as written, without `r#`.
pub fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// The identifier to write a member access with: a keyword (`ref`, `type`) goes raw.
fn member_ident(ident: &Ident) -> Ident {
    let text = unraw(ident);
    if syn::parse_str::<Ident>(&text).is_ok()
        || matches!(text.as_str(), "self" | "Self" | "super" | "crate" | "_")
    {
        Ident::new(&text, ident.span())
    } else {
        Ident::new_raw(&text, ident.span())
    }
}

pub struct Untrusted {
    /// `None` when not written, or when the literal was rejected (the error is recorded).
    pub max_tokens: Option<u32>,
}

pub struct FieldAttrs {
    pub show: Slot<()>,
    pub skip: Slot<()>,
    pub rename: Slot<LitStr>,
    pub legend: Slot<syn::Expr>,
    pub resolve: Slot<Path>,
    /// `id` marks the record's identity; `id(short)` also shortens it.
    pub id: Slot<bool>,
    /// `date`, or `date(epoch_seconds)` / `date(epoch_millis)`.
    pub date: Slot<Option<Epoch>>,
    pub untrusted: Slot<Untrusted>,
    pub rank: Slot<RankSpec>,
    pub absent: Slot<LitStr>,
    /// `from = user.login`: the output's value is reached by this path.
    pub from: Slot<FieldPath>,
    /// `nested`: shown through the field type's own projection.
    pub nested: Slot<()>,
    /// `empty_is_absent`: an empty text or list reads as absent (`null`, the absence word).
    pub empty_is_absent: Slot<()>,
}

impl FieldAttrs {
    pub fn new() -> Self {
        FieldAttrs {
            show: Slot::new(SHOW),
            skip: Slot::new(SKIP),
            rename: Slot::new(RENAME),
            legend: Slot::new(LEGEND),
            resolve: Slot::new(RESOLVE),
            id: Slot::new(ID),
            date: Slot::new(DATE),
            untrusted: Slot::new(UNTRUSTED),
            rank: Slot::new(RANK),
            absent: Slot::new(ABSENT),
            from: Slot::new(FROM),
            nested: Slot::new(NESTED),
            empty_is_absent: Slot::new(EMPTY_IS_ABSENT),
        }
    }

    /// Takes every key `other` set, reporting duplicates.
    pub fn merge(&mut self, cx: &Ctxt, other: FieldAttrs) {
        self.show.merge(cx, other.show);
        self.skip.merge(cx, other.skip);
        self.rename.merge(cx, other.rename);
        self.legend.merge(cx, other.legend);
        self.resolve.merge(cx, other.resolve);
        self.id.merge(cx, other.id);
        self.date.merge(cx, other.date);
        self.untrusted.merge(cx, other.untrusted);
        self.rank.merge(cx, other.rank);
        self.absent.merge(cx, other.absent);
        self.from.merge(cx, other.from);
        self.nested.merge(cx, other.nested);
        self.empty_is_absent.merge(cx, other.empty_is_absent);
    }

    /// The keys that shape a value (each implies `show`), with their spans.
    pub fn transforms(&self) -> Vec<(&'static str, Span)> {
        [
            (self.legend.name(), self.legend.span()),
            (self.resolve.name(), self.resolve.span()),
            (self.id.name(), self.id.span()),
            (self.date.name(), self.date.span()),
            (self.untrusted.name(), self.untrusted.span()),
            (self.nested.name(), self.nested.span()),
        ]
        .into_iter()
        .filter_map(|(n, s)| s.map(|s| (n, s)))
        .collect()
    }

    /// Every key present other than `skip`, with its span.
    pub fn non_skip_keys(&self) -> Vec<(&'static str, Span)> {
        let mut keys = self.transforms();
        for (name, span) in [
            (self.show.name(), self.show.span()),
            (self.rename.name(), self.rename.span()),
            (self.rank.name(), self.rank.span()),
            (self.absent.name(), self.absent.span()),
            (self.from.name(), self.from.span()),
            (self.empty_is_absent.name(), self.empty_is_absent.span()),
        ] {
            if let Some(span) = span {
                keys.push((name, span));
            }
        }
        keys
    }

    pub fn is_skipped(&self) -> bool {
        self.skip.is_set()
    }

    pub fn has_decision(&self) -> bool {
        self.skip.is_set() || !self.non_skip_keys().is_empty()
    }
}

/// The keys of the struct's `#[shape(...)]` attributes.
pub struct ContainerAttrs {
    pub name: Slot<LitStr>,
    pub plural: Slot<LitStr>,
    pub prose: Slot<LitStr>,
    /// The default word for an absent value, `{field}` standing for the field's name.
    pub absent: Slot<LitStr>,
}

impl ContainerAttrs {
    /// Reads every `#[shape(...)]` in `input`; a key set twice or unknown is reported.
    pub fn parse(cx: &Ctxt, input: &[syn::Attribute]) -> Self {
        let mut attrs = ContainerAttrs {
            name: Slot::new(NAME),
            plural: Slot::new(PLURAL),
            prose: Slot::new(PROSE),
            absent: Slot::new(ABSENT),
        };
        for attr in input.iter().filter(|a| a.path() == SHAPE) {
            let result = attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                // #[shape(name = "ticket", plural = "tickets", prose = "{id}: {subject}",
                // absent = "no {field}")]: each a string.
                let slot = [
                    &mut attrs.name,
                    &mut attrs.plural,
                    &mut attrs.prose,
                    &mut attrs.absent,
                ]
                .into_iter()
                .find(|slot| meta.path.is_ident(slot.name()));
                if let Some(slot) = slot {
                    let lit: LitStr = meta.value()?.parse()?;
                    slot.set(cx, span, lit);
                } else {
                    cx.error(span, unknown_key(&meta.path, CONTAINER_KEYS, true));
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(err) = result {
                cx.syn_error(err);
            }
        }
        attrs
    }
}

/// Reads one `#[shape(...)]` on a field into `attrs`; a key set twice is reported.
pub fn parse_field_attr(
    cx: &Ctxt,
    attr: &syn::Attribute,
    attrs: &mut FieldAttrs,
) -> syn::Result<()> {
    attr.parse_nested_meta(|meta| {
        let span = meta.path.span();
        if meta.path == SHOW {
            // #[shape(show)]
            attrs.show.set(cx, span, ());
        } else if meta.path == SKIP {
            // #[shape(skip)]
            attrs.skip.set(cx, span, ());
        } else if meta.path == RENAME {
            // #[shape(rename = "status")]
            let lit: LitStr = meta.value()?.parse()?;
            attrs.rename.set(cx, span, lit);
        } else if meta.path == LEGEND {
            // #[shape(legend = STATUS)]: any expression that names a legend
            let expr: syn::Expr = meta.value()?.parse()?;
            attrs.legend.set(cx, span, expr);
        } else if meta.path == RESOLVE {
            // #[shape(resolve = Users)]: a type implementing `Resolver`
            let path: Path = meta.value()?.parse()?;
            attrs.resolve.set(cx, span, path);
        } else if meta.path == ID {
            // #[shape(id)] or #[shape(id(short))]
            let mut short = false;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path == SHORT {
                        short = true;
                        Ok(())
                    } else {
                        Err(inner.error(format!(
                            "unknown `id` option `{}`: write `id` or `id(short)`",
                            path_name(&inner.path)
                        )))
                    }
                })?;
            }
            attrs.id.set(cx, span, short);
        } else if meta.path == DATE {
            // #[shape(date)], #[shape(date(epoch_seconds))] or #[shape(date(epoch_millis))]
            let mut epoch = None;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path == EPOCH_SECONDS {
                        epoch = Some(Epoch::Seconds);
                        Ok(())
                    } else if inner.path == EPOCH_MILLIS {
                        epoch = Some(Epoch::Millis);
                        Ok(())
                    } else {
                        // Reported here so the field still counts as decided.
                        cx.error(
                            inner.path.span(),
                            format!(
                                "unknown `date` option `{}`: write `date` for ISO-8601 text and \
                                 timestamp types, `date(epoch_seconds)` or `date(epoch_millis)` \
                                 for a number since 1970-01-01",
                                path_name(&inner.path)
                            ),
                        );
                        skip_value(&inner)
                    }
                })?;
            }
            attrs.date.set(cx, span, epoch);
        } else if meta.path == UNTRUSTED {
            // #[shape(untrusted)] or #[shape(untrusted(max_tokens = 40))]
            let mut max_tokens = None;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path == MAX_TOKENS {
                        let lit: LitInt = inner.value()?.parse()?;
                        match lit.base10_parse::<u32>() {
                            Ok(0) => cx.error(
                                lit.span(),
                                "`max_tokens` must be at least 1: a cap of 0 shows nothing; \
                                 use #[shape(skip)] to leave the field out",
                            ),
                            Ok(n) => max_tokens = Some(n),
                            Err(_) => cx.error(
                                lit.span(),
                                "`max_tokens` must be a whole number of tokens up to 4294967295",
                            ),
                        }
                        Ok(())
                    } else {
                        Err(inner.error(format!(
                            "unknown `untrusted` option `{}`: write `untrusted` or \
                             `untrusted(max_tokens = N)`",
                            path_name(&inner.path)
                        )))
                    }
                })?;
            }
            attrs.untrusted.set(cx, span, Untrusted { max_tokens });
        } else if meta.path == ABSENT {
            // #[shape(absent = "unassigned")]
            let lit: LitStr = meta.value()?.parse()?;
            attrs.absent.set(cx, span, lit);
        } else if meta.path == FROM {
            // #[shape(from = user.login)], `labels[].name`, `milestone?.title`
            let path: FieldPath = meta.value()?.parse()?;
            attrs.from.set(cx, span, path);
        } else if meta.path == NESTED {
            // #[shape(nested)]
            attrs.nested.set(cx, span, ());
        } else if meta.path == EMPTY_IS_ABSENT {
            // #[shape(empty_is_absent)]
            attrs.empty_is_absent.set(cx, span, ());
        } else if meta.path == RANK {
            // #[shape(rank = desc)], or over a list #[shape(rank(desc, max))]
            let spec = parse_rank(cx, &meta)?;
            attrs.rank.set(cx, span, spec);
        } else {
            cx.error(span, unknown_key(&meta.path, FIELD_KEYS, false));
            skip_value(&meta)?;
        }
        Ok(())
    })
}

/// The serialized name serde gives under `key` (`rename` or `rename_all`), as
/// `key = "…"` or `key(serialize = "…")`. Anything else in `#[serde(...)]` is serde's to judge.
pub fn serde_name(attrs: &[syn::Attribute], key: Symbol) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path() == SERDE) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path == key {
                if meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    found = Some(lit.value());
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        if inner.path == SERDE_SERIALIZE {
                            let lit: LitStr = inner.value()?.parse()?;
                            found = Some(lit.value());
                        } else {
                            skip_value(&inner)?;
                        }
                        Ok(())
                    })?;
                }
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    found
}

fn path_name(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn unknown_key(path: &Path, expected: &[Symbol], container: bool) -> String {
    let name = path_name(path);
    let expected = expected
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ");
    let place = if container { "struct" } else { "field" };
    let hint = match name.as_str() {
        "hide" | "hidden" | "omit" | "exclude" => " (to leave a field out, write `skip`)",
        "include" | "visible" | "keep" => " (to include a field as is, write `show`)",
        "alias" | "as" | "name" if !container => {
            " (to change the output name, write `rename = \"...\"`)"
        }
        "max_tokens" | "cap" => " (write `untrusted(max_tokens = N)`)",
        "sort" | "order" | "order_by" => " (write `rank = asc` or `rank = desc`)",
        "short" | "short_id" => " (write `id(short)`)",
        _ => "",
    };
    format!("unknown {place} attribute `{name}`{hint}; expected one of: {expected}")
}

// After an unknown key, consume `= value` or `(...)` so the next keys still parse.
fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _group: proc_macro2::TokenTree = meta.input.parse()?;
    }
    Ok(())
}

/// `rank = asc | desc`, or over a list `rank(desc, max)` (folds: sum, max, min, count). An
/// unknown order or fold is an error at its word; parsing goes on with a stand-in.
fn parse_rank(cx: &Ctxt, meta: &syn::meta::ParseNestedMeta) -> syn::Result<RankSpec> {
    let order_of = |ident: &Ident| {
        if *ident == ASC {
            Order::Asc
        } else if *ident == DESC {
            Order::Desc
        } else {
            cx.error(
                ident.span(),
                format!(
                    "unknown rank order `{ident}`: write `rank = asc` or `rank = desc` \
                     (over a list: `rank(desc, max)`; folds are sum, max, min, count)"
                ),
            );
            Order::Asc
        }
    };
    Ok(if meta.input.peek(syn::Token![=]) {
        let ident: Ident = meta.value()?.parse()?;
        RankSpec {
            order: order_of(&ident),
            fold: None,
        }
    } else {
        let content;
        syn::parenthesized!(content in meta.input);
        let order: Ident = content.parse()?;
        let order = order_of(&order);
        let fold = if content.is_empty() {
            None
        } else {
            content.parse::<syn::Token![,]>()?;
            let ident: Ident = content.parse()?;
            let fold = if ident == SUM {
                Fold::Sum
            } else if ident == MAX {
                Fold::Max
            } else if ident == MIN {
                Fold::Min
            } else if ident == COUNT {
                Fold::Count
            } else {
                cx.error(
                    ident.span(),
                    format!(
                        "unknown rank fold `{ident}`: write one of sum, max, min, count \
                         (`rank(desc, max)`)"
                    ),
                );
                Fold::Max
            };
            let _ = content.parse::<Option<syn::Token![,]>>()?;
            Some((fold, ident.span()))
        };
        RankSpec { order, fold }
    })
}
