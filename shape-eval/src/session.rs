//! Follow-up lookups and hedges, counted over a session: the calls whose arguments carry a
//! value an earlier answer showed unresolved or opaque (an id the model had to look up), and
//! the calls that ask for what an earlier answer said it left out (a field in
//! `omitted.fields`, the records behind its `next` cursor).
//!
//! A [`Session`] sees every answer a tool gives ([`answer`](Session::answer)) and every call
//! that comes next ([`call`](Session::call)); no model is involved, so the count is exact and
//! the same on every run. Each lookup is a `tracing` event (target `shape`, "follow-up
//! lookup"), is returned by the [`answer`](Session::answer) to the call that made it (for
//! that call's log), and is tallied per tool and per field
//! in the [`SessionSummary`]: the payload telling the tool's author which field it is short of.
//!
//! ```
//! use toolshape::{Shaper, ToolResult, resolve::{Resolve, ResolveError, Resolver}};
//! use toolshape_eval::session::{LookupKind, Session};
//! use std::collections::HashMap;
//!
//! pub struct Users;
//! impl Resolver for Users { type Key = String; const NAME: &'static str = "users"; const NOUN: &'static str = "user"; }
//!
//! #[derive(ToolResult)]
//! pub struct Ticket {
//!     #[shape(id)] pub id: String,
//!     #[shape(resolve = Users, rename = "assignee")] pub assignee_id: String,
//! }
//!
//! struct Directory; // knows nobody: every assignee stays unresolved
//! impl Resolve<Users> for Directory {
//!     fn resolve(&self, keys: &[String]) -> impl Future<Output = Result<HashMap<String, String>, ResolveError>> + Send {
//!         toolshape::resolve::answer(keys, |_| None)
//!     }
//! }
//!
//! let session = Session::new();
//! session.call("search_tickets", &serde_json::json!({ "query": "card" }));
//! let rows = vec![Ticket { id: "tkt_1".into(), assignee_id: "usr_41c2be09-77aa".into() }];
//! let page = Shaper::for_tool("search_tickets").shape_blocking((&rows, &Directory)).unwrap();
//! session.answer::<Ticket>(&page);
//!
//! // The model asks who usr_41c2be09-77aa is: a follow-up lookup on search_tickets.assignee.
//! let lookups = session.call("get_user", &serde_json::json!({ "id": "usr_41c2be09-77aa" }));
//! assert_eq!(lookups[0].kind, LookupKind::Unresolved);
//! assert_eq!((lookups[0].tool.as_str(), lookups[0].field.as_str()), ("search_tickets", "assignee"));
//! assert_eq!(session.summary().follow_up_calls, 1);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use toolshape::__private::{FieldKind, Projection, Storage};
use toolshape::{Shaped, ToolResult};

/// The values and omissions of one session's answers, and the lookups its calls made. Cheap
/// to clone (shared); one per conversation (an MCP session, an agent run).
#[derive(Debug, Clone, Default)]
pub struct Session {
    ledger: Arc<Mutex<Ledger>>,
}

#[derive(Debug, Default)]
struct Ledger {
    calls: u64,
    answers: u64,
    follow_up_calls: u64,
    hedged_calls: u64,
    /// Values earlier answers showed unresolved or opaque, by their short form (up to the
    /// first `-`), first shown first; each (value, tool, field) once. The latest
    /// [`SHOWN_KEPT`] short forms, by when each was first shown.
    shown: HashMap<String, Vec<Offer>>,
    /// The short forms in `shown`, first shown first.
    shown_order: VecDeque<String>,
    /// Fields earlier answers left out; each (tool, field) once.
    left_out: Vec<Offer>,
    /// The latest cursors earlier answers offered, at most [`CURSORS_KEPT`].
    cursors: VecDeque<Offer>,
    /// The lookups of each tool's latest call whose answer has not been recorded yet.
    pending: BTreeMap<String, Vec<Lookup>>,
    tally: BTreeMap<(String, String, LookupKind), u64>,
}

/// Cursors kept per session: a model passes back one of the last few, not the 65th.
const CURSORS_KEPT: usize = 64;
/// Values (by short form) kept per session, so a long-lived session stays bounded in memory
/// (a few MiB): past it, the value first shown longest ago is forgotten, and a call carrying
/// it is no longer counted as a follow-up.
const SHOWN_KEPT: usize = 20_000;

