//! Dates: ISO-8601 timestamps truncated to the `YYYY-MM-DD` a model reads, and [`Day`], the
//! calendar day "recent" is measured from.
//!
//! `2026-02-11T09:14:22.481Z` becomes `2026-02-11`: the sub-second precision and the zone
//! are a real loss for a program computing durations and none for a model that says "opened
//! on the eleventh". A derived text field's date is the one written in the timestamp (its
//! own offset); a configured `date = true` takes the UTC day by
//! default, as the derive on chrono's `DateTime<Utc>` does ([`DayOf`]). A value that does
//! not parse is rendered as given and counted in the call's report; it is never dropped and
//! never a panic.
//!
//! ```
//! use toolshape::__seams::fields::iso_date;
//!
//! assert_eq!(iso_date("2026-02-11T09:14:22.481Z"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-11T09:14:22+05:30"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-11"), Some("2026-02-11"));
//! assert_eq!(iso_date("2026-02-30T00:00:00Z"), None); // no such day
//! assert_eq!(iso_date("last tuesday"), None);
//! ```

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

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

/// Which calendar day a configured `date` shows for an ISO-8601 timestamp with an offset
/// from UTC: `date = true` or `date = { day = "utc" }` for [`Utc`](DayOf::Utc), `date = { day
/// = "as_written" }` for [`AsWritten`](DayOf::AsWritten). The two agree on a date alone, on
/// a `Z` timestamp and on one without an offset (a naive timestamp has no instant to convert:
/// its day is the one written, as for UTC).
///
/// ```
/// use toolshape::fields::DayOf;
///
/// let late = "2014-01-21T23:30:00-05:00"; // 04:30 on the 22nd in UTC
/// assert_eq!(DayOf::Utc.date(late).as_deref(), Some("2014-01-22"));
/// assert_eq!(DayOf::AsWritten.date(late).as_deref(), Some("2014-01-21"));
/// assert_eq!(DayOf::Utc.date("2014-01-22T01:00:00+05:30").as_deref(), Some("2014-01-21"));
/// assert_eq!(DayOf::Utc.date("2014-01-21T23:30:00").as_deref(), Some("2014-01-21"));
/// assert_eq!(DayOf::Utc.date("last tuesday"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DayOf {
    /// The UTC day of the instant, as the derive shows chrono's `DateTime<Utc>` or jiff's
    /// `Timestamp`: `2014-01-21T23:30:00-05:00` is `2014-01-22`.
    #[default]
    Utc,
    /// The day written, in the timestamp's own offset, as the derive shows a text field or
    /// chrono's `DateTime<FixedOffset>`: `2014-01-21T23:30:00-05:00` is `2014-01-21`.
    AsWritten,
}

impl DayOf {
    /// The `YYYY-MM-DD` day of `text`, an ISO-8601 date or timestamp, if the whole value is
    /// one and (in UTC) the day is in years 0000–9999.
    pub fn date(self, text: &str) -> Option<Cow<'_, str>> {
        let written = iso_date(text)?;
        let shift = match self {
            DayOf::AsWritten => 0,
            DayOf::Utc => utc_shift(&text.as_bytes()[10..]),
        };
        if shift == 0 {
            return Some(Cow::Borrowed(written));
        }
        let day = Day::parse(written)?.days_since_epoch() + shift;
        // 0000-01-01 and 9999-12-31, as `EpochUnit::day` bounds them: past them the day has
        // no four-digit year to be written with.
        (-719_528..=2_932_896)
            .contains(&day)
            .then(|| Cow::Owned(Day::from_days_since_epoch(day).to_string()))
    }

    /// The value's date, or the value as given when it is none.
    pub(crate) fn date_value(self, text: &str) -> DateValue<'_> {
        match self.date(text) {
            Some(date) => DateValue::Date(date),
            None => DateValue::Unparsed(text),
        }
    }
}

