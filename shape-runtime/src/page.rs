//! One page, in stages: notes (facts stated once in the head) → reserve (the envelope's
//! worst case) → admit (records in rank order, each rendered and counted once per channel)
//! → fit the envelope (the real one, with the true counts and cursor) → assemble both
//! channels → report.

use crate::admit::ChannelPolicy;
use crate::admit::{Admission, PerChannel, Segment, Size};
use crate::budget::Budget;
use crate::cursor::UpstreamPosition;
use crate::cursor::{Continuation, CursorFn};
use crate::env::{CallEnv, Channel, DateStyle};
use crate::envelope::{self, Counts, Frame, OmitReason, Omitted, Status, Words};
use crate::rank::Order;
use crate::render::{Format, Layout, RenderRecord, Renderer, StructuredForm};
use crate::report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use crate::resolve::ResolverStats;
use crate::shaped::{ShapeError, Shaped};
use crate::store::OPEN_RESULT;
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
    /// The rows are in the caller's order: the summary names no order.
    pub keep_order: bool,
    /// What was asked, for the summary of an empty answer.
    pub query: Option<&'a str>,
    /// The raw payload, for the report's pre-shaping size.
    pub raw: Option<&'a str>,
    /// Makes the `next` cursor.
    pub cursor: Option<&'a CursorFn>,
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
    pub handle: Option<&'a str>,
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

/// Where the next page starts: after the record's key, or after a count of records.
fn continuation<R: RenderRecord>(
    record: &R,
    shown: u64,
    keyset: bool,
    order: Order,
) -> Continuation<'_> {
    Continuation {
        rank: record.rank_key().filter(|_| keyset),
        id: record.id_key().filter(|_| keyset),
        shown,
        order,
        upstream: None,
    }
}

/// Where the next page starts in an upstream that pages itself.
fn upstream_continuation<'r>(
    at: crate::cursor::UpstreamPosition,
    shown: u64,
    order: Order,
) -> Continuation<'r> {
    Continuation {
        rank: None,
        id: None,
        shown,
        order,
        upstream: Some(at),
    }
}

