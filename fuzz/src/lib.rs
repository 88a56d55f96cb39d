//! The fuzz targets' bodies and what they share: record types of each paging kind, their rows,
//! and the checks every answer must pass (the envelope parses into its five keys, an error says
//! how to recover and echoes nothing invisible).
//!
//! Each target in `fuzz_targets/` is one call to a function here taking the raw input bytes,
//! so the same code runs under libFuzzer and, on stable, in the test suite: `fuzz_corpus` in
//! `tests/suite/robustness.rs` includes this file and replays every input in `fuzz/corpus/`.
//! Nothing here uses libFuzzer.

use std::sync::{Arc, OnceLock};
use toolshape::config::ShapeConfig;
use toolshape::cursor::{CursorCodec, CursorKeys, MemoryCursorStore, QueryHash};
use toolshape::handle::{HandlePolicy, Keep, MemoryStore, OpenResult};
use toolshape::tokens::{Tiktoken, Tokenizer};
use toolshape::untrusted::{UrlPolicy, neutralize, prepare, sanitize};
use toolshape::{Budget, Day, Shaped, Shaper, ToolResult};

/// The signing key of every target (the real codec, so bodies reach the decoder's parser).
pub const KEY: &[u8] = b"fuzzing key, at least 16 bytes..";

/// Ranked by an integer, with integer ids: keyset cursors.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "event", plural = "events", prose = "{id} at {at}: {what}")]
pub struct Event {
    #[shape(id)]
    pub id: u64,
    #[shape(rank = desc)]
    pub at: i64,
    #[shape(untrusted(max_tokens = 20))]
    pub what: String,
}

/// Ranked by a float, with text ids.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "score", plural = "scores", prose = "{id}: {value} {label}")]
pub struct Score {
    #[shape(id)]
    pub id: String,
    #[shape(rank = asc)]
    pub value: f64,
    #[shape(show)]
    pub label: String,
}

/// Neither ranked nor identified: count cursors, and upstream paging.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "line", plural = "lines", prose = "{n}: {text}")]
pub struct Line {
    #[shape(show)]
    pub n: u32,
    #[shape(show)]
    pub text: String,
}

pub fn events() -> Vec<Event> {
    events_n(30)
}

/// `n` events with distinct ids, several sharing each rank value.
pub fn events_n(n: u64) -> Vec<Event> {
    (0..n)
        .map(|i| Event {
            id: i * 7 + 1,
            at: 1_700_000_000 - (i as i64 % 13) * 60,
            what: format!("deploy {i} finished"),
        })
        .collect()
}

pub fn scores() -> Vec<Score> {
    (0..30)
        .map(|i| Score {
            id: format!("s_{i:03}"),
            value: f64::from(i % 9) / 4.0,
            label: format!("run {i}"),
        })
        .collect()
}

pub fn lines() -> Vec<Line> {
    (0..30)
        .map(|n| Line {
            n,
            text: format!("line {n} of the log"),
        })
        .collect()
}

/// Characters a reader cannot see or that reorder what they see.
pub fn invisible(c: char) -> bool {
    c.is_control() && c != '\n'
        || matches!(c as u32,
            0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069
            | 0xFEFF | 0xE0000..=0xE007F | 0x180E | 0x061C)
}

/// What every answer must be, whatever the input: its structured channel parses into the
/// envelope's keys (either record form), its status matches, it holds at most `rows` records, and an error says what to
/// do in a summary with no invisible character.
pub fn well_formed(shaped: &Shaped, rows: usize) {
    let value = shaped.structured();
    let keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    // `untrusted` names the fields that hold outsiders' text, when there are any; the records
    // are `data`: objects, or, in the rows form (after `fields`), arrays.
    let rows_form = value.get("fields").is_some();
    let mut expected = vec!["status", "summary"];
    if value.get("untrusted").is_some() {
        expected.push("untrusted");
    }
    if rows_form {
        expected.push("fields");
    }
    expected.extend(["data", "omitted", "next"]);
    assert_eq!(keys, expected, "{value}");
    if let Some(untrusted) = value.get("untrusted") {
        assert!(
            untrusted
                .as_array()
                .is_some_and(|names| !names.is_empty() && names.iter().all(|n| n.is_string())),
            "{value}"
        );
    }
    assert_eq!(value["status"], shaped.status().as_str());
    let records = &value["data"];
    assert!(
        records.as_array().is_some_and(|d| d.len() <= rows),
        "{value}"
    );
    if rows_form {
        let width = value["fields"].as_array().map_or(0, Vec::len);
        assert!(
            records.as_array().is_some_and(|rs| rs
                .iter()
                .all(|r| r.as_array().is_some_and(|r| r.len() == width))),
            "{value}"
        );
    }
    if shaped.is_error() {
        let summary = shaped.summary();
        assert!(
            summary.contains("call") || summary.contains("again"),
            "an error that does not say how to recover: {summary}"
        );
        assert!(
            !summary.chars().any(invisible),
            "invisible character echoed: {summary:?}"
        );
    }
}

