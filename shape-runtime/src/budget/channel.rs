//! Channels: the two channels of an answer (the structured JSON, MCP `structuredContent`,
//! and the text) and which one a client's model reads.

use serde::{Deserialize, Serialize};

/// Which channel a record is being rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// MCP `structuredContent`: the envelope as JSON; untrusted values are neutralised, not
    /// wrapped, and the envelope names their fields (`"untrusted": […]`).
    Structured,
    /// The text content: provenance tags around untrusted values.
    Text,
}

/// Which channel the model reads (the call's channel profile): the budget is enforced on
/// that one, and an MCP answer carries only what that model reads.
///
/// A client whose model reads one channel gets that channel with the whole budget: under
/// `Both` the text channel is held to what the JSON channel fits, so prose shows fewer
/// records than it could alone. [`clients`](crate::clients) picks the profile from an MCP
/// client's name; configuration (`channels = "text"`) fixes it per tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelPolicy {
    /// Each channel fits the budget on its own (the default, for a client whose reading is
    /// not known): MCP answers carry both `content` and `structuredContent`.
    #[default]
    Both,
    /// The model reads the text: only the text channel is held to the budget, and an MCP
    /// answer has no `structuredContent` (nor the tool an `outputSchema` in `tools/list`), so
    /// the prose or table reaches the model.
    Text,
    /// The model reads the structured content: the JSON envelope has the whole budget, and
    /// the text channel is that same JSON (records are rendered once), as is an MCP answer's
    /// text block; an error's text is prose that carries the remedy alone, for clients that
    /// show only the text of an error.
    Structured,
}

impl ChannelPolicy {
    /// Which channels are held to the budget.
    pub(crate) fn held(self) -> PerChannel<bool> {
        PerChannel {
            structured: self != ChannelPolicy::Text,
            text: self != ChannelPolicy::Structured,
        }
    }
}

/// One value per channel: the structured channel (MCP `structuredContent`) and the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PerChannel<T> {
    pub structured: T,
    pub text: T,
}

impl PerChannel<usize> {
    /// Adds two counts channel by channel.
    pub(crate) fn plus(self, other: PerChannel<usize>) -> PerChannel<usize> {
        PerChannel {
            structured: self.structured.saturating_add(other.structured),
            text: self.text.saturating_add(other.text),
        }
    }
}
