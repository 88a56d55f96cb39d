//! Lists of untrusted texts (`Vec<String>`, a configured `labels[].name`): the cap is the
//! list's. Whole items are shown in order while their tokens fit what is left of it, and the
//! rest are counted by a marker at the end of the list (`[cut: 3 more items]`); an item that
//! alone is longer than the whole cap shows its beginning, cut at the cap as any value is.

use super::cap::prepare;
use super::render::UntrustedCall;
use crate::text::thousands;
use std::borrow::Cow;
use std::fmt;

/// The marker that ends a list whose cap left items out: `[cut: 3 more items]`. Its `Display`
/// is the marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ItemsCut(pub(crate) usize);

impl fmt::Display for ItemsCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.0 == 1 { "item" } else { "items" };
        write!(f, "[cut: {} more {unit}]", thousands(self.0 as u64))
    }
}

impl serde::Serialize for ItemsCut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Whether `text` reads as an [`ItemsCut`] marker. A stored list's last element that does is
/// the marker its page wrote (shown as such when the list is reopened), so an item that does
/// is written otherwise ([`fit_items`]): no outsider's item can pass for it.
pub(crate) fn is_items_cut(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("[cut: ")
        .and_then(|rest| rest.strip_suffix(']'))
    else {
        return false;
    };
    let Some((figure, unit)) = inner.split_once(" more ") else {
        return false;
    };
    matches!(unit, "item" | "items")
        && figure.starts_with(|c: char| c.is_ascii_digit())
        && figure.bytes().all(|b| b.is_ascii_digit() || b == b',')
}

/// One item a capped list shows: its text (an item that reads as the list's marker with its
/// brackets made round, `(cut: 3 more items)`) and the cap it is written with, what is left
/// of the list's cap before it.
pub(crate) struct ShownItem<'t> {
    pub(crate) text: Cow<'t, str>,
    pub(crate) cap: Option<u32>,
}

/// What a list shows under its cap: the items shown, in order, and how many after them are
/// left out.
pub(crate) struct ListFit<'t> {
    pub(crate) shown: Vec<ShownItem<'t>>,
    pub(crate) rest: usize,
}

/// Fits `items` to the list's `cap`: each item in order is shown whole while its tokens (as
/// [`prepare`] counts a value's attacker tokens: sanitised, links handled) fit what is left of
/// the cap, and the first that does not ends the list; the rest are counted. The first item
/// is shown even when it alone is over the cap: its beginning, cut at the cap with its marker
/// (never an empty list that claims nothing was cut). The attacker tokens of the items shown
/// add up to at most `cap`, so the list adds its cap once to the attacker bound.
///
/// Every item shown is written with the cap left before it, so what decides here is what
/// writing it does; preparing an item costs at most its cap's worth of tokenizing, and the
/// items after the first that does not fit are not read.
pub(crate) fn fit_items<'t>(
    items: &[&'t str],
    cap: Option<u32>,
    env: &(impl UntrustedCall + ?Sized),
) -> ListFit<'t> {
    let Some(cap) = cap else {
        // No cap, no marker: the items are shown as they are.
        let shown = items
            .iter()
            .map(|text| ShownItem {
                text: Cow::Borrowed(*text),
                cap: None,
            })
            .collect();
        return ListFit { shown, rest: 0 };
    };
    let tokenizer = env.tokenizer();
    let urls = env.policy().urls;
    let mut left = cap;
    let mut shown = Vec::new();
    // Whether an item is cut at what is left, its attacker tokens, and, when it reads as the
    // list's marker once sanitised, the text it is written as: round brackets, which
    // sanitising and the link policy leave as they are (fitted as written). An item cut
    // short cannot: its value ends in its own cut marker.
    let measure = |text: &str, left: u32| {
        let p = prepare(text, Some(left), tokenizer, urls);
        let round = (p.cut.is_none() && is_items_cut(&p.content))
            .then(|| format!("({})", &p.content[1..p.content.len() - 1]));
        (p.cut.is_some(), p.attacker_tokens(tokenizer), round)
    };
    for (i, &item) in items.iter().enumerate() {
        let (mut cut, mut tokens, round) = measure(item, left);
        let mut text = Cow::Borrowed(item);
        if let Some(round) = round {
            (cut, tokens, _) = measure(&round, left);
            text = Cow::Owned(round);
        }
        if cut {
            if i == 0 {
                shown.push(ShownItem {
                    text,
                    cap: Some(left),
                });
            }
            break;
        }
        shown.push(ShownItem {
            text,
            cap: Some(left),
        });
        left = left.saturating_sub(u32::try_from(tokens).unwrap_or(u32::MAX));
    }
    let rest = items.len() - shown.len();
    ListFit { shown, rest }
}

#[cfg(test)]
mod tests {
    use super::is_items_cut;

    /// The marker a page writes, and nothing else: a figure of digits (thousands with
    /// commas), the unit `item` or `items`, the brackets; one thing off and it is an item.
    #[test]
    fn only_the_pages_own_marker_reads_as_one() {
        for marker in [
            "[cut: 1 more item]",
            "[cut: 3 more items]",
            "[cut: 1,234 more items]",
        ] {
            assert!(is_items_cut(marker), "{marker}");
        }
        for item in [
            "[cut: 3 more apples]",
            "[cut: x more items]",
            "[cut: 3x more items]",
            "[cut: ,3 more items]",
            "[cut:  more items]",
            "[cut: 3 more items",
            "cut: 3 more items]",
            "[cut: 3 items]",
            "(cut: 3 more items)",
        ] {
            assert!(!is_items_cut(item), "{item}");
        }
    }
}
