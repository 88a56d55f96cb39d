//! The pipeline of one tool call: rank, resolve (one batched call per resolver), render each
//! record once per channel, count its tokens once, admit until the budget is full, wrap in the
//! envelope, report.
//!
//! ```
//! use toolshape::{Budget, Format, Shaper, ToolResult};
//!
//! #[derive(ToolResult)]
//! #[shape(name = "city", plural = "cities", prose = "{name}: {population}")]
//! struct City {
//!     #[shape(show)]
//!     name: String,
//!     #[shape(rank = desc)]
//!     population: u64,
//! }
//!
//! let rows = vec![
//!     City { name: "Lyon".into(), population: 522_000 },
//!     City { name: "Paris".into(), population: 2_103_000 },
//! ];
//! let shaped = Shaper::for_tool("list_cities")
//!     .budget(Budget::tokens(200))
//!     .format(Format::Prose)
//!     .shape_blocking(&rows, &())
//!     .unwrap();
//! assert_eq!(
//!     shaped.text(),
//!     "ok: 2 cities, highest population first.\nParis: 2103000\nLyon: 522000\nomitted: none.\nnext: null"
//! );
//! assert!(shaped.report().tokens.text <= 200);
//! ```

use crate::budget::Budget;
use crate::cursor::{CursorCodec, CursorError, Keyset, QueryHash};
use crate::envelope::{self, Counts, Frame, OmitReason, Omitted, Status, Words};
use crate::project::ToolResult;
use crate::rank::{KeyValue, Order};
use crate::render::{Format, Layout, RenderRecord, Renderer, Typed};
use crate::report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use crate::resolve::{Needs, ResolveError, ResolverStats, Supplies};
use crate::tokens::{Tiktoken, Tokenizer};
use crate::untrusted::UntrustedPolicy;
use crate::view::{CallEnv, Channel, Cx};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// Which channel the model reads, so which one the budget is enforced on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelPolicy {
    /// Each channel fits the budget on its own (the default: some clients show only one).
    #[default]
    Both,
    /// Only the text channel is held to the budget.
    Text,
    /// Only the structured channel is held to the budget.
    Structured,
}

/// Why a call could not be shaped.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    /// A resolver failed.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The caller's aggregate does not fit the record type.
    #[error(transparent)]
    Aggregate(#[from] crate::aggregate::AggregateError),
    /// A record's own `Serialize` implementation failed.
    #[error("could not render a {record}: {message}")]
    Render {
        /// The record noun.
        record: String,
        /// The serializer's message.
        message: String,
    },
}

/// What the next page continues after: the last record's rank key and id, and how many
/// records the pages so far have shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation<'a> {
    /// The rank key of the last record this page covers.
    pub rank: Option<KeyValue>,
    /// Its id.
    pub id: Option<&'a str>,
    /// Records shown by this page and the earlier ones.
    pub shown: u64,
    /// The rank order the records are in.
    pub order: Order,
}

type CursorFn = dyn for<'a> Fn(Continuation<'a>) -> String + Send + Sync;

/// Shapes tool results for one tool: budget, tokenizer, format, channel policy.
#[derive(Clone)]
pub struct Shaper<'a> {
    tool: String,
    budget: Budget,
    tokenizer: Arc<dyn Tokenizer>,
    format: Format,
    channels: ChannelPolicy,
    page_size: Option<usize>,
    total: Option<u64>,
    shown_before: u64,
    query: Option<String>,
    raw: Option<&'a str>,
    untrusted: UntrustedPolicy,
    keep_order: bool,
    cursor: Option<Arc<CursorFn>>,
    after: Option<Keyset>,
}

