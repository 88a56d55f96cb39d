//! What a call answers: the text channel, the structured channel and the report
//! ([`Shaped`]), or why it could not be shaped ([`ShapeError`]).

use crate::envelope::{Frame, Status};
use crate::report::Report;
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
}

/// A shaped tool result: the text channel, the structured channel and the report.
#[derive(Debug, Clone)]
pub struct Shaped {
    frame: Frame,
    text: String,
    structured: String,
    report: Report,
}

impl Shaped {
    pub(crate) fn new(frame: Frame, text: String, structured: String, report: Report) -> Self {
        Shaped {
            frame,
            text,
            structured,
            report,
        }
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
    pub fn structured(&self) -> serde_json::Value {
        serde_json::from_str(&self.structured).unwrap_or(serde_json::Value::Null)
    }

    /// The status.
    pub fn status(&self) -> Status {
        self.frame.status
    }

    /// The summary sentence.
    pub fn summary(&self) -> &str {
        &self.frame.summary
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

    /// The report, to add what a session learns after the call (its lookups).
    pub(crate) fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// Whether this is an error envelope.
    pub fn is_error(&self) -> bool {
        self.frame.status == Status::Error
    }
}
