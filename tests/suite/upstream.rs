//! Paging over an upstream that pages itself: a fake GitHub-like REST API serving pages of
//! JSON with a `Link: <…>; rel="next"` header and no total, walked end to end through `next`
//! at several budgets. Every record is shown once, in the upstream's order; no summary states
//! a total that is false (none is stated before the upstream's last page), an unknown total
//! reads "more available", and `next` is null only at the end.
//!
//! The oracle reads only what a model reads: the numbers in `data` and in the text channel's
//! lines, and the summary's words, compared with the data set the test made.

use proptest::prelude::*;
use serde::Deserialize;
use std::sync::{Arc, OnceLock};
use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash, UpstreamPosition};
use toolshape::{
    Budget, ChannelPolicy, Format, ShapeError, Shaped, Shaper, ToolResult, envelope::Status,
};

const API: &str = "https://api.github.test/repos/octo/hello/issues?state=open";

/// An issue as the tool deserialises it from the upstream's JSON.
#[derive(Debug, Clone, Deserialize, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "#{number} {title}: {state}, {comments} comments"
)]
struct Issue {
    #[shape(show)]
    number: u64,
    #[shape(show)]
    title: String,
    #[shape(show)]
    state: String,
    #[shape(show)]
    comments: u32,
}

/// The upstream's data set: 137 issues, newest first, as GitHub lists them.
fn data_set() -> &'static [serde_json::Value] {
    static DATA: OnceLock<Vec<serde_json::Value>> = OnceLock::new();
    DATA.get_or_init(|| {
        (0..137u64)
            .map(|i| {
                serde_json::json!({
                    "number": 4_210 - i * 3,
                    "title": format!("Crash when {} a {} file", ["opening", "saving", "renaming"][(i % 3) as usize], ["large", "empty", "shared", "remote"][(i % 4) as usize]),
                    "state": if i % 5 == 0 { "closed" } else { "open" },
                    "comments": i % 7,
                    "user": {"login": format!("user{}", i % 11), "id": 1000 + i},
                    "labels": [{"name": "bug"}],
                })
            })
            .collect()
    })
}

/// A fake REST upstream over the first `len` issues: pages of `per_page` by `page=N`, a
/// `Link` header naming the next page, and no total anywhere. An offset-style upstream
/// (`trailing_empty`) also links a next page after a full last page, which is empty.
#[derive(Debug, Clone, Copy)]
struct Upstream {
    len: usize,
    per_page: usize,
    trailing_empty: bool,
    /// The length of a continuation in bytes when it is a page token (`tttt12`) rather than
    /// the API's URL (0).
    token: usize,
}

/// One HTTP response: the JSON body and the `Link` header, if any.
struct Response {
    body: String,
    link: Option<String>,
}

impl Upstream {
    fn url(&self, page: usize) -> String {
        if self.token > 0 {
            let n = page.to_string();
            return format!("{}{n}", "t".repeat(self.token.saturating_sub(n.len())));
        }
        format!("{API}&per_page={}&page={page}", self.per_page)
    }

    /// `GET url` (the first page when `None`).
    fn get(&self, url: Option<&str>) -> Response {
        let page: usize = url
            .map(|u| {
                if self.token > 0 {
                    assert_eq!(
                        u.len(),
                        self.token.max(2),
                        "a token this upstream never issued: {u}"
                    );
                    return u.trim_start_matches('t').parse().expect("page number");
                }
                assert!(u.starts_with(API), "a URL this upstream never issued: {u}");
                let n = u.rsplit("page=").next().unwrap_or_default();
                n.parse().expect("page number")
            })
            .unwrap_or(1);
        let start = (page - 1) * self.per_page;
        let items: Vec<&serde_json::Value> = data_set()[..self.len]
            .iter()
            .skip(start)
            .take(self.per_page)
            .collect();
        let end = start + items.len();
        let more = end < self.len || (self.trailing_empty && items.len() == self.per_page);
        let link = more.then(|| {
            format!(
                "<{}>; rel=\"next\", <{}>; rel=\"first\"",
                self.url(page + 1),
                self.url(1)
            )
        });
        Response {
            body: serde_json::to_string(&items).expect("JSON"),
            link,
        }
    }
}

/// The URL of `rel="next"` in a `Link` header.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.trim().split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_owned()
            })
    })
}

fn fetch(upstream: &Upstream, url: Option<&str>) -> (Vec<Issue>, Option<String>) {
    let response = upstream.get(url);
    let rows = serde_json::from_str(&response.body).expect("issues");
    (rows, response.link.as_deref().and_then(next_link))
}

