//! Handles in the pipeline: a result too large to be worth paging is stored outside the
//! transcript, the model gets a handle, an aggregate summary and the first page, and the
//! companion tool [`OpenResult`] reopens the handle with a query and returns a shaped slice.
//!
//! The store is any [`HandleStore`]: the in-process [`MemoryStore`](crate::MemoryStore) by
//! default, a shared one when several replicas serve one handle.

use crate::admit::PerChannel;
use crate::aggregate::{Aggregate, AggregateError, FieldMeta, Row};
use crate::cursor::{CursorCodec, QueryHash};
use crate::date::Day;
use crate::env::{CallEnv, Channel};
use crate::ids::IdKey;
use crate::page::{Notes, PageInputs, Records};
use crate::project::ToolResult;
use crate::query::{OpenQuery, QueryError};
use crate::rank::{KeyValue, Order};
use crate::record::{Field, FieldRole, Owned, Projection};
use crate::render::{Layout, RenderRecord, Typed};
use crate::resolve::{Needs, Supplies};
use crate::shaped::{ShapeError, Shaped};
use crate::shaper::{Call, Shaper};
use crate::store::OPEN_RESULT;
use crate::store::{Handle, HandleError, HandlePolicy, HandleStore, StoredResult};
use crate::text::{TextMode, TextSerializer};
use crate::tokens::Tokenizer;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;
use std::sync::Arc;
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

