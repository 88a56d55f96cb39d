//! The seed's support desk, end to end: a JSON:API page of 12 tickets is loaded into domain
//! structs and shaped, with ids resolved to names in one batched call per resolver.
//!
//! Run with `cargo run --example support_desk` (add `-- --raw` to print the raw page too).

use shape_examples::desk;

use desk::{Directory, Ticket};
use std::collections::HashSet;
use toolshape::{
    Budget, Format, Shaper,
    tokens::{Bpe, Tokenizer},
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let show_raw = std::env::args().any(|a| a == "--raw");
    let o200k = Bpe::o200k_base();
    let cl100k = Bpe::cl100k_base();
    let tickets: Vec<Ticket> = desk::parse_page(desk::PAGE)?;
    let directory = Directory::seed();

    let shaper = Shaper::for_tool("search_tickets").budget(Budget::tokens(2_000));
    let [json, prose, table] =
        desk::shape_formats(&shaper, Some(desk::PAGE), &tickets, &directory)?;

    // The answer first: what a model reads from one call of `search_tickets`.
    println!(
        "== what the model reads: one call of search_tickets, 12 tickets, budget 2,000 tokens ==\n{}\n",
        prose.text()
    );

    println!("== tokens: the endpoint's raw page against the shaped answers ==");
    println!(
        "{:<28} {:>8} {:>8} {:>8} {:>10}",
        "", "bytes", "o200k", "cl100k", "bytes/4"
    );
    for (label, text) in [
        ("raw page (JSON:API)", desk::PAGE),
        ("shaped: JSON envelope", json.structured_json()),
        ("shaped: prose", prose.text()),
        ("shaped: table", table.text()),
    ] {
        let (o, c) = (o200k.count(text), cl100k.count(text));
        let estimate = text.len() / 4;
        let error = (estimate as f64 - o as f64) / o as f64 * 100.0;
        println!(
            "{label:<28} {:>8} {o:>8} {c:>8} {estimate:>6} ({error:+.0}% vs o200k)",
            text.len()
        );
    }
    println!(
        "(o200k and cl100k: real tokenizers' counts; bytes/4 is the usual guess, shown with its error)"
    );

    let users: HashSet<_> = tickets
        .iter()
        .filter_map(|t| t.assignee_id.as_ref())
        .collect();
    let orgs: HashSet<_> = tickets.iter().map(|t| &t.organization_id).collect();
    println!("\n== lookups ==");
    println!(
        "the raw page leaves the model {} follow-up lookups ({} distinct users, {} distinct organizations), one turn each",
        users.len() + orgs.len(),
        users.len(),
        orgs.len()
    );
    for r in &prose.report().resolvers {
        println!(
            "shaping made {} call to resolver `{}`, for {} keys ({} unresolved)",
            r.calls, r.resolver, r.keys, r.unresolved
        );
    }
    println!(
        "the directory saw {} batched calls for 3 shapings",
        directory.calls().len()
    );

    println!(
        "\n== the same answer as a JSON envelope (the structured channel, MCP structuredContent) ==\n{}\n",
        json.structured_json()
    );
    println!(
        "== the same answer as a table (text channel) ==\n{}\n",
        table.text()
    );

    // The report every call makes (also a `tracing` event). Its `raw.tokens` is the raw
    // page's size as the call measured it: a payload over 8 KiB is counted from samples
    // (`"exact": false`), so it can differ a little from the table's whole count above.
    println!(
        "== the report of the prose call (what went in, what came out, what was cut) ==\n{}",
        serde_json::to_string_pretty(prose.report())?
    );

    let bound = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(2_000))
        .page_size(20)
        .attacker_bound::<Ticket>();
    println!(
        "attacker-controlled tokens per call of search_tickets: at most {} ({} per ticket, {} tickets a page)",
        bound.per_call, bound.per_record, bound.max_records
    );
    println!(
        "this call showed {} attacker-controlled tokens",
        prose.report().diagnostics.untrusted.attacker_tokens
    );

    // The first ticket on its own: the JSON:API element as the endpoint returns it, its
    // record in the JSON envelope and its line in prose.
    let seed = &tickets[..1];
    let one = Shaper::for_tool("search_tickets")
        .format(Format::Prose)
        .shape_blocking((seed, &directory))?;
    let record = one.structured()["data"][0].to_string();
    let line = one.text().lines().nth(1).unwrap_or_default().to_owned();
    println!("\n== the first ticket alone ==\nJSON record: {record}\nprose line:  {line}");
    println!(
        "o200k tokens: as the endpoint returns it {}, JSON record {}, prose line {}",
        o200k.count(desk::seed_element()),
        o200k.count(&record),
        o200k.count(&line)
    );

    if show_raw {
        println!(
            "\n== the raw page (JSON:API, as the endpoint returns it) ==\n{}",
            desk::PAGE
        );
    } else {
        println!(
            "\n(the raw page is {} lines of JSON:API: `cargo run --example support_desk -- --raw` prints it)",
            desk::PAGE.lines().count()
        );
    }
    Ok(())
}
