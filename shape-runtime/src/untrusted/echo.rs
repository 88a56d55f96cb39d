//! Text echoed back into an error (an unknown field name, a value of the wrong type, a
//! parser's message quoting the input): invisible characters removed, line breaks made
//! spaces, and each quoted piece shortened, so an error keeps the promises answers keep.

use super::sanitise::sanitize;
use std::borrow::Cow;

/// The most characters of one quoted piece (between backticks or double quotes) kept.
pub const MAX_QUOTED_CHARS: usize = 40;
/// The most characters of a whole echoed message kept.
pub const MAX_ECHO_CHARS: usize = 600;

/// `text` cleaned for an error summary: sanitised as untrusted text is (tag characters, bidi
/// controls, zero-width and other invisible characters, controls and ANSI escapes removed),
/// newlines and tabs made spaces, every piece between backticks or double quotes cut to
/// `MAX_QUOTED_CHARS` (40) characters (`…` marks the cut), every run of characters without a
/// space outside them too (a stray quote in the input can leave the rest of it unquoted, and
/// no word of a message is that long), and the whole to `MAX_ECHO_CHARS` (600).
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
    match sanitize(&out).0 {
        Cow::Owned(recut) => recut,
        Cow::Borrowed(_) => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
