//! What a page is given: its tool's and call's settings ([`PageSettings`]), what it knows
//! beyond its records ([`PageInputs`]), and its records in each channel's state ([`Records`]).

use super::envelope::LeftOut;
use super::error::ErrorSettings;
use super::notes::Notes;
use super::render::{Format, StructuredForm};
use super::upstream::UpstreamPlan;
use crate::budget::Budget;
use crate::budget::channel::ChannelPolicy;
use crate::budget::channel::PerChannel;
use crate::budget::tokens::Tokenizer;
use crate::cursor::Cursors;
use crate::handle::id::Handle;
use crate::record::call_env::CallEnv;
use crate::resolve::ResolverStats;
use crate::untrusted::UntrustedPolicy;

/// What a page needs to know of its tool and of the call.
pub(crate) struct PageSettings<'a> {
    pub tool: &'a str,
    pub tokenizer: &'a dyn Tokenizer,
    /// The budget: tokens, and bytes and lines where set.
    pub budget: Budget,
    pub format: Format,
    /// How a JSON envelope's records are written.
    pub form: StructuredForm,
    pub channels: ChannelPolicy,
    pub untrusted: &'a UntrustedPolicy,
    pub page_size: Option<usize>,
    /// Records matching the query, when the caller knows more than the rows given.
    pub total: Option<u64>,
    /// Records shown by earlier pages.
    pub shown_before: u64,
    /// Records earlier pages skipped as too large for any page of their own.
    pub skipped_before: u64,
    /// The rows are in the caller's order: the summary names no order.
    pub keep_order: bool,
    /// What was asked, for the summary of an empty answer.
    pub query: Option<&'a str>,
    /// The raw payload, for the report's pre-shaping size.
    pub raw: Option<&'a str>,
    /// Makes the `next` cursor.
    pub cursor: Option<&'a Cursors>,
    /// On which pages the text channel names the fields this view leaves out.
    pub left_out: LeftOut,
    /// The tool that shows one record by its id, for a record skipped as too large.
    pub fetch_one: Option<&'a str>,
    /// Output fields the view leaves out (configuration narrowing it).
    pub hide: &'a [String],
}

impl PageSettings<'_> {
    /// What an error envelope of this tool reads.
    pub(crate) fn errors(&self) -> ErrorSettings<'_> {
        ErrorSettings {
            tool: self.tool,
            tokenizer: self.tokenizer,
            budget: self.budget,
            format: self.format,
            channels: self.channels,
        }
    }

    /// How many ranked records a page can reach: every record costs at least one token, so
    /// no more than the budget's tokens of them fit, and no more than the page size; one
    /// more is looked at to know where the cut is. Only these need ranking, resolving and
    /// rendering. At least [`REACH_FLOOR`], below the page size: see there.
    pub(crate) fn reach(&self) -> usize {
        self.budget
            .max_tokens()
            .saturating_add(1)
            .max(REACH_FLOOR)
            .min(self.page_size.map_or(usize::MAX, |p| p.saturating_add(1)))
    }
}

/// The fewest records a page looks at, whatever its budget. A budget too small for any
/// record is answered with the budget the first page needs, and that page may be the
/// result's last, with every record and no cursor: cheaper than the first record with a
/// cursor when the others together cost less than the cursor does. The budget's own reach
/// (a record a token) would leave those records unmade at the smallest budgets, and the
/// figure stated would be that of the page with a cursor, too high; with this floor the
/// last page of up to this many records is sized exactly (beyond it the figure stated is a
/// lower bound, see `Page::stuck`). It costs nothing above 63 tokens.
pub(crate) const REACH_FLOOR: usize = 64;

impl PageSettings<'_> {
    /// Whether this page states the walk's standing facts (which fields hold outsiders'
    /// text): on a walk's first page, and on every page under [`LeftOut::EveryPage`]. A
    /// later page follows the first in the same transcript, whose note the model has read;
    /// its values keep their marks.
    pub(crate) fn states_standing_facts(&self) -> bool {
        self.left_out == LeftOut::EveryPage
            || self.shown_before.saturating_add(self.skipped_before) == 0
    }
}

/// What a page knows beyond its records.
pub(crate) struct PageInputs<'a> {
    /// Records from this position on, in all (the reachable ones may be fewer).
    pub given: usize,
    /// One entry per resolver.
    pub resolvers: Vec<ResolverStats>,
    /// A sentence to lead the summary with.
    pub lead: Option<&'a str>,
    /// Facts about the whole result, stated after the counts.
    pub details: Option<&'a str>,
    /// The handle the whole result is stored under.
    pub handle: Option<Handle>,
    /// Whether the next cursor is a keyset (rank key and id); else a count of records.
    pub keyset: bool,
    /// The upstream pages the rows are, when the upstream pages itself: the next cursor is
    /// then a place in them.
    pub upstream: Option<UpstreamPlan<'a>>,
}

/// The records of a page, rendered for each channel in its own state.
pub(crate) struct Records<'r, R> {
    /// The page's reach, in rank order, for each channel.
    pub rows: PerChannel<&'r [R]>,
    /// The structured channel's state: it counts what rendering notices, once per record.
    pub counting: &'r CallEnv<'r>,
    /// The head's notes, already applied to the text channel's state.
    pub notes: &'r Notes,
    /// The call's delimiter suffix.
    pub nonce: &'r str,
}