/// The longest prefix of `bytes` that is UTF-8: how `arbitrary` reads a `&str` from the rest
/// of an input, so corpora written for `|text: &str|` targets keep their meaning.
fn str_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        // `valid_up_to` ends on a character boundary, so the prefix is UTF-8.
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    }
}

// ---- config -------------------------------------------------------------------------------

/// Configuration text, as TOML and as JSON: an answer or a clear error, and every shaper a
/// configuration makes answers an error envelope with nothing invisible in it.
pub fn config(data: &[u8]) {
    let text = str_prefix(data);
    for parsed in [
        ShapeConfig::from_toml_str(text),
        ShapeConfig::from_json_str(text),
    ] {
        match parsed {
            Ok(config) => {
                for tool in config.tools.keys() {
                    let shaper = config
                        .shaper(tool)
                        .expect("a checked configuration makes its shapers");
                    assert!(!tool.chars().any(invisible), "{tool:?} accepted");
                    well_formed(&shaper.error("probe", "call again"), 0);
                }
            }
            Err(e) => assert!(!e.to_string().chars().any(invisible), "{e:?}"),
        }
    }
}

// ---- cursor -------------------------------------------------------------------------------

fn page<T>(
    rows: &[T],
    tool: &str,
    codec: &Arc<CursorCodec>,
    query: QueryHash,
    cursor: &str,
    budget: usize,
    keep_order: bool,
) where
    T: ToolResult,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let call = Shaper::for_tool(tool)
        .budget(Budget::tokens(budget))
        .call()
        .page_size(7);
    let call = if keep_order { call.keep_order() } else { call };
    match call.paginate(Arc::clone(codec), query, Some(cursor)) {
        Ok(call) => {
            if let Ok(shaped) = call.shape_blocking(rows) {
                well_formed(&shaped, rows.len());
            }
        }
        Err(e) => well_formed(&Shaper::for_tool(tool).cursor_error(&e), 0),
    }
}

/// The cursor codec and every paging mode that reads a cursor. The first byte picks the kind
/// of input: a body signed with the real key (so the parser behind the signature check is
/// reached), or the text as presented (base64, length, signature checks).
pub fn cursor(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    // Bit 3: positions held server-side (20-character cursors), as a held codec reads both
    // kinds; the text then meets the held format's own checks.
    let codec = CursorCodec::new(CursorKeys::new(KEY).unwrap());
    let codec = Arc::new(match mode & 8 {
        0 => codec,
        _ => codec.held_in(MemoryCursorStore::new(
            64,
            std::time::Duration::from_secs(60),
        )),
    });
    let budget = [0, 40, 300, 2_000, usize::MAX][usize::from(mode >> 4) % 5];
    for tool in ["events", "scores", "lines"] {
        let query = QueryHash::of(tool, &serde_json::json!({"q": "fuzz"})).unwrap();
        let cursor = if mode & 1 == 0 {
            // A signed body: the fingerprint is set to this query's, so every body is parsed.
            let mut body = rest.to_vec();
            if body.len() >= 6 {
                body[0] = 1;
                body[2..6].copy_from_slice(&query.as_bytes()[..4]);
            }
            toolshape::__private::sign_cursor_body(&codec, &body, &query)
        } else {
            String::from_utf8_lossy(rest).into_owned()
        };
        let _ = codec.decode(&cursor, &query);
        match tool {
            "events" => page(&events(), tool, &codec, query, &cursor, budget, false),
            "scores" => page(&scores(), tool, &codec, query, &cursor, budget, false),
            _ => {
                let rows = lines();
                page(&rows, tool, &codec, query, &cursor, budget, mode & 2 != 0);
                if let Ok(call) = Shaper::for_tool(tool)
                    .budget(Budget::tokens(budget))
                    .call()
                    .paginate(Arc::clone(&codec), query, Some(&cursor))
                {
                    let at = call.upstream_position();
                    let next = (mode & 4 != 0).then(|| "next-page".to_owned());
                    if let Ok(shaped) = call
                        .upstream(at.page.as_deref(), next)
                        .shape_blocking(&rows)
                    {
                        well_formed(&shaped, rows.len());
                    }
                }
            }
        }
    }
}

