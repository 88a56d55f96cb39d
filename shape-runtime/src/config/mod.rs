//! Configuration, not constants: budgets, tokenizer, format, channel policy and the
//! untrusted-text policy per tool, loaded from TOML or JSON, because they change when the
//! model changes.
//!
//! ```
//! use toolshape::{Format, envelope::StructuredForm, config::{ShapeConfig}};
//!
//! let config = ShapeConfig::from_toml_str(r#"
//!     [defaults]
//!     budget = 2000
//!     format = "prose"
//!
//!     [tools.search_tickets]
//!     budget = { window = 200000, share = 0.33, expected_calls = 30 }
//!     format = "table"
//!     structured_form = "rows"
//!
//!     [tools.get_ticket]
//! "#).unwrap();
//! let shaper = config.shaper("search_tickets").unwrap();
//! assert_eq!(shaper.current_budget().max_tokens(), 2_200);
//! assert_eq!(shaper.current_format(), Format::Table);
//! assert_eq!(shaper.current_structured_form(), StructuredForm::Rows);
//! assert_eq!(config.shaper("get_ticket").unwrap().current_budget().max_tokens(), 2_000);
//! assert_eq!(
//!     config.shaper("serch_tickets").unwrap_err().to_string(),
//!     "no tool `serch_tickets` in the configuration; configured tools: get_ticket, search_tickets"
//! );
//! ```

mod located;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod records;
pub use records::RecordsError;

use crate::budget::Budget;
use crate::budget::channel::ChannelPolicy;
use crate::budget::tokens::{Bpe, Encoding};
use crate::handle::HandlePolicy;
use crate::page::render::{Format, StructuredForm};
use crate::shaper::Shaper;
use crate::untrusted::UntrustedPolicy;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The configuration of every tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeConfig {
    /// What every tool gets unless it says otherwise.
    #[serde(default)]
    pub defaults: ToolConfig,
    /// Per tool, by tool name; a tool must be listed (an empty table takes the defaults).
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    /// Channel profiles by MCP client name (`clientInfo.name`), for clients the built-in
    /// table ([`clients::KNOWN_CLIENTS`](crate::budget::clients::KNOWN_CLIENTS)) does not know or
    /// gets wrong; matched as the table's names are.
    #[serde(default)]
    pub clients: BTreeMap<String, ChannelPolicy>,
    /// `[legends.<name>]`, the code = "word" tables configured records' `legend` names, as
    /// written; read through [`records`](Self::records).
    #[serde(default)]
    pub(crate) legends: BTreeMap<String, records::Unchecked>,
    /// Each tool's configured records, checked when the configuration loaded.
    #[serde(skip)]
    checked: BTreeMap<String, records::ConfiguredRecords>,
    /// `[legends]`, checked when the configuration loaded.
    #[serde(skip)]
    checked_legends: BTreeMap<String, records::ConfiguredLegend>,
}

