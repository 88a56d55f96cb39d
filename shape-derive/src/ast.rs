//! Parse stage: the struct and its `#[shape(...)]` attributes, as written.
//!
//! Nothing here judges whether a combination makes sense (that is `check`); it only records
//! what each key said and where, so later errors can point at the exact key.

use crate::ctxt::Ctxt;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Ident, LitInt, LitStr, Path, Type};

/// A value together with the span of the key that set it.
pub struct Slot<T> {
    name: &'static str,
    value: Option<(Span, T)>,
}

impl<T> Slot<T> {
    fn new(name: &'static str) -> Self {
        Slot { name, value: None }
    }

    /// Takes `other`'s value, reporting a duplicate as `set` does.
    fn merge(&mut self, cx: &Ctxt, other: Slot<T>) {
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

pub struct Container<'a> {
    pub ident: &'a Ident,
    pub vis: &'a syn::Visibility,
    pub generics: &'a syn::Generics,
    pub name: Slot<LitStr>,
    pub plural: Slot<LitStr>,
    pub prose: Slot<LitStr>,
    /// The default word for an absent value, `{field}` standing for the field's name.
    pub absent: Slot<LitStr>,
    /// `#[serde(rename_all = "…")]`, for the names skipped fields are reported by.
    pub serde_rename_all: Option<String>,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// The keys of every `#[shape]` on the field without `from`: one output, or `skip`.
    pub attrs: FieldAttrs,
    /// One output per `#[shape(from = …)]` on the field.
    pub views: Vec<FieldAttrs>,
    /// `#[serde(rename = "…")]`: the name the API gives the field.
    pub serde_rename: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
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
    Opt(Span),
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
                steps.push(PathStep::Opt(q.span));
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
    pub rank: Slot<Order>,
    pub absent: Slot<LitStr>,
    /// `from = user.login`: the output's value is reached by this path.
    pub from: Slot<FieldPath>,
    /// `nested`: shown through the field type's own projection.
    pub nested: Slot<()>,
    /// `empty_is_absent`: an empty text or list reads as absent (`null`, the absence word).
    pub empty_is_absent: Slot<()>,
}

impl FieldAttrs {
    fn new() -> Self {
        FieldAttrs {
            show: Slot::new("show"),
            skip: Slot::new("skip"),
            rename: Slot::new("rename"),
            legend: Slot::new("legend"),
            resolve: Slot::new("resolve"),
            id: Slot::new("id"),
            date: Slot::new("date"),
            untrusted: Slot::new("untrusted"),
            rank: Slot::new("rank"),
            absent: Slot::new("absent"),
            from: Slot::new("from"),
            nested: Slot::new("nested"),
            empty_is_absent: Slot::new("empty_is_absent"),
        }
    }

