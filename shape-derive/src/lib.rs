//! The derive behind `toolshape::ToolResult`.
//!
//! Users depend on `toolshape`, which re-exports this macro; the generated code reaches the
//! runtime only through `::toolshape::__private`.

// The macro is a three-stage pipeline: `ast` (the struct and its fields) and `attr` (their
// `#[shape]` keys, each word spelled once in `symbol`) parse the input; `check` applies the
// rules that need the whole struct and resolves them into a `model::Record`; `expand` writes
// the impl from that record alone. Errors from every stage are collected in a
// `ctxt::Ctxt` and reported together, so four mistakes cost one compile, not four; with them
// comes a `fallback` impl, so the mistakes cause no further errors where the struct is used.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;
mod model;
mod symbol;

use proc_macro::TokenStream;

/// Derives `toolshape::ToolResult` for a struct with named fields.
///
/// See the `toolshape` documentation for the attribute reference.
#[proc_macro_derive(ToolResult, attributes(shape))]
pub fn derive_tool_result(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let cx = ctxt::Ctxt::new();
    let container = ast::Container::from_ast(&cx, &input);
    let record = container.as_ref().map(|c| check::check(&cx, c));
    match (cx.check(), &record) {
        (Ok(()), Some(record)) => expand::expand(record),
        (Err(errors), record) => fallback::expand(&input, record.as_ref(), errors),
        // `from_ast` returns `None` only after recording an error, so this is a guard.
        (Ok(()), None) => {
            let error =
                syn::Error::new_spanned(&input.ident, "shape: internal error, please report it");
            fallback::expand(&input, None, error)
        }
    }
    .into()
}
