//! Admission: which of the ranked records a page shows. Each record is rendered once per
//! channel and counted once per channel; records are admitted in rank order while every
//! channel held to the budget still fits, and never past the first that does not.

use crate::budget::Budget;
use crate::budget::channel::{Channel, PerChannel};
use crate::page::envelope::{Needs, OmitReason};

/// One record rendered for a page: its segment on each channel and the segment's tokens.
#[derive(Debug)]
pub(crate) struct Segment {
    /// The structured segment, and the text one when the text channel differs from it.
    pub structured: String,
    pub text: Option<String>,
    pub tokens: PerChannel<usize>,
}

impl Segment {
    /// What the segment takes on each channel.
    pub(crate) fn size(&self) -> PerChannel<Size> {
        PerChannel {
            structured: Size::of(&self.structured, self.tokens.structured),
            text: Size::of(self.on(Channel::Text), self.tokens.text),
        }
    }

    /// The segment for `channel`.
    pub(crate) fn on(&self, channel: Channel) -> &str {
        match (channel, &self.text) {
            (Channel::Text, Some(text)) => text,
            _ => &self.structured,
        }
    }
}

/// What a page takes on one channel: tokens, and the bytes and line breaks some clients cut
/// at (Codex keeps 10 KiB or 256 lines of a tool's output).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Size {
    pub tokens: usize,
    pub bytes: usize,
    /// Line breaks (`\n`); a text has at most one line more than its breaks.
    pub breaks: usize,
}

impl Size {
    /// The size of `text` counted as `tokens`.
    pub(crate) fn of(text: &str, tokens: usize) -> Size {
        Size {
            tokens,
            bytes: text.len(),
            breaks: text.bytes().filter(|&b| b == b'\n').count(),
        }
    }

    pub(crate) fn plus(self, other: Size) -> Size {
        Size {
            tokens: self.tokens.saturating_add(other.tokens),
            bytes: self.bytes.saturating_add(other.bytes),
            breaks: self.breaks.saturating_add(other.breaks),
        }
    }

    fn minus(self, other: Size) -> Size {
        Size {
            tokens: self.tokens.saturating_sub(other.tokens),
            bytes: self.bytes.saturating_sub(other.bytes),
            breaks: self.breaks.saturating_sub(other.breaks),
        }
    }

    /// Whether a page of this size keeps within `budget`: its tokens, and its bytes and
    /// lines where the budget sets them.
    pub(crate) fn within(self, budget: &Budget) -> bool {
        self.tokens <= budget.max_tokens()
            && budget.max_bytes().is_none_or(|max| self.bytes <= max)
            && budget
                .max_lines()
                .is_none_or(|max| self.breaks.saturating_add(1) <= max)
    }
}

impl PerChannel<Size> {
    pub(crate) fn plus(self, other: PerChannel<Size>) -> PerChannel<Size> {
        PerChannel {
            structured: self.structured.plus(other.structured),
            text: self.text.plus(other.text),
        }
    }

    /// The tokens alone, per channel.
    pub(crate) fn tokens(self) -> PerChannel<usize> {
        PerChannel {
            structured: self.structured.tokens,
            text: self.text.tokens,
        }
    }
}

/// Records admitted so far against a budget, with the envelope's reserve.
#[derive(Debug)]
pub(crate) struct Admission {
    budget: Budget,
    /// Which channels are held to the budget.
    held: PerChannel<bool>,
    /// Room kept for the envelope, as it reads with every record omitted and a cursor.
    reserve: PerChannel<Size>,
    shown: Vec<Segment>,
    sum: PerChannel<Size>,
}

impl Admission {
    pub(crate) fn new(budget: Budget, held: PerChannel<bool>, reserve: PerChannel<Size>) -> Self {
        Admission {
            budget,
            held,
            reserve,
            shown: Vec::new(),
            sum: PerChannel::default(),
        }
    }

    /// Whether `more` on top of `base` stays within the budget on every held channel.
    fn fits(&self, base: PerChannel<Size>, more: PerChannel<Size>) -> bool {
        let total = base.plus(more);
        (!self.held.structured || total.structured.within(&self.budget))
            && (!self.held.text || total.text.within(&self.budget))
    }

