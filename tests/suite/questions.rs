//! Question sets: a projection checked against the questions its tool must answer, with
//! the oracle read back out of the rendered answers (the keys of the structured channel,
//! the words of a prose line), never taken from the checker itself.

use crate::{desk, tracker};

use desk::{Directory, OrgId, Orgs, Ticket, UserId, Users};
use std::collections::BTreeSet;
use toolshape::{Format, Shaper, ToolResult};
use toolshape_eval::questions::{Questions, Why, source_field};

const SLA: &str = "which tickets breach SLA this week?";

/// The questions the seed's support agent is asked, and what each one needs.
fn desk_questions() -> Questions {
    Questions::for_tool("search_tickets")
        .ask("which open tickets are urgent?")
        .needs(Ticket::FIELDS.id)
        .needs(Ticket::FIELDS.status)
        .needs(Ticket::FIELDS.priority)
        .ask("who is working on the card-declined ticket?")
        .needs(Ticket::FIELDS.subject)
        .needs(Ticket::FIELDS.assignee)
        .ask("which organization filed the most tickets this month?")
        .needs(Ticket::FIELDS.org)
        .needs(Ticket::FIELDS.opened)
        .ask(SLA)
        .needs(Ticket::FIELDS.id)
        .needs(source_field!(Ticket, sla_due_at))
}

/// The same desk with the due date shown: the view the SLA question needs.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "ticket",
    plural = "tickets",
    prose = "{id} \"{subject}\": {status}, {priority} priority, {assignee}, {org}, opened {opened}, due {sla_due}"
)]
pub struct TicketWithSla {
    #[shape(id(short))]
    pub id: String,
    #[shape(untrusted(max_tokens = 40))]
    pub subject: String,
    #[shape(legend = desk::STATUS, rename = "status")]
    pub status_code: u8,
    #[shape(legend = desk::PRIORITY)]
    pub priority: u8,
    #[shape(resolve = Users, rename = "assignee")]
    pub assignee_id: Option<UserId>,
    #[shape(resolve = Orgs, rename = "org")]
    pub organization_id: OrgId,
    #[shape(date, rename = "opened")]
    pub created_at: String,
    #[shape(date, rename = "sla_due", absent = "no SLA")]
    pub sla_due_at: Option<String>,
}

/// A list view whose prose line names only the id and subject; JSON and tables show all.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "ticket", plural = "tickets", prose = "{id}: {subject}")]
pub struct TicketLine {
    #[shape(id(short))]
    pub id: String,
    #[shape(show)]
    pub subject: String,
    #[shape(legend = desk::PRIORITY)]
    pub priority: u8,
}

fn seed_tickets() -> Vec<Ticket> {
    desk::parse_page(desk::PAGE).unwrap()
}

/// The keys of the records in a structured channel: what a JSON-reading model can see.
fn keys_read_back(structured: &str) -> BTreeSet<String> {
    let envelope: serde_json::Value = serde_json::from_str(structured).unwrap();
    envelope["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_object().unwrap().keys().cloned())
        .collect()
}

#[test]
fn a_view_that_skips_the_due_date_cannot_answer_the_sla_question() {
    let coverage = desk_questions().check::<Ticket>(Format::Json);
    assert_eq!(coverage.answerable(), 3);
    assert_eq!(
        coverage.gaps().collect::<Vec<_>>(),
        [format!(
            "{SLA} needs sla_due_at, which this view leaves out"
        )]
    );
    // The oracle: what the shaped page really carries.
    let shaped = Shaper::for_tool("search_tickets")
        .format(Format::Json)
        .shape_blocking((&seed_tickets(), &Directory::seed()))
        .unwrap();
    let keys = keys_read_back(shaped.structured_json());
    assert!(
        keys.contains("assignee") && keys.contains("priority"),
        "{keys:?}"
    );
    assert!(!keys.iter().any(|k| k.contains("sla")), "{keys:?}");
    assert_eq!(shaped.frame().omitted.fields, ["sla_due_at"]);
}

#[test]
#[should_panic(
    expected = "which tickets breach SLA this week? needs sla_due_at, which this view leaves out"
)]
fn the_assertion_fails_naming_the_question_and_the_field() {
    desk_questions()
        .check::<Ticket>(Format::Prose)
        .assert_complete();
}

