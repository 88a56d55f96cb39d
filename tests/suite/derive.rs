//! Tests: the derive's projection contract, exact output for the seed's ticket, resolution,
//! legends, ids, dates (the compile errors are the derive crate's own UI cases,
//! `shape-derive/tests/ui/`).

use crate::desk;

use desk::{Directory, OrgId, Orgs, Ticket, UserId, Users};
use std::collections::HashMap;
use std::sync::Mutex;
use toolshape::{
    Budget, Format, Legend, Shaper, ToolResult,
    fields::LoadedLegend,
    resolve::{Resolve, ResolveError},
};

fn seed_tickets() -> Vec<Ticket> {
    desk::parse_page(desk::PAGE).expect("the seed page parses")
}

#[test]
fn seed_ticket_exact_json_and_prose() {
    let tickets = seed_tickets();
    let shaped = Shaper::for_tool("search_tickets")
        .format(Format::Prose)
        .shape_blocking((&tickets[..1], &Directory::seed()))
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0].to_string(),
        r#"{"id":"tkt_9f3a71c4","subject":"Card declined at checkout","status":"open","priority":"high","assignee":"Dana Cole","org":"Northwind Foods","opened":"2026-02-11","last_update":"2026-02-14"}"#
    );
    let line = shaped.text().lines().nth(1).unwrap();
    // One marking for the untrusted subject: «…», no quotes around it.
    assert_eq!(
        line,
        "tkt_9f3a71c4 «Card declined at checkout»: open, high priority, Dana Cole, \
         Northwind Foods, opened Feb 11, updated Feb 14"
    );
}

#[test]
fn projection_describes_the_view() {
    let p = Ticket::PROJECTION;
    assert_eq!(p.name, "ticket");
    assert_eq!(p.plural, "tickets");
    assert_eq!(
        p.output_names().collect::<Vec<_>>(),
        [
            "id",
            "subject",
            "status",
            "priority",
            "assignee",
            "org",
            "opened",
            "last_update"
        ]
    );
    assert_eq!(p.skipped, ["sla_due_at"]);
    let (rank, order) = p.rank_field().unwrap();
    assert_eq!((rank.name, order), ("last_update", toolshape::Order::Desc));
    assert_eq!(
        p.untrusted_fields()
            .map(|(f, cap)| (f.name, cap))
            .collect::<Vec<_>>(),
        [("subject", Some(40))]
    );
    assert_eq!(
        p.fields[4].kind,
        toolshape::__seams::record::FieldKind::Resolve { resolver: "users" }
    );
    assert_eq!(p.id, Some(0));
}

#[test]
fn skipped_fields_are_absent_and_named_in_omitted() {
    let mut tickets = seed_tickets();
    tickets[0].sla_due_at = Some("2026-02-13T00:00:00Z".into());
    let shaped = Shaper::for_tool("t")
        .shape_blocking((&tickets, &Directory::seed()))
        .unwrap();
    for record in shaped.structured()["data"].as_array().unwrap() {
        assert!(record.get("sla_due_at").is_none(), "{record}");
    }
    assert!(!shaped.structured_json().contains("2026-02-13T00"));
    assert_eq!(
        shaped.structured()["omitted"]["fields"],
        serde_json::json!(["sla_due_at"])
    );
    assert!(shaped.text().contains("this view leaves out sla_due_at"));
}

#[test]
fn none_stays_null_and_unresolved_is_marked() {
    let mut tickets = seed_tickets();
    tickets.truncate(2);
    tickets[0].assignee_id = None;
    tickets[1].assignee_id = Some(UserId("usr_00000000-0000-4000-8000-000000000000".into()));
    let shaped = Shaper::for_tool("t")
        .call()
        .keep_order()
        .shape_blocking((&tickets, &Directory::seed()))
        .unwrap();
    let data = &shaped.structured()["data"];
    assert_eq!(data[0]["assignee"], serde_json::Value::Null);
    assert_eq!(
        data[1]["assignee"],
        "unresolved user usr_00000000-0000-4000-8000-000000000000"
    );
    let users = &shaped.report().resolvers[0];
    assert_eq!(
        (users.resolver, users.calls, users.keys, users.unresolved),
        ("users", 1, 1, 1)
    );
    assert_eq!(shaped.report().diagnostics.unresolved_shown, 1);
}

