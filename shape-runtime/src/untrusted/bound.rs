//! The bound: the most attacker-controlled tokens one record, and one call, can show.
//!
//! A record shows outsiders' text through its own untrusted fields and through those of the
//! records nested in it (`#[shape(nested)]`): a nested record or an `Option` of one adds its
//! caps once, a list of nested records (`Vec`) as many times as the list has records, which
//! no projection limits. An untrusted list of texts (`Vec<String>`) is different: its cap is
//! the list's, shared by its items, so it adds its cap once.

use crate::record::{FieldKind, Projection};
use std::fmt;

#[cfg(any(test, feature = "test-seams"))]
/// The most attacker-controlled tokens one record of `projection` can show: the sum of its
/// untrusted fields' caps and of the caps of the records nested in it, `Some(0)` with no
/// untrusted text; `None` when no fixed figure holds: an untrusted field (at any depth) has
/// no cap, or a list of nested records holds untrusted text (a list has no element limit,
/// so its records' caps add up to as much as the data has). [`attacker_bound`] says which
/// ([`AttackerBound::unbounded`]) and gives the figure that holds then.
/// A `const fn` of the projection alone, so it can be checked at compile time:
///
/// ```
/// use toolshape::{__seams::untrusted::record_cap, ToolResult};
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
///
/// Nested records count: one (or an `Option` of one) by its caps, a list not at all.
///
/// ```
/// use toolshape::{__seams::untrusted::record_cap, ToolResult};
///
/// #[derive(ToolResult)]
/// struct Comment {
///     #[shape(untrusted(max_tokens = 60))]
///     body: String,
/// }
///
/// #[derive(ToolResult)]
/// struct Issue {
///     #[shape(id)] number: u64,
///     #[shape(untrusted(max_tokens = 30))] title: String,
///     #[shape(nested)] first_comment: Option<Comment>,
/// }
///
/// #[derive(ToolResult)]
/// struct Thread {
///     #[shape(id)] number: u64,
///     #[shape(nested)] comments: Vec<Comment>,
/// }
///
/// assert_eq!(record_cap(Issue::PROJECTION), Some(90));
/// assert_eq!(record_cap(Thread::PROJECTION), None);
/// ```
pub const fn record_cap(projection: &Projection) -> Option<u64> {
    let mut sum = 0u64;
    let mut i = 0;
    while i < projection.fields.len() {
        match projection.fields[i].kind {
            FieldKind::Untrusted {
                max_tokens: Some(n),
            } => sum = sum.saturating_add(n as u64),
            FieldKind::Untrusted { max_tokens: None } => return None,
            _ => {}
        }
        i += 1;
    }
    // Recursion ends: a record type cannot nest itself, at any depth (`nested` on a field of
    // its own type, or a `Vec` of it, does not compile: the nested field's trait bound
    // overflows).
    let mut i = 0;
    while i < projection.nested.len() {
        let nested = &projection.nested[i];
        if nested.list {
            if holds_untrusted(nested.projection) {
                return None;
            }
        } else {
            match record_cap(nested.projection) {
                Some(n) => sum = sum.saturating_add(n),
                None => return None,
            }
        }
        i += 1;
    }
    Some(sum)
}

/// Whether a record of `projection` can show untrusted text, in its own fields or nested.
const fn holds_untrusted(projection: &Projection) -> bool {
    let mut i = 0;
    while i < projection.fields.len() {
        if let FieldKind::Untrusted { .. } = projection.fields[i].kind {
            return true;
        }
        i += 1;
    }
    let mut i = 0;
    while i < projection.nested.len() {
        if holds_untrusted(projection.nested[i].projection) {
            return true;
        }
        i += 1;
    }
    false
}

/// A part of a record whose attacker-controlled tokens no cap bounds, by its path in the
/// record (`comments`, `author.bio`): why [`AttackerBound::per_record`] counts the whole
/// budget for it and the bound is not [`unconditional`](AttackerBound::unconditional).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum Unbounded {
    /// An untrusted field with no `max_tokens`.
    UncappedField(String),
    /// A list of nested records that hold untrusted text: each record's text is capped, but
    /// the list has no element limit, so the caps add up to as much as the data has.
    NestedList(String),
}