impl Call<'_> {
    /// Shapes `rows` like [`shape_with`](Call::shape_with); when the whole result would
    /// take more than `policy.store_when_over_budget_factor` budgets, it is stored behind a
    /// handle and the answer carries the handle, an aggregate of the whole result in the
    /// summary, and the first page. Every key is resolved (one call per resolver), since the
    /// stored result is complete.
    ///
    /// A store that fails is not fatal: the answer is the plain page, and the failure is
    /// logged (`tracing`, target `shape`).
    pub async fn shape_or_store<T, C, S>(
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
        let upstream = self.upstream_plan(rows.len())?;
        // A later page of a walk whose first page stored the result: the same handle, and
        // the same figures about the whole result, from the store.
        let kept = match self.walk_handle() {
            Some(handle) => match keep.store.get(keep.owner, &handle).await {
                Ok(stored) => Some((handle, stored.details.clone())),
                Err(e) => {
                    tracing::debug!(target: "shape", tool = self.shaper().tool(), error = %e, "the walk's stored result is gone; storing it again");
                    None
                }
            },
            None => None,
        };
        let layout = Layout::of(T::PROJECTION);
        let (order, given, keyset) = self.ranked_rows(rows, self.reach());
        let (details, handle) = match kept {
            Some((handle, details)) => (details, Some(handle)),
            None => {
                // The stored result is every row given, whatever the cursor, so every row is
                // ordered and every key resolved (one call per resolver).
                let (whole, _) = self.ranked_whole(rows);
                let mut keys = <T::Needs as Needs>::Keys::default();
                for &i in &whole {
                    rows[i].collect_keys(&mut keys);
                }
                let (names, _) = ctx.resolve_all(keys).await?;
                let coverage = self.coverage(rows);
                // The rendering state (`CallEnv`) is not `Sync`, so it must not live across
                // the store's await, or this future would not be `Send` (and could not serve
                // a tool in a multi-threaded server): the stored form is made in a scope of
                // its own.
                let prepared = self.with_records(rows, &whole, &names, &layout, |records| {
                    let records = records.rows.structured;
                    let tokenizer = self.shaper().current_tokenizer();
                    match self.worth_storing(records, tokenizer, keep.policy) {
                        Ok(true) => Ok(Some(self.prepare(records, T::PROJECTION, &keep, coverage))),
                        Ok(false) => Ok(None),
                        Err(message) => Err(ShapeError::Render {
                            record: T::PROJECTION.name.to_owned(),
                            message,
                        }),
                    }
                })?;
                let stored = match prepared {
                    Some(Ok(result)) => {
                        let details = result.details.clone();
                        keep.store
                            .put(keep.owner, result, keep.policy)
                            .await
                            .map(|handle| Some((details, handle)))
                            .map_err(StoreFailure::Store)
                    }
                    Some(Err(failure)) => Err(failure),
                    None => Ok(None),
                };
                match stored {
                    Ok(Some((details, handle))) => (details, Some(handle)),
                    Ok(None) => (None, None),
                    Err(StoreFailure::Aggregate(e)) => return Err(ShapeError::Aggregate(e)),
                    Err(StoreFailure::Store(e)) => {
                        tracing::warn!(target: "shape", tool = self.shaper().tool(), error = %e, "result not stored behind a handle");
                        (None, None)
                    }
                }
            }
        };

        let mut keys = <T::Needs as Needs>::Keys::default();
        for &i in &order {
            rows[i].collect_keys(&mut keys);
        }
        let (names, resolvers) = ctx.resolve_all(keys).await?;
        let page = PageInputs {
            given,
            resolvers,
            lead: None,
            details: details.as_deref(),
            handle,
            keyset,
            upstream,
        };
        self.with_records(rows, &order, &names, &layout, |records| {
            crate::page::render(&self.page_settings(), records, &layout, page, start)
        })
    }

    /// Whether the whole result exceeds the policy's number of budgets. Tokens are
    /// extrapolated from the first record's exact count over the JSON bytes of the records
    /// (serialising is 15–60× cheaper than tokenizing, so nothing else is tokenized), stopping
    /// at the first record that takes the estimate over the line.
    fn worth_storing<T: ToolResult>(
        &self,
        records: &[Typed<'_, T>],
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
    fn prepare<T: ToolResult, S: HandleStore>(
        &self,
        records: &[Typed<'_, T>],
        projection: &Projection,
        keep: &Keep<'_, S>,
        (first, whole): (u64, bool),
    ) -> Result<StoredResult, StoreFailure> {
        let mut rows: Vec<Row> = Vec::with_capacity(records.len());
        for record in records {
            let value = record
                .record
                .serialize_record(record.cx, serde_json::value::Serializer)
                .map_err(|e| {
                    StoreFailure::Store(HandleError::Unavailable {
                        reason: e.to_string(),
                    })
                })?;
            if let Value::Object(map) = value {
                rows.push(map);
            }
        }
        let mut fields = FieldMeta::from_projection(projection);
        FieldMeta::infer_values(&mut fields, &rows);
        let aggregate = keep.aggregate.cloned().unwrap_or_default();
        let result = aggregate
            .compute(&fields, &rows, keep.today.unwrap_or_else(Day::today_utc))
            .map_err(StoreFailure::Aggregate)?;
        // The page states the count; the aggregate adds what it does not, and says what it
        // counts when the rows are a part of the result.
        let details = result.details();
        let details = if whole || details.is_empty() {
            details
        } else {
            let last = first.saturating_add(rows.len().saturating_sub(1) as u64);
            format!(
                "of {} {}–{}: {details}",
                projection.plural,
                crate::envelope::thousands(first),
                crate::envelope::thousands(last)
            )
        };
        let mut stored = StoredResult::from_projection(self.shaper().tool(), projection, rows);
        stored.details = Some(details);
        Ok(stored)
    }
}

impl Shaper {
    /// [`Call::shape_or_store`] for a call with nothing set.
    pub async fn shape_or_store<T, C, S>(
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
        self.call().shape_or_store(rows, ctx, keep).await
    }
}

enum StoreFailure {
    Aggregate(AggregateError),
    Store(HandleError),
}

/// The companion tool that reopens a stored result: filter, select, sort, page, aggregate.
///
/// Register it next to the tools that store results, under [`OpenResult::NAME`], with
/// [`OpenResult::input_schema`] as its input schema; answer a call with
/// [`OpenResult::call`].
pub struct OpenResult<'a, S> {
    store: &'a S,
    codec: Arc<CursorCodec>,
    shaper: Shaper,
}

impl<'a, S: HandleStore> OpenResult<'a, S> {
    /// The tool's name.
    pub const NAME: &'static str = OPEN_RESULT;

    /// What the tool does, for its description.
    pub const DESCRIPTION: &'static str = "Reopen a result that another tool stored behind a handle: filter it \
         (equals, contains, range on its fields), keep some fields (select), sort it, page through it \
         (page_size, cursor), or aggregate it (count_by, top, recent, stats). Answers with the same \
         envelope as the tool that stored it.";

    /// The companion for `store`, signing its cursors with `codec`; pages are shaped with
    /// the defaults of [`Shaper::for_tool`] unless [`shaper`](Self::shaper) says otherwise.
    pub fn new(store: &'a S, codec: Arc<CursorCodec>) -> Self {
        OpenResult {
            store,
            codec,
            shaper: Shaper::for_tool(OPEN_RESULT),
        }
    }

    /// Budget, format and tokenizer of the pages it returns.
    pub fn shaper(mut self, shaper: Shaper) -> Self {
        self.shaper = shaper;
        self
    }

    /// The JSON Schema of the tool's input.
    pub fn input_schema() -> schemars::Schema {
        OpenQuery::input_schema()
    }

    /// Answers one call: `input` is the tool call's arguments, `owner` the principal the
    /// caller serves. Every failure is an error envelope that says how to recover. Recent
    /// counts ("opened in the last 30 days") count back from today in UTC.
    pub async fn call(&self, owner: &str, input: Value) -> Shaped {
        self.call_on(owner, input, Day::today_utc()).await
    }

    /// [`call`](Self::call), counting recent records back from `today`.
    pub async fn call_on(&self, owner: &str, input: Value, today: Day) -> Shaped {
        let query = match OpenQuery::from_value(input) {
            Ok(q) => q,
            Err(e) => {
                return self
                    .shaper
                    .error(&e.to_string(), "fix the arguments and call again");
            }
        };
        let Ok(handle) = query.handle.parse::<Handle>() else {
            return self.shaper.error(&HandleError::NotFound.to_string(), "");
        };
        let stored = match self.store.get(owner, &handle).await {
            Ok(stored) => stored,
            Err(e) => return self.shaper.error(&e.to_string(), ""),
        };
        match self.answer(&query, &stored, today) {
            Ok(shaped) => shaped,
            Err(Refusal::Query(e)) => self
                .shaper
                .error(&e.to_string(), "fix the arguments and call again"),
            Err(Refusal::Cursor(e)) => self.shaper.cursor_error(&e),
            Err(Refusal::Shape(e)) => self.shaper.error(&e.to_string(), "call again"),
        }
    }

    fn answer(
        &self,
        query: &OpenQuery,
        stored: &StoredResult,
        today: Day,
    ) -> Result<Shaped, Refusal> {
        let start = Instant::now();
        let mut fields_meta = FieldMeta::from_projection(&stored.record);
        FieldMeta::infer_values(&mut fields_meta, &stored.records);
        let valid = query.validate(&fields_meta).map_err(Refusal::Query)?;
        let matches = valid.apply(&stored.records);

        // Offsets are stable here: a stored result never changes. The cursor is still signed
        // and bound to the handle and every argument but itself.
        let mut unpaged = query.clone();
        unpaged.cursor = None;
        let query_hash = QueryHash::of(OPEN_RESULT, &unpaged).map_err(|e| {
            Refusal::Shape(ShapeError::Render {
                record: "query".to_owned(),
                message: e.to_string(),
            })
        })?;
        let call = self
            .shaper
            .call()
            .page_size(valid.page_size() as usize)
            .total(matches.len() as u64)
            .paginate(Arc::clone(&self.codec), query_hash, valid.cursor())
            .map_err(Refusal::Cursor)?;
        let offset = usize::try_from(call.covered_before())
            .unwrap_or(usize::MAX)
            .min(matches.len());
        let lead = valid
            .compute_aggregate(&stored.records, today)
            .map(|a| a.sentence_with(&stored.record.name, &stored.record.plural));

        // The slice shows the selected fields, in stored order.
        let shown = stored.record.select(
            |name| {
                valid
                    .select()
                    .is_none_or(|sel| sel.iter().any(|s| s == name))
            },
            valid.left_out(),
        );
        let order = match valid.sort() {
            Some((field, Order::Desc)) => {
                format!("sorted by {} descending", field.replace('_', " "))
            }
            Some((field, Order::Asc)) => format!("sorted by {}", field.replace('_', " ")),
            None => stored
                .record
                .order_phrase()
                .unwrap_or_else(|| "in stored order".to_owned()),
        };
        // Nested records' untrusted fields, for those whose field this slice shows.
        let nested_untrusted = stored
            .nested_untrusted
            .iter()
            .filter(|path| {
                let top = path.split('.').next().unwrap_or_default();
                shown.fields.iter().any(|f| f.name == top)
            })
            .cloned()
            .collect();
        let layout = Layout::stored(&shown, order).with_nested_untrusted(nested_untrusted);

        let page_size = valid.page_size() as usize;
        let budget = self.shaper.current_budget().max_tokens();
        let remaining = &matches[offset..];
        let reach = remaining
            .len()
            .min(page_size.saturating_add(1))
            .min(budget.saturating_add(1));
        let nonce = crate::untrusted::nonce();
        let env = |channel, counting| {
            CallEnv::new(
                &stored.tool,
                self.shaper.current_tokenizer(),
                self.shaper.untrusted_policy(),
                &nonce,
            )
            .with_pass(channel, counting)
        };
        let rows_in = |env| -> Vec<StoredRow<'_>> {
            remaining[..reach]
                .iter()
                .map(|&i| StoredRow {
                    row: &stored.records[i],
                    fields: &shown.fields,
                    env,
                })
                .collect()
        };
        let structured_env = env(Channel::Structured, true);
        let structured = rows_in(&structured_env);
        let notes = Notes::of(
            self.shaper.current_format(),
            self.shaper.untrusted_policy(),
            &layout,
            &structured,
            &stored.tool,
        );
        structured_env.take_diagnostics();
        let text_env = env(Channel::Text, false)
            .with_date_style(notes.date_style)
            .with_compact_marks(notes.compact_marks)
            .with_named_fields(notes.named_fields);
        let text = rows_in(&text_env);
        let page = PageInputs {
            given: remaining.len(),
            resolvers: Vec::new(),
            lead: lead.as_deref(),
            details: None,
            handle: None,
            keyset: false,
            upstream: None,
        };
        let records = Records {
            rows: PerChannel {
                structured: &structured,
                text: &text,
            },
            counting: &structured_env,
            notes: &notes,
            nonce: &nonce,
        };
        crate::page::render(&call.page_settings(), records, &layout, page, start)
            .map_err(Refusal::Shape)
    }
}

