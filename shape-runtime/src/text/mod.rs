//! Plain-text rendering of a field value, for prose lines and table cells.
//!
//! [`TextSerializer`] is a serde serializer that writes a value the way a person would read
//! it: strings bare, `None` as `null` and an empty list as `none` (or the field's word for its
//! absence: `unassigned`), lists as `a, b, c`, structs as `{k: v, k: v}`. Values
//! can never break the line they are in: newlines are written as `\n`, and in table cells a
//! `|` is written as `\|`. Nothing else is escaped: a backslash in a value is written as it is,
//! so `\u2014` written as text reads `\u2014` (a value's own `\n` then reads as a line break
//! does, which is what a reader takes either for).

pub(crate) mod digits;
pub(crate) mod prose;

use serde::ser::{self, Serialize};
use std::fmt::{self, Write as _};

/// Where the text goes, which decides what must be escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextMode {
    /// A prose line: newlines and carriage returns escaped.
    Prose,
    /// A table cell: also `|` escaped.
    Cell,
    /// Text that is written again through a `Prose` or `Cell` serializer (a nested record's
    /// words), so it is escaped once, there: nothing escaped here.
    Raw,
}

/// Writes `text` escaped for `mode`.
pub(crate) fn push_escaped(out: &mut String, text: &str, mode: TextMode) {
    if mode == TextMode::Raw {
        out.push_str(text);
        return;
    }
    let needs = |c: char| {
        matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') || (mode == TextMode::Cell && c == '|')
    };
    if !text.chars().any(needs) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\n' | '\u{2028}' | '\u{2029}' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '|' if mode == TextMode::Cell => out.push_str("\\|"),
            c => out.push(c),
        }
    }
}

/// Writes one value as plain text into a `String`.
pub struct TextSerializer<'a> {
    out: &'a mut String,
    mode: TextMode,
    absent: Option<&'a str>,
}

impl<'a> TextSerializer<'a> {
    /// A serializer appending to `out`.
    pub fn new(out: &'a mut String, mode: TextMode) -> Self {
        TextSerializer {
            out,
            mode,
            absent: None,
        }
    }

    /// Writes `word` for an absent value (`None`, an empty list) instead of `null` / `none`:
    /// the value's own absence, not that of a value nested in it.
    ///
    /// ```
    /// use serde::Serialize;
    /// use toolshape::__private::{TextMode, TextSerializer};
    ///
    /// let mut out = String::new();
    /// None::<String>.serialize(TextSerializer::new(&mut out, TextMode::Prose).absent(Some("unassigned"))).unwrap();
    /// Vec::<String>::new().serialize(TextSerializer::new(&mut out, TextMode::Prose).absent(Some(", no labels"))).unwrap();
    /// assert_eq!(out, "unassigned, no labels");
    /// ```
    pub fn absent(self, word: Option<&'a str>) -> Self {
        TextSerializer {
            absent: word,
            ..self
        }
    }
}

/// A value that could not be written as text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TextError(String);

impl ser::Error for TextError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TextError(msg.to_string())
    }
}

macro_rules! display_scalar {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<(), TextError> {
            let _ = write!(self.out, "{v}");
            Ok(())
        }
    )*};
}

impl<'a> ser::Serializer for TextSerializer<'a> {
    type Ok = ();
    type Error = TextError;
    type SerializeSeq = TextSeq<'a>;
    type SerializeTuple = TextSeq<'a>;
    type SerializeTupleStruct = TextSeq<'a>;
    type SerializeTupleVariant = TextSeq<'a>;
    type SerializeMap = TextMap<'a>;
    type SerializeStruct = TextMap<'a>;
    type SerializeStructVariant = TextMap<'a>;

    display_scalar!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64);

    fn serialize_char(self, v: char) -> Result<(), TextError> {
        let mut buf = [0u8; 4];
        push_escaped(self.out, v.encode_utf8(&mut buf), self.mode);
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), TextError> {
        push_escaped(self.out, v, self.mode);
        Ok(())
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), TextError> {
        let text = value.to_string();
        push_escaped(self.out, &text, self.mode);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), TextError> {
        push_escaped(self.out, &String::from_utf8_lossy(v), self.mode);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), TextError> {
        match self.absent {
            Some(word) => push_escaped(self.out, word, self.mode),
            None => self.out.push_str("null"),
        }
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), TextError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), TextError> {
        self.out.push_str("null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), TextError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
    ) -> Result<(), TextError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _n: &'static str,
        value: &T,
    ) -> Result<(), TextError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), TextError> {
        push_escaped(self.out, variant, self.mode);
        self.out.push_str(": ");
        value.serialize(self)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<TextSeq<'a>, TextError> {
        Ok(TextSeq {
            out: self.out,
            mode: self.mode,
            first: true,
            close: "",
            absent: self.absent,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<TextSeq<'a>, TextError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _n: &'static str,
        len: usize,
    ) -> Result<TextSeq<'a>, TextError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<TextSeq<'a>, TextError> {
        push_escaped(self.out, variant, self.mode);
        self.out.push('(');
        Ok(TextSeq {
            out: self.out,
            mode: self.mode,
            first: true,
            close: ")",
            absent: None,
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<TextMap<'a>, TextError> {
        self.out.push('{');
        Ok(TextMap {
            out: self.out,
            mode: self.mode,
            first: true,
        })
    }
    fn serialize_struct(self, _n: &'static str, len: usize) -> Result<TextMap<'a>, TextError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<TextMap<'a>, TextError> {
        push_escaped(self.out, variant, self.mode);
        self.out.push(' ');
        self.serialize_map(Some(len))
    }
}

/// A list being written as `a, b, c`.
pub struct TextSeq<'a> {
    out: &'a mut String,
    mode: TextMode,
    first: bool,
    close: &'static str,
    absent: Option<&'a str>,
}

impl TextSeq<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        if !self.first {
            self.out.push_str(", ");
        }
        self.first = false;
        value.serialize(TextSerializer::new(self.out, self.mode))
    }
    fn finish(self) -> Result<(), TextError> {
        if self.first && self.close.is_empty() {
            match self.absent {
                Some(word) => push_escaped(self.out, word, self.mode),
                None => self.out.push_str("none"),
            }
        }
        self.out.push_str(self.close);
        Ok(())
    }
}

