//! Tests at each lookup's edge, reading what a model reads: legend codes that share a prefix
//! with a known code or differ from it only in case, epoch dates at year 0, 1970 and 9999
//! and one past each, and walks over ids at the edges of their types (integers at their
//! limits and across digit counts, text bytewise, UUIDs), with and without a rank, at every
//! budget from the smallest that shows a record.

use serde_json::{Value, json};
use toolshape::{Format, Legend, Shaper, ToolResult, fields::LoadedLegend};

/// Jira's status categories: codes where a prefix (`new` / `news`), a case (`done` / `Done`)
/// or a space tells a known code from an unknown one.
const CATEGORY: Legend<&str> = Legend::new(&[
    ("new", "To Do"),
    ("indeterminate", "In Progress"),
    ("done", "Done"),
]);

/// Integer codes whose decimal text share prefixes (1, 10, 100).
const PRIORITY: Legend<u16> = Legend::new(&[(1, "low"), (10, "high"), (100, "urgent")]);

static REGION: LoadedLegend<String> = LoadedLegend::new();

#[derive(Debug, Clone, ToolResult)]
#[shape(
    name = "issue",
    plural = "issues",
    prose = "{key}: {category}, {priority}, {region}"
)]
struct Coded {
    #[shape(id)]
    key: String,
    #[shape(legend = CATEGORY)]
    category: String,
    #[shape(legend = PRIORITY)]
    priority: u16,
    #[shape(legend = REGION)]
    region: String,
}

#[test]
fn legend_codes_one_letter_one_digit_or_one_case_away_read_unknown() {
    let _ = REGION.load([
        ("eu".to_owned(), "Europe"),
        ("eu-west".to_owned(), "Ireland"),
    ]);
    let cases: &[(&str, u16, &str, [&str; 3])] = &[
        // Exactly the known codes.
        ("new", 1, "eu", ["To Do", "low", "Europe"]),
        ("done", 10, "eu-west", ["Done", "high", "Ireland"]),
        (
            "indeterminate",
            100,
            "eu",
            ["In Progress", "urgent", "Europe"],
        ),
        // One past and one before each: longer, shorter, another case, a space.
        (
            "news",
            11,
            "eu-wes",
            [
                "unknown category news",
                "unknown priority 11",
                "unknown region eu-wes",
            ],
        ),
        (
            "ne",
            0,
            "e",
            [
                "unknown category ne",
                "unknown priority 0",
                "unknown region e",
            ],
        ),
        (
            "Done",
            101,
            "EU",
            [
                "unknown category Done",
                "unknown priority 101",
                "unknown region EU",
            ],
        ),
        (
            "done ",
            1000,
            " eu",
            [
                "unknown category done ",
                "unknown priority 1000",
                "unknown region  eu",
            ],
        ),
        (
            "",
            2,
            "eu-west-1",
            [
                "unknown category ",
                "unknown priority 2",
                "unknown region eu-west-1",
            ],
        ),
    ];
    let rows: Vec<Coded> = cases
        .iter()
        .enumerate()
        .map(|(i, (category, priority, region, _))| Coded {
            key: format!("K-{i}"),
            category: (*category).to_owned(),
            priority: *priority,
            region: (*region).to_owned(),
        })
        .collect();
    let shaped = Shaper::for_tool("jira_search")
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    let data = crate::records(&shaped.structured());
    assert_eq!(data.len(), cases.len());
    for (record, (_, _, _, words)) in data.iter().zip(cases) {
        let i: usize = record["key"].as_str().unwrap()[2..].parse().unwrap();
        assert_eq!(cases[i].3, *words);
        assert_eq!(
            [&record["category"], &record["priority"], &record["region"]],
            words.map(Value::from).each_ref(),
            "{record:?}"
        );
    }
    // Every unknown code is counted, by field, as the model read it.
    let unknown = &shaped.report().diagnostics.unknown_codes;
    let sorted = |field: &str| {
        let mut codes = unknown[field].clone();
        codes.sort();
        codes
    };
    assert_eq!(sorted("category"), ["", "Done", "done ", "ne", "news"]);
    assert_eq!(sorted("priority"), ["0", "1000", "101", "11", "2"]);
    assert_eq!(sorted("region"), [" eu", "EU", "e", "eu-wes", "eu-west-1"]);
}

#[derive(Debug, Clone, ToolResult)]
#[shape(name = "event", plural = "events", prose = "{id} at {at}, {at_ms}")]
struct Stamped {
    #[shape(id)]
    id: u32,
    #[shape(date(epoch_seconds))]
    at: i64,
    #[shape(date(epoch_millis))]
    at_ms: i64,
}

