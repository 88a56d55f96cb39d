//! Tests: the rmcp integration. A shaped result as a tool call result (the text channel as
//! `content`, the envelope as `structuredContent`, `isError` for error envelopes), the output
//! schema against real envelopes (draft-07 throughout, each row exact), and the size hint. The
//! schema is also validated by the real validators of the MCP SDKs in the interop tests
//! (`tests/mcp_interop.py`: jsonschema; `tests/mcp_interop_ts/`: Ajv and @cfworker/json-schema).

use crate::desk::{self, Directory, Ticket};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, MetaObject, Tool};
use serde_json::{Value, json};
use std::sync::Arc;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::tokens::Tokenizer as _;
use toolshape::{Budget, ChannelPolicy, Format, Shaped, Shaper, mcp};

fn tickets() -> Vec<Ticket> {
    desk::parse_page(desk::PAGE).expect("the seed page parses")
}

fn page(budget: usize, format: Format) -> Shaped {
    Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(budget))
        .format(format)
        .shape_blocking((&tickets(), &Directory::seed()))
        .expect("shapes")
}

fn complete(shaped: Shaped) -> CallToolResult {
    match shaped.into_call_tool_result() {
        Ok(CallToolResponse::Complete(result)) => result,
        other => panic!("not a complete tool result: {other:?}"),
    }
}

fn text_of(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "one content block");
    result.content[0]
        .as_text()
        .map(|t| t.text.as_str())
        .expect("a text block")
}

#[test]
fn content_is_the_text_channel_and_structured_content_the_envelope() {
    let shaped = page(600, Format::Prose);
    assert_eq!(shaped.status().as_str(), "partial");
    let result = complete(shaped.clone());
    let text = text_of(&result);
    assert_eq!(text, shaped.text());
    assert!(text.starts_with("partial: "), "{text}");
    assert!(
        serde_json::from_str::<Value>(text).is_err(),
        "prose, not compact JSON"
    );
    assert_eq!(result.structured_content, Some(shaped.structured()));
    assert_eq!(result.is_error, Some(false));
    // The envelope's keys stay in order on the wire (`serde_json/preserve_order`).
    let wire = serde_json::to_string(&result).expect("serialises");
    let at = |key: &str| wire.find(&format!("\"{key}\":")).expect(key);
    assert!(at("status") < at("summary") && at("summary") < at("data"));
    assert!(at("data") < at("omitted") && at("omitted") < at("next"));
    assert!(wire.contains("\"structuredContent\":{\"status\":\"partial\""));
}

#[test]
fn a_json_text_channel_is_still_the_shaped_text() {
    let shaped = page(2_000, Format::Json);
    let result = CallToolResult::from(&shaped);
    assert_eq!(text_of(&result), shaped.text());
    assert_eq!(result.structured_content, Some(shaped.structured()));
}

#[test]
fn error_envelopes_are_tool_errors_with_the_remedy_in_the_text() {
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a test key of at least 16 bytes").expect("key"),
    ));
    let query = QueryHash::of("search_tickets", &json!({"status": "open"})).expect("hash");
    let shaper = Shaper::for_tool("search_tickets").format(Format::Prose);
    let refused = shaper
        .call()
        .paginate(codec, query, Some("AAAAnot-a-cursor"))
        .expect_err("a bad cursor is refused");
    let shaped = shaper.cursor_error(&refused);
    let result = complete(shaped.clone());
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).contains("without a cursor"),
        "{}",
        text_of(&result)
    );
    let envelope = result
        .structured_content
        .expect("structured even on errors");
    assert_eq!(envelope["status"], "error");
    assert_eq!(envelope["data"], json!([]));
    assert_envelope_fits_schema::<Ticket>(&envelope);
}

/// Whether `value` fits `schema` for the keywords the record schemas use (`type`, `enum`,
/// `anyOf`).
fn admits(schema: &Value, value: &Value) -> bool {
    let options: Vec<&Value> = match schema.get("anyOf") {
        Some(Value::Array(options)) => options.iter().collect(),
        _ => vec![schema],
    };
    options.iter().any(|o| {
        let types = match &o["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let typed = types.iter().any(|t| match *t {
            "string" => value.is_string(),
            "null" => value.is_null(),
            "integer" => value.is_i64() || value.is_u64(),
            "array" => value.is_array(),
            _ => true,
        }) || types.is_empty();
        let listed = o
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|e| e.contains(value));
        typed && listed
    })
}

/// The keys every envelope has, and each record's fields, are the ones the schema names, in
/// whichever record form the envelope uses; the values' types are what the schema says for
/// the keywords it uses.
pub(crate) fn assert_envelope_fits_schema<T: toolshape::ToolResult>(envelope: &Value) {
    let schema = Value::Object((*mcp::output_schema::<T>()).clone());
    let props = &schema["properties"];
    let keys = crate::envelope_keys(envelope);
    for key in &keys {
        assert!(props.get(key).is_some(), "{key} not in the schema");
    }
    assert_eq!(schema["required"], json!(["status", "summary", "data"]));
    // With `fields`, the records in `data` are rows; without, objects.
    assert_eq!(schema["if"], json!({ "required": ["fields"] }));
    if let Some(untrusted) = envelope.get("untrusted") {
        for name in untrusted.as_array().expect("untrusted is a list") {
            assert!(
                admits(&props["untrusted"]["items"], name),
                "untrusted {name} not in {}",
                props["untrusted"]
            );
        }
    }
    assert!(
        props["status"]["enum"]
            .as_array()
            .expect("enum")
            .contains(&envelope["status"])
    );
    // `omitted` when something was cut (a complete page states none: the rule reads it as
    // nothing left out).
    let omitted = crate::omitted_of(envelope);
    for key in omitted.as_object().expect("omitted").keys() {
        assert!(
            props["omitted"]["properties"].get(key).is_some(),
            "omitted.{key} not in the schema"
        );
    }
    assert!(
        props["omitted"]["properties"]["reason"]["enum"]
            .as_array()
            .expect("reasons")
            .contains(&omitted["reason"])
    );
    assert!(envelope["next"].is_null() || envelope["next"].is_string());
    let record = &schema["else"]["properties"]["data"]["items"];
    assert_eq!(props["data"]["items"]["anyOf"][0], *record);
    let fields: Vec<&str> = record["required"]
        .as_array()
        .expect("required fields")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(record["additionalProperties"], json!(false));
    if envelope.get("fields").is_some() {
        let rows = &envelope["data"];
        // The rows form: `fields` is the schema's constant, each row one value a field, each
        // value fitting the schema at its position.
        assert_eq!(envelope["fields"], props["fields"]["const"]);
        assert_eq!(props["fields"]["const"], json!(fields));
        let row_schema = &schema["then"]["properties"]["data"]["items"];
        assert_eq!(props["data"]["items"]["anyOf"][1], *row_schema);
        assert_eq!(row_schema["additionalItems"], json!(false));
        assert_eq!(row_schema["minItems"], json!(fields.len()));
        assert_eq!(row_schema["maxItems"], json!(fields.len()));
        let positions = row_schema["items"].as_array().expect("items, one a field");
        for row in rows.as_array().expect("rows") {
            let row = row.as_array().expect("a row is an array");
            assert_eq!(row.len(), positions.len());
            for ((field, value), schema) in fields.iter().zip(row).zip(positions) {
                assert_eq!(schema, &record["properties"][*field]);
                assert!(
                    admits(schema, value),
                    "{field} = {value} does not fit {schema}"
                );
            }
        }
        return;
    }
    for item in envelope["data"].as_array().expect("data") {
        let item_keys: Vec<&str> = item
            .as_object()
            .expect("record")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(item_keys, fields);
        for field in &fields {
            let value = &item[*field];
            let field_schema = &record["properties"][*field];
            assert!(
                admits(field_schema, value),
                "{field} = {value} does not fit {field_schema}"
            );
        }
    }
}

