//! Aggregation: answers about counts without rows.
//!
//! "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98"
//! answers "is this repository healthy" in one sentence; returning 1,412 rows to answer it is
//! a category error. This module owns:
//!
//! - [`Aggregate`], what to count (the model asks for one through `open_result`, a Rust caller
//!   builds one), validated against the fields into a [`ValidAggregate`];
//! - [`AggregateResult`], what was counted, for the JSON channel and as one
//!   [sentence](AggregateResult::sentence);
//! - [`FieldMeta`], a field of the record description ([`Projection`]) with the type of value
//!   the rows hold, which aggregation and `query` (the `open_result` query language) validate against, and
//!   [`FieldError`], what they say when a field is unknown or unfit for an operation.
//!
//! Aggregation works over projected records as JSON rows (`serde_json::Map`): dates are
//! `YYYY-MM-DD` text, legends words, resolved fields names or null, list fields arrays.
//! Null and missing values are counted, never dropped.
//!
//! ```
//! use serde_json::json;
//! use toolshape::{Day, aggregate::{Aggregate, FieldMeta}};
//!
//! let fields = [FieldMeta::legend("state"), FieldMeta::list("labels"), FieldMeta::date("opened")];
//! let rows: Vec<_> = [
//!     json!({"state": "open", "labels": ["bug", "ui"], "opened": "2026-03-01"}),
//!     json!({"state": "open", "labels": ["bug"], "opened": "2026-01-05"}),
//!     json!({"state": "closed", "labels": ["docs"], "opened": "2026-02-20"}),
//!     json!({"state": "open", "labels": [], "opened": "2026-02-27"}),
//! ]
//! .into_iter()
//! .filter_map(|v| v.as_object().cloned())
//! .collect();
//!
//! let today: Day = "2026-03-02".parse()?;
//! let result = Aggregate::new().recent("opened", 30).top("labels", 2).compute(&fields, &rows, today)?;
//! assert_eq!(
//!     result.sentence("issues"),
//!     "4 issues, 75% opened in the last 30 days, top labels: bug 2, docs 1, no labels 1"
//! );
//! assert_eq!(result.recent.as_ref().map(|r| r.count), Some(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::date::Day;
use crate::record::FieldRole;
use crate::record::{FieldRef, Projection, Storage};
use crate::text::thousands;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

/// One projected record as JSON: what a handle stores and what a typed page turns into.
pub type Row = Map<String, Value>;

/// Most values `count_by` lists by name; the rest are summed into one "others" bucket.
pub const COUNT_BY_MAX: usize = 20;
/// Largest `k` a `top` may ask for.
pub const TOP_K_MAX: u32 = 50;
/// `k` when a `top` does not say.
pub const TOP_K_DEFAULT: u32 = 3;
/// Largest `days` a `recent` may ask for (about a hundred years).
pub const RECENT_DAYS_MAX: u32 = 36_500;

