//! No panic on any input reachable through the public API (issue 15): cursors whose signature
//! is valid but whose body is anything (signed here with the real key through
//! `__private::sign_cursor_body`), `open_result` arguments, configuration text, builder
//! settings at their extremes and records holding any strings. Each property also checks what
//! a model reads of the answer: the envelope parses, an error says what to do, and nothing
//! echoed back carries an invisible character.
//!
//! These are the bounded runs CI makes (`SHAPE_PROPTEST_SCALE` runs them longer); `fuzz/`
//! holds the same inputs as cargo-fuzz targets for long runs. The fuzz targets' bodies
//! (`fuzz/src/lib.rs`) are compiled here too, and every input in `fuzz/corpus/<target>/` (the
//! seeds, and the inputs of findings kept as regressions) is replayed through them on stable.

use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;
use toolshape::__seams::cursor::Wire;
use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, QueryHash, UpstreamPosition};
use toolshape::handle::{HandlePolicy, Keep, MemoryStore, OpenResult};
use toolshape::{Budget, Format, Shaper, ToolResult, fields::Day};

const KEY: &[u8] = b"robustness test key, 32 bytes..";

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(CursorKeys::new(KEY).unwrap()))
}

// The record types, data sets and the checks every answer passes are the fuzz targets' own
// (`fuzz/src/lib.rs`, compiled here as `fuzz_bodies`), so the bounded runs and the long runs
// check the same things.
use fuzz_bodies::{events, invisible, lines, scores, well_formed};

/// Edge values for varints: the ends of each width and of u64.
fn varint_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => any::<u64>(),
        3 => 0..64u64,
        2 => Just(u64::MAX),
        1 => Just(u64::MAX - 1),
        1 => Just(i64::MAX as u64),
        1 => Just(u64::from(u32::MAX)),
        1 => Just(1_700_000_000),
    ]
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Text a cursor's id or rank could hold, valid or not: numbers at the edges of the integer
/// forms, UUID-like tails, any string.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "-?[0-9]{0,41}",
        Just("-0".to_owned()),
        Just("007".to_owned()),
        Just(i128::MAX.to_string()),
        Just(u64::MAX.to_string()),
        "[a-z_]{0,6}[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        Just("https://api.example/issues?page=2".to_owned()),
    ]
}

/// What the decoder reads, field by field as the format lays them out (see `cursor.rs`); the
/// flags and payloads are drawn independently, so most bodies decode and hold values no
/// encoder would write (NaN ranks, ids that do not parse as the type's ids, counts near
/// `u64::MAX`, a rank of another type than the record's), and some are mutated after.
#[derive(Debug, Clone)]
struct Body {
    flags: u8,
    issued: u64,
    shown: u64,
    rank_int: u64,
    rank_float: f64,
    rank_text: String,
    id: String,
    uuid: [u8; 16],
    page: Option<String>,
    skip: u64,
    mutation: Option<(usize, u8, u8)>,
}

type Flags = (bool, bool, bool, u8, bool);

fn structured_body() -> impl Strategy<Value = Body> {
    let flags = (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0u8..8,
        any::<bool>(),
    );
    (
        flags,
        prop_oneof![5 => Just(None), 1 => any::<u8>().prop_map(Some)],
        (varint_value(), varint_value(), varint_value()),
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0)
        ],
        (text(), text(), any::<[u8; 16]>()),
        (proptest::option::of(text()), varint_value()),
        prop_oneof![3 => Just(None), 1 => (any::<usize>(), 0u8..3, any::<u8>()).prop_map(Some)],
    )
        .prop_map(
            |(f, raw_flags, counts, rank_float, texts, upstream, mutation)| {
                let (desc, id, uuid, rank, up): Flags = f;
                let flags = raw_flags.unwrap_or(
                    u8::from(desc)
                        | u8::from(id) << 1
                        | u8::from(uuid) << 2
                        | rank << 3
                        | u8::from(up) << 6,
                );
                Body {
                    flags,
                    issued: counts.0,
                    shown: counts.1,
                    rank_int: counts.2,
                    rank_float,
                    rank_text: texts.0,
                    id: texts.1,
                    uuid: texts.2,
                    page: upstream.0,
                    skip: upstream.1,
                    mutation,
                }
            },
        )
}

