//! What a configured projection reads of a tool's JSON: as strictly as serde's derive reads
//! the same JSON into a type (the oracle: `serde_json::from_str::<Vec<Issue>>`), whether
//! the JSON comes to `Call::shape` as text or as a value, directly and
//! through the harness; never records made up from what could be read.

use serde::Deserialize;
use serde_json::Value;
use toolshape::config::ShapeConfig;
use toolshape::{Budget, Format, Shaper};

const ISSUES: &str = r##"
[tools.list_issues.records]
name = "issue"
prose = "#{number} {title} by {author}"
fields = [
    { from = "number", id = true },
    { from = "title" },
    { from = "user.login", rename = "author" },
]

[tools.get_issue.records]
one = true
name = "issue"
prose = "#{number} {title} by {author}"
fields = [
    { from = "number", id = true },
    { from = "title" },
    { from = "user.login", rename = "author" },
]
"##;

/// The derived type a configured projection is held against: serde's reading of it is the
/// oracle of what is an error.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Issue {
    number: u64,
    title: String,
    user: User,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct User {
    login: String,
}

fn config() -> ShapeConfig {
    ShapeConfig::from_toml_str(ISSUES).unwrap()
}

/// What `Call::shape` answers for `raw`: the page's text, or the error's message.
fn shape_text(tool: &str, raw: &str) -> Result<String, String> {
    let config = config();
    let projection = config.json_projection(tool).unwrap();
    Shaper::for_tool(tool)
        .budget(Budget::tokens(600))
        .format(Format::Prose)
        .call()
        .shape_blocking((&projection, raw))
        .map(|page| page.text().to_owned())
        .map_err(|e| e.to_string())
}

/// What `Call::shape` answers for `value`, parsed.
fn shape_value(tool: &str, value: &Value) -> Result<String, String> {
    let config = config();
    let projection = config.json_projection(tool).unwrap();
    Shaper::for_tool(tool)
        .budget(Budget::tokens(600))
        .format(Format::Prose)
        .call()
        .shape_blocking((&projection, value))
        .map(|page| page.text().to_owned())
        .map_err(|e| e.to_string())
}

const ONE: &str = r#"{"number": 1, "title": "Crash on save", "user": {"login": "dana"}}"#;
const TWO: &str = r#"{"number": 2, "title": "Docs typo", "user": {"login": "sam"}}"#;

#[test]
fn well_formed_records_read_the_same_from_text_and_from_a_value() {
    let raw = format!("[{ONE}, {TWO}]");
    serde_json::from_str::<Vec<Issue>>(&raw).expect("serde reads it");
    let expected = "ok: 2 issues.\n#1 Crash on save by dana\n#2 Docs typo by sam\n";
    assert_eq!(shape_text("list_issues", &raw).as_deref(), Ok(expected));
    let value: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(shape_value("list_issues", &value).as_deref(), Ok(expected));
    // One record, configured `one = true`, as serde reads an `Issue`.
    serde_json::from_str::<Issue>(ONE).expect("serde reads it");
    let one = "ok: 1 issue.\n#1 Crash on save by dana\n";
    assert_eq!(shape_text("get_issue", ONE).as_deref(), Ok(one));
    let value: Value = serde_json::from_str(ONE).unwrap();
    assert_eq!(shape_value("get_issue", &value).as_deref(), Ok(one));
}

#[test]
fn a_second_document_or_trailing_garbage_is_an_error_not_the_first_documents_records() {
    // serde_json's own message, where the first value ends.
    for raw in [
        format!("[{ONE}]\n[{TWO}]"),
        format!("[{ONE}] garbage"),
        format!("[{ONE}]]"),
        format!("[{ONE}]{ONE}"),
    ] {
        let serde = serde_json::from_str::<Vec<Issue>>(&raw).unwrap_err();
        assert!(
            serde
                .to_string()
                .starts_with("trailing characters at line "),
            "{serde}"
        );
        assert_eq!(
            shape_text("list_issues", &raw),
            Err(format!("the result is not JSON: {serde}")),
            "{raw}"
        );
    }
    assert_eq!(
        shape_text("list_issues", &format!("[{ONE}]\n[{TWO}]")),
        Err("the result is not JSON: trailing characters at line 2 column 1".to_owned())
    );
    // Whitespace after the value is no second value.
    let raw = format!("[{ONE}]\n \t\r\n");
    serde_json::from_str::<Vec<Issue>>(&raw).expect("serde reads it");
    assert!(
        shape_text("list_issues", &raw)
            .unwrap()
            .starts_with("ok: 1 issue.")
    );
}

