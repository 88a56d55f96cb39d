//! The first seed's judgements, applied by default to records nobody described
//! ([`Rules`]): what a program reads and a model cannot use is set aside, never dropped. A
//! page shows each record tidied; the stored result keeps the link fields as fields of their
//! own and the record as the tool gave it (`original`), so `open_result` reaches both.

use crate::fields::date::iso_date;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

/// How records nobody described are tidied for a model (`[tools.<name>.rules]`, or
/// `[defaults.rules]`): each rule on by default, each switchable. What a rule leaves out of a
/// page stays in the stored result, reachable through `open_result`; the summary says which
/// rules changed the page.
///
/// ```
/// use toolshape::config::ShapeConfig;
///
/// let config = ShapeConfig::from_toml_str(r#"
///     [tools.list_events.rules]
///     times = "minute"
///     repeated = false
/// "#).unwrap();
/// # let _ = config;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Link fields (`url`, `*_url`, `*Url`, `href`, `links`, `_links`, `self`) and node ids
    /// (`node_id`, `*_node_id`) are left out of the page, unless a tool of the server takes
    /// an argument of that name. A record's own link fields stay fields of the stored result.
    pub links: bool,
    /// `null`, `""`, `[]` and `{}` values are left out: a field a record does not show is
    /// empty or absent.
    pub empty: bool,
    /// Timestamps in the records of a list, to the precision chosen (a lone object's times are
    /// kept as given: a clock's answer is its time of day).
    pub times: Times,
    /// An object that comes again across the records (the same user on every issue, the same
    /// label) is shown by its name (`login`, `full_name`, `name`, `displayName`, `title`,
    /// `key`, `slug`, `username`, `id`) wherever objects in that place do.
    pub repeated: bool,
    /// A JSON:API document is read through its resources' `attributes`, its relationships
    /// named by what `included` says of them.
    pub jsonapi: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            links: true,
            empty: true,
            times: Times::Date,
            repeated: true,
            jsonapi: true,
        }
    }
}

impl Rules {
    /// No rule: every record as the tool gave it.
    pub const NONE: Rules = Rules {
        links: false,
        empty: false,
        times: Times::AsGiven,
        repeated: false,
        jsonapi: false,
    };
}

/// The precision of timestamps in a list's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Times {
    /// The day as written (`2026-02-11`): "opened on the eleventh".
    Date,
    /// To the minute, with the zone as written (`2026-02-11T09:14Z`).
    Minute,
    /// As given.
    AsGiven,
}

/// What the rules made of an answer's records.
pub(crate) struct Tidied {
    /// The records as a page shows them, each with its `original` when one is kept.
    pub records: Vec<Value>,
    /// The records' own link fields, left out of the page and kept as fields of the stored
    /// result, first met first.
    pub aside: Vec<String>,
    /// The key holding each record as the tool gave it, when a rule changed more than which
    /// of a record's own link fields a page shows.
    pub original: Option<String>,
    /// What the rules did, for the summary (`links and node ids, empty values, times of day
    /// left out; repeated objects by name`); empty when nothing changed.
    pub said: Vec<&'static str>,
}

/// What one record's tidying changed.
#[derive(Default)]
struct Changes {
    links: bool,
    nested_links: bool,
    empty: bool,
    nested_empty: bool,
    times: bool,
    named: bool,
    jsonapi: bool,
}

/// Whether `key` names a link or a node id.
pub(crate) fn is_link_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "url" | "urls" | "uri" | "href" | "links" | "_links" | "self" | "node_id" | "nodeid"
    ) || ["_url", "_urls", "-url", "_uri", "_href", "_node_id"]
        .iter()
        .any(|s| lower.ends_with(s))
        || ["Url", "Urls", "URL", "Uri", "Href", "NodeId"]
            .iter()
            .any(|s| key.ends_with(s) && key.len() > s.len())
}

/// The keys a repeated object is named by, in the order asked.
const NAME_KEYS: &[&str] = &[
    "login",
    "full_name",
    "name",
    "displayName",
    "display_name",
    "title",
    "key",
    "slug",
    "username",
    "id",
];

