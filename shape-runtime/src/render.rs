//! Renderers: compact JSON, prose (one line per record from the template) and a table for
//! uniform records (header once, one row per record).
//!
//! Every record is rendered as one *segment* that ends with a newline and does not start
//! with whitespace or `/`. The tokenizers' pre-tokenization never joins text across such a
//! boundary, so a page's token count is exactly the sum of its segments' counts plus the
//! envelope's: each record is tokenized once, and the total is exact, not estimated. The
//! JSON form puts the separating comma at the start of the next record (`\n,{`) for the same
//! reason: `},{` would merge into one token across two records.

use crate::project::{FieldKind, Projection, ProseSegment, ToolResult};
use crate::rank::KeyValue;
use crate::text::{TextMode, TextSerializer, push_escaped};
use crate::view::Cx;
use serde::{Deserialize, Serialize};

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

/// The cell separator of the table form.
pub const TABLE_SEPARATOR: &str = " | ";

/// A record that can be rendered: a typed record in its context, or a stored row.
pub trait RenderRecord {
    /// Appends the record as compact JSON.
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String>;
    /// Appends output field `index` as text.
    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String>;
    /// The rank key's value, for the next cursor.
    fn rank_key(&self) -> Option<KeyValue>;
    /// The full id, for the next cursor.
    fn id_text(&self) -> Option<&str>;
}

/// What rendering needs to know of a projection: names, which fields are dates or
/// untrusted, the prose template. Built from a derive's [`Projection`] or a stored result.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    /// One record.
    pub name: &'a str,
    /// Several.
    pub plural: &'a str,
    /// Output fields: name and kind.
    pub fields: Vec<(&'a str, FieldKind)>,
    /// The prose template.
    pub prose: Option<Vec<Seg<'a>>>,
    /// Source fields this view leaves out.
    pub skipped: Vec<&'a str>,
    /// The rank order in words.
    pub order: Option<String>,
    /// The rank order (ascending without a rank key).
    pub rank_order: crate::rank::Order,
}

/// A piece of a prose template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    /// Literal text.
    Text(&'a str),
    /// The output field with this index.
    Field(usize),
}

impl Layout<'static> {
    /// The layout of a derived record type.
    pub fn of(projection: &'static Projection) -> Layout<'static> {
        Layout {
            name: projection.name,
            plural: projection.plural,
            fields: projection.fields.iter().map(|f| (f.name, f.kind)).collect(),
            prose: projection.prose.map(|segments| {
                segments
                    .iter()
                    .map(|s| match *s {
                        ProseSegment::Text(t) => Seg::Text(t),
                        ProseSegment::Field(i) => Seg::Field(i),
                    })
                    .collect()
            }),
            skipped: projection.skipped.to_vec(),
            order: projection.order_phrase(),
            rank_order: projection.rank.map_or(crate::rank::Order::Asc, |r| r.order),
        }
    }
}

impl Layout<'_> {
    /// Whether any field is untrusted.
    pub fn has_untrusted(&self) -> bool {
        self.fields
            .iter()
            .any(|(_, k)| matches!(k, FieldKind::Untrusted { .. }))
    }

    /// Indices of the date fields.
    pub fn date_fields(&self) -> impl Iterator<Item = usize> + '_ {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, (_, k))| *k == FieldKind::Date)
            .map(|(i, _)| i)
    }
}

/// A typed record with the context it is projected in.
pub struct Typed<'a, T: ToolResult> {
    /// The record.
    pub record: &'a T,
    /// The context.
    pub cx: &'a Cx<'a, T::Needs>,
}

impl<T: ToolResult> RenderRecord for Typed<'_, T> {
    fn rank_key(&self) -> Option<KeyValue> {
        self.record.rank_key()
    }

    fn id_text(&self) -> Option<&str> {
        self.record.id_text()
    }

    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = serde_json::Serializer::new(out);
        self.record
            .serialize_record(self.cx, &mut ser)
            .map_err(|e| e.to_string())
    }

    fn write_field(&self, index: usize, out: &mut String, mode: TextMode) -> Result<(), String> {
        self.record
            .serialize_field(index, self.cx, TextSerializer::new(out, mode))
            .map_err(|e| e.to_string())
    }
}

/// Renders record segments for one layout, in any format.
pub struct Renderer<'p> {
    layout: &'p Layout<'p>,
}

impl<'p> Renderer<'p> {
    /// A renderer for `layout`.
    pub fn new(layout: &'p Layout<'p>) -> Self {
        Renderer { layout }
    }

    /// The table's header row (with its newline), for the table form.
    pub fn table_header(&self) -> String {
        let mut out = String::new();
        for (i, (name, _)) in self.layout.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(TABLE_SEPARATOR);
            }
            push_escaped(&mut out, name, TextMode::Cell);
        }
        out.push('\n');
        out
    }

    /// The segment of the record at output position `position` (0 for the first shown).
    pub fn segment(
        &self,
        record: &dyn RenderRecord,
        position: usize,
        format: Format,
    ) -> Result<String, String> {
        match format {
            Format::Json => json_segment(record, position),
            Format::Prose => self.prose_segment(record),
            Format::Table => self.table_segment(record),
        }
    }

    fn prose_segment(&self, record: &dyn RenderRecord) -> Result<String, String> {
        let mut out = String::with_capacity(128);
        match &self.layout.prose {
            Some(segments) => {
                for segment in segments {
                    match *segment {
                        Seg::Text(text) => push_escaped(&mut out, text, TextMode::Prose),
                        Seg::Field(i) => record.write_field(i, &mut out, TextMode::Prose)?,
                    }
                }
            }
            None => {
                for (i, (name, _)) in self.layout.fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str("; ");
                    }
                    out.push_str(name);
                    out.push_str(": ");
                    record.write_field(i, &mut out, TextMode::Prose)?;
                }
            }
        }
        Ok(finish_line(out))
    }

    fn table_segment(&self, record: &dyn RenderRecord) -> Result<String, String> {
        let mut out = String::with_capacity(128);
        for i in 0..self.layout.fields.len() {
            if i > 0 {
                out.push_str(TABLE_SEPARATOR);
            }
            record.write_field(i, &mut out, TextMode::Cell)?;
        }
        Ok(finish_line(out))
    }
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
    if !crate::tokens::segment_starts_cleanly(&line) {
        line.insert_str(0, "- ");
    }
    line.push('\n');
    line
}
