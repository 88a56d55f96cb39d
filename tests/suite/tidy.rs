//! The seeds' rules on answers nobody described, through the harness: link fields and node
//! ids set aside, empty values left out, a list's timestamps to the precision chosen,
//! repeated objects by name, JSON:API read through its attributes. What the page leaves out
//! stays reachable through `open_result`; every record is shown once. The expectations are
//! the upstream's own answer, read here.

use crate::client::{Client, call, runtime, text};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use shape_examples::canned::{Answer, Canned};
use toolshape::config::ShapeConfig;

async fn connect(server: Canned, config: &str) -> Client {
    crate::client::connect(
        server,
        ShapeConfig::from_toml_str(config).unwrap(),
        "claude-code",
    )
    .await
}

/// GitHub-like issues: links, a node id, a user repeated across issues, labels, a timestamp,
/// empty values, and a zero and a `false` that are facts.
fn issues(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({
                    "url": format!("https://api.example.com/issues/{i}"),
                    "html_url": format!("https://example.com/issues/{i}"),
                    "node_id": format!("I_kwDO{i:04}"),
                    "number": i,
                    "title": format!("issue {i}"),
                    "user": {"login": format!("u{}", i % 3), "id": i % 3,
                             "avatar_url": format!("https://avatars.example.com/{}", i % 3)},
                    "labels": [{"name": "bug", "url": "https://api.example.com/labels/bug"}],
                    "created_at": format!("2026-11-{:02}T12:46:00Z", i % 28 + 1),
                    "closed_at": if i % 5 == 0 { json!("2026-11-30T08:00:00Z") } else { Value::Null },
                    "body": "",
                    "comments": 0,
                    "draft": false,
                })
            })
            .collect(),
    )
}

/// `records`, each with a `notes` text long enough that the answer passes the 2 KB an answer
/// must have for the rules to pay (smaller ones pass as given).
fn padded(records: Value) -> Value {
    let mut records = records;
    for record in records.as_array_mut().unwrap() {
        record["notes"] = json!("lorem ipsum dolor sit amet ".repeat(40));
    }
    assert!(records.to_string().len() >= 2_048);
    records
}

/// Every page of `tool`'s walk.
async fn walk(client: &Client, tool: &str) -> Vec<CallToolResult> {
    let pages = crate::client::walk(client, tool, json!({"q": "x"})).await;
    for page in &pages {
        assert_ne!(page.is_error, Some(true), "{}", text(page));
    }
    pages
}

/// The records of the result `env` stored, reopened with their ids and as given.
async fn reopened_originals(client: &Client, env: &Value) -> Vec<Map<String, Value>> {
    let handle = crate::omitted_of(env)["handle"]
        .as_str()
        .expect("stored")
        .to_owned();
    let opened = call(
        client,
        "open_result",
        json!({"handle": handle, "select": ["id", "original"]}),
    )
    .await;
    crate::records(envelope(&opened))
}

fn envelope(page: &CallToolResult) -> &Value {
    page.structured_content
        .as_ref()
        .expect("a structured answer")
}