impl std::fmt::Debug for Shaper<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shaper")
            .field("tool", &self.tool)
            .field("budget", &self.budget)
            .field("tokenizer", &self.tokenizer.name())
            .field("format", &self.format)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl<'a> Shaper<'a> {
    /// A shaper for `tool` with the defaults: 2,000 tokens of o200k_base, prose, both channels.
    pub fn for_tool(tool: impl Into<String>) -> Self {
        Shaper {
            tool: tool.into(),
            budget: Budget::default(),
            tokenizer: Arc::new(Tiktoken::o200k_base()),
            format: Format::default(),
            channels: ChannelPolicy::default(),
            page_size: None,
            total: None,
            shown_before: 0,
            query: None,
            raw: None,
            untrusted: UntrustedPolicy::default(),
            keep_order: false,
            cursor: None,
            after: None,
        }
    }

    /// The token budget, envelope included.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The tokenizer the budget is counted in.
    pub fn tokenizer(mut self, tokenizer: impl Tokenizer + 'static) -> Self {
        self.tokenizer = Arc::new(tokenizer);
        self
    }

    /// A shared tokenizer.
    pub fn shared_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// The text channel's format.
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Which channel the budget is enforced on.
    pub fn channels(mut self, channels: ChannelPolicy) -> Self {
        self.channels = channels;
        self
    }

    /// At most this many records per page, whatever the budget.
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

    /// The untrusted-text policy.
    pub fn untrusted(mut self, policy: UntrustedPolicy) -> Self {
        self.untrusted = policy;
        self
    }

    /// Keep the rows in the order given (already ranked, say by the database).
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
    /// [`cursor_error`](Self::cursor_error).
    pub fn paginate(
        mut self,
        codec: Arc<CursorCodec>,
        query: QueryHash,
        cursor: Option<&str>,
    ) -> Result<Self, CursorError> {
        if let Some(cursor) = cursor {
            let position = codec.decode(cursor, &query)?;
            self.shown_before = position.shown;
            self.after = Some(position.keyset);
        }
        self.cursor = Some(Arc::new(move |c: Continuation<'_>| {
            let keyset = Keyset {
                rank: c.rank,
                id: c.id.map(str::to_owned),
                order: c.order,
            };
            codec.encode(&keyset, c.shown, &query)
        }));
        Ok(self)
    }

    /// Where the page starts: the keyset to push into a database query
    /// (`WHERE (updated_at, id) < (?, ?)`, see [`Keyset::sql_predicate`]); `None` on the
    /// first page.
    pub fn after_keyset(&self) -> Option<&Keyset> {
        self.after.as_ref()
    }

    /// Indices of the rows after the cursor's position: what earlier pages covered is
    /// skipped (a no-op when the database already did).
    pub(crate) fn after_cursor<T: ToolResult>(&self, rows: &[T]) -> Vec<usize> {
        match &self.after {
            Some(keyset) => (0..rows.len())
                .filter(|&i| keyset.admits(rows[i].rank_key().as_ref(), rows[i].id_text()))
                .collect(),
            None => (0..rows.len()).collect(),
        }
    }

    /// The error envelope for a cursor that was refused: what happened and how to recover.
    pub fn cursor_error(&self, error: &CursorError) -> Shaped {
        self.error(&error.to_string(), "")
    }

    /// Makes the `next` cursor when records remain, from the last record this page covers.
    pub fn cursor_with(
        mut self,
        make: impl for<'c> Fn(Continuation<'c>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.cursor = Some(Arc::new(make));
        self
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The budget.
    pub fn current_budget(&self) -> Budget {
        self.budget
    }

    /// The tokenizer.
    pub fn current_tokenizer(&self) -> &dyn Tokenizer {
        &*self.tokenizer
    }

    /// The most attacker-controlled tokens one call of this tool can show for records of
    /// type `T`: from the projection's caps, the budget and the page size.
    pub fn attacker_bound<T: ToolResult>(&self) -> crate::untrusted::AttackerBound {
        let bound = crate::untrusted::attacker_bound(T::PROJECTION, self.budget.max_tokens());
        match self.page_size {
            Some(page) => bound.with_max_records(page),
            None => bound,
        }
    }

    /// The untrusted-text policy.
    pub fn untrusted_policy(&self) -> &UntrustedPolicy {
        &self.untrusted
    }

    /// The text format.
    pub fn current_format(&self) -> Format {
        self.format
    }

    /// Shapes `rows` whose records need no resolver.
    pub async fn shape<T>(&self, rows: &[T]) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        (): Supplies<T::Needs>,
    {
        self.shape_with(rows, &()).await
    }

    /// Shapes `rows`, resolving keys through `ctx` (one batched call per resolver).
    pub async fn shape_with<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        self.shape_ordered(rows, ctx, |a: &T, b: &T| a.rank_cmp(b))
            .await
    }

    /// Shapes `rows` ranked by the caller's comparator (ties keep the given order).
    pub async fn shape_ordered<T, C, F>(
        &self,
        rows: &[T],
        ctx: &C,
        cmp: F,
    ) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
        F: Fn(&T, &T) -> Ordering,
    {
        let start = Instant::now();
        let mut order = self.after_cursor(rows);
        let given = order.len();
        // Only the records a page can reach need ranking, resolving and rendering: every
        // record costs at least one token, so no more than `budget` of them fit, and no more
        // than `page_size`; one more is looked at to know where the cut is.
        let reach = given
            .min(self.budget.max_tokens().saturating_add(1))
            .min(self.page_size.map_or(usize::MAX, |p| p.saturating_add(1)));
        if !self.keep_order {
            // Ties keep the given order, so the result is deterministic.
            let total = |a: &usize, b: &usize| cmp(&rows[*a], &rows[*b]).then(a.cmp(b));
            if reach < order.len() && reach > 0 {
                order.select_nth_unstable_by(reach - 1, total);
                order.truncate(reach);
            }
            order.sort_by(total);
        }
        order.truncate(reach);
        let mut keys = <T::Needs as Needs>::Keys::default();
        for &i in &order {
            rows[i].collect_keys(&mut keys);
        }
        let (names, resolvers) = ctx.resolve_all(keys).await?;
        let layout = Layout::of(T::PROJECTION);
        let page = PageInputs {
            given,
            resolvers,
            lead: None,
            handle: None,
        };
        self.with_records(rows, &order, &names, |records, env| {
            self.render_page(records, &layout, env, page, start)
        })
    }

    /// Runs `f` over the records at `order`, projected in a fresh per-call state (tokenizer,
    /// policies, counters, a nonce for delimiters) with the page's resolved `names`.
    pub(crate) fn with_records<T: ToolResult, R>(
        &self,
        rows: &[T],
        order: &[usize],
        names: &<T::Needs as Needs>::Names,
        f: impl FnOnce(&[Typed<'_, T>], &CallEnv<'_>) -> R,
    ) -> R {
        let nonce = crate::untrusted::nonce();
        let env = CallEnv::new(&self.tool, &*self.tokenizer, &self.untrusted, &nonce);
        let cx = Cx::<T::Needs>::new(names, &env);
        let records: Vec<Typed<'_, T>> = order
            .iter()
            .map(|&i| Typed {
                record: &rows[i],
                cx: &cx,
            })
            .collect();
        f(&records, &env)
    }

    /// [`shape_with`](Shaper::shape_with) for synchronous callers: resolvers are polled on
    /// this thread, so they must not need a runtime of their own (a synchronous resolver
    /// returning `std::future::ready`, or one awaiting only its own work).
    pub fn shape_blocking<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        block_on(self.shape_with(rows, ctx))
    }

    /// An error envelope for this tool: what happened and what to do instead.
    pub fn error(&self, what: &str, remedy: &str) -> Shaped {
        let frame = Frame::error(what, remedy);
        let structured = format!(
            "{}{}",
            envelope::json_head(&frame, false),
            envelope::json_tail(&frame)
        );
        let text = match self.format {
            Format::Json => structured.clone(),
            Format::Prose | Format::Table => {
                format!(
                    "{}{}",
                    envelope::text_head(&frame, None),
                    envelope::text_tail(&frame, "records", &self.tool)
                )
            }
        };
        let tokens = ChannelTokens {
            text: self.tokenizer.count(&text),
            structured: self.tokenizer.count(&structured),
        };
        let report = Report {
            tool: self.tool.clone(),
            tokenizer: self.tokenizer.name().to_owned(),
            budget: self.budget.max_tokens(),
            raw: None,
            tokens,
            records: RecordCounts {
                total: 0,
                given: 0,
                shown: 0,
                omitted: 0,
            },
            cut: None,
            resolvers: Vec::new(),
            diagnostics: Default::default(),
            tokenized: 0,
            over_budget: tokens.text.max(tokens.structured) > self.budget.max_tokens(),
            duration_us: 0,
        };
        report.emit();
        Shaped {
            frame,
            text,
            structured,
            report,
        }
    }

    /// The core of every call: admit `records` (ranked, only those a page can reach) until
    /// the budget is full, wrap them in the envelope, report.
    pub(crate) fn render_page<R: RenderRecord>(
        &self,
        records: &[R],
        layout: &Layout<'_>,
        env: &CallEnv<'_>,
        page: PageInputs<'_>,
        start: Instant,
    ) -> Result<Shaped, ShapeError> {
        let renderer = Renderer::new(layout);
        let tok = &*self.tokenizer;
        let budget = self.budget.max_tokens();
        let given = page.given;
        let total = self
            .total
            .unwrap_or(self.shown_before + given as u64)
            .max(self.shown_before + given as u64);
        let words = Words {
            name: layout.name,
            plural: layout.plural,
            order: layout.order.as_deref().filter(|_| !self.keep_order),
            query: self.query.as_deref(),
            lead: page.lead,
            reopen_with: OPEN_RESULT,
        };
        let skipped: Vec<String> = layout.skipped.iter().map(|s| (*s).to_owned()).collect();
        let render_err = |message: String| ShapeError::Render {
            record: layout.name.to_owned(),
            message,
        };

        // The text channel needs its own rendering unless it is the same JSON.
        let text_differs = self.format != Format::Json
            || layout.has_untrusted()
                && self.untrusted.provenance != crate::untrusted::Provenance::Off;
        let check_text = self.channels != ChannelPolicy::Structured;
        let check_structured = self.channels != ChannelPolicy::Text;
        // Dates in the text channel: `Feb 11` with the year stated once, when every date in
        // reach shares it.
        // Facts stated once in the text head: where untrusted text comes from, the year.
        let mut notes: Vec<String> = Vec::new();
        if self.format != Format::Json {
            notes.extend(crate::untrusted::note_line(env, &layout.untrusted_names()));
            if let Some(year) = shared_year(records, layout, env) {
                env.set_date_style(crate::view::DateStyle::MonthDay { year });
                notes.push(format!("dates are in {year}"));
            }
        }
        let note = (!notes.is_empty()).then(|| notes.join("; "));

        let frame_for = |shown: usize, cut: Option<(usize, OmitReason)>| -> Frame {
            let covered = self.shown_before + shown as u64;
            let omitted_count = total.saturating_sub(covered);
            let too_large = u64::from(matches!(cut, Some((_, OmitReason::RecordTooLarge))));
            let reason = if omitted_count > 0 {
                cut.map(|(_, r)| r).or(Some(OmitReason::PageSize))
            } else {
                None
            };
            let next = if omitted_count > 0 {
                self.cursor.as_ref().and_then(|make| {
                    // Continue after the last record this page covers: the last shown, or a
                    // record too large to ever fit (so the next page skips it).
                    let last = match cut {
                        Some((index, OmitReason::RecordTooLarge)) => Some(index),
                        _ if shown > 0 => Some(shown - 1),
                        _ => None,
                    }?;
                    let record = records.get(last)?;
                    let covered = covered + too_large;
                    (covered < total).then(|| {
                        make(Continuation {
                            rank: record.rank_key(),
                            id: record.id_text(),
                            shown: covered,
                            order: layout.rank_order,
                        })
                    })
                })
            } else {
                None
            };
            Frame::for_page(
                Counts {
                    shown: shown as u64,
                    shown_before: self.shown_before,
                    total,
                },
                words,
                Omitted {
                    count: omitted_count,
                    reason,
                    fields: skipped.clone(),
                    too_large,
                    handle: page.handle.map(str::to_owned),
                },
                next,
            )
        };
        let frame_tokens = |frame: &Frame, shown: usize| -> (usize, usize) {
            let s = tok.count(&envelope::json_head(frame, shown > 0))
                + tok.count(&envelope::json_tail(frame));
            let t = if text_differs {
                tok.count(&self.text_head(frame, &renderer, shown > 0, note.as_deref()))
                    + tok.count(&self.text_tail(frame, layout))
            } else {
                s
            };
            (s, t)
        };

        // Reserve the envelope as it would read with every record omitted and a cursor.
        let reserve_frame = {
            let mut f = frame_for(0, Some((0, OmitReason::ResultBudget)));
            if f.next.is_none()
                && let (Some(make), Some(first)) = (&self.cursor, records.first())
            {
                f.next = Some(make(Continuation {
                    rank: first.rank_key(),
                    id: first.id_text(),
                    shown: total,
                    order: layout.rank_order,
                }));
            }
            f
        };
        let (reserve_s, reserve_t) = frame_tokens(&reserve_frame, 1);

        let mut seg_s: Vec<String> = Vec::new();
        let mut seg_t: Vec<String> = Vec::new();
        let mut tok_s: Vec<usize> = Vec::new();
        let mut tok_t: Vec<usize> = Vec::new();
        let (mut sum_s, mut sum_t) = (0usize, 0usize);
        let mut cut: Option<(usize, OmitReason)> = None;
        let mut tokenized = 0usize;
        for (position, record) in records.iter().enumerate() {
            if self.page_size.is_some_and(|p| position >= p) {
                cut = Some((position, OmitReason::PageSize));
                break;
            }
            env.set_pass(Channel::Structured, false);
            let s = renderer
                .segment(record, position, Format::Json)
                .map_err(render_err)?;
            let ts = tok.count(&s);
            let (t, tt) = if text_differs {
                env.set_pass(Channel::Text, false);
                let t = renderer
                    .segment(record, position, self.format)
                    .map_err(render_err)?;
                let tt = tok.count(&t);
                (Some(t), tt)
            } else {
                (None, ts)
            };
            tokenized += 1;
            let fits_s = !check_structured || reserve_s + sum_s + ts <= budget;
            let fits_t = !check_text || reserve_t + sum_t + tt <= budget;
            if !(fits_s && fits_t) {
                let alone_s = !check_structured || reserve_s + ts <= budget;
                let alone_t = !check_text || reserve_t + tt <= budget;
                let reason = if alone_s && alone_t {
                    OmitReason::ResultBudget
                } else {
                    OmitReason::RecordTooLarge
                };
                cut = Some((position, reason));
                break;
            }
            sum_s += ts;
            sum_t += tt;
            tok_s.push(ts);
            tok_t.push(tt);
            seg_t.push(t.unwrap_or_else(|| s.clone()));
            seg_s.push(s);
        }
        if cut.is_none() && records.len() < given {
            // Only reachable records were ranked; the next one would not have fit.
            cut = Some((records.len(), OmitReason::ResultBudget));
        }

        // The real envelope; drop records from the end until it fits (rare: the reserve is
        // pessimistic, but a summary's numbers can tokenize differently).
        let (frame, head_tail_s, head_tail_t) = loop {
            let shown = seg_s.len();
            let frame = frame_for(shown, cut);
            let (fs, ft) = frame_tokens(&frame, shown);
            let over_s = check_structured && fs + sum_s > budget;
            let over_t = check_text && ft + sum_t > budget;
            if !(over_s || over_t) || shown == 0 {
                break (frame, fs, ft);
            }
            seg_s.pop();
            seg_t.pop();
            sum_s -= tok_s.pop().unwrap_or(0);
            sum_t -= tok_t.pop().unwrap_or(0);
            cut = Some((shown - 1, OmitReason::ResultBudget));
        };
        let shown = seg_s.len();

        // One counting pass over the records shown: diagnostics count each record once.
        env.set_pass(Channel::Structured, true);
        for record in &records[..shown] {
            record.write_json(&mut Vec::new()).map_err(render_err)?;
        }
        env.set_pass(Channel::Structured, false);

        let mut structured = envelope::json_head(&frame, shown > 0);
        for s in &seg_s {
            structured.push_str(s);
        }
        structured.push_str(&envelope::json_tail(&frame));
        let text = if text_differs {
            let mut text = self.text_head(&frame, &renderer, shown > 0, note.as_deref());
            for t in &seg_t {
                text.push_str(t);
            }
            text.push_str(&self.text_tail(&frame, layout));
            text
        } else {
            structured.clone()
        };

        let report = Report {
            tool: self.tool.clone(),
            tokenizer: tok.name().to_owned(),
            budget,
            raw: self.raw.map(|raw| RawSize::measure(raw, tok)),
            tokens: ChannelTokens {
                text: head_tail_t + sum_t,
                structured: head_tail_s + sum_s,
            },
            records: RecordCounts {
                total,
                given,
                shown,
                omitted: frame.omitted.count,
            },
            cut: cut
                .filter(|_| frame.status == Status::Partial)
                .map(|(index, reason)| Cut { index, reason }),
            resolvers: page.resolvers,
            diagnostics: env.diagnostics(),
            tokenized,
            over_budget: (check_structured && head_tail_s + sum_s > budget)
                || (check_text && head_tail_t + sum_t > budget),
            duration_us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        };
        report.emit();
        Ok(Shaped {
            frame,
            text,
            structured,
            report,
        })
    }

    fn text_head(
        &self,
        frame: &Frame,
        renderer: &Renderer<'_>,
        has_records: bool,
        note: Option<&str>,
    ) -> String {
        match self.format {
            Format::Json => envelope::json_head(frame, has_records),
            Format::Prose => envelope::text_head(frame, note),
            Format::Table => {
                let mut head = envelope::text_head(frame, note);
                head.push_str(&renderer.table_header());
                head
            }
        }
    }

    fn text_tail(&self, frame: &Frame, layout: &Layout<'_>) -> String {
        match self.format {
            Format::Json => envelope::json_tail(frame),
            Format::Prose | Format::Table => envelope::text_tail(frame, layout.plural, &self.tool),
        }
    }
}