/// The short form of an id: up to its first `-` (`usr_41c2be09` of `usr_41c2be09-77aa-…`).
fn short_key(value: &str) -> &str {
    value.split('-').next().unwrap_or(value)
}

/// Something an answer showed or offered: the value, the tool that answered, the field.
#[derive(Debug, Clone)]
struct Offer {
    value: String,
    tool: String,
    field: String,
    kind: LookupKind,
}

impl Session {
    /// A new, empty session.
    pub fn new() -> Session {
        Session::default()
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        // A panic elsewhere while the lock was held leaves counts, never broken invariants.
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a call of `tool` with its arguments and returns the lookups it makes: each
    /// argument value an earlier answer showed unresolved or opaque, each left-out field it
    /// names, the `next` cursor it passes back. Each is emitted as a `tracing` event and
    /// counted in the summary; the report of the call's answer gets them when that answer is
    /// recorded with [`answer`](Session::answer).
    ///
    /// Arguments are matched as text. An id matches any word of any string value; a left-out
    /// field or a cursor matches a whole value only (`add_comment {"body": "the body is
    /// wrong"}` does not ask for a left-out `body`; `{"fields": ["body"]}` does). A short id
    /// matches the full id it abbreviates (`usr_41c2be09` and `usr_41c2be09-77aa-…`). A call
    /// counts once per earlier field it points at.
    pub fn call(&self, tool: &str, args: &impl Serialize) -> Vec<Lookup> {
        let mut values = Vec::new();
        if let Ok(value) = serde_json::to_value(args) {
            argument_values(&value, &mut values);
        }
        let mut ledger = self.ledger();
        ledger.calls += 1;
        let mut lookups: Vec<Lookup> = Vec::new();
        let push = |offer: &Offer, lookups: &mut Vec<Lookup>| {
            let seen = lookups
                .iter()
                .any(|l| l.tool == offer.tool && l.field == offer.field && l.kind == offer.kind);
            if !seen {
                lookups.push(Lookup {
                    call: tool.to_owned(),
                    tool: offer.tool.clone(),
                    field: offer.field.clone(),
                    kind: offer.kind,
                    value: offer.value.clone(),
                });
            }
        };
        for word in words(&values) {
            // The first answer that showed the value is the one short of it (a later lookup's
            // own answer may repeat it).
            let offers = ledger.shown.get(short_key(word)).into_iter().flatten();
            if let Some(offer) = offers.into_iter().find(|o| same_id(&o.value, word)) {
                push(offer, &mut lookups);
            }
        }
        for value in &values {
            if let Some(offer) = ledger.left_out.iter().rev().find(|o| o.value == *value) {
                push(offer, &mut lookups);
            }
            if let Some(offer) = ledger.cursors.iter().rev().find(|o| o.value == *value) {
                let mut offer = offer.clone();
                offer.value = "next".to_owned();
                push(&offer, &mut lookups);
            }
        }
        if lookups.iter().any(|l| !l.kind.is_hedge()) {
            ledger.follow_up_calls += 1;
        }
        if lookups.iter().any(|l| l.kind.is_hedge()) {
            ledger.hedged_calls += 1;
        }
        for lookup in &lookups {
            *ledger
                .tally
                .entry((lookup.tool.clone(), lookup.field.clone(), lookup.kind))
                .or_default() += 1;
            tracing::info!(
                target: "shape",
                call = %lookup.call,
                tool = %lookup.tool,
                field = %lookup.field,
                kind = lookup.kind.as_str(),
                hedge = lookup.kind.is_hedge(),
                value = %lookup.value,
                "follow-up lookup"
            );
        }
        ledger.pending.insert(tool.to_owned(), lookups.clone());
        lookups
    }

    /// Records an answer of record type `T`: the values its resolved fields could not name,
    /// the opaque ids its shown fields carry, the fields it left out and its cursor. Returns
    /// the lookups of the call it answers (the latest call of the same tool), for its log.
    pub fn answer<T: ToolResult>(&self, shaped: &Shaped) -> Vec<Lookup> {
        self.answer_with(shaped, T::PROJECTION)
    }

    /// [`answer`](Session::answer) for any record description (a stored result's, an
    /// `open_result` slice's).
    pub fn answer_with<S: Storage>(
        &self,
        shaped: &Shaped,
        projection: &Projection<S>,
    ) -> Vec<Lookup> {
        let tool = shaped.report().tool.clone();
        let mut offers = Vec::new();
        if let Ok(envelope) = serde_json::from_str::<Envelope>(shaped.structured_json()) {
            for record in &envelope.data {
                for field in projection.fields.as_ref() {
                    let Some(value) = envelope.value(record, field.name.as_ref()) else {
                        continue;
                    };
                    let kind = match field.kind {
                        FieldKind::Resolve { .. } => LookupKind::Unresolved,
                        FieldKind::Show => LookupKind::Opaque,
                        _ => continue,
                    };
                    for text in strings(value) {
                        let shown = match kind {
                            LookupKind::Unresolved => text
                                .strip_prefix("unresolved ")
                                .and_then(|rest| rest.split_whitespace().last()),
                            _ => looks_opaque(text).then_some(text),
                        };
                        if let Some(shown) = shown {
                            offers.push(Offer {
                                value: shown.to_owned(),
                                tool: tool.clone(),
                                field: field.name.as_ref().to_owned(),
                                kind,
                            });
                        }
                    }
                }
            }
        }
        let frame = shaped.frame();
        let left_out: Vec<Offer> = frame
            .omitted
            .fields
            .iter()
            .map(|name| Offer {
                value: name.clone(),
                tool: tool.clone(),
                field: name.clone(),
                kind: LookupKind::LeftOut,
            })
            .collect();
        let cursor = frame.next.clone().map(|next| Offer {
            value: next,
            tool: tool.clone(),
            field: "next".to_owned(),
            kind: LookupKind::MoreRecords,
        });
        let mut ledger = self.ledger();
        ledger.answers += 1;
        ledger.remember(offers);
        for offer in left_out {
            let known = ledger
                .left_out
                .iter()
                .any(|o| o.tool == offer.tool && o.value == offer.value);
            if !known {
                ledger.left_out.push(offer);
            }
        }
        if let Some(cursor) = cursor {
            if ledger.cursors.len() == CURSORS_KEPT {
                ledger.cursors.pop_front();
            }
            ledger.cursors.push_back(cursor);
        }
        ledger.pending.remove(&tool).unwrap_or_default()
    }

    /// Records an answer `tool` gave without shaping (a raw API payload, another library's
    /// result): every opaque id in it is a value a later call may have to look up. JSON is
    /// walked and each value named by its path of keys (`data.relationships.assignee.data.id`);
    /// the record's own id (`id`, `data.id`), which the model passes on rather than looks
    /// up, is not counted. Other text is read word by word (field `text`). Returns the
    /// lookups of the call it answers, as [`answer`](Session::answer) does.
    pub fn answer_raw(&self, tool: &str, payload: &str) -> Vec<Lookup> {
        let mut offers = Vec::new();
        match serde_json::from_str::<Value>(payload) {
            Ok(json) => raw_offers(tool, &json, &mut String::new(), &mut offers),
            Err(_) => {
                for word in payload.split(|c: char| c.is_whitespace() || "\"',;()[]{}".contains(c))
                {
                    if looks_opaque(word) {
                        offers.push(Offer {
                            value: word.to_owned(),
                            tool: tool.to_owned(),
                            field: "text".to_owned(),
                            kind: LookupKind::Opaque,
                        });
                    }
                }
            }
        }
        let mut ledger = self.ledger();
        ledger.answers += 1;
        ledger.remember(offers);
        ledger.pending.remove(tool).unwrap_or_default()
    }

    /// The session so far: calls, answers, and the lookups and hedges per tool and field.
    pub fn summary(&self) -> SessionSummary {
        let ledger = self.ledger();
        let (mut follow_ups, mut hedges) = (Vec::new(), Vec::new());
        for ((tool, field, kind), &calls) in &ledger.tally {
            let tally = Tally {
                tool: tool.clone(),
                field: field.clone(),
                kind: *kind,
                calls,
            };
            if kind.is_hedge() {
                hedges.push(tally);
            } else {
                follow_ups.push(tally);
            }
        }
        // Most calls first; ties in (tool, field, kind) order.
        follow_ups.sort_by_key(|t| std::cmp::Reverse(t.calls));
        hedges.sort_by_key(|t| std::cmp::Reverse(t.calls));
        SessionSummary {
            calls: ledger.calls,
            answers: ledger.answers,
            follow_up_calls: ledger.follow_up_calls,
            hedged_calls: ledger.hedged_calls,
            follow_ups,
            hedges,
        }
    }
}

impl Ledger {
    /// Keeps the values an answer showed, each (value, tool, field) once.
    fn remember(&mut self, offers: Vec<Offer>) {
        for offer in offers {
            let key = short_key(&offer.value);
            if !self.shown.contains_key(key) {
                if self.shown.len() == SHOWN_KEPT
                    && let Some(oldest) = self.shown_order.pop_front()
                {
                    self.shown.remove(&oldest);
                }
                self.shown_order.push_back(key.to_owned());
            }
            // A lookup is laid at the first offer of its value (`call` takes the first
            // match), so a later answer showing the same value, from any tool or field, adds
            // nothing: kept once, a value shown on every page does not grow its bucket.
            let same = self.shown.entry(key.to_owned()).or_default();
            if !same.iter().any(|o| o.value == offer.value) {
                same.push(offer);
            }
        }
    }
}

/// Only the records of an envelope, in either structured form; the rest is read from the
/// frame.
#[derive(Deserialize)]
struct Envelope {
    /// The rows form's field names, in the order of each row's values; absent in the
    /// objects form.
    #[serde(default)]
    fields: Option<Vec<String>>,
    /// The records: objects, or (rows form) arrays of values in the order of `fields`.
    #[serde(default)]
    data: Vec<Value>,
}

impl Envelope {
    /// The value of output field `name` in `record`, whichever form the envelope has.
    fn value<'v>(&self, record: &'v Value, name: &str) -> Option<&'v Value> {
        match record {
            Value::Object(map) => map.get(name),
            Value::Array(row) => {
                let at = self.fields.as_ref()?.iter().position(|f| f == name)?;
                row.get(at)
            }
            _ => None,
        }
    }
}