#[test]
fn the_output_schema_describes_real_envelopes() {
    for (budget, format) in [
        (600, Format::Prose),
        (4_000, Format::Table),
        (4_000, Format::Json),
    ] {
        assert_envelope_fits_schema::<Ticket>(&page(budget, format).structured());
        for channels in [ChannelPolicy::Both, ChannelPolicy::Structured] {
            let rows = Shaper::for_tool("search_tickets")
                .budget(Budget::tokens(budget))
                .format(format)
                .channels(channels)
                .structured_form(toolshape::envelope::StructuredForm::Rows)
                .shape_blocking((&tickets(), &Directory::seed()))
                .expect("shapes");
            let envelope = rows.structured();
            assert!(envelope.get("fields").is_some(), "{envelope}");
            assert_eq!(envelope["untrusted"], json!(["subject"]));
            assert_envelope_fits_schema::<Ticket>(&envelope);
        }
    }
    let empty = Shaper::for_tool("search_tickets")
        .call()
        .query("status=closed")
        .shape_blocking((&[] as &[Ticket], &Directory::seed()))
        .expect("shapes");
    assert_eq!(empty.status().as_str(), "empty");
    assert_envelope_fits_schema::<Ticket>(&empty.structured());

    let schema = mcp::output_schema::<Ticket>();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["type"], "object");
    let record = &schema["else"]["properties"]["data"]["items"];
    assert_eq!(
        record["properties"]["status"]["anyOf"][0]["enum"],
        json!(["new", "pending", "open", "resolved", "closed"])
    );
    // open_result's records are whatever the query selects: objects.
    let open = toolshape::handle::OpenResult::<toolshape::handle::MemoryStore>::output_schema();
    assert_eq!(
        open["else"]["properties"]["data"]["items"]["type"],
        "object"
    );
    assert_eq!(
        toolshape::handle::OpenResult::<toolshape::handle::MemoryStore>::input_schema()["required"],
        json!(["handle"])
    );
}

/// A type with a schema of its own: schemars puts it in the definitions and refers to it.
#[derive(serde::Serialize, schemars::JsonSchema)]
enum Tier {
    Gold,
    Silver,
}

/// A record whose schema holds what schemars writes differently by draft: a type behind a
/// `$ref`, a tuple (2020-12's `prefixItems`), a nullable list of the referenced type.
#[derive(toolshape::ToolResult)]
#[shape(name = "account", plural = "accounts")]
struct Account {
    #[shape(show)]
    id: String,
    #[shape(show)]
    tier: Tier,
    #[shape(show)]
    span: (u32, String),
    #[shape(show)]
    tiers: Option<Vec<Tier>>,
}

/// Keywords draft-07 does not have: a validator applying draft-07 rules ignores each (as the
/// TypeScript SDK's default ignored `prefixItems` and then read `items: false` as "no item").
const NOT_IN_DRAFT_07: &[&str] = &[
    "prefixItems",
    "$defs",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "minContains",
    "maxContains",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
];

/// Every subschema of `schema` (itself first), by the keywords that hold subschemas.
fn subschemas(schema: &Value) -> Vec<&Value> {
    let mut all = vec![schema];
    let Some(object) = schema.as_object() else {
        return all;
    };
    for (key, value) in object {
        let children: Vec<&Value> = match (key.as_str(), value) {
            ("properties" | "patternProperties" | "definitions", Value::Object(map)) => {
                map.values().collect()
            }
            ("allOf" | "anyOf" | "oneOf" | "items", Value::Array(list)) => list.iter().collect(),
            (
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "contains"
                | "propertyNames"
                | "not"
                | "if"
                | "then"
                | "else",
                child,
            ) => vec![child],
            _ => Vec::new(),
        };
        all.extend(children.into_iter().flat_map(subschemas));
    }
    all
}

/// `schema` is draft-07 throughout: declared so, no keyword of a later draft anywhere, every
/// `$ref` alone in its object (draft-07 ignores a `$ref`'s siblings) and pointing at one of
/// its definitions.
fn assert_draft_07(schema: &Value) {
    assert_eq!(schema["$schema"], toolshape::schema::DIALECT);
    assert_eq!(
        toolshape::schema::DIALECT,
        "http://json-schema.org/draft-07/schema#"
    );
    for sub in subschemas(schema) {
        let Some(object) = sub.as_object() else {
            assert!(sub.is_boolean(), "not a schema: {sub}");
            continue;
        };
        for key in NOT_IN_DRAFT_07 {
            assert!(object.get(*key).is_none(), "{key} in {sub}");
        }
        if let Some(target) = object.get("$ref") {
            assert_eq!(object.len(), 1, "a $ref with siblings: {sub}");
            let name = target
                .as_str()
                .and_then(|t| t.strip_prefix("#/definitions/"))
                .unwrap_or_else(|| panic!("a $ref outside the definitions: {target}"));
            assert!(
                schema["definitions"].get(name).is_some(),
                "{target} unresolved"
            );
        }
    }
}

