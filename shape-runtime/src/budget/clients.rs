//! The client table and the one function that reads it (the public face is
//! `toolshape::clients`, in lib.rs).

use std::collections::BTreeMap;

pub use crate::budget::ClientLimits;
use crate::budget::channel::ChannelPolicy;

/// What a client not in [`KNOWN_CLIENTS`] gets: both channels, each within the budget, so
/// the answer is whole whichever channel its model reads.
pub(crate) const DEFAULT_PROFILE: ChannelPolicy = ChannelPolicy::Both;

/// One known client: the names it sends as `clientInfo.name`, what its model reads, and where
/// that fact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownClient {
    /// The client as people call it.
    pub client: &'static str,
    /// The `clientInfo.name` values it sends, compared without case, with `-`, `_` and
    /// spaces alike; a name of two or more words also matches with more words after it
    /// (`Visual Studio Code - Insiders`), a one-word name only exactly.
    pub names: &'static [&'static str],
    /// The profile it gets.
    pub profile: ChannelPolicy,
    /// Where it cuts or refuses a tool's output; a budget is lowered to these
    /// ([`Budget::within`](crate::Budget::within)), so it never truncates a shaped answer.
    pub limits: ClientLimits,
    /// The issue or code the fact comes from.
    pub source: &'static str,
}

/// The clients whose reading is known (see the README's client table).
pub const KNOWN_CLIENTS: &[KnownClient] = &[
    KnownClient {
        client: "Claude Code",
        names: &["claude-code"],
        profile: ChannelPolicy::Structured,
        limits: ClientLimits {
            tokens: Some(25_000),
            ..ClientLimits::NONE
        },
        source: "anthropics/claude-code #79944, #55677, #45575; errors: #86032; \
                 25,000 tokens: MAX_MCP_OUTPUT_TOKENS's default",
    },
    KnownClient {
        client: "Codex",
        names: &["codex-mcp-client", "codex"],
        profile: ChannelPolicy::Structured,
        limits: ClientLimits {
            bytes: Some(10 * 1024),
            lines: Some(256),
            ..ClientLimits::NONE
        },
        source: "openai/codex #38287, PR #9338; cut at 10 KiB or 256 lines: #6544, #7906",
    },
    KnownClient {
        client: "GitHub Copilot CLI",
        names: &["github-copilot-cli", "copilot-cli"],
        profile: ChannelPolicy::Structured,
        limits: ClientLimits::NONE,
        source: "github/copilot-cli #3258",
    },
    KnownClient {
        client: "VS Code",
        names: &["Visual Studio Code", "vscode"],
        profile: ChannelPolicy::Structured,
        limits: ClientLimits::NONE,
        source: "microsoft/vscode #290063",
    },
    KnownClient {
        client: "opencode",
        names: &["opencode"],
        profile: ChannelPolicy::Structured,
        limits: ClientLimits::NONE,
        source: "anomalyco/opencode PR #32074",
    },
    KnownClient {
        client: "Open WebUI",
        names: &["open-webui", "openwebui"],
        profile: ChannelPolicy::Text,
        limits: ClientLimits::NONE,
        source: "usememos/memos #6226 (Open WebUI's client)",
    },
    KnownClient {
        client: "OpenAI Agents SDK",
        names: &["openai-agents", "openai-agents-python"],
        profile: ChannelPolicy::Text,
        limits: ClientLimits::NONE,
        source: "the SDK's MCP code (reads `content` only)",
    },
    KnownClient {
        client: "langchain-mcp-adapters",
        names: &["langchain-mcp-adapters"],
        profile: ChannelPolicy::Text,
        limits: ClientLimits::NONE,
        source: "the adapters' code (reads `content` only)",
    },
    KnownClient {
        client: "the MCP Python SDK's default name (Open WebUI, the Agents SDK and the \
                 langchain adapters send it unless set; Kimi Code CLI always, through FastMCP)",
        names: &["mcp"],
        profile: ChannelPolicy::Text,
        limits: ClientLimits::NONE,
        source: "modelcontextprotocol/python-sdk `ClientSession` default `clientInfo`; Kimi \
                 Code CLI: MoonshotAI/kimi-cli `soul/toolset.py` (a `fastmcp.Client` given no \
                 `client_info`; `convert_mcp_tool_result` reads `content` only)",
    },
];

