//! One call of a tool ([`Call`]): where its rows stand in the whole result (the cursor's
//! position, `Resume`; upstream pages, `UpstreamRows`), the raw payload; starting a call from a
//! [`Shaper`]; and the shaping of its rows into a page.

use super::blocking::block_on;
use super::keys::Ids;
use super::settings::Shaper;
use super::source::Source;
use crate::aggregate::Aggregate;
#[cfg(any(test, feature = "test-seams"))]
use crate::cursor::Continuation;
use crate::cursor::{CursorCodec, CursorError, Cursors, Keyset, QueryHash, UpstreamPosition};
use crate::fields::date::Day;
use crate::handle::id::Handle;
use crate::page::render::Layout;
use crate::page::{PageInputs, PageSettings, TypedRows};
use crate::page::{ShapeError, Shaped};
use crate::record::tool_result::ToolResult;
use crate::resolve::{ResolverStats, Resolvers, Supplies};
use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// One call of a tool: the rows' place in the whole result (total, earlier pages, cursor),
/// what was asked, the raw payload. Made by [`Shaper::call`]; the shaper's settings are
/// shared, not copied.
#[derive(Clone)]
pub struct Call<'a> {
    pub(super) shaper: Shaper,
    pub(super) page_size: Option<usize>,
    pub(super) total: Option<u64>,
    pub(super) shown_before: u64,
    /// Records earlier pages skipped as too large for any page of their own (from the cursor).
    pub(super) skipped_before: u64,
    /// The handle the walk's first page stored the whole result under (from the cursor).
    pub(super) walk_handle: Option<Handle>,
    pub(super) query: Option<String>,
    pub(super) raw: Option<&'a str>,
    pub(super) keep_order: bool,
    pub(super) cursor: Option<Cursors>,
    pub(super) after: Option<Resume>,
    pub(super) upstream: Option<UpstreamRows>,
    /// What the summary says of the rows beyond their count ([`Call::aggregate`]).
    pub(crate) aggregate: Option<&'a Aggregate>,
    /// The day "the last 30 days" counts back from; `None` is today in UTC.
    pub(crate) today: Option<Day>,
    /// What the answer holds (its parts and their places), stated first among the facts of
    /// the whole result on a walk's first page.
    pub(crate) parts: Option<&'a str>,
    /// The records are a text's lines, in order (see `Layout::lines`); kept with the result
    /// when it is stored, for the walk's later pages.
    pub(crate) lines: bool,
    /// Fields a page leaves out and a stored result keeps ([`Call::aside`]).
    pub(crate) aside: &'a [String],
    /// What a page leaves out: the shaper's `hide` and `aside`, when there is any `aside`.
    pub(crate) page_hide: Option<Vec<String>>,
    /// The principal the call is made for, when a request named one (`mcp::Pages`): what
    /// it cuts is stored for that principal, whatever owner the store was given.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) principal: Option<String>,
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("shaper", &self.shaper)
            .field("total", &self.total)
            .field("shown_before", &self.shown_before)
            .field("keep_order", &self.keep_order)
            .field("after", &self.after)
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

/// Where a page resumes, from the cursor the model passed back.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Resume {
    /// After this rank key and id: records are in the library's `(rank, id)` order and have
    /// ids, so a record inserted or deleted between calls neither repeats nor hides another.
    Keyset(Keyset),
    /// After this many records of the ordered rows: the caller's order (`keep_order`,
    /// [`Ordered`](crate::source::Ordered)) or records without an id, where no key says where a record
    /// stands. The rows must be the whole result on every call.
    Offset(u64),
    /// In an upstream that pages itself: the upstream page to fetch and how many of its
    /// records to skip.
    Upstream(UpstreamPosition),
}

/// How a call orders its rows.
pub(crate) enum RowOrder<'f, T> {
    /// By the rank key, ties by id; by id alone without a rank.
    Ranked,
    /// By the caller's comparator, ties in the given order.
    Custom(&'f (dyn Fn(&T, &T) -> Ordering + Sync)),
    /// As given.
    Given,
}

/// The upstream pages a call's rows are, as the tool declared them ([`Call::upstream`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct UpstreamRows {
    /// Each page's continuation (`None` for the upstream's first page) and how many rows it
    /// gave; `None` for the last page declared: the rest of the rows.
    pub(super) pages: Vec<(Option<String>, Option<usize>)>,
    /// The upstream's continuation after the last page; `None` when it was the last.
    pub(super) next: Option<String>,
}

