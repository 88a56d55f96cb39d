//! Error envelopes held to the budget, cut by priority (what happened, then what to do),
//! and the error of a page too small for any answer.

use super::admit::Size;
use super::envelope::{self, Frame, Needs};
use super::render::Format;
use super::report::{ChannelTokens, RecordCounts, Report};
use super::shaped::Shaped;
use crate::budget::Budget;
use crate::budget::channel::{ChannelPolicy, PerChannel};
use crate::budget::tokens::Tokenizer;

/// The error envelope of a page that can show or skip nothing within the budget: the budget
/// that would show its first record, or hold its envelope at all.
///
/// What it needs comes first (`60 tokens needed: …`), so the shortest cut of the message still
/// says it. A page reached through a cursor (`mid_walk`) says the cursor still works at that
/// budget, so a model raising it goes on from where it was rather than starting again.
pub(super) fn too_small(
    settings: &ErrorSettings<'_>,
    needs: Needs,
    records: RecordCounts,
    mid_walk: bool,
) -> Shaped {
    let b = settings.budget;
    let (n, limit, unit) = match needs {
        Needs::Tokens(n) => (n, b.max_tokens(), "tokens"),
        Needs::Bytes(n) => (n, b.max_bytes().unwrap_or(0), "bytes"),
        Needs::Lines(n) => (n, b.max_lines().unwrap_or(0), "lines"),
    };
    let (n, limit) = (
        envelope::thousands(n as u64),
        envelope::thousands(limit as u64),
    );
    let what = match needs {
        Needs::Tokens(_) => format!(
            "{n} {unit} needed: the budget of {limit} {unit} is too small for any answer of {}",
            settings.tool
        ),
        _ => format!(
            "{n} {unit} needed: the limit of {limit} {unit} is too small for any answer of {}",
            settings.tool
        ),
    };
    let mut remedy = match needs {
        Needs::Tokens(_) => format!("raise the budget to at least {n} tokens"),
        _ => format!("raise the limit to at least {n} {unit}"),
    };
    if mid_walk {
        remedy.push_str(" and call again with the same cursor");
    }
    error_page_with(settings, &what, &remedy, records)
}

/// What an error envelope reads of its tool.
pub(crate) struct ErrorSettings<'a> {
    pub tool: &'a str,
    pub tokenizer: &'a dyn Tokenizer,
    pub budget: Budget,
    pub format: Format,
    pub channels: ChannelPolicy,
}

/// An error envelope: what happened and what to do instead, held to the budget.
///
/// Both parts are cleaned as echoed text is (invisible characters removed, each quoted piece
/// cut to 40 characters). When the whole message does not fit, it is cut by priority: the
/// rest of what happened gives way first (its first clause stays), then the end of the
/// remedy, then the end of the first clause; each cut is marked `…`. When not even the bare
/// envelope fits, the first clause is kept whole and the report says the budget was too
/// small for any answer (`over_budget`).
pub(crate) fn error_page(s: &ErrorSettings<'_>, what: &str, remedy: &str) -> Shaped {
    error_page_with(s, what, remedy, RecordCounts::default())
}

