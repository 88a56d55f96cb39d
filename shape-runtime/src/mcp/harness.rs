//! The harness ([`Harness`]): every `tools/call` of a server shaped by configuration.

use crate::budget::tokens::Tokenizer;
use crate::config::{ConfigError, ShapeConfig};
use crate::configured::{Inferred, JsonProjection};
use crate::cursor::{
    CursorCodec, CursorError, CursorKeys, CursorSetupError, CursorStore, QueryHash,
};
use crate::handle::id::OPEN_RESULT;
use crate::handle::{HandlePolicy, HandleStore, Keep, MemoryStore, OpenResult};
use crate::page::Shaped;
use crate::shaper::{Call, Shaper};
use crate::untrusted::redact::{Redacted, Redactor};
#[allow(deprecated)] // SetLevelRequestParams: forwarded as it is
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CancelledNotificationParam, CompleteRequestParams, CompleteResult, ContentBlock,
    CustomNotification, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    ToolsCapability, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The `_meta` key an answer shaped by this library carries: the harness passes such an
/// answer through untouched.
pub const SHAPED_META_KEY: &str = "io.toolshape/shaped";

/// The `_meta` key of an answer from which redaction took something out: its counts,
/// `{"secrets": 2, "emails": 0, "phones": 0}` ([`Redaction`](crate::untrusted::Redaction)).
pub(crate) const REDACTED_META_KEY: &str = "io.toolshape/redacted";

/// The argument a shaped tool's next page is asked for with.
pub const CURSOR_ARGUMENT: &str = "cursor";

/// The cap in tokens of each value's text in records nobody described, unless configured.
pub const DEFAULT_MAX_TOKENS: u32 = 200;

/// An answer nobody described of fewer bytes than this passes as given, every key shown: the
/// rules ([`Rules`](crate::configured::Rules)) would save less than saying what they did and
/// naming the handle costs (about 50 tokens).
const TIDY_FROM_BYTES: usize = 2_048;

/// A layer over any rmcp server through which every `tools/call` is shaped, by tool name, with the budgets and projections of a [`ShapeConfig`], without
/// the tool's author opting in. "Enforce it in the layer that dispatches tool calls, so a new
/// tool inherits budgets, markers and cursors."
///
/// What each answer becomes:
///
/// | the tool answers | the model reads |
/// |---|---|
/// | a shaped result (a `Shaped` already) | it, untouched |
/// | JSON (`structuredContent`, or a text block that parses as JSON) | its records (the tool's configured projection, else every key of the records the result holds, their text as outsiders' text), ranked and cut on record boundaries within the budget; the whole result behind a handle when anything was cut |
/// | plain text | its lines as records, cut on a line boundary (a long line in parts at token boundaries), outsiders' text; the whole text behind a handle when anything was cut |
/// | an error (`isError`) | an error envelope within the budget, what happened first |
/// | images, audio, resource links | passed through, after the text (their size in the report) |
///
/// A cut answer says how to go on in the same sentence: `next` is a cursor the same tool
/// takes back (`cursor`, added to its input schema when it has none of its own); later pages
/// come from the stored result without calling the tool again, and `open_result` (registered
/// beside the tools) reopens, filters and aggregates it. `tools/list` gets each tool's
/// `outputSchema` (the envelope), a size hint, and the per-client profile. Each call's report
/// is a `tracing` event (target `shape`). A cursor in this layer's form that it did not write,
/// on a tool that takes a `cursor` of its own, is the tool's (a server shaped by this library
/// behind this one, as a proxy in front of a proxy): passed on as it is.
///
/// ```no_run
/// # use rmcp::{ServerHandler, ServiceExt};
/// # #[derive(Clone)] struct MyServer;
/// # impl ServerHandler for MyServer {}
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolshape::{config::ShapeConfig, mcp};
///
/// let config = ShapeConfig::from_path("shape.toml")?;
/// let service = mcp::Harness::new(MyServer, config)?
///     .serve(mcp::guarded(rmcp::transport::stdio()))
///     .await?;
/// service.waiting().await?;
/// # Ok(()) }
/// ```
///
/// Serve it where the server was served.
pub struct Harness<H, S = MemoryStore> {
    inner: H,
    state: Arc<State<S>>,
}

impl<H: Clone, S> Clone for Harness<H, S> {
    fn clone(&self) -> Self {
        Harness {
            inner: self.inner.clone(),
            state: Arc::clone(&self.state),
        }
    }
}

struct State<S> {
    /// The configuration calls are shaped by: replaced whole by [`Harness::reload`].
    config: std::sync::RwLock<Arc<ShapeConfig>>,
    store: S,
    codec: Arc<CursorCodec>,
    owner: String,
    /// Whether each tool's input schema has a `cursor` of its own (from `tools/list`).
    own_cursor: Mutex<BTreeMap<String, bool>>,
    /// The names of the arguments the server's tools take (from `tools/list`): a link or
    /// node id under one of them is never set aside.
    arguments: Mutex<Arc<std::collections::BTreeSet<String>>>,
    /// What the configuration decides for each tool, worked out once: at start for the tools
    /// it lists and `open_result`, at the first listing or call for a server's others.
    plans: Mutex<BTreeMap<String, Arc<ToolPlan>>>,
}

/// What the configuration decides for one tool, once: its shaper before any client's
/// profile (the one step a call still takes, [`ShapeConfig::for_client`]), what is kept when
/// an answer is cut, how an answer nobody described is read, and its configured projection.
struct ToolPlan {
    /// The configuration it was made from (a call is shaped by one configuration, even
    /// when another is loaded meanwhile).
    config: Arc<ShapeConfig>,
    shaper: Shaper,
    policy: HandlePolicy,
    inferred: Inferred,
    configured: Option<JsonProjection>,
    /// What is redacted from its answers.
    redact: crate::untrusted::Redaction,
}

impl ToolPlan {
    fn new(config: &Arc<ShapeConfig>, tool: &str, shown: &str) -> Result<Self, ConfigError> {
        let settings = config.tool_or_defaults(tool);
        Ok(ToolPlan {
            config: Arc::clone(config),
            shaper: config.shaper_for_any_client(shown)?,
            // Anything cut is stored: the tool is not called again for a later page.
            policy: settings.handles.unwrap_or(HandlePolicy {
                store_when_over_budget_factor: 1.0,
                ..HandlePolicy::default()
            }),
            inferred: Inferred {
                trusted: settings.trusted.unwrap_or_default(),
                max_tokens: Some(settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
                rules: settings.rules.unwrap_or_default(),
                arguments: Default::default(),
            },
            configured: config.json_projection(tool),
            redact: settings.redact.unwrap_or_default(),
        })
    }
}

/// The plans of the tools `config` lists, and of `open_result`.
fn planned(config: &Arc<ShapeConfig>) -> BTreeMap<String, Arc<ToolPlan>> {
    config
        .tools
        .keys()
        .map(String::as_str)
        .chain([OPEN_RESULT])
        .filter_map(|tool| {
            let plan = ToolPlan::new(config, tool, tool).ok()?;
            Some((tool.to_owned(), Arc::new(plan)))
        })
        .collect()
}

/// Why a harness could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// No random cursor key could be drawn.
    #[error(transparent)]
    Keys(#[from] CursorSetupError),
    /// The configuration is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl<H: ServerHandler> Harness<H, MemoryStore> {
    /// `inner` behind the harness, shaped by `config`; results kept in memory, cursors
    /// signed with a random key. Replicas behind one address share a key
    /// ([`cursor_keys`](Self::cursor_keys)), a [`store`](Self::store) and a
    /// [`cursor_store`](Self::cursor_store).
    pub fn new(inner: H, config: ShapeConfig) -> Result<Self, HarnessError> {
        config.check()?;
        let config = Arc::new(config);
        Ok(Harness {
            inner,
            state: Arc::new(State {
                plans: Mutex::new(planned(&config)),
                config: std::sync::RwLock::new(config),
                store: MemoryStore::default(),
                codec: Arc::new(CursorCodec::new(CursorKeys::random()?)),
                owner: "mcp".to_owned(),
                own_cursor: Mutex::new(BTreeMap::new()),
                arguments: Mutex::default(),
            }),
        })
    }
}

impl<H: ServerHandler, S: HandleStore> Harness<H, S> {
    /// Keeps stored results in `store` (a shared one, such as Redis, for replicas).
    pub fn store<T: HandleStore>(self, store: T) -> Harness<H, T> {
        let config = self.config();
        let Harness { inner, state } = self;
        Harness {
            inner,
            state: Arc::new(State {
                plans: Mutex::new(planned(&config)),
                config: std::sync::RwLock::new(config),
                store,
                codec: Arc::clone(&state.codec),
                owner: state.owner.clone(),
                own_cursor: Mutex::new(BTreeMap::new()),
                arguments: Mutex::default(),
            }),
        }
    }

