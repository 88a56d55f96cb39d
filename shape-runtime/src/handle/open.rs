//! The companion tool that reopens a stored result ([`OpenResult`], `open_result`): the
//! query it takes, the stored rows read back as records, the same page pipeline.

use super::open_query::{OpenQuery, QueryError};
use super::store::{HandleStore, StoredResult};
use crate::aggregate::{FieldMeta, Row};
use crate::cursor::{CursorCodec, QueryHash};
use crate::fields::date::Day;
use crate::fields::ids::IdKey;
use crate::fields::rank::{KeyValue, Order};
use crate::handle::id::{Handle, HandleError, OPEN_RESULT};
use crate::page::render::{Layout, RenderRecord};
use crate::page::{PageInputs, Source};
use crate::page::{ShapeError, Shaped};
use crate::record::call_env::CallEnv;
use crate::record::{Field, FieldRole, Owned};
use crate::shaper::Shaper;
use crate::text::{TextMode, TextSerializer};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// The companion tool that reopens a stored result: filter, select, sort, page, aggregate.
///
/// Register it next to the tools that store results, under [`OpenResult::NAME`], with
/// [`OpenResult::input_schema`] as its input schema; answer a call with
/// [`OpenResult::call`].
pub struct OpenResult<'a, S> {
    store: &'a S,
    codec: Arc<CursorCodec>,
    shaper: Shaper,
}

impl<'a, S: HandleStore> OpenResult<'a, S> {
    /// The tool's name.
    pub const NAME: &'static str = OPEN_RESULT;

    /// What the tool does, for its description.
    pub const DESCRIPTION: &'static str = "Reopen a result that another tool stored behind a handle: search it \
         by words (query: the records that mention them, most relevant first), filter it (equals, \
         contains, range on its fields), keep some fields (select), sort it, page through it \
         (page_size, cursor), or aggregate it (count_by, top, recent, stats). Answers with the same \
         envelope as the tool that stored it.";

    /// The tool's input schema as a JSON object (an MCP tool's `inputSchema`): [`OpenQuery`]'s
    /// schema.
    pub fn input_schema() -> Arc<serde_json::Map<String, serde_json::Value>> {
        crate::schema::as_object(OpenQuery::input_schema())
    }

    /// The tool's output schema as a JSON object (an MCP tool's `outputSchema`): the envelope
    /// around records of any stored result, draft-07 like every schema here.
    pub fn output_schema() -> Arc<serde_json::Map<String, serde_json::Value>> {
        crate::schema::as_object(crate::schema::envelope_of(
            schemars::json_schema!({
                "type": "object",
                "description": "a record of the stored result, with the fields the query selects",
            }),
            serde_json::Map::new(),
            "open_result result",
        ))
    }

    /// The companion for `store`, signing its cursors with `codec`; pages are shaped with
    /// the defaults of [`Shaper::for_tool`] unless [`shaper`](Self::shaper) says otherwise.
    pub fn new(store: &'a S, codec: Arc<CursorCodec>) -> Self {
        OpenResult {
            store,
            codec,
            shaper: Shaper::for_tool(OPEN_RESULT),
        }
    }

    /// Budget, format and tokenizer of the pages it returns.
    pub fn shaper(mut self, shaper: Shaper) -> Self {
        self.shaper = shaper;
        self
    }

    /// Answers one call: `input` is the tool call's arguments, `owner` the principal the
    /// caller serves. Every failure is an error envelope that says how to recover. Recent
    /// counts ("opened in the last 30 days") count back from today in UTC.
    pub async fn call(&self, owner: &str, input: Value) -> Shaped {
        self.call_on(owner, input, Day::today_utc()).await
    }

    /// [`call`](Self::call), counting recent records back from `today`.
    pub async fn call_on(&self, owner: &str, input: Value, today: Day) -> Shaped {
        let query = match OpenQuery::from_value(input) {
            Ok(q) => q,
            Err(e) => {
                return self
                    .shaper
                    .error(&e.to_string(), "fix the arguments and call again");
            }
        };
        let Ok(handle) = query.handle.parse::<Handle>() else {
            return self.shaper.error(&HandleError::NotFound.to_string(), "");
        };
        let stored = match self.store.get(owner, &handle).await {
            Ok(stored) => stored,
            Err(e) => return self.shaper.error(&e.to_string(), ""),
        };
        match self.answer(&query, &stored, today) {
            Ok(shaped) => shaped,
            Err(Refusal::Query(e)) => {
                let remedy = section_remedy(&e, &stored)
                    .unwrap_or_else(|| "fix the arguments and call again".to_owned());
                self.shaper.error(&e.to_string(), &remedy)
            }
            Err(Refusal::Cursor(e)) => self.shaper.cursor_error(&e),
            Err(Refusal::Shape(e)) => self.shaper.error(&e.to_string(), "call again"),
        }
    }

