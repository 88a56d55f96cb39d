//! A [`CursorStore`] on Redis, so that a short held cursor handed out by one replica
//! of a service opens on any other behind the same load balancer.
//!
//! This module owns the key layout and the mapping of Redis failures to what a cursor reads
//! as. Per position:
//!
//! | key | value | expires after |
//! |---|---|---|
//! | `{prefix}:c:{token}` (the token in base64url) | `shc1`, then the encoded position | the store's TTL |
//!
//! - **Trust.** What Redis returns is never taken on its word: the codec checks that the
//!   position it reads is the one the token names (the token is an HMAC of the position under
//!   the signing key), so a value changed or swapped in Redis reads as a forgotten cursor,
//!   never as another position.
//! - **Local first.** Each store keeps the positions it wrote or read in a bounded in-process
//!   [`MemoryCursorStore`]; a cursor presented to the replica that issued it never leaves the
//!   process. A miss asks Redis.
//! - **Written before the cursor is handed out.** A position is written to Redis (`SET … PX`)
//!   when it is put, on a connection of the store's own, so the cursor naming it opens on any
//!   replica the moment the answer carrying it leaves: a client that follows `next` at once,
//!   through a load balancer, lands wherever it lands. The write is one blocking round trip
//!   (a fraction of a millisecond on a loopback or LAN), bounded by
//!   [`RedisCursorStoreBuilder::timeout`].
//! - **Reads blocking, bounded.** [`CursorStore`] is synchronous (a cursor is read while a call
//!   starts), so a read this replica cannot answer locally is one blocking `GET`, bounded by
//!   the same timeout (default 250 ms): a short blocking section on an async executor's
//!   thread, only when a cursor comes back to a replica that did not issue it.
//! - **Failures.** A write that fails leaves the position in the local store (this replica
//!   still opens it) and is logged (`tracing`, target `shape`). A read that fails is
//!   [`CursorError::Unavailable`](crate::cursor::CursorError::Unavailable), whose error tells
//!   the model to call again shortly (or start again); a position Redis does not have
//!   (expired, evicted, never written because Redis was down) is
//!   [`CursorError::Forgotten`](crate::cursor::CursorError::Forgotten). After a failure a
//!   connection waits a second before reconnecting, so a down server costs at most one
//!   timeout a second per connection, never a panic.

use super::error::CursorSetupError;
use super::held::{CursorStore, HELD_TOKEN_LEN, MemoryCursorStore};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The tag in front of every value this store writes.
const TAG: &[u8; 4] = b"shc1";
/// How long after a failure the store waits before connecting again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);
/// Redis refuses expiry times that overflow its clock; a century is far below that.
const MAX_TTL_MS: u64 = 100 * 365 * 24 * 3_600 * 1_000;

/// Held cursor positions in Redis, shared by every replica connected to the same server with
/// the same key prefix (and the same cursor signing key).
///
/// ```no_run
/// use std::time::Duration;
/// use toolshape::cursor::{CursorCodec, CursorKeys, RedisCursorStore};
///
/// let store = RedisCursorStore::builder("redis://127.0.0.1:6379/")
///     .ttl(Duration::from_secs(1_800))
///     .connect()?;
/// let codec = CursorCodec::new(CursorKeys::new(b"the key every replica shares")?).held_in(store);
/// # let _ = codec;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisCursorStore {
    where_: String,
    prefix: String,
    ttl: Duration,
    ttl_ms: u64,
    timeout: Duration,
    local: MemoryCursorStore,
    /// The connection reads use.
    reads: Link,
    /// The connection writes use.
    writes: Link,
}

/// A blocking connection that reconnects, at most once a second after a failure.
struct Link {
    client: redis::Client,
    timeout: Duration,
    conn: Mutex<Connection>,
}

/// The blocking connection, or when the last one failed.
enum Connection {
    Up(redis::Connection),
    Down(Option<Instant>),
}

impl fmt::Debug for RedisCursorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCursorStore")
            .field("server", &self.where_)
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Settings for a [`RedisCursorStore`].
#[derive(Debug, Clone)]
pub struct RedisCursorStoreBuilder {
    url: String,
    prefix: String,
    ttl: Duration,
    timeout: Duration,
    local_capacity: usize,
}

impl RedisCursorStore {
    /// Settings for a store on the Redis server at `url` (`redis://host:port/db`).
    pub fn builder(url: &str) -> RedisCursorStoreBuilder {
        RedisCursorStoreBuilder {
            url: url.to_owned(),
            prefix: "shape".to_owned(),
            ttl: Duration::from_secs(1_800),
            timeout: Duration::from_millis(250),
            local_capacity: 100_000,
        }
    }

    fn key(&self, token: &[u8; HELD_TOKEN_LEN]) -> String {
        format!("{}:c:{}", self.prefix, URL_SAFE_NO_PAD.encode(token))
    }
}

