//! Renderers: compact JSON, prose (one line per record from the template) and a table for
//! uniform records (header once, one row per record).
//!
//! Every record is rendered as one *segment* that ends with a newline and does not start
//! with whitespace or `/`. The tokenizers' pre-tokenization never joins text across such a
//! boundary, so a page's token count is exactly the sum of its segments' counts plus the
//! envelope's: each record is tokenized once, and the total is exact, not estimated. The
//! JSON form puts the separating comma at the start of the next record (`\n,{`) for the same
//! reason: `},{` would merge into one token across two records.

use crate::fields::ids::IdKey;
use crate::fields::rank::{KeyValue, Order};
use crate::fields::view::Cx;
use crate::record::tool_result::ToolResult;
use crate::record::{Owned, Projection, Storage};
use crate::text::prose::Fallback;
use crate::text::{TextMode, TextSerializer, push_escaped};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How the text channel is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The envelope as compact JSON, one record per line.
    Json,
    /// Summary first, one line per record from the prose template, omission and remedy last.
    #[default]
    Prose,
    /// Summary first, a header row, one row per record, omission and remedy last.
    Table,
}

/// How the records of a JSON envelope (the structured channel, and a text channel in
/// [`Format::Json`]) are written.
///
/// ```
/// use toolshape::{Budget, ChannelPolicy, Shaper, envelope::StructuredForm, ToolResult};
///
/// #[derive(ToolResult)]
/// #[shape(name = "city", plural = "cities")]
/// struct City {
///     #[shape(show)]
///     name: String,
///     #[shape(rank = desc)]
///     population: u64,
/// }
///
/// let rows = vec![City { name: "Lyon".into(), population: 522_000 }];
/// let shaped = Shaper::for_tool("list_cities")
///     .channels(ChannelPolicy::Structured)
///     .structured_form(StructuredForm::Rows)
///     .shape_blocking(&rows)
///     .unwrap();
/// let envelope = shaped.structured();
/// assert_eq!(envelope["fields"], serde_json::json!(["name", "population"]));
/// assert_eq!(envelope["data"], serde_json::json!([["Lyon", 522000]]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredForm {
    /// `"data": [{"name": …, "population": …}, …]`: one object a record, every field named
    /// in every record.
    Objects,
    /// `"fields": ["name", "population"], "data": [[…, …], …]`: the field names once, then
    /// one array a record with its values in that order (a nested record or a list inside a
    /// row stays a JSON value). Cheaper by the field names' tokens on every record, and the
    /// order inside each row holds even where a JSON object's keys come out sorted (a
    /// `serde_json::Value` without serde_json's `preserve_order` feature).
    Rows,
}

impl StructuredForm {
    /// The form a shaper uses when none is set: [`Rows`](StructuredForm::Rows) under
    /// [`ChannelPolicy::Structured`](crate::ChannelPolicy::Structured), whose model reads
    /// only this channel and should pay for it no more than for the table (on 30 GitHub
    /// issues, rows cost 0.83× objects and 0.99× the table text:
    /// `cargo run --release --example structured_cost`);
    /// [`Objects`](StructuredForm::Objects) under the other profiles, where the structured
    /// channel is a program's to read or the model reads the text.
    ///
    /// ```
    /// use toolshape::{ChannelPolicy, envelope::StructuredForm};
    ///
    /// assert_eq!(StructuredForm::for_profile(ChannelPolicy::Structured), StructuredForm::Rows);
    /// assert_eq!(StructuredForm::for_profile(ChannelPolicy::Both), StructuredForm::Objects);
    /// ```
    pub fn for_profile(channels: crate::budget::channel::ChannelPolicy) -> StructuredForm {
        match channels {
            crate::budget::channel::ChannelPolicy::Structured => StructuredForm::Rows,
            crate::budget::channel::ChannelPolicy::Both
            | crate::budget::channel::ChannelPolicy::Text => StructuredForm::Objects,
        }
    }
}

/// The cell separator of the table form.
pub(crate) const TABLE_SEPARATOR: &str = " | ";

