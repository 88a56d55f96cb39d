//! `toolshape-proxy`: an MCP server in front of other MCP servers (any language, over stdio),
//! re-exposing their tools through the harness ([`toolshape::mcp::Harness`]) so that every
//! answer is shaped: held to a token budget, cut on record or line boundaries with the
//! omission and the remedy in the same sentence, stored behind a handle that `open_result`
//! reopens, outsiders' text marked.
//!
//! The configuration (TOML) names the upstream servers and, optionally, a shaping
//! configuration file ([`ShapeConfig`]) whose tool names are the names the proxy exposes:
//!
//! ```toml
//! [proxy]
//! shape = "shape.toml"          # budgets, projections, hide, per tool (optional)
//! call_timeout_secs = 120       # an upstream that does not answer in time: a tool error
//! # ledger = "ledger.jsonl"     # a line per page served, for `toolshape-proxy stats`
//! # Replicas behind one address (with --http): stored results in Redis, one cursor key
//! # redis = "redis://127.0.0.1:6379/"   # or TOOLSHAPE_REDIS_URL (feature `redis`)
//! # cursor_key = "…"                    # or TOOLSHAPE_CURSOR_KEY, the same on every replica
//! # With --http: the Host names and browser origins served (default: this machine's own)
//! # allowed_hosts = ["proxy.internal"]
//! # allowed_origins = ["https://app.example.com"]
//! # With --http: each principal's calls in flight and calls a minute (429 past them)
//! # concurrent_calls = 8
//! # calls_per_minute = 600
//!
//! # With --http: who may call, each as a principal whose results and cursors are its own.
//! # Without any, a loopback address serves everyone as `anonymous`; another does not start.
//! [proxy.auth]
//! tokens = { alice = "env:ALICE_TOKEN" }   # 16+ bytes each; TOOLSHAPE_TOKENS adds more
//! # jwks = "jwks.json"                     # JWTs of an authorization server: its key set,
//! # issuer = "https://auth.example.com"    # the issuer,
//! # audience = "https://proxy.example.com/mcp"   # and this proxy's resource URI
//! # anyone = true                          # no credentials, on any address
//!
//! [upstreams.fs]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
//! prefix = "fs_"                # its tools as fs_read_file, fs_list_directory, …
//!
//! [upstreams.search]
//! url = "http://127.0.0.1:8081/mcp"   # a server over streamable HTTP (feature `http`)
//! preset = "none"               # no preset (else the one made for its server, if any)
//!
//! [upstreams.git]
//! command = "uvx"
//! args = ["mcp-server-git", "--repository", "/srv/repo"]
//! env = { GIT_PAGER = "cat" }
//! ```
//!
//! With `--http` it also serves `/metrics` (Prometheus' format): see [`metrics`]. Each
//! upstream's tools get the preset made for its server ([`presets`]: GitHub's, so far) unless
//! the user's shaping configuration names them. Both files are read again when they change
//! ([`reload`]): a bad edit keeps the running configuration and says why.
//!
//! A client starts it as any stdio server (`"command": "toolshape-proxy", "args":
//! ["/path/to/proxy.toml"]`), or `toolshape-proxy wrap` ([`wrap`]) puts the servers a client
//! is configured with behind it, one entry each (`--upstream <name>`: that upstream alone).
//!
//! Each upstream is started as a child process and watched: when it exits (or is killed mid
//! call) the calls in flight answer a tool error that says so, the proxy starts it again and
//! tells the client its tools changed. Progress notifications and cancellation pass through;
//! an upstream's JSON-RPC errors reach the client as they are.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, ContentBlock,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, ServerConfig, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{Notify, RwLock};
use toolshape::config::ShapeConfig;

/// The proxy's configuration file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    /// The proxy's own settings.
    #[serde(default)]
    pub proxy: ProxySettings,
    /// The upstream servers, by name.
    #[serde(default)]
    pub upstreams: BTreeMap<String, UpstreamSpec>,
    /// The file it was read from ([`ProxyConfig::load`]): watched while the proxy runs, and
    /// the shaping configuration reloaded when either file changes ([`reload`]).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[proxy]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySettings {
    /// The shaping configuration file ([`ShapeConfig`]), relative to this file.
    pub shape: Option<PathBuf>,
    /// How long an upstream may take to answer a call (default 120 seconds).
    pub call_timeout_secs: Option<u64>,
    /// The key cursors are signed with (at least 16 bytes), the same on every replica;
    /// `TOOLSHAPE_CURSOR_KEY` overrides it; without either, a random key per process.
    pub cursor_key: Option<String>,
    /// Keep stored results in Redis at this URL (`redis://host:6379/`), so that replicas of
    /// the proxy behind one address open each other's handles and pages (feature `redis`, on
    /// by default); `TOOLSHAPE_REDIS_URL` overrides it. Needs a cursor key shared by the
    /// replicas. Without it, results are kept in the process's memory.
    pub redis: Option<String>,
    /// Refuse to start when the shaping configuration names a tool (`[tools.<name>]`) that no
    /// upstream lists once they have started (`--strict` sets it); without it, each such
    /// name is a warning on stderr.
    #[serde(default)]
    pub strict: bool,
    /// With `--http`, the `Host` names requests may carry (`"proxy.internal"`,
    /// `"proxy.internal:8080"`); a request naming another host is refused (403), against DNS
    /// rebinding. Default: the loopback names (`localhost`, `127.0.0.1`, `::1`).
    pub allowed_hosts: Option<Vec<String>>,
    /// With `--http`, the browser origins a request carrying an `Origin` header may come
    /// from (`"https://app.example.com"`, `"http://localhost:*"`: scheme, host, and a port or
    /// `*`); a request from another origin is refused (403), as the MCP transport
    /// specification requires. A request without `Origin` (a client that is no browser)
    /// passes. Default: the loopback origins on any port.
    pub allowed_origins: Option<Vec<String>>,
    /// With `--http`, the largest request body served, in bytes (default 4 MiB); a larger
    /// one is refused (413) before it is read whole.
    pub max_body_bytes: Option<usize>,
    /// With `--http`, the most requests one principal may have in flight at once; one more
    /// is refused (429) until one is answered. Default: no limit.
    pub concurrent_calls: Option<u32>,
    /// With `--http`, the most requests one principal may make a minute (a bucket that
    /// refills evenly); one more is refused (429, `Retry-After`). Default: no limit.
    pub calls_per_minute: Option<u32>,
    /// With `--http`, who may call and as whom (`[proxy.auth]`).
    #[serde(default)]
    pub auth: AuthSettings,
    /// Append each page's counts (tool, upstream, tokens before and after, status) to this
    /// file, one JSON line each, for `toolshape-proxy stats` (relative to this file; the
    /// configuration `wrap` writes names `~/.toolshape/ledger.jsonl`). Default: none kept.
    pub ledger: Option<PathBuf>,
    /// Serve this upstream alone (`--upstream <name>`, as a client entry `wrap` rewrote
    /// starts it): the others are not started, and the shaping configuration's tools are not
    /// checked against the one upstream's (they may be the others').
    #[serde(skip)]
    pub only: Option<String>,
}

