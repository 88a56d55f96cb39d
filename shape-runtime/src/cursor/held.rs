//! Positions held on the server ([`CursorStore`]): the in-process [`MemoryCursorStore`] and
//! the memory every codec of a process shares when it has no store of its own.

use super::position::unix_now;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A held cursor's token: 64 bits of HMAC over the position, so the same position under the
/// same key is the same entry, and a token is unguessable without the key.
pub const HELD_TOKEN_LEN: usize = 8;
/// Positions a codec without a store holds in the process's memory (too long for a cursor,
/// or held so that a small page keeps room for its records): at most this many, the oldest
/// forgotten first ...
pub(super) const OVERFLOW_CAPACITY: usize = 100_000;
/// ... each for a day ...
pub(super) const OVERFLOW_TTL: Duration = Duration::from_secs(86_400);
/// ... and at most this many bytes of them.
pub(super) const OVERFLOW_MAX_BYTES: usize = 64 << 20;

/// The memory every codec of the process without a store of its own holds positions in: a
/// codec made per request still reads back the positions another made (tokens are HMACs
/// under the key, so codecs of other keys neither read nor overwrite each other's).
pub(super) fn process_memory() -> Arc<MemoryCursorStore> {
    static MEMORY: std::sync::OnceLock<Arc<MemoryCursorStore>> = std::sync::OnceLock::new();
    Arc::clone(MEMORY.get_or_init(|| {
        Arc::new(
            MemoryCursorStore::new(OVERFLOW_CAPACITY, OVERFLOW_TTL).max_bytes(OVERFLOW_MAX_BYTES),
        )
    }))
}

/// Where a codec keeps positions server-side ([`CursorCodec::held_in`](crate::cursor::CursorCodec::held_in)), so a cursor is 20
/// characters whatever its keyset. Synchronous, as cursors are made while a page is sized:
/// a shared store for several replicas (`RedisCursorStore`, feature `redis`) answers from a
/// local cache first and writes each position through before its cursor is handed out.
///
/// A page may write a position or two its sizing tried besides the one it hands out; they
/// age out as any other.
pub trait CursorStore: Send + Sync + fmt::Debug {
    /// Keeps `body` (an encoded position) under `token`; `issued_at_unix` is when the cursor
    /// was issued (a store may use it; the codec checks it against its maximum age).
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64);
    /// The body kept under `token`, unless it expired or was evicted.
    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>>;
    /// [`get`](Self::get), telling a store that could not be read (`Err`, with why) from one
    /// that does not hold the position (`Ok(None)`): the cursor then reads as
    /// [`CursorError::Unavailable`](crate::cursor::CursorError::Unavailable) (try again
    /// shortly) rather than [`CursorError::Forgotten`](crate::cursor::CursorError::Forgotten)
    /// (start again). A shared store overrides it; the default is [`get`](Self::get).
    fn fetch(&self, token: &[u8; HELD_TOKEN_LEN]) -> Result<Option<Vec<u8>>, String> {
        Ok(self.get(token))
    }
}

impl<S: CursorStore + ?Sized> CursorStore for Arc<S> {
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64) {
        (**self).put(token, body, issued_at_unix);
    }

    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>> {
        (**self).get(token)
    }

    fn fetch(&self, token: &[u8; HELD_TOKEN_LEN]) -> Result<Option<Vec<u8>>, String> {
        (**self).fetch(token)
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
    /// held, and its cursor reads as [`CursorError::Forgotten`](crate::cursor::CursorError::Forgotten).
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

#[cfg(test)]
mod tests {
    use super::{CursorStore, MemoryCursorStore};
    use std::time::Duration;

    fn queued(store: &MemoryCursorStore) -> usize {
        store.held.lock().map_or(0, |h| h.order.len())
    }

    /// A position put again and again behind an older live one leaves stale queue entries
    /// (the oldest live entry stops the loop that drops them): they are dropped once the
    /// queue holds more than four entries a position of capacity, and not before, so the
    /// queue's memory is bounded and each put costs a constant amortised. Not visible
    /// through `get` or `len`: a queue that grew without bound, or was compacted at every
    /// put, would answer the same.
    #[test]
    fn stale_puts_are_dropped_past_four_entries_a_position_and_not_before() {
        for capacity in [1usize, 2, 3, 5] {
            let store = MemoryCursorStore::new(capacity, Duration::from_secs(3_600));
            let bound = 4 * capacity;
            store.put([0; 8], b"oldest".to_vec(), 0);
            assert_eq!(queued(&store), 1);
            let mut expected = 1;
            for put in 0..(3 * bound + 7) {
                store.put([1; 8], format!("again {put}").into_bytes(), 0);
                // At capacity 1 the oldest is evicted at the first put of another token,
                // and a token's stale entry is then at the front, dropped at once; above it
                // the oldest and the token put again are live (compacted, the queue is two).
                let live = 2;
                expected += 1;
                if capacity == 1 {
                    expected = 1;
                } else if expected > bound {
                    expected = live;
                }
                assert_eq!(queued(&store), expected, "capacity {capacity}, put {put}");
                assert!(queued(&store) <= bound, "capacity {capacity}, put {put}");
            }
            let last = format!("again {}", 3 * bound + 6).into_bytes();
            assert_eq!(store.get(&[1; 8]), Some(last));
            if capacity > 1 {
                assert_eq!(store.get(&[0; 8]).as_deref(), Some(&b"oldest"[..]));
            }
        }
    }
}
