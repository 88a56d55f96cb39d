//! A configured output's value: what its path reaches in a record ([`Reached`]), and how it
//! is written, through the same views the derive's fields go through (so a configured record
//! reads exactly as a derived one with the same decisions).

use super::plan::{OutputPlan, Plan, ValuePlan};
use super::read::Pruned;
use super::spec::{ConfiguredLegend, DateFrom, DayOf, Fold, Step};
use crate::fields::date::{DateField, DateValue};
use crate::fields::ids::IdKey;
use crate::fields::legend::LegendOut;
use crate::fields::rank::KeyValue;
use crate::fields::view::{Dated, EpochDated, Ident, OrAbsent, Untrusted};
use crate::record::call_env::CallEnv;
use crate::text::prose::Fallback;
use crate::text::{TextMode, TextSerializer};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::borrow::Cow;

pub(crate) use crate::fields::recorded::NOT_RECORDED;
use crate::fields::recorded::serialize_value_text;

/// What an output's path reaches in one record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reached<'p, 'a> {
    /// A key on the path is not in the record: the value was never recorded.
    NotRecorded,
    /// `null` on the path: the record has no value.
    Null,
    /// The value.
    Value(&'p Pruned<'a>),
    /// A path through `[]`: what the rest of the path reaches in each item.
    List(Vec<Reached<'p, 'a>>),
    /// A value of the wrong kind for the path to go on (text where `.key` or `[]` follows).
    Mismatch(&'p Pruned<'a>),
}

/// Follows `steps` from `value` (`None`: the key that led here is not there). A key followed
/// by `?` may be missing as well as null: either reads as absent; a key without one that is
/// missing was never recorded.
pub(crate) fn reach<'p, 'a>(value: Option<&'p Pruned<'a>>, steps: &[Step]) -> Reached<'p, 'a> {
    let Some(value) = value else {
        return match steps.first() {
            Some(Step::Opt) => Reached::Null,
            _ => Reached::NotRecorded,
        };
    };
    let Some((step, rest)) = steps.split_first() else {
        return match value {
            Pruned::Null => Reached::Null,
            value => Reached::Value(value),
        };
    };
    match (step, value) {
        (_, Pruned::Null) => Reached::Null,
        (Step::Key(key), Pruned::Object(_)) => reach(value.get(key), rest),
        (Step::Opt, _) => reach(Some(value), rest),
        (Step::Each, Pruned::List(items)) => {
            Reached::List(items.iter().map(|item| reach(Some(item), rest)).collect())
        }
        (Step::Key(_) | Step::Each, other) => Reached::Mismatch(other),
    }
}

impl<'a> Reached<'_, 'a> {
    /// Whether the value is empty text or an empty list (or none at all).
    fn is_empty(&self) -> bool {
        match self {
            Reached::Null => true,
            Reached::Value(Pruned::Str(text)) => text.is_empty(),
            Reached::Value(Pruned::List(items)) => items.is_empty(),
            Reached::List(items) => items.is_empty(),
            _ => false,
        }
    }

    /// The id this value is, when it is one.
    pub(crate) fn id_key(&self) -> Option<IdKey<'_>> {
        match self {
            Reached::Value(Pruned::Str(text)) => Some(IdKey::Text(text)),
            Reached::Value(Pruned::Number(n)) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .map(IdKey::Int),
            _ => None,
        }
    }

    /// The rank key this value is (through `[]`, folded).
    pub(crate) fn rank_key(&self, fold: Option<Fold>) -> KeyValue {
        let items = |reached: &Self| -> Vec<KeyValue> {
            match reached {
                Reached::List(items) => items.iter().map(|i| i.rank_key(None)).collect(),
                Reached::Value(Pruned::List(items)) => items.iter().map(key_of).collect(),
                _ => Vec::new(),
            }
        };
        match fold {
            None => match self {
                Reached::Value(value) => key_of(value),
                _ => KeyValue::Null,
            },
            Some(Fold::Max) => items(self)
                .into_iter()
                .max_by(KeyValue::total_cmp)
                .unwrap_or(KeyValue::Null),
            Some(Fold::Min) => items(self)
                .into_iter()
                .min_by(KeyValue::total_cmp)
                .unwrap_or(KeyValue::Null),
            Some(Fold::Count) => {
                let n = items(self).len();
                i64::try_from(n).map_or(KeyValue::UInt(n as u64), KeyValue::Int)
            }
            Some(Fold::Sum) => sum(items(self)),
        }
    }
}

