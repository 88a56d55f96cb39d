//! Tests: value kinds beyond text — integer ids (GitHub issue numbers) that tie-break and page
//! numerically, string and enum legend codes (Jira status categories), the word a field's
//! absence reads as, dates from epoch numbers, untrusted lists and options.

use std::sync::Arc;
use toolshape::cursor::{CursorCodec, CursorKeys, Keyset, QueryHash};
use toolshape::{Budget, Format, Order, Shaper, ToolResult, envelope::Status, fields::KeyValue};

/// A GitHub issue as the REST API gives it: `number` is the id other tools take.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number} {title}: {comments} comments"
)]
struct Issue {
    #[shape(id)]
    number: u64,
    #[shape(show)]
    title: String,
    #[shape(rank = desc)]
    comments: u32,
}

/// A Jira project: an `i64` id and no rank, so records are ordered by id alone.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "project", plural = "projects", prose = "{id} {key}")]
struct Project {
    #[shape(id(short))]
    id: i64,
    #[shape(show)]
    key: String,
}

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"a values test key of sixteen bytes or more").unwrap(),
    ))
}

/// Follows `next` from the first page to the last with the shaper `shaper` makes, and
/// returns the `key` of every record in the order the pages showed them, the number of
/// pages, and the last page's status.
fn walk_pages<T>(
    rows: &[T],
    tool: &str,
    shaper: impl Fn() -> Shaper,
    key: &str,
) -> (Vec<serde_json::Value>, usize, Status)
where
    T: ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let codec = codec();
    let query = QueryHash::of(tool, &serde_json::json!({})).unwrap();
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    for pages in 1..=rows.len() + 1 {
        let call = shaper()
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap();
        let shaped = call.shape_blocking(rows).unwrap();
        let page = shaped.structured();
        seen.extend(
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r[key].clone()),
        );
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (seen, pages, shaped.status()),
        }
    }
    panic!("more pages than records: {seen:?}");
}

fn issues() -> Vec<Issue> {
    // Numbers across the 9/10, 99/100 and 999/1000 boundaries, where text order differs.
    let numbers = [
        1347u64, 9, 10, 100, 99, 1000, 999, 2, 11, 101, 1, 20, 200, 3, 30, 1348,
    ];
    numbers
        .iter()
        .map(|&number| Issue {
            number,
            title: format!("Crash when opening file {number}"),
            comments: (number % 3) as u32,
        })
        .collect()
}

#[test]
fn integer_id_is_a_json_number_and_prose_digits() {
    let rows = vec![Issue {
        number: 1347,
        title: "Panic in parser".into(),
        comments: 4,
    }];
    let shaped = Shaper::for_tool("list_issues")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0].to_string(),
        r#"{"number":1347,"title":"Panic in parser","comments":4}"#
    );
    assert_eq!(
        shaped.text().lines().nth(1),
        Some("#1347 Panic in parser: 4 comments")
    );
    assert_eq!(rows[0].id_key(), Some(toolshape::fields::IdKey::Int(1347)));
    assert_eq!(rows[0].id_text(), None);
    let schema = serde_json::to_value(Issue::record_schema(&mut Default::default())).unwrap();
    assert_eq!(schema["properties"]["number"]["type"], "integer");
}

#[test]
fn integer_ids_break_ties_numerically() {
    let shaped = Shaper::for_tool("list_issues")
        .format(Format::Json)
        .shape_blocking(&issues())
        .unwrap();
    let numbers: Vec<u64> = shaped.structured()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["number"].as_u64().unwrap())
        .collect();
    // comments desc (number % 3), then number desc: numerically, never "999" > "1000".
    assert_eq!(
        numbers,
        [
            200, 101, 20, 11, 2, 1348, 1000, 100, 10, 1, 1347, 999, 99, 30, 9, 3
        ]
    );
}