/// An error envelope that quotes `message`, text from outside the system (a tool's own
/// error), after `what`: sanitised and defused as records' values are
/// ([`as_shown`](crate::untrusted::as_shown), in both channels), marked `«…»`, not shortened
/// the way an echo is. When the budget is short, its middle gives way: its beginning and its
/// end are kept (at a word, or every 12 characters), about as much of each, the cut marked
/// between them (`«Entity with name AAAA… [cut: 3,310 characters] …AAAA not found»`), as the
/// cause of an error is often at its end; when not even a word of each fits, `what` and
/// `remedy` alone, as [`error_page`] cuts them.
pub(crate) fn error_page_quoting(
    s: &ErrorSettings<'_>,
    what: &str,
    message: &str,
    remedy: &str,
) -> Shaped {
    let prepared = crate::untrusted::prepare(
        message,
        None,
        s.tokenizer,
        crate::untrusted::UrlPolicy::Keep,
    );
    let flat: String = crate::untrusted::as_shown(&prepared.content, true)
        .0
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let original = message;
    let message = flat.trim();
    if message.is_empty() {
        // Nothing visible to quote: said, rather than a quote left out without a word.
        return match original.trim().is_empty() {
            true => error_page(s, what, remedy),
            false => error_page(
                s,
                &format!("{what}, its message holding nothing visible"),
                remedy,
            ),
        };
    }
    let clean = crate::untrusted::echo::clean;
    let (what, remedy) = (clean(what), clean(remedy));
    let (what, remedy) = (
        what.trim_end_matches(['.', ' ']),
        remedy.trim_end_matches(['.', ' ']),
    );
    let held = s.channels.held();
    let fits = |answer: &ErrorAnswer| {
        Size::of(&answer.text, answer.tokens.text).within(&s.budget)
            && (!held.structured
                || Size::of(&answer.structured, answer.tokens.structured).within(&s.budget))
    };
    let heads = cut_points(message);
    let tails = tail_points(message);
    let quoting = |k: usize| {
        error_envelope(
            s,
            &joined(
                &format!("{what}: «{}»", head_and_tail(message, &heads, &tails, k)),
                remedy,
            ),
        )
    };
    // At `2 × (heads.len() - 1)` the head alone is the whole message.
    match longest(1, 2 * (heads.len() - 1), quoting, fits) {
        Some(answer) => finish(s, answer, RecordCounts::default(), &fits),
        None => error_page(s, what, remedy),
    }
}

/// `text` with its middle cut: the first `⌈k / 2⌉` of its cut points from the beginning
/// (`heads`, [`cut_points`]) and the last `k / 2` from its end (`tails`, [`tail_points`]),
/// the number of characters cut marked between them; the whole text once the two meet.
fn head_and_tail(text: &str, heads: &[usize], tails: &[usize], k: usize) -> String {
    let head_end = heads[k.div_ceil(2).min(heads.len() - 1)];
    let tail_start = tails[(k / 2).min(tails.len() - 1)];
    if head_end >= tail_start || text[head_end..tail_start].trim().is_empty() {
        return text.to_owned();
    }
    let head = text[..head_end].trim_end();
    let tail = text[tail_start..].trim_start();
    // Every character between the two as shown, the spaces trimmed off them included.
    let gone = text[head.len()..text.len() - tail.len()].chars().count();
    let unit = if gone == 1 { "character" } else { "characters" };
    let gone = envelope::thousands(gone as u64);
    match tail {
        "" => format!("{head}… [cut: {gone} {unit}]"),
        tail => format!("{head}… [cut: {gone} {unit}] …{tail}"),
    }
}

