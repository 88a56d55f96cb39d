//! The paging oracle: walks a tool's pages through `next` and checks, from what a model reads
//! alone, the promises a paging library cannot break.
//!
//! 1. Every record is shown exactly once across the walk, in the expected order, unless a
//!    page skips it; a skipped record is named (by its id, or its place), said to need a
//!    budget larger than the walk's, and asking for the page that starts with it at that
//!    budget shows it, while one token less does not (so it was the record, not the cursor).
//! 2. Every stated count is true: the range `a–b` is the places of the records shown, "after
//!    the first N" is the number shown before, a total is the true total, `omitted.count`
//!    is the number not shown, `omitted.too_large` the number skipped.
//! 3. Nothing is over budget, counted here with tiktoken-rs directly; an answer that cannot
//!    fit at all is the error that says which budget it needs, and that budget makes
//!    progress while one token less does not.
//! 4. A page that leaves records says how to go on; one that does not, does not.
//!
//! The oracle never reads the report: the records and numbers come from both channels' text
//! and the summary's words.

use serde_json::Value;
use std::collections::HashSet;
use std::sync::OnceLock;
use toolshape::{Budget, ChannelPolicy, Format, Shaped};

/// o200k_base straight from tiktoken-rs: the oracle's own count.
pub fn tokens(text: &str) -> usize {
    static BPE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k_base"))
        .encode_with_special_tokens(text)
        .len()
}

/// How the walk's totals are stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Totals {
    /// Every page knows the total.
    Known,
    /// An upstream that pages itself without a total: none is stated until its last page.
    Upstream,
}

/// A page from `cursor` at `budget`, `page_size` overriding the walk's when `Some`.
pub type Fetch<'a> = &'a dyn Fn(Option<&str>, Budget, Option<usize>) -> Shaped;

/// One walk's settings, and how to ask for a page.
pub struct Walker<'a> {
    pub fetch: Fetch<'a>,
    pub budget: Budget,
    pub format: Format,
    pub channels: ChannelPolicy,
    /// The output field that names a record, in `data` and as the text line's first cell.
    pub key: &'a str,
    /// The record's words (`issue`, `issues`).
    pub name: &'a str,
    pub plural: &'a str,
    /// The records in the order the pages must show them.
    pub truth: &'a [String],
    /// How a skipped record is named: by its place, by the key (the record's id), or by the
    /// id each record has or lacks (in `truth`'s order).
    pub skip_names: SkipNames<'a>,
    pub totals: Totals,
    /// How a text line shows the key: its first cell (`{key}: …` or a table row) by default.
    pub text_key: fn(&str) -> String,
    /// Re-ask at the needs each page states (two calls a need; off for cheap walks).
    pub check_needs: bool,
}

/// How a walk's skipped records are named.
#[derive(Debug, Clone, Copy)]
pub enum SkipNames<'a> {
    /// By their place only: the records have no id.
    Place,
    /// By the key, which is the record's id.
    Key,
    /// By the id each record has (`None`: by its place), in the order of `truth`.
    Ids(&'a [Option<String>]),
}

/// What a walk saw.
#[derive(Debug, Default)]
pub struct Walked {
    /// The keys in the order shown.
    pub seen: Vec<String>,
    /// The keys skipped as too large for any page.
    pub skipped: Vec<String>,
    /// The summaries, in order.
    pub summaries: Vec<String>,
    /// The budget a page said it needs, when the walk stopped at a budget too small for it.
    pub stopped: Option<usize>,
}

