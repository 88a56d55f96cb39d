//! The presets: each one reads, is chosen for its servers, checked against what a server
//! lists, and measured on the answers its servers gave (`tests/data/presets/`, recorded by
//! `tests/proxy/record_presets.py`), with the questions a reader asks of them still
//! answered.

use super::*;
use crate::preview::{Recorded, RecordedServer, Walk, walk};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn recorded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/presets")
}

/// A recorded call: the tool, its arguments and the server's answer.
#[derive(serde::Deserialize)]
struct Call {
    tool: String,
    arguments: Map<String, Value>,
    result: CallToolResult,
}

/// The recorded calls of `preset`, by file name.
fn calls(preset: &str) -> Vec<(String, Call)> {
    let dir = recorded_dir().join(preset);
    let mut out: Vec<(String, Call)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "server.json"))
        .map(|p| {
            let call: Call = serde_json::from_slice(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.file_stem().unwrap().to_string_lossy().into_owned(), call)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn server(preset: &str) -> RecordedServer {
    RecordedServer::read(&recorded_dir().join(preset).join("server.json")).unwrap()
}

#[test]
fn every_preset_reads_with_and_without_a_prefix() {
    for preset in PRESETS {
        let plain = preset.config("").unwrap();
        // `add_absent` takes tools and legends only: a preset's `[defaults]` or `[clients]`
        // would be dropped unsaid.
        assert_eq!(plain.defaults, Default::default(), "{}", preset.name);
        assert!(plain.clients.is_empty(), "{}", preset.name);
        let prefixed = preset.config("gh_").unwrap();
        assert_eq!(plain.tools.len(), prefixed.tools.len(), "{}", preset.name);
        for name in plain.tools.keys() {
            assert!(prefixed.tools.contains_key(&format!("gh_{name}")));
            assert_eq!(
                plain.json_projection(name).is_some(),
                prefixed.json_projection(&format!("gh_{name}")).is_some(),
                "{}: {name}",
                preset.name
            );
        }
        // Legends are shared by every upstream: a preset's are named after it.
        let table: toml::Table = toml::from_str(preset.text).unwrap();
        for legend in table
            .get("legends")
            .and_then(|l| l.as_table())
            .into_iter()
            .flatten()
        {
            assert!(
                legend.0.starts_with(&format!("{}_", preset.name)),
                "{}",
                legend.0
            );
        }
        assert!(!preset.servers.is_empty());
    }
}

/// Each preset is chosen for the server its recorded `serverInfo.name` names, and every tool
/// it configures is one that server lists, with a recorded answer.
#[test]
fn each_preset_is_chosen_for_its_server_and_every_tool_has_a_recorded_answer() {
    for preset in PRESETS {
        let server = server(preset.name);
        let chosen = choose(None, Some(&server.server_info.name))
            .unwrap()
            .unwrap();
        assert_eq!(chosen.name, preset.name);
        let recorded: Vec<String> = calls(preset.name)
            .into_iter()
            .map(|(_, c)| c.tool)
            .collect();
        for tool in preset.tools() {
            assert!(
                server.tools.iter().any(|t| t.name == tool),
                "{}: {tool} is not listed by {}",
                preset.name,
                server.server_info.name
            );
            assert!(
                recorded.contains(&tool),
                "{}: no recorded answer of {tool}",
                preset.name
            );
        }
        let mut shape = ShapeConfig::default();
        let applied = apply(&mut shape, preset, "", Some(&server.tools)).unwrap();
        assert!(
            applied.left.is_empty(),
            "{}: {:?}",
            preset.name,
            applied.left
        );
        assert_eq!(applied.added, preset.tools());
    }
}

#[test]
fn a_preset_is_named_turned_off_or_unknown() {
    assert_eq!(
        choose(Some("github"), Some("mcp-git"))
            .unwrap()
            .unwrap()
            .name,
        "github"
    );
    assert!(choose(Some("none"), Some("mcp-git")).unwrap().is_none());
    assert!(
        choose(None, Some("someone-elses-server"))
            .unwrap()
            .is_none()
    );
    assert!(choose(None, None).unwrap().is_none());
    let err = choose(Some("gitlab"), None).unwrap_err();
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(
        err,
        format!(
            "no preset is called `gitlab`; there are {} (or `none`)",
            names.join(", ")
        )
    );
}

/// What the user configured wins whole; a tool the server does not list, and one whose
/// `outputSchema` lacks a path the projection reads, are left out naming why; before the
/// server lists its tools nothing is checked.
#[test]
fn a_preset_never_overrides_the_user_and_is_checked_against_the_tool_list() {
    let github = choose(Some("github"), None).unwrap().unwrap();
    let mut listed = server("github").tools;
    listed.retain(|t| t.name != "search_issues");
    let get_issue = listed.iter_mut().find(|t| t.name == "get_issue").unwrap();
    get_issue.output_schema = Some(Arc::new(
        serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": { "number": { "type": "integer" }, "title": { "type": "string" } }
        }))
        .unwrap(),
    ));
    let mut shape = ShapeConfig::from_toml_str("[tools.gh_list_issues]\nbudget = 300\n").unwrap();
    let applied = apply(&mut shape, github, "gh_", Some(&listed)).unwrap();
    assert_eq!(
        applied.added,
        [
            "gh_get_pull_request",
            "gh_list_commits",
            "gh_list_pull_requests",
            "gh_search_repositories"
        ]
    );
    assert_eq!(applied.yours, ["gh_list_issues"]);
    assert_eq!(applied.left.len(), 2, "{:?}", applied.left);
    assert!(
        applied.left[0].starts_with("gh_get_issue (its outputSchema does not fit: ")
            && applied.left[0].contains("state"),
        "{}",
        applied.left[0]
    );
    assert_eq!(
        applied.left[1],
        "gh_search_issues (the server does not list it)"
    );
    assert!(shape.json_projection("gh_list_issues").is_none());
    assert_eq!(
        shape.tool("gh_list_issues").unwrap().budget,
        Some(toolshape::Budget::tokens(300))
    );
    // Not listed yet: added unchecked.
    let mut shape = ShapeConfig::default();
    let applied = apply(&mut shape, github, "gh_", None).unwrap();
    assert_eq!(applied.added.len(), github.tools().len());
    assert!(shape.json_projection("gh_search_issues").is_some());
}

