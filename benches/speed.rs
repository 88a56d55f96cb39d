//! Speed near the floor (issue 33), measured side by side in one run, contenders taking turns
//! so a change in the machine's load hits them alike (medians; the fastest runs in brackets):
//!
//! - counting: MB/s per tokenizer backend on GitHub-issue JSON, Markdown and code bodies,
//!   prose and pretty JSON, and each ÷ bpe-openai (goal ≥ 3 for the default);
//! - the 1,000-ticket 4,000-token page ÷ the same page counted by a stand-in tokenizer that
//!   costs nothing (bytes ÷ 3.2): how far a call is from its floor (goal ≤ 1.3);
//! - the 4,000-token page over 1,000,000 tickets ÷ `serde_json::to_string` of the same
//!   records (goal ≤ 0.06);
//! - capping a 16 KB and a 16 MB body at 60 tokens with links flagged (goal ≤ 50 µs, flat);
//! - a budget growing with N (a quarter of the records shown) ÷ `serde_json` of all N, at
//!   10k, 100k and 1M, under the structured profile (one channel held);
//! - `open_result`'s free-text `query` over 20,000 stored lines (a real source file's,
//!   repeated) ÷ `serde_json` of those lines: what searching a stored result costs.
//!
//! `cargo bench --bench speed --features bench` (`SPEED_ONLY=capping` for one part).

#[path = "common.rs"]
mod common;

use common::{Names, names, raw, tickets};
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolshape::__seams::tokens::BpeOpenai;
use toolshape::tokens::{Bpe, Tiktoken, Tokenizer, Truncated};
use toolshape::untrusted::{UrlPolicy, prepare};
use toolshape::{Budget, ChannelPolicy, Format, Shaper};

/// Medians and fastest of `runs` timings of each of `fs`, taking turns.
fn timings<const N: usize>(
    runs: usize,
    mut fs: [&mut dyn FnMut(); N],
) -> ([Duration; N], [Duration; N]) {
    for f in fs.iter_mut() {
        f();
    }
    let mut times = vec![Vec::with_capacity(runs); N];
    for _ in 0..runs {
        for (f, t) in fs.iter_mut().zip(&mut times) {
            let start = Instant::now();
            f();
            t.push(start.elapsed());
        }
    }
    let (mut medians, mut fastest) = ([Duration::ZERO; N], [Duration::ZERO; N]);
    for (i, mut t) in times.into_iter().enumerate() {
        t.sort();
        medians[i] = t[runs / 2];
        fastest[i] = t[0];
    }
    (medians, fastest)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// A tokenizer that costs nothing: bytes ÷ 3.2, what the call's floor is measured with.
struct StandIn;

impl Tokenizer for StandIn {
    fn name(&self) -> &str {
        "stand-in"
    }
    fn count(&self, text: &str) -> usize {
        (text.len() as f64 / 3.2).ceil() as usize
    }
    fn truncate<'t>(&self, text: &'t str, max_tokens: usize) -> Truncated<'t> {
        let total = self.count(text);
        let mut end = ((max_tokens as f64) * 3.2) as usize;
        if end >= text.len() {
            return Truncated {
                prefix: text,
                prefix_tokens: total,
                total_tokens: total,
            };
        }
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = &text[..end];
        Truncated {
            prefix,
            prefix_tokens: self.count(prefix),
            total_tokens: total,
        }
    }
    fn max_token_bytes(&self) -> usize {
        4
    }
}