/// A JSON value as a rank key: numbers as the derive's integer and float keys, text, bools;
/// anything else ranks as absent.
fn key_of(value: &Pruned<'_>) -> KeyValue {
    match value {
        Pruned::Bool(b) => KeyValue::Bool(*b),
        Pruned::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => KeyValue::Int(i),
            (None, Some(u), _) => KeyValue::UInt(u),
            (None, None, Some(f)) => KeyValue::Float(f),
            _ => KeyValue::Null,
        },
        Pruned::Str(text) => KeyValue::Str(text.as_ref().to_owned()),
        _ => KeyValue::Null,
    }
}

/// The sum of numbers as the derive sums them: exact integers while they fit, a float once
/// any value is one; an empty list sums to 0.
fn sum(values: Vec<KeyValue>) -> KeyValue {
    let mut int: i128 = 0;
    let mut float: Option<f64> = None;
    for value in values {
        match value {
            KeyValue::Int(v) => int = int.saturating_add(i128::from(v)),
            KeyValue::UInt(v) => int = int.saturating_add(i128::from(v)),
            KeyValue::Float(v) => *float.get_or_insert(0.0) += v,
            _ => {}
        }
    }
    match float {
        Some(f) => KeyValue::Float(f + int as f64),
        None => match (i64::try_from(int), u64::try_from(int)) {
            (Ok(i), _) => KeyValue::Int(i),
            (_, Ok(u)) => KeyValue::UInt(u),
            _ => KeyValue::Float(int as f64),
        },
    }
}

/// One output's value in one record, written in the channel being rendered.
pub(crate) struct OutputValue<'r, 'p, 'a> {
    pub reached: &'r Reached<'p, 'a>,
    pub output: &'r OutputPlan,
    pub name: &'r str,
    pub env: &'r CallEnv<'r>,
}

impl Serialize for OutputValue<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let view = ValueView {
            reached: self.reached,
            plan: &self.output.value,
            name: self.name,
            env: self.env,
        };
        if self.output.empty_is_absent {
            OrAbsent::new(self.reached.is_empty(), view).serialize(s)
        } else {
            view.serialize(s)
        }
    }
}

/// A reached value shaped as `plan` says.
struct ValueView<'r, 'p, 'a> {
    reached: &'r Reached<'p, 'a>,
    plan: &'r ValuePlan,
    name: &'r str,
    env: &'r CallEnv<'r>,
}

impl Serialize for ValueView<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let env = self.env;
        match (self.reached, self.plan) {
            (Reached::NotRecorded, _) => {
                env.note_not_recorded(self.name);
                s.serialize_str(NOT_RECORDED)
            }
            (Reached::Null, _) => s.serialize_none(),
            (Reached::Value(value), ValuePlan::Any { cap }) => self.any(value, *cap, s),
            // Outsiders' text stays outsiders' text whatever its kind: sanitised, capped and
            // marked, a list sharing its cap.
            (reached, ValuePlan::Untrusted { cap } | ValuePlan::Any { cap }) => {
                self.untrusted(reached, *cap, s)
            }
            (Reached::Mismatch(value), plan) => {
                env.note_unexpected(self.name);
                unexpected(value, plan, s)
            }
            (Reached::List(items), _) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&ValueView {
                        reached: item,
                        ..*self
                    })?;
                }
                seq.end()
            }
            (Reached::Value(value), plan) => self.value(value, plan, s),
        }
    }
}

