//! One page being made ([`Page`]): what it was given and what it worked out once, the
//! ledger of what it has rendered and counted, and what every stage asks of it (its reach, a
//! record's id, place and segment, the counts).

use super::admit::Segment;
use super::envelope::{LeftOut, Words};
use super::inputs::{PageInputs, PageSettings, Records};
use super::render::{Format, Layout, RenderRecord, Renderer, StructuredForm};
use super::report::RecordCounts;
use super::shaped::ShapeError;
use crate::budget::channel::ChannelPolicy;
use crate::budget::channel::PerChannel;
use crate::handle::id::OPEN_RESULT;
use crate::untrusted::{Provenance, UntrustedPolicy};

/// Whether a JSON text channel marks untrusted values one by one (a tag around each, or a
/// datamark inside), so it differs from the structured channel's JSON.
fn json_text_marks_values(policy: &UntrustedPolicy) -> bool {
    matches!(policy.provenance, Provenance::Tag | Provenance::RandomTag)
        || policy.datamark.is_some()
}

/// What rendering records for a page has done: records tokenized, what rendering had noticed
/// before each (by index in the reach: the report's diagnostics are those before the first
/// record not covered; a skipped record's are taken back), and a record rendered, counted and
/// given back, kept so it is not rendered again (its index, whether it was rendered to
/// follow another record, the segment).
#[derive(Default)]
pub(super) struct Ledger {
    pub(super) tokenized: usize,
    pub(super) noticed_before: Vec<crate::record::call_env::Diagnostics>,
    pub(super) pending: Option<(usize, bool, Segment)>,
}

/// One page being made: what it knows, worked out once.
pub(super) struct Page<'p, R> {
    pub(super) settings: &'p PageSettings<'p>,
    pub(super) records: &'p Records<'p, R>,
    pub(super) layout: &'p Layout<'p>,
    pub(super) inputs: PageInputs<'p>,
    pub(super) renderer: Renderer<'p>,
    /// Records matching the query, when known (an upstream with pages to come does not say).
    pub(super) total: Option<u64>,
    pub(super) words: Words<'p>,
    pub(super) skipped_fields: Vec<String>,
    /// The untrusted fields a JSON envelope names (none when provenance is off).
    pub(super) untrusted: Vec<String>,
    /// The rows form's field names.
    pub(super) fields: Option<Vec<&'p str>>,
    /// How the JSON envelope writes records: the settings' form, but objects where a record
    /// in reach lacks a field (records nobody described), which the rows form cannot leave out.
    pub(super) form: StructuredForm,
    /// The text channel needs its own rendering unless it is the same JSON.
    pub(super) text_differs: bool,
    /// Whether the structured channel is counted: where the profile holds it, or where the
    /// text channel is the same JSON. Under [`ChannelPolicy::Text`] with a text of its own
    /// its tokens read 0 (no budget holds them, no report states them).
    pub(super) counts_structured: bool,
    /// Whether the text channel names the fields this view leaves out.
    pub(super) left_out: bool,
    pub(super) ledger: std::cell::RefCell<Ledger>,
}

impl<'p, R: RenderRecord> Page<'p, R> {
    pub(super) fn new(
        settings: &'p PageSettings<'p>,
        records: &'p Records<'p, R>,
        layout: &'p Layout<'p>,
        inputs: PageInputs<'p>,
    ) -> Self {
        let covered_before = settings
            .shown_before
            .saturating_add(settings.skipped_before);
        let reached = covered_before.saturating_add(inputs.given as u64);
        // An upstream with pages still to come gives no total unless the caller knows it.
        let total = match &inputs.upstream {
            Some(plan) if plan.has_next() => settings.total.map(|t| t.max(reached)),
            _ => Some(settings.total.unwrap_or(reached).max(reached)),
        };
        // Rows from an upstream keep its order, as with `keep_order`.
        let keep_order = settings.keep_order || inputs.upstream.is_some();
        let words = Words {
            name: layout.name,
            plural: layout.plural,
            order: layout.order.as_deref().filter(|_| !keep_order),
            query: settings.query,
            lead: inputs.lead,
            details: inputs.details,
            reopen_with: OPEN_RESULT,
            fetch_one: settings.fetch_one,
            fields: Some(layout.fields_hint.as_str()).filter(|h| !h.is_empty()),
        };
        let untrusted_paths = layout.untrusted_paths();
        // Under the structured profile no model reads a separate text channel: it is the
        // JSON (an error's text is made apart, with the remedy), so records are rendered
        // and counted once. A JSON text channel differs only where its untrusted values
        // are tagged or datamarked.
        let text_differs = settings.channels != ChannelPolicy::Structured
            && (settings.format != Format::Json
                || !untrusted_paths.is_empty() && json_text_marks_values(settings.untrusted));
        let left_out = match settings.left_out {
            LeftOut::EveryPage => true,
            LeftOut::FirstPage => covered_before == 0,
            LeftOut::Never => false,
        };
        let field_count = layout.field_names().len();
        let form = match settings.form {
            // A text's lines: strings, and records for the parts of a long line.
            _ if layout.is_lines() => StructuredForm::Objects,
            StructuredForm::Rows
                if records
                    .rows
                    .structured
                    .iter()
                    .any(|r| (0..field_count).any(|i| !r.shows(layout.source_index(i)))) =>
            {
                StructuredForm::Objects
            }
            form => form,
        };
        Page {
            settings,
            records,
            layout,
            renderer: Renderer::new(layout),
            total,
            words,
            skipped_fields: super::envelope::left_out_fields(&layout.skipped),
            // A page with no record in reach shows no outsiders' text to name.
            untrusted: match settings.untrusted.provenance {
                Provenance::Off => Vec::new(),
                _ if records.rows.structured.is_empty() => Vec::new(),
                // Named once per walk: a later page's reader read them on the first.
                _ if !settings.states_standing_facts() => Vec::new(),
                _ => untrusted_paths.clone(),
            },
            fields: (form == StructuredForm::Rows).then(|| layout.field_names()),
            form,
            text_differs,
            counts_structured: settings.channels.held().structured || !text_differs,
            left_out,
            inputs,
            ledger: Default::default(),
        }
    }