#[test]
fn epoch_dates_at_year_0_1970_and_9999_and_one_past_each() {
    // (seconds, what the model reads); milliseconds are the same instants × 1,000, and one
    // millisecond past the edge for the unreadable ones.
    let cases: &[(i64, &str)] = &[
        (-62_167_219_201, "-62167219201"),
        (-62_167_219_200, "0000-01-01"),
        (-86_401, "1969-12-30"),
        (-86_400, "1969-12-31"),
        (-1, "1969-12-31"),
        (0, "1970-01-01"),
        (86_399, "1970-01-01"),
        (86_400, "1970-01-02"),
        (951_782_400, "2000-02-29"),
        (253_402_300_799, "9999-12-31"),
        (253_402_300_800, "253402300800"),
    ];
    let rows: Vec<Stamped> = cases
        .iter()
        .zip(0u32..)
        .map(|(&(s, _), id)| Stamped {
            id,
            at: s,
            at_ms: if s == -62_167_219_201 {
                -62_167_219_200_001
            } else if s == 253_402_300_800 {
                253_402_300_800_000
            } else {
                s * 1_000 + 999 * i64::from(s >= 0)
            },
        })
        .collect();
    let shaped = Shaper::for_tool("events")
        .format(Format::Json)
        .shape_blocking(&rows)
        .unwrap();
    let data = crate::records(&shaped.structured());
    for (record, &(_, expected)) in data.iter().zip(cases) {
        assert_eq!(record["at"], expected, "{record:?}");
        let ms = match expected {
            "-62167219201" => "-62167219200001",
            "253402300800" => "253402300800000",
            date => date,
        };
        assert_eq!(record["at_ms"], ms, "{record:?}");
    }
    assert_eq!(shaped.report().diagnostics.unparsed_dates, 4);
    // In prose, the same words.
    let prose = Shaper::for_tool("events")
        .format(Format::Prose)
        .shape_blocking(&rows)
        .unwrap();
    assert!(
        prose.text().contains("1 at 0000-01-01, 0000-01-01"),
        "{}",
        prose.text()
    );
    assert!(
        prose.text().contains("0 at -62167219201, -62167219200001"),
        "{}",
        prose.text()
    );
}

macro_rules! id_types {
    ($($name:ident: $ty:ty),* $(,)?) => {$(
        #[derive(Debug, Clone, ToolResult)]
        #[shape(name = "item", plural = "items", prose = "{id}: {title}")]
        struct $name {
            #[shape(id)]
            id: $ty,
            #[shape(show)]
            title: String,
        }
    )*};
}
id_types!(U64Item: u64, I64Item: i64, TextItem: String, UuidItem: uuid::Uuid);

macro_rules! ranked {
    ($($name:ident: $order:ident),*) => {$(
        /// Ranked over a key every record shares: the id alone orders them, in the rank's
        /// direction.
        #[derive(Debug, Clone, ToolResult)]
        #[shape(name = "item", plural = "items", prose = "{id}: {title} ({score})")]
        struct $name {
            #[shape(id)]
            id: i64,
            #[shape(show)]
            title: String,
            #[shape(rank = $order)]
            score: u8,
        }
    )*};
}
ranked!(DescI64: desc, AscI64: asc);

/// Follows `next` over `rows` from `budget` up as a model would: an answer that says the
/// budget is too small for the next page names the budget it needs, and the same cursor is
/// sent again at that budget. Returns the ids read back from `data`, in page order, after
/// checking every answer against its own budget with an independent tokenizer.
fn walk_raising<T>(tool: &str, rows: &[T], mut budget: usize, format: Format) -> Vec<Value>
where
    T: ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    use std::sync::Arc;
    use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash};
    let codec = Arc::new(CursorCodec::new(
        CursorKeys::new(b"an edges test signing key, 16+ bytes").unwrap(),
    ));
    let query = QueryHash::of(tool, &json!({})).unwrap();
    let (mut cursor, mut seen) = (None::<String>, Vec::new());
    for _ in 0..4 * rows.len() + 4 {
        let page = Shaper::for_tool(tool)
            .budget(toolshape::Budget::tokens(budget))
            .format(format)
            .call()
            .paginate(Arc::clone(&codec), query, cursor.as_deref())
            .unwrap()
            .shape_blocking(rows)
            .unwrap();
        let size = crate::walk::tokens(page.text());
        assert!(
            size <= budget,
            "{tool}: {size} tokens over {budget}: {}",
            page.text()
        );
        if page.status() == toolshape::envelope::Status::Error {
            let ask: usize = page
                .summary()
                .split("raise the budget to at least ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| {
                    panic!("{tool}: an error that asks for no budget: {}", page.text())
                });
            assert!(ask > budget, "{tool}: asks for {ask} at {budget}");
            // Past the first page, the error says the cursor still works (unless the budget
            // cut the remedy's end); on the first, it names no cursor.
            let summary = page.summary();
            match cursor {
                Some(_) => assert!(
                    summary.ends_with(" tokens and call again with the same cursor")
                        || summary.ends_with('…'),
                    "{tool} at {budget}: {summary}"
                ),
                None => assert!(!summary.contains("cursor"), "{tool}: {summary}"),
            }
            budget = ask;
            continue;
        }
        let structured = page.structured();
        seen.extend(
            crate::records(&structured)
                .into_iter()
                .map(|r| r["id"].clone()),
        );
        match structured["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
    panic!("{tool}: `next` did not end: {seen:?}");
}

