use super::codec::*;
use super::keys::*;
use super::position::Position;
use super::sql::*;
use super::wire::*;
use super::*;
use crate::fields::rank::{KeyValue, Order};

fn codec() -> CursorCodec {
    CursorCodec::new(CursorKeys::new([7u8; 32]).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn varints_round_trip_at_the_edges() {
    for v in [
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        u64::from(u32::MAX),
        u64::MAX - 1,
        u64::MAX,
    ] {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        assert_eq!(Reader { rest: &out }.varint(), Some(v), "{v}");
    }
    for v in [0, 1, -1, i64::MIN, i64::MAX, 1_740_000_000_000_000_000] {
        assert_eq!(unzigzag(zigzag(v)), v);
    }
    // Eleven continuation bytes, and a tenth byte that would overflow: refused.
    assert_eq!(Reader { rest: &[0xff; 11] }.varint(), None);
    let mut overflow = vec![0xff; 9];
    overflow.push(0x02);
    assert_eq!(Reader { rest: &overflow }.varint(), None);
}

#[test]
fn uuid_ids_pack_and_unpack_exactly() {
    let id = "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90";
    let (prefix, bytes) = split_uuid(id).unwrap_or_else(|| panic!("not packed"));
    let mut back = prefix.to_owned();
    push_uuid(&mut back, bytes);
    assert_eq!(back, id);
    // Uppercase, wrong dashes or non-hex stay text so decoding gives back the same id.
    for id in [
        "tkt_9F3A71C4-2D18-4B6E-9C05-8AB3F2E17D90",
        "tkt_9f3a71c42d18-4b6e-9c05-8ab3f2e17d90-",
        "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d9g",
        "short",
        "ééééééééééééééééééééééééééééééééééééé",
    ] {
        assert!(split_uuid(id).is_none(), "{id}");
    }
}

#[test]
fn every_rank_kind_round_trips() {
    let query = QueryHash([3; 32]);
    let ranks = [
        None,
        Some(KeyValue::Null),
        Some(KeyValue::Bool(false)),
        Some(KeyValue::Bool(true)),
        Some(KeyValue::Int(-5)),
        Some(KeyValue::UInt(u64::MAX)),
        Some(KeyValue::Float(-0.25)),
        Some(KeyValue::Str("2025-03-01T10:00:00Z".into())),
    ];
    for rank in ranks {
        for id in [
            None,
            Some("x".to_owned()),
            Some("a-00000000-0000-0000-0000-000000000000".to_owned()),
        ] {
            for order in [Order::Asc, Order::Desc] {
                let keyset = Keyset {
                    rank: rank.clone(),
                    id: id.clone(),
                    order,
                };
                let text = codec().encode_at(&keyset, 41, &query, 1_700_000_000);
                let position = codec().decode_at(&text, &query, 1_700_000_000);
                assert_eq!(
                    position,
                    Ok(Position {
                        keyset,
                        shown: 41,
                        skipped: 0,
                        issued_at_unix: 1_700_000_000,
                        upstream: None,
                        handle: None,
                    })
                );
            }
        }
    }
}

#[test]
#[cfg(feature = "test-seams")]
fn unused_flag_bits_and_trailing_bytes_are_refused_even_when_signed() {
    let query = QueryHash([1; 32]);
    let keyset = Keyset {
        rank: Some(KeyValue::Int(1)),
        id: Some("a".into()),
        order: Order::Asc,
    };
    let text = codec().encode_at(&keyset, 1, &query, 5);
    let bytes = crate::text::digits::decode(&text[1..]).unwrap_or_default();
    let body = &bytes[..bytes.len() - TAG_LEN];
    let resign = |body: &[u8]| codec().sign_raw(body, &query);
    let mut flagged = body.to_vec();
    flagged[1] |= 0x80;
    assert_eq!(
        codec().decode_at(&resign(&flagged), &query, 5),
        Err(CursorError::Malformed)
    );
    // An extension bit no version knows, and a skipped count of zero (never written).
    let mut extended = body.to_vec();
    extended[2] |= 0x80;
    assert_eq!(
        codec().decode_at(&resign(&extended), &query, 5),
        Err(CursorError::Malformed)
    );
    let mut zero_skipped = body.to_vec();
    zero_skipped[2] |= EXT_SKIPPED;
    zero_skipped.insert(HEADER_2_LEN + 2, 0);
    assert_eq!(
        codec().decode_at(&resign(&zero_skipped), &query, 5),
        Err(CursorError::Malformed)
    );
    let mut longer = body.to_vec();
    longer.push(0);
    assert_eq!(
        codec().decode_at(&resign(&longer), &query, 5),
        Err(CursorError::Malformed)
    );
    assert!(codec().decode_at(&resign(body), &query, 5).is_ok());
}

#[test]
#[cfg(feature = "test-seams")]
fn upstream_positions_round_trip_and_refuse_what_does_not_parse() {
    let query = QueryHash([9; 32]);
    for page in [
        None,
        Some(String::new()),
        Some("https://api.github.com/repos/o/r/issues?page=3&per_page=30".to_owned()),
        Some("é".repeat(MAX_UPSTREAM_BYTES / 2)),
    ] {
        for skip in [0, 1, 29, u64::MAX] {
            let at = UpstreamPosition {
                page: page.clone(),
                skip,
            };
            let text = codec().encode_upstream_at(&at, 7, &query, 11);
            assert!(text.len() <= MAX_CURSOR_CHARS, "{}", text.len());
            let position = codec().decode_at(&text, &query, 11);
            assert_eq!(
                position,
                Ok(Position {
                    keyset: Keyset::start(Order::Asc),
                    shown: 7,
                    skipped: 0,
                    issued_at_unix: 11,
                    upstream: Some(at),
                    handle: None,
                })
            );
        }
    }
    // A signed body whose continuation runs past the end, or is not UTF-8, is refused.
    let at = UpstreamPosition {
        page: Some("abc".into()),
        skip: 2,
    };
    let text = codec().encode_upstream_at(&at, 7, &query, 11);
    let bytes = crate::text::digits::decode(&text[1..]).unwrap_or_default();
    let body = &bytes[..bytes.len() - TAG_LEN];
    let resign = |body: &[u8]| codec().sign_raw(body, &query);
    let page_at = body.len() - 5; // length byte, "abc", skip
    let mut long = body.to_vec();
    long[page_at] = 40;
    let mut invalid = body.to_vec();
    invalid[page_at + 1] = 0xff;
    for bad in [long, invalid, body[..body.len() - 1].to_vec()] {
        assert_eq!(
            codec().decode_at(&resign(&bad), &query, 11),
            Err(CursorError::Malformed)
        );
    }
    assert!(codec().decode_at(&resign(body), &query, 11).is_ok());
}

#[test]
fn a_cursor_of_the_first_format_still_reads_and_the_format_now_is_pinned() {
    let query = QueryHash([5; 32]);
    let keyset = Keyset {
        rank: Some(KeyValue::Str("2025-03-01".into())),
        id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
        order: Order::Desc,
    };
    let position = Position {
        keyset: keyset.clone(),
        shown: 20,
        skipped: 0,
        issued_at_unix: 1_700_000_000,
        upstream: None,
        handle: None,
    };
    // Issued by version 1 (base64url, no extension byte): still read.
    let first = "AT8FBQUFgOLPqgYUCjIwMjUtMDMtMDEEdGt0X586ccQtGEtunAWKs_LhfZC74U954UKP7jx_p0d3qkyp";
    assert_eq!(
        codec().decode_at(first, &query, 1_700_000_000),
        Ok(position.clone())
    );
    // Written now: version 2 as digits. A change to this text is a change of format.
    let now = codec().encode_at(&keyset, 20, &query, 1_700_000_000);
    assert_eq!(now, PINNED_V2);
    assert_eq!(codec().decode_at(&now, &query, 1_700_000_000), Ok(position));
}

const PINNED_V2: &str = "c00632219270186245362781785575966821412674103418475512719361038248820269151961531138802123223964022885063469927346144858611983934087342390371350503631";

#[test]
fn sql_columns_must_be_identifiers() {
    for ok in ["id", "t.updated_at", "\"Updated At\"", "_x1"] {
        assert_eq!(checked_column(ok), Ok(ok));
    }
    for bad in [
        "",
        "id; drop table t",
        "a.",
        "1a",
        "\"\"",
        "\"a\"b\"",
        "a -- x",
        "a,b",
    ] {
        assert!(checked_column(bad).is_err(), "{bad}");
    }
}