/// A resolver that records every batch it is asked for.
#[derive(Default)]
struct Recorder {
    batches: Mutex<Vec<(&'static str, usize)>>,
}

impl Resolve<Users> for Recorder {
    fn resolve(
        &self,
        keys: &[UserId],
    ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
        self.batches.lock().unwrap().push(("users", keys.len()));
        toolshape::resolve::answer(keys, |k| Some(format!("name of {k}")))
    }
}

impl Resolve<Orgs> for Recorder {
    fn resolve(
        &self,
        keys: &[OrgId],
    ) -> impl Future<Output = Result<HashMap<OrgId, String>, ResolveError>> + Send {
        self.batches.lock().unwrap().push(("orgs", keys.len()));
        toolshape::resolve::answer(keys, |k| Some(format!("org {k}")))
    }
}

fn many_tickets(n: usize, users: usize, orgs: usize) -> Vec<Ticket> {
    (0..n)
        .map(|i| Ticket {
            id: format!("tkt_{i:08x}-0000-4000-8000-000000000000"),
            subject: format!("subject {i}"),
            status_code: (i % 5 + 1) as u8,
            priority: (i % 3 + 1) as u8,
            assignee_id: Some(UserId(format!("usr_{}", i % users))),
            organization_id: OrgId(format!("org_{}", i % orgs)),
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: format!("2026-02-{:02}T00:00:00Z", i % 28 + 1),
            sla_due_at: None,
        })
        .collect()
}

#[test]
fn one_resolver_call_per_page_whatever_the_page_size() {
    let rows = many_tickets(1_000, 300, 7);
    let recorder = Recorder::default();
    let shaped = Shaper::for_tool("t")
        .budget(Budget::tokens(1_000_000))
        .shape_blocking((&rows, &recorder))
        .unwrap();
    assert_eq!(
        *recorder.batches.lock().unwrap(),
        [("users", 300), ("orgs", 7)]
    );
    assert_eq!(shaped.report().records.shown, 1_000);
    assert!(
        shaped
            .structured_json()
            .contains("\"assignee\":\"name of usr_299\"")
    );
}

#[tokio::test]
async fn async_resolvers_are_awaited() {
    struct Slow;
    impl Resolve<Users> for Slow {
        #[allow(clippy::manual_async_fn)]
        fn resolve(
            &self,
            keys: &[UserId],
        ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
            let keys = keys.to_vec();
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                Ok(keys
                    .into_iter()
                    .map(|k| (k, "async name".to_owned()))
                    .collect())
            }
        }
    }
    impl Resolve<Orgs> for Slow {
        fn resolve(
            &self,
            _keys: &[OrgId],
        ) -> impl Future<Output = Result<HashMap<OrgId, String>, ResolveError>> + Send {
            std::future::ready(Err(ResolveError::new::<Orgs>("database unavailable")))
        }
    }
    let rows = seed_tickets();
    let err = Shaper::for_tool("t")
        .shape((&rows, &Slow))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "resolver `orgs` failed: database unavailable"
    );

    struct Fine;
    impl Resolve<Users> for Fine {
        #[allow(clippy::manual_async_fn)]
        fn resolve(
            &self,
            keys: &[UserId],
        ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
            let keys = keys.to_vec();
            async move {
                tokio::task::yield_now().await;
                Ok(keys
                    .into_iter()
                    .map(|k| (k, "async name".to_owned()))
                    .collect())
            }
        }
    }
    impl Resolve<Orgs> for Fine {
        fn resolve(
            &self,
            keys: &[OrgId],
        ) -> impl Future<Output = Result<HashMap<OrgId, String>, ResolveError>> + Send {
            toolshape::resolve::answer(keys, |_| Some("org".to_owned()))
        }
    }
    let shaped = Shaper::for_tool("t").shape((&rows, &Fine)).await.unwrap();
    assert_eq!(shaped.structured()["data"][0]["assignee"], "async name");
}

