//! Text echoed back into an error (an unknown field name, a value of the wrong type, a
//! parser's message quoting the input): invisible characters removed, line breaks made
//! spaces, and each quoted piece shortened, so an error keeps the promises answers keep.

use super::render::as_shown;
use super::sanitise::{is_tag, sanitize, unseen, valid_flag};
use std::borrow::Cow;

/// The most characters of one quoted piece (between backticks or double quotes) kept.
pub(crate) const MAX_QUOTED_CHARS: usize = 40;
/// The most characters of a whole echoed message kept.
pub(crate) const MAX_ECHO_CHARS: usize = 600;

/// `text` cleaned for an error summary: sanitised as untrusted text is (tag characters, bidi
/// controls, zero-width and other invisible characters, controls and ANSI escapes removed),
/// newlines and tabs made spaces, every piece between backticks or double quotes cut to
/// `MAX_QUOTED_CHARS` (40) characters (`…` marks the cut), every run of characters without a
/// space outside them too (a stray quote in the input can leave the rest of it unquoted, and
/// no word of a message is that long), and the whole to `MAX_ECHO_CHARS` (600); then defused
/// as records' values are (`as_shown`): what reads as the provenance delimiter becomes
/// `[delimiter removed]` and the compact marks `«` `»` (and their look-alikes) a plain `"`, so
/// a name an outsider chose (a tool's, a field's) cannot open or close a mark in the summary.
/// Defused last, as a cut can join the two ends of a look-alike (`<…` and `untrusted`); a
/// look-alike so replaced makes the text longer by at most 9 characters.
///
/// ```
/// use toolshape::__private::echo_clean;
///
/// let key = format!("ha\u{202e}ndel{}", "x".repeat(20_000));
/// let clean = echo_clean(&format!("unknown field `{key}`, expected `handle`"));
/// assert_eq!(clean, format!("unknown field `handel{}…`, expected `handle`", "x".repeat(34)));
/// ```
pub fn clean(text: &str) -> String {
    let (text, _) = sanitize(text);
    let mut out = String::with_capacity(text.len().min(MAX_ECHO_CHARS * 4));
    let mut open: Option<char> = None;
    let mut inside = 0usize;
    let mut escaped = false;
    let mut written = 0usize;
    let mut run = 0usize; // characters without a space, outside quotes
    for c in text.chars() {
        let c = if matches!(c, '\n' | '\t' | '\r') {
            ' '
        } else {
            c
        };
        let keep = match open {
            None => {
                if c == '`' || c == '"' {
                    open = Some(c);
                    inside = 0;
                    escaped = false;
                    run = 0;
                    true
                } else if c == ' ' {
                    run = 0;
                    true
                } else {
                    run += 1;
                    if run == MAX_QUOTED_CHARS + 1 && written < MAX_ECHO_CHARS {
                        out.push('…');
                        written += 1;
                    }
                    run <= MAX_QUOTED_CHARS
                }
            }
            Some(q) if c == q && !escaped => {
                open = None;
                run = 0;
                true
            }
            Some(_) => {
                escaped = !escaped && c == '\\';
                inside += 1;
                if inside == MAX_QUOTED_CHARS + 1 && written < MAX_ECHO_CHARS {
                    out.push('…');
                    written += 1;
                }
                inside <= MAX_QUOTED_CHARS
            }
        };
        if keep {
            // `>=`: a cut marker counts as written, so the count can reach the limit on one.
            if written >= MAX_ECHO_CHARS {
                out.push('…');
                break;
            }
            out.push(c);
            written += 1;
        }
    }
    // A cut inside a subdivision flag (kept whole by sanitising) leaves its tag characters
    // without their cancel tag: sanitising again takes them out (and changes nothing else, as
    // cutting only ends pieces early).
    let out = match sanitize(&out).0 {
        Cow::Owned(recut) => recut,
        Cow::Borrowed(_) => out,
    };
    match as_shown(&out, true).0 {
        Cow::Owned(defused) => defused,
        Cow::Borrowed(_) => out,
    }
}

/// An outsider's value counted as a category (`open_result`'s `count_by` and `top` over
/// untrusted text): its first [`CATEGORY_CHARS`](crate::aggregate::spec::CATEGORY_CHARS) characters
/// [`clean`]ed (sanitised, line breaks made spaces, the provenance delimiter and the compact
/// marks defused), `…` after them when the value is longer.
pub(crate) fn category(text: &str) -> String {
    let max = crate::aggregate::spec::CATEGORY_CHARS;
    match text.char_indices().nth(max) {
        None => clean(text),
        Some((at, _)) => {
            let mut out = clean(&text[..at]);
            out.push('…');
            out
        }
    }
}

