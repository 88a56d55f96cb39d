//! Projections written as configuration: the records of a tool's JSON result, described in
//! `[tools.<name>.records]` with the derive's decisions, and checked when the configuration
//! loads with the derive's rules, every mistake at once, each naming the tool, the output,
//! the key and (TOML) the line.
//!
//! What is at `at` (the result itself when it is left out) is a list of records; write
//! `one = true` for a tool that answers one record (an object). Either reads the other as an
//! error, as serde reads a `Vec<Issue>` or an `Issue`: an error object where a list is
//! configured (`{"message": "Not Found"}`) is no record. `date = true` shows the UTC day of
//! a timestamp (`2014-01-21T23:30:00-05:00` is `2014-01-22`, as the derive shows a
//! `DateTime<Utc>`); `date = { day = "as_written" }` the day in its own offset
//! ([`DayOf`]).
//!
//! ```
//! use toolshape::config::ShapeConfig;
//!
//! let config = ShapeConfig::from_toml_str(r##"
//!     [tools.list_issues.records]
//!     at = "items"
//!     name = "issue"
//!     prose = "#{number} {title} ({state}), by {author}"
//!     fields = [
//!         { from = "number", id = true },
//!         { from = "title", untrusted = { max_tokens = 40 } },
//!         { from = "state", legend = "state" },
//!         { from = "user.login", rename = "author" },
//!         { from = "comments", rank = "desc" },
//!         { from = "created_at", date = true },
//!         { from = "labels[].name", rename = "labels", untrusted = { max_tokens = 12 }, absent = "no labels" },
//!         { from = "node_id", skip = true },
//!     ]
//!
//!     [legends.state]
//!     open = "open"
//!     closed = "closed"
//! "##).unwrap();
//! let records = toolshape::__seams::config::records(&config, "list_issues").unwrap();
//! assert_eq!(records.record.outputs.len(), 7);
//! assert_eq!(records.record.plural, "issues");
//!
//! // Every mistake at once, each with its tool, output, key and line.
//! let err = ShapeConfig::from_toml_str(r#"
//!     [tools.list_issues.records]
//!     prose = "{number}: {titel}"
//!     fields = [
//!         { from = "number", id = true },
//!         { from = "title", untrusted = { max_tokens = 0 } },
//!         { from = "state", legend = "states", renmae = "status" },
//!     ]
//! "#).unwrap_err();
//! assert_eq!(err.to_string().lines().count(), 5);
//! assert!(err.to_string().contains(
//!     "tools.list_issues.records, output `state`, key `renmae` (line 7): unknown field key `renmae`"
//! ));
//! ```

use super::located::{Entry, Node, Value};
pub(crate) use crate::configured::spec::{
    ConfiguredLegend, ConfiguredRecords, DateFrom, DayOf, Fold, JsonPath, Output, OutputKind,
    RankSpec, RecordSpec, Step,
};
use crate::fields::date::EpochUnit;
use crate::fields::rank::Order;
use crate::record::{Owned, Segment};
use std::collections::BTreeMap;
use std::fmt;
use toolshape_internals::rules;

/// A table of the configuration read when it loads (a tool's `records`, a legend), as serde
/// sees it: accepted as written, checked by [`ShapeConfig`](super::ShapeConfig)'s loaders
/// with every mistake named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Unchecked;

impl<'de> serde::Deserialize<'de> for Unchecked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Unchecked)
    }
}

/// The mistakes, one a line after a line that counts them.
pub(crate) fn list(errors: &[RecordsError]) -> String {
    let mut out = format!(
        "{} mistake{} in the configured records:",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for e in errors {
        out.push_str("\n  ");
        out.push_str(&e.to_string());
    }
    out
}

/// A mistake in a configured projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsError {
    /// Where: `tools.list_issues.records`, or `legends.state`.
    pub place: String,
    /// The output, as `comments.body` inside nested records.
    pub output: Option<String>,
    /// The key.
    pub key: Option<String>,
    /// The TOML line, where the parser gives one.
    pub line: Option<usize>,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl fmt::Display for RecordsError {
    /// `tools.list_issues.records, output `state`, key `legend` (line 7): no legend …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.place)?;
        if let Some(output) = &self.output {
            write!(f, ", output `{output}`")?;
        }
        if let Some(key) = &self.key {
            write!(f, ", key `{key}`")?;
        }
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The keys of `[tools.<name>.records]` (and of a `nested` table, which has no `at`).
const RECORD_KEYS: &[&str] = &[
    "at", "one", "schema", "name", "plural", "prose", "absent", "fields",
];
/// The keys of one output, in the order an error lists them.
const FIELD_KEYS: &[&str] = &[
    "from",
    "show",
    "skip",
    "rename",
    "nested",
    "legend",
    "id",
    "date",
    "untrusted",
    "rank",
    "absent",
    "empty_is_absent",
];

/// Collects the mistakes of one place.
struct Errors<'a> {
    place: String,
    list: &'a mut Vec<RecordsError>,
}

impl Errors<'_> {
    fn push(&mut self, output: Option<&str>, key: Option<&str>, line: Option<usize>, msg: String) {
        self.list.push(RecordsError {
            place: self.place.clone(),
            output: output.map(str::to_owned),
            key: key.map(str::to_owned),
            line,
            message: msg,
        });
    }
}

