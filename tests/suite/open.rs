//! Tests: paging through the Shaper with signed cursors, storing large results behind
//! handles, the open_result companion, and configuration.

use crate::tracker;

use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use toolshape::{
    Budget, Format, Shaper,
    aggregate::Aggregate,
    config::ShapeConfig,
    cursor::{CursorCodec, CursorKeys, QueryHash},
    envelope::Status,
    fields::Day,
    handle::{HandlePolicy, Keep, MemoryStore, OpenResult},
    tokens::{Tiktoken, Tokenizer},
};
use tracker::Issue;

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"0123456789abcdef0123456789abcdef").unwrap(),
    ))
}

fn issues() -> Vec<Issue> {
    tracker::issues().into_iter().map(|(i, _)| i).collect()
}

fn today() -> Day {
    Day::parse(tracker::TODAY).unwrap()
}

#[test]
fn paging_through_the_shaper_covers_everything_once() {
    let mut rows = issues();
    rows.truncate(300);
    let codec = codec();
    let query = QueryHash::of("list_issues", &json!({"state": "any"})).unwrap();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let shaper = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(700))
            .format(Format::Table)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap();
        let page = shaper
            .shape_blocking(&rows)
            .unwrap_or_else(|e| panic!("{e}"));
        pages += 1;
        for record in page.structured()["data"].as_array().unwrap() {
            assert!(
                seen.insert(record["id"].as_str().unwrap().to_owned()),
                "duplicate {record}"
            );
        }
        assert!(page.report().tokens.text <= 700);
        match page.next() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        // Inserting newer records between pages does not disturb what follows the cursor.
        let mut newer = rows[0].clone();
        newer.id = format!("#new{pages}");
        newer.created_at = "2027-01-01T00:00:00Z".into();
        rows.push(newer);
        assert!(pages < 100, "paging did not end");
    }
    let original: HashSet<String> = issues().into_iter().take(300).map(|i| i.id).collect();
    assert!(
        original.is_subset(&seen),
        "{} records missing",
        original.difference(&seen).count()
    );
    assert!(pages > 3);
}

