//! Rendering: one untrusted value written in the channel being rendered (sanitised and
//! capped, and in the text channel neutralised, datamarked and wrapped in its provenance
//! delimiter), the call's nonce, the note line that names the sources of compact marks, and
//! what a call counted ([`UntrustedStats`]).

use super::cap::{Truncation, prepare, refit};
use super::neutralise::{may_begin_delimiter, neutralize_counted, neutralize_guillemets};
use super::policy::{Provenance, UntrustedPolicy, UrlPolicy};
use super::sanitise::Removed;
use crate::budget::tokens::Tokenizer;
use serde::Serializer;
use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// What happened to untrusted text in one call (counted once per shown record).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct UntrustedStats {
    /// Untrusted values shown.
    pub values: u32,
    /// Values cut at their cap; a list whose cap left items out counts once more.
    pub cut: u32,
    /// Items of untrusted lists left out at their list's cap (each list says how many, as
    /// `[cut: 3 more items]`); their tokens are not in `cut_tokens`, since they are not read.
    pub cut_items: u64,
    /// Tokens cut in all (estimated for values cut in bytes first; see [`Truncation::exact`](super::Truncation::exact)).
    pub cut_tokens: u64,
    /// Attacker-controlled tokens that reached the output: the tokens of each value's content
    /// after sanitising, link policy and caps, without markers and delimiters.
    pub attacker_tokens: u64,
    /// Invisible carriers removed.
    pub removed: Removed,
    /// Links and images flagged or stripped by the [`UrlPolicy`].
    pub links: u32,
    /// Look-alikes of the provenance delimiter found in content (neutralised in the text
    /// channel).
    pub delimiters: u32,
    /// Values so long they were cut in bytes before being tokenized.
    pub byte_capped: u32,
}

/// Writes `text` with every space replaced by `mark`.
struct Datamarked<'a> {
    text: &'a str,
    mark: Option<char>,
}

impl fmt::Display for Datamarked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(mark) = self.mark else {
            return f.write_str(self.text);
        };
        let mut parts = self.text.split(' ');
        if let Some(first) = parts.next() {
            f.write_str(first)?;
        }
        for part in parts {
            f.write_char(mark)?;
            f.write_str(part)?;
        }
        Ok(())
    }
}

/// A name written into the `source` attribute: only characters that cannot end it.
struct AttrSafe<'a>(&'a str);

impl fmt::Display for AttrSafe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self
            .0
            .chars()
            .filter(|c| !matches!(c, '"' | '<' | '>' | '&') && !c.is_control())
        {
            f.write_char(c)?;
        }
        Ok(())
    }
}

/// The nonce as it appears in a random delimiter: ASCII letters and digits only.
struct Nonce<'a>(Option<&'a str>);

impl fmt::Display for Nonce<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(nonce) = self.0 {
            f.write_char('-')?;
            for c in nonce.chars().filter(char::is_ascii_alphanumeric) {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

struct Shown<'a> {
    tag: Option<(Nonce<'a>, &'a str, &'a str)>,
    guillemets: bool,
    content: Datamarked<'a>,
    cut: Option<Truncation>,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.guillemets {
            write!(f, "«{}", self.content)?;
            if let Some(cut) = self.cut {
                write!(f, "{cut}")?;
            }
            return f.write_str("»");
        }
        if let Some((nonce, tool, field)) = &self.tag {
            write!(
                f,
                "<untrusted{nonce} source=\"{}.{}\">",
                AttrSafe(tool),
                AttrSafe(field)
            )?;
        }
        match (&self.tag, self.cut, self.content.mark) {
            // Not marked at all (provenance off): still never the bare marker's words.
            (None, None, None) => write!(
                f,
                "{}",
                crate::fields::recorded::ValueText(self.content.text)
            )?,
            _ => write!(f, "{}", self.content)?,
        }
        if let Some(cut) = self.cut {
            write!(f, "{cut}")?;
        }
        if let Some((nonce, _, _)) = &self.tag {
            write!(f, "</untrusted{nonce}>")?;
        }
        Ok(())
    }
}

/// What rendering an untrusted value needs of the call it is rendered in. The call's state
/// implements it, so this module depends on no rendering module above it.
pub(crate) trait UntrustedCall {
    /// The tool's name, for `source="tool.field"`.
    fn tool(&self) -> &str;
    /// `field`'s path in the record (`comments.body` for a nested record's `body`).
    fn field_path<'f>(&self, field: &'f str) -> std::borrow::Cow<'f, str> {
        std::borrow::Cow::Borrowed(field)
    }
    /// The tokenizer caps are counted in.
    fn tokenizer(&self) -> &dyn Tokenizer;
    /// The tool's untrusted-text policy.
    fn policy(&self) -> &UntrustedPolicy;
    /// This call's nonce (see [`nonce`]).
    fn nonce(&self) -> &str;
    /// Whether the text channel is being rendered (else the structured one).
    fn text_channel(&self) -> bool;
    /// Whether this pass counts what it does (each shown value is counted once).
    fn counting(&self) -> bool;
    /// Whether values get compact marks (`«…»`), the sources being named in the note line.
    fn compact_marks(&self) -> bool;
    /// Whether a JSON text channel's envelope names the untrusted fields once (its
    /// `untrusted` key), so values are neutralised but not wrapped.
    fn named_fields(&self) -> bool;
    /// Adds to the call's counts (only in the counting pass).
    fn count(&self, f: &mut dyn FnMut(&mut UntrustedStats));
}

