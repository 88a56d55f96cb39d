//! The proxy (`toolshape-proxy`) in front of an upstream served over streamable HTTP in this
//! process and one whose command does not exist: at start-up it names each `[tools.X]` of
//! the shaping configuration that no upstream lists (a warning, or with `strict` an error
//! that stops it); and a tool of the upstream that did not start answers with its reason,
//! not "no tool".

use crate::client::runtime;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use toolshape::config::ShapeConfig;
use toolshape_proxy::{Proxy, ProxyConfig, ProxyError, UpstreamSpec};

/// An upstream whose tools (`tools`) each answer their name and `says`.
#[derive(Clone)]
struct Toolbox {
    tools: &'static [&'static str],
    says: &'static str,
}

/// Two tools, `get_time` and `get_date`.
const CLOCK: Toolbox = Toolbox {
    tools: &["get_time", "get_date"],
    says: "says 12:00",
};

/// One tool, `get_weather`, no tool of the clock's.
const WEATHER: Toolbox = Toolbox {
    tools: &["get_weather"],
    says: "from the weather server: sunny",
};

impl ServerHandler for Toolbox {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let said = format!("{} {}", request.name, self.says);
        Ok(CallToolResult::success(vec![ContentBlock::text(said)]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(Map::from_iter([("type".to_owned(), json!("object"))]));
        Ok(ListToolsResult::with_all_items(
            self.tools
                .iter()
                .map(|name| Tool::new(*name, format!("the {name} tool"), Arc::clone(&schema)))
                .collect(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Serves `toolbox` (any server) over streamable HTTP on a free port; its URL.
pub(crate) async fn serve<H: ServerHandler + Clone + Send + Sync + 'static>(toolbox: H) -> String {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };
    let service = StreamableHttpService::new(
        move || Ok(toolbox.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://127.0.0.1:{port}/mcp")
}

/// The clock, served.
async fn serve_clock() -> String {
    serve(CLOCK).await
}

/// `clock` (its tools as `t_…`) and `broken` (`b_…`), whose program does not exist.
fn config(clock: &str) -> ProxyConfig {
    let mut config = ProxyConfig::default();
    config.upstreams.insert(
        "clock".to_owned(),
        UpstreamSpec {
            url: Some(clock.to_owned()),
            prefix: "t_".to_owned(),
            ..UpstreamSpec::default()
        },
    );
    config.upstreams.insert(
        "broken".to_owned(),
        UpstreamSpec {
            command: Some("/nonexistent/toolshape-test-no-such-server".to_owned()),
            prefix: "b_".to_owned(),
            ..UpstreamSpec::default()
        },
    );
    config
}

/// A shaping configuration with a section for a listed tool, `open_result` (the harness's),
/// a misspelt tool, and a tool of the upstream that does not start.
const SHAPE: &str = r#"
[tools.t_get_time]
budget = 300
[tools.open_result]
budget = 500
[tools.t_get_tiem]
budget = 300
[tools.b_read]
budget = 300
"#;

/// The reason the missing program gives (`std::io::Error`'s, as the proxy's start reads it).
fn missing_program() -> String {
    std::process::Command::new("/nonexistent/toolshape-test-no-such-server")
        .spawn()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

/// Each section naming a tool no upstream lists is one sentence: the misspelt one with the
/// tools that are listed, the one an upstream that did not start may have with that upstream
/// and its reason. The listed tool and `open_result` are not named. With `strict`, the proxy
/// does not start and says why; without it, it serves.
#[test]
fn a_configured_tool_no_upstream_lists_is_named_at_start_up() {
    runtime().block_on(async {
        let clock = serve_clock().await;
        let shape = ShapeConfig::from_toml_str(SHAPE).unwrap();
        let proxy = Proxy::start(&config(&clock), Duration::from_secs(30)).await;
        let reason = missing_program();
        assert!(!reason.is_empty());
        assert_eq!(
            proxy.unlisted(&shape).await,
            [
                format!(
                    "[tools.b_read] names a tool no upstream lists, so its settings never \
                     apply; its upstream may be the upstream server `broken` (prefix `b_`), \
                     which did not start ({reason})"
                ),
                "[tools.t_get_tiem] names a tool no upstream lists, so its settings never \
                 apply (tools listed: t_get_time, t_get_date)"
                    .to_owned(),
            ]
        );
        // Every section names a listed tool: nothing to say.
        let listed = ShapeConfig::from_toml_str(
            "[tools.t_get_time]\nbudget = 300\n[tools.t_get_date]\nbudget = 300\n",
        )
        .unwrap();
        assert_eq!(proxy.unlisted(&listed).await, Vec::<String>::new());

        let mut strict = config(&clock);
        strict.proxy.strict = true;
        let stopped = tokio::time::timeout(
            Duration::from_secs(60),
            toolshape_proxy::serve_http(&strict, shape.clone(), "127.0.0.1:0"),
        )
        .await
        .expect("a strict proxy stops at start-up");
        match stopped {
            Err(e @ ProxyError::Unlisted(_)) => {
                let said = e.to_string();
                assert!(
                    said.contains("[tools.t_get_tiem] names a tool no upstream lists")
                        && said.contains("[tools.b_read] names a tool no upstream lists")
                        && said.contains("with --strict"),
                    "{said}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Strict, with every section listed: it serves (until stopped here).
        let mut clean = config(&clock);
        clean.upstreams.remove("broken");
        clean.proxy.strict = true;
        let serving = tokio::time::timeout(
            Duration::from_secs(3),
            toolshape_proxy::serve_http(&clean, listed, "127.0.0.1:0"),
        )
        .await;
        assert!(serving.is_err(), "{serving:?}");
    });
}

/// A tool of an upstream that did not start answers a tool error with the upstream's reason
/// (in both channels, for each kind of client), where it answered "no tool" before; a name
/// no upstream could have is still "no tool"; the running upstream's tools answer.
#[test]
fn a_tool_of_an_upstream_that_did_not_start_answers_its_reason() {
    runtime().block_on(async {
        let clock = serve_clock().await;
        let proxy = Proxy::start(&config(&clock), Duration::from_secs(30)).await;
        let reason = missing_program();
        for name in ["claude-code", "open-webui", "some-agent"] {
            let harness =
                toolshape::mcp::Harness::new(proxy.clone(), ShapeConfig::default()).unwrap();
            let (client_end, server_end) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                if let Ok(server) = harness.serve(server_end).await {
                    let _ = server.waiting().await;
                }
            });
            let client = ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new(name, "1.0"),
            )
            .serve(client_end)
            .await
            .unwrap();
            let answer = client
                .call_tool(CallToolRequestParams::new("b_read"))
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(answer.is_error, Some(true), "{name}");
            let mut read: Vec<String> = answer
                .content
                .iter()
                .filter_map(|b| b.as_text().map(|t| t.text.clone()))
                .collect();
            if let Some(envelope) = &answer.structured_content {
                read.push(envelope["summary"].as_str().unwrap_or_default().to_owned());
            }
            for said in read {
                assert!(
                    said.contains(&format!(
                        "no tool `b_read` is listed: it may be a tool of the upstream server \
                         `broken` (prefix `b_`), which did not start ({reason})"
                    )) && said.contains("call again later"),
                    "{name}: {said}"
                );
            }
            let unknown = client
                .call_tool(CallToolRequestParams::new("zz_read"))
                .await;
            let said = format!("{unknown:?}");
            assert!(said.contains("no tool `zz_read`"), "{name}: {said}");
            let time = client
                .call_tool(CallToolRequestParams::new("t_get_time"))
                .await
                .unwrap();
            assert_ne!(time.is_error, Some(true), "{name}");
            let said: Vec<Value> = answer_strings(&time);
            assert!(
                said.iter()
                    .any(|s| s.to_string().contains("get_time says 12:00")),
                "{name}: {said:?}"
            );
            client.cancel().await.unwrap();
        }
    });
}

/// The text blocks and `structuredContent` of an answer.
fn answer_strings(result: &CallToolResult) -> Vec<Value> {
    let mut out: Vec<Value> = result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| Value::String(t.text.clone())))
        .collect();
    out.extend(result.structured_content.clone());
    out
}

/// Two upstreams without prefixes: each call goes to the upstream that lists the tool,
/// whichever comes first in the configuration; a tool neither lists is "no tool". (Routing
/// a call to the first upstream whose prefix matched, though it lacked the tool, went
/// through the whole suite: no test touched the proxy.)
#[test]
fn two_upstreams_without_prefixes_each_answer_their_own_tools() {
    runtime().block_on(async {
        let (clock, weather) = (serve_clock().await, serve(WEATHER).await);
        // Both orders (upstreams are met in their names' order): the upstream that lacks
        // the tool is met first in one of them.
        for (first, second) in [("a_clock", "b_weather"), ("b_clock", "a_weather")] {
            let mut config = ProxyConfig::default();
            for (name, url) in [(first, &clock), (second, &weather)] {
                config.upstreams.insert(
                    name.to_owned(),
                    UpstreamSpec {
                        url: Some(url.clone()),
                        prefix: String::new(),
                        ..UpstreamSpec::default()
                    },
                );
            }
            let proxy = Proxy::start(&config, Duration::from_secs(30)).await;
            let client = crate::client::connect(proxy, ShapeConfig::default(), "claude-code").await;
            let read = |r: &CallToolResult| {
                answer_strings(r)
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let weather_said = crate::client::call(&client, "get_weather", json!({})).await;
            assert_ne!(weather_said.is_error, Some(true), "{}", read(&weather_said));
            assert!(
                read(&weather_said).contains("get_weather from the weather server: sunny"),
                "{first}: {}",
                read(&weather_said)
            );
            let time = crate::client::call(&client, "get_time", json!({})).await;
            assert!(
                read(&time).contains("get_time says 12:00"),
                "{first}: {}",
                read(&time)
            );
            let neither = client
                .call_tool(CallToolRequestParams::new("get_tide"))
                .await;
            assert!(
                format!("{neither:?}").contains("no tool `get_tide`"),
                "{neither:?}"
            );
        }
    });
}

/// An `initialize` request's body.
fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

/// The status a proxy served over HTTP at `port` answers an `initialize` POST carrying
/// `headers` with (raw HTTP over TCP: no client library decides for the test).
async fn status_of(port: u16, headers: &[(&str, &str)]) -> u16 {
    status_of_body(port, headers, &initialize_body()).await
}

/// [`status_of`] with `body` as the request's body.
async fn status_of_body(port: u16, headers: &[(&str, &str)], body: &str) -> u16 {
    crate::access::post(port, "/mcp", headers, body).await.0
}

/// Served over HTTP, the proxy refuses a browser page from another origin and a request
/// naming another host (403: DNS rebinding, the transport specification's `Origin` rule),
/// and serves its own machine's origins and clients that send no `Origin`; configured
/// lists replace the defaults; an empty list or an origin without its scheme is refused at
/// start with what to write.
#[test]
fn over_http_another_origin_or_host_is_refused_and_its_own_are_served() {
    runtime().block_on(async {
        let clock = serve_clock().await;
        let free_port = crate::access::free_port;
        let mut served = config(&clock);
        served.upstreams.remove("broken");
        let start = |config: ProxyConfig, port: u16| {
            tokio::spawn(async move {
                toolshape_proxy::serve_http(
                    &config,
                    ShapeConfig::default(),
                    &format!("127.0.0.1:{port}"),
                )
                .await
            })
        };
        let ready = crate::access::wait_for;
        let port = free_port();
        let server = start(served.clone(), port);
        ready(port).await;
        assert_eq!(status_of(port, &[]).await, 200);
        assert_eq!(
            status_of(port, &[("Origin", &format!("http://localhost:{port}"))]).await,
            200
        );
        assert_eq!(
            status_of(port, &[("Origin", "http://127.0.0.1:9")]).await,
            200
        );
        assert_eq!(
            status_of(port, &[("Origin", "http://evil.example")]).await,
            403
        );
        assert_eq!(status_of(port, &[("Origin", "null")]).await, 403);
        assert_eq!(status_of(port, &[("Host", "evil.example")]).await, 403);
        server.abort();

        let mut own = served.clone();
        own.proxy.allowed_origins = Some(vec!["https://app.example.com".to_owned()]);
        own.proxy.allowed_hosts = Some(vec!["127.0.0.1".to_owned(), "proxy.internal".to_owned()]);
        let port = free_port();
        let server = start(own, port);
        ready(port).await;
        assert_eq!(
            status_of(port, &[("Origin", "https://app.example.com")]).await,
            200
        );
        assert_eq!(
            status_of(port, &[("Origin", "http://app.example.com")]).await,
            403
        );
        assert_eq!(
            status_of(port, &[("Origin", "http://localhost:3000")]).await,
            403
        );
        assert_eq!(status_of(port, &[("Host", "proxy.internal")]).await, 200);
        assert_eq!(status_of(port, &[("Host", "localhost")]).await, 403);
        server.abort();

        // The body limit at its edge: an initialize padded (JSON whitespace) to the limit is
        // served, one byte more is refused before it is read.
        let limit = 400;
        let mut small = served.clone();
        small.proxy.max_body_bytes = Some(limit);
        let port = free_port();
        let server = start(small, port);
        ready(port).await;
        let padded = |bytes: usize| {
            let body = initialize_body();
            format!("{body}{}", " ".repeat(bytes - body.len()))
        };
        assert_eq!(status_of_body(port, &[], &padded(limit)).await, 200);
        assert_eq!(status_of_body(port, &[], &padded(limit + 1)).await, 413);
        server.abort();

        for (hosts, origins, key, says) in [
            (Some(vec![]), None, "allowed_hosts", "the list is empty"),
            (None, Some(vec![]), "allowed_origins", "the list is empty"),
            (
                None,
                Some(vec!["app.example.com".to_owned()]),
                "allowed_origins",
                "is no origin",
            ),
            (
                None,
                Some(vec!["https://a.example/path".to_owned()]),
                "allowed_origins",
                "is no origin",
            ),
            (None, None, "max_body_bytes", "refuses every request"),
        ] {
            let mut wrong = served.clone();
            wrong.proxy.max_body_bytes = (key == "max_body_bytes").then_some(0);
            wrong.proxy.allowed_hosts = hosts;
            wrong.proxy.allowed_origins = origins;
            let said = toolshape_proxy::serve_http(&wrong, ShapeConfig::default(), "127.0.0.1:0")
                .await
                .unwrap_err()
                .to_string();
            assert!(said.contains(key) && said.contains(says), "{said}");
        }
    });
}