/// What a summary states, read as a model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    pub counts: Counted,
    /// The total, where one is stated.
    pub total: Option<u64>,
    /// "more available": the total is unknown and more records come.
    pub more: bool,
    /// Each record it says it skips: its id or none, its place, the tokens its page needs.
    pub skips: Vec<(Option<String>, u64, Need)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Tokens(u64),
    Bytes(u64),
    Lines(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Counted {
    /// A first page: `n` records shown (places 1 to n).
    First(u64),
    /// Places `a` to `b`.
    Range(u64, u64),
    /// None shown, after this many shown (`the first N`) or this place (`place P`).
    NoneAfter(After),
    /// Nothing left after the first N / place P.
    NoMore(After),
    /// No record matches.
    Empty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    First(u64),
    Place(u64),
}

fn number(s: &str) -> u64 {
    s.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

fn need(text: &str) -> Need {
    let (n, unit) = text
        .split_once(' ')
        .unwrap_or_else(|| panic!("a need: {text:?}"));
    match unit {
        "tokens" => Need::Tokens(number(n)),
        "bytes" => Need::Bytes(number(n)),
        "lines" => Need::Lines(number(n)),
        _ => panic!("a need in {unit:?}"),
    }
}

/// A skipped record's label: `{name} {id} (place {p})` or `the {name} at place {p}`.
fn label(text: &str, name: &str) -> (Option<String>, u64) {
    if let Some(place) = text.strip_prefix(&format!("the {name} at place ")) {
        return (None, number(place));
    }
    let rest = text
        .strip_prefix(&format!("{name} "))
        .unwrap_or_else(|| panic!("a skipped record's label: {text:?}"));
    let (id, place) = rest
        .rsplit_once(" (place ")
        .unwrap_or_else(|| panic!("a label with a place: {text:?}"));
    (Some(id.to_owned()), number(place.trim_end_matches(')')))
}

/// Reads a page's summary (the JSON's, with how to go on after it).
pub fn read_summary(summary: &str, name: &str, plural: &str) -> Stated {
    let summary = summary
        .strip_suffix("; pass next as cursor for more")
        .unwrap_or(summary);
    let clauses: Vec<&str> = summary.split("; ").collect();
    let first = clauses[0].split(", ").next().unwrap_or_default();
    let words: Vec<&str> = first.split(' ').collect();
    let after = |w: &[&str]| -> After {
        match w {
            ["the", "first", n] => After::First(number(n)),
            ["place", p] => After::Place(number(p)),
            _ => panic!("after what? {summary}"),
        }
    };
    let (counts, total) = match words.as_slice() {
        ["no", p, "found"] if *p == plural => (Counted::Empty, Some(0)),
        ["no", p, "match", ..] if *p == plural => (Counted::Empty, Some(0)),
        ["no", "more", p, "after", rest @ ..] if *p == plural => {
            (Counted::NoMore(after(rest)), None)
        }
        ["0", p, "shown", "after", rest @ ..] if *p == plural => match rest {
            [head @ .., "of", t] => (Counted::NoneAfter(after(head)), Some(number(t))),
            head => (Counted::NoneAfter(after(head)), None),
        },
        [p, range, "shown"] | [p, range, "of", _] if *p == plural => {
            let (a, b) = range.split_once('–').expect("a range");
            (
                Counted::Range(number(a), number(b)),
                words.get(3).map(|t| number(t)),
            )
        }
        [n, "of", t, p] if *p == plural => (Counted::First(number(n)), Some(number(t))),
        [n, noun, "shown"] if *noun == name || *noun == plural => (Counted::First(number(n)), None),
        [t, noun] if *noun == name || *noun == plural => {
            (Counted::First(number(t)), Some(number(t)))
        }
        _ => panic!("a summary the oracle cannot read: {summary}"),
    };
    let mut skips = Vec::new();
    for clause in &clauses[1..] {
        if let Some(one) = clause.strip_suffix(')')
            && let Some((who, needs)) =
                one.split_once(" alone exceeds the budget and is skipped (its page needs ")
        {
            let (id, place) = label(who, name);
            skips.push((id, place, need(needs)));
        } else if let Some(list) = clause.strip_prefix("skipped, each alone over the budget: ") {
            for item in list.split("), ") {
                let item = item.trim_end_matches(')');
                let (who, needs) = item
                    .rsplit_once(" (needs ")
                    .unwrap_or_else(|| panic!("a skipped record: {item:?}"));
                let (id, place) = label(who, name);
                skips.push((id, place, need(needs)));
            }
        }
    }
    Stated {
        counts,
        total,
        more: clauses.contains(&"more available"),
        skips,
    }
}

/// The keys of a JSON envelope's records, in either form.
pub fn data_keys(value: &Value, key: &str) -> Vec<String> {
    crate::records(value)
        .iter()
        .map(|r| match &r[key] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The first cell of a prose (`{key}: …`) or table line.
pub fn first_cell(line: &str) -> String {
    let cut = if line.contains(" | ") { " | " } else { ": " };
    line.split(cut).next().unwrap_or_default().to_owned()
}

/// The keys of the text channel.
fn text_keys(w: &Walker<'_>, text: &str) -> Vec<String> {
    // Under the structured profile the text channel is the same JSON.
    if w.format == Format::Json || w.channels == ChannelPolicy::Structured {
        return data_keys(&serde_json::from_str(text).expect("JSON text"), w.key);
    }
    let head = if w.format == Format::Table { 2 } else { 1 };
    crate::record_lines(text, head)
        .iter()
        .map(|line| (w.text_key)(line))
        .collect()
}

/// The texts a model may read under the walk's profile: each held to the budget.
fn held<'s>(w: &Walker<'_>, page: &'s Shaped) -> Vec<&'s str> {
    match w.channels {
        ChannelPolicy::Both => vec![page.text(), page.structured_json()],
        ChannelPolicy::Text => vec![page.text()],
        ChannelPolicy::Structured => vec![page.structured_json()],
    }
}

/// Whether `page` keeps within `budget` on every channel the profile holds, counted here.
pub fn within(w: &Walker<'_>, page: &Shaped, budget: Budget) -> bool {
    let texts: Vec<&str> = match w.channels {
        // An error is read as text by some clients whatever the profile.
        ChannelPolicy::Structured if page.is_error() => vec![page.text()],
        _ => held(w, page),
    };
    texts.iter().all(|t| {
        tokens(t) <= budget.max_tokens()
            && budget.max_bytes().is_none_or(|max| t.len() <= max)
            && budget
                .max_lines()
                .is_none_or(|max| t.split('\n').count() <= max)
    })
}

/// The budget a "too small for any answer" error asks for, if `page` is one: it starts with
/// what it needs (`60 tokens needed: …`).
pub fn asks_for(page: &Shaped) -> Option<Need> {
    if !page.is_error() {
        return None;
    }
    let summary = page.summary();
    // `42 tokens needed: …`, or cut to `42…` (tokens, the unit a budget has).
    let (n, rest) = summary
        .split_once(' ')
        .unwrap_or((summary.trim_end_matches('…'), "tokens"));
    let n = n.trim_end_matches('…').replace(',', "").parse().ok()?;
    let unit = rest.split(['…', ' ']).next()?;
    match unit {
        "tokens" => Some(Need::Tokens(n)),
        "bytes" => Some(Need::Bytes(n)),
        "lines" => Some(Need::Lines(n)),
        _ => None,
    }
}

/// The tokens of the smallest error envelope there is (no summary) on the channels a model
/// reads an error on, written here: below it no answer can keep within a budget.
pub fn bare_error_tokens(w: &Walker<'_>) -> usize {
    let json = r#"{"status":"error","summary":"","data":[],"omitted":{"count":0,"reason":null,"fields":[]},"next":null}"#;
    let text = match w.format {
        Format::Json => json.to_owned(),
        _ => "error: .\nomitted: none.\nnext: null".to_owned(),
    };
    match w.channels {
        ChannelPolicy::Text => tokens(&text),
        _ => tokens(&text).max(tokens(json)),
    }
}

fn with_tokens(budget: Budget, tokens: usize) -> Budget {
    let mut b = Budget::tokens(tokens);
    if let Some(bytes) = budget.max_bytes() {
        b = b.bytes(bytes);
    }
    if let Some(lines) = budget.max_lines() {
        b = b.lines(lines);
    }
    b
}

/// Walks every page from the first and checks every promise; panics on the first broken one.
pub fn walk(w: &Walker<'_>) -> Walked {
    let total = w.truth.len() as u64;
    let mut out = Walked::default();
    let mut cursor: Option<String> = None;
    for _ in 0..=2 * w.truth.len() + 2 {
        let page = (w.fetch)(cursor.as_deref(), w.budget, None);
        let number = out.summaries.len();
        let context = || format!("budget {:?}, page {number}:\n{}", w.budget, page.text());
        // 3. Within the budget, counted here, on every channel the model may read; over it
        // only where not even the bare error envelope fits.
        if !within(w, &page, w.budget) {
            // Only an error cut to its shortest (the two words that say what it needs, or
            // less), where nothing that says what it needs can fit.
            assert!(page.is_error(), "over budget: {}", context());
            let words = page.summary().split(' ').count();
            assert!(
                w.budget.max_tokens() < bare_error_tokens(w)
                    || words <= 2 && asks_for(&page).is_some(),
                "over budget: {}",
                context()
            );
            out.stopped = Some(w.budget.max_tokens());
            return out;
        }
        if page.is_error() {
            // The only error a walk may meet: a budget too small for this page. Its ask is
            // exact: that budget makes progress, one token less does not.
            let ask = asks_for(&page).unwrap_or_else(|| panic!("an error: {}", context()));
            match ask {
                Need::Tokens(n) => {
                    // The budget that shows the next record: at it the page shows it first,
                    // one token less it does not.
                    let n = n as usize;
                    assert!(n > w.budget.max_tokens(), "{}", context());
                    let next = w.truth.get(out.seen.len() + out.skipped.len());
                    let first = |page: &Shaped| -> Option<String> {
                        let v: Value = serde_json::from_str(page.structured_json()).ok()?;
                        data_keys(&v, w.key).first().cloned()
                    };
                    let at = (w.fetch)(cursor.as_deref(), with_tokens(w.budget, n), None);
                    assert!(!at.is_error(), "at the asked {n}: {}", at.text());
                    assert!(within(w, &at, with_tokens(w.budget, n)));
                    assert_eq!(first(&at).as_ref(), next, "at the asked {n}: {}", at.text());
                    let below = (w.fetch)(cursor.as_deref(), with_tokens(w.budget, n - 1), None);
                    match next {
                        // No record left: what it asked for is the envelope's room.
                        None => assert!(
                            below.is_error(),
                            "one below the asked {n}: {}",
                            below.text()
                        ),
                        Some(_) => assert_ne!(
                            first(&below).as_ref(),
                            next,
                            "one below the asked {n}: {}",
                            below.text()
                        ),
                    }
                    out.stopped = Some(n);
                }
                Need::Bytes(n) => assert!(w.budget.max_bytes().is_some_and(|b| n as usize > b)),
                Need::Lines(n) => assert!(w.budget.max_lines().is_some_and(|l| n as usize > l)),
            }
            return out;
        }
        let value: Value = serde_json::from_str(page.structured_json()).expect("JSON");
        let keys = data_keys(&value, w.key);
        // Both channels name the same records, in the same order.
        assert_eq!(text_keys(w, page.text()), keys, "{}", context());
        let stated = read_summary(page.summary(), w.name, w.plural);
        out.summaries.push(page.summary().to_owned());

        let shown_before = out.seen.len() as u64;
        let skipped_before = out.skipped.len() as u64;
        let covered = shown_before + skipped_before;
        let k = keys.len() as u64;
        // 1. The skipped records, named, before and after the records shown.
        let places: Vec<u64> = stated.skips.iter().map(|s| s.1).collect();
        let prefix = (0..=places.len())
            .rev()
            .find(|&p| {
                places[..p]
                    .iter()
                    .enumerate()
                    .all(|(i, &pl)| pl == covered + 1 + i as u64)
            })
            .unwrap_or(0) as u64;
        let prefix = if k == 0 { places.len() as u64 } else { prefix };
        for (i, &(ref id, place, _)) in stated.skips.iter().enumerate() {
            let expected = if (i as u64) < prefix {
                covered + 1 + i as u64
            } else {
                covered + prefix + k + 1 + (i as u64 - prefix)
            };
            assert_eq!(place, expected, "a skipped record's place: {}", context());
            let truth = &w.truth[(place - 1) as usize];
            match w.skip_names {
                SkipNames::Key => {
                    assert_eq!(id.as_deref(), Some(truth.as_str()), "{}", context())
                }
                SkipNames::Place => assert!(id.is_none(), "{}", context()),
                SkipNames::Ids(ids) => {
                    assert_eq!(id, &ids[(place - 1) as usize], "{}", context())
                }
            }
        }
        let start = (covered + prefix) as usize;
        assert_eq!(
            keys.as_slice(),
            &w.truth[start.min(w.truth.len())..(start + keys.len()).min(w.truth.len())],
            "records out of order, repeated or lost: {}",
            context()
        );
        // 2. The counts.
        match stated.counts {
            Counted::Empty => assert_eq!(total, 0, "{}", context()),
            Counted::First(n) => {
                // A first page; one that skips before its first record shown states a range,
                // unless it shows none.
                assert_eq!(covered, 0, "{}", context());
                assert!(prefix == 0 || k == 0, "{}", context());
                assert_eq!(n, k, "{}", context());
            }
            Counted::Range(a, b) => {
                assert!(k > 0, "{}", context());
                assert_eq!(
                    (a, b),
                    (covered + prefix + 1, covered + prefix + k),
                    "{}",
                    context()
                );
            }
            Counted::NoneAfter(after) | Counted::NoMore(after) => {
                assert_eq!(k, 0, "{}", context());
                match after {
                    After::First(n) => {
                        assert_eq!(skipped_before, 0, "{}", context());
                        assert_eq!(
                            n,
                            shown_before,
                            "'after the first N' is the number shown: {}",
                            context()
                        );
                    }
                    After::Place(p) => assert_eq!(p, covered, "{}", context()),
                }
            }
        }
        if let Some(t) = stated.total {
            assert_eq!(t, total, "a false total: {}", context());
        }
        let skipped_here: Vec<String> = stated
            .skips
            .iter()
            .map(|s| w.truth[(s.1 - 1) as usize].clone())
            .collect();
        out.seen.extend(keys.iter().cloned());
        out.skipped.extend(skipped_here.iter().cloned());
        let after = (out.seen.len() + out.skipped.len()) as u64;
        let done = after == total;
        let omitted = &crate::omitted_of(&value);
        match stated.total {
            Some(t) => {
                assert_eq!(
                    omitted["count"].as_u64(),
                    Some(t - out.seen.len() as u64),
                    "omitted.count: {}",
                    context()
                );
            }
            None if matches!(stated.counts, Counted::NoMore(_)) => {
                // "No more": this page covers nothing and nothing is left.
                assert!(done && stated.skips.is_empty(), "{}", context());
                assert_eq!(
                    omitted["count"].as_u64(),
                    Some(total - out.seen.len() as u64),
                    "omitted.count: {}",
                    context()
                );
            }
            None => {
                assert_eq!(w.totals, Totals::Upstream, "{}", context());
                assert!(stated.more, "{}", context());
                assert!(omitted["count"].is_null(), "{}", context());
            }
        }
        assert_eq!(
            omitted["too_large"].as_u64().unwrap_or(0),
            out.skipped.len() as u64,
            "omitted.too_large: {}",
            context()
        );
        // 4. Status and how to go on.
        let next = value["next"].as_str().map(str::to_owned);
        assert_eq!(next.as_deref(), page.next());
        let status = match (total, done && out.skipped.is_empty()) {
            (0, _) => "empty",
            (_, true) if next.is_none() => "ok",
            _ => "partial",
        };
        assert_eq!(value["status"], status, "{}", context());
        if stated.more {
            assert!(next.is_some(), "{}", context());
        } else {
            assert_eq!(
                next.is_none(),
                done,
                "a page leaves records and no way on, or the reverse: {}",
                context()
            );
        }
        if next.is_some() && !done {
            assert!(
                k > 0 || !skipped_here.is_empty(),
                "a page made no progress: {}",
                context()
            );
        }
        // 1. Each need is exact: from the place before the first record skipped before and
        // after the records shown, that budget shows it first and one token less does not.
        if w.check_needs {
            let firsts = [
                (prefix > 0).then_some(0usize),
                (stated.skips.len() as u64 > prefix).then_some(prefix as usize),
            ];
            for i in firsts.into_iter().flatten() {
                let (_, place, needs) = stated.skips[i].clone();
                let before = if (i as u64) < prefix {
                    Some(cursor.clone())
                } else {
                    // After the records this page shows, with the same skips before them: the
                    // same page cut at its records by a page size.
                    let cut = (w.fetch)(cursor.as_deref(), w.budget, Some(k as usize));
                    let v: Value = serde_json::from_str(cut.structured_json()).expect("JSON");
                    (data_keys(&v, w.key) == keys).then(|| cut.next().map(str::to_owned))
                };
                let Some(before) = before else { continue };
                let skipped = &w.truth[(place - 1) as usize];
                let first_shown = |page: &Shaped| {
                    let v: Value = serde_json::from_str(page.structured_json()).ok()?;
                    data_keys(&v, w.key).first().cloned()
                };
                match needs {
                    Need::Tokens(n) => {
                        let n = n as usize;
                        assert!(
                            n > w.budget.max_tokens(),
                            "a need within the budget: {}",
                            context()
                        );
                        let at = (w.fetch)(before.as_deref(), with_tokens(w.budget, n), Some(1));
                        assert_eq!(
                            first_shown(&at).as_ref(),
                            Some(skipped),
                            "at its need {n}: {}",
                            at.text()
                        );
                        assert!(within(w, &at, with_tokens(w.budget, n)));
                        let below =
                            (w.fetch)(before.as_deref(), with_tokens(w.budget, n - 1), Some(1));
                        assert_ne!(
                            first_shown(&below).as_ref(),
                            Some(skipped),
                            "one below its need {n}: {}",
                            below.text()
                        );
                    }
                    Need::Bytes(n) => assert!(w.budget.max_bytes().is_some_and(|b| n as usize > b)),
                    Need::Lines(n) => assert!(w.budget.max_lines().is_some_and(|l| n as usize > l)),
                }
            }
        }
        match next {
            Some(n) => cursor = Some(n),
            None => {
                // The end: every record once, shown or skipped.
                let all: HashSet<&String> = out.seen.iter().chain(&out.skipped).collect();
                assert_eq!(
                    all.len(),
                    out.seen.len() + out.skipped.len(),
                    "a record twice: {out:?}"
                );
                assert_eq!(all.len(), w.truth.len(), "records never shown: {out:?}");
                return out;
            }
        }
    }
    panic!("more pages than records: {:?}", out.summaries);
}
