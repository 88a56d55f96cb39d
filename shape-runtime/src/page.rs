//! One page, in stages: notes (facts stated once in the head) → plan (which records the page
//! shows, and which it skips as too large for any page of their own; each rendered and
//! counted once per channel, the envelope sized with its true counts and cursor) →
//! assemble both channels → report. A page that can make no progress within the budget is
//! an error envelope that says which budget it needs; error envelopes are cut to the budget
//! here too ([`error_page`]).
//!
//! The plan is exact and the same on every call: a cursor's, a handle's and a delimiter
//! nonce's tokens depend on their length alone ([`crate::digits`]), so the envelope is sized
//! before any cursor is made, and the same rows at the same budget give the same page.

use crate::admit::{Admission, Segment, Size};
use crate::budget::Budget;
use crate::channel::ChannelPolicy;
use crate::channel::PerChannel;
use crate::cursor::{Continuation, CursorForm, Cursors, UpstreamPosition};
use crate::env::{CallEnv, Channel, DateStyle};
use crate::envelope::{
    self, Counts, Frame, LeftOut, Needs, OmitReason, Omitted, Skipped, Status, Words,
};
use crate::reference::{Handle, OPEN_RESULT};
use crate::render::{Format, Layout, RenderRecord, Renderer, StructuredForm};
use crate::report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use crate::resolve::ResolverStats;
use crate::shaped::{ShapeError, Shaped};
use crate::tokens::Tokenizer;
use crate::untrusted::{Provenance, UntrustedPolicy};
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
    pub fn errors(&self) -> ErrorSettings<'_> {
        ErrorSettings {
            tool: self.tool,
            tokenizer: self.tokenizer,
            budget: self.budget,
            format: self.format,
            channels: self.channels,
        }
    }
}

/// The upstream pages of one call, checked against its rows and cursor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UpstreamPlan<'c> {
    /// Each page's continuation and how many of the rows it gave, in order.
    pub pages: Vec<(Option<&'c str>, usize)>,
    /// The upstream's continuation after the last page.
    pub next: Option<&'c str>,
    /// Rows at the start that earlier answers showed.
    pub skip: usize,
}

impl UpstreamPlan<'_> {
    /// Where the next answer starts after `consumed` rows from the first row not skipped;
    /// `None` when the upstream has nothing after them.
    pub fn after(&self, consumed: usize) -> Option<UpstreamPosition> {
        let mut at = self.skip.saturating_add(consumed);
        for (page, len) in &self.pages {
            if at < *len {
                return Some(UpstreamPosition {
                    page: page.map(str::to_owned),
                    skip: at as u64,
                });
            }
            at -= len;
        }
        self.next.map(|page| UpstreamPosition {
            page: Some(page.to_owned()),
            skip: 0,
        })
    }

    /// Whether the upstream has pages after these rows, so the whole count is unknown.
    pub fn has_next(&self) -> bool {
        self.next.is_some()
    }

    /// The longest position a cursor of this call can carry, to reserve room for it.
    pub fn widest(&self) -> UpstreamPosition {
        let page = self
            .pages
            .iter()
            .filter_map(|(page, _)| *page)
            .chain(self.next)
            .max_by_key(|page| page.len());
        UpstreamPosition {
            page: page.map(str::to_owned),
            skip: self
                .pages
                .iter()
                .fold(0u64, |sum, (_, len)| sum.saturating_add(*len as u64)),
        }
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

/// Facts the text channel states once in its head, and how its values are written because
/// of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notes {
    /// The head's note (`«…» is untrusted text from …; dates are in 2026`).
    pub line: Option<String>,
    /// `Feb 11` when every date shares the year the note states.
    pub date_style: DateStyle,
    /// Untrusted values wrapped in `«…»`, their sources named once in the note.
    pub compact_marks: bool,
    /// A JSON text channel names its untrusted fields once in the envelope (`"untrusted"`)
    /// instead of tagging each value.
    pub named_fields: bool,
}

impl Notes {
    /// No notes: every value written in full.
    pub fn none() -> Self {
        Notes {
            line: None,
            date_style: DateStyle::Iso,
            compact_marks: false,
            named_fields: false,
        }
    }

    /// The notes for `records` (the page's reach) in the text `format`.
    pub fn of<R: RenderRecord>(
        format: Format,
        policy: &UntrustedPolicy,
        layout: &Layout<'_>,
        records: &[R],
        tool: &str,
    ) -> Self {
        let mut notes = Notes::none();
        if format == Format::Json {
            // The compact form of a JSON text channel: the envelope's `untrusted` key, as on
            // the structured channel, at no cost a value (a tag is about 14 tokens).
            notes.named_fields =
                policy.provenance == Provenance::Compact && !layout.untrusted_paths().is_empty();
            return notes;
        }
        let mut parts: Vec<String> = Vec::new();
        // Nested records' untrusted fields too (`comments.body`): their values get the same
        // marks, so the note names where each comes from.
        let paths = layout.untrusted_paths();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        if let Some(line) = crate::untrusted::note_line(policy, tool, &paths) {
            notes.compact_marks = true;
            parts.push(line);
        }
        if let Some(year) = shared_year(records, layout) {
            notes.date_style = DateStyle::MonthDay { year };
            parts.push(format!("dates are in {year}"));
        }
        notes.line = (!parts.is_empty()).then(|| parts.join("; "));
        notes
    }
}