enum Refusal {
    Query(QueryError),
    Cursor(crate::cursor::CursorError),
    Shape(ShapeError),
}

/// A stored row, rendered like the typed record it came from.
struct StoredRow<'a> {
    row: &'a Row,
    fields: &'a [Field<Owned>],
    env: &'a CallEnv<'a>,
}

/// One stored value, in the channel being rendered.
struct StoredValue<'a> {
    value: Option<&'a Value>,
    field: &'a Field<Owned>,
    env: &'a CallEnv<'a>,
}

impl Serialize for StoredValue<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        match (self.value, self.field.kind.role()) {
            (None | Some(Value::Null), _) => s.serialize_none(),
            // Already sanitised and capped when stored: only the provenance is added here.
            (Some(Value::String(text)), FieldRole::Untrusted) => {
                crate::untrusted::serialize_untrusted(text, &self.field.name, None, self.env, s)
            }
            (Some(Value::String(text)), FieldRole::Date)
                if crate::date::iso_date(text) == Some(text.as_str()) =>
            {
                crate::view::serialize_date(text, self.env, s)
            }
            (Some(value), _) => value.serialize(s),
        }
    }
}

impl StoredRow<'_> {
    fn value(&self, i: usize) -> StoredValue<'_> {
        let field = &self.fields[i];
        StoredValue {
            value: self.row.get(&field.name),
            field,
            env: self.env,
        }
    }
}

impl RenderRecord for StoredRow<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = serde_json::Serializer::new(out);
        let mut map = ser
            .serialize_map(Some(self.fields.len()))
            .map_err(|e| e.to_string())?;
        for (i, field) in self.fields.iter().enumerate() {
            map.serialize_entry(&field.name, &self.value(i))
                .map_err(|e| e.to_string())?;
        }
        map.end().map_err(|e| e.to_string())
    }

    fn write_json_field(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String> {
        if index >= self.fields.len() {
            return Err(format!("no output field {index}"));
        }
        self.value(index)
            .serialize(&mut serde_json::Serializer::new(out))
            .map_err(|e| e.to_string())
    }

    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String> {
        if index >= self.fields.len() {
            return Err(format!("no output field {index}"));
        }
        let absent = self.fields[index].absent.as_deref();
        self.value(index)
            .serialize(TextSerializer::new(out, mode).absent(absent))
            .map_err(|e| e.to_string())
    }

    fn rank_key(&self) -> Option<KeyValue> {
        None
    }

    fn id_key(&self) -> Option<IdKey<'_>> {
        None
    }
}
