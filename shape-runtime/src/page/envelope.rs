//! The uniform envelope: the same five keys from every tool, always in this order.
//!
//! `status` (`ok | partial | empty | error`), `summary` (one sentence a model can act on
//! alone), `data` (projected records only), `omitted` (how many records were left out, why,
//! and which fields this view leaves out), `next` (a cursor, or null).
//!
//! `empty` is a finding, not an error; an error always carries its remedy. The omission and
//! the remedy are in the same sentence, so a truncated list never reads like a complete one.

use serde::{Serialize, Serializer};
use std::fmt::Write as _;

/// What kind of answer this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every matching record is shown.
    Ok,
    /// Some records are shown; `omitted` says how many are not and `next` how to get them.
    Partial,
    /// Nothing matched: a finding, not a failure. Do not retry the same query.
    Empty,
    /// The call failed; the summary says how to recover.
    Error,
}

impl Status {
    /// Every status, in the order the schema lists them (keep beside the enum: the schema's
    /// `enum` is made from it).
    pub(crate) const ALL: [Status; 4] = [Status::Ok, Status::Partial, Status::Empty, Status::Error];

    /// The status as written in the envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Partial => "partial",
            Status::Empty => "empty",
            Status::Error => "error",
        }
    }
}

/// Why records were left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OmitReason {
    /// The token budget was full.
    ResultBudget,
    /// The page size was reached before the budget.
    PageSize,
    /// A record was larger than the whole budget on its own.
    RecordTooLarge,
    /// The caller filtered records out.
    Filtered,
}

impl OmitReason {
    /// Every reason, in the order the schema lists them (the schema's `enum` is made from it).
    pub(crate) const ALL: [OmitReason; 4] = [
        OmitReason::ResultBudget,
        OmitReason::PageSize,
        OmitReason::RecordTooLarge,
        OmitReason::Filtered,
    ];

    /// The reason as written in the envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            OmitReason::ResultBudget => "result_budget",
            OmitReason::PageSize => "page_size",
            OmitReason::RecordTooLarge => "record_too_large",
            OmitReason::Filtered => "filtered",
        }
    }

    fn phrase(self) -> &'static str {
        match self {
            OmitReason::ResultBudget => "result budget",
            OmitReason::PageSize => "page size",
            OmitReason::RecordTooLarge => "too large for the budget",
            OmitReason::Filtered => "filtered out",
        }
    }
}

/// The `omitted` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// Records of the whole result not shown by this answer nor an earlier page of the same
    /// walk (those after this page, and those skipped as too large); `None` (`null`) when the
    /// source gives no total and more remain.
    pub count: Option<u64>,
    /// Why; `null` when nothing was left out.
    pub reason: Option<OmitReason>,
    /// Source fields this view leaves out (the projection dropped them; the records may
    /// well have them).
    pub fields: Vec<String>,
    /// Of `count`, records skipped because no page of their own could show them within the
    /// budget, by this page and the earlier ones of the walk (each named, with what its page
    /// needs, in the summary of the page that skipped it).
    #[serde(skip_serializing_if = "is_zero")]
    pub too_large: u64,
    /// The handle the whole result is stored under, when it was too large to page through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Everything in an envelope except the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The status.
    pub status: Status,
    /// The one-sentence summary, up to how to go on.
    pub summary: String,
    /// How to go on, which the JSON summary states after [`summary`](Frame::summary)
    /// (`pass next as cursor for more`, or the companion tool that reopens a stored result);
    /// the text channel says it in its own `omitted:` and `next:` lines instead, beside the
    /// handle and the cursor. `None` when there is no way on.
    pub way_on: Option<String>,
    /// The omission.
    pub omitted: Omitted,
    /// The cursor for the next page.
    pub next: Option<String>,
}