/// The strings of a value: itself, or the items of a list.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn raw_offers(tool: &str, value: &Value, path: &mut String, out: &mut Vec<Offer>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                raw_offers(tool, v, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for item in items {
                raw_offers(tool, item, path, out);
            }
        }
        Value::String(s) if looks_opaque(s) && path != "id" && path != "data.id" => {
            out.push(Offer {
                value: s.clone(),
                tool: tool.to_owned(),
                field: path.clone(),
                kind: LookupKind::Opaque,
            });
        }
        _ => {}
    }
}

/// The arguments' string values (and numbers, as text), whole.
fn argument_values(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| argument_values(v, out)),
        Value::Object(map) => map.values().for_each(|v| argument_values(v, out)),
        _ => {}
    }
}

/// The words of the values (an id inside a sentence: `"who is usr_41c2be09?"`).
fn words(values: &[String]) -> Vec<&str> {
    values
        .iter()
        .flat_map(|v| v.split(|c: char| c.is_whitespace() || ",;()[]{}\"'?!".contains(c)))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether two ids are the same: equal, or one the short form of the other (the first UUID
/// group kept, at least 8 characters: `usr_41c2be09` and `usr_41c2be09-77aa-…`).
fn same_id(shown: &str, asked: &str) -> bool {
    if shown == asked {
        return true;
    }
    let (short, long) = if shown.len() < asked.len() {
        (shown, asked)
    } else {
        (asked, shown)
    };
    short.len() >= 8 && long.starts_with(short) && long[short.len()..].starts_with('-')
}

/// Whether a value reads as an opaque id a model would have to look up: one word of 8 to 80
/// characters, not a link, with a run of 8 or more hex digits mixing digits and letters
/// (`usr_41c2be09-…`, `5d8804f1`, a UUID). Names, dates, words and numbers are not.
pub(crate) fn looks_opaque(value: &str) -> bool {
    if !(8..=80).contains(&value.len())
        || value.contains(char::is_whitespace)
        || value.contains("://")
    {
        return false;
    }
    let (mut run, mut digits, mut letters) = (0usize, false, false);
    for c in value.chars() {
        if c.is_ascii_hexdigit() {
            run += 1;
            digits |= c.is_ascii_digit();
            letters |= c.is_ascii_alphabetic();
            if run >= 8 && digits && letters {
                return true;
            }
        } else {
            (run, digits, letters) = (0, false, false);
        }
    }
    false
}

/// Lookups of one kind on one field of one tool's answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// The tool whose answers fell short.
    pub tool: String,
    /// The field.
    pub field: String,
    /// Why the calls count.
    pub kind: LookupKind,
    /// Calls that pointed at it.
    pub calls: u64,
}

/// A session's calls and answers, and its follow-up lookups and hedges per tool and field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// Calls recorded.
    pub calls: u64,
    /// Answers recorded.
    pub answers: u64,
    /// Calls that looked up at least one value an earlier answer showed unresolved or opaque.
    pub follow_up_calls: u64,
    /// Calls that asked for at least one thing an earlier answer said it left out.
    pub hedged_calls: u64,
    /// Follow-up lookups per tool, field and kind, most first.
    pub follow_ups: Vec<Tally>,
    /// Hedges per tool, field and kind, most first.
    pub hedges: Vec<Tally>,
}

