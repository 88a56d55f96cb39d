//! Facts a page's text states once in its head (`«…» is untrusted text from …; dates are in
//! 2026`), and how its values are written because of them.

use super::render::{Format, Layout, RenderRecord};
use crate::record::call_env::DateStyle;
use crate::untrusted::{Provenance, UntrustedPolicy};

/// Facts the text channel states once in its head, and how its values are written because
/// of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notes {
    /// The head's note on outsiders' text (`«…» is untrusted text from …`).
    pub untrusted: Option<String>,
    /// The whole note with the year every parsed date of the reach shares (`…; dates are in
    /// 2026`), stated on a page only when a record it shows has such a date
    /// ([`Notes::line`]); written once, as the page is sized many times.
    pub with_year: Option<String>,
    /// How many records of the reach before each place (in page order, one more entry than
    /// records) have a parsed date: whether a range of them has one, at once.
    pub dated: Vec<u32>,
    /// `Feb 11` when every date shares the year the note states.
    pub date_style: DateStyle,
    /// Untrusted values wrapped in `«…»`, their sources named once in the note.
    pub compact_marks: bool,
    /// A JSON text channel names its untrusted fields once in the envelope (`"untrusted"`)
    /// instead of tagging each value.
    pub named_fields: bool,
}

impl Notes {
    /// No notes: every value written in full.
    pub(crate) fn none() -> Self {
        Notes {
            untrusted: None,
            with_year: None,
            dated: Vec::new(),
            date_style: DateStyle::Iso,
            compact_marks: false,
            named_fields: false,
        }
    }

    /// The notes for `records` (the page's reach) in the text `format`, from `tool`; the
    /// untrusted-text note only where the page states the walk's standing facts (`standing`:
    /// a later page keeps the marks on its values, and its reader read the note on the
    /// first).
    pub(crate) fn of<R: RenderRecord>(
        format: Format,
        policy: &UntrustedPolicy,
        layout: &Layout<'_>,
        records: &[R],
        (tool, standing): (&str, bool),
    ) -> Self {
        let mut notes = Notes::none();
        if format == Format::Json {
            // The compact form of a JSON text channel: the envelope's `untrusted` key, as on
            // the structured channel, at no cost a value (a tag is about 14 tokens).
            notes.named_fields = policy.provenance == Provenance::Compact
                && !records.is_empty()
                && !layout.untrusted_paths().is_empty();
            return notes;
        }
        // Nested records' untrusted fields too (`comments.body`): their values get the same
        // marks, so the note names where each comes from.
        let paths = layout.untrusted_paths();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        // A page with no record in reach shows no outsiders' text: no note of it.
        if !records.is_empty()
            && let Some(line) = crate::untrusted::note_line(policy, tool, &paths)
        {
            notes.compact_marks = true;
            notes.untrusted = standing.then_some(line);
        }
        if let Some((year, dated)) = shared_year(records, layout) {
            notes.date_style = DateStyle::MonthDay { year };
            let clause = format!("dates are in {year}");
            notes.with_year = Some(match &notes.untrusted {
                Some(untrusted) => format!("{untrusted}; {clause}"),
                None => clause,
            });
            notes.dated = dated;
        }
        notes
    }

    /// The head's note for a page showing the records of the reach at `shown` (`None`: any
    /// page of the reach, for sizing, which the note of a page can only be shorter than).
    /// The shared year is a fact of the dates a page shows: a page with none does not state
    /// it (its values were written in the year's style, but none of them is a date); and the
    /// untrusted-text note one of the records it shows.
    pub(crate) fn line(&self, shown: Option<std::ops::Range<usize>>) -> Option<&str> {
        let Some(range) = shown else {
            return self.with_year.as_deref().or(self.untrusted.as_deref());
        };
        // A page showing no record shows no outsiders' text to mark, and no date.
        if range.is_empty() {
            return None;
        }
        let count = |i: usize| self.dated.get(i).copied();
        match count(range.end) > count(range.start) {
            true => self.with_year.as_deref(),
            false => self.untrusted.as_deref(),
        }
    }
}

/// The year every parsed date of the records shares, if there is at least one date, with
/// which records have one. The records are rendered on the structured channel, where dates
/// are ISO.
fn shared_year<R: RenderRecord>(records: &[R], layout: &Layout<'_>) -> Option<(u16, Vec<u32>)> {
    let dates: Vec<usize> = layout
        .date_fields()
        .map(|i| layout.source_index(i))
        .collect();
    if dates.is_empty() {
        return None;
    }
    let mut year = None;
    let mut dated = Vec::with_capacity(records.len() + 1);
    dated.push(0u32);
    let mut buf = String::new();
    for record in records {
        let mut has = false;
        for &field in &dates {
            buf.clear();
            record
                .write_field(field, &mut buf, crate::text::TextMode::Prose)
                .ok()?;
            if crate::fields::date::iso_date(&buf).is_none() {
                continue; // null or unparsed: written as given either way
            }
            let y = crate::fields::view::date_year(&buf)?;
            has = true;
            match year {
                None => year = Some(y),
                Some(seen) if seen != y => return None,
                Some(_) => {}
            }
        }
        let before = dated.last().copied().unwrap_or(0);
        dated.push(before + u32::from(has));
    }
    Some((year?, dated))
}
