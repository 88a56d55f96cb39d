//! Tests: aggregation and the `open_result` query language, over projected rows.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use toolshape::__seams::aggregate::{Compute, FieldMeta, Row, ValueType};
use toolshape::__seams::record::FieldRole;
use toolshape::{
    __seams::handle::query::{Filter, OpenQuery, QueryError},
    Order, ToolResult,
    aggregate::{Aggregate, AggregateError, FieldError},
    fields::Day,
    tokens::{Tiktoken, Tokenizer},
};

fn rows(values: Vec<Value>) -> Vec<Row> {
    values
        .into_iter()
        .filter_map(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .collect()
}

fn today() -> Day {
    Day::from_days_since_epoch(20_514) // 2026-03-02
}

fn issue_fields() -> Vec<FieldMeta> {
    vec![
        FieldMeta::id("id"),
        FieldMeta::untrusted("title"),
        FieldMeta::legend("state"),
        FieldMeta::list("labels"),
        FieldMeta::date("opened"),
        FieldMeta::number("comments"),
        FieldMeta::resolved("assignee"),
    ]
}

/// Six issues, small enough to count by hand.
fn small_set() -> Vec<Row> {
    rows(vec![
        json!({"id": "iss_1", "title": "Crash when saving", "state": "open", "labels": ["bug", "ui"],
               "opened": "2026-03-01", "comments": 4, "assignee": "Ana"}),
        json!({"id": "iss_2", "title": "Docs: typo in README", "state": "closed", "labels": ["docs"],
               "opened": "2026-01-10", "comments": 0, "assignee": null}),
        json!({"id": "iss_3", "title": "Dark mode contrast", "state": "open", "labels": ["ui"],
               "opened": "2026-02-20", "comments": 12, "assignee": "Ben"}),
        json!({"id": "iss_4", "title": "crash on startup", "state": "pending", "labels": ["bug"],
               "opened": "2026-02-28", "comments": 7, "assignee": "Ana"}),
        json!({"id": "iss_5", "title": "Slow search", "state": "open", "labels": [],
               "opened": "someday", "comments": 2, "assignee": "Ben"}),
        json!({"id": "iss_6", "title": "Export to CSV", "state": null, "labels": ["bug", "docs"],
               "opened": "2025-12-01", "comments": null, "assignee": null}),
    ])
}

#[test]
fn small_set_exact_numbers_and_sentence() {
    let result = Aggregate::new()
        .count_by("state")
        .top("labels", 2)
        .recent("opened", 30)
        .stats("comments")
        .compute(&issue_fields(), &small_set(), today())
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "total": 6,
            "recent": {"field": "opened", "days": 30, "count": 3, "share": 0.5, "undated": 1},
            "count_by": {"field": "state", "counts": [["open", 3], ["closed", 1], ["pending", 1]], "none": 1},
            "top": [{"field": "labels", "values": [["bug", 3], ["docs", 2]], "none": 1}],
            "stats": [{"field": "comments", "count": 5, "min": 0, "max": 12, "mean": 5.0, "none": 1}]
        })
    );
    assert_eq!(
        result.sentence("issues"),
        "6 issues, 50% opened in the last 30 days (1 undated), \
         by state: open 3, closed 1, pending 1, no state 1; \
         top labels: bug 3, docs 2, no labels 1; \
         comments: min 0, max 12, mean 5 (1 missing)"
    );
}

#[test]
fn recent_window_is_today_and_the_days_before_it() {
    let fields = [FieldMeta::date("opened")];
    let data = rows(vec![
        json!({"opened": "2026-03-02"}), // today: in
        json!({"opened": "2026-02-01"}), // 29 days back: in (30-day window)
        json!({"opened": "2026-01-31"}), // 30 days back: out
        json!({"opened": "2026-03-03"}), // tomorrow: counted as after today
        json!({"opened": null}),
        json!({}),
    ]);
    let r = Aggregate::new()
        .recent("opened", 30)
        .compute(&fields, &data, today())
        .unwrap();
    let recent = r.recent.as_ref().unwrap();
    assert_eq!((recent.count, recent.undated, recent.future), (2, 2, 1));
    assert_eq!(
        r.sentence("issues"),
        "6 issues, 33% opened in the last 30 days (2 undated, 1 after today)"
    );
    let one_day = Aggregate::new()
        .recent("opened", 1)
        .compute(&fields, &data, today())
        .unwrap();
    assert_eq!(
        one_day.sentence("issues"),
        "6 issues, 17% opened in the last day (2 undated, 1 after today)"
    );
}

#[test]
fn empty_and_single_results_read_naturally() {
    let fields = issue_fields();
    let spec = Aggregate::new().recent("opened", 30).top("labels", 3);
    let none = spec.compute(&fields, &[], today()).unwrap();
    assert_eq!(none.sentence("issues"), "0 issues");
    let one = spec.compute(&fields, &small_set()[..1], today()).unwrap();
    assert_eq!(
        one.sentence_with("issue", "issues"),
        "1 issue, 100% opened in the last 30 days, top labels: bug 1, ui 1"
    );
}

