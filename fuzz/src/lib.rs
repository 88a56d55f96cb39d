//! The fuzz targets' bodies and what they share: record types of each paging kind, their rows,
//! and the checks every answer must pass (the envelope parses into its five keys, an error says
//! how to recover and echoes nothing invisible).
//!
//! Each target in `fuzz_targets/` is one call to a function here taking the raw input bytes,
//! so the same code runs under libFuzzer and, on stable, in the test suite: `fuzz_corpus` in
//! `tests/suite/robustness.rs` includes this file and replays every input in `fuzz/corpus/`.
//! Nothing here uses libFuzzer.

use std::sync::{Arc, OnceLock};
use toolshape::__seams::cursor::Wire;
use toolshape::__seams::untrusted::{neutralize, sanitize};
use toolshape::config::ShapeConfig;
use toolshape::cursor::{CursorCodec, CursorKeys, MemoryCursorStore, QueryHash};
use toolshape::handle::{HandlePolicy, Keep, MemoryStore, OpenResult};
use toolshape::tokens::{Tiktoken, Tokenizer};
use toolshape::untrusted::{UrlPolicy, prepare};
use toolshape::{Budget, Shaped, Shaper, ToolResult, fields::Day};

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
/// do in a summary with no invisible character (RGI subdivision flags allowed).
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
    // `omitted` and `next` both or neither: neither only when nothing was cut (then the
    // page is not partial).
    expected.push("data");
    if value.get("omitted").is_some() || value["status"] == "partial" {
        expected.extend(["omitted", "next"]);
    }
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
        // An error held to a small budget keeps what happened first and the remedy next,
        // each cut from its end: only below 64 tokens may the remedy give way.
        let says_how =
            summary.contains("call") || summary.contains("again") || summary.contains("raise the");
        assert!(
            says_how || shaped.report().budget < 64,
            "an error that does not say how to recover: {summary}"
        );
        // An RGI subdivision flag is an emoji, kept like any other: its tag characters are
        // not carriers.
        assert!(
            !without_rgi_flags(summary).chars().any(invisible),
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

// ---- Independent checkers of untrusted text ----------------------------------------------
//
// Written apart from the implementation, simpler than it: the invisible-carrier predicate, the
// delimiter detector and the cut marker. The test suite's untrusted-text tests use them too.

/// A code point that must never survive sanitising, looking at the previous character for
/// variation selectors. RGI flag sequences are taken out before this is asked.
pub fn forbidden(prev: Option<char>, c: char) -> bool {
    let selector = |c: char| matches!(c as u32, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF);
    let cjk = |c: char| matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF);
    match c as u32 {
        0xE0000..=0xE007F => true,
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => true,
        0x200B..=0x200D | 0x2060 | 0xFEFF => true,
        0x2028 | 0x2029 | 0x00AD | 0x034F | 0x115F | 0x1160 | 0x3164 | 0xFFA0 | 0x2061..=0x2064 => {
            true
        }
        0x00..=0x1F => c != '\n' && c != '\t',
        0x7F..=0x9F => true,
        _ if selector(c) => match prev {
            Some(p) if !selector(p) && !p.is_whitespace() => {
                !(matches!(c, '\u{FE0E}' | '\u{FE0F}') || cjk(p))
            }
            _ => true,
        },
        _ => false,
    }
}

/// `text` with each RGI subdivision flag (England, Scotland, Wales: the black flag, tag
/// characters, a cancel tag) shortened to its black flag: the one use of tag characters that
/// sanitising keeps.
pub fn without_rgi_flags(text: &str) -> String {
    let mut t = text.to_owned();
    for code in ["gbeng", "gbsct", "gbwls"] {
        let tags: String = code
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap_or('?'))
            .collect();
        t = t.replace(&format!("\u{1F3F4}{tags}\u{E007F}"), "\u{1F3F4}");
    }
    t
}

/// The carriers (invisible or reordering characters) left in `text`, RGI subdivision flags
/// allowed.
pub fn carriers(text: &str) -> Vec<char> {
    let t = without_rgi_flags(text);
    let mut prev = None;
    let mut bad = Vec::new();
    for c in t.chars() {
        if forbidden(prev, c) {
            bad.push(c);
        }
        prev = Some(c);
    }
    bad
}

