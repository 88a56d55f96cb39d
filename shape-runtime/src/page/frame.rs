//! A page's envelope: its frame (status, summary, omission, cursor) for the records it
//! shows and skips, the text around the records on each channel, and what it takes.

use super::admit::Size;
use super::envelope::{Counts, Frame, OmitReason, Omitted};
use super::plan::{Make, Shape};
use super::render::{Format, RenderRecord};
use super::state::Page;
use crate::budget::channel::PerChannel;
use crate::cursor::{Continuation, CursorForm};
use crate::record::call_env::Channel;
use std::ops::Range;

/// An envelope on both channels: the text before and after the records, and its size.
pub(super) struct Envelope {
    pub(super) head: PerChannel<String>,
    pub(super) tail: PerChannel<String>,
    pub(super) size: PerChannel<Size>,
}

impl<'p, R: RenderRecord> Page<'p, R> {
    /// The envelope of a page of `shape`, its cursor sized or made.
    pub(super) fn frame(&self, shape: Shape<'_>, make: Make) -> Frame {
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
    pub(super) fn next(
        &self,
        shape: Shape<'_>,
        shown: u64,
        skipped: u64,
        make: Make,
    ) -> Option<String> {
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
            let (rank, id) = self.resume_key(record);
            Continuation {
                rank,
                id,
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

    /// The text before the records on `channel`; `shown` is where the records the page shows
    /// are in the reach (`None` when sizing: the widest head).
    pub(super) fn head(
        &self,
        frame: &Frame,
        channel: Channel,
        has_records: bool,
        shown: Option<Range<usize>>,
    ) -> String {
        let note = self.records.notes.line(shown);
        match (channel, self.settings.format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => super::envelope::json_head(
                frame,
                has_records,
                super::envelope::JsonHead {
                    untrusted: &self.untrusted,
                    fields: self.fields.as_deref(),
                },
            ),
            (Channel::Text, Format::Prose) => super::envelope::text_head(frame, note),
            (Channel::Text, Format::Table) => {
                let mut head = super::envelope::text_head(frame, note);
                head.push_str(&self.renderer.table_header());
                head
            }
        }
    }

    pub(super) fn tail(&self, frame: &Frame, channel: Channel) -> String {
        match (channel, self.settings.format) {
            (Channel::Structured, _) | (Channel::Text, Format::Json) => {
                super::envelope::json_tail(frame)
            }
            (Channel::Text, _) => super::envelope::text_tail(
                frame,
                self.layout.plural,
                self.words.reopen_with,
                self.left_out,
            ),
        }
    }

    /// The envelope of `frame` on each channel: its text and what it takes; `shown` as for
    /// [`head`](Self::head).
    pub(super) fn envelope(
        &self,
        frame: &Frame,
        has_records: bool,
        shown: Option<Range<usize>>,
    ) -> Envelope {
        let tok = self.settings.tokenizer;
        let part = |channel| {
            let head = self.head(frame, channel, has_records, shown.clone());
            let tail = self.tail(frame, channel);
            // Counted where its records are (see `counts_structured`).
            let count = |text: &str| match channel {
                Channel::Structured if !self.counts_structured => 0,
                _ => tok.count(text),
            };
            let size = Size::of(&head, count(&head)).plus(Size::of(&tail, count(&tail)));
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
    pub(super) fn envelope_size(&self, shape: Shape<'_>) -> PerChannel<Size> {
        let has_records = shape.shown > 0;
        let shown = shape.shown_range();
        self.envelope(&self.frame(shape, Make::Sized), has_records, Some(shown))
            .size
    }

    /// Reserve: an envelope at least as large as any this page can have while it skips
    /// nothing, for admitting records without sizing the envelope each time: the longest
    /// counts (none shown, or every reachable record shown) and the widest signed cursor any
    /// record of the reach gives. Planning checks the page it ends with exactly.
    pub(super) fn reserve(&self) -> PerChannel<Size> {
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
                    frame.way_on = Some(super::envelope::MORE.to_owned());
                }
            }
            let size = self.envelope(&frame, shape.shown > 0, None).size;
            reserve.structured = max_size(reserve.structured, size.structured);
            reserve.text = max_size(reserve.text, size.text);
        }
        reserve
    }

    /// The widest signed cursor a page of this call's reach can carry, sized.
    pub(super) fn widest_cursor(&self) -> Option<String> {
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
        let of = |record: &'p R| {
            let (rank, id) = self.resume_key(record);
            Continuation {
                rank,
                id,
                ..base.clone()
            }
        };
        if !keyset || !cursors.can_hold() {
            return rows.first().map(|r| cursors.sized(of(r)));
        }
        // Sizing is length arithmetic for the codec's cursors: every record is looked at.
        rows.iter()
            .map(|r| cursors.sized(of(r)))
            .max_by_key(String::len)
    }
}

impl<'p, R: RenderRecord> Page<'p, R> {
    /// Where a keyset walk resumes after `record`: its rank key and id. A record without an
    /// id cannot be told from another of equal rank without one (the next page would skip
    /// or repeat it), so a cursor after it pages by count from there on (the walk's rows
    /// must then be the whole result, as for any walk by count).
    fn resume_key<'r>(
        &self,
        record: &'r R,
    ) -> (
        Option<crate::fields::rank::KeyValue>,
        Option<crate::fields::ids::IdKey<'r>>,
    ) {
        match record.id_key() {
            Some(id) if self.inputs.keyset => (record.rank_key(), Some(id)),
            _ => (None, None),
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
