//! `toolshape-proxy preview`: what one call becomes through the proxy, before anyone wires it
//! in. A recorded answer (`--recorded FILE`: an MCP `CallToolResult` as JSON, or any other
//! file as its text) or a live call of a configured upstream (`--config proxy.toml`) goes
//! through the same harness the proxy serves, as the client named by `--client` reads it;
//! the upstream's own answer is read beside it. It prints the tokens of the answer, of the
//! first page and of every page to the end (o200k), and the first page as the model reads it.

use crate::{Proxy, ProxyConfig};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use toolshape::ChannelPolicy;
use toolshape::config::ShapeConfig;
use toolshape::tokens::{Bpe, Tokenizer};

/// The most pages a preview reads; past it, it says more follow.
const MAX_PAGES: usize = 10_000;

/// What to preview.
#[derive(Debug, Clone, Default)]
pub struct PreviewOptions {
    /// The proxy's configuration, for a live call of one of its tools.
    pub config: Option<PathBuf>,
    /// A recorded answer: an MCP `CallToolResult` as JSON, or any other file as its text.
    pub recorded: Option<PathBuf>,
    /// The shaping configuration a recorded answer is shaped with (default: the defaults).
    pub shape: Option<PathBuf>,
    /// The tool (a recorded answer is served as this tool's).
    pub tool: String,
    /// The call's arguments.
    pub args: Map<String, Value>,
    /// The client's `clientInfo.name` (default `preview`: a client of unknown reading).
    pub client: Option<String>,
    /// A recorded server (`--server FILE`: its `serverInfo` and `tools`, as `tools/list`
    /// gives them), for a recorded answer to be served as that server's: the preset made for
    /// it is chosen and checked as the proxy would.
    pub server: Option<PathBuf>,
    /// The preset a recorded answer is shaped with (`--preset NAME`, or `none`); left out,
    /// the one made for the recorded server, if any.
    pub preset: Option<String>,
}

/// A server listing `tools` whose every call answers the recorded result: a recorded file's,
/// or a live upstream's one answer (so the upstream is called once, not again for the
/// harness).
#[derive(Clone)]
pub(crate) struct Recorded {
    pub(crate) tools: Arc<Vec<Tool>>,
    pub(crate) answer: Arc<CallToolResult>,
}

impl ServerHandler for Recorded {
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::clone(&self.answer).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A recorded server's file (`--server`): its `serverInfo` and its tools.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecordedServer {
    pub(crate) server_info: Implementation,
    pub(crate) tools: Vec<Tool>,
}

impl RecordedServer {
    pub(crate) fn read(path: &std::path::Path) -> Result<RecordedServer, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{} is not a server's serverInfo and tools: {e}",
                path.display()
            )
        })
    }
}

type Client = RunningService<RoleClient, ClientConfig>;

/// A client named `client` connected to `server` over an in-process pipe.
pub(crate) async fn connect<H: ServerHandler>(server: H, client: &str) -> Result<Client, String> {
    let (client_end, server_end) = tokio::io::duplex(1 << 24);
    tokio::spawn(async move {
        if let Ok(server) = server.serve(server_end).await {
            let _ = server.waiting().await;
        }
    });
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(client, "1.0"),
    )
    .serve(client_end)
    .await
    .map_err(|e| format!("could not connect: {e}"))
}

async fn call(
    client: &Client,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<CallToolResult, String> {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args.clone()))
        .await
        .map_err(|e| format!("`{tool}`: {e}"))
}

/// The text blocks of `result`, joined by newlines.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A page's cursor to the next: the structured envelope's `next`, else the text's.
fn next_of(page: &CallToolResult) -> Option<String> {
    if let Some(next) = page
        .structured_content
        .as_ref()
        .and_then(|s| s["next"].as_str())
    {
        return Some(next.to_owned());
    }
    text(page)
        .lines()
        .find_map(|l| l.strip_prefix("next: same call with cursor="))
        .map(|c| c.trim().to_owned())
}