    /// Signs cursors with `keys` (the same on every replica).
    pub fn cursor_keys(self, keys: CursorKeys) -> Self {
        self.with_state(|s| s.codec = Arc::new(CursorCodec::clone(&s.codec).rekeyed(keys)))
    }

    /// Holds in `store` the cursor positions a page holds rather than writes into its cursor
    /// (a shared one, such as `RedisCursorStore`, for replicas: else they are held in this
    /// process's memory, and a later page asked of another replica reads "no longer held").
    pub fn cursor_store(self, store: impl CursorStore + 'static) -> Self {
        self.with_state(|s| s.codec = Arc::new(CursorCodec::clone(&s.codec).held_in(store)))
    }

    /// The principal stored results are kept for when a request names none (default `mcp`:
    /// one client a process). Over HTTP behind an `Access` layer (or any layer that sets a
    /// [`Principal`](super::Principal)), each request's principal owns what its calls store
    /// and the cursors they hand out.
    pub fn owner(self, owner: impl Into<String>) -> Self {
        let owner = owner.into();
        self.with_state(|s| s.owner = owner)
    }

    fn with_state(mut self, f: impl FnOnce(&mut State<S>)) -> Self {
        match Arc::get_mut(&mut self.state) {
            Some(state) => f(state),
            None => unreachable!("a harness is configured before it is cloned"),
        }
        self
    }

    /// The server behind the harness.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// The configuration calls are shaped by now.
    fn config(&self) -> Arc<ShapeConfig> {
        let config = match self.state.config.read() {
            Ok(config) => config,
            Err(poisoned) => poisoned.into_inner(),
        };
        Arc::clone(&config)
    }

    /// Shapes every call from now on by `config` (a configuration file edited while the
    /// server runs), checked first: a configuration that cannot be used is an error and the
    /// running one is kept. A call in flight finishes with the configuration it began with;
    /// a walk begun before goes on from its stored result, its later pages shaped by the new
    /// one. Tell clients the tools changed (their output schemas follow the configuration).
    ///
    /// ```
    /// use toolshape::config::ShapeConfig;
    /// use toolshape::mcp::Harness;
    /// # #[derive(Clone)] struct Server;
    /// # impl rmcp::ServerHandler for Server {}
    ///
    /// let harness = Harness::new(Server, ShapeConfig::default()).unwrap();
    /// let edited = ShapeConfig::from_toml_str("[tools.search]\nbudget = 800").unwrap();
    /// harness.reload(edited).unwrap();
    /// ```
    pub fn reload(&self, config: ShapeConfig) -> Result<(), HarnessError> {
        config.check()?;
        let config = Arc::new(config);
        let plans = planned(&config);
        // The configuration first, then its plans: a plan made meanwhile from the one before
        // is not kept ([`plan`](Self::plan) keeps a plan of the configuration in force).
        match self.state.config.write() {
            Ok(mut held) => *held = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
        match self.state.plans.lock() {
            Ok(mut held) => *held = plans,
            Err(poisoned) => *poisoned.into_inner() = plans,
        }
        Ok(())
    }
}

impl<H: ServerHandler, S: HandleStore + 'static> Harness<H, S> {
    /// What the configuration decides for `tool`: kept from start or from its first use,
    /// for a tool the configuration or the server lists (a name nobody lists, which the
    /// server will refuse, is planned for its call and not kept: the plans are as many as
    /// the tools).
    fn plan(&self, tool: &str) -> Result<Arc<ToolPlan>, ErrorData> {
        let kept = |state: &State<S>| state.plans.lock().ok()?.get(tool).cloned();
        if let Some(plan) = kept(&self.state) {
            return Ok(plan);
        }
        let plan = ToolPlan::new(&self.config(), tool, &self.shown_name(tool))
            .map(Arc::new)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let listed = self
            .state
            .own_cursor
            .lock()
            .is_ok_and(|listed| listed.contains_key(tool));
        if listed && let Ok(mut plans) = self.state.plans.lock() {
            // Made from the configuration in force (not one a reload has replaced since).
            if Arc::ptr_eq(&plan.config, &self.config()) {
                plans.insert(tool.to_owned(), Arc::clone(&plan));
            }
        }
        Ok(plan)
    }

    /// The shaper of `tool` (planned as `plan`) for `client`.
    fn shaper(&self, plan: &ToolPlan, tool: &str, client: Option<&str>) -> Shaper {
        plan.config.for_client(plan.shaper.clone(), tool, client)
    }

    /// Answers a call of `tool`: from the stored result when the arguments carry one of this
    /// harness's cursors, else by calling the tool and shaping what it answers.
    async fn answer(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let client = super::client_name(&context);
        // The principal the call is made for: its stored results and cursors are its own.
        let owner = super::access::owner_of(&context, &self.state.owner);
        let plan = self.plan(&tool)?;
        let shaper = self.shaper(&plan, &tool, client.as_deref());
        let mut arguments = request.arguments.clone().unwrap_or_default();
        // Whether the arguments are forwarded without the `cursor` the client sent.
        let mut stripped = false;
        // Whether the tool takes a `cursor` of its own, asked only where it decides.
        // Read once: whether the cursor is in this harness's form (the tool table is locked
        // to say).
        let found = arguments.get(CURSOR_ARGUMENT);
        let ours = ours_text(found, |c| self.is_ours(&tool, c)).is_some();
        let owns = found.is_some() && !ours && self.takes_cursor(&tool, &context).await;
        let cursor = match cursor_argument(arguments.get(CURSOR_ARGUMENT), |_| ours, owns) {
            CursorArgument::Absent | CursorArgument::Tool => None,
            CursorArgument::FirstPage => {
                arguments.remove(CURSOR_ARGUMENT);
                stripped = true;
                None
            }
            CursorArgument::Library(cursor) => {
                arguments.remove(CURSOR_ARGUMENT);
                stripped = true;
                Some(cursor)
            }
            CursorArgument::NotACursor(what, remedy) => {
                return Ok(answered(&shaper.error(&what, remedy)).into());
            }
        };
        let query = QueryHash::of(&tool, &arguments)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .for_principal(&owner);
        let call =
            match shaper
                .call()
                .paginate(Arc::clone(&self.state.codec), query, cursor.as_deref())
            {
                Ok(call) => call,
                Err(CursorError::Tampered | CursorError::Malformed | CursorError::ForeignQuery)
                    if cursor.is_some() && self.takes_cursor(&tool, &context).await =>
                {
                    // A cursor in this harness's form that it did not write, on a tool that takes
                    // a cursor of its own: a server shaped by this library behind this one (a
                    // proxy in front of a proxy) wrote it. The tool's, then: passed on as it is.
                    let call = shaper
                        .call()
                        .paginate(Arc::clone(&self.state.codec), query, None)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    self.know_tools(&tool, &context).await;
                    let response = self.inner.call_tool(request, context).await?;
                    let CallToolResponse::Complete(result) = response else {
                        return Ok(response);
                    };
                    return Ok(self
                        .shape_result(&plan, &tool, &owner, &call, result)
                        .await
                        .into());
                }
                Err(e) => return Ok(answered(&shaper.cursor_error(&e)).into()),
            };
        if let Some(handle) = call.walk_handle() {
            let page = match self.state.store.get(&owner, &handle).await {
                Ok(stored) => call
                    .shape_stored(&stored, handle)
                    .unwrap_or_else(|e| shaper.error(&e.to_string(), "call again without cursor")),
                Err(e) => shaper.error(&e.to_string(), "call again without cursor"),
            };
            return Ok(answered(&page).into());
        }
        if stripped {
            request.arguments = Some(arguments);
        }
        self.know_tools(&tool, &context).await;
        let response = self.inner.call_tool(request, context).await?;
        let CallToolResponse::Complete(result) = response else {
            return Ok(response);
        };
        Ok(self
            .shape_result(&plan, &tool, &owner, &call, result)
            .await
            .into())
    }

