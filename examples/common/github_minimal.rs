//! What each form costs a model for the same GitHub issues: GitHub's own MCP server's minimal
//! JSON against our channels, the facts held equal.
//!
//! The facts are the ones github/github-mcp-server keeps in its hand-written `MinimalIssue`
//! (`pkg/github/minimal_types.go`): number, title, body, state, state_reason, html_url, the
//! author's login, author_association, label names, assignee logins, the milestone's title,
//! comments, the nine reaction counts (ours name `+1` and `-1` `plus_one` and `minus_one`:
//! Rust names them so), created_at, updated_at and closed_at (RFC 3339, as
//! given). [`github_minimal_json`] builds that JSON from the raw REST payload with serde_json
//! alone (omitting empty fields as Go's `omitempty` does), not through our derive;
//! [`MinimalFacts`] is the derive over the same facts.

use serde::Deserialize;
use serde_json::{Map, Value};
use toolshape::tokens::{Bpe, Tokenizer};
use toolshape::untrusted::{Provenance, UntrustedPolicy, UrlPolicy, prepare};
use toolshape::{
    Budget, ChannelPolicy, Format, Shaped, Shaper, ToolResult, envelope::StructuredForm,
};

/// The cap on a title, in tokens, in [`MinimalFacts`] and the capped GitHub JSON.
pub const TITLE_CAP: u32 = 24;
/// The cap on a body, in tokens (the `github` example's cap).
pub const BODY_CAP: u32 = 60;

/// A GitHub issue with exactly `MinimalIssue`'s facts, shaped by the derive.
#[derive(Debug, Clone, Deserialize, ToolResult)]
#[shape(name = "issue", plural = "issues")]
pub struct MinimalFacts {
    #[shape(id)]
    pub number: u64,
    #[shape(untrusted(max_tokens = 24))]
    pub title: String,
    #[shape(untrusted(max_tokens = 60), absent = "no description")]
    pub body: Option<String>,
    #[shape(show)]
    pub state: String,
    #[shape(show, absent = "none")]
    pub state_reason: Option<String>,
    #[shape(show)]
    pub html_url: String,
    #[shape(from = user.login, rename = "user")]
    pub user: Login,
    #[shape(show)]
    pub author_association: String,
    #[shape(from = labels[].name, absent = "no labels")]
    pub labels: Vec<Named>,
    #[shape(from = assignees[].login, absent = "unassigned")]
    pub assignees: Vec<Login>,
    #[shape(from = milestone?.title, absent = "none")]
    pub milestone: Option<Titled>,
    #[shape(show)]
    pub comments: u32,
    #[shape(nested)]
    pub reactions: Reactions,
    #[shape(show)]
    pub created_at: String,
    #[shape(show)]
    pub updated_at: String,
    #[shape(show, absent = "open")]
    pub closed_at: Option<String>,
}

/// An account, by login.
#[derive(Debug, Clone, Deserialize)]
pub struct Login {
    pub login: String,
}

/// A label, by name.
#[derive(Debug, Clone, Deserialize)]
pub struct Named {
    pub name: String,
}

/// A milestone, by title.
#[derive(Debug, Clone, Deserialize)]
pub struct Titled {
    pub title: String,
}

/// The reaction counts `MinimalReactions` keeps.
#[derive(Debug, Clone, Deserialize, ToolResult)]
#[shape(name = "reactions", plural = "reactions")]
pub struct Reactions {
    #[shape(show)]
    pub total_count: u32,
    #[serde(rename = "+1")]
    #[shape(rename = "plus_one")]
    pub plus_one: u32,
    #[serde(rename = "-1")]
    #[shape(rename = "minus_one")]
    pub minus_one: u32,
    #[shape(show)]
    pub laugh: u32,
    #[shape(show)]
    pub confused: u32,
    #[shape(show)]
    pub heart: u32,
    #[shape(show)]
    pub hooray: u32,
    #[shape(show)]
    pub rocket: u32,
    #[shape(show)]
    pub eyes: u32,
}

