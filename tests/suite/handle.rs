//! Tests: handle stores.
//!
//! 1. One suite of behaviour every store must show (create, open, owner isolation, expiry,
//!    size cap, concurrent use), run against [`MemoryStore`] and against [`RedisStore`]
//!    (`handle::memory_store::…`, `handle::redis_store::…`).
//! 2. What only the memory store does (least-recently-used eviction, counters, bounded
//!    tombstones).
//! 3. What only the Redis store does (replicas sharing a handle, a server restart, the
//!    tombstone grace period, what is and is not in Redis).
//! 4. Handles, stored results and the policy, with no store.
//!
//! Redis tests need `SHAPE_REDIS_URL` (`.ci/run` starts a throwaway server and sets it);
//! without it they print "skipped" on stderr and return, except under CI (`CI` set), where a
//! skip fails the test. The restart test also needs
//! `SHAPE_REDIS_SERVER_BIN`, a `redis-server` it starts and kills on a port of its own.

use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolshape::__seams::handle::{ManualClock, StoredSegment};
use toolshape::handle::RedisStore;
use toolshape::handle::{
    Handle, HandleError, HandlePolicy, HandleStore, MemoryStore, StoreStats, StoredResult,
};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(future)
}

/// A runtime with I/O and timers (the Redis client needs both) and several workers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A result whose JSON length depends only on `n`'s digit count.
fn result(tool: &str, n: u64) -> StoredResult {
    let mut record = Map::new();
    record.insert("n".into(), json!(n));
    StoredResult {
        records: vec![record],
        created_at_unix: 0,
        ..StoredResult::new(tool, "ticket", "tickets")
    }
}

fn policy(ttl_secs: u64) -> HandlePolicy {
    HandlePolicy {
        ttl_secs,
        ..HandlePolicy::default()
    }
}

fn n_of(result: &StoredResult) -> Option<u64> {
    result
        .records
        .first()
        .and_then(|r| r.get("n"))
        .and_then(Value::as_u64)
}

// ---------------------------------------------------------------------------------------
// 1. The suite every store runs.
// ---------------------------------------------------------------------------------------

/// A store under test and its way of letting time pass.
trait Harness: Sized {
    type Store: HandleStore + 'static;

    /// The store under test.
    fn store(&self) -> &Arc<Self::Store>;

    /// Another store of the same kind, sharing time with this one, that accepts no result
    /// over `max_bytes`.
    async fn capped(&self, max_bytes: usize) -> Self::Store;

    /// Lets `by` pass, as the store sees time.
    async fn pass(&self, by: Duration);

    /// How long before its time to live a result is certainly still there (a manual clock
    /// is exact to the millisecond; a real server needs room for scheduling).
    fn early(&self) -> Duration;

    /// How long after its time to live a result is certainly gone.
    fn late(&self) -> Duration;

    /// The store's counters, if it keeps any.
    fn stats(store: &Self::Store) -> Option<StoreStats>;
}

struct Memory {
    clock: ManualClock,
    store: Arc<MemoryStore>,
}

impl Memory {
    fn new() -> Self {
        let clock = ManualClock::new(1_700_000_000_000);
        let store = Arc::new(MemoryStore::new(64 << 20).with_clock(clock.clone()));
        Memory { clock, store }
    }
}

impl Harness for Memory {
    type Store = MemoryStore;

    fn store(&self) -> &Arc<MemoryStore> {
        &self.store
    }

    async fn capped(&self, max_bytes: usize) -> MemoryStore {
        MemoryStore::new(max_bytes).with_clock(self.clock.clone())
    }

    async fn pass(&self, by: Duration) {
        self.clock.advance(by);
    }

    fn early(&self) -> Duration {
        Duration::from_millis(1)
    }

    fn late(&self) -> Duration {
        Duration::ZERO
    }

    fn stats(store: &MemoryStore) -> Option<StoreStats> {
        Some(store.stats())
    }
}

struct Redis {
    url: String,
    prefix: String,
    store: Arc<RedisStore>,
}

impl Redis {
    /// A store under a key prefix of its own, so tests running at once never meet.
    async fn connect(url: &str) -> Self {
        let prefix = format!("shape-test-{}", Handle::random().expect("randomness"));
        let store = RedisStore::builder(url)
            .key_prefix(&prefix)
            .connect()
            .await
            .expect("SHAPE_REDIS_URL names a running Redis");
        Redis {
            url: url.to_owned(),
            prefix,
            store: Arc::new(store),
        }
    }
}

impl Harness for Redis {
    type Store = RedisStore;

    fn store(&self) -> &Arc<RedisStore> {
        &self.store
    }

    async fn capped(&self, max_bytes: usize) -> RedisStore {
        RedisStore::builder(&self.url)
            .key_prefix(&self.prefix)
            .max_bytes_per_payload(max_bytes)
            .connect()
            .await
            .expect("connects")
    }

    async fn pass(&self, by: Duration) {
        tokio::time::sleep(by).await;
    }

    fn early(&self) -> Duration {
        Duration::from_millis(400)
    }

    fn late(&self) -> Duration {
        Duration::from_millis(50)
    }

    fn stats(_: &RedisStore) -> Option<StoreStats> {
        None
    }
}

/// The Redis server's URL, or `None` after saying on stderr (uncaptured, so `cargo test`
/// shows it) that the calling test is skipped.
pub(crate) fn redis_url() -> Option<String> {
    match std::env::var("SHAPE_REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            skipped("SHAPE_REDIS_URL is not set");
            None
        }
    }
}

