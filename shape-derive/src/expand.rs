//! Expand stage: writes `impl ToolResult` for a checked [`Record`], one function per item.
//!
//! Everything generated reaches the runtime through `::toolshape::__private` and names it
//! invents start with `__`. Expressions that come from the user (a legend, a resolver) are
//! emitted with `quote_spanned!` at the attribute key, so a type error lands on the attribute.
//!
//! Locals the generated code binds (`self` included) are spanned with [`local`]: they resolve
//! at the macro's own site, wherever the tokens around them come from, so a struct written
//! inside a `macro_rules!` template expands as well as one written by hand.

use crate::attr::PathStep;
use crate::attr::{Fold, Order};
use crate::model::{Field, Record, Segment, Transform};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

pub fn expand(record: &Record) -> TokenStream {
    let g = Gen::new(record);
    let p = &g.p;
    let ident = record.ident;
    let (impl_generics, ty_generics, _) = record.generics.split_for_impl();
    let fields = fields_item(record, record.fields.iter());
    let where_clause = g.where_clause();
    let needs = g.needs();
    let projection = g.projection();
    // An id through `?`: a walk checks every row for one (see `ToolResult::ID_MAY_BE_ABSENT`).
    let id_may_be_absent = record
        .id
        .filter(|&id| has_opt(record.fields[id].path))
        .map(|_| {
            quote!(
                const ID_MAY_BE_ABSENT: bool = true;
            )
        });
    let items = [
        g.collect_keys(),
        g.serialize_field(),
        g.cmp_rank_field(),
        g.rank_key(),
        g.id_key(),
        g.record_schema(),
    ];
    quote! {
        #fields

        #[allow(clippy::all, clippy::pedantic, non_local_definitions, trivial_bounds)]
        const _: () = {
            use ::toolshape::__private as __toolshape;

            #[automatically_derived]
            impl #impl_generics #p::ToolResult for #ident #ty_generics #where_clause {
                type Needs = #needs;

                const PROJECTION: &'static #p::Projection = &#projection;

                #id_may_be_absent

                #(#items)*
            }
        };
    }
}

/// Typed field references: `Ticket::FIELDS.status`, so a misspelt field in a Rust caller's
/// aggregate or query is a compile error. The fallback emits it too, with the same names.
pub fn fields_item<'f, 'a: 'f>(
    record: &Record,
    fields: impl Iterator<Item = &'f Field<'a>>,
) -> TokenStream {
    let p = quote!(::toolshape::__private);
    let ident = record.ident;
    let vis = record.vis;
    let (impl_generics, ty_generics, where_clause) = record.generics.split_for_impl();
    let fields_ty = format_ident!("__ShapeFields_{}", ident);
    let (idents, names): (Vec<&Ident>, Vec<&str>) =
        fields.map(|f| (&f.handle, f.name.as_str())).unzip();
    let doc = format!("The output fields of [`{ident}`], for typed aggregates and queries.");
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, missing_docs)]
        #vis struct #fields_ty {
            #(pub #idents: #p::FieldRef,)*
        }

        #[allow(clippy::all, dead_code)]
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #doc]
            #vis const FIELDS: #fields_ty = #fields_ty {
                #(#idents: #p::FieldRef::new(#names),)*
            };
        }
    }
}

/// A name the generated code binds, located at `span` (for messages) but resolved at the
/// macro's own site, so no user token can capture it and it never depends on where the tokens
/// spanned at `span` were written.
pub fn local(name: &str, span: Span) -> Ident {
    Ident::new(name, Span::mixed_site().located_at(span))
}

/// The record and the paths every item uses.
struct Gen<'r, 'a> {
    record: &'r Record<'a>,
    p: TokenStream,
}

impl<'r, 'a> Gen<'r, 'a> {
    fn new(record: &'r Record<'a>) -> Self {
        Gen {
            record,
            p: quote!(__toolshape),
        }
    }