fn codec() -> Arc<CursorCodec> {
    Arc::new(CursorCodec::new(
        CursorKeys::new(b"an upstream paging key, sixteen bytes or more").unwrap(),
    ))
}

fn query() -> QueryHash {
    QueryHash::of("list_issues", &serde_json::json!({"repo": "octo/hello"})).unwrap()
}

/// The tool, as its author writes it: decode the cursor, fetch the upstream page it names
/// (and, with `span`, the page after it, so one answer can cross the boundary), shape,
/// answer.
fn list_issues(
    shaper: &Shaper,
    upstream: &Upstream,
    cursor: Option<&str>,
    span: bool,
) -> Result<Shaped, ShapeError> {
    let call = match shaper.call().paginate(codec(), query(), cursor) {
        Ok(call) => call,
        Err(e) => return Ok(shaper.cursor_error(&e)),
    };
    let at = call.upstream_position();
    let (mut rows, next) = fetch(upstream, at.page.as_deref());
    let call = match next {
        Some(second) if span => {
            let first_len = rows.len();
            let (more, after) = fetch(upstream, Some(&second));
            let pages = [
                (at.page.as_deref(), first_len),
                (Some(second.as_str()), more.len()),
            ];
            rows.extend(more);
            call.upstream_pages(pages, after)
        }
        next => call.upstream(at.page.as_deref(), next),
    };
    call.shape_blocking(&rows)
}

/// The issue numbers a page shows, from both channels (which must agree).
fn shown_numbers(shaped: &Shaped, format: Format) -> Vec<u64> {
    let value: serde_json::Value = serde_json::from_str(shaped.structured_json()).unwrap();
    let from_data = |v: &serde_json::Value| -> Vec<u64> {
        v["data"]
            .as_array()
            .expect("data is an array")
            .iter()
            .map(|r| r["number"].as_u64().expect("number"))
            .collect()
    };
    let numbers = from_data(&value);
    let text = shaped.text();
    let from_text = match format {
        Format::Json => from_data(&serde_json::from_str(text).expect("JSON text")),
        Format::Prose | Format::Table => {
            let head = if format == Format::Table { 2 } else { 1 };
            crate::record_lines(text, head)
                .iter()
                .map(|line| {
                    let cell = match format {
                        Format::Table => line.split(" | ").next(),
                        _ => line.strip_prefix('#').and_then(|l| l.split(' ').next()),
                    };
                    cell.and_then(|c| c.parse().ok())
                        .unwrap_or_else(|| panic!("no number in {line:?}"))
                })
                .collect()
        }
    };
    assert_eq!(from_text, numbers, "{text}");
    numbers
}

/// What a summary states, read as a model reads it.
#[derive(Debug, PartialEq)]
struct Stated {
    /// The first and last record's place in the whole list (1-based), if any are shown.
    range: Option<(u64, u64)>,
    /// The total, when one is stated.
    total: Option<u64>,
    /// "more available": the total is unknown and more records come.
    more: bool,
}