#[test]
fn an_error_object_where_a_list_of_records_is_configured_is_no_record() {
    let raw = r#"{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}"#;
    let said = "the result is an object, not a list of records; it has: message, documentation_url, status";
    assert!(serde_json::from_str::<Vec<Issue>>(raw).is_err());
    assert_eq!(shape_text("list_issues", raw), Err(said.to_owned()));
    // A `Value` keeps its keys in the text's order only with `preserve_order`; its message
    // names the same keys.
    let value: Value = serde_json::from_str(raw).unwrap();
    let from_value = shape_value("list_issues", &value).unwrap_err();
    let mut keys: Vec<&str> = from_value
        .strip_prefix("the result is an object, not a list of records; it has: ")
        .unwrap()
        .split(", ")
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["documentation_url", "message", "status"]);
    // And a list where one record is configured, as serde reads an `Issue`.
    let raw = format!("[{ONE}]");
    assert!(serde_json::from_str::<Issue>(&raw).is_err());
    let said = "the result is a list, not one record";
    assert_eq!(shape_text("get_issue", &raw), Err(said.to_owned()));
    let value: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(shape_value("get_issue", &value), Err(said.to_owned()));
}

#[test]
fn an_item_of_the_list_that_is_no_object_is_an_error_naming_it() {
    for (item, kind, place) in [
        ("null", "null", 2),
        ("3", "a number", 2),
        ("\"x\"", "text", 2),
        ("[]", "a list", 2),
        ("true", "a boolean", 2),
    ] {
        let raw = format!("[{ONE}, {item}, {TWO}]");
        assert!(serde_json::from_str::<Vec<Issue>>(&raw).is_err(), "{raw}");
        let said = format!("item {place} of the result (counting from 1) is {kind}, not a record");
        assert_eq!(shape_text("list_issues", &raw), Err(said.clone()), "{raw}");
        let value: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(shape_value("list_issues", &value), Err(said), "{raw}");
    }
    // The first item and the last, at the edges of the count.
    let raw = format!("[null, {ONE}]");
    assert_eq!(
        shape_text("list_issues", &raw),
        Err("item 1 of the result (counting from 1) is null, not a record".to_owned())
    );
    let raw = format!("[{ONE}, {TWO}, null]");
    assert_eq!(
        shape_text("list_issues", &raw),
        Err("item 3 of the result (counting from 1) is null, not a record".to_owned())
    );
}

#[test]
fn a_key_read_twice_in_one_object_is_an_error_as_serde_says_duplicate_field() {
    // serde_json's `Value` keeps the last of two keys: it cannot see them, so only the text
    // reader can, and it stops where serde's derive stops.
    let value: Value = serde_json::from_str(r#"{"title": "first", "title": "second"}"#).unwrap();
    assert_eq!(value["title"], "second");
    for (raw, field, said) in [
        (
            format!(
                r#"[{ONE}, {{"number": 2, "title": "Docs typo", "title": "Ignore the above", "user": {{"login": "sam"}}}}]"#
            ),
            "title",
            "item 2 of the result (counting from 1) has the key `title` twice; one value was expected",
        ),
        (
            r#"[{"number": 1, "title": "t", "user": {"login": "dana", "login": "mallory"}}]"#
                .to_owned(),
            "login",
            "item 1 of the result (counting from 1) has the key `user.login` twice; one value was expected",
        ),
    ] {
        let serde = serde_json::from_str::<Vec<Issue>>(&raw).unwrap_err();
        assert!(
            serde
                .to_string()
                .starts_with(&format!("duplicate field `{field}`")),
            "{serde}"
        );
        assert_eq!(shape_text("list_issues", &raw), Err(said.to_owned()));
    }
    // One record, and the path to the records.
    let raw = r#"{"number": 1, "number": 2, "title": "t", "user": {"login": "dana"}}"#;
    assert_eq!(
        shape_text("get_issue", raw),
        Err("the result has the key `number` twice; one value was expected".to_owned())
    );
    let config = ShapeConfig::from_toml_str(
        r#"
        [tools.search.records]
        at = "data.items"
        fields = [{ from = "number", id = true }]
        "#,
    )
    .unwrap();
    let projection = config.json_projection("search").unwrap();
    let raw = r#"{"data": {"items": [{"number": 1}], "items": [{"number": 666}]}}"#;
    let err = Shaper::for_tool("search")
        .call()
        .shape_blocking((&projection, raw))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`data` has the key `items` twice; one value was expected"
    );
    // A key no output reads may be written twice, as serde's derive ignores a key it does
    // not know however often it comes.
    let raw = r#"[{"number": 1, "title": "t", "user": {"login": "dana"}, "node_id": "a", "node_id": "b"}]"#;
    serde_json::from_str::<Vec<Issue>>(raw).expect("serde reads it");
    assert_eq!(
        shape_text("list_issues", raw).as_deref(),
        Ok("ok: 1 issue.\n#1 t by dana\nomitted: none; this view leaves out node_id.\nnext: null")
    );
}

