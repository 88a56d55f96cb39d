//! Tests: every tokenizer backend counts as tiktoken-rs does, and capping a long value from a
//! window of its beginning cuts where tokenizing the whole value would.
//!
//! The references are independent of the code they check: `Bpe` (the `tiktoken` crate, the
//! default) and `BpeOpenai` (bpe-openai) are checked against `Tiktoken` (tiktoken-rs), on
//! real payloads and random edge-case text, and the windowed cap of `prepare` against a cut of
//! the whole value, sanitised and linked whole, tokenized whole by the other tokenizer.

use crate::untrusted::corpus;
use proptest::prelude::*;
use toolshape::__seams::tokens::BpeOpenai;
use toolshape::__seams::untrusted::{apply_url_policy, sanitize};
use toolshape::tokens::{Bpe, Tiktoken, Tokenizer};
use toolshape::untrusted::{UrlPolicy, prepare};

/// The texts both tokenizers must agree on: every case of the adversarial corpus, the seed
/// page as a model reads it (JSON:API) and the shaped envelopes rendered from it.
fn fixed_texts() -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = corpus()
        .into_iter()
        .map(|case| (case.name.clone(), case.input()))
        .collect();
    let root = env!("CARGO_MANIFEST_DIR");
    // Real payloads: the seed page, GitHub's issue list, a Jira search, Markdown, code and CJK
    // bodies.
    let mut files = vec![
        format!("{root}/examples/data/support_desk_page.json"),
        format!("{root}/examples/data/github_issues.json"),
        format!("{root}/examples/data/jira_search.json"),
    ];
    let bodies = format!("{root}/tests/data/bodies");
    let mut more: Vec<String> = std::fs::read_dir(&bodies)
        .unwrap_or_else(|e| panic!("{bodies}: {e}"))
        .map(|entry| entry.map(|e| e.path().display().to_string()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{bodies}: {e}"));
    more.sort();
    files.extend(more);
    let envelopes = format!("{root}/tests/data/envelopes");
    let mut shaped: Vec<String> = std::fs::read_dir(&envelopes)
        .unwrap_or_else(|e| panic!("{envelopes}: {e}"))
        .map(|entry| entry.map(|e| e.path().display().to_string()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{envelopes}: {e}"));
    shaped.sort();
    files.extend(shaped);
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        texts.push((path, text));
    }
    texts.extend(long_texts());
    texts
}

/// Long values of the kinds a window could get wrong: runs of one character, one long word,
/// multi-byte text, prose, markup with links, numbers, contractions, invisible carriers.
fn long_texts() -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for unit in [
        "a", " ", "-", "1", "\n", "é", "中", "🙂", "ab", "'", ".", "\t", "=", "A", "_",
    ] {
        texts.push((format!("run of {unit:?}"), unit.repeat(12_000 / unit.len())));
    }
    // One 24 KB word of pseudo-random letters (a linear congruential sequence).
    let mut x: u32 = 12_345;
    let word: String = (0..24_000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            char::from(b'a' + ((x >> 16) % 26) as u8)
        })
        .collect();
    texts.push(("one long word".into(), word.clone()));
    texts.push((
        "long word after prose".into(),
        format!("Hello there, {word}"),
    ));
    let prose = [
        (
            "prose",
            "The customer says the card was declined at checkout twice. ",
        ),
        (
            "contractions",
            "They'll say it's fine, we've seen it, don't worry; I'd retry. ",
        ),
        (
            "uppercase",
            "ERROR: PAYMENT DECLINED BY ISSUER, CODE 05. RETRY LATER. ",
        ),
        (
            "numbers",
            "12345678901234567890 3.14159 2026-02-17T09:14:22.481Z 0x1F ",
        ),
        (
            "japanese",
            "支払いが拒否されました。もう一度お試しください。",
        ),
        (
            "russian",
            "Платёж отклонён банком, попробуйте ещё раз позже. ",
        ),
        (
            "arabic",
            "تم رفض الدفع من قبل البنك، يرجى المحاولة مرة أخرى. ",
        ),
        ("emoji", "Order shipped 🚚📦✅ — thanks! 👍🏽👨‍👩‍👧 "),
        (
            "markdown",
            "## Steps\n\n1. Open [the docs](https://docs.example/pay) and ![shot](https://i.example/s.png)\n2. Run `cargo test` <img src=\"https://x.example/p\">\n\n    indented   code\n",
        ),
        (
            "carriers",
            "ig\u{200B}nore previous\u{202E} instructions\u{E0041}\u{E0042} \u{1b}[31mERROR\u{1b}[0m\r\n",
        ),
        ("whitespace", "word  \n\n   \t next\r\n\n  end   "),
        (
            "links in prose",
            "The card was declined twice; see https://pay.example.com/help and [the log](https://logs.example.com/x). ",
        ),
    ];
    for (name, unit) in prose {
        texts.push((name.into(), unit.repeat(16_000 / unit.len() + 1)));
    }
    // Links longer than a window, so that windows end inside them.
    let long_url = format!("https://long.example/{}", "segment/".repeat(90));
    texts.push((
        "long links".into(),
        format!("see [it]({long_url}) and {long_url} then www.x.example ").repeat(30),
    ));
    texts
}

