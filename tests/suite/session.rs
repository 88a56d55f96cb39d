//! Follow-up lookups and hedges, counted over a replayed session. The expected counts come
//! from the seed's page itself (its JSON:API relationships and the directory), worked out
//! here without the library.

use crate::desk;

use desk::{Directory, Ticket};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::{Budget, Format, Shaper, fields::short_id};
use toolshape_eval::session::LookupKind;
use toolshape_eval::session::Session;

/// The page's relationships, read straight from the JSON:API document.
fn related_ids() -> (Vec<String>, Vec<String>) {
    let doc: serde_json::Value = serde_json::from_str(desk::PAGE).unwrap();
    let (mut users, mut orgs) = (Vec::new(), Vec::new());
    for element in doc["data"].as_array().unwrap() {
        if let Some(id) = element["relationships"]["assignee"]["data"]["id"].as_str() {
            users.push(id.to_owned());
        }
        orgs.push(
            element["relationships"]["organization"]["data"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    (users, orgs)
}

fn distinct(ids: &[String]) -> Vec<String> {
    ids.iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn a_replayed_session_counts_each_lookup_of_an_unresolved_id_and_each_hedge() {
    let (users, _) = related_ids();
    let users = distinct(&users);
    // Two users were deleted from the directory since the tickets were assigned.
    let gone: Vec<String> = users.iter().take(2).cloned().collect();
    let mut directory = Directory::seed();
    for id in &gone {
        directory.users.remove(id);
    }
    let kept = users.iter().find(|id| !gone.contains(id)).unwrap().clone();

    let session = Session::new();
    let tickets = desk::parse_page(desk::PAGE).unwrap();
    let search = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(3_000))
        .format(Format::Prose);

    // Turn 1: the page. Everything fits; two assignees come back unresolved.
    assert!(
        session
            .call("search_tickets", &json!({"status": "open"}))
            .is_empty()
    );
    let page = search.shape_blocking((&tickets, &directory)).unwrap();
    session.answer::<Ticket>(&page);
    for id in &gone {
        assert!(
            page.text().contains(&format!("unresolved user {id}")),
            "{}",
            page.text()
        );
    }

    // Turns 2–3: the model looks each one up, once by the short id, once by the full id.
    let first = session.call("get_user", &json!({"id": short_id(&gone[0])}));
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(
        (
            first[0].tool.as_str(),
            first[0].field.as_str(),
            first[0].kind
        ),
        ("search_tickets", "assignee", LookupKind::Unresolved)
    );
    assert_eq!(first[0].call, "get_user");
    // Recording the answer returns the lookups of the call it answers.
    assert_eq!(
        session.answer_raw("get_user", r#"{"id":"usr_deleted","error":"not found"}"#),
        first
    );
    let second = session.call("get_user", &json!({"user": {"id": gone[1].clone()}}));
    assert_eq!(second.len(), 1);
    assert_eq!(
        session.answer_raw("get_user", r#"{"error":"not found"}"#),
        second
    );

    // Not lookups: a user the page named (its id was never shown), the ticket's own id, a
    // left-out field's name inside a sentence.
    assert!(session.call("get_user", &json!({"id": kept})).is_empty());
    assert!(
        session
            .call("get_ticket", &json!({"id": "tkt_9f3a71c4"}))
            .is_empty()
    );
    let comment = json!({"id": "tkt_9f3a71c4", "body": "is sla_due_at right?"});
    assert!(session.call("add_comment", &comment).is_empty());

    // Turn 6: a hedge, asking for the field the page said it leaves out; recording its
    // answer returns it.
    let hedge = session.call(
        "get_ticket",
        &json!({"id": "tkt_9f3a71c4", "fields": ["sla_due_at"]}),
    );
    assert_eq!(hedge.len(), 1);
    assert_eq!(
        (hedge[0].field.as_str(), hedge[0].kind),
        ("sla_due_at", LookupKind::LeftOut)
    );
    let one = Shaper::for_tool("get_ticket")
        .shape_blocking((&tickets[..1], &directory))
        .unwrap();
    assert_eq!(session.answer::<Ticket>(&one), hedge);

    // Turns 7–8: a page cut by its budget, then the model asks for the rest.
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a session test key, sixteen bytes or more").unwrap(),
    ));
    let query = QueryHash::of("search_tickets", &json!({"status": "closed"})).unwrap();
    let small = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(300))
        .format(Format::Prose);
    session.call("search_tickets", &json!({"status": "closed"}));
    let cut = small
        .call()
        .paginate(Arc::clone(&codec), query, None)
        .unwrap()
        .shape_blocking((&tickets, &directory))
        .unwrap();
    session.answer::<Ticket>(&cut);
    let next = cut
        .next()
        .expect("a page cut by its budget has a cursor")
        .to_owned();
    let more = session.call(
        "search_tickets",
        &json!({"status": "closed", "cursor": next}),
    );
    assert_eq!(more.len(), 1);
    assert_eq!(more[0].kind, LookupKind::MoreRecords);
    assert_eq!(more[0].value, "next");

    let summary = session.summary();
    assert_eq!((summary.calls, summary.answers), (9, 5));
    assert_eq!(summary.follow_up_calls, 2);
    assert_eq!(summary.hedged_calls, 2);
    assert_eq!(summary.follow_ups.len(), 1);
    assert_eq!(summary.follow_ups[0].calls, 2);
    assert_eq!(
        summary.to_string(),
        "9 calls, 5 answers; 2 follow-up calls (search_tickets.assignee unresolved 2); \
         2 hedged calls (search_tickets.next more records 1, search_tickets.sla_due_at left out 1)"
    );
}

#[test]
fn the_raw_page_makes_one_follow_up_per_distinct_related_id() {
    let (users, orgs) = related_ids();
    let session = Session::new();
    session.call("search_tickets", &json!({"status": "open"}));
    session.answer_raw("search_tickets", desk::PAGE);
    // The seed's loop: one call per distinct id, one id per call.
    let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
    for (tool, ids, path) in [
        (
            "get_user",
            distinct(&users),
            "data.relationships.assignee.data.id",
        ),
        (
            "get_org",
            distinct(&orgs),
            "data.relationships.organization.data.id",
        ),
    ] {
        for id in &ids {
            let lookups = session.call(tool, &json!({ "id": id }));
            assert_eq!(lookups.len(), 1, "{tool} {id}: {lookups:?}");
            assert_eq!(lookups[0].field, path);
            session.answer_raw(tool, r#"{"name":"someone"}"#);
        }
        expected.insert(path, ids.len() as u64);
    }
    let summary = session.summary();
    assert_eq!(
        summary.follow_up_calls,
        (distinct(&users).len() + distinct(&orgs).len()) as u64
    );
    let got: BTreeMap<&str, u64> = summary
        .follow_ups
        .iter()
        .map(|t| (t.field.as_str(), t.calls))
        .collect();
    assert_eq!(got, expected);
    // The shaped page resolves every id: the same loop finds nothing to look up.
    let shaped_session = Session::new();
    shaped_session.call("search_tickets", &json!({"status": "open"}));
    let page = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(3_000))
        .shape_blocking((&desk::parse_page(desk::PAGE).unwrap(), &Directory::seed()))
        .unwrap();
    shaped_session.answer::<Ticket>(&page);
    for id in distinct(&users).iter().chain(&distinct(&orgs)) {
        assert!(
            shaped_session
                .call("get_user", &json!({ "id": id }))
                .is_empty()
        );
    }
    assert_eq!(shaped_session.summary().follow_up_calls, 0);
}

/// The benchmarks shape the desk without SQLite: the generated desk must be the one the
/// database is seeded with, ticket for ticket.
#[test]
fn the_generated_desk_is_the_seeded_database() {
    use shape_examples::{desk_data, desk_db};
    let db = desk_db::DeskDb::seeded().unwrap();
    let mut stored = db
        .tickets(&desk_db::TicketFilter::default(), None, 10_000)
        .unwrap();
    let mut generated = desk_data::generate().tickets;
    assert_eq!(stored.len(), desk_data::TICKETS);
    stored.sort_by(|a, b| a.id.cmp(&b.id));
    generated.sort_by(|a, b| a.id.cmp(&b.id));
    for (s, g) in stored.iter().zip(&generated) {
        assert_eq!(format!("{s:?}"), format!("{g:?}"));
    }
}

/// Every structured form, channel profile and text format counts the same lookups (issue
/// 28): under the structured profile the default form is rows (`fields` + `data` of
/// arrays), and a lookup of an id such an answer showed unresolved must count as it does in
/// the objects form. With every assignee unresolved, each id the model read counts once and
/// each id the page left out (past the budget) counts nothing, in all 18 combinations.
#[test]
fn every_form_profile_and_format_counts_the_same_lookups() {
    use toolshape::{ChannelPolicy, envelope::StructuredForm};
    let (users, _) = related_ids();
    let users = distinct(&users);
    let mut directory = Directory::seed();
    directory.users.clear();
    let tickets = desk::parse_page(desk::PAGE).unwrap();
    let (mut read_some, mut missed_some) = (false, false);
    for budget in [3_000usize, 450] {
        for form in [StructuredForm::Objects, StructuredForm::Rows] {
            for channels in [
                ChannelPolicy::Both,
                ChannelPolicy::Text,
                ChannelPolicy::Structured,
            ] {
                for format in [Format::Prose, Format::Table, Format::Json] {
                    let what = format!("{budget} {form:?} {channels:?} {format:?}");
                    let session = Session::new();
                    session.call("search_tickets", &json!({"status": "open"}));
                    let page = Shaper::for_tool("search_tickets")
                        .budget(Budget::tokens(budget))
                        .format(format)
                        .channels(channels)
                        .structured_form(form)
                        .shape_blocking((&tickets, &directory))
                        .unwrap();
                    if form == StructuredForm::Rows {
                        assert!(page.structured().get("fields").is_some(), "{what}");
                    }
                    session.answer::<Ticket>(&page);
                    // What the model reads under the profile.
                    let read = match channels {
                        ChannelPolicy::Text => page.text().to_owned(),
                        ChannelPolicy::Structured => page.structured_json().to_owned(),
                        ChannelPolicy::Both => {
                            format!("{}\n{}", page.text(), page.structured_json())
                        }
                    };
                    let mut expected = 0;
                    for id in &users {
                        let shown = read.contains(&format!("unresolved user {id}"));
                        let lookups = session.call("get_user", &json!({ "id": id }));
                        if shown {
                            expected += 1;
                            read_some = true;
                            assert_eq!(lookups.len(), 1, "{what}: {id}: {lookups:?}");
                            assert_eq!(lookups[0].kind, LookupKind::Unresolved, "{what}");
                            assert_eq!(lookups[0].field, "assignee", "{what}");
                        } else {
                            missed_some = true;
                            assert!(lookups.is_empty(), "{what}: {id} not shown: {lookups:?}");
                        }
                    }
                    assert!(expected > 0, "{what}: no assignee shown");
                    assert_eq!(session.summary().follow_up_calls, expected, "{what}");
                }
            }
        }
    }
    assert!(read_some && missed_some, "both edges were reached");
}

#[derive(Debug, Clone, toolshape::ToolResult)]
#[shape(name = "row", plural = "rows", prose = "{id} {title}")]
struct Row {
    #[shape(id)]
    id: u32,
    #[shape(show)]
    title: String,
    #[shape(skip)]
    #[allow(dead_code)] // left out, which is what the test is about
    body: String,
}

/// The 64 latest cursors count as asking for more records; the 65th latest no longer does.
/// A left-out field counts when a value names it whole, in its own case.
#[test]
fn the_latest_64_cursors_and_whole_left_out_names_count_and_no_more() {
    let rows: Vec<Row> = (0..70)
        .map(|id| Row {
            id,
            title: format!("row {id}"),
            body: "text".into(),
        })
        .collect();
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a session test key of 16+ bytes").unwrap(),
    ));
    let query = QueryHash::of("list_rows", &json!({})).unwrap();
    let session = Session::new();
    let (mut cursor, mut cursors) = (None::<String>, Vec::new());
    let page = |cursor: Option<&str>| {
        Shaper::for_tool("list_rows")
            .page_size(1)
            .call()
            .paginate(Arc::clone(&codec), query, cursor)
            .unwrap()
            .shape_blocking(&rows)
            .unwrap()
    };
    for _ in 0..64 {
        let shaped = page(cursor.as_deref());
        session.answer::<Row>(&shaped);
        cursor = shaped.structured()["next"].as_str().map(str::to_owned);
        cursors.push(cursor.clone().unwrap());
    }
    let more = |c: &str| session.call("list_rows", &json!({ "cursor": c }));
    // 64 answers: the first cursor is still one of the latest 64.
    let first = more(&cursors[0]);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].kind, LookupKind::MoreRecords);
    let shaped = page(cursor.as_deref());
    session.answer::<Row>(&shaped);
    // 65 answers: it is not, the second is.
    assert!(more(&cursors[0]).is_empty());
    assert_eq!(more(&cursors[1]).len(), 1);
    let last = shaped.structured()["next"].as_str().unwrap().to_owned();
    assert_eq!(more(&last).len(), 1);
    // Left out: `body`, named whole.
    let hedge = session.call("get_row", &json!({ "id": 3, "fields": ["body"] }));
    assert_eq!(hedge.len(), 1, "{hedge:?}");
    assert_eq!(
        (hedge[0].field.as_str(), hedge[0].kind),
        ("body", LookupKind::LeftOut)
    );
    for args in [
        json!({"text": "the body is wrong"}),
        json!({"fields": ["Body"]}),
        json!({"fields": ["bod"]}),
        json!({"fields": ["body "]}),
    ] {
        assert!(session.call("get_row", &args).is_empty(), "{args}");
    }
    // One call naming `body` twice and a cursor counts one hedge of each kind.
    let both = session.call("get_row", &json!({"a": "body", "b": "body", "c": last}));
    assert_eq!(both.len(), 2, "{both:?}");
    let summary = session.summary();
    assert_eq!(summary.answers, 65);
    assert_eq!(summary.follow_up_calls, 0);
    assert_eq!(summary.hedged_calls, 5);
    let tally: Vec<(String, LookupKind, u64)> = summary
        .hedges
        .iter()
        .map(|t| (t.field.clone(), t.kind, t.calls))
        .collect();
    assert_eq!(
        tally,
        [
            ("next".to_owned(), LookupKind::MoreRecords, 4),
            ("body".to_owned(), LookupKind::LeftOut, 2)
        ]
    );
}