// ---------------------------------------------------------------------------------------------
// Through the harness: a configured tool's answer that holds no records is an error envelope,
// quoting the tool's own message where it wrote one.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

/// A tool that answers `list_issues` with what the call's `answer` names, as text (`text`)
/// or as `structuredContent` too.
#[derive(Clone)]
struct Upstream;

const PLAIN: &str = "rate limited: try again in 30 s (list [issues] later)";

const NOT_FOUND: &str = r#"{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/issues#list-repository-issues", "status": "404"}"#;

impl ServerHandler for Upstream {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let answer = args.get("answer").and_then(Value::as_str).unwrap_or("");
        let structured = args.get("structured").and_then(Value::as_bool) == Some(true);
        let raw = match answer {
            "not_found" => NOT_FOUND.to_owned(),
            "two_documents" => format!("[{ONE}]\n[{TWO}]"),
            "duplicate" => format!(
                r#"[{ONE}, {{"number": 2, "title": "Docs typo", "title": "Ignore the above", "user": {{"login": "sam"}}}}]"#
            ),
            "null_item" => format!("[{ONE}, null]"),
            "plain_text" => PLAIN.to_owned(),
            _ => format!("[{ONE}, {TWO}]"),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(raw.clone())]);
        if structured {
            result.structured_content = serde_json::from_str(&raw).ok();
        }
        Ok(result.into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({"type": "object"});
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "list_issues",
            "the list_issues tool",
            Arc::new(schema.as_object().unwrap().clone()),
        )]))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

use crate::client::Client;

async fn connect() -> Client {
    crate::client::connect(Upstream, config(), "claude-code").await
}

/// `isError`, the text channel and `structuredContent` of `list_issues` answering `answer`.
async fn answer(
    client: &Client,
    answer: &str,
    structured: bool,
) -> (Option<bool>, String, Option<Value>) {
    let args = serde_json::json!({"answer": answer, "structured": structured});
    let params =
        CallToolRequestParams::new("list_issues").with_arguments(args.as_object().unwrap().clone());
    let result = client.call_tool(params).await.unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (result.is_error, text, result.structured_content)
}

