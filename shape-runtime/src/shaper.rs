//! How one tool's results are shaped ([`Shaper`]: budget, tokenizer, format, channels, page
//! size, untrusted-text policy; built once, cheap to clone and share) and one call of it
//! ([`Call`]: where the rows stand in the whole result, the cursor, the raw payload). A call
//! ranks its rows, resolves keys (one batched call per resolver), and hands the page's
//! reach to the page pipeline (`page`).
//!
//! As tower keeps a `Layer` apart from `call(req)`, the configuration here never changes
//! per call: [`Shaper::call`] starts a request, and the shorthand [`Shaper::shape_with`] is
//! a call with nothing set.
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
//!     .shape_blocking(&rows)
//!     .unwrap();
//! assert_eq!(
//!     shaped.text(),
//!     "ok: 2 cities, highest population first.\nParis: 2103000\nLyon: 522000\nomitted: none.\nnext: null"
//! );
//! assert!(shaped.report().tokens.text <= 200);
//! ```

use crate::budget::Budget;
use crate::budget::ClientLimits;
use crate::channel::ChannelPolicy;
use crate::cursor::{
    Continuation, CursorCodec, CursorError, Cursors, Keyset, MAX_UPSTREAM_BYTES, QueryHash,
    UpstreamPosition,
};
use crate::page::envelope::LeftOut;
use crate::page::render::{Format, Layout, StructuredForm};
use crate::page::{PageInputs, PageSettings, TypedRows, UpstreamPlan};
use crate::page::{ShapeError, Shaped};
use crate::project::ToolResult;
use crate::reference::Handle;
use crate::resolve::{Needs, Supplies};
use crate::tokens::{Bpe, Tokenizer};
use crate::untrusted::UntrustedPolicy;
use std::cmp::Ordering;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// How one tool's results are shaped: budget, tokenizer, text format, channel policy, page
/// size, untrusted-text policy. Built once (in code or from a [`ShapeConfig`](crate::config::ShapeConfig)),
/// `'static`, and cheap to clone: the settings are shared.
#[derive(Clone)]
pub struct Shaper {
    settings: Arc<Settings>,
}

#[derive(Clone)]
struct Settings {
    tool: String,
    budget: Budget,
    tokenizer: Arc<dyn Tokenizer>,
    format: Format,
    /// `None`: the form for the channel profile ([`StructuredForm::for_profile`]).
    form: Option<StructuredForm>,
    channels: ChannelPolicy,
    /// Where the client cuts a tool's output; the budget is lowered to it.
    client_limits: ClientLimits,
    page_size: Option<usize>,
    untrusted: UntrustedPolicy,
    /// On which pages the text channel names the fields this view leaves out.
    left_out: LeftOut,
    /// The tool that shows one record by its id, named where a record is skipped.
    fetch_one: Option<String>,
}

impl std::fmt::Debug for Shaper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.settings;
        f.debug_struct("Shaper")
            .field("tool", &s.tool)
            .field("budget", &s.budget)
            .field("tokenizer", &s.tokenizer.name())
            .field("format", &s.format)
            .field("form", &s.form)
            .field("channels", &s.channels)
            .field("page_size", &s.page_size)
            .finish_non_exhaustive()
    }
}

impl Shaper {
    /// A shaper for `tool` with the defaults: 2,000 tokens of o200k_base, prose, both channels.
    pub fn for_tool(tool: impl Into<String>) -> Self {
        Shaper {
            settings: Arc::new(Settings {
                tool: tool.into(),
                budget: Budget::default(),
                tokenizer: Arc::new(Bpe::o200k_base()),
                format: Format::default(),
                form: None,
                channels: ChannelPolicy::default(),
                client_limits: ClientLimits::NONE,
                page_size: None,
                untrusted: UntrustedPolicy::default(),
                left_out: LeftOut::default(),
                fetch_one: None,
            }),
        }
    }

    fn set(mut self, f: impl FnOnce(&mut Settings)) -> Self {
        f(Arc::make_mut(&mut self.settings));
        self
    }

    /// The token budget, envelope included.
    pub fn budget(self, budget: Budget) -> Self {
        self.set(|s| s.budget = budget)
    }