/// One tool's settings; each one left out falls back to `[defaults]`, then to the built-in
/// default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// Tokens per call, envelope included (a number, or `{ window, share, expected_calls }`).
    pub budget: Option<Budget>,
    /// `o200k_base` (default) or `cl100k_base`.
    pub tokenizer: Option<Encoding>,
    /// `prose` (default), `table` or `json`.
    pub format: Option<Format>,
    /// `objects` or `rows`: how the records of a JSON envelope (the structured channel, and a
    /// `json` text channel) are written ([`StructuredForm`]). Left out, the form follows the
    /// channel profile: `rows` under `structured`, `objects` otherwise.
    pub structured_form: Option<StructuredForm>,
    /// `both`, `text` or `structured`: the channel the model reads, so the one the budget is
    /// enforced on and what an MCP answer carries. Left out, an MCP client gets the profile
    /// for its name ([`ShapeConfig::shaper_for_client`]), others `both`.
    pub channels: Option<ChannelPolicy>,
    /// At most this many records per page.
    pub page_size: Option<usize>,
    /// How untrusted text is marked.
    pub untrusted: Option<UntrustedPolicy>,
    /// When and for how long results are kept behind handles.
    pub handles: Option<HandlePolicy>,
    /// `first_page` (default), `every_page` or `never`: on which pages the text channel names
    /// the fields this view leaves out ([`LeftOut`](crate::envelope::LeftOut)).
    pub left_out: Option<crate::envelope::LeftOut>,
    /// The tool that shows one record by its id, named where a record is skipped as too
    /// large ([`Shaper::fetch_one`]).
    pub fetch_one: Option<String>,
    /// Where the tool's records are in its JSON result and what each shows, as written
    /// ([`records`] says how); checked when the configuration loads and read
    /// through [`ShapeConfig::records`].
    pub(crate) records: Option<records::Unchecked>,
    /// Output fields this tool's view leaves out ([`Shaper::hide`]): configuration narrows a
    /// view, never widens it. Per tool only (not in `[defaults]`).
    pub hide: Option<Vec<String>>,
    /// Per MCP client (`clientInfo.name`, matched as `[clients]`'s names are), what this
    /// tool's view leaves out for that client besides `hide`.
    pub(crate) clients: Option<BTreeMap<String, ClientView>>,
    /// For records nobody described (a layer in front of a tool: [`mcp::Harness`](crate::mcp)),
    /// the keys whose text is the system's own, shown as it is rather than as outsiders' text.
    pub trusted: Option<Vec<String>>,
    /// For records nobody described, the cap in tokens of each value's text (default 200).
    pub max_tokens: Option<u32>,
    /// For records nobody described, how they are tidied for a model
    /// ([`Rules`](crate::configured::Rules): `links`, `empty`, `times`, `repeated`,
    /// `jsonapi`; all on by default).
    pub rules: Option<crate::configured::Rules>,
    /// For answers a layer shapes (a harness, the proxy), what is redacted before anything
    /// of the answer is read, stored or shown ([`Redaction`](crate::untrusted::Redaction):
    /// `secrets` on by default, `emails` and `phones` off).
    pub redact: Option<crate::untrusted::Redaction>,
}

/// What one client's view of a tool leaves out (`[tools.<name>.clients."<client>"]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClientView {
    /// Output fields left out for this client, besides the tool's own `hide`.
    #[serde(default)]
    pub hide: Vec<String>,
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is malformed or has an unknown key.
    #[error("invalid TOML configuration: {0}")]
    Toml(String),
    /// The JSON is malformed or has an unknown key.
    #[error("invalid JSON configuration: {0}")]
    Json(String),
    /// The file name ends in neither `.toml` nor `.json`.
    #[error("the configuration file {0} must end in .toml or .json")]
    Extension(String),
    /// A setting that is echoed into answers (a tool name, a datamark) holds a character a
    /// reader cannot see or that reorders text, or a datamark that would read as a delimiter.
    #[error("`{key}` {problem}; use visible characters only, since it appears in every answer")]
    Unsafe {
        /// The setting, as a path: `tools.<name>` or `tools.<name>.untrusted.datamark`
        /// (the name with the offending characters shown as `U+XXXX`).
        key: String,
        /// What is wrong with it, naming the character.
        problem: String,
    },
    /// The configuration widens a view instead of narrowing it ([`ShapeConfig::check_view`]).
    #[error("{0}")]
    View(String),
    /// Two configurations joined ([`ShapeConfig::add_absent`]) give one legend name different
    /// words.
    #[error("the legends {0} are configured twice with different words")]
    LegendsClash(String),
    /// Mistakes in configured records, every one found.
    #[error("{}", records::list(.0))]
    Records(Vec<records::RecordsError>),
    /// A tool that is not configured.
    #[error("no tool `{tool}` in the configuration; configured tools: {known}")]
    UnknownTool {
        /// The name asked for.
        tool: String,
        /// The configured names.
        known: String,
    },
}

