//! Links: applying the [`UrlPolicy`] to the URLs, markdown links and images and HTML tags
//! in untrusted text.

use super::policy::UrlPolicy;
use regex::Regex;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::LazyLock;

static LINKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?xi)
        (?P<img> !\[ (?P<alt>[^\[\]]*) \]\( \s* <? (?P<img_url>[^)\s>]*) >?
                 (?: \s+ (?: "[^"]*" | '[^']*' | \([^)]*\) ) )? \s* \) )
      | (?P<link> \[ (?P<text>[^\[\]]*) \]\( \s* <? (?P<link_url>[^)\s>]*) >?
                 (?: \s+ (?: "[^"]*" | '[^']*' | \([^)]*\) ) )? \s* \) )
      | (?P<def> (?m:^) [\x20\t]{0,3} \[ (?P<label>[^\]\n]+) \]: [\x20\t]* <? (?P<def_url>[^\s>]+) >? )
      | (?P<html> </? (?P<tag>img|image|picture|source|video|audio|a|iframe|frame|script|link
                 |embed|object|form|svg|meta|base|input) (?: [\s/] [^>]* )? > )
      | (?P<bare> (?: (?:https?|ftp|wss?|file):// | www\. ) [^\s<>"'`)\]}|\\]+ )
        "#,
    )
    .expect("the link pattern is a valid regex")
});

static HTML_URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:src|href|srcset|data|action|poster|background|content)\s*=\s*["']?([^"'\s>]+)"#,
    )
    .expect("the attribute pattern is a valid regex")
});

/// The host a URL points at, if it reads as one (`a.example` in `https://u@a.example:8/x`).
pub(super) fn host_of(url: &str) -> &str {
    let rest = if let Some(i) = url.find("://") {
        &url[i + 3..]
    } else if let Some(r) = url.strip_prefix("//") {
        r
    } else if url.len() > 4 && url.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("www.")) {
        url
    } else {
        return "";
    };
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    let plausible = host
        .chars()
        .all(|c| c.is_alphanumeric() || c == '.' || c == '-');
    if plausible { host } else { "" }
}

fn flagged(out: &mut String, what: &str, url: &str) {
    let host = host_of(url);
    if host.is_empty() {
        let _ = write!(out, "[{what} removed]");
    } else {
        let _ = write!(out, "[{what} removed: {host}]");
    }
}

fn with_text(
    out: &mut String,
    text: &str,
    policy: UrlPolicy,
    links: &mut u32,
    what: &str,
    url: &str,
) {
    let text = apply_links(text, policy, links);
    let text = text.trim();
    out.push_str(text);
    if policy == UrlPolicy::Flag {
        if !text.is_empty() {
            out.push(' ');
        }
        flagged(out, what, url);
    }
}