/// Occurrences of the delimiter word after `<`, or after `/` in brackets, seen the simple way: entities and
/// full-width forms decoded, case folded, spacing and invisible characters dropped.
pub fn delimiters_in(text: &str) -> usize {
    let mut t = text.to_lowercase();
    for (entity, c) in [
        ("&amp;", "&"),
        ("&lt;", "<"),
        ("&#60;", "<"),
        ("&#x3c;", "<"),
        ("&sol;", "/"),
        ("&#47;", "/"),
        ("%3c", "<"),
        ("%2f", "/"),
    ] {
        t = t.replace(entity, c);
    }
    let folded: String = t
        .chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0xFE64 | 0x2039 => '<',
            _ => c,
        })
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace() && !matches!(*c as u32, 0x200B..=0x200D | 0x2060 | 0xFEFF | 0xAD | 0xE0000..=0xE007F))
        .collect();
    // A slash and the word close a tag in brackets (`[/untrusted]`, `/untrusted>`), not in a
    // path (`src/untrusted/mod.rs`).
    let slashed = folded
        .match_indices("/untrusted")
        .filter(|(i, w)| {
            let before = folded[..*i].chars().next_back();
            let after = folded[i + w.len()..].chars().next();
            matches!(before, Some('[' | '(' | '{' | '<'))
                || matches!(after, Some('>' | ']' | ')' | '}'))
        })
        .count();
    folded.matches("<untrusted").count() + slashed
}

/// The compact delimiter and its look-alikes.
pub const GUILLEMETS: [char; 8] = ['«', '»', '≪', '≫', '⟪', '⟫', '《', '》'];

/// `text` without its cut marker: `… [cut: N more tokens]`, or the bare `…` of a small cut
/// (a value that ends in `…` of its own loses it too, which only lowers its count).
pub fn marker_stripped(text: &str) -> &str {
    match text.rfind("… [cut: ") {
        Some(i) if text.ends_with(" more tokens]") || text.ends_with(" more token]") => &text[..i],
        _ => text.strip_suffix('…').unwrap_or(text),
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
    T: ToolResult + Sync,
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
                    .call()
                    .shape_or_store(
                        (&rows, &()),
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
        report.over_budget || report.tokens.most() <= budget,
        "{report:?}"
    );
}

// ---- sanitiser ----------------------------------------------------------------------------

fn o200k() -> &'static Tiktoken {
    static T: OnceLock<Tiktoken> = OnceLock::new();
    T.get_or_init(Tiktoken::o200k_base)
}

/// A record with a capped and an uncapped untrusted field: what the sanitiser target renders.
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "note", plural = "notes")]
pub struct Note {
    #[shape(id)]
    pub id: u32,
    #[shape(untrusted(max_tokens = 12))]
    pub subject: String,
    #[shape(untrusted)]
    pub body: String,
}

/// The tool and the call's random-delimiter nonce the sanitiser target renders with.
const TOOL: &str = "fuzz_notes";
const NONCE: &str = "9c2e41d0";

