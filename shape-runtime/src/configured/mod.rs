//! Records without a Rust type: a tool's JSON result shaped by a projection written in
//! configuration ([`JsonProjection`], from `[tools.<name>.records]`), through the same record
//! model, page pipeline, budgets, cursors, handles and untrusted-text handling as a derived
//! type. Records are read out of the raw JSON in one pass, keeping only the values the
//! projection names (a [`ReadError`] names what it found instead).
//!
//! ```
//! use toolshape::{Budget, Format, config::ShapeConfig};
//!
//! let config = ShapeConfig::from_toml_str(r##"
//!     [tools.list_issues]
//!     budget = 400
//!
//!     [tools.list_issues.records]
//!     name = "issue"
//!     prose = "#{number} {title} ({state}), by {author}"
//!     fields = [
//!         { from = "number", id = true },
//!         { from = "title", untrusted = { max_tokens = 40 } },
//!         { from = "state", legend = "state" },
//!         { from = "user.login", rename = "author" },
//!         { from = "updated_at", date = true, rank = "desc" },
//!     ]
//!
//!     [legends.state]
//!     open = "open"
//!     closed = "closed (done)"
//! "##).unwrap();
//!
//! let raw = r#"[
//!   {"number": 7, "title": "Crash on save", "state": "open", "user": {"login": "dana", "id": 1},
//!    "updated_at": "2026-11-02T10:00:00Z", "node_id": "I_7"},
//!   {"number": 9, "title": "Docs typo", "state": "closed", "user": {"login": "sam", "id": 2},
//!    "updated_at": "2026-11-05T08:00:00Z", "node_id": "I_9"}
//! ]"#;
//! let projection = config.json_projection("list_issues").unwrap();
//! let page = config.shaper("list_issues").unwrap()
//!     .format(Format::Prose)
//!     .call()
//!     .shape_blocking((&projection, raw))
//!     .unwrap();
//! assert_eq!(
//!     page.text(),
//!     "ok: 2 issues, most recent updated at first; «…» is untrusted text from list_issues.title; dates are in 2026.\n\
//!      #9 «Docs typo» (closed (done)), by sam\n\
//!      #7 «Crash on save» (open), by dana\n\
//!      omitted: none; this view leaves out node_id.\n\
//!      next: null"
//! );
//! ```

#[cfg_attr(
    not(feature = "rmcp"),
    allow(
        dead_code,
        reason = "the harness (feature `rmcp`) reads answers nobody described"
    )
)]
mod infer;
mod plan;
mod read;
mod rows;
mod schema;
#[cfg_attr(not(feature = "test-seams"), allow(unreachable_pub))]
pub(crate) mod spec;
#[cfg_attr(
    not(feature = "rmcp"),
    allow(
        dead_code,
        reason = "the harness (feature `rmcp`) tidies answers nobody described"
    )
)]
mod tidy;
mod value;

#[cfg(feature = "rmcp")]
pub(crate) use infer::Inferred;
pub use read::ReadError;
pub use tidy::{Rules, Times};

use crate::handle::{HandleStore, Keep};
use crate::page::render::Layout;
use crate::page::{PageInputs, ShapeError, Shaped};
use crate::record::{Owned, Projection};
use crate::shaper::{Call, Ids, RowOrder};
use plan::Plan;
use read::{ReadRecords, Want};
use rows::{JsonRow, JsonSource};
use spec::{ConfiguredLegend, ConfiguredRecords};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// A projection of JSON records written as configuration, checked when the configuration
/// loaded: where a result's records are and what each one shows. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct JsonProjection {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    tool: String,
    at: Vec<String>,
    one: bool,
    plan: Plan,
}

impl JsonProjection {
    /// The projection `records` describe, with the legends they name.
    pub(crate) fn new(
        records: &ConfiguredRecords,
        legends: &BTreeMap<String, ConfiguredLegend>,
    ) -> JsonProjection {
        JsonProjection {
            inner: Arc::new(Inner {
                tool: records.tool.clone(),
                at: records.at.clone(),
                one: records.one,
                plan: Plan::new(&records.record, legends),
            }),
        }
    }

