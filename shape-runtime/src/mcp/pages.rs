//! Paging, storing and `open_result` for a typed rmcp server, held in one value ([`Pages`]):
//! what a tool needs beyond its record type and its query.

use super::harness::{CURSOR_ARGUMENT, CursorArgument, cursor_argument};
use crate::cursor::{CursorCodec, CursorKeys, QueryHash};
use crate::handle::id::OPEN_RESULT;
use crate::handle::{HandlePolicy, HandleStore, Keep, MemoryStore, OpenResult};
use crate::page::Shaped;
use crate::shaper::{Call, Shaper, Stored};
use rmcp::RoleServer;
use rmcp::handler::server::router::tool::ToolRoute;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// What a typed rmcp server needs to page its tools' answers, store what a page cut and answer
/// `open_result` on it: the cursor keys, the store of results (in memory by default), the
/// policy of when to store, the principal results belong to (each request's, else one client
/// a process) and how `open_result` answers. Held once by the server and shared.
///
/// A tool answers with [`page`](Pages::page); the server's router gets the `open_result` tool
/// from [`open_result_route`](Pages::open_result_route).
///
/// ```
/// use toolshape::{Budget, Shaper, ToolResult, cursor::CursorKeys, mcp::Pages};
///
/// #[derive(ToolResult, Clone)]
/// #[shape(name = "city", plural = "cities", prose = "{name}")]
/// struct City {
///     #[shape(id)]
///     name: String,
/// }
///
/// let pages = Pages::new(CursorKeys::random().unwrap());
/// let cities: Vec<City> = (0..500).map(|i| City { name: format!("c{i:03}") }).collect();
/// let shaper = Shaper::for_tool("list_cities").budget(Budget::tokens(200));
/// let args = serde_json::json!({ "cursor": null });
/// let page = block_on(pages.page_for(&shaper, None, &args, &cities));
/// assert!(page.frame().omitted.handle.is_some(), "the whole result is stored");
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub struct Pages<S = MemoryStore> {
    codec: Arc<CursorCodec>,
    store: S,
    policy: HandlePolicy,
    owner: String,
    open: Shaper,
}

impl Pages<MemoryStore> {
    /// Pages whose cursors are signed with `keys` (the same on every replica), results stored
    /// in memory, stored when a result is more than the policy's default factor of budgets,
    /// for one principal (`mcp`: the client that started the process).
    pub fn new(keys: CursorKeys) -> Self {
        Pages {
            codec: Arc::new(CursorCodec::new(keys)),
            store: MemoryStore::default(),
            policy: HandlePolicy::default(),
            owner: "mcp".to_owned(),
            open: Shaper::for_tool(OPEN_RESULT),
        }
    }
}

impl<S: HandleStore> Pages<S> {
    /// Stores results in `store` (a shared one, such as `RedisStore`, for replicas, with a
    /// shared [`cursor_store`](Self::cursor_store)).
    pub fn store<T: HandleStore>(self, store: T) -> Pages<T> {
        Pages {
            codec: self.codec,
            store,
            policy: self.policy,
            owner: self.owner,
            open: self.open,
        }
    }

    /// When a result is stored, for how long, and how large it may be.
    pub fn policy(mut self, policy: HandlePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Holds in `store` the cursor positions a page holds rather than writes into its cursor
    /// (a shared one, such as `RedisCursorStore`, for replicas: else they are held in this
    /// process's memory, and a later page asked of another replica reads "no longer held").
    /// Replicas need this, the same cursor keys and a shared result store.
    pub fn cursor_store(mut self, store: impl crate::cursor::CursorStore + 'static) -> Self {
        self.codec = Arc::new(CursorCodec::clone(&self.codec).held_in(store));
        self
    }

    /// The principal stored results belong to when a request names none (default `mcp`:
    /// the client that started a stdio process). Over HTTP behind an
    /// [`Access`](super::Access) layer (or any layer that sets a [`Principal`](super::Principal)),
    /// each request's principal owns what its calls store and the cursors they hand out;
    /// another principal's handle reads as one that never existed.
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// How `open_result` answers (budget, format); its tool name stays `open_result`.
    pub fn open_shaper(mut self, shaper: Shaper) -> Self {
        self.open = shaper;
        self
    }

    /// The store results are kept in.
    pub fn results(&self) -> &S {
        &self.store
    }

    /// The page of `source` that answers a tool call: set for the client of `context` (its
    /// profile and its own cuts), at the cursor `args` carries under `cursor` (bound to the
    /// other arguments, so a cursor of another query is refused), and the whole result stored
    /// behind a handle when it is worth it (the page names the handle; `open_result` reopens
    /// it). A bad cursor or a failure is an error page with its remedy, never a panic.
    pub async fn page<A, R>(
        &self,
        shaper: &Shaper,
        context: &RequestContext<RoleServer>,
        args: &A,
        source: R,
    ) -> Shaped
    where
        A: Serialize + ?Sized,
        R: Stored,
    {
        match self.call(shaper, context, args) {
            Ok(call) => self.shape(call, source).await,
            Err(page) => *page,
        }
    }

    /// [`page`](Self::page) for the client that sent `client` as `clientInfo.name` (`None`:
    /// unknown), outside a request (a test, a transport of your own).
    pub async fn page_for<A, R>(
        &self,
        shaper: &Shaper,
        client: Option<&str>,
        args: &A,
        source: R,
    ) -> Shaped
    where
        A: Serialize + ?Sized,
        R: Stored,
    {
        match self.call_for(shaper, client, args) {
            Ok(call) => self.shape(call, source).await,
            Err(page) => *page,
        }
    }

    /// The call [`page`](Self::page) makes, to set before the rows are read: for a tool
    /// that reads its rows from where the cursor stands (`after_keyset`), counts a `total`
    /// or states an `aggregate`. Then [`shape`](Self::shape) it. `Err` is the page to answer
    /// with (a cursor or arguments that do not parse), as `page` would, boxed.
    ///
    /// ```
    /// # use toolshape::{Shaper, ToolResult, cursor::CursorKeys, mcp::Pages};
    /// # #[derive(ToolResult)]
    /// # #[shape(name = "ticket", plural = "tickets")]
    /// # struct Ticket { #[shape(id)] id: u32 }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let pages = Pages::new(CursorKeys::new(b"sixteen bytes or more!").unwrap());
    /// let shaper = Shaper::for_tool("search_tickets");
    /// let args = serde_json::json!({ "status": "open" });
    /// // 2 of the 1,204 open tickets, as a database would answer a page of them.
    /// let rows = vec![Ticket { id: 1 }, Ticket { id: 2 }];
    /// let page = match pages.call_for(&shaper, None, &args) {
    ///     Ok(call) => pages.shape(call.total(1_204), &rows).await,
    ///     Err(page) => *page,
    /// };
    /// assert!(page.summary().contains("1,204"), "{}", page.summary());
    /// # });
    /// ```
    pub fn call_for<'a, A>(
        &self,
        shaper: &Shaper,
        client: Option<&str>,
        args: &A,
    ) -> Result<Call<'a>, Box<Shaped>>
    where
        A: Serialize + ?Sized,
    {
        self.call_as(shaper, client, &self.owner, args)
    }

