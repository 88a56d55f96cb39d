//! Cursors: where the next page starts, as an opaque, signed, stateless string.
//!
//! This module owns the cursor format and everything a tool author needs to page with it:
//!
//! - [`Keyset`]: the position itself — the rank key value and id of the last record shown,
//!   and the order. Keyset, not offsets: a record inserted or deleted between two calls
//!   neither repeats nor hides another one. [`Keyset::admits`] and [`after_cursor`] page an
//!   in-memory collection; [`Keyset::sql_predicate`] and [`Keyset::sql_order_by`] push the
//!   bound into a database query.
//! - [`CursorCodec`]: turns a keyset (plus the count shown so far) into a short base64url
//!   string signed with HMAC-SHA256, bound to one query ([`QueryHash`]), and back. A
//!   cursor that was altered, belongs to another query, has expired or cannot be read is a
//!   [`CursorError`] whose message tells the model how to recover; decoding never panics.
//! - [`CursorKeys`]: the signing key and, during a rotation, the previous one.
//! - [`UpstreamPosition`]: for a tool over an upstream that pages itself (a REST API with
//!   `Link: rel="next"`, a page token, an offset), the upstream's continuation and how many
//!   records of that page were shown; [`CursorCodec::encode_upstream`] signs it, and
//!   [`Call::upstream`](crate::Call::upstream) pages with it.
//!
//! By default a cursor carries its position, signed: it decodes after a restart and on another
//! replica that has the same key. Only where that cursor would crowd a record off a page (a
//! small budget, a long upstream continuation) does the page hold the position on the server
//! and hand out a short cursor ([`CursorForm::Held`]), in the process's memory unless the codec
//! has a store. With a [`CursorStore`] ([`CursorCodec::held_in`]) every
//! position stays on the server and the cursor is 38 characters: [`MemoryCursorStore`] for
//! one process, `RedisCursorStore` (feature `redis`) for replicas that share a Redis.
//!
//! ```
//! use toolshape::cursor::{CursorCodec, CursorKeys, Keyset, QueryHash};
//! use toolshape::{KeyValue, Order};
//!
//! let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?);
//! let query = QueryHash::of("search_tickets", &serde_json::json!({"status": "open"}))?;
//!
//! // After showing 20 records, the last one ranked (2025-03-01, "tkt_42"):
//! let last = Keyset {
//!     rank: Some(KeyValue::Str("2025-03-01".into())),
//!     id: Some("tkt_42".into()),
//!     order: Order::Desc,
//! };
//! let cursor = codec.encode(&last, 20, &query);
//!
//! // The next call presents it with the same arguments:
//! let position = codec.decode(&cursor, &query)?;
//! assert_eq!(position.keyset, last);
//! assert_eq!(position.shown, 20);
//! // Records after the cursor, in the descending order: older dates, or the same date and a
//! // smaller id.
//! assert!(position.keyset.admits(Some(&KeyValue::Str("2025-02-28".into())), Some("tkt_99")));
//! assert!(!position.keyset.admits(Some(&KeyValue::Str("2025-03-01".into())), Some("tkt_42")));
//!
//! // Any other query is refused, with a remedy in the message.
//! let other = QueryHash::of("search_tickets", &serde_json::json!({"status": "closed"}))?;
//! let err = codec.decode(&cursor, &other).unwrap_err();
//! assert!(err.to_string().contains("without a cursor"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "redis")]
pub use crate::cursor_redis::{RedisCursorStore, RedisCursorStoreBuilder, RedisCursorStoreError};
use crate::ids::IdKey;
use crate::project::ToolResult;
use crate::rank::{KeyValue, Order};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// The shortest signing key accepted, in bytes.
pub const MIN_KEY_LEN: usize = 16;

/// Format version of the first signed cursors (base64url text, no extension byte): still
/// read, never written.
const VERSION: u8 = 1;
/// Format version of a signed cursor written now: an extension byte follows the flags.
const VERSION_2: u8 = 2;
/// HMAC-SHA256 truncated to 128 bits (RFC 2104 §5 allows truncation to half the output).
const TAG_LEN: usize = 16;
/// Leading bytes of the query hash carried in the clear, only to tell "another query" from
/// "altered" when the signature does not verify; the whole hash is signed.
const FINGERPRINT_LEN: usize = 4;
/// Version 1: version, flags, fingerprint.
const HEADER_LEN: usize = 2 + FINGERPRINT_LEN;
/// Version 2: version, flags, extensions, fingerprint.
const HEADER_2_LEN: usize = 3 + FINGERPRINT_LEN;
/// The shortest signed cursor of version 1: the header, the issue time and the count shown (a
/// byte each at least), the tag; version 2's header is a byte longer. Anything shorter is
/// unreadable, whatever its tag.
const MIN_SIGNED_LEN: usize = HEADER_LEN + 2 + TAG_LEN;
/// The first character of a cursor written now: the body and its tag follow as decimal
/// digits ([`crate::digits`]), so a cursor's tokens depend on its length alone and the same
/// page holds the same records on every call. The letter keeps the cursor text, not a
/// number, wherever a model copies it.
const DIGITS_PREFIX: char = 'c';
/// Format version of a server-held cursor: the version, a token naming the position in the
/// store, and a tag.
const VERSION_HELD: u8 = 3;
/// A held cursor's token: 64 bits of HMAC over the position, so the same position under the
/// same key is the same entry, and a token is unguessable without the key.
pub const HELD_TOKEN_LEN: usize = 8;
/// A held cursor's tag: HMAC-SHA256 over the token and the whole query hash, truncated to 48
/// bits. The tag only has to make an altered or rebound cursor fail, never to resist offline
/// search (checking a guess takes the key): each guess is a tool call, so 2^-48 a guess is
/// thousands of years of calls at a thousand a second, and the token a forger must also
/// present is 64 bits of HMAC the store holds. Digits cost a model one token per 10 bits, so
/// the 24 bits below 72 save every page with a held cursor two or three tokens.
const HELD_TAG_LEN: usize = 6;
/// Bytes of a held cursor: 1 + 8 + 6 = 15.
const HELD_LEN: usize = 1 + HELD_TOKEN_LEN + HELD_TAG_LEN;
/// Characters of a held cursor: the prefix and 37 digits (13 tokens of digits).
pub const HELD_CURSOR_CHARS: usize = 1 + crate::digits::encoded_len(HELD_LEN);
/// Longer input is refused before decoding (a real cursor is ~100 characters plus the ids).
/// A position whose signed cursor would be longer (a key of over about 3,000 bytes) is held
/// on the server instead ([`CursorCodec`]'s overflow), so every cursor handed out is read back.
const MAX_CURSOR_CHARS: usize = 4096;
/// Positions a codec without a store holds in the process's memory (too long for a cursor,
/// or held so that a small page keeps room for its records): at most this many, the oldest
/// forgotten first ...
const OVERFLOW_CAPACITY: usize = 100_000;
/// ... each for a day ...
const OVERFLOW_TTL: Duration = Duration::from_secs(86_400);
/// ... and at most this many bytes of them.
const OVERFLOW_MAX_BYTES: usize = 64 << 20;

/// The memory every codec of the process without a store of its own holds positions in: a
/// codec made per request still reads back the positions another made (tokens are HMACs
/// under the key, so codecs of other keys neither read nor overwrite each other's).
fn process_memory() -> Arc<MemoryCursorStore> {
    static MEMORY: std::sync::OnceLock<Arc<MemoryCursorStore>> = std::sync::OnceLock::new();
    Arc::clone(MEMORY.get_or_init(|| {
        Arc::new(
            MemoryCursorStore::new(OVERFLOW_CAPACITY, OVERFLOW_TTL).max_bytes(OVERFLOW_MAX_BYTES),
        )
    }))
}

// Flag bits (byte 1).
const FLAG_DESC: u8 = 1;
const FLAG_ID: u8 = 1 << 1;
const FLAG_ID_UUID: u8 = 1 << 2;
const RANK_SHIFT: u8 = 3;
const RANK_MASK: u8 = 0b111 << RANK_SHIFT;
/// An upstream position follows the id: the upstream page (`0` for its first page, else the
/// continuation's length plus one, then its bytes) and the records of it to skip. Cursors
/// without the flag read as before; a server that predates it refuses the flag as unreadable.
const FLAG_UPSTREAM: u8 = 1 << 6;
const FLAG_UNUSED: u8 = !(FLAG_DESC | FLAG_ID | FLAG_ID_UUID | RANK_MASK | FLAG_UPSTREAM);
// Extension bits (byte 2 of a version 2 cursor).
/// The count of records skipped as too large for any page follows the count shown.
const EXT_SKIPPED: u8 = 1;
/// The handle of the stored whole result the walk belongs to ends the body.
const EXT_HANDLE: u8 = 1 << 1;
const EXT_UNUSED: u8 = !(EXT_SKIPPED | EXT_HANDLE);
/// The longest upstream continuation a cursor carries, in bytes, so an upstream cursor stays
/// signed and stateless (a [`Call`](crate::Call) paging an upstream refuses a longer one).
pub const MAX_UPSTREAM_BYTES: usize = 1024;