/// The row of the rows form, position by position: an `items` array of the record's field
/// schemas in the order of `fields`, nothing after them, and exactly that many values.
fn assert_rows_exact(schema: &Value) {
    let record = &schema["else"]["properties"]["data"]["items"];
    let row = &schema["then"]["properties"]["data"]["items"];
    let fields = schema["properties"]["fields"]["const"]
        .as_array()
        .expect("fields is a constant");
    assert_eq!(
        &record["required"],
        &schema["properties"]["fields"]["const"]
    );
    let positions: Vec<Value> = fields
        .iter()
        .map(|f| record["properties"][f.as_str().expect("a name")].clone())
        .collect();
    assert_eq!(row["type"], "array");
    assert_eq!(row["items"], Value::Array(positions));
    assert_eq!(row["additionalItems"], json!(false));
    assert_eq!(row["minItems"], json!(fields.len()));
    assert_eq!(row["maxItems"], json!(fields.len()));
    assert_eq!(schema["properties"]["data"]["items"]["anyOf"][1], *row);
}

#[test]
fn the_output_schema_is_draft_07_throughout_and_its_rows_are_exact() {
    let ticket = Value::Object((*mcp::output_schema::<Ticket>()).clone());
    assert_draft_07(&ticket);
    assert_rows_exact(&ticket);
    assert_eq!(
        ticket["properties"]["fields"]["const"],
        json!([
            "id",
            "subject",
            "status",
            "priority",
            "assignee",
            "org",
            "opened",
            "last_update"
        ])
    );

    let account = Value::Object((*mcp::output_schema::<Account>()).clone());
    assert_draft_07(&account);
    assert_rows_exact(&account);
    let record = &account["else"]["properties"]["data"]["items"]["properties"];
    assert_eq!(record["tier"], json!({ "$ref": "#/definitions/Tier" }));
    assert_eq!(
        account["definitions"]["Tier"]["enum"],
        json!(["Gold", "Silver"])
    );
    // The tuple, as draft-07 states one: an `items` array, its length fixed.
    assert_eq!(record["span"]["items"][0]["type"], "integer");
    assert_eq!(record["span"]["items"][1]["type"], "string");
    assert_eq!(
        (&record["span"]["minItems"], &record["span"]["maxItems"]),
        (&json!(2), &json!(2))
    );

    // Real answers of both forms fit it, position by position.
    let accounts = [
        Account {
            id: "a1".into(),
            tier: Tier::Gold,
            span: (3, "days".into()),
            tiers: None,
        },
        Account {
            id: "a2".into(),
            tier: Tier::Silver,
            span: (1, "week".into()),
            tiers: Some(vec![Tier::Gold]),
        },
    ];
    for form in [
        toolshape::envelope::StructuredForm::Rows,
        toolshape::envelope::StructuredForm::Objects,
    ] {
        let shaped = Shaper::for_tool("accounts")
            .structured_form(form)
            .shape_blocking(&accounts)
            .expect("shapes");
        assert_eq!(crate::records(&shaped.structured()).len(), 2);
        assert_envelope_fits_schema::<Account>(&shaped.structured());
    }

    // open_result's records are any objects, its rows any arrays: draft-07 too.
    assert_draft_07(&Value::Object(
        (*toolshape::handle::OpenResult::<toolshape::handle::MemoryStore>::output_schema()).clone(),
    ));

    // A record schema written for 2020-12, with its own `$defs`, comes out draft-07.
    let record = schemars::json_schema!({
        "type": "object",
        "properties": {
            "pair": { "type": "array", "prefixItems": [{ "type": "integer" }, { "$ref": "#/$defs/Name" }], "items": false },
            "name": { "$ref": "#/$defs/Name", "description": "a name" },
        },
        "required": ["pair", "name"],
        "additionalProperties": false,
    });
    let defs = json!({ "Name": { "type": "string" } })
        .as_object()
        .cloned()
        .expect("defs");
    let wrapped = toolshape::schema::envelope_of(record, defs, "pairs").to_value();
    assert_draft_07(&wrapped);
    assert_rows_exact(&wrapped);
    let pair = &wrapped["else"]["properties"]["data"]["items"]["properties"]["pair"];
    assert_eq!(
        pair["items"],
        json!([{ "type": "integer" }, { "$ref": "#/definitions/Name" }])
    );
    assert_eq!(pair["additionalItems"], json!(false));
}

#[test]
fn the_size_hint_bounds_both_channels() {
    let budget = Budget::tokens(600);
    let hint = toolshape::__seams::mcp::size_hint(budget);
    for format in [Format::Prose, Format::Table, Format::Json] {
        let shaped = page(600, format);
        assert!(shaped.text().chars().count() <= hint);
        assert!(shaped.structured_json().chars().count() <= hint);
    }
    let meta = mcp::size_hint_meta(budget);
    assert_eq!(
        meta.0[toolshape::__seams::mcp::MAX_RESULT_SIZE_KEY],
        json!(hint)
    );

    let mut kept = MetaObject::new();
    kept.0.insert("other".into(), json!(1));
    let tool = toolshape::__seams::mcp::with_size_hint(
        Tool::new(
            "search_tickets",
            "Search tickets",
            Arc::new(Default::default()),
        )
        .with_meta(kept),
        budget,
    );
    let meta = tool.meta.expect("meta");
    assert_eq!(meta.0["other"], json!(1));
    assert_eq!(
        meta.0[toolshape::__seams::mcp::MAX_RESULT_SIZE_KEY],
        json!(4_800)
    );
    let listed = serde_json::to_value(
        Tool::new("t", "d", Arc::new(Default::default()))
            .with_raw_output_schema(mcp::output_schema::<Ticket>())
            .with_meta(mcp::size_hint_meta(budget)),
    )
    .expect("serialises");
    assert_eq!(
        listed["_meta"]["anthropic/maxResultSizeChars"],
        json!(4_800)
    );
    assert_eq!(listed["outputSchema"]["type"], "object");
}

/// An rmcp tool method's future must be `Send` (the router runs it on a multi-threaded
/// runtime), so every pipeline future a tool awaits must be too.
#[test]
fn the_pipeline_futures_are_send() {
    use toolshape::{
        fields::Day,
        handle::{HandlePolicy, Keep, MemoryStore, OpenResult},
    };
    fn assert_send<F: Send>(_: &F) {}
    let rows = tickets();
    let directory = Directory::seed();
    let store = MemoryStore::default();
    let policy = HandlePolicy::default();
    let today = Day::parse("2026-03-01").expect("a date");
    let shaper = Shaper::for_tool("search_tickets");
    assert_send(&shaper.shape((&rows, &directory)));
    let keep = Keep::new(&store, "owner", &policy).today(today);
    assert_send(&shaper.call().shape_or_store((&rows, &directory), keep));
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a test key of at least 16 bytes").expect("key"),
    ));
    let open = OpenResult::new(&store, codec);
    assert_send(&open.call_on("owner", json!({"handle": "h_x"}), today));
}