#[test]
fn integer_ids_page_numerically_through_next() {
    let rows = issues();
    let mut expected: Vec<u64> = rows.iter().map(|i| i.number).collect();
    expected.sort_by(|a, b| (b % 3).cmp(&(a % 3)).then(b.cmp(a)));
    for budget in [110, 150, 400] {
        let shaper = || {
            Shaper::for_tool("list_issues")
                .budget(Budget::tokens(budget))
                .format(Format::Prose)
        };
        let (seen, pages, status) = walk_pages(&rows, "list_issues", shaper, "number");
        let seen: Vec<u64> = seen.iter().map(|n| n.as_u64().unwrap()).collect();
        assert_eq!(
            status,
            if seen.len() == rows.len() {
                Status::Ok
            } else {
                Status::Partial
            }
        );
        assert_eq!(seen, expected, "budget {budget}");
        assert!(budget > 150 || pages > 2, "budget {budget}: {pages} pages");
    }
}

#[test]
fn unranked_integer_ids_order_and_page_by_value() {
    let rows: Vec<Project> = [10i64, 9, 100, -3, 11, 1, 0, 2]
        .iter()
        .map(|&id| Project {
            id,
            key: format!("P{}", id.unsigned_abs()),
        })
        .collect();
    let (seen, _, _) = walk_pages(
        &rows,
        "projects",
        || Shaper::for_tool("projects").page_size(3),
        "id",
    );
    let seen: Vec<i64> = seen.iter().map(|n| n.as_i64().unwrap()).collect();
    assert_eq!(seen, [-3, 0, 1, 2, 9, 10, 11, 100]);
}

#[test]
fn keyset_admits_integer_ids_numerically() {
    let after_nine = Keyset {
        rank: Some(KeyValue::UInt(2)),
        id: Some("9".into()),
        order: Order::Asc,
    };
    // Same rank: issue 10 comes after issue 9, issue 8 before it.
    assert!(after_nine.admits(
        Some(&KeyValue::UInt(2)),
        Some(toolshape::fields::IdKey::Int(10))
    ));
    assert!(!after_nine.admits(
        Some(&KeyValue::UInt(2)),
        Some(toolshape::fields::IdKey::Int(8))
    ));
    assert!(!after_nine.admits(
        Some(&KeyValue::UInt(2)),
        Some(toolshape::fields::IdKey::Int(9))
    ));
    // Text ids keep bytewise order.
    assert!(!after_nine.admits(Some(&KeyValue::UInt(2)), Some("10")));
    let last = &issues()[0];
    assert_eq!(Keyset::after(last).id.as_deref(), Some("1347"));
}

/// Jira's status categories, keyed by the text the REST API gives (`statusCategory.key`).
const CATEGORY: toolshape::Legend<&str> = toolshape::Legend::new(&[
    ("new", "To Do"),
    ("indeterminate", "In Progress"),
    ("done", "Done"),
]);

#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "{key}: {category}, resolution {resolution}"
)]
struct JiraIssue {
    #[shape(id)]
    key: String,
    #[shape(legend = CATEGORY, rename = "category")]
    status_category: String,
    #[shape(legend = CATEGORY)]
    resolution: Option<String>,
}

#[test]
fn string_codes_read_words_and_unknown_codes_are_marked() {
    let rows = vec![
        JiraIssue {
            key: "PROJ-7".into(),
            status_category: "indeterminate".into(),
            resolution: Some("done".into()),
        },
        JiraIssue {
            key: "PROJ-8".into(),
            status_category: "undefined".into(),
            resolution: None,
        },
    ];
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"].to_string(),
        r#"[{"key":"PROJ-7","category":"In Progress","resolution":"Done"},{"key":"PROJ-8","category":"unknown category undefined","resolution":null}]"#
    );
    let lines: Vec<&str> = shaped.text().lines().collect();
    assert_eq!(lines[1], "PROJ-7: In Progress, resolution Done");
    assert!(
        lines[2].starts_with("PROJ-8: unknown category undefined, resolution "),
        "{}",
        lines[2]
    );
    assert_eq!(
        shaped.report().diagnostics.unknown_codes["category"],
        ["undefined"]
    );
}

/// A legend of the user's own over text codes that knows only `word` (a lookup by
/// `&'static str`, not by a field's `String`): a `String` field read through it cannot be
/// looked up, so each code reads as unknown and is counted — never a guessed or empty word.
struct Categories;

impl toolshape::fields::LegendSource for Categories {
    type Code = &'static str;

    fn word(&self, code: &&'static str) -> Option<&str> {
        (*code == "done").then_some("Done")
    }

    fn words(&self) -> Vec<String> {
        vec!["Done".into()]
    }
}