// Rank tags (3 bits).
const RANK_NONE: u8 = 0;
const RANK_NULL: u8 = 1;
const RANK_FALSE: u8 = 2;
const RANK_TRUE: u8 = 3;
const RANK_INT: u8 = 4;
const RANK_UINT: u8 = 5;
const RANK_FLOAT: u8 = 6;
const RANK_STR: u8 = 7;

/// Why a cursor was refused. Every message ends with what to do: start again without a
/// cursor (or, for a foreign query, repeat the original arguments).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor this server issued: not base64url, cut short, or an unknown format.
    #[error(
        "the cursor could not be read (it was cut or altered in copying, or is not one this \
         tool issued); call the tool again without a cursor to start from the first page"
    )]
    Malformed,
    /// The signature does not match: altered, or signed with a key no longer accepted.
    #[error(
        "the cursor's signature does not match: it was altered, or was issued under a signing \
         key this server no longer accepts; call the tool again without a cursor to start \
         from the first page"
    )]
    Tampered,
    /// Issued for a different tool or different arguments.
    #[error(
        "the cursor belongs to a different query: it continues only the call with the same \
         tool and arguments that returned it; repeat those arguments with this cursor, or call \
         again without a cursor to start from the first page"
    )]
    ForeignQuery,
    /// A server-held cursor ([`CursorCodec::held_in`]) whose position the server no longer
    /// holds: it expired from the store, was evicted, or the server restarted.
    #[error(
        "the cursor is no longer held by this server (it expired or the server restarted); \
         call the tool again without a cursor to start from the first page"
    )]
    Forgotten,
    /// Older than the configured maximum age.
    #[error(
        "the cursor expired: it was issued {age_secs}s ago and cursors last {max_age_secs}s; \
         call the tool again without a cursor to start from the first page"
    )]
    Expired {
        /// Seconds since the cursor was issued.
        age_secs: u64,
        /// The configured maximum age in seconds.
        max_age_secs: u64,
    },
}

/// A signing key that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorKeyError {
    /// Shorter than [`MIN_KEY_LEN`].
    #[error(
        "a cursor signing key must be at least {MIN_KEY_LEN} bytes, got {len}; use 32 random \
         bytes (for example `openssl rand -base64 32`, decoded)"
    )]
    TooShort {
        /// The length given.
        len: usize,
    },
    /// The operating system's random source failed ([`CursorKeys::random`]).
    #[error("no randomness for a cursor signing key: {reason}; pass a key of your own")]
    NoRandomness {
        /// What failed.
        reason: String,
    },
}

/// The arguments of a query could not be serialised for hashing.
#[derive(Debug, thiserror::Error)]
#[error("the query arguments could not be serialised for the cursor's query hash: {0}")]
pub struct QueryHashError(#[from] serde_json::Error);

/// A SQL column name that is not a plain identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{column}` is not a plain SQL column name; pass a column name from your code (letters, \
     digits and `_`, optionally table-qualified with `.` or double-quoted), never text from a \
     request"
)]
pub struct SqlColumnError {
    /// The column name refused.
    pub column: String,
}

/// The keys cursors are signed with: the current one, and during a rotation the previous one,
/// which is still accepted when decoding (never used to sign).
///
/// ```
/// use toolshape::cursor::CursorKeys;
///
/// let keys = CursorKeys::new(b"the new key, 16+ bytes")?.with_previous(b"the old key, 16+ bytes")?;
/// assert!(CursorKeys::new(b"short").is_err());
/// # Ok::<(), toolshape::cursor::CursorKeyError>(())
/// ```
#[derive(Clone)]
pub struct CursorKeys {
    current: HmacSha256,
    previous: Option<HmacSha256>,
}

impl CursorKeys {
    /// Keys with one current signing key (at least [`MIN_KEY_LEN`] bytes).
    pub fn new(current: impl AsRef<[u8]>) -> Result<Self, CursorKeyError> {
        Ok(CursorKeys {
            current: keyed(current.as_ref())?,
            previous: None,
        })
    }

    /// Keys with a fresh 32-byte key from the operating system's random source: cursors
    /// then last as long as the process (a restart or another replica refuses them, and the
    /// refusal says to call again without a cursor). Share a key of your own across replicas.
    ///
    /// ```
    /// use toolshape::cursor::CursorKeys;
    ///
    /// let keys = CursorKeys::random()?;
    /// # let _ = keys;
    /// # Ok::<(), toolshape::cursor::CursorKeyError>(())
    /// ```
    pub fn random() -> Result<Self, CursorKeyError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| CursorKeyError::NoRandomness {
            reason: e.to_string(),
        })?;
        Self::new(key)
    }

    /// Also accepts cursors signed with `previous`, for the length of a key rotation.
    pub fn with_previous(self, previous: impl AsRef<[u8]>) -> Result<Self, CursorKeyError> {
        Ok(CursorKeys {
            previous: Some(keyed(previous.as_ref())?),
            ..self
        })
    }
}

impl fmt::Debug for CursorKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorKeys")
            .field("current", &"<redacted>")
            .field("previous", &self.previous.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

fn keyed(key: &[u8]) -> Result<HmacSha256, CursorKeyError> {
    if key.len() < MIN_KEY_LEN {
        return Err(CursorKeyError::TooShort { len: key.len() });
    }
    // HMAC accepts keys of any length; the error arm is unreachable but not unwrapped.
    HmacSha256::new_from_slice(key).map_err(|_| CursorKeyError::TooShort { len: key.len() })
}

/// A hash of one query — the tool's name and its arguments, without the cursor — so that a
/// cursor continues only the query that issued it.
///
/// The arguments are serialised canonically (object keys sorted, no whitespace), so two
/// requests with the same arguments in a different key order hash the same.
///
/// ```
/// use toolshape::cursor::QueryHash;
/// use serde_json::json;
///
/// let a = QueryHash::of("search", &json!({"q": "crash", "status": "open"}))?;
/// let b = QueryHash::of("search", &json!({"status": "open", "q": "crash"}))?;
/// assert_eq!(a, b);
/// assert_ne!(a, QueryHash::of("search", &json!({"q": "crash"}))?);
/// assert_ne!(a, QueryHash::of("list", &json!({"q": "crash", "status": "open"}))?);
/// # Ok::<(), toolshape::cursor::QueryHashError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueryHash([u8; 32]);

impl QueryHash {
    /// Hashes `tool` and its query arguments (pass them without the cursor itself).
    ///
    /// The hash is SHA-256 of `shape.query.v1\0`, the tool's length in bytes as 8
    /// little-endian bytes, the tool, and the arguments as compact JSON with every object's
    /// keys sorted: the same arguments hash alike whatever order their maps keep, and a
    /// cursor issued before an upgrade still opens after it.
    pub fn of<Q: Serialize + ?Sized>(tool: &str, args: &Q) -> Result<Self, QueryHashError> {
        let value = serde_json::to_value(args)?;
        let mut hasher = Sha256::new();
        hasher.update(b"shape.query.v1\0");
        hasher.update((tool.len() as u64).to_le_bytes());
        hasher.update(tool.as_bytes());
        canonical(&value, &mut hasher)?;
        Ok(QueryHash(hasher.finalize().into()))
    }

    /// The 32 bytes of the hash.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    fn fingerprint(&self) -> [u8; FINGERPRINT_LEN] {
        let mut out = [0; FINGERPRINT_LEN];
        out.copy_from_slice(&self.0[..FINGERPRINT_LEN]);
        out
    }
}

impl fmt::Debug for QueryHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QueryHash(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

/// Writes `value` as JSON with object keys sorted, whatever order the map kept them in.
fn canonical(value: &serde_json::Value, out: &mut Sha256) -> Result<(), serde_json::Error> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.update(b"{");
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                out.update(serde_json::to_string(key)?.as_bytes());
                out.update(b":");
                canonical(value, out)?;
            }
            out.update(b"}");
        }
        Value::Array(items) => {
            out.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                canonical(item, out)?;
            }
            out.update(b"]");
        }
        scalar => out.update(serde_json::to_string(scalar)?.as_bytes()),
    }
    Ok(())
}

/// What the next page continues after: the last record's rank key and id, and how many
/// records the pages so far have shown. Records in the caller's order or without an id
/// continue by count alone: `rank` and `id` are then `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation<'a> {
    /// The rank key of the last record this page covers.
    pub rank: Option<KeyValue>,
    /// Its id.
    pub id: Option<crate::ids::IdKey<'a>>,
    /// Records shown by this page and the earlier ones.
    pub shown: u64,
    /// Records this page and the earlier ones passed over because no page of their own could
    /// show them within the budget (each named by the page that skipped it).
    pub skipped: u64,
    /// The rank order the records are in.
    pub order: Order,
    /// Where the next page starts in an upstream that pages itself
    /// ([`Call::upstream`](crate::Call::upstream)): `rank` and `id` are then `None`.
    pub upstream: Option<UpstreamPosition>,
    /// The handle the whole result is stored under, when a page stored it
    /// ([`Call::shape_or_store`](crate::Call::shape_or_store)): the next pages state the same
    /// handle and the same figures about the whole result instead of storing it again.
    pub handle: Option<crate::store::Handle>,
    /// The form the page asks for: [`CursorForm::Held`] when the position, signed into the
    /// cursor, would leave no room for a record the page can show with a short cursor. A
    /// cursor function of the tool's own may ignore it.
    pub form: CursorForm,
}