#[test]
fn what_a_model_cannot_use_is_set_aside_and_open_result_reaches_it() {
    let answer = issues(30);
    runtime().block_on(async {
        let server = Canned::new([("list_issues", Answer::Structured(answer.clone()))]);
        let client = connect(server, "[defaults]\nbudget = 400\n").await;
        let pages = walk(&client, "list_issues").await;
        assert!(pages.len() > 2, "the walk pages: {}", pages.len());
        let first = envelope(&pages[0]);
        let summary = first["summary"].as_str().unwrap();
        for said in [
            "links and node ids left out",
            "empty values left out",
            "times shortened",
            "repeated objects shown by name",
            "each record as given: original",
        ] {
            assert!(summary.contains(said), "{said}: {summary}");
        }
        let omitted = crate::omitted_of(first);
        let named = omitted["fields"].to_string();
        for key in ["url", "html_url", "node_id"] {
            assert!(named.contains(&format!("\"{key}\"")), "{key}: {named}");
        }
        let handle = omitted["handle"].as_str().expect("stored").to_owned();
        // Every record once, tidied, on every page of the walk.
        let mut seen = Vec::new();
        for page in &pages {
            for record in crate::records(envelope(page)) {
                let i = record["number"].as_u64().unwrap() as usize;
                seen.push(i);
                // Left out, not written as absent: on the first page and on the pages read
                // back from the stored result alike.
                for key in ["url", "html_url", "node_id", "original", "body"] {
                    assert!(!record.contains_key(key), "{key} in {record:?}");
                }
                // Closed ones show their day; the others have no `closed_at` at all.
                match i % 5 {
                    0 => assert_eq!(record["closed_at"], json!("2026-11-30")),
                    _ => assert!(!record.contains_key("closed_at"), "{record:?}"),
                }
                assert_eq!(record["user"], json!(format!("u{}", i % 3)), "{record:?}");
                assert_eq!(record["labels"], json!("[\"bug\"]"), "{record:?}");
                let day = format!("2026-11-{:02}", i % 28 + 1);
                assert_eq!(record["created_at"], json!(day), "{record:?}");
                // A zero and a `false` are facts, not empty values.
                assert_eq!(record["comments"], json!(0));
                assert_eq!(record["draft"], json!(false));
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        // Reopened without `select`: tidied, the set-aside fields named as left out.
        let reopened = call(&client, "open_result", json!({"handle": handle})).await;
        let reopened_env = envelope(&reopened);
        assert_ne!(reopened.is_error, Some(true), "{}", text(&reopened));
        for record in crate::records(reopened_env) {
            assert!(!record.contains_key("html_url"), "{record:?}");
            assert!(!record.contains_key("original"), "{record:?}");
        }
        let left = crate::omitted_of(reopened_env)["fields"].to_string();
        assert!(left.contains("html_url"), "{left}");
        // Selected: each link field and each record as the tool gave it.
        let select =
            json!({"handle": handle, "select": ["number", "html_url", "node_id", "original"]});
        let selected = crate::client::walk(&client, "open_result", select).await;
        let mut records = Vec::new();
        for page in &selected {
            assert_ne!(page.is_error, Some(true), "{}", text(page));
            records.extend(crate::records(envelope(page)));
        }
        assert_eq!(records.len(), 30);
        for record in records {
            let i = record["number"].as_u64().unwrap() as usize;
            let given = &answer[i];
            assert_eq!(record["html_url"], given["html_url"]);
            assert_eq!(record["node_id"], given["node_id"]);
            let original: Value =
                serde_json::from_str(record["original"].as_str().expect("JSON text")).unwrap();
            assert_eq!(&original, given, "record {i} as given");
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_link_a_tool_takes_as_an_argument_stays_on_the_page() {
    let answer = padded(json!([
        {"title": "Rust", "url": "https://www.rust-lang.org/", "html_url": "https://a.example/1"},
        {"title": "Tokio", "url": "https://tokio.rs/", "html_url": "https://a.example/2"},
        {"title": "Serde", "url": "https://serde.rs/", "html_url": "https://a.example/3"},
        {"title": "Axum", "url": "https://docs.rs/axum", "html_url": "https://a.example/4"},
    ]));
    runtime().block_on(async {
        let server =
            Canned::new([("search", Answer::Structured(answer.clone()))]).arguments(&["url"]);
        let client = connect(server, "").await;
        // A client lists the tools before it calls them: `fetch(url)` is an argument there.
        client.list_all_tools().await.unwrap();
        let page = call(&client, "search", json!({"q": "x"})).await;
        let records = crate::records(envelope(&page));
        assert_eq!(records.len(), 4);
        for (record, given) in records.iter().zip(answer.as_array().unwrap()) {
            assert_eq!(record["url"], given["url"], "{record:?}");
            assert!(!record.contains_key("html_url"), "{record:?}");
        }
        client.cancel().await.unwrap();
    });
}

/// The `created` values a page shows for `stamps`, a list's records, under `config`.
fn times_shown(stamps: &[&str], config: &'static str) -> Vec<Value> {
    let answer = padded(Value::Array(
        stamps
            .iter()
            .enumerate()
            .map(|(i, s)| json!({"id": i, "created": s}))
            .collect(),
    ));
    runtime().block_on(async {
        let server = Canned::new([("events", Answer::Structured(answer))]);
        let client = connect(server, config).await;
        let page = call(&client, "events", json!({})).await;
        let records = crate::records(envelope(&page));
        client.cancel().await.unwrap();
        records.into_iter().map(|r| r["created"].clone()).collect()
    })
}

#[test]
fn a_lists_times_follow_the_precision_chosen_and_what_is_no_time_is_left_as_it_is() {
    let stamps = [
        "2026-02-11T09:14:22.481Z",
        "2026-02-11T09:14:22+05:30",
        "2026-02-11T09:14",
        "2026-02-11",
        "2026-02-30T00:00:00Z",
        "2026-02-11T",
        "last tuesday",
    ];
    let as_given: Vec<Value> = stamps.iter().map(|s| json!(s)).collect();
    let mut day = as_given.clone();
    for shown in &mut day[..3] {
        *shown = json!("2026-02-11");
    }
    assert_eq!(times_shown(&stamps, ""), day);
    let mut minute = as_given.clone();
    minute[0] = json!("2026-02-11T09:14Z");
    minute[1] = json!("2026-02-11T09:14+05:30");
    assert_eq!(
        times_shown(&stamps, "[defaults.rules]\ntimes = \"minute\"\n"),
        minute
    );
    assert_eq!(
        times_shown(&stamps, "[defaults.rules]\ntimes = \"as_given\"\n"),
        as_given
    );
    // A lone object keeps its times as given: a clock's answer is its time of day.
    runtime().block_on(async {
        let now = json!({"timezone": "Europe/Paris", "datetime": "2026-12-06T21:40:00+01:00"});
        let server = Canned::new([("get_current_time", Answer::Structured(now))]);
        let client = connect(server, "").await;
        let page = call(&client, "get_current_time", json!({})).await;
        let records = crate::records(envelope(&page));
        assert_eq!(records[0]["datetime"], json!("2026-12-06T21:40:00+01:00"));
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_repeated_object_is_named_only_where_its_name_stands_for_one_object() {
    let ann = json!({"login": "ann", "id": 1});
    let answer = padded(json!([
        {"id": 1, "user": ann, "reviewer": {"login": "bob", "id": 2, "site_admin": false}},
        {"id": 2, "user": ann, "reviewer": {"login": "bob", "id": 2, "site_admin": true}},
        {"id": 3, "user": ann, "reviewer": {"login": "cy", "id": 3}},
        {"id": 4, "user": {"login": "dee", "id": 4}, "reviewer": {"login": "cy", "id": 3}},
    ]));
    runtime().block_on(async {
        let server = Canned::new([("list", Answer::Structured(answer.clone()))]);
        let client = connect(server, "").await;
        let page = call(&client, "list", json!({})).await;
        let records = crate::records(envelope(&page));
        let users: Vec<&Value> = records.iter().map(|r| &r["user"]).collect();
        // `ann` comes again, so every user is shown by name, `dee` (once) too.
        assert_eq!(
            users,
            [&json!("ann"), &json!("ann"), &json!("ann"), &json!("dee")]
        );
        // Two different objects named `bob`: each shown whole; `cy` by name.
        let reviewers: Vec<Value> = records.iter().map(|r| r["reviewer"].clone()).collect();
        for (i, expected) in [0, 1].iter().map(|i| &answer[*i]["reviewer"]).enumerate() {
            let shown: Value = serde_json::from_str(reviewers[i].as_str().unwrap()).unwrap();
            assert_eq!(&shown, expected);
        }
        assert_eq!(reviewers[2], json!("cy"));
        assert_eq!(reviewers[3], json!("cy"));
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_jsonapi_document_reads_through_its_attributes_and_keeps_each_resource_as_given() {
    let doc = json!({
        "links": {"self": "https://api.example.com/articles"},
        "data": [
            {"type": "articles", "id": "1", "attributes": {"title": "JSON:API paints my bikeshed!", "body": "lorem ipsum dolor sit amet ".repeat(40)},
             "relationships": {"author": {"links": {"self": "https://api.example.com/articles/1/relationships/author"},
                                          "data": {"type": "people", "id": "9"}}},
             "links": {"self": "https://api.example.com/articles/1"}},
            {"type": "articles", "id": "2", "attributes": {"title": "Rails is Omakase", "body": "lorem ipsum dolor sit amet ".repeat(40)},
             "relationships": {"author": {"data": {"type": "people", "id": "404"}}}}
        ],
        "included": [
            {"type": "people", "id": "9", "attributes": {"firstName": "Dan", "lastName": "Gebhardt"},
             "links": {"self": "https://api.example.com/people/9"}}
        ]
    });
    runtime().block_on(async {
        let server = Canned::new([("articles", Answer::Structured(doc.clone()))]);
        let client = connect(server, "").await;
        let page = call(&client, "articles", json!({})).await;
        let env = envelope(&page);
        assert!(
            env["summary"]
                .as_str()
                .unwrap()
                .contains("JSON:API resources read through their attributes"),
            "{env}"
        );
        // The document's own fields (its links, set aside) are a record of their own.
        let records: Vec<_> = crate::records(env)
            .into_iter()
            .filter(|r| r.get("section") == Some(&json!("data")))
            .collect();
        assert_eq!(records.len(), 2, "{env}");
        assert_eq!(records[0]["title"], json!("JSON:API paints my bikeshed!"));
        let author: Value = serde_json::from_str(records[0]["author"].as_str().unwrap()).unwrap();
        assert_eq!(author, json!({"firstName": "Dan", "lastName": "Gebhardt"}));
        // A relationship `included` does not hold is shown as its linkage, not guessed.
        let unknown: Value = serde_json::from_str(records[1]["author"].as_str().unwrap()).unwrap();
        assert_eq!(unknown, json!({"type": "people", "id": "404"}));
        let records: Vec<_> = reopened_originals(&client, env)
            .await
            .into_iter()
            .filter(|r| r.get("id") == Some(&json!("1")))
            .collect();
        assert_eq!(records.len(), 1, "{records:?}");
        let original: Value =
            serde_json::from_str(records[0]["original"].as_str().unwrap()).unwrap();
        let mut given = doc["data"][0].clone();
        given["included"] = json!([doc["included"][0]]);
        assert_eq!(original, given);
        client.cancel().await.unwrap();
    });
}

/// An empty value left off the page is kept as given: `null` and `""` are not the same
/// answer, and `open_result` tells them apart.
#[test]
fn an_empty_value_left_off_the_page_is_kept_as_given() {
    let answer = padded(json!([
        {"id": 1, "assignee": null, "note": "", "tags": []},
        {"id": 2, "assignee": "ann", "note": "x", "tags": ["a"]},
    ]));
    runtime().block_on(async {
        let server = Canned::new([("list", Answer::Structured(answer.clone()))]);
        let client = connect(server, "").await;
        let page = call(&client, "list", json!({})).await;
        let env = envelope(&page);
        let records = crate::records(env);
        for key in ["assignee", "note", "tags"] {
            assert!(!records[0].contains_key(key), "{key}: {env}");
            assert!(records[1].contains_key(key), "{key}: {env}");
        }
        for (record, given) in reopened_originals(&client, env)
            .await
            .iter()
            .zip(answer.as_array().unwrap())
        {
            let original: Value =
                serde_json::from_str(record["original"].as_str().expect("JSON text")).unwrap();
            assert_eq!(&original, given);
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn with_every_rule_off_an_answer_passes_as_given() {
    let answer = issues(2);
    runtime().block_on(async {
        let server = Canned::new([("list_issues", Answer::Structured(answer.clone()))]);
        let config = "[defaults.rules]\nlinks = false\nempty = false\ntimes = \"as_given\"\nrepeated = false\njsonapi = false\n";
        let client = connect(server, config).await;
        let page = call(&client, "list_issues", json!({})).await;
        let env = envelope(&page);
        // Complete, and nothing stored: the page says nothing of what was left out.
        assert!(env.get("omitted").is_none(), "{env}");
        let records = crate::records(env);
        for (record, given) in records.iter().zip(answer.as_array().unwrap()) {
            assert_eq!(record["url"], given["url"]);
            assert_eq!(record["created_at"], given["created_at"]);
            assert_eq!(record["body"], json!(""));
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_rules_table_with_an_unknown_rule_is_refused_with_its_name() {
    let err = ShapeConfig::from_toml_str("[defaults.rules]\nlinkz = false\n").unwrap_err();
    assert!(err.to_string().contains("linkz"), "{err}");
    let err = ShapeConfig::from_toml_str("[defaults.rules]\ntimes = \"hour\"\n").unwrap_err();
    assert!(err.to_string().contains("hour"), "{err}");
}

/// The rules pay from 2,048 bytes: an answer one byte shorter passes as given (its link on
/// the page, nothing stored), one of exactly 2,048 bytes is tidied.
#[test]
fn the_rules_apply_from_two_kilobytes_and_not_one_byte_before() {
    let sized = |bytes: usize| {
        let mut answer = json!([{"id": 1, "url": "https://api.example.com/1", "pad": ""}]);
        let short = answer.to_string().len();
        answer[0]["pad"] = json!("x".repeat(bytes - short));
        assert_eq!(answer.to_string().len(), bytes);
        answer
    };
    runtime().block_on(async {
        for (bytes, tidied) in [(2_047, false), (2_048, true)] {
            let answer = sized(bytes);
            let server = Canned::new([("one", Answer::Structured(answer.clone()))]);
            let client = connect(server, "").await;
            let page = call(&client, "one", json!({})).await;
            let env = envelope(&page);
            let records = crate::records(env);
            assert_eq!(records.len(), 1, "{env}");
            assert_eq!(
                records[0].contains_key("url"),
                !tidied,
                "{bytes} bytes: {env}"
            );
            assert_eq!(env.get("omitted").is_some(), tidied, "{bytes} bytes: {env}");
            client.cancel().await.unwrap();
        }
    });
}

/// An answer of several lists: each record's `original` is the item as the tool gave it
/// (without the `section` the reading adds), the answer's own fields as given too.
#[test]
fn in_an_answer_of_several_lists_each_original_is_the_item_as_given() {
    let items = padded(json!([
        {"id": 1, "url": "https://api.example.com/1", "at": "2026-02-11T09:14:22Z"},
        {"id": 2, "url": "https://api.example.com/2", "at": "2026-02-12T09:14:22Z"},
    ]));
    let users = json!([{"id": 7, "login": "ann", "html_url": "https://example.com/ann"}]);
    let answer = json!({"total": 2, "items": items, "users": users});
    runtime().block_on(async {
        let server = Canned::new([("search", Answer::Structured(answer.clone()))]);
        let client = connect(server, "").await;
        let page = call(&client, "search", json!({})).await;
        let env = envelope(&page);
        let reopened = reopened_originals(&client, env).await;
        assert_eq!(reopened.len(), 4, "{env}");
        let originals: Vec<Value> = reopened
            .iter()
            .map(|r| serde_json::from_str(r["original"].as_str().expect("JSON text")).unwrap())
            .collect();
        assert_eq!(
            originals,
            [
                json!({"total": 2}),
                answer["items"][0].clone(),
                answer["items"][1].clone(),
                answer["users"][0].clone()
            ]
        );
        client.cancel().await.unwrap();
    });
}