    /// The name `tool` is shaped under, which its answers show: its own when the
    /// configuration names it (a configured name holds only visible characters); else the
    /// server behind chose it, and it is shown as outsiders' text is (sanitised, marks
    /// defused): so the tool can be called whatever its name, and no answer carries an
    /// invisible character or a mark of its name.
    fn shown_name<'t>(&self, tool: &'t str) -> Cow<'t, str> {
        match self.config().has_tool(tool) {
            true => Cow::Borrowed(tool),
            false => crate::untrusted::echo::shown_name(tool),
        }
    }

    /// Whether `cursor` is one of this harness's: it is unless the tool takes a `cursor` of
    /// its own and this one is not in the form this harness writes (`c` and digits).
    fn is_ours(&self, tool: &str, cursor: &str) -> bool {
        let own = self
            .state
            .own_cursor
            .lock()
            .map(|m| m.get(tool).copied().unwrap_or(false))
            .unwrap_or(false);
        let our_form = cursor.len() > 1
            && cursor.starts_with('c')
            && cursor[1..].bytes().all(|b| b.is_ascii_digit());
        !own || our_form
    }

    /// Whether `tool` takes a `cursor` of its own: as the latest `tools/list` said, else as
    /// the server says now (a client may call a tool it listed in an earlier session).
    async fn takes_cursor(&self, tool: &str, context: &RequestContext<RoleServer>) -> bool {
        self.know_tools(tool, context).await;
        self.known_cursor(tool).unwrap_or(false)
    }

    /// Whether `tool` takes a `cursor` of its own, as far as a listing told.
    fn known_cursor(&self, tool: &str) -> Option<bool> {
        self.state
            .own_cursor
            .lock()
            .ok()
            .and_then(|m| m.get(tool).copied())
    }

    /// Makes sure the server's tools were listed once before `tool`'s answer is read (a
    /// client may call a tool it did not list): whether it takes a cursor of its own, and
    /// the argument names of every tool, whose values redaction and the rules keep. A tool
    /// the listing does not name is known as taking none, so it is listed only once.
    async fn know_tools(&self, tool: &str, context: &RequestContext<RoleServer>) {
        if self.known_cursor(tool).is_some() {
            return;
        }
        if let Ok(page) = self.inner.list_tools(None, context.clone()).await {
            self.learn(&page.tools);
        }
        if let Ok(mut cache) = self.state.own_cursor.lock() {
            cache.entry(tool.to_owned()).or_insert(false);
        }
    }

    /// What a listing of the server's tools tells: which take a cursor of their own, and
    /// the names of their arguments.
    fn learn(&self, tools: &[Tool]) {
        if let Ok(mut cache) = self.state.own_cursor.lock() {
            cache.extend(
                tools
                    .iter()
                    .map(|tool| (tool.name.to_string(), has_cursor_argument(tool))),
            );
        }
        let arguments: std::collections::BTreeSet<String> = tools
            .iter()
            .filter_map(|tool| tool.input_schema.get("properties")?.as_object())
            .flat_map(|p| p.keys().cloned())
            .collect();
        if let Ok(mut known) = self.state.arguments.lock()
            && !known.is_superset(&arguments)
        {
            let mut all = (**known).clone();
            all.extend(arguments);
            *known = Arc::new(all);
        }
    }

    /// What the tool answered, shaped.
    async fn shape_result(
        &self,
        plan: &ToolPlan,
        tool: &str,
        owner: &str,
        call: &Call<'_>,
        result: CallToolResult,
    ) -> CallToolResult {
        if result
            .meta
            .as_ref()
            .is_some_and(|m| m.0.get(SHAPED_META_KEY) == Some(&Value::Bool(true)))
        {
            return result;
        }
        let (texts, media) = split_content(&result.content);
        // Redacted at the door, whole (a private key's lines are one secret, and a line is cut
        // into parts later): nothing after this reads, stores or shows what was taken out.
        let arguments = self
            .state
            .arguments
            .lock()
            .map(|a| Arc::clone(&a))
            .unwrap_or_default();
        let redactor = Redactor::new(plan.redact, &arguments);
        // Counted in the part the answer is read from: a server that writes its records both
        // as text and as structured content has each secret twice, and the model reads one.
        let (mut in_texts, mut in_structured, mut redacted) = Default::default();
        let texts: Vec<String> = texts
            .into_iter()
            .map(|text| {
                let new = match redactor.block(&text, &mut in_texts) {
                    Cow::Owned(new) => Some(new),
                    Cow::Borrowed(_) => None,
                };
                new.unwrap_or(text)
            })
            .collect();
        let media: Vec<ContentBlock> = media
            .into_iter()
            .map(|block| redact_block(block, &redactor, &mut redacted))
            .collect();
        let mut structured = result.structured_content.clone();
        if let Some(value) = &mut structured {
            redactor.value(value, &mut in_structured);
        }
        // `{"content": "…"}`: text in a structured wrapper (as the reference filesystem server
        // answers); its text is the answer.
        let wrapper = matches!(&structured, Some(Value::Object(map)) if map.len() == 1 && map.values().all(Value::is_string));
        let read = match (&structured, texts.is_empty()) {
            (None, _) => in_texts,
            (Some(_), true) => in_structured,
            // Text beside a wrapper of text (or an error's text) is what is read.
            (Some(_), false) if wrapper || result.is_error == Some(true) => in_texts,
            (Some(_), false) => in_structured,
        };
        redacted.add(read);
        let shaper = call.shaper();
        if result.is_error == Some(true) {
            let what = match (&texts[..], &structured) {
                ([], Some(value)) => value.to_string(),
                (texts, _) => texts.join("\n"),
            };
            // The name as shown (see `shown_name`): an upstream's name, sanitised on its own,
            // cannot take the words after it with it (an escape sequence runs to its end).
            let answer =
                shaper.tool_error(&format!("{} answered an error", shaper.tool()), &what, "");
            return with_redacted(with_media(answered(&answer), media), redacted);
        }
        let joined = texts.join("\n");
        // Of the redacted answer: a structured value holding no records is shown as this text.
        let raw = structured
            .as_ref()
            .map_or_else(|| joined.clone(), Value::to_string);
        let call = call.with_raw(&raw);
        let value = match &structured {
            Some(_) if wrapper => None,
            Some(value) => Some(value.clone()),
            None => match serde_json::from_str::<Value>(joined.trim()) {
                Ok(value @ (Value::Object(_) | Value::Array(_))) => Some(value),
                _ => None,
            },
        };
        let joined = match (&structured, texts.is_empty()) {
            (Some(Value::Object(map)), true) if map.len() == 1 => map
                .values()
                .next()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            _ => joined,
        };
        let keep = Keep::new(&self.state.store, owner, &plan.policy);
        let configured = plan.configured.as_ref();
        // A configured tool's JSON text is read as text, as strictly as serde reads it: a key
        // written twice, a second document after the first, are errors a `Value` would hide
        // (it keeps the last key; it stops at the first document).
        let text_json = match (configured, &structured) {
            (Some(projection), None) if joined.trim_start().starts_with(['[', '{']) => {
                Some(projection)
            }
            _ => None,
        };
        // Read as text, the records are not looked for in the value too. Nobody described
        // it: its records in the upstream's order, every part of it.
        let answer = match (text_json, configured, &value) {
            (None, None, Some(value)) => {
                let arguments = self.state.arguments.lock().map(|a| Arc::clone(&a));
                match arguments {
                    _ if raw.len() < TIDY_FROM_BYTES => {
                        let as_given = Inferred {
                            rules: crate::configured::Rules::NONE,
                            ..plan.inferred.clone()
                        };
                        JsonProjection::infer(tool, value, &as_given)
                    }
                    Ok(arguments) if !arguments.is_empty() => {
                        let inferred = Inferred {
                            arguments,
                            ..plan.inferred.clone()
                        };
                        JsonProjection::infer(tool, value, &inferred)
                    }
                    _ => JsonProjection::infer(tool, value, &plan.inferred),
                }
            }
            _ => None,
        };
        // A configured projection without a rank keeps the upstream's order: the tool
        // ordered its records as the call asked (newest first, by a search's relevance).
        let call = match configured {
            Some(projection) if projection.projection().rank.is_none() => call.keep_order(),
            _ => call,
        };
        let shaped = match (text_json, configured, &value, answer) {
            (Some(projection), ..) => call.shape_or_store((projection, &joined), keep).await,
            (None, Some(projection), Some(value), _) => {
                call.shape_or_store((projection, value), keep).await
            }
            (None, _, _, Some(answer)) => {
                call.keep_order()
                    .parts(answer.sections.as_deref())
                    .aside(&answer.aside)
                    .shape_or_store((&answer.projection, &*answer.value), keep)
                    .await
            }
            // Text, or JSON that holds no records: its lines.
            _ => {
                let (tokenizer, budget) = (
                    shaper.current_tokenizer(),
                    shaper.current_budget().max_tokens(),
                );
                let lines = match &value {
                    // JSON that holds no records: as the upstream wrote it (its text, or the
                    // structured value written compact) when that is one line no longer than
                    // a part of a line may be (`lines_of` cuts a longer one in parts: a line
                    // of more bytes than `part_bytes` always is); else pretty-printed, so
                    // that its lines page.
                    Some(value) => {
                        // The structured value's compact text is the raw payload, written once.
                        let written = match &structured {
                            Some(_) => raw.as_str(),
                            None => joined.trim(),
                        };
                        let one_line = (!written.contains('\n')
                            && written.len() <= part_bytes(tokenizer, budget))
                        .then(|| lines_of(written, tokenizer, budget))
                        .filter(|lines| !lines.parts);
                        one_line.unwrap_or_else(|| {
                            let pretty = serde_json::to_string_pretty(value).unwrap_or(joined);
                            lines_of(&pretty, tokenizer, budget)
                        })
                    }
                    None => lines_of(&joined, tokenizer, budget),
                };
                call.keep_order()
                    .parts(lines.statement.as_deref())
                    .text_lines()
                    .shape_or_store(
                        (&JsonProjection::lines(tool, lines.parts), &lines.records),
                        keep,
                    )
                    .await
            }
        };
        // An error object where records were configured (`{"message": "Not Found", …}`): the
        // error says so, quoting the tool's own message.
        fn message_of(value: Option<&Value>) -> Option<&str> {
            let object = value?.as_object()?;
            ["message", "error", "detail"]
                .iter()
                .find_map(|key| object.get(*key)?.as_str())
                .or_else(|| object.get("error")?.get("message")?.as_str())
        }
        let shaped = shaped.unwrap_or_else(|e| match (&e, message_of(value.as_ref())) {
            (crate::page::ShapeError::Records(_), Some(message)) => {
                shaper.tool_error(&format!("{tool} answered no records: {e}"), message, "")
            }
            _ => shaper.error(&e.to_string(), "call again"),
        });
        tracing::info!(
            target: "shape",
            tool,
            harness = true,
            raw_bytes = raw.len(),
            media = media.len(),
            media_bytes = media.iter().map(media_bytes).sum::<usize>(),
            redacted_secrets = redacted.secrets,
            redacted_emails = redacted.emails,
            redacted_phones = redacted.phones,
            "the harness shaped a tool's answer"
        );
        with_redacted(with_media(answered(&shaped), media), redacted)
    }

    /// The answer of `open_result`.
    async fn open_result(
        &self,
        request: CallToolRequestParams,
        client: Option<&str>,
        owner: &str,
    ) -> Result<CallToolResponse, ErrorData> {
        let plan = self.plan(OPEN_RESULT)?;
        let shaper = self.shaper(&plan, OPEN_RESULT, client);
        let open = OpenResult::new(&self.state.store, Arc::clone(&self.state.codec)).shaper(shaper);
        let input = Value::Object(request.arguments.unwrap_or_default());
        Ok(answered(&open.call(owner, input).await).into())
    }

    /// `tools`, as `client` should see them through the harness.
    fn decorate(&self, tools: Vec<Tool>, client: Option<&str>) -> Vec<Tool> {
        let profile = crate::budget::clients::reader(client, &self.config().clients).profile;
        let mut out = Vec::with_capacity(tools.len() + 1);
        // Listed first: a tool the server lists keeps its plan.
        self.learn(&tools);
        for mut tool in tools {
            let name = tool.name.to_string();
            let has_cursor = has_cursor_argument(&tool);
            if is_envelope(tool.output_schema.as_deref()) {
                // A tool shaped by this library already: as it is, for the client's profile.
                out.push(super::tool_for(tool, profile));
                continue;
            }
            let Ok(plan) = self.plan(&name) else {
                out.push(super::tool_for(tool, profile));
                continue;
            };
            let shaper = self.shaper(&plan, &name, client);
            tool.output_schema = Some(match &plan.configured {
                Some(projection) => super::configured_schema(projection, &shaper),
                None => crate::schema::as_object(crate::schema::envelope_of(
                    schemars::json_schema!({
                        "type": ["object", "string"],
                        "description": "one record of the tool's answer; of a text, one line (a string), or a part of a line longer than a page (its line, part and text)",
                    }),
                    Map::new(),
                    &format!("{name} result"),
                )),
            });
            if !has_cursor {
                let mut input = (*tool.input_schema).clone();
                let properties = input
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(properties) = properties {
                    properties.insert(
                        CURSOR_ARGUMENT.to_owned(),
                        serde_json::json!({
                            "type": "string",
                            "description": "the cursor from the last answer's `next`, for the next page (other arguments unchanged)",
                        }),
                    );
                }
                tool.input_schema = Arc::new(input);
            }
            // Listed as the tool answers: under its shaper's profile (the client's, or the one
            // the configuration fixes for the tool), so a tool fixed to text declares no
            // `outputSchema` whoever asks, and one fixed to both keeps it.
            let tool = super::with_size_hint(tool, shaper.current_budget());
            out.push(super::tool_for(tool, shaper.current_channels()));
        }
        out.push(super::tool_for(super::listing::open_result_tool(), profile));
        out
    }
}

