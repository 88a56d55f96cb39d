//! Field views: borrowing adapters the derive wraps around each field, so projection writes
//! straight to the output with no intermediate value.
//!
//! Each view implements `serde::Serialize`; the same view feeds compact JSON, prose, table
//! cells and aggregation, through different serializers. The per-call state the views need
//! lives in a [`CallEnv`] (the tokenizer for caps, counters for the report) and a [`Cx`]
//! (adds the names from resolvers).

use crate::date::{DateField, DateValue, EpochField, EpochUnit};
pub(crate) use crate::env::{CallEnv, DateStyle};
use crate::ids::{IdField, IdKey, short_id};
use crate::resolve::{KeyField, Needs};
use crate::untrusted;
use serde::{Serialize, Serializer};

/// The context a record is projected in: the page's resolved names and the call's state.
pub struct Cx<'a, N: Needs> {
    names: &'a N::Names,
    env: &'a CallEnv<'a>,
}

impl<N: Needs> Clone for Cx<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N: Needs> Copy for Cx<'_, N> {}

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

impl<'a, T: ?Sized + Serialize> Shown<'a, T> {
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

/// A field that reads an empty value as absent (`#[shape(empty_is_absent)]`): written as
/// `None` (JSON `null`, the absence word in text) when `empty`, else as its view writes it.
pub struct OrAbsent<V> {
    empty: bool,
    view: V,
}

impl<V: Serialize> OrAbsent<V> {
    /// `view`, or absent when `empty`.
    pub fn new(empty: bool, view: V) -> Self {
        OrAbsent { empty, view }
    }
}

impl<V: Serialize> Serialize for OrAbsent<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.empty {
            true => s.serialize_none(),
            false => self.view.serialize(s),
        }
    }
}

/// A value that can be empty: text, a list, or an `Option` of one (`None` is empty too).
/// What `#[shape(empty_is_absent)]` is written on must be one.
#[diagnostic::on_unimplemented(
    message = "`empty_is_absent` needs text or a list, and `{Self}` is neither",
    label = "not text or a list",
    note = "`empty_is_absent` reads \"\" or an empty list as absent; remove it from this field"
)]
pub trait MayBeEmpty {
    /// Whether the value is empty.
    fn is_empty_value(&self) -> bool;
}

impl MayBeEmpty for str {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl MayBeEmpty for String {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl MayBeEmpty for std::borrow::Cow<'_, str> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for [T] {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for Vec<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for std::collections::VecDeque<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for std::collections::BTreeSet<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T, S> MayBeEmpty for std::collections::HashSet<T, S> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T: MayBeEmpty> MayBeEmpty for Option<T> {
    fn is_empty_value(&self) -> bool {
        self.as_ref().is_none_or(MayBeEmpty::is_empty_value)
    }
}

impl<T: MayBeEmpty + ?Sized> MayBeEmpty for &T {
    fn is_empty_value(&self) -> bool {
        (**self).is_empty_value()
    }
}

impl<T: MayBeEmpty + ?Sized> MayBeEmpty for Box<T> {
    fn is_empty_value(&self) -> bool {
        (**self).is_empty_value()
    }
}

/// Whether `value` is empty (see [`MayBeEmpty`]).
pub fn is_empty_value<T: MayBeEmpty + ?Sized>(value: &T) -> bool {
    value.is_empty_value()
}

/// A resolved field: key to name.
pub struct Named<'a, F, K> {
    value: &'a F,
    names: &'a crate::resolve::NameMap<K>,
    noun: &'static str,
    env: &'a CallEnv<'a>,
}

impl<'a, F: KeyField<K>, K> Named<'a, F, K> {
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

impl<'a, T: ?Sized + IdField> Ident<'a, T> {
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
            uuid @ IdKey::Uuid(_) => {
                let text = uuid.to_string();
                s.serialize_str(if self.short { short_id(&text) } else { &text })
            }
        }
    }
}