/// The untrusted-text pipeline (sanitise, links, token cap, neutralise), its rendering into a
/// record under every provenance mode and channel, and the cleaning of echoed error text: no
/// panic, nothing invisible survives, the cap holds, no value forges or closes a delimiter,
/// the counting pass writes what the answer writes, and sanitising what was already sanitised
/// changes nothing.
///
/// The input: a policy byte (the link policy and the cap: 0 when the input is empty), a mode
/// byte (the rendering: see [`render_checked`]), then the text (its longest UTF-8 prefix).
pub fn sanitiser(data: &[u8]) {
    let (b, mode, text) = match data {
        [] => (0, 0, ""),
        [b] => (*b, 0, ""),
        [b, mode, rest @ ..] => (*b, *mode, str_prefix(rest)),
    };
    let urls = [UrlPolicy::Keep, UrlPolicy::Flag, UrlPolicy::Strip][usize::from(b) % 3];
    let cap = (b >> 2) % 40 + 1;
    let p = prepare(text, Some(u32::from(cap)), o200k(), urls);
    assert!(
        !without_rgi_flags(&p.content)
            .chars()
            .any(|c| invisible(c) && c != '\t'),
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
    assert!(
        !without_rgi_flags(&echoed).chars().any(invisible),
        "{echoed:?}"
    );
    assert!(echoed.chars().count() <= 601);
    render_checked(text, urls, mode);
}

/// Renders a [`Note`] holding `text` in both untrusted fields as a shaper does, in the mode
/// `mode` picks: bits 0–1 the provenance (compact, tag, random tag, off), bit 2 the structured
/// channel (else the text channel), bit 3 compact marks, bit 4 an envelope that names the
/// untrusted fields, bit 5 a datamark, bit 6 inside a nested field. Renders it twice, in the
/// counting pass and in the write (which has a shortcut for short plain values), and checks
/// that they agree and what the reader sees: the record's keys, no carrier, the structured
/// channel's cap, and each value inside its delimiters (the tags, or `«…»`) with no delimiter
/// or look-alike of its own; values not wrapped one by one hold no delimiter at all.
pub fn render_checked(text: &str, urls: UrlPolicy, mode: u8) {
    use toolshape::__private::{CallEnv, Channel, Cx};
    use toolshape::untrusted::{Provenance, UntrustedPolicy};
    let provenance = [
        Provenance::Compact,
        Provenance::Tag,
        Provenance::RandomTag,
        Provenance::Off,
    ][usize::from(mode & 3)];
    let structured = mode & 4 != 0;
    let (compact_marks, named_fields) = (mode & 8 != 0, mode & 16 != 0);
    let policy = UntrustedPolicy {
        provenance,
        urls,
        datamark: (mode & 32 != 0).then_some('ˆ'),
    };
    let nested = mode & 64 != 0;
    let note = Note {
        id: 7,
        subject: text.to_owned(),
        body: text.to_owned(),
    };
    let channel = if structured {
        Channel::Structured
    } else {
        Channel::Text
    };
    let render = |counting: bool| -> String {
        let env = CallEnv::new(TOOL, o200k(), &policy, NONCE)
            .with_pass(channel, counting)
            .with_compact_marks(compact_marks)
            .with_named_fields(named_fields);
        let cx = Cx::<<Note as ToolResult>::Needs>::new(&(), &env);
        let mut buf = Vec::new();
        let mut write = || note.serialize_record(&cx, &mut serde_json::Serializer::new(&mut buf));
        let written = if nested {
            env.within("notes", write)
        } else {
            write()
        };
        if let Err(e) = written {
            panic!("rendering failed: {e}");
        }
        String::from_utf8(buf).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
    };
    let json = render(false);
    assert_eq!(render(true), json, "the counting pass wrote something else");
    let value: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys, ["id", "subject", "body"], "{json}");
    let delimited = provenance != Provenance::Off;
    let one_by_one = !(structured || delimited && named_fields);
    let guillemets = one_by_one && provenance == Provenance::Compact && compact_marks;
    let tagged = one_by_one && delimited && !guillemets;
    for field in ["subject", "body"] {
        let shown = value[field].as_str().unwrap_or_default();
        assert_eq!(carriers(shown), Vec::<char>::new(), "{field}: {shown:?}");
        let inner = if guillemets {
            shown
                .strip_prefix('«')
                .and_then(|s| s.strip_suffix('»'))
                .unwrap_or_else(|| panic!("{field} not between « and »: {shown:?}"))
        } else if tagged {
            let nonce = match provenance {
                Provenance::RandomTag => format!("-{NONCE}"),
                _ => String::new(),
            };
            let path = if nested { "notes." } else { "" };
            let open = format!("<untrusted{nonce} source=\"{TOOL}.{path}{field}\">");
            let close = format!("</untrusted{nonce}>");
            shown
                .strip_prefix(open.as_str())
                .and_then(|s| s.strip_suffix(close.as_str()))
                .unwrap_or_else(|| panic!("{field} not between {open} and {close}: {shown:?}"))
        } else {
            shown
        };
        // Inside its delimiters (or unwrapped), no delimiter of either kind: the tags' look-alikes
        // always, the compact marks' wherever a value is not tagged.
        if delimited {
            assert_eq!(delimiters_in(inner), 0, "{field}: {shown:?}");
        }
        if delimited && !tagged {
            let lower = inner.to_lowercase();
            let entities = ["&laquo;", "&raquo;", "&#171;", "&#187;", "&#xab;", "&#xbb;"];
            assert!(!inner.contains(GUILLEMETS), "{field}: {shown:?}");
            assert!(!entities.iter().any(|e| lower.contains(e)), "{shown:?}");
        }
        if structured && field == "subject" {
            let content = marker_stripped(inner);
            assert!(
                o200k().count(content) <= 12,
                "{field} over its cap: {shown:?}"
            );
        }
    }
}
