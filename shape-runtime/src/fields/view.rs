//! Field views: borrowing adapters the derive wraps around each field, so projection writes
//! straight to the output with no intermediate value.
//!
//! Each view implements `serde::Serialize`; the same view feeds compact JSON, prose, table
//! cells and aggregation, through different serializers. The per-call state the views need
//! lives in a [`CallEnv`] (the tokenizer for caps, counters for the report) and a [`Cx`]
//! (adds the names from resolvers).

use crate::fields::date::{DateField, DateValue, EpochField, EpochUnit};
use crate::fields::ids::{IdField, IdKey, short_id};
pub(crate) use crate::record::call_env::{CallEnv, DateStyle};
use crate::resolve::{KeyField, Resolvers};
use crate::untrusted;
use serde::{Serialize, Serializer};

/// The context a record is projected in: the page's resolved names and the call's state.
pub struct Cx<'a, N: Resolvers> {
    names: &'a N::Names,
    env: &'a CallEnv<'a>,
}

impl<N: Resolvers> Clone for Cx<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N: Resolvers> Copy for Cx<'_, N> {}

impl<'a, N: Resolvers> Cx<'a, N> {
    /// A context over resolved names.
    pub fn new(names: &'a N::Names, env: &'a CallEnv<'a>) -> Self {
        Cx { names, env }
    }

    /// The resolved names, one map per resolver.
    pub fn names(&self) -> &'a N::Names {
        self.names
    }

    /// The call's state.
    pub fn env(&self) -> &'a CallEnv<'a> {
        self.env
    }
}

/// A field shown as is.
pub struct Shown<'a, T: ?Sized>(&'a T);

impl<'a, T: ?Sized + Serialize> Shown<'a, T> {
    /// Wraps a field.
    pub fn new(value: &'a T) -> Self {
        Shown(value)
    }
}

impl<T: ?Sized + Serialize> Serialize for Shown<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A field that reads an empty value as absent (`#[shape(empty_is_absent)]`): written as
/// `None` (JSON `null`, the absence word in text) when `empty`, else as its view writes it.
pub struct OrAbsent<V> {
    empty: bool,
    view: V,
}

impl<V: Serialize> OrAbsent<V> {
    /// `view`, or absent when `empty`.
    pub fn new(empty: bool, view: V) -> Self {
        OrAbsent { empty, view }
    }
}

impl<V: Serialize> Serialize for OrAbsent<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.empty {
            true => s.serialize_none(),
            false => self.view.serialize(s),
        }
    }
}

/// A value that can be empty: text, a list, or an `Option` of one (`None` is empty too).
/// What `#[shape(empty_is_absent)]` is written on must be one.
#[diagnostic::on_unimplemented(
    message = "`empty_is_absent` needs text or a list, and `{Self}` is neither",
    label = "not text or a list",
    note = "`empty_is_absent` reads \"\" or an empty list as absent; remove it from this field"
)]
pub trait MayBeEmpty {
    /// Whether the value is empty.
    fn is_empty_value(&self) -> bool;
}

impl MayBeEmpty for str {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl MayBeEmpty for String {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl MayBeEmpty for std::borrow::Cow<'_, str> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for [T] {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for Vec<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for std::collections::VecDeque<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T> MayBeEmpty for std::collections::BTreeSet<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T, S> MayBeEmpty for std::collections::HashSet<T, S> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T: MayBeEmpty> MayBeEmpty for Option<T> {
    fn is_empty_value(&self) -> bool {
        self.as_ref().is_none_or(MayBeEmpty::is_empty_value)
    }
}

impl<T: MayBeEmpty + ?Sized> MayBeEmpty for &T {
    fn is_empty_value(&self) -> bool {
        (**self).is_empty_value()
    }
}

impl<T: MayBeEmpty + ?Sized> MayBeEmpty for Box<T> {
    fn is_empty_value(&self) -> bool {
        (**self).is_empty_value()
    }
}

/// Whether `value` is empty (see [`MayBeEmpty`]).
pub fn is_empty_value<T: MayBeEmpty + ?Sized>(value: &T) -> bool {
    value.is_empty_value()
}

/// A resolved field: key to name.
pub struct Named<'a, F, K> {
    value: &'a F,
    names: &'a crate::resolve::resolver::NameMap<K>,
    noun: &'static str,
    env: &'a CallEnv<'a>,
}

