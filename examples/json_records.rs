//! Records without a Rust type: two tools' raw JSON results, a GitHub issue list and a Jira
//! search, shaped by projections written in `examples/json_records.toml`, each paged through
//! `next` to the end at its small configured budget, every record shown once.
//!
//! `cargo run --example json_records`. The last line sums both walks:
//! `config records o200k: raw=<tokens of both payloads> shaped=<tokens of every page>
//! pages=<n> seen=<records shown> of <records in the payloads>`.

use std::collections::BTreeMap;
use std::sync::Arc;
use toolshape::config::ShapeConfig;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::tokens::{Bpe, Tokenizer};

const GITHUB: &str = include_str!("data/github_issues.json");
const JIRA: &str = include_str!("data/jira_search.json");

/// What one walk through a tool's pages saw.
struct Walked {
    pages: usize,
    shaped_tokens: usize,
    seen: BTreeMap<String, usize>,
}

fn walk(
    config: &ShapeConfig,
    tool: &str,
    raw: &str,
    tokenizer: &Bpe,
) -> Result<Walked, Box<dyn std::error::Error>> {
    let projection = config
        .json_projection(tool)
        .ok_or_else(|| format!("{tool} has no configured records"))?;
    let shaper = config.shaper(tool)?;
    let budget = shaper.current_budget().max_tokens();
    // In production: 32 random bytes from configuration, the same on every replica.
    let codec = Arc::new(CursorCodec::new(CursorKeys::random()?));
    let query = QueryHash::of(tool, &serde_json::json!({}))?;
    let mut walked = Walked {
        pages: 0,
        shaped_tokens: 0,
        seen: BTreeMap::new(),
    };
    let mut cursor: Option<String> = None;
    loop {
        let page = shaper
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())?
            .shape_blocking((&projection, raw))?;
        let tokens = tokenizer.count(page.text());
        if tokens > budget {
            return Err(format!("{tool}: a page of {tokens} tokens, over {budget}").into());
        }
        walked.pages += 1;
        walked.shaped_tokens += tokens;
        if walked.pages == 1 {
            println!("--- {tool}, first page ({tokens} of {budget} tokens) ---");
            println!("{}\n", page.text());
        }
        let envelope = page.structured();
        let id_field = projection
            .projection()
            .id
            .and_then(|i| projection.projection().fields.get(i))
            .map(|f| f.name.clone())
            .ok_or("an id field")?;
        let ids: Vec<String> = match envelope.get("fields") {
            // The rows form: the id's position in each row.
            Some(fields) => {
                let at = fields
                    .as_array()
                    .and_then(|f| f.iter().position(|n| *n == *id_field))
                    .ok_or("the id in the rows' fields")?;
                envelope["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|row| row[at].to_string())
                    .collect()
            }
            None => envelope["data"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|record| record[&id_field].to_string())
                .collect(),
        };
        for id in ids {
            *walked.seen.entry(id).or_default() += 1;
        }
        match envelope["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        if walked.pages > 1_000 {
            return Err(format!("{tool}: `next` does not end").into());
        }
    }
    if let Some((id, n)) = walked.seen.iter().find(|(_, n)| **n > 1) {
        return Err(format!("{tool}: record {id} shown {n} times").into());
    }
    Ok(walked)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = ShapeConfig::from_path(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/json_records.toml"
    ))?;
    let o200k = Bpe::o200k_base();
    // How many records each payload holds, read apart from the library.
    let github: serde_json::Value = serde_json::from_str(GITHUB)?;
    let jira: serde_json::Value = serde_json::from_str(JIRA)?;
    let held =
        github.as_array().map_or(0, Vec::len) + jira["issues"].as_array().map_or(0, Vec::len);

    let (mut raw, mut shaped, mut pages, mut seen) = (0, 0, 0, 0);
    for (tool, payload) in [("list_issues", GITHUB), ("jira_search", JIRA)] {
        let walked = walk(&config, tool, payload, &o200k)?;
        let raw_tokens = o200k.count(payload);
        println!(
            "{tool}: {} KB raw ({raw_tokens} tokens) -> {} pages, {} tokens in all, {} records once each\n",
            payload.len() >> 10,
            walked.pages,
            walked.shaped_tokens,
            walked.seen.len()
        );
        raw += raw_tokens;
        shaped += walked.shaped_tokens;
        pages += walked.pages;
        seen += walked.seen.len();
    }
    println!("config records o200k: raw={raw} shaped={shaped} pages={pages} seen={seen} of {held}");
    if seen != held {
        return Err(format!("{seen} records shown of {held}").into());
    }
    Ok(())
}
