//! Check stage: the rules that need more than one key, or the whole struct; then the
//! resolved [`Record`] that `expand` reads.
//!
//! Rules that depend on types (a legend over `u8` on a `String` field, a resolver whose key
//! differs from the field's) cannot be decided by a macro; `expand` emits trait-bound
//! assertions spanned at the attribute, and the runtime traits carry
//! `#[diagnostic::on_unimplemented]` messages that say what to write instead.
//!
//! The record is built even when a rule fails, as far as the input allows, so the fallback
//! impl can still name the fields a caller refers to.

use crate::ast::{Container, Field};
use crate::attr::{FieldAttrs, PathStep, RankSpec, unraw};
use crate::ctxt::Ctxt;
use crate::model::{self, Rank, Record, Segment, Transform};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use toolshape_internals::template;

pub fn check<'c>(cx: &Ctxt, container: &'c Container<'_>) -> Record<'c> {
    check_container_names(cx, container);
    for field in &container.fields {
        check_decision(cx, container, field);
        check_combinations(cx, &field.attrs);
        for view in &field.views {
            check_combinations(cx, view);
        }
        for output in field.outputs() {
            check_path(cx, field, output);
        }
    }
    check_unique_outputs(cx, container);
    check_single(
        cx,
        container,
        |a| a.rank.span(),
        "rank",
        "the record is ranked by one key; remove `rank` from one of them",
    );
    check_single(
        cx,
        container,
        |a| a.id.span(),
        "id",
        "a record has one id; keep `id` on the field other tools take as an argument",
    );
    let mut record = resolve(container);
    record.prose = check_prose(cx, container, &record.fields);
    record
}

/// The record as `expand` needs it. Where the rules above found a conflict, the first key wins.
fn resolve<'c>(container: &'c Container<'_>) -> Record<'c> {
    let name = container
        .name
        .get()
        .map(|l| l.value())
        .unwrap_or_else(|| snake_case(&container.ident.to_string()));
    let plural = container
        .plural
        .get()
        .map(|l| l.value())
        // The English configuration and inferred names follow (`entity` → `entities`).
        .unwrap_or_else(|| toolshape_internals::english::plural_of(&name));

    let mut record = Record {
        ident: container.ident,
        vis: container.vis,
        generics: container.generics,
        name,
        plural,
        fields: Vec::new(),
        skipped: Vec::new(),
        resolvers: Vec::new(),
        prose: None,
        rank: None,
        id: None,
    };
    for field in &container.fields {
        if field.is_skipped() {
            record
                .skipped
                .push(field.api_name(container.serde_rename_all.as_deref()));
            continue;
        }
        for attrs in field.outputs() {
            let index = record.fields.len();
            let (transform, span) = transform(field, attrs, &mut record.resolvers);
            if matches!(transform, Transform::Id { .. }) && record.id.is_none() {
                record.id = Some(index);
            }
            if let Some((span, spec)) = attrs.rank.get_spanned()
                && record.rank.is_none()
            {
                record.rank = Some(Rank {
                    field: index,
                    order: spec.order,
                    fold: spec.fold.map(|(fold, _)| fold),
                    span,
                });
            }
            let name = field.output_name(attrs);
            let absent = match attrs.absent.get_spanned() {
                Some((span, lit)) => Some((lit.value(), Some(span))),
                None => container.absent.get().map(|lit| {
                    (
                        lit.value().replace("{field}", &name.replace('_', " ")),
                        None,
                    )
                }),
            };
            let (path, source): (&[PathStep], String) = match attrs.from.get() {
                Some(path) => (&path.steps, path.text.clone()),
                None => (&[], unraw(field.ident)),
            };
            record.fields.push(model::Field {
                member: field.ident,
                ty: field.ty,
                path,
                source,
                handle: model::handle(&name),
                name,
                transform,
                span,
                absent,
                empty_is_absent: attrs.empty_is_absent.span(),
            });
        }
    }
    record
}