#[derive(Debug, Clone, ToolResult)]
#[shape(name = "issue", plural = "issues", prose = "{key}: {category}")]
struct OwnLegendIssue {
    #[shape(id)]
    key: String,
    #[shape(legend = Categories, rename = "category")]
    status_category: String,
}

#[test]
fn a_source_without_text_lookups_marks_every_text_code_unknown() {
    let rows = vec![OwnLegendIssue {
        key: "PROJ-9".into(),
        status_category: "done".into(),
    }];
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0]["category"],
        "unknown category done"
    );
    assert_eq!(
        shaped.text().lines().nth(1),
        Some("PROJ-9: unknown category done")
    );
    assert_eq!(
        shaped.report().diagnostics.unknown_codes["category"],
        ["done"]
    );
}

/// GitHub's `state_reason`, written with its API (serde) names by `Display`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StateReason {
    Completed,
    NotPlanned,
    Reopened,
    Duplicate,
}

impl std::fmt::Display for StateReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StateReason::Completed => "completed",
            StateReason::NotPlanned => "not_planned",
            StateReason::Reopened => "reopened",
            StateReason::Duplicate => "duplicate",
        })
    }
}

const REASON: toolshape::Legend<StateReason> = toolshape::Legend::new(&[
    (StateReason::Completed, "fixed"),
    (StateReason::NotPlanned, "won't fix"),
    (StateReason::Reopened, "reopened"),
]);

#[derive(Debug, Clone, ToolResult)]
#[shape(name = "issue", plural = "issues")]
struct ClosedIssue {
    #[shape(id)]
    number: u64,
    #[shape(legend = REASON, rename = "reason")]
    state_reason: Option<StateReason>,
}

#[test]
fn enum_codes_read_words_and_unknown_variants_print_their_api_name() {
    let rows = vec![
        ClosedIssue {
            number: 12,
            state_reason: Some(StateReason::NotPlanned),
        },
        ClosedIssue {
            number: 13,
            state_reason: Some(StateReason::Duplicate),
        },
        ClosedIssue {
            number: 14,
            state_reason: None,
        },
    ];
    let shaped = Shaper::for_tool("closed_issues")
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"].to_string(),
        r#"[{"number":12,"reason":"won't fix"},{"number":13,"reason":"unknown reason duplicate"},{"number":14,"reason":null}]"#
    );
    assert_eq!(
        shaped.report().diagnostics.unknown_codes["reason"],
        ["duplicate"]
    );
}

/// A GitHub issue with fields that are often absent, as the REST API names them.
#[allow(dead_code)] // the skipped fields are what the test is about
#[derive(Debug, Clone, serde::Deserialize, ToolResult)]
#[serde(rename_all = "camelCase")]
#[shape(
    name = "issue",
    plural = "issues",
    absent = "no {field}",
    prose = "#{number} {title}: {assignee}, {labels}, milestone {milestone}, closed {closed}"
)]
struct TriageIssue {
    #[shape(id)]
    number: u64,
    #[shape(show)]
    title: String,
    #[shape(show, absent = "unassigned")]
    assignee: Option<String>,
    #[shape(show)]
    labels: Vec<String>,
    #[shape(show, absent = "none set")]
    milestone: Option<String>,
    #[shape(date, rename = "closed")]
    closed_at: Option<String>,
    #[shape(skip)]
    node_id: String,
    #[shape(skip)]
    #[serde(rename = "author_association")]
    author_association: String,
    #[shape(skip)]
    html_url: String,
}

fn triage_rows() -> Vec<TriageIssue> {
    vec![
        TriageIssue {
            number: 1347,
            title: "Panic in parser".into(),
            assignee: None,
            labels: vec![],
            milestone: None,
            closed_at: None,
            node_id: "I_kwDOA".into(),
            author_association: "NONE".into(),
            html_url: "https://github.com/o/r/issues/1347".into(),
        },
        TriageIssue {
            number: 1348,
            title: "Docs typo".into(),
            assignee: Some("octocat".into()),
            labels: vec!["docs".into(), "good first issue".into()],
            milestone: Some("v2.1".into()),
            closed_at: Some("2026-02-14T16:02:07Z".into()),
            node_id: "I_kwDOB".into(),
            author_association: "MEMBER".into(),
            html_url: "https://github.com/o/r/issues/1348".into(),
        },
    ]
}

