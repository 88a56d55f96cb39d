//! The impl emitted when the derive reports an error.
//!
//! Without it, every use of the struct (`Shaper::shape`, `Ticket::FIELDS`, a `T: ToolResult`
//! bound) would add an error of its own, burying the one that says what to fix. As in
//! thiserror's `fallback.rs`, the errors are emitted next to an impl that satisfies the trait
//! and never runs: the crate does not compile, so no body can be reached.

use crate::expand::{fields_item, local};
use crate::model::Record;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::collections::HashSet;

pub fn expand(
    input: &syn::DeriveInput,
    record: Option<&Record>,
    errors: syn::Error,
) -> TokenStream {
    let p = quote!(::toolshape::__private);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let errors = errors.to_compile_error();
    // Every field the struct would show, so a caller's `FIELDS.<name>` still resolves; a member
    // that two fields claim (itself one of the errors) once.
    let fields = record.map(|record| {
        let mut seen = HashSet::new();
        let fields = record.fields.iter();
        fields_item(record, fields.filter(|f| seen.insert(f.handle.to_string())))
    });
    let site = Span::call_site();
    let this = local("self", site);
    quote! {
        #errors

        #fields

        #[automatically_derived]
        impl #impl_generics #p::ToolResult for #ident #ty_generics #where_clause {
            type Needs = ();

            const PROJECTION: &'static #p::Projection = &#p::Projection {
                name: "",
                plural: "",
                fields: &[],
                skipped: &[],
                prose: ::core::option::Option::None,
                rank: ::core::option::Option::None,
                id: ::core::option::Option::None,
                nested: &[],
            };

            fn serialize_field<__S: #p::Serializer>(
                &#this,
                _: usize,
                _: &#p::Cx<'_, Self::Needs>,
                _: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                ::core::unreachable!()
            }

            fn record_schema(_: &mut #p::SchemaGenerator) -> #p::Schema {
                ::core::unreachable!()
            }
        }
    }
}