fn page_for(budget: usize, format: Format, profile: ChannelPolicy) -> Shaped {
    Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(budget))
        .format(format)
        .channels(profile)
        .shape_blocking((&tickets(), &Directory::seed()))
        .expect("shapes")
}

/// Records in a prose text channel, read back from the text: the lines between the head and
/// the `omitted:` line.
fn prose_records(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let omitted = lines
        .iter()
        .position(|l| l.starts_with("omitted: "))
        .expect("an omitted line");
    omitted - 1
}

#[test]
fn a_text_profile_answers_with_the_text_alone_and_gives_it_the_whole_budget() {
    let tok = toolshape::tokens::Tiktoken::o200k_base();
    let both = page_for(600, Format::Prose, ChannelPolicy::Both);
    let text_only = page_for(600, Format::Prose, ChannelPolicy::Text);
    let result = complete(text_only.clone());
    assert_eq!(result.structured_content, None, "no structuredContent");
    assert_eq!(result.is_error, Some(false));
    let text = text_of(&result);
    assert_eq!(text, text_only.text());
    // All 12 fit in prose alone; the JSON under `Both` holds fewer.
    assert!(text.starts_with("ok: 12 tickets"), "{text}");
    assert!(tok.count(text) <= 600, "{}", tok.count(text));
    // Under `Both` the prose is held to what the JSON fits; read alone it shows more.
    assert!(
        prose_records(text) > prose_records(both.text()),
        "text alone {} records, under both {}",
        prose_records(text),
        prose_records(both.text())
    );
    assert!(tok.count(both.structured_json()) <= 600 && tok.count(both.text()) <= 600);
    let wire = serde_json::to_value(&result).expect("serialises");
    assert!(wire.get("structuredContent").is_none(), "{wire}");
}

#[test]
fn a_structured_profile_answers_with_the_envelope_in_both_blocks_within_the_whole_budget() {
    let tok = toolshape::tokens::Tiktoken::o200k_base();
    for format in [Format::Prose, Format::Table, Format::Json] {
        let shaped = page_for(400, format, ChannelPolicy::Structured);
        let result = complete(shaped.clone());
        let text = text_of(&result);
        let parsed: Value = serde_json::from_str(text).expect("the text block is the JSON");
        let structured = result.structured_content.clone().expect("structured");
        assert_eq!(parsed, structured);
        assert_eq!(structured["status"], "partial");
        assert!(tok.count(text) <= 400, "{format:?}: {}", tok.count(text));
        assert_envelope_fits_schema::<Ticket>(&structured);
        // The JSON channel binds under `Both` too, so reading it alone shows as many; in the
        // rows form (this profile's default) it shows more.
        assert!(structured.get("fields").is_some(), "{structured}");
        let both = page_for(400, format, ChannelPolicy::Both);
        let (alone, under_both) = (
            crate::records(&structured).len(),
            crate::records(&both.structured()).len(),
        );
        assert!(alone > under_both, "{format:?}: {alone} <= {under_both}");
    }
}

#[test]
fn an_error_carries_its_remedy_in_the_text_under_every_profile() {
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a test key of at least 16 bytes").expect("key"),
    ));
    let query = QueryHash::of("search_tickets", &json!({})).expect("hash");
    for profile in [
        ChannelPolicy::Both,
        ChannelPolicy::Text,
        ChannelPolicy::Structured,
    ] {
        let shaper = Shaper::for_tool("search_tickets")
            .format(Format::Prose)
            .budget(Budget::tokens(80))
            .channels(profile);
        let refused = shaper
            .call()
            .paginate(Arc::clone(&codec), query, Some("AAAAnot-a-cursor"))
            .expect_err("refused");
        let result = complete(shaper.cursor_error(&refused));
        assert_eq!(result.is_error, Some(true));
        let text = text_of(&result);
        // Claude Code shows only the text of an error: it must stand alone, as prose.
        assert!(text.starts_with("error: "), "{profile:?}: {text}");
        assert!(
            text.contains("call the tool again without a cursor"),
            "{profile:?}: {text}"
        );
        assert!(
            toolshape::tokens::Tiktoken::o200k_base().count(text) <= 80,
            "{profile:?}"
        );
        assert_eq!(
            result.structured_content.is_some(),
            profile != ChannelPolicy::Text,
            "{profile:?}"
        );
    }
}

#[test]
fn text_clients_see_no_output_schema_in_tools_list() {
    let tool = Tool::new("search_tickets", "d", Arc::new(Default::default()))
        .with_raw_output_schema(mcp::output_schema::<Ticket>());
    for (profile, has_schema) in [
        (ChannelPolicy::Both, true),
        (ChannelPolicy::Structured, true),
        (ChannelPolicy::Text, false),
    ] {
        let listed = toolshape::__seams::mcp::tools_for_profile(vec![tool.clone()], profile);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].output_schema.is_some(), has_schema, "{profile:?}");
        assert_eq!(listed[0].name, "search_tickets");
    }
}

#[test]
fn known_clients_get_the_profile_their_model_reads() {
    use rmcp::model::Implementation;
    // From the "facts from the field" table (DESIGN.md), by the names the clients send.
    let expected = [
        ("claude-code", ChannelPolicy::Structured),
        ("codex-mcp-client", ChannelPolicy::Structured),
        ("github-copilot-cli", ChannelPolicy::Structured),
        ("Visual Studio Code", ChannelPolicy::Structured),
        ("Visual Studio Code - Insiders", ChannelPolicy::Structured),
        ("opencode", ChannelPolicy::Structured),
        ("open-webui", ChannelPolicy::Text),
        ("openai-agents", ChannelPolicy::Text),
        ("langchain-mcp-adapters", ChannelPolicy::Text),
        ("mcp", ChannelPolicy::Text),
        ("some-new-agent", ChannelPolicy::Both),
        ("claude", ChannelPolicy::Both),
    ];
    let none = Default::default();
    for (name, profile) in expected {
        let hello = Implementation::new(name, "1");
        let sent = Some(hello.name.as_str());
        assert_eq!(
            toolshape::clients::reader(sent, &none).profile,
            profile,
            "{name}"
        );
    }
    assert_eq!(
        toolshape::clients::reader(None, &none).profile,
        ChannelPolicy::Both
    );
    // Every row of the table names a source.
    assert!(
        toolshape::__seams::clients::KNOWN_CLIENTS
            .iter()
            .all(|c| !c.source.is_empty() && !c.names.is_empty())
    );
}