/// What the model reads of `page` in each channel the client is sent: (channel, text).
fn read(page: &CallToolResult, profile: ChannelPolicy) -> Vec<(&'static str, String)> {
    let structured = page.structured_content.as_ref().map(Value::to_string);
    match (profile, structured) {
        (ChannelPolicy::Structured, Some(s)) if page.is_error != Some(true) => {
            vec![("structured", s)]
        }
        (ChannelPolicy::Both, Some(s)) => vec![("text", text(page)), ("structured", s)],
        _ => vec![("text", text(page))],
    }
}

/// `toolshape-proxy preview`: the report, for a person.
pub async fn preview(options: &PreviewOptions) -> Result<String, String> {
    let client = options.client.as_deref().unwrap_or("preview");
    match (&options.recorded, &options.config) {
        (Some(file), None) => {
            let bytes =
                std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let result = |value: Value| {
                serde_json::from_value::<CallToolResult>(value)
                    .ok()
                    .filter(|r| !r.content.is_empty() || r.structured_content.is_some())
            };
            let mut options = options.clone();
            // A recorded call (`{"tool", "arguments", "result"}`, as `record_presets.py`
            // writes them): its answer, and its tool unless `--tool` names another; else a
            // `CallToolResult`; else the file as text.
            let answer = match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(mut call))
                    if call.get("tool").is_some_and(Value::is_string)
                        && call.contains_key("result") =>
                {
                    if options.tool.is_empty() {
                        options.tool = call["tool"].as_str().unwrap_or_default().to_owned();
                    }
                    call.remove("result").and_then(result)
                }
                Ok(value) => result(value),
                Err(_) => None,
            }
            .unwrap_or_else(|| {
                CallToolResult::success(vec![ContentBlock::text(
                    String::from_utf8_lossy(&bytes).into_owned(),
                )])
            });
            if options.tool.is_empty() {
                return Err("name the tool with --tool".to_owned());
            }
            let options = &options;
            let mut shape = match &options.shape {
                Some(path) => ShapeConfig::from_path(path).map_err(|e| e.to_string())?,
                None => ShapeConfig::default(),
            };
            let server = match &options.server {
                Some(path) => Some(RecordedServer::read(path)?),
                None => None,
            };
            let tools = match &server {
                Some(server) => server.tools.clone(),
                None => {
                    let schema =
                        Arc::new(Map::from_iter([("type".to_owned(), Value::from("object"))]));
                    vec![Tool::new(
                        options.tool.clone(),
                        "the recorded answer",
                        schema,
                    )]
                }
            };
            let info = server.map(|s| s.server_info);
            let mut out = String::new();
            // Chosen as the proxy chooses: by the name the server gives itself.
            let name = info.as_ref().map(|i| i.name.as_str());
            if let Some(preset) = crate::presets::choose(options.preset.as_deref(), name)? {
                let listed = options.server.is_some().then_some(tools.as_slice());
                let applied = crate::presets::apply(&mut shape, preset, "", listed)?;
                let used = if applied.added.contains(&options.tool) {
                    "shapes this tool"
                } else if applied.yours.contains(&options.tool) {
                    "does not shape this tool: your configuration does"
                } else {
                    "has nothing for this tool"
                };
                out.push_str(&format!("the preset `{}` {used}\n", preset.name));
            }
            let server = Recorded {
                tools: Arc::new(tools),
                answer: Arc::new(answer),
            };
            let walk = walk(server, shape, &options.tool, &options.args, client).await?;
            out.push_str(&report(&walk, &options.tool, client));
            Ok(out)
        }
        (None, Some(config)) => {
            if options.preset.is_some() || options.server.is_some() {
                return Err(
                    "--preset and --server are for a recorded answer; a live upstream's preset is its configuration's"
                        .to_owned(),
                );
            }
            let (config, mut shape) = ProxyConfig::load(config).map_err(|e| e.to_string())?;
            let proxy = Proxy::start(&config, Duration::from_secs(60)).await;
            let mut out = String::new();
            for sentence in proxy
                .apply_presets(&mut shape)
                .await
                .map_err(|e| e.to_string())?
            {
                out.push_str(&sentence);
                out.push('\n');
            }
            let walk = walk(proxy, shape, &options.tool, &options.args, client).await?;
            out.push_str(&report(&walk, &options.tool, client));
            Ok(out)
        }
        _ => Err("give either --recorded FILE or --config proxy.toml".to_owned()),
    }
}

