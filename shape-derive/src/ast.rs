//! Parse stage, the syntax tree: the struct and its fields as written, each with the keys of
//! its `#[shape(...)]` attributes (read in `attr`), and the names a field has (its output
//! name, the name the API gives it).

use crate::attr::{
    ContainerAttrs, FieldAttrs, PathStep, Slot, parse_field_attr, serde_name, unraw,
};
use crate::ctxt::Ctxt;
use crate::symbol::*;
use proc_macro2::Span;
use syn::{Ident, LitStr, Type};

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

        let ContainerAttrs {
            name,
            plural,
            prose,
            absent,
        } = ContainerAttrs::parse(cx, &input.attrs);
        let mut container = Container {
            ident: &input.ident,
            vis: &input.vis,
            generics: &input.generics,
            name,
            plural,
            prose,
            absent,
            serde_rename_all: serde_name(&input.attrs, SERDE_RENAME_ALL),
            fields: Vec::new(),
        };
        for field in &named.named {
            let Some(ident) = field.ident.as_ref() else {
                continue;
            };
            let mut attrs = FieldAttrs::new();
            let mut views = Vec::new();
            for attr in field.attrs.iter().filter(|a| a.path() == SHAPE) {
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
                serde_rename: serde_name(&field.attrs, SERDE_RENAME),
            });
        }
        Some(container)
    }
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