/// The MCP example's first `search_tickets` page, as its clients get it: 5,000 tickets from
/// the example's SQLite desk, the whole match stored behind a handle, a held cursor, untrusted
/// subjects and a left-out field, at 1,500 tokens and 25 a page. Its envelope (everything
/// but the records: status, counts, order, how to go on, the handle, the provenance note,
/// what was left out) costs at most 100 tokens (o200k) to a text reader, and to a structured
/// reader once the rows form's field list is set aside (the records' header, stated once
/// in place of every record's keys) — on each of ten pages, each with its own random handle and
/// cursor (random text tokenizes unevenly: over thousands of draws the envelope stays at most
/// 100; ten keep this test from flaking on the rare draw at the edge).
#[tokio::test]
async fn the_first_page_envelope_costs_at_most_100_tokens() {
    use shape_examples::desk_db::{DeskDb, TicketFilter};
    use toolshape::cursor::MemoryCursorStore;
    use toolshape::handle::{HandlePolicy, Keep, MemoryStore};
    use toolshape::{envelope::Status, fields::Day};
    let tok = toolshape::tokens::Tiktoken::o200k_base();
    let db = DeskDb::seeded().expect("the example's desk");
    let rows = db
        .tickets(&TicketFilter::default(), None, 5_000)
        .expect("rows");
    assert_eq!(rows.len(), 5_000);
    let store = MemoryStore::default();
    let policy = HandlePolicy::default();
    let today = Day::parse("2026-03-01").expect("a date");
    let mut worst = [(0, 0), (0, 0)];
    const RUNS: usize = 10;
    for run in 0..RUNS {
        for (i, client) in ["langchain-mcp-adapters", "claude-code"]
            .into_iter()
            .enumerate()
        {
            let keys = CursorKeys::random().expect("randomness");
            let codec = Arc::new(CursorCodec::new(keys).held_in(MemoryCursorStore::new(
                1_000,
                std::time::Duration::from_secs(600),
            )));
            let query = QueryHash::of("search_tickets", &json!({"query": null, "status": null}))
                .expect("hash");
            let shaped = Shaper::for_tool("search_tickets")
                .budget(Budget::tokens(1_500))
                .format(Format::Prose)
                .page_size(25)
                .client(client)
                .call()
                .total(5_000)
                .paginate(codec, query, None)
                .expect("first page")
                .shape_or_store(
                    (&rows, &db),
                    Keep::new(&store, "owner", &policy).today(today),
                )
                .await
                .expect("shapes");
            assert_eq!(shaped.status(), Status::Partial);
            let handle = shaped.frame().omitted.handle.clone().expect("stored whole");
            let report = shaped.report();
            let envelope = if i == 0 {
                // The text reader's envelope: read back from the text, the first line and the
                // two after the records, and counted here.
                let text = shaped.text();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), report.records.shown + 3, "{text}");
                let envelope = format!(
                    "{}\n\n{}\n{}",
                    lines[0],
                    lines[lines.len() - 2],
                    lines[lines.len() - 1]
                );
                assert_eq!(text.matches(handle.as_str()).count(), 1, "{text}");
                assert!(envelope.contains("cursor=") && envelope.contains("«…» is untrusted"));
                assert!(
                    envelope.contains(
                        "omitted: 4,975 tickets (page_size); this view leaves \
                                       out sla_due_at"
                    ),
                    "{envelope}"
                );
                tok.count(&envelope)
            } else {
                let json = shaped.structured_json();
                let value = shaped.structured();
                assert_eq!(json.matches(handle.as_str()).count(), 1, "{json}");
                assert_eq!(value["untrusted"], json!(["subject"]));
                let header = format!(
                    "\"fields\":{},",
                    serde_json::to_string(&value["fields"]).expect("fields")
                );
                assert!(json.contains(&header), "{json}");
                report.envelope.structured.expect("counted") - tok.count(&header)
            };
            assert!(envelope > 40, "{envelope}: an envelope was measured");
            worst[i].0 = worst[i].0.max(envelope);
            worst[i].1 += envelope;
            assert!(
                envelope <= 100,
                "run {run}, {client}: {envelope} tokens of envelope"
            );
        }
    }
    eprintln!(
        "first page envelope, {RUNS} runs: text reader mean {:.1} max {}; structured reader \
         (field list aside) mean {:.1} max {}",
        worst[0].1 as f64 / RUNS as f64,
        worst[0].0,
        worst[1].1 as f64 / RUNS as f64,
        worst[1].0
    );
}

// ---------------------------------------------------------------------------------------------
// Every request answered, over a real stdio server process (issue 28): the example server
// `examples/mcp_support_desk.rs`, driven line by line as an MCP client drives it.

/// The example server's binary: `SHAPE_MCP_SERVER`, or the one `cargo test` builds next to
/// this test binary (`target/<profile>/examples/mcp_support_desk`).
fn example_server() -> std::path::PathBuf {
    if let Ok(path) = std::env::var("SHAPE_MCP_SERVER") {
        return path.into();
    }
    example_binary("mcp_support_desk")
}