    fn answer(
        &self,
        query: &OpenQuery,
        stored: &StoredResult,
        today: Day,
    ) -> Result<Shaped, Refusal> {
        let start = Instant::now();
        let mut fields_meta = FieldMeta::from_projection(&stored.record);
        FieldMeta::infer_values(&mut fields_meta, &stored.records);
        let valid = query.validate(&fields_meta).map_err(Refusal::Query)?;
        let matches = valid.apply(&stored.records);

        // Offsets are stable here: a stored result never changes. The cursor is still signed
        // and bound to the handle and every argument but itself.
        let mut unpaged = query.clone();
        unpaged.cursor = None;
        let query_hash = QueryHash::of(OPEN_RESULT, &unpaged).map_err(|e| {
            Refusal::Shape(ShapeError::Render {
                record: "query".to_owned(),
                message: e.to_string(),
            })
        })?;
        // The model's words, which may be copied from an outsider's text: shown as a name an
        // outsider chose is (no mark or delimiter of ours forged), then JSON-quoted, so
        // whatever it wrote stays one quoted phrase. An empty page says them too ("no lines
        // match …"), not "none found" of a result that has records.
        let searched = valid.search().map(|words| {
            serde_json::Value::from(crate::untrusted::echo::shown_name(words).as_ref()).to_string()
        });
        let mut call = self.shaper.call();
        if let Some(words) = &searched {
            call = call.query(words.as_str());
        }
        let call = call
            .page_size(valid.page_size() as usize)
            .total(matches.len() as u64)
            .paginate(Arc::clone(&self.codec), query_hash, valid.cursor())
            .map_err(Refusal::Cursor)?;
        let offset = usize::try_from(call.covered_before())
            .unwrap_or(usize::MAX)
            .min(matches.len());
        let lead = valid
            .compute_aggregate(&stored.records, &matches, today)
            .map(|a| a.sentence_with(&stored.record.name, &stored.record.plural));

        // The slice shows the selected fields, in stored order; without `select`, every
        // field but those set aside (named as left out, shown when selected).
        let aside: Vec<String>;
        let left_out = match valid.select() {
            Some(_) => valid.left_out(),
            None => {
                aside = stored
                    .aside
                    .iter()
                    .filter(|a| stored.record.fields.iter().any(|f| &f.name == *a))
                    .cloned()
                    .collect();
                &aside
            }
        };
        let shown = stored.record.select(
            |name| match valid.select() {
                Some(sel) => sel.iter().any(|s| s == name),
                None => !stored.aside.iter().any(|a| a == name),
            },
            left_out,
        );
        let order = match valid.sort() {
            Some((field, Order::Desc)) => {
                format!("sorted by {} descending", field.replace('_', " "))
            }
            Some((field, Order::Asc)) => format!("sorted by {}", field.replace('_', " ")),
            None if valid.search().is_some() => "the most relevant first".to_owned(),
            None => stored
                .record
                .order_phrase()
                .unwrap_or_else(|| "in stored order".to_owned()),
        };
        let order = match &searched {
            Some(words) => format!("mentioning {words}, {order}"),
            None => order,
        };
        // Nested records' untrusted fields, for those whose field this slice shows.
        let nested_untrusted = stored
            .nested_untrusted
            .iter()
            .filter(|path| {
                let top = path.split('.').next().unwrap_or_default();
                shown.fields.iter().any(|f| f.name == top)
            })
            .cloned()
            .collect();
        let layout = Layout::stored(&shown, order).with_nested_untrusted(nested_untrusted);

        let settings = call.page_settings();
        let remaining = &matches[offset..];
        let reach = remaining.len().min(settings.reach());
        let page = PageInputs {
            given: remaining.len(),
            resolvers: Vec::new(),
            lead: lead.as_deref(),
            details: None,
            handle: None,
            keyset: false,
            upstream: None,
        };
        let source = StoredRows {
            rows: &stored.records,
            order: &remaining[..reach],
            fields: &shown.fields,
            tool: &stored.tool,
            nested_untrusted: &stored.nested_untrusted,
        };
        crate::page::shape(&settings, &source, &layout, page, start).map_err(Refusal::Shape)
    }
}

