//! Reading records out of a raw JSON result in one pass, keeping only what a projection
//! reads: the keys its paths name (and everything below a value shown whole), text borrowed
//! from the input where it has no escapes. Nothing else is built: no `serde_json::Value` of
//! the payload, no string for a key no output reads.

pub use crate::page::ReadError;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use std::borrow::Cow;
use std::fmt;

/// A JSON value with only the parts a projection reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pruned<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it (`u64`, `i64` or `f64`).
    Number(Number),
    /// Text, borrowed from the input when it has no escapes.
    Str(Cow<'a, str>),
    /// A list.
    List(Vec<Pruned<'a>>),
    /// An object: the keys kept, in the input's order.
    Object(Vec<(Cow<'a, str>, Pruned<'a>)>),
}

impl Pruned<'_> {
    /// The value under `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Pruned::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl serde::Serialize for Pruned<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Pruned::Null => s.serialize_none(),
            Pruned::Bool(b) => s.serialize_bool(*b),
            Pruned::Number(n) => n.serialize(s),
            Pruned::Str(text) => s.serialize_str(text),
            Pruned::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Pruned::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
        }
    }
}

/// Which keys of a value are read: every key (a value shown whole), or the keys named, each
/// with what is read below it. A list is read item by item with the same `Want`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Want {
    /// Every key, whole.
    pub all: bool,
    /// The keys read, and what is read below each.
    pub keys: Vec<(String, Want)>,
    /// A nested record's: its keys that no output reads are named as left out, as
    /// `prefix.key`.
    pub unread_as: Option<String>,
}

impl Want {
    /// Marks the path `keys` as read, whole below its end when `whole`; returns what is
    /// read below its end.
    pub(crate) fn add(&mut self, keys: &[&str], whole: bool) -> &mut Want {
        let mut want = self;
        for key in keys {
            want = want.entry(key);
        }
        want.all |= whole;
        want
    }

    /// Adds everything `other` reads.
    pub(crate) fn merge(&mut self, other: &Want) {
        self.all |= other.all;
        if self.unread_as.is_none() {
            self.unread_as.clone_from(&other.unread_as);
        }
        for (key, below) in &other.keys {
            self.entry(key).merge(below);
        }
    }

    /// A nested record's `Want`, naming its unread keys under `field` (and those of records
    /// nested in it under `field.inner`).
    pub(crate) fn nested_under(mut self, field: &str) -> Want {
        fn prefix(want: &mut Want, field: &str) {
            if let Some(inner) = &mut want.unread_as {
                *inner = format!("{field}.{inner}");
            }
            for (_, below) in &mut want.keys {
                prefix(below, field);
            }
        }
        prefix(&mut self, field);
        self.unread_as = Some(field.to_owned());
        self
    }

    fn entry(&mut self, key: &str) -> &mut Want {
        let index = match self.keys.iter().position(|(k, _)| k == key) {
            Some(index) => index,
            None => {
                self.keys.push((key.to_owned(), Want::default()));
                self.keys.len() - 1
            }
        };
        &mut self.keys[index].1
    }

    fn child(&self, key: &str) -> Option<&Want> {
        if self.all {
            return Some(&ALL);
        }
        self.keys.iter().find(|(k, _)| k == key).map(|(_, w)| w)
    }
}

static ALL: Want = Want {
    all: true,
    keys: Vec::new(),
    unread_as: None,
};

