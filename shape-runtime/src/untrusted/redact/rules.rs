//! The secret rules: gitleaks' rule set (with the few rules `secrets_scanner` adds to it), as
//! the `secrets_scanner` crate ships and updates it, read by an engine of ours that compiles
//! each rule only when its keyword is first seen.
//!
//! Why not `secrets_scanner`'s own engine: it compiles every rule at start, with Unicode
//! classes (6 s for the gitleaks rules on this project's 2-core machine, a few of them over
//! `regex`'s size limit), and then reads about 2.5 µs a byte (128 ms for a 52 KB build log).
//! Gitleaks' rules are written for Go's RE2, where `\w`, `\d`, `\s` and `\b` are ASCII: built
//! with Unicode off, as RE2 reads them, all of them compile in about 60 ms and a text is read
//! at about 0.25 µs a byte with every rule whose keyword it holds.
//!
//! What a match means follows gitleaks: a rule applies to a text holding one of its keywords
//! (ignoring case); the secret is the rule's `secretGroup`, else the first capture group that
//! matched something, else the whole match; a rule with an `entropy` needs the secret's
//! Shannon entropy above it (and a `generic` rule a digit in the secret); the global
//! allow-list and the rule's own (regexes against the secret, the match or the line,
//! stop-words in the secret) let a match go. Allow-lists that name file paths never apply:
//! an answer has no path.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use std::sync::OnceLock;

/// One rule of the set.
pub(super) struct Rule {
    pub(super) id: String,
    source: String,
    compiled: OnceLock<Option<Regex>>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    allow: Vec<Allow>,
}

/// One allow-list of a rule (or the global one).
struct Allow {
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    /// `AND`: every part must hold (one that names paths never does here).
    all: bool,
    /// Names file paths (which an answer never has).
    paths: bool,
}

#[derive(Clone, Copy)]
enum Target {
    Secret,
    Match,
    Line,
}

/// The rules, their keywords and the global allow-list.
pub(super) struct RuleSet {
    pub(super) rules: Vec<Rule>,
    keywords: AhoCorasick,
    /// For each keyword, the rules it opens.
    opens: Vec<Vec<usize>>,
    global: Allow,
}

/// A secret found: its bytes in the text and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rule: usize,
}

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(&re2_braces(pattern))
        .unicode(false)
        .size_limit(64 << 20)
        .build()
        .ok()
}

/// `pattern` with each `{` that starts no repetition escaped: RE2 reads such a brace as
/// itself (`^\${(?:[A-Z_]+)}$`, `{\d+}`), `regex` refuses it.
fn re2_braces(pattern: &str) -> std::borrow::Cow<'_, str> {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut changed = false;
    let mut in_class = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            // An escape and what it escapes, as they are (ASCII or not, whole characters).
            b'\\' => {
                let end = pattern[i + 1..]
                    .chars()
                    .next()
                    .map_or(bytes.len(), |ch| i + 1 + ch.len_utf8());
                out.push_str(&pattern[i..end]);
                i = end;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'{' if !in_class && !is_repetition(&bytes[i..]) => {
                out.push_str("\\{");
                changed = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        let end = pattern[i..]
            .chars()
            .next()
            .map_or(bytes.len(), |ch| i + ch.len_utf8());
        out.push_str(&pattern[i..end]);
        i = end;
    }
    match changed {
        true => std::borrow::Cow::Owned(out),
        false => std::borrow::Cow::Borrowed(pattern),
    }
}

/// Whether `rest` (starting at `{`) is a repetition: `{n}`, `{n,}` or `{n,m}`, right after
/// something it repeats.
fn is_repetition(rest: &[u8]) -> bool {
    let body = &rest[1..];
    let Some(close) = body.iter().position(|&b| b == b'}') else {
        return false;
    };
    let inner = &body[..close];
    let mut parts = inner.splitn(2, |&b| b == b',');
    let first = parts.next().unwrap_or_default();
    !first.is_empty()
        && first.iter().all(u8::is_ascii_digit)
        && parts
            .next()
            .is_none_or(|m| m.iter().all(u8::is_ascii_digit))
}

