//! What was counted ([`AggregateResult`]), for the JSON channel and as one sentence.

use crate::text::thousands;
use serde::Serialize;
use serde_json::{Number, Value};

/// `x` rounded to `digits` significant digits.
pub(super) fn significant(x: f64, digits: usize) -> f64 {
    format!("{:.*e}", digits.saturating_sub(1), x)
        .parse()
        .unwrap_or(x)
}

/// `count / total` rounded half up to 3 decimals, kept off 0 and 1 unless it is exactly that.
pub(super) fn share(count: u64, total: u64) -> f64 {
    if total == 0 || count == 0 {
        return 0.0;
    }
    if count >= total {
        return 1.0;
    }
    let thousandths = (2000 * u128::from(count) + u128::from(total)) / (2 * u128::from(total));
    thousandths.clamp(1, 999) as f64 / 1000.0
}

/// `count` of `total` as a whole percent, rounded half up; never "0%" unless none and never
/// "100%" unless all: a share that rounds to 0 reads "<1%", one that rounds to 100 ">99%".
///
/// ```
/// use toolshape::__seams::aggregate::percent;
///
/// assert_eq!(percent(1229, 1412), "87%");
/// assert_eq!(percent(1, 200), "1%"); // 0.5% rounds half up
/// assert_eq!(percent(1, 1000), "<1%");
/// assert_eq!(percent(999, 1000), ">99%");
/// assert_eq!((percent(0, 9), percent(9, 9)), ("0%".to_owned(), "100%".to_owned()));
/// ```
pub fn percent(count: u64, total: u64) -> String {
    if total == 0 || count == 0 {
        return "0%".to_owned();
    }
    if count >= total {
        return "100%".to_owned();
    }
    let p = (200 * u128::from(count) + u128::from(total)) / (2 * u128::from(total));
    match p {
        0 => "<1%".to_owned(),
        100.. => ">99%".to_owned(),
        p => format!("{p}%"),
    }
}

/// What an [`Aggregate`](super::Aggregate) counted. Serialises as the JSON channel's `aggregate`:
///
/// ```json
/// {"total":1412,
///  "recent":{"field":"opened","days":30,"count":1229,"share":0.87},
///  "count_by":{"field":"state","counts":[["open",900],["closed",512]]},
///  "top":[{"field":"labels","values":[["bug",312],["docs",120],["ui",98]],"none":40}],
///  "stats":[{"field":"comments","count":1412,"min":0,"max":48,"mean":3.2}]}
/// ```
///
/// Zero `none` / `undated` / `future` / `non_numeric` counts are left out; every other record
/// is in exactly one bucket, so the counts add up to `total`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregateResult {
    /// Records counted.
    pub total: u64,
    /// The `recent` share, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recent: Option<RecentResult>,
    /// Counts per value, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_by: Option<CountBy>,
    /// The top values of each field asked for, in the order asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<TopValues>,
    /// Number statistics of each field asked for, in the order asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stats: Vec<Stats>,
}

/// How many records are dated within the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentResult {
    /// The date field.
    pub field: String,
    /// The window, in days, today included.
    pub days: u32,
    /// Records dated within the window.
    pub count: u64,
    /// `count / total`, rounded half up to 3 decimals; 0 or 1 only when none or all.
    pub share: f64,
    /// Records with no date, or one that does not parse (counted in `total`, not in `count`).
    #[serde(skip_serializing_if = "is_zero")]
    pub undated: u64,
    /// Records dated after today (counted in `total`, not in `count`).
    #[serde(skip_serializing_if = "is_zero")]
    pub future: u64,
}

/// Counts per value, most frequent first (ties by value).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountBy {
    /// The field.
    pub field: String,
    /// `[value, count]` pairs, at most 20 (`COUNT_BY_MAX`).
    pub counts: Vec<(Value, u64)>,
    /// Records with no value.
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
    /// The values past 20 (`COUNT_BY_MAX`), summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<Others>,
    /// The values are outsiders' text: sanitised, defused and cut to
    /// `CATEGORY_CHARS` characters here, quoted `«…»` in the sentence.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub untrusted: bool,
}

/// Values past the listed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Others {
    /// How many distinct values.
    pub values: u64,
    /// How many records hold them.
    pub count: u64,
}

/// The most frequent values of one field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopValues {
    /// The field.
    pub field: String,
    /// `[value, records]` pairs, most frequent first, ties by value; at most `k`.
    pub values: Vec<(Value, u64)>,
    /// Records with no value (null, missing, or an empty list).
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
    /// The values are outsiders' text, as in [`CountBy::untrusted`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub untrusted: bool,
}