/// A date field, truncated to `YYYY-MM-DD`.
pub struct Dated<'a, T: ?Sized> {
    value: &'a T,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + DateField> Dated<'a, T> {
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

/// A number of seconds or milliseconds since the epoch, shown as its UTC date.
pub struct EpochDated<'a, T: ?Sized> {
    value: &'a T,
    unit: EpochUnit,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + EpochField> EpochDated<'a, T> {
    /// Wraps an epoch field.
    pub fn new(value: &'a T, unit: EpochUnit, env: &'a CallEnv<'a>) -> Self {
        EpochDated { value, unit, env }
    }
}

impl<T: EpochField + ?Sized> Serialize for EpochDated<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.epoch_value() {
            None => s.serialize_none(),
            Some(n) => match self.unit.day(n) {
                Some(day) => serialize_date(&day.to_string(), self.env, s),
                // Not a date in this unit: shown as given and counted, never guessed.
                None => {
                    self.env.note_unparsed_date();
                    s.collect_str(&n)
                }
            },
        }
    }
}

/// A field of text written by someone outside the system.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `untrusted`",
    label = "`untrusted` needs a text field",
    note = "`untrusted` works on String, &str, Box<str>, Cow<str>, Option of those and Vec of \
            those; for a newtype, implement `toolshape::UntrustedText` returning its text"
)]
pub trait UntrustedText {
    /// The text, or `None` for a null value (or a list).
    fn untrusted_text(&self) -> Option<&str>;
    /// Whether the field can be null.
    fn nullable() -> bool {
        false
    }
    /// For a list of texts (`Vec<String>`): each item's text; `None` for a single text.
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        None
    }
    /// Whether the field is a list of texts.
    fn is_list() -> bool {
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
/// A list of texts (GitHub label names, Jira comment bodies): each item is sanitised and marked
/// alone, and the cap is the list's, shared evenly, so a record never shows more
/// attacker-controlled tokens than its caps add up to. Past one token an item, the rest of the
/// list is left out with a marker that counts it (`[cut: 3 more items]`).
impl<T: UntrustedText> UntrustedText for Vec<T> {
    fn untrusted_text(&self) -> Option<&str> {
        None
    }
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        Some(self.iter().filter_map(T::untrusted_text).collect())
    }
    fn is_list() -> bool {
        true
    }
}

impl<T: UntrustedText> UntrustedText for Option<T> {
    fn untrusted_text(&self) -> Option<&str> {
        self.as_ref()?.untrusted_text()
    }
    fn nullable() -> bool {
        true
    }
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        self.as_ref()?.untrusted_items()
    }
    fn is_list() -> bool {
        T::is_list()
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

impl<'a, T: ?Sized + UntrustedText> Untrusted<'a, T> {
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
        if let Some(items) = self.value.untrusted_items() {
            return self.serialize_items(&items, s);
        }
        match self.value.untrusted_text() {
            None => s.serialize_none(),
            Some(text) => untrusted::serialize_untrusted(text, self.field, self.cap, self.env, s),
        }
    }
}

impl<T: ?Sized> Untrusted<'_, T> {
    fn serialize_items<S: Serializer>(&self, items: &[&str], s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        // The cap is the list's: at most `cap` items, each capped at an even share.
        let (shown, each) = match self.cap {
            None => (items.len(), None),
            Some(cap) => {
                let shown = items.len().min(cap as usize);
                let each = u32::try_from(shown).map_or(1, |n| (cap / n.max(1)).max(1));
                (shown, Some(each))
            }
        };
        let rest = items.len() - shown;
        let mut seq = s.serialize_seq(Some(shown + usize::from(rest > 0)))?;
        for text in &items[..shown] {
            seq.serialize_element(&UntrustedItem {
                text,
                field: self.field,
                cap: each,
                env: self.env,
            })?;
        }
        if rest > 0 {
            seq.serialize_element(&format_args!(
                "[cut: {rest} more item{}]",
                if rest == 1 { "" } else { "s" }
            ))?;
        }
        seq.end()
    }
}

struct UntrustedItem<'a> {
    text: &'a str,
    field: &'static str,
    cap: Option<u32>,
    env: &'a CallEnv<'a>,
}

impl Serialize for UntrustedItem<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        untrusted::serialize_untrusted(self.text, self.field, self.cap, self.env, s)
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