/// What a call's `cursor` argument says: read by this one rule for the harness and for
/// [`Pages`](super::Pages), so the two cannot answer one argument two ways.
pub(super) enum CursorArgument {
    /// No `cursor`.
    Absent,
    /// The tool's own argument (it takes a `cursor` and this is not one of ours): passed on.
    Tool,
    /// `null` or blank text, what a client may send for an optional argument it leaves out:
    /// the first page, and the argument is not passed on.
    FirstPage,
    /// A cursor for this library to read (the codec says whether it is one it wrote).
    Library(String),
    /// Not text: what was found and the two ways on.
    NotACursor(String, &'static str),
}

/// Reads `found`, the `cursor` argument: `ours` says whether a text is in this library's
/// form, `owns` whether the tool takes a `cursor` of its own (then anything not ours is
/// the tool's).
pub(super) fn cursor_argument(
    found: Option<&Value>,
    ours: impl Fn(&str) -> bool,
    owns: bool,
) -> CursorArgument {
    if let Some(cursor) = ours_text(found, ours) {
        return CursorArgument::Library(cursor.to_owned());
    }
    match found {
        None => CursorArgument::Absent,
        Some(_) if owns => CursorArgument::Tool,
        Some(Value::Null) => CursorArgument::FirstPage,
        Some(Value::String(c)) if c.trim().is_empty() => CursorArgument::FirstPage,
        Some(Value::String(c)) => CursorArgument::Library(c.clone()),
        Some(other) => {
            let (what, remedy) = not_a_cursor(other);
            CursorArgument::NotACursor(what, remedy)
        }
    }
}

/// The text of `found` when it is a cursor in this library's form (`ours`) and not blank:
/// the one case no tool's own `cursor` argument overrides, so the harness asks whether the
/// tool takes one only outside it.
fn ours_text(found: Option<&Value>, ours: impl Fn(&str) -> bool) -> Option<&str> {
    match found {
        Some(Value::String(c)) if !c.trim().is_empty() && ours(c) => Some(c),
        _ => None,
    }
}

/// The error of a `cursor` that is not a string, on a tool whose cursor is this harness's:
/// what was found, and the two ways on (both work as written: the string from `next`, or no
/// cursor for the first page).
fn not_a_cursor(found: &Value) -> (String, &'static str) {
    let kind = match found {
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::String(_) => "a string",
        Value::Null => "null",
    };
    (
        format!(
            "`cursor` is {kind} (`{found}`), not a cursor: a cursor is the string an answer's \
             `next` holds"
        ),
        "pass the string from `next` as it is, or call again without cursor for the first page",
    )
}

/// A shaped answer as a tool result (marked as shaped).
fn answered(shaped: &Shaped) -> CallToolResult {
    CallToolResult::from(shaped)
}

/// The text of a result's text blocks, and its other blocks.
fn split_content(content: &[ContentBlock]) -> (Vec<String>, Vec<ContentBlock>) {
    let mut texts = Vec::new();
    let mut media = Vec::new();
    for block in content {
        match block.as_text() {
            Some(text) => texts.push(text.text.clone()),
            None => media.push(block.clone()),
        }
    }
    (texts, media)
}

/// `result` with what redaction took out counted in its `_meta` ([`REDACTED_META_KEY`]),
/// when it took out anything.
fn with_redacted(mut result: CallToolResult, redacted: Redacted) -> CallToolResult {
    if redacted.total() > 0 {
        let counts = serde_json::to_value(redacted).unwrap_or_default();
        result
            .meta
            .get_or_insert_with(Default::default)
            .0
            .insert(REDACTED_META_KEY.to_owned(), counts);
    }
    result
}

/// A block that is not text, its text redacted where it has some (an embedded text
/// resource).
fn redact_block(
    mut block: ContentBlock,
    redactor: &Redactor<'_>,
    redacted: &mut Redacted,
) -> ContentBlock {
    if let ContentBlock::Resource(embedded) = &mut block
        && let rmcp::model::ResourceContents::TextResourceContents { text, .. } =
            &mut embedded.resource
        && let Cow::Owned(new) = redactor.block(text, redacted)
    {
        *text = new;
    }
    block
}

fn with_media(mut result: CallToolResult, media: Vec<ContentBlock>) -> CallToolResult {
    result.content.extend(media);
    result
}

/// The bytes a block that is not text carries (its JSON).
fn media_bytes(block: &ContentBlock) -> usize {
    serde_json::to_string(block).map_or(0, |s| s.len())
}

/// Whether `schema` is the envelope of a shaped tool (its five keys).
fn is_envelope(schema: Option<&Map<String, Value>>) -> bool {
    let Some(properties) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return false;
    };
    ["status", "summary", "data", "omitted", "next"]
        .iter()
        .all(|k| properties.contains_key(*k))
}