/// The year every parsed date of the records shares, if there is at least one date. The
/// records are rendered on the structured channel, where dates are ISO.
fn shared_year<R: RenderRecord>(records: &[R], layout: &Layout<'_>) -> Option<u16> {
    let dates: Vec<usize> = layout.date_fields().collect();
    if dates.is_empty() {
        return None;
    }
    let mut year = None;
    let mut buf = String::new();
    for record in records {
        for &field in &dates {
            buf.clear();
            record
                .write_field(field, &mut buf, crate::text::TextMode::Prose)
                .ok()?;
            if crate::date::iso_date(&buf).is_none() {
                continue; // null or unparsed: written as given either way
            }
            let y = crate::view::date_year(&buf)?;
            match year {
                None => year = Some(y),
                Some(seen) if seen != y => return None,
                Some(_) => {}
            }
        }
    }
    year
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
    crate::shaped::reads_back(&channels.structured).map_err(|message| ShapeError::Render {
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

/// The error envelope of a page that can show or skip nothing within the budget: the budget
/// that would show its first record, or hold its envelope at all.
///
/// What it needs comes first (`60 tokens needed: …`), so the shortest cut of the message still
/// says it.
fn too_small(settings: &ErrorSettings<'_>, needs: Needs, records: RecordCounts) -> Shaped {
    let b = settings.budget;
    let (n, limit, unit) = match needs {
        Needs::Tokens(n) => (n, b.max_tokens(), "tokens"),
        Needs::Bytes(n) => (n, b.max_bytes().unwrap_or(0), "bytes"),
        Needs::Lines(n) => (n, b.max_lines().unwrap_or(0), "lines"),
    };
    let (n, limit) = (
        envelope::thousands(n as u64),
        envelope::thousands(limit as u64),
    );
    let what = match needs {
        Needs::Tokens(_) => format!(
            "{n} {unit} needed: the budget of {limit} {unit} is too small for any answer of {}",
            settings.tool
        ),
        _ => format!(
            "{n} {unit} needed: the limit of {limit} {unit} is too small for any answer of {}",
            settings.tool
        ),
    };
    let remedy = match needs {
        Needs::Tokens(_) => format!("raise the budget to at least {n} tokens"),
        _ => format!("raise the limit to at least {n} {unit}"),
    };
    error_page_with(settings, &what, &remedy, records)
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

/// What a page decided, as planning goes: the records it shows (rendered and counted), the
/// records it skips, where it stops and why.
struct Plan {
    admission: Admission,
    /// Records skipped as too large for any page of their own, in order; the first `prefix`
    /// come before the first record shown, the rest after the last.
    skips: Vec<Skipped>,
    prefix: usize,
    /// Why the page stops after the records it covers, when records remain.
    cut: Option<OmitReason>,
    /// The cursor's form.
    form: CursorForm,
}

/// What rendering records for a page has done: records tokenized, what rendering had noticed
/// before each (by index in the reach: the report's diagnostics are those before the first
/// record not covered; a skipped record's are taken back), and a record rendered, counted and
/// given back, kept so it is not rendered again (its index, whether it was rendered to
/// follow another record, the segment).
#[derive(Default)]
struct Ledger {
    tokenized: usize,
    noticed_before: Vec<crate::env::Diagnostics>,
    pending: Option<(usize, bool, Segment)>,
}

impl Plan {
    fn shown(&self) -> usize {
        self.admission.len()
    }

    /// Records covered from the page's start: shown or skipped.
    fn covered(&self) -> usize {
        self.shown() + self.skips.len()
    }

    fn shape(&self) -> Shape<'_> {
        Shape {
            start: 0,
            shown_ahead: 0,
            skipped_ahead: 0,
            shown: self.shown(),
            skips: &self.skips,
            prefix: self.prefix,
            cut: self.cut,
            form: self.form,
        }
    }
}

/// The parts of a page its envelope reads: where it starts, what it shows and skips, where
/// it stops and why, the cursor's form.
#[derive(Clone, Copy)]
struct Shape<'s> {
    /// Where the page starts in this call's reach: 0, or the record a page of its own is
    /// sized for.
    start: usize,
    /// Records shown and skipped in this call's reach before `start`.
    shown_ahead: usize,
    skipped_ahead: usize,
    shown: usize,
    skips: &'s [Skipped],
    prefix: usize,
    cut: Option<OmitReason>,
    form: CursorForm,
}

impl Shape<'_> {
    /// The index in the reach of the first record the page does not cover.
    fn end(&self) -> usize {
        self.start + self.shown + self.skips.len()
    }
}

/// Whether a cursor is made for the answer, or sized only.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Make {
    Sized,
    Real,
}