/// The questions a reader asks of a tool's answer, from the server's documentation (for
/// GitHub, its REST "list repository issues" and "search issues"): each record's id, where
/// its records are, and the paths whose values answer them (`@day`: the day a timestamp
/// names).
const QUESTIONS: &[(&str, &str, &str, &[&str])] = &[
    ("github", "list_issues", "number", ISSUE),
    ("github", "search_issues", "number", ISSUE),
    ("github", "get_issue", "number", ISSUE),
    ("github", "list_pull_requests", "number", PULL),
    ("github", "get_pull_request", "number", PULL),
    ("github", "list_commits", "sha", COMMIT),
    ("github", "search_repositories", "full_name", REPOSITORY),
];

/// Of a pull request ("list pull requests"): its title, author, state, branch and the one it
/// goes into, reviewers asked, assignees, labels, days opened, updated, merged and closed,
/// its head commit.
const PULL: &[&str] = &[
    "title",
    "user.login",
    "state",
    "head.ref",
    "base.ref",
    "requested_reviewers[].login",
    "assignees[].login",
    "labels[].name",
    "created_at@day",
    "updated_at@day",
    "merged_at@day",
    "closed_at@day",
    "head.sha",
];

/// Of a commit ("list commits"): who wrote it (name and user), on which day, whether it is
/// verified, its parents, what its message says first.
const COMMIT: &[&str] = &[
    "commit.author.name",
    "author.login",
    "commit.author.date@day",
    "commit.verification.verified",
    "parents[].sha",
    "commit.message@line",
];

