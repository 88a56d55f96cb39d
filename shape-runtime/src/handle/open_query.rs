//! The query language of `open_result`, the companion tool that reopens a stored result.
//!
//! This module owns [`OpenQuery`], the tool's input (its JSON Schema is the input schema the
//! tool publishes), and [`ValidQuery`], the same query checked against the stored result's
//! fields: which rows match ([`ValidQuery::apply`]), in which order, with which fields
//! ([`ValidQuery::project_row`]), and the aggregate over the matches. Paging (the cursor and
//! the page size) and rendering belong to the Shaper; the handle store owns the rows.
//!
//! Every mistake a model can make in a query is an error that says what to write instead:
//! an unknown field names the valid ones, a filter whose value has the wrong type says which
//! type it needs. Nothing here panics on input.
//!
//! ```
//! use serde_json::json;
//! use toolshape::__seams::{aggregate::FieldMeta, handle::query::OpenQuery};
//!
//! let fields = [FieldMeta::id("id"), FieldMeta::legend("state"), FieldMeta::list("labels"), FieldMeta::date("opened")];
//! let rows: Vec<_> = [
//!     json!({"id": "iss_1", "state": "open", "labels": ["bug"], "opened": "2026-02-01"}),
//!     json!({"id": "iss_2", "state": "closed", "labels": ["Bug", "ui"], "opened": "2026-02-03"}),
//!     json!({"id": "iss_3", "state": "open", "labels": ["docs"], "opened": "2026-02-02"}),
//! ]
//! .into_iter()
//! .filter_map(|v| v.as_object().cloned())
//! .collect();
//!
//! let query = OpenQuery::from_json(
//!     r#"{"handle": "h_1", "filter": [{"field": "labels", "op": "contains", "value": "bug"}],
//!         "sort": {"field": "opened", "order": "desc"}, "select": ["id"]}"#,
//! )?;
//! let valid = query.validate(&fields)?;
//! let hits = valid.apply(&rows);
//! assert_eq!(hits, [1, 0]);
//! assert_eq!(serde_json::Value::Object(valid.project_row(&rows[hits[0]])), json!({"id": "iss_2"}));
//!
//! let err = OpenQuery::from_json(r#"{"handle": "h_1", "sort": {"field": "lables"}}"#)?
//!     .validate(&fields)
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "unknown field `lables` in sort (did you mean `labels`?); sort works on: id, state, opened"
//! );
//! # Ok::<(), toolshape::__seams::handle::query::QueryError>(())
//! ```

use crate::aggregate::catalogue::{
    FieldError, FieldMeta, FieldName, Row, ValueType, find_field, num_cmp, value_cmp, value_eq,
};
use crate::aggregate::{Aggregate, AggregateError, AggregateResult, ValidAggregate};
use crate::fields::date::Day;
use crate::fields::rank::Order;
use crate::record::FieldRole;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};
use std::cmp::Ordering;

/// Rows per page when a query does not say.
pub(crate) const PAGE_SIZE_DEFAULT: u32 = 20;
/// The largest page a query may ask for.
pub(crate) const PAGE_SIZE_MAX: u32 = 200;

/// The longest free-text `query`, in characters.
pub(crate) const QUERY_CHARS_MAX: usize = 200;

/// The input of `open_result`: reopen a stored result, keep the records that match every
/// filter, sort them, keep some fields, page through them, or count them.
///
/// ```
/// use toolshape::{Order, aggregate::Aggregate, __seams::handle::query::{Filter, OpenQuery}};
///
/// let built = OpenQuery::new("h_1")
///     .filter(Filter::equals("state", "open"))
///     .filter(Filter::at_least("opened", "2026-01-01"))
///     .sort("opened", Order::Desc)
///     .select(["id", "title"])
///     .page_size(50)
///     .aggregate(Aggregate::new().top("labels", 3));
/// let parsed = OpenQuery::from_json(
///     r#"{"handle": "h_1",
///         "filter": [{"field": "state", "op": "equals", "value": "open"},
///                    {"field": "opened", "op": "range", "min": "2026-01-01"}],
///         "sort": {"field": "opened", "order": "desc"},
///         "select": ["id", "title"], "page_size": 50,
///         "aggregate": {"top": [{"field": "labels"}]}}"#,
/// )?;
/// assert_eq!(built, parsed);
/// # Ok::<(), toolshape::__seams::handle::query::QueryError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Reopen a stored result by its handle: keep the records that match every \
                   filter, sort them, keep some fields, page through them, or count them."
)]
pub struct OpenQuery {
    /// The handle a previous tool result returned.
    pub handle: String,
    /// Keep only the records that match every filter (all of them, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<Filter>,
    /// The fields to show, in this order (all fields when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<Vec<FieldName>>,
    /// The order of the records (the stored order when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<Sort>,
    /// Records per page, 1 to 200 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = PAGE_SIZE_MAX))]
    pub page_size: Option<u32>,
    /// The cursor a previous page returned, to get the next page of the same query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Count the matching records instead of (or besides) listing them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    /// Words to look for: keep only the records that mention at least one of them, the most
    /// relevant first (BM25 over each record's text; common words are ignored and word forms
    /// match, so "failing tests" finds "test failed"). With `sort`, in that order instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = QUERY_CHARS_MAX))]
    pub query: Option<String>,
}

