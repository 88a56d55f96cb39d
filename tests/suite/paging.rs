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
use toolshape::{Budget, Call, Format, Shaped, Shaper, Status, StructuredForm, ToolResult};

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
    /// `shape_ordered` with a comparator of the caller's (by body, then nothing).
    Custom,
}

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"a paging key of sixteen bytes or more").unwrap(),
    ))
}

/// The facts a page states, read back from what the model reads.
struct PageFacts {
    keys: Vec<String>,
    status: Status,
    next: Option<String>,
}

/// The records' keys, read back from either form of the envelope.
pub(crate) fn data_keys(value: &serde_json::Value, key: &str) -> Vec<String> {
    crate::records(value)
        .iter()
        .map(|r| r[key].as_str().expect("key is text").to_owned())
        .collect()
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
        .map(|line| {
            let cut = if format == Format::Table { " | " } else { ": " };
            line.split(cut).next().unwrap_or_default().to_owned()
        })
        .collect()
}

/// Checks the summary's numbers against the truth: `before` records were shown by earlier
/// pages, this one shows `shown`, of `total`.
fn check_summary(summary: &str, plural: &str, before: usize, shown: usize, total: usize) {
    let first_word = summary.split([',', ';']).next().unwrap();
    let expected = if total == 0 {
        format!("no {plural} found")
    } else if before > 0 {
        if shown == 0 && before == total {
            format!("no more {plural} after the first {before}")
        } else if shown == 0 {
            // More remain, though this page shows none (it skipped one too large for any).
            format!("0 {plural} shown after the first {before} of {total}")
        } else {
            format!("{plural} {}–{} of {total}", before + 1, before + shown)
        }
    } else if shown == total {
        // "3 rankeds" or "1 ranked"
        String::new()
    } else {
        format!("{shown} of {total} {plural}")
    };
    if expected.is_empty() {
        let n: usize = first_word
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("summary starts with the count: {summary}"));
        assert_eq!(n, total, "summary: {summary}");
    } else {
        assert_eq!(first_word, expected, "summary: {summary}");
    }
}

fn read_page(shaped: &Shaped, format: Format, key: &str) -> PageFacts {
    let value: serde_json::Value = serde_json::from_str(shaped.structured_json()).unwrap();
    let keys = data_keys(&value, key);
    // Both channels name the same records, in the same order.
    assert_eq!(
        text_keys(shaped.text(), format, key),
        keys,
        "{}",
        shaped.text()
    );
    PageFacts {
        keys,
        status: shaped.status(),
        next: value["next"].as_str().map(str::to_owned),
    }
}

/// One walk through the pages.
struct Setup<'a> {
    mode: Mode,
    budget: usize,
    /// A line ceiling on top of the tokens (Codex cuts at 256 lines).
    lines: Option<usize>,
    page_size: Option<usize>,
    format: Format,
    form: StructuredForm,
    /// The output field that names a record.
    key: &'a str,
    plural: &'a str,
}

/// What a walk through the pages saw.
#[derive(Debug, PartialEq)]
struct Walked {
    /// The keys in the order shown.
    seen: Vec<String>,
    /// The keys skipped as too large for any page (each checked: a page of its own does not
    /// show it).
    skipped: Vec<String>,
    /// Every page was walked; `false` when a page's envelope alone exceeded the budget.
    complete: bool,
}

