//! The derive behind `toolshape::ToolResult`.
//!
//! Users depend on `toolshape`, which re-exports this macro; the generated code reaches the
//! runtime only through `::toolshape::__private`. The macro is a three-stage pipeline, one
//! file a stage: [`ast`] parses the attributes, [`check`] applies the rules that need the whole
//! struct, [`expand`] writes the impl. Errors from every stage are collected in a [`ctxt::Ctxt`]
//! and reported together, so four mistakes cost one compile, not four.

mod ast;
mod check;
mod ctxt;
mod expand;
mod template;

use proc_macro::TokenStream;

/// Derives `toolshape::ToolResult` for a struct with named fields.
///
/// See the `toolshape` documentation for the attribute reference.
#[proc_macro_derive(ToolResult, attributes(shape))]
pub fn derive_tool_result(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let cx = ctxt::Ctxt::new();
    let container = ast::Container::from_ast(&cx, &input);
    if let Some(container) = &container {
        check::check(&cx, container);
    }
    match (cx.check(), container) {
        (Ok(()), Some(container)) => expand::expand(&container).into(),
        (Err(errors), _) => errors.to_compile_error().into(),
        (Ok(()), None) => unreachable_error(&input).into(),
    }
}

// `from_ast` returns `None` only after recording an error, so this is a guard, not a path.
fn unreachable_error(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
    syn::Error::new_spanned(&input.ident, "shape: internal error, please report it")
        .to_compile_error()
}