/// One filter: a field and a test its value must pass.
///
/// On the wire: `{"field": "state", "op": "equals", "value": "open"}`,
/// `{"field": "labels", "op": "contains", "value": "bug"}`,
/// `{"field": "opened", "op": "range", "min": "2026-01-01", "max": "2026-01-31"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "FilterWire", into = "FilterWire")]
#[schemars(description = "One test a record must pass, named by `op`.")]
pub struct Filter {
    /// The field tested.
    pub field: FieldName,
    /// The test.
    pub op: FilterOp,
}

/// The test a [`Filter`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterOp {
    /// The value equals this one exactly (numbers by value; `null` matches no value).
    Equals(Value),
    /// Text contains this, ignoring case; a list has an element equal to this, ignoring case.
    Contains(String),
    /// A number or date within `min ..= max`; either bound may be left out.
    Range {
        /// The smallest value kept.
        min: Option<Bound>,
        /// The largest value kept.
        max: Option<Bound>,
    },
}

/// A bound of a range: a number, or a date as `YYYY-MM-DD`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Bound {
    /// A number, for number fields.
    Number(Number),
    /// A date as `YYYY-MM-DD`, for date fields.
    Text(String),
}

impl Bound {
    #[cfg(any(test, feature = "test-seams"))]
    /// A float bound; `None` for NaN and infinities, which JSON cannot carry.
    pub fn float(x: f64) -> Option<Bound> {
        Number::from_f64(x).map(Bound::Number)
    }

    fn shown(&self) -> String {
        match self {
            Bound::Number(n) => n.to_string(),
            Bound::Text(t) => clip(&Value::String(t.clone())),
        }
    }
}

macro_rules! bound_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Bound {
            fn from(n: $t) -> Bound {
                Bound::Number(Number::from(n))
            }
        }
    )*};
}
bound_from_int!(i32, i64, u32, u64);

impl From<&str> for Bound {
    fn from(text: &str) -> Bound {
        Bound::Text(text.to_owned())
    }
}

impl From<String> for Bound {
    fn from(text: String) -> Bound {
        Bound::Text(text)
    }
}

impl From<Day> for Bound {
    fn from(day: Day) -> Bound {
        Bound::Text(day.to_string())
    }
}

/// The wire form of a [`Filter`]: one object, the test named by `op`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum FilterWire {
    /// The field's value equals `value` exactly (numbers by value). `null` keeps records with
    /// no value. For one element of a list field, use `contains`.
    Equals {
        /// The field tested.
        field: FieldName,
        /// The value to match: a string, number, true/false, a list (for list fields) or null.
        value: Value,
    },
    /// Text that contains `value`, ignoring case; or a list with an element equal to
    /// `value`, ignoring case.
    Contains {
        /// The field tested (text or list).
        field: FieldName,
        /// The text to look for.
        value: String,
    },
    /// A number or date between `min` and `max`, both included; give one or both.
    Range {
        /// The field tested (number or date).
        field: FieldName,
        /// The smallest value kept: a number, or a date as YYYY-MM-DD.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<Bound>,
        /// The largest value kept: a number, or a date as YYYY-MM-DD.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<Bound>,
    },
}

impl From<FilterWire> for Filter {
    fn from(wire: FilterWire) -> Filter {
        match wire {
            FilterWire::Equals { field, value } => Filter {
                field,
                op: FilterOp::Equals(value),
            },
            FilterWire::Contains { field, value } => Filter {
                field,
                op: FilterOp::Contains(value),
            },
            FilterWire::Range { field, min, max } => Filter {
                field,
                op: FilterOp::Range { min, max },
            },
        }
    }
}

impl From<Filter> for FilterWire {
    fn from(filter: Filter) -> FilterWire {
        let field = filter.field;
        match filter.op {
            FilterOp::Equals(value) => FilterWire::Equals { field, value },
            FilterOp::Contains(value) => FilterWire::Contains { field, value },
            FilterOp::Range { min, max } => FilterWire::Range { field, min, max },
        }
    }
}