/// How a cursor carries its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CursorForm {
    /// Signed into the cursor itself: nothing is kept on the server, and any replica with the
    /// key reads it back.
    #[default]
    Signed,
    /// Kept on the server ([`CursorCodec::held_in`]'s store, else the codec's own memory) and
    /// named by a short cursor of [`HELD_CURSOR_CHARS`] characters, whatever the position
    /// holds. A page asks for it only when the signed cursor would crowd out a record.
    Held,
}

/// Makes the `next` cursor from where the page stops.
pub(crate) type CursorFn = dyn for<'a> Fn(Continuation<'a>) -> String + Send + Sync;

impl Continuation<'_> {
    /// The position a cursor for this continuation carries, issued now.
    pub fn position(&self) -> Position {
        Position {
            keyset: Keyset {
                rank: self.rank.clone(),
                id: self.id.map(|id| id.to_string()),
                order: self.order,
            },
            shown: self.shown,
            skipped: self.skipped,
            issued_at_unix: unix_now(),
            upstream: self.upstream.clone(),
            handle: self.handle,
        }
    }
}

/// How a page makes its `next` cursor: with the library's codec, which a page can size
/// without signing or storing anything (a cursor's tokens depend on its length alone), or
/// with a function of the tool's own, called to size as well.
#[derive(Clone)]
pub(crate) enum Cursors {
    /// Signed (or held) by `codec` for `query`.
    Codec {
        codec: Arc<CursorCodec>,
        query: QueryHash,
    },
    /// The tool's own ([`Call::cursor_with`](crate::Call::cursor_with)).
    Custom(Arc<CursorFn>),
}

impl Cursors {
    /// The cursor for `c`.
    pub fn make(&self, c: Continuation<'_>) -> String {
        match self {
            Cursors::Codec { codec, query } => codec.encode_position(&c.position(), query, c.form),
            Cursors::Custom(make) => make(c),
        }
    }

    /// Text that counts as many tokens, bytes and lines as [`make`](Self::make)'s cursor for
    /// `c`: the codec's prefix and as many zeros as the cursor has digits, made without
    /// signing or storing; a tool's own function's cursor itself.
    pub fn sized(&self, c: Continuation<'_>) -> String {
        match self {
            Cursors::Codec { codec, .. } => {
                let len = codec.encoded_len(&c.position(), c.form);
                let mut text = String::with_capacity(len);
                text.push(DIGITS_PREFIX);
                text.extend(std::iter::repeat_n('0', len.saturating_sub(1)));
                text
            }
            Cursors::Custom(make) => make(c),
        }
    }

    /// Whether asking for [`CursorForm::Held`] can give a shorter cursor.
    pub fn can_hold(&self) -> bool {
        matches!(self, Cursors::Codec { .. })
    }
}

/// A position in a ranked collection: the rank key value and id of the last record shown.
///
/// Records are ranked by `(rank, id)` ascending, or both descending for [`Order::Desc`]; a
/// rank of `None` means the type has no rank key and records are ordered by id alone. The
/// id breaks ties, so without an id the records sharing the last rank value are not
/// revisited (give ranked types an id).
#[derive(Debug, Clone, PartialEq)]
pub struct Keyset {
    /// The rank key of the last record shown; `None` when the type has no rank key.
    pub rank: Option<KeyValue>,
    /// The full id of the last record shown.
    pub id: Option<String>,
    /// The order records are ranked in.
    pub order: Order,
}

impl Keyset {
    /// The position before the first record: admits everything.
    pub fn start(order: Order) -> Self {
        Keyset {
            rank: None,
            id: None,
            order,
        }
    }

    /// The position just after `record`, in the order of `T`'s rank key (ascending when it
    /// has none).
    pub fn after<T: ToolResult>(record: &T) -> Self {
        Keyset {
            rank: record.rank_key(),
            id: record.id_key().map(|id| id.to_string()),
            order: T::PROJECTION.rank.map_or(Order::Asc, |r| r.order),
        }
    }

    /// Whether this is the [`start`](Keyset::start) position.
    pub fn is_start(&self) -> bool {
        self.rank.is_none() && self.id.is_none()
    }

    /// Whether a record with this rank key and id comes after the position, in the ranked
    /// order.
    ///
    /// ```
    /// use toolshape::cursor::Keyset;
    /// use toolshape::{KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(5)), id: Some("b".into()), order: Order::Asc };
    /// assert!(k.admits(Some(&KeyValue::Int(6)), Some("a")));
    /// assert!(k.admits(Some(&KeyValue::Int(5)), Some("c"))); // same rank, later id
    /// assert!(!k.admits(Some(&KeyValue::Int(5)), Some("b"))); // the record itself
    /// assert!(!k.admits(Some(&KeyValue::Null), Some("z"))); // null ranks first
    /// ```
    ///
    /// The id is compared as its kind: an integer id numerically with the stored one (`10`
    /// after `9`), a text id bytewise.
    pub fn admits<'a>(&self, rank: Option<&KeyValue>, id: Option<impl Into<IdKey<'a>>>) -> bool {
        if self.is_start() {
            return true;
        }
        let id = id.map(Into::into);
        let ascending = cmp_rank(rank, self.rank.as_ref()).then_with(|| match (id, &self.id) {
            (Some(id), Some(stored)) => id.cmp_stored(stored),
            (a, b) => a.is_some().cmp(&b.is_some()),
        });
        self.order.apply(ascending) == Ordering::Greater
    }

    /// A SQL condition selecting the rows after this position, with `?` placeholders, for a
    /// rank column that may hold NULL (NULL ranks first, as `Option::None` does).
    ///
    /// Use it with [`sql_order_by`](Keyset::sql_order_by) so the database orders rows as
    /// the cursor does. The parameters are the rank key as
    /// the record's rank key gives it ([`KeyValue`]) (a `chrono` timestamp is
    /// nanoseconds since the epoch: convert it to the column's type when binding), then the
    /// id text. Compare ids bytewise (a binary or `C` collation) so the database and the
    /// cursor agree on ties.
    ///
    /// ```
    /// use toolshape::cursor::Keyset;
    /// use toolshape::{KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(7)), id: Some("t1".into()), order: Order::Desc };
    /// let p = k.sql_predicate("updated_at", "id")?;
    /// assert_eq!(p.sql, "((updated_at, id) < (?, ?) OR updated_at IS NULL)");
    /// assert_eq!(p.params, [KeyValue::Int(7), KeyValue::Str("t1".into())]);
    /// assert_eq!(k.sql_order_by("updated_at", "id")?, "updated_at DESC NULLS LAST, id DESC");
    /// # Ok::<(), toolshape::cursor::SqlColumnError>(())
    /// ```
    pub fn sql_predicate(
        &self,
        rank_column: &str,
        id_column: &str,
    ) -> Result<SqlPredicate, SqlColumnError> {
        self.sql_predicate_with(rank_column, id_column, &SqlOptions::default())
    }

    /// [`sql_predicate`](Keyset::sql_predicate) with other placeholders, or for a rank
    /// column declared `NOT NULL` (which drops the `OR … IS NULL` arm).
    ///
    /// ```
    /// use toolshape::cursor::{Keyset, Placeholders, SqlOptions};
    /// use toolshape::{KeyValue, Order};
    ///
    /// let k = Keyset { rank: Some(KeyValue::Int(7)), id: Some("t1".into()), order: Order::Desc };
    /// let options = SqlOptions { placeholders: Placeholders::Dollar { first: 3 }, rank_nullable: false };
    /// let p = k.sql_predicate_with("t.updated_at", "t.id", &options)?;
    /// assert_eq!(p.sql, "(t.updated_at, t.id) < ($3, $4)");
    /// # Ok::<(), toolshape::cursor::SqlColumnError>(())
    /// ```
    pub fn sql_predicate_with(
        &self,
        rank_column: &str,
        id_column: &str,
        options: &SqlOptions,
    ) -> Result<SqlPredicate, SqlColumnError> {
        let r = checked_column(rank_column)?;
        let i = checked_column(id_column)?;
        let op = match self.order {
            Order::Asc => ">",
            Order::Desc => "<",
        };
        let mut next = options.placeholders.counter();
        let mut params = Vec::new();
        let id = self.id.clone().map(KeyValue::Str);
        let sql = match (&self.rank, id) {
            (None, None) => "1 = 1".to_owned(),
            (None, Some(id)) => {
                params.push(id);
                format!("{i} {op} {}", next())
            }
            (Some(KeyValue::Null), id) => {
                // NULL ranks first: in ascending order every non-NULL rank follows; in
                // descending order only NULL ranks with a smaller id do.
                let ties = id.map(|id| {
                    params.push(id);
                    format!("{r} IS NULL AND {i} {op} {}", next())
                });
                match (self.order, ties) {
                    (Order::Asc, Some(ties)) => format!("(({ties}) OR {r} IS NOT NULL)"),
                    (Order::Asc, None) => format!("{r} IS NOT NULL"),
                    (Order::Desc, Some(ties)) => format!("({ties})"),
                    (Order::Desc, None) => "1 = 0".to_owned(),
                }
            }
            (Some(rank), id) => {
                params.push(rank.clone());
                let bound = match id {
                    Some(id) => {
                        params.push(id);
                        let (a, b) = (next(), next());
                        format!("({r}, {i}) {op} ({a}, {b})")
                    }
                    None => format!("{r} {op} {}", next()),
                };
                if self.order == Order::Desc && options.rank_nullable {
                    format!("({bound} OR {r} IS NULL)")
                } else {
                    bound
                }
            }
        };
        Ok(SqlPredicate { sql, params })
    }

    /// The `ORDER BY` list that ranks rows as this keyset does: `rank ASC NULLS FIRST, id
    /// ASC`, or both descending with NULLs last.
    pub fn sql_order_by(
        &self,
        rank_column: &str,
        id_column: &str,
    ) -> Result<String, SqlColumnError> {
        let r = checked_column(rank_column)?;
        let i = checked_column(id_column)?;
        Ok(match self.order {
            Order::Asc => format!("{r} ASC NULLS FIRST, {i} ASC"),
            Order::Desc => format!("{r} DESC NULLS LAST, {i} DESC"),
        })
    }
}

