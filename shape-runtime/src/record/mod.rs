//! The record description: one model of what a record type shows (names, fields and how each
//! is shaped, the prose template, the rank key), read by every path that shapes records, and
//! the typed field references ([`FieldRef`]) the derive emits.
//!
//! A [`Projection`] is generic over where its text lives ([`Storage`]): the derive emits a
//! `Projection<Static>` (`&'static str`s and slices in a `static`, no allocation), and a
//! stored result reads back a `Projection<Owned>` (`String`s and `Vec`s) from its JSON. Typed
//! pages, stored results, the renderer, aggregation, queries and `open_result` all read this
//! one type.
//!
//! A field's wire form (inside a stored result) is
//! `{"name": "assignee", "kind": "resolve", "max_tokens": null, "source": "assignee_id",
//! "resolver": "users"}`: `name`, `kind` and `max_tokens` as stored results have always
//! been written; `source` (when it differs from `name`), `resolver` (resolved fields) and
//! `short` (shortened ids) were added later and are optional, so results stored before them
//! read back with `source` = `name`, `resolver` = `""` and `short` = `false`.

pub(crate) mod call_env;
pub(crate) mod nested;
pub(crate) mod path;
pub(crate) mod tool_result;

use crate::fields::rank::Order;
use serde::de::Deserializer;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a [`Projection`]'s text and lists live: [`Static`] for the derive's statics,
/// [`Owned`] for a description read back from storage. Sealed: these are the two.
pub trait Storage: sealed::Sealed + Sized + 'static {
    /// A piece of text: `&'static str` or `String`.
    type Str: AsRef<str> + Clone + fmt::Debug + PartialEq + Eq;
    /// The output fields.
    type Fields: AsRef<[Field<Self>]> + Clone + fmt::Debug + PartialEq;
    /// The skipped source fields.
    type Names: AsRef<[Self::Str]> + Clone + fmt::Debug + PartialEq;
    /// The prose template.
    type Prose: AsRef<[Segment<Self>]> + Clone + fmt::Debug + PartialEq;
    /// The nested record types shown through `#[shape(nested)]` (a stored description keeps
    /// their skipped fields in `skipped` instead, so its list is empty).
    type Nested: AsRef<[NestedInfo]> + Clone + fmt::Debug + PartialEq;
}

/// Text and lists in `static`s: what `#[derive(ToolResult)]` emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Static {}

/// Text and lists on the heap: a description read back from a stored result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Static {}
    impl Sealed for super::Owned {}
}

impl Storage for Static {
    type Str = &'static str;
    type Fields = &'static [Field<Static>];
    type Names = &'static [&'static str];
    type Prose = &'static [Segment<Static>];
    type Nested = &'static [NestedInfo];
}

impl Storage for Owned {
    type Str = String;
    type Fields = Vec<Field<Owned>>;
    type Names = Vec<String>;
    type Prose = Vec<Segment<Owned>>;
    type Nested = Vec<NestedInfo>;
}

/// What a record type shows: its names, output fields, skipped fields, prose template and
/// rank key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection<S: Storage = Static> {
    /// What one record is called (`"ticket"`).
    pub name: S::Str,
    /// What several are called (`"tickets"`).
    pub plural: S::Str,
    /// Output fields, in output order.
    pub fields: S::Fields,
    /// Source fields this view leaves out, so "the projection dropped it" differs from
    /// "the record has none".
    pub skipped: S::Names,
    /// The prose template, split into text and field references.
    pub prose: Option<S::Prose>,
    /// The rank key.
    pub rank: Option<RankInfo>,
    /// The index of the id field.
    pub id: Option<usize>,
    /// Output fields that show a record type of their own (`#[shape(nested)]`), whose skipped
    /// fields this view leaves out too.
    pub nested: S::Nested,
}

/// An output field shown through its own type's projection (`#[shape(nested)]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NestedInfo {
    /// The output field's name.
    pub field: &'static str,
    /// The nested type's projection.
    pub projection: &'static Projection,
    /// Whether the field holds a list of such records (as many as the data has), not at
    /// most one.
    pub list: bool,
}

/// One output field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<S: Storage = Static> {
    /// The name in tool results.
    pub name: S::Str,
    /// The Rust field it comes from.
    pub source: S::Str,
    /// How the value is shaped.
    pub kind: FieldKind<S>,
    /// The word prose and table text show when the value is absent (`None`, an empty
    /// list): `"unassigned"`, `"no labels"`. `None` shows `null` and `none`. JSON keeps `null`.
    pub absent: Option<S::Str>,
}