/// Walks `rows` at every budget from the smallest that answers at all (one token less is
/// the error that names it) to one that shows them all, in JSON and prose, and checks that
/// the ids read back are `expected`, in order, each once.
fn walks_in_order<T>(tool: &str, rows: &[T], expected: &[Value])
where
    T: ToolResult + Sync,
    (): toolshape::resolve::Supplies<T::Needs>,
{
    let answer = |budget: usize| {
        Shaper::for_tool(tool)
            .budget(toolshape::Budget::tokens(budget))
            .format(Format::Json)
            .call()
            .paginate(
                std::sync::Arc::new(toolshape::cursor::CursorCodec::new(
                    toolshape::cursor::CursorKeys::new(b"an edges test signing key, 16+ bytes")
                        .unwrap(),
                )),
                toolshape::cursor::QueryHash::of(tool, &json!({})).unwrap(),
                None,
            )
            .unwrap()
            .shape_blocking(rows)
            .unwrap()
    };
    let smallest =
        crate::smallest_budget(|b| answer(b).status() != toolshape::envelope::Status::Error);
    let below = answer(smallest - 1);
    let needs = format!("raise the budget to at least {smallest} tokens");
    assert!(below.text().contains(&needs), "{}", below.text());
    for budget in (smallest..smallest + 16).chain([smallest + 40, 4_000]) {
        for format in [Format::Json, Format::Table, Format::Prose] {
            let seen = walk_raising(tool, rows, budget, format);
            assert_eq!(seen, expected, "{tool} at {budget} tokens, {format:?}");
        }
    }
}

#[test]
fn ids_at_the_edges_of_their_types_page_in_their_order_at_every_budget() {
    let title = |i: usize| format!("item {i}");
    let u64s = [u64::MAX, 10, 0, u64::MAX - 1, 9, 1, 100, 99];
    let rows: Vec<U64Item> = u64s
        .iter()
        .enumerate()
        .map(|(i, &id)| U64Item {
            id,
            title: title(i),
        })
        .collect();
    let mut order = u64s.to_vec();
    order.sort_unstable();
    walks_in_order(
        "u64s",
        &rows,
        &order.iter().map(|&n| json!(n)).collect::<Vec<_>>(),
    );

    let i64s = [i64::MAX, -1, i64::MIN, 0, -10, -9, 9, 10, i64::MIN + 1];
    let rows: Vec<I64Item> = i64s
        .iter()
        .enumerate()
        .map(|(i, &id)| I64Item {
            id,
            title: title(i),
        })
        .collect();
    let mut order = i64s.to_vec();
    order.sort_unstable();
    let expected: Vec<Value> = order.iter().map(|&n| json!(n)).collect();
    walks_in_order("i64s", &rows, &expected);
    // Ranked, every key equal: the id breaks the tie, in the rank's direction.
    let desc: Vec<DescI64> = i64s
        .iter()
        .enumerate()
        .map(|(i, &id)| DescI64 {
            id,
            title: title(i),
            score: 3,
        })
        .collect();
    let reversed: Vec<Value> = expected.iter().rev().cloned().collect();
    walks_in_order("desc_i64s", &desc, &reversed);
    let asc: Vec<AscI64> = i64s
        .iter()
        .enumerate()
        .map(|(i, &id)| AscI64 {
            id,
            title: title(i),
            score: 3,
        })
        .collect();
    walks_in_order("asc_i64s", &asc, &expected);

    // Text compares bytewise: "10" before "9", "A" before "a", "a" before "é".
    let texts = ["9", "10", "a", "A", "é", "10a", "1", "-1", "007", "7"];
    let rows: Vec<TextItem> = texts
        .iter()
        .enumerate()
        .map(|(i, &id)| TextItem {
            id: id.into(),
            title: title(i),
        })
        .collect();
    let mut order = texts.to_vec();
    order.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    walks_in_order(
        "texts",
        &rows,
        &order.iter().map(|&t| json!(t)).collect::<Vec<_>>(),
    );

    // UUIDs order as their value, which is the order of their lowercase text.
    let uuids = [
        u128::MAX,
        0,
        1,
        u128::MAX - 1,
        1 << 64,
        (1 << 64) - 1,
        0xa << 124,
        9 << 124,
    ];
    let rows: Vec<UuidItem> = uuids
        .iter()
        .enumerate()
        .map(|(i, &id)| UuidItem {
            id: uuid::Uuid::from_u128(id),
            title: title(i),
        })
        .collect();
    let mut order = uuids.to_vec();
    order.sort_unstable();
    let expected: Vec<Value> = order
        .iter()
        .map(|&u| json!(uuid::Uuid::from_u128(u).to_string()))
        .collect();
    walks_in_order("uuids", &rows, &expected);
}
