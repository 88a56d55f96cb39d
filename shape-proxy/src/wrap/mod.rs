//! `toolshape-proxy wrap`, `unwrap` and `discover`: the MCP servers a client is configured
//! with, put behind the proxy in one command and taken out again.
//!
//! `wrap` reads the MCP configuration of Claude Code (`~/.claude.json`, its user servers and
//! each project's; `.mcp.json` in the current folder), Codex (`$CODEX_HOME/config.toml`,
//! default `~/.codex`), VS Code (the user's `mcp.json`; `.vscode/mcp.json` here), Cursor
//! (`~/.cursor/mcp.json`; `.cursor/mcp.json` here) or any file given with `--file`. Each
//! server it can put behind the proxy becomes an upstream of the proxy's configuration
//! (`$TOOLSHAPE_HOME/proxy.toml`, default `~/.toolshape`): its command, arguments and folder,
//! or its URL. The client's entry is rewritten to start
//! `toolshape-proxy --upstream <name> <proxy.toml>` and keeps its name (so the client's tool
//! names and permissions stay what they were), its `env`, `envFile`, `cwd` and every other
//! setting: the client still expands and sets them, and the proxy passes its environment
//! and folder on to the server. Only the entry's bytes change; the rest of the file (its
//! comments, layout, the client's own state) is kept byte for byte, and the edit is checked
//! to have changed nothing else before anything is written.
//!
//! Before a file is rewritten it is copied to `$TOOLSHAPE_HOME/backups/`, and
//! `$TOOLSHAPE_HOME/wrapped.json` records each entry as it was. `unwrap` puts the file back:
//! byte for byte when nothing changed it since; otherwise each wrapped entry is put back as
//! it was written, and every other edit made since is kept. `--dry-run` prints the changes
//! as a diff and writes nothing.
//!
//! The headers a client sends a server over HTTP become the upstream's `headers`, each
//! variable in them set on the proxy by the client's entry: in its `env`, in the client's
//! own syntax (`${input:…}`, `${env:…}`), for the JSON clients; in `env_vars` for Codex
//! (`http_headers`, `env_http_headers`, `bearer_token_env_var`), since Codex gives a server
//! over stdio only the variables that lists. `unwrap` puts them back as they were.
//!
//! A server is left where it is, with the reason, when the proxy could not start or reach it
//! as the client does: a value holding a variable only the client expands (`${…}`) in its
//! command, arguments or URL; a server over the older SSE transport; a header the proxy
//! cannot send as the client does (a Codex header written with `${`, one set twice, a
//! variable's name that is not one).

mod json;
mod toml;

use crate::{ProxyConfig, UpstreamSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The first argument of a client entry that starts the proxy for one upstream:
/// `toolshape-proxy --upstream <name> <proxy.toml>`.
pub const UPSTREAM_FLAG: &str = "--upstream";

/// A client whose MCP configuration `wrap` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `~/.claude.json` (`mcpServers`, and `projects.<folder>.mcpServers`), a
    /// project's `.mcp.json`.
    ClaudeCode,
    /// Codex: `$CODEX_HOME/config.toml` (`[mcp_servers.<name>]`).
    Codex,
    /// VS Code: the user's `mcp.json` and a workspace's `.vscode/mcp.json` (`servers`).
    VsCode,
    /// Cursor: `~/.cursor/mcp.json` and a project's `.cursor/mcp.json` (`mcpServers`).
    Cursor,
}

impl Client {
    /// Every client, in the order they are reported.
    pub const ALL: [Client; 4] = [
        Client::ClaudeCode,
        Client::Codex,
        Client::VsCode,
        Client::Cursor,
    ];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
            Client::VsCode => "VS Code",
            Client::Cursor => "Cursor",
        }
    }

    /// The client a command-line word names (`claude`, `codex`, `vscode`, `cursor`).
    pub fn from_word(word: &str) -> Option<Client> {
        match word.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claude_code" => Some(Client::ClaudeCode),
            "codex" => Some(Client::Codex),
            "vscode" | "vs-code" | "code" => Some(Client::VsCode),
            "cursor" => Some(Client::Cursor),
            _ => None,
        }
    }
}

/// Where the clients' files and the proxy's own live.
#[derive(Debug, Clone)]
pub struct Places {
    /// The user's home folder (`HOME`).
    pub home: PathBuf,
    /// The folder project-scoped files are looked for in (the current one).
    pub cwd: PathBuf,
    /// `XDG_CONFIG_HOME`, default `~/.config` (VS Code's user folder on Linux).
    pub config_home: PathBuf,
    /// `CODEX_HOME`, default `~/.codex`.
    pub codex_home: PathBuf,
    /// The proxy's own folder: `proxy.toml`, `wrapped.json`, `backups/`
    /// (`TOOLSHAPE_HOME`, default `~/.toolshape`).
    pub dir: PathBuf,
}