#[test]
fn unknown_legend_code_is_marked_and_counted() {
    let mut tickets = seed_tickets();
    tickets.truncate(3);
    tickets[0].status_code = 7;
    tickets[1].status_code = 7;
    tickets[2].priority = 0;
    let shaped = Shaper::for_tool("t")
        .call()
        .keep_order()
        .shape_blocking((&tickets, &Directory::seed()))
        .unwrap();
    let data = &shaped.structured()["data"];
    assert_eq!(data[0]["status"], "unknown status 7");
    assert_eq!(data[2]["priority"], "unknown priority 0");
    let codes = &shaped.report().diagnostics.unknown_codes;
    assert_eq!(codes["status"], ["7"]);
    assert_eq!(codes["priority"], ["0"]);
}

static REGION: LoadedLegend<i64> = LoadedLegend::new();

#[derive(ToolResult)]
struct Office {
    #[shape(show)]
    name: String,
    #[shape(legend = REGION)]
    region: Option<i64>,
}

#[test]
fn legends_loaded_at_start_up() {
    let offices = vec![
        Office {
            name: "Lyon".into(),
            region: Some(84),
        },
        Office {
            name: "Nowhere".into(),
            region: None,
        },
    ];
    // Before loading, codes are unknown (and said so), never guessed.
    let before = Shaper::for_tool("offices")
        .call()
        .keep_order()
        .shape_blocking(&offices)
        .unwrap();
    assert_eq!(
        before.structured()["data"][0]["region"],
        "unknown region 84"
    );
    REGION
        .load([(84, "Auvergne-Rhône-Alpes"), (11, "Île-de-France")])
        .unwrap();
    assert_eq!(
        REGION.load([(1, "x")]),
        Err(toolshape::fields::LegendError::AlreadyLoaded)
    );
    let after = Shaper::for_tool("offices")
        .call()
        .keep_order()
        .shape_blocking(&offices)
        .unwrap();
    assert_eq!(
        after.structured()["data"][0]["region"],
        "Auvergne-Rhône-Alpes"
    );
    assert_eq!(
        after.structured()["data"][1]["region"],
        serde_json::Value::Null
    );
    // A second load is refused as such, whatever its rows hold.
    assert!(REGION.is_loaded());
    assert_eq!(
        REGION.load([(1, "x"), (1, "y")]),
        Err(toolshape::fields::LegendError::AlreadyLoaded)
    );
    // The schema lists the loaded words, in code order, beside the unknown marker and null.
    let schema = toolshape::mcp::output_schema::<Office>();
    let region = &schema["else"]["properties"]["data"]["items"]["properties"]["region"];
    assert_eq!(
        region["anyOf"][0],
        serde_json::json!({"type": "string", "enum": ["Île-de-France", "Auvergne-Rhône-Alpes"]}),
        "{region}"
    );
    let duplicate: LoadedLegend<u8> = LoadedLegend::new();
    assert!(!duplicate.is_loaded());
    assert_eq!(
        duplicate
            .load([(1, "a"), (1, "b")])
            .unwrap_err()
            .to_string(),
        "code 1 appears twice in the legend's rows; the table that owns the mapping must have one word per code"
    );
}

static CATEGORY: LoadedLegend<&'static str> = LoadedLegend::new();

#[derive(ToolResult)]
#[shape(name = "issue", plural = "issues")]
struct LoadedCategoryIssue {
    #[shape(id)]
    key: String,
    #[shape(legend = CATEGORY, rename = "category")]
    status_category: String,
}

/// The structured channel of `rows` shaped in the order given.
fn in_order<T: ToolResult + Sync>(rows: &[T]) -> serde_json::Value
where
    (): toolshape::resolve::Supplies<T::Needs>,
{
    Shaper::for_tool("jira")
        .call()
        .keep_order()
        .shape_blocking(rows)
        .unwrap()
        .structured()
}

/// A legend over text codes loaded at start-up reads a `String` field by its text.
#[test]
fn a_loaded_legend_over_text_codes_reads_string_fields() {
    let rows = vec![
        LoadedCategoryIssue {
            key: "PROJ-1".into(),
            status_category: "done".into(),
        },
        LoadedCategoryIssue {
            key: "PROJ-2".into(),
            status_category: "undefined".into(),
        },
    ];
    CATEGORY.load([("new", "To Do"), ("done", "Done")]).unwrap();
    let data = &in_order(&rows)["data"];
    assert_eq!(data[0]["category"], "Done");
    assert_eq!(data[1]["category"], "unknown category undefined");
}

