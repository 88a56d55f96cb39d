//! The support desk as an MCP server over stdio, on an embedded SQLite database created and
//! seeded at start (5,000 tickets, 200 users, 60 organizations; the same on every run).
//!
//! Tools:
//! - `search_tickets(query?, status?, cursor?)`: tickets by last update, newest first. The
//!   cursor's keyset is a condition in the SQL, each page reads at most `PAGE_SIZE + 1` rows,
//!   and names are resolved with one `SELECT … WHERE id IN (…)` per resolver per page: four
//!   statements a page (count, page, users, organizations). A first page matching more than
//!   the policy's factor of pages (4 × 25 tickets) reads the whole match instead (up to
//!   10,000 rows, still four statements) and, when it is over 4 budgets, stores it behind a
//!   handle.
//! - `get_ticket(id)`: one ticket, by the short id the results show (`tkt_9f3a71c4`) or the
//!   full id.
//! - `open_result(handle, …)`: reopens a stored result: filter, select, sort, page, aggregate.
//!
//! Over stdio the principal handles and cursors are bound to is fixed, [`OWNER`]: a stdio
//! server serves exactly one client, the process that started it. Over HTTP, with
//! `SHAPE_TOKENS=alice=…,bob=…`, each request needs `Authorization: Bearer <token>` and is
//! made for its token's principal ([`mcp::Access`]): a principal's handles and cursors open
//! for it alone (another's read as ones that never existed). Without `SHAPE_TOKENS` every
//! request is one principal, `anonymous`.
//!
//! stdout is the MCP channel; every log line (shape's call reports, and one line per call
//! with the SQL statements it ran and the session's follow-up lookups and hedges so far) goes
//! to stderr, and the session's summary when the client disconnects.
//!
//! Run with `cargo run --example mcp_support_desk --features mcp` under an MCP client (the
//! interop test, `tests/mcp_interop.py`, starts the binary this builds).
//!
//! With feature `http`, `--http 127.0.0.1:8080` serves MCP's streamable HTTP transport at
//! `/mcp` instead of stdio, stateless (no server-side session: any replica answers any call;
//! a client's name and capabilities come from each request's `_meta`), and `--redis URL`
//! keeps stored results and cursor positions in Redis, so replicas behind one address share
//! them (`SHAPE_CURSOR_KEY` must then be the same on each: it signs cursors and keys the
//! owner tags). `examples/load.rs` runs three such replicas under load.
//! `SHAPE_CURSOR_KEY` (16+ bytes) fixes the cursor signing key; otherwise a random one is
//! drawn at start. Cursor positions are held in memory (20-character cursors), so cursors do
//! not outlive the process either way. `SHAPE_HANDLE_TTL_SECS` sets how
//! long stored results live (default 1,800 s).

use shape_examples::{desk, desk_db};

use desk::{STATUS, Ticket};
use desk_db::{DbError, DeskDb, TicketFilter};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use toolshape::{
    Budget, Call, Format, Shaped, Shaper,
    aggregate::Aggregate,
    cursor::{CursorCodec, CursorKeys, MemoryCursorStore, QueryHash},
    fields::Day,
    handle::{HandlePolicy, Keep, MemoryStore, OpenResult},
    mcp,
};
use toolshape_eval::session::Session;

/// The principal every handle of a stdio session belongs to (see the module docs).
const OWNER: &str = "stdio-session";
/// Tokens per search or lookup answer, envelope included (o200k_base).
const BUDGET: usize = 1_500;
/// Tokens per `open_result` answer.
const OPEN_BUDGET: usize = 1_500;
/// Tickets per page at most, whatever the budget.
const PAGE_SIZE: usize = 25;
/// A first page reads the whole match to store it behind a handle only up to this many rows.
const MAX_STORED_ROWS: u64 = 10_000;
/// The longest `query` accepted.
const MAX_QUERY_CHARS: usize = 200;

/// The arguments of `search_tickets`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Text to find in ticket subjects (case-insensitive substring; `%` and `_` are literal).
    #[serde(default)]
    query: Option<String>,
    /// Only tickets in this status: new, pending, open, resolved or closed.
    #[serde(default)]
    status: Option<String>,
    /// The `next` value of the previous page, to continue the same search.
    #[serde(default)]
    cursor: Option<String>,
}

/// The arguments of `get_ticket`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetArgs {
    /// The ticket id as results show it (`tkt_9f3a71c4`), or the full id.
    id: String,
}

