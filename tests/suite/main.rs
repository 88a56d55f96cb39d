//! The integration tests, as one binary (each test binary links separately and costs build
//! time). Each area has its own module here; the example domain they shape (`desk`,
//! `tracker`) is the `shape-examples` crate in `examples/common/`, compiled once.

use shape_examples::{desk, tracker};

mod access;
mod aggregate;
mod architecture;
mod budget;
mod client;
mod config_records;
mod configured;
mod configured_input;
mod cursor;
mod derive;
mod edges;
mod handle;
mod harness;
mod mcp;
mod nested;
mod open;
mod paging;
mod proxy;
mod questions;
mod quoting;
mod redaction;
mod robustness;
mod sdk_paths;
mod session;
mod tidy;
mod tokenizers;
mod untrusted;
mod untyped;
mod upstream;
mod values;
mod walk;

/// The lines of the `shape` events the tests read (the `search_tickets` call reports and
/// session summaries), from the process's global subscriber: a scoped one races with other
/// tests' threads over tracing's per-callsite interest cache (an event was sometimes not
/// delivered). Installed on first use.
pub fn shape_log() -> Vec<String> {
    use std::io::Write;
    use std::sync::{Arc, Mutex, OnceLock};
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<String>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let line = String::from_utf8_lossy(buf);
            if line.contains("tool=search_tickets") || line.contains("session summary") {
                self.0.lock().unwrap().push(line.into_owned());
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    static SINK: OnceLock<Sink> = OnceLock::new();
    let sink = SINK.get_or_init(|| {
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber");
        sink
    });
    sink.0.lock().unwrap().clone()
}

/// Property-test settings: `cases` runs, times `SHAPE_PROPTEST_SCALE` when it is set (run the
/// properties long with `SHAPE_PROPTEST_SCALE=50`), from the seed in `PROPTEST_RNG_SEED` when
/// it is set (`.ci/run` sets one and prints it, so a failure there can be replayed).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let scale = std::env::var("SHAPE_PROPTEST_SCALE")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(1);
    proptest::test_runner::Config::with_cases(cases.saturating_mul(scale))
}

/// The smallest budget from 1 to 4,000 tokens at which `fits` holds (it must hold at every
/// budget above one where it holds), by bisection.
pub fn smallest_budget(fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (1usize, 4_000usize);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { hi = mid } else { lo = mid + 1 }
    }
    lo
}

/// Follows `next` from the first page of `tool` over `rows` to the last, at `budget` in
/// `format`, paging with a signed cursor; returns what `read` reads back from each page (in
/// page order) and each page's text counted by an independent tokenizer (tiktoken-rs).
pub fn walk_next<T, K>(
    tool: &str,
    rows: &[T],
    budget: usize,
    format: toolshape::Format,
    read: impl Fn(&toolshape::Shaped) -> Vec<K>,
) -> (Vec<K>, Vec<usize>)
where
    T: toolshape::ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    use std::sync::Arc;
    use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    use toolshape::tokens::Tokenizer;
    let o200k = toolshape::tokens::Tiktoken::o200k_base();
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"walk-next-test-signing-key-32-bytes").unwrap(),
    ));
    let query = QueryHash::of(tool, &serde_json::json!({})).unwrap();
    let (mut cursor, mut seen, mut sizes) = (None::<String>, Vec::new(), Vec::new());
    for _ in 0..=rows.len() {
        let page = toolshape::Shaper::for_tool(tool)
            .budget(toolshape::Budget::tokens(budget))
            .format(format)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap()
            .shape_blocking(rows)
            .unwrap();
        sizes.push(o200k.count(page.text()));
        seen.extend(read(&page));
        match page.structured()["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (seen, sizes),
        }
    }
    panic!("`next` did not end after {} pages", rows.len() + 1);
}

/// The records of a JSON envelope as objects, read back from either form: `data` of objects,
/// or `fields` zipped with each array in `data` (a row must have exactly one value a field).
pub fn records(envelope: &serde_json::Value) -> Vec<serde_json::Map<String, serde_json::Value>> {
    assert!(envelope.get("rows").is_none(), "no rows key: {envelope}");
    if envelope.get("fields").is_none() {
        return envelope["data"]
            .as_array()
            .expect("data is an array")
            .iter()
            .map(|r| r.as_object().expect("a record is an object").clone())
            .collect();
    }
    let fields: Vec<String> = envelope["fields"]
        .as_array()
        .expect("fields is an array")
        .iter()
        .map(|f| f.as_str().expect("a field name").to_owned())
        .collect();
    envelope["data"]
        .as_array()
        .expect("data is an array")
        .iter()
        .map(|row| {
            let row = row.as_array().expect("a row is an array");
            assert_eq!(
                row.len(),
                fields.len(),
                "a row of the wrong length: {row:?}"
            );
            fields.iter().cloned().zip(row.iter().cloned()).collect()
        })
        .collect()
}

