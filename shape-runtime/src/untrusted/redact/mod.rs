//! Redaction: secrets (and, by policy, e-mail addresses and phone numbers) taken out of an
//! answer before anything of it is read, stored or shown, each replaced by a marker naming
//! what was there (`[redacted: github-pat]`) and counted.
//!
//! A harness (and so the proxy) redacts every answer at its door, whole: each text block as
//! one text (a private key's lines are one secret; a line cut into parts later would hide
//! it), JSON text and structured content string by string (values and keys), so a marker
//! never breaks the JSON around it. Three kinds of finding:
//!
//! - **Secrets in their known formats**: the rules of gitleaks, as the `secrets_scanner` crate
//!   ships and updates them ([`rules`]): cloud, source hosting, chat, payment and model
//!   providers' keys and tokens, private key blocks, JWTs, connection strings, and
//!   `password = …`-like assignments in text.
//! - **High-entropy values under key-like names** (`password`, `client_secret`, `apiKey`,
//!   `access_token`, …) in JSON: a value without spaces of at least 8 characters and an
//!   entropy of at least 3 bits a character. A key that names a tool's argument, an id, a page
//!   or a cursor (`page_token`, `next_cursor`, `token_id`) is not key-like: a model passes
//!   those back.
//! - **E-mail addresses and phone numbers**, when the policy asks for them (off by default:
//!   an address is often what a tool takes next). A value under a key that names a tool's
//!   argument (`email`, `assignee`) is left as it is.
//!
//! Ids stay: no rule reads an id (a number, a UUID, a commit hash, a node id) as a secret, and
//! values under a tool's argument names are never taken for high-entropy secrets; the tests
//! hold real payloads (GitHub, npm, JSON:API, git logs, build logs) to no redaction at all.

mod json;
mod rules;

use super::policy::Redaction;
use regex::Regex;
use rules::RuleSet;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// What one answer's redaction took out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Redacted {
    /// Secrets in a known format, and high-entropy values under key-like names.
    pub(crate) secrets: u32,
    /// E-mail addresses.
    pub(crate) emails: u32,
    /// Phone numbers.
    pub(crate) phones: u32,
}

impl Redacted {
    pub(crate) fn total(&self) -> u32 {
        self.secrets
            .saturating_add(self.emails)
            .saturating_add(self.phones)
    }

    pub(crate) fn add(&mut self, other: Redacted) {
        self.secrets = self.secrets.saturating_add(other.secrets);
        self.emails = self.emails.saturating_add(other.emails);
        self.phones = self.phones.saturating_add(other.phones);
    }

    fn count(&mut self, kind: Kind) {
        let n = match kind {
            Kind::Secret => &mut self.secrets,
            Kind::Email => &mut self.emails,
            Kind::Phone => &mut self.phones,
        };
        *n = n.saturating_add(1);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Secret,
    Email,
    Phone,
}

/// One span to take out, and what the marker names.
#[derive(Debug, Clone)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
    name: Cow<'static, str>,
}

fn email() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b[a-z0-9][a-z0-9._%+-]{0,63}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,8}[a-z]{2,24}\b")
            .expect("the e-mail pattern")
    })
}

/// A phone number as people write one: an international number (`+` and 8 to 15 digits,
/// spaces, dots, dashes or a bracketed area code between groups), or a national one in groups
/// (`(555) 123-4567`, `555-123-4567`, `555.123.4567`). Digits alone are not a phone number
/// (they are ids, counts, timestamps), nor are numbers in a row, dates, times, versions and
/// addresses (their groups are shorter, or dotted in fours).
fn phone() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"(?:^|[^\w+.\-/:])(",
            // International: + country code, then groups.
            r"\+\d{1,3}(?:[ .\-]?\(\d{1,4}\))?(?:[ .\-]?\d{2,5}){2,5}",
            r"|",
            // National: an area code in brackets, then two groups; or three groups joined by
            // dashes, or by dots (the last of four digits). Not groups joined by spaces alone:
            // those are numbers in a row (a table, a drawing's path).
            r"(?:\(\d{2,5}\)[ ]?\d{3,4}[ .\-]\d{3,5}",
            r"|\d{3,5}-\d{3,4}-\d{3,5}",
            r"|\d{3,5}\.\d{3,4}\.\d{4})",
            r")(?:$|[^\w.\-/:])"
        ))
        .expect("the phone pattern")
    })
}