    /// The tokenizer the budget is counted in.
    pub fn tokenizer(self, tokenizer: impl Tokenizer + 'static) -> Self {
        self.shared_tokenizer(Arc::new(tokenizer))
    }

    /// A shared tokenizer.
    pub fn shared_tokenizer(self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.set(|s| s.tokenizer = tokenizer)
    }

    /// The text channel's format.
    pub fn format(self, format: Format) -> Self {
        self.set(|s| s.format = format)
    }

    /// How the records of a JSON envelope are written ([`StructuredForm`]): objects or a
    /// field list and rows. It applies to the structured channel and to a text channel in
    /// [`Format::Json`]. Left unset, the form follows the channel profile
    /// ([`StructuredForm::for_profile`]: rows where the model reads only the structured
    /// channel, objects otherwise); [`mcp::output_schema`](crate::mcp::output_schema)
    /// describes both forms, so the form can change per client without a new schema.
    pub fn structured_form(self, form: StructuredForm) -> Self {
        self.set(|s| s.form = Some(form))
    }

    /// The channel profile: which channel the model reads, so which one the budget is
    /// enforced on and what an MCP answer carries. For a profile per MCP session, set it on
    /// a clone of a shared shaper (`shaper.clone().channels(profile)`: the settings are
    /// copied once, a few fields).
    pub fn channels(self, channels: ChannelPolicy) -> Self {
        self.set(|s| s.channels = channels)
    }

    /// Answers for the MCP client that sent `name` as `clientInfo.name`: the channel profile
    /// its model reads ([`clients::profile_for`](crate::clients::profile_for)) and its own
    /// cuts ([`clients::limits_for`](crate::clients::limits_for)), which lower the budget, so
    /// the client never truncates an answer behind the model's back. Set on a clone of a
    /// shared shaper, per session.
    ///
    /// ```
    /// use toolshape::{Budget, ChannelPolicy, Shaper};
    ///
    /// let shaper = Shaper::for_tool("search").budget(Budget::tokens(8_000));
    /// let codex = shaper.clone().client("codex-mcp-client");
    /// assert_eq!(codex.current_channels(), ChannelPolicy::Structured);
    /// assert_eq!(codex.current_budget().max_bytes(), Some(10 * 1024));
    /// assert_eq!(codex.current_budget().max_lines(), Some(256));
    /// assert_eq!(shaper.client("someone").current_budget(), Budget::tokens(8_000));
    /// ```
    pub fn client(self, name: &str) -> Self {
        let (profile, limits) = (
            crate::clients::profile_for(name),
            crate::clients::limits_for(name),
        );
        self.set(|s| {
            s.channels = profile;
            s.client_limits = limits;
        })
    }

    /// Where the client cuts a tool's output, when it is not one
    /// [`client`](Self::client) knows: the budget is lowered to these.
    pub fn client_limits(self, limits: ClientLimits) -> Self {
        self.set(|s| s.client_limits = limits)
    }

    /// At most this many records per page, whatever the budget.
    pub fn page_size(self, page_size: usize) -> Self {
        self.set(|s| s.page_size = Some(page_size.max(1)))
    }

    /// The untrusted-text policy.
    pub fn untrusted(self, policy: UntrustedPolicy) -> Self {
        self.set(|s| s.untrusted = policy)
    }

    /// On which pages the text channel names the fields this view leaves out (`this view
    /// leaves out body, node_id`): [`LeftOut::FirstPage`] unless set. The JSON envelope's
    /// `omitted.fields` names them on every page.
    pub fn left_out(self, left_out: LeftOut) -> Self {
        self.set(|s| s.left_out = left_out)
    }