#[test]
fn a_view_that_shows_the_due_date_answers_every_question_in_every_format() {
    let questions = Questions::for_tool("search_tickets")
        .ask("which open tickets are urgent?")
        .needs(TicketWithSla::FIELDS.status)
        .needs(TicketWithSla::FIELDS.priority)
        .ask(SLA)
        .needs(TicketWithSla::FIELDS.id)
        .needs(source_field!(TicketWithSla, sla_due_at));
    for format in [Format::Json, Format::Prose, Format::Table] {
        let coverage = questions.check::<TicketWithSla>(format);
        coverage.assert_complete();
        assert_eq!(coverage.answerable(), 2);
    }
    // Read back: the due date is in the prose line of an urgent ticket.
    let rows = vec![TicketWithSla {
        id: "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into(),
        subject: "Card declined at checkout".into(),
        status_code: 3,
        priority: 3,
        assignee_id: None,
        organization_id: OrgId("org_5d8804f1-6b2a-4c77-9e10-3f7d51ac8802".into()),
        created_at: "2026-02-11T09:14:22.481Z".into(),
        sla_due_at: Some("2026-02-12T09:14:22Z".into()),
    }];
    let shaped = Shaper::for_tool("search_tickets")
        .format(Format::Prose)
        .shape_blocking((&rows, &Directory::seed()))
        .unwrap();
    assert!(shaped.text().contains("due Feb 12"), "{}", shaped.text());
}

#[test]
fn a_prose_template_that_leaves_a_field_out_fails_only_in_prose() {
    let questions = Questions::for_tool("list_tickets")
        .ask("which tickets are urgent?")
        .needs(TicketLine::FIELDS.id)
        .needs(TicketLine::FIELDS.priority);
    questions
        .check::<TicketLine>(Format::Json)
        .assert_complete();
    questions
        .check::<TicketLine>(Format::Table)
        .assert_complete();
    let prose = questions.check::<TicketLine>(Format::Prose);
    assert_eq!(prose.answers[0].gaps[0].why, Why::NotInTemplate);
    assert_eq!(
        prose.gaps().collect::<Vec<_>>(),
        ["which tickets are urgent? needs priority, which the prose template does not show"]
    );
    // Read back: the word for priority 3 is in the JSON and the table, not in the prose.
    let rows = vec![TicketLine {
        id: "tkt_9f3a71c4".into(),
        subject: "Card declined".into(),
        priority: 3,
    }];
    let text = |format| {
        Shaper::for_tool("list_tickets")
            .format(format)
            .shape_blocking(&rows)
            .unwrap()
            .text()
            .to_owned()
    };
    assert!(text(Format::Json).contains("\"priority\":\"urgent\""));
    assert!(text(Format::Table).contains("urgent"));
    assert!(
        !text(Format::Prose).contains("urgent"),
        "{}",
        text(Format::Prose)
    );
}

#[test]
fn a_fact_of_another_record_is_named_as_missing_from_this_one() {
    let questions = Questions::for_tool("search_tickets")
        .ask("which tickets are labelled bug?")
        .needs(tracker::Issue::FIELDS.labels)
        .needs(Ticket::FIELDS.id);
    let coverage = questions.check::<Ticket>(Format::Json);
    assert_eq!(
        coverage.gaps().collect::<Vec<_>>(),
        ["which tickets are labelled bug? needs labels, which a ticket does not have"]
    );
    // And the issue's own skipped body is left out, not missing.
    let body = Questions::for_tool("list_issues")
        .ask("what are the steps to reproduce #10003?")
        .needs(source_field!(tracker::Issue, body))
        .needs(tracker::Issue::FIELDS.comments);
    let coverage = body.check::<tracker::Issue>(Format::Table);
    assert_eq!(
        coverage.to_string(),
        "list_issues: 0 of 1 questions answerable from issue records in a table\n  \
         NO what are the steps to reproduce #10003? needs body, which this view leaves out"
    );
}

#[test]
fn a_fact_named_before_any_question_is_reported_not_dropped() {
    let questions = Questions::for_tool("search_tickets").needs(Ticket::FIELDS.id);
    let coverage = questions.check::<Ticket>(Format::Json);
    assert!(!coverage.is_complete());
    assert_eq!(coverage.answers[0].gaps[0].why, Why::NoQuestion);
}
