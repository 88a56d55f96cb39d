//! A projection for a JSON result nobody described ([`JsonProjection::infer`]): where its
//! records are (every part of an answer of several), and every key they have, shown as it is
//! with its text as outsiders' text. What the harness gives a tool the configuration does not
//! name.

use super::JsonProjection;
use super::spec::{ConfiguredRecords, JsonPath, Output, OutputKind, RecordSpec, Step};
use super::tidy::{self, Rules};
use crate::text::{singular_of, thousands};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// How records nobody described are read.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Inferred {
    /// Keys whose text is the system's own, shown as it is (not outsiders' text).
    pub(crate) trusted: Vec<String>,
    /// The cap in tokens of each value's text (`None`: no cap).
    pub(crate) max_tokens: Option<u32>,
    /// How the records are tidied for a model ([`Rules`]; all on by default).
    pub(crate) rules: Rules,
    /// The names of the arguments the server's tools take: a link or node id under one of
    /// them is an argument a model can pass, never set aside.
    pub(crate) arguments: std::sync::Arc<BTreeSet<String>>,
}

/// An answer nobody described, read as records ([`JsonProjection::infer`]): the projection,
/// the value it reads them from, and what the summary's first page states of its parts.
#[derive(Debug, Clone)]
pub(crate) struct InferredAnswer<'v> {
    /// The records' projection: every key they have.
    pub(crate) projection: JsonProjection,
    /// What the projection reads: the answer itself, or, for an answer of several parts,
    /// its records one after another, each naming its part (`section`).
    pub(crate) value: Cow<'v, Value>,
    /// For an answer of several parts, each part with its count and its place among the
    /// records (`sections in order: …`), and what the rules changed, for the walk's first
    /// page.
    pub(crate) sections: Option<String>,
    /// The fields the rules set aside: a page leaves them out, the stored result keeps them
    /// (the records' link fields, and `original`, each record as the tool gave it).
    pub(crate) aside: Vec<String>,
}

impl JsonProjection {
    /// The records of `value`, an answer of `tool` nobody described, and their projection;
    /// `None` when it holds no records (text, a number, a list of something else).
    ///
    /// - A list of objects: its items are the records.
    /// - An object whose only key holds a list of objects: that list's items.
    /// - An object with several parts (lists of objects, and other keys beside them): every
    ///   part is shown, one after another, in the answer's order: the other keys as one
    ///   record first, then each list's items, each record naming its part in `section`
    ///   (another name when the records have a `section` of their own); `sections` states
    ///   each part's count and place. Nothing of the answer is left out.
    /// - Any other object: one record. An empty list, or an object of empty lists, has no
    ///   records: the answer is empty.
    ///
    /// Each record shows the keys it has (a key another record has and this one does not is
    /// left out of it, not marked): the keys that name a record first (`section`, `id`,
    /// `number`, `key`, `name`, `full_name`, `title`, `login`, `slug`), then the rest, each in
    /// the order first met (the JSON text's order: the `rmcp` feature keeps serde_json's
    /// `preserve_order`); its text (and any object or list, as its JSON text) as outsiders'
    /// text capped at `options.max_tokens`, except the `trusted` keys; `id`, when every
    /// record that has one has a text or integer `id`, is the record's id. The records keep
    /// the answer's order (the harness states none).
    ///
    pub(crate) fn infer<'v>(
        tool: &str,
        value: &'v Value,
        options: &Inferred,
    ) -> Option<InferredAnswer<'v>> {
        // A JSON:API document: its resources, read through their attributes, in place of its
        // `data` and `included`; each resource's original is the resource as given.
        if options.rules.jsonapi
            && let Some((read, originals)) = tidy::jsonapi(value)
        {
            let mut map: Map<String, Value> = value
                .as_object()?
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "data" | "included"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            map.insert(
                "data".to_owned(),
                Value::Array(read.into_iter().map(Value::Object).collect()),
            );
            let document = Value::Object(map);
            let given: Vec<&Map<String, Value>> = originals.iter().collect();
            let answer = read_answer(tool, &document, options, Some(&given))?;
            return Some(InferredAnswer {
                projection: answer.projection,
                value: Cow::Owned(answer.value.into_owned()),
                sections: answer.sections,
                aside: answer.aside,
            });
        }
        read_answer(tool, value, options, None)
    }
}

