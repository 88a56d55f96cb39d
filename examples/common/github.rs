//! GitHub's REST "list repository issues" response, deserialised into the nested structs a
//! Rust service would write, each carrying `#[derive(ToolResult)]` directly: no flattened copy.
//!
//! The payload (`examples/data/github_issues.json`, 60 issues) is generated to GitHub's
//! published response schema by `examples/data/gen_github_issues.py`: see that file for its
//! source and licence.

use serde::Deserialize;
use toolshape::ToolResult;

/// The payload, as `GET /repos/{owner}/{repo}/issues` returns it.
pub const PAYLOAD: &str = include_str!("../data/github_issues.json");

/// The payload parsed.
pub fn issues() -> Result<Vec<Issue>, serde_json::Error> {
    serde_json::from_str(PAYLOAD)
}

/// An issue (or a pull request: GitHub lists both) as the API returns it.
#[derive(Debug, Clone, Deserialize, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number} {title} by {author}, {state}, {labels}, {comments} comments, \
             milestone {milestone}, updated {updated_at}: {body}"
)]
pub struct Issue {
    /// The number people and other tools use (`#1412`): the record's id.
    #[shape(id)]
    pub number: u64,
    /// GitHub's global database id: not what any tool takes.
    #[shape(skip)]
    pub id: u64,
    #[shape(skip)]
    pub node_id: String,
    #[shape(skip)]
    pub url: String,
    #[shape(skip)]
    pub html_url: String,
    #[shape(skip)]
    pub repository_url: String,
    #[shape(untrusted(max_tokens = 24))]
    pub title: String,
    #[shape(from = user.login, rename = "author")]
    pub user: User,
    #[shape(from = labels[].name, absent = "no labels")]
    pub labels: Vec<Label>,
    #[shape(show)]
    pub state: State,
    #[shape(skip)]
    pub locked: bool,
    #[shape(skip)]
    pub assignee: Option<User>,
    #[shape(from = assignees[].login, absent = "unassigned")]
    pub assignees: Vec<User>,
    #[shape(nested, absent = "none")]
    pub milestone: Option<Milestone>,
    #[shape(show)]
    pub comments: u32,
    #[shape(date)]
    pub created_at: String,
    #[shape(date, rank = desc)]
    pub updated_at: String,
    #[shape(date, absent = "open")]
    pub closed_at: Option<String>,
    #[shape(skip)]
    pub author_association: String,
    #[shape(from = reactions.total_count, rename = "reactions")]
    pub reactions: Reactions,
    /// Markdown written by anyone who can open an issue: capped, sanitised, marked.
    #[shape(untrusted(max_tokens = 60), absent = "no description")]
    pub body: Option<String>,
    #[shape(from = pull_request?.html_url, rename = "pull_request", absent = "not a pull request")]
    pub pull_request: Option<PullRequestLinks>,
}

/// A GitHub account, as nested in issues.
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    pub id: u64,
    pub node_id: String,
    pub avatar_url: String,
    pub html_url: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub site_admin: bool,
}

/// A label, as nested in issues.
#[derive(Debug, Clone, Deserialize)]
pub struct Label {
    pub id: u64,
    pub name: String,
    pub color: String,
    pub description: Option<String>,
    pub default: bool,
}

/// An issue's state: a Rust enum with serde's names and no `JsonSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Open,
    Closed,
}

/// A milestone: a type this service owns, shown through its own projection.
#[derive(Debug, Clone, Deserialize, ToolResult)]
#[shape(
    name = "milestone",
    plural = "milestones",
    prose = "{title} ({state}, due {due_on})"
)]
pub struct Milestone {
    #[shape(show)]
    pub title: String,
    #[shape(date, absent = "not set")]
    pub due_on: Option<String>,
    #[shape(show)]
    pub state: State,
    #[shape(skip)]
    pub number: u64,
    #[shape(skip)]
    pub id: u64,
    #[shape(skip)]
    pub creator: User,
    #[shape(skip)]
    pub description: Option<String>,
}

/// The reaction counts.
#[derive(Debug, Clone, Deserialize)]
pub struct Reactions {
    pub total_count: u32,
    #[serde(rename = "+1")]
    pub plus_one: u32,
    #[serde(rename = "-1")]
    pub minus_one: u32,
    pub heart: u32,
}

/// The links a pull request carries in an issue list.
#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestLinks {
    pub html_url: String,
    pub merged_at: Option<String>,
}

/// What paging a list of issues through `next` found.
#[derive(Debug)]
pub struct Walk {
    /// Pages shown.
    pub pages: usize,
    /// Each page's text-channel tokens (o200k).
    pub page_tokens: Vec<usize>,
    /// Distinct issues shown.
    pub seen: usize,
}

/// Pages `rows` in prose at `budget` tokens from the first page, following `next` to the end,
/// and checks what the model reads: every page within the budget, and each of `numbers` shown
/// exactly once (read from the text: each record line starts `#N `).
pub fn walk_pages<T>(
    rows: &[T],
    numbers: impl IntoIterator<Item = u64>,
    budget: usize,
) -> Result<Walk, Box<dyn std::error::Error>>
where
    T: ToolResult<Needs = ()> + Sync,
{
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    use toolshape::tokens::{Bpe, Tokenizer};
    use toolshape::{Budget, Format, Shaper};

    let o200k = Bpe::o200k_base();
    let codec = Arc::new(CursorCodec::new(CursorKeys::new(
        b"github-issues-example-signing-key-32b",
    )?));
    let query = QueryHash::of("list_issues", &serde_json::json!({"state": "all"}))?;
    let mut cursor: Option<String> = None;
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    let mut page_tokens = Vec::new();
    loop {
        let page = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(budget))
            .format(Format::Prose)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())?
            .shape_blocking(rows)?;
        let tokens = o200k.count(page.text());
        page_tokens.push(tokens);
        if tokens > budget {
            let n = page_tokens.len();
            return Err(format!("page {n} is {tokens} tokens, over {budget}").into());
        }
        for number in numbers_in(page.text()) {
            *seen.entry(number).or_default() += 1;
        }
        match page.structured()["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        if page_tokens.len() > rows.len() {
            return Err("more pages than issues: `next` does not end".into());
        }
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    let missing: Vec<u64> = numbers
        .into_iter()
        .filter(|n| !seen.contains_key(n))
        .collect();
    if !twice.is_empty() || !missing.is_empty() {
        return Err(format!("shown twice: {twice:?}; never shown: {missing:?}").into());
    }
    Ok(Walk {
        pages: page_tokens.len(),
        page_tokens,
        seen: seen.len(),
    })
}

/// The issue numbers a prose page shows, read from the text: each record line starts `#N `.
fn numbers_in(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| line.strip_prefix('#'))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}
