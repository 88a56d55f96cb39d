//! Storing a result behind a handle as a call shapes it ([`Call::shape_or_store`]): when the
//! whole result is worth storing, what the summary says of it, and the walk that states one
//! handle and one aggregate on every page.

use super::store::{HandlePolicy, HandleStore, StoredResult};
use crate::aggregate::{Aggregate, AggregateError};
use crate::budget::tokens::Tokenizer;
use crate::fields::date::Day;
use crate::handle::id::HandleError;
use crate::page::render::{Layout, RenderRecord};
use crate::page::{PageInputs, Records, Source, TypedRows, UseRecords};
use crate::page::{ShapeError, Shaped};
use crate::record::tool_result::ToolResult;
use crate::record::{Projection, Storage};
use crate::resolve::Supplies;
use crate::shaper::{Call, Ids, SummaryError, resolve_rows, summarise};
use std::time::Instant;

/// Where and for whom a large result is kept.
///
/// ```
/// use toolshape::handle::{HandlePolicy, Keep, MemoryStore};
///
/// let store = MemoryStore::default();
/// let policy = HandlePolicy::default();
/// let keep = Keep::new(&store, "alice", &policy); // counts the whole result, today in UTC
/// # let _ = keep;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Keep<'a, S> {
    /// The store.
    pub store: &'a S,
    /// The principal the handle is bound to (the user or session the caller serves).
    pub owner: &'a str,
    /// TTL, size cap, and how many budgets a result must exceed to be stored.
    pub policy: &'a HandlePolicy,
    /// What the summary says about the whole result; `None` counts it.
    pub aggregate: Option<&'a Aggregate>,
    /// Today, for "opened in the last 30 days"; `None` is today in UTC.
    pub today: Option<Day>,
}

impl<'a, S> Keep<'a, S> {
    /// Keep large results in `store` for `owner`, under `policy`; the summary counts the whole
    /// result.
    pub fn new(store: &'a S, owner: &'a str, policy: &'a HandlePolicy) -> Self {
        Keep {
            store,
            owner,
            policy,
            aggregate: None,
            today: None,
        }
    }

    /// What the summary says about the whole result.
    pub fn aggregate(self, aggregate: &'a Aggregate) -> Self {
        Keep {
            aggregate: Some(aggregate),
            ..self
        }
    }

    /// The day that "the last 30 days" counts back from (default: today in UTC).
    pub fn today(self, today: Day) -> Self {
        Keep {
            today: Some(today),
            ..self
        }
    }
}

/// What a page's records become when the result is stored: nothing when it is not worth
/// storing, else its stored form (the structured channel's records, serialised).
pub(crate) struct StoredForm<'c, 'k, 'a, S, St: Storage> {
    pub call: &'c Call<'a>,
    pub keep: &'k Keep<'k, S>,
    pub coverage: (u64, bool),
    /// The record description stored with the rows.
    pub projection: &'c Projection<St>,
    /// Untrusted paths inside nested records the description does not carry.
    pub nested_untrusted: Vec<String>,
}

/// What a stored form comes to: nothing when the result is not worth storing.
pub(crate) type Stored = Result<Option<Result<StoredResult, StoreFailure>>, ShapeError>;

impl<Src: Source, S: HandleStore, St: Storage> UseRecords<Src> for StoredForm<'_, '_, '_, S, St> {
    type Out = Stored;
    // Every record of the result is written: nothing shown, nothing counted.
    const COUNTS: bool = false;

    fn use_records<'r, 'e: 'r>(self, records: Records<'r, Src::Record<'e>>) -> Self::Out
    where
        Src: 'e,
    {
        let records = records.rows.structured;
        let call = self.call;
        let tokenizer = call.shaper().current_tokenizer();
        // Fields set aside are kept only in the stored result: it is stored whatever its size.
        if !call.aside.is_empty() {
            return Ok(Some(call.prepare(records, &self)));
        }
        match call.worth_storing(records, tokenizer, self.keep.policy) {
            Ok(true) => Ok(Some(call.prepare(records, &self))),
            Ok(false) => Ok(None),
            Err(message) => Err(ShapeError::Render {
                record: self.projection.name.as_ref().to_owned(),
                message,
            }),
        }
    }
}