/// Minimum, maximum and mean of one number field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The field.
    pub field: String,
    /// Records with a number.
    pub count: u64,
    /// The smallest number; null without numbers.
    pub min: Option<Number>,
    /// The largest number; null without numbers.
    pub max: Option<Number>,
    /// The mean, to 6 significant digits; null without numbers.
    pub mean: Option<f64>,
    /// Records with no value.
    #[serde(skip_serializing_if = "is_zero")]
    pub none: u64,
    /// Records whose value is not a number.
    #[serde(skip_serializing_if = "is_zero")]
    pub non_numeric: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AggregateResult {
    #[cfg(any(test, feature = "test-seams"))]
    /// One sentence a model can act on alone, with `plural` naming the records:
    /// "1,412 issues, 87% opened in the last 30 days, top labels: bug 312, docs 120, ui 98".
    ///
    /// Parts come in a fixed order: total, recent, count_by, top, stats. A list part after
    /// another list part starts with "; " so the lists stay apart. Percentages follow
    /// [`percent`]. Records with no value are named ("no labels 40"); zero of them, nothing.
    /// With no records the sentence is the total alone ("0 issues").
    ///
    /// ```
    /// use toolshape::{fields::Day, aggregate::Aggregate, __seams::aggregate::{Compute, FieldMeta}};
    ///
    /// let fields = [FieldMeta::legend("state"), FieldMeta::number("comments")];
    /// let rows: Vec<_> = [r#"{"state":"open","comments":4}"#, r#"{"state":null,"comments":1}"#]
    ///     .iter()
    ///     .filter_map(|r| serde_json::from_str(r).ok())
    ///     .collect();
    /// let result = Aggregate::new()
    ///     .count_by("state")
    ///     .stats("comments")
    ///     .compute(&fields, &rows, Day::from_days_since_epoch(0))?;
    /// assert_eq!(
    ///     result.sentence("tickets"),
    ///     "2 tickets, by state: open 1, no state 1; comments: min 1, max 4, mean 2.5"
    /// );
    /// # Ok::<(), toolshape::aggregate::AggregateError>(())
    /// ```
    pub fn sentence(&self, plural: &str) -> String {
        self.sentence_with(plural, plural)
    }

    /// [`sentence`](AggregateResult::sentence) with `one` naming a single record ("1 issue").
    pub fn sentence_with(&self, one: &str, plural: &str) -> String {
        let noun = if self.total == 1 { one } else { plural };
        let mut out = format!("{} {noun}", thousands(self.total));
        if self.total == 0 {
            return out;
        }
        let (recent, lists) = self.pieces(false);
        if let Some(recent) = recent {
            out += ", ";
            out += &recent;
        }
        for (i, list) in lists.iter().enumerate() {
            out += if i == 0 { ", " } else { "; " };
            out += list;
        }
        out
    }

    /// The sentence without its count, for a summary that states the count already, and
    /// without a breakdown into one group (`by status: open 1,165` when the call asked for
    /// open tickets restates the call's own filter); empty when nothing is left.
    ///
    /// ```
    /// use toolshape::{fields::Day, aggregate::Aggregate, __seams::aggregate::{Compute, FieldMeta}};
    ///
    /// let fields = [FieldMeta::legend("state"), FieldMeta::legend("kind")];
    /// let rows: Vec<_> = [r#"{"state":"open","kind":"bug"}"#, r#"{"state":"open","kind":"ui"}"#]
    ///     .iter()
    ///     .filter_map(|r| serde_json::from_str(r).ok())
    ///     .collect();
    /// let result = Aggregate::new()
    ///     .count_by("state")
    ///     .top("kind", 3)
    ///     .compute(&fields, &rows, Day::from_days_since_epoch(0))?;
    /// assert_eq!(result.sentence("tickets"), "2 tickets, by state: open 2; top kind: bug 1, ui 1");
    /// assert_eq!(result.details(), "top kind: bug 1, ui 1");
    /// # Ok::<(), toolshape::aggregate::AggregateError>(())
    /// ```
    pub fn details(&self) -> String {
        if self.total == 0 {
            return String::new();
        }
        let (recent, lists) = self.pieces(true);
        recent
            .into_iter()
            .chain(lists)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The recent share and the lists; with `skip_single`, lists of one group holding every
    /// record are left out.
    fn pieces(&self, skip_single: bool) -> (Option<String>, Vec<String>) {
        let mut recent = None;
        if let Some(r) = &self.recent {
            let window = if r.days == 1 {
                "day".to_owned()
            } else {
                format!("{} days", thousands(u64::from(r.days)))
            };
            let mut out = format!(
                "{} {} in the last {window}",
                percent(r.count, self.total),
                words(&r.field)
            );
            let mut aside = Vec::new();
            if r.undated > 0 {
                aside.push(format!("{} undated", thousands(r.undated)));
            }
            if r.future > 0 {
                aside.push(format!("{} after today", thousands(r.future)));
            }
            if !aside.is_empty() {
                out += &format!(" ({})", aside.join(", "));
            }
            recent = Some(out);
        }
        let single = |values: &[(Value, u64)], none: u64| {
            skip_single && none == 0 && values.len() == 1 && values[0].1 == self.total
        };
        let mut lists: Vec<String> = Vec::new();
        if let Some(c) = self
            .count_by
            .as_ref()
            .filter(|c| !(c.other.is_none() && single(&c.counts, c.none)))
        {
            let mut items = pairs(&c.counts, c.untrusted);
            if c.none > 0 {
                items.push(format!("no {} {}", words(&c.field), thousands(c.none)));
            }
            if let Some(o) = c.other {
                items.push(format!(
                    "others ({} values) {}",
                    thousands(o.values),
                    thousands(o.count)
                ));
            }
            lists.push(format!(
                "by {}{}: {}",
                words(&c.field),
                outsiders(c.untrusted),
                items.join(", ")
            ));
        }
        for t in self.top.iter().filter(|t| !single(&t.values, t.none)) {
            let mut items = pairs(&t.values, t.untrusted);
            if t.none > 0 {
                items.push(format!("no {} {}", words(&t.field), thousands(t.none)));
            }
            lists.push(format!(
                "top {}{}: {}",
                words(&t.field),
                outsiders(t.untrusted),
                items.join(", ")
            ));
        }
        for s in &self.stats {
            let mut text = match (&s.min, &s.max, s.mean) {
                (Some(min), Some(max), Some(mean)) => format!(
                    "{}: min {}, max {}, mean {}",
                    words(&s.field),
                    json_number_text(min),
                    json_number_text(max),
                    number_text(mean)
                ),
                _ => format!("{}: no numbers", words(&s.field)),
            };
            let mut aside = Vec::new();
            if s.none > 0 {
                aside.push(format!("{} missing", thousands(s.none)));
            }
            if s.non_numeric > 0 {
                aside.push(format!("{} not numbers", thousands(s.non_numeric)));
            }
            if !aside.is_empty() {
                text += &format!(" ({})", aside.join(", "));
            }
            lists.push(text);
        }
        (recent, lists)
    }
}

fn words(field: &str) -> String {
    field.replace('_', " ")
}

/// What a list of outsiders' values says of itself: its values are quoted `«…»`.
fn outsiders(untrusted: bool) -> &'static str {
    match untrusted {
        true => " (untrusted text)",
        false => "",
    }
}