/// A text answer as records: its lines (`{ "line": n, "text": … }`), a line longer than a
/// quarter of the budget in parts cut at token boundaries, each part a record of its own
/// naming its place (`"part": "line 1, part 3 of 7"`), so that joining the parts of each
/// line, and the lines with `\n`, gives the text back (less its last newline, which ends
/// the last line: `a\nb\n` is two lines, as `str::lines` counts). With parts, what the first page
/// states of them (`1,038 lines in 1,061 parts: line 52 in 3, …`).
struct TextRecords {
    records: Value,
    /// Whether any line came in parts (then the records are parts, not lines).
    parts: bool,
    /// The lines and their parts, stated on the first page, when any line came in parts.
    statement: Option<String>,
}

/// The lines longer than a page that a statement names one by one; the rest are counted.
const PARTED_LINES_NAMED: usize = 5;

/// The most tokens a part of a line may take: a quarter of the budget, at least 8.
fn part_tokens(budget: usize) -> usize {
    (budget / 4).max(8)
}

/// The most bytes a line of at most [`part_tokens`] tokens can have: a longer one is cut in
/// parts whatever its text.
fn part_bytes(tokenizer: &dyn Tokenizer, budget: usize) -> usize {
    part_tokens(budget).saturating_mul(tokenizer.max_token_bytes().max(1))
}

/// Cuts a line into parts of at most `most` tokens each, where tokenizing the rest of the
/// line from each cut would cut it (a part's end is the end of its `most`th token, backed off
/// to a character boundary).
struct Cutter<'a> {
    tokenizer: &'a dyn Tokenizer,
    /// The most tokens a part may take.
    most: usize,
    /// A window of bytes that holds more than `most` tokens whenever the rest does.
    full: usize,
    /// What is tokenized first for one part: twice the bytes the last part took (four bytes
    /// a token to begin with).
    guess: usize,
    /// Bytes still to cut a part at a time: a window found with too few boundaries to read
    /// parts off its tokens is not scanned again part after part.
    plain: usize,
}