/// Whether `digits` (those of a phone-like match) can be a phone number: 7 to 15 digits.
fn phone_digits(text: &str) -> bool {
    let n = text.bytes().filter(u8::is_ascii_digit).count();
    (7..=15).contains(&n)
}

/// A JSON key split in lowercase words (`clientSecret`, `client_secret`, `client-secret`
/// → `client`, `secret`).
fn words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// A key's name without case or separators, to compare with a tool's argument names.
fn squashed(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether a value under `key` is a secret when it looks random: the key names a password,
/// a secret, a token, a credential or a key of a kind that is one (`api_key`, `private_key`),
/// and nothing a model passes back (an id, a page, a cursor).
fn key_like(key: &str) -> bool {
    let words = words(key);
    const PASSED_BACK: &[&str] = &[
        "id",
        "ids",
        "page",
        "cursor",
        "next",
        "prev",
        "previous",
        "continuation",
        "type",
        "name",
        "url",
        "uri",
        "count",
        "length",
        "expires",
        "expiry",
        "hint",
        "usage",
        "limit",
        "sync",
        "format",
        "kind",
        "path",
        "file",
        "hash",
        "sha",
        "etag",
    ];
    if words.iter().any(|w| PASSED_BACK.contains(&w.as_str())) {
        return false;
    }
    const SECRET: &[&str] = &[
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "credential",
        "credentials",
        "authorization",
    ];
    // Kinds of key that are secrets, written as one word or two (`apikey`, `api_key`).
    const KEYS: &[&str] = &[
        "apikey",
        "privatekey",
        "accesskey",
        "secretkey",
        "signingkey",
        "sessionkey",
    ];
    let joined = words.concat();
    words.iter().any(|w| SECRET.contains(&w.as_str())) || KEYS.iter().any(|k| joined.contains(k))
}

/// Redacts the answers of one tool under its policy; `arguments` are the names the server's
/// tools take, whose values a model passes back.
pub(crate) struct Redactor<'a> {
    policy: Redaction,
    arguments: &'a BTreeSet<String>,
    /// `arguments` squashed (see [`squashed`]).
    squashed: BTreeSet<String>,
}

impl<'a> Redactor<'a> {
    pub(crate) fn new(policy: Redaction, arguments: &'a BTreeSet<String>) -> Self {
        Redactor {
            policy,
            arguments,
            squashed: arguments.iter().map(|a| squashed(a)).collect(),
        }
    }

    /// Whether this policy redacts anything.
    pub(crate) fn is_on(&self) -> bool {
        self.policy.secrets || self.policy.emails || self.policy.phones
    }

    /// Whether `key` names something a model passes back to a tool.
    fn is_argument(&self, key: &str) -> bool {
        self.arguments.contains(key) || self.squashed.contains(&squashed(key))
    }