#[test]
fn absence_reads_as_a_word_in_prose_and_table_and_null_in_json() {
    let rows = triage_rows();
    let prose = Shaper::for_tool("list_issues")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    let lines: Vec<&str> = prose.text().lines().collect();
    assert_eq!(
        lines[1],
        "#1347 Panic in parser: unassigned, no labels, milestone none set, closed no closed"
    );
    assert_eq!(
        lines[2],
        "#1348 Docs typo: octocat, docs, good first issue, milestone v2.1, closed Feb 14"
    );
    // The API's names for what this view leaves out: serde's `rename_all` and `rename`.
    assert_eq!(
        lines[3],
        "omitted: none; this view leaves out nodeId, author_association, htmlUrl."
    );
    assert_eq!(
        prose.structured()["data"][0].to_string(),
        r#"{"number":1347,"title":"Panic in parser","assignee":null,"labels":[],"milestone":null,"closed":null}"#
    );
    assert_eq!(
        prose.structured()["omitted"]["fields"],
        serde_json::json!(["nodeId", "author_association", "htmlUrl"])
    );
    let table = Shaper::for_tool("list_issues")
        .format(Format::Table)
        .shape_blocking(&rows)
        .unwrap();
    let lines: Vec<&str> = table.text().lines().collect();
    assert_eq!(
        lines[1],
        "number | title | assignee | labels | milestone | closed"
    );
    assert_eq!(
        lines[2],
        "1347 | Panic in parser | unassigned | no labels | none set | no closed"
    );
    assert_eq!(TriageIssue::PROJECTION.fields[2].absent, Some("unassigned"));
}

/// Without `absent`, `None` stays the bare `null` and an empty list `none` (unchanged output).
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number}: {assignee}, {labels}"
)]
struct PlainIssue {
    #[shape(id)]
    number: u64,
    #[shape(show)]
    assignee: Option<String>,
    #[shape(show)]
    labels: Vec<String>,
}

#[test]
fn without_a_word_absence_reads_null_and_none() {
    let rows = vec![PlainIssue {
        number: 7,
        assignee: None,
        labels: vec![],
    }];
    let shaped = Shaper::for_tool("list_issues")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(shaped.text().lines().nth(1), Some("#7: null, none"));
}

macro_rules! wide {
    ($($skipped:ident),*) => {
        /// A Jira issue with most of its 40 fields left out.
        #[allow(dead_code)]
        #[derive(Debug, Clone, Default, ToolResult)]
        #[shape(name = "issue", plural = "issues", prose = "{key}")]
        struct WideIssue {
            #[shape(id)]
            key: String,
            $(#[shape(skip)] $skipped: Option<String>,)*
        }
    };
}

wide!(
    f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
    f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33, f34, f35, f36, f37
);

#[test]
fn wide_types_name_five_left_out_fields_and_count_the_rest() {
    let rows = vec![WideIssue {
        key: "PROJ-1".into(),
        ..Default::default()
    }];
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.text().lines().nth(2),
        Some("omitted: none; this view leaves out f01, f02, f03, f04, f05, and 32 more.")
    );
    assert_eq!(
        shaped.structured()["omitted"]["fields"],
        serde_json::json!(["f01", "f02", "f03", "f04", "f05", "and 32 more"])
    );
    // All 37 are still in the description.
    assert_eq!(WideIssue::PROJECTION.skipped.len(), 37);
}

/// A Jira issue as its REST API gives it: `created` in epoch milliseconds, `updated` in
/// seconds, labels and an environment written by reporters.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "{key}: {labels}; {environment}; opened {created}, updated {updated}"
)]
struct JiraTicket {
    #[shape(id)]
    key: String,
    #[shape(untrusted(max_tokens = 6))]
    labels: Vec<String>,
    #[shape(untrusted(max_tokens = 20), absent = "no environment given")]
    environment: Option<String>,
    #[shape(date(epoch_millis))]
    created: i64,
    #[shape(date(epoch_seconds), rank = desc)]
    updated: Option<i64>,
}

