//! What the harness costs a model on answers nobody described (issue 48's benchmark): recorded
//! real payloads (`tests/data/payloads/`, `examples/data/`, `tests/data/bodies/`) answered by a
//! server that knows nothing of shaping, read through `mcp::Harness` with no projection, as
//! two clients' models read them: Claude Code (`structuredContent`) and a text-only client
//! (Open WebUI's, the text block). Every answer is walked to its end through `next`.
//!
//! Per answer and client: the raw tokens (what the model would read from the upstream
//! itself: the structured JSON where the client reads it and the server sends it, else the
//! text), the first page's, all pages' (read whole) and read whole ÷ raw; o200k counts
//! everything. Every walk is checked against the upstream's answer parsed here, not by the
//! code under test: for a JSON answer every scalar value the upstream sent is in what the
//! model read (`lost` counts those that are not, and for a list of records read in the
//! structured channel each record once by its id); for a text answer the lines are all there
//! (in the structured channel the text rebuilt byte for byte); the count the first page
//! states is the true one (a naive count: `str::lines`, the list's length); no page over the
//! budget (2,000 tokens). Then `open_result`'s `query`: six questions a reader asks of the
//! git log and the build log, each answered by a line on the first page (`questions: N of M`).
//!
//! `cargo run --release --example savings --all-features` (about a minute); `-- --short`
//! (CI) leaves out the largest answers. The last line:
//! `savings: tools=N worst_large=X.XX small_over_tokens=N json_lists=X.XX text_whole=X.XX lost=N false_counts=N over_budget=N`
//! (read-whole ratios: the worst over answers of 100 raw tokens or more, over JSON record
//! lists and over text; the small answers more than 8 tokens over raw; then the checks).

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use serde_json::{Value, json};
use shape_examples::canned::{Answer, Canned};
use shape_examples::read::{joined, text, text_lines};
use shape_examples::thousands;
use toolshape::config::ShapeConfig;
use toolshape::mcp;
use toolshape::tokens::{Bpe, Tokenizer};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Client = rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>;

/// The budget of a page, set in the harness's configuration (no projection is).
const BUDGET: usize = 2_000;

/// What a model reads of `answer` without the harness: the structured JSON where it reads
/// that channel and the server sent it, else the text.
fn raw_of(answer: &Answer) -> String {
    match answer {
        Answer::Structured(v) => v.to_string(),
        Answer::Text(t) => t.clone(),
        Answer::Result(r) => shape_examples::read::text(r),
    }
}

/// The answer as JSON, when it is JSON (structured, or text that parses).
fn json_of(answer: &Answer) -> Option<Value> {
    match answer {
        Answer::Structured(v) => Some(v.clone()),
        Answer::Text(t) => serde_json::from_str(t.trim()).ok(),
        Answer::Result(r) => r.structured_content.clone(),
    }
}

/// One answer of the benchmark.
struct Case {
    tool: &'static str,
    what: &'static str,
    answer: Answer,
    /// For a list of records: where the list is (`""` for the top level) and the key that
    /// names a record.
    list: Option<(&'static str, &'static str)>,
    /// Left out of the short run (CI).
    long: bool,
}

fn read(path: &str) -> Result<String, Error> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}").into())
}

fn json_file(path: &str) -> Result<Value, Error> {
    Ok(serde_json::from_str(&read(path)?)?)
}

