//! Tests: cursor.

use proptest::prelude::*;
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use toolshape::__seams::cursor::{Wire, after_cursor};
use toolshape::cursor::{
    CursorCodec, CursorError, CursorKeys, Keyset, MemoryCursorStore, Placeholders, QueryHash,
    SqlOptions,
};
use toolshape::{Order, ToolResult, fields::KeyValue};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding (the root package does not depend on `base64`).
fn b64_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// A cursor's bytes as the codec writes them now: `c`, then 7-byte chunks as 17 zero-padded
/// digits, a last chunk of k bytes in the digits its largest value needs (written here from
/// the format's description, not the codec's code).
fn dec_encode(bytes: &[u8]) -> String {
    const TAIL: [usize; 7] = [0, 3, 5, 8, 10, 13, 15];
    let mut out = String::from("c");
    for chunk in bytes.chunks(7) {
        let v = chunk.iter().fold(0u64, |v, &b| v * 256 + u64::from(b));
        let width = if chunk.len() == 7 {
            17
        } else {
            TAIL[chunk.len()]
        };
        out.push_str(&format!("{v:0width$}"));
    }
    out
}

fn dec_decode(cursor: &str) -> Vec<u8> {
    const TAIL: [usize; 7] = [0, 3, 5, 8, 10, 13, 15];
    let digits = cursor.strip_prefix('c').expect("a cursor of digits");
    let tail = TAIL
        .iter()
        .position(|&d| d == digits.len() % 17)
        .expect("a length the format writes");
    let mut out = Vec::new();
    for chunk in digits.as_bytes().chunks(17) {
        let n = if chunk.len() == 17 { 7 } else { tail };
        let v: u64 = std::str::from_utf8(chunk)
            .expect("ASCII")
            .parse()
            .expect("digits");
        out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
    }
    out
}

fn codec() -> CursorCodec {
    CursorCodec::new(CursorKeys::new(KEY).expect("a 32-byte key"))
}

fn query() -> QueryHash {
    QueryHash::of("search_tickets", &json!({"status": "open", "q": "crash"})).expect("hashable")
}

fn sample() -> Keyset {
    Keyset {
        rank: Some(KeyValue::Int(1_740_000_000_123_456_789)),
        id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
        order: Order::Desc,
    }
}

#[derive(ToolResult, Debug, Clone)]
#[shape(name = "item", plural = "items")]
struct Newest {
    #[shape(id)]
    id: String,
    #[shape(rank = desc)]
    score: Option<i64>,
}

#[derive(ToolResult, Debug, Clone)]
#[shape(name = "item", plural = "items")]
struct Oldest {
    #[shape(id)]
    id: String,
    #[shape(rank = asc)]
    score: Option<i64>,
}

