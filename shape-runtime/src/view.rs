//! Field views: borrowing adapters the derive wraps around each field, so projection writes
//! straight to the output with no intermediate value.
//!
//! Each view implements `serde::Serialize`; the same view feeds compact JSON, prose, table
//! cells and aggregation, through different serializers. The per-call state the views need
//! (names from resolvers, the tokenizer for caps, counters for the report) lives in a
//! [`CallEnv`] and a [`Cx`].

use crate::date::{DateField, DateValue};
use crate::ids::{IdText, short_id};
use crate::resolve::{KeyField, Needs};
use crate::tokens::Tokenizer;
use crate::untrusted::{self, UntrustedPolicy, UntrustedStats};
use serde::{Serialize, Serializer};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Which channel a record is being rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// MCP `structuredContent`: the envelope as JSON, no provenance tags inside values.
    Structured,
    /// The text content: provenance tags around untrusted values.
    Text,
}

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
    diagnostics: RefCell<Diagnostics>,
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
            diagnostics: RefCell::new(Diagnostics::default()),
        }
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

    pub(crate) fn note_unparsed_date(&self) {
        if self.counting {
            self.diagnostics.borrow_mut().unparsed_dates += 1;
        }
    }

    pub(crate) fn with_untrusted_stats(&self, f: impl FnOnce(&mut UntrustedStats)) {
        if self.counting {
            f(&mut self.diagnostics.borrow_mut().untrusted);
        }
    }

    /// What was noticed so far.
    pub fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.borrow().clone()
    }

    /// What was noticed so far, forgetting it.
    pub(crate) fn take_diagnostics(&self) -> Diagnostics {
        std::mem::take(&mut *self.diagnostics.borrow_mut())
    }
}

/// The context a record is projected in: the page's resolved names and the call's state.
pub struct Cx<'a, N: Needs> {
    names: &'a N::Names,
    env: &'a CallEnv<'a>,
}

impl<'a, N: Needs> Cx<'a, N> {
    /// A context over resolved names.
    pub fn new(names: &'a N::Names, env: &'a CallEnv<'a>) -> Self {
        Cx { names, env }
    }

    /// The resolved names, one map per resolver.
    pub fn names(&self) -> &'a N::Names {
        self.names
    }

    /// The call's state.
    pub fn env(&self) -> &'a CallEnv<'a> {
        self.env
    }
}

/// A field shown as is.
pub struct Shown<'a, T: ?Sized>(&'a T);

impl<'a, T: ?Sized> Shown<'a, T> {
    /// Wraps a field.
    pub fn new(value: &'a T) -> Self {
        Shown(value)
    }
}

impl<T: ?Sized + Serialize> Serialize for Shown<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A resolved field: key to name.
pub struct Named<'a, F, K> {
    value: &'a F,
    names: &'a crate::resolve::NameMap<K>,
    noun: &'static str,
    env: &'a CallEnv<'a>,
}

impl<'a, F, K> Named<'a, F, K> {
    /// Wraps a field and the page's names for its resolver.
    pub fn new(
        value: &'a F,
        names: &'a crate::resolve::NameMap<K>,
        noun: &'static str,
        env: &'a CallEnv<'a>,
    ) -> Self {
        Named {
            value,
            names,
            noun,
            env,
        }
    }
}

impl<F: KeyField<K>, K> Serialize for Named<'_, F, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value
            .serialize_named(self.names, self.noun, self.env, s)
    }
}

/// An id field, shortened or not.
pub struct Ident<'a, T: ?Sized> {
    value: &'a T,
    short: bool,
}

impl<'a, T: ?Sized> Ident<'a, T> {
    /// Wraps an id field.
    pub fn new(value: &'a T, short: bool) -> Self {
        Ident { value, short }
    }
}

impl<T: IdText + ?Sized> Serialize for Ident<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.value.id_text();
        s.serialize_str(if self.short { short_id(text) } else { text })
    }
}

/// A date field, truncated to `YYYY-MM-DD`.
pub struct Dated<'a, T: ?Sized> {
    value: &'a T,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized> Dated<'a, T> {
    /// Wraps a date field.
    pub fn new(value: &'a T, env: &'a CallEnv<'a>) -> Self {
        Dated { value, env }
    }
}

impl<T: DateField + ?Sized> Serialize for Dated<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.date_value() {
            DateValue::Date(d) => serialize_date(&d, self.env, s),
            DateValue::Unparsed(raw) => {
                self.env.note_unparsed_date();
                s.serialize_str(raw)
            }
            DateValue::Null => s.serialize_none(),
        }
    }
}

/// A field of text written by someone outside the system.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `untrusted`",
    label = "`untrusted` needs a text field",
    note = "`untrusted` works on String, &str, Box<str>, Cow<str> and Option of those; for a \
            newtype, implement `toolshape::UntrustedText` returning its text"
)]
pub trait UntrustedText {
    /// The text, or `None` for a null value.
    fn untrusted_text(&self) -> Option<&str>;
    /// Whether the field can be null.
    fn nullable() -> bool {
        false
    }
}

impl UntrustedText for String {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for &str {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for Box<str> {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for std::borrow::Cow<'_, str> {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl<T: UntrustedText> UntrustedText for Option<T> {
    fn untrusted_text(&self) -> Option<&str> {
        self.as_ref()?.untrusted_text()
    }
    fn nullable() -> bool {
        true
    }
}

/// An untrusted field: sanitised, capped, and in the text channel wrapped in a provenance
/// delimiter naming its source.
pub struct Untrusted<'a, T: ?Sized> {
    value: &'a T,
    field: &'static str,
    cap: Option<u32>,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized> Untrusted<'a, T> {
    /// Wraps an untrusted field.
    pub fn new(value: &'a T, field: &'static str, cap: Option<u32>, env: &'a CallEnv<'a>) -> Self {
        Untrusted {
            value,
            field,
            cap,
            env,
        }
    }
}

impl<T: UntrustedText + ?Sized> Serialize for Untrusted<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.untrusted_text() {
            None => s.serialize_none(),
            Some(text) => untrusted::serialize_untrusted(text, self.field, self.cap, self.env, s),
        }
    }
}

/// Writes a `YYYY-MM-DD` date in the style of the channel being rendered.
pub(crate) fn serialize_date<S: Serializer>(
    date: &str,
    env: &CallEnv<'_>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match env.date_style() {
        DateStyle::MonthDay { year } => match month_day(date, year) {
            Some((month, day)) => s.collect_str(&format_args!("{month} {day}")),
            None => s.serialize_str(date),
        },
        DateStyle::Iso => s.serialize_str(date),
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `("Feb", 11)` for `2026-02-11` when the year is `year`.
fn month_day(date: &str, year: u16) -> Option<(&'static str, u8)> {
    let y: u16 = date.get(..4)?.parse().ok()?;
    let m: usize = date.get(5..7)?.parse().ok()?;
    let d: u8 = date.get(8..10)?.parse().ok()?;
    (y == year).then_some(())?;
    Some((*MONTHS.get(m.checked_sub(1)?)?, d))
}

/// The year of a `YYYY-MM-DD` date.
pub(crate) fn date_year(date: &str) -> Option<u16> {
    date.get(..4)?.parse().ok()
}
