//! The third absence: a value the source never wrote ([`Recorded::NotRecorded`]), told apart
//! from one it wrote as `null` ([`Recorded::Null`]) and from a field the view leaves out
//! (`omitted.fields`). "An object with no `sla_due_at` key reads identically whether the
//! projection dropped the field, the record genuinely has no due date, or the column was
//! added to the schema after this row was written": with `Recorded`, each reads as itself.

use crate::fields::date::{DateField, DateValue, EpochField};
use crate::fields::legend::{LegendCode, LegendField, LegendOut, LegendSource};
use crate::fields::rank::{KeyValue, RankKey};
use crate::fields::view::{CallEnv, MayBeEmpty, UntrustedText};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;

/// What every format shows for a value its source never wrote. The bare words are the
/// marker's alone: a value whose text is these words is written quoted as outsiders' text,
/// `«not recorded»`, wherever it would otherwise read bare (a configured record's value, any
/// `untrusted` value in a channel that does not mark values one by one), so a value cannot
/// pass for a key that is missing.
pub const NOT_RECORDED: &str = "not recorded";

/// Writes `text`, a value's own text, so that it never reads as the [`NOT_RECORDED`] marker:
/// as it is, or `«not recorded»` when it is the marker's words.
pub(crate) fn serialize_value_text<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    if text == NOT_RECORDED {
        s.collect_str(&ValueText(text))
    } else {
        s.serialize_str(text)
    }
}

/// A value's own text, quoted when it is the marker's words.
pub(crate) struct ValueText<'a>(pub &'a str);

impl std::fmt::Display for ValueText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == NOT_RECORDED {
            write!(f, "«{}»", self.0)
        } else {
            f.write_str(self.0)
        }
    }
}

/// A value that a source may never have written: a key missing from a record (the column
/// added after the row was written), apart from a key written as `null`.
///
/// With serde, mark the field `#[serde(default)]`: a missing key is then
/// [`NotRecorded`](Recorded::NotRecorded), `null` is [`Null`](Recorded::Null), anything else
/// the value. Every view of the derive reads it: `not recorded` in every format (and in the
/// schema), `null` (or the absence word) for `Null`, the value shaped as its field says; each
/// one not recorded is counted in the report ([`Diagnostics::not_recorded`](crate::report::Diagnostics)).
///
/// ```
/// use toolshape::{Recorded, Shaper, ToolResult};
///
/// #[derive(serde::Deserialize, ToolResult)]
/// #[shape(name = "ticket", plural = "tickets", prose = "{id}: due {sla_due}")]
/// struct Ticket {
///     #[shape(id)]
///     id: u32,
///     #[serde(default)]
///     #[shape(date, rename = "sla_due", absent = "no due date")]
///     sla_due_at: Recorded<String>,
/// }
///
/// let rows: Vec<Ticket> = serde_json::from_str(r#"[
///     {"id": 1, "sla_due_at": "2026-02-14T16:00:00Z"},
///     {"id": 2, "sla_due_at": null},
///     {"id": 3}
/// ]"#).unwrap();
/// let page = Shaper::for_tool("search").shape_blocking(&rows).unwrap();
/// assert_eq!(
///     page.text(),
///     "ok: 3 tickets; dates are in 2026.\n1: due Feb 14\n2: due no due date\n3: due not recorded\n"
/// );
/// assert_eq!(page.structured()["data"][2]["sla_due"], "not recorded");
/// assert_eq!(page.report().diagnostics.not_recorded["sla_due"], 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Recorded<T> {
    /// The source never wrote the value.
    #[default]
    NotRecorded,
    /// The source wrote `null`: it has no value.
    Null,
    /// The value.
    Value(T),
}

impl<T> Recorded<T> {
    /// The value, if there is one.
    pub fn as_option(&self) -> Option<&T> {
        match self {
            Recorded::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the source never wrote it.
    pub fn is_not_recorded(&self) -> bool {
        matches!(self, Recorded::NotRecorded)
    }
}

impl<T> From<Option<T>> for Recorded<T> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Recorded::Null, Recorded::Value)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Recorded<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(d).map(Recorded::from)
    }
}

/// `not recorded`, `null`, or the value.
impl<T: Serialize> Serialize for Recorded<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Recorded::NotRecorded => s.serialize_str(NOT_RECORDED),
            Recorded::Null => s.serialize_none(),
            Recorded::Value(v) => v.serialize(s),
        }
    }
}