/// An envelope on both channels: the text before and after the records, and its size.
struct Envelope {
    head: PerChannel<String>,
    tail: PerChannel<String>,
    size: PerChannel<Size>,
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

    /// The envelope of a page of `shape`, its cursor sized or made.
    fn frame(&self, shape: Shape<'_>, make: Make) -> Frame {
        let s = self.settings;
        let shown_before = s.shown_before.saturating_add(shape.shown_ahead as u64);
        let skipped_before = s.skipped_before.saturating_add(shape.skipped_ahead as u64);
        let shown_total = shown_before.saturating_add(shape.shown as u64);
        let skipped_total = skipped_before.saturating_add(shape.skips.len() as u64);
        let covered_after = shown_total.saturating_add(skipped_total);
        // With no total, more remain: in this upstream page or in the upstream's next.
        let more = self.total.is_none_or(|total| covered_after < total);
        let reason = if more {
            Some(shape.cut.unwrap_or(OmitReason::PageSize))
        } else {
            (skipped_total > 0).then_some(OmitReason::RecordTooLarge)
        };
        let next = if more {
            self.next(shape, shown_total, skipped_total, make)
        } else {
            None
        };
        Frame::for_page(
            Counts {
                shown: shape.shown as u64,
                shown_before,
                skipped_before,
                skipped_first: shape.prefix as u64,
                total: self.total,
            },
            self.words,
            Omitted {
                count: self.total.map(|total| total.saturating_sub(shown_total)),
                reason,
                fields: self.skipped_fields.clone(),
                too_large: skipped_total,
                handle: self.inputs.handle.map(|h| h.to_string()),
            },
            next,
            shape.skips,
        )
    }

    /// The `next` cursor of a page of `shape` (sized or made): after the last record it
    /// covers, shown or skipped.
    fn next(&self, shape: Shape<'_>, shown: u64, skipped: u64, make: Make) -> Option<String> {
        let cursors = self.settings.cursor?;
        let end = shape.end();
        let order = self.layout.rank_order;
        let c = if let Some(plan) = &self.inputs.upstream {
            // Nothing of this upstream page left to show: go on to the next.
            let at = plan.after(end)?;
            Continuation {
                rank: None,
                id: None,
                shown,
                skipped,
                order,
                upstream: Some(at),
                handle: self.inputs.handle,
                form: shape.form,
            }
        } else {
            let record = self.records.rows.structured.get(end.checked_sub(1)?)?;
            let keyset = self.inputs.keyset;
            Continuation {
                rank: record.rank_key().filter(|_| keyset),
                id: record.id_key().filter(|_| keyset),
                shown,
                skipped,
                order,
                upstream: None,
                handle: self.inputs.handle,
                form: shape.form,
            }
        };
        Some(match make {
            Make::Sized => cursors.sized(c),
            Make::Real => cursors.make(c),
        })
    }

    fn head(&self, frame: &Frame, channel: Channel, has_records: bool) -> String {
        let note = self.records.notes.line.as_deref();
        match (channel, self.settings.format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => envelope::json_head(
                frame,
                has_records,
                envelope::JsonHead {
                    untrusted: &self.untrusted,
                    fields: self.fields.as_deref(),
                },
            ),
            (Channel::Text, Format::Prose) => envelope::text_head(frame, note),
            (Channel::Text, Format::Table) => {
                let mut head = envelope::text_head(frame, note);
                head.push_str(&self.renderer.table_header());
                head
            }
        }
    }

    fn tail(&self, frame: &Frame, channel: Channel) -> String {
        match (channel, self.settings.format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => envelope::json_tail(frame),
            (Channel::Text, _) => envelope::text_tail(
                frame,
                self.layout.plural,
                self.words.reopen_with,
                self.left_out,
            ),
        }
    }

    /// The envelope of `frame` on each channel: its text and what it takes.
    fn envelope(&self, frame: &Frame, has_records: bool) -> Envelope {
        let tok = self.settings.tokenizer;
        let part = |channel| {
            let head = self.head(frame, channel, has_records);
            let tail = self.tail(frame, channel);
            let size = Size::of(&head, tok.count(&head)).plus(Size::of(&tail, tok.count(&tail)));
            (head, tail, size)
        };
        let (sh, st, ss) = part(Channel::Structured);
        let (th, tt, ts) = if self.text_differs {
            part(Channel::Text)
        } else {
            (sh.clone(), st.clone(), ss)
        };
        Envelope {
            head: PerChannel {
                structured: sh,
                text: th,
            },
            tail: PerChannel {
                structured: st,
                text: tt,
            },
            size: PerChannel {
                structured: ss,
                text: ts,
            },
        }
    }

