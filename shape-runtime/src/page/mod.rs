//! One page, in stages: its records in each channel's state (`source`: every entry point
//! comes in here) → notes (facts stated once in the head) → plan (which records the page
//! shows, and which it skips as too large for any page of their own; each rendered and
//! counted once per channel, the envelope sized with its true counts and cursor) →
//! assemble both channels → report. A page that can make no progress within the budget is
//! an error envelope that says which budget it needs; error envelopes are cut to the budget
//! here too ([`error_page`]).
//!
//! The plan is exact and the same on every call: a cursor's, a handle's and a delimiter
//! nonce's tokens depend on their length alone ([`crate::digits`]), so the envelope is sized
//! before any cursor is made, and the same rows at the same budget give the same page.

mod admit;
pub(crate) mod envelope;
mod error;
mod frame;
mod notes;
mod plan;
pub(crate) mod render;
pub mod report;
mod shaped;
mod source;
mod upstream;

pub(crate) use admit::{Admission, Segment, Size};
use error::too_small;
pub(crate) use error::{ErrorSettings, error_page};
pub(crate) use notes::Notes;
pub(crate) use shaped::reads_back;
pub use shaped::{ShapeError, Shaped};
pub(crate) use source::{Source, TypedRows, UseRecords, prepare, shape};
pub(crate) use upstream::UpstreamPlan;

use crate::budget::Budget;
use crate::channel::ChannelPolicy;
use crate::channel::PerChannel;
use crate::cursor::{Continuation, CursorForm, Cursors};
use crate::env::{CallEnv, Channel};
use crate::reference::{Handle, OPEN_RESULT};
use crate::resolve::ResolverStats;
use crate::tokens::Tokenizer;
use crate::untrusted::{Provenance, UntrustedPolicy};
use envelope::{Counts, Frame, LeftOut, Needs, OmitReason, Omitted, Skipped, Status, Words};
use plan::{Ledger, Make, Plan};
use render::{Format, Layout, RenderRecord, Renderer, StructuredForm};
use report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use std::time::Instant;

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
    /// rendering.
    pub(crate) fn reach(&self) -> usize {
        self.budget
            .max_tokens()
            .saturating_add(1)
            .min(self.page_size.map_or(usize::MAX, |p| p.saturating_add(1)))
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

/// The core of every call: plan the page (the ranked records it shows and skips, the
/// envelope sized with its true counts and cursor), assemble both channels, report. The
/// notes were taken when the records' states were made.
pub(crate) fn render<R: RenderRecord>(
    settings: &PageSettings<'_>,
    records: Records<'_, R>,
    layout: &Layout<'_>,
    page: PageInputs<'_>,
    start: Instant,
) -> Result<Shaped, ShapeError> {
    let page = Page::new(settings, &records, layout, page);
    let plan = page.plan()?;
    if let Some(needs) = page.stuck(&plan) {
        return Ok(too_small(&settings.errors(), needs, page.counts(0)));
    }
    let (frame, channels, envelope) = page.assemble(&plan);
    reads_back(&channels.structured).map_err(|message| ShapeError::Render {
        record: layout.name.to_owned(),
        message,
    })?;
    let report = page.report(&plan, &frame, envelope, start);
    report.emit();
    Ok(Shaped::new(
        frame,
        channels.text,
        channels.structured,
        report,
        settings.channels,
    ))
}

/// Whether a JSON text channel marks untrusted values one by one (a tag around each, or a
/// datamark inside), so it differs from the structured channel's JSON.
fn json_text_marks_values(policy: &UntrustedPolicy) -> bool {
    matches!(policy.provenance, Provenance::Tag | Provenance::RandomTag)
        || policy.datamark.is_some()
}

/// One page being made: what it knows, worked out once.
struct Page<'p, R> {
    settings: &'p PageSettings<'p>,
    records: &'p Records<'p, R>,
    layout: &'p Layout<'p>,
    inputs: PageInputs<'p>,
    renderer: Renderer<'p>,
    /// Records matching the query, when known (an upstream with pages to come does not say).
    total: Option<u64>,
    words: Words<'p>,
    skipped_fields: Vec<String>,
    /// The untrusted fields a JSON envelope names (none when provenance is off).
    untrusted: Vec<String>,
    /// The rows form's field names.
    fields: Option<Vec<&'p str>>,
    /// The text channel needs its own rendering unless it is the same JSON.
    text_differs: bool,
    /// Whether the text channel names the fields this view leaves out.
    left_out: bool,
    ledger: std::cell::RefCell<Ledger>,
}