/// Of a repository ("search repositories"): its description, owner, default branch, when it
/// was created and last pushed, whether it is a fork.
const REPOSITORY: &[&str] = &[
    "description",
    "owner.login",
    "default_branch",
    "created_at@day",
    "pushed_at@day",
    "fork",
];

/// What is issue N titled, who opened it, is it open, which labels, how many comments, on
/// which day was it opened, last updated, closed, who is assigned, which milestone.
const ISSUE: &[&str] = &[
    "title",
    "user.login",
    "state",
    "labels[].name",
    "comments",
    "created_at@day",
    "updated_at@day",
    "assignees[].login",
    "milestone.title",
    "closed_at@day",
];

/// Whether `row` shows `value`: as written, or a day (`2026-09-30`) as the day of a page
/// that states the year its dates share (`dates are in 2026`, then `Sep 30`).
fn shows(row: &str, value: &str, read: &str) -> bool {
    if row.contains(value) {
        return true;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = value.split('-').collect();
    match parts[..] {
        [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
            let (Ok(m), Ok(d)) = (m.parse::<usize>(), d.parse::<u32>()) else {
                return false;
            };
            let day = format!("{} {d}", MONTHS[(m - 1) % 12]);
            read.contains(&format!("dates are in {y}"))
                && row
                    .match_indices(&day)
                    .any(|(at, _)| !row[at + day.len()..].starts_with(|c: char| c.is_ascii_digit()))
        }
        _ => false,
    }
}

/// The values at `path` in `record` (a `[]` step reads each item of a list).
fn values_at(record: &Value, path: &str) -> Vec<String> {
    let (path, day) = match path.strip_suffix("@day") {
        Some(p) => (p, true),
        None => (path, false),
    };
    let (path, line) = match path.strip_suffix("@line") {
        Some(p) => (p, true),
        None => (path, false),
    };
    let mut here = vec![record.clone()];
    for step in path.split('.') {
        let (key, each) = match step.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (step, false),
        };
        here = here
            .into_iter()
            .map(|v| v[key].clone())
            .flat_map(|v| match (each, v) {
                (true, Value::Array(items)) => items,
                (_, v) => vec![v],
            })
            .collect();
    }
    here.into_iter()
        .filter(|v| !v.is_null())
        .map(|v| match v {
            Value::String(s) if day => s[..10].to_owned(),
            Value::String(s) if line => s.lines().next().unwrap_or_default().to_owned(),
            Value::String(s) => s,
            other => other.to_string(),
        })
        .collect()
}

/// The records of a recorded answer (its text, read as JSON): the list itself, the list
/// under `items`, or the one object.
fn records_of(result: &CallToolResult) -> Vec<Value> {
    let text = crate::preview::text(result);
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(items)) => items,
        Ok(Value::Object(mut o)) if o.get("items").is_some_and(Value::is_array) => o
            .remove("items")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default(),
        Ok(one @ Value::Object(_)) => vec![one],
        _ => Vec::new(),
    }
}