impl SessionSummary {
    /// Emits the summary as a `tracing` event with target `shape` ("session summary").
    pub fn emit(&self) {
        tracing::info!(
            target: "shape",
            calls = self.calls,
            answers = self.answers,
            follow_up_calls = self.follow_up_calls,
            hedged_calls = self.hedged_calls,
            follow_ups = %tallies(&self.follow_ups),
            hedges = %tallies(&self.hedges),
            "session summary"
        );
    }
}

fn tallies(list: &[Tally]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    let parts: Vec<String> = list
        .iter()
        .map(|t| format!("{}.{} {} {}", t.tool, t.field, t.kind.as_str(), t.calls))
        .collect();
    parts.join(", ")
}

impl fmt::Display for SessionSummary {
    /// `5 calls, 5 answers; 3 follow-up calls (search_tickets.assignee unresolved 3); 0 hedged calls (none)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} calls, {} answers; {} follow-up calls ({}); {} hedged calls ({})",
            self.calls,
            self.answers,
            self.follow_up_calls,
            tallies(&self.follow_ups),
            self.hedged_calls,
            tallies(&self.hedges)
        )
    }
}

#[cfg(test)]
mod tests {
    /// A session remembers the latest `SHOWN_KEPT` values and no more: one past it forgets the
    /// value first shown longest ago (a call with it is no longer a follow-up), keeps the one
    /// shown right after it, and the newest.
    #[test]
    fn a_session_keeps_the_latest_values_and_no_more() {
        use super::{LookupKind, Offer, SHOWN_KEPT, Session};
        let session = Session::new();
        let offer = |i: usize| Offer {
            value: format!("obj_{i:08x}"),
            tool: "search".to_owned(),
            field: "owner".to_owned(),
            kind: LookupKind::Opaque,
        };
        let follow_ups = |i: usize| {
            session
                .call("get", &serde_json::json!({"id": format!("obj_{i:08x}")}))
                .len()
        };
        session
            .ledger()
            .remember((0..SHOWN_KEPT).map(offer).collect());
        // At the bound: all kept (the same value again adds nothing).
        session.ledger().remember(vec![offer(0)]);
        assert_eq!(session.ledger().shown.len(), SHOWN_KEPT);
        assert_eq!(follow_ups(0), 1);
        // One past it: the first shown goes, the second and the newest stay.
        session.ledger().remember(vec![offer(SHOWN_KEPT)]);
        assert_eq!(session.ledger().shown.len(), SHOWN_KEPT);
        assert_eq!(session.ledger().shown_order.len(), SHOWN_KEPT);
        assert_eq!(follow_ups(0), 0);
        assert_eq!(follow_ups(1), 1);
        assert_eq!(follow_ups(SHOWN_KEPT), 1);
    }