/// Where stored results live: in the process, or (feature `http`, `--redis`) in Redis.
enum Store {
    Memory(MemoryStore),
    #[cfg(feature = "http")]
    Redis(toolshape::handle::RedisStore),
}

impl toolshape::handle::HandleStore for Store {
    async fn put(
        &self,
        owner: &str,
        result: toolshape::handle::StoredResult,
        policy: &HandlePolicy,
    ) -> Result<toolshape::handle::Handle, toolshape::handle::HandleError> {
        match self {
            Store::Memory(s) => s.put(owner, result, policy).await,
            #[cfg(feature = "http")]
            Store::Redis(s) => s.put(owner, result, policy).await,
        }
    }

    async fn get(
        &self,
        owner: &str,
        handle: &toolshape::handle::Handle,
    ) -> Result<Arc<toolshape::handle::StoredResult>, toolshape::handle::HandleError> {
        match self {
            Store::Memory(s) => s.get(owner, handle).await,
            #[cfg(feature = "http")]
            Store::Redis(s) => s.get(owner, handle).await,
        }
    }

    async fn remove(
        &self,
        owner: &str,
        handle: &toolshape::handle::Handle,
    ) -> Result<bool, toolshape::handle::HandleError> {
        match self {
            Store::Memory(s) => s.remove(owner, handle).await,
            #[cfg(feature = "http")]
            Store::Redis(s) => s.remove(owner, handle).await,
        }
    }
}

/// Everything a call needs; shared by every clone of the server.
struct Desk {
    db: DeskDb,
    store: Store,
    policy: HandlePolicy,
    codec: Arc<CursorCodec>,
    today: Day,
    /// This stdio session's answers and calls: follow-up lookups and hedges.
    session: Session,
}

#[derive(Clone)]
struct DeskServer {
    desk: Arc<Desk>,
    tool_router: ToolRouter<Self>,
}

fn budget() -> Budget {
    Budget::tokens(BUDGET)
}

fn open_budget() -> Budget {
    Budget::tokens(OPEN_BUDGET)
}