/// Says a Redis test is skipped; under CI (`CI` set, as `.ci/run` runs) a skip is a failure,
/// so the Redis store's checks never pass by not running.
pub(crate) fn skipped(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} must run under CI, but {why}: .ci/run starts a Redis server and sets it"
    );
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

/// Runs each named `async fn(impl Harness)` as a test against each store.
macro_rules! every_store {
    ($($test:ident),* $(,)?) => {
        mod memory_store {
            $(
                #[test]
                fn $test() {
                    super::runtime().block_on(super::$test(super::Memory::new()));
                }
            )*
        }
        mod redis_store {
            $(
                #[test]
                fn $test() {
                    let Some(url) = super::redis_url() else { return };
                    super::runtime().block_on(async {
                        super::$test(super::Redis::connect(&url).await).await
                    });
                }
            )*
        }
    };
}

every_store!(
    a_stored_result_opens_whole_until_removed,
    a_handle_presented_by_another_owner_is_not_found,
    an_expired_handle_says_so_and_names_the_tool_to_call,
    a_result_over_the_cap_is_refused_with_its_size,
    concurrent_use_loses_nothing_and_leaks_nothing,
);

/// A result with every part a shaper fills in.
fn full_result(tool: &str) -> StoredResult {
    let records = (0..20u64)
        .map(|i| {
            let mut r = Map::new();
            r.insert("id".into(), json!(format!("tkt_{i:08x}")));
            r.insert(
                "subject".into(),
                json!(format!("Crash on export «{i}» \u{1F600}")),
            );
            r.insert(
                "assignee".into(),
                if i % 3 == 0 {
                    Value::Null
                } else {
                    json!("Ana")
                },
            );
            r
        })
        .collect();
    let mut stored = StoredResult {
        records,
        ..StoredResult::new(tool, "ticket", "tickets")
    };
    stored.record.fields = vec![
        toolshape::__seams::handle::StoredField {
            name: "id".into(),
            source: "id".into(),
            kind: toolshape::__seams::record::FieldKind::Id { short: false },
            absent: None,
        },
        toolshape::__seams::handle::StoredField {
            name: "subject".into(),
            source: "subject".into(),
            kind: toolshape::__seams::record::FieldKind::Untrusted {
                max_tokens: Some(40),
            },
            absent: None,
        },
    ];
    // The id field's index, as a result read back from JSON derives it from the fields.
    stored.record.id = Some(0);
    stored.record.skipped = vec!["sla_due_at".into()];
    stored.record.prose = Some(vec![
        StoredSegment::Field(0),
        StoredSegment::Text(": ".into()),
        StoredSegment::Field(1),
    ]);
    stored.record.rank = Some(toolshape::__seams::record::RankInfo {
        field: 0,
        order: toolshape::Order::Desc,
        fold: None,
    });
    stored
}

async fn a_stored_result_opens_whole_until_removed<H: Harness>(h: H) {
    let store = h.store();
    let stored = full_result("search_tickets");
    let handle = store
        .put("alice", stored.clone(), &policy(600))
        .await
        .expect("stored");
    assert!(handle.to_string().starts_with("h_"));
    let opened = store.get("alice", &handle).await.expect("opens");
    assert_eq!(*opened, stored);
    // Opening again gives the same result (reading neither consumes nor changes it).
    assert_eq!(*store.get("alice", &handle).await.expect("opens"), stored);

    assert_eq!(store.remove("alice", &handle).await, Ok(true));
    assert_eq!(
        store.get("alice", &handle).await.err(),
        Some(HandleError::NotFound)
    );
    assert_eq!(store.remove("alice", &handle).await, Ok(false));

    // A result with no time to live is expired as soon as it is stored.
    let at_once = store
        .put("alice", result("search", 1), &policy(0))
        .await
        .expect("stored");
    assert_eq!(
        store.get("alice", &at_once).await.err(),
        Some(HandleError::Expired {
            tool: "search".into(),
            ttl_secs: 0
        })
    );
    if let Some(stats) = H::stats(store) {
        assert_eq!(
            (stats.created, stats.present, stats.removed, stats.expired),
            (2, 0, 1, 1)
        );
    }
}

async fn a_handle_presented_by_another_owner_is_not_found<H: Harness>(h: H) {
    let store = h.store();
    let handle = store
        .put("alice", result("search", 1), &policy(1))
        .await
        .expect("stored");
    let never_issued = Handle::random().expect("randomness");

    let foreign = store
        .get("bob", &handle)
        .await
        .expect_err("bob read alice's result");
    let missing = store
        .get("bob", &never_issued)
        .await
        .expect_err("found a handle never issued");
    assert_eq!(foreign, HandleError::NotFound);
    assert_eq!(foreign.to_string(), missing.to_string());
    assert_eq!(store.remove("bob", &handle).await, Ok(false));
    assert_eq!(
        store
            .get("alice", &handle)
            .await
            .ok()
            .as_deref()
            .and_then(n_of),
        Some(1)
    );

    // Once expired, alice is told so; bob still learns nothing.
    h.pass(Duration::from_secs(1) + h.late()).await;
    assert!(matches!(
        store.get("alice", &handle).await,
        Err(HandleError::Expired { .. })
    ));
    assert_eq!(
        store.get("bob", &handle).await.err(),
        Some(HandleError::NotFound)
    );

    assert_eq!(store.remove("alice", &never_issued).await, Ok(false));
}

