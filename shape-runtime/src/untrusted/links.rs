//! Links: applying the [`UrlPolicy`] to the URLs, markdown links and images and HTML tags
//! in untrusted text.

use super::policy::UrlPolicy;
use regex::{Captures, Regex};
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
    LINKS.replace_all(text, |caps: &Captures<'_>| {
        *links = links.saturating_add(1);
        let get = |name: &str| caps.name(name).map_or("", |m| m.as_str());
        let mut out = String::new();
        if caps.name("img").is_some() {
            if policy == UrlPolicy::Strip {
                return out;
            }
            with_text(&mut out, get("alt"), policy, links, "image", get("img_url"));
        } else if caps.name("link").is_some() {
            with_text(
                &mut out,
                get("text"),
                policy,
                links,
                "link",
                get("link_url"),
            );
        } else if caps.name("def").is_some() {
            if policy == UrlPolicy::Flag {
                let _ = write!(out, "[{}]: ", get("label"));
                flagged(&mut out, "link", get("def_url"));
            }
        } else if caps.name("html").is_some() {
            let tag = get("tag").to_ascii_lowercase();
            let url = HTML_URL
                .captures(get("html"))
                .and_then(|c| c.get(1))
                .map(|m| m.as_str());
            match url {
                Some(url) if policy == UrlPolicy::Flag => {
                    let media = matches!(
                        tag.as_str(),
                        "img" | "image" | "picture" | "source" | "video" | "audio"
                    );
                    flagged(&mut out, if media { "image" } else { "link" }, url);
                }
                _ => {}
            }
        } else if policy == UrlPolicy::Flag {
            flagged(&mut out, "link", get("bare"));
        }
        out
    })
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
}