    /// The tool that shows one record by its id (`get_issue`): a page that skips a record too
    /// large for any page of its own names it as the way to see that record. Without one,
    /// the page says what budget the record needs (and, for a stored result, that
    /// `open_result` shows it).
    pub fn fetch_one(self, tool: impl Into<String>) -> Self {
        let tool = tool.into();
        self.set(|s| s.fetch_one = Some(tool))
    }

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
        }
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.settings.tool
    }

    /// The budget answers are held to: the one set, lowered to the client's limits.
    pub fn current_budget(&self) -> Budget {
        self.settings.budget.within(self.settings.client_limits)
    }

    /// The tokenizer.
    pub fn current_tokenizer(&self) -> &dyn Tokenizer {
        &*self.settings.tokenizer
    }

    /// The untrusted-text policy.
    pub fn untrusted_policy(&self) -> &UntrustedPolicy {
        &self.settings.untrusted
    }

    /// The text format.
    pub fn current_format(&self) -> Format {
        self.settings.format
    }

    /// How a JSON envelope's records are written.
    pub fn current_structured_form(&self) -> StructuredForm {
        let s = &self.settings;
        s.form
            .unwrap_or_else(|| StructuredForm::for_profile(s.channels))
    }

    /// The channel policy.
    pub fn current_channels(&self) -> ChannelPolicy {
        self.settings.channels
    }

    /// The page size, if one is set.
    pub fn current_page_size(&self) -> Option<usize> {
        self.settings.page_size
    }

    /// The most attacker-controlled tokens one call of this tool can show for records of
    /// type `T`: from the projection's caps, the budget and the page size.
    pub fn attacker_bound<T: ToolResult>(&self) -> crate::untrusted::AttackerBound {
        let bound =
            crate::untrusted::attacker_bound(T::PROJECTION, self.current_budget().max_tokens());
        match self.settings.page_size {
            Some(page) => bound.with_max_records(page),
            None => bound,
        }
    }

    /// Shapes `rows` whose records need no resolver: a [`call`](Self::call) with nothing set.
    pub async fn shape<T>(&self, rows: &[T]) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        (): Supplies<T::Needs>,
    {
        self.call().shape_with(rows, &()).await
    }

    /// Shapes `rows`, resolving keys through `ctx`: a [`call`](Self::call) with nothing set.
    pub async fn shape_with<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        self.call().shape_with(rows, ctx).await
    }

    /// Shapes `rows` ranked by the caller's comparator: a [`call`](Self::call) with nothing
    /// set.
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
        self.call().shape_ordered(rows, ctx, cmp).await
    }

    /// [`shape`](Shaper::shape) for synchronous callers.
    pub fn shape_blocking<T>(&self, rows: &[T]) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        (): Supplies<T::Needs>,
    {
        self.shape_blocking_with(rows, &())
    }

    /// [`shape_with`](Shaper::shape_with) for synchronous callers: resolvers are polled on
    /// this thread, so they must not need a runtime of their own (a synchronous resolver
    /// returning `std::future::ready`, or one awaiting only its own work).
    pub fn shape_blocking_with<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        block_on(self.shape_with(rows, ctx))
    }

    /// The error envelope for a cursor that was refused: what happened and how to recover.
    pub fn cursor_error(&self, error: &CursorError) -> Shaped {
        self.error(&error.to_string(), "")
    }

    /// An error envelope for this tool: what happened and what to do instead.
    ///
    /// Both parts are cleaned as echoed text is (invisible characters removed, each quoted
    /// piece cut to 40 characters), and held to the budget on every channel a model may read
    /// an error on. When the whole message does not fit, it is cut by priority, each cut
    /// marked `…`: what happened keeps its start (at least its first two words) and gives
    /// way from its end first, the remedy staying whole; then the remedy gives way from its
    /// end; then the two words. When not even the bare envelope fits, the report says the
    /// budget was too small for any answer (`over_budget`).
    ///
    /// ```
    /// use toolshape::{Budget, Shaper};
    ///
    /// let shaper = Shaper::for_tool("search").budget(Budget::tokens(40));
    /// let key = format!("\u{202e}{}", "k".repeat(20_000));
    /// let shaped = shaper.error(&format!("unknown field `{key}`"), "fix the arguments and call again");
    /// assert!(shaped.report().tokens.text <= 40 && shaped.report().tokens.structured <= 40);
    /// assert!(!shaped.summary().contains('\u{202e}'));
    /// assert!(shaped.summary().starts_with("unknown field"), "{}", shaped.summary());
    /// assert!(shaped.summary().ends_with("call again"), "{}", shaped.summary());
    /// assert!(!shaped.report().over_budget);
    /// ```
    pub fn error(&self, what: &str, remedy: &str) -> Shaped {
        crate::page::error_page(&self.call().page_settings().errors(), what, remedy)
    }
}

