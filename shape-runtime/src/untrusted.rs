//! Untrusted text: what someone outside the system wrote (ticket subjects, issue bodies, web
//! pages), made safe to put in front of a model.
//!
//! Every value of an `untrusted` field is, in this order: capped in bytes (so a 100 MB field is
//! never tokenized whole), sanitised (invisible carriers removed), capped in tokens at a token
//! boundary with a marker saying how much was cut, and, in the text channel, wrapped in a
//! provenance delimiter naming its source, with any delimiter inside the content neutralised.

use crate::tokens::Tokenizer;
use crate::view::{CallEnv, Channel};
use serde::Serializer;
use std::borrow::Cow;

/// How untrusted values are marked in the text channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// `<untrusted source="tool.field">…</untrusted>`.
    #[default]
    Tag,
    /// No delimiter (sanitising and caps still apply).
    Off,
}

/// The untrusted-text policy of a tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UntrustedPolicy {
    /// How values are marked in the text channel.
    pub provenance: Provenance,
}

/// What sanitising removed, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    /// Unicode tag characters (U+E0000–E007F) outside emoji tag sequences.
    pub tag_chars: u32,
    /// Bidi controls.
    pub bidi: u32,
    /// Zero-width characters.
    pub zero_width: u32,
    /// C0 and C1 controls other than newline and tab.
    pub controls: u32,
}

impl Removed {
    fn add(&mut self, other: Removed) {
        self.tag_chars += other.tag_chars;
        self.bidi += other.bidi;
        self.zero_width += other.zero_width;
        self.controls += other.controls;
    }
}

/// What happened to untrusted text in one call.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct UntrustedStats {
    /// Untrusted values shown.
    pub values: u32,
    /// Values cut at their cap.
    pub cut: u32,
    /// Tokens cut in all.
    pub cut_tokens: u64,
    /// Attacker-controlled tokens that reached the output (content only, after caps).
    pub attacker_tokens: u64,
    /// Invisible carriers removed.
    pub removed: Removed,
}

fn classify(c: char) -> Option<fn(&mut Removed)> {
    match c {
        '\u{E0000}'..='\u{E007F}' => Some(|r| r.tag_chars += 1),
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some(|r| r.bidi += 1),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Some(|r| r.zero_width += 1),
        '\n' | '\t' => None,
        c if c.is_control() => Some(|r| r.controls += 1),
        _ => None,
    }
}

/// Removes invisible carriers from `text`. Borrows when there is nothing to remove.
pub fn sanitize(text: &str) -> (Cow<'_, str>, Removed) {
    let mut removed = Removed::default();
    if text.chars().all(|c| classify(c).is_none()) {
        return (Cow::Borrowed(text), removed);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match classify(c) {
            Some(count) => count(&mut removed),
            None => out.push(c),
        }
    }
    (Cow::Owned(out), removed)
}

/// Neutralises anything in `text` that could read as the provenance delimiter.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    if !text.to_ascii_lowercase().contains("untrusted") {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('<', "‹").replace('>', "›"))
}

pub(crate) fn serialize_untrusted<S: Serializer>(
    text: &str,
    field: &str,
    cap: Option<u32>,
    env: &CallEnv<'_>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let tokenizer = env.tokenizer();
    // Byte cap first: no token is longer than max_token_bytes, so cap+1 tokens fit in this.
    let limit = cap.map(|c| (c as usize + 1).saturating_mul(tokenizer.max_token_bytes()));
    let mut end = limit.map_or(text.len(), |l| l.min(text.len()));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let byte_capped = end < text.len();
    let (clean, removed) = sanitize(&text[..end]);
    let mut content: Cow<str> = clean;
    let mut cut_tokens = 0usize;
    if let Some(cap) = cap {
        // Each token covers at least one byte, so a text no longer than the cap fits.
        if content.len() > cap as usize {
            let t = tokenizer.truncate(&content, cap as usize);
            if t.prefix.len() < content.len() {
                cut_tokens = t.total_tokens - t.prefix_tokens;
                let prefix = t.prefix.to_owned();
                content = Cow::Owned(prefix);
            }
        }
    }
    let marker = if cut_tokens > 0 || byte_capped {
        let more = if byte_capped { "more than " } else { "" };
        let n = if byte_capped {
            cut_tokens.max(1)
        } else {
            cut_tokens
        };
        format!(
            " [cut: {more}{} more tokens]",
            crate::envelope::thousands(n as u64)
        )
    } else {
        String::new()
    };
    env.with_untrusted_stats(|st| {
        st.values += 1;
        if !marker.is_empty() {
            st.cut += 1;
            st.cut_tokens += cut_tokens as u64;
        }
        st.attacker_tokens += tokenizer.count(&content) as u64;
        st.removed.add(removed);
    });
    match (env.channel(), env.policy().provenance) {
        (Channel::Text, Provenance::Tag) => s.collect_str(&format_args!(
            "<untrusted source=\"{}.{}\">{}{}</untrusted>",
            env.tool(),
            field,
            neutralize(&content),
            marker
        )),
        _ => s.collect_str(&format_args!("{content}{marker}")),
    }
}