// ---------------------------------------------------------------------------------------------
// Field names and field metadata
// ---------------------------------------------------------------------------------------------

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
/// use toolshape::{aggregate::{FieldMeta, ValueType}, record::FieldRole};
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

    /// A plain field holding numbers.
    pub fn number(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Number)
    }

    /// A plain field holding text.
    pub fn text(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Text)
    }

    /// A plain field holding lists (labels, tags).
    pub fn list(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::List)
    }

    /// A plain field holding `true` / `false`.
    pub fn boolean(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Show, ValueType::Bool)
    }

    /// A legend field (a code shown as a word).
    pub fn legend(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Legend, ValueType::Text)
    }

    /// A resolved field (a key shown as a name).
    pub fn resolved(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Resolve, ValueType::Text)
    }

    /// The id field.
    pub fn id(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Id, ValueType::Text)
    }

    /// A date field (`YYYY-MM-DD`).
    pub fn date(name: impl Into<String>) -> FieldMeta {
        FieldMeta::new(name, FieldRole::Date, ValueType::Text)
    }

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
    /// use toolshape::{aggregate::{FieldMeta, ValueType}};
    ///
    /// let mut fields = vec![FieldMeta::new("comments", toolshape::record::FieldRole::Show, ValueType::Any)];
    /// let rows = [json!({"comments": 3}), json!({"comments": null})];
    /// let rows: Vec<_> = rows.iter().filter_map(|r| r.as_object().cloned()).collect();
    /// FieldMeta::infer_values(&mut fields, &rows);
    /// assert_eq!(fields[0].value, ValueType::Number);
    /// ```
    pub fn infer_values(fields: &mut [FieldMeta], rows: &[Row]) {
        for field in fields.iter_mut() {
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

    // Ids and untrusted text are not categories: an id is unique, and counting untrusted
    // values would put text an outsider wrote into the summary sentence, uncapped.
    pub(crate) fn categorical(&self) -> bool {
        matches!(
            self.role,
            FieldRole::Show | FieldRole::Legend | FieldRole::Resolve | FieldRole::Date
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
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
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

fn edit_distance(a: &[char], b: &[char]) -> usize {
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

// ---------------------------------------------------------------------------------------------
// The spec
// ---------------------------------------------------------------------------------------------

/// What to count over a result's records. Every part is optional; the total is always given.
///
/// From JSON (what `open_result` accepts):
///
/// ```
/// use toolshape::aggregate::Aggregate;
///
/// let spec: Aggregate = serde_json::from_str(
///     r#"{"recent": {"field": "opened", "days": 30}, "top": [{"field": "labels", "k": 3}]}"#,
/// )?;
/// assert_eq!(spec, Aggregate::new().recent("opened", 30).top("labels", 3));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "What to count over the matching records. Every part is optional; the total \
                   is always given."
)]
pub struct Aggregate {
    /// Count records per value of this field (a status, an assignee), most frequent first.
    /// Records with no value are counted as such. Not for list fields: use `top`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_by: Option<FieldName>,
    /// The most frequent values of these fields; a list field (labels) counts each element,
    /// once per record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<Top>,
    /// The share of records whose date field falls within the last `days` days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent: Option<Recent>,
    /// Minimum, maximum and mean of these number fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats: Vec<FieldName>,
}

/// The `k` most frequent values of a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Top {
    /// The field to count.
    pub field: FieldName,
    /// How many values to list (1 to 50; default 3). Ties are listed alphabetically.
    #[serde(default = "default_k")]
    #[schemars(range(min = 1, max = 50))]
    pub k: u32,
}

fn default_k() -> u32 {
    TOP_K_DEFAULT
}

/// The share of records dated within the last `days` days (today included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recent {
    /// A date field.
    pub field: FieldName,
    /// How many days back, today included (1 to 36500).
    #[schemars(range(min = 1, max = 36500))]
    pub days: u32,
}

impl Aggregate {
    /// An aggregate that counts only the total; add parts with the builder methods.
    pub fn new() -> Aggregate {
        Aggregate::default()
    }

    /// Counts records per value of `field`.
    pub fn count_by(mut self, field: impl Into<FieldName>) -> Aggregate {
        self.count_by = Some(field.into());
        self
    }

    /// Lists the `k` most frequent values of `field`.
    pub fn top(mut self, field: impl Into<FieldName>, k: u32) -> Aggregate {
        self.top.push(Top {
            field: field.into(),
            k,
        });
        self
    }

    /// Measures the share of records whose `field` is within the last `days` days.
    pub fn recent(mut self, field: impl Into<FieldName>, days: u32) -> Aggregate {
        self.recent = Some(Recent {
            field: field.into(),
            days,
        });
        self
    }

    /// Adds minimum, maximum and mean of the number field `field`.
    pub fn stats(mut self, field: impl Into<FieldName>) -> Aggregate {
        self.stats.push(field.into());
        self
    }

    /// Checks every named field exists and fits its operation.
    ///
    /// ```
    /// use toolshape::{aggregate::{Aggregate, FieldMeta}};
    ///
    /// let fields = [FieldMeta::text("title"), FieldMeta::date("opened")];
    /// let err = Aggregate::new().recent("title", 30).validate(&fields).unwrap_err();
    /// assert_eq!(err.to_string(), "recent cannot use `title`, a text field; recent works on: opened");
    /// ```
    pub fn validate(&self, fields: &[FieldMeta]) -> Result<ValidAggregate, AggregateError> {
        let count_by = match &self.count_by {
            Some(name) => Some(
                find_field(fields, name.as_str(), "count_by", fits_count_by)?
                    .name
                    .clone(),
            ),
            None => None,
        };
        let mut top = Vec::with_capacity(self.top.len());
        for t in &self.top {
            let name = find_field(fields, t.field.as_str(), "top", FieldMeta::categorical)?
                .name
                .clone();
            if !(1..=TOP_K_MAX).contains(&t.k) {
                return Err(AggregateError::TopK {
                    field: name,
                    k: t.k,
                });
            }
            if top.iter().any(|(n, _)| *n == name) {
                return Err(AggregateError::Twice {
                    op: "top",
                    field: name,
                });
            }
            top.push((name, t.k as usize));
        }
        let recent = match &self.recent {
            Some(r) => {
                let name = find_field(fields, r.field.as_str(), "recent", |f| {
                    f.role == FieldRole::Date
                })?
                .name
                .clone();
                if !(1..=RECENT_DAYS_MAX).contains(&r.days) {
                    return Err(AggregateError::RecentDays { days: r.days });
                }
                Some((name, r.days))
            }
            None => None,
        };
        let mut stats: Vec<String> = Vec::with_capacity(self.stats.len());
        for s in &self.stats {
            let name = find_field(fields, s.as_str(), "stats", FieldMeta::numeric)?
                .name
                .clone();
            if stats.contains(&name) {
                return Err(AggregateError::Twice {
                    op: "stats",
                    field: name,
                });
            }
            stats.push(name);
        }
        Ok(ValidAggregate {
            count_by,
            top,
            recent,
            stats,
        })
    }

    /// Validates against `fields`, then computes over `rows` with `today` as the reference
    /// day for `recent`.
    pub fn compute(
        &self,
        fields: &[FieldMeta],
        rows: &[Row],
        today: Day,
    ) -> Result<AggregateResult, AggregateError> {
        Ok(self.validate(fields)?.compute(rows, today))
    }
}

fn fits_count_by(f: &FieldMeta) -> bool {
    f.categorical() && f.value != ValueType::List
}

/// An aggregate that cannot be computed as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AggregateError {
    /// A field is unknown or unfit for its operation.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// `k` is out of range.
    #[error("top `{field}` asks for k = {k}; use 1 to {TOP_K_MAX}")]
    TopK {
        /// The field.
        field: String,
        /// The `k` given.
        k: u32,
    },
    /// `days` is out of range.
    #[error("recent asks for {days} days; use 1 to {RECENT_DAYS_MAX}")]
    RecentDays {
        /// The `days` given.
        days: u32,
    },
    /// The same field is named twice in one operation.
    #[error("{op} names `{field}` twice; name it once")]
    Twice {
        /// The operation.
        op: &'static str,
        /// The field.
        field: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Computing
// ---------------------------------------------------------------------------------------------

/// An [`Aggregate`] checked against the fields; computing it cannot fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidAggregate {
    count_by: Option<String>,
    top: Vec<(String, usize)>,
    recent: Option<(String, u32)>,
    stats: Vec<String>,
}

impl ValidAggregate {
    /// Counts over `rows`; `today` is the last day of the `recent` window.
    pub fn compute<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r Row>,
        today: Day,
    ) -> AggregateResult {
        let mut total = 0u64;
        let mut count_by = self.count_by.as_ref().map(|f| (f, Tally::default()));
        let mut tops: Vec<_> = self
            .top
            .iter()
            .map(|(f, k)| (f, *k, Tally::default()))
            .collect();
        let mut recent = self.recent.as_ref().map(|(f, days)| RecentResult {
            field: f.clone(),
            days: *days,
            count: 0,
            share: 0.0,
            undated: 0,
            future: 0,
        });
        let mut stats: Vec<_> = self.stats.iter().map(|f| (f, Running::default())).collect();

        for row in rows {
            total += 1;
            if let Some((field, tally)) = &mut count_by {
                match row.get(field.as_str()) {
                    None | Some(Value::Null) => tally.none += 1,
                    Some(v) => tally.add(v),
                }
            }
            for (field, _, tally) in &mut tops {
                tally.add_each(row.get(field.as_str()));
            }
            if let Some(r) = &mut recent {
                let day = row
                    .get(&r.field)
                    .and_then(Value::as_str)
                    .and_then(Day::parse);
                match day {
                    None => r.undated += 1,
                    Some(d) if d > today => r.future += 1,
                    Some(d)
                        if i128::from(today.days_since_epoch())
                            - i128::from(d.days_since_epoch())
                            < i128::from(r.days) =>
                    {
                        r.count += 1
                    }
                    Some(_) => {}
                }
            }
            for (field, running) in &mut stats {
                match row.get(field.as_str()) {
                    None | Some(Value::Null) => running.none += 1,
                    Some(Value::Number(n)) => running.add(n),
                    Some(_) => running.non_numeric += 1,
                }
            }
        }

        if let Some(r) = &mut recent {
            r.share = share(r.count, total);
        }
        AggregateResult {
            total,
            recent,
            count_by: count_by.map(|(field, tally)| {
                let none = tally.none;
                let mut counts = tally.ranked();
                let other = (counts.len() > COUNT_BY_MAX).then(|| {
                    let rest = counts.split_off(COUNT_BY_MAX);
                    Others {
                        values: rest.len() as u64,
                        count: rest.iter().map(|(_, c)| c).sum(),
                    }
                });
                CountBy {
                    field: field.clone(),
                    counts,
                    none,
                    other,
                }
            }),
            top: tops
                .into_iter()
                .map(|(field, k, tally)| {
                    let none = tally.none;
                    let mut values = tally.ranked();
                    values.truncate(k);
                    TopValues {
                        field: field.clone(),
                        values,
                        none,
                    }
                })
                .collect(),
            stats: stats
                .into_iter()
                .map(|(field, r)| r.finish(field))
                .collect(),
        }
    }
}