fn strings(value: Option<&toml::Value>) -> Vec<String> {
    value
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn allow_of(table: &toml::Table) -> Allow {
    let target = match table.get("regexTarget").and_then(toml::Value::as_str) {
        Some("match") => Target::Match,
        Some("line") => Target::Line,
        _ => Target::Secret,
    };
    Allow {
        target,
        regexes: strings(table.get("regexes"))
            .iter()
            .filter_map(|r| build(r))
            .collect(),
        stopwords: strings(table.get("stopwords"))
            .into_iter()
            .map(|s| s.to_ascii_lowercase())
            .collect(),
        all: table.get("condition").and_then(toml::Value::as_str) == Some("AND"),
        paths: table.get("paths").is_some(),
    }
}

impl Allow {
    /// Whether this allow-list lets the match go.
    fn lets_go(&self, secret: &[u8], matched: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let lower = String::from_utf8_lossy(secret).to_ascii_lowercase();
        let regex =
            (!self.regexes.is_empty()).then(|| self.regexes.iter().any(|r| r.is_match(target)));
        let stopword = (!self.stopwords.is_empty())
            .then(|| self.stopwords.iter().any(|w| lower.contains(w.as_str())));
        let parts = [regex, stopword];
        if self.all {
            // A path is a part that never holds.
            !self.paths && parts.iter().flatten().all(|p| *p) && parts.iter().any(Option::is_some)
        } else {
            parts.iter().flatten().any(|p| *p)
        }
    }
}

/// Shannon entropy of `bytes`, in bits a byte (as gitleaks computes it, over characters).
pub(super) fn entropy(text: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in text.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

impl RuleSet {
    /// The set shipped by `secrets_scanner`: gitleaks' rules and its own, not the other
    /// sets it merges (MongoDB's Kingfisher rules are many more, and slower).
    pub(super) fn bundled() -> &'static RuleSet {
        static SET: OnceLock<RuleSet> = OnceLock::new();
        SET.get_or_init(|| {
            RuleSet::from_toml(secrets_scanner::rules::BUNDLED_RULES, |id| {
                !id.starts_with("kingfisher.")
            })
        })
    }

    fn from_toml(text: &str, keep: impl Fn(&str) -> bool) -> RuleSet {
        let doc: toml::Table = toml::from_str(text).unwrap_or_default();
        let mut rules = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut opens: Vec<Vec<usize>> = Vec::new();
        for table in doc
            .get("rules")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_table)
        {
            let Some(id) = table.get("id").and_then(toml::Value::as_str) else {
                continue;
            };
            let Some(source) = table.get("regex").and_then(toml::Value::as_str) else {
                continue;
            };
            if !keep(id) {
                continue;
            }
            let keywords = strings(table.get("keywords"));
            if keywords.is_empty() {
                // A rule without keywords would read every text whole: none of the set has one.
                continue;
            }
            let index = rules.len();
            for word in keywords {
                let word = word.to_ascii_lowercase();
                match words.iter().position(|w| *w == word) {
                    Some(at) => opens[at].push(index),
                    None => {
                        words.push(word);
                        opens.push(vec![index]);
                    }
                }
            }
            rules.push(Rule {
                id: id.to_owned(),
                source: source.to_owned(),
                compiled: OnceLock::new(),
                entropy: table
                    .get("entropy")
                    .and_then(|e| e.as_float().or_else(|| e.as_integer().map(|i| i as f64))),
                secret_group: table
                    .get("secretGroup")
                    .and_then(toml::Value::as_integer)
                    .and_then(|g| usize::try_from(g).ok()),
                allow: table
                    .get("allowlists")
                    .and_then(toml::Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(toml::Value::as_table)
                    .map(allow_of)
                    .collect(),
            });
        }
        // A DFA: the keywords are looked for in every answer whole, and a DFA is the fastest
        // of the automata to search (263 keywords: 0.7 MB, built once per process; the
        // keyword search of a 2 MB answer took 9.8% of a profile's samples, 6.0% after).
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&words)
            .unwrap_or_else(|_| AhoCorasick::new(Vec::<String>::new()).expect("an empty set"));
        let global = doc
            .get("allowlist")
            .and_then(toml::Value::as_table)
            .map(allow_of)
            .unwrap_or(Allow {
                target: Target::Secret,
                regexes: Vec::new(),
                stopwords: Vec::new(),
                all: false,
                paths: false,
            });
        RuleSet {
            rules,
            keywords,
            opens,
            global,
        }
    }

    /// The rule's regex, compiled at its first use; `None` for one `regex` cannot read (the
    /// test `every_bundled_rule_compiles` holds the set to none).
    pub(super) fn regex(&self, rule: usize) -> Option<&Regex> {
        let rule = &self.rules[rule];
        rule.compiled.get_or_init(|| build(&rule.source)).as_ref()
    }

    /// Every secret in `text`, rule by rule (a secret two rules find is found twice).
    pub(super) fn find(&self, text: &str) -> Vec<Found> {
        let bytes = text.as_bytes();
        let mut open = vec![false; self.rules.len()];
        let mut any = false;
        // Overlapping matches: a keyword inside another still opens its rules.
        for m in self.keywords.find_overlapping_iter(bytes) {
            for &rule in &self.opens[m.pattern().as_usize()] {
                open[rule] = true;
                any = true;
            }
        }
        if !any {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (index, _) in open.iter().enumerate().filter(|(_, o)| **o) {
            let Some(regex) = self.regex(index) else {
                continue;
            };
            let rule = &self.rules[index];
            for caps in regex.captures_iter(bytes) {
                let whole = caps.get(0).expect("group 0 is the match");
                let secret = match rule.secret_group {
                    Some(g) => caps.get(g),
                    None => (1..caps.len())
                        .filter_map(|g| caps.get(g))
                        .find(|g| !g.is_empty()),
                }
                .unwrap_or(whole);
                if secret.is_empty() {
                    continue;
                }
                let secret_text = String::from_utf8_lossy(secret.as_bytes());
                if let Some(min) = rule.entropy {
                    if entropy(&secret_text) <= min {
                        continue;
                    }
                    if rule.id.starts_with("generic")
                        && !secret_text.bytes().any(|b| b.is_ascii_digit())
                    {
                        continue;
                    }
                }
                let line = line_of(bytes, whole.start(), whole.end());
                if self
                    .global
                    .lets_go(secret.as_bytes(), whole.as_bytes(), line)
                    || rule
                        .allow
                        .iter()
                        .any(|a| a.lets_go(secret.as_bytes(), whole.as_bytes(), line))
                {
                    continue;
                }
                found.push(Found {
                    start: secret.start(),
                    end: secret.end(),
                    rule: index,
                });
            }
        }
        found
    }
}

/// The line(s) holding `start..end`.
fn line_of(bytes: &[u8], start: usize, end: usize) -> &[u8] {
    let from = bytes[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let to = bytes[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| end + i);
    &bytes[from..to]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule of the bundled set compiles as RE2 reads it; a rule `regex` could not read
    /// would silently find nothing.
    #[test]
    fn every_bundled_rule_compiles() {
        let set = RuleSet::bundled();
        assert!(set.rules.len() > 200, "{} rules", set.rules.len());
        let broken: Vec<&str> = (0..set.rules.len())
            .filter(|&i| set.regex(i).is_none())
            .map(|i| set.rules[i].id.as_str())
            .collect();
        assert!(broken.is_empty(), "rules that do not compile: {broken:?}");
        assert_eq!(set.global.regexes.len(), {
            let doc: toml::Table = toml::from_str(secrets_scanner::rules::BUNDLED_RULES).unwrap();
            doc["allowlist"]["regexes"].as_array().unwrap().len()
        });
    }

    #[test]
    fn a_brace_that_repeats_nothing_is_itself() {
        assert_eq!(re2_braces(r"^\$(?:\d+|{\d+})$"), r"^\$(?:\d+|\{\d+})$");
        assert_eq!(re2_braces(r"^\${(?:[A-Z_]+)}$"), r"^\$\{(?:[A-Z_]+)}$");
        assert_eq!(
            re2_braces(r"a{2}b{1,}c{0,3}[{]\{é{"),
            r"a{2}b{1,}c{0,3}[{]\{é\{"
        );
        // An escaped character of several bytes is kept whole.
        assert_eq!(re2_braces(r"\é{x"), r"\é\{x");
        for p in [r"^\$(?:\d+|{\d+})$", r"^\${(?:[A-Z_]+|[a-z_]+)}$"] {
            assert!(build(p).is_some(), "{p}");
        }
        assert!(build(r"^\$(?:\d+|{\d+})$").unwrap().is_match(b"${12}"));
    }

    #[test]
    fn entropy_is_shannons() {
        assert_eq!(entropy(""), 0.0);
        assert_eq!(entropy("aaaa"), 0.0);
        assert!((entropy("ab") - 1.0).abs() < 1e-9);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }
}