/// The counts a summary is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Records in this answer.
    pub shown: u64,
    /// Records shown by earlier pages of the same query (from the cursor).
    pub shown_before: u64,
    /// Records earlier pages skipped as too large for any page of their own (from the
    /// cursor): the earlier pages covered `shown_before + skipped_before` places.
    pub skipped_before: u64,
    /// This answer's records skipped before its first record shown: the first shown is at
    /// place `shown_before + skipped_before + skipped_first + 1` of the whole result.
    pub skipped_first: u64,
    /// All records matching the query; `None` when the source gives no total (an upstream
    /// that pages itself) and more remain.
    pub total: Option<u64>,
}

impl Counts {
    /// Places the earlier pages covered, shown or skipped.
    pub(crate) fn covered_before(&self) -> u64 {
        self.shown_before.saturating_add(self.skipped_before)
    }
}

/// A record this answer skips because no page of its own could show it within the budget:
/// how the summary names it and what its page would need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its id as the record shows it, when it has one.
    pub id: Option<String>,
    /// Its place in the whole result (1-based).
    pub place: u64,
    /// What a page showing it alone takes, on the limit that it exceeds.
    pub needs: Needs,
}

/// What a page takes on the limit it exceeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Tokens.
    Tokens(usize),
    /// Bytes of UTF-8 (a client that cuts by size).
    Bytes(usize),
    /// Lines (a client that cuts by lines).
    Lines(usize),
}

impl Needs {
    /// The smaller of two needs on the same limit; of two on different limits, the one in
    /// tokens (the limit a budget most often raises).
    pub fn least(self, other: Needs) -> Needs {
        match (self, other) {
            (Needs::Tokens(a), Needs::Tokens(b)) => Needs::Tokens(a.min(b)),
            (Needs::Bytes(a), Needs::Bytes(b)) => Needs::Bytes(a.min(b)),
            (Needs::Lines(a), Needs::Lines(b)) => Needs::Lines(a.min(b)),
            (Needs::Tokens(_), _) => self,
            _ => other,
        }
    }

    /// `190 tokens`, `12,400 bytes`, `300 lines`.
    pub fn phrase(self) -> String {
        match self {
            Needs::Tokens(n) => format!("{} tokens", thousands(n as u64)),
            Needs::Bytes(n) => format!("{} bytes", thousands(n as u64)),
            Needs::Lines(n) => format!("{} lines", thousands(n as u64)),
        }
    }
}

/// On which pages the text channel names the fields this view leaves out (`this view leaves
/// out body, node_id`). The JSON envelope's `omitted.fields` names them on every page.
///
/// Pages reached through a cursor follow a first page in the same transcript, whose line the
/// model has read, so the default names them on the first page only: for an SDK type with
/// many skipped fields the clause is 18 to 23 tokens a page.
///
/// The same holds for the walk's other standing fact, which fields hold outsiders' text:
/// the text's note (`«…» is untrusted text from …`) and the JSON envelope's `untrusted`
/// key are on a walk's first page, and on every page under `EveryPage` only. A later page's
/// values keep their marks (`«…»`). (The shared year, `dates are in 2026`, stays on every
/// page that shows a date: a later page cannot know that the first page's year is its own.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOut {
    /// On every page (and the untrusted-text note with them).
    EveryPage,
    /// On a walk's first page only (the default), the untrusted-text note too.
    #[default]
    FirstPage,
    /// Never: `omitted.fields` in the JSON envelope only; the untrusted-text note on the
    /// first page.
    Never,
}

/// The words a summary is made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words<'a> {
    /// One record (`ticket`).
    pub name: &'a str,
    /// Several (`tickets`).
    pub plural: &'a str,
    /// The rank order (`most recent last_update first`).
    pub order: Option<&'a str>,
    /// What was asked (`status=open`), for empty answers.
    pub query: Option<&'a str>,
    /// A sentence to lead the summary with (an aggregate of the whole result).
    pub lead: Option<&'a str>,
    /// Facts about the whole result, stated after the counts and order (an aggregate of
    /// a stored result, without its count).
    pub details: Option<&'a str>,
    /// The companion tool that reopens a stored result.
    pub reopen_with: &'a str,
    /// The tool that shows one record by its id, named where a record is skipped as too
    /// large.
    pub fetch_one: Option<&'a str>,
    /// A few of the records' field names (`number, title, state, …`), named where a stored
    /// record is skipped as too large: reopened with fewer of its fields, it fits.
    pub fields: Option<&'a str>,
}