impl Cutter<'_> {
    /// How many guesses' bytes a window tokenized at once spans (a guess is twice the last
    /// part's bytes: a window holds about twice this many parts), or the full window if more.
    const PARTS_PER_WINDOW: usize = 64;
    /// A guessed window is taken when it holds this many tokens more than `most` (the cut is
    /// then clear of the window's last, perhaps split, word); else the full window.
    const MARGIN: usize = 4;

    /// `line` in parts, joined back the line (an empty line is one empty part).
    fn parts<'t>(&mut self, line: &'t str) -> Vec<&'t str> {
        let mut parts = Vec::new();
        let mut rest = line;
        // `plain` is at most the bytes left of the line when it is set (a window of them), so
        // it is spent before the line ends: a line never inherits it from the one before.
        loop {
            // Many parts from one tokenization where the tokenizer tells its tokens' lengths
            // and the window ends where no token crosses; one part from a window of its own
            // where not.
            let taken = if self.plain == 0 {
                self.many(rest, &mut parts)
            } else {
                0
            };
            // `many` leaves the last part to `one`: `rest` is never empty here.
            rest = &rest[taken..];
            if taken > 0 {
                continue;
            }
            let at = self.one(rest);
            parts.push(&rest[..at]);
            self.plain = self.plain.saturating_sub(at);
            self.guess = at.saturating_mul(2).clamp(self.most, self.full);
            rest = &rest[at..];
            if rest.is_empty() {
                return parts;
            }
        }
    }

    /// The end of the first part of `rest`, tokenizing a window of its own: all of it when
    /// it is one part (an empty `rest` is one empty part).
    fn one(&self, rest: &str) -> usize {
        let most = self.most;
        let mut end = floor_char(rest, self.guess);
        let mut cut = self.tokenizer.truncate(&rest[..end], most);
        if end < rest.len() && cut.total_tokens < most + Self::MARGIN && end < self.full {
            end = floor_char(rest, self.full);
            cut = self.tokenizer.truncate(&rest[..end], most);
        }
        match cut.prefix.len() {
            // Not one whole character in `most` tokens: the first character alone.
            0 => rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i),
            at => at,
        }
    }

    /// Parts cut from one tokenization of a window of `rest`, pushed to `parts`; the bytes of
    /// `rest` they hold (0 when none could be cut this way, or the line is a single part:
    /// then [`one`](Self::one) decides).
    ///
    /// The window's tokens that end at or before its last boundary no token crosses
    /// ([`Tokenizer::splits_between`]) are the line's own, whatever follows. Such a boundary
    /// is one in any text holding the same two characters there, so the rest of the line
    /// from a cut tokenizes as its head up to the first such boundary (tokenized afresh: a
    /// few bytes) and then as the window's tokens from that boundary on. A part ends at the
    /// end of its `most`th token, backed off to a character boundary, as a tokenization of
    /// the rest from its start would cut it.
    fn many<'t>(&mut self, rest: &'t str, parts: &mut Vec<&'t str>) -> usize {
        let most = self.most;
        if rest.len() <= self.full {
            return 0;
        }
        let span = self
            .guess
            .saturating_mul(Self::PARTS_PER_WINDOW)
            .max(self.full);
        let end = floor_char(rest, span);
        let safe = if end == rest.len() {
            Some(end)
        } else {
            self.last_split(&rest[..end])
        };
        // Fewer than a few parts' bytes before the last boundary: not worth a tokenization
        // of the whole window; cut this window a part at a time.
        let Some(safe) = safe.filter(|&safe| safe >= self.guess.saturating_mul(4)) else {
            self.plain = end;
            return 0;
        };
        let Some(lens) = self.tokenizer.token_lens(&rest[..end]) else {
            // The tokenizer does not tell its tokens' lengths: never ask again.
            self.plain = usize::MAX;
            return 0;
        };
        // Where each of the window's tokens ends.
        let ends: Vec<usize> = lens
            .iter()
            .scan(0, |at, &len| {
                *at += len as usize;
                Some(*at)
            })
            .collect();
        let mut at = 0;
        let held = loop {
            let Some(boundary) = self.next_split(rest, at, safe) else {
                break at;
            };
            let head = if boundary == at {
                Vec::new()
            } else {
                match self.tokenizer.token_lens(&rest[at..boundary]) {
                    Some(head) => head,
                    None => break at,
                }
            };
            let from = match boundary {
                0 => 0,
                _ => match ends.binary_search(&boundary) {
                    Ok(i) => i + 1,
                    Err(_) => break at,
                },
            };
            // Fewer than `most` tokens left in the window end at its end, past `safe` (a
            // boundary inside it) or at the line's end.
            let part_end = at
                + head
                    .iter()
                    .chain(&lens[from..])
                    .take(most)
                    .map(|&len| len as usize)
                    .sum::<usize>();
            if part_end > safe {
                // The rest of the window is not a whole part of the line's own tokens.
                break at;
            }
            // At least `most` (8 or more) tokens: a character or more past `at`. The line's
            // last part is left to `one`, which says the line ends.
            let cut = floor_char(rest, part_end);
            if cut == rest.len() {
                break at;
            }
            parts.push(&rest[at..cut]);
            self.guess = (cut - at).saturating_mul(2).clamp(most, self.full);
            at = cut;
        };
        if held == 0 {
            // Not one part off this window: the next ones are cut a part at a time.
            self.plain = end;
        }
        held
    }

    /// The first byte at or after `at`, and at most `safe`, where no token crosses: `at`
    /// itself at the start of `rest`.
    fn next_split(&self, rest: &str, at: usize, safe: usize) -> Option<usize> {
        if at == 0 {
            return Some(0);
        }
        let mut last = rest[..at].chars().next_back()?;
        for (i, next) in rest[at..safe.max(at)].char_indices() {
            if self.tokenizer.splits_between(last, next) {
                return Some(at + i);
            }
            last = next;
        }
        None
    }

    /// The last byte `b` of `window`, past its start, before which no token ends across
    /// `window[b - 1]` and `window[b]`.
    fn last_split(&self, window: &str) -> Option<usize> {
        let mut chars = window.char_indices().rev();
        let (mut after_at, mut after) = chars.next()?;
        for (at, c) in chars {
            if self.tokenizer.splits_between(c, after) {
                return Some(after_at);
            }
            (after_at, after) = (at, c);
        }
        None
    }
}

/// `bytes`, or `text`'s length if shorter, backed off to a character boundary.
fn floor_char(text: &str, bytes: usize) -> usize {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

fn lines_of(text: &str, tokenizer: &dyn Tokenizer, budget: usize) -> TextRecords {
    let most = part_tokens(budget);
    // A window of bytes that holds more than `most` tokens whenever the rest does.
    let full = part_bytes(tokenizer, budget);
    let mut cutter = Cutter {
        tokenizer,
        most,
        full,
        guess: most.saturating_mul(8).min(full),
        plain: 0,
    };
    let mut lines: Vec<Vec<&str>> = Vec::new();
    // A newline ends the line before it; the text's last newline starts no line of its own
    // (`a\nb\n` is two lines, as `str::lines` and `wc -l` count), and an empty text has
    // none: its answer is empty, not one empty line.
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n').filter(|_| !text.is_empty()) {
        lines.push(cutter.parts(line));
    }
    let parted: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(_, p)| p.len() > 1)
        .map(|(i, p)| (i + 1, p.len()))
        .collect();
    let mut records = Vec::new();
    for (i, parts) in lines.iter().enumerate() {
        let n = i + 1;
        match parts[..] {
            [whole] => records.push(serde_json::json!({ "line": n, "text": whole })),
            _ => {
                for (k, part) in parts.iter().enumerate() {
                    records.push(serde_json::json!({
                        "line": n,
                        "part": format!("line {}, part {} of {}", thousands(n), thousands(k + 1), thousands(parts.len())),
                        "text": part,
                    }));
                }
            }
        }
    }
    let statement = (!parted.is_empty()).then(|| {
        let line_word = if lines.len() == 1 { "line" } else { "lines" };
        let named: Vec<String> = parted
            .iter()
            .take(PARTED_LINES_NAMED)
            .map(|(n, k)| format!("line {} in {}", thousands(*n), thousands(*k)))
            .collect();
        let more = match parted.len().saturating_sub(PARTED_LINES_NAMED) {
            0 => String::new(),
            1 => " and 1 more line".to_owned(),
            n => format!(" and {} more lines", thousands(n)),
        };
        format!(
            "the text's {} {line_word} come in {} parts, a line longer than a page in parts: {}{more}",
            thousands(lines.len()),
            thousands(records.len()),
            named.join(", ")
        )
    });
    TextRecords {
        records: Value::Array(records),
        parts: !parted.is_empty(),
        statement,
    }
}

fn thousands(n: usize) -> String {
    crate::text::thousands(n as u64)
}

/// `ServerHandler` methods answered by the server behind, as it answers them.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty;)*) => {$(
        fn $name(&self, $($arg: $ty),*) -> impl Future<Output = $out> + MaybeSendFuture + '_ {
            self.inner.$name($($arg),*)
        }
    )*};
}