impl Places {
    /// The places this process's environment names.
    pub fn from_env() -> Result<Places, WrapError> {
        let cwd = std::env::current_dir().map_err(|source| WrapError::Read {
            path: ".".to_owned(),
            source,
        })?;
        Places::from_vars(|name| std::env::var_os(name), cwd)
    }

    /// The places the variables `var` gives name (an empty one is as unset), with `cwd` as
    /// the current folder.
    fn from_vars(
        var: impl Fn(&str) -> Option<std::ffi::OsString>,
        cwd: PathBuf,
    ) -> Result<Places, WrapError> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .ok_or_else(|| WrapError::Usage("neither HOME nor USERPROFILE is set".to_owned()))?;
        Ok(Places {
            config_home: var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex_home: var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            dir: var("TOOLSHAPE_HOME").unwrap_or_else(|| home.join(".toolshape")),
            cwd,
            home,
        })
    }

    /// The files `client` may keep its MCP servers in, whether they exist or not.
    fn files_of(&self, client: Client) -> Vec<ClientFile> {
        let json = |path: PathBuf, key| ClientFile {
            path,
            client: Some(client),
            format: Format::Json(key),
        };
        match client {
            Client::ClaudeCode => vec![
                json(self.home.join(".claude.json"), "mcpServers"),
                json(self.cwd.join(".mcp.json"), "mcpServers"),
            ],
            Client::Codex => vec![ClientFile {
                path: self.codex_home.join("config.toml"),
                client: Some(client),
                format: Format::Toml,
            }],
            Client::VsCode => vec![
                json(self.config_home.join("Code/User/mcp.json"), "servers"),
                json(
                    self.home
                        .join("Library/Application Support/Code/User/mcp.json"),
                    "servers",
                ),
                json(self.cwd.join(".vscode/mcp.json"), "servers"),
            ],
            Client::Cursor => vec![
                json(self.home.join(".cursor/mcp.json"), "mcpServers"),
                json(self.cwd.join(".cursor/mcp.json"), "mcpServers"),
            ],
        }
    }

    /// `path` as shown: under the home folder as `~/…`.
    fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.home) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => path.display().to_string(),
        }
    }

    fn proxy_toml(&self) -> PathBuf {
        self.dir.join("proxy.toml")
    }

    fn manifest(&self) -> PathBuf {
        self.dir.join("wrapped.json")
    }
}

/// How a file writes its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// JSON (comments allowed) with the servers under this key.
    Json(&'static str),
    /// Codex's TOML (`[mcp_servers.<name>]`).
    Toml,
}

/// A client's configuration file.
#[derive(Debug, Clone)]
struct ClientFile {
    path: PathBuf,
    client: Option<Client>,
    format: Format,
}

impl ClientFile {
    /// A file given by path: TOML by its extension, else JSON with `servers` (VS Code's
    /// layout) when it has that key and no `mcpServers`.
    fn given(path: &Path) -> Result<ClientFile, WrapError> {
        let format = if path.extension().is_some_and(|e| e == "toml") {
            Format::Toml
        } else {
            let text = read(path)?;
            let value = json::value(&text, &path.display().to_string())?;
            if value.get("servers").is_some() && value.get("mcpServers").is_none() {
                Format::Json("servers")
            } else {
                Format::Json("mcpServers")
            }
        };
        Ok(ClientFile {
            path: path.to_owned(),
            client: None,
            format,
        })
    }

    fn label(&self, places: &Places) -> String {
        match self.client {
            Some(client) => format!("{} ({})", places.shown(&self.path), client.name()),
            None => places.shown(&self.path),
        }
    }

    fn entries(&self, text: &str) -> Result<Vec<Entry>, WrapError> {
        let what = self.path.display().to_string();
        match self.format {
            Format::Json(key) => json::entries(text, key, &what),
            Format::Toml => toml::entries(text, &what),
        }
    }

    fn value(&self, text: &str) -> Result<Value, WrapError> {
        let what = self.path.display().to_string();
        match self.format {
            Format::Json(_) => json::value(text, &what),
            Format::Toml => toml::value(text, &what),
        }
    }
}

/// One server entry of a client's file.
#[derive(Debug, Clone)]
struct Entry {
    /// The keys from the file's root to the entry (`mcpServers`, `fs`).
    at: Vec<String>,
    state: State,
    /// Its bytes in the file (JSON).
    range: Option<Range<usize>>,
}

impl Entry {
    fn name(&self) -> &str {
        self.at.last().map_or("", String::as_str)
    }

