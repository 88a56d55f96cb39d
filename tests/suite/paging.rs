//! Paging through `next`, in every order the library offers: every record is shown exactly
//! once across the pages, and every count and range a summary states is true.
//!
//! The oracle reads only what a model reads: the ids in `data` and in the text channel's
//! lines, and the numbers in the summary, compared with the rows the test made.

use proptest::prelude::*;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
use toolshape::tokens::{Tiktoken, Tokenizer as _};
use toolshape::{
    Budget, Call, ChannelPolicy, Format, Shaped, Shaper, ToolResult, envelope::Status,
    envelope::StructuredForm,
};

/// Ranked, with an id; few distinct scores, so rank keys are often equal.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "ranked",
    plural = "rankeds",
    prose = "{id}: {body}, score {score}"
)]
struct Ranked {
    #[shape(id)]
    id: String,
    #[shape(rank = desc)]
    score: i32,
    #[shape(show)]
    body: String,
}

/// An id and no rank (the Jira projects).
#[derive(Debug, Clone, ToolResult)]
#[shape(name = "project", plural = "projects", prose = "{id}: {body}")]
struct Project {
    #[shape(id)]
    id: String,
    #[shape(show)]
    body: String,
}

/// A rank and no id: nothing breaks ties between equal scores.
#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "entry",
    plural = "entries",
    prose = "{key}: {body}, score {score}"
)]
struct Entry {
    #[shape(show)]
    key: String,
    #[shape(rank = asc)]
    score: i32,
    #[shape(show)]
    body: String,
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    Ranked,
    RankedKeepOrder,
    Unranked,
    UnrankedKeepOrder,
    NoId,
    /// `source::Ordered` with a comparator of the caller's (by body, then nothing).
    Custom,
}

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"a paging key of sixteen bytes or more").unwrap(),
    ))
}

/// The records' keys, read back from either form of the envelope.
pub(crate) fn data_keys(value: &serde_json::Value, key: &str) -> Vec<String> {
    crate::walk::data_keys(value, key)
}

