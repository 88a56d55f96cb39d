//! One page, in stages: notes (facts stated once in the head) → reserve (the envelope's
//! worst case) → admit (records in rank order, each rendered and counted once per channel)
//! → fit the envelope (the real one, with the true counts and cursor) → assemble both
//! channels → report.

use crate::admit::{Admission, PerChannel, Segment};
use crate::env::{CallEnv, Channel, DateStyle};
use crate::envelope::{self, Counts, Frame, OmitReason, Omitted, Status, Words};
use crate::rank::Order;
use crate::render::{Format, Layout, RenderRecord, Renderer};
use crate::report::{ChannelTokens, Cut, RawSize, RecordCounts, Report};
use crate::resolve::ResolverStats;
use crate::shaper::{Call, ChannelPolicy, Continuation, OPEN_RESULT, ShapeError, Shaped};
use crate::untrusted::{Provenance, UntrustedPolicy};
use std::time::Instant;

/// What a page knows beyond its records.
pub(crate) struct PageInputs<'a> {
    /// Records from this position on, in all (the reachable ones may be fewer).
    pub given: usize,
    /// One entry per resolver.
    pub resolvers: Vec<ResolverStats>,
    /// A sentence to lead the summary with.
    pub lead: Option<&'a str>,
    /// The handle the whole result is stored under.
    pub handle: Option<&'a str>,
    /// Whether the next cursor is a keyset (rank key and id); else a count of records.
    pub keyset: bool,
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
}