pub(super) fn apply_links<'t>(text: &'t str, policy: UrlPolicy, links: &mut u32) -> Cow<'t, str> {
    if policy == UrlPolicy::Keep {
        return Cow::Borrowed(text);
    }
    let maybe = text.contains("://")
        || text.contains("](")
        || text.contains("]:")
        || text.contains('<')
        || text
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"www."));
    if !maybe {
        return Cow::Borrowed(text);
    }
    // The matches are found by the pattern's DFA alone; each one's parts are read from its
    // text by the shape every alternative gives it (`parts`): asking the regex for the
    // capture groups ran its backtracker on every link, most of the cost of capping a long
    // value with links (the estimate samples two dozen pieces of it).
    let mut out = String::new();
    let mut last = 0;
    for m in LINKS.find_iter(text) {
        if out.is_empty() {
            out.reserve(text.len());
        }
        out.push_str(&text[last..m.start()]);
        last = m.end();
        *links = links.saturating_add(1);
        replace(&mut out, parts(m.as_str()), policy, links);
    }
    if last == 0 && out.is_empty() {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// A match of [`LINKS`], by its alternative, with the groups its replacement needs.
#[derive(Debug, PartialEq, Eq)]
enum Link<'t> {
    Image { alt: &'t str, url: &'t str },
    Inline { text: &'t str, url: &'t str },
    Definition { label: &'t str, url: &'t str },
    Html { tag: &'t str, whole: &'t str },
    Bare(&'t str),
}

/// The parts of `m`, a whole match of [`LINKS`]. Which alternative matched shows in its first
/// character: only an image starts with `!`, a tag with `<`, a definition with a space or a
/// tab (or a `[` whose label holds a `[`, or whose `]` is not followed by `(`: a link takes
/// priority wherever one matches), a link with `[`; anything else is a bare URL. A link's URL
/// is the longest run after `(`, spaces and a `<` with no `)`, space or `>`: a shorter one
/// would leave a character the rest of the pattern cannot take.
fn parts(m: &str) -> Link<'_> {
    fn url_after(rest: &str) -> &str {
        let rest = rest.trim_start();
        let rest = rest.strip_prefix('<').unwrap_or(rest);
        let end = rest
            .find(|c: char| c == ')' || c == '>' || c.is_whitespace())
            .unwrap_or(rest.len());
        &rest[..end]
    }
    if let Some(rest) = m.strip_prefix("![") {
        let close = rest.find(']').unwrap_or(rest.len());
        let url = rest.get(close + 2..).map_or("", url_after);
        return Link::Image {
            alt: &rest[..close],
            url,
        };
    }
    if let Some(rest) = m.strip_prefix('<') {
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let end = rest
            .find(|c: char| c == '>' || c == '/' || c.is_whitespace())
            .unwrap_or(rest.len());
        return Link::Html {
            tag: &rest[..end],
            whole: m,
        };
    }
    let label_start = m.trim_start_matches([' ', '\t']);
    if let Some(rest) = label_start.strip_prefix('[') {
        let close = rest.find(']').unwrap_or(rest.len());
        let label = &rest[..close];
        let after = &rest[(close + 1).min(rest.len())..];
        let inline = label_start.len() == m.len() && !label.contains('[') && after.starts_with('(');
        if inline {
            return Link::Inline {
                text: label,
                url: url_after(&after[1..]),
            };
        }
        let rest = after.strip_prefix(':').unwrap_or(after);
        let rest = rest.trim_start_matches([' ', '\t']);
        // A definition's URL is at least one character: where none follows a `<`, the `<`
        // is the URL's first.
        let run = |rest: &str| {
            rest.find(|c: char| c == '>' || c.is_whitespace())
                .unwrap_or(rest.len())
        };
        let url = match rest.strip_prefix('<') {
            Some(inner) if run(inner) > 0 => &inner[..run(inner)],
            _ => &rest[..run(rest)],
        };
        return Link::Definition { label, url };
    }
    Link::Bare(m)
}

/// Writes what `link` becomes under `policy` to `out`.
fn replace(out: &mut String, link: Link<'_>, policy: UrlPolicy, links: &mut u32) {
    match link {
        Link::Image { alt, url } => {
            if policy != UrlPolicy::Strip {
                with_text(out, alt, policy, links, "image", url);
            }
        }
        Link::Inline { text, url } => with_text(out, text, policy, links, "link", url),
        Link::Definition { label, url } => {
            if policy == UrlPolicy::Flag {
                let _ = write!(out, "[{label}]: ");
                flagged(out, "link", url);
            }
        }
        Link::Html { tag, whole } => {
            let url = HTML_URL
                .captures(whole)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str());
            if let Some(url) = url
                && policy == UrlPolicy::Flag
            {
                let tag = tag.to_ascii_lowercase();
                let media = matches!(
                    tag.as_str(),
                    "img" | "image" | "picture" | "source" | "video" | "audio"
                );
                flagged(out, if media { "image" } else { "link" }, url);
            }
        }
        Link::Bare(url) => {
            if policy == UrlPolicy::Flag {
                flagged(out, "link", url);
            }
        }
    }
}

/// The parts of each match as the pattern's capture groups give them: the reference
/// [`parts`] is checked against.
#[cfg(test)]
fn parts_by_captures(text: &str) -> Vec<Link<'_>> {
    LINKS
        .captures_iter(text)
        .map(|caps| {
            let get = |name: &str| caps.name(name).map_or("", |m| m.as_str());
            if caps.name("img").is_some() {
                Link::Image {
                    alt: get("alt"),
                    url: get("img_url"),
                }
            } else if caps.name("link").is_some() {
                Link::Inline {
                    text: get("text"),
                    url: get("link_url"),
                }
            } else if caps.name("def").is_some() {
                Link::Definition {
                    label: get("label"),
                    url: get("def_url"),
                }
            } else if caps.name("html").is_some() {
                Link::Html {
                    tag: get("tag"),
                    whole: get("html"),
                }
            } else {
                Link::Bare(get("bare"))
            }
        })
        .collect()
}

/// Where a window of a longer text stops being safe to apply the link policy to: before the
/// first link that the window's end could cut short (a match that ends within 8 bytes of the
/// end, and the first place one could start after the last complete match: `[`, `<`, `://`,
/// `www.`). Every link before it matches in the window as it does in the whole text.
pub(super) fn window_safe_end(window: &str, link_free: impl Fn(&str) -> usize) -> usize {
    let mut complete = 0;
    let mut cut_short = window.len();
    for m in LINKS.find_iter(window) {
        if m.end() + 8 >= window.len() {
            cut_short = m.start();
            break;
        }
        complete = m.end();
    }
    // A match the end could cut short may be part of a longer link that starts before it
    // (the bare URL of a Markdown link cut after its `(`): the first place one could start
    // after the last complete match bounds it too.
    (complete + link_free(&window[complete..])).min(cut_short)
}