/// Reads and checks `[legends]`.
pub(crate) fn legends(
    doc: &Node,
    errors: &mut Vec<RecordsError>,
) -> BTreeMap<String, ConfiguredLegend> {
    let mut out = BTreeMap::new();
    let Some(table) = doc.get("legends") else {
        return out;
    };
    let mut e = Errors {
        place: "legends".to_owned(),
        list: errors,
    };
    if !matches!(table.node.value, Value::Table(_)) {
        e.push(
            None,
            None,
            table.line,
            format!(
                "`legends` is {}; write a table of legends, each a table of code = \"word\"",
                table.node.value
            ),
        );
        return out;
    }
    for legend in table.node.entries() {
        let mut e = Errors {
            place: format!("legends.{}", legend.key),
            list: e.list,
        };
        let entries = legend.node.entries();
        if !matches!(legend.node.value, Value::Table(_)) || entries.is_empty() {
            e.push(
                None,
                None,
                legend.line,
                format!(
                    "a legend is a table of code = \"word\" with at least one code; this is {}",
                    if entries.is_empty() && matches!(legend.node.value, Value::Table(_)) {
                        "empty".to_owned()
                    } else {
                        legend.node.value.to_string()
                    }
                ),
            );
            continue;
        }
        let mut words = BTreeMap::new();
        for entry in entries {
            match &entry.node.value {
                Value::Text(word) if !word.trim().is_empty() => {
                    words.insert(entry.key.clone(), word.clone());
                }
                other => e.push(
                    None,
                    Some(&entry.key),
                    entry.line,
                    format!(
                        "the word for code `{}` must be non-empty text; this is {}",
                        entry.key,
                        if matches!(other, Value::Text(_)) {
                            "empty".to_owned()
                        } else {
                            other.to_string()
                        }
                    ),
                ),
            }
        }
        let integer_codes = words
            .keys()
            .all(|k| crate::fields::ids::canonical_int(k).is_some());
        out.insert(
            legend.key.clone(),
            ConfiguredLegend {
                integer_codes,
                words,
            },
        );
    }
    out
}

/// Reads and checks the `records` table of `tool`.
pub(crate) fn records(
    tool: &str,
    entry: &Entry,
    legends: &BTreeMap<String, ConfiguredLegend>,
    errors: &mut Vec<RecordsError>,
) -> Option<ConfiguredRecords> {
    let mut e = Errors {
        place: format!("tools.{tool}.records"),
        list: errors,
    };
    let before = e.list.len();
    if !matches!(entry.node.value, Value::Table(_)) {
        e.push(
            None,
            None,
            entry.line,
            format!(
                "`records` is {}; write a table with `fields` (and `at`, `name`, `plural`, \
                 `prose`, `absent`)",
                entry.node.value
            ),
        );
        return None;
    }
    let at = match entry.node.get("at") {
        None => Vec::new(),
        Some(at) => match at.node.as_text() {
            Some("") => Vec::new(),
            Some(text) => match JsonPath::parse(text) {
                Ok(path) if path.steps.iter().all(|s| matches!(s, Step::Key(_))) => path
                    .steps
                    .into_iter()
                    .filter_map(|s| match s {
                        Step::Key(k) => Some(k),
                        _ => None,
                    })
                    .collect(),
                Ok(_) => {
                    e.push(
                        None,
                        Some("at"),
                        at.line,
                        format!(
                            "`{text}`: `at` is the keys leading to the records (`data.issues`), \
                             with no `?` or `[]`"
                        ),
                    );
                    Vec::new()
                }
                Err(msg) => {
                    e.push(None, Some("at"), at.line, msg);
                    Vec::new()
                }
            },
            None => {
                e.push(
                    None,
                    Some("at"),
                    at.line,
                    format!(
                        "`at` is {}; write the keys leading to the records as text (`items`, \
                         `data.issues`), or leave it out for the result itself",
                        at.node.value
                    ),
                );
                Vec::new()
            }
        },
    };
    // `one = true`: the result (at `at`) is one record, not a list; either reads the other as
    // an error, as serde reads a `Vec<Issue>` or an `Issue`.
    let one = match entry.node.get("one") {
        None => false,
        Some(one) => match one.node.value {
            Value::Bool(b) => b,
            _ => {
                e.push(
                    None,
                    Some("one"),
                    one.line,
                    format!(
                        "`one` is {}; write `one = true` when the result is one record (an \
                         object), or leave it out for a list of records",
                        one.node.value
                    ),
                );
                false
            }
        },
    };
    let schema = entry
        .node
        .get("schema")
        .and_then(|s| match s.node.as_text() {
            Some(path) if !path.trim().is_empty() => Some(path.to_owned()),
            _ => {
                e.push(
                None,
                Some("schema"),
                s.line,
                format!(
                    "`schema` is {}; write the path of a JSON Schema file of the tool's result, \
                     relative to the configuration file",
                    describe(&s.node)
                ),
            );
                None
            }
        });
    let record = record(&entry.node, "", true, legends, &mut e);
    (e.list.len() == before).then(|| ConfiguredRecords {
        tool: tool.to_owned(),
        schema,
        at,
        one,
        record,
    })
}