/// The record keys of the text channel: the first cell of each record line.
pub(crate) fn text_keys(text: &str, format: Format, key: &str) -> Vec<String> {
    if format == Format::Json {
        return data_keys(&serde_json::from_str(text).expect("JSON text"), key);
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let head = if format == Format::Table { 2 } else { 1 };
    let body = &lines[head..lines.len().saturating_sub(2).max(head)];
    body.iter()
        .map(|line| crate::walk::first_cell(line))
        .collect()
}

/// How a walk is shaped: everything but the rows and the budget.
#[derive(Debug, Clone, Copy)]
struct Setup {
    mode: Mode,
    /// A line ceiling on top of the tokens (Codex cuts at 256 lines).
    lines: Option<usize>,
    page_size: Option<usize>,
    format: Format,
    form: StructuredForm,
    channels: ChannelPolicy,
    /// Cursors held on the server (a cursor store), else signed.
    held: bool,
}

impl Setup {
    fn new(mode: Mode, format: Format) -> Self {
        Setup {
            mode,
            lines: None,
            page_size: None,
            format,
            form: StructuredForm::Objects,
            channels: ChannelPolicy::Both,
            held: false,
        }
    }

    fn budget(&self, tokens: usize) -> Budget {
        match self.lines {
            Some(lines) => Budget::tokens(tokens).lines(lines),
            None => Budget::tokens(tokens),
        }
    }

    fn shaper(&self, budget: Budget, page_size: Option<usize>) -> Shaper {
        let shaper = Shaper::for_tool("paging")
            .budget(budget)
            .format(self.format)
            .structured_form(self.form)
            .channels(self.channels);
        match page_size.or(self.page_size) {
            Some(p) => shaper.page_size(p),
            None => shaper,
        }
    }

    fn codec(&self) -> Arc<CursorCodec> {
        let keys = CursorKeys::new(b"a paging key of sixteen bytes or more").unwrap();
        Arc::new(match self.held {
            true => CursorCodec::new(keys).held_in(toolshape::cursor::MemoryCursorStore::new(
                100_000,
                std::time::Duration::from_secs(3_600),
            )),
            false => CursorCodec::new(keys),
        })
    }
}

/// Shapes `rows` for one call of the walk `setup` describes.
fn shape_call<T>(setup: &Setup, rows: &[T], call: Call<'_>) -> Shaped
where
    T: ToolResult + Sync + Sortable,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let call = match setup.mode {
        Mode::RankedKeepOrder | Mode::UnrankedKeepOrder => call.keep_order(),
        _ => call,
    };
    match setup.mode {
        Mode::Custom => tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(call.shape(toolshape::source::Ordered::new(rows, &(), T::by_body)))
            .unwrap(),
        _ => call.shape_blocking(rows).unwrap(),
    }
}

/// Records a caller's comparator can order (`Mode::Custom`: by body).
trait Sortable {
    fn by_body(a: &Self, b: &Self) -> Ordering;
}

impl Sortable for Ranked {
    fn by_body(a: &Self, b: &Self) -> Ordering {
        a.body.cmp(&b.body)
    }
}

impl Sortable for Project {
    fn by_body(a: &Self, b: &Self) -> Ordering {
        a.body.cmp(&b.body)
    }
}

impl Sortable for Entry {
    fn by_body(a: &Self, b: &Self) -> Ordering {
        a.body.cmp(&b.body)
    }
}

/// Walks `rows` at `budget` through the oracle ([`crate::walk`]), checking every need it
/// states when `check_needs`.
fn walk_rows<T>(
    rows: &[T],
    truth: &[String],
    setup: Setup,
    budget: usize,
    words: (&str, &str, &str),
    check_needs: bool,
) -> crate::walk::Walked
where
    T: ToolResult + Sync + Sortable,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let codec = setup.codec();
    let query = QueryHash::of(
        "paging",
        &serde_json::json!({ "mode": format!("{:?}", setup.mode) }),
    )
    .unwrap();
    let fetch = |cursor: Option<&str>, budget: Budget, page_size: Option<usize>| {
        let shaper = setup.shaper(budget, page_size);
        let call = shaper
            .call()
            .paginate(Arc::clone(&codec), query, cursor)
            .unwrap();
        shape_call(&setup, rows, call)
    };
    let (key, name, plural) = words;
    crate::walk::walk(&crate::walk::Walker {
        fetch: &fetch,
        budget: setup.budget(budget),
        format: setup.format,
        channels: setup.channels,
        key,
        name,
        plural,
        truth,
        skip_names: if key == "id" {
            crate::walk::SkipNames::Key
        } else {
            crate::walk::SkipNames::Place
        },
        totals: crate::walk::Totals::Known,
        text_key: crate::walk::first_cell,
        check_needs,
    })
}

/// The smallest budget at which each record is shown on a page of its own (alone, no
/// cursor), with the walk's settings.
fn alone_sizes<T>(rows: &[T], setup: &Setup) -> Vec<usize>
where
    T: ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    rows.iter()
        .map(|row| {
            crate::smallest_budget(|b| {
                setup
                    .shaper(setup.budget(b), None)
                    .shape_blocking(std::slice::from_ref(row))
                    .map(|s| s.report().records.shown == 1)
                    .unwrap_or(false)
            })
        })
        .collect()
}

/// How the property picks a budget: a record's alone size (by index) plus a delta, so the
/// walks run a token at a time around each record's size, from the smallest up.
#[derive(Debug, Clone, Copy)]
struct BudgetPick {
    record: usize,
    delta: i64,
}

fn budget_strategy() -> impl Strategy<Value = BudgetPick> {
    (
        any::<usize>(),
        prop_oneof![4 => -2i64..=3, 2 => 4i64..40, 1 => 40i64..600],
    )
        .prop_map(|(record, delta)| BudgetPick { record, delta })
}

