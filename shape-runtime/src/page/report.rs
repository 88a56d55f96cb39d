//! The report of one call: what went in, what came out, where it was cut and why.
//!
//! Returned as a value ([`Report`]) and emitted as a `tracing` event with target `shape`, so
//! "the result was truncated at 4k and the matching record was at index 63" is a log query,
//! not an investigation.

use crate::budget::tokens::Tokenizer;
use crate::page::envelope::OmitReason;
pub use crate::record::call_env::Diagnostics;
use crate::resolve::ResolverStats;
use serde::Serialize;

/// The size of the raw payload before shaping, when the caller supplies it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RawSize {
    /// Bytes.
    pub bytes: usize,
    /// Tokens: exact for payloads up to 8 KiB (`RAW_SAMPLE_BYTES`), otherwise extrapolated from a
    /// sample (see [`RawSize::measure`]).
    pub tokens: usize,
    /// Whether `tokens` was counted exactly.
    pub exact: bool,
}

/// Payloads up to this size are tokenized whole for the report.
pub(crate) const RAW_SAMPLE_BYTES: usize = 8 * 1024;

impl RawSize {
    /// Measures a raw payload, bounding the cost: up to 8 KiB (`RAW_SAMPLE_BYTES`) it is counted
    /// exactly; beyond, four evenly spaced 2 KiB windows are counted and the tokens-per-byte
    /// ratio is applied to the whole. The cost is that of tokenizing 8 KiB, whatever the size
    /// of the payload (a 40,000-token payload would otherwise cost more to measure than to
    /// shape).
    pub fn measure(raw: &str, tokenizer: &dyn Tokenizer) -> RawSize {
        if raw.len() <= RAW_SAMPLE_BYTES {
            return RawSize {
                bytes: raw.len(),
                tokens: tokenizer.count(raw),
                exact: true,
            };
        }
        const WINDOWS: usize = 4;
        let window = RAW_SAMPLE_BYTES / WINDOWS;
        let stride = raw.len() / WINDOWS;
        let (mut bytes, mut tokens) = (0usize, 0usize);
        for i in 0..WINDOWS {
            let mut start = i * stride;
            while !raw.is_char_boundary(start) {
                start += 1;
            }
            let mut end = (start + window).min(raw.len());
            while !raw.is_char_boundary(end) {
                end -= 1;
            }
            if end > start {
                bytes += end - start;
                tokens += tokenizer.count(&raw[start..end]);
            }
        }
        let estimate = if bytes == 0 {
            0
        } else {
            ((tokens as f64) * (raw.len() as f64) / (bytes as f64)).round() as usize
        };
        RawSize {
            bytes: raw.len(),
            tokens: estimate,
            exact: false,
        }
    }
}

/// Where the page was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// Index in the ranked order of the first record not shown.
    pub index: usize,
    /// Why it was not shown.
    pub reason: OmitReason,
}

/// Tokens of each channel, envelope included, as counted on the final text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChannelTokens {
    /// The text channel (prose, table or JSON, as configured).
    pub text: usize,
    /// The structured channel (the envelope as JSON); `None` under
    /// [`ChannelPolicy::Text`](crate::ChannelPolicy::Text), whose model reads only the text:
    /// the structured channel is then neither held to the budget nor sent in an MCP answer,
    /// so it is not counted (counting it would cost as much as counting the text again).
    pub structured: Option<usize>,
}

impl ChannelTokens {
    /// The most either channel takes (the text's alone where the structured channel is not
    /// counted): what the budget holds.
    pub fn most(&self) -> usize {
        self.structured.map_or(self.text, |s| s.max(self.text))
    }

    /// The report's counts of `tokens` under `channels`: the structured channel's only where
    /// the profile holds it.
    pub(crate) fn reported(
        tokens: crate::budget::channel::PerChannel<usize>,
        channels: crate::budget::channel::ChannelPolicy,
    ) -> ChannelTokens {
        ChannelTokens {
            text: tokens.text,
            structured: channels.held().structured.then_some(tokens.structured),
        }
    }
}

/// Record counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecordCounts {
    /// All records matching the query (the caller's total, or the rows given); at least
    /// this many when an upstream that pages itself gives no total.
    pub total: u64,
    /// Records given to this call.
    pub given: usize,
    /// Records shown.
    pub shown: usize,
    /// Records this call skipped because no page of their own could show them within the
    /// budget (each named in the summary, with what its page needs).
    pub skipped: usize,
    /// Records matching but not shown by this call (`total` − earlier pages − `shown`); at
    /// least this many when an upstream that pages itself gives no total.
    pub omitted: u64,
}

/// The report of one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The tool.
    pub tool: String,
    /// The answer's status, as its envelope says.
    pub status: crate::page::envelope::Status,
    /// The tokenizer the budget is counted in.
    pub tokenizer: String,
    /// The budget in tokens.
    pub budget: usize,
    /// The raw payload, when supplied.
    pub raw: Option<RawSize>,
    /// Tokens per channel.
    pub tokens: ChannelTokens,
    /// Of `tokens`, the envelope's: everything but the records (status, summary, notes,
    /// omission, cursor, and the JSON's keys and brackets).
    pub envelope: ChannelTokens,
    /// Record counts.
    pub records: RecordCounts,
    /// The cut, if any.
    pub cut: Option<Cut>,
    /// One entry per resolver: calls, keys, unresolved.
    pub resolvers: Vec<ResolverStats>,
    /// Unknown legend codes, unresolved ids and unparsed dates among the records shown, and
    /// what happened to untrusted text.
    pub diagnostics: Diagnostics,
    /// Records tokenized (each at most once per channel).
    pub tokenized: usize,
    /// The envelope alone did not fit the budget (a budget too small for any answer): the
    /// answer was sent anyway, with no records, and this says so.
    pub over_budget: bool,
    /// Wall time of the call, in microseconds.
    pub duration_us: u64,
    /// The per-call suffix of the provenance delimiters (`<untrusted-3f9a1c…>`), when the
    /// policy is [`Provenance::RandomTag`](crate::untrusted::Provenance::RandomTag): what a
    /// tool's system prompt or a log reader matches the delimiters against.
    pub nonce: Option<String>,
}

impl Report {
    /// Emits the report as a `tracing` event with target `shape`.
    pub fn emit(&self) {
        tracing::info!(
            target: "shape",
            tool = %self.tool,
            status = self.status.as_str(),
            tokenizer = %self.tokenizer,
            budget = self.budget,
            raw_bytes = self.raw.map(|r| r.bytes),
            raw_tokens = self.raw.map(|r| r.tokens),
            text_tokens = self.tokens.text,
            structured_tokens = self.tokens.structured,
            total = self.records.total,
            shown = self.records.shown,
            omitted = self.records.omitted,
            cut_index = self.cut.map(|c| c.index),
            cut_reason = self.cut.map(|c| c.reason.as_str()),
            unresolved = self.resolvers.iter().map(|r| r.unresolved).sum::<usize>(),
            unknown_codes = self.diagnostics.unknown_codes.values().map(Vec::len).sum::<usize>(),
            unparsed_dates = self.diagnostics.unparsed_dates,
            attacker_tokens = self.diagnostics.untrusted.attacker_tokens,
            over_budget = self.over_budget,
            duration_us = self.duration_us,
            "shaped tool result"
        );
    }
}