async fn an_expired_handle_says_so_and_names_the_tool_to_call<H: Harness>(h: H) {
    let store = h.store();
    let ttl = Duration::from_secs(1);
    let handle = store
        .put("u", result("search_tickets", 1), &policy(1))
        .await
        .expect("stored");
    h.pass(ttl - h.early()).await;
    assert!(store.get("u", &handle).await.is_ok());
    h.pass(h.early() + h.late()).await;
    let err = store
        .get("u", &handle)
        .await
        .expect_err("read after its time to live");
    assert_eq!(
        err,
        HandleError::Expired {
            tool: "search_tickets".into(),
            ttl_secs: 1
        }
    );
    assert!(
        err.to_string()
            .contains("call search_tickets again to get a fresh handle"),
        "{err}"
    );
    if let Some(stats) = H::stats(store) {
        assert_eq!(
            (stats.created, stats.present, stats.expired, stats.bytes),
            (1, 0, 1, 0)
        );
    }
}

async fn a_result_over_the_cap_is_refused_with_its_size<H: Harness>(h: H) {
    let store = h.store();
    let big = result("t", 12_345);
    let bytes = big.json_len();
    assert_eq!(bytes, serde_json::to_vec(&big).expect("serialises").len());
    let small = HandlePolicy {
        max_bytes_per_payload: bytes - 1,
        ..HandlePolicy::default()
    };
    let err = store
        .put("u", big.clone(), &small)
        .await
        .expect_err("over the per-result cap");
    assert_eq!(
        err,
        HandleError::TooLarge {
            bytes,
            max_bytes: bytes - 1
        }
    );
    assert!(
        err.to_string().contains("page it with a cursor instead"),
        "{err}"
    );
    let exact = HandlePolicy {
        max_bytes_per_payload: bytes,
        ..HandlePolicy::default()
    };
    let handle = store
        .put("u", big.clone(), &exact)
        .await
        .expect("at the cap");
    assert_eq!(*store.get("u", &handle).await.expect("opens"), big);

    // The store's own cap bounds one result too.
    let tiny = h.capped(bytes - 1).await;
    let err = tiny
        .put("u", big.clone(), &HandlePolicy::default())
        .await
        .expect_err("over the store cap");
    assert_eq!(
        err,
        HandleError::TooLarge {
            bytes,
            max_bytes: bytes - 1
        }
    );
    if let Some(stats) = H::stats(&tiny) {
        assert_eq!(
            stats,
            StoreStats {
                rejected: 1,
                ..StoreStats::default()
            }
        );
    }

    // A large result is refused by its size, not by a failure to send it.
    let mut huge = StoredResult::new("export", "row", "rows");
    let row = json!({"text": "x".repeat(1_000)});
    let Value::Object(row) = row else {
        unreachable!("an object literal")
    };
    huge.records = vec![row; 20_000];
    let err = store
        .put("u", huge, &HandlePolicy::default())
        .await
        .expect_err("20 MB is over the default 8 MiB cap");
    assert!(
        matches!(err, HandleError::TooLarge { bytes, max_bytes } if bytes > 20_000_000 && max_bytes == 8 << 20),
        "{err:?}"
    );
}

