//! The command line: `toolshape-proxy [--http ADDR] [--strict] [--upstream NAME] <config.toml>`
//! serves; `wrap`, `unwrap` and `discover` put a client's servers behind the proxy and take
//! them out ([`crate::wrap`]).

use crate::wrap::{self, Client, Places, WrapOptions};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: toolshape-proxy [--http ADDR] [--strict] [--upstream NAME] <config.toml>
       toolshape-proxy wrap [--client NAME]... [--file PATH]... [--server NAME]... [--program PATH] [--dry-run]
       toolshape-proxy unwrap [--file PATH]... [--dry-run]
       toolshape-proxy discover [--client NAME]... [--file PATH]...
       toolshape-proxy stats [--ledger PATH]
       toolshape-proxy presets
       toolshape-proxy preview (--recorded FILE [--shape FILE] [--server FILE] [--preset NAME] | --config FILE) [--tool NAME]
                               [--args JSON] [--client NAME]

An MCP server in front of the MCP servers the configuration names, every answer shaped to its
token budget: on stdio, or with --http (e.g. 127.0.0.1:8080) over streamable HTTP at /mcp.
With --strict it does not start when the shaping configuration names a tool no upstream lists
(else a warning says so). With --upstream it serves that upstream alone.

wrap: the MCP servers of Claude Code, Codex, VS Code and Cursor (or --client claude, codex,
vscode, cursor; or the files given) put behind the proxy: each an upstream of
$TOOLSHAPE_HOME/proxy.toml (default ~/.toolshape), its client entry rewritten to start the
proxy, a backup kept. --server wraps those named only; --program names the proxy the entries
start (default: this one); --dry-run prints the diff and writes
nothing. unwrap puts the files back (byte for byte when untouched since). discover lists the
configured servers and whether each is behind the proxy. stats sums the ledger the proxies
keep (`ledger` under [proxy]; default $TOOLSHAPE_HOME/ledger.jsonl) per upstream and tool:
calls, pages, the upstreams' tokens and the tokens read. Over HTTP, /metrics serves the same
counts in Prometheus' format. preview shows what one call becomes through the proxy (a
recorded answer: an MCP CallToolResult as JSON, a recorded call (tool, arguments,
result: its tool unless --tool names one), or any file as text, served as the server
--server describes, with its preset or the one --preset names; or a live call of a configured
tool), as the client named reads it, with its tokens before and after. presets lists the
presets the proxy ships: an upstream gets the one made for its server (its serverInfo.name)
unless its configuration says preset = \"<name>\" or \"none\". The configuration and the shaping
file are read again when they change: a bad edit keeps the running configuration, saying why.";

fn usage_error(message: &str) -> ExitCode {
    eprintln!("toolshape-proxy: {message}\n\n{USAGE}");
    ExitCode::from(2)
}

/// The program's `tracing`: logs to stderr at `RUST_LOG` (default `warn`), and every call's
/// report to [`crate::metrics`] (`/metrics`, the ledger) whatever `RUST_LOG` says. Does
/// nothing when a global subscriber is set already.
pub fn init_tracing() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        .with(crate::metrics::layer())
        .try_init();
}