/// How a field's value is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind<S: Storage = Static> {
    /// Shown as is.
    Show,
    /// An integer code expanded to a word.
    Legend,
    /// A key resolved to a name by the named resolver.
    Resolve {
        /// The resolver's name.
        resolver: S::Str,
    },
    /// The record's id, shortened or not.
    Id {
        /// Shortened to prefix plus first UUID group.
        short: bool,
    },
    /// A timestamp truncated to its date.
    Date,
    /// Text written by someone outside the system: sanitised, capped and marked.
    Untrusted {
        /// The cap in tokens, if any.
        max_tokens: Option<u32>,
    },
}

/// How a field was shaped, without the kind's details: what aggregation, queries and a
/// stored result's `kind` key say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldRole {
    /// Shown as is.
    Show,
    /// An integer code expanded to a word.
    Legend,
    /// A key resolved to a name (or null).
    Resolve,
    /// The record's id.
    Id,
    /// A date, as `YYYY-MM-DD` text (or the raw text if it did not parse).
    Date,
    /// Text written by someone outside the system.
    Untrusted,
}

impl<S: Storage> FieldKind<S> {
    /// The kind without its details.
    pub const fn role(&self) -> FieldRole {
        match self {
            FieldKind::Show => FieldRole::Show,
            FieldKind::Legend => FieldRole::Legend,
            FieldKind::Resolve { .. } => FieldRole::Resolve,
            FieldKind::Id { .. } => FieldRole::Id,
            FieldKind::Date => FieldRole::Date,
            FieldKind::Untrusted { .. } => FieldRole::Untrusted,
        }
    }

    /// The cap of an untrusted field.
    pub const fn max_tokens(&self) -> Option<u32> {
        match self {
            FieldKind::Untrusted { max_tokens } => *max_tokens,
            _ => None,
        }
    }

    fn to_owned_kind(&self) -> FieldKind<Owned> {
        match self {
            FieldKind::Show => FieldKind::Show,
            FieldKind::Legend => FieldKind::Legend,
            FieldKind::Resolve { resolver } => FieldKind::Resolve {
                resolver: resolver.as_ref().to_owned(),
            },
            FieldKind::Id { short } => FieldKind::Id { short: *short },
            FieldKind::Date => FieldKind::Date,
            FieldKind::Untrusted { max_tokens } => FieldKind::Untrusted {
                max_tokens: *max_tokens,
            },
        }
    }
}

/// A piece of a prose template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[serde(bound(
    serialize = "S::Str: Serialize",
    deserialize = "S::Str: Deserialize<'de>"
))]
pub enum Segment<S: Storage = Static> {
    /// Literal text.
    Text(S::Str),
    /// The output field with this index.
    Field(usize),
}

/// The rank key: which output field, which order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankInfo {
    /// Index into [`Projection::fields`].
    pub field: usize,
    /// Ascending or descending.
    pub order: Order,
    /// How a field through `[]` makes one key of its values (the field itself shows them
    /// all): the order's phrase names it.
    pub fold: Option<crate::fields::rank::Fold>,
}