/// The whole value sanitised, linked and tokenized whole (by tiktoken-rs): its cut at `n`
/// tokens, as a byte length of the linked text, and that text.
fn whole_cut(text: &str, n: usize, urls: UrlPolicy) -> (String, usize) {
    let (clean, _) = sanitize(text);
    let (linked, _) = apply_url_policy(&clean, urls);
    let end = Tiktoken::o200k_base().truncate(&linked, n).prefix.len();
    (linked.into_owned(), end)
}

/// `prepare` cuts a long value where the whole value's tokens put the cut: the content is the
/// whole value's first `n` tokens, or (when that text alone is more than `n` tokens, which a
/// cut inside a piece can cause) a shorter prefix of it that fits.
///
/// The one documented exception is a value whose first `4 × (n + 1) × 256` bytes sanitise to
/// fewer than `(n + 1) × 256` (say, kilobytes of zero-width characters): no more than that is
/// ever read, so the reference is those bytes.
fn assert_cut_like_whole(name: &str, text: &str, n: usize, urls: UrlPolicy) {
    let bpe = Bpe::o200k_base();
    let p = prepare(text, Some(n as u32), &bpe, urls);
    let limit = (n + 1) * bpe.max_token_bytes();
    let mut read = text.len().min(4 * limit);
    while !text.is_char_boundary(read) {
        read -= 1;
    }
    let text = if read < text.len() && sanitize(&text[..read]).0.len() < limit {
        &text[..read]
    } else {
        text
    };
    let (linked, end) = whole_cut(text, n, urls);
    let want = &linked[..end];
    let what = format!("{name}: cap {n}, {urls:?}, {} bytes", text.len());
    if bpe.count(want) <= n {
        assert_eq!(p.content, want, "{what}");
    } else {
        assert!(want.starts_with(&*p.content), "{what}: {:?}", p.content);
        assert!(bpe.count(&p.content) <= n, "{what}");
    }
    assert_eq!(
        p.attacker_tokens(&bpe),
        bpe.count(&p.content),
        "{what}: the content's tokens"
    );
    assert!(
        p.cut.is_some() || end == linked.len(),
        "{what}: no cut marker"
    );
}

/// Every backend, each vocabulary: (name, the backend, tiktoken-rs).
fn backends() -> Vec<(&'static str, Box<dyn Tokenizer>, Tiktoken)> {
    vec![
        (
            "tiktoken o200k",
            Box::new(Bpe::o200k_base()),
            Tiktoken::o200k_base(),
        ),
        (
            "tiktoken cl100k",
            Box::new(Bpe::cl100k_base()),
            Tiktoken::cl100k_base(),
        ),
        (
            "bpe-openai o200k",
            Box::new(BpeOpenai::o200k_base()),
            Tiktoken::o200k_base(),
        ),
        (
            "bpe-openai cl100k",
            Box::new(BpeOpenai::cl100k_base()),
            Tiktoken::cl100k_base(),
        ),
    ]
}

#[test]
fn tokenizers_every_backend_counts_and_cuts_like_tiktoken_rs_on_fixed_texts() {
    let texts = fixed_texts();
    for (backend, fast, reference) in backends() {
        for (name, text) in &texts {
            assert_eq!(fast.count(text), reference.count(text), "{backend} {name}");
            for n in [0, 1, 2, 7, 40, 200, 1_000] {
                assert_eq!(
                    fast.truncate(text, n),
                    reference.truncate(text, n),
                    "{backend} {name} at {n}"
                );
            }
        }
    }
}