impl<'a, F: KeyField<K>, K> Named<'a, F, K> {
    /// Wraps a field and the page's names for its resolver.
    pub fn new(
        value: &'a F,
        names: &'a crate::resolve::resolver::NameMap<K>,
        noun: &'static str,
        env: &'a CallEnv<'a>,
    ) -> Self {
        Named {
            value,
            names,
            noun,
            env,
        }
    }
}

impl<F: KeyField<K>, K> Serialize for Named<'_, F, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value
            .serialize_named(self.names, self.noun, self.env, s)
    }
}

/// An id field, shortened or not.
pub struct Ident<'a, T: ?Sized> {
    value: &'a T,
    short: bool,
}

impl<'a, T: ?Sized + IdField> Ident<'a, T> {
    /// Wraps an id field.
    pub fn new(value: &'a T, short: bool) -> Self {
        Ident { value, short }
    }
}

impl<T: IdField + ?Sized> Serialize for Ident<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.id_key() {
            // An integer id is a number in JSON, as the API that issued it writes it.
            IdKey::Int(n) => match (i64::try_from(n), u64::try_from(n)) {
                (Ok(n), _) => s.serialize_i64(n),
                (_, Ok(n)) => s.serialize_u64(n),
                _ => s.serialize_i128(n),
            },
            IdKey::Text(text) => s.serialize_str(if self.short { short_id(text) } else { text }),
            uuid @ IdKey::Uuid(_) => {
                let text = uuid.to_string();
                s.serialize_str(if self.short { short_id(&text) } else { &text })
            }
        }
    }
}

/// A date field, truncated to `YYYY-MM-DD`.
pub struct Dated<'a, T: ?Sized> {
    value: &'a T,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + DateField> Dated<'a, T> {
    /// Wraps a date field.
    pub fn new(value: &'a T, env: &'a CallEnv<'a>) -> Self {
        Dated { value, env }
    }
}

impl<T: DateField + ?Sized> Serialize for Dated<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.date_value() {
            DateValue::Date(d) => serialize_date(&d, self.env, s),
            DateValue::Unparsed(raw) => {
                self.env.note_unparsed_date();
                crate::fields::recorded::serialize_value_text(raw, s)
            }
            DateValue::Null => s.serialize_none(),
        }
    }
}

/// A number of seconds or milliseconds since the epoch, shown as its UTC date.
pub struct EpochDated<'a, T: ?Sized> {
    value: &'a T,
    unit: EpochUnit,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + EpochField> EpochDated<'a, T> {
    /// Wraps an epoch field.
    pub fn new(value: &'a T, unit: EpochUnit, env: &'a CallEnv<'a>) -> Self {
        EpochDated { value, unit, env }
    }
}

impl<T: EpochField + ?Sized> Serialize for EpochDated<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value.epoch_value() {
            None => s.serialize_none(),
            Some(n) => match self.unit.day(n) {
                Some(day) => serialize_date(&day.to_string(), self.env, s),
                // Not a date in this unit: shown as given and counted, never guessed.
                None => {
                    self.env.note_unparsed_date();
                    s.collect_str(&n)
                }
            },
        }
    }
}

/// A field of text written by someone outside the system.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `untrusted`",
    label = "`untrusted` needs a text field",
    note = "`untrusted` works on String, &str, Box<str>, Cow<str>, Option of those and Vec of \
            those; for a newtype, implement `toolshape::fields::UntrustedText` returning its text"
)]
pub trait UntrustedText {
    /// The text, or `None` for a null value (or a list).
    fn untrusted_text(&self) -> Option<&str>;
    /// Whether the field can be null.
    fn nullable() -> bool {
        false
    }
    /// For a list of texts (`Vec<String>`): each item's text; `None` for a single text.
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        None
    }
    /// Whether the field is a list of texts.
    fn is_list() -> bool {
        false
    }
}

