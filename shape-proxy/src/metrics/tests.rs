//! `/metrics` scraped over HTTP from a proxy served the way `toolshape-proxy --http` serves
//! it, and the ledger `stats` sums, against two oracles that are not this module: what the
//! client saw (pages, errors, pages with a `next`, handles opened) and the reports as the
//! `fmt` layer prints them (their tokens, parsed back out of the log's text).

use super::*;
use crate::preview::text;
use crate::{ProxyConfig, UpstreamSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt as _;

/// An upstream with three tools: `metered_log` (400 lines: several pages), `metered_small`
/// (one line), `metered_fails` (an error).
#[derive(Clone)]
struct Metered;

impl ServerHandler for Metered {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        Ok(match request.name.as_ref() {
            "metered_log" => {
                let text: Vec<String> = (0..400)
                    .map(|i| format!("line {i:03}: the build step {i} finished"))
                    .collect();
                CallToolResult::success(vec![ContentBlock::text(text.join("\n"))])
            }
            "metered_small" => CallToolResult::success(vec![ContentBlock::text("12:00")]),
            _ => CallToolResult::error(vec![ContentBlock::text("the disk is full")]),
        }
        .into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(Map::from_iter([("type".to_owned(), json!("object"))]));
        Ok(ListToolsResult::with_all_items(
            ["metered_log", "metered_small", "metered_fails"]
                .into_iter()
                .map(|name| Tool::new(name, "a metered tool", Arc::clone(&schema)))
                .collect(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The log's lines, as the `fmt` layer writes them.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<String>>);

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut log) = self.0.lock() {
            log.push_str(&String::from_utf8_lossy(buf));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn get(port: u16, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), body.to_owned())
}

/// A sample's value, `name{labels}` as written, 0 when absent (as Prometheus reads it).
fn sample(metrics: &str, name: &str, labels: &str) -> u64 {
    let key = format!("{name}{{{labels}}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&key))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// The reports the `fmt` layer printed for `tool`: each one's fields by name.
fn printed_reports(log: &str, tool: &str) -> Vec<BTreeMap<String, String>> {
    log.lines()
        .filter(|l| l.contains("shaped tool result") && l.contains(&format!(" tool={tool} ")))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
                .collect()
        })
        .collect()
}

fn sum(reports: &[BTreeMap<String, String>], field: &str) -> u64 {
    reports
        .iter()
        .filter_map(|r| r.get(field))
        .map(|v| v.parse::<u64>().unwrap())
        .sum()
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        unreachable!()
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

#[test]
fn metrics_and_the_ledger_count_what_the_client_saw_and_the_reports_said() {
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone()),
        )
        .with(layer());
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.jsonl");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut config = ProxyConfig::default();
        config.upstreams.insert(
            "metered".to_owned(),
            UpstreamSpec {
                url: Some(crate::test_support::serve_http(Metered, |app| app).await),
                ..UpstreamSpec::default()
            },
        );
        config.proxy.ledger = Some(ledger.clone());
        // As `--upstream metered` serves it: pages no call routed (`open_result`'s) count
        // under the one upstream.
        config.only("metered").unwrap();
        let shape = toolshape::config::ShapeConfig::from_toml_str(
            "[defaults]\nbudget = 400\n[tools.open_result]\nbudget = 400\n",
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        tokio::spawn(async move {
            crate::serve_http(&config, shape, &format!("127.0.0.1:{port}")).await
        });
        let mut up = false;
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                up = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(up, "the proxy did not listen");
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp")),
        );
        let client = ().serve(transport).await.unwrap();

        // What the client sees, counted by the client.
        for _ in 0..3 {
            let page = call(&client, "metered_small", json!({})).await;
            assert_ne!(page.is_error, Some(true));
        }
        let mut errors = 0;
        for _ in 0..2 {
            errors +=
                u64::from(call(&client, "metered_fails", json!({})).await.is_error == Some(true));
        }
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let args = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = call(&client, "metered_log", args).await;
            cursor = page
                .structured_content
                .as_ref()
                .and_then(|v| v["next"].as_str().map(str::to_owned));
            pages.push(page);
            if cursor.is_none() {
                break;
            }
            assert!(pages.len() < 100, "next does not end");
        }
        let with_next = pages.len() as u64 - 1;
        assert!(with_next >= 2, "the log takes several pages");
        let first = text(&pages[0]);
        let at = first.find("handle=h_").expect("a handle on a cut page") + "handle=".len();
        let handle: String = first[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let opened = call(&client, "open_result", json!({ "handle": handle })).await;
        assert_ne!(opened.is_error, Some(true), "{}", text(&opened));

        let (head, metrics) = get(port, "/metrics").await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("application/openmetrics-text"),
            "{head}"
        );
        assert!(metrics.ends_with("# EOF\n"), "{metrics}");
        let at = |tool: &str| format!("tool=\"{tool}\",upstream=\"metered\"");
        let pages_of = |tool: &str, status: &str| {
            sample(
                &metrics,
                "toolshape_pages_total",
                &format!("{},status=\"{status}\"", at(tool)),
            )
        };
        // Against the client.
        assert_eq!(pages_of("metered_small", "ok"), 3, "{metrics}");
        assert_eq!(
            sample(&metrics, "toolshape_calls_total", &at("metered_small")),
            3
        );
        assert_eq!(pages_of("metered_fails", "error"), errors);
        assert_eq!(
            sample(&metrics, "toolshape_errors_total", &at("metered_fails")),
            2
        );
        assert_eq!(
            sample(&metrics, "toolshape_calls_total", &at("metered_fails")),
            2
        );
        assert_eq!(
            pages_of("metered_log", "partial") + pages_of("metered_log", "ok"),
            pages.len() as u64
        );
        assert_eq!(pages_of("metered_log", "partial"), with_next);
        assert_eq!(
            sample(&metrics, "toolshape_cuts_total", &at("metered_log")),
            with_next
        );
        assert_eq!(
            sample(&metrics, "toolshape_calls_total", &at("metered_log")),
            1,
            "later pages come from the store"
        );
        let opened_at = "tool=\"open_result\",upstream=\"metered\"";
        assert_eq!(
            sample(&metrics, "toolshape_handles_opened_total", opened_at),
            1
        );
        // Against the reports as the log prints them.
        let log = log.0.lock().unwrap().clone();
        for tool in ["metered_small", "metered_fails", "metered_log"] {
            let reports = printed_reports(&log, tool);
            assert!(!reports.is_empty(), "{tool}: no report in the log");
            assert_eq!(
                sample(&metrics, "toolshape_raw_tokens_total", &at(tool)),
                sum(&reports, "raw_tokens"),
                "{tool}"
            );
            for channel in ["text", "structured"] {
                assert_eq!(
                    sample(
                        &metrics,
                        "toolshape_shaped_tokens_total",
                        &format!("{},channel=\"{channel}\"", at(tool))
                    ),
                    sum(&reports, &format!("{channel}_tokens")),
                    "{tool} {channel}"
                );
            }
        }
        assert!(sum(&printed_reports(&log, "metered_log"), "raw_tokens") > 1_000);

        // The ledger: a line a page, summed by `stats`.
        let lines: Vec<Page> = std::fs::read_to_string(&ledger)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Page>(l).unwrap())
            // This process's other tests' pages too: the tally is the process's.
            .filter(|p| p.tool.starts_with("metered_") || p.tool == "open_result")
            .collect();
        assert_eq!(lines.len() as u64, 3 + 2 + pages.len() as u64 + 1);
        let table = stats(&ledger).unwrap();
        let row = table
            .lines()
            .find(|l| l.starts_with("metered ") && l.contains(" metered_log "))
            .unwrap_or_else(|| panic!("{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        let raw = sum(&printed_reports(&log, "metered_log"), "raw_tokens");
        let read: u64 = lines
            .iter()
            .filter(|p| p.tool == "metered_log")
            .map(Page::shaped_tokens)
            .sum();
        assert_eq!(
            cells[2..],
            [
                "1".to_owned(),
                pages.len().to_string(),
                raw.to_string(),
                read.to_string(),
                format!("{:.0}%", (1.0 - read as f64 / raw as f64) * 100.0),
                with_next.to_string(),
                "0".to_owned()
            ],
            "{table}"
        );
        assert!(table.contains("\nall "), "{table}");
        let _ = client.cancel().await;
    });
}

#[test]
fn stats_says_when_there_is_no_ledger_and_skips_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.jsonl");
    assert!(stats(&missing).unwrap().starts_with("no ledger at "));
    // One that cannot be read is an error, not "no ledger".
    assert!(stats(dir.path()).unwrap_err().starts_with("cannot read "));
    let ledger = dir.path().join("ledger.jsonl");
    let page = Page {
        at: 1,
        tool: "read".to_owned(),
        upstream: "fs".to_owned(),
        status: "ok".to_owned(),
        raw_tokens: Some(100),
        text_tokens: 30,
        structured_tokens: Some(40),
        cut: false,
    };
    let line = serde_json::to_string(&page).unwrap();
    std::fs::write(&ledger, format!("{line}\nnot json\n{line}\n")).unwrap();
    let table = stats(&ledger).unwrap();
    let row = table.lines().find(|l| l.starts_with("fs ")).unwrap();
    // Two calls of 100, each read as the larger channel (40): 80 of 200, a saving of 60%.
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["fs", "read", "2", "2", "200", "80", "60%", "0", "0"]
    );
    assert!(table.contains("1 lines of "), "{table}");
    // The whole, over every upstream and tool.
    let other = Page {
        tool: "list".to_owned(),
        upstream: "git".to_owned(),
        status: "error".to_owned(),
        raw_tokens: None,
        text_tokens: 10,
        structured_tokens: None,
        cut: true,
        ..page.clone()
    };
    let other = serde_json::to_string(&other).unwrap();
    std::fs::write(&ledger, format!("{line}\n{line}\n{other}\n")).unwrap();
    let table = stats(&ledger).unwrap();
    let all = table.lines().find(|l| l.starts_with("all ")).unwrap();
    assert_eq!(
        all.split_whitespace().collect::<Vec<_>>(),
        ["all", "3", "3", "200", "90", "55%", "1", "1"]
    );
    assert!(!table.contains("could not be read"), "{table}");
}
