//! Nested records: a field whose type derives `ToolResult` itself is shown through that
//! type's projection (`#[shape(nested)]`), so the decisions made on the nested type (every
//! field shown or skipped, untrusted text capped and marked, codes expanded) hold wherever it
//! appears, and its skipped fields are named in `omitted.fields` as `field.name`.

use crate::fields::view::{CallEnv, Cx};
use crate::record::Projection;
use crate::record::tool_result::ToolResult;
use crate::text::prose::Fallback;
use crate::text::{TextMode, TextSerializer};
use schemars::{Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

/// A field type shown through a nested record type's projection: a `ToolResult` type with no
/// resolvers, or an `Option`, `Vec` or slice of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a record type `nested` can show",
    label = "`nested` needs a type that derives `ToolResult` (or an Option or Vec of one)",
    note = "add #[derive(ToolResult)] to the nested type and decide each of its fields; \
            a nested type cannot use `resolve` (resolve on the outer record instead); \
            for a type you do not own, pick its fields with `from = field.path`"
)]
pub trait NestedField {
    /// The nested record type's projection.
    const PROJECTION: &'static Projection;

    /// Whether the field holds a list of records (`Vec`, slice), as many as the data has;
    /// `false` for at most one (the record itself, an `Option` of one). A list has no element
    /// limit, so the caps of its records' untrusted fields add up to no fixed figure (see
    /// [`record_cap`](crate::untrusted::bound::record_cap)).
    const LIST: bool;

    /// Writes the value through the nested projection.
    fn serialize_nested<S: Serializer>(&self, env: &CallEnv<'_>, s: S) -> Result<S::Ok, S::Error>;

    /// The JSON Schema of what [`serialize_nested`](NestedField::serialize_nested) writes.
    fn nested_schema(generator: &mut SchemaGenerator) -> Schema;
}

impl<T: ToolResult<Needs = ()>> NestedField for T {
    const PROJECTION: &'static Projection = T::PROJECTION;
    const LIST: bool = false;

    fn serialize_nested<S: Serializer>(&self, env: &CallEnv<'_>, s: S) -> Result<S::Ok, S::Error> {
        let cx = Cx::<()>::new(&(), env);
        if !env.writing_words() {
            return self.serialize_record(&cx, s);
        }
        // In prose and tables: the nested record's own prose line, or `name value` pairs, with
        // its absence words; escaped once, by the serializer the line is written to.
        let projection = T::PROJECTION;
        let mut line = String::new();
        let field = |index: usize, line: &mut String| {
            let absent = projection.fields.get(index).and_then(|f| f.absent);
            let words = TextSerializer::new(line, TextMode::Raw).absent(absent);
            self.serialize_field(index, &cx, words)
                .map_err(serde::ser::Error::custom)
        };
        crate::text::prose::fill(
            projection,
            Fallback::Inline,
            &mut line,
            |line, text| line.push_str(text),
            field,
        )?;
        s.serialize_str(&line)
    }

    fn nested_schema(generator: &mut SchemaGenerator) -> Schema {
        T::record_schema(generator)
    }
}

impl<T: NestedField> NestedField for Option<T> {
    const PROJECTION: &'static Projection = T::PROJECTION;
    const LIST: bool = T::LIST;

    fn serialize_nested<S: Serializer>(&self, env: &CallEnv<'_>, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(value) => value.serialize_nested(env, s),
            None => s.serialize_none(),
        }
    }

    fn nested_schema(generator: &mut SchemaGenerator) -> Schema {
        let inner = T::nested_schema(generator);
        json_schema!({ "anyOf": [inner.to_value(), { "type": "null" }] })
    }
}

impl<T: NestedField> NestedField for Vec<T> {
    const PROJECTION: &'static Projection = T::PROJECTION;
    const LIST: bool = true;

    fn serialize_nested<S: Serializer>(&self, env: &CallEnv<'_>, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize_nested(env, s)
    }

    fn nested_schema(generator: &mut SchemaGenerator) -> Schema {
        <[T]>::nested_schema(generator)
    }
}

impl<T: NestedField> NestedField for [T] {
    const PROJECTION: &'static Projection = T::PROJECTION;
    const LIST: bool = true;

    fn serialize_nested<S: Serializer>(&self, env: &CallEnv<'_>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|value| Nested::new(value, env)))
    }

    fn nested_schema(generator: &mut SchemaGenerator) -> Schema {
        let inner = T::nested_schema(generator);
        json_schema!({ "type": "array", "items": inner.to_value() })
    }
}

/// A nested field's view: the value written through its own projection.
pub struct Nested<'a, T: ?Sized> {
    value: &'a T,
    /// The output field it is written under, for the paths of values inside it.
    field: Option<&'static str>,
    env: &'a CallEnv<'a>,
}

impl<'a, T: ?Sized + NestedField> Nested<'a, T> {
    /// Wraps a value (an item of a nested list).
    pub fn new(value: &'a T, env: &'a CallEnv<'a>) -> Self {
        Nested {
            value,
            field: None,
            env,
        }
    }

    /// Wraps the nested field `field`.
    pub fn named(value: &'a T, field: &'static str, env: &'a CallEnv<'a>) -> Self {
        Nested {
            value,
            field: Some(field),
            env,
        }
    }
}

impl<T: NestedField + ?Sized> Serialize for Nested<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.field {
            Some(field) => self
                .env
                .within(field, || self.value.serialize_nested(self.env, s)),
            None => self.value.serialize_nested(self.env, s),
        }
    }
}
