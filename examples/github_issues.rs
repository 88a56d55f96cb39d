//! GitHub's REST issue list in the API's real form (nested user, labels, milestone,
//! assignees, reactions; integer ids and numbers; ISO dates; long Markdown bodies), shaped by
//! the derive on the nested structs themselves (`shape_examples::github`), then paged through
//! `next` at a small budget to the end, checking that every issue appears exactly once.
//!
//! Run with `cargo run --example github_issues`.

use shape_examples::github::{self, Issue};
use toolshape::{
    Budget, Format, Shaper, ToolResult,
    tokens::{Bpe, Tokenizer},
};

/// The small budget the whole list is paged through.
const PAGE_BUDGET: usize = 1_500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Bpe::o200k_base();
    let issues = github::issues()?;
    let raw_tokens = o200k.count(github::PAYLOAD);
    println!(
        "== raw payload: {} issues, {} bytes, {raw_tokens} o200k tokens ==",
        issues.len(),
        github::PAYLOAD.len()
    );
    println!(
        "this view leaves out: {}",
        Issue::PROJECTION.skipped_names().join(", ")
    );

    // The first page at 2,000 tokens, in each rendering.
    let shaper = |format| {
        Shaper::for_tool("list_issues")
            .budget(Budget::tokens(2_000))
            .format(format)
    };
    let prose = shaper(Format::Prose)
        .call()
        .raw_payload(github::PAYLOAD)
        .shape_blocking(&issues)?;
    println!("\n== first page, prose (text channel) ==\n{}", prose.text());
    println!(
        "\n== first record, JSON (structured channel) ==\n{}",
        serde_json::to_string_pretty(&prose.structured()["data"][0])?
    );
    let table = shaper(Format::Table).call().shape_blocking(&issues)?;
    println!("\n== first page, table ==\n{}", table.text());

    // Every page at a small budget, following `next` to the end.
    let walk = github::walk_pages(&issues, issues.iter().map(|i| i.number), PAGE_BUDGET)?;
    println!(
        "\n== paged at {PAGE_BUDGET} tokens: {} pages of {:?} tokens ==",
        walk.pages, walk.page_tokens
    );
    println!(
        "github issues o200k: raw={raw_tokens} shaped={} pages={} seen={} of {}",
        o200k.count(prose.text()),
        walk.pages,
        walk.seen,
        issues.len()
    );
    Ok(())
}