/// `MinimalIssue`'s JSON for each issue of the raw REST `payload` (a JSON array), built
/// field by field with serde_json, empty values omitted as `omitempty` does. With `capped`,
/// titles and bodies are cut to [`TITLE_CAP`] and [`BODY_CAP`] tokens as ours are (same cut,
/// same marker), for a comparison on equal text.
pub fn github_minimal_json(
    payload: &[Value],
    capped: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let o200k = Bpe::o200k_base();
    let cap = |text: &str, tokens: u32| -> String {
        if !capped {
            return text.to_owned();
        }
        let p = prepare(text, Some(tokens), &o200k, UrlPolicy::Keep);
        match p.cut {
            Some(cut) => format!("{}{cut}", p.content),
            None => p.content.into_owned(),
        }
    };
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let names = |v: &Value, key: &str| -> Vec<Value> {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i[key].as_str())
                    .map(Value::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::with_capacity(payload.len());
    for issue in payload {
        let mut m = Map::new();
        m.insert("number".into(), issue["number"].clone());
        let title = text(&issue["title"]).ok_or("an issue without a title")?;
        m.insert("title".into(), cap(&title, TITLE_CAP).into());
        if let Some(body) = text(&issue["body"]) {
            m.insert("body".into(), cap(&body, BODY_CAP).into());
        }
        m.insert("state".into(), issue["state"].clone());
        if let Some(reason) = text(&issue["state_reason"]) {
            m.insert("state_reason".into(), reason.into());
        }
        m.insert("html_url".into(), issue["html_url"].clone());
        if let Some(login) = text(&issue["user"]["login"]) {
            m.insert("user".into(), serde_json::json!({ "login": login }));
        }
        if let Some(association) = text(&issue["author_association"]) {
            m.insert("author_association".into(), association.into());
        }
        let labels = names(&issue["labels"], "name");
        if !labels.is_empty() {
            m.insert("labels".into(), labels.into());
        }
        let assignees = names(&issue["assignees"], "login");
        if !assignees.is_empty() {
            m.insert("assignees".into(), assignees.into());
        }
        if let Some(milestone) = text(&issue["milestone"]["title"]) {
            m.insert("milestone".into(), milestone.into());
        }
        if issue["comments"].as_u64().is_some_and(|c| c > 0) {
            m.insert("comments".into(), issue["comments"].clone());
        }
        let r = &issue["reactions"];
        if r.is_object() {
            let mut reactions = Map::new();
            for key in [
                "total_count",
                "+1",
                "-1",
                "laugh",
                "confused",
                "heart",
                "hooray",
                "rocket",
                "eyes",
            ] {
                reactions.insert(key.into(), r[key].as_u64().unwrap_or(0).into());
            }
            m.insert("reactions".into(), reactions.into());
        }
        for key in ["created_at", "updated_at", "closed_at"] {
            if let Some(at) = text(&issue[key]) {
                m.insert(key.into(), at.into());
            }
        }
        out.push(Value::Object(m));
    }
    Ok(serde_json::to_string(&out)?)
}

/// The first `n` issues of the `github` example's payload: raw, and as [`MinimalFacts`].
pub fn first_issues(
    n: usize,
) -> Result<(Vec<Value>, Vec<MinimalFacts>), Box<dyn std::error::Error>> {
    let raw: Vec<Value> = serde_json::from_str(crate::github::PAYLOAD)?;
    let raw: Vec<Value> = raw.into_iter().take(n).collect();
    let typed = raw
        .iter()
        .map(MinimalFacts::deserialize)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((raw, typed))
}

/// One page of `issues` in the caller's order at `budget` tokens.
pub fn shape(
    issues: &[MinimalFacts],
    budget: usize,
    format: Format,
    channels: ChannelPolicy,
    form: StructuredForm,
    provenance: Provenance,
) -> Result<Shaped, toolshape::ShapeError> {
    Shaper::for_tool("list_issues")
        .budget(Budget::tokens(budget))
        .format(format)
        .channels(channels)
        .structured_form(form)
        .untrusted(UntrustedPolicy {
            provenance,
            ..UntrustedPolicy::default()
        })
        .call()
        .keep_order()
        .shape_blocking(issues)
}

/// The figures: o200k tokens of each form of the same issues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figures {
    /// Issues measured.
    pub issues: usize,
    /// GitHub's minimal JSON, bodies as GitHub sends them.
    pub github: usize,
    /// GitHub's minimal JSON, titles and bodies capped as ours are.
    pub github_capped: usize,
    /// Our table text channel (the model reads the text).
    pub table: usize,
    /// Our prose text channel.
    pub prose: usize,
    /// Our structured channel, objects form.
    pub objects: usize,
    /// Our structured channel, rows form.
    pub rows: usize,
    /// A JSON text channel with a tag around every untrusted value (the old compact form).
    pub json_tagged: usize,
    /// A JSON text channel naming the untrusted fields once (the compact form now).
    pub json_named: usize,
    /// Issues a JSON text channel shows at [`Figures::PAGE_BUDGET`]: tagged, named.
    pub shown_at_budget: (usize, usize),
    /// Its tokens at that budget: tagged, named.
    pub tokens_at_budget: (usize, usize),
}