impl Link {
    /// Runs `f` on the connection, connecting first when there is none (but not within a
    /// second of the last failure); a failure drops the connection.
    fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, String> {
        // A panic while the lock was held leaves nothing half-done that matters here.
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if let Connection::Down(since) = *conn {
            if since.is_some_and(|t| t.elapsed() < RECONNECT_AFTER) {
                return Err("the last attempt failed under a second ago".to_owned());
            }
            match connect(&self.client, self.timeout) {
                Ok(c) => *conn = Connection::Up(c),
                Err(e) => {
                    *conn = Connection::Down(Some(Instant::now()));
                    return Err(e.to_string());
                }
            }
        }
        let Connection::Up(c) = &mut *conn else {
            return Err("not connected".to_owned());
        };
        f(c).map_err(|e| {
            *conn = Connection::Down(Some(Instant::now()));
            e.to_string()
        })
    }
}

fn connect(client: &redis::Client, timeout: Duration) -> redis::RedisResult<redis::Connection> {
    let conn = client.get_connection_with_timeout(timeout)?;
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    Ok(conn)
}

impl RedisCursorStoreBuilder {
    /// Keys start with `{prefix}:c:` (default prefix `shape`, as the handle store's).
    pub fn key_prefix(mut self, prefix: &str) -> Self {
        prefix.clone_into(&mut self.prefix);
        self
    }

    /// How long a position is held (default 30 minutes, the handles' default); Redis expires
    /// it. The codec's [`max_age`](crate::cursor::CursorCodec::max_age) still applies.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The longest any one Redis call may take (default 250 ms).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Positions kept in the process besides Redis (default 100,000; at least 1).
    pub fn local_capacity(mut self, capacity: usize) -> Self {
        self.local_capacity = capacity;
        self
    }

    /// Connects, so a wrong URL or a server that is not there is an error at start-up.
    pub fn connect(self) -> Result<RedisCursorStore, CursorSetupError> {
        // The server as `RedisStore` names it: host and port from the parsed URL, never its
        // user information or query (where a password may be).
        let client = redis::Client::open(self.url.as_str()).map_err(|e| {
            CursorSetupError::RedisUnavailable {
                url: "the given URL".to_owned(),
                reason: format!("it is not a Redis URL ({e}); write it as redis://host:port/db"),
            }
        })?;
        let where_ = client.get_connection_info().addr().to_string();
        let fail = |e: redis::RedisError| CursorSetupError::RedisUnavailable {
            url: where_.clone(),
            reason: e.to_string(),
        };
        let mut conn = connect(&client, self.timeout).map_err(fail)?;
        redis::cmd("PING")
            .query::<String>(&mut conn)
            .map_err(fail)?;
        let link = |conn| Link {
            client: client.clone(),
            timeout: self.timeout,
            conn: Mutex::new(conn),
        };
        let ttl_ms = u64::try_from(self.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_TTL_MS);
        Ok(RedisCursorStore {
            where_,
            prefix: self.prefix,
            ttl: self.ttl,
            ttl_ms,
            timeout: self.timeout,
            local: MemoryCursorStore::new(self.local_capacity, self.ttl),
            reads: link(Connection::Up(conn)),
            writes: link(Connection::Down(None)),
        })
    }
}

impl CursorStore for RedisCursorStore {
    fn put(&self, token: [u8; HELD_TOKEN_LEN], body: Vec<u8>, issued_at_unix: u64) {
        let mut value = Vec::with_capacity(TAG.len() + body.len());
        value.extend_from_slice(TAG);
        value.extend_from_slice(&body);
        self.local.put(token, body, issued_at_unix);
        let key = self.key(&token);
        let written = self.writes.with_conn(|c| {
            redis::cmd("SET")
                .arg(&key)
                .arg(value)
                .arg("PX")
                .arg(self.ttl_ms)
                .query::<()>(c)
        });
        if let Err(reason) = written {
            tracing::warn!(target: "shape", server = %self.where_, %reason,
                "cursor position not written to Redis: only this replica can open the cursor");
        }
    }

    fn get(&self, token: &[u8; HELD_TOKEN_LEN]) -> Option<Vec<u8>> {
        self.fetch(token).ok().flatten()
    }

    fn fetch(&self, token: &[u8; HELD_TOKEN_LEN]) -> Result<Option<Vec<u8>>, String> {
        if let Some(body) = self.local.get(token) {
            return Ok(Some(body));
        }
        let key = self.key(token);
        let read = self
            .reads
            .with_conn(|c| redis::cmd("GET").arg(&key).query::<Option<Vec<u8>>>(c));
        match read {
            Ok(value) => {
                let Some(body) = value.as_deref().and_then(|v| v.strip_prefix(TAG)) else {
                    return Ok(None);
                };
                let body = body.to_vec();
                self.local.put(*token, body.clone(), 0);
                Ok(Some(body))
            }
            Err(reason) => {
                tracing::warn!(target: "shape", server = %self.where_, %reason,
                    "cursor position not read from Redis: the cursor reads as unavailable");
                Err(format!("Redis at {} did not answer: {reason}", self.where_))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RedisCursorStore;

    #[test]
    fn passwords_stay_out_of_messages() {
        // Nothing listens on port 1: the connection is refused at once.
        for url in [
            "redis://user:secret@127.0.0.1:1/0",
            "redis://127.0.0.1:1/0?password=secret",
        ] {
            let err = RedisCursorStore::builder(url)
                .connect()
                .expect_err("nothing listens on port 1");
            let text = err.to_string();
            assert!(!text.contains("secret"), "{text}");
            assert!(text.contains("127.0.0.1:1"), "{text}");
        }
    }
}
