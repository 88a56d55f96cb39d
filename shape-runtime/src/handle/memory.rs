//! The embedded default store, [`MemoryStore`]: a byte cap, a per-result cap, a time to
//! live, least-recently-used eviction, and tombstones that tell an expired or evicted handle
//! from one that never was; and the [`Clock`] its expiry reads.

use super::store::{HandlePolicy, HandleStore, StoredResult};
use crate::handle::id::{Handle, HandleError};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
#[cfg(any(test, feature = "test-seams"))]
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};
#[cfg(any(test, feature = "test-seams"))]
use std::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

/// The time, for expiry. Inject a [`ManualClock`] in tests.
pub trait Clock: fmt::Debug + Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_unix_ms(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

#[cfg(any(test, feature = "test-seams"))]
/// A clock that moves only when told to; clones share the time.
///
/// ```
/// use toolshape::__seams::handle::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(1_000);
/// clock.clone().advance(Duration::from_secs(2));
/// assert_eq!(clock.now_unix_ms(), 3_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

#[cfg(any(test, feature = "test-seams"))]
impl ManualClock {
    /// A clock reading `start_unix_ms`.
    pub fn new(start_unix_ms: u64) -> Self {
        ManualClock(Arc::new(AtomicU64::new(start_unix_ms)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .0
            .fetch_update(AtomicOrdering::SeqCst, AtomicOrdering::SeqCst, |t| {
                Some(t.saturating_add(ms))
            });
    }
}

#[cfg(any(test, feature = "test-seams"))]
impl Clock for ManualClock {
    fn now_unix_ms(&self) -> u64 {
        self.0.load(AtomicOrdering::SeqCst)
    }
}

/// Counters of a [`MemoryStore`]. Every result stored is, at any moment, in exactly one of
/// present, evicted, expired or removed: `created == present + evicted + expired + removed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Results stored.
    pub created: u64,
    /// Results held now.
    pub present: u64,
    /// Bytes held now (JSON length).
    pub bytes: usize,
    /// Results removed to stay under the byte cap, least recently used first.
    pub evicted: u64,
    /// Results dropped after their time to live.
    pub expired: u64,
    /// Results removed by [`HandleStore::remove`].
    pub removed: u64,
    /// Results refused as too large.
    pub rejected: u64,
    /// Expired or evicted handles remembered, to say why they are gone.
    pub tombstones: usize,
}

/// The embedded store: in process, bounded in bytes, least recently used evicted first,
/// expired results dropped, safe to share between threads (one short `std` mutex hold per
/// call, never across an await).
///
/// Expired and evicted handles leave a tombstone (owner, tool) so a late reader is told
/// what happened; tombstones are bounded in number, oldest forgotten first.
#[derive(Debug)]
pub struct MemoryStore {
    max_bytes: usize,
    max_tombstones: usize,
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Handle, Entry>,
    /// Use tick → handle; the first is the least recently used.
    recency: BTreeMap<u64, Handle>,
    /// (expiry ms, put tick) → handle; the first expires soonest.
    expiry: BTreeMap<(u64, u64), Handle>,
    tick: u64,
    tombstones: HashMap<Handle, Tombstone>,
    tombstone_order: VecDeque<Handle>,
    stats: StoreStats,
}

#[derive(Debug)]
struct Entry {
    owner: String,
    result: Arc<StoredResult>,
    bytes: usize,
    used: u64,
    expires: (u64, u64),
    ttl_secs: u64,
}

#[derive(Debug)]
struct Tombstone {
    owner: String,
    tool: String,
    why: Gone,
}

#[derive(Debug, Clone, Copy)]
enum Gone {
    Expired { ttl_secs: u64 },
    Evicted,
}

impl MemoryStore {
    /// A store holding at most `max_bytes` of results (their JSON length), on the system
    /// clock, remembering up to 10,000 expired or evicted handles.
    pub fn new(max_bytes: usize) -> Self {
        MemoryStore {
            max_bytes,
            max_tombstones: 10_000,
            clock: Arc::new(SystemClock),
            inner: Mutex::new(Inner::default()),
        }
    }

    #[cfg(any(test, feature = "test-seams"))]
    /// The same store reading time from `clock`.
    pub fn with_clock(self, clock: impl Clock) -> Self {
        MemoryStore {
            clock: Arc::new(clock),
            ..self
        }
    }

    /// Remembers at most `max` expired or evicted handles (0: none, and such handles are
    /// simply "not found").
    pub fn with_max_tombstones(self, max: usize) -> Self {
        MemoryStore {
            max_tombstones: max,
            ..self
        }
    }

    /// The counters now (expired results are counted once the store next looks at them).
    pub fn stats(&self) -> StoreStats {
        let mut inner = self.lock();
        inner.purge_expired(self.clock.now_unix_ms(), self.max_tombstones);
        let mut stats = inner.stats;
        stats.present = inner.entries.len() as u64;
        stats.tombstones = inner.tombstones.len();
        stats
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the maps consistent (every update
        // is a few infallible steps), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn put_now(
        &self,
        owner: &str,
        result: StoredResult,
        policy: &HandlePolicy,
    ) -> Result<Handle, HandleError> {
        let bytes = result.json_len();
        let max_bytes = policy.max_bytes_per_payload.min(self.max_bytes);
        if bytes > max_bytes {
            self.lock().stats.rejected += 1;
            return Err(HandleError::TooLarge { bytes, max_bytes });
        }
        let mut handle = Handle::random()?;
        let now = self.clock.now_unix_ms();
        let ttl_ms = policy.ttl_secs.saturating_mul(1_000);

        let mut inner = self.lock();
        inner.purge_expired(now, self.max_tombstones);
        while inner.entries.contains_key(&handle) || inner.tombstones.contains_key(&handle) {
            handle = Handle::random()?;
        }
        while inner.stats.bytes.saturating_add(bytes) > self.max_bytes {
            let Some((_, oldest)) = inner.recency.pop_first() else {
                break;
            };
            inner.drop_entry(oldest, Some(Gone::Evicted), self.max_tombstones);
        }
        inner.tick += 1;
        let tick = inner.tick;
        let expires = (now.saturating_add(ttl_ms), tick);
        inner.recency.insert(tick, handle);
        inner.expiry.insert(expires, handle);
        inner.entries.insert(
            handle,
            Entry {
                owner: owner.to_owned(),
                result: Arc::new(result),
                bytes,
                used: tick,
                expires,
                ttl_secs: policy.ttl_secs,
            },
        );
        inner.stats.bytes += bytes;
        inner.stats.created += 1;
        Ok(handle)
    }

    fn get_now(&self, owner: &str, handle: &Handle) -> Result<Arc<StoredResult>, HandleError> {
        let mut inner = self.lock();
        inner.purge_expired(self.clock.now_unix_ms(), self.max_tombstones);
        inner.tick += 1;
        let tick = inner.tick;
        let Inner {
            entries,
            recency,
            tombstones,
            ..
        } = &mut *inner;
        if let Some(entry) = entries.get_mut(handle).filter(|e| e.owner == owner) {
            recency.remove(&entry.used);
            recency.insert(tick, *handle);
            entry.used = tick;
            return Ok(Arc::clone(&entry.result));
        }
        match tombstones.get(handle).filter(|t| t.owner == owner) {
            Some(t) => Err(match t.why {
                Gone::Expired { ttl_secs } => HandleError::Expired {
                    tool: t.tool.clone(),
                    ttl_secs,
                },
                Gone::Evicted => HandleError::Evicted {
                    tool: t.tool.clone(),
                },
            }),
            None => Err(HandleError::NotFound),
        }
    }

    fn remove_now(&self, owner: &str, handle: &Handle) -> bool {
        let mut inner = self.lock();
        inner.purge_expired(self.clock.now_unix_ms(), self.max_tombstones);
        if inner.entries.get(handle).is_some_and(|e| e.owner == owner) {
            inner.drop_entry(*handle, None, self.max_tombstones);
            inner.stats.removed += 1;
            true
        } else {
            false
        }
    }
}

impl Default for MemoryStore {
    /// 64 MiB.
    fn default() -> Self {
        MemoryStore::new(64 << 20)
    }
}

impl Inner {
    fn purge_expired(&mut self, now_ms: u64, max_tombstones: usize) {
        while let Some(entry) = self.expiry.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            let handle = entry.remove();
            let ttl_secs = self.entries.get(&handle).map_or(0, |e| e.ttl_secs);
            self.drop_entry(handle, Some(Gone::Expired { ttl_secs }), max_tombstones);
        }
    }

    /// Removes an entry from every index, leaving a tombstone saying why.
    fn drop_entry(&mut self, handle: Handle, why: Option<Gone>, max_tombstones: usize) {
        let Some(entry) = self.entries.remove(&handle) else {
            return;
        };
        self.recency.remove(&entry.used);
        self.expiry.remove(&entry.expires);
        self.stats.bytes = self.stats.bytes.saturating_sub(entry.bytes);
        let Some(why) = why else { return };
        match why {
            Gone::Expired { .. } => self.stats.expired += 1,
            Gone::Evicted => self.stats.evicted += 1,
        }
        if max_tombstones == 0 {
            return;
        }
        while self.tombstone_order.len() >= max_tombstones {
            if let Some(old) = self.tombstone_order.pop_front() {
                self.tombstones.remove(&old);
            }
        }
        let tool = entry.result.tool.clone();
        self.tombstones.insert(
            handle,
            Tombstone {
                owner: entry.owner,
                tool,
                why,
            },
        );
        self.tombstone_order.push_back(handle);
    }
}

impl HandleStore for MemoryStore {
    async fn put(
        &self,
        owner: &str,
        result: StoredResult,
        policy: &HandlePolicy,
    ) -> Result<Handle, HandleError> {
        self.put_now(owner, result, policy)
    }

    async fn get(&self, owner: &str, handle: &Handle) -> Result<Arc<StoredResult>, HandleError> {
        self.get_now(owner, handle)
    }

    async fn remove(&self, owner: &str, handle: &Handle) -> Result<bool, HandleError> {
        Ok(self.remove_now(owner, handle))
    }
}