/// Ascending comparison of two rank keys; no rank (`None`) before any.
fn cmp_rank(a: Option<&KeyValue>, b: Option<&KeyValue>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(b),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

/// Accepts `name`, `table.name`, `"quoted name"`: nothing a request could smuggle SQL in.
fn checked_column(column: &str) -> Result<&str, SqlColumnError> {
    let plain = |part: &str| {
        let mut chars = part.chars();
        matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let quoted = |part: &str| {
        part.len() > 2
            && part.starts_with('"')
            && part.ends_with('"')
            && !part[1..part.len() - 1].contains(['"', '\0'])
    };
    if !column.is_empty() && column.split('.').all(|p| plain(p) || quoted(p)) {
        Ok(column)
    } else {
        Err(SqlColumnError {
            column: column.to_owned(),
        })
    }
}

/// A SQL condition and its parameters, in placeholder order.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlPredicate {
    /// The condition, to `AND` into the query's `WHERE` clause.
    pub sql: String,
    /// The values to bind, in order.
    pub params: Vec<KeyValue>,
}

/// How [`Keyset::sql_predicate_with`] writes its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlOptions {
    /// Placeholder style.
    pub placeholders: Placeholders,
    /// Whether the rank column can hold NULL (the default, which is always correct; `false`
    /// gives a simpler condition for a `NOT NULL` column).
    pub rank_nullable: bool,
}

impl Default for SqlOptions {
    fn default() -> Self {
        SqlOptions {
            placeholders: Placeholders::Question,
            rank_nullable: true,
        }
    }
}

/// Placeholder style for bound parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `?` (SQLite, MySQL).
    Question,
    /// `$1`, `$2`, … starting at `first` (PostgreSQL), so the predicate can follow other
    /// parameters.
    Dollar {
        /// The number of the first placeholder.
        first: usize,
    },
}

impl Placeholders {
    fn counter(self) -> impl FnMut() -> String {
        let mut n = match self {
            Placeholders::Question => 0,
            Placeholders::Dollar { first } => first,
        };
        move || match self {
            Placeholders::Question => "?".to_owned(),
            Placeholders::Dollar { .. } => {
                let s = format!("${n}");
                n = n.saturating_add(1);
                s
            }
        }
    }
}

/// The records of an already ranked slice that come after `keyset`.
///
/// `ranked` must be in the keyset's order (as the [`ToolResult`] derive's `rank_cmp` sorts
/// it, or by id when the type has no rank key); the boundary is found by binary search.
///
/// ```
/// use toolshape::cursor::{after_cursor, Keyset};
/// use toolshape::ToolResult;
///
/// #[derive(ToolResult)]
/// #[shape(name = "event", plural = "events")]
/// struct Event {
///     #[shape(id)]
///     id: String,
///     #[shape(rank = desc)]
///     at: i64,
/// }
///
/// let ranked = [
///     Event { id: "e3".into(), at: 30 },
///     Event { id: "e2".into(), at: 20 },
///     Event { id: "e1".into(), at: 10 },
/// ];
/// let keyset = Keyset::after(&ranked[0]);
/// let rest = after_cursor(&ranked, &keyset);
/// assert_eq!(rest.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["e2", "e1"]);
/// ```
pub fn after_cursor<'a, T: ToolResult>(ranked: &'a [T], keyset: &Keyset) -> &'a [T] {
    let start = ranked.partition_point(|r| !keyset.admits(r.rank_key().as_ref(), r.id_key()));
    ranked.get(start..).unwrap_or_default()
}

/// A decoded cursor: where to resume, and what the summary can say about pages so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// The last record shown.
    pub keyset: Keyset,
    /// How many records the earlier pages showed, for "40 of 1,412 shown so far".
    pub shown: u64,
    /// How many records the earlier pages skipped because no page of their own could show
    /// them within the budget. The pages so far covered `shown + skipped` records.
    pub skipped: u64,
    /// When the cursor was issued, in seconds since the Unix epoch.
    pub issued_at_unix: u64,
    /// Where to resume in an upstream that pages itself, for cursors that carry one.
    pub upstream: Option<UpstreamPosition>,
    /// The handle the whole result was stored under by the walk's first page, if any.
    pub handle: Option<crate::store::Handle>,
}

impl Position {
    /// A position after `keyset`, `shown` records shown, issued now.
    pub fn after(keyset: Keyset, shown: u64) -> Self {
        Position {
            keyset,
            shown,
            skipped: 0,
            issued_at_unix: unix_now(),
            upstream: None,
            handle: None,
        }
    }

    /// How many records the pages so far covered, shown or skipped: where a count-based
    /// page resumes.
    pub fn covered(&self) -> u64 {
        self.shown.saturating_add(self.skipped)
    }
}

/// A position in an upstream that pages itself (a REST API with a `Link: rel="next"` header,
/// a page token or an offset): which upstream page to fetch, and how many of its records
/// earlier answers already showed.
///
/// The continuation is the upstream's own, opaque to the library, and comes back signed: a
/// tool that fetches the page a cursor names fetches only what its upstream issued.
///
/// ```
/// use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash, UpstreamPosition};
///
/// let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?);
/// let query = QueryHash::of("list_issues", &serde_json::json!({"repo": "o/r"}))?;
/// let at = UpstreamPosition { page: Some("https://api.example/issues?page=3".into()), skip: 12 };
/// let cursor = codec.encode_upstream(&at, 72, &query);
/// let position = codec.decode(&cursor, &query)?;
/// assert_eq!(position.upstream, Some(at));
/// assert_eq!(position.shown, 72);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UpstreamPosition {
    /// The upstream page to fetch: the continuation the upstream gave for it (a `next` URL, a
    /// page token, an offset), or `None` for its first page.
    pub page: Option<String>,
    /// How many of that page's records, from its start, earlier answers showed: skip them.
    pub skip: u64,
}

impl UpstreamPosition {
    /// The upstream's first page, from its first record.
    pub fn start() -> Self {
        UpstreamPosition::default()
    }
}

/// Encodes and decodes cursors with one set of keys.
///
/// A cursor is the letter `c` and decimal digits ([`crate::digits`]: a cursor's tokens depend
/// on its length alone) over a compact binary record — format version, order, extensions,
/// query fingerprint, issue time, count shown, count skipped, rank key, id (a trailing
/// lowercase UUID is packed into 16 bytes), for an upstream cursor (flag bit 6) the
/// upstream's continuation and the count of its page to skip, and the walk's handle —
/// followed by HMAC-SHA256 truncated to 16 bytes over the record and the full [`QueryHash`].
/// A cursor after a timestamp-ranked record with a 40-character prefixed-UUID id is 145
/// characters, 49 tokens of digits (193 and 65 for a 40-character id of another shape); an
/// upstream cursor is about 70 characters plus 2.4 a byte of its continuation. Cursors of
/// the first format (base64url) still read.
///
/// A cursor is at most 4,096 characters. A position that would make a longer one (a rank key
/// or id of over about 1,650 bytes) is held on the server and named by a short cursor
/// ([`HELD_CURSOR_CHARS`]), as [`held_in`](Self::held_in) holds every position; so is a
/// position a page asks to hold ([`CursorForm::Held`]) because its signed cursor would leave
/// no room for a record. Held positions go to the codec's store when it has one, else to
/// memory every codec of the process shares (the latest 100,000 such positions, at most 64
/// MiB of them, each for a day). Such a cursor reads back in this process only; on another
/// replica, or after a restart, it is [`CursorError::Forgotten`], which tells the model to
/// start again. Give the codec a shared store ([`held_in`](Self::held_in), a Redis one with
/// feature `redis`) where several replicas serve.
///
/// ```
/// use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, Keyset, QueryHash, HELD_CURSOR_CHARS};
/// use toolshape::{KeyValue, Order};
///
/// let keys = || CursorKeys::new(b"a key of at least sixteen bytes");
/// let codec = CursorCodec::new(keys()?);
/// let query = QueryHash::of("search_pages", &serde_json::json!({}))?;
/// let last = Keyset {
///     rank: None,
///     id: Some(format!("https://example.org/wiki/{}", "Long_title_".repeat(400))),
///     order: Order::Asc,
/// };
/// let cursor = codec.encode(&last, 20, &query);
/// assert_eq!(cursor.len(), HELD_CURSOR_CHARS);
/// assert_eq!(codec.clone().decode(&cursor, &query)?.keyset, last);
/// // Another codec of this process reads it; one with memory of its own (as another
/// // process has) does not hold it, and says so.
/// assert_eq!(CursorCodec::new(keys()?).decode(&cursor, &query)?.keyset, last);
/// let elsewhere = CursorCodec::new(keys()?).own_memory();
/// assert_eq!(elsewhere.decode(&cursor, &query), Err(CursorError::Forgotten));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CursorCodec {
    keys: CursorKeys,
    max_age: Option<Duration>,
    held: Option<Arc<dyn CursorStore>>,
    /// Where positions are held when `held` is `None`: the process's memory.
    overflow: Arc<MemoryCursorStore>,
}