/// An example's binary, built by `cargo test --workspace --all-features` next to this test
/// binary (`target/<profile>/examples/<name>`).
fn example_binary(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target/<profile>/deps");
    let path = profile.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo test --workspace --all-features` builds it, or build it with \
         `cargo build --example {name} --all-features`",
        path.display()
    );
    path
}

/// The server over stdio: lines written to its stdin, lines read from its stdout by a thread
/// (so a missing answer is a timeout here, not a hang).
struct StdioServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

/// How long an answer may take (the 17 MB line included) before it counts as never coming.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

impl StdioServer {
    fn start() -> StdioServer {
        StdioServer::start_at(&example_server(), "shape-depth-test")
    }

    /// The server at `path`, initialized by a client named `client`.
    fn start_at(path: &std::path::Path, client: &str) -> StdioServer {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let mut child = Command::new(path)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = StdioServer {
            child,
            stdin,
            lines,
        };
        server.send_line(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0.1.0"},
            }})
            .to_string(),
        );
        let init = server.answer();
        assert_eq!(init["id"], 0, "{init}");
        assert!(init.get("result").is_some(), "{init}");
        server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    fn send_line(&mut self, line: &str) {
        use std::io::Write;
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush())
            .expect("the server reads its stdin");
    }

    /// The next message the server writes; a panic when none comes in time.
    fn answer(&mut self) -> Value {
        match self.lines.recv_timeout(ANSWER_WITHIN) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:.200}")),
            Err(e) => panic!(
                "no answer within {ANSWER_WITHIN:?} ({e}); the server is {}",
                match self.child.try_wait() {
                    Ok(Some(status)) => format!("gone: {status}"),
                    _ => "still running".to_owned(),
                }
            ),
        }
    }

    /// Sends `line` and reads its answer, which must carry `id` (or no id, when `id` is null).
    fn ask(&mut self, line: &str, id: Value) -> Value {
        self.send_line(line);
        let answer = self.answer();
        assert_eq!(
            answer.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{answer:.300}"
        );
        answer
    }

    /// A ping answers: the server is up and reads its next line.
    fn still_answers(&mut self, id: u64) {
        let answer = self.ask(
            &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string(),
            json!(id),
        );
        assert!(answer.get("result").is_some(), "{answer}");
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `tools/call` of `open_result` whose whole message nests `depth` levels (the message,
/// `params`, `arguments`, `filter`, its filter object, then arrays inside the filter's value).
fn nested_call(id: u64, depth: usize) -> String {
    let arrays = depth - 5;
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"open_result","arguments":{{"handle":"h_none","filter":[{{"field":"title","op":"equals","value":{}{}}}]}}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

#[test]
fn every_request_gets_an_answer_however_deep_or_long() {
    let mut server = StdioServer::start();
    let mut id = 10;
    // Up to 127 levels the call reaches the tool, which answers (an error envelope: no such
    // handle); from 128 the line cannot be parsed, and the answer says why, with the id.
    for depth in [100usize, 126, 127, 128, 129, 200, 10_000] {
        id += 1;
        let line = nested_call(id, depth);
        assert_eq!(
            serde_json::from_str::<Value>(&line).is_ok(),
            depth <= toolshape::__seams::mcp::MAX_DEPTH,
            "{depth}: serde_json's own limit"
        );
        let answer = server.ask(&line, json!(id));
        if depth <= toolshape::__seams::mcp::MAX_DEPTH {
            let result = &answer["result"];
            assert_eq!(result["isError"], true, "{depth}: {answer:.300}");
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                text.contains("no stored result has this handle"),
                "{depth}: {text}"
            );
        } else {
            let error = &answer["error"];
            assert_eq!(error["code"], -32600, "{depth}: {answer:.300}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!("nests {depth} levels deep"))
                    && message.contains("more than the 127 levels"),
                "{depth}: {message}"
            );
            assert_eq!(error["data"], json!({"depth": depth, "max_depth": 127}));
        }
        id += 1;
        server.still_answers(id);
    }

    // A notification nested too deep is not answered (JSON-RPC answers no notification): the
    // next line out is the ping's answer.
    let deep_notice = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"x":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    server.send_line(&deep_notice);
    id += 1;
    server.still_answers(id);

    // Not JSON at all: a parse error, with the id when the line shows one.
    let garbage = server.ask("this is not json", Value::Null);
    assert_eq!(garbage["error"]["code"], -32700, "{garbage}");
    id += 1;
    let cut = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"#);
    let answer = server.ask(&cut, json!(id));
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the message is not valid JSON"),
        "{answer}"
    );

    // A line of several MB within the 16 MiB limit is read and answered by the tool; one past
    // the limit is answered as too long, with its id, and the server reads on.
    let limit = 16 * 1024 * 1024;
    for bytes in [5_000_000usize, limit + 1_000_000] {
        id += 1;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"open_result","arguments":{{"handle":"h_{}"}}}}}}"#,
            "x".repeat(bytes)
        );
        let answer = server.ask(&line, json!(id));
        if line.len() < limit {
            assert_eq!(answer["result"]["isError"], true, "{answer:.300}");
        } else {
            assert_eq!(answer["error"]["code"], -32600, "{answer:.300}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!(
                    "the message is {} bytes, over the 16,777,216 bytes",
                    shape_examples::thousands(line.len() as u64)
                )),
                "{message}"
            );
        }
        id += 1;
        server.still_answers(id);
    }
}

/// The line limits of `mcp::guarded` at their edges, over an in-memory pipe: with a limit of
/// 1,000 bytes, a message of 999 and of 1,000 bytes is read and one of 1,001 is answered as
/// too long, with its id, the next line read as usual; the id of an over-long line is found
/// in its first 64 KiB (65,536 bytes) and not past them, and an id the cut runs through is
/// no id. JSON that is not a JSON-RPC request is answered with its id too.
#[tokio::test]
async fn the_guarded_transport_holds_its_limits_at_the_edge() {
    use rmcp::model::RequestId;
    use rmcp::transport::Transport;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (mut client, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let mut transport = mcp::guarded((server_in, server_out)).with_max_line_length(1_000);
    let mut answers = BufReader::new(client_out).lines();
    let mut send = async |line: String| {
        client
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("the pipe takes it");
    };
    // A ping of exactly `bytes` bytes (JSON allows the trailing spaces).
    let ping = |id: u64, bytes: usize| {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        format!("{line}{}", " ".repeat(bytes - line.len()))
    };
    let mut received = async || -> RequestId {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), transport.receive())
            .await
            .expect("a message within 10 s")
            .expect("the stream is open");
        message.into_request().expect("a request").1
    };
    let mut answer = async || -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), answers.next_line())
            .await
            .expect("an answer within 10 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };

    for (id, bytes) in [(1u64, 999usize), (2, 1_000), (3, 1_001)] {
        send(ping(id, bytes)).await;
        if bytes <= 1_000 {
            assert_eq!(
                received().await,
                RequestId::Number(id as i64),
                "{bytes} bytes"
            );
            continue;
        }
        send(ping(4, 60)).await;
        assert_eq!(received().await, RequestId::Number(4), "read on after it");
        let refused = answer().await;
        assert_eq!(refused["id"], id, "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the message is 1,001 bytes, over the 1,000 bytes"),
            "{message}"
        );
        assert_eq!(
            refused["error"]["data"],
            json!({"bytes": 1_001, "max_bytes": 1_000})
        );
    }

    // The id of an over-long line, by where it ends: the byte after `"id":7` (a comma) is the
    // 65,536th, the last kept (found), or the 65,537th (not found: the 7 runs to the cut).
    let head = r#"{"jsonrpc":"2.0","method":"ping","params":{"p":""#;
    let before_id = r#""},"id":7"#;
    for (comma_at, found) in [(65_535usize, true), (65_536, false)] {
        let pad = comma_at - head.len() - before_id.len();
        let line = format!(
            r#"{head}{}{before_id},"q":"{}"}}"#,
            "x".repeat(pad),
            "y".repeat(70_000)
        );
        assert_eq!(line.find(r#"7,"q""#).map(|at| at + 1), Some(comma_at));
        send(line).await;
        send(ping(8, 60)).await;
        assert_eq!(received().await, RequestId::Number(8));
        let refused = answer().await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(
            refused.get("id").cloned(),
            found.then(|| json!(7)),
            "comma at {comma_at}: {refused}"
        );
    }

    // Well-formed JSON that is not a request this server reads: -32600, with its id.
    send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"not an object"}"#.into()).await;
    send(ping(10, 60)).await;
    assert_eq!(received().await, RequestId::Number(10));
    let refused = answer().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(9), json!(-32600))
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the message is not a JSON-RPC message this server reads"),
        "{refused}"
    );
}

// ---------------------------------------------------------------------------------------------
// The README's MCP server (`examples/mcp_minimal.rs`), shown in the README as it is and driven
// here as a client drives it (issue 34).

/// The README shows `examples/mcp_minimal.rs` whole, character for character.
#[test]
fn the_readme_shows_the_minimal_server_as_it_is() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let file = std::fs::read_to_string(format!("{root}/examples/mcp_minimal.rs"))
        .expect("examples/mcp_minimal.rs");
    let block = format!("```rust,ignore\n{file}```");
    assert!(
        readme.contains(&block),
        "README.md must show examples/mcp_minimal.rs whole in a ```rust,ignore block; copy it again"
    );
}

