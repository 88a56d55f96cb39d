//! The configuration edited while the proxy runs: a good edit shapes the next call and tells
//! the client its tools changed; a bad one keeps the running configuration and says why; an
//! edit of `[proxy]` is named as taking effect at the next start.

use super::*;
use crate::UpstreamSpec;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolshape::tokens::{Bpe, Tokenizer};

/// An upstream with one tool, `log`, answering 400 lines.
#[derive(Clone)]
struct Log;

impl ServerHandler for Log {
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text: Vec<String> = (1..=400)
            .map(|i| format!("line {i}: the build step {i} finished in {} ms", i * 7))
            .collect();
        Ok(CallToolResult::success(vec![ContentBlock::text(text.join("\n"))]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(serde_json::Map::from_iter([(
            "type".to_owned(),
            serde_json::Value::from("object"),
        )]));
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "log", "a log", schema,
        )]))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A client counting the `tools/list_changed` notifications it is sent.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl ClientHandler for Counting {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// In `dir`, `proxy.toml` naming `shape.toml` and one upstream (`Log`, served over HTTP),
/// and `shape.toml` holding `shape`: the two paths and the proxy file's text.
async fn configured(dir: &Path, shape: &str) -> (PathBuf, PathBuf, String) {
    let url = crate::test_support::serve_http(Log, |app| app).await;
    let proxy_toml = dir.join("proxy.toml");
    let shape_toml = dir.join("shape.toml");
    let proxy_text =
        format!("[proxy]\nshape = \"shape.toml\"\n\n[upstreams.up]\nurl = \"{url}\"\n");
    std::fs::write(&proxy_toml, &proxy_text).unwrap();
    std::fs::write(&shape_toml, shape).unwrap();
    (proxy_toml, shape_toml, proxy_text)
}

#[test]
fn an_edit_reloads_a_bad_one_is_refused_and_the_running_configuration_kept() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let (proxy_toml, shape_toml, proxy_text) =
            configured(dir.path(), "[defaults]\nbudget = 600\n").await;
        let (config, shape) = crate::ProxyConfig::load(&proxy_toml).unwrap();
        assert_eq!(config.source.as_deref(), Some(proxy_toml.as_path()));
        let proxy = Proxy::start(&config, Duration::from_secs(20)).await;
        let harness = Harness::new(proxy, shape).unwrap();
        let mut outcomes = watch(harness.clone(), config.clone(), Duration::from_millis(50));
        let (client_end, server_end) = tokio::io::duplex(1 << 24);
        tokio::spawn(async move {
            if let Ok(server) = harness.serve(server_end).await {
                let _ = server.waiting().await;
            }
        });
        let counting = Counting::default();
        let changed = Arc::clone(&counting.0);
        let client = counting.serve(client_end).await.unwrap();
        let o200k = Bpe::o200k_base();
        let first_page = || async {
            let page = client
                .call_tool(CallToolRequestParams::new("log"))
                .await
                .unwrap();
            assert_ne!(page.is_error, Some(true));
            // A client of unknown reading gets both channels: the larger is counted.
            let text = crate::preview::text(&page);
            let structured = page
                .structured_content
                .as_ref()
                .map(|s| s.to_string())
                .unwrap_or_default();
            o200k.count(&text).max(o200k.count(&structured))
        };
        let next = |outcomes: &mut tokio::sync::watch::Receiver<Outcome>| {
            let mut outcomes = outcomes.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(20), outcomes.changed())
                    .await
                    .expect("the edit was not seen")
                    .unwrap();
                outcomes.borrow_and_update().clone()
            }
        };
        let before = first_page().await;
        assert!(before <= 600 && before > 300, "{before}");

        // A good edit: the next call is shaped by it, and the client told.
        std::fs::write(&shape_toml, "[defaults]\nbudget = 300\n").unwrap();
        let outcome = next(&mut outcomes).await;
        outcomes.mark_unchanged();
        assert_eq!(outcome, Outcome::Reloaded(Vec::new()));
        let after = first_page().await;
        assert!(after <= 300, "{after}");
        for _ in 0..100 {
            if changed.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(changed.load(Ordering::SeqCst), 1);

        // A bad edit: refused, saying why, the running configuration kept.
        std::fs::write(&shape_toml, "[defaults]\nbudget = \"many\"\n").unwrap();
        let outcome = next(&mut outcomes).await;
        outcomes.mark_unchanged();
        let Outcome::Kept(why) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            why.starts_with(&format!("{}: invalid TOML", shape_toml.display())),
            "{why}"
        );
        assert!(
            why.ends_with("; the running configuration is kept"),
            "{why}"
        );
        assert!(first_page().await <= 300);

        // An edit of [proxy]: the shaping configuration reloaded, the rest named for the next start.
        std::fs::write(&shape_toml, "[defaults]\nbudget = 500\n").unwrap();
        std::fs::write(
            &proxy_toml,
            proxy_text.replace("[proxy]\n", "[proxy]\ncall_timeout_secs = 30\n"),
        )
        .unwrap();
        let outcome = next(&mut outcomes).await;
        let Outcome::Reloaded(said) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].ends_with(
                "what [proxy] and [upstreams] say takes effect when the proxy starts again"
            ),
            "{said:?}"
        );
        let now = first_page().await;
        assert!(now <= 500 && now > 300, "{now}");
        let _ = client.cancel().await;
    });
}

/// A tool the edit names that no upstream lists is said; with `--strict` the edit is refused.
#[test]
fn an_edit_naming_an_unlisted_tool_is_said_and_strict_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let (proxy_toml, _, _) = configured(dir.path(), "[tools.log]\nbudget = 400\n").await;
        let (mut config, shape) = crate::ProxyConfig::load(&proxy_toml).unwrap();
        let proxy = Proxy::start(&config, Duration::from_secs(20)).await;
        let harness = Harness::new(proxy, shape).unwrap();
        std::fs::write(dir.path().join("shape.toml"), "[tools.lgo]\nbudget = 400\n").unwrap();
        let Outcome::Reloaded(said) = reload_once(&harness, &config).await else {
            panic!("not reloaded")
        };
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("[tools.lgo] names a tool no upstream lists"),
            "{said:?}"
        );
        config.proxy.strict = true;
        let Outcome::Kept(why) = reload_once(&harness, &config).await else {
            panic!("reloaded under --strict")
        };
        assert!(
            why.contains("--strict: [tools.lgo] names a tool no upstream lists"),
            "{why}"
        );
        // `--strict` given on the command line is no edit of the file's `[proxy]`.
        std::fs::write(dir.path().join("shape.toml"), "[tools.log]\nbudget = 300\n").unwrap();
        assert_eq!(
            reload_once(&harness, &config).await,
            Outcome::Reloaded(Vec::new())
        );
        // Not read from a file: nothing to reload.
        let unread = crate::ProxyConfig {
            upstreams: [("up".to_owned(), UpstreamSpec::default())].into(),
            ..Default::default()
        };
        assert_eq!(
            reload_once(&harness, &unread).await,
            Outcome::Kept("the configuration was not read from a file".to_owned())
        );
    });
}
