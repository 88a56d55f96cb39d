//! What a client's model reads of a tool result (feature `rmcp`), parsed here, apart from the
//! library that wrote it: the text blocks, and a text's lines from a walk's JSON pages. The
//! oracle the tests, `examples/savings.rs` and `examples/proxy_check.rs` share.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// The text channel: every text block, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A text's lines as a walk's JSON pages (`structuredContent`, or a JSON text block) show
/// them, each with its number, in order: a whole line is a string (the line after the last
/// one shown); a part of a line longer than a page, or a line of a reopened result, is a
/// record naming its `line` (an object, or a row under `fields`) with its `text`. `None`
/// when an item is none of these.
pub fn text_lines<'e>(
    envelopes: impl IntoIterator<Item = &'e Value>,
) -> Option<Vec<(u64, String)>> {
    let mut out: Vec<(u64, String)> = Vec::new();
    for envelope in envelopes {
        let fields: Option<Vec<&str>> = envelope["fields"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect());
        for item in envelope["data"].as_array()? {
            let last = out.last().map_or(0, |(n, _)| *n);
            let field = |name: &str| -> Option<&Value> {
                match (&fields, item) {
                    (Some(fields), Value::Array(row)) => {
                        row.get(fields.iter().position(|f| *f == name)?)
                    }
                    (_, record) => record.get(name),
                }
            };
            match item {
                Value::String(line) => out.push((last + 1, line.clone())),
                _ => out.push((
                    field("line")?.as_u64()?,
                    field("text")?.as_str()?.to_owned(),
                )),
            }
        }
    }
    Some(out)
}

/// The text `lines` (from [`text_lines`]) make: the parts of a line joined as they are, the
/// lines with `\n`.
pub fn joined(lines: &[(u64, String)]) -> String {
    let mut out = String::new();
    for (i, (n, text)) in lines.iter().enumerate() {
        if i > 0 && lines[i - 1].0 != *n {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}