/// A value beside the records: a number or `true`/`false` as the summary states it (`2,417`,
/// `-3`, `0.5`, `false`); anything else (text, a list, an object, `null`) read past, unkept.
struct Scalar(Option<String>);

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Scalar, E> {
                Ok(Scalar(Some(b.to_string())))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar, E> {
                Ok(Scalar(Some(crate::text::thousands(n))))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar, E> {
                Ok(Scalar(Some(n.to_string())))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Scalar, E> {
                Ok(Scalar(Some(
                    Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string()),
                )))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Scalar, E> {
                Ok(Scalar(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
        }
        d.deserialize_any(Each)
    }
}

/// One record as read: the parts of it the projection reads.
pub(crate) type RawRecord<'a> = Pruned<'a>;

/// The records of one result, and the keys they have that no output reads.
#[derive(Debug, Default)]
pub(crate) struct ReadRecords<'a> {
    /// The records, in the result's order.
    pub records: Vec<RawRecord<'a>>,
    /// The keys records have that no output reads, in the order first met.
    pub unread: Vec<String>,
    /// The keys nested records have that no output reads, as `field.key`, in the order
    /// first met.
    pub nested_unread: Vec<String>,
    /// The result's own keys beside the path to the records (`total`, `data.meta`), in
    /// order.
    pub outer: Vec<String>,
    /// Of `outer`, those whose value is a number or `true`/`false` (a search's
    /// `total_count`), each with its value as the summary states it (`2,417`).
    pub outer_values: Vec<(String, String)>,
    /// Whether the records were one object (a single record), not a list.
    pub single: bool,
}

/// Where a projection's records are, and whether they are a list or one record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Records<'s> {
    /// The keys leading to them.
    pub at: &'s [String],
    /// One record (an object), not a list of them.
    pub one: bool,
}

/// Reads the records out of `raw`, a JSON text holding exactly one value (as
/// `serde_json::from_str` reads it: anything but whitespace after it is an error), keeping
/// what `want` reads of each.
pub(crate) fn read_text<'de>(
    raw: &'de str,
    records: Records<'_>,
    want: &Want,
) -> Result<ReadRecords<'de>, ReadError> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let (out, found) = walk(&mut de, records, want)?;
    de.end().map_err(not_json)?;
    found.into_result(out, records)
}

/// Reads the records out of `input`, a value (any deserializer) keeping what `want` reads
/// of each. A `serde_json::Value` cannot hold a key twice (it keeps the last of a text's),
/// so only the text reader ([`read_text`]) sees one.
pub(crate) fn read<'de, D: Deserializer<'de>>(
    input: D,
    records: Records<'_>,
    want: &Want,
) -> Result<ReadRecords<'de>, ReadError> {
    let (out, found) = walk(input, records, want)?;
    found.into_result(out, records)
}

fn not_json(e: impl fmt::Display) -> ReadError {
    ReadError::NotJson(crate::untrusted::echo::clean(&e.to_string()))
}

fn walk<'de, D: Deserializer<'de>>(
    input: D,
    records: Records<'_>,
    want: &Want,
) -> Result<(ReadRecords<'de>, Found), ReadError> {
    let mut out = ReadRecords::default();
    let mut found = Found::Records;
    let mut problem = None;
    let seed = AtSeed {
        records,
        depth: 0,
        want,
        out: &mut out,
        found: &mut found,
        problem: &mut problem,
    };
    match seed.deserialize(input) {
        Ok(()) => Ok((out, found)),
        // A record that could not be read as written stopped the reading: that is the error,
        // not the deserializer's note of the stop.
        Err(e) => Err(problem.unwrap_or_else(|| not_json(e))),
    }
}

/// What the walk to the records found.
#[derive(Debug)]
enum Found {
    /// The records.
    Records,
    /// The key `at[depth]` is not there; the keys that are.
    Broke { depth: usize, has: Vec<String> },
    /// A value that holds no records (its kind, and its keys when it is an object).
    Other { kind: String, has: Vec<String> },
}

impl Found {
    fn into_result<'a>(
        self,
        out: ReadRecords<'a>,
        records: Records<'_>,
    ) -> Result<ReadRecords<'a>, ReadError> {
        match self {
            Found::Records => Ok(out),
            Found::Broke { depth, has } => Err(ReadError::NoRecordsAt {
                path: records.at[..=depth].join("."),
                has,
            }),
            Found::Other { kind, has } => Err(ReadError::NotRecords {
                path: records.at.join("."),
                kind,
                one: records.one,
                has,
            }),
        }
    }
}