/// One record table (the top one, or a `nested` one), its outputs at `prefix`.
fn record(
    table: &Node,
    prefix: &str,
    top: bool,
    legends: &BTreeMap<String, ConfiguredLegend>,
    e: &mut Errors<'_>,
) -> RecordSpec {
    let output = |name: &str| format!("{prefix}{name}");
    let here = (!prefix.is_empty()).then(|| prefix.trim_end_matches('.').to_owned());
    for entry in table.entries() {
        let known = RECORD_KEYS.contains(&entry.key.as_str())
            && (top || !matches!(entry.key.as_str(), "at" | "one" | "schema"));
        if !known {
            let keys: Vec<&str> = RECORD_KEYS
                .iter()
                .copied()
                .filter(|k| top || !matches!(*k, "at" | "one" | "schema"))
                .collect();
            e.push(
                here.as_deref(),
                Some(&entry.key),
                entry.line,
                format!(
                    "unknown records key `{}`; expected one of: {}",
                    entry.key,
                    keys.join(", ")
                ),
            );
        }
    }
    let text = |key: &str, e: &mut Errors<'_>| -> Option<(String, Option<usize>)> {
        let entry = table.get(key)?;
        match entry.node.as_text() {
            Some(text) => Some((text.to_owned(), entry.line)),
            None => {
                e.push(
                    here.as_deref(),
                    Some(key),
                    entry.line,
                    format!("`{key}` is {}; write text", entry.node.value),
                );
                None
            }
        }
    };
    let mut names = [("name", None), ("plural", None)];
    for (key, value) in &mut names {
        if let Some((text, line)) = text(key, e) {
            match rules::record_name(key, &text) {
                Ok(()) => *value = Some(text),
                Err(msg) => e.push(here.as_deref(), Some(key), line, msg),
            }
        }
    }
    let name = names[0].1.take().unwrap_or_else(|| "record".to_owned());
    let plural = names[1]
        .1
        .take()
        .unwrap_or_else(|| crate::text::plural_of(&name));
    let absent = text("absent", e).and_then(|(word, line)| {
        rules::absent_word(&word)
            .map_err(|msg| e.push(here.as_deref(), Some("absent"), line, msg))
            .ok()
            .map(|()| word)
    });

    let mut outputs: Vec<Output> = Vec::new();
    let mut decided: Vec<rules::Output<'_, At<'_>>> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    match table.get("fields") {
        None => e.push(
            here.as_deref(),
            Some("fields"),
            table.line,
            "no `fields`: list the outputs, each `{ from = \"key\" }` with its decisions \
             (everything not listed is left out)"
                .to_owned(),
        ),
        Some(fields) => match &fields.node.value {
            Value::List(items) => {
                for item in items {
                    if let Some((decisions, field)) =
                        field(item, outputs.len(), prefix, legends, e, &mut skipped)
                    {
                        decided.push(decisions);
                        outputs.push(field);
                    }
                }
                rules::check_record(rules::Syntax::Config, &decided, &mut |at, msg| {
                    e.push(
                        Some(&output(&outputs[at.index].name)),
                        Some(at.key),
                        at.line,
                        msg,
                    )
                });
                if items.is_empty() || (outputs.is_empty() && !skipped.is_empty()) {
                    e.push(
                        here.as_deref(),
                        Some("fields"),
                        fields.line,
                        rules::all_skipped(rules::Syntax::Config).to_owned(),
                    );
                }
            }
            other => e.push(
                here.as_deref(),
                Some("fields"),
                fields.line,
                format!(
                    "`fields` is {other}; write a list of outputs, each `{{ from = \"key\" }}` \
                     with its decisions"
                ),
            ),
        },
    }
    let prose = text("prose", e).and_then(|(template, line)| {
        prose(&template, &outputs, &skipped)
            .map_err(|mistakes| {
                for msg in mistakes {
                    e.push(here.as_deref(), Some("prose"), line, msg);
                }
            })
            .ok()
    });
    RecordSpec {
        name,
        plural,
        prose,
        absent,
        outputs,
        skipped,
    }
}

