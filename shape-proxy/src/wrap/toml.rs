//! Codex's `config.toml` (`[mcp_servers.<name>]`), edited with toml_edit, which keeps every
//! byte it is not asked to change (comments, layout, Codex's own settings).

use super::{Entry, State, WrapError, classify};
use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, TableLike};

pub(super) fn document(text: &str, what: &str) -> Result<DocumentMut, WrapError> {
    text.parse::<DocumentMut>()
        .map_err(|e| WrapError::Parse(format!("{what}: {}", e.to_string().trim())))
}

/// Every `[mcp_servers.<name>]` of `text`.
pub(super) fn entries(text: &str, what: &str) -> Result<Vec<Entry>, WrapError> {
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| WrapError::Parse(format!("{what}: {}", e.to_string().trim())))?;
    let Some(servers) = table.get("mcp_servers") else {
        return Ok(Vec::new());
    };
    let Some(servers) = servers.as_table() else {
        return Err(WrapError::Parse(format!(
            "{what}: `mcp_servers` is not a table"
        )));
    };
    Ok(servers
        .iter()
        .map(|(name, settings)| {
            let state = match serde_json::to_value(settings) {
                Ok(value) => classify(&value),
                Err(e) => State::Skipped(format!("its settings cannot be read ({e})")),
            };
            Entry {
                at: vec!["mcp_servers".to_owned(), name.clone()],
                state,
                range: None,
            }
        })
        .collect())
}

fn entry<'d>(doc: &'d mut DocumentMut, name: &str) -> Option<&'d mut dyn TableLike> {
    doc.get_mut("mcp_servers")?
        .as_table_like_mut()?
        .get_mut(name)?
        .as_table_like_mut()
}

fn strings(values: impl IntoIterator<Item = impl AsRef<str>>) -> Array {
    values.into_iter().map(|v| v.as_ref().to_owned()).collect()
}

/// The settings of an HTTP entry Codex reads and a stdio one does not: its headers, which
/// the proxy sends instead.
const HTTP_ONLY: [&str; 4] = [
    "url",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
];

/// Rewrites `[mcp_servers.<name>]` to start the proxy (`program`, `args`), its `url` and
/// headers gone, each variable of `env` (those the proxy's headers name) added to its
/// `env_vars`, every other setting kept; the settings it replaced, to put back (one that was
/// absent as `null`).
pub(super) fn wrap(
    doc: &mut DocumentMut,
    name: &str,
    program: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<Map<String, Value>, WrapError> {
    let missing = || WrapError::Parse(format!("`mcp_servers.{name}` is not a table"));
    let entry = entry(doc, name).ok_or_else(missing)?;
    let mut original = Map::new();
    let mut keys = vec!["command", "args"];
    keys.extend(HTTP_ONLY);
    if !env.is_empty() {
        keys.push("env_vars");
    }
    for key in keys {
        let value = match entry.get(key) {
            Some(item) => json_of(item).ok_or_else(|| {
                WrapError::Parse(format!(
                    "`mcp_servers.{name}.{key}`: not a string, a list or a table of strings"
                ))
            })?,
            None if key == "env_vars" => Value::Null,
            None => continue,
        };
        original.insert(key.to_owned(), value);
    }
    for key in HTTP_ONLY {
        entry.remove(key);
    }
    entry.insert("command", toml_edit::value(program));
    entry.insert("args", toml_edit::value(strings(args)));
    if !env.is_empty() {
        let mut vars: Vec<String> = match original.get("env_vars") {
            Some(Value::Array(vars)) => vars
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        for (var, _) in env {
            if !vars.contains(var) {
                vars.push(var.clone());
            }
        }
        entry.insert("env_vars", toml_edit::value(strings(vars)));
    }
    Ok(original)
}

/// A setting as JSON: a string, a list of strings, or a table of strings (inline or not).
fn json_of(item: &toml_edit::Item) -> Option<Value> {
    if let Some(table) = item.as_table_like() {
        return table
            .iter()
            .map(|(k, v)| Some((k.to_owned(), Value::from(v.as_str()?))))
            .collect::<Option<Map<String, Value>>>()
            .map(Value::Object);
    }
    match item.as_value()? {
        toml_edit::Value::String(s) => Some(Value::from(s.value().as_str())),
        toml_edit::Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().map(Value::from))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        _ => None,
    }
}

/// Puts back the settings [`wrap`] replaced; false when the entry is gone.
pub(super) fn restore(doc: &mut DocumentMut, name: &str, original: &Map<String, Value>) -> bool {
    let Some(entry) = entry(doc, name) else {
        return false;
    };
    entry.remove("command");
    entry.remove("args");
    for (key, value) in original {
        let item = match value {
            Value::String(s) => toml_edit::value(s.as_str()),
            Value::Array(a) => toml_edit::value(strings(a.iter().filter_map(Value::as_str))),
            Value::Object(table) => toml_edit::value(
                table
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                    .collect::<toml_edit::InlineTable>(),
            ),
            // Absent before `wrap` added it.
            Value::Null => {
                entry.remove(key);
                continue;
            }
            _ => continue,
        };
        entry.insert(key, item);
    }
    true
}

/// The whole file as a value, to check an edit changed nothing else.
pub(super) fn value(text: &str, what: &str) -> Result<Value, WrapError> {
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| WrapError::Parse(format!("{what}: {}", e.to_string().trim())))?;
    serde_json::to_value(table).map_err(|e| WrapError::Parse(format!("{what}: {e}")))
}