    /// The name, and the project it belongs to when it is one's (`fs` of `/repo`).
    fn label(&self) -> String {
        match self.at.as_slice() {
            [projects, folder, _, name] if projects == "projects" => {
                format!("{name} (of {folder})")
            }
            _ => self.name().to_owned(),
        }
    }
}

/// What `wrap` can do with an entry.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Put it behind the proxy, as this upstream; `env`: the variables its entry must set on
    /// the proxy (each name, and the client's own `${…}` the client expands into it).
    Ready { spec: UpstreamSpec, env: Vars },
    /// It starts the proxy already, for this upstream.
    Wrapped { upstream: String },
    /// Leave it, for this reason.
    Skipped(String),
}

/// An entry's settings (as JSON, whichever format they were written in), judged.
fn classify(entry: &Value) -> State {
    let Some(map) = entry.as_object() else {
        return State::Skipped("its entry is not a table of settings".to_owned());
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    let args = match map.get("args") {
        None => Some(Vec::new()),
        Some(Value::Array(args)) => args.iter().map(|a| a.as_str().map(str::to_owned)).collect(),
        Some(_) => None,
    };
    let Some(args) = args else {
        return State::Skipped("its `args` is not a list of strings".to_owned());
    };
    if args.first().map(String::as_str) == Some(UPSTREAM_FLAG) {
        return State::Wrapped {
            upstream: args.get(1).cloned().unwrap_or_default(),
        };
    }
    let expanded = |value: &str| {
        format!(
            "{value:?} holds a variable the client expands, which the proxy would not: put it \
             behind the proxy by hand"
        )
    };
    let kind = text("type");
    match (text("command"), text("url")) {
        (Some(_), Some(_)) => State::Skipped("it names both a command and a url".to_owned()),
        (Some(command), None) => {
            if let Some(kind) = kind.filter(|k| *k != "stdio") {
                return State::Skipped(format!("its type is {kind:?} but it names a command"));
            }
            if let Some(value) = std::iter::once(command)
                .chain(args.iter().map(String::as_str))
                .find(|v| v.contains("${"))
            {
                return State::Skipped(expanded(value));
            }
            State::Ready {
                spec: UpstreamSpec {
                    command: Some(command.to_owned()),
                    args,
                    // A folder the client expands stays the client's alone: the proxy runs in it.
                    cwd: text("cwd").filter(|c| !c.contains("${")).map(PathBuf::from),
                    ..UpstreamSpec::default()
                },
                env: Vec::new(),
            }
        }
        (None, Some(url)) => {
            if kind == Some("sse") {
                return State::Skipped(
                    "it is served over SSE, which the proxy does not speak (streamable HTTP only)"
                        .to_owned(),
                );
            }
            if url.contains("${") {
                return State::Skipped(expanded(url));
            }
            let empty = Map::new();
            let env = map.get("env").and_then(Value::as_object).unwrap_or(&empty);
            let headers = match map.get("headers") {
                None | Some(Value::Null) => Ok((BTreeMap::new(), Vec::new())),
                Some(Value::Object(headers)) => headers_for_proxy(headers, env),
                Some(_) => Err("its `headers` is not a table of strings".to_owned()),
            };
            // Codex's own headers join them: one table the proxy sends.
            let headers = headers.and_then(|(mut headers, mut env)| {
                let (codex, vars) = codex_headers(map)?;
                for (header, value) in codex {
                    if headers.keys().any(|h| h.eq_ignore_ascii_case(&header)) {
                        return Err(format!("it sets the header `{header}` twice"));
                    }
                    headers.insert(header, value);
                }
                env.extend(vars);
                Ok((headers, env))
            });
            match headers {
                Ok((headers, env)) => State::Ready {
                    spec: UpstreamSpec {
                        url: Some(url.to_owned()),
                        headers,
                        ..UpstreamSpec::default()
                    },
                    env,
                },
                Err(why) => State::Skipped(why),
            }
        }
        (None, None) => State::Skipped("it names neither a command nor a url".to_owned()),
    }
}

/// Variables an entry sets on the proxy: each name, and the client's `${…}` for it.
type Vars = Vec<(String, String)>;

/// Whether `name` can be a variable's name in `${NAME}` as the proxy expands it.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The headers Codex sends an HTTP server from its entry (`http_headers`, as written;
/// `env_http_headers`, each from a variable of Codex's environment; `bearer_token_env_var`,
/// as `Authorization: Bearer …`), as the proxy sends them: a variable as `${NAME}`, and each
/// variable named, for the entry's `env_vars` (Codex gives a server over stdio only the
/// variables that lists).
fn codex_headers(map: &Map<String, Value>) -> Result<(BTreeMap<String, String>, Vars), String> {
    let mut headers = BTreeMap::new();
    let mut vars = Vars::new();
    fn insert(
        headers: &mut BTreeMap<String, String>,
        header: &str,
        value: String,
    ) -> Result<(), String> {
        if headers.keys().any(|h| h.eq_ignore_ascii_case(header)) {
            return Err(format!("it sets the header `{header}` twice"));
        }
        headers.insert(header.to_owned(), value);
        Ok(())
    }
    let mut var = |name: &str, what: &str| {
        if !plain_name(name) {
            return Err(format!(
                "its `{what}` names `{name}`, not a variable's name"
            ));
        }
        if !vars.iter().any(|(n, _)| n == name) {
            vars.push((name.to_owned(), format!("${{{name}}}")));
        }
        Ok(format!("${{{name}}}"))
    };
    let table = |key: &str| match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(table)) => table
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(v) => Ok((k.clone(), v.to_owned())),
                None => Err(format!("its `{key}.{k}` is not a string")),
            })
            .collect(),
        Some(_) => Err(format!("its `{key}` is not a table of strings")),
    };
    for (header, value) in table("http_headers")? {
        // The proxy expands `${…}` in a header; Codex sends this one as written.
        if value.contains("${") {
            return Err(format!(
                "its `http_headers.{header}` holds `${{`, which the proxy would expand"
            ));
        }
        insert(&mut headers, &header, value)?;
    }
    for (header, name) in table("env_http_headers")? {
        let value = var(&name, &format!("env_http_headers.{header}"))?;
        insert(&mut headers, &header, value)?;
    }
    match map.get("bearer_token_env_var") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) => {
            let value = format!("Bearer {}", var(name, "bearer_token_env_var")?);
            insert(&mut headers, "Authorization", value)?;
        }
        Some(_) => return Err("its `bearer_token_env_var` is not a string".to_owned()),
    }
    Ok((headers, vars))
}

