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
use crate::attr::{FieldAttrs, PathStep, unraw};
use crate::ctxt::Ctxt;
use crate::model::{self, Rank, Record, Segment, Transform};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use toolshape_internals::rules::{self, Output, Syntax};

pub fn check<'c>(cx: &Ctxt, container: &'c Container<'_>) -> Record<'c> {
    check_container_names(cx, container);
    let mut report = |span: Span, msg: String| cx.error(span, msg);
    for field in &container.fields {
        check_decision(cx, container, field);
        if field.views.is_empty() {
            rules::check_output(Syntax::Derive, &output(field, &field.attrs), &mut report);
        }
        for view in &field.views {
            rules::check_output(Syntax::Derive, &output(field, view), &mut report);
        }
        for output in field.outputs() {
            check_path(cx, field, output);
        }
    }
    let outputs: Vec<Output<'_, Span>> = container
        .fields
        .iter()
        .flat_map(|f| f.outputs().into_iter().map(move |a| output(f, a)))
        .collect();
    rules::check_record(Syntax::Derive, &outputs, &mut report);
    check_handles(cx, container, &outputs);
    let mut record = resolve(container);
    record.prose = check_prose(cx, container, &record.fields);
    record
}

/// One output's decisions as the rulebook reads them.
fn output<'a>(field: &'a Field<'_>, attrs: &'a FieldAttrs) -> Output<'a, Span> {
    let mut keys = attrs.non_skip_keys();
    if let Some(span) = attrs.skip.span() {
        keys.push((attrs.skip.name(), span));
    }
    Output {
        name: field.output_name(attrs),
        source: field.ident.to_string(),
        at: field.output_span(attrs),
        keys,
        rename: attrs.rename.get().map(|lit| (lit.value(), lit.span())),
        absent: attrs.absent.get().map(|lit| (lit.value(), lit.span())),
        fold: attrs.rank.get().and_then(|r| r.fold.map(|(_, span)| span)),
        path: match attrs.from.get() {
            None => rules::Path::None,
            Some(path) => rules::Path::Read {
                each: path.steps.iter().find_map(|s| match s {
                    PathStep::Each(span) => Some(*span),
                    _ => None,
                }),
            },
        },
    }
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

/// A `from` path starts at its own field; `nested` shows the whole field (the rules a path
/// shares with configuration are the rulebook's).
fn check_path(cx: &Ctxt, field: &Field, attrs: &FieldAttrs) {
    let Some(path) = attrs.from.get() else {
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

fn check_container_names(cx: &Ctxt, container: &Container) {
    if let Some(lit) = container.absent.get()
        && let Err(msg) = rules::absent_word(&lit.value())
    {
        cx.error(lit.span(), msg);
    }
    for slot in [&container.name, &container.plural] {
        if let Some(lit) = slot.get()
            && let Err(msg) = rules::record_name(slot.name(), &lit.value())
        {
            cx.error(lit.span(), msg);
        }
    }
    if container.fields.iter().all(|f| f.is_skipped()) {
        cx.error_spanned(container.ident, rules::all_skipped(Syntax::Derive));
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

/// Two names that the rulebook lets stand (`last-seen`, `last_seen`) would both be one member
/// of the generated `FIELDS`: a rule of Rust code, so the derive's own.
fn check_handles(cx: &Ctxt, container: &Container, outputs: &[Output<'_, Span>]) {
    let mut handles: HashMap<String, &str> = HashMap::new();
    for (i, output) in outputs.iter().enumerate() {
        if outputs[..i].iter().any(|o| o.name == output.name) {
            continue;
        }
        let handle = model::handle(&output.name).to_string();
        if let Some(other) = handles.get(&handle) {
            cx.error(
                output.at,
                format!(
                    "`{other}` and `{}` would both be `{}::FIELDS.{handle}` in Rust code: \
                     give one of them #[shape(rename = \"...\")]",
                    output.name, container.ident
                ),
            );
        } else {
            handles.insert(handle, &output.name);
        }
    }
}

/// The prose template as segments over the output fields, parsed once.
fn check_prose(cx: &Ctxt, container: &Container, fields: &[model::Field]) -> Option<Vec<Segment>> {
    let lit = container.prose.get()?;
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let skipped = |name: &str| {
        container
            .fields
            .iter()
            .any(|f| f.is_skipped() && f.ident == name)
    };
    rules::prose(&lit.value(), &names, skipped)
        .map_err(|mistakes| {
            for msg in mistakes {
                cx.error(lit.span(), msg);
            }
        })
        .ok()
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
