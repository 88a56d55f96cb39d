//! The seed's support desk, end to end: a JSON:API page of 12 tickets is loaded into domain
//! structs and shaped, with ids resolved to names in one batched call per resolver.
//!
//! Run with `cargo run --example support_desk`.

use shape_examples::desk;

use desk::{Directory, Ticket};
use std::collections::HashSet;
use toolshape::{
    Budget, Format, Shaper,
    tokens::{Tiktoken, Tokenizer},
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Tiktoken::o200k_base();
    let cl100k = Tiktoken::cl100k_base();
    let tickets: Vec<Ticket> = desk::parse_page(desk::PAGE)?;
    let directory = Directory::seed();

    println!(
        "== raw page (JSON:API, as the endpoint returns it) ==\n{}",
        desk::PAGE
    );

    let shaper = Shaper::for_tool("search_tickets").budget(Budget::tokens(2_000));
    let [json, prose, table] =
        desk::shape_formats(&shaper, Some(desk::PAGE), &tickets, &directory)?;

    println!(
        "== shaped page, JSON envelope (structured channel) ==\n{}\n",
        json.structured_json()
    );
    println!(
        "== shaped page, prose (text channel) ==\n{}\n",
        prose.text()
    );
    println!(
        "== shaped page, table (text channel) ==\n{}\n",
        table.text()
    );

    println!("== tokens ==");
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
    println!("report (prose): {}", serde_json::to_string(prose.report())?);

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

    // The seed's ticket on its own: the element as printed, its projected JSON record and
    // its prose line.
    let seed = &tickets[..1];
    let one = Shaper::for_tool("search_tickets")
        .format(Format::Prose)
        .shape_blocking_with(seed, &directory)?;
    let record = one.structured()["data"][0].to_string();
    let line = one.text().lines().nth(1).unwrap_or_default().to_owned();
    println!("\nseed record: {record}\nseed line:   {line}");
    println!(
        "seed ticket o200k: raw={} json={} prose={}",
        o200k.count(desk::seed_element()),
        o200k.count(&record),
        o200k.count(&line)
    );
    Ok(())
}
