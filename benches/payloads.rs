//! Real payloads, shaped against `serde_json::to_string` of the same parsed payload, measured
//! side by side in one run (issue 14's goals: ≤ 5× for the issues, ≤ 3× for the wide records).
//!
//! - `github_issues`: 30 issues as GitHub's REST API returns them (nested `user` and
//!   `labels`, ~16 KB untrusted Markdown bodies), parsed into typed structs, shaped at 2,000
//!   and 8,000 tokens. Until the derive reads nested field paths, the shaped record is a flat
//!   struct built from the parsed issue (author login, label names); building it is timed as
//!   part of shaping.
//! - `jira_projects`: 567 projects as Jira's `/rest/api/2/project?expand=…` returns them
//!   (about 30 fields each, nested lead, category, avatar URLs), shaped at 8,000 tokens.
//!
//! `cargo bench --bench payloads --features bench`; medians of 51 runs (after 3 warm-ups),
//! shaping and serialising taking turns so that a change in the machine's load hits both alike.

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolshape::{Budget, Format, Shaper, ToolResult};

// ---------------------------------------------------------------------------------------------
// GitHub issues

#[derive(Serialize, Deserialize)]
struct GhUser {
    login: String,
    id: u64,
    node_id: String,
    avatar_url: String,
    gravatar_id: String,
    url: String,
    html_url: String,
    #[serde(rename = "type")]
    kind: String,
    site_admin: bool,
}