impl Body {
    fn bytes(&self, query: QueryHash) -> Vec<u8> {
        let mut out = vec![1, self.flags];
        out.extend_from_slice(&query.as_bytes()[..4]);
        put_varint(&mut out, self.issued);
        put_varint(&mut out, self.shown);
        match (self.flags >> 3) & 0b111 {
            4 | 5 => put_varint(&mut out, self.rank_int),
            6 => out.extend_from_slice(&self.rank_float.to_le_bytes()),
            7 => put_bytes(&mut out, self.rank_text.as_bytes()),
            _ => {}
        }
        if self.flags & 0b10 != 0 {
            put_bytes(&mut out, self.id.as_bytes());
            if self.flags & 0b100 != 0 {
                out.extend_from_slice(&self.uuid);
            }
        }
        if self.flags & (1 << 6) != 0 {
            match &self.page {
                None => put_varint(&mut out, 0),
                Some(page) => {
                    put_varint(&mut out, page.len() as u64 + 1);
                    out.extend_from_slice(page.as_bytes());
                }
            }
            put_varint(&mut out, self.skip);
        }
        if let Some((at, how, byte)) = self.mutation {
            let at = at % (out.len() + 1);
            match how {
                0 => out.truncate(at),
                1 => out.insert(at, byte),
                _ => {
                    if let Some(b) = out.get_mut(at) {
                        *b ^= byte | 1;
                    }
                }
            }
        }
        out
    }
}

/// Pages `rows` with `cursor` in every mode a cursor can be read in; no panic, and an answer
/// that is well formed or a refusal that names how to recover.
fn page_with<T>(rows: &[T], tool: &str, cursor: &str, budget: usize, keep_order: bool)
where
    T: ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let query = QueryHash::of(tool, &json!({"q": "any"})).unwrap();
    let call = Shaper::for_tool(tool)
        .budget(Budget::tokens(budget))
        .format(Format::Prose)
        .call()
        .page_size(7);
    let call = if keep_order { call.keep_order() } else { call };
    match call.paginate(codec(), query, Some(cursor)) {
        Ok(call) => match call.shape_blocking(rows) {
            Ok(shaped) => well_formed(&shaped, rows.len()),
            Err(e) => assert!(!e.to_string().is_empty()),
        },
        Err(e) => well_formed(&Shaper::for_tool(tool).cursor_error(&e), 0),
    }
}

