//! The JSON (with comments) configurations: Claude Code's `~/.claude.json` and `.mcp.json`,
//! Cursor's `mcp.json` (`mcpServers`), VS Code's `mcp.json` (`servers`). Read with
//! jsonc-parser's syntax tree, whose byte ranges let an entry be replaced in place: every
//! other byte of the file (comments, spacing, key order, settings shape never reads) stays.

use super::{Entry, State, WrapError, classify};
use jsonc_parser::ast::{Object, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use std::ops::Range;

fn parsed<'a>(text: &'a str, what: &str) -> Result<Option<Node<'a>>, WrapError> {
    let tree =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .map_err(|e| WrapError::Parse(format!("{what}: {e}")))?;
    Ok(tree.value)
}

/// The servers objects of a file whose servers sit under `key` (`mcpServers`, `servers`), with
/// the keys leading to each: the root's and, in Claude Code's `~/.claude.json`, each project's
/// (`projects.<folder>.mcpServers`, the "local" scope).
fn servers_objects<'b, 'a>(root: &'b Object<'a>, key: &str) -> Vec<(Vec<String>, &'b Object<'a>)> {
    let mut found = Vec::new();
    if let Some(servers) = root.get_object(key) {
        found.push((vec![key.to_owned()], servers));
    }
    if key == "mcpServers"
        && let Some(projects) = root.get_object("projects")
    {
        for project in &projects.properties {
            if let Node::Object(settings) = &project.value
                && let Some(servers) = settings.get_object(key)
            {
                let at = vec![
                    "projects".to_owned(),
                    project.name.as_str().to_owned(),
                    key.to_owned(),
                ];
                found.push((at, servers));
            }
        }
    }
    found
}

/// Every server entry of `text`, with its byte range.
pub(super) fn entries(text: &str, key: &str, what: &str) -> Result<Vec<Entry>, WrapError> {
    let Some(root) = parsed(text, what)? else {
        return Ok(Vec::new());
    };
    let Node::Object(root) = root else {
        return Err(WrapError::Parse(format!(
            "{what}: the file is not a JSON object"
        )));
    };
    let mut out = Vec::new();
    for (at, servers) in servers_objects(&root, key) {
        for prop in &servers.properties {
            let range = prop.value.range();
            let mut at = at.clone();
            at.push(prop.name.as_str().to_owned());
            let state = match &prop.value {
                Node::Object(_) => classify(&value(&text[range.start..range.end], what)?),
                _ => State::Skipped("its entry is not an object of settings".to_owned()),
            };
            out.push(Entry {
                at,
                state,
                range: Some(range.start..range.end),
            });
        }
    }
    Ok(out)
}

/// The JSON text of a string.
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The leading spaces and tabs of the line holding byte `at`.
fn indent_of(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The entry at `range` of `text`, rewritten to start the proxy (`program`, `args`): its
/// `type` (if it had one) `stdio`, its `command` and `args` the proxy's, its `url` and
/// `headers` gone, every other setting (`env`, `envFile`, `cwd`, ones shape does not know)
/// kept as it was written, laid out as the entry was.
pub(super) fn wrapped_entry(
    text: &str,
    range: &Range<usize>,
    program: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<String, WrapError> {
    let entry = &text[range.clone()];
    let Some(Node::Object(object)) = parsed(entry, "the entry")? else {
        return Err(WrapError::Parse("the entry is not an object".to_owned()));
    };
    let replaced = ["type", "command", "args", "url", "headers"];
    let mut props = Vec::new();
    if object.get("type").is_some() {
        props.push("\"type\": \"stdio\"".to_owned());
    }
    props.push(format!("\"command\": {}", quoted(program)));
    let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    props.push(format!("\"args\": [{}]", args.join(", ")));
    for prop in &object.properties {
        if prop.name.as_str() == "env" && !env.is_empty() {
            continue;
        }
        if !replaced.contains(&prop.name.as_str()) {
            props.push(entry[prop.range.start..prop.range.end].to_owned());
        }
    }
    // The variables the proxy's headers name, set on it by the client as it expands them.
    if !env.is_empty() {
        let mut vars = match object.get("env") {
            Some(prop) => match value(
                &entry[prop.value.range().start..prop.value.range().end],
                "env",
            )? {
                serde_json::Value::Object(vars) => vars,
                _ => serde_json::Map::new(),
            },
            None => serde_json::Map::new(),
        };
        for (name, token) in env {
            vars.insert(name.clone(), serde_json::Value::from(token.as_str()));
        }
        props.push(format!("\"env\": {}", serde_json::Value::Object(vars)));
    }
    if !entry.contains('\n') {
        return Ok(format!("{{ {} }}", props.join(", ")));
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let close = indent_of(text, range.end - 1);
    let inner = match object.properties.first() {
        Some(first) if entry[..first.range.start].contains('\n') => {
            indent_of(entry, first.range.start).to_owned()
        }
        _ => format!("{close}  "),
    };
    Ok(format!(
        "{{{newline}{inner}{}{newline}{close}}}",
        props.join(&format!(",{newline}{inner}"))
    ))
}

/// `text` with each range replaced by its text (ranges that do not overlap).
pub(super) fn spliced(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = text.to_owned();
    for (range, with) in edits {
        out.replace_range(range, &with);
    }
    out
}

/// The whole file as a value, to check an edit changed nothing else.
pub(super) fn value(text: &str, what: &str) -> Result<serde_json::Value, WrapError> {
    jsonc_parser::parse_to_serde_value::<Option<serde_json::Value>>(text, &ParseOptions::default())
        .map_err(|e| WrapError::Parse(format!("{what}: {e}")))
        .map(Option::unwrap_or_default)
}