impl<'p, R: RenderRecord> Page<'p, R> {
    fn new(
        settings: &'p PageSettings<'p>,
        records: &'p Records<'p, R>,
        layout: &'p Layout<'p>,
        inputs: PageInputs<'p>,
    ) -> Self {
        let covered_before = settings
            .shown_before
            .saturating_add(settings.skipped_before);
        let reached = covered_before.saturating_add(inputs.given as u64);
        // An upstream with pages still to come gives no total unless the caller knows it.
        let total = match &inputs.upstream {
            Some(plan) if plan.has_next() => settings.total.map(|t| t.max(reached)),
            _ => Some(settings.total.unwrap_or(reached).max(reached)),
        };
        // Rows from an upstream keep its order, as with `keep_order`.
        let keep_order = settings.keep_order || inputs.upstream.is_some();
        let words = Words {
            name: layout.name,
            plural: layout.plural,
            order: layout.order.as_deref().filter(|_| !keep_order),
            query: settings.query,
            lead: inputs.lead,
            details: inputs.details,
            reopen_with: OPEN_RESULT,
            fetch_one: settings.fetch_one,
        };
        let untrusted_paths = layout.untrusted_paths();
        let left_out = match settings.left_out {
            LeftOut::EveryPage => true,
            LeftOut::FirstPage => covered_before == 0,
            LeftOut::Never => false,
        };
        Page {
            settings,
            records,
            layout,
            renderer: Renderer::new(layout),
            total,
            words,
            skipped_fields: envelope::left_out_fields(&layout.skipped),
            untrusted: match settings.untrusted.provenance {
                Provenance::Off => Vec::new(),
                _ => untrusted_paths.clone(),
            },
            fields: (settings.form == StructuredForm::Rows).then(|| layout.field_names()),
            // Under the structured profile no model reads a separate text channel: it is the
            // JSON (an error's text is made apart, with the remedy), so records are rendered
            // and counted once. A JSON text channel differs only where its untrusted values
            // are tagged or datamarked.
            text_differs: settings.channels != ChannelPolicy::Structured
                && (settings.format != Format::Json
                    || !untrusted_paths.is_empty() && json_text_marks_values(settings.untrusted)),
            left_out,
            inputs,
            ledger: Default::default(),
        }
    }

    /// Records in this call's reach (ranked, resolved, each rendered when looked at).
    fn reach(&self) -> usize {
        self.records.rows.structured.len()
    }

    /// The record's id as it shows it, for naming it when it is skipped.
    fn id_text(&self, index: usize) -> Option<String> {
        let field = self.layout.id_field()?;
        let mut out = String::new();
        // The text channel's pass counts nothing: naming the record notices nothing twice.
        self.records.rows.text[index]
            .write_field(field, &mut out, crate::text::TextMode::Prose)
            .ok()?;
        Some(out)
    }

    /// The record's place in the whole result (1-based).
    fn place(&self, index: usize) -> u64 {
        let s = self.settings;
        s.shown_before
            .saturating_add(s.skipped_before)
            .saturating_add(index as u64 + 1)
    }

    /// The record at `index` rendered on each channel and counted once per channel; `lead`:
    /// with the separator that follows another record (`\n,{` in the JSON forms).
    fn segment(&self, index: usize, lead: bool) -> Result<Segment, ShapeError> {
        let s = self.settings;
        let render_err = |message: String| ShapeError::Render {
            record: self.layout.name.to_owned(),
            message,
        };
        let position = usize::from(lead);
        let structured = self
            .renderer
            .segment(
                &self.records.rows.structured[index],
                position,
                Format::Json,
                s.form,
            )
            .map_err(render_err)?;
        let text = match self.text_differs {
            true => Some(
                self.renderer
                    .segment(&self.records.rows.text[index], position, s.format, s.form)
                    .map_err(render_err)?,
            ),
            false => None,
        };
        // The text channel's JSON differs from the structured one only around untrusted
        // values: what they share is tokenized once.
        let (ts, tt) = match text.as_deref() {
            None => {
                let ts = s.tokenizer.count(&structured);
                (ts, ts)
            }
            Some(t) if s.format == Format::Json => {
                crate::tokens::count_pair(s.tokenizer, &structured, t)
            }
            Some(t) => (s.tokenizer.count(&structured), s.tokenizer.count(t)),
        };
        Ok(Segment {
            structured,
            text,
            tokens: PerChannel {
                structured: ts,
                text: tt,
            },
        })
    }

