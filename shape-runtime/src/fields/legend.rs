//! Legends: codes expanded to words at serialisation time, so a model reads `"open"`, never
//! `3` with a guess about what 3 means. Codes can be integers, text (`Legend<&str>` over a
//! `String` field: Jira's status-category keys) or a Rust enum (`Legend<State>`, printed with
//! `Display` in the unknown-code marker).
//!
//! A [`Legend`] is built in a `const`; a [`LoadedLegend`] is filled once at start-up from the
//! table that owns the mapping, so a copy in code cannot go stale. A code the legend does not
//! know renders as `unknown status 7` and is counted in the call's report: never guessed,
//! never `null`, never a panic.
//!
//! ```
//! use toolshape::{Legend, fields::LegendSource, fields::LoadedLegend};
//!
//! const PRIORITY: Legend<u8> = Legend::new(&[(1, "low"), (2, "high"), (3, "urgent")]);
//! assert_eq!(PRIORITY.word(&2), Some("high"));
//! assert_eq!(PRIORITY.word(&9), None);
//!
//! static STATUS: LoadedLegend<i64> = LoadedLegend::new();
//! // At start-up, from `SELECT code, name FROM ticket_statuses`:
//! STATUS.load([(1, "new"), (3, "open")]).unwrap();
//! assert_eq!(STATUS.word(&3), Some("open"));
//! ```

use crate::record::call_env::CallEnv;
use serde::{Serialize, Serializer};
use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::OnceLock;

/// Something that maps codes to words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a legend",
    label = "`legend = …` needs a `Legend`, a `LoadedLegend` or another `LegendSource`",
    note = "a `Legend<C>` needs `C: PartialEq` (derive it on an enum code); a `LoadedLegend<C>` \
            needs `C: Eq + Hash`"
)]
pub trait LegendSource {
    /// The code type (`u8`, `i32`, `&str`, an enum, …).
    type Code;
    /// The word for `code`, if the legend knows it.
    fn word(&self, code: &Self::Code) -> Option<&str>;
    /// Every word, in code order, for schemas.
    fn words(&self) -> Vec<String>;
    /// The word for a text code, for a legend over text codes (`Legend<&str>`,
    /// `LoadedLegend<String>`) read by a `String` field. A source that does not override it
    /// knows no text codes: each renders as unknown and is counted, never guessed.
    fn word_for_text(&self, code: &str) -> Option<&str>
    where
        Self::Code: AsRef<str>,
    {
        let _ = code;
        None
    }
}

/// A code a legend can print in its unknown-code marker (`unknown status 7`): any `Display`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a legend code: it does not implement `Display`",
    label = "the unknown-code marker (`unknown status 7`) prints the code with `Display`",
    note = "implement `std::fmt::Display` for `{Self}`, writing each value as the API names it \
            (an enum's serde name, such as `not_planned`)"
)]
pub trait LegendCode: Display {}

impl<T: Display + ?Sized> LegendCode for T {}

/// A legend written in code, constructible in a `const`.
#[derive(Debug, Clone, Copy)]
pub struct Legend<C: 'static> {
    entries: &'static [(C, &'static str)],
}

impl<C: 'static> Legend<C> {
    /// A legend from `(code, word)` pairs.
    pub const fn new(entries: &'static [(C, &'static str)]) -> Self {
        Legend { entries }
    }

    /// The pairs.
    pub const fn entries(&self) -> &'static [(C, &'static str)] {
        self.entries
    }
}

impl<C: PartialEq + 'static> LegendSource for Legend<C> {
    type Code = C;
    fn word(&self, code: &C) -> Option<&str> {
        self.entries
            .iter()
            .find(|(c, _)| c == code)
            .map(|(_, w)| *w)
    }
    fn words(&self) -> Vec<String> {
        self.entries.iter().map(|(_, w)| (*w).to_owned()).collect()
    }
    fn word_for_text(&self, code: &str) -> Option<&str>
    where
        C: AsRef<str>,
    {
        self.entries
            .iter()
            .find(|(c, _)| c.as_ref() == code)
            .map(|(_, w)| *w)
    }
}

/// Why a [`LoadedLegend`] refused to load.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LegendError {
    /// `load` was called a second time.
    #[error("this legend is already loaded; load it once at start-up")]
    AlreadyLoaded,
    /// Two rows gave the same code.
    #[error(
        "code {0} appears twice in the legend's rows; the table that owns the mapping must have one word per code"
    )]
    DuplicateCode(String),
}

/// A legend loaded once, at start-up, from the database that owns the mapping.
///
/// Until it is loaded every code renders as unknown (and is counted), which a test will
/// notice; nothing is guessed.
pub struct LoadedLegend<C> {
    map: OnceLock<(HashMap<C, String>, Vec<String>)>,
}

impl<C> LoadedLegend<C> {
    /// An empty legend, for a `static`.
    pub const fn new() -> Self {
        LoadedLegend {
            map: OnceLock::new(),
        }
    }

    /// Whether [`load`](LoadedLegend::load) has been called.
    pub fn is_loaded(&self) -> bool {
        self.map.get().is_some()
    }
}