/// The rows a model reads: each record of a structured page's `data` (as JSON text), each
/// line of a text page.
fn rows_read(walk: &Walk) -> Vec<String> {
    let mut rows = Vec::new();
    for page in &walk.pages {
        if walk.channel() == "structured" {
            let data = &page.structured_content.as_ref().unwrap()["data"];
            let mut stack = vec![data.clone()];
            while let Some(v) = stack.pop() {
                match v {
                    Value::Array(items) => rows.extend(items.iter().map(Value::to_string)),
                    Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
        } else {
            rows.extend(crate::preview::text(page).lines().map(str::to_owned));
        }
    }
    rows
}

/// Of the questions asked of `tool`'s records, (answered, asked): a record's question is
/// answered when a row holding its id (as a whole word) holds every value the question
/// needs.
fn answered(preset: &str, tool: &str, result: &CallToolResult, walk: &Walk) -> (usize, usize) {
    let Some((_, _, id, paths)) = QUESTIONS.iter().find(|q| q.0 == preset && q.1 == tool) else {
        return (0, 0);
    };
    let rows = rows_read(walk);
    let read = walk.read_all();
    let (mut answered, mut asked) = (0, 0);
    let records = records_of(result);
    let one = records.len() == 1;
    for record in records {
        let id = values_at(&record, id).remove(0);
        let word = |row: &str| {
            row.match_indices(&id).any(|(at, _)| {
                let before = row[..at].chars().next_back();
                let after = row[at + id.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric())
                    && !after.is_some_and(|c| c.is_alphanumeric())
            })
        };
        // An answer of one record is about it whole: a reading that shows its lists as
        // sections of their own (its labels, its assignees) answers from any of its rows.
        let holding: Vec<&String> = rows.iter().filter(|r| one || word(r)).collect();
        for path in *paths {
            let wanted = values_at(&record, path);
            if wanted.is_empty() {
                continue;
            }
            asked += 1;
            // A record of a list answers from its row; an answer of one record from any.
            let found = match one {
                true => wanted
                    .iter()
                    .all(|v| holding.iter().any(|row| shows(row, v, &read))),
                false => holding
                    .iter()
                    .any(|row| wanted.iter().all(|v| shows(row, v, &read))),
            };
            if found {
                answered += 1;
            } else if std::env::var("PRESETS_DUMP").is_ok() {
                eprintln!("{tool} {id}: {path} = {wanted:?} not in {holding:?}");
            }
        }
    }
    (answered, asked)
}

/// One recorded call of the server recorded in `folder` through the harness, with the
/// preset chosen for that server (if any) or without one, as `client` reads it.
fn through(folder: &str, call: &Call, with_preset: bool, client: &str) -> Walk {
    let server = server(folder);
    let mut shape = ShapeConfig::default();
    if with_preset && let Some(chosen) = choose(None, Some(&server.server_info.name)).unwrap() {
        apply(&mut shape, chosen, "", Some(&server.tools)).unwrap();
    }
    let recorded = Recorded {
        tools: Arc::new(server.tools),
        answer: Arc::new(call.result.clone()),
    };
    let runtime = runtime();
    runtime
        .block_on(walk(recorded, shape, &call.tool, &call.arguments, client))
        .unwrap()
}

/// The README's table: per recorded server and call, the answer's tokens, what a model
/// reads of it whole through the proxy without a preset and with the one chosen for the
/// server (its `serverInfo.name`), and the questions answered. Every recorded answer with a
/// preset costs no more than without; every question is answered; and the README shows
/// this table as it is.
#[test]
fn the_presets_save_on_recorded_answers_and_keep_their_facts() {
    let mut table = String::from(
        "| server (preset) | recorded call | raw | read whole, no preset | with the preset | ÷ raw | questions answered (no preset) |\n\
         |---|---|---:|---:|---:|---:|---|\n",
    );
    let mut others = String::new();
    let mut failures = Vec::new();
    let mut folders: Vec<String> = std::fs::read_dir(recorded_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // The servers with a preset first, in the presets' order; then the others by name.
    folders.sort_by_key(|f| {
        (
            PRESETS
                .iter()
                .position(|p| p.name == f)
                .unwrap_or(PRESETS.len()),
            f.clone(),
        )
    });
    for folder in &folders {
        let info = server(folder).server_info;
        let preset = choose(None, Some(&info.name)).unwrap();
        let shaped = preset.map(Preset::tools).unwrap_or_default();
        let label = match preset {
            Some(p) => format!("{} ({})", info.name, p.name),
            None => format!("{} (none yet)", info.name),
        };
        for (name, call) in calls(folder) {
            // Claude Code reads the structured channel; the text channel's profile (`mcp`) is
            // checked beside it.
            for client in ["claude-code", "mcp"] {
                let plain = through(folder, &call, false, client);
                let with = through(folder, &call, true, client);
                let channel = with.channel();
                let (before, after) = (plain.read_tokens(channel), with.read_tokens(channel));
                let (answered_before, _) = answered(folder, &call.tool, &call.result, &plain);
                let (got, asked) = answered(folder, &call.tool, &call.result, &with);
                if shaped.contains(&call.tool) && after > before {
                    failures.push(format!("{folder}/{name} ({client}): {before} → {after}"));
                }
                if got < asked && std::env::var("PRESETS_DUMP").is_ok() {
                    eprintln!(
                        "{}",
                        rows_read(&with)
                            .iter()
                            .take(4)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join("\n")
                    );
                }
                if got < asked {
                    failures.push(format!(
                        "{folder}/{name} ({client}): {got} of {asked} questions answered ({answered_before} without the preset)"
                    ));
                }
                if client != "claude-code" {
                    continue;
                }
                let questions = match asked {
                    0 => "–".to_owned(),
                    n => format!("{got} of {n} ({answered_before} without)"),
                };
                let shown = if shaped.contains(&call.tool) {
                    after.to_string()
                } else {
                    "–".to_owned()
                };
                let table = if preset.is_some() {
                    &mut table
                } else {
                    &mut others
                };
                table.push_str(&format!(
                    "| {label} | `{name}` | {} | {before} | {shown} | {:.2} | {questions} |\n",
                    with.raw_tokens,
                    after as f64 / with.raw_tokens.max(1) as f64,
                ));
            }
        }
    }
    println!("{table}{others}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    assert!(
        readme.contains(&table),
        "the README's presets table is not this one:\n{table}"
    );
    let notes = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/DEVELOPMENT.md"),
    )
    .unwrap();
    let whole = format!("{table}{others}");
    assert!(
        notes.contains(&whole),
        "docs/DEVELOPMENT.md's presets table is not this one:\n{whole}"
    );
}

/// `toolshape-proxy presets` names each preset, the servers it is chosen for and its tools.
#[test]
fn the_presets_command_lists_every_preset_and_its_tools() {
    let shown = crate::cli::presets();
    for preset in PRESETS {
        assert!(
            shown.contains(&format!("{}: {}", preset.name, preset.about)),
            "{shown}"
        );
        for server in preset.servers {
            assert!(shown.contains(&format!("`{server}`")), "{shown}");
        }
        assert!(
            shown.contains(&format!("  shapes {}\n", preset.tools().join(", "))),
            "{shown}"
        );
    }
}

/// An upstream that answers as GitHub's server does: its `serverInfo.name`, the recorded
/// tools, and the recorded answer of `list_issues` to any call.
#[derive(Clone)]
struct GitHubLike;

impl rmcp::ServerHandler for GitHubLike {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let (_, call) = calls("github")
            .into_iter()
            .find(|(_, c)| c.tool == request.name)
            .unwrap();
        Ok(call.result.into())
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let mut tools = server("github").tools;
        tools.retain(|t| t.name != "search_repositories");
        Ok(rmcp::model::ListToolsResult::with_all_items(tools))
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(server("github").server_info)
    }
}

/// The proxy chooses the preset by what a live upstream answers to `initialize`, with its
/// prefix, checked against what it lists; `preset = "none"` turns it off; a call through
/// the proxy is shaped by it.
#[test]
fn the_proxy_chooses_a_preset_by_the_upstreams_server_info() {
    let runtime = runtime();
    runtime.block_on(async {
        let url = crate::test_support::serve_http(GitHubLike, |app| app).await;
        let mut config = crate::ProxyConfig::default();
        config.upstreams.insert(
            "gh".to_owned(),
            crate::UpstreamSpec {
                url: Some(url.clone()),
                prefix: "gh_".to_owned(),
                ..Default::default()
            },
        );
        config.upstreams.insert(
            "plain".to_owned(),
            crate::UpstreamSpec {
                url: Some(url),
                prefix: "plain_".to_owned(),
                preset: Some(NONE.to_owned()),
                ..Default::default()
            },
        );
        let proxy = crate::Proxy::start(&config, std::time::Duration::from_secs(20)).await;
        let mut shape = ShapeConfig::from_toml_str("[tools.gh_get_issue]\nbudget = 500\n").unwrap();
        let said = proxy.apply_presets(&mut shape).await.unwrap();
        assert_eq!(
            said,
            [
                "upstream `gh`: the preset `github` shapes 5 tools; kept as you configured: \
                 gh_get_issue; left out: gh_search_repositories (the server does not list it)"
            ]
        );
        assert!(shape.json_projection("gh_list_issues").is_some());
        assert!(shape.json_projection("gh_get_issue").is_none());
        assert!(shape.json_projection("plain_list_issues").is_none());
        // A call through the proxy and the harness: the preset's issues, as prose.
        let harness = toolshape::mcp::Harness::new(proxy, shape).unwrap();
        let client = crate::preview::connect(harness, "mcp").await.unwrap();
        for (tool, preset) in [("gh_list_issues", true), ("plain_list_issues", false)] {
            let page = client
                .call_tool(rmcp::model::CallToolRequestParams::new(tool))
                .await
                .unwrap();
            let text = crate::preview::text(&page);
            let line = text.lines().nth(1).unwrap();
            // The preset's prose (`#1353 «title» (open, …`), else the default's keys.
            assert_eq!(line.starts_with('#'), preset, "{tool}: {line}");
            assert_eq!(line.contains(" by "), preset, "{tool}: {line}");
        }
        let _ = client.cancel().await;
    });
}

/// An upstream that starts after the proxy stopped waiting for it gets its preset without
/// an edit: once it lists its tools the configuration is prepared again (the reload's one
/// path), said, and the next call is shaped by the preset.
#[test]
fn an_upstream_starting_late_gets_its_preset_once_it_lists() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        // An address nothing listens on yet.
        let addr = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        let proxy_toml = dir.path().join("proxy.toml");
        std::fs::write(
            &proxy_toml,
            format!(
                "[proxy]\nshape = \"shape.toml\"\n\n[upstreams.gh]\nurl = \"http://{addr}/mcp\"\nprefix = \"gh_\"\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.path().join("shape.toml"), "[defaults]\nbudget = 1500\n").unwrap();
        let (config, shape) = crate::ProxyConfig::load(&proxy_toml).unwrap();
        let proxy = crate::Proxy::start(&config, std::time::Duration::from_millis(300)).await;
        let ready = proxy.ready(&config, shape).await.unwrap();
        // No server answered: no preset is chosen.
        assert_eq!(ready.presets, Vec::<String>::new());
        assert!(ready.shape.json_projection("gh_list_issues").is_none());
        let harness = toolshape::mcp::Harness::new(proxy, ready.shape).unwrap();
        let mut outcomes = crate::reload::watch(
            harness.clone(),
            config.clone(),
            std::time::Duration::from_millis(50),
        );
        // Unchanged files and no upstream listing: nothing is prepared again.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!outcomes.has_changed().unwrap());
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        crate::test_support::serve_http_on(listener, GitHubLike, |app| app);
        let said = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            loop {
                outcomes.changed().await.unwrap();
                if let crate::reload::Outcome::Reloaded(said) = outcomes.borrow_and_update().clone() {
                    return said;
                }
            }
        })
        .await
        .expect("prepared again once the upstream listed");
        assert_eq!(
            said,
            [
                "upstream `gh`: the preset `github` shapes 6 tools; left out: \
                 gh_search_repositories (the server does not list it)"
            ]
        );
        let client = crate::preview::connect(harness, "mcp").await.unwrap();
        let page = client
            .call_tool(rmcp::model::CallToolRequestParams::new("gh_list_issues"))
            .await
            .unwrap();
        let text = crate::preview::text(&page);
        let line = text.lines().nth(1).unwrap();
        assert!(line.starts_with('#') && line.contains(" by "), "{line}");
        // Said once: nothing more is prepared while nothing changes.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!outcomes.has_changed().unwrap());
        let _ = client.cancel().await;
    });
}