/// An HTTP entry's headers as the proxy sends them, and the variables the entry must set on
/// the proxy for them: each `${…}` the client would expand becomes `${NAME}` (the variable's
/// own name, `NAME` of `${NAME}`, `${env:NAME}` or `${NAME:-default}`, else
/// `TOOLSHAPE_HEADER_<n>`), and `NAME` goes into the entry's `env` as that `${…}`, which the
/// client expands there as it would have in the header.
fn headers_for_proxy(
    headers: &Map<String, Value>,
    env: &Map<String, Value>,
) -> Result<(BTreeMap<String, String>, Vars), String> {
    let mut out = BTreeMap::new();
    let mut added: Vec<(String, String)> = Vec::new();
    for (header, value) in headers {
        let Some(value) = value.as_str() else {
            return Err(format!("its header `{header}` is not a string"));
        };
        let sent = crate::substitute(value, |token, inner| {
            let own = inner.strip_prefix("env:").unwrap_or(inner);
            let own = own.split_once(":-").map_or(own, |(name, _)| name);
            let taken = |name: &str, added: &Vars| {
                env.get(name).is_some_and(|v| v.as_str() != Some(token))
                    || added.iter().any(|(n, t)| n == name && t != token)
            };
            let name = if plain_name(own) && !taken(own, &added) {
                own.to_owned()
            } else {
                (1..)
                    .map(|n| format!("TOOLSHAPE_HEADER_{n}"))
                    .find(|n| !taken(n, &added) && !added.iter().any(|(a, _)| a == n))
                    .unwrap_or_default()
            };
            if !added.iter().any(|(n, _)| *n == name)
                && env.get(&name).and_then(Value::as_str) != Some(token)
            {
                added.push((name.clone(), token.to_owned()));
            }
            Ok(format!("${{{name}}}"))
        })
        .map_err(|e| format!("its header `{header}`: {e}"))?;
        out.insert(header.clone(), sent);
    }
    Ok((out, added))
}

/// Why `wrap`, `unwrap` or `discover` stopped. Nothing is written when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum WrapError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not what its client writes.
    #[error("{0}")]
    Parse(String),
    /// The command was given something it cannot use.
    #[error("{0}")]
    Usage(String),
    /// The rewritten file would differ in more than the wrapped entries (a defect: reported
    /// rather than written).
    #[error(
        "rewriting {path} would change more than its wrapped entries ({what}); nothing was written"
    )]
    Unsafe {
        /// The file.
        path: String,
        /// What differed.
        what: String,
    },
}

