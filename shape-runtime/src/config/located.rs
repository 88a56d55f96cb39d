//! A configuration document as a tree whose keys know the line they were written on: what
//! the checks of configured projections read, so that every error names its line (TOML; a
//! JSON document has no lines to name, its parser keeps none).

use std::fmt;

/// One value of the document, with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) line: Option<usize>,
}

/// What a value is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Node>),
    Table(Vec<Entry>),
    /// A TOML date-time, or a JSON number past `i64`: no key takes one.
    Other(&'static str),
    /// JSON `null`.
    Null,
}

/// A key of a table and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) line: Option<usize>,
    pub(crate) node: Node,
}

impl Node {
    /// The document of a TOML text.
    pub(crate) fn from_toml(text: &str) -> Result<Node, String> {
        let table = toml::de::DeTable::parse(text).map_err(|e| e.to_string())?;
        let lines = Lines::of(text);
        Ok(Node {
            line: Some(1),
            value: Value::Table(toml_table(table.get_ref(), &lines)),
        })
    }

    /// The document of a JSON text (no lines).
    pub(crate) fn from_json(text: &str) -> Result<Node, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        Ok(json_node(&value))
    }

    /// The entry `key` of a table.
    pub(crate) fn get(&self, key: &str) -> Option<&Entry> {
        match &self.value {
            Value::Table(entries) => entries.iter().find(|e| e.key == key),
            _ => None,
        }
    }

    /// The entries of a table, or none.
    pub(crate) fn entries(&self) -> &[Entry] {
        match &self.value {
            Value::Table(entries) => entries,
            _ => &[],
        }
    }

    /// The value's text, when it is text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match &self.value {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// What kind of value it is, as an error says it: `a number`, `a list`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Value::Text(_) => "text",
            Value::Integer(_) | Value::Float(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::List(_) => "a list",
            Value::Table(_) => "a table",
            Value::Other(what) => what,
            Value::Null => "null",
        })
    }
}

/// Where each line of a text starts, to turn a byte offset into a line number.
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }

    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }
}

fn toml_table(table: &toml::de::DeTable<'_>, lines: &Lines) -> Vec<Entry> {
    table
        .iter()
        .map(|(key, value)| Entry {
            key: key.get_ref().to_string(),
            line: Some(lines.line(key.span().start)),
            node: toml_node(value, lines),
        })
        .collect()
}

fn toml_node(value: &toml::Spanned<toml::de::DeValue<'_>>, lines: &Lines) -> Node {
    use toml::de::DeValue;
    let line = Some(lines.line(value.span().start));
    let value = match value.get_ref() {
        DeValue::String(text) => Value::Text(text.to_string()),
        DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
            Ok(n) => Value::Integer(n),
            Err(_) => Value::Other("a number past 64 bits"),
        },
        DeValue::Float(x) => match x.as_str().parse::<f64>() {
            Ok(x) => Value::Float(x),
            Err(_) => Value::Other("a number"),
        },
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(_) => Value::Other("a date-time"),
        DeValue::Array(items) => Value::List(items.iter().map(|v| toml_node(v, lines)).collect()),
        DeValue::Table(table) => Value::Table(toml_table(table, lines)),
    };
    Node { value, line }
}

fn json_node(value: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    let value = match value {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(n), _) => Value::Integer(n),
            (None, Some(x)) if n.is_f64() => Value::Float(x),
            _ => Value::Other("a number past 64 bits"),
        },
        J::String(text) => Value::Text(text.clone()),
        J::Array(items) => Value::List(items.iter().map(json_node).collect()),
        J::Object(map) => Value::Table(
            map.iter()
                .map(|(key, value)| Entry {
                    key: key.clone(),
                    line: None,
                    node: json_node(value),
                })
                .collect(),
        ),
    };
    Node { value, line: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_keys_know_their_lines() {
        let doc =
            Node::from_toml("a = 1\n\n[t]\nb = \"x\"\nc = [1, 2]\n[[t.d]]\ne = true\n").unwrap();
        let a = doc.get("a").unwrap();
        assert_eq!((a.line, &a.node.value), (Some(1), &Value::Integer(1)));
        let t = &doc.get("t").unwrap().node;
        assert_eq!(t.get("b").unwrap().line, Some(4));
        assert_eq!(t.get("c").unwrap().line, Some(5));
        let d = &t.get("d").unwrap().node;
        let Value::List(items) = &d.value else {
            panic!("{d:?}")
        };
        assert_eq!(items[0].get("e").unwrap().line, Some(7));
        assert_eq!(
            Node::from_toml("n = 0x1f")
                .unwrap()
                .get("n")
                .unwrap()
                .node
                .value,
            Value::Integer(31)
        );
        assert_eq!(
            Node::from_toml("n = 1_000")
                .unwrap()
                .get("n")
                .unwrap()
                .node
                .value,
            Value::Integer(1000)
        );
        assert_eq!(
            Node::from_toml("n = -7")
                .unwrap()
                .get("n")
                .unwrap()
                .node
                .value,
            Value::Integer(-7)
        );
        assert!(Node::from_toml("n = ").is_err());
    }

    #[test]
    fn json_has_no_lines() {
        let doc = Node::from_json(
            r#"{"a": [1, 2.5, "x", null, {"b": true}], "c": 18446744073709551615}"#,
        )
        .unwrap();
        let a = doc.get("a").unwrap();
        assert_eq!(a.line, None);
        let Value::List(items) = &a.node.value else {
            panic!()
        };
        assert_eq!(items[1].value, Value::Float(2.5));
        assert_eq!(items[3].value, Value::Null);
        assert_eq!(items[4].get("b").unwrap().node.value, Value::Bool(true));
        assert_eq!(
            doc.get("c").unwrap().node.value.to_string(),
            "a number past 64 bits"
        );
    }
}