fn cases() -> Result<Vec<Case>, Error> {
    let case = |tool, what, answer, list, long| Case {
        tool,
        what,
        answer,
        list,
        long,
    };
    let log: String = read("tests/data/payloads/build_log.txt")?;
    Ok(vec![
        case(
            "echo",
            "an echo",
            Answer::Text("Echo: hello".into()),
            None,
            false,
        ),
        case(
            "get_current_time",
            "a small lookup (current time)",
            Answer::Structured(
                json!({"timezone": "Europe/Paris", "datetime": "2026-12-06T21:40:00+01:00", "day_of_week": "Sunday", "is_dst": false}),
            ),
            None,
            false,
        ),
        case(
            "list_tables",
            "a table list (JSON text)",
            Answer::Text(r#"["users", "orders", "items"]"#.into()),
            None,
            false,
        ),
        case(
            "read_query",
            "two rows",
            Answer::Structured(json!([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}])),
            Some(("", "id")),
            false,
        ),
        case(
            "list_issues",
            "GitHub REST issues (60)",
            Answer::Structured(json_file("examples/data/github_issues.json")?),
            Some(("", "number")),
            false,
        ),
        case(
            "jira_search",
            "a Jira search (40 issues)",
            Answer::Structured(json_file("examples/data/jira_search.json")?),
            Some(("issues", "key")),
            false,
        ),
        case(
            "jsonapi_articles",
            "a JSON:API document",
            Answer::Structured(json_file("tests/data/payloads/jsonapi_articles.json")?),
            Some(("data", "id")),
            false,
        ),
        case(
            "npm_view",
            "npm registry metadata (express)",
            Answer::Text(read("tests/data/payloads/npm_view_express.json")?),
            None,
            false,
        ),
        case(
            "fetch_html",
            "an HTML page",
            Answer::Text(read("tests/data/payloads/rustdoc_what_is_rustdoc.html")?),
            None,
            false,
        ),
        case(
            "build_log",
            "a build and test log",
            Answer::Text(log),
            None,
            false,
        ),
        case(
            "read_file",
            "a Markdown file",
            Answer::Text(read("tests/data/bodies/changelog.md")?),
            None,
            false,
        ),
        case(
            "read_source",
            "a source file",
            Answer::Text(read("tests/data/bodies/page.rs.txt")?),
            None,
            true,
        ),
        case(
            "git_log",
            "git log --stat (200 commits)",
            Answer::Text(read("tests/data/payloads/git_log_stat.txt")?),
            None,
            true,
        ),
    ])
}

async fn connect(server: Canned, client: &str) -> Result<Client, Error> {
    let config = ShapeConfig::from_toml_str(&format!("[defaults]\nbudget = {BUDGET}\n"))?;
    let harness = mcp::Harness::new(server, config)?;
    let (client_end, server_end) = tokio::io::duplex(1 << 24);
    tokio::spawn(async move {
        if let Ok(server) = harness.serve(server_end).await {
            let _ = server.waiting().await;
        }
    });
    Ok(ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(client, "1.0"),
    )
    .serve(client_end)
    .await?)
}

/// What the client's model reads of `page`.
fn read_by(page: &CallToolResult, structured: bool) -> String {
    match (&page.structured_content, structured, page.is_error) {
        (Some(s), true, Some(false) | None) => s.to_string(),
        _ => text(page),
    }
}

/// The cursor a model reads for the next page.
fn next_of(page: &CallToolResult, structured: bool) -> Option<String> {
    if structured && let Some(s) = &page.structured_content {
        return s["next"].as_str().map(str::to_owned);
    }
    text(page)
        .lines()
        .find_map(|l| l.strip_prefix("next: same call with cursor="))
        .map(str::to_owned)
}

/// The number the first page states as the whole's (`20 of 60 records`, `60 records`,
/// `lines 1–300 of 3,409`), read from the summary.
fn stated_total(page: &CallToolResult, structured: bool) -> Option<u64> {
    let summary = summary_of(page, structured);
    let head = summary.split(';').next()?;
    let number = |s: &str| -> Option<u64> {
        let digits: String = s
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    if let Some(at) = head.rfind(" of ") {
        return number(&head[at + 4..]);
    }
    let head = head.split_once(": ").map_or(head, |(_, rest)| rest);
    number(head.trim_start())
}

/// The records of a structured page's `data` (objects, or rows under `fields`).
fn records(envelope: &Value) -> Vec<serde_json::Map<String, Value>> {
    let data = envelope["data"].as_array().cloned().unwrap_or_default();
    match envelope["fields"].as_array() {
        None => data
            .into_iter()
            .filter_map(|r| r.as_object().cloned())
            .collect(),
        Some(fields) => data
            .iter()
            .filter_map(Value::as_array)
            .map(|row| {
                fields
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .zip(row.iter().cloned())
                    .collect()
            })
            .collect(),
    }
}

/// Every scalar value of `value`: strings by line (a model reads a long text's lines, the
/// JSON channel escaped), numbers and booleans as written.
fn scalars(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
        Value::Object(map) => map.values().for_each(|v| scalars(v, out)),
        Value::String(s) => out.extend(
            s.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        ),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Null => {}
    }
}