    /// Assemble both channels from the same segments, the cursor made. A cursor of the
    /// codec's counts as its size did; one of a tool's own function may not, and a page it
    /// would take over the budget gives records back.
    fn assemble(&self, plan: &Plan) -> (Frame, PerChannel<String>, PerChannel<Size>) {
        let shown = plan.shown();
        let frame = self.frame(plan.shape(), Make::Real);
        let envelope = self.envelope(&frame, shown > 0);
        let join = |channel: Channel| -> String {
            let (head, tail) = match channel {
                Channel::Structured => (&envelope.head.structured, &envelope.tail.structured),
                Channel::Text => (&envelope.head.text, &envelope.tail.text),
            };
            let mut out = String::with_capacity(head.len() + tail.len() + 64 * shown);
            out.push_str(head);
            for s in plan.admission.shown() {
                out.push_str(s.on(channel));
            }
            out.push_str(tail);
            out
        };
        let structured = join(Channel::Structured);
        let text = if self.text_differs {
            join(Channel::Text)
        } else {
            structured.clone()
        };
        (frame, PerChannel { structured, text }, envelope.size)
    }

    /// The report's counts for a page showing `shown` records (none skipped).
    fn counts(&self, shown: usize) -> RecordCounts {
        let s = self.settings;
        let reached = s
            .shown_before
            .saturating_add(s.skipped_before)
            .saturating_add(self.inputs.given as u64);
        let total = self.total.unwrap_or(reached);
        RecordCounts {
            total,
            given: self.inputs.given,
            shown,
            skipped: 0,
            omitted: total.saturating_sub(s.shown_before.saturating_add(shown as u64)),
        }
    }

    /// The report: sizes, counts, the cut and why, and the diagnostics of the records shown
    /// (what rendering noticed up to the first record not shown).
    fn report(
        &self,
        plan: &Plan,
        frame: &Frame,
        envelope: PerChannel<Size>,
        start: Instant,
    ) -> Report {
        let s = self.settings;
        let shown = plan.shown();
        let covered = plan.covered();
        let ledger = self.ledger.borrow();
        let diagnostics = match ledger.noticed_before.get(covered) {
            Some(before) => before.clone(),
            None => self.records.counting.diagnostics(),
        };
        let envelope_tokens = envelope.tokens();
        let tokens = envelope_tokens.plus(plan.admission.tokens());
        Report {
            tool: s.tool.to_owned(),
            tokenizer: s.tokenizer.name().to_owned(),
            budget: s.budget.max_tokens(),
            raw: s.raw.map(|raw| RawSize::measure(raw, s.tokenizer)),
            tokens: ChannelTokens {
                text: tokens.text,
                structured: tokens.structured,
            },
            envelope: ChannelTokens {
                text: envelope_tokens.text,
                structured: envelope_tokens.structured,
            },
            records: RecordCounts {
                skipped: plan.skips.len(),
                omitted: frame
                    .omitted
                    .count
                    .unwrap_or_else(|| self.counts(shown).omitted),
                ..self.counts(shown)
            },
            cut: plan
                .cut
                .filter(|_| frame.status == Status::Partial)
                .map(|reason| Cut {
                    index: covered,
                    reason,
                }),
            resolvers: self.inputs.resolvers.clone(),
            diagnostics,
            tokenized: ledger.tokenized,
            over_budget: plan.admission.over_budget(envelope),
            duration_us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            nonce: (s.untrusted.provenance == Provenance::RandomTag && self.layout.has_untrusted())
                .then(|| self.records.nonce.to_owned()),
            lookups: Vec::new(),
        }
    }
}