impl CursorCodec {
    /// A codec signing with `keys`; cursors do not expire unless [`max_age`](Self::max_age)
    /// is set.
    pub fn new(keys: CursorKeys) -> Self {
        CursorCodec {
            keys,
            max_age: None,
            held: None,
            overflow: process_memory(),
        }
    }

    /// Holds positions (when it must, without a store) in memory of its own, shared by its
    /// clones only, instead of the process's: what another process sees, for tests.
    pub fn own_memory(self) -> Self {
        CursorCodec {
            overflow: Arc::new(
                MemoryCursorStore::new(OVERFLOW_CAPACITY, OVERFLOW_TTL)
                    .max_bytes(OVERFLOW_MAX_BYTES),
            ),
            ..self
        }
    }

    /// Keeps each position in `store` and hands out a short cursor naming it
    /// ([`HELD_CURSOR_CHARS`]): a version, a 64-bit token, and a 48-bit tag over the token and
    /// the query. Every guarantee of a signed cursor holds: an altered cursor fails its tag,
    /// a cursor presented with another query is refused as foreign, the issue time is kept
    /// with the position and checked against [`max_age`](Self::max_age), and the previous
    /// key of a rotation still verifies. A position the store no longer holds is
    /// [`CursorError::Forgotten`]. Cursors issued before, without a store, still decode.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, Keyset, MemoryCursorStore, QueryHash};
    /// use toolshape::{KeyValue, Order};
    ///
    /// let store = MemoryCursorStore::new(10_000, Duration::from_secs(3_600));
    /// let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?).held_in(store);
    /// let query = QueryHash::of("search_tickets", &serde_json::json!({}))?;
    /// let last = Keyset {
    ///     rank: Some(KeyValue::Str("2026-02-14T16:02:07.113Z".into())),
    ///     id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
    ///     order: Order::Desc,
    /// };
    /// let cursor = codec.encode(&last, 20, &query);
    /// assert_eq!(cursor.len(), toolshape::cursor::HELD_CURSOR_CHARS);
    /// assert_eq!(codec.decode(&cursor, &query)?.keyset, last);
    /// let other = QueryHash::of("search_tickets", &serde_json::json!({"status": "open"}))?;
    /// assert_eq!(codec.decode(&cursor, &other), Err(CursorError::ForeignQuery));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held_in(self, store: impl CursorStore + 'static) -> Self {
        CursorCodec {
            held: Some(Arc::new(store)),
            ..self
        }
    }

    /// Refuses cursors older than `max_age` (whole seconds).
    pub fn max_age(self, max_age: Duration) -> Self {
        CursorCodec {
            max_age: Some(max_age),
            ..self
        }
    }

    /// A cursor for the position `keyset`, after `shown` records in all, for `query`.
    pub fn encode(&self, keyset: &Keyset, shown: u64, query: &QueryHash) -> String {
        self.encode_at(keyset, shown, query, unix_now())
    }

    /// A cursor for a position in an upstream that pages itself, after `shown` records in
    /// all, for `query`. The continuation must be at most [`MAX_UPSTREAM_BYTES`] long (a
    /// [`Call`](crate::Call) paging an upstream checks it before encoding).
    pub fn encode_upstream(
        &self,
        upstream: &UpstreamPosition,
        shown: u64,
        query: &QueryHash,
    ) -> String {
        self.encode_upstream_at(upstream, shown, query, unix_now())
    }

    /// [`encode_upstream`](Self::encode_upstream) with the issue time given (seconds since
    /// the Unix epoch).
    pub fn encode_upstream_at(
        &self,
        upstream: &UpstreamPosition,
        shown: u64,
        query: &QueryHash,
        issued_at_unix: u64,
    ) -> String {
        let position = Position {
            upstream: Some(upstream.clone()),
            issued_at_unix,
            ..Position::after(Keyset::start(Order::Asc), shown)
        };
        self.encode_position(&position, query, CursorForm::Signed)
    }

    /// A cursor for the next page after `last_shown`, the last record of this page.
    pub fn next_cursor<T: ToolResult>(
        &self,
        last_shown: &T,
        shown: u64,
        query: &QueryHash,
    ) -> String {
        self.encode(&Keyset::after(last_shown), shown, query)
    }

    /// [`encode`](Self::encode) with the issue time given (seconds since the Unix epoch).
    pub fn encode_at(
        &self,
        keyset: &Keyset,
        shown: u64,
        query: &QueryHash,
        issued_at_unix: u64,
    ) -> String {
        let position = Position {
            issued_at_unix,
            ..Position::after(keyset.clone(), shown)
        };
        self.encode_position(&position, query, CursorForm::Signed)
    }

    /// A cursor for `position`, for `query`, in `form`: signed, unless the codec holds every
    /// position ([`held_in`](Self::held_in)), the form asked is [`CursorForm::Held`], or the
    /// signed cursor would be longer than 4,096 characters.
    ///
    /// ```
    /// use toolshape::cursor::{CursorCodec, CursorForm, CursorKeys, Keyset, Position, QueryHash};
    /// use toolshape::Order;
    ///
    /// let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?);
    /// let query = QueryHash::of("search", &serde_json::json!({}))?;
    /// let position = Position { skipped: 1, ..Position::after(Keyset::start(Order::Asc), 40) };
    /// let signed = codec.encode_position(&position, &query, CursorForm::Signed);
    /// let held = codec.encode_position(&position, &query, CursorForm::Held);
    /// assert_eq!(held.len(), toolshape::cursor::HELD_CURSOR_CHARS);
    /// assert!(signed.len() > held.len());
    /// for cursor in [signed, held] {
    ///     let back = codec.decode(&cursor, &query)?;
    ///     assert_eq!((back.shown, back.skipped, back.covered()), (40, 1, 41));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode_position(
        &self,
        position: &Position,
        query: &QueryHash,
        form: CursorForm,
    ) -> String {
        let out = position_body(position, query);
        let signed_chars = 1 + crate::digits::encoded_len(out.len() + TAG_LEN);
        let mut cursor = String::with_capacity(signed_chars.min(MAX_CURSOR_CHARS));
        cursor.push(DIGITS_PREFIX);
        if self.held.is_some() || form == CursorForm::Held || signed_chars > MAX_CURSOR_CHARS {
            let token = held_token(self.keys.current.clone(), &out);
            self.store().put(token, out, position.issued_at_unix);
            let mut held = Vec::with_capacity(HELD_LEN);
            held.push(VERSION_HELD);
            held.extend_from_slice(&token);
            let tag = held_tag(self.keys.current.clone(), &token, query);
            held.extend_from_slice(&tag[..HELD_TAG_LEN]);
            crate::digits::encode_into(&held, &mut cursor);
            return cursor;
        }
        let mut out = out;
        let tag = sign(self.keys.current.clone(), &out, query);
        out.extend_from_slice(&tag[..TAG_LEN]);
        crate::digits::encode_into(&out, &mut cursor);
        cursor
    }

    /// How many characters the cursor for `position` in `form` would be, without making it
    /// (nothing is signed or stored): what a page sizes its envelope with. A cursor's tokens
    /// depend on its length alone.
    pub fn encoded_len(&self, position: &Position, form: CursorForm) -> usize {
        let body = position_body_len(position);
        let signed_chars = 1 + crate::digits::encoded_len(body + TAG_LEN);
        if self.held.is_some() || form == CursorForm::Held || signed_chars > MAX_CURSOR_CHARS {
            HELD_CURSOR_CHARS
        } else {
            signed_chars
        }
    }

    /// Where held positions are kept: the store given to [`held_in`](Self::held_in), else the
    /// codec's own memory for positions too long for a cursor.
    fn store(&self) -> &dyn CursorStore {
        match &self.held {
            Some(store) => &**store,
            None => &*self.overflow,
        }
    }

    /// Reads a held cursor's 15 bytes: the tag first (altered, or another query's), then the
    /// position the store holds under the token, checked to be the one the token names.
    fn decode_held(&self, bytes: &[u8], query: &QueryHash) -> Result<Vec<u8>, CursorError> {
        let store = self.store();
        let (token, tag) = bytes[1..].split_at(HELD_TOKEN_LEN);
        let token: [u8; HELD_TOKEN_LEN] = token.try_into().map_err(|_| CursorError::Malformed)?;
        let keys = || std::iter::once(&self.keys.current).chain(&self.keys.previous);
        let verified = keys().any(|key| {
            let mut mac = key.clone();
            held_tag_input(&mut mac, &token, query);
            mac.verify_truncated_left(tag).is_ok()
        });
        let body = store.get(&token);
        if !verified {
            return Err(match body {
                Some(body) if fingerprint_in(&body) != Some(&query.fingerprint()[..]) => {
                    CursorError::ForeignQuery
                }
                _ => CursorError::Tampered,
            });
        }
        let body = body.ok_or(CursorError::Forgotten)?;
        // Another position under the same token (a 64-bit collision that overwrote it) is
        // not this cursor's: never read as another position.
        if !keys().any(|key| held_token(key.clone(), &body) == token) {
            return Err(CursorError::Forgotten);
        }
        Ok(body)
    }

    /// `body` signed as a cursor for `query`, whatever it holds: for tests and fuzz targets
    /// that check a decoder fed a validly signed but malformed body refuses it without
    /// panicking (reached through `__private::sign_cursor_body`).
    pub(crate) fn sign_raw(&self, body: &[u8], query: &QueryHash) -> String {
        let mut out = body.to_vec();
        out.extend_from_slice(&sign(self.keys.current.clone(), body, query)[..TAG_LEN]);
        let mut cursor = String::from(DIGITS_PREFIX);
        crate::digits::encode_into(&out, &mut cursor);
        cursor
    }

    /// Reads a cursor presented with `query`, checking its signature and age.
    pub fn decode(&self, cursor: &str, query: &QueryHash) -> Result<Position, CursorError> {
        self.decode_at(cursor, query, unix_now())
    }

    /// [`decode`](Self::decode) at the time `now_unix` (seconds since the Unix epoch).
    pub fn decode_at(
        &self,
        cursor: &str,
        query: &QueryHash,
        now_unix: u64,
    ) -> Result<Position, CursorError> {
        let cursor = cursor.trim();
        if cursor.len() > MAX_CURSOR_CHARS {
            return Err(CursorError::Malformed);
        }
        // Cursors are digits after a letter; the first ones were base64url, still read.
        let (bytes, legacy) = match cursor.strip_prefix(DIGITS_PREFIX) {
            Some(digits) => (crate::digits::decode(digits), false),
            None => (URL_SAFE_NO_PAD.decode(cursor).ok(), true),
        };
        let bytes = bytes.ok_or(CursorError::Malformed)?;
        let held;
        let body = if bytes.len() == HELD_LEN && bytes.first() == Some(&VERSION_HELD) {
            held = self.decode_held(&bytes, query)?;
            &held[..]
        } else {
            // Version 2 is only ever written as digits.
            let version_ok = match bytes.first() {
                Some(&VERSION) => true,
                Some(&VERSION_2) => !legacy,
                _ => false,
            };
            let shortest = match bytes.first() {
                Some(&VERSION_2) => MIN_SIGNED_LEN + 1,
                _ => MIN_SIGNED_LEN,
            };
            if bytes.len() < shortest || !version_ok {
                return Err(CursorError::Malformed);
            }
            let (body, tag) = bytes.split_at(bytes.len() - TAG_LEN);
            let verified = std::iter::once(&self.keys.current)
                .chain(&self.keys.previous)
                .any(|key| verify(key.clone(), body, query, tag));
            if !verified {
                return Err(if fingerprint_in(body) != Some(&query.fingerprint()[..]) {
                    CursorError::ForeignQuery
                } else {
                    CursorError::Tampered
                });
            }
            body
        };
        let position = parse_body(body).ok_or(CursorError::Malformed)?;
        if let Some(max_age) = self.max_age {
            let age_secs = now_unix.saturating_sub(position.issued_at_unix);
            if age_secs > max_age.as_secs() {
                return Err(CursorError::Expired {
                    age_secs,
                    max_age_secs: max_age.as_secs(),
                });
            }
        }
        Ok(position)
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn sign(mut mac: HmacSha256, body: &[u8], query: &QueryHash) -> [u8; 32] {
    mac.update(body);
    mac.update(query.as_bytes());
    mac.finalize().into_bytes().into()
}

fn verify(mut mac: HmacSha256, body: &[u8], query: &QueryHash, tag: &[u8]) -> bool {
    mac.update(body);
    mac.update(query.as_bytes());
    mac.verify_truncated_left(tag).is_ok()
}

fn held_token(mut mac: HmacSha256, body: &[u8]) -> [u8; HELD_TOKEN_LEN] {
    mac.update(b"shape.cursor.token\0");
    mac.update(body);
    let mut token = [0; HELD_TOKEN_LEN];
    token.copy_from_slice(&mac.finalize().into_bytes()[..HELD_TOKEN_LEN]);
    token
}

fn held_tag_input(mac: &mut HmacSha256, token: &[u8; HELD_TOKEN_LEN], query: &QueryHash) {
    mac.update(b"shape.cursor.held\0");
    mac.update(&[VERSION_HELD]);
    mac.update(token);
    mac.update(query.as_bytes());
}

fn held_tag(mut mac: HmacSha256, token: &[u8; HELD_TOKEN_LEN], query: &QueryHash) -> [u8; 32] {
    held_tag_input(&mut mac, token, query);
    mac.finalize().into_bytes().into()
}

/// Where a codec keeps positions server-side ([`CursorCodec::held_in`]), so a cursor is 20
/// characters whatever its keyset. Synchronous, as cursors are made while a page is sized:
/// a shared store for several replicas (`RedisCursorStore`, feature `redis`) answers from a
/// local cache and writes behind.
///
/// A page may write a position or two its sizing tried besides the one it hands out; they
/// age out as any other.
pub trait CursorStore: Send + Sync + fmt::Debug {
    /// Keeps `body` (an encoded position) under `token`; `issued_at_unix` is when the cursor
    /// was issued (a store may use it; the codec checks it against its maximum age).
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64);
    /// The body kept under `token`, unless it expired or was evicted.
    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>>;
}