#[tool_router]
impl DeskServer {
    fn new(desk: Desk) -> Self {
        DeskServer {
            desk: Arc::new(desk),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Search support tickets, newest update first. Filter by a subject substring \
                       and/or a status; page with the cursor from `next`. A broad search also \
                       stores the whole result behind a handle that open_result can filter, sort \
                       and aggregate.",
        output_schema = mcp::output_schema::<Ticket>(),
        meta = mcp::size_hint_meta(budget()),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_tickets(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Shaped {
        self.desk.session.call("search_tickets", &args);
        let shaped = self.desk.search(args, &context).await;
        self.desk.record(&shaped);
        shaped
    }

    #[tool(
        description = "Get one support ticket by the id the results show (tkt_9f3a71c4) or its full id.",
        output_schema = mcp::output_schema::<Ticket>(),
        meta = mcp::size_hint_meta(budget()),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_ticket(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<GetArgs>,
    ) -> Shaped {
        self.desk.session.call("get_ticket", &args);
        let shaped = self.desk.get(&args.id, &context).await;
        self.desk.record(&shaped);
        shaped
    }

    #[tool(
        description = OpenResult::<Store>::DESCRIPTION,
        input_schema = OpenResult::<Store>::input_schema(),
        output_schema = OpenResult::<Store>::output_schema(),
        meta = mcp::size_hint_meta(open_budget()),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn open_result(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<JsonObject>,
    ) -> Shaped {
        let desk = &self.desk;
        desk.session.call(OpenResult::<Store>::NAME, &args);
        let shaped = OpenResult::new(&desk.store, Arc::clone(&desk.codec))
            .shaper(mcp::shaper_for(
                &Shaper::for_tool(OpenResult::<Store>::NAME)
                    .budget(open_budget())
                    .format(Format::Prose),
                &context,
            ))
            .call_on(&owner(&context), Value::Object(args), desk.today)
            .await;
        desk.record(&shaped);
        log_call(&shaped, 0);
        shaped
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DeskServer {
    /// The tools as this client should see them: a client whose model reads only the text
    /// gets no `outputSchema`, so its answers can leave `structuredContent` out.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = mcp::tools_for(self.tool_router.list_all(), &context);
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "shape-support-desk",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "A support desk of 5,000 tickets. search_tickets finds tickets (newest update \
                 first) and pages with cursors; get_ticket takes the short ids results show; \
                 open_result reopens a stored result by its handle. Every answer has the same \
                 envelope: status, summary, data, omitted, next.",
            )
    }
}

impl Desk {
    /// Records an answer in the session (every result here is tickets, stored ones too), so
    /// its log carries the lookups of the call it answers and later calls are matched
    /// against it.
    fn record(&self, shaped: &Shaped) {
        let lookups = self.session.answer::<Ticket>(shaped);
        let report = shaped.report();
        tracing::info!(
            target: "mcp_support_desk",
            tool = %report.tool,
            lookups = %serde_json::to_string(&lookups).unwrap_or_default(),
            session = %self.session.summary(),
            "session"
        );
    }

    /// The tool's shaper for the client of this request: the channel its model reads and its
    /// own size cuts (Codex: 10 KiB or 256 lines).
    fn shaper(tool: &str, context: &RequestContext<RoleServer>) -> Shaper {
        let shaper = Shaper::for_tool(tool)
            .budget(budget())
            .format(Format::Prose)
            .page_size(PAGE_SIZE);
        mcp::shaper_for(&shaper, context)
    }

    async fn search(&self, args: SearchArgs, context: &RequestContext<RoleServer>) -> Shaped {
        let base = Self::shaper("search_tickets", context);
        let status = match args.status.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(word) => match STATUS
                .entries()
                .iter()
                .find(|(_, w)| w.eq_ignore_ascii_case(word))
            {
                Some(&(code, w)) => Some((code, w)),
                None => {
                    let words: Vec<&str> = STATUS.entries().iter().map(|(_, w)| *w).collect();
                    return base.error(
                        &format!("unknown status {word:?}"),
                        &format!("use one of {} or leave status out", words.join(", ")),
                    );
                }
            },
        };
        let query = args
            .query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty());
        if query.is_some_and(|q| q.chars().count() > MAX_QUERY_CHARS) {
            return base.error(
                &format!("query is longer than {MAX_QUERY_CHARS} characters"),
                "search for a shorter part of the subject",
            );
        }
        let asked = json!({ "query": query, "status": status.map(|(_, w)| w) });
        let mut words = Vec::new();
        if let Some(q) = query {
            words.push(format!("query={q:?}"));
        }
        if let Some((_, w)) = status {
            words.push(format!("status={w}"));
        }
        let base = if words.is_empty() {
            base.call()
        } else {
            base.call().query(words.join(", "))
        };
        // Bound to the caller: another principal's cursor reads as an altered one.
        let owner = owner(context);
        let hash = match QueryHash::of("search_tickets", &asked) {
            Ok(hash) => hash.for_principal(&owner),
            Err(e) => return base.error(&e.to_string(), "call again"),
        };
        let shaper =
            match base
                .clone()
                .paginate(Arc::clone(&self.codec), hash, args.cursor.as_deref())
            {
                Ok(shaper) => shaper,
                Err(e) => {
                    let shaped = base.shaper().cursor_error(&e);
                    log_call(&shaped, 0);
                    return shaped;
                }
            };
        let filter = TicketFilter {
            subject_contains: query.map(str::to_owned),
            status_code: status.map(|(code, _)| code),
        };
        let before = self.db.queries();
        let answer = self.search_page(shaper, &filter, &owner).await;
        let queries = self.db.queries() - before;
        let shaped = answer.unwrap_or_else(|e| base.error(&e, "call again"));
        log_call(&shaped, queries);
        shaped
    }

    /// One page: `COUNT(*)`, the page's rows (or, for a broad first page, the whole match to
    /// store), then one lookup per resolver inside the shaper.
    async fn search_page(
        &self,
        shaper: Call<'_>,
        filter: &TicketFilter,
        owner: &str,
    ) -> Result<Shaped, String> {
        let text = |e: DbError| format!("the ticket database failed: {e}");
        let total = self.db.count(filter).map_err(text)?;
        let shaper = shaper.total(total);
        let first = shaper.after_keyset().is_none();
        // Worth reading the whole match only when it could be over the policy's factor of
        // budgets: more than that many full pages.
        let store_from = PAGE_SIZE as f64 * self.policy.store_when_over_budget_factor;
        if first && total as f64 > store_from && total <= MAX_STORED_ROWS {
            let limit = usize::try_from(total).unwrap_or(usize::MAX);
            let rows = self.db.tickets(filter, None, limit).map_err(text)?;
            let summary = Aggregate::new()
                .count_by("status")
                .recent("last_update", 30);
            let keep = Keep {
                store: &self.store,
                owner,
                policy: &self.policy,
                aggregate: Some(&summary),
                today: Some(self.today),
            };
            return shaper
                .shape_or_store((&rows, &self.db), keep)
                .await
                .map_err(|e| e.to_string());
        }
        let rows = self
            .db
            .tickets(filter, shaper.after_keyset(), PAGE_SIZE + 1)
            .map_err(text)?;
        shaper
            .shape((&rows, &self.db))
            .await
            .map_err(|e| e.to_string())
    }

    async fn get(&self, id: &str, context: &RequestContext<RoleServer>) -> Shaped {
        let id = id.trim();
        let shaper = Self::shaper("get_ticket", context)
            .call()
            .query(format!("id={id}"));
        let hex = id.strip_prefix("tkt_").unwrap_or_default();
        let well_formed = id.len() <= 40
            && hex.len() >= 4
            && hex.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        if !well_formed {
            let shown: String = id.chars().take(48).collect();
            return shaper.error(
                &format!("{shown:?} is not a ticket id"),
                "pass the id as results show it, like tkt_9f3a71c4, or the full id",
            );
        }
        let id = id.to_ascii_lowercase();
        let before = self.db.queries();
        let found = match self.db.tickets_by_id_prefix(&id, 6) {
            Ok(found) => found,
            Err(e) => {
                return shaper.error(&format!("the ticket database failed: {e}"), "call again");
            }
        };
        let rows: Vec<Ticket> = match found.iter().position(|t| t.id == id) {
            Some(exact) => found.into_iter().skip(exact).take(1).collect(),
            None if found.len() > 1 => {
                let ids: Vec<&str> = found
                    .iter()
                    .take(5)
                    .map(|t| toolshape::fields::short_id(&t.id))
                    .collect();
                let more = if found.len() > 5 { ", …" } else { "" };
                let shaped = shaper.error(
                    &format!(
                        "{id} is ambiguous: it starts {} ticket ids ({}{more})",
                        if found.len() > 5 {
                            "more than 5".to_owned()
                        } else {
                            found.len().to_string()
                        },
                        ids.join(", ")
                    ),
                    "pass more of the id, as results show it",
                );
                log_call(&shaped, self.db.queries() - before);
                return shaped;
            }
            None => found,
        };
        let shaped = shaper
            .shape((&rows, &self.db))
            .await
            .unwrap_or_else(|e| shaper.error(&e.to_string(), "call again"));
        log_call(&shaped, self.db.queries() - before);
        shaped
    }
}

/// One log line per call, on stderr: the SQL statements it ran and what shape reported.
fn log_call(shaped: &Shaped, sql_queries: u64) {
    let report = shaped.report();
    let resolvers = serde_json::to_string(&report.resolvers).unwrap_or_default();
    tracing::info!(
        target: "mcp_support_desk",
        tool = %report.tool,
        status = shaped.status().as_str(),
        sql_queries,
        resolvers = %resolvers,
        shown = report.records.shown,
        total = report.records.total,
        text_tokens = report.tokens.text,
        structured_tokens = report.tokens.structured,
        envelope_text_tokens = report.envelope.text,
        envelope_structured_tokens = report.envelope.structured,
        cursor_chars = shaped.next().map_or(0, str::len),
        "call"
    );
}

/// The cursor signing key: `SHAPE_CURSOR_KEY`, or 32 bytes from the operating system.
fn cursor_keys() -> Result<CursorKeys, Box<dyn std::error::Error>> {
    if let Ok(key) = std::env::var("SHAPE_CURSOR_KEY") {
        return Ok(CursorKeys::new(key.as_bytes())?);
    }
    Ok(CursorKeys::random()?)
}

/// The default handle policy; `SHAPE_HANDLE_TTL_SECS` shortens the TTL (the soak example
/// expires handles with it).
fn handle_policy() -> HandlePolicy {
    let default = HandlePolicy::default();
    HandlePolicy {
        ttl_secs: std::env::var("SHAPE_HANDLE_TTL_SECS")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(default.ttl_secs),
        ..default
    }
}

/// `--http ADDR` and `--redis URL`, as given.
struct Flags {
    http: Option<String>,
    redis: Option<String>,
}

fn flags() -> Result<Flags, String> {
    let mut flags = Flags {
        http: None,
        redis: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = |name: &str, v: Option<String>| v.ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--http" => flags.http = Some(value("--http", args.next())?),
            "--redis" => flags.redis = Some(value("--redis", args.next())?),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; use --http ADDR, --redis URL"
                ));
            }
        }
    }
    if cfg!(not(feature = "http")) && (flags.http.is_some() || flags.redis.is_some()) {
        return Err("--http and --redis need feature `http`".to_owned());
    }
    Ok(flags)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let started = std::time::Instant::now();
    let flags = flags()?;
    let db = DeskDb::seeded()?;
    let ttl = std::time::Duration::from_secs(handle_policy().ttl_secs);
    // Positions held by the server, so a cursor is 20 characters whatever the keyset; they
    // last as long as a stored result.
    let (store, codec) = match &flags.redis {
        #[cfg(feature = "http")]
        Some(url) => {
            let mut store =
                toolshape::handle::RedisStore::builder(url.as_str()).owner_key(owner_key()?);
            if let Some(mib) = std::env::var("SHAPE_DECODED_CACHE_MIB")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
            {
                store = store.decoded_cache_bytes(mib << 20);
            }
            let store = store.connect().await?;
            let positions = toolshape::cursor::RedisCursorStore::builder(url)
                .ttl(ttl)
                .connect()?;
            (
                Store::Redis(store),
                CursorCodec::new(cursor_keys()?).held_in(positions),
            )
        }
        _ => (
            Store::Memory(MemoryStore::default()),
            CursorCodec::new(cursor_keys()?).held_in(MemoryCursorStore::new(100_000, ttl)),
        ),
    };
    let desk = Desk {
        db,
        store,
        policy: handle_policy(),
        codec: Arc::new(codec),
        today: Day::parse(desk_db::TODAY).ok_or("the seed's date does not parse")?,
        session: Session::new(),
    };
    let session = desk.session.clone();
    tracing::info!(
        target: "mcp_support_desk",
        tickets = desk_db::TICKETS,
        users = desk_db::USERS,
        organizations = desk_db::ORGS,
        seed_ms = started.elapsed().as_millis() as u64,
        "database seeded; serving MCP on stdio"
    );
    let server = DeskServer::new(desk);
    #[cfg(feature = "http")]
    if let Some(addr) = &flags.http {
        serve_http(server, addr).await?;
        session.summary().emit();
        return Ok(());
    }
    let service = server
        // Every request answered, a line rmcp cannot parse (nested too deep, too long) too.
        .serve(mcp::guarded(rmcp::transport::stdio()))
        .await?;
    service.waiting().await?;
    session.summary().emit();
    Ok(())
}