/// Builds the seed's data set exactly: 1,412 issues, 1,229 opened in the last 30 days, labels
/// bug 312, docs 120, ui 98 and every other label on fewer issues.
fn seed_set() -> Vec<Row> {
    (0..1412u32)
        .map(|i| {
            let back = if i < 1229 { i % 30 } else { 30 + i % 90 };
            let opened = Day::from_days_since_epoch(today().days_since_epoch() - i64::from(back));
            let label = match i {
                0..312 => "bug".to_owned(),
                312..432 => "docs".to_owned(),
                432..530 => "ui".to_owned(),
                _ => format!("area-{}", i % 10),
            };
            let mut row = Row::new();
            row.insert("opened".into(), json!(opened.to_string()));
            row.insert("labels".into(), json!([label]));
            row
        })
        .collect()
}

#[test]
fn seed_sentence_is_exact_and_under_40_tokens() {
    let fields = [FieldMeta::list("labels"), FieldMeta::date("opened")];
    let result = Aggregate::new()
        .recent("opened", 30)
        .top("labels", 3)
        .compute(&fields, &seed_set(), today())
        .unwrap();
    let sentence = result.sentence("issues");
    assert_eq!(
        sentence,
        "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98"
    );
    let tokens = Tiktoken::o200k_base().count(&sentence);
    assert!(tokens <= 40, "{tokens} tokens: {sentence}");
    let json = serde_json::to_string(&result).unwrap();
    assert_eq!(
        json,
        r#"{"total":1412,"recent":{"field":"opened","days":30,"count":1229,"share":0.87},"top":[{"field":"labels","values":[["bug",312],["docs",120],["ui",98]]}]}"#
    );
}

/// A small deterministic generator (Knuth's MMIX LCG).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// 1,412 issues with every awkward case: missing and null values, unknown legend codes,
/// duplicate and empty labels, unparseable and future dates, float comments.
fn lcg_set() -> Vec<Row> {
    let mut rng = Lcg(0x5eed);
    let labels = ["bug", "docs", "ui", "perf", "security"];
    let titles = [
        "Crash on save",
        "Docs typo",
        "UI glitch",
        "Slow search",
        "Login fails",
    ];
    let names = ["Ana", "Ben", "Chen", "Dita"];
    (0..1412u64)
        .map(|i| {
            let mut row = Row::new();
            row.insert("id".into(), json!(format!("iss_{i:04}")));
            let title = titles[rng.below(5) as usize];
            row.insert("title".into(), json!(format!("{title} #{i}")));
            let state = match rng.below(20) {
                0 => Value::Null,
                1..=11 => json!("open"),
                12..=17 => json!("closed"),
                18 => json!("pending"),
                _ => json!("unknown status 7"),
            };
            row.insert("state".into(), state);
            if rng.below(15) != 0 {
                let n = rng.below(4);
                let list: Vec<&str> = (0..n).map(|_| labels[rng.below(5) as usize]).collect();
                row.insert("labels".into(), json!(list));
            }
            let opened = match rng.below(100) {
                0 | 1 => Value::Null,
                2 => json!("last tuesday"),
                3 => json!(Day::from_days_since_epoch(today().days_since_epoch() + 3).to_string()),
                _ => {
                    let back = rng.below(120) as i64;
                    json!(Day::from_days_since_epoch(today().days_since_epoch() - back).to_string())
                }
            };
            row.insert("opened".into(), opened);
            let comments = match rng.below(100) {
                0..=3 => Value::Null,
                4 => json!(2.5),
                _ => json!(rng.below(50)),
            };
            row.insert("comments".into(), comments);
            let assignee = match rng.below(4) {
                0 => Value::Null,
                _ => json!(names[rng.below(4) as usize]),
            };
            row.insert("assignee".into(), assignee);
            row
        })
        .collect()
}