impl<S: CursorStore + ?Sized> CursorStore for Arc<S> {
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64) {
        (**self).put(token, body, issued_at_unix);
    }

    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>> {
        (**self).get(token)
    }
}

/// An in-process [`CursorStore`]: at most `capacity` positions and
/// [`max_bytes`](Self::max_bytes) of them (64 MiB unless set; the oldest goes first), each
/// for `ttl`. Its `Debug` shows the settings and how many positions it holds, never the
/// positions.
pub struct MemoryCursorStore {
    capacity: usize,
    max_bytes: usize,
    ttl_secs: u64,
    held: std::sync::Mutex<HeldPositions>,
}

/// The bytes of positions a [`MemoryCursorStore`] holds unless told otherwise.
const MEMORY_STORE_MAX_BYTES: usize = 64 << 20;

#[derive(Default)]
struct HeldPositions {
    /// Each token's body, the time it was put and the sequence number of its latest put.
    by_token: std::collections::HashMap<[u8; HELD_TOKEN_LEN], (Vec<u8>, u64, u64)>,
    /// Puts in order: token, sequence number, time put (a token put again appears twice; only
    /// its latest put, by sequence number, removes it).
    order: std::collections::VecDeque<([u8; HELD_TOKEN_LEN], u64, u64)>,
    next_seq: u64,
    /// The bytes of the bodies in `by_token`.
    bytes: usize,
}

impl HeldPositions {
    /// Whether the queue entry `(token, seq)` is the token's latest put (else it is stale).
    fn is_live(&self, token: &[u8; HELD_TOKEN_LEN], seq: u64) -> bool {
        self.by_token.get(token).is_some_and(|e| e.2 == seq)
    }
}

impl MemoryCursorStore {
    /// A store of at most `capacity` positions (at least 1), each kept for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        MemoryCursorStore {
            capacity: capacity.max(1),
            max_bytes: MEMORY_STORE_MAX_BYTES,
            ttl_secs: ttl.as_secs(),
            held: Default::default(),
        }
    }

    /// Holds at most `max_bytes` of positions (64 MiB by default): past it, the oldest are
    /// forgotten first. A position is a few dozen bytes plus its rank key and id, so the
    /// bound matters only where keys are long; a position larger than the whole bound is not
    /// held, and its cursor reads as [`CursorError::Forgotten`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolshape::cursor::{CursorCodec, CursorKeys, Keyset, MemoryCursorStore, QueryHash};
    /// use toolshape::Order;
    ///
    /// let store = std::sync::Arc::new(
    ///     MemoryCursorStore::new(10_000, Duration::from_secs(3_600)).max_bytes(10_000),
    /// );
    /// let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?)
    ///     .held_in(store.clone());
    /// let query = QueryHash::of("search_pages", &serde_json::json!({}))?;
    /// for page in 0..10 {
    ///     let id = format!("{page}-{}", "x".repeat(3_000));
    ///     codec.encode(&Keyset { rank: None, id: Some(id), order: Order::Asc }, 20, &query);
    /// }
    /// assert_eq!(store.len(), 3); // 3 positions of about 3 KB fit in 10,000 bytes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_bytes(self, max_bytes: usize) -> Self {
        MemoryCursorStore { max_bytes, ..self }
    }

    /// How many positions are held.
    pub fn len(&self) -> usize {
        self.held.lock().map_or(0, |h| h.by_token.len())
    }

    /// Whether no position is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for MemoryCursorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryCursorStore")
            .field("capacity", &self.capacity)
            .field("max_bytes", &self.max_bytes)
            .field("ttl_secs", &self.ttl_secs)
            .field("held", &self.len())
            .finish()
    }
}