#[test]
fn short_ids() {
    use toolshape::fields::short_id;
    for (id, short) in [
        ("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90", "tkt_9f3a71c4"),
        ("TKT_9F3A71C4-2D18-4B6E-9C05-8AB3F2E17D90", "TKT_9F3A71C4"),
        ("9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90", "9f3a71c4"),
        (
            "acme-eu-tkt-9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90",
            "acme-eu-tkt-9f3a71c4",
        ),
        ("INV-2024-0042", "INV-2024-0042"),
        (
            "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d9",
            "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d9",
        ),
        (
            "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90-x",
            "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90-x",
        ),
        (
            "tkt_9f3a71c4_2d18_4b6e_9c05_8ab3f2e17d90",
            "tkt_9f3a71c4_2d18_4b6e_9c05_8ab3f2e17d90",
        ),
        (
            "ab9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90",
            "ab9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90",
        ),
        ("é9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90", "é9f3a71c4"),
        ("", ""),
    ] {
        assert_eq!(short_id(id), short, "{id}");
    }
}

#[test]
fn date_forms() {
    use toolshape::__seams::fields::iso_date;
    for (text, date) in [
        ("2026-02-11T09:14:22.481Z", Some("2026-02-11")),
        ("2026-02-11T09:14:22Z", Some("2026-02-11")),
        ("2026-02-11T09:14:22+05:30", Some("2026-02-11")),
        ("2026-02-11T23:59:59-0800", Some("2026-02-11")),
        ("2026-02-11 09:14", Some("2026-02-11")),
        ("2026-02-11", Some("2026-02-11")),
        ("2024-02-29T00:00:00Z", Some("2024-02-29")),
        ("2026-02-29T00:00:00Z", None),
        ("2026-13-01", None),
        ("2026-02-11T25:00:00Z", None),
        ("2026-02-11T09:14:22.Z", None),
        ("2026-02-11T09:14:22Zjunk", None),
        ("11/02/2026", None),
        ("garbage", None),
        ("", None),
    ] {
        assert_eq!(iso_date(text), date, "{text}");
    }
    // An unparseable date is shown as given and counted.
    let mut tickets = seed_tickets();
    tickets.truncate(1);
    tickets[0].created_at = "last tuesday".into();
    let shaped = Shaper::for_tool("t")
        .shape_blocking((&tickets, &Directory::seed()))
        .unwrap();
    assert_eq!(shaped.structured()["data"][0]["opened"], "last tuesday");
    assert_eq!(shaped.report().diagnostics.unparsed_dates, 1);
}

#[test]
fn record_schema_is_what_is_returned() {
    let mut generator = schemars::SchemaGenerator::default();
    let schema = Ticket::record_schema(&mut generator).to_value();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        serde_json::json!([
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
    assert_eq!(
        schema["properties"]["assignee"]["type"],
        serde_json::json!(["string", "null"])
    );
    assert_eq!(schema["properties"]["org"]["type"], "string");
    assert_eq!(
        schema["properties"]["status"]["anyOf"][0]["enum"],
        serde_json::json!(["new", "pending", "open", "resolved", "closed"])
    );
    assert!(schema["properties"].get("sla_due_at").is_none());
}

const FLAGS: Legend<bool> = Legend::new(&[(true, "yes"), (false, "no")]);

#[derive(ToolResult)]
#[shape(name = "setting")]
struct Setting {
    #[shape(id)]
    key: String,
    #[shape(legend = FLAGS, rename = "enabled")]
    on: bool,
    #[shape(show)]
    tags: Vec<String>,
    #[shape(resolve = Users, rename = "owners")]
    owner_ids: Vec<UserId>,
}

#[test]
fn defaults_lists_and_non_integer_legends() {
    let p = Setting::PROJECTION;
    assert_eq!((p.name, p.plural), ("setting", "settings"));
    let rows = vec![Setting {
        key: "dark_mode".into(),
        on: true,
        tags: vec!["ui".into(), "beta".into()],
        owner_ids: vec![UserId("u1".into()), UserId("u2".into())],
    }];
    struct Names;
    impl Resolve<Users> for Names {
        fn resolve(
            &self,
            keys: &[UserId],
        ) -> impl Future<Output = Result<HashMap<UserId, String>, ResolveError>> + Send {
            toolshape::resolve::answer(keys, |k| (k.0 == "u1").then(|| "Ada".to_owned()))
        }
    }
    let shaped = Shaper::for_tool("settings")
        .format(Format::Prose)
        .shape_blocking((&rows, &Names))
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0],
        serde_json::json!({"key": "dark_mode", "enabled": "yes", "tags": ["ui", "beta"], "owners": ["Ada", "unresolved user u2"]})
    );
    assert_eq!(
        shaped.text().lines().nth(1).unwrap(),
        "key: dark_mode; enabled: yes; tags: ui, beta; owners: Ada, unresolved user u2"
    );
}

