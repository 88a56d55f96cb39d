//! The codec ([`CursorCodec`]): a position signed into a cursor of digits, or held on the
//! server and named by a short one, and read back with every check; and how a page makes its
//! cursor (`Cursors`: the codec's, sized without being made, or the tool's own function).

use super::error::CursorError;
use super::held::{
    CursorStore, HELD_TOKEN_LEN, MemoryCursorStore, OVERFLOW_CAPACITY, OVERFLOW_MAX_BYTES,
    OVERFLOW_TTL, process_memory,
};
use super::keys::{CursorKeys, HmacSha256, QueryHash};
use super::keyset::Keyset;
#[cfg(any(test, feature = "test-seams"))]
use super::position::CursorFn;
use super::position::{Continuation, CursorForm, Position, UpstreamPosition, unix_now};
use super::wire::*;
use crate::fields::rank::Order;
use crate::record::tool_result::ToolResult;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac;
use std::sync::Arc;
use std::time::Duration;

/// Format version of a server-held cursor: the version, a token naming the position in the
/// store, and a tag.
pub(super) const VERSION_HELD: u8 = 3;
/// A held cursor's tag: HMAC-SHA256 over the token and the whole query hash, truncated to 48
/// bits. The tag only has to make an altered or rebound cursor fail, never to resist offline
/// search (checking a guess takes the key): each guess is a tool call, so 2^-48 a guess is
/// thousands of years of calls at a thousand a second, and the token a forger must also
/// present is 64 bits of HMAC the store holds. Digits cost a model one token per 10 bits, so
/// the 24 bits below 72 save every page with a held cursor two or three tokens.
pub(super) const HELD_TAG_LEN: usize = 6;
/// Bytes of a held cursor: 1 + 8 + 6 = 15.
pub(super) const HELD_LEN: usize = 1 + HELD_TOKEN_LEN + HELD_TAG_LEN;
/// Characters of a held cursor: the prefix and 37 digits (13 tokens of digits).
pub const HELD_CURSOR_CHARS: usize = 1 + crate::text::digits::encoded_len(HELD_LEN);
/// Longer input is refused before decoding (a real cursor is ~100 characters plus the ids).
/// A position whose signed cursor would be longer (a key of over about 3,000 bytes) is held
/// on the server instead ([`CursorCodec`]'s overflow), so every cursor handed out is read back.
pub(super) const MAX_CURSOR_CHARS: usize = 4096;

