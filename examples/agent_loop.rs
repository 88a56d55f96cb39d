//! The agent loop of the seed document, replayed without a model: a page of 12 tickets, then
//! one `get_user` / `get_org` call per distinct id the page left unresolved, one call per
//! turn, each turn re-sending the whole transcript. Raw (the JSON:API page as the endpoint
//! returns it) against shaped (the same page through `toolshape`, ids resolved in one batched
//! call per resolver), and shaped with one user deleted from the directory, so an id comes
//! back unresolved.
//!
//! The simulated agent decides its follow-ups from the text it reads: the relationship ids
//! of the raw document, the `unresolved user …` markers of the shaped one. A `Session` counts
//! the same calls on its own (the library's follow-up counter), and the two must agree.
//!
//! Tokens are o200k_base, counted on each message's text (chat framing not included). The
//! shaped answer is the structured channel (what Claude Code, Codex and most coding agents
//! show the model).
//!
//! Run with `cargo run --example agent_loop`.

use shape_examples::desk;

use desk::{Directory, Ticket};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use toolshape::tokens::{Bpe, Tokenizer};
use toolshape::{Budget, Format, Shaper};
use toolshape_eval::session::Session;

const SYSTEM: &str = "You are a support agent. Use the tools to answer; get_user and get_org \
                      take one id each.";
const QUESTION: &str = "Which open tickets does each of our customers have, and who owns them?";

/// One follow-up the agent makes: the tool and the id.
type FollowUp = (&'static str, String);

/// A conversation's messages and the input billed over it.
struct Transcript<'t> {
    tokenizer: &'t dyn Tokenizer,
    messages: Vec<usize>,
    /// Input tokens billed: the whole transcript, summed over every request.
    billed: usize,
    requests: usize,
}

impl<'t> Transcript<'t> {
    fn new(tokenizer: &'t dyn Tokenizer) -> Self {
        let mut t = Transcript {
            tokenizer,
            messages: Vec::new(),
            billed: 0,
            requests: 0,
        };
        t.push(SYSTEM);
        t.push(QUESTION);
        t
    }

    fn push(&mut self, text: &str) -> usize {
        let n = self.tokenizer.count(text);
        self.messages.push(n);
        n
    }

    /// The model reads the whole transcript once more before it writes its next message.
    fn request(&mut self) {
        self.requests += 1;
        self.billed += self.messages.iter().sum::<usize>();
    }
}

/// What one run cost.
struct Run {
    label: &'static str,
    page_tokens: usize,
    follow_ups: usize,
    counted: u64,
    result_tokens: usize,
    billed: usize,
    requests: usize,
}

fn call_text(tool: &str, args: &Value) -> String {
    json!({ "name": tool, "arguments": args }).to_string()
}

/// The loop: the search, then one call per follow-up, one per turn, then the answer.
fn run(
    label: &'static str,
    tokenizer: &dyn Tokenizer,
    page: &str,
    follow_ups: &[FollowUp],
    result: impl Fn(&FollowUp) -> String,
    session: &Session,
) -> Run {
    let mut t = Transcript::new(tokenizer);
    t.request();
    t.push(&call_text("search_tickets", &json!({ "status": "open" })));
    let page_tokens = t.push(page);
    let mut result_tokens = 0;
    for follow_up in follow_ups {
        t.request();
        let args = json!({ "id": follow_up.1 });
        session.call(follow_up.0, &args);
        t.push(&call_text(follow_up.0, &args));
        let answer = result(follow_up);
        session.answer_raw(follow_up.0, &answer);
        result_tokens += t.push(&answer);
    }
    t.request(); // the final answer
    Run {
        label,
        page_tokens,
        follow_ups: follow_ups.len(),
        counted: session.summary().follow_up_calls,
        result_tokens,
        billed: t.billed,
        requests: t.requests,
    }
}

/// The raw page's follow-ups: every distinct relationship id, read from the document.
fn raw_follow_ups(page: &str) -> Result<Vec<FollowUp>, serde_json::Error> {
    let doc: Value = serde_json::from_str(page)?;
    let mut seen: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut order = Vec::new();
    for element in doc["data"].as_array().into_iter().flatten() {
        for (relation, tool) in [("assignee", "get_user"), ("organization", "get_org")] {
            if let Some(id) = element["relationships"][relation]["data"]["id"].as_str()
                && seen.insert(id.to_owned(), tool).is_none()
            {
                order.push((tool, id.to_owned()));
            }
        }
    }
    Ok(order)
}

/// The shaped page's follow-ups: every distinct id it marks unresolved.
fn shaped_follow_ups(structured: &str) -> Result<Vec<FollowUp>, serde_json::Error> {
    let doc: Value = serde_json::from_str(structured)?;
    let mut order: Vec<FollowUp> = Vec::new();
    for record in doc["data"].as_array().into_iter().flatten() {
        for value in record.as_object().into_iter().flat_map(|r| r.values()) {
            let Some(text) = value.as_str() else { continue };
            for (marker, tool) in [
                ("unresolved user ", "get_user"),
                ("unresolved organization ", "get_org"),
            ] {
                if let Some(id) = text.strip_prefix(marker)
                    && !order.iter().any(|(_, seen)| seen == id)
                {
                    order.push((tool, id.to_owned()));
                }
            }
        }
    }
    Ok(order)
}