/// A record that can be rendered: a typed record in its context, or a stored row.
pub(crate) trait RenderRecord {
    /// Appends the record as compact JSON.
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String>;
    /// Appends output field `index` as compact JSON (a value of the rows form).
    fn write_json_field(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String>;
    /// Appends output field `index` as text.
    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String>;
    /// The record as a JSON value (what a stored result and an aggregate read).
    fn to_value(&self) -> Result<serde_json::Value, String> {
        let mut buf = Vec::new();
        self.write_json(&mut buf)?;
        serde_json::from_slice(&buf).map_err(|e| e.to_string())
    }
    /// Whether the record has output field `index`: a record nobody described leaves out
    /// the keys it does not have (its neighbours' may differ), where a described record
    /// shows every field, absent or not.
    fn shows(&self, _index: usize) -> bool {
        true
    }
    /// The rank key's value, for the next cursor.
    fn rank_key(&self) -> Option<KeyValue>;
    /// The full id, for the next cursor.
    fn id_key(&self) -> Option<IdKey<'_>>;
}

/// What one page reads of a record description: the description itself, borrowed from a
/// derive's static or from a stored result, and how the page names its order. `name`,
/// `plural`, `skipped` and `rank_order` are the description's, read once.
#[derive(Debug, Clone)]
pub(crate) struct Layout<'a> {
    record: Described<'a>,
    /// One record.
    pub name: &'a str,
    /// Several.
    pub plural: &'a str,
    /// Source fields this view leaves out (nested records' as `field.name`).
    pub skipped: Vec<String>,
    /// The rank order in words.
    pub order: Option<String>,
    /// The rank order (ascending without a rank key).
    pub rank_order: Order,
    /// Untrusted paths inside nested records that the description does not carry (a stored
    /// result's `nested_untrusted`).
    nested_untrusted: Vec<String>,
    /// A narrowed view's fields: for each field the page shows, its index in the records
    /// (`None`: every field, in the records' order).
    shown: Option<Arc<[usize]>>,
    /// The first few field names (`number, title, state, …`), for the remedy of a stored
    /// record too large for its page: reopened with a few of them, it fits.
    pub fields_hint: String,
    /// When the records are a text's lines in their order: where their `text` is and, for a
    /// line in parts, their `part` (see [`Layout::lines`]). Found once, not per line.
    lines: Option<LineFields>,
}

/// Where a text's line records hold their text and their part (`None`: no line is in parts).
#[derive(Debug, Clone, Copy)]
struct LineFields {
    text: usize,
    part: Option<usize>,
}

/// The field names a remedy names: the first few, `…` for the rest.
fn fields_hint<'n>(names: impl Iterator<Item = &'n str>) -> String {
    const NAMED: usize = 5;
    let names: Vec<&str> = names.collect();
    let mut hint = names[..names.len().min(NAMED)].join(", ");
    if names.len() > NAMED {
        hint.push_str(", …");
    }
    hint
}