/// `preview --recorded <a recorded call> --server server.json`: the call's own tool, the
/// preset chosen for the recorded server and its tokens, the table's; `--preset none` the
/// defaults'.
#[test]
fn preview_shows_a_recorded_call_with_its_servers_preset() {
    let runtime = runtime();
    let dir = recorded_dir().join("github");
    let options = crate::preview::PreviewOptions {
        recorded: Some(dir.join("list_commits.json")),
        server: Some(dir.join("server.json")),
        client: Some("claude-code".to_owned()),
        ..Default::default()
    };
    let shown = runtime.block_on(crate::preview::preview(&options)).unwrap();
    let (_, call) = calls("github")
        .into_iter()
        .find(|(n, _)| n == "list_commits")
        .unwrap();
    let with = through("github", &call, true, "claude-code");
    assert!(
        shown.starts_with(
            "the preset `github` shapes this tool\n`list_commits` as a client named `claude-code`"
        ),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "pages to read it whole, {} tokens",
            with.read_tokens("structured")
        )),
        "{shown}"
    );
    let none = crate::preview::PreviewOptions {
        preset: Some(NONE.to_owned()),
        ..options
    };
    let shown = runtime.block_on(crate::preview::preview(&none)).unwrap();
    let plain = through("github", &call, false, "claude-code");
    assert!(shown.starts_with("`list_commits` as a client"), "{shown}");
    assert!(
        shown.contains(&format!(
            "pages to read it whole, {} tokens",
            plain.read_tokens("structured")
        )),
        "{shown}"
    );
}