/// [`JsonProjection::infer`] of `value`; `jsonapi` holds, for a JSON:API document read
/// through its attributes, each resource as given (the items of its `data` list).
fn read_answer<'v>(
    tool: &str,
    value: &'v Value,
    options: &Inferred,
    jsonapi: Option<&[&Map<String, Value>]>,
) -> Option<InferredAnswer<'v>> {
    let map = match value {
        Value::Array(items) if items.is_empty() => {
            return Some(empty(tool, "record", "records"));
        }
        Value::Array(items) => {
            let records = objects(items)?;
            return tidied(
                tool, value, &records, &records, false, false, None, None, options,
            );
        }
        Value::Object(map) => map,
        _ => return None,
    };
    if map.is_empty() {
        return Some(empty(tool, "record", "records"));
    }
    let lists: Vec<(&String, Vec<&Map<String, Value>>)> = map
        .iter()
        .filter_map(|(k, v)| match v {
            Value::Array(items) if items.is_empty() => Some((k, Vec::new())),
            Value::Array(items) => objects(items).map(|o| (k, o)),
            _ => None,
        })
        .collect();
    let fields: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !lists.iter().any(|(l, _)| l == k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    match (&lists[..], fields.is_empty()) {
        // One record: the object itself.
        ([], _) => tidied(
            tool,
            value,
            &[map],
            &[map],
            true,
            false,
            None,
            None,
            options,
        ),
        // One list and nothing beside it: its items.
        ([(key, records)], true) => {
            let names = singular_of(key).map(|one| (one, (*key).clone()));
            if records.is_empty() {
                let (one, many) = names.unwrap_or(("record".into(), "records".into()));
                return Some(empty(tool, &one, &many));
            }
            let given = jsonapi.unwrap_or(records);
            tidied(
                tool,
                value,
                records,
                given,
                false,
                jsonapi.is_some(),
                Some(key),
                names,
                options,
            )
        }
        // Nothing in any list, and nothing beside them: empty.
        (lists, true) if lists.iter().all(|(_, r)| r.is_empty()) => {
            let names: Vec<&str> = lists.iter().map(|(k, _)| k.as_str()).collect();
            Some(empty(tool, "record", &names.join(" or ")))
        }
        (lists, _) => Some(sectioned(tool, map, lists, fields, options, jsonapi)),
    }
}

/// The answer of `records` (the items of the list under `at`, or the one object `value` is
/// when `one`), tidied by the rules; `given` is each record as the tool gave it.
#[allow(clippy::too_many_arguments)]
fn tidied<'v>(
    tool: &str,
    value: &'v Value,
    records: &[&Map<String, Value>],
    given: &[&Map<String, Value>],
    one: bool,
    jsonapi: bool,
    at: Option<&String>,
    names: Option<(String, String)>,
    options: &Inferred,
) -> Option<InferredAnswer<'v>> {
    let at: Vec<String> = at.cloned().into_iter().collect();
    let several = !one && records.len() > 1;
    if let Some(t) = tidy_records(
        tool,
        (records, given),
        (one, several, jsonapi),
        names.clone(),
        options,
    ) {
        let value = match one {
            true => t.records.into_iter().next()?,
            false => Value::Array(t.records),
        };
        return Some(InferredAnswer {
            projection: t.projection?,
            value: Cow::Owned(value),
            sections: Some(t.said),
            aside: t.aside,
        });
    }
    let projection = projection_of(tool, records, &at, one, names, options, (&[], None))?;
    Some(InferredAnswer {
        projection,
        value: Cow::Borrowed(value),
        sections: None,
        aside: Vec::new(),
    })
}