impl Frame {
    /// The frame for a page: status and summary from the counts, the omission, the cursor,
    /// and the records this page skips as too large for any page of their own.
    pub(crate) fn for_page(
        counts: Counts,
        words: Words<'_>,
        omitted: Omitted,
        next: Option<String>,
        skipped: &[Skipped],
    ) -> Frame {
        let status = if counts.total == Some(0) && counts.shown == 0 {
            Status::Empty
        } else if omitted.count != Some(0) || next.is_some() {
            Status::Partial
        } else {
            Status::Ok
        };
        let mut summary = summary(status, counts, words, &omitted, next.is_some(), skipped);
        if let Some(lead) = words.lead.filter(|_| status != Status::Empty) {
            summary = format!("{lead}; {summary}");
        }
        let way_on = if next.is_some() {
            Some(MORE.to_owned())
        } else if omitted.handle.is_some() {
            // Stored whole and no cursor: the handle is the only way on, so the summary
            // points at it (by its key: the handle itself is stated once, in
            // `omitted.handle`).
            Some(format!(
                "{} reopens the whole result from omitted.handle",
                words.reopen_with
            ))
        } else {
            None
        };
        Frame {
            status,
            summary,
            way_on,
            omitted,
            next,
        }
    }

    /// An error frame: what happened and what to do instead, in one sentence.
    pub(crate) fn error(what: &str, remedy: &str) -> Frame {
        let what = what.trim_end_matches('.');
        let summary = if remedy.is_empty() {
            what.to_owned()
        } else {
            format!("{what}; {remedy}")
        };
        Frame {
            status: Status::Error,
            summary,
            way_on: None,
            omitted: Omitted {
                count: Some(0),
                reason: None,
                fields: Vec::new(),
                too_large: 0,
                handle: None,
            },
            next: None,
        }
    }

    /// Whether the page leaves nothing out and goes no further: no record or field left out,
    /// no stored result, no cursor. Its envelope then states only its status, summary and
    /// records: `omitted` and `next` (the text's `omitted:` and `next:` lines) appear when
    /// something was cut, so a small complete answer costs little more than its records.
    pub(crate) fn is_complete(&self) -> bool {
        let o = &self.omitted;
        self.next.is_none()
            && o.count == Some(0)
            && o.fields.is_empty()
            && o.handle.is_none()
            && o.too_large == 0
    }

    /// The summary as the JSON envelope states it: [`summary`](Frame::summary), then how to
    /// go on ([`way_on`](Frame::way_on)) when there is a way.
    pub fn json_summary(&self) -> std::borrow::Cow<'_, str> {
        match &self.way_on {
            Some(way_on) => format!("{}; {way_on}", self.summary).into(),
            None => self.summary.as_str().into(),
        }
    }
}

fn noun<'a>(n: u64, words: &Words<'a>) -> &'a str {
    if n == 1 { words.name } else { words.plural }
}

