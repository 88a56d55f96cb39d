//! GitHub's REST issue list in the API's real form (nested user, labels, milestone,
//! assignees, reactions; integer ids and numbers; ISO dates; long Markdown bodies), shaped by
//! the derive on the nested structs themselves (`shape_examples::github`), then paged through
//! `next` at a small budget to the end, checking that every issue appears exactly once.
//!
//! Run with `cargo run --example github_issues`.

use shape_examples::github::{self, Issue};
use std::collections::BTreeMap;
use std::sync::Arc;
use toolshape::{
    Budget, Format, Shaper, ToolResult,
    cursor::{CursorCodec, CursorKeys, QueryHash},
    tokens::{Tiktoken, Tokenizer},
};

/// The small budget the whole list is paged through.
const PAGE_BUDGET: usize = 1_500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Tiktoken::o200k_base();
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
    let codec = Arc::new(CursorCodec::new(CursorKeys::new(
        b"github-issues-example-signing-key-32b",
    )?));
    let query = QueryHash::of("list_issues", &serde_json::json!({"state": "all"}))?;
    let mut cursor: Option<String> = None;
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    let mut pages = 0;
    let mut page_tokens = Vec::new();
    loop {
        pages += 1;
        let page = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(PAGE_BUDGET))
            .format(Format::Prose)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())?
            .shape_blocking(&issues)?;
        let text_tokens = o200k.count(page.text());
        page_tokens.push(text_tokens);
        assert!(
            text_tokens <= PAGE_BUDGET,
            "page {pages} is {text_tokens} tokens, over {PAGE_BUDGET}"
        );
        // What the model reads: "#1412 …" at the start of each record line.
        for number in numbers_in(page.text()) {
            *seen.entry(number).or_default() += 1;
        }
        match page.structured()["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        if pages > issues.len() {
            return Err("more pages than issues: `next` does not end".into());
        }
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    let missing: Vec<u64> = issues
        .iter()
        .map(|i| i.number)
        .filter(|n| !seen.contains_key(n))
        .collect();
    println!(
        "\n== paged at {PAGE_BUDGET} tokens: {pages} pages of {:?} tokens ==",
        page_tokens
    );
    if !twice.is_empty() || !missing.is_empty() {
        return Err(format!("shown twice: {twice:?}; never shown: {missing:?}").into());
    }
    println!(
        "github issues o200k: raw={raw_tokens} shaped={} pages={pages} seen={} of {}",
        o200k.count(prose.text()),
        seen.len(),
        issues.len()
    );
    Ok(())
}

/// The issue numbers a prose page shows, read from the text: each record line starts `#N `.
fn numbers_in(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| line.strip_prefix('#'))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}