/// `[proxy.auth]`: the credentials a proxy served over HTTP admits, each naming the principal
/// whose stored results and cursors are its own. Without any, a proxy on a loopback address
/// admits every request as principal `anonymous`, and one on any other address does not
/// start.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Each principal and its bearer token (at least 16 bytes; `"env:NAME"` reads it from the
    /// environment variable `NAME`). `TOOLSHAPE_TOKENS` (`alice=…,ci=…`) adds more.
    #[serde(default)]
    pub tokens: BTreeMap<String, String>,
    /// A JSON Web Key Set file (relative to the configuration) whose keys sign the JWTs an
    /// authorization server issues: a JWT of [`issuer`](Self::issuer) for
    /// [`audience`](Self::audience), unexpired, names principal `jwt:` and its subject.
    pub jwks: Option<PathBuf>,
    /// The issuer (`iss`) a JWT must name.
    pub issuer: Option<String>,
    /// The audience (`aud`) a JWT must name: this proxy's resource URI.
    pub audience: Option<String>,
    /// Admit every request, with no credentials, as principal `anonymous` (they then share
    /// one another's results), on any address.
    #[serde(default)]
    pub anyone: bool,
}

/// The browser origins a proxy served over HTTP accepts unless configured: its own machine's.
#[cfg(feature = "http")]
pub const LOOPBACK_ORIGINS: [&str; 5] = toolshape::mcp::Access::LOOPBACK_ORIGINS;

/// `[upstreams.<name>]`: an MCP server the proxy starts and speaks to over stdio.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSpec {
    /// The program, for an upstream over stdio (a child process the proxy starts and
    /// restarts).
    #[serde(default)]
    pub command: Option<String>,
    /// The address of an upstream served over streamable HTTP (`http://host:port/mcp`),
    /// instead of a command (feature `http`). The proxy connects to it and, when it goes
    /// away, connects again.
    #[serde(default)]
    pub url: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it (besides the proxy's own).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The folder it runs in.
    pub cwd: Option<PathBuf>,
    /// Put before each of its tools' names (`fs_`), so two upstreams' tools cannot collide.
    #[serde(default)]
    pub prefix: String,
    /// HTTP headers sent to an upstream over HTTP (`Authorization = "Bearer ${SENTRY_TOKEN}"`):
    /// each `${NAME}` (or `${NAME:-default}`) is read from the proxy's environment when it
    /// connects; one not set stops that upstream, naming it.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The preset its tools are shaped with ([`presets`]): left out, the one made for the
    /// server that answers (its `serverInfo.name`); `"none"` for none.
    #[serde(default)]
    pub preset: Option<String>,
}

/// `value` with each `${…}` in it replaced by what `each` makes of it (given the whole
/// `${…}` and what is inside): the one reader of the `${…}` the clients and the proxy's
/// configuration write. A `${` not closed is an error.
pub(crate) fn substitute(
    value: &str,
    mut each: impl FnMut(&str, &str) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            return Err(format!("{value:?}: `${{` is not closed"));
        };
        let token = &rest[at..at + end + 1];
        out.push_str(&each(token, &token[2..token.len() - 1])?);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `value` with each `${NAME}` replaced by `var(NAME)` and each `${NAME:-default}` by it or
