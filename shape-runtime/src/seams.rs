//! Names this repository's tests, benches and fuzz targets reach that are not the crate's
//! API: feature `test-seams` only, no stability promise. Each is at home in the module named
//! here; an application never needs one (issue 47: a small face).

/// Aggregation's internals: the field catalogue and what was counted.
pub mod aggregate {
    pub use crate::aggregate::catalogue::{FieldMeta, Row, ValueType};
    pub use crate::aggregate::result::{
        AggregateResult, CountBy, Others, RecentResult, Stats, TopValues, percent,
    };
    pub use crate::aggregate::spec::ValidAggregate;
}

/// The client table behind [`clients::reader`](crate::clients::reader).
pub mod clients {
    pub use crate::budget::clients::{KNOWN_CLIENTS, KnownClient, known};
}

/// A configuration's checked records, and their check against a tool's schema.
pub mod config {
    pub use crate::config::records::check_schema;
    pub use crate::configured::spec::{JsonPath, Step};
    pub use crate::fields::date::DayOf;
}

/// The cursor's wire and held forms.
pub mod cursor {
    pub use crate::cursor::codec::HELD_CURSOR_CHARS;
    pub use crate::cursor::held::HELD_TOKEN_LEN;
    pub use crate::cursor::keys::MIN_KEY_LEN;
    pub use crate::cursor::keyset::after_cursor;
    pub use crate::cursor::position::{Continuation, CursorForm};
    pub use crate::cursor::wire::MAX_UPSTREAM_BYTES;
}

/// Field plumbing the derive's generated code reaches through `__private`.
pub mod fields {
    pub use crate::fields::date::DateValue;
    pub use crate::fields::recorded::NOT_RECORDED;
}

/// A handle store's clock and a stored result's parts.
pub mod handle {
    pub use crate::handle::id::{HANDLE_BYTES, OPEN_RESULT};
    pub use crate::handle::memory::{Clock, ManualClock, SystemClock};
    pub use crate::handle::open_query::ValidQuery;
    pub use crate::handle::store::{StoredField, StoredSegment};
}

/// The harness's keys and limits.
#[cfg(feature = "rmcp")]
pub mod mcp {
    pub use crate::mcp::harness::{CURSOR_ARGUMENT, DEFAULT_MAX_TOKENS, SHAPED_META_KEY};
    pub use crate::mcp::lines::MAX_DEPTH;
    pub use crate::mcp::listing::{
        CHARS_PER_TOKEN_CEILING, MAX_RESULT_SIZE_KEY, size_hint, tools_for_profile, with_size_hint,
    };
}

/// The one record description the derive and configuration build.
pub mod record {
    pub use crate::record::{
        Field, FieldKind, FieldRef, FieldRole, NestedInfo, Owned, Projection, RankInfo, Segment,
        Static, Storage,
    };
}

/// The tokenizer the default is compared with.
#[cfg(feature = "bpe-openai")]
pub mod tokens {
    pub use crate::budget::bpe_openai::BpeOpenai;
}

/// The untrusted-text steps the page pipeline runs, one by one.
pub mod untrusted {
    pub use crate::untrusted::bound::{attacker_bound, record_cap};
    pub use crate::untrusted::links::apply_url_policy;
    pub use crate::untrusted::neutralise::neutralize;
    pub use crate::untrusted::sanitise::sanitize;
}