async fn concurrent_use_loses_nothing_and_leaks_nothing<H: Harness>(h: H) {
    const TASKS: u64 = 8;
    const OPS: u64 = 100;
    // Even tasks' results expire after SHORT seconds, odd tasks' outlive the test.
    const SHORT: u64 = 2;
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let store = Arc::clone(h.store());
            tokio::spawn(async move {
                let owner = format!("owner-{t}");
                let ttl = if t % 2 == 0 { SHORT } else { 600 };
                let mut kept = Vec::new();
                let mut removed = 0u64;
                for i in 0..OPS {
                    let n = 10_000_000 + t * OPS + i;
                    let handle = store
                        .put(&owner, result("t", n), &policy(ttl))
                        .await
                        .expect("stored");
                    let opened = store.get(&owner, &handle).await.expect("opens");
                    assert_eq!(n_of(&opened), Some(n), "another result under this handle");
                    assert_eq!(
                        store.get("intruder", &handle).await.err(),
                        Some(HandleError::NotFound)
                    );
                    assert_eq!(store.remove("intruder", &handle).await, Ok(false));
                    if i % 10 == 0 {
                        assert_eq!(store.remove(&owner, &handle).await, Ok(true));
                        assert_eq!(
                            store.get(&owner, &handle).await.err(),
                            Some(HandleError::NotFound)
                        );
                        removed += 1;
                    } else {
                        kept.push((handle, n));
                    }
                    tokio::task::yield_now().await;
                }
                (owner, ttl, kept, removed)
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task finished"));
    }

    h.pass(Duration::from_secs(SHORT) + h.late()).await;
    let store = h.store();
    let mut handles = HashSet::new();
    let (mut present, mut expired, mut removed) = (0u64, 0u64, 0u64);
    for (owner, ttl, kept, r) in &outcomes {
        removed += r;
        for (handle, n) in kept {
            assert!(handles.insert(*handle), "a handle was issued twice");
            match store.get(owner, handle).await {
                Ok(r) => {
                    assert_eq!(*ttl, 600);
                    assert_eq!(n_of(&r), Some(*n));
                    present += 1;
                }
                Err(HandleError::Expired { tool, ttl_secs }) => {
                    assert_eq!((tool.as_str(), ttl_secs, *ttl), ("t", SHORT, SHORT));
                    expired += 1;
                }
                Err(other) => panic!("lost a result: {other}"),
            }
        }
    }
    assert_eq!(present + expired + removed, TASKS * OPS);
    assert_eq!((present, expired), (4 * 90, 4 * 90));
    if let Some(stats) = H::stats(store) {
        assert_eq!(
            (
                stats.created,
                stats.present,
                stats.expired,
                stats.removed,
                stats.evicted
            ),
            (TASKS * OPS, present, expired, removed, 0)
        );
    }
}

// ---------------------------------------------------------------------------------------
// 2. The memory store alone: eviction, counters, bounded tombstones.
// ---------------------------------------------------------------------------------------

#[test]
fn the_byte_cap_evicts_the_least_recently_used() {
    let size = result("t", 1).json_len();
    let store = MemoryStore::new(3 * size + size / 2);
    block_on(async {
        let p = policy(600);
        let a = store.put("u", result("t", 1), &p).await.expect("a");
        let b = store.put("u", result("t", 2), &p).await.expect("b");
        let c = store.put("u", result("t", 3), &p).await.expect("c");
        store
            .get("u", &a)
            .await
            .expect("a is read, so b is now the least recently used");
        let d = store.put("u", result("t", 4), &p).await.expect("d");

        assert_eq!(
            store.get("u", &b).await.err(),
            Some(HandleError::Evicted { tool: "t".into() })
        );
        for (handle, n) in [(a, 1), (c, 3), (d, 4)] {
            assert_eq!(
                store.get("u", &handle).await.ok().as_deref().and_then(n_of),
                Some(n)
            );
        }
        // Now d, a and c were read in that order… then c and a again: d is the oldest use.
        store.get("u", &c).await.expect("c");
        store.get("u", &a).await.expect("a");
        let e = store.put("u", result("t", 5), &p).await.expect("e");
        assert!(matches!(
            store.get("u", &d).await,
            Err(HandleError::Evicted { .. })
        ));
        assert!(store.get("u", &e).await.is_ok());
    });
    let stats = store.stats();
    assert_eq!((stats.created, stats.present, stats.evicted), (5, 3, 2));
    assert_eq!(stats.bytes, 3 * size);
}

#[test]
fn eight_threads_lose_nothing_the_policy_did_not_drop() {
    const THREADS: u64 = 8;
    const OPS: u64 = 1_000;
    let clock = ManualClock::new(0);
    // Room for about a quarter of everything created, so eviction happens under contention.
    let size = result("t", 10_000_000).json_len();
    let store = Arc::new(MemoryStore::new(size * 2_000).with_clock(clock.clone()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .build()
        .expect("runtime");

    let tasks: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, clock) = (Arc::clone(&store), clock.clone());
            runtime.spawn(async move {
                let owner = format!("owner-{t}");
                // Even threads' results expire quickly; odd threads' outlive the test, so
                // they alone overflow the byte cap.
                let p = policy(if t % 2 == 0 { 10 } else { 1_000_000 });
                let mut mine = Vec::new();
                let mut removed = 0u64;
                for i in 0..OPS {
                    let n = 10_000_000 + t * OPS + i;
                    let handle = store.put(&owner, result("t", n), &p).await.expect("stored");
                    match store.get(&owner, &handle).await {
                        Ok(r) => assert_eq!(n_of(&r), Some(n), "another result under this handle"),
                        Err(e) => assert!(matches!(
                            e,
                            HandleError::Evicted { .. } | HandleError::Expired { .. }
                        )),
                    }
                    assert_eq!(
                        store.get("intruder", &handle).await.err(),
                        Some(HandleError::NotFound)
                    );
                    if i % 10 == 0 && store.remove(&owner, &handle).await == Ok(true) {
                        removed += 1;
                    } else {
                        mine.push((handle, n));
                    }
                    if t == 0 && i % 100 == 99 {
                        clock.advance(Duration::from_secs(5));
                    }
                    tokio::task::yield_now().await;
                }
                (owner, mine, removed)
            })
        })
        .collect();
    let outcomes: Vec<_> = runtime.block_on(async {
        let mut out = Vec::new();
        for task in tasks {
            out.push(task.await.expect("task finished"));
        }
        out
    });

    // One more short-lived result, then time passes: at least this one has expired.
    let mut outcomes = outcomes;
    let last =
        block_on(store.put("owner-x", result("t", 99_999_999), &policy(10))).expect("stored");
    outcomes.push(("owner-x".into(), vec![(last, 99_999_999)], 0));
    clock.advance(Duration::from_secs(10));

    let (mut present, mut evicted, mut expired, mut removed) = (0u64, 0u64, 0u64, 0u64);
    let mut handles = HashSet::new();
    block_on(async {
        for (owner, mine, r) in &outcomes {
            removed += r;
            for (handle, n) in mine {
                assert!(handles.insert(*handle), "a handle was issued twice");
                match store.get(owner, handle).await {
                    Ok(r) => {
                        assert_eq!(n_of(&r), Some(*n));
                        present += 1;
                    }
                    Err(HandleError::Evicted { .. }) => evicted += 1,
                    Err(HandleError::Expired { .. }) => expired += 1,
                    Err(other) => panic!("lost a result: {other}"),
                }
            }
        }
    });
    let stats = store.stats();
    assert_eq!(stats.created, THREADS * OPS + 1);
    assert_eq!(
        (stats.present, stats.evicted, stats.expired, stats.removed),
        (present, evicted, expired, removed)
    );
    assert_eq!(
        stats.created,
        stats.present + stats.evicted + stats.expired + stats.removed
    );
    assert_eq!(stats.bytes, size * stats.present as usize);
    assert!(stats.bytes <= size * 2_000);
    assert!(evicted > 0 && expired > 0 && removed > 0, "{stats:?}");
}