/// A JSON object: a record.
type Object = Map<String, Value>;

/// Records the rules changed, with their projection.
struct Tidy {
    /// The projection of what a page shows and the stored result keeps (`None`: no key).
    projection: Option<JsonProjection>,
    /// The records, tidied, each with what is set aside.
    records: Vec<Value>,
    /// What the rules did, for the summary.
    said: String,
    /// What a page leaves out and the stored result keeps.
    aside: Vec<String>,
}

/// `records` (each as `given`: itself, or a JSON:API resource) tidied by the rules, and their
/// projection; `None` when no rule changed anything (they are read as given). `several`: the
/// records of a list, whose times are shortened.
fn tidy_records(
    tool: &str,
    (records, given): (&[&Object], &[&Object]),
    (one, several, jsonapi): (bool, bool, bool),
    names: Option<(String, String)>,
    options: &Inferred,
) -> Option<Tidy> {
    if options.rules == Rules::NONE && !jsonapi {
        return None;
    }
    let t = tidy::tidy(
        records,
        given,
        several,
        jsonapi,
        &options.rules,
        &options.arguments,
    );
    if t.said.is_empty() {
        return None;
    }
    let tidied: Vec<&Map<String, Value>> = t.records.iter().filter_map(Value::as_object).collect();
    let aside = aside_of(&t);
    let original = t.original.as_deref();
    let projection = projection_of(tool, &tidied, &[], one, names, options, (&aside, original));
    Some(Tidy {
        projection,
        said: said(&t.said, original),
        records: t.records,
        aside,
    })
}

/// The fields a tidied answer sets aside: the records' link fields, then `original`.
fn aside_of(t: &tidy::Tidied) -> Vec<String> {
    t.aside.iter().cloned().chain(t.original.clone()).collect()
}

/// What the summary says the rules did: `links and node ids left out, times shortened; as
/// given: original`.
fn said(said: &[&str], original: Option<&str>) -> String {
    match original {
        Some(original) => format!("{}; each record as given: {original}", said.join(", ")),
        None => said.join(", "),
    }
}

/// The keys that name a record, shown before the rest of its keys (after its section).
const NAMING_KEYS: &[&str] = &[
    "section",
    "id",
    "number",
    "key",
    "name",
    "full_name",
    "title",
    "login",
    "slug",
];