/// The known client `name` (a `clientInfo.name`) belongs to, if any.
pub fn known(name: &str) -> Option<&'static KnownClient> {
    let name = normalised(name);
    KNOWN_CLIENTS
        .iter()
        .find(|c| c.names.iter().any(|known| names_match(known, &name)))
}

/// Whether `listed`, a client's name as a table writes it (the built-in one, `[clients]`, a
/// tool's per-client view), names the client that sent `sent` (already [`normalised`]): the
/// same words, or, for a name of several words, those words followed by more (`claude code`
/// names `claude code 1.2`; `codex` does not name `codexia`). One rule for every table.
pub(crate) fn names_match(listed: &str, sent: &str) -> bool {
    let listed = normalised(listed);
    sent == listed
        || listed.contains(' ')
            && sent
                .strip_prefix(&listed)
                .is_some_and(|rest| rest.starts_with(' '))
}

/// How a client reads a tool's answer: the channel its model reads, and where the client
/// cuts a tool's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// The channel profile its model reads.
    pub profile: ChannelPolicy,
    /// Where it cuts a tool's output (the budget is lowered to these).
    pub limits: ClientLimits,
}

/// How the client that sent `name` as `clientInfo.name` reads: the one place a client's
/// profile is decided. Its profile is the one `configured` names for it (a `[clients]`
/// table: names compared as [`KNOWN_CLIENTS`]' are, without case, `-`, `_` and spaces alike,
/// a name of several words also naming a longer one), else its entry's in
/// the client table, else both channels ([`ChannelPolicy::Both`]); its limits are its entry's whatever the
/// profile (naming a profile does not change where a client cuts). With no name: the default
/// profile and no limits.
///
/// ```
/// use std::collections::BTreeMap;
/// use toolshape::ChannelPolicy;
/// use toolshape::clients::reader;
///
/// let none = BTreeMap::new();
/// let codex = reader(Some("codex-mcp-client"), &none);
/// assert_eq!(codex.profile, ChannelPolicy::Structured);
/// assert_eq!((codex.limits.bytes, codex.limits.lines), (Some(10 * 1024), Some(256)));
/// assert_eq!(reader(Some("claude-code"), &none).limits.tokens, Some(25_000));
/// assert_eq!(reader(None, &none).profile, ChannelPolicy::Both);
///
/// let ours = BTreeMap::from([("Our Agent".to_owned(), ChannelPolicy::Text)]);
/// assert_eq!(reader(Some("our_agent"), &ours).profile, ChannelPolicy::Text);
/// assert_eq!(reader(Some("our-agent 2.1"), &ours).profile, ChannelPolicy::Text);
/// assert_eq!(reader(Some("our-agents"), &ours).profile, ChannelPolicy::Both);
/// ```
pub fn reader(name: Option<&str>, configured: &BTreeMap<String, ChannelPolicy>) -> Reader {
    let Some(name) = name else {
        return Reader {
            profile: DEFAULT_PROFILE,
            limits: ClientLimits::NONE,
        };
    };
    let known = known(name);
    let wanted = (!configured.is_empty()).then(|| normalised(name));
    let named = wanted.and_then(|wanted| {
        configured
            .iter()
            .find(|(listed, _)| names_match(listed, &wanted))
            .map(|(_, profile)| *profile)
    });
    Reader {
        profile: named.unwrap_or(known.map_or(DEFAULT_PROFILE, |c| c.profile)),
        limits: known.map_or(ClientLimits::NONE, |c| c.limits),
    }
}