/// A server of one tool, `echo`, that is not GitHub's.
#[derive(Clone)]
struct Other;

impl rmcp::ServerHandler for Other {
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let schema = Arc::new(serde_json::Map::from_iter([(
            "type".to_owned(),
            Value::from("object"),
        )]));
        Ok(rmcp::model::ListToolsResult::with_all_items(vec![
            rmcp::model::Tool::new("echo", "echo", schema),
        ]))
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }
}

/// A preset named for an upstream is checked against what that upstream lists once it
/// runs (a server listing none of its tools gets none of them), and added unchecked, saying
/// why, when the upstream did not start.
#[test]
fn a_named_preset_is_checked_once_the_upstream_lists_and_said_unchecked_before() {
    let runtime = runtime();
    runtime.block_on(async {
        let url = crate::test_support::serve_http(Other, |app| app).await;
        let github = |url: &str, prefix: &str| crate::UpstreamSpec {
            url: Some(url.to_owned()),
            prefix: prefix.to_owned(),
            preset: Some("github".to_owned()),
            ..Default::default()
        };
        let mut config = crate::ProxyConfig::default();
        config.upstreams.insert("other".to_owned(), github(&url, ""));
        // Nothing listens on the discard port.
        config
            .upstreams
            .insert("gone".to_owned(), github("http://127.0.0.1:9/mcp", "g_"));
        let proxy = crate::Proxy::start(&config, std::time::Duration::from_secs(20)).await;
        let mut shape = ShapeConfig::default();
        let ready = proxy.ready(&config, shape.clone()).await.unwrap();
        let tools = github_tools();
        let [gone, other] = &ready.presets[..] else {
            panic!("{:?}", ready.presets)
        };
        assert!(
            gone.starts_with(&format!(
                "upstream `gone`: the preset `github` shapes {} tools (not checked: it did not start (",
                tools.len()
            )),
            "{gone}"
        );
        assert!(
            other.starts_with("upstream `other`: the preset `github` shapes 0 tools; left out: "),
            "{other}"
        );
        for tool in &tools {
            assert!(other.contains(&format!("{tool} (the server does not list it)")), "{other}");
        }
        // Each upstream's tools keep their names: the unchecked ones are in the configuration.
        assert_eq!(proxy.apply_presets(&mut shape).await.unwrap().len(), 2);
        // The unchecked ones under their prefix; none of the upstream that lists none.
        let names: Vec<&String> = shape.tools.keys().collect();
        let expected: Vec<String> = tools.iter().map(|t| format!("g_{t}")).collect();
        assert_eq!(names, expected.iter().collect::<Vec<_>>());
    });
}