    /// Admits `segment` if it fits after the records already admitted; otherwise returns it
    /// with why it was not: it would fit on an empty page (the budget is full), or not even
    /// then (the record alone is too large).
    pub(crate) fn offer(&mut self, segment: Segment) -> Result<(), (Segment, OmitReason)> {
        let size = segment.size();
        if self.fits(self.reserve.plus(self.sum), size) {
            self.sum = self.sum.plus(size);
            self.shown.push(segment);
            Ok(())
        } else if self.fits(self.reserve, size) {
            Err((segment, OmitReason::ResultBudget))
        } else {
            Err((segment, OmitReason::RecordTooLarge))
        }
    }

    /// Admits `segment` after the records admitted so far: the caller has checked that the
    /// page with it fits.
    pub(crate) fn push(&mut self, segment: Segment) {
        self.sum = self.sum.plus(segment.size());
        self.shown.push(segment);
    }

    /// What the admitted records and `more` take with an envelope of `envelope`, on the limit
    /// that must give for such a page: bytes or lines where they are exceeded (raising the
    /// token budget does not help past them), else tokens.
    pub(crate) fn needs_with(&self, envelope: PerChannel<Size>, more: PerChannel<Size>) -> Needs {
        let total = envelope.plus(self.sum).plus(more);
        let held: Vec<Size> = [
            (self.held.structured, total.structured),
            (self.held.text, total.text),
        ]
        .into_iter()
        .filter_map(|(held, size)| held.then_some(size))
        .collect();
        let most = |f: fn(&Size) -> usize| held.iter().map(f).max().unwrap_or(0);
        let (tokens, bytes, lines) = (
            most(|s| s.tokens),
            most(|s| s.bytes),
            most(|s| s.breaks.saturating_add(1)),
        );
        // A client's cut in bytes or lines first: raising the token budget does not make room
        // past it.
        if self.budget.max_bytes().is_some_and(|max| bytes > max) {
            Needs::Bytes(bytes)
        } else if self.budget.max_lines().is_some_and(|max| lines > max) {
            Needs::Lines(lines)
        } else {
            Needs::Tokens(tokens)
        }
    }

    /// Whether `segment` would fit after the admitted records with an envelope of
    /// `envelope` (rather than the reserve).
    pub(crate) fn would_fit_with(&self, envelope: PerChannel<Size>, segment: &Segment) -> bool {
        self.fits(envelope.plus(self.sum), segment.size())
    }

    /// The tokens left, on the tightest held channel, after the admitted records, `more`
    /// and an envelope of `envelope` (0 when they do not fit).
    pub(crate) fn room_with(&self, envelope: PerChannel<Size>, more: &Segment) -> usize {
        let total = envelope.plus(self.sum).plus(more.size());
        let max = self.budget.max_tokens();
        [
            (self.held.structured, total.structured),
            (self.held.text, total.text),
        ]
        .into_iter()
        .filter(|(held, _)| *held)
        .map(|(_, size)| max.saturating_sub(size.tokens))
        .min()
        .unwrap_or(max)
    }

    /// Whether `more` (records' sizes, summed) would fit after the admitted records with an
    /// envelope of `envelope`.
    pub(crate) fn fits_more(&self, envelope: PerChannel<Size>, more: PerChannel<Size>) -> bool {
        self.fits(envelope.plus(self.sum), more)
    }

    /// Whether the admitted records fit with an envelope of `envelope`.
    pub(crate) fn fits_with(&self, envelope: PerChannel<Size>) -> bool {
        self.fits(envelope, self.sum)
    }

    /// Gives back the last admitted record.
    pub(crate) fn pop(&mut self) -> Option<Segment> {
        let segment = self.shown.pop()?;
        let size = segment.size();
        self.sum = PerChannel {
            structured: self.sum.structured.minus(size.structured),
            text: self.sum.text.minus(size.text),
        };
        Some(segment)
    }

    /// How many records are admitted.
    pub(crate) fn len(&self) -> usize {
        self.shown.len()
    }

    /// The admitted records' tokens, per channel.
    pub(crate) fn tokens(&self) -> PerChannel<usize> {
        self.sum.tokens()
    }

    /// Whether the page with an envelope of `envelope` is over the budget.
    pub(crate) fn over_budget(&self, envelope: PerChannel<Size>) -> bool {
        !self.fits_with(envelope)
    }