    fn resolver(&self, index: usize) -> &'a syn::Path {
        self.record.resolvers[index]
    }

    /// `type Needs`: the resolver types, as a tuple.
    fn needs(&self) -> TokenStream {
        let resolvers = &self.record.resolvers;
        quote!((#(#resolvers,)*))
    }

    /// `const PROJECTION`: the static description the runtime reads.
    fn projection(&self) -> TokenStream {
        let p = &self.p;
        let record = self.record;
        let field_infos = record.fields.iter().map(|f| {
            let name = &f.name;
            let source = &f.source;
            let kind = match &f.transform {
                Transform::Show | Transform::Nested => quote!(#p::FieldKind::Show),
                Transform::Legend(_) => quote!(#p::FieldKind::Legend),
                Transform::Resolve(i) => {
                    let path = self.resolver(*i);
                    quote!(#p::FieldKind::Resolve { resolver: <#path as #p::Resolver>::NAME })
                }
                Transform::Id { short } => quote!(#p::FieldKind::Id { short: #short }),
                Transform::Date(_) => quote!(#p::FieldKind::Date),
                Transform::Untrusted { max_tokens } => {
                    let cap = option(p, max_tokens.as_ref());
                    quote!(#p::FieldKind::Untrusted { max_tokens: #cap })
                }
            };
            let absent = option(p, f.absent.as_ref().map(|(word, _)| word));
            quote!(#p::FieldInfo { name: #name, source: #source, kind: #kind, absent: #absent })
        });
        let prose = record.prose.as_ref().map(|segments| {
            let segments = segments.iter().map(|segment| match segment {
                Segment::Text(text) => quote!(#p::ProseSegment::Text(#text)),
                Segment::Field(i) => quote!(#p::ProseSegment::Field(#i)),
            });
            quote!(&[#(#segments),*])
        });
        let prose = option(p, prose.as_ref());
        let rank = record.rank.as_ref().map(|rank| {
            let field = rank.field;
            let order = match rank.order {
                Order::Asc => quote!(#p::Order::Asc),
                Order::Desc => quote!(#p::Order::Desc),
            };
            let fold = rank.fold.map(|fold| match fold {
                Fold::Sum => quote!(#p::Fold::Sum),
                Fold::Max => quote!(#p::Fold::Max),
                Fold::Min => quote!(#p::Fold::Min),
                Fold::Count => quote!(#p::Fold::Count),
            });
            let fold = option(p, fold.as_ref());
            quote!(#p::RankInfo { field: #field, order: #order, fold: #fold })
        });
        let rank = option(p, rank.as_ref());
        let id = option(p, record.id.as_ref());
        let (name, plural, skipped) = (&record.name, &record.plural, &record.skipped);
        let nested = record
            .fields
            .iter()
            .filter(|f| matches!(f.transform, Transform::Nested))
            .map(|f| {
                let (name, ty) = (&f.name, f.ty);
                quote_spanned!(f.span=> #p::NestedInfo {
                    field: #name,
                    projection: <#ty as #p::NestedField>::PROJECTION,
                    list: <#ty as #p::NestedField>::LIST,
                })
            });
        quote! {
            #p::Projection {
                name: #name,
                plural: #plural,
                fields: &[#(#field_infos),*],
                skipped: &[#(#skipped),*],
                prose: #prose,
                rank: #rank,
                id: #id,
                nested: &[#(#nested),*],
            }
        }
    }

    fn collect_keys(&self) -> TokenStream {
        let p = &self.p;
        let this = local("self", Span::call_site());
        let keys = local("__keys", Span::call_site());
        let collect = self.record.fields.iter().filter_map(|f| {
            let Transform::Resolve(i) = f.transform else {
                return None;
            };
            let span = f.span;
            let (this, keys) = (local("self", span), local("__keys", span));
            let (member, ty, path) = (f.member, f.ty, self.resolver(i));
            let index = syn::Index::from(i);
            if f.has_path() {
                let base = quote_spanned!(span=> #this.#member);
                // By autoref (`LeafOf`): a key type the leaf misses is reported once, in
                // `serialize_field`.
                let p = &respan(p.clone(), span);
                return Some(walk(base, f.path, 0, span, &|place| {
                    quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyKeyLeaf as _, KeyLeaf as _};
                        (&&#p::LeafOf::<_, <#path as #p::Resolver>::Key>::of(&#place))
                            .leaf_collect_keys(&#place, &mut #keys.#index);
                    })
                }));
            }
            Some(quote_spanned!(span=>
                <#ty as #p::KeyField<<#path as #p::Resolver>::Key>>::collect_keys(&#this.#member, &mut #keys.#index);
            ))
        });
        let collect: Vec<TokenStream> = collect.collect();
        if collect.is_empty() {
            // Nothing resolved: the trait's provided method adds nothing.
            return quote!();
        }
        quote! {
            #[inline]
            fn collect_keys(&#this, #keys: &mut <Self::Needs as #p::Resolvers>::Keys) {
                #(#collect)*
            }
        }
    }

    fn serialize_field(&self) -> TokenStream {
        let p = &self.p;
        let site = Span::call_site();
        let (this, index, cx, s) = (
            local("self", site),
            local("__index", site),
            local("__cx", site),
            local("__s", site),
        );
        let checks = self.legend_checks();
        let arms = self.record.fields.iter().enumerate().map(|(i, f)| {
            let view = self.view(f);
            let s = local("__s", f.span);
            quote_spanned!(f.span=> #i => #p::Serialize::serialize(&#view, #s),)
        });
        quote! {
            fn serialize_field<__S: #p::Serializer>(
                &#this,
                #index: usize,
                #cx: &#p::Cx<'_, Self::Needs>,
                #s: __S,
            ) -> #p::Result<__S::Ok, __S::Error> {
                #checks
                match #index {
                    #(#arms)*
                    _ => #p::no_such_field(#index, #s),
                }
            }
        }
    }

    /// The value written for one field: a borrowing adapter over `self.<field>`, or over
    /// each value its path reaches.
    fn view(&self, f: &Field) -> TokenStream {
        if !f.has_path() {
            let this = local("self", f.span);
            let member = f.member;
            return self.leaf_view(f, quote_spanned!(f.span=> #this.#member), Some(f.ty));
        }
        let span = f.span;
        let p = &respan(self.p.clone(), span);
        let this = local("self", span);
        let member = f.member;
        let base = quote_spanned!(span=> #this.#member);
        view_along(p, base, f.path, 0, span, f.empty_is_absent, &|place| {
            self.leaf_view(f, place, None)
        })
    }

    /// The view of one value at `place` (a place expression); `ty` is its type when written.
    /// With `empty_is_absent`, an empty text or list reads as absent (`null`, the absence word).
    fn leaf_view(&self, f: &Field, place: TokenStream, ty: Option<&syn::Type>) -> TokenStream {
        let view = self.value_view(f, place.clone(), ty);
        let view = match f.empty_is_absent {
            Some(span) => {
                let p = &respan(self.p.clone(), span);
                let place = relocate(place.clone(), span);
                quote_spanned!(span=> #p::OrAbsent::new(#p::is_empty_value(&(#place)), #view))
            }
            None => view,
        };
        // A `Recorded` value the source never wrote reads `not recorded` (and is counted),
        // whatever the field's transform; for any other type the probe answers no, at
        // compile time.
        let p = &self.p;
        let (name, cx) = (&f.name, local("__cx", Span::call_site()));
        quote! {
            #p::RecordedView::new(
                {
                    use #p::{AnyRecorded as _, IsRecorded as _};
                    (&&#p::RecordedProbe(&(#place))).not_recorded()
                },
                #name,
                #cx.env(),
                #view,
            )
        }
    }

    /// The view of one value at `place`, as its transform writes it.
    fn value_view(&self, f: &Field, place: TokenStream, ty: Option<&syn::Type>) -> TokenStream {
        // At the attribute, so a bound a path's type misses is reported there.
        let p = &respan(self.p.clone(), f.span);
        let (name, span) = (&f.name, f.span);
        let cx = local("__cx", span);
        // A value a path reaches is bound to a local at the attribute: the argument rustc
        // blames for a missing bound is there, where every other use of the type is, so the
        // bound is stated once; a misspelt path is still reported at the path.
        let (ty, place, bind) = match ty {
            Some(ty) => (quote!(::<#ty>), place, quote!()),
            None => {
                let leaf = local("__leaf", span);
                let bind = quote_spanned!(span=> let #leaf = &(#place););
                (quote!(), quote_spanned!(span=> (*#leaf)), bind)
            }
        };
        let view = match &f.transform {
            Transform::Show => {
                quote_spanned!(span=> #p::Shown #ty::new(&#place))
            }
            Transform::Nested => {
                quote_spanned!(span=> #p::Nested #ty::named(&#place, #name, #cx.env()))
            }
            Transform::Legend(expr) => {
                let coded = respan(quote!(#p::coded), span);
                let (expr, place, name) = (
                    relocate(expr, span),
                    relocate(place, span),
                    relocate(name, span),
                );
                // `&(…)`: the argument rustc blames when the field's type does not fit starts
                // and ends at the attribute, whatever span the hygienic `self` has.
                quote_spanned!(span=> #coded(&(#expr), &(#place), #name, #cx.env()))
            }
            Transform::Resolve(i) => {
                let path = self.resolver(*i);
                let i = syn::Index::from(*i);
                let ty = match ty.is_empty() {
                    true => quote!(::<_, <#path as #p::Resolver>::Key>),
                    false => {
                        let ty = f.ty;
                        quote!(::<#ty, <#path as #p::Resolver>::Key>)
                    }
                };
                quote_spanned!(span=> #p::Named #ty::new(&#place, &#cx.names().#i, <#path as #p::Resolver>::NOUN, #cx.env()))
            }
            Transform::Id { short } => {
                quote_spanned!(span=> #p::Ident #ty::new(&#place, #short))
            }
            Transform::Date(None) => {
                quote_spanned!(span=> #p::Dated #ty::new(&#place, #cx.env()))
            }
            Transform::Date(Some(epoch)) => {
                let unit = epoch_unit(p, *epoch);
                quote_spanned!(span=> #p::EpochDated #ty::new(&#place, #unit, #cx.env()))
            }
            Transform::Untrusted { max_tokens } => {
                let cap = option(p, max_tokens.as_ref());
                quote_spanned!(span=> #p::Untrusted #ty::new(&#place, #name, #cap, #cx.env()))
            }
        };
        if bind.is_empty() {
            view
        } else {
            quote!({ #bind #view })
        }
    }

    /// The comparison of the rank fields alone, ascending; the trait's provided `rank_cmp`
    /// breaks ties by id and applies the order. Nothing without a rank (the provided method
    /// says `Equal`).
    fn cmp_rank_field(&self) -> TokenStream {
        let record = self.record;
        let Some(rank) = &record.rank else {
            return quote!();
        };
        // At the `rank` key, where the rank's other uses are: rustc states a bound once.
        let p = &respan(self.p.clone(), rank.span);
        let site = Span::call_site();
        let (this, other) = (local("self", site), local("__other", site));
        let f = &record.fields[rank.field];
        let span = rank.span;
        let (this_at, other_at) = (local("self", span), local("__other", span));
        let cmp = if let Some(fold) = rank.fold {
            let fold = fold_fn(p, fold, span);
            let (a, b) = (
                each_chain(f, &this_at, span),
                each_chain(f, &other_at, span),
            );
            quote_spanned!(span=> #p::KeyValue::total_cmp(&#fold(#a), &#fold(#b)))
        } else if has_opt(f.path) {
            let (a, b) = (opt_chain(f, &this_at, span), opt_chain(f, &other_at, span));
            quote_spanned!(span=> #p::rank_cmp_opt(#a, #b))
        } else if f.has_path() {
            let (a, b) = (place(f, &this_at, span), place(f, &other_at, span));
            quote_spanned!(span=> #p::RankKey::rank_cmp(&#a, &#b))
        } else {
            let (member, ty) = (f.member, f.ty);
            quote_spanned!(span=> <#ty as #p::RankKey>::rank_cmp(&#this_at.#member, &#other_at.#member))
        };
        quote! {
            #[inline]
            fn cmp_rank_field(&#this, #other: &Self) -> #p::Ordering {
                #cmp
            }
        }
    }

    fn rank_key(&self) -> TokenStream {
        let p = &self.p;
        let record = self.record;
        let this = local("self", Span::call_site());
        let body = match &record.rank {
            Some(rank) => {
                let f = &record.fields[rank.field];
                let span = rank.span;
                // At the `rank` key, as in `cmp_rank_field`: a bound is stated once.
                let p = &respan(p.clone(), span);
                let this = local("self", span);
                if let Some(fold) = rank.fold {
                    let fold = fold_fn(p, fold, span);
                    let values = each_chain(f, &this, span);
                    quote_spanned!(span=> #p::Some(#fold(#values)))
                } else if f.has_path() {
                    // By autoref (`LeafOf`): a bound the key misses is reported once, where
                    // the records are compared.
                    let chain = if has_opt(f.path) {
                        opt_chain(f, &this, span)
                    } else {
                        let place = place(f, &this, span);
                        quote_spanned!(span=> #p::Some(&#place))
                    };
                    let c = local("__chain", span);
                    quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyValueLeaf as _, RankLeaf as _};
                        let #c = #chain;
                        #p::Some((&&#p::LeafOf::<_, ()>::of_opt(&#c)).leaf_key_value(#c))
                    })
                } else {
                    let (member, ty) = (f.member, f.ty);
                    quote_spanned!(span=> #p::Some(<#ty as #p::RankKey>::key_value(&#this.#member)))
                }
            }
            None => return quote!(),
        };
        quote! {
            #[inline]
            fn rank_key(&#this) -> #p::Option<#p::KeyValue> {
                #body
            }
        }
    }

    fn id_key(&self) -> TokenStream {
        let p = &self.p;
        let record = self.record;
        let this = local("self", Span::call_site());
        let body = match record.id {
            Some(id) => {
                let f = &record.fields[id];
                let span = f.span;
                let this = local("self", span);
                let p = &respan(p.clone(), span);
                // An id through `?`: a record without it has none (and pages by count). A
                // path's id by autoref (`LeafOf`): a bound it misses is reported once, in
                // `serialize_field`.
                let chain = if has_opt(f.path) {
                    opt_chain(f, &this, span)
                } else {
                    let place = place(f, &this, span);
                    quote_spanned!(span=> #p::Some(&#place))
                };
                if f.has_path() {
                    let c = local("__chain", span);
                    let v = local("__v", span);
                    let l = local("__leaf", span);
                    quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyValueLeaf as _, IdValueLeaf as _};
                        let #c = #chain;
                        let #l = #p::LeafOf::<_, ()>::of_opt(&#c);
                        #c.map(|#v| (&&#l).leaf_id_key(#v))
                    })
                } else {
                    quote_spanned!(span=> #chain.map(#p::IdField::id_key))
                }
            }
            None => return quote!(),
        };
        quote! {
            #[inline]
            fn id_key(&#this) -> #p::Option<#p::IdKey<'_>> {
                #body
            }
        }
    }

    fn record_schema(&self) -> TokenStream {
        let p = &self.p;
        let record = self.record;
        let generator = local("__gen", Span::call_site());
        let record_var = local("__record", Span::call_site());
        let title = &record.name;
        let schemas = record.fields.iter().map(|f| {
            let (name, ty, span) = (&f.name, f.ty, f.span);
            let generator = local("__gen", span);
            if f.has_path() {
                let leaf = self.leaf_type(f);
                let p = &respan(p.clone(), span);
                let schema = match &f.transform {
                    Transform::Show => {
                        quote_spanned!(span=> (&&#p::Probe::at(#leaf)).shown_schema(#generator))
                    }
                    // `nested` with `from` is refused by `check`.
                    Transform::Nested => quote_spanned!(span=> #p::schema::along(&[], #p::schema::Schema::default())),
                    Transform::Legend(expr) => self.legend_schema(f, expr),
                    Transform::Resolve(i) => {
                        let path = self.resolver(*i);
                        quote_spanned!(span=> {
                            #[allow(unused_imports)]
                            #[allow(unused_imports)]
                        use #p::{AnyLeaf as _, ResolvedLeaf as _};
                            (&&#p::KeyProbe::at(#leaf, #p::PhantomData::<<#path as #p::Resolver>::Key>)).resolved_schema(<#path as #p::Resolver>::NOUN)
                        })
                    }
                    // Each found by autoref on `Probe`: a bound the leaf misses is reported
                    // once, in `serialize_field` (see `AnyLeaf`).
                    Transform::Id { .. } => quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyLeaf as _, IdLeaf as _};
                        (&&#p::Probe::at(#leaf)).id_schema()
                    }),
                    Transform::Date(None) => quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyLeaf as _, DateLeaf as _};
                        (&&#p::Probe::at(#leaf)).date_schema()
                    }),
                    Transform::Date(Some(_)) => quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyLeaf as _, EpochLeaf as _};
                        (&&#p::Probe::at(#leaf)).epoch_date_schema()
                    }),
                    Transform::Untrusted { .. } => quote_spanned!(span=> {
                        #[allow(unused_imports)]
                        use #p::{AnyLeaf as _, UntrustedLeaf as _};
                        (&&#p::Probe::at(#leaf)).untrusted_schema()
                    }),
                };
                let steps = f.path.iter().filter_map(|step| match step {
                    PathStep::Opt => Some(quote!(#p::Step::Opt)),
                    PathStep::Each(_) => Some(quote!(#p::Step::Each)),
                    PathStep::Member(_) => None,
                });
                let absent = match &f.absent {
                    // With `empty_is_absent`, an empty value is absent: any text or list has
                    // an absence to name.
                    Some((_, Some(absent_span)))
                        if !has_opt(f.path) && !has_each(f.path) && f.empty_is_absent.is_none() =>
                    {
                        let leaf = self.leaf_type(f);
                        quote_spanned!(*absent_span=> #p::may_be_absent(#leaf);)
                    }
                    _ => quote!(),
                };
                let schema = nullable_if_empty(p, f, schema);
                let schema = quote!({ #absent #p::schema::along(&[#(#steps),*], #schema) });
                let schema = nullable_if_empty(p, f, schema);
                return quote!(#record_var.field(#name, #schema););
            }
            let schema = match &f.transform {
                Transform::Show => {
                    let generator = local("__gen", ty.span());
                    quote_spanned!(ty.span()=> (&&#p::Probe::<#ty>::new()).shown_schema(#generator))
                }
                Transform::Nested => quote_spanned!(span=> #p::schema::nested::<#ty>(#generator)),
                Transform::Legend(expr) => self.legend_schema(f, expr),
                Transform::Resolve(i) => {
                    let path = self.resolver(*i);
                    quote_spanned!(span=> #p::schema::resolved::<#ty, <#path as #p::Resolver>::Key>(<#path as #p::Resolver>::NOUN))
                }
                Transform::Id { .. } => quote_spanned!(span=> #p::schema::id::<#ty>()),
                Transform::Date(None) => quote_spanned!(span=> #p::schema::date::<#ty>()),
                Transform::Date(Some(_)) => {
                    quote_spanned!(span=> #p::schema::epoch_date::<#ty>())
                }
                Transform::Untrusted { .. } => quote_spanned!(span=> #p::schema::untrusted::<#ty>()),
            };
            let schema = nullable_if_empty(p, f, schema);
            quote!(#record_var.field(#name, #schema);)
        });
        let schemas: Vec<TokenStream> = schemas.collect();
        // The two ways a shown field's schema is found (its `JsonSchema`, else a permissive
        // schema for any `Serialize`), chosen by autoref on `Probe`: imported once, for every
        // shown field's `shown_schema` call.
        let probe = record
            .fields
            .iter()
            .any(|f| matches!(f.transform, Transform::Show))
            .then(|| {
                quote! {
                    #[allow(unused_imports)]
                    use #p::{ViaJsonSchema as _, ViaSerde as _};
                }
            });
        quote! {
            #[inline]
            fn record_schema(#generator: &mut #p::SchemaGenerator) -> #p::Schema {
                #probe
                let _ = &#generator;
                let mut #record_var = #p::schema::RecordSchema::new(#title);
                #(#schemas)*
                #record_var.finish()
            }
        }
    }

    /// `PhantomData` of the type a field's path ends at, inferred from a closure that walks
    /// the path and is never called.
    fn leaf_type(&self, f: &Field) -> TokenStream {
        let span = f.span;
        let p = &respan(self.p.clone(), span);
        let r = local("__r", span);
        let member = f.member;
        let mut cur = quote_spanned!(span=> (*#r).#member);
        for step in f.path {
            cur = match step {
                PathStep::Member(m) => quote_spanned!(span=> #cur.#m),
                PathStep::Opt => quote_spanned!(span=> (*#p::through_option(&#cur))),
                PathStep::Each(_) => quote_spanned!(span=> (*#p::through_items(&#cur))),
            };
        }
        quote_spanned!(span=> #p::leaf_type::<Self, _>(|#r| &#cur))
    }

    /// A legend field's schema; the call checks the legend's bound, at the attribute.
    fn legend_schema(&self, f: &Field, expr: &syn::Expr) -> TokenStream {
        let p = &self.p;
        let (name, ty) = (&f.name, f.ty);
        if f.has_path() {
            let leaf = self.leaf_type(f);
            let legend = respan(quote!(#p::schema::legend), f.span);
            return quote_spanned!(f.span=> #legend(&(#expr), #leaf, #name));
        }
        let schema = quote!(#p::schema::legend(&(#expr), #p::PhantomData::<#ty>, #name));
        respan(schema, f.span)
    }

    /// The legend bounds of `record_schema`, stated again (in closures that never run) where a
    /// body uses a legend through `coded`: rustc then reports the bound once per body, with
    /// the same text each time, so a legend over the wrong type is one error, not two.
    fn legend_checks(&self) -> TokenStream {
        let checks = self
            .record
            .fields
            .iter()
            .filter_map(|f| match &f.transform {
                Transform::Legend(expr) => {
                    let schema = self.legend_schema(f, expr);
                    Some(quote_spanned!(f.span=> let _ = || #schema;))
                }
                _ => None,
            });
        quote!(#(#checks)*)
    }

    /// Type rules as where-clauses spanned at the attribute: one clear error per mistake, and
    /// the bodies are checked as if they held, so nothing else is reported.
    fn where_clause(&self) -> TokenStream {
        let p = &self.p;
        let record = self.record;
        let mut predicates: Vec<TokenStream> = Vec::new();
        // A path's type is not written: its bounds are checked where its views are built.
        for f in record.fields.iter().filter(|f| !f.has_path()) {
            let span = f.span;
            let ty = &respan(f.ty.to_token_stream(), span);
            let predicate = match &f.transform {
                Transform::Show => quote_spanned!(ty.span()=> #ty: #p::Serialize),
                Transform::Nested => quote_spanned!(span=> #ty: #p::NestedField),
                Transform::Legend(_) => continue,
                Transform::Resolve(i) => {
                    let path = self.resolver(*i);
                    quote_spanned!(span=> #ty: #p::KeyField<<#path as #p::Resolver>::Key>)
                }
                Transform::Id { .. } => quote_spanned!(span=> #ty: #p::IdField),
                Transform::Date(None) => quote_spanned!(span=> #ty: #p::DateField),
                Transform::Date(Some(_)) => quote_spanned!(span=> #ty: #p::EpochField),
                Transform::Untrusted { .. } => quote_spanned!(span=> #ty: #p::UntrustedText),
            };
            predicates.push(respan(predicate, span));
        }
        for f in record
            .fields
            .iter()
            .filter(|f| !f.has_path() && f.empty_is_absent.is_none())
        {
            if let Some((_, Some(span))) = &f.absent {
                let ty = respan(f.ty.to_token_stream(), *span);
                predicates.push(respan(quote!(#ty: #p::MayBeAbsent), *span));
            }
        }
        if let Some(rank) = &record.rank
            && !record.fields[rank.field].has_path()
        {
            let ty = respan(record.fields[rank.field].ty.to_token_stream(), rank.span);
            predicates.push(respan(quote!(#ty: #p::RankKey), rank.span));
        }
        match &record.generics.where_clause {
            Some(w) => {
                let existing = w.predicates.iter();
                quote!(where #(#existing,)* #(#predicates,)*)
            }
            None => quote!(where #(#predicates,)*),
        }
    }
}

/// Whether a path goes through an `Option`.
fn has_opt(path: &[PathStep]) -> bool {
    path.iter().any(|s| matches!(s, PathStep::Opt))
}

/// Whether a path goes through a collection.
fn has_each(path: &[PathStep]) -> bool {
    path.iter().any(|s| matches!(s, PathStep::Each(_)))
}

/// `this.member.a.b`: the place a path with no `?` or `[]` names (`check` refuses the others
/// where this is used: ids, rank keys without `?`).
fn place(f: &Field, this: &Ident, span: Span) -> TokenStream {
    let member = f.member;
    let steps = f.path.iter().filter_map(|step| match step {
        PathStep::Member(m) => Some(m),
        _ => None,
    });
    quote_spanned!(span=> #this.#member #(.#steps)*)
}

/// `Option<&T>` of the value a path through `?` reaches (no `[]`: `check` refuses it).
fn opt_chain(f: &Field, this: &Ident, span: Span) -> TokenStream {
    let member = f.member;
    let o = local("__o", span);
    let mut chain = quote_spanned!(span=> ::core::option::Option::Some(&#this.#member));
    for step in f.path {
        chain = match step {
            PathStep::Member(m) => quote_spanned!(span=> #chain.map(|#o| &#o.#m)),
            PathStep::Opt => {
                quote_spanned!(span=> #chain.and_then(|#o| ::core::option::Option::as_ref(#o)))
            }
            PathStep::Each(_) => chain,
        };
    }
    chain
}

/// Every value a path through `[]` reaches, as an iterator of references: `?` drops an
/// absent value, `[]` goes into each element of a collection iterated by reference.
fn each_chain(f: &Field, this: &Ident, span: Span) -> TokenStream {
    let member = f.member;
    let o = local("__o", span);
    let mut chain = quote_spanned!(span=> ::core::iter::once(&#this.#member));
    for step in f.path {
        chain = match step {
            PathStep::Member(m) => quote_spanned!(span=> #chain.map(|#o| &#o.#m)),
            PathStep::Opt => {
                quote_spanned!(span=> #chain.filter_map(|#o| ::core::option::Option::as_ref(#o)))
            }
            PathStep::Each(_) => {
                quote_spanned!(span=> #chain.flat_map(|#o| ::core::iter::IntoIterator::into_iter(#o)))
            }
        };
    }
    chain
}

/// The runtime function that makes one rank key of a list's values.
fn fold_fn(p: &TokenStream, fold: Fold, span: Span) -> TokenStream {
    match fold {
        Fold::Sum => quote_spanned!(span=> #p::rank_sum),
        Fold::Max => quote_spanned!(span=> #p::rank_max),
        Fold::Min => quote_spanned!(span=> #p::rank_min),
        Fold::Count => quote_spanned!(span=> #p::rank_count),
    }
}

/// The view of a value reached by `steps` from the place `base`: `leaf` builds the view of
/// each value at the end; `?` and `[]` wrap it.
fn view_along(
    p: &TokenStream,
    base: TokenStream,
    steps: &[PathStep],
    depth: usize,
    span: Span,
    empty: Option<Span>,
    leaf: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    let Some((step, rest)) = steps.split_first() else {
        return leaf(base);
    };
    match step {
        PathStep::Member(m) => view_along(
            p,
            quote_spanned!(span=> #base.#m),
            rest,
            depth,
            span,
            empty,
            leaf,
        ),
        PathStep::Opt => {
            let v = local(&format!("__v{depth}"), span);
            let inner = view_along(
                p,
                quote_spanned!(span=> (*#v)),
                rest,
                depth + 1,
                span,
                empty,
                leaf,
            );
            quote_spanned!(span=> #p::Opt::new(#p::Option::as_ref(&#base).map(|#v| #inner)))
        }
        PathStep::Each(_) => {
            let v = local(&format!("__v{depth}"), span);
            let inner = view_along(
                p,
                quote_spanned!(span=> (*#v)),
                rest,
                depth + 1,
                span,
                empty,
                leaf,
            );
            let each = quote_spanned!(span=> #p::Each::new(&#base, |#v| #inner));
            match empty {
                // `empty_is_absent`: an empty list on the way is absent too.
                Some(_) => {
                    quote_spanned!(span=> #p::OrAbsent::new(#p::iter_is_empty(&#base), #each))
                }
                None => each,
            }
        }
    }
}

/// Statements that run `leaf` on every value a path reaches from the place `base`.
fn walk(
    base: TokenStream,
    steps: &[PathStep],
    depth: usize,
    span: Span,
    leaf: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    let Some((step, rest)) = steps.split_first() else {
        return leaf(base);
    };
    match step {
        PathStep::Member(m) => walk(quote_spanned!(span=> #base.#m), rest, depth, span, leaf),
        PathStep::Opt => {
            let v = local(&format!("__v{depth}"), span);
            let inner = walk(quote_spanned!(span=> (*#v)), rest, depth + 1, span, leaf);
            quote_spanned!(span=> if let ::core::option::Option::Some(#v) = ::core::option::Option::as_ref(&#base) { #inner })
        }
        PathStep::Each(_) => {
            let v = local(&format!("__v{depth}"), span);
            let inner = walk(quote_spanned!(span=> (*#v)), rest, depth + 1, span, leaf);
            quote_spanned!(span=> for #v in &#base { #inner })
        }
    }
}

fn epoch_unit(p: &TokenStream, epoch: crate::attr::Epoch) -> TokenStream {
    match epoch {
        crate::attr::Epoch::Seconds => quote!(#p::EpochUnit::Seconds),
        crate::attr::Epoch::Millis => quote!(#p::EpochUnit::Millis),
    }
}

/// `Some(value)` or `None`, as tokens, through the runtime's path `p`.
fn option(p: &TokenStream, value: Option<&impl ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(#p::Some(#value)),
        None => quote!(#p::None),
    }
}

/// The same tokens, all with `span`, so an error about them points at one place.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    map_spans(tokens, &|_| span)
}

/// The user's tokens moved to `span` for messages, still resolved where the user wrote them.
fn relocate(tokens: impl ToTokens, span: Span) -> TokenStream {
    map_spans(tokens.into_token_stream(), &|own| own.located_at(span))
}

fn map_spans(tokens: TokenStream, f: &dyn Fn(Span) -> Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), map_spans(g.stream(), f));
                group.set_span(f(g.span()));
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(f(tt.span()));
            }
            tt
        })
        .collect()
}

/// `schema`, allowing `null` when the field reads an empty value as absent.
fn nullable_if_empty(p: &TokenStream, f: &Field, schema: TokenStream) -> TokenStream {
    match f.empty_is_absent {
        Some(span) => quote_spanned!(span=> #p::schema::or_null(#schema)),
        None => schema,
    }
}
