//! What a cursor says: the position a page continues from ([`Position`], [`Continuation`],
//! [`UpstreamPosition`]) and the form it takes ([`CursorForm`]); the codec's `Cursors` makes
//! one from a page's continuation.

use super::keyset::Keyset;
use crate::fields::rank::{KeyValue, Order};
use std::time::{SystemTime, UNIX_EPOCH};

/// What the next page continues after: the last record's rank key and id, and how many
/// records the pages so far have shown. Records in the caller's order or without an id
/// continue by count alone: `rank` and `id` are then `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation<'a> {
    /// The rank key of the last record this page covers.
    pub rank: Option<KeyValue>,
    /// Its id.
    pub id: Option<crate::fields::ids::IdKey<'a>>,
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
    pub handle: Option<crate::handle::id::Handle>,
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
    /// Kept on the server ([`CursorCodec::held_in`](crate::cursor::CursorCodec::held_in)'s store, else the codec's own memory) and
    /// named by a short cursor of [`HELD_CURSOR_CHARS`](crate::cursor::codec::HELD_CURSOR_CHARS) characters, whatever the position
    /// holds. A page asks for it only when the signed cursor would crowd out a record.
    Held,
}

/// Makes the `next` cursor from where the page stops.
#[cfg(any(test, feature = "test-seams"))]
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
    pub handle: Option<crate::handle::id::Handle>,
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
/// use std::sync::Arc;
/// use toolshape::cursor::{CursorCodec, CursorKeys, QueryHash, UpstreamPosition};
/// use toolshape::Shaper;
///
/// let codec = Arc::new(CursorCodec::new(CursorKeys::new(b"a key of at least sixteen bytes")?));
/// let query = QueryHash::of("list_issues", &serde_json::json!({"repo": "o/r"}))?;
/// let at = UpstreamPosition { page: Some("https://api.example/issues?page=3".into()), skip: 12 };
/// let cursor = codec.encode_upstream(&at, 72, &query);
/// // The next call reads it back: which upstream page to fetch, and what to skip in it.
/// let call = Shaper::for_tool("list_issues").call().paginate(codec, query, Some(&cursor))?;
/// assert_eq!(call.upstream_position(), at);
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

/// Seconds since the Unix epoch, now (0 on a clock before it).
pub(super) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