    /// The admitted records.
    pub(crate) fn shown(&self) -> &[Segment] {
        &self.shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(s: usize, t: usize) -> Segment {
        Segment {
            structured: String::new(),
            text: None,
            tokens: PerChannel {
                structured: s,
                text: t,
            },
        }
    }

    fn tokens(s: usize, t: usize) -> PerChannel<Size> {
        let size = |tokens| Size {
            tokens,
            ..Size::default()
        };
        PerChannel {
            structured: size(s),
            text: size(t),
        }
    }

    const BOTH: PerChannel<bool> = PerChannel {
        structured: true,
        text: true,
    };

    #[test]
    fn admits_up_to_the_budget_exactly_on_each_held_channel() {
        let mut a = Admission::new(Budget::tokens(100), BOTH, tokens(20, 30));
        assert!(a.offer(seg(40, 35)).is_ok());
        // 20 + 40 + 40 = 100 fits exactly; the text channel 30 + 35 + 35 = 100 too.
        assert!(a.offer(seg(40, 35)).is_ok());
        let (_, reason) = a.offer(seg(1, 0)).unwrap_err();
        assert_eq!(reason, OmitReason::ResultBudget);
        assert_eq!(a.len(), 2);
        assert_eq!(
            a.tokens(),
            PerChannel {
                structured: 80,
                text: 70
            }
        );
    }

    #[test]
    fn a_channel_not_held_never_refuses() {
        let held = PerChannel {
            structured: false,
            text: true,
        };
        let mut a = Admission::new(Budget::tokens(10), held, tokens(5, 5));
        assert!(a.offer(seg(1_000, 5)).is_ok());
        let (_, reason) = a.offer(seg(0, 6)).unwrap_err();
        assert_eq!(reason, OmitReason::RecordTooLarge);
        let (_, reason) = a.offer(seg(0, 1)).unwrap_err();
        assert_eq!(reason, OmitReason::ResultBudget);
    }

    #[test]
    fn pop_gives_back_the_last_record_and_its_tokens() {
        let mut a = Admission::new(Budget::tokens(100), BOTH, tokens(0, 0));
        a.offer(seg(10, 20)).unwrap();
        a.offer(seg(5, 6)).unwrap();
        let last = a.pop().unwrap();
        assert_eq!(
            last.tokens,
            PerChannel {
                structured: 5,
                text: 6
            }
        );
        assert_eq!(
            a.tokens(),
            PerChannel {
                structured: 10,
                text: 20
            }
        );
        assert!(a.over_budget(tokens(91, 0)));
        assert!(!a.fits_with(tokens(91, 0)));
        assert!(a.fits_with(tokens(90, 80)));
    }

    fn line(text: &str) -> Segment {
        Segment {
            structured: text.to_owned(),
            text: None,
            tokens: PerChannel::default(),
        }
    }

    #[test]
    fn bytes_and_lines_are_held_exactly_when_the_budget_sets_them() {
        // Ten bytes and one line break a record; the envelope takes 5 bytes and no break.
        let envelope = PerChannel {
            structured: Size::of("head\n", 0),
            text: Size::of("head\n", 0),
        };
        let record = "123456789\n";
        let admitted = |budget: Budget| {
            let mut a = Admission::new(budget, BOTH, envelope);
            let mut n = 0;
            while a.offer(line(record)).is_ok() {
                n += 1;
            }
            n
        };
        // 5 + 3 × 10 = 35 bytes: exactly three records.
        assert_eq!(admitted(Budget::tokens(1_000).bytes(35)), 3);
        assert_eq!(admitted(Budget::tokens(1_000).bytes(34)), 2);
        // 1 + 3 breaks = 4 breaks, 5 lines at most (the last line may be unterminated).
        assert_eq!(admitted(Budget::tokens(1_000).lines(5)), 3);
        assert_eq!(admitted(Budget::tokens(1_000).lines(4)), 2);
        // Both set: the tighter wins.
        assert_eq!(admitted(Budget::tokens(1_000).bytes(1_000).lines(3)), 1);
        // Neither set: tokens alone (these records cost none) — bounded only by the loop.
        let mut a = Admission::new(Budget::tokens(1), BOTH, envelope);
        for _ in 0..1_000 {
            a.offer(line(record)).unwrap();
        }
        // A record larger than the whole byte budget is too large, not a full page.
        let mut a = Admission::new(Budget::tokens(1_000).bytes(12), BOTH, envelope);
        let (_, reason) = a.offer(line(record)).unwrap_err();
        assert_eq!(reason, OmitReason::RecordTooLarge);
        // pop gives back bytes and breaks too.
        let mut a = Admission::new(Budget::tokens(1_000).bytes(25), BOTH, envelope);
        a.offer(line(record)).unwrap();
        a.offer(line(record)).unwrap();
        a.pop().unwrap();
        a.offer(line(record)).unwrap();
        assert!(a.offer(line(record)).is_err());
    }
}