    /// The size of a page of `shape` around its records, its cursor sized.
    fn envelope_size(&self, shape: Shape<'_>) -> PerChannel<Size> {
        let has_records = shape.shown > 0;
        self.envelope(&self.frame(shape, Make::Sized), has_records)
            .size
    }

    /// Reserve: an envelope at least as large as any this page can have while it skips
    /// nothing, for admitting records without sizing the envelope each time: the longest
    /// counts (none shown, or every reachable record shown) and the widest signed cursor any
    /// record of the reach gives. Planning checks the page it ends with exactly.
    fn reserve(&self) -> PerChannel<Size> {
        let reach = self.reach();
        let cut = Some(OmitReason::ResultBudget);
        let shapes = [0, reach].map(|shown| Shape {
            start: 0,
            shown_ahead: 0,
            skipped_ahead: 0,
            shown,
            skips: &[],
            prefix: 0,
            cut,
            form: CursorForm::Signed,
        });
        let widest = self.widest_cursor();
        let mut reserve = PerChannel::<Size>::default();
        for shape in shapes {
            let mut frame = self.frame(shape, Make::Sized);
            if let Some(cursor) = &widest {
                frame.next = Some(cursor.clone());
                if frame.way_on.is_none() {
                    frame.way_on = Some(envelope::MORE.to_owned());
                }
            }
            let size = self.envelope(&frame, shape.shown > 0).size;
            reserve.structured = max_size(reserve.structured, size.structured);
            reserve.text = max_size(reserve.text, size.text);
        }
        reserve
    }

