//! MCP integration (feature `rmcp`): rmcp answers, output schemas and channel profiles.
//!
//! MCP integration (feature `rmcp`): a [`Shaped`] result answers an `rmcp` tool call, the
//! envelope's JSON Schema is the tool's `outputSchema`, and the budget gives the `tools/list`
//! entry a result-size hint.
//!
//! A shaped result becomes a [`CallToolResult`] in the form its client's model reads, by the
//! answer's channel profile ([`Shaped::channels`], chosen per session from the client's name
//! as [`tools_for`] reads it (it asks [`clients::reader`](crate::clients::reader)), or per tool in
//! configuration):
//!
//! | profile | `content` (one text block) | `structuredContent` | `outputSchema` in `tools/list` |
//! |---|---|---|---|
//! | [`ChannelPolicy::Both`] (unknown clients) | the text channel | the envelope | yes |
//! | [`ChannelPolicy::Text`] | the text channel, with the whole budget | none | none ([`tools_for`]) |
//! | [`ChannelPolicy::Structured`] | the envelope's JSON, with the whole budget; an error's text channel | the envelope | yes |
//!
//! Serve over [`guarded`] (`server.serve(mcp::guarded(rmcp::transport::stdio()))`) so that
//! every request gets an answer: rmcp's own line transport drops a line it cannot parse (a
//! request nested past serde_json's depth limit, one over the length limit) without a reply.
//!
//! `isError` is set for error envelopes, whose text always carries the remedy by itself
//! (Claude Code shows only the text of an error). rmcp's own `Json<T>` writes compact JSON
//! into `content`; a client that shows the model only the text would then read JSON, not the
//! budgeted text channel, so this conversion keeps the two channels apart.
//!
//! **Key order.** rmcp holds `structuredContent` as a `serde_json::Value`, whose objects keep
//! their keys in order only under serde_json's `preserve_order` feature: this crate's `rmcp`
//! feature turns it on, so `structuredContent` reads `status`, `summary`, (`untrusted`,)
//! `data`, `omitted`, `next` in that order in every build that can write an MCP answer, and
//! an answer nobody described keeps its upstream's key order. (Your own `serde_json::Map`s
//! then keep insertion order too, as they would under any crate of the build that turns the
//! feature on.)
//!
//! ```
//! use rmcp::model::CallToolResult;
//! use toolshape::{Budget, Format, Shaper, ToolResult, mcp};
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
//! let rows = vec![City { name: "Lyon".into(), population: 522_000 }];
//! let shaped = Shaper::for_tool("list_cities")
//!     .budget(Budget::tokens(200))
//!     .format(Format::Prose)
//!     .shape_blocking(&rows)
//!     .unwrap();
//! let result = CallToolResult::from(shaped.clone());
//! assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some(shaped.text()));
//! assert_eq!(result.structured_content, Some(shaped.structured()));
//! assert_eq!(result.is_error, Some(false));
//!
//! // `#[tool(output_schema = mcp::output_schema::<City>(), meta = mcp::size_hint_meta(budget))]`
//! let schema = mcp::output_schema::<City>();
//! assert_eq!(schema["required"], serde_json::json!(["status", "summary", "data"]));
//! assert_eq!(mcp::size_hint_meta(Budget::tokens(200)).0["anthropic/maxResultSizeChars"], 1_600);
//! ```

mod access;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod harness;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod lines;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod listing;
mod pages;

pub use access::Principal;
#[cfg(feature = "http")]
pub use access::{Access, AccessError};
pub(crate) use harness::SHAPED_META_KEY;
pub use harness::{Harness, HarnessError};
pub use lines::{Guarded, guarded};
pub use listing::size_hint_meta;
pub(crate) use listing::{tool_for, tools_for_profile, with_size_hint};
pub use pages::Pages;

use crate::budget::channel::ChannelPolicy;
use crate::page::Shaped;
use crate::record::tool_result::ToolResult;
use crate::shaper::Shaper;
use rmcp::RoleServer;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject, Tool};
use rmcp::service::RequestContext;
use serde_json::Value;
use std::sync::Arc;