impl Notes {
    /// No notes: every value written in full.
    pub fn none() -> Self {
        Notes {
            line: None,
            date_style: DateStyle::Iso,
            compact_marks: false,
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
            return notes;
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(line) = crate::untrusted::note_line(policy, tool, &layout.untrusted_names()) {
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
    }
}

/// The core of every call: admit the ranked records until the budget is full, wrap them in
/// the envelope, report.
pub(crate) fn render<R: RenderRecord>(
    call: &Call<'_>,
    records: Records<'_, R>,
    layout: &Layout<'_>,
    page: PageInputs<'_>,
    start: Instant,
) -> Result<Shaped, ShapeError> {
    let shaper = call.shaper();
    let renderer = Renderer::new(layout);
    let tok = shaper.current_tokenizer();
    let budget = shaper.current_budget().max_tokens();
    let format = shaper.current_format();
    let tool = shaper.tool();
    let given = page.given;
    let shown_before = call.shown_before_count();
    let reached = shown_before.saturating_add(given as u64);
    let total = call.total_count().unwrap_or(reached).max(reached);
    let keep_order = call.keeps_order();
    let words = Words {
        name: layout.name,
        plural: layout.plural,
        order: layout.order.as_deref().filter(|_| !keep_order),
        query: call.query_text(),
        lead: page.lead,
        reopen_with: OPEN_RESULT,
    };
    let skipped = envelope::left_out_fields(&layout.skipped);
    let render_err = |message: String| ShapeError::Render {
        record: layout.name.to_owned(),
        message,
    };
    let note = records.notes.line.as_deref();

    // The text channel needs its own rendering unless it is the same JSON.
    let text_differs = format != Format::Json
        || layout.has_untrusted() && shaper.untrusted_policy().provenance != Provenance::Off;
    let policy = shaper.current_channels();
    let held = PerChannel {
        structured: policy != ChannelPolicy::Text,
        text: policy != ChannelPolicy::Structured,
    };
    let page_size = call.page_size_limit();
    let cursor = call.cursor_maker();

    // -- the envelope for a page showing `shown` records, cut at `cut`.
    let frame_for = |shown: usize, cut: Option<(usize, OmitReason)>| -> Frame {
        let covered = shown_before.saturating_add(shown as u64);
        let omitted_count = total.saturating_sub(covered);
        let too_large = u64::from(matches!(cut, Some((_, OmitReason::RecordTooLarge))));
        let reason = if omitted_count > 0 {
            cut.map(|(_, r)| r).or(Some(OmitReason::PageSize))
        } else {
            None
        };
        let next = if omitted_count > 0 {
            cursor.and_then(|make| {
                // Continue after the last record this page covers: the last shown, or a
                // record too large to ever fit (so the next page skips it).
                let last = match cut {
                    Some((index, OmitReason::RecordTooLarge)) => Some(index),
                    _ if shown > 0 => Some(shown - 1),
                    _ => None,
                }?;
                let record = records.rows.structured.get(last)?;
                let covered = covered.saturating_add(too_large);
                (covered < total).then(|| {
                    make(continuation(
                        record,
                        covered,
                        page.keyset,
                        layout.rank_order,
                    ))
                })
            })
        } else {
            None
        };
        Frame::for_page(
            Counts {
                shown: shown as u64,
                shown_before,
                total,
            },
            words,
            Omitted {
                count: omitted_count,
                reason,
                fields: skipped.clone(),
                too_large,
                handle: page.handle.map(str::to_owned),
            },
            next,
        )
    };
    let head = |frame: &Frame, channel: Channel, has_records: bool| -> String {
        match (channel, format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => {
                envelope::json_head(frame, has_records)
            }
            (Channel::Text, Format::Prose) => envelope::text_head(frame, note),
            (Channel::Text, Format::Table) => {
                let mut head = envelope::text_head(frame, note);
                head.push_str(&renderer.table_header());
                head
            }
        }
    };
    let tail = |frame: &Frame, channel: Channel| -> String {
        match (channel, format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => envelope::json_tail(frame),
            (Channel::Text, _) => envelope::text_tail(frame, layout.plural, tool),
        }
    };
    let frame_tokens = |frame: &Frame, has_records: bool| -> PerChannel<usize> {
        let count = |channel| {
            tok.count(&head(frame, channel, has_records)) + tok.count(&tail(frame, channel))
        };
        let structured = count(Channel::Structured);
        PerChannel {
            structured,
            text: if text_differs {
                count(Channel::Text)
            } else {
                structured
            },
        }
    };

    // -- reserve: the envelope as it would read with every record omitted and a cursor.
    let reserve = {
        let mut f = frame_for(0, Some((0, OmitReason::ResultBudget)));
        if f.next.is_none()
            && let (Some(make), Some(first)) = (cursor, records.rows.structured.first())
        {
            f.next = Some(make(continuation(
                first,
                total,
                page.keyset,
                layout.rank_order,
            )));
        }
        frame_tokens(&f, true)
    };

    // -- admit: each record rendered once per channel, counted once, in rank order.
    let mut admission = Admission::new(budget, held, reserve);
    let mut cut: Option<(usize, OmitReason)> = None;
    let mut tokenized = 0usize;
    // What rendering noticed before each admitted record, to give back a refused one's.
    let mut noticed_before = Vec::new();
    for (position, record) in records.rows.structured.iter().enumerate() {
        if page_size.is_some_and(|p| position >= p) {
            cut = Some((position, OmitReason::PageSize));
            break;
        }
        noticed_before.push(records.counting.diagnostics());
        let structured = renderer
            .segment(record, position, Format::Json)
            .map_err(render_err)?;
        let text = match text_differs {
            true => Some(
                renderer
                    .segment(&records.rows.text[position], position, format)
                    .map_err(render_err)?,
            ),
            false => None,
        };
        let ts = tok.count(&structured);
        let tokens = PerChannel {
            structured: ts,
            text: text.as_deref().map_or(ts, |t| tok.count(t)),
        };
        tokenized += 1;
        let segment = Segment {
            structured,
            text,
            tokens,
        };
        if let Err((_, reason)) = admission.offer(segment) {
            cut = Some((position, reason));
            break;
        }
    }
    if cut.is_none() && records.rows.structured.len() < given {
        // Only reachable records were ranked; the next one would not have fit.
        cut = Some((records.rows.structured.len(), OmitReason::ResultBudget));
    }

    // -- fit the envelope: the real one, with the true counts and cursor; drop records from
    // the end until it fits (rare: the reserve is pessimistic, but a summary's numbers can
    // tokenize differently).
    let (frame, envelope_tokens) = loop {
        let shown = admission.len();
        let frame = frame_for(shown, cut);
        let tokens = frame_tokens(&frame, shown > 0);
        if admission.fits_with(tokens) || shown == 0 {
            break (frame, tokens);
        }
        admission.pop();
        cut = Some((shown - 1, OmitReason::ResultBudget));
    };
    let shown = admission.len();
    // Diagnostics of the records shown: what rendering noticed up to the first record not
    // shown (each record was rendered once on the counting channel).
    let diagnostics = match noticed_before.get(shown) {
        Some(before) => before.clone(),
        None => records.counting.diagnostics(),
    };

    // -- assemble both channels.
    let over_budget = admission.over_budget(envelope_tokens);
    let tokens = envelope_tokens.plus(admission.tokens());
    let segments = admission.into_shown();
    let assemble = |channel: Channel| -> String {
        let mut out = head(&frame, channel, shown > 0);
        for s in &segments {
            out.push_str(s.on(channel));
        }
        out.push_str(&tail(&frame, channel));
        out
    };
    let structured = assemble(Channel::Structured);
    let text = if text_differs {
        assemble(Channel::Text)
    } else {
        structured.clone()
    };

    // -- report.
    let report = Report {
        tool: tool.to_owned(),
        tokenizer: tok.name().to_owned(),
        budget,
        raw: call.raw().map(|raw| RawSize::measure(raw, tok)),
        tokens: ChannelTokens {
            text: tokens.text,
            structured: tokens.structured,
        },
        records: RecordCounts {
            total,
            given,
            shown,
            omitted: frame.omitted.count,
        },
        cut: cut
            .filter(|_| frame.status == Status::Partial)
            .map(|(index, reason)| Cut { index, reason }),
        resolvers: page.resolvers,
        diagnostics,
        tokenized,
        over_budget,
        duration_us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    report.emit();
    Ok(Shaped::new(frame, text, structured, report))
}