impl UntrustedText for String {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for &str {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for Box<str> {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
impl UntrustedText for std::borrow::Cow<'_, str> {
    fn untrusted_text(&self) -> Option<&str> {
        Some(self)
    }
}
/// A list of texts (GitHub label names, Jira comment bodies): each item is sanitised and marked
/// alone, and the cap is the list's: whole items in order while their tokens fit it, the rest
/// left out with a marker that counts them (`[cut: 3 more items]`), so a record never shows
/// more attacker-controlled tokens than its caps add up to.
impl<T: UntrustedText> UntrustedText for Vec<T> {
    fn untrusted_text(&self) -> Option<&str> {
        None
    }
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        Some(self.iter().filter_map(T::untrusted_text).collect())
    }
    fn is_list() -> bool {
        true
    }
}

impl<T: UntrustedText> UntrustedText for Option<T> {
    fn untrusted_text(&self) -> Option<&str> {
        self.as_ref()?.untrusted_text()
    }
    fn nullable() -> bool {
        true
    }
    fn untrusted_items(&self) -> Option<Vec<&str>> {
        self.as_ref()?.untrusted_items()
    }
    fn is_list() -> bool {
        T::is_list()
    }
}

/// An untrusted field: sanitised, capped, and in the text channel wrapped in a provenance
/// delimiter naming its source.
pub struct Untrusted<'a, T: ?Sized> {
    value: &'a T,
    field: &'a str,
    cap: Option<u32>,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + UntrustedText> Untrusted<'a, T> {
    /// Wraps an untrusted field.
    pub fn new(value: &'a T, field: &'a str, cap: Option<u32>, env: &'a CallEnv<'a>) -> Self {
        Untrusted {
            value,
            field,
            cap,
            env,
        }
    }
}

impl<T: UntrustedText + ?Sized> Serialize for Untrusted<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(items) = self.value.untrusted_items() {
            return self.serialize_items(&items, s);
        }
        match self.value.untrusted_text() {
            None => s.serialize_none(),
            Some(text) => untrusted::serialize_untrusted(text, self.field, self.cap, self.env, s),
        }
    }
}

impl<T: ?Sized> Untrusted<'_, T> {
    fn serialize_items<S: Serializer>(&self, items: &[&str], s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        use untrusted::UntrustedCall as _;
        let fit = untrusted::fit_items(items, self.cap, self.env);
        let mut seq = s.serialize_seq(Some(fit.shown.len() + usize::from(fit.rest > 0)))?;
        for item in &fit.shown {
            seq.serialize_element(&UntrustedItem {
                text: &item.text,
                field: self.field,
                cap: item.cap,
                env: self.env,
            })?;
        }
        if fit.rest > 0 {
            self.env.count(&mut |st| {
                st.cut = st.cut.saturating_add(1);
                st.cut_items = st.cut_items.saturating_add(fit.rest as u64);
            });
            seq.serialize_element(&untrusted::ItemsCut(fit.rest))?;
        }
        seq.end()
    }
}

struct UntrustedItem<'a> {
    text: &'a str,
    field: &'a str,
    cap: Option<u32>,
    env: &'a CallEnv<'a>,
}

impl Serialize for UntrustedItem<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        untrusted::serialize_untrusted(self.text, self.field, self.cap, self.env, s)
    }
}