/// A short random string for this call's delimiters (`<untrusted-381904725516 …>`): 40 bits
/// as 12 digits, four tokens whatever they are, so a page with random delimiters holds the
/// same records on every call ([`crate::text::digits`]).
pub(crate) fn nonce() -> String {
    let mut bytes = [0u8; 5];
    if getrandom::fill(&mut bytes).is_err() {
        // Without an entropy source the delimiter is still unique per process and call.
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed) ^ u64::from(std::process::id());
        bytes.copy_from_slice(&n.to_le_bytes()[..5]);
    }
    // Five bytes are 13 digits; their value is below 2^40 < 10^13, so a modulus keeps twelve
    // (39.9 bits) at a fixed width.
    let value = bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)) % 1_000_000_000_000;
    format!("{value:012}")
}

/// The note line of a prose or table page whose untrusted `fields` get compact marks:
/// `«…» is untrusted text from search_tickets.subject, search_tickets.body`. `None` when the
/// policy marks values another way or no field is untrusted; `Some` means the page's text
/// channel marks values compactly, and shows this line once, first.
/// The most sources a page's note names one by one.
pub(crate) const MAX_NAMED_SOURCES: usize = 4;

pub(crate) fn note_line(policy: &UntrustedPolicy, tool: &str, fields: &[&str]) -> Option<String> {
    if fields.is_empty() || policy.provenance != Provenance::Compact {
        return None;
    }
    // Many fields (records nobody described, whose every value is outsiders' text): the
    // tool names the source once, the fields are counted.
    if fields.len() > MAX_NAMED_SOURCES {
        return Some(format!(
            "«…» is untrusted text from {tool} ({} fields)",
            fields.len()
        ));
    }
    let sources: Vec<String> = fields.iter().map(|name| format!("{tool}.{name}")).collect();
    Some(format!("«…» is untrusted text from {}", sources.join(", ")))
}

/// Outsiders' text as it is shown: every look-alike of the provenance delimiter defused, and
/// of the compact marks (`«` `»`) too when `marks_too`; with the number of delimiter
/// look-alikes found. Borrows when there is nothing to defuse.
///
/// The one way outsiders' text becomes what a model reads: records' values go through it,
/// and so do an error's quote of a tool's message and every echo in an error
/// ([`super::echo::clean`]), so nothing an outsider wrote can close or open a mark anywhere.
pub(crate) fn as_shown(text: &str, marks_too: bool) -> (Cow<'_, str>, u32) {
    let (neutralised, delimiters) = neutralize_counted(text);
    let shown = match marks_too {
        true => neutralize_guillemets(neutralised),
        false => neutralised,
    };
    (shown, delimiters)
}