fn github_tools() -> Vec<String> {
    choose(Some("github"), None).unwrap().unwrap().tools()
}

/// Two upstreams without prefixes given one preset name their tools alike: the second is
/// told which upstream's tool holds each name, never that the user configured it.
#[test]
fn two_upstreams_naming_their_tools_alike_are_told_so() {
    let runtime = runtime();
    runtime.block_on(async {
        let gone = || crate::UpstreamSpec {
            url: Some("http://127.0.0.1:9/mcp".to_owned()),
            preset: Some("github".to_owned()),
            ..Default::default()
        };
        let mut config = crate::ProxyConfig::default();
        config.upstreams.insert("first".to_owned(), gone());
        config.upstreams.insert("second".to_owned(), gone());
        let proxy = crate::Proxy::start(&config, std::time::Duration::from_secs(20)).await;
        let mut shape = ShapeConfig::from_toml_str("[tools.list_issues]\nbudget = 300\n").unwrap();
        let said = proxy.apply_presets(&mut shape).await.unwrap();
        let tools = github_tools();
        assert!(said[0].contains("; kept as you configured: list_issues"), "{}", said[0]);
        assert!(!said[1].contains("kept as you configured: get_issue"), "{}", said[1]);
        assert!(said[1].contains("; kept as you configured: list_issues"), "{}", said[1]);
        for tool in tools.iter().filter(|t| *t != "list_issues") {
            assert!(
                said[1].contains(&format!(
                    "; {tool} is the name of upstream `first`'s tool already (give one of them a prefix)"
                )),
                "{}",
                said[1]
            );
        }
    });
}