/// The value naming `object`, when it has one: a non-empty text or a number.
fn name_of(object: &Map<String, Value>) -> Option<&Value> {
    NAME_KEYS.iter().find_map(|k| match object.get(*k)? {
        Value::String(s) if !s.trim().is_empty() => object.get(*k),
        Value::Number(_) => object.get(*k),
        _ => None,
    })
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// A timestamp to the precision asked; `None` when the text is no timestamp (a date alone is
/// left as it is) or the precision is as given.
fn shortened(text: &str, times: Times) -> Option<String> {
    if times == Times::AsGiven || text.len() <= 10 {
        return None;
    }
    let day = iso_date(text)?;
    match times {
        Times::Date => Some(day.to_owned()),
        Times::Minute => {
            let rest = text.get(16..)?;
            let zone =
                rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
            let minute = format!("{}{zone}", text.get(..16)?);
            (minute.len() < text.len()).then_some(minute)
        }
        Times::AsGiven => None,
    }
}

/// Tidies `records` (the items of a list, or one object when `!several`) as `rules` say;
/// `given` is each record as the tool gave it (the record itself, or a JSON:API resource with
/// what it names from `included`: then `jsonapi`); `arguments` are the names a tool of the
/// server takes, never set aside.
pub(crate) fn tidy(
    records: &[&Map<String, Value>],
    given: &[&Map<String, Value>],
    several: bool,
    jsonapi: bool,
    rules: &Rules,
    arguments: &BTreeSet<String>,
) -> Tidied {
    let times = if several { rules.times } else { Times::AsGiven };
    let mut changes = Changes {
        jsonapi,
        ..Changes::default()
    };
    let mut aside: Vec<String> = Vec::new();
    let mut tidied: Vec<Map<String, Value>> = records
        .iter()
        .map(|record| {
            let mut out = Map::with_capacity(record.len());
            for (key, value) in record.iter() {
                if rules.links && is_link_key(key) && !arguments.contains(key) {
                    changes.links = true;
                    if !aside.contains(key) {
                        aside.push(key.clone());
                    }
                    continue;
                }
                let value = pruned(value, rules, times, arguments, &mut changes);
                if rules.empty && is_empty(&value) {
                    changes.empty = true;
                    continue;
                }
                out.insert(key.clone(), value);
            }
            out
        })
        .collect();
    if rules.repeated && records.len() > 1 {
        changes.named = by_name(&mut tidied);
    }
    finish(records, given, tidied, aside, changes)
}

/// The tidied records, with `original` where a record changed inside its values.
fn finish(
    records: &[&Map<String, Value>],
    given: &[&Map<String, Value>],
    tidied: Vec<Map<String, Value>>,
    aside: Vec<String>,
    changes: Changes,
) -> Tidied {
    let mut said = Vec::new();
    if changes.jsonapi {
        said.push("JSON:API resources read through their attributes");
    }
    if changes.links || changes.nested_links {
        said.push("links and node ids left out");
    }
    if changes.empty || changes.nested_empty {
        said.push("empty values left out");
    }
    if changes.times {
        said.push("times shortened");
    }
    if changes.named {
        said.push("repeated objects shown by name");
    }
    // Anything beyond the record's own link fields (kept as fields of their own) is kept as
    // the record was given: an empty value too (`null` and `""` are not the same answer).
    let values_changed = changes.empty
        || changes.nested_links
        || changes.nested_empty
        || changes.times
        || changes.named
        || changes.jsonapi;
    let original = values_changed.then(|| {
        let mut name = "original".to_owned();
        while tidied.iter().any(|r| r.contains_key(&name)) || aside.contains(&name) {
            name.insert(0, '_');
        }
        name
    });
    let records = tidied
        .into_iter()
        .zip(records.iter().zip(given))
        .map(|(mut record, (read, given))| {
            // The link fields a page leaves out, as fields of the stored result.
            for key in &aside {
                if let Some(value) = read.get(key) {
                    record.insert(key.clone(), value.clone());
                }
            }
            if let Some(name) = &original {
                record.insert(name.clone(), Value::Object((*given).clone()));
            }
            Value::Object(record)
        })
        .collect();
    Tidied {
        records,
        aside,
        original,
        said,
    }
}

/// `value` with the rules applied inside it.
fn pruned(
    value: &Value,
    rules: &Rules,
    times: Times,
    arguments: &BTreeSet<String>,
    changes: &mut Changes,
) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, value) in map {
                if rules.links && is_link_key(key) && !arguments.contains(key) {
                    changes.nested_links = true;
                    continue;
                }
                let value = pruned(value, rules, times, arguments, changes);
                if rules.empty && is_empty(&value) {
                    changes.nested_empty = true;
                    continue;
                }
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| pruned(v, rules, times, arguments, changes))
                .collect(),
        ),
        Value::String(text) => match shortened(text, times) {
            Some(short) => {
                changes.times = true;
                Value::String(short)
            }
            None => value.clone(),
        },
        other => other.clone(),
    }
}

