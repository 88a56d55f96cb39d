//! `toolshape-proxy <config.toml>`: an MCP server on stdio in front of the upstream MCP
//! servers the configuration names, every answer shaped (see the crate's documentation and
//! the README's "Put it in front of any MCP server"). Logs go to stderr (`RUST_LOG`).

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let path = match (args.next(), args.next()) {
        (Some(path), None) if path != "--help" && path != "-h" => path,
        _ => {
            eprintln!(
                "usage: toolshape-proxy <config.toml>\n\nAn MCP server on stdio in front of the MCP servers the configuration names, every answer shaped to its token budget."
            );
            return ExitCode::from(2);
        }
    };
    let (config, shape) = match toolshape_proxy::ProxyConfig::load(&path) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    match toolshape_proxy::serve(&config, shape).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}