fn number(s: &str) -> u64 {
    s.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

fn read_summary(summary: &str) -> Stated {
    let first = summary.split([';', ',']).next().unwrap();
    let more = summary.contains("; more available");
    let words: Vec<&str> = first.split(' ').collect();
    let stated = match words.as_slice() {
        ["no", "issues", "found"] => Stated {
            range: None,
            total: Some(0),
            more,
        },
        ["no", "more", "issues", "after", "the", "first", n] => Stated {
            range: None,
            total: Some(number(n)),
            more,
        },
        ["0", "issues", "shown", "after", "the", "first", _] => Stated {
            range: None,
            total: None,
            more,
        },
        [n, "issue" | "issues", "shown"] => Stated {
            range: Some((1, number(n))).filter(|_| number(n) > 0),
            total: None,
            more,
        },
        ["issues", range, "shown"] | ["issues", range, "of", _] => {
            let (a, b) = range.split_once('–').expect("a range");
            Stated {
                range: Some((number(a), number(b))),
                total: words.get(3).map(|t| number(t)),
                more,
            }
        }
        [n, "of", t, "issues"] => Stated {
            range: Some((1, number(n))).filter(|_| number(n) > 0),
            total: Some(number(t)),
            more,
        },
        [t, "issue" | "issues"] => Stated {
            range: Some((1, number(t))),
            total: Some(number(t)),
            more,
        },
        _ => panic!("a summary the oracle cannot read: {summary}"),
    };
    // An unknown total is said in words, and only then.
    assert_eq!(stated.total.is_none(), stated.more, "{summary}");
    stated
}

/// Walks `upstream` through `next` and checks every page; returns the pages' summaries.
fn walk(upstream: Upstream, budget: usize, format: Format, span: bool) -> Vec<String> {
    let truth: Vec<u64> = data_set()[..upstream.len]
        .iter()
        .map(|v| v["number"].as_u64().unwrap())
        .collect();
    let total = truth.len() as u64;
    let shaper = Shaper::for_tool("list_issues")
        .budget(Budget::tokens(budget))
        .format(format);
    let mut cursor: Option<String> = None;
    let mut seen: Vec<u64> = Vec::new();
    let mut summaries = Vec::new();
    loop {
        assert!(
            summaries.len() <= truth.len() + 1,
            "more pages than records: {summaries:?}"
        );
        let shaped = list_issues(&shaper, &upstream, cursor.as_deref(), span).unwrap();
        assert!(!shaped.is_error(), "{}", shaped.summary());
        let report = shaped.report();
        assert!(
            report.tokens.text <= budget && report.tokens.structured.is_some_and(|s| s <= budget),
            "over budget at {budget}: {:?}",
            report.tokens
        );
        let numbers = shown_numbers(&shaped, format);
        let before = seen.len() as u64;
        // In the upstream's order, each once, none skipped.
        assert_eq!(
            numbers.as_slice(),
            &truth[seen.len()..seen.len() + numbers.len()],
            "page {}: {}",
            summaries.len(),
            shaped.summary()
        );
        seen.extend(&numbers);
        let after = seen.len() as u64;

        let stated = read_summary(shaped.summary());
        if let Some(t) = stated.total {
            assert_eq!(t, total, "a false total: {}", shaped.summary());
        }
        let shown = numbers.len() as u64;
        let range = (shown > 0).then(|| (before + 1, before + shown));
        assert_eq!(stated.range, range, "a false range: {}", shaped.summary());
        let value: serde_json::Value = serde_json::from_str(shaped.structured_json()).unwrap();
        match stated.total {
            Some(t) => assert_eq!(crate::omitted_of(&value)["count"].as_u64(), Some(t - after)),
            None => assert!(crate::omitted_of(&value)["count"].is_null()),
        }

        let next = value["next"].as_str().map(str::to_owned);
        assert_eq!(next.as_deref(), shaped.next());
        summaries.push(shaped.summary().to_owned());
        if stated.more {
            // "More available" is the upstream's word: true but for an offset upstream's
            // empty last page, which the next answer then says plainly.
            assert!(
                after < total || upstream.trailing_empty,
                "{}",
                shaped.summary()
            );
            assert_eq!(shaped.status(), Status::Partial);
        } else {
            let done = after == total;
            let status = match (total, done) {
                (0, _) => Status::Empty,
                (_, true) => Status::Ok,
                (_, false) => Status::Partial,
            };
            assert_eq!(shaped.status(), status, "{}", shaped.summary());
            assert_eq!(next.is_none(), done, "{}", shaped.summary());
        }
        if next.is_some() && after < total {
            assert!(shown > 0, "a page made no progress: {}", shaped.text());
        }
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, truth, "records never shown");
    summaries
}

/// The smallest budget at which any one issue, with the longest summary and cursor a page
/// can carry, is shown alone (plus the cursor's spread): from there up, every page shows a
/// record, and at the floor one or two.
fn one_record_floor(format: Format) -> usize {
    static FLOORS: OnceLock<[usize; 3]> = OnceLock::new();
    let floors = FLOORS.get_or_init(|| {
        [Format::Json, Format::Prose, Format::Table].map(|format| {
            let upstream = Upstream {
                len: data_set().len(),
                per_page: 100,
                trailing_empty: false,
                token: 0,
            };
            let long = upstream.url(99_999);
            let rows: Vec<Issue> = serde_json::from_str(&upstream.get(None).body).unwrap();
            let cursor = codec().encode_upstream(
                &UpstreamPosition {
                    page: Some(long.clone()),
                    skip: 99,
                },
                99_999,
                &query(),
            );
            let mut floor = 0;
            for row in &rows {
                // The 100th record of a long page, after 99,999 shown, more to come.
                let mut page = vec![rows[0].clone(); 99];
                page.extend([row.clone(), row.clone()]);
                let fits = |b: usize| {
                    Shaper::for_tool("list_issues")
                        .budget(Budget::tokens(b))
                        .format(format)
                        .call()
                        .paginate(codec(), query(), Some(&cursor))
                        .unwrap()
                        .upstream_pages(
                            [(Some(long.as_str()), 100), (Some(long.as_str()), 1)],
                            Some(long.clone()),
                        )
                        .shape_blocking(&page)
                        .map(|s| s.report().records.shown >= 1)
                        .unwrap_or(false)
                };
                floor = floor.max(crate::smallest_budget(fits));
            }
            // A cursor's signature and issue time are random-looking base64: the same
            // position tokenizes up to 13 tokens apart (measured over 400 cursors), so the
            // floor keeps that much room; pages there still show one or two issues.
            floor + 16
        })
    });
    match format {
        Format::Json => floors[0],
        Format::Prose => floors[1],
        Format::Table => floors[2],
    }
}

/// The issue's case: 137 issues in pages of 30 with `Link` headers and no total, walked at
/// budgets from one record a page to the whole list, one upstream page per call and two.
#[test]
fn one_hundred_thirty_seven_issues_through_link_headers() {
    let upstream = Upstream {
        len: 137,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    for format in [Format::Prose, Format::Json, Format::Table] {
        let floor = one_record_floor(format);
        for budget in [floor, floor + 30, 500, 1_200, 8_000] {
            for span in [false, true] {
                let summaries = walk(upstream, budget, format, span);
                if budget == floor {
                    // A few issues an answer: the floor is one issue and a widest envelope,
                    // and the real envelope often leaves room for one or two more.
                    assert!(summaries.len() >= 137 / 3, "{}", summaries.len());
                }
                // Before the upstream's last page the total is unknown, and said so.
                assert!(
                    summaries[0].contains("shown; more available"),
                    "{summaries:?}"
                );
                let last = summaries.last().unwrap();
                assert!(
                    last.contains("of 137") || last == "137 issues",
                    "{budget} {format:?} {span}: {last}"
                );
                // With two upstream pages a call, answers of several records cross from one
                // upstream page into the next; with one, they stop at its end.
                let crosses = summaries.iter().any(|summary| {
                    read_summary(summary)
                        .range
                        .is_some_and(|(a, b)| (a - 1) / 30 != (b - 1) / 30)
                });
                if budget >= 500 {
                    assert_eq!(crosses, span, "{budget} {format:?}: {summaries:?}");
                }
            }
        }
    }
}

#[test]
fn the_first_page_reads_as_the_issue_asks() {
    let upstream = Upstream {
        len: 137,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(8_000));
    let first = list_issues(&shaper, &upstream, None, false).unwrap();
    assert_eq!(
        first.summary(),
        "30 issues shown; more available; pass next as cursor for more"
    );
    assert!(
        first
            .text()
            .contains("omitted: more issues, how many the source does not say (page_size).")
    );
    // The text's first line leaves how to go on to its last.
    assert!(
        first
            .text()
            .starts_with("partial: 30 issues shown; more available")
    );
    assert!(!first.text().lines().next().unwrap().contains("call again"));
    assert!(first.text().ends_with(&format!(
        "\nnext: same call with cursor={}",
        first.next().unwrap()
    )));
    let second = list_issues(&shaper, &upstream, first.next(), false).unwrap();
    assert_eq!(
        second.summary(),
        "issues 31–60 shown; more available; pass next as cursor for more"
    );
}

#[test]
fn a_cursor_for_another_page_or_mode_is_refused_with_a_remedy() {
    let upstream = Upstream {
        len: 137,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    let shaper = Shaper::for_tool("list_issues").budget(Budget::tokens(300));
    let first = list_issues(&shaper, &upstream, None, false).unwrap();
    let cursor = first.next().unwrap();
    let call = shaper
        .call()
        .paginate(codec(), query(), Some(cursor))
        .unwrap();
    // The tool fetched a page other than the one the cursor names.
    let (rows, next) = fetch(&upstream, Some(&upstream.url(2)));
    let err = call
        .clone()
        .upstream(Some(&upstream.url(2)), next)
        .shape_blocking(&rows)
        .unwrap_err();
    assert!(err.to_string().contains("upstream_position"), "{err}");
    // Rows not declared as an upstream page, under an upstream cursor.
    let err = call.clone().shape_blocking(&rows).unwrap_err();
    assert!(err.to_string().contains("Call::upstream`"), "{err}");
    // A declared page count that does not match the rows.
    let err = call
        .upstream_pages([(None, 3)], None)
        .shape_blocking(&rows)
        .unwrap_err();
    assert!(err.to_string().contains("declare each page"), "{err}");
    // A continuation too long for a cursor.
    let long = "x".repeat(toolshape::__seams::cursor::MAX_UPSTREAM_BYTES + 1);
    let err = shaper
        .call()
        .upstream(None, Some(long))
        .shape_blocking(&rows)
        .unwrap_err();
    assert!(err.to_string().contains("rather than a whole URL"), "{err}");
    // An altered cursor gets the usual error envelope.
    let mut bad = cursor.to_owned();
    bad.replace_range(10..11, if &bad[10..11] == "A" { "B" } else { "A" });
    let refused = list_issues(&shaper, &upstream, Some(&bad), false).unwrap();
    assert!(refused.is_error());
    assert!(refused.summary().contains("without a cursor"));
}

/// An upstream page with no rows and a next link (a filter that left nothing of it): the
/// answer shows none, says more are available and gives a cursor to the upstream's next
/// page, which the next call fetches and shows.
#[test]
fn an_empty_upstream_page_with_a_next_link_goes_on() {
    let upstream = Upstream {
        len: 60,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    let second = upstream.url(2);
    for format in [Format::Json, Format::Prose] {
        let shaper = Shaper::for_tool("list_issues")
            .budget(Budget::tokens(2_000))
            .format(format);
        let empty: Vec<Issue> = Vec::new();
        let shaped = shaper
            .call()
            .paginate(codec(), query(), None)
            .unwrap()
            .upstream(None, Some(second.clone()))
            .shape_blocking(&empty)
            .unwrap();
        assert_eq!(shaped.status(), Status::Partial, "{format:?}");
        assert!(shown_numbers(&shaped, format).is_empty());
        assert!(
            shaped.summary().contains("more available"),
            "{format:?}: {}",
            shaped.summary()
        );
        let call = shaper
            .call()
            .paginate(
                codec(),
                query(),
                Some(shaped.next().expect("a cursor to go on")),
            )
            .unwrap();
        let at = call.upstream_position();
        assert_eq!((at.page.as_deref(), at.skip), (Some(second.as_str()), 0));
        let (rows, next) = fetch(&upstream, at.page.as_deref());
        let page = call
            .upstream(at.page.as_deref(), next)
            .shape_blocking(&rows)
            .unwrap();
        let numbers = shown_numbers(&page, format);
        assert_eq!(numbers.first(), Some(&rows[0].number), "{format:?}");
    }
}

/// Room for the cursor is kept before records are counted, at its longest: when the page
/// ends inside an upstream page whose continuation is long (the most a cursor carries), the
/// records after the first one left out are never counted, and the cursor names that page.
#[test]
fn a_long_continuation_is_reserved_before_records_are_counted() {
    let upstream = Upstream {
        len: 60,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    let (mut rows, _) = fetch(&upstream, None);
    let first = rows.len();
    let (more, _) = fetch(&upstream, Some(&upstream.url(2)));
    let second = more.len();
    rows.extend(more);
    let long = "p".repeat(toolshape::__seams::cursor::MAX_UPSTREAM_BYTES);
    for format in [Format::Json, Format::Prose] {
        // The smallest of these budgets whose page ends inside the second upstream page.
        let (shaper, shaped, shown) = (10..40)
            .map(|hundreds| {
                let shaper = Shaper::for_tool("list_issues")
                    .budget(Budget::tokens(hundreds * 100))
                    .format(format);
                let shaped = shaper
                    .call()
                    .paginate(codec(), query(), None)
                    .unwrap()
                    .upstream_pages([(None, first), (Some(long.as_str()), second)], None)
                    .shape_blocking(&rows)
                    .unwrap();
                let shown = shown_numbers(&shaped, format).len();
                (shaper, shaped, shown)
            })
            .find(|(_, _, shown)| *shown > first)
            .expect("a budget whose page ends inside the second upstream page");
        assert!(shown < first + second, "{format:?}: {shown}");
        let report = shaped.report();
        assert!(
            report.tokens.text <= report.budget
                && report.tokens.structured.is_some_and(|s| s <= report.budget)
        );
        assert_eq!(
            report.tokenized,
            shown + 1,
            "{format:?}: records counted past the first one left out"
        );
        let next = shaper
            .call()
            .paginate(codec(), query(), shaped.next())
            .unwrap();
        assert_eq!(
            next.upstream_position().page.as_deref(),
            Some(long.as_str())
        );
        assert_eq!(next.upstream_position().skip, (shown - first) as u64);
    }
}

proptest! {
    #![proptest_config(crate::proptest_config(48))]

    #[test]
    fn every_record_once_and_no_false_total(
        len in prop_oneof![Just(0usize), Just(1usize), 0usize..=137],
        per_page in prop_oneof![Just(1usize), 1usize..=40],
        trailing_empty in any::<bool>(),
        span in any::<bool>(),
        extra in prop_oneof![Just(0usize), 0usize..60, 0usize..1_500],
        format in prop_oneof![Just(Format::Json), Just(Format::Prose), Just(Format::Table)],
    ) {
        let upstream = Upstream { len, per_page, trailing_empty, token: 0 };
        walk(upstream, one_record_floor(format) + extra, format, span);
    }
}

/// How a walk of the fake upstream is shaped: one upstream page a call or two (`span`), the
/// upstream's total declared or not, cursors signed or held in a store, a format, a profile.
#[derive(Debug, Clone, Copy)]
struct Way {
    span: bool,
    total: bool,
    held: bool,
    format: Format,
    channels: ChannelPolicy,
}

impl Way {
    fn readme(format: Format) -> Self {
        Way {
            span: false,
            total: false,
            held: false,
            format,
            channels: ChannelPolicy::Both,
        }
    }

    fn shaper(&self, budget: Budget, page_size: Option<usize>) -> Shaper {
        let shaper = Shaper::for_tool("list_issues")
            .budget(budget)
            .format(self.format)
            .channels(self.channels);
        match page_size {
            Some(p) => shaper.page_size(p),
            None => shaper,
        }
    }
}

/// The tool as its author writes it, in `way`: decode the cursor, fetch the upstream page it
/// names (and the next, with `span`), declare the total when the upstream gives one, shape.
fn list_issues_in(
    upstream: &Upstream,
    way: Way,
    codec: &Arc<CursorCodec>,
    cursor: Option<&str>,
    budget: Budget,
    page_size: Option<usize>,
) -> Shaped {
    let shaper = way.shaper(budget, page_size);
    let call = match shaper.call().paginate(Arc::clone(codec), query(), cursor) {
        Ok(call) => call,
        Err(e) => return shaper.cursor_error(&e),
    };
    let at = call.upstream_position();
    let (mut rows, next) = fetch(upstream, at.page.as_deref());
    let call = match next {
        Some(second) if way.span => {
            let first_len = rows.len();
            let (more, after) = fetch(upstream, Some(&second));
            let pages = [
                (at.page.as_deref(), first_len),
                (Some(second.as_str()), more.len()),
            ];
            rows.extend(more);
            call.upstream_pages(pages, after)
        }
        next => call.upstream(at.page.as_deref(), next),
    };
    let call = if way.total {
        call.total(upstream.len as u64)
    } else {
        call
    };
    call.shape_blocking(&rows).unwrap()
}

/// An issue's number from its text line: `#4210 Crash …` or a table row `4210 | …`.
fn issue_key(line: &str) -> String {
    if line.contains(" | ") {
        return crate::walk::first_cell(line);
    }
    line.trim_start_matches('#')
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Walks `upstream` in `way` at `budget` through the oracle ([`crate::walk`]).
fn walk_way(upstream: Upstream, way: Way, budget: usize, check_needs: bool) -> crate::walk::Walked {
    let keys = || CursorKeys::new(b"an upstream paging key, sixteen bytes or more").unwrap();
    let codec = Arc::new(match way.held {
        true => CursorCodec::new(keys()).held_in(toolshape::cursor::MemoryCursorStore::new(
            100_000,
            std::time::Duration::from_secs(3_600),
        )),
        false => CursorCodec::new(keys()),
    });
    let truth: Vec<String> = data_set()[..upstream.len]
        .iter()
        .map(|v| v["number"].to_string())
        .collect();
    let fetch = |cursor: Option<&str>, budget: Budget, page_size: Option<usize>| {
        list_issues_in(&upstream, way, &codec, cursor, budget, page_size)
    };
    crate::walk::walk(&crate::walk::Walker {
        fetch: &fetch,
        budget: Budget::tokens(budget),
        format: way.format,
        channels: way.channels,
        key: "number",
        name: "issue",
        plural: "issues",
        truth: &truth,
        skip_names: crate::walk::SkipNames::Place,
        totals: match way.total {
            true => crate::walk::Totals::Known,
            false => crate::walk::Totals::Upstream,
        },
        text_key: issue_key,
        check_needs,
    })
}

/// The smallest budget at which each of `upstream`'s issues is shown on a page of its own
/// (alone, no cursor, with the tail a walk's page has: one issue of two, so not complete),
/// in `way`: the smallest and the largest of them.
fn alone_range(upstream: &Upstream, way: Way) -> (usize, usize) {
    let rows: Vec<Issue> = data_set()[..upstream.len]
        .iter()
        .map(|v| serde_json::from_value(v.clone()).unwrap())
        .collect();
    let sizes: Vec<usize> = rows
        .iter()
        .map(|row| {
            crate::smallest_budget(|b| {
                way.shaper(Budget::tokens(b), None)
                    .call()
                    .total(2)
                    .shape_blocking(std::slice::from_ref(row))
                    .map(|s| s.report().records.shown == 1)
                    .unwrap_or(false)
            })
        })
        .collect();
    (
        *sizes.iter().min().unwrap_or(&1),
        *sizes.iter().max().unwrap_or(&1),
    )
}

/// The issue's first case, as a new user would write it from the README: 13 issues over 5
/// upstream pages of 3, the `next` URL (about 80 bytes) as the continuation, no total,
/// walked at every budget from where one issue fits alone up, a token at a time. Each
/// promise holds at every budget; from where an issue's page of its own (its counts and a
/// short cursor) fits, no issue is skipped. On the library before this fix, 10 of the 13
/// issues were skipped at about one issue a page, the skipping answers over budget.
#[test]
fn the_readme_way_at_one_issue_a_page_shows_every_issue() {
    let upstream = Upstream {
        len: 13,
        per_page: 3,
        trailing_empty: false,
        token: 0,
    };
    for format in [Format::Prose, Format::Json, Format::Table] {
        let way = Way::readme(format);
        let (least, most) = alone_range(&upstream, way);
        for budget in least..=most + 60 {
            let walked = walk_way(upstream, way, budget, budget % 5 == 0);
            if budget >= most + 30 {
                assert!(
                    walked.skipped.is_empty() && walked.stopped.is_none(),
                    "{format:?} at {budget}: {walked:?}"
                );
                assert_eq!(walked.seen.len(), 13, "{format:?} at {budget}");
            }
        }
    }
}

/// The issue's second case: the tool fetches two upstream pages a call
/// (`Call::upstream_pages`), at every budget from where an issue fits alone up. Before this
/// fix, summaries said "0 issues shown after the first 7 of 13" when 2 had been shown, and
/// `omitted.count` was 6 while 11 were never shown.
#[test]
fn upstream_pages_at_small_budgets_state_true_counts() {
    let upstream = Upstream {
        len: 13,
        per_page: 3,
        trailing_empty: false,
        token: 0,
    };
    for format in [Format::Prose, Format::Json] {
        for total in [false, true] {
            let way = Way {
                span: true,
                total,
                ..Way::readme(format)
            };
            let (least, most) = alone_range(&upstream, way);
            for budget in least..=most + 40 {
                let walked = walk_way(upstream, way, budget, budget % 3 == 0);
                if budget >= most + 30 {
                    assert_eq!(walked.seen.len(), 13, "{format:?} {total} at {budget}");
                }
            }
        }
    }
}

/// The issue's third case: a search response with a total and two items, at budgets around
/// each item's size. Before this fix both were skipped as too large at 110 tokens though each
/// fits alone on a page with no cursor, and the second answer said "0 issues shown after the
/// first 1 of 2" when none had been shown.
#[test]
fn a_search_with_a_total_skips_only_what_no_page_of_its_own_shows() {
    let upstream = Upstream {
        len: 2,
        per_page: 30,
        trailing_empty: false,
        token: 0,
    };
    for format in [Format::Json, Format::Prose, Format::Table] {
        let way = Way {
            total: true,
            ..Way::readme(format)
        };
        let (least, most) = alone_range(&upstream, way);
        let mut shown_both = false;
        for budget in least.saturating_sub(2)..=most + 40 {
            let walked = walk_way(upstream, way, budget, true);
            shown_both |= walked.seen.len() == 2;
        }
        assert!(shown_both, "{format:?}");
    }
}

proptest! {
    #![proptest_config(crate::proptest_config(48))]

    /// Every way of paging an upstream: one page a call or two, with and without the
    /// upstream's total, signed and held cursors, continuations from 10 to 300 bytes (page
    /// tokens) and the API's URLs, each format and profile, at budgets a token at a time
    /// around where an issue fits alone: every issue once, every count true, never over
    /// budget (the oracle, `walk`).
    #[test]
    fn every_issue_once_at_every_budget(
        len in prop_oneof![Just(0usize), Just(1usize), Just(2usize), 0usize..=40],
        per_page in prop_oneof![Just(1usize), 1usize..=12],
        trailing_empty in any::<bool>(),
        token in prop_oneof![Just(0usize), 10usize..=300],
        span in any::<bool>(),
        total in any::<bool>(),
        held in any::<bool>(),
        delta in prop_oneof![4 => -2i64..=3, 2 => 4i64..60, 1 => 60i64..1_500],
        at_most in any::<bool>(),
        format in prop_oneof![Just(Format::Json), Just(Format::Prose), Just(Format::Table)],
        channels in prop_oneof![Just(ChannelPolicy::Both), Just(ChannelPolicy::Structured), Just(ChannelPolicy::Text)],
    ) {
        let upstream = Upstream { len, per_page, trailing_empty, token };
        let way = Way { span, total, held, format, channels };
        let (least, most) = alone_range(&upstream, way);
        let base = if at_most { most } else { least };
        let budget = (base as i64 + delta).max(1) as usize;
        walk_way(upstream, way, budget, true);
    }
}

/// The README's upstream example as written there (45 issues in pages of 20 by `page=N`, the
/// `Link` header's `next` URL as the continuation, no total, a codec made once), walked at
/// every budget from where an issue fits alone up, a token at a time: every promise holds,
/// and from where a page of one issue with its counts and a short cursor fits, every issue
/// is shown. Prints the smallest budget that shows all 45 and its cursors.
#[test]
fn the_readme_upstream_example_is_safe_at_the_smallest_budgets() {
    #[derive(serde::Deserialize, ToolResult)]
    #[shape(name = "issue", plural = "issues", prose = "#{number} {title}")]
    struct ReadmeIssue {
        #[shape(show)]
        number: u64,
        #[shape(show)]
        title: String,
    }
    fn get(url: &str) -> (String, Option<String>) {
        let page: usize = url
            .split_once("&page=")
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(1);
        let issues: Vec<_> = (1..=45u64)
            .rev()
            .skip((page - 1) * 20)
            .take(20)
            .map(|n| serde_json::json!({"number": n, "title": format!("issue {n}"), "user": {"login": "octo"}}))
            .collect();
        let link = (page * 20 < 45).then(|| {
            format!(
                "<https://api.example/issues?per_page=20&page={}>; rel=\"next\"",
                page + 1
            )
        });
        (serde_json::to_string(&issues).unwrap(), link)
    }
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"a signing key, 16+ bytes").unwrap(),
    ));
    let query = QueryHash::of("list_issues", &serde_json::json!({"repo": "octo/hello"})).unwrap();
    let fetch = |cursor: Option<&str>, budget: Budget, page_size: Option<usize>| -> Shaped {
        let mut shaper = Shaper::for_tool("list_issues").budget(budget);
        if let Some(p) = page_size {
            shaper = shaper.page_size(p);
        }
        let call = match shaper.call().paginate(Arc::clone(&codec), query, cursor) {
            Ok(call) => call,
            Err(refused) => return shaper.cursor_error(&refused),
        };
        let at = call.upstream_position();
        let url = at
            .page
            .clone()
            .unwrap_or_else(|| "https://api.example/issues?per_page=20".into());
        let (body, link) = get(&url);
        let rows: Vec<ReadmeIssue> = serde_json::from_str(&body).unwrap();
        let next = link.as_deref().and_then(next_link);
        call.upstream(at.page.as_deref(), next)
            .shape_blocking(&rows)
            .unwrap()
    };
    let truth: Vec<String> = (1..=45u64).rev().map(|n| n.to_string()).collect();
    let least = crate::smallest_budget(|b| {
        let one = [ReadmeIssue {
            number: 45,
            title: "issue 45".into(),
        }];
        // With the tail a walk's page has (one issue of two: not complete).
        Shaper::for_tool("list_issues")
            .budget(Budget::tokens(b))
            .call()
            .total(2)
            .shape_blocking(&one)
            .map(|s| s.report().records.shown == 1)
            .unwrap_or(false)
    });
    let mut smallest_whole = None;
    for budget in least..=least + 80 {
        let walked = crate::walk::walk(&crate::walk::Walker {
            fetch: &fetch,
            budget: Budget::tokens(budget),
            format: Format::Prose,
            channels: ChannelPolicy::Both,
            key: "number",
            name: "issue",
            plural: "issues",
            truth: &truth,
            skip_names: crate::walk::SkipNames::Place,
            totals: crate::walk::Totals::Upstream,
            text_key: issue_key,
            check_needs: budget % 4 == 0,
        });
        if walked.seen.len() == 45 && smallest_whole.is_none() {
            smallest_whole = Some(budget);
        }
        if smallest_whole.is_some() {
            assert_eq!(
                walked.seen.len(),
                45,
                "at {budget}, past the smallest whole walk"
            );
        }
    }
    let smallest = smallest_whole.expect("a budget that shows all 45");
    assert!(smallest <= least + 40, "{least} {smallest}");
    let first = fetch(None, Budget::tokens(smallest), None);
    let cursor = first.next().unwrap();
    // A signed cursor at the upstream page's end carries the `next` URL: what every page
    // handed out before cursors could be held.
    let signed = fetch(None, Budget::tokens(100_000), Some(20));
    let signed = signed.next().unwrap();
    println!(
        "README upstream example: smallest whole walk at {smallest} tokens (an issue alone fits at {least}); its cursor {} characters, {} tokens; a signed cursor carrying the next URL {} characters, {} tokens",
        cursor.len(),
        crate::walk::tokens(cursor),
        signed.len(),
        crate::walk::tokens(signed)
    );
}