/// One output entry; `None` when it is a skip (recorded in `skipped`) or has mistakes.
fn field<'a>(
    item: &'a Node,
    index: usize,
    prefix: &str,
    legends: &BTreeMap<String, ConfiguredLegend>,
    e: &mut Errors<'_>,
    skipped: &mut Vec<String>,
) -> Option<(rules::Output<'a, At<'a>>, Output)> {
    let before = e.list.len();
    if !matches!(item.value, Value::Table(_)) {
        e.push(
            (!prefix.is_empty()).then(|| prefix.trim_end_matches('.')),
            Some("fields"),
            item.line,
            format!(
                "an output is a table such as `{{ from = \"title\" }}`; this is {}",
                item.value
            ),
        );
        return None;
    }
    let from_entry = item.get("from");
    let path = match from_entry.map(|f| (f, f.node.as_text())) {
        None => None,
        Some((f, Some(text))) => match JsonPath::parse(text) {
            Ok(path) => Some(path),
            Err(msg) => {
                let named = item
                    .get("rename")
                    .and_then(|r| r.node.as_text())
                    .unwrap_or(text);
                let output = format!("{prefix}{named}");
                e.push(
                    (!named.trim().is_empty()).then_some(output.as_str()),
                    Some("from"),
                    f.line,
                    msg,
                );
                None
            }
        },
        Some((f, None)) => {
            e.push(
                None,
                Some("from"),
                f.line,
                format!(
                    "`from` is {}; write the path to the value as text",
                    f.node.value
                ),
            );
            None
        }
    };
    let rename = item.get("rename").and_then(|r| match r.node.as_text() {
        Some(text) => Some((text.to_owned(), r.line)),
        None => {
            e.push(
                None,
                Some("rename"),
                r.line,
                format!(
                    "`rename` is {}; write the output name as text",
                    r.node.value
                ),
            );
            None
        }
    });
    let name = rename
        .as_ref()
        .map(|(n, _)| n.clone())
        .or_else(|| path.as_ref().map(|p| p.root().to_owned()))
        .unwrap_or_default();
    let shown = format!("{prefix}{name}");
    let shown = if name.is_empty() {
        None
    } else {
        Some(shown.as_str())
    };
    if from_entry.is_none() {
        e.push(
            shown,
            Some("from"),
            item.line,
            "no `from`: every output names the path to its value (`from = \"user.login\"`)"
                .to_owned(),
        );
    }
    for entry in item.entries() {
        if !FIELD_KEYS.contains(&entry.key.as_str()) {
            e.push(
                shown,
                Some(&entry.key),
                entry.line,
                unknown_field_key(&entry.key),
            );
        }
    }
    // `skip` names a key left out, and nothing else.
    if let Some(skip) = item.get("skip") {
        if skip.node.value != Value::Bool(true) {
            e.push(
                shown,
                Some("skip"),
                skip.line,
                format!("`skip` is {}; write `skip = true`", skip.node.value),
            );
        }
        decisions(item, index, &name, path.as_ref(), None, shown, e);
        if let Some(path) = &path {
            if path.steps.len() == 1 {
                skipped.push(path.text.clone());
            } else {
                e.push(
                    shown,
                    Some("from"),
                    from_entry.and_then(|f| f.line),
                    format!(
                        "`{}`: `skip` names a key of the record itself (`node_id`); keys inside \
                         a value are left out by not being listed",
                        path.text
                    ),
                );
            }
        }
        return None;
    }
    if let Some(show) = item.get("show")
        && show.node.value != Value::Bool(true)
    {
        e.push(
            shown,
            Some("show"),
            show.line,
            format!(
                "`show` is {}; write `show = true`, or leave it out",
                show.node.value
            ),
        );
    }
    let transforms: Vec<&Entry> = rules::TRANSFORMS
        .iter()
        .filter_map(|key| item.get(key))
        .collect();
    let kind = match transforms.first() {
        None => Some(OutputKind::Show),
        Some(t) => transform(t, path.as_ref(), prefix, shown, legends, e),
    };
    let rank = item.get("rank").and_then(|r| rank(r, shown, e));
    let absent = item.get("absent").and_then(|a| match a.node.as_text() {
        Some(word) => Some(word.to_owned()),
        None => {
            e.push(
                shown,
                Some("absent"),
                a.line,
                format!("`absent` is {}; write the word text shows", a.node.value),
            );
            None
        }
    });
    let empty_is_absent = match item.get("empty_is_absent") {
        None => false,
        Some(entry) => match entry.node.value {
            Value::Bool(b) => b,
            ref other => {
                e.push(
                    shown,
                    Some("empty_is_absent"),
                    entry.line,
                    format!("`empty_is_absent` is {other}; write `true` or `false`"),
                );
                false
            }
        },
    };
    let fold = rank.and_then(|r| r.fold).and(item.get("rank")).map(|r| At {
        index,
        key: "rank",
        line: r.line,
    });
    let decisions = decisions(item, index, &name, path.as_ref(), fold, shown, e);
    if e.list.len() != before {
        return None;
    }
    Some((
        decisions,
        Output {
            name,
            from: path?,
            kind: kind?,
            rank,
            absent,
            empty_is_absent,
            line: item.line,
        },
    ))
}

/// Where a decision is written: the output (its index among the record's outputs), the key,
/// the line.
#[derive(Clone, Copy, Debug)]
struct At<'a> {
    index: usize,
    key: &'a str,
    line: Option<usize>,
}

