//! What a call's summary says of the result beyond its count: an aggregate over the rows
//! given ([`Call::aggregate`]), worded for the part of the result they are. The same figures
//! go with a result stored behind a handle ([`Call::shape_or_store`]).

use super::call::Call;
use crate::aggregate::{Aggregate, AggregateError, FieldMeta, Row};
use crate::fields::date::Day;
use crate::page::render::RenderRecord;
use crate::page::{Records, ShapeError, Source, TypedRows, UseRecords};
use crate::record::tool_result::ToolResult;
use crate::record::{Projection, Storage};
use serde_json::Value;

/// The records of a result as rows for aggregation, and what the summary says of them.
pub(crate) struct Summary {
    /// The structured channel's records, serialised.
    pub rows: Vec<Row>,
    /// The aggregate's details, prefixed with what part of the result they cover when the
    /// rows are not the whole of it ("of pods 13–300: …").
    pub details: String,
}

/// Why a summary could not be made.
pub(crate) enum SummaryError {
    /// A record did not serialise (its `Serialize` impl failed).
    Serialise(String),
    /// The aggregate names a field the records lack, or a value it cannot read.
    Aggregate(AggregateError),
}

/// Serialises `records` and computes `aggregate` over them (`None` counts them).
/// `(first, whole)` is where the rows stand in the result ([`Call::coverage`]).
pub(crate) fn summarise<R: RenderRecord, St: Storage>(
    records: &[R],
    projection: &Projection<St>,
    hide: &[String],
    aggregate: Option<&Aggregate>,
    today: Option<Day>,
    (first, whole): (u64, bool),
) -> Result<Summary, SummaryError> {
    let mut rows: Vec<Row> = Vec::with_capacity(records.len());
    for record in records {
        let value = record.to_value().map_err(SummaryError::Serialise)?;
        if let Value::Object(mut map) = value {
            if !hide.is_empty() {
                map.retain(|key, _| !hide.contains(key));
            }
            rows.push(map);
        }
    }
    let mut fields = FieldMeta::from_projection(projection);
    fields.retain(|f| !hide.iter().any(|h| h == f.name.as_str()));
    FieldMeta::infer_values(&mut fields, &rows);
    let result = aggregate
        .cloned()
        .unwrap_or_default()
        .compute(&fields, &rows, today.unwrap_or_else(Day::today_utc))
        .map_err(SummaryError::Aggregate)?;
    // The page states the count; the aggregate adds what it does not, and says what it
    // counts when the rows are a part of the result.
    let details = result.details();
    let details = if whole || details.is_empty() {
        details
    } else {
        let last = first.saturating_add(rows.len().saturating_sub(1) as u64);
        format!(
            "of {} {}–{}: {details}",
            projection.plural.as_ref(),
            crate::text::thousands(first),
            crate::text::thousands(last)
        )
    };
    Ok(Summary { rows, details })
}

/// What an aggregate's details are made from: the records of a whole result, rendered.
pub(crate) struct Details<'c, St: Storage> {
    pub aggregate: &'c Aggregate,
    pub today: Option<Day>,
    pub coverage: (u64, bool),
    pub projection: &'c Projection<St>,
    /// Output fields the view hides: never counted.
    pub hide: &'c [String],
}

impl<Src: Source, St: Storage> UseRecords<Src> for Details<'_, St> {
    type Out = Result<String, ShapeError>;
    // Every record of the result is read for the figures: nothing shown, nothing counted.
    const COUNTS: bool = false;
    fn use_records<'r, 'e: 'r>(self, records: Records<'r, Src::Record<'e>>) -> Self::Out
    where
        Src: 'e,
    {
        let records = records.rows.structured;
        summarise(
            records,
            self.projection,
            self.hide,
            Some(self.aggregate),
            self.today,
            self.coverage,
        )
        .map(|summary| summary.details)
        .map_err(|e| match e {
            SummaryError::Serialise(message) => ShapeError::Render {
                record: self.projection.name.as_ref().to_owned(),
                message,
            },
            SummaryError::Aggregate(e) => ShapeError::Aggregate(e),
        })
    }
}

impl Call<'_> {
    /// The summary's details for the call's aggregate over every row given (`whole`, in any
    /// order, its keys resolved to `names`).
    pub(crate) fn aggregate_details<T: ToolResult>(
        &self,
        rows: &[T],
        whole: &[usize],
        names: &<T::Needs as crate::resolve::Resolvers>::Names,
        aggregate: &Aggregate,
    ) -> Result<String, ShapeError> {
        let source = TypedRows {
            rows,
            order: whole,
            names,
        };
        let then = Details {
            aggregate,
            today: self.today,
            coverage: self.coverage(rows),
            projection: T::PROJECTION,
            hide: self.shaper.current_hide(),
        };
        let layout = crate::page::render::Layout::of(T::PROJECTION);
        crate::page::prepare(&self.page_settings(), &source, &layout, then)
    }
}