/// Where a page resumes, from the cursor the model passed back.
#[derive(Debug, Clone, PartialEq)]
enum Resume {
    /// After this rank key and id: records are in the library's `(rank, id)` order and have
    /// ids, so a record inserted or deleted between calls neither repeats nor hides another.
    Keyset(Keyset),
    /// After this many records of the ordered rows: the caller's order (`keep_order`,
    /// [`Shaper::shape_ordered`]) or records without an id, where no key says where a record
    /// stands. The rows must be the whole result on every call.
    Offset(u64),
    /// In an upstream that pages itself: the upstream page to fetch and how many of its
    /// records to skip.
    Upstream(UpstreamPosition),
}

/// The upstream pages a call's rows are, as the tool declared them ([`Call::upstream`]).
#[derive(Debug, Clone, PartialEq)]
struct UpstreamRows {
    /// Each page's continuation (`None` for the upstream's first page) and how many rows it
    /// gave; `None` for the last page declared: the rest of the rows.
    pages: Vec<(Option<String>, Option<usize>)>,
    /// The upstream's continuation after the last page; `None` when it was the last.
    next: Option<String>,
}

/// How a call orders its rows.
enum RowOrder<'f, T> {
    /// By the rank key, ties by id; by id alone without a rank.
    Ranked,
    /// By the caller's comparator, ties in the given order.
    Custom(&'f dyn Fn(&T, &T) -> Ordering),
    /// As given.
    Given,
}

