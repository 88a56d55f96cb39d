//! Field views: borrowing adapters the derive wraps around each field, so projection writes
//! straight to the output with no intermediate value.
//!
//! Each view implements `serde::Serialize`; the same view feeds compact JSON, prose, table
//! cells and aggregation, through different serializers. The per-call state the views need
//! lives in a [`CallEnv`] (the tokenizer for caps, counters for the report) and a [`Cx`]
//! (adds the names from resolvers).

use crate::date::{DateField, DateValue};
pub use crate::env::{CallEnv, Channel, DateStyle, Diagnostics};
use crate::ids::{IdField, IdKey, short_id};
use crate::resolve::{KeyField, Needs};
use crate::untrusted;
use serde::{Serialize, Serializer};

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

impl<T: IdField + ?Sized> Serialize for Ident<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.id_key() {
            // An integer id is a number in JSON, as the API that issued it writes it.
            IdKey::Int(n) => match (i64::try_from(n), u64::try_from(n)) {
                (Ok(n), _) => s.serialize_i64(n),
                (_, Ok(n)) => s.serialize_u64(n),
                _ => s.serialize_i128(n),
            },
            IdKey::Text(text) => s.serialize_str(if self.short { short_id(text) } else { text }),
        }
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