/// The same cursor read by a call over an upstream that pages itself.
fn upstream_with(cursor: &str, budget: usize) {
    let query = QueryHash::of("lines", &json!({"q": "any"})).unwrap();
    let rows = lines();
    let Ok(call) = Shaper::for_tool("lines")
        .budget(Budget::tokens(budget))
        .call()
        .paginate(codec(), query, Some(cursor))
    else {
        return;
    };
    let at: UpstreamPosition = call.upstream_position();
    let next = Some("page-after".to_owned());
    match call
        .upstream(at.page.as_deref(), next)
        .shape_blocking(&rows)
    {
        Ok(shaped) => well_formed(&shaped, rows.len()),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// The day every `open_result` call here is made on.
fn today() -> Day {
    Day::parse("2026-11-30").unwrap()
}

/// A runtime, a store holding the tracker's issues as a stored result, and its handle: what
/// every `open_result` test here starts from.
fn stored() -> (tokio::runtime::Runtime, MemoryStore, String) {
    let rt = runtime();
    let store = MemoryStore::default();
    let rows: Vec<crate::tracker::Issue> = crate::tracker::issues()
        .into_iter()
        .take(120)
        .map(|(i, _)| i)
        .collect();
    let policy = HandlePolicy::default();
    let shaped = rt
        .block_on(
            Shaper::for_tool("list_issues")
                .budget(Budget::tokens(300))
                .call()
                .shape_or_store(
                    (&rows, &()),
                    Keep::new(&store, "alice", &policy).today(today()),
                ),
        )
        .unwrap();
    let handle = shaped
        .frame()
        .omitted
        .handle
        .clone()
        .expect("stored behind a handle");
    (rt, store, handle)
}

proptest! {
    #![proptest_config(crate::proptest_config(192))]

    /// The decoder, the paging modes and `open_result` over cursors that are signed with the
    /// real key but hold any body.
    #[test]
    fn signed_malformed_cursors_never_panic(
        body in structured_body(),
        budget in prop_oneof![1 => Just(0usize), 1 => 1..100usize, 4 => 100..3_000usize, 1 => Just(usize::MAX)],
    ) {
        for tool in ["events", "scores", "lines"] {
            let query = QueryHash::of(tool, &json!({"q": "any"})).unwrap();
            let body = body.bytes(query);
            let cursor = toolshape::__private::sign_cursor_body(&codec(), &body, &query);
            let decoded = codec().decode(&cursor, &query);
            if let Err(e) = &decoded {
                prop_assert!(matches!(e, CursorError::Malformed), "{e:?}");
            }
            match tool {
                "events" => page_with(&events(), tool, &cursor, budget, false),
                "scores" => page_with(&scores(), tool, &cursor, budget, false),
                _ => {
                    page_with(&lines(), tool, &cursor, budget, false);
                    page_with(&lines(), tool, &cursor, budget, true);
                    upstream_with(&cursor, budget);
                }
            }
        }
    }
}

#[test]
fn signed_malformed_cursors_reach_open_result_without_panic() {
    let (rt, store, handle) = stored();
    let open = OpenResult::new(&store, codec())
        .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(400)));
    let args = json!({"handle": handle, "page_size": 5});
    let query = QueryHash::of("open_result", &args).unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(crate::proptest_config(96));
    runner
        .run(&structured_body(), |body| {
            let body = body.bytes(query);
            let cursor = toolshape::__private::sign_cursor_body(&codec(), &body, &query);
            let mut call = args.clone();
            call["cursor"] = json!(cursor);
            let shaped = rt.block_on(open.call_on("alice", call, today()));
            well_formed(&shaped, 5);
            Ok(())
        })
        .unwrap();
}

/// A key no one would send but anyone can: 20,000 characters with a bidi override, a
/// zero-width space and tag characters in it.
fn hostile_key() -> String {
    format!(
        "sta\u{202e}tus\u{200b}\u{e0041}\u{e0042}{}",
        "k".repeat(20_000)
    )
}

#[test]
fn open_result_errors_echo_clean_short_input_within_the_budget() {
    let (rt, store, handle) = stored();
    let today = today();
    let key = hostile_key();
    let calls = [
        // An unknown top-level key.
        json!({"handle": handle, key.clone(): 1}),
        // An unknown field in a filter, a sort and a select.
        json!({"handle": handle, "filter": [{"field": key, "op": "equals", "value": "open"}]}),
        json!({"handle": handle, "sort": {"field": key}}),
        json!({"handle": handle, "select": [key]}),
        // A value of the wrong type, echoed by the parser.
        json!({"handle": handle, "page_size": key}),
        // A handle that is not one.
        json!({"handle": key}),
        // A stray backtick in an echoed name (found by the open_result fuzz target: it made
        // the rest of the message read as quoted, and the remedy was cut).
        json!({"handle": handle, "filter": [{"field": format!("w`at{key}"), "op": "contains", "value": "x"}]}),
    ];
    for budget in [1_500, 200, 60] {
        let open = OpenResult::new(&store, codec())
            .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(budget)));
        for call in &calls {
            let shaped = rt.block_on(open.call_on("alice", call.clone(), today));
            assert!(shaped.is_error(), "{}", shaped.text());
            well_formed(&shaped, 0);
            let report = shaped.report();
            assert!(
                report.tokens.text <= budget
                    && report.tokens.structured.is_some_and(|s| s <= budget),
                "{} / {:?} tokens against {budget}: {}",
                report.tokens.text,
                report.tokens.structured,
                shaped.text()
            );
            assert!(!report.over_budget);
            let summary = shaped.summary();
            assert!(
                summary.ends_with("call again") || summary.ends_with("fresh handle"),
                "{summary}"
            );
            assert!(
                !summary.contains("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"),
                "{summary}"
            );
            assert!(summary.chars().count() < 700, "{summary}");
            assert!(!shaped.text().chars().any(invisible), "{:?}", shaped.text());
            if budget == 1_500 && !call.to_string().contains("\"handle\":\"sta") {
                // With room, the echoed name is there, cleaned (or, where the parser quotes
                // a value, with its escapes written out visibly) and cut.
                assert!(
                    summary.contains("statuskkk") || summary.contains("sta\\u{202e}"),
                    "{summary}"
                );
            }
        }
    }
    // A budget too small for any envelope: the report says so, the answer still parses.
    let open = OpenResult::new(&store, codec())
        .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(3)));
    let shaped = rt.block_on(open.call_on("alice", calls[0].clone(), today));
    well_formed(&shaped, 0);
    assert!(shaped.report().over_budget);
}

