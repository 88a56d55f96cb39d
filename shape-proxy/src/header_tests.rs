//! An upstream over HTTP that wants a header: the proxy sends `headers` with each `${NAME}`
//! read from its environment (a default when unset), and an upstream it cannot reach with
//! them is not listed, its reason said.

use crate::{Proxy, ProxyConfig, UpstreamSpec, expand};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, json};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
struct Guarded;

impl ServerHandler for Guarded {
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("in")]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(Map::from_iter([("type".to_owned(), json!("object"))]));
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "guarded",
            "behind a header",
            schema,
        )]))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Serves `Guarded` at a URL whose every request must carry `Authorization: Bearer s3cret`.
async fn serve_guarded() -> String {
    crate::test_support::serve_http(Guarded, |app| {
        app.layer(axum::middleware::from_fn(
            |request: axum::extract::Request, next: axum::middleware::Next| async move {
                let sent = request
                    .headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok());
                if sent == Some("Bearer s3cret") {
                    next.run(request).await
                } else {
                    axum::http::StatusCode::UNAUTHORIZED.into_response()
                }
            },
        ))
    })
    .await
}

use axum::response::IntoResponse as _;

fn config(url: &str, authorization: &str) -> ProxyConfig {
    let mut config = ProxyConfig::default();
    config.upstreams.insert(
        "guarded".to_owned(),
        UpstreamSpec {
            url: Some(url.to_owned()),
            headers: [("Authorization".to_owned(), authorization.to_owned())].into(),
            ..UpstreamSpec::default()
        },
    );
    config
}

#[test]
fn an_upstream_over_http_gets_its_headers() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = serve_guarded().await;
        let shape = toolshape::config::ShapeConfig::default();
        // From a default, as no TOOLSHAPE_TEST_UNSET_TOKEN is set.
        let sent = config(&url, "Bearer ${TOOLSHAPE_TEST_UNSET_TOKEN:-s3cret}");
        let proxy = Proxy::start(&sent, Duration::from_secs(20)).await;
        let names: Vec<String> = proxy
            .tools()
            .await
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["guarded"]);
        // A wrong one: refused, and the tool's absence explained.
        let wrong = Proxy::start(&config(&url, "Bearer nope"), Duration::from_secs(20)).await;
        assert!(wrong.tools().await.is_empty());
        let why = wrong.unlisted_upstreams("guarded").await;
        assert_eq!(why.len(), 1, "{why:?}");
        // A variable not set and no default: the reason names it.
        let unset = config(&url, "Bearer ${TOOLSHAPE_TEST_UNSET_TOKEN}");
        let unset = Proxy::start(&unset, Duration::from_secs(20)).await;
        let why = unset.unlisted_upstreams("guarded").await.join("; ");
        assert!(
            why.contains("${TOOLSHAPE_TEST_UNSET_TOKEN} is not set"),
            "{why}"
        );
        let _ = shape;
    });
}

#[test]
fn variables_expand_from_the_environment_given() {
    let env = |name: &str| (name == "TOKEN").then(|| "t0k".to_owned());
    assert_eq!(expand("Bearer ${TOKEN}", env).unwrap(), "Bearer t0k");
    assert_eq!(expand("${TOKEN}-${TOKEN}", env).unwrap(), "t0k-t0k");
    assert_eq!(expand("${REGION:-eu} ${TOKEN:-x}", env).unwrap(), "eu t0k");
    assert_eq!(
        expand("no variables, a $ and a {", env).unwrap(),
        "no variables, a $ and a {"
    );
    assert!(
        expand("${MISSING}", env)
            .unwrap_err()
            .contains("${MISSING} is not set")
    );
    assert!(expand("${TOKEN", env).unwrap_err().contains("not closed"));
}