    /// [`call_for`](Self::call_for) made for `principal`: its cursor bound to it, what it
    /// cuts stored for it.
    fn call_as<'a, A>(
        &self,
        shaper: &Shaper,
        client: Option<&str>,
        principal: &str,
        args: &A,
    ) -> Result<Call<'a>, Box<Shaped>>
    where
        A: Serialize + ?Sized,
    {
        let shaper = super::for_client(shaper, client);
        let mut args = match serde_json::to_value(args) {
            Ok(Value::Object(args)) => args,
            Ok(Value::Null) => JsonObject::new(),
            Ok(other) => {
                return Err(Box::new(shaper.error(
                    &format!("the tool's arguments are {other}, not an object"),
                    "call again with an object of arguments",
                )));
            }
            Err(e) => return Err(Box::new(shaper.error(&e.to_string(), "call again"))),
        };
        // Every cursor a `Pages` tool takes is this library's.
        let cursor = match cursor_argument(args.remove(CURSOR_ARGUMENT).as_ref(), |_| true, false) {
            CursorArgument::Absent | CursorArgument::FirstPage | CursorArgument::Tool => None,
            CursorArgument::Library(cursor) => Some(cursor),
            CursorArgument::NotACursor(what, remedy) => {
                return Err(Box::new(shaper.error(&what, remedy)));
            }
        };
        let query = QueryHash::of(shaper.tool(), &args)
            .map_err(|e| Box::new(shaper.error(&e.to_string(), "call again")))?
            .for_principal(principal);
        let mut call = shaper
            .call()
            .paginate(Arc::clone(&self.codec), query, cursor.as_deref())
            .map_err(|e| Box::new(shaper.cursor_error(&e)))?;
        call.principal = Some(principal.to_owned());
        Ok(call)
    }

    /// [`call_for`](Self::call_for) for the client of `context`.
    pub fn call<'a, A>(
        &self,
        shaper: &Shaper,
        context: &RequestContext<RoleServer>,
        args: &A,
    ) -> Result<Call<'a>, Box<Shaped>>
    where
        A: Serialize + ?Sized,
    {
        let owner = super::access::owner_of(context, &self.owner);
        self.call_as(shaper, super::client_name(context).as_deref(), &owner, args)
    }

    /// The page of `call` (from [`call`](Self::call)) over `source`, what it cuts stored as
    /// [`page`](Self::page) stores it.
    pub async fn shape<R: Stored>(&self, call: Call<'_>, source: R) -> Shaped {
        let owner = call.principal.clone().unwrap_or_else(|| self.owner.clone());
        let keep = Keep::new(&self.store, &owner, &self.policy);
        let shaper = call.shaper().clone();
        match call.shape_or_store(source, keep).await {
            Ok(page) => page,
            Err(e) => shaper.error(&e.to_string(), "call again"),
        }
    }

    /// The answer of `open_result` to `args`, for the client of `context`.
    pub async fn open_result(
        &self,
        context: &RequestContext<RoleServer>,
        args: JsonObject,
    ) -> Shaped {
        let shaper = super::shaper_for(&self.open, context);
        OpenResult::new(&self.store, Arc::clone(&self.codec))
            .shaper(shaper)
            .call(
                &super::access::owner_of(context, &self.owner),
                Value::Object(args),
            )
            .await
    }

    /// The `open_result` tool for a server's router, answering from the `Pages` that `pages`
    /// finds in the server: `Self::tool_router().with_route(Pages::open_result_route(|s:
    /// &Desk| &s.pages))`.
    pub fn open_result_route<Server>(
        pages: impl Fn(&Server) -> &Self + Send + Sync + 'static,
    ) -> ToolRoute<Server>
    where
        Server: Send + Sync + 'static,
        S: 'static,
    {
        let pages = Arc::new(pages);
        ToolRoute::new_dyn(super::listing::open_result_tool(), move |context| {
            let pages = Arc::clone(&pages);
            Box::pin(async move {
                let shaped = pages(context.service)
                    .open_result(
                        &context.request_context,
                        context.arguments.unwrap_or_default(),
                    )
                    .await;
                Ok(CallToolResult::from(&shaped).into())
            })
        })
    }
}