    /// The widest signed cursor a page of this call's reach can carry, sized.
    fn widest_cursor(&self) -> Option<String> {
        let cursors = self.settings.cursor?;
        let s = self.settings;
        let shown = self
            .total
            .unwrap_or(s.shown_before.saturating_add(self.inputs.given as u64));
        let order = self.layout.rank_order;
        let base = Continuation {
            rank: None,
            id: None,
            shown,
            skipped: s.skipped_before,
            order,
            upstream: None,
            handle: self.inputs.handle,
            form: CursorForm::Signed,
        };
        if let Some(plan) = &self.inputs.upstream {
            return Some(cursors.sized(Continuation {
                upstream: Some(plan.widest()),
                ..base
            }));
        }
        let keyset = self.inputs.keyset;
        let rows = self.records.rows.structured;
        let of = |record: &'p R| Continuation {
            rank: record.rank_key().filter(|_| keyset),
            id: record.id_key().filter(|_| keyset),
            ..base.clone()
        };
        if !keyset || !cursors.can_hold() {
            return rows.first().map(|r| cursors.sized(of(r)));
        }
        // Sizing is length arithmetic for the codec's cursors: every record is looked at.
        rows.iter()
            .map(|r| cursors.sized(of(r)))
            .max_by_key(String::len)
    }

    /// Where a page whose last record is at `index`, having shown `shown`, is cut, and why.
    fn cut_after(&self, index: usize, shown: usize) -> Option<OmitReason> {
        let next = index + 1;
        let reach = self.reach();
        if self.settings.page_size.is_some_and(|p| shown >= p) && next < self.inputs.given {
            Some(OmitReason::PageSize)
        } else if next < reach || reach < self.inputs.given {
            Some(OmitReason::ResultBudget)
        } else {
            None
        }
    }

    /// Plan: records in rank order, each rendered and counted once per channel. A record is
    /// shown while the page with it fits; one that does not is left to the next page, unless
    /// no page of its own could show it either, when it is skipped (and named). Records
    /// skipped come only before the first shown or after the last, so the places shown are
    /// one range.
    fn plan(&self) -> Result<Plan, ShapeError> {
        let reserve = self.reserve();
        let mut plan = Plan {
            admission: Admission::new(self.settings.budget, self.settings.channels.held(), reserve),
            skips: Vec::new(),
            prefix: 0,
            cut: None,
            form: CursorForm::Signed,
        };
        let mut from = 0;
        let mut fast = true;
        // Each pass gives back a record, so passes are bounded by the reach; the bound is
        // kept as a guard (a page never plans forever, whatever a tokenizer counts).
        for _ in 0..=self.reach() + 1 {
            self.plan_from(&mut plan, from, fast)?;
            // The page as planned, checked exactly: admitting against the reserve may have
            // let in a record the real envelope has no room for (the reserve is an estimate
            // of the widest envelope, not a bound on every tokenizer's count).
            if plan.admission.fits_with(self.envelope_size(plan.shape())) || plan.shown() == 0 {
                return Ok(plan);
            }
            let index = plan.prefix + plan.shown() - 1;
            // Given back with anything skipped after it: planning goes on from it, exactly.
            plan.skips.truncate(plan.prefix);
            if let Some(segment) = plan.admission.pop() {
                self.ledger.borrow_mut().pending = Some((index, plan.shown() > 0, segment));
            }
            plan.cut = None;
            from = index;
            fast = false;
        }
        while plan.admission.pop().is_some() {}
        plan.skips.clear();
        Ok(plan)
    }

    /// Plans from the record at `from` until the page stops; `fast` admits against the
    /// reserve until the first record it refuses.
    fn plan_from(&self, plan: &mut Plan, from: usize, mut fast: bool) -> Result<(), ShapeError> {
        let reach = self.reach();
        let mut i = from;
        loop {
            if i >= reach {
                plan.cut = (reach < self.inputs.given).then_some(OmitReason::ResultBudget);
                return Ok(());
            }
            let suffix = plan.skips.len() > plan.prefix;
            if !suffix && self.settings.page_size.is_some_and(|p| plan.shown() >= p) {
                plan.cut = Some(OmitReason::PageSize);
                return Ok(());
            }
            // A record after another is rendered with the separator before it (`\n,{`).
            let lead = plan.shown() > 0;
            let segment = self.rendered(i, lead)?;
            if !suffix {
                if fast && plan.skips.is_empty() {
                    match plan.admission.offer(segment) {
                        Ok(()) => {
                            i += 1;
                            continue;
                        }
                        Err((back, _)) => {
                            fast = false;
                            self.ledger.borrow_mut().pending = Some((i, lead, back));
                            continue;
                        }
                    }
                }
                // The page with this record shown too.
                let shown = plan.shown() + 1;
                let shape = Shape {
                    shown,
                    cut: self.cut_after(i, shown),
                    ..plan.shape()
                };
                if let Some(form) = self.fitting_form(plan, shape, Some(&segment)) {
                    plan.form = form;
                    plan.admission.push(segment);
                    i += 1;
                    continue;
                }
                // Not with a cursor; but as the result's last page, with every record left
                // and no cursor, it may fit.
                let last = Shape {
                    shown: plan.shown() + (reach - i),
                    cut: None,
                    ..plan.shape()
                };
                if let Some(rest) = self.last_page(plan, None, last, i, &segment)? {
                    plan.admission.push(segment);
                    for s in rest {
                        plan.admission.push(s);
                    }
                    plan.cut = None;
                    return Ok(());
                }
            }
            // Not on this page. On a page of its own, with everything that page must carry?
            let needs = self.own_page(plan, i, &segment, lead)?;
            let Some(needs) = needs else {
                self.ledger.borrow_mut().pending = Some((i, lead, segment));
                plan.cut = Some(OmitReason::ResultBudget);
                return Ok(());
            };
            // No page can show it: skip it, named, if this page has room to say so.
            plan.skips.push(Skipped {
                id: self.id_text(i),
                place: self.place(i),
                needs,
            });
            let prefix = if plan.shown() == 0 {
                plan.skips.len()
            } else {
                plan.prefix
            };
            let shape = Shape {
                prefix,
                cut: self.cut_after(i, plan.shown()),
                ..plan.shape()
            };
            match self.fitting_form(plan, shape, None) {
                Some(form) => {
                    plan.form = form;
                    plan.prefix = prefix;
                    // Only records shown count in the report's diagnostics.
                    if let Some(before) = self.ledger.borrow().noticed_before.get(i) {
                        self.records.counting.restore_diagnostics(before.clone());
                    }
                    i += 1;
                }
                None => {
                    plan.skips.pop();
                    self.ledger.borrow_mut().pending = Some((i, lead, segment));
                    plan.cut = Some(OmitReason::ResultBudget);
                    return Ok(());
                }
            }
        }
    }

    /// The record at `index` rendered on each channel and counted once per channel, to
    /// follow another record (`lead`) or not; the one kept from before when it matches.
    fn rendered(&self, index: usize, lead: bool) -> Result<Segment, ShapeError> {
        let mut ledger = self.ledger.borrow_mut();
        if let Some((kept, kept_lead, segment)) = ledger.pending.take()
            && kept == index
            && kept_lead == lead
        {
            return Ok(segment);
        }
        let counting = self.records.counting;
        if index == ledger.noticed_before.len() {
            ledger.noticed_before.push(counting.diagnostics());
            ledger.tokenized += 1;
            drop(ledger);
            return self.segment(index, lead);
        }
        drop(ledger);
        // Rendered before in the other form: what it notices was counted then.
        let before = counting.diagnostics();
        let segment = self.segment(index, lead);
        counting.restore_diagnostics(before);
        segment
    }

    /// The form of cursor with which a page of `shape` (and `more`, a record it also shows)
    /// fits: signed when that fits, else held when that does; `None` when neither does.
    fn fitting_form(
        &self,
        plan: &Plan,
        shape: Shape<'_>,
        more: Option<&Segment>,
    ) -> Option<CursorForm> {
        let fits = |form| {
            let envelope = self.envelope_size(Shape { form, ..shape });
            match more {
                Some(segment) => plan.admission.would_fit_with(envelope, segment),
                None => plan.admission.fits_with(envelope),
            }
        };
        if fits(CursorForm::Signed) {
            return Some(CursorForm::Signed);
        }
        let holds = self.settings.cursor.is_some_and(Cursors::can_hold);
        (holds && fits(CursorForm::Held)).then_some(CursorForm::Held)
    }

    /// Whether the record at `index` fits a page of its own — the page the next call would
    /// give starting with it, alone, with the shortest cursor —: `None` when it does, else
    /// what that page needs, on the limit it exceeds. `segment` was rendered to follow
    /// another record when `lead`; first on a page it has no separator, which takes no more
    /// tokens, so only a record that does not fit with one is rendered again without.
    fn own_page(
        &self,
        plan: &Plan,
        index: usize,
        segment: &Segment,
        lead: bool,
    ) -> Result<Option<Needs>, ShapeError> {
        let shape = Shape {
            start: index,
            shown_ahead: plan.shown(),
            skipped_ahead: plan.skips.len(),
            shown: 1,
            skips: &[],
            prefix: 0,
            cut: self.cut_after(index, 1),
            form: if self.settings.cursor.is_some_and(Cursors::can_hold) {
                CursorForm::Held
            } else {
                CursorForm::Signed
            },
        };
        let envelope = self.envelope_size(shape);
        let alone = Admission::new(
            self.settings.budget,
            self.settings.channels.held(),
            envelope,
        );
        if alone.would_fit_with(envelope, segment) {
            return Ok(None);
        }
        let first = if lead {
            let counting = self.records.counting;
            let before = counting.diagnostics();
            let first = self.segment(index, false);
            counting.restore_diagnostics(before);
            let first = first?;
            if alone.would_fit_with(envelope, &first) {
                return Ok(None);
            }
            Some(first)
        } else {
            None
        };
        let first = first.as_ref().unwrap_or(segment);
        // Or as the result's last page: it and every record after it, with no cursor.
        let last = Shape {
            shown: self.reach() - index,
            cut: None,
            form: CursorForm::Signed,
            ..shape
        };
        if self
            .last_page(plan, Some(&alone), last, index, first)?
            .is_some()
        {
            return Ok(None);
        }
        Ok(Some(alone.needs_with(envelope, first.size())))
    }

    /// The records after `from` to the end of the result, rendered, when a page of `last`
    /// (with every record from `from` on, no cursor: the result's last page) fits after the
    /// records `base` admitted (this plan's when `None`), `first` being `from`'s segment.
    /// `None` when they do not fit or the page could not be the last (records beyond the
    /// reach or a page size, more to come); what rendering them noticed is then taken back.
    /// Records are rendered only while they may fit: the last page saves only its cursor
    /// and a few words, so with more records left than that room has tokens none is.
    fn last_page(
        &self,
        plan: &Plan,
        base: Option<&Admission>,
        last: Shape<'_>,
        from: usize,
        first: &Segment,
    ) -> Result<Option<Vec<Segment>>, ShapeError> {
        let reach = self.reach();
        let after = last.shown - (reach - from);
        if reach < self.inputs.given
            || self.settings.page_size.is_some_and(|p| last.shown > p)
            || self.frame(last, Make::Sized).next.is_some()
        {
            return Ok(None);
        }
        let envelope = self.envelope_size(last);
        let base = base.unwrap_or(&plan.admission);
        let room = base.room_with(envelope, first);
        let left = reach - from - 1;
        if room < left {
            return Ok(None);
        }
        let counting = self.records.counting;
        let (before, noticed, tokenized) = {
            let ledger = self.ledger.borrow();
            (
                counting.diagnostics(),
                ledger.noticed_before.len(),
                ledger.tokenized,
            )
        };
        let mut rest = Vec::with_capacity(left);
        let mut more = first.size();
        if !base.fits_more(envelope, more) {
            return Ok(None);
        }
        let mut fits = true;
        for index in from + 1..reach {
            let segment = self.rendered(index, after + (index - from) > 0)?;
            more = more.plus(segment.size());
            rest.push(segment);
            if !base.fits_more(envelope, more) {
                fits = false;
                break;
            }
        }
        if fits {
            return Ok(Some(rest));
        }
        // Not shown: what rendering them noticed, and their count, are taken back.
        let mut ledger = self.ledger.borrow_mut();
        ledger.noticed_before.truncate(noticed.max(from + 1));
        ledger.tokenized = tokenized;
        counting.restore_diagnostics(before);
        Ok(None)
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

    /// Whether the plan makes no progress (it shows and skips nothing though records or an
    /// envelope remain), and then what the smallest progress needs.
    fn stuck(&self, plan: &Plan) -> Option<Needs> {
        if plan.covered() > 0 {
            return None;
        }
        if self.reach() == 0 {
            // No record to show: only the envelope must fit.
            let envelope = self.envelope_size(plan.shape());
            return (!plan.admission.fits_with(envelope))
                .then(|| plan.admission.needs_with(envelope, PerChannel::default()));
        }
        // What shows the first record: a page of it with the shortest cursor, or the last
        // page with every record and no cursor, whichever needs less. (A page that skips it
        // needs less still, but shows nothing: where that fits, planning skips it.)
        let ledger = self.ledger.borrow();
        let segment = match &ledger.pending {
            Some((0, _, segment)) => segment,
            _ => return None,
        };
        let form = if self.settings.cursor.is_some_and(Cursors::can_hold) {
            CursorForm::Held
        } else {
            CursorForm::Signed
        };
        let shape = Shape {
            shown: 1,
            cut: self.cut_after(0, 1),
            form,
            ..plan.shape()
        };
        let need = plan
            .admission
            .needs_with(self.envelope_size(shape), segment.size());
        // Or the result's last page: every record, no cursor.
        let reach = self.reach();
        let last = Shape {
            shown: reach,
            cut: None,
            form,
            ..plan.shape()
        };
        if reach < self.inputs.given
            || self.settings.page_size.is_some_and(|p| reach > p)
            || self.frame(last, Make::Sized).next.is_some()
        {
            return Some(need);
        }
        let mut rest = Vec::with_capacity(reach.saturating_sub(1));
        for index in 1..reach {
            rest.push(self.segment(index, true).ok()?);
        }
        let all = rest
            .iter()
            .fold(segment.size(), |sum, s| sum.plus(s.size()));
        Some(need.least(plan.admission.needs_with(self.envelope_size(last), all)))
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

fn max_size(a: Size, b: Size) -> Size {
    Size {
        tokens: a.tokens.max(b.tokens),
        bytes: a.bytes.max(b.bytes),
        breaks: a.breaks.max(b.breaks),
    }
}

/// What an error envelope reads of its tool.
pub(crate) struct ErrorSettings<'a> {
    pub tool: &'a str,
    pub tokenizer: &'a dyn Tokenizer,
    pub budget: Budget,
    pub format: Format,
    pub channels: ChannelPolicy,
}

/// An error envelope: what happened and what to do instead, held to the budget.
///
/// Both parts are cleaned as echoed text is (invisible characters removed, each quoted piece
/// cut to 40 characters). When the whole message does not fit, it is cut by priority: the
/// rest of what happened gives way first (its first clause stays), then the end of the
/// remedy, then the end of the first clause; each cut is marked `…`. When not even the bare
/// envelope fits, the first clause is kept whole and the report says the budget was too
/// small for any answer (`over_budget`).
pub(crate) fn error_page(s: &ErrorSettings<'_>, what: &str, remedy: &str) -> Shaped {
    error_page_with(s, what, remedy, RecordCounts::default())
}

/// [`error_page`], its report counting `records` (the records a page that could not answer
/// had).
fn error_page_with(
    s: &ErrorSettings<'_>,
    what: &str,
    remedy: &str,
    records: RecordCounts,
) -> Shaped {
    // Each part cleaned on its own, so a stray quote echoed in `what` cannot make the
    // remedy read as part of a quoted piece and be cut.
    let clean = crate::untrusted::echo::clean;
    // A message with its remedy in it (`CursorError`'s, `HandleError`'s: `what; remedy` or
    // `what: remedy`) is cut as the two parts it has.
    let (what, remedy) = match remedy {
        "" => split_remedy(what),
        remedy => (what, remedy),
    };
    let what = clean(what);
    let what = what.trim_end_matches(['.', ' ']);
    let remedy = clean(remedy);
    let remedy = remedy.trim_end_matches(['.', ' ']);
    // The text is always held to the budget: some clients whose models read the structured
    // channel show only the text of an error (Claude Code). The structured channel is held
    // unless no model reads it. Bytes and lines too, where set.
    let held = s.channels.held();
    let fits = |answer: &ErrorAnswer| {
        Size::of(&answer.text, answer.tokens.text).within(&s.budget)
            && (!held.structured
                || Size::of(&answer.structured, answer.tokens.structured).within(&s.budget))
    };
    let whole = error_envelope(s, &joined(what, remedy));
    let answer = if fits(&whole) {
        whole
    } else {
        // As much of what happened as fits (two words at least) with the whole remedy; else
        // those two words with as much of the remedy as fits; else what fits of the two.
        let what_cuts = cut_points(what);
        let remedy_cuts = cut_points(remedy);
        let least = what_cuts.len().min(3) - 1;
        let with_remedy = |k: usize| error_envelope(s, &joined(&cut(what, what_cuts[k]), remedy));
        let with_part = |k: usize| {
            error_envelope(
                s,
                &joined(&cut(what, what_cuts[least]), &cut(remedy, remedy_cuts[k])),
            )
        };
        let alone = |k: usize| error_envelope(s, &cut(what, what_cuts[k]));
        let full = what_cuts.len() - 1;
        let first = if remedy.is_empty() {
            longest(least, full.saturating_sub(1), alone, fits)
        } else {
            longest(least, full, with_remedy, fits)
                .or_else(|| longest(1, remedy_cuts.len().saturating_sub(2), with_part, fits))
        };
        first
            .or_else(|| longest(1, least, alone, fits))
            .unwrap_or_else(|| alone(least))
    };
    let over_budget = !fits(&answer);
    let report = Report {
        tool: s.tool.to_owned(),
        tokenizer: s.tokenizer.name().to_owned(),
        budget: s.budget.max_tokens(),
        raw: None,
        tokens: answer.tokens,
        envelope: answer.tokens,
        records,
        cut: None,
        resolvers: Vec::new(),
        diagnostics: Default::default(),
        tokenized: 0,
        over_budget,
        duration_us: 0,
        nonce: None,
        lookups: Vec::new(),
    };
    report.emit();
    Shaped::new(
        answer.frame,
        answer.text,
        answer.structured,
        report,
        s.channels,
    )
}

/// A message's two parts: what happened and, after its last `; ` (else its first `: `), what
/// to do; the whole as what happened when it has neither.
fn split_remedy(message: &str) -> (&str, &str) {
    message
        .rsplit_once("; ")
        .or_else(|| message.split_once(": "))
        .unwrap_or((message, ""))
}

/// `what; remedy`, or `what` alone.
fn joined(what: &str, remedy: &str) -> String {
    if remedy.is_empty() {
        what.to_owned()
    } else {
        format!("{what}; {remedy}")
    }
}

/// The byte offsets a part can be cut at, shortest first: nothing, then after each word
/// (before each space), then the whole; a long run without spaces is cut every 12
/// characters.
fn cut_points(text: &str) -> Vec<usize> {
    let mut points = vec![0];
    let mut since = 0;
    for (at, c) in text.char_indices() {
        if c == ' ' {
            points.push(at);
            since = 0;
        } else {
            since += 1;
            if since % 12 == 0 {
                points.push(at);
            }
        }
    }
    points.push(text.len());
    points.dedup();
    points
}

/// `text` cut at byte `at` and marked `…`; the whole of it when `at` is its end, nothing
/// when it is empty.
fn cut(text: &str, at: usize) -> String {
    if at >= text.len() {
        text.to_owned()
    } else {
        format!("{}…", text[..at].trim_end())
    }
}

/// The answer `make(k)` for the largest `k` in `lo..=hi` whose answer fits, by bisection
/// (longer text never takes fewer tokens); `None` when none does.
fn longest(
    lo: usize,
    hi: usize,
    make: impl Fn(usize) -> ErrorAnswer,
    fits: impl Fn(&ErrorAnswer) -> bool,
) -> Option<ErrorAnswer> {
    let (mut lo, mut hi) = (lo, hi);
    let mut best = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let answer = make(mid);
        if fits(&answer) {
            best = Some(answer);
            lo = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            hi = mid - 1;
        }
    }
    best
}

/// An error answer: its frame, text channel, tokens and structured channel.
struct ErrorAnswer {
    frame: Frame,
    text: String,
    tokens: ChannelTokens,
    structured: String,
}

/// The error envelope with `summary`, in both channels, and its tokens.
fn error_envelope(s: &ErrorSettings<'_>, summary: &str) -> ErrorAnswer {
    let mut frame = Frame::error("", "");
    frame.summary = summary.to_owned();
    let structured = format!(
        "{}{}",
        envelope::json_head(&frame, false, Default::default()),
        envelope::json_tail(&frame)
    );
    let text = match s.format {
        Format::Json => structured.clone(),
        Format::Prose | Format::Table => format!(
            "{}{}",
            envelope::text_head(&frame, None),
            envelope::text_tail(&frame, "records", "", false)
        ),
    };
    let tokens = ChannelTokens {
        text: s.tokenizer.count(&text),
        structured: s.tokenizer.count(&structured),
    };
    ErrorAnswer {
        frame,
        text,
        tokens,
        structured,
    }
}