impl crate::shaper::Call<'_> {
    /// The next page of a walk whose first page stored the whole result behind `handle`
    /// (the cursor this call was paginated with names it): the stored records after what
    /// the cursor covered, in stored order, with the figures the first page stated. What a
    /// layer in front of a tool answers a cursor with, without calling the tool again.
    #[cfg(feature = "rmcp")]
    pub(crate) fn shape_stored(
        &self,
        stored: &StoredResult,
        handle: Handle,
    ) -> Result<Shaped, ShapeError> {
        let start = Instant::now();
        // The walk's pages leave out what the first set aside, as it did.
        let call = self.clone();
        let call = call.aside(&stored.aside);
        let layout = Layout::owned(&stored.record)
            .with_nested_untrusted(stored.nested_untrusted.clone())
            .lines(stored.lines);
        let settings = call.page_settings();
        let offset = usize::try_from(call.covered_before())
            .unwrap_or(usize::MAX)
            .min(stored.records.len());
        let remaining: Vec<usize> = (offset..stored.records.len()).collect();
        let reach = remaining.len().min(settings.reach());
        let page = PageInputs {
            given: remaining.len(),
            resolvers: Vec::new(),
            lead: None,
            details: stored.details.as_deref(),
            handle: Some(handle),
            keyset: false,
            upstream: None,
        };
        let source = StoredRows {
            rows: &stored.records,
            order: &remaining[..reach],
            fields: &stored.record.fields,
            tool: &stored.tool,
            nested_untrusted: &stored.nested_untrusted,
        };
        crate::page::shape(&settings, &source, &layout, page, start)
    }
}

/// Where an unknown field is the name of a section of the stored answer (an answer of
/// several lists, each record naming its part), the filter that reopens that section.
fn section_remedy(error: &QueryError, stored: &StoredResult) -> Option<String> {
    let QueryError::Field(crate::aggregate::catalogue::FieldError::Unknown { field, .. }) = error
    else {
        return None;
    };
    let key = stored
        .record
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .find(|name| name.trim_start_matches('_') == "section")?;
    stored
        .records
        .iter()
        .any(|row| row.get(key).and_then(|v| v.as_str()) == Some(field.as_str()))
        .then(|| {
            let filter = serde_json::json!([{"field": key, "op": "equals", "value": field}]);
            format!("`{field}` is a section of this result: pass \"filter\": {filter} to reopen it")
        })
}

enum Refusal {
    Query(QueryError),
    Cursor(crate::cursor::CursorError),
    Shape(ShapeError),
}

/// A stored result's rows as a page's source: the rows at `order`, showing `fields`.
struct StoredRows<'a> {
    rows: &'a [Row],
    order: &'a [usize],
    fields: &'a [Field<Owned>],
    /// The tool that stored them: their untrusted values' provenance names it.
    tool: &'a str,
    /// Where nested records hold outsiders' text (`comments.body`).
    nested_untrusted: &'a [String],
}

impl Source for StoredRows<'_> {
    type Record<'e>
        = StoredRow<'e>
    where
        Self: 'e;

    fn records<'e>(&'e self, env: &'e CallEnv<'e>) -> Vec<StoredRow<'e>> {
        self.order
            .iter()
            .map(|&i| StoredRow {
                row: &self.rows[i],
                fields: self.fields,
                nested_untrusted: self.nested_untrusted,
                env,
            })
            .collect()
    }

    fn origin(&self) -> Option<&str> {
        Some(self.tool)
    }
}

/// A stored row, rendered like the typed record it came from.
struct StoredRow<'a> {
    row: &'a Row,
    fields: &'a [Field<Owned>],
    nested_untrusted: &'a [String],
    env: &'a CallEnv<'a>,
}

/// One stored value, in the channel being rendered.
struct StoredValue<'a> {
    value: Option<&'a Value>,
    field: &'a Field<Owned>,
    /// Where the nested records it shows hold outsiders' text, from the field down
    /// (`body` of `comments.body`).
    nested: Vec<&'a str>,
    env: &'a CallEnv<'a>,
}

impl Serialize for StoredValue<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        match (self.value, self.field.kind.role()) {
            (None | Some(Value::Null), _) => s.serialize_none(),
            // Already sanitised and capped when stored: only the provenance is added here.
            (Some(Value::String(text)), FieldRole::Untrusted) => {
                crate::untrusted::serialize_untrusted(text, &self.field.name, None, self.env, s)
            }
            // A list of texts: each item marked alone, as on the page that stored it, and
            // the marker its cap ended it with (the last element, of a capped field) shown
            // as that page showed it: no item reads as one (see `fit_items`).
            (Some(Value::Array(items)), FieldRole::Untrusted) => {
                use serde::ser::SerializeSeq;
                let capped = self.field.kind.max_tokens().is_some();
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(text)
                            if capped
                                && i + 1 == items.len()
                                && crate::untrusted::is_items_cut(text) =>
                        {
                            seq.serialize_element(text)?
                        }
                        Value::Null => seq.serialize_element(&())?,
                        Value::String(text) => seq.serialize_element(&StoredText {
                            text,
                            field: self.field,
                            env: self.env,
                        })?,
                        // Not text as stored (a store written otherwise): its JSON, as
                        // outsiders' text.
                        other => seq.serialize_element(&StoredText {
                            text: &other.to_string(),
                            field: self.field,
                            env: self.env,
                        })?,
                    }
                }
                seq.end()
            }
            (Some(Value::String(text)), FieldRole::Date)
                if crate::fields::date::iso_date(text) == Some(text.as_str()) =>
            {
                crate::fields::view::serialize_date(text, self.env, s)
            }
            (Some(value), _) if !self.nested.is_empty() => StoredNested {
                value,
                paths: self.nested.clone(),
                source: self.field.name.clone(),
                env: self.env,
            }
            .serialize(s),
            (Some(value), _) => value.serialize(s),
        }
    }
}