/// A subdivision flag (the England flag: a black flag, five tag characters, a cancel tag) is
/// an emoji, kept in echoed text like any other; the checker every fuzz target and property
/// test calls must not count its tag characters as invisible ones (they were, so a flag in a
/// fuzzed `open_result` key or cursor would have been a false alarm).
#[test]
fn an_echoed_subdivision_flag_is_well_formed() {
    let (rt, store, handle) = stored();
    let today = today();
    let flag = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
    let open = OpenResult::new(&store, codec());
    let call = json!({"handle": handle, "select": [format!("team{flag}")]});
    let shaped = rt.block_on(open.call_on("alice", call, today));
    assert!(shaped.is_error(), "{}", shaped.text());
    assert!(shaped.summary().contains(flag), "{}", shaped.summary());
    well_formed(&shaped, 0);
    // A lone tag character is still one.
    let call = json!({"handle": handle, "select": ["team\u{E0067}x"]});
    let shaped = rt.block_on(open.call_on("alice", call, today));
    assert!(
        !shaped.summary().contains('\u{E0067}'),
        "{}",
        shaped.summary()
    );
    well_formed(&shaped, 0);
}

#[test]
fn configuration_refuses_unseen_characters_naming_the_key() {
    use toolshape::config::{ConfigError, ShapeConfig};
    let cases = [
        (
            "[tools.\"search\\u202e\"]",
            "`tools.searchU+202E` holds a bidi control (U+202E)",
        ),
        (
            "[tools.\"a\\u0007b\"]",
            "`tools.aU+0007b` holds a control character (U+0007)",
        ),
        (
            "[tools.\"find\\U000E0041\"]",
            "`tools.findU+E0041` holds a Unicode tag character (U+E0041)",
        ),
        (
            "[tools.t.untrusted]\ndatamark = \"\\u200b\"",
            "`tools.t.untrusted.datamark` holds a zero-width character (U+200B)",
        ),
        (
            "[defaults.untrusted]\ndatamark = \"\\u2066\"",
            "`defaults.untrusted.datamark` holds a bidi control (U+2066)",
        ),
        (
            "[tools.t.untrusted]\ndatamark = \"»\"",
            "`tools.t.untrusted.datamark` is `»`, which delimits untrusted text",
        ),
        (
            "[tools.t.untrusted]\ndatamark = \"\\u00a0\"",
            "`tools.t.untrusted.datamark` is whitespace (U+00A0)",
        ),
        ("[tools.\" \"]", "`tools. ` is empty"),
    ];
    for (toml, expected) in cases {
        let err = ShapeConfig::from_toml_str(toml).unwrap_err();
        assert!(matches!(err, ConfigError::Unsafe { .. }), "{toml}: {err:?}");
        assert!(err.to_string().starts_with(expected), "{toml}: {err}");
        assert!(!err.to_string().chars().any(invisible), "{err:?}");
    }
    // JSON configuration is held to the same rules.
    let err = ShapeConfig::from_json_str(r#"{"tools": {"t\u200d": {}}}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("`tools.tU+200D` holds a zero-width"),
        "{err}"
    );
    // A visible datamark and tool names in any script are fine.
    let ok = ShapeConfig::from_toml_str(
        "[tools.\"поиск_заявок\"]\n[tools.search.untrusted]\ndatamark = \"ˆ\"",
    )
    .unwrap();
    assert!(ok.shaper("поиск_заявок").is_ok());
    // A configuration built in code is checked when a shaper is made from it.
    let mut built = ok.clone();
    built
        .tools
        .insert("x\u{2069}".to_owned(), Default::default());
    assert!(built.shaper("x\u{2069}").is_err());
}