fn jira_tickets() -> Vec<JiraTicket> {
    vec![
        JiraTicket {
            key: "PROJ-41".into(),
            labels: vec!["checkout".into(), "pay\u{200b}ments".into()],
            environment: Some("Safari 17 on macOS".into()),
            created: 1_770_768_000_000,   // 2026-02-11T00:00:00Z
            updated: Some(1_771_084_927), // 2026-02-14T16:02:07Z
        },
        JiraTicket {
            key: "PROJ-42".into(),
            labels: [
                "bug", "ui", "docs", "api", "auth", "perf", "ios", "web", "db",
            ]
            .map(String::from)
            .to_vec(),
            environment: None,
            created: -86_400_000, // 1969-12-31
            // Milliseconds written where seconds belong: not a date, shown as given.
            updated: Some(1_771_084_927_113),
        },
        JiraTicket {
            key: "PROJ-43".into(),
            labels: vec![],
            environment: None,
            created: 1_770_768_000_000,
            updated: None,
        },
    ]
}

#[test]
fn epoch_seconds_and_millis_read_as_dates() {
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Json)
        .shape_blocking(&jira_tickets())
        .unwrap();
    let data = &shaped.structured()["data"];
    // Ranked by `updated` descending: the unreadable number ranks as a number, null last.
    assert_eq!(data[0]["key"], "PROJ-42");
    assert_eq!(data[0]["created"], "1969-12-31");
    assert_eq!(data[0]["updated"], "1771084927113");
    assert_eq!(data[1]["created"], "2026-02-11");
    assert_eq!(data[1]["updated"], "2026-02-14");
    assert_eq!(data[2]["updated"], serde_json::Value::Null);
    assert_eq!(shaped.report().diagnostics.unparsed_dates, 1);
}

#[test]
fn untrusted_lists_share_one_cap_and_options_stay_null() {
    let rows = jira_tickets();
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    let data = &shaped.structured()["data"];
    // Sanitised item by item (the zero-width space is gone).
    assert_eq!(
        data[1]["labels"],
        serde_json::json!(["checkout", "payments"])
    );
    // Nine labels under a cap of 6 tokens: six shown, the rest counted.
    assert_eq!(
        data[0]["labels"],
        serde_json::json!([
            "bug",
            "ui",
            "docs",
            "api",
            "auth",
            "perf",
            "[cut: 3 more items]"
        ])
    );
    assert_eq!(data[0]["environment"], serde_json::Value::Null);
    let lines: Vec<&str> = shaped.text().lines().collect();
    assert_eq!(
        lines[0],
        "ok: 3 issues, most recent updated first; «…» is untrusted text from jira_search.labels, jira_search.environment."
    );
    assert_eq!(
        lines[2],
        "PROJ-41: «checkout», «payments»; «Safari 17 on macOS»; opened 2026-02-11, updated 2026-02-14"
    );
    assert!(
        lines[3].starts_with("PROJ-43: none; no environment given; opened 2026-02-11"),
        "{}",
        lines[3]
    );
    // The bound holds: at most 6 + 20 attacker tokens a record.
    assert_eq!(
        toolshape::__seams::untrusted::record_cap(JiraTicket::PROJECTION),
        Some(26)
    );
    let schema = serde_json::to_value(JiraTicket::record_schema(&mut Default::default())).unwrap();
    assert_eq!(schema["properties"]["labels"]["type"], "array");
}

/// Dates from `jiff` (feature `jiff`): an instant (its UTC date), a zoned time (its own
/// date) and a civil date.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "release",
    plural = "releases",
    prose = "{tag}: published {published}, local {local}, due {due}"
)]
struct Release {
    #[shape(id)]
    tag: String,
    #[shape(date, rank = desc)]
    published: jiff::Timestamp,
    #[shape(date)]
    local: jiff::Zoned,
    #[shape(date)]
    due: Option<jiff::civil::Date>,
}