/// `default`; an unset `${NAME}`, or a `${` not closed, is an error that says so.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn expand(value: &str, var: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    substitute(value, |_, inner| {
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        var(name)
            .or_else(|| default.map(str::to_owned))
            .ok_or_else(|| format!("${{{name}}} is not set in the proxy's environment"))
    })
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The configuration file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration is not valid TOML or has an unknown key.
    #[error("invalid proxy configuration {path}: {message}")]
    Toml {
        /// The path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The shaping configuration is wrong.
    #[error(transparent)]
    Shape(#[from] toolshape::config::ConfigError),
    /// The shaping configuration file named by `[proxy] shape` is wrong.
    #[error("{path}: {source}")]
    ShapeFile {
        /// The file.
        path: String,
        /// What is wrong.
        source: toolshape::config::ConfigError,
    },
    /// No upstream is configured.
    #[error("no upstream server in {0}: add [upstreams.<name>] with a command or a url")]
    NoUpstream(String),
    /// An upstream names neither a command nor a URL, or both.
    #[error(
        "upstream `{name}` in {path}: give either `command` (a server over stdio) or `url` (one \
         over streamable HTTP), not {which}"
    )]
    Transport {
        /// The file.
        path: String,
        /// The upstream.
        name: String,
        /// "both" or "neither".
        which: &'static str,
    },
    /// The harness could not be made.
    #[error(transparent)]
    Harness(#[from] toolshape::mcp::HarnessError),
    /// `allowed_hosts`, `allowed_origins` or `max_body_bytes` cannot be used.
    #[error("`{key}` under [proxy]: {message}")]
    Allowed {
        /// The setting.
        key: &'static str,
        /// What is wrong, and what to write.
        message: String,
    },
    /// `[proxy.auth]` or a limit cannot be used.
    #[error("[proxy.auth] or a limit under [proxy]: {0}")]
    Auth(String),
    /// Served over HTTP on an address other machines reach, with no credentials configured.
    #[error(
        "{addr} is reachable from other machines and [proxy.auth] admits no one by name: set \
         `tokens` (or TOOLSHAPE_TOKENS) or `jwks`, `issuer` and `audience`, so that each caller \
         is a principal with results of its own; or `anyone = true` to serve every caller as one"
    )]
    Unauthenticated {
        /// The address bound.
        addr: String,
    },
    /// The cursor key is too short.
    #[error("the cursor key must be at least 16 bytes")]
    CursorKey,
    /// Redis is named but no cursor key is set: each replica would sign cursors with a key of
    /// its own, and none could read another's.
    #[error(
        "results kept in Redis need a cursor key shared by every replica: set `cursor_key` \
         under [proxy] or TOOLSHAPE_CURSOR_KEY (at least 16 bytes)"
    )]
    RedisNeedsKey,
    /// Redis is named but the proxy was built without feature `redis`.
    #[error(
        "`redis` under [proxy] (or TOOLSHAPE_REDIS_URL) needs the proxy built with feature `redis`"
    )]
    RedisNotBuilt,
    /// Redis could not be reached when the proxy started.
    #[error("cannot connect to Redis at {url}: {message}")]
    Redis {
        /// The URL given.
        url: String,
        /// Why.
        message: String,
    },
    /// The shaping configuration names tools no upstream lists, and `strict` is set.
    #[error(
        "{}; with --strict (or `strict = true` under [proxy]) the proxy does not start: correct \
         or remove these sections, or start the upstreams they belong to",
        .0.join("; ")
    )]
    Unlisted(Vec<String>),
    /// The ledger (`ledger` under `[proxy]`) cannot be opened for appending.
    #[error("cannot keep the ledger {path}: {source}")]
    Ledger {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// An upstream's preset cannot be used.
    #[error("upstream `{name}`: {message}")]
    Preset {
        /// The upstream.
        name: String,
        /// Why.
        message: String,
    },
    /// `--upstream` names an upstream the configuration does not have.
    #[error("--upstream {name}: the configuration has no such upstream (it has: {})", .known.join(", "))]
    NoSuchUpstream {
        /// The name given.
        name: String,
        /// The upstreams it has.
        known: Vec<String>,
    },
    /// The address to serve HTTP on could not be bound or served.
    #[error("cannot serve HTTP on {addr}: {source}")]
    Listen {
        /// The address given.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}

impl ProxyConfig {
    /// Reads a proxy configuration file and the shaping configuration it names.
    pub fn load(path: impl AsRef<Path>) -> Result<(ProxyConfig, ShapeConfig), ProxyError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ProxyError::Read {
            path: shown.clone(),
            source,
        })?;
        let config: ProxyConfig = toml::from_str(&text).map_err(|e| ProxyError::Toml {
            path: shown.clone(),
            message: e.to_string().trim().to_owned(),
        })?;
        if config.upstreams.is_empty() {
            return Err(ProxyError::NoUpstream(shown));
        }
        for (name, spec) in &config.upstreams {
            let which = match (&spec.command, &spec.url) {
                (Some(_), Some(_)) => "both",
                (None, None) => "neither",
                _ => continue,
            };
            return Err(ProxyError::Transport {
                path: shown,
                name: name.clone(),
                which,
            });
        }
        for (name, spec) in &config.upstreams {
            presets::choose(spec.preset.as_deref(), None).map_err(|message| {
                ProxyError::Preset {
                    name: name.clone(),
                    message,
                }
            })?;
        }
        let mut config = config;
        config.source = Some(path.to_path_buf());
        if let Some(ledger) = &config.proxy.ledger {
            config.proxy.ledger = Some(path.parent().unwrap_or(Path::new(".")).join(ledger));
        }
        if let Some(jwks) = &config.proxy.auth.jwks {
            config.proxy.auth.jwks = Some(path.parent().unwrap_or(Path::new(".")).join(jwks));
        }
        let shape = match &config.proxy.shape {
            Some(file) => {
                let at = path.parent().unwrap_or(Path::new(".")).join(file);
                ShapeConfig::from_path(&at).map_err(|source| match source {
                    // It names the file already.
                    toolshape::config::ConfigError::Read { .. } => ProxyError::Shape(source),
                    source => ProxyError::ShapeFile {
                        path: at.display().to_string(),
                        source,
                    },
                })?
            }
            None => ShapeConfig::default(),
        };
        Ok((config, shape))
    }

    /// Keeps the upstream `name` alone (`--upstream <name>`).
    pub fn only(&mut self, name: &str) -> Result<(), ProxyError> {
        if !self.upstreams.contains_key(name) {
            return Err(ProxyError::NoSuchUpstream {
                name: name.to_owned(),
                known: self.upstreams.keys().cloned().collect(),
            });
        }
        self.upstreams.retain(|k, _| k == name);
        self.proxy.only = Some(name.to_owned());
        Ok(())
    }
}

/// The shaping configuration the proxy serves with ([`Proxy::ready`]), and what to say of it.
pub struct Ready {
    /// The user's shaping configuration with the presets added.
    pub shape: ShapeConfig,
    /// Each tool the configuration names that no upstream lists, as a sentence.
    pub unlisted: Vec<String>,
    /// What each upstream's preset shapes, leaves out and why, as a sentence.
    pub presets: Vec<String>,
}

/// Upstream progress tokens, to the client's request they belong to.
type Routes = Arc<Mutex<HashMap<ProgressToken, (Peer<RoleServer>, ProgressToken)>>>;

/// The proxy: an MCP server whose tools are its upstreams' (routed by name). Wrap it in the
/// harness ([`serve`]) for every answer to be shaped.
#[derive(Clone)]
pub struct Proxy {
    shared: Arc<Shared>,
}

struct Shared {
    upstreams: Vec<Upstream>,
    timeout: Duration,
    routes: Routes,
    /// The client this proxy serves (the latest seen), told when tools change.
    downstream: Mutex<Option<Peer<RoleServer>>>,
    /// How many times an upstream has listed its tools (connected, or told the proxy they
    /// changed): a preset waits for its upstream's list, so a change is prepared for again.
    listings: AtomicU64,
    /// The [`listings`](Self::listings) the running shaping configuration was prepared from.
    prepared: AtomicU64,
}