fn read(path: &Path) -> Result<String, WrapError> {
    std::fs::read_to_string(path).map_err(|source| WrapError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The file's text, or `None` when there is no such file.
fn read_if_there(path: &Path) -> Result<Option<String>, WrapError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(WrapError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Writes `text` to `path` whole or not at all (a file beside it, renamed over it), through a
/// symbolic link to the file it names, keeping the file's permissions; a new file readable by
/// its owner alone.
fn write(path: &Path, text: &str) -> Result<(), WrapError> {
    let failed = |source| WrapError::Write {
        path: path.display().to_string(),
        source,
    };
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = target.with_file_name(format!(".{name}.toolshape-{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = (|| {
        use std::io::Write as _;
        let mut file = options.open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&temporary, meta.permissions())?;
        }
        std::fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(failed)
}

/// What `wrap` recorded: per client file, its state before and after, and each entry as it
/// was.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    #[serde(default)]
    files: BTreeMap<PathBuf, Record>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    /// The copy of the file before it was first wrapped (or last edited by someone else).
    backup: PathBuf,
    /// The file as `wrap` last wrote it.
    wrapped: String,
    /// Every entry wrapped, in the order wrapped.
    entries: Vec<Wrapped>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Wrapped {
    at: Vec<String>,
    upstream: String,
    /// The entry's text as written (JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// The settings replaced (TOML: `command`, `args`, `url`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    settings: Map<String, Value>,
}

impl Manifest {
    fn load(places: &Places) -> Result<Manifest, WrapError> {
        let path = places.manifest();
        match read_if_there(&path)? {
            None => Ok(Manifest::default()),
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| WrapError::Parse(format!("{}: {e}", path.display()))),
        }
    }

    fn save(&self, places: &Places) -> Result<(), WrapError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        write(&places.manifest(), &(text + "\n"))
    }
}

/// The proxy's configuration as `wrap` extends it.
struct ProxyToml {
    doc: toml_edit::DocumentMut,
    specs: BTreeMap<String, UpstreamSpec>,
    before: String,
}

/// A new proxy configuration: what wrote it, and the ledger `stats` reads.
fn proxy_toml_head(dir: &Path) -> String {
    let ledger = crate::metrics::default_ledger(dir);
    format!(
        "# Written by `toolshape-proxy wrap` (undone by `unwrap`): an upstream per server it wrapped.\n\n\
         [proxy]\nledger = {}   # read by `toolshape-proxy stats`\n",
        toml_edit::Value::from(ledger.display().to_string())
    )
}

impl ProxyToml {
    fn load(path: &Path, dir: &Path) -> Result<ProxyToml, WrapError> {
        let before = read_if_there(path)?.unwrap_or_default();
        let head;
        let text = if before.trim().is_empty() {
            head = proxy_toml_head(dir);
            &head
        } else {
            &before
        };
        let shown = path.display().to_string();
        let config: ProxyConfig = ::toml::from_str(text)
            .map_err(|e| WrapError::Parse(format!("{shown}: {}", e.to_string().trim())))?;
        Ok(ProxyToml {
            doc: toml::document(text, &shown)?,
            specs: config.upstreams,
            before,
        })
    }

    /// The upstream `spec` is, named `name` or, when another upstream has that name,
    /// `name-2`, `name-3`…: added unless one with that name is the same server.
    fn add(&mut self, name: &str, spec: &UpstreamSpec) -> String {
        let same = |a: &UpstreamSpec| {
            a.command == spec.command
                && a.args == spec.args
                && a.url == spec.url
                && a.cwd == spec.cwd
                && a.headers == spec.headers
        };
        let mut n = 1;
        loop {
            let candidate = if n == 1 {
                name.to_owned()
            } else {
                format!("{name}-{n}")
            };
            match self.specs.get(&candidate) {
                Some(existing) if same(existing) => return candidate,
                Some(_) => n += 1,
                None => {
                    let mut table = toml_edit::Table::new();
                    if let Some(command) = &spec.command {
                        table["command"] = toml_edit::value(command.as_str());
                        let args: toml_edit::Array = spec.args.iter().map(String::as_str).collect();
                        table["args"] = toml_edit::value(args);
                    }
                    if let Some(url) = &spec.url {
                        table["url"] = toml_edit::value(url.as_str());
                    }
                    if let Some(cwd) = &spec.cwd {
                        table["cwd"] = toml_edit::value(cwd.display().to_string());
                    }
                    if !spec.headers.is_empty() {
                        let headers: toml_edit::InlineTable = spec
                            .headers
                            .iter()
                            .map(|(k, v)| (k.as_str(), toml_edit::Value::from(v.as_str())))
                            .collect();
                        table["headers"] = toml_edit::value(headers);
                    }
                    let upstreams = self.doc.entry("upstreams").or_insert_with(|| {
                        let mut t = toml_edit::Table::new();
                        t.set_implicit(true);
                        toml_edit::Item::Table(t)
                    });
                    if let Some(upstreams) = upstreams.as_table_like_mut() {
                        upstreams.insert(&candidate, toml_edit::Item::Table(table));
                    }
                    self.specs.insert(candidate.clone(), spec.clone());
                    return candidate;
                }
            }
        }
    }
}

/// "1 server", "3 servers".
fn servers(n: usize) -> String {
    if n == 1 {
        "1 server".to_owned()
    } else {
        format!("{n} servers")
    }
}

/// A unified diff of `before` and `after`, titled with `path`.
fn diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(2)
        .header(path, path)
        .to_string()
}

