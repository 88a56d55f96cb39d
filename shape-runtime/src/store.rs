//! The handle store: handles, stored results, the storage interface and the in-process
//! store. Users reach it as [`crate::handle`].

use crate::rank::Order;
use crate::record::{Field, FieldRole, Owned, Projection, RankInfo, Segment, Storage};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The name of the companion tool that reopens stored results.
pub const OPEN_RESULT: &str = "open_result";

/// Why a handle could not be stored or opened. Messages say what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandleError {
    /// Never issued, issued to another owner, removed, or not a handle at all. Deliberately
    /// the same in every case, so an owner learns nothing about other owners' handles.
    #[error(
        "no stored result has this handle: check it was copied exactly, or call the tool that \
         returned it again for a fresh handle"
    )]
    NotFound,
    /// Its time to live has passed.
    #[error(
        "this handle expired (stored results are kept for {ttl_secs}s); call {tool} again to \
         get a fresh handle"
    )]
    Expired {
        /// The tool that stored it.
        tool: String,
        /// The time to live it was stored with, in seconds.
        ttl_secs: u64,
    },
    /// Removed to make room for newer results.
    #[error(
        "this handle's result was removed to make room for newer results; call {tool} again \
         to get a fresh handle"
    )]
    Evicted {
        /// The tool that stored it.
        tool: String,
    },
    /// Larger than one stored result may be.
    #[error(
        "the result is {bytes} bytes, over the {max_bytes}-byte cap for one stored result; \
         page it with a cursor instead, or narrow the query"
    )]
    TooLarge {
        /// The result's size (its JSON serialisation).
        bytes: usize,
        /// The cap.
        max_bytes: usize,
    },
    /// The store could not do its work (no randomness, a shared store unreachable).
    #[error("the result store is unavailable ({reason}); try again shortly")]
    Unavailable {
        /// What failed.
        reason: String,
    },
}

/// A reference to a stored result: 96 random bits, shown as `h_` and 30 digits.
///
/// 96 bits, not 128: a handle is copied by a model into its next call, and digits cost one
/// token per 10 bits, so 32 bits more would cost every page that states a handle three
/// tokens. 2^96 is far beyond guessing (OWASP asks 64 bits of a session id), and a handle
/// stored with an owner opens only for that owner. Digits, not base64: a handle's tokens
/// then depend on nothing random (ten, wherever it stands), so a page that states one holds
/// the same records on every call ([`crate::digits`]). Handles of the first format (`h_` and
/// 16 base64url characters) still parse.
///
/// ```
/// use toolshape::handle::Handle;
///
/// let handle = Handle::random()?;
/// let text = handle.to_string();
/// assert_eq!(text.len(), 32);
/// assert!(text[2..].bytes().all(|b| b.is_ascii_digit()));
/// assert_eq!(text.parse::<Handle>()?, handle);
/// assert!("h_not-a-handle".parse::<Handle>().is_err());
/// # Ok::<(), toolshape::handle::HandleError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle([u8; HANDLE_BYTES]);

/// The random bytes in a handle.
pub const HANDLE_BYTES: usize = 12;

impl Handle {
    /// A fresh handle from the operating system's random source.
    pub fn random() -> Result<Self, HandleError> {
        let mut bytes = [0; HANDLE_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| HandleError::Unavailable {
            reason: format!("no randomness: {e}"),
        })?;
        Ok(Handle(bytes))
    }

    /// The handle's 12 bytes, for a store's key.
    pub fn as_bytes(&self) -> &[u8; HANDLE_BYTES] {
        &self.0
    }

    /// The handle with these bytes.
    pub fn from_bytes(bytes: [u8; HANDLE_BYTES]) -> Self {
        Handle(bytes)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "h_{}", crate::digits::encode(&self.0))
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({self})")
    }
}

/// Characters of a handle's text after `h_`: digits now, base64url in the first format.
const HANDLE_DIGITS: usize = crate::digits::encoded_len(HANDLE_BYTES);
const HANDLE_BASE64: usize = HANDLE_BYTES / 3 * 4;