/// The record description a page reads, wherever it lives.
#[derive(Debug, Clone)]
enum Described<'a> {
    Static(&'static Projection),
    Owned(&'a Projection<Owned>),
    /// A narrowed view of another description, made for the page.
    Narrowed(Arc<Projection<Owned>>),
}

/// Runs `$body` with `$p` bound to the described record, whatever its storage.
macro_rules! with_record {
    ($described:expr, $p:ident => $body:expr) => {
        match &$described {
            Described::Static($p) => $body,
            Described::Owned($p) => $body,
            Described::Narrowed(narrowed) => {
                let $p: &Projection<Owned> = narrowed;
                $body
            }
        }
    };
}

impl<'a> Layout<'a> {
    /// The layout of a description held elsewhere (configured records), its order said as
    /// the description says it.
    pub(crate) fn owned(record: &'a Projection<Owned>) -> Layout<'a> {
        Layout::new(Described::Owned(record), record.order_phrase())
    }
}

impl Layout<'static> {
    /// The layout of a derived record type.
    pub(crate) fn of(projection: &'static Projection) -> Layout<'static> {
        Layout::new(Described::Static(projection), projection.order_phrase())
    }
}

impl<'a> Layout<'a> {
    /// The layout of a stored description, its order said as `order`.
    pub(crate) fn stored(record: &'a Projection<Owned>, order: String) -> Layout<'a> {
        Layout::new(Described::Owned(record), Some(order))
    }

    fn new(record: Described<'a>, order: Option<String>) -> Layout<'a> {
        fn parts<S: Storage>(p: &Projection<S>) -> (&str, &str, Vec<String>, Order) {
            (
                p.name.as_ref(),
                p.plural.as_ref(),
                p.skipped_names(),
                p.rank.map_or(Order::Asc, |r| r.order),
            )
        }
        let (name, plural, skipped, rank_order) = match record {
            Described::Static(p) => parts(p),
            Described::Owned(p) => parts(p),
            Described::Narrowed(_) => unreachable!("a narrowed layout is made from another"),
        };
        let fields_hint = with_record!(record, p => fields_hint(p.output_names()));
        Layout {
            record,
            name,
            plural,
            skipped,
            order,
            rank_order,
            nested_untrusted: Vec::new(),
            shown: None,
            fields_hint,
            lines: None,
        }
    }

    /// The same layout for a text's lines in their order, when `lines`: in JSON a whole
    /// line is its text alone (`"fn main() {"`), a part of a line longer than a page its
    /// record (`{"line":12,"part":"line 12, part 2 of 3","text":"…"}`): a line costs its text
    /// and about two tokens, not a record's keys or a row's number. A narrowed view (fields
    /// hidden) keeps the records' form.
    /// Records with no `text` field are not lines: they keep their form.
    pub(crate) fn lines(mut self, lines: bool) -> Self {
        let names = self.field_names();
        let at = |name: &str| names.iter().position(|n| *n == name);
        self.lines = match (lines && self.shown.is_none(), at("text")) {
            (true, Some(text)) => Some(LineFields {
                text,
                part: at("part"),
            }),
            _ => None,
        };
        self
    }

    /// Whether the JSON form writes the records as a text's lines ([`Layout::lines`]).
    pub(crate) fn is_lines(&self) -> bool {
        self.lines.is_some()
    }

    /// This view without the fields named in `hide` (configuration narrowing a view per tool
    /// and client): they are left out as if skipped, named in `omitted.fields` after the
    /// others; a prose template that names one gives way to the `name value` line. `None`
    /// when nothing is hidden.
    pub(crate) fn narrowed(&self, hide: &[String]) -> Option<Layout<'a>> {
        if hide.is_empty() {
            return None;
        }
        let owned = with_record!(self.record, p => owned_record(p));
        let names: Vec<String> = owned.fields.iter().map(|f| f.name.clone()).collect();
        let shown: Vec<usize> = (0..names.len())
            .filter(|&i| !hide.contains(&names[i]))
            .collect();
        let hidden: Vec<String> = names.iter().filter(|n| hide.contains(n)).cloned().collect();
        let mut narrowed = owned.select(|name| !hide.contains(&name.to_owned()), &hidden);
        narrowed.rank = None;
        let kept_top = |path: &String| {
            let top = path.split('.').next().unwrap_or_default();
            !hide.iter().any(|h| h == top)
        };
        let mut nested_untrusted: Vec<String> = self
            .untrusted_paths()
            .into_iter()
            .filter(|p| p.contains('.') && kept_top(p))
            .collect();
        nested_untrusted.dedup();
        Some(Layout {
            skipped: {
                let mut skipped = self.skipped.clone();
                skipped.extend(hidden);
                skipped
            },
            record: Described::Narrowed(Arc::new(narrowed)),
            name: self.name,
            plural: self.plural,
            order: self.order.clone(),
            rank_order: self.rank_order,
            nested_untrusted,
            shown: Some(shown.into()),
            fields_hint: fields_hint(
                names
                    .iter()
                    .filter(|n| !hide.contains(n))
                    .map(String::as_str),
            ),
            lines: None,
        })
    }

    /// The index in the records of the page's field `index`.
    pub(crate) fn source_index(&self, index: usize) -> usize {
        self.shown
            .as_ref()
            .and_then(|shown| shown.get(index).copied())
            .unwrap_or(index)
    }

    /// Whether this is a narrowed view of the records' fields.
    pub(crate) fn is_narrowed(&self) -> bool {
        self.shown.is_some()
    }

    /// The same layout, naming `paths` (`field.name`) as outsiders' text inside nested
    /// records too.
    pub(crate) fn with_nested_untrusted(mut self, paths: Vec<String>) -> Self {
        self.nested_untrusted = paths;
        self
    }

    /// Whether any field is untrusted.
    pub(crate) fn has_untrusted(&self) -> bool {
        with_record!(self.record, p => p.has_untrusted())
    }

    /// Indices of the date fields.
    pub(crate) fn date_fields(&self) -> impl Iterator<Item = usize> + use<> {
        let dates: Vec<usize> = with_record!(self.record, p => p.date_fields().collect());
        dates.into_iter()
    }

    /// The index of the id field, if the record has one.
    pub(crate) fn id_field(&self) -> Option<usize> {
        with_record!(self.record, p => p.id)
    }

    /// The output field names, in order (the rows form's `fields`).
    pub(crate) fn field_names(&self) -> Vec<&str> {
        with_record!(self.record, p => p.output_names().collect())
    }

    /// The untrusted fields, nested records' as `field.name`.
    pub(crate) fn untrusted_paths(&self) -> Vec<String> {
        let mut paths = with_record!(self.record, p => p.untrusted_paths());
        paths.extend(self.nested_untrusted.iter().cloned());
        paths
    }
}

/// A typed record with the context it is projected in.
pub(crate) struct Typed<'a, T: ToolResult> {
    /// The record.
    pub record: &'a T,
    /// The context.
    pub cx: Cx<'a, T::Needs>,
}

impl<T: ToolResult> RenderRecord for Typed<'_, T> {
    fn rank_key(&self) -> Option<KeyValue> {
        self.record.rank_key()
    }

    fn id_key(&self) -> Option<IdKey<'_>> {
        self.record.id_key()
    }

    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = serde_json::Serializer::new(out);
        self.record
            .serialize_record(&self.cx, &mut ser)
            .map_err(|e| e.to_string())
    }

    fn write_json_field(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = serde_json::Serializer::new(out);
        self.record
            .serialize_field(index, &self.cx, &mut ser)
            .map_err(|e| e.to_string())
    }

    fn to_value(&self) -> Result<serde_json::Value, String> {
        self.record
            .serialize_record(&self.cx, serde_json::value::Serializer)
            .map_err(|e| e.to_string())
    }

    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String> {
        let absent = T::PROJECTION.fields.get(index).and_then(|f| f.absent);
        self.cx
            .env()
            .as_words(|| {
                self.record.serialize_field(
                    index,
                    &self.cx,
                    TextSerializer::new(out, mode).absent(absent),
                )
            })
            .map_err(|e| e.to_string())
    }
}

