//! What a configured projection says, as the loader checked it: where a tool's records are in
//! its JSON result, what each record shows ([`RecordSpec`]), in the derive's path language
//! ([`JsonPath`]), and the legends it names ([`ConfiguredLegend`]). Written in configuration
//! (`[tools.<name>.records]`, read by [`config`](crate::config)); shaped by
//! [`JsonProjection`](super::JsonProjection).

pub(crate) use crate::fields::date::DayOf;
use crate::fields::date::EpochUnit;
use crate::fields::rank::Order;
use crate::record::{Owned, Segment};
use std::collections::BTreeMap;

/// Where a tool's records are in its JSON result, and what each one shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredRecords {
    /// The tool.
    pub tool: String,
    /// The JSON Schema file of the tool's result the paths were checked against (`schema`,
    /// relative to the configuration file), as written.
    pub schema: Option<String>,
    /// The keys leading to the records from the top of the result (`["data", "issues"]`);
    /// empty for the result itself. What is there is a list of records.
    pub at: Vec<String>,
    /// Whether what is at `at` is one record (an object: a `get_issue`'s answer), not a list
    /// of them (`one = true`). Either way, the other is an error: an error object where a
    /// list was configured (`{"message": "Not Found"}`) is not read as a record.
    pub one: bool,
    /// What one record shows.
    pub record: RecordSpec,
}

/// What a record shows: the configured twin of the derive's projection.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordSpec {
    /// What one record is called.
    pub name: String,
    /// What several are called.
    pub plural: String,
    /// The prose line, over the outputs.
    pub prose: Option<Vec<Segment<Owned>>>,
    /// The absence word of every output without its own (`{field}` is the output's name).
    pub absent: Option<String>,
    /// The outputs, in output order.
    pub outputs: Vec<Output>,
    /// Keys named as left out (`skip = true`): always in `omitted.fields`, with the keys the
    /// records have that no output reads.
    pub skipped: Vec<String>,
}

/// One output of a configured record.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The name the model reads: `rename`, or the path's first key.
    pub name: String,
    /// Where the value is in the record.
    pub from: JsonPath,
    /// How the value is shaped.
    pub kind: OutputKind,
    /// The rank key, when this output is it.
    pub rank: Option<RankSpec>,
    /// The word text shows for an absent value.
    pub absent: Option<String>,
    /// Whether `""` and `[]` read as absent.
    pub empty_is_absent: bool,
    /// The TOML line it was written on.
    pub line: Option<usize>,
}

/// What a configured `date` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateFrom {
    /// ISO-8601 text (`date = true`, `date = { day = "as_written" }`), shown on the day
    /// [`DayOf`] says.
    Iso(DayOf),
    /// A number in this unit since 1970-01-01T00:00:00Z (`date = "epoch_seconds"`,
    /// `"epoch_millis"`), shown on its UTC day.
    Epoch(EpochUnit),
}

/// How a configured output's value is shaped.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputKind {
    /// As it is.
    Show,
    /// The record's id, shortened or not.
    Id {
        /// Prefix and first UUID group only.
        short: bool,
    },
    /// A date: ISO-8601 text, or a number since the epoch.
    Date(DateFrom),
    /// Text from outside the system.
    Untrusted {
        /// The cap in tokens.
        max_tokens: Option<u32>,
    },
    /// A code expanded to a word by the named legend of `[legends]`.
    Legend(String),
    /// Records of their own (a list when the path ends in `[]`).
    Nested(Box<RecordSpec>),
    /// Whatever the value is, shown as it is, its text as outsiders' text: a string capped,
    /// sanitised and marked; an object or a list as its compact JSON, the same way; numbers,
    /// booleans and `null` as they are. What records nobody described get through the
    /// harness.
    Any {
        /// The cap in tokens of its text.
        max_tokens: Option<u32>,
    },
}

/// A configured rank key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankSpec {
    /// Ascending or descending.
    pub order: Order,
    /// How a path through `[]` makes one key of its values.
    pub fold: Option<Fold>,
}

pub(crate) use crate::fields::rank::Fold;

/// A path into a record, in the derive's path language: keys joined by `.`, `?` through a
/// value that may be absent, `[]` through each item of a list (`labels[].name`,
/// `milestone?.title`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    /// As written.
    pub text: String,
    /// The steps.
    pub steps: Vec<Step>,
}

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The value under a key.
    Key(String),
    /// Through a value that may be absent.
    Opt,
    /// Through each item of a list.
    Each,
}

impl JsonPath {
    /// Parses a path, or says what is wrong with it.
    ///
    /// ```
    /// use toolshape::__seams::config::{JsonPath, Step};
    ///
    /// let path = JsonPath::parse("milestone?.labels[].name").unwrap();
    /// assert_eq!(path.steps, [
    ///     Step::Key("milestone".into()), Step::Opt, Step::Key("labels".into()), Step::Each,
    ///     Step::Key("name".into()),
    /// ]);
    /// assert!(JsonPath::parse("user..login").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        if text.trim().is_empty() {
            return Err(
                "`from` is empty: name the key the value is under (`title`, `user.login`)"
                    .to_owned(),
            );
        }
        let mut steps = Vec::new();
        let mut rest = text;
        loop {
            let end = rest
                .find(|c: char| matches!(c, '.' | '?' | '[' | ']') || c.is_whitespace())
                .unwrap_or(rest.len());
            if end == 0 {
                return Err(match rest.chars().next() {
                    Some(c) if c.is_whitespace() => {
                        format!("`{text}`: a path has no spaces; keys are joined by `.`")
                    }
                    _ if steps.is_empty() => {
                        format!("`{text}`: a path starts with a key: `user.login`")
                    }
                    _ => format!("`{text}`: a path continues with a key after `.`: `user.login`"),
                });
            }
            steps.push(Step::Key(rest[..end].to_owned()));
            rest = &rest[end..];
            loop {
                if let Some(r) = rest.strip_prefix('?') {
                    steps.push(Step::Opt);
                    rest = r;
                } else if let Some(r) = rest.strip_prefix("[]") {
                    steps.push(Step::Each);
                    rest = r;
                } else {
                    break;
                }
            }
            match rest.chars().next() {
                None => break,
                Some('.') => rest = &rest[1..],
                Some('[' | ']') => {
                    return Err(format!(
                        "`{text}`: write `[]` to go through every item of a list: `labels[].name`"
                    ));
                }
                Some(c) if c.is_whitespace() => {
                    return Err(format!(
                        "`{text}`: a path has no spaces; keys are joined by `.`"
                    ));
                }
                Some(_) => {
                    return Err(format!(
                        "`{text}`: `?` and `[]` follow a key: `milestone?.title`, `labels[].name`"
                    ));
                }
            }
        }
        Ok(JsonPath {
            text: text.to_owned(),
            steps,
        })
    }

    /// The first key: the output's name unless renamed.
    pub fn root(&self) -> &str {
        match self.steps.first() {
            Some(Step::Key(key)) => key,
            _ => "",
        }
    }

    /// Whether the path goes through `[]`.
    pub fn through_each(&self) -> bool {
        self.steps.contains(&Step::Each)
    }
}

/// A legend of `[legends]`: codes (integers, or text) and their words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfiguredLegend {
    /// Whether every code is an integer (data must then hold numbers).
    pub integer_codes: bool,
    /// Code (as its text) → word, in code order.
    pub words: BTreeMap<String, String>,
}
