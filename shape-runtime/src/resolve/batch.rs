//! The resolvers a record type needs, as a tuple ([`Resolvers`]), and one batched call per
//! resolver for a page's keys. Reached by generated code through `__private`.

use std::future::Future;

use super::resolver::{KeySet, NameMap, Resolve, ResolveError, Resolver, ResolverStats};

/// The set of resolvers a record type needs: a tuple of [`Resolver`] types.
pub trait Resolvers: 'static {
    /// One [`KeySet`] per resolver.
    type Keys: Default + Send;
    /// One [`NameMap`] per resolver.
    type Names: Default + Send + Sync;
}

impl Resolvers for () {
    type Keys = ();
    type Names = ();
}

impl<C: ?Sized + Sync> Supplies<()> for C {
    #[allow(clippy::manual_async_fn)]
    fn resolve_all(
        &self,
        _keys: (),
    ) -> impl Future<Output = Result<((), Vec<ResolverStats>), ResolveError>> + Send {
        async { Ok(((), Vec::new())) }
    }
}

async fn resolve_one<R: Resolver, C: Resolve<R> + ?Sized>(
    cx: &C,
    keys: KeySet<R::Key>,
    stats: &mut Vec<ResolverStats>,
) -> Result<NameMap<R::Key>, ResolveError> {
    if keys.order.is_empty() {
        stats.push(ResolverStats {
            resolver: R::NAME,
            calls: 0,
            keys: 0,
            unresolved: 0,
        });
        return Ok(NameMap::default());
    }
    let names = cx.resolve(&keys.order).await?;
    let names: NameMap<R::Key> = names.into_iter().collect();
    let unresolved = keys
        .order
        .iter()
        .filter(|k| !names.contains_key(*k))
        .count();
    stats.push(ResolverStats {
        resolver: R::NAME,
        calls: 1,
        keys: keys.order.len(),
        unresolved,
    });
    Ok(names)
}

macro_rules! tuple_needs {
    ($($r:ident . $i:tt),+) => {
        impl<$($r: Resolver),+> Resolvers for ($($r,)+) {
            type Keys = ($(KeySet<$r::Key>,)+);
            type Names = ($(NameMap<$r::Key>,)+);
        }

        impl<Cx: ?Sized + Sync $(+ Resolve<$r>)+, $($r: Resolver),+> Supplies<($($r,)+)> for Cx {
            #[allow(clippy::manual_async_fn)]
            fn resolve_all(
                &self,
                keys: ($(KeySet<$r::Key>,)+),
            ) -> impl Future<Output = Result<(($(NameMap<$r::Key>,)+), Vec<ResolverStats>), ResolveError>> + Send {
                async move {
                    let mut stats = Vec::new();
                    let names = ($(resolve_one::<$r, Cx>(self, keys.$i, &mut stats).await?,)+);
                    Ok((names, stats))
                }
            }
        }
    };
}

tuple_needs!(A.0);
tuple_needs!(A.0, B.1);
tuple_needs!(A.0, B.1, C.2);
tuple_needs!(A.0, B.1, C.2, D.3);
tuple_needs!(A.0, B.1, C.2, D.3, E.4);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
tuple_needs!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);

/// A context that supplies every resolver in `N`.
pub trait Supplies<N: Resolvers> {
    /// Resolves every key set, one call per resolver.
    fn resolve_all(
        &self,
        keys: N::Keys,
    ) -> impl Future<Output = Result<(N::Names, Vec<ResolverStats>), ResolveError>> + Send;
}