    /// The spans of `text` to take out; `key`: the JSON key it is the value of.
    fn spans(&self, text: &str, key: Option<&str>) -> Vec<Span> {
        let mut spans = Vec::new();
        if self.policy.secrets {
            let set = RuleSet::bundled();
            for rules::Found { start, end, rule } in set.find(text) {
                spans.push(Span {
                    start,
                    end,
                    kind: Kind::Secret,
                    name: Cow::Owned(set.rules[rule].id.clone()),
                });
            }
            if spans.is_empty()
                && let Some(key) = key
                && !self.is_argument(key)
                && key_like(key)
                && text.chars().count() >= 8
                && !text.chars().any(char::is_whitespace)
                && rules::entropy(text) >= 3.0
            {
                spans.push(Span {
                    start: 0,
                    end: text.len(),
                    kind: Kind::Secret,
                    name: Cow::Borrowed("secret"),
                });
            }
        }
        let passed_back = key.is_some_and(|k| self.is_argument(k));
        if self.policy.emails && !passed_back && text.contains('@') {
            for m in email().find_iter(text) {
                spans.push(Span {
                    start: m.start(),
                    end: m.end(),
                    kind: Kind::Email,
                    name: Cow::Borrowed("e-mail"),
                });
            }
        }
        if self.policy.phones && !passed_back {
            let mut at = 0;
            while let Some(caps) = phone().captures_at(text, at) {
                let number = caps.get(1).expect("the number's group");
                // The next search starts at the number's end: what ended the match (a space)
                // can begin the next one.
                at = number.end();
                if phone_digits(number.as_str()) {
                    spans.push(Span {
                        start: number.start(),
                        end: number.end(),
                        kind: Kind::Phone,
                        name: Cow::Borrowed("phone"),
                    });
                }
            }
        }
        // Overlapping findings (two rules on one secret, an address inside a secret) are one
        // span, named by the first.
        if spans.len() > 1 {
            spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
            let mut joined: Vec<Span> = Vec::with_capacity(spans.len());
            for s in spans {
                match joined.last_mut() {
                    Some(last) if s.start < last.end => last.end = last.end.max(s.end),
                    _ => joined.push(s),
                }
            }
            spans = joined;
        }
        spans
    }

    /// `text` with every finding replaced by its marker (`[redacted: github-pat]`), counted
    /// in `counts`; borrowed when nothing was found. `key`: the JSON key `text` is the value
    /// of, if any.
    pub(crate) fn text<'t>(
        &self,
        text: &'t str,
        key: Option<&str>,
        counts: &mut Redacted,
    ) -> Cow<'t, str> {
        if !self.is_on() {
            return Cow::Borrowed(text);
        }
        let spans = self.spans(text, key);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for span in spans {
            out.push_str(&text[at..span.start]);
            out.push_str("[redacted: ");
            out.push_str(&span.name);
            out.push(']');
            counts.count(span.kind);
            at = span.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// A text block of an answer: JSON text string by string ([`json::redact`], keys and
    /// values, the rest byte for byte as written), any other text whole.
    pub(crate) fn block<'t>(&self, text: &'t str, counts: &mut Redacted) -> Cow<'t, str> {
        if !self.is_on() {
            return Cow::Borrowed(text);
        }
        let trimmed = text.trim_start();
        if trimmed.starts_with(['{', '['])
            && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
        {
            return json::redact(text, self, counts);
        }
        self.text(text, None, counts)
    }

    /// A structured value, string by string: every string value and every key.
    pub(crate) fn value(&self, value: &mut Value, counts: &mut Redacted) {
        if self.is_on() {
            self.value_under(value, None, counts, &mut 0);
        }
    }

    fn value_under(
        &self,
        value: &mut Value,
        key: Option<&str>,
        counts: &mut Redacted,
        keys: &mut u32,
    ) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(new) = self.text(s, key, counts) {
                    *s = new;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.value_under(item, key, counts, keys);
                }
            }
            Value::Object(map) => {
                // Each key read once: what it becomes, where it held a secret.
                let renamed: Vec<Option<String>> =
                    map.keys().map(|k| self.key(k, counts, keys)).collect();
                if renamed.iter().any(Option::is_some) {
                    let old = std::mem::take(map);
                    for ((k, mut v), new) in old.into_iter().zip(renamed) {
                        self.value_under(&mut v, Some(&k), counts, keys);
                        map.insert(new.unwrap_or(k), v);
                    }
                } else {
                    for (k, v) in map.iter_mut() {
                        self.value_under(v, Some(k), counts, keys);
                    }
                }
            }
            _ => {}
        }
    }

    /// The marker a key that holds a secret becomes, numbered in the order keys are read
    /// (`[redacted: github-pat] #2`) so two such keys of one object stay two; `None` when the
    /// key holds none. JSON text and structured content alike.
    pub(super) fn key(&self, key: &str, counts: &mut Redacted, keys: &mut u32) -> Option<String> {
        match self.text(key, None, counts) {
            Cow::Borrowed(_) => None,
            Cow::Owned(new) => {
                *keys += 1;
                Some(format!("{new} #{keys}"))
            }
        }
    }
}

#[cfg(test)]
mod tests;