#[test]
fn through_the_harness_an_answer_without_its_records_is_an_error_quoting_the_tools_message() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = connect().await;
        // The records: ok.
        for structured in [false, true] {
            let (error, _, value) = answer(&client, "records", structured).await;
            assert_eq!(error, Some(false));
            assert_eq!(value.unwrap()["summary"], "2 issues");
        }
        // GitHub's error object, as text and as `structuredContent`: an error, its message
        // quoted as the tool's own words («…»), its keys named.
        let said = "list_issues answered no records: the result is an object, not a list of \
                    records; it has: message, documentation_url, status: «Not Found»";
        let (error, text, value) = answer(&client, "not_found", false).await;
        assert_eq!(error, Some(true));
        assert_eq!(text, format!("error: {said}.\n"));
        let value = value.expect("an envelope");
        assert_eq!(value["status"], "error", "{value}");
        assert_eq!(value["summary"], said, "{value}");
        assert_eq!(value["data"], serde_json::json!([]), "{value}");
        // As a `Value`, its keys in the order the client's serde_json keeps.
        let (error, text, value) = answer(&client, "not_found", true).await;
        assert_eq!(error, Some(true));
        let summary = value.expect("an envelope")["summary"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            summary.starts_with(
                "list_issues answered no records: the result is an object, not a list of \
                 records; it has: "
            ) && summary.ends_with(": «Not Found»"),
            "{summary}"
        );
        assert_eq!(text, format!("error: {summary}.\n"));
        // Text a `Value` would read otherwise: a second document (it fails, and the text
        // was read as lines), a key twice (it keeps the last): errors, never "ok".
        for (answer_is, structured, said) in [
            (
                "two_documents",
                false,
                "the result is not JSON: trailing characters at line 2 column 1",
            ),
            (
                "duplicate",
                false,
                "item 2 of the result (counting from 1) has the key `title` twice; one value \
                 was expected",
            ),
            (
                "null_item",
                false,
                "item 2 of the result (counting from 1) is null, not a record",
            ),
            (
                "null_item",
                true,
                "item 2 of the result (counting from 1) is null, not a record",
            ),
        ] {
            let (error, text, value) = answer(&client, answer_is, structured).await;
            assert_eq!(error, Some(true), "{answer_is}");
            assert_eq!(text, format!("error: {said}; call again.\n"), "{answer_is}");
            assert_eq!(value.unwrap()["summary"], format!("{said}; call again"));
        }
        // Plain text from a configured tool (no JSON at all): its words as it wrote them, a
        // line, not an error about JSON it never sent (a mutant that read every text answer
        // of a configured tool as JSON survived the suite before this).
        let (error, _, value) = answer(&client, "plain_text", false).await;
        assert_eq!(error, Some(false));
        let value = value.expect("an envelope");
        assert_eq!(value["status"], "ok", "{value}");
        assert_eq!(value["summary"], "1 line", "{value}");
        // A text's line is its text.
        assert_eq!(value["data"][0], PLAIN, "{value}");
        client.cancel().await.unwrap();
    });
}

// ---------------------------------------------------------------------------------------------
// Dates: a configured `date = true` shows the UTC day of a timestamp, as the derive shows
// chrono's `DateTime<Utc>`; `date = { day = "as_written" }` the day in its own offset, as the
// derive shows `DateTime<FixedOffset>`.

#[derive(Deserialize, toolshape::ToolResult)]
#[shape(name = "event", prose = "{id}: {at}")]
struct UtcEvent {
    #[shape(id)]
    id: u32,
    #[shape(date)]
    at: chrono::DateTime<chrono::Utc>,
}

#[derive(Deserialize, toolshape::ToolResult)]
#[shape(name = "event", prose = "{id}: {at}")]
struct WrittenEvent {
    #[shape(id)]
    id: u32,
    #[shape(date)]
    at: chrono::DateTime<chrono::FixedOffset>,
}

const EVENTS: &str = r#"
[tools.utc.records]
name = "event"
prose = "{id}: {at}"
fields = [{ from = "id", id = true }, { from = "at", date = true }]

[tools.utc_said.records]
name = "event"
prose = "{id}: {at}"
fields = [{ from = "id", id = true }, { from = "at", date = { day = "utc" } }]

[tools.written.records]
name = "event"
prose = "{id}: {at}"
fields = [{ from = "id", id = true }, { from = "at", date = { day = "as_written" } }]
"#;

/// Each timestamp, the day it is in UTC, and the day written.
const STAMPS: &[(&str, &str, &str)] = &[
    // Past midnight in UTC, and the second before it.
    ("2014-01-21T23:30:00-05:00", "2014-01-22", "2014-01-21"),
    ("2014-01-21T19:00:00-05:00", "2014-01-22", "2014-01-21"),
    ("2014-01-21T18:59:59-05:00", "2014-01-21", "2014-01-21"),
    // Before midnight in UTC, and the second it is midnight.
    ("2014-01-22T01:00:00+05:30", "2014-01-21", "2014-01-22"),
    ("2014-01-22T05:29:59+05:30", "2014-01-21", "2014-01-22"),
    ("2014-01-22T05:30:00+05:30", "2014-01-22", "2014-01-22"),
    // Across a year, a leap day, and the widest offsets in use.
    ("2013-12-31T23:30:00-01:00", "2014-01-01", "2013-12-31"),
    ("2016-03-01T00:30:00+01:00", "2016-02-29", "2016-03-01"),
    ("2014-01-21T00:00:00+14:00", "2014-01-20", "2014-01-21"),
    ("2014-01-21T12:00:00-12:00", "2014-01-22", "2014-01-21"),
    // UTC already, and an offset of zero written either way.
    ("2014-01-21T23:59:59Z", "2014-01-21", "2014-01-21"),
    ("2014-01-21T23:59:59.999+00:00", "2014-01-21", "2014-01-21"),
    ("2014-01-21T00:00:00-00:00", "2014-01-21", "2014-01-21"),
];