struct Upstream {
    name: String,
    spec: UpstreamSpec,
    peer: RwLock<Option<Peer<RoleClient>>>,
    tools: RwLock<Vec<Tool>>,
    /// Why its latest start failed (it did not start, or its tools could not be listed);
    /// `None` once it runs with its tools listed, and before its first attempt ends.
    failure: Mutex<Option<String>>,
    /// Whether a connection attempt has ended (connected or not).
    tried: std::sync::atomic::AtomicBool,
    /// Woken each time a connection attempt ends (connected or not).
    attempted: Notify,
}

impl Upstream {
    /// Why this upstream's tools are not listed: its failure, or that it has not answered
    /// yet; `None` while it runs with its tools listed.
    async fn unlisted_because(&self) -> Option<String> {
        let failure = self.failure.lock().ok().and_then(|f| f.clone());
        if let Some(failure) = failure {
            return Some(format!("did not start ({failure})"));
        }
        let tried = self.tried.load(std::sync::atomic::Ordering::SeqCst);
        (!tried && self.tools.read().await.is_empty()).then(|| "has not answered yet".to_owned())
    }
}

impl Proxy {
    /// The shaping configuration to serve `config` with, at start and at each reload (one
    /// path for both): `shape` checked against the tools the upstreams list (a tool no
    /// upstream lists is said, or under `strict` an error, [`ProxyError::Unlisted`]) and
    /// each upstream's preset added ([`apply_presets`](Self::apply_presets)).
    pub async fn ready(
        &self,
        config: &ProxyConfig,
        mut shape: ShapeConfig,
    ) -> Result<Ready, ProxyError> {
        let listings = self.shared.listings.load(Ordering::SeqCst);
        self.shared.prepared.store(listings, Ordering::SeqCst);
        let unlisted = match config.proxy.only {
            // The shaping configuration may name the other upstreams' tools.
            Some(_) => Vec::new(),
            None => self.unlisted(&shape).await,
        };
        if config.proxy.strict && !unlisted.is_empty() {
            return Err(ProxyError::Unlisted(unlisted));
        }
        let presets = self.apply_presets(&mut shape).await?;
        Ok(Ready {
            shape,
            unlisted,
            presets,
        })
    }