#[test]
fn tombstones_are_bounded() {
    let clock = ManualClock::new(0);
    let store = MemoryStore::new(1 << 20)
        .with_clock(clock.clone())
        .with_max_tombstones(5);
    block_on(async {
        let mut handles = Vec::new();
        for n in 0..20 {
            handles.push(
                store
                    .put("u", result("t", n), &policy(10))
                    .await
                    .expect("stored"),
            );
        }
        clock.advance(Duration::from_secs(10));
        let stats = store.stats();
        assert_eq!((stats.expired, stats.tombstones, stats.present), (20, 5, 0));
        // The most recent five are remembered; older ones are simply not found.
        assert!(matches!(
            store.get("u", &handles[19]).await,
            Err(HandleError::Expired { .. })
        ));
        assert!(matches!(
            store.get("u", &handles[15]).await,
            Err(HandleError::Expired { .. })
        ));
        assert_eq!(
            store.get("u", &handles[14]).await.err(),
            Some(HandleError::NotFound)
        );
    });
    let no_tombstones = MemoryStore::new(1 << 20)
        .with_clock(clock.clone())
        .with_max_tombstones(0);
    block_on(async {
        let handle = no_tombstones
            .put("u", result("t", 1), &policy(1))
            .await
            .expect("stored");
        clock.advance(Duration::from_secs(1));
        assert_eq!(
            no_tombstones.get("u", &handle).await.err(),
            Some(HandleError::NotFound)
        );
    });
    assert_eq!(no_tombstones.stats().tombstones, 0);
}

// ---------------------------------------------------------------------------------------
// 3. The Redis store alone: replicas, restarts, the tombstone grace period, what is stored.
// ---------------------------------------------------------------------------------------

/// A raw connection, to look at and tamper with what the store wrote.
async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .expect("a valid URL")
        .get_multiplexed_async_connection()
        .await
        .expect("connects")
}

#[test]
fn two_replicas_on_separate_connections_share_a_handle() {
    let Some(url) = redis_url() else { return };
    runtime().block_on(async {
        let prefix = format!("shape-test-{}", Handle::random().expect("randomness"));
        let replica = |prefix: String, owner_key: &'static str| {
            let url = url.clone();
            async move {
                RedisStore::builder(url)
                    .key_prefix(prefix)
                    .owner_key(owner_key)
                    .connect()
                    .await
                    .expect("connects")
            }
        };
        let a = replica(prefix.clone(), "fleet secret").await;
        let b = replica(prefix.clone(), "fleet secret").await;

        let stored = full_result("search_tickets");
        let handle = a
            .put("alice", stored.clone(), &policy(600))
            .await
            .expect("stored on replica a");
        assert_eq!(*b.get("alice", &handle).await.expect("opens on b"), stored);
        assert_eq!(
            b.get("bob", &handle).await.err(),
            Some(HandleError::NotFound)
        );
        assert_eq!(b.remove("bob", &handle).await, Ok(false));

        // A replica with another owner key or another prefix sees nothing.
        let other_key = replica(prefix.clone(), "another secret").await;
        assert_eq!(
            other_key.get("alice", &handle).await.err(),
            Some(HandleError::NotFound)
        );
        let other_prefix = replica(format!("{prefix}-x"), "fleet secret").await;
        assert_eq!(
            other_prefix.get("alice", &handle).await.err(),
            Some(HandleError::NotFound)
        );

        // Removed on b, gone on a.
        assert_eq!(b.remove("alice", &handle).await, Ok(true));
        assert_eq!(
            a.get("alice", &handle).await.err(),
            Some(HandleError::NotFound)
        );
    });
}

#[test]
fn redis_holds_no_owner_and_no_index_by_owner() {
    let Some(url) = redis_url() else { return };
    runtime().block_on(async {
        let h = Redis::connect(&url).await;
        let owner = "alice@example.com";
        let mut handles = Vec::new();
        for n in 0..3 {
            handles.push(
                h.store
                    .put(owner, result("search", n), &policy(600))
                    .await
                    .expect("stored"),
            );
        }
        // Listing keys is the test's doing: the store never lists.
        let mut conn = raw(&url).await;
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", h.prefix))
            .query_async(&mut conn)
            .await
            .expect("keys");
        let mut expected: Vec<String> = handles
            .iter()
            .flat_map(|handle| ["r", "t"].map(|kind| format!("{}:{{{handle}}}:{kind}", h.prefix)))
            .collect();
        let mut found = keys.clone();
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "two keys per handle and nothing else");

        let mut owner_tags = HashSet::new();
        for key in &keys {
            let value: Vec<u8> = redis::cmd("GET")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("get");
            assert!(
                !String::from_utf8_lossy(&value).contains("alice"),
                "the owner is stored in clear under {key}"
            );
            let ttl: i64 = redis::cmd("PTTL")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("pttl");
            if key.ends_with(":r") {
                assert!((590_000..=600_000).contains(&ttl), "{key}: {ttl}");
                owner_tags.insert(value.get(4..36).map(<[u8]>::to_vec));
            } else {
                assert!((4_190_000..=4_200_000).contains(&ttl), "{key}: {ttl}");
            }
        }
        assert_eq!(
            owner_tags.len(),
            3,
            "one owner's tags link their handles together"
        );
    });
}

