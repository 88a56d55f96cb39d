//! Paths the derive's generated code uses. Not public API: no stability promise.

pub use crate::date::{DateField, EpochField, EpochUnit};
/// Bytes as decimal digits (cursors, handles, nonces), for tests and fuzz targets.
pub mod digits {
    pub use crate::digits::{decode, encode, encode_into, encoded_len};
}
pub use crate::env::{CallEnv, Channel, DateStyle};
pub use crate::ids::{IdField, IdKey, IdText};
pub use crate::nested::{Nested, NestedField};
pub use crate::page::envelope::left_out_fields;
pub use crate::path::{AnyValueLeaf, IdLeaf as IdValueLeaf, LeafOf, RankLeaf};
pub use crate::path::{
    Each, Opt, iter_is_empty, key_value_opt, leaf_type, may_be_absent, rank_cmp_opt,
};
pub use crate::path::{RankNumber, rank_count, rank_max, rank_min, rank_sum};
pub use crate::path::{through_items, through_option};
pub use crate::project::ToolResult;
pub use crate::rank::Fold;
pub use crate::rank::{KeyValue, Order, RankKey};
pub use crate::record::NestedInfo;
pub use crate::record::{Field, FieldRole, Owned, Segment, Static, Storage};
pub use crate::record::{FieldKind, FieldRef, Projection, RankInfo};
pub use crate::recorded::{AnyRecorded, IsRecorded, RecordedProbe, RecordedView};
pub use crate::resolve::field::{AnyKeyLeaf, KeyLeaf};
/// One output field of a derived record type.
pub type FieldInfo = Field<Static>;
/// A piece of a derived record type's prose template.
pub type ProseSegment = Segment<Static>;
pub use crate::resolve::Resolver;
pub use crate::resolve::batch::Resolvers;
pub use crate::resolve::field::KeyField;
/// The schema of each kind of field.
pub mod schema {
    pub use crate::schema::fields::*;
    pub use schemars::Schema;
}
pub use crate::schema::fields::{
    AnyLeaf, DateLeaf, EpochLeaf, IdLeaf, KeyProbe, Probe, ResolvedLeaf, Step, UntrustedLeaf,
    ViaJsonSchema, ViaSerde,
};
pub use crate::text::MayBeAbsent;
pub use crate::text::{TextMode, TextSerializer};
pub use crate::untrusted::echo::clean as echo_clean;
pub use crate::view::UntrustedText;
pub use crate::view::{Cx, Dated, EpochDated, Ident, Named, Shown, Untrusted};
pub use crate::view::{MayBeEmpty, OrAbsent, is_empty_value};
pub use core::cmp::Ordering;
pub use core::marker::PhantomData;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result;
pub use schemars::JsonSchema;
pub use schemars::{Schema, SchemaGenerator};
pub use serde::ser::SerializeStruct;
pub use serde::{Serialize, Serializer};

/// The arm for a field index the record does not have.
pub fn no_such_field<S: Serializer>(index: usize, _serializer: S) -> Result<S::Ok, S::Error> {
    Err(serde::ser::Error::custom(format_args!(
        "no output field with index {index}"
    )))
}

/// A legend field's output; the bound is checked here, at the attribute.
pub fn coded<'a, L, F>(
    legend: &'a L,
    value: &F,
    field: &'static str,
    env: &'a crate::env::CallEnv<'a>,
) -> crate::legend::LegendOut<'a>
where
    L: crate::legend::LegendSource + ?Sized,
    L::Code: crate::legend::LegendCode,
    F: crate::legend::LegendField<L::Code> + ?Sized,
{
    value.coded(legend, field, env)
}

#[cfg(feature = "test-seams")]
/// `body` signed with `codec`'s current key as a cursor for `query`, whatever it holds: lets
/// tests and fuzz targets reach the decoder past the signature check with malformed bodies.
pub fn sign_cursor_body(
    codec: &crate::cursor::CursorCodec,
    body: &[u8],
    query: &crate::cursor::QueryHash,
) -> String {
    codec.sign_raw(body, query)
}
