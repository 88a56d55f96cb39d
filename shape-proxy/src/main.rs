//! `toolshape-proxy [--http ADDR] [--strict] <config.toml>`: an MCP server (on stdio, or over
//! streamable HTTP at `/mcp` with `--http`) in front of the upstream MCP
//! servers the configuration names, every answer shaped (see the crate's documentation and
//! the README's "Put it in front of any MCP server"). Logs go to stderr (`RUST_LOG`). With
//! `--strict`, a shaping configuration that names a tool no upstream lists stops it.

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
    let mut path = None;
    let mut http = None;
    let mut strict = false;
    let mut args = std::env::args().skip(1);
    let usage = "usage: toolshape-proxy [--http ADDR] [--strict] <config.toml>\n\nAn MCP server in front of the MCP servers the configuration names, every answer shaped to its token budget: on stdio, or with --http (e.g. 127.0.0.1:8080) over streamable HTTP at /mcp. With --strict it does not start when the shaping configuration names a tool no upstream lists (else a warning says so).";
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => {
                eprintln!("{usage}");
                return ExitCode::from(2);
            }
            "--strict" => strict = true,
            "--http" => match args.next() {
                Some(addr) => http = Some(addr),
                None => {
                    eprintln!(
                        "toolshape-proxy: --http needs an address, like 127.0.0.1:8080\n\n{usage}"
                    );
                    return ExitCode::from(2);
                }
            },
            _ if path.is_none() => path = Some(arg),
            _ => {
                eprintln!("toolshape-proxy: unexpected argument {arg:?}\n\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(path) = path else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let (mut config, shape) = match toolshape_proxy::ProxyConfig::load(&path) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    config.proxy.strict |= strict;
    let served = match http {
        #[cfg(feature = "http")]
        Some(addr) => toolshape_proxy::serve_http(&config, shape, &addr).await,
        #[cfg(not(feature = "http"))]
        Some(_) => {
            eprintln!("toolshape-proxy: --http needs the proxy built with feature `http`");
            return ExitCode::from(2);
        }
        None => toolshape_proxy::serve(&config, shape).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}