#[test]
fn an_expired_handle_is_not_found_after_the_grace_period() {
    let Some(url) = redis_url() else { return };
    runtime().block_on(async {
        let store = RedisStore::builder(&url)
            .key_prefix(format!(
                "shape-test-{}",
                Handle::random().expect("randomness")
            ))
            .tombstone_grace(Duration::from_millis(1_500))
            .connect()
            .await
            .expect("connects");
        let handle = store
            .put("u", result("search", 1), &policy(1))
            .await
            .expect("stored");
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        assert!(matches!(
            store.get("u", &handle).await,
            Err(HandleError::Expired { .. })
        ));
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(
            store.get("u", &handle).await.err(),
            Some(HandleError::NotFound)
        );

        // Without a grace period, an expired handle is at once "not found".
        let no_grace = RedisStore::builder(&url)
            .key_prefix(format!(
                "shape-test-{}",
                Handle::random().expect("randomness")
            ))
            .tombstone_grace(Duration::ZERO)
            .connect()
            .await
            .expect("connects");
        let handle = no_grace
            .put("u", result("search", 1), &policy(1))
            .await
            .expect("stored");
        assert!(no_grace.get("u", &handle).await.is_ok());
        tokio::time::sleep(Duration::from_millis(1_050)).await;
        assert_eq!(
            no_grace.get("u", &handle).await.err(),
            Some(HandleError::NotFound)
        );
    });
}

#[test]
fn a_damaged_or_evicted_value_is_a_clear_error_not_a_panic() {
    let Some(url) = redis_url() else { return };
    runtime().block_on(async {
        let h = Redis::connect(&url).await;
        let mut conn = raw(&url).await;
        let handle = h
            .store
            .put("u", result("search", 1), &policy(600))
            .await
            .expect("stored");
        let key = format!("{}:{{{handle}}}:r", h.prefix);
        // The header (and so the owner tag) intact, the JSON cut short.
        let _: () = redis::cmd("SETRANGE")
            .arg(&key)
            .arg(44 + 5)
            .arg("\u{0}")
            .query_async(&mut conn)
            .await
            .expect("setrange");
        let err = h.store.get("u", &handle).await.expect_err("damaged");
        assert!(
            matches!(&err, HandleError::Unavailable { reason } if reason.contains("cannot be read")),
            "{err:?}"
        );
        // A result the server dropped before its time (`maxmemory`) says it was evicted.
        let _: () = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .expect("del");
        assert_eq!(
            h.store.get("u", &handle).await.err(),
            Some(HandleError::Evicted {
                tool: "search".into()
            })
        );
        assert_eq!(h.store.get("v", &handle).await.err(), Some(HandleError::NotFound));

        // Someone else's bytes under a handle's key: not this owner's, so not found.
        for junk in [&b""[..], &b"x"[..], &[0u8; 44][..], &[b's'; 200][..]] {
            let _: () = redis::cmd("SET")
                .arg(&key)
                .arg(junk)
                .query_async(&mut conn)
                .await
                .expect("set");
            assert_eq!(h.store.get("u", &handle).await.err(), Some(HandleError::NotFound));
            assert_eq!(h.store.remove("u", &handle).await, Ok(false));
        }
    });
}

#[test]
fn a_bad_url_or_an_unreachable_server_is_a_clear_error() {
    runtime().block_on(async {
        let err = RedisStore::connect("postgres://127.0.0.1/")
            .await
            .expect_err("not a Redis URL");
        assert!(
            matches!(&err, HandleError::Unavailable { reason } if reason.contains("redis://host:port/db")),
            "{err:?}"
        );

        // Nothing listens on a port just released.
        let port = free_port();
        let err = tokio::time::timeout(
            Duration::from_secs(10),
            RedisStore::builder(format!("redis://127.0.0.1:{port}/"))
                .timeout(Duration::from_millis(500))
                .connect(),
        )
        .await
        .expect("the store's own timeout bounds connecting")
        .expect_err("nothing is listening");
        let text = err.to_string();
        assert!(
            text.contains(&format!("127.0.0.1:{port}"))
                && text.contains("check that it is running"),
            "{text}"
        );
    });
}

/// A port nothing listens on as of now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a loopback port")
        .port()
}

/// A `redis-server` of the test's own, on loopback, without persistence; killed on drop.
pub(crate) struct Server {
    bin: String,
    port: u16,
    child: Option<Child>,
}

impl Server {
    pub(crate) fn start(bin: &str) -> Server {
        for _ in 0..5 {
            let mut server = Server {
                bin: bin.to_owned(),
                port: free_port(),
                child: None,
            };
            if server.restart() {
                return server;
            }
        }
        panic!("{bin} did not start on a free loopback port in five tries");
    }