impl Unbounded {
    /// The path of the field in the record.
    pub fn path(&self) -> &str {
        match self {
            Unbounded::UncappedField(path) | Unbounded::NestedList(path) => path,
        }
    }
}

impl fmt::Display for Unbounded {
    /// `comments is a list of nested records with untrusted text, which has no element limit`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unbounded::UncappedField(path) => write!(f, "{path} is untrusted text with no cap"),
            Unbounded::NestedList(path) => write!(
                f,
                "{path} is a list of nested records with untrusted text, which has no element \
                 limit"
            ),
        }
    }
}

/// The most attacker-controlled tokens a tool can show in one call: see [`attacker_bound`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AttackerBound {
    /// The budget the bound is computed for, in tokens.
    pub budget: u64,
    /// The most per record: the sum of the untrusted fields' caps, nested records' included;
    /// each part in [`unbounded`](Self::unbounded) counting as the whole budget.
    pub per_record: u64,
    /// Untrusted fields with no cap (nested records' included).
    pub uncapped_fields: u32,
    /// What no cap bounds: uncapped untrusted fields and lists of nested records with
    /// untrusted text, by path. Empty when the caps alone bound a record.
    pub unbounded: Vec<Unbounded>,
    /// The most records one call can show: the budget (every shown record costs at least one
    /// token), or the page size when [`with_max_records`](Self::with_max_records) gave one.
    pub max_records: u64,
    /// The most per call: `min(budget, per_record × max_records)`; 0 with no untrusted field.
    pub per_call: u64,
    /// Whether `per_call` holds whatever the tokenizer does at the seams (see
    /// [`attacker_bound`]): nothing is [`unbounded`](Self::unbounded) and the caps, not the
    /// budget, set the figure.
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
        let unconditional = self.unbounded.is_empty() && by_caps <= self.budget;
        AttackerBound {
            per_call,
            unconditional,
            ..self
        }
    }
}

