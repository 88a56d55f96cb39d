//! Expand stage: writes `impl ToolResult` for a checked container.
//!
//! Everything generated reaches the runtime through `::toolshape::__private` and names it
//! invents start with `__`. Expressions that come from the user (a legend, a resolver) are
//! emitted with `quote_spanned!` at the attribute key, so a type error lands on the attribute.

use crate::ast::{Container, Field, Order};
use crate::template::{self, Piece};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

enum Kind<'a> {
    Show,
    Legend(&'a syn::Expr, Span),
    Resolve(usize, Span),
    Id(bool, Span),
    Date(Span),
    Untrusted(Option<u32>, Span),
}

struct Shown<'c, 'a> {
    field: &'c Field<'a>,
    name: String,
    kind: Kind<'c>,
}

impl Shown<'_, '_> {
    /// Where errors about this field's value belong: its shaping attribute, or its type.
    fn span(&self) -> Span {
        match &self.kind {
            Kind::Show => self.field.ty.span(),
            Kind::Legend(_, span)
            | Kind::Resolve(_, span)
            | Kind::Id(_, span)
            | Kind::Date(span)
            | Kind::Untrusted(_, span) => *span,
        }
    }
}

pub fn expand(container: &Container) -> TokenStream {
    let p = quote!(::toolshape::__private);
    let ident = container.ident;
    let (impl_generics, ty_generics, where_clause) = container.generics.split_for_impl();

    let struct_name = ident.to_string();
    let name = container
        .name
        .get()
        .map(|l| l.value())
        .unwrap_or_else(|| snake_case(&struct_name));
    let plural = container
        .plural
        .get()
        .map(|l| l.value())
        .unwrap_or_else(|| format!("{name}s"));

    // Resolvers, deduplicated by path, in order of first use.
    let mut resolvers: Vec<(String, &syn::Path)> = Vec::new();
    let mut shown: Vec<Shown> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for field in &container.fields {
        let attrs = &field.attrs;
        if attrs.is_skipped() {
            skipped.push(field.ident.to_string());
            continue;
        }
        let kind = if let Some(expr) = attrs.legend.get() {
            Kind::Legend(expr, attrs.legend.span().unwrap_or_else(Span::call_site))
        } else if let Some(path) = attrs.resolve.get() {
            let key = quote!(#path).to_string();
            let index = match resolvers.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    resolvers.push((key, path));
                    resolvers.len() - 1
                }
            };
            Kind::Resolve(index, path.span())
        } else if let Some(short) = attrs.id.get() {
            Kind::Id(*short, attrs.id.span().unwrap_or_else(Span::call_site))
        } else if attrs.date.is_set() {
            Kind::Date(attrs.date.span().unwrap_or_else(Span::call_site))
        } else if let Some(untrusted) = attrs.untrusted.get() {
            let cap = untrusted
                .max_tokens
                .as_ref()
                .and_then(|l| l.base10_parse::<u32>().ok());
            Kind::Untrusted(cap, attrs.untrusted.span().unwrap_or_else(Span::call_site))
        } else {
            Kind::Show
        };
        shown.push(Shown {
            field,
            name: field.output_name(),
            kind,
        });
    }

    let resolver_paths: Vec<&syn::Path> = resolvers.iter().map(|(_, p)| *p).collect();
    let needs = quote!((#(#resolver_paths,)*));

    // --- static description --------------------------------------------------------------
    let field_infos = shown.iter().map(|s| {
        let out = &s.name;
        let source = s.field.ident.to_string();
        let kind = match &s.kind {
            Kind::Show => quote!(#p::FieldKind::Show),
            Kind::Legend(..) => quote!(#p::FieldKind::Legend),
            Kind::Resolve(i, _) => {
                let path = resolver_paths[*i];
                quote!(#p::FieldKind::Resolve { resolver: <#path as #p::Resolver>::NAME })
            }
            Kind::Id(short, _) => quote!(#p::FieldKind::Id { short: #short }),
            Kind::Date(_) => quote!(#p::FieldKind::Date),
            Kind::Untrusted(cap, _) => {
                let cap = match cap {
                    Some(n) => quote!(::core::option::Option::Some(#n)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(#p::FieldKind::Untrusted { max_tokens: #cap })
            }
        };
        quote!(#p::FieldInfo { name: #out, source: #source, kind: #kind })
    });

    let rank_info = container
        .fields
        .iter()
        .find(|f| f.attrs.rank.is_set())
        .and_then(|f| {
            let index = shown.iter().position(|s| s.field.ident == f.ident)?;
            let order = match f.attrs.rank.get() {
                Some(Order::Desc) => quote!(#p::Order::Desc),
                _ => quote!(#p::Order::Asc),
            };
            Some(
                quote!(::core::option::Option::Some(#p::RankInfo { field: #index, order: #order })),
            )
        })
        .unwrap_or_else(|| quote!(::core::option::Option::None));

    let id_info = shown
        .iter()
        .position(|s| matches!(s.kind, Kind::Id(..)))
        .map(|i| quote!(::core::option::Option::Some(#i)))
        .unwrap_or_else(|| quote!(::core::option::Option::None));

    let prose = container
        .prose
        .get()
        .and_then(|lit| template::parse(&lit.value()).ok())
        .map(|pieces| {
            let segments = pieces.iter().filter_map(|piece| match piece {
                Piece::Text(text) => Some(quote!(#p::ProseSegment::Text(#text))),
                Piece::Field(name) => shown
                    .iter()
                    .position(|s| s.name == *name)
                    .map(|i| quote!(#p::ProseSegment::Field(#i))),
            });
            quote!(::core::option::Option::Some(&[#(#segments),*]))
        })
        .unwrap_or_else(|| quote!(::core::option::Option::None));

    // --- per-field values ------------------------------------------------------------------
    let views: Vec<TokenStream> = shown.iter().map(|s| view(&p, s, &resolver_paths)).collect();

    let collect_keys = shown.iter().filter_map(|s| match s.kind {
        Kind::Resolve(i, span) => {
            let member = &s.field.ident;
            let ty = s.field.ty;
            let path = resolver_paths[i];
            let index = syn::Index::from(i);
            Some(quote_spanned!(span=> <#ty as #p::KeyField<<#path as #p::Resolver>::Key>>::collect_keys(&self.#member, &mut __keys.#index);))
        }
        _ => None,
    });

    let field_count = shown.len();
    let names: Vec<&String> = shown.iter().map(|s| &s.name).collect();
    let spans: Vec<Span> = shown.iter().map(|s| s.span()).collect();
    let record_fields = names.iter().zip(&views).zip(&spans).map(|((name, view), span)| {
        quote_spanned!(*span=> #p::SerializeStruct::serialize_field(&mut __st, #name, &#view)?;)
    });
    let field_arms = views.iter().zip(&spans).enumerate().map(
        |(i, (view, span))| quote_spanned!(*span=> #i => #p::Serialize::serialize(&#view, __s),),
    );

    // --- ranking and identity --------------------------------------------------------------
    let id_field = shown.iter().find(|s| matches!(s.kind, Kind::Id(..)));
    let id_text = match id_field {
        Some(s) => {
            let member = &s.field.ident;
            let span = match s.kind {
                Kind::Id(_, span) => span,
                _ => Span::call_site(),
            };
            quote_spanned!(span=> ::core::option::Option::Some(#p::IdText::id_text(&self.#member)))
        }
        None => quote!(::core::option::Option::None),
    };
    let id_tiebreak = id_field.map(|s| {
        let member = &s.field.ident;
        quote!(.then_with(|| #p::IdText::id_text(&self.#member).cmp(#p::IdText::id_text(&__other.#member))))
    });
    let rank_field = container.fields.iter().find(|f| f.attrs.rank.is_set());
    let (rank_cmp, rank_key) = match rank_field {
        Some(f) => {
            let member = f.ident;
            let span = f.attrs.rank.span().unwrap_or_else(Span::call_site);
            let ty = f.ty;
            let cmp = quote_spanned!(span=> <#ty as #p::RankKey>::rank_cmp(&self.#member, &__other.#member));
            let reverse = match f.attrs.rank.get() {
                Some(Order::Desc) => quote!(.reverse()),
                _ => quote!(),
            };
            (
                quote!((#cmp #id_tiebreak) #reverse),
                quote_spanned!(span=> ::core::option::Option::Some(<#ty as #p::RankKey>::key_value(&self.#member))),
            )
        }
        None => (
            quote!(#p::Ordering::Equal),
            quote!(::core::option::Option::None),
        ),
    };

    // --- schema ----------------------------------------------------------------------------
    let schema_fields = shown.iter().map(|s| {
        let name = &s.name;
        let ty = s.field.ty;
        let schema = match &s.kind {
            Kind::Show => quote_spanned!(ty.span()=> #p::schema::shown::<#ty>(__gen)),
            Kind::Legend(expr, span) => {
                respan(quote!(#p::schema::legend(&(#expr), ::core::marker::PhantomData::<#ty>, #name)), *span)
            }
            Kind::Resolve(i, span) => {
                let path = resolver_paths[*i];
                quote_spanned!(*span=> #p::schema::resolved::<#ty, <#path as #p::Resolver>::Key>(<#path as #p::Resolver>::NOUN))
            }
            Kind::Id(_, span) => quote_spanned!(*span=> #p::schema::id()),
            Kind::Date(span) => quote_spanned!(*span=> #p::schema::date::<#ty>()),
            Kind::Untrusted(_, span) => quote_spanned!(*span=> #p::schema::untrusted::<#ty>()),
        };
        quote!((#name, #schema))
    });

    // Type rules as where-clauses spanned at the attribute: one clear error per mistake, and
    // the bodies below are checked as if they held, so nothing else is reported.
    let mut predicates: Vec<TokenStream> = Vec::new();
    for s in &shown {
        let ty = &respan(s.field.ty.to_token_stream(), s.span());
        let predicate = match &s.kind {
            Kind::Show => quote_spanned!(ty.span()=> #ty: #p::Serialize + #p::JsonSchema),
            Kind::Legend(..) => continue,
            Kind::Resolve(i, span) => {
                let path = resolver_paths[*i];
                quote_spanned!(*span=> #ty: #p::KeyField<<#path as #p::Resolver>::Key>)
            }
            Kind::Id(_, span) => quote_spanned!(*span=> #ty: #p::IdText),
            Kind::Date(span) => quote_spanned!(*span=> #ty: #p::DateField),
            Kind::Untrusted(_, span) => quote_spanned!(*span=> #ty: #p::UntrustedText),
        };
        predicates.push(respan(predicate, s.span()));
    }
    if let Some(f) = rank_field {
        let span = f.attrs.rank.span().unwrap_or_else(Span::call_site);
        let ty = respan(f.ty.to_token_stream(), span);
        predicates.push(respan(quote!(#ty: #p::RankKey), span));
    }
    let where_clause = match where_clause {
        Some(w) => {
            let existing = w.predicates.iter();
            quote!(where #(#existing,)* #(#predicates,)*)
        }
        None => quote!(where #(#predicates,)*),
    };

    // Typed field references: `Ticket::FIELDS.status`, so a misspelt field in a Rust caller's
    // aggregate or query is a compile error.
    let vis = container.vis;
    let fields_ty = quote::format_ident!("__ShapeFields_{}", ident);
    let field_idents: Vec<Ident> = shown.iter().map(|s| field_ident(&s.name)).collect();
    let field_names = shown.iter().map(|s| &s.name);
    let fields_doc = format!("The output fields of [`{ident}`], for typed aggregates and queries.");

    let title = &name;
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, missing_docs)]
        #vis struct #fields_ty {
            #(pub #field_idents: #p::FieldRef,)*
        }

        #[allow(clippy::all)]
        impl #impl_generics #ident #ty_generics {
            #[doc = #fields_doc]
            #vis const FIELDS: #fields_ty = #fields_ty {
                #(#field_idents: #p::FieldRef::new(#field_names),)*
            };
        }

        #[allow(clippy::all, clippy::pedantic, non_local_definitions, trivial_bounds)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::ToolResult for #ident #ty_generics #where_clause {
                type Needs = #needs;

                const PROJECTION: &'static #p::Projection = &#p::Projection {
                    name: #name,
                    plural: #plural,
                    fields: &[#(#field_infos),*],
                    skipped: &[#(#skipped),*],
                    prose: #prose,
                    rank: #rank_info,
                    id: #id_info,
                };

                fn collect_keys(&self, __keys: &mut <Self::Needs as #p::Needs>::Keys) {
                    let _ = &__keys;
                    #(#collect_keys)*
                }

                fn serialize_record<__S: #p::Serializer>(
                    &self,
                    __cx: &#p::Cx<'_, Self::Needs>,
                    __s: __S,
                ) -> ::core::result::Result<__S::Ok, __S::Error> {
                    let mut __st = #p::Serializer::serialize_struct(__s, #title, #field_count)?;
                    #(#record_fields)*
                    #p::SerializeStruct::end(__st)
                }

                fn serialize_field<__S: #p::Serializer>(
                    &self,
                    __index: usize,
                    __cx: &#p::Cx<'_, Self::Needs>,
                    __s: __S,
                ) -> ::core::result::Result<__S::Ok, __S::Error> {
                    match __index {
                        #(#field_arms)*
                        _ => #p::no_such_field(__index, __s),
                    }
                }

                fn rank_cmp(&self, __other: &Self) -> #p::Ordering {
                    let _ = __other;
                    #rank_cmp
                }

                fn rank_key(&self) -> ::core::option::Option<#p::KeyValue> {
                    #rank_key
                }

                fn id_text(&self) -> ::core::option::Option<&str> {
                    #id_text
                }

                fn record_schema(__gen: &mut #p::SchemaGenerator) -> #p::Schema {
                    let _ = &__gen;
                    #p::schema::record(#title, &[#(#schema_fields),*])
                }
            }
        };
    }
}

fn view(p: &TokenStream, s: &Shown, resolvers: &[&syn::Path]) -> TokenStream {
    let member = &s.field.ident;
    let ty = s.field.ty;
    match &s.kind {
        Kind::Show => quote_spanned!(ty.span()=> #p::Shown::<#ty>::new(&self.#member)),
        Kind::Legend(expr, span) => {
            let name = &s.name;
            respan(
                quote!(#p::coded(&(#expr), &self.#member, #name, __cx.env())),
                *span,
            )
        }
        Kind::Resolve(i, span) => {
            let path = resolvers[*i];
            let i = syn::Index::from(*i);
            quote_spanned!(*span=> #p::Named::<#ty, <#path as #p::Resolver>::Key>::new(&self.#member, &__cx.names().#i, <#path as #p::Resolver>::NOUN, __cx.env()))
        }
        Kind::Id(short, span) => {
            quote_spanned!(*span=> #p::Ident::<#ty>::new(&self.#member, #short))
        }
        Kind::Date(span) => {
            quote_spanned!(*span=> #p::Dated::<#ty>::new(&self.#member, __cx.env()))
        }
        Kind::Untrusted(cap, span) => {
            let name = &s.name;
            let cap = match cap {
                Some(n) => quote!(::core::option::Option::Some(#n)),
                None => quote!(::core::option::Option::None),
            };
            quote_spanned!(*span=> #p::Untrusted::<#ty>::new(&self.#member, #name, #cap, __cx.env()))
        }
    }
}

/// A Rust identifier for an output name: other characters become `_`, keywords go raw.
fn field_ident(name: &str) -> Ident {
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

/// The same tokens, all with `span`, so an error about them points at one place.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
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