#[test]
fn jiff_dates_read_as_dates() {
    let published: jiff::Timestamp = "2026-02-14T23:30:00Z".parse().unwrap();
    let local = published.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(9)));
    let rows = vec![
        Release {
            tag: "v2.1.0".into(),
            published,
            local,
            due: Some(jiff::civil::date(2026, 3, 1)),
        },
        Release {
            tag: "v2.0.9".into(),
            published: "2025-12-31T08:00:00Z".parse().unwrap(),
            local: jiff::Timestamp::from_second(1_767_168_000)
                .unwrap()
                .to_zoned(jiff::tz::TimeZone::UTC),
            due: None,
        },
    ];
    let shaped = Shaper::for_tool("releases")
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"].to_string(),
        r#"[{"tag":"v2.1.0","published":"2026-02-14","local":"2026-02-15","due":"2026-03-01"},{"tag":"v2.0.9","published":"2025-12-31","local":"2025-12-31","due":null}]"#
    );
}

/// A `uuid::Uuid` id (feature `uuid`): written hyphenated, shortened by `id(short)`, ordered
/// as its text and paged through a cursor.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "event", plural = "events", prose = "{id}: {kind}")]
struct Event {
    #[shape(id(short))]
    id: uuid::Uuid,
    #[shape(show)]
    kind: String,
}

#[test]
fn uuid_ids_are_text_shortened_and_page_in_order() {
    let ids = [
        "9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90",
        "0a28f7b3-0000-4000-8000-000000000001",
        "13deef86-1111-4111-8111-111111111111",
    ];
    let rows: Vec<Event> = ids
        .iter()
        .map(|id| Event {
            id: uuid::Uuid::parse_str(id).unwrap(),
            kind: "push".into(),
        })
        .collect();
    assert_eq!(
        rows[0].id_key().map(|k| k.to_string()).as_deref(),
        Some("9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90")
    );
    let (seen, _, _) = walk_pages(
        &rows,
        "events",
        || Shaper::for_tool("events").page_size(2),
        "id",
    );
    let seen: Vec<&str> = seen.iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(seen, ["0a28f7b3", "13deef86", "9f3a71c4"]);
}

/// The issues in SQLite, as a tool reading its rows from the database has them.
fn issues_db() -> rusqlite::Connection {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    db.execute_batch(
        "CREATE TABLE issues (number INTEGER PRIMARY KEY, title TEXT NOT NULL, comments INTEGER NOT NULL)",
    )
    .unwrap();
    for i in &issues() {
        db.execute(
            "INSERT INTO issues VALUES (?1, ?2, ?3)",
            rusqlite::params![i.number as i64, i.title, i.comments],
        )
        .unwrap();
    }
    db
}