/// One output's decisions as the rulebook reads them, checked by it.
fn decisions<'a>(
    item: &'a Node,
    index: usize,
    name: &str,
    path: Option<&JsonPath>,
    fold: Option<At<'a>>,
    shown: Option<&str>,
    e: &mut Errors<'_>,
) -> rules::Output<'a, At<'a>> {
    let at = |entry: &'a Entry| At {
        index,
        key: &entry.key,
        line: entry.line,
    };
    let text = |key: &str| {
        let entry = item.get(key)?;
        Some((entry.node.as_text()?.to_owned(), at(entry)))
    };
    let from = item.get("from");
    let output = rules::Output {
        name: name.to_owned(),
        source: path.map(|p| p.text.clone()).unwrap_or_default(),
        at: At {
            index,
            key: if item.get("rename").is_some() {
                "rename"
            } else {
                "from"
            },
            line: item.line,
        },
        keys: item
            .entries()
            .iter()
            .filter(|x| x.key != "from" && FIELD_KEYS.contains(&x.key.as_str()))
            .map(|x| (x.key.as_str(), at(x)))
            .collect(),
        rename: text("rename"),
        absent: text("absent"),
        fold,
        // Every output names a path (no `from` is a mistake of its own); one that could not be
        // read is `Unread`, and the rules say nothing of it.
        path: match path {
            None => rules::Path::Unread,
            Some(path) => rules::Path::Read {
                each: path.through_each().then(|| At {
                    index,
                    key: "from",
                    line: from.and_then(|f| f.line),
                }),
            },
        },
    };
    rules::check_output(rules::Syntax::Config, &output, &mut |at, msg| {
        e.push(shown, Some(at.key), at.line, msg)
    });
    output
}

/// The message for a key an output does not take, with a hint for the likely intent.
fn unknown_field_key(key: &str) -> String {
    let hint = match key {
        "hide" | "hidden" | "omit" | "exclude" => {
            " (to leave a field out, leave it out of `fields`, or write `skip = true`)"
        }
        "include" | "visible" | "keep" => " (every listed output is shown)",
        "alias" | "as" | "name" => " (to change the output name, write `rename = \"...\"`)",
        "max_tokens" | "cap" => " (write `untrusted = { max_tokens = N }`)",
        "sort" | "order" | "order_by" => " (write `rank = \"asc\"` or `rank = \"desc\"`)",
        "short" | "short_id" => " (write `id = \"short\"`)",
        "path" | "source" | "field" | "key" => " (the path to the value is `from`)",
        "resolve" => " (a resolver is Rust code: shape the type with the derive to resolve ids)",
        _ => "",
    };
    format!(
        "unknown field key `{key}`{hint}; expected one of: {}",
        FIELD_KEYS.join(", ")
    )
}