/// Stops the reading at a record that cannot be read as written: `problem` is kept for the
/// caller, the deserializer's error only unwinds.
fn stop<E: de::Error>(problem: &mut Option<ReadError>, error: ReadError) -> E {
    let e = E::custom(&error);
    *problem = Some(error);
    e
}

/// Walks the keys of `at` from `depth`, then reads the records there.
struct AtSeed<'s, 'a> {
    records: Records<'s>,
    depth: usize,
    want: &'s Want,
    out: &'s mut ReadRecords<'a>,
    found: &'s mut Found,
    problem: &'s mut Option<ReadError>,
}

impl<'de> DeserializeSeed<'de> for AtSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AtSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let at = self.records.at;
        let Some(wanted) = at.get(self.depth) else {
            if !self.records.one {
                // An object where a list was configured (an error object, `{"message": …}`):
                // no records, and its keys say what it is.
                let mut has = Vec::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    has.push(key.0.into_owned());
                    map.next_value::<IgnoredAny>()?;
                }
                *self.found = Found::Other {
                    kind: "an object".to_owned(),
                    has,
                };
                return Ok(());
            }
            let seed = RecordSeed {
                want: self.want,
                unread: &mut self.out.unread,
                nested_unread: &mut self.out.nested_unread,
                problem: &mut *self.problem,
                path: at,
                item: None,
            };
            let record = seed.visit_map(map)?;
            // An object holding none of the keys the record reads is no such record (an
            // error object, `{"message": "Not Found"}`), as serde reads none into a type
            // whose fields it lacks: never a record of nothing but "not recorded".
            if matches!(&record, Pruned::Object(entries) if entries.is_empty()) {
                *self.found = Found::Other {
                    kind: "an object with none of the keys the record reads".to_owned(),
                    has: std::mem::take(&mut self.out.unread),
                };
                return Ok(());
            }
            self.out.records.push(record);
            self.out.single = true;
            return Ok(());
        };
        let mut has = Vec::new();
        let mut seen = false;
        let prefix = at[..self.depth].join(".");
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if key.0 == *wanted {
                if seen {
                    return Err(stop(
                        self.problem,
                        ReadError::DuplicateKey {
                            path: prefix,
                            item: None,
                            key: wanted.clone(),
                        },
                    ));
                }
                seen = true;
                map.next_value_seed(AtSeed {
                    records: self.records,
                    depth: self.depth + 1,
                    want: self.want,
                    out: &mut *self.out,
                    found: &mut *self.found,
                    problem: &mut *self.problem,
                })?;
            } else {
                let name = if prefix.is_empty() {
                    key.0.to_string()
                } else {
                    format!("{prefix}.{}", key.0)
                };
                if let Scalar(Some(value)) = map.next_value::<Scalar>()? {
                    self.out.outer_values.push((name.clone(), value));
                }
                self.out.outer.push(name);
                has.push(key.0.into_owned());
            }
        }
        if !seen {
            *self.found = Found::Broke {
                depth: self.depth,
                has,
            };
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.depth < self.records.at.len() || self.records.one {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return self.other("a list");
        }
        let mut item = 0;
        loop {
            item += 1;
            let seed = RecordSeed {
                want: self.want,
                unread: &mut self.out.unread,
                nested_unread: &mut self.out.nested_unread,
                problem: &mut *self.problem,
                path: self.records.at,
                item: Some(item),
            };
            match seq.next_element_seed(seed)? {
                Some(record) => self.out.records.push(record),
                None => return Ok(()),
            }
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.other("null")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.other("null")
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.other("a boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.other("a number")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.other("a number")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.other("a number")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.other("text")
    }
}

impl AtSeed<'_, '_> {
    /// A value with no records: at the path's end, what it is; before it, the path breaks
    /// here (it goes through something that is not an object).
    fn other<E>(self, kind: &str) -> Result<(), E> {
        *self.found = if self.depth >= self.records.at.len() {
            Found::Other {
                kind: kind.to_owned(),
                has: Vec::new(),
            }
        } else {
            Found::Broke {
                depth: self.depth,
                has: Vec::new(),
            }
        };
        Ok(())
    }
}

/// A key, borrowed from the input when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowVisitor).map(Key)
    }
}