    /// Takes every key `other` set, reporting duplicates.
    fn merge(&mut self, cx: &Ctxt, other: FieldAttrs) {
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

const FIELD_KEYS: &str = "show, skip, rename, from, nested, legend, resolve, id, date, untrusted, rank, absent, \
     empty_is_absent";
const CONTAINER_KEYS: &str = "name, plural, prose, absent";

impl<'a> Container<'a> {
    pub fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Container<'a>> {
        let named = match &input.data {
            syn::Data::Struct(data) => match &data.fields {
                syn::Fields::Named(named) => named,
                _ => {
                    cx.error_spanned(
                        &input.ident,
                        "ToolResult can only be derived for a struct with named fields: \
                         each output field needs a name",
                    );
                    return None;
                }
            },
            _ => {
                cx.error_spanned(
                    &input.ident,
                    "ToolResult can only be derived for a struct with named fields; \
                     for an enum, derive it on the struct that holds it",
                );
                return None;
            }
        };

        let mut container = Container {
            ident: &input.ident,
            vis: &input.vis,
            generics: &input.generics,
            name: Slot::new("name"),
            plural: Slot::new("plural"),
            prose: Slot::new("prose"),
            absent: Slot::new("absent"),
            serde_rename_all: serde_name(&input.attrs, "rename_all"),
            fields: Vec::new(),
        };
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("shape")) {
            let result = attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                if meta.path.is_ident("name") {
                    // #[shape(name = "ticket")]
                    let lit: LitStr = meta.value()?.parse()?;
                    container.name.set(cx, span, lit);
                } else if meta.path.is_ident("plural") {
                    // #[shape(plural = "tickets")]
                    let lit: LitStr = meta.value()?.parse()?;
                    container.plural.set(cx, span, lit);
                } else if meta.path.is_ident("prose") {
                    // #[shape(prose = "{id}: {subject}")]
                    let lit: LitStr = meta.value()?.parse()?;
                    container.prose.set(cx, span, lit);
                } else if meta.path.is_ident("absent") {
                    // #[shape(absent = "no {field}")]
                    let lit: LitStr = meta.value()?.parse()?;
                    container.absent.set(cx, span, lit);
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

        for field in &named.named {
            let Some(ident) = field.ident.as_ref() else {
                continue;
            };
            let mut attrs = FieldAttrs::new();
            let mut views = Vec::new();
            for attr in field.attrs.iter().filter(|a| a.path().is_ident("shape")) {
                let mut one = FieldAttrs::new();
                if let Err(err) = parse_field_attr(cx, attr, &mut one) {
                    cx.syn_error(err);
                }
                if one.from.is_set() {
                    views.push(one);
                } else {
                    attrs.merge(cx, one);
                }
            }
            if !views.is_empty() {
                for (name, span) in attrs
                    .non_skip_keys()
                    .into_iter()
                    .chain(attrs.skip.span().map(|span| (attrs.skip.name(), span)))
                {
                    cx.error(
                        span,
                        format!(
                            "`{name}` is in a #[shape] without `from` on a field whose other \
                             #[shape] attributes use `from`: each #[shape(from = …)] is one \
                             output with its own keys; move `{name}` into one of them"
                        ),
                    );
                }
            }
            container.fields.push(Field {
                ident,
                ty: &field.ty,
                attrs,
                views,
                serde_rename: serde_name(&field.attrs, "rename"),
            });
        }
        Some(container)
    }
}

fn parse_field_attr(cx: &Ctxt, attr: &syn::Attribute, attrs: &mut FieldAttrs) -> syn::Result<()> {
    attr.parse_nested_meta(|meta| {
        let span = meta.path.span();
        if meta.path.is_ident("show") {
            // #[shape(show)]
            attrs.show.set(cx, span, ());
        } else if meta.path.is_ident("skip") {
            // #[shape(skip)]
            attrs.skip.set(cx, span, ());
        } else if meta.path.is_ident("rename") {
            // #[shape(rename = "status")]
            let lit: LitStr = meta.value()?.parse()?;
            attrs.rename.set(cx, span, lit);
        } else if meta.path.is_ident("legend") {
            // #[shape(legend = STATUS)]: any expression that names a legend
            let expr: syn::Expr = meta.value()?.parse()?;
            attrs.legend.set(cx, span, expr);
        } else if meta.path.is_ident("resolve") {
            // #[shape(resolve = Users)]: a type implementing `Resolver`
            let path: Path = meta.value()?.parse()?;
            attrs.resolve.set(cx, span, path);
        } else if meta.path.is_ident("id") {
            // #[shape(id)] or #[shape(id(short))]
            let mut short = false;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("short") {
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
        } else if meta.path.is_ident("date") {
            // #[shape(date)], #[shape(date(epoch_seconds))] or #[shape(date(epoch_millis))]
            let mut epoch = None;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("epoch_seconds") {
                        epoch = Some(Epoch::Seconds);
                        Ok(())
                    } else if inner.path.is_ident("epoch_millis") {
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
        } else if meta.path.is_ident("untrusted") {
            // #[shape(untrusted)] or #[shape(untrusted(max_tokens = 40))]
            let mut max_tokens = None;
            if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("max_tokens") {
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
        } else if meta.path.is_ident("absent") {
            // #[shape(absent = "unassigned")]
            let lit: LitStr = meta.value()?.parse()?;
            attrs.absent.set(cx, span, lit);
        } else if meta.path.is_ident("from") {
            // #[shape(from = user.login)], `labels[].name`, `milestone?.title`
            let path: FieldPath = meta.value()?.parse()?;
            attrs.from.set(cx, span, path);
        } else if meta.path.is_ident("nested") {
            // #[shape(nested)]
            attrs.nested.set(cx, span, ());
        } else if meta.path.is_ident("empty_is_absent") {
            // #[shape(empty_is_absent)]
            attrs.empty_is_absent.set(cx, span, ());
        } else if meta.path.is_ident("rank") {
            // #[shape(rank = desc)]
            let ident: Ident = meta.value()?.parse()?;
            let order = if ident == "asc" {
                Order::Asc
            } else if ident == "desc" {
                Order::Desc
            } else {
                cx.error(
                    ident.span(),
                    format!("unknown rank order `{ident}`: write `rank = asc` or `rank = desc`"),
                );
                Order::Asc
            };
            attrs.rank.set(cx, span, order);
        } else {
            cx.error(span, unknown_key(&meta.path, FIELD_KEYS, false));
            skip_value(&meta)?;
        }
        Ok(())
    })
}

/// The serialized name serde gives under `key` (`rename` or `rename_all`), as
/// `key = "…"` or `key(serialize = "…")`. Anything else in `#[serde(...)]` is serde's to judge.
fn serde_name(attrs: &[syn::Attribute], key: &str) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                if meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    found = Some(lit.value());
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("serialize") {
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

fn unknown_key(path: &Path, expected: &str, container: bool) -> String {
    let name = path_name(path);
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

impl Field<'_> {
    /// The outputs the field gives: one per `from` view, or the field itself (none when it is
    /// skipped).
    pub fn outputs(&self) -> Vec<&FieldAttrs> {
        if !self.views.is_empty() {
            self.views.iter().collect()
        } else if self.attrs.is_skipped() {
            Vec::new()
        } else {
            vec![&self.attrs]
        }
    }

    /// The name an output has in tool results: its `rename`, else the field's name (the last
    /// field name of the path when the field gives several outputs).
    pub fn output_name(&self, attrs: &FieldAttrs) -> String {
        if let Some(lit) = attrs.rename.get() {
            return lit.value();
        }
        if self.views.len() > 1
            && let Some(path) = attrs.from.get()
            && let Some(syn::Member::Named(last)) = path.steps.iter().rev().find_map(|s| match s {
                PathStep::Member(m) => Some(m.clone()),
                _ => None,
            })
        {
            return unraw(&last);
        }
        unraw(self.ident)
    }

    pub fn is_skipped(&self) -> bool {
        self.views.is_empty() && self.attrs.is_skipped()
    }

    pub fn has_decision(&self) -> bool {
        !self.views.is_empty() || self.attrs.has_decision()
    }

    /// The name the API gives the field (serde's `rename`, or `rename_all` applied to the
    /// Rust name), for `omitted.fields`.
    pub fn api_name(&self, rename_all: Option<&str>) -> String {
        if let Some(name) = &self.serde_rename {
            return name.clone();
        }
        let name = self.ident.to_string();
        let name = name.strip_prefix("r#").map(str::to_owned).unwrap_or(name);
        match rename_all {
            Some(rule) => apply_rename_rule(&name, rule),
            None => name,
        }
    }

    pub fn output_span(&self, attrs: &FieldAttrs) -> Span {
        match (attrs.rename.get(), attrs.from.get()) {
            (Some(lit), _) => lit.span(),
            (None, Some(path)) => path.span,
            (None, None) => self.ident.span(),
        }
    }
}

/// serde's `rename_all` rules, applied to a snake_case field name as serde applies them.
fn apply_rename_rule(name: &str, rule: &str) -> String {
    let words = || name.split('_').filter(|w| !w.is_empty());
    let capitalised = |w: &str| {
        let mut chars = w.chars();
        match chars.next() {
            Some(c) => c.to_uppercase().chain(chars).collect::<String>(),
            None => String::new(),
        }
    };
    match rule {
        "lowercase" => name.to_lowercase(),
        "UPPERCASE" => name.to_uppercase(),
        "PascalCase" => words().map(capitalised).collect(),
        "camelCase" => {
            let pascal: String = words().map(capitalised).collect();
            let mut chars = pascal.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => pascal,
            }
        }
        "SCREAMING_SNAKE_CASE" => name.to_uppercase(),
        "kebab-case" => name.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => name.to_uppercase().replace('_', "-"),
        // "snake_case", and any rule serde itself will reject.
        _ => name.to_owned(),
    }
}