    /// The tool whose results it shapes.
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// The record model every page reads: names, output fields, the keys configured as left
    /// out, prose, rank and id.
    pub fn projection(&self) -> &Projection<Owned> {
        &self.inner.plan.projection
    }

    /// The JSON Schema of one record as shaped.
    pub fn record_schema(&self) -> schemars::Schema {
        schema::record(&self.inner.plan)
    }

    /// The JSON Schema of the envelope a tool answering with these records returns (its
    /// MCP `outputSchema`), in either form of the records, draft-07 as every envelope's.
    ///
    /// The fields in `hide` ([`Shaper::hide`](crate::Shaper::hide)) are not in its records.
    ///
    /// ```
    /// use toolshape::config::ShapeConfig;
    ///
    /// let config = ShapeConfig::from_toml_str(r#"
    ///     [tools.list_issues.records]
    ///     fields = [{ from = "number", id = true }, { from = "title", untrusted = {} }]
    /// "#).unwrap();
    /// let schema = config.json_projection("list_issues").unwrap().envelope_schema(&[]).to_value();
    /// assert_eq!(schema["$schema"], toolshape::schema::DIALECT);
    /// assert_eq!(schema["properties"]["fields"]["const"], serde_json::json!(["number", "title"]));
    /// ```
    pub fn envelope_schema(&self, hide: &[String]) -> schemars::Schema {
        let plan = &self.inner.plan;
        let mut untrusted = plan.projection.untrusted_paths();
        untrusted.extend(plan.nested_untrusted());
        untrusted.retain(|p| {
            let top = p.split('.').next().unwrap_or_default();
            !hide.iter().any(|h| h == top)
        });
        let mut record = self.record_schema();
        crate::schema::without_fields(&mut record, hide);
        crate::schema::envelope_with(
            record,
            serde_json::Map::new(),
            &format!("{} result", plan.projection.name),
            &untrusted,
        )
    }

    fn want(&self) -> &Want {
        &self.inner.plan.want
    }

    fn ids(&self) -> Ids {
        Ids {
            field: self.inner.plan.projection.id.is_some(),
            // A record may lack the key.
            may_be_absent: true,
        }
    }

    fn records(&self) -> read::Records<'_> {
        read::Records {
            at: &self.inner.at,
            one: self.inner.one,
        }
    }

    /// The record model of one result: the keys its records have that no output reads are
    /// left out too, after those configured, then the result's own keys beside the records
    /// (but those [`beside`](Self::beside) states), then nested records' as `field.name`.
    fn described(&self, read: &ReadRecords<'_>) -> Projection<Owned> {
        let plan = &self.inner.plan;
        let mut record = plan.projection.clone();
        let stated = Self::stated(read);
        let outer = read
            .outer
            .iter()
            .filter(|key| !stated.iter().any(|(name, _)| name == *key));
        for key in read.unread.iter().chain(outer) {
            if !record.skipped.contains(key) {
                record.skipped.push(key.clone());
            }
        }
        for name in plan
            .nested_skipped()
            .into_iter()
            .chain(read.nested_unread.iter().cloned())
        {
            if !record.skipped.contains(&name) {
                record.skipped.push(name);
            }
        }
        record
    }

    /// The most values [`beside`](Self::beside) states; past them, the keys are named as left
    /// out, as the others beside the records are.
    pub(crate) const BESIDE: usize = 8;

    /// The numbers and flags of a result beside its records (at most [`BESIDE`](Self::BESIDE)).
    fn stated<'r>(read: &'r ReadRecords<'_>) -> &'r [(String, String)] {
        &read.outer_values[..read.outer_values.len().min(Self::BESIDE)]
    }

    /// What a result holds beside its records, for the summary of a walk's first page: each
    /// number and flag beside them (a search's `total_count`), `beside the issues:
    /// total_count 2,417, incomplete_results false`; the rest of its keys there are named
    /// as left out ([`described`](Self::described)). `None` when there is none.
    fn beside(&self, read: &ReadRecords<'_>) -> Option<String> {
        let stated = Self::stated(read);
        if stated.is_empty() {
            return None;
        }
        let each: Vec<String> = stated
            .iter()
            .map(|(name, value)| format!("{} {value}", crate::untrusted::echo::clean(name)))
            .collect();
        Some(format!(
            "beside the {}: {}",
            self.inner.plan.projection.plural,
            each.join(", ")
        ))
    }
}

