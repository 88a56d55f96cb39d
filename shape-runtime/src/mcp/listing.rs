//! What a `tools/list` entry declares beyond the tool's own: its `outputSchema` only where
//! the tool answers with `structuredContent` (the one place that decides it), and the size
//! hint, how many characters a client may let a result take before it truncates or spills it
//! (Claude Code reads `anthropic/maxResultSizeChars`).

use crate::budget::Budget;
use crate::budget::channel::ChannelPolicy;
use rmcp::model::{MetaObject, Tool};
use serde_json::Value;

/// The `_meta` key of a `tools/list` entry that tells a client how many characters a result
/// of the tool may take before the client truncates or spills it.
pub const MAX_RESULT_SIZE_KEY: &str = "anthropic/maxResultSizeChars";

/// Characters per token the size hint allows. o200k_base averages 3–5 characters a token on
/// English prose and 2–3 on JSON full of ids and dates; 8 leaves room for long words and
/// whitespace runs, so a result within its token budget stays within the hint.
pub const CHARS_PER_TOKEN_CEILING: usize = 8;

/// The most characters a result shaped within `budget` can take, per channel:
/// `budget × CHARS_PER_TOKEN_CEILING`, or the budget's byte ceiling when that is lower (a
/// character takes at least one byte).
///
/// ```
/// use toolshape::{Budget, __seams::mcp};
///
/// assert_eq!(mcp::size_hint(Budget::tokens(2_000)), 16_000);
/// assert_eq!(mcp::size_hint(Budget::tokens(2_000).bytes(10_240)), 10_240);
/// ```
pub fn size_hint(budget: Budget) -> usize {
    let by_tokens = budget.max_tokens().saturating_mul(CHARS_PER_TOKEN_CEILING);
    budget
        .max_bytes()
        .map_or(by_tokens, |bytes| bytes.min(by_tokens))
}

/// `_meta` for a `tools/list` entry carrying the size hint under [`MAX_RESULT_SIZE_KEY`], for
/// `#[tool(meta = mcp::size_hint_meta(budget))]`.
pub fn size_hint_meta(budget: Budget) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.0.insert(
        MAX_RESULT_SIZE_KEY.to_owned(),
        Value::from(size_hint(budget)),
    );
    meta
}

/// `tool` with the size hint added to its `_meta` (other keys are kept).
pub fn with_size_hint(mut tool: Tool, budget: Budget) -> Tool {
    let mut meta = tool.meta.take().unwrap_or_default();
    meta.0.insert(
        MAX_RESULT_SIZE_KEY.to_owned(),
        Value::from(size_hint(budget)),
    );
    tool.meta = Some(meta);
    tool
}

/// [`tools_for`](super::tools_for) under a profile already known.
pub fn tools_for_profile(tools: Vec<Tool>, profile: ChannelPolicy) -> Vec<Tool> {
    tools
        .into_iter()
        .map(|tool| tool_for(tool, profile))
        .collect()
}

/// One `tools/list` entry as a tool answering under `profile` declares it (see
/// [`tools_for`](super::tools_for)): the one place that decides whether a tool lists its `outputSchema`.
pub(crate) fn tool_for(mut tool: Tool, profile: ChannelPolicy) -> Tool {
    if profile == ChannelPolicy::Text {
        tool.output_schema = None;
    }
    tool
}

/// The `open_result` tool as `tools/list` shows it, to every client: the harness and
/// [`Pages::open_result_route`](super::Pages::open_result_route) list this one.
pub(crate) fn open_result_tool() -> Tool {
    use crate::handle::{MemoryStore, OpenResult};
    Tool::new(
        OpenResult::<MemoryStore>::NAME,
        OpenResult::<MemoryStore>::DESCRIPTION,
        OpenResult::<MemoryStore>::input_schema(),
    )
    .with_raw_output_schema(OpenResult::<MemoryStore>::output_schema())
    .annotate(
        rmcp::model::ToolAnnotations::new()
            .read_only(true)
            .open_world(false),
    )
}