trait Item: ToolResult + Clone {
    fn new(id: String, score: Option<i64>) -> Self;
}
impl Item for Newest {
    fn new(id: String, score: Option<i64>) -> Self {
        Newest { id, score }
    }
}
impl Item for Oldest {
    fn new(id: String, score: Option<i64>) -> Self {
        Oldest { id, score }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(Option<i64>),
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        proptest::option::weighted(0.8, 0..6i64).prop_map(Mutation::Insert),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

/// Ids of several shapes (the cursor packs UUID-suffixed ones), unique by construction.
fn id_for(n: usize) -> String {
    match n % 3 {
        0 => format!("r{n:04}"),
        1 => format!("tkt_{n:08x}-2d18-4b6e-9c05-8ab3f2e17d90"),
        _ => format!("R-{n}"),
    }
}

/// The rows after `keyset`, `limit` of them, as SQLite orders and filters them with the
/// keyset's SQL.
fn sql_page(db: &rusqlite::Connection, keyset: &Keyset, limit: usize) -> Vec<String> {
    let predicate = keyset.sql_predicate("score", "id").expect("plain columns");
    let order_by = keyset.sql_order_by("score", "id").expect("plain columns");
    let sql = format!(
        "SELECT id FROM items WHERE {} ORDER BY {order_by} LIMIT {limit}",
        predicate.sql
    );
    let params: Vec<rusqlite::types::Value> = predicate
        .params
        .iter()
        .map(|p| match p {
            KeyValue::Int(v) => rusqlite::types::Value::Integer(*v),
            KeyValue::Str(s) => rusqlite::types::Value::Text(s.clone()),
            other => panic!("unexpected parameter {other:?}"),
        })
        .collect();
    let mut stmt = db.prepare(&sql).expect("valid SQL");
    stmt.query_map(rusqlite::params_from_iter(params), |row| row.get(0))
        .expect("query runs")
        .collect::<Result<_, _>>()
        .expect("rows read")
}

/// Pages through a collection mutated between every two pages, through encoded cursors, in
/// memory and in SQLite side by side; checks the pages agree, nothing repeats, nothing that
/// existed throughout is missed, and the concatenation is in rank order.
fn page_through<T: Item>(initial: Vec<Option<i64>>, steps: Vec<Vec<Mutation>>, page_size: usize) {
    let codec = codec();
    let query = query();
    let db = rusqlite::Connection::open_in_memory().expect("sqlite");
    db.execute_batch("CREATE TABLE items (id TEXT PRIMARY KEY, score INTEGER)")
        .expect("table");
    let insert = |id: &str, score: Option<i64>| {
        db.execute(
            "INSERT INTO items VALUES (?1, ?2)",
            rusqlite::params![id, score],
        )
        .expect("insert");
    };

    let mut next_id = 0;
    let mut items: Vec<T> = Vec::new();
    for score in initial {
        let id = id_for(next_id);
        next_id += 1;
        insert(&id, score);
        items.push(T::new(id, score));
    }
    let mut deleted: HashSet<String> = HashSet::new();
    let initial_ids: Vec<String> = items
        .iter()
        .filter_map(|i| i.id_text().map(str::to_owned))
        .collect();

    let mut seen: Vec<T> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut steps = steps.into_iter();
    loop {
        let order = T::PROJECTION.rank.map_or(Order::Asc, |r| r.order);
        let position = match &cursor {
            Some(c) => {
                let p = codec.decode(c, &query).expect("our own cursor decodes");
                assert_eq!(p.shown, seen.len() as u64);
                p.keyset
            }
            None => Keyset::start(order),
        };
        items.sort_by(T::rank_cmp);
        let page: Vec<T> = after_cursor(&items, &position)
            .iter()
            .take(page_size)
            .cloned()
            .collect();
        let page_ids: Vec<String> = page
            .iter()
            .filter_map(|i| i.id_text().map(str::to_owned))
            .collect();
        assert_eq!(
            sql_page(&db, &position, page_size),
            page_ids,
            "SQLite and memory disagree"
        );
        seen.extend(page.iter().cloned());
        // Each record is shown at most once, so never more than were ever made: a walk that
        // repeats pages fails here rather than running forever.
        assert!(seen.len() <= next_id, "more records shown than ever made");
        let Some(last) = page.last() else { break };
        cursor = Some(codec.next_cursor(last, seen.len() as u64, &query));
        for m in steps.next().unwrap_or_default() {
            match m {
                Mutation::Insert(score) => {
                    let id = id_for(next_id);
                    next_id += 1;
                    insert(&id, score);
                    items.push(T::new(id, score));
                }
                Mutation::Delete(seed) if !items.is_empty() => {
                    let gone = items.remove(seed % items.len());
                    let id = gone.id_text().unwrap_or_default().to_owned();
                    db.execute("DELETE FROM items WHERE id = ?1", [&id])
                        .expect("delete");
                    deleted.insert(id);
                }
                Mutation::Delete(_) => {}
            }
        }
    }

    let seen_ids: Vec<&str> = seen.iter().filter_map(|i| i.id_text()).collect();
    let unique: HashSet<&str> = seen_ids.iter().copied().collect();
    assert_eq!(
        unique.len(),
        seen_ids.len(),
        "a record was shown twice: {seen_ids:?}"
    );
    for id in initial_ids.iter().filter(|id| !deleted.contains(*id)) {
        assert!(
            unique.contains(id.as_str()),
            "{id} existed throughout but was never shown"
        );
    }
    for pair in seen.windows(2) {
        assert_eq!(
            pair[0].rank_cmp(&pair[1]),
            std::cmp::Ordering::Less,
            "pages out of rank order"
        );
    }
}

proptest! {
    #![proptest_config(crate::proptest_config(128))]

    #[test]
    fn paging_a_mutating_collection_neither_repeats_nor_skips_newest_first(
        initial in proptest::collection::vec(proptest::option::weighted(0.8, 0..6i64), 0..40),
        steps in proptest::collection::vec(proptest::collection::vec(mutation(), 0..4), 0..40),
        page_size in 1usize..6,
    ) {
        page_through::<Newest>(initial, steps, page_size);
    }

    #[test]
    fn paging_a_mutating_collection_neither_repeats_nor_skips_oldest_first(
        initial in proptest::collection::vec(proptest::option::weighted(0.8, 0..6i64), 0..40),
        steps in proptest::collection::vec(proptest::collection::vec(mutation(), 0..4), 0..40),
        page_size in 1usize..6,
    ) {
        page_through::<Oldest>(initial, steps, page_size);
    }

    #[test]
    fn arbitrary_text_is_refused_without_panicking(text in ".{0,200}") {
        prop_assert!(codec().decode(&text, &query()).is_err());
    }

    #[test]
    fn arbitrary_bytes_are_refused_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut versioned = bytes.clone();
        versioned.insert(0, 1);
        let mut current = bytes.clone();
        current.insert(0, 2);
        for candidate in [bytes, versioned, current] {
            prop_assert!(codec().decode(&b64_encode(&candidate), &query()).is_err());
            prop_assert!(codec().decode(&dec_encode(&candidate), &query()).is_err());
        }
    }

    #[test]
    fn any_flipped_bit_is_refused(bit in 0usize..4096, rank in any::<i64>(), id in "[a-z0-9_-]{0,48}") {
        let keyset = Keyset { rank: Some(KeyValue::Int(rank)), id: Some(id), order: Order::Asc };
        let mut bytes = dec_decode(&codec().encode(&keyset, 3, &query()));
        let bit = bit % (bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        let err = codec().decode(&dec_encode(&bytes), &query()).expect_err("altered cursor accepted");
        prop_assert!(matches!(err, CursorError::Tampered | CursorError::ForeignQuery | CursorError::Malformed));
    }
}

#[test]
fn every_altered_character_is_refused() {
    let cursor = codec().encode(&sample(), 40, &query());
    let mut tried = 0;
    for i in 0..cursor.len() {
        for c in ALPHABET
            .iter()
            .map(|&c| char::from(c))
            .filter(|&c| !cursor[i..].starts_with(c))
        {
            let altered = format!("{}{c}{}", &cursor[..i], &cursor[i + 1..]);
            assert!(
                codec().decode(&altered, &query()).is_err(),
                "accepted {altered}"
            );
            tried += 1;
        }
    }
    assert_eq!(tried, cursor.len() * 63);
    // Cut short or extended.
    assert_eq!(
        codec().decode(&cursor[..cursor.len() - 1], &query()).err(),
        Some(CursorError::Malformed)
    );
    assert!(codec().decode(&format!("{cursor}A"), &query()).is_err());
    assert!(codec().decode(&cursor, &query()).is_ok());
}

#[test]
fn a_cursor_continues_only_its_own_query() {
    let cursor = codec().encode(&sample(), 40, &query());
    let reordered = QueryHash::of("search_tickets", &json!({"q": "crash", "status": "open"}))
        .expect("hashable");
    assert!(codec().decode(&cursor, &reordered).is_ok());
    for other in [
        QueryHash::of("search_tickets", &json!({"status": "closed", "q": "crash"})),
        QueryHash::of("search_tickets", &json!({"status": "open"})),
        QueryHash::of("list_tickets", &json!({"status": "open", "q": "crash"})),
    ] {
        let other = other.expect("hashable");
        assert_eq!(
            codec().decode(&cursor, &other),
            Err(CursorError::ForeignQuery)
        );
    }
}

/// Key rotation through codecs `with` builds: the rotated codec reads cursors signed with the
/// previous key and signs with the new one only; nothing else reads either.
fn check_rotation(with: impl Fn(CursorKeys) -> CursorCodec) {
    let old = with(CursorKeys::new(b"the old key, sixteen+").expect("key"));
    let rotated = with(
        CursorKeys::new(b"the new key, sixteen+")
            .and_then(|k| k.with_previous(b"the old key, sixteen+"))
            .expect("keys"),
    );
    let after = with(CursorKeys::new(b"the new key, sixteen+").expect("key"));
    let stranger = with(CursorKeys::new(b"someone else's key!!").expect("key"));

    let from_old = old.encode(&sample(), 20, &query());
    assert_eq!(
        rotated.decode(&from_old, &query()).map(|p| p.keyset),
        Ok(sample())
    );
    assert_eq!(
        after.decode(&from_old, &query()),
        Err(CursorError::Tampered)
    );
    assert_eq!(
        stranger.decode(&from_old, &query()),
        Err(CursorError::Tampered)
    );

    // The rotated codec signs with the new key only.
    let from_rotated = rotated.encode(&sample(), 20, &query());
    assert!(after.decode(&from_rotated, &query()).is_ok());
    assert_eq!(
        old.decode(&from_rotated, &query()),
        Err(CursorError::Tampered)
    );
}

#[test]
fn key_rotation_accepts_the_previous_key_and_nothing_else() {
    check_rotation(CursorCodec::new);
}

/// Every way setting cursors up can fail is one `CursorSetupError`, each variant with the
/// message that says what to do: a short key, query arguments JSON cannot hold, a SQL column
/// that is not a plain name, a Redis URL that is not one.
#[test]
fn each_cursor_setup_mistake_is_its_variant_with_its_remedy() {
    use toolshape::cursor::CursorSetupError;
    let short = CursorKeys::new([1u8; 15]).err();
    assert_eq!(short, Some(CursorSetupError::KeyTooShort { len: 15 }));
    assert!(CursorKeys::new([1u8; 16]).is_ok() && CursorKeys::new([1u8; 17]).is_ok());
    // A map whose keys are not text is no JSON object.
    let args: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
    let err = QueryHash::of("search", &args).expect_err("refused");
    assert!(
        matches!(err, CursorSetupError::QueryArguments { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("the query arguments could not be serialised"),
        "{err}"
    );
    let keyset = Keyset::start(Order::Asc);
    let err = keyset
        .sql_predicate("updated_at; DROP TABLE t", "id")
        .expect_err("refused");
    assert_eq!(
        err,
        CursorSetupError::SqlColumn {
            column: "updated_at; DROP TABLE t".to_owned()
        }
    );
    assert!(
        err.to_string().contains("never text from a request"),
        "{err}"
    );
    let err = toolshape::cursor::RedisCursorStore::builder("not a url")
        .connect()
        .expect_err("refused");
    assert!(
        matches!(err, CursorSetupError::RedisUnavailable { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("write it as redis://host:port/db"),
        "{err}"
    );
}

#[test]
fn keys_shorter_than_sixteen_bytes_are_refused() {
    let err = CursorKeys::new(b"fifteen bytes!!").expect_err("short key accepted");
    assert!(
        err.to_string().contains("at least 16 bytes, got 15"),
        "{err}"
    );
    assert!(CursorKeys::new(b"sixteen bytes!!!").is_ok());
    assert!(
        CursorKeys::new(KEY)
            .and_then(|k| k.with_previous(b""))
            .is_err()
    );
    // Keys never show in debug output.
    let debug = format!("{:?}", CursorKeys::new(KEY).expect("key"));
    assert!(
        !debug.contains("0123456789") && debug.contains("redacted"),
        "{debug}"
    );
}

#[test]
fn cursors_expire_after_their_maximum_age() {
    let codec = codec().max_age(Duration::from_secs(600));
    let cursor = codec.encode_at(&sample(), 40, &query(), 1_000_000);
    assert!(codec.decode_at(&cursor, &query(), 1_000_600).is_ok());
    // A cursor from a replica whose clock runs ahead is not "expired".
    assert!(codec.decode_at(&cursor, &query(), 999_000).is_ok());
    let err = codec
        .decode_at(&cursor, &query(), 1_000_601)
        .expect_err("expired cursor accepted");
    assert_eq!(
        err,
        CursorError::Expired {
            age_secs: 601,
            max_age_secs: 600
        }
    );
    // Without a maximum age, the same cursor still reads.
    assert!(self::codec().decode_at(&cursor, &query(), u64::MAX).is_ok());
}

#[test]
fn a_fresh_codec_with_the_same_key_reads_the_cursor() {
    // Stateless: another process (a restart, a replica) only needs the key.
    let cursor = codec().encode(&sample(), 40, &query());
    let replica = CursorCodec::new(CursorKeys::new(Vec::from(KEY)).expect("key"));
    let position = replica.decode(&cursor, &query()).expect("decodes");
    assert_eq!((position.keyset, position.shown), (sample(), 40));
}

#[test]
fn every_refusal_says_how_to_recover() {
    let errors = [
        CursorError::Malformed,
        CursorError::Tampered,
        CursorError::ForeignQuery,
        CursorError::Expired {
            age_secs: 700,
            max_age_secs: 600,
        },
        CursorError::Forgotten,
    ];
    for err in errors {
        assert!(
            err.to_string()
                .contains("again without a cursor to start from the first page"),
            "{err}"
        );
    }
}

#[test]
fn cursor_length_for_a_timestamp_rank_and_a_forty_character_id() {
    let issued = 1_740_000_000;
    // A chrono timestamp rank is nanoseconds since the epoch; the id is 40 characters.
    let uuid_id = sample();
    assert_eq!(uuid_id.id.as_deref().map(str::len), Some(40));
    let uuid_cursor = codec().encode_at(&uuid_id, 40, &query(), issued);
    let plain_id = Keyset {
        id: Some("INV-2024-0042-ACME-EUROPE-WEST-0000017a3".into()),
        ..sample()
    };
    assert_eq!(plain_id.id.as_deref().map(str::len), Some(40));
    let plain_cursor = codec().encode_at(&plain_id, 40, &query(), issued);
    println!(
        "cursor lengths: UUID-suffixed id {}, other id {}",
        uuid_cursor.len(),
        plain_cursor.len()
    );
    // 61 and 81 bytes as digits: 145 and 193 characters, 49 and 65 tokens of digits
    // whatever the signature and issue time say.
    assert_eq!(uuid_cursor.len(), 145, "{uuid_cursor}");
    assert_eq!(plain_cursor.len(), 193, "{plain_cursor}");
    assert!(uuid_cursor[1..].bytes().all(|b| b.is_ascii_digit()));
    // The test's own reading of the format agrees with the codec's.
    assert_eq!(dec_encode(&dec_decode(&uuid_cursor)), uuid_cursor);
    let later = codec().encode_at(&uuid_id, 40, &query(), issued + 86_400 * 365);
    assert_eq!(
        crate::walk::tokens(&later),
        crate::walk::tokens(&uuid_cursor)
    );
}

#[test]
fn sql_predicates_for_every_kind_of_position() {
    let at = |rank: Option<KeyValue>, id: Option<&str>, order| Keyset {
        rank,
        id: id.map(str::to_owned),
        order,
    };
    let cases = [
        (Keyset::start(Order::Desc), "1 = 1", 0),
        (at(None, Some("a"), Order::Asc), "id > ?", 1),
        (
            at(Some(KeyValue::Int(3)), Some("a"), Order::Asc),
            "(score, id) > (?, ?)",
            2,
        ),
        (
            at(Some(KeyValue::Int(3)), Some("a"), Order::Desc),
            "((score, id) < (?, ?) OR score IS NULL)",
            2,
        ),
        (at(Some(KeyValue::Int(3)), None, Order::Asc), "score > ?", 1),
        (
            at(Some(KeyValue::Int(3)), None, Order::Desc),
            "(score < ? OR score IS NULL)",
            1,
        ),
        (
            at(Some(KeyValue::Null), Some("a"), Order::Asc),
            "((score IS NULL AND id > ?) OR score IS NOT NULL)",
            1,
        ),
        (
            at(Some(KeyValue::Null), Some("a"), Order::Desc),
            "(score IS NULL AND id < ?)",
            1,
        ),
        (
            at(Some(KeyValue::Null), None, Order::Asc),
            "score IS NOT NULL",
            0,
        ),
        (at(Some(KeyValue::Null), None, Order::Desc), "1 = 0", 0),
    ];
    for (keyset, sql, params) in cases {
        let p = keyset.sql_predicate("score", "id").expect("plain columns");
        assert_eq!(
            (p.sql.as_str(), p.params.len()),
            (sql, params),
            "{keyset:?}"
        );
    }
    let not_null = SqlOptions {
        placeholders: Placeholders::Dollar { first: 2 },
        rank_nullable: false,
    };
    let p = at(Some(KeyValue::Int(3)), Some("a"), Order::Desc)
        .sql_predicate_with("score", "id", &not_null);
    assert_eq!(p.map(|p| p.sql), Ok("(score, id) < ($2, $3)".to_owned()));
    let bad = Keyset::start(Order::Asc).sql_predicate("score; DROP TABLE items", "id");
    assert!(bad.is_err_and(|e| e.to_string().contains("never text from a request")));
}

#[test]
fn after_cursor_on_an_empty_or_exhausted_slice_is_empty() {
    let items: Vec<Newest> = Vec::new();
    assert!(after_cursor(&items, &sample()).is_empty());
    let items = vec![Newest {
        id: "a".into(),
        score: Some(1),
    }];
    assert_eq!(after_cursor(&items, &Keyset::start(Order::Desc)).len(), 1);
    assert!(after_cursor(&items, &Keyset::after(&items[0])).is_empty());
}

fn codec_plain() -> CursorCodec {
    codec()
}

fn held_codec(capacity: usize) -> CursorCodec {
    CursorCodec::new(CursorKeys::new(KEY).expect("key"))
        .held_in(MemoryCursorStore::new(capacity, Duration::from_secs(3_600)))
}

/// What a model copying a string out of an answer gets wrong: each character changed to
/// every other base64url character, each character dropped, each character doubled.
fn miscopies(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, at) in text.char_indices() {
        let (before, after) = (&text[..i], &text[i + at.len_utf8()..]);
        for c in ALPHABET.iter().map(|&c| char::from(c)).filter(|&c| c != at) {
            out.push(format!("{before}{c}{after}"));
        }
        out.push(format!("{before}{after}"));
        out.push(format!("{before}{at}{at}{after}"));
    }
    out
}

#[test]
fn held_cursors_are_38_characters_with_every_guarantee() {
    let codec = held_codec(1_000);
    let cursor = codec.encode_at(&sample(), 40, &query(), 1_000_000);
    assert_eq!(cursor.len(), 38, "{cursor}");
    assert_eq!(toolshape::__seams::cursor::HELD_CURSOR_CHARS, 38);
    assert!(cursor[1..].bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(dec_decode(&cursor).len(), 15);
    let position = codec
        .decode_at(&cursor, &query(), 1_000_010)
        .expect("decodes");
    assert_eq!((position.keyset, position.shown), (sample(), 40));
    assert_eq!(position.issued_at_unix, 1_000_000);
    // Bound to the query.
    let other = QueryHash::of("search_tickets", &json!({"status": "closed"})).expect("hash");
    assert_eq!(
        codec.decode_at(&cursor, &other, 1_000_010),
        Err(CursorError::ForeignQuery)
    );
    // Expiring: the issue time is held with the position.
    let aging = codec.clone().max_age(Duration::from_secs(600));
    assert!(aging.decode_at(&cursor, &query(), 1_000_600).is_ok());
    assert_eq!(
        aging.decode_at(&cursor, &query(), 1_000_601),
        Err(CursorError::Expired {
            age_secs: 601,
            max_age_secs: 600
        })
    );
    // A position the store no longer holds: evicted by a store of one.
    let small = held_codec(1);
    let first = small.encode(&sample(), 40, &query());
    let later = Keyset {
        id: Some("tkt_00000000-0000-4000-8000-000000000000".into()),
        ..sample()
    };
    let second = small.encode(&later, 80, &query());
    assert_eq!(small.decode(&first, &query()), Err(CursorError::Forgotten));
    assert_eq!(small.decode(&second, &query()).map(|p| p.keyset), Ok(later));
    // A stateless cursor still reads with a held codec; a held one, presented to a codec
    // without the store (another process with the same key), is not held there, and says so.
    let stateless = codec_plain().encode(&sample(), 40, &query());
    assert_eq!(
        codec.decode(&stateless, &query()).map(|p| p.keyset),
        Ok(sample())
    );
    assert_eq!(
        self::codec().decode(&cursor, &query()),
        Err(CursorError::Forgotten)
    );
}

#[test]
fn held_cursors_rotate_keys_like_signed_ones() {
    let store = Arc::new(MemoryCursorStore::new(100, Duration::from_secs(3_600)));
    check_rotation(|keys| CursorCodec::new(keys).held_in(Arc::clone(&store)));
}

/// A cursor or handle copied by a model-like process (one character changed, dropped or
/// doubled) is refused with the remedy, never read as another position or result, even with
/// the store full of neighbouring positions.
#[test]
fn miscopied_cursors_and_handles_are_refused_with_the_remedy() {
    let held = held_codec(10_000);
    // Neighbours: the positions a miscopy would most plausibly land on.
    for n in 0..200u64 {
        let k = Keyset {
            id: Some(format!("tkt_{n:08x}-2d18-4b6e-9c05-8ab3f2e17d90")),
            ..sample()
        };
        held.encode(&k, n, &query());
    }
    for (name, codec) in [("held", held), ("signed", codec())] {
        let cursor = codec.encode(&sample(), 40, &query());
        let copies = miscopies(&cursor);
        assert_eq!(copies.len(), cursor.len() * 65);
        for copy in &copies {
            match codec.decode(copy, &query()) {
                Err(e) => assert!(
                    e.to_string().contains("again without a cursor"),
                    "{name}: {copy}: {e}"
                ),
                Ok(p) => panic!("{name}: the miscopy {copy} of {cursor} read as {p:?}"),
            }
        }
        assert!(codec.decode(&cursor, &query()).is_ok(), "{name}");
    }

    use toolshape::handle::{HandleError, HandlePolicy, HandleStore, MemoryStore, StoredResult};
    let store = MemoryStore::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut handles = Vec::new();
    for _ in 0..50 {
        let result = StoredResult::new("search_tickets", "ticket", "tickets");
        let handle = rt
            .block_on(store.put("alice", result, &HandlePolicy::default()))
            .expect("stored");
        handles.push(handle.to_string());
    }
    let handle = &handles[0];
    assert_eq!(handle.len(), 32);
    for copy in miscopies(handle) {
        let refused = match copy.parse() {
            Err(e) => e,
            Ok(parsed) => match rt.block_on(store.get("alice", &parsed)) {
                Err(e) => e,
                Ok(_) => panic!("the miscopy {copy} of {handle} opened a stored result"),
            },
        };
        assert_eq!(refused, HandleError::NotFound, "{copy}");
        assert!(refused.to_string().contains("copied exactly"), "{refused}");
    }
}

// ---------------------------------------------------------------------------------------
// Held cursors in Redis: one replica's cursor opens on another.
// ---------------------------------------------------------------------------------------

/// A replica's Redis cursor store under `prefix` (each test a prefix of its own).
fn redis_replica(
    url: &str,
    prefix: &str,
    ttl: Duration,
) -> Arc<toolshape::cursor::RedisCursorStore> {
    Arc::new(
        toolshape::cursor::RedisCursorStore::builder(url)
            .key_prefix(prefix)
            .ttl(ttl)
            .connect()
            .expect("SHAPE_REDIS_URL names a running Redis"),
    )
}

/// A replica: a codec holding positions in its own Redis cursor store, and the store. A
/// position is in Redis once `encode` returns: another replica reads it at once.
fn redis_codec(
    url: &str,
    prefix: &str,
    ttl: Duration,
) -> (CursorCodec, Arc<toolshape::cursor::RedisCursorStore>) {
    let store = redis_replica(url, prefix, ttl);
    let codec = CursorCodec::new(CursorKeys::new(KEY).expect("key")).held_in(Arc::clone(&store));
    (codec, store)
}

fn fresh_prefix() -> String {
    format!(
        "shape-test-{}",
        toolshape::handle::Handle::random().expect("randomness")
    )
}

#[test]
fn held_cursors_open_on_every_replica_sharing_a_redis_cursor_store() {
    let Some(url) = crate::handle::redis_url() else {
        return;
    };
    let prefix = fresh_prefix();
    let hour = Duration::from_secs(3_600);
    let replica = |ttl| redis_codec(&url, &prefix, ttl).0;
    let (a, _) = redis_codec(&url, &prefix, hour);
    let b = replica(hour);
    // Positions issued by A open on B, which has never seen them, the moment A hands each
    // cursor out: each is read right after it is issued, and all of them again after.
    let positions: Vec<(Keyset, u64)> = (0..50u64)
        .map(|n| {
            let k = Keyset {
                id: Some(format!("tkt_{n:08x}-2d18-4b6e-9c05-8ab3f2e17d90")),
                rank: Some(KeyValue::Int(1_740_000_000 - n as i64)),
                ..sample()
            };
            (k, n * 25)
        })
        .collect();
    let cursors: Vec<String> = positions
        .iter()
        .map(|(k, n)| {
            let cursor = a.encode(k, *n, &query());
            let read = b
                .decode(&cursor, &query())
                .expect("opens at once elsewhere");
            assert_eq!((&read.keyset, read.shown), (k, *n));
            cursor
        })
        .collect();
    for (cursor, (k, n)) in cursors.iter().zip(&positions) {
        assert_eq!(
            cursor.len(),
            toolshape::__seams::cursor::HELD_CURSOR_CHARS,
            "{cursor}"
        );
        let read = b
            .decode(cursor, &query())
            .expect("opens on the other replica");
        assert_eq!((&read.keyset, read.shown), (k, *n));
    }
    // Bound to the query there too.
    let other = QueryHash::of("search_tickets", &json!({"status": "closed"})).expect("hash");
    assert_eq!(
        b.decode(&cursors[0], &other),
        Err(CursorError::ForeignQuery)
    );
    // A miscopy is refused on a replica that reads it from Redis, never read as another
    // position (the 50 positions above are its neighbours).
    let c = replica(hour);
    for copy in miscopies(&cursors[7]) {
        match c.decode(&copy, &query()) {
            Err(e) => assert!(
                e.to_string().contains("again without a cursor"),
                "{copy}: {e}"
            ),
            Ok(p) => panic!("the miscopy {copy} of {} read as {p:?}", cursors[7]),
        }
    }
    // A position changed in Redis behind the store's back (another position's value under
    // this token) reads as forgotten, never as the other position.
    let mut conn = redis::Client::open(url.as_str())
        .and_then(|c| c.get_connection())
        .expect("connects");
    let token = |cursor: &str| {
        let bytes = dec_decode(cursor);
        b64_encode(&bytes[1..9])
    };
    let other_value: Vec<u8> = redis::cmd("GET")
        .arg(format!("{prefix}:c:{}", token(&cursors[1])))
        .query(&mut conn)
        .expect("held in Redis");
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}:c:{}", token(&cursors[2])))
        .arg(other_value)
        .query(&mut conn)
        .expect("overwritten");
    assert_eq!(
        replica(hour).decode(&cursors[2], &query()),
        Err(CursorError::Forgotten)
    );
    // Redis expires positions after the store's TTL: a replica that only has Redis to ask
    // then says the cursor is forgotten.
    let (short, _) = redis_codec(&url, &prefix, Duration::from_secs(1));
    let brief = short.encode(&sample(), 5, &query());
    assert!(replica(hour).decode(&brief, &query()).is_ok());
    std::thread::sleep(Duration::from_millis(1_300));
    assert_eq!(
        replica(hour).decode(&brief, &query()),
        Err(CursorError::Forgotten)
    );
    // Key rotation, as with signed cursors (one store: rotation is the codec's).
    let shared = redis_replica(&url, &prefix, hour);
    check_rotation(|keys| CursorCodec::new(keys).held_in(Arc::clone(&shared)));
}

/// With Redis down, a replica still opens the cursors it issued, one that must ask Redis says
/// the cursor is forgotten (call again without it) within the store's timeout, and once the
/// server is back the store writes and reads again by itself.
#[test]
fn a_down_redis_cursor_store_says_unavailable_and_recovers() {
    if crate::handle::redis_url().is_none() {
        return;
    }
    let Some(bin) = std::env::var("SHAPE_REDIS_SERVER_BIN")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        crate::handle::skipped(
            "SHAPE_REDIS_SERVER_BIN is not set (a redis-server this test may kill)",
        );
        return;
    };
    let mut server = crate::handle::Server::start(&bin);
    let url = server.url();
    let prefix = fresh_prefix();
    let hour = Duration::from_secs(3_600);
    let replica = || redis_codec(&url, &prefix, hour);
    let ((a, _), (b, _)) = (replica(), replica());
    let before = a.encode(&sample(), 10, &query());
    assert!(b.decode(&before, &query()).is_ok());

    server.stop();
    let issued_while_down = a.encode(&sample(), 20, &query());
    let started = std::time::Instant::now();
    // The replica that issued it still opens it; the other cannot ask Redis.
    assert_eq!(
        a.decode(&issued_while_down, &query()).map(|p| p.shown),
        Ok(20)
    );
    // The other cannot ask Redis: unavailable (try again shortly), not forgotten.
    let refused = b.decode(&issued_while_down, &query());
    assert_eq!(refused, Err(CursorError::Unavailable));
    let said = refused.unwrap_err().to_string();
    assert!(said.contains("unavailable"), "{said}");
    assert!(
        said.contains("call again shortly with the same cursor"),
        "{said}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Connecting a new replica to a down server is an error that says what to check.
    let err = toolshape::cursor::RedisCursorStore::builder(&url)
        .connect()
        .expect_err("the server is down");
    assert!(
        err.to_string().contains("check that it is running"),
        "{err}"
    );

    assert!(server.restart(), "redis-server restarts on its port");
    // The store reconnects by itself (at most a second after its last failure), however long
    // ago that failure was.
    std::thread::sleep(Duration::from_millis(1_500));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let after = a.encode(&sample(), 30, &query());
        match replica().0.decode(&after, &query()) {
            Ok(p) => {
                assert_eq!(p.shown, 30);
                break;
            }
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("the store did not recover: {e}"),
        }
    }
    // Redis restarted empty: the position issued while it was down was never written there,
    // so another replica reads it as forgotten (start again), the replica that issued it
    // still as itself.
    assert_eq!(
        replica().0.decode(&issued_while_down, &query()),
        Err(CursorError::Forgotten)
    );
    assert_eq!(
        a.decode(&issued_while_down, &query()).map(|p| p.shown),
        Ok(20)
    );
}

/// A query's hash is pinned to its definition (SHA-256 of `shape.query.v1\0`, the tool's
/// length as 8 little-endian bytes, the tool, then the arguments as compact JSON with every
/// object's keys sorted), so a cursor issued before an upgrade still opens after it. The
/// expected digest was computed apart, with Python's `hashlib` and `json.dumps(args,
/// sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
#[test]
fn a_query_hash_is_the_documented_digest() {
    let args = json!({
        "status": "open",
        "org": {"name": "Acme", "ids": [3, 1, 2]},
        "q": "naïve \"quoted\"",
        "limit": 20,
    });
    let hash = QueryHash::of("search_tickets", &args).unwrap();
    let hex: String = hash.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "18d7cdb388c53fc432766e5e262ef7fac2ab5149b73b3737fca4891d5cc3be96"
    );
    assert_eq!(format!("{hash:?}"), "QueryHash(18d7cdb388c53fc4…)");
}

/// A cursor past 4,096 characters is refused as malformed before it is decoded or checked,
/// even one that starts as a real cursor does: what a model pasted wrong is named as such,
/// not as tampering, and a long string costs nothing to refuse.
#[test]
fn a_cursor_past_the_longest_is_malformed_whatever_it_starts_with() {
    let cursor = codec().encode(&sample(), 40, &query());
    for len in [4_097, 4_100, 40_000] {
        let mut long = cursor.clone();
        while long.len() < len {
            long.push('A');
        }
        assert_eq!(
            codec().decode(&long, &query()).err(),
            Some(CursorError::Malformed),
            "{len} characters"
        );
    }
}

/// The longest cursor that is read opens: the longest signed one under 4,096 characters (a
/// long id), and one byte more of id is held instead.
#[test]
fn a_cursor_of_exactly_the_longest_opens() {
    let keyset = |len| Keyset {
        rank: Some(KeyValue::Int(7)),
        id: Some("i".repeat(len)),
        order: Order::Desc,
    };
    let lengths: Vec<(usize, usize)> = (1_600..1_750)
        .map(|len| (len, codec().encode(&keyset(len), 40, &query()).len()))
        .collect();
    let &(longest, chars) = lengths
        .iter()
        .filter(|(_, chars)| *chars > toolshape::__seams::cursor::HELD_CURSOR_CHARS)
        .max_by_key(|(_, chars)| *chars)
        .expect("signed cursors");
    assert!((4_080..=4_096).contains(&chars), "{chars}");
    let cursor = codec().encode(&keyset(longest), 40, &query());
    let position = codec().decode(&cursor, &query()).expect("opens");
    assert_eq!((position.keyset, position.shown), (keyset(longest), 40));
    let next = lengths
        .iter()
        .find(|(len, _)| *len == longest + 1)
        .expect("one more");
    assert_eq!(next.1, toolshape::__seams::cursor::HELD_CURSOR_CHARS);
}

/// A position too long for a cursor (a rank key or id of over about 3,000 bytes) is held on
/// the server and named by a 38-character cursor: every cursor handed out reads back, with
/// every check a signed cursor has, and another process says it does not hold it.
#[test]
fn a_position_too_long_for_a_cursor_is_held_and_reads_back() {
    let process = codec();
    let other = QueryHash::of("search_tickets", &json!({"status": "closed"})).expect("hashable");
    let mut held = 0;
    for len in (1_500..2_000).step_by(3).chain([10_000, 1_000_000]) {
        for keyset in [
            Keyset {
                rank: Some(KeyValue::Int(7)),
                id: Some("i".repeat(len)),
                order: Order::Desc,
            },
            Keyset {
                rank: Some(KeyValue::Str("é".repeat(len / 2))),
                id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
                order: Order::Asc,
            },
        ] {
            let cursor = process.encode(&keyset, 40, &query());
            assert!(cursor.len() <= 4_096, "{len}: {} characters", cursor.len());
            let position = process
                .clone()
                .decode(&cursor, &query())
                .expect("reads back");
            assert_eq!((&position.keyset, position.shown), (&keyset, 40), "{len}");
            if cursor.len() == toolshape::__seams::cursor::HELD_CURSOR_CHARS {
                held += 1;
                // Another codec of the process reads it; another process does not.
                assert!(codec().decode(&cursor, &query()).is_ok());
                assert_eq!(
                    codec().own_memory().decode(&cursor, &query()),
                    Err(CursorError::Forgotten)
                );
                assert_eq!(
                    process.decode(&cursor, &other),
                    Err(CursorError::ForeignQuery)
                );
                let mut altered = cursor.clone().into_bytes();
                altered[12] = if altered[12] == b'0' { b'1' } else { b'0' };
                let altered = String::from_utf8(altered).expect("ASCII");
                assert_eq!(
                    process.decode(&altered, &query()),
                    Err(CursorError::Tampered)
                );
            } else {
                // Not held: any process with the key reads it.
                assert_eq!(codec().decode(&cursor, &query()), Ok(position));
            }
        }
    }
    assert!(held > 100, "{held} positions held");
}

/// A memory store holds at most its bytes of positions, the oldest forgotten first; the same
/// position put again (every page's sizing does) counts once. A codec without a store holds
/// the positions too long for a cursor within 16 MiB.
#[test]
fn held_positions_are_bounded_in_bytes() {
    let store =
        Arc::new(MemoryCursorStore::new(1_000, Duration::from_secs(3_600)).max_bytes(10_000));
    let codec = CursorCodec::new(CursorKeys::new(KEY).expect("key")).held_in(Arc::clone(&store));
    let at = |page: usize| Keyset {
        rank: None,
        id: Some(format!("{page}-{}", "x".repeat(3_000))),
        order: Order::Asc,
    };
    // One issue time for the repeated puts: a cursor names its issue second, so puts either
    // side of a second's turn are two positions (this test failed in CI on a slow machine).
    let issued = unix_now();
    let first = codec.encode_at(&at(0), 20, &query(), issued);
    for _ in 0..50 {
        assert_eq!(codec.encode_at(&at(0), 20, &query(), issued), first);
    }
    assert_eq!(store.len(), 1);
    let second = codec.encode(&at(1), 40, &query());
    let third = codec.encode(&at(2), 60, &query());
    assert_eq!(store.len(), 3, "three positions of 3 KB in 10,000 bytes");
    // Debug shows the settings and the count, never the positions (a logged codec must not
    // dump megabytes of keys).
    assert_eq!(
        format!("{store:?}"),
        "MemoryCursorStore { capacity: 1000, max_bytes: 10000, ttl_secs: 3600, held: 3 }"
    );
    let shown = format!("{codec:?}");
    assert!(shown.len() < 1_000, "{} characters", shown.len());
    assert_eq!(codec.decode(&first, &query()).map(|p| p.keyset), Ok(at(0)));
    let fourth = codec.encode(&at(3), 80, &query());
    assert_eq!(store.len(), 3);
    assert_eq!(codec.decode(&first, &query()), Err(CursorError::Forgotten));
    for (cursor, page) in [(second, 1), (third, 2), (fourth, 3)] {
        assert_eq!(
            codec.decode(&cursor, &query()).map(|p| p.keyset),
            Ok(at(page))
        );
    }
    // A position larger than the whole bound is not held, and says so.
    let huge = codec.encode(
        &Keyset {
            rank: None,
            id: Some("y".repeat(20_000)),
            order: Order::Asc,
        },
        1,
        &query(),
    );
    assert_eq!(codec.decode(&huge, &query()), Err(CursorError::Forgotten));

    // Without a store: seventy positions of a mebibyte each, of which the codec holds the
    // latest that fit in 64 MiB (in memory of its own here, not the process's, which the
    // other tests share).
    let plain = self::codec().own_memory();
    let big = |page: usize| Keyset {
        rank: None,
        id: Some(format!("{page:02}{}", "z".repeat(1 << 20))),
        order: Order::Asc,
    };
    let cursors: Vec<String> = (0..70)
        .map(|page| plain.encode(&big(page), 1, &query()))
        .collect();
    let read: Vec<bool> = cursors
        .iter()
        .map(|c| plain.decode(c, &query()).is_ok())
        .collect();
    assert_eq!(read.iter().filter(|r| **r).count(), 63, "{read:?}");
    assert!(
        read[7..].iter().all(|r| *r),
        "the latest are held: {read:?}"
    );
    assert_eq!(
        plain.decode(&cursors[0], &query()),
        Err(CursorError::Forgotten)
    );
}

/// What the robustness tests and fuzz targets sign (`__private::sign_cursor_body`) is what
/// the codec signs: a real cursor's body signed again is that cursor, so a malformed body
/// they sign reaches the parser rather than failing its tag.
#[test]
fn a_body_signed_for_the_fuzzers_is_a_real_cursor() {
    for keyset in [sample(), Keyset::start(Order::Asc)] {
        let cursor = codec().encode_at(&keyset, 40, &query(), 1_767_225_600);
        let bytes = dec_decode(&cursor);
        let body = &bytes[..bytes.len() - 16];
        assert_eq!(
            toolshape::__private::sign_cursor_body(&codec(), body, &query()),
            cursor
        );
    }
}

/// A cursor carries the time it was issued, read from the clock: what `max_age` is checked
/// against.
#[test]
fn a_cursor_is_issued_now() {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs()
    };
    let before = now();
    let cursor = codec().encode(&sample(), 40, &query());
    let issued = codec()
        .decode(&cursor, &query())
        .expect("reads")
        .issued_at_unix;
    assert!((before..=now()).contains(&issued), "{before} {issued}");
}

/// Seconds since the Unix epoch, as a cursor states its issue time.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// A memory store's count bound is of positions, not of puts: a position put again and again
/// (each page's sizing does) pushes out no other. Its time to live is whole seconds: with
/// none, a position is held for the second it was put and gone after.
#[test]
fn a_memory_store_counts_positions_and_ages_them_out() {
    let store = Arc::new(MemoryCursorStore::new(10, Duration::from_secs(3_600)));
    assert!(store.is_empty());
    let codec = CursorCodec::new(CursorKeys::new(KEY).expect("key")).held_in(Arc::clone(&store));
    let first = codec.encode(&sample(), 1, &query());
    let other = Keyset {
        id: Some("tkt_00000000-0000-4000-8000-000000000000".into()),
        ..sample()
    };
    // One issue time: puts either side of a second's turn would be two positions.
    let issued = unix_now();
    for _ in 0..45 {
        codec.encode_at(&other, 2, &query(), issued);
    }
    assert_eq!((store.len(), store.is_empty()), (2, false));
    assert_eq!(
        codec.decode(&first, &query()).map(|p| p.keyset),
        Ok(sample())
    );
    // Past the re-puts, the bound still holds: 30 more positions leave the latest 10.
    let at = |i: usize| Keyset {
        id: Some(format!("tkt_{i:08}")),
        ..sample()
    };
    let later: Vec<String> = (0..30).map(|i| codec.encode(&at(i), 3, &query())).collect();
    assert_eq!(store.len(), 10);
    assert_eq!(codec.decode(&first, &query()), Err(CursorError::Forgotten));
    for (i, cursor) in later.iter().enumerate() {
        let read = codec.decode(cursor, &query()).map(|p| p.keyset);
        if i < 20 {
            assert_eq!(read, Err(CursorError::Forgotten), "{i}");
        } else {
            assert_eq!(read, Ok(at(i)), "{i}");
        }
    }

    let brief = Arc::new(MemoryCursorStore::new(10, Duration::ZERO));
    let codec = CursorCodec::new(CursorKeys::new(KEY).expect("key")).held_in(Arc::clone(&brief));
    let first = codec.encode(&sample(), 1, &query());
    assert_eq!(brief.len(), 1, "held for the second it was put");
    std::thread::sleep(Duration::from_millis(1_100));
    assert_eq!(codec.decode(&first, &query()), Err(CursorError::Forgotten));
    let second = codec.encode(&other, 2, &query());
    assert_eq!(brief.len(), 1, "the first aged out when the second was put");
    assert_eq!(codec.decode(&second, &query()).map(|p| p.shown), Ok(2));
}

/// The shortest cursor there is (the start, issued at 0, none shown: 25 bytes) reads back;
/// anything shorter that starts like a signed cursor is named unreadable, not altered, since
/// no signature could make it a cursor. The shortest of the first format (24 bytes of
/// base64url) reads too.
#[test]
fn the_shortest_cursor_reads_and_anything_shorter_is_unreadable() {
    let shortest = codec().encode_at(&Keyset::start(Order::Asc), 0, &query(), 0);
    let bytes = dec_decode(&shortest);
    assert_eq!(bytes.len(), 25);
    let position = codec().decode_at(&shortest, &query(), 0).expect("reads");
    assert_eq!(
        (position.keyset, position.shown),
        (Keyset::start(Order::Asc), 0)
    );
    for len in 1..25 {
        assert_eq!(
            codec().decode_at(&dec_encode(&bytes[..len]), &query(), 0),
            Err(CursorError::Malformed),
            "{len} bytes"
        );
        assert_eq!(
            codec().decode_at(&b64_encode(&bytes[..len]), &query(), 0),
            Err(CursorError::Malformed),
            "{len} bytes of base64url"
        );
    }
}

/// A Redis cursor store keeps a position for its TTL, capped at a century (Redis refuses
/// expiry times past its clock), and its `Debug` names the server and prefix, never the
/// URL's password.
#[test]
fn a_redis_cursor_store_caps_its_ttl_at_a_century_and_debugs_without_secrets() {
    let Some(url) = crate::handle::redis_url() else {
        return;
    };
    let prefix = fresh_prefix();
    let (codec, _) = redis_codec(&url, &prefix, Duration::MAX);
    let cursor = codec.encode(&sample(), 10, &query());
    let mut conn = redis::Client::open(url.as_str())
        .and_then(|c| c.get_connection())
        .expect("connects");
    let token = b64_encode(&dec_decode(&cursor)[1..9]);
    let ttl_ms: i64 = redis::cmd("PTTL")
        .arg(format!("{prefix}:c:{token}"))
        .query(&mut conn)
        .expect("PTTL");
    let year_ms: i64 = 365 * 24 * 3_600 * 1_000;
    assert!(
        (99 * year_ms..=100 * year_ms).contains(&ttl_ms),
        "{ttl_ms} ms"
    );
    let (_, hour) = redis_codec(&url, &prefix, Duration::from_secs(3_600));
    let shown = format!("{hour:?}");
    assert!(
        shown.starts_with("RedisCursorStore") && shown.contains(&prefix) && shown.contains("3600"),
        "{shown}"
    );
    let secret =
        toolshape::cursor::RedisCursorStore::builder("redis://user:s3cret-pass@127.0.0.1:1/")
            .timeout(Duration::from_millis(50))
            .connect()
            .expect_err("nothing listens on port 1");
    assert!(!secret.to_string().contains("s3cret"), "{secret}");
}

/// A memory store at its capacity evicts the position put least recently: a token put again
/// counts from its latest put (its earlier place in the queue is stale), and a store behind
/// an `Arc` reads through to the store.
#[test]
fn a_memory_store_evicts_by_latest_put_and_reads_through_an_arc() {
    use toolshape::__seams::cursor::HELD_TOKEN_LEN;
    use toolshape::cursor::CursorStore;
    let store = Arc::new(MemoryCursorStore::new(2, Duration::from_secs(3_600)));
    let token = |b: u8| [b; HELD_TOKEN_LEN];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    store.put(token(1), b"a1".to_vec(), now);
    store.put(token(2), b"b".to_vec(), now);
    store.put(token(1), b"a2".to_vec(), now);
    store.put(token(3), b"c".to_vec(), now);
    // Two held: the re-put `1` (latest) and `3`; `2` was the least recently put.
    assert_eq!(CursorStore::get(&store, &token(1)), Some(b"a2".to_vec()));
    assert_eq!(CursorStore::get(&store, &token(2)), None);
    assert_eq!(CursorStore::get(&store, &token(3)), Some(b"c".to_vec()));
    assert_eq!(
        CursorStore::fetch(&store, &token(3)),
        Ok(Some(b"c".to_vec()))
    );
    assert_eq!(store.len(), 2);
}