/// Counts per value; `none` counts records with no value.
#[derive(Default)]
struct Tally {
    counts: HashMap<ValueKey, (Value, u64)>,
    none: u64,
}

impl Tally {
    fn add(&mut self, value: &Value) {
        self.counts
            .entry(ValueKey::of(value))
            .or_insert_with(|| (value.clone(), 0))
            .1 += 1;
    }

    // A list counts each distinct non-null element once; a record with none counts as `none`.
    fn add_each(&mut self, value: Option<&Value>) {
        match value {
            Some(Value::Array(items)) => {
                let mut seen: Vec<ValueKey> = Vec::with_capacity(items.len());
                for item in items.iter().filter(|v| !v.is_null()) {
                    let key = ValueKey::of(item);
                    if !seen.contains(&key) {
                        seen.push(key);
                        self.add(item);
                    }
                }
                if seen.is_empty() {
                    self.none += 1;
                }
            }
            None | Some(Value::Null) => self.none += 1,
            Some(v) => self.add(v),
        }
    }

    /// Count descending, then value ascending.
    fn ranked(self) -> Vec<(Value, u64)> {
        let mut out: Vec<_> = self.counts.into_values().collect();
        out.sort_by(|(a, ca), (b, cb)| cb.cmp(ca).then_with(|| value_cmp(a, b)));
        out
    }
}