#[derive(ToolResult)]
#[shape(name = "event")]
struct Event {
    #[shape(id)]
    id: String,
    #[shape(date, rename = "at", rank = desc)]
    at: chrono::DateTime<chrono::Utc>,
    #[shape(date)]
    logged: Option<time::OffsetDateTime>,
    #[shape(date)]
    day: chrono::NaiveDate,
}

#[test]
fn chrono_and_time_dates() {
    use chrono::TimeZone;
    let rows = vec![
        Event {
            id: "e1".into(),
            at: chrono::Utc
                .with_ymd_and_hms(2026, 2, 11, 9, 14, 22)
                .unwrap(),
            logged: time::OffsetDateTime::from_unix_timestamp(1_770_800_000).ok(),
            day: chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
        },
        Event {
            id: "e2".into(),
            at: chrono::Utc.with_ymd_and_hms(2026, 2, 12, 0, 0, 0).unwrap(),
            logged: None,
            day: chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
        },
    ];
    let shaped = Shaper::for_tool("events")
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"],
        serde_json::json!([
            {"id": "e2", "at": "2026-02-12", "logged": null, "day": "2026-03-02"},
            {"id": "e1", "at": "2026-02-11", "logged": "2026-02-11", "day": "2026-03-01"}
        ])
    );
}

#[derive(ToolResult)]
#[shape(name = "entry", plural = "entries")]
struct Entry<T: serde::Serialize + schemars::JsonSchema> {
    #[shape(show)]
    r#type: String,
    #[shape(show, rename = "last-seen")]
    seen: Option<u32>,
    #[shape(show)]
    value: T,
}

#[test]
fn raw_identifiers_odd_names_and_generic_records() {
    assert_eq!(Entry::<bool>::FIELDS.r#type.name(), "type");
    assert_eq!(Entry::<bool>::FIELDS.last_seen.name(), "last-seen");
    let rows = vec![Entry {
        r#type: "flag".into(),
        seen: None,
        value: true,
    }];
    let shaped = Shaper::for_tool("entries")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0],
        serde_json::json!({"type": "flag", "last-seen": null, "value": true})
    );
    assert_eq!(
        shaped.text().lines().nth(1),
        Some("type: flag; last-seen: null; value: true")
    );
}

// Record types stamped out by a `macro_rules!` template. The derive and the common fields come
// from the template, the extra fields (attributes included) from the caller, so the tokens
// the derive sees were written in two places; its generated locals must resolve all the same.
macro_rules! tracked_record {
    ($name:ident { $($extra:tt)* }) => {
        #[derive(ToolResult)]
        #[shape(prose = "{id}: {title} ({state}), {owner}, updated {updated}")]
        struct $name {
            #[shape(id(short))]
            id: String,
            #[shape(untrusted(max_tokens = 8))]
            title: String,
            #[shape(legend = desk::STATUS, rename = "state")]
            state_code: u8,
            #[shape(resolve = Users, rename = "owner")]
            owner_id: Option<UserId>,
            #[shape(date, rank = desc)]
            updated: String,
            $($extra)*
        }
    };
}

tracked_record!(Bug {
    #[shape(show)]
    severity: u8,
});
tracked_record!(Release {
    #[shape(show)]
    tags: Vec<String>,
});