/// The output kind of the field's (first) transform.
fn transform(
    t: &Entry,
    path: Option<&JsonPath>,
    prefix: &str,
    shown: Option<&str>,
    legends: &BTreeMap<String, ConfiguredLegend>,
    e: &mut Errors<'_>,
) -> Option<OutputKind> {
    let bad = |e: &mut Errors<'_>, want: &str| {
        e.push(
            shown,
            Some(&t.key),
            t.line,
            format!("`{}` is {}; write {want}", t.key, t.node.value),
        );
        None
    };
    match t.key.as_str() {
        "id" => {
            let short = match &t.node.value {
                Value::Bool(true) => false,
                Value::Text(s) if s == "short" => true,
                _ => {
                    return bad(
                        e,
                        "`id = true`, or `id = \"short\"` for prefix and first UUID group",
                    );
                }
            };
            Some(OutputKind::Id { short })
        }
        "date" => match &t.node.value {
            Value::Bool(true) => Some(OutputKind::Date(DateFrom::Iso(DayOf::Utc))),
            Value::Text(s) if s == "epoch_seconds" => {
                Some(OutputKind::Date(DateFrom::Epoch(EpochUnit::Seconds)))
            }
            Value::Text(s) if s == "epoch_millis" => {
                Some(OutputKind::Date(DateFrom::Epoch(EpochUnit::Millis)))
            }
            // `date = { day = "as_written" }`: which day a timestamp with an offset is on.
            Value::Table(entries) => {
                let mut day = Some(DayOf::Utc);
                for entry in entries {
                    match (entry.key.as_str(), &entry.node.value) {
                        ("day", Value::Text(s)) if s == "utc" => day = day.and(Some(DayOf::Utc)),
                        ("day", Value::Text(s)) if s == "as_written" => {
                            day = day.and(Some(DayOf::AsWritten));
                        }
                        ("day", _) => {
                            day = None;
                            e.push(
                                shown,
                                Some("day"),
                                entry.line,
                                format!(
                                    "`day` is {}; write `day = \"utc\"` (the default: the UTC \
                                     day of the instant) or `day = \"as_written\"` (the day in \
                                     the timestamp's own offset)",
                                    describe(&entry.node)
                                ),
                            );
                        }
                        (key, _) => {
                            day = None;
                            e.push(
                                shown,
                                Some(key),
                                entry.line,
                                format!("unknown `date` key `{key}`; expected one of: day"),
                            );
                        }
                    }
                }
                day.map(|day| OutputKind::Date(DateFrom::Iso(day)))
            }
            _ => bad(
                e,
                "`date = true` for ISO-8601 text (its UTC day; `date = { day = \"as_written\" }` \
                 for the day in its own offset), or `date = \"epoch_seconds\"` / \
                 `\"epoch_millis\"` for a number since 1970",
            ),
        },
        "untrusted" => match &t.node.value {
            Value::Bool(true) => Some(OutputKind::Untrusted { max_tokens: None }),
            Value::Table(entries) => {
                let mut max_tokens = None;
                let mut ok = true;
                for entry in entries {
                    match (entry.key.as_str(), &entry.node.value) {
                        ("max_tokens", Value::Integer(0)) => {
                            ok = false;
                            e.push(
                                shown,
                                Some("max_tokens"),
                                entry.line,
                                "`max_tokens` must be at least 1: a cap of 0 shows nothing; \
                                 leave the field out of `fields` to leave it out"
                                    .to_owned(),
                            );
                        }
                        ("max_tokens", Value::Integer(n)) => match u32::try_from(*n) {
                            Ok(n) => max_tokens = Some(n),
                            Err(_) => {
                                ok = false;
                                e.push(
                                    shown,
                                    Some("max_tokens"),
                                    entry.line,
                                    "`max_tokens` must be a whole number of tokens up to \
                                     4294967295"
                                        .to_owned(),
                                );
                            }
                        },
                        ("max_tokens", other) => {
                            ok = false;
                            e.push(
                                shown,
                                Some("max_tokens"),
                                entry.line,
                                format!("`max_tokens` is {other}; write a whole number of tokens"),
                            );
                        }
                        (key, _) => {
                            ok = false;
                            e.push(
                                shown,
                                Some(key),
                                entry.line,
                                format!(
                                    "unknown `untrusted` key `{key}`; expected one of: max_tokens"
                                ),
                            );
                        }
                    }
                }
                ok.then_some(OutputKind::Untrusted { max_tokens })
            }
            _ => bad(
                e,
                "`untrusted = true`, or `untrusted = { max_tokens = N }` to cap it",
            ),
        },
        "legend" => match t.node.as_text() {
            Some(name) if legends.contains_key(name) => Some(OutputKind::Legend(name.to_owned())),
            Some(name) => {
                let defined: Vec<&str> = legends.keys().map(String::as_str).collect();
                e.push(
                    shown,
                    Some("legend"),
                    t.line,
                    format!(
                        "no legend `{name}` in `[legends]`; {}",
                        if defined.is_empty() {
                            "none is defined: add `[legends.<name>]` with code = \"word\" lines"
                                .to_owned()
                        } else {
                            format!("defined: {}", defined.join(", "))
                        }
                    ),
                );
                None
            }
            None => bad(e, "the name of a legend in `[legends]`"),
        },
        "nested" => {
            if !matches!(t.node.value, Value::Table(_)) {
                return bad(e, "a table with the nested records' `fields`");
            }
            if let Some(path) = path {
                let each = path.steps.iter().position(|s| *s == Step::Each);
                if each.is_some_and(|i| i + 1 != path.steps.len()) {
                    e.push(
                        shown,
                        Some("from"),
                        t.line,
                        format!(
                            "`{}`: a `nested` path leads to the records: one (`milestone`, \
                             `milestone?`), or a list ending in `[]` (`comments[]`)",
                            path.text
                        ),
                    );
                    return None;
                }
            }
            let inner = format!("{}.", shown.unwrap_or(prefix.trim_end_matches('.')));
            Some(OutputKind::Nested(Box::new(record(
                &t.node, &inner, false, legends, e,
            ))))
        }
        _ => Some(OutputKind::Show),
    }
}

/// The rank key of an output.
fn rank(r: &Entry, shown: Option<&str>, e: &mut Errors<'_>) -> Option<RankSpec> {
    let order = |text: &str| match text {
        "asc" => Some(Order::Asc),
        "desc" => Some(Order::Desc),
        _ => None,
    };
    let want = "`rank = \"asc\"` or `\"desc\"`, or `rank = { order = \"desc\", fold = \"max\" }` \
                for a path through `[]` (fold: max, min, sum, count)";
    let spec = match &r.node.value {
        Value::Text(text) => order(text).map(|order| RankSpec { order, fold: None }),
        Value::Table(entries) => {
            let mut problems = Vec::new();
            for x in entries {
                if !matches!(x.key.as_str(), "order" | "fold") {
                    problems.push(format!("an unknown key `{}`", x.key));
                }
            }
            let o = r
                .node
                .get("order")
                .and_then(|o| o.node.as_text())
                .and_then(order);
            if o.is_none() {
                problems.push(match r.node.get("order") {
                    None => "no `order`".to_owned(),
                    Some(o) => format!("`order` {}", describe(&o.node)),
                });
            }
            let fold = match r.node.get("fold") {
                None => None,
                Some(f) => match f.node.as_text() {
                    Some("max") => Some(Fold::Max),
                    Some("min") => Some(Fold::Min),
                    Some("sum") => Some(Fold::Sum),
                    Some("count") => Some(Fold::Count),
                    _ => {
                        problems.push(format!("`fold` {}", describe(&f.node)));
                        None
                    }
                },
            };
            if !problems.is_empty() {
                e.push(
                    shown,
                    Some("rank"),
                    r.line,
                    format!("`rank` has {}; write {want}", problems.join(", ")),
                );
                return None;
            }
            o.map(|order| RankSpec { order, fold })
        }
        _ => None,
    };
    let Some(spec) = spec else {
        e.push(
            shown,
            Some("rank"),
            r.line,
            format!("`rank` is {}; write {want}", describe(&r.node)),
        );
        return None;
    };
    Some(spec)
}

