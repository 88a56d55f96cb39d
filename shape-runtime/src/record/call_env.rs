//! Per-call rendering state: which channel is being rendered, how dates are written, and what
//! the call noticed ([`CallEnv`], [`Diagnostics`]).

pub use crate::budget::channel::Channel;
use crate::budget::tokens::Tokenizer;
use crate::untrusted::{UntrustedCall, UntrustedPolicy, UntrustedStats};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// How dates are written in the text channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateStyle {
    /// `2026-02-11`.
    Iso,
    /// `Feb 11`, when every date shown is in `year` and the text says so once.
    MonthDay {
        /// The year every date shares.
        year: u16,
    },
}

/// What a call noticed while rendering the records it showed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Diagnostics {
    /// Legend codes with no word, by output field: `{"status": ["7"]}`.
    pub unknown_codes: BTreeMap<String, Vec<String>>,
    /// Resolved fields shown with the unresolved marker.
    pub unresolved_shown: u32,
    /// Date values shown as given because they did not parse.
    pub unparsed_dates: u32,
    /// Values shown as `not recorded`: a configured record without the key its path names
    /// (or a [`Recorded`](crate::Recorded) field the source left out), by output field.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub not_recorded: BTreeMap<String, u32>,
    /// Values of a kind their output did not expect (an object where text or a date was
    /// configured), shown as they are, by output field.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unexpected: BTreeMap<String, u32>,
    /// What happened to untrusted text.
    pub untrusted: UntrustedStats,
}

/// Per-call state shared by every view: tokenizer, policies, counters.
pub struct CallEnv<'a> {
    tool: &'a str,
    tokenizer: &'a dyn Tokenizer,
    policy: &'a UntrustedPolicy,
    nonce: &'a str,
    channel: Channel,
    counting: bool,
    date_style: DateStyle,
    compact_marks: bool,
    named_fields: bool,
    diagnostics: RefCell<Diagnostics>,
    /// Set while a field is written as words (a prose line, a table cell), not as JSON.
    words: Cell<bool>,
    /// The nested fields being written, as `comments.` (`comments.replies.` deeper): a nested
    /// value's provenance tag names its whole path.
    path: RefCell<String>,
}

impl<'a> CallEnv<'a> {
    /// State for one call of `tool`.
    pub fn new(
        tool: &'a str,
        tokenizer: &'a dyn Tokenizer,
        policy: &'a UntrustedPolicy,
        nonce: &'a str,
    ) -> Self {
        CallEnv {
            tool,
            tokenizer,
            policy,
            nonce,
            channel: Channel::Structured,
            counting: false,
            date_style: DateStyle::Iso,
            compact_marks: false,
            named_fields: false,
            diagnostics: RefCell::new(Diagnostics::default()),
            words: Cell::new(false),
            path: RefCell::new(String::new()),
        }
    }

    /// Runs `write` inside the nested field `field`: values written meanwhile are named
    /// `field.name` (after any field it is itself inside).
    pub fn within<R>(&self, field: &str, write: impl FnOnce() -> R) -> R {
        let before = match self.path.try_borrow_mut() {
            Ok(mut path) => {
                let before = path.len();
                path.push_str(field);
                path.push('.');
                Some(before)
            }
            Err(_) => None,
        };
        let result = write();
        if let (Some(before), Ok(mut path)) = (before, self.path.try_borrow_mut()) {
            path.truncate(before);
        }
        result
    }

    /// Runs `write` with the field being written as words (prose, a table cell): a nested
    /// record then reads as its prose line, not as an object.
    pub fn as_words<R>(&self, write: impl FnOnce() -> R) -> R {
        let before = self.words.replace(true);
        let result = write();
        self.words.set(before);
        result
    }

    /// Whether a field is being written as words.
    pub fn writing_words(&self) -> bool {
        self.words.get()
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        self.tool
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer
    }

    /// The untrusted-text policy.
    pub fn policy(&self) -> &UntrustedPolicy {
        self.policy
    }

    /// This call's random delimiter suffix, when the policy asks for one.
    pub fn nonce(&self) -> &str {
        self.nonce
    }