impl Figures {
    /// The budget the JSON text channel is compared at.
    pub const PAGE_BUDGET: usize = 2_000;

    /// Measures the first `n` issues of the payload.
    pub fn measure(n: usize) -> Result<Figures, Box<dyn std::error::Error>> {
        let o200k = Bpe::o200k_base();
        let (raw, issues) = first_issues(n)?;
        let all = 1_000_000;
        let whole =
            |format, channels, form, provenance| -> Result<Shaped, Box<dyn std::error::Error>> {
                let shaped = shape(&issues, all, format, channels, form, provenance)?;
                if shaped.report().records.shown != issues.len() {
                    return Err("not every issue shown at an unlimited budget".into());
                }
                Ok(shaped)
            };
        let text = |format| -> Result<usize, Box<dyn std::error::Error>> {
            let s = whole(
                format,
                ChannelPolicy::Text,
                StructuredForm::Objects,
                Provenance::Compact,
            )?;
            Ok(o200k.count(s.text()))
        };
        let structured = |form| -> Result<usize, Box<dyn std::error::Error>> {
            let s = whole(
                Format::Json,
                ChannelPolicy::Structured,
                form,
                Provenance::Compact,
            )?;
            Ok(o200k.count(s.structured_json()))
        };
        let json_text = |provenance| -> Result<usize, Box<dyn std::error::Error>> {
            let s = whole(
                Format::Json,
                ChannelPolicy::Text,
                StructuredForm::Objects,
                provenance,
            )?;
            Ok(o200k.count(s.text()))
        };
        let at_budget = |provenance| -> Result<(usize, usize), Box<dyn std::error::Error>> {
            let s = shape(
                &issues,
                Self::PAGE_BUDGET,
                Format::Json,
                ChannelPolicy::Text,
                StructuredForm::Objects,
                provenance,
            )?;
            Ok((s.report().records.shown, o200k.count(s.text())))
        };
        let tagged = at_budget(Provenance::Tag)?;
        let named = at_budget(Provenance::Compact)?;
        Ok(Figures {
            issues: issues.len(),
            github: o200k.count(&github_minimal_json(&raw, false)?),
            github_capped: o200k.count(&github_minimal_json(&raw, true)?),
            table: text(Format::Table)?,
            prose: text(Format::Prose)?,
            objects: structured(StructuredForm::Objects)?,
            rows: structured(StructuredForm::Rows)?,
            json_tagged: json_text(Provenance::Tag)?,
            json_named: json_text(Provenance::Compact)?,
            shown_at_budget: (tagged.0, named.0),
            tokens_at_budget: (tagged.1, named.1),
        })
    }
}