#[test]
fn records_stamped_out_by_a_macro() {
    assert_eq!(Bug::PROJECTION.name, "bug");
    assert_eq!(Release::PROJECTION.plural, "releases");
    assert_eq!(Bug::FIELDS.severity.name(), "severity");
    assert_eq!(Release::FIELDS.tags.name(), "tags");

    let bugs = vec![
        Bug {
            id: "bug_0a1b2c3d-0000-4000-8000-000000000000".into(),
            title: "Crash on save".into(),
            state_code: 3,
            owner_id: Some(UserId("usr_1".into())),
            updated: "2026-02-10T08:00:00Z".into(),
            severity: 2,
        },
        Bug {
            id: "bug_9f8e7d6c-0000-4000-8000-000000000000".into(),
            title: "Typo".into(),
            state_code: 1,
            owner_id: None,
            updated: "2026-02-12T08:00:00Z".into(),
            severity: 4,
        },
    ];
    let shaped = Shaper::for_tool("bugs")
        .format(Format::Prose)
        .shape_blocking((&bugs, &Recorder::default()))
        .unwrap();
    assert_eq!(
        shaped.structured()["data"],
        serde_json::json!([
            {"id": "bug_9f8e7d6c", "title": "Typo", "state": "new", "owner": null, "updated": "2026-02-12", "severity": 4},
            {"id": "bug_0a1b2c3d", "title": "Crash on save", "state": "open", "owner": "name of usr_1", "updated": "2026-02-10", "severity": 2}
        ])
    );
    assert_eq!(
        shaped.text().lines().skip(1).take(2).collect::<Vec<_>>(),
        [
            "bug_9f8e7d6c: «Typo» (new), null, updated Feb 12",
            "bug_0a1b2c3d: «Crash on save» (open), name of usr_1, updated Feb 10"
        ]
    );

    let releases = vec![Release {
        id: "rel_1".into(),
        title: "Spring".into(),
        state_code: 5,
        owner_id: Some(UserId("usr_2".into())),
        updated: "2026-03-01".into(),
        tags: vec!["stable".into()],
    }];
    let shaped = Shaper::for_tool("releases")
        .format(Format::Prose)
        .shape_blocking((&releases, &Recorder::default()))
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0],
        serde_json::json!({"id": "rel_1", "title": "Spring", "state": "closed", "owner": "name of usr_2", "updated": "2026-03-01", "tags": ["stable"]})
    );
    assert_eq!(
        shaped.text().lines().nth(1),
        Some("rel_1: «Spring» (closed), name of usr_2, updated Mar 1")
    );
}

#[derive(ToolResult)]
struct Wrapped<T>
where
    T: serde::Serialize + schemars::JsonSchema,
{
    #[shape(show)]
    value: T,
}

#[test]
fn generic_records_with_a_where_clause() {
    assert_eq!(Wrapped::<u8>::FIELDS.value.name(), "value");
    let shaped = Shaper::for_tool("wrapped")
        .shape_blocking(&[Wrapped { value: 7u8 }])
        .unwrap();
    assert_eq!(
        shaped.structured()["data"][0],
        serde_json::json!({"value": 7})
    );
}

static CATEGORY_BY_REF: LoadedLegend<&'static str> = LoadedLegend::new();
static REGION_BY_REF: LoadedLegend<i64> = LoadedLegend::new();

#[derive(ToolResult)]
#[shape(name = "issue", plural = "issues")]
struct LegendsByReference {
    #[shape(id)]
    key: String,
    #[shape(legend = &CATEGORY_BY_REF, rename = "category")]
    status_category: String,
    #[shape(legend = &REGION_BY_REF)]
    region: i64,
    #[shape(legend = &CATEGORY_BY_REF)]
    resolution: Option<String>,
}