#[derive(Serialize, Deserialize)]
struct GhLabel {
    id: u64,
    node_id: String,
    url: String,
    name: String,
    color: String,
    default: bool,
    description: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct GhReactions {
    url: String,
    total_count: u32,
    #[serde(rename = "+1")]
    plus_one: u32,
    #[serde(rename = "-1")]
    minus_one: u32,
    laugh: u32,
    hooray: u32,
    confused: u32,
    heart: u32,
    rocket: u32,
    eyes: u32,
}

#[derive(Serialize, Deserialize)]
struct GhIssue {
    url: String,
    repository_url: String,
    labels_url: String,
    comments_url: String,
    events_url: String,
    html_url: String,
    id: u64,
    node_id: String,
    number: u64,
    title: String,
    user: GhUser,
    labels: Vec<GhLabel>,
    state: String,
    locked: bool,
    assignee: Option<GhUser>,
    assignees: Vec<GhUser>,
    comments: u32,
    created_at: String,
    updated_at: String,
    closed_at: Option<String>,
    author_association: String,
    body: Option<String>,
    reactions: GhReactions,
    timeline_url: String,
    state_reason: Option<String>,
}

/// The shaped issue: a flat record built from the nested one.
#[derive(ToolResult)]
#[shape(name = "issue", plural = "issues")]
struct IssueRow {
    #[shape(id)]
    number: u64,
    #[shape(untrusted(max_tokens = 30))]
    title: String,
    #[shape(show)]
    state: String,
    #[shape(show)]
    author: String,
    #[shape(show)]
    assignee: Option<String>,
    #[shape(show)]
    labels: Vec<String>,
    #[shape(show)]
    comments: u32,
    #[shape(date, rename = "opened")]
    created_at: String,
    #[shape(date, rename = "updated", rank = desc)]
    updated_at: String,
    #[shape(untrusted(max_tokens = 60))]
    body: String,
}

impl IssueRow {
    fn from_api(i: &GhIssue) -> IssueRow {
        IssueRow {
            number: i.number,
            title: i.title.clone(),
            state: i.state.clone(),
            author: i.user.login.clone(),
            assignee: i.assignee.as_ref().map(|u| u.login.clone()),
            labels: i.labels.iter().map(|l| l.name.clone()).collect(),
            comments: i.comments,
            created_at: i.created_at.clone(),
            updated_at: i.updated_at.clone(),
            body: i.body.clone().unwrap_or_default(),
        }
    }
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
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

const WORDS: [&str; 32] = [
    "the",
    "build",
    "fails",
    "when",
    "the",
    "cache",
    "is",
    "cold",
    "and",
    "a",
    "request",
    "times",
    "out",
    "after",
    "upgrading",
    "to",
    "version",
    "panics",
    "in",
    "release",
    "mode",
    "with",
    "large",
    "inputs",
    "memory",
    "grows",
    "until",
    "the",
    "process",
    "is",
    "killed",
    "again",
];

/// A ~16 KB Markdown issue body: prose, lists, logs in code blocks, links and an image.
fn markdown_body(rng: &mut Lcg, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 256);
    while out.len() < bytes {
        match rng.next() % 6 {
            0 => {
                out.push_str("## ");
                for _ in 0..4 {
                    out.push_str(rng.pick(&WORDS));
                    out.push(' ');
                }
                out.push_str("\n\n");
            }
            1 => {
                for k in 0..4 {
                    out.push_str(&format!("{}. ", k + 1));
                    for _ in 0..8 {
                        out.push_str(rng.pick(&WORDS));
                        out.push(' ');
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
            2 => {
                out.push_str("```\n");
                for _ in 0..6 {
                    out.push_str(&format!(
                        "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z ERROR worker{}: request {:08x} timed out after {}ms\n",
                        rng.next() % 28 + 1,
                        rng.next() % 24,
                        rng.next() % 60,
                        rng.next() % 60,
                        rng.next() % 1000,
                        rng.next() % 16,
                        rng.next(),
                        rng.next() % 30_000
                    ));
                }
                out.push_str("```\n\n");
            }
            3 => {
                out.push_str(&format!(
                    "See [the upgrade notes](https://github.com/acme/widgets/blob/main/UPGRADING.md#v{}) and ![screenshot](https://user-images.githubusercontent.com/{}/shot.png).\n\n",
                    rng.next() % 9,
                    rng.next()
                ));
            }
            _ => {
                for _ in 0..40 {
                    out.push_str(rng.pick(&WORDS));
                    out.push(' ');
                }
                out.push_str("\n\n");
            }
        }
    }
    out
}

fn user(login: &str) -> GhUser {
    GhUser {
        login: login.to_owned(),
        id: 9_000 + login.len() as u64,
        node_id: format!("U_kgDO{login}"),
        avatar_url: format!("https://avatars.githubusercontent.com/u/{login}?v=4"),
        gravatar_id: String::new(),
        url: format!("https://api.github.com/users/{login}"),
        html_url: format!("https://github.com/{login}"),
        kind: "User".into(),
        site_admin: false,
    }
}

/// The API's JSON for 30 issues (what the service receives).
fn github_payload() -> String {
    let mut rng = Lcg(14);
    let api = "https://api.github.com/repos/acme/widgets";
    let logins = [
        "ana-dev", "bkumar", "chen.li", "dmitri", "f-okafor", "gosia",
    ];
    let labels = [
        "bug",
        "performance",
        "regression",
        "needs triage",
        "good first issue",
    ];
    let issues: Vec<GhIssue> = (0..30u64)
        .map(|n| {
            let number = 4_100 + n;
            let title: Vec<&str> = (0..7).map(|_| rng.pick(&WORDS)).collect();
            let day = 1 + rng.next() % 28;
            GhIssue {
                url: format!("{api}/issues/{number}"),
                repository_url: api.into(),
                labels_url: format!("{api}/issues/{number}/labels{{/name}}"),
                comments_url: format!("{api}/issues/{number}/comments"),
                events_url: format!("{api}/issues/{number}/events"),
                html_url: format!("https://github.com/acme/widgets/issues/{number}"),
                id: 2_600_000_000 + number,
                node_id: format!("I_kwDOAbc{:08X}", rng.next()),
                number,
                title: title.join(" "),
                user: user(rng.pick(&logins)),
                labels: (0..1 + rng.next() % 3)
                    .map(|k| {
                        let name = labels[((n + k) % labels.len() as u64) as usize];
                        GhLabel {
                            id: 100 + k,
                            node_id: format!("LA_{name}"),
                            url: format!("{api}/labels/{name}"),
                            name: name.into(),
                            color: "d73a4a".into(),
                            default: k == 0,
                            description: Some(format!("Issues labelled {name}")),
                        }
                    })
                    .collect(),
                state: if n % 3 == 0 { "closed" } else { "open" }.into(),
                locked: false,
                assignee: (n % 2 == 0).then(|| user(rng.pick(&logins))),
                assignees: Vec::new(),
                comments: (rng.next() % 40) as u32,
                created_at: format!("2026-10-{day:02}T09:14:22Z"),
                updated_at: format!("2026-11-{day:02}T16:02:07Z"),
                closed_at: None,
                author_association: "CONTRIBUTOR".into(),
                body: Some(markdown_body(&mut rng, 16 << 10)),
                reactions: GhReactions {
                    url: format!("{api}/issues/{number}/reactions"),
                    total_count: 3,
                    plus_one: 3,
                    minus_one: 0,
                    laugh: 0,
                    hooray: 0,
                    confused: 0,
                    heart: 0,
                    rocket: 0,
                    eyes: 0,
                },
                timeline_url: format!("{api}/issues/{number}/timeline"),
                state_reason: None,
            }
        })
        .collect();
    serde_json::to_string(&issues).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Jira projects

#[derive(Serialize, Deserialize)]
struct AvatarUrls {
    #[serde(rename = "48x48")]
    large: String,
    #[serde(rename = "24x24")]
    small: String,
    #[serde(rename = "16x16")]
    xsmall: String,
    #[serde(rename = "32x32")]
    medium: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JiraUser {
    #[serde(rename = "self")]
    self_url: String,
    account_id: String,
    account_type: String,
    avatar_urls: AvatarUrls,
    display_name: String,
    active: bool,
}

#[derive(Serialize, Deserialize)]
struct JiraCategory {
    #[serde(rename = "self")]
    self_url: String,
    id: String,
    name: String,
    description: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JiraProject {
    expand: String,
    #[serde(rename = "self")]
    self_url: String,
    id: String,
    key: String,
    description: String,
    lead: JiraUser,
    name: String,
    avatar_urls: AvatarUrls,
    project_category: Option<JiraCategory>,
    project_type_key: String,
    simplified: bool,
    style: String,
    is_private: bool,
    entity_id: String,
    uuid: String,
    url: Option<String>,
    email: Option<String>,
    assignee_type: String,
    archived: bool,
    issue_count: u32,
    last_issue_update_time: String,
}

/// The shaped project: a flat record of the fields a model answers with.
#[derive(ToolResult)]
#[shape(name = "project", plural = "projects")]
struct ProjectRow {
    #[shape(id)]
    key: String,
    #[shape(show)]
    name: String,
    #[shape(untrusted(max_tokens = 40))]
    description: String,
    #[shape(show)]
    lead: String,
    #[shape(show)]
    category: Option<String>,
    #[shape(show, rename = "type")]
    project_type: String,
    #[shape(show)]
    style: String,
    #[shape(show)]
    private: bool,
    #[shape(show)]
    archived: bool,
    #[shape(show)]
    issues: u32,
    #[shape(date, rename = "last_update", rank = desc)]
    last_issue_update_time: String,
    #[shape(show)]
    url: Option<String>,
}

impl ProjectRow {
    fn from_api(p: &JiraProject) -> ProjectRow {
        ProjectRow {
            key: p.key.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
            lead: p.lead.display_name.clone(),
            category: p.project_category.as_ref().map(|c| c.name.clone()),
            project_type: p.project_type_key.clone(),
            style: p.style.clone(),
            private: p.is_private,
            archived: p.archived,
            issues: p.issue_count,
            last_issue_update_time: p.last_issue_update_time.clone(),
            url: p.url.clone(),
        }
    }
}

fn avatars(kind: &str, id: u64) -> AvatarUrls {
    let base = format!(
        "https://acme.atlassian.net/rest/api/2/universal_avatar/view/type/{kind}/avatar/{id}"
    );
    AvatarUrls {
        large: base.clone(),
        small: format!("{base}?size=small"),
        xsmall: format!("{base}?size=xsmall"),
        medium: format!("{base}?size=medium"),
    }
}

/// The API's JSON for 567 projects.
fn jira_payload() -> String {
    let mut rng = Lcg(567);
    let api = "https://acme.atlassian.net/rest/api/2";
    let leads = [
        "Ana Souza",
        "Bilal Kumar",
        "Chen Li",
        "Dmitri Orlov",
        "Eve Adams",
        "Femi Okafor",
    ];
    let categories = ["Engineering", "Operations", "Marketing", "Customer Support"];
    let projects: Vec<JiraProject> = (0..567u64)
        .map(|n| {
            let key = format!("P{}{}", char::from(b'A' + (n % 26) as u8), n);
            let words: Vec<&str> = (0..12).map(|_| rng.pick(&WORDS)).collect();
            let lead = rng.pick(&leads);
            JiraProject {
                expand: "description,lead,issueTypes,url,projectKeys,permissions,insight".into(),
                self_url: format!("{api}/project/{}", 10_000 + n),
                id: (10_000 + n).to_string(),
                key: key.clone(),
                description: words.join(" "),
                lead: JiraUser {
                    self_url: format!("{api}/user?accountId=5b10a2844c20165700ede{n:03}"),
                    account_id: format!("5b10a2844c20165700ede{n:03}"),
                    account_type: "atlassian".into(),
                    avatar_urls: avatars("user", n),
                    display_name: lead.into(),
                    active: true,
                },
                name: format!("{} {}", rng.pick(&categories), words[0]),
                avatar_urls: avatars("project", 10_400 + n),
                project_category: (n % 5 != 0).then(|| {
                    let name = rng.pick(&categories);
                    JiraCategory {
                        self_url: format!("{api}/projectCategory/{}", 10_000 + n % 4),
                        id: (10_000 + n % 4).to_string(),
                        name: name.into(),
                        description: format!("Projects of {name}"),
                    }
                }),
                project_type_key: if n % 3 == 0 { "business" } else { "software" }.into(),
                simplified: n % 2 == 0,
                style: if n % 2 == 0 { "next-gen" } else { "classic" }.into(),
                is_private: n % 7 == 0,
                entity_id: format!("{:08x}-6b2a-4c77-9e10-3f7d51ac8802", rng.next()),
                uuid: format!("{:08x}-77aa-4f31-8d2c-1e5b6c9042af", rng.next()),
                url: (n % 4 == 0).then(|| format!("https://wiki.acme.example/{key}")),
                email: None,
                assignee_type: "UNASSIGNED".into(),
                archived: n % 11 == 0,
                issue_count: (rng.next() % 5_000) as u32,
                last_issue_update_time: format!(
                    "2026-{:02}-{:02}T{:02}:00:00.000+0000",
                    1 + rng.next() % 11,
                    1 + rng.next() % 28,
                    rng.next() % 24
                ),
            }
        })
        .collect();
    serde_json::to_string(&projects).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------

/// Timed runs of each measure (after 3 warm-ups).
const RUNS: usize = 51;

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    for _ in 0..3 {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Timings of shaping and of serialising, taken in turns, so a change in the machine's load
/// hits both alike: the medians, and the fastest runs (the least disturbed on a busy machine).
struct SideBySide {
    shape: Duration,
    serialise: Duration,
    fastest_shape: Duration,
    fastest_serialise: Duration,
}

fn side_by_side(mut shape: impl FnMut(), mut serialise: impl FnMut(), runs: usize) -> SideBySide {
    for _ in 0..3 {
        shape();
        serialise();
    }
    let (mut a, mut b) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let start = Instant::now();
        shape();
        a.push(start.elapsed());
        let start = Instant::now();
        serialise();
        b.push(start.elapsed());
    }
    a.sort();
    b.sort();
    SideBySide {
        shape: a[runs / 2],
        serialise: b[runs / 2],
        fastest_shape: a[0],
        fastest_serialise: b[0],
    }
}

fn line(what: &str, t: SideBySide) {
    println!(
        "{what}: shape {:?}, serde_json::to_string {:?}, ratio = {:.2} (fastest runs: {:.2})",
        t.shape,
        t.serialise,
        t.shape.as_secs_f64() / t.serialise.as_secs_f64(),
        t.fastest_shape.as_secs_f64() / t.fastest_serialise.as_secs_f64(),
    );
}

/// The same projection of GitHub's issue list (`examples/data/github_issues.json`, 60 issues,
/// 564 KB), written as configuration (`tests/configured/github.toml`) and as the derive
/// (`shape_examples::github::Issue`), both from the raw JSON text: the derive's time includes
/// `serde_json::from_str` into its types (issue 30's goal: configured ≤ 1.5× derived). Both
/// are stated against `serde_json::to_string` of the parsed payload too.
fn configured_against_derived() {
    use shape_examples::github;
    let config = match toolshape::config::ShapeConfig::from_toml_str(include_str!(
        "../tests/configured/github.toml"
    )) {
        Ok(config) => config,
        Err(e) => panic!("the mirror loads: {e}"),
    };
    let projection = match config.json_projection("list_issues") {
        Some(p) => p,
        None => panic!("the mirror has records"),
    };
    let raw = github::PAYLOAD;
    let parsed: serde_json::Value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(e) => panic!("the payload parses: {e}"),
    };
    let shaper = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(2_000))
        .format(Format::Prose);
    let derived = || {
        let issues: Vec<github::Issue> = match serde_json::from_str(black_box(raw)) {
            Ok(issues) => issues,
            Err(e) => panic!("{e}"),
        };
        drop(black_box(
            shaper.call().raw_payload(raw).shape_blocking(&issues),
        ));
    };
    let configured = || {
        drop(black_box(
            shaper.call().shape_blocking((&projection, black_box(raw))),
        ))
    };
    let serialise = || drop(black_box(serde_json::to_string(black_box(&parsed))));
    for _ in 0..3 {
        derived();
        configured();
        serialise();
    }
    let (mut d, mut c, mut j) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        for (times, f) in [
            (&mut d, &derived as &dyn Fn()),
            (&mut c, &configured as &dyn Fn()),
            (&mut j, &serialise as &dyn Fn()),
        ] {
            let start = Instant::now();
            f();
            times.push(start.elapsed());
        }
    }
    for times in [&mut d, &mut c, &mut j] {
        times.sort();
    }
    let (d, c, j) = (d[RUNS / 2], c[RUNS / 2], j[RUNS / 2]);
    println!(
        "configured records, {} KB of GitHub issues at 2000 tokens: configured {c:?}, derived \
         (parse + shape) {d:?}, serde_json::to_string {j:?}; configured / derived = {:.2} (goal \
         ≤ 1.5), configured / serde_json = {:.2}, derived / serde_json = {:.2}",
        raw.len() >> 10,
        c.as_secs_f64() / d.as_secs_f64(),
        c.as_secs_f64() / j.as_secs_f64(),
        d.as_secs_f64() / j.as_secs_f64(),
    );
}

fn main() {
    configured_against_derived();
    // `cargo bench` passes `--bench`; a filter argument is not supported (this is one run).
    let github_json = github_payload();
    let issues: Vec<GhIssue> = match serde_json::from_str(&github_json) {
        Ok(issues) => issues,
        Err(e) => panic!("the generated GitHub payload parses: {e}"),
    };
    let jira_json = jira_payload();
    let projects: Vec<JiraProject> = match serde_json::from_str(&jira_json) {
        Ok(projects) => projects,
        Err(e) => panic!("the generated Jira payload parses: {e}"),
    };
    println!(
        "github_issues: {} issues, {} KB of JSON; jira_projects: {} projects, {} KB of JSON",
        issues.len(),
        github_json.len() >> 10,
        projects.len(),
        jira_json.len() >> 10
    );

    // One body capped alone, as the record's two channels each do.
    let body = issues[0].body.as_deref().unwrap_or_default();
    let bpe = toolshape::tokens::Bpe::o200k_base();
    let cap = median(
        || {
            drop(black_box(toolshape::untrusted::prepare(
                black_box(body),
                Some(60),
                &bpe,
                toolshape::untrusted::UrlPolicy::Keep,
            )))
        },
        RUNS,
    );
    let p =
        toolshape::untrusted::prepare(body, Some(60), &bpe, toolshape::untrusted::UrlPolicy::Keep);
    println!(
        "one {} KB body capped at 60 tokens: {cap:?} ({:?})",
        body.len() >> 10,
        p.cut
    );

    for (budget, format) in [
        (2_000, Format::Json),
        (4_000, Format::Json),
        (8_000, Format::Json),
        (2_000, Format::Table),
    ] {
        let shaper = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(budget))
            .format(format);
        let shaped = match shaper
            .shape_blocking(&issues.iter().map(IssueRow::from_api).collect::<Vec<_>>())
        {
            Ok(shaped) => shaped,
            Err(e) => panic!("shaping the issues: {e}"),
        };
        let timing = side_by_side(
            || {
                let rows: Vec<IssueRow> = issues.iter().map(IssueRow::from_api).collect();
                drop(black_box(shaper.shape_blocking(black_box(&rows))));
            },
            || drop(black_box(serde_json::to_string(black_box(&issues)))),
            RUNS,
        );
        line(
            &format!(
                "github_issues at {budget} tokens ({format:?}, {} of {} shown, {} tokenized, {} tokens)",
                shaped.report().records.shown,
                issues.len(),
                shaped.report().tokenized,
                shaped.report().tokens.most(),
            ),
            timing,
        );
    }

    for format in [Format::Json, Format::Table] {
        let shaper = Shaper::for_tool("list_projects")
            .budget(Budget::tokens(8_000))
            .format(format);
        let rows: Vec<ProjectRow> = projects.iter().map(ProjectRow::from_api).collect();
        let shaped = match shaper.shape_blocking(&rows) {
            Ok(shaped) => shaped,
            Err(e) => panic!("shaping the projects: {e}"),
        };
        let timing = side_by_side(
            || {
                let rows: Vec<ProjectRow> = projects.iter().map(ProjectRow::from_api).collect();
                drop(black_box(shaper.shape_blocking(black_box(&rows))));
            },
            || drop(black_box(serde_json::to_string(black_box(&projects)))),
            RUNS,
        );
        line(
            &format!(
                "jira_projects at 8000 tokens ({format:?}, {} of {} shown)",
                shaped.report().records.shown,
                projects.len()
            ),
            timing,
        );
    }
}