/// Walks `rows` in `setup` at the budget `pick` names, through the oracle, and checks the
/// order against the naive reference.
fn run(rows: &[(String, i32, String)], setup: Setup, pick: BudgetPick, check_needs: bool) {
    fn go<T>(
        typed: Vec<T>,
        rows: &[(String, i32, String)],
        setup: Setup,
        pick: BudgetPick,
        words: (&str, &str, &str),
        check_needs: bool,
    ) where
        T: ToolResult + Sync + Sortable,
        (): toolshape::resolve::Supplies<T::Needs>,
    {
        let truth = reference_order(rows, setup.mode);
        let budget = if typed.is_empty() {
            (60 + pick.delta).max(1) as usize
        } else {
            let alone = alone_sizes(&typed, &setup);
            let mut sorted = alone.clone();
            sorted.sort_unstable();
            // The smallest alone size, the largest, or a record's own.
            let base = match pick.record % 4 {
                0 => sorted[0],
                1 => sorted[sorted.len() - 1],
                _ => alone[pick.record % alone.len()],
            };
            (base as i64 + pick.delta).max(1) as usize
        };
        let walked = walk_rows(&typed, &truth, setup, budget, words, check_needs);
        // The records shown are the reference order without those skipped (as far as the
        // walk got, when it stopped at a budget too small for a page).
        let mut expected: Vec<String> = truth
            .into_iter()
            .filter(|k| !walked.skipped.contains(k))
            .collect();
        if walked.stopped.is_some() {
            expected.truncate(walked.seen.len());
        }
        assert_eq!(
            walked.seen, expected,
            "pages are not in the {:?} order",
            setup.mode
        );
    }
    let projects = || -> Vec<Project> {
        rows.iter()
            .map(|(id, _, body)| Project {
                id: id.clone(),
                body: body.clone(),
            })
            .collect()
    };
    match setup.mode {
        Mode::Ranked | Mode::RankedKeepOrder => {
            let typed: Vec<Ranked> = rows
                .iter()
                .map(|(id, score, body)| Ranked {
                    id: id.clone(),
                    score: *score,
                    body: body.clone(),
                })
                .collect();
            go(
                typed,
                rows,
                setup,
                pick,
                ("id", "ranked", "rankeds"),
                check_needs,
            )
        }
        Mode::Unranked | Mode::UnrankedKeepOrder | Mode::Custom => go(
            projects(),
            rows,
            setup,
            pick,
            ("id", "project", "projects"),
            check_needs,
        ),
        Mode::NoId => {
            let typed: Vec<Entry> = rows
                .iter()
                .map(|(id, score, body)| Entry {
                    key: id.clone(),
                    score: *score,
                    body: body.clone(),
                })
                .collect();
            go(
                typed,
                rows,
                setup,
                pick,
                ("key", "entry", "entries"),
                check_needs,
            )
        }
    }
}

/// The naive reference order: a full sort written out here, not the library's.
fn reference_order(rows: &[(String, i32, String)], mode: Mode) -> Vec<String> {
    let mut v: Vec<(usize, &(String, i32, String))> = rows.iter().enumerate().collect();
    match mode {
        Mode::Ranked => v.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(b.1.0.cmp(&a.1.0))),
        Mode::Unranked => v.sort_by(|a, b| a.1.0.cmp(&b.1.0)),
        Mode::NoId => v.sort_by(|a, b| a.1.1.cmp(&b.1.1).then(a.0.cmp(&b.0))),
        Mode::Custom => v.sort_by(|a, b| a.1.2.cmp(&b.1.2).then(a.0.cmp(&b.0))),
        Mode::RankedKeepOrder | Mode::UnrankedKeepOrder => {}
    }
    v.into_iter().map(|(_, r)| r.0.clone()).collect()
}

fn rows_strategy() -> impl Strategy<Value = Vec<(String, i32, String)>> {
    // Mostly short bodies, now and then a long one: a record near the budget's limit while
    // the others fit easily, so some pages skip it as too large.
    let body = prop_oneof![9 => "[a-z ]{0,12}", 1 => "[a-z ]{40,160}"];
    prop::collection::vec((0u32..10_000, 0i32..4, body), 0..30).prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            // Unique ids in an order unrelated to the given order.
            .map(|(i, (seed, score, body))| (format!("k{seed:04}x{i}"), score, body))
            .collect()
    })
}

fn mode_strategy() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::Ranked),
        Just(Mode::RankedKeepOrder),
        Just(Mode::Unranked),
        Just(Mode::UnrankedKeepOrder),
        Just(Mode::NoId),
        Just(Mode::Custom),
    ]
}