#[test]
fn lcg_counts_add_up_and_match_a_brute_force_count() {
    let data = lcg_set();
    let result = Aggregate::new()
        .count_by("state")
        .top("labels", 5)
        .top("assignee", 2)
        .recent("opened", 30)
        .stats("comments")
        .compute(&issue_fields(), &data, today())
        .unwrap();
    assert_eq!(result.total, 1412);

    // count_by: every record in exactly one bucket, buckets equal a hand count.
    let by = result.count_by.as_ref().unwrap();
    let listed: u64 = by.counts.iter().map(|(_, c)| c).sum();
    assert_eq!(
        listed + by.none + by.other.map_or(0, |o| o.count),
        result.total
    );
    let mut states: BTreeMap<String, u64> = BTreeMap::new();
    for row in &data {
        if let Some(Value::String(s)) = row.get("state") {
            *states.entry(s.clone()).or_default() += 1;
        }
    }
    assert_eq!(by.counts.len(), states.len());
    for (value, count) in &by.counts {
        assert_eq!(states.get(value.as_str().unwrap()), Some(count));
    }
    assert_eq!(
        by.none,
        data.iter().filter(|r| r["state"].is_null()).count() as u64
    );
    assert!(by.counts.windows(2).all(|w| w[0].1 >= w[1].1));

    // top labels: records per label, each record once; none counts records without labels.
    let labels = &result.top[0];
    let mut per_label: BTreeMap<String, u64> = BTreeMap::new();
    let mut unlabelled = 0;
    for row in &data {
        let mut seen: Vec<&str> = row
            .get("labels")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        seen.sort_unstable();
        seen.dedup();
        if seen.is_empty() {
            unlabelled += 1;
        }
        for l in seen {
            *per_label.entry(l.to_owned()).or_default() += 1;
        }
    }
    let mut expected: Vec<(String, u64)> = per_label.into_iter().collect();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let got: Vec<(String, u64)> = labels
        .values
        .iter()
        .map(|(v, c)| (v.as_str().unwrap_or_default().to_owned(), *c))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(labels.none, unlabelled);
    assert!(unlabelled > 0);

    // top assignee, k = 2: a scalar field; nulls are `none`.
    let assignee = &result.top[1];
    assert_eq!(assignee.values.len(), 2);
    let assigned: u64 = data.iter().filter(|r| r["assignee"].is_string()).count() as u64;
    assert_eq!(assignee.none, result.total - assigned);

    // recent: in window + before window + undated + future = total.
    let recent = result.recent.as_ref().unwrap();
    let day = |r: &Row| r["opened"].as_str().and_then(Day::parse);
    let t = today().days_since_epoch();
    let in_window = data
        .iter()
        .filter_map(day)
        .filter(|d| (t - 29..=t).contains(&d.days_since_epoch()))
        .count() as u64;
    let older = data
        .iter()
        .filter_map(day)
        .filter(|d| d.days_since_epoch() < t - 29)
        .count() as u64;
    assert_eq!(recent.count, in_window);
    assert_eq!(
        recent.count + older + recent.undated + recent.future,
        result.total
    );
    assert!(recent.undated > 0 && recent.future > 0);

    // stats: min, max, mean of the numbers; nulls counted apart.
    let numbers: Vec<f64> = data.iter().filter_map(|r| r["comments"].as_f64()).collect();
    let stats = &result.stats[0];
    assert_eq!(stats.count, numbers.len() as u64);
    assert_eq!(stats.none, result.total - stats.count);
    let mean = numbers.iter().sum::<f64>() / numbers.len() as f64;
    assert!((stats.mean.unwrap() - mean).abs() < 1e-4);
    assert_eq!(stats.min.as_ref().and_then(|n| n.as_f64()), Some(0.0));
    assert_eq!(stats.max.as_ref().and_then(|n| n.as_f64()), Some(49.0));

    let sentence = result.sentence("issues");
    assert!(sentence.starts_with("1,412 issues, "), "{sentence}");
    assert!(sentence.contains("no labels "), "{sentence}");
}

fn field_error(err: AggregateError) -> FieldError {
    match err {
        AggregateError::Field(e) => e,
        other => panic!("expected a field error, got {other}"),
    }
}

#[test]
fn aggregate_errors_name_the_fields_that_would_work() {
    let fields = issue_fields();
    let msg = |spec: Aggregate| spec.validate(&fields).unwrap_err().to_string();
    assert_eq!(
        msg(Aggregate::new().top("lables", 3)),
        "unknown field `lables` in top (did you mean `labels`?); \
         top works on: title, state, labels, opened, comments, assignee"
    );
    assert_eq!(
        msg(Aggregate::new().recent("title", 30)),
        "recent cannot use `title`, untrusted text; recent works on: opened"
    );
    assert_eq!(
        msg(Aggregate::new().stats("state")),
        "stats cannot use `state`, a legend field; stats works on: comments"
    );
    assert_eq!(
        msg(Aggregate::new().count_by("labels")),
        "count_by cannot use `labels`, a list field; \
         count_by works on: title, state, opened, comments, assignee"
    );
    assert_eq!(
        msg(Aggregate::new().top("id", 3)),
        "top cannot use `id`, the id field; top works on: title, state, labels, opened, comments, assignee"
    );
    assert_eq!(
        msg(Aggregate::new().top("labels", 0)),
        "top `labels` asks for k = 0; use 1 to 50"
    );
    assert_eq!(
        msg(Aggregate::new().recent("opened", 0)),
        "recent asks for 0 days; use 1 to 36500"
    );
    assert_eq!(
        msg(Aggregate::new().stats("comments").stats("comments")),
        "stats names `comments` twice; name it once"
    );
    let no_dates = [FieldMeta::text("title")];
    assert_eq!(
        Aggregate::new()
            .recent("title", 7)
            .validate(&no_dates)
            .unwrap_err()
            .to_string(),
        "recent cannot use `title`, a text field; no field in this result works with recent"
    );
    // The typed error carries the same facts.
    let err = field_error(
        Aggregate::new()
            .stats("lables")
            .validate(&fields)
            .unwrap_err(),
    );
    assert_eq!(
        err,
        FieldError::Unknown {
            op: "stats",
            field: "lables".into(),
            suggestion: Some("labels".into()),
            valid: vec!["comments".into()],
        }
    );
}