    use super::*;

    #[test]
    fn opaque_ids_are_told_from_names_dates_and_words() {
        for id in [
            "usr_41c2be09-77aa-4f31-8d2c-1e5b6c9042af",
            "org_5d8804f1",
            "5d8804f1-6b2a-4c77-9e10-3f7d51ac8802",
            "I_kwDOAbc0000ABCD",
        ] {
            assert!(looks_opaque(id), "{id}");
        }
        for plain in [
            "Dana Cole",
            "2026-02-11T09:14:22.481Z",
            "2026-02-11",
            "card-declined",
            "deadbeefcafe",
            "12345678901",
            "https://api.example.com/v1/tickets/tkt_9f3a71c4",
            "open",
        ] {
            assert!(!looks_opaque(plain), "{plain}");
        }
    }

    #[test]
    fn a_short_id_is_the_full_id_it_abbreviates_and_nothing_else() {
        let full = "usr_41c2be09-77aa-4f31-8d2c-1e5b6c9042af";
        assert!(same_id(full, "usr_41c2be09"));
        assert!(same_id("usr_41c2be09", full));
        assert!(!same_id(full, "usr_41c2"));
        assert!(!same_id(full, "usr_41c2be0"));
        assert!(!same_id("usr_41c2be09", "usr_41c2be09x"));
    }