fn counting() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap_or_default();
    let mut markdown = String::new();
    for body in [
        "architecture.md",
        "changelog.md",
        "readme.md",
        "cursor.rs.txt",
        "page.rs.txt",
        "cjk.txt",
    ] {
        markdown.push_str(&read(&format!("tests/data/bodies/{body}")));
    }
    let corpora = [
        (
            "GitHub issues JSON",
            read("examples/data/github_issues.json"),
        ),
        ("Markdown, code and CJK bodies", markdown),
        ("prose (the guide)", read("shape-runtime/docs/guide.md")),
        (
            "pretty JSON (Jira search)",
            read("examples/data/jira_search.json"),
        ),
    ];
    let (fast, openai, rs) = (
        Bpe::o200k_base(),
        BpeOpenai::o200k_base(),
        Tiktoken::o200k_base(),
    );
    println!("counting o200k (MB/s; ÷ bpe-openai):");
    for (name, text) in &corpora {
        assert_eq!(
            fast.count(text),
            openai.count(text),
            "{name}: the same tokens"
        );
        let ([a, b, c], _) = timings(
            15,
            [
                &mut || {
                    black_box(fast.count(black_box(text)));
                },
                &mut || {
                    black_box(openai.count(black_box(text)));
                },
                &mut || {
                    black_box(rs.count(black_box(text)));
                },
            ],
        );
        let mbs = |d: Duration| text.len() as f64 / d.as_secs_f64() / 1e6;
        println!(
            "  {name} ({} KB): tiktoken {:.1} MB/s ({:.2}×), bpe-openai {:.1} MB/s (1×), tiktoken-rs {:.1} MB/s ({:.2}×)",
            text.len() >> 10,
            mbs(a),
            ratio(b, a),
            mbs(b),
            mbs(c),
            ratio(b, c),
        );
    }
}

fn page_against_floor() {
    let rows = tickets(1_000);
    let (users, orgs) = names(&rows);
    let resolver = Names { users, orgs };
    let real = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(4_000))
        .format(Format::Json);
    let floor = real.clone().tokenizer(StandIn);
    let ([r, f], [rf, ff]) = timings(
        101,
        [
            &mut || {
                drop(black_box(
                    real.shape_blocking((black_box(&rows), &resolver)),
                ))
            },
            &mut || {
                drop(black_box(
                    floor.shape_blocking((black_box(&rows), &resolver)),
                ))
            },
        ],
    );
    println!(
        "1,000 tickets, 4,000-token page: {r:?}, with the stand-in tokenizer {f:?}: ÷ floor = {:.2} (goal ≤ 1.3) [{:.2}]",
        ratio(r, f),
        ratio(rf, ff)
    );
}

fn large_page() {
    let rows = tickets(1_000_000);
    let (users, orgs) = names(&rows);
    let resolver = Names { users, orgs };
    let shaper = Shaper::for_tool("search_tickets")
        .budget(Budget::tokens(4_000))
        .format(Format::Json);
    let ([s, j], [fs, fj]) = timings(
        7,
        [
            &mut || {
                drop(black_box(
                    shaper.shape_blocking((black_box(&rows), &resolver)),
                ))
            },
            &mut || drop(black_box(serde_json::to_string(&raw(black_box(&rows))))),
        ],
    );
    println!(
        "1,000,000 tickets, 4,000-token page: {s:?}, serde_json::to_string {j:?}: ratio = {:.3} (goal ≤ 0.06) [{:.3}]",
        ratio(s, j),
        ratio(fs, fj)
    );
}

fn capping() {
    let bpe = Bpe::o200k_base();
    let unit = "The card was declined twice; see https://pay.example.com/help and [the log](https://logs.example.com/x). ";
    for size in [16 << 10, 16 << 20] {
        let body = unit.repeat(size / unit.len());
        let ([flag, keep], _) = timings(
            51,
            [
                &mut || {
                    drop(black_box(prepare(
                        black_box(&body),
                        Some(60),
                        &bpe,
                        UrlPolicy::Flag,
                    )))
                },
                &mut || {
                    drop(black_box(prepare(
                        black_box(&body),
                        Some(60),
                        &bpe,
                        UrlPolicy::Keep,
                    )))
                },
            ],
        );
        println!(
            "capping a {} KB body at 60 tokens: links flagged {flag:?} (goal ≤ 50 µs), links kept {keep:?}",
            body.len() >> 10
        );
    }
}