fn escaped(s: &str) -> String {
    let json = Value::String(s.to_owned()).to_string();
    json[1..json.len() - 1].to_owned()
}

/// The summary a model reads first: `summary` in the structured channel, else the first line.
fn summary_of(page: &CallToolResult, structured: bool) -> String {
    match (&page.structured_content, structured) {
        (Some(s), true) => s["summary"].as_str().unwrap_or_default().to_owned(),
        _ => text(page).lines().next().unwrap_or_default().to_owned(),
    }
}

/// Whether a line holds a provenance delimiter or a look-alike (the sanitiser rewrites them).
fn is_delimited(line: &str) -> bool {
    [
        "«",
        "»",
        "‹",
        "›",
        "&laquo;",
        "&raquo;",
        "<untrusted",
        "</untrusted",
    ]
    .iter()
    .any(|d| line.contains(d))
}

/// What one walk cost and what it broke.
#[derive(Default)]
struct Walk {
    pages: usize,
    first: usize,
    whole: usize,
    lost: usize,
    /// Lines whose text holds a provenance delimiter or a look-alike, which the untrusted
    /// text's sanitising rewrites (`«` → `"`), counted apart from lost ones.
    altered: usize,
    /// Scalar values of a JSON answer read in full on the walk, of all it sent (the rest are
    /// cut with a marker, or left out and named).
    values: Option<(usize, usize)>,
    /// Of the facts the questions ([`FACTS`]) need, how many a record's line or object holds.
    facts: Option<(usize, usize)>,
    false_counts: usize,
    over_budget: usize,
}

