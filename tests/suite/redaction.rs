//! Secrets redacted through the harness (issue 50): a fake secret of every well-known format
//! in every position an answer has (text lines, a private key's block of lines, a line so
//! long it is cut in parts, JSON values, nested lists, keys, JSON text, an error's message,
//! an embedded resource), under each client profile: none of them, nor any 12 characters of
//! one, reaches what a model reads on any page or through `open_result`; each is named by
//! its marker; ids and a tool's arguments stay as they were; and the count the answer's
//! `_meta` gives is the number planted (the oracle is the corpus, not the redactor).

use crate::client::{Client, call, handle_of, runtime, text, walk};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};
use shape_examples::canned::{Answer, Canned};
use shape_examples::secrets::{Fake, fakes};
use toolshape::config::ShapeConfig;

/// Clients of the three channel profiles: structured, text, both.
const CLIENTS: [&str; 3] = ["claude-code", "open-webui", "some-agent"];

/// What the answers hold that must stay, and how many secrets each tool's answer holds.
struct Planted {
    kept: Vec<String>,
    counts: Vec<(&'static str, u32)>,
}

fn records(fakes: &[Fake]) -> Value {
    let n = fakes.len();
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let mut record = json!({
                "id": 1_000 + i,
                "node_id": format!("MDQ6VXNlcjU4MzIzM{i}"),
                "sha": format!("6dcb09b5b57875f334f61aebed695e2e4193db{i:02}"),
                "login": format!("user{i}"),
                "session_token": format!("Zq8kL2vN9xR4wT6y{i:02}"),
                "api_key": format!("Xk29fLq8Vz3mWp7R{i:02}"),
                "bio": format!("see {} for the build", fakes[i].text),
                "comments": [{"id": 50 + i, "body": format!("token: {}", fakes[(i + 1) % n].text)}],
            });
            if i == 0 {
                record["env"] = json!({ fakes[0].text.clone(): "set", "HOME": "/home/user0" });
            }
            record
        })
        .collect();
    json!({ "users": items })
}

