//! Check stage: the rules that need more than one key, or the whole struct.
//!
//! Rules that depend on types (a legend over `u8` on a `String` field, a resolver whose key
//! differs from the field's) cannot be decided by a macro; `expand` emits trait-bound
//! assertions spanned at the attribute, and the runtime traits carry
//! `#[diagnostic::on_unimplemented]` messages that say what to write instead.

use crate::ast::{Container, Field};
use crate::ctxt::Ctxt;
use crate::template;
use std::collections::HashMap;

pub fn check(cx: &Ctxt, container: &Container) {
    check_container_names(cx, container);
    for field in &container.fields {
        check_decision(cx, container, field);
        check_combinations(cx, field);
    }
    check_unique_outputs(cx, container);
    check_single(
        cx,
        container,
        |f| f.attrs.rank.span(),
        "rank",
        "the record is ranked by one key; remove `rank` from one of them",
    );
    check_single(
        cx,
        container,
        |f| f.attrs.id.span(),
        "id",
        "a record has one id; keep `id` on the field other tools take as an argument",
    );
    check_prose(cx, container);
}

fn check_container_names(cx: &Ctxt, container: &Container) {
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
    if container.fields.iter().all(|f| f.attrs.is_skipped()) {
        cx.error_spanned(
            container.ident,
            "every field is skipped: a tool result needs at least one field marked `show` \
             (or shaped by rename, legend, resolve, id, date, untrusted or rank)",
        );
    }
}

fn check_decision(cx: &Ctxt, container: &Container, field: &Field) {
    if !field.attrs.has_decision() {
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

fn check_combinations(cx: &Ctxt, field: &Field) {
    let attrs = &field.attrs;
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
    for field in container.fields.iter().filter(|f| !f.attrs.is_skipped()) {
        let name = field.output_name();
        if let Some(first) = seen.get(&name) {
            cx.error(
                field.output_span(),
                format!(
                    "two fields are shown as `{name}` (`{}` and `{}`): output names must be \
                     unique; give one of them #[shape(rename = \"...\")]",
                    first.ident, field.ident
                ),
            );
        } else {
            seen.insert(name, field);
        }
    }
}

fn check_single(
    cx: &Ctxt,
    container: &Container,
    span_of: impl Fn(&Field) -> Option<proc_macro2::Span>,
    key: &str,
    remedy: &str,
) {
    let mut first: Option<&Field> = None;
    for field in &container.fields {
        if let Some(span) = span_of(field) {
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

fn check_prose(cx: &Ctxt, container: &Container) {
    let Some(lit) = container.prose.get() else {
        return;
    };
    let outputs: Vec<String> = container
        .fields
        .iter()
        .filter(|f| !f.attrs.is_skipped())
        .map(Field::output_name)
        .collect();
    match template::parse(&lit.value()) {
        Err(msg) => cx.error(lit.span(), msg),
        Ok(pieces) => {
            if !pieces
                .iter()
                .any(|p| matches!(p, template::Piece::Field(_)))
            {
                cx.error(
                    lit.span(),
                    "prose template names no field: add placeholders such as `{id}`",
                );
            }
            for piece in pieces {
                if let template::Piece::Field(name) = piece
                    && !outputs.contains(&name)
                {
                    {
                        let skipped = container
                            .fields
                            .iter()
                            .any(|f| f.attrs.is_skipped() && f.ident == name.as_str());
                        let why = if skipped {
                            format!("`{name}` is skipped, so it is not in the output")
                        } else {
                            format!("`{name}` is not an output field")
                        };
                        cx.error(
                            lit.span(),
                            format!(
                                "prose placeholder `{{{name}}}`: {why}; output fields are: {}",
                                outputs.join(", ")
                            ),
                        );
                    }
                }
            }
        }
    }
}