impl CursorStore for MemoryCursorStore {
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        let now = unix_now();
        let seq = held.next_seq;
        held.next_seq = seq.wrapping_add(1);
        // Kept for the store's time to live from now; the codec checks the issue time
        // against its own maximum age.
        let _ = issued_at_unix;
        held.bytes = held.bytes.saturating_add(body.len());
        if let Some((replaced, _, _)) = held.by_token.insert(token, (body, now, seq)) {
            held.bytes = held.bytes.saturating_sub(replaced.len());
        }
        held.order.push_back((token, seq, now));
        // Drop what expired, then the oldest while over capacity. An entry of a token put
        // again since is stale: it goes without removing anything.
        while let Some(&(oldest, seq, put_at)) = held.order.front() {
            let live = held.is_live(&oldest, seq);
            let expired = now.saturating_sub(put_at) > self.ttl_secs;
            if live
                && !expired
                && held.by_token.len() <= self.capacity
                && held.bytes <= self.max_bytes
            {
                break;
            }
            held.order.pop_front();
            if live && let Some((body, _, _)) = held.by_token.remove(&oldest) {
                held.bytes = held.bytes.saturating_sub(body.len());
            }
        }
        // Stale entries behind the oldest live one (positions put again and again, as every
        // page's sizing does) are dropped once they outnumber the positions three to one: the
        // count bound is of positions, never of puts.
        if held.order.len() > 4 * self.capacity {
            let mut order = std::mem::take(&mut held.order);
            order.retain(|(token, seq, _)| held.is_live(token, *seq));
            held.order = order;
        }
    }

    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>> {
        let held = self.held.lock().ok()?;
        let (body, put_at, _) = held.by_token.get(token)?;
        (unix_now().saturating_sub(*put_at) <= self.ttl_secs).then(|| body.clone())
    }
}

/// Where a body of either version carries the query fingerprint.
fn fingerprint_in(body: &[u8]) -> Option<&[u8]> {
    match *body.first()? {
        VERSION => body.get(2..HEADER_LEN),
        VERSION_2 => body.get(3..HEADER_2_LEN),
        _ => None,
    }
}

/// The rank key's tag and the bytes written for it.
fn rank_tag(rank: Option<&KeyValue>) -> u8 {
    match rank {
        None => RANK_NONE,
        Some(KeyValue::Null) => RANK_NULL,
        Some(KeyValue::Bool(false)) => RANK_FALSE,
        Some(KeyValue::Bool(true)) => RANK_TRUE,
        Some(KeyValue::Int(_)) => RANK_INT,
        Some(KeyValue::UInt(_)) => RANK_UINT,
        Some(KeyValue::Float(_)) => RANK_FLOAT,
        Some(KeyValue::Str(_)) => RANK_STR,
    }
}

/// A version 2 body for `position`, bound to `query` by its fingerprint (the tag, made
/// after, binds it whole): version, flags, extensions, fingerprint, issue time, count shown,
/// [count skipped], [rank key], [id], [upstream page and skip], [handle].
fn position_body(position: &Position, query: &QueryHash) -> Vec<u8> {
    let keyset = &position.keyset;
    let mut out = Vec::with_capacity(64);
    out.push(VERSION_2);
    out.push(0); // flags, filled in below
    out.push(0); // extensions, filled in below
    out.extend_from_slice(&query.fingerprint());
    put_varint(&mut out, position.issued_at_unix);
    put_varint(&mut out, position.shown);
    let mut ext = 0;
    if position.skipped > 0 {
        ext |= EXT_SKIPPED;
        put_varint(&mut out, position.skipped);
    }
    let mut flags = 0;
    if keyset.order == Order::Desc {
        flags |= FLAG_DESC;
    }
    match &keyset.rank {
        Some(KeyValue::Int(v)) => put_varint(&mut out, zigzag(*v)),
        Some(KeyValue::UInt(v)) => put_varint(&mut out, *v),
        Some(KeyValue::Float(v)) => out.extend_from_slice(&v.to_le_bytes()),
        Some(KeyValue::Str(s)) => put_bytes(&mut out, s.as_bytes()),
        None | Some(KeyValue::Null | KeyValue::Bool(_)) => {}
    }
    flags |= rank_tag(keyset.rank.as_ref()) << RANK_SHIFT;
    if let Some(id) = &keyset.id {
        flags |= FLAG_ID;
        match split_uuid(id) {
            Some((prefix, uuid)) => {
                flags |= FLAG_ID_UUID;
                put_bytes(&mut out, prefix.as_bytes());
                out.extend_from_slice(&uuid);
            }
            None => put_bytes(&mut out, id.as_bytes()),
        }
    }
    if let Some(upstream) = &position.upstream {
        flags |= FLAG_UPSTREAM;
        match &upstream.page {
            None => put_varint(&mut out, 0),
            Some(page) => {
                put_varint(&mut out, (page.len() as u64).saturating_add(1));
                out.extend_from_slice(page.as_bytes());
            }
        }
        put_varint(&mut out, upstream.skip);
    }
    if let Some(handle) = &position.handle {
        ext |= EXT_HANDLE;
        out.extend_from_slice(handle.as_bytes());
    }
    out[1] = flags;
    out[2] = ext;
    out
}

/// The length of [`position_body`]'s answer, without writing it.
fn position_body_len(position: &Position) -> usize {
    let keyset = &position.keyset;
    let bytes_len = |n: usize| varint_len(n as u64) + n;
    let mut len = HEADER_2_LEN + varint_len(position.issued_at_unix) + varint_len(position.shown);
    if position.skipped > 0 {
        len += varint_len(position.skipped);
    }
    len += match &keyset.rank {
        Some(KeyValue::Int(v)) => varint_len(zigzag(*v)),
        Some(KeyValue::UInt(v)) => varint_len(*v),
        Some(KeyValue::Float(_)) => 8,
        Some(KeyValue::Str(s)) => bytes_len(s.len()),
        None | Some(KeyValue::Null | KeyValue::Bool(_)) => 0,
    };
    if let Some(id) = &keyset.id {
        len += match split_uuid(id) {
            Some((prefix, _)) => bytes_len(prefix.len()) + 16,
            None => bytes_len(id.len()),
        };
    }
    if let Some(upstream) = &position.upstream {
        len += match &upstream.page {
            None => 1,
            Some(page) => varint_len((page.len() as u64).saturating_add(1)) + page.len(),
        };
        len += varint_len(upstream.skip);
    }
    if position.handle.is_some() {
        len += crate::store::HANDLE_BYTES;
    }
    len
}