async fn walk(client: &Client, case: &Case, structured: bool, bpe: &Bpe) -> Result<Walk, Error> {
    let mut w = Walk::default();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = CallToolRequestParams::new(case.tool);
        let mut args = serde_json::Map::new();
        args.insert("q".into(), json!("x"));
        if let Some(c) = &cursor {
            args.insert("cursor".into(), json!(c));
        }
        params = params.with_arguments(args);
        let page = client.call_tool(params).await?;
        if page.is_error == Some(true) {
            return Err(format!("{}: an error page: {}", case.tool, text(&page)).into());
        }
        let read = read_by(&page, structured);
        if std::env::var("SAVINGS_DUMP").is_ok_and(|t| t == case.tool) {
            eprintln!(
                "---- page {} ({})\n{read}",
                pages.len() + 1,
                if structured { "structured" } else { "text" }
            );
        }
        let tokens = bpe.count(&read);
        if pages.is_empty() {
            w.first = tokens;
        }
        w.whole += tokens;
        if tokens > BUDGET {
            w.over_budget += 1;
        }
        cursor = next_of(&page, structured);
        pages.push((page, read));
        if cursor.is_none() || pages.len() > 5_000 {
            break;
        }
    }
    w.pages = pages.len();
    let all: String = pages
        .iter()
        .map(|(_, r)| r.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let in_json = structured && pages[0].0.structured_content.is_some();
    let raw = raw_of(&case.answer);
    let side = if structured { "structured" } else { "text" };
    // The count a first page states, against a naive one; an answer of several lists may
    // state the list's own count among its sections (`issues 40`).
    let json = json_of(&case.answer);
    let truth = match (&case.list, &json) {
        (Some((at, _)), Some(v)) => {
            let list = if at.is_empty() { v } else { &v[*at] };
            list.as_array().map(|l| l.len() as u64)
        }
        (None, None) => Some(raw.lines().count() as u64),
        _ => None,
    };
    if let Some(truth) = truth {
        let stated = stated_total(&pages[0].0, structured);
        let summary = summary_of(&pages[0].0, structured);
        let in_sections = match case.list {
            Some((at, _)) => {
                !at.is_empty() && summary.contains(&format!("{at} {}", thousands(truth)))
            }
            // Lines that come in parts: `the text's 348 lines come in 353 parts`.
            None => summary.contains(&format!("text's {} line", thousands(truth))),
        };
        if stated != Some(truth) && !in_sections {
            eprintln!(
                "  {} ({side}): the first page states {stated:?}, the answer has {truth}",
                case.tool
            );
            w.false_counts += 1;
        }
    }
    match &json {
        Some(value) => {
            let mut facts = Vec::new();
            scalars(value, &mut facts);
            let read = facts
                .iter()
                .filter(|f| all.contains(&if in_json { escaped(f) } else { (*f).clone() }))
                .count();
            w.values = Some((read, facts.len()));
            if let Some((at, key)) = &case.list {
                let list = if at.is_empty() { value } else { &value[*at] };
                let want: Vec<&Value> = list
                    .as_array()
                    .map(|l| l.iter().map(|r| &r[*key]).collect())
                    .unwrap_or_default();
                let shown_once = |id: &Value| -> bool {
                    if in_json {
                        let seen = pages
                            .iter()
                            .filter_map(|(p, _)| p.structured_content.as_ref())
                            .flat_map(records)
                            .filter(|r| {
                                at.is_empty()
                                    || r.get("section").and_then(Value::as_str) == Some(*at)
                            })
                            .filter(|r| r.get(*key) == Some(id))
                            .count();
                        seen == 1
                    } else {
                        // A record line names its id as `key: 7` or `key: «A-7»`, followed by
                        // `;` or the line's end.
                        // (an id-like string may be written bare).
                        let shown: Vec<String> = match id {
                            Value::String(s) => {
                                vec![format!("{key}: «{s}»"), format!("{key}: {s}")]
                            }
                            other => vec![format!("{key}: {other}")],
                        };
                        let at_line = |line: &str| {
                            shown.iter().any(|shown| {
                                line.match_indices(shown.as_str()).any(|(i, _)| {
                                    let after = &line[i + shown.len()..];
                                    (i == 0 || line[..i].ends_with("; "))
                                        && (after.is_empty() || after.starts_with(';'))
                                })
                            })
                        };
                        let section = format!("section: {at};");
                        all.lines()
                            .filter(|l| at.is_empty() || l.starts_with(&section))
                            .filter(|l| at_line(l))
                            .count()
                            == 1
                    }
                };
                let lost = want.iter().filter(|id| !shown_once(id)).count();
                if lost > 0 {
                    eprintln!(
                        "  {} ({side}): {lost} of {} records not shown exactly once",
                        case.tool,
                        want.len()
                    );
                }
                w.lost += lost;
                // The facts the questions need, in each record's line or object.
                let asked: Vec<&str> = FACTS
                    .iter()
                    .filter(|(t, _, _)| *t == case.tool)
                    .map(|(_, _, path)| *path)
                    .collect();
                if !asked.is_empty() {
                    let rows: Vec<String> = match in_json {
                        true => pages
                            .iter()
                            .filter_map(|(p, _)| p.structured_content.as_ref())
                            .flat_map(records)
                            .map(|r| Value::Object(r).to_string())
                            .collect(),
                        false => all.lines().map(str::to_owned).collect(),
                    };
                    let (mut answered, mut needed) = (0, 0);
                    for (record, id) in list.as_array().into_iter().flatten().zip(&want) {
                        let id_shown: Vec<String> = match id {
                            Value::String(s) if in_json => {
                                vec![format!("\"{key}\":{}", Value::from(s.as_str()))]
                            }
                            Value::String(s) => {
                                vec![format!("{key}: «{s}»"), format!("{key}: {s};")]
                            }
                            other if in_json => vec![format!("\"{key}\":{other}")],
                            other => vec![format!("{key}: {other};")],
                        };
                        let Some(row) = rows
                            .iter()
                            .find(|r| id_shown.iter().any(|s| r.contains(s.as_str())))
                        else {
                            continue;
                        };
                        for path in &asked {
                            let facts = facts_at(record, path);
                            if facts.is_empty() {
                                continue;
                            }
                            needed += 1;
                            let shown = |f: &String| {
                                row.contains(&if in_json {
                                    escaped(&escaped(f))
                                } else {
                                    f.clone()
                                }) || row.contains(&if in_json { escaped(f) } else { f.clone() })
                            };
                            if facts.iter().all(shown) {
                                answered += 1;
                            } else if std::env::var("SAVINGS_FACTS").is_ok() {
                                eprintln!(
                                    "  {} ({side}): {path} = {facts:?} not in {id}'s record",
                                    case.tool
                                );
                            }
                        }
                    }
                    w.facts = Some((answered, needed));
                }
            }
        }
        None if in_json => {
            // Lines in order, a whole line a string, a line longer than a page in parts (each
            // an object naming its line): the text rebuilt, line by line.
            let envelopes: Vec<&Value> = pages
                .iter()
                .filter_map(|(p, _)| p.structured_content.as_ref())
                .collect();
            let lines = text_lines(envelopes)
                .ok_or_else(|| format!("{}: not a text's lines", case.tool))?;
            let rebuilt = joined(&lines);
            let rebuilt: Vec<&str> = rebuilt.split('\n').collect();
            // The last newline ends the last line.
            let sent: Vec<&str> = raw.strip_suffix('\n').unwrap_or(&raw).split('\n').collect();
            if rebuilt.len() != sent.len() {
                eprintln!(
                    "  {} ({side}): {} lines rebuilt, {} sent",
                    case.tool,
                    rebuilt.len(),
                    sent.len()
                );
                w.lost += rebuilt.len().abs_diff(sent.len()).max(1);
            }
            for (a, b) in sent.iter().zip(&rebuilt) {
                if a != b {
                    if is_delimited(a) {
                        w.altered += 1;
                    } else {
                        eprintln!("  {} ({side}): the line {a:?} reads {b:?}", case.tool);
                        w.lost += 1;
                    }
                }
            }
        }
        None => {
            for line in raw.lines().map(str::trim).filter(|l| !l.is_empty()) {
                let head: String = line.chars().take(40).collect();
                if all.contains(line) || (line.len() > head.len() && all.contains(&head)) {
                    continue;
                }
                if is_delimited(line) {
                    w.altered += 1;
                } else {
                    eprintln!("  {} ({side}): the line {line:?} is not read", case.tool);
                    w.lost += 1;
                }
            }
        }
    }
    Ok(w)
}