/// The year every parsed date of the records shares, if there is at least one date.
fn shared_year<R: RenderRecord>(
    records: &[R],
    layout: &Layout<'_>,
    env: &CallEnv<'_>,
) -> Option<u16> {
    let dates: Vec<usize> = layout.date_fields().collect();
    if dates.is_empty() {
        return None;
    }
    env.set_pass(Channel::Structured, false);
    let mut year = None;
    let mut buf = String::new();
    for record in records {
        for &field in &dates {
            buf.clear();
            record
                .write_field(field, &mut buf, crate::text::TextMode::Prose)
                .ok()?;
            if crate::date::iso_date(&buf).is_none() {
                continue; // null or unparsed: written as given either way
            }
            let y = crate::view::date_year(&buf)?;
            match year {
                None => year = Some(y),
                Some(seen) if seen != y => return None,
                Some(_) => {}
            }
        }
    }
    year
}

/// What a page knows beyond its records.
pub(crate) struct PageInputs<'a> {
    /// Records given to the call (the reachable ones may be fewer).
    pub given: usize,
    /// One entry per resolver.
    pub resolvers: Vec<ResolverStats>,
    /// A sentence to lead the summary with.
    pub lead: Option<&'a str>,
    /// The handle the whole result is stored under.
    pub handle: Option<&'a str>,
}