/// Parses a verified body of either version; `None` if it does not follow the format.
fn parse_body(body: &[u8]) -> Option<Position> {
    let version = *body.first()?;
    let flags = *body.get(1)?;
    if flags & FLAG_UNUSED != 0 {
        return None;
    }
    let (ext, header) = match version {
        VERSION => (0, HEADER_LEN),
        VERSION_2 => (*body.get(2)?, HEADER_2_LEN),
        _ => return None,
    };
    if ext & EXT_UNUSED != 0 {
        return None;
    }
    let mut r = Reader {
        rest: body.get(header..)?,
    };
    let issued_at_unix = r.varint()?;
    let shown = r.varint()?;
    let skipped = if ext & EXT_SKIPPED != 0 {
        // Written only when some were skipped: a zero here was never written.
        Some(r.varint()?).filter(|&n| n > 0)?
    } else {
        0
    };
    let rank = match (flags & RANK_MASK) >> RANK_SHIFT {
        RANK_NONE => None,
        RANK_NULL => Some(KeyValue::Null),
        RANK_FALSE => Some(KeyValue::Bool(false)),
        RANK_TRUE => Some(KeyValue::Bool(true)),
        RANK_INT => Some(KeyValue::Int(unzigzag(r.varint()?))),
        RANK_UINT => Some(KeyValue::UInt(r.varint()?)),
        RANK_FLOAT => Some(KeyValue::Float(f64::from_le_bytes(r.array()?))),
        RANK_STR => Some(KeyValue::Str(r.string()?)),
        _ => return None,
    };
    let id = match (flags & FLAG_ID != 0, flags & FLAG_ID_UUID != 0) {
        (false, false) => None,
        (false, true) => return None,
        (true, false) => Some(r.string()?),
        (true, true) => {
            let mut id = r.string()?;
            push_uuid(&mut id, r.array()?);
            Some(id)
        }
    };
    let upstream = if flags & FLAG_UPSTREAM != 0 {
        let page = match usize::try_from(r.varint()?).ok()? {
            0 => None,
            len => Some(String::from_utf8(r.take(len - 1)?.to_vec()).ok()?),
        };
        Some(UpstreamPosition {
            page,
            skip: r.varint()?,
        })
    } else {
        None
    };
    let handle = if ext & EXT_HANDLE != 0 {
        Some(crate::store::Handle::from_bytes(r.array()?))
    } else {
        None
    };
    if !r.rest.is_empty() {
        return None;
    }
    let order = if flags & FLAG_DESC != 0 {
        Order::Desc
    } else {
        Order::Asc
    };
    Some(Position {
        keyset: Keyset { rank, id, order },
        shown,
        skipped,
        issued_at_unix,
        upstream,
        handle,
    })
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// LEB128, at most 10 bytes, no overflow.
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.take(1)?.first()?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn string(&mut self) -> Option<String> {
        let len = usize::try_from(self.varint()?).ok()?;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes [`put_varint`] writes for `v`.
fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

const UUID_LEN: usize = 36;

/// Splits an id ending in a canonical lowercase UUID into its prefix and the UUID's bytes,
/// so the cursor carries 16 bytes instead of 36 characters. Anything else stays text.
fn split_uuid(id: &str) -> Option<(&str, [u8; 16])> {
    let start = id.len().checked_sub(UUID_LEN)?;
    let (prefix, uuid) = (id.get(..start)?, id.get(start..)?.as_bytes());
    let mut out = [0u8; 16];
    let mut nibbles = 0;
    for (i, &c) in uuid.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        let byte = out.get_mut(nibbles / 2)?;
        *byte |= if nibbles % 2 == 0 { v << 4 } else { v };
        nibbles += 1;
    }
    Some((prefix, out))
}

fn push_uuid(id: &mut String, uuid: [u8; 16]) {
    use std::fmt::Write as _;
    for (i, b) in uuid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            id.push('-');
        }
        let _ = write!(id, "{b:02x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> CursorCodec {
        CursorCodec::new(CursorKeys::new([7u8; 32]).unwrap_or_else(|e| panic!("{e}")))
    }

    #[test]
    fn varints_round_trip_at_the_edges() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(Reader { rest: &out }.varint(), Some(v), "{v}");
        }
        for v in [0, 1, -1, i64::MIN, i64::MAX, 1_740_000_000_000_000_000] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        // Eleven continuation bytes, and a tenth byte that would overflow: refused.
        assert_eq!(Reader { rest: &[0xff; 11] }.varint(), None);
        let mut overflow = vec![0xff; 9];
        overflow.push(0x02);
        assert_eq!(Reader { rest: &overflow }.varint(), None);
    }

    #[test]
    fn uuid_ids_pack_and_unpack_exactly() {
        let id = "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90";
        let (prefix, bytes) = split_uuid(id).unwrap_or_else(|| panic!("not packed"));
        let mut back = prefix.to_owned();
        push_uuid(&mut back, bytes);
        assert_eq!(back, id);
        // Uppercase, wrong dashes or non-hex stay text so decoding gives back the same id.
        for id in [
            "tkt_9F3A71C4-2D18-4B6E-9C05-8AB3F2E17D90",
            "tkt_9f3a71c42d18-4b6e-9c05-8ab3f2e17d90-",
            "tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d9g",
            "short",
            "ééééééééééééééééééééééééééééééééééééé",
        ] {
            assert!(split_uuid(id).is_none(), "{id}");
        }
    }

    #[test]
    fn every_rank_kind_round_trips() {
        let query = QueryHash([3; 32]);
        let ranks = [
            None,
            Some(KeyValue::Null),
            Some(KeyValue::Bool(false)),
            Some(KeyValue::Bool(true)),
            Some(KeyValue::Int(-5)),
            Some(KeyValue::UInt(u64::MAX)),
            Some(KeyValue::Float(-0.25)),
            Some(KeyValue::Str("2025-03-01T10:00:00Z".into())),
        ];
        for rank in ranks {
            for id in [
                None,
                Some("x".to_owned()),
                Some("a-00000000-0000-0000-0000-000000000000".to_owned()),
            ] {
                for order in [Order::Asc, Order::Desc] {
                    let keyset = Keyset {
                        rank: rank.clone(),
                        id: id.clone(),
                        order,
                    };
                    let text = codec().encode_at(&keyset, 41, &query, 1_700_000_000);
                    let position = codec().decode_at(&text, &query, 1_700_000_000);
                    assert_eq!(
                        position,
                        Ok(Position {
                            keyset,
                            shown: 41,
                            skipped: 0,
                            issued_at_unix: 1_700_000_000,
                            upstream: None,
                            handle: None,
                        })
                    );
                }
            }
        }
    }

    #[test]
    fn unused_flag_bits_and_trailing_bytes_are_refused_even_when_signed() {
        let query = QueryHash([1; 32]);
        let keyset = Keyset {
            rank: Some(KeyValue::Int(1)),
            id: Some("a".into()),
            order: Order::Asc,
        };
        let text = codec().encode_at(&keyset, 1, &query, 5);
        let bytes = crate::digits::decode(&text[1..]).unwrap_or_default();
        let body = &bytes[..bytes.len() - TAG_LEN];
        let resign = |body: &[u8]| codec().sign_raw(body, &query);
        let mut flagged = body.to_vec();
        flagged[1] |= 0x80;
        assert_eq!(
            codec().decode_at(&resign(&flagged), &query, 5),
            Err(CursorError::Malformed)
        );
        // An extension bit no version knows, and a skipped count of zero (never written).
        let mut extended = body.to_vec();
        extended[2] |= 0x80;
        assert_eq!(
            codec().decode_at(&resign(&extended), &query, 5),
            Err(CursorError::Malformed)
        );
        let mut zero_skipped = body.to_vec();
        zero_skipped[2] |= EXT_SKIPPED;
        zero_skipped.insert(HEADER_2_LEN + 2, 0);
        assert_eq!(
            codec().decode_at(&resign(&zero_skipped), &query, 5),
            Err(CursorError::Malformed)
        );
        let mut longer = body.to_vec();
        longer.push(0);
        assert_eq!(
            codec().decode_at(&resign(&longer), &query, 5),
            Err(CursorError::Malformed)
        );
        assert!(codec().decode_at(&resign(body), &query, 5).is_ok());
    }

    #[test]
    fn upstream_positions_round_trip_and_refuse_what_does_not_parse() {
        let query = QueryHash([9; 32]);
        for page in [
            None,
            Some(String::new()),
            Some("https://api.github.com/repos/o/r/issues?page=3&per_page=30".to_owned()),
            Some("é".repeat(MAX_UPSTREAM_BYTES / 2)),
        ] {
            for skip in [0, 1, 29, u64::MAX] {
                let at = UpstreamPosition {
                    page: page.clone(),
                    skip,
                };
                let text = codec().encode_upstream_at(&at, 7, &query, 11);
                assert!(text.len() <= MAX_CURSOR_CHARS, "{}", text.len());
                let position = codec().decode_at(&text, &query, 11);
                assert_eq!(
                    position,
                    Ok(Position {
                        keyset: Keyset::start(Order::Asc),
                        shown: 7,
                        skipped: 0,
                        issued_at_unix: 11,
                        upstream: Some(at),
                        handle: None,
                    })
                );
            }
        }
        // A signed body whose continuation runs past the end, or is not UTF-8, is refused.
        let at = UpstreamPosition {
            page: Some("abc".into()),
            skip: 2,
        };
        let text = codec().encode_upstream_at(&at, 7, &query, 11);
        let bytes = crate::digits::decode(&text[1..]).unwrap_or_default();
        let body = &bytes[..bytes.len() - TAG_LEN];
        let resign = |body: &[u8]| codec().sign_raw(body, &query);
        let page_at = body.len() - 5; // length byte, "abc", skip
        let mut long = body.to_vec();
        long[page_at] = 40;
        let mut invalid = body.to_vec();
        invalid[page_at + 1] = 0xff;
        for bad in [long, invalid, body[..body.len() - 1].to_vec()] {
            assert_eq!(
                codec().decode_at(&resign(&bad), &query, 11),
                Err(CursorError::Malformed)
            );
        }
        assert!(codec().decode_at(&resign(body), &query, 11).is_ok());
    }

    #[test]
    fn a_cursor_of_the_first_format_still_reads_and_the_format_now_is_pinned() {
        let query = QueryHash([5; 32]);
        let keyset = Keyset {
            rank: Some(KeyValue::Str("2025-03-01".into())),
            id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
            order: Order::Desc,
        };
        let position = Position {
            keyset: keyset.clone(),
            shown: 20,
            skipped: 0,
            issued_at_unix: 1_700_000_000,
            upstream: None,
            handle: None,
        };
        // Issued by version 1 (base64url, no extension byte): still read.
        let first =
            "AT8FBQUFgOLPqgYUCjIwMjUtMDMtMDEEdGt0X586ccQtGEtunAWKs_LhfZC74U954UKP7jx_p0d3qkyp";
        assert_eq!(
            codec().decode_at(first, &query, 1_700_000_000),
            Ok(position.clone())
        );
        // Written now: version 2 as digits. A change to this text is a change of format.
        let now = codec().encode_at(&keyset, 20, &query, 1_700_000_000);
        assert_eq!(now, PINNED_V2);
        assert_eq!(codec().decode_at(&now, &query, 1_700_000_000), Ok(position));
    }

    const PINNED_V2: &str = "c00632219270186245362781785575966821412674103418475512719361038248820269151961531138802123223964022885063469927346144858611983934087342390371350503631";

    #[test]
    fn sql_columns_must_be_identifiers() {
        for ok in ["id", "t.updated_at", "\"Updated At\"", "_x1"] {
            assert_eq!(checked_column(ok), Ok(ok));
        }
        for bad in [
            "",
            "id; drop table t",
            "a.",
            "1a",
            "\"\"",
            "\"a\"b\"",
            "a -- x",
            "a,b",
        ] {
            assert!(checked_column(bad).is_err(), "{bad}");
        }
    }
}