    /// Adds to `shape` each upstream's preset ([`presets`]): the one its configuration names,
    /// else the one made for the server that answered. Gives a sentence per upstream with a
    /// preset (what it shapes, what it left out and why), and an error for a preset name no
    /// preset has.
    pub async fn apply_presets(&self, shape: &mut ShapeConfig) -> Result<Vec<String>, ProxyError> {
        let mut out = Vec::new();
        // The tools the user configured, and those an earlier upstream's preset added (two
        // upstreams without prefixes name their tools alike).
        let mine: Vec<String> = shape.tools.keys().cloned().collect();
        let mut taken: BTreeMap<String, String> = BTreeMap::new();
        for upstream in &self.shared.upstreams {
            let peer = upstream.peer.read().await.clone();
            let server = peer
                .as_ref()
                .and_then(|p| p.peer_info())
                .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()));
            let preset = presets::choose(upstream.spec.preset.as_deref(), server.as_deref())
                .map_err(|message| ProxyError::Preset {
                    name: upstream.name.clone(),
                    message,
                })?;
            let Some(preset) = preset else {
                continue;
            };
            let tools = upstream.tools.read().await.clone();
            // Checked against what it lists once it runs with its tools listed (none is a
            // list too); before, added unchecked, saying why.
            let unlisted = upstream.unlisted_because().await;
            let listed = unlisted.is_none().then_some(tools.as_slice());
            let applied = presets::apply(shape, preset, &upstream.spec.prefix, listed).map_err(
                |message| ProxyError::Preset {
                    name: upstream.name.clone(),
                    message,
                },
            )?;
            let mut sentence = format!(
                "upstream `{}`: the preset `{}` shapes {} tool{}",
                upstream.name,
                preset.name,
                applied.added.len(),
                if applied.added.len() == 1 { "" } else { "s" }
            );
            if let Some(why) = unlisted {
                sentence.push_str(&format!(" (not checked: it {why})"));
            }
            let (yours, others): (Vec<String>, Vec<String>) =
                applied.yours.into_iter().partition(|t| mine.contains(t));
            if !yours.is_empty() {
                sentence.push_str(&format!("; kept as you configured: {}", yours.join(", ")));
            }
            for tool in others {
                let by = taken.get(&tool).map_or("another upstream", String::as_str);
                sentence.push_str(&format!(
                    "; {tool} is the name of upstream `{by}`'s tool already (give one of them a prefix)"
                ));
            }
            for tool in &applied.added {
                taken.insert(tool.clone(), upstream.name.clone());
            }
            if !applied.left.is_empty() {
                sentence.push_str(&format!("; left out: {}", applied.left.join("; ")));
            }
            out.push(sentence);
        }
        Ok(out)
    }

    /// Whether an upstream listed its tools since the shaping configuration was last
    /// prepared ([`ready`](Self::ready)): a preset chosen by the server that answered, or
    /// checked against what it lists, is then prepared again. Marks the change as seen.
    pub(crate) fn relisted(&self) -> bool {
        let listings = self.shared.listings.load(Ordering::SeqCst);
        self.shared.prepared.swap(listings, Ordering::SeqCst) != listings
    }

    /// Tells the client this proxy serves that its tools changed (`notifications/tools/list_changed`).
    pub async fn tools_changed(&self) {
        notify_tools_changed(&self.shared).await;
    }

    /// Starts every upstream (and keeps them running), waiting up to `ready` for each first
    /// connection.
    pub async fn start(config: &ProxyConfig, ready: Duration) -> Proxy {
        let shared = Arc::new(Shared {
            upstreams: config
                .upstreams
                .iter()
                .map(|(name, spec)| Upstream {
                    name: name.clone(),
                    spec: spec.clone(),
                    peer: RwLock::new(None),
                    tools: RwLock::new(Vec::new()),
                    failure: Mutex::new(None),
                    tried: std::sync::atomic::AtomicBool::new(false),
                    attempted: Notify::new(),
                })
                .collect(),
            timeout: Duration::from_secs(config.proxy.call_timeout_secs.unwrap_or(120)),
            routes: Arc::new(Mutex::new(HashMap::new())),
            downstream: Mutex::new(None),
            listings: AtomicU64::new(0),
            prepared: AtomicU64::new(0),
        });
        let mut waits = Vec::new();
        for index in 0..shared.upstreams.len() {
            let first = shared.upstreams[index].attempted.notified();
            waits.push(first);
            tokio::spawn(supervise(Arc::downgrade(&shared), index));
        }
        for wait in waits {
            let _ = tokio::time::timeout(ready, wait).await;
        }
        Proxy { shared }
    }

    /// The tools the proxy exposes, by upstream.
    pub async fn tools(&self) -> Vec<Tool> {
        let mut out = Vec::new();
        for upstream in &self.shared.upstreams {
            for tool in upstream.tools.read().await.iter() {
                let mut tool = tool.clone();
                tool.name = format!("{}{}", upstream.spec.prefix, tool.name).into();
                out.push(tool);
            }
        }
        out
    }

    /// The tools `shape` configures (`[tools.<name>]`) that no upstream lists, each as a
    /// sentence saying so: their settings never apply. A name that may belong to an upstream
    /// whose tools are not listed (it did not start, or has not answered yet: one whose
    /// prefix the name begins with) names that upstream and why; else the tools that are
    /// listed. `open_result`, which the harness adds, is listed.
    pub async fn unlisted(&self, shape: &ShapeConfig) -> Vec<String> {
        let listed: Vec<String> = self
            .tools()
            .await
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        let open_result = toolshape::handle::OpenResult::<toolshape::handle::MemoryStore>::NAME;
        let mut out = Vec::new();
        for name in shape.tools.keys() {
            if name == open_result || listed.contains(name) {
                continue;
            }
            let mut sentence = format!(
                "[tools.{name}] names a tool no upstream lists, so its settings never apply"
            );
            let down = self.unlisted_upstreams(name).await;
            if !down.is_empty() {
                sentence.push_str(&format!("; its upstream may be {}", down.join(", or ")));
            } else if listed.is_empty() {
                sentence.push_str(" (no upstream lists any tool)");
            } else {
                const SHOWN: usize = 8;
                let more = match listed.len().saturating_sub(SHOWN) {
                    0 => String::new(),
                    n => format!(", and {n} more"),
                };
                let first: Vec<&str> = listed.iter().take(SHOWN).map(String::as_str).collect();
                sentence.push_str(&format!(" (tools listed: {}{more})", first.join(", ")));
            }
            out.push(sentence);
        }
        out
    }

    /// The upstreams whose tools are not listed that a tool called `name` may belong to (its
    /// name begins with their prefix), each as `` `fs` (prefix `fs_`), which did not start
    /// (…) ``.
    async fn unlisted_upstreams(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        for upstream in &self.shared.upstreams {
            if !name.starts_with(&upstream.spec.prefix) {
                continue;
            }
            if let Some(why) = upstream.unlisted_because().await {
                let prefix = match upstream.spec.prefix.as_str() {
                    "" => String::new(),
                    p => format!(" (prefix `{p}`)"),
                };
                out.push(format!(
                    "the upstream server `{}`{prefix}, which {why}",
                    upstream.name
                ));
            }
        }
        out
    }

    /// The upstream a tool the proxy exposes belongs to, and its name there.
    async fn route(&self, name: &str) -> Option<(&Upstream, String)> {
        for upstream in &self.shared.upstreams {
            let Some(own) = name.strip_prefix(&upstream.spec.prefix) else {
                continue;
            };
            if upstream.tools.read().await.iter().any(|t| t.name == own) {
                return Some((upstream, own.to_owned()));
            }
        }
        None
    }

    fn remember(&self, peer: &Peer<RoleServer>) {
        if let Ok(mut downstream) = self.shared.downstream.lock() {
            *downstream = Some(peer.clone());
        }
    }

    async fn forward(
        &self,
        upstream: &Upstream,
        mut request: CallToolRequestParams,
        own: String,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(peer) = upstream.peer.read().await.clone() else {
            return Ok(failed(format!(
                "the upstream server `{}` is not running; the proxy is starting it again: call again in a few seconds",
                upstream.name
            )));
        };
        request.name = own.into();
        // A call that reports progress may take longer: each report restarts the clock.
        let options =
            PeerRequestOptions::with_timeout(self.shared.timeout).reset_timeout_on_progress();
        let handle = match peer
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(request)),
                options,
            )
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                return Ok(failed(upstream_failure(
                    &upstream.name,
                    &e,
                    self.shared.timeout,
                )));
            }
        };
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        if let Some(theirs) = context.meta.get_progress_token()
            && let Ok(mut routes) = self.shared.routes.lock()
        {
            routes.insert(token.clone(), (context.peer.clone(), theirs));
        }
        let outcome = tokio::select! {
            outcome = handle.await_response() => Some(outcome),
            () = context.ct.cancelled() => None,
        };
        if let Ok(mut routes) = self.shared.routes.lock() {
            routes.remove(&token);
        }
        match outcome {
            None => {
                // The client gave up: so does the upstream.
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the client cancelled the call".to_owned()),
                    ))
                    .await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            Some(Ok(ServerResult::CallToolResult(result))) => Ok(result.into()),
            Some(Ok(ServerResult::CreateTaskResult(task))) => Ok(CallToolResponse::Task(task)),
            Some(Ok(ServerResult::InputRequiredResult(input))) => {
                Ok(CallToolResponse::InputRequired(input))
            }
            Some(Ok(_)) => Ok(failed(format!(
                "the upstream server `{}` answered the call with something other than a tool result",
                upstream.name
            ))),
            // The upstream's own JSON-RPC error (unknown tool, bad arguments): as it is.
            Some(Err(rmcp::ServiceError::McpError(e))) => Err(e),
            Some(Err(e)) => Ok(failed(upstream_failure(
                &upstream.name,
                &e,
                self.shared.timeout,
            ))),
        }
    }
}

/// A tool error that says what happened to the upstream and what to do.
fn failed(message: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(message)]).into()
}