impl FromStr for Handle {
    type Err = HandleError;

    /// Parses `h_…` (digits, or the first format's base64url); anything else is
    /// [`HandleError::NotFound`].
    fn from_str(text: &str) -> Result<Self, HandleError> {
        let body = text
            .trim()
            .strip_prefix("h_")
            .ok_or(HandleError::NotFound)?;
        let bytes = match body.len() {
            HANDLE_DIGITS => crate::digits::decode(body),
            HANDLE_BASE64 => URL_SAFE_NO_PAD.decode(body).ok(),
            _ => None,
        }
        .ok_or(HandleError::NotFound)?;
        Ok(Handle(bytes.try_into().map_err(|_| HandleError::NotFound)?))
    }
}

/// What the shaper stores under a handle: the record description and the projected records
/// in ranked order, so the companion tool can filter, sort, page and aggregate them and shape
/// the slice as the original tool would have.
///
/// Its JSON form is flat, as it has always been: `tool`, `name`, `plural`, `fields`,
/// `skipped`, `prose`, `rank` (`[index, order]`), `records`, `created_at_unix`, and
/// `nested_untrusted` when nested records hold outsiders' text. Fields carry the optional
/// keys `source`, `resolver` and `short`; results stored before those keys existed read back
/// unchanged, and older readers ignore them.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    /// The tool that produced it (named in "call … again" remedies).
    pub tool: String,
    /// What the records show.
    pub record: Projection<Owned>,
    /// Projected records, in ranked order.
    pub records: Vec<serde_json::Map<String, serde_json::Value>>,
    /// When it was stored, in seconds since the Unix epoch.
    pub created_at_unix: u64,
    /// Where nested records (`#[shape(nested)]`) hold outsiders' text, as `field.name`
    /// (`comments.body`): the stored description keeps only the top-level fields, so a
    /// reopened page names these in its `untrusted` key from here.
    pub nested_untrusted: Vec<String>,
    /// What the summary of the page that stored it said of the whole stored result (its
    /// aggregate, and what part of the result it covers): the later pages of the same walk
    /// say the same, from here, rather than counting what is left of it.
    pub details: Option<String>,
}

/// One output field of a [`StoredResult`].
pub type StoredField = Field<Owned>;

/// A piece of a stored prose template.
pub type StoredSegment = Segment<Owned>;

impl StoredResult {
    /// An empty result with no fields, for `tool`, created now.
    pub fn new(
        tool: impl Into<String>,
        name: impl Into<String>,
        plural: impl Into<String>,
    ) -> Self {
        StoredResult {
            tool: tool.into(),
            record: Projection::named(name.into(), plural.into()),
            records: Vec::new(),
            created_at_unix: now_unix(),
            nested_untrusted: Vec::new(),
            details: None,
        }
    }

    /// The stored form of `records`, projected by `projection`, created now.
    ///
    /// ```
    /// use toolshape::handle::{StoredResult, StoredSegment};
    /// use toolshape::{ToolResult, Order};
    ///
    /// #[derive(ToolResult)]
    /// #[shape(name = "ticket", plural = "tickets", prose = "{id}: {subject}")]
    /// struct Ticket {
    ///     #[shape(id)]
    ///     id: String,
    ///     #[shape(untrusted(max_tokens = 40))]
    ///     subject: String,
    ///     #[shape(rank = desc)]
    ///     updated: i64,
    ///     #[shape(skip)]
    ///     secret: String,
    /// }
    ///
    /// let stored = StoredResult::from_projection("search_tickets", Ticket::PROJECTION, Vec::new());
    /// let record = &stored.record;
    /// assert_eq!(record.fields[1].kind.role(), toolshape::record::FieldRole::Untrusted);
    /// assert_eq!(record.fields[1].kind.max_tokens(), Some(40));
    /// assert_eq!(record.rank.map(|r| (r.field, r.order)), Some((2, Order::Desc)));
    /// assert_eq!(record.skipped, ["secret"]);
    /// assert_eq!(record.prose.as_deref().map(|p| &p[..2]), Some(&[StoredSegment::Field(0), StoredSegment::Text(": ".into())][..]));
    /// ```
    pub fn from_projection<S: Storage>(
        tool: impl Into<String>,
        projection: &Projection<S>,
        records: Vec<serde_json::Map<String, serde_json::Value>>,
    ) -> Self {
        let top: Vec<&str> = projection.untrusted_names();
        let nested_untrusted = projection
            .untrusted_paths()
            .into_iter()
            .filter(|path| !top.contains(&path.as_str()))
            .collect();
        StoredResult {
            tool: tool.into(),
            record: projection.to_owned_record(),
            records,
            created_at_unix: now_unix(),
            nested_untrusted,
            details: None,
        }
    }