impl Filter {
    #[cfg(any(test, feature = "test-seams"))]
    /// Keeps records whose `field` equals `value`.
    pub fn equals(field: impl Into<FieldName>, value: impl Into<Value>) -> Filter {
        Filter {
            field: field.into(),
            op: FilterOp::Equals(value.into()),
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Keeps records whose text `field` contains `text`, or whose list `field` has an element
    /// equal to `text`, ignoring case.
    pub fn contains(field: impl Into<FieldName>, text: impl Into<String>) -> Filter {
        Filter {
            field: field.into(),
            op: FilterOp::Contains(text.into()),
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Keeps records whose `field` is at least `min`.
    pub fn at_least(field: impl Into<FieldName>, min: impl Into<Bound>) -> Filter {
        Filter {
            field: field.into(),
            op: FilterOp::Range {
                min: Some(min.into()),
                max: None,
            },
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Keeps records whose `field` is at most `max`.
    pub fn at_most(field: impl Into<FieldName>, max: impl Into<Bound>) -> Filter {
        Filter {
            field: field.into(),
            op: FilterOp::Range {
                min: None,
                max: Some(max.into()),
            },
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Keeps records whose `field` is within `min ..= max`.
    pub fn between(
        field: impl Into<FieldName>,
        min: impl Into<Bound>,
        max: impl Into<Bound>,
    ) -> Filter {
        Filter {
            field: field.into(),
            op: FilterOp::Range {
                min: Some(min.into()),
                max: Some(max.into()),
            },
        }
    }
}

/// The order of the records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sort {
    /// The field to sort by (not a list field). Records with no value come last.
    pub field: FieldName,
    /// `asc` (smallest, oldest, A first; the default) or `desc`.
    #[serde(default = "ascending")]
    #[schemars(with = "OrderSchema")]
    pub order: Order,
}

fn ascending() -> Order {
    Order::Asc
}

/// The schema of [`Order`], which lives in `rank` and does not derive `JsonSchema`.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case", inline)]
#[allow(dead_code)]
enum OrderSchema {
    Asc,
    Desc,
}

impl OpenQuery {
    #[cfg(any(test, feature = "test-seams"))]
    /// A query that reopens `handle` whole; narrow it with the builder methods.
    pub fn new(handle: impl Into<String>) -> OpenQuery {
        OpenQuery {
            query: None,
            handle: handle.into(),
            filter: Vec::new(),
            select: None,
            sort: None,
            page_size: None,
            cursor: None,
            aggregate: None,
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Only the records that mention a word of `text`, the most relevant first.
    pub fn query(mut self, text: impl Into<String>) -> OpenQuery {
        self.query = Some(text.into());
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Parses the tool's JSON input.
    pub fn from_json(json: &str) -> Result<OpenQuery, QueryError> {
        serde_json::from_str(json).map_err(|e| QueryError::Json(e.to_string()))
    }

    /// Reads the tool's input from a JSON value (MCP passes arguments as an object).
    pub fn from_value(value: Value) -> Result<OpenQuery, QueryError> {
        serde_json::from_value(value).map_err(|e| QueryError::Json(e.to_string()))
    }

    /// The JSON Schema `open_result` publishes as its input schema.
    pub fn input_schema() -> schemars::Schema {
        schemars::schema_for!(OpenQuery)
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Adds a filter; a record must match all of them.
    pub fn filter(mut self, filter: Filter) -> OpenQuery {
        self.filter.push(filter);
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Shows only these fields, in this order.
    pub fn select<I, F>(mut self, fields: I) -> OpenQuery
    where
        I: IntoIterator<Item = F>,
        F: Into<FieldName>,
    {
        self.select = Some(fields.into_iter().map(Into::into).collect());
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Sorts by `field`.
    pub fn sort(mut self, field: impl Into<FieldName>, order: Order) -> OpenQuery {
        self.sort = Some(Sort {
            field: field.into(),
            order,
        });
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Sets the page size.
    pub fn page_size(mut self, size: u32) -> OpenQuery {
        self.page_size = Some(size);
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Continues from a cursor a previous page returned.
    pub fn cursor(mut self, cursor: impl Into<String>) -> OpenQuery {
        self.cursor = Some(cursor.into());
        self
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Counts the matching records.
    pub fn aggregate(mut self, aggregate: Aggregate) -> OpenQuery {
        self.aggregate = Some(aggregate);
        self
    }

    /// Checks the query against the stored result's fields.
    ///
    /// ```
    /// use toolshape::__seams::{aggregate::FieldMeta, handle::query::{Filter, OpenQuery}};
    ///
    /// let fields = [FieldMeta::text("title"), FieldMeta::number("comments")];
    /// let err = OpenQuery::new("h").filter(Filter::at_least("comments", "many")).validate(&fields).unwrap_err();
    /// assert_eq!(err.to_string(), "range on `comments` needs a number as min; got \"many\"");
    /// ```
    pub fn validate(&self, fields: &[FieldMeta]) -> Result<ValidQuery, QueryError> {
        let checks = self
            .filter
            .iter()
            .map(|f| check(f, fields))
            .collect::<Result<Vec<_>, _>>()?;

        let sort = match &self.sort {
            Some(s) => {
                let field = find_field(fields, s.field.as_str(), "sort", |f| {
                    f.value != ValueType::List
                })?;
                Some(SortKey {
                    field: field.name.clone(),
                    order: s.order,
                    date: field.role == FieldRole::Date,
                })
            }
            None => None,
        };

        let select = match &self.select {
            Some(names) if names.is_empty() => return Err(QueryError::EmptySelect),
            Some(names) => {
                let mut kept: Vec<String> = Vec::with_capacity(names.len());
                for name in names {
                    let field = find_field(fields, name.as_str(), "select", |_| true)?;
                    if !kept.contains(&field.name) {
                        kept.push(field.name.clone());
                    }
                }
                Some(kept)
            }
            None => None,
        };
        let left_out = match &select {
            Some(kept) => fields
                .iter()
                .filter(|f| !kept.contains(&f.name))
                .map(|f| f.name.clone())
                .collect(),
            None => Vec::new(),
        };

        let page_size = match self.page_size {
            None => PAGE_SIZE_DEFAULT,
            Some(n @ 1..=PAGE_SIZE_MAX) => n,
            Some(n) => return Err(QueryError::PageSize { given: n }),
        };

        let aggregate = match &self.aggregate {
            Some(a) => Some(a.validate(fields)?),
            None => None,
        };

        let search = match &self.query {
            Some(text) => Some(Search::new(text)?),
            None => None,
        };

        Ok(ValidQuery {
            handle: self.handle.clone(),
            checks,
            sort,
            select,
            left_out,
            page_size,
            cursor: self.cursor.clone(),
            aggregate,
            search,
        })
    }
}

/// A free-text query made ready: its words as written (whitespace and control characters
/// folded to one space), for the summary, and the words it is searched by.
#[derive(Debug, Clone, PartialEq)]
struct Search {
    text: String,
    words: Vec<String>,
}

impl Search {
    fn new(text: &str) -> Result<Search, QueryError> {
        let text = text
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let chars = text.chars().count();
        if chars == 0 || chars > QUERY_CHARS_MAX {
            return Err(QueryError::NoSearchWords { chars });
        }
        let words = search_words(&text);
        if words.is_empty() {
            return Err(QueryError::NoSearchWords { chars });
        }
        Ok(Search { text, words })
    }

    /// Whether a record searched by `words` mentions a word of the query.
    fn mentioned_in(&self, words: &[String]) -> bool {
        words.iter().any(|w| self.words.contains(w))
    }

    /// Of `candidates` (the rows that pass the filters), those that mention a word of the
    /// query, the most relevant first: BM25 with the candidates as its corpus (each row's
    /// words read once, [`row_words`]); ties in stored order.
    fn rank(&self, rows: &[Row], candidates: &[usize]) -> Vec<usize> {
        use bm25::{Embedder, EmbedderBuilder, Scorer};
        let words: Vec<Vec<String>> = candidates.iter().map(|&i| row_words(&rows[i])).collect();
        let total: usize = words.iter().map(Vec::len).sum();
        let avgdl = total as f32 / words.len().max(1) as f32;
        // The words are read already: the embedder splits them back at the spaces joining
        // them, and never tokenizes a record a second time.
        let embedder: Embedder<u32, Spaced> = EmbedderBuilder::with_avgdl(avgdl).build();
        let mut scorer = Scorer::<usize>::new();
        for (at, words) in words.iter().enumerate() {
            scorer.upsert(&at, embedder.embed(&words.join(" ")));
        }
        let query = embedder.embed(&self.words.join(" "));
        let mut ranked: Vec<(f32, usize)> = words
            .iter()
            .enumerate()
            .filter(|(_, words)| self.mentioned_in(words))
            .map(|(at, _)| (scorer.score(&at, &query).unwrap_or(0.0), at))
            .collect();
        ranked.sort_by(|(a, i), (b, j)| b.total_cmp(a).then(i.cmp(j)));
        ranked.into_iter().map(|(_, at)| candidates[at]).collect()
    }
}

/// Words [`search_words`] read, joined by single spaces: split back at them, nothing else.
#[derive(Default)]
struct Spaced;

impl bm25::Tokenizer for Spaced {
    fn tokenize(&self, text: &str) -> Vec<String> {
        text.split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// The words a stored record is searched by: its text's ([`row_text`]).
fn row_words(row: &Row) -> Vec<String> {
    search_words(&row_text(row))
}

/// The words `text` is searched by: the tokenizer BM25 ranks with (lower case, stemmed,
/// common words left out), over [`split_names`]'s text.
fn search_words(text: &str) -> Vec<String> {
    use bm25::Tokenizer as _;
    static WORDS: std::sync::OnceLock<bm25::DefaultTokenizer> = std::sync::OnceLock::new();
    WORDS
        .get_or_init(|| bm25::DefaultTokenizer::new(bm25::Language::English))
        .tokenize(&split_names(text))
}

/// `text` with the words inside names apart: `sql_predicate`, `sqlPredicate` and
/// `sql.predicate` read as `sql predicate` (Unicode's word breaking keeps `a.b` and `a:b`
/// whole), so a question in words finds the code and the paths that hold them.
fn split_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut last = ' ';
    for c in text.chars() {
        if matches!(c, '_' | '.' | ':') {
            out.push(' ');
        } else {
            if c.is_uppercase() && last.is_lowercase() {
                out.push(' ');
            }
            out.push(c);
        }
        last = c;
    }
    out
}

/// A stored record's text for searching: its values (nested ones too), keys left out.
fn row_text(row: &Row) -> String {
    fn push(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Number(n) => {
                out.push_str(&n.to_string());
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| push(v, out)),
            Value::Object(map) => map.values().for_each(|v| push(v, out)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut out = String::new();
    row.values().for_each(|v| push(v, &mut out));
    out
}

/// A query that cannot be run as written. The message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The input is not an `open_result` query (bad JSON, an unknown key, a missing handle).
    #[error(
        "the query does not fit open_result's input schema: {}",
        crate::untrusted::echo::reveal_message(.0)
    )]
    Json(String),
    /// A field is unknown or unfit for its operation.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A filter's value has the wrong type for its field.
    #[error(
        "{op} on `{field}` needs {expected}; got {}{}",
        crate::untrusted::echo::reveal(.got).0,
        crate::untrusted::echo::hidden_note(crate::untrusted::echo::reveal(.got).1)
    )]
    WrongValue {
        /// The filter operation.
        op: &'static str,
        /// The field.
        field: String,
        /// What the value must be ("a number as min").
        expected: &'static str,
        /// The value given, as JSON (clipped); the message shows its unseen characters
        /// escaped.
        got: String,
    },
    /// A range with neither bound.
    #[error("range on `{field}` needs min, max or both")]
    EmptyRange {
        /// The field.
        field: String,
    },
    /// A range whose min is greater than its max.
    #[error("range on `{field}` has min {min} above max {max}; swap them")]
    InvertedRange {
        /// The field.
        field: String,
        /// The min given.
        min: String,
        /// The max given.
        max: String,
    },
    /// `contains` with empty text.
    #[error("contains on `{field}` needs some text to look for")]
    EmptyText {
        /// The field.
        field: String,
    },
    /// `page_size` out of range.
    #[error(
        "page_size {given} is out of range; use 1 to {PAGE_SIZE_MAX} and page on with the cursor"
    )]
    PageSize {
        /// The size given.
        given: u32,
    },
    /// `select` with no fields.
    #[error("select names no fields; name at least one, or leave select out to show all")]
    EmptySelect,
    /// A `query` with nothing to search by: empty, only common words ("the", "of"), or longer
    /// than 200 characters (`QUERY_CHARS_MAX`).
    #[error(
        "query {}: name the words to look for (at most {QUERY_CHARS_MAX} characters; common words \
         like \"the\" are ignored), or leave query out",
        match .chars { 0 => "is empty".to_owned(), n if *n > QUERY_CHARS_MAX => format!("is {n} characters"), _ => "holds only common words".to_owned() }
    )]
    NoSearchWords {
        /// The query's length in characters.
        chars: usize,
    },
    /// The aggregate cannot be computed as asked.
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
}

/// A filter resolved against its field.
#[derive(Debug, Clone, PartialEq)]
enum Check {
    /// Equality; `day` compares date fields by day.
    Equals {
        field: String,
        value: Value,
        day: Option<Day>,
    },
    /// `needle` is lower-cased once.
    Contains { field: String, needle: String },
    Numbers {
        field: String,
        min: Option<Number>,
        max: Option<Number>,
    },
    Days {
        field: String,
        min: Option<Day>,
        max: Option<Day>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SortKey {
    field: String,
    order: Order,
    date: bool,
}

fn wrong(op: &'static str, field: &FieldMeta, expected: &'static str, got: &Value) -> QueryError {
    QueryError::WrongValue {
        op,
        field: field.name.clone(),
        expected,
        got: clip(got),
    }
}

/// A value as JSON, clipped to 40 characters.
fn clip(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        text
    } else {
        let mut t: String = text.chars().take(39).collect();
        t.push('…');
        t
    }
}

fn check(filter: &Filter, fields: &[FieldMeta]) -> Result<Check, QueryError> {
    let name = filter.field.as_str();
    match &filter.op {
        FilterOp::Equals(value) => {
            let field = find_field(fields, name, "filter", |_| true)?;
            let expected = match (field.role, field.value) {
                _ if value.is_null() => None,
                (FieldRole::Show, ValueType::Any) => None,
                (FieldRole::Show, ValueType::Number) => {
                    (!value.is_number()).then_some("a number or null")
                }
                (FieldRole::Show, ValueType::Bool) => {
                    (!value.is_boolean()).then_some("true, false or null")
                }
                (FieldRole::Show, ValueType::List) => (!value.is_array())
                    .then_some("a list or null (to match one element, use contains)"),
                _ => (!value.is_string()).then_some("a string or null"),
            };
            if let Some(expected) = expected {
                return Err(wrong("equals", field, expected, value));
            }
            let day = match (field.role, value) {
                (FieldRole::Date, Value::String(s)) => Day::parse(s),
                _ => None,
            };
            Ok(Check::Equals {
                field: field.name.clone(),
                value: value.clone(),
                day,
            })
        }
        FilterOp::Contains(text) => {
            let field = find_field(fields, name, "contains", |f| {
                f.role != FieldRole::Date
                    && matches!(f.value, ValueType::Text | ValueType::List | ValueType::Any)
            })?;
            if text.is_empty() {
                return Err(QueryError::EmptyText {
                    field: field.name.clone(),
                });
            }
            Ok(Check::Contains {
                field: field.name.clone(),
                needle: text.to_lowercase(),
            })
        }
        FilterOp::Range { min, max } => {
            let field = find_field(fields, name, "range", |f| {
                f.role == FieldRole::Date || f.numeric()
            })?;
            let fname = field.name.clone();
            if min.is_none() && max.is_none() {
                return Err(QueryError::EmptyRange { field: fname });
            }
            // A field of unknown type takes the kind of its bounds; a date or number field
            // insists on its own.
            let dates = match (field.role, min, max) {
                (FieldRole::Date, ..) => true,
                (_, _, _) if field.value == ValueType::Number => false,
                (_, Some(Bound::Text(_)), _) | (_, None, Some(Bound::Text(_))) => true,
                _ => false,
            };
            let inverted = || QueryError::InvertedRange {
                field: fname.clone(),
                min: min.as_ref().map(Bound::shown).unwrap_or_default(),
                max: max.as_ref().map(Bound::shown).unwrap_or_default(),
            };
            if dates {
                let day = |bound: &Option<Bound>, expected| match bound {
                    None => Ok(None),
                    Some(Bound::Text(t)) => Day::parse(t)
                        .map(Some)
                        .ok_or_else(|| wrong("range", field, expected, &Value::String(t.clone()))),
                    Some(Bound::Number(n)) => {
                        Err(wrong("range", field, expected, &Value::Number(n.clone())))
                    }
                };
                let lo = day(min, "a date as YYYY-MM-DD for min")?;
                let hi = day(max, "a date as YYYY-MM-DD for max")?;
                if matches!((lo, hi), (Some(a), Some(b)) if a > b) {
                    return Err(inverted());
                }
                Ok(Check::Days {
                    field: fname,
                    min: lo,
                    max: hi,
                })
            } else {
                let num = |bound: &Option<Bound>, expected| match bound {
                    None => Ok(None),
                    Some(Bound::Number(n)) => Ok(Some(n.clone())),
                    Some(Bound::Text(t)) => {
                        Err(wrong("range", field, expected, &Value::String(t.clone())))
                    }
                };
                let lo = num(min, "a number as min")?;
                let hi = num(max, "a number as max")?;
                if matches!((&lo, &hi), (Some(a), Some(b)) if num_cmp(a, b) == Ordering::Greater) {
                    return Err(inverted());
                }
                Ok(Check::Numbers {
                    field: fname,
                    min: lo,
                    max: hi,
                })
            }
        }
    }
}

impl Check {
    fn matches(&self, row: &Row) -> bool {
        match self {
            Check::Equals { field, value, day } => match (row.get(field), value) {
                (None | Some(Value::Null), Value::Null) => true,
                (None, _) => false,
                (Some(Value::String(s)), _) if day.is_some() => Day::parse(s) == *day,
                (Some(v), want) => value_eq(v, want),
            },
            Check::Contains { field, needle } => match row.get(field) {
                Some(Value::String(s)) => s.to_lowercase().contains(needle.as_str()),
                Some(Value::Array(items)) => items.iter().any(|item| match item {
                    Value::String(s) => s.to_lowercase() == *needle,
                    Value::Null => false,
                    other => other.to_string().to_lowercase() == *needle,
                }),
                _ => false,
            },
            Check::Numbers { field, min, max } => match row.get(field) {
                Some(Value::Number(n)) => {
                    min.as_ref().is_none_or(|m| num_cmp(n, m) != Ordering::Less)
                        && max
                            .as_ref()
                            .is_none_or(|m| num_cmp(n, m) != Ordering::Greater)
                }
                _ => false,
            },
            Check::Days { field, min, max } => {
                match row.get(field).and_then(Value::as_str).and_then(Day::parse) {
                    Some(d) => min.is_none_or(|m| d >= m) && max.is_none_or(|m| d <= m),
                    None => false,
                }
            }
        }
    }
}

/// An [`OpenQuery`] checked against a stored result's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidQuery {
    handle: String,
    checks: Vec<Check>,
    sort: Option<SortKey>,
    select: Option<Vec<String>>,
    left_out: Vec<String>,
    page_size: u32,
    cursor: Option<String>,
    aggregate: Option<ValidAggregate>,
    search: Option<Search>,
}

impl ValidQuery {
    #[cfg(any(test, feature = "test-seams"))]
    /// The handle to reopen.
    pub fn handle(&self) -> &str {
        &self.handle
    }

    /// The cursor to continue from, as given (the Shaper checks it).
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// Records per page: the query's, or 20 (`PAGE_SIZE_DEFAULT`).
    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// The sort field and order, if the query sorts.
    pub fn sort(&self) -> Option<(&str, Order)> {
        self.sort.as_ref().map(|s| (s.field.as_str(), s.order))
    }

    /// The selected fields, in order, duplicates removed; `None` shows all.
    pub fn select(&self) -> Option<&[String]> {
        self.select.as_deref()
    }

    /// The fields `select` leaves out, in field order: the envelope names them so "this view
    /// dropped it" differs from "the record has none".
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// The aggregate, if the query asks for one.
    pub fn aggregate(&self) -> Option<&ValidAggregate> {
        self.aggregate.as_ref()
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// Whether `row` passes every filter and mentions a word of the free-text query: one
    /// row's answer to what [`apply`](Self::apply) keeps, for tests.
    pub fn matches(&self, row: &Row) -> bool {
        self.passes_filters(row)
            && self
                .search
                .as_ref()
                .is_none_or(|s| s.mentioned_in(&row_words(row)))
    }

    fn passes_filters(&self, row: &Row) -> bool {
        self.checks.iter().all(|c| c.matches(row))
    }

    /// The free-text query, whitespace folded, if there is one.
    pub fn search(&self) -> Option<&str> {
        self.search.as_ref().map(|s| s.text.as_str())
    }

    /// The indices of the rows that pass every filter and mention a word of the free-text
    /// query, in the requested order: by `sort` when given, else the most relevant first,
    /// else stored order. Rows with no value for the sort field come last in either order,
    /// after dates that do not parse; ties keep their stored order (or relevance order), so
    /// the result is deterministic.
    pub fn apply(&self, rows: &[Row]) -> Vec<usize> {
        let mut hits: Vec<usize> = (0..rows.len())
            .filter(|&i| self.passes_filters(&rows[i]))
            .collect();
        if let Some(search) = &self.search {
            hits = search.rank(rows, &hits);
        }
        if let Some(sort) = &self.sort {
            // Keys once per row, not once per comparison; the sort is stable and `hits` is
            // in stored order, so ties keep it.
            let mut keyed: Vec<(SortValue<'_>, usize)> =
                hits.iter().map(|&i| (sort.key(&rows[i]), i)).collect();
            keyed.sort_by(|(a, _), (b, _)| sort.compare(a, b));
            hits = keyed.into_iter().map(|(_, i)| i).collect();
        }
        hits
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// `row` with only the selected fields, in select order (when the map keeps insertion
    /// order); the row as is without a select. A selected field the row lacks is left out.
    pub fn project_row(&self, row: &Row) -> Row {
        match &self.select {
            None => row.clone(),
            Some(kept) => kept
                .iter()
                .filter_map(|name| Some((name.clone(), row.get(name)?.clone())))
                .collect(),
        }
    }

    /// The aggregate over `hits` (what [`apply`](Self::apply) kept), if the query asks for
    /// one.
    pub fn compute_aggregate(
        &self,
        rows: &[Row],
        hits: &[usize],
        today: Day,
    ) -> Option<AggregateResult> {
        let aggregate = self.aggregate.as_ref()?;
        Some(aggregate.compute(hits.iter().map(|&i| &rows[i]), today))
    }
}

impl SortKey {
    /// Values in the requested order; then, in either order, dates that do not parse; then
    /// no value.
    fn compare(&self, x: &SortValue<'_>, y: &SortValue<'_>) -> Ordering {
        x.tier().cmp(&y.tier()).then_with(|| {
            self.order.apply(match (x, y) {
                (SortValue::Day(p), SortValue::Day(q)) => p.cmp(q),
                (SortValue::Plain(p), SortValue::Plain(q))
                | (SortValue::Unparsed(p), SortValue::Unparsed(q)) => value_cmp(p, q),
                _ => Ordering::Equal,
            })
        })
    }

    fn key<'r>(&self, row: &'r Row) -> SortValue<'r> {
        match row.get(&self.field) {
            None | Some(Value::Null) => SortValue::Missing,
            Some(v) if self.date => match v.as_str().and_then(Day::parse) {
                Some(day) => SortValue::Day(day),
                None => SortValue::Unparsed(v),
            },
            Some(v) => SortValue::Plain(v),
        }
    }
}

enum SortValue<'r> {
    Day(Day),
    Plain(&'r Value),
    Unparsed(&'r Value),
    Missing,
}

impl SortValue<'_> {
    fn tier(&self) -> u8 {
        match self {
            SortValue::Day(_) | SortValue::Plain(_) => 0,
            SortValue::Unparsed(_) => 1,
            SortValue::Missing => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filter_wire_round_trips_and_rejects_unknown_keys() {
        let f: Filter =
            serde_json::from_value(json!({"field": "n", "op": "range", "min": 3})).unwrap();
        assert_eq!(f, Filter::at_least("n", 3));
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({"op": "range", "field": "n", "min": 3})
        );
        let err = serde_json::from_value::<Filter>(
            json!({"field": "n", "op": "equals", "value": 1, "extra": 2}),
        );
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("unknown field `extra`")
        );
        let err =
            serde_json::from_value::<Filter>(json!({"field": "n", "op": "like", "value": "x"}));
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("unknown variant `like`")
        );
    }

    #[test]
    fn date_sort_puts_unparsed_after_dates_and_nulls_last_in_either_order() {
        let key = SortKey {
            field: "d".into(),
            order: Order::Desc,
            date: true,
        };
        let rows: Vec<Row> = [
            json!({"d": "2026-01-02"}),
            json!({"d": "soon"}),
            json!({}),
            json!({"d": "2026-01-03T00:00:00Z"}),
        ]
        .iter()
        .filter_map(|v| v.as_object().cloned())
        .collect();
        let mut idx = vec![0, 1, 2, 3];
        idx.sort_by(|&a, &b| key.compare(&key.key(&rows[a]), &key.key(&rows[b])));
        // Desc reverses the dates; text that is no date and the missing value stay last.
        assert_eq!(idx, [3, 0, 1, 2]);
    }

    #[test]
    fn a_query_is_held_to_its_length_and_to_words_worth_searching() {
        let at_limit = "a".repeat(QUERY_CHARS_MAX - 4) + " log";
        assert_eq!(at_limit.chars().count(), QUERY_CHARS_MAX);
        assert!(Search::new(&at_limit).is_ok());
        let past = format!("{at_limit}s");
        assert_eq!(
            Search::new(&past),
            Err(QueryError::NoSearchWords {
                chars: QUERY_CHARS_MAX + 1
            })
        );
        // Whitespace folded before counting: 200 characters written with runs of spaces.
        let spaced = at_limit.replace(' ', "     ");
        assert!(Search::new(&spaced).is_ok());
        for (query, chars) in [("", 0), ("   ", 0), ("the of and", 10)] {
            assert_eq!(Search::new(query), Err(QueryError::NoSearchWords { chars }));
        }
        // A control character separates words, as whitespace does: the query is searched and
        // quoted without it.
        let belled = Search::new("a\u{7}bell\u{0}ring").unwrap();
        assert_eq!(belled.text, "a bell ring");
        assert_eq!(
            Search::new("\u{7}\u{1b}"),
            Err(QueryError::NoSearchWords { chars: 0 })
        );
        let message = Search::new("the").unwrap_err().to_string();
        assert!(message.contains("holds only common words"), "{message}");
        let message = Search::new(&past).unwrap_err().to_string();
        assert!(message.contains("is 201 characters"), "{message}");
    }

    #[test]
    fn names_are_searched_by_their_words() {
        assert_eq!(split_names("sql_predicate"), "sql predicate");
        assert_eq!(split_names("sqlPredicate"), "sql Predicate");
        assert_eq!(split_names("position.keyset"), "position keyset");
        assert_eq!(split_names("SQL"), "SQL");
        let search = Search::new("predicates").unwrap();
        let mentions = |row: &Value| search.mentioned_in(&row_words(row.as_object().unwrap()));
        assert!(mentions(&json!({"text": "fn sql_predicate("})));
        assert!(mentions(&json!({"text": "let p = self.sqlPredicate;"})));
        assert!(!mentions(&json!({"text": "fn sql_order_by("})));
        // Values at any depth, numbers too; keys are not text.
        assert!(mentions(
            &json!({"predicate": 1, "meta": {"notes": ["a predicate"]}})
        ));
        assert!(!mentions(&json!({"predicate": 1})));
    }

    #[test]
    fn relevance_orders_the_hits_and_ties_keep_stored_order() {
        let rows: Vec<Row> = [
            "timeout while reading",
            "nothing here",
            "timeout timeout timeout",
            "a timeout",
            "a timeout",
        ]
        .iter()
        .map(|t| json!({"text": t}).as_object().cloned().unwrap())
        .collect();
        let search = Search::new("timeouts").unwrap();
        let hits: Vec<usize> = (0..rows.len())
            .filter(|&i| search.mentioned_in(&row_words(&rows[i])))
            .collect();
        assert_eq!(hits, [0, 2, 3, 4]);
        // The most occurrences first; the two equal rows in stored order.
        assert_eq!(search.rank(&rows, &hits), [2, 3, 4, 0]);
        // Ranked among every row that passes the filters: the one that does not mention the
        // word is left out, the order the same.
        assert_eq!(search.rank(&rows, &[0, 1, 2, 3, 4]), [2, 3, 4, 0]);
        assert_eq!(search.rank(&rows, &[]), Vec::<usize>::new());
    }
}