/// A tool's JSON result as [`Call::shape`] takes it (`(&projection, json)`): its text (`&str`, `&String`), or a
/// value already parsed (`&Value`, such as an MCP tool's `structuredContent`). Both are read
/// by the same rules; only the text can show a key written twice.
#[derive(Debug, Clone, Copy)]
pub enum Json<'j> {
    /// The result's text.
    Text(&'j str),
    /// The result, parsed.
    Value(&'j serde_json::Value),
}

impl<'j> From<&'j str> for Json<'j> {
    fn from(text: &'j str) -> Self {
        Json::Text(text)
    }
}

impl<'j> From<&'j String> for Json<'j> {
    fn from(text: &'j String) -> Self {
        Json::Text(text)
    }
}

impl<'j> From<&'j serde_json::Value> for Json<'j> {
    fn from(value: &'j serde_json::Value) -> Self {
        Json::Value(value)
    }
}

impl<'j> Json<'j> {
    /// Reads the records out of the result, as `projection` places them.
    fn read(self, projection: &JsonProjection) -> Result<ReadRecords<'j>, ReadError> {
        let (records, want) = (projection.records(), projection.want());
        match self {
            Json::Text(raw) => read::read_text(raw, records, want),
            Json::Value(value) => read::read(value, records, want),
        }
    }

    /// `call`, with the result's text for its report where there is one.
    fn call<'a, 'b>(self, call: &Call<'a>) -> Call<'b>
    where
        'a: 'b,
        'j: 'b,
    {
        match self {
            Json::Text(raw) => call.with_raw(raw),
            Json::Value(_) => call.clone(),
        }
    }
}

/// The records of one result made ready for a page.
struct Prepared<'p, 'a> {
    rows: Vec<JsonRow<'p, 'a>>,
    record: Projection<Owned>,
    /// What the result holds beside its records ([`JsonProjection::beside`]).
    beside: Option<String>,
}

impl<'a> Call<'a> {
    /// Shapes the records of `json`, a tool's JSON result (its text, or a value already
    /// parsed such as an MCP tool's `structuredContent`: [`Json`]), as `projection` says:
    /// read in one pass (only the values it names), ranked, cut to the budget on record
    /// boundaries, paged with this call's cursor, the same envelope as a derived type's. It
    /// is read as strictly as serde reads it into a derived type: a result without the
    /// records where the projection says they are (an error object where a list is
    /// configured), an item of the list that is no object, a key an output reads written
    /// twice in one object, or more after the JSON value (a second document) is
    /// [`ShapeError::Records`], which says what the result has instead; never records made of
    /// what could be read. A parsed `Value` holds no key twice (`serde_json` keeps the last of
    /// two), so a key written twice can only be refused in the text: pass the text where
    /// there is one.
    pub(crate) fn json(
        &self,
        projection: &JsonProjection,
        json: Json<'_>,
    ) -> Result<Shaped, ShapeError> {
        let start = Instant::now();
        self.shaper().hide_check(projection.projection())?;
        let read = json.read(projection)?;
        json.call(self).json_page(projection, &read, start)
    }

    /// [`json`](Self::json), storing the whole result behind a handle when it is worth it
    /// ([`Call::shape_or_store`]'s rules): the answer carries the handle, the summary states
    /// the whole result, later pages of the walk state the same handle.
    pub(crate) async fn json_or_store_entry<S: HandleStore>(
        &self,
        projection: &JsonProjection,
        json: Json<'_>,
        keep: Keep<'_, S>,
    ) -> Result<Shaped, ShapeError> {
        let start = Instant::now();
        self.shaper().hide_check(projection.projection())?;
        let read = json.read(projection)?;
        json.call(self)
            .json_or_store(projection, &read, keep, start)
            .await
    }

