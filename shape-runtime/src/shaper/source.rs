//! What a call shapes ([`Source`]): the one door into the page pipeline. Typed rows (`&rows`),
//! rows with what resolves their keys (`(&rows, &ctx)`), rows in the caller's order
//! ([`Ordered`]) and a configured tool's JSON (`(&projection, raw)`) all go through
//! [`Call::shape`], [`Call::shape_blocking`] and, for a result worth storing,
//! [`Call::shape_or_store`] ([`Stored`] sources).

use std::cmp::Ordering;
use std::future::Future;

use super::call::{Call, RowOrder};
use crate::configured::{Json, JsonProjection};
use crate::handle::{HandleStore, Keep};
use crate::page::{ShapeError, Shaped};
use crate::record::tool_result::ToolResult;
use crate::resolve::Supplies;

/// What a call shapes into a page.
///
/// | source | what it is |
/// |---|---|
/// | `&rows` (`&[T]`, `&Vec<T>`, `&[T; N]`) | records of a [`ToolResult`] type needing no resolver |
/// | `(&rows, &ctx)` | records whose keys `ctx` resolves (one batched call per resolver) |
/// | [`Ordered`] | records in the caller's order, ties as given |
/// | `(&projection, json)` | a configured tool's JSON: its text or a parsed `Value` ([`Json`]) |
///
/// Implemented by the library only: the types above are the sources there are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not something a call can shape",
    label = "not a source of records",
    note = "a call shapes `&rows` of a `#[derive(ToolResult)]` type (a slice, `Vec` or array), \
            `(&rows, &ctx)` when `ctx` resolves their keys, `toolshape::source::Ordered::new(&rows, \
            &ctx, by)`, or `(&projection, raw)` for a configured tool's JSON"
)]
pub trait Source: Sized + Send + sealed::Sealed {
    #[doc(hidden)]
    fn shape_in(self, call: &Call<'_>) -> impl Future<Output = Result<Shaped, ShapeError>> + Send;
}

mod sealed {
    /// Only the library's sources are sources: the door's contract (what a page of each
    /// promises) is the library's to keep.
    pub trait Sealed {}
}

/// A [`Source`] that can be stored behind a handle when it is worth it
/// ([`Call::shape_or_store`]): typed rows (with or without a resolver) and a configured
/// tool's JSON.
pub trait Stored: Source {
    #[doc(hidden)]
    fn shape_or_store_in<S: HandleStore>(
        self,
        call: &Call<'_>,
        keep: Keep<'_, S>,
    ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send;
}

/// Records ranked by the caller's comparator, ties in the given order. Pages continue by
/// count, so the rows must be the whole result on every call. A call with
/// [`keep_order`](Call::keep_order) (or rows an upstream paged) keeps the given order and the
/// comparator is not used. Not a [`Stored`] source: to store rows in an order of your own,
/// sort them and shape them with `keep_order` set.
///
/// ```
/// use toolshape::{Shaper, ToolResult, source::Ordered};
///
/// #[derive(ToolResult)]
/// #[shape(name = "city", plural = "cities", prose = "{name}")]
/// struct City {
///     #[shape(show)]
///     name: String,
/// }
///
/// let rows = vec![City { name: "Lyon".into() }, City { name: "Albi".into() }];
/// let by_name = |a: &City, b: &City| a.name.cmp(&b.name);
/// let shaped = Shaper::for_tool("cities")
///     .shape_blocking(Ordered::new(&rows, &(), by_name))
///     .unwrap();
/// assert!(shaped.text().contains("Albi\nLyon"));
/// ```
pub struct Ordered<'r, T, C: ?Sized, F> {
    rows: &'r [T],
    ctx: &'r C,
    by: F,
}

impl<'r, T, C: ?Sized, F> Ordered<'r, T, C, F>
where
    F: Fn(&T, &T) -> Ordering + Send + Sync,
{
    /// `rows` in the order `by` gives (ties as given), keys resolved through `ctx` (`&()` for
    /// none).
    pub fn new(rows: &'r [T], ctx: &'r C, by: F) -> Self {
        Ordered { rows, ctx, by }
    }
}

/// Typed rows: a slice, a `Vec` or an array of them.
macro_rules! typed_sources {
    ($([$($generic:tt)*] $rows:ty),+ $(,)?) => {$(
        impl<'r, T $($generic)*> sealed::Sealed for $rows {}

        impl<'r, T, C: ?Sized $($generic)*> sealed::Sealed for ($rows, &'r C) {}

        impl<'r, T $($generic)*> Source for $rows
        where
            T: ToolResult + Sync,
            (): Supplies<T::Needs>,
        {
            fn shape_in(
                self,
                call: &Call<'_>,
            ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
                call.typed(&self[..], &(), RowOrder::<'r, T>::Ranked)
            }
        }

        impl<'r, T $($generic)*> Stored for $rows
        where
            T: ToolResult + Sync,
            (): Supplies<T::Needs>,
        {
            fn shape_or_store_in<S: HandleStore>(
                self,
                call: &Call<'_>,
                keep: Keep<'_, S>,
            ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
                call.typed_or_store(&self[..], &(), keep)
            }
        }

        impl<'r, T, C $($generic)*> Source for ($rows, &'r C)
        where
            T: ToolResult + Sync,
            C: Supplies<T::Needs> + Sync + ?Sized,
        {
            fn shape_in(
                self,
                call: &Call<'_>,
            ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
                call.typed(&self.0[..], self.1, RowOrder::<'r, T>::Ranked)
            }
        }

        impl<'r, T, C $($generic)*> Stored for ($rows, &'r C)
        where
            T: ToolResult + Sync,
            C: Supplies<T::Needs> + Sync + ?Sized,
        {
            fn shape_or_store_in<S: HandleStore>(
                self,
                call: &Call<'_>,
                keep: Keep<'_, S>,
            ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
                call.typed_or_store(&self.0[..], self.1, keep)
            }
        }
    )+};
}

typed_sources! {
    [] &'r [T],
    [] &'r Vec<T>,
    [, const N: usize] &'r [T; N],
}

impl<T, C: ?Sized, F> sealed::Sealed for Ordered<'_, T, C, F> {}

impl<T, C, F> Source for Ordered<'_, T, C, F>
where
    T: ToolResult + Sync,
    C: Supplies<T::Needs> + Sync + ?Sized,
    F: Fn(&T, &T) -> Ordering + Send + Sync,
{
    async fn shape_in(self, call: &Call<'_>) -> Result<Shaped, ShapeError> {
        call.typed(self.rows, self.ctx, RowOrder::Custom(&self.by))
            .await
    }
}

/// A configured tool's JSON: its text (`&str`, `&String`) or a parsed value (`&Value`,
/// [`Json`]).
macro_rules! json_sources {
    ($($json:ty),+ $(,)?) => {$(
        impl<'j> sealed::Sealed for (&JsonProjection, $json) {}

        impl<'j> Source for (&JsonProjection, $json) {
            async fn shape_in(self, call: &Call<'_>) -> Result<Shaped, ShapeError> {
                call.json(self.0, self.1.into())
            }
        }

        impl<'j> Stored for (&JsonProjection, $json) {
            fn shape_or_store_in<S: HandleStore>(
                self,
                call: &Call<'_>,
                keep: Keep<'_, S>,
            ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
                call.json_or_store_entry(self.0, self.1.into(), keep)
            }
        }
    )+};
}

json_sources!(&'j str, &'j String, &'j serde_json::Value, Json<'j>);