/// [`error_page`], its report counting `records` (the records a page that could not answer
/// had).
fn error_page_with(
    s: &ErrorSettings<'_>,
    what: &str,
    remedy: &str,
    records: RecordCounts,
) -> Shaped {
    // Each part cleaned on its own, so a stray quote echoed in `what` cannot make the
    // remedy read as part of a quoted piece and be cut.
    let clean = crate::untrusted::echo::clean;
    // A message with its remedy in it (`CursorError`'s, `HandleError`'s: `what; remedy` or
    // `what: remedy`) is cut as the two parts it has.
    let (what, remedy) = match remedy {
        "" => split_remedy(what),
        remedy => (what, remedy),
    };
    let what = clean(what);
    let what = what.trim_end_matches(['.', ' ']);
    let remedy = clean(remedy);
    let remedy = remedy.trim_end_matches(['.', ' ']);
    // The text is always held to the budget: some clients whose models read the structured
    // channel show only the text of an error (Claude Code). The structured channel is held
    // unless no model reads it. Bytes and lines too, where set.
    let held = s.channels.held();
    let fits = |answer: &ErrorAnswer| {
        Size::of(&answer.text, answer.tokens.text).within(&s.budget)
            && (!held.structured
                || Size::of(&answer.structured, answer.tokens.structured).within(&s.budget))
    };
    let whole = error_envelope(s, &joined(what, remedy));
    let answer = if fits(&whole) {
        whole
    } else {
        // As much of what happened as fits (two words at least) with the whole remedy; else
        // those two words with as much of the remedy as fits; else what fits of the two.
        let what_cuts = cut_points(what);
        let remedy_cuts = cut_points(remedy);
        let least = what_cuts.len().min(3) - 1;
        let with_remedy = |k: usize| error_envelope(s, &joined(&cut(what, what_cuts[k]), remedy));
        let with_part = |k: usize| {
            error_envelope(
                s,
                &joined(&cut(what, what_cuts[least]), &cut(remedy, remedy_cuts[k])),
            )
        };
        let alone = |k: usize| error_envelope(s, &cut(what, what_cuts[k]));
        let full = what_cuts.len() - 1;
        let first = if remedy.is_empty() {
            longest(least, full.saturating_sub(1), alone, fits)
        } else {
            longest(least, full, with_remedy, fits)
                .or_else(|| longest(1, remedy_cuts.len().saturating_sub(2), with_part, fits))
        };
        first
            .or_else(|| longest(1, least, alone, fits))
            .unwrap_or_else(|| alone(least))
    };
    finish(s, answer, records, &fits)
}

/// The page of an error answer, with its report.
fn finish(
    s: &ErrorSettings<'_>,
    answer: ErrorAnswer,
    records: RecordCounts,
    fits: &dyn Fn(&ErrorAnswer) -> bool,
) -> Shaped {
    let over_budget = !fits(&answer);
    let report = Report {
        tool: s.tool.to_owned(),
        status: answer.frame.status,
        tokenizer: s.tokenizer.name().to_owned(),
        budget: s.budget.max_tokens(),
        raw: None,
        tokens: ChannelTokens::reported(answer.tokens, s.channels),
        envelope: ChannelTokens::reported(answer.tokens, s.channels),
        records,
        cut: None,
        resolvers: Vec::new(),
        diagnostics: Default::default(),
        tokenized: 0,
        over_budget,
        duration_us: 0,
        nonce: None,
    };
    report.emit();
    Shaped::new(
        answer.frame,
        answer.text,
        answer.structured,
        report,
        s.channels,
    )
}

/// A message's two parts: what happened and, after its last `; ` (else its first `: `), what
/// to do; the whole as what happened when it has neither.
fn split_remedy(message: &str) -> (&str, &str) {
    message
        .rsplit_once("; ")
        .or_else(|| message.split_once(": "))
        .unwrap_or((message, ""))
}

/// `what; remedy`, or `what` alone.
fn joined(what: &str, remedy: &str) -> String {
    if remedy.is_empty() {
        what.to_owned()
    } else {
        format!("{what}; {remedy}")
    }
}

/// The byte offsets a part can be cut at, shortest first: nothing, then after each word
/// (before each space), then the whole; a long run without spaces is cut every 12
/// characters.
fn cut_points(text: &str) -> Vec<usize> {
    let mut points = vec![0];
    let mut since = 0;
    for (at, c) in text.char_indices() {
        if c == ' ' {
            points.push(at);
            since = 0;
        } else {
            since += 1;
            if since % 12 == 0 {
                points.push(at);
            }
        }
    }
    points.push(text.len());
    points.dedup();
    points
}

