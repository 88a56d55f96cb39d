//! Presets: shaping configuration shipped in the binary for servers people run, chosen from
//! the upstream's `serverInfo.name` when it answers `initialize` (or named in its
//! `[upstreams.<name>] preset = "…"`; `preset = "none"` turns it off).
//!
//! A preset is a shaping configuration ([`ShapeConfig`]) for the server's own tool names:
//! a configured projection for each tool that answers JSON records, and any other setting
//! of `[tools.<name>]`. The proxy puts the upstream's prefix before each name, checks each
//! tool against the upstream's `tools/list` (a tool the server does not list is left out;
//! one whose `outputSchema` lacks a path the projection reads is left out, naming it) and
//! adds what passes to the shaping configuration, never over a tool the user configured
//! (`[tools.<name>]` in `shape.toml` wins whole). Tools it adds take the user's
//! `[defaults]`. What each preset saves on recorded answers: `tests/data/presets/` and the
//! README's table, which also shows what the defaults do for the servers recorded there
//! that have no preset yet.

use rmcp::model::Tool;
use toolshape::config::ShapeConfig;

/// A server's preset: its name, the `serverInfo.name`s it serves, and its configuration.
#[derive(Debug)]
pub struct Preset {
    /// What `[upstreams.<name>] preset = "…"` calls it.
    pub name: &'static str,
    /// The `serverInfo.name`s it is chosen for (as the servers send them).
    pub servers: &'static [&'static str],
    /// What it is for, in a line.
    pub about: &'static str,
    /// Its shaping configuration (TOML), for the server's own tool names.
    text: &'static str,
}

/// Every preset the binary ships.
pub static PRESETS: &[Preset] = &[Preset {
    name: "github",
    servers: &["github-mcp-server"],
    about: "GitHub's MCP server (issues, pull requests, searches, commits)",
    text: include_str!("github.toml"),
}];

/// The word that turns presets off for an upstream.
pub const NONE: &str = "none";

/// The preset an upstream gets: the one `named` (its `preset = "…"`), none for `"none"`,
/// else the one whose servers include `server` (its `serverInfo.name`). A name no preset
/// has is an error listing those there are.
pub fn choose(
    named: Option<&str>,
    server: Option<&str>,
) -> Result<Option<&'static Preset>, String> {
    match named {
        Some(NONE) => Ok(None),
        Some(name) => PRESETS
            .iter()
            .find(|p| p.name == name)
            .map(Some)
            .ok_or_else(|| {
                let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
                format!(
                    "no preset is called `{name}`; there are {} (or `{NONE}`)",
                    known.join(", ")
                )
            }),
        None => Ok(server.and_then(|s| PRESETS.iter().find(|p| p.servers.contains(&s)))),
    }
}

impl Preset {
    /// Its configuration with each tool's name after `prefix`, as the proxy exposes them.
    pub fn config(&self, prefix: &str) -> Result<ShapeConfig, String> {
        let failed = |e: String| format!("the preset `{}` cannot be read: {e}", self.name);
        if prefix.is_empty() {
            return ShapeConfig::from_toml_str(self.text).map_err(|e| failed(e.to_string()));
        }
        let mut table: toml::Table =
            toml::from_str(self.text).map_err(|e| failed(e.to_string()))?;
        if let Some(toml::Value::Table(tools)) = table.remove("tools") {
            let renamed = tools
                .into_iter()
                .map(|(name, tool)| (format!("{prefix}{name}"), tool))
                .collect();
            table.insert("tools".to_owned(), toml::Value::Table(renamed));
        }
        let text = toml::to_string(&table).map_err(|e| failed(e.to_string()))?;
        ShapeConfig::from_toml_str(&text).map_err(|e| failed(e.to_string()))
    }

    /// Its tools' own names (without a prefix).
    pub fn tools(&self) -> Vec<String> {
        self.config("")
            .map(|c| c.tools.into_keys().collect())
            .unwrap_or_default()
    }
}

/// What a preset gave one upstream.
#[derive(Debug, Default, PartialEq)]
pub struct Applied {
    /// The tools it shapes now (as the proxy exposes them).
    pub added: Vec<String>,
    /// Its tools the user configured, kept as the user wrote them.
    pub yours: Vec<String>,
    /// Its tools left out, each with why (not listed; its schema lacks a path).
    pub left: Vec<String>,
}

/// Adds `preset`'s tools, each named after `prefix`, to `shape`, checked against the tools
/// the upstream lists (`listed`: `None` when it has not listed them, and then nothing is
/// checked): see the module's documentation.
pub fn apply(
    shape: &mut ShapeConfig,
    preset: &Preset,
    prefix: &str,
    listed: Option<&[Tool]>,
) -> Result<Applied, String> {
    let mut config = preset.config(prefix)?;
    let mut applied = Applied::default();
    let names: Vec<String> = config.tools.keys().cloned().collect();
    for name in names {
        if shape.tools.contains_key(&name) {
            applied.yours.push(name.clone());
            config.tools.remove(&name);
            continue;
        }
        let Some(listed) = listed else {
            continue;
        };
        let own = &name[prefix.len()..];
        let why = match listed.iter().find(|t| t.name == own) {
            None => Some("the server does not list it".to_owned()),
            Some(tool) => tool.output_schema.as_ref().and_then(|schema| {
                let schema = serde_json::Value::Object(schema.as_ref().clone());
                config
                    .check_records_against(&name, &schema)
                    .err()
                    .map(|e| format!("its outputSchema does not fit: {e}"))
            }),
        };
        if let Some(why) = why {
            applied.left.push(format!("{name} ({why})"));
            config.tools.remove(&name);
        }
    }
    applied.added = shape
        .add_absent(config)
        .map_err(|e| format!("the preset `{}`: {e}", preset.name))?;
    Ok(applied)
}

#[cfg(test)]
mod tests;