fn pairs(values: &[(Value, u64)], untrusted: bool) -> Vec<String> {
    values
        .iter()
        .map(|(v, c)| match (untrusted, v) {
            // Already cleaned when counted (`compute`): quoted as every outsider's text is.
            (true, Value::String(s)) => format!("«{s}» {}", thousands(*c)),
            _ => format!("{} {}", value_text(v), thousands(*c)),
        })
        .collect()
}

/// A value as a sentence shows it: strings bare, numbers with thousands separators.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) => json_number_text(n),
        other => other.to_string(),
    }
}

/// A JSON number as [`number_text`] shows it; integers exactly, however large.
pub(super) fn json_number_text(n: &Number) -> String {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => thousands(u),
        (None, Some(i)) => format!("-{}", thousands(i.unsigned_abs())),
        _ => number_text(n.as_f64().unwrap_or(0.0)),
    }
}

/// Whole numbers with thousands separators; others to 2 decimals (trailing zeros dropped),
/// or 3 significant digits when that would show 0.
pub(super) fn number_text(x: f64) -> String {
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a.fract() == 0.0 && a < 1e15 {
        return format!("{sign}{}", thousands(a as u64));
    }
    if a >= 1e15 || (a < 0.005 && a > 0.0) {
        return format!("{sign}{:.2e}", a);
    }
    let fixed = format!("{a:.2}");
    let fixed = fixed.trim_end_matches('0').trim_end_matches('.');
    match fixed.split_once('.') {
        Some((whole, frac)) => format!(
            "{sign}{}.{frac}",
            whole
                .parse::<u64>()
                .map(thousands)
                .unwrap_or_else(|_| whole.to_owned())
        ),
        None => format!(
            "{sign}{}",
            fixed
                .parse::<u64>()
                .map(thousands)
                .unwrap_or_else(|_| fixed.to_owned())
        ),
    }
}
