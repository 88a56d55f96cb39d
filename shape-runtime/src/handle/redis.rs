//! A [`HandleStore`] on Redis, so that several replicas of a service behind a load balancer
//! share handles: a handle stored by one replica opens on any other.
//!
//! This module owns the key layout, the value encoding and the mapping of Redis failures to
//! [`HandleError`]. What is stored, per handle (both keys share the handle in a hash tag,
//! so they land in one slot):
//!
//! | key | value | expires after |
//! |---|---|---|
//! | `{prefix}:{h_…}:r` | `shr1`, owner tag (32 bytes), TTL in seconds (8), the result as JSON | the policy's TTL |
//! | `{prefix}:{h_…}:t` | `sht1`, owner tag (32 bytes), TTL in seconds (8), grace in ms (8), the tool's name | TTL + tombstone grace |
//!
//! - **Expiry is Redis's own** (`SET … PX ttl NX`): nothing sweeps, nothing extends a TTL.
//! - **Tombstones.** Redis forgets an expired key entirely, so the store could not tell
//!   "expired" from "never existed". The small `:t` key outlives the result by a grace period
//!   (default one hour) and lets a late reader be told "expired, call `tool` again"; after
//!   the grace period the handle is simply not found. [`HandleStore::remove`] deletes both.
//!   A result gone while its tombstone has more than the grace period left was not expired
//!   but evicted by the server (`maxmemory`), and reads as [`HandleError::Evicted`].
//! - **Owners.** The owner is never stored: the owner tag is HMAC-SHA256 over the handle and
//!   the owner, under a key the replicas share ([`RedisStoreBuilder::owner_key`]), so equal
//!   owners give unrelated tags on different handles and reading Redis does not reveal who
//!   stored what. A tag that does not verify reads exactly as a missing key
//!   ([`HandleError::NotFound`]). There is no index by owner and the store never runs
//!   `KEYS` or `SCAN`: a handle is found only by presenting its 96 random bits.
//! - **Size cap.** The JSON is written into a buffer that refuses to grow past the cap, so a
//!   result over it is refused ([`HandleError::TooLarge`]) before anything is sent.
//! - **Decoded cache.** Each store keeps the results it recently opened, decoded, up to a
//!   bound on the memory they take ([`StoredResult::resident_bytes`], an estimate; default
//!   64 MiB, [`RedisStoreBuilder::decoded_cache_bytes`]; the oldest leave first). A result under a handle never changes (`SET … NX`), so a cached
//!   open fetches only the 44-byte header (`GETRANGE`): the key still there is Redis's word that
//!   the handle has neither expired nor been removed by any replica, and the owner tag in it is
//!   checked exactly as on a full read. A header that is gone or does not verify drops the
//!   entry and takes the full path, which says expired, evicted or not found. (The JSON
//!   itself is not read again: bytes changed in Redis behind the store's back after this
//!   replica decoded them go unnoticed by it; changed before, they are a clear error.)
//! - **Failures.** Every call is bounded by a timeout ([`RedisStoreBuilder::timeout`]); a
//!   down or slow server gives [`HandleError::Unavailable`] saying what to check, never a
//!   panic. The connection is re-established in the background after a failure, so the same
//!   store works again once Redis is back.
//!
//! The store needs a Tokio runtime with I/O and time enabled (as `#[tokio::main]` builds).

use super::store::{HandlePolicy, HandleStore, StoredResult};
use crate::handle::id::{Handle, HandleError};
use hmac::{Hmac, KeyInit, Mac};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisError, Value};
use sha2::Sha256;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type HmacSha256 = Hmac<Sha256>;

const RESULT_TAG: &[u8; 4] = b"shr1";
const TOMBSTONE_TAG: &[u8; 4] = b"sht1";
/// Tag, owner tag, TTL in seconds.
const HEADER_LEN: usize = 4 + 32 + 8;
/// Redis refuses expiry times that overflow its clock; a century is far below that.
const MAX_EXPIRY_MS: u64 = 100 * 365 * 24 * 3_600 * 1_000;
/// A result missing this long before its time to live is taken as evicted, not expired.
const EVICTED_MARGIN_MS: u64 = 1_000;
const DEFAULT_OWNER_KEY: &[u8] = b"shape handle owner v1";

