//! What the proxy's own tests share: an MCP server served over streamable HTTP in the test's
//! process.

use rmcp::ServerHandler;
use std::sync::Arc;

/// Serves `server` over streamable HTTP (stateless, JSON answers) on a free loopback port,
/// its router passed through `around` (a guard, say); its URL.
pub(crate) async fn serve_http<H: ServerHandler + Clone + Send + Sync + 'static>(
    server: H,
    around: impl FnOnce(axum::Router) -> axum::Router,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_http_on(listener, server, around)
}

/// [`serve_http`] on `listener` (an address chosen before the server starts: an upstream
/// that starts late).
pub(crate) fn serve_http_on<H: ServerHandler + Clone + Send + Sync + 'static>(
    listener: tokio::net::TcpListener,
    server: H,
    around: impl FnOnce(axum::Router) -> axum::Router,
) -> String {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    let app = around(axum::Router::new().nest_service("/mcp", service));
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://127.0.0.1:{port}/mcp")
}