/// What to wrap, and how.
#[derive(Debug, Clone)]
pub struct WrapOptions {
    /// The clients whose files are read (all when empty and no file is given).
    pub clients: Vec<Client>,
    /// Files read besides (or, with no client named, instead of) the clients'.
    pub files: Vec<PathBuf>,
    /// Only the servers with these names (all when empty).
    pub servers: Vec<String>,
    /// The program the rewritten entries start: this proxy's own path.
    pub program: PathBuf,
    /// Print the changes; write nothing.
    pub dry_run: bool,
}

/// The files chosen: those given, and the named clients' (every client's when neither is
/// given) that exist.
fn chosen(
    places: &Places,
    clients: &[Client],
    files: &[PathBuf],
) -> Result<Vec<ClientFile>, WrapError> {
    let mut out: Vec<ClientFile> = files
        .iter()
        .map(|f| ClientFile::given(f))
        .collect::<Result<_, _>>()?;
    let clients: &[Client] = if clients.is_empty() && files.is_empty() {
        &Client::ALL
    } else {
        clients
    };
    for client in clients {
        out.extend(
            places
                .files_of(*client)
                .into_iter()
                .filter(|f| f.path.is_file()),
        );
    }
    // A file named twice (given, and a client's; or a link to another) is read once.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|f| seen.insert(std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone())));
    Ok(out)
}