proptest! {
    #![proptest_config(crate::proptest_config(64))]

    /// Configuration text of any shape: an answer or a clear error, never a panic, and no
    /// error carries an invisible character from the text.
    #[test]
    fn configuration_text_never_panics(
        text in prop_oneof![
            any::<String>(),
            "\\[(defaults|tools\\.[a-z\u{202e}\u{200b}]{1,4})\\]\n(budget|page_size|format|tokenizer|channels) = (-?[0-9]{1,22}|\"[a-z_]{0,12}\"|\\{ window = [0-9]{1,20}, share = -?[0-9.e]{1,8}, expected_calls = [0-9]{1,20} \\})",
        ],
    ) {
        use toolshape::config::ShapeConfig;
        for parsed in [ShapeConfig::from_toml_str(&text), ShapeConfig::from_json_str(&text)] {
            match parsed {
                Ok(config) => {
                    for tool in config.tools.keys() {
                        if let Ok(shaper) = config.shaper(tool) {
                            let _ = shaper.error("probe", "call again");
                        }
                    }
                }
                Err(e) => prop_assert!(!e.to_string().chars().any(invisible), "{e:?}"),
            }
        }
    }

    /// `open_result` arguments of any shape, near the schema or not: an answer within the
    /// budget, never a panic.
    #[test]
    fn open_result_arguments_never_panic(args in open_args(), budget in 40..2_000usize) {
        let (rt, store, handle) = stored();
        let mut args = args;
        if let Some(map) = args.as_object_mut() {
            map.entry("handle").or_insert_with(|| json!(handle));
        }
        let open = OpenResult::new(&store, codec())
            .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(budget)));
        let shaped = rt.block_on(open.call_on("alice", args, today()));
        well_formed(&shaped, 200);
        let report = shaped.report();
        prop_assert!(
            report.over_budget || report.tokens.most() <= budget,
            "{report:?}"
        );
        if shaped.is_error() {
            prop_assert!(!report.over_budget, "{}", shaped.text());
        }
    }

    /// Records holding any strings, in every field, with every format: an answer within the
    /// budget or an error, never a panic.
    #[test]
    fn records_with_any_strings_never_panic(
        fields in proptest::collection::vec((text(), text(), text(), text(), any::<u8>()), 1..12),
        budget in 30..1_500usize,
        format in prop_oneof![Just(Format::Prose), Just(Format::Table), Just(Format::Json)],
    ) {
        let rows: Vec<crate::tracker::Issue> = fields
            .into_iter()
            .map(|(id, title, author, created_at, state)| crate::tracker::Issue {
                id,
                labels: vec![author.clone(), title.chars().take(8).collect()],
                title,
                state,
                author,
                created_at,
                comments: u32::from(state),
                body: String::new(),
                node_id: String::new(),
            })
            .collect();
        let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(budget)).format(format);
        match shaper.shape_blocking(&rows) {
            Ok(shaped) => {
                well_formed(&shaped, rows.len());
                let tokens = shaped.report().tokens;
                prop_assert!(
                    shaped.report().over_budget || tokens.most() <= budget,
                    "{:?}", shaped.report()
                );
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// `open_result` arguments: each key from the schema or not, each value of any JSON kind.
fn open_args() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(|b| json!(b)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        text().prop_map(|s| json!(s)),
        prop_oneof![
            Just("id"),
            Just("title"),
            Just("state"),
            Just("labels"),
            Just("author"),
            Just("opened"),
            Just("comments"),
            Just("open"),
            Just("bug"),
            Just("2026-11-01"),
        ]
        .prop_map(|s| json!(s)),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    });
    proptest::collection::btree_map(key(), value, 0..5)
        .prop_map(|m| serde_json::Value::Object(m.into_iter().collect()))
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop_oneof![
            Just("handle"), Just("filter"), Just("select"), Just("sort"), Just("page_size"),
            Just("cursor"), Just("aggregate"), Just("field"), Just("op"), Just("value"),
            Just("min"), Just("max"), Just("order"), Just("count_by"), Just("top"),
            Just("recent"), Just("stats"), Just("days"), Just("equals"), Just("contains"),
            Just("range"),
        ]
        .prop_map(str::to_owned),
        1 => text(),
    ]
}