#[test]
fn a_bad_cursor_gets_an_error_envelope_that_says_how_to_recover() {
    let codec = codec();
    let query = QueryHash::of("list_issues", &json!({})).unwrap();
    let other = QueryHash::of("list_issues", &json!({"state": "open"})).unwrap();
    let rows = issues();
    let first = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(400))
        .call()
        .paginate(Arc::clone(&codec), query, None)
        .unwrap()
        .shape_blocking(&rows)
        .unwrap();
    let cursor = first.next().unwrap().to_owned();
    let mut tampered = cursor.clone().into_bytes();
    tampered[10] = if tampered[10] == b'A' { b'B' } else { b'A' };
    for (bad, q) in [
        (String::from_utf8(tampered).unwrap(), query),
        (cursor.clone(), other),
        ("%%%".to_owned(), query),
    ] {
        let shaper = Shaper::for_tool("list_issues");
        let err = shaper
            .call()
            .paginate(Arc::clone(&codec), q, Some(&bad))
            .unwrap_err();
        let envelope = shaper.cursor_error(&err);
        assert_eq!(envelope.status(), Status::Error);
        assert!(envelope.is_error());
        assert!(
            envelope.summary().contains("without a cursor"),
            "{}",
            envelope.summary()
        );
        assert_eq!(envelope.structured()["next"], serde_json::Value::Null);
    }
    // The genuine cursor continues where the first page stopped.
    let second = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(400))
        .call()
        .paginate(codec, query, Some(&cursor))
        .unwrap()
        .shape_blocking(&rows)
        .unwrap();
    // Page 2 holds exactly the records that follow page 1's in a naive reading of the order
    // (newest opened first, ties by id in the same direction), and its summary says which.
    let mut naive: Vec<&Issue> = rows.iter().collect();
    naive.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| b.id.cmp(&a.id))
    });
    let ids = |page: &toolshape::Shaped| -> Vec<String> {
        page.structured()["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (one, two) = (ids(&first), ids(&second));
    assert!(!one.is_empty() && !two.is_empty());
    let expected: Vec<String> = naive[one.len()..one.len() + two.len()]
        .iter()
        .map(|i| i.id.clone())
        .collect();
    assert_eq!(
        ids(&first),
        naive[..one.len()]
            .iter()
            .map(|i| i.id.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(two, expected);
    assert_eq!(rows.len(), 1_412);
    let total = "1,412";
    assert!(
        second.summary().starts_with(&format!(
            "issues {}–{} of {total}, most recent opened first",
            one.len() + 1,
            one.len() + two.len()
        )),
        "{}",
        second.summary()
    );
}

async fn stored(store: &MemoryStore) -> (toolshape::Shaped, String) {
    let health = Aggregate::new()
        .recent(Issue::FIELDS.opened, 30)
        .top(Issue::FIELDS.labels, 3);
    let policy = HandlePolicy::default();
    let shaped = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(800))
        .call()
        .shape_or_store(
            (&issues(), &()),
            Keep {
                store,
                owner: "alice",
                policy: &policy,
                aggregate: Some(&health),
                today: Some(today()),
            },
        )
        .await
        .unwrap();
    let handle = shaped.frame().omitted.handle.clone().expect("stored");
    (shaped, handle)
}

#[tokio::test]
async fn a_large_result_is_stored_and_summarised() {
    let store = MemoryStore::default();
    let (shaped, handle) = stored(&store).await;
    assert_eq!(shaped.status(), Status::Partial);
    let summary = shaped.summary();
    // The counts first, then what the aggregate adds (its count is the page's total, not
    // stated twice).
    assert!(
        summary.starts_with(
            "15 of 1,412 issues, most recent opened first; 88% opened in the last 30 days; \
             top labels: bug 312"
        ),
        "{summary}"
    );
    assert_eq!(summary.matches("1,412").count(), 1, "{summary}");
    // The handle is stated once in each channel: in the text's omitted line, with the call
    // that reopens it, and in the JSON's omitted.handle (the summary, with no cursor, points
    // there as its only way on).
    assert!(!summary.contains("h_"), "{summary}");
    assert!(
        summary.ends_with("; open_result reopens the whole result from omitted.handle"),
        "{summary}"
    );
    assert!(
        !shaped
            .text()
            .lines()
            .next()
            .unwrap()
            .contains("open_result"),
        "{}",
        shaped.text()
    );
    let text = shaped.text();
    assert_eq!(text.matches(handle.as_str()).count(), 1, "{text}");
    assert!(
        text.contains(&format!(
            "open_result handle={handle} reopens the whole result.\nnext: null"
        )),
        "{text}"
    );
    let json = shaped.structured_json();
    assert_eq!(json.matches(handle.as_str()).count(), 1, "{json}");
    let aggregate = summary.split("; ").nth(1).unwrap();
    assert!(Tiktoken::o200k_base().count(aggregate) <= 40, "{aggregate}");
    assert!(shaped.report().tokens.text <= 800);
    assert_eq!(shaped.structured()["omitted"]["handle"], handle.as_str());

    // A small result is not stored.
    let policy = HandlePolicy::default();
    let few = &issues()[..3];
    let small = Shaper::for_tool("list_issues")
        .call()
        .shape_or_store(
            (few, &()),
            Keep {
                store: &store,
                owner: "alice",
                policy: &policy,
                aggregate: None,
                today: Some(today()),
            },
        )
        .await
        .unwrap();
    assert_eq!(small.status(), Status::Ok);
    assert!(small.frame().omitted.handle.is_none());
}

#[tokio::test]
async fn open_result_filters_sorts_selects_pages_and_aggregates() {
    let store = MemoryStore::default();
    let (_, handle) = stored(&store).await;
    let open = OpenResult::new(&store, codec())
        .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(900)));
    let query = json!({
        "handle": handle,
        "filter": [{"field": "state", "op": "equals", "value": "open"}, {"field": "labels", "op": "contains", "value": "bug"}],
        "sort": {"field": "opened", "order": "desc"},
        "select": ["id", "title", "opened"],
        "page_size": 5,
        "aggregate": {"count_by": "author"}
    });
    let page = open.call_on("alice", query.clone(), today()).await;
    assert_eq!(page.status(), Status::Partial, "{}", page.text());
    let data = page.structured()["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 5);
    let expected: Vec<Issue> = {
        let mut v: Vec<Issue> = issues()
            .into_iter()
            .filter(|i| i.state == 1 && i.labels.iter().any(|l| l == "bug"))
            .collect();
        v.sort_by(|a, b| b.created_at[..10].cmp(&a.created_at[..10]));
        v
    };
    let total = expected.len();
    assert!(
        page.summary().contains(&format!("5 of {total} issues")),
        "{}",
        page.summary()
    );
    for record in &data {
        assert_eq!(
            record.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["id", "title", "opened"]
        );
        let issue = expected.iter().find(|i| i.id == record["id"]).unwrap();
        assert_eq!(record["opened"], &issue.created_at[..10]);
    }
    assert_eq!(data[0]["opened"], &expected[0].created_at[..10]);
    assert!(
        page.summary().starts_with(&format!("{total} issues, ")),
        "{}",
        page.summary()
    );
    let left_out = page.structured()["omitted"]["fields"].clone();
    assert!(
        left_out.as_array().unwrap().iter().any(|f| f == "labels"),
        "{left_out}"
    );

    // Page to the end with the cursor: every match once.
    let mut seen: HashSet<String> = data
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let mut next = page.next().map(str::to_owned);
    while let Some(cursor) = next {
        let mut q = query.clone();
        q["cursor"] = json!(cursor);
        let p = open.call_on("alice", q, today()).await;
        assert!(!p.is_error(), "{}", p.text());
        for r in p.structured()["data"].as_array().unwrap() {
            assert!(seen.insert(r["id"].as_str().unwrap().to_owned()));
        }
        next = p.next().map(str::to_owned);
    }
    assert_eq!(seen.len(), total);

    // A cursor from this query does not continue another one.
    let mut other = query.clone();
    other["page_size"] = json!(6);
    other["cursor"] = json!(page.next().unwrap());
    let refused = open.call_on("alice", other, today()).await;
    assert!(
        refused.is_error() && refused.summary().contains("different query"),
        "{}",
        refused.summary()
    );
}

#[tokio::test]
async fn open_result_refuses_clearly() {
    let store = MemoryStore::default();
    let (_, handle) = stored(&store).await;
    let open = OpenResult::new(&store, codec());
    // Another owner: not found, nothing leaked.
    let intruder = open
        .call_on("mallory", json!({"handle": handle}), today())
        .await;
    assert!(intruder.is_error());
    let missing = open
        .call_on(
            "alice",
            json!({"handle": "h_AAAAAAAAAAAAAAAAAAAAAA"}),
            today(),
        )
        .await;
    assert_eq!(intruder.summary(), missing.summary());
    // A misspelt field names the valid ones.
    let typo = open
        .call_on(
            "alice",
            json!({"handle": handle, "sort": {"field": "opend"}}),
            today(),
        )
        .await;
    assert!(typo.is_error());
    assert!(
        typo.summary().contains("did you mean `opened`"),
        "{}",
        typo.summary()
    );
    // Not a query at all.
    let junk = open.call_on("alice", json!({"handel": "x"}), today()).await;
    assert!(
        junk.is_error() && junk.summary().contains("handel"),
        "{}",
        junk.summary()
    );
    // Untrusted text keeps its provenance when reopened.
    let text = open
        .call_on("alice", json!({"handle": handle, "page_size": 2}), today())
        .await;
    assert!(text.text().contains("list_issues.title"), "{}", text.text());
}

#[test]
fn configuration_is_loaded_and_checked() {
    let json = ShapeConfig::from_json_str(r#"{"defaults": {"budget": 1500, "tokenizer": "cl100k_base"}, "tools": {"t": {"channels": "text"}}}"#)
        .unwrap();
    let shaper = json.shaper("t").unwrap();
    assert_eq!(shaper.current_budget().max_tokens(), 1500);
    assert_eq!(shaper.current_tokenizer().name(), "cl100k_base");
    let unknown_key = ShapeConfig::from_toml_str("[defaults]\nbudjet = 10\n")
        .unwrap_err()
        .to_string();
    assert!(
        unknown_key.contains("unknown field `budjet`"),
        "{unknown_key}"
    );
    let too_small = ShapeConfig::from_toml_str("[defaults]\nbudget = 3\n")
        .unwrap_err()
        .to_string();
    assert!(too_small.contains("too small"), "{too_small}");
    let bad_format = ShapeConfig::from_json_str(r#"{"tools": {"t": {"format": "yaml"}}}"#)
        .unwrap_err()
        .to_string();
    assert!(bad_format.contains("yaml"), "{bad_format}");
    assert!(
        ShapeConfig::from_path("/nonexistent/shape.toml")
            .unwrap_err()
            .to_string()
            .contains("cannot read")
    );
}

/// `open_result` answers in the rows form too (the structured profile's default): the same
/// records as the objects form, field by field, the names once in the order `select` gives,
/// and the untrusted field named.
#[tokio::test]
async fn open_result_answers_in_the_rows_form_with_the_same_records() {
    let store = MemoryStore::default();
    let (_, handle) = stored(&store).await;
    let query = json!({
        "handle": handle,
        "filter": [{"field": "state", "op": "equals", "value": "open"}],
        "select": ["id", "title", "opened"],
        "page_size": 5,
    });
    let page = |channels| {
        let open = OpenResult::new(&store, codec()).shaper(
            Shaper::for_tool("open_result")
                .budget(Budget::tokens(900))
                .channels(channels),
        );
        let query = query.clone();
        async move { open.call_on("alice", query, today()).await }
    };
    let objects = page(toolshape::ChannelPolicy::Both).await;
    let rows = page(toolshape::ChannelPolicy::Structured).await;
    let (o, r) = (objects.structured(), rows.structured());
    assert!(
        o.get("fields").is_none() && r.get("fields").is_some(),
        "{r}"
    );
    assert_eq!(r["fields"], json!(["id", "title", "opened"]));
    assert_eq!(r["untrusted"], json!(["title"]));
    assert_eq!(o["untrusted"], json!(["title"]));
    assert_eq!(crate::records(&r), crate::records(&o));
    assert_eq!(crate::records(&r).len(), 5);
    let schema = toolshape::handle::OpenResult::<toolshape::handle::MemoryStore>::output_schema();
    for key in crate::envelope_keys(&r) {
        assert!(schema["properties"].get(&key).is_some(), "{key}");
    }
    assert_eq!(
        schema["then"]["properties"]["data"]["items"]["type"],
        "array"
    );
}

/// A name or value refused because of characters a reader cannot see is quoted with them
/// escaped and said to hold them (issue 28): "unknown field `title` …; valid fields: id,
/// title" would read as a contradiction. Every place a query echoes what it was given:
/// `select`, `sort`, each filter, each aggregate, a filter's value, an unknown argument or
/// op. One character in, two in, and none (the name a reader sees, refused or accepted).
#[tokio::test]
async fn a_name_refused_for_invisible_characters_is_shown_escaped() {
    let store = MemoryStore::default();
    let (_, handle) = stored(&store).await;
    let open = OpenResult::new(&store, codec());
    // What the model reads of an error: the summary, in the text and in the structured
    // channel alike.
    let refusal = |answer: &toolshape::Shaped| -> String {
        assert!(answer.is_error(), "{}", answer.text());
        let summary = answer.summary().to_owned();
        assert_eq!(answer.structured()["summary"], summary.as_str());
        // The text channel writes the same words, escapes and all, each backslash as it is.
        assert!(answer.text().contains(&summary), "{}", answer.text());
        assert!(
            !summary.chars().any(|c| c.is_control()
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{E0000}'..='\u{E007F}')),
            "{summary:?}"
        );
        summary
    };
    let two = "ti\u{202E}tle\u{E0041}";
    let one = "ti\u{200B}tle";
    // Where a query names a field, each with the name put in.
    type Place = (&'static str, fn(&str) -> serde_json::Value);
    let places: [Place; 9] = [
        ("select", |f| json!({"select": ["id", f]})),
        ("sort", |f| json!({"sort": {"field": f}})),
        (
            "filter",
            |f| json!({"filter": [{"field": f, "op": "equals", "value": "x"}]}),
        ),
        (
            "contains",
            |f| json!({"filter": [{"field": f, "op": "contains", "value": "x"}]}),
        ),
        (
            "range",
            |f| json!({"filter": [{"field": f, "op": "range", "min": 1}]}),
        ),
        ("count_by", |f| json!({"aggregate": {"count_by": f}})),
        ("top", |f| json!({"aggregate": {"top": [{"field": f}]}})),
        (
            "recent",
            |f| json!({"aggregate": {"recent": {"field": f, "days": 7}}}),
        ),
        ("stats", |f| json!({"aggregate": {"stats": [f]}})),
    ];
    for (op, query) in &places {
        let ask = |name: &str| {
            let mut input = query(name);
            input["handle"] = json!(handle);
            input
        };
        for (name, escaped, note) in [
            (
                two,
                r"ti\u{202e}tle\u{e0041}",
                "it holds 2 invisible characters, shown escaped",
            ),
            (
                one,
                r"ti\u{200b}tle",
                "it holds 1 invisible character, shown escaped",
            ),
        ] {
            let summary = refusal(&open.call_on("alice", ask(name), today()).await);
            assert!(
                summary.contains(&format!("unknown field `{escaped}` in {op} ({note}")),
                "{op}: {summary}"
            );
            assert!(
                !summary.contains("unknown field `title`"),
                "{op}: {summary}"
            );
        }
        // Without invisible characters, a misspelt name says nothing of them.
        let summary = refusal(&open.call_on("alice", ask("titel"), today()).await);
        assert!(
            summary.contains(&format!("unknown field `titel` in {op}")),
            "{summary}"
        );
        assert!(!summary.contains("invisible"), "{summary}");
    }
    // The name a reader sees, as it is, is read (where the operation takes a text field).
    for input in [
        json!({"handle": handle, "select": ["id", "title"]}),
        json!({"handle": handle, "sort": {"field": "title"}}),
        json!({"handle": handle, "filter": [{"field": "title", "op": "contains", "value": "x"}]}),
    ] {
        let answer = open.call_on("alice", input.clone(), today()).await;
        assert!(!answer.is_error(), "{input}: {}", answer.summary());
    }

    // A filter's value: a date with a zero-width space in it is not read as the date it shows.
    let summary = refusal(
        &open
            .call_on(
                "alice",
                json!({"handle": handle, "filter": [{"field": "opened", "op": "range", "min": "2026-01-0\u{200B}1"}]}),
                today(),
            )
            .await,
    );
    assert!(
        summary.contains(
            r#"got "2026-01-0\u{200b}1" (it holds 1 invisible character, shown escaped)"#
        ),
        "{summary}"
    );
    // An argument or an op the parser does not know, quoted by serde.
    for (input, escaped) in [
        (
            json!({"handle": handle, "sel\u{200B}ect": ["id"]}),
            r"sel\u{200b}ect",
        ),
        (
            json!({"handle": handle, "filter": [{"field": "title", "op": "con\u{202E}tains", "value": "x"}]}),
            r"con\u{202e}tains",
        ),
    ] {
        let summary = refusal(&open.call_on("alice", input, today()).await);
        assert!(
            summary.contains(&format!("`{escaped}`"))
                && summary.contains("(the input holds 1 invisible character, shown escaped)"),
            "{summary}"
        );
    }
}

/// A Kubernetes pod as a `list_pods` tool shapes it.
#[derive(Debug, Clone, toolshape::ToolResult)]
#[shape(
    name = "pod",
    plural = "pods",
    prose = "{name}: {phase} on {node}, {restarts} restarts"
)]
struct Pod {
    #[shape(id)]
    name: String,
    #[shape(show)]
    phase: String,
    #[shape(show)]
    node: String,
    #[shape(rank = desc)]
    restarts: u32,
}

/// 300 pods: 206 Running, 50 Pending, 30 Failed, 14 Succeeded.
fn pods() -> Vec<Pod> {
    (0..300u32)
        .map(|i| Pod {
            name: format!("web-{i:03}-5d8c7"),
            phase: match i % 300 {
                n if n < 206 => "Running",
                n if n < 256 => "Pending",
                n if n < 286 => "Failed",
                _ => "Succeeded",
            }
            .into(),
            node: format!("node-{}", i % 7),
            restarts: (i * 37) % 11,
        })
        .collect()
}

/// The issue's fourth case: an MCP tool over 300 pods with `paginate` and `shape_or_store`
/// and an aggregate by phase, walked to the end. Every page states the aggregate of the whole
/// result, the same figures as the first (before this fix, page 2 said "Running 194", 206
/// less the 12 page 1 showed, worded as the whole result's), every page names the same
/// handle, and the store holds one result, not one per page; the handle reopens all 300.
#[tokio::test]
async fn every_page_of_a_stored_walk_states_the_whole_results_aggregate_and_one_handle() {
    let rows = pods();
    let running = rows.iter().filter(|p| p.phase == "Running").count();
    assert_eq!(running, 206);
    let by_phase = Aggregate::new().count_by("phase");
    let policy = HandlePolicy::default();
    for (rows_given, label) in [
        (true, "the whole result each call"),
        (false, "the rest after the cursor"),
    ] {
        let store = MemoryStore::default();
        let codec = codec();
        let query = QueryHash::of("list_pods", &json!({"namespace": "default"})).unwrap();
        let shaper = Shaper::for_tool("list_pods").budget(Budget::tokens(600));
        let mut cursor: Option<String> = None;
        let (mut details, mut handles, mut seen) = (Vec::new(), HashSet::new(), Vec::new());
        for page in 0..=rows.len() {
            let call = shaper
                .call()
                .paginate(Arc::clone(&codec), query, cursor.as_deref())
                .unwrap();
            // A tool over a database gives only the rows after the cursor; one over a list
            // in memory gives them all.
            let given: Vec<Pod> = match (rows_given, call.after_keyset()) {
                (false, Some(k)) => {
                    let mut ranked = rows.clone();
                    ranked.sort_by(|a, b| b.restarts.cmp(&a.restarts).then(b.name.cmp(&a.name)));
                    toolshape::__seams::cursor::after_cursor(&ranked, k).to_vec()
                }
                _ => rows.clone(),
            };
            let shaped = call
                .shape_or_store(
                    (&given, &()),
                    Keep::new(&store, "alice", &policy).aggregate(&by_phase),
                )
                .await
                .unwrap();
            let summary = shaped.summary().to_owned();
            // The aggregate: the clause after the counts and the order.
            let clause = summary
                .split("; ")
                .find(|c| c.starts_with("by phase:"))
                .unwrap_or_else(|| panic!("{label}, page {page}: no aggregate: {summary}"))
                .to_owned();
            details.push(clause);
            handles.insert(shaped.frame().omitted.handle.clone().expect("stored"));
            seen.extend(
                crate::records(&shaped.structured())
                    .iter()
                    .map(|r| r["name"].as_str().unwrap().to_owned()),
            );
            match shaped.next() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert!(details.len() > 3, "{label}: {} pages", details.len());
        // Every page says what the first said, and it is the whole result's.
        assert!(
            details.iter().all(|d| d == &details[0]),
            "{label}: {details:?}"
        );
        assert!(
            details[0].contains(&format!("Running {running}")),
            "{label}: {}",
            details[0]
        );
        assert_eq!(handles.len(), 1, "{label}: a handle per page: {handles:?}");
        assert_eq!(store.stats().created, 1, "{label}: {:?}", store.stats());
        assert_eq!(seen.len(), 300, "{label}");
        let unique: HashSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), 300, "{label}");
        // The handle reopens all 300.
        let handle = handles.into_iter().next().unwrap();
        let open = OpenResult::new(&store, codec)
            .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(4_000)))
            .call(
                "alice",
                json!({"handle": handle, "aggregate": {"count_by": "phase"}}),
            )
            .await;
        assert!(open.summary().starts_with("300 pods"), "{}", open.summary());
    }
}