impl<S: Storage> Projection<S> {
    /// The fields this view leaves out, by the names the API gives them: the record's own
    /// skipped fields, then those of each nested record type as `field.name`.
    ///
    /// ```
    /// use toolshape::ToolResult;
    ///
    /// #[derive(ToolResult)]
    /// struct User {
    ///     #[shape(show)] login: String,
    ///     #[shape(skip)] node_id: String,
    /// }
    ///
    /// #[derive(ToolResult)]
    /// struct Issue {
    ///     #[shape(id)] number: u64,
    ///     #[shape(nested, rename = "author")] user: User,
    ///     #[shape(skip)] url: String,
    /// }
    ///
    /// assert_eq!(Issue::PROJECTION.skipped_names(), ["url", "author.node_id"]);
    /// ```
    pub fn skipped_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .skipped
            .as_ref()
            .iter()
            .map(|s| s.as_ref().to_owned())
            .collect();
        for nested in self.nested.as_ref() {
            names.extend(
                nested
                    .projection
                    .skipped_names()
                    .into_iter()
                    .map(|name| format!("{}.{name}", nested.field)),
            );
        }
        names
    }

    /// Output field names, in order.
    pub fn output_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.fields.as_ref().iter().map(|f| f.name.as_ref())
    }

    /// The index of the output field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields
            .as_ref()
            .iter()
            .position(|f| f.name.as_ref() == name)
    }

    /// The rank field and order.
    pub fn rank_field(&self) -> Option<(&Field<S>, Order)> {
        let rank = self.rank?;
        Some((self.fields.as_ref().get(rank.field)?, rank.order))
    }

    /// The untrusted fields and their caps.
    pub fn untrusted_fields(&self) -> impl Iterator<Item = (&Field<S>, Option<u32>)> + '_ {
        self.fields.as_ref().iter().filter_map(|f| match f.kind {
            FieldKind::Untrusted { max_tokens } => Some((f, max_tokens)),
            _ => None,
        })
    }

    /// The names of the untrusted fields.
    pub(crate) fn untrusted_names(&self) -> Vec<&str> {
        self.untrusted_fields()
            .map(|(f, _)| f.name.as_ref())
            .collect()
    }

    /// Where outsiders' text is in a record: the untrusted fields' names, then those of each
    /// nested record type as `field.name` (what a JSON envelope's `untrusted` key lists).
    pub(crate) fn untrusted_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .untrusted_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for nested in self.nested.as_ref() {
            paths.extend(
                nested
                    .projection
                    .untrusted_paths()
                    .into_iter()
                    .map(|name| format!("{}.{name}", nested.field)),
            );
        }
        paths
    }

    /// Whether any field is untrusted.
    pub(crate) fn has_untrusted(&self) -> bool {
        self.untrusted_fields().next().is_some()
    }

    /// Indices of the date fields.
    pub(crate) fn date_fields(&self) -> impl Iterator<Item = usize> + '_ {
        self.fields
            .as_ref()
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f.kind, FieldKind::Date))
            .map(|(i, _)| i)
    }

    /// How the rank order reads in a sentence: "most recent last update first".
    ///
    /// A field through `[]` ranked by a fold of its values (`rank(desc, sum)`) shows every
    /// value, so the phrase names the fold: "by the sum of restarts, highest first".
    pub fn order_phrase(&self) -> Option<String> {
        use crate::fields::rank::Fold;
        let (field, order) = self.rank_field()?;
        let name = field.name.as_ref().replace('_', " ");
        let date = matches!(field.kind, FieldKind::Date);
        let fold = self.rank.and_then(|r| r.fold);
        // A count is a number, whatever it counts.
        let date = date && fold != Some(Fold::Count);
        let direction = match (date, order) {
            (true, Order::Desc) => "most recent",
            (true, Order::Asc) => "oldest",
            (false, Order::Desc) => "highest",
            (false, Order::Asc) => "lowest",
        };
        Some(match fold {
            None => format!("{direction} {name} first"),
            Some(fold) => {
                let of = match (fold, date) {
                    (Fold::Sum, _) => "sum",
                    (Fold::Count, _) => "count",
                    (Fold::Max, true) => "latest",
                    (Fold::Max, false) => "largest",
                    (Fold::Min, true) => "earliest",
                    (Fold::Min, false) => "smallest",
                };
                format!("by the {of} of {name}, {direction} first")
            }
        })
    }

    /// The same description with its text on the heap, as a stored result keeps it.
    pub(crate) fn to_owned_record(&self) -> Projection<Owned> {
        Projection {
            name: self.name.as_ref().to_owned(),
            plural: self.plural.as_ref().to_owned(),
            fields: self
                .fields
                .as_ref()
                .iter()
                .map(|f| Field {
                    name: f.name.as_ref().to_owned(),
                    source: f.source.as_ref().to_owned(),
                    kind: f.kind.to_owned_kind(),
                    absent: f.absent.as_ref().map(|a| a.as_ref().to_owned()),
                })
                .collect(),
            skipped: self.skipped_names(),
            prose: self.prose.as_ref().map(|segments| {
                segments
                    .as_ref()
                    .iter()
                    .map(|s| match s {
                        Segment::Text(t) => Segment::Text(t.as_ref().to_owned()),
                        Segment::Field(i) => Segment::Field(*i),
                    })
                    .collect()
            }),
            rank: self.rank,
            id: self.id,
            nested: Vec::new(),
        }
    }
}

impl Projection<Owned> {
    /// A description with no fields.
    pub(crate) fn named(name: String, plural: String) -> Self {
        Projection {
            name,
            plural,
            fields: Vec::new(),
            skipped: Vec::new(),
            prose: None,
            rank: None,
            id: None,
            nested: Vec::new(),
        }
    }