/// Starting a call. (The shorthands that shape a source in one call, [`Shaper::shape`] and
/// [`Shaper::shape_blocking`], live beside the `Shaper`, so a compiler error names them
/// `Shaper::…`.)
impl Shaper {
    /// Starts one call: set where the rows stand in the whole result (the total, the
    /// cursor), then shape them.
    pub fn call<'a>(&self) -> Call<'a> {
        Call {
            shaper: self.clone(),
            page_size: None,
            total: None,
            shown_before: 0,
            skipped_before: 0,
            walk_handle: None,
            query: None,
            raw: None,
            keep_order: false,
            cursor: None,
            after: None,
            upstream: None,
            aggregate: None,
            today: None,
            parts: None,
            lines: false,
            aside: &[],
            page_hide: None,
            principal: None,
        }
    }
}

impl<'a> Call<'a> {
    /// At most this many records on this page (instead of the shaper's page size).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = Some(page_size.max(1));
        self
    }

    /// The number of records matching the query, when the rows are one page of more (a
    /// database `LIMIT`); defaults to the rows given plus the earlier pages.
    pub fn total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Records shown by earlier pages of this query (from the cursor).
    pub fn shown_before(mut self, shown: u64) -> Self {
        self.shown_before = shown;
        self
    }

    /// What was asked, in words (`status=open`), for the summary of an empty answer.
    pub fn query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    /// The raw payload the rows came from, to report the pre-shaping size.
    pub fn raw_payload(mut self, raw: &'a str) -> Self {
        self.raw = Some(raw);
        self
    }

    /// This call, its summary stating `parts` (what the answer holds) after its counts.
    #[cfg_attr(
        not(feature = "rmcp"),
        expect(dead_code, reason = "the harness (feature `rmcp`) is its only caller")
    )]
    pub(crate) fn parts(mut self, parts: Option<&'a str>) -> Self {
        self.parts = parts;
        self
    }

    /// This call, its records a text's lines in order (see `Layout::lines`).
    #[cfg_attr(
        not(feature = "rmcp"),
        expect(dead_code, reason = "the harness (feature `rmcp`) is its only caller")
    )]
    pub(crate) fn text_lines(mut self) -> Self {
        self.lines = true;
        self
    }

    /// This call, its pages leaving out the fields named in `aside` while a stored result
    /// keeps them (what the rules for an answer nobody described set aside: reachable through
    /// `open_result`, named in `omitted.fields`). A result with fields aside is always
    /// stored.
    #[cfg_attr(
        not(feature = "rmcp"),
        expect(dead_code, reason = "the harness (feature `rmcp`) is its only caller")
    )]
    pub(crate) fn aside(mut self, aside: &'a [String]) -> Self {
        self.aside = aside;
        self.page_hide = (!aside.is_empty()).then(|| {
            let mut hide = self.shaper.current_hide().to_vec();
            hide.extend(
                aside
                    .iter()
                    .filter(|a| !hide.contains(a))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            hide
        });
        self
    }

    /// This call, reporting `raw` as its payload unless one was given.
    pub(crate) fn with_raw<'b>(&self, raw: &'b str) -> Call<'b>
    where
        'a: 'b,
    {
        Call {
            raw: Some(self.raw.unwrap_or(raw)),
            ..self.clone()
        }
    }

    /// States `aggregate` of the rows in the summary ("312 tickets: 40 open, 12 urgent…"),
    /// on every page of a walk alike: the rows given must be the whole result, as for
    /// paging by count, or the summary says which part they are ("of pods 13–300: …", rows
    /// after a keyset cursor or an upstream page). Every key of every row is resolved (one
    /// call per resolver), since the aggregate reads them all.
    ///
    /// ```
    /// use toolshape::{aggregate::Aggregate, Budget, Shaper, ToolResult};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "pod", plural = "pods")]
    /// struct Pod {
    ///     #[shape(id)]
    ///     name: String,
    ///     #[shape(show)]
    ///     phase: String,
    /// }
    ///
    /// let pods: Vec<Pod> = (0..30)
    ///     .map(|i| Pod {
    ///         name: format!("web-{i:02}"),
    ///         phase: if i % 3 == 0 { "Pending" } else { "Running" }.into(),
    ///     })
    ///     .collect();
    /// let by_phase = Aggregate::new().count_by(Pod::FIELDS.phase);
    /// let page = Shaper::for_tool("list_pods")
    ///     .budget(Budget::tokens(150))
    ///     .call()
    ///     .aggregate(&by_phase)
    ///     .shape_blocking(&pods)
    ///     .unwrap();
    /// assert!(page.text().contains("Running 20"), "{}", page.text());
    /// assert!(page.text().contains("Pending 10"), "{}", page.text());
    /// ```
    pub fn aggregate(mut self, aggregate: &'a Aggregate) -> Self {
        self.aggregate = Some(aggregate);
        self
    }

    /// The day the aggregate's "the last 30 days" counts back from (default: today in UTC).
    pub fn today(mut self, today: Day) -> Self {
        self.today = Some(today);
        self
    }

    /// Keep the rows in the order given (already ranked, say by the database). Pages then
    /// continue by count, so the rows must be the whole result on every call.
    pub fn keep_order(mut self) -> Self {
        self.keep_order = true;
        self
    }

    /// Pages with signed cursors: `cursor` is what the model passed back (or `None` for the
    /// first page), `query` the hash of the tool and its other arguments. Rows before the
    /// cursor's position are skipped (push [`after_keyset`](Self::after_keyset) into the
    /// database query to avoid loading them); the next cursor is signed by `codec`.
    ///
    /// A bad cursor is an error whose message says how to recover; answer it with
    /// [`Shaper::cursor_error`].
    pub fn paginate(
        mut self,
        codec: Arc<CursorCodec>,
        query: QueryHash,
        cursor: Option<&str>,
    ) -> Result<Self, CursorError> {
        if let Some(cursor) = cursor {
            let position = codec.decode(cursor, &query)?;
            self.shown_before = position.shown;
            self.skipped_before = position.skipped;
            self.walk_handle = position.handle;
            // A cursor without a key is a count of records (shown or skipped): see
            // `Resume::Offset`.
            let covered = position.covered();
            self.after = Some(match position.upstream {
                Some(upstream) => Resume::Upstream(upstream),
                None if position.keyset.is_start() => Resume::Offset(covered),
                None => Resume::Keyset(position.keyset),
            });
        }
        self.cursor = Some(Cursors::Codec { codec, query });
        Ok(self)
    }

    /// Makes the `next` cursor when records remain, from the last record this page covers:
    /// for tests that read what a page hands its cursor (`__seams::cursor::CursorWith`).
    #[cfg(any(test, feature = "test-seams"))]
    pub(crate) fn cursor_with(
        mut self,
        make: impl for<'c> Fn(Continuation<'c>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.cursor = Some(Cursors::Custom(Arc::new(make)));
        self
    }

    /// Where the page starts: the keyset to push into a database query
    /// (`WHERE (updated_at, id) < (?, ?)`, see [`Keyset::sql_predicate`]); `None` on the
    /// first page.
    ///
    /// Keyset cursors are used for records with an id in the library's order; records in the
    /// caller's order, or without an id, continue by count (`None` here, and the rows must be
    /// the whole result on every call).
    pub fn after_keyset(&self) -> Option<&Keyset> {
        match &self.after {
            Some(Resume::Keyset(keyset)) => Some(keyset),
            _ => None,
        }
    }

    /// The shaper this call belongs to.
    pub fn shaper(&self) -> &Shaper {
        &self.shaper
    }

    /// An error envelope for this tool: what happened and what to do instead.
    pub fn error(&self, what: &str, remedy: &str) -> Shaped {
        self.shaper.error(what, remedy)
    }

    /// What the page pipeline reads of the shaper and this call.
    pub(crate) fn page_settings(&self) -> PageSettings<'_> {
        let s = &*self.shaper.settings;
        PageSettings {
            tool: &s.tool,
            tokenizer: &*s.tokenizer,
            budget: self.shaper.current_budget(),
            format: s.format,
            form: self.shaper.current_structured_form(),
            channels: s.channels,
            untrusted: &s.untrusted,
            page_size: self.page_size_limit(),
            total: self.total,
            shown_before: self.shown_before,
            skipped_before: self.skipped_before,
            keep_order: self.keep_order,
            query: self.query.as_deref(),
            raw: self.raw,
            cursor: self.cursor.as_ref(),
            left_out: s.left_out,
            fetch_one: s.fetch_one.as_deref(),
            hide: self.page_hide.as_deref().unwrap_or(&s.hide),
        }
    }

    /// Shapes `source` into a page: typed rows (`&rows`), rows with what resolves their keys
    /// (`(&rows, &ctx)`: one batched call per resolver), rows in the caller's order
    /// ([`Ordered`](crate::source::Ordered)), or a configured tool's JSON (`(&projection,
    /// raw)`). Records are ranked by the rank key, ties by id (by id alone without a rank
    /// field), unless [`keep_order`](Self::keep_order) is set. The one door into the page
    /// pipeline: see [`Source`].
    pub fn shape<S: Source>(
        &self,
        source: S,
    ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
        // Not an `async fn`: the future's `Send` is its source's, declared, so a caller's
        // future holding it is `Send` whatever lifetimes the rows have.
        source.shape_in(self)
    }

    /// [`shape`](Call::shape) for synchronous callers: resolvers are polled on this thread,
    /// so they must not need a runtime of their own (a synchronous resolver returning
    /// `std::future::ready`, or one awaiting only its own work).
    pub fn shape_blocking<S: Source>(&self, source: S) -> Result<Shaped, ShapeError> {
        block_on(self.shape(source))
    }

    /// Shapes `source` like [`shape`](Call::shape); when the whole result would take more
    /// than `policy.store_when_over_budget_factor` budgets, it is stored behind a handle and
    /// the answer carries the handle, an aggregate of the whole result in the summary, and
    /// the first page; later pages of the walk state the same handle. Every key is resolved
    /// (one call per resolver), since the stored result is complete.
    ///
    /// A store that fails is not fatal: the answer is the plain page, and the failure is
    /// logged (`tracing`, target `shape`).
    pub fn shape_or_store<S, H>(
        &self,
        source: S,
        keep: crate::handle::Keep<'_, H>,
    ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send
    where
        S: super::source::Stored,
        H: crate::handle::HandleStore,
    {
        source.shape_or_store_in(self, keep)
    }

    /// Shapes `rows` with `ctx`, ordered as `order` says.
    pub(crate) async fn typed<T, C>(
        &self,
        rows: &[T],
        ctx: &C,
        order: RowOrder<'_, T>,
    ) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        let start = Instant::now();
        self.shaper.hide_check(T::PROJECTION)?;
        let page = self.page_order(rows, order, self.reach(), Ids::of::<T>());
        self.shape_page(rows, ctx, page, start).await
    }

    /// Resolves and renders the page's records, from `page_order`'s answer.
    async fn shape_page<T, C>(
        &self,
        rows: &[T],
        ctx: &C,
        (order, given, keyset): (Vec<usize>, usize, bool),
        start: Instant,
    ) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        let upstream = self.upstream_plan(rows.len())?;
        // An aggregate reads every row, so every key is resolved; the page shows its part
        // of them with the same names.
        let (names, resolvers, details) = match self.aggregate {
            None => {
                let (names, resolvers) = resolve_rows(rows, &order, ctx).await?;
                (names, resolvers, None)
            }
            Some(aggregate) => {
                // Every row, in the order given: an aggregate does not depend on the order
                // (counts by count then value), so the rows past the page are not sorted.
                let whole: Vec<usize> = (0..rows.len()).collect();
                let (names, resolvers) = resolve_rows(rows, &whole, ctx).await?;
                let details = self.aggregate_details(rows, &whole, &names, aggregate)?;
                (names, resolvers, Some(details))
            }
        };
        let page = PageInputs {
            given,
            resolvers,
            lead: None,
            details: details.as_deref(),
            handle: None,
            keyset,
            upstream,
        };
        self.typed_page(
            rows,
            &order,
            &names,
            &Layout::of(T::PROJECTION),
            page,
            start,
        )
    }

    /// Renders the page of `rows` at `order` (their keys resolved to `names`): the typed
    /// entry into the page pipeline, for plain and for stored pages alike.
    pub(crate) fn typed_page<T: ToolResult>(
        &self,
        rows: &[T],
        order: &[usize],
        names: &<T::Needs as Resolvers>::Names,
        layout: &Layout<'_>,
        page: PageInputs<'_>,
        start: Instant,
    ) -> Result<Shaped, ShapeError> {
        let source = TypedRows { rows, order, names };
        crate::page::shape(&self.page_settings(), &source, layout, page, start)
    }
}

/// The names of the keys of `rows` at `order`: one batched call per resolver.
pub(crate) async fn resolve_rows<T, C>(
    rows: &[T],
    order: &[usize],
    ctx: &C,
) -> Result<(<T::Needs as Resolvers>::Names, Vec<ResolverStats>), ShapeError>
where
    T: ToolResult,
    C: Supplies<T::Needs> + ?Sized,
{
    let mut keys = <T::Needs as Resolvers>::Keys::default();
    for &i in order {
        rows[i].collect_keys(&mut keys);
    }
    Ok(ctx.resolve_all(keys).await?)
}