    async fn json_or_store<S: HandleStore>(
        &self,
        projection: &JsonProjection,
        read: &ReadRecords<'_>,
        keep: Keep<'_, S>,
        start: Instant,
    ) -> Result<Shaped, ShapeError> {
        let call = self;
        let kept = call.walk_kept(&keep).await;
        let prepared = call.prepare_json(projection, read);
        let plan = &projection.inner.plan;
        let (handle, details) = match kept {
            Some((handle, details)) => (Some(handle), details),
            None => {
                let (whole, _) = call.ranked_whole(&prepared.rows, projection.ids());
                let source = JsonSource {
                    rows: &prepared.rows,
                    order: &whole,
                    plan,
                };
                let form = crate::handle::StoredForm {
                    call,
                    keep: &keep,
                    coverage: call.coverage(&prepared.rows),
                    projection: &prepared.record,
                    nested_untrusted: plan.nested_untrusted(),
                };
                let layout = Layout::owned(&prepared.record);
                let stored = crate::page::prepare(&call.page_settings(), &source, &layout, form)?;
                call.put_stored(&keep, stored).await?
            }
        };
        call.json_records_page(projection, &prepared, handle, details.as_deref(), start)
    }

    fn prepare_json<'p>(
        &self,
        projection: &JsonProjection,
        read: &'p ReadRecords<'a>,
    ) -> Prepared<'p, 'a>
    where
        'a: 'p,
    {
        let plan = &projection.inner.plan;
        Prepared {
            rows: read
                .records
                .iter()
                .map(|record| JsonRow::new(record, plan))
                .collect(),
            record: projection.described(read),
            beside: projection.beside(read),
        }
    }

    fn json_page(
        &self,
        projection: &JsonProjection,
        read: &ReadRecords<'_>,
        start: Instant,
    ) -> Result<Shaped, ShapeError> {
        let prepared = self.prepare_json(projection, read);
        let details = match self.aggregate {
            None => None,
            Some(aggregate) => {
                let whole: Vec<usize> = (0..prepared.rows.len()).collect();
                Some(self.json_aggregate(projection, &prepared, &whole, aggregate)?)
            }
        };
        self.json_records_page(projection, &prepared, None, details.as_deref(), start)
    }

    fn json_records_page(
        &self,
        projection: &JsonProjection,
        prepared: &Prepared<'_, '_>,
        handle: Option<crate::handle::id::Handle>,
        details: Option<&str>,
        start: Instant,
    ) -> Result<Shaped, ShapeError> {
        let plan = &projection.inner.plan;
        let upstream = self.upstream_plan(prepared.rows.len())?;
        let (order, given, keyset) = self.page_order(
            &prepared.rows,
            RowOrder::Ranked,
            self.reach(),
            projection.ids(),
        );
        let layout = Layout::owned(&prepared.record)
            .with_nested_untrusted(plan.nested_untrusted())
            .lines(self.lines);
        // What the answer holds (its parts, what it holds beside its records, the latter a
        // standing fact of the walk's first page) comes first among the facts of the whole
        // result.
        let beside = prepared
            .beside
            .as_deref()
            .filter(|_| self.page_settings().states_standing_facts());
        let facts: Vec<&str> = [self.parts, beside, details]
            .into_iter()
            .flatten()
            .filter(|d| !d.is_empty())
            .collect();
        let details = (!facts.is_empty()).then(|| facts.join("; "));
        let page = PageInputs {
            given,
            resolvers: Vec::new(),
            lead: None,
            details: details.as_deref(),
            handle,
            keyset,
            upstream,
        };
        let source = JsonSource {
            rows: &prepared.rows,
            order: &order,
            plan,
        };
        crate::page::shape(&self.page_settings(), &source, &layout, page, start)
    }

    /// The summary's details for the call's aggregate over every record of the result.
    fn json_aggregate(
        &self,
        projection: &JsonProjection,
        prepared: &Prepared<'_, '_>,
        whole: &[usize],
        aggregate: &crate::aggregate::Aggregate,
    ) -> Result<String, ShapeError> {
        let plan = &projection.inner.plan;
        let source = JsonSource {
            rows: &prepared.rows,
            order: whole,
            plan,
        };
        let then = crate::shaper::Details {
            aggregate,
            today: self.today,
            coverage: self.coverage(&prepared.rows),
            projection: &prepared.record,
            hide: self.shaper().current_hide(),
        };
        let layout = Layout::owned(&prepared.record);
        crate::page::prepare(&self.page_settings(), &source, &layout, then)
    }
}