/// A legend named through a reference (`legend = &STATIC`) reads codes, text codes and its
/// schema's words exactly as the legend itself does.
#[test]
fn a_legend_through_a_reference_reads_as_the_legend() {
    CATEGORY_BY_REF
        .load([("new", "To Do"), ("done", "Done")])
        .unwrap();
    REGION_BY_REF
        .load([(84, "Auvergne-Rhône-Alpes"), (11, "Île-de-France")])
        .unwrap();
    let rows = vec![
        LegendsByReference {
            key: "PROJ-1".into(),
            status_category: "done".into(),
            region: 11,
            resolution: Some("new".into()),
        },
        LegendsByReference {
            key: "PROJ-2".into(),
            status_category: "gone".into(),
            region: 7,
            resolution: None,
        },
    ];
    let data = &in_order(&rows)["data"];
    assert_eq!(data[0]["category"], "Done");
    assert_eq!(data[0]["region"], "Île-de-France");
    assert_eq!(data[1]["category"], "unknown category gone");
    assert_eq!(data[1]["region"], "unknown region 7");
    assert_eq!(data[0]["resolution"], "To Do");
    assert_eq!(data[1]["resolution"], serde_json::Value::Null);
    let schema = toolshape::mcp::output_schema::<LegendsByReference>();
    let fields = &schema["else"]["properties"]["data"]["items"]["properties"];
    assert_eq!(
        fields["category"]["anyOf"][0]["enum"],
        serde_json::json!(["Done", "To Do"]),
        "{fields}"
    );
    assert_eq!(
        fields["region"]["anyOf"][0]["enum"],
        serde_json::json!(["Île-de-France", "Auvergne-Rhône-Alpes"]),
        "{fields}"
    );
    // Null only where the field can be absent: words, the unknown marker, and null for the
    // optional text code; no null for the plain one.
    let options = |f: &str| fields[f]["anyOf"].as_array().map(Vec::len);
    assert_eq!(options("category"), Some(2), "{fields}");
    assert_eq!(options("region"), Some(2), "{fields}");
    assert_eq!(options("resolution"), Some(3), "{fields}");
    assert_eq!(fields["resolution"]["anyOf"][2]["type"], "null", "{fields}");
}

#[derive(ToolResult)]
#[shape(name = "transition")]
struct Transition {
    #[shape(id)]
    id: u64,
    #[shape(legend = desk::STATUS, rename = "from")]
    from_code: Option<u8>,
    #[shape(legend = desk::STATUS, rename = "to")]
    to_code: u8,
}

/// A legend over `Option<C>` returns null for `None`, and its schema says so; one over `C`
/// never returns null, and its schema does not allow it.
#[test]
fn an_optional_legend_field_is_null_in_its_schema_too() {
    let rows = vec![Transition {
        id: 7,
        from_code: None,
        to_code: 3,
    }];
    let shaped = Shaper::for_tool("transitions")
        .shape_blocking(&rows)
        .unwrap();
    let data = &shaped.structured()["data"][0];
    assert_eq!(
        (&data["from"], &data["to"]),
        (&serde_json::Value::Null, &serde_json::json!("open"))
    );
    let mut generator = schemars::SchemaGenerator::default();
    let schema = Transition::record_schema(&mut generator).to_value();
    let allows_null = |field: &str| {
        schema["properties"][field]["anyOf"]
            .as_array()
            .expect("a legend field's schema is anyOf")
            .iter()
            .any(|option| option["type"] == "null")
    };
    assert!(allows_null("from"), "{schema}");
    assert!(!allows_null("to"), "{schema}");
}

/// A result stored behind a handle resolves every key of the whole result once, and the page
/// shown uses those names: one call per resolver, not one for the store and one for the page.
/// A result too small to store is resolved once as well; a later page of a stored walk
/// resolves its own page's keys, once.
#[tokio::test]
async fn a_stored_result_calls_each_resolver_once() {
    use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    use toolshape::handle::{HandlePolicy, Keep, MemoryStore};
    let rows = many_tickets(1_000, 1_000, 7);
    let store = MemoryStore::default();
    let policy = HandlePolicy::default();
    let codec = std::sync::Arc::new(CursorCodec::new(
        CursorKeys::new(b"0123456789abcdef0123456789abcdef").unwrap(),
    ));
    let query = QueryHash::of("t", &serde_json::json!({})).unwrap();
    // Pages of at most 20: a page resolves the keys of the rows it could reach (21 from its
    // position), far fewer than the whole result's 1,000 users.
    let shaper = Shaper::for_tool("t")
        .budget(Budget::tokens(2_000))
        .page_size(20);
    let keep = || Keep {
        store: &store,
        owner: "alice",
        policy: &policy,
        aggregate: None,
        today: None,
    };
    let calls = |shaped: &toolshape::Shaped| {
        shaped
            .report()
            .resolvers
            .iter()
            .map(|r| (r.resolver, r.calls))
            .collect::<Vec<_>>()
    };

    let recorder = Recorder::default();
    let first = shaper
        .call()
        .paginate(codec.clone(), query, None)
        .unwrap()
        .shape_or_store((&rows, &recorder), keep())
        .await
        .unwrap();
    assert!(first.frame().omitted.handle.is_some(), "{}", first.text());
    assert_eq!(
        *recorder.batches.lock().unwrap(),
        [("users", 1_000), ("orgs", 7)]
    );
    assert_eq!(calls(&first), [("users", 1), ("orgs", 1)]);
    assert_eq!(first.report().records.shown, 20);

    // The walk's second page: the stored result's handle comes from the cursor, so only
    // the keys this page could reach are resolved (rows 20..41: 21 users).
    let recorder = Recorder::default();
    let second = shaper
        .call()
        .paginate(codec.clone(), query, first.next())
        .unwrap()
        .shape_or_store((&rows, &recorder), keep())
        .await
        .unwrap();
    assert_eq!(
        second.frame().omitted.handle,
        first.frame().omitted.handle,
        "{}",
        second.text()
    );
    let batches = recorder.batches.lock().unwrap().clone();
    assert_eq!(
        batches.iter().map(|b| b.0).collect::<Vec<_>>(),
        ["users", "orgs"]
    );
    assert_eq!(batches[0], ("users", 21));
    assert!(batches[1].1 <= 7, "{batches:?}");
    assert_eq!(second.report().records.shown, 20);
    assert_eq!(calls(&second), [("users", 1), ("orgs", 1)]);

    // Too small to store: one call per resolver all the same.
    let few = many_tickets(3, 3, 2);
    let recorder = Recorder::default();
    let small = shaper
        .call()
        .shape_or_store((&few, &recorder), keep())
        .await
        .unwrap();
    assert!(small.frame().omitted.handle.is_none(), "{}", small.text());
    assert_eq!(
        *recorder.batches.lock().unwrap(),
        [("users", 3), ("orgs", 2)]
    );
}