/// The `limit` issues after `keyset` (`None`: from the start) in rank order, read with the
/// cursor's predicate and `ORDER BY` pushed into SQL.
fn issues_after(db: &rusqlite::Connection, keyset: Option<&Keyset>, limit: usize) -> Vec<Issue> {
    use rusqlite::types::Value as SqlValue;
    let sql_value = |v: &KeyValue| match v {
        KeyValue::Int(i) => SqlValue::Integer(*i),
        KeyValue::UInt(u) => SqlValue::Integer(i64::try_from(*u).unwrap()),
        KeyValue::Str(s) => SqlValue::Text(s.clone()),
        other => panic!("unexpected key {other:?}"),
    };
    let start = Keyset::start(Order::Desc);
    let keyset = keyset.unwrap_or(&start);
    let (mut sql, mut params) = (
        "SELECT number, title, comments FROM issues".to_owned(),
        Vec::new(),
    );
    if !keyset.is_start() {
        let p = keyset.sql_predicate("comments", "number").unwrap();
        sql.push_str(&format!(" WHERE {}", p.sql));
        params.extend(p.params.iter().map(sql_value));
    }
    sql.push_str(&format!(
        " ORDER BY {} LIMIT {limit}",
        keyset.sql_order_by("comments", "number").unwrap()
    ));
    db.prepare(&sql)
        .unwrap()
        .query_map(rusqlite::params_from_iter(params.iter()), |r| {
            Ok(Issue {
                number: r.get::<_, i64>(0)? as u64,
                title: r.get(1)?,
                comments: r.get(2)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The order the issues come in, ranked by comments (most first), ties by number.
const ISSUES_RANKED: [u64; 16] = [
    200, 101, 20, 11, 2, 1348, 1000, 100, 10, 1, 1347, 999, 99, 30, 9, 3,
];

/// Keyset paging pushed into SQL (SQLite) for integer ids: the cursor's bound and the
/// database's `ORDER BY` agree, so issue 10 follows issue 9 on the next page.
#[test]
fn integer_ids_page_through_sql_keysets() {
    let db = issues_db();
    let codec = codec();
    let query = QueryHash::of("list_issues", &serde_json::json!({})).unwrap();
    let mut cursor: Option<String> = None;
    let mut seen: Vec<u64> = Vec::new();
    for _ in 0..=ISSUES_RANKED.len() {
        let call = Shaper::for_tool("list_issues")
            .page_size(3)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap();
        let page_rows = issues_after(&db, call.after_keyset(), 4);
        let shaped = call.shape_blocking(&page_rows).unwrap();
        let page = shaped.structured();
        seen.extend(
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["number"].as_u64().unwrap()),
        );
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ISSUES_RANKED);
}

/// The same database behind an MCP tool through `mcp::Pages`: the tool opens the call
/// (`Pages::call_for`), reads its rows from where the cursor stands and states the total it
/// counted, and `Pages::shape` makes the page. Every issue once, in rank order, under every
/// client's profile, the total stated on each page true (read from the text the model reads),
/// and a cursor of the wrong type answered with its remedy, not a first page.
#[test]
fn a_tool_reading_rows_from_the_cursors_place_pages_through_mcp_pages() {
    use toolshape::mcp::Pages;
    let db = issues_db();
    let total: i64 = db
        .query_row("SELECT COUNT(*) FROM issues", [], |r| r.get(0))
        .unwrap();
    let total = u64::try_from(total).unwrap();
    let pages = Pages::new(CursorKeys::new([5u8; 32]).unwrap());
    let shaper = Shaper::for_tool("list_issues").page_size(3);
    let rt = tokio::runtime::Runtime::new().unwrap();
    for client in [
        Some("claude-code"),
        Some("open-webui"),
        Some("codex-mcp-client"),
        None,
    ] {
        let mut cursor: Option<String> = None;
        let mut seen: Vec<u64> = Vec::new();
        for _ in 0..=ISSUES_RANKED.len() {
            let args = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }),
                None => serde_json::json!({}),
            };
            let page = match pages.call_for(&shaper, client, &args) {
                Ok(call) => {
                    let rows = issues_after(&db, call.after_keyset(), 4);
                    rt.block_on(pages.shape(call.total(total), &rows))
                }
                Err(page) => *page,
            };
            assert!(!page.is_error(), "{client:?}: {}", page.text());
            let structured = page.structured();
            // Objects or rows, whichever form the client's profile gets.
            let numbers: Vec<u64> = crate::paging::data_keys(&structured, "number")
                .iter()
                .map(|n| n.parse::<u64>().unwrap())
                .collect();
            // What the summary states, read back ("3 of 16 issues", "issues 4–6 of 16").
            let stated = crate::walk::read_summary(page.summary(), "issue", "issues");
            assert_eq!(stated.total, Some(total), "{client:?}: {}", page.summary());
            let places = match stated.counts {
                crate::walk::Counted::First(n) => (1, n),
                crate::walk::Counted::Range(a, b) => (a, b),
                other => panic!("{client:?}: {other:?} in {}", page.summary()),
            };
            let before = seen.len() as u64;
            assert_eq!(
                places,
                (before + 1, before + numbers.len() as u64),
                "{client:?}: {}",
                page.summary()
            );
            seen.extend(numbers);
            match structured["next"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen, ISSUES_RANKED, "{client:?}");
    }
    let wrong = match pages.call_for(&shaper, None, &serde_json::json!({ "cursor": 5 })) {
        Ok(_) => panic!("a number taken for a cursor"),
        Err(page) => *page,
    };
    assert!(wrong.is_error(), "{}", wrong.text());
}

/// An issue as GitHub's REST API gives it: `body` is `""` (or absent) for an issue with no
/// description, and `labels` empty.
#[derive(Debug, Clone, serde::Deserialize, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number}: {body}; {labels}; {milestone}"
)]
struct Described {
    #[shape(id)]
    number: u64,
    #[shape(untrusted(max_tokens = 40), empty_is_absent, absent = "no description")]
    #[serde(default)]
    body: String,
    #[shape(from = labels[].name, empty_is_absent, absent = "no labels")]
    labels: Vec<Label>,
    #[shape(show, empty_is_absent, absent = "no milestone")]
    milestone: Option<String>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Label {
    name: String,
}

/// `empty_is_absent` on borrowed fields: `&str` and `&Vec<_>` read as the owned ones do.
#[derive(ToolResult)]
#[shape(name = "note", plural = "notes")]
struct BorrowedNote<'a> {
    #[shape(id)]
    n: u64,
    #[shape(show, empty_is_absent, absent = "no text")]
    text: &'a str,
    #[shape(show, empty_is_absent, absent = "no tags")]
    tags: &'a Vec<String>,
}

