//! `toolshape-proxy [--http ADDR] [--strict] [--upstream NAME] <config.toml>`: an MCP server
//! (on stdio, or over streamable HTTP at `/mcp` with `--http`) in front of the upstream MCP
//! servers the configuration names, every answer shaped (see the crate's documentation and
//! the README's "Put it in front of any MCP server"). `toolshape-proxy wrap` puts the servers
//! a client is configured with behind it; `unwrap` takes them out; `discover` lists them.
//! Logs go to stderr (`RUST_LOG`).

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        // Every call's report, whatever RUST_LOG lets through: /metrics, the ledger.
        .with(toolshape_proxy::metrics::layer())
        .init();
    toolshape_proxy::cli::run(std::env::args().skip(1).collect()).await
}