/// The days the UTC instant is off the day written, for the part of a valid timestamp after
/// its date (`T23:30:00-05:00`): -1, 0 or 1. No time, `Z`, or no offset: 0.
fn utc_shift(rest: &[u8]) -> i64 {
    fn num(digits: Option<&[u8]>) -> i64 {
        digits.map_or(0, |d| {
            d.iter()
                .fold(0, |v, &c| v * 10 + i64::from(c.wrapping_sub(b'0')))
        })
    }
    if rest.len() < 6 {
        return 0;
    }
    let local = num(rest.get(1..3)) * 60 + num(rest.get(4..6));
    // The offset's sign is the only `+` or `-` after the date (valid_time checked the rest).
    let Some(sign_at) = rest.iter().position(|&b| b == b'+' || b == b'-') else {
        return 0;
    };
    let zone = &rest[sign_at + 1..];
    let minutes = num(zone.get(0..2)) * 60
        + match zone.len() {
            4 => num(zone.get(2..4)),
            5 => num(zone.get(3..5)),
            _ => 0,
        };
    let offset = if rest[sign_at] == b'-' {
        -minutes
    } else {
        minutes
    };
    // Seconds never move the day: the offset is whole minutes.
    (local - offset).div_euclid(24 * 60)
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
/// one, and behind features `chrono` / `time` / `jiff` dates and timestamps.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `date`",
    label = "`date` needs an ISO-8601 text or a timestamp type",
    note = "`date` works on String, &str, Cow<str>, Option of those, and with the `chrono`, \
            `time` or `jiff` feature on their date and timestamp types; for a number of seconds \
            or milliseconds since the Unix epoch write `date(epoch_seconds)` or \
            `date(epoch_millis)`; for a newtype, implement `toolshape::fields::DateField`"
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

#[cfg(feature = "jiff")]
impl DateField for jiff::Timestamp {
    /// The UTC date of the instant.
    fn date_value(&self) -> DateValue<'_> {
        let date = self.to_zoned(jiff::tz::TimeZone::UTC).date();
        DateValue::Date(Cow::Owned(date.to_string()))
    }
}

#[cfg(feature = "jiff")]
impl DateField for jiff::Zoned {
    /// The date in the value's own time zone.
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.date().to_string()))
    }
}

#[cfg(feature = "jiff")]
impl DateField for jiff::civil::Date {
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.to_string()))
    }
}

#[cfg(feature = "jiff")]
impl DateField for jiff::civil::DateTime {
    fn date_value(&self) -> DateValue<'_> {
        DateValue::Date(Cow::Owned(self.date().to_string()))
    }
}

/// The unit of a number `date(epoch_seconds)` or `date(epoch_millis)` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochUnit {
    /// Seconds since 1970-01-01T00:00:00Z (Unix time).
    Seconds,
    /// Milliseconds since 1970-01-01T00:00:00Z (JavaScript, Jira's `created` in some APIs).
    Millis,
}

impl EpochUnit {
    /// The UTC day `value` (in this unit) falls on, when it is in years 0000–9999; outside
    /// them the number is almost surely in another unit (milliseconds read as seconds land
    /// past the year 50000), so it is not turned into a date.
    ///
    /// ```
    /// use toolshape::__private::EpochUnit;
    ///
    /// assert_eq!(EpochUnit::Seconds.day(1_771_084_927).map(|d| d.to_string()), Some("2026-02-14".into()));
    /// assert_eq!(EpochUnit::Millis.day(1_771_084_927_113).map(|d| d.to_string()), Some("2026-02-14".into()));
    /// assert_eq!(EpochUnit::Seconds.day(-1).map(|d| d.to_string()), Some("1969-12-31".into()));
    /// assert_eq!(EpochUnit::Seconds.day(1_771_084_927_113), None); // milliseconds, not seconds
    /// ```
    pub fn day(self, value: i128) -> Option<Day> {
        let per_day: i128 = match self {
            EpochUnit::Seconds => 86_400,
            EpochUnit::Millis => 86_400_000,
        };
        // 0000-01-01 and 9999-12-31, in days since the epoch.
        const FIRST: i128 = -719_528;
        const LAST: i128 = 2_932_896;
        let days = value.div_euclid(per_day);
        if !(FIRST..=LAST).contains(&days) {
            return None;
        }
        i64::try_from(days).ok().map(Day::from_days_since_epoch)
    }
}