/// A value as an error quotes it: text in quotes, else its kind.
fn describe(node: &Node) -> String {
    match &node.value {
        Value::Text(text) => format!("\"{text}\""),
        other => other.to_string(),
    }
}

/// The prose template as segments over the outputs, or every mistake in it.
fn prose(
    template: &str,
    outputs: &[Output],
    skipped: &[String],
) -> Result<Vec<Segment<Owned>>, Vec<String>> {
    let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
    let segments = rules::prose(template, &names, |name| skipped.iter().any(|s| s == name))?;
    Ok(segments
        .into_iter()
        .map(|segment| match segment {
            rules::Segment::Text(text) => Segment::Text(text),
            rules::Segment::Field(index) => Segment::Field(index),
        })
        .collect())
}

/// Checks every path of `records` against `schema`, a JSON Schema of the tool's whole result
/// (its `outputSchema`, or the file `schema` names): `at` leads to the records (a list of
/// them, or one), and each output's path must be one the schema has. Local `$ref`s
/// (`#/$defs/…`, `#/definitions/…`), `anyOf` / `oneOf` / `allOf` and nullable types are
/// followed; a part the schema leaves open (`{}`, `true`, additional properties) accepts any
/// path below it. Returns every path the schema lacks.
///
/// ```
/// use toolshape::{config::ShapeConfig, __seams::config::{check_schema, records}};
///
/// let config = ShapeConfig::from_toml_str(r#"
///     [tools.list_issues.records]
///     at = "items"
///     fields = [{ from = "number", id = true }, { from = "user.logn" }, { from = "labels[].name" }]
/// "#).unwrap();
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": { "items": { "type": "array", "items": { "$ref": "#/$defs/issue" } } },
///     "$defs": { "issue": { "type": "object", "properties": {
///         "number": { "type": "integer" },
///         "user": { "type": "object", "properties": { "login": { "type": "string" } } },
///         "labels": { "type": "array", "items": { "type": "object",
///             "properties": { "name": { "type": "string" } } } }
///     } } }
/// });
/// let errors = check_schema(records(&config, "list_issues").unwrap(), &schema);
/// assert_eq!(errors.len(), 1);
/// assert_eq!(
///     errors[0].to_string(),
///     "tools.list_issues.records, output `user`, key `from` (line 4): `user.logn`: the \
///      schema has no `logn` under `user`; it has: login"
/// );
/// ```
pub fn check_schema(records: &ConfiguredRecords, schema: &serde_json::Value) -> Vec<RecordsError> {
    let mut errors = Vec::new();
    let place = format!("tools.{}.records", records.tool);
    let walker = SchemaWalk { root: schema };
    let mut at = schema;
    for (i, key) in records.at.iter().enumerate() {
        match walker.step_key(at, key) {
            Ok(Some(next)) => at = next,
            Ok(None) => return errors,
            Err(has) => {
                let under = if i == 0 {
                    "the result".to_owned()
                } else {
                    format!("`{}`", records.at[..i].join("."))
                };
                errors.push(RecordsError {
                    place,
                    output: None,
                    key: Some("at".to_owned()),
                    line: None,
                    message: format!(
                        "`{}`: the schema has no `{key}` under {under}{}",
                        records.at.join("."),
                        has_list(&has)
                    ),
                });
                return errors;
            }
        }
    }
    // A list of records, or one (`one = true`).
    let record = match (records.one, walker.step_each(at)) {
        (true, _) | (false, Ok(None)) => at,
        (false, Ok(Some(items))) => items,
        (false, Err(kinds)) => {
            let path = if records.at.is_empty() {
                "the result".to_owned()
            } else {
                format!("`{}`", records.at.join("."))
            };
            errors.push(RecordsError {
                place: place.clone(),
                output: None,
                key: (!records.at.is_empty()).then(|| "at".to_owned()),
                line: None,
                message: format!(
                    "{path} is {kinds} in the schema, where a list of records is read; write \
                     `one = true` if the tool answers one record"
                ),
            });
            at
        }
    };
    walker.record(&records.record, record, "", &place, &mut errors);
    errors
}

fn has_list(has: &[String]) -> String {
    if has.is_empty() {
        String::new()
    } else {
        format!("; it has: {}", has.join(", "))
    }
}

/// Walks a JSON Schema along configured paths.
struct SchemaWalk<'s> {
    root: &'s serde_json::Value,
}

