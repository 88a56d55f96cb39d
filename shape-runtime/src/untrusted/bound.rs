//! The bound: the most attacker-controlled tokens one record, and one call, can show.

use crate::record::{FieldKind, Projection};

/// The most attacker-controlled tokens one record of `projection` can show: the sum of its
/// untrusted fields' caps, `Some(0)` with no untrusted field, `None` when a field is uncapped.
/// A `const fn` of the projection alone, so it can be checked at compile time:
///
/// ```
/// use toolshape::{untrusted::record_cap, ToolResult};
///
/// #[derive(ToolResult)]
/// #[shape(name = "ticket", plural = "tickets")]
/// struct Ticket {
///     #[shape(id)]
///     id: String,
///     #[shape(untrusted(max_tokens = 40))]
///     subject: String,
///     #[shape(untrusted(max_tokens = 200))]
///     body: String,
/// }
///
/// const PER_TICKET: Option<u64> = record_cap(Ticket::PROJECTION);
/// assert_eq!(PER_TICKET, Some(240));
/// ```
pub const fn record_cap(projection: &Projection) -> Option<u64> {
    let mut sum = 0u64;
    let mut i = 0;
    while i < projection.fields.len() {
        match projection.fields[i].kind {
            FieldKind::Untrusted {
                max_tokens: Some(n),
            } => sum += n as u64,
            FieldKind::Untrusted { max_tokens: None } => return None,
            _ => {}
        }
        i += 1;
    }
    Some(sum)
}

/// The most attacker-controlled tokens a tool can show in one call: see [`attacker_bound`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AttackerBound {
    /// The budget the bound is computed for, in tokens.
    pub budget: u64,
    /// The most per record: the sum of the untrusted fields' caps, an uncapped field counting
    /// as the whole budget.
    pub per_record: u64,
    /// Untrusted fields with no cap.
    pub uncapped_fields: u32,
    /// The most records one call can show: the budget (every shown record costs at least one
    /// token), or the page size when [`with_max_records`](Self::with_max_records) gave one.
    pub max_records: u64,
    /// The most per call: `min(budget, per_record × max_records)`; 0 with no untrusted field.
    pub per_call: u64,
    /// Whether `per_call` holds whatever the tokenizer does at the seams (see
    /// [`attacker_bound`]): every untrusted field is capped and the caps, not the budget, set
    /// the figure.
    pub unconditional: bool,
}

impl AttackerBound {
    /// The bound when a call shows at most `records` records (the tool's page size).
    pub fn with_max_records(self, records: usize) -> AttackerBound {
        let max_records = self.max_records.min(records as u64);
        AttackerBound {
            max_records,
            ..self
        }
        .settle()
    }

    fn settle(self) -> AttackerBound {
        let by_caps = self.per_record.saturating_mul(self.max_records);
        let per_call = if self.per_record == 0 {
            0
        } else {
            self.budget.min(by_caps)
        };
        let unconditional = self.uncapped_fields == 0 && by_caps <= self.budget;
        AttackerBound {
            per_call,
            unconditional,
            ..self
        }
    }
}

/// The most attacker-controlled tokens ([`UntrustedStats::attacker_tokens`]) one call of a
/// tool showing `projection`'s records can carry, when its rendered output fits
/// `budget_tokens`.
///
/// Reasoning, step by step:
///
/// 1. A value's attacker tokens are the tokens of its content alone, after sanitising, the
///    link policy and its cap. [`prepare`] re-counts the kept prefix on its own with the same
///    tokenizer and shortens it until it fits, so a capped value contributes at most its cap,
///    unconditionally. Markers, delimiters and datamarks are the library's, not the attacker's.
/// 2. Hence a record contributes at most the sum of its caps ([`record_cap`], computable from
///    `T::PROJECTION` alone).
/// 3. A call shows at most `budget` records: the budget is spent record by record (each
///    record's tokens are counted on their own and added), and a rendered record is never
///    empty, so it costs at least one token. A tool with a page size can tighten this with
///    [`AttackerBound::with_max_records`].
/// 4. All content shown is part of the rendered output (copied, or expanded by escaping and
///    datamarking, never shortened), and the output fits the budget; so the content cannot
///    carry more tokens than the budget, which is the `budget` term of the `min` and the
///    figure for an uncapped field. This step assumes the tokenizer does not count more
///    tokens in a piece of text than in the text around it; that holds for the tiktoken
///    vocabularies on the adversarial corpus but is not a theorem of BPE. When every field is
///    capped and `per_record × max_records ≤ budget`, steps 1–3 alone give the figure and
///    [`AttackerBound::unconditional`] is true.
///
/// [`prepare`]: super::prepare
/// [`UntrustedStats::attacker_tokens`]: super::UntrustedStats::attacker_tokens
///
/// ```
/// use toolshape::{untrusted::attacker_bound, ToolResult};
///
/// #[derive(ToolResult)]
/// #[shape(name = "ticket", plural = "tickets")]
/// struct Ticket {
///     #[shape(id)]
///     id: String,
///     #[shape(untrusted(max_tokens = 40))]
///     subject: String,
/// }
///
/// let bound = attacker_bound(Ticket::PROJECTION, 2_000);
/// assert_eq!((bound.per_record, bound.per_call), (40, 2_000));
/// let paged = bound.with_max_records(20);
/// assert_eq!(paged.per_call, 800);
/// assert!(paged.unconditional);
/// ```
pub fn attacker_bound(projection: &Projection, budget_tokens: usize) -> AttackerBound {
    let budget = budget_tokens as u64;
    let mut per_record = 0u64;
    let mut uncapped_fields = 0u32;
    for (_, cap) in projection.untrusted_fields() {
        match cap {
            Some(n) => per_record = per_record.saturating_add(u64::from(n)),
            None => {
                uncapped_fields = uncapped_fields.saturating_add(1);
                per_record = per_record.saturating_add(budget);
            }
        }
    }
    AttackerBound {
        budget,
        per_record,
        uncapped_fields,
        max_records: budget,
        per_call: 0,
        unconditional: false,
    }
    .settle()
}