    /// Starts the server on its port; `false` if it exits or is not answering within 10 s.
    pub(crate) fn restart(&mut self) -> bool {
        let child = Command::new(&self.bin)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--dir", &std::env::temp_dir().to_string_lossy()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("could not run {}: {e}", self.bin));
        let child = self.child.insert(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                self.child = None;
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        false
    }

    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn a_redis_restart_gives_clear_errors_and_the_same_store_recovers() {
    if redis_url().is_none() {
        return;
    }
    let Some(bin) = std::env::var("SHAPE_REDIS_SERVER_BIN")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        skipped("SHAPE_REDIS_SERVER_BIN is not set (a redis-server this test may kill)");
        return;
    };
    let mut server = Server::start(&bin);
    runtime().block_on(async {
        let store = RedisStore::builder(server.url())
            .timeout(Duration::from_millis(500))
            .connect()
            .await
            .expect("connects");
        let before = store
            .put("u", result("search", 1), &policy(600))
            .await
            .expect("stored");
        assert!(store.get("u", &before).await.is_ok());

        server.stop();
        let bounded = Duration::from_secs(5);
        let where_ = format!("Redis at 127.0.0.1:{}", server.port);
        for _ in 0..3 {
            let get = tokio::time::timeout(bounded, store.get("u", &before)).await;
            let put =
                tokio::time::timeout(bounded, store.put("u", result("search", 2), &policy(600)))
                    .await;
            let remove = tokio::time::timeout(bounded, store.remove("u", &before)).await;
            for outcome in [
                get.map(|r| r.map(drop)),
                put.map(|r| r.map(drop)),
                remove.map(|r| r.map(drop)),
            ] {
                let err = outcome
                    .expect("a down server answers within the store's timeout")
                    .expect_err("the server is down");
                let text = err.to_string();
                assert!(
                    matches!(err, HandleError::Unavailable { .. })
                        && text.contains(&where_)
                        && text.contains("check that it is running")
                        && text.contains("try again shortly"),
                    "{text}"
                );
            }
        }

        assert!(server.restart(), "redis-server restarts on its port");
        // The store reconnects by itself; the first call may still meet the old connection.
        let deadline = Instant::now() + Duration::from_secs(10);
        let after = loop {
            match store.put("u", result("search", 3), &policy(600)).await {
                Ok(handle) => break handle,
                Err(HandleError::Unavailable { .. }) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(other) => panic!("the store did not recover: {other}"),
            }
        };
        assert_eq!(
            store.get("u", &after).await.ok().as_deref().and_then(n_of),
            Some(3)
        );
        // Without persistence the restart lost what was stored before it.
        assert_eq!(
            store.get("u", &before).await.err(),
            Some(HandleError::NotFound)
        );
    });
}

// ---------------------------------------------------------------------------------------
// 4. Handles, stored results and the policy, with no store.
// ---------------------------------------------------------------------------------------

#[test]
fn handles_are_random_and_parse_strictly() {
    let handles: HashSet<Handle> = (0..1_000)
        .map(|_| Handle::random().expect("randomness"))
        .collect();
    assert_eq!(handles.len(), 1_000);
    for handle in handles.iter().take(50) {
        let text = handle.to_string();
        assert!(text.starts_with("h_") && text.len() == 32, "{text}");
        assert!(text[2..].bytes().all(|b| b.is_ascii_digit()), "{text}");
        assert_eq!(text.parse::<Handle>(), Ok(*handle));
        assert_eq!(format!("  {text}\n").parse::<Handle>(), Ok(*handle));
        // Ten tokens of digits, whatever the handle.
        assert_eq!(crate::walk::tokens(&text[2..]), 10, "{text}");
    }
    // The first format (base64url) still parses.
    assert_eq!(
        "h_q6urq6urq6urq6ur".parse::<Handle>(),
        Ok(Handle::from_bytes([0xab; 12]))
    );
    let valid = Handle::from_bytes([0xab; 12]).to_string();
    assert_eq!(valid, "h_483209748254340270737319562155");
    for bad in [
        "",
        "h_",
        "x_q6urq6urq6urq6ur",
        &valid[..31],
        &format!("{valid}0"),
        &format!("{valid}A"),
        "h_q6urq6urq6urq6u+",
        "h_q6urq6urq6urq6urqw", // a 128-bit handle of an earlier version: not found
        "h_éééééééé",
        // 30 digits whose chunks overflow their bytes.
        "h_999999999999999999999999999999",
        "h_720575940379279360000000000000",
    ] {
        assert_eq!(bad.parse::<Handle>(), Err(HandleError::NotFound), "{bad:?}");
    }
}

#[test]
fn a_stored_result_survives_json_and_keeps_its_size() {
    let mut stored = result("search", 7);
    stored.record.rank = Some(toolshape::__seams::record::RankInfo {
        field: 0,
        order: toolshape::Order::Desc,
        fold: None,
    });
    stored.record.prose = Some(vec![
        toolshape::__seams::handle::StoredSegment::Field(0),
        toolshape::__seams::handle::StoredSegment::Text(" open".into()),
    ]);
    let json = serde_json::to_string(&stored).expect("serialises");
    assert_eq!(stored.json_len(), json.len());
    let back: StoredResult = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, stored);
}

#[test]
fn the_policy_stores_only_results_far_over_budget() {
    let policy = HandlePolicy::default();
    assert!(!policy.should_store(8_000, 2_000));
    assert!(policy.should_store(8_001, 2_000));
    let eager = HandlePolicy {
        store_when_over_budget_factor: 0.5,
        ..policy
    };
    assert!(
        !eager.should_store(1_999, 2_000),
        "a result that fits is never stored"
    );
    let broken = HandlePolicy {
        store_when_over_budget_factor: f64::NAN,
        ..policy
    };
    assert!(!broken.should_store(usize::MAX, 1));
}