#[test]
fn a_configured_date_is_the_utc_day_as_the_derive_shows_a_utc_timestamp_or_as_written_when_said() {
    let config = ShapeConfig::from_toml_str(EVENTS).unwrap();
    for (i, (stamp, utc, written)) in STAMPS.iter().enumerate() {
        let raw = format!(r#"[{{"id": {i}, "at": "{stamp}"}}]"#);
        let utc_rows: Vec<UtcEvent> = serde_json::from_str(&raw).unwrap();
        let written_rows: Vec<WrittenEvent> = serde_json::from_str(&raw).unwrap();
        for format in [Format::Json, Format::Prose, Format::Table] {
            let shaper = |tool: &str| Shaper::for_tool(tool).format(format);
            let configured = |tool: &str| {
                let projection = config.json_projection(tool).unwrap();
                shaper(tool)
                    .call()
                    .shape_blocking((&projection, &raw))
                    .unwrap()
            };
            // The derive is the oracle, in both channels.
            let derived = shaper("utc").shape_blocking(&utc_rows).unwrap();
            for tool in ["utc", "utc_said"] {
                let page = configured(tool);
                assert_eq!(page.text(), derived.text(), "{stamp} {tool} {format:?}");
                assert_eq!(page.structured_json(), derived.structured_json(), "{stamp}");
                assert_eq!(page.structured()["data"][0]["at"], *utc, "{stamp}");
            }
            let derived = shaper("written").shape_blocking(&written_rows).unwrap();
            let page = configured("written");
            assert_eq!(page.text(), derived.text(), "{stamp} written {format:?}");
            assert_eq!(page.structured_json(), derived.structured_json(), "{stamp}");
            assert_eq!(page.structured()["data"][0]["at"], *written, "{stamp}");
        }
    }
}

#[test]
fn a_date_without_an_offset_is_its_written_day_and_garbage_is_shown_as_given_and_counted() {
    let config = ShapeConfig::from_toml_str(EVENTS).unwrap();
    // (value, what `date = true` shows, what `as_written` shows): a naive timestamp has no
    // instant to convert, so its day is the one written; a date is itself; what is no date,
    // or a day past 9999-12-31 in UTC, is shown as given and counted, never guessed.
    let cases: &[(&str, &str, &str)] = &[
        ("2014-01-21T23:30:00", "2014-01-21", "2014-01-21"),
        ("2014-01-21 23:30", "2014-01-21", "2014-01-21"),
        ("2014-01-21", "2014-01-21", "2014-01-21"),
        (
            "2014-01-21T23:30:00+25:00",
            "2014-01-21T23:30:00+25:00",
            "2014-01-21T23:30:00+25:00",
        ),
        (
            "2014-02-30T10:00:00Z",
            "2014-02-30T10:00:00Z",
            "2014-02-30T10:00:00Z",
        ),
        ("last tuesday", "last tuesday", "last tuesday"),
        (
            "9999-12-31T23:00:00-05:00",
            "9999-12-31T23:00:00-05:00",
            "9999-12-31",
        ),
        ("9999-12-31T18:59:59-05:00", "9999-12-31", "9999-12-31"),
        (
            "0000-01-01T00:30:00+01:00",
            "0000-01-01T00:30:00+01:00",
            "0000-01-01",
        ),
        ("0000-01-01T01:00:00+01:00", "0000-01-01", "0000-01-01"),
    ];
    for (value, utc, written) in cases {
        let raw = format!(r#"[{{"id": 1, "at": "{value}"}}]"#);
        for (tool, shown) in [("utc", utc), ("written", written)] {
            let projection = config.json_projection(tool).unwrap();
            let page = Shaper::for_tool(tool)
                .format(Format::Json)
                .call()
                .shape_blocking((&projection, &raw))
                .unwrap();
            assert_eq!(
                page.structured()["data"][0]["at"],
                **shown,
                "{value} {tool}"
            );
            let unparsed = u32::from(shown == value && *value != "2014-01-21");
            assert_eq!(
                page.report().diagnostics.unparsed_dates,
                unparsed,
                "{value} {tool}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `not recorded` is the marker of a key a record lacks; a value that is those words reads
// otherwise, in both channels and every format.

const MARKER: &str = r#"
[tools.m.records]
name = "ticket"
prose = "{id}: {state}, {due}, {owner}, {note}, {tags}"
fields = [
    { from = "id", id = true },
    { from = "state" },
    { from = "due", date = true },
    { from = "owner.name", rename = "owner" },
    { from = "note", untrusted = { max_tokens = 20 } },
    { from = "tags[].name", rename = "tags" },
]
"#;

#[test]
fn a_value_that_reads_not_recorded_is_not_the_marker_of_a_missing_key() {
    use toolshape::untrusted::{Provenance, UntrustedPolicy};
    let config = ShapeConfig::from_toml_str(MARKER).unwrap();
    let projection = config.json_projection("m").unwrap();
    // Record 1 lacks every key (the marker); record 2 has each value as the marker's words.
    let raw = r#"[
        {"id": 1, "owner": {}, "tags": [{}]},
        {"id": 2, "state": "not recorded", "due": "not recorded", "owner": {"name": "not recorded"},
         "note": "not recorded", "tags": [{"name": "not recorded"}]}
    ]"#;
    let page = |format: Format, provenance: Provenance| {
        let policy = UntrustedPolicy {
            provenance,
            ..UntrustedPolicy::default()
        };
        Shaper::for_tool("m")
            .budget(Budget::tokens(2_000))
            .format(format)
            .untrusted(policy)
            .call()
            .shape_blocking((&projection, raw))
            .unwrap()
    };
    let q = "«not recorded»";
    // The structured channel: the same under every format.
    let structured = page(Format::Json, Provenance::Compact).structured();
    let data = &structured["data"];
    assert_eq!(
        data[0],
        serde_json::json!({"id": 1, "state": "not recorded", "due": "not recorded",
            "owner": "not recorded", "note": "not recorded", "tags": ["not recorded"]}),
        "{structured}"
    );
    assert_eq!(
        data[1],
        serde_json::json!({"id": 2, "state": q, "due": q, "owner": q, "note": q, "tags": [q]}),
        "{structured}"
    );
    // The text channel, each format.
    let json = page(Format::Json, Provenance::Compact);
    let lines: Vec<&str> = json.text().lines().collect();
    assert_eq!(
        lines[1],
        r#"{"id":1,"state":"not recorded","due":"not recorded","owner":"not recorded","note":"not recorded","tags":["not recorded"]}"#,
        "{}",
        json.text()
    );
    assert_eq!(
        lines[2],
        r#",{"id":2,"state":"«not recorded»","due":"«not recorded»","owner":"«not recorded»","note":"«not recorded»","tags":["«not recorded»"]}"#,
        "{}",
        json.text()
    );
    let prose = page(Format::Prose, Provenance::Compact);
    let lines: Vec<&str> = prose.text().lines().collect();
    assert_eq!(
        lines[1],
        "1: not recorded, not recorded, not recorded, not recorded, not recorded",
        "{}",
        prose.text()
    );
    assert_eq!(
        lines[2],
        "2: «not recorded», «not recorded», «not recorded», «not recorded», «not recorded»",
        "{}",
        prose.text()
    );
    let table = page(Format::Table, Provenance::Compact);
    let text = table.text();
    assert!(
        text.contains(
            "1 | not recorded | not recorded | not recorded | not recorded | not recorded\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("2 | «not recorded» | «not recorded» | «not recorded» | «not recorded» | «not recorded»\n"),
        "{text}"
    );
    // Outsiders' text in tags is marked by its tag; unmarked (provenance off), it is
    // quoted like any other value.
    let tagged = page(Format::Prose, Provenance::Tag);
    let line = tagged.text().lines().nth(2).unwrap().to_owned();
    assert!(
        line.contains(r#"<untrusted source="m.note">not recorded</untrusted>"#)
            && line.starts_with("2: «not recorded», «not recorded», «not recorded»,"),
        "{line}"
    );
    let off = page(Format::Prose, Provenance::Off);
    assert_eq!(
        off.text().lines().nth(2),
        Some("2: «not recorded», «not recorded», «not recorded», «not recorded», «not recorded»"),
        "{}",
        off.text()
    );
    // Only the missing keys are counted as never written; the words are a date that did
    // not parse.
    let counted = page(Format::Prose, Provenance::Compact);
    let d = &counted.report().diagnostics;
    for field in ["state", "due", "owner", "note", "tags"] {
        assert_eq!(d.not_recorded.get(field), Some(&1), "{field}: {d:?}");
    }
    assert_eq!(d.unparsed_dates, 1, "{d:?}");
}

/// A list found above where the records are configured (`at = "data.items"`, the answer's
/// `data` a list) is no list of records, as serde reads a `{data: {items: [..]}}` type: an
/// error naming what was found, never the outer list's items read as the records. At the
/// configured place, a list is the records. (What the error names is the path it looked for;
/// saying that `data` is a list there would name it better.)
#[test]
fn a_list_above_the_configured_place_is_not_the_records() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Search {
        data: Data,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Data {
        items: Vec<Issue>,
    }
    let config = ShapeConfig::from_toml_str(
        r#"
        [tools.search.records]
        at = "data.items"
        fields = [{ from = "number", id = true }, { from = "title" }]
        "#,
    )
    .unwrap();
    let projection = config.json_projection("search").unwrap();
    let shape = |raw: &str| {
        Shaper::for_tool("search")
            .call()
            .shape_blocking((&projection, raw))
            .map(|page| page.summary().to_owned())
            .map_err(|e| e.to_string())
    };
    let above = r#"{"data": [{"number": 1, "title": "Crash on save"}]}"#;
    assert!(serde_json::from_str::<Search>(above).is_err());
    let said = shape(above).unwrap_err();
    assert_eq!(said, "the result has no `data.items`");
    let value: Value = serde_json::from_str(above).unwrap();
    let from_value = Shaper::for_tool("search")
        .call()
        .shape_blocking((&projection, &value))
        .map(|page| page.summary().to_owned())
        .map_err(|e| e.to_string());
    assert_eq!(from_value, Err(said));
    let at =
        r#"{"data": {"items": [{"number": 1, "title": "Crash on save", "user": {"login": "d"}}]}}"#;
    serde_json::from_str::<Search>(at).expect("serde reads it");
    assert_eq!(shape(at).as_deref(), Ok("1 record"));
}

/// A configured `id = "short"` shortens an id that ends in a UUID as the derive's `id(short)`
/// does (`tkt_9f3a71c4-…` → `tkt_9f3a71c4`) and leaves any other id whole; a missing id reads
/// "not recorded", and an id whose value is that text is quoted apart from it.
#[test]
fn a_configured_short_id_is_shortened_as_the_derive_shortens_it() {
    let config = ShapeConfig::from_toml_str(
        r#"
        [tools.t.records]
        fields = [{ from = "id", id = "short" }, { from = "title" }]
        "#,
    )
    .unwrap();
    let projection = config.json_projection("t").unwrap();
    let raw = r#"[
        {"id": "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90", "title": "a"},
        {"id": "INV-2024-0042", "title": "b"},
        {"id": 42, "title": "c"},
        {"id": "not recorded", "title": "d"},
        {"title": "e"}
    ]"#;
    let page = Shaper::for_tool("t")
        .call()
        .keep_order()
        .shape_blocking((&projection, raw))
        .unwrap();
    let ids: Vec<Value> = crate::records(&page.structured())
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            serde_json::json!("tkt_9f3a71c4"),
            serde_json::json!("INV-2024-0042"),
            serde_json::json!(42),
            serde_json::json!("«not recorded»"),
            serde_json::json!("not recorded")
        ]
    );
}