impl fmt::Display for AttackerBound {
    /// What a review reads: `at most 150 attacker-controlled tokens a call (30 a record × 5
    /// records), whatever the tokenizer does`, or, when a part is unbounded, `at most 2,000
    /// attacker-controlled tokens a call, the budget: no cap bounds a record (comments is a
    /// list of nested records with untrusted text, which has no element limit); this figure
    /// assumes the tokenizer counts no more tokens in a piece of text than in the text
    /// around it`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |n: u64| crate::text::thousands(n);
        if self.per_call == 0 {
            return f.write_str("no attacker-controlled tokens: no field shows untrusted text");
        }
        write!(
            f,
            "at most {} attacker-controlled tokens a call",
            n(self.per_call)
        )?;
        if self.unconditional {
            return write!(
                f,
                " ({} a record × {} records), whatever the tokenizer does",
                n(self.per_record),
                n(self.max_records)
            );
        }
        f.write_str(", the budget: ")?;
        if self.unbounded.is_empty() {
            write!(
                f,
                "the caps allow more ({} a record × {} records)",
                n(self.per_record),
                n(self.max_records)
            )?;
        } else {
            f.write_str("no cap bounds a record (")?;
            for (i, part) in self.unbounded.iter().enumerate() {
                if i > 0 {
                    f.write_str("; ")?;
                }
                write!(f, "{part}")?;
            }
            f.write_str(")")?;
        }
        f.write_str(
            "; this figure assumes the tokenizer counts no more tokens in a piece of text than \
             in the text around it",
        )
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
///    An untrusted list of texts shares its cap: whole items while their tokens fit what
///    the items before them left of it (the first alone over the cap cut at it), so the
///    list contributes at most its cap too.
/// 2. Hence a record contributes at most the sum of its caps ([`record_cap`], computable from
///    `T::PROJECTION` alone), a nested record's (or an `Option` of one) included. A list of
///    nested records with untrusted text has no element limit, so no sum of caps bounds it:
///    such a list, like an uncapped field, counts as the whole budget (step 4) and is named
///    in [`AttackerBound::unbounded`].
/// 3. A call shows at most `budget` records: the budget is spent record by record (each
///    record's tokens are counted on their own and added), and a rendered record is never
///    empty, so it costs at least one token. A tool with a page size can tighten this with
///    [`AttackerBound::with_max_records`].
/// 4. All content shown is part of the rendered output (copied, or expanded by escaping and
///    datamarking, never shortened), and the output fits the budget; so the content cannot
///    carry more tokens than the budget, which is the `budget` term of the `min` and the
///    figure for an unbounded part. This step assumes the tokenizer does not count more
///    tokens in a piece of text than in the text around it; that holds for the tiktoken
///    vocabularies on the adversarial corpus but is not a theorem of BPE. When nothing is
///    unbounded and `per_record × max_records ≤ budget`, steps 1–3 alone give the figure and
///    [`AttackerBound::unconditional`] is true.
///
/// [`prepare`]: super::prepare
/// [`UntrustedStats::attacker_tokens`]: super::UntrustedStats::attacker_tokens
///
/// ```
/// use toolshape::{__seams::untrusted::attacker_bound, ToolResult};
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
///
/// A list of nested records is not bounded by its records' caps, and the bound says so:
///
/// ```
/// use toolshape::{__seams::untrusted::attacker_bound, untrusted::Unbounded, ToolResult};
///
/// #[derive(ToolResult)]
/// struct Comment {
///     #[shape(untrusted(max_tokens = 60))]
///     body: String,
/// }
///
/// #[derive(ToolResult)]
/// struct Thread {
///     #[shape(id)] number: u64,
///     #[shape(untrusted(max_tokens = 30))] labels: Vec<String>,
///     #[shape(nested)] comments: Vec<Comment>,
/// }
///
/// let bound = attacker_bound(Thread::PROJECTION, 2_000).with_max_records(5);
/// assert_eq!(bound.unbounded, [Unbounded::NestedList("comments".into())]);
/// assert_eq!((bound.per_call, bound.unconditional), (2_000, false));
/// assert!(bound.to_string().contains("comments is a list of nested records"));
/// ```
pub fn attacker_bound(projection: &Projection, budget_tokens: usize) -> AttackerBound {
    let budget = budget_tokens as u64;
    let mut parts = Parts::default();
    parts.walk(projection, "");
    let unbounded_parts = u64::try_from(parts.unbounded.len()).unwrap_or(u64::MAX);
    AttackerBound {
        budget,
        per_record: parts
            .capped
            .saturating_add(budget.saturating_mul(unbounded_parts)),
        uncapped_fields: parts.uncapped_fields,
        unbounded: parts.unbounded,
        max_records: budget,
        per_call: 0,
        unconditional: false,
    }
    .settle()
}

/// What a record's untrusted text adds up to: the caps that bound it and the parts no cap
/// bounds.
#[derive(Default)]
struct Parts {
    capped: u64,
    uncapped_fields: u32,
    unbounded: Vec<Unbounded>,
}

impl Parts {
    /// Adds the untrusted text of a record of `projection` at `prefix` (`""`, `author.`).
    fn walk(&mut self, projection: &Projection, prefix: &str) {
        for (field, cap) in projection.untrusted_fields() {
            match cap {
                Some(n) => self.capped = self.capped.saturating_add(u64::from(n)),
                None => {
                    self.uncapped_fields = self.uncapped_fields.saturating_add(1);
                    self.unbounded
                        .push(Unbounded::UncappedField(format!("{prefix}{}", field.name)));
                }
            }
        }
        for nested in projection.nested {
            let path = format!("{prefix}{}", nested.field);
            if !nested.list {
                self.walk(nested.projection, &format!("{path}."));
            } else if holds_untrusted(nested.projection) {
                // The list's records may hold uncapped fields (or lists) of their own: named
                // too, after the list, so a review sees every part no cap bounds.
                let mut inner = Parts::default();
                inner.walk(nested.projection, &format!("{path}."));
                self.uncapped_fields = self.uncapped_fields.saturating_add(inner.uncapped_fields);
                self.unbounded.push(Unbounded::NestedList(path));
                self.unbounded.extend(inner.unbounded);
            }
        }
    }
}