/// A hashable identity for a JSON value: numbers by their numeric value, so `3` and `3.0` are
/// one value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ValueKey {
    Null,
    Bool(bool),
    Int(i128),
    Float(u64),
    Str(String),
    Other(String),
}

impl ValueKey {
    fn of(value: &Value) -> ValueKey {
        match value {
            Value::Null => ValueKey::Null,
            Value::Bool(b) => ValueKey::Bool(*b),
            Value::Number(n) => match int_of(n) {
                Some(i) => ValueKey::Int(i),
                None => ValueKey::Float(n.as_f64().unwrap_or(0.0).to_bits()),
            },
            Value::String(s) => ValueKey::Str(s.clone()),
            other => ValueKey::Other(other.to_string()),
        }
    }
}

fn int_of(n: &Number) -> Option<i128> {
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

#[derive(Default)]
struct Running {
    count: u64,
    none: u64,
    non_numeric: u64,
    min: Option<Number>,
    max: Option<Number>,
    mean: f64,
}

impl Running {
    fn add(&mut self, n: &Number) {
        self.count += 1;
        if self
            .min
            .as_ref()
            .is_none_or(|m| num_cmp(n, m) == Ordering::Less)
        {
            self.min = Some(n.clone());
        }
        if self
            .max
            .as_ref()
            .is_none_or(|m| num_cmp(n, m) == Ordering::Greater)
        {
            self.max = Some(n.clone());
        }
        // A running mean cannot overflow where a sum of large values would.
        let x = n.as_f64().unwrap_or(0.0);
        self.mean += (x - self.mean) / self.count as f64;
    }

    fn finish(self, field: &str) -> Stats {
        Stats {
            field: field.to_owned(),
            count: self.count,
            min: self.min,
            max: self.max,
            mean: (self.count > 0).then(|| significant(self.mean, 6)),
            none: self.none,
            non_numeric: self.non_numeric,
        }
    }
}

/// `x` rounded to `digits` significant digits.
fn significant(x: f64, digits: usize) -> f64 {
    format!("{:.*e}", digits.saturating_sub(1), x)
        .parse()
        .unwrap_or(x)
}

/// `count / total` rounded half up to 3 decimals, kept off 0 and 1 unless it is exactly that.
fn share(count: u64, total: u64) -> f64 {
    if total == 0 || count == 0 {
        return 0.0;
    }
    if count >= total {
        return 1.0;
    }
    let thousandths = (2000 * u128::from(count) + u128::from(total)) / (2 * u128::from(total));
    thousandths.clamp(1, 999) as f64 / 1000.0
}

/// `count` of `total` as a whole percent, rounded half up; never "0%" unless none and never
/// "100%" unless all: a share that rounds to 0 reads "<1%", one that rounds to 100 ">99%".
///
/// ```
/// use toolshape::aggregate::percent;
///
/// assert_eq!(percent(1229, 1412), "87%");
/// assert_eq!(percent(1, 200), "1%"); // 0.5% rounds half up
/// assert_eq!(percent(1, 1000), "<1%");
/// assert_eq!(percent(999, 1000), ">99%");
/// assert_eq!((percent(0, 9), percent(9, 9)), ("0%".to_owned(), "100%".to_owned()));
/// ```
pub fn percent(count: u64, total: u64) -> String {
    if total == 0 || count == 0 {
        return "0%".to_owned();
    }
    if count >= total {
        return "100%".to_owned();
    }
    let p = (200 * u128::from(count) + u128::from(total)) / (2 * u128::from(total));
    match p {
        0 => "<1%".to_owned(),
        100.. => ">99%".to_owned(),
        p => format!("{p}%"),
    }
}

// ---------------------------------------------------------------------------------------------
// The result
// ---------------------------------------------------------------------------------------------

/// What an [`Aggregate`] counted. Serialises as the JSON channel's `aggregate`:
///
/// ```json
/// {"total":1412,
///  "recent":{"field":"opened","days":30,"count":1229,"share":0.87},
///  "count_by":{"field":"state","counts":[["open",900],["closed",512]]},
///  "top":[{"field":"labels","values":[["bug",312],["docs",120],["ui",98]],"none":40}],
///  "stats":[{"field":"comments","count":1412,"min":0,"max":48,"mean":3.2}]}
/// ```
///
/// Zero `none` / `undated` / `future` / `non_numeric` counts are left out; every other record
/// is in exactly one bucket, so the counts add up to `total`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregateResult {
    /// Records counted.
    pub total: u64,
    /// The `recent` share, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recent: Option<RecentResult>,
    /// Counts per value, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_by: Option<CountBy>,
    /// The top values of each field asked for, in the order asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<TopValues>,
    /// Number statistics of each field asked for, in the order asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stats: Vec<Stats>,
}

