//! What to count ([`Aggregate`]): the request a model or a Rust caller makes, validated
//! against the fields.

use super::result::AggregateResult;
use crate::aggregate::catalogue::{FieldError, FieldMeta, FieldName, Row, ValueType, find_field};
use crate::fields::date::Day;
use crate::record::FieldRole;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most values `count_by` lists by name; the rest are summed into one "others" bucket.
pub(crate) const COUNT_BY_MAX: usize = 20;

/// The most characters of an outsider's value a `count_by` or `top` shows (the rest cut,
/// marked `…`): a category is a label, and a summary is no place for a body. As many as an
/// error quotes of one piece of an upstream's message.
pub(crate) const CATEGORY_CHARS: usize = crate::untrusted::echo::MAX_QUOTED_CHARS;
/// Largest `k` a `top` may ask for.
pub(crate) const TOP_K_MAX: u32 = 50;
/// `k` when a `top` does not say.
pub(crate) const TOP_K_DEFAULT: u32 = 3;
/// Largest `days` a `recent` may ask for (about a hundred years).
pub(crate) const RECENT_DAYS_MAX: u32 = 36_500;

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
    pub(crate) count_by: Option<FieldName>,
    /// The most frequent values of these fields; a list field (labels) counts each element,
    /// once per record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) top: Vec<Top>,
    /// The share of records whose date field falls within the last `days` days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recent: Option<Recent>,
    /// Minimum, maximum and mean of these number fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) stats: Vec<FieldName>,
}

/// The `k` most frequent values of a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Top {
    /// The field to count.
    pub(crate) field: FieldName,
    /// How many values to list (1 to 50; default 3). Ties are listed alphabetically.
    #[serde(default = "default_k")]
    #[schemars(range(min = 1, max = 50))]
    pub(crate) k: u32,
}

fn default_k() -> u32 {
    TOP_K_DEFAULT
}

/// The share of records dated within the last `days` days (today included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Recent {
    /// A date field.
    pub(crate) field: FieldName,
    /// How many days back, today included (1 to 36500).
    #[schemars(range(min = 1, max = 36500))]
    pub(crate) days: u32,
}

/// An [`Aggregate`] checked against the fields; computing it cannot fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidAggregate {
    pub(super) count_by: Option<String>,
    pub(super) top: Vec<(String, usize)>,
    pub(super) recent: Option<(String, u32)>,
    pub(super) stats: Vec<String>,
    /// The fields counted by value whose values outsiders wrote.
    pub(super) untrusted: Vec<String>,
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
    /// use toolshape::{aggregate::Aggregate, __seams::aggregate::{Compute, FieldMeta}};
    ///
    /// let fields = [FieldMeta::text("title"), FieldMeta::date("opened")];
    /// let err = Aggregate::new().recent("title", 30).validate(&fields).unwrap_err();
    /// assert_eq!(err.to_string(), "recent cannot use `title`, a text field; recent works on: opened");
    /// ```
    pub(crate) fn validate(&self, fields: &[FieldMeta]) -> Result<ValidAggregate, AggregateError> {
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
        let untrusted = fields
            .iter()
            .filter(|f| f.role == FieldRole::Untrusted)
            .filter(|f| count_by.as_ref() == Some(&f.name) || top.iter().any(|(n, _)| *n == f.name))
            .map(|f| f.name.clone())
            .collect();
        Ok(ValidAggregate {
            untrusted,
            count_by,
            top,
            recent,
            stats,
        })
    }

    /// Validates against `fields`, then computes over `rows` with `today` as the reference
    /// day for `recent`.
    pub(crate) fn compute(
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
