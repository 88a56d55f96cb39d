//! A projection for a JSON result nobody described ([`JsonProjection::infer`]): where its
//! records are, and every key they have, shown as it is with its text as outsiders' text.
//! What the harness gives a tool the configuration does not name.

use super::JsonProjection;
use super::spec::{ConfiguredRecords, JsonPath, Output, OutputKind, RecordSpec, Step};
use serde_json::Value;
use std::collections::BTreeMap;

/// How records nobody described are read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inferred {
    /// Keys whose text is the system's own, shown as it is (not outsiders' text).
    pub trusted: Vec<String>,
    /// The cap in tokens of each value's text (`None`: no cap).
    pub max_tokens: Option<u32>,
}

impl JsonProjection {
    /// A projection of `value`'s records for `tool`: the records are `value` itself when it
    /// is a list of objects, else the largest list of objects among its keys (the other keys
    /// are named as left out), else `value` as one record when it is an object. Each record
    /// shows every key its records have, in the order first met (the JSON text's order when
    /// the application builds serde_json with `preserve_order`, else each object's keys
    /// sorted), as it is, its text (and
    /// any object or list, as its JSON text) as outsiders' text capped at
    /// `options.max_tokens`, except the `trusted` keys; `id`, when every record has a text or
    /// integer `id`, is the record's id. `None` when `value` holds no records (text, a
    /// number, a list of something else).
    ///
    /// ```
    /// use toolshape::configured::{Inferred, JsonProjection};
    ///
    /// let value = serde_json::json!({"total_count": 2, "items": [
    ///     {"id": 7, "title": "Crash on save", "comments": 3},
    ///     {"id": 9, "title": "Docs typo", "labels": ["docs"]}
    /// ]});
    /// let projection = JsonProjection::infer("search", &value, &Inferred::default()).unwrap();
    /// let names: Vec<&str> = projection.projection().output_names().collect();
    /// // `labels` is met last, in the second record (the order of the first one's keys
    /// // depends on serde_json's `preserve_order`).
    /// assert_eq!(names.len(), 4);
    /// assert_eq!(names[3], "labels");
    /// assert!(["id", "title", "comments"].iter().all(|k| names[..3].contains(k)));
    /// assert_eq!(projection.projection().name, "item");
    /// ```
    pub fn infer(tool: &str, value: &Value, options: &Inferred) -> Option<JsonProjection> {
        let (at, one, records): (Vec<String>, bool, Vec<&serde_json::Map<String, Value>>) =
            match value {
                Value::Array(items) => (Vec::new(), false, objects(items)?),
                Value::Object(map) => {
                    let best = map
                        .iter()
                        .filter_map(|(k, v)| match v {
                            Value::Array(items) => objects(items).map(|o| (k, o)),
                            _ => None,
                        })
                        .max_by_key(|(_, o)| o.len());
                    match best {
                        Some((key, records)) => (vec![key.clone()], false, records),
                        None => (Vec::new(), true, vec![map]),
                    }
                }
                _ => return None,
            };
        let mut keys: Vec<&str> = Vec::new();
        for record in &records {
            for key in record.keys() {
                if !keys.contains(&key.as_str()) {
                    keys.push(key);
                }
            }
        }
        if keys.is_empty() {
            return None;
        }
        let has_id = keys.contains(&"id")
            && records.iter().all(|r| match r.get("id") {
                Some(Value::String(_)) => true,
                Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
                _ => false,
            });
        let outputs = keys
            .iter()
            .map(|key| Output {
                name: (*key).to_owned(),
                from: JsonPath {
                    text: (*key).to_owned(),
                    steps: vec![Step::Key((*key).to_owned())],
                },
                kind: if has_id && *key == "id" {
                    OutputKind::Id { short: false }
                } else if options.trusted.iter().any(|t| t == key) {
                    OutputKind::Show
                } else {
                    OutputKind::Any {
                        max_tokens: options.max_tokens,
                    }
                },
                rank: None,
                absent: None,
                empty_is_absent: false,
                line: None,
            })
            .collect();
        let (name, plural) = match at.last() {
            Some(key) if key.len() > 1 && key.ends_with('s') => {
                (key[..key.len() - 1].to_owned(), key.clone())
            }
            _ => ("record".to_owned(), "records".to_owned()),
        };
        let records = ConfiguredRecords {
            tool: tool.to_owned(),
            schema: None,
            at,
            one,
            record: RecordSpec {
                name,
                plural,
                prose: None,
                absent: None,
                outputs,
                skipped: Vec::new(),
            },
        };
        Some(JsonProjection::new(&records, &BTreeMap::new()))
    }
}

/// The items as records, when every one is an object and there is one (a `null` among them
/// is no record: the reading stops at it, so such a list is read as text).
fn objects(items: &[Value]) -> Option<Vec<&serde_json::Map<String, Value>>> {
    let records: Vec<_> = items.iter().filter_map(Value::as_object).collect();
    (!records.is_empty() && records.len() == items.len()).then_some(records)
}

impl JsonProjection {
    /// The records of a text answer split into lines (`[{ "line": 1, "text": "…" }, …]`): a
    /// line's number, and its text as outsiders' text (uncapped: a long line comes in parts);
    /// prose writes the text alone (`«…»`), the JSON keeps the number that joins a line's
    /// parts.
    pub fn lines(tool: &str) -> JsonProjection {
        use crate::record::Segment;
        let output = |name: &str, kind| Output {
            name: name.to_owned(),
            from: JsonPath {
                text: name.to_owned(),
                steps: vec![Step::Key(name.to_owned())],
            },
            kind,
            rank: None,
            absent: None,
            empty_is_absent: false,
            line: None,
        };
        let records = ConfiguredRecords {
            tool: tool.to_owned(),
            schema: None,
            at: Vec::new(),
            one: false,
            record: RecordSpec {
                name: "line".to_owned(),
                plural: "lines".to_owned(),
                prose: Some(vec![Segment::Field(1)]),
                absent: None,
                outputs: vec![
                    output("line", OutputKind::Show),
                    output("text", OutputKind::Any { max_tokens: None }),
                ],
                skipped: Vec::new(),
            },
        };
        JsonProjection::new(&records, &BTreeMap::new())
    }
}
