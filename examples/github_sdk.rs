//! Types the service does not own: GitHub issues as the `octocrab` SDK models them
//! (`octocrab::models::issues::Issue`, which no one outside octocrab can derive on), shaped
//! without copying the type: one wrapper field, and one `#[shape(from = …)]` per output,
//! each a path into the SDK's value that the compiler checks (a field octocrab renames or
//! removes in a new version is a compile error here, at the path).
//!
//! As with serde's remote derive, the decisions live next to the type, in the user's crate;
//! unlike it, nothing of the SDK type is restated. The SDK's other fields are left out, and
//! cannot be named in `omitted.fields` (the derive sees only the paths), which this example's
//! projection says in `skip`ped fields of its own where it matters.
//!
//! Run with `cargo run --example github_sdk --features sdk`.

use octocrab::models::issues::Issue as SdkIssue;
use shape_examples::github;
use toolshape::{
    Budget, Format, Shaper, ToolResult,
    tokens::{Bpe, Tokenizer},
};

/// An SDK issue as a tool shows it. The value is moved in, not copied: `Issue::from`.
#[derive(ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number} {title} by {author}, {state}, {labels}, {comments} comments, \
             milestone {milestone}, updated {updated_at}: {body}"
)]
pub struct Issue {
    #[shape(from = issue.number, id, rename = "number")]
    #[shape(from = issue.title, untrusted(max_tokens = 24), rename = "title")]
    #[shape(from = issue.user.login, rename = "author")]
    #[shape(from = issue.labels[].name, rename = "labels", absent = "no labels")]
    #[shape(from = issue.state, rename = "state")]
    #[shape(from = issue.assignees[].login, rename = "assignees", absent = "unassigned")]
    #[shape(from = issue.milestone?.title, rename = "milestone", absent = "none")]
    #[shape(from = issue.comments, rename = "comments")]
    #[shape(from = issue.created_at, date, rename = "created_at")]
    #[shape(from = issue.updated_at, date, rank = desc, rename = "updated_at")]
    #[shape(from = issue.closed_at, date, rename = "closed_at", absent = "open")]
    #[shape(from = issue.body, untrusted(max_tokens = 60), rename = "body", absent = "no description")]
    pub issue: SdkIssue,
}

impl From<SdkIssue> for Issue {
    fn from(issue: SdkIssue) -> Self {
        Issue { issue }
    }
}

const PAGE_BUDGET: usize = 1_500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o200k = Bpe::o200k_base();
    // The same REST payload as `github_issues`, parsed by the SDK's own models.
    let sdk: Vec<SdkIssue> = serde_json::from_str(github::PAYLOAD)?;
    let issues: Vec<Issue> = sdk.into_iter().map(Issue::from).collect();
    let raw_tokens = o200k.count(github::PAYLOAD);

    let first = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(2_000))
        .format(Format::Prose)
        .shape_blocking(&issues)?;
    println!("== first page, prose ==\n{}", first.text());
    println!(
        "\n== first record, JSON ==\n{}",
        serde_json::to_string_pretty(&first.structured()["data"][0])?
    );

    // Every page at a small budget, following `next` to the end.
    let numbers = issues.iter().map(|i| i.issue.number);
    let walk = github::walk_pages(&issues, numbers, PAGE_BUDGET)?;
    println!(
        "github sdk o200k: raw={raw_tokens} shaped={} pages={} seen={} of {}",
        o200k.count(first.text()),
        walk.pages,
        walk.seen,
        issues.len()
    );
    Ok(())
}