/// Renders record segments for one layout, in any format.
pub(crate) struct Renderer<'p> {
    layout: &'p Layout<'p>,
}

impl<'p> Renderer<'p> {
    /// A renderer for `layout`.
    pub(crate) fn new(layout: &'p Layout<'p>) -> Self {
        Renderer { layout }
    }

    /// The table's header row (with its newline), for the table form.
    pub(crate) fn table_header(&self) -> String {
        with_record!(self.layout.record, p => table_header(p))
    }

    /// The segment of the record at output position `position` (0 for the first shown); a
    /// JSON segment in `form`.
    pub(crate) fn segment(
        &self,
        record: &dyn RenderRecord,
        position: usize,
        format: Format,
        form: StructuredForm,
    ) -> Result<String, String> {
        match (format, form, self.layout.lines) {
            (Format::Json, _, Some(fields)) => line_segment(record, position, fields),
            (Format::Json, StructuredForm::Objects, _) if self.layout.is_narrowed() => {
                self.narrowed_json_segment(record, position)
            }
            (Format::Json, StructuredForm::Objects, _) => json_segment(record, position),
            (Format::Json, StructuredForm::Rows, _) => self.row_segment(record, position),
            (Format::Prose, ..) => self.prose_segment(record),
            (Format::Table, ..) => self.table_segment(record),
        }
    }

    /// `[v1,v2,…]` and a newline, the comma before it on every row but the first (`\n,[`:
    /// `],[` would merge into one token across two records).
    fn row_segment(&self, record: &dyn RenderRecord, position: usize) -> Result<String, String> {
        let count = with_record!(self.layout.record, p => field_count(p));
        let mut buf = Vec::with_capacity(256);
        if position > 0 {
            buf.push(b',');
        }
        buf.push(b'[');
        for i in 0..count {
            if i > 0 {
                buf.push(b',');
            }
            record.write_json_field(self.layout.source_index(i), &mut buf)?;
        }
        buf.extend_from_slice(b"]\n");
        String::from_utf8(buf).map_err(|e| e.to_string())
    }