/// Under every channel profile's client name, the README's server lists its tool and a walk
/// of `next` shows each of its 120 tickets exactly once, read from the text the model reads.
#[test]
fn the_readme_server_pages_every_ticket_once_for_every_client() {
    let path = example_binary("mcp_minimal");
    for client in [
        "claude-code",
        "codex-mcp-client",
        "open-webui",
        "a-client-nobody-knows",
    ] {
        let mut server = StdioServer::start_at(&path, client);
        let list = server.ask(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
            json!(1),
        );
        let tools = list["result"]["tools"].as_array().expect("tools");
        let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["open_result", "search_tickets"], "{client}: {list}");

        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        let mut cursor: Option<String> = None;
        let mut handle: Option<String> = None;
        for id in 2..60u64 {
            let mut arguments = json!({});
            if let Some(c) = &cursor {
                arguments["cursor"] = json!(c);
            }
            let answer = server.ask(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "search_tickets", "arguments": arguments}})
                .to_string(),
                json!(id),
            );
            let result = &answer["result"];
            assert_ne!(result["isError"], true, "{client}: {answer}");
            // What the model reads: the text block (prose, or the JSON envelope under the
            // structured profile), else `structuredContent`.
            let text = result["content"]
                .as_array()
                .and_then(|c| c.iter().find_map(|b| b["text"].as_str()))
                .map(str::to_owned);
            let envelope = match &text {
                Some(text) => serde_json::from_str::<Value>(text).ok(),
                None => Some(result["structuredContent"].clone()),
            };
            // The handle the first page stored the whole result under, as the model reads
            // it (`omitted.handle`, or "open_result handle=…" in the prose).
            if handle.is_none() {
                let structured = result["structuredContent"]["omitted"]["handle"].as_str();
                let in_envelope = envelope
                    .as_ref()
                    .and_then(|e| e["omitted"]["handle"].as_str());
                handle = match in_envelope.or(structured) {
                    Some(handle) => Some(handle.to_owned()),
                    None => text.as_deref().and_then(|t| {
                        t.split("handle=")
                            .nth(1)
                            .and_then(|h| {
                                h.split(|c: char| {
                                    c.is_whitespace() || c == ')' || c == ';' || c == ','
                                })
                                .next()
                            })
                            .map(str::to_owned)
                    }),
                };
            }
            let next = match (&envelope, &text) {
                (Some(envelope), _) => {
                    let data = envelope["data"].as_array().expect("data");
                    for record in data {
                        // Objects (`{"id": …}`) or rows (`["tkt_…", …]`, `id` first).
                        let id = record["id"].as_str().or_else(|| record[0].as_str());
                        *seen.entry(id.expect("an id").to_owned()).or_default() += 1;
                    }
                    envelope["next"].as_str().map(str::to_owned)
                }
                (None, Some(text)) => {
                    for line in text.lines() {
                        if let Some(id) = line
                            .split_whitespace()
                            .next()
                            .filter(|w| w.starts_with("tkt_"))
                        {
                            *seen.entry(id.to_owned()).or_default() += 1;
                        }
                    }
                    let next = text
                        .lines()
                        .find_map(|l| l.strip_prefix("next: "))
                        .unwrap_or_else(|| panic!("{client}: no next line in {text}"));
                    // `next: null`, or `next: same call with cursor=c…`.
                    (next != "null").then(|| {
                        next.split("cursor=")
                            .nth(1)
                            .and_then(|c| c.split_whitespace().next())
                            .unwrap_or_else(|| panic!("{client}: no cursor in `next: {next}`"))
                            .to_owned()
                    })
                }
                (None, None) => unreachable!("an envelope or a text"),
            };
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(
            seen.len(),
            120,
            "{client}: {} distinct tickets shown",
            seen.len()
        );
        assert!(
            seen.values().all(|&n| n == 1),
            "{client}: shown more than once: {:?}",
            seen.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
        );
        assert!(
            cursor.is_some(),
            "{client}: 120 tickets in one page, so paging was not walked"
        );
        // The handle the walk named reopens the whole result: every ticket counted by status,
        // as the tickets were made (i % 3 + 1 for i in 1..=120: 40 each).
        let handle = handle.unwrap_or_else(|| panic!("{client}: no handle named by the walk"));
        let answer = server.ask(
            &json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
                    "params": {"name": "open_result", "arguments": {
                        "handle": handle, "aggregate": {"count_by": "status"}, "page_size": 1}}})
            .to_string(),
            json!(100),
        );
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "{client}: {answer}");
        let said = result["content"]
            .as_array()
            .and_then(|c| c.iter().find_map(|b| b["text"].as_str()))
            .map(str::to_owned)
            .unwrap_or_else(|| result["structuredContent"].to_string());
        for status in ["open", "pending", "closed"] {
            assert!(
                said.contains(&format!("{status} 40"))
                    || said.contains(&format!("{status}\": 40"))
                    || said.contains(&format!("{status}: 40")),
                "{client}: {status} not counted 40 in {said}"
            );
        }
    }
}

