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
    use crate::aggregate::{Aggregate, AggregateError};
    use crate::fields::date::Day;

    /// An aggregate checked and computed outside a page: what a page and `open_result` do
    /// with one, as methods for tests (`use toolshape::__seams::aggregate::Compute`).
    pub trait Compute {
        /// Checks every named field exists and fits its operation.
        fn validate(&self, fields: &[FieldMeta]) -> Result<ValidAggregate, AggregateError>;
        /// Validates against `fields`, then computes over `rows` with `today` as the
        /// reference day for `recent`.
        fn compute(
            &self,
            fields: &[FieldMeta],
            rows: &[Row],
            today: Day,
        ) -> Result<AggregateResult, AggregateError>;
    }

    impl Compute for Aggregate {
        fn validate(&self, fields: &[FieldMeta]) -> Result<ValidAggregate, AggregateError> {
            Aggregate::validate(self, fields)
        }

        fn compute(
            &self,
            fields: &[FieldMeta],
            rows: &[Row],
            today: Day,
        ) -> Result<AggregateResult, AggregateError> {
            Aggregate::compute(self, fields, rows, today)
        }
    }
}

/// The client table behind [`clients::reader`](crate::clients::reader).
pub mod clients {
    pub use crate::budget::clients::{KNOWN_CLIENTS, KnownClient, known};
}

/// A configuration's checked records, and their check against a tool's schema.
pub mod config {
    use crate::config::ShapeConfig;
    pub use crate::config::records::check_schema;
    use crate::configured::spec::ConfiguredRecords;

    /// The configured records of `tool` as the configuration checked them when it loaded.
    pub fn records<'c>(config: &'c ShapeConfig, tool: &str) -> Option<&'c ConfiguredRecords> {
        config.records(tool)
    }
    pub use crate::configured::spec::{JsonPath, Step};
}

/// The cursor's wire and held forms.
pub mod cursor {
    pub use crate::cursor::codec::HELD_CURSOR_CHARS;
    pub use crate::cursor::held::HELD_TOKEN_LEN;
    pub use crate::cursor::keys::MIN_KEY_LEN;
    pub use crate::cursor::keyset::after_cursor;
    pub use crate::cursor::position::Position;
    pub use crate::cursor::position::{Continuation, CursorForm};
    pub use crate::cursor::wire::MAX_UPSTREAM_BYTES;
    use crate::cursor::{CursorCodec, CursorError, QueryHash};

    /// A cursor for a position in a form chosen by hand, its length, and a cursor read back
    /// to its position: what a page's plan and a call's resume do, as methods for tests
    /// (`use toolshape::__seams::cursor::Wire`).
    pub trait Wire {
        /// A cursor for `position`, for `query`, in `form`.
        fn encode_position(
            &self,
            position: &Position,
            query: &QueryHash,
            form: CursorForm,
        ) -> String;
        /// The length of that cursor, without writing it.
        fn encoded_len(&self, position: &Position, form: CursorForm) -> usize;
        /// Reads a cursor presented with `query`, checking its signature and age.
        fn decode(&self, cursor: &str, query: &QueryHash) -> Result<Position, CursorError>;
        /// [`decode`](Self::decode) at the time `now_unix` (seconds since the Unix epoch).
        fn decode_at(
            &self,
            cursor: &str,
            query: &QueryHash,
            now_unix: u64,
        ) -> Result<Position, CursorError>;
    }

    /// A call whose `next` cursor a function of the test's own makes, from what the page
    /// hands it (`use toolshape::__seams::cursor::CursorWith`).
    pub trait CursorWith: Sized {
        /// Makes the `next` cursor when records remain, from the last record the page covers.
        fn cursor_with(
            self,
            make: impl for<'c> Fn(Continuation<'c>) -> String + Send + Sync + 'static,
        ) -> Self;
    }

    impl CursorWith for crate::Call<'_> {
        fn cursor_with(
            self,
            make: impl for<'c> Fn(Continuation<'c>) -> String + Send + Sync + 'static,
        ) -> Self {
            crate::Call::cursor_with(self, make)
        }
    }

    impl Wire for CursorCodec {
        fn encode_position(
            &self,
            position: &Position,
            query: &QueryHash,
            form: CursorForm,
        ) -> String {
            CursorCodec::encode_position(self, position, query, form)
        }

        fn encoded_len(&self, position: &Position, form: CursorForm) -> usize {
            CursorCodec::encoded_len(self, position, form)
        }

        fn decode(&self, cursor: &str, query: &QueryHash) -> Result<Position, CursorError> {
            CursorCodec::decode(self, cursor, query)
        }

        fn decode_at(
            &self,
            cursor: &str,
            query: &QueryHash,
            now_unix: u64,
        ) -> Result<Position, CursorError> {
            CursorCodec::decode_at(self, cursor, query, now_unix)
        }
    }
}

/// Field plumbing the derive's generated code reaches through `__private`.
pub mod fields {
    pub use crate::fields::date::iso_date;
    pub use crate::fields::recorded::NOT_RECORDED;
}

/// A handle store's clock and a stored result's parts.
pub mod handle {
    pub use crate::handle::id::{HANDLE_BYTES, OPEN_RESULT};
    pub use crate::handle::memory::{Clock, ManualClock, SystemClock};
    /// The query language of `open_result`, which a model writes as JSON.
    pub mod query {
        pub use crate::handle::open_query::{
            Bound, Filter, FilterOp, OpenQuery, QueryError, Sort, ValidQuery,
        };
    }
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