/// What a reader asks of a JSON list's records, written from each API's documentation (the
/// fields GitHub's "List repository issues" and Jira's "Search for issues using JQL" describe,
/// the JSON:API specification's example), not from what a page shows: per tool, the question
/// and the path of the fact it needs in the raw answer (`labels[].name` each label's name,
/// `@day` a timestamp's day, which is what the question asks). A record answers a question
/// when its line (text) or its object (JSON) on the pages read holds every value of the path.
const FACTS: &[(&str, &str, &str)] = &[
    ("list_issues", "what is issue N titled", "title"),
    ("list_issues", "who opened issue N", "user.login"),
    ("list_issues", "is issue N open or closed", "state"),
    (
        "list_issues",
        "which labels does issue N carry",
        "labels[].name",
    ),
    (
        "list_issues",
        "how many comments does issue N have",
        "comments",
    ),
    (
        "list_issues",
        "on which day was issue N opened",
        "created_at@day",
    ),
    (
        "list_issues",
        "on which day was issue N last updated",
        "updated_at@day",
    ),
    (
        "list_issues",
        "who is assigned to issue N",
        "assignees[].login",
    ),
    (
        "list_issues",
        "which milestone is issue N in",
        "milestone.title",
    ),
    (
        "list_issues",
        "on which day was issue N closed",
        "closed_at@day",
    ),
    ("jira_search", "what is SHOP-N about", "fields.summary"),
    (
        "jira_search",
        "what status is SHOP-N in",
        "fields.status.name",
    ),
    (
        "jira_search",
        "what priority is SHOP-N",
        "fields.priority.name",
    ),
    (
        "jira_search",
        "what type of issue is SHOP-N",
        "fields.issuetype.name",
    ),
    (
        "jira_search",
        "who is assigned SHOP-N",
        "fields.assignee.displayName",
    ),
    (
        "jira_search",
        "who reported SHOP-N",
        "fields.reporter.displayName",
    ),
    (
        "jira_search",
        "on which day was SHOP-N created",
        "fields.created@day",
    ),
    (
        "jira_search",
        "on which day was SHOP-N last updated",
        "fields.updated@day",
    ),
    (
        "jsonapi_articles",
        "what is article N titled",
        "attributes.title",
    ),
    (
        "jsonapi_articles",
        "on which day was article N written",
        "attributes.created@day",
    ),
];