proptest! {
    #![proptest_config(crate::proptest_config(160))]

    /// Every way of paging the library offers (ranked, unranked, kept order, no id, a
    /// caller's comparator; signed and held cursors; prose, table, JSON in either form; each
    /// channel profile; line ceilings and page sizes), at budgets from the smallest at which
    /// a record fits alone up, a token at a time around each record's size: every record
    /// once, every count true, never over budget (the oracle, `walk`).
    #[test]
    fn every_record_once_and_every_count_true(
        rows in rows_strategy(),
        mode in mode_strategy(),
        pick in budget_strategy(),
        lines in proptest::option::weighted(0.3, 5usize..12),
        page_size in proptest::option::weighted(0.3, 1usize..6),
        format in prop_oneof![Just(Format::Json), Just(Format::Prose), Just(Format::Table)],
        form in crate::budget::forms(),
        channels in prop_oneof![Just(ChannelPolicy::Both), Just(ChannelPolicy::Structured), Just(ChannelPolicy::Text)],
        held in any::<bool>(),
    ) {
        let setup = Setup { mode, lines, page_size, format, form, channels, held };
        run(&rows, setup, pick, true);
    }
}

/// Ids too long for a cursor to carry (3,000 to 7,000 bytes, past a cursor's 4,096
/// characters): the codec holds such a position on the server, and every walk still shows
/// every record exactly once, in order, whatever the mode.
#[test]
fn ids_too_long_for_a_cursor_page_through() {
    let rows: Vec<(String, i32, String)> = (0..10)
        .map(|i| {
            (
                format!(
                    "https://docs.example.org/{i}/{}",
                    "chapter/section/".repeat(190 + 25 * i)
                ),
                i32::from(i % 3 == 0),
                format!("page number {i}"),
            )
        })
        .collect();
    for mode in [
        Mode::Ranked,
        Mode::RankedKeepOrder,
        Mode::Unranked,
        Mode::Custom,
    ] {
        for (delta, format) in [(20, Format::Prose), (900, Format::Json)] {
            // From the largest record's alone size up.
            let pick = BudgetPick { record: 1, delta };
            run(&rows, Setup::new(mode, format), pick, false);
        }
    }
}

/// The case: 567 records with an id and no rank, walked at 2,000 and 500 tokens.
#[test]
fn five_hundred_sixty_seven_projects_without_a_rank() {
    let rows: Vec<(String, i32, String)> = (0..567)
        .map(|i| {
            (
                format!("PRJ{:04}", (i * 7919) % 10_000),
                0,
                format!("project number {i}"),
            )
        })
        .collect();
    let typed: Vec<Project> = rows
        .iter()
        .map(|(id, _, body)| Project {
            id: id.clone(),
            body: body.clone(),
        })
        .collect();
    // And at Codex's cut of 256 lines, with tokens to spare: the lines bind; and in the rows
    // form.
    for (budget, lines, form) in [
        (2_000, None, StructuredForm::Objects),
        (500, None, StructuredForm::Objects),
        (500, None, StructuredForm::Rows),
        (20_000, Some(256), StructuredForm::Objects),
    ] {
        for mode in [Mode::Unranked, Mode::UnrankedKeepOrder] {
            let setup = Setup {
                lines,
                form,
                ..Setup::new(mode, Format::Prose)
            };
            let truth = reference_order(&rows, mode);
            let walked = walk_rows(
                &typed,
                &truth,
                setup,
                budget,
                ("id", "project", "projects"),
                false,
            );
            assert_eq!(walked.seen, truth);
            assert!(walked.skipped.is_empty() && walked.stopped.is_none());
        }
    }
    // Full to the line: one record line more would be line 257.
    let first = Shaper::for_tool("paging")
        .budget(Budget::tokens(20_000).lines(256))
        .format(Format::Prose)
        .shape_blocking(&typed)
        .unwrap();
    assert_eq!(first.text().split('\n').count(), 256, "{}", first.text());
    assert_eq!(first.status(), Status::Partial);
}