#[test]
fn aggregate_spec_from_json_rejects_unknown_keys_and_defaults_k() {
    let spec: Aggregate = serde_json::from_str(r#"{"top": [{"field": "labels"}]}"#).unwrap();
    assert_eq!(spec, Aggregate::new().top("labels", 3));
    let err = serde_json::from_str::<Aggregate>(r#"{"count": "state"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `count`"), "{err}");
}

fn hits(query: OpenQuery) -> Vec<usize> {
    query.validate(&issue_fields()).unwrap().apply(&small_set())
}

#[test]
fn query_filters_match_exactly_what_they_say() {
    let q = || OpenQuery::new("h");
    assert_eq!(hits(q().filter(Filter::equals("state", "open"))), [0, 2, 4]);
    assert_eq!(hits(q().filter(Filter::contains("title", "CRASH"))), [0, 3]);
    assert_eq!(
        hits(q().filter(Filter::contains("labels", "Bug"))),
        [0, 3, 5]
    );
    // contains on a list matches whole elements, not substrings of them.
    assert_eq!(
        hits(q().filter(Filter::contains("labels", "bu"))),
        Vec::<usize>::new()
    );
    assert_eq!(
        hits(q().filter(Filter::at_least("opened", "2026-02-01"))),
        [0, 2, 3]
    );
    assert_eq!(
        hits(q().filter(Filter::between("opened", "2026-01-10", "2026-02-20"))),
        [1, 2]
    );
    assert_eq!(
        hits(q().filter(Filter::between("comments", 2, 7))),
        [0, 3, 4]
    );
    assert_eq!(hits(q().filter(Filter::at_most("comments", 0))), [1]);
    assert_eq!(
        hits(q().filter(Filter::equals("assignee", Value::Null))),
        [1, 5]
    );
    assert_eq!(
        hits(q().filter(Filter::equals("comments", json!(12.0)))),
        [2]
    );
    assert_eq!(
        hits(q().filter(Filter::equals("labels", json!(["bug", "docs"])))),
        [5]
    );
    assert_eq!(
        hits(q().filter(Filter::equals("opened", "2026-03-01T08:00:00Z"))),
        [0]
    );
    assert_eq!(
        hits(
            q().filter(Filter::contains("labels", "bug"))
                .filter(Filter::equals("state", "open"))
        ),
        [0]
    );
}

#[test]
fn query_sort_is_stable_and_puts_missing_values_last() {
    let q = || OpenQuery::new("h");
    assert_eq!(hits(q().sort("comments", Order::Desc)), [2, 3, 0, 4, 1, 5]);
    assert_eq!(hits(q().sort("comments", Order::Asc)), [1, 4, 0, 3, 2, 5]);
    // Ties keep the stored order in both directions.
    assert_eq!(hits(q().sort("assignee", Order::Asc)), [0, 3, 2, 4, 1, 5]);
    assert_eq!(hits(q().sort("assignee", Order::Desc)), [2, 4, 0, 3, 1, 5]);
    // Dates by day; "someday" is no date and stays after the dates.
    assert_eq!(hits(q().sort("opened", Order::Desc)), [0, 3, 2, 1, 5, 4]);
    assert_eq!(hits(q().sort("opened", Order::Asc)), [5, 1, 2, 3, 0, 4]);
    assert_eq!(
        hits(
            q().filter(Filter::equals("state", "open"))
                .sort("title", Order::Asc)
        ),
        [0, 2, 4]
    );
}

#[test]
fn query_select_keeps_the_named_fields_and_reports_the_rest() {
    let data = small_set();
    let valid = OpenQuery::new("h")
        .select(["title", "id", "title"])
        .validate(&issue_fields())
        .unwrap();
    assert_eq!(
        valid.select(),
        Some(&["title".to_owned(), "id".to_owned()][..])
    );
    assert_eq!(
        valid.left_out(),
        ["state", "labels", "opened", "comments", "assignee"]
    );
    assert_eq!(
        Value::Object(valid.project_row(&data[1])),
        json!({"id": "iss_2", "title": "Docs: typo in README"})
    );
    let all = OpenQuery::new("h").validate(&issue_fields()).unwrap();
    assert_eq!(all.project_row(&data[1]), data[1]);
    assert!(all.left_out().is_empty());
    assert_eq!(all.page_size(), 20);
}

#[test]
fn query_aggregate_counts_only_the_matching_rows() {
    let valid = OpenQuery::new("h")
        .filter(Filter::equals("state", "open"))
        .aggregate(Aggregate::new().top("labels", 3))
        .validate(&issue_fields())
        .unwrap();
    let rows = small_set();
    let result = valid
        .compute_aggregate(&rows, &valid.apply(&rows), today())
        .unwrap();
    assert_eq!(
        result.sentence("issues"),
        "3 issues, top labels: ui 2, bug 1, no labels 1"
    );
}

#[test]
fn query_agrees_with_a_brute_force_filter_and_sort_on_1412_rows() {
    let data = lcg_set();
    let valid = OpenQuery::new("h")
        .filter(Filter::contains("labels", "bug"))
        .filter(Filter::between("comments", 10, 30))
        .sort("opened", Order::Desc)
        .validate(&issue_fields())
        .unwrap();
    let got = valid.apply(&data);
    let mut expected: Vec<usize> = (0..data.len())
        .filter(|&i| {
            let r = &data[i];
            let bug = r
                .get("labels")
                .and_then(Value::as_array)
                .is_some_and(|a| a.contains(&json!("bug")));
            let c = r["comments"].as_f64();
            bug && c.is_some_and(|c| (10.0..=30.0).contains(&c))
        })
        .collect();
    // Dated rows newest first, then undated text, then nulls; ties by index.
    expected.sort_by_key(|&i| {
        let opened = &data[i]["opened"];
        match opened.as_str().and_then(Day::parse) {
            Some(d) => (0, -d.days_since_epoch(), i),
            None if opened.is_string() => (1, 0, i),
            None => (2, 0, i),
        }
    });
    assert!(got.len() > 50, "{} hits", got.len());
    assert_eq!(got, expected);
}

fn query_error(json: &str) -> String {
    match OpenQuery::from_json(json).and_then(|q| q.validate(&issue_fields())) {
        Ok(_) => panic!("expected an error for {json}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn query_errors_say_what_to_write_instead() {
    assert_eq!(
        query_error(
            r#"{"handle":"h","filter":[{"field":"lables","op":"contains","value":"bug"}]}"#
        ),
        "unknown field `lables` in contains (did you mean `labels`?); \
         contains works on: id, title, state, labels, assignee"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"lables","op":"equals","value":"bug"}]}"#),
        "unknown field `lables` in filter (did you mean `labels`?); \
         valid fields: id, title, state, labels, opened, comments, assignee"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"comments","op":"range","min":"3"}]}"#),
        "range on `comments` needs a number as min; got \"3\""
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"opened","op":"range","max":20260301}]}"#),
        "range on `opened` needs a date as YYYY-MM-DD for max; got 20260301"
    );
    assert_eq!(
        query_error(
            r#"{"handle":"h","filter":[{"field":"opened","op":"range","min":"2026-02-30"}]}"#
        ),
        "range on `opened` needs a date as YYYY-MM-DD for min; got \"2026-02-30\""
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"title","op":"range","min":1}]}"#),
        "range cannot use `title`, untrusted text; range works on: opened, comments"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"opened","op":"range"}]}"#),
        "range on `opened` needs min, max or both"
    );
    assert_eq!(
        query_error(
            r#"{"handle":"h","filter":[{"field":"comments","op":"range","min":9,"max":2}]}"#
        ),
        "range on `comments` has min 9 above max 2; swap them"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"comments","op":"equals","value":"12"}]}"#),
        "equals on `comments` needs a number or null; got \"12\""
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"labels","op":"equals","value":"bug"}]}"#),
        "equals on `labels` needs a list or null (to match one element, use contains); got \"bug\""
    );
    assert_eq!(
        query_error(
            r#"{"handle":"h","filter":[{"field":"comments","op":"contains","value":"1"}]}"#
        ),
        "contains cannot use `comments`, a number field; \
         contains works on: id, title, state, labels, assignee"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","filter":[{"field":"title","op":"contains","value":""}]}"#),
        "contains on `title` needs some text to look for"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","sort":{"field":"labels"}}"#),
        "sort cannot use `labels`, a list field; \
         sort works on: id, title, state, opened, comments, assignee"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","select":[]}"#),
        "select names no fields; name at least one, or leave select out to show all"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","page_size":500}"#),
        "page_size 500 is out of range; use 1 to 200 and page on with the cursor"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","page_size":0}"#),
        "page_size 0 is out of range; use 1 to 200 and page on with the cursor"
    );
    assert_eq!(
        query_error(r#"{"handle":"h","aggregate":{"stats":["title"]}}"#),
        "stats cannot use `title`, untrusted text; stats works on: comments"
    );
    let bad_key = query_error(r#"{"handle":"h","filters":[]}"#);
    assert!(
        bad_key.starts_with(
            "the query does not fit open_result's input schema: unknown field `filters`"
        ),
        "{bad_key}"
    );
    let bad_op =
        query_error(r#"{"handle":"h","filter":[{"field":"state","op":"is","value":"open"}]}"#);
    assert!(bad_op.contains("unknown variant `is`"), "{bad_op}");
    // The typed error, for code that branches on it.
    let err = OpenQuery::new("h")
        .page_size(201)
        .validate(&issue_fields())
        .unwrap_err();
    assert_eq!(err, QueryError::PageSize { given: 201 });
}

#[test]
fn input_schema_documents_the_query() {
    let schema = serde_json::to_value(OpenQuery::input_schema()).unwrap();
    assert_eq!(schema["required"], json!(["handle"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    let props = &schema["properties"];
    assert_eq!(props["page_size"]["maximum"], json!(200));
    assert!(
        props["filter"]["description"]
            .as_str()
            .unwrap()
            .contains("every filter")
    );
    // Filters are one of three shapes, told apart by `op`; each rejects unknown keys.
    let text = schema.to_string();
    for op in ["equals", "contains", "range"] {
        assert!(
            text.contains(&format!(r#""const":"{op}""#)),
            "{op} missing: {text}"
        );
    }
    // What the model reads is written for it: no Rust examples leak in from the doc comments.
    assert!(
        !text.contains("```") && !text.contains("toolshape"),
        "{text}"
    );
    let filter = &schema["$defs"]["Filter"];
    let variants = filter["oneOf"].as_array().unwrap();
    assert_eq!(variants.len(), 3);
    assert!(
        variants
            .iter()
            .all(|v| v["additionalProperties"] == json!(false))
    );
    assert_eq!(
        schema["$defs"]["Sort"]["properties"]["order"]["enum"],
        json!(["asc", "desc"])
    );
}

#[derive(ToolResult)]
#[shape(name = "issue", plural = "issues")]
#[allow(dead_code)]
struct Issue {
    #[shape(id(short))]
    id: String,
    #[shape(untrusted(max_tokens = 20))]
    title: String,
    #[shape(show)]
    labels: Vec<String>,
    #[shape(show)]
    comments: u32,
    #[shape(date, rename = "opened")]
    created_at: String,
}

#[test]
fn field_meta_comes_from_the_projection_and_the_rows() {
    let mut fields = FieldMeta::from_projection(Issue::PROJECTION);
    let roles: Vec<(&str, FieldRole, ValueType)> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.role, f.value))
        .collect();
    assert_eq!(
        roles,
        [
            ("id", FieldRole::Id, ValueType::Text),
            ("title", FieldRole::Untrusted, ValueType::Text),
            ("labels", FieldRole::Show, ValueType::Any),
            ("comments", FieldRole::Show, ValueType::Any),
            ("opened", FieldRole::Date, ValueType::Text),
        ]
    );
    let data = rows(vec![
        json!({"labels": ["bug"], "comments": 3}),
        json!({"labels": null, "comments": 1.5}),
    ]);
    FieldMeta::infer_values(&mut fields, &data);
    assert_eq!(fields[2].value, ValueType::List);
    assert_eq!(fields[3].value, ValueType::Number);
    // Mixed values stay `Any`.
    let mut mixed = vec![FieldMeta::new("x", FieldRole::Show, ValueType::Any)];
    FieldMeta::infer_values(&mut mixed, &rows(vec![json!({"x": 1}), json!({"x": "a"})]));
    assert_eq!(mixed[0].value, ValueType::Any);
}

/// A JSON leaf of any type, biased towards values this query language uses.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u32..300).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "20[0-9]{2}-[01][0-9]-[0-3][0-9]".prop_map(Value::String),
        prop::sample::select(vec!["open", "bug", "Crash", "asc", "desc", "", "someday"])
            .prop_map(|s| json!(s)),
        "\\PC{0,12}".prop_map(Value::String),
        prop::collection::vec("[a-z]{0,4}", 0..3).prop_map(|v| json!(v)),
    ]
}

/// A field name: mostly real ones, some typos and junk.
fn field_name() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "id", "title", "state", "labels", "opened", "comments", "assignee",
        ])
        .prop_map(|s| json!(s)),
        1 => prop::sample::select(vec!["lables", "Opened", "", "comment"]).prop_map(|s| json!(s)),
        1 => leaf(),
    ]
}