/// Handles stored in Redis, shared by every replica connected to the same server with the
/// same key prefix and owner key. It keeps each result under its handle with the result's TTL, plus a small tombstone key
/// that outlives it by a grace period, so an expired handle reads as expired, not unknown.
///
/// Cheap to clone (clones share one multiplexed, self-reconnecting connection).
///
/// ```no_run
/// use toolshape::handle::{HandlePolicy, HandleStore, StoredResult};
/// use toolshape::handle::RedisStore;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisStore::builder("redis://127.0.0.1:6379/")
///     .key_prefix("support-desk")
///     .owner_key(std::env::var("SHAPE_OWNER_KEY")?) // the same on every replica
///     .timeout(Duration::from_secs(2))
///     .connect()
///     .await?;
///
/// let result = StoredResult::new("search_tickets", "ticket", "tickets");
/// let handle = store.put("user:42", result, &HandlePolicy::default()).await?;
/// // Any replica connected the same way opens it; another owner is told "not found".
/// assert_eq!(store.get("user:42", &handle).await?.tool, "search_tickets");
/// assert!(store.get("user:7", &handle).await.is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    server: Arc<str>,
    prefix: Arc<str>,
    owner_mac: HmacSha256,
    grace_ms: u64,
    max_bytes: usize,
    timeout: Duration,
    decoded: Arc<Mutex<Decoded>>,
}

/// Results this replica opened, decoded, oldest first, up to `max_bytes` of memory (as
/// [`StoredResult::resident_bytes`] estimates it).
struct Decoded {
    max_bytes: usize,
    bytes: usize,
    results: HashMap<Handle, (Arc<StoredResult>, usize)>,
    order: VecDeque<Handle>,
}

impl Decoded {
    fn get(&self, handle: &Handle) -> Option<Arc<StoredResult>> {
        self.results
            .get(handle)
            .map(|(result, _)| Arc::clone(result))
    }

    fn insert(&mut self, handle: Handle, result: Arc<StoredResult>, bytes: usize) {
        if bytes > self.max_bytes || self.results.contains_key(&handle) {
            return;
        }
        while self.bytes + bytes > self.max_bytes {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, size)) = self.results.remove(&oldest) {
                self.bytes -= size;
            }
        }
        self.bytes += bytes;
        self.order.push_back(handle);
        self.results.insert(handle, (result, bytes));
    }

    fn remove(&mut self, handle: &Handle) {
        if let Some((_, size)) = self.results.remove(handle) {
            self.bytes -= size;
            self.order.retain(|h| h != handle);
        }
    }
}

/// Options for a [`RedisStore`]; [`RedisStoreBuilder::connect`] makes the store.
#[derive(Clone)]
#[must_use = "a builder does nothing until `connect` is awaited"]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    owner_key: Vec<u8>,
    grace: Duration,
    max_bytes: usize,
    timeout: Duration,
    decoded_bytes: usize,
}