impl<'s> SchemaWalk<'s> {
    /// `schema` with local `$ref`s followed (a bounded number of times).
    fn resolve(&self, mut schema: &'s serde_json::Value) -> &'s serde_json::Value {
        for _ in 0..32 {
            let Some(target) = schema.get("$ref").and_then(|r| r.as_str()) else {
                return schema;
            };
            let Some(pointer) = target.strip_prefix('#') else {
                return schema;
            };
            match self.root.pointer(pointer) {
                Some(next) => schema = next,
                None => return schema,
            }
        }
        schema
    }

    /// The alternatives a schema allows: itself, or its `anyOf` / `oneOf` / `allOf` branches.
    fn branches(&self, schema: &'s serde_json::Value) -> Vec<&'s serde_json::Value> {
        let schema = self.resolve(schema);
        let mut out = Vec::new();
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = schema.get(key).and_then(|v| v.as_array()) {
                for branch in list {
                    out.extend(self.branches(branch));
                }
            }
        }
        if out.is_empty() || schema.get("properties").is_some() || schema.get("items").is_some() {
            out.push(schema);
        }
        out
    }

    /// Whether a schema says nothing of what is below it.
    fn open(schema: &serde_json::Value) -> bool {
        match schema {
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::Object(map) => ![
                "type",
                "properties",
                "items",
                "prefixItems",
                "enum",
                "const",
            ]
            .iter()
            .any(|k| map.contains_key(*k)),
            _ => true,
        }
    }

    /// The schema under `key`: `Ok(None)` where the schema leaves it open, `Err` with the
    /// keys it has where it has no such key.
    fn step_key(
        &self,
        schema: &'s serde_json::Value,
        key: &str,
    ) -> Result<Option<&'s serde_json::Value>, Vec<String>> {
        let mut has = Vec::new();
        for branch in self.branches(schema) {
            if Self::open(branch) {
                return Ok(None);
            }
            if let Some(props) = branch.get("properties").and_then(|p| p.as_object()) {
                if let Some(next) = props.get(key) {
                    return Ok(Some(next));
                }
                has.extend(props.keys().cloned());
            }
            let extra = branch.get("additionalProperties");
            if branch.get("patternProperties").is_some()
                || extra.is_some_and(|x| x != &serde_json::Value::Bool(false))
                || (extra.is_none()
                    && branch.get("properties").is_none()
                    && branch.get("type").is_some_and(|t| t == "object"))
            {
                return Ok(None);
            }
        }
        has.sort();
        has.dedup();
        Err(has)
    }

    /// The schema of each item: `Ok(None)` where open, `Err` where the value is no list.
    fn step_each(
        &self,
        schema: &'s serde_json::Value,
    ) -> Result<Option<&'s serde_json::Value>, String> {
        let mut kinds = Vec::new();
        for branch in self.branches(schema) {
            if Self::open(branch) {
                return Ok(None);
            }
            if let Some(items) = branch.get("items") {
                return Ok(Some(items));
            }
            if branch.get("type").is_some_and(|t| {
                t == "array" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "array"))
            }) {
                return Ok(None);
            }
            if let Some(t) = branch.get("type") {
                kinds.push(match t {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
        Err(if kinds.is_empty() {
            "not a list".to_owned()
        } else {
            format!("{}, not a list", kinds.join(" or "))
        })
    }

    fn record(
        &self,
        spec: &RecordSpec,
        schema: &'s serde_json::Value,
        prefix: &str,
        place: &str,
        errors: &mut Vec<RecordsError>,
    ) {
        for output in &spec.outputs {
            let mut at = Some(schema);
            let mut walked = Vec::new();
            for step in &output.from.steps {
                let Some(here) = at else { break };
                let result = match step {
                    Step::Key(key) => self.step_key(here, key).map_err(|has| {
                        let under = if walked.is_empty() {
                            "the record".to_owned()
                        } else {
                            format!("`{}`", walked.join(""))
                        };
                        format!("the schema has no `{key}` under {under}{}", has_list(&has))
                    }),
                    Step::Opt => Ok(Some(here)),
                    Step::Each => self.step_each(here).map_err(|what| {
                        format!(
                            "`{}` is {what} in the schema: `[]` goes through a list",
                            walked.join("")
                        )
                    }),
                };
                match result {
                    Ok(next) => at = next,
                    Err(message) => {
                        errors.push(RecordsError {
                            place: place.to_owned(),
                            output: Some(format!("{prefix}{}", output.name)),
                            key: Some("from".to_owned()),
                            line: output.line,
                            message: format!("`{}`: {message}", output.from.text),
                        });
                        at = None;
                        break;
                    }
                }
                walked.push(match step {
                    Step::Key(key) if walked.is_empty() => key.clone(),
                    Step::Key(key) => format!(".{key}"),
                    Step::Opt => "?".to_owned(),
                    Step::Each => "[]".to_owned(),
                });
            }
            if let (OutputKind::Nested(inner), Some(at)) = (&output.kind, at) {
                self.record(
                    inner,
                    at,
                    &format!("{prefix}{}.", output.name),
                    place,
                    errors,
                );
            }
        }
    }
}