/// A record type with no `plural` gets the English plural configuration gives the same name
/// (one rule, `toolshape-internals`): `entity` → `entities`, `status` → `statuses`, `box` →
/// `boxes`, `key` → `keys`; what the summary says of it and what a configured projection of
/// the same name says agree.
#[test]
fn a_record_without_a_plural_gets_the_english_plural_configuration_gives() {
    #[derive(ToolResult)]
    struct Entity {
        #[shape(id)]
        id: String,
    }
    #[derive(ToolResult)]
    struct Status {
        #[shape(id)]
        id: String,
    }
    #[derive(ToolResult)]
    struct Box {
        #[shape(id)]
        id: String,
    }
    #[derive(ToolResult)]
    struct Key {
        #[shape(id)]
        id: String,
    }
    let summary = |shaped: toolshape::Shaped| shaped.summary().to_owned();
    let two = |name: &str| -> String {
        let config = toolshape::config::ShapeConfig::from_toml_str(&format!(
            "[tools.t.records]\nname = \"{name}\"\nfields = [{{ from = \"id\", id = true }}]\n"
        ))
        .unwrap();
        let projection = config.json_projection("t").unwrap();
        let page = Shaper::for_tool("t")
            .call()
            .shape_blocking((&projection, r#"[{"id": "a"}, {"id": "b"}]"#))
            .unwrap();
        summary(page)
    };
    let rows = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
    let derived = [
        summary(
            Shaper::for_tool("t")
                .shape_blocking(
                    &rows(2)
                        .into_iter()
                        .map(|id| Entity { id })
                        .collect::<Vec<_>>(),
                )
                .unwrap(),
        ),
        summary(
            Shaper::for_tool("t")
                .shape_blocking(
                    &rows(2)
                        .into_iter()
                        .map(|id| Status { id })
                        .collect::<Vec<_>>(),
                )
                .unwrap(),
        ),
        summary(
            Shaper::for_tool("t")
                .shape_blocking(&rows(2).into_iter().map(|id| Box { id }).collect::<Vec<_>>())
                .unwrap(),
        ),
        summary(
            Shaper::for_tool("t")
                .shape_blocking(&rows(2).into_iter().map(|id| Key { id }).collect::<Vec<_>>())
                .unwrap(),
        ),
    ];
    for (said, (name, plural)) in derived.iter().zip([
        ("entity", "entities"),
        ("status", "statuses"),
        ("box", "boxes"),
        ("key", "keys"),
    ]) {
        assert!(said.starts_with(&format!("2 {plural}")), "{said}");
        assert_eq!(*said, two(name), "{name}");
    }
}
