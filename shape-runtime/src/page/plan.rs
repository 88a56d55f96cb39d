//! Planning a page: which ranked records it shows, and which it skips as too large for any
//! page of their own; the budget a page that can do neither asks for.

use super::admit::{Admission, Segment, Size};
use super::envelope::{Needs, OmitReason, Skipped};
use super::render::RenderRecord;
use super::shaped::ShapeError;
use super::state::Page;
use crate::budget::channel::PerChannel;
use crate::cursor::{CursorForm, Cursors};

/// What a page decided, as planning goes: the records it shows (rendered and counted), the
/// records it skips, where it stops and why.
pub(super) struct Plan {
    pub(super) admission: Admission,
    /// Records skipped as too large for any page of their own, in order; the first `prefix`
    /// come before the first record shown, the rest after the last.
    pub(super) skips: Vec<Skipped>,
    pub(super) prefix: usize,
    /// Why the page stops after the records it covers, when records remain.
    pub(super) cut: Option<OmitReason>,
    /// The cursor's form.
    pub(super) form: CursorForm,
}

impl Plan {
    pub(super) fn shown(&self) -> usize {
        self.admission.len()
    }

    /// Records covered from the page's start: shown or skipped.
    pub(super) fn covered(&self) -> usize {
        self.shown() + self.skips.len()
    }

    pub(super) fn shape(&self) -> Shape<'_> {
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
pub(super) struct Shape<'s> {
    /// Where the page starts in this call's reach: 0, or the record a page of its own is
    /// sized for.
    pub(super) start: usize,
    /// Records shown and skipped in this call's reach before `start`.
    pub(super) shown_ahead: usize,
    pub(super) skipped_ahead: usize,
    pub(super) shown: usize,
    pub(super) skips: &'s [Skipped],
    pub(super) prefix: usize,
    pub(super) cut: Option<OmitReason>,
    pub(super) form: CursorForm,
}

impl Shape<'_> {
    /// The index in the reach of the first record the page does not cover.
    pub(super) fn end(&self) -> usize {
        self.start + self.shown + self.skips.len()
    }

    /// Where the records the page shows are in the reach (after the skipped `prefix`).
    pub(super) fn shown_range(&self) -> std::ops::Range<usize> {
        let first = self.start + self.prefix;
        first..first + self.shown
    }
}

/// Whether a cursor is made for the answer, or sized only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Make {
    Sized,
    Real,
}

impl<'p, R: RenderRecord> Page<'p, R> {
    /// Where a page whose last record is at `index`, having shown `shown`, is cut, and why.
    pub(super) fn cut_after(&self, index: usize, shown: usize) -> Option<OmitReason> {
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
    pub(super) fn plan(&self) -> Result<Plan, ShapeError> {
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
    pub(super) fn plan_from(
        &self,
        plan: &mut Plan,
        from: usize,
        mut fast: bool,
    ) -> Result<(), ShapeError> {
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
    pub(super) fn rendered(&self, index: usize, lead: bool) -> Result<Segment, ShapeError> {
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
    pub(super) fn fitting_form(
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
    pub(super) fn own_page(
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
    pub(super) fn last_page(
        &self,
        plan: &Plan,
        base: Option<&Admission>,
        last: Shape<'_>,
        from: usize,
        first: &Segment,
    ) -> Result<Option<Vec<Segment>>, ShapeError> {
        let reach = self.reach();
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
            // After `from`: each follows another record.
            let segment = self.rendered(index, true)?;
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

    /// Whether the plan makes no progress (it shows and skips nothing though records or an
    /// envelope remain), and then what the smallest progress needs.
    pub(super) fn stuck(&self, plan: &Plan) -> Option<Needs> {
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
        let (reach, given) = (self.reach(), self.inputs.given);
        let last = Shape {
            shown: given,
            cut: None,
            form,
            ..plan.shape()
        };
        if self.settings.page_size.is_some_and(|p| given > p)
            || self.frame(last, Make::Sized).next.is_some()
        {
            return Some(need);
        }
        // Every record costs a token and a byte at least: where the page of every record
        // needs more than `need` even so, it is not the cheaper one, and is not made.
        let each = |n: usize| {
            let size = Size {
                tokens: n,
                bytes: n,
                breaks: 0,
            };
            PerChannel {
                structured: size,
                text: size,
            }
        };
        let envelope = self.envelope_size(last);
        let least = plan
            .admission
            .needs_with(envelope, segment.size().plus(each(given - 1)));
        if need.least(least) == need {
            return Some(need);
        }
        // Records past the reach were not made (more than `REACH_FLOOR`, at a budget of
        // fewer tokens): counted at that least, what is stated is then a lower bound, true,
        // and a call at it reaches them all and states the exact figure if still too small.
        let mut all = segment.size().plus(each(given - reach));
        for index in 1..reach {
            all = all.plus(self.segment(index, true).ok()?.size());
        }
        Some(need.least(plan.admission.needs_with(envelope, all)))
    }
}