/// The record lines of a text page: after its `head` lines, up to the `omitted:` line, or (a
/// complete page has no tail) to the newline that ends the last record.
pub fn record_lines(text: &str, head: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.split('\n').collect();
    let body = &lines[head.min(lines.len())..];
    let end = body
        .iter()
        .position(|l| l.starts_with("omitted: "))
        .unwrap_or(body.len() - usize::from(body.last() == Some(&"")));
    body[..end].to_vec()
}

/// The envelope's `omitted`, as the rule reads an envelope without one: a page that leaves
/// nothing out and goes no further states neither `omitted` nor `next` (checked here: such a
/// page is not partial and has no cursor), and nothing of it was left out.
pub fn omitted_of(envelope: &serde_json::Value) -> serde_json::Value {
    match envelope.get("omitted") {
        Some(omitted) => omitted.clone(),
        None => {
            assert_ne!(envelope["status"], "partial", "{envelope}");
            assert!(envelope.get("next").is_none(), "{envelope}");
            serde_json::json!({"count": 0, "reason": null, "fields": []})
        }
    }
}

/// A text's lines as the structured channel shows them across a walk's envelopes, each with
/// its number (`shape_examples::read::text_lines`: a whole line is a string, a part of a line
/// longer than a page an object naming its line); never in the rows form.
pub fn text_lines<'e>(
    envelopes: impl IntoIterator<Item = &'e serde_json::Value>,
) -> Vec<(u64, String)> {
    let envelopes: Vec<&serde_json::Value> = envelopes.into_iter().collect();
    for envelope in &envelopes {
        assert!(
            envelope.get("fields").is_none(),
            "no rows for text: {envelope}"
        );
    }
    shape_examples::read::text_lines(envelopes.iter().copied())
        .unwrap_or_else(|| panic!("not a text's lines: {envelopes:?}"))
}

/// The envelope's keys in order, and that they are the keys of one form:
/// `status, summary, [untrusted,] [fields,] data[, omitted, next]` — `omitted` and `next`
/// both or neither, neither only on a page that is not partial (a complete answer says only
/// its status, summary and records).
pub fn envelope_keys(envelope: &serde_json::Value) -> Vec<String> {
    let keys: Vec<String> = envelope
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    let mut expected = vec!["status", "summary"];
    if envelope.get("untrusted").is_some() {
        expected.push("untrusted");
    }
    if envelope.get("fields").is_some() {
        expected.push("fields");
    }
    expected.push("data");
    if envelope.get("omitted").is_some() || envelope["status"] == "partial" {
        expected.extend(["omitted", "next"]);
    }
    assert_eq!(keys, expected, "{envelope}");
    keys
}

/// An o200k tokenizer that hands every text it is asked to count or cut to `watch` first: how
/// a test sees what the library tokenizes, not only the counts it reports. It names no
/// boundary no token crosses ([`Tokenizer::splits_between`](toolshape::tokens::Tokenizer::splits_between))
/// unless made [`splitting`](Self::splitting), as o200k's own tokenizers do.
pub struct Watched<F> {
    inner: toolshape::tokens::Tiktoken,
    watch: F,
    splits: bool,
}

impl<F: Fn(&str) + Send + Sync> Watched<F> {
    pub fn new(watch: F) -> Self {
        Watched {
            inner: toolshape::tokens::Tiktoken::o200k_base(),
            watch,
            splits: false,
        }
    }

    /// Names the boundaries o200k names, so the library can skip counts they make needless.
    pub fn splitting(self) -> Self {
        Watched {
            splits: true,
            ..self
        }
    }
}

impl<F: Fn(&str) + Send + Sync> toolshape::tokens::Tokenizer for Watched<F> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn count(&self, text: &str) -> usize {
        (self.watch)(text);
        self.inner.count(text)
    }
    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> toolshape::tokens::Truncated<'t> {
        (self.watch)(text);
        self.inner.truncate(text, max_tokens)
    }
    fn max_token_bytes(&self) -> usize {
        self.inner.max_token_bytes()
    }
    fn splits_between(&self, last: char, next: char) -> bool {
        self.splits && self.inner.splits_between(last, next)
    }
}