impl<'a> ValueView<'_, '_, 'a> {
    fn value<S: Serializer>(
        &self,
        value: &Pruned<'a>,
        plan: &ValuePlan,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let env = self.env;
        match (plan, value) {
            (ValuePlan::Show, value) => show(value, s),
            (ValuePlan::Id { .. }, Pruned::Str(text)) if text == NOT_RECORDED => {
                serialize_value_text(text, s)
            }
            (ValuePlan::Id { short }, Pruned::Str(text)) => {
                Ident::new(&text.as_ref(), *short).serialize(s)
            }
            (ValuePlan::Id { short }, Pruned::Number(n)) if n.is_i64() || n.is_u64() => {
                match (n.as_i64(), n.as_u64()) {
                    (Some(i), _) => Ident::new(&i, *short).serialize(s),
                    (None, Some(u)) => Ident::new(&u, *short).serialize(s),
                    _ => value.serialize(s),
                }
            }
            (ValuePlan::Date(DateFrom::Iso(day)), Pruned::Str(text)) => Dated::new(
                &IsoText {
                    text: text.as_ref(),
                    day: *day,
                },
                env,
            )
            .serialize(s),
            (ValuePlan::Date(DateFrom::Epoch(unit)), Pruned::Number(n))
                if n.is_i64() || n.is_u64() =>
            {
                match (n.as_i64(), n.as_u64()) {
                    (Some(i), _) => EpochDated::new(&i, *unit, env).serialize(s),
                    (None, Some(u)) => EpochDated::new(&u, *unit, env).serialize(s),
                    _ => value.serialize(s),
                }
            }
            // No date: shown as given (as text) and counted, never guessed.
            (ValuePlan::Date(_), Pruned::Str(text)) => {
                env.note_unparsed_date();
                serialize_value_text(text, s)
            }
            (ValuePlan::Date(_), Pruned::Number(n)) => {
                env.note_unparsed_date();
                s.collect_str(n)
            }
            (ValuePlan::Legend(legend), Pruned::Str(code)) => {
                legend_out(legend, code, self.name, env).serialize(s)
            }
            (ValuePlan::Legend(legend), Pruned::Number(n)) => {
                legend_out(legend, &n.to_string(), self.name, env).serialize(s)
            }
            // A code of another kind (true, an object) is no code the legend has: its JSON
            // text as an unknown code, counted as such and as a value of another kind.
            (ValuePlan::Legend(legend), Pruned::Bool(_) | Pruned::Object(_)) => {
                env.note_unexpected(self.name);
                legend_out(legend, &compact(value), self.name, env).serialize(s)
            }
            (ValuePlan::Nested(inner), Pruned::Object(_)) => {
                env.within(self.name, || nested(value, inner, env, s))
            }
            (ValuePlan::Nested(inner), Pruned::List(items))
                if items
                    .iter()
                    .all(|i| matches!(i, Pruned::Object(_) | Pruned::Null)) =>
            {
                env.within(self.name, || {
                    let mut seq = s.serialize_seq(Some(items.len()))?;
                    for item in items {
                        seq.serialize_element(&NestedRecord {
                            record: item,
                            plan: inner,
                            env,
                        })?;
                    }
                    seq.end()
                })
            }
            // A list where one value was configured: each item shaped alike.
            (plan, Pruned::List(items)) if !matches!(plan, ValuePlan::Nested(_)) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&ItemView {
                        item,
                        view: self,
                        plan,
                    })?;
                }
                seq.end()
            }
            // A value of another kind than configured: shown as it is, and counted.
            (plan, value) => {
                env.note_unexpected(self.name);
                unexpected(value, plan, s)
            }
        }
    }

    fn untrusted<S: Serializer>(
        &self,
        reached: &Reached<'_, 'a>,
        cap: Option<u32>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let env = self.env;
        let mut texts: Vec<Cow<'_, str>> = Vec::new();
        match reached {
            Reached::NotRecorded | Reached::Null => return s.serialize_none(),
            Reached::Value(Pruned::Str(text)) => {
                return Untrusted::new(&text.as_ref(), self.name, cap, env).serialize(s);
            }
            Reached::Value(Pruned::List(items)) => {
                for item in items {
                    self.push_text(item, &mut texts);
                }
            }
            Reached::List(items) => {
                for item in items {
                    match item {
                        Reached::Value(value) | Reached::Mismatch(value) => {
                            self.push_text(value, &mut texts)
                        }
                        Reached::NotRecorded => env.note_not_recorded(self.name),
                        Reached::Null => {}
                        Reached::List(inner) => {
                            for value in inner {
                                if let Reached::Value(value) | Reached::Mismatch(value) = value {
                                    self.push_text(value, &mut texts);
                                }
                            }
                        }
                    }
                }
            }
            Reached::Value(value) | Reached::Mismatch(value) => {
                env.note_unexpected(self.name);
                let text = compact(value);
                return Untrusted::new(&text.as_str(), self.name, cap, env).serialize(s);
            }
        }
        let items: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        Untrusted::new(&items, self.name, cap, env).serialize(s)
    }

    /// A value nobody described: numbers, booleans and null as they are, text and anything
    /// holding text as outsiders' text.
    fn any<S: Serializer>(
        &self,
        value: &Pruned<'_>,
        cap: Option<u32>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Pruned::Str(text) => {
                Untrusted::new(&text.as_ref(), self.name, cap, self.env).serialize(s)
            }
            Pruned::List(_) | Pruned::Object(_) => {
                let text = compact(value);
                Untrusted::new(&text.as_str(), self.name, cap, self.env).serialize(s)
            }
            other => other.serialize(s),
        }
    }

    /// An item of an untrusted list as text: text as it is, anything else as its compact
    /// JSON (counted), null left out as the derive leaves out `None` items.
    fn push_text<'v>(&self, value: &'v Pruned<'_>, texts: &mut Vec<Cow<'v, str>>) {
        match value {
            Pruned::Str(text) => texts.push(Cow::Borrowed(text.as_ref())),
            Pruned::Null => {}
            other => {
                self.env.note_unexpected(self.name);
                texts.push(Cow::Owned(compact(other)));
            }
        }
    }
}

/// ISO-8601 text read as a configured `date` says: its day in UTC, or as written.
struct IsoText<'t> {
    text: &'t str,
    day: DayOf,
}