impl RedisStore {
    /// Options for a store on the server at `url` (`redis://[user:password@]host:port/db`).
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder {
            url: url.into(),
            prefix: "shape".to_owned(),
            owner_key: DEFAULT_OWNER_KEY.to_vec(),
            grace: Duration::from_secs(3_600),
            max_bytes: 16 << 20,
            timeout: Duration::from_secs(2),
            decoded_bytes: 64 << 20,
        }
    }

    /// A store on the server at `url` with the default options.
    pub async fn connect(url: impl Into<String>) -> Result<Self, HandleError> {
        Self::builder(url).connect().await
    }

    fn key(&self, handle: &Handle, kind: char) -> String {
        format!("{}:{{{handle}}}:{kind}", self.prefix)
    }

    /// The owner tag: HMAC over the handle and the owner, so tags do not link handles.
    fn owner_mac(&self, owner: &str, handle: &Handle) -> HmacSha256 {
        let mut mac = self.owner_mac.clone();
        mac.update(handle.as_bytes());
        mac.update(owner.as_bytes());
        mac
    }

    fn header(&self, tag: &[u8; 4], owner: &str, handle: &Handle, ttl_secs: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER_LEN);
        bytes.extend_from_slice(tag);
        bytes.extend_from_slice(&self.owner_mac(owner, handle).finalize().into_bytes());
        bytes.extend_from_slice(&ttl_secs.to_be_bytes());
        bytes
    }

    /// The TTL and the bytes after the header, if `bytes` carries `tag` and `owner`'s tag.
    fn open<'a>(
        &self,
        bytes: &'a [u8],
        tag: &[u8; 4],
        owner: &str,
        handle: &Handle,
    ) -> Option<(u64, &'a [u8])> {
        let (header, body) = bytes.split_at_checked(HEADER_LEN)?;
        let (found_tag, rest) = header.split_at(4);
        let (owner_tag, ttl) = rest.split_at(32);
        if found_tag != tag {
            return None;
        }
        // Constant-time comparison.
        self.owner_mac(owner, handle).verify_slice(owner_tag).ok()?;
        let ttl_secs = u64::from_be_bytes(ttl.try_into().ok()?);
        Some((ttl_secs, body))
    }

    /// Runs `f` on the decoded cache (a poisoned lock is taken as it is: the cache holds no
    /// invariant a panic elsewhere could break).
    fn decoded<T>(&self, f: impl FnOnce(&mut Decoded) -> T) -> T {
        let mut decoded = match self.decoded.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut decoded)
    }

    /// Runs one exchange with Redis, bounded by the timeout, mapping failures to
    /// [`HandleError::Unavailable`].
    async fn call<T>(
        &self,
        exchange: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, HandleError> {
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(unavailable(&self.server, &e)),
            Err(_) => Err(HandleError::Unavailable {
                reason: format!(
                    "Redis at {} did not answer within {:?}; check that it is running and \
                     reachable from this replica",
                    self.server, self.timeout
                ),
            }),
        }
    }

    /// The result's JSON after a header, refused if the JSON is over `max_bytes`.
    fn encode(
        &self,
        header: Vec<u8>,
        result: &StoredResult,
        max_bytes: usize,
    ) -> Result<Vec<u8>, HandleError> {
        let mut writer = CappedWriter {
            buf: header,
            max_len: HEADER_LEN.saturating_add(max_bytes),
            over: false,
        };
        match serde_json::to_writer(&mut writer, result) {
            Ok(()) => Ok(writer.buf),
            Err(_) if writer.over => Err(HandleError::TooLarge {
                bytes: result.json_len(),
                max_bytes,
            }),
            Err(e) => Err(HandleError::Unavailable {
                reason: format!("the result could not be written as JSON: {e}"),
            }),
        }
    }
}

fn unavailable(server: &str, e: &RedisError) -> HandleError {
    HandleError::Unavailable {
        reason: format!(
            "Redis at {server} failed: {e}; check that it is running and reachable from this \
             replica"
        ),
    }
}

impl RedisStoreBuilder {
    /// The prefix of every key (default `shape`), so several services can share a server.
    /// Replicas that share handles must use the same prefix.
    pub fn key_prefix(self, prefix: impl Into<String>) -> Self {
        RedisStoreBuilder {
            prefix: prefix.into(),
            ..self
        }
    }

    /// The secret the owner tags are keyed with; every replica must use the same one. Without
    /// it a built-in key is used, and someone who can read Redis could confirm a guess of
    /// who owns a handle (never read a result they do not hold the handle of).
    pub fn owner_key(self, key: impl AsRef<[u8]>) -> Self {
        RedisStoreBuilder {
            owner_key: key.as_ref().to_vec(),
            ..self
        }
    }

    /// How long an expired handle is still reported as "expired" rather than "not found"
    /// (default one hour; zero: no tombstone is written).
    pub fn tombstone_grace(self, grace: Duration) -> Self {
        RedisStoreBuilder { grace, ..self }
    }

    /// The largest result this store accepts, in bytes of JSON (default 16 MiB), whatever
    /// the policy allows; the smaller of the two caps applies.
    pub fn max_bytes_per_payload(self, max_bytes: usize) -> Self {
        RedisStoreBuilder { max_bytes, ..self }
    }

    /// The longest one call may take, connecting included (default 2 s). Past it the call
    /// fails with [`HandleError::Unavailable`].
    pub fn timeout(self, timeout: Duration) -> Self {
        RedisStoreBuilder { timeout, ..self }
    }

    /// How much memory the results this replica keeps decoded may take (default 64 MiB, as
    /// [`StoredResult::resident_bytes`] estimates it; zero: none), so
    /// that opening a result it opened recently fetches only its header from Redis
    /// instead of decoding it again. Owners, expiry and removal are checked in Redis on every
    /// open all the same.
    pub fn decoded_cache_bytes(self, decoded_bytes: usize) -> Self {
        RedisStoreBuilder {
            decoded_bytes,
            ..self
        }
    }

