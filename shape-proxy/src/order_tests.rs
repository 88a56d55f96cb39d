//! The envelope's key order in the proxy's own build (`cargo test -p toolshape-proxy`, where
//! no other crate of the workspace turns on serde_json's `preserve_order`): what a
//! structured reader's model reads starts with `status` and `summary`, whatever features the
//! rest of a build has, because the runtime's `rmcp` feature holds them in order.

use rmcp::model::CallToolResult;
use serde_json::Value;
use toolshape::config::ShapeConfig;

/// The top-level keys of a JSON object as written, in order (read from the text, not from a
/// `Value`, whose map could reorder them).
fn keys_in_order(json: &str) -> Vec<String> {
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<serde::de::IgnoredAny>()?;
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    serde::Deserializer::deserialize_map(&mut de, Keys).expect("an object")
}

#[test]
fn structured_content_keeps_the_envelopes_key_order_in_the_proxys_own_build() {
    // serde_json keeps insertion order here: the runtime's `rmcp` feature turns it on.
    let mut m = serde_json::Map::new();
    m.insert("b".into(), Value::Null);
    m.insert("a".into(), Value::Null);
    assert_eq!(m.keys().next().map(String::as_str), Some("b"));

    let config = ShapeConfig::from_toml_str(
        r#"
        [tools.list_issues.records]
        fields = [{ from = "number", id = true }, { from = "title", untrusted = {} }]
        "#,
    )
    .expect("config");
    let projection = config.json_projection("list_issues").expect("projection");
    for channels in ["structured", "both"] {
        let shaper = config
            .shaper("list_issues")
            .expect("shaper")
            .channels(match channels {
                "structured" => toolshape::ChannelPolicy::Structured,
                _ => toolshape::ChannelPolicy::Both,
            });
        let page = shaper
            .call()
            .shape_blocking((
                &projection,
                r#"[{"number": 1, "title": "a"}, {"number": 2, "title": "b"}]"#,
            ))
            .expect("a page");
        let result = CallToolResult::from(page);
        let structured = result.structured_content.expect("structuredContent");
        let written = serde_json::to_string(&structured).expect("json");
        let keys = keys_in_order(&written);
        let want: Vec<&str> = [
            "status",
            "summary",
            "untrusted",
            "fields",
            "data",
            "omitted",
            "next",
        ]
        .into_iter()
        .filter(|k| keys.iter().any(|have| have == k))
        .collect();
        assert_eq!(&keys[..2], ["status", "summary"], "{channels}: {written}");
        assert_eq!(keys, want, "{channels}: {written}");
        assert!(keys.contains(&"untrusted".to_owned()), "{written}");
    }
}