    /// The state for rendering on `channel`; `counting` says whether this state counts
    /// diagnostics (one channel counts, so each shown record is counted once). The channel
    /// is fixed for the state's life: a call renders each channel in a state of its own.
    pub fn with_pass(self, channel: Channel, counting: bool) -> Self {
        CallEnv {
            channel,
            counting,
            ..self
        }
    }

    /// How dates are written in the text channel.
    pub fn with_date_style(self, date_style: DateStyle) -> Self {
        CallEnv { date_style, ..self }
    }

    /// Marks untrusted values in the text channel with `«…»`, the sources being named once.
    pub fn with_compact_marks(self, compact_marks: bool) -> Self {
        CallEnv {
            compact_marks,
            ..self
        }
    }

    /// Marks untrusted values in a JSON text channel by naming their fields once in the
    /// envelope (`"untrusted": […]`) instead of wrapping each value in a tag.
    pub fn with_named_fields(self, named_fields: bool) -> Self {
        CallEnv {
            named_fields,
            ..self
        }
    }

    /// The channel being rendered.
    pub fn channel(&self) -> Channel {
        self.channel
    }

    /// How dates are written in the channel being rendered.
    pub fn date_style(&self) -> DateStyle {
        match self.channel {
            Channel::Text => self.date_style,
            Channel::Structured => DateStyle::Iso,
        }
    }

    /// Whether untrusted values get compact marks.
    pub fn compact_marks(&self) -> bool {
        self.compact_marks
    }

    /// Whether this state counts diagnostics.
    pub fn counting(&self) -> bool {
        self.counting
    }

    pub(crate) fn note_unknown_code(&self, field: &str, code: &str) {
        if self.counting {
            let mut d = self.diagnostics.borrow_mut();
            let codes = d.unknown_codes.entry(field.to_owned()).or_default();
            if !codes.iter().any(|c| c == code) {
                codes.push(code.to_owned());
            }
        }
    }

    pub(crate) fn note_unresolved(&self) {
        if self.counting {
            self.diagnostics.borrow_mut().unresolved_shown += 1;
        }
    }

    pub(crate) fn note_not_recorded(&self, field: &str) {
        if self.counting {
            *self
                .diagnostics
                .borrow_mut()
                .not_recorded
                .entry(self.field_path(field).into_owned())
                .or_default() += 1;
        }
    }

    pub(crate) fn note_unexpected(&self, field: &str) {
        if self.counting {
            *self
                .diagnostics
                .borrow_mut()
                .unexpected
                .entry(self.field_path(field).into_owned())
                .or_default() += 1;
        }
    }

    pub(crate) fn note_unparsed_date(&self) {
        if self.counting {
            self.diagnostics.borrow_mut().unparsed_dates += 1;
        }
    }

    /// What was noticed so far.
    pub fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.borrow().clone()
    }

    /// Sets what was noticed so far back to `diagnostics` (taken earlier): what rendering a
    /// record noticed since is forgotten, as for a record not shown.
    pub(crate) fn restore_diagnostics(&self, diagnostics: Diagnostics) {
        *self.diagnostics.borrow_mut() = diagnostics;
    }

    /// What was noticed so far, forgetting it.
    pub(crate) fn take_diagnostics(&self) -> Diagnostics {
        std::mem::take(&mut *self.diagnostics.borrow_mut())
    }
}

impl UntrustedCall for CallEnv<'_> {
    fn tool(&self) -> &str {
        self.tool
    }

    fn field_path<'f>(&self, field: &'f str) -> std::borrow::Cow<'f, str> {
        match self.path.try_borrow() {
            Ok(path) if !path.is_empty() => std::borrow::Cow::Owned(format!("{path}{field}")),
            _ => std::borrow::Cow::Borrowed(field),
        }
    }

    fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer
    }

    fn policy(&self) -> &UntrustedPolicy {
        self.policy
    }

    fn nonce(&self) -> &str {
        self.nonce
    }

    fn text_channel(&self) -> bool {
        self.channel == Channel::Text
    }

    fn counting(&self) -> bool {
        self.counting
    }

    fn compact_marks(&self) -> bool {
        self.compact_marks
    }

    fn named_fields(&self) -> bool {
        self.named_fields
    }

    fn count(&self, f: &mut dyn FnMut(&mut UntrustedStats)) {
        if self.counting {
            f(&mut self.diagnostics.borrow_mut().untrusted);
        }
    }
}