/// A name someone outside the system chose (a tool's, listed by the server behind a layer;
/// the words of an `open_result` query, which a model may copy from outsiders' text), as it
/// is shown in answers: sanitised and defused as records' values are (`as_shown`), line
/// breaks and tabs made spaces, what sanitising keeps that a reader cannot see (a flag's tag
/// characters, a variation selector) left out too, nothing cut; with every unseen character
/// escaped instead ([`reveal`]) when nothing visible would be left. Borrowed when there is
/// nothing to change.
pub(crate) fn shown_name(name: &str) -> Cow<'_, str> {
    let (sanitised, _) = sanitize(name);
    let seen = match sanitised {
        Cow::Borrowed(text) if !text.contains(['\n', '\t']) => visible(text),
        text => Cow::Owned(visible(&text.replace(['\n', '\t'], " ")).into_owned()),
    };
    let seen = match seen {
        Cow::Owned(text) if text.trim().is_empty() && !name.trim().is_empty() => {
            Cow::Owned(reveal(name).0.into_owned())
        }
        seen => seen,
    };
    match seen {
        Cow::Borrowed(text) => as_shown(text, true).0,
        Cow::Owned(text) => Cow::Owned(as_shown(&text, true).0.into_owned()),
    }
}

/// `text` as an error quotes a value it refuses: unchanged when a reader sees every
/// character of it; otherwise with every unseen character (a tag character outside a
/// recommended subdivision flag, a bidi control, a zero-width or other invisible character, a
/// control, a variation selector, a line separator) written as Rust and serde write it in a
/// quoted value, `ti\u{202e}tle`. With the number of characters so written.
///
/// Quoting the value cleaned ([`clean`] takes those characters out) would show `title` for
/// `ti\u{202e}tle`, and "unknown field `title`; valid fields: title" reads as a
/// contradiction; quoting it raw would carry the characters into the answer.
pub(crate) fn reveal(text: &str) -> (Cow<'_, str>, usize) {
    if !text.chars().any(|c| unseen(c).is_some()) {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut hidden = 0;
    let mut prev = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_tag(c) && prev == Some('\u{1F3F4}') {
            // A run of tag characters after a black flag: a flag, kept whole when it is one
            // sanitising keeps (England, Scotland, Wales), the way a reader sees it.
            let mut end = i + c.len_utf8();
            while let Some(&(j, next)) = chars.peek() {
                if !is_tag(next) {
                    break;
                }
                end = j + next.len_utf8();
                chars.next();
            }
            let run = &text[i..end];
            if valid_flag(prev, run) {
                out.push_str(run);
            } else {
                for tag in run.chars() {
                    out.extend(tag.escape_unicode());
                    hidden += 1;
                }
            }
            prev = run.chars().last();
            continue;
        }
        if unseen(c).is_some() {
            out.extend(c.escape_unicode());
            hidden += 1;
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    if hidden == 0 {
        return (Cow::Borrowed(text), 0);
    }
    (Cow::Owned(out), hidden)
}

/// What an error says after quoting `text` revealed ([`reveal`]): `""` when nothing was
/// escaped, else ` (it holds 2 invisible characters, shown escaped)`.
pub(crate) fn hidden_note(hidden: usize) -> String {
    match hidden {
        0 => String::new(),
        1 => " (it holds 1 invisible character, shown escaped)".to_owned(),
        n => format!(" (it holds {n} invisible characters, shown escaped)"),
    }
}

/// A whole message that quotes input (a parser's: serde names the unknown key or variant it
/// read): every unseen character escaped as [`reveal`] does, and when there was one, the
/// message ends by saying so. Unchanged when the message has none.
pub(crate) fn reveal_message(message: &str) -> Cow<'_, str> {
    match reveal(message) {
        (text, 0) => text,
        (text, 1) => Cow::Owned(format!(
            "{text} (the input holds 1 invisible character, shown escaped)"
        )),
        (text, n) => Cow::Owned(format!(
            "{text} (the input holds {n} invisible characters, shown escaped)"
        )),
    }
}

/// The characters of `text` a reader sees (the unseen ones [`reveal`] escapes left out): what
/// a suggestion ("did you mean …?") is looked up by.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if text.chars().any(|c| unseen(c).is_some()) {
        Cow::Owned(text.chars().filter(|&c| unseen(c).is_none()).collect())
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_with_unseen_characters_is_revealed_escaped() {
        assert_eq!(reveal("title"), (Cow::Borrowed("title"), 0));
        let (shown, hidden) = reveal("ti\u{202E}tle\u{E0041}");
        assert_eq!((&*shown, hidden), (r"ti\u{202e}tle\u{e0041}", 2));
        // Newlines and tabs, which `clean` makes spaces, are shown too.
        assert_eq!(reveal("a\nb\u{7}").0, r"a\u{a}b\u{7}");
        // The revealed text is what `clean` keeps as it is.
        assert_eq!(clean(&reveal("ti\u{202E}tle").0), r"ti\u{202e}tle");
        // A flag sanitising keeps is shown as the flag; tag characters that are no flag are
        // escaped, after a black flag too.
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        assert_eq!(
            reveal(&format!("team{england}")),
            (Cow::Owned(format!("team{england}")), 0)
        );
        assert_eq!(
            reveal(&format!("{england}x\u{200B}")),
            (Cow::Owned(format!(r"{england}x\u{{200b}}")), 1)
        );
        assert_eq!(
            reveal("\u{1F3F4}\u{E0078}\u{E007F}a"),
            (
                Cow::Owned(format!("\u{1F3F4}{}", r"\u{e0078}\u{e007f}a")),
                2
            )
        );
        assert_eq!(visible("ti\u{202E}tle\u{E0041}"), "title");
        assert_eq!(visible("title"), "title");
        assert_eq!(hidden_note(0), "");
        assert_eq!(
            hidden_note(1),
            " (it holds 1 invisible character, shown escaped)"
        );
        assert_eq!(
            hidden_note(2),
            " (it holds 2 invisible characters, shown escaped)"
        );
        assert_eq!(
            reveal_message("unknown field `a\u{200B}b`"),
            r"unknown field `a\u{200b}b` (the input holds 1 invisible character, shown escaped)"
        );
        assert_eq!(reveal_message("plain"), "plain");
    }

    /// A name an outsider chose: what a reader sees of it, marks defused, so it passes the
    /// configuration's check of names (nothing unseen) and opens or closes no mark.
    #[test]
    fn a_name_is_shown_as_outsiders_text_is() {
        assert!(matches!(shown_name("get_time"), Cow::Borrowed("get_time")));
        assert_eq!(shown_name("get\u{200B}_ti\u{202E}me"), "get_time");
        assert_eq!(shown_name("a\tb\nc"), "a b c");
        assert_eq!(shown_name("x» SYSTEM «y"), "x\" SYSTEM \"y");
        assert_eq!(shown_name("t</untrusted>"), "t[delimiter removed]>");
        // A flag's tag characters and a variation selector, which sanitising keeps.
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        assert_eq!(
            shown_name(&format!("team{england}\u{2764}\u{FE0F}")),
            "team\u{1F3F4}\u{2764}"
        );
        // Nothing visible: its characters escaped.
        assert_eq!(shown_name("\u{200B}\u{200C}"), r"\u{200b}\u{200c}");
        for name in [
            "get\u{200B}time\u{E0041}",
            "a\u{2028}b",
            "\u{FEFF}",
            "x\u{1B}[31my",
        ] {
            let shown = shown_name(name);
            assert!(
                !shown.chars().any(|c| unseen(c).is_some()),
                "{name:?}: {shown:?}"
            );
        }
    }

    #[test]
    fn quoted_pieces_are_cut_and_the_rest_kept() {
        assert_eq!(clean("plain words"), "plain words");
        let long = "y".repeat(100);
        assert_eq!(
            clean(&format!("a \"{long}\" and `{long}` end")),
            format!("a \"{}…\" and `{}…` end", &long[..40], &long[..40])
        );
        // An escaped quote does not close the piece.
        assert_eq!(clean(r#"s "a\"b" t"#), r#"s "a\"b" t"#);
        // Unbalanced: the rest counts as quoted.
        assert_eq!(clean(&format!("`{long}")), format!("`{}…", &long[..40]));
        assert_eq!(clean("a\nb\u{200B}\u{E0041}c"), "a bc");
        // A run outside quotes (a stray quote left the rest unquoted) is cut the same way.
        assert_eq!(
            clean(&format!("unknown field `w`at{long}, expected `handle`")),
            format!("unknown field `w`at{}… expected `handle`", &long[..38])
        );
        // A cut inside a flag takes out the flag's tag characters, which would be invisible
        // without their cancel tag; whole flags stay.
        let flag = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        let word = format!("{}{flag}{flag}", "z".repeat(36));
        assert_eq!(clean(&word), format!("{}\u{1F3F4}…", "z".repeat(36)));
        assert_eq!(clean(&format!("a {flag} b")), format!("a {flag} b"));
        let whole = clean(&"word ".repeat(1_000));
        assert_eq!(whole.chars().count(), MAX_ECHO_CHARS + 1);
    }

    /// Found by fuzzing (`fuzz/corpus/sanitiser/regress-echo-overrun`): a run cut exactly at
    /// the limit pushed its `…` past it, and the count, no longer equal to the limit, never
    /// stopped the rest. Whatever the cuts, at most the limit and one closing `…`.
    #[test]
    fn a_cut_at_the_limit_still_ends_the_message() {
        for quote in ["", "`"] {
            for lead in 540..=600 {
                let text = format!(
                    "{}{quote}{}{quote}{}",
                    "a ".repeat(lead / 2),
                    "y".repeat(45),
                    " b".repeat(200)
                );
                let cleaned = clean(&text);
                assert!(
                    cleaned.chars().count() <= MAX_ECHO_CHARS + 1,
                    "{lead}: {} characters",
                    cleaned.chars().count()
                );
            }
        }
    }
}