/// A number of seconds or milliseconds since the Unix epoch that `date(epoch_seconds)` /
/// `date(epoch_millis)` shows as a date: the integer types and `Option` of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `date(epoch_…)`: it is not a whole number",
    label = "`date(epoch_seconds)` and `date(epoch_millis)` read an integer since 1970-01-01",
    note = "they work on i64, u64, i32, u32 and Option of those; for ISO-8601 text or a \
            timestamp type write `date`"
)]
pub trait EpochField {
    /// The number, or `None` for a null value.
    fn epoch_value(&self) -> Option<i128>;
    /// Whether the field can be null.
    fn nullable() -> bool {
        false
    }
}

macro_rules! epoch_fields {
    ($($ty:ty),*) => {$(
        impl EpochField for $ty {
            fn epoch_value(&self) -> Option<i128> {
                Some(i128::from(*self))
            }
        }
    )*};
}
epoch_fields!(i32, u32, i64, u64);

impl<T: EpochField> EpochField for Option<T> {
    fn epoch_value(&self) -> Option<i128> {
        self.as_ref()?.epoch_value()
    }
    fn nullable() -> bool {
        true
    }
}

/// A calendar day, counted from 1970-01-01. `recent` is measured back from a `Day` the caller
/// passes, so the computation never reads the clock and tests are deterministic.
///
/// ```
/// use toolshape::fields::Day;
///
/// let day: Day = "2026-03-02".parse()?;
/// assert_eq!(day.days_since_epoch(), 20_514);
/// assert_eq!(Day::from_days_since_epoch(0).to_string(), "1970-01-01");
/// assert_eq!(Day::parse("2026-03-02T09:14:22Z"), Some(day));
/// # Ok::<(), toolshape::fields::DayError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(i64);

impl Day {
    /// The day `days` after 1970-01-01 (before it, if negative).
    pub const fn from_days_since_epoch(days: i64) -> Day {
        Day(days)
    }

    /// Days since 1970-01-01.
    pub const fn days_since_epoch(self) -> i64 {
        self.0
    }

    /// The day of an ISO-8601 date or timestamp (`2026-03-02`, `2026-03-02T09:14:22Z`), as
    /// written; `None` if the text is not one.
    pub fn parse(text: &str) -> Option<Day> {
        let date = iso_date(text)?.as_bytes();
        let num = |r: std::ops::Range<usize>| {
            date[r]
                .iter()
                .fold(0i64, |v, &c| v * 10 + i64::from(c.wrapping_sub(b'0')))
        };
        Some(Day(days_from_civil(num(0..4), num(5..7), num(8..10))))
    }

    /// Today in UTC, from the system clock. Read it where a request arrives and pass it down;
    /// nothing in this crate calls it during a computation.
    pub fn today_utc() -> Day {
        let secs = match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
        };
        Day(secs.div_euclid(86_400))
    }
}

/// Text that is not a `YYYY-MM-DD` date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a date; write it as YYYY-MM-DD")]
pub struct DayError(pub String);

impl FromStr for Day {
    type Err = DayError;