    /// Records in this call's reach (ranked, resolved, each rendered when looked at).
    pub(super) fn reach(&self) -> usize {
        self.records.rows.structured.len()
    }

    /// The record's id as it shows it, for naming it when it is skipped; `None` for a record
    /// without one (an id through `?`, a configured record without the key), named by its
    /// place instead.
    pub(super) fn id_text(&self, index: usize) -> Option<String> {
        let field = self.layout.source_index(self.layout.id_field()?);
        self.records.rows.text[index].id_key()?;
        let mut out = String::new();
        // The text channel's pass counts nothing: naming the record notices nothing twice.
        self.records.rows.text[index]
            .write_field(field, &mut out, crate::text::TextMode::Prose)
            .ok()?;
        Some(out)
    }

    /// The record's place in the whole result (1-based).
    pub(super) fn place(&self, index: usize) -> u64 {
        let s = self.settings;
        s.shown_before
            .saturating_add(s.skipped_before)
            .saturating_add(index as u64 + 1)
    }

    /// The record at `index` rendered on each channel and counted once per channel; `lead`:
    /// with the separator that follows another record (`\n,{` in the JSON forms).
    pub(super) fn segment(&self, index: usize, lead: bool) -> Result<Segment, ShapeError> {
        let s = self.settings;
        let render_err = |message: String| ShapeError::Render {
            record: self.layout.name.to_owned(),
            message,
        };
        let position = usize::from(lead);
        let structured = self
            .renderer
            .segment(
                &self.records.rows.structured[index],
                position,
                Format::Json,
                self.form,
            )
            .map_err(render_err)?;
        let text = match self.text_differs {
            true => Some(
                self.renderer
                    .segment(
                        &self.records.rows.text[index],
                        position,
                        s.format,
                        self.form,
                    )
                    .map_err(render_err)?,
            ),
            false => None,
        };
        // The text channel's JSON differs from the structured one only around untrusted
        // values: what they share is tokenized once. A structured channel no profile holds
        // (the model reads the text) is not counted: it is rendered for the answer's
        // structured JSON, never sent to that model.
        let (ts, tt) = match text.as_deref() {
            None => {
                let ts = s.tokenizer.count(&structured);
                (ts, ts)
            }
            Some(t) if !self.counts_structured => (0, s.tokenizer.count(t)),
            Some(t) if s.format == Format::Json => {
                crate::budget::tokens::count_pair(s.tokenizer, &structured, t)
            }
            Some(t) => (s.tokenizer.count(&structured), s.tokenizer.count(t)),
        };
        Ok(Segment {
            structured,
            text,
            tokens: PerChannel {
                structured: ts,
                text: tt,
            },
        })
    }

    /// The report's counts for a page showing `shown` records (none skipped).
    pub(super) fn counts(&self, shown: usize) -> RecordCounts {
        let s = self.settings;
        let reached = s
            .shown_before
            .saturating_add(s.skipped_before)
            .saturating_add(self.inputs.given as u64);
        let total = self.total.unwrap_or(reached);
        RecordCounts {
            total,
            given: self.inputs.given,
            shown,
            skipped: 0,
            omitted: total.saturating_sub(s.shown_before.saturating_add(shown as u64)),
        }
    }
}
