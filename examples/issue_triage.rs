//! "Is this repository healthy?" over 1,412 issues: the answer is an aggregate in the
//! summary, the rows stay behind a handle, and the model's next calls reopen the handle
//! (the 5 most recent open bugs) and page on with the cursor.
//!
//! Run with `cargo run --example issue_triage --features tokio`.

use shape_examples::tracker;

use serde_json::json;
use std::sync::Arc;
use toolshape::{
    Budget, Format, Shaper,
    aggregate::Aggregate,
    cursor::{CursorCodec, CursorKeys},
    fields::Day,
    handle::{HandlePolicy, Keep, MemoryStore, OpenResult},
    tokens::{Bpe, Tokenizer},
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Bpe::o200k_base();
    let (issues, raw): (Vec<_>, Vec<_>) = tracker::issues().into_iter().unzip();
    let raw_text = serde_json::to_string_pretty(&raw)?;
    let today = Day::parse(tracker::TODAY).ok_or("bad date")?;
    let store = MemoryStore::default();
    let policy = HandlePolicy::default();
    let codec = Arc::new(CursorCodec::new(CursorKeys::new(
        b"an example key, 32 bytes long!!!",
    )?));
    let health = Aggregate::new()
        .recent(tracker::Issue::FIELDS.opened, 30)
        .top(tracker::Issue::FIELDS.labels, 3);

    // Call 1: list_issues. The whole result is far over budget: stored, summarised, first page.
    let shaper = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(800))
        .format(Format::Prose)
        .call()
        .raw_payload(&raw_text);
    let first = shaper
        .shape_or_store(
            (&issues, &()),
            Keep::new(&store, "triage-bot", &policy)
                .aggregate(&health)
                .today(today),
        )
        .await?;
    println!("== call 1: list_issues ==\n{}\n", first.text());
    println!(
        "tokens: {} (text), {} (structured)\n",
        first.report().tokens.text,
        first
            .report()
            .tokens
            .structured
            .map_or_else(|| "not counted".to_owned(), |n| n.to_string())
    );
    let handle = first
        .frame()
        .omitted
        .handle
        .clone()
        .ok_or("the result was not stored")?;
    // The counts and the aggregate: the summary up to where it says how to go on.
    let answer = first
        .summary()
        .split("; ")
        .take_while(|part| !part.starts_with("the whole result"))
        .collect::<Vec<_>>()
        .join("; ");
    println!(
        "the health answer: {answer:?} ({} tokens)\n",
        o200k.count(&answer)
    );

    // Call 2: the model reopens the handle for the 5 most recent open bugs.
    let open = OpenResult::new(&store, Arc::clone(&codec)).shaper(
        Shaper::for_tool("open_result")
            .budget(Budget::tokens(800))
            .format(Format::Prose),
    );
    let query = json!({
        "handle": handle,
        "filter": [{"field": "state", "op": "equals", "value": "open"}, {"field": "labels", "op": "contains", "value": "bug"}],
        "sort": {"field": "opened", "order": "desc"},
        "page_size": 5
    });
    let reopened = open.call_on("triage-bot", query.clone(), today).await;
    println!("== call 2: open_result {query} ==\n{}\n", reopened.text());
    println!("tokens: {}\n", reopened.report().tokens.text);

    // Call 3: the next page, with the cursor.
    let mut next_query = query.clone();
    next_query["cursor"] = json!(reopened.next().ok_or("no next page")?);
    let page = open.call_on("triage-bot", next_query, today).await;
    println!(
        "== call 3: open_result with the cursor ==\n{}\n",
        page.text()
    );

    // Another owner cannot open the handle.
    let intruder = open.call_on("someone-else", query, today).await;
    println!("== another owner ==\n{}\n", intruder.text());

    println!(
        "triage o200k: summary={} reopen={} raw={}",
        o200k.count(&answer),
        reopened.report().tokens.text,
        o200k.count(&raw_text)
    );
    Ok(())
}