/// An answer of several parts as one list of records, each naming its part.
fn sectioned<'v>(
    tool: &str,
    map: &Map<String, Value>,
    lists: &[(&String, Vec<&Map<String, Value>>)],
    fields: Map<String, Value>,
    options: &Inferred,
    jsonapi: Option<&[&Map<String, Value>]>,
) -> InferredAnswer<'v> {
    let taken = |name: &str| {
        lists
            .iter()
            .any(|(_, records)| records.iter().any(|r| r.contains_key(name)))
            || fields.contains_key(name)
    };
    let mut section = "section".to_owned();
    while taken(&section) {
        section.insert(0, '_');
    }
    let mut own = "answer".to_owned();
    while map.contains_key(&own) {
        own.push_str("_fields");
    }
    let mut records = Vec::with_capacity(lists.iter().map(|(_, r)| r.len()).sum::<usize>() + 1);
    let mut parts = Vec::new();
    let mut place = 1usize;
    let own_fields = fields;
    if !own_fields.is_empty() {
        let mut record = Map::with_capacity(own_fields.len() + 1);
        record.insert(section.clone(), Value::String(own));
        record.extend(own_fields.iter().map(|(k, v)| (k.clone(), v.clone())));
        records.push(Value::Object(record));
        parts.push(format!("the answer's own fields (record {place})"));
        place += 1;
    }
    for (key, items) in lists {
        let label = crate::untrusted::echo::clean(key);
        let n = items.len();
        parts.push(match n {
            0 => format!("{label} 0"),
            1 => format!("{label} 1 (record {place})"),
            n => format!(
                "{label} {} (records {}–{})",
                thousands(n as u64),
                thousands(place as u64),
                thousands((place + n - 1) as u64)
            ),
        });
        place += n;
        for item in items {
            let mut record = Map::with_capacity(item.len() + 1);
            record.insert(section.clone(), Value::String(label.clone()));
            record.extend(item.iter().map(|(k, v)| (k.clone(), v.clone())));
            records.push(Value::Object(record));
        }
    }
    let objects: Vec<&Map<String, Value>> = records.iter().filter_map(Value::as_object).collect();
    let mut trusted = options.clone();
    trusted.trusted.push(section.clone());
    let sections = format!("sections in order: {}", parts.join(", "));
    // Each record as the tool gave it, without the section this reading adds: the answer's
    // own fields, each list's items (a JSON:API resource as the document wrote it).
    let own_given = (!own_fields.is_empty()).then_some(&own_fields);
    let given: Vec<&Map<String, Value>> = own_given
        .into_iter()
        .chain(lists.iter().flat_map(|(key, items)| {
            let resources = jsonapi.filter(|_| key.as_str() == "data");
            items
                .iter()
                .enumerate()
                .map(move |(i, item)| resources.and_then(|r| r.get(i)).copied().unwrap_or(item))
        }))
        .collect();
    let kinds = (false, true, jsonapi.is_some());
    if let Some(t) = tidy_records(tool, (&objects, &given), kinds, None, &trusted) {
        return InferredAnswer {
            projection: t
                .projection
                .unwrap_or_else(|| empty(tool, "record", "records").projection),
            value: Cow::Owned(Value::Array(t.records)),
            sections: Some(format!("{sections}; {}", t.said)),
            aside: t.aside,
        };
    }
    let projection = projection_of(tool, &objects, &[], false, None, &trusted, (&[], None))
        .unwrap_or_else(|| empty(tool, "record", "records").projection);
    InferredAnswer {
        projection,
        value: Cow::Owned(Value::Array(records)),
        sections: Some(sections),
        aside: Vec::new(),
    }
}

/// The answer with no records: named `one` and `many`.
fn empty<'v>(tool: &str, one: &str, many: &str) -> InferredAnswer<'v> {
    InferredAnswer {
        projection: described(tool, &[], false, (one, many), None, Vec::new()),
        value: Cow::Owned(Value::Array(Vec::new())),
        sections: None,
        aside: Vec::new(),
    }
}

/// An output showing the value under `key` as `kind` says.
fn key_output(key: &str, kind: OutputKind) -> Output {
    Output {
        name: key.to_owned(),
        from: JsonPath {
            text: key.to_owned(),
            steps: vec![Step::Key(key.to_owned())],
        },
        kind,
        rank: None,
        absent: None,
        empty_is_absent: false,
        line: None,
    }
}

/// The projection of records nobody described: at `at` (`one` record or a list), named
/// `names`, with `prose` and `outputs`; a record shows the keys it has (one without
/// another's is not marked `not recorded`).
fn described(
    tool: &str,
    at: &[String],
    one: bool,
    (name, plural): (&str, &str),
    prose: Option<Vec<crate::record::Segment<crate::record::Owned>>>,
    outputs: Vec<Output>,
) -> JsonProjection {
    let records = ConfiguredRecords {
        tool: tool.to_owned(),
        schema: None,
        at: at.to_vec(),
        one,
        record: RecordSpec {
            name: name.to_owned(),
            plural: plural.to_owned(),
            prose,
            absent: None,
            outputs,
            skipped: Vec::new(),
        },
    };
    let mut projection = JsonProjection::new(&records, &BTreeMap::new());
    if let Some(inner) = std::sync::Arc::get_mut(&mut projection.inner) {
        inner.plan.omit_absent = true;
    }
    projection
}