fn growing() {
    for n in [10_000, 100_000, 1_000_000] {
        let rows = tickets(n);
        let (users, orgs) = names(&rows);
        let resolver = Names { users, orgs };
        // About 40 tokens a ticket: a quarter of them shown.
        let shaper = |channels| {
            Shaper::for_tool("search_tickets")
                .budget(Budget::tokens(n * 10))
                .format(Format::Prose)
                .channels(channels)
        };
        let (structured, text, both) = (
            shaper(ChannelPolicy::Structured),
            shaper(ChannelPolicy::Text),
            shaper(ChannelPolicy::Both),
        );
        let runs = if n >= 1_000_000 { 3 } else { 7 };
        let ([s, t, b, j], _) = timings(
            runs,
            [
                &mut || {
                    drop(black_box(
                        structured.shape_blocking((black_box(&rows), &resolver)),
                    ))
                },
                &mut || {
                    drop(black_box(
                        text.shape_blocking((black_box(&rows), &resolver)),
                    ))
                },
                &mut || {
                    drop(black_box(
                        both.shape_blocking((black_box(&rows), &resolver)),
                    ))
                },
                &mut || drop(black_box(serde_json::to_string(&raw(black_box(&rows))))),
            ],
        );
        // Each profile shows what its held channel fits: prose is denser than JSON, so the
        // text profile shows more records in the same budget; the cost a record shown is
        // the fair comparison between profiles.
        let shown = |shaper: &Shaper| {
            shaper
                .shape_blocking((&rows, &resolver))
                .map_or(0, |s| s.report().records.shown)
        };
        let (ns, nt, nb) = (shown(&structured), shown(&text), shown(&both));
        let per = |d: Duration, shown: usize| d.as_secs_f64() * 1e9 / shown.max(1) as f64;
        println!(
            "growing budget, {n} tickets ({} tokens): ÷ serde_json of all N ({j:?}): structured profile {:.2}, text profile {:.2}, both channels {:.2}; shown {ns} / {nt} / {nb}, ns a record shown {:.0} / {:.0} / {:.0}",
            n * 10,
            ratio(s, j),
            ratio(t, j),
            ratio(b, j),
            per(s, ns),
            per(t, nt),
            per(b, nb),
        );
    }
}

fn search() {
    use toolshape::__seams::aggregate::FieldMeta;
    use toolshape::__seams::handle::query::OpenQuery;
    let text = include_str!("../tests/data/bodies/page.rs.txt");
    let lines: Vec<&str> = text.lines().collect();
    let rows: Vec<serde_json::Map<String, serde_json::Value>> = (0..20_000)
        .map(|i| {
            let mut row = serde_json::Map::new();
            row.insert("line".into(), (i + 1).into());
            row.insert("text".into(), lines[i % lines.len()].into());
            row
        })
        .collect();
    let fields = [FieldMeta::number("line"), FieldMeta::text("text")];
    let valid = OpenQuery::new("h")
        .query("budget tokens page")
        .validate(&fields)
        .expect("a valid query");
    let hits = valid.apply(&rows).len();
    let ([searched, json], [fastest, _]) = timings(
        7,
        [
            &mut || drop(black_box(valid.apply(black_box(&rows)))),
            &mut || drop(black_box(serde_json::to_string(black_box(&rows)))),
        ],
    );
    println!(
        "open_result query over 20,000 stored lines ({hits} found): {searched:?} [{fastest:?}], ÷ serde_json of the lines ({json:?}) {:.1}",
        ratio(searched, json)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; this is one run. `SPEED_ONLY=capping` (or counting,
    // floor, large, growing, search) runs one part.
    let only = std::env::var("SPEED_ONLY").ok();
    let parts: [(&str, fn()); 6] = [
        ("counting", counting),
        ("capping", capping),
        ("floor", page_against_floor),
        ("large", large_page),
        ("growing", growing),
        ("search", search),
    ];
    for (name, part) in parts {
        if only.as_deref().is_none_or(|o| o == name) {
            part();
        }
    }
}