/// One call through the harness and straight to the server, side by side.
pub(crate) struct Walk {
    /// The server's own answer.
    pub(crate) raw: CallToolResult,
    /// Its tokens (o200k): its structured content's JSON when it has some, else its text.
    pub(crate) raw_tokens: usize,
    /// The pages through the harness, the first to the last (or the [`MAX_PAGES`]th).
    pub(crate) pages: Vec<CallToolResult>,
    /// Whether more pages followed the last one read.
    pub(crate) more: bool,
    /// The channels the client reads.
    pub(crate) profile: ChannelPolicy,
}

impl Walk {
    /// The tokens the client reads of the pages in `channel`.
    pub(crate) fn read_tokens(&self, channel: &str) -> usize {
        let o200k = Bpe::o200k_base();
        self.pages
            .iter()
            .flat_map(|p| read(p, self.profile))
            .filter(|(c, _)| *c == channel)
            .map(|(_, s)| o200k.count(&s))
            .sum()
    }

    /// What the client reads of the pages, every channel, in order.
    #[cfg(test)]
    pub(crate) fn read_all(&self) -> String {
        self.pages
            .iter()
            .flat_map(|p| read(p, self.profile))
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The channel the client reads first (`structured` or `text`).
    #[cfg(test)]
    pub(crate) fn channel(&self) -> &'static str {
        read(&self.pages[0], self.profile)[0].0
    }
}

/// `tool` called with `args` straight to `server`, then its answer through the harness
/// with `shape`, as `client` reads it, page after page (up to [`MAX_PAGES`]).
pub(crate) async fn walk<H: ServerHandler>(
    server: H,
    shape: ShapeConfig,
    tool: &str,
    args: &Map<String, Value>,
    client: &str,
) -> Result<Walk, String> {
    walk_up_to(server, shape, (tool, args), client, MAX_PAGES).await
}

/// [`walk`], reading at most `most` pages.
async fn walk_up_to<H: ServerHandler>(
    server: H,
    shape: ShapeConfig,
    (tool, args): (&str, &Map<String, Value>),
    client: &str,
    most: usize,
) -> Result<Walk, String> {
    let o200k = Bpe::o200k_base();
    let profile = toolshape::clients::reader(Some(client), &shape.clients).profile;
    let direct = connect(server, client).await?;
    let tools = direct
        .list_all_tools()
        .await
        .map_err(|e| format!("listing the tools: {e}"))?;
    let raw = call(&direct, tool, args).await?;
    let _ = direct.cancel().await;
    let raw_text = raw
        .structured_content
        .as_ref()
        .map_or_else(|| text(&raw), Value::to_string);
    let raw_tokens = o200k.count(&raw_text);
    // The answer as the upstream gave it, through the harness: the tool is called once.
    let replay = Recorded {
        tools: Arc::new(tools),
        answer: Arc::new(raw.clone()),
    };
    let harness = toolshape::mcp::Harness::new(replay, shape).map_err(|e| e.to_string())?;
    let shaped = connect(harness, client).await?;
    let mut pages = Vec::new();
    let mut args = args.clone();
    let mut more = false;
    loop {
        let page = call(&shaped, tool, &args).await?;
        let next = next_of(&page);
        pages.push(page);
        match next {
            Some(_) if pages.len() == most => {
                more = true;
                break;
            }
            Some(cursor) => {
                args.insert("cursor".to_owned(), Value::from(cursor));
            }
            None => break,
        }
    }
    let _ = shaped.cancel().await;
    Ok(Walk {
        raw,
        raw_tokens,
        pages,
        more,
        profile,
    })
}