/// The values of `path` in `record`, as a reader states them.
fn facts_at(record: &Value, path: &str) -> Vec<String> {
    let (path, day) = match path.strip_suffix("@day") {
        Some(p) => (p, true),
        None => (path, false),
    };
    let mut values = vec![record];
    for step in path.split('.') {
        let (key, each) = match step.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (step, false),
        };
        values = values
            .into_iter()
            .filter_map(|v| v.get(key))
            .flat_map(|v| match (each, v) {
                (true, Value::Array(items)) => items.iter().collect(),
                (true, _) => Vec::new(),
                (false, v) => vec![v],
            })
            .collect();
    }
    values
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) if day => Some(s.chars().take(10).collect()),
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        })
        .collect()
}

/// Questions a reader asks of the git log and the build log, each with the words the line
/// that answers it holds: `open_result`'s `query` over the stored text must show that line
/// on its first page.
const QUESTIONS: [(&str, &str, &str); 6] = [
    (
        "git_log",
        "which library ranks open_result's search by words",
        "BM25 from the bm25 crate",
    ),
    (
        "git_log",
        "when were the cursor setup errors merged into one error type",
        "each CursorSetupError variant",
    ),
    (
        "git_log",
        "which methods stopped leaking hidden types from the face",
        "Face without leaks",
    ),
    (
        "build_log",
        "which version of pydantic was installed",
        "Successfully installed",
    ),
    ("build_log", "how many unit tests passed", "92 passed"),
    (
        "build_log",
        "was the syn crate compiled",
        "Compiling syn v3",
    ),
];

/// How many of [`QUESTIONS`] over the tools in `tools` find their line on the first page
/// of `open_result`'s answer to the question as a query, and of how many.
async fn questions(client: &Client, tools: &[&str]) -> Result<(usize, usize), Error> {
    let (mut found, mut asked) = (0, 0);
    for (tool, question, line) in QUESTIONS.iter().filter(|(t, _, _)| tools.contains(t)) {
        let mut args = serde_json::Map::new();
        args.insert("q".into(), json!("x"));
        let first = client
            .call_tool(CallToolRequestParams::new(*tool).with_arguments(args))
            .await?;
        let handle = first
            .structured_content
            .as_ref()
            .and_then(|s| s["omitted"]["handle"].as_str())
            .ok_or_else(|| format!("{tool}: no handle on the first page"))?
            .to_owned();
        let mut args = serde_json::Map::new();
        args.insert("handle".into(), json!(handle));
        args.insert("query".into(), json!(question));
        let page = client
            .call_tool(CallToolRequestParams::new("open_result").with_arguments(args))
            .await?;
        asked += 1;
        let read = read_by(&page, true);
        if read.contains(&escaped(line)) {
            found += 1;
        } else {
            eprintln!("  {tool}: {question:?}: no line with {line:?} on the first page");
        }
    }
    Ok((found, asked))
}