/// A `from` path starts at its own field; an id is one value, so its path has no `[]` (a `?`
/// is allowed: a record without its id pages by count); a rank key is one value, so a path
/// through `[]` needs a fold and a fold needs one; `nested` shows the whole field.
fn check_path(cx: &Ctxt, field: &Field, attrs: &FieldAttrs) {
    let Some(path) = attrs.from.get() else {
        if let Some(RankSpec {
            fold: Some((_, span)),
            ..
        }) = attrs.rank.get()
        {
            cx.error(
                *span,
                "a rank fold reads the values of a `from` path through `[]` \
                 (`from = statuses[].restarts`); this field has no path: \
                 write `rank = asc` or `rank = desc`",
            );
        }
        return;
    };
    let field_name = unraw(field.ident);
    if unraw(&path.root) != field_name {
        cx.error(
            path.root.span(),
            format!(
                "a `from` path starts at the field it is written on: write `{field_name}.…` \
                 (this #[shape] is on `{field_name}`, the path starts at `{}`)",
                unraw(&path.root)
            ),
        );
    }
    let first = |want: fn(&PathStep) -> Option<Span>| path.steps.iter().find_map(want);
    let each = first(|s| match s {
        PathStep::Each(span) => Some(*span),
        _ => None,
    });
    if attrs.id.is_set()
        && let Some(span) = each
    {
        cx.error(
            span,
            "an `id` path cannot go through `[]`: a record has exactly one id; \
             put `id` on a path to one value (`?` is allowed)",
        );
    }
    match (attrs.rank.get(), each) {
        (Some(RankSpec { fold: None, .. }), Some(span)) => cx.error(
            span,
            "a `rank` path through `[]` needs a fold that makes its values one key: \
             `rank(desc, max)`, or sum, min, count",
        ),
        (
            Some(RankSpec {
                fold: Some((_, span)),
                ..
            }),
            None,
        ) => cx.error(
            *span,
            "a rank fold reads the values of a path through `[]`; this path has none: \
             write `rank = asc` or `rank = desc`",
        ),
        _ => {}
    }
    if let Some(span) = attrs.nested.span() {
        cx.error(
            span,
            "`nested` shows a whole field through its type's projection and cannot be combined \
             with `from`: put #[shape(nested)] on the field itself, or pick values with `from`",
        );
    }
    if path.steps.is_empty() && field.views.len() == 1 {
        cx.error(
            path.span,
            format!(
                "`from = {field_name}` is the field itself: remove `from`, or reach into it \
                 (`{field_name}.name`, `{field_name}?.name`, `{field_name}[].name`)"
            ),
        );
    }
}