/// Whether `text` ends inside a link, as far as it shows: a link matches up to its end (a
/// URL cut short reads as a bare one).
pub(super) fn ends_in_link(text: &str) -> bool {
    LINKS
        .find_iter(text)
        .last()
        .is_some_and(|m| m.end() == text.len())
}

#[cfg(any(test, feature = "test-seams"))]
/// Applies a [`UrlPolicy`] to `text`, returning the text and the number of links and images
/// flagged or stripped. Borrows when nothing changes.
///
/// ```
/// use toolshape::{__seams::untrusted::apply_url_policy, untrusted::UrlPolicy};
///
/// let text = "see [docs](https://a.example/x) ![](https://b.example/p.png?q=1) https://c.example";
/// assert_eq!(
///     apply_url_policy(text, UrlPolicy::Flag).0,
///     "see docs [link removed: a.example] [image removed: b.example] [link removed: c.example]"
/// );
/// assert_eq!(apply_url_policy(text, UrlPolicy::Strip), ("see docs  ".into(), 3));
/// assert_eq!(apply_url_policy(text, UrlPolicy::Keep).1, 0);
/// ```
pub fn apply_url_policy(text: &str, policy: UrlPolicy) -> (Cow<'_, str>, u32) {
    let mut links = 0;
    let out = apply_links(text, policy, &mut links);
    (out, links)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `[` with no `]` before a later link's `[text](url)` is a bracket, not the start of
    /// that link: the link is the innermost `[…](…)`, so a window that ends before the link
    /// reads the bracket as the whole text does (found by the windowed-cap property test).
    #[test]
    fn an_unclosed_bracket_before_a_link_stays_a_bracket() {
        let text = "A<[ü한국\n\n [x https://a.example/y and [t](https://b.example) end";
        let (out, links) = apply_url_policy(text, UrlPolicy::Flag);
        assert_eq!(
            out,
            "A<[ü한국\n\n [x [link removed: a.example] and t [link removed: b.example] end"
        );
        assert_eq!(links, 2);
        // Nested brackets are not link text; the URL is still flagged, as a bare one.
        let (out, _) = apply_url_policy("[a [b] c](https://c.example)", UrlPolicy::Flag);
        assert_eq!(out, "[a [b] c]([link removed: c.example])");
        let (out, _) = apply_url_policy("![x [y]](https://d.example/p.png)", UrlPolicy::Flag);
        assert_eq!(out, "![x [y]]([link removed: d.example])");
    }

    /// Every match's parts, read from its text, are the pattern's capture groups: over texts
    /// made of link pieces at random (images, links, definitions at and after a line start,
    /// tags, bare URLs, brackets, angle brackets, spaces of several kinds, titles, text cut
    /// anywhere), and a long run of links.
    #[test]
    fn parts_read_from_a_match_are_its_capture_groups() {
        const PIECES: &[&str] = &[
            "![",
            "[",
            "]",
            "(",
            ")",
            "](",
            "]:",
            "<",
            ">",
            "</",
            "/",
            " ",
            "\t",
            "\n",
            "\u{a0}",
            "\u{2003}",
            "!",
            "https://",
            "http://a.example",
            "www.",
            "ftp://f",
            "file:///x",
            "a",
            "b c",
            "é",
            "한",
            "\"t\"",
            "'t'",
            "(t)",
            "img",
            "IMG",
            "a href=\"x\"",
            "src=y",
            "image",
            "script",
            "video",
            "x.example/p?q=1",
            "`",
            "|",
            "\\",
            "}",
            ":",
            "  ",
            "   [l]: ",
            "[t](u)",
            "![a](<u> \"t\")",
            "<a href='https://h.example'>",
            "[a [b] c](",
        ];
        let mut state = 0x2026_1207_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let mut texts = vec![
            "The card was declined twice; see https://pay.example.com/help and [the log](https://logs.example.com/x). "
                .repeat(40),
        ];
        for _ in 0..20_000 {
            let n = 1 + next() % 12;
            texts.push((0..n).map(|_| PIECES[next() % PIECES.len()]).collect());
        }
        for text in &texts {
            let read: Vec<Link<'_>> = LINKS.find_iter(text).map(|m| parts(m.as_str())).collect();
            assert_eq!(read, parts_by_captures(text), "{text:?}");
        }
    }
}
