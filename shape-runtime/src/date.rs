//! Dates a model reads: ISO-8601 timestamps truncated to `YYYY-MM-DD`.
//!
//! `2026-02-11T09:14:22.481Z` becomes `2026-02-11`: the sub-second precision and the zone
//! are a real loss for a program computing durations and none for a model that says "opened
//! on the eleventh". The date is the one written in the timestamp (its own offset), not
//! converted to UTC. A value that does not parse is rendered as given and counted in the
//! call's report; it is never dropped and never a panic.
//!
//! ```
//! use toolshape::iso_date;
//!
//! assert_eq!(iso_date("2026-02-11T09:14:22.481Z"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-11T09:14:22+05:30"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-11"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-30T00:00:00Z"), None); // no such day
//! assert_eq!(iso_date("last tuesday"), None);
//! ```

use std::borrow::Cow;

/// The `YYYY-MM-DD` part of an ISO-8601 date or timestamp, if the whole value is one.
pub fn iso_date(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    if b.len() < 10 {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let mut v = 0u32;
        for &c in &b[r] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    };
    let year = digits(0..4)?;
    let month = digits(5..7)?;
    let day = digits(8..10)?;
    if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&month) {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day == 0 || day > days {
        return None;
    }
    if b.len() > 10 && !valid_time(&b[10..]) {
        return None;
    }
    Some(&text[..10])
}

// `THH:MM`, optional `:SS`, optional `.fraction`, optional `Z` or `±HH:MM` / `±HHMM` / `±HH`.
fn valid_time(rest: &[u8]) -> bool {
    let mut i = 0;
    let two = |i: usize, max: u32| -> bool {
        rest.get(i..i + 2).is_some_and(|d| {
            d.iter().all(u8::is_ascii_digit)
                && u32::from(d[0] - b'0') * 10 + u32::from(d[1] - b'0') <= max
        })
    };
    if !matches!(rest.first(), Some(b'T' | b't' | b' ')) {
        return false;
    }
    i += 1;
    if !two(i, 23) || rest.get(i + 2) != Some(&b':') || !two(i + 3, 59) {
        return false;
    }
    i += 5;
    if rest.get(i) == Some(&b':') {
        if !two(i + 1, 60) {
            return false;
        }
        i += 3;
        if matches!(rest.get(i), Some(b'.' | b',')) {
            let start = i + 1;
            i = start;
            while rest.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return false;
            }
        }
    }
    match rest.get(i) {
        None => true,
        Some(b'Z' | b'z') => i + 1 == rest.len(),
        Some(b'+' | b'-') => {
            let zone = &rest[i + 1..];
            match zone.len() {
                2 => two(i + 1, 23),
                4 => two(i + 1, 23) && two(i + 3, 59),
                5 => two(i + 1, 23) && zone[2] == b':' && two(i + 4, 59),
                _ => false,
            }
        }
        Some(_) => false,
    }
}

/// What a date field holds, as the renderer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DateValue<'a> {
    /// A date, as `YYYY-MM-DD` text.
    Date(Cow<'a, str>),
    /// A value that did not parse, rendered as given.
    Unparsed(&'a str),
    /// `None`.
    Null,
}

/// A field `date` can truncate: ISO-8601 text (`String`, `&str`, `Cow<str>`), `Option` of
/// one, and behind features `chrono` / `time` timestamps.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `date`",
    label = "`date` needs an ISO-8601 text or a timestamp type",
    note = "`date` works on String, &str, Cow<str>, Option of those, and with the `chrono` or \
            `time` feature on their date and timestamp types; for a newtype, implement \
            `toolshape::DateField`"
)]
pub trait DateField {
    /// The value's date.
    fn date_value(&self) -> DateValue<'_>;
    /// Whether the field can be null.
    fn nullable() -> bool {
        false
    }
}

fn text_date(text: &str) -> DateValue<'_> {
    match iso_date(text) {
        Some(date) => DateValue::Date(Cow::Borrowed(date)),
        None => DateValue::Unparsed(text),
    }
}

impl DateField for String {
    fn date_value(&self) -> DateValue<'_> {
        text_date(self)
    }
}
impl DateField for &str {
    fn date_value(&self) -> DateValue<'_> {
        text_date(self)
    }
}
impl DateField for Cow<'_, str> {
    fn date_value(&self) -> DateValue<'_> {
        text_date(self)
    }
}
impl<T: DateField> DateField for Option<T> {
    fn date_value(&self) -> DateValue<'_> {
        match self {
            Some(v) => v.date_value(),
            None => DateValue::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
}

#[cfg(feature = "chrono")]
impl<Tz: chrono::TimeZone> DateField for chrono::DateTime<Tz>
where
    Tz::Offset: std::fmt::Display,
{
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.format("%Y-%m-%d").to_string()))
    }
}

#[cfg(feature = "chrono")]
impl DateField for chrono::NaiveDate {
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.format("%Y-%m-%d").to_string()))
    }
}

#[cfg(feature = "chrono")]
impl DateField for chrono::NaiveDateTime {
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.format("%Y-%m-%d").to_string()))
    }
}

#[cfg(feature = "time")]
impl DateField for time::OffsetDateTime {
    fn date_value(&self) -> DateValue<'_> {
        let d = self.date();
        DateValue::Date(Cow::Owned(format!(
            "{:04}-{:02}-{:02}",
            d.year(),
            u8::from(d.month()),
            d.day()
        )))
    }
}

#[cfg(feature = "time")]
impl DateField for time::Date {
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(format!(
            "{:04}-{:02}-{:02}",
            self.year(),
            u8::from(self.month()),
            self.day()
        )))
    }
}