/// Encodes and decodes cursors with one set of keys.
///
/// A cursor is the letter `c` and decimal digits (seven bytes to seventeen digits: a
/// cursor's tokens depend on its length alone) over a compact binary record — format
/// version, order, extensions, query fingerprint, issue time, count shown, count skipped,
/// rank key, id (a trailing lowercase UUID is packed into 16 bytes), for an upstream cursor
/// (flag bit 6) the upstream's continuation and the count of its page to skip, and the
/// walk's handle — followed by HMAC-SHA256 truncated to 16 bytes over the record and the
/// full [`QueryHash`].
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
/// use std::sync::Arc;
/// use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, Keyset, QueryHash};
/// use toolshape::__seams::cursor::HELD_CURSOR_CHARS;
/// use toolshape::{fields::KeyValue, Order, Shaper};
///
/// let keys = || CursorKeys::new(b"a key of at least sixteen bytes");
/// let codec = CursorCodec::new(keys()?);
/// // Where the next call resumes, when it presents `cursor` to `codec`:
/// let resume = |codec: CursorCodec, cursor: &str, query: &QueryHash| {
///     let call = Shaper::for_tool("search_pages").call().paginate(Arc::new(codec), query.clone(), Some(cursor))?;
///     Ok::<_, CursorError>(call.after_keyset().cloned())
/// };
/// let query = QueryHash::of("search_pages", &serde_json::json!({}))?;
/// let last = Keyset {
///     rank: None,
///     id: Some(format!("https://example.org/wiki/{}", "Long_title_".repeat(400))),
///     order: Order::Asc,
/// };
/// let cursor = codec.encode(&last, 20, &query);
/// assert_eq!(cursor.len(), HELD_CURSOR_CHARS);
/// assert_eq!(resume(codec.clone(), &cursor, &query)?, Some(last.clone()));
/// // Another codec of this process reads it; one with memory of its own (as another
/// // process has) does not hold it, and says so.
/// assert_eq!(resume(CursorCodec::new(keys()?), &cursor, &query)?, Some(last));
/// let elsewhere = CursorCodec::new(keys()?).own_memory();
/// assert_eq!(resume(elsewhere, &cursor, &query), Err(CursorError::Forgotten));
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
    /// use std::{sync::Arc, time::Duration};
    /// use toolshape::cursor::{CursorCodec, CursorError, CursorKeys, Keyset, MemoryCursorStore, QueryHash};
    /// use toolshape::{fields::KeyValue, Order, Shaper};
    ///
    /// let store = MemoryCursorStore::new(10_000, Duration::from_secs(3_600));
    /// let codec = Arc::new(CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?).held_in(store));
    /// let search = Shaper::for_tool("search_tickets");
    /// let query = QueryHash::of("search_tickets", &serde_json::json!({}))?;
    /// let last = Keyset {
    ///     rank: Some(KeyValue::Str("2026-02-14T16:02:07.113Z".into())),
    ///     id: Some("tkt_9f3a71c4-2d18-4b6e-9c05-8ab3f2e17d90".into()),
    ///     order: Order::Desc,
    /// };
    /// let cursor = codec.encode(&last, 20, &query);
    /// assert_eq!(cursor.len(), toolshape::__seams::cursor::HELD_CURSOR_CHARS);
    /// let call = search.call().paginate(Arc::clone(&codec), query, Some(&cursor))?;
    /// assert_eq!(call.after_keyset(), Some(&last));
    /// let other = QueryHash::of("search_tickets", &serde_json::json!({"status": "open"}))?;
    /// let refused = search.call().paginate(codec, other, Some(&cursor)).err();
    /// assert_eq!(refused, Some(CursorError::ForeignQuery));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held_in(self, store: impl CursorStore + 'static) -> Self {
        CursorCodec {
            held: Some(Arc::new(store)),
            ..self
        }
    }

    /// The same codec signing with `keys` instead (its store and age limit kept).
    #[cfg_attr(
        not(feature = "rmcp"),
        expect(dead_code, reason = "the harness (feature `rmcp`) is its only caller")
    )]
    pub(crate) fn rekeyed(self, keys: CursorKeys) -> Self {
        CursorCodec { keys, ..self }
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
    /// use toolshape::cursor::{CursorCodec, CursorKeys, Keyset, QueryHash};
    /// use toolshape::__seams::cursor::{CursorForm, Position, Wire};
    /// use toolshape::Order;
    ///
    /// let codec = CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?);
    /// let query = QueryHash::of("search", &serde_json::json!({}))?;
    /// let position = Position { skipped: 1, ..Position::after(Keyset::start(Order::Asc), 40) };
    /// let signed = codec.encode_position(&position, &query, CursorForm::Signed);
    /// let held = codec.encode_position(&position, &query, CursorForm::Held);
    /// assert_eq!(held.len(), toolshape::__seams::cursor::HELD_CURSOR_CHARS);
    /// assert!(signed.len() > held.len());
    /// for cursor in [signed, held] {
    ///     let back = codec.decode(&cursor, &query)?;
    ///     assert_eq!((back.shown, back.skipped, back.covered()), (40, 1, 41));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub(crate) fn encode_position(
        &self,
        position: &Position,
        query: &QueryHash,
        form: CursorForm,
    ) -> String {
        let out = position_body(position, query);
        let signed_chars = 1 + crate::text::digits::encoded_len(out.len() + TAG_LEN);
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
            crate::text::digits::encode_into(&held, &mut cursor);
            return cursor;
        }
        let mut out = out;
        let tag = sign(self.keys.current.clone(), &out, query);
        out.extend_from_slice(&tag[..TAG_LEN]);
        crate::text::digits::encode_into(&out, &mut cursor);
        cursor
    }

    /// How many characters the cursor for `position` in `form` would be, without making it
    /// (nothing is signed or stored): what a page sizes its envelope with. A cursor's tokens
    /// depend on its length alone.
    pub(crate) fn encoded_len(&self, position: &Position, form: CursorForm) -> usize {
        let body = position_body_len(position);
        let signed_chars = 1 + crate::text::digits::encoded_len(body + TAG_LEN);
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
        let body = store.fetch(&token);
        if !verified {
            return Err(match body {
                Ok(Some(body)) if fingerprint_in(&body) != Some(&query.fingerprint()[..]) => {
                    CursorError::ForeignQuery
                }
                _ => CursorError::Tampered,
            });
        }
        let body = match body {
            Ok(body) => body.ok_or(CursorError::Forgotten)?,
            Err(reason) => {
                tracing::warn!(target: "shape", %reason, "a held cursor's position could not be read");
                return Err(CursorError::Unavailable);
            }
        };
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
    #[cfg(feature = "test-seams")]
    pub(crate) fn sign_raw(&self, body: &[u8], query: &QueryHash) -> String {
        let mut out = body.to_vec();
        out.extend_from_slice(&sign(self.keys.current.clone(), body, query)[..TAG_LEN]);
        let mut cursor = String::from(DIGITS_PREFIX);
        crate::text::digits::encode_into(&out, &mut cursor);
        cursor
    }

    /// Reads a cursor presented with `query`, checking its signature and age.
    pub(crate) fn decode(&self, cursor: &str, query: &QueryHash) -> Result<Position, CursorError> {
        self.decode_at(cursor, query, unix_now())
    }

    /// [`decode`](Self::decode) at the time `now_unix` (seconds since the Unix epoch).
    pub(crate) fn decode_at(
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
            Some(digits) => (crate::text::digits::decode(digits), false),
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

pub(super) fn sign(mut mac: HmacSha256, body: &[u8], query: &QueryHash) -> [u8; 32] {
    mac.update(body);
    mac.update(query.as_bytes());
    mac.finalize().into_bytes().into()
}

pub(super) fn verify(mut mac: HmacSha256, body: &[u8], query: &QueryHash, tag: &[u8]) -> bool {
    mac.update(body);
    mac.update(query.as_bytes());
    mac.verify_truncated_left(tag).is_ok()
}

pub(super) fn held_token(mut mac: HmacSha256, body: &[u8]) -> [u8; HELD_TOKEN_LEN] {
    mac.update(b"shape.cursor.token\0");
    mac.update(body);
    let mut token = [0; HELD_TOKEN_LEN];
    token.copy_from_slice(&mac.finalize().into_bytes()[..HELD_TOKEN_LEN]);
    token
}

pub(super) fn held_tag_input(
    mac: &mut HmacSha256,
    token: &[u8; HELD_TOKEN_LEN],
    query: &QueryHash,
) {
    mac.update(b"shape.cursor.held\0");
    mac.update(&[VERSION_HELD]);
    mac.update(token);
    mac.update(query.as_bytes());
}

pub(super) fn held_tag(
    mut mac: HmacSha256,
    token: &[u8; HELD_TOKEN_LEN],
    query: &QueryHash,
) -> [u8; 32] {
    held_tag_input(&mut mac, token, query);
    mac.finalize().into_bytes().into()
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
    /// A test's own (`__seams::cursor::CursorWith`).
    #[cfg(any(test, feature = "test-seams"))]
    Custom(Arc<CursorFn>),
}

impl Cursors {
    /// The cursor for `c`.
    pub(crate) fn make(&self, c: Continuation<'_>) -> String {
        match self {
            Cursors::Codec { codec, query } => codec.encode_position(&c.position(), query, c.form),
            #[cfg(any(test, feature = "test-seams"))]
            Cursors::Custom(make) => make(c),
        }
    }

    /// Text that counts as many tokens, bytes and lines as [`make`](Self::make)'s cursor for
    /// `c`: the codec's prefix and as many zeros as the cursor has digits, made without
    /// signing or storing; a tool's own function's cursor itself.
    pub(crate) fn sized(&self, c: Continuation<'_>) -> String {
        match self {
            Cursors::Codec { codec, .. } => {
                let len = codec.encoded_len(&c.position(), c.form);
                let mut text = String::with_capacity(len);
                text.push(DIGITS_PREFIX);
                text.extend(std::iter::repeat_n('0', len.saturating_sub(1)));
                text
            }
            #[cfg(any(test, feature = "test-seams"))]
            Cursors::Custom(make) => make(c),
        }
    }

    /// Whether asking for [`CursorForm::Held`] can give a shorter cursor.
    pub(crate) fn can_hold(&self) -> bool {
        matches!(self, Cursors::Codec { .. })
    }
}