/// A field's value transform, and where errors about its value belong.
fn transform<'c>(
    field: &'c Field<'_>,
    attrs: &'c FieldAttrs,
    resolvers: &mut Vec<&'c syn::Path>,
) -> (Transform<'c>, Span) {
    if let Some(span) = attrs.nested.span() {
        (Transform::Nested, span)
    } else if let Some((span, expr)) = attrs.legend.get_spanned() {
        (Transform::Legend(expr), span)
    } else if let Some(path) = attrs.resolve.get() {
        let key = quote::quote!(#path).to_string();
        let index = match resolvers
            .iter()
            .position(|p| quote::quote!(#p).to_string() == key)
        {
            Some(i) => i,
            None => {
                resolvers.push(path);
                resolvers.len() - 1
            }
        };
        (Transform::Resolve(index), path.span())
    } else if let Some((span, short)) = attrs.id.get_spanned() {
        (Transform::Id { short: *short }, span)
    } else if let Some((span, epoch)) = attrs.date.get_spanned() {
        (Transform::Date(*epoch), span)
    } else if let Some((span, untrusted)) = attrs.untrusted.get_spanned() {
        let max_tokens = untrusted.max_tokens;
        (Transform::Untrusted { max_tokens }, span)
    } else if let Some(path) = attrs.from.get() {
        (Transform::Show, path.span)
    } else {
        (Transform::Show, field.ty.span())
    }
}

/// An absence word is shown as is inside a prose line or a table cell.
fn check_absent_word(cx: &Ctxt, lit: &syn::LitStr) {
    let value = lit.value();
    if value.trim().is_empty() {
        cx.error(
            lit.span(),
            "`absent` must not be empty: write the word a reader should see, such as \
             \"unassigned\" or \"no labels\"",
        );
    } else if value.chars().any(|c| c.is_control() || c == '|') {
        cx.error(
            lit.span(),
            "`absent` must be plain words: no pipes or control characters",
        );
    }
}

fn check_container_names(cx: &Ctxt, container: &Container) {
    if let Some(lit) = container.absent.get() {
        check_absent_word(cx, lit);
    }
    for slot in [&container.name, &container.plural] {
        if let Some(lit) = slot.get()
            && lit.value().trim().is_empty()
        {
            cx.error(
                lit.span(),
                format!(
                    "`{}` must not be empty: it is how summaries name the records",
                    slot.name()
                ),
            );
        }
    }
    if container.fields.iter().all(|f| f.is_skipped()) {
        cx.error_spanned(
            container.ident,
            "every field is skipped: a tool result needs at least one field marked `show` \
             (or shaped by rename, legend, resolve, id, date, untrusted or rank)",
        );
    }
}

fn check_decision(cx: &Ctxt, container: &Container, field: &Field) {
    if !field.has_decision() {
        cx.error_spanned(
            field.ident,
            format!(
                "field `{}` of `{}` has no shape decision: add #[shape(skip)] to keep it out of \
                 tool results, or #[shape(show)] to include it as is",
                field.ident, container.ident
            ),
        );
    }
}

fn check_combinations(cx: &Ctxt, attrs: &FieldAttrs) {
    if attrs.is_skipped() {
        for (name, span) in attrs.non_skip_keys() {
            cx.error(
                span,
                format!(
                    "`skip` cannot be combined with `{name}`: a skipped field is not shown; \
                     remove `{name}`, or remove `skip` to show the field"
                ),
            );
        }
        return;
    }
    let transforms = attrs.transforms();
    if let Some(((first, _), rest)) = transforms.split_first() {
        for (name, span) in rest {
            cx.error(
                *span,
                format!(
                    "`{first}` and `{name}` cannot be combined on one field: a field gets one \
                     value transform; keep one of them"
                ),
            );
        }
    }
    if let Some(span) = attrs.rank.span() {
        for (name, why) in [
            (
                "resolve",
                "it would order by opaque keys, not by the names shown",
            ),
            (
                "untrusted",
                "attacker-controlled text must not decide what survives a cut",
            ),
        ] {
            if transforms.iter().any(|(n, _)| *n == name) {
                cx.error(
                    span,
                    format!(
                        "`rank` cannot be used on a `{name}` field: {why}; rank by another field"
                    ),
                );
            }
        }
    }
    if let Some(lit) = attrs.absent.get() {
        check_absent_word(cx, lit);
    }
    if let Some(span) = attrs.empty_is_absent.span() {
        // #[shape(empty_is_absent)]: the value is text or a list shown as it is.
        if let Some((name, _)) = transforms.iter().find(|(n, _)| !matches!(*n, "untrusted")) {
            cx.error(
                span,
                format!(
                    "`empty_is_absent` cannot be combined with `{name}`: it reads an empty text or \
                     list as absent, for a value shown as it is or as `untrusted` text; remove one \
                     of them"
                ),
            );
        }
    }
    if let Some(lit) = attrs.rename.get() {
        let value = lit.value();
        if value.trim().is_empty() {
            cx.error(
                lit.span(),
                "`rename` must not be empty: write the name the model should read",
            );
        } else if value
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '{' || c == '}' || c == '|')
        {
            cx.error(
                lit.span(),
                "`rename` must be a plain name: no quotes, braces, pipes or control characters",
            );
        }
    }
}

fn check_unique_outputs(cx: &Ctxt, container: &Container) {
    let mut seen: HashMap<String, &Field> = HashMap::new();
    // `FIELDS` members, which two different names can share (`last-seen`, `last_seen`).
    let mut handles: HashMap<String, String> = HashMap::new();
    for (field, attrs) in container
        .fields
        .iter()
        .flat_map(|f| f.outputs().into_iter().map(move |a| (f, a)))
    {
        let name = field.output_name(attrs);
        if let Some(first) = seen.get(&name) {
            cx.error(
                field.output_span(attrs),
                format!(
                    "two fields are shown as `{name}` (`{}` and `{}`): output names must be \
                     unique; give one of them #[shape(rename = \"...\")]",
                    first.ident, field.ident
                ),
            );
            continue;
        }
        let handle = model::handle(&name).to_string();
        if let Some(other) = handles.get(&handle) {
            cx.error(
                field.output_span(attrs),
                format!(
                    "`{other}` and `{name}` would both be `{}::FIELDS.{handle}` in Rust code: \
                     give one of them #[shape(rename = \"...\")]",
                    container.ident
                ),
            );
        } else {
            handles.insert(handle, name.clone());
        }
        seen.insert(name, field);
    }
}

fn check_single(
    cx: &Ctxt,
    container: &Container,
    span_of: impl Fn(&FieldAttrs) -> Option<proc_macro2::Span>,
    key: &str,
    remedy: &str,
) {
    let mut first: Option<&Field> = None;
    let outputs = container
        .fields
        .iter()
        .flat_map(|f| f.outputs().into_iter().map(move |a| (f, a)));
    for (field, attrs) in outputs {
        if let Some(span) = span_of(attrs) {
            match first {
                None => first = Some(field),
                Some(first) => cx.error(
                    span,
                    format!(
                        "`{key}` is on two fields (`{}` and `{}`): {remedy}",
                        first.ident, field.ident
                    ),
                ),
            }
        }
    }
}

/// The prose template as segments over the output fields, parsed once.
fn check_prose(cx: &Ctxt, container: &Container, fields: &[model::Field]) -> Option<Vec<Segment>> {
    let lit = container.prose.get()?;
    let pieces = match template::parse(&lit.value()) {
        Ok(pieces) => pieces,
        Err(msg) => {
            cx.error(lit.span(), msg);
            return None;
        }
    };
    if !pieces
        .iter()
        .any(|p| matches!(p, template::Piece::Field(_)))
    {
        cx.error(
            lit.span(),
            "prose template names no field: add placeholders such as `{id}`",
        );
    }
    let mut segments = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match piece {
            template::Piece::Text(text) => segments.push(Segment::Text(text)),
            template::Piece::Field(name) => match fields.iter().position(|f| f.name == name) {
                Some(index) => segments.push(Segment::Field(index)),
                None => {
                    let skipped = container
                        .fields
                        .iter()
                        .any(|f| f.is_skipped() && f.ident == name.as_str());
                    let why = if skipped {
                        format!("`{name}` is skipped, so it is not in the output")
                    } else {
                        format!("`{name}` is not an output field")
                    };
                    let outputs: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                    cx.error(
                        lit.span(),
                        format!(
                            "prose placeholder `{{{name}}}`: {why}; output fields are: {}",
                            outputs.join(", ")
                        ),
                    );
                }
            },
        }
    }
    Some(segments)
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