/// Serves `/mcp` on `addr` over streamable HTTP, stateless: no session is kept between
/// requests, so any replica can answer any call; answers are plain JSON (no event stream).
/// Until the process is stopped.
#[cfg(feature = "http")]
async fn serve_http(server: DeskServer, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_origins(mcp::Access::LOOPBACK_ORIGINS);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let app = access()?.protect(axum::Router::new().nest_service("/mcp", service));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(target: "mcp_support_desk", addr, "serving MCP over streamable HTTP at /mcp");
    axum::serve(listener, app).await?;
    Ok(())
}

/// Who may call: each principal of `SHAPE_TOKENS` (`alice=token,bob=token`) by its bearer
/// token, its results and cursors its own; without it, anyone (the server is for its own
/// machine: loopback Host names and origins only), as one principal.
#[cfg(feature = "http")]
fn access() -> Result<mcp::Access, Box<dyn std::error::Error>> {
    let Ok(listed) = std::env::var("SHAPE_TOKENS") else {
        return Ok(mcp::Access::anyone());
    };
    Ok(mcp::Access::new().tokens(&listed)?)
}

/// The principal a request is made for (its bearer token's, over HTTP), else the one client of
/// this stdio process.
fn owner(context: &RequestContext<RoleServer>) -> String {
    mcp::Principal::of(context).map_or_else(|| OWNER.to_owned(), |p| p.as_str().to_owned())
}

/// The key the Redis store tags owners with, derived from `SHAPE_CURSOR_KEY`, which every
/// replica sharing the store must be given anyway (it signs the cursors they accept).
#[cfg(feature = "http")]
fn owner_key() -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    match std::env::var("SHAPE_CURSOR_KEY") {
        Ok(key) => Ok(format!("owner:{key}").into_bytes()),
        Err(_) => Err(
            "--redis needs SHAPE_CURSOR_KEY (the same 16+ bytes on every replica): \
             it signs the cursors and keys the owner tags they share"
                .into(),
        ),
    }
}