/// Runs the command line `args` (without the program's name).
pub async fn run(args: Vec<String>) -> ExitCode {
    if let Some("wrap" | "unwrap" | "discover") = args.first().map(String::as_str) {
        return manage(&args[0], &args[1..]);
    }
    if let Some("stats") = args.first().map(String::as_str) {
        return stats(&args[1..]);
    }
    if let Some("preview") = args.first().map(String::as_str) {
        return preview(&args[1..]).await;
    }
    if let Some("presets") = args.first().map(String::as_str) {
        print!("{}", presets());
        return ExitCode::SUCCESS;
    }
    let mut path = None;
    let mut http = None;
    let mut strict = false;
    let mut upstream = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
            "--strict" => strict = true,
            "--http" => match args.next() {
                Some(addr) => http = Some(addr),
                None => return usage_error("--http needs an address, like 127.0.0.1:8080"),
            },
            wrap::UPSTREAM_FLAG => match args.next() {
                Some(name) => upstream = Some(name),
                None => return usage_error("--upstream needs an upstream's name"),
            },
            _ if path.is_none() => path = Some(arg),
            _ => return usage_error(&format!("unexpected argument {arg:?}")),
        }
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let (mut config, shape) = match crate::ProxyConfig::load(&path) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    config.proxy.strict |= strict;
    if let Some(name) = upstream
        && let Err(e) = config.only(&name)
    {
        eprintln!("toolshape-proxy: {e}");
        return ExitCode::from(2);
    }
    let served = match http {
        #[cfg(feature = "http")]
        Some(addr) => crate::serve_http(&config, shape, &addr).await,
        #[cfg(not(feature = "http"))]
        Some(_) => return usage_error("--http needs the proxy built with feature `http`"),
        None => crate::serve(&config, shape).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolshape-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `presets`: each preset the binary ships, the servers it is chosen for and its tools.
pub(crate) fn presets() -> String {
    let mut out = String::new();
    for preset in crate::presets::PRESETS {
        let servers: Vec<String> = preset.servers.iter().map(|s| format!("`{s}`")).collect();
        out.push_str(&format!(
            "{}: {}, chosen for the serverInfo.name {}\n  shapes {}\n",
            preset.name,
            preset.about,
            servers.join(", "),
            preset.tools().join(", ")
        ));
    }
    out.push_str(
        "An upstream gets the one made for it unless its [upstreams.<name>] says preset = \"<name>\" or \"none\".\n",
    );
    out
}

/// `wrap`, `unwrap` or `discover`.
fn manage(command: &str, args: &[String]) -> ExitCode {
    let mut clients = Vec::new();
    let mut files = Vec::new();
    let mut servers = Vec::new();
    let mut program = None;
    let mut dry_run = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| usage_error(&format!("{flag} needs a value")))
        };
        let taken = match arg.as_str() {
            "--dry-run" if command != "discover" => {
                dry_run = true;
                Ok(())
            }
            "--file" => value("--file").map(|v| files.push(PathBuf::from(v))),
            "--client" if command != "unwrap" => value("--client").and_then(|v| {
                for word in v.split(',') {
                    match Client::from_word(word.trim()) {
                        Some(client) => clients.push(client),
                        None => {
                            return Err(usage_error(&format!(
                                "--client {word:?}: name claude, codex, vscode or cursor"
                            )));
                        }
                    }
                }
                Ok(())
            }),
            "--server" if command == "wrap" => value("--server").map(|v| {
                servers.extend(v.split(',').map(|s| s.trim().to_owned()));
            }),
            "--program" if command == "wrap" => value("--program").map(|v| program = Some(v)),
            "--help" | "-h" => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
            _ => Err(usage_error(&format!(
                "{command}: unexpected argument {arg:?}"
            ))),
        };
        if let Err(code) = taken {
            return code;
        }
    }
    let done = Places::from_env().and_then(|places| match command {
        "wrap" => {
            let program = match program {
                Some(p) => PathBuf::from(p),
                None => std::env::current_exe().map_err(|source| wrap::WrapError::Read {
                    path: "this program's path".to_owned(),
                    source,
                })?,
            };
            let options = WrapOptions {
                clients,
                files,
                servers,
                program,
                dry_run,
            };
            wrap::wrap(&places, &options)
        }
        "unwrap" => wrap::unwrap(&places, &files, dry_run),
        _ => wrap::discover(&places, &clients, &files),
    });
    match done {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolshape-proxy {command}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `stats [--ledger PATH]`.
fn stats(args: &[String]) -> ExitCode {
    let ledger = match args {
        [] => match Places::from_env() {
            Ok(places) => crate::metrics::default_ledger(&places.dir),
            Err(e) => {
                eprintln!("toolshape-proxy stats: {e}");
                return ExitCode::FAILURE;
            }
        },
        [flag, path] if flag == "--ledger" => PathBuf::from(path),
        _ => return usage_error("stats takes --ledger PATH, or nothing"),
    };
    match crate::metrics::stats(&ledger) {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolshape-proxy stats: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `preview …`.
async fn preview(args: &[String]) -> ExitCode {
    let mut options = crate::preview::PreviewOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(value) = args.next() else {
            return usage_error(&format!("preview: {arg} needs a value"));
        };
        match arg.as_str() {
            "--recorded" => options.recorded = Some(PathBuf::from(value)),
            "--shape" => options.shape = Some(PathBuf::from(value)),
            "--server" => options.server = Some(PathBuf::from(value)),
            "--preset" => options.preset = Some(value.clone()),
            "--config" => options.config = Some(PathBuf::from(value)),
            "--tool" => options.tool = value.clone(),
            "--client" => options.client = Some(value.clone()),
            "--args" => match serde_json::from_str(value) {
                Ok(serde_json::Value::Object(map)) => options.args = map,
                _ => {
                    return usage_error(
                        "preview: --args takes a JSON object, like '{\"path\": \"a\"}'",
                    );
                }
            },
            _ => return usage_error(&format!("preview: unexpected argument {arg:?}")),
        }
    }
    if options.tool.is_empty() && options.recorded.is_none() {
        return usage_error("preview: name the tool with --tool");
    }
    match crate::preview::preview(&options).await {
        Ok(shown) => {
            print!("{shown}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolshape-proxy preview: {e}");
            ExitCode::FAILURE
        }
    }
}