/// How many records are dated within the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentResult {
    /// The date field.
    pub field: String,
    /// The window, in days, today included.
    pub days: u32,
    /// Records dated within the window.
    pub count: u64,
    /// `count / total`, rounded half up to 3 decimals; 0 or 1 only when none or all.
    pub share: f64,
    /// Records with no date, or one that does not parse (counted in `total`, not in `count`).
    #[serde(skip_serializing_if = "is_zero")]
    pub undated: u64,
    /// Records dated after today (counted in `total`, not in `count`).
    #[serde(skip_serializing_if = "is_zero")]
    pub future: u64,
}

/// Counts per value, most frequent first (ties by value).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountBy {
    /// The field.
    pub field: String,
    /// `[value, count]` pairs, at most [`COUNT_BY_MAX`].
    pub counts: Vec<(Value, u64)>,
    /// Records with no value.
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
    /// The values past [`COUNT_BY_MAX`], summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<Others>,
}

/// Values past the listed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Others {
    /// How many distinct values.
    pub values: u64,
    /// How many records hold them.
    pub count: u64,
}

/// The most frequent values of one field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopValues {
    /// The field.
    pub field: String,
    /// `[value, records]` pairs, most frequent first, ties by value; at most `k`.
    pub values: Vec<(Value, u64)>,
    /// Records with no value (null, missing, or an empty list).
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
}

