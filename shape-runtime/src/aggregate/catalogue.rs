//! The field catalogue of stored records: each field's name ([`FieldName`]), role and the
//! values it holds ([`FieldMeta`], [`ValueType`]); finding a field by name, with a suggestion
//! when the name is unknown ([`FieldError`]); and how stored values compare. Aggregation and
//! the `open_result` query language both validate against it.

use crate::record::FieldRole;
use crate::record::{FieldRef, Projection, Storage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// One projected record as JSON: what a handle stores and what a typed page turns into.
pub type Row = Map<String, Value>;

/// The name of an output field, as it appears in tool results.
///
/// Every API that names a field takes `impl Into<FieldName>`, so a `&str` works today and a
/// typed field reference (checked by the compiler) can convert into one. On the wire it is a
/// plain string.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
#[schemars(inline, description = "A field of the stored records.")]
pub struct FieldName(String);

impl FieldName {
    /// A field name.
    pub fn new(name: impl Into<String>) -> FieldName {
        FieldName(name.into())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<FieldRef> for FieldName {
    fn from(field: FieldRef) -> FieldName {
        FieldName(field.name().to_owned())
    }
}

impl From<&str> for FieldName {
    fn from(name: &str) -> FieldName {
        FieldName(name.to_owned())
    }
}

impl From<String> for FieldName {
    fn from(name: String) -> FieldName {
        FieldName(name)
    }
}

impl From<&String> for FieldName {
    fn from(name: &String) -> FieldName {
        FieldName(name.clone())
    }
}

impl From<&FieldName> for FieldName {
    fn from(name: &FieldName) -> FieldName {
        name.clone()
    }
}

impl AsRef<str> for FieldName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for FieldName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for FieldName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What JSON values a field holds (null aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueType {
    /// Not known, or mixed: operations that fit some values are allowed and the values that do
    /// not fit are counted.
    Any,
    /// Numbers.
    Number,
    /// Strings.
    Text,
    /// `true` / `false`.
    Bool,
    /// Arrays (labels, tags); counted and matched per element.
    List,
}

/// One field of a stored result, as aggregation and queries see it.
///
/// Build the list with [`FieldMeta::from_projection`] (and refine plain fields with
/// [`FieldMeta::infer_values`]), or by hand with the constructors.
///
/// ```
/// use toolshape::__seams::{aggregate::{FieldMeta, ValueType}, record::FieldRole};
///
/// let labels = FieldMeta::list("labels");
/// assert_eq!((labels.role, labels.value), (FieldRole::Show, ValueType::List));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldMeta {
    /// The output field's name.
    pub name: String,
    /// How it was shaped.
    pub role: FieldRole,
    /// What values it holds.
    pub value: ValueType,
}

impl FieldMeta {
    /// A field with this role and value type.
    pub fn new(name: impl Into<String>, role: FieldRole, value: ValueType) -> FieldMeta {
        FieldMeta {
            name: name.into(),
            role,
            value,
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A plain field holding numbers.
    pub fn number(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Number)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A plain field holding text.
    pub fn text(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Text)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A plain field holding lists (labels, tags).
    pub fn list(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::List)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A plain field holding `true` / `false`.
    pub fn boolean(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Bool)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A legend field (a code shown as a word).
    pub fn legend(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Legend, ValueType::Text)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A resolved field (a key shown as a name).
    pub fn resolved(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Resolve, ValueType::Text)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// The id field.
    pub fn id(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Id, ValueType::Text)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// A date field (`YYYY-MM-DD`).
    pub fn date(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Date, ValueType::Text)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// An untrusted text field.
    pub fn untrusted(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Untrusted, ValueType::Text)
    }

    /// The fields of a projection, in output order. Plain (`Show`) fields get
    /// [`ValueType::Any`]: the projection does not say what they hold; call
    /// [`infer_values`](FieldMeta::infer_values) with the rows to find out.
    pub fn from_projection<S: Storage>(projection: &Projection<S>) -> Vec<FieldMeta> {
        projection
            .fields
            .as_ref()
            .iter()
            .map(|f| {
                let role = f.kind.role();
                let value = if role == FieldRole::Show {
                    ValueType::Any
                } else {
                    ValueType::Text
                };
                FieldMeta::new(f.name.as_ref(), role, value)
            })
            .collect()
    }

    /// Sets the value type of every plain field still [`ValueType::Any`] from the rows: the
    /// type all its non-null values share, or `Any` if they differ or are all null.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolshape::__seams::aggregate::{FieldMeta, ValueType};
    ///
    /// let mut fields = vec![FieldMeta::new("comments", toolshape::__seams::record::FieldRole::Show, ValueType::Any)];
    /// let rows = [json!({"comments": 3}), json!({"comments": null})];
    /// let rows: Vec<_> = rows.iter().filter_map(|r| r.as_object().cloned()).collect();
    /// FieldMeta::infer_values(&mut fields, &rows);
    /// assert_eq!(fields[0].value, ValueType::Number);
    /// ```
    ///
    /// A field of outsiders' values whose values are all numbers, or all true/false (a
    /// record nobody described: `"comments": 3`), holds no text an outsider wrote: it is a
    /// plain field of that type, which counts, ranks and sums like any other.
    pub fn infer_values(fields: &mut [FieldMeta], rows: &[Row]) {
        for field in fields.iter_mut() {
            if field.role == FieldRole::Untrusted {
                let mut values = rows
                    .iter()
                    .filter_map(|r| r.get(&field.name))
                    .filter(|v| !v.is_null())
                    .peekable();
                let first = values.peek().map(|v| (v.is_number(), v.is_boolean()));
                let plain = match first {
                    Some((true, _)) => values.all(Value::is_number).then_some(ValueType::Number),
                    Some((_, true)) => values.all(Value::is_boolean).then_some(ValueType::Bool),
                    _ => None,
                };
                if let Some(value) = plain {
                    field.role = FieldRole::Show;
                    field.value = value;
                }
                continue;
            }
            if field.role != FieldRole::Show || field.value != ValueType::Any {
                continue;
            }
            let mut seen: Option<ValueType> = None;
            let mut mixed = false;
            for value in rows.iter().filter_map(|r| r.get(&field.name)) {
                let t = match value {
                    Value::Null => continue,
                    Value::Number(_) => ValueType::Number,
                    Value::String(_) => ValueType::Text,
                    Value::Bool(_) => ValueType::Bool,
                    Value::Array(_) => ValueType::List,
                    Value::Object(_) => ValueType::Any,
                };
                match seen {
                    None => seen = Some(t),
                    Some(s) if s == t => {}
                    Some(_) => {
                        mixed = true;
                        break;
                    }
                }
            }
            if !mixed {
                field.value = seen.unwrap_or(ValueType::Any);
            }
        }
    }

    /// How the field reads in an error message: "a date field", "a list field".
    pub fn describe(&self) -> &'static str {
        match self.role {
            FieldRole::Legend => "a legend field",
            FieldRole::Resolve => "a resolved name",
            FieldRole::Id => "the id field",
            FieldRole::Date => "a date field",
            FieldRole::Untrusted => "untrusted text",
            FieldRole::Show => match self.value {
                ValueType::Number => "a number field",
                ValueType::Text => "a text field",
                ValueType::Bool => "a true/false field",
                ValueType::List => "a list field",
                ValueType::Any => "a field of mixed values",
            },
        }
    }

    pub(crate) fn numeric(&self) -> bool {
        self.role == FieldRole::Show && matches!(self.value, ValueType::Number | ValueType::Any)
    }

    // Ids are not categories: an id is unique. Untrusted text is, its values quoted in the
    // summary as outsiders' text is everywhere else (`AggregateResult::sentence`).
    pub(crate) fn categorical(&self) -> bool {
        matches!(
            self.role,
            FieldRole::Show
                | FieldRole::Legend
                | FieldRole::Resolve
                | FieldRole::Date
                | FieldRole::Untrusted
        )
    }
}

/// A field named in an aggregate or a query that does not exist, or that the operation cannot
/// use. The message names the fields that would work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// No field has this name.
    #[error("unknown field `{}` in {op}{}; {}", crate::untrusted::echo::reveal(.field).0, notes(.field, .suggestion), valid_list(.op, .valid))]
    Unknown {
        /// The operation that named it (`filter`, `top`, …).
        op: &'static str,
        /// The name given, as given (the message shows its unseen characters escaped: a
        /// name refused for characters a reader cannot see never reads as a valid one).
        field: String,
        /// The closest valid name, if one is close.
        suggestion: Option<String>,
        /// The fields this operation can use.
        valid: Vec<String>,
    },
    /// The field exists but this operation cannot use it.
    #[error("{op} cannot use `{field}`, {what}; {}", valid_list(.op, .valid))]
    Unsupported {
        /// The operation.
        op: &'static str,
        /// The field.
        field: String,
        /// What the field is ("a text field").
        what: &'static str,
        /// The fields this operation can use.
        valid: Vec<String>,
    },
}

/// What the message of an unknown `field` adds after quoting it: that it holds characters a
/// reader cannot see (shown escaped), and the closest valid name.
/// ` (it holds 2 invisible characters, shown escaped; did you mean `title`?)`.
fn notes(field: &str, suggestion: &Option<String>) -> String {
    let hidden = crate::untrusted::echo::reveal(field).1;
    match (hidden, suggestion) {
        (0, None) => String::new(),
        (0, Some(s)) => format!(" (did you mean `{s}`?)"),
        (n, None) => crate::untrusted::echo::hidden_note(n),
        (n, Some(s)) => {
            let note = crate::untrusted::echo::hidden_note(n);
            let note = note.strip_suffix(')').unwrap_or(&note);
            format!("{note}; did you mean `{s}`?)")
        }
    }
}

fn valid_list(op: &str, valid: &[String]) -> String {
    if valid.is_empty() {
        format!("no field in this result works with {op}")
    } else if op == "filter" || op == "select" || op == "equals" {
        format!("valid fields: {}", valid.join(", "))
    } else {
        format!("{op} works on: {}", valid.join(", "))
    }
}

/// Finds `name` among `fields` for operation `op`, which can use the fields `fits` accepts.
pub(crate) fn find_field<'f>(
    fields: &'f [FieldMeta],
    name: &str,
    op: &'static str,
    fits: fn(&FieldMeta) -> bool,
) -> Result<&'f FieldMeta, FieldError> {
    let valid = || {
        fields
            .iter()
            .filter(|f| fits(f))
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    };
    match fields.iter().find(|f| f.name == name) {
        Some(field) if fits(field) => Ok(field),
        Some(field) => Err(FieldError::Unsupported {
            op,
            field: name.to_owned(),
            what: field.describe(),
            valid: valid(),
        }),
        None => {
            let valid = valid();
            // Looked up by what a reader sees of the name, so `ti\u{202E}tle` suggests
            // `title`.
            let seen = crate::untrusted::echo::visible(name);
            let suggestion = closest(&seen, fields.iter().map(|f| f.name.as_str()));
            Err(FieldError::Unknown {
                op,
                field: name.to_owned(),
                suggestion,
                valid,
            })
        }
    }
}

/// The candidate within edit distance 2 of `name` (and closer than the name is long).
pub(crate) fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let name: Vec<char> = name.chars().take(64).collect();
    candidates
        .map(|c| {
            (
                edit_distance(&name, &c.chars().take(64).collect::<Vec<_>>()),
                c,
            )
        })
        .filter(|&(d, _)| d <= 2 && d < name.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c.to_owned())
}

pub(crate) fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

pub(crate) fn int_of(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // Whole floats within the exactly representable range count as the integer.
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i128)
}

/// Numeric comparison of two JSON numbers: exact for integers, `total_cmp` otherwise.
pub(crate) fn num_cmp(a: &Number, b: &Number) -> Ordering {
    match (int_of(a), int_of(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&b.as_f64().unwrap_or(0.0)),
    }
}

/// A total order over JSON values: null, bools, numbers (by value), strings (bytewise), arrays
/// (element by element), objects (by their JSON text).
pub(crate) fn value_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = value_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(_), Value::Object(_)) => a.to_string().cmp(&b.to_string()),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality of JSON values with numbers compared by value (`3 == 3.0`).
pub(crate) fn value_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| value_eq(p, q))
        }
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Ordering::Equal,
        _ => a == b,
    }
}
