//! Admission: which of the ranked records a page shows. Each record is rendered once per
//! channel and counted once per channel; records are admitted in rank order while every
//! channel held to the budget still fits, and never past the first that does not.

use crate::env::Channel;
use crate::envelope::OmitReason;
use serde::{Deserialize, Serialize};

/// Which channel the model reads (the call's channel profile): the budget is enforced on
/// that one, and an MCP answer carries only what that model reads.
///
/// A client whose model reads one channel gets that channel with the whole budget: under
/// `Both` the text channel is held to what the JSON channel fits, so prose shows fewer
/// records than it could alone. [`clients`](crate::clients) picks the profile from an MCP
/// client's name; configuration (`channels = "text"`) fixes it per tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelPolicy {
    /// Each channel fits the budget on its own (the default, for a client whose reading is
    /// not known): MCP answers carry both `content` and `structuredContent`.
    #[default]
    Both,
    /// The model reads the text: only the text channel is held to the budget, and an MCP
    /// answer has no `structuredContent` (nor the tool an `outputSchema` in `tools/list`), so
    /// the prose or table reaches the model.
    Text,
    /// The model reads the structured content: the JSON envelope has the whole budget, and
    /// the text channel is that same JSON (records are rendered once), as is an MCP answer's
    /// text block; an error's text is prose that carries the remedy alone, for clients that
    /// show only the text of an error.
    Structured,
}

impl ChannelPolicy {
    /// Which channels are held to the budget.
    pub(crate) fn held(self) -> PerChannel<bool> {
        PerChannel {
            structured: self != ChannelPolicy::Text,
            text: self != ChannelPolicy::Structured,
        }
    }
}

/// One value per channel: the structured channel (MCP `structuredContent`) and the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PerChannel<T> {
    pub structured: T,
    pub text: T,
}

impl PerChannel<usize> {
    /// Adds two counts channel by channel.
    pub fn plus(self, other: PerChannel<usize>) -> PerChannel<usize> {
        PerChannel {
            structured: self.structured.saturating_add(other.structured),
            text: self.text.saturating_add(other.text),
        }
    }
}

/// One record rendered for a page: its segment on each channel and the segment's tokens.
#[derive(Debug)]
pub(crate) struct Segment {
    /// The structured segment, and the text one when the text channel differs from it.
    pub structured: String,
    pub text: Option<String>,
    pub tokens: PerChannel<usize>,
}

impl Segment {
    /// The segment for `channel`.
    pub fn on(&self, channel: Channel) -> &str {
        match (channel, &self.text) {
            (Channel::Text, Some(text)) => text,
            _ => &self.structured,
        }
    }
}

/// Records admitted so far against a budget, with the envelope's reserve.
#[derive(Debug)]
pub(crate) struct Admission {
    budget: usize,
    /// Which channels are held to the budget.
    held: PerChannel<bool>,
    /// Tokens kept for the envelope, as it reads with every record omitted and a cursor.
    reserve: PerChannel<usize>,
    shown: Vec<Segment>,
    sum: PerChannel<usize>,
}

impl Admission {
    pub fn new(budget: usize, held: PerChannel<bool>, reserve: PerChannel<usize>) -> Self {
        Admission {
            budget,
            held,
            reserve,
            shown: Vec::new(),
            sum: PerChannel::default(),
        }
    }

    /// Whether `tokens` more on top of `base` stay within the budget on every held channel.
    fn fits(&self, base: PerChannel<usize>, tokens: PerChannel<usize>) -> bool {
        let total = base.plus(tokens);
        (!self.held.structured || total.structured <= self.budget)
            && (!self.held.text || total.text <= self.budget)
    }

    /// Admits `segment` if it fits after the records already admitted; otherwise returns it
    /// with why it was not: it would fit on an empty page (the budget is full), or not even
    /// then (the record alone is too large).
    pub fn offer(&mut self, segment: Segment) -> Result<(), (Segment, OmitReason)> {
        if self.fits(self.reserve.plus(self.sum), segment.tokens) {
            self.sum = self.sum.plus(segment.tokens);
            self.shown.push(segment);
            Ok(())
        } else if self.fits(self.reserve, segment.tokens) {
            Err((segment, OmitReason::ResultBudget))
        } else {
            Err((segment, OmitReason::RecordTooLarge))
        }
    }

    /// Whether the admitted records fit with an envelope of `envelope` tokens.
    pub fn fits_with(&self, envelope: PerChannel<usize>) -> bool {
        self.fits(envelope, self.sum)
    }

    /// Gives back the last admitted record.
    pub fn pop(&mut self) -> Option<Segment> {
        let segment = self.shown.pop()?;
        self.sum.structured -= segment.tokens.structured;
        self.sum.text -= segment.tokens.text;
        Some(segment)
    }

    /// How many records are admitted.
    pub fn len(&self) -> usize {
        self.shown.len()
    }

    /// The admitted records' tokens, per channel.
    pub fn tokens(&self) -> PerChannel<usize> {
        self.sum
    }

    /// Whether the page with an envelope of `envelope` tokens is over the budget.
    pub fn over_budget(&self, envelope: PerChannel<usize>) -> bool {
        !self.fits_with(envelope)
    }

    /// The admitted records.
    pub fn shown(&self) -> &[Segment] {
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

    #[test]
    fn admits_up_to_the_budget_exactly_on_each_held_channel() {
        let both = PerChannel {
            structured: true,
            text: true,
        };
        let mut a = Admission::new(
            100,
            both,
            PerChannel {
                structured: 20,
                text: 30,
            },
        );
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
        let mut a = Admission::new(
            10,
            PerChannel {
                structured: false,
                text: true,
            },
            PerChannel {
                structured: 5,
                text: 5,
            },
        );
        assert!(a.offer(seg(1_000, 5)).is_ok());
        let (_, reason) = a.offer(seg(0, 6)).unwrap_err();
        assert_eq!(reason, OmitReason::RecordTooLarge);
        let (_, reason) = a.offer(seg(0, 1)).unwrap_err();
        assert_eq!(reason, OmitReason::ResultBudget);
    }

    #[test]
    fn pop_gives_back_the_last_record_and_its_tokens() {
        let mut a = Admission::new(
            100,
            PerChannel {
                structured: true,
                text: true,
            },
            PerChannel {
                structured: 0,
                text: 0,
            },
        );
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
        assert!(a.over_budget(PerChannel {
            structured: 91,
            text: 0
        }));
        assert!(!a.fits_with(PerChannel {
            structured: 91,
            text: 0
        }));
        assert!(a.fits_with(PerChannel {
            structured: 90,
            text: 80
        }));
    }
}