    #[test]
    fn a_raw_payload_offers_its_related_ids_not_the_records_own() {
        let session = Session::new();
        session.answer_raw(
            "search_tickets",
            r#"{"data":[{"id":"tkt_9f3a71c4-2d18","relationships":{"assignee":{"data":{"id":"usr_41c2be09-77aa"}}}}]}"#,
        );
        let own = session.call(
            "get_ticket",
            &serde_json::json!({"id": "tkt_9f3a71c4-2d18"}),
        );
        assert!(own.is_empty());
        let user = session.call("get_user", &serde_json::json!({"id": "usr_41c2be09-77aa"}));
        assert_eq!(user.len(), 1);
        assert_eq!(user[0].field, "data.relationships.assignee.data.id");
        assert_eq!(user[0].kind, LookupKind::Opaque);
    }

    #[test]
    fn an_opaque_id_is_8_to_80_characters_with_a_run_of_8_mixed_hex_digits() {
        // Length: 8 and 80 are ids, 7 and 81 are not.
        assert!(looks_opaque("41c2be09"));
        assert!(!looks_opaque("41c2be0"));
        let eighty = format!("41c2be09{}", "x".repeat(72));
        assert!(looks_opaque(&eighty));
        assert!(!looks_opaque(&format!("{eighty}x")));
        // The run: 8 hex digits mixing digits and letters; 7, or 8 of one kind, are not.
        assert!(looks_opaque("usr_41c2be09"));
        assert!(!looks_opaque("usr_41c2be0_x"));
        assert!(!looks_opaque("usr_12345678"));
        assert!(!looks_opaque("usr_deadbeef"));
        // A run is broken by any other character and starts over.
        assert!(!looks_opaque("41c2-be09-77aa"));
        assert!(looks_opaque("41c2-be0977aa"));
        assert!(!looks_opaque("1111aaa_a1111"));
        // One letter or digit past a pure run completes it.
        assert!(looks_opaque("12345678a"));
        assert!(looks_opaque("abcdefab1"));
        // Not one word, or a link.
        assert!(!looks_opaque("41c2be09 77aa"));
        assert!(!looks_opaque("ftp://41c2be09"));
        assert!(looks_opaque("ftp:/41c2be09"));
    }

    #[test]
    fn a_short_id_needs_8_characters_and_a_dash_after_it() {
        assert!(same_id("41c2be09", "41c2be09-77aa"));
        assert!(same_id("41c2be09-77aa", "41c2be09"));
        assert!(!same_id("41c2be0", "41c2be0-77aa"));
        assert!(!same_id("41c2be09", "41c2be09_77aa"));
        assert!(!same_id("41c2be09", "41c2be0977aa"));
        assert!(same_id("x", "x"));
        assert!(!same_id("41c2be09-77aa", "41c2be09-77ab"));
        assert_eq!(short_key("usr_41c2be09-77aa-4f31"), "usr_41c2be09");
        assert_eq!(short_key("usr_41c2be09"), "usr_41c2be09");
    }