fn summary(
    status: Status,
    c: Counts,
    w: Words<'_>,
    omitted: &Omitted,
    has_next: bool,
    skipped: &[Skipped],
) -> String {
    let mut s = String::new();
    match status {
        Status::Empty => {
            match w.query {
                Some(q) => {
                    let _ = write!(s, "no {} match {q}", w.plural);
                }
                None => {
                    let _ = write!(s, "no {} found", w.plural);
                }
            }
            // What the whole result says besides (a search's `total_count` beside no item:
            // a page past the end, or a search cut short), so "none found" is not all it says.
            if let Some(details) = w.details.filter(|d| !d.is_empty()) {
                let _ = write!(s, "; {details}");
            }
            s.push_str("; this is a finding, not an error");
            return s;
        }
        Status::Error => return s,
        Status::Ok | Status::Partial => {}
    }
    // Without a total (an upstream that pages itself, pages still to come) a page states
    // the records' place and that more are available, never a number nobody knows. Ranges
    // are places in the whole result: a record skipped as too large keeps its place.
    let total = c.total.map(thousands);
    let covered = c.covered_before();
    let first = covered.saturating_add(c.skipped_first).saturating_add(1);
    // A first page: its count (with the records it skipped named after); a range once it
    // shows records after a skipped one, so the places read true.
    if covered == 0 && (c.skipped_first == 0 || c.shown == 0) {
        let _ = match (c.total, status) {
            (Some(n), Status::Ok) => write!(s, "{} {}", thousands(n), noun(n, &w)),
            (Some(n), _) => write!(s, "{} of {} {}", thousands(c.shown), thousands(n), w.plural),
            (None, _) => write!(s, "{} {} shown", thousands(c.shown), noun(c.shown, &w)),
        };
    } else if c.shown > 0 {
        let last = first.saturating_add(c.shown - 1);
        let of = total
            .as_ref()
            .map_or("shown".to_owned(), |t| format!("of {t}"));
        let _ = write!(
            s,
            "{} {}–{} {of}",
            w.plural,
            thousands(first),
            thousands(last)
        );
    } else {
        // Nothing shown: say after what, in words that stay true when earlier pages skipped
        // records ("the first N" is then not the number shown).
        let after = if c.skipped_before == 0 {
            format!("the first {}", thousands(c.shown_before))
        } else {
            format!("place {}", thousands(covered))
        };
        let _ = match &total {
            // Nothing left, and this page covers nothing (a cursor past the end).
            Some(_)
                if skipped.is_empty() && omitted.count == Some(omitted.too_large) && !has_next =>
            {
                write!(s, "no more {} after {after}", w.plural)
            }
            Some(t) => write!(s, "0 {} shown after {after} of {t}", w.plural),
            None => write!(s, "0 {} shown after {after}", w.plural),
        };
    }
    if let Some(order) = w.order
        && (c.shown > 1 || (covered == 0 && c.total.is_some_and(|t| t > 1)))
    {
        let _ = write!(s, ", {order}");
    }
    if let Some(details) = w.details.filter(|d| !d.is_empty()) {
        let _ = write!(s, "; {details}");
    }
    if total.is_none() {
        s.push_str("; more available");
    }
    skip_notes(&mut s, skipped, &w, omitted.handle.is_some());
    if !has_next
        && status == Status::Partial
        && omitted.handle.is_none()
        && let Some(reason) = omitted.reason
        && reason != OmitReason::RecordTooLarge
    {
        let _ = write!(
            s,
            "; {} not shown ({}), narrow the query to see them",
            omitted.count.map_or_else(|| "more".to_owned(), thousands),
            reason.phrase()
        );
    }
    s
}

/// `; issue at place 3 alone exceeds the budget and is skipped (its page needs 190 tokens)`,
/// for each record this page skips, with how to see it.
fn skip_notes(s: &mut String, skipped: &[Skipped], w: &Words<'_>, stored: bool) {
    if skipped.is_empty() {
        return;
    }
    let label = |k: &Skipped| match &k.id {
        Some(id) => format!("{} {id} (place {})", w.name, thousands(k.place)),
        None => format!("the {} at place {}", w.name, thousands(k.place)),
    };
    match skipped {
        [one] => {
            let _ = write!(
                s,
                "; {} alone exceeds the budget and is skipped (its page needs {})",
                label(one),
                one.needs.phrase()
            );
        }
        several => {
            let _ = write!(s, "; skipped, each alone over the budget:");
            for (i, k) in several.iter().enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                let _ = write!(s, "{sep}{} (needs {})", label(k), k.needs.phrase());
            }
        }
    }
    let how = match (stored, w.fetch_one) {
        // The same page of the stored result would skip it again: fewer fields fit.
        (true, _) => match w.fields {
            Some(fields) => format!(
                "{} shows it from omitted.handle with select naming a few of its fields ({fields})",
                w.reopen_with
            ),
            None => format!("{} shows it from omitted.handle", w.reopen_with),
        },
        (false, Some(tool)) => format!("{tool} shows it by its id"),
        (false, None) => "a larger budget shows it".to_owned(),
    };
    let _ = write!(s, "; {how}");
}