#[allow(deprecated)] // SetLevelRequestParams, subscribe and unsubscribe: forwarded as they are
impl<H: ServerHandler, S: HandleStore + 'static> ServerHandler for Harness<H, S> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == OPEN_RESULT {
            let client = super::client_name(&context);
            let owner = super::access::owner_of(&context, &self.state.owner);
            return self.open_result(request, client.as_deref(), &owner).await;
        }
        self.answer(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let first = request.as_ref().and_then(|r| r.cursor.as_ref()).is_none();
        let client = super::client_name(&context);
        let mut page = match self.inner.list_tools(request, context).await {
            Ok(page) => page,
            Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                ListToolsResult::with_all_items(vec![])
            }
            Err(e) => return Err(e),
        };
        let mut tools = self.decorate(std::mem::take(&mut page.tools), client.as_deref());
        if !first {
            tools.retain(|t| t.name != OPEN_RESULT);
        }
        page.tools = tools;
        Ok(page)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        if name == OPEN_RESULT {
            return self.decorate(Vec::new(), None).pop();
        }
        let tool = self.inner.get_tool(name)?;
        self.decorate(vec![tool], None).into_iter().next()
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        let mut info = self.inner.get_info();
        with_tools(&mut info.capabilities);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.initialize(request, context).await?;
        with_tools(&mut result.capabilities);
        Ok(result)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.negotiate_initialize(request)?;
        with_tools(&mut result.capabilities);
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        let mut result = self.inner.discover(context).await?;
        with_tools(&mut result.capabilities);
        Ok(result)
    }

    // Everything else as the server behind answers it (rmcp's own list for its `Box` and
    // `Arc` wrappers, `handler/server.rs`: recheck it when rmcp adds a method). A layer over
    // rmcp's `Service` would need no list, but rmcp's streamable HTTP server takes a
    // `ServerHandler` (`transport/streamable_http_server/tower.rs`), so the harness is one.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }
    forward! {
        ping(context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        complete(r: CompleteRequestParams, context: RequestContext<RoleServer>)
            -> Result<CompleteResult, ErrorData>;
        set_level(r: SetLevelRequestParams, context: RequestContext<RoleServer>)
            -> Result<(), ErrorData>;
        get_prompt(r: GetPromptRequestParams, context: RequestContext<RoleServer>)
            -> Result<GetPromptResponse, ErrorData>;
        list_prompts(r: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>)
            -> Result<ListPromptsResult, ErrorData>;
        list_resources(r: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>)
            -> Result<ListResourcesResult, ErrorData>;
        list_resource_templates(
            r: Option<PaginatedRequestParams>,
            context: RequestContext<RoleServer>
        ) -> Result<ListResourceTemplatesResult, ErrorData>;
        read_resource(r: ReadResourceRequestParams, context: RequestContext<RoleServer>)
            -> Result<ReadResourceResponse, ErrorData>;
        listen(context: SubscriptionContext) -> Result<(), ErrorData>;
        subscribe(r: SubscribeRequestParams, context: RequestContext<RoleServer>)
            -> Result<(), ErrorData>;
        unsubscribe(r: UnsubscribeRequestParams, context: RequestContext<RoleServer>)
            -> Result<(), ErrorData>;
        on_custom_request(r: CustomRequest, context: RequestContext<RoleServer>)
            -> Result<CustomResult, ErrorData>;
        on_cancelled(n: CancelledNotificationParam, context: NotificationContext<RoleServer>)
            -> ();
        on_progress(n: ProgressNotificationParam, context: NotificationContext<RoleServer>)
            -> ();
        on_initialized(context: NotificationContext<RoleServer>) -> ();
        on_roots_list_changed(context: NotificationContext<RoleServer>) -> ();
        on_custom_notification(n: CustomNotification, context: NotificationContext<RoleServer>)
            -> ();
        get_task(r: GetTaskParams, context: RequestContext<RoleServer>)
            -> Result<GetTaskResult, ErrorData>;
        update_task(r: UpdateTaskParams, context: RequestContext<RoleServer>)
            -> Result<(), ErrorData>;
        cancel_task(r: CancelTaskParams, context: RequestContext<RoleServer>)
            -> Result<(), ErrorData>;
        list_skills(r: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>)
            -> Result<ListSkillsResult, ErrorData>;
        get_skill(r: GetSkillRequestParams, context: RequestContext<RoleServer>)
            -> Result<GetSkillResult, ErrorData>;
        read_resource_directory(
            r: ReadResourceDirectoryRequestParams,
            context: RequestContext<RoleServer>
        ) -> Result<ReadResourceDirectoryResult, ErrorData>;
    }
}

fn with_tools(capabilities: &mut ServerCapabilities) {
    capabilities
        .tools
        .get_or_insert_with(ToolsCapability::default);
}