/// The core of every call: admit the ranked records until the budget is full, wrap them in
/// the envelope, report. The notes were taken when the records' states were made.
pub(crate) fn render<R: RenderRecord>(
    settings: &PageSettings<'_>,
    records: Records<'_, R>,
    layout: &Layout<'_>,
    page: PageInputs<'_>,
    start: Instant,
) -> Result<Shaped, ShapeError> {
    let page = Page::new(settings, &records, layout, page);
    let reserve = page.reserve();
    let admitted = page.fill(page.admit(reserve)?)?;
    let fitted = page.fit(admitted);
    let channels = page.assemble(&fitted);
    crate::shaped::reads_back(&channels.structured).map_err(|message| ShapeError::Render {
        record: layout.name.to_owned(),
        message,
    })?;
    let report = page.report(&fitted, start);
    report.emit();
    Ok(Shaped::new(
        fitted.frame,
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
    /// Records up to the end of the rows given.
    reached: u64,
    words: Words<'p>,
    skipped: Vec<String>,
    /// The untrusted fields a JSON envelope names (none when provenance is off).
    untrusted: Vec<String>,
    /// The rows form's field names.
    fields: Option<Vec<&'p str>>,
    /// The text channel needs its own rendering unless it is the same JSON.
    text_differs: bool,
}

/// What admission left: the records admitted, where it stopped and why, and what rendering
/// noticed before each record it looked at.
struct Admitted {
    admission: Admission,
    cut: Option<(usize, OmitReason)>,
    /// The record at the cut, rendered and counted, when admission refused it.
    refused: Option<Segment>,
    tokenized: usize,
    noticed_before: Vec<crate::env::Diagnostics>,
}

/// The page once its real envelope fits.
struct Fitted {
    frame: Frame,
    envelope: PerChannel<Size>,
    admission: Admission,
    cut: Option<(usize, OmitReason)>,
    tokenized: usize,
    noticed_before: Vec<crate::env::Diagnostics>,
}

impl<'p, R: RenderRecord> Page<'p, R> {
    fn new(
        settings: &'p PageSettings<'p>,
        records: &'p Records<'p, R>,
        layout: &'p Layout<'p>,
        inputs: PageInputs<'p>,
    ) -> Self {
        let reached = settings.shown_before.saturating_add(inputs.given as u64);
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
        };
        let untrusted_paths = layout.untrusted_paths();
        Page {
            settings,
            records,
            layout,
            renderer: Renderer::new(layout),
            total,
            reached,
            words,
            skipped: envelope::left_out_fields(&layout.skipped),
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
            inputs,
        }
    }

    /// The envelope for a page showing `shown` records, cut at `cut`.
    fn frame(&self, shown: usize, cut: Option<(usize, OmitReason)>) -> Frame {
        let covered = self.settings.shown_before.saturating_add(shown as u64);
        let omitted_count = self.total.map(|total| total.saturating_sub(covered));
        let too_large = u64::from(matches!(cut, Some((_, OmitReason::RecordTooLarge))));
        // With no total, more remain: in this upstream page or in the upstream's next.
        let more = omitted_count != Some(0);
        let reason = more.then(|| cut.map_or(OmitReason::PageSize, |(_, r)| r));
        let next = if more {
            self.next(shown, cut, covered.saturating_add(too_large))
        } else {
            None
        };
        Frame::for_page(
            Counts {
                shown: shown as u64,
                shown_before: self.settings.shown_before,
                total: self.total,
            },
            self.words,
            Omitted {
                count: omitted_count,
                reason,
                fields: self.skipped.clone(),
                too_large,
                handle: self.inputs.handle.map(str::to_owned),
            },
            next,
        )
    }

    /// The `next` cursor of a page showing `shown` records, cut at `cut`, having covered
    /// `covered` records in all.
    fn next(&self, shown: usize, cut: Option<(usize, OmitReason)>, covered: u64) -> Option<String> {
        let make = self.settings.cursor?;
        // Continue after the last record this page covers: the last shown, or a record too
        // large to ever fit (so the next page skips it).
        let last = match cut {
            Some((index, OmitReason::RecordTooLarge)) => Some(index),
            _ if shown > 0 => Some(shown - 1),
            _ => None,
        };
        if let Some(plan) = &self.inputs.upstream {
            // Nothing of this upstream page left to show: go on to the next.
            let consumed = match last {
                Some(last) => last + 1,
                None if self.inputs.given == 0 => 0,
                None => return None,
            };
            let at = plan.after(consumed)?;
            return Some(make(upstream_continuation(
                at,
                covered,
                self.layout.rank_order,
            )));
        }
        let record = self.records.rows.structured.get(last?)?;
        self.total.is_none_or(|total| covered < total).then(|| {
            make(continuation(
                record,
                covered,
                self.inputs.keyset,
                self.layout.rank_order,
            ))
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
            (Channel::Text, _) => {
                envelope::text_tail(frame, self.layout.plural, self.words.reopen_with)
            }
        }
    }

    /// What the envelope takes on each channel: tokens, bytes, line breaks.
    fn envelope_size(&self, frame: &Frame, has_records: bool) -> PerChannel<Size> {
        let tok = self.settings.tokenizer;
        let count = |channel| {
            let head = self.head(frame, channel, has_records);
            let tail = self.tail(frame, channel);
            Size::of(&head, tok.count(&head)).plus(Size::of(&tail, tok.count(&tail)))
        };
        let structured = count(Channel::Structured);
        PerChannel {
            structured,
            text: if self.text_differs {
                count(Channel::Text)
            } else {
                structured
            },
        }
    }

    /// Reserve: the envelope as it would read with every record omitted and a cursor.
    fn reserve(&self) -> PerChannel<Size> {
        let mut f = self.frame(0, Some((0, OmitReason::ResultBudget)));
        let widest = self.total.unwrap_or(self.reached);
        let cursor = self.settings.cursor;
        let order = self.layout.rank_order;
        if let (Some(make), Some(plan)) = (cursor, &self.inputs.upstream) {
            f.next = Some(make(upstream_continuation(plan.widest(), widest, order)));
        } else if f.next.is_none()
            && let (Some(make), Some(first)) = (cursor, self.records.rows.structured.first())
        {
            f.next = Some(make(continuation(first, widest, self.inputs.keyset, order)));
        }
        self.envelope_size(&f, true)
    }

    /// Admit: each record rendered once per channel, counted once, in rank order, never past
    /// the first that does not fit.
    fn admit(&self, reserve: PerChannel<Size>) -> Result<Admitted, ShapeError> {
        let mut admitted = Admitted {
            admission: Admission::new(self.settings.budget, self.settings.channels.held(), reserve),
            cut: None,
            refused: None,
            tokenized: 0,
            noticed_before: Vec::new(),
        };
        self.admit_from(&mut admitted, 0)?;
        Ok(admitted)
    }

    /// Goes on admitting from the record at `start` (the one refused before, when it is
    /// kept in `refused`: rendered and counted once) until one does not fit.
    fn admit_from(&self, admitted: &mut Admitted, start: usize) -> Result<(), ShapeError> {
        let s = self.settings;
        let rows = &self.records.rows;
        let mut refused = admitted.refused.take();
        for (position, record) in rows.structured.iter().enumerate().skip(start) {
            if s.page_size.is_some_and(|p| position >= p) {
                admitted.cut = Some((position, OmitReason::PageSize));
                break;
            }
            let segment = match refused.take() {
                Some(segment) if position == start => segment,
                _ => {
                    admitted
                        .noticed_before
                        .push(self.records.counting.diagnostics());
                    admitted.tokenized += 1;
                    self.segment(record, position)?
                }
            };
            if let Err((segment, reason)) = admitted.admission.offer(segment) {
                admitted.cut = Some((position, reason));
                admitted.refused = Some(segment);
                break;
            }
        }
        if admitted.cut.is_none() && rows.structured.len() < self.inputs.given {
            // Only reachable records were ranked; the next one would not have fit.
            admitted.cut = Some((rows.structured.len(), OmitReason::ResultBudget));
        }
        Ok(())
    }

    /// One record rendered on each channel and counted once per channel.
    fn segment(&self, record: &R, position: usize) -> Result<Segment, ShapeError> {
        let s = self.settings;
        let render_err = |message: String| ShapeError::Render {
            record: self.layout.name.to_owned(),
            message,
        };
        let structured = self
            .renderer
            .segment(record, position, Format::Json, s.form)
            .map_err(render_err)?;
        let text = match self.text_differs {
            true => Some(
                self.renderer
                    .segment(
                        &self.records.rows.text[position],
                        position,
                        s.format,
                        s.form,
                    )
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

    /// Where a page showing every record up to `index` would be cut, and why.
    fn cut_after(&self, index: usize) -> Option<(usize, OmitReason)> {
        let next = index + 1;
        let ranked = self.records.rows.structured.len();
        if self.settings.page_size.is_some_and(|p| next >= p) && next < self.inputs.given {
            Some((next, OmitReason::PageSize))
        } else if next < ranked {
            Some((next, OmitReason::ResultBudget))
        } else if ranked < self.inputs.given {
            Some((ranked, OmitReason::ResultBudget))
        } else {
            None
        }
    }

    /// Fill: admission kept room for the envelope at its widest (every record omitted, the
    /// longest cursor); the real one is often smaller, and the record refused may fit beside
    /// it after all. Admitting goes on against the real envelope while it does, so a page
    /// stops only where the next record truly would not fit.
    fn fill(&self, mut admitted: Admitted) -> Result<Admitted, ShapeError> {
        while let (Some((index, reason)), Some(refused)) = (admitted.cut, admitted.refused.as_ref())
        {
            // The envelope as it would read with the refused record shown too.
            let frame = self.frame(admitted.admission.len() + 1, self.cut_after(index));
            let real = self.envelope_size(&frame, true);
            if !admitted.admission.would_fit_with(real, refused) {
                if reason != OmitReason::RecordTooLarge {
                    break;
                }
                if admitted.admission.len() > 0 {
                    // Only a page that starts with a record judges it too large for any
                    // page: this one is full, and the record goes first on the next.
                    admitted.cut = Some((index, OmitReason::ResultBudget));
                    break;
                }
                // First on its page, and too large beside an envelope with a cursor: the
                // page that shows it and everything after it needs none, and may fit.
                match self.final_envelope_from(index) {
                    Some(last) if admitted.admission.would_fit_with(last, refused) => {
                        admitted.admission.set_reserve(last);
                        admitted.cut = None;
                        self.admit_from(&mut admitted, index)?;
                        if admitted.admission.len() == 0 {
                            break;
                        }
                        continue;
                    }
                    _ => break,
                }
            }
            admitted.admission.set_reserve(real);
            admitted.cut = None;
            let before = admitted.admission.len();
            self.admit_from(&mut admitted, index)?;
            if admitted.admission.len() == before {
                // Nothing more admitted (cannot happen while the two checks agree): stop
                // rather than ask again.
                break;
            }
        }
        Ok(admitted)
    }

    /// The envelope of a page showing every record from `index` on, when that page would be
    /// the last (no cursor): `None` when records lie beyond this call's reach or a page size
    /// would cut it.
    fn final_envelope_from(&self, index: usize) -> Option<PerChannel<Size>> {
        let ranked = self.records.rows.structured.len();
        let last = ranked.checked_sub(1).filter(|&last| last >= index)?;
        if self.cut_after(last).is_some() {
            return None;
        }
        let frame = self.frame(ranked - index, None);
        (frame.next.is_none()).then(|| self.envelope_size(&frame, true))
    }

    /// Fit the envelope: the real one, with the true counts and cursor; records are given
    /// back from the end until it fits (rare: the reserve is pessimistic, but a summary's
    /// numbers can tokenize differently).
    fn fit(&self, admitted: Admitted) -> Fitted {
        let Admitted {
            mut admission,
            mut cut,
            tokenized,
            noticed_before,
            ..
        } = admitted;
        loop {
            let shown = admission.len();
            let frame = self.frame(shown, cut);
            let envelope = self.envelope_size(&frame, shown > 0);
            if admission.fits_with(envelope) || shown == 0 {
                return Fitted {
                    frame,
                    envelope,
                    admission,
                    cut,
                    tokenized,
                    noticed_before,
                };
            }
            if let Some((index, OmitReason::RecordTooLarge)) = cut {
                // Saying the next record is too large made the page too long: say only that
                // the page is full. The next page starts with that record and finds it too
                // large on its own, rather than this page giving up records that fit.
                cut = Some((index, OmitReason::ResultBudget));
                continue;
            }
            admission.pop();
            // A record that cannot be shown even alone with the real envelope is skipped
            // with its reason, so the next page goes on after it rather than stopping here.
            let reason = match shown {
                1 => OmitReason::RecordTooLarge,
                _ => OmitReason::ResultBudget,
            };
            cut = Some((shown - 1, reason));
        }
    }

    /// Assemble both channels from the same segments.
    fn assemble(&self, fitted: &Fitted) -> PerChannel<String> {
        let shown = fitted.admission.len();
        let assemble = |channel: Channel| -> String {
            let mut out = self.head(&fitted.frame, channel, shown > 0);
            for s in fitted.admission.shown() {
                out.push_str(s.on(channel));
            }
            out.push_str(&self.tail(&fitted.frame, channel));
            out
        };
        let structured = assemble(Channel::Structured);
        let text = if self.text_differs {
            assemble(Channel::Text)
        } else {
            structured.clone()
        };
        PerChannel { structured, text }
    }

    /// The report: sizes, counts, the cut and why, and the diagnostics of the records shown
    /// (what rendering noticed up to the first record not shown).
    fn report(&self, fitted: &Fitted, start: Instant) -> Report {
        let s = self.settings;
        let shown = fitted.admission.len();
        let diagnostics = match fitted.noticed_before.get(shown) {
            Some(before) => before.clone(),
            None => self.records.counting.diagnostics(),
        };
        let envelope = fitted.envelope.tokens();
        let tokens = envelope.plus(fitted.admission.tokens());
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
                text: envelope.text,
                structured: envelope.structured,
            },
            records: RecordCounts {
                total: self.total.unwrap_or(self.reached),
                given: self.inputs.given,
                shown,
                omitted: fitted.frame.omitted.count.unwrap_or_else(|| {
                    self.reached
                        .saturating_sub(s.shown_before.saturating_add(shown as u64))
                }),
            },
            cut: fitted
                .cut
                .filter(|_| fitted.frame.status == Status::Partial)
                .map(|(index, reason)| Cut { index, reason }),
            resolvers: self.inputs.resolvers.clone(),
            diagnostics,
            tokenized: fitted.tokenized,
            over_budget: fitted.admission.over_budget(fitted.envelope),
            duration_us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            nonce: (s.untrusted.provenance == Provenance::RandomTag && self.layout.has_untrusted())
                .then(|| self.records.nonce.to_owned()),
            lookups: Vec::new(),
        }
    }
}