fn upstream_failure(name: &str, error: &rmcp::ServiceError, timeout: Duration) -> String {
    match error {
        rmcp::ServiceError::Timeout { .. } => format!(
            "the upstream server `{name}` did not answer within {} s (it may have sent a reply the proxy could not read); call again, or with narrower arguments",
            timeout.as_secs()
        ),
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => format!(
            "the upstream server `{name}` stopped during the call; the proxy is starting it again: call again in a few seconds"
        ),
        other => format!("the upstream server `{name}` failed: {other}; call again"),
    }
}

/// Keeps upstream `index` running: connects, lists its tools, waits for it to end, starts
/// it again (backing off to 30 seconds while it keeps failing).
async fn supervise(shared: Weak<Shared>, index: usize) {
    let mut backoff = Duration::from_millis(200);
    let mut first = true;
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let upstream = &strong.upstreams[index];
        let handler = UpstreamHandler {
            shared: Weak::clone(&shared),
            index,
        };
        match connect(&upstream.spec, handler).await {
            Ok(running) => {
                let peer = running.peer().clone();
                let failure = match peer.list_all_tools().await {
                    Ok(tools) => {
                        *upstream.tools.write().await = tools;
                        None
                    }
                    Err(e) => {
                        tracing::warn!(upstream = %upstream.name, error = %e, "listing its tools failed");
                        Some(format!("listing its tools failed: {e}"))
                    }
                };
                set_failure(upstream, failure);
                *upstream.peer.write().await = Some(peer);
                strong.listings.fetch_add(1, Ordering::SeqCst);
                let count = upstream.tools.read().await.len();
                tracing::info!(upstream = %upstream.name, tools = count, "upstream connected");
                if !first {
                    notify_tools_changed(&strong).await;
                }
                upstream.attempted.notify_waiters();
                first = false;
                backoff = Duration::from_millis(200);
                drop(strong);
                let why = running.waiting().await;
                let Some(strong) = shared.upgrade() else {
                    return;
                };
                let upstream = &strong.upstreams[index];
                tracing::warn!(upstream = %upstream.name, reason = ?why, "upstream ended; starting it again");
                *upstream.peer.write().await = None;
            }
            Err(e) => {
                tracing::warn!(upstream = %upstream.name, error = %e, "upstream did not start");
                set_failure(upstream, Some(e.to_string()));
                upstream.attempted.notify_waiters();
                first = false;
                drop(strong);
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
}

/// Records how `upstream`'s latest attempt ended: `failure`, or `None` when it runs with its
/// tools listed.
fn set_failure(upstream: &Upstream, failure: Option<String>) {
    if let Ok(mut latest) = upstream.failure.lock() {
        *latest = failure;
    }
    upstream
        .tried
        .store(true, std::sync::atomic::Ordering::SeqCst);
}

async fn connect(
    spec: &UpstreamSpec,
    handler: UpstreamHandler,
) -> Result<RunningService<RoleClient, UpstreamHandler>, Box<dyn std::error::Error + Send + Sync>> {
    if let Some(url) = &spec.url {
        #[cfg(feature = "http")]
        {
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.as_str(),
                );
            for (name, value) in &spec.headers {
                let value = expand(value, |v| std::env::var(v).ok())
                    .map_err(|e| format!("header `{name}`: {e}"))?;
                let header = axum::http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header `{name}`: {e}"))?;
                let value = axum::http::HeaderValue::from_str(&value)
                    .map_err(|e| format!("header `{name}`: {e}"))?;
                config.custom_headers.insert(header, value);
            }
            let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
            return Ok(handler.serve(transport).await?);
        }
        #[cfg(not(feature = "http"))]
        return Err(format!(
            "{url}: an upstream over HTTP needs the proxy built with feature `http`"
        )
        .into());
    }
    let program = spec.command.as_deref().unwrap_or_default();
    let command = tokio::process::Command::new(program).configure(|c| {
        c.args(&spec.args);
        c.envs(&spec.env);
        if let Some(dir) = &spec.cwd {
            c.current_dir(dir);
        }
    });
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::inherit())
        .spawn()?;
    Ok(handler.serve(transport).await?)
}

async fn notify_tools_changed(shared: &Shared) {
    let peer = shared.downstream.lock().ok().and_then(|d| d.clone());
    if let Some(peer) = peer {
        let _ = peer.notify_tool_list_changed().await;
    }
}

/// The proxy as a client of one upstream: progress and tool-list changes passed on.
#[derive(Clone)]
struct UpstreamHandler {
    shared: Weak<Shared>,
    index: usize,
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolshape-proxy", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        progress: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let route = shared
            .routes
            .lock()
            .ok()
            .and_then(|r| r.get(&progress.progress_token).cloned());
        if let Some((peer, token)) = route {
            let mut forwarded = ProgressNotificationParam::new(token, progress.progress);
            forwarded.total = progress.total;
            forwarded.message = progress.message;
            let _ = peer.notify_progress(forwarded).await;
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let upstream = &shared.upstreams[self.index];
        let peer = upstream.peer.read().await.clone();
        if let Some(peer) = peer
            && let Ok(tools) = peer.list_all_tools().await
        {
            *upstream.tools.write().await = tools;
            shared.listings.fetch_add(1, Ordering::SeqCst);
        }
        notify_tools_changed(&shared).await;
    }
}

impl ServerHandler for Proxy {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.remember(&context.peer);
        let name = request.name.to_string();
        if let Some((upstream, own)) = self.route(&name).await {
            metrics::routed(&name, &upstream.name);
            return self.forward(upstream, request, own, context).await;
        }
        // A tool of an upstream that did not start is not listed: its reason, not "no tool".
        let down = self.unlisted_upstreams(&name).await;
        if !down.is_empty() {
            return Ok(failed(format!(
                "no tool `{name}` is listed: it may be a tool of {}; the proxy keeps trying to \
                 start it (every 30 s at most): call again later, and if the reason stays, \
                 tell the user the proxy's configuration of that server needs fixing",
                down.join(", or of ")
            )));
        }
        Err(ErrorData::invalid_params(
            format!("no tool `{name}`; list the tools to see their names"),
            None,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.remember(&context.peer);
        Ok(ListToolsResult::with_all_items(self.tools().await))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "toolshape-proxy",
            env!("CARGO_PKG_VERSION"),
        ))
    }
}