/// Walks every page and checks the invariants.
fn walk<T, S>(rows: &[T], setup: Setup<'_>, shape: S) -> Walked
where
    T: ToolResult,
    S: Fn(&Call<'_>, &[T]) -> Shaped,
{
    let Setup {
        mode,
        budget,
        lines,
        page_size,
        format,
        form,
        key,
        plural,
    } = setup;
    let codec = codec();
    let query = QueryHash::of(
        "paging",
        &serde_json::json!({ "mode": format!("{mode:?}") }),
    )
    .unwrap();
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    // One page from `cursor`, at `budget` (and the line ceiling) or, with `None`, at a budget
    // nothing exceeds; `page_size` overrides the setup's.
    let page_at = |cursor: Option<&str>, budget: Option<usize>, page_size: Option<usize>| {
        let ceiling = match (budget, lines) {
            (None, _) => Budget::tokens(1_000_000),
            (Some(b), Some(l)) => Budget::tokens(b).lines(l),
            (Some(b), None) => Budget::tokens(b),
        };
        let mut shaper = Shaper::for_tool("paging")
            .budget(ceiling)
            .format(format)
            .structured_form(form);
        if let Some(p) = page_size {
            shaper = shaper.page_size(p);
        }
        let mut call = shaper.call();
        if matches!(mode, Mode::RankedKeepOrder | Mode::UnrankedKeepOrder) {
            call = call.keep_order();
        }
        let shaper = call.paginate(Arc::clone(&codec), query, cursor).unwrap();
        shape(&shaper, rows)
    };
    for page in 0..=rows.len() + 1 {
        assert!(page <= rows.len(), "more pages than records: {seen:?}");
        let shaped = page_at(cursor.as_deref(), Some(budget), page_size);
        let facts = read_page(&shaped, format, key);
        if shaped.report().over_budget {
            // This page's envelope alone is over the budget (its counts and cursor cost more
            // than the budget leaves): it shows nothing and says so, and the walk ends here.
            assert!(facts.keys.is_empty(), "{}", shaped.text());
            return Walked {
                seen,
                skipped,
                complete: false,
            };
        }
        // A record skipped as too large: read which one from a page with room for it, and
        // check no page of its own (one that starts with it, at this budget) shows it.
        let skips = shaped
            .summary()
            .contains(" alone exceeds the budget and is skipped");
        if skips {
            let start = if facts.keys.is_empty() {
                cursor.clone()
            } else {
                let cut = page_at(cursor.as_deref(), Some(1_000_000), Some(facts.keys.len()));
                assert_eq!(read_page(&cut, format, key).keys, facts.keys);
                cut.next().map(str::to_owned)
            };
            let roomy = page_at(start.as_deref(), None, Some(1));
            let skip = read_page(&roomy, format, key).keys[0].clone();
            // No page that starts with it shows it: neither the page as the walk's settings
            // make it, nor the page of it alone (a page size of one: more remain, so a
            // cursor), nor — read from a page with room for everything, counted here — the
            // last page, it and every record after it with no cursor.
            let within = |page: &Shaped| {
                let held = [page.text(), page.structured_json()];
                held.iter().all(|t| {
                    Tiktoken::o200k_base().count(t) <= budget
                        && lines.is_none_or(|max| t.split('\n').count() <= max)
                })
            };
            for own in [
                page_at(start.as_deref(), Some(budget), page_size),
                page_at(start.as_deref(), Some(budget), Some(1)),
            ] {
                assert_ne!(
                    read_page(&own, format, key).keys.first(),
                    Some(&skip),
                    "{skip} skipped as too large at {budget} tokens, {lines:?} lines, yet a \
                     page of its own shows it:\n{}\n--- its own page:\n{}",
                    shaped.text(),
                    own.text(),
                );
            }
            let rest = page_at(start.as_deref(), None, None);
            if rest.next().is_none() && page_size.is_none_or(|p| rest.report().records.shown <= p) {
                assert!(
                    !within(&rest),
                    "{skip} skipped as too large at {budget} tokens, {lines:?} lines, yet the \
                     last page, it and everything after it, fits:\n{}",
                    rest.text()
                );
            }
            skipped.push(skip);
        }
        assert!(
            shaped.report().tokens.text <= budget && shaped.report().tokens.structured <= budget,
            "over budget: {:?}",
            shaped.report().tokens
        );
        if let Some(max) = lines {
            for channel in [shaped.text(), shaped.structured_json()] {
                let count = channel.split('\n').count();
                assert!(count <= max, "{count} lines > {max}:\n{channel}");
            }
        }
        let before = seen.len() + skipped.len() - usize::from(skips);
        check_summary(
            shaped.summary(),
            plural,
            before,
            facts.keys.len(),
            rows.len(),
        );
        seen.extend(facts.keys.iter().cloned());
        let done = seen.len() + skipped.len() == rows.len();
        // A page that skipped a record left it out: partial, even as the last page.
        let expected_status = match (rows.is_empty(), done && !skips) {
            (true, _) => Status::Empty,
            (false, true) => Status::Ok,
            (false, false) => Status::Partial,
        };
        assert_eq!(facts.status, expected_status, "{}", shaped.summary());
        // A page that leaves records out says how to go on, and one that does not, does not.
        assert_eq!(
            facts.next.is_some(),
            !done && !rows.is_empty(),
            "{}",
            shaped.summary()
        );
        if !done && !rows.is_empty() {
            assert!(
                !facts.keys.is_empty() || skips,
                "a page made no progress: {}",
                shaped.text()
            );
        }
        match facts.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let unique: HashSet<&String> = seen.iter().chain(&skipped).collect();
    assert_eq!(
        unique.len(),
        seen.len() + skipped.len(),
        "a record shown twice, or shown and skipped: {seen:?} {skipped:?}"
    );
    assert_eq!(
        seen.len() + skipped.len(),
        rows.len(),
        "records never shown"
    );
    Walked {
        seen,
        skipped,
        complete: true,
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

/// The smallest budget at which every record fits a page on its own, found by shaping each
/// one alone: budgets from there up reach one record a page.
fn one_record_floor<T>(rows: &[T], format: Format, form: StructuredForm) -> usize
where
    T: ToolResult,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let mut floor = 0;
    for row in rows {
        let fits = |b: usize| {
            Shaper::for_tool("paging")
                .budget(Budget::tokens(b))
                .format(format)
                .structured_form(form)
                .shape_blocking(std::slice::from_ref(row))
                .map(|s| s.report().records.shown == 1)
                .unwrap_or(false)
        };
        floor = floor.max(crate::smallest_budget(fits));
    }
    // From here up a record may still be too large for a page with a cursor and the "records
    // remain" wording (which cost more than a lone record's envelope): such a record is
    // skipped, and `walk` checks that no page of its own would show it. Some 20 tokens up,
    // that envelope itself fits (below, a walk ends at its first page over the budget).
    floor + 20
}

fn run(
    rows: &[(String, i32, String)],
    mode: Mode,
    extra: usize,
    lines: Option<usize>,
    page_size: Option<usize>,
    format: Format,
    form: StructuredForm,
) {
    // Walks `typed` at a budget from the one-record floor up.
    fn go<T, S>(typed: Vec<T>, setup: Setup<'_>, extra: usize, shape: S) -> Walked
    where
        T: ToolResult,
        (): toolshape::resolve::Supplies<T::Needs>,
        S: Fn(&Call<'_>, &[T]) -> Shaped,
    {
        let budget = one_record_floor(&typed, setup.format, setup.form) + extra;
        let walked = walk(&typed, Setup { budget, ..setup }, shape);
        // A page whose envelope alone is over the budget is allowed only just above the
        // floor, where the counts and cursor of a later page may cost more than it leaves.
        assert!(
            walked.complete || extra < 40,
            "a walk ended over budget at floor + {extra}"
        );
        walked
    }
    let setup = |key, plural| Setup {
        mode,
        budget: 0,
        lines,
        page_size,
        format,
        form,
        key,
        plural,
    };
    let projects = || -> Vec<Project> {
        rows.iter()
            .map(|(id, _, body)| Project {
                id: id.clone(),
                body: body.clone(),
            })
            .collect()
    };
    let expected = reference_order(rows, mode);
    let walked = match mode {
        Mode::Ranked | Mode::RankedKeepOrder => {
            let typed: Vec<Ranked> = rows
                .iter()
                .map(|(id, score, body)| Ranked {
                    id: id.clone(),
                    score: *score,
                    body: body.clone(),
                })
                .collect();
            go(typed, setup("id", "rankeds"), extra, |s, r| {
                s.shape_blocking(r).unwrap()
            })
        }
        Mode::Unranked | Mode::UnrankedKeepOrder => {
            go(projects(), setup("id", "projects"), extra, |s, r| {
                s.shape_blocking(r).unwrap()
            })
        }
        Mode::NoId => {
            let typed: Vec<Entry> = rows
                .iter()
                .map(|(id, score, body)| Entry {
                    key: id.clone(),
                    score: *score,
                    body: body.clone(),
                })
                .collect();
            go(typed, setup("key", "entries"), extra, |s, r| {
                s.shape_blocking(r).unwrap()
            })
        }
        Mode::Custom => go(projects(), setup("id", "projects"), extra, |s, r| {
            let by_body = |a: &Project, b: &Project| -> Ordering { a.body.cmp(&b.body) };
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(s.shape_ordered(r, &(), by_body))
                .unwrap()
        }),
    };
    // The records shown are the reference order without those skipped as too large (as far
    // as the walk got, when a page's envelope alone was over the budget).
    let mut expected: Vec<String> = expected
        .into_iter()
        .filter(|k| !walked.skipped.contains(k))
        .collect();
    if !walked.complete {
        expected.truncate(walked.seen.len());
    }
    assert_eq!(walked.seen, expected, "pages are not in the {mode:?} order");
}

proptest! {
    #![proptest_config(crate::proptest_config(160))]

    #[test]
    fn every_record_once_and_every_count_true(
        rows in rows_strategy(),
        mode in mode_strategy(),
        extra in prop_oneof![Just(0usize), 0usize..40, 0usize..600],
        lines in proptest::option::weighted(0.3, 5usize..12),
        page_size in proptest::option::weighted(0.3, 1usize..6),
        format in prop_oneof![Just(Format::Json), Just(Format::Prose), Just(Format::Table)],
        form in crate::budget::forms(),
    ) {
        run(&rows, mode, extra, lines, page_size, format, form);
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
        for (extra, format) in [(0, Format::Prose), (900, Format::Json)] {
            run(
                &rows,
                mode,
                extra,
                None,
                None,
                format,
                StructuredForm::Objects,
            );
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
            let seen = walk(
                &typed,
                Setup {
                    mode,
                    budget,
                    lines,
                    page_size: None,
                    format: Format::Prose,
                    form,
                    key: "id",
                    plural: "projects",
                },
                |s, r| s.shape_blocking(r).unwrap(),
            );
            assert_eq!(
                seen,
                Walked {
                    seen: reference_order(&rows, mode),
                    skipped: Vec::new(),
                    complete: true
                }
            );
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

/// A record is skipped as too large only by a page that starts with it: a page that shows
/// records before it is full, and the next page starts with it. Walked at every budget from
/// where the large record fits alone up, where admission's room for the widest envelope is
/// larger than the real one (a record refused beside the widest envelope may still fit).
/// (Whether a page of its own could show it is the paging property's check, `walk`.)
#[test]
fn a_record_is_skipped_as_too_large_only_when_no_page_of_its_own_shows_it() {
    let codec = codec();
    let query = QueryHash::of("paging", &serde_json::json!({ "mode": "too_large" })).unwrap();
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
            let alone = crate::smallest_budget(|b| {
                Shaper::for_tool("paging")
                    .budget(Budget::tokens(b))
                    .format(format)
                    .shape_blocking(&typed[2..3])
                    .map(|s| s.report().records.shown == 1)
                    .unwrap_or(false)
            });
            for budget in alone..alone + 80 {
                let page = |cursor: Option<&str>, page_size: Option<usize>| {
                    let mut call = Shaper::for_tool("paging")
                        .budget(Budget::tokens(budget))
                        .format(format)
                        .call();
                    if let Some(p) = page_size {
                        call = call.page_size(p);
                    }
                    let call = call.paginate(Arc::clone(&codec), query, cursor).unwrap();
                    let shaped = call.shape_blocking(&typed).unwrap();
                    let keys = crate::records(&shaped.structured())
                        .iter()
                        .map(|r| r["id"].as_str().unwrap().to_owned())
                        .collect::<Vec<_>>();
                    (shaped, keys)
                };
                let (mut cursor, mut before) = (None::<String>, 0usize);
                for _ in 0..=typed.len() {
                    let (shaped, keys) = page(cursor.as_deref(), None);
                    if shaped.frame().omitted.too_large > 0 {
                        skips += 1;
                        let skipped = &typed[before + keys.len()].id;
                        // Only a page that starts with the record judges it too large: one
                        // that shows records before it is full, and the next page starts
                        // with it.
                        assert!(
                            keys.is_empty(),
                            "{format:?} at {budget}: {skipped} skipped by a page showing {keys:?}\n{}",
                            shaped.text()
                        );
                    }
                    before += keys.len() + shaped.frame().omitted.too_large as usize;
                    match shaped.next() {
                        Some(next) => cursor = Some(next.to_owned()),
                        None => break,
                    }
                }
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
            (Some(1), Some(toolshape::OmitReason::RecordTooLarge), 1),
            "{format:?}"
        );
        assert!(
            last.summary().ends_with(
                "the next project alone exceeds the budget: raise the budget or narrow the query"
            ),
            "{format:?}: {}",
            last.summary()
        );
        assert!(
            last.text().contains("alone exceeds the budget"),
            "{format:?}: {}",
            last.text()
        );
        // The report's tokens of a page showing nothing are those of its text, recounted.
        let o200k = Tiktoken::o200k_base();
        assert_eq!(
            (last.report().tokens.text, last.report().tokens.structured),
            (
                o200k.count(last.text()),
                o200k.count(last.structured_json())
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