    /// An object of the fields a narrowed view shows, as the record's own object is written.
    fn narrowed_json_segment(
        &self,
        record: &dyn RenderRecord,
        position: usize,
    ) -> Result<String, String> {
        let names = self.layout.field_names();
        let mut buf = Vec::with_capacity(256);
        if position > 0 {
            buf.push(b',');
        }
        buf.push(b'{');
        let mut first = true;
        for (i, name) in names.iter().enumerate() {
            // A key the record does not have is left out, as its own object leaves it out.
            let source = self.layout.source_index(i);
            if !record.shows(source) {
                continue;
            }
            if !first {
                buf.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut buf, name).map_err(|e| e.to_string())?;
            buf.push(b':');
            record.write_json_field(source, &mut buf)?;
        }
        buf.extend_from_slice(b"}\n");
        String::from_utf8(buf).map_err(|e| e.to_string())
    }

    fn prose_segment(&self, record: &dyn RenderRecord) -> Result<String, String> {
        with_record!(self.layout.record, p => prose_line(p, record, self.layout)).map(finish_line)
    }

    fn table_segment(&self, record: &dyn RenderRecord) -> Result<String, String> {
        let count = with_record!(self.layout.record, p => field_count(p));
        let mut out = String::with_capacity(128);
        for i in 0..count {
            if i > 0 {
                out.push_str(TABLE_SEPARATOR);
            }
            let source = self.layout.source_index(i);
            if record.shows(source) {
                record.write_field(source, &mut out, TextMode::Cell)?;
            }
        }
        Ok(finish_line(out))
    }
}

fn owned_record<S: Storage>(p: &Projection<S>) -> Projection<Owned> {
    p.to_owned_record()
}

fn field_count<S: Storage>(p: &Projection<S>) -> usize {
    p.fields.as_ref().len()
}

fn table_header<S: Storage>(p: &Projection<S>) -> String {
    let mut out = String::new();
    for (i, name) in p.output_names().enumerate() {
        if i > 0 {
            out.push_str(TABLE_SEPARATOR);
        }
        push_escaped(&mut out, name, TextMode::Cell);
    }
    out.push('\n');
    out
}

/// The record's line from the template, or `name: value; …` without one.
fn prose_line<S: Storage>(
    p: &Projection<S>,
    record: &dyn RenderRecord,
    layout: &Layout<'_>,
) -> Result<String, String> {
    let mut out = String::with_capacity(128);
    crate::text::prose::fill_shown(
        p,
        Fallback::Line,
        &mut out,
        |out, text| push_escaped(out, text, TextMode::Prose),
        |index, out| record.write_field(layout.source_index(index), out, TextMode::Prose),
        |index| record.shows(layout.source_index(index)),
    )?;
    Ok(out)
}

/// A line of a text ([`Layout::lines`]): its text as a JSON string, the comma before it on
/// every line but the page's first; a part of a line, its record. (The layout of lines is
/// never narrowed: a field's index is its index in the records.)
fn line_segment(
    record: &dyn RenderRecord,
    position: usize,
    fields: LineFields,
) -> Result<String, String> {
    if fields.part.is_some_and(|p| record.shows(p)) {
        return json_segment(record, position);
    }
    let mut buf = Vec::with_capacity(128);
    if position > 0 {
        buf.push(b',');
    }
    record.write_json_field(fields.text, &mut buf)?;
    buf.push(b'\n');
    String::from_utf8(buf).map_err(|e| e.to_string())
}

fn json_segment(record: &dyn RenderRecord, position: usize) -> Result<String, String> {
    let mut buf = Vec::with_capacity(256);
    if position > 0 {
        buf.push(b',');
    }
    record.write_json(&mut buf)?;
    buf.push(b'\n');
    String::from_utf8(buf).map_err(|e| e.to_string())
}

// A line that starts with whitespace or `/` could join the previous line's last token
// during pre-tokenization; a leading "- " keeps segments independent.
fn finish_line(mut line: String) -> String {
    if !crate::budget::tokens::segment_starts_cleanly(&line) {
        line.insert_str(0, "- ");
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod hint_tests {
    use super::fields_hint;

    /// A remedy names five fields at most: at five, all and no `…`; at six, five and `…`.
    #[test]
    fn a_remedy_names_five_fields_and_marks_the_rest() {
        let names = ["a", "b", "c", "d", "e", "f"];
        assert_eq!(fields_hint(names[..4].iter().copied()), "a, b, c, d");
        assert_eq!(fields_hint(names[..5].iter().copied()), "a, b, c, d, e");
        assert_eq!(fields_hint(names.iter().copied()), "a, b, c, d, e, …");
        assert_eq!(fields_hint(std::iter::empty()), "");
    }
}