/// The proxy of `config` wrapped in the harness, with the cursor key from
/// `TOOLSHAPE_CURSOR_KEY` or the configuration (else a random one), results kept in Redis when
/// `TOOLSHAPE_REDIS_URL` or the configuration names it (else in memory).
async fn harness(config: &ProxyConfig, shape: ShapeConfig) -> Result<Shaped, ProxyError> {
    let key = std::env::var("TOOLSHAPE_CURSOR_KEY")
        .ok()
        .filter(|k| !k.is_empty())
        .or_else(|| config.proxy.cursor_key.clone());
    let redis = std::env::var("TOOLSHAPE_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| config.proxy.redis.clone());
    let keys = match &key {
        Some(key) => Some(
            toolshape::cursor::CursorKeys::new(key.as_bytes())
                .map_err(|_| ProxyError::CursorKey)?,
        ),
        None => None,
    };
    if redis.is_some() && keys.is_none() {
        return Err(ProxyError::RedisNeedsKey);
    }
    #[cfg(not(feature = "redis"))]
    if redis.is_some() {
        return Err(ProxyError::RedisNotBuilt);
    }
    // Reached before the upstreams start, so a wrong URL fails at once.
    #[cfg(feature = "redis")]
    let redis = match (&redis, &key) {
        (Some(url), Some(key)) => {
            let failed = |message: String| ProxyError::Redis {
                url: url.clone(),
                message,
            };
            let store = toolshape::handle::RedisStore::builder(url.as_str())
                // Owners are named by a keyed hash in Redis: the same key on every replica.
                .owner_key(key.as_bytes())
                .connect()
                .await
                .map_err(|e| failed(e.to_string()))?;
            // Positions a page holds rather than writes into its cursor, as long as the
            // results they point into.
            let positions = toolshape::cursor::RedisCursorStore::builder(url)
                .ttl(Duration::from_secs(
                    toolshape::handle::HandlePolicy::default().ttl_secs,
                ))
                .connect()
                .map_err(|e| failed(e.to_string()))?;
            Some((store, positions))
        }
        _ => None,
    };
    if let Some(ledger) = &config.proxy.ledger {
        metrics::open_ledger(ledger).map_err(|source| ProxyError::Ledger {
            path: ledger.display().to_string(),
            source,
        })?;
    }
    if let Some(name) = &config.proxy.only {
        metrics::alone(name);
    }
    let proxy = Proxy::start(config, Duration::from_secs(60)).await;
    let ready = proxy.ready(config, shape).await?;
    for sentence in &ready.unlisted {
        tracing::warn!("{sentence}");
    }
    for sentence in &ready.presets {
        tracing::info!("{sentence}");
    }
    let mut harness = toolshape::mcp::Harness::new(proxy, ready.shape)?;
    if let Some(keys) = keys {
        harness = harness.cursor_keys(keys);
    }
    #[cfg(feature = "redis")]
    if let Some((store, positions)) = redis {
        let harness = harness.cursor_store(positions).store(store);
        reload::watch(harness.clone(), config.clone(), reload::EVERY);
        return Ok(Shaped::Redis(harness));
    }
    reload::watch(harness.clone(), config.clone(), reload::EVERY);
    Ok(Shaped::Memory(harness))
}

/// The proxy in the harness, its results in memory or in Redis.
enum Shaped {
    Memory(toolshape::mcp::Harness<Proxy>),
    #[cfg(feature = "redis")]
    Redis(toolshape::mcp::Harness<Proxy, toolshape::handle::RedisStore>),
}

async fn serve_stdio<S: toolshape::handle::HandleStore + 'static>(
    harness: toolshape::mcp::Harness<Proxy, S>,
) {
    match harness
        .serve(toolshape::mcp::guarded(rmcp::transport::stdio()))
        .await
    {
        Ok(service) => {
            let _ = service.waiting().await;
        }
        Err(e) => tracing::error!(error = %e, "the client did not connect"),
    }
}

/// Serves the proxy of `config` on stdio, every answer through the harness, until the client
/// goes away.
pub async fn serve(config: &ProxyConfig, shape: ShapeConfig) -> Result<(), ProxyError> {
    match harness(config, shape).await? {
        Shaped::Memory(h) => serve_stdio(h).await,
        #[cfg(feature = "redis")]
        Shaped::Redis(h) => serve_stdio(h).await,
    }
    Ok(())
}

/// Serves the proxy of `config` over MCP's streamable HTTP transport at `http://{addr}/mcp`
/// (feature `http`, on by default), every answer through the harness, until the process is
/// stopped. Stateless: no session is kept between requests, so a client that names itself
/// in each request's `_meta` (protocol 2026-07-28) gets its channel profile on every call,
/// and answers are plain JSON. Replicas behind one address share stored results (and so every
/// page and handle) when `redis` and `cursor_key` are set; otherwise they live in this
/// process. Each replica runs its own upstreams. A change in the
/// upstreams' tools is not pushed (there is no stream to push it on); clients see it on
/// their next `tools/list`.
#[cfg(feature = "http")]
pub async fn serve_http(
    config: &ProxyConfig,
    shape: ShapeConfig,
    addr: &str,
) -> Result<(), ProxyError> {
    let listen = |source| ProxyError::Listen {
        addr: addr.to_owned(),
        source,
    };
    let checks = http_checks(&config.proxy)?;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(listen)?;
    let loopback = listener.local_addr().map_err(listen)?.ip().is_loopback();
    let access =
        http_access(&config.proxy, loopback)?.ok_or_else(|| ProxyError::Unauthenticated {
            addr: addr.to_owned(),
        })?;
    let app = match harness(config, shape).await? {
        Shaped::Memory(h) => http_app(h, checks),
        #[cfg(feature = "redis")]
        Shaped::Redis(h) => http_app(h, checks),
    };
    let app = access.protect(app);
    tracing::info!(addr, "serving MCP over streamable HTTP at /mcp");
    axum::serve(listener, app).await.map_err(listen)
}