/// Writes one untrusted value: prepared, counted (once per shown record), and in the text
/// channel neutralised, datamarked and wrapped in its provenance delimiter.
pub(crate) fn serialize_untrusted<S: Serializer>(
    text: &str,
    field: &str,
    cap: Option<u32>,
    env: &(impl UntrustedCall + ?Sized),
    s: S,
) -> Result<S::Ok, S::Error> {
    let tokenizer = env.tokenizer();
    let policy = env.policy();
    let delimited = policy.provenance != Provenance::Off;
    // The hot path: a short printable-ASCII value in the structured channel, outside the
    // counting pass, has nothing to remove, cut, mark or count; only a delimiter look-alike
    // to defuse (borrowed when there is none).
    if !env.counting()
        && !env.text_channel()
        && policy.urls == UrlPolicy::Keep
        && cap.is_none_or(|c| text.len() <= c as usize)
    {
        // One scan: printable ASCII, and whether any byte could begin a delimiter look-alike
        // (`<` `/` and the escapes `&` `%` `\` for `</untrusted>`; `&` for the entities of
        // `«` `»`, whose characters are not ASCII).
        let mut printable = true;
        let mut suspect = false;
        for b in text.bytes() {
            if !(0x20..0x7f).contains(&b) {
                printable = false;
                break;
            }
            suspect |= may_begin_delimiter(b);
        }
        if printable {
            if !delimited || !suspect {
                return crate::fields::recorded::serialize_value_text(text, s);
            }
            let content = as_shown(text, true).0;
            // A capped value that neutralising changed (it then owns its text) may now be over
            // its cap (see `refit`): the general path holds it there.
            if cap.is_none() || matches!(content, Cow::Borrowed(_)) {
                return s.serialize_str(&content);
            }
        }
    }
    let p = prepare(text, cap, tokenizer, policy.urls);
    let text_channel = env.text_channel();
    // Values not wrapped one by one: the structured channel, and a JSON text channel whose
    // envelope names its untrusted fields once. Their provenance is the envelope's
    // `untrusted` key; every delimiter this library writes anywhere (`<untrusted…>` and the
    // compact `«…»`) is still defused, so no value can pass for one in any channel.
    let one_by_one = text_channel && !(delimited && env.named_fields());
    let guillemets = one_by_one && policy.provenance == Provenance::Compact && env.compact_marks();
    // Neutralised as shown: look-alikes defused, and the compact marks too where values are
    // not delimited one by one or are delimited by them. Without provenance nothing is
    // defused, but the counting pass still counts the look-alikes.
    let marks_too = !one_by_one || guillemets;
    let (mut content, delimiters) = if delimited {
        as_shown(&p.content, marks_too)
    } else if env.counting() {
        (Cow::Borrowed(&*p.content), neutralize_counted(&p.content).1)
    } else {
        (Cow::Borrowed(&*p.content), 0)
    };
    let mut cut = p.cut;
    // Neutralising borrows what it leaves unchanged, so an owned `content` is a changed one
    // (no comparison of the texts).
    let mut refitted = None;
    if let Some(cap) = cap
        && matches!(content, Cow::Owned(_))
        && let Some(kept) = refit(&mut content, &mut cut, cap, tokenizer)
    {
        refitted = Some(kept);
    }
    // An exact cut's figure is of the value as shown: where neutralising changes the value
    // (a look-alike in the part cut, or one the cut split, which tokenizes otherwise joined),
    // the figure is the whole value neutralised less what is shown. The value was read whole
    // for an exact cut, so this costs a second read of it, only for a value with a byte a
    // look-alike could begin with (ASCII text without one has nothing to defuse, and
    // neither sanitising nor the link policy writes one), and a count only for a value with
    // a look-alike.
    if delimited
        && let Some(c) = &mut cut
        && c.exact
        && (!text.is_ascii() || text.bytes().any(may_begin_delimiter))
        && let whole = prepare(text, None, tokenizer, policy.urls)
        && let Cow::Owned(whole) = as_shown(&whole.content, marks_too).0
    {
        // What refitting kept was counted there.
        let shown = refitted.unwrap_or_else(|| tokenizer.count(&content));
        c.tokens = u64::try_from(tokenizer.count(&whole).saturating_sub(shown)).unwrap_or(u64::MAX);
        c.decide_brief(tokenizer);
    }
    env.count(&mut |st: &mut UntrustedStats| {
        // Counted only in the counting pass (a value's tokens are a whole read of it). The
        // attacker's tokens shown: at most what refitting kept, markers included.
        let shown = p.attacker_tokens(tokenizer);
        let attacker_tokens = refitted.map_or(shown, |kept| shown.min(kept));
        st.values = st.values.saturating_add(1);
        if let Some(cut) = cut {
            st.cut = st.cut.saturating_add(1);
            st.cut_tokens = st.cut_tokens.saturating_add(cut.tokens);
            st.byte_capped = st.byte_capped.saturating_add(u32::from(cut.byte_capped));
        }
        st.attacker_tokens = st.attacker_tokens.saturating_add(attacker_tokens as u64);
        st.removed.add(p.removed);
        st.links = st.links.saturating_add(p.links);
        st.delimiters = st.delimiters.saturating_add(delimiters);
    });
    if !one_by_one {
        let content = Datamarked {
            text: &content,
            mark: policy.datamark.filter(|_| text_channel),
        };
        return match cut {
            None if content.mark.is_none() => {
                crate::fields::recorded::serialize_value_text(content.text, s)
            }
            None => s.collect_str(&content),
            Some(cut) => s.collect_str(&format_args!("{content}{cut}")),
        };
    }
    let nonce = (policy.provenance == Provenance::RandomTag)
        .then(|| env.nonce())
        .filter(|n| n.chars().any(|c| c.is_ascii_alphanumeric()));
    let source = env.field_path(field);
    let shown = Shown {
        tag: (delimited && !guillemets).then_some((Nonce(nonce), env.tool(), &*source)),
        guillemets,
        content: Datamarked {
            text: &content,
            mark: policy.datamark,
        },
        cut,
    };
    s.collect_str(&shown)
}