/// How the JSON summary says to go on when there is a cursor. The text channel says it in its
/// `next:` line instead (`next: same call with cursor=…`).
pub(crate) const MORE: &str = "pass next as cursor for more";

pub(crate) use crate::text::thousands;

/// Two strings written as one, `first; second` (a summary and its way on).
struct JoinedStr<'a>(&'a str, &'a str);

impl std::fmt::Display for JoinedStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.0, self.1)
    }
}

struct JsonStr<'a, T: ?Sized>(&'a T);

impl<T: std::fmt::Display + ?Sized> Serialize for JsonStr<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self.0)
    }
}

fn json_string<T: std::fmt::Display + ?Sized>(out: &mut String, text: &T) {
    // serde_json escapes quotes, backslashes and controls; it cannot fail on a str.
    match serde_json::to_string(&JsonStr(text)) {
        Ok(json) => out.push_str(&json),
        Err(_) => out.push_str("\"\""),
    }
}

/// What a JSON envelope states before its records besides the frame.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JsonHead<'a> {
    /// The fields whose values are outsiders' text (`"untrusted": ["subject", "body"]`;
    /// a nested record's as `field.name`), left out when empty.
    pub untrusted: &'a [String],
    /// The rows form's field names (`"fields": […], "data": [` with a record an array);
    /// `None` for the objects form (`"data": [`).
    pub fields: Option<&'a [&'a str]>,
}

fn json_names<S: serde::Serialize>(out: &mut String, names: &[S]) {
    match serde_json::to_string(names) {
        Ok(json) => out.push_str(&json),
        Err(_) => out.push_str("[]"),
    }
}

/// The JSON envelope before the records: `{"status":…,"summary":…,` then `"untrusted":[…],`
/// when fields hold outsiders' text, then `"fields":[…],` in the rows form, then `"data":[`
/// and a newline when records follow.
pub(crate) fn json_head(frame: &Frame, has_records: bool, head: JsonHead<'_>) -> String {
    let mut out = String::with_capacity(96 + frame.summary.len());
    out.push_str("{\"status\":\"");
    out.push_str(frame.status.as_str());
    out.push_str("\",\"summary\":");
    // The JSON states the handle once, in `omitted.handle`, a name the companion tool's
    // `handle` argument and description match. The summary and its way on are escaped
    // straight into the envelope, not joined first: this runs for every envelope sized.
    match &frame.way_on {
        Some(way_on) => json_string(&mut out, &JoinedStr(&frame.summary, way_on)),
        None => json_string(&mut out, &frame.summary),
    }
    if !head.untrusted.is_empty() {
        out.push_str(",\"untrusted\":");
        json_names(&mut out, head.untrusted);
    }
    if let Some(fields) = head.fields {
        out.push_str(",\"fields\":");
        json_names(&mut out, fields);
    }
    out.push_str(",\"data\":[");
    if has_records {
        out.push('\n');
    }
    out
}

/// The JSON envelope after the records: `],"omitted":{…},"next":…}`; `]}` when the page is
/// complete ([`Frame::is_complete`]).
pub(crate) fn json_tail(frame: &Frame) -> String {
    if frame.is_complete() {
        return "]}".to_owned();
    }
    let mut out = String::from("],\"omitted\":");
    match serde_json::to_string(&frame.omitted) {
        Ok(json) => out.push_str(&json),
        Err(_) => out.push_str("null"),
    }
    out.push_str(",\"next\":");
    match &frame.next {
        Some(next) => json_string(&mut out, next),
        None => out.push_str("null"),
    }
    out.push('}');
    out
}

/// The text envelope before the records: `partial: 20 of 1,412 tickets, …` and a newline.
/// `note` is a fact shared by every record, stated once (`dates are in 2026`).
pub(crate) fn text_head(frame: &Frame, note: Option<&str>) -> String {
    let mut out = String::with_capacity(16 + frame.summary.len());
    out.push_str(frame.status.as_str());
    out.push_str(": ");
    // How to go on (`frame.way_on`) is the `omitted:` and `next:` lines' to say.
    crate::text::push_escaped(&mut out, &frame.summary, crate::text::TextMode::Prose);
    if let Some(note) = note {
        out.push_str("; ");
        out.push_str(note);
    }
    out.push_str(".\n");
    out
}