/// A record nesting deeper than a JSON reader accepts is an error, never a structured channel
/// that silently reads back as `null`.
#[test]
fn a_record_nested_too_deep_is_an_error_not_a_silent_null() {
    #[derive(Debug, Clone, ToolResult)]
    #[shape(name = "doc", plural = "docs", prose = "{id}: {payload}")]
    struct Doc {
        #[shape(id)]
        id: String,
        #[shape(show)]
        payload: serde_json::Value,
    }
    let nested = |depth: usize| (0..depth).fold(json!("leaf"), |inner, _| json!([inner]));
    let shaper = Shaper::for_tool("docs")
        .budget(Budget::tokens(4_000))
        .format(Format::Json);
    // Shallow enough: the structured channel reads back with the payload in it.
    let fine = shaper
        .shape_blocking(&[Doc {
            id: "d1".into(),
            payload: nested(20),
        }])
        .unwrap();
    assert_eq!(fine.structured()["data"][0]["payload"], nested(20));
    // Too deep for serde_json's reader once inside the envelope: an error naming the record.
    let err = shaper
        .shape_blocking(&[Doc {
            id: "d2".into(),
            payload: nested(140),
        }])
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("could not render a doc: its JSON does not read back"),
        "{err}"
    );
}

// ---- The fuzz corpora, replayed on stable -------------------------------------------------

/// The fuzz targets' bodies: the same functions `fuzz/fuzz_targets/*.rs` hand libFuzzer's
/// input to, with the same checks (whose untrusted-text checkers `untrusted.rs` uses too).
#[path = "../../fuzz/src/lib.rs"]
pub(crate) mod fuzz_bodies;

/// Every file in `fuzz/corpus/<target>/` through the target's body; a panic names the file.
/// Tracked there: the hand-written seeds (`seed*`) and inputs that once found a bug
/// (`regress-*`); a local fuzzing run's own corpus, when present, is replayed as well.
fn replay(target: &str, body: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let tracked = files
        .iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seed") || n.starts_with("regress-"))
        })
        .count();
    assert!(
        tracked >= 2,
        "{}: {tracked} seed or regression inputs",
        dir.display()
    );
    for path in &files {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            // A fuzzer running on the same corpus replaces inputs with shorter ones.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        if std::panic::catch_unwind(|| body(&bytes)).is_err() {
            panic!("fuzz target {target} panicked on {}", path.display());
        }
    }
}

#[test]
fn fuzz_corpus_cursor_replays_without_panic() {
    replay("cursor", fuzz_bodies::cursor);
}

#[test]
fn fuzz_corpus_open_result_replays_without_panic() {
    replay("open_result", fuzz_bodies::open_result);
}

#[test]
fn fuzz_corpus_config_replays_without_panic() {
    replay("config", fuzz_bodies::config);
}

#[test]
fn fuzz_corpus_sanitiser_replays_without_panic() {
    replay("sanitiser", fuzz_bodies::sanitiser);
}