/// Lower case, `-` and `_` read as spaces, runs of spaces as one, trimmed.
pub(crate) fn normalised(name: &str) -> String {
    name.split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile_for(name: &str) -> ChannelPolicy {
        reader(Some(name), &BTreeMap::new()).profile
    }

    fn limits_for(name: &str) -> ClientLimits {
        reader(Some(name), &BTreeMap::new()).limits
    }

    #[test]
    fn names_match_whole_words_only() {
        assert_eq!(profile_for("Claude_Code"), ChannelPolicy::Structured);
        assert_eq!(profile_for("  opencode "), ChannelPolicy::Structured);
        assert_eq!(profile_for("MCP"), ChannelPolicy::Text);
        assert_eq!(
            profile_for("claude-code-nightly"),
            ChannelPolicy::Structured
        );
        // A one-word name matches only exactly: the Python SDK's `mcp` is not every
        // `mcp-…` client, and a prefix of a word is not the client.
        assert_eq!(profile_for("mcp-inspector"), DEFAULT_PROFILE);
        assert_eq!(profile_for("mcpx"), DEFAULT_PROFILE);
        assert_eq!(profile_for("opencoder"), DEFAULT_PROFILE);
        assert_eq!(profile_for(""), DEFAULT_PROFILE);
    }

    /// Each client the README's table names, by the names it sends, with what a model of it
    /// reads and where it cuts, written out here (not read from the table).
    #[test]
    fn every_named_client_gets_its_profile_and_cuts() {
        use ChannelPolicy::{Both, Structured, Text};
        let none = ClientLimits::NONE;
        let claude = ClientLimits {
            tokens: Some(25_000),
            ..none
        };
        let codex = ClientLimits {
            bytes: Some(10_240),
            lines: Some(256),
            ..none
        };
        for (name, profile, limits) in [
            ("claude-code", Structured, claude),
            ("codex-mcp-client", Structured, codex),
            ("Visual Studio Code", Structured, none),
            ("Visual Studio Code - Insiders", Structured, none),
            ("opencode", Structured, none),
            ("open-webui", Text, none),
            ("openai-agents", Text, none),
            ("langchain-mcp-adapters", Text, none),
            ("mcp", Text, none),
            ("our-own-agent", Both, none),
        ] {
            assert_eq!(profile_for(name), profile, "{name}");
            assert_eq!(limits_for(name), limits, "{name}");
            assert_eq!(known(name).is_some(), profile != Both, "{name}");
        }
        // A several-word name matches as a prefix only up to a word boundary.
        assert_eq!(profile_for("Visual Studio Codex"), DEFAULT_PROFILE);
        assert_eq!(profile_for("Visual Studio"), DEFAULT_PROFILE);
        assert_eq!(
            limits_for("codex"),
            codex,
            "the short name Codex also sends"
        );
        assert_eq!(limits_for("codexx"), none);
    }

    /// A configured profile wins over the table's, matched by words; the client's cuts stay
    /// the table's (they are where the client cuts, not a choice of ours); a name the
    /// configuration lists that the table does not know has no cuts.
    #[test]
    fn a_configured_profile_overrides_the_table_and_keeps_its_cuts() {
        let configured = BTreeMap::from([
            ("Codex MCP Client".to_owned(), ChannelPolicy::Both),
            ("our_agent".to_owned(), ChannelPolicy::Text),
        ]);
        let codex = reader(Some("codex-mcp-client"), &configured);
        assert_eq!(codex.profile, ChannelPolicy::Both);
        assert_eq!(codex.limits, limits_for("codex-mcp-client"));
        assert_ne!(codex.limits, ClientLimits::NONE);
        let ours = reader(Some("Our-Agent"), &configured);
        assert_eq!(ours.profile, ChannelPolicy::Text);
        assert_eq!(ours.limits, ClientLimits::NONE);
        // Not listed: the table's reading.
        let claude = reader(Some("claude-code"), &configured);
        assert_eq!(claude.profile, ChannelPolicy::Structured);
        assert_eq!(claude.limits.tokens, Some(25_000));
        // No name: the default, however the table is configured.
        let none = reader(None, &configured);
        assert_eq!(
            (none.profile, none.limits),
            (DEFAULT_PROFILE, ClientLimits::NONE)
        );
        // Listed names match as words, not as prefixes.
        assert_eq!(
            reader(Some("our agentx"), &configured).profile,
            DEFAULT_PROFILE
        );
    }

    #[test]
    fn names_are_normalised_by_words() {
        // One rule for every table's names: the same words, or a name of several words
        // followed by more; a one-word name only itself.
        for (listed, sent, matches) in [
            ("Claude Code", "claude code", true),
            ("claude-code", "claude code 1 2", true),
            ("claude code", "claude codex", false),
            ("claude code", "claude", false),
            ("codex", "codex", true),
            ("codex", "codex cli", false),
            ("codex", "codexia", false),
            ("", "", true),
        ] {
            assert_eq!(names_match(listed, sent), matches, "{listed} / {sent}");
        }
        assert_eq!(normalised("  Claude__Code\t"), "claude code");
        assert_eq!(normalised("a--b - c"), "a b c");
        assert_eq!(normalised("VS\u{a0}Code"), "vs code");
        assert_eq!(normalised(""), "");
        assert_eq!(normalised("-_-"), "");
    }
}