/// `mcp::Pages` at its edges: a walk shows every ticket once and names the handle it stored
/// the result under; a cursor of another query, a cursor that is not a string and a tampered
/// one are each an error with a remedy that works when followed (the first page again).
#[test]
fn pages_walk_once_and_refuse_cursors_that_are_not_theirs() {
    use toolshape::cursor::CursorKeys;
    use toolshape::mcp::Pages;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let pages = Pages::new(CursorKeys::new([7u8; 32]).unwrap());
    let rows: Vec<Ticket> = tickets()
        .into_iter()
        .cycle()
        .take(90)
        .enumerate()
        .map(|(i, mut t)| {
            t.id = format!("tkt_{i:04}");
            t
        })
        .collect();
    let directory = Directory::seed();
    let shaper = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(400))
        .format(Format::Json);
    let page = |args: Value| {
        rt.block_on(pages.page_for(&shaper, Some("claude-code"), &args, (&rows, &directory)))
    };
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut args = json!({"query": "x"});
    let first = page(args.clone());
    assert!(first.frame().omitted.handle.is_some(), "{}", first.text());
    let mut current = first;
    for _ in 0..100 {
        assert_ne!(current.status().as_str(), "error", "{}", current.text());
        let envelope: Value = serde_json::from_str(current.text()).unwrap();
        for record in envelope["data"].as_array().unwrap() {
            let id = record["id"]
                .as_str()
                .or_else(|| record[0].as_str())
                .unwrap();
            *seen.entry(id.to_owned()).or_default() += 1;
        }
        match envelope["next"].as_str() {
            Some(next) => {
                args["cursor"] = json!(next);
                current = page(args.clone());
            }
            None => break,
        }
    }
    assert_eq!(seen.len(), 90, "{seen:?}");
    assert!(seen.values().all(|&n| n == 1));
    // A cursor of the same walk under other arguments: refused.
    let second_cursor = {
        let envelope: Value = serde_json::from_str(page(json!({"query": "x"})).text()).unwrap();
        envelope["next"].as_str().unwrap().to_owned()
    };
    for (args, said) in [
        (json!({"query": "y", "cursor": second_cursor}), "cursor"),
        (json!({"query": "x", "cursor": 5}), "not a cursor"),
        (json!({"query": "x", "cursor": "c123"}), "cursor"),
    ] {
        let refused = page(args.clone());
        assert_eq!(
            refused.status().as_str(),
            "error",
            "{args}: {}",
            refused.text()
        );
        assert!(refused.text().contains(said), "{args}: {}", refused.text());
        // The remedy: without a cursor, the first page.
        let mut again = args.clone();
        again.as_object_mut().unwrap().remove("cursor");
        assert_ne!(page(again).status().as_str(), "error");
    }
    // An empty cursor, as a model sends for an optional text it leaves out: the first page.
    let blank = page(json!({"query": "x", "cursor": " "}));
    let first: Value = serde_json::from_str(page(json!({"query": "x"})).text()).unwrap();
    let blank: Value = serde_json::from_str(blank.text()).unwrap();
    assert_eq!(blank["data"], first["data"]);
    // Without a client name, the shaper's own cuts hold (none are known of the client).
    let limited =
        shaper
            .clone()
            .format(Format::Prose)
            .client_limits(toolshape::clients::ClientLimits {
                lines: Some(6),
                ..Default::default()
            });
    let anonymous = rt.block_on(pages.page_for(&limited, None, &json!({}), (&rows, &directory)));
    assert!(
        anonymous.text().lines().count() <= 6,
        "{}",
        anonymous.text()
    );
    assert_ne!(anonymous.status().as_str(), "error", "{}", anonymous.text());
}

/// A configured tool's JSON through `mcp::Pages`, in the shapes answers come in: records
/// (walked to the end, each once, the stated total true), an empty list, an error object
/// where the records were configured, a duplicate key, and a blank cursor (the first page).
#[test]
fn pages_shape_configured_json_in_every_answer_shape() {
    use toolshape::config::ShapeConfig;
    use toolshape::cursor::CursorKeys;
    use toolshape::mcp::Pages;
    let config = ShapeConfig::from_toml_str(
        r#"
        [tools.list_issues.records]
        name = "issue"
        fields = [{ from = "number", id = true }, { from = "title" }]
        "#,
    )
    .unwrap();
    let projection = config.json_projection("list_issues").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let pages = Pages::new(CursorKeys::new([9u8; 32]).unwrap());
    let shaper = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(300))
        .format(Format::Json);
    let records: Vec<Value> = (1..=80)
        .map(|i| json!({"number": i, "title": format!("issue number {i} of the tracker")}))
        .collect();
    let raw = Value::Array(records).to_string();
    let page = |args: &Value, raw: &str| {
        rt.block_on(pages.page_for(&shaper, Some("claude-code"), args, (&projection, raw)))
    };
    // Records: every issue once, the summary's total the upstream's.
    let mut seen = std::collections::BTreeMap::<u64, usize>::new();
    let mut args = json!({"repo": "r"});
    for _ in 0..100 {
        let shaped = page(&args, &raw);
        assert_ne!(shaped.status().as_str(), "error", "{}", shaped.text());
        assert!(
            shaped.frame().summary.contains("of 80")
                || shaped.frame().summary.starts_with("80 issues"),
            "{}",
            shaped.frame().summary
        );
        let envelope: Value = serde_json::from_str(shaped.text()).unwrap();
        for record in envelope["data"].as_array().unwrap() {
            let id = record["number"]
                .as_u64()
                .or_else(|| record[0].as_u64())
                .unwrap();
            *seen.entry(id).or_default() += 1;
        }
        match envelope["next"].as_str() {
            Some(next) => args["cursor"] = json!(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 80);
    assert!(seen.values().all(|&n| n == 1));
    // Empty, an error object, a duplicate key: `empty`, then errors naming what was found.
    let empty = page(&json!({}), "[]");
    assert_eq!(empty.status().as_str(), "empty", "{}", empty.text());
    let not_found = page(&json!({}), r#"{"message": "Not Found"}"#);
    assert_eq!(not_found.status().as_str(), "error", "{}", not_found.text());
    assert!(
        not_found.text().contains("not a list"),
        "{}",
        not_found.text()
    );
    let twice = page(&json!({}), r#"[{"number": 1, "title": "a", "title": "b"}]"#);
    assert_eq!(twice.status().as_str(), "error", "{}", twice.text());
    assert!(twice.text().contains("twice"), "{}", twice.text());
    // Blank cursors, as models send for an optional text left out: the first page.
    let first = page(&json!({"repo": "r"}), &raw);
    for blank in ["", " "] {
        let again = page(&json!({"repo": "r", "cursor": blank}), &raw);
        // The same records and summary (each first page stores the result anew, under a
        // handle of its own).
        let data = |s: &toolshape::Shaped| {
            serde_json::from_str::<Value>(s.text()).unwrap()["data"].clone()
        };
        assert_eq!(data(&again), data(&first), "cursor {blank:?}");
        assert_eq!(
            again.frame().summary,
            first.frame().summary,
            "cursor {blank:?}"
        );
    }
}
