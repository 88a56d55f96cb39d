//! The configuration of one tool's shaping ([`Shaper`]): built once, shared by every call; and
//! its shorthands that shape rows in one call. These reach [`Call`](crate::Call) through
//! [`Shaper::call`] (defined beside `Call`) and name no type of it, so this room imports nothing
//! above it; they stay beside the `Shaper` so a compiler error names them `Shaper::…`.

use super::blocking::block_on;
use crate::budget::Budget;
use crate::budget::ClientLimits;
use crate::budget::channel::ChannelPolicy;
use crate::budget::tokens::{Bpe, Tokenizer};
use crate::cursor::CursorError;
use crate::page::envelope::LeftOut;
use crate::page::render::{Format, StructuredForm};
use crate::page::{ShapeError, Shaped};
use crate::record::tool_result::ToolResult;
use crate::untrusted::UntrustedPolicy;
use std::sync::Arc;

/// How one tool's results are shaped: budget, tokenizer, text format, channel policy, page
/// size, untrusted-text policy. Built once (in code or from a [`ShapeConfig`](crate::config::ShapeConfig)),
/// `'static`, and cheap to clone: the settings are shared.
#[derive(Clone)]
pub struct Shaper {
    pub(super) settings: Arc<Settings>,
}

#[derive(Clone)]
pub(super) struct Settings {
    pub(super) tool: String,
    pub(super) budget: Budget,
    pub(super) tokenizer: Arc<dyn Tokenizer>,
    pub(super) format: Format,
    /// `None`: the form for the channel profile ([`StructuredForm::for_profile`]).
    pub(super) form: Option<StructuredForm>,
    pub(super) channels: ChannelPolicy,
    /// Where the client cuts a tool's output; the budget is lowered to it.
    pub(super) client_limits: ClientLimits,
    pub(super) page_size: Option<usize>,
    pub(super) untrusted: UntrustedPolicy,
    /// On which pages the text channel names the fields this view leaves out.
    pub(super) left_out: LeftOut,
    /// The tool that shows one record by its id, named where a record is skipped.
    pub(super) fetch_one: Option<String>,
    /// Output fields this tool's view leaves out (configuration narrowing a view).
    pub(super) hide: Vec<String>,
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
                hide: Vec::new(),
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
    /// its model reads and its own cuts ([`clients::reader`](crate::budget::clients::reader)), which
    /// lower the budget, so
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
        self.reading(crate::budget::clients::reader(
            Some(name),
            &Default::default(),
        ))
    }

    /// Answers for a client that reads as `reader` says (its profile and its own cuts).
    pub(crate) fn reading(self, reader: crate::budget::clients::Reader) -> Self {
        self.set(|s| {
            s.channels = reader.profile;
            s.client_limits = reader.limits;
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

    /// Narrows the view: the output fields named are left out of every answer (and of what
    /// a stored result keeps), named in `omitted.fields` as fields this view leaves out.
    /// Configuration may narrow a view, never widen it: shaping records whose type has no
    /// output of one of these names is [`ShapeError::Hide`], and a name the type already
    /// skips is refused the same way ([`hide_check`](Self::hide_check) says so at start-up).
    ///
    /// ```
    /// use toolshape::{Shaper, ToolResult};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "ticket", plural = "tickets")]
    /// struct Ticket {
    ///     #[shape(id)] id: u32,
    ///     #[shape(untrusted)] body: String,
    ///     #[shape(skip)] token: String,
    /// }
    ///
    /// let rows = vec![Ticket { id: 7, body: "Card declined".into(), token: "x".into() }];
    /// let page = Shaper::for_tool("search").hide(["body"]).shape_blocking(&rows).unwrap();
    /// assert_eq!(page.structured()["data"], serde_json::json!([{ "id": 7 }]));
    /// assert_eq!(page.structured()["omitted"]["fields"], serde_json::json!(["token", "body"]));
    /// let wider = Shaper::for_tool("search").hide(["token"]).shape_blocking(&rows).unwrap_err();
    /// assert_eq!(
    ///     wider.to_string(),
    ///     "search hides `token`, which the ticket view already leaves out: configuration may \
    ///      narrow a view, never widen it; the fields it shows are: id, body"
    /// );
    /// ```
    pub fn hide<I, S>(self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let fields: Vec<String> = fields.into_iter().map(Into::into).collect();
        self.set(|s| s.hide = fields)
    }

    /// The output fields this view hides.
    pub fn current_hide(&self) -> &[String] {
        &self.settings.hide
    }

    /// The JSON Schema of the envelope this shaper answers with records of `T`:
    /// [`schema::envelope`](crate::schema::envelope) without the fields it [`hide`](Self::hide)s,
    /// in either record form, nor among the fields named untrusted.
    ///
    /// ```
    /// use toolshape::{Shaper, ToolResult};
    ///
    /// #[derive(ToolResult)]
    /// struct Ticket {
    ///     #[shape(id)] id: u32,
    ///     #[shape(untrusted)] body: String,
    /// }
    ///
    /// let schema = Shaper::for_tool("search").hide(["body"]).envelope_schema::<Ticket>().to_value();
    /// assert_eq!(schema["properties"]["fields"]["const"], serde_json::json!(["id"]));
    /// assert_eq!(schema["else"]["properties"]["data"]["items"]["required"], serde_json::json!(["id"]));
    /// let whole = Shaper::for_tool("search").envelope_schema::<Ticket>();
    /// assert_eq!(whole, toolshape::schema::envelope::<Ticket>());
    /// ```
    pub fn envelope_schema<T: ToolResult>(&self) -> schemars::Schema {
        crate::schema::envelope_hiding::<T>(&self.settings.hide)
    }

    /// Whether every field this shaper hides is one `projection` shows: an error naming each
    /// one that is not (a field the record type skips, or has not).
    pub fn hide_check<S: crate::record::Storage>(
        &self,
        projection: &crate::record::Projection<S>,
    ) -> Result<(), ShapeError> {
        hide_check(&self.settings.tool, &self.settings.hide, projection)
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

    /// [`Call::shape`](crate::Call::shape) for a call with nothing set: shapes `source` (typed rows, rows with
    /// what resolves their keys, rows in the caller's order, or a configured tool's JSON:
    /// see [`Source`](crate::source::Source)).
    pub fn shape<S: crate::source::Source>(
        &self,
        source: S,
    ) -> impl Future<Output = Result<Shaped, ShapeError>> + Send {
        let call = self.call();
        async move { call.shape(source).await }
    }

    /// [`shape`](Shaper::shape) for synchronous callers: resolvers are polled on this
    /// thread, so they must not need a runtime of their own (a synchronous resolver
    /// returning `std::future::ready`, or one awaiting only its own work).
    pub fn shape_blocking<S: crate::source::Source>(
        &self,
        source: S,
    ) -> Result<Shaped, ShapeError> {
        block_on(self.shape(source))
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
    /// assert!(shaped.report().tokens.most() <= 40);
    /// assert!(!shaped.summary().contains('\u{202e}'));
    /// assert!(shaped.summary().starts_with("unknown field"), "{}", shaped.summary());
    /// assert!(shaped.summary().ends_with("call again"), "{}", shaped.summary());
    /// assert!(!shaped.report().over_budget);
    /// ```
    pub fn error(&self, what: &str, remedy: &str) -> Shaped {
        crate::page::error_page(&self.call().page_settings().errors(), what, remedy)
    }

    /// An error envelope that quotes `message`, a tool's own error text (outsiders' text:
    /// sanitised and defused as records' values are, marked `«…»`; only when the budget is
    /// short, cut in its middle, its beginning and its end kept and the cut marked
    /// `… [cut: 3,310 characters] …`), after `what`: `read_file failed: «ENOENT: no such file
    /// or directory, open '/srv/data/missing.txt'»`.
    ///
    /// ```
    /// use toolshape::Shaper;
    ///
    /// let answer = Shaper::for_tool("read_file").tool_error(
    ///     "read_file failed",
    ///     "ENOENT: no such file or directory, open '/srv/data/reports/2026/november/missing.txt'",
    ///     "",
    /// );
    /// assert_eq!(
    ///     answer.summary(),
    ///     "read_file failed: «ENOENT: no such file or directory, open '/srv/data/reports/2026/november/missing.txt'»"
    /// );
    /// ```
    pub fn tool_error(&self, what: &str, message: &str, remedy: &str) -> Shaped {
        crate::page::error_page_quoting(
            &self.call().page_settings().errors(),
            what,
            message,
            remedy,
        )
    }
}

/// Whether `hide` names only fields `projection` shows.
pub(crate) fn hide_check<S: crate::record::Storage>(
    tool: &str,
    hide: &[String],
    projection: &crate::record::Projection<S>,
) -> Result<(), ShapeError> {
    let shown: Vec<&str> = projection.output_names().collect();
    let skipped = projection.skipped_names();
    let mut problems = Vec::new();
    for name in hide {
        if shown.contains(&name.as_str()) {
            continue;
        }
        let name = crate::untrusted::echo::clean(name);
        if skipped.contains(&name) {
            problems.push(format!(
                "`{name}`, which the {} view already leaves out",
                projection.name.as_ref()
            ));
        } else {
            problems.push(format!(
                "`{name}`, which the {} view does not have",
                projection.name.as_ref()
            ));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(ShapeError::Hide(format!(
        "{tool} hides {}: configuration may narrow a view, never widen it; the fields it \
         shows are: {}",
        problems.join(" and "),
        shown.join(", ")
    )))
}