/// Types wider than this name only their first [`LEFT_OUT_NAMED`] left-out fields.
pub(crate) const LEFT_OUT_ALL_UP_TO: usize = 8;
/// How many left-out fields a wide type names.
pub(crate) const LEFT_OUT_NAMED: usize = 5;

/// `omitted.fields`: every field this view leaves out, by the names the API gives them; on a
/// type that leaves out more than 8 (`LEFT_OUT_ALL_UP_TO`), the first 5 (`LEFT_OUT_NAMED`) and
/// a last entry that counts the rest, so one line stays short however wide the type.
///
/// ```
/// use toolshape::__private::left_out_fields;
///
/// assert_eq!(left_out_fields(&["body", "node_id"]), ["body", "node_id"]);
/// let wide: Vec<String> = (1..=37).map(|i| format!("f{i}")).collect();
/// assert_eq!(left_out_fields(&wide), ["f1", "f2", "f3", "f4", "f5", "and 32 more"]);
/// ```
pub fn left_out_fields<S: AsRef<str>>(skipped: &[S]) -> Vec<String> {
    let names = skipped.iter().map(|s| s.as_ref().to_owned());
    if skipped.len() <= LEFT_OUT_ALL_UP_TO {
        return names.collect();
    }
    let mut out: Vec<String> = names.take(LEFT_OUT_NAMED).collect();
    out.push(format!("and {} more", skipped.len() - LEFT_OUT_NAMED));
    out
}