impl ShapeConfig {
    /// Parses TOML, then [`check`](Self::check)s it.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        Self::from_toml_at(text, None)
    }

    fn from_toml_at(text: &str, base: Option<&Path>) -> Result<Self, ConfigError> {
        let mut config: ShapeConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Toml(crate::untrusted::echo::clean(e.to_string().trim())))?;
        config.check()?;
        let doc = located::Node::from_toml(text)
            .map_err(|e| ConfigError::Toml(crate::untrusted::echo::clean(e.trim())))?;
        config.check_records(&doc, base)?;
        Ok(config)
    }

    /// Parses JSON, then [`check`](Self::check)s it.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        Self::from_json_at(text, None)
    }

    fn from_json_at(text: &str, base: Option<&Path>) -> Result<Self, ConfigError> {
        let mut config: ShapeConfig = serde_json::from_str(text)
            .map_err(|e| ConfigError::Json(crate::untrusted::echo::clean(&e.to_string())))?;
        config.check()?;
        let doc = located::Node::from_json(text)
            .map_err(|e| ConfigError::Json(crate::untrusted::echo::clean(&e)))?;
        config.check_records(&doc, base)?;
        Ok(config)
    }

    /// Checks every tool's `records` and the `[legends]` they name, all at once, and each
    /// one's paths against the JSON Schema file its `schema` names (relative to `base`, the
    /// configuration file's folder; the current folder for a configuration read from text).
    fn check_records(
        &mut self,
        doc: &located::Node,
        base: Option<&Path>,
    ) -> Result<(), ConfigError> {
        let mut errors = Vec::new();
        let legends = records::legends(doc, &mut errors);
        if let Some(defaults) = doc.get("defaults")
            && let Some(entry) = defaults.node.get("records")
        {
            errors.push(records::RecordsError {
                place: "defaults".to_owned(),
                output: None,
                key: Some("records".to_owned()),
                line: entry.line,
                message: "records are described per tool, in `[tools.<name>.records]`".to_owned(),
            });
        }
        let mut checked = BTreeMap::new();
        if let Some(tools) = doc.get("tools") {
            for tool in tools.node.entries() {
                if let Some(entry) = tool.node.get("records")
                    && let Some(r) =
                        records::records(&shown_name(&tool.key), entry, &legends, &mut errors)
                {
                    checked.insert(tool.key.clone(), r);
                }
            }
        }
        // A tool's `hide` narrows its configured view: every name one of its outputs.
        for (tool, records) in &checked {
            let config = &self.tools[tool.as_str()];
            let projection = crate::configured::JsonProjection::new(records, &legends);
            let views = config.hide.iter().map(|h| (None, h)).chain(
                config
                    .clients
                    .iter()
                    .flatten()
                    .map(|(client, view)| (Some(client), &view.hide)),
            );
            for (client, hide) in views {
                if let Err(e) = crate::shaper::hide_check(tool, hide, projection.projection()) {
                    let key = match client {
                        None => "hide".to_owned(),
                        Some(client) => format!("clients.{}.hide", shown_name(client)),
                    };
                    errors.push(records::RecordsError {
                        place: format!("tools.{}", shown_name(tool)),
                        output: None,
                        key: Some(key),
                        line: None,
                        message: e.to_string(),
                    });
                }
            }
        }
        for (tool, records) in &checked {
            let Some(file) = &records.schema else {
                continue;
            };
            let line = doc
                .get("tools")
                .and_then(|t| t.node.get(tool))
                .and_then(|t| t.node.get("records"))
                .and_then(|r| r.node.get("schema"))
                .and_then(|s| s.line);
            let path = base.map_or_else(|| Path::new(file).to_path_buf(), |b| b.join(file));
            // Named as the configuration wrote it and where it was looked for, not by an
            // absolute path: the message is the same on every machine and stays short.
            let beside = if base.is_some() {
                "beside the configuration"
            } else {
                "in the working directory"
            };
            let schema = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read the schema file `{file}` {beside}: {e}"))
                .and_then(|text| {
                    serde_json::from_str::<serde_json::Value>(&text)
                        .map_err(|e| format!("the schema file `{file}` {beside} is not JSON: {e}"))
                });
            match schema {
                Ok(schema) => errors.extend(records::check_schema(records, &schema)),
                Err(message) => errors.push(records::RecordsError {
                    place: format!("tools.{}.records", shown_name(tool)),
                    output: None,
                    key: Some("schema".to_owned()),
                    line,
                    message: crate::untrusted::echo::clean(&message),
                }),
            }
        }
        if !errors.is_empty() {
            return Err(ConfigError::Records(errors));
        }
        self.checked = checked;
        self.checked_legends = legends;
        Ok(())
    }

    /// Checks the paths of `tool`'s configured records against `schema`, a JSON Schema of the
    /// tool's whole result (an upstream MCP tool's `outputSchema`): every path it lacks is
    /// an error naming it ([`records::check_schema`]). A tool without configured records
    /// passes.
    pub fn check_records_against(
        &self,
        tool: &str,
        schema: &serde_json::Value,
    ) -> Result<(), ConfigError> {
        let Some(records) = self.records(tool) else {
            return Ok(());
        };
        let errors = records::check_schema(records, schema);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Records(errors))
        }
    }

    /// Adds each tool of `other` this configuration does not name (`[tools.<name>]`), with
    /// `other`'s legends, and gives the names added: what a layer does with a preset (a
    /// configuration shipped for a known server), which never overrides what a user wrote.
    /// Tools added take this configuration's `[defaults]`. A legend name both hold with
    /// different tables is an error naming it, and nothing is added.
    ///
    /// ```
    /// use toolshape::config::ShapeConfig;
    ///
    /// let mut mine = ShapeConfig::from_toml_str("[tools.list_issues]\nbudget = 300").unwrap();
    /// let preset = ShapeConfig::from_toml_str(r#"
    ///     [tools.list_issues]
    ///     budget = 900
    ///     [tools.get_issue.records]
    ///     one = true
    ///     name = "issue"
    ///     fields = [{ from = "number", id = true }, { from = "state", legend = "gh_state" }]
    ///     [legends.gh_state]
    ///     open = "open"
    /// "#).unwrap();
    /// assert_eq!(mine.add_absent(preset).unwrap(), ["get_issue"]);
    /// assert_eq!(mine.tool("list_issues").unwrap().budget, Some(toolshape::Budget::tokens(300)));
    /// assert!(mine.json_projection("get_issue").is_some());
    /// ```
    pub fn add_absent(&mut self, other: ShapeConfig) -> Result<Vec<String>, ConfigError> {
        let clashes: Vec<&str> = other
            .checked_legends
            .iter()
            .filter(|(name, legend)| {
                self.checked_legends
                    .get(*name)
                    .is_some_and(|l| l != *legend)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        if !clashes.is_empty() {
            return Err(ConfigError::LegendsClash(clashes.join(", ")));
        }
        let mut added = Vec::new();
        for (name, tool) in other.tools {
            if self.tools.contains_key(&name) {
                continue;
            }
            if let Some(records) = other.checked.get(&name) {
                self.checked.insert(name.clone(), records.clone());
            }
            self.tools.insert(name.clone(), tool);
            added.push(name);
        }
        for (name, legend) in other.checked_legends {
            self.checked_legends.entry(name).or_insert(legend);
        }
        Ok(added)
    }

    /// The configured records of `tool`, checked when the configuration loaded; `None` when
    /// the tool has none (its results are shaped by its own types).
    pub(crate) fn records(&self, tool: &str) -> Option<&records::ConfiguredRecords> {
        self.checked.get(tool)
    }

    /// The projection of `tool`'s JSON results, from its configured records
    /// (`[tools.<tool>.records]`): what [`Call::shape`](crate::Call::shape) shapes (`(&projection, raw)`)
    /// a result with. `None` when the tool has no configured records.
    pub fn json_projection(&self, tool: &str) -> Option<crate::configured::JsonProjection> {
        let records = self.checked.get(tool)?;
        Some(crate::configured::JsonProjection::new(
            records,
            &self.checked_legends,
        ))
    }

    /// `tool`'s view for `client` (`[tools.<tool>.clients."<client>"]`), matched as
    /// `[clients]`'s names are.
    fn client_view(&self, tool: &str, client: &str) -> Option<&ClientView> {
        self.tools
            .get(tool)?
            .clients
            .as_ref()?
            .iter()
            .find_map(|(name, view)| {
                crate::budget::clients::names_match(
                    name,
                    &crate::budget::clients::normalised(client),
                )
                .then_some(view)
            })
    }

    /// Checks, at start-up, that `tool`'s configuration only narrows the view `projection`
    /// describes (a derived type's `T::PROJECTION`): every field `hide` names, for every
    /// client too, is one the view shows. Each one that is not is named in one error.
    ///
    /// ```
    /// use toolshape::{ToolResult, config::ShapeConfig};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "ticket", plural = "tickets")]
    /// struct Ticket {
    ///     #[shape(id)] id: u32,
    ///     #[shape(untrusted)] body: String,
    ///     #[shape(skip)] token: String,
    /// }
    ///
    /// let config = ShapeConfig::from_toml_str(r#"
    ///     [tools.search]
    ///     hide = ["body"]
    ///     [tools.search.clients."open-webui"]
    ///     hide = ["token", "bdy"]
    /// "#).unwrap();
    /// assert_eq!(
    ///     config.check_view("search", Ticket::PROJECTION).unwrap_err().to_string(),
    ///     "search hides `token`, which the ticket view already leaves out and `bdy`, which \
    ///      the ticket view does not have: configuration may narrow a view, never widen it; \
    ///      the fields it shows are: id, body (for client open-webui)"
    /// );
    /// ```
    pub fn check_view<S: crate::record::Storage>(
        &self,
        tool: &str,
        projection: &crate::record::Projection<S>,
    ) -> Result<(), ConfigError> {
        let c = self.tool(tool)?;
        let mut problems = Vec::new();
        if let Some(hide) = &c.hide
            && let Err(e) = crate::shaper::hide_check(tool, hide, projection)
        {
            problems.push(e.to_string());
        }
        for (client, view) in c.clients.iter().flatten() {
            if let Err(e) = crate::shaper::hide_check(tool, &view.hide, projection) {
                problems.push(format!("{e} (for client {})", shown_name(client)));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::View(problems.join("; ")))
        }
    }

    /// Refuses what would put unseen characters into every answer: a tool name or a datamark
    /// holding a control, bidi, zero-width, tag or other invisible character, and a datamark
    /// that is whitespace or a delimiter character (`«`, `»`, `<`, `>`). The error names the
    /// key.
    ///
    /// ```
    /// use toolshape::config::ShapeConfig;
    ///
    /// let err = ShapeConfig::from_toml_str("[tools.\"search\\u202e\"]").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "`tools.searchU+202E` holds a bidi control (U+202E); use visible characters only, \
    ///      since it appears in every answer"
    /// );
    /// let err = ShapeConfig::from_toml_str("[defaults.untrusted]\ndatamark = \"\\u200b\"").unwrap_err();
    /// assert!(err.to_string().starts_with("`defaults.untrusted.datamark` holds a zero-width"));
    /// ```
    pub fn check(&self) -> Result<(), ConfigError> {
        check_tool(&self.defaults, "defaults")?;
        if self.defaults.hide.is_some() || self.defaults.clients.is_some() {
            return Err(ConfigError::View(
                "`defaults` cannot hide fields: a view is narrowed per tool (`[tools.<name>] hide \
                 = [...]`, or per client in `[tools.<name>.clients.\"<client>\"]`)"
                    .to_owned(),
            ));
        }
        for (name, tool) in &self.tools {
            let key = format!("tools.{}", shown_name(name));
            check_name(name, &key)?;
            check_tool(tool, &key)?;
        }
        Ok(())
    }

    /// The channel profile `tool` answers `client` (an MCP `clientInfo.name`; `None` before
    /// `initialize` or outside MCP) with: the tool's own `channels` when configured, else the
    /// client's entry in `[clients]`, else its entry in the built-in table, else
    /// [`ChannelPolicy::Both`]. The client's own cuts
    /// ([`clients::reader`](crate::budget::clients::reader)) lower the budget whatever the profile.
    ///
    /// ```
    /// use toolshape::{ChannelPolicy, config::ShapeConfig};
    ///
    /// let config = ShapeConfig::from_toml_str(r#"
    ///     [clients]
    ///     "our-agent" = "text"
    ///
    ///     [tools.search_tickets]
    ///     [tools.get_ticket]
    ///     channels = "both"
    /// "#).unwrap();
    /// let profile = |tool, client| config.shaper_for_client(tool, client).unwrap().current_channels();
    /// assert_eq!(profile("search_tickets", Some("claude-code")), ChannelPolicy::Structured);
    /// assert_eq!(profile("search_tickets", Some("Our_Agent")), ChannelPolicy::Text);
    /// assert_eq!(profile("search_tickets", Some("someone-else")), ChannelPolicy::Both);
    /// assert_eq!(profile("get_ticket", Some("claude-code")), ChannelPolicy::Both); // fixed per tool
    /// // Codex keeps 10 KiB or 256 lines of a tool's output, whichever comes first.
    /// let codex = config.shaper_for_client("get_ticket", Some("codex-mcp-client")).unwrap();
    /// assert_eq!(codex.current_budget().max_bytes(), Some(10 * 1024));
    /// ```
    pub fn shaper_for_client(
        &self,
        tool: &str,
        client: Option<&str>,
    ) -> Result<Shaper, ConfigError> {
        Ok(self.for_client(self.shaper(tool)?, tool, client))
    }

    /// `shaper`, `tool`'s own, as `client` reads it: the client's cuts (whatever the
    /// profile), its view of the tool, and its channel profile unless the tool fixes its
    /// channels. The one step of a shaper that depends on the client; the rest is decided per
    /// tool, once.
    pub(crate) fn for_client(&self, shaper: Shaper, tool: &str, client: Option<&str>) -> Shaper {
        let reader = crate::budget::clients::reader(client, &self.clients);
        let mut shaper = shaper.client_limits(reader.limits);
        if let Some(view) = client.and_then(|client| self.client_view(tool, client)) {
            let mut hide = shaper.current_hide().to_vec();
            hide.extend(
                view.hide
                    .iter()
                    .filter(|h| !hide.contains(h))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            shaper = shaper.hide(hide);
        }
        let fixed = self
            .tools
            .get(tool)
            .and_then(|own| own.channels)
            .or(self.defaults.channels);
        match fixed {
            // A tool that fixes its channels keeps them for every client.
            Some(_) => shaper,
            None => shaper.channels(reader.profile),
        }
    }

    /// Reads a `.toml` or `.json` file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let base = path.parent();
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Self::from_toml_at(&text, base),
            Some("json") => Self::from_json_at(&text, base),
            _ => Err(ConfigError::Extension(shown)),
        }
    }

    /// The settings of `tool`, with the defaults filled in.
    pub fn tool(&self, tool: &str) -> Result<ToolConfig, ConfigError> {
        let own = self
            .tools
            .get(tool)
            .ok_or_else(|| ConfigError::UnknownTool {
                tool: tool.to_owned(),
                known: self.tools.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        Ok(self.with_defaults(own))
    }

    /// `own` with `[defaults]` filling what it leaves out.
    fn with_defaults(&self, own: &ToolConfig) -> ToolConfig {
        let d = &self.defaults;
        ToolConfig {
            budget: own.budget.or(d.budget),
            tokenizer: own.tokenizer.or(d.tokenizer),
            format: own.format.or(d.format),
            structured_form: own.structured_form.or(d.structured_form),
            channels: own.channels.or(d.channels),
            page_size: own.page_size.or(d.page_size),
            untrusted: own.untrusted.clone().or_else(|| d.untrusted.clone()),
            handles: own.handles.or(d.handles),
            left_out: own.left_out.or(d.left_out),
            fetch_one: own.fetch_one.clone().or_else(|| d.fetch_one.clone()),
            records: own.records,
            hide: own.hide.clone(),
            clients: own.clients.clone(),
            trusted: own.trusted.clone(),
            max_tokens: own.max_tokens.or(d.max_tokens),
            rules: own.rules.or(d.rules),
            redact: own.redact.or(d.redact),
        }
    }

    /// Whether `tool` is listed in `[tools]`.
    pub fn has_tool(&self, tool: &str) -> bool {
        self.tools.contains_key(tool)
    }

    /// [`shaper_for_client`](Self::shaper_for_client) for any tool: one the configuration
    /// does not list takes `[defaults]` (what a layer in front of every tool of a server
    /// uses).
    pub fn shaper_for_any(&self, tool: &str, client: Option<&str>) -> Result<Shaper, ConfigError> {
        Ok(self.for_client(self.shaper_for_any_client(tool)?, tool, client))
    }

    /// The shaper of any tool before a client's profile ([`shaper`](Self::shaper) for one the
    /// configuration lists, `[defaults]` for one it does not).
    pub(crate) fn shaper_for_any_client(&self, tool: &str) -> Result<Shaper, ConfigError> {
        self.shaper_from(tool, &self.tool_or_defaults(tool))
    }

    /// `tool`'s settings with `[defaults]` filling what it leaves out; `[defaults]` alone for
    /// a tool the configuration does not list.
    pub fn tool_or_defaults(&self, tool: &str) -> ToolConfig {
        match self.tools.get(tool) {
            Some(own) => self.with_defaults(own),
            None => self.with_defaults(&ToolConfig::default()),
        }
    }

    /// A [`Shaper`] for `tool`, configured (the settings it reads are
    /// [`check`](Self::check)ed, so a configuration built in code is held to the same rules).
    pub fn shaper(&self, tool: &str) -> Result<Shaper, ConfigError> {
        self.shaper_from(tool, &self.tool(tool)?)
    }

    /// The shaper `c`, `tool`'s settings with the defaults filled in, describes.
    fn shaper_from(&self, tool: &str, c: &ToolConfig) -> Result<Shaper, ConfigError> {
        let key = format!("tools.{}", shown_name(tool));
        check_name(tool, &key)?;
        check_tool(c, &key)?;
        let mut shaper = Shaper::for_tool(tool)
            .budget(c.budget.unwrap_or_default())
            .tokenizer(Bpe::new(c.tokenizer.unwrap_or(Encoding::O200kBase)))
            .format(c.format.unwrap_or_default())
            .channels(c.channels.unwrap_or_default())
            .untrusted(c.untrusted.clone().unwrap_or_default());
        if let Some(page_size) = c.page_size {
            shaper = shaper.page_size(page_size);
        }
        if let Some(form) = c.structured_form {
            shaper = shaper.structured_form(form);
        }
        if let Some(left_out) = c.left_out {
            shaper = shaper.left_out(left_out);
        }
        if let Some(tool) = &c.fetch_one {
            check_name(tool, &format!("{key}.fetch_one"))?;
            shaper = shaper.fetch_one(tool.clone());
        }
        if let Some(hide) = &c.hide {
            shaper = shaper.hide(hide.clone());
        }
        Ok(shaper)
    }
}

/// `name` with every unseen character written as `U+XXXX`, so an error naming the key shows
/// where the character is without carrying it.
fn shown_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().take(80) {
        if crate::untrusted::unseen(c).is_some() {
            out.push_str(&format!("U+{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    if name.chars().nth(80).is_some() {
        out.push('…');
    }
    out
}

fn check_name(name: &str, key: &str) -> Result<(), ConfigError> {
    if name.trim().is_empty() {
        return Err(ConfigError::Unsafe {
            key: key.to_owned(),
            problem: "is empty".to_owned(),
        });
    }
    match name
        .chars()
        .find_map(|c| crate::untrusted::unseen(c).map(|what| (c, what)))
    {
        Some((c, what)) => Err(ConfigError::Unsafe {
            key: key.to_owned(),
            problem: format!("holds {what} (U+{:04X})", u32::from(c)),
        }),
        None => Ok(()),
    }
}

fn check_tool(tool: &ToolConfig, key: &str) -> Result<(), ConfigError> {
    let Some(mark) = tool.untrusted.as_ref().and_then(|u| u.datamark) else {
        return Ok(());
    };
    let key = format!("{key}.untrusted.datamark");
    let problem = if let Some(what) = crate::untrusted::unseen(mark) {
        format!("holds {what} (U+{:04X})", u32::from(mark))
    } else if mark.is_whitespace() {
        format!(
            "is whitespace (U+{:04X}), which would hide the marking",
            u32::from(mark)
        )
    } else if matches!(mark, '«' | '»' | '<' | '>') {
        format!("is `{mark}`, which delimits untrusted text and would let content close it")
    } else {
        return Ok(());
    };
    Err(ConfigError::Unsafe { key, problem })
}