/// A stored value of nested records (one, or a list of them) whose outsiders' text is at
/// `paths`, each from the value down (`body`, `author.bio`; empty for the value itself):
/// that text marked as a value of its field (`source`, `comments.body`), as the page that
/// stored it marked it, the rest as it is.
struct StoredNested<'a> {
    value: &'a Value,
    paths: Vec<&'a str>,
    source: String,
    env: &'a CallEnv<'a>,
}

impl Serialize for StoredNested<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeSeq;
        let untrusted = self.paths.iter().any(|p| p.is_empty());
        match self.value {
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for value in items {
                    seq.serialize_element(&StoredNested {
                        value,
                        paths: self.paths.clone(),
                        source: self.source.clone(),
                        env: self.env,
                    })?;
                }
                seq.end()
            }
            Value::Null => s.serialize_none(),
            // Text of an untrusted field of a nested record (a capped list's marker too:
            // which of its lists were capped is not stored, so it is marked with them).
            Value::String(text) if untrusted => {
                crate::untrusted::serialize_untrusted(text, &self.source, None, self.env, s)
            }
            Value::Object(map) if !untrusted => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    let below: Vec<&str> = self
                        .paths
                        .iter()
                        .filter_map(|p| match p.strip_prefix(key.as_str()) {
                            Some("") => Some(""),
                            Some(rest) => rest.strip_prefix('.'),
                            None => None,
                        })
                        .collect();
                    if below.is_empty() {
                        out.serialize_entry(key, value)?;
                    } else {
                        out.serialize_entry(
                            key,
                            &StoredNested {
                                value,
                                paths: below,
                                source: format!("{}.{key}", self.source),
                                env: self.env,
                            },
                        )?;
                    }
                }
                out.end()
            }
            // Not text where text was stored (a store written otherwise): its JSON, as
            // outsiders' text.
            other if untrusted => crate::untrusted::serialize_untrusted(
                &other.to_string(),
                &self.source,
                None,
                self.env,
                s,
            ),
            other => other.serialize(s),
        }
    }
}

/// One text of a stored untrusted list, marked as a value of its field.
struct StoredText<'a> {
    text: &'a str,
    field: &'a Field<Owned>,
    env: &'a CallEnv<'a>,
}

impl Serialize for StoredText<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        crate::untrusted::serialize_untrusted(self.text, &self.field.name, None, self.env, s)
    }
}

impl StoredRow<'_> {
    fn value(&self, i: usize) -> StoredValue<'_> {
        let field = &self.fields[i];
        let nested = self
            .nested_untrusted
            .iter()
            .filter_map(|path| path.strip_prefix(field.name.as_str())?.strip_prefix('.'))
            .collect();
        StoredValue {
            value: self.row.get(&field.name),
            field,
            nested,
            env: self.env,
        }
    }
}

impl RenderRecord for StoredRow<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = serde_json::Serializer::new(out);
        let mut map = ser.serialize_map(None).map_err(|e| e.to_string())?;
        for (i, field) in self.fields.iter().enumerate() {
            if self.shows(i) {
                map.serialize_entry(&field.name, &self.value(i))
                    .map_err(|e| e.to_string())?;
            }
        }
        map.end().map_err(|e| e.to_string())
    }

    fn write_json_field(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String> {
        if index >= self.fields.len() {
            return Err(format!("no output field {index}"));
        }
        self.value(index)
            .serialize(&mut serde_json::Serializer::new(out))
            .map_err(|e| e.to_string())
    }

    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String> {
        if index >= self.fields.len() {
            return Err(format!("no output field {index}"));
        }
        let absent = self.fields[index].absent.as_deref();
        self.value(index)
            .serialize(TextSerializer::new(out, mode).absent(absent))
            .map_err(|e| e.to_string())
    }

    fn shows(&self, index: usize) -> bool {
        // A stored record keeps every field its view shows (`null` when absent) but those
        // of a record nobody described that the record did not have.
        self.fields
            .get(index)
            .is_some_and(|f| self.row.contains_key(&f.name))
    }

    fn rank_key(&self) -> Option<KeyValue> {
        None
    }

    fn id_key(&self) -> Option<IdKey<'_>> {
        None
    }
}
