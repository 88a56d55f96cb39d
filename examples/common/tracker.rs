//! An issue tracker of 1,412 issues, generated deterministically: the raw API objects (about
//! forty fields each, as a REST API returns them) and the domain struct a service loads them
//! into. Shared by the triage example and the tests.

use toolshape::{Legend, ToolResult};

pub const STATE: Legend<u8> = Legend::new(&[(1, "open"), (2, "closed")]);
pub const TODAY: &str = "2026-11-30";
pub const LABELS: [&str; 8] = [
    "bug",
    "docs",
    "ui",
    "performance",
    "security",
    "build",
    "question",
    "good first issue",
];

/// The domain struct: what the service keeps of an issue.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "{id} {title}: {state}, {labels}, by {author}, opened {opened}, {comments} comments"
)]
pub struct Issue {
    #[shape(id)]
    pub id: String,
    #[shape(untrusted(max_tokens = 30))]
    pub title: String,
    #[shape(legend = STATE)]
    pub state: u8,
    #[shape(show)]
    pub labels: Vec<String>,
    #[shape(show)]
    pub author: String,
    #[shape(date, rename = "opened", rank = desc)]
    pub created_at: String,
    #[shape(show)]
    pub comments: u32,
    #[shape(skip)]
    pub body: String,
    #[shape(skip)]
    pub node_id: String,
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

const WORDS: [&str; 24] = [
    "crash",
    "when",
    "saving",
    "large",
    "files",
    "login",
    "page",
    "broken",
    "on",
    "mobile",
    "docs",
    "typo",
    "in",
    "install",
    "guide",
    "slow",
    "query",
    "after",
    "upgrade",
    "button",
    "misaligned",
    "error",
    "message",
    "unclear",
];
const AUTHORS: [&str; 10] = [
    "ana-dev", "bkumar", "chen.li", "dmitri", "eve", "f-okafor", "gosia", "hiro", "ines", "jamal",
];

/// The issues, newest first in generation order: 87% opened in the last 30 days.
pub fn issues() -> Vec<(Issue, serde_json::Value)> {
    let today = days_from_civil(2026, 11, 30);
    let mut rng = Lcg(1412);
    (0..1412u64)
        .map(|n| {
            let number = 10_000 + n;
            let age = if rng.next() % 100 < 87 {
                rng.next() % 30
            } else {
                30 + rng.next() % 700
            };
            let (y, m, d) = civil_from_days(today - age as i64);
            let created = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                rng.next() % 24,
                rng.next() % 60,
                rng.next() % 60
            );
            let words = 3 + rng.next() % 5;
            let title: Vec<&str> = (0..words)
                .map(|_| WORDS[(rng.next() % 24) as usize])
                .collect();
            let title = title.join(" ");
            let mut labels: Vec<String> = Vec::new();
            let roll = rng.next() % 100;
            let first = if roll < 22 {
                0
            } else if roll < 31 {
                1
            } else if roll < 38 {
                2
            } else {
                3 + (rng.next() % 5) as usize
            };
            if rng.next() % 100 < 93 {
                labels.push(LABELS[first].to_owned());
            }
            if rng.next() % 100 < 20 {
                let second = LABELS[(rng.next() % 8) as usize].to_owned();
                if !labels.contains(&second) {
                    labels.push(second);
                }
            }
            let state = if rng.next() % 100 < 64 { 1 } else { 2 };
            let author = AUTHORS[(rng.next() % 10) as usize].to_owned();
            let comments = (rng.next() % 17) as u32;
            let body = format!(
                "Steps to reproduce: {title}. Expected it to work. Version 4.{}.",
                rng.next() % 20
            );
            let node_id = format!("I_kwDOAbc{:08X}", rng.next());
            let raw = raw_issue(
                number, &title, state, &labels, &author, &created, comments, &body, &node_id,
            );
            let issue = Issue {
                id: format!("#{number}"),
                title,
                state,
                labels,
                author,
                created_at: created,
                comments,
                body,
                node_id,
            };
            (issue, raw)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn raw_issue(
    number: u64,
    title: &str,
    state: u8,
    labels: &[String],
    author: &str,
    created: &str,
    comments: u32,
    body: &str,
    node_id: &str,
) -> serde_json::Value {
    let api = "https://api.example.com/repos/acme/widgets";
    serde_json::json!({
        "url": format!("{api}/issues/{number}"),
        "repository_url": api,
        "labels_url": format!("{api}/issues/{number}/labels{{/name}}"),
        "comments_url": format!("{api}/issues/{number}/comments"),
        "events_url": format!("{api}/issues/{number}/events"),
        "html_url": format!("https://example.com/acme/widgets/issues/{number}"),
        "id": 2_000_000_000u64 + number,
        "node_id": node_id,
        "number": number,
        "title": title,
        "user": {
            "login": author, "id": 9_000 + author.len(), "node_id": format!("U_{author}"),
            "avatar_url": format!("https://avatars.example.com/u/{author}?v=4"), "gravatar_id": "",
            "url": format!("https://api.example.com/users/{author}"),
            "html_url": format!("https://example.com/{author}"), "type": "User", "site_admin": false
        },
        "labels": labels.iter().map(|l| serde_json::json!({
            "id": 100 + l.len(), "node_id": format!("LA_{l}"), "url": format!("{api}/labels/{l}"),
            "name": l, "color": "d73a4a", "default": true, "description": format!("Label {l}")
        })).collect::<Vec<_>>(),
        "state": if state == 1 { "open" } else { "closed" },
        "locked": false,
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "comments": comments,
        "created_at": created,
        "updated_at": created,
        "closed_at": if state == 2 { serde_json::Value::String(created.to_owned()) } else { serde_json::Value::Null },
        "author_association": "CONTRIBUTOR",
        "active_lock_reason": null,
        "body": body,
        "reactions": {
            "url": format!("{api}/issues/{number}/reactions"), "total_count": 0, "+1": 0, "-1": 0,
            "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0
        },
        "timeline_url": format!("{api}/issues/{number}/timeline"),
        "performed_via_github_app": null,
        "state_reason": null
    })
}

// Days since 1970-01-01 for a civil date, and back (Howard Hinnant's algorithms).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}