/// A record is skipped as too large only when no page of its own shows it: walked at every
/// budget from where the large record fits alone up, a token at a time, in every format,
/// the oracle checks each skip's need exactly (the page that starts with the record shows it
/// at that budget and not at one token less) and that no other record is lost.
#[test]
fn a_record_is_skipped_as_too_large_only_when_no_page_of_its_own_shows_it() {
    let mut skips = 0;
    for big in [20usize, 40, 80] {
        for format in [Format::Prose, Format::Json, Format::Table] {
            // Ids in index order: the order pages show them.
            let typed: Vec<Project> = (0..6)
                .map(|i| Project {
                    id: format!("p{i}"),
                    body: if i == 2 {
                        "word ".repeat(big)
                    } else {
                        format!("small {i}")
                    },
                })
                .collect();
            let truth: Vec<String> = typed.iter().map(|p| p.id.clone()).collect();
            let setup = Setup::new(Mode::Unranked, format);
            let alone = alone_sizes(&typed[2..3], &setup)[0];
            for budget in alone..alone + 80 {
                let walked = walk_rows(
                    &typed,
                    &truth,
                    setup,
                    budget,
                    ("id", "project", "projects"),
                    true,
                );
                skips += walked.skipped.len();
                // Only the large one is ever too large.
                assert!(walked.skipped.iter().all(|k| k == "p2"), "{walked:?}");
            }
        }
    }
    assert!(skips > 0, "no page skipped a record: the test saw nothing");
}

