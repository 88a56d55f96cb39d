//! Ids the model can pass on, shortened: `tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90` becomes
//! `tkt_9f3a71c4`. The trailing UUID groups exist for a uniqueness guarantee the model does not
//! need to reproduce; the tool that takes the id back accepts the short form.
//!
//! ```
//! use toolshape::fields::short_id;
//!
//! assert_eq!(short_id("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90"), "tkt_9f3a71c4");
//! assert_eq!(short_id("9F3A71C4-2D18-4B6E-9C05-8AB3F2E17D90"), "9F3A71C4");
//! assert_eq!(short_id("INV-2024-0042"), "INV-2024-0042"); // not UUID-shaped: unchanged
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// Shortens an id that ends in a UUID to its prefix plus the UUID's first group; any other
/// id is returned unchanged.
pub fn short_id(id: &str) -> &str {
    const UUID_LEN: usize = 36;
    if id.len() < UUID_LEN || !id.is_char_boundary(id.len() - UUID_LEN) {
        return id;
    }
    let start = id.len() - UUID_LEN;
    let uuid = &id.as_bytes()[start..];
    let groups = [8usize, 4, 4, 4, 12];
    let mut pos = 0;
    for (i, len) in groups.iter().enumerate() {
        if !uuid[pos..pos + len].iter().all(u8::is_ascii_hexdigit) {
            return id;
        }
        pos += len;
        if i < groups.len() - 1 {
            if uuid[pos] != b'-' {
                return id;
            }
            pos += 1;
        }
    }
    // A hex digit just before the UUID means it is part of a longer hex run, not a UUID.
    if start > 0 && id.as_bytes()[start - 1].is_ascii_hexdigit() {
        return id;
    }
    &id[..start + 8]
}

/// A field that holds an id as text: `String`, `&str`, `Box<str>`, `Cow<str>`, or a newtype
/// that implements this trait by returning its text. Every `IdText` is an [`IdField`].
pub trait IdText {
    /// The id's full text.
    fn id_text(&self) -> &str;
}

impl IdText for String {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for &str {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for Box<str> {
    fn id_text(&self) -> &str {
        self
    }
}
impl IdText for Cow<'_, str> {
    fn id_text(&self) -> &str {
        self
    }
}

/// A record's id as the runtime compares it: integers numerically (GitHub issue 9 comes
/// before 10), text bytewise (as a database compares a binary-collated column), and any
/// integer before any text.
///
/// ```
/// use toolshape::fields::IdKey;
///
/// assert!(IdKey::Int(9) < IdKey::Int(10));
/// assert!(IdKey::Text("10") < IdKey::Text("9"));
/// assert_eq!(IdKey::Int(1347).to_string(), "1347");
/// assert_eq!(IdKey::Int(10).cmp_stored("9"), std::cmp::Ordering::Greater);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdKey<'a> {
    /// An integer id (`u64`, `i64`, …): compared by value.
    Int(i128),
    /// A UUID (`uuid::Uuid`, feature `uuid`), written in its lowercase hyphenated form and
    /// compared as that text compares.
    Uuid(u128),
    /// A text id: compared bytewise.
    Text(&'a str),
}

impl<'a> IdKey<'a> {
    /// The id's text, when it is text.
    pub fn as_text(self) -> Option<&'a str> {
        match self {
            IdKey::Text(text) => Some(text),
            IdKey::Int(_) | IdKey::Uuid(_) => None,
        }
    }

    /// Compares this id with one stored as text in a cursor ([`Keyset::id`](crate::cursor::Keyset)),
    /// reading the stored text as this id's kind: an integer id compares numerically with a
    /// stored integer; a stored value of the other kind orders as [`IdKey`] does.
    pub fn cmp_stored(&self, stored: &str) -> Ordering {
        match self {
            IdKey::Int(n) => match parse_int(stored) {
                Some(m) => n.cmp(&m),
                None => Ordering::Less,
            },
            // The lowercase hyphenated form orders as the number does.
            IdKey::Uuid(_) => self.to_string().as_str().cmp(stored),
            IdKey::Text(text) => (*text).cmp(stored),
        }
    }
}

/// The integer `text` is the canonical form of (`0`, `-7`, `1347`; never `+7` or `007`).
pub(crate) fn canonical_int(text: &str) -> Option<i128> {
    parse_int(text)
}

fn parse_int(text: &str) -> Option<i128> {
    if is_text_of_int(text) {
        text.parse().ok()
    } else {
        None
    }
}

// Only the canonical form an `IdKey::Int` prints: `0`, `-7`, `1347`; never `+7` or `007`.
fn is_text_of_int(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.len() <= 39
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0"
}

impl fmt::Display for IdKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdKey::Int(n) => write!(f, "{n}"),
            IdKey::Uuid(u) => {
                let hex = format!("{u:032x}");
                write!(
                    f,
                    "{}-{}-{}-{}-{}",
                    &hex[..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..]
                )
            }
            IdKey::Text(text) => f.write_str(text),
        }
    }
}

impl<'a> From<&'a str> for IdKey<'a> {
    fn from(text: &'a str) -> Self {
        IdKey::Text(text)
    }
}

/// A field that can be a record's `id`: text ([`IdText`]: `String`, `&str`, newtypes) or an
/// integer (`u8` … `u64`, `i8` … `i64`, `usize`, `isize`), or a newtype that implements this
/// trait by returning its inner id's key.
///
/// Integer ids are written as JSON numbers and ordered numerically in tie-breaks and cursors.
///
/// ```
/// use toolshape::{fields::IdField, fields::IdKey};
///
/// struct IssueNumber(u64);
/// impl IdField for IssueNumber {
///     fn id_key(&self) -> IdKey<'_> {
///         self.0.id_key()
///     }
/// }
/// assert_eq!(IssueNumber(1347).id_key(), IdKey::Int(1347));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used with `id`: it is not an integer and does not expose its text",
    label = "`id` needs a field whose value is an integer or the id's text",
    note = "`id` works on integers (u64, i64, u32, …), String, &str, Box<str>, Cow<str> and \
            (feature `uuid`) uuid::Uuid; \
            for a newtype, implement `toolshape::fields::IdText` returning its text, or \
            `toolshape::fields::IdField` returning its inner id's key"
)]
pub trait IdField {
    /// The id, as the runtime compares and prints it.
    fn id_key(&self) -> IdKey<'_>;

    /// Whether the id is an integer (a JSON number in output and schema).
    fn is_integer() -> bool
    where
        Self: Sized,
    {
        false
    }
}

impl<T: IdText + ?Sized> IdField for T {
    fn id_key(&self) -> IdKey<'_> {
        IdKey::Text(self.id_text())
    }
}

macro_rules! integer_ids {
    ($($ty:ty),*) => {$(
        impl IdField for $ty {
            fn id_key(&self) -> IdKey<'_> {
                IdKey::Int(i128::from(*self))
            }
            fn is_integer() -> bool {
                true
            }
        }
    )*};
}
integer_ids!(u8, u16, u32, u64, i8, i16, i32, i64);

impl IdField for usize {
    fn id_key(&self) -> IdKey<'_> {
        // usize is at most 64 bits on every target Rust supports.
        IdKey::Int(*self as i128)
    }
    fn is_integer() -> bool {
        true
    }
}

impl IdField for isize {
    fn id_key(&self) -> IdKey<'_> {
        IdKey::Int(*self as i128)
    }
    fn is_integer() -> bool {
        true
    }
}

#[cfg(feature = "uuid")]
impl IdField for uuid::Uuid {
    fn id_key(&self) -> IdKey<'_> {
        IdKey::Uuid(self.as_u128())
    }
}
