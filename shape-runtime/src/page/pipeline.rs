//! The core of every call ([`render`]): plan the page, assemble both channels, report.

use super::admit::Size;
use super::envelope::{Frame, Status};
use super::error::too_small;
use super::inputs::{PageInputs, PageSettings, Records};
use super::plan::{Make, Plan};
use super::render::{Layout, RenderRecord};
use super::report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use super::shaped::{ShapeError, Shaped, reads_back};
use super::state::Page;
use crate::budget::channel::PerChannel;
use crate::record::call_env::Channel;
use crate::untrusted::Provenance;
use std::time::Instant;

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
        // A page after others (shown or skipped) was reached through a cursor.
        let mid_walk = settings.shown_before > 0 || settings.skipped_before > 0;
        return Ok(too_small(
            &settings.errors(),
            needs,
            page.counts(0),
            mid_walk,
        ));
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

impl<'p, R: RenderRecord> Page<'p, R> {
    /// Assemble both channels from the same segments, the cursor made. A cursor of the
    /// codec's counts as its size did; one of a tool's own function may not, and a page it
    /// would take over the budget gives records back.
    fn assemble(&self, plan: &Plan) -> (Frame, PerChannel<String>, PerChannel<Size>) {
        let shown = plan.shown();
        let frame = self.frame(plan.shape(), Make::Real);
        // The head states its shared facts of the records shown.
        let envelope = self.envelope(&frame, shown > 0, Some(plan.shape().shown_range()));
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
            status: frame.status,
            tokenizer: s.tokenizer.name().to_owned(),
            budget: s.budget.max_tokens(),
            raw: s.raw.map(|raw| RawSize::measure(raw, s.tokenizer)),
            tokens: ChannelTokens::reported(tokens, s.channels),
            envelope: ChannelTokens::reported(envelope_tokens, s.channels),
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
        }
    }
}