/// Writes a `YYYY-MM-DD` date in the style of the channel being rendered.
pub(crate) fn serialize_date<S: Serializer>(
    date: &str,
    env: &CallEnv<'_>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match env.date_style() {
        DateStyle::MonthDay { year } => match month_day(date, year) {
            Some((month, day)) => s.collect_str(&format_args!("{month} {day}")),
            None => s.serialize_str(date),
        },
        DateStyle::Iso => s.serialize_str(date),
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `("Feb", 11)` for `2026-02-11` when the year is `year`.
fn month_day(date: &str, year: u16) -> Option<(&'static str, u8)> {
    let y: u16 = date.get(..4)?.parse().ok()?;
    let m: usize = date.get(5..7)?.parse().ok()?;
    let d: u8 = date.get(8..10)?.parse().ok()?;
    (y == year).then_some(())?;
    Some((*MONTHS.get(m.checked_sub(1)?)?, d))
}

/// The year of a `YYYY-MM-DD` date.
pub(crate) fn date_year(date: &str) -> Option<u16> {
    date.get(..4)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::tokens::Tiktoken;
    use crate::untrusted::UntrustedPolicy;

    fn with_env<R>(f: impl FnOnce(&CallEnv<'_>) -> R) -> R {
        let tokenizer = Tiktoken::o200k_base();
        let policy = UntrustedPolicy::default();
        let env = CallEnv::new("t", &tokenizer, &policy, "n0nce")
            .with_pass(crate::record::call_env::Channel::Structured, true);
        f(&env)
    }

    fn json(value: &impl Serialize) -> String {
        serde_json::to_string(value).unwrap()
    }

    struct Wide(i128);
    impl IdField for Wide {
        fn id_key(&self) -> IdKey<'_> {
            IdKey::Int(self.0)
        }
    }

    #[test]
    fn integer_ids_are_json_numbers_at_every_width() {
        assert_eq!(json(&Ident::new(&i64::MIN, false)), "-9223372036854775808");
        assert_eq!(json(&Ident::new(&i64::MAX, false)), "9223372036854775807");
        assert_eq!(json(&Ident::new(&u64::MAX, true)), "18446744073709551615");
        let past_u64 = i128::from(u64::MAX) + 1;
        assert_eq!(
            json(&Ident::new(&Wide(past_u64), false)),
            "18446744073709551616"
        );
        let below_i64 = i128::from(i64::MIN) - 1;
        assert_eq!(
            json(&Ident::new(&Wide(below_i64), false)),
            "-9223372036854775809"
        );
        assert_eq!(json(&Ident::new(&0u8, false)), "0");
    }

    #[test]
    fn text_and_uuid_ids_shorten_only_when_asked() {
        let id = "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90";
        assert_eq!(json(&Ident::new(&id, false)), format!("\"{id}\""));
        assert_eq!(json(&Ident::new(&id, true)), "\"tkt_9f3a71c4\"");
        #[cfg(feature = "uuid")]
        {
            let uuid = uuid::Uuid::from_u128(0x9f3a71c4_2d18_4b6e_9c05_8ab3f2e17d90);
            assert_eq!(
                json(&Ident::new(&uuid, false)),
                "\"9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90\""
            );
            assert_eq!(json(&Ident::new(&uuid, true)), "\"9f3a71c4\"");
        }
    }

    #[test]
    fn dates_that_do_not_parse_are_shown_and_counted_once_each() {
        with_env(|env| {
            assert_eq!(
                json(&Dated::new(&"2026-02-11T09:14:22Z", env)),
                "\"2026-02-11\""
            );
            assert_eq!(json(&Dated::new(&None::<String>, env)), "null");
            assert_eq!(env.diagnostics().unparsed_dates, 0);
            assert_eq!(json(&Dated::new(&"last tuesday", env)), "\"last tuesday\"");
            assert_eq!(env.diagnostics().unparsed_dates, 1);
            let s = EpochUnit::Seconds;
            assert_eq!(json(&EpochDated::new(&86_400i64, s, env)), "\"1970-01-02\"");
            assert_eq!(json(&EpochDated::new(&None::<i64>, s, env)), "null");
            assert_eq!(env.diagnostics().unparsed_dates, 1);
            let far = 253_402_300_800i64;
            assert_eq!(json(&EpochDated::new(&far, s, env)), "\"253402300800\"");
            assert_eq!(env.diagnostics().unparsed_dates, 2);
        });
    }

    #[test]
    fn dates_read_as_month_and_day_in_the_year_given_only() {
        with_env(|env| {
            let style = DateStyle::MonthDay { year: 2026 };
            // The structured channel keeps ISO dates whatever the style.
            let structured = CallEnv::new(env.tool(), env.tokenizer(), env.policy(), env.nonce())
                .with_date_style(style);
            assert_eq!(
                json(&Dated::new(&"2026-01-01", &structured)),
                "\"2026-01-01\""
            );
            let env = CallEnv::new(env.tool(), env.tokenizer(), env.policy(), env.nonce())
                .with_pass(crate::record::call_env::Channel::Text, false)
                .with_date_style(style);
            let read = |date: &str| json(&Dated::new(&date, &env));
            assert_eq!(read("2026-01-01"), "\"Jan 1\"");
            assert_eq!(read("2026-02-11T09:14:22Z"), "\"Feb 11\"");
            assert_eq!(read("2026-12-31"), "\"Dec 31\"");
            for (m, name) in MONTHS.iter().enumerate() {
                assert_eq!(
                    read(&format!("2026-{:02}-09", m + 1)),
                    format!("\"{name} 9\"")
                );
            }
            // Another year keeps its year.
            assert_eq!(read("2025-12-31"), "\"2025-12-31\"");
            assert_eq!(read("2027-01-01"), "\"2027-01-01\"");
            assert_eq!(month_day("2026-13-01", 2026), None);
            assert_eq!(month_day("2026-00-01", 2026), None);
            assert_eq!(month_day("2026-1", 2026), None);
            assert_eq!(date_year("2026-02-11"), Some(2026));
            assert_eq!(date_year("20x6-02-11"), None);
        });
    }

    #[test]
    fn a_list_shares_its_cap_and_counts_what_it_leaves_out() {
        with_env(|env| {
            // One token each.
            let labels = ["bug", "ui", "docs", "api", "auth"];
            let items =
                |n: usize| -> Vec<String> { labels[..n].iter().map(|s| (*s).to_owned()).collect() };
            let shown = |v: &Vec<String>, cap: Option<u32>| -> Vec<String> {
                serde_json::from_str(&json(&Untrusted::new(v, "labels", cap, env))).unwrap()
            };
            // At the cap, one before it and one past it.
            assert_eq!(shown(&items(3), Some(3)), ["bug", "ui", "docs"]);
            assert_eq!(shown(&items(2), Some(3)), ["bug", "ui"]);
            assert_eq!(
                shown(&items(4), Some(3)),
                ["bug", "ui", "docs", "[cut: 1 more item]"]
            );
            assert_eq!(
                shown(&items(5), Some(3)),
                ["bug", "ui", "docs", "[cut: 2 more items]"]
            );
            assert_eq!(shown(&items(5), None).len(), 5);
            assert!(shown(&Vec::new(), Some(3)).is_empty());
            // Whole items while their tokens fit what is left of the cap: 3 + 2 + 2 tokens
            // fill a cap of 7 exactly; at 6 the third does not fit and is counted.
            let words = |w: &[&str]| -> Vec<String> { w.iter().map(|s| (*s).to_owned()).collect() };
            assert_eq!(env.tokenizer().count("a b"), 2);
            assert_eq!(env.tokenizer().count("a b c"), 3);
            let list = words(&["a b c", "a b", "a b"]);
            assert_eq!(shown(&list, Some(8)), ["a b c", "a b", "a b"]);
            assert_eq!(shown(&list, Some(7)), ["a b c", "a b", "a b"]);
            assert_eq!(
                shown(&list, Some(6)),
                ["a b c", "a b", "[cut: 1 more item]"]
            );
            // An item after one that does not fit is not shown, though it would fit.
            let list = words(&["a b", "a b c", "a"]);
            assert_eq!(shown(&list, Some(4)), ["a b", "[cut: 2 more items]"]);
            // One item alone over the whole cap shows its beginning, cut at the cap.
            assert_eq!(shown(&words(&["a b c"]), Some(3)), ["a b c"]);
            assert_eq!(shown(&words(&["a b c"]), Some(2)), ["a b…"]);
            assert_eq!(
                shown(&words(&["a b c", "a"]), Some(2)),
                ["a b…", "[cut: 1 more item]"]
            );
            // An item that reads as the list's marker once sanitised is written with round
            // brackets, so a stored list's last element reads as one only when it is one; an
            // item cut short ends in its own marker, and keeps its brackets.
            let forged = "[cut: 3 more items]";
            let forged_tokens = env.tokenizer().count(forged) as u32;
            assert_eq!(
                shown(&words(&[forged, "[cut:\u{200B} 1 more item]"]), Some(40)),
                ["(cut: 3 more items)", "(cut: 1 more item)"]
            );
            assert_eq!(
                shown(&words(&["a", forged]), Some(forged_tokens)),
                ["a", "[cut: 1 more item]"]
            );
            let longer = shown(
                &words(&["[cut: 3 more items] and more"]),
                Some(forged_tokens),
            );
            assert_eq!(longer, ["[cut: 3 more items]…"]);
            let none: Option<Vec<String>> = None;
            assert_eq!(json(&Untrusted::new(&none, "labels", Some(3), env)), "null");
            assert_eq!(
                json(&Untrusted::new(&Some(items(1)), "labels", Some(3), env)),
                "[\"bug\"]"
            );
            assert!(<Option<Vec<String>> as UntrustedText>::is_list());
            assert!(!<Option<String> as UntrustedText>::is_list());
            assert!(<Option<String> as UntrustedText>::nullable());
            assert!(!<String as UntrustedText>::nullable());
            assert_eq!(
                json(&Untrusted::new(&None::<String>, "body", Some(3), env)),
                "null"
            );
            let boxed: Box<str> = "x".into();
            assert_eq!(json(&Untrusted::new(&boxed, "body", None, env)), "\"x\"");
            let cow = std::borrow::Cow::Borrowed("y");
            assert_eq!(json(&Untrusted::new(&cow, "body", None, env)), "\"y\"");
        });
    }

    #[test]
    fn only_empty_text_lists_and_none_read_as_empty() {
        use std::collections::{BTreeSet, HashSet, VecDeque};
        assert!(is_empty_value(""));
        assert!(!is_empty_value(" "));
        assert!(is_empty_value(&String::new()));
        assert!(!is_empty_value(&"x".to_owned()));
        assert!(is_empty_value(&std::borrow::Cow::Borrowed("")));
        assert!(!is_empty_value(&std::borrow::Cow::Borrowed("x")));
        assert!(is_empty_value(&Vec::<u8>::new()));
        assert!(!is_empty_value(&vec![String::new()]));
        assert!(is_empty_value(&[0u8; 0][..]));
        assert!(!is_empty_value(&[0u8][..]));
        assert!(is_empty_value(&VecDeque::<u8>::new()));
        assert!(!is_empty_value(&VecDeque::from([1u8])));
        assert!(is_empty_value(&BTreeSet::<u8>::new()));
        assert!(!is_empty_value(&BTreeSet::from([1u8])));
        assert!(is_empty_value(&HashSet::<u8>::new()));
        assert!(!is_empty_value(&HashSet::from([1u8])));
        assert!(is_empty_value(&None::<String>));
        assert!(is_empty_value(&Some(String::new())));
        assert!(!is_empty_value(&Some("x".to_owned())));
        assert!(is_empty_value(&Box::<str>::from("")));
        assert!(!is_empty_value(&Box::<str>::from("x")));
        assert!(is_empty_value(&&""));
        assert_eq!(json(&OrAbsent::new(true, Shown::new(&"x"))), "null");
        assert_eq!(json(&OrAbsent::new(false, Shown::new(&"x"))), "\"x\"");
    }
}