    /// The size the byte caps count: the length of the JSON serialisation.
    pub fn json_len(&self) -> usize {
        let mut counter = ByteCounter(0);
        // Writing to a counter cannot fail, and a map with string keys always serialises.
        match serde_json::to_writer(&mut counter, self) {
            Ok(()) => counter.0,
            Err(_) => usize::MAX,
        }
    }
}

impl Serialize for StoredResult {
    fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeStruct as _;
        let record = &self.record;
        let mut st = s.serialize_struct("StoredResult", 11)?;
        st.serialize_field("tool", &self.tool)?;
        st.serialize_field("name", &record.name)?;
        st.serialize_field("plural", &record.plural)?;
        st.serialize_field("fields", &record.fields)?;
        st.serialize_field("skipped", &record.skipped)?;
        st.serialize_field("prose", &record.prose)?;
        st.serialize_field("rank", &record.rank.map(|r| (r.field, r.order)))?;
        st.serialize_field("records", &self.records)?;
        st.serialize_field("created_at_unix", &self.created_at_unix)?;
        if self.nested_untrusted.is_empty() {
            st.skip_field("nested_untrusted")?;
        } else {
            st.serialize_field("nested_untrusted", &self.nested_untrusted)?;
        }
        match &self.details {
            Some(details) => st.serialize_field("details", details)?,
            None => st.skip_field("details")?,
        }
        st.end()
    }
}

/// The flat JSON form of a [`StoredResult`], as read back.
#[derive(Deserialize)]
struct StoredWire {
    tool: String,
    name: String,
    plural: String,
    fields: Vec<Field<Owned>>,
    skipped: Vec<String>,
    prose: Option<Vec<Segment<Owned>>>,
    rank: Option<(usize, Order)>,
    records: Vec<serde_json::Map<String, serde_json::Value>>,
    created_at_unix: u64,
    #[serde(default)]
    nested_untrusted: Vec<String>,
    #[serde(default)]
    details: Option<String>,
}

impl<'de> Deserialize<'de> for StoredResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = StoredWire::deserialize(d)?;
        let id = w.fields.iter().position(|f| f.kind.role() == FieldRole::Id);
        Ok(StoredResult {
            tool: w.tool,
            record: Projection {
                name: w.name,
                plural: w.plural,
                fields: w.fields,
                skipped: w.skipped,
                prose: w.prose,
                rank: w.rank.map(|(field, order)| RankInfo { field, order }),
                id,
                nested: Vec::new(),
            },
            records: w.records,
            created_at_unix: w.created_at_unix,
            nested_untrusted: w.nested_untrusted,
            details: w.details,
        })
    }
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// When to store a result behind a handle, and for how long. Loaded from configuration.
///
/// ```
/// use toolshape::handle::HandlePolicy;
///
/// let policy: HandlePolicy = toml::from_str("ttl_secs = 600")?;
/// assert_eq!(policy.ttl_secs, 600);
/// assert_eq!(policy.max_bytes_per_payload, HandlePolicy::default().max_bytes_per_payload);
/// assert!(policy.should_store(9_000, 2_000)); // over 4 × the budget
/// assert!(!policy.should_store(3_000, 2_000)); // a page or two: use a cursor
/// assert!(toml::from_str::<HandlePolicy>("ttl = 600").is_err()); // unknown keys are refused
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HandlePolicy {
    /// How long a stored result lives, from when it is stored (reading it does not extend
    /// it). Default 1,800 (30 minutes): long enough for an agent to come back within a task.
    pub ttl_secs: u64,
    /// The largest result stored, in bytes of JSON. Default 8 MiB.
    pub max_bytes_per_payload: usize,
    /// Store when the full result exceeds this many times the tool's token budget, that is,
    /// when paging it would take more than this many calls. Default 4.
    pub store_when_over_budget_factor: f64,
}

