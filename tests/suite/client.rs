//! An rmcp client over an in-process pipe to `mcp::Harness` in front of a test's server, as
//! the harness, quoting, untyped-answer and configured-input tests drive it: one way to
//! connect, call and read what the model reads.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use toolshape::config::ShapeConfig;
use toolshape::mcp;

pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>;

/// A client named `name` connected to the harness in front of `server`, shaped by `config`.
pub async fn connect<H: ServerHandler>(server: H, config: ShapeConfig, name: &str) -> Client {
    connect_to(mcp::Harness::new(server, config).unwrap(), name).await
}

/// A client named `name` connected to `harness` (a test that keeps a clone of it, to
/// reload its configuration, say).
pub async fn connect_to<H: ServerHandler>(harness: mcp::Harness<H>, name: &str) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 24);
    tokio::spawn(async move {
        if let Ok(server) = harness.serve(server_end).await {
            let _ = server.waiting().await;
        }
    });
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, "1.0"),
    )
    .serve(client_end)
    .await
    .unwrap()
}

/// Calls `tool` with `args` (an object, else none).
pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(args) = args {
        params = params.with_arguments(args);
    }
    client.call_tool(params).await.unwrap()
}

/// The text channel: every text block, joined by newlines.
pub use shape_examples::read::text;

/// A two-thread Tokio runtime for a test's client and server.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The cursor a model reads for the next page: `next` in the structured channel, else the
/// text's `next:` line.
pub fn next_of(page: &CallToolResult) -> Option<String> {
    if let Some(s) = &page.structured_content {
        return s["next"].as_str().map(str::to_owned);
    }
    text(page)
        .lines()
        .find_map(|l| l.strip_prefix("next: same call with cursor="))
        .map(str::to_owned)
}

/// Every page of `tool`'s walk through `next`, each called with `args` (and the cursor).
pub async fn walk(client: &Client, tool: &str, args: Value) -> Vec<CallToolResult> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..3_000 {
        let mut args = args.clone();
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = call(client, tool, args).await;
        let next = next_of(&page);
        pages.push(page);
        match next {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
    panic!("`next` did not end");
}

/// The handle a page stored its whole result under, as the client's model reads it:
/// `omitted.handle` in `structuredContent`, else the text's `handle=h_…` (or the first
/// `h_…` it names, as a JSON text channel writes the envelope).
pub fn handle_of(result: &CallToolResult) -> String {
    if let Some(handle) = result
        .structured_content
        .as_ref()
        .and_then(|s| s["omitted"]["handle"].as_str())
    {
        return handle.to_owned();
    }
    let said = text(result);
    let at = said
        .find("handle=h_")
        .map(|i| i + "handle=".len())
        .or_else(|| said.find("h_"))
        .unwrap_or_else(|| panic!("no handle in {said}"));
    let rest = &said[at + 2..];
    let id: String = rest
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    format!("h_{id}")
}