/// The projection of `records`, found at `at`: every key they have, first met first.
fn projection_of(
    tool: &str,
    records: &[&Map<String, Value>],
    at: &[String],
    one: bool,
    names: Option<(String, String)>,
    options: &Inferred,
    (aside, original): (&[String], Option<&str>),
) -> Option<JsonProjection> {
    let mut keys: Vec<&str> = Vec::new();
    for record in records {
        for key in record.keys() {
            if !keys.contains(&key.as_str()) && !aside.contains(key) {
                keys.push(key);
            }
        }
    }
    if keys.is_empty() {
        return None;
    }
    // The keys that name a record first, in the order met: a long value before them could
    // be all of the record a page can show.
    keys.sort_by_key(|k| !NAMING_KEYS.contains(k));
    // A record of an answer's own fields, or of a part without ids, has none: it is named
    // by its place.
    let has_id = keys.contains(&"id")
        && records.iter().all(|r| match r.get("id") {
            None | Some(Value::String(_)) => true,
            Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        });
    let outputs: Vec<Output> = keys
        .iter()
        .map(|key| {
            let kind = if has_id && *key == "id" {
                OutputKind::Id { short: false }
            } else if options.trusted.iter().any(|t| t == key) {
                OutputKind::Show
            } else {
                OutputKind::Any {
                    max_tokens: options.max_tokens,
                }
            };
            key_output(key, kind)
        })
        // What the rules set aside, last: link fields capped as any text, the records as
        // given whole.
        .chain(aside.iter().map(|key| {
            let whole = Some(key.as_str()) == original;
            let max_tokens = if whole { None } else { options.max_tokens };
            key_output(key, OutputKind::Any { max_tokens })
        }))
        .collect();
    let (name, plural) = names.unwrap_or_else(|| ("record".to_owned(), "records".to_owned()));
    Some(described(tool, at, one, (&name, &plural), None, outputs))
}

/// The items as records, when every one is an object and there is one (a list with a
/// `null` or a value among them is a value, shown as one).
fn objects(items: &[Value]) -> Option<Vec<&Map<String, Value>>> {
    let records: Vec<_> = items.iter().filter_map(Value::as_object).collect();
    (!records.is_empty() && records.len() == items.len()).then_some(records)
}

impl JsonProjection {
    /// The records of a text answer split into lines (`[{ "line": 1, "text": "…" }, …]`): a
    /// line's number, and its text as outsiders' text (uncapped). With `parts`, a line longer
    /// than a page comes in parts, each record one part (`{ "line": 1, "part": "line 1, part
    /// 3 of 7", "text": "…" }`, a whole line without `part`), and the records are called
    /// parts: never counted as lines. Prose writes the text alone (`«…»`), after its part
    /// (`line 1, part 3 of 7: «…»`); the JSON keeps the number that joins a line's parts.
    pub fn lines(tool: &str, parts: bool) -> JsonProjection {
        use crate::record::Segment;
        let mut outputs = vec![key_output("line", OutputKind::Show)];
        if parts {
            outputs.push(key_output("part", OutputKind::Show));
        }
        outputs.push(key_output("text", OutputKind::Any { max_tokens: None }));
        let (names, prose) = match parts {
            false => (("line", "lines"), vec![Segment::Field(1)]),
            true => (
                ("part", "parts"),
                vec![
                    Segment::Field(1),
                    Segment::Text(": ".to_owned()),
                    Segment::Field(2),
                ],
            ),
        };
        described(tool, &[], false, names, Some(prose), outputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_of_several_parts_names_them_and_shows_every_key() {
        let value = serde_json::json!({"total_count": 2, "items": [
            {"id": 7, "title": "Crash on save", "comments": 3},
            {"id": 9, "title": "Docs typo", "labels": ["docs"]}
        ]});
        let answer = JsonProjection::infer("search", &value, &Inferred::default()).unwrap();
        assert_eq!(
            answer.sections.as_deref(),
            Some("sections in order: the answer's own fields (record 1), items 2 (records 2–3)")
        );
        let names: Vec<&str> = answer.projection.projection().output_names().collect();
        assert_eq!(names[0], "section");
        assert!(
            ["total_count", "id", "title", "comments", "labels"]
                .iter()
                .all(|k| names.contains(k))
        );
    }
}