/// A replica keeps the results it opened decoded, within a bound, and a cached open is
/// still checked in Redis: another owner is not found, an expired handle says expired, a
/// handle removed by another replica is gone.
#[test]
fn a_cached_open_still_checks_owner_expiry_and_removal_in_redis() {
    let Some(url) = redis_url() else { return };
    runtime().block_on(async {
        let h = Redis::connect(&url).await;
        let stored = full_result("search_tickets");
        let handle = h
            .store
            .put("alice", stored.clone(), &policy(600))
            .await
            .expect("stored");
        let first = h.store.get("alice", &handle).await.expect("opens");
        let again = h.store.get("alice", &handle).await.expect("opens again");
        assert!(
            Arc::ptr_eq(&first, &again),
            "the second open is the decoded one"
        );
        assert_eq!(*again, stored);
        assert_eq!(
            h.store.get("bob", &handle).await.err(),
            Some(HandleError::NotFound)
        );

        // Removed by another replica: gone here too, though this one had it decoded.
        let other = RedisStore::builder(&url)
            .key_prefix(&h.prefix)
            .connect()
            .await
            .expect("connects");
        assert_eq!(other.remove("alice", &handle).await, Ok(true));
        assert_eq!(
            h.store.get("alice", &handle).await.err(),
            Some(HandleError::NotFound)
        );

        // Expired while decoded here: says expired.
        let short = h
            .store
            .put("alice", stored.clone(), &policy(1))
            .await
            .expect("stored");
        h.store.get("alice", &short).await.expect("opens");
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        assert_eq!(
            h.store.get("alice", &short).await.err(),
            Some(HandleError::Expired {
                tool: "search_tickets".into(),
                ttl_secs: 1
            })
        );

        // The bound (on the memory a decoded result takes): room for one result, so opening
        // a second drops the first.
        let json = serde_json::to_vec(&stored).expect("serialises");
        let bytes = serde_json::from_slice::<StoredResult>(&json)
            .expect("reads back")
            .resident_bytes();
        let small = RedisStore::builder(&url)
            .key_prefix(&h.prefix)
            .decoded_cache_bytes(bytes + bytes / 2)
            .connect()
            .await
            .expect("connects");
        let a = small
            .put("alice", stored.clone(), &policy(600))
            .await
            .expect("stored");
        let b = small
            .put("alice", stored.clone(), &policy(600))
            .await
            .expect("stored");
        let a1 = small.get("alice", &a).await.expect("opens");
        assert!(Arc::ptr_eq(
            &a1,
            &small.get("alice", &a).await.expect("opens")
        ));
        small.get("alice", &b).await.expect("opens");
        let a2 = small.get("alice", &a).await.expect("opens");
        assert!(!Arc::ptr_eq(&a1, &a2), "the first was dropped to make room");
        assert_eq!(*a2, stored);

        // No cache: every open decodes.
        let none = RedisStore::builder(&url)
            .key_prefix(&h.prefix)
            .decoded_cache_bytes(0)
            .connect()
            .await
            .expect("connects");
        let n1 = none.get("alice", &a).await.expect("opens");
        assert!(!Arc::ptr_eq(
            &n1,
            &none.get("alice", &a).await.expect("opens")
        ));
    });
}

/// A store filled exactly to its byte cap keeps everything: eviction starts only past the cap.
#[test]
fn a_store_filled_exactly_to_its_cap_evicts_nothing() {
    let size = result("t", 1).json_len();
    assert_eq!(result("t", 2).json_len(), size);
    let store = MemoryStore::new(2 * size);
    block_on(async {
        let p = policy(600);
        let a = store.put("u", result("t", 1), &p).await.expect("a");
        let b = store.put("u", result("t", 2), &p).await.expect("b");
        for (handle, n) in [(a, 1), (b, 2)] {
            assert_eq!(
                store.get("u", &handle).await.ok().as_deref().and_then(n_of),
                Some(n)
            );
        }
        // One more is past the cap: the least recently used goes.
        let c = store.put("u", result("t", 3), &p).await.expect("c");
        assert_eq!(
            store.get("u", &a).await.err(),
            Some(HandleError::Evicted { tool: "t".into() })
        );
        assert!(store.get("u", &c).await.is_ok());
    });
}

/// The policy's accessors and its line: a result that fits its budget is never stored, even
/// with a factor below one; past the factor it is.
#[test]
fn the_handle_policy_stores_only_what_does_not_fit() {
    let p = HandlePolicy {
        ttl_secs: 90,
        store_when_over_budget_factor: 0.5,
        ..HandlePolicy::default()
    };
    assert_eq!(p.ttl(), std::time::Duration::from_secs(90));
    assert!(!p.should_store(1_000, 1_000), "fits its budget");
    assert!(p.should_store(1_001, 1_000));
    let default = HandlePolicy::default();
    assert!(
        !default.should_store(4_000, 1_000),
        "at the factor, not past it"
    );
    assert!(default.should_store(4_001, 1_000));
    assert!(
        !HandlePolicy {
            store_when_over_budget_factor: f64::NAN,
            ..default
        }
        .should_store(1_000_000, 1)
    );
}

/// The memory store's default clock is the system's, in milliseconds.
#[test]
fn the_system_clock_reads_the_time_in_milliseconds() {
    use toolshape::__seams::handle::{Clock, SystemClock};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64;
    let read = SystemClock.now_unix_ms();
    assert!(read.abs_diff(now) < 5_000, "{read} vs {now}");
}