/// The text envelope after the records: the omission with its reason, the fields this view
/// leaves out and the handle the whole result is stored under (for `reopen_with`), then how
/// to go on:
///
/// ```text
/// omitted: 4,979 tickets (result_budget); this view leaves out sla_due_at; open_result handle=h_9NvXuGHRSHajq4Sx reopens the whole result.
/// next: same call with cursor=AlOCi7DHUjnwkBeQZ26a
/// ```
///
/// Nothing when the page is complete ([`Frame::is_complete`]): the head's status says so.
pub(crate) fn text_tail(frame: &Frame, plural: &str, reopen_with: &str, left_out: bool) -> String {
    if frame.is_complete() {
        return String::new();
    }
    let o = &frame.omitted;
    let mut out = String::from("omitted: ");
    if o.count == Some(0) {
        out.push_str("none");
    } else {
        match o.count {
            Some(count) => {
                let _ = write!(out, "{} {plural}", thousands(count));
            }
            None => {
                let _ = write!(out, "more {plural}, how many the source does not say");
            }
        }
        match o.reason {
            Some(reason) if o.too_large > 0 && reason != OmitReason::RecordTooLarge => {
                let _ = write!(
                    out,
                    " ({}; {} too large for any page)",
                    reason.as_str(),
                    thousands(o.too_large)
                );
            }
            Some(reason) => {
                let _ = write!(out, " ({})", reason.as_str());
            }
            None => {}
        }
    }
    if left_out && !o.fields.is_empty() {
        let _ = write!(out, "; this view leaves out {}", o.fields.join(", "));
    }
    if let Some(handle) = &o.handle {
        let _ = write!(
            out,
            "; {reopen_with} handle={handle} reopens the whole result"
        );
    }
    out.push_str(".\nnext: ");
    match &frame.next {
        Some(next) => {
            let _ = write!(out, "same call with cursor={next}");
        }
        None => out.push_str("null"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` lists every variant (the schema's `enum` is made from it, so a variant left out
    /// would make the schema reject answers that carry it): the matches below stop compiling
    /// when a variant is added, and each variant must be in `ALL`, written as serde writes it.
    #[test]
    fn all_lists_every_status_and_reason_as_serde_writes_them() {
        for status in [Status::Ok, Status::Partial, Status::Empty, Status::Error] {
            match status {
                Status::Ok | Status::Partial | Status::Empty | Status::Error => {}
            }
            assert!(Status::ALL.contains(&status), "{status:?}");
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        for reason in [
            OmitReason::ResultBudget,
            OmitReason::PageSize,
            OmitReason::RecordTooLarge,
            OmitReason::Filtered,
        ] {
            match reason {
                OmitReason::ResultBudget
                | OmitReason::PageSize
                | OmitReason::RecordTooLarge
                | OmitReason::Filtered => {}
            }
            assert!(OmitReason::ALL.contains(&reason), "{reason:?}");
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
    }

    #[test]
    fn the_text_tail_states_the_handle_once_and_how_to_go_on() {
        let mut frame = Frame::error("", "");
        frame.omitted = Omitted {
            count: Some(4_979),
            reason: Some(OmitReason::ResultBudget),
            fields: vec!["sla_due_at".into()],
            too_large: 0,
            handle: Some("h_9NvXuGHRSHajq4Sx".into()),
        };
        frame.next = Some("AlOCi7DHUjnwkBeQZ26a".into());
        assert_eq!(
            text_tail(&frame, "tickets", "open_result", true),
            "omitted: 4,979 tickets (result_budget); this view leaves out sla_due_at; \
             open_result handle=h_9NvXuGHRSHajq4Sx reopens the whole result.\n\
             next: same call with cursor=AlOCi7DHUjnwkBeQZ26a"
        );
        frame.omitted.handle = None;
        frame.next = None;
        assert_eq!(
            text_tail(&frame, "tickets", "open_result", true),
            "omitted: 4,979 tickets (result_budget); this view leaves out sla_due_at.\nnext: null"
        );
    }

    #[test]
    fn the_text_head_leaves_how_to_go_on_to_the_next_line() {
        let words = Words {
            name: "ticket",
            plural: "tickets",
            order: None,
            query: None,
            lead: None,
            details: None,
            reopen_with: "open_result",
            fetch_one: None,
            fields: None,
        };
        let counts = Counts {
            shown: 21,
            shown_before: 0,
            skipped_before: 0,
            skipped_first: 0,
            total: Some(5000),
        };
        let omitted = |handle: Option<&str>| Omitted {
            count: Some(4979),
            reason: Some(OmitReason::ResultBudget),
            fields: Vec::new(),
            too_large: 0,
            handle: handle.map(str::to_owned),
        };
        // A cursor: the JSON says to pass it, the text's first line does not (its `next:`
        // line does).
        let frame = Frame::for_page(counts, words, omitted(None), Some("AlOC".into()), &[]);
        assert_eq!(
            text_head(&frame, Some("«…» is untrusted text from t.subject")),
            "partial: 21 of 5,000 tickets; «…» is untrusted text from t.subject.\n"
        );
        assert_eq!(
            json_head(&frame, false, JsonHead::default()),
            "{\"status\":\"partial\",\"summary\":\"21 of 5,000 tickets; pass next as cursor \
             for more\",\"data\":["
        );
        // Stored whole, no cursor: the JSON points at the handle's key, the text's first line
        // leaves it to the `omitted:` line.
        let frame = Frame::for_page(counts, words, omitted(Some("h_x")), None, &[]);
        assert_eq!(text_head(&frame, None), "partial: 21 of 5,000 tickets.\n");
        assert_eq!(
            frame.json_summary(),
            "21 of 5,000 tickets; open_result reopens the whole result from omitted.handle"
        );
        // Another companion tool is named as it is.
        let frame = Frame::for_page(
            counts,
            Words {
                reopen_with: "reopen",
                ..words
            },
            omitted(Some("h_x")),
            None,
            &[],
        );
        assert_eq!(
            frame.json_summary(),
            "21 of 5,000 tickets; reopen reopens the whole result from omitted.handle"
        );
        // Nothing to go on with: the two read the same.
        let frame = Frame::for_page(counts, words, omitted(None), None, &[]);
        assert_eq!(frame.way_on, None);
        assert_eq!(frame.json_summary(), frame.summary);
    }
}
