//! Tokens of the seed's 12-ticket page: the raw JSON:API page as printed against the shaped
//! envelope as JSON, prose and table, and against TOON encoding the same projected records.
//!
//! Run with `cargo run --example token_report`.

use shape_examples::desk;

use toolshape::{
    Budget, Shaper,
    tokens::{Bpe, Tokenizer},
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tickets = desk::parse_page(desk::PAGE)?;
    let directory = desk::Directory::seed();
    let shaper = Shaper::for_tool("search_tickets").budget(Budget::tokens(4_000));
    let [json, prose, table] = desk::shape_formats(&shaper, None, &tickets, &directory)?;
    let records = serde_json::json!({ "tickets": json.structured()["data"] });
    let toon = toon_format::encode_default(&records)?;

    println!("{toon}\n");
    for tokenizer in [Bpe::o200k_base(), Bpe::cl100k_base()] {
        let counts = [
            ("raw JSON:API page, as printed", tokenizer.count(desk::PAGE)),
            (
                "envelope, JSON (structured channel)",
                tokenizer.count(json.structured_json()),
            ),
            ("envelope, JSON text channel", tokenizer.count(json.text())),
            ("envelope, prose", tokenizer.count(prose.text())),
            ("envelope, table", tokenizer.count(table.text())),
            ("TOON, projected records only", tokenizer.count(&toon)),
        ];
        println!("{}:", tokenizer.name());
        for (label, n) in counts {
            println!(
                "  {label:<38} {n:>6}  ({:.1}x smaller than raw)",
                counts[0].1 as f64 / n as f64
            );
        }
    }
    let o200k = Bpe::o200k_base();
    println!(
        "seed page o200k: raw={} json={} prose={} table={} toon={}",
        o200k.count(desk::PAGE),
        o200k.count(json.structured_json()),
        o200k.count(prose.text()),
        o200k.count(table.text()),
        o200k.count(&toon)
    );
    Ok(())
}