impl<C> Default for LoadedLegend<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Eq + Hash + Display + Ord + Clone> LoadedLegend<C> {
    /// Loads the `(code, word)` rows; fails on a duplicate code or a second load.
    pub fn load<W: Into<String>>(
        &self,
        rows: impl IntoIterator<Item = (C, W)>,
    ) -> Result<(), LegendError> {
        if self.is_loaded() {
            return Err(LegendError::AlreadyLoaded);
        }
        let mut map = HashMap::new();
        for (code, word) in rows {
            if map.contains_key(&code) {
                return Err(LegendError::DuplicateCode(code.to_string()));
            }
            map.insert(code, word.into());
        }
        let mut ordered: Vec<(&C, &String)> = map.iter().collect();
        ordered.sort_by(|a, b| a.0.cmp(b.0));
        let words = ordered.into_iter().map(|(_, w)| w.clone()).collect();
        self.map
            .set((map, words))
            .map_err(|_| LegendError::AlreadyLoaded)
    }
}

impl<C: Eq + Hash> LegendSource for LoadedLegend<C> {
    type Code = C;
    fn word(&self, code: &C) -> Option<&str> {
        self.map.get()?.0.get(code).map(String::as_str)
    }
    fn words(&self) -> Vec<String> {
        self.map.get().map(|(_, w)| w.clone()).unwrap_or_default()
    }
    fn word_for_text(&self, code: &str) -> Option<&str>
    where
        C: AsRef<str>,
    {
        let (map, _) = self.map.get()?;
        map.iter()
            .find(|(c, _)| c.as_ref() == code)
            .map(|(_, w)| w.as_str())
    }
}

impl<L: LegendSource + ?Sized> LegendSource for &L {
    type Code = L::Code;
    fn word(&self, code: &Self::Code) -> Option<&str> {
        (**self).word(code)
    }
    fn words(&self) -> Vec<String> {
        (**self).words()
    }
    fn word_for_text(&self, code: &str) -> Option<&str>
    where
        Self::Code: AsRef<str>,
    {
        (**self).word_for_text(code)
    }
}

/// A field that a legend over `C` can read: `C` itself or `Option<C>`; a `String` or
/// `Option<String>` field for a legend over `&str` codes.
#[diagnostic::on_unimplemented(
    message = "a legend over `{C}` cannot read a field of type `{Self}`",
    label = "this legend's code type differs from the field's type",
    note = "`legend` works on a field of the legend's code type `{C}` or `Option<{C}>` (a \
            `Legend<&str>` also reads `String`); change the field's type or use a legend over its type"
)]
pub trait LegendField<C> {
    /// The word for this field's code, the unknown-code marker, or null.
    fn coded<'a, L: LegendSource<Code = C> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a>
    where
        C: LegendCode;

    /// Whether the field can be null.
    fn nullable() -> bool;

    /// Whether the field can read `not recorded` ([`Recorded`](crate::Recorded)).
    fn may_be_not_recorded() -> bool {
        false
    }
}

/// What a legend field renders as.
pub enum LegendOut<'a> {
    /// The legend's word.
    Word(&'a str),
    /// A code the legend does not know: rendered `unknown <field> <code>` and counted.
    Unknown {
        /// The output field.
        field: &'a str,
        /// The code, as text.
        code: String,
        /// Where to count it.
        env: &'a CallEnv<'a>,
    },
    /// `None`.
    Null,
}

impl Serialize for LegendOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            LegendOut::Word(word) => serializer.serialize_str(word),
            LegendOut::Unknown { field, code, env } => {
                env.note_unknown_code(field, code);
                serializer.collect_str(&format_args!("unknown {field} {code}"))
            }
            LegendOut::Null => serializer.serialize_none(),
        }
    }
}

fn coded<'a>(
    word: Option<&'a str>,
    code: &dyn Display,
    field: &'static str,
    env: &'a CallEnv<'a>,
) -> LegendOut<'a> {
    match word {
        Some(word) => LegendOut::Word(word),
        None => LegendOut::Unknown {
            field,
            code: code.to_string(),
            env,
        },
    }
}

impl<C> LegendField<C> for C {
    fn coded<'a, L: LegendSource<Code = C> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a>
    where
        C: LegendCode,
    {
        coded(legend.word(self), self, field, env)
    }
    fn nullable() -> bool {
        false
    }
}

impl<C> LegendField<C> for Option<C> {
    fn coded<'a, L: LegendSource<Code = C> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a>
    where
        C: LegendCode,
    {
        match self {
            Some(code) => coded(legend.word(code), code, field, env),
            None => LegendOut::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
}

impl LegendField<&'static str> for String {
    fn coded<'a, L: LegendSource<Code = &'static str> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a> {
        coded(legend.word_for_text(self), self, field, env)
    }
    fn nullable() -> bool {
        false
    }
}

impl LegendField<&'static str> for Option<String> {
    fn coded<'a, L: LegendSource<Code = &'static str> + ?Sized>(
        &self,
        legend: &'a L,
        field: &'static str,
        env: &'a CallEnv<'a>,
    ) -> LegendOut<'a> {
        match self {
            Some(code) => coded(legend.word_for_text(code), code, field, env),
            None => LegendOut::Null,
        }
    }
    fn nullable() -> bool {
        true
    }
}