/// What a preset tool answers when the server answers an error: GitHub's `{"message": "Not
/// Found"}` where one issue is configured is an error quoting it, and a tool error
/// (`isError`, as GitHub's own server answers one) stays an error; neither reads as an issue.
#[test]
fn a_preset_tool_answering_an_error_reads_as_one() {
    let runtime = runtime();
    let server = server("github");
    let github = choose(Some("github"), None).unwrap().unwrap();
    let mut shape = ShapeConfig::default();
    apply(&mut shape, github, "", Some(&server.tools)).unwrap();
    let not_found = r#"{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue", "status": "404"}"#;
    for answer in [
        CallToolResult::success(vec![rmcp::model::ContentBlock::text(not_found)]),
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "failed to get issue: GET https://api.github.com/repos/acme-dev/fluxgate/issues/99999: 404 Not Found []",
        )]),
    ] {
        let recorded = Recorded {
            tools: Arc::new(server.tools.clone()),
            answer: Arc::new(answer),
        };
        let walked = runtime
            .block_on(walk(
                recorded,
                shape.clone(),
                "get_issue",
                &Map::new(),
                "mcp",
            ))
            .unwrap();
        assert_eq!(walked.pages.len(), 1);
        let page = &walked.pages[0];
        let text = crate::preview::text(page);
        assert_eq!(page.is_error, Some(true), "{text}");
        assert!(text.contains("Not Found"), "{text}");
        assert!(!text.contains("#99999") && !text.contains(" by "), "{text}");
    }
}