/// The byte offsets the end of a part can be kept from, shortest first: its end (nothing
/// kept), then after each space from the end, then the beginning (the whole kept); a long run
/// without spaces is cut every 12 characters from its end. [`cut_points`] from the other end.
fn tail_points(text: &str) -> Vec<usize> {
    let mut points = vec![text.len()];
    let mut since = 0;
    for (at, c) in text.char_indices().rev() {
        if c == ' ' {
            points.push(at + 1);
            since = 0;
        } else {
            since += 1;
            if since % 12 == 0 {
                points.push(at);
            }
        }
    }
    points.push(0);
    points.dedup();
    points
}

/// `text` cut at byte `at` and marked `…`; the whole of it when `at` is its end, nothing
/// when it is empty.
fn cut(text: &str, at: usize) -> String {
    if at >= text.len() {
        text.to_owned()
    } else {
        format!("{}…", text[..at].trim_end())
    }
}

/// The answer `make(k)` for the largest `k` in `lo..=hi` whose answer fits, by bisection
/// (longer text never takes fewer tokens); `None` when none does.
fn longest(
    lo: usize,
    hi: usize,
    make: impl Fn(usize) -> ErrorAnswer,
    fits: impl Fn(&ErrorAnswer) -> bool,
) -> Option<ErrorAnswer> {
    let (mut lo, mut hi) = (lo, hi);
    let mut best = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let answer = make(mid);
        if fits(&answer) {
            best = Some(answer);
            lo = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            hi = mid - 1;
        }
    }
    best
}

/// An error answer: its frame, text channel, tokens and structured channel.
struct ErrorAnswer {
    frame: Frame,
    text: String,
    tokens: PerChannel<usize>,
    structured: String,
}

/// The error envelope with `summary`, in both channels, and its tokens.
fn error_envelope(s: &ErrorSettings<'_>, summary: &str) -> ErrorAnswer {
    let mut frame = Frame::error("", "");
    frame.summary = summary.to_owned();
    let structured = format!(
        "{}{}",
        envelope::json_head(&frame, false, Default::default()),
        envelope::json_tail(&frame)
    );
    let text = match s.format {
        Format::Json => structured.clone(),
        Format::Prose | Format::Table => format!(
            "{}{}",
            envelope::text_head(&frame, None),
            envelope::text_tail(&frame, "records", "", false)
        ),
    };
    let tokens = PerChannel {
        text: s.tokenizer.count(&text),
        structured: s.tokenizer.count(&structured),
    };
    ErrorAnswer {
        frame,
        text,
        tokens,
        structured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Head and tail grow a cut point at a time, the head first; the figure counts every
    /// character between them as shown (the spaces trimmed off them too), in characters, not
    /// bytes; once nothing but spaces would be cut, the whole text.
    #[test]
    fn a_cut_in_the_middle_counts_every_character_it_takes_out() {
        let text = "alpha  beta gamma  delta";
        let (heads, tails) = (cut_points(text), tail_points(text));
        let shown = |k| head_and_tail(text, &heads, &tails, k);
        assert_eq!(shown(1), "alpha… [cut: 19 characters]");
        assert_eq!(shown(2), "alpha… [cut: 14 characters] …delta");
        assert_eq!(shown(4), "alpha… [cut: 14 characters] …delta");
        assert_eq!(shown(5), "alpha  beta… [cut: 8 characters] …delta");
        assert_eq!(shown(6), text);
        assert_eq!(shown(12), text);
        let wide = "é".repeat(30);
        let (heads, tails) = (cut_points(&wide), tail_points(&wide));
        assert_eq!(
            head_and_tail(&wide, &heads, &tails, 1),
            format!("{}… [cut: 19 characters]", "é".repeat(11))
        );
        assert_eq!(
            head_and_tail(&wide, &heads, &tails, 2),
            format!(
                "{}… [cut: 7 characters] …{}",
                "é".repeat(11),
                "é".repeat(12)
            )
        );
        let one = "ab cd";
        let (heads, tails) = (cut_points(one), tail_points(one));
        assert_eq!(
            head_and_tail(one, &heads, &tails, 1),
            "ab… [cut: 3 characters]"
        );
    }
}
