//! The English that names records: the plural a record type gets when nobody wrote one
//! (`entity` → `entities`), and the singular of a list's name (`relations` → `relation`).
//!
//! ```
//! use toolshape_internals::english::{plural_of, singular_of};
//!
//! assert_eq!(plural_of("entity"), "entities");
//! assert_eq!(singular_of("statuses").as_deref(), Some("status"));
//! assert_eq!(singular_of("data"), None);
//! ```

/// The plural of an English noun, by the common rules: `entity` → `entities` (a consonant
/// and `y`), `status` → `statuses`, `box` → `boxes`, `match` → `matches`, `key` → `keys`;
/// a word that already reads as a plural of these rules, or ends in a character that is not
/// a letter, gets `s` (`record` → `records`, `v2` → `v2s`). What the derive, configuration and
/// inferred records name a list with when nobody said.
pub fn plural_of(word: &str) -> String {
    let lower = word.to_ascii_lowercase();
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u');
    let b = lower.as_bytes();
    match b {
        [.., c, b'y'] if c.is_ascii_alphabetic() && !vowel(*c) => {
            format!("{}ies", &word[..word.len() - 1])
        }
        [.., b's' | b'x' | b'z'] | [.., b'c' | b's', b'h'] => format!("{word}es"),
        _ => format!("{word}s"),
    }
}

/// The singular of an English plural by the rules [`plural_of`] writes (`entities` →
/// `entity`, `statuses` → `status`, `boxes` → `box`, `items` → `item`); `None` when the word
/// does not read as a plural (`data`, `status`, `news`), so the caller keeps a word of its
/// own rather than invent one.
pub fn singular_of(word: &str) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    let candidate = if let Some(stem) = lower.strip_suffix("ies").filter(|s| s.len() > 1) {
        format!("{}y", &word[..stem.len()])
    } else if let Some(stem) = lower
        .strip_suffix("es")
        .filter(|s| s.ends_with(['s', 'x', 'z']) || s.ends_with("ch") || s.ends_with("sh"))
    {
        word[..stem.len()].to_owned()
    } else if let Some(stem) = lower
        .strip_suffix('s')
        .filter(|s| s.len() > 1 && !s.ends_with(['s', 'u', 'i']))
    {
        word[..stem.len()].to_owned()
    } else {
        return None;
    };
    // Only a singular that the plural rule turns back into the word.
    (plural_of(&candidate) == word).then_some(candidate)
}

#[cfg(test)]
mod tests {
    use super::{plural_of, singular_of};

    #[test]
    fn plurals_and_singulars_follow_the_common_rules_both_ways() {
        for (one, many) in [
            ("entity", "entities"),
            ("query", "queries"),
            ("day", "days"),
            ("key", "keys"),
            ("toy", "toys"),
            ("status", "statuses"),
            ("box", "boxes"),
            ("match", "matches"),
            ("wish", "wishes"),
            ("issue", "issues"),
            ("record", "records"),
            ("item", "items"),
            ("line", "lines"),
            ("relation", "relations"),
            ("v2", "v2s"),
        ] {
            assert_eq!(plural_of(one), many, "{one}");
            assert_eq!(singular_of(many).as_deref(), Some(one), "{many}");
        }
        for not_plural in ["data", "status", "s", "", "bus", "analysis"] {
            assert_eq!(singular_of(not_plural), None, "{not_plural}");
        }
    }

    /// The stems' edges: a one-letter stem is no singular (`as`, `us`), but a two-letter one
    /// is (`pies` → `pie`, not `py`).
    #[test]
    fn short_stems_are_read_at_their_edge() {
        assert_eq!(singular_of("pies").as_deref(), Some("pie"));
        assert_eq!(singular_of("ties").as_deref(), Some("tie"));
        assert_eq!(singular_of("as"), None);
        assert_eq!(singular_of("us"), None);
        assert_eq!(singular_of("ads").as_deref(), Some("ad"));
    }
}
