//! Unit tests of the parts that are not public.

use super::links::*;
use super::neutralise::*;
use super::sanitise::*;
use crate::budget::tokens::{Tiktoken, Tokenizer};
use std::borrow::Cow;

/// The longest token of a vocabulary, in bytes, read from the vocabulary itself.
fn longest_token(bpe: &tiktoken_rs::CoreBPE) -> (usize, u32) {
    let mut longest = (0, 0);
    let mut misses = 0;
    for rank in 0u32.. {
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) => {
                misses = 0;
                if bytes.len() > longest.0 {
                    longest = (bytes.len(), rank);
                }
            }
            Err(_) => {
                misses += 1;
                if misses > 10_000 {
                    break;
                }
            }
        }
    }
    longest
}

#[test]
fn untrusted_max_token_bytes_covers_the_longest_token() {
    for tok in [Tiktoken::o200k_base(), Tiktoken::cl100k_base()] {
        let bpe = match tok.encoding() {
            crate::budget::tokens::Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            crate::budget::tokens::Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        let (len, rank) = longest_token(bpe);
        eprintln!("{}: longest token {len} bytes (rank {rank})", tok.name());
        assert!(
            len <= tok.max_token_bytes(),
            "{}: {len} > {}",
            tok.name(),
            tok.max_token_bytes()
        );
    }
}

#[test]
fn untrusted_sanitize_borrows_plain_text_and_counts_kinds() {
    assert!(matches!(
        sanitize("plain text, tabs\tand\nnewlines").0,
        Cow::Borrowed(_)
    ));
    let (out, r) =
        sanitize("a\u{0}b\u{7f}c\u{85}d\r\ne\rf\u{2028}g\u{9b}31mh\u{1b}]8;;http://x\u{7}i");
    assert_eq!(out, "abc\nd\ne\nf\nghi");
    assert_eq!((r.controls, r.line_separators, r.ansi), (5, 1, 2));
}

#[test]
fn untrusted_sanitize_limit_stops_on_a_char_boundary() {
    let (out, _, consumed) = sanitize_limited("ééé\u{200B}éé", 5);
    assert_eq!((out.as_ref(), consumed), ("éé", 4));
    let (out, _, consumed) = sanitize_limited("ab\u{200B}cdef", 4);
    assert_eq!((out.as_ref(), consumed), ("abcd", 7));
}

#[test]
fn untrusted_variation_selectors_keep_one_after_a_base() {
    let (out, r) = sanitize("\u{2764}\u{FE0F}\u{FE0F}\u{FE00}x\u{E0100}\u{845B}\u{E0100}");
    assert_eq!(out, "\u{2764}\u{FE0F}x\u{845B}\u{E0100}");
    assert_eq!(r.variation_selectors, 3);
}

#[test]
fn untrusted_flags_other_than_rgi_lose_their_tags() {
    let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
    assert_eq!(sanitize(scotland).0, scotland);
    let texas = "\u{1F3F4}\u{E0075}\u{E0073}\u{E0074}\u{E0078}\u{E007F}";
    assert_eq!(
        sanitize(texas),
        (
            Cow::Owned("\u{1F3F4}".into()),
            Removed {
                tag_chars: 5,
                ..Removed::default()
            }
        )
    );
}

#[test]
fn untrusted_host_of_reads_the_authority() {
    assert_eq!(host_of("https://user:pw@a.example:8080/x?y#z"), "a.example");
    assert_eq!(host_of("//b.example/p"), "b.example");
    assert_eq!(host_of("www.c.example/p"), "www.c.example");
    assert_eq!(host_of("data:image/png;base64,AAAA"), "");
    assert_eq!(host_of("https://a\"b/"), "");
}

#[test]
fn untrusted_decode_escape_forms() {
    for (text, c) in [
        ("&lt;", '<'),
        ("&LT", '<'),
        ("&#60;", '<'),
        ("&#x3C;", '<'),
        ("&amp;amp;lt;", '<'),
        ("%3c", '<'),
        ("%253C", '<'),
        ("\\u003c", '<'),
        ("\\u{3c}", '<'),
        ("\\x3C", '<'),
        ("&sol;", '/'),
    ] {
        assert_eq!(decode_escape(text, 0), Some((c, text.len())), "{text}");
    }
    assert_eq!(decode_escape("&ltx", 0), None);
    assert_eq!(decode_escape("&#xFFFFFFFF;", 0), None);
    assert_eq!(decode_escape("%", 0), None);
    assert_eq!(decode_escape("\\u12", 0), None);
}

/// The compact-delimiter defusing as first written: a replace, then each entity found in a
/// fresh lowercase copy until none is left. Quadratic, but plainly right: the oracle.
fn guillemets_reference(text: &str) -> String {
    const LOOKALIKES: [char; 8] = ['«', '»', '≪', '≫', '⟪', '⟫', '《', '》'];
    const ENTITIES: [&str; 6] = ["&laquo;", "&raquo;", "&#171;", "&#187;", "&#xab;", "&#xbb;"];
    let mut out = text.replace(LOOKALIKES, "\"");
    for entity in ENTITIES {
        while let Some(at) = out.to_ascii_lowercase().find(entity) {
            out.replace_range(at..at + entity.len(), "\"");
        }
    }
    out
}

#[test]
fn untrusted_guillemets_match_the_reference_and_borrow_when_clean() {
    // Pieces that make and break entities and look-alikes, in every case, with their
    // neighbours in UTF-8 (same lead bytes as the look-alikes but other characters).
    const PIECES: [&str; 24] = [
        "&", "&laquo;", "&RAQUO;", "&LaQuO", ";", "#171", "&#", "&#xAB;", "&#XbB;", "&#187;", "x",
        "«", "»", "≪", "≫", "⟪", "⟫", "《", "》", "é", "≈", "、", "quo", " ",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut changed = 0;
    for _ in 0..20_000 {
        let len = (next() % 12) as usize;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        let got = neutralize_guillemets(Cow::Borrowed(&text));
        let want = guillemets_reference(&text);
        assert_eq!(got, want, "input {text:?}");
        // Borrowed exactly when nothing was replaced.
        assert_eq!(
            matches!(got, Cow::Borrowed(_)),
            want == text,
            "input {text:?}"
        );
        changed += usize::from(want != text);
    }
    // The draw exercised both sides.
    assert!(
        changed > 5_000 && changed < 19_000,
        "{changed} of 20,000 changed"
    );
    // A long run of entities is linear: 200,000 of them in one pass (the reference would
    // copy the whole text once per entity).
    let long = "&laquo;x".repeat(200_000);
    let got = neutralize_guillemets(Cow::Borrowed(&long));
    assert_eq!(got.len(), 2 * 200_000);
    assert!(got.bytes().all(|b| b == b'"' || b == b'x'));
}
