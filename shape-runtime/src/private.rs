//! Paths the derive's generated code uses. Not public API: no stability promise.

pub use crate::fields::date::{DateField, EpochField, EpochUnit};
/// Bytes as decimal digits (cursors, handles, nonces), for tests and fuzz targets.
pub mod digits {
    pub use crate::text::digits::{decode, encode, encode_into, encoded_len};
}
pub use crate::fields::ids::{IdField, IdKey, IdText};
pub use crate::fields::rank::Fold;
pub use crate::fields::rank::{KeyValue, Order, RankKey};
pub use crate::fields::recorded::{AnyRecorded, IsRecorded, RecordedProbe, RecordedView};
pub use crate::page::envelope::left_out_fields;
pub use crate::record::NestedInfo;
pub use crate::record::call_env::{CallEnv, Channel, DateStyle};
pub use crate::record::nested::{Nested, NestedField};
pub use crate::record::path::{AnyValueLeaf, IdLeaf as IdValueLeaf, LeafOf, RankLeaf};
pub use crate::record::path::{
    Each, Opt, iter_is_empty, key_value_opt, leaf_type, may_be_absent, rank_cmp_opt,
};
pub use crate::record::path::{RankNumber, rank_count, rank_max, rank_min, rank_sum};
pub use crate::record::path::{through_items, through_option};
pub use crate::record::tool_result::ToolResult;
pub use crate::record::{Field, FieldRole, Owned, Segment, Static, Storage};
pub use crate::record::{FieldKind, FieldRef, Projection, RankInfo};
pub use crate::resolve::field::{AnyKeyLeaf, KeyLeaf};
/// One output field of a derived record type.
pub type FieldInfo = Field<Static>;
/// A piece of a derived record type's prose template.
pub type ProseSegment = Segment<Static>;
pub use crate::resolve::Resolver;
pub use crate::resolve::batch::Resolvers;
pub use crate::resolve::field::KeyField;
pub use crate::resolve::resolver::{KeySet, NameMap};
/// The schema of each kind of field.
pub mod schema {
    pub use crate::schema::fields::*;
    pub use schemars::Schema;
}
pub use crate::fields::view::UntrustedText;
pub use crate::fields::view::{Cx, Dated, EpochDated, Ident, Named, Shown, Untrusted};
pub use crate::fields::view::{MayBeEmpty, OrAbsent, is_empty_value};
pub use crate::schema::fields::{
    AnyLeaf, DateLeaf, EpochLeaf, IdLeaf, KeyProbe, Probe, ResolvedLeaf, Step, UntrustedLeaf,
    ViaJsonSchema, ViaSerde,
};
pub use crate::text::MayBeAbsent;
pub use crate::text::{TextMode, TextSerializer};
pub use crate::untrusted::echo::clean as echo_clean;
pub use core::cmp::Ordering;
pub use core::marker::PhantomData;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result;
/// rmcp, for `mcp::list_tools!`.
#[cfg(feature = "rmcp")]
pub use rmcp;
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
    env: &'a crate::record::call_env::CallEnv<'a>,
) -> crate::fields::legend::LegendOut<'a>
where
    L: crate::fields::legend::LegendSource + ?Sized,
    L::Code: crate::fields::legend::LegendCode,
    F: crate::fields::legend::LegendField<L::Code> + ?Sized,
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