/// The last record too large for any page: the page that reaches it skips it with its
/// reason, gives no cursor (nothing is left after it), and says how to see it; no record is
/// lost or shown twice on the way.
#[test]
fn a_last_record_too_large_ends_the_walk_and_says_how_to_see_it() {
    let codec = codec();
    let query = QueryHash::of("paging", &serde_json::json!({ "mode": "last_too_large" })).unwrap();
    let typed: Vec<Project> = (0..3)
        .map(|i| Project {
            id: format!("p{i}"),
            body: if i == 2 {
                "word ".repeat(600)
            } else {
                format!("small {i}")
            },
        })
        .collect();
    for format in [Format::Prose, Format::Json, Format::Table] {
        let shaper = Shaper::for_tool("paging")
            .budget(Budget::tokens(400))
            .format(format);
        let (mut cursor, mut shown, mut pages) = (None::<String>, Vec::new(), Vec::new());
        loop {
            assert!(pages.len() < 4, "{format:?}: the walk does not end");
            let shaped = shaper
                .call()
                .paginate(Arc::clone(&codec), query, cursor.as_deref())
                .unwrap()
                .shape_blocking(&typed)
                .unwrap();
            shown.extend(
                crate::records(&shaped.structured())
                    .iter()
                    .map(|r| r["id"].as_str().unwrap().to_owned()),
            );
            cursor = shaped.next().map(str::to_owned);
            pages.push(shaped);
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(shown, ["p0", "p1"], "{format:?}");
        let last = pages.last().unwrap();
        let omitted = &last.frame().omitted;
        assert_eq!(last.status(), Status::Partial, "{format:?}");
        assert_eq!(
            (omitted.count, omitted.reason, omitted.too_large),
            (
                Some(1),
                Some(toolshape::envelope::OmitReason::RecordTooLarge),
                1
            ),
            "{format:?}"
        );
        // Named, with what its page needs and how to see it; that need is exact.
        let stated = crate::walk::read_summary(last.summary(), "project", "projects");
        let [(Some(id), 3, crate::walk::Need::Tokens(need))] = stated.skips.as_slice() else {
            panic!("{format:?}: {}", last.summary());
        };
        assert_eq!(id, "p2");
        assert!(*need > 400, "{need}");
        assert!(
            last.summary().ends_with(&format!(
                "project p2 (place 3) alone exceeds the budget and is skipped (its page needs {need} tokens); a larger budget shows it"
            )),
            "{format:?}: {}",
            last.summary()
        );
        // The report's tokens of a page showing nothing are those of its text, recounted.
        let o200k = Tiktoken::o200k_base();
        assert_eq!(
            (last.report().tokens.text, last.report().tokens.structured),
            (
                o200k.count(last.text()),
                Some(o200k.count(last.structured_json()))
            ),
            "{format:?}"
        );
    }
}

/// Later pages' summaries: a page of several records names their order, a page of one does
/// not (one record has no order), and the first page names it whenever more than one record
/// matched; read from what the model reads.
#[test]
fn later_pages_name_their_order_when_they_show_several() {
    let codec = codec();
    let query = QueryHash::of("paging", &serde_json::json!({ "mode": "order" })).unwrap();
    let order = "highest score first";
    for (len, page_size) in [
        (12usize, 1usize),
        (12, 2),
        (12, 3),
        (12, 5),
        (1, 3),
        (2, 1),
        (2, 3),
    ] {
        let rows: Vec<Ranked> = (0..len)
            .map(|i| Ranked {
                id: format!("r{i:02}"),
                score: (i % 5) as i32,
                body: format!("body {i}"),
            })
            .collect();
        let mut cursor: Option<String> = None;
        let mut before = 0;
        for page in 0..rows.len() {
            let call = Shaper::for_tool("paging")
                .budget(Budget::tokens(4_000))
                .page_size(page_size)
                .call()
                .paginate(Arc::clone(&codec), query, cursor.as_deref())
                .unwrap();
            let shaped = call.shape_blocking(&rows).unwrap();
            let shown = crate::records(&shaped.structured()).len();
            let summary = shaped.summary();
            let expected = shown > 1 || (page == 0 && rows.len() > 1);
            assert_eq!(
                summary.contains(order),
                expected,
                "page {page} of size {page_size} ({shown} shown after {before}): {summary}"
            );
            before += shown;
            match shaped.next() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert_eq!(before, rows.len());
    }
}

/// Same call, same page: the same rows at the same budget give the same records on every
/// run, because what is random or time-dependent in an answer (a cursor's signature and
/// issue time, a handle, a delimiter nonce) takes tokens by its length alone. Before this fix
/// they were base64 and hex, whose tokens vary with what they say: 20 random base64
/// characters are 10 to 20 o200k tokens, and a page held 3 records on one run and 2 on the
/// next.
#[test]
fn the_same_call_gives_the_same_page_on_every_run() {
    use toolshape::cursor::{Keyset, MemoryCursorStore};
    use toolshape::handle::{Handle, HandlePolicy, Keep, MemoryStore};
    use toolshape::untrusted::{Provenance, UntrustedPolicy, UrlPolicy};
    use toolshape::{Order, fields::KeyValue};
    let tokens = crate::walk::tokens;
    // 1. Each random or time-dependent part alone.
    let codec = codec();
    let query = QueryHash::of("search_tickets", &serde_json::json!({"q": "card"})).unwrap();
    let keyset = Keyset {
        rank: Some(KeyValue::Str("2026-02-14T16:02:07.113Z".into())),
        id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
        order: Order::Desc,
    };
    let signed: HashSet<usize> = (0..400u64)
        .map(|i| tokens(&codec.encode_at(&keyset, 20 + i % 7, &query, 1_700_000_000 + i * 7_919)))
        .collect();
    assert_eq!(signed.len(), 1, "a signed cursor's tokens vary: {signed:?}");
    let held = CursorCodec::new(CursorKeys::new(b"a paging key of sixteen bytes or more").unwrap())
        .held_in(MemoryCursorStore::new(
            1_000,
            std::time::Duration::from_secs(60),
        ));
    let held: HashSet<usize> = (0..400u64)
        .map(|i| {
            let k = Keyset {
                id: Some(format!("tkt_{i:08x}")),
                ..keyset.clone()
            };
            tokens(&held.encode_at(&k, i, &query, 1_700_000_000 + i))
        })
        .collect();
    assert_eq!(held.len(), 1, "a held cursor's tokens vary: {held:?}");
    let handles: HashSet<usize> = (0..1_000)
        .map(|_| tokens(&Handle::random().unwrap().to_string()))
        .collect();
    assert_eq!(handles.len(), 1, "a handle's tokens vary: {handles:?}");

    // 2. Whole answers: tickets with customers' subjects in random delimiters, stored behind a
    // handle, paged with signed cursors; ten runs at each budget show the same records.
    let tickets = crate::desk::parse_page(crate::desk::PAGE).unwrap();
    let directory = crate::desk::Directory::seed();
    let policy = HandlePolicy {
        store_when_over_budget_factor: 0.0,
        ..HandlePolicy::default()
    };
    let random_tags = UntrustedPolicy {
        provenance: Provenance::RandomTag,
        datamark: None,
        urls: UrlPolicy::Keep,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut pages = 0;
    for budget in (90..=420).step_by(3) {
        let shaper = Shaper::for_tool("search_tickets")
            .budget(Budget::tokens(budget))
            .untrusted(random_tags.clone());
        let run = || -> Vec<Vec<String>> {
            let store = MemoryStore::default();
            let mut cursor: Option<String> = None;
            let mut walk = Vec::new();
            for _ in 0..3 {
                let call = shaper
                    .call()
                    .paginate(codec.clone(), query, cursor.as_deref())
                    .unwrap();
                let shaped = rt
                    .block_on(call.shape_or_store(
                        (&tickets, &directory),
                        Keep::new(&store, "alice", &policy),
                    ))
                    .unwrap();
                walk.push(data_keys(&shaped.structured(), "id"));
                match shaped.next() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => break,
                }
            }
            walk
        };
        let first = run();
        pages += first.len();
        for _ in 0..9 {
            assert_eq!(run(), first, "at {budget} tokens");
        }
    }
    assert!(pages > 100, "{pages} pages");
}

/// A record type with many fields left out (an SDK type): the text channel names them on a
/// walk's first page only by default, on every page or never as the tool chooses; the JSON
/// envelope's `omitted.fields` names them on every page whatever the choice.
#[test]
fn the_fields_a_view_leaves_out_are_named_on_the_pages_the_tool_chooses() {
    use toolshape::envelope::LeftOut;
    // The skipped fields are there to be left out, never read.
    #[allow(dead_code)]
    #[derive(ToolResult)]
    #[shape(name = "repo", plural = "repos", prose = "{id}: {stars}")]
    struct Repo {
        #[shape(id)]
        id: String,
        #[shape(rank = desc)]
        stars: u32,
        #[shape(skip)]
        node_id: String,
        #[shape(skip)]
        html_url: String,
        #[shape(skip)]
        forks_url: String,
    }
    let rows: Vec<Repo> = (0..30)
        .map(|i| Repo {
            id: format!("r{i:02}"),
            stars: 100 - i,
            node_id: String::new(),
            html_url: String::new(),
            forks_url: String::new(),
        })
        .collect();
    let clause = "this view leaves out node_id, html_url, forks_url";
    for (left_out, first, later) in [
        (None, true, false),
        (Some(LeftOut::FirstPage), true, false),
        (Some(LeftOut::EveryPage), true, true),
        (Some(LeftOut::Never), false, false),
    ] {
        let mut shaper = Shaper::for_tool("list_repos").budget(Budget::tokens(120));
        if let Some(l) = left_out {
            shaper = shaper.left_out(l);
        }
        let query = QueryHash::of("list_repos", &serde_json::json!({})).unwrap();
        let mut cursor: Option<String> = None;
        for page in 0..3 {
            let shaped = shaper
                .call()
                .paginate(codec(), query, cursor.as_deref())
                .unwrap()
                .shape_blocking(&rows)
                .unwrap();
            let expected = if page == 0 { first } else { later };
            assert_eq!(
                shaped.text().contains(clause),
                expected,
                "{left_out:?} page {page}: {}",
                shaped.text()
            );
            assert_eq!(
                shaped.structured()["omitted"]["fields"],
                serde_json::json!(["node_id", "html_url", "forks_url"]),
                "{left_out:?} page {page}"
            );
            cursor = shaped.next().map(str::to_owned);
        }
    }
}

/// `left_out` and `fetch_one` from configuration: a record too large for any page names the
/// tool that shows it, and the view's left-out fields are named as configured.
#[test]
fn left_out_and_fetch_one_come_from_configuration() {
    let config = toolshape::config::ShapeConfig::from_toml_str(
        "[tools.list_projects]\nbudget = 90\nleft_out = \"never\"\nfetch_one = \"get_project\"\n",
    )
    .unwrap();
    let shaper = config.shaper("list_projects").unwrap();
    let rows = vec![
        Project {
            id: "p0".into(),
            body: "small".into(),
        },
        Project {
            id: "p1".into(),
            body: "word ".repeat(200),
        },
    ];
    let shaped = shaper
        .call()
        .paginate(
            codec(),
            QueryHash::of("list_projects", &serde_json::json!({})).unwrap(),
            None,
        )
        .unwrap()
        .shape_blocking(&rows)
        .unwrap();
    assert!(
        shaped
            .summary()
            .contains("project p1 (place 2) alone exceeds the budget and is skipped")
            && shaped
                .summary()
                .contains("; get_project shows it by its id"),
        "{}",
        shaped.summary()
    );
    let bad = toolshape::config::ShapeConfig::from_toml_str(
        "[tools.list_projects]\nfetch_one = \"get\\u202eproject\"\n",
    )
    .unwrap();
    let err = bad.shaper("list_projects").unwrap_err().to_string();
    assert!(err.contains("fetch_one"), "{err}");
}

/// A keyset walk that meets records without an id (issue 46, finding 12, second half): an
/// id through `?` may be missing, and two id-less records of equal rank cannot be told apart
/// by a keyset. The first page finds every id present (so the walk pages by key); then two
/// records without one, of the same score, arrive where a page boundary falls between them.
/// A cursor after the first of them used to resume at `(5, no id)`, which admits neither:
/// the second was never shown. Now a cursor after a record without an id pages by count, and
/// every record is shown once (read back from `data`, by label), whatever the page size.
#[test]
fn a_keyset_walk_never_loses_or_repeats_two_records_it_cannot_tell_apart() {
    #[derive(Debug, Clone, serde::Serialize, ToolResult)]
    #[shape(name = "job", plural = "jobs")]
    struct Job {
        #[shape(from = meta.id?, id, rename = "id")]
        meta: Meta,
        #[shape(rank = desc)]
        prio: i32,
        #[shape(show)]
        label: String,
    }
    #[derive(Debug, Clone, serde::Serialize)]
    struct Meta {
        id: Option<String>,
    }
    let job = |id: Option<&str>, prio: i32, label: &str| Job {
        meta: Meta {
            id: id.map(str::to_owned),
        },
        prio,
        label: label.to_owned(),
    };
    let query = QueryHash::of("jobs", &serde_json::json!({})).unwrap();
    let mut boundary_walks = 0;
    for page_size in 1..=4 {
        let mut rows: Vec<Job> = [9, 8, 7, 6, 5, 4, 3]
            .into_iter()
            .map(|p| job(Some(&format!("r{p}")), p, &format!("job {p}")))
            .collect();
        let mut cursor: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        for page in 0.. {
            assert!(page < 20, "the walk did not end");
            let shaped = Shaper::for_tool("jobs")
                .budget(Budget::tokens(5_000))
                .page_size(page_size)
                .call()
                .paginate(codec(), query, cursor.as_deref())
                .unwrap()
                .shape_blocking(&rows)
                .unwrap();
            let value = shaped.structured();
            let labels: Vec<String> = crate::records(&value)
                .iter()
                .map(|r| r["label"].as_str().unwrap().to_owned())
                .collect();
            // The case the test is for: a page ending on the first id-less record.
            if labels.last().is_some_and(|l| l == "unnamed a") && value["next"].is_string() {
                boundary_walks += 1;
            }
            seen.extend(labels);
            if page == 0 {
                // After the first page: two records without an id, of equal score, ranked
                // after `r5` (ids before none, in the descending order).
                rows.push(job(None, 5, "unnamed a"));
                rows.push(job(None, 5, "unnamed b"));
            }
            match value["next"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        let mut expected: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
        expected.sort();
        let mut got = seen.clone();
        got.sort();
        assert_eq!(got, expected, "page size {page_size}: {seen:?}");
    }
    // Walks met the two at a page boundary (page sizes 1, 2 and 3 do: the ranked order is
    // 9 8 7 6 5, a, b, 4 3), or the test would show nothing of them.
    assert_eq!(boundary_walks, 3, "walks cut between the two");
}