impl<T: JsonSchema> JsonSchema for Recorded<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Recorded_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let inner = generator.subschema_for::<T>();
        json_schema!({ "anyOf": [inner.to_value(), { "type": "null" }, not_recorded_schema()] })
    }
}

/// The schema of the `not recorded` marker.
pub(crate) fn not_recorded_schema() -> serde_json::Value {
    serde_json::json!({ "const": NOT_RECORDED, "description": "the source never wrote this value" })
}

impl<T: DateField> DateField for Recorded<T> {
    fn date_value(&self) -> DateValue<'_> {
        match self {
            Recorded::Value(v) => v.date_value(),
            _ => DateValue::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
}

impl<T: EpochField> EpochField for Recorded<T> {
    fn epoch_value(&self) -> Option<i128> {
        self.as_option()?.epoch_value()
    }
    fn nullable() -> bool {
        true
    }
}

impl<T: UntrustedText> UntrustedText for Recorded<T> {
    fn untrusted_text(&self) -> Option<&str> {
        self.as_option()?.untrusted_text()
    }
    fn nullable() -> bool {
        true
    }
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        self.as_option()?.untrusted_items()
    }
    fn is_list() -> bool {
        T::is_list()
    }
}

impl<C> LegendField<C> for Recorded<C> {
    fn coded<'a, L: LegendSource<Code = C> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a>
    where
        C: LegendCode,
    {
        match self {
            Recorded::Value(code) => code.coded(legend, field, env),
            _ => LegendOut::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
    fn may_be_not_recorded() -> bool {
        true
    }
}

impl LegendField<&'static str> for Recorded<String> {
    fn coded<'a, L: LegendSource<Code = &'static str> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a> {
        match self {
            Recorded::Value(code) => code.coded(legend, field, env),
            _ => LegendOut::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
    fn may_be_not_recorded() -> bool {
        true
    }
}

/// As `Option`'s order: not recorded and null alike before any value.
impl<T: RankKey> RankKey for Recorded<T> {
    fn rank_cmp(&self, other: &Self) -> Ordering {
        match (self.as_option(), other.as_option()) {
            (Some(a), Some(b)) => a.rank_cmp(b),
            (a, b) => a.is_some().cmp(&b.is_some()),
        }
    }
    fn key_value(&self) -> KeyValue {
        self.as_option().map_or(KeyValue::Null, RankKey::key_value)
    }
}

impl<T: MayBeEmpty> MayBeEmpty for Recorded<T> {
    fn is_empty_value(&self) -> bool {
        self.as_option().is_none_or(MayBeEmpty::is_empty_value)
    }
}

impl<T> crate::text::MayBeAbsent for Recorded<T> {}

/// Whether a value at a derived field's place was never recorded: the derive asks
/// `(&&RecordedProbe(&value)).not_recorded()` with [`IsRecorded`] and [`AnyRecorded`] in
/// scope; a [`Recorded`] answers, any other type says no.
pub struct RecordedProbe<'a, T: ?Sized>(pub &'a T);

/// The answer of a [`Recorded`] value.
pub trait IsRecorded {
    /// Whether the source never wrote the value.
    fn not_recorded(&self) -> bool;
}

impl<T> IsRecorded for &RecordedProbe<'_, Recorded<T>> {
    fn not_recorded(&self) -> bool {
        self.0.is_not_recorded()
    }
}

/// The answer of any other value: always recorded.
pub trait AnyRecorded {
    /// Never.
    fn not_recorded(&self) -> bool {
        false
    }
}

impl<T: ?Sized> AnyRecorded for RecordedProbe<'_, T> {}

/// A derived field's view, or `not recorded` (counted) when the source never wrote it.
pub struct RecordedView<'a, V> {
    not_recorded: bool,
    field: &'a str,
    env: &'a CallEnv<'a>,
    view: V,
}

impl<'a, V> RecordedView<'a, V> {
    /// `view`, unless `not_recorded`.
    pub fn new(not_recorded: bool, field: &'a str, env: &'a CallEnv<'a>, view: V) -> Self {
        RecordedView {
            not_recorded,
            field,
            env,
            view,
        }
    }
}

impl<V: Serialize> Serialize for RecordedView<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.not_recorded {
            self.env.note_not_recorded(self.field);
            return s.serialize_str(NOT_RECORDED);
        }
        self.view.serialize(s)
    }
}