    /// The description of a slice that shows only the fields `keep` accepts: the others are
    /// added to `skipped` after `left_out`; the prose template stays when every field it
    /// names is kept. The slice has no rank key (its order is the query's).
    pub(crate) fn select(&self, keep: impl Fn(&str) -> bool, left_out: &[String]) -> Self {
        let kept: Vec<usize> = (0..self.fields.len())
            .filter(|&i| keep(&self.fields[i].name))
            .collect();
        let prose = self.prose.as_ref().and_then(|template| {
            template
                .iter()
                .map(|segment| match segment {
                    Segment::Text(t) => Some(Segment::Text(t.clone())),
                    Segment::Field(i) => kept.iter().position(|k| k == i).map(Segment::Field),
                })
                .collect::<Option<Vec<_>>>()
        });
        let fields: Vec<Field<Owned>> = kept.iter().map(|&i| self.fields[i].clone()).collect();
        let mut skipped = self.skipped.clone();
        skipped.extend(left_out.iter().cloned());
        Projection {
            name: self.name.clone(),
            plural: self.plural.clone(),
            id: fields.iter().position(|f| f.kind.role() == FieldRole::Id),
            fields,
            skipped,
            prose,
            rank: None,
            nested: Vec::new(),
        }
    }
}

/// A reference to one output field of a record type, from `Record::FIELDS`: naming a field
/// that does not exist is a compile error.
///
/// ```
/// use toolshape::{ToolResult, aggregate::{Aggregate}};
///
/// #[derive(ToolResult)]
/// struct Issue {
///     #[shape(show)]
///     labels: Vec<String>,
///     #[shape(date, rename = "opened")]
///     created_at: String,
/// }
///
/// let health = Aggregate::new().recent(Issue::FIELDS.opened, 30).top(Issue::FIELDS.labels, 3);
/// assert_eq!(Issue::FIELDS.opened.name(), "opened");
/// # let _ = health;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldRef(&'static str);

impl FieldRef {
    /// A reference to the output field `name` (generated code calls this).
    pub const fn new(name: &'static str) -> FieldRef {
        FieldRef(name)
    }

    /// The output name.
    pub const fn name(self) -> &'static str {
        self.0
    }
}

// ---------------------------------------------------------------------------------------------
// The wire form of a field

impl<S: Storage> Serialize for Field<S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let name = self.name.as_ref();
        let source = self.source.as_ref();
        let resolver = match &self.kind {
            FieldKind::Resolve { resolver } => Some(resolver.as_ref()),
            _ => None,
        };
        let short = matches!(self.kind, FieldKind::Id { short: true });
        let absent = self.absent.as_ref().map(AsRef::as_ref);
        let len = 3
            + usize::from(source != name)
            + usize::from(resolver.is_some())
            + usize::from(short)
            + usize::from(absent.is_some());
        let mut map = s.serialize_map(Some(len))?;
        map.serialize_entry("name", name)?;
        map.serialize_entry("kind", &self.kind.role())?;
        map.serialize_entry("max_tokens", &self.kind.max_tokens())?;
        if source != name {
            map.serialize_entry("source", source)?;
        }
        if let Some(resolver) = resolver {
            map.serialize_entry("resolver", resolver)?;
        }
        if short {
            map.serialize_entry("short", &true)?;
        }
        if let Some(absent) = absent {
            map.serialize_entry("absent", absent)?;
        }
        map.end()
    }
}

#[derive(Deserialize)]
struct FieldWire {
    name: String,
    kind: FieldRole,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    resolver: String,
    #[serde(default)]
    short: bool,
    #[serde(default)]
    absent: Option<String>,
}