impl ser::SerializeSeq for TextSeq<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        self.item(value)
    }
    fn end(self) -> Result<(), TextError> {
        self.finish()
    }
}
impl ser::SerializeTuple for TextSeq<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        self.item(value)
    }
    fn end(self) -> Result<(), TextError> {
        self.finish()
    }
}
impl ser::SerializeTupleStruct for TextSeq<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        self.item(value)
    }
    fn end(self) -> Result<(), TextError> {
        self.finish()
    }
}
impl ser::SerializeTupleVariant for TextSeq<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        self.item(value)
    }
    fn end(self) -> Result<(), TextError> {
        self.finish()
    }
}

/// A map or struct being written as `{k: v, k: v}`.
pub struct TextMap<'a> {
    out: &'a mut String,
    mode: TextMode,
    first: bool,
}

impl TextMap<'_> {
    fn sep(&mut self) {
        if !self.first {
            self.out.push_str(", ");
        }
        self.first = false;
    }
}

impl ser::SerializeMap for TextMap<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), TextError> {
        self.sep();
        key.serialize(TextSerializer::new(self.out, self.mode))?;
        self.out.push_str(": ");
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TextError> {
        value.serialize(TextSerializer::new(self.out, self.mode))
    }
    fn end(self) -> Result<(), TextError> {
        self.out.push('}');
        Ok(())
    }
}
impl ser::SerializeStruct for TextMap<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), TextError> {
        self.sep();
        push_escaped(self.out, key, self.mode);
        self.out.push_str(": ");
        value.serialize(TextSerializer::new(self.out, self.mode))
    }
    fn end(self) -> Result<(), TextError> {
        self.out.push('}');
        Ok(())
    }
}
impl ser::SerializeStructVariant for TextMap<'_> {
    type Ok = ();
    type Error = TextError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), TextError> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), TextError> {
        self.out.push('}');
        Ok(())
    }
}

/// A field that can be absent, so a word for its absence (`#[shape(absent = "…")]`) can show:
/// `Option<T>` (`None`) and lists (empty).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is never absent, so `absent` has nothing to name",
    label = "`absent` gives the word for a `None` or an empty list",
    note = "`absent` works on `Option<T>`, `Vec<T>` and other lists; remove it from this field"
)]
pub trait MayBeAbsent {}

impl<T> MayBeAbsent for Option<T> {}
impl<T> MayBeAbsent for Vec<T> {}
impl<T> MayBeAbsent for [T] {}
impl<T> MayBeAbsent for Box<[T]> {}
impl<T: MayBeAbsent + ?Sized> MayBeAbsent for &T {}
impl<T> MayBeAbsent for std::collections::BTreeSet<T> {}
impl<T, S> MayBeAbsent for std::collections::HashSet<T, S> {}
impl<T> MayBeAbsent for std::collections::VecDeque<T> {}

/// `1412` as `1,412`.
/// Where the JSON string starting at `start` (a `"`) ends: the index after its closing
/// quote, or the end of `bytes` for one never closed. A backslash escapes the byte after it.
#[cfg_attr(
    not(feature = "rmcp"),
    expect(
        dead_code,
        reason = "the line transport and redaction (feature `rmcp`) read JSON text"
    )
)]
pub(crate) fn json_string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) use toolshape_internals::english::{plural_of, singular_of};

#[cfg(test)]
mod tests {
    use super::{TextMode, push_escaped};

    /// What each mode escapes, one character at a time and mixed: line breaks (and the
    /// Unicode line and paragraph separators) in prose and cells, `|` in cells only,
    /// backslashes never (a `\u2014` in a value reads as written), nothing in raw text.
    #[test]
    fn each_mode_escapes_what_it_must_and_nothing_else() {
        let esc = |text: &str, mode| {
            let mut out = String::new();
            push_escaped(&mut out, text, mode);
            out
        };
        for (text, prose, cell) in [
            ("plain", "plain", "plain"),
            ("a|b", "a|b", "a\\|b"),
            ("a\nb", "a\\nb", "a\\nb"),
            ("a\rb", "a\\rb", "a\\rb"),
            ("a\u{2028}b", "a\\nb", "a\\nb"),
            ("a\u{2029}b", "a\\nb", "a\\nb"),
            ("x|\ny", "x|\\ny", "x\\|\\ny"),
            ("\\u2014 \\n", "\\u2014 \\n", "\\u2014 \\n"),
        ] {
            assert_eq!(esc(text, TextMode::Prose), prose, "{text:?}");
            assert_eq!(esc(text, TextMode::Cell), cell, "{text:?}");
            assert_eq!(esc(text, TextMode::Raw), text, "{text:?}");
        }
    }
}