/// Whether a tool's input schema has a `cursor` argument.
fn has_cursor_argument(tool: &Tool) -> bool {
    tool.input_schema
        .get("properties")
        .and_then(|p| p.get(CURSOR_ARGUMENT))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::tokens::Bpe;

    /// A server with nothing of its own: rmcp's defaults.
    #[derive(Clone)]
    struct Nothing;
    impl ServerHandler for Nothing {}

    /// Each tool's plan is made once and shared by every call: at start for the tools the
    /// configuration lists and `open_result`, at first use for a tool the server lists; a
    /// name nobody lists is planned for its call and not kept, so the plans stay as many as
    /// the tools whatever names clients send.
    #[test]
    fn a_tools_plan_is_made_once_and_only_for_tools_someone_lists() {
        let config =
            ShapeConfig::from_toml_str("[defaults]\nbudget = 700\n[tools.search]\nbudget = 300\n")
                .unwrap();
        let harness = Harness::new(Nothing, config).unwrap();
        let kept = |h: &Harness<Nothing>| -> Vec<String> {
            h.state.plans.lock().unwrap().keys().cloned().collect()
        };
        assert_eq!(kept(&harness), ["open_result", "search"]);
        let first = harness.plan("search").unwrap();
        assert!(Arc::ptr_eq(&first, &harness.plan("search").unwrap()));
        assert_eq!(first.shaper.current_budget().max_tokens(), 300);
        // Unlisted: planned from `[defaults]`, not kept.
        for _ in 0..3 {
            let plan = harness.plan("made_up").unwrap();
            assert_eq!(plan.shaper.current_budget().max_tokens(), 700);
        }
        assert_eq!(kept(&harness), ["open_result", "search"]);
        // Listed by the server: kept at its first use, then shared.
        harness
            .state
            .own_cursor
            .lock()
            .unwrap()
            .insert("read_file".to_owned(), false);
        let read = harness.plan("read_file").unwrap();
        assert!(Arc::ptr_eq(&read, &harness.plan("read_file").unwrap()));
        assert_eq!(kept(&harness), ["open_result", "read_file", "search"]);
        // The client's step stays per call: a text reader's profile, the tool's own budget.
        let text = harness.shaper(&read, "read_file", Some("open-webui"));
        assert_eq!(
            text.current_channels(),
            crate::budget::clients::reader(Some("open-webui"), &BTreeMap::new()).profile
        );
    }

    /// The parts as a naive reference cuts them: every part from a window as large as the
    /// budget could need (`most` tokens of the longest token's bytes), tokenized whole.
    fn parts_naive(text: &str, budget: usize) -> Vec<String> {
        let bpe = Bpe::o200k_base();
        let most = (budget / 4).max(8);
        let window = most * bpe.max_token_bytes().max(1);
        let mut out = Vec::new();
        for line in text.split('\n') {
            let mut rest = line;
            loop {
                let mut end = window.min(rest.len());
                while !rest.is_char_boundary(end) {
                    end -= 1;
                }
                let cut = bpe.truncate(&rest[..end], most);
                if end == rest.len() && cut.prefix.len() == end {
                    out.push(rest.to_owned());
                    break;
                }
                let at = match cut.prefix.len() {
                    0 => rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i),
                    at => at,
                };
                out.push(rest[..at].to_owned());
                rest = &rest[at..];
                if rest.is_empty() {
                    break;
                }
            }
        }
        out
    }

    /// Tokenizing a window of about twice the last part's bytes cuts a long line exactly
    /// where the full window does, on text whose bytes per token differ along the line
    /// (SQL rows, then CJK, emoji, a run with no space, spaces, digits), at several budgets.
    #[test]
    fn a_long_line_is_cut_where_the_full_window_cuts_it() {
        let row = "(1042, 'Northwind Foods', 'card declined at checkout', 'open'),";
        let mixed = [
            row.repeat(300),
            "数据库连接失败，请稍后重试。".repeat(400),
            "😀🎉👍🏽".repeat(500),
            "x".repeat(20_000),
            " ".repeat(5_000),
            "0123456789".repeat(2_000),
            row.repeat(50),
        ]
        .concat();
        let text = format!("short\n{mixed}\n{}\nend", row.repeat(200));
        for budget in [40, 600, 1_500, 3_000] {
            let ours: Vec<String> = parts(&text, budget).into_iter().map(|(_, t)| t).collect();
            assert_eq!(ours, parts_naive(&text, budget), "budget {budget}");
            assert_eq!(ours.concat(), text.replace('\n', ""));
        }
        // Lines whose last part holds from one token to exactly `most` (10 at a budget of
        // 40): every remainder, so a line ending on a whole part gets no empty part after.
        for rows in 45..=65 {
            let line = row.repeat(rows);
            let ours: Vec<String> = parts(&line, 40).into_iter().map(|(_, t)| t).collect();
            assert_eq!(ours, parts_naive(&line, 40), "{rows} rows");
        }
        // A line of one byte fewer than the full window (2,560 bytes at a budget of 40), of
        // it, and one byte more: parts read off one tokenization only past it.
        let full = part_bytes(&Bpe::o200k_base(), 40);
        assert_eq!(full, 2_560);
        for len in [full - 1, full, full + 1] {
            let line = &row.repeat(50)[..len];
            let ours: Vec<String> = parts(line, 40).into_iter().map(|(_, t)| t).collect();
            assert_eq!(ours, parts_naive(line, 40), "{len} bytes");
            assert_eq!(ours.concat(), line);
        }
    }

    /// Random mixes of the fragments a long line is made of (SQL rows, CJK, emoji, long
    /// runs with no boundary, spaces, digits, apostrophes, punctuation), cut as the full
    /// window cuts them at three budgets: where parts are read off one tokenization and where
    /// a window with too few boundaries is cut a part at a time.
    #[test]
    fn random_long_lines_are_cut_where_the_full_window_cuts_them() {
        const FRAGMENTS: [&str; 12] = [
            "(1042, 'Northwind Foods', 'card declined at checkout', 'open'),",
            "数据库连接失败，请稍后重试。",
            "😀🎉👍🏽",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "                ",
            "0123456789",
            "don't won't they'll ",
            "é",
            "a",
            ", ",
            "=>{}[]",
            "\t\r ",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..12 {
            let len = 2_000 + (next() % 120_000) as usize;
            let mut line = String::new();
            while line.len() < len {
                let fragment = FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize];
                for _ in 0..1 + next() % 40 {
                    line.push_str(fragment);
                }
            }
            for budget in [40, 600, 1_500] {
                let ours: Vec<String> = parts(&line, budget).into_iter().map(|(_, t)| t).collect();
                assert_eq!(
                    ours,
                    parts_naive(&line, budget),
                    "case {case}, budget {budget}"
                );
            }
        }
    }

    /// Each byte of a long line of SQL rows is tokenized about once (it was about twice,
    /// and thirty times before that); a tokenizer that cannot tell its tokens' lengths gets
    /// the same parts, a window a part, each byte about twice.
    #[test]
    fn a_long_line_is_tokenized_about_once() {
        struct Counted {
            inner: Bpe,
            bytes: std::sync::atomic::AtomicUsize,
            lens: bool,
        }
        impl Tokenizer for Counted {
            fn name(&self) -> &str {
                self.inner.name()
            }
            fn count(&self, text: &str) -> usize {
                self.bytes
                    .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
                self.inner.count(text)
            }
            fn truncate<'t>(
                &self,
                text: &'t str,
                max_tokens: usize,
            ) -> crate::budget::tokens::Truncated<'t> {
                self.bytes
                    .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
                self.inner.truncate(text, max_tokens)
            }
            fn max_token_bytes(&self) -> usize {
                self.inner.max_token_bytes()
            }
            fn splits_between(&self, last: char, next: char) -> bool {
                self.inner.splits_between(last, next)
            }
            fn token_lens(&self, text: &str) -> Option<Vec<u32>> {
                if !self.lens {
                    return None;
                }
                self.bytes
                    .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
                self.inner.token_lens(text)
            }
        }
        let row = "(1042, 'Northwind Foods', 'card declined at checkout', 'open'),";
        let line = row.repeat(500_000 / row.len());
        let mut cuts = Vec::new();
        for lens in [true, false] {
            let counted = Counted {
                inner: Bpe::o200k_base(),
                bytes: Default::default(),
                lens,
            };
            let records = lines_of(&line, &counted, 1_500).records;
            let tokenized = counted.bytes.into_inner();
            let ratio = tokenized as f64 / line.len() as f64;
            if lens {
                assert!(
                    (1.0..1.1).contains(&ratio),
                    "{tokenized} bytes for {}",
                    line.len()
                );
            } else {
                // A window a part, about twice the part's bytes (the full window, 30 times a
                // part here, only where the guess holds too few tokens).
                assert!(
                    (1.8..2.6).contains(&ratio),
                    "{tokenized} bytes for {}",
                    line.len()
                );
            }
            cuts.push(records);
        }
        assert_eq!(cuts[0], cuts[1]);
        assert!(cuts[0].as_array().is_some_and(|parts| parts.len() > 300));
    }

    fn parts(text: &str, budget: usize) -> Vec<(u64, String)> {
        let bpe = Bpe::o200k_base();
        match lines_of(text, &bpe, budget).records {
            Value::Array(records) => records
                .into_iter()
                .map(|r| {
                    (
                        r["line"].as_u64().unwrap(),
                        r["text"].as_str().unwrap().to_owned(),
                    )
                })
                .collect(),
            other => panic!("{other}"),
        }
    }

    fn joined(parts: &[(u64, String)]) -> String {
        let mut out = String::new();
        let mut last = None;
        for (line, text) in parts {
            if last.is_some_and(|l| l != *line) {
                out.push('\n');
            }
            out.push_str(text);
            last = Some(*line);
        }
        out
    }

    /// The first page names up to five lines that came in parts and counts the rest: at
    /// five, all named; at six, one counted; at seven, two.
    #[test]
    fn the_lines_in_parts_are_named_up_to_five_and_the_rest_counted() {
        let bpe = Bpe::o200k_base();
        let long = "a".to_owned() + &" a".repeat(150);
        for (parted, more) in [
            (4, ""),
            (5, ""),
            (6, " and 1 more line"),
            (7, " and 2 more lines"),
        ] {
            let text = vec![long.as_str(); parted].join("\nshort\n");
            let statement = lines_of(&text, &bpe, 400).statement.unwrap();
            let named = (0..parted.min(PARTED_LINES_NAMED))
                .map(|i| format!("line {} in 2", 2 * i + 1))
                .collect::<Vec<_>>()
                .join(", ");
            assert_eq!(
                statement,
                format!(
                    "the text's {} lines come in {} parts, a line longer than a page in parts: {named}{more}",
                    2 * parted - 1,
                    3 * parted - 1
                ),
                "{parted}"
            );
        }
        assert!(lines_of("short\nlines", &bpe, 400).statement.is_none());
    }

    #[test]
    fn a_line_is_split_only_past_a_quarter_of_the_budget_and_always_joins_back() {
        let bpe = Bpe::o200k_base();
        // A quarter of 400 is 100 tokens: " a" is one token each.
        let line = |n: usize| "a".to_owned() + &" a".repeat(n - 1);
        assert_eq!(bpe.count(&line(100)), 100);
        assert_eq!(parts(&line(99), 400).len(), 1);
        assert_eq!(parts(&line(100), 400).len(), 1);
        let past = parts(&line(101), 400);
        assert_eq!(past.len(), 2, "{past:?}");
        assert!(past.iter().all(|(_, t)| bpe.count(t) <= 100));
        assert_eq!(joined(&past), line(101));
        // Several lines, an empty one, multi-byte text: all come back; a text's last
        // newline ends its last line and starts none (as `str::lines` counts: the naive
        // reference), so the lines give the text back less that newline.
        assert!(parts("", 400).is_empty(), "an empty text has no lines");
        for text in ["", "one\n\ntwo", "é€😀 mixed\tline\nnext"] {
            assert_eq!(joined(&parts(text, 400)), text, "{text:?}");
        }
        for (text, lines) in [("\n", 1), ("one\n\ntwo\n", 3), ("one\n", 1), ("one\n\n", 2)] {
            let shown = parts(text, 400);
            assert_eq!(shown.len(), text.lines().count(), "{text:?}");
            assert_eq!(shown.len(), lines, "{text:?}");
            assert_eq!(format!("{}\n", joined(&shown)), text, "{text:?}");
        }
        let wide = "😀".repeat(3_000);
        let split = parts(&wide, 64);
        assert!(split.len() > 10);
        assert!(split.iter().all(|(l, t)| *l == 1 && bpe.count(t) <= 16));
        assert_eq!(joined(&split), wide);
        // The smallest part is 8 tokens, whatever the budget.
        assert!(parts(&line(30), 1).iter().all(|(_, t)| bpe.count(t) <= 8));
    }
}