impl DateField for IsoText<'_> {
    fn date_value(&self) -> DateValue<'_> {
        self.day.date_value(self.text)
    }
}

/// One item of a list whose output configured one value.
struct ItemView<'v, 'r, 'p, 'a> {
    item: &'v Pruned<'a>,
    view: &'v ValueView<'r, 'p, 'a>,
    plan: &'v ValuePlan,
}

impl Serialize for ItemView<'_, '_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.item {
            Pruned::Null => s.serialize_none(),
            item => self.view.value(item, self.plan, s),
        }
    }
}

/// A value of another kind than its output expects, shown as it is: as its JSON where any
/// value may stand (`show`, a nested record), else as its compact JSON text, so an id, a
/// date or a legend's word stays text (or an integer id) as the schema says.
fn unexpected<S: Serializer>(
    value: &Pruned<'_>,
    plan: &ValuePlan,
    s: S,
) -> Result<S::Ok, S::Error> {
    match plan {
        ValuePlan::Show | ValuePlan::Nested(_) => show(value, s),
        _ => s.serialize_str(&compact(value)),
    }
}

/// A value shown as it is; text that is the marker's words quoted, so it does not read as a
/// key that is missing.
fn show<S: Serializer>(value: &Pruned<'_>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Pruned::Str(text) => serialize_value_text(text, s),
        value => value.serialize(s),
    }
}

fn compact(value: &Pruned<'_>) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn legend_out<'a>(
    legend: &'a ConfiguredLegend,
    code: &str,
    field: &'a str,
    env: &'a CallEnv<'a>,
) -> LegendOut<'a> {
    match legend.words.get(code) {
        Some(word) => LegendOut::Word(word),
        None => LegendOut::Unknown {
            field,
            code: code.to_owned(),
            env,
        },
    }
}

/// A nested record: as JSON, its own outputs; in words, its own prose line (or `name value`
/// pairs), as a derived nested record reads.
struct NestedRecord<'r, 'a> {
    record: &'r Pruned<'a>,
    plan: &'r Plan,
    env: &'r CallEnv<'r>,
}

impl Serialize for NestedRecord<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.record {
            Pruned::Null => s.serialize_none(),
            record => nested(record, self.plan, self.env, s),
        }
    }
}

fn nested<S: Serializer>(
    record: &Pruned<'_>,
    plan: &Plan,
    env: &CallEnv<'_>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let reached = reach_all(record, plan);
    if !env.writing_words() {
        return write_object(plan, &reached, env, s);
    }
    let mut line = String::new();
    crate::text::prose::fill(
        &plan.projection,
        Fallback::Inline,
        &mut line,
        |line, text| line.push_str(text),
        |index, line: &mut String| {
            let absent = plan.projection.fields[index].absent.as_deref();
            output_value(plan, &reached, index, env)
                .serialize(TextSerializer::new(line, TextMode::Raw).absent(absent))
                .map_err(serde::ser::Error::custom)
        },
    )?;
    s.serialize_str(&line)
}

/// What each of `plan`'s outputs reaches in `record`.
pub(crate) fn reach_all<'p, 'a>(record: &'p Pruned<'a>, plan: &Plan) -> Vec<Reached<'p, 'a>> {
    plan.outputs
        .iter()
        .map(|o| reach(Some(record), &o.steps))
        .collect()
}

/// Output `index` of a record whose outputs reached `reached`.
pub(crate) fn output_value<'r, 'p, 'a>(
    plan: &'r Plan,
    reached: &'r [Reached<'p, 'a>],
    index: usize,
    env: &'r CallEnv<'r>,
) -> OutputValue<'r, 'p, 'a> {
    OutputValue {
        reached: &reached[index],
        output: &plan.outputs[index],
        name: &plan.projection.fields[index].name,
        env,
    }
}

/// The record as a JSON object of its outputs.
pub(crate) fn write_object<S: Serializer>(
    plan: &Plan,
    reached: &[Reached<'_, '_>],
    env: &CallEnv<'_>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let shown = (0..plan.outputs.len())
        .filter(|&i| shows(plan, reached, i))
        .count();
    let mut map = s.serialize_map(Some(shown))?;
    for (index, field) in plan.projection.fields.iter().enumerate() {
        if shows(plan, reached, index) {
            map.serialize_entry(&field.name, &output_value(plan, reached, index, env))?;
        }
    }
    map.end()
}

/// Whether the record shows output `index`: always, unless the plan leaves out the keys a
/// record does not have ([`Plan::omit_absent`]) and this one's key is not there.
pub(crate) fn shows(plan: &Plan, reached: &[Reached<'_, '_>], index: usize) -> bool {
    !(plan.omit_absent && matches!(reached.get(index), Some(Reached::NotRecorded)))
}