/// Minimum, maximum and mean of one number field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The field.
    pub field: String,
    /// Records with a number.
    pub count: u64,
    /// The smallest number; null without numbers.
    pub min: Option<Number>,
    /// The largest number; null without numbers.
    pub max: Option<Number>,
    /// The mean, to 6 significant digits; null without numbers.
    pub mean: Option<f64>,
    /// Records with no value.
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
    /// Records whose value is not a number.
    #[serde(skip_serializing_if = "is_zero")]
    pub non_numeric: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AggregateResult {
    /// One sentence a model can act on alone, with `plural` naming the records:
    /// "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98".
    ///
    /// Parts come in a fixed order: total, recent, count_by, top, stats. A list part after
    /// another list part starts with "; " so the lists stay apart. Percentages follow
    /// [`percent`]. Records with no value are named ("no labels 40"); zero of them, nothing.
    /// With no records the sentence is the total alone ("0 issues").
    ///
    /// ```
    /// use toolshape::{Day, aggregate::{Aggregate, FieldMeta}};
    ///
    /// let fields = [FieldMeta::legend("state"), FieldMeta::number("comments")];
    /// let rows: Vec<_> = [r#"{"state":"open","comments":4}"#, r#"{"state":null,"comments":1}"#]
    ///     .iter()
    ///     .filter_map(|r| serde_json::from_str(r).ok())
    ///     .collect();
    /// let result = Aggregate::new()
    ///     .count_by("state")
    ///     .stats("comments")
    ///     .compute(&fields, &rows, Day::from_days_since_epoch(0))?;
    /// assert_eq!(
    ///     result.sentence("tickets"),
    ///     "2 tickets, by state: open 1, no state 1; comments: min 1, max 4, mean 2.5"
    /// );
    /// # Ok::<(), toolshape::aggregate::AggregateError>(())
    /// ```
    pub fn sentence(&self, plural: &str) -> String {
        self.sentence_with(plural, plural)
    }

    /// [`sentence`](AggregateResult::sentence) with `one` naming a single record ("1 issue").
    pub fn sentence_with(&self, one: &str, plural: &str) -> String {
        let noun = if self.total == 1 { one } else { plural };
        let mut out = format!("{} {noun}", thousands(self.total));
        if self.total == 0 {
            return out;
        }
        let (recent, lists) = self.pieces(false);
        if let Some(recent) = recent {
            out += ", ";
            out += &recent;
        }
        for (i, list) in lists.iter().enumerate() {
            out += if i == 0 { ", " } else { "; " };
            out += list;
        }
        out
    }

    /// The sentence without its count, for a summary that states the count already, and
    /// without a breakdown into one group (`by status: open 1,165` when the call asked for
    /// open tickets restates the call's own filter); empty when nothing is left.
    ///
    /// ```
    /// use toolshape::{Day, aggregate::{Aggregate, FieldMeta}};
    ///
    /// let fields = [FieldMeta::legend("state"), FieldMeta::legend("kind")];
    /// let rows: Vec<_> = [r#"{"state":"open","kind":"bug"}"#, r#"{"state":"open","kind":"ui"}"#]
    ///     .iter()
    ///     .filter_map(|r| serde_json::from_str(r).ok())
    ///     .collect();
    /// let result = Aggregate::new()
    ///     .count_by("state")
    ///     .top("kind", 3)
    ///     .compute(&fields, &rows, Day::from_days_since_epoch(0))?;
    /// assert_eq!(result.sentence("tickets"), "2 tickets, by state: open 2; top kind: bug 1, ui 1");
    /// assert_eq!(result.details(), "top kind: bug 1, ui 1");
    /// # Ok::<(), toolshape::aggregate::AggregateError>(())
    /// ```
    pub fn details(&self) -> String {
        if self.total == 0 {
            return String::new();
        }
        let (recent, lists) = self.pieces(true);
        recent
            .into_iter()
            .chain(lists)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The recent share and the lists; with `skip_single`, lists of one group holding every
    /// record are left out.
    fn pieces(&self, skip_single: bool) -> (Option<String>, Vec<String>) {
        let mut recent = None;
        if let Some(r) = &self.recent {
            let window = if r.days == 1 {
                "day".to_owned()
            } else {
                format!("{} days", thousands(u64::from(r.days)))
            };
            let mut out = format!(
                "{} {} in the last {window}",
                percent(r.count, self.total),
                words(&r.field)
            );
            let mut aside = Vec::new();
            if r.undated > 0 {
                aside.push(format!("{} undated", thousands(r.undated)));
            }
            if r.future > 0 {
                aside.push(format!("{} after today", thousands(r.future)));
            }
            if !aside.is_empty() {
                out += &format!(" ({})", aside.join(", "));
            }
            recent = Some(out);
        }
        let single = |values: &[(Value, u64)], none: u64| {
            skip_single && none == 0 && values.len() == 1 && values[0].1 == self.total
        };
        let mut lists: Vec<String> = Vec::new();
        if let Some(c) = self
            .count_by
            .as_ref()
            .filter(|c| !(c.other.is_none() && single(&c.counts, c.none)))
        {
            let mut items = pairs(&c.counts);
            if c.none > 0 {
                items.push(format!("no {} {}", words(&c.field), thousands(c.none)));
            }
            if let Some(o) = c.other {
                items.push(format!(
                    "others ({} values) {}",
                    thousands(o.values),
                    thousands(o.count)
                ));
            }
            lists.push(format!("by {}: {}", words(&c.field), items.join(", ")));
        }
        for t in self.top.iter().filter(|t| !single(&t.values, t.none)) {
            let mut items = pairs(&t.values);
            if t.none > 0 {
                items.push(format!("no {} {}", words(&t.field), thousands(t.none)));
            }
            lists.push(format!("top {}: {}", words(&t.field), items.join(", ")));
        }
        for s in &self.stats {
            let mut text = match (&s.min, &s.max, s.mean) {
                (Some(min), Some(max), Some(mean)) => format!(
                    "{}: min {}, max {}, mean {}",
                    words(&s.field),
                    json_number_text(min),
                    json_number_text(max),
                    number_text(mean)
                ),
                _ => format!("{}: no numbers", words(&s.field)),
            };
            let mut aside = Vec::new();
            if s.none > 0 {
                aside.push(format!("{} missing", thousands(s.none)));
            }
            if s.non_numeric > 0 {
                aside.push(format!("{} not numbers", thousands(s.non_numeric)));
            }
            if !aside.is_empty() {
                text += &format!(" ({})", aside.join(", "));
            }
            lists.push(text);
        }
        (recent, lists)
    }
}

fn words(field: &str) -> String {
    field.replace('_', " ")
}

fn pairs(values: &[(Value, u64)]) -> Vec<String> {
    values
        .iter()
        .map(|(v, c)| format!("{} {}", value_text(v), thousands(*c)))
        .collect()
}

/// A value as a sentence shows it: strings bare, numbers with thousands separators.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) => json_number_text(n),
        other => other.to_string(),
    }
}