    #[test]
    fn an_id_in_a_sentence_or_a_list_is_found_by_its_words() {
        let session = Session::new();
        session.answer_raw(
            "logs",
            "user usr_41c2be09-77aa failed (org_5d8804f1); retried by \"svc_9f3a71c4\"",
        );
        for (args, field) in [
            (
                serde_json::json!({"q": "who is usr_41c2be09-77aa?"}),
                "text",
            ),
            (serde_json::json!({"q": ["a", "[org_5d8804f1]"]}), "text"),
            (
                serde_json::json!({"q": {"deep": "'svc_9f3a71c4'!"}}),
                "text",
            ),
        ] {
            let lookups = session.call("get", &args);
            assert_eq!(lookups.len(), 1, "{args}: {lookups:?}");
            assert_eq!(lookups[0].field, field);
            assert_eq!(lookups[0].kind, LookupKind::Opaque);
        }
        // A word that only contains an id is another word; a number is text.
        assert!(
            session
                .call("get", &serde_json::json!({"q": "xusr_41c2be09-77aa"}))
                .is_empty()
        );
        assert!(
            session
                .call("get", &serde_json::json!({"n": 41_222_009}))
                .is_empty()
        );
        let summary = session.summary();
        assert_eq!(
            (summary.calls, summary.answers, summary.follow_up_calls),
            (5, 1, 3)
        );
        assert_eq!(summary.hedged_calls, 0);
        assert_eq!(
            summary.to_string(),
            "5 calls, 1 answers; 3 follow-up calls (logs.text opaque 3); 0 hedged calls (none)"
        );
    }

    #[test]
    fn a_raw_payload_skips_only_the_records_own_id() {
        let session = Session::new();
        session.answer_raw(
            "t",
            r#"{"id":"tkt_9f3a71c4","data":{"id":"tkt_1f3a71c4","owner":{"id":"usr_41c2be09"}},"x":{"id":"org_5d8804f1"},"link":"https://h/usr_77c2be09","n":12345678}"#,
        );
        assert!(
            session
                .call("a", &serde_json::json!(["tkt_9f3a71c4"]))
                .is_empty()
        );
        assert!(
            session
                .call("a", &serde_json::json!(["tkt_1f3a71c4"]))
                .is_empty()
        );
        assert_eq!(
            session.call("a", &serde_json::json!(["usr_41c2be09"]))[0].field,
            "data.owner.id"
        );
        assert_eq!(
            session.call("a", &serde_json::json!(["org_5d8804f1"]))[0].field,
            "x.id"
        );
        assert!(
            session
                .call("a", &serde_json::json!(["https://h/usr_77c2be09"]))
                .is_empty()
        );
    }
}

/// Why a call's arguments point back at an earlier answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LookupKind {
    /// A follow-up lookup: the value is a key a resolved field could not name
    /// (`unresolved user usr_…`).
    Unresolved,
    /// A follow-up lookup: the value is an opaque id an answer showed as it is (a field the
    /// view did not resolve, or a raw payload).
    Opaque,
    /// A hedge: the call names a field the earlier answer's `omitted.fields` listed.
    LeftOut,
    /// A hedge: the call passes the earlier answer's `next` cursor, asking for the records
    /// the budget left out.
    MoreRecords,
}

impl LookupKind {
    /// The kind in words, as logs and summaries write it.
    pub fn as_str(self) -> &'static str {
        match self {
            LookupKind::Unresolved => "unresolved",
            LookupKind::Opaque => "opaque",
            LookupKind::LeftOut => "left out",
            LookupKind::MoreRecords => "more records",
        }
    }

    /// Whether this is a hedge (the answer said what it left out) rather than a lookup of a
    /// value the answer showed.
    pub fn is_hedge(self) -> bool {
        matches!(self, LookupKind::LeftOut | LookupKind::MoreRecords)
    }
}

/// One call's argument that points back at an earlier answer: the payload telling the tool's
/// author which field its answers are short of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lookup {
    /// The tool called.
    pub call: String,
    /// The tool whose earlier answer fell short.
    pub tool: String,
    /// The field of that answer: the output field, the left-out field, the JSON path of a
    /// raw payload's value, or `next` for a cursor.
    pub field: String,
    /// Why it counts.
    pub kind: LookupKind,
    /// The value the arguments carried (a cursor is not repeated: `next`).
    pub value: String,
}