    /// Connects. A malformed URL or an unreachable server is [`HandleError::Unavailable`].
    pub async fn connect(self) -> Result<RedisStore, HandleError> {
        let client =
            redis::Client::open(self.url.as_str()).map_err(|e| HandleError::Unavailable {
                reason: format!(
                    "the Redis URL is not valid ({e}); write it as redis://host:port/db"
                ),
            })?;
        let server: Arc<str> = client.get_connection_info().addr().to_string().into();
        let owner_mac =
            HmacSha256::new_from_slice(&self.owner_key).map_err(|e| HandleError::Unavailable {
                reason: format!("the owner key cannot key HMAC-SHA256: {e}"),
            })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let connecting = ConnectionManager::new_with_config(client, config);
        let connection = match tokio::time::timeout(self.timeout, connecting).await {
            Ok(Ok(connection)) => connection,
            Ok(Err(e)) => return Err(unavailable(&server, &e)),
            Err(_) => {
                return Err(HandleError::Unavailable {
                    reason: format!(
                        "could not connect to Redis at {server} within {:?}; check that it is \
                         running and reachable from this replica",
                        self.timeout
                    ),
                });
            }
        };
        Ok(RedisStore {
            connection,
            server,
            prefix: self.prefix.into(),
            owner_mac,
            grace_ms: u64::try_from(self.grace.as_millis()).unwrap_or(u64::MAX),
            max_bytes: self.max_bytes,
            timeout: self.timeout,
            decoded: Arc::new(Mutex::new(Decoded {
                max_bytes: self.decoded_bytes,
                bytes: 0,
                results: HashMap::new(),
                order: VecDeque::new(),
            })),
        })
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("server", &self.server)
            .field("prefix", &self.prefix)
            .field("grace_ms", &self.grace_ms)
            .field("max_bytes", &self.max_bytes)
            .field("timeout", &self.timeout)
            .field("decoded_cache_bytes", &self.decoded(|d| d.max_bytes))
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for RedisStoreBuilder {
    /// Leaves out the URL (it may hold a password) and the owner key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("prefix", &self.prefix)
            .field("grace", &self.grace)
            .field("max_bytes", &self.max_bytes)
            .field("timeout", &self.timeout)
            .field("decoded_cache_bytes", &self.decoded_bytes)
            .finish_non_exhaustive()
    }
}

/// A buffer that refuses to grow past `max_len`, so an oversized result is never built.
struct CappedWriter {
    buf: Vec<u8>,
    max_len: usize,
    over: bool,
}

impl Write for CappedWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len().saturating_add(data.len()) > self.max_len {
            self.over = true;
            return Err(io::Error::other("over the size cap"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl HandleStore for RedisStore {
    async fn put(
        &self,
        owner: &str,
        result: StoredResult,
        policy: &HandlePolicy,
    ) -> Result<Handle, HandleError> {
        let max_bytes = policy.max_bytes_per_payload.min(self.max_bytes);
        let ttl_ms = policy.ttl_secs.saturating_mul(1_000).min(MAX_EXPIRY_MS);
        let tombstone_ms = ttl_ms.saturating_add(self.grace_ms).min(MAX_EXPIRY_MS);
        // The owner tag covers the handle, so the value is encoded once per handle drawn; a
        // second draw happens only if 96 random bits collide.
        for _ in 0..3 {
            let handle = Handle::random()?;
            if ttl_ms == 0 && self.grace_ms == 0 {
                // Expired on arrival and nothing to remember it by: "not found" at once.
                return Ok(handle);
            }
            let header = self.header(RESULT_TAG, owner, &handle, policy.ttl_secs);
            let value = self.encode(header, &result, max_bytes)?;

            let mut tombstone = self.header(TOMBSTONE_TAG, owner, &handle, policy.ttl_secs);
            tombstone.extend_from_slice(&self.grace_ms.to_be_bytes());
            tombstone.extend_from_slice(result.tool.as_bytes());

            let mut pipe = redis::pipe();
            pipe.atomic();
            if ttl_ms > 0 {
                pipe.cmd("SET")
                    .arg(self.key(&handle, 'r'))
                    .arg(value)
                    .arg("PX")
                    .arg(ttl_ms)
                    .arg("NX");
            }
            if self.grace_ms > 0 {
                pipe.cmd("SET")
                    .arg(self.key(&handle, 't'))
                    .arg(tombstone)
                    .arg("PX")
                    .arg(tombstone_ms)
                    .arg("NX");
            }
            let mut connection = self.connection.clone();
            let replies: Vec<Value> = self.call(pipe.query_async(&mut connection)).await?;
            // `NX` answers nil when the key exists: a collision with a live handle.
            if replies.iter().all(|reply| !matches!(reply, Value::Nil)) {
                return Ok(handle);
            }
        }
        Err(HandleError::Unavailable {
            reason: "three fresh handles in a row were already in use in Redis, which random \
                     96-bit handles never do; check that nothing else writes under this key \
                     prefix"
                .to_owned(),
        })
    }

    async fn get(&self, owner: &str, handle: &Handle) -> Result<Arc<StoredResult>, HandleError> {
        let mut connection = self.connection.clone();
        if let Some(cached) = self.decoded(|d| d.get(handle)) {
            let mut getrange = redis::cmd("GETRANGE");
            getrange
                .arg(self.key(handle, 'r'))
                .arg(0)
                .arg(HEADER_LEN - 1);
            let header: Vec<u8> = self.call(getrange.query_async(&mut connection)).await?;
            if self.open(&header, RESULT_TAG, owner, handle).is_some() {
                return Ok(cached);
            }
            // Gone (expired, evicted or removed): forget it, and say which below. A header
            // that is there but not this owner's keeps the entry for its owner.
            if header.is_empty() {
                self.decoded(|d| d.remove(handle));
            }
        }
        let tombstone_key = self.key(handle, 't');
        let mut pipe = redis::pipe();
        pipe.cmd("MGET")
            .arg(self.key(handle, 'r'))
            .arg(&tombstone_key);
        pipe.cmd("PTTL").arg(&tombstone_key);
        type Reply = ((Option<Vec<u8>>, Option<Vec<u8>>), i64);
        let ((value, tombstone), tombstone_left_ms): Reply =
            self.call(pipe.query_async(&mut connection)).await?;
        if let Some(value) = value {
            let Some((_, json)) = self.open(&value, RESULT_TAG, owner, handle) else {
                return Err(HandleError::NotFound);
            };
            let result = serde_json::from_slice::<StoredResult>(json)
                .map(Arc::new)
                .map_err(|e| HandleError::Unavailable {
                    reason: format!(
                        "the result stored under this handle cannot be read ({e}); call the \
                         tool that returned it again for a fresh handle"
                    ),
                })?;
            let bytes = result.resident_bytes();
            self.decoded(|d| d.insert(*handle, Arc::clone(&result), bytes));
            return Ok(result);
        }
        let gone = tombstone.and_then(|tombstone| {
            let (ttl_secs, rest) = self.open(&tombstone, TOMBSTONE_TAG, owner, handle)?;
            let (grace, tool) = rest.split_at_checked(8)?;
            let grace_ms = u64::from_be_bytes(grace.try_into().ok()?);
            let tool = String::from_utf8_lossy(tool).into_owned();
            // The result was due to outlive the tombstone's last `grace_ms` by a margin for
            // the two keys' clocks: gone before that, the server evicted it.
            let left_ms = u64::try_from(tombstone_left_ms).unwrap_or(0);
            Some(if left_ms > grace_ms.saturating_add(EVICTED_MARGIN_MS) {
                HandleError::Evicted { tool }
            } else {
                HandleError::Expired { tool, ttl_secs }
            })
        });
        Err(gone.unwrap_or(HandleError::NotFound))
    }

    async fn remove(&self, owner: &str, handle: &Handle) -> Result<bool, HandleError> {
        let mut connection = self.connection.clone();
        let key = self.key(handle, 'r');
        // Only the header, to check the owner without fetching the result.
        let mut getrange = redis::cmd("GETRANGE");
        getrange.arg(&key).arg(0).arg(HEADER_LEN - 1);
        let header: Vec<u8> = self.call(getrange.query_async(&mut connection)).await?;
        if self.open(&header, RESULT_TAG, owner, handle).is_none() {
            return Ok(false);
        }
        let mut del = redis::pipe();
        del.cmd("DEL")
            .arg(&key)
            .cmd("DEL")
            .arg(self.key(handle, 't'));
        let (removed, _): (u64, u64) = self.call(del.query_async(&mut connection)).await?;
        self.decoded(|d| d.remove(handle));
        Ok(removed == 1)
    }
}
