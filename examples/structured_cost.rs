//! What a model pays for the same 30 GitHub issues in each form: GitHub's own MCP server's
//! minimal JSON against our table and prose text, our structured channel in its objects and
//! rows forms, and a JSON text channel whose untrusted values are tagged one by one or named
//! once in the envelope. The facts are `MinimalIssue`'s (see `shape_examples::github_minimal`).
//!
//! Run with `cargo run --release --example structured_cost`.

use shape_examples::github::{self, Issue};
use shape_examples::github_minimal::Figures;
use toolshape::tokens::{Bpe, Tokenizer};
use toolshape::untrusted::{Provenance, UntrustedPolicy};
use toolshape::{Budget, ChannelPolicy, Format, Shaper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let f = Figures::measure(30)?;
    let ratio = |n: usize, of: usize| n as f64 / of as f64;
    println!(
        "== {} issues, MinimalIssue's facts, o200k tokens (our envelope included) ==",
        f.issues
    );
    println!(
        "{:<48} {:>7} {:>10} {:>10}",
        "form", "tokens", "vs GitHub", "vs capped"
    );
    let rows = [
        ("GitHub MinimalIssue JSON, bodies as sent", f.github),
        (
            "GitHub MinimalIssue JSON, bodies capped as ours",
            f.github_capped,
        ),
        ("ours: table text channel", f.table),
        ("ours: prose text channel", f.prose),
        ("ours: structured channel, objects (data)", f.objects),
        ("ours: structured channel, rows (fields + data)", f.rows),
        ("ours: JSON text channel, a tag a value", f.json_tagged),
        ("ours: JSON text channel, fields named once", f.json_named),
    ];
    for (what, tokens) in rows {
        println!(
            "{what:<48} {tokens:>7} {:>9.2}x {:>9.2}x",
            ratio(tokens, f.github),
            ratio(tokens, f.github_capped)
        );
    }
    println!(
        "rows / objects: {:.2}x; rows / table: {:.2}x",
        ratio(f.rows, f.objects),
        ratio(f.rows, f.table)
    );
    println!(
        "JSON text channel at {} tokens: {} issues in {} tokens with a tag a value, {} in {} \
         with the fields named once ({:.1} tokens a value saved on the whole list)",
        Figures::PAGE_BUDGET,
        f.shown_at_budget.0,
        f.tokens_at_budget.0,
        f.shown_at_budget.1,
        f.tokens_at_budget.1,
        (f.json_tagged - f.json_named) as f64 / (2 * f.issues) as f64
    );

    // The same comparison on the `github_issues` example's own projection of the REST schema
    // (its `Issue`: dates as days, a reaction total, a pull request link).
    let o200k = Bpe::o200k_base();
    let issues: Vec<Issue> = github::issues()?.into_iter().take(30).collect();
    let text = |format, provenance, budget| -> Result<(usize, usize), Box<dyn std::error::Error>> {
        let shaped = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(budget))
            .format(format)
            .channels(ChannelPolicy::Text)
            .untrusted(UntrustedPolicy {
                provenance,
                ..UntrustedPolicy::default()
            })
            .call()
            .keep_order()
            .shape_blocking(&issues)?;
        Ok((shaped.report().records.shown, o200k.count(shaped.text())))
    };
    for budget in [2_000, 1_000_000] {
        let (tagged, named, prose) = (
            text(Format::Json, Provenance::Tag, budget)?,
            text(Format::Json, Provenance::Compact, budget)?,
            text(Format::Prose, Provenance::Compact, budget)?,
        );
        println!(
            "github example's Issue at {budget} tokens, text channel: JSON with a tag a value {} \
             issues in {} tokens; JSON with the fields named once {} in {}; prose {} in {}",
            tagged.0, tagged.1, named.0, named.1, prose.0, prose.1
        );
    }
    Ok(())
}