/// `toolshape-proxy wrap`: every server of the chosen files that the proxy can start put
/// behind it, as the module's documentation says. The report, for a person.
pub fn wrap(places: &Places, options: &WrapOptions) -> Result<String, WrapError> {
    let files = chosen(places, &options.clients, &options.files)?;
    if files.is_empty() {
        return Err(WrapError::Usage(
            "no MCP configuration found (looked for Claude Code's, Codex's, VS Code's and Cursor's): name one with --file".to_owned(),
        ));
    }
    let proxy_path = places.proxy_toml();
    let mut proxy = ProxyToml::load(&proxy_path, &places.dir)?;
    let mut manifest = Manifest::load(places)?;
    let program = options.program.display().to_string();
    let args_for = |upstream: &str| {
        vec![
            UPSTREAM_FLAG.to_owned(),
            upstream.to_owned(),
            proxy_path.display().to_string(),
        ]
    };
    let mut report = String::new();
    let mut edits: Vec<(ClientFile, String, String, Vec<Wrapped>)> = Vec::new();
    for file in files {
        let text = read(&file.path)?;
        let entries = file.entries(&text)?;
        let _ = writeln!(report, "{}", file.label(places));
        let mut wrapped = Vec::new();
        let mut doc = match file.format {
            Format::Toml => Some(toml::document(&text, &file.path.display().to_string())?),
            Format::Json(_) => None,
        };
        let mut splices = Vec::new();
        let mut already = Vec::new();
        for entry in &entries {
            if !options.servers.is_empty() && !options.servers.iter().any(|s| s == entry.name()) {
                continue;
            }
            match &entry.state {
                State::Ready { spec, env } => {
                    let upstream = proxy.add(entry.name(), spec);
                    let args = args_for(&upstream);
                    let mut record = Wrapped {
                        at: entry.at.clone(),
                        upstream: upstream.clone(),
                        text: None,
                        settings: Map::new(),
                    };
                    match (&mut doc, &entry.range) {
                        (Some(doc), _) => {
                            record.settings = toml::wrap(doc, entry.name(), &program, &args, env)?;
                        }
                        (None, Some(range)) => {
                            splices.push((
                                range.clone(),
                                json::wrapped_entry(&text, range, &program, &args, env)?,
                            ));
                            record.text = Some(text[range.clone()].to_owned());
                        }
                        (None, None) => continue,
                    }
                    let _ = writeln!(
                        report,
                        "  wrapped   {} (upstream {upstream})",
                        entry.label()
                    );
                    wrapped.push(record);
                }
                State::Wrapped { upstream } => {
                    already.push(format!("{} (upstream {upstream})", entry.label()))
                }
                State::Skipped(why) => {
                    let _ = writeln!(report, "  left      {}: {why}", entry.label());
                }
            }
        }
        for name in already {
            let _ = writeln!(report, "  already   {name}");
        }
        if wrapped.is_empty() {
            continue;
        }
        let after = match doc {
            Some(doc) => doc.to_string(),
            None => json::spliced(&text, splices),
        };
        checked(&file, &text, &after, &wrapped)?;
        edits.push((file, text, after, wrapped));
    }
    let proxy_after = proxy.doc.to_string();
    if !::toml::from_str::<ProxyConfig>(&proxy_after).is_ok_and(|c| !c.upstreams.is_empty())
        && !edits.is_empty()
    {
        return Err(WrapError::Unsafe {
            path: proxy_path.display().to_string(),
            what: "the proxy's configuration it would write does not load".to_owned(),
        });
    }
    let count: usize = edits.iter().map(|(_, _, _, w)| w.len()).sum();
    if options.dry_run {
        let _ = writeln!(report);
        if proxy_after != proxy.before {
            report.push_str(&diff(
                &places.shown(&proxy_path),
                &proxy.before,
                &proxy_after,
            ));
        }
        for (file, before, after, _) in &edits {
            report.push_str(&diff(&places.shown(&file.path), before, after));
        }
        let _ = writeln!(
            report,
            "dry run: {} would be put behind the proxy; nothing was written",
            servers(count)
        );
        return Ok(report);
    }
    if edits.is_empty() {
        let _ = writeln!(report, "nothing to put behind the proxy");
        return Ok(report);
    }
    if proxy_after != proxy.before {
        write(&proxy_path, &proxy_after)?;
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for (file, before, after, wrapped) in edits {
        let key = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
        let record = match manifest.files.remove(&key) {
            // Wrapped before and not edited since: the first backup still undoes both.
            Some(mut record) if record.wrapped == before => {
                record.entries.extend(wrapped);
                record.wrapped = after.clone();
                record
            }
            earlier => {
                let name = key
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let mut backup = places.dir.join("backups").join(format!("{name}.{stamp}"));
                let mut n = 1;
                while backup.exists() {
                    n += 1;
                    backup = places
                        .dir
                        .join("backups")
                        .join(format!("{name}.{stamp}.{n}"));
                }
                write(&backup, &before)?;
                let mut entries = earlier.map(|r| r.entries).unwrap_or_default();
                entries.extend(wrapped);
                Record {
                    backup,
                    wrapped: after.clone(),
                    entries,
                }
            }
        };
        let _ = writeln!(
            report,
            "backup of {}: {}",
            places.shown(&file.path),
            places.shown(&record.backup)
        );
        manifest.files.insert(key, record);
        manifest.save(places)?;
        write(&file.path, &after)?;
    }
    let _ = writeln!(
        report,
        "{} behind the proxy ({}); restart the clients (or reconnect their MCP servers) to use it; `toolshape-proxy unwrap` undoes it",
        servers(count),
        places.shown(&proxy_path)
    );
    Ok(report)
}

/// Checks that `after` differs from `before` in the wrapped entries alone, each of which now
/// starts the proxy for its upstream.
fn checked(
    file: &ClientFile,
    before: &str,
    after: &str,
    wrapped: &[Wrapped],
) -> Result<(), WrapError> {
    let unsafe_ = |what: String| WrapError::Unsafe {
        path: file.path.display().to_string(),
        what,
    };
    let now = file.entries(after)?;
    for record in wrapped {
        let found = now.iter().find(|e| e.at == record.at).map(|e| &e.state);
        if found
            != Some(&State::Wrapped {
                upstream: record.upstream.clone(),
            })
        {
            return Err(unsafe_(format!(
                "{} does not start the proxy after it",
                record.at.join(".")
            )));
        }
    }
    let mut before = file.value(before)?;
    let mut after = file.value(after)?;
    for record in wrapped {
        for value in [&mut before, &mut after] {
            if let Some(entry) = record
                .at
                .iter()
                .try_fold(&mut *value, |v, key| v.get_mut(key))
            {
                *entry = Value::Null;
            }
        }
    }
    if before != after {
        return Err(unsafe_("a setting outside them differs".to_owned()));
    }
    Ok(())
}

/// `toolshape-proxy unwrap`: the files `wrap` rewrote (those given, or all) put back, as the
/// module's documentation says. The report, for a person.
pub fn unwrap(places: &Places, files: &[PathBuf], dry_run: bool) -> Result<String, WrapError> {
    let mut manifest = Manifest::load(places)?;
    let keys: Vec<PathBuf> = if files.is_empty() {
        manifest.files.keys().cloned().collect()
    } else {
        files
            .iter()
            .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
            .collect()
    };
    let mut report = String::new();
    if keys.is_empty() {
        let _ = writeln!(
            report,
            "nothing to undo: {} records no wrapped file",
            places.shown(&places.manifest())
        );
        return Ok(report);
    }
    for key in keys {
        let Some(record) = manifest.files.get(&key).cloned() else {
            return Err(WrapError::Usage(format!(
                "{} was not wrapped (it is not in {})",
                key.display(),
                places.shown(&places.manifest())
            )));
        };
        let format = match ClientFile::given(&key) {
            Ok(file) => file.format,
            Err(WrapError::Read { .. }) => {
                let _ = writeln!(
                    report,
                    "{}: gone; its backup is {}",
                    places.shown(&key),
                    places.shown(&record.backup)
                );
                manifest.files.remove(&key);
                continue;
            }
            Err(e) => return Err(e),
        };
        let file = ClientFile {
            path: key.clone(),
            client: None,
            format,
        };
        let current = read(&key)?;
        // Untouched since `wrap`: its backup, byte for byte (a backup gone: entry by entry).
        let backup = (current == record.wrapped)
            .then(|| std::fs::read_to_string(&record.backup).ok())
            .flatten();
        let untouched = backup.is_some();
        let start = backup.unwrap_or_else(|| current.clone());
        let entries = file.entries(&start)?;
        let mut doc = match format {
            Format::Toml => Some(toml::document(&start, &key.display().to_string())?),
            Format::Json(_) => None,
        };
        let mut splices = Vec::new();
        let _ = writeln!(report, "{}", places.shown(&key));
        for wrapped in &record.entries {
            let name = wrapped.at.last().cloned().unwrap_or_default();
            let entry = entries.iter().find(|e| e.at == wrapped.at);
            match entry.map(|e| (&e.state, &e.range)) {
                Some((State::Wrapped { upstream }, range)) if *upstream == wrapped.upstream => {
                    match (&mut doc, range, &wrapped.text) {
                        (Some(doc), _, _) => {
                            toml::restore(doc, &name, &wrapped.settings);
                        }
                        (None, Some(range), Some(text)) => {
                            splices.push((range.clone(), text.clone()))
                        }
                        _ => continue,
                    }
                    let _ = writeln!(report, "  restored  {name}");
                }
                // Not wrapped in the backup: wrapped after it, put back with it.
                _ if untouched => {}
                Some(_) => {
                    let _ = writeln!(report, "  left      {name}: changed since it was wrapped");
                }
                None => {
                    let _ = writeln!(report, "  left      {name}: no longer in the file");
                }
            }
        }
        let after = match doc {
            Some(doc) => doc.to_string(),
            None => json::spliced(&start, splices),
        };
        if untouched {
            let _ = writeln!(report, "  as it was before `wrap`, byte for byte");
        } else if current == record.wrapped {
            let _ = writeln!(
                report,
                "  its backup {} is gone: its entries put back one by one",
                places.shown(&record.backup)
            );
        } else {
            let _ = writeln!(
                report,
                "  edited since `wrap`: its entries put back, the other edits kept"
            );
        }
        if dry_run {
            report.push_str(&diff(&places.shown(&key), &current, &after));
            continue;
        }
        write(&key, &after)?;
        manifest.files.remove(&key);
        manifest.save(places)?;
    }
    if dry_run {
        let _ = writeln!(report, "dry run: nothing was written");
    } else {
        let _ = writeln!(
            report,
            "the upstreams stay in {} (unused); the backups in {}",
            places.shown(&places.proxy_toml()),
            places.shown(&places.dir.join("backups"))
        );
    }
    Ok(report)
}

/// `toolshape-proxy discover`: each configured server of the chosen files, and whether it is
/// behind the proxy, could be, or could not (and why). The report, for a person.
pub fn discover(
    places: &Places,
    clients: &[Client],
    files: &[PathBuf],
) -> Result<String, WrapError> {
    let mut report = String::new();
    let mut ready = 0;
    for file in chosen(places, clients, files)? {
        let text = read(&file.path)?;
        let _ = writeln!(report, "{}", file.label(places));
        for entry in file.entries(&text)? {
            let line = match &entry.state {
                State::Ready { .. } => {
                    ready += 1;
                    format!("  not yet   {}", entry.label())
                }
                State::Wrapped { upstream } => {
                    format!("  behind    {} (upstream {upstream})", entry.label())
                }
                State::Skipped(why) => format!("  cannot    {}: {why}", entry.label()),
            };
            let _ = writeln!(report, "{line}");
        }
    }
    let _ = writeln!(
        report,
        "{} not yet behind the proxy{}",
        servers(ready),
        if ready > 0 {
            ": `toolshape-proxy wrap` puts them there (`--dry-run` shows how)"
        } else {
            ""
        }
    );
    Ok(report)
}

#[cfg(test)]
mod tests;