struct CowVisitor;

impl<'de> Visitor<'de> for CowVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// The keys kept of one object, to find one written twice: readers of JSON disagree on
/// which of two values counts (serde's derive rejects the object, a `Value` keeps the last),
/// so one stops the reading. A few keys are compared in place; past them (an object shown
/// whole), a set.
#[derive(Default)]
struct Keys(Option<std::collections::HashSet<String>>);

impl Keys {
    const IN_PLACE: usize = 16;

    /// Whether `key` is one of `entries`' (the keys kept so far).
    fn twice(&mut self, entries: &[(Cow<'_, str>, Pruned<'_>)], key: &str) -> bool {
        if entries.len() < Self::IN_PLACE {
            return entries.iter().any(|(k, _)| k == key);
        }
        let set = self
            .0
            .get_or_insert_with(|| entries.iter().map(|(k, _)| k.to_string()).collect());
        !set.insert(key.to_owned())
    }
}

/// Puts `key` in front of the key a duplicate was found at below it (`user.login`).
fn below(problem: &mut Option<ReadError>, key: &str) {
    if let Some(ReadError::DuplicateKey { key: inner, .. }) = problem {
        *inner = format!("{key}.{inner}");
    }
}

/// One record: its keys that no output reads are noted in `unread`.
struct RecordSeed<'s> {
    want: &'s Want,
    unread: &'s mut Vec<String>,
    nested_unread: &'s mut Vec<String>,
    problem: &'s mut Option<ReadError>,
    /// Where the records are, and which item of the list this is (`None`: one record).
    path: &'s [String],
    item: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = Pruned<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Pruned<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> RecordSeed<'_> {
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Pruned<'de>, A::Error> {
        let mut entries = Vec::new();
        let mut keys = Keys::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match self.want.child(&key.0) {
                Some(child) => {
                    if keys.twice(&entries, &key.0) {
                        return Err(stop(
                            self.problem,
                            ReadError::DuplicateKey {
                                path: self.path.join("."),
                                item: self.item,
                                key: key.0.into_owned(),
                            },
                        ));
                    }
                    let value = map.next_value_seed(PruneSeed {
                        want: child,
                        unread: &mut *self.nested_unread,
                        problem: &mut *self.problem,
                    });
                    match value {
                        Ok(value) => entries.push((key.0, value)),
                        Err(e) => {
                            below(self.problem, &key.0);
                            self.fill_in();
                            return Err(e);
                        }
                    }
                }
                None => {
                    if !self.unread.iter().any(|k| *k == key.0) {
                        self.unread.push(key.0.into_owned());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Pruned::Object(entries))
    }

    /// Names this record as where a problem found below it is.
    fn fill_in(&mut self) {
        if let Some(ReadError::DuplicateKey { path, item, .. }) = self.problem {
            *path = self.path.join(".");
            *item = self.item;
        }
    }

    /// Stops at an item of the list that is no record, as serde stops at a `null` in a
    /// `Vec` of structs: a record made of nothing would be counted among the records and
    /// read as lacking every key.
    fn not_a_record<E: de::Error>(self, kind: &str) -> Result<Pruned<'static>, E> {
        Err(stop(
            self.problem,
            ReadError::NotARecord {
                path: self.path.join("."),
                item: self.item.unwrap_or(1),
                kind: kind.to_owned(),
            },
        ))
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = Pruned<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a record")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pruned<'de>, A::Error> {
        RecordSeed::visit_map(self, map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Pruned<'de>, A::Error> {
        self.not_a_record("a list")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Pruned<'de>, E> {
        self.not_a_record("null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Pruned<'de>, E> {
        self.not_a_record("null")
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Pruned<'de>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Pruned<'de>, E> {
        self.not_a_record("a boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Pruned<'de>, E> {
        self.not_a_record("a number")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Pruned<'de>, E> {
        self.not_a_record("a number")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Pruned<'de>, E> {
        self.not_a_record("a number")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Pruned<'de>, E> {
        self.not_a_record("text")
    }
}

/// A value below a record, keeping what `want` reads, naming a nested record's unread keys
/// in `unread`.
struct PruneSeed<'s> {
    want: &'s Want,
    unread: &'s mut Vec<String>,
    problem: &'s mut Option<ReadError>,
}

impl<'de> DeserializeSeed<'de> for PruneSeed<'_> {
    type Value = Pruned<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Pruned<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PruneSeed<'_> {
    type Value = Pruned<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pruned<'de>, A::Error> {
        let mut entries = Vec::new();
        let mut keys = Keys::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match self.want.child(&key.0) {
                Some(child) => {
                    if keys.twice(&entries, &key.0) {
                        return Err(stop(
                            self.problem,
                            ReadError::DuplicateKey {
                                path: String::new(),
                                item: None,
                                key: key.0.into_owned(),
                            },
                        ));
                    }
                    let value = map.next_value_seed(PruneSeed {
                        want: child,
                        unread: &mut *self.unread,
                        problem: &mut *self.problem,
                    });
                    let value = value.inspect_err(|_| below(self.problem, &key.0))?;
                    entries.push((key.0, value));
                }
                None => {
                    if let Some(prefix) = &self.want.unread_as {
                        let name = format!("{prefix}.{}", key.0);
                        if !self.unread.contains(&name) {
                            self.unread.push(name);
                        }
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Pruned::Object(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pruned<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(PruneSeed {
            want: self.want,
            unread: &mut *self.unread,
            problem: &mut *self.problem,
        })? {
            items.push(item);
        }
        Ok(Pruned::List(items))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Pruned<'de>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Pruned<'de>, E> {
        // JSON has no NaN or infinity; a deserializer that hands one over gets null.
        Ok(Number::from_f64(v).map_or(Pruned::Null, Pruned::Number))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Pruned<'de>, E> {
        Ok(Pruned::Str(Cow::Owned(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(at: &[String]) -> Records<'_> {
        Records { at, one: false }
    }

    fn want(paths: &[(&[&str], bool)]) -> Want {
        let mut w = Want::default();
        for (keys, whole) in paths {
            w.add(keys, *whole);
        }
        w
    }

    #[test]
    fn only_the_keys_read_are_kept_and_the_rest_named() {
        let raw = r#"{"total_count": 2, "items": [
            {"number": 1, "title": "A", "user": {"login": "dana", "id": 7}, "node_id": "x"},
            {"number": 2, "title": "B\u00e9", "labels": [{"name": "bug", "color": "f00"}], "extra": null}
        ]}"#;
        let w = want(&[
            (&["number"], true),
            (&["title"], true),
            (&["user", "login"], true),
            (&["labels", "name"], true),
        ]);
        let read = read_text(raw, list(&["items".into()]), &w).unwrap();
        assert_eq!(read.records.len(), 2);
        assert_eq!(read.unread, ["node_id", "extra"]);
        let first = &read.records[0];
        assert_eq!(
            first.get("user"),
            Some(&Pruned::Object(vec![(
                "login".into(),
                Pruned::Str("dana".into())
            )]))
        );
        // Borrowed where the input has no escape, owned where it has one.
        assert!(matches!(
            first.get("title"),
            Some(Pruned::Str(Cow::Borrowed("A")))
        ));
        assert!(
            matches!(read.records[1].get("title"), Some(Pruned::Str(Cow::Owned(t))) if t == "Bé")
        );
        assert_eq!(
            serde_json::to_string(read.records[1].get("labels").unwrap()).unwrap(),
            r#"[{"name":"bug"}]"#
        );
    }

    #[test]
    fn a_nested_records_unread_keys_are_named_under_its_field() {
        let mut w = want(&[(&["number"], true)]);
        let mut reply = Want::default();
        reply.add(&["text"], true);
        let mut comment = Want::default();
        comment.add(&["body"], true);
        comment
            .add(&["reply"], false)
            .merge(&reply.nested_under("reply"));
        w.add(&["comments"], false)
            .merge(&comment.nested_under("comments"));
        let raw = r#"[{"number": 1, "title": "x", "comments": [
            {"body": "a", "id": 1, "reply": {"text": "b", "at": 2}},
            {"body": "c", "id": 2, "url": "u"}
        ]}]"#;
        let read = read_text(raw, list(&[]), &w).unwrap();
        assert_eq!(read.unread, ["title"]);
        assert_eq!(
            read.nested_unread,
            ["comments.id", "comments.reply.at", "comments.url"]
        );
    }

    #[test]
    fn the_path_to_the_records_is_followed_or_said_to_be_missing() {
        let w = want(&[(&["id"], true)]);
        let at = |path: &str| -> Vec<String> { path.split('.').map(str::to_owned).collect() };
        let raw = r#"{"data": {"issues": [{"id": 1}], "count": 1}, "meta": {}}"#;
        let ok = read_text(raw, list(&at("data.issues")), &w).unwrap();
        assert_eq!(ok.records.len(), 1);
        let err = read_text(raw, list(&at("data.items")), &w).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the result has no `data.items`; it has: issues, count"
        );
        let err = read_text(raw, list(&at("results")), &w).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the result has no `results`; it has: data, meta"
        );
        // One object is one record where one is configured, and no records where a list
        // is (an error object); a list is none where one record is; a number is neither.
        let one = read_text(r#"{"id": 3}"#, Records { at: &[], one: true }, &w).unwrap();
        assert!(one.single);
        assert_eq!(one.records.len(), 1);
        let err = read_text(
            r#"{"message": "Not Found", "status": "404"}"#,
            list(&[]),
            &w,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the result is an object, not a list of records; it has: message, status"
        );
        let err = read_text(r#"[{"id": 3}]"#, Records { at: &[], one: true }, &w).unwrap_err();
        assert_eq!(err.to_string(), "the result is a list, not one record");
        let err = read_text("42", list(&[]), &w).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the result is a number, not a list of records"
        );
        let err = read_text(r#"[{"id": 1},"#, list(&[]), &w).unwrap_err();
        assert!(
            err.to_string().starts_with("the result is not JSON"),
            "{err}"
        );
        // A value deserializes the same way.
        let value: serde_json::Value = serde_json::from_str(raw).unwrap();
        let from_value = read(&value, list(&at("data.issues")), &w).unwrap();
        assert_eq!(from_value.records, ok.records);
    }

    #[test]
    fn a_key_twice_in_a_value_shown_whole_is_found_past_the_keys_compared_in_place() {
        let w = want(&[(&["meta"], true)]);
        // Around `Keys::IN_PLACE` (16): the repeat is the object's `n + 1`th key, of the first.
        for n in [1, 15, 16, 17, 40] {
            let keys: Vec<String> = (0..n).map(|i| format!(r#""k{i}": {i}"#)).collect();
            let whole = format!(r#"[{{"meta": {{{}}}}}]"#, keys.join(", "));
            let ok = read_text(&whole, list(&[]), &w).unwrap();
            match ok.records[0].get("meta") {
                Some(Pruned::Object(entries)) => assert_eq!(entries.len(), n),
                other => panic!("{other:?}"),
            }
            let twice = format!(r#"[{{"meta": {{{}, "k0": 0}}}}]"#, keys.join(", "));
            let err = read_text(&twice, list(&[]), &w).unwrap_err();
            assert_eq!(
                err.to_string(),
                "item 1 of the result (counting from 1) has the key `meta.k0` twice; one value \
                 was expected",
                "{n}"
            );
            // The last key repeated, past the set's making.
            let last = format!(r#"[{{"meta": {{{}, "k{}": 0}}}}]"#, keys.join(", "), n - 1);
            assert!(read_text(&last, list(&[]), &w).is_err(), "{n}");
        }
    }
}
