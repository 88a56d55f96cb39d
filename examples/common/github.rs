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