/// The objects inside each record (not the records themselves), by place (`user`,
/// `labels[]`, `fields.status`): where some object comes again across the records, every
/// object there whose name stands for one object only is replaced by its name. Whether
/// anything was.
fn by_name(records: &mut [Map<String, Value>]) -> bool {
    // Per place: how often each object (its compact text) comes, and the objects each name
    // stands for.
    #[derive(Default)]
    struct Place {
        seen: HashMap<String, usize>,
        names: HashMap<String, BTreeSet<String>>,
    }
    fn survey(value: &Value, place: &mut String, places: &mut HashMap<String, Place>) {
        match value {
            Value::Object(map) => {
                if let Some(name) = name_of(map) {
                    let text = serde_json::to_string(map).unwrap_or_default();
                    let here = places.entry(place.clone()).or_default();
                    here.names
                        .entry(name.to_string())
                        .or_default()
                        .insert(text.clone());
                    *here.seen.entry(text).or_default() += 1;
                }
                for (key, value) in map {
                    let len = place.len();
                    place.push('.');
                    place.push_str(key);
                    survey(value, place, places);
                    place.truncate(len);
                }
            }
            Value::Array(items) => {
                let len = place.len();
                place.push_str("[]");
                items.iter().for_each(|v| survey(v, place, places));
                place.truncate(len);
            }
            _ => {}
        }
    }
    fn replace(value: &mut Value, place: &mut String, named: &HashMap<String, Place>) -> bool {
        let mut any = false;
        match value {
            Value::Object(map) => {
                if let Some(here) = named.get(place.as_str())
                    && let Some(name) = name_of(map)
                    && here
                        .names
                        .get(&name.to_string())
                        .is_some_and(|t| t.len() == 1)
                {
                    *value = name.clone();
                    return true;
                }
                for (key, value) in map.iter_mut() {
                    let len = place.len();
                    place.push('.');
                    place.push_str(key);
                    any |= replace(value, place, named);
                    place.truncate(len);
                }
            }
            Value::Array(items) => {
                let len = place.len();
                place.push_str("[]");
                for item in items {
                    any |= replace(item, place, named);
                }
                place.truncate(len);
            }
            _ => {}
        }
        any
    }
    let mut places: HashMap<String, Place> = HashMap::new();
    let mut place = String::new();
    for record in records.iter() {
        for (key, value) in record {
            place.clear();
            place.push_str(key);
            survey(value, &mut place, &mut places);
        }
    }
    places.retain(|_, p| p.seen.values().any(|&n| n > 1));
    if places.is_empty() {
        return false;
    }
    let mut any = false;
    for record in records.iter_mut() {
        for (key, value) in record.iter_mut() {
            place.clear();
            place.push_str(key);
            any |= replace(value, &mut place, &places);
        }
    }
    any
}

/// Resources of a JSON:API document, each an object.
pub(crate) type Resources = Vec<Map<String, Value>>;