/// `--forms`: what other forms of a text would cost, ÷ raw, side by side (the figures
/// docs/DEVELOPMENT.md gives for the forms not chosen), and what each part of a small
/// complete answer's envelope costs.
fn forms(cases: &[Case], bpe: &Bpe) {
    println!(
        "{:<14} {:>8} {:>6} {:>8} {:>10} {:>10}",
        "text", "raw", "rows", "strings", "one JSON", "«line»"
    );
    for case in cases {
        let Answer::Text(raw) = &case.answer else {
            continue;
        };
        if json_of(&case.answer).is_some() || bpe.count(raw) < 100 {
            continue;
        }
        let lines: Vec<&str> = raw.lines().collect();
        let quoted = |l: &str| Value::String(l.to_owned()).to_string();
        let rows: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                format!(
                    "{}[{},{}]\n",
                    if i > 0 { "," } else { "" },
                    i + 1,
                    quoted(l)
                )
            })
            .collect();
        let strings: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}{}\n", if i > 0 { "," } else { "" }, quoted(l)))
            .collect();
        let block = quoted(raw);
        let marked: String = lines.iter().map(|l| format!("«{l}»\n")).collect();
        let r = bpe.count(raw) as f64;
        let ratio = |t: &str| bpe.count(t) as f64 / r;
        println!(
            "{:<14} {:>8} {:>6.3} {:>8.3} {:>10.3} {:>10.3}",
            case.tool,
            r,
            ratio(&rows),
            ratio(&strings),
            ratio(&block),
            ratio(&marked)
        );
    }
    // The echo's complete answer, and what each of its parts takes.
    let whole = r#"{"status":"ok","summary":"1 line","untrusted":["text"],"data":["Echo: hello"]}"#;
    let parts = [
        (
            "without the summary",
            r#"{"status":"ok","untrusted":["text"],"data":["Echo: hello"]}"#,
        ),
        (
            "without untrusted",
            r#"{"status":"ok","summary":"1 line","data":["Echo: hello"]}"#,
        ),
        (
            "status and data only",
            r#"{"status":"ok","data":["Echo: hello"]}"#,
        ),
        (
            "the prose note of a git log page",
            "; «…» is untrusted text from git_log.text",
        ),
        (
            "the prose head of the echo",
            "ok: 1 line; «…» is untrusted text from echo.text.\n",
        ),
    ];
    println!("echo, complete, structured: {} tokens", bpe.count(whole));
    for (what, text) in parts {
        println!("  {what}: {} tokens", bpe.count(text));
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    if std::env::args().any(|a| a == "--forms") {
        forms(&cases()?, &Bpe::o200k_base());
        return Ok(());
    }
    let short = std::env::args().any(|a| a == "--short");
    let cases: Vec<Case> = cases()?.into_iter().filter(|c| !short || !c.long).collect();
    let server = Canned::new(cases.iter().map(|c| (c.tool, c.answer.clone())));
    let bpe = Bpe::o200k_base();
    let (mut worst_large, mut json_lists, mut text_whole) = (0.0f64, 0.0f64, 0.0f64);
    let (mut small_over, mut lost, mut false_counts, mut over_budget) = (0, 0, 0, 0);
    println!(
        "{:<18} {:<34} {:<10} {:>8} {:>6} {:>8} {:>8} {:>6} {:>7} {:>9}",
        "tool", "answer", "client", "raw", "pages", "first", "whole", "÷ raw", "values", "facts"
    );
    let (mut facts_answered, mut facts_needed) = (0, 0);
    for (client_name, structured) in [("claude-code", true), ("open-webui", false)] {
        let client = connect(server.clone(), client_name).await?;
        for case in &cases {
            let raw = bpe.count(&raw_of(&case.answer));
            let w = walk(&client, case, structured, &bpe).await?;
            let ratio = w.whole as f64 / raw.max(1) as f64;
            println!(
                "{:<18} {:<34} {:<10} {:>8} {:>6} {:>8} {:>8} {:>6.2} {:>7} {:>9}",
                case.tool,
                case.what,
                if structured { "structured" } else { "text" },
                raw,
                w.pages,
                w.first,
                w.whole,
                ratio,
                match w.values {
                    Some((read, all)) => format!("{:.0}%", 100.0 * read as f64 / all.max(1) as f64),
                    None if w.altered > 0 => format!("{}~", w.altered),
                    None => "-".to_owned(),
                },
                match w.facts {
                    Some((a, n)) => format!("{a}/{n}"),
                    None => "-".to_owned(),
                }
            );
            if let Some((a, n)) = w.facts {
                facts_answered += a;
                facts_needed += n;
            }
            if raw >= 100 {
                worst_large = worst_large.max(ratio);
            } else if w.whole > raw + 8 {
                small_over += 1;
            }
            if case.list.is_some() && raw >= 100 {
                json_lists = json_lists.max(ratio);
            }
            if json_of(&case.answer).is_none() && raw >= 100 {
                text_whole = text_whole.max(ratio);
            }
            lost += w.lost;
            false_counts += w.false_counts;
            over_budget += w.over_budget;
        }
        if structured {
            let tools: Vec<&str> = cases.iter().map(|c| c.tool).collect();
            let (found, asked) = questions(&client, &tools).await?;
            println!(
                "questions: {found} of {asked} answered by a line on open_result's first page (query)"
            );
        }
        client.cancel().await?;
    }
    println!(
        "facts: {facts_answered} of {facts_needed} a question needs are in their record on the pages read"
    );
    println!(
        "savings: tools={} worst_large={worst_large:.2} small_over_tokens={small_over} json_lists={json_lists:.2} text_whole={text_whole:.2} lost={lost} false_counts={false_counts} over_budget={over_budget}",
        cases.len()
    );
    if lost + false_counts + over_budget > 0 || facts_answered < facts_needed {
        return Err("a walk lost a fact, stated a false count or went over its budget".into());
    }
    Ok(())
}
