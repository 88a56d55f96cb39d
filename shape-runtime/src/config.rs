//! Configuration, not constants: budgets, tokenizer, format, channel policy and the
//! untrusted-text policy per tool, loaded from TOML or JSON, because they change when the
//! model changes.
//!
//! ```
//! use toolshape::{Format, config::{ShapeConfig}};
//!
//! let config = ShapeConfig::from_toml_str(r#"
//!     [defaults]
//!     budget = 2000
//!     format = "prose"
//!
//!     [tools.search_tickets]
//!     budget = { window = 200000, share = 0.33, expected_calls = 30 }
//!     format = "table"
//!
//!     [tools.get_ticket]
//! "#).unwrap();
//! let shaper = config.shaper("search_tickets").unwrap();
//! assert_eq!(shaper.current_budget().max_tokens(), 2_200);
//! assert_eq!(shaper.current_format(), Format::Table);
//! assert_eq!(config.shaper("get_ticket").unwrap().current_budget().max_tokens(), 2_000);
//! assert_eq!(
//!     config.shaper("serch_tickets").unwrap_err().to_string(),
//!     "no tool `serch_tickets` in the configuration; configured tools: get_ticket, search_tickets"
//! );
//! ```

use crate::admit::ChannelPolicy;
use crate::budget::Budget;
use crate::render::Format;
use crate::shaper::Shaper;
use crate::store::HandlePolicy;
use crate::tokens::{Bpe, Encoding};
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
    /// `both` (default), `text` or `structured`: the channel the budget is enforced on.
    pub channels: Option<ChannelPolicy>,
    /// At most this many records per page.
    pub page_size: Option<usize>,
    /// How untrusted text is marked.
    pub untrusted: Option<UntrustedPolicy>,
    /// When and for how long results are kept behind handles.
    pub handles: Option<HandlePolicy>,
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
    /// Parses TOML.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string().trim().to_owned()))
    }

    /// Parses JSON.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))
    }

    /// Reads a `.toml` or `.json` file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Self::from_toml_str(&text),
            Some("json") => Self::from_json_str(&text),
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
        let d = &self.defaults;
        Ok(ToolConfig {
            budget: own.budget.or(d.budget),
            tokenizer: own.tokenizer.or(d.tokenizer),
            format: own.format.or(d.format),
            channels: own.channels.or(d.channels),
            page_size: own.page_size.or(d.page_size),
            untrusted: own.untrusted.clone().or_else(|| d.untrusted.clone()),
            handles: own.handles.or(d.handles),
        })
    }

    /// A [`Shaper`] for `tool`, configured.
    pub fn shaper(&self, tool: &str) -> Result<Shaper, ConfigError> {
        let c = self.tool(tool)?;
        let mut shaper = Shaper::for_tool(tool)
            .budget(c.budget.unwrap_or_default())
            .tokenizer(Bpe::new(c.tokenizer.unwrap_or(Encoding::O200kBase)))
            .format(c.format.unwrap_or_default())
            .channels(c.channels.unwrap_or_default())
            .untrusted(c.untrusted.unwrap_or_default());
        if let Some(page_size) = c.page_size {
            shaper = shaper.page_size(page_size);
        }
        Ok(shaper)
    }
}