#[test]
fn a_borrowed_empty_text_or_list_reads_as_absent_and_a_full_one_as_it_is() {
    let (none, some) = (Vec::new(), vec!["bug".to_owned()]);
    let rows = [
        BorrowedNote {
            n: 1,
            text: "",
            tags: &none,
        },
        BorrowedNote {
            n: 2,
            text: "saved",
            tags: &some,
        },
    ];
    let shaped = Shaper::for_tool("notes")
        .budget(Budget::tokens(2_000))
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    let data = crate::records(&shaped.structured());
    assert_eq!(data[0]["text"], serde_json::Value::Null);
    assert_eq!(data[0]["tags"], serde_json::Value::Null);
    assert_eq!(data[1]["text"], "saved");
    assert_eq!(data[1]["tags"], serde_json::json!(["bug"]));
}

/// `empty_is_absent`: an empty text or list reads as absent, with its absence word, in every
/// format and in the schema; a value that is not empty, and one of a single space, reads as it
/// is.
#[test]
fn an_empty_text_or_list_reads_as_absent_where_the_field_says_so() {
    let rows: Vec<Described> = serde_json::from_value(serde_json::json!([
        {"number": 1, "body": "", "labels": [], "milestone": ""},
        {"number": 2, "labels": [{"name": ""}, {"name": "bug"}], "milestone": null},
        {"number": 3, "body": " ", "labels": [{"name": "docs"}], "milestone": "v2"},
        {"number": 4, "body": "Crash on save", "labels": [], "milestone": "v3"},
    ]))
    .unwrap();
    let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(2_000));
    let json = shaper
        .clone()
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    let data = crate::records(&json.structured());
    let at = |i: usize, key: &str| data[i][key].clone();
    // JSON: null where the value is empty; what is there, as it is.
    assert_eq!(at(0, "body"), serde_json::Value::Null);
    assert_eq!(at(1, "body"), serde_json::Value::Null);
    assert_eq!(at(2, "body"), " ");
    assert_eq!(at(3, "body"), "Crash on save");
    assert_eq!(at(0, "labels"), serde_json::Value::Null);
    // An empty name in a list of names is absent; the list is not.
    assert_eq!(at(1, "labels"), serde_json::json!([null, "bug"]));
    assert_eq!(at(3, "labels"), serde_json::Value::Null);
    assert_eq!(at(0, "milestone"), serde_json::Value::Null);
    assert_eq!(at(1, "milestone"), serde_json::Value::Null);
    assert_eq!(at(2, "milestone"), "v2");
    // Text: the absence words.
    let prose = shaper
        .clone()
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    let lines: Vec<&str> = prose.text().lines().collect();
    assert!(
        lines[1].starts_with("#1: no description; no labels; no milestone"),
        "{}",
        prose.text()
    );
    assert!(
        lines[2].starts_with("#2: no description; "),
        "{}",
        prose.text()
    );
    assert!(lines[2].ends_with("; no milestone"), "{}", prose.text());
    assert!(
        lines[4].contains("Crash on save") && lines[4].contains("no labels"),
        "{}",
        prose.text()
    );
    let table = shaper.format(Format::Table).shape_blocking(&rows).unwrap();
    assert!(
        table
            .text()
            .lines()
            .nth(2)
            .unwrap()
            .contains("no description | no labels | no milestone"),
        "{}",
        table.text()
    );
    // The schema allows null for each.
    let schema = toolshape::schema::envelope::<Described>().to_value();
    let record = &schema["else"]["properties"]["data"]["items"]["properties"];
    for field in ["body", "labels", "milestone"] {
        assert!(
            record[field].to_string().contains("\"null\""),
            "{field}: {}",
            record[field]
        );
    }
}