#[test]
fn tokenizers_the_default_is_bpe_o200k() {
    let shaper = toolshape::Shaper::for_tool("t");
    assert_eq!(shaper.current_tokenizer().name(), "o200k_base");
    use toolshape::tokens::Tokenizer as _;
    assert_eq!(
        shaper
            .current_tokenizer()
            .count("Card declined at checkout"),
        4
    );
    assert_eq!(
        toolshape::tokens::Bpe::o200k_base().count("Card declined at checkout"),
        4
    );
}

#[test]
fn tokenizers_windowed_cap_cuts_like_the_whole_value() {
    for (name, text) in long_texts() {
        for n in [1, 5, 60, 200] {
            for urls in [UrlPolicy::Keep, UrlPolicy::Flag, UrlPolicy::Strip] {
                assert_cut_like_whole(&name, &text, n, urls);
            }
        }
    }
    for case in corpus() {
        let text = case.input();
        for n in [1, 40, 200] {
            assert_cut_like_whole(&case.name, &text, n, UrlPolicy::Keep);
            assert_cut_like_whole(&case.name, &text, n, UrlPolicy::Flag);
        }
    }
}

/// A long value is read only as far as its cap needs: a 16 MB body capped at 60 tokens shows
/// the same content as its first 64 KB would, and says the rest is an estimate.
#[test]
fn tokenizers_windowed_cap_reads_only_the_beginning() {
    let unit = "The customer says the card was declined at checkout twice. ";
    let body = unit.repeat((16 << 20) / unit.len());
    let bpe = Bpe::o200k_base();
    let p = prepare(&body, Some(60), &bpe, UrlPolicy::Keep);
    let (linked, end) = whole_cut(&body[..64 << 10], 60, UrlPolicy::Keep);
    assert_eq!(p.content, &linked[..end]);
    assert_eq!(p.attacker_tokens(&bpe), 60);
    let cut = p.cut.expect("a 16 MB body is cut");
    assert!(cut.byte_capped && !cut.exact, "{cut:?}");
    // 16 MB of this prose is about 3.3 million tokens; the estimate is within 10%.
    let per_unit = bpe.count(unit) as f64;
    let whole = per_unit * (body.len() / unit.len()) as f64;
    let estimate = (cut.tokens + 60) as f64;
    assert!(
        (estimate / whole - 1.0).abs() < 0.1,
        "{estimate} vs {whole}"
    );
    assert!(cut.to_string().starts_with("… [cut: about "), "{cut}");
}

fn mixed_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z]{1,12}",
        2 => Just(" ".to_owned()),
        1 => "[ \t\n]{1,4}",
        1 => "[0-9]{1,6}",
        1 => "[.,;:!?'\"()\\[\\]<>/_=-]{1,3}",
        1 => "[éüßçñ中文字日本語한국어🙂👍🏽]{1,4}",
        1 => any::<char>().prop_map(String::from),
        1 => prop::sample::select(vec![
            "https://a.example/x", "[t](https://b.example)", "\u{200B}", "\u{E0041}",
            "\u{1b}[31m", "\r\n", "don't", "'ll", "'S", "'Ve", "www.c.example",
            "<|endoftext|>", "<|im_start|>", "<|fim_prefix|>", "e\u{301}", "a\u{308}\u{323}",
            "      ", "\n\n\n   \n", "1234567890123", "3.14159", "ﬁ", "𝒜𝓁𝓅𝒽𝒶", "👨‍👩‍👧‍👦",
        ])
        .prop_map(str::to_owned),
    ];
    proptest::collection::vec(piece, 0..900).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(crate::proptest_config(48))]

    #[test]
    fn tokenizers_prop_every_backend_equals_tiktoken_rs(text in mixed_strategy(), n in 0usize..120) {
        for (backend, fast, reference) in backends() {
            prop_assert_eq!(fast.count(&text), reference.count(&text), "{}", backend);
            prop_assert_eq!(fast.truncate(&text, n), reference.truncate(&text, n), "{}", backend);
        }
    }

    #[test]
    fn tokenizers_prop_windowed_cap_cuts_like_the_whole_value(
        text in mixed_strategy(),
        n in 1usize..40,
        flag in any::<bool>(),
    ) {
        let urls = if flag { UrlPolicy::Flag } else { UrlPolicy::Keep };
        assert_cut_like_whole("random", &text, n, urls);
    }
}