impl From<Shaped> for CallToolResult {
    fn from(shaped: Shaped) -> Self {
        call_tool_result(&shaped)
    }
}

impl From<&Shaped> for CallToolResult {
    fn from(shaped: &Shaped) -> Self {
        call_tool_result(shaped)
    }
}

/// A `#[tool]` method can return a [`Shaped`] directly.
impl IntoCallToolResult for Shaped {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(call_tool_result(&self).into())
    }
}

fn call_tool_result(shaped: &Shaped) -> CallToolResult {
    let profile = shaped.channels();
    let text = match profile {
        ChannelPolicy::Structured if !shaped.is_error() => shaped.structured_json(),
        _ => shaped.text(),
    };
    let content = vec![ContentBlock::text(text)];
    let mut result = if shaped.is_error() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if profile != ChannelPolicy::Text {
        result.structured_content = Some(shaped.structured());
    }
    // Marked as shaped: a layer in front of the tool (`Harness`) passes it through as it is.
    result
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(SHAPED_META_KEY.to_owned(), Value::Bool(true));
    result
}

/// `shaper` set for the client of a request: its profile and its own cuts in tokens, bytes
/// and lines ([`clients::reader`](crate::budget::clients::reader)); with no `clientInfo`, the default
/// profile, and the shaper's own cuts as they are.
pub fn shaper_for(shaper: &Shaper, context: &RequestContext<RoleServer>) -> Shaper {
    for_client(shaper, client_name(context).as_deref())
}

/// The `clientInfo.name` of a request's client, if it sent one.
pub(crate) fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context.client_info().map(|info| info.name)
}

/// `shaper` set for the client that sent `client` as `clientInfo.name`: its reading, or with
/// no name the default profile (the shaper's own cuts kept: none are known of the client).
pub(crate) fn for_client(shaper: &Shaper, client: Option<&str>) -> Shaper {
    match client {
        Some(_) => shaper
            .clone()
            .reading(crate::budget::clients::reader(client, &Default::default())),
        None => shaper
            .clone()
            .channels(crate::budget::clients::DEFAULT_PROFILE),
    }
}

/// The `tools/list` entries as the client of a request should see them, by its profile
/// ([`clients::reader`](crate::clients::reader) of its `clientInfo.name`, from the request's
/// `_meta` (protocol 2026-07-28, where each request names its client) or else from
/// `initialize`): a text reader ([`ChannelPolicy::Text`]) sees no `outputSchema`, since a tool
/// that declares one must answer with `structuredContent`, which is what a text-reading
/// client's answers leave out. For `list_tools`, which takes a `RequestContext<RoleServer>`.
pub fn tools_for(tools: Vec<Tool>, context: &RequestContext<RoleServer>) -> Vec<Tool> {
    let profile =
        crate::budget::clients::reader(client_name(context).as_deref(), &Default::default())
            .profile;
    tools_for_profile(tools, profile)
}