impl Default for HandlePolicy {
    fn default() -> Self {
        HandlePolicy {
            ttl_secs: 1_800,
            max_bytes_per_payload: 8 << 20,
            store_when_over_budget_factor: 4.0,
        }
    }
}

impl HandlePolicy {
    /// The time to live.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_secs)
    }

    /// Whether a result of `full_tokens` should go behind a handle rather than be paged,
    /// under a budget of `budget_tokens`. Never for a result that fits; never when the
    /// factor is not a finite number.
    pub fn should_store(&self, full_tokens: usize, budget_tokens: usize) -> bool {
        let factor = self.store_when_over_budget_factor;
        full_tokens > budget_tokens
            && factor.is_finite()
            && full_tokens as f64 > factor * budget_tokens as f64
    }
}

/// Where stored results live. Small on purpose: a shared store (Redis, a database table)
/// implements these three calls, serialising [`StoredResult`] as JSON.
///
/// Implementations must make a handle presented by another owner indistinguishable from a
/// nonexistent one ([`HandleError::NotFound`]).
pub trait HandleStore: Send + Sync {
    /// Stores `result` for `owner` under a fresh handle, with the policy's time to live and
    /// per-result cap.
    fn put(
        &self,
        owner: &str,
        result: StoredResult,
        policy: &HandlePolicy,
    ) -> impl Future<Output = Result<Handle, HandleError>> + Send;

    /// The result stored under `handle`, if `owner` stored it and it has not expired.
    fn get(
        &self,
        owner: &str,
        handle: &Handle,
    ) -> impl Future<Output = Result<Arc<StoredResult>, HandleError>> + Send;

    /// Removes the result; `false` when there was none for this owner.
    fn remove(
        &self,
        owner: &str,
        handle: &Handle,
    ) -> impl Future<Output = Result<bool, HandleError>> + Send;
}

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

/// A clock that moves only when told to; clones share the time.
///
/// ```
/// use toolshape::handle::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(1_000);
/// clock.clone().advance(Duration::from_secs(2));
/// assert_eq!(clock.now_unix_ms(), 3_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_stored_in_the_first_format_reads_back() {
        let old = r#"{"tool":"search_tickets","name":"ticket","plural":"tickets","fields":[{"name":"id","kind":"id","max_tokens":null},{"name":"subject","kind":"untrusted","max_tokens":40}],"skipped":["sla_due_at"],"prose":[{"field":0},{"text":": "},{"field":1}],"rank":[0,"desc"],"records":[{"id":"tkt_1","subject":"Hi"}],"created_at_unix":7}"#;
        let stored: StoredResult = serde_json::from_str(old).unwrap();
        assert_eq!(stored.record.id, Some(0));
        assert_eq!(
            stored.record.rank,
            Some(RankInfo {
                field: 0,
                order: Order::Desc
            })
        );
        assert_eq!(stored.record.fields[1].kind.max_tokens(), Some(40));
        // Written back, it is the same text: no optional key applies to these fields.
        assert_eq!(serde_json::to_string(&stored).unwrap(), old);
    }
}