/// One call of a tool: the rows' place in the whole result (total, earlier pages, cursor),
/// what was asked, the raw payload. Made by [`Shaper::call`]; the shaper's settings are
/// shared, not copied.
#[derive(Clone)]
pub struct Call<'a> {
    shaper: Shaper,
    page_size: Option<usize>,
    total: Option<u64>,
    shown_before: u64,
    /// Records earlier pages skipped as too large for any page of their own (from the cursor).
    skipped_before: u64,
    /// The handle the walk's first page stored the whole result under (from the cursor).
    walk_handle: Option<Handle>,
    query: Option<String>,
    raw: Option<&'a str>,
    keep_order: bool,
    cursor: Option<Cursors>,
    after: Option<Resume>,
    upstream: Option<UpstreamRows>,
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

    /// Which upstream page to fetch, and how many of its records earlier answers showed:
    /// the upstream's first page on a first call (or one without a cursor). Call it after
    /// [`paginate`](Self::paginate), fetch that page whole, and declare it with
    /// [`upstream`](Self::upstream); the call skips the records already shown.
    ///
    /// See [`upstream`](Self::upstream) for the whole loop.
    pub fn upstream_position(&self) -> UpstreamPosition {
        match &self.after {
            Some(Resume::Upstream(at)) => at.clone(),
            _ => UpstreamPosition::start(),
        }
    }

    /// The rows are one whole page of an upstream that pages itself (a REST API with a
    /// `Link: rel="next"` header, a page token, an offset), in the upstream's order: `page`
    /// is the continuation that page was fetched with (as
    /// [`upstream_position`](Self::upstream_position) named it; `None` for the first page),
    /// `next` the upstream's continuation after it (`None` on its last page).
    ///
    /// The answer shows what fits from the position the cursor names; its `next` cursor
    /// carries the upstream page and the place inside it, so one upstream page shaped over
    /// several budgets continues exactly, then moves on to `next`. Until the upstream's last
    /// page the total is unknown, and the summary says so ("30 issues shown; more
    /// available") rather than stating a number; set [`total`](Self::total) when the
    /// upstream gives one. Rows keep the upstream's order. Continuations must be at most
    /// [`MAX_UPSTREAM_BYTES`] long; they come back signed, so a tool fetches only
    /// continuations its upstream issued.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    /// use toolshape::{Budget, Shaper, ToolResult};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "issue", plural = "issues", prose = "#{number} {title}")]
    /// struct Issue {
    ///     #[shape(show)]
    ///     number: u64,
    ///     #[shape(show)]
    ///     title: String,
    /// }
    ///
    /// /// An upstream serving pages of 4 by page number, with no total.
    /// fn fetch(page: Option<&str>) -> (Vec<Issue>, Option<String>) {
    ///     let n: u64 = page.and_then(|p| p.parse().ok()).unwrap_or(1);
    ///     let rows = (1..=10u64)
    ///         .skip(((n - 1) * 4) as usize)
    ///         .take(4)
    ///         .map(|number| Issue { number, title: format!("issue {number}") })
    ///         .collect();
    ///     (rows, (n * 4 < 10).then(|| (n + 1).to_string()))
    /// }
    ///
    /// let codec = Arc::new(CursorCodec::new(CursorKeys::new(b"a key of sixteen bytes or more")?));
    /// let query = QueryHash::of("list_issues", &serde_json::json!({"repo": "o/r"}))?;
    /// let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(200));
    /// let (mut cursor, mut pages) = (None::<String>, Vec::new());
    /// loop {
    ///     // Decode the cursor, fetch the upstream page it names, shape, answer.
    ///     let call = shaper.call().paginate(Arc::clone(&codec), query, cursor.as_deref())?;
    ///     let at = call.upstream_position();
    ///     let (rows, next) = fetch(at.page.as_deref());
    ///     let shaped = call.upstream(at.page.as_deref(), next).shape_blocking(&rows)?;
    ///     pages.push(shaped.summary().to_owned());
    ///     match shaped.next() {
    ///         Some(next) => cursor = Some(next.to_owned()),
    ///         None => break,
    ///     }
    /// }
    /// assert!(pages[0].contains("shown; more available"), "{}", pages[0]);
    /// assert!(pages.last().is_some_and(|s| s.contains("of 10")), "{pages:?}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upstream(mut self, page: Option<&str>, next: Option<String>) -> Self {
        self.upstream = Some(UpstreamRows {
            pages: vec![(page.map(str::to_owned), None)],
            next,
        });
        self
    }

    /// The rows are several consecutive upstream pages, concatenated in order: each page's
    /// continuation (`None` for the upstream's first page) and how many rows it gave; `next`
    /// is the upstream's continuation after the last (`None` when it was the upstream's
    /// last). The first page is the one [`upstream_position`](Self::upstream_position)
    /// named. Fetch a second page when the first has few records left, so one answer can
    /// span the boundary; otherwise as [`upstream`](Self::upstream).
    pub fn upstream_pages<'p>(
        mut self,
        pages: impl IntoIterator<Item = (Option<&'p str>, usize)>,
        next: Option<String>,
    ) -> Self {
        self.upstream = Some(UpstreamRows {
            pages: pages
                .into_iter()
                .map(|(page, len)| (page.map(str::to_owned), Some(len)))
                .collect(),
            next,
        });
        self
    }

    /// The upstream pages this call's `rows` rows are, checked against them and the cursor;
    /// `None` when the rows are not from an upstream that pages itself.
    pub(crate) fn upstream_plan(
        &self,
        rows: usize,
    ) -> Result<Option<UpstreamPlan<'_>>, ShapeError> {
        let fail = |message: String| Err(ShapeError::Upstream(message));
        let Some(upstream) = &self.upstream else {
            return match &self.after {
                Some(Resume::Upstream(_)) => fail(
                    "the cursor continues a page of the upstream, but the rows were not \
                     declared as one: fetch the page `Call::upstream_position` names and \
                     declare it with `Call::upstream`"
                        .to_owned(),
                ),
                _ => Ok(None),
            };
        };
        let mut pages = Vec::with_capacity(upstream.pages.len());
        let mut declared = 0usize;
        for (page, len) in &upstream.pages {
            let len = len.unwrap_or(rows.saturating_sub(declared));
            declared = declared.saturating_add(len);
            pages.push((page.as_deref(), len));
        }
        if declared != rows {
            return fail(format!(
                "the upstream pages declared hold {declared} rows but {rows} were given; \
                 declare each page with the number of rows it gave"
            ));
        }
        let longest = pages
            .iter()
            .filter_map(|(page, _)| *page)
            .chain(upstream.next.as_deref())
            .map(str::len)
            .max()
            .unwrap_or(0);
        if longest > MAX_UPSTREAM_BYTES {
            return fail(format!(
                "an upstream continuation is {longest} bytes and a cursor carries at most \
                 {MAX_UPSTREAM_BYTES}: pass the page number, offset or token rather than a \
                 whole URL, and rebuild the URL from the query"
            ));
        }
        let skip = match &self.after {
            None => 0,
            Some(Resume::Upstream(at)) => {
                let first = pages.first().and_then(|(page, _)| *page);
                if first != at.page.as_deref() {
                    return fail(format!(
                        "the cursor continues upstream page {:?} but the rows start with page \
                         {first:?}: fetch the page `Call::upstream_position` names",
                        at.page
                    ));
                }
                usize::try_from(at.skip).unwrap_or(usize::MAX).min(rows)
            }
            Some(Resume::Keyset(_) | Resume::Offset(_)) => {
                return fail(
                    "the cursor was not issued for upstream paging (the tool pages \
                     differently now); call the tool again without a cursor"
                        .to_owned(),
                );
            }
        };
        Ok(Some(UpstreamPlan {
            pages,
            next: upstream.next.as_deref(),
            skip,
        }))
    }

    /// Makes the `next` cursor when records remain, from the last record this page covers.
    pub fn cursor_with(
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

    fn page_size_limit(&self) -> Option<usize> {
        self.page_size.or(self.shaper.settings.page_size)
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
        }
    }

    /// Indices of the rows this page can start from, in page order: what earlier pages
    /// covered is skipped (a no-op when the database already did), and at most `reach` are
    /// ordered. Returns them with how many records remain from this position in all (the
    /// page's `given`) and whether the next cursor is a keyset (else a count).
    fn page_order<T: ToolResult>(
        &self,
        rows: &[T],
        order: RowOrder<'_, T>,
        reach: usize,
    ) -> (Vec<usize>, usize, bool) {
        // An upstream's rows keep its order; the cursor says how many of its page to skip.
        let upstream = self.upstream_plan(rows.len()).ok().flatten();
        let order = if self.keep_order || upstream.is_some() {
            RowOrder::Given
        } else {
            order
        };
        let keyset = matches!(order, RowOrder::Ranked) && T::PROJECTION.id.is_some();
        let mut indices: Vec<usize> = match &self.after {
            Some(Resume::Keyset(k)) if keyset => (0..rows.len())
                .filter(|&i| k.admits(rows[i].rank_key().as_ref(), rows[i].id_key()))
                .collect(),
            _ => (0..rows.len()).collect(),
        };
        let skip = match (&upstream, &self.after) {
            (Some(plan), _) => plan.skip,
            (None, Some(Resume::Offset(n))) if !keyset => usize::try_from(*n).unwrap_or(usize::MAX),
            _ => 0,
        };
        let given = indices.len().saturating_sub(skip);
        let upto = skip.saturating_add(reach).min(indices.len());
        // Rank-then-truncate: only the records up to the page's reach are sorted.
        match order {
            RowOrder::Ranked => crate::rank::top_k(&mut indices, upto, |a, b| {
                let (x, y) = (&rows[*a], &rows[*b]);
                x.rank_cmp(y)
                    .then_with(|| x.id_key().cmp(&y.id_key()))
                    .then(a.cmp(b))
            }),
            RowOrder::Custom(f) => crate::rank::top_k(&mut indices, upto, |a, b| {
                f(&rows[*a], &rows[*b]).then(a.cmp(b))
            }),
            RowOrder::Given => indices.truncate(upto),
        }
        indices.drain(..skip.min(indices.len()));
        (indices, given, keyset)
    }

    /// Records the earlier pages covered, shown or skipped (from the cursor).
    pub(crate) fn covered_before(&self) -> u64 {
        self.shown_before.saturating_add(self.skipped_before)
    }

    /// The handle the walk's first page stored the whole result under, from the cursor.
    pub(crate) fn walk_handle(&self) -> Option<Handle> {
        self.walk_handle
    }

    /// All the rows in ranked order (or as given), whatever the cursor: what a stored result
    /// holds.
    pub(crate) fn ranked_whole<T: ToolResult>(&self, rows: &[T]) -> (Vec<usize>, bool) {
        let whole = Call {
            after: None,
            ..self.clone()
        };
        let (order, _, keyset) = whole.page_order(rows, RowOrder::Ranked, usize::MAX);
        (order, keyset)
    }

    /// What part of the whole result `rows` are: the place of the first (1-based), and
    /// whether they are all of it. Rows after a keyset cursor that none of the earlier
    /// records are among are the rest of the result, not the whole; rows paged by count are
    /// the whole (as the count needs); an upstream page is the part of it the cursor names.
    pub(crate) fn coverage<T: ToolResult>(&self, rows: &[T]) -> (u64, bool) {
        let covered = self.shown_before.saturating_add(self.skipped_before);
        let first = match &self.after {
            None | Some(Resume::Offset(_)) => 1,
            Some(Resume::Keyset(k)) => {
                let earlier = rows
                    .iter()
                    .any(|r| !k.admits(r.rank_key().as_ref(), r.id_key()));
                if earlier {
                    1
                } else {
                    covered.saturating_add(1)
                }
            }
            Some(Resume::Upstream(at)) => covered.saturating_sub(at.skip).saturating_add(1),
        };
        let last = first.saturating_sub(1).saturating_add(rows.len() as u64);
        let more_upstream = self.upstream.as_ref().is_some_and(|u| u.next.is_some());
        let more = more_upstream || self.total.is_some_and(|t| last < t);
        (first, first == 1 && !more)
    }

    /// The rows in ranked order (or as given with `keep_order`) after the cursor, at most
    /// `reach` of them; see `page_order`.
    pub(crate) fn ranked_rows<T: ToolResult>(
        &self,
        rows: &[T],
        reach: usize,
    ) -> (Vec<usize>, usize, bool) {
        self.page_order(rows, RowOrder::Ranked, reach)
    }

    /// How many ranked records a page can reach: every record costs at least one token, so
    /// no more than `budget` of them fit, and no more than `page_size`; one more is looked at
    /// to know where the cut is. Only these need ranking, resolving and rendering.
    pub(crate) fn reach(&self) -> usize {
        self.page_settings().reach()
    }

    /// Shapes `rows` whose records need no resolver.
    pub async fn shape<T>(&self, rows: &[T]) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        (): Supplies<T::Needs>,
    {
        self.shape_with(rows, &()).await
    }

    /// Shapes `rows`, resolving keys through `ctx` (one batched call per resolver). Records
    /// are ranked by the rank key, ties by id (by id alone without a rank field), unless
    /// [`keep_order`](Self::keep_order) is set.
    pub async fn shape_with<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        let start = Instant::now();
        let page = self.page_order(rows, RowOrder::Ranked, self.reach());
        self.shape_page(rows, ctx, page, start).await
    }

    /// Shapes `rows` ranked by the caller's comparator (ties keep the given order). Pages
    /// continue by count, so the rows must be the whole result on every call.
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
        let page = self.page_order(rows, RowOrder::Custom(&cmp), self.reach());
        self.shape_page(rows, ctx, page, start).await
    }

    /// [`shape`](Call::shape) for synchronous callers.
    pub fn shape_blocking<T>(&self, rows: &[T]) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        (): Supplies<T::Needs>,
    {
        self.shape_blocking_with(rows, &())
    }

    /// [`shape_with`](Call::shape_with) for synchronous callers (see
    /// [`Shaper::shape_blocking_with`]).
    pub fn shape_blocking_with<T, C>(&self, rows: &[T], ctx: &C) -> Result<Shaped, ShapeError>
    where
        T: ToolResult,
        C: Supplies<T::Needs> + ?Sized,
    {
        block_on(self.shape_with(rows, ctx))
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
            details: None,
            handle: None,
            keyset,
            upstream,
        };
        let source = TypedRows {
            rows,
            order: &order,
            names: &names,
        };
        crate::page::shape(&self.page_settings(), &source, &layout, page, start)
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