/// An object with each of `parts` present or not.
fn object(parts: Vec<(&'static str, BoxedStrategy<Value>)>) -> impl Strategy<Value = Value> {
    let present = prop::collection::vec(any::<bool>(), parts.len());
    let values: Vec<_> = parts
        .into_iter()
        .map(|(k, v)| v.prop_map(move |v| (k, v)))
        .collect();
    (present, values).prop_map(|(present, values)| {
        let map = present
            .into_iter()
            .zip(values)
            .filter(|(keep, _)| *keep)
            .map(|(_, (k, v))| (k.to_owned(), v))
            .collect();
        Value::Object(map)
    })
}

/// Mostly `typed`, sometimes any JSON leaf.
fn mostly(typed: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![6 => typed, 1 => leaf()].boxed()
}

/// Queries that are mostly well formed, so validation, filtering, sorting and aggregation
/// all run; some with wrong types or junk keys; and arbitrary text, so the parser sees
/// garbage too.
fn json_ish() -> impl Strategy<Value = String> {
    let text = || {
        prop::sample::select(vec!["bug", "Crash", "OPEN", "a", "docs", "2026-02-20"])
            .prop_map(|s| json!(s))
    };
    let bound = || {
        prop_oneof![
            Just(None),
            mostly(prop_oneof![
                (-5i64..20).prop_map(|n| json!(n)),
                "2026-0[1-3]-[0-2][0-9]".prop_map(Value::String),
            ])
            .prop_map(Some),
        ]
    };
    let filter = prop_oneof![
        3 => (field_name(), mostly(text()))
            .prop_map(|(f, v)| json!({"field": f, "op": "equals", "value": v})),
        3 => (field_name(), mostly(text()))
            .prop_map(|(f, v)| json!({"field": f, "op": "contains", "value": v})),
        3 => (field_name(), bound(), bound()).prop_map(|(f, min, max)| {
            let mut m = json!({"field": f, "op": "range"});
            if let (Value::Object(m), Some(min)) = (&mut m, min) {
                m.insert("min".into(), min);
            }
            if let (Value::Object(m), Some(max)) = (&mut m, max) {
                m.insert("max".into(), max);
            }
            m
        }),
        1 => object(vec![
            ("field", field_name().boxed()),
            ("op", leaf().boxed()),
            ("value", leaf().boxed()),
            ("min", leaf().boxed()),
        ]),
    ];
    let order = mostly(prop::sample::select(vec!["asc", "desc"]).prop_map(|s| json!(s)));
    let sort = object(vec![("field", field_name().boxed()), ("order", order)]);
    let top = object(vec![
        ("field", field_name().boxed()),
        ("k", mostly((0u32..60).prop_map(|n| json!(n)))),
    ]);
    let recent = object(vec![
        ("field", field_name().boxed()),
        ("days", mostly((0u32..100).prop_map(|n| json!(n)))),
    ]);
    let aggregate = object(vec![
        ("count_by", field_name().boxed()),
        (
            "top",
            prop::collection::vec(top, 0..3)
                .prop_map(Value::Array)
                .boxed(),
        ),
        ("recent", recent.boxed()),
        (
            "stats",
            prop::collection::vec(field_name(), 0..3)
                .prop_map(Value::Array)
                .boxed(),
        ),
    ]);
    let query = object(vec![
        (
            "filter",
            prop::collection::vec(filter, 0..4)
                .prop_map(Value::Array)
                .boxed(),
        ),
        (
            "select",
            prop::collection::vec(field_name(), 0..4)
                .prop_map(Value::Array)
                .boxed(),
        ),
        ("sort", sort.boxed()),
        ("page_size", mostly((0u32..300).prop_map(|n| json!(n)))),
        ("cursor", mostly("[a-z0-9]{0,8}".prop_map(Value::String))),
        ("aggregate", aggregate.boxed()),
    ]);
    prop_oneof![
        8 => query.prop_map(|q| {
            let mut q = q;
            if let Value::Object(m) = &mut q {
                m.insert("handle".into(), json!("h"));
            }
            q.to_string()
        }),
        1 => leaf().prop_map(|v| v.to_string()),
        1 => "\\PC{0,64}",
    ]
}

proptest! {
    #![proptest_config(crate::proptest_config(1024))]

    #[test]
    fn any_input_is_a_query_or_an_error_never_a_panic(text in json_ish()) {
        let data = small_set();
        match OpenQuery::from_json(&text).and_then(|q| q.validate(&issue_fields())) {
            Ok(valid) => {
                let hits = valid.apply(&data);
                prop_assert!(hits.windows(2).all(|w| w[0] != w[1]));
                for &i in &hits {
                    prop_assert!(valid.matches(&data[i]));
                    let row = valid.project_row(&data[i]);
                    if let Some(kept) = valid.select() {
                        prop_assert!(row.keys().all(|k| kept.contains(k)));
                    }
                }
                let misses = (0..data.len()).filter(|&i| !hits.contains(&i));
                for i in misses {
                    prop_assert!(!valid.matches(&data[i]));
                }
                if let Some(result) = valid.compute_aggregate(&data, &hits, today()) {
                    prop_assert_eq!(result.total, hits.len() as u64);
                    if let Some(by) = &result.count_by {
                        let listed: u64 = by.counts.iter().map(|(_, c)| c).sum();
                        prop_assert_eq!(listed + by.none + by.other.map_or(0, |o| o.count), result.total);
                    }
                    let sentence = result.sentence("issues");
                    let head = format!("{} issues", result.total);
                    prop_assert!(sentence.starts_with(&head), "{}", sentence);
                    prop_assert!(serde_json::to_string(&result).is_ok());
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn percent_never_claims_all_or_none_wrongly(total in 1u64..100_000, pick in any::<u64>()) {
        let count = pick % (total + 1);
        let p = toolshape::__seams::aggregate::percent(count, total);
        prop_assert_eq!(p == "0%", count == 0);
        prop_assert_eq!(p == "100%", count == total);
    }
}

/// One well-formed filter on the small set's fields, and what a naive reading of it keeps.
fn naive_filter() -> impl Strategy<Value = (Value, fn(&Value, &Value) -> bool)> {
    // A date as the query reads it: `YYYY-MM-DD`, compared as text (same width, so in order).
    fn day(v: &Value) -> Option<&str> {
        v.as_str().filter(|s| {
            s.len() == 10
                && s.as_bytes()[4] == b'-'
                && s.as_bytes()[7] == b'-'
                && s[..4].bytes().all(|b| b.is_ascii_digit())
        })
    }
    fn equals(field: &Value, want: &Value) -> bool {
        match (field, want) {
            (Value::Null, Value::Null) => true,
            (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (a, b) => a == b,
        }
    }
    fn contains(field: &Value, needle: &Value) -> bool {
        let needle = needle.as_str().unwrap().to_lowercase();
        match field {
            Value::String(s) => s.to_lowercase().contains(&needle),
            Value::Array(items) => items
                .iter()
                .any(|i| i.as_str().is_some_and(|s| s.to_lowercase() == needle)),
            _ => false,
        }
    }
    fn range(field: &Value, bounds: &Value) -> bool {
        let (min, max) = (&bounds["min"], &bounds["max"]);
        if let Some(n) = field.as_f64() {
            return min.as_f64().is_none_or(|m| n >= m) && max.as_f64().is_none_or(|m| n <= m);
        }
        match day(field) {
            Some(d) => day(min).is_none_or(|m| d >= m) && day(max).is_none_or(|m| d <= m),
            None => false,
        }
    }
    let state = prop::sample::select(vec![
        json!("open"),
        json!("closed"),
        json!("pending"),
        json!("OPEN"),
        Value::Null,
    ]);
    let needle = prop::sample::select(vec![
        "crash", "CRASH", "mode", "s", "readme", "bug", "UI", "docs", "x",
    ]);
    let dates = prop::sample::select(vec![
        "2025-12-01",
        "2026-01-10",
        "2026-02-20",
        "2026-02-28",
        "2026-03-01",
        "2026-03-02",
    ]);
    prop_oneof![
        state.prop_map(|v| (
            json!({"field": "state", "op": "equals", "value": v}),
            equals as fn(&Value, &Value) -> bool
        )),
        (0i64..13).prop_map(|n| (
            json!({"field": "comments", "op": "equals", "value": n}),
            equals as fn(&Value, &Value) -> bool
        )),
        dates.clone().prop_map(|d| (
            json!({"field": "opened", "op": "equals", "value": d}),
            equals as fn(&Value, &Value) -> bool
        )),
        (
            prop::sample::select(vec!["title", "labels", "state", "assignee"]),
            needle
        )
            .prop_map(|(f, n)| (
                json!({"field": f, "op": "contains", "value": n}),
                contains as fn(&Value, &Value) -> bool
            )),
        (
            proptest::option::of(0i64..13),
            proptest::option::of(0i64..13)
        )
            .prop_filter("a bound", |(a, b)| a.is_some() || b.is_some())
            .prop_map(|(a, b)| {
                let (a, b) = match (a, b) {
                    (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                    ab => ab,
                };
                let mut f = json!({"field": "comments", "op": "range"});
                if let Some(a) = a {
                    f["min"] = json!(a);
                }
                if let Some(b) = b {
                    f["max"] = json!(b);
                }
                (f, range as fn(&Value, &Value) -> bool)
            }),
        (
            proptest::option::of(dates.clone()),
            proptest::option::of(dates)
        )
            .prop_filter("a bound", |(a, b)| a.is_some() || b.is_some())
            .prop_map(|(a, b)| {
                let (a, b) = match (a, b) {
                    (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                    ab => ab,
                };
                let mut f = json!({"field": "opened", "op": "range"});
                if let Some(a) = a {
                    f["min"] = json!(a);
                }
                if let Some(b) = b {
                    f["max"] = json!(b);
                }
                (f, range as fn(&Value, &Value) -> bool)
            }),
    ]
}

proptest! {
    #![proptest_config(crate::proptest_config(512))]

    /// Well-formed filters are accepted, and a query keeps exactly the rows a naive reading
    /// of its filters keeps (all of them must hold), checked against the rows as written, not
    /// against the query's own `matches`.
    #[test]
    fn well_formed_filters_keep_what_a_naive_reading_keeps(filters in prop::collection::vec(naive_filter(), 0..4)) {
        let data = small_set();
        let query = json!({"handle": "h", "filter": filters.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()});
        let valid = OpenQuery::from_json(&query.to_string())
            .and_then(|q| q.validate(&issue_fields()))
            .unwrap_or_else(|e| panic!("{query} was refused: {e}"));
        let mut hits = valid.apply(&data);
        hits.sort_unstable();
        let expected: Vec<usize> = (0..data.len())
            .filter(|&i| filters.iter().all(|(filter, keeps)| {
                let field = data[i].get(filter["field"].as_str().unwrap()).unwrap_or(&Value::Null);
                let arg = if filter["op"] == "range" { filter } else { &filter["value"] };
                keeps(field, arg)
            }))
            .collect();
        prop_assert_eq!(hits, expected, "{}", query);
    }
}

/// Words no stemmer folds into one another and no stop list holds: a record mentions a query
/// word exactly when one of its title's words is that word.
const SEARCH_WORDS: [&str; 8] = [
    "apple", "bridge", "cobalt", "delta", "ember", "falcon", "granite", "harbor",
];

proptest! {
    #![proptest_config(crate::proptest_config(256))]

    /// `open_result`'s `query`, alone, with a filter, with a sort and with an aggregate: the
    /// records kept are exactly those whose title holds a query word (split here, not by the
    /// code under test) among those the filter keeps, each once; with a sort, in its order;
    /// the aggregate counts the same records.
    #[test]
    fn a_query_keeps_exactly_the_records_that_mention_its_words(
        titles in prop::collection::vec(prop::collection::vec(0..SEARCH_WORDS.len(), 0..6), 0..40),
        query in prop::collection::vec(0..SEARCH_WORDS.len(), 1..4),
        mode in 0..4u8,
    ) {
        let rows: Vec<Row> = titles
            .iter()
            .enumerate()
            .map(|(i, words)| {
                let title: Vec<&str> = words.iter().map(|&w| SEARCH_WORDS[w]).collect();
                let state = if i % 3 == 0 { "closed" } else { "open" };
                json!({"id": i, "title": title.join(" "), "state": state, "comments": (i * 7) % 5})
                    .as_object()
                    .cloned()
                    .unwrap()
            })
            .collect();
        let words: Vec<&str> = query.iter().map(|&w| SEARCH_WORDS[w]).collect();
        let mut input = json!({"handle": "h", "query": words.join(" ")});
        match mode {
            1 => input["filter"] = json!([{"field": "state", "op": "equals", "value": "open"}]),
            2 => input["sort"] = json!({"field": "comments", "order": "desc"}),
            3 => input["aggregate"] = json!({"count_by": "state"}),
            _ => {}
        }
        let valid = OpenQuery::from_value(input).unwrap().validate(&issue_fields()).unwrap();
        let hits = valid.apply(&rows);
        let want: Vec<usize> = (0..rows.len())
            .filter(|&i| mode != 1 || rows[i]["state"] == "open")
            .filter(|&i| {
                rows[i]["title"]
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .any(|w| words.contains(&w))
            })
            .collect();
        let mut sorted = hits.clone();
        sorted.sort_unstable();
        prop_assert_eq!(&sorted, &want);
        if mode == 2 {
            let comments: Vec<u64> = hits.iter().map(|&i| rows[i]["comments"].as_u64().unwrap()).collect();
            prop_assert!(comments.windows(2).all(|w| w[0] >= w[1]), "{:?}", comments);
        }
        if mode == 3 {
            let result = valid.compute_aggregate(&rows, &hits, today()).unwrap();
            prop_assert_eq!(result.total, want.len() as u64);
        }
    }
}