/// The resources of a JSON:API document (`{"data": [{"type", "id", "attributes",
/// "relationships"}], "included": […]}`), each read through its attributes: `id`, `type`, its
/// attributes, and each relationship as the related resource's attributes where `included`
/// has it (`{"type", "id"}` where it does not). `None` when `value` is no such document.
/// Each resource's given form (with the resources it names from `included`) is its original.
pub(crate) fn jsonapi(value: &Value) -> Option<(Resources, Resources)> {
    let doc = value.as_object()?;
    let data: Vec<&Map<String, Value>> = match doc.get("data")? {
        Value::Array(items) => items.iter().map(Value::as_object).collect::<Option<_>>()?,
        Value::Object(one) => vec![one],
        _ => return None,
    };
    let resource = |r: &Map<String, Value>| {
        r.get("type").is_some_and(Value::is_string)
            && r.get("id").is_some_and(Value::is_string)
            && (r.contains_key("attributes") || r.contains_key("relationships"))
    };
    if data.is_empty() || !data.iter().all(|r| resource(r)) {
        return None;
    }
    let included: HashMap<(&str, &str), &Map<String, Value>> = doc
        .get("included")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|r| Some(((r.get("type")?.as_str()?, r.get("id")?.as_str()?), r)))
        .collect();
    let mut read = Vec::with_capacity(data.len());
    let mut originals = Vec::with_capacity(data.len());
    for item in data {
        let mut record = Map::new();
        record.insert("id".into(), item["id"].clone());
        record.insert("type".into(), item["type"].clone());
        if let Some(Value::Object(attributes)) = item.get("attributes") {
            for (k, v) in attributes {
                if !record.contains_key(k) {
                    record.insert(k.clone(), v.clone());
                }
            }
        }
        let mut named: Vec<Value> = Vec::new();
        let mut related = |linkage: &Value| -> Value {
            let key = (
                linkage
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                linkage
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
            match included.get(&key) {
                Some(found) => {
                    named.push(Value::Object((*found).clone()));
                    match found.get("attributes") {
                        Some(Value::Object(a)) if !a.is_empty() => Value::Object(a.clone()),
                        _ => linkage.clone(),
                    }
                }
                None => linkage.clone(),
            }
        };
        if let Some(Value::Object(relationships)) = item.get("relationships") {
            for (name, relationship) in relationships {
                let value = match relationship.get("data") {
                    Some(Value::Array(items)) => {
                        Value::Array(items.iter().map(&mut related).collect())
                    }
                    Some(one @ Value::Object(_)) => related(one),
                    Some(Value::Null) => Value::Null,
                    _ => continue,
                };
                if !record.contains_key(name) {
                    record.insert(name.clone(), value);
                }
            }
        }
        let mut original = item.clone();
        if !named.is_empty() {
            let mut key = "included".to_owned();
            while original.contains_key(&key) {
                key.insert(0, '_');
            }
            original.insert(key, Value::Array(named));
        }
        read.push(record);
        originals.push(original);
    }
    Some((read, originals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `records` tidied as a list (`several`) under `rules`, with `arguments`.
    fn tidied(records: &Value, several: bool, rules: &Rules, arguments: &[&str]) -> Tidied {
        let maps: Vec<&Map<String, Value>> = records
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_object().unwrap())
            .collect();
        let arguments = arguments.iter().map(|a| (*a).to_owned()).collect();
        tidy(&maps, &maps, several, false, rules, &arguments)
    }

    fn without(record: &Value, key: &str) -> Value {
        let mut record = record.clone();
        record.as_object_mut().unwrap().remove(key);
        record
    }

    #[test]
    fn links_go_aside_as_fields_of_their_own_unless_a_tool_takes_them() {
        let records = json!([
            {"id": 1, "url": "u1", "html_url": "h1", "title": "a"},
            {"id": 2, "node_id": "N2", "url": "u2", "title": "b"},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        assert_eq!(t.aside, ["url", "html_url", "node_id"]);
        assert_eq!(t.original, None);
        assert_eq!(t.said, ["links and node ids left out"]);
        // The stored record keeps each link field it had, after what a page shows.
        assert_eq!(
            t.records[0],
            json!({"id": 1, "title": "a", "url": "u1", "html_url": "h1"})
        );
        assert_eq!(
            t.records[1],
            json!({"id": 2, "title": "b", "url": "u2", "node_id": "N2"})
        );
        let kept = tidied(&records, true, &Rules::default(), &["url"]);
        assert_eq!(kept.aside, ["html_url", "node_id"]);
        assert_eq!(kept.records[0]["url"], json!("u1"));
        let off = Rules {
            links: false,
            ..Rules::default()
        };
        let t = tidied(&records, true, &off, &[]);
        assert!(t.aside.is_empty() && t.said.is_empty(), "{:?}", t.said);
        assert_eq!(t.records, records.as_array().unwrap().clone());
    }

    #[test]
    fn a_change_inside_a_value_keeps_the_record_as_given() {
        let records = json!([
            {"id": 1, "user": {"login": "ann", "avatar_url": "a"}},
            {"id": 2, "user": {"login": "bob", "avatar_url": "b"}},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        assert_eq!(t.said, ["links and node ids left out"]);
        assert_eq!(t.original.as_deref(), Some("original"));
        assert!(t.aside.is_empty());
        assert_eq!(
            without(&t.records[0], "original"),
            json!({"id": 1, "user": {"login": "ann"}})
        );
        assert_eq!(t.records[0]["original"], records[0]);
        // A record with a key of that name: the original takes another.
        let named = json!([{"original": true, "at": "2026-02-11T09:14:00Z"}, {"original": false}]);
        let t = tidied(&named, true, &Rules::default(), &[]);
        assert_eq!(t.original.as_deref(), Some("_original"));
        assert_eq!(t.records[0]["_original"], named[0]);
        assert_eq!(t.records[0]["original"], json!(true));
    }

    #[test]
    fn empty_values_leave_the_page_and_zero_and_false_stay() {
        let records = json!([
            {"id": 1, "a": null, "b": "", "c": [], "d": {}, "e": 0, "f": false,
             "g": {"h": null, "i": 1}, "j": [null, ""]},
        ]);
        let t = tidied(&records, false, &Rules::default(), &[]);
        assert_eq!(t.said, ["empty values left out"]);
        assert_eq!(
            without(&t.records[0], "original"),
            json!({"id": 1, "e": 0, "f": false, "g": {"i": 1}, "j": [null, ""]})
        );
        assert_eq!(t.records[0]["original"], records[0]);
        // Only empty inside: said the same way.
        let inside = json!([{"id": 1, "g": {"h": []}}]);
        let t = tidied(&inside, false, &Rules::default(), &[]);
        assert_eq!(t.said, ["empty values left out"]);
        assert_eq!(without(&t.records[0], "original"), json!({"id": 1}));
    }

    #[test]
    fn a_lists_times_are_shortened_at_every_depth_and_a_lone_objects_are_not() {
        let records = json!([
            {"id": 1, "at": "2026-02-11T09:14:22Z", "in": {"at": "2026-03-01T00:00:00+01:00"}},
            {"id": 2, "at": "2026-02-12"},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        assert_eq!(t.said, ["times shortened"]);
        assert_eq!(t.records[0]["at"], json!("2026-02-11"));
        assert_eq!(t.records[0]["in"], json!({"at": "2026-03-01"}));
        assert_eq!(t.records[1]["at"], json!("2026-02-12"));
        let lone = json!([{"id": 1, "at": "2026-02-11T09:14:22Z"}]);
        let t = tidied(&lone, false, &Rules::default(), &[]);
        assert!(t.said.is_empty(), "{:?}", t.said);
        assert_eq!(t.records[0]["at"], json!("2026-02-11T09:14:22Z"));
    }

    #[test]
    fn a_repeated_object_is_named_where_its_place_repeats_one() {
        let records = json!([
            {"id": 1, "user": {"login": "ann", "id": 1}, "labels": [{"name": "bug", "id": 9}],
             "meta": {"login": "x", "n": 1}, "n": {"id": 5}},
            {"id": 2, "user": {"login": "ann", "id": 1}, "labels": [{"name": "ux", "id": 8}],
             "meta": {"login": "y", "n": 2}, "n": {"id": 5}},
            {"id": 3, "user": {"login": "cy", "id": 3}, "labels": [{"name": "bug", "id": 9}]},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        assert_eq!(t.said, ["repeated objects shown by name"]);
        let page: Vec<Value> = t.records.iter().map(|r| without(r, "original")).collect();
        // `user` and `labels[]` repeat an object: every object there by its name; `meta`
        // repeats none and stays whole; a number names too.
        assert_eq!(
            page[0],
            json!({"id": 1, "user": "ann", "labels": ["bug"], "meta": {"login": "x", "n": 1}, "n": 5})
        );
        assert_eq!(page[1]["labels"], json!(["ux"]));
        assert_eq!(page[2]["user"], json!("cy"));
        assert_eq!(t.records[2]["original"], records[2]);
        // One record: nothing can come again.
        let one = json!([records[0].clone()]);
        let t = tidied(&one, false, &Rules::default(), &[]);
        assert!(t.said.is_empty(), "{:?}", t.said);
    }

    #[test]
    fn a_name_shared_by_two_objects_names_neither_and_a_blank_name_is_no_name() {
        let records = json!([
            {"id": 1, "u": {"login": "bob", "admin": false}},
            {"id": 2, "u": {"login": "bob", "admin": true}},
            {"id": 3, "u": {"login": "cy"}},
            {"id": 4, "u": {"login": "cy"}},
            {"id": 5, "u": {"login": " ", "name": "Dee"}},
            {"id": 6, "u": {"login": " ", "name": "Dee"}},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        let shown: Vec<&Value> = t.records.iter().map(|r| &r["u"]).collect();
        assert_eq!(shown[0], &records[0]["u"]);
        assert_eq!(shown[1], &records[1]["u"]);
        assert_eq!(shown[2], &json!("cy"));
        assert_eq!(shown[4], &json!("Dee"));
        let off = Rules {
            repeated: false,
            ..Rules::default()
        };
        let t = tidied(&records, true, &off, &[]);
        assert!(t.said.is_empty(), "{:?}", t.said);
    }

    #[test]
    fn every_rule_says_what_it_did_in_one_order() {
        let records = json!([
            {"id": 1, "url": "u", "x": null, "at": "2026-02-11T09:14:22Z", "u": {"login": "a"}},
            {"id": 2, "url": "v", "at": "2026-02-11T09:14:22Z", "u": {"login": "a"}},
        ]);
        let t = tidied(&records, true, &Rules::default(), &[]);
        assert_eq!(
            t.said,
            [
                "links and node ids left out",
                "empty values left out",
                "times shortened",
                "repeated objects shown by name"
            ]
        );
        let none = tidied(&records, true, &Rules::NONE, &[]);
        assert!(none.said.is_empty() && none.aside.is_empty() && none.original.is_none());
    }

    #[test]
    fn a_jsonapi_document_is_read_through_its_attributes_and_nothing_else_is() {
        assert!(jsonapi(&json!([{"type": "a", "id": "1"}])).is_none());
        assert!(jsonapi(&json!({"data": [{"id": "1", "attributes": {}}]})).is_none());
        assert!(jsonapi(&json!({"data": [{"type": "a", "id": 1, "attributes": {}}]})).is_none());
        assert!(jsonapi(&json!({"data": [{"type": "a", "id": "1"}]})).is_none());
        assert!(jsonapi(&json!({"data": []})).is_none());
        assert!(jsonapi(&json!({"data": "x"})).is_none());
        let doc = json!({
            "data": {"type": "a", "id": "1", "attributes": {"t": "x", "id": "shadow"},
                     "relationships": {"p": {"data": {"type": "people", "id": "9"}},
                                       "q": {"data": [{"type": "people", "id": "8"}]},
                                       "r": {"data": null},
                                       "s": {"links": {"self": "l"}}}},
            "included": [{"type": "people", "id": "9", "attributes": {"n": "Dan"}},
                         {"type": "people", "id": "8"}]
        });
        let (read, originals) = jsonapi(&doc).unwrap();
        assert_eq!(
            Value::Object(read[0].clone()),
            json!({"id": "1", "type": "a", "t": "x", "p": {"n": "Dan"},
                   "q": [{"type": "people", "id": "8"}], "r": null})
        );
        let mut given = doc["data"].clone();
        given["included"] = doc["included"].clone();
        assert_eq!(Value::Object(originals[0].clone()), given);
    }

    #[test]
    fn a_link_key_is_named_as_a_link_and_a_word_ending_in_its_letters_is_not() {
        for key in [
            "url",
            "URL",
            "Url",
            "urls",
            "href",
            "links",
            "_links",
            "self",
            "node_id",
            "html_url",
            "avatarUrl",
            "iconUrl",
            "avatarUrls",
            "repository_url",
            "owner_node_id",
            "nodeId",
            "image-url",
        ] {
            assert!(is_link_key(key), "{key}");
        }
        for key in [
            "curl",
            "hurl",
            "urlencoded",
            "title",
            "id",
            "selfie",
            "Url_kind",
            "ur",
            "",
        ] {
            assert!(!is_link_key(key), "{key}");
        }
    }

    #[test]
    fn a_timestamp_is_shortened_at_its_edges_and_a_date_alone_is_not() {
        let day = |t| shortened(t, Times::Date);
        let minute = |t| shortened(t, Times::Minute);
        assert_eq!(day("2026-02-11"), None);
        assert_eq!(day("2026-02-11T"), None);
        assert_eq!(day("2026-02-11T09:1"), None);
        assert_eq!(day("2026-02-11T09:14").as_deref(), Some("2026-02-11"));
        assert_eq!(minute("2026-02-11T09:14"), None);
        assert_eq!(minute("2026-02-11T09:14Z"), None);
        assert_eq!(
            minute("2026-02-11T09:14:00").as_deref(),
            Some("2026-02-11T09:14")
        );
        assert_eq!(
            minute("2026-10-03T09:14:35.658+0000").as_deref(),
            Some("2026-10-03T09:14+0000")
        );
        assert_eq!(shortened("2026-02-11T09:14:22Z", Times::AsGiven), None);
        assert_eq!(day("2026-13-11T09:14:22Z"), None);
    }
}