// ---- open_result --------------------------------------------------------------------------

struct World {
    rt: tokio::runtime::Runtime,
    store: MemoryStore,
    handle: String,
    codec: Arc<CursorCodec>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let store = MemoryStore::default();
        let policy = HandlePolicy::default();
        let rows = events_n(240);
        let shaped = rt
            .block_on(
                Shaper::for_tool("events")
                    .budget(Budget::tokens(150))
                    .shape_or_store(
                        &rows,
                        &(),
                        Keep::new(&store, "alice", &policy)
                            .today(Day::parse("2026-11-30").unwrap()),
                    ),
            )
            .unwrap();
        let handle = shaped.frame().omitted.handle.clone().expect("stored");
        let codec = Arc::new(CursorCodec::new(CursorKeys::new(KEY).unwrap()));
        World {
            rt,
            store,
            handle,
            codec,
        }
    })
}

/// `open_result` arguments: any bytes after the first that parse as JSON, against a stored
/// result (the first byte picks the budget). A `"handle": "H"` is replaced by the real handle,
/// so queries reach validation and paging; a `"cursor"` whose text starts with `S:` is
/// replaced by the rest signed for the query.
pub fn open_result(data: &[u8]) {
    let Some((&b, rest)) = data.split_first() else {
        return;
    };
    let Ok(mut args) = serde_json::from_slice::<serde_json::Value>(rest) else {
        return;
    };
    let w = world();
    if let Some(map) = args.as_object_mut() {
        if map.get("handle").is_some_and(|h| h == "H") {
            map.insert("handle".into(), w.handle.clone().into());
        }
        if let Some(body) = map
            .get("cursor")
            .and_then(|c| c.as_str())
            .and_then(|c| c.strip_prefix("S:"))
        {
            let body = body.as_bytes().to_vec();
            let mut unpaged = map.clone();
            unpaged.remove("cursor");
            if let Ok(query) = QueryHash::of("open_result", &unpaged) {
                let cursor = toolshape::__private::sign_cursor_body(&w.codec, &body, &query);
                map.insert("cursor".into(), cursor.into());
            }
        }
    }
    let budget = [30, 200, 1_500][usize::from(b) % 3];
    let open = OpenResult::new(&w.store, Arc::clone(&w.codec))
        .shaper(Shaper::for_tool("open_result").budget(Budget::tokens(budget)));
    let shaped =
        w.rt.block_on(open.call_on("alice", args, Day::parse("2026-11-30").unwrap()));
    well_formed(&shaped, 200);
    let report = shaped.report();
    assert!(
        report.over_budget || report.tokens.text.max(report.tokens.structured) <= budget,
        "{report:?}"
    );
}

// ---- sanitiser ----------------------------------------------------------------------------

fn o200k() -> &'static Tiktoken {
    static T: OnceLock<Tiktoken> = OnceLock::new();
    T.get_or_init(Tiktoken::o200k_base)
}

/// The untrusted-text pipeline (sanitise, links, token cap, neutralise) and the cleaning of
/// echoed error text: no panic, nothing invisible survives, the cap holds, and sanitising what
/// was already sanitised changes nothing. The first byte picks the link policy and the cap
/// (0 when the input is empty), the rest is the text (its longest UTF-8 prefix), as
/// `arbitrary` reads a `(u8, &str)`.
pub fn sanitiser(data: &[u8]) {
    let (b, text) = match data.split_first() {
        Some((&b, rest)) => (b, str_prefix(rest)),
        None => (0, ""),
    };
    let urls = [UrlPolicy::Keep, UrlPolicy::Flag, UrlPolicy::Strip][usize::from(b) % 3];
    let cap = (b >> 2) % 40 + 1;
    let p = prepare(text, Some(u32::from(cap)), o200k(), urls);
    assert!(
        !p.content.chars().any(|c| invisible(c) && c != '\t'),
        "{:?}",
        p.content
    );
    assert!(
        o200k().count(&p.content) <= usize::from(cap),
        "{:?} over {cap}",
        p.content
    );
    let (clean, _) = sanitize(text);
    assert_eq!(sanitize(&clean).0, clean, "sanitising is not idempotent");
    let _ = neutralize(&p.content);
    let echoed = toolshape::__private::echo_clean(text);
    assert!(!echoed.chars().any(invisible), "{echoed:?}");
    assert!(echoed.chars().count() <= 601);
}