/// A `get_user` / `get_org` answer as the JSON:API endpoint returns it.
fn lookup_document(follow_up: &FollowUp, directory: &Directory, tickets: &[Ticket]) -> String {
    let (tool, id) = follow_up;
    let doc = if *tool == "get_user" {
        let name = directory
            .users
            .get(id)
            .cloned()
            .unwrap_or_else(|| "Former employee".to_owned());
        let handle = name.to_lowercase().replace(' ', ".");
        let org = tickets
            .iter()
            .find(|t| t.assignee_id.as_ref().is_some_and(|a| &a.0 == id))
            .map_or("", |t| t.organization_id.0.as_str());
        json!({ "data": {
            "type": "user",
            "id": id,
            "attributes": {
                "display_name": name,
                "email": format!("{handle}@example.com"),
                "role": "agent",
                "time_zone": "Europe/Berlin",
                "created_at": "2024-06-03T08:12:44.120Z",
                "updated_at": "2026-02-10T17:45:09.554Z"
            },
            "relationships": {
                "organization": { "data": { "type": "organization", "id": org } }
            },
            "links": { "self": format!("https://api.example.com/v1/users/{id}") }
        }})
    } else {
        let name = directory.orgs.get(id).cloned().unwrap_or_default();
        json!({ "data": {
            "type": "organization",
            "id": id,
            "attributes": {
                "name": name,
                "plan": "business",
                "created_at": "2023-09-14T11:02:51.008Z",
                "updated_at": "2026-01-22T09:30:12.771Z"
            },
            "links": { "self": format!("https://api.example.com/v1/organizations/{id}") }
        }})
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Bpe::o200k_base();
    let tickets = desk::parse_page(desk::PAGE)?;
    let directory = Directory::seed();
    let lookup = |f: &FollowUp| lookup_document(f, &directory, &tickets);
    let shaper = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(2_000))
        .format(Format::Json);

    // Raw: the document as the endpoint returns it.
    let raw_session = Session::new();
    raw_session.call("search_tickets", &json!({ "status": "open" }));
    raw_session.answer_raw("search_tickets", desk::PAGE);
    let raw = run(
        "raw JSON:API",
        &o200k,
        desk::PAGE,
        &raw_follow_ups(desk::PAGE)?,
        lookup,
        &raw_session,
    );

    // Shaped: ids resolved before the model sees them.
    let shaped_session = Session::new();
    shaped_session.call("search_tickets", &json!({ "status": "open" }));
    let page = shaper.shape_blocking((&tickets, &directory))?;
    shaped_session.answer::<Ticket>(&page);
    let shaped = run(
        "shaped (structured)",
        &o200k,
        page.structured_json(),
        &shaped_follow_ups(page.structured_json())?,
        lookup,
        &shaped_session,
    );

    // Shaped, with the first assignee deleted from the directory.
    let mut thinner = Directory::seed();
    let deleted = tickets
        .iter()
        .find_map(|t| t.assignee_id.clone())
        .ok_or("the page has no assignee")?;
    thinner.users.remove(&deleted.0);
    let gap_session = Session::new();
    gap_session.call("search_tickets", &json!({ "status": "open" }));
    let gap_page = shaper.shape_blocking((&tickets, &thinner))?;
    gap_session.answer::<Ticket>(&gap_page);
    let gap = run(
        "shaped, 1 user deleted",
        &o200k,
        gap_page.structured_json(),
        &shaped_follow_ups(gap_page.structured_json())?,
        lookup,
        &gap_session,
    );

    println!("== the seed's agent loop: one follow-up per distinct unresolved id, one per turn ==");
    println!(
        "{:<24} {:>11} {:>10} {:>9} {:>13} {:>9} {:>13}",
        "run", "page tokens", "follow-ups", "counted", "their results", "requests", "input billed"
    );
    for r in [&raw, &shaped, &gap] {
        println!(
            "{:<24} {:>11} {:>10} {:>9} {:>13} {:>9} {:>13}",
            r.label, r.page_tokens, r.follow_ups, r.counted, r.result_tokens, r.requests, r.billed
        );
        if r.counted != r.follow_ups as u64 {
            return Err(format!(
                "{}: the session counted {} follow-up calls, the loop made {}",
                r.label, r.counted, r.follow_ups
            )
            .into());
        }
    }
    println!(
        "\nshaped, per session: {}\nraw, per session: {}\nthin directory, per session: {}",
        shaped_session.summary(),
        raw_session.summary(),
        gap_session.summary()
    );
    println!(
        "\nthe seed's figures (its own tokenizer): 12 follow-ups and ~1,900 result tokens avoided; \
         3,180 -> 520 tokens for the page.\nhere: {} follow-ups and {} result tokens avoided; \
         {} -> {} tokens for the page (prose text channel: {}); input billed over the run {} -> {} ({:.1}x).",
        raw.follow_ups - shaped.follow_ups,
        raw.result_tokens - shaped.result_tokens,
        raw.page_tokens,
        shaped.page_tokens,
        o200k.count(
            shaper
                .clone()
                .format(Format::Prose)
                .shape_blocking((&tickets, &directory))?
                .text()
        ),
        raw.billed,
        shaped.billed,
        raw.billed as f64 / shaped.billed.max(1) as f64,
    );
    println!(
        "agent loop o200k: raw_followups={} shaped_followups={} raw_billed={} shaped_billed={}",
        raw.follow_ups, shaped.follow_ups, raw.billed, shaped.billed
    );
    Ok(())
}
