//! `toolshape-proxy [--http ADDR] [--strict] [--upstream NAME] <config.toml>`: an MCP server
//! (on stdio, or over streamable HTTP at `/mcp` with `--http`) in front of the upstream MCP
//! servers the configuration names, every answer shaped (see the crate's documentation and
//! the README's "Put it in front of any MCP server"). `toolshape-proxy wrap` puts the servers
//! a client is configured with behind it; `unwrap` takes them out; `discover` lists them.
//! Logs go to stderr (`RUST_LOG`).

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    toolshape_proxy::cli::init_tracing();
    toolshape_proxy::cli::run(std::env::args().skip(1).collect()).await
}