impl<'de> Deserialize<'de> for Field<Owned> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = FieldWire::deserialize(d)?;
        let kind = match w.kind {
            FieldRole::Show => FieldKind::Show,
            FieldRole::Legend => FieldKind::Legend,
            FieldRole::Resolve => FieldKind::Resolve {
                resolver: w.resolver,
            },
            FieldRole::Id => FieldKind::Id { short: w.short },
            FieldRole::Date => FieldKind::Date,
            FieldRole::Untrusted => FieldKind::Untrusted {
                max_tokens: w.max_tokens,
            },
        };
        Ok(Field {
            source: w.source.unwrap_or_else(|| w.name.clone()),
            name: w.name,
            kind,
            absent: w.absent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order's phrase for each kind of rank: a plain field or a date, and a fold of
    /// either (a count is a number whatever it counts), in each direction.
    #[test]
    fn the_order_phrase_names_the_fold_a_page_is_ranked_by() {
        use crate::fields::rank::Fold;
        let phrase = |kind: FieldKind<Static>, order: Order, fold: Option<Fold>| {
            let fields: &'static [Field] = Box::leak(Box::new([Field {
                name: "restart_count",
                source: "restarts",
                kind,
                absent: None,
            }]));
            let p: Projection = Projection {
                fields,
                rank: Some(RankInfo {
                    field: 0,
                    order,
                    fold,
                }),
                ..TICKET
            };
            p.order_phrase().unwrap()
        };
        let (show, date) = (|| FieldKind::Show, || FieldKind::Date);
        let cases = [
            (show(), Order::Desc, None, "highest restart count first"),
            (show(), Order::Asc, None, "lowest restart count first"),
            (date(), Order::Desc, None, "most recent restart count first"),
            (date(), Order::Asc, None, "oldest restart count first"),
            (
                show(),
                Order::Desc,
                Some(Fold::Sum),
                "by the sum of restart count, highest first",
            ),
            (
                show(),
                Order::Asc,
                Some(Fold::Max),
                "by the largest of restart count, lowest first",
            ),
            (
                show(),
                Order::Desc,
                Some(Fold::Min),
                "by the smallest of restart count, highest first",
            ),
            (
                date(),
                Order::Desc,
                Some(Fold::Max),
                "by the latest of restart count, most recent first",
            ),
            (
                date(),
                Order::Asc,
                Some(Fold::Min),
                "by the earliest of restart count, oldest first",
            ),
            (
                date(),
                Order::Desc,
                Some(Fold::Count),
                "by the count of restart count, highest first",
            ),
            (
                show(),
                Order::Asc,
                Some(Fold::Count),
                "by the count of restart count, lowest first",
            ),
        ];
        for (kind, order, fold, want) in cases {
            assert_eq!(phrase(kind, order, fold), want);
        }
        assert_eq!(TICKET.order_phrase(), None);
    }

    const TICKET: Projection = Projection {
        name: "ticket",
        plural: "tickets",
        fields: &[
            Field {
                name: "id",
                source: "id",
                kind: FieldKind::Id { short: true },
                absent: None,
            },
            Field {
                name: "assignee",
                source: "assignee_id",
                kind: FieldKind::Resolve { resolver: "users" },
                absent: None,
            },
            Field {
                name: "subject",
                source: "subject",
                kind: FieldKind::Untrusted {
                    max_tokens: Some(40),
                },
                absent: None,
            },
        ],
        skipped: &["sla_due_at"],
        prose: Some(&[Segment::Field(0), Segment::Text(": "), Segment::Field(2)]),
        rank: None,
        id: Some(0),
        nested: &[],
    };

    #[test]
    fn a_field_keeps_the_old_keys_first_and_reads_back_whole() {
        let json = serde_json::to_string(&TICKET.fields).unwrap();
        assert_eq!(
            json,
            r#"[{"name":"id","kind":"id","max_tokens":null,"short":true},{"name":"assignee","kind":"resolve","max_tokens":null,"source":"assignee_id","resolver":"users"},{"name":"subject","kind":"untrusted","max_tokens":40}]"#
        );
        let back: Vec<Field<Owned>> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, TICKET.to_owned_record().fields);
    }

    #[test]
    fn an_absence_word_is_stored_and_read_back() {
        let field = Field::<Static> {
            name: "assignee",
            source: "assignee_id",
            kind: FieldKind::Show,
            absent: Some("unassigned"),
        };
        let json = serde_json::to_string(&field).unwrap();
        assert_eq!(
            json,
            r#"{"name":"assignee","kind":"show","max_tokens":null,"source":"assignee_id","absent":"unassigned"}"#
        );
        let back: Field<Owned> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.absent.as_deref(), Some("unassigned"));
    }

    #[test]
    fn a_field_stored_before_the_optional_keys_reads_back() {
        let old = r#"[{"name":"assignee","kind":"resolve","max_tokens":null},{"name":"id","kind":"id","max_tokens":null}]"#;
        let back: Vec<Field<Owned>> = serde_json::from_str(old).unwrap();
        assert_eq!(back[0].source, "assignee");
        assert_eq!(
            back[0].kind,
            FieldKind::Resolve {
                resolver: String::new()
            }
        );
        assert_eq!(back[1].kind, FieldKind::Id { short: false });
    }

    #[test]
    fn a_selection_keeps_the_template_only_when_it_names_kept_fields() {
        let owned = TICKET.to_owned_record();
        let both = owned.select(|name| name != "assignee", &["assignee".to_owned()]);
        assert_eq!(both.output_names().collect::<Vec<_>>(), ["id", "subject"]);
        assert_eq!(
            both.prose,
            Some(vec![
                Segment::Field(0),
                Segment::Text(": ".into()),
                Segment::Field(1)
            ])
        );
        assert_eq!(both.skipped, ["sla_due_at", "assignee"]);
        let no_subject = owned.select(|name| name == "id", &[]);
        assert_eq!(no_subject.prose, None);
        assert_eq!(no_subject.id, Some(0));
    }
}