/// A JSON number as [`number_text`] shows it; integers exactly, however large.
fn json_number_text(n: &Number) -> String {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => thousands(u),
        (None, Some(i)) => format!("-{}", thousands(i.unsigned_abs())),
        _ => number_text(n.as_f64().unwrap_or(0.0)),
    }
}

/// Whole numbers with thousands separators; others to 2 decimals (trailing zeros dropped),
/// or 3 significant digits when that would show 0.
fn number_text(x: f64) -> String {
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a.fract() == 0.0 && a < 1e15 {
        return format!("{sign}{}", thousands(a as u64));
    }
    if a >= 1e15 || (a < 0.005 && a > 0.0) {
        return format!("{sign}{:.2e}", a);
    }
    let fixed = format!("{a:.2}");
    let fixed = fixed.trim_end_matches('0').trim_end_matches('.');
    match fixed.split_once('.') {
        Some((whole, frac)) => format!(
            "{sign}{}.{frac}",
            whole
                .parse::<u64>()
                .map(thousands)
                .unwrap_or_else(|_| whole.to_owned())
        ),
        None => format!(
            "{sign}{}",
            fixed
                .parse::<u64>()
                .map(thousands)
                .unwrap_or_else(|_| fixed.to_owned())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(values: &[Value]) -> Vec<Row> {
        values
            .iter()
            .filter_map(|v| v.as_object().cloned())
            .collect()
    }

    #[test]
    fn percent_rule_rounds_half_up_and_never_claims_all_or_none() {
        assert_eq!(percent(1, 8), "13%"); // 12.5 -> 13
        assert_eq!(percent(7, 8), "88%"); // 87.5 -> 88
        assert_eq!(percent(1, 201), "<1%"); // 0.497 -> 0
        assert_eq!(percent(199, 200), ">99%"); // 99.5 -> 100
        assert_eq!(percent(0, 0), "0%");
        assert_eq!(share(199, 200), 0.995);
        assert_eq!(share(1999, 2000), 0.999); // 0.9995 rounds to 1.000, kept below 1
        assert_eq!(share(1, 1_000_000), 0.001);
    }

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(number_text(1412.0), "1,412");
        assert_eq!(number_text(-3.0), "-3");
        assert_eq!(number_text(3.25), "3.25");
        assert_eq!(number_text(3.2), "3.2");
        assert_eq!(number_text(12_345.678), "12,345.68");
        assert_eq!(number_text(0.001), "1.00e-3");
        assert_eq!(
            json_number_text(&Number::from(u64::MAX)),
            "18,446,744,073,709,551,615"
        );
        assert_eq!(
            json_number_text(&Number::from(i64::MIN)),
            "-9,223,372,036,854,775,808"
        );
    }

    #[test]
    fn top_ties_break_by_value_and_lists_count_once_per_record() {
        let fields = [FieldMeta::list("labels")];
        let rows = rows(&[
            json!({"labels": ["ui", "bug", "bug"]}),
            json!({"labels": ["docs"]}),
            json!({"labels": ["ui", null]}),
            json!({"labels": [null]}),
            json!({}),
        ]);
        let r = Aggregate::new()
            .top("labels", 2)
            .compute(&fields, &rows, Day::from_days_since_epoch(0))
            .unwrap();
        assert_eq!(r.top[0].values, vec![(json!("ui"), 2), (json!("bug"), 1)]);
        assert_eq!(r.top[0].none, 2);
    }

    #[test]
    fn count_by_keeps_twenty_values_and_sums_the_rest() {
        let fields = [FieldMeta::number("n")];
        let rows: Vec<Row> = (0..30)
            .map(|i| rows(&[json!({"n": i % 25})]).remove(0))
            .collect();
        let r = Aggregate::new()
            .count_by("n")
            .compute(&fields, &rows, Day::from_days_since_epoch(0))
            .unwrap();
        let c = r.count_by.unwrap();
        assert_eq!(c.counts.len(), COUNT_BY_MAX);
        // 0..=4 occur twice and lead; then 5..=19 once; 20..=24 go to others.
        assert_eq!(c.counts[0], (json!(0), 2));
        assert_eq!(c.counts[5], (json!(5), 1));
        assert_eq!(
            c.other,
            Some(Others {
                values: 5,
                count: 5
            })
        );
    }

    #[test]
    fn numbers_are_one_value_whatever_their_spelling() {
        let fields = [FieldMeta::number("n")];
        let rows = rows(&[json!({"n": 3}), json!({"n": 3.0}), json!({"n": -1})]);
        let r = Aggregate::new()
            .count_by("n")
            .stats("n")
            .compute(&fields, &rows, Day::from_days_since_epoch(0))
            .unwrap();
        assert_eq!(
            r.count_by.unwrap().counts,
            vec![(json!(3), 2), (json!(-1), 1)]
        );
        let s = &r.stats[0];
        assert_eq!(
            (s.min.clone(), s.max.clone(), s.mean),
            (Some(Number::from(-1)), Some(Number::from(3)), Some(1.66667))
        );
    }

    #[test]
    fn suggestion_finds_near_names_only() {
        let names = ["labels", "state", "id"];
        assert_eq!(
            closest("lables", names.into_iter()),
            Some("labels".to_owned())
        );
        assert_eq!(closest("x", names.into_iter()), None); // 2 edits from "id": as far as its length
        assert_eq!(closest("owner", names.into_iter()), None);
    }
}