    fn from_str(text: &str) -> Result<Day, DayError> {
        Day::parse(text).ok_or_else(|| DayError(text.chars().take(40).collect()))
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(self.0);
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

// Howard Hinnant's `days_from_civil` / `civil_from_days`, proleptic Gregorian.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i128, u32, u32) {
    let z = i128::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i128::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `DayOf::Utc` against chrono's reading of the same instant (an oracle apart from this
    /// module): days around month, year and leap-day boundaries, times across the day,
    /// offsets from -12:00 to +14:00 in quarter hours, with and without seconds and
    /// fractions; and the offset forms chrono's RFC 3339 reader does not take (`+0530`,
    /// `+05`), against the same instant written `+05:30`. `AsWritten` is the day written.
    #[cfg(feature = "chrono")]
    #[test]
    fn the_utc_day_is_the_day_chrono_reads() {
        use chrono::{DateTime, Utc};
        let days = [
            "2014-01-01",
            "2014-01-21",
            "2014-02-28",
            "2016-02-28",
            "2016-02-29",
            "2016-03-01",
            "2014-12-31",
            "1999-12-31",
            "2000-01-01",
            "9999-12-30",
            "0001-01-02",
        ];
        let mut checked = 0;
        for day in days {
            for time in [
                "00:00:00",
                "00:14:59",
                "05:29:00",
                "12:00:00",
                "18:30:00.250",
                "23:59:59",
            ] {
                for quarter in -48i32..=56 {
                    let minutes = quarter * 15;
                    let sign = if minutes < 0 { '-' } else { '+' };
                    let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
                    let text = format!("{day}T{time}{sign}{h:02}:{m:02}");
                    let oracle = DateTime::parse_from_rfc3339(&text)
                        .unwrap()
                        .with_timezone(&Utc)
                        .date_naive()
                        .to_string();
                    assert_eq!(
                        DayOf::Utc.date(&text).as_deref(),
                        Some(oracle.as_str()),
                        "{text}"
                    );
                    assert_eq!(DayOf::AsWritten.date(&text).as_deref(), Some(day), "{text}");
                    // The same offset without its colon, and (whole hours) without minutes.
                    let compact = format!("{day}T{time}{sign}{h:02}{m:02}");
                    assert_eq!(
                        DayOf::Utc.date(&compact).as_deref(),
                        Some(oracle.as_str()),
                        "{compact}"
                    );
                    if m == 0 {
                        let hours = format!("{day}T{time}{sign}{h:02}");
                        assert_eq!(
                            DayOf::Utc.date(&hours).as_deref(),
                            Some(oracle.as_str()),
                            "{hours}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 11 * 6 * 105);
        // No offset, `Z`, or a date alone: the day written.
        for text in ["2014-01-21T23:30:00", "2014-01-21T23:30:00Z", "2014-01-21"] {
            assert_eq!(
                DayOf::Utc.date(text).as_deref(),
                Some("2014-01-21"),
                "{text}"
            );
        }
        // Past the four-digit years, in UTC: no day.
        assert_eq!(DayOf::Utc.date("9999-12-31T23:00:00-02:00"), None);
        assert_eq!(DayOf::Utc.date("0000-01-01T01:00:00+02:00"), None);
        assert_eq!(
            DayOf::Utc.date("0000-01-01T03:00:00+02:00").as_deref(),
            Some("0000-01-01")
        );
        // Borrowed where nothing moves.
        assert!(matches!(
            DayOf::Utc.date("2014-01-21T10:00:00+01:00"),
            Some(Cow::Borrowed(_))
        ));
        assert_eq!(DayOf::Utc.date("last tuesday"), None);
    }

    /// A naive calendar, written apart from Hinnant's formulas: it walks day by day.
    fn month_len(y: i64, m: i64) -> i64 {
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        match m {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    fn next_day((y, m, d): (i64, i64, i64)) -> (i64, i64, i64) {
        if d < month_len(y, m) {
            (y, m, d + 1)
        } else if m < 12 {
            (y, m + 1, 1)
        } else {
            (y + 1, 1, 1)
        }
    }

    #[test]
    fn days_match_a_day_by_day_calendar_from_year_0_to_2401_and_at_9999() {
        // 0000-01-01 is day -719,528 (the bound `EpochUnit::day` uses).
        let mut civil = (0i64, 1i64, 1i64);
        let mut n = -719_528i64;
        while civil.0 <= 2401 {
            assert_eq!(days_from_civil(civil.0, civil.1, civil.2), n, "{civil:?}");
            let (y, m, d) = civil_from_days(n);
            assert_eq!(
                (y, i64::from(m), i64::from(d)),
                (i128::from(civil.0), civil.1, civil.2),
                "day {n}"
            );
            civil = next_day(civil);
            n += 1;
        }
        // The last day `EpochUnit::day` accepts.
        assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
        assert_eq!(
            Day::from_days_since_epoch(2_932_896).to_string(),
            "9999-12-31"
        );
        assert_eq!(
            Day::from_days_since_epoch(2_932_897).to_string(),
            "10000-01-01"
        );
        assert_eq!(
            Day::from_days_since_epoch(-719_529).to_string(),
            "-001-12-31"
        );
    }

    #[test]
    fn days_round_trip_across_eras_and_leap_days() {
        for text in [
            "1970-01-01",
            "2000-02-29",
            "1900-03-01",
            "0001-01-01",
            "2026-12-31",
            "1969-12-31",
        ] {
            let day: Day = text.parse().unwrap();
            assert_eq!(day.to_string(), text);
        }
        assert_eq!(
            Day::parse("1969-12-31"),
            Some(Day::from_days_since_epoch(-1))
        );
        assert_eq!(Day::parse("2026-02-29"), None);
        assert_eq!(
            "2026-02-29".parse::<Day>(),
            Err(DayError("2026-02-29".into()))
        );
        // Extreme values format without overflow.
        assert!(!Day::from_days_since_epoch(i64::MAX).to_string().is_empty());
        assert!(!Day::from_days_since_epoch(i64::MIN).to_string().is_empty());
    }

    #[test]
    fn each_part_of_a_date_is_checked_at_its_edge() {
        let yes = [
            "0000-01-01",
            "9999-12-31",
            "2026-01-31",
            "2026-04-30",
            "2026-02-28",
            "2024-02-29",
            "2000-02-29",
            "2026-12-01",
        ];
        let no = [
            "2026-00-10",
            "2026-13-10",
            "2026-01-00",
            "2026-01-32",
            "2026-04-31",
            "2026-02-29",
            "1900-02-29",
            "2026-2-101",
            "2026/02/10",
            "2026-02/10",
            "2026-02-1",
            "202a-02-10",
            "2026-0b-10",
            "2026-02-1c",
            "",
        ];
        for text in yes {
            assert_eq!(iso_date(text), Some(text), "{text}");
            assert_eq!(
                Day::parse(text).map(|d| d.to_string()).as_deref(),
                Some(text)
            );
        }
        for text in no {
            assert_eq!(iso_date(text), None, "{text}");
            assert_eq!(Day::parse(text), None, "{text}");
        }
    }

    #[test]
    fn each_part_of_a_time_is_checked_at_its_edge() {
        let date = "2026-02-11";
        let yes = [
            "T00:00",
            "T23:59",
            "t23:59",
            " 23:59",
            "T09:14:00",
            "T09:14:59",
            "T09:14:60", // a leap second
            "T09:14:22.4",
            "T09:14:22,481",
            "T09:14:22.481123456Z",
            "T09:14:22z",
            "T09:14Z",
            "T09:14:22+23",
            "T09:14:22-00",
            "T09:14:22+0530",
            "T09:14:22+2359",
            "T09:14:22+05:30",
            "T09:14:22-23:59",
        ];
        let no = [
            "T24:00",
            "T09:60",
            "T09:14:61",
            "T9:14",
            "T09-14",
            "T09:1",
            "T09:14:2",
            "T09:14:22.",
            "T09:14:22.Z",
            "T09:14:22ZZ",
            "T09:14:22Z ",
            "T09:14:22+24",
            "T09:14:22+2400",
            "T09:14:22+0560",
            "T09:14:22+05:60",
            "T09:14:22+24:00",
            "T09:14:22+5",
            "T09:14:22+053",
            "T09:14:22+05:3",
            "T09:14:22+05-30",
            "T09:14:22+05:300",
            "T09:14:22 ",
            "X09:14",
            "T",
            "T0a:14",
            "T09:1a",
            "T09:14:2a",
            "T09:14:22+0a",
            "T09:14:22+05:3a",
        ];
        for time in yes {
            let text = format!("{date}{time}");
            assert_eq!(iso_date(&text), Some(date), "{text}");
        }
        for time in no {
            let text = format!("{date}{time}");
            assert_eq!(iso_date(&text), None, "{text}");
            assert_eq!(text.date_value(), DateValue::Unparsed(&text), "{text}");
        }
        assert_eq!(
            "2026-02-11T09:14Z".date_value(),
            DateValue::Date(Cow::Borrowed("2026-02-11"))
        );
        assert_eq!(None::<String>.date_value(), DateValue::Null);
        assert!(<Option<String>>::nullable());
        assert!(!String::nullable());
    }

    #[test]
    fn epoch_numbers_are_dates_from_year_0_to_9999_and_not_one_past() {
        let s = |v: i128| EpochUnit::Seconds.day(v).map(|d| d.to_string());
        let ms = |v: i128| EpochUnit::Millis.day(v).map(|d| d.to_string());
        // 0000-01-01T00:00:00Z is -62,167,219,200 s; 9999-12-31T23:59:59Z is 253,402,300,799 s.
        assert_eq!(s(-62_167_219_200).as_deref(), Some("0000-01-01"));
        assert_eq!(s(-62_167_219_201), None);
        assert_eq!(s(253_402_300_799).as_deref(), Some("9999-12-31"));
        assert_eq!(s(253_402_300_800), None);
        assert_eq!(ms(-62_167_219_200_000).as_deref(), Some("0000-01-01"));
        assert_eq!(ms(-62_167_219_200_001), None);
        assert_eq!(ms(253_402_300_799_999).as_deref(), Some("9999-12-31"));
        assert_eq!(ms(253_402_300_800_000), None);
        // Around the epoch: the second before it is the day before.
        assert_eq!(s(0).as_deref(), Some("1970-01-01"));
        assert_eq!(s(86_399).as_deref(), Some("1970-01-01"));
        assert_eq!(s(86_400).as_deref(), Some("1970-01-02"));
        assert_eq!(s(-1).as_deref(), Some("1969-12-31"));
        assert_eq!(s(-86_400).as_deref(), Some("1969-12-31"));
        assert_eq!(s(-86_401).as_deref(), Some("1969-12-30"));
        assert_eq!(ms(-1).as_deref(), Some("1969-12-31"));
        assert_eq!(ms(86_399_999).as_deref(), Some("1970-01-01"));
        assert_eq!(ms(86_400_000).as_deref(), Some("1970-01-02"));
        assert_eq!(s(i128::MAX), None);
        assert_eq!(s(i128::MIN), None);
        assert_eq!(5u32.epoch_value(), Some(5));
        assert_eq!(u64::MAX.epoch_value(), Some(i128::from(u64::MAX)));
        assert_eq!(i64::MIN.epoch_value(), Some(i128::from(i64::MIN)));
        assert_eq!(None::<i64>.epoch_value(), None);
        assert_eq!(Some(-7i64).epoch_value(), Some(-7));
        assert!(<Option<i64>>::nullable());
        assert!(!i64::nullable());
    }

    #[test]
    fn today_is_read_from_the_clock() {
        // Written on 2026-12-04: the clock is past it, and not a century on.
        let today = Day::today_utc().days_since_epoch();
        assert!((20_791..60_000).contains(&today), "{today}");
    }
}