fn server(seed: u64) -> (Canned, Planted, Vec<Fake>) {
    let fakes = fakes(seed);
    let n = fakes.len();
    let mut lines = vec!["commit 6dcb09b5b57875f334f61aebed695e2e4193db5e".to_owned()];
    for (i, fake) in fakes.iter().enumerate() {
        lines.push(format!("{i}: value {} end", fake.text));
    }
    // A line of about 9,000 characters, cut in parts later: three secrets at places a part's
    // end can fall in.
    let filler = |k: usize| -> String {
        (0..k)
            .map(|w| format!("word{w}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    lines.push(format!(
        "{} {} {} {} {} {} {}",
        filler(300),
        fakes[1].text,
        filler(311),
        fakes[5].text,
        filler(297),
        fakes[6].text,
        filler(40)
    ));
    lines.push("id 1234567890 stays".to_owned());
    let file = lines.join("\n");
    let users = records(&fakes);
    let error = CallToolResult::error(vec![ContentBlock::text(format!(
        "401 Unauthorized: the token {} was revoked",
        fakes[0].text
    ))]);
    let mut resource = CallToolResult::success(vec![ContentBlock::text("the file follows")]);
    resource.content.push(ContentBlock::embedded_text(
        "file:///etc/app.env",
        format!("AWS_ACCESS_KEY_ID={}\n", fakes[3].text),
    ));
    let canned = Canned::new([
        ("read_file", Answer::Text(file)),
        ("list_users", Answer::Structured(users.clone())),
        ("search_users", Answer::Text(users.to_string())),
        ("call_api", Answer::Result(Box::new(error))),
        ("read_env", Answer::Result(Box::new(resource))),
        // Structured content holding no records: shown as its JSON text, line by line.
        (
            "list_tags",
            Answer::Structured(json!([format!("tag {}", fakes[4].text), "v1.2.3", 7])),
        ),
    ])
    .arguments(&["session_token"]);
    // Each record: its bio's secret, its comment's, its api_key; the first its key's.
    let in_records = u32::try_from(3 * n + 1).unwrap();
    let mut kept = vec![
        "6dcb09b5b57875f334f61aebed695e2e4193db5e".to_owned(),
        "1234567890".to_owned(),
        "/home/user0".to_owned(),
        "v1.2.3".to_owned(),
    ];
    for i in 0..n {
        kept.push(format!("user{i}"));
        kept.push(format!("Zq8kL2vN9xR4wT6y{i:02}"));
        kept.push(format!("{}", 1_000 + i));
    }
    let planted = Planted {
        kept,
        counts: vec![
            ("read_file", u32::try_from(n + 3).unwrap()),
            ("list_users", in_records),
            ("search_users", in_records),
            ("call_api", 1),
            ("read_env", 1),
            ("list_tags", 1),
        ],
    };
    (canned, planted, fakes)
}

/// Everything a model can read of a page: its text blocks, its structured content, and the
/// text of any other block.
fn read(page: &CallToolResult) -> String {
    let mut out = text(page);
    if let Some(s) = &page.structured_content {
        out.push('\n');
        out.push_str(&s.to_string());
    }
    for block in &page.content {
        if let ContentBlock::Resource(r) = block
            && let ResourceContents::TextResourceContents { text, .. } = &r.resource
        {
            out.push('\n');
            out.push_str(text);
        }
    }
    out
}

async fn connect(server: Canned, name: &str) -> Client {
    let config = ShapeConfig::from_toml_str("[defaults]\nbudget = 800\n").unwrap();
    crate::client::connect(server, config, name).await
}

#[test]
fn no_secret_reaches_a_model_in_any_position_or_profile() {
    runtime().block_on(async {
        for (seed, client_name) in CLIENTS.iter().enumerate() {
            let (canned, planted, fakes) = server(seed as u64 + 1);
            let client = connect(canned, client_name).await;
            let mut all = String::new();
            for (tool, planted_count) in &planted.counts {
                let pages = walk(&client, tool, json!({"q": "x"})).await;
                let meta = pages[0]
                    .meta
                    .as_ref()
                    .and_then(|m| m.0.get("io.toolshape/redacted"))
                    .unwrap_or_else(|| panic!("{client_name} {tool}: no count in _meta"));
                assert_eq!(
                    meta,
                    &json!({"secrets": planted_count, "emails": 0, "phones": 0}),
                    "{client_name} {tool}"
                );
                let mut seen = String::new();
                for page in &pages {
                    seen.push_str(&read(page));
                    seen.push('\n');
                }
                // What was stored is redacted too: the whole result, reopened.
                if pages.len() > 1 {
                    let handle = handle_of(&pages[0]);
                    let opened = call(&client, "open_result", json!({"handle": handle})).await;
                    assert_ne!(opened.is_error, Some(true), "{}", text(&opened));
                    seen.push_str(&read(&opened));
                }
                for fake in &fakes {
                    for piece in fake.pieces() {
                        assert!(
                            !seen.contains(&piece),
                            "{client_name} {tool}: {} (its piece {piece}) reached the model",
                            fake.rule
                        );
                    }
                }
                all.push_str(&seen);
            }
            // Each format named by its marker.
            for fake in &fakes {
                let marker = format!("[redacted: {}]", fake.rule);
                assert!(all.contains(&marker), "{client_name}: no {marker}");
            }
            for kept in &planted.kept {
                assert!(
                    all.contains(kept.as_str()),
                    "{client_name}: {kept} was lost"
                );
            }
            assert!(all.contains("[redacted: secret]"), "{client_name}: api_key");
        }
    });
}

/// Off, nothing is taken out and nothing counted: the policy is the tool's.
#[test]
fn a_tool_can_turn_redaction_off() {
    runtime().block_on(async {
        let (canned, _, fakes) = server(9);
        let config = ShapeConfig::from_toml_str(
            "[defaults]\nbudget = 800\n[tools.call_api]\nredact = { secrets = false }\n",
        )
        .unwrap();
        let client = crate::client::connect(canned, config, "some-agent").await;
        let page = call(&client, "call_api", json!({})).await;
        assert!(read(&page).contains(&fakes[0].text), "{}", read(&page));
        assert!(
            page.meta
                .as_ref()
                .is_none_or(|m| !m.0.contains_key("io.toolshape/redacted"))
        );
        let page = call(&client, "read_env", json!({})).await;
        assert!(!read(&page).contains(&fakes[3].text));
    });
}