/// The walk, for a person.
fn report(walk: &Walk, tool: &str, client: &str) -> String {
    let o200k = Bpe::o200k_base();
    let Walk {
        raw,
        raw_tokens,
        pages,
        more,
        profile,
    } = walk;
    let (raw_tokens, more, profile) = (*raw_tokens, *more, *profile);
    let profile_name = match profile {
        ChannelPolicy::Both => "both",
        ChannelPolicy::Text => "text",
        ChannelPolicy::Structured => "structured",
    };
    let mut out = format!(
        "`{tool}` as a client named `{client}` reads it (profile {profile_name}), counted in o200k\n"
    );
    out.push_str(&format!(
        "the upstream's answer: {raw_tokens} tokens{}\n",
        if raw.is_error == Some(true) {
            " (an error)"
        } else {
            ""
        }
    ));
    let first = read(&pages[0], profile);
    for (channel, seen) in &first {
        let whole = walk.read_tokens(channel);
        let ratio = if raw_tokens == 0 {
            String::new()
        } else {
            format!(" ({:.2}× the answer)", whole as f64 / raw_tokens as f64)
        };
        let walked = if more {
            format!(
                "its first {} pages (more follow, not read), {whole} tokens{ratio}",
                pages.len()
            )
        } else {
            format!(
                "{} page{} to read it whole, {whole} tokens{ratio}",
                pages.len(),
                if pages.len() == 1 { "" } else { "s" }
            )
        };
        out.push_str(&format!(
            "{channel}: the first page {} tokens; {walked}\n",
            o200k.count(seen)
        ));
    }
    for (channel, seen) in first {
        out.push_str(&format!("\n--- the first page, {channel} ---\n{seen}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded answer of 300 lines through the harness as Claude Code reads it: the first
    /// page's JSON, the pages to the end, and every line of the answer among them.
    #[test]
    fn a_recorded_answer_is_shown_as_the_model_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (0..300)
            .map(|i| format!("line {i}: step {i} done"))
            .collect();
        let recorded = dir.path().join("answer.json");
        let answer = CallToolResult::success(vec![ContentBlock::text(lines.join("\n"))]);
        std::fs::write(&recorded, serde_json::to_string(&answer).unwrap()).unwrap();
        let shape = dir.path().join("shape.toml");
        std::fs::write(&shape, "[defaults]\nbudget = 500\n").unwrap();
        let options = PreviewOptions {
            recorded: Some(recorded),
            shape: Some(shape),
            tool: "build_log".to_owned(),
            client: Some("claude-code".to_owned()),
            ..PreviewOptions::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let shown = runtime.block_on(preview(&options)).unwrap();
        let o200k = Bpe::o200k_base();
        let raw = o200k.count(&lines.join("\n"));
        assert!(
            shown.starts_with(&format!(
                "`build_log` as a client named `claude-code` reads it (profile structured), counted in o200k\nthe upstream's answer: {raw} tokens\nstructured: the first page "
            )),
            "{shown}"
        );
        let (head, page) = shown
            .split_once("\n--- the first page, structured ---\n")
            .unwrap();
        let first: usize = head
            .split("the first page ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert_eq!(first, o200k.count(page.trim_end_matches('\n')), "{head}");
        assert!(first <= 500, "{head}");
        let envelope: Value = serde_json::from_str(page.trim_end()).unwrap();
        assert_eq!(envelope["status"], "partial", "{page}");
        let pages: usize = head
            .split("; ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(pages >= 3, "{head}");
        // An answer as text, not JSON: the same file's text.
        let plain = dir.path().join("answer.txt");
        std::fs::write(&plain, lines.join("\n")).unwrap();
        let options = PreviewOptions {
            recorded: Some(plain),
            tool: "build_log".to_owned(),
            client: Some("open-webui".to_owned()),
            ..PreviewOptions::default()
        };
        let shown = runtime.block_on(preview(&options)).unwrap();
        assert!(shown.contains("(profile text)"), "{shown}");
        assert!(
            shown.contains(&format!(
                "the upstream's answer: {raw} tokens\ntext: the first page "
            )),
            "{shown}"
        );
        assert!(shown.contains("--- the first page, text ---\n"), "{shown}");
        assert!(!shown.contains("--- the first page, structured"), "{shown}");
        let neither = runtime
            .block_on(preview(&PreviewOptions::default()))
            .unwrap_err();
        assert!(neither.contains("--recorded"), "{neither}");
    }

    /// The pages a preview reads stop at its cap: an answer of exactly as many pages is read
    /// whole; one page more, and the report says more follow and gives the pages it read.
    #[test]
    fn a_walk_stops_at_its_cap_and_says_so() {
        let lines: Vec<String> = (0..400)
            .map(|i| format!("row {i} of a long answer"))
            .collect();
        let schema = Arc::new(Map::from_iter([("type".to_owned(), Value::from("object"))]));
        let server = Recorded {
            tools: Arc::new(vec![Tool::new("rows", "rows", schema)]),
            answer: Arc::new(CallToolResult::success(vec![ContentBlock::text(
                lines.join("\n"),
            )])),
        };
        let shape = || ShapeConfig::from_toml_str("[defaults]\nbudget = 300\n").unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let args = Map::new();
        let up_to = |most| {
            runtime
                .block_on(walk_up_to(
                    server.clone(),
                    shape(),
                    ("rows", &args),
                    "mcp",
                    most,
                ))
                .unwrap()
        };
        let whole = up_to(MAX_PAGES);
        let n = whole.pages.len();
        assert!(n > 3 && !whole.more, "{n}");
        for most in [n, n + 1] {
            let walk = up_to(most);
            assert_eq!((walk.pages.len(), walk.more), (n, false), "{most}");
            assert!(report(&walk, "rows", "mcp").contains(&format!("{n} pages to read it whole")));
        }
        let short = up_to(n - 1);
        assert_eq!((short.pages.len(), short.more), (n - 1, true));
        let said = report(&short, "rows", "mcp");
        assert!(
            said.contains(&format!(
                "its first {} pages (more follow, not read)",
                n - 1
            )),
            "{said}"
        );
        assert!(!said.contains("to read it whole"), "{said}");
    }

    /// A live upstream is called once: the harness reads its one answer again, never the
    /// upstream (a tool with effects is not run twice by a preview).
    #[test]
    fn the_upstream_is_called_once() {
        #[derive(Clone, Default)]
        struct Counting(Arc<std::sync::atomic::AtomicUsize>);
        impl ServerHandler for Counting {
            async fn call_tool(
                &self,
                _request: CallToolRequestParams,
                _context: RequestContext<RoleServer>,
            ) -> Result<CallToolResponse, ErrorData> {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let lines: Vec<String> = (0..300).map(|i| format!("row {i}")).collect();
                Ok(CallToolResult::success(vec![ContentBlock::text(lines.join("\n"))]).into())
            }
            async fn list_tools(
                &self,
                _request: Option<PaginatedRequestParams>,
                _context: RequestContext<RoleServer>,
            ) -> Result<ListToolsResult, ErrorData> {
                let schema = Arc::new(Map::from_iter([("type".to_owned(), Value::from("object"))]));
                Ok(ListToolsResult::with_all_items(vec![Tool::new(
                    "rows", "rows", schema,
                )]))
            }
            fn get_info(&self) -> ServerConfig {
                ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            }
        }
        let counting = Counting::default();
        let calls = Arc::clone(&counting.0);
        let shape = ShapeConfig::from_toml_str("[defaults]\nbudget = 300\n").unwrap();
        let options = PreviewOptions {
            tool: "rows".to_owned(),
            ..PreviewOptions::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let walked = runtime
            .block_on(walk(
                counting,
                shape,
                &options.tool,
                &options.args,
                "preview",
            ))
            .unwrap();
        let shown = report(&walked, &options.tool, "preview");
        assert!(shown.contains("pages to read it whole"), "{shown}");
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{shown}"
        );
    }
}