/// Writes the tool methods of a `ServerHandler` over a tool router (`call_tool`, `get_tool`,
/// and a `list_tools` that lists the router as each client should see it, [`tools_for`]): a
/// client whose model reads only the text gets no `outputSchema`, so its answers may leave
/// `structuredContent` out. In place of rmcp's `#[tool_handler(router = self.tool_router)]`,
/// name the router's field:
///
/// ```ignore
/// impl ServerHandler for Desk {
///     toolshape::mcp::tool_handler!(tool_router);
///     fn get_info(&self) -> ServerConfig { /* … */ }
/// }
/// ```
///
/// rmcp's attribute lists the router as it is, with no client in reach, and a `list_tools`
/// written inside a macro is not one it can see to leave out; this writes the three methods
/// it would, `list_tools` per client. Its `tools/list` carries no cache scope: the list
/// differs by client.
#[doc(hidden)]
#[macro_export]
macro_rules! __tool_handler {
    ($router:ident) => {
        async fn call_tool(
            &self,
            request: $crate::__private::rmcp::model::CallToolRequestParams,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::RoleServer,
            >,
        ) -> ::core::result::Result<
            $crate::__private::rmcp::model::CallToolResponse,
            $crate::__private::rmcp::ErrorData,
        > {
            let tcc = $crate::__private::rmcp::handler::server::tool::ToolCallContext::new(
                self, request, context,
            );
            self.$router.call(tcc).await
        }

        async fn list_tools(
            &self,
            _request: ::core::option::Option<
                $crate::__private::rmcp::model::PaginatedRequestParams,
            >,
            context: $crate::__private::rmcp::service::RequestContext<
                $crate::__private::rmcp::RoleServer,
            >,
        ) -> ::core::result::Result<
            $crate::__private::rmcp::model::ListToolsResult,
            $crate::__private::rmcp::ErrorData,
        > {
            let tools = $crate::mcp::tools_for(self.$router.list_all(), &context);
            ::core::result::Result::Ok(
                $crate::__private::rmcp::model::ListToolsResult::with_all_items(tools),
            )
        }

        fn get_tool(
            &self,
            name: &str,
        ) -> ::core::option::Option<$crate::__private::rmcp::model::Tool> {
            self.$router.get(name).cloned()
        }
    };
}

#[doc(inline)]
pub use crate::__tool_handler as tool_handler;

/// The `outputSchema` of a tool answering with records of `T`: the envelope (`status`,
/// `summary`, `T`'s projected records as `data` or as `fields` and `rows`, `omitted`, `next`,
/// and `untrusted` when `T` has untrusted fields) as a JSON Schema object, for
/// `#[tool(output_schema = mcp::output_schema::<Ticket>())]`. It describes both record forms
/// ([`StructuredForm`](crate::envelope::StructuredForm)), so the form can be chosen per client; error
/// envelopes validate against it too. Also usable to validate `structuredContent` in tests.
///
/// It declares draft-07 ([`schema::DIALECT`](crate::schema::DIALECT)) and uses draft-07's
/// keywords only, a row as an `items` array: the TypeScript SDK's default validator applies
/// draft-07 rules whatever a schema declares, and the Python SDK's reads the declared draft,
/// so both read the same schema (a 2020-12 row, `prefixItems` with `items: false`, made the
/// TypeScript SDK reject every row).
pub fn output_schema<T: ToolResult>() -> Arc<JsonObject> {
    crate::schema::as_object(crate::schema::envelope::<T>())
}

/// The `outputSchema` of a configured tool (`[tools.<tool>.records]`), as its answers to
/// `client` (`None`: any client) carry it: the envelope of its configured records, without
/// the fields the configuration hides from that client. `None` when the tool has no
/// configured records or is not in the configuration. What the harness lists for it, and
/// what a hand-written rmcp tool serving the configured projection declares:
///
/// ```
/// use toolshape::{config::ShapeConfig, mcp};
///
/// let config = ShapeConfig::from_toml_str(r#"
///     [tools.list_issues]
///     hide = ["title"]
///     [tools.list_issues.records]
///     fields = [{ from = "number", id = true }, { from = "title", untrusted = {} }]
/// "#).unwrap();
/// let schema = mcp::configured_output_schema(&config, "list_issues", None).unwrap();
/// assert_eq!(schema["properties"]["fields"]["const"], serde_json::json!(["number"]));
/// assert!(mcp::configured_output_schema(&config, "another_tool", None).is_none());
/// ```
pub fn configured_output_schema(
    config: &crate::config::ShapeConfig,
    tool: &str,
    client: Option<&str>,
) -> Option<Arc<JsonObject>> {
    let shaper = config.shaper_for_client(tool, client).ok()?;
    Some(configured_schema(&config.json_projection(tool)?, &shaper))
}

/// [`configured_output_schema`] of `projection` answered by `shaper` (its hidden fields left
/// out).
pub(crate) fn configured_schema(
    projection: &crate::configured::JsonProjection,
    shaper: &Shaper,
) -> Arc<JsonObject> {
    crate::schema::as_object(projection.envelope_schema(shaper.current_hide()))
}