/// What an HTTP proxy accepts, checked: the `Host` names (`None`: rmcp's loopback default),
/// the `Origin`s, the largest body (`None`: rmcp's 4 MiB).
#[cfg(feature = "http")]
type HttpChecks = (Option<Vec<String>>, Vec<String>, Option<usize>);

/// The hosts and origins of `settings`, or why they cannot be used: an empty list (which
/// would turn the check off, or refuse every browser), an origin without its scheme.
#[cfg(feature = "http")]
fn http_checks(settings: &ProxySettings) -> Result<HttpChecks, ProxyError> {
    let hosts = match &settings.allowed_hosts {
        Some(hosts) if hosts.iter().all(|h| h.trim().is_empty()) => {
            return Err(ProxyError::Allowed {
                key: "allowed_hosts",
                message: "the list is empty: name the hosts clients reach the proxy by \
                          (`allowed_hosts = [\"proxy.internal\"]`), or leave it out for \
                          the loopback names"
                    .to_owned(),
            });
        }
        hosts => hosts.clone(),
    };
    let origins = match &settings.allowed_origins {
        None => LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
        Some(origins) => {
            if origins.is_empty() {
                return Err(ProxyError::Allowed {
                    key: "allowed_origins",
                    message: "the list is empty: name the origins browsers may call from \
                              (`allowed_origins = [\"https://app.example.com\"]`), or leave \
                              it out for the loopback origins"
                        .to_owned(),
                });
            }
            for origin in origins {
                let rest = origin
                    .strip_prefix("https://")
                    .or_else(|| origin.strip_prefix("http://"));
                let host = rest.map(|r| r.trim_end_matches(":*"));
                let plain = |h: &str| {
                    !h.is_empty() && !h.contains(['/', '?', '#', '@', ' ']) && !h.starts_with(':')
                };
                if origin != "null" && !host.is_some_and(plain) {
                    return Err(ProxyError::Allowed {
                        key: "allowed_origins",
                        message: format!(
                            "{origin:?} is no origin: write a scheme and a host, and a port or \
                             `*` (`https://app.example.com`, `http://localhost:*`), nothing \
                             after them"
                        ),
                    });
                }
            }
            origins.clone()
        }
    };
    if settings.max_body_bytes == Some(0) {
        return Err(ProxyError::Allowed {
            key: "max_body_bytes",
            message: "0 refuses every request: give the largest body in bytes (an \
                      `initialize` is about 200), or leave it out for 4 MiB"
                .to_owned(),
        });
    }
    Ok((hosts, origins, settings.max_body_bytes))
}

/// Who the proxy admits over HTTP and how much, from `settings` and `TOOLSHAPE_TOKENS`;
/// `None` when no credentials are configured and the address is not `loopback`.
#[cfg(feature = "http")]
pub fn http_access(
    settings: &ProxySettings,
    loopback: bool,
) -> Result<Option<toolshape::mcp::Access>, ProxyError> {
    use toolshape::mcp::Access;
    let auth = &settings.auth;
    let wrong = |e: toolshape::mcp::AccessError| ProxyError::Auth(e.to_string());
    let mut tokens: Vec<(String, String)> = Vec::new();
    for (principal, token) in &auth.tokens {
        let token = match token.strip_prefix("env:") {
            Some(name) => std::env::var(name).map_err(|_| {
                ProxyError::Auth(format!(
                    "the token of principal {principal:?} is read from ${name}, which is not set"
                ))
            })?,
            None => token.clone(),
        };
        tokens.push((principal.clone(), token));
    }
    let listed = std::env::var("TOOLSHAPE_TOKENS").unwrap_or_default();
    let jwt = match (&auth.jwks, &auth.issuer, &auth.audience) {
        (None, None, None) => None,
        (Some(jwks), Some(issuer), Some(audience)) => Some((jwks, issuer, audience)),
        _ => {
            return Err(ProxyError::Auth(
                "JWTs need all three of `jwks` (the key set file), `issuer` and `audience`"
                    .to_owned(),
            ));
        }
    };
    let named =
        !tokens.is_empty() || listed.split(',').any(|p| !p.trim().is_empty()) || jwt.is_some();
    if auth.anyone && named {
        return Err(ProxyError::Auth(
            "`anyone = true` admits every caller as one principal, so tokens and JWTs would \
             name no one: keep one or the other"
                .to_owned(),
        ));
    }
    let mut access = match (named, auth.anyone || loopback) {
        (true, _) => Access::new(),
        (false, true) => Access::anyone(),
        (false, false) => return Ok(None),
    };
    for (principal, token) in tokens {
        access = access.token(principal, token).map_err(wrong)?;
    }
    access = access.tokens(&listed).map_err(wrong)?;
    if let Some((jwks, issuer, audience)) = jwt {
        access = access.jwks_file(jwks, issuer, audience).map_err(wrong)?;
    }
    if let Some(calls) = settings.concurrent_calls {
        access = access.concurrent_calls(calls).map_err(wrong)?;
    }
    if let Some(calls) = settings.calls_per_minute {
        access = access.calls_per_minute(calls).map_err(wrong)?;
    }
    Ok(Some(access))
}

#[cfg(feature = "http")]
fn http_app<S: toolshape::handle::HandleStore + Send + Sync + 'static>(
    harness: toolshape::mcp::Harness<Proxy, S>,
    (hosts, origins, max_body): HttpChecks,
) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };
    let mut http = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_origins(origins);
    if let Some(hosts) = hosts {
        http = http.with_allowed_hosts(hosts);
    }
    if let Some(bytes) = max_body {
        http = http.with_max_request_body_bytes(bytes);
    }
    let service = StreamableHttpService::new(
        move || Ok(harness.clone()),
        Arc::new(NeverSessionManager::default()),
        http,
    );
    axum::Router::new().nest_service("/mcp", service).route(
        "/metrics",
        axum::routing::get(|| async {
            (
                [(axum::http::header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
                metrics::render(),
            )
        }),
    )
}

pub mod cli;
pub mod metrics;
pub mod presets;
pub mod preview;
pub mod reload;
pub mod wrap;

#[cfg(all(test, feature = "http"))]
mod header_tests;
#[cfg(test)]
mod order_tests;
#[cfg(all(test, feature = "http"))]
mod test_support;