/// The same walk as a plain paged call (`Call::aggregate`, no store): with the whole result
/// given each call, every page states the whole result's figures; with only the rows after
/// the cursor, every page says which part its figures cover ("of pods 13–300"), and they are
/// that part's, counted naively here from the rows given; at 600 tokens and at 150
/// alike, every pod once and no page over budget.
#[tokio::test]
async fn a_plain_paged_call_states_its_aggregate_for_the_part_it_covers() {
    let rows = pods();
    let by_phase = Aggregate::new().count_by("phase");
    let mut ranked = rows.clone();
    ranked.sort_by(|a, b| b.restarts.cmp(&a.restarts).then(b.name.cmp(&a.name)));
    for (rows_given, budget) in [(true, 600), (false, 600), (true, 150), (false, 150)] {
        let label = format!("whole {rows_given}, budget {budget}");
        let codec = codec();
        let query = QueryHash::of("list_pods", &json!({})).unwrap();
        let shaper = Shaper::for_tool("list_pods").budget(Budget::tokens(budget));
        let (mut cursor, mut seen, mut pages) = (None::<String>, Vec::new(), 0);
        loop {
            pages += 1;
            assert!(pages <= 301, "{label}: `next` never ends");
            let call = shaper
                .call()
                .paginate(Arc::clone(&codec), query, cursor.as_deref())
                .unwrap()
                .aggregate(&by_phase);
            let given: Vec<Pod> = match (rows_given, call.after_keyset()) {
                (false, Some(k)) => toolshape::__seams::cursor::after_cursor(&ranked, k).to_vec(),
                _ => rows.clone(),
            };
            let shaped = call.shape(&given).await.unwrap();
            assert!(
                shaped.report().tokens.text <= budget,
                "{label}: {}",
                shaped.text()
            );
            let summary = shaped.summary().to_owned();
            let running = given.iter().filter(|p| p.phase == "Running").count();
            let pending = given.iter().filter(|p| p.phase == "Pending").count();
            let phases: HashSet<&str> = given.iter().map(|p| p.phase.as_str()).collect();
            if phases.len() == 1 {
                // One phase holding every row given: the records say it; no list of one.
                assert!(!summary.contains("by phase:"), "{label}: {summary}");
            } else {
                let clause = summary
                    .split("; ")
                    .find(|c| c.contains("by phase:"))
                    .unwrap_or_else(|| panic!("{label}, page {pages}: no aggregate: {summary}"));
                assert!(
                    clause.contains(&format!("Running {running}"))
                        && clause.contains(&format!("Pending {pending}")),
                    "{label}, page {pages}: {clause}"
                );
                let part = given.len() < rows.len();
                let first = rows.len() - given.len() + 1;
                assert_eq!(
                    clause.starts_with(&format!("of pods {first}–300: ")),
                    part,
                    "{label}, page {pages}: says it covers a part exactly when it does: {clause}"
                );
            }
            seen.extend(
                crate::records(&shaped.structured())
                    .iter()
                    .map(|r| r["name"].as_str().unwrap().to_owned()),
            );
            match shaped.next() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        let expected: Vec<String> = ranked.iter().map(|p| p.name.clone()).collect();
        assert_eq!(seen, expected, "{label}: every pod once, in rank order");
        assert!(pages > 3, "{label}: {pages} pages");
    }
}