/// Which answer a follow-up is laid at, worked out by hand: the first answer that showed the
/// value (in its first field showing it), whether the value was shown alone or in a list in a
/// `show` field; two values from two fields are two lookups, from one field one; of two ids
/// sharing a short form, each is its own; an integer id left unresolved is a lookup when
/// passed back as a number; a field left out is laid at the latest answer that left it out.
#[test]
fn a_follow_up_is_laid_at_the_first_answer_that_showed_the_value() {
    use toolshape::ToolResult;

    struct Users;
    impl toolshape::resolve::Resolver for Users {
        type Key = u64;
        const NAME: &'static str = "users";
        const NOUN: &'static str = "user";
    }
    struct Nobody;
    impl toolshape::resolve::Resolve<Users> for Nobody {
        fn resolve(
            &self,
            keys: &[u64],
        ) -> impl Future<
            Output = Result<
                std::collections::HashMap<u64, String>,
                toolshape::resolve::ResolveError,
            >,
        > + Send {
            toolshape::resolve::answer(keys, |_| None)
        }
    }

    #[derive(ToolResult)]
    #[shape(name = "job", plural = "jobs")]
    struct Job {
        #[shape(id)]
        id: String,
        #[shape(show)]
        runner: String,
        #[shape(show)]
        also_ran_on: Vec<String>,
        #[shape(resolve = Users, rename = "owner")]
        owner_id: u64,
        #[shape(skip)]
        _secret: String,
        #[shape(skip)]
        _notes: String,
    }

    // Two runners sharing the short form `run_4f9a2c1e`, and one only ever in the lists.
    let (first, second, listed) = ("run_4f9a2c1e-77aa", "run_4f9a2c1e-88bb", "run_b81d09e3aa");
    let job = |id: &str, runner: &str| Job {
        id: id.to_owned(),
        runner: runner.to_owned(),
        also_ran_on: vec![listed.to_owned(), runner.to_owned()],
        owner_id: 4211,
        _secret: String::new(),
        _notes: String::new(),
    };
    let session = Session::new();
    for tool in ["list_jobs", "recent_jobs"] {
        session.call(tool, &json!({}));
        let page = Shaper::for_tool(tool)
            .budget(Budget::tokens(2_000))
            .shape_blocking((&[job("job_1", first), job("job_2", second)], &Nobody))
            .unwrap();
        session.answer::<Job>(&page);
    }
    let laid = |args: serde_json::Value| -> Vec<(String, String, LookupKind, String)> {
        let mut out: Vec<_> = session
            .call("look_up", &args)
            .into_iter()
            .map(|l| (l.tool, l.field, l.kind, l.value))
            .collect();
        out.sort();
        out
    };
    let at = |tool: &str, field: &str, kind: LookupKind, value: &str| {
        (tool.to_owned(), field.to_owned(), kind, value.to_owned())
    };
    // Each runner: the first answer, its `runner` field (before the list), its own value.
    for runner in [first, second] {
        assert_eq!(
            laid(json!({"id": runner})),
            [at("list_jobs", "runner", LookupKind::Opaque, runner)]
        );
    }
    // Only ever in a list: the list's field.
    assert_eq!(
        laid(json!({"id": listed})),
        [at("list_jobs", "also_ran_on", LookupKind::Opaque, listed)]
    );
    // Two values from two fields: two lookups; two from one field: one.
    assert_eq!(
        laid(json!({"ids": [first, listed]})),
        [
            at("list_jobs", "also_ran_on", LookupKind::Opaque, listed),
            at("list_jobs", "runner", LookupKind::Opaque, first),
        ]
    );
    assert_eq!(laid(json!({"ids": [first, second]})).len(), 1);
    // The owner, unresolved, passed back as a number.
    assert_eq!(
        laid(json!({"id": 4211})),
        [at("list_jobs", "owner", LookupKind::Unresolved, "4211")]
    );
    // A value nobody showed: nothing.
    assert!(laid(json!({"id": "run_0000000000"})).is_empty());
    // `_secret`, left out by both tools: laid at the latest, once.
    // `_notes`, left out beside it by the same tools: laid the same way.
    for field in ["_secret", "_notes"] {
        let asked = laid(json!({ "field": field }));
        assert_eq!(asked.len(), 1, "{field}: {asked:?}");
        assert_eq!(
            (asked[0].0.as_str(), asked[0].2, asked[0].3.as_str()),
            ("recent_jobs", LookupKind::LeftOut, field)
        );
    }
}

/// `SessionSummary::emit` writes the summary as a `tracing` event (target `shape`) with its
/// counts and tallies, as a log reader sees it.
#[test]
fn a_session_summary_is_emitted_as_a_tracing_event() {
    crate::shape_log(); // the subscriber, before the event
    let session = Session::new();
    // 1,009 calls: a count no other test's summary has, so the line is this test's.
    for _ in 0..1_009 {
        session.call("summary_probe", &json!({}));
    }
    let summary = session.summary();
    summary.emit();
    let lines: Vec<String> = crate::shape_log()
        .into_iter()
        .filter(|l| l.contains("session summary") && l.contains("calls=1009 "))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    for part in [
        " shape: session summary",
        "answers=0",
        "follow_up_calls=0",
        "hedged_calls=0",
        "follow_ups=none",
        "hedges=none",
    ] {
        assert!(lines[0].contains(part), "{part}: {}", lines[0]);
    }
}
