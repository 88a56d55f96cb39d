//! Records without a Rust type: JSON results shaped by projections written in configuration.
//! The oracle is the derive: a configuration written to mirror a derived type's attributes
//! must give the same bytes in both channels, page after page, with each one's cursor
//! opening the other's next page.

use proptest::prelude::*;
use serde_json::Value;
use shape_examples::github;
use std::sync::Arc;
use toolshape::config::ShapeConfig;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::{Budget, ChannelPolicy, Format, Shaped, Shaper, ToolResult};

/// The configuration mirroring `github::Issue`.
fn github_config() -> ShapeConfig {
    ShapeConfig::from_path(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/configured/github.toml"
    ))
    .expect("the mirror loads")
}

/// GitHub's issue list with only the keys `github::Issue` has (serde ignores the others,
/// while a configured projection names them as left out).
fn github_payload() -> Vec<Value> {
    const ISSUE: &[&str] = &[
        "number",
        "id",
        "node_id",
        "url",
        "html_url",
        "repository_url",
        "title",
        "user",
        "labels",
        "state",
        "locked",
        "assignee",
        "assignees",
        "milestone",
        "comments",
        "created_at",
        "updated_at",
        "closed_at",
        "author_association",
        "reactions",
        "body",
        "pull_request",
    ];
    const MILESTONE: &[&str] = &[
        "title",
        "due_on",
        "state",
        "number",
        "id",
        "creator",
        "description",
    ];
    let all: Vec<Value> = serde_json::from_str(github::PAYLOAD).unwrap();
    all.into_iter()
        .map(|mut issue| {
            let map = issue.as_object_mut().unwrap();
            map.retain(|k, _| ISSUE.contains(&k.as_str()));
            if let Some(Value::Object(m)) = map.get_mut("milestone") {
                m.retain(|k, _| MILESTONE.contains(&k.as_str()));
            }
            issue
        })
        .collect()
}

/// What a page reads with its delimiter nonce and its cursor written as placeholders: the
/// two are random or time-dependent, everything else must match byte for byte.
fn masked(page: &Shaped, text: &str) -> String {
    let mut out = text.to_owned();
    if let Some(nonce) = &page.report().nonce {
        out = out.replace(nonce.as_str(), "NONCE");
    }
    if let Some(next) = page.structured()["next"].as_str() {
        out = out.replace(next, "CURSOR");
    }
    out
}

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"configured-records-oracle-key-32b").unwrap(),
    ))
}

/// Walks `next` from the first page with the derive and with the configured projection
/// side by side, each page from the derive's cursor (so each cursor opens the other's next
/// page too), and checks both channels are the same bytes; returns the pages walked.
fn walk_both(issues: &[Value], budget: usize, format: Format, channels: ChannelPolicy) -> usize {
    let typed: Vec<github::Issue> = serde_json::from_value(Value::Array(issues.to_vec())).unwrap();
    let raw = serde_json::to_string(issues).unwrap();
    let config = github_config();
    let projection = config.json_projection("list_issues").unwrap();
    let codec = codec();
    let query = QueryHash::of("list_issues", &serde_json::json!({})).unwrap();
    let shaper = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(budget))
        .format(format)
        .channels(channels);
    let mut cursor: Option<String> = None;
    for page_number in 1..=issues.len() + 1 {
        let call = shaper
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap();
        let derived = call
            .clone()
            .raw_payload(&raw)
            .shape_blocking(&typed)
            .unwrap();
        let configured = call.shape_json(&projection, &raw).unwrap();
        let at = format!("page {page_number} at {budget} tokens, {format:?}, {channels:?}");
        assert_eq!(
            masked(&configured, configured.text()),
            masked(&derived, derived.text()),
            "text channel, {at}"
        );
        assert_eq!(
            masked(&configured, &configured.structured_json()),
            masked(&derived, &derived.structured_json()),
            "structured channel, {at}"
        );
        assert_eq!(
            configured.report().records,
            derived.report().records,
            "{at}"
        );
        assert_eq!(configured.report().tokens, derived.report().tokens, "{at}");
        match derived.structured()["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => {
                assert!(configured.structured()["next"].is_null(), "{at}");
                return page_number;
            }
        }
    }
    panic!("`next` did not end");
}

#[test]
fn a_configured_mirror_of_the_github_issue_reads_as_the_derive_at_every_format() {
    let issues = github_payload();
    for format in [Format::Prose, Format::Table, Format::Json] {
        for channels in [
            ChannelPolicy::Both,
            ChannelPolicy::Text,
            ChannelPolicy::Structured,
        ] {
            for budget in [300, 700, 2_000] {
                walk_both(&issues, budget, format, channels);
            }
        }
    }
}