/// The name of the companion tool that reopens stored results.
pub const OPEN_RESULT: &str = "open_result";

/// A shaped tool result: the text channel, the structured channel and the report.
#[derive(Debug, Clone)]
pub struct Shaped {
    frame: Frame,
    text: String,
    structured: String,
    report: Report,
}

impl Shaped {
    /// What a text-reading client shows the model.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The envelope as JSON text (MCP `structuredContent`).
    pub fn structured_json(&self) -> &str {
        &self.structured
    }

    /// The envelope as a JSON value.
    pub fn structured(&self) -> serde_json::Value {
        serde_json::from_str(&self.structured).unwrap_or(serde_json::Value::Null)
    }

    /// The status.
    pub fn status(&self) -> Status {
        self.frame.status
    }

    /// The summary sentence.
    pub fn summary(&self) -> &str {
        &self.frame.summary
    }

    /// The cursor for the next page.
    pub fn next(&self) -> Option<&str> {
        self.frame.next.as_deref()
    }

    /// The envelope's frame (everything but the records).
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The call's report.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Whether this is an error envelope.
    pub fn is_error(&self) -> bool {
        self.frame.status == Status::Error
    }
}

/// Runs a future to completion on this thread.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    use std::sync::Arc as StdArc;
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: StdArc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(StdArc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}
