//! What a call answers: the text channel, the structured channel and the report
//! ([`Shaped`]), or why it could not be shaped ([`ShapeError`]).

use crate::budget::channel::ChannelPolicy;
use crate::page::envelope::{Frame, Status};
use crate::page::report::Report;
use crate::resolve::ResolveError;

/// Why a call could not be shaped.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    /// A resolver failed.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The caller's aggregate does not fit the record type.
    #[error(transparent)]
    Aggregate(#[from] crate::aggregate::AggregateError),
    /// A record's own `Serialize` implementation failed.
    #[error("could not render a {record}: {message}")]
    Render {
        /// The record noun.
        record: String,
        /// The serializer's message.
        message: String,
    },
    /// The upstream pages declared with [`Call::upstream`](crate::Call::upstream) do not fit
    /// the rows or the cursor: a mistake in the tool's code, described with what to do
    /// instead.
    #[error("upstream paging: {0}")]
    Upstream(String),
    /// A JSON result whose records could not be read where its configured projection says
    /// they are (the message says what the result has instead).
    #[error(transparent)]
    Records(#[from] ReadError),
    /// The configuration hides a field the view does not show (one it skips, or has not):
    /// configuration narrows a view, never widens it.
    #[error("{0}")]
    Hide(String),
}

/// A shaped tool result: the text channel, the structured channel and the report.
#[derive(Debug, Clone)]
pub struct Shaped {
    frame: Frame,
    /// The summary as the JSON states it (`frame.json_summary()`), made once.
    summary: String,
    text: String,
    structured: String,
    report: Report,
    channels: ChannelPolicy,
}

impl Shaped {
    pub(crate) fn new(
        frame: Frame,
        text: String,
        structured: String,
        report: Report,
        channels: ChannelPolicy,
    ) -> Self {
        Shaped {
            summary: frame.json_summary().into_owned(),
            frame,
            text,
            structured,
            report,
            channels,
        }
    }

    /// The channel profile this answer was shaped for: which channel is held to the budget,
    /// and what an MCP answer carries ([`ChannelPolicy`]).
    pub fn channels(&self) -> ChannelPolicy {
        self.channels
    }

    /// What a text-reading client shows the model.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The envelope as JSON text (MCP `structuredContent`).
    pub fn structured_json(&self) -> &str {
        &self.structured
    }

    /// The envelope as a JSON value.
    ///
    /// Never `Null` by accident: no `Shaped` is made whose structured channel does not read
    /// back as a JSON value (a record nesting deeper than a JSON reader accepts is a
    /// [`ShapeError::Render`] instead), so this always parses.
    pub fn structured(&self) -> serde_json::Value {
        match serde_json::from_str(&self.structured) {
            Ok(value) => value,
            // Unreachable: `reads_back` checked the text when the page was made. Said, not
            // hidden, should it ever happen. An error that cuts nothing: no `omitted` or
            // `next`, as every complete page.
            Err(e) => serde_json::json!({
                "status": "error",
                "summary": format!("the structured channel does not read back as JSON: {e}"),
                "data": [],
            }),
        }
    }

    /// The status.
    pub fn status(&self) -> Status {
        self.frame.status
    }

    /// The summary sentence as the structured channel states it: what was shown and left
    /// out, then how to go on when there is a way (the text channel says the way on in its
    /// `omitted:` and `next:` lines; [`Frame::summary`] and [`Frame::way_on`] hold the two
    /// apart).
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The cursor for the next page.
    pub fn next(&self) -> Option<&str> {
        self.frame.next.as_deref()
    }

    /// The envelope's frame (everything but the records).
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The call's report.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Whether this is an error envelope.
    pub fn is_error(&self) -> bool {
        self.frame.status == Status::Error
    }
}

/// Whether `json` reads back as a `serde_json::Value` (the same parse, numbers in range and
/// nesting within serde_json's limit of 128), without building one: a page whose records nest
/// too deep is an error rather than a structured channel nobody can read.
pub(crate) fn reads_back(json: &str) -> Result<(), String> {
    serde_json::from_str::<ReadsBack>(json)
        .map(|_| ())
        .map_err(|e| {
            format!("its JSON does not read back ({e}); nest it less deeply or skip the field")
        })
}

/// Any JSON value, parsed as `serde_json::Value` would be (`deserialize_any` parses numbers
/// and counts depth) and dropped as it goes.
struct ReadsBack;

impl<'de> serde::Deserialize<'de> for ReadsBack {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ReadsBack)
    }
}

impl<'de> serde::de::Visitor<'de> for ReadsBack {
    type Value = ReadsBack;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(ReadsBack)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<ReadsBack>()?.is_some() {}
        Ok(ReadsBack)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, ReadsBack>()?
            .is_some()
        {}
        Ok(ReadsBack)
    }
}

/// Why a result's records could not be read. The reading is as strict as serde's reading
/// of a derived type: what it cannot read as written is one of these, never records made up
/// of what it could.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The result is not JSON, or is more than one JSON value (serde_json's message:
    /// `trailing characters at line 2 column 1`).
    #[error("the result is not JSON: {0}")]
    NotJson(String),
    /// The path to the records leads nowhere in this result.
    #[error("the result has no `{path}`{}", has_keys(.has))]
    NoRecordsAt {
        /// The path, as configured.
        path: String,
        /// The keys present where the path broke off.
        has: Vec<String>,
    },
    /// What is at the path is not what the projection reads there: a list of records, or
    /// one record (an object) where it is configured `one = true`.
    #[error("{} is {kind}, not {}{}", at_path(.path), if *.one { "one record" } else { "a list of records" }, has_keys(.has))]
    NotRecords {
        /// The path, as configured (empty for the result itself).
        path: String,
        /// What is there.
        kind: String,
        /// Whether one record was configured (`one = true`), not a list.
        one: bool,
        /// The keys of the object there, when it is one (an error object's `message`…).
        has: Vec<String>,
    },
    /// An item of the list of records that is not a record (an object).
    #[error("item {item} of {} (counting from 1) is {kind}, not a record", at_path(.path))]
    NotARecord {
        /// The path, as configured (empty for the result itself).
        path: String,
        /// The item, counting from 1.
        item: usize,
        /// What it is.
        kind: String,
    },
    /// A key the projection reads written twice in one object: readers of JSON disagree on
    /// which value counts (serde's derive rejects it, a `serde_json::Value` keeps the last),
    /// so neither is shown.
    #[error("{} has the key `{key}` twice; one value was expected", where_is(.path, *.item))]
    DuplicateKey {
        /// The path, as configured (empty for the result itself).
        path: String,
        /// The record holding it, counting from 1 (`None`: on the path to the records).
        item: Option<usize>,
        /// The key, as `user.login` below the record.
        key: String,
    },
}

fn where_is(path: &str, item: Option<usize>) -> String {
    match item {
        None => at_path(path),
        Some(item) => format!("item {item} of {} (counting from 1)", at_path(path)),
    }
}

fn at_path(path: &str) -> String {
    if path.is_empty() {
        "the result".to_owned()
    } else {
        format!("`{path}`")
    }
}

fn has_keys(has: &[String]) -> String {
    if has.is_empty() {
        String::new()
    } else {
        format!("; it has: {}", has.join(", "))
    }
}