impl Call<'_> {
    /// Shapes `rows` like [`shape`](Call::shape); when the whole result would
    /// take more than `policy.store_when_over_budget_factor` budgets, it is stored behind a
    /// handle and the answer carries the handle, an aggregate of the whole result in the
    /// summary, and the first page. Every key is resolved (one call per resolver), since the
    /// stored result is complete.
    ///
    /// A store that fails is not fatal: the answer is the plain page, and the failure is
    /// logged (`tracing`, target `shape`).
    pub(crate) async fn typed_or_store<T, C, S>(
        &self,
        rows: &[T],
        ctx: &C,
        keep: Keep<'_, S>,
    ) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
        S: HandleStore,
    {
        let start = Instant::now();
        self.shaper().hide_check(T::PROJECTION)?;
        let upstream = self.upstream_plan(rows.len())?;
        let kept = self.walk_kept(&keep).await;
        let layout = Layout::of(T::PROJECTION);
        let (order, given, keyset) = self.ranked_rows(rows, self.reach(), Ids::of::<T>());
        // A first page resolves every key of the whole result for the stored form (one call
        // per resolver) and shows its page with those names; a later page of the walk
        // resolves its own keys only.
        let (details, handle, (names, resolvers)) = match kept {
            Some((handle, details)) => (
                details,
                Some(handle),
                resolve_rows(rows, &order, ctx).await?,
            ),
            None => {
                // The stored result is every row given, whatever the cursor, so every row is
                // ordered and every key resolved.
                let (whole, _) = self.ranked_whole(rows, Ids::of::<T>());
                let resolved = resolve_rows(rows, &whole, ctx).await?;
                let coverage = self.coverage(rows);
                // The rendering state (`CallEnv`) is not `Sync`, so it must not live across
                // the store's await, or this future would not be `Send` (and could not serve
                // a tool in a multi-threaded server): the stored form is made in a scope of
                // its own.
                let source = TypedRows {
                    rows,
                    order: &whole,
                    names: &resolved.0,
                };
                let settings = self.page_settings();
                let then = StoredForm {
                    call: self,
                    keep: &keep,
                    coverage,
                    projection: T::PROJECTION,
                    nested_untrusted: Vec::new(),
                };
                let stored = crate::page::prepare(&settings, &source, &layout, then)?;
                let (handle, details) = self.put_stored(&keep, stored).await?;
                (details, handle, resolved)
            }
        };
        let page = PageInputs {
            given,
            resolvers,
            lead: None,
            details: details.as_deref(),
            handle,
            keyset,
            upstream,
        };
        self.typed_page(rows, &order, &names, &layout, page, start)
    }

    /// On a later page of a walk whose first page stored the result: its handle, and the
    /// figures about the whole result kept with it (`None` when the store has lost it: the
    /// result is stored again).
    pub(crate) async fn walk_kept<S: HandleStore>(
        &self,
        keep: &Keep<'_, S>,
    ) -> Option<(crate::handle::id::Handle, Option<String>)> {
        let handle = self.walk_handle()?;
        match keep.store.get(keep.owner, &handle).await {
            Ok(stored) => Some((handle, stored.details.clone())),
            Err(e) => {
                tracing::debug!(target: "shape", tool = self.shaper().tool(), error = %e, "the walk's stored result is gone; storing it again");
                None
            }
        }
    }

    /// Puts a stored form in the store: its handle and the figures the summary states. A
    /// store that fails is not fatal (the page goes without a handle, the failure logged);
    /// an aggregate that does not fit the records is.
    pub(crate) async fn put_stored<S: HandleStore>(
        &self,
        keep: &Keep<'_, S>,
        stored: Option<Result<StoredResult, StoreFailure>>,
    ) -> Result<(Option<crate::handle::id::Handle>, Option<String>), ShapeError> {
        let put = match stored {
            Some(Ok(result)) => {
                let details = result.details.clone();
                keep.store
                    .put(keep.owner, result, keep.policy)
                    .await
                    .map(|handle| (Some(handle), details))
                    .map_err(StoreFailure::Store)
            }
            Some(Err(failure)) => Err(failure),
            None => Ok((None, None)),
        };
        match put {
            Ok(put) => Ok(put),
            Err(StoreFailure::Aggregate(e)) => Err(ShapeError::Aggregate(e)),
            Err(StoreFailure::Store(e)) => {
                tracing::warn!(target: "shape", tool = self.shaper().tool(), error = %e, "result not stored behind a handle");
                Ok((None, None))
            }
        }
    }

    /// Whether the whole result exceeds the policy's number of budgets. Tokens are
    /// extrapolated from the first record's exact count over the JSON bytes of the records
    /// (serialising is 15–60× cheaper than tokenizing, so nothing else is tokenized), stopping
    /// at the first record that takes the estimate over the line.
    fn worth_storing<R: RenderRecord>(
        &self,
        records: &[R],
        tokenizer: &dyn Tokenizer,
        policy: &HandlePolicy,
    ) -> Result<bool, String> {
        let budget = self.shaper().current_budget().max_tokens();
        let mut tokens_per_byte: Option<f64> = None;
        let mut bytes = 0usize;
        let mut buf = Vec::new();
        for record in records {
            buf.clear();
            record.write_json(&mut buf)?;
            let per_byte = *tokens_per_byte.get_or_insert_with(|| {
                tokenizer.count(&String::from_utf8_lossy(&buf)).max(1) as f64
                    / buf.len().max(1) as f64
            });
            bytes = bytes.saturating_add(buf.len() + 1);
            // Decided as soon as the running estimate crosses the line: a result worth
            // storing is not serialised twice beyond that point.
            if policy.should_store((bytes as f64 * per_byte) as usize, budget) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The stored form of the rows given, with the aggregate's details for the summary (what
    /// part of the result they are, when not the whole: `(first, whole)`).
    fn prepare<R: RenderRecord, S: HandleStore, St: Storage>(
        &self,
        records: &[R],
        form: &StoredForm<'_, '_, '_, S, St>,
    ) -> Result<StoredResult, StoreFailure> {
        let keep = form.keep;
        let aggregate = keep.aggregate.or(self.aggregate);
        let today = keep.today.or(self.today);
        let hide = self.shaper().current_hide();
        let summary = summarise(
            records,
            form.projection,
            hide,
            aggregate,
            today,
            form.coverage,
        )
        .map_err(|e| match e {
            SummaryError::Serialise(reason) => {
                StoreFailure::Store(HandleError::Unavailable { reason })
            }
            SummaryError::Aggregate(e) => StoreFailure::Aggregate(e),
        })?;
        // A narrowed view keeps what it shows: a hidden field is not in the stored result.
        let mut stored = if hide.is_empty() {
            StoredResult::from_projection(self.shaper().tool(), form.projection, summary.rows)
        } else {
            let narrowed = form
                .projection
                .to_owned_record()
                .select(|name| !hide.iter().any(|h| h == name), hide);
            StoredResult::from_projection(self.shaper().tool(), &narrowed, summary.rows)
        };
        stored
            .nested_untrusted
            .extend(form.nested_untrusted.iter().cloned());
        stored.details = Some(summary.details);
        stored.lines = self.lines;
        stored.aside = self.aside.to_vec();
        Ok(stored)
    }
}

pub(crate) enum StoreFailure {
    Aggregate(AggregateError),
    Store(HandleError),
}
